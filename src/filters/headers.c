/* headers_filter.c — nginx's headers module (add_header, add_trailer, expires), as one header filter.
 *
 * nginx's surprises kept: add_header lists are inherited from the level above only when a level has no
 * add_header at all; without "always" a header is added only for 200, 201, 204, 206, 301, 302, 303, 304, 307
 * and 308; a value that evaluates to "" adds nothing. */
#include <stdio.h>
#include <string.h>
#include <time.h>
#include "headers.h"
#include "../http/vars.h"
#include "../core/httpdate.h"
#include "../core/clock.h"
#include "../core/log.h"

#define HF_IDX (hy_http_headers_module.index)

typedef struct hf_header {
    hy_str_t name;
    hy_complex_t value;
    bool always;
} hf_header_t;

typedef struct hf_conf {
    hy_array_t *headers;   /* hf_header_t; NULL: inherit */
    hy_array_t *trailers;  /* hf_header_t (add_trailer); NULL: inherit */
    int expires;           /* HY_EXPIRES_*, HY_UNSET */
    int64_t expires_time;  /* seconds (DAILY: seconds after midnight) */
    hy_complex_t *expires_cv; /* the time given with variables (nginx 1.7.9+): parsed per request; NULL: fixed */
    bool expires_modified;    /* "expires modified $var" */
} hf_conf_t;

bool hy_headers_status_ok(int status)
{
    switch (status) {
    case 200: case 201: case 204: case 206: case 301: case 302: case 303: case 304: case 307: case 308:
        return true;
    default:
        return false;
    }
}

int hy_headers_parse_expires(hy_str_t *args, size_t n, int *type, int64_t *secs)
{
    size_t i = 0;
    bool modified = false;
    if (n == 2) {
        if (!hy_str_eq(args[0], "modified"))
            return -1;
        modified = true;
        i = 1;
    }
    hy_str_t v = args[i];
    *secs = 0;
    if (hy_str_eq(v, "epoch")) {
        *type = HY_EXPIRES_EPOCH;
        return 0;
    }
    if (hy_str_eq(v, "max")) {
        *type = HY_EXPIRES_MAX;
        return 0;
    }
    if (hy_str_eq(v, "off")) {
        *type = HY_EXPIRES_OFF;
        return 0;
    }
    bool minus = false;
    if (v.len && v.ptr[0] == '@') {
        if (modified)
            return -1;
        int64_t t = hy_parse_sec(v.ptr + 1, v.len - 1);
        if (t < 0 || t >= 86400)
            return -1;
        *type = HY_EXPIRES_DAILY;
        *secs = t;
        return 0;
    }
    if (v.len && (v.ptr[0] == '-' || v.ptr[0] == '+')) {
        minus = v.ptr[0] == '-';
        v.ptr++;
        v.len--;
    }
    int64_t t = hy_parse_sec(v.ptr, v.len);
    if (t < 0)
        return -1;
    *type = modified ? HY_EXPIRES_MODIFIED : HY_EXPIRES_ACCESS;
    *secs = minus ? -t : t;
    return 0;
}

/* the next time of day `secs` after now, local time (nginx's ngx_next_time) */
static int64_t next_daily(int64_t now, int64_t secs)
{
    time_t t = (time_t)now;
    struct tm tm;
    localtime_r(&t, &tm);
    tm.tm_hour = (int)(secs / 3600);
    tm.tm_min = (int)(secs / 60 % 60);
    tm.tm_sec = (int)(secs % 60);
    tm.tm_isdst = -1;
    time_t next = mktime(&tm);
    if (next == (time_t)-1)
        return now;
    if (next <= t) {
        tm.tm_mday++;
        tm.tm_isdst = -1;
        next = mktime(&tm);
    }
    return (int64_t)next;
}

/* nginx's expires replaces what the response has (a proxied Expires or Cache-Control): the first field of that
 * name takes the value in its place, the others go; none: the field is added */
static void set_header(hy_req_t *req, const char *name, hy_str_t value)
{
    hy_header_t *h = req->headers_out ? req->headers_out->elts : NULL;
    size_t n = req->headers_out ? req->headers_out->nelts : 0, o = 0;
    bool set = false;
    for (size_t i = 0; i < n; i++) {
        if (hy_str_caseeq(h[i].name, name)) {
            if (set)
                continue;
            h[i].value = value;
            set = true;
        }
        h[o++] = h[i];
    }
    if (req->headers_out)
        req->headers_out->nelts = o;
    if (!set)
        hy_req_add_header(req, (hy_str_t){(char *)name, strlen(name)}, value);
}

