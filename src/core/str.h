/* str.h — counted strings and range-checked parsers for config values and protocol fields. */
#ifndef HY_CORE_STR_H
#define HY_CORE_STR_H

#include <stddef.h>
#include <stdint.h>
#include <stdbool.h>
#include <sys/types.h>
#include "types.h"

typedef struct hy_str {
    char *ptr; /* not necessarily NUL-terminated; owner depends on context */
    size_t len;
} hy_str_t;

#define HY_STR(lit) ((hy_str_t){(char *)(lit), sizeof(lit) - 1})
#define HY_STR_NULL ((hy_str_t){NULL, 0})

/** ASCII-case-insensitive equality of n bytes (letters only fold: '@' and '`' differ). */
bool hy_mem_caseeq(const char *a, const char *b, size_t n);
/** Exact / ASCII-case-insensitive equality with a C string literal or another hy_str_t. The literal forms are
 * inline so that a literal's length is a constant and a length mismatch (most header-name tests) costs one
 * comparison. */
static inline bool hy_str_eq(hy_str_t a, const char *lit)
{
    size_t n = __builtin_strlen(lit);
    return a.len == n && (n == 0 || __builtin_memcmp(a.ptr, lit, n) == 0);
}
static inline bool hy_str_caseeq(hy_str_t a, const char *lit)
{
    size_t n = __builtin_strlen(lit);
    return a.len == n && hy_mem_caseeq(a.ptr, lit, n);
}
bool hy_str_eq_str(hy_str_t a, hy_str_t b);
bool hy_str_caseeq_str(hy_str_t a, hy_str_t b);
/** Lower-case ASCII in place. */
void hy_str_lower(char *p, size_t n);
/** dst[0..n) = src[0..n) with A-Z lowered (bytes above 0x7f unchanged); eight bytes at a time. dst and src are the
 * same buffer or do not overlap. */
void hy_lower_copy(char *dst, const char *src, size_t n);
/** Copy into the pool, NUL-terminated. */
hy_str_t hy_str_dup(hy_pool_t *p, hy_str_t s);

/** Decimal integer >= 0 (no sign, no spaces); -1 on error or overflow past INT64_MAX. */
int64_t hy_parse_int(const char *p, size_t n);
/** nginx size: "1024", "16k"/"16K", "1m"/"1M", "1g"; -1 on error. */
int64_t hy_parse_size(const char *p, size_t n);
/** nginx offset (size with g) — same as hy_parse_size. */
/** nginx time in milliseconds: "500ms", "30", "30s", "5m", "1h", "1d", "1w", "1M", "1y", combos "1h 30m"; bare
 * number means seconds. -1 on error. */
int64_t hy_parse_msec(const char *p, size_t n);
/** Same as hy_parse_msec but result in seconds (bare number = seconds; "ms" not allowed). -1 on error. */
int64_t hy_parse_sec(const char *p, size_t n);

/** FNV-1a over n bytes; fold_case hashes ASCII letters as lower case (for case-insensitive tables). */
uint64_t hy_hash(const char *p, size_t n, bool fold_case);
/** A hash of n bytes eight at a time, for long exact keys (paths): not FNV, so it differs from hy_hash. */
uint64_t hy_hash_bytes(const char *p, size_t n);
/** Write v in decimal / lower-case hex at out (no NUL); returns the length (at most 20 / 16). For hot paths
 * where snprintf's format parsing shows in profiles. */
/** Whether p[0..n) holds no byte <= 0x20, no DEL and none above 0x7f (a field name's bytes as upstream codecs accept
 * them); eight bytes at a time. */
bool hy_mem_visible(const char *p, size_t n);
/** Whether p[0..n) holds no control byte (< 0x20) other than HTAB (a field value's bytes); eight bytes at a time. */
bool hy_mem_no_ctl(const char *p, size_t n);
size_t hy_fmt_u64(char *out, uint64_t v);
size_t hy_fmt_hex(char *out, uint64_t v);
/** inet_ntop's contract (dst NUL-terminated, NULL with ENOSPC when size is too small, EAFNOSUPPORT for another
 *  family), with AF_INET formatted here: glibc's goes through sprintf, ~1,700 instructions for a dotted quad,
 *  paid twice per FastCGI request ($remote_addr at accept, $server_addr). AF_INET6 is glibc's. */
const char *hy_inet_ntop(int af, const void *src, char *dst, size_t size);
/** n bytes as 2n lower-case hex digits at out (no NUL), as nginx's ngx_hex_dump; returns 2n. */
size_t hy_hex_dump(char *out, const unsigned char *p, size_t n);
/** The value of one hex digit (0-9, a-f, A-F), or -1 for any other byte. */
static inline int hy_hex_digit(int c)
{
    if (c >= '0' && c <= '9')
        return c - '0';
    c |= 0x20;
    return c >= 'a' && c <= 'f' ? c - 'a' + 10 : -1;
}

#endif
