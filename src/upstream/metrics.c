/* metrics.c — per-upstream-peer families for the `metrics;` endpoint (http/metrics.h), counted per worker in the
 * shared stats segment (core/stats.h) and summed when scraped:
 *   hayate_upstream_requests_total{upstream,peer}     tries sent to the peer (a retry on another peer is a try)
 *   hayate_upstream_failures_total{upstream,peer}     tries that failed (error, timeout, invalid header, a status
 *                                                     next_upstream retries on): what counts toward max_fails
 *   hayate_upstream_peer_up{upstream,peer}            0 while a worker holds the peer down (max_fails reached,
 *                                                     fail_timeout not over) or it is marked `down`, else 1
 *   hayate_upstream_response_seconds{upstream,peer}   histogram of the tries' response times
 *   hayate_upstream_keepalive_idle{upstream}          idle keep-alive connections, all workers
 * (hayate_upstream_peer_healthy{upstream,peer}, the active health checks' state, is health.c's)
 * A peer's series is "upstream\tGROUP\tPEER" with HY_STATS_SERIES_MAX_N counters: requests, failures, the
 * duration buckets, the sum in ms, and (a per-worker gauge read as the maximum over workers) the monotonic time
 * until which this worker holds it down. Series survive reloads, as the other counters do; the engine calls the
 * hooks (hy_upstream_metrics_try from upstream.c, hy_upstream_metrics_idle from pool.c). */
#include <stdio.h>
#include <string.h>
#include "upstream.h"
#include "../core/clock.h"
#include "../core/stats.h"
#include "../conf/cycle.h"
#include "../http/metrics.h"

#define PEER_KEY "upstream\t"
#define IDLE_KEY "upstream_idle\t"
enum { C_REQ = 0, C_FAIL, C_BUCKET, C_SUM = C_BUCKET + HY_STATS_BUCKETS + 1, C_DOWN, C_N };
_Static_assert(C_N <= HY_STATS_SERIES_MAX_N, "a peer's counters fit one series");

#define DOWN_FOREVER UINT64_MAX

static uint64_t *ext(uint32_t ix)
{
    return &hy_stats_me->ext[ix];
}

void hy_upstream_metrics_try(hy_upstream_group_t *g, hy_upstream_peer_t *p, bool failed, int64_t response_ms)
{
    uint32_t b = p->stats_base;
    if (b == HY_STATS_SINK)
        return;
    uint64_t ms = response_ms > 0 ? (uint64_t)response_ms : 0;
    hy_stats_add(ext(b + C_REQ), 1);
    size_t i = 0;
    while (i < HY_STATS_BUCKETS && ms > hy_stats_bucket_le_ms[i])
        i++;
    hy_stats_add(ext(b + C_BUCKET + (uint32_t)i), 1);
    hy_stats_add(ext(b + C_SUM), ms);
    if (failed)
        hy_stats_add(ext(b + C_FAIL), 1);
    if (p->down)
        return;
    /* the balancer's rule (group.c): max_fails failures within fail_timeout take it out for fail_timeout */
    uint64_t until = 0;
    if (p->max_fails > 0 && p->fails >= p->max_fails && g->npeers > 1)
        until = p->checked_ms + (uint64_t)p->fail_timeout_ms;
    hy_stats_set(ext(b + C_DOWN), until);
}

void hy_upstream_metrics_idle(hy_upstream_group_t *g)
{
    if (g->stats_idle != HY_STATS_SINK)
        hy_stats_set(ext(g->stats_idle), g->nidle);
}

/* ---- scrape */

/* "upstream\tGROUP\tPEER" → labels */
static void labels_of(const char *rest, char *out, size_t cap, const char *extra)
{
    const char *tab = strchr(rest, '\t');
    size_t gl = tab ? (size_t)(tab - rest) : strlen(rest);
    char g[2 * HY_STATS_KEY_MAX], p[2 * HY_STATS_KEY_MAX];
    hy_metrics_escape(g, sizeof(g), rest, gl);
    hy_metrics_escape(p, sizeof(p), tab ? tab + 1 : "", tab ? strlen(tab + 1) : 0);
    snprintf(out, cap, "upstream=\"%s\",peer=\"%s\"%s%s", g, p, extra ? "," : "", extra ? extra : "");
}

static void each_requests(void *arg, const char *rest, uint32_t base)
{
    char l[5 * HY_STATS_KEY_MAX];
    labels_of(rest, l, sizeof(l), NULL);
    hy_metrics_sample(arg, l, hy_stats_sum_ext(base + C_REQ));
}

static void each_failures(void *arg, const char *rest, uint32_t base)
{
    char l[5 * HY_STATS_KEY_MAX];
    labels_of(rest, l, sizeof(l), NULL);
    hy_metrics_sample(arg, l, hy_stats_sum_ext(base + C_FAIL));
}

