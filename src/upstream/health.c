/* health.c — active health checks (NGINX Plus's ngx_http_upstream_hc_module): `match` blocks, the checks a
 * location's `health_check` registers (health.h), their state in the group's shared zone, and the probes each
 * worker runs on its event loop.
 *
 * Shared state. The group's zone (group.c's table) holds one entry per peer ("upstream\nserver\naddress"): the
 * generation (epoch) that owns it, a `down` bit set (bit i: check i of the group holds the peer down: unhealthy,
 * or `mandatory` and not passed yet) that the balancers read through peer->hc_down, and per check the time the
 * next check is due with the consecutive failures and passes. A worker's timer per check wakes at the earliest
 * due time of its peers; under the zone's lock it claims each peer that is due by moving its due time past a
 * lease (the longest a probe may take), so the other workers, which wake at the same time, find it not due and
 * sleep again: one process checks a peer per interval. The probe's result moves the due time to a full
 * interval (plus jitter) later. A load that keeps the zone gets a new epoch: the first worker of the new
 * generation that meets an entry of an older one resets it (a `mandatory` check starts it down, unless
 * `persistent` and it was up), and the old generation's workers, which are shutting down, stop writing to it.
 *
 * A probe: a non-blocking connect (proxy_connect_timeout); for an "https://" upstream the TLS handshake with the
 * location's proxy_ssl_* context (ussl.h's hy_ussl_probe_start: SNI, client certificate, no session reuse;
 * bounded by proxy_connect_timeout too) and its checks (proxy_ssl_verify: chain and name), a failed one being a
 * failed check; then "GET uri HTTP/1.x" with the Host field the proxied request would carry and
 * "Connection: close" (with proxy_http_version 2 one HTTP/2 stream instead: health_h2.h)
 * (proxy_send_timeout), the response read until the upstream closes or its Content-Length is
 * complete (proxy_read_timeout for the whole response), at most 256k of body examined. It passes when the status
 * is 2xx or 3xx, or with match= when every condition of the block holds. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <errno.h>
#include <unistd.h>
#include <netinet/in.h>
#include "health.h"
#include "health_h2.h"
#include "ussl.h"
#include "../event/tls.h"
#include "../core/clock.h"
#include "../core/log.h"
#include "../core/regex.h"
#include "../conf/cycle.h"
#include "../conf/zone.h"
#include "../conf/conf_regex.h"
#include "../http/conn.h"
#include "../http/metrics.h"

#define HC_MAX_CHECKS 32           /* per group */

/* ---------------------------------------------------------------- match blocks */

enum { COND_STATUS, COND_HEADER, COND_BODY };
enum { OP_PRESENT, OP_ABSENT, OP_EQ, OP_NE, OP_RE, OP_NRE };

typedef struct hc_cond {
    int kind;
    bool negate;        /* status ! ..., body !~ */
    int *ranges;        /* status: pairs lo, hi */
    size_t nranges;
    int op;             /* header */
    hy_str_t name, value;
    hy_regex_t *re;     /* header ~ / !~, body ~ / !~ */
} hc_cond_t;

typedef struct hc_match {
    hy_str_t name;
    hy_array_t *conds; /* hc_cond_t */
} hc_match_t;

/* ---------------------------------------------------------------- shared entries */

typedef struct hc_sh_check {
    uint64_t due_ms; /* the next check may start then (claimed: moved past the lease) */
    int32_t fails, passes;
    uint8_t state;   /* HC_UP, HC_DOWN, HC_CHECKING */
} hc_sh_check_t;

enum { HC_UP = 0, HC_DOWN, HC_CHECKING };

typedef struct hc_sh_peer {
    struct hc_sh_peer *next;
    uint64_t epoch;
    volatile uint32_t down; /* bit i: check i holds the peer down */
    hc_sh_check_t chk[HC_MAX_CHECKS];
    char key[600];
} hc_sh_peer_t;

/* ---------------------------------------------------------------- configuration and worker state */

typedef struct hc_probe hc_probe_t;

typedef struct hc_check {
    hy_upstream_hc_conf_t *c;
    const hc_match_t *match;
    struct hy_upstream_hc_group *hg;
    unsigned idx; /* in its group: bit of the peers' `down` */
    /* per worker */
    hy_timer_t timer;
    hc_probe_t *probes; /* in flight */
} hc_check_t;

struct hy_upstream_hc_group {
    hy_upstream_group_t *g;
    hc_check_t *checks[HC_MAX_CHECKS];
    unsigned n;
    /* per worker */
    bool ready; /* init_worker ran: timers may be armed */
    bool stopped;
    bool full_logged;
};

typedef struct hc_main {
    hy_array_t *matches; /* hc_match_t */
    hy_array_t *checks;  /* hc_check_t * */
} hc_main_t;

struct hc_probe {
    hc_probe_t *next, **pprev;
    hc_check_t *chk;
    hc_sh_peer_t *x;
    char name[300]; /* the peer's address, for messages */
    hy_sock_t sock;
    hy_timer_t timer;
    bool connected;
    char ssl_name[256]; /* TLS: the name verified (proxy_ssl_name or the host of proxy_pass) */
    hy_hc_h2_t *h2;     /* proxy_http_version 2: the HTTP/2 exchange (hy_hc_h2_new), NULL for HTTP/1 */
};

