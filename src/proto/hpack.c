/* hpack.c — HPACK (RFC 7541), written from the RFC: static table (Appendix A), dynamic table (§2.3, §4), integers
 * (§5.1), strings with the Huffman code (§5.2, Appendix B) and the field representations (§6).
 *
 * Dynamic table: descriptors in a ring indexed by insertion number (dynamic index i is insertion number
 * inserted - i), bytes appended in insertion order to one buffer of 2*max bytes, moved to its start when an
 * insertion reaches the end (at most once per max bytes inserted) — an entry's bytes are contiguous.
 * Huffman decoding: a 4-bit state machine (256 states, one per internal node of the code tree; each nibble gives
 * the next state, at most one symbol since the shortest code has 5 bits, and whether stopping there is valid
 * padding), built once from the code lengths (the code is canonical: codes follow from lengths and symbol order).
 * Static name lookup: a 128-slot open-addressed hash of the 52 distinct names, built at the same time. */
#include "proto/hpack.h"

#include <pthread.h>
#include <stdlib.h>
#include <string.h>

struct hy_hpack_entry {
    uint32_t off, nlen, vlen; /* bytes at t->bytes + off: name then value */
    uint32_t hash;            /* the encoder's (name,value) hash (0 in a decoder) */
    uint8_t sidx;             /* first static index with this name, or 0 */
};

static inline uint64_t ld64(const char *s)
{
    uint64_t v;
    memcpy(&v, s, 8);
    return v;
}

static inline uint32_t ld32(const char *s)
{
    uint32_t v;
    memcpy(&v, s, 4);
    return v;
}

/* equal bytes, inline: overlapping word loads instead of a call to memcmp for the short strings of headers */
static inline bool mem_eq(const char *a, const char *b, size_t n)
{
    if (n >= 8) {
        for (size_t i = 0; i + 8 < n; i += 8)
            if (ld64(a + i) != ld64(b + i))
                return false;
        return ld64(a + n - 8) == ld64(b + n - 8);
    }
    if (n >= 4)
        return ld32(a) == ld32(b) && ld32(a + n - 4) == ld32(b + n - 4);
    return n == 0 || (a[0] == b[0] && a[n / 2] == b[n / 2] && a[n - 1] == b[n - 1]);
}

/* ---- static table (Appendix A) ---- */

typedef struct {
    const char *name, *value;
    uint8_t nlen, vlen;
} st_entry_t;

#define S(n, v) {n, v, sizeof(n) - 1, sizeof(v) - 1}
static const st_entry_t st[62] = {
    {"", "", 0, 0},
    S(":authority", ""),
    S(":method", "GET"),
    S(":method", "POST"),
    S(":path", "/"),
    S(":path", "/index.html"),
    S(":scheme", "http"),
    S(":scheme", "https"),
    S(":status", "200"),
    S(":status", "204"),
    S(":status", "206"),
    S(":status", "304"),
    S(":status", "400"),
    S(":status", "404"),
    S(":status", "500"),
    S("accept-charset", ""),
    S("accept-encoding", "gzip, deflate"),
    S("accept-language", ""),
    S("accept-ranges", ""),
    S("accept", ""),
    S("access-control-allow-origin", ""),
    S("age", ""),
    S("allow", ""),
    S("authorization", ""),
    S("cache-control", ""),
    S("content-disposition", ""),
    S("content-encoding", ""),
    S("content-language", ""),
    S("content-length", ""),
    S("content-location", ""),
    S("content-range", ""),
    S("content-type", ""),
    S("cookie", ""),
    S("date", ""),
    S("etag", ""),
    S("expect", ""),
    S("expires", ""),
    S("from", ""),
    S("host", ""),
    S("if-match", ""),
    S("if-modified-since", ""),
    S("if-none-match", ""),
    S("if-range", ""),
    S("if-unmodified-since", ""),
    S("last-modified", ""),
    S("link", ""),
    S("location", ""),
    S("max-forwards", ""),
    S("proxy-authenticate", ""),
    S("proxy-authorization", ""),
    S("range", ""),
    S("referer", ""),
    S("refresh", ""),
    S("retry-after", ""),
    S("server", ""),
    S("set-cookie", ""),
    S("strict-transport-security", ""),
    S("transfer-encoding", ""),
    S("user-agent", ""),
    S("vary", ""),
    S("via", ""),
    S("www-authenticate", ""),
};
#undef S
#define ST_LEN 61

