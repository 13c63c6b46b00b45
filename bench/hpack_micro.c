/* hpack_micro.c — instructions per HPACK block (proto/hpack.c), not part of the build:
 *   gcc -O2 -Isrc -o /tmp/hpack_micro bench/hpack_micro.c src/proto/hpack.c
 *   perf stat -e instructions:u /tmp/hpack_micro dec 1000000   (minus: /tmp/hpack_micro dec 0)
 *   valgrind --tool=callgrind /tmp/hpack_micro enc 100000       (see hy_hpack_encode_* inclusive / calls)
 * dec: h2load's request block; the first (literals with indexing, Huffman) once, then the repeated one (all
 *      indexed from the dynamic table) N times. dec1: the first block on a fresh decoder, N times.
 * enc: a typical static-file response head (:status 200, server, date, content-type, content-length,
 *      last-modified, etag, accept-ranges) N times on one encoder (repeats are one byte per field). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "proto/hpack.h"

static const char first_hex[] = "82448861148e8a179d34d186418a089d5c0b8170dc780f035383f963e7907a8f9c541c722954d3a5358980aed"
                                "89707";
static const char next_hex[] = "82c186c0bf90be";

static size_t unhex(const char *h, uint8_t *out)
{
    size_t n = 0;
    for (; h[0] && h[1]; h += 2) {
        unsigned v;
        sscanf(h, "%2x", &v);
        out[n++] = (uint8_t)v;
    }
    return n;
}

static size_t sink;

static int cb(void *ud, const hy_hpack_field_t *f)
{
    (void)ud;
    sink += f->value_len + f->static_idx;
    return HY_HPACK_CB_OK;
}

int main(int argc, char **argv)
{
    const char *mode = argc > 1 ? argv[1] : "dec";
    long n = argc > 2 ? atol(argv[2]) : 1000000;
    uint8_t b1[256], b2[256], out[1024];
    size_t l1 = unhex(first_hex, b1), l2 = unhex(next_hex, b2);
    if (strcmp(mode, "dec") == 0) {
        hy_hpack_dec_t d;
        hy_hpack_dec_init(&d, 4096);
        if (hy_hpack_decode(&d, b1, l1, cb, NULL) != 0)
            return 1;
        for (long i = 0; i < n; i++)
            if (hy_hpack_decode(&d, b2, l2, cb, NULL) != 0)
                return 1;
        hy_hpack_dec_free(&d);
    } else if (strcmp(mode, "dec1") == 0) {
        for (long i = 0; i < n; i++) {
            hy_hpack_dec_t d;
            hy_hpack_dec_init(&d, 4096);
            if (hy_hpack_decode(&d, b1, l1, cb, NULL) != 0)
                return 1;
            hy_hpack_dec_free(&d);
        }
    } else {
        static const char *f[] = {
            "server",         "hayate",
            "date",           "Wed, 02 Dec 2026 00:01:54 GMT",
            "content-type",   "text/html",
            "content-length", "612",
            "last-modified",  "Tue, 01 Dec 2026 10:00:00 GMT",
            "etag",           "\"692d6f20-264\"",
            "accept-ranges",  "bytes",
        };
        size_t fl[14];
        for (int i = 0; i < 14; i++)
            fl[i] = strlen(f[i]);
        hy_hpack_enc_t e;
        hy_hpack_enc_init(&e);
        for (long i = 0; i < n; i++) {
            size_t o = hy_hpack_encode_begin(&e, out);
            o += hy_hpack_encode_status(&e, out + o, 200);
            for (int k = 0; k < 7; k++)
                o += hy_hpack_encode_field(&e, out + o, f[2 * k], fl[2 * k], f[2 * k + 1], fl[2 * k + 1], false);
            sink += o;
        }
        hy_hpack_enc_free(&e);
    }
    printf("%zu\n", sink);
    return 0;
}
