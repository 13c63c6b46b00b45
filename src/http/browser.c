/* browser.c — nginx's browser module (see browser.h). */
#include <stdlib.h>
#include <string.h>
#include "browser.h"
#include "core.h"
#include "msie.h"
#include "vars.h"

/* nginx's ngx_http_modern_browser_masks: the name in modern_browser, how far into the UA the mark may start, the
 * mark, and where the version starts after it */
static const struct {
    const char *name;
    size_t skip;
    const char *mark;
    size_t add;
} masks[] = {
    {"opera", 0, "Opera", sizeof("Opera ") - 1},
    {"msie", sizeof("Mozilla/4.0 (compatible; ") - 1, "MSIE ", sizeof("MSIE ") - 1},
    {"gecko", sizeof("Mozilla/5.0 (") - 1, "rv:", sizeof("rv:") - 1},
    {"safari", sizeof("Mozilla/5.0 (") - 1, "Safari/", sizeof("Safari/") - 1},
    {"konqueror", sizeof("Mozilla/5.0 (compatible; ") - 1, "Konqueror/", sizeof("Konqueror/") - 1},
};

#define OPERA_UNREACHABLE 4001000000u

static const hy_str_t one = {(char *)"1", 1};

int hy_browser_mask(hy_str_t name)
{
    for (size_t i = 0; i < sizeof(masks) / sizeof(masks[0]); i++)
        if (strlen(masks[i].name) == name.len && hy_mem_caseeq(name.ptr, masks[i].name, name.len))
            return (int)i;
    return -1;
}

/* nginx's version arithmetic: digits and dots from p, each part after the first scaled by 1/100 of the one before.
 * Stops at end, at any other byte, or as soon as a completed part puts the sum above `above` (nginx's early
 * "modern"). *out is the sum; returns where it stopped. */
static const char *scan_version(const char *p, const char *end, uint64_t above, uint64_t *out)
{
    uint64_t version = 0, ver = 0, scale = 1000000;
    for (; p < end; p++) {
        if (*p >= '0' && *p <= '9') {
            ver = ver * 10 + (uint64_t)(*p - '0');
        } else if (*p == '.') {
            version += ver * scale;
            if (version > above) {
                *out = version;
                return p;
            }
            ver = 0;
            scale /= 100;
        } else {
            break;
        }
    }
    *out = version + ver * scale;
    return p;
}

bool hy_browser_parse_version(hy_str_t s, uint64_t *out)
{
    return scan_version(s.ptr, s.ptr + s.len, UINT64_MAX, out) == s.ptr + s.len;
}

/* the version after the mark against the listed one */
static int by_version(const char *p, const char *last, uint64_t want)
{
    uint64_t version;
    scan_version(p, last, want, &version);
    return version >= want ? HY_BROWSER_MODERN : HY_BROWSER_ANCIENT;
}

int hy_browser_classify(const hy_browser_conf_t *c, const hy_str_t *ua)
{
    int unlisted = c->modern_unlisted ? HY_BROWSER_MODERN : HY_BROWSER_ANCIENT;
    if (ua == NULL)
        return unlisted;
    const char *last = ua->ptr + ua->len;
    if (c->modern != NULL) {
        const hy_browser_modern_t *m = c->modern->elts;
        for (size_t i = 0; i < c->modern->nelts; i++) {
            const char *name = ua->ptr + masks[m[i].mask].skip;
            if (name >= last)
                continue;
            name = memmem(name, (size_t)(last - name), masks[m[i].mask].mark, strlen(masks[m[i].mask].mark));
            if (name == NULL)
                continue;
            name += masks[m[i].mask].add;
            if (name >= last)
                continue;
            return by_version(name, last, m[i].version);
        }
        if (!c->modern_unlisted)
            return HY_BROWSER_ANCIENT;
    }
    if (c->netscape4 && ua->len > sizeof("Mozilla/4.72 ") - 1 && memcmp(ua->ptr, "Mozilla/", 8) == 0 &&
        ua->ptr[8] > '0' && ua->ptr[8] < '5')
        return HY_BROWSER_ANCIENT;
    if (c->ancient != NULL) {
        const hy_str_t *a = c->ancient->elts;
        for (size_t i = 0; i < c->ancient->nelts; i++)
            if (ua->len >= a[i].len && memmem(ua->ptr, ua->len, a[i].ptr, a[i].len) != NULL)
                return HY_BROWSER_ANCIENT;
    }
    return unlisted;
}

