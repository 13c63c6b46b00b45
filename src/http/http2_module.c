/* http2_module.c — nginx's HTTP/2 directives (see http2_module.h). */
#include <string.h>
#include <stddef.h>
#include "http2_module.h"
#include "request.h"
#include "phases.h"
#include "core.h"
#include "vars.h"
#include "../core/log.h"
#include "../conf/cycle.h"

hy_module_t hy_http_v2_module;

const hy_http2_srv_conf_t *hy_http2_srv_conf(const hy_http_srv_conf_t *srv)
{
    return srv->srv_conf[hy_http_v2_module.index];
}

const hy_http2_loc_conf_t *hy_http2_loc_conf(const hy_http_loc_conf_t *loc)
{
    return loc->loc_conf[hy_http_v2_module.index];
}

size_t hy_http2_recv_buffer_size(hy_cycle_t *cycle)
{
    hy_http2_main_conf_t *m = cycle->http_main_conf ? cycle->http_main_conf[hy_http_v2_module.index] : NULL;
    return m && m->recv_buffer_size > 0 ? (size_t)m->recv_buffer_size : 262144;
}

bool hy_http2_enabled(const hy_http_addr_t *addr, const hy_http_srv_conf_t *srv)
{
    return addr->spec.http2 || hy_http2_srv_conf(srv)->enable == 1;
}

/* nginx's ngx_conf_deprecated: the old HTTP/2 names still parse their value, then warn */
typedef struct obsolete {
    hy_conf_set_fn check;
    const char *instead;
} obsolete_t;

static int set_obsolete(hy_conf_t *cf, const hy_directive_t *d, void *conf)
{
    const obsolete_t *o = d->post;
    hy_directive_t plain = *d;
    plain.post = NULL;
    if (o->check(cf, &plain, conf) != 0)
        return -1;
    hy_conf_warn(cf, "the \"%s\" directive is obsolete, use the \"%s\" directive instead", d->name, o->instead);
    return 0;
}

static const obsolete_t obs_field = {hy_slot_check_size, "large_client_header_buffers"};
static const obsolete_t obs_idle = {hy_slot_check_msec, "keepalive_timeout"};
static const obsolete_t obs_recv = {hy_slot_check_msec, "client_header_timeout"};
static const obsolete_t obs_requests = {hy_slot_check_num, "keepalive_requests"};

static int set_chunk_size(hy_conf_t *cf, const hy_directive_t *d, void *conf)
{
    if (hy_slot_size(cf, d, conf) != 0)
        return -1;
    hy_http2_loc_conf_t *c = conf;
    if (c->chunk_size <= 0)
        return hy_conf_error(cf, "the http2 chunk size cannot be zero");
    if (c->chunk_size > 16777215) /* NGX_HTTP_V2_MAX_FRAME_SIZE */
        c->chunk_size = 16777215;
    return 0;
}

static int set_recv_buffer(hy_conf_t *cf, const hy_directive_t *d, void *conf)
{
    if (hy_slot_size(cf, d, conf) != 0)
        return -1;
    hy_http2_main_conf_t *m = conf;
    if (m->recv_buffer_size <= 2 * 16) /* nginx: at least twice its state buffer */
        return hy_conf_error(cf, "\"%s\" directive value is too small", d->name); /* a post handler's text */
    return 0;
}

static int set_preread(hy_conf_t *cf, const hy_directive_t *d, void *conf)
{
    if (hy_slot_size(cf, d, conf) != 0)
        return -1;
    hy_http2_srv_conf_t *s = conf;
    if (s->body_preread_size > 2147483647) /* NGX_HTTP_V2_MAX_WINDOW */
        return hy_conf_error(cf, "the maximum body preread buffer size is %d", 2147483647); /* nginx's words */
    return 0;
}

static const hy_bounds_t streams_bounds = {1, INT32_MAX};

static void *create_main(hy_conf_t *cf)
{
    hy_http2_main_conf_t *m = hy_pcalloc(cf->pool, sizeof(*m));
    m->recv_buffer_size = HY_UNSET_SIZE;
    return m;
}

static void *create_srv(hy_conf_t *cf)
{
    hy_http2_srv_conf_t *s = hy_pcalloc(cf->pool, sizeof(*s));
    s->enable = HY_UNSET;
    s->max_concurrent_streams = HY_UNSET;
    s->body_preread_size = HY_UNSET_SIZE;
    return s;
}

static int merge_srv(hy_conf_t *cf, void *parent, void *child)
{
    (void)cf;
    hy_http2_srv_conf_t *p = parent, *c = child;
    hy_merge_value(c->enable, p->enable, 0);
    hy_merge_value(c->max_concurrent_streams, p->max_concurrent_streams, 128);
    hy_merge_value(c->body_preread_size, p->body_preread_size, 65536);
    return 0;
}

static void *create_loc(hy_conf_t *cf)
{
    hy_http2_loc_conf_t *l = hy_pcalloc(cf->pool, sizeof(*l));
    l->chunk_size = HY_UNSET_SIZE;
    return l;
}

static int merge_loc(hy_conf_t *cf, void *parent, void *child)
{
    (void)cf;
    hy_http2_loc_conf_t *p = parent, *c = child;
    hy_merge_value(c->chunk_size, p->chunk_size, 8192);
    return 0;
}

