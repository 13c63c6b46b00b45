/* auth_request.c — access by subrequest (see auth_request.h). The ACCESS handler starts a waited subrequest for
 * the configured URI and returns HY_AGAIN; the subrequest's end records its status, evaluates the location's
 * auth_request_set values in the subrequest's context and resumes the phase engine, which calls the handler
 * again: now it answers from the recorded status (nginx's ngx_http_auth_request_handler). The variables set
 * belong to this module (one slot each) and live in the main request's context. */
#include <string.h>
#include "auth_request.h"
#include "core.h"
#include "limit_rate.h"
#include "phases.h"
#include "request.h"
#include "subrequest.h"
#include "vars.h"
#include "vars_builtin.h"
#include "../conf/cycle.h"
#include "../core/log.h"

hy_module_t hy_http_auth_request_module;
#define AR_IDX (hy_http_auth_request_module.index)

#define SET_ARGS (-2)       /* nginx's changeable built-ins: $args rewrites the request's query */
#define SET_LIMIT_RATE (-3) /* ... and $limit_rate sets the response's rate */

typedef struct ar_set {
    int slot;           /* the variable's slot in ar_main_t, or SET_ARGS / SET_LIMIT_RATE */
    hy_complex_t value; /* evaluated in the subrequest */
} ar_set_t;

typedef struct ar_loc {
    hy_str_t uri; /* empty: off */
    bool uri_set;
    hy_str_t args;
    hy_array_t *sets; /* ar_set_t, NULL when none */
} ar_loc_t;

typedef struct ar_main {
    hy_array_t *names; /* hy_str_t: the variables auth_request_set owns, by slot */
} ar_main_t;

typedef struct ar_ctx {
    int gen; /* req->uri_changes when the subrequest started: an internal redirect asks again (nginx clears
              * module contexts on a redirect; the variables set stay) */
    bool done;
    int status;
    hy_array_t *challenges; /* hy_str_t: the subrequest's WWW-Authenticate fields (parent pool), NULL: none */
    hy_str_t *vals;         /* by slot (parent pool); ptr NULL: not set */
    size_t nvals;
} ar_ctx_t;

static ar_ctx_t *ctx_of(hy_req_t *req, bool create)
{
    void **slot = hy_req_ctx(req, &hy_http_auth_request_module);
    if (*slot == NULL && create) {
        ar_main_t *m = req->conn->cycle->http_main_conf[AR_IDX];
        ar_ctx_t *c = hy_pcalloc(req->pool, sizeof(*c));
        c->nvals = m->names ? m->names->nelts : 0;
        c->vals = c->nvals ? hy_pcalloc(req->pool, sizeof(hy_str_t) * c->nvals) : NULL;
        *slot = c;
    }
    return *slot;
}

static hy_str_t copy(hy_pool_t *p, hy_str_t s)
{
    char *d = hy_palloc(p, s.len + 1);
    memcpy(d, s.ptr, s.len);
    d[s.len] = '\0';
    return (hy_str_t){d, s.len};
}

static void on_done(hy_req_t *parent, hy_req_t *sr, void *data)
{
    ar_ctx_t *c = data;
    c->done = true;
    c->status = sr->status;
    if (sr->headers_out) {
        hy_header_t *h = sr->headers_out->elts;
        for (size_t i = 0; i < sr->headers_out->nelts; i++)
            if (h[i].name.len && hy_str_caseeq(h[i].name, "www-authenticate")) {
                if (c->challenges == NULL)
                    c->challenges = hy_array_create(parent->pool, 1, sizeof(hy_str_t));
                *(hy_str_t *)hy_array_push(c->challenges) = copy(parent->pool, h[i].value);
            }
    }
    const ar_loc_t *lc = parent->loc->loc_conf[AR_IDX];
    if (lc->sets) { /* nginx: evaluated in the subrequest, stored in the main request */
        const ar_set_t *s = lc->sets->elts;
        for (size_t i = 0; i < lc->sets->nelts; i++) {
            hy_str_t v;
            if (hy_vars_eval(sr, &s[i].value, &v) != 0)
                continue;
            v = copy(parent->pool, v);
            if (s[i].slot == SET_ARGS) {
                parent->args = v;
            } else if (s[i].slot == SET_LIMIT_RATE) {
                int64_t r = hy_limit_rate_parse(v);
                if (r < 0) {
                    hy_req_log(parent, HY_LOG_ERR, "invalid $limit_rate \"%.*s\"", (int)v.len, v.ptr);
                } else {
                    parent->limit_rate = r;
                    parent->limit_rate_set = true;
                }
            } else if ((size_t)s[i].slot < c->nvals) {
                c->vals[s[i].slot] = v;
            }
        }
    }
    hy_http_phases_resume(parent);
}