static hc_main_t *hc_main(hy_conf_t *cf)
{
    return cf->main_conf ? cf->main_conf[hy_http_upstream_hc_module.index] : NULL;
}

/* ---------------------------------------------------------------- match { } */

static int parse_status(hy_conf_t *cf, hc_cond_t *c, hy_str_t *a, size_t n)
{
    size_t i = 1;
    if (i < n && hy_str_eq(a[i], "!"))
        c->negate = true, i++;
    if (i >= n)
        return hy_conf_error(cf, "invalid number of arguments in \"status\" directive");
    c->ranges = hy_palloc(cf->pool, (n - i) * 2 * sizeof(int));
    for (; i < n; i++) {
        hy_str_t v = a[i];
        const char *dash = memchr(v.ptr, '-', v.len);
        int64_t lo, hi;
        if (dash) {
            lo = hy_parse_int(v.ptr, (size_t)(dash - v.ptr));
            hi = hy_parse_int(dash + 1, (size_t)(v.ptr + v.len - dash - 1));
        } else {
            lo = hi = hy_parse_int(v.ptr, v.len);
        }
        if (lo < 100 || hi > 999 || lo > hi)
            return hy_conf_error(cf, "invalid status \"%s\"", v.ptr);
        c->ranges[c->nranges * 2] = (int)lo;
        c->ranges[c->nranges * 2 + 1] = (int)hi;
        c->nranges++;
    }
    return 0;
}

static int match_raw(hy_conf_t *cf, void *data)
{
    hc_match_t *m = data;
    size_t n;
    hy_str_t *a = hy_conf_args(cf, &n);
    hc_cond_t c = {0};
    if (hy_str_eq(a[0], "status")) {
        c.kind = COND_STATUS;
        if (parse_status(cf, &c, a, n) != 0)
            return -1;
    } else if (hy_str_eq(a[0], "header")) {
        c.kind = COND_HEADER;
        if (n == 2) {
            c.op = OP_PRESENT, c.name = a[1];
        } else if (n == 3 && hy_str_eq(a[1], "!")) {
            c.op = OP_ABSENT, c.name = a[2];
        } else if (n == 4) {
            c.name = a[1];
            c.value = hy_str_dup(cf->pool, a[3]);
            if (hy_str_eq(a[2], "="))
                c.op = OP_EQ;
            else if (hy_str_eq(a[2], "!="))
                c.op = OP_NE;
            else if (hy_str_eq(a[2], "~"))
                c.op = OP_RE;
            else if (hy_str_eq(a[2], "!~"))
                c.op = OP_NRE;
            else
                return hy_conf_error(cf, "invalid parameter \"%s\"", a[2].ptr);
            if ((c.op == OP_RE || c.op == OP_NRE) && (c.re = hy_conf_regex(cf, a[3], false)) == NULL)
                return -1;
        } else {
            return hy_conf_error(cf, "invalid number of arguments in \"header\" directive");
        }
        if (c.name.len == 0)
            return hy_conf_error(cf, "invalid header name \"%s\"", c.name.ptr);
        c.name = hy_str_dup(cf->pool, c.name);
    } else if (hy_str_eq(a[0], "body")) {
        c.kind = COND_BODY;
        if (n != 3)
            return hy_conf_error(cf, "invalid number of arguments in \"body\" directive");
        if (hy_str_eq(a[1], "!~"))
            c.negate = true;
        else if (!hy_str_eq(a[1], "~"))
            return hy_conf_error(cf, "invalid parameter \"%s\"", a[1].ptr);
        if ((c.re = hy_conf_regex(cf, a[2], false)) == NULL)
            return -1;
    } else if (hy_str_eq(a[0], "require")) {
        return hy_conf_error(cf, "\"require\" in \"match\" is not supported by hayate yet");
    } else {
        return hy_conf_error(cf, "unknown directive \"%s\"", a[0].ptr);
    }
    *(hc_cond_t *)hy_array_push(m->conds) = c;
    return 0;
}

static int set_match(hy_conf_t *cf, const hy_directive_t *d, void *conf)
{
    (void)d, (void)conf;
    hc_main_t *hm = hc_main(cf);
    size_t n;
    hy_str_t *a = hy_conf_args(cf, &n);
    hc_match_t *ms = hm->matches->elts;
    for (size_t i = 0; i < hm->matches->nelts; i++)
        if (hy_str_eq_str(ms[i].name, a[1]))
            return hy_conf_error(cf, "duplicate match \"%s\"", a[1].ptr);
    hc_match_t *m = hy_array_push(hm->matches);
    m->name = hy_str_dup(cf->pool, a[1]);
    m->conds = hy_array_create(cf->pool, 4, sizeof(hc_cond_t));
    hy_conf_t saved = *cf;
    cf->raw = match_raw;
    cf->raw_data = m;
    int rc = hy_conf_parse_block(cf);
    cf->raw = saved.raw;
    cf->raw_data = saved.raw_data;
    return rc;
}

/* ---------------------------------------------------------------- health_check */

static bool param(hy_str_t a, const char *name, hy_str_t *val)
{
    size_t n = strlen(name);
    if (a.len < n || memcmp(a.ptr, name, n) != 0)
        return false;
    *val = (hy_str_t){a.ptr + n, a.len - n};
    return true;
}