/* $http2: "h2" over TLS, "h2c" over cleartext, empty on HTTP/1 */
static void get_http2(hy_req_t *req, hy_var_value_t *v, uintptr_t data)
{
    (void)data;
    v->not_found = false;
    v->ptr = "", v->len = 0;
    if (req->version == 20) {
        bool tls = hy_str_eq(req->conn->scheme, "https");
        v->ptr = tls ? "h2" : "h2c";
        v->len = tls ? 2 : 3;
    }
}

/* nginx 1.25.1+: an HTTP/2 request whose Host picks a server with http2 off (on an address whose listen has no
 * http2 parameter) is answered 421, so that the client retries it on a connection of its own */
static int misdirected_phase(hy_req_t *req)
{
    if (req->version != 20 || hy_http2_enabled(req->conn->addr, req->srv))
        return HY_DECLINED;
    hy_req_log(req, HY_LOG_INFO,
               "client attempted to request the server name for which the negotiated protocol is disabled");
    return 421;
}

static int postconfiguration(hy_conf_t *cf)
{
    hy_vars_define(cf, HY_STR("http2"), get_http2, 0, 0);
    /* the check costs nothing unless a server has http2 on and another has it off */
    hy_http_main_conf_t *cm = cf->main_conf[hy_http_core_module.index];
    hy_http_srv_conf_t **srvs = cm->servers->elts;
    bool on = false, off = false;
    for (size_t i = 0; i < cm->servers->nelts; i++) {
        if (hy_http2_srv_conf(srvs[i])->enable == 1)
            on = true;
        else
            off = true;
    }
    if (on && off && hy_http_phase_add(cf, HY_PHASE_POST_READ, misdirected_phase) != 0)
        return -1;
    hy_http2_main_conf_t *m = cf->main_conf[hy_http_v2_module.index];
    if (m->recv_buffer_size == HY_UNSET_SIZE)
        m->recv_buffer_size = 262144;
    return 0;
}

#define SRV_OFF(f) ((uint16_t)offsetof(hy_http2_srv_conf_t, f))

static const hy_directive_t directives[] = {
    {.name = "http2", .ctx = HY_CTX_HTTP | HY_CTX_SERVER, .args = HY_ARGS_FLAG, .set = hy_slot_flag,
     .conf = HY_CONF_SRV, .offset = SRV_OFF(enable)},
    {.name = "http2_body_preread_size", .ctx = HY_CTX_HTTP | HY_CTX_SERVER, .args = HY_ARGS_1, .set = set_preread,
     .conf = HY_CONF_SRV, .offset = SRV_OFF(body_preread_size)},
    {.name = "http2_chunk_size", .ctx = HY_CTX_HTTP_ANY, .args = HY_ARGS_1, .set = set_chunk_size,
     .conf = HY_CONF_LOC, .offset = (uint16_t)offsetof(hy_http2_loc_conf_t, chunk_size)},
    {.name = "http2_idle_timeout", .ctx = HY_CTX_HTTP | HY_CTX_SERVER, .args = HY_ARGS_1, .set = set_obsolete,
     .conf = HY_CONF_SRV, .post = &obs_idle},
    {.name = "http2_max_concurrent_streams", .ctx = HY_CTX_HTTP | HY_CTX_SERVER, .args = HY_ARGS_1,
     .set = hy_slot_num, .conf = HY_CONF_SRV, .offset = SRV_OFF(max_concurrent_streams), .post = &streams_bounds},
    {.name = "http2_max_field_size", .ctx = HY_CTX_HTTP | HY_CTX_SERVER, .args = HY_ARGS_1, .set = set_obsolete,
     .conf = HY_CONF_SRV, .post = &obs_field},
    {.name = "http2_max_header_size", .ctx = HY_CTX_HTTP | HY_CTX_SERVER, .args = HY_ARGS_1, .set = set_obsolete,
     .conf = HY_CONF_SRV, .post = &obs_field},
    {.name = "http2_max_requests", .ctx = HY_CTX_HTTP | HY_CTX_SERVER, .args = HY_ARGS_1, .set = set_obsolete,
     .conf = HY_CONF_SRV, .post = &obs_requests},
    {.name = "http2_recv_buffer_size", .ctx = HY_CTX_HTTP, .args = HY_ARGS_1, .set = set_recv_buffer,
     .conf = HY_CONF_HTTP_MAIN, .offset = (uint16_t)offsetof(hy_http2_main_conf_t, recv_buffer_size)},
    {.name = "http2_recv_timeout", .ctx = HY_CTX_HTTP | HY_CTX_SERVER, .args = HY_ARGS_1, .set = set_obsolete,
     .conf = HY_CONF_SRV, .post = &obs_recv},
    {0},
};

hy_module_t hy_http_v2_module = {
    .name = "http_v2",
    .directives = directives,
    .create_main_conf = create_main,
    .create_srv_conf = create_srv,
    .merge_srv_conf = merge_srv,
    .create_loc_conf = create_loc,
    .merge_loc_conf = merge_loc,
    .postconfiguration = postconfiguration,
};
