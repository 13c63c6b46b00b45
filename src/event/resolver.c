/* resolver.c — the DNS client on the event loop (see resolver.h). */
#include <errno.h>
#include <netdb.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/random.h>
#include "resolver.h"
#include "../core/clock.h"
#include "../core/log.h"
#include "../core/mem.h"

#define ERROR_VALID_MS 10000
#define MAX_NODES 4096

typedef struct question {
    bool active, done;
    uint16_t qtype, id;
    char qname[HY_DNS_NAME_MAX + 1]; /* the name asked now (a CNAME's target after a restart) */
    size_t qlen;
    char cname[HY_DNS_NAME_MAX + 1]; /* a bare CNAME answered (no address of the type): its target */
    int rcode;
    uint32_t ttl;
    size_t naddrs;
    hy_dns_addr_t addrs[HY_DNS_MAX_ADDRS];
    hy_dns_srv_t *srvs; /* an SRV question's records (malloc'ed) */
    size_t nsrvs;
    struct tcpq *tcp; /* asking again over TCP after a truncated answer */
} question_t;

/* A question over TCP (RFC 1035 4.2.2: a two-byte length before each message). */
typedef struct tcpq {
    hy_io_t io;
    struct node *n;
    int k;                       /* which question of the node */
    uint8_t out[2 + HY_DNS_QUERY_MAX];
    size_t outlen, sent;
    uint8_t *in;                 /* malloc'ed, grows to the announced length */
    size_t inlen, incap;
} tcpq_t;

typedef struct node node_t;
struct hy_resolve {
    hy_resolve_t *next;
    node_t *node;
    int hops; /* CNAMEs followed for it */
    hy_resolve_cb cb;
    void *data;
    hy_timer_t timer;
    hy_loop_t *loop;
};

struct node {
    node_t *next;
    hy_resolver_rt_t *rt;
    char name[HY_DNS_NAME_MAX + 1];
    size_t len;
    bool srv; /* asked as SRV (else A and AAAA) */
    bool pending;
    uint64_t expire_ms;
    int status;
    size_t naddrs;
    hy_dns_addr_t addrs[2 * HY_DNS_MAX_ADDRS];
    hy_dns_srv_t *srvs; /* an SRV name's records (malloc'ed) */
    size_t nsrvs;
    question_t q[2]; /* A, AAAA */
    int last;        /* the question answered last */
    char cname[HY_DNS_NAME_MAX + 1]; /* cached: the name is an alias of this one ("" when not) */
    size_t server;   /* the server the next send goes to */
    hy_timer_t resend;
    hy_resolve_t *waiters;
};

struct hy_resolver_rt {
    hy_resolver_t *r;
    hy_loop_t *loop;
    hy_io_t io[HY_RESOLVER_MAX_SERVERS];
    bool open[HY_RESOLVER_MAX_SERVERS];
    node_t *nodes;
    size_t nnodes, next_server;
};

const char *hy_resolve_strerror(int status)
{
    switch (status) {
    case HY_DNS_FORMERR: return "Format error";
    case HY_DNS_SERVFAIL: return "Server failure";
    case HY_DNS_NXDOMAIN: return "Host not found";
    case HY_DNS_NOTIMP: return "Unimplemented";
    case HY_DNS_REFUSED: return "Operation refused";
    case HY_RESOLVE_TIMEDOUT: return "Operation timed out";
    default: return "Unknown error";
    }
}