int hy_upstream_hc_parse(hy_conf_t *cf, hy_upstream_hc_conf_t *hc)
{
    size_t n;
    hy_str_t *a = hy_conf_args(cf, &n);
    memset(hc, 0, sizeof(*hc));
    hc->interval_ms = 5000;
    hc->fails = hc->passes = 1;
    hc->uri = HY_STR("/");
    hc->file = cf->file;
    hc->line = cf->line;
    for (size_t i = 1; i < n; i++) {
        hy_str_t v;
        int64_t x;
        if (param(a[i], "interval=", &v)) {
            if ((x = hy_parse_msec(v.ptr, v.len)) <= 0)
                goto invalid;
            hc->interval_ms = x;
        } else if (param(a[i], "jitter=", &v)) {
            if ((x = hy_parse_msec(v.ptr, v.len)) < 0)
                goto invalid;
            hc->jitter_ms = x;
        } else if (param(a[i], "fails=", &v)) {
            if ((x = hy_parse_int(v.ptr, v.len)) < 1 || x > 1000000)
                goto invalid;
            hc->fails = (int)x;
        } else if (param(a[i], "passes=", &v)) {
            if ((x = hy_parse_int(v.ptr, v.len)) < 1 || x > 1000000)
                goto invalid;
            hc->passes = (int)x;
        } else if (param(a[i], "uri=", &v)) {
            if (v.len == 0 || v.ptr[0] != '/')
                goto invalid;
            for (size_t k = 0; k < v.len; k++)
                if ((unsigned char)v.ptr[k] <= ' ' || v.ptr[k] == 0x7f)
                    goto invalid;
            hc->uri = hy_str_dup(cf->pool, v);
        } else if (param(a[i], "match=", &v)) {
            if (v.len == 0)
                goto invalid;
            hc->match = hy_str_dup(cf->pool, v);
        } else if (param(a[i], "port=", &v)) {
            if ((x = hy_parse_int(v.ptr, v.len)) < 1 || x > 65535)
                goto invalid;
            hc->port = (uint16_t)x;
        } else if (hy_str_eq(a[i], "mandatory")) {
            hc->mandatory = true;
        } else if (hy_str_eq(a[i], "persistent") && hc->mandatory) {
            hc->persistent = true;
        } else if (param(a[i], "type=", &v) || param(a[i], "keepalive_time=", &v) ||
                   param(a[i], "grpc_service=", &v) || param(a[i], "grpc_status=", &v)) {
            return hy_conf_error(cf, "the \"%.*s\" parameter of \"health_check\" is not supported by hayate yet",
                                 (int)(a[i].len - v.len - 1), a[i].ptr);
        } else {
            goto invalid;
        }
        continue;
    invalid:
        return hy_conf_error(cf, "invalid parameter \"%s\"", a[i].ptr);
    }
    return 0;
}

int hy_upstream_hc_add(hy_conf_t *cf, hy_upstream_hc_conf_t *hc)
{
    if (hc->registered)
        return 0;
    hc->registered = true;
    hc_check_t *k = hy_pcalloc(cf->pool, sizeof(*k));
    k->c = hc;
    *(hc_check_t **)hy_array_push(hc_main(cf)->checks) = k;
    return 0;
}

static int hc_error_at(hy_conf_t *cf, const hy_upstream_hc_conf_t *hc, const char *msg, hy_str_t arg)
{
    const char *file = cf->file;
    unsigned line = cf->line;
    cf->file = hc->file, cf->line = hc->line;
    hy_conf_error(cf, msg, (int)arg.len, arg.ptr);
    cf->file = file, cf->line = line;
    return -1;
}

static int postconfiguration(hy_conf_t *cf)
{
    hc_main_t *hm = hc_main(cf);
    hc_check_t **ks = hm->checks->elts;
    for (size_t i = 0; i < hm->checks->nelts; i++) {
        hc_check_t *k = ks[i];
        hy_upstream_hc_conf_t *hc = k->c;
        hy_upstream_group_t *g = hc->group;
        if (g == NULL)
            return hc_error_at(cf, hc, "\"health_check\" requires \"proxy_pass\" to an upstream group%.*s", HY_STR(""));
        if (hc->ssl != NULL && !hy_ussl_ready(hc->ssl))
            return hc_error_at(cf, hc, "no SSL context for the health checks of upstream \"%.*s\"", g->name);
        if (!g->zone)
            return hc_error_at(cf, hc, "health check requires upstream \"%.*s\" to be in shared memory", g->name);
        if (hc->match.ptr != NULL) {
            hc_match_t *ms = hm->matches->elts;
            for (size_t j = 0; j < hm->matches->nelts; j++)
                if (hy_str_eq_str(ms[j].name, hc->match))
                    k->match = &ms[j];
            if (k->match == NULL)
                return hc_error_at(cf, hc, "match \"%.*s\" not found", hc->match);
        }
        if (g->hc == NULL) {
            g->hc = hy_pcalloc(cf->pool, sizeof(*g->hc));
            g->hc->g = g;
        }
        if (g->hc->n == HC_MAX_CHECKS)
            return hc_error_at(cf, hc, "too many health checks of upstream \"%.*s\"", g->name);
        k->idx = g->hc->n;
        k->hg = g->hc;
        g->hc->checks[g->hc->n++] = k;
    }
    return 0;
}

/* ---------------------------------------------------------------- shared entries */

static uint64_t interval_next(const hc_check_t *k, uint64_t now)
{
    uint64_t j = k->c->jitter_ms > 0 ? (uint64_t)rand() % (uint64_t)(k->c->jitter_ms + 1) : 0;
    return now + (uint64_t)k->c->interval_ms + j;
}

