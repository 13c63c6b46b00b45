/* murmur.c — MurmurHash2, 32-bit, seed 0 (see murmur.h). */
#include "murmur.h"

#define MURMUR_M 0x5bd1e995u

uint32_t hy_murmur_hash2(const void *p, size_t len)
{
    const unsigned char *s = p;
    uint32_t h = (uint32_t)len; /* seed 0 xor length */
    for (; len >= 4; s += 4, len -= 4) {
        uint32_t k = (uint32_t)s[0] | (uint32_t)s[1] << 8 | (uint32_t)s[2] << 16 | (uint32_t)s[3] << 24;
        k *= MURMUR_M;
        k ^= k >> 24;
        k *= MURMUR_M;
        h = h * MURMUR_M ^ k;
    }
    if (len) {
        if (len == 3)
            h ^= (uint32_t)s[2] << 16;
        if (len >= 2)
            h ^= (uint32_t)s[1] << 8;
        h ^= s[0];
        h *= MURMUR_M;
    }
    h ^= h >> 13;
    h *= MURMUR_M;
    h ^= h >> 15;
    return h;
}
