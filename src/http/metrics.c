/* metrics.c — "metrics;" (Prometheus text format 0.0.4) and the per-request counting behind it (see metrics.h). */
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "metrics.h"
#include "request.h"
#include "phases.h"
#include "../core/clock.h"
#include "../core/stats.h"
#include "../conf/cycle.h"
#include "../conf/zone.h"
#include "limit_req.h"
#include "limit_conn.h"
#include "limit_table.h"

#define REQ_KEY "http_requests\t" /* series key prefix: one per server name, 4 counters (2xx 3xx 4xx 5xx) */

typedef struct metrics_srv {
    uint32_t base; /* the server's first counter in ext[] (HY_STATS_SINK until init_worker) */
} metrics_srv_t;

struct hy_metrics_out {
    char *p;
    size_t len, cap;
    const char *name; /* the family being collected */
};

static hy_metrics_family_t *families, *families_tail;

/* ---- counting (LOG phase) ---- */

static int log_handler(hy_req_t *req)
{
    hy_stats_slot_t *s = hy_stats_me;
    hy_http_srv_conf_t *srv = req->srv ? req->srv : req->conn->addr ? req->conn->addr->default_server : NULL;
    unsigned cls = (unsigned)(req->status / 100) - 2u; /* 2xx..5xx → 0..3; others (none sent, 1xx) are not counted */
    if (srv && cls < 4) {
        metrics_srv_t *ms = srv->srv_conf ? srv->srv_conf[hy_http_metrics_module.index] : NULL;
        hy_stats_add(&s->ext[(ms ? ms->base : HY_STATS_SINK) + cls], 1);
    }
    if (req->bytes_sent > 0)
        hy_stats_add(&s->resp_bytes, (uint64_t)req->bytes_sent);
    int64_t ms = hy_clock_time_ms() - (int64_t)req->start_ms;
    hy_stats_observe_ms(ms > 0 && req->start_ms ? (uint64_t)ms : 0);
    return HY_OK;
}

/* ---- output ---- */

static void out_reserve(hy_metrics_out_t *o, size_t n)
{
    if (o->len + n <= o->cap)
        return;
    size_t cap = o->cap ? o->cap : 4096;
    while (cap < o->len + n)
        cap *= 2;
    o->p = hy_realloc(o->p, cap);
    o->cap = cap;
}