/* The entry of peer p (zone locked): found or made, reset when an older generation owns it. NULL: the zone is full
 * or a newer generation owns it. */
static hc_sh_peer_t *entry_locked(struct hy_upstream_hc_group *hg, hy_zone_t *z, void **root, uint64_t epoch,
                                  const hy_upstream_peer_t *p, bool *full)
{
    char key[600];
    snprintf(key, sizeof(key), "%.*s\n%.*s\n%.*s", (int)HY_MIN(hg->g->name.len, 200), hg->g->name.ptr,
             (int)HY_MIN(p->server.len, 200), p->server.ptr, (int)HY_MIN(p->name.len, 180), p->name.ptr);
    hc_sh_peer_t *x;
    for (x = *root; x; x = x->next)
        if (strcmp(x->key, key) == 0)
            break;
    if (x == NULL) {
        x = hy_slab_calloc_locked(z->slab, sizeof(*x));
        if (x == NULL) {
            *full = true;
            return NULL;
        }
        memcpy(x->key, key, strlen(key) + 1);
        x->next = *root;
        *root = x;
    }
    if (x->epoch > epoch)
        return NULL;
    if (x->epoch < epoch) { /* first met by this generation */
        bool was_up = x->epoch != 0 && x->down == 0;
        memset(x->chk, 0, sizeof(x->chk));
        uint32_t down = 0;
        for (unsigned i = 0; i < hg->n; i++) {
            const hy_upstream_hc_conf_t *c = hg->checks[i]->c;
            if (c->mandatory && !(c->persistent && was_up)) {
                x->chk[i].state = HC_CHECKING;
                down |= UINT32_C(1) << i;
            }
        }
        x->down = down;
        x->epoch = epoch;
    }
    return x;
}

static void arm(hc_check_t *k, uint64_t delay)
{
    if (hy_worker_loop == NULL || k->hg->stopped || hy_conns_shutting_down())
        return;
    uint64_t at = hy_clock_now_ms() + delay;
    if (hy_timer_is_linked(&k->timer) && k->timer.expire_at <= at)
        return;
    hy_timer_link(hy_worker_loop, &k->timer, delay);
}

void hy_upstream__hc_attach(hy_upstream_group_t *g)
{
    struct hy_upstream_hc_group *hg = g->hc;
    void **root;
    uint64_t epoch;
    hy_zone_t *z = hg ? hy_upstream__zone(g, &root, &epoch) : NULL;
    if (z == NULL)
        return;
    bool fresh = false;
    hy_slab_lock(z->slab);
    for (size_t i = 0; i < g->npeers; i++) {
        hy_upstream_peer_t *p = &g->peers[i];
        if (p->hc_down != NULL)
            continue;
        bool full = false;
        hc_sh_peer_t *x = entry_locked(hg, z, root, epoch, p, &full);
        if (x != NULL)
            p->hc_down = &x->down;
        else if (full && !hg->full_logged) /* a full zone: the peer is not checked (nor held down) */
            hg->full_logged = true,
            hy_log(HY_LOG_ERR, "no room in zone \"%.*s\" for the health state of peer %.*s of upstream \"%.*s\"",
                   (int)z->name.len, z->name.ptr, (int)p->name.len, p->name.ptr, (int)g->name.len, g->name.ptr);
        fresh = true;
    }
    hy_slab_unlock(z->slab);
    if (fresh && hg->ready)
        for (unsigned i = 0; i < hg->n; i++)
            arm(hg->checks[i], 0);
}

/* ---------------------------------------------------------------- evaluating a response */

static const hy_str_t *field(const hy_header_t *h, size_t nh, hy_str_t name, size_t *from)
{
    for (size_t i = *from; i < nh; i++)
        if (hy_str_caseeq_str(h[i].name, name)) {
            *from = i + 1;
            return &h[i].value;
        }
    *from = nh;
    return NULL;
}

static bool cond_holds(const hc_cond_t *c, int status, const hy_header_t *h, size_t nh, hy_str_t body)
{
    switch (c->kind) {
    case COND_STATUS: {
        bool in = false;
        for (size_t i = 0; i < c->nranges; i++)
            in |= status >= c->ranges[2 * i] && status <= c->ranges[2 * i + 1];
        return in != c->negate;
    }
    case COND_BODY:
        return (hy_regex_exec(c->re, body, NULL) == 1) != c->negate;
    default:
        break;
    }
    size_t from = 0;
    const hy_str_t *v = field(h, nh, c->name, &from);
    if (c->op == OP_ABSENT)
        return v == NULL;
    if (c->op == OP_PRESENT)
        return v != NULL;
    for (; v; v = field(h, nh, c->name, &from)) { /* some field of that name satisfies it */
        bool ok;
        if (c->op == OP_EQ || c->op == OP_NE)
            ok = hy_str_eq_str(*v, c->value) == (c->op == OP_EQ);
        else
            ok = (hy_regex_exec(c->re, *v, NULL) == 1) == (c->op == OP_RE);
        if (ok)
            return true;
    }
    return false;
}

