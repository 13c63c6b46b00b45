/* uwsgi.c — nginx's uwsgi module on the upstream engine (upstream/uwsgi.c is the codec): uwsgi_pass (uwsgi:// and
 * suwsgi://, TLS with the uwsgi_ssl_* settings of upstream/ussl.h), uwsgi_param,
 * uwsgi_modifier1/uwsgi_modifier2, uwsgi_string, and the engine's settings (upstream/uconf.h) as uwsgi_*. */
#include <string.h>
#include "uwsgi.h"
#include "appconf.h"
#include "../upstream/uwsgi.h"
#include "../upstream/ussl.h"

typedef struct uwsgi_loc {
    hy_app_loc_t app; /* first */
    int64_t modifier1, modifier2;
    hy_str_t string; /* uwsgi_string (no variables, as nginx); .ptr NULL when unset */
    hy_ussl_t ssl; /* uwsgi_ssl_* (upstream/ussl.h), for uwsgi_pass suwsgi:// */
} uwsgi_loc_t;

static int uwsgi_handler(hy_req_t *req)
{
    const uwsgi_loc_t *ul = req->loc->loc_conf[hy_http_uwsgi_module.index];
    int status = 500;
    hy_ureq_t *u = hy_app_exchange(req, &ul->app, &status);
    if (u == NULL)
        return status;
    hy_upstream_uwsgi_init(u, &ul->app.params, ul->app.uc.pass_request_headers, (int)ul->modifier1, (int)ul->modifier2,
                           ul->string);
    return hy_upstream_start(u);
}

static int set_pass(hy_conf_t *cf, const hy_directive_t *d, void *conf)
{
    (void)d;
    return hy_app_set_pass(cf, &((uwsgi_loc_t *)conf)->app, uwsgi_handler);
}

static const int64_t modifier_bounds[] = {0, 255};

static const hy_directive_t uwsgi_directives[] = {
    {.name = "uwsgi_pass", .ctx = HY_CTX_LOC | HY_CTX_LIF, .args = HY_ARGS_1, .set = set_pass, .conf = HY_CONF_LOC},
    {.name = "uwsgi_param",
     .ctx = HY_CTX_HTTP_ANY,
     .args = HY_ARGS_2 | HY_ARGS_3,
     .set = hy_uparams_set,
     .conf = HY_CONF_LOC,
     .offset = offsetof(uwsgi_loc_t, app.params)},
    {.name = "uwsgi_modifier1",
     .ctx = HY_CTX_HTTP_ANY,
     .args = HY_ARGS_1,
     .set = hy_slot_num,
     .conf = HY_CONF_LOC,
     .offset = offsetof(uwsgi_loc_t, modifier1),
     .post = modifier_bounds},
    {.name = "uwsgi_modifier2",
     .ctx = HY_CTX_HTTP_ANY,
     .args = HY_ARGS_1,
     .set = hy_slot_num,
     .conf = HY_CONF_LOC,
     .offset = offsetof(uwsgi_loc_t, modifier2),
     .post = modifier_bounds},
    {.name = "uwsgi_string",
     .ctx = HY_CTX_HTTP_ANY,
     .args = HY_ARGS_1,
     .set = hy_slot_str,
     .conf = HY_CONF_LOC,
     .offset = offsetof(uwsgi_loc_t, string)},
    HY_UCONF_DIRECTIVES("uwsgi", uwsgi_loc_t, app.uc),
    HY_USSL_DIRECTIVES("uwsgi", uwsgi_loc_t, ssl),
    {0},
};

static void *create_loc(hy_conf_t *cf)
{
    uwsgi_loc_t *ul = hy_pcalloc(cf->pool, sizeof(*ul));
    hy_app_loc_init(&ul->app);
    hy_ussl_init(&ul->ssl);
    ul->app.ssl = &ul->ssl;
    ul->modifier1 = ul->modifier2 = HY_UNSET;
    return ul;
}

/* nginx's ngx_http_uwsgi_hide_headers */
static const char *const hidden[] = {"X-Accel-Expires", "X-Accel-Redirect", "X-Accel-Limit-Rate", "X-Accel-Buffering",
                                     "X-Accel-Charset"};

static int merge_loc(hy_conf_t *cf, void *parent, void *child)
{
    uwsgi_loc_t *p = parent, *c = child;
    hy_merge_value(c->modifier1, p->modifier1, 0);
    hy_merge_value(c->modifier2, p->modifier2, 0);
    if (c->string.ptr == NULL)
        c->string = p->string;
    if (hy_app_loc_merge(cf, &c->app, &p->app, "uwsgi", hidden, HY_ARRAY_SIZE(hidden)) != 0)
        return -1;
    return hy_ussl_merge(cf, &c->ssl, &p->ssl, "uwsgi", c->app.is_tls || c->app.pass_cv != NULL);
}

hy_module_t hy_http_uwsgi_module = {
    .name = "http_uwsgi",
    .directives = uwsgi_directives,
    .create_loc_conf = create_loc,
    .merge_loc_conf = merge_loc,
};