static void each_up(void *arg, const char *rest, uint32_t base)
{
    char l[5 * HY_STATS_KEY_MAX];
    labels_of(rest, l, sizeof(l), NULL);
    uint64_t until = hy_stats_max_ext(base + C_DOWN);
    hy_metrics_sample(arg, l, until == DOWN_FOREVER || until > hy_clock_now_ms() ? 0 : 1);
}

static void each_histogram(void *arg, const char *rest, uint32_t base)
{
    char l[5 * HY_STATS_KEY_MAX], le[48], v[48];
    uint64_t cum = 0;
    for (size_t i = 0; i <= HY_STATS_BUCKETS; i++) {
        cum += hy_stats_sum_ext(base + C_BUCKET + (uint32_t)i);
        if (i < HY_STATS_BUCKETS)
            snprintf(le, sizeof(le), "le=\"%g\"", hy_stats_bucket_le_ms[i] / 1000.0);
        else
            snprintf(le, sizeof(le), "le=\"+Inf\"");
        labels_of(rest, l, sizeof(l), le);
        snprintf(v, sizeof(v), "%llu", (unsigned long long)cum);
        hy_metrics_sample_text(arg, "_bucket", l, v);
    }
    labels_of(rest, l, sizeof(l), NULL);
    uint64_t sum = hy_stats_sum_ext(base + C_SUM);
    snprintf(v, sizeof(v), "%llu.%03u", (unsigned long long)(sum / 1000), (unsigned)(sum % 1000));
    hy_metrics_sample_text(arg, "_sum", l, v);
    snprintf(v, sizeof(v), "%llu", (unsigned long long)cum);
    hy_metrics_sample_text(arg, "_count", l, v);
}

static void each_idle(void *arg, const char *rest, uint32_t base)
{
    char g[2 * HY_STATS_KEY_MAX], l[3 * HY_STATS_KEY_MAX];
    hy_metrics_escape(g, sizeof(g), rest, strlen(rest));
    snprintf(l, sizeof(l), "upstream=\"%s\"", g);
    hy_metrics_sample(arg, l, hy_stats_sum_ext(base));
}

static void collect(hy_metrics_out_t *out, void *data)
{
    hy_metrics_each_series(data == each_idle ? IDLE_KEY : PEER_KEY, (void (*)(void *, const char *, uint32_t))data,
                           out);
}

static hy_metrics_family_t families[] = {
    {.name = "hayate_upstream_requests_total",
     .help = "Tries sent to an upstream peer, all workers.",
     .type = "counter",
     .collect = collect,
     .data = (void *)each_requests},
    {.name = "hayate_upstream_failures_total",
     .help = "Tries to an upstream peer that failed (counted toward max_fails), all workers.",
     .type = "counter",
     .collect = collect,
     .data = (void *)each_failures},
    {.name = "hayate_upstream_peer_up",
     .help = "1 when the peer takes requests, 0 while a worker holds it down (max_fails/fail_timeout) or it is down.",
     .type = "gauge",
     .collect = collect,
     .data = (void *)each_up},
    {.name = "hayate_upstream_response_seconds",
     .help = "Time from the start of a try to the end of the upstream's response (or its failure).",
     .type = "histogram",
     .collect = collect,
     .data = (void *)each_histogram},
    {.name = "hayate_upstream_keepalive_idle",
     .help = "Idle keep-alive connections to the upstream's peers, all workers.",
     .type = "gauge",
     .collect = collect,
     .data = (void *)each_idle},
};

/* every peer of every group gets its series (keys are registered once per process and generation) */
static int init_worker(hy_cycle_t *cycle)
{
    hy_upstream_group_t *g;
    bool any = false;
    for (size_t i = 0; (g = hy_upstream_group_at(cycle, i)) != NULL; i++) {
        char key[HY_STATS_KEY_MAX];
        snprintf(key, sizeof(key), IDLE_KEY "%.*s", (int)g->name.len, g->name.ptr);
        g->stats_idle = hy_stats_series(key, 1);
        hy_upstream_metrics_idle(g);
        for (size_t k = 0; k < g->npeers; k++) {
            hy_upstream_peer_t *p = &g->peers[k];
            snprintf(key, sizeof(key), PEER_KEY "%.*s\t%.*s", (int)g->name.len, g->name.ptr, (int)p->name.len,
                     p->name.ptr);
            p->stats_base = hy_stats_series(key, C_N);
            if (p->stats_base != HY_STATS_SINK)
                hy_stats_set(ext(p->stats_base + C_DOWN), p->down ? DOWN_FOREVER : 0);
        }
        any = true;
    }
    if (any)
        for (size_t i = 0; i < HY_ARRAY_SIZE(families); i++)
            hy_metrics_register(&families[i]);
    return 0;
}

hy_module_t hy_http_upstream_metrics_module = {
    .name = "http_upstream_metrics",
    .init_worker = init_worker,
};