/* Decode a chunked body in place (as far as it is complete); the decoded length. */
static size_t dechunk(char *p, size_t n)
{
    size_t in = 0, out = 0;
    while (in < n) {
        size_t size = 0, k = in;
        for (int d; k < n && (d = hy_hex_digit((unsigned char)p[k])) >= 0;) {
            size = size * 16 + (size_t)d;
            if (size > n)
                return out;
            k++;
        }
        const char *nl = memchr(p + k, '\n', n - k);
        if (k == in || nl == NULL || size == 0)
            break;
        in = (size_t)(nl - p) + 1;
        size_t take = HY_MIN(size, n - in);
        memmove(p + out, p + in, take);
        out += take;
        in += take;
        if (take < size)
            break;
        if (in < n && p[in] == '\r')
            in++;
        if (in < n && p[in] == '\n')
            in++;
    }
    return out;
}

static const char *judge(hc_check_t *k, int status, const hy_header_t *hs, size_t nh, hy_str_t body, char *buf,
                         size_t cap);

/* NULL when the response passes, else why not (static or in `buf`). `complete`: the whole response is there. */
static const char *evaluate(hc_check_t *k, char *data, size_t len, char *buf, size_t cap)
{
    char *end = data + len, *pos = data;
    if (len < 12 || memcmp(data, "HTTP/1.", 7) != 0 || data[8] != ' ')
        return "invalid response";
    int status = 0;
    for (int i = 9; i < 12; i++) {
        if (data[i] < '0' || data[i] > '9')
            return "invalid response";
        status = status * 10 + (data[i] - '0');
    }
    char *nl = memchr(data, '\n', len);
    if (nl == NULL)
        return "invalid response";
    pos = nl + 1;
    hy_header_t hs[100];
    size_t nh = 0;
    bool chunked = false;
    for (;;) {
        hy_str_t name, value;
        int rc = hy_upstream_field(&pos, end, false, &name, &value);
        if (rc < 0)
            return "invalid response";
        if (rc == 0) { /* the empty line ending the head: the body follows it */
            pos = (char *)memchr(pos, '\n', (size_t)(end - pos)) + 1;
            break;
        }
        if (hy_str_caseeq(name, "Transfer-Encoding") && value.len >= 7 &&
            strncasecmp(value.ptr + value.len - 7, "chunked", 7) == 0)
            chunked = true;
        if (nh < HY_ARRAY_SIZE(hs))
            hs[nh++] = (hy_header_t){name, value};
    }
    hy_str_t body = {pos, (size_t)(end - pos)};
    if (body.len > HY_HC_BODY_MAX)
        body.len = HY_HC_BODY_MAX;
    if (chunked)
        body.len = dechunk(body.ptr, body.len);
    return judge(k, status, hs, nh, body, buf, cap);
}

/* NULL when a response with this status, these fields and this body passes, else why (in buf). */
static const char *judge(hc_check_t *k, int status, const hy_header_t *hs, size_t nh, hy_str_t body, char *buf,
                         size_t cap)
{
    if (k->match == NULL) {
        if (status >= 200 && status < 400)
            return NULL;
        snprintf(buf, cap, "status %d", status);
        return buf;
    }
    const hc_cond_t *cs = k->match->conds->elts;
    for (size_t i = 0; i < k->match->conds->nelts; i++)
        if (!cond_holds(&cs[i], status, hs, nh, body)) {
            const char *what = cs[i].kind == COND_STATUS ? "status" : cs[i].kind == COND_BODY ? "body" : "header";
            snprintf(buf, cap, "the response (status %d) does not match \"%.*s\" (%s%s%.*s)", status,
                     (int)k->match->name.len, k->match->name.ptr, what, cs[i].kind == COND_HEADER ? " " : "",
                     cs[i].kind == COND_HEADER ? (int)cs[i].name.len : 0, cs[i].name.ptr ? cs[i].name.ptr : "");
            return buf;
        }
    return NULL;
}

/* ---------------------------------------------------------------- probes */

static void probe_free(void *arg)
{
    hc_probe_t *pr = arg;
    hy_hc_h2_free(pr->h2);
    free(pr);
}

/* The probe ends: record the result under the zone's lock, log a change of state, free the probe. */
static void probe_done(hc_probe_t *pr, const char *failure)
{
    hc_check_t *k = pr->chk;
    hy_upstream_group_t *g = k->hg->g;
    *pr->pprev = pr->next;
    if (pr->next)
        pr->next->pprev = pr->pprev;
    hy_timer_unlink(hy_worker_loop, &pr->timer);
    hy_sock_close(&pr->sock);
    hy_loop_free_later(hy_worker_loop, probe_free, pr);
    void **root;
    uint64_t epoch;
    hy_zone_t *z = hy_upstream__zone(g, &root, &epoch);
    if (z == NULL)
        return;
    uint64_t now = hy_clock_now_ms();
    int change = 0; /* 1 up, -1 down */
    int prev = HC_UP;
    hy_slab_lock(z->slab);
    hc_sh_peer_t *x = pr->x;
    if (x->epoch == epoch) {
        hc_sh_check_t *s = &x->chk[k->idx];
        prev = s->state;
        uint32_t bit = UINT32_C(1) << k->idx;
        if (failure == NULL) {
            s->fails = 0;
            s->passes++;
            if (s->state == HC_CHECKING || (s->state == HC_DOWN && s->passes >= k->c->passes)) {
                s->state = HC_UP;
                x->down &= ~bit;
                change = 1;
            }
        } else {
            s->passes = 0;
            s->fails++;
            if (s->state == HC_CHECKING || (s->state == HC_UP && s->fails >= k->c->fails)) {
                s->state = HC_DOWN;
                x->down |= bit;
                change = -1;
            }
        }
        s->due_ms = interval_next(k, now);
    }
    hy_slab_unlock(z->slab);
    if (failure != NULL)
        hy_log(HY_LOG_INFO, "health check of peer %s of upstream \"%.*s\" failed: %s", pr->name, (int)g->name.len,
               g->name.ptr, failure);
    if (change < 0)
        hy_log(HY_LOG_WARN, "peer %s of upstream \"%.*s\" is unhealthy: %s (health_check in %s:%u)", pr->name,
               (int)g->name.len, g->name.ptr, failure, k->c->file, k->c->line);
    else if (change > 0)
        hy_log(prev == HC_CHECKING ? HY_LOG_NOTICE : HY_LOG_WARN, "peer %s of upstream \"%.*s\" is healthy%s", pr->name,
               (int)g->name.len, g->name.ptr, prev == HC_CHECKING ? " (its first check passed)" : " again");
    arm(k, (uint64_t)k->c->interval_ms);
}