/* first static index with the same name as index i */
static const uint8_t st_first[62] = {
    0,  1,  2,  2,  4,  4,  6,  6,  8,  8,  8,  8,  8,  8,  8,  15, 16, 17, 18, 19, 20,
    21, 22, 23, 24, 25, 26, 27, 28, 29, 30, 31, 32, 33, 34, 35, 36, 37, 38, 39, 40, 41,
    42, 43, 44, 45, 46, 47, 48, 49, 50, 51, 52, 53, 54, 55, 56, 57, 58, 59, 60, 61,
};

/* ---- Huffman code (Appendix B): code lengths of symbols 0..255 and EOS (256) ---- */

static const uint8_t huff_len[257] = {
    13, 23, 28, 28, 28, 28, 28, 28, 28, 24, 30, 28, 28, 30, 28, 28, 28, 28, 28, 28, 28, 28, 30, 28, 28, 28, 28, 28,
    28, 28, 28, 28, 6,  10, 10, 12, 13, 6,  8,  11, 10, 10, 8,  11, 8,  6,  6,  6,  5,  5,  5,  6,  6,  6,  6,  6,
    6,  6,  7,  8,  15, 6,  12, 10, 13, 6,  7,  7,  7,  7,  7,  7,  7,  7,  7,  7,  7,  7,  7,  7,  7,  7,  7,  7,
    7,  7,  7,  7,  8,  7,  8,  13, 19, 13, 14, 6,  15, 5,  6,  5,  6,  5,  6,  6,  6,  5,  7,  7,  6,  6,  6,  5,
    6,  7,  6,  5,  5,  6,  7,  7,  7,  7,  7,  15, 11, 14, 13, 28, 20, 22, 20, 20, 22, 22, 22, 23, 22, 23, 23, 23,
    23, 23, 24, 23, 24, 24, 22, 23, 24, 23, 23, 23, 23, 21, 22, 23, 22, 23, 23, 24, 22, 21, 20, 22, 22, 23, 23, 21,
    23, 22, 22, 24, 21, 22, 23, 23, 21, 21, 22, 21, 23, 22, 23, 23, 20, 22, 22, 22, 23, 22, 22, 23, 26, 26, 20, 19,
    22, 23, 22, 25, 26, 26, 26, 27, 27, 26, 24, 25, 19, 21, 26, 27, 27, 26, 27, 24, 21, 21, 26, 26, 28, 27, 27, 27,
    20, 24, 20, 21, 22, 21, 21, 23, 22, 22, 25, 25, 24, 24, 26, 23, 26, 27, 26, 26, 27, 27, 27, 27, 27, 28, 27, 27,
    27, 27, 27, 26, 30,
};

static uint32_t huff_code[257]; /* right-aligned codes, from the lengths (canonical order) */

enum { HF_EMIT = 1, HF_FAIL = 2, HF_ACCEPT = 4 };
typedef struct {
    uint8_t next, flags, sym;
} hdec_t;
static hdec_t hdec[256][16];

#define NAME_SLOTS 128
static uint8_t name_slot[NAME_SLOTS]; /* static index of a distinct name, 0: empty */

static pthread_once_t tables_once = PTHREAD_ONCE_INIT;

static inline uint32_t name_hash(const char *n, size_t len)
{
    /* length and three bytes tell the 52 static names apart well enough (probing settles the rest) */
    return ((uint32_t)len * 31u + (uint8_t)n[0] * 7u + (uint8_t)n[len - 1] * 3u + (uint8_t)n[len / 2]) &
           (NAME_SLOTS - 1);
}

