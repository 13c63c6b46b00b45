/* hpack_fuzz.c — libFuzzer driver: HPACK (proto/hpack). The input is one byte of options, then header blocks, each
 * prefixed by one length byte; they are decoded in turn on one decoder (stopping at the first error: the table is
 * out of step after one). The fields of each good block are encoded again by an encoder (whose peer table size the
 * options change now and then) and decoded by a second decoder: the same names, values, never-indexed flags and
 * static indices must come back, and the encoder's and second decoder's tables must agree.
 * Options: bits 0-1 the first decoder's table size (0, 64, 256, 4096); bits 2-4 when set, the callback answers
 * QUIET at that field number; bits 5-7 peer table sizes to cycle through between blocks. */
#include <stdbool.h>
#include <string.h>

#include "fuzz.h"
#include "proto/hpack.h"

typedef struct {
    size_t noff, nlen, voff, vlen;
    unsigned sidx;
    bool never;
} rec_t;

typedef struct {
    char *bytes;
    size_t len, cap;
    rec_t *f;
    size_t n, fcap;
    size_t quiet_at; /* 0: never */
    size_t cmp;      /* second pass: the next recorded field to compare with */
    bool mismatch;
} fields_t;

static void put(fields_t *fs, const char *p, size_t n)
{
    if (fs->len + n > fs->cap) {
        size_t c = fs->cap ? fs->cap : 256;
        while (c < fs->len + n)
            c *= 2;
        fs->bytes = realloc(fs->bytes, c);
        CHECK(fs->bytes);
        fs->cap = c;
    }
    if (n)
        memcpy(fs->bytes + fs->len, p, n);
    fs->len += n;
}

static int record(void *ud, const hy_hpack_field_t *f)
{
    fields_t *fs = ud;
    CHECK(f->static_idx <= 61);
    if (fs->n == fs->fcap) {
        fs->fcap = fs->fcap ? fs->fcap * 2 : 16;
        fs->f = realloc(fs->f, fs->fcap * sizeof(rec_t));
        CHECK(fs->f);
    }
    rec_t *r = &fs->f[fs->n++];
    r->noff = fs->len;
    r->nlen = f->name_len;
    put(fs, f->name, f->name_len);
    r->voff = fs->len;
    r->vlen = f->value_len;
    put(fs, f->value, f->value_len);
    r->sidx = f->static_idx;
    r->never = f->never_indexed;
    return fs->quiet_at && fs->n == fs->quiet_at ? HY_HPACK_CB_QUIET : HY_HPACK_CB_OK;
}

static int compare(void *ud, const hy_hpack_field_t *f)
{
    fields_t *fs = ud;
    if (fs->cmp >= fs->n) {
        fs->mismatch = true;
        return HY_HPACK_CB_ABORT;
    }
    const rec_t *r = &fs->f[fs->cmp++];
    if (f->name_len != r->nlen || f->value_len != r->vlen || memcmp(f->name, fs->bytes + r->noff, r->nlen) != 0 ||
        memcmp(f->value, fs->bytes + r->voff, r->vlen) != 0 || f->never_indexed != r->never ||
        f->static_idx != r->sidx)
        fs->mismatch = true;
    return HY_HPACK_CB_OK;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size < 1)
        return 0;
    static const size_t dec_sizes[] = {0, 64, 256, 4096};
    static const size_t peer_sizes[] = {4096, 0, 100, 256, 65536, 33, 4096, 1000};
    uint8_t opt = data[0];
    data++;
    size--;
    hy_hpack_dec_t d1, d2;
    hy_hpack_enc_t e;
    hy_hpack_dec_init(&d1, dec_sizes[opt & 3]);
    hy_hpack_dec_init(&d2, HY_HPACK_DEFAULT_TABLE);
    hy_hpack_enc_init(&e);
    fields_t fs;
    memset(&fs, 0, sizeof(fs));
    fs.quiet_at = (opt >> 2) & 7;
    unsigned peer = opt >> 5, blockno = 0;
    while (size > 0) {
        size_t bl = data[0];
        data++;
        size--;
        if (bl > size)
            bl = size;
        uint8_t *blk = malloc(bl ? bl : 1); /* exact size: ASan sees reads past the end */
        memcpy(blk, data, bl);
        data += bl;
        size -= bl;
        fs.len = fs.n = fs.cmp = 0;
        fs.mismatch = false;
        int r = hy_hpack_decode(&d1, blk, bl, record, &fs);
        free(blk);
        CHECK(r == 0 || r == HY_HPACK_ERR || r == HY_HPACK_ERR_SIZE || r == HY_HPACK_ERR_TRUNCATED);
        CHECK(d1.t.size <= d1.t.max && d1.t.max <= d1.settings_max);
        if (r != 0)
            break;
        if (fs.quiet_at)
            CHECK(fs.n <= fs.quiet_at);
        /* re-encode the delivered fields, changing the peer's table size every other block */
        if (blockno++ & 1)
            hy_hpack_enc_peer_max(&e, peer_sizes[peer++ & 7]);
        size_t bound = 8;
        for (size_t i = 0; i < fs.n; i++)
            bound += hy_hpack_field_bound(fs.f[i].nlen, fs.f[i].vlen);
        uint8_t *out = malloc(bound);
        size_t o = hy_hpack_encode_begin(&e, out);
        CHECK(o <= 6);
        for (size_t i = 0; i < fs.n; i++) {
            const rec_t *f = &fs.f[i];
            size_t w = hy_hpack_encode_field(&e, out + o, fs.bytes + f->noff, f->nlen, fs.bytes + f->voff, f->vlen,
                                             f->never);
            CHECK(w <= hy_hpack_field_bound(f->nlen, f->vlen));
            o += w;
            CHECK(e.t.size <= e.t.max && e.t.max <= e.peer_max && e.t.max <= HY_HPACK_DEFAULT_TABLE);
        }
        CHECK(o <= bound);
        uint8_t *exact = malloc(o ? o : 1);
        memcpy(exact, out, o);
        free(out);
        r = hy_hpack_decode(&d2, exact, o, compare, &fs);
        free(exact);
        CHECK(r == 0);
        CHECK(!fs.mismatch && fs.cmp == fs.n);
        CHECK(d2.t.size == e.t.size && d2.t.count == e.t.count && d2.t.max == e.t.max);
    }
    free(fs.bytes);
    free(fs.f);
    hy_hpack_dec_free(&d1);
    hy_hpack_dec_free(&d2);
    hy_hpack_enc_free(&e);
    return 0;
}