static void add_expires(hy_req_t *req, const hf_conf_t *hc)
{
    hy_str_t exp, cc;
    if (hc->expires == HY_EXPIRES_EPOCH) {
        exp = HY_STR("Thu, 01 Jan 1970 00:00:01 GMT");
        cc = HY_STR("no-cache");
    } else if (hc->expires == HY_EXPIRES_MAX) {
        exp = HY_STR("Thu, 31 Dec 2037 23:55:55 GMT");
        cc = HY_STR("max-age=315360000");
    } else if (hc->expires_time == 0 && hc->expires != HY_EXPIRES_DAILY) {
        char *d = hy_palloc(req->pool, 30);
        memcpy(d, hy_clock_http_date(), 29);
        exp = (hy_str_t){d, 29};
        cc = HY_STR("max-age=0");
    } else {
        int64_t now = hy_clock_time(), when, max_age;
        if (hc->expires == HY_EXPIRES_DAILY) {
            when = next_daily(now, hc->expires_time);
            max_age = when - now;
        } else if (hc->expires == HY_EXPIRES_ACCESS || req->last_modified < 0) {
            max_age = hc->expires_time;
            when = now + hc->expires_time;
        } else {
            when = req->last_modified + hc->expires_time;
            max_age = when - now;
        }
        char *d = hy_palloc(req->pool, 32);
        hy_httpdate_format(when < 0 ? 0 : when, d);
        exp = (hy_str_t){d, 29};
        if (hc->expires_time < 0 || max_age < 0) {
            cc = HY_STR("no-cache");
        } else {
            char *c = hy_palloc(req->pool, 32);
            int l = snprintf(c, 32, "max-age=%lld", (long long)max_age);
            cc = (hy_str_t){c, (size_t)l};
        }
    }
    set_header(req, "Expires", exp);
    set_header(req, "Cache-Control", cc);
}

static void header_filter(hy_req_t *req)
{
    hy_http_loc_conf_t *lc = req->loc ? req->loc : req->srv ? req->srv->loc : NULL;
    if (lc == NULL)
        return;
    const hf_conf_t *hc = lc->loc_conf[HF_IDX];
    if (hc == NULL)
        return;
    bool ok = hy_headers_status_ok(req->status);
    if (ok && hc->expires_cv != NULL) { /* the value is known now: parsed as the directive's would be */
        hy_str_t args[2] = {HY_STR("modified"), HY_STR_NULL};
        hy_vars_eval(req, hc->expires_cv, &args[1]);
        hf_conf_t now = {.expires = HY_EXPIRES_OFF};
        if (args[1].len && (hy_headers_parse_expires(hc->expires_modified ? args : args + 1,
                                                    hc->expires_modified ? 2 : 1, &now.expires,
                                                    &now.expires_time) != 0 ||
                            (hc->expires_modified && now.expires != HY_EXPIRES_MODIFIED))) {
            /* nginx: a value "modified" cannot apply to (epoch, max, off) is an error: no Expires */
            hy_req_log(req, HY_LOG_ERR, "invalid \"expires\" value \"%.*s\"", (int)args[1].len, args[1].ptr);
            now.expires = HY_EXPIRES_OFF;
        }
        if (now.expires > HY_EXPIRES_OFF)
            add_expires(req, &now);
    } else if (ok && hc->expires > HY_EXPIRES_OFF) {
        add_expires(req, hc);
    }
    if (hc->headers) {
        const hf_header_t *h = hc->headers->elts;
        for (size_t i = 0; i < hc->headers->nelts; i++) {
            if (!ok && !h[i].always)
                continue;
            hy_str_t v;
            hy_vars_eval(req, &h[i].value, &v);
            /* nginx's ngx_http_set_last_modified / ngx_http_set_etag: these replace the response's own field
             * (an empty value removes it), so the range and not-modified logic see what is sent */
            if (hy_str_caseeq(h[i].name, "last-modified")) {
                req->last_modified = v.len ? hy_httpdate_parse(v.ptr, v.len) : -1;
                if (v.len && req->last_modified < 0) /* not a date: sent as given */
                    hy_req_add_header(req, h[i].name, v);
                continue;
            }
            if (hy_str_caseeq(h[i].name, "etag")) {
                req->etag = v;
                continue;
            }
            if (v.len)
                hy_req_add_header(req, h[i].name, v);
        }
    }
    /* add_trailer: the main response's trailers are made at its end (make_trailers); the protocol is told now
     * so it frames the body to let them follow */
    if (hc->trailers && req->sr == NULL) {
        const hf_header_t *t = hc->trailers->elts;
        for (size_t i = 0; i < hc->trailers->nelts; i++)
            if (ok || t[i].always) {
                req->expect_trailers = true;
                break;
            }
    }
}

/* hy_http_make_trailers: the add_trailer values, evaluated in order (a later one may read an earlier one through
 * $sent_trailer_*); an empty value adds nothing */