static void build_tables(void)
{
    /* canonical codes: by length, then symbol */
    uint32_t code = 0;
    unsigned prev = 0;
    for (unsigned len = 5; len <= 30; len++)
        for (unsigned s = 0; s < 257; s++)
            if (huff_len[s] == len) {
                if (prev)
                    code = (code + 1) << (len - prev);
                prev = len;
                huff_code[s] = code;
            }
    /* the code tree: internal nodes 0..255 (root 0); child >= 0 an internal node, < 0 a leaf -(sym+1) */
    static int16_t child[256][2];
    static uint8_t depth[256], ones[256];
    memset(child, 0, sizeof(child));
    unsigned nodes = 1;
    depth[0] = 0;
    ones[0] = 1;
    for (unsigned s = 0; s < 257; s++) {
        unsigned n = 0;
        for (int b = huff_len[s] - 1; b >= 0; b--) {
            unsigned bit = (huff_code[s] >> b) & 1;
            if (b == 0) {
                child[n][bit] = (int16_t)(-(int)s - 1);
            } else {
                if (child[n][bit] == 0) {
                    child[n][bit] = (int16_t)nodes;
                    depth[nodes] = (uint8_t)(depth[n] + 1);
                    ones[nodes] = (uint8_t)(ones[n] && bit);
                    nodes++;
                }
                n = (unsigned)child[n][bit];
            }
        }
    }
    for (unsigned st0 = 0; st0 < 256; st0++)
        for (unsigned nib = 0; nib < 16; nib++) {
            unsigned n = st0;
            uint8_t flags = 0, sym = 0;
            for (int b = 3; b >= 0; b--) {
                int c = child[n][(nib >> b) & 1];
                if (c < 0) {
                    unsigned s = (unsigned)(-c - 1);
                    if (s == 256)
                        flags |= HF_FAIL;
                    flags |= HF_EMIT;
                    sym = (uint8_t)s;
                    n = 0;
                } else {
                    n = (unsigned)c;
                }
            }
            if (n == 0 || (ones[n] && depth[n] <= 7))
                flags |= HF_ACCEPT;
            hdec[st0][nib] = (hdec_t){(uint8_t)n, flags, sym};
        }
    /* static names */
    for (unsigned i = 1; i <= ST_LEN; i++) {
        if (st_first[i] != i)
            continue;
        uint32_t h = name_hash(st[i].name, st[i].nlen);
        while (name_slot[h])
            h = (h + 1) & (NAME_SLOTS - 1);
        name_slot[h] = (uint8_t)i;
    }
}

static inline void tables_init(void)
{
    pthread_once(&tables_once, build_tables);
}

/* first static index whose name is these bytes, or 0 */
static unsigned static_name(const char *n, size_t len)
{
    if (len == 0 || len > 27)
        return 0;
    uint32_t h = name_hash(n, len);
    for (;;) {
        unsigned i = name_slot[h];
        if (i == 0)
            return 0;
        if (st[i].nlen == len && mem_eq(st[i].name, n, len))
            return i;
        h = (h + 1) & (NAME_SLOTS - 1);
    }
}

/* ---- dynamic table ---- */

static void table_init(hy_hpack_table_t *t, size_t max)
{
    memset(t, 0, sizeof(*t));
    t->max = max;
}

static void table_free(hy_hpack_table_t *t)
{
    free(t->ring);
    free(t->bytes);
    memset(t, 0, sizeof(*t));
}

static inline struct hy_hpack_entry *table_get(const hy_hpack_table_t *t, size_t i) /* i: 1..count, newest 1 */
{
    return &t->ring[(t->inserted - (uint32_t)i) & (t->cap - 1)];
}

static void table_evict(hy_hpack_table_t *t)
{
    struct hy_hpack_entry *e = table_get(t, t->count);
    t->size -= (size_t)e->nlen + e->vlen + 32;
    t->count--;
    t->bytes_start = (size_t)e->off + e->nlen + e->vlen;
    if (t->count == 0)
        t->bytes_start = t->bytes_head = 0;
}

static void table_compact(hy_hpack_table_t *t)
{
    if (t->bytes_start == 0)
        return;
    memmove(t->bytes, t->bytes + t->bytes_start, t->bytes_head - t->bytes_start);
    for (size_t i = 1; i <= t->count; i++)
        table_get(t, i)->off -= (uint32_t)t->bytes_start;
    t->bytes_head -= t->bytes_start;
    t->bytes_start = 0;
}

