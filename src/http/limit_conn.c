/* limit_conn.c — nginx's limit_conn module (see limit_conn.h).
 *
 * `limit_conn_zone KEY zone=NAME:SIZE` declares a zone holding, per key, the number of requests being processed
 * (http/limit_table.h). In the PREACCESS phase, every `limit_conn ZONE N` of the location counts the request
 * under its key, or rejects it (limit_conn_status) when N are already counted; the count is given back when the
 * request's arena is cleared (the request is over, whatever ended it), and a node whose count drops to zero is
 * freed. A request rejected by one zone gives back what the zones before it counted. An empty key, or one longer
 * than 255 bytes, is not limited. */
#include <string.h>
#include "limit_conn.h"
#include "limit_table.h"
#include "limit_conf.h"
#include "core.h"
#include "phases.h"
#include "request.h"
#include "vars.h"
#include "../conf/zone.h"
#include "../core/log.h"

hy_module_t hy_http_limit_conn_module;

typedef struct lc_zone {
    hy_zone_t *zone;
    hy_ltable_t *sh;
    hy_complex_t key;
} lc_zone_t;

typedef struct lc_limit {
    lc_zone_t *z;
    int64_t conn;
} lc_limit_t;

typedef hy_limit_loc_t lc_loc_t; /* limits: lc_limit_t */

enum { ST_PASSED = 1, ST_REJECTED, ST_REJECTED_DRY_RUN };
static const hy_str_t status_names[] = {HY_STR(""), HY_STR("PASSED"), HY_STR("REJECTED"), HY_STR("REJECTED_DRY_RUN")};

typedef struct lc_hold { /* one count held by the request, given back when its arena is cleared */
    lc_zone_t *z;
    hy_lnode_t *node;
    uint64_t epoch;
    bool done;
} lc_hold_t;

typedef struct lc_ctx {
    int status;
    lc_hold_t *holds;
    size_t nholds;
} lc_ctx_t;

static int init_zone(hy_zone_t *z, void *old_data)
{
    lc_zone_t *c = z->data;
    if (old_data) {
        lc_zone_t *o = old_data;
        if (o->key.value.len != c->key.value.len || memcmp(o->key.value.ptr, c->key.value.ptr, c->key.value.len) != 0) {
            hy_log(HY_LOG_EMERG, "limit_conn_zone \"%s\" uses the \"%s\" key while previously it used the \"%s\" key",
                   z->name.ptr, c->key.value.ptr, o->key.value.ptr);
            return -1;
        }
        c->sh = o->sh;
        return 0;
    }
    c->sh = hy_ltable_create(z->slab, z->size, sizeof(uint32_t));
    return c->sh ? 0 : -1;
}

static void give_back(void *arg)
{
    lc_hold_t *h = arg;
    if (h->done)
        return;
    h->done = true;
    hy_slab_t *slab = h->z->zone->slab;
    hy_ltable_lock(slab, h->z->sh);
    if (h->z->sh->epoch == h->epoch) { /* else the table was reset since: the node is not in it any more */
        uint32_t *count = hy_lnode_data(h->node);
        if (*count)
            (*count)--;
        if (*count == 0)
            hy_ltable_remove(slab, h->z->sh, h->node);
    }
    hy_slab_unlock(slab);
}

static const lc_loc_t *loc_conf(hy_req_t *req)
{
    hy_http_loc_conf_t *lc = req->loc ? req->loc : req->srv ? req->srv->loc : NULL;
    return lc ? lc->loc_conf[hy_http_limit_conn_module.index] : NULL;
}

static int reject(hy_req_t *req, const lc_loc_t *lc, lc_ctx_t *ctx, lc_zone_t *z)
{
    for (size_t i = 0; i < ctx->nholds; i++)
        give_back(&ctx->holds[i]);
    __atomic_add_fetch(&z->sh->rejected, 1, __ATOMIC_RELAXED);
    if (lc->dry_run) {
        ctx->status = ST_REJECTED_DRY_RUN;
        return HY_DECLINED;
    }
    ctx->status = ST_REJECTED;
    return (int)lc->status;
}