static void fail_errno(hc_probe_t *pr, const char *what, int err)
{
    char buf[200];
    snprintf(buf, sizeof(buf), "%s (%d: %s)", what, err, strerror(err));
    probe_done(pr, buf);
}

static void on_timeout(hy_timer_t *t)
{
    hc_probe_t *pr = t->data;
    probe_done(pr, "timed out (110: Connection timed out) while reading the response");
}

/* Enough of the response to judge it? (the upstream closed, the buffer is full, or Content-Length is complete) */
static bool complete(hy_sock_t *s, const char *err)
{
    if (err != NULL)
        return true;
    char *d = hy_buf_data(&s->input);
    size_t n = s->input.len;
    char *he = memmem(d, n, "\r\n\r\n", 4);
    if (he == NULL)
        return false;
    size_t head = (size_t)(he - d) + 4;
    for (char *p = memchr(d, '\n', head); p && p < he; p = memchr(p + 1, '\n', (size_t)(he - p))) {
        if ((size_t)(he - p) > 16 && strncasecmp(p + 1, "Content-Length:", 15) == 0) {
            int64_t cl = strtoll(p + 16, NULL, 10);
            return cl >= 0 && n - head >= (size_t)HY_MIN(cl, HY_HC_BODY_MAX);
        }
    }
    return false;
}

static void on_written(hy_sock_t *s, const char *err)
{
    hc_probe_t *pr = s->data;
    if (err != NULL)
        fail_errno(pr, "send() failed", s->last_errno ? s->last_errno : EIO);
}

/* proxy_http_version 2: frames as they come. */
static void on_read_h2(hy_sock_t *s, const char *err)
{
    hc_probe_t *pr = s->data;
    char buf[400];
    bool done = false, wrote = false;
    const char *bad = hy_hc_h2_frames(pr->h2, s, &done, &wrote, buf, sizeof(buf));
    if (bad != NULL) {
        probe_done(pr, bad);
        return;
    }
    if (!done && err == NULL) {
        if (wrote)
            hy_sock_write(s, on_written);
        return;
    }
    hy_sock_read_stop(s);
    int status;
    const hy_header_t *hs;
    size_t nh;
    hy_str_t body;
    if (!hy_hc_h2_response(pr->h2, &status, &hs, &nh, &body)) {
        probe_done(pr, "the upstream closed the connection without a response");
        return;
    }
    const char *why = judge(pr->chk, status, hs, nh, body, buf, sizeof(buf));
    probe_done(pr, why);
}

static void on_read(hy_sock_t *s, const char *err)
{
    hc_probe_t *pr = s->data;
    if (err == hy_err_io) {
        fail_errno(pr, "recv() failed", s->last_errno ? s->last_errno : EIO);
        return;
    }
    if (pr->h2 != NULL) {
        on_read_h2(s, err);
        return;
    }
    if (!complete(s, err))
        return;
    hy_sock_read_stop(s);
    char buf[400];
    if (s->input.len == 0) {
        probe_done(pr, "the upstream closed the connection without a response");
        return;
    }
    const char *why = evaluate(pr->chk, hy_buf_data(&s->input), s->input.len, buf, sizeof(buf));
    probe_done(pr, why);
}


/* Connected (and, over TLS, the handshake done and checked): send the request, read the response. */
static void send_request(hc_probe_t *pr)
{
    hy_sock_t *s = &pr->sock;
    const hy_upstream_hc_conf_t *c = pr->chk->c;
    char req[4096];
    if (c->version == 20) {
        if ((pr->h2 = hy_hc_h2_new()) == NULL) {
            probe_done(pr, "out of memory");
            return;
        }
        size_t n = hy_hc_h2_request(c->uri, c->host, c->ssl != NULL, req, sizeof(req));
        if (n == 0) {
            probe_done(pr, "HPACK encoding of the request failed");
            return;
        }
        hy_outq_push_copy(&s->outq, req, n);
        s->read_limit = HY_HC_H2_READ_LIMIT;
    } else {
        int n = snprintf(req, sizeof(req), "GET %.*s HTTP/1.%d\r\nHost: %.*s\r\nConnection: close\r\n\r\n",
                         (int)HY_MIN(c->uri.len, 1500), c->uri.ptr, c->version == 11 ? 1 : 0,
                         (int)HY_MIN(c->host.len, 400), c->host.ptr);
        hy_outq_push_copy(&s->outq, req, (size_t)n);
        s->read_limit = HY_HC_HEAD_MAX + HY_HC_BODY_MAX;
    }
    pr->timer.cb = on_timeout;
    pr->timer.data = pr;
    hy_timer_link(hy_worker_loop, &pr->timer, (uint64_t)(c->send_timeout_ms + c->read_timeout_ms));
    hy_sock_read_start(s, on_read);
    hy_sock_write(s, on_written);
}