/* new limit: evict down to it; the byte buffer follows (2*max). 0, or -1 when out of memory. */
static int table_set_max(hy_hpack_table_t *t, size_t max)
{
    t->max = max;
    while (t->size > max)
        table_evict(t);
    if (t->bytes && t->bytes_cap < 2 * max) {
        table_compact(t);
        char *nb = realloc(t->bytes, 2 * max);
        if (!nb)
            return -1;
        t->bytes = nb;
        t->bytes_cap = 2 * max;
    }
    return 0;
}

/* add an entry (§4.4). The name and value must not point into t->bytes. 1 added, 0 too large (the table is
 * emptied), -1 out of memory (the table is unchanged but for evictions). */
static int table_insert(hy_hpack_table_t *t, const char *name, size_t nlen, const char *value, size_t vlen,
                        unsigned sidx, uint32_t hash)
{
    size_t esz = nlen + vlen + 32;
    if (esz > t->max) {
        while (t->count)
            table_evict(t);
        return 0;
    }
    while (t->size + esz > t->max)
        table_evict(t);
    if (t->count == t->cap) {
        size_t ncap = t->cap ? t->cap * 2 : 16;
        struct hy_hpack_entry *nr = malloc(ncap * sizeof(*nr));
        if (!nr)
            return -1;
        for (size_t i = 1; i <= t->count; i++)
            nr[(t->inserted - (uint32_t)i) & (ncap - 1)] = *table_get(t, i);
        free(t->ring);
        t->ring = nr;
        t->cap = ncap;
    }
    if (!t->bytes) {
        size_t bc = 2 * t->max;
        t->bytes = malloc(bc);
        if (!t->bytes)
            return -1;
        t->bytes_cap = bc;
        t->bytes_start = t->bytes_head = 0;
    }
    if (t->bytes_head + nlen + vlen > t->bytes_cap)
        table_compact(t);
    struct hy_hpack_entry *e = &t->ring[t->inserted & (t->cap - 1)];
    e->off = (uint32_t)t->bytes_head;
    e->nlen = (uint32_t)nlen;
    e->vlen = (uint32_t)vlen;
    e->hash = hash;
    e->sidx = (uint8_t)sidx;
    if (nlen)
        memcpy(t->bytes + t->bytes_head, name, nlen);
    if (vlen)
        memcpy(t->bytes + t->bytes_head + nlen, value, vlen);
    t->bytes_head += nlen + vlen;
    t->inserted++;
    t->count++;
    t->size += esz;
    return 1;
}

/* ---- decoding ---- */

/* integer with an N-bit prefix (§5.1) at *pp. Returns 0 (*pp past it), HY_HPACK_ERR_TRUNCATED when the block ends
 * inside it (its octets continue to `end`, however many they are), or HY_HPACK_ERR: a value above 2^32-1, or more
 * than 5 continuation octets followed by more of the block. */
static inline int dec_int(const uint8_t **pp, const uint8_t *end, unsigned prefix, uint32_t *out)
{
    const uint8_t *p = *pp;
    uint32_t mask = (1u << prefix) - 1;
    uint32_t v = *p++ & mask;
    if (v < mask) {
        *pp = p;
        *out = v;
        return 0;
    }
    uint64_t acc = v;
    for (unsigned shift = 0; shift <= 28; shift += 7) {
        if (p == end)
            return HY_HPACK_ERR_TRUNCATED;
        uint8_t b = *p++;
        acc += (uint64_t)(b & 0x7f) << shift;
        if (!(b & 0x80)) {
            if (acc > UINT32_MAX)
                return HY_HPACK_ERR;
            *pp = p;
            *out = (uint32_t)acc;
            return 0;
        }
    }
    while (p < end && (*p & 0x80)) /* too long: still, a block that ends inside it is a truncated one */
        p++;
    return p == end ? HY_HPACK_ERR_TRUNCATED : HY_HPACK_ERR;
}

static int scratch_reserve(hy_hpack_dec_t *d, size_t need)
{
    if (need <= d->scratch_cap)
        return 0;
    size_t nc = d->scratch_cap ? d->scratch_cap : 256;
    while (nc < need)
        nc *= 2;
    char *ns = realloc(d->scratch, nc);
    if (!ns)
        return -1;
    d->scratch = ns;
    d->scratch_cap = nc;
    return 0;
}

