/* range.c — Range header parsing (nginx-compatible results), If-Range, multipart/byteranges framing. */
#include "range.h"

#include <inttypes.h>
#include <stdio.h>
#include <string.h>
#include <strings.h>
#include "../core/httpdate.h"

static bool is_ows(char c)
{
    return c == ' ' || c == '\t';
}

static bool is_digit(char c)
{
    return c >= '0' && c <= '9';
}

static const char *skip_sp(const char *p, const char *e)
{
    while (p < e && *p == ' ')
        p++;
    return p;
}

/* Decimal digits at *pp (at least one) into *v; false on overflow past INT64_MAX. */
static bool parse_num(const char **pp, const char *e, int64_t *v)
{
    const char *p = *pp;
    int64_t n = 0;
    while (p < e && is_digit(*p)) {
        int d = *p - '0';
        if (n > (INT64_MAX - d) / 10)
            return false;
        n = n * 10 + d;
        p++;
    }
    *pp = p;
    *v = n;
    return true;
}

int hy_range_parse(const char *value, size_t len, int64_t size, hy_range_t *out, int max)
{
    const char *p = value, *e = value + len;
    while (p < e && is_ows(*p))
        p++;
    while (e > p && is_ows(e[-1]))
        e--;
    if (e - p < 7 || strncasecmp(p, "bytes=", 6) != 0 || max <= 0 || size < 0)
        return 0;
    p += 6;

    int n = 0;
    int64_t total = 0;
    for (;;) {
        int64_t start = 0, end; /* end is exclusive once computed */
        p = skip_sp(p, e);
        if (p < e && *p == '-') {
            /* suffix range "-N": the last N bytes */
            p++;
            int64_t len_suffix;
            if (p >= e || !is_digit(*p) || !parse_num(&p, e, &len_suffix))
                return HY_RANGE_NOT_SATISFIABLE;
            p = skip_sp(p, e);
            if (p < e && *p != ',')
                return HY_RANGE_NOT_SATISFIABLE;
            start = len_suffix < size ? size - len_suffix : 0;
            end = size;
        } else {
            if (p >= e || !is_digit(*p) || !parse_num(&p, e, &start))
                return HY_RANGE_NOT_SATISFIABLE;
            p = skip_sp(p, e);
            if (p >= e || *p != '-')
                return HY_RANGE_NOT_SATISFIABLE;
            p = skip_sp(p + 1, e);
            if (p >= e || *p == ',') {
                end = size; /* "N-": to the end */
            } else {
                int64_t last;
                if (!is_digit(*p) || !parse_num(&p, e, &last))
                    return HY_RANGE_NOT_SATISFIABLE;
                p = skip_sp(p, e);
                if (p < e && *p != ',')
                    return HY_RANGE_NOT_SATISFIABLE;
                end = last >= size ? size : last + 1;
            }
        }

        if (start < end) {
            if (n == max)
                return 0; /* too many ranges: nginx serves the whole representation */
            out[n].start = start;
            out[n].end = end - 1;
            n++;
            total += end - start;
            if (total > size)
                total = size + 1; /* saturate: only "> size" matters */
        } else if (start == 0) {
            return 0; /* empty representation: nginx ignores the header */
        }

        if (p >= e)
            break;
        p++; /* ',' */
    }

    if (n == 0)
        return HY_RANGE_NOT_SATISFIABLE;
    if (total > size)
        return 0; /* ranges add up to more than the file: cheaper to send it whole (nginx) */
    return n;
}

int hy_range_count(const char *value, size_t len)
{
    int n = 1;
    for (size_t i = 0; i < len && n < INT32_MAX; i++)
        n += value[i] == ',';
    return n;
}

static size_t emit(char *out, size_t cap, int n)
{
    if (n < 0)
        return 0;
    if ((size_t)n >= cap && cap > 0)
        out[0] = '\0';
    return (size_t)n;
}

size_t hy_range_part_header(char *out, size_t cap, const char *boundary, hy_str_t type, const hy_range_t *r,
                            int64_t size)
{
    int n;
    if (type.len > 0)
        n = snprintf(out, cap,
                     "\r\n--%s\r\nContent-Type: %.*s\r\nContent-Range: bytes %" PRId64 "-%" PRId64 "/%" PRId64
                     "\r\n\r\n",
                     boundary, (int)type.len, type.ptr, r->start, r->end, size);
    else
        n = snprintf(out, cap, "\r\n--%s\r\nContent-Range: bytes %" PRId64 "-%" PRId64 "/%" PRId64 "\r\n\r\n",
                     boundary, r->start, r->end, size);
    return emit(out, cap, n);
}

size_t hy_range_multipart_end(char *out, size_t cap, const char *boundary)
{
    return emit(out, cap, snprintf(out, cap, "\r\n--%s--\r\n", boundary));
}

size_t hy_range_content_range(char *out, size_t cap, const hy_range_t *r, int64_t size)
{
    return emit(out, cap, snprintf(out, cap, "bytes %" PRId64 "-%" PRId64 "/%" PRId64, r->start, r->end, size));
}

static int64_t decimal_len(int64_t v)
{
    int64_t n = 1;
    while (v >= 10) {
        v /= 10;
        n++;
    }
    return n;
}

int64_t hy_range_multipart_length(const hy_range_t *r, int n, const char *boundary, hy_str_t type, int64_t size)
{
    int64_t blen = (int64_t)strlen(boundary);
    /* "\r\n--" B "\r\n" ["Content-Type: " T "\r\n"] "Content-Range: bytes " S "-" E "/" SIZE "\r\n\r\n" */
    int64_t fixed = 4 + blen + 2 + (type.len > 0 ? 14 + (int64_t)type.len + 2 : 0) + 21 + 1 + 1 +
                    decimal_len(size) + 4;
    int64_t total = 0;
    for (int i = 0; i < n; i++)
        total += fixed + decimal_len(r[i].start) + decimal_len(r[i].end) + (r[i].end - r[i].start + 1);
    return total + 4 + blen + 4; /* "\r\n--" B "--\r\n" */
}

bool hy_range_if_range_ok(const char *value, size_t len, hy_str_t etag, int64_t last_modified)
{
    if (value == NULL)
        return false;
    const char *p = value, *e = value + len;
    while (p < e && is_ows(*p))
        p++;
    while (e > p && is_ows(e[-1]))
        e--;
    size_t n = (size_t)(e - p);
    if (n == 0)
        return false;
    if (p[n - 1] == '"' || (n >= 2 && p[0] == 'W' && p[1] == '/')) {
        /* entity-tag: strong comparison only */
        if (n < 2 || p[0] != '"')
            return false;
        if (etag.len < 2 || etag.ptr[0] != '"')
            return false;
        return etag.len == n && memcmp(etag.ptr, p, n) == 0;
    }
    if (last_modified < 0)
        return false;
    int64_t t = hy_httpdate_parse(p, n);
    return t >= 0 && t == last_modified;
}
