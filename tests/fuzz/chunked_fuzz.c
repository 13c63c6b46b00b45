/* chunked_fuzz.c — libFuzzer driver: in-place chunked decoder, whole input vs. random splits. The result (status,
 * payload, leftover) must not depend on how the input is cut; decoded payload + leftover never exceed the input. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "proto/h1parse.h"

#define CHECK(c)                                                                                                       \
    do {                                                                                                               \
        if (!(c)) {                                                                                                    \
            fprintf(stderr, "invariant failed: %s (%s:%d)\n", #c, __FILE__, __LINE__);                                 \
            abort();                                                                                                   \
        }                                                                                                              \
    } while (0)

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* Decode in pieces; piece sizes come from a xorshift PRNG seeded with `seed` (seed 0: one piece). */
static ssize_t decode(const uint8_t *in, size_t len, uint32_t seed, char *payload, size_t *plen, char *left,
                      size_t *llen)
{
    hy_h1_chunked_t d = {0};
    size_t pos = 0;
    uint32_t x = seed | 1;
    *plen = *llen = 0;
    for (;;) {
        size_t n = len - pos;
        if (seed != 0 && n > 0) {
            x ^= x << 13;
            x ^= x >> 17;
            x ^= x << 5;
            n = x % (n + 1); /* may be 0: an empty read must be harmless */
        }
        char *piece = malloc(n ? n : 1);
        memcpy(piece, in + pos, n);
        size_t dl = n;
        ssize_t rc = hy_h1_decode_chunked(&d, piece, &dl);
        CHECK(rc >= -2);
        if (rc == -1) {
            free(piece);
            return -1;
        }
        CHECK(dl <= n);
        memcpy(payload + *plen, piece, dl);
        *plen += dl;
        pos += n;
        if (rc >= 0) {
            CHECK(dl + (size_t)rc <= n);
            CHECK(hy_h1_chunked_done(&d));
            memcpy(left, piece + dl, (size_t)rc);
            *llen = (size_t)rc;
            memcpy(left + *llen, in + pos, len - pos);
            *llen += len - pos;
            free(piece);
            return (ssize_t)*llen;
        }
        free(piece);
        if (pos == len)
            return -2;
    }
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size < 2)
        return 0;
    uint32_t seed = (uint32_t)data[0] << 8 | data[1];
    data += 2;
    size -= 2;
    char *p1 = malloc(size + 1), *l1 = malloc(size + 1), *p2 = malloc(size + 1), *l2 = malloc(size + 1);
    size_t pl1, ll1, pl2, ll2;
    ssize_t rc1 = decode(data, size, 0, p1, &pl1, l1, &ll1);
    CHECK(pl1 + ll1 <= size);
    ssize_t rc2 = decode(data, size, seed ? seed : 1, p2, &pl2, l2, &ll2);
    CHECK(pl2 + ll2 <= size);
    CHECK(rc1 == rc2);
    if (rc1 != -1) {
        CHECK(pl1 == pl2 && memcmp(p1, p2, pl1) == 0);
        CHECK(ll1 == ll2 && memcmp(l1, l2, ll1) == 0);
    }
    if (rc1 >= 0) /* the leftover is the tail of the input */
        CHECK(memcmp(l1, data + size - ll1, ll1) == 0);
    free(p1);
    free(l1);
    free(p2);
    free(l2);
    return 0;
}
