/* limit_req.c — nginx's limit_req module (see limit_req.h).
 *
 * `limit_req_zone KEY zone=NAME:SIZE rate=Nr/s|Nr/m` declares a zone (conf/zone.h) holding one node per key
 * (http/limit_table.h): the time of its last accounted request and its excess, in thousandths of a request, as
 * nginx keeps them. A request of a location with `limit_req zone=NAME [burst=N] [nodelay|delay=N]` (several
 * allowed, all checked, in the PREACCESS phase) looks its key up in each zone: the excess leaks at the rate
 * since the last request and grows by one request; above the burst the request is rejected (limit_req_status);
 * above `delay` it waits on a timer until the excess would have leaked down to it, watching its connection for a
 * client that goes away meanwhile. Only the last zone is accounted at lookup; the earlier ones are held (a count
 * on their node) and accounted once every zone passed, exactly nginx's order, so a request rejected by a later
 * zone costs nothing in the earlier ones.
 *
 * A zone that runs out of room frees the least recently used nodes that have leaked to zero (one or two per new
 * key), then the least recently used one whatever its state; "could not allocate node" is logged only when even
 * that leaves no room. An empty key is not limited. */
#include <string.h>
#include "limit_req.h"
#include "limit_table.h"
#include "limit_conf.h"
#include "core.h"
#include "phases.h"
#include "request.h"
#include "vars.h"
#include "../conf/zone.h"
#include "../core/clock.h"
#include "../core/log.h"

hy_module_t hy_http_limit_req_module;

typedef struct lr_node {
    int64_t last;   /* monotonic ms of the last accounted request */
    int64_t excess; /* thousandths of a request */
    uint32_t count; /* requests between lookup and accounting (not evicted meanwhile) */
} lr_node_t;

typedef struct lr_zone { /* zone->data: this generation's view, in process memory */
    hy_zone_t *zone;
    hy_ltable_t *sh; /* in the zone */
    hy_complex_t key;
    int64_t rate; /* thousandths of a request per second */
} lr_zone_t;

typedef struct lr_limit {
    lr_zone_t *z;
    int64_t burst, delay; /* thousandths of a request */
} lr_limit_t;

typedef hy_limit_loc_t lr_loc_t; /* limits: lr_limit_t */

enum { ST_PASSED = 1, ST_DELAYED, ST_REJECTED, ST_DELAYED_DRY_RUN, ST_REJECTED_DRY_RUN };
static const hy_str_t status_names[] = {
    HY_STR(""),         HY_STR("PASSED"),          HY_STR("DELAYED"),
    HY_STR("REJECTED"), HY_STR("DELAYED_DRY_RUN"), HY_STR("REJECTED_DRY_RUN"),
};

typedef struct lr_ctx { /* per request */
    int status;
    hy_req_t *req;
    hy_timer_t timer;
    hy_loop_t *loop;
    hy_sock_cb saved_on_read; /* the protocol's read callback and data, while the request waits */
    bool hooked;              /* the socket's reads are ours while the request waits (HTTP/1.x only) */
    void *saved_data;
    bool saved_reading, waiting;
    lr_node_t **held; /* per limit: the node held between lookup and accounting */
} lr_ctx_t;

#define NODELAY (INT64_MAX / 1000)

/* ---------------- the zone ---------------- */

static int init_zone(hy_zone_t *z, void *old_data)
{
    lr_zone_t *c = z->data;
    if (old_data) {
        lr_zone_t *o = old_data;
        if (!hy_str_eq(c->key.value, "") && (o->key.value.len != c->key.value.len ||
                                             memcmp(o->key.value.ptr, c->key.value.ptr, c->key.value.len) != 0)) {
            hy_log(HY_LOG_EMERG, "limit_req \"%s\" uses the \"%s\" key while previously it used the \"%s\" key",
                   z->name.ptr, c->key.value.ptr, o->key.value.ptr);
            return -1;
        }
        c->sh = o->sh;
        return 0;
    }
    c->sh = hy_ltable_create(z->slab, z->size, sizeof(lr_node_t));
    return c->sh ? 0 : -1;
}