static void make_trailers(hy_req_t *req)
{
    hy_http_loc_conf_t *lc = req->loc ? req->loc : req->srv ? req->srv->loc : NULL;
    const hf_conf_t *hc = lc ? lc->loc_conf[HF_IDX] : NULL;
    if (hc == NULL || hc->trailers == NULL)
        return;
    bool ok = hy_headers_status_ok(req->status);
    const hf_header_t *t = hc->trailers->elts;
    for (size_t i = 0; i < hc->trailers->nelts; i++) {
        if (!ok && !t[i].always)
            continue;
        hy_str_t v;
        hy_vars_eval(req, &t[i].value, &v);
        if (v.len)
            hy_req_add_trailer(req, t[i].name, v);
    }
}

static int postconfiguration(hy_conf_t *cf)
{
    (void)cf;
    hy_http_make_trailers = make_trailers;
    return 0;
}

static void *create_loc(hy_conf_t *cf)
{
    hf_conf_t *c = hy_pcalloc(cf->pool, sizeof(*c));
    c->expires = HY_UNSET;
    return c;
}

static int merge_loc(hy_conf_t *cf, void *parent, void *child)
{
    hf_conf_t *p = parent, *c = child;
    if (c->headers == NULL)
        c->headers = p->headers;
    if (c->trailers == NULL)
        c->trailers = p->trailers;
    if (c->expires == HY_UNSET) {
        c->expires = p->expires == HY_UNSET ? HY_EXPIRES_OFF : p->expires;
        c->expires_time = p->expires_time;
        c->expires_cv = p->expires_cv;
        c->expires_modified = p->expires_modified;
    }
    return 0;
}

/* add_header and add_trailer: name value [always] */
static int set_add_header(hy_conf_t *cf, const hy_directive_t *d, void *conf)
{
    hf_conf_t *hc = conf;
    size_t n;
    hy_str_t *a = hy_conf_args(cf, &n);
    if (n == 4 && !hy_str_eq(a[3], "always"))
        return hy_conf_error(cf, "invalid parameter \"%s\"", a[3].ptr);
    hy_array_t **list = hy_str_eq(a[0], "add_trailer") ? &hc->trailers : &hc->headers;
    if (*list == NULL)
        *list = hy_array_create(cf->pool, 2, sizeof(hf_header_t));
    hf_header_t *h = hy_array_push(*list);
    h->name = hy_str_dup(cf->pool, a[1]);
    h->always = n == 4;
    return hy_vars_compile(cf, a[2], &h->value);
}

static int set_expires(hy_conf_t *cf, const hy_directive_t *d, void *conf)
{
    hf_conf_t *hc = conf;
    size_t n;
    hy_str_t *a = hy_conf_args(cf, &n);
    if (hc->expires != HY_UNSET)
        return hy_conf_error(cf, "\"expires\" directive is duplicate");
    int type;
    int64_t secs;
    if (memchr(a[n - 1].ptr, '$', a[n - 1].len) != NULL) { /* variables: parsed per request */
        if (n == 3 && !hy_str_eq(a[1], "modified"))
            return hy_conf_error(cf, "\"expires\" directive invalid value");
        hc->expires_cv = hy_pcalloc(cf->pool, sizeof(*hc->expires_cv));
        hc->expires_modified = n == 3;
        hc->expires = HY_EXPIRES_ACCESS; /* set (the kind is the value's) */
        return hy_vars_compile(cf, a[n - 1], hc->expires_cv);
    }
    if (hy_headers_parse_expires(a + 1, n - 1, &type, &secs) != 0) {
        /* nginx's words: the directive's name, then what its handler returned */
        if (n == 2 && a[1].len > 1 && a[1].ptr[0] == '@' && hy_parse_sec(a[1].ptr + 1, a[1].len - 1) >= 86400)
            return hy_conf_error(cf, "\"expires\" directive daily time value must be less than 24 hours");
        return hy_conf_error(cf, "\"expires\" directive invalid value");
    }
    hc->expires = type;
    hc->expires_time = secs;
    return 0;
}

#define HF_CTX (HY_CTX_HTTP_ANY | HY_CTX_LIF)
#define HF(field) .conf = HY_CONF_LOC, .offset = offsetof(hf_conf_t, field)

static const hy_directive_t headers_directives[] = {
    {.name = "add_header", .ctx = HF_CTX, .args = HY_ARGS_2 | HY_ARGS_3, .set = set_add_header, HF(headers)},
    {.name = "add_trailer", .ctx = HF_CTX, .args = HY_ARGS_2 | HY_ARGS_3, .set = set_add_header, HF(trailers)},
    {.name = "expires", .ctx = HF_CTX, .args = HY_ARGS_12, .set = set_expires, HF(expires)},
    {0},
};

hy_module_t hy_http_headers_module = {
    .name = "http_headers",
    .directives = headers_directives,
    .create_loc_conf = create_loc,
    .merge_loc_conf = merge_loc,
    .postconfiguration = postconfiguration,
    .header_filter = header_filter,
};
