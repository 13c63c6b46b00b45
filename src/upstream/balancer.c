/* balancer.c — choosing a peer of an upstream group: nginx's smooth weighted round robin and, on top of the same
 * liveness rules (down, max_fails within fail_timeout, max_conns, peers already tried by this request), the
 * least_conn, least_time, ip_hash, hash KEY [consistent] and random [two] methods. A hashed choice that lands on an unusable
 * peer is hashed again (up to 20 times, as nginx), then falls back to round robin. Backup peers are used only
 * when no primary peer can take the request (round robin and least_conn; the hash methods have none, as nginx).
 * A peer that an active health check holds down (health.c, peer->hc_down in the group's zone) is unusable too.
 * The hash methods are nginx's to the bit, so a key reaches the server nginx (and Cache::Memcached, whose
 * distribution nginx's copies) would pick: `hash` sums ((crc32([TRY] KEY) >> 16) & 0x7fff) over its tries and takes
 * it modulo the total weight; `consistent` puts weight * 160 points per server on a ring, each the crc32 of
 * HOST \0 PORT and the point before it (Cache::Memcached::Fast's ketama), and a key goes to the first point at or
 * after crc32(KEY). */
#include <stdlib.h>
#include <string.h>
#include <netinet/in.h>
#include <zlib.h>
#include "upstream.h"
#include "sticky.h"
#include "../core/clock.h"
#include "../http/vars.h"

static bool tried_has(const uint64_t *t, size_t i)
{
    return i < 256 && (t[i / 64] >> (i % 64)) & 1;
}

static void tried_set(uint64_t *t, size_t i)
{
    if (i < 256)
        t[i / 64] |= UINT64_C(1) << (i % 64);
}

static bool usable(hy_upstream_peer_t *p, uint64_t now)
{
    if (p->down || p->drain || (p->hc_down && *p->hc_down))
        return false;
    if (p->max_fails && p->fails >= p->max_fails && now - p->checked_ms <= (uint64_t)p->fail_timeout_ms)
        return false;
    return !hy_upstream_peer_full(p);
}

static void picked(hy_upstream_peer_t *p, uint64_t now)
{
    if (now - p->checked_ms > (uint64_t)p->fail_timeout_ms)
        p->checked_ms = now;
}

/* nginx's smooth weighted round robin over peers [from, to); server: only the peers of that `server` line (hash
 * consistent), NULL: all */
static hy_upstream_peer_t *swrr(hy_upstream_group_t *g, size_t from, size_t to, uint64_t *tried,
                                const hy_str_t *server)
{
    uint64_t now = hy_clock_now_ms();
    hy_upstream_peer_t *best = NULL;
    int total = 0;
    size_t best_i = 0;
    for (size_t i = from; i < to; i++) {
        hy_upstream_peer_t *p = &g->peers[i];
        if (tried_has(tried, i) || !usable(p, now) || (server && !hy_str_eq_str(p->server, *server)))
            continue;
        p->current_weight += p->effective_weight;
        total += p->effective_weight;
        if (p->effective_weight < p->weight)
            p->effective_weight++;
        if (best == NULL || p->current_weight > best->current_weight)
            best = p, best_i = i;
    }
    if (best == NULL)
        return NULL;
    best->current_weight -= total;
    picked(best, now);
    tried_set(tried, best_i);
    return best;
}

static hy_upstream_peer_t *round_robin(hy_upstream_group_t *g, size_t from, size_t to, uint64_t *tried)
{
    return swrr(g, from, to, tried, NULL);
}

/* The peer of the least cost for its weight (cost(p) / p->weight, compared crosswise); ties go to weighted round
 * robin among them. least_conn's cost is the active connections, least_time's below. */
typedef int64_t (*peer_cost_fn)(const hy_upstream_group_t *g, const hy_upstream_peer_t *p, uint64_t now);

static hy_upstream_peer_t *least_cost(hy_upstream_group_t *g, size_t from, size_t to, uint64_t *tried,
                                      peer_cost_fn cost)
{
    uint64_t now = hy_clock_now_ms();
    hy_upstream_peer_t *best = NULL;
    int64_t best_cost = 0;
    for (size_t i = from; i < to; i++) {
        hy_upstream_peer_t *p = &g->peers[i];
        if (tried_has(tried, i) || !usable(p, now))
            continue;
        int64_t c = cost(g, p, now);
        if (best == NULL || (__int128)c * best->weight < (__int128)best_cost * p->weight)
            best = p, best_cost = c;
    }
    if (best == NULL)
        return NULL;
    hy_upstream_peer_t *pick = NULL;
    int total = 0;
    size_t pick_i = 0;
    for (size_t i = from; i < to; i++) {
        hy_upstream_peer_t *p = &g->peers[i];
        if (tried_has(tried, i) || !usable(p, now) ||
            (__int128)cost(g, p, now) * best->weight != (__int128)best_cost * p->weight)
            continue;
        p->current_weight += p->effective_weight;
        total += p->effective_weight;
        if (p->effective_weight < p->weight)
            p->effective_weight++;
        if (pick == NULL || p->current_weight > pick->current_weight)
            pick = p, pick_i = i;
    }
    pick->current_weight -= total;
    picked(pick, now);
    tried_set(tried, pick_i);
    return pick;
}

