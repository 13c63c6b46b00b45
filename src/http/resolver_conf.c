/* resolver_conf.c — resolver and resolver_timeout (see resolver_conf.h). */
#include <string.h>
#include "resolver_conf.h"
#include "../core/str.h"

typedef struct res_main {
    hy_http_resolver_conf_t http; /* the http{} level's own values (NULL / -1 when not given there) */
} res_main_t;

static int on_off(hy_str_t v, bool *out)
{
    if (hy_str_eq(v, "on"))
        *out = true;
    else if (hy_str_eq(v, "off"))
        *out = false;
    else
        return -1;
    return 0;
}

static void release(void *arg)
{
    hy_resolver_release(arg);
}

hy_resolver_t *hy_http_resolver_parse(hy_conf_t *cf)
{
    size_t n;
    hy_str_t *a = hy_conf_args(cf, &n);
    hy_resolver_t *r = hy_pcalloc(cf->pool, sizeof(*r));
    r->valid_ms = -1;
    r->ipv4 = r->ipv6 = true;
    for (size_t i = 1; i < n; i++) {
        hy_str_t v = a[i];
        if (v.len > 6 && memcmp(v.ptr, "valid=", 6) == 0) {
            int64_t s = hy_parse_sec(v.ptr + 6, v.len - 6);
            if (s < 0) {
                hy_conf_error(cf, "invalid parameter: %s", v.ptr);
                return NULL;
            }
            r->valid_ms = s * 1000;
        } else if (v.len >= 5 && memcmp(v.ptr, "ipv4=", 5) == 0) {
            if (on_off((hy_str_t){v.ptr + 5, v.len - 5}, &r->ipv4) != 0) {
                hy_conf_error(cf, "invalid parameter: %s", v.ptr);
                return NULL;
            }
        } else if (v.len >= 5 && memcmp(v.ptr, "ipv6=", 5) == 0) {
            if (on_off((hy_str_t){v.ptr + 5, v.len - 5}, &r->ipv6) != 0) {
                hy_conf_error(cf, "invalid parameter: %s", v.ptr);
                return NULL;
            }
        } else if (v.len > 12 && memcmp(v.ptr, "status_zone=", 12) == 0) {
            /* accepted: the zone's statistics are nginx Plus's API */
        } else {
            const char *why;
            if (hy_resolver_add_server(r, v.ptr, v.len, &why) != 0) {
                hy_conf_error(cf, "%s in resolver \"%s\"", why, v.ptr);
                return NULL;
            }
        }
    }
    if (!r->ipv4 && !r->ipv6) {
        hy_conf_error(cf, "\"ipv4\" and \"ipv6\" cannot both be \"off\"");
        return NULL;
    }
    if (r->nservers == 0) {
        hy_conf_error(cf, "no name servers defined");
        return NULL;
    }
    hy_pool_on_clear(cf->pool, release, r); /* the worker's state goes with the generation */
    return r;
}

int64_t hy_http_resolver_timeout_parse(hy_conf_t *cf)
{
    size_t n;
    hy_str_t *a = hy_conf_args(cf, &n);
    int64_t ms = hy_parse_msec(a[1].ptr, a[1].len);
    if (ms < 0)
        hy_conf_error(cf, "\"%s\" directive invalid value", a[0].ptr); /* nginx's msec slot */
    return ms;
}

static int set_resolver(hy_conf_t *cf, const hy_directive_t *d, void *conf)
{
    (void)d;
    hy_http_resolver_conf_t *c = conf;
    if (c->resolver != NULL)
        return hy_conf_error(cf, "\"resolver\" directive is duplicate");
    if ((c->resolver = hy_http_resolver_parse(cf)) == NULL)
        return -1;
    if (cf->ctx == HY_CTX_HTTP) {
        res_main_t *m = cf->main_conf[hy_http_resolver_module.index];
        m->http.resolver = c->resolver;
    }
    return 0;
}

static int set_timeout(hy_conf_t *cf, const hy_directive_t *d, void *conf)
{
    (void)d;
    hy_http_resolver_conf_t *c = conf;
    if (c->timeout_ms != -1)
        return hy_conf_error(cf, "\"resolver_timeout\" directive is duplicate");
    if ((c->timeout_ms = hy_http_resolver_timeout_parse(cf)) < 0)
        return -1;
    if (cf->ctx == HY_CTX_HTTP) {
        res_main_t *m = cf->main_conf[hy_http_resolver_module.index];
        m->http.timeout_ms = c->timeout_ms;
    }
    return 0;
}

const hy_http_resolver_conf_t *hy_http_resolver_loc(void **loc_conf)
{
    return loc_conf[hy_http_resolver_module.index];
}

const hy_http_resolver_conf_t *hy_http_resolver_main(hy_conf_t *cf)
{
    res_main_t *m = cf->main_conf[hy_http_resolver_module.index];
    return &m->http;
}

static void *create_main(hy_conf_t *cf)
{
    res_main_t *m = hy_pcalloc(cf->pool, sizeof(*m));
    m->http.timeout_ms = -1;
    return m;
}

static void *create_loc(hy_conf_t *cf)
{
    hy_http_resolver_conf_t *c = hy_pcalloc(cf->pool, sizeof(*c));
    c->timeout_ms = -1;
    return c;
}

static int merge_loc(hy_conf_t *cf, void *parent, void *child)
{
    (void)cf;
    hy_http_resolver_conf_t *p = parent, *c = child;
    if (c->resolver == NULL)
        c->resolver = p->resolver;
    if (c->timeout_ms == -1)
        c->timeout_ms = p->timeout_ms != -1 ? p->timeout_ms : HY_RESOLVER_TIMEOUT_DEFAULT_MS;
    return 0;
}

static const hy_directive_t directives[] = {
    {.name = "resolver", .ctx = HY_CTX_HTTP_ANY, .args = HY_ARGS_1MORE, .set = set_resolver, .conf = HY_CONF_LOC},
    {.name = "resolver_timeout", .ctx = HY_CTX_HTTP_ANY, .args = HY_ARGS_1, .set = set_timeout, .conf = HY_CONF_LOC},
    {0},
};

hy_module_t hy_http_resolver_module = {
    .name = "http_resolver",
    .directives = directives,
    .create_main_conf = create_main,
    .create_loc_conf = create_loc,
    .merge_loc_conf = merge_loc,
};