/* The TLS handshake ended (bounded by proxy_connect_timeout, as a proxied request's): a failed handshake, or a
 * certificate that proxy_ssl_verify refuses, is a failed check. */
static void on_handshake(hy_sock_t *s, const char *err)
{
    hc_probe_t *pr = s->data;
    char buf[600];
    if (err == hy_err_timeout) {
        probe_done(pr, "timed out (110: Connection timed out) while SSL handshaking");
        return;
    }
    if (err != NULL) {
        const char *why = hy_tls_handshake_error(s);
        if (*why)
            snprintf(buf, sizeof(buf), "SSL_do_handshake() failed (SSL: %s) while SSL handshaking", why);
        else
            snprintf(buf, sizeof(buf), "peer closed connection in SSL handshake");
        probe_done(pr, buf);
        return;
    }
    const char *bad = hy_ussl_probe_check(pr->chk->c->ssl, s, pr->ssl_name, buf, sizeof(buf));
    if (bad != NULL) {
        probe_done(pr, bad);
        return;
    }
    send_request(pr);
}

static void on_connected(hy_sock_t *s, const char *err)
{
    hc_probe_t *pr = s->data;
    const hy_upstream_hc_conf_t *c = pr->chk->c;
    if (err == hy_err_timeout) {
        probe_done(pr, "timed out (110: Connection timed out) while connecting");
        return;
    }
    if (err != NULL) {
        fail_errno(pr, "connect() failed", s->last_errno ? s->last_errno : ECONNREFUSED);
        return;
    }
    pr->connected = true;
    if (c->ssl != NULL) {
        const char *bad = hy_ussl_probe_start(c->ssl, s, c->ssl_host, c->version == 20, (uint64_t)c->connect_timeout_ms,
                                              on_handshake, pr->ssl_name, sizeof(pr->ssl_name));
        if (bad != NULL)
            probe_done(pr, bad);
        return;
    }
    send_request(pr);
}

static void probe_start(hc_check_t *k, const hy_upstream_peer_t *p, hc_sh_peer_t *x)
{
    hc_probe_t *pr = calloc(1, sizeof(*pr));
    if (pr == NULL)
        return;
    pr->chk = k;
    pr->x = x;
    snprintf(pr->name, sizeof(pr->name), "%.*s", (int)HY_MIN(p->name.len, 290), p->name.ptr);
    pr->next = k->probes;
    if (pr->next)
        pr->next->pprev = &pr->next;
    pr->pprev = &k->probes;
    k->probes = pr;
    struct sockaddr_storage sa = p->sa;
    if (k->c->port && sa.ss_family == AF_INET)
        ((struct sockaddr_in *)&sa)->sin_port = htons(k->c->port);
    else if (k->c->port && sa.ss_family == AF_INET6)
        ((struct sockaddr_in6 *)&sa)->sin6_port = htons(k->c->port);
    int rc = hy_sock_connect(&pr->sock, hy_worker_loop, (const struct sockaddr *)&sa, p->salen,
                             (uint64_t)k->c->connect_timeout_ms, on_connected);
    pr->sock.data = pr;
    if (rc < 0) {
        *pr->pprev = pr->next;
        if (pr->next)
            pr->next->pprev = pr->pprev;
        hy_log(HY_LOG_ALERT, "socket() failed (%d: %s) for a health check", -rc, strerror(-rc));
        free(pr);
    }
}

static bool in_flight(const hc_check_t *k, const hc_sh_peer_t *x)
{
    for (const hc_probe_t *pr = k->probes; pr; pr = pr->next)
        if (pr->x == x)
            return true;
    return false;
}

/* The check's timer: claim the peers that are due, probe them, sleep until the next one is due. */
static void on_check_timer(hy_timer_t *t)
{
    hc_check_t *k = t->data;
    struct hy_upstream_hc_group *hg = k->hg;
    hy_upstream_group_t *g = hg->g;
    if (hg->stopped || hy_conns_shutting_down())
        return;
    void **root;
    uint64_t epoch;
    hy_zone_t *z = hy_upstream__zone(g, &root, &epoch);
    if (z == NULL)
        return;
    uint64_t now = hy_clock_now_ms();
    uint64_t next = now + (uint64_t)k->c->interval_ms;
    uint64_t lease = (uint64_t)(k->c->connect_timeout_ms + k->c->send_timeout_ms + k->c->read_timeout_ms) + 1000;
    size_t np = g->npeers, ndue = 0;
    size_t *due = np ? calloc(np, sizeof(*due)) : NULL;
    hc_sh_peer_t **xs = np ? calloc(np, sizeof(*xs)) : NULL;
    if (np && (due == NULL || xs == NULL)) {
        free(due), free(xs);
        arm(k, 1000);
        return;
    }
    hy_slab_lock(z->slab);
    for (size_t i = 0; i < np; i++) {
        hy_upstream_peer_t *p = &g->peers[i];
        if (p->down)
            continue;
        bool full = false;
        hc_sh_peer_t *x = entry_locked(hg, z, root, epoch, p, &full);
        if (x == NULL)
            continue;
        if (p->hc_down == NULL)
            p->hc_down = &x->down;
        hc_sh_check_t *s = &x->chk[k->idx];
        if (in_flight(k, x))
            continue;
        if (s->due_ms <= now) {
            s->due_ms = now + lease; /* claimed: the others find it not due */
            xs[ndue] = x;
            due[ndue++] = i;
        } else if (s->due_ms < next) {
            next = s->due_ms;
        }
    }
    hy_slab_unlock(z->slab);
    for (size_t j = 0; j < ndue; j++)
        probe_start(k, &g->peers[due[j]], xs[j]);
    free(due);
    free(xs);
    arm(k, next > now ? next - now : 1);
}

