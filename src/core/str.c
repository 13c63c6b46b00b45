/* str.c — counted-string helpers and nginx value parsers (sizes, times) with range checks. */
#include <arpa/inet.h>
#include <errno.h>
#include <stdint.h>
#include <string.h>
#include <strings.h>
#include "str.h"
#include "mem.h"

static inline uint64_t lower8(uint64_t x)
{
    const uint64_t ones = 0x0101010101010101ULL, high = 0x8080808080808080ULL;
    uint64_t h = x & ~high;                  /* the low seven bits of each byte */
    uint64_t ge_a = h + ones * (0x80 - 'A'); /* high bit set: h >= 'A' */
    uint64_t gt_z = h + ones * (0x7f - 'Z'); /* high bit set: h > 'Z' */
    return x | (((ge_a ^ gt_z) & ~x & high) >> 2); /* 0x80 >> 2 = 0x20 */
}

static inline uint32_t lower4(uint32_t x)
{
    const uint32_t ones = 0x01010101U, high = 0x80808080U;
    uint32_t h = x & ~high;
    uint32_t ge_a = h + ones * (0x80 - 'A');
    uint32_t gt_z = h + ones * (0x7f - 'Z');
    return x | (((ge_a ^ gt_z) & ~x & high) >> 2);
}

/* Eight bytes at a time, both sides lowered (only A-Z fold, as the byte rule); the last word overlaps the one
 * before; under eight bytes, two overlapping four-byte words. */
bool hy_mem_caseeq(const char *a, const char *b, size_t n)
{
    uint64_t x, y;
    if (n == 0)
        return true;
    if ((unsigned char)(a[0] ^ b[0]) & 0xdf) /* first bytes that differ in more than case: most mismatches */
        return false;
    if (n >= 8) {
        for (size_t i = 0; i + 8 <= n; i += 8) {
            memcpy(&x, a + i, 8);
            memcpy(&y, b + i, 8);
            if (x != y && lower8(x) != lower8(y))
                return false;
        }
        memcpy(&x, a + n - 8, 8);
        memcpy(&y, b + n - 8, 8);
        return x == y || lower8(x) == lower8(y);
    }
    if (n >= 4) {
        uint32_t u, v, u2, v2;
        memcpy(&u, a, 4), memcpy(&v, b, 4), memcpy(&u2, a + n - 4, 4), memcpy(&v2, b + n - 4, 4);
        return (u == v || lower4(u) == lower4(v)) && (u2 == v2 || lower4(u2) == lower4(v2));
    }
    for (size_t i = 0; i < n; i++) {
        unsigned char c = (unsigned char)a[i], d = (unsigned char)b[i];
        if (c != d && ((c | 0x20) != (d | 0x20) || (c | 0x20) < 'a' || (c | 0x20) > 'z'))
            return false;
    }
    return true;
}

bool hy_str_eq_str(hy_str_t a, hy_str_t b)
{
    return a.len == b.len && (a.len == 0 || memcmp(a.ptr, b.ptr, a.len) == 0);
}

bool hy_str_caseeq_str(hy_str_t a, hy_str_t b)
{
    return a.len == b.len && (a.len == 0 || hy_mem_caseeq(a.ptr, b.ptr, a.len));
}

void hy_str_lower(char *p, size_t n)
{
    hy_lower_copy(p, p, n);
}

/* Eight bytes at a time; the last (partial) word is the string's last eight bytes again, overlapping the previous
 * word (lowering twice changes nothing); under eight, two overlapping four-byte words. */
void hy_lower_copy(char *dst, const char *src, size_t n)
{
    uint64_t x;
    uint32_t y;
    if (n >= 8) {
        size_t i = 0;
        for (; i + 8 <= n; i += 8) {
            memcpy(&x, src + i, 8);
            x = lower8(x);
            memcpy(dst + i, &x, 8);
        }
        if (i < n) {
            memcpy(&x, src + n - 8, 8);
            x = lower8(x);
            memcpy(dst + n - 8, &x, 8);
        }
        return;
    }
    if (n >= 4) {
        uint32_t z;
        memcpy(&y, src, 4);
        memcpy(&z, src + n - 4, 4);
        y = lower4(y), z = lower4(z);
        memcpy(dst, &y, 4);
        memcpy(dst + n - 4, &z, 4);
        return;
    }
    for (size_t i = 0; i < n; i++)
        dst[i] = (char)(src[i] >= 'A' && src[i] <= 'Z' ? src[i] + 32 : src[i]);
}