static int handler(hy_req_t *req)
{
    const lc_loc_t *lc = loc_conf(req);
    if (lc == NULL || lc->limits == NULL)
        return HY_DECLINED;
    lc_ctx_t **slot = (lc_ctx_t **)hy_req_ctx(req, &hy_http_limit_conn_module);
    if (*slot)
        return HY_DECLINED; /* once per request */
    if (req->parent != NULL && *hy_req_ctx(req->parent, &hy_http_limit_conn_module) != NULL)
        return HY_DECLINED; /* nginx: a subrequest of a request limit_conn counted is not counted again */
    const lc_limit_t *limits = lc->limits->elts;
    size_t nl = lc->limits->nelts;
    lc_ctx_t *ctx = *slot = hy_pcalloc(req->pool, sizeof(*ctx));
    ctx->holds = hy_pcalloc(req->pool, sizeof(lc_hold_t) * nl);
    for (size_t i = 0; i < nl; i++) {
        lc_zone_t *z = limits[i].z;
        hy_str_t key;
        hy_vars_eval(req, &z->key, &key);
        if (key.len == 0)
            continue;
        if (key.len > 255) {
            hy_req_log(req, HY_LOG_ERR, "the value of the \"%s\" key is more than 255 bytes: \"%.*s\"",
                       z->key.value.ptr, (int)key.len, key.ptr);
            continue;
        }
        ctx->status = ST_PASSED;
        uint32_t hash = hy_ltable_hash(key.ptr, key.len);
        hy_slab_t *slab = z->zone->slab;
        hy_ltable_lock(slab, z->sh);
        hy_lnode_t *n = hy_ltable_find(z->sh, hash, key.ptr, key.len);
        if (n == NULL) {
            n = hy_ltable_insert(slab, z->sh, hash, key.ptr, key.len);
            if (n == NULL) {
                hy_slab_unlock(slab);
                hy_log(HY_LOG_ALERT, "could not allocate node in limit_conn_zone \"%s\"", z->zone->name.ptr);
                return reject(req, lc, ctx, z);
            }
        } else if (*(uint32_t *)hy_lnode_data(n) >= (uint64_t)limits[i].conn) {
            hy_slab_unlock(slab);
            hy_req_log(req, lc->log_level, "limiting connections%s by zone \"%s\"", lc->dry_run ? ", dry run," : "",
                       z->zone->name.ptr);
            return reject(req, lc, ctx, z);
        }
        (*(uint32_t *)hy_lnode_data(n))++;
        lc_hold_t *h = &ctx->holds[ctx->nholds++];
        h->z = z;
        h->node = n;
        h->epoch = z->sh->epoch;
        hy_slab_unlock(slab);
        __atomic_add_fetch(&z->sh->passed, 1, __ATOMIC_RELAXED);
        hy_pool_on_clear(req->pool, give_back, h);
    }
    return HY_DECLINED;
}

static void get_status(hy_req_t *req, hy_var_value_t *v, uintptr_t data)
{
    (void)data;
    lc_ctx_t *ctx = req->ctx ? req->ctx[hy_http_limit_conn_module.index] : NULL;
    if (ctx == NULL || ctx->status == 0) {
        v->ptr = "", v->len = 0, v->not_found = true;
        return;
    }
    v->ptr = status_names[ctx->status].ptr, v->len = status_names[ctx->status].len, v->not_found = false;
}

static lc_zone_t *zone_data(hy_conf_t *cf, hy_zone_t *z)
{
    if (z->data == NULL) {
        lc_zone_t *c = hy_pcalloc(cf->pool, sizeof(*c));
        c->zone = z;
        z->data = c;
        z->init = init_zone;
    }
    return z->data;
}

