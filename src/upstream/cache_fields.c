/* cache_fields.c — what the response cache reads in header fields (see cache.h): how long an upstream response may
 * be kept (X-Accel-Expires, Cache-Control with its stale-* extensions, Expires, *_cache_valid; Set-Cookie and
 * "Vary: *" forbid it) and the normalized Vary names and request values that select a variant. */
#include <string.h>
#include "cache.h"
#include "../core/clock.h"
#include "../core/httpdate.h"

/* A delta-seconds value: a number too large for us is "very long" (nginx caches on max-age overflow). */
static int64_t delta(const char *p, size_t n)
{
    size_t k = 0;
    while (k < n && p[k] >= '0' && p[k] <= '9')
        k++;
    if (k == 0)
        return 0;
    int64_t v = hy_parse_int(p, k);
    return v < 0 || v > (int64_t)1 << 31 ? (int64_t)1 << 31 : v;
}

/* Until when (unix seconds) the response may be kept, from its fields (X-Accel-Expires, Cache-Control, Expires
 * unless ignored) or *_cache_valid; 0: not to be stored; -1 (fields_only) when no field says. A past time from
 * "X-Accel-Expires: @t" is kept (stored, and expired at once, as nginx). */
int64_t hy_ucache__validity(hy_ureq_t *u, int status, bool fields_only, bool *uncacheable, hy_ucache_stale_t *ext)
{
    int64_t swr_sec = 0, sie_sec = 0;
    int ign = u->cache_conf->ignore_headers;
    int64_t now = hy_clock_time();
    int64_t xa = -1, cc = -1, ex = -1;
    bool no = false;
    hy_header_t *h = u->headers_in ? u->headers_in->elts : NULL;
    for (size_t i = 0; h && i < u->headers_in->nelts; i++) {
        hy_str_t nm = h[i].name, v = h[i].value;
        if (hy_str_caseeq(nm, "X-Accel-Expires") && !(ign & HY_UIGN_XA_EXPIRES)) {
            if (xa >= 0)
                continue; /* the first one counts */
            if (v.len && v.ptr[0] == '@')
                xa = delta(v.ptr + 1, v.len - 1);
            else
                xa = (v.len && v.ptr[0] >= '0' && v.ptr[0] <= '9' && delta(v.ptr, v.len) > 0) ? now + delta(v.ptr, v.len)
                                                                                             : 0;
        } else if (hy_str_caseeq(nm, "Cache-Control") && !(ign & HY_UIGN_CACHE_CONTROL)) {
            const char *p = v.ptr, *e = v.ptr + v.len;
            while (p < e) {
                while (p < e && (*p == ' ' || *p == ','))
                    p++;
                const char *s = p;
                while (p < e && *p != ',')
                    p++;
                size_t n = (size_t)(p - s);
                while (n && s[n - 1] == ' ')
                    n--;
                if ((n == 8 && hy_mem_caseeq(s, "no-cache", 8)) || (n == 8 && hy_mem_caseeq(s, "no-store", 8)) ||
                    (n == 7 && hy_mem_caseeq(s, "private", 7)))
                    no = true;
                else if (n > 9 && hy_mem_caseeq(s, "s-maxage=", 9))
                    cc = delta(s + 9, n - 9);
                else if (n > 8 && hy_mem_caseeq(s, "max-age=", 8) && cc < 0)
                    cc = delta(s + 8, n - 8);
                else if (n > 23 && hy_mem_caseeq(s, "stale-while-revalidate=", 23))
                    swr_sec = delta(s + 23, n - 23);
                else if (n > 15 && hy_mem_caseeq(s, "stale-if-error=", 15))
                    sie_sec = delta(s + 15, n - 15);
            }
        } else if (hy_str_caseeq(nm, "Expires") && !(ign & HY_UIGN_EXPIRES) && ex < 0) {
            int64_t t = hy_httpdate_parse(v.ptr, v.len);
            ex = t > now ? t : 0;
        } else if (hy_str_caseeq(nm, "Set-Cookie") && !(ign & HY_UIGN_SET_COOKIE)) {
            *uncacheable = true;
        } else if (hy_str_caseeq(nm, "Vary") && !(ign & HY_UIGN_VARY) && v.len == 1 && v.ptr[0] == '*') {
            *uncacheable = true;
        }
    }
    if (ext != NULL)
        *ext = (hy_ucache_stale_t){swr_sec, sie_sec};
    if (xa >= 0)
        return xa;
    if (no) {
        *uncacheable = true;
        return 0;
    }
    if (cc >= 0)
        return cc > 0 ? now + cc : 0;
    if (ex >= 0)
        return ex;
    if (fields_only)
        return -1;
    const hy_array_t *va = u->cache_conf->valid;
    if (va == NULL)
        return 0;
    const hy_ucache_valid_t *e = va->elts;
    for (size_t i = 0; i < va->nelts; i++)
        if (e[i].status == status)
            return e[i].sec > 0 ? now + e[i].sec : 0;
    for (size_t i = 0; i < va->nelts; i++)
        if (e[i].status == 0)
            return e[i].sec > 0 ? now + e[i].sec : 0;
    return 0;
}

