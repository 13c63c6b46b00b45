/* mirror.c — request mirroring (see mirror.h). The PRECONTENT handler starts one background subrequest per
 * `mirror` URI of the location, with the request's method and args. With mirror_request_body on (the default)
 * the body is read first (buffered: the request's own handler later gets it again from http/body.c), and
 * the mirrors get a copy; the phase engine resumes when it is read. As in nginx, an internal redirect makes
 * the new location mirror again (the context is per location pass: req->uri_changes tells them apart). */
#include <stddef.h>
#include <string.h>
#include "mirror.h"
#include "body.h"
#include "core.h"
#include "phases.h"
#include "request.h"
#include "subrequest.h"
#include "../core/log.h"

hy_module_t hy_http_mirror_module;
#define MR_IDX (hy_http_mirror_module.index)

typedef struct mr_loc {
    hy_array_t *uris; /* hy_str_t; NULL: unset (inherits), empty array: off */
    int request_body;
} mr_loc_t;

typedef struct mr_ctx {
    int gen;         /* req->uri_changes of the pass that mirrored */
    int status;      /* HY_AGAIN while reading the body, then HY_DECLINED or an error status */
    bool in_handler; /* the body callback fired inside the handler: the handler returns the result */
} mr_ctx_t;

static void start_mirrors(hy_req_t *req, const mr_loc_t *lc)
{
    const hy_str_t *u = lc->uris->elts;
    unsigned flags = HY_SR_BACKGROUND | HY_SR_METHOD | (lc->request_body == 1 ? HY_SR_BODY : 0);
    for (size_t i = 0; i < lc->uris->nelts; i++)
        if (hy_subrequest(req, u[i], req->args, flags, NULL, NULL) == NULL)
            hy_req_log(req, HY_LOG_ERR, "mirror subrequest to \"%.*s\" could not be made", (int)u[i].len, u[i].ptr);
}

static void on_body(hy_req_t *req, const char *err)
{
    mr_ctx_t *c = *hy_req_ctx(req, &hy_http_mirror_module);
    if (c == NULL || c->status != HY_AGAIN)
        return;
    if (err != NULL) {
        c->status = req->body_in->status ? req->body_in->status : 400;
    } else {
        start_mirrors(req, req->loc->loc_conf[MR_IDX]);
        c->status = HY_DECLINED;
    }
    if (c->in_handler)
        return;
    if (c->status == HY_DECLINED)
        hy_http_phases_resume(req);
    else
        hy_req_error(req, c->status);
}

static int handler(hy_req_t *req)
{
    if (hy_req_is_subrequest(req))
        return HY_DECLINED;
    const mr_loc_t *lc = req->loc->loc_conf[MR_IDX];
    if (lc->uris == NULL || lc->uris->nelts == 0)
        return HY_DECLINED;
    void **slot = hy_req_ctx(req, &hy_http_mirror_module);
    mr_ctx_t *c = *slot;
    if (c != NULL && c->gen == req->uri_changes)
        return c->status; /* resumed after the body, or a second pass of the same location */
    if (c == NULL)
        c = *slot = hy_pcalloc(req->pool, sizeof(*c));
    c->gen = req->uri_changes;
    if (lc->request_body != 1) {
        start_mirrors(req, lc);
        c->status = HY_DECLINED;
        return HY_DECLINED;
    }
    c->status = HY_AGAIN;
    c->in_handler = true;
    int rc = hy_req_read_body(req, HY_BODY_BUFFER, on_body);
    c->in_handler = false;
    if (rc != 0) { /* a body reader was started before (not buffered): mirror without it */
        const hy_str_t *u = lc->uris->elts;
        for (size_t i = 0; i < lc->uris->nelts; i++)
            hy_subrequest(req, u[i], req->args, HY_SR_BACKGROUND | HY_SR_METHOD, NULL, NULL);
        c->status = HY_DECLINED;
    }
    return c->status;
}

static bool seen; /* a mirror URI in the http{} being configured */

static int set_mirror(hy_conf_t *cf, const hy_directive_t *d, void *conf)
{
    (void)d;
    mr_loc_t *c = conf;
    size_t n;
    hy_str_t *a = hy_conf_args(cf, &n);
    if (hy_str_eq(a[1], "off")) {
        if (c->uris != NULL)
            return hy_conf_error(cf, "\"mirror\" directive is duplicate");
        c->uris = hy_array_create(cf->pool, 1, sizeof(hy_str_t));
        return 0;
    }
    if (c->uris != NULL && c->uris->nelts == 0) /* after "mirror off" */
        return hy_conf_error(cf, "\"mirror\" directive is duplicate");
    if (c->uris == NULL)
        c->uris = hy_array_create(cf->pool, 2, sizeof(hy_str_t));
    seen = true;
    *(hy_str_t *)hy_array_push(c->uris) = hy_str_dup(cf->pool, a[1]);
    return 0;
}

static void *create_loc(hy_conf_t *cf)
{
    mr_loc_t *c = hy_pcalloc(cf->pool, sizeof(*c));
    c->request_body = HY_UNSET;
    return c;
}

static int merge_loc(hy_conf_t *cf, void *parent, void *child)
{
    (void)cf;
    mr_loc_t *p = parent, *c = child;
    if (c->uris == NULL)
        c->uris = p->uris;
    hy_merge_value(c->request_body, p->request_body, 1);
    return 0;
}

static int postconfiguration(hy_conf_t *cf)
{
    bool used = seen; /* a configuration without mirrors pays nothing for them */
    seen = false;
    return used ? hy_http_phase_add(cf, HY_PHASE_PRECONTENT, handler) : 0;
}

static const hy_directive_t mr_directives[] = {
    {.name = "mirror", .ctx = HY_CTX_HTTP_ANY, .args = HY_ARGS_1, .set = set_mirror, .conf = HY_CONF_LOC},
    {.name = "mirror_request_body",
     .ctx = HY_CTX_HTTP_ANY,
     .args = HY_ARGS_FLAG,
     .set = hy_slot_flag,
     .conf = HY_CONF_LOC,
     .offset = offsetof(mr_loc_t, request_body)},
    {0},
};

hy_module_t hy_http_mirror_module = {
    .name = "http_mirror",
    .directives = mr_directives,
    .create_loc_conf = create_loc,
    .merge_loc_conf = merge_loc,
    .postconfiguration = postconfiguration,
};