static int set_zone(hy_conf_t *cf, const hy_directive_t *d, void *conf)
{
    (void)conf;
    size_t n;
    hy_str_t *a = hy_conf_args(cf, &n);
    hy_str_t name = HY_STR_NULL;
    size_t size = 0;
    for (size_t i = 2; i < n; i++) {
        if (a[i].len >= 5 && memcmp(a[i].ptr, "zone=", 5) == 0) {
            if (hy_zone_parse_named(cf, a[i], &name, &size) < 0)
                return -1;
        } else {
            return hy_conf_error(cf, "invalid parameter \"%s\"", a[i].ptr);
        }
    }
    if (name.len == 0)
        return hy_conf_error(cf, "\"%s\" must have \"zone\" parameter", d->name);
    hy_zone_t *z = hy_zone_claim(cf, name, size, &hy_http_limit_conn_module);
    if (z == NULL)
        return -1;
    lc_zone_t *c = zone_data(cf, z);
    if (c->key.value.ptr)
        return hy_conf_error(cf, "%s \"%.*s\" is already bound to key \"%s\"", d->name, (int)name.len, name.ptr,
                             c->key.value.ptr);
    return hy_vars_compile(cf, a[1], &c->key);
}

static int set_limit(hy_conf_t *cf, const hy_directive_t *d, void *conf)
{
    lc_loc_t *lc = conf;
    size_t n;
    hy_str_t *a = hy_conf_args(cf, &n);
    hy_zone_t *z = hy_zone_claim(cf, a[1], 0, &hy_http_limit_conn_module);
    if (z == NULL)
        return -1;
    lc_zone_t *c = zone_data(cf, z);
    if (lc->limits == NULL)
        lc->limits = hy_array_create(cf->pool, 2, sizeof(lc_limit_t));
    lc_limit_t *ls = lc->limits->elts;
    for (size_t i = 0; i < lc->limits->nelts; i++)
        if (ls[i].z == c)
            return hy_conf_error(cf, "\"%s\" directive is duplicate", d->name);
    int64_t v = hy_parse_int(a[2].ptr, a[2].len);
    if (v <= 0)
        return hy_conf_error(cf, "invalid number of connections \"%s\"", a[2].ptr);
    if (v > 65535)
        return hy_conf_error(cf, "connection limit must be less 65536");
    lc_limit_t *l = hy_array_push(lc->limits);
    l->z = c;
    l->conn = v;
    return 0;
}

static int postconfiguration(hy_conf_t *cf)
{
    if (hy_vars_define(cf, HY_STR("limit_conn_status"), get_status, 0, HY_VAR_NOCACHE) < 0)
        return -1;
    return hy_http_phase_add(cf, HY_PHASE_PREACCESS, handler);
}

const hy_ltable_t *hy_limit_conn_table(const hy_zone_t *zone)
{
    if (zone == NULL || zone->tag != &hy_http_limit_conn_module || zone->data == NULL)
        return NULL;
    return ((const lc_zone_t *)zone->data)->sh;
}

static const hy_directive_t lc_directives[] = {
    {.name = "limit_conn_zone", .ctx = HY_CTX_HTTP, .args = HY_ARGS_2, .set = set_zone, .conf = HY_CONF_HTTP_MAIN},
    {.name = "limit_conn", .ctx = HY_CTX_HTTP_ANY, .args = HY_ARGS_2, .set = set_limit, .conf = HY_CONF_LOC},
    {.name = "limit_conn_status",
     .ctx = HY_CTX_HTTP_ANY,
     .args = HY_ARGS_1,
     .set = hy_slot_num,
     .conf = HY_CONF_LOC,
     .offset = offsetof(lc_loc_t, status),
     .post = &hy_limit_status_bounds},
    {.name = "limit_conn_log_level",
     .ctx = HY_CTX_HTTP_ANY,
     .args = HY_ARGS_1,
     .set = hy_slot_enum,
     .conf = HY_CONF_LOC,
     .offset = offsetof(lc_loc_t, log_level),
     .post = hy_limit_log_levels},
    {.name = "limit_conn_dry_run",
     .ctx = HY_CTX_HTTP_ANY,
     .args = HY_ARGS_FLAG,
     .set = hy_slot_flag,
     .conf = HY_CONF_LOC,
     .offset = offsetof(lc_loc_t, dry_run)},
    {0},
};

hy_module_t hy_http_limit_conn_module = {
    .name = "http_limit_conn",
    .directives = lc_directives,
    .create_loc_conf = hy_limit_loc_create,
    .merge_loc_conf = hy_limit_loc_merge,
    .postconfiguration = postconfiguration,
};