/* ---------------------------------------------------------------- directives */

static int set_modern(hy_conf_t *cf, const hy_directive_t *d, void *conf)
{
    (void)d;
    hy_browser_conf_t *bc = conf;
    size_t n;
    hy_str_t *a = hy_conf_args(cf, &n);
    if (n == 2) {
        if (!hy_str_eq(a[1], "unlisted"))
            return hy_conf_error(cf, "invalid value \"%s\" in \"modern_browser\" directive", a[1].ptr);
        bc->modern_unlisted = true;
        return 0;
    }
    int mask = hy_browser_mask(a[1]);
    if (mask < 0)
        return hy_conf_error(cf, "unknown browser name \"%s\"", a[1].ptr);
    uint64_t v;
    if (!hy_browser_parse_version(a[2], &v))
        return hy_conf_error(cf, "invalid browser version \"%s\"", a[2].ptr);
    if (bc->modern == NULL)
        bc->modern = hy_array_create(cf->pool, 5, sizeof(hy_browser_modern_t));
    *(hy_browser_modern_t *)hy_array_push(bc->modern) = (hy_browser_modern_t){v, (unsigned)mask};
    return 0;
}

static int set_ancient(hy_conf_t *cf, const hy_directive_t *d, void *conf)
{
    (void)d;
    hy_browser_conf_t *bc = conf;
    size_t n;
    hy_str_t *a = hy_conf_args(cf, &n);
    for (size_t i = 1; i < n; i++) {
        if (hy_str_eq(a[i], "netscape4")) {
            bc->netscape4 = true;
            continue;
        }
        if (bc->ancient == NULL)
            bc->ancient = hy_array_create(cf->pool, 4, sizeof(hy_str_t));
        *(hy_str_t *)hy_array_push(bc->ancient) = hy_str_dup(cf->pool, a[i]);
    }
    return 0;
}

static int set_value(hy_conf_t *cf, const hy_directive_t *d, void *conf)
{
    size_t n;
    hy_str_t *a = hy_conf_args(cf, &n);
    hy_str_t *v = hy_palloc(cf->pool, sizeof(*v));
    *v = hy_str_dup(cf->pool, a[1]);
    *(const hy_str_t **)((char *)conf + d->offset) = v; /* a second one replaces the first, as nginx */
    return 0;
}

static const hy_directive_t browser_directives[] = {
    {.name = "modern_browser", .ctx = HY_CTX_HTTP_ANY, .args = HY_ARGS_12, .set = set_modern, .conf = HY_CONF_LOC},
    {.name = "ancient_browser", .ctx = HY_CTX_HTTP_ANY, .args = HY_ARGS_1MORE, .set = set_ancient, .conf = HY_CONF_LOC},
    {.name = "modern_browser_value",
     .ctx = HY_CTX_HTTP_ANY,
     .args = HY_ARGS_1,
     .set = set_value,
     .conf = HY_CONF_LOC,
     .offset = offsetof(hy_browser_conf_t, modern_value)},
    {.name = "ancient_browser_value",
     .ctx = HY_CTX_HTTP_ANY,
     .args = HY_ARGS_1,
     .set = set_value,
     .conf = HY_CONF_LOC,
     .offset = offsetof(hy_browser_conf_t, ancient_value)},
    {0},
};