/* nginx's ngx_http_limit_req_expire: n 1 frees one or two nodes that leaked to zero, n 0 first frees the least
 * recently used node whatever its excess. Nodes being looked at by a request (count) stop the walk. */
static void expire(lr_zone_t *c, int n, int64_t now)
{
    hy_ltable_t *t = c->sh;
    while (n < 3) {
        hy_lnode_t *ln = t->lru_tail;
        if (ln == NULL)
            return;
        lr_node_t *lr = hy_lnode_data(ln);
        if (lr->count)
            return;
        if (n++ != 0) {
            int64_t ms = now - lr->last;
            if (ms < 0)
                ms = -ms;
            if (ms < 60000)
                return;
            if (lr->excess - c->rate * ms / 1000 > 0)
                return;
        }
        hy_ltable_remove(c->zone->slab, t, ln);
    }
}

enum { R_OK, R_AGAIN, R_BUSY, R_ERROR };

/* nginx's ngx_http_limit_req_lookup, under the zone's lock. account: the last limit (its excess is stored now);
 * else the node is held (count) and *held set, for account() to finish. */
static int lookup(const lr_limit_t *l, uint32_t hash, hy_str_t key, int64_t *ep, bool account, lr_node_t **held)
{
    lr_zone_t *c = l->z;
    hy_ltable_t *t = c->sh;
    int64_t now = (int64_t)hy_clock_now_ms();
    hy_lnode_t *ln = hy_ltable_find(t, hash, key.ptr, key.len);
    if (ln) {
        hy_ltable_touch(t, ln);
        lr_node_t *lr = hy_lnode_data(ln);
        int64_t ms = now - lr->last;
        if (ms < -60000)
            ms = 1;
        else if (ms < 0)
            ms = 0;
        int64_t excess = lr->excess - c->rate * ms / 1000 + 1000;
        if (excess < 0)
            excess = 0;
        *ep = excess;
        if (excess > l->burst)
            return R_BUSY;
        if (account) {
            lr->excess = excess;
            if (ms)
                lr->last = now;
            return R_OK;
        }
        lr->count++;
        *held = lr;
        return R_AGAIN;
    }
    *ep = 0;
    expire(c, 1, now);
    ln = hy_ltable_insert(c->zone->slab, t, hash, key.ptr, key.len);
    if (ln == NULL) {
        expire(c, 0, now);
        ln = hy_ltable_insert(c->zone->slab, t, hash, key.ptr, key.len);
        if (ln == NULL) {
            hy_log(HY_LOG_ALERT, "could not allocate node in limit_req zone \"%s\"", c->zone->name.ptr);
            return R_ERROR;
        }
    }
    lr_node_t *lr = hy_lnode_data(ln);
    lr->excess = 0;
    if (account) {
        lr->last = now;
        lr->count = 0;
        return R_OK;
    }
    lr->last = 0;
    lr->count = 1;
    *held = lr;
    return R_AGAIN;
}

/* Give back the nodes held by limits [0, n) (a later limit rejected the request). */
static void release(const lr_limit_t *limits, size_t n, lr_ctx_t *ctx)
{
    for (size_t i = 0; i < n; i++) {
        if (ctx->held[i] == NULL)
            continue;
        hy_ltable_lock(limits[i].z->zone->slab, limits[i].z->sh);
        if (ctx->held[i]->count)
            ctx->held[i]->count--;
        hy_slab_unlock(limits[i].z->zone->slab);
        ctx->held[i] = NULL;
    }
}

/* nginx's ngx_http_limit_req_account: account the held limits [0, n); the longest delay any limit (the last
 * one's excess in *ep included) asks for, in ms; *lp / *ep: the limit and excess that asked for it. */