/* ---------------------------------------------------------------- metrics */

/* hayate_upstream_peer_healthy{upstream,peer}: 1 while no health check holds the peer down, for checked peers (the
 * state in the zone, so the same on every worker) */
static void collect_healthy(hy_metrics_out_t *out, void *data)
{
    hc_main_t *hm = data;
    if (hm == NULL)
        return;
    hc_check_t **ks = hm->checks->elts;
    for (size_t i = 0; i < hm->checks->nelts; i++) {
        if (ks[i]->idx != 0) /* one check per group lists its peers */
            continue;
        hy_upstream_group_t *g = ks[i]->hg->g;
        char gl[400], pl[400], l[900];
        hy_metrics_escape(gl, sizeof(gl), g->name.ptr, g->name.len);
        for (size_t j = 0; j < g->npeers; j++) {
            const hy_upstream_peer_t *p = &g->peers[j];
            if (p->hc_down == NULL)
                continue;
            hy_metrics_escape(pl, sizeof(pl), p->name.ptr, p->name.len);
            snprintf(l, sizeof(l), "upstream=\"%s\",peer=\"%s\"", gl, pl);
            hy_metrics_sample(out, l, *p->hc_down == 0);
        }
    }
}

static hy_metrics_family_t healthy_family = {
    .name = "hayate_upstream_peer_healthy",
    .help = "1 while no active health check (health_check) holds the peer down, 0 while one does.",
    .type = "gauge",
    .collect = collect_healthy,
};

/* ---------------------------------------------------------------- worker */

static int init_worker(hy_cycle_t *cycle)
{
    hc_main_t *hm = cycle->http_main_conf ? cycle->http_main_conf[hy_http_upstream_hc_module.index] : NULL;
    if (hm == NULL)
        return 0;
    hc_check_t **ks = hm->checks->elts;
    srand((unsigned)getpid() ^ (unsigned)hy_clock_now_ms());
    for (size_t i = 0; i < hm->checks->nelts; i++) {
        hc_check_t *k = ks[i];
        k->timer.cb = on_check_timer;
        k->timer.data = k;
        k->hg->ready = true;
        k->hg->stopped = false;
    }
    for (size_t i = 0; i < hm->checks->nelts; i++)
        if (ks[i]->idx == 0)
            hy_upstream__hc_attach(ks[i]->hg->g);
    for (size_t i = 0; i < hm->checks->nelts; i++)
        arm(ks[i], 0);
    healthy_family.data = hm;
    if (hm->checks->nelts)
        hy_metrics_register(&healthy_family);
    return 0;
}

/* The generation goes (exit, or a reload in place): no more checks; probes in flight are dropped. */
static void flush_worker(hy_cycle_t *cycle, bool reopen)
{
    if (reopen)
        return;
    hc_main_t *hm = cycle->http_main_conf ? cycle->http_main_conf[hy_http_upstream_hc_module.index] : NULL;
    if (hm == NULL || hy_worker_loop == NULL)
        return;
    if (healthy_family.data == hm)
        healthy_family.data = NULL;
    hc_check_t **ks = hm->checks->elts;
    for (size_t i = 0; i < hm->checks->nelts; i++) {
        hc_check_t *k = ks[i];
        k->hg->stopped = true;
        hy_timer_unlink(hy_worker_loop, &k->timer);
        while (k->probes) {
            hc_probe_t *pr = k->probes;
            k->probes = pr->next;
            if (k->probes)
                k->probes->pprev = &k->probes;
            hy_timer_unlink(hy_worker_loop, &pr->timer);
            hy_sock_close(&pr->sock);
            hy_loop_free_later(hy_worker_loop, probe_free, pr);
        }
    }
}

/* ---------------------------------------------------------------- module */

static void *create_main(hy_conf_t *cf)
{
    hc_main_t *hm = hy_pcalloc(cf->pool, sizeof(*hm));
    hm->matches = hy_array_create(cf->pool, 2, sizeof(hc_match_t));
    hm->checks = hy_array_create(cf->pool, 2, sizeof(hc_check_t *));
    return hm;
}

static const hy_directive_t hc_directives[] = {
    {.name = "match", .ctx = HY_CTX_HTTP, .args = HY_ARGS_1 | HY_ARGS_BLOCK, .set = set_match},
    {0},
};

hy_module_t hy_http_upstream_hc_module = {
    .name = "http_upstream_hc",
    .directives = hc_directives,
    .create_main_conf = create_main,
    .postconfiguration = postconfiguration,
    .init_worker = init_worker,
    .flush_worker = flush_worker,
};