/* least_conn: the fewest active connections for the weight */
static int64_t conn_cost(const hy_upstream_group_t *g, const hy_upstream_peer_t *p, uint64_t now)
{
    (void)g, (void)now;
    return (int64_t)hy_upstream_peer_conns(p);
}

/* least_time: nginx Plus documents the method (the least average response time and the fewest active connections,
 * with the weights), not its arithmetic; ours. A peer's average is a moving average (each new time counts half) of
 * its response times — to the head (`header`) or the last byte (`last_byte`) — which, once the peer's
 * fail_timeout has passed since the last one, fades by half every LT_HALF_MS, so that a peer once slow is tried
 * again (nginx-tests' "decay", with fail_timeout=0; the default 10s keeps it out that long): the new time then
 * averages with the time as it was, not as it faded, so one fast answer does not make a slow peer first at once.
 * An average below LT_FLOOR_MS counts as 0 (fast peers are equal), and with `inflight` the average age of the
 * tries in flight counts when larger. The cost (connections * (time + LT_FLOOR_MS) + time) / weight is compared:
 * idle fast peers cost 0 (weighted round robin among them), busy ones count their connections as least_conn, and
 * an idle slow peer takes a request once the fast ones have time / (time + LT_FLOOR_MS) connections each. */
#define LT_HALF_MS 500
#define LT_FLOOR_MS 20

static int64_t lt_time(const hy_upstream_group_t *g, const hy_upstream_peer_t *p, uint64_t now)
{
    int64_t t = p->lt_avg_ms;
    uint64_t since = p->lt_stamp_ms + (uint64_t)p->fail_timeout_ms;
    uint64_t age = now > since ? now - since : 0;
    uint64_t k = age / LT_HALF_MS;
    t = k >= 62 ? 0 : t >> k;
    t -= t * (int64_t)(age % LT_HALF_MS) / (2 * LT_HALF_MS); /* 2^-f is about 1 - f/2 */
    if (g->lt_inflight && p->conns > 0) {
        uint64_t sum = p->lt_busy_ms, n = (uint64_t)p->conns;
        int64_t busy = sum <= n * now ? (int64_t)((n * now - sum) / n) : 0;
        if (busy > t)
            t = busy;
    }
    return t < LT_FLOOR_MS ? 0 : t;
}

void hy_upstream__lt_sample(hy_upstream_group_t *g, hy_upstream_peer_t *p, bool header, int64_t ms)
{
    if (g == NULL || p == NULL || g->balancer != HY_UPS_LEAST_TIME || g->lt_header != header || ms < 0)
        return;
    p->lt_avg_ms = p->lt_stamp_ms == 0 ? ms : (p->lt_avg_ms + ms) / 2;
    p->lt_stamp_ms = hy_clock_now_ms();
}

static int64_t lt_cost(const hy_upstream_group_t *g, const hy_upstream_peer_t *p, uint64_t now)
{
    int64_t t = lt_time(g, p, now);
    return (int64_t)p->conns * (t + LT_FLOOR_MS) + t;
}

/* A weighted pick by a hash value among the primary peers (ip_hash, hash); NULL when that peer cannot serve. */
static hy_upstream_peer_t *by_weight(hy_upstream_group_t *g, uint32_t h, uint64_t *tried)
{
    size_t n = g->npeers - g->nbackup;
    int total = 0;
    for (size_t i = 0; i < n; i++)
        total += g->peers[i].weight;
    if (total == 0)
        return NULL;
    int w = (int)(h % (uint32_t)total);
    size_t i = 0;
    while (w >= g->peers[i].weight) {
        w -= g->peers[i].weight;
        i++;
    }
    uint64_t now = hy_clock_now_ms();
    if (tried_has(tried, i) || !usable(&g->peers[i], now))
        return NULL;
    picked(&g->peers[i], now);
    tried_set(tried, i);
    return &g->peers[i];
}