static int handler(hy_req_t *req)
{
    const ar_loc_t *lc = req->loc->loc_conf[AR_IDX];
    if (lc->uri.len == 0)
        return HY_DECLINED;
    ar_ctx_t *c = ctx_of(req, false);
    if (c != NULL && c->gen == req->uri_changes) { /* ours: answered, or still waiting */
        if (!c->done)
            return HY_AGAIN;
        int st = c->status;
        if (st == 403)
            return 403;
        if (st == 401) {
            const hy_str_t *ch = c->challenges ? c->challenges->elts : NULL;
            for (size_t i = 0; ch && i < c->challenges->nelts; i++)
                hy_req_add_header(req, HY_STR("WWW-Authenticate"), ch[i]);
            return 401;
        }
        if (st >= 200 && st < 300)
            return HY_OK;
        hy_req_log(req, HY_LOG_ERR, "auth request unexpected status: %d", st);
        return 500;
    }
    /* first time, or redirected since the last answer (nginx clears module contexts on a redirect, the
     * variables set stay): ask */
    c = ctx_of(req, true);
    c->gen = req->uri_changes;
    c->done = false;
    c->status = 0;
    c->challenges = NULL;
    if (hy_subrequest(req, lc->uri, lc->args, HY_SR_WAITED, on_done, c) == NULL)
        return 500;
    return HY_AGAIN;
}

static void get_var(hy_req_t *req, hy_var_value_t *v, uintptr_t data)
{
    while (req->parent) /* a subrequest reads the main request's values */
        req = req->parent;
    ar_ctx_t *c = ctx_of(req, false);
    if (c && data < c->nvals && c->vals[data].ptr) {
        v->ptr = c->vals[data].ptr;
        v->len = c->vals[data].len;
        v->not_found = false;
        return;
    }
    v->ptr = "";
    v->len = 0;
    v->not_found = false;
}

static bool seen; /* an auth_request URI in the http{} being configured */

static int set_uri(hy_conf_t *cf, const hy_directive_t *d, void *conf)
{
    (void)d;
    ar_loc_t *c = conf;
    if (c->uri_set)
        return hy_conf_error(cf, "\"auth_request\" directive is duplicate");
    size_t n;
    hy_str_t *a = hy_conf_args(cf, &n);
    c->uri_set = true;
    if (hy_str_eq(a[1], "off")) {
        c->uri = HY_STR_NULL;
        return 0;
    }
    hy_req_split_args(a[1], &c->uri, &c->args);
    seen = true;
    return 0;
}

static int set_var(hy_conf_t *cf, const hy_directive_t *d, void *conf)
{
    (void)d;
    ar_loc_t *c = conf;
    size_t n;
    hy_str_t *a = hy_conf_args(cf, &n);
    if (a[1].len < 2 || a[1].ptr[0] != '$')
        return hy_conf_error(cf, "invalid variable name \"%.*s\"", (int)a[1].len, a[1].ptr);
    hy_str_t name = {a[1].ptr + 1, a[1].len - 1};
    if (c->sets == NULL)
        c->sets = hy_array_create(cf->pool, 2, sizeof(ar_set_t));
    ar_set_t *s = hy_array_push(c->sets);
    if (hy_str_eq(name, "args") || hy_str_eq(name, "limit_rate")) {
        s->slot = hy_str_eq(name, "args") ? SET_ARGS : SET_LIMIT_RATE;
        return hy_vars_compile(cf, a[2], &s->value);
    }
    if (hy_vars_is_builtin(name))
        return hy_conf_error(cf, "the duplicate \"%.*s\" variable", (int)name.len, name.ptr);
    ar_main_t *m = cf->main_conf[AR_IDX];
    if (m->names == NULL)
        m->names = hy_array_create(cf->pool, 4, sizeof(hy_str_t));
    int slot = -1;
    hy_str_t *names = m->names->elts;
    for (size_t i = 0; i < m->names->nelts; i++)
        if (hy_str_eq_str(names[i], name))
            slot = (int)i;
    if (slot < 0) {
        slot = (int)m->names->nelts;
        *(hy_str_t *)hy_array_push(m->names) = hy_str_dup(cf->pool, name);
        if (hy_vars_define(cf, name, get_var, (uintptr_t)slot, HY_VAR_NOCACHE) < 0)
            return -1;
    }
    s->slot = slot;
    return hy_vars_compile(cf, a[2], &s->value);
}

static void *create_main(hy_conf_t *cf)
{
    return hy_pcalloc(cf->pool, sizeof(ar_main_t));
}

static void *create_loc(hy_conf_t *cf)
{
    return hy_pcalloc(cf->pool, sizeof(ar_loc_t));
}

static int merge_loc(hy_conf_t *cf, void *parent, void *child)
{
    (void)cf;
    ar_loc_t *p = parent, *c = child;
    if (!c->uri_set) {
        c->uri = p->uri;
        c->args = p->args;
        c->uri_set = p->uri_set;
    }
    if (c->sets == NULL)
        c->sets = p->sets;
    return 0;
}

static int postconfiguration(hy_conf_t *cf)
{
    bool used = seen; /* a configuration without auth_request pays nothing for it */
    seen = false;
    return used ? hy_http_phase_add(cf, HY_PHASE_ACCESS, handler) : 0;
}

static const hy_directive_t ar_directives[] = {
    {.name = "auth_request", .ctx = HY_CTX_HTTP_ANY, .args = HY_ARGS_1, .set = set_uri, .conf = HY_CONF_LOC},
    {.name = "auth_request_set", .ctx = HY_CTX_HTTP_ANY, .args = HY_ARGS_2, .set = set_var, .conf = HY_CONF_LOC},
    {0},
};

hy_module_t hy_http_auth_request_module = {
    .name = "http_auth_request",
    .directives = ar_directives,
    .create_main_conf = create_main,
    .create_loc_conf = create_loc,
    .merge_loc_conf = merge_loc,
    .postconfiguration = postconfiguration,
};