static int64_t account(const lr_limit_t *limits, size_t n, int64_t *ep, const lr_limit_t **lp, lr_ctx_t *ctx)
{
    int64_t max_delay = 0;
    if (*ep > (*lp)->delay)
        max_delay = (*ep - (*lp)->delay) * 1000 / (*lp)->z->rate;
    while (n--) {
        lr_node_t *lr = ctx->held[n];
        if (lr == NULL)
            continue;
        const lr_limit_t *l = &limits[n];
        hy_ltable_lock(l->z->zone->slab, l->z->sh);
        int64_t now = (int64_t)hy_clock_now_ms();
        int64_t ms = now - lr->last;
        if (ms < -60000)
            ms = 1;
        else if (ms < 0)
            ms = 0;
        int64_t excess = lr->excess - l->z->rate * ms / 1000 + 1000;
        if (excess < 0)
            excess = 0;
        if (ms)
            lr->last = now;
        lr->excess = excess;
        if (lr->count)
            lr->count--;
        hy_slab_unlock(l->z->zone->slab);
        ctx->held[n] = NULL;
        if (excess <= l->delay)
            continue;
        int64_t delay = (excess - l->delay) * 1000 / l->z->rate;
        if (delay > max_delay) {
            max_delay = delay;
            *ep = excess;
            *lp = l;
        }
    }
    return max_delay;
}

/* ---------------- the request ---------------- */

static const lr_loc_t *loc_conf(hy_req_t *req)
{
    hy_http_loc_conf_t *lc = req->loc ? req->loc : req->srv ? req->srv->loc : NULL;
    return lc ? lc->loc_conf[hy_http_limit_req_module.index] : NULL;
}

static void count(lr_zone_t *z, uint64_t *counter)
{
    __atomic_add_fetch(counter, 1, __ATOMIC_RELAXED);
    (void)z;
}

static void stop_waiting(lr_ctx_t *ctx)
{
    hy_sock_t *s = &ctx->req->conn->sock;
    hy_timer_unlink(ctx->loop, &ctx->timer);
    if (!ctx->waiting)
        return;
    ctx->waiting = false;
    if (!ctx->hooked) /* nothing was hooked: a subrequest's shadow connection, or an HTTP/2 stream */
        return;
    s->on_read = ctx->saved_on_read;
    s->data = ctx->saved_data;
    if (ctx->saved_reading)
        hy_sock_read_start(s, s->on_read);
    else
        hy_sock_read_stop(s);
}

static void on_delay_done(hy_timer_t *t)
{
    lr_ctx_t *ctx = t->data;
    hy_req_t *req = ctx->req;
    if (req->conn->proto == NULL) /* the connection closed in this iteration */
        return;
    stop_waiting(ctx);
    hy_http_phases_resume(req);
}

/* While the request waits, its connection is watched (nginx's ngx_http_test_reading): a client that closes it
 * ends the request (499); bytes it sends meanwhile (a pipelined request) stay buffered. */
static void on_client_read(hy_sock_t *s, const char *err)
{
    lr_ctx_t *ctx = s->data;
    if (!ctx->waiting || err == NULL)
        return;
    if (err == hy_err_buf_full) {
        hy_sock_read_stop(s);
        return;
    }
    hy_req_t *req = ctx->req;
    stop_waiting(ctx);
    hy_req_log(req, HY_LOG_INFO, "client prematurely closed connection while delaying request");
    req->status = 499;
    hy_req_ops(req)->abort(req);
}

static void on_clear(void *arg)
{
    lr_ctx_t *ctx = arg;
    hy_timer_unlink(ctx->loop, &ctx->timer); /* the connection may be gone: only the loop is touched */
}

static int delay_request(hy_req_t *req, lr_ctx_t *ctx, int64_t delay_ms)
{
    hy_sock_t *s = &req->conn->sock;
    ctx->req = req;
    ctx->loop = s->loop;
    ctx->timer.cb = on_delay_done;
    ctx->timer.data = ctx;
    hy_pool_on_clear(req->pool, on_clear, ctx);
    ctx->saved_on_read = s->on_read;
    ctx->saved_data = s->data;
    ctx->saved_reading = s->is_reading;
    ctx->waiting = true;
    /* a subrequest's connection is a shadow without a socket (http/subrequest.h); an HTTP/2 socket carries other
     * streams (the protocol resets this one if the client goes, and the pool clean-up unlinks the timer) */
    ctx->hooked = req->sr == NULL && !(req->conn->ops && req->conn->ops->multiplexed);
    if (ctx->hooked) {
        s->data = ctx;
        hy_sock_read_start(s, on_client_read);
    }
    hy_timer_link(s->loop, &ctx->timer, (uint64_t)delay_ms);
    return HY_AGAIN;
}