static void *create_loc(hy_conf_t *cf)
{
    return hy_pcalloc(cf->pool, sizeof(hy_browser_conf_t));
}

static int by_mask(const void *a, const void *b)
{
    const hy_browser_modern_t *x = a, *y = b;
    return (x->mask > y->mask) - (x->mask < y->mask);
}

/* the list in its final form: an Opera not listed added (Opera may say MSIE: it is checked first and is never modern
 * then), sorted by the table's order. Done for the parent too: nginx never merges the http level's own list as a
 * child, so it would stay unsorted there. */
static void finish(hy_browser_conf_t *c)
{
    if (c->modern == NULL || c->sorted)
        return;
    hy_browser_modern_t *m = c->modern->elts;
    bool opera = false;
    for (size_t i = 0; i < c->modern->nelts; i++)
        opera |= m[i].mask == 0;
    if (!opera)
        *(hy_browser_modern_t *)hy_array_push(c->modern) = (hy_browser_modern_t){OPERA_UNREACHABLE, 0};
    qsort(c->modern->elts, c->modern->nelts, sizeof(hy_browser_modern_t), by_mask);
    c->sorted = true;
}

static int merge_loc(hy_conf_t *cf, void *parent, void *child)
{
    (void)cf;
    hy_browser_conf_t *p = parent, *c = child;
    finish(p);
    finish(c);
    if (c->modern == NULL && !c->modern_unlisted) {
        c->modern = p->modern;
        c->modern_unlisted = p->modern_unlisted;
        c->sorted = p->sorted;
    }
    if (c->ancient == NULL && !c->netscape4) {
        c->ancient = p->ancient;
        c->netscape4 = p->netscape4;
    }
    if (c->modern_value == NULL)
        c->modern_value = p->modern_value ? p->modern_value : &one;
    if (c->ancient_value == NULL)
        c->ancient_value = p->ancient_value ? p->ancient_value : &one;
    return 0;
}

/* ---------------------------------------------------------------- variables */

static void get_browser(hy_req_t *req, hy_var_value_t *v, uintptr_t data)
{
    const hy_http_loc_conf_t *lc = req->loc ? req->loc : req->srv ? req->srv->loc : NULL;
    const hy_browser_conf_t *c = lc ? lc->loc_conf[hy_http_browser_module.index] : NULL;
    v->ptr = "", v->len = 0, v->not_found = false;
    if (c == NULL || hy_browser_classify(c, req->h_user_agent) != (int)data)
        return;
    const hy_str_t *val = data == HY_BROWSER_MODERN ? c->modern_value : c->ancient_value;
    v->ptr = val->ptr, v->len = val->len;
}

static void get_msie(hy_req_t *req, hy_var_value_t *v, uintptr_t data)
{
    (void)data;
    bool msie = hy_http_ua_msie(req->h_user_agent);
    v->ptr = msie ? "1" : "", v->len = msie, v->not_found = false;
}

static int postconfiguration(hy_conf_t *cf)
{
    /* nginx's three are changeable: a map or set that defines one is the one read */
    static const struct {
        const char *name;
        hy_var_get_fn get;
        uintptr_t data;
    } vars[] = {{"msie", get_msie, 0},
                {"modern_browser", get_browser, HY_BROWSER_MODERN},
                {"ancient_browser", get_browser, HY_BROWSER_ANCIENT}};
    for (size_t i = 0; i < sizeof(vars) / sizeof(vars[0]); i++) {
        hy_str_t name = {(char *)vars[i].name, strlen(vars[i].name)};
        if (!hy_vars_is_defined(cf, name) && hy_vars_define(cf, name, vars[i].get, vars[i].data, 0) < 0)
            return -1;
    }
    return 0;
}

hy_module_t hy_http_browser_module = {
    .name = "http_browser",
    .directives = browser_directives,
    .create_loc_conf = create_loc,
    .merge_loc_conf = merge_loc,
    .postconfiguration = postconfiguration,
};