/* Append the comma-separated elements of v to *o, trimmed, empties dropped (nginx's whitespace normalization);
 * lower: in lower case (field names). */
static void elements(char **o, bool *first, hy_str_t v, bool lower)
{
    const char *p = v.ptr, *e = v.ptr + v.len;
    while (p < e) {
        while (p < e && (*p == ' ' || *p == '\t' || *p == ','))
            p++;
        const char *s = p;
        while (p < e && *p != ',')
            p++;
        const char *t = p;
        while (t > s && (t[-1] == ' ' || t[-1] == '\t'))
            t--;
        if (t == s)
            continue;
        if (!*first)
            *(*o)++ = ',';
        *first = false;
        for (const char *c = s; c < t; c++)
            *(*o)++ = lower && *c >= 'A' && *c <= 'Z' ? (char)(*c | 0x20) : *c;
    }
}

/* The normalized Vary names (lower case, ',' between) of the response's Vary fields. */
hy_str_t hy_ucache__vary_names(hy_ureq_t *u)
{
    size_t cap = 1;
    hy_header_t *h = u->headers_in->elts;
    for (size_t i = 0; i < u->headers_in->nelts; i++)
        if (hy_str_caseeq(h[i].name, "Vary"))
            cap += h[i].value.len + 1;
    char *buf = hy_palloc(u->req->pool, cap), *o = buf;
    bool first = true;
    for (size_t i = 0; i < u->headers_in->nelts; i++)
        if (hy_str_caseeq(h[i].name, "Vary"))
            elements(&o, &first, h[i].value, true);
    return (hy_str_t){buf, (size_t)(o - buf)};
}

/* "names\n" then the request's values of those fields (normalized; repeated fields joined), one a line */
hy_str_t hy_ucache__vary_values(hy_req_t *req, hy_str_t names)
{
    size_t cap = names.len + 2;
    for (size_t i = 0; i < req->num_headers; i++)
        cap += req->headers[i].value.len + 2;
    char *buf = hy_palloc(req->pool, cap), *o = buf;
    memcpy(o, names.ptr, names.len);
    o += names.len;
    *o++ = '\n';
    const char *p = names.ptr, *e = names.ptr + names.len;
    while (p < e) {
        const char *s = p;
        while (p < e && *p != ',')
            p++;
        hy_str_t nm = {(char *)s, (size_t)(p - s)};
        if (p < e)
            p++;
        bool first = true;
        for (size_t i = 0; i < req->num_headers; i++)
            if (hy_str_caseeq_str(req->headers[i].name, nm))
                elements(&o, &first, req->headers[i].value, false);
        *o++ = '\n';
    }
    return (hy_str_t){buf, (size_t)(o - buf)};
}

