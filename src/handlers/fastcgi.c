/* fastcgi.c — nginx's FastCGI module on the upstream engine (upstream/fastcgi.c is the codec): fastcgi_pass,
 * fastcgi_param, fastcgi_index, fastcgi_split_path_info with $fastcgi_script_name and $fastcgi_path_info,
 * fastcgi_keep_conn, fastcgi_catch_stderr, and the engine's settings (upstream/uconf.h) as fastcgi_*. */
#include <string.h>
#include "fastcgi.h"
#include "appconf.h"
#include "../http/vars.h"
#include "../conf/conf_regex.h"
#include "../upstream/fastcgi.h"

typedef struct fcgi_loc {
    hy_app_loc_t app; /* first */
    hy_str_t index;
    hy_regex_t *split;
    bool split_set;
    int keep_conn;
    hy_array_t *catch_stderr; /* hy_str_t */
} fcgi_loc_t;

#define FL(f) offsetof(fcgi_loc_t, f)

static fcgi_loc_t *loc_of(hy_req_t *req)
{
    return req->loc ? req->loc->loc_conf[hy_http_fastcgi_module.index] : NULL;
}

static int fastcgi_handler(hy_req_t *req)
{
    const fcgi_loc_t *fl = loc_of(req);
    int status = 500;
    hy_ureq_t *u = hy_app_exchange(req, &fl->app, &status);
    if (u == NULL)
        return status;
    u->version = 11; /* FastCGI frames a body of unknown length itself: it may be streamed */
    hy_fcgi_opts_t o = {.keep_conn = fl->keep_conn == 1,
                        .catch_stderr = fl->catch_stderr,
                        .params = &fl->app.params,
                        .pass_headers = fl->app.uc.pass_request_headers};
    hy_upstream_fcgi_init(u, &o);
    return hy_upstream_start(u);
}

/* ---------------------------------------------------------------- $fastcgi_script_name, $fastcgi_path_info */

static void split(hy_req_t *req, hy_str_t *script, hy_str_t *path_info)
{
    const fcgi_loc_t *fl = loc_of(req);
    *script = req->uri;
    *path_info = HY_STR_NULL;
    if (fl == NULL)
        return;
    if (fl->split != NULL) {
        hy_regex_caps_t caps = {.pool = req->pool};
        if (hy_regex_exec(fl->split, req->uri, &caps) == 1 && caps.n >= 3) {
            *script = hy_regex_group(&caps, 1);
            *path_info = hy_regex_group(&caps, 2);
        }
    }
    if (fl->index.len && script->len && script->ptr[script->len - 1] == '/') {
        char *p = hy_palloc(req->pool, script->len + fl->index.len);
        memcpy(p, script->ptr, script->len);
        memcpy(p + script->len, fl->index.ptr, fl->index.len);
        *script = (hy_str_t){p, script->len + fl->index.len};
    }
}

static void get_split(hy_req_t *req, hy_var_value_t *v, uintptr_t data)
{
    hy_str_t script, pi;
    split(req, &script, &pi);
    hy_str_t s = data ? pi : script;
    v->ptr = s.ptr, v->len = s.len, v->not_found = false;
}

/* ---------------------------------------------------------------- directives */

static int set_pass(hy_conf_t *cf, const hy_directive_t *d, void *conf)
{
    (void)d;
    return hy_app_set_pass(cf, &((fcgi_loc_t *)conf)->app, fastcgi_handler);
}

static int set_split(hy_conf_t *cf, const hy_directive_t *d, void *conf)
{
    (void)d;
    fcgi_loc_t *fl = conf;
    size_t n;
    hy_str_t *a = hy_conf_args(cf, &n);
    if (fl->split_set)
        return hy_conf_error(cf, "\"fastcgi_split_path_info\" directive is duplicate");
    fl->split_set = true;
    if ((fl->split = hy_conf_regex(cf, a[1], false)) == NULL)
        return -1;
    if (fl->split->ncaptures != 2)
        return hy_conf_error(cf, "pattern \"%s\" must have 2 captures", a[1].ptr);
    return 0;
}