static uint32_t ip_hash_of(hy_req_t *req)
{
    const struct sockaddr_storage *ss = hy_req_peer(req);
    const unsigned char *a;
    size_t n;
    if (ss->ss_family == AF_INET) {
        a = (const unsigned char *)&((const struct sockaddr_in *)ss)->sin_addr;
        n = 3; /* the first three octets, as nginx */
    } else if (ss->ss_family == AF_INET6) {
        a = (const unsigned char *)&((const struct sockaddr_in6 *)ss)->sin6_addr;
        n = 16;
    } else {
        return 89;
    }
    uint32_t h = 89;
    for (size_t i = 0; i < n; i++)
        h = (h * 113 + a[i]) % 6271;
    return h;
}

static uint32_t crc(uint32_t prev, const void *p, size_t n)
{
    return (uint32_t)crc32(prev, p, (uInt)n);
}

/* `hash`: the part try `attempt` adds, nginx's ((crc32([attempt] KEY) >> 16) & 0x7fff), the attempt's number in
 * decimal before the key from the second try on */
static uint32_t key_hash(hy_str_t key, int attempt)
{
    uint32_t h = 0;
    if (attempt > 0) {
        char num[24];
        h = crc(h, num, (size_t)hy_fmt_u64(num, (uint64_t)attempt));
    }
    return (crc(h, key.ptr, key.len) >> 16) & 0x7fff;
}

/* hash ... consistent: from the first ring point at or after the key's crc32, the point's server (all the peers of
 * the same `server` line: smooth weighted round robin among them), else the next point's, up to 21 points */
static hy_upstream_peer_t *consistent(hy_upstream_group_t *g, hy_str_t key, uint64_t *tried)
{
    if (g->npoints == 0)
        return NULL;
    uint32_t h = crc(0, key.ptr, key.len);
    size_t lo = 0, hi = g->npoints;
    while (lo < hi) {
        size_t mid = (lo + hi) / 2;
        if (g->points[mid].hash < h)
            lo = mid + 1;
        else
            hi = mid;
    }
    size_t nprim = g->npeers - g->nbackup;
    for (size_t k = 0; k <= 20; k++) {
        hy_upstream_peer_t *p = swrr(g, 0, nprim, tried, &g->peers[g->points[(lo + k) % g->npoints].peer].server);
        if (p != NULL)
            return p;
    }
    return NULL;
}

static hy_upstream_peer_t *random_pick(hy_upstream_group_t *g, uint64_t *tried, bool two)
{
    size_t n = g->npeers - g->nbackup;
    int total = 0;
    for (size_t i = 0; i < n; i++)
        total += g->peers[i].weight;
    if (total == 0)
        return NULL;
    uint64_t now = hy_clock_now_ms();
    hy_upstream_peer_t *cand[2] = {NULL, NULL};
    size_t ci[2] = {0, 0};
    int want = two ? 2 : 1, got = 0;
    for (int attempt = 0; attempt < 20 && got < want; attempt++) {
        int w = rand() % total;
        size_t i = 0;
        while (w >= g->peers[i].weight) {
            w -= g->peers[i].weight;
            i++;
        }
        if (tried_has(tried, i) || !usable(&g->peers[i], now) || (got == 1 && ci[0] == i))
            continue;
        cand[got] = &g->peers[i];
        ci[got++] = i;
    }
    if (got == 0)
        return NULL;
    int k = got == 2 && (int64_t)hy_upstream_peer_conns(cand[1]) * cand[0]->weight <
                                (int64_t)hy_upstream_peer_conns(cand[0]) * cand[1]->weight;
    picked(cand[k], now);
    tried_set(tried, ci[k]);
    return cand[k];
}