/* Huffman-decode src into out (room for len*8/5 bytes); returns the length or -1 */
static long huff_decode(const uint8_t *src, size_t len, char *out)
{
    char *o = out;
    unsigned state = 0, accept = HF_ACCEPT;
    for (size_t i = 0; i < len; i++) {
        uint8_t b = src[i];
        const hdec_t *e = &hdec[state][b >> 4];
        if (e->flags & (HF_FAIL | HF_EMIT)) {
            if (e->flags & HF_FAIL)
                return -1;
            *o++ = (char)e->sym;
        }
        e = &hdec[e->next][b & 15];
        if (e->flags & (HF_FAIL | HF_EMIT)) {
            if (e->flags & HF_FAIL)
                return -1;
            *o++ = (char)e->sym;
        }
        state = e->next;
        accept = e->flags & HF_ACCEPT;
    }
    return accept ? (long)(o - out) : -1;
}

/* string literal (§5.2) at *pp: raw bytes point into the block; Huffman ones are decoded into the scratch at
 * *soff (which advances). On return *s is a pointer, or NULL with *soff_at set when it lives in the scratch
 * (the scratch may move while the value is read). Returns 0, HY_HPACK_ERR_TRUNCATED (no length, a length the block
 * ends inside, or a length past the block's end) or HY_HPACK_ERR. *long_len is set when the length took 6 octets. */
static int dec_str(hy_hpack_dec_t *d, const uint8_t **pp, const uint8_t *end, const char **s, size_t *slen,
                   size_t *soff, size_t *at, bool *long_len)
{
    if (*pp == end)
        return HY_HPACK_ERR_TRUNCATED;
    const uint8_t *start = *pp;
    bool huff = *start & 0x80;
    uint32_t len;
    int rc = dec_int(pp, end, 7, &len);
    if (rc < 0)
        return rc;
    if (*pp - start > 5)
        *long_len = true;
    if ((size_t)(end - *pp) < len) /* past the block's end */
        return HY_HPACK_ERR_TRUNCATED;
    if (!huff) {
        *s = (const char *)*pp;
        *slen = len;
        *pp += len;
        return 0;
    }
    if (scratch_reserve(d, *soff + (size_t)len * 8 / 5 + 1) < 0)
        return HY_HPACK_ERR;
    long n = huff_decode(*pp, len, d->scratch + *soff);
    if (n < 0)
        return HY_HPACK_ERR;
    *pp += len;
    *s = NULL;
    *at = *soff;
    *slen = (size_t)n;
    *soff += (size_t)n;
    return 0;
}

void hy_hpack_dec_init(hy_hpack_dec_t *d, size_t settings_max)
{
    tables_init();
    memset(d, 0, sizeof(*d));
    table_init(&d->t, settings_max);
    d->settings_max = settings_max;
}

void hy_hpack_dec_free(hy_hpack_dec_t *d)
{
    table_free(&d->t);
    free(d->scratch);
    d->scratch = NULL;
    d->scratch_cap = 0;
}

