/* hpack_interop_test.c — our HPACK (proto/hpack.c) against a second implementation: libnghttp2's public HPACK API
 * (nghttp2_hd_deflate_* / nghttp2_hd_inflate_*, already linked for the upstream HTTP/2 client). The RFC's examples
 * (hpack_test.c) Huffman-code only some symbols; here every byte value goes through both Huffman tables in both
 * directions, and long random block sequences check that the two dynamic tables stay in step (indexing, eviction,
 * table size updates). */
#include <stdlib.h>
#include <string.h>
#include <nghttp2/nghttp2.h>
#include "../harness.h"
#include "proto/hpack.h"

#define MAXF 32

typedef struct {
    size_t n;
    char name[MAXF][64], value[MAXF][300];
    size_t nlen[MAXF], vlen[MAXF];
} fields_t;

static int collect(void *ud, const hy_hpack_field_t *f)
{
    fields_t *fs = ud;
    if (fs->n >= MAXF || f->name_len > sizeof(fs->name[0]) || f->value_len > sizeof(fs->value[0]))
        return HY_HPACK_CB_ABORT;
    memcpy(fs->name[fs->n], f->name, f->name_len);
    memcpy(fs->value[fs->n], f->value, f->value_len);
    fs->nlen[fs->n] = f->name_len;
    fs->vlen[fs->n] = f->value_len;
    fs->n++;
    return HY_HPACK_CB_OK;
}

/* nghttp2's inflater over a whole block into fs; 0 or -1 */
static int ng_inflate(nghttp2_hd_inflater *inf, const uint8_t *in, size_t len, fields_t *fs)
{
    fs->n = 0;
    for (;;) {
        nghttp2_nv nv;
        int flags = 0;
        ssize_t r = nghttp2_hd_inflate_hd2(inf, &nv, &flags, in, len, 1);
        if (r < 0)
            return -1;
        in += r;
        len -= (size_t)r;
        if (flags & NGHTTP2_HD_INFLATE_EMIT) {
            if (fs->n >= MAXF)
                return -1;
            memcpy(fs->name[fs->n], nv.name, nv.namelen);
            memcpy(fs->value[fs->n], nv.value, nv.valuelen);
            fs->nlen[fs->n] = nv.namelen;
            fs->vlen[fs->n] = nv.valuelen;
            fs->n++;
        }
        if (flags & NGHTTP2_HD_INFLATE_FINAL) {
            nghttp2_hd_inflate_end_headers(inf);
            return 0;
        }
        if (r == 0 && len == 0)
            return -1;
    }
}

static bool same(const fields_t *a, const fields_t *b)
{
    if (a->n != b->n)
        return false;
    for (size_t i = 0; i < a->n; i++)
        if (a->nlen[i] != b->nlen[i] || a->vlen[i] != b->vlen[i] || memcmp(a->name[i], b->name[i], a->nlen[i]) != 0 ||
            memcmp(a->value[i], b->value[i], a->vlen[i]) != 0)
            return false;
    return true;
}

static size_t ours_encode(hy_hpack_enc_t *e, const fields_t *fs, uint8_t *out)
{
    size_t n = hy_hpack_encode_begin(e, out);
    for (size_t i = 0; i < fs->n; i++)
        n += hy_hpack_encode_field(e, out + n, fs->name[i], fs->nlen[i], fs->value[i], fs->vlen[i], false);
    return n;
}

static size_t ng_deflate(nghttp2_hd_deflater *d, const fields_t *fs, uint8_t *out, size_t cap)
{
    nghttp2_nv nv[MAXF];
    for (size_t i = 0; i < fs->n; i++)
        nv[i] = (nghttp2_nv){(uint8_t *)fs->name[i], (uint8_t *)fs->value[i], fs->nlen[i], fs->vlen[i],
                             NGHTTP2_NV_FLAG_NONE};
    ssize_t r = nghttp2_hd_deflate_hd(d, out, cap, nv, fs->n);
    return r < 0 ? 0 : (size_t)r;
}

/* The codec pair under test: our decoder and encoder, nghttp2's deflater and inflater, all with empty tables. */
typedef struct {
    hy_hpack_dec_t dec;
    hy_hpack_enc_t enc;
    nghttp2_hd_deflater *ngd;
    nghttp2_hd_inflater *ngi;
} pair_t;

static void pair_init(pair_t *p)
{
    hy_hpack_dec_init(&p->dec, 4096);
    hy_hpack_enc_init(&p->enc);
    ok(nghttp2_hd_deflate_new(&p->ngd, 4096) == 0);
    ok(nghttp2_hd_inflate_new(&p->ngi) == 0);
}

static void pair_free(pair_t *p)
{
    nghttp2_hd_deflate_del(p->ngd);
    nghttp2_hd_inflate_del(p->ngi);
    hy_hpack_dec_free(&p->dec);
    hy_hpack_enc_free(&p->enc);
}