int hy_resolver_add_server(hy_resolver_t *r, const char *spec, size_t len, const char **why)
{
    char host[256];
    const char *port = "53";
    char portbuf[8];
    const char *colon = NULL;
    if (len && spec[0] == '[') {
        const char *rb = memchr(spec, ']', len);
        if (rb == NULL || (size_t)(rb - spec) >= sizeof(host)) {
            *why = "invalid address";
            return -1;
        }
        snprintf(host, sizeof(host), "%.*s", (int)(rb - spec - 1), spec + 1);
        if (rb + 1 < spec + len) {
            if (rb[1] != ':') {
                *why = "invalid address";
                return -1;
            }
            colon = rb + 1;
        }
    } else {
        colon = memchr(spec, ':', len);
        if (colon && memchr(colon + 1, ':', (size_t)(spec + len - colon - 1)))
            colon = NULL; /* a bare IPv6 address */
        size_t hl = colon ? (size_t)(colon - spec) : len;
        if (hl == 0 || hl >= sizeof(host)) {
            *why = "invalid address";
            return -1;
        }
        snprintf(host, sizeof(host), "%.*s", (int)hl, spec);
    }
    if (colon) {
        size_t pl = (size_t)(spec + len - colon - 1);
        long v = 0;
        for (size_t i = 0; i < pl; i++)
            v = colon[1 + i] >= '0' && colon[1 + i] <= '9' && v < 100000 ? v * 10 + (colon[1 + i] - '0') : -1000000;
        if (pl == 0 || v < 1 || v > 65535) {
            *why = "invalid port";
            return -1;
        }
        snprintf(portbuf, sizeof(portbuf), "%ld", v);
        port = portbuf;
    }
    struct addrinfo hints = {.ai_family = AF_UNSPEC, .ai_socktype = SOCK_DGRAM}, *res = NULL;
    if (getaddrinfo(host, port, &hints, &res) != 0 || res == NULL) {
        *why = "host not found";
        return -1;
    }
    for (struct addrinfo *ai = res; ai; ai = ai->ai_next) {
        if (ai->ai_family != AF_INET && ai->ai_family != AF_INET6)
            continue;
        if (r->nservers == HY_RESOLVER_MAX_SERVERS) {
            freeaddrinfo(res);
            *why = "too many resolvers";
            return -1;
        }
        memcpy(&r->servers[r->nservers], ai->ai_addr, ai->ai_addrlen);
        r->server_lens[r->nservers++] = ai->ai_addrlen;
    }
    freeaddrinfo(res);
    return 0;
}

/* ---------------------------------------------------------------- sockets */

static void on_read(hy_io_t *io, unsigned revents);

static uint16_t random_id(void)
{
    uint16_t id;
    if (getrandom(&id, sizeof(id), GRND_NONBLOCK) != (ssize_t)sizeof(id))
        id = (uint16_t)random();
    return id;
}