static int set_catch(hy_conf_t *cf, const hy_directive_t *d, void *conf)
{
    (void)d;
    fcgi_loc_t *fl = conf;
    size_t n;
    hy_str_t *a = hy_conf_args(cf, &n);
    if (fl->catch_stderr == NULL)
        fl->catch_stderr = hy_array_create(cf->pool, 2, sizeof(hy_str_t));
    *(hy_str_t *)hy_array_push(fl->catch_stderr) = hy_str_dup(cf->pool, a[1]);
    return 0;
}

static const hy_directive_t fastcgi_directives[] = {
    {.name = "fastcgi_pass", .ctx = HY_CTX_LOC | HY_CTX_LIF, .args = HY_ARGS_1, .set = set_pass, .conf = HY_CONF_LOC},
    {.name = "fastcgi_param",
     .ctx = HY_CTX_HTTP_ANY,
     .args = HY_ARGS_2 | HY_ARGS_3,
     .set = hy_uparams_set,
     .conf = HY_CONF_LOC,
     .offset = offsetof(fcgi_loc_t, app.params)},
    {.name = "fastcgi_index",
     .ctx = HY_CTX_HTTP_ANY,
     .args = HY_ARGS_1,
     .set = hy_slot_str,
     .conf = HY_CONF_LOC,
     .offset = FL(index)},
    {.name = "fastcgi_split_path_info", .ctx = HY_CTX_LOC, .args = HY_ARGS_1, .set = set_split, .conf = HY_CONF_LOC},
    {.name = "fastcgi_keep_conn",
     .ctx = HY_CTX_HTTP_ANY,
     .args = HY_ARGS_FLAG,
     .set = hy_slot_flag,
     .conf = HY_CONF_LOC,
     .offset = FL(keep_conn)},
    {.name = "fastcgi_catch_stderr", .ctx = HY_CTX_HTTP_ANY, .args = HY_ARGS_1, .set = set_catch, .conf = HY_CONF_LOC},
    HY_UCONF_DIRECTIVES("fastcgi", fcgi_loc_t, app.uc),
    {0},
};

static void *create_loc(hy_conf_t *cf)
{
    fcgi_loc_t *fl = hy_pcalloc(cf->pool, sizeof(*fl));
    hy_app_loc_init(&fl->app);
    fl->keep_conn = HY_UNSET;
    return fl;
}

/* nginx's ngx_http_fastcgi_hide_headers */
static const char *const hidden[] = {
    "Status", "X-Accel-Expires", "X-Accel-Redirect", "X-Accel-Limit-Rate", "X-Accel-Buffering", "X-Accel-Charset"};

static int merge_loc(hy_conf_t *cf, void *parent, void *child)
{
    fcgi_loc_t *p = parent, *c = child;
    hy_merge_value(c->keep_conn, p->keep_conn, 0);
    if (c->index.ptr == NULL)
        c->index = p->index;
    if (!c->split_set) {
        c->split = p->split;
        c->split_set = p->split_set;
    }
    if (c->catch_stderr == NULL)
        c->catch_stderr = p->catch_stderr;
    return hy_app_loc_merge(cf, &c->app, &p->app, "fastcgi", hidden, HY_ARRAY_SIZE(hidden));
}

static int postconfiguration(hy_conf_t *cf)
{
    if (hy_vars_define(cf, HY_STR("fastcgi_script_name"), get_split, 0, HY_VAR_NOCACHE) < 0 ||
        hy_vars_define(cf, HY_STR("fastcgi_path_info"), get_split, 1, HY_VAR_NOCACHE) < 0)
        return -1;
    return 0;
}

hy_module_t hy_http_fastcgi_module = {
    .name = "http_fastcgi",
    .directives = fastcgi_directives,
    .create_loc_conf = create_loc,
    .merge_loc_conf = merge_loc,
    .postconfiguration = postconfiguration,
};
