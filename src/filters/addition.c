/* addition.c — nginx's ngx_http_addition_module: `add_before_body URI` and `add_after_body URI` put the body of
 * a subrequest for URI before / after the response body; `addition_types` lists the MIME types (text/html
 * always; "*" any). As nginx: only the main request, only a 200 response, Content-Length and Accept-Ranges go,
 * a strong ETag becomes weak. An empty URI ("") switches off what an upper level set. The subrequests' bodies and
 * the response's are put in order by splice.c. The subrequest's arguments are empty (nginx passes none). */
#include <string.h>
#include <strings.h>
#include "addition.h"
#include "splice.h"
#include "../http/subrequest.h"

#define IDX (hy_http_addition_module.index)

typedef struct add_loc {
    hy_str_t before, after; /* .ptr NULL: inherit; len 0: none */
    hy_array_t *types;      /* hy_str_t, lower-case; NULL → inherit */
    bool types_any;
} add_loc_t;

typedef struct add_ctx {
    hy_splice_t *splice;
    bool started;
} add_ctx_t;

static add_loc_t *req_conf(hy_req_t *req)
{
    hy_http_loc_conf_t *l = req->loc ? req->loc : (req->srv ? req->srv->loc : NULL);
    return l && l->loc_conf ? l->loc_conf[IDX] : NULL;
}

static bool type_ok(const add_loc_t *lc, hy_str_t ct)
{
    return hy_http_type_listed(lc->types, lc->types_any, true, ct);
}

static void proceed(hy_req_t *req)
{
    add_ctx_t *ctx = req->ctx[IDX];
    hy_splice_proceed(ctx->splice);
}

static void body_filter(hy_req_t *req, bool is_final)
{
    if (req->ctx == NULL || req->ctx[IDX] == NULL)
        return;
    add_ctx_t *ctx = req->ctx[IDX];
    hy_splice_t *s = ctx->splice;
    if (s->finished || s->held)
        return;
    add_loc_t *lc = req_conf(req);
    if (!ctx->started) {
        ctx->started = true;
        if (lc->before.len)
            hy_splice_include(s, lc->before, HY_STR(""), NULL, NULL);
    }
    hy_splice_queue(s, &req->body);
    if (is_final) {
        if (lc->after.len)
            hy_splice_include(s, lc->after, HY_STR(""), NULL, NULL);
        hy_splice_end_input(s);
    }
    hy_splice_body(s, is_final);
}

static void header_filter(hy_req_t *req)
{
    add_loc_t *lc = req_conf(req);
    if (lc == NULL || (lc->before.len == 0 && lc->after.len == 0) || req->status != 200 || hy_req_is_subrequest(req) ||
        !type_ok(lc, req->content_type))
        return;
    if (!req->header_only) { /* a HEAD response's head says what a GET would get (nginx) */
        add_ctx_t *ctx = hy_pcalloc(req->pool, sizeof(*ctx));
        ctx->splice = hy_splice_create(req, &hy_http_addition_module, proceed);
        *hy_req_ctx(req, &hy_http_addition_module) = ctx;
    }
    req->content_length_n = -1;
    req->accept_ranges = false;
    hy_req_del_header(req, "Content-Length");
    hy_req_del_header(req, "Accept-Ranges"); /* a proxied one */
    hy_req_weaken_etag(req);
}

static void *create_loc(hy_conf_t *cf)
{
    return hy_pcalloc(cf->pool, sizeof(add_loc_t));
}

static int merge_loc(hy_conf_t *cf, void *parent, void *child)
{
    (void)cf;
    add_loc_t *p = parent, *c = child;
    if (c->before.ptr == NULL)
        c->before = p->before;
    if (c->after.ptr == NULL)
        c->after = p->after;
    if (c->types == NULL && !c->types_any) {
        c->types = p->types;
        c->types_any = p->types_any;
    }
    return 0;
}

static int set_types(hy_conf_t *cf, const hy_directive_t *d, void *conf)
{
    (void)d;
    add_loc_t *lc = conf;
    size_t n;
    hy_str_t *a = hy_conf_args(cf, &n);
    if (lc->types == NULL)
        lc->types = hy_array_create(cf->pool, n, sizeof(hy_str_t));
    for (size_t i = 1; i < n; i++) {
        if (hy_str_eq(a[i], "*")) {
            lc->types_any = true;
            continue;
        }
        hy_str_t t = hy_str_dup(cf->pool, a[i]);
        hy_str_lower(t.ptr, t.len);
        *(hy_str_t *)hy_array_push(lc->types) = t;
    }
    return 0;
}

#define LOC(field) .conf = HY_CONF_LOC, .offset = offsetof(add_loc_t, field)

static const hy_directive_t add_directives[] = {
    {.name = "add_before_body", .ctx = HY_CTX_HTTP_ANY, .args = HY_ARGS_1, .set = hy_slot_str, LOC(before)},
    {.name = "add_after_body", .ctx = HY_CTX_HTTP_ANY, .args = HY_ARGS_1, .set = hy_slot_str, LOC(after)},
    {.name = "addition_types", .ctx = HY_CTX_HTTP_ANY, .args = HY_ARGS_1MORE, .set = set_types, LOC(types)},
    {0},
};

hy_module_t hy_http_addition_module = {
    .name = "http_addition",
    .directives = add_directives,
    .create_loc_conf = create_loc,
    .merge_loc_conf = merge_loc,
    .header_filter = header_filter,
    .body_filter = body_filter,
};