static int handler(hy_req_t *req)
{
    const lr_loc_t *lc = loc_conf(req);
    if (lc == NULL || lc->limits == NULL)
        return HY_DECLINED;
    lr_ctx_t **slot = (lr_ctx_t **)hy_req_ctx(req, &hy_http_limit_req_module);
    if (*slot && (*slot)->status)
        return HY_DECLINED; /* once per request (a delayed one comes back here when its timer fires) */
    if (req->parent != NULL) { /* nginx: a subrequest of a request limit_req already judged is not limited again */
        lr_ctx_t *pc = *(lr_ctx_t **)hy_req_ctx(req->parent, &hy_http_limit_req_module);
        if (pc && pc->status)
            return HY_DECLINED;
    }
    const lr_limit_t *limits = lc->limits->elts;
    size_t nl = lc->limits->nelts;
    lr_ctx_t *ctx = *slot;
    if (ctx == NULL) { /* one allocation for the context and its held-node slots */
        ctx = *slot = hy_pcalloc(req->pool, sizeof(*ctx) + sizeof(lr_node_t *) * nl);
        ctx->req = req;
        ctx->held = (lr_node_t **)(ctx + 1);
    } else {
        ctx->held = hy_pcalloc(req->pool, sizeof(lr_node_t *) * nl);
    }
    int64_t excess = 0;
    int rc = -1; /* declined: no limit had a key */
    size_t n;
    for (n = 0; n < nl; n++) {
        const lr_limit_t *l = &limits[n];
        hy_str_t key;
        hy_vars_eval(req, &l->z->key, &key);
        if (key.len == 0)
            continue;
        if (key.len > 65535) {
            hy_req_log(req, HY_LOG_ERR, "the value of the \"%s\" key is more than 65535 bytes: \"%.*s\"",
                       l->z->key.value.ptr, (int)key.len, key.ptr);
            continue;
        }
        uint32_t hash = hy_ltable_hash(key.ptr, key.len);
        hy_ltable_lock(l->z->zone->slab, l->z->sh);
        rc = lookup(l, hash, key, &excess, n == nl - 1, &ctx->held[n]);
        hy_slab_unlock(l->z->zone->slab);
        if (rc != R_AGAIN)
            break;
    }
    if (rc == -1)
        return HY_DECLINED;
    if (rc == R_BUSY || rc == R_ERROR) {
        const lr_limit_t *l = &limits[n];
        if (rc == R_BUSY)
            hy_req_log(req, lc->log_level, "limiting requests%s, excess: %lld.%03lld by zone \"%s\"",
                       lc->dry_run ? ", dry run" : "", (long long)(excess / 1000), (long long)(excess % 1000),
                       l->z->zone->name.ptr);
        release(limits, n, ctx);
        count(l->z, &l->z->sh->rejected);
        if (lc->dry_run) {
            ctx->status = ST_REJECTED_DRY_RUN;
            return HY_DECLINED;
        }
        ctx->status = ST_REJECTED;
        return (int)lc->status;
    }
    if (rc == R_AGAIN)
        excess = 0;
    const lr_limit_t *which = &limits[n < nl ? n : nl - 1];
    int64_t delay = account(limits, n, &excess, &which, ctx);
    if (delay == 0) {
        ctx->status = ST_PASSED;
        count(which->z, &which->z->sh->passed);
        return HY_DECLINED;
    }
    int level = lc->log_level == HY_LOG_INFO ? HY_LOG_INFO : lc->log_level + 1;
    hy_req_log(req, level, "delaying request%s, excess: %lld.%03lld, by zone \"%s\"", lc->dry_run ? ", dry run" : "",
               (long long)(excess / 1000), (long long)(excess % 1000), which->z->zone->name.ptr);
    count(which->z, &which->z->sh->delayed);
    if (lc->dry_run) {
        ctx->status = ST_DELAYED_DRY_RUN;
        return HY_DECLINED;
    }
    ctx->status = ST_DELAYED;
    return delay_request(req, ctx, delay);
}

