/* scgi.c — nginx's SCGI module on the upstream engine (upstream/scgi.c is the codec): scgi_pass, scgi_param, and
 * the engine's settings (upstream/uconf.h) as scgi_*. */
#include <string.h>
#include "scgi.h"
#include "appconf.h"
#include "../upstream/scgi.h"

typedef struct scgi_loc {
    hy_app_loc_t app;
} scgi_loc_t;

static int scgi_handler(hy_req_t *req)
{
    const scgi_loc_t *sl = req->loc->loc_conf[hy_http_scgi_module.index];
    int status = 500;
    hy_ureq_t *u = hy_app_exchange(req, &sl->app, &status);
    if (u == NULL)
        return status;
    hy_upstream_scgi_init(u, &sl->app.params, sl->app.uc.pass_request_headers);
    return hy_upstream_start(u);
}

static int set_pass(hy_conf_t *cf, const hy_directive_t *d, void *conf)
{
    (void)d;
    return hy_app_set_pass(cf, &((scgi_loc_t *)conf)->app, scgi_handler);
}

static const hy_directive_t scgi_directives[] = {
    {.name = "scgi_pass", .ctx = HY_CTX_LOC | HY_CTX_LIF, .args = HY_ARGS_1, .set = set_pass, .conf = HY_CONF_LOC},
    {.name = "scgi_param",
     .ctx = HY_CTX_HTTP_ANY,
     .args = HY_ARGS_2 | HY_ARGS_3,
     .set = hy_uparams_set,
     .conf = HY_CONF_LOC,
     .offset = offsetof(scgi_loc_t, app.params)},
    HY_UCONF_DIRECTIVES("scgi", scgi_loc_t, app.uc),
    {0},
};

static void *create_loc(hy_conf_t *cf)
{
    scgi_loc_t *sl = hy_pcalloc(cf->pool, sizeof(*sl));
    hy_app_loc_init(&sl->app);
    return sl;
}

/* nginx's ngx_http_scgi_hide_headers */
static const char *const hidden[] = {
    "Status", "X-Accel-Expires", "X-Accel-Redirect", "X-Accel-Limit-Rate", "X-Accel-Buffering", "X-Accel-Charset"};

static int merge_loc(hy_conf_t *cf, void *parent, void *child)
{
    scgi_loc_t *p = parent, *c = child;
    return hy_app_loc_merge(cf, &c->app, &p->app, "scgi", hidden, HY_ARRAY_SIZE(hidden));
}

hy_module_t hy_http_scgi_module = {
    .name = "http_scgi",
    .directives = scgi_directives,
    .create_loc_conf = create_loc,
    .merge_loc_conf = merge_loc,
};