hy_str_t hy_str_dup(hy_pool_t *p, hy_str_t s)
{
    return (hy_str_t){hy_pstrndup(p, s.ptr, s.len), s.len};
}

int64_t hy_parse_int(const char *p, size_t n)
{
    if (n == 0)
        return -1;
    int64_t v = 0;
    for (size_t i = 0; i < n; i++) {
        if (p[i] < '0' || p[i] > '9')
            return -1;
        if (v > (INT64_MAX - (p[i] - '0')) / 10)
            return -1;
        v = v * 10 + (p[i] - '0');
    }
    return v;
}

int64_t hy_parse_size(const char *p, size_t n)
{
    if (n == 0)
        return -1;
    int64_t mul = 1;
    switch (p[n - 1]) {
    case 'k': case 'K': mul = 1024; n--; break;
    case 'm': case 'M': mul = 1024 * 1024; n--; break;
    case 'g': case 'G': mul = 1024 * 1024 * 1024; n--; break;
    default: break;
    }
    int64_t v = hy_parse_int(p, n);
    if (v < 0 || v > INT64_MAX / mul)
        return -1;
    return v * mul;
}

/* nginx's time syntax: a sequence of <number><unit> separated by optional spaces; units ms s m h d w M y. */
static int64_t parse_time(const char *p, size_t n, bool allow_ms, int64_t sec_scale)
{
    size_t i = 0;
    int64_t total = 0;
    int64_t last_unit = INT64_MAX; /* nginx: units must come in decreasing order, each at most once */
    bool any = false;
    while (i < n) {
        while (i < n && p[i] == ' ')
            i++;
        if (i == n)
            break;
        int64_t v = 0;
        size_t start = i;
        while (i < n && p[i] >= '0' && p[i] <= '9') {
            if (v > (INT64_MAX / 1000 - 9) / 10)
                return -1;
            v = v * 10 + (p[i] - '0');
            i++;
        }
        if (i == start)
            return -1;
        int64_t unit_ms; /* unit in milliseconds */
        if (i == n || p[i] == ' ') {
            unit_ms = 1000; /* bare number: seconds */
            if (any)
                return -1;
        } else if (p[i] == 'm' && i + 1 < n && p[i + 1] == 's') {
            if (!allow_ms)
                return -1;
            unit_ms = 1, i += 2;
        } else {
            switch (p[i]) {
            case 's': unit_ms = 1000; break;
            case 'm': unit_ms = 60 * 1000; break;
            case 'h': unit_ms = 3600 * 1000; break;
            case 'd': unit_ms = 86400 * 1000LL; break;
            case 'w': unit_ms = 7 * 86400 * 1000LL; break;
            case 'M': unit_ms = 30 * 86400 * 1000LL; break;
            case 'y': unit_ms = 365 * 86400 * 1000LL; break;
            default: return -1;
            }
            i++;
        }
        if (unit_ms >= last_unit)
            return -1;
        last_unit = unit_ms;
        if (v > (INT64_MAX / 4) / unit_ms || total > INT64_MAX / 4 - v * unit_ms)
            return -1;
        total += v * unit_ms;
        any = true;
    }
    if (!any)
        return -1;
    return sec_scale == 1 ? total : total / sec_scale;
}

int64_t hy_parse_msec(const char *p, size_t n)
{
    return parse_time(p, n, true, 1);
}

int64_t hy_parse_sec(const char *p, size_t n)
{
    return parse_time(p, n, false, 1000);
}

size_t hy_fmt_u64(char *out, uint64_t v)
{
    char tmp[20];
    size_t n = 0;
    do {
        tmp[n++] = (char)('0' + v % 10);
        v /= 10;
    } while (v);
    for (size_t i = 0; i < n; i++)
        out[i] = tmp[n - 1 - i];
    return n;
}

