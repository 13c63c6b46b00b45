/* charset_recode.c — see charset_recode.h. */
#include <stdio.h>
#include <string.h>
#include "charset_recode.h"

int32_t hy_utf8_decode_one(const uint8_t *p, size_t n, size_t *used)
{
    uint8_t c = p[0];
    size_t len;
    uint32_t cp, min;
    *used = 1;
    if (c < 0x80) {
        return c;
    } else if (c >= 0xc2 && c <= 0xdf) {
        len = 2, cp = c & 0x1f, min = 0x80;
    } else if (c >= 0xe0 && c <= 0xef) {
        len = 3, cp = c & 0x0f, min = 0x800;
    } else if (c >= 0xf0 && c <= 0xf4) {
        len = 4, cp = c & 0x07, min = 0x10000;
    } else {
        return -2;
    }
    for (size_t i = 1; i < len; i++) {
        if (i >= n)
            return -1;
        if ((p[i] & 0xc0) != 0x80)
            return -2;
        cp = cp << 6 | (p[i] & 0x3f);
    }
    if (cp < min || cp > 0x10ffff)
        return -2;
    *used = len;
    return (int32_t)cp;
}

size_t hy_recode_bound(const hy_recode_t *rc, size_t n)
{
    switch (rc->mode) {
    case HY_RECODE_TO_UTF8:
        return n * 3;
    case HY_RECODE_FROM_UTF8:
        return (n + rc->saved_len) * 4 + 16; /* "&#2047;" for 2 bytes is the worst ratio */
    default:
        return n;
    }
}

/* one decoded character (or an invalid byte) into dst */
static size_t put_char(const hy_recode_t *rc, int32_t cp, uint8_t *dst)
{
    if (cp < 0) {
        dst[0] = '?';
        return 1;
    }
    if (cp < 0x80) {
        dst[0] = (uint8_t)cp;
        return 1;
    }
    if (cp < 0x10000) {
        const uint8_t *page = rc->pages[cp >> 8];
        if (page && page[cp & 0xff]) {
            dst[0] = page[cp & 0xff];
            return 1;
        }
    }
    return (size_t)sprintf((char *)dst, "&#%u;", (unsigned)cp);
}

static size_t from_utf8(hy_recode_t *rc, const uint8_t *src, size_t n, uint8_t *dst)
{
    uint8_t *d = dst;
    size_t i = 0, used;
    if (rc->saved_len) { /* finish the sequence cut at the end of the previous call */
        uint8_t tmp[8];
        size_t have = rc->saved_len, take = n < 4 ? n : 4;
        memcpy(tmp, rc->saved, have);
        memcpy(tmp + have, src, take);
        int32_t cp = hy_utf8_decode_one(tmp, have + take, &used);
        if (cp == -1) { /* still incomplete: everything given was part of it */
            memcpy(rc->saved + have, src, take);
            rc->saved_len = have + take;
            return 0;
        }
        rc->saved_len = 0;
        d += put_char(rc, cp, d);
        i = used > have ? used - have : 0;
    }
    while (i < n) {
        if (src[i] < 0x80) {
            *d++ = src[i++];
            continue;
        }
        int32_t cp = hy_utf8_decode_one(src + i, n - i, &used);
        if (cp == -1) {
            memcpy(rc->saved, src + i, n - i);
            rc->saved_len = n - i;
            break;
        }
        d += put_char(rc, cp, d);
        i += used;
    }
    return (size_t)(d - dst);
}

size_t hy_recode(hy_recode_t *rc, const uint8_t *src, size_t n, uint8_t *dst)
{
    if (rc->mode == HY_RECODE_FROM_UTF8)
        return from_utf8(rc, src, n, dst);
    if (rc->mode == HY_RECODE_BYTE) {
        for (size_t i = 0; i < n; i++)
            dst[i] = rc->table[src[i]];
        return n;
    }
    uint8_t *d = dst;
    for (size_t i = 0; i < n; i++) {
        const uint8_t *e = rc->table + src[i] * 4;
        memcpy(d, e + 1, e[0]);
        d += e[0];
    }
    return (size_t)(d - dst);
}