/* One block each way: nghttp2's deflater to our decoder (bit 1 of the result when the fields differ or either
 * side fails), our encoder to nghttp2's inflater (bit 2). buf: room for the encoded block. */
static int pair_trip(pair_t *p, const fields_t *in, uint8_t *buf, size_t cap)
{
    int bad = 0;
    fields_t got = {0};
    size_t n = ng_deflate(p->ngd, in, buf, cap);
    if (n == 0 || hy_hpack_decode(&p->dec, buf, n, collect, &got) != 0 || !same(in, &got))
        bad |= 1;
    n = ours_encode(&p->enc, in, buf);
    if (ng_inflate(p->ngi, buf, n, &got) != 0 || !same(in, &got))
        bad |= 2;
    return bad;
}

/* Every byte value inside a value short enough in common letters that both encoders choose Huffman for it. */
static void every_symbol_both_ways(void)
{
    pair_t p;
    pair_init(&p);
    int bad_ng_to_ours = 0, bad_ours_to_ng = 0;
    uint8_t buf[4096];
    for (int b = 0; b < 256; b++) {
        fields_t in = {.n = 1};
        memcpy(in.name[0], "x-sym", 5);
        in.nlen[0] = 5;
        size_t k = 0;
        for (int i = 0; i < 40; i++)
            in.value[0][k++] = "aeiost0123"[i % 10];
        in.value[0][k++] = (char)b;
        for (int i = 0; i < 10; i++)
            in.value[0][k++] = 'e';
        in.vlen[0] = k;
        int bad = pair_trip(&p, &in, buf, sizeof(buf));
        bad_ng_to_ours += bad & 1;
        bad_ours_to_ng += bad >> 1;
    }
    is_int(bad_ng_to_ours, 0);
    is_int(bad_ours_to_ng, 0);
    /* a value of every byte value at once (long codes: neither may choose Huffman, both must still agree) */
    fields_t all = {.n = 1};
    memcpy(all.name[0], "x-all", 5);
    all.nlen[0] = 5;
    for (int b = 0; b < 256; b++)
        all.value[0][b] = (char)b;
    all.vlen[0] = 256;
    int bad = pair_trip(&p, &all, buf, sizeof(buf));
    ok(!(bad & 1)); /* nghttp2 -> ours */
    ok(!(bad & 2)); /* ours -> nghttp2 */
    pair_free(&p);
}

static const char *names[] = {":status", "server", "date", "content-type", "content-length", "etag", "x-a",
                              "x-longer-custom-name", "set-cookie", "cache-control", "vary", "location"};

static void random_fields(fields_t *fs, unsigned *seed)
{
    fs->n = 1 + (size_t)(rand_r(seed) % 12);
    for (size_t i = 0; i < fs->n; i++) {
        const char *nm = names[rand_r(seed) % (sizeof(names) / sizeof(names[0]))];
        fs->nlen[i] = strlen(nm);
        memcpy(fs->name[i], nm, fs->nlen[i]);
        /* a few values repeat (indexed), some are long (evictions), some hold any byte */
        int kind = rand_r(seed) % 4;
        size_t len = kind == 0 ? (size_t)(rand_r(seed) % 4) : kind == 1 ? 200 + (size_t)(rand_r(seed) % 90)
                                                                        : (size_t)(rand_r(seed) % 40);
        unsigned pick = (unsigned)rand_r(seed) % 3;
        for (size_t j = 0; j < len; j++)
            fs->value[i][j] = kind == 3 ? (char)(rand_r(seed) & 0xff) : (char)('a' + (pick * 7 + j) % 26);
        fs->vlen[i] = len;
    }
}

/* Sequences of blocks: nghttp2's deflater to our decoder, our encoder to nghttp2's inflater, with the table sizes
 * changing on the way (the peer's SETTINGS_HEADER_TABLE_SIZE). */
static void sequences_stay_in_step(void)
{
    unsigned seed = 7;
    pair_t p;
    pair_init(&p);
    int bad1 = 0, bad2 = 0;
    static uint8_t buf[65536];
    const size_t sizes[] = {4096, 256, 0, 1000, 4096, 64, 4096};
    for (int round = 0; round < 2000; round++) {
        if (round % 300 == 299) {
            size_t s = sizes[(round / 300) % (sizeof(sizes) / sizeof(sizes[0]))];
            nghttp2_hd_deflate_change_table_size(p.ngd, s);
            hy_hpack_enc_peer_max(&p.enc, s);
        }
        fields_t in;
        random_fields(&in, &seed);
        int bad = pair_trip(&p, &in, buf, sizeof(buf));
        bad1 += bad & 1;
        bad2 += bad >> 1;
    }
    is_int(bad1, 0);
    is_int(bad2, 0);
    pair_free(&p);
}

int main(void)
{
    subtest("every Huffman symbol, nghttp2 <-> ours", every_symbol_both_ways);
    subtest("2,000 blocks with table size changes, both directions", sequences_stay_in_step);
    return done_testing();
}