size_t hy_hex_dump(char *out, const unsigned char *p, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        out[2 * i] = "0123456789abcdef"[p[i] >> 4];
        out[2 * i + 1] = "0123456789abcdef"[p[i] & 15];
    }
    return 2 * n;
}

const char *hy_inet_ntop(int af, const void *src, char *dst, size_t size)
{
    if (af != AF_INET)
        return inet_ntop(af, src, dst, (socklen_t)size);
    const unsigned char *a = src;
    char tmp[16];
    size_t n = 0;
    for (int i = 0; i < 4; i++) {
        unsigned v = a[i];
        if (v >= 100)
            tmp[n++] = (char)('0' + v / 100);
        if (v >= 10)
            tmp[n++] = (char)('0' + v / 10 % 10);
        tmp[n++] = (char)('0' + v % 10);
        tmp[n++] = '.';
    }
    tmp[n - 1] = '\0'; /* the last '.' */
    if (n > size) {
        errno = ENOSPC;
        return NULL;
    }
    memcpy(dst, tmp, n);
    return dst;
}

#define ONES 0x0101010101010101ULL
#define HIGH 0x8080808080808080ULL

/* a word has a byte below n (n <= 0x80; bytes above 0x7f do not count) */
static inline uint64_t has_less(uint64_t x, unsigned n)
{
    return (x - ONES * n) & ~x & HIGH;
}

static inline bool word_visible(uint64_t x)
{
    return !(x & HIGH) && !has_less(x, 0x21) && !has_less(x ^ (ONES * 0x7f), 1);
}

bool hy_mem_visible(const char *p, size_t n)
{
    uint64_t x;
    if (n < 8) {
        for (size_t i = 0; i < n; i++)
            if ((unsigned char)p[i] <= 0x20 || (unsigned char)p[i] >= 0x7f)
                return false;
        return true;
    }
    for (size_t i = 0; i + 8 <= n; i += 8) {
        memcpy(&x, p + i, 8);
        if (!word_visible(x))
            return false;
    }
    memcpy(&x, p + n - 8, 8); /* the tail, overlapping */
    return word_visible(x);
}

static bool bytes_no_ctl(const char *p, size_t n)
{
    for (size_t i = 0; i < n; i++)
        if ((unsigned char)p[i] < 0x20 && p[i] != '\t')
            return false;
    return true;
}

bool hy_mem_no_ctl(const char *p, size_t n)
{
    uint64_t x;
    if (n < 8)
        return bytes_no_ctl(p, n);
    for (size_t i = 0; i + 8 <= n; i += 8) {
        memcpy(&x, p + i, 8);
        if (has_less(x, 0x20) && !bytes_no_ctl(p + i, 8)) /* a control byte, unless it is a tab */
            return false;
    }
    memcpy(&x, p + n - 8, 8);
    return !has_less(x, 0x20) || bytes_no_ctl(p + n - 8, 8);
}

size_t hy_fmt_hex(char *out, uint64_t v)
{
    size_t n = (size_t)(64 - __builtin_clzll(v | 1) + 3) / 4; /* digits: v's significant bits, 1 for 0 */
    for (size_t i = n; i-- > 0; v >>= 4)
        out[i] = "0123456789abcdef"[v & 15];
    return n;
}

uint64_t hy_hash_bytes(const char *p, size_t n)
{
    const uint64_t k = 0x9e3779b97f4a7c15ULL;
    uint64_t h = n * k, w;
    for (; n >= 8; n -= 8, p += 8) {
        memcpy(&w, p, 8);
        h = (h ^ w) * k;
        h ^= h >> 32;
    }
    if (n) {
        w = 0;
        memcpy(&w, p, n);
        h = (h ^ w) * k;
        h ^= h >> 32;
    }
    h *= k;
    return h ^ (h >> 29);
}

uint64_t hy_hash(const char *p, size_t n, bool fold_case)
{
    uint64_t h = 1469598103934665603ull;
    for (size_t i = 0; i < n; i++) {
        unsigned char c = (unsigned char)p[i];
        if (fold_case && c >= 'A' && c <= 'Z')
            c |= 0x20;
        h = (h ^ c) * 1099511628211ull;
    }
    return h;
}