static void get_status(hy_req_t *req, hy_var_value_t *v, uintptr_t data)
{
    (void)data;
    lr_ctx_t *ctx = req->ctx ? req->ctx[hy_http_limit_req_module.index] : NULL;
    if (ctx == NULL || ctx->status == 0) {
        v->ptr = "", v->len = 0, v->not_found = true;
        return;
    }
    v->ptr = status_names[ctx->status].ptr, v->len = status_names[ctx->status].len, v->not_found = false;
}

/* ---------------- configuration ---------------- */

/* "Nr/s" or "Nr/m" → thousandths of a request per second; -1 when invalid */
static int64_t parse_rate(hy_str_t v)
{
    if (v.len < 3 || v.ptr[v.len - 2] != '/' || v.ptr[v.len - 3] != 'r')
        return -1;
    int scale;
    if (v.ptr[v.len - 1] == 's')
        scale = 1;
    else if (v.ptr[v.len - 1] == 'm')
        scale = 60;
    else
        return -1;
    int64_t n = hy_parse_int(v.ptr, v.len - 3);
    if (n <= 0 || n > INT64_MAX / 1000000)
        return -1;
    return n * 1000 / scale;
}

static int set_zone(hy_conf_t *cf, const hy_directive_t *d, void *conf)
{
    (void)conf;
    size_t n;
    hy_str_t *a = hy_conf_args(cf, &n);
    hy_str_t name = HY_STR_NULL;
    size_t size = 0;
    int64_t rate = 0;
    for (size_t i = 2; i < n; i++) {
        if (a[i].len >= 5 && memcmp(a[i].ptr, "zone=", 5) == 0) {
            if (hy_zone_parse_named(cf, a[i], &name, &size) < 0)
                return -1;
        } else if (a[i].len >= 5 && memcmp(a[i].ptr, "rate=", 5) == 0) {
            rate = parse_rate((hy_str_t){a[i].ptr + 5, a[i].len - 5});
            if (rate <= 0)
                return hy_conf_error(cf, "invalid rate \"%s\"", a[i].ptr);
        } else if (hy_str_eq(a[i], "sync")) {
            return hy_conf_error(cf, "invalid parameter \"%s\": zone synchronization is not supported", a[i].ptr);
        } else {
            return hy_conf_error(cf, "invalid parameter \"%s\"", a[i].ptr);
        }
    }
    if (name.len == 0)
        return hy_conf_error(cf, "\"%s\" must have \"zone\" parameter", d->name);
    if (rate == 0)
        rate = 1000; /* nginx's default: 1r/s (reached with "zone=... zone=...": three words, no rate) */
    hy_zone_t *z = hy_zone_claim(cf, name, size, &hy_http_limit_req_module);
    if (z == NULL)
        return -1;
    lr_zone_t *c = z->data;
    if (c && c->key.value.ptr)
        return hy_conf_error(cf, "%s \"%.*s\" is already bound to key \"%s\"", d->name, (int)name.len, name.ptr,
                             c->key.value.ptr);
    if (c == NULL) {
        c = hy_pcalloc(cf->pool, sizeof(*c));
        c->zone = z;
        z->data = c;
        z->init = init_zone;
    }
    c->rate = rate;
    return hy_vars_compile(cf, a[1], &c->key);
}