static int decode(hy_hpack_dec_t *d, const uint8_t *block, size_t len, hy_hpack_field_cb cb, void *ud, bool *long_len)
{
    const uint8_t *p = block, *end = block + len;
    hy_hpack_table_t *t = &d->t;
    bool quiet = false, fields = false;
    hy_hpack_field_t f;
    while (p < end) {
        uint8_t b = *p;
        uint32_t idx;
        if (b & 0x80) { /* indexed field (§6.1) */
            int rc = dec_int(&p, end, 7, &idx);
            if (rc < 0)
                return rc;
            if (idx == 0)
                return HY_HPACK_ERR;
            fields = true;
            if (idx > ST_LEN && idx - ST_LEN > t->count)
                return HY_HPACK_ERR;
            if (quiet)
                continue;
            if (idx <= ST_LEN) {
                f.name = st[idx].name;
                f.name_len = st[idx].nlen;
                f.value = st[idx].value;
                f.value_len = st[idx].vlen;
                f.static_idx = st_first[idx];
            } else {
                const struct hy_hpack_entry *e = table_get(t, idx - ST_LEN);
                f.name = t->bytes + e->off;
                f.name_len = e->nlen;
                f.value = f.name + e->nlen;
                f.value_len = e->vlen;
                f.static_idx = e->sidx;
            }
            f.never_indexed = false;
        } else if ((b & 0xe0) == 0x20) { /* dynamic table size update (§6.3) */
            if (fields)
                return HY_HPACK_ERR_SIZE;
            int rc = dec_int(&p, end, 5, &idx);
            if (rc < 0)
                return rc;
            if (idx > d->settings_max)
                return HY_HPACK_ERR_SIZE;
            if (table_set_max(t, idx) < 0)
                return HY_HPACK_ERR;
            continue;
        } else { /* literal (§6.2): with incremental indexing (01), without (0000), never indexed (0001) */
            bool incr = b & 0x40;
            int rc = dec_int(&p, end, incr ? 6 : 4, &idx);
            if (rc < 0)
                return rc;
            fields = true;
            size_t soff = 0, nat = 0, vat = 0;
            const char *name, *value;
            size_t nlen, vlen;
            unsigned sidx;
            if (idx) {
                if (idx <= ST_LEN) {
                    name = st[idx].name;
                    nlen = st[idx].nlen;
                    sidx = st_first[idx];
                } else {
                    if (idx - ST_LEN > t->count)
                        return HY_HPACK_ERR;
                    const struct hy_hpack_entry *e = table_get(t, idx - ST_LEN);
                    name = t->bytes + e->off;
                    nlen = e->nlen;
                    sidx = e->sidx;
                }
            } else {
                if ((rc = dec_str(d, &p, end, &name, &nlen, &soff, &nat, long_len)) < 0)
                    return rc;
                sidx = 0;
            }
            if ((rc = dec_str(d, &p, end, &value, &vlen, &soff, &vat, long_len)) < 0)
                return rc;
            if (!name)
                name = d->scratch + nat;
            bool v_scratch = !value;
            if (v_scratch)
                value = d->scratch + vat;
            if (idx == 0)
                sidx = static_name(name, nlen);
            if (!quiet) {
                f.name = name;
                f.name_len = nlen;
                f.value = value;
                f.value_len = vlen;
                f.static_idx = sidx;
                f.never_indexed = (b & 0xf0) == 0x10;
                int r = cb(ud, &f);
                if (r == HY_HPACK_CB_ABORT)
                    return HY_HPACK_ERR_CB;
                if (r == HY_HPACK_CB_QUIET)
                    quiet = true;
            }
            if (incr) {
                if (t->bytes && name >= t->bytes && name < t->bytes + t->bytes_cap) {
                    /* a name of an entry this insertion may evict or move: copy it first */
                    if (scratch_reserve(d, soff + nlen) < 0)
                        return HY_HPACK_ERR;
                    if (v_scratch)
                        value = d->scratch + vat; /* the scratch may have moved */
                    memcpy(d->scratch + soff, name, nlen);
                    name = d->scratch + soff;
                }
                if (table_insert(t, name, nlen, value, vlen, sidx, 0) < 0)
                    return HY_HPACK_ERR;
            }
            continue;
        }
        int r = cb(ud, &f);
        if (r == HY_HPACK_CB_ABORT)
            return HY_HPACK_ERR_CB;
        if (r == HY_HPACK_CB_QUIET)
            quiet = true;
    }
    return 0;
}

int hy_hpack_decode(hy_hpack_dec_t *d, const uint8_t *block, size_t len, hy_hpack_field_cb cb, void *ud)
{
    /* a string length of 6 octets is one nginx refuses as too long (it reads 4 at most) when it comes: a block cut
     * after one is not told as a truncated one */
    bool long_len = false;
    int rc = decode(d, block, len, cb, ud, &long_len);
    return rc == HY_HPACK_ERR_TRUNCATED && long_len ? HY_HPACK_ERR : rc;
}

/* ---- encoding ---- */

