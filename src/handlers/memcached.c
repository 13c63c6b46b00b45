/* memcached.c — nginx's memcached module (see memcached.h). As nginx's:
 *   - only GET and HEAD (else 405); the client's body is discarded; the key is $memcached_key, which must be set
 *     (else 500, "the "$memcached_key" variable is not set");
 *   - a value found is a 200 with the URI's type (types{}, default_type), its length, "Content-Encoding: gzip" when
 *     its flags have a bit of memcached_gzip_flag, and byte ranges (nginx's force_ranges);
 *   - a key not found is nginx's own 404 (error_page applies), and the connection goes back to the pool;
 *   - never buffered (at most memcached_buffer_size read ahead), no temp file, no cache, no request fields sent;
 *   - memcached_next_upstream: error, timeout, invalid_response, not_found, off (default error timeout). */
#include <string.h>
#include "memcached.h"
#include "appconf.h"
#include "../upstream/memcached.h"
#include "../http/vars.h"

typedef struct mc_loc {
    hy_upstream_group_t *group; /* memcached_pass; NULL: none */
    int key_index;              /* $memcached_key, HY_UNSET before memcached_pass */
    int64_t connect_timeout, send_timeout, read_timeout, buffer_size;
    int socket_keepalive, next_upstream;
    int64_t next_tries, next_timeout, gzip_flag;
    hy_complex_t *bind;
} mc_loc_t;

static const hy_enum_t next_names[] = {
    {"error", HY_UPS_FT_ERROR},   {"timeout", HY_UPS_FT_TIMEOUT}, {"invalid_response", HY_UPS_FT_INVALID_HEADER},
    {"not_found", HY_UPS_FT_404}, {"off", HY_UPS_FT_OFF},         {NULL, 0},
};

static int on_head(hy_ureq_t *u)
{
    hy_req_t *req = u->req;
    if (u->status == 404)
        return 404; /* nginx's intercept_404: its own page, or the error_page */
    const hy_http_loc_conf_t *lc = req->loc->loc_conf[hy_http_core_module.index];
    req->content_type = hy_http_mime_type(lc, req->uri.ptr, req->uri.len);
    req->content_length_n = u->resp_length;
    req->last_modified = -1;
    req->accept_ranges = true;
    if (hy_upstream_memcached_state(u)->gzipped)
        hy_req_add_header(req, HY_STR("Content-Encoding"), HY_STR("gzip"));
    return 0;
}

static int mc_handler(hy_req_t *req)
{
    const mc_loc_t *ml = req->loc->loc_conf[hy_http_memcached_module.index];
    if (req->method_id != HY_M_GET && req->method_id != HY_M_HEAD)
        return 405;
    hy_ureq_t *u = hy_upstream_create(req);
    u->group = ml->group;
    u->data = (void *)ml;
    u->on_head = on_head;
    u->connect_timeout_ms = ml->connect_timeout;
    u->send_timeout_ms = ml->send_timeout;
    u->read_timeout_ms = ml->read_timeout;
    u->buffer_size = ml->buffer_size; /* unbuffered: also the read-ahead bound */
    u->discard_body = true;
    u->intercept_errors = true;
    u->socket_keepalive = ml->socket_keepalive;
    u->next_upstream = ml->next_upstream;
    u->next_upstream_tries = ml->next_tries;
    u->next_upstream_timeout_ms = ml->next_timeout;
    u->method = req->method;
    u->uri = req->target;
    hy_uconf_bind_value(ml->bind, u);
    hy_upstream_memcached_init(u, ml->key_index, (uint64_t)ml->gzip_flag);
    return hy_upstream_start(u);
}

static int set_pass(hy_conf_t *cf, const hy_directive_t *d, void *conf)
{
    (void)d;
    mc_loc_t *ml = conf;
    hy_http_loc_conf_t *lc = cf->loc_conf[hy_http_core_module.index];
    size_t n;
    hy_str_t *a = hy_conf_args(cf, &n);
    if (ml->group != NULL || lc->handler != NULL)
        return hy_conf_error(cf, "\"memcached_pass\" directive is duplicate");
    bool tls;
    ml->group = hy_app_target_group(cf, a[1], false, &tls);
    if (ml->group == NULL)
        return -1;
    lc->handler = mc_handler;
    lc->auto_redirect = lc->name.len && lc->name.ptr[lc->name.len - 1] == '/';
    ml->key_index = hy_vars_index(cf, HY_STR("memcached_key"));
    return ml->key_index < 0 ? -1 : 0;
}