static int sock_of(hy_resolver_rt_t *rt, size_t i)
{
    if (rt->open[i])
        return rt->io[i].fd;
    hy_resolver_t *r = rt->r;
    int fd = socket(r->servers[i].ss_family, SOCK_DGRAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
    if (fd < 0)
        return -1;
    if (connect(fd, (const struct sockaddr *)&r->servers[i], r->server_lens[i]) != 0) {
        close(fd);
        return -1;
    }
    hy_io_init(&rt->io[i], fd, on_read, rt);
    hy_io_set(rt->loop, &rt->io[i], HY_EV_READ);
    rt->open[i] = true;
    return fd;
}

static void send_questions(node_t *n)
{
    hy_resolver_rt_t *rt = n->rt;
    size_t i = n->server % rt->r->nservers;
    int fd = sock_of(rt, i);
    for (int k = 0; k < 2; k++) {
        question_t *q = &n->q[k];
        if (!q->active || q->done || q->tcp)
            continue;
        uint8_t buf[HY_DNS_QUERY_MAX];
        int len = hy_dns_query(buf, q->id, q->qname, q->qlen, q->qtype);
        if (fd >= 0 && len > 0 && send(fd, buf, (size_t)len, 0) < 0)
            hy_log(HY_LOG_ERR, "send() failed (%d: %s) while resolving %s", errno, strerror(errno), n->name);
    }
    hy_timer_link(rt->loop, &n->resend, HY_RESOLVER_RESEND_MS);
}

/* ---------------------------------------------------------------- nodes */

static void tcp_close(question_t *q)
{
    tcpq_t *t = q->tcp;
    if (t == NULL)
        return;
    q->tcp = NULL;
    hy_loop_t *loop = t->n->rt->loop;
    hy_io_close(loop, &t->io);
    free(t->in);
    t->in = NULL;
    hy_loop_free_later(loop, free, t); /* an event for it may still be in this iteration's batch */
}

static void node_free(node_t *n)
{
    hy_resolver_rt_t *rt = n->rt;
    hy_timer_unlink(rt->loop, &n->resend);
    tcp_close(&n->q[0]);
    tcp_close(&n->q[1]);
    for (node_t **pp = &rt->nodes; *pp; pp = &(*pp)->next)
        if (*pp == n) {
            *pp = n->next;
            break;
        }
    rt->nnodes--;
    free(n->q[0].srvs);
    free(n->q[1].srvs);
    free(n->srvs);
    free(n);
}

static void on_resend(hy_timer_t *t)
{
    node_t *n = t->data;
    if (n->waiters == NULL) { /* nobody waits any more: stop asking */
        node_free(n);
        return;
    }
    n->server++;
    /* a TCP exchange still unanswered is given up: the question goes to the next server over UDP */
    tcp_close(&n->q[0]);
    tcp_close(&n->q[1]);
    send_questions(n);
}

static void question_start(question_t *q, const char *name, size_t len)
{
    q->id = random_id();
    memcpy(q->qname, name, len);
    q->qname[len] = '\0';
    q->qlen = len;
    q->done = false;
}

static void node_ask(node_t *n)
{
    hy_resolver_t *r = n->rt->r;
    n->pending = true;
    n->cname[0] = '\0';
    n->server = n->rt->next_server++; /* spread first questions over the servers */
    free(n->q[0].srvs);
    free(n->q[1].srvs);
    memset(n->q, 0, sizeof(n->q));
    n->q[0].active = r->ipv4 || n->srv;
    n->q[0].qtype = n->srv ? HY_DNS_SRV : HY_DNS_A;
    n->q[1].active = r->ipv6 && !n->srv;
    n->q[1].qtype = HY_DNS_AAAA;
    for (int k = 0; k < 2; k++)
        if (n->q[k].active)
            question_start(&n->q[k], n->name, n->len);
    send_questions(n);
}

static void deliver_one(hy_resolve_t *w, const node_t *n)
{
    hy_resolve_result_t res = {.status = n->status, .addrs = n->addrs, .naddrs = n->naddrs, .srvs = n->srvs,
                               .nsrvs = n->nsrvs, .expire_ms = n->expire_ms};
    hy_timer_unlink(w->loop, &w->timer);
    w->cb(w->data, &res);
    free(w);
}

static void deliver(node_t *n)
{
    while (n->waiters) {
        hy_resolve_t *w = n->waiters;
        n->waiters = w->next;
        deliver_one(w, n);
    }
}

static node_t *node_get(hy_resolver_rt_t *rt, const char *name, size_t len, bool srv, uint64_t now);
static bool attach(hy_resolve_t *w, node_t *n, uint64_t now);

/* The answers ended in a bare CNAME: the name is cached as an alias (for the CNAME's TTL, or valid=) and its
 * waiters move to the target's name (cached or asked now). */
static void follow(node_t *n, const char *target, uint32_t ttl)
{
    uint64_t now = hy_clock_now_ms();
    hy_resolver_t *r = n->rt->r;
    n->pending = false;
    n->status = HY_DNS_NXDOMAIN;
    n->naddrs = 0;
    n->nsrvs = 0;
    n->expire_ms = now + (r->valid_ms >= 0 ? (uint64_t)r->valid_ms : (uint64_t)ttl * 1000);
    memcpy(n->cname, target, strlen(target) + 1);
    hy_resolve_t *ws = n->waiters;
    n->waiters = NULL;
    while (ws) {
        hy_resolve_t *w = ws;
        ws = w->next;
        attach(w, n, now);
    }
}

/* Both questions answered: nginx's rules. Any error answer fails the name (not cached: the next query asks
 * again); else the addresses of both types; else, when the answer that came last was a bare CNAME, its target;
 * else "no data" (cached 10 s or valid=). */
static void node_done(node_t *n)
{
    hy_resolver_t *r = n->rt->r;
    hy_timer_unlink(n->rt->loop, &n->resend);
    n->naddrs = 0;
    free(n->srvs);
    n->srvs = NULL;
    n->nsrvs = 0;
    uint32_t ttl = UINT32_MAX;
    int status = 0;
    for (int k = 0; k < 2; k++) {
        question_t *q = &n->q[k];
        if (!q->active)
            continue;
        for (size_t i = 0; i < q->naddrs; i++)
            n->addrs[n->naddrs++] = q->addrs[i];
        if ((q->naddrs || q->nsrvs) && q->ttl < ttl)
            ttl = q->ttl;
        if (q->nsrvs) { /* the SRV question's records move to the node */
            n->srvs = q->srvs;
            n->nsrvs = q->nsrvs;
            q->srvs = NULL;
            q->nsrvs = 0;
        }
        if (status == 0 && q->rcode != 0)
            status = q->rcode;
    }
    uint64_t now = hy_clock_now_ms();
    if (status) {
        n->status = status;
        n->naddrs = 0;
        free(n->srvs);
        n->srvs = NULL;
        n->nsrvs = 0;
        n->expire_ms = now;
    } else if (n->naddrs || n->nsrvs) {
        n->status = 0;
        n->expire_ms = now + (r->valid_ms >= 0 ? (uint64_t)r->valid_ms : (uint64_t)ttl * 1000);
    } else if (n->q[n->last].cname[0]) {
        follow(n, n->q[n->last].cname, n->q[n->last].ttl);
        return;
    } else {
        n->status = HY_DNS_NXDOMAIN;
        n->expire_ms = now + (r->valid_ms >= 0 ? (uint64_t)r->valid_ms : ERROR_VALID_MS);
    }
    n->pending = false;
    deliver(n);
}

static void tcp_start(node_t *n, int k, size_t server);

/* An answer (parsed) to question k of node n. */
static void question_answer(node_t *n, int k, hy_dns_answer_t *a, size_t server, bool tcp)
{
    question_t *q = &n->q[k];
    if (a->rcode == HY_DNS_FORMERR || a->rcode > HY_DNS_REFUSED) { /* nginx: not an answer; the question waits on */
        hy_log(HY_LOG_ERR, "DNS error (%d: %s), query id:%u, name:\"%s\"", a->rcode, hy_resolve_strerror(a->rcode),
               (unsigned)q->id, q->qname);
        return;
    }
    if (a->truncated) {
        if (!tcp) { /* ask the same server again over TCP */
            tcp_start(n, k, server);
            if (q->tcp != NULL)
                return;
        }
        hy_log(HY_LOG_ERR, "truncated DNS response for %s", q->qname);
        a->rcode = HY_DNS_SERVFAIL;
    }
    q->done = true;
    q->rcode = a->rcode;
    q->naddrs = a->rcode ? 0 : a->naddrs;
    memcpy(q->addrs, a->addrs, q->naddrs * sizeof(a->addrs[0]));
    free(q->srvs);
    q->srvs = NULL;
    q->nsrvs = a->rcode ? 0 : a->nsrvs;
    if (q->nsrvs) {
        q->srvs = hy_alloc(q->nsrvs * sizeof(*q->srvs));
        memcpy(q->srvs, a->srvs, q->nsrvs * sizeof(*q->srvs));
    }
    q->ttl = a->ttl;
    q->cname[0] = '\0';
    if (a->rcode == 0 && a->naddrs == 0 && a->nsrvs == 0 && a->cname[0])
        memcpy(q->cname, a->cname, sizeof(q->cname));
    n->last = k;
    if ((!n->q[0].active || n->q[0].done) && (!n->q[1].active || n->q[1].done))
        node_done(n);
}

static void on_answer(hy_resolver_rt_t *rt, const uint8_t *msg, size_t len, size_t server)
{
    uint16_t id = hy_dns_id(msg, len);
    for (node_t *n = rt->nodes; n; n = n->next) {
        if (!n->pending)
            continue;
        for (int k = 0; k < 2; k++) {
            question_t *q = &n->q[k];
            if (!q->active || q->done || q->tcp || q->id != id)
                continue;
            hy_dns_answer_t a;
            int rc = hy_dns_parse(msg, len, id, q->qname, q->qlen, q->qtype, &a);
            if (rc == HY_DNS_MISMATCH)
                continue;
            if (rc == HY_DNS_MALFORMED) {
                hy_log(HY_LOG_ERR, "invalid DNS response for %s (ignored)", q->qname);
                return;
            }
            question_answer(n, k, &a, server, false);
            return;
        }
    }
}

static void on_tcp(hy_io_t *io, unsigned revents)
{
    tcpq_t *t = io->data;
    node_t *n = t->n;
    int k = t->k;
    question_t *q = &n->q[k];
    if (t->sent < t->outlen) {
        ssize_t w = send(io->fd, t->out + t->sent, t->outlen - t->sent, MSG_NOSIGNAL);
        if (w < 0 && (errno == EAGAIN || errno == EINTR))
            return;
        if (w < 0)
            goto failed;
        t->sent += (size_t)w;
        if (t->sent == t->outlen)
            hy_io_set(n->rt->loop, io, HY_EV_READ);
        return;
    }
    (void)revents;
    for (;;) {
        size_t want = t->inlen < 2 ? 2 : 2 + (size_t)(t->in[0] << 8 | t->in[1]);
        if (t->inlen >= 2 && t->inlen == want)
            break;
        if (t->incap < want) {
            t->in = realloc(t->in, want);
            t->incap = want;
        }
        ssize_t r = recv(io->fd, t->in + t->inlen, want - t->inlen, 0);
        if (r < 0 && (errno == EAGAIN || errno == EINTR))
            return;
        if (r == 0)
            errno = ECONNRESET;
        if (r <= 0)
            goto failed;
        t->inlen += (size_t)r;
    }
    /* the whole message: close, then use it */
    uint8_t *msg = t->in;
    size_t len = t->inlen - 2;
    t->in = NULL;
    tcp_close(q);
    hy_dns_answer_t a;
    int rc = hy_dns_parse(msg + 2, len, q->id, q->qname, q->qlen, q->qtype, &a);
    free(msg);
    if (rc != HY_DNS_OK) { /* asked again over UDP at the next resend */
        hy_log(HY_LOG_ERR, "invalid DNS response over TCP for %s", q->qname);
        return;
    }
    question_answer(n, k, &a, 0, true);
    return;
failed: /* the question goes to the next server over UDP at the next resend */
    hy_log(HY_LOG_ERR, "DNS over TCP failed (%d: %s) for %s", errno, strerror(errno), q->qname);
    tcp_close(q);
}

static void tcp_start(node_t *n, int k, size_t server)
{
    hy_resolver_t *r = n->rt->r;
    question_t *q = &n->q[k];
    int fd = socket(r->servers[server].ss_family, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
    if (fd < 0)
        return;
    if (connect(fd, (const struct sockaddr *)&r->servers[server], r->server_lens[server]) != 0 &&
        errno != EINPROGRESS) {
        close(fd);
        return;
    }
    tcpq_t *t = hy_calloc(sizeof(*t));
    t->n = n;
    t->k = k;
    int len = hy_dns_query(t->out + 2, q->id, q->qname, q->qlen, q->qtype);
    t->out[0] = (uint8_t)(len >> 8), t->out[1] = (uint8_t)len;
    t->outlen = (size_t)len + 2;
    hy_io_init(&t->io, fd, on_tcp, t);
    hy_io_set(n->rt->loop, &t->io, HY_EV_WRITE);
    q->tcp = t;
}

static void on_read(hy_io_t *io, unsigned revents)
{
    (void)revents;
    hy_resolver_rt_t *rt = io->data;
    uint8_t buf[4096];
    for (int i = 0; i < 64; i++) {
        ssize_t n = recv(io->fd, buf, sizeof(buf), 0);
        if (n < 0) {
            if (errno != EAGAIN && errno != EINTR)
                hy_log(HY_LOG_ERR, "recv() failed (%d: %s) while resolving", errno, strerror(errno));
            return;
        }
        on_answer(rt, buf, (size_t)n, (size_t)(io - rt->io));
    }
}

/* ---------------------------------------------------------------- waits */

static void on_wait_timeout(hy_timer_t *t)
{
    hy_resolve_t *w = t->data;
    node_t *n = w->node;
    for (hy_resolve_t **pp = &n->waiters; *pp; pp = &(*pp)->next)
        if (*pp == w) {
            *pp = w->next;
            break;
        }
    hy_resolve_result_t res = {.status = HY_RESOLVE_TIMEDOUT};
    hy_resolve_cb cb = w->cb;
    void *data = w->data;
    free(w);
    if (n->waiters == NULL && n->pending)
        node_free(n);
    cb(data, &res);
}

void hy_resolve_cancel(hy_resolve_t *w)
{
    if (w == NULL)
        return;
    node_t *n = w->node;
    hy_timer_unlink(w->loop, &w->timer);
    for (hy_resolve_t **pp = &n->waiters; *pp; pp = &(*pp)->next)
        if (*pp == w) {
            *pp = w->next;
            break;
        }
    free(w);
    /* a pending node with no waiter is dropped at its next resend */
}

static void sweep(hy_resolver_rt_t *rt, uint64_t now)
{
    for (node_t **pp = &rt->nodes; *pp;) {
        node_t *n = *pp;
        if (!n->pending && n->waiters == NULL && n->expire_ms <= now) {
            *pp = n->next;
            rt->nnodes--;
            free(n->q[0].srvs);
            free(n->q[1].srvs);
            free(n->srvs);
            free(n);
        } else {
            pp = &n->next;
        }
    }
}

static node_t *node_get(hy_resolver_rt_t *rt, const char *name, size_t len, bool srv, uint64_t now)
{
    for (node_t *x = rt->nodes; x; x = x->next)
        if (x->len == len && x->srv == srv && strncasecmp(x->name, name, len) == 0)
            return x;
    if (rt->nnodes >= MAX_NODES)
        sweep(rt, now);
    node_t *n = hy_calloc(sizeof(*n));
    n->rt = rt;
    for (size_t i = 0; i < len; i++)
        n->name[i] = name[i] >= 'A' && name[i] <= 'Z' ? (char)(name[i] + 32) : name[i];
    n->len = len;
    n->srv = srv;
    n->resend.cb = on_resend;
    n->resend.data = n;
    n->next = rt->nodes;
    rt->nodes = n;
    rt->nnodes++;
    return n;
}

/* w waits for n: answered now from the cache (true: w is gone), moved on to the target of a cached alias, or
 * queued (n is asked when it is not already). */
static bool attach(hy_resolve_t *w, node_t *n, uint64_t now)
{
    w->node = n;
    if (!n->pending && n->expire_ms > now) {
        if (n->cname[0] == '\0') {
            deliver_one(w, n);
            return true;
        }
        if (++w->hops > HY_DNS_MAX_CNAMES) {
            hy_log(HY_LOG_ERR, "too many CNAMEs while resolving %s", n->name);
            n->cname[0] = '\0'; /* delivered as "Host not found"; the alias is asked again next time */
            n->expire_ms = now;
            deliver_one(w, n);
            return true;
        }
        return attach(w, node_get(n->rt, n->cname, strlen(n->cname), n->srv, now), now);
    }
    w->next = n->waiters;
    n->waiters = w;
    if (!n->pending)
        node_ask(n);
    return false;
}

static hy_resolve_t *start(hy_loop_t *loop, hy_resolver_t *r, const char *name, size_t len, bool srv,
                           int64_t timeout_ms, hy_resolve_cb cb, void *data)
{
    if (len && name[len - 1] == '.')
        len--;
    if (!hy_dns_name_valid(name, len) || r->nservers == 0) {
        hy_resolve_result_t res = {.status = HY_DNS_FORMERR, .expire_ms = hy_clock_now_ms()};
        cb(data, &res);
        return NULL;
    }
    hy_resolver_rt_t *rt = r->rt;
    if (rt == NULL) {
        rt = r->rt = hy_calloc(sizeof(*rt));
        rt->r = r;
        rt->loop = loop;
    }
    uint64_t now = hy_clock_now_ms();
    node_t *n = node_get(rt, name, len, srv, now);
    if (!n->pending && n->expire_ms > now && n->cname[0] == '\0') {
        hy_resolve_result_t res = {.status = n->status, .addrs = n->addrs, .naddrs = n->naddrs, .srvs = n->srvs,
                                   .nsrvs = n->nsrvs, .expire_ms = n->expire_ms};
        cb(data, &res);
        return NULL;
    }
    hy_resolve_t *w = hy_calloc(sizeof(*w));
    w->cb = cb;
    w->data = data;
    w->loop = loop;
    w->timer.cb = on_wait_timeout;
    w->timer.data = w;
    hy_timer_link(loop, &w->timer, timeout_ms > 0 ? (uint64_t)timeout_ms : 1);
    return attach(w, n, now) ? NULL : w;
}

hy_resolve_t *hy_resolve_start(hy_loop_t *loop, hy_resolver_t *r, const char *name, size_t len, int64_t timeout_ms,
                               hy_resolve_cb cb, void *data)
{
    return start(loop, r, name, len, false, timeout_ms, cb, data);
}

/* ---------------------------------------------------------------- SRV */

typedef struct srv_target {
    struct hy_resolve_srv *owner;
    hy_dns_srv_t rec;
    hy_resolve_t *q;
    bool done;
    int status;
    hy_dns_addr_t *addrs; /* malloc'ed */
    size_t naddrs;
} srv_target_t;

struct hy_resolve_srv {
    hy_loop_t *loop;
    hy_resolver_t *r;
    int64_t timeout_ms;
    hy_resolve_srv_cb cb;
    void *data;
    hy_resolve_t *wait;    /* the SRV name's */
    srv_target_t *targets; /* one per record */
    size_t ntargets, pending;
    uint64_t expire_ms;
    bool starting, reported;
};

static void srv_free(hy_resolve_srv_t *q)
{
    for (size_t i = 0; i < q->ntargets; i++) {
        hy_resolve_cancel(q->targets[i].q);
        free(q->targets[i].addrs);
    }
    free(q->targets);
    free(q);
}

/* Everything is in: nginx's report (ngx_resolver_report_srv), the records in priority order. */
static void srv_report(hy_resolve_srv_t *q, int status)
{
    size_t n = 0;
    for (size_t i = 0; i < q->ntargets; i++)
        n += q->targets[i].naddrs;
    hy_srv_addr_t *all = n ? hy_alloc(n * sizeof(*all)) : NULL;
    size_t k = 0;
    if (n)
        for (size_t i = 0; i < q->ntargets; i++)
            for (size_t j = 0; j < q->targets[i].naddrs; j++) {
                const srv_target_t *t = &q->targets[i];
                memset(&all[k], 0, sizeof(all[k]));
                all[k].addr = t->addrs[j];
                all[k].port = t->rec.port;
                all[k].priority = t->rec.priority;
                all[k].weight = t->rec.weight ? t->rec.weight : 1;
                k++;
            }
    if (status == 0 && n == 0 && q->ntargets) {
        status = q->targets[0].status;
        for (size_t i = 0; i < q->ntargets; i++)
            if (q->targets[i].status == HY_DNS_NXDOMAIN)
                status = HY_DNS_NXDOMAIN;
        if (status == 0)
            status = HY_DNS_NXDOMAIN;
    }
    hy_resolve_srv_result_t res = {.status = status, .addrs = all, .naddrs = n, .expire_ms = q->expire_ms};
    q->reported = true;
    q->cb(q->data, &res);
    free(all);
    if (!q->starting)
        srv_free(q);
}

static void on_srv_target(void *data, const hy_resolve_result_t *res)
{
    srv_target_t *t = data;
    hy_resolve_srv_t *q = t->owner;
    t->q = NULL;
    t->done = true;
    t->status = res->status;
    if (res->status == 0 && res->naddrs) {
        t->addrs = hy_alloc(res->naddrs * sizeof(*t->addrs));
        memcpy(t->addrs, res->addrs, res->naddrs * sizeof(*t->addrs));
        t->naddrs = res->naddrs;
    }
    if (res->status != HY_RESOLVE_TIMEDOUT && res->expire_ms < q->expire_ms)
        q->expire_ms = res->expire_ms;
    if (--q->pending == 0)
        srv_report(q, 0);
}

static void on_srv_name(void *data, const hy_resolve_result_t *res)
{
    hy_resolve_srv_t *q = data;
    q->wait = NULL;
    q->expire_ms = res->expire_ms;
    if (res->status != 0 || res->nsrvs == 0) {
        srv_report(q, res->status ? res->status : HY_DNS_NXDOMAIN);
        return;
    }
    q->targets = hy_calloc(res->nsrvs * sizeof(*q->targets));
    q->ntargets = res->nsrvs;
    for (size_t i = 0; i < res->nsrvs; i++) {
        q->targets[i].owner = q;
        q->targets[i].rec = res->srvs[i];
    }
    /* insertion sort by priority keeps the answer's order within a priority */
    for (size_t i = 1; i < q->ntargets; i++)
        for (size_t j = i; j > 0 && q->targets[j - 1].rec.priority > q->targets[j].rec.priority; j--) {
            hy_dns_srv_t tmp = q->targets[j].rec;
            q->targets[j].rec = q->targets[j - 1].rec;
            q->targets[j - 1].rec = tmp;
        }
    q->pending = q->ntargets + 1; /* targets answered from the cache cannot report before the loop ends */
    for (size_t i = 0; i < q->ntargets; i++) {
        srv_target_t *t = &q->targets[i];
        t->q = hy_resolve_start(q->loop, q->r, t->rec.target, strlen(t->rec.target), q->timeout_ms, on_srv_target, t);
    }
    if (--q->pending == 0)
        srv_report(q, 0);
}

hy_resolve_srv_t *hy_resolve_srv_start(hy_loop_t *loop, hy_resolver_t *r, const char *name, size_t len,
                                       int64_t timeout_ms, hy_resolve_srv_cb cb, void *data)
{
    hy_resolve_srv_t *q = hy_calloc(sizeof(*q));
    q->loop = loop;
    q->r = r;
    q->timeout_ms = timeout_ms;
    q->cb = cb;
    q->data = data;
    q->starting = true;
    q->wait = start(loop, r, name, len, true, timeout_ms, on_srv_name, q);
    q->starting = false;
    if (q->reported) {
        srv_free(q);
        return NULL;
    }
    return q;
}

void hy_resolve_srv_cancel(hy_resolve_srv_t *q)
{
    if (q == NULL)
        return;
    hy_resolve_cancel(q->wait);
    srv_free(q);
}

static void rt_free(void *arg)
{
    free(arg);
}

void hy_resolver_release(hy_resolver_t *r)
{
    hy_resolver_rt_t *rt = r->rt;
    if (rt == NULL)
        return;
    r->rt = NULL;
    while (rt->nodes) {
        node_t *n = rt->nodes;
        while (n->waiters) { /* nobody is told: their owners are gone with the generation */
            hy_resolve_t *w = n->waiters;
            n->waiters = w->next;
            hy_timer_unlink(w->loop, &w->timer);
            free(w);
        }
        node_free(n);
    }
    for (size_t i = 0; i < HY_RESOLVER_MAX_SERVERS; i++)
        if (rt->open[i])
            hy_io_close(rt->loop, &rt->io[i]);
    hy_loop_free_later(rt->loop, rt_free, rt); /* events of this iteration may still name its sockets */
}