void hy_hpack_enc_init(hy_hpack_enc_t *e)
{
    tables_init();
    memset(e, 0, sizeof(*e));
    table_init(&e->t, HY_HPACK_DEFAULT_TABLE);
    e->peer_max = HY_HPACK_DEFAULT_TABLE;
    e->want_max = HY_HPACK_DEFAULT_TABLE;
    e->update_min = HY_HPACK_DEFAULT_TABLE;
}

void hy_hpack_enc_free(hy_hpack_enc_t *e)
{
    table_free(&e->t);
}

void hy_hpack_enc_peer_max(hy_hpack_enc_t *e, size_t size)
{
    e->peer_max = size;
    size_t want = size < HY_HPACK_DEFAULT_TABLE ? size : HY_HPACK_DEFAULT_TABLE;
    if (want == e->want_max)
        return;
    e->want_max = want;
    if (want < e->update_min)
        e->update_min = want;
    e->size_update = true;
    if (table_set_max(&e->t, want) < 0) { /* cannot grow the buffer: use no table at all */
        table_set_max(&e->t, 0);
        e->want_max = 0;
        e->update_min = 0;
    }
}

static inline size_t enc_int(uint8_t *out, uint8_t first, unsigned prefix, size_t v)
{
    size_t mask = ((size_t)1 << prefix) - 1;
    if (v < mask) {
        out[0] = (uint8_t)(first | v);
        return 1;
    }
    out[0] = (uint8_t)(first | mask);
    v -= mask;
    size_t n = 1;
    while (v >= 128) {
        out[n++] = (uint8_t)(0x80 | (v & 0x7f));
        v >>= 7;
    }
    out[n++] = (uint8_t)v;
    return n;
}

size_t hy_hpack_encode_begin(hy_hpack_enc_t *e, uint8_t *out)
{
    if (!e->size_update)
        return 0;
    size_t n = 0;
    if (e->update_min < e->t.max)
        n += enc_int(out, 0x20, 5, e->update_min);
    n += enc_int(out + n, 0x20, 5, e->t.max);
    e->size_update = false;
    e->update_min = e->t.max;
    return n;
}

static inline size_t huff_bits(const char *s, size_t len)
{
    size_t bits = 0;
    for (size_t i = 0; i < len; i++)
        bits += huff_len[(uint8_t)s[i]];
    return bits;
}

static size_t huff_encode(uint8_t *out, const char *s, size_t len)
{
    uint64_t acc = 0;
    unsigned bits = 0;
    uint8_t *o = out;
    for (size_t i = 0; i < len; i++) {
        uint8_t c = (uint8_t)s[i];
        acc = (acc << huff_len[c]) | huff_code[c];
        bits += huff_len[c];
        if (bits >= 32) {
            bits -= 32;
            uint32_t w = (uint32_t)(acc >> bits);
            o[0] = (uint8_t)(w >> 24);
            o[1] = (uint8_t)(w >> 16);
            o[2] = (uint8_t)(w >> 8);
            o[3] = (uint8_t)w;
            o += 4;
        }
    }
    while (bits >= 8) {
        bits -= 8;
        *o++ = (uint8_t)(acc >> bits);
    }
    if (bits) /* pad with the EOS code's first bits: ones */
        *o++ = (uint8_t)((acc << (8 - bits)) | (0xffu >> bits));
    return (size_t)(o - out);
}

static size_t enc_str(uint8_t *out, const char *s, size_t len)
{
    size_t hlen = (huff_bits(s, len) + 7) / 8;
    if (hlen < len) {
        size_t n = enc_int(out, 0x80, 7, hlen);
        return n + huff_encode(out + n, s, len);
    }
    size_t n = enc_int(out, 0, 7, len);
    memcpy(out + n, s, len);
    return n + len;
}

/* a few words of s: all of it up to 16 bytes, its start, middle and end beyond */
static inline uint64_t edges(const char *s, size_t n)
{
    if (n >= 8) {
        uint64_t v = ld64(s) * 0x9e3779b97f4a7c15ull ^ ld64(s + n - 8);
        if (n > 16)
            v = v * 0xc2b2ae3d27d4eb4full ^ ld64(s + n / 2 - 4);
        return v;
    }
    if (n >= 4)
        return ld32(s) | (uint64_t)ld32(s + n - 4) << 32;
    return n ? (uint8_t)s[0] | (uint32_t)(uint8_t)s[n / 2] << 8 | (uint32_t)(uint8_t)s[n - 1] << 16 : 0;
}

