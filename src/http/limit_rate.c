/* limit_rate.c — limit_rate and limit_rate_after (see limit_rate.h). The pacing itself is the socket's
 * (event/sock.c): one second's worth of output at once, then a timer releases the rest at the rate, so a paced
 * response costs no CPU while it waits. A request without a rate costs one branch in the header filter. */
#include <string.h>
#include "limit_rate.h"
#include "core.h"
#include "request.h"
#include "vars.h"

hy_module_t hy_http_limit_rate_module;

typedef struct rl_loc {
    hy_complex_t *rate, *after; /* NULL when unset at this level */
} rl_loc_t;

int64_t hy_limit_rate_parse(hy_str_t v)
{
    return hy_parse_size(v.ptr, v.len);
}

/* nginx's ngx_http_complex_value_size: an invalid value is the default (0: no limit) */
static int64_t eval_size(hy_req_t *req, const hy_complex_t *cv)
{
    if (cv->nparts == 0)
        return hy_limit_rate_parse(cv->value);
    hy_str_t v;
    hy_vars_eval(req, cv, &v);
    int64_t n = hy_limit_rate_parse(v);
    return n < 0 ? 0 : n;
}

static void header_filter(hy_req_t *req)
{
    hy_http_loc_conf_t *l = req->loc ? req->loc : req->srv ? req->srv->loc : NULL;
    const rl_loc_t *c = l ? l->loc_conf[hy_http_limit_rate_module.index] : NULL;
    if (c == NULL || (c->rate == NULL && !req->limit_rate_set))
        return;
    if (!req->limit_rate_set)
        req->limit_rate = eval_size(req, c->rate);
    if (req->limit_rate > 0 && c->after)
        req->limit_rate_after = eval_size(req, c->after);
}

static int set_size(hy_conf_t *cf, const hy_directive_t *d, void *conf)
{
    rl_loc_t *c = conf;
    hy_complex_t **slot = strcmp(d->name, "limit_rate") == 0 ? &c->rate : &c->after;
    if (*slot)
        return hy_conf_error(cf, "\"%s\" directive is duplicate", d->name);
    size_t n;
    hy_str_t *a = hy_conf_args(cf, &n);
    *slot = hy_pcalloc(cf->pool, sizeof(**slot));
    if (hy_vars_compile(cf, a[1], *slot) < 0)
        return -1;
    if ((*slot)->nparts == 0 && hy_limit_rate_parse((*slot)->value) < 0)
        return hy_conf_error(cf, "\"%s\" directive invalid value", d->name);
    return 0;
}

static void *create_loc(hy_conf_t *cf)
{
    return hy_pcalloc(cf->pool, sizeof(rl_loc_t));
}

static int merge_loc(hy_conf_t *cf, void *parent, void *child)
{
    (void)cf;
    rl_loc_t *p = parent, *c = child;
    if (c->rate == NULL)
        c->rate = p->rate;
    if (c->after == NULL)
        c->after = p->after;
    return 0;
}

static const hy_directive_t rl_directives[] = {
    {.name = "limit_rate",
     .ctx = HY_CTX_HTTP_ANY | HY_CTX_LIF,
     .args = HY_ARGS_1,
     .set = set_size,
     .conf = HY_CONF_LOC},
    {.name = "limit_rate_after",
     .ctx = HY_CTX_HTTP_ANY | HY_CTX_LIF,
     .args = HY_ARGS_1,
     .set = set_size,
     .conf = HY_CONF_LOC},
    {0},
};

hy_module_t hy_http_limit_rate_module = {
    .name = "http_limit_rate",
    .directives = rl_directives,
    .create_loc_conf = create_loc,
    .merge_loc_conf = merge_loc,
    .header_filter = header_filter,
};