#define MC_SLOT(NAME, SET, FIELD)                                                                                      \
    {                                                                                                                  \
        .name = NAME, .ctx = HY_CTX_HTTP_ANY, .args = HY_ARGS_1, .set = SET, .conf = HY_CONF_LOC,                      \
        .offset = offsetof(mc_loc_t, FIELD)                                                                            \
    }

static const hy_directive_t mc_directives[] = {
    {.name = "memcached_pass", .ctx = HY_CTX_LOC | HY_CTX_LIF, .args = HY_ARGS_1, .set = set_pass, .conf = HY_CONF_LOC},
    {.name = "memcached_bind",
     .ctx = HY_CTX_HTTP_ANY,
     .args = HY_ARGS_12,
     .set = hy_uconf_set_bind,
     .conf = HY_CONF_LOC,
     .offset = offsetof(mc_loc_t, bind)},
    {.name = "memcached_socket_keepalive",
     .ctx = HY_CTX_HTTP_ANY,
     .args = HY_ARGS_FLAG,
     .set = hy_slot_flag,
     .conf = HY_CONF_LOC,
     .offset = offsetof(mc_loc_t, socket_keepalive)},
    MC_SLOT("memcached_connect_timeout", hy_slot_msec, connect_timeout),
    MC_SLOT("memcached_send_timeout", hy_slot_msec, send_timeout),
    MC_SLOT("memcached_read_timeout", hy_slot_msec, read_timeout),
    MC_SLOT("memcached_buffer_size", hy_slot_size, buffer_size),
    {.name = "memcached_next_upstream",
     .ctx = HY_CTX_HTTP_ANY,
     .args = HY_ARGS_1MORE,
     .set = hy_uconf_set_mask,
     .conf = HY_CONF_LOC,
     .offset = offsetof(mc_loc_t, next_upstream),
     .post = next_names},
    MC_SLOT("memcached_next_upstream_tries", hy_slot_num, next_tries),
    MC_SLOT("memcached_next_upstream_timeout", hy_slot_msec, next_timeout),
    MC_SLOT("memcached_gzip_flag", hy_slot_num, gzip_flag),
    {0},
};

static void *create_loc(hy_conf_t *cf)
{
    mc_loc_t *ml = hy_pcalloc(cf->pool, sizeof(*ml));
    ml->key_index = HY_UNSET;
    ml->connect_timeout = ml->send_timeout = ml->read_timeout = HY_UNSET_MSEC;
    ml->next_timeout = HY_UNSET_MSEC;
    ml->buffer_size = HY_UNSET_SIZE;
    ml->socket_keepalive = ml->next_upstream = HY_UNSET;
    ml->next_tries = ml->gzip_flag = HY_UNSET;
    return ml;
}

static int merge_loc(hy_conf_t *cf, void *parent, void *child)
{
    (void)cf;
    mc_loc_t *p = parent, *c = child;
    if (c->group == NULL) /* nginx: the upstream and the key are inherited (an "if" in a location that passes) */
        c->group = p->group, c->key_index = p->key_index;
    hy_merge_value(c->connect_timeout, p->connect_timeout, 60000);
    hy_merge_value(c->send_timeout, p->send_timeout, 60000);
    hy_merge_value(c->read_timeout, p->read_timeout, 60000);
    hy_merge_value(c->buffer_size, p->buffer_size, 4096);
    hy_merge_value(c->socket_keepalive, p->socket_keepalive, 0);
    hy_merge_value(c->next_upstream, p->next_upstream, HY_UPS_FT_ERROR | HY_UPS_FT_TIMEOUT);
    if (c->next_upstream & HY_UPS_FT_OFF)
        c->next_upstream = 0;
    hy_merge_value(c->next_tries, p->next_tries, 0);
    hy_merge_value(c->next_timeout, p->next_timeout, 0);
    hy_merge_value(c->gzip_flag, p->gzip_flag, 0);
    if (c->bind == NULL)
        c->bind = p->bind;
    return 0;
}

hy_module_t hy_http_memcached_module = {
    .name = "http_memcached",
    .directives = mc_directives,
    .create_loc_conf = create_loc,
    .merge_loc_conf = merge_loc,
};