hy_upstream_peer_t *hy_upstream_peer_get(hy_upstream_group_t *g, hy_req_t *req, uint64_t *tried)
{
    if (g->npeers == 0) /* `server ... resolve` whose names resolve to nothing now */
        return NULL;
    hy_upstream_peer_t *p = NULL;
    if (g->sticky && (p = hy_upstream__sticky_peer(g, req, tried)) != NULL)
        return p;
    size_t nprim = g->npeers - g->nbackup;
    if (nprim == 1 && g->nbackup == 0) { /* one peer: nginx ignores max_fails then (it is always tried) */
        p = &g->peers[0];
        if (tried_has(tried, 0) || p->down || p->drain || (p->hc_down && *p->hc_down) || hy_upstream_peer_full(p))
            return NULL;
        tried_set(tried, 0);
        return p;
    }
    p = NULL;
    int method = g->balancer;
    hy_str_t key = HY_STR_NULL;
    if (method == HY_UPS_HASH || method == HY_UPS_HASH_CONSISTENT) { /* an empty key: round robin (nginx) */
        hy_vars_eval(req, g->hash_key, &key);
        if (key.len == 0)
            method = HY_UPS_RR;
    }
    switch (method) {
    case HY_UPS_IP_HASH: {
        uint32_t h = ip_hash_of(req);
        for (int attempt = 0; p == NULL && attempt < 20; attempt++) {
            p = by_weight(g, h, tried);
            if (p == NULL)
                h = (h * 113 + 89) % 6271;
        }
        return p ? p : round_robin(g, 0, nprim, tried);
    }
    case HY_UPS_HASH: {
        uint32_t h = 0;
        for (int attempt = 0; p == NULL && attempt < 20; attempt++) {
            h += key_hash(key, attempt);
            p = by_weight(g, h, tried);
        }
        return p ? p : round_robin(g, 0, nprim, tried);
    }
    case HY_UPS_HASH_CONSISTENT:
        p = consistent(g, key, tried);
        return p ? p : round_robin(g, 0, nprim, tried);
    case HY_UPS_RANDOM:
    case HY_UPS_RANDOM_TWO:
        p = random_pick(g, tried, g->balancer == HY_UPS_RANDOM_TWO);
        return p ? p : round_robin(g, 0, nprim, tried);
    case HY_UPS_LEAST_CONN:
        p = least_cost(g, 0, nprim, tried, conn_cost);
        return p || !g->nbackup ? p : least_cost(g, nprim, g->npeers, tried, conn_cost);
    case HY_UPS_LEAST_TIME:
        p = least_cost(g, 0, nprim, tried, lt_cost);
        return p || !g->nbackup ? p : least_cost(g, nprim, g->npeers, tried, lt_cost);
    default:
        p = round_robin(g, 0, nprim, tried);
        return p || !g->nbackup ? p : round_robin(g, nprim, g->npeers, tried);
    }
}

static int point_cmp(const void *a, const void *b)
{
    uint32_t x = ((const hy_upstream_point_t *)a)->hash, y = ((const hy_upstream_point_t *)b)->hash;
    return x < y ? -1 : x > y;
}

/* the host and port of a `server` as written, nginx's way: "unix:PATH" is PATH with no port; else a port is the digits
 * after the last ':' */
static void host_port(hy_str_t s, hy_str_t *host, hy_str_t *port)
{
    *port = HY_STR_NULL;
    *host = s;
    if (s.len >= 5 && hy_mem_caseeq(s.ptr, "unix:", 5)) {
        *host = (hy_str_t){s.ptr + 5, s.len - 5};
        return;
    }
    for (size_t j = 0; j < s.len; j++) {
        char c = s.ptr[s.len - j - 1];
        if (c == ':') {
            *host = (hy_str_t){s.ptr, s.len - j - 1};
            *port = (hy_str_t){s.ptr + s.len - j, j};
            return;
        }
        if (c < '0' || c > '9')
            return;
    }
}

void hy_upstream__build_ring(hy_pool_t *pool, hy_upstream_group_t *g)
{
    size_t total = 0;
    for (size_t i = 0; i < g->npeers - g->nbackup; i++)
        total += (size_t)g->peers[i].weight * 160;
    g->points = hy_palloc(pool, (total ? total : 1) * sizeof(*g->points));
    g->npoints = 0;
    for (size_t i = 0; i < g->npeers - g->nbackup; i++) {
        hy_str_t host, port;
        host_port(g->peers[i].server, &host, &port);
        uint32_t base = crc(0, host.ptr, host.len);
        base = crc(base, "", 1);
        base = crc(base, port.ptr, port.len);
        uint32_t prev = 0;
        for (size_t j = 0; j < (size_t)g->peers[i].weight * 160; j++) {
            unsigned char b[4] = {(unsigned char)prev, (unsigned char)(prev >> 8), (unsigned char)(prev >> 16),
                                  (unsigned char)(prev >> 24)};
            prev = crc(base, b, 4);
            g->points[g->npoints++] = (hy_upstream_point_t){prev, (uint32_t)i};
        }
    }
    qsort(g->points, g->npoints, sizeof(*g->points), point_cmp);
    size_t k = 0; /* one point per hash, as nginx (the same server twice: the same points) */
    for (size_t j = 1; j < g->npoints; j++)
        if (g->points[j].hash != g->points[k].hash)
            g->points[++k] = g->points[j];
    if (g->npoints)
        g->npoints = k + 1;
}