static int set_limit(hy_conf_t *cf, const hy_directive_t *d, void *conf)
{
    lr_loc_t *lc = conf;
    size_t n;
    hy_str_t *a = hy_conf_args(cf, &n);
    hy_zone_t *z = NULL;
    int64_t burst = 0, delay = 0;
    for (size_t i = 1; i < n; i++) {
        if (a[i].len >= 5 && memcmp(a[i].ptr, "zone=", 5) == 0) {
            hy_str_t name = {a[i].ptr + 5, a[i].len - 5};
            z = hy_zone_claim(cf, name, 0, &hy_http_limit_req_module);
            if (z == NULL)
                return -1;
        } else if (a[i].len >= 6 && memcmp(a[i].ptr, "burst=", 6) == 0) {
            burst = hy_parse_int(a[i].ptr + 6, a[i].len - 6);
            if (burst <= 0 || burst > INT32_MAX)
                return hy_conf_error(cf, "invalid burst value \"%s\"", a[i].ptr);
        } else if (a[i].len >= 6 && memcmp(a[i].ptr, "delay=", 6) == 0) {
            delay = hy_parse_int(a[i].ptr + 6, a[i].len - 6);
            if (delay <= 0 || delay > INT32_MAX)
                return hy_conf_error(cf, "invalid delay value \"%s\"", a[i].ptr);
        } else if (hy_str_eq(a[i], "nodelay")) {
            delay = NODELAY;
        } else {
            return hy_conf_error(cf, "invalid parameter \"%s\"", a[i].ptr);
        }
    }
    if (z == NULL)
        return hy_conf_error(cf, "\"%s\" must have \"zone\" parameter", d->name);
    if (z->data == NULL) { /* declared further down (or never: "zero size shared memory zone" later) */
        lr_zone_t *c = hy_pcalloc(cf->pool, sizeof(*c));
        c->zone = z;
        c->rate = 1000;
        z->data = c;
        z->init = init_zone;
    }
    if (lc->limits == NULL)
        lc->limits = hy_array_create(cf->pool, 2, sizeof(lr_limit_t));
    lr_limit_t *ls = lc->limits->elts;
    for (size_t i = 0; i < lc->limits->nelts; i++)
        if (ls[i].z->zone == z)
            return hy_conf_error(cf, "\"%s\" directive is duplicate", d->name);
    lr_limit_t *l = hy_array_push(lc->limits);
    l->z = z->data;
    l->burst = burst * 1000;
    l->delay = delay == NODELAY ? NODELAY : delay * 1000;
    return 0;
}

static int postconfiguration(hy_conf_t *cf)
{
    if (hy_vars_define(cf, HY_STR("limit_req_status"), get_status, 0, HY_VAR_NOCACHE) < 0)
        return -1;
    return hy_http_phase_add(cf, HY_PHASE_PREACCESS, handler);
}

const hy_ltable_t *hy_limit_req_table(const hy_zone_t *zone)
{
    if (zone == NULL || zone->tag != &hy_http_limit_req_module || zone->data == NULL)
        return NULL;
    return ((const lr_zone_t *)zone->data)->sh;
}

static const hy_directive_t lr_directives[] = {
    {.name = "limit_req_zone",
     .ctx = HY_CTX_HTTP,
     .args = HY_ARGS_3 | HY_ARGS_4,
     .set = set_zone,
     .conf = HY_CONF_HTTP_MAIN},
    {.name = "limit_req", .ctx = HY_CTX_HTTP_ANY, .args = HY_ARGS_123, .set = set_limit, .conf = HY_CONF_LOC},
    {.name = "limit_req_status",
     .ctx = HY_CTX_HTTP_ANY,
     .args = HY_ARGS_1,
     .set = hy_slot_num,
     .conf = HY_CONF_LOC,
     .offset = offsetof(lr_loc_t, status),
     .post = &hy_limit_status_bounds},
    {.name = "limit_req_log_level",
     .ctx = HY_CTX_HTTP_ANY,
     .args = HY_ARGS_1,
     .set = hy_slot_enum,
     .conf = HY_CONF_LOC,
     .offset = offsetof(lr_loc_t, log_level),
     .post = hy_limit_log_levels},
    {.name = "limit_req_dry_run",
     .ctx = HY_CTX_HTTP_ANY,
     .args = HY_ARGS_FLAG,
     .set = hy_slot_flag,
     .conf = HY_CONF_LOC,
     .offset = offsetof(lr_loc_t, dry_run)},
    {0},
};

hy_module_t hy_http_limit_req_module = {
    .name = "http_limit_req",
    .directives = lr_directives,
    .create_loc_conf = hy_limit_loc_create,
    .merge_loc_conf = hy_limit_loc_merge,
    .postconfiguration = postconfiguration,
};