static void out_printf(hy_metrics_out_t *o, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void out_printf(hy_metrics_out_t *o, const char *fmt, ...)
{
    for (;;) {
        va_list ap;
        va_start(ap, fmt);
        size_t room = o->cap - o->len;
        int n = vsnprintf(o->p ? o->p + o->len : NULL, room, fmt, ap);
        va_end(ap);
        if (n < 0)
            return;
        if ((size_t)n < room) {
            o->len += (size_t)n;
            return;
        }
        out_reserve(o, (size_t)n + 1);
    }
}

void hy_metrics_sample(hy_metrics_out_t *out, const char *labels, uint64_t value)
{
    if (labels && *labels)
        out_printf(out, "%s{%s} %llu\n", out->name, labels, (unsigned long long)value);
    else
        out_printf(out, "%s %llu\n", out->name, (unsigned long long)value);
}

void hy_metrics_sample_text(hy_metrics_out_t *out, const char *suffix, const char *labels, const char *value)
{
    if (labels && *labels)
        out_printf(out, "%s%s{%s} %s\n", out->name, suffix, labels, value);
    else
        out_printf(out, "%s%s %s\n", out->name, suffix, value);
}

void hy_metrics_escape(char *dst, size_t cap, const char *src, size_t len)
{
    size_t j = 0;
    for (size_t i = 0; i < len && j + 3 < cap; i++) {
        char c = src[i];
        if (c == '\\' || c == '"') {
            dst[j++] = '\\';
            dst[j++] = c;
        } else if (c == '\n') {
            dst[j++] = '\\';
            dst[j++] = 'n';
        } else {
            dst[j++] = c;
        }
    }
    if (cap)
        dst[j] = '\0';
}

void hy_metrics_each_series(const char *prefix, void (*fn)(void *arg, const char *rest, uint32_t base), void *arg)
{
    size_t plen = strlen(prefix);
    const char *key;
    uint32_t base;
    for (uint32_t i = 0; hy_stats_series_at(i, &key, &base); i++)
        if (strncmp(key, prefix, plen) == 0)
            fn(arg, key + plen, base);
}

void hy_metrics_register(hy_metrics_family_t *f)
{
    if (f->_linked)
        return;
    f->_linked = true;
    f->_next = NULL;
    if (families_tail)
        families_tail->_next = f;
    else
        families = f;
    families_tail = f;
}

static void family(hy_metrics_out_t *o, const char *name, const char *type, const char *help)
{
    o->name = name;
    out_printf(o, "# HELP %s %s\n# TYPE %s %s\n", name, help, name, type);
}

#define SUM(field) hy_stats_sum(offsetof(hy_stats_slot_t, field))

static void server_requests(void *arg, const char *rest, uint32_t base)
{
    hy_metrics_out_t *o = arg;
    char name[2 * HY_STATS_KEY_MAX], labels[3 * HY_STATS_KEY_MAX];
    hy_metrics_escape(name, sizeof(name), rest, strlen(rest));
    for (uint32_t c = 0; c < 4; c++) {
        snprintf(labels, sizeof(labels), "server=\"%s\",code=\"%uxx\"", name, c + 2);
        hy_metrics_sample(o, labels, hy_stats_sum_ext(base + c));
    }
}

static void render(hy_metrics_out_t *o)
{
    hy_stats_info_t info = hy_stats_info();
    family(o, "hayate_build_info", "gauge", "Build information (always 1).");
    hy_metrics_sample(o, "version=\"" HY_VERSION "\"", 1);
    family(o, "hayate_worker_processes", "gauge", "Worker processes of the current configuration.");
    hy_metrics_sample(o, NULL, info.workers);
    family(o, "hayate_config_generation", "gauge", "Configuration generation: 1 at start, +1 per successful reload.");
    hy_metrics_sample(o, NULL, info.generation);
    family(o, "hayate_config_reloads_total", "counter", "Successful configuration reloads.");
    hy_metrics_sample(o, NULL, info.reloads);
    family(o, "hayate_connections", "gauge", "Open client connections by state (active is the total).");
    hy_metrics_sample(o, "state=\"active\"", SUM(active));
    hy_metrics_sample(o, "state=\"reading\"", SUM(reading));
    hy_metrics_sample(o, "state=\"writing\"", SUM(writing));
    hy_metrics_sample(o, "state=\"waiting\"", SUM(waiting));
    family(o, "hayate_connections_accepted_total", "counter", "Client connections accepted.");
    hy_metrics_sample(o, NULL, SUM(accepted));
    family(o, "hayate_connections_handled_total", "counter",
           "Client connections handled (accepted minus those refused at worker_connections).");
    hy_metrics_sample(o, NULL, SUM(handled));
    family(o, "hayate_http_requests_total", "counter", "HTTP requests completed, by server block and status class.");
    hy_metrics_each_series(REQ_KEY, server_requests, o);
    family(o, "hayate_http_request_duration_seconds", "histogram", "Time from the request's first byte to its end.");
    o->name = "hayate_http_request_duration_seconds_bucket";
    uint64_t cum = 0;
    char le[48];
    for (size_t i = 0; i < HY_STATS_BUCKETS; i++) {
        cum += SUM(dur_buckets[i]);
        snprintf(le, sizeof(le), "le=\"%g\"", hy_stats_bucket_le_ms[i] / 1000.0);
        hy_metrics_sample(o, le, cum);
    }
    cum += SUM(dur_buckets[HY_STATS_BUCKETS]);
    hy_metrics_sample(o, "le=\"+Inf\"", cum);
    uint64_t sum_ms = SUM(dur_sum_ms);
    out_printf(o, "hayate_http_request_duration_seconds_sum %llu.%03u\n", (unsigned long long)(sum_ms / 1000),
               (unsigned)(sum_ms % 1000));
    out_printf(o, "hayate_http_request_duration_seconds_count %llu\n", (unsigned long long)cum);
    family(o, "hayate_http_response_bytes_total", "counter", "Bytes sent in responses (head and body).");
    hy_metrics_sample(o, NULL, SUM(resp_bytes));
    family(o, "hayate_tls_handshakes_total", "counter", "Completed TLS handshakes (resumed ones included).");
    hy_metrics_sample(o, NULL, SUM(tls_handshakes));
    family(o, "hayate_tls_session_resumptions_total", "counter", "TLS handshakes that resumed a session.");
    hy_metrics_sample(o, NULL, SUM(tls_resumed));
    family(o, "hayate_tls_handshake_failures_total", "counter", "TLS handshakes that failed.");
    hy_metrics_sample(o, NULL, SUM(tls_failed));
    for (hy_metrics_family_t *f = families; f; f = f->_next) {
        family(o, f->name, f->type, f->help);
        f->collect(o, f->data);
    }
}

char *hy_metrics_render(size_t *len)
{
    hy_metrics_out_t o = {0};
    render(&o);
    out_reserve(&o, 1);
    o.p[o.len] = '\0';
    *len = o.len;
    return o.p;
}

/* ---- the handler ---- */

static int metrics_handler(hy_req_t *req)
{
    if (req->method_id != HY_M_GET && req->method_id != HY_M_HEAD)
        return 405;
    size_t len;
    char *text = hy_metrics_render(&len);
    req->status = 200;
    req->content_type = HY_STR("text/plain; version=0.0.4");
    req->content_length_n = (int64_t)len;
    if (req->method_id == HY_M_HEAD) {
        req->header_only = true;
        free(text);
    } else {
        hy_outq_push_mem(&req->body, text, len, free, text);
    }
    hy_req_send(req, true);
    return HY_DONE;
}

static int set_metrics(hy_conf_t *cf, const hy_directive_t *d, void *conf)
{
    hy_http_loc_conf_t *lc = cf->loc_conf[hy_http_core_module.index];
    lc->handler = metrics_handler;
    return 0;
}

/* ---- configuration ---- */

static void *create_srv(hy_conf_t *cf)
{
    return hy_pcalloc(cf->pool, sizeof(metrics_srv_t)); /* base = HY_STATS_SINK */
}

static int postconfiguration(hy_conf_t *cf)
{
    return hy_http_phase_add(cf, HY_PHASE_LOG, log_handler);
}

/* ---- limit_req / limit_conn zones: their counters live in the zone (shared by all workers, kept across reloads
 * with the zone), so a scrape reads them there; only this process's generation's zones are reported ---- */

static const hy_cycle_t *worker_cycle;

typedef const hy_ltable_t *(*table_of_fn)(const hy_zone_t *zone);

static void zone_counters(hy_metrics_out_t *o, table_of_fn table_of, size_t field)
{
    if (worker_cycle == NULL || worker_cycle->zones == NULL)
        return; /* a single process reloaded into a configuration without zones: the family stays, empty */
    hy_zone_t **z = worker_cycle->zones->elts;
    for (size_t i = 0; i < worker_cycle->zones->nelts; i++) {
        const hy_ltable_t *t = table_of(z[i]);
        if (t == NULL)
            continue;
        char name[200], labels[224];
        hy_metrics_escape(name, sizeof(name), z[i]->name.ptr, z[i]->name.len);
        snprintf(labels, sizeof(labels), "zone=\"%s\"", name);
        uint64_t v;
        memcpy(&v, (const char *)t + field, sizeof(v));
        hy_metrics_sample(o, labels, v);
    }
}

static void req_rejected(hy_metrics_out_t *o, void *d)
{
    (void)d;
    zone_counters(o, hy_limit_req_table, offsetof(hy_ltable_t, rejected));
}

static void req_delayed(hy_metrics_out_t *o, void *d)
{
    (void)d;
    zone_counters(o, hy_limit_req_table, offsetof(hy_ltable_t, delayed));
}

static void conn_rejected(hy_metrics_out_t *o, void *d)
{
    (void)d;
    zone_counters(o, hy_limit_conn_table, offsetof(hy_ltable_t, rejected));
}

static hy_metrics_family_t limit_families[] = {
    {.name = "hayate_limit_req_rejected_total",
     .help = "Requests limit_req rejected (dry runs included), per zone, all workers.",
     .type = "counter",
     .collect = req_rejected},
    {.name = "hayate_limit_req_delayed_total",
     .help = "Requests limit_req delayed (dry runs included), per zone, all workers.",
     .type = "counter",
     .collect = req_delayed},
    {.name = "hayate_limit_conn_rejected_total",
     .help = "Requests limit_conn rejected (dry runs included), per zone, all workers.",
     .type = "counter",
     .collect = conn_rejected},
};

/* register the limit families whose module has a zone in this generation (no empty families) */
static void limit_metrics_init(const hy_cycle_t *cycle)
{
    worker_cycle = cycle;
    if (cycle->zones == NULL)
        return;
    hy_zone_t **z = cycle->zones->elts;
    for (size_t i = 0; i < cycle->zones->nelts; i++) {
        if (hy_limit_req_table(z[i]) != NULL) {
            hy_metrics_register(&limit_families[0]);
            hy_metrics_register(&limit_families[1]);
        } else if (hy_limit_conn_table(z[i]) != NULL) {
            hy_metrics_register(&limit_families[2]);
        }
    }
}

/* each server's counters, by its first server_name (as $server_name: "" without one) */
static int init_worker(hy_cycle_t *cycle)
{
    limit_metrics_init(cycle);
    hy_http_main_conf_t *m = hy_http_main(cycle);
    if (m == NULL)
        return 0;
    hy_http_srv_conf_t **srvs = m->servers->elts;
    for (size_t i = 0; i < m->servers->nelts; i++) {
        char key[HY_STATS_KEY_MAX];
        hy_str_t n = HY_STR("");
        const char *pre = "", *post = "";
        if (srvs[i]->server_names && srvs[i]->server_names->nelts) {
            hy_server_name_t *sn = srvs[i]->server_names->elts;
            n = sn[0].name;
            pre = sn[0].kind == 1 ? "*" : "";
            post = sn[0].kind == 2 ? "*" : "";
        }
        snprintf(key, sizeof(key), REQ_KEY "%s%.*s%s", pre, (int)n.len, n.ptr, post);
        metrics_srv_t *ms = srvs[i]->srv_conf ? srvs[i]->srv_conf[hy_http_metrics_module.index] : NULL;
        if (ms)
            ms->base = hy_stats_series(key, 4);
    }
    return 0;
}

static const hy_directive_t metrics_directives[] = {
    {.name = "metrics", .ctx = HY_CTX_LOC, .args = HY_ARGS_0, .set = set_metrics, .conf = HY_CONF_LOC},
    {0},
};

hy_module_t hy_http_metrics_module = {
    .name = "http_metrics",
    .directives = metrics_directives,
    .create_srv_conf = create_srv,
    .postconfiguration = postconfiguration,
    .init_worker = init_worker,
};