/* (name,value) hash, never 0, O(1): lengths and edge words; a collision only costs a miss */
static inline uint32_t field_hash(const char *name, size_t nlen, const char *value, size_t vlen)
{
    uint64_t h = (edges(name, nlen) * 0xff51afd7ed558ccdull) ^ edges(value, vlen) ^ ((uint64_t)nlen << 48 | vlen);
    h *= 0x9e3779b97f4a7c15ull;
    uint32_t r = (uint32_t)(h >> 32);
    return r ? r : 1;
}

/* the field is not in the dynamic table (or may not be looked up): a static match, or a literal */
__attribute__((noinline)) static size_t encode_literal(hy_hpack_enc_t *e, uint8_t *out, const char *name,
                                                      size_t name_len, const char *value, size_t value_len,
                                                      bool sensitive, uint32_t h)
{
    hy_hpack_table_t *t = &e->t;
    unsigned sidx = static_name(name, name_len);
    if (sidx && st[sidx].vlen && !sensitive) {
        /* a static entry with this very value (":method GET", "accept-encoding: gzip, deflate", ":status 200") */
        for (unsigned i = sidx; i <= ST_LEN && st_first[i] == sidx; i++)
            if (st[i].vlen == value_len && mem_eq(st[i].value, value, value_len)) {
                out[0] = (uint8_t)(0x80 | i);
                return 1;
            }
    }
    bool index = h && sidx != 30 /* content-range */ && sidx != 4 /* :path */ && sidx != 55 /* set-cookie */ &&
                 table_insert(t, name, name_len, value, value_len, sidx, h) > 0;
    size_t n;
    if (index) {
        e->hash[h & 255] = t->inserted; /* the new entry's insertion number + 1 */
        n = enc_int(out, 0x40, 6, sidx);
    } else {
        n = enc_int(out, sensitive ? 0x10 : 0x00, 4, sidx);
    }
    if (!sidx)
        n += enc_str(out + n, name, name_len);
    n += enc_str(out + n, value, value_len);
    return n;
}

size_t hy_hpack_encode_field(hy_hpack_enc_t *e, uint8_t *out, const char *name, size_t name_len, const char *value,
                             size_t value_len, bool sensitive)
{
    const hy_hpack_table_t *t = &e->t;
    if (sensitive || value_len > 256 || name_len + value_len + 32 > t->max * 3 / 4)
        return encode_literal(e, out, name, name_len, value, value_len, sensitive, 0);
    /* the fast path: a field sent before, now in the dynamic table */
    uint32_t h = field_hash(name, name_len, value, value_len);
    uint32_t slot = e->hash[h & 255];
    uint32_t age = t->inserted - (slot - 1); /* its dynamic index, if the slot is used and still live */
    if (slot && age - 1 < t->count) {
        const struct hy_hpack_entry *en = table_get(t, age);
        const char *b = t->bytes + en->off;
        if (en->hash == h && en->nlen == name_len && en->vlen == value_len && mem_eq(b, name, name_len) &&
            mem_eq(b + name_len, value, value_len))
            return enc_int(out, 0x80, 7, ST_LEN + age);
    }
    return encode_literal(e, out, name, name_len, value, value_len, false, h);
}

size_t hy_hpack_encode_status(hy_hpack_enc_t *e, uint8_t *out, unsigned status)
{
    switch (status) {
    case 200: out[0] = 0x88; return 1;
    case 204: out[0] = 0x89; return 1;
    case 206: out[0] = 0x8a; return 1;
    case 304: out[0] = 0x8b; return 1;
    case 400: out[0] = 0x8c; return 1;
    case 404: out[0] = 0x8d; return 1;
    case 500: out[0] = 0x8e; return 1;
    default: break;
    }
    char d[3] = {(char)('0' + status / 100 % 10), (char)('0' + status / 10 % 10), (char)('0' + status % 10)};
    return hy_hpack_encode_field(e, out, ":status", 7, d, 3, false);
}
