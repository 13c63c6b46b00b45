/* resolver.h — an asynchronous DNS stub resolver on the worker's event loop (nginx's ngx_resolver idea), for
 * `resolver` (http/resolver_conf.c) and its users: proxy_pass & co. with variables, `server ... resolve` in upstream{}.
 *
 * One hy_resolver_t per `resolver` directive; its state in a worker (sockets, queries, cache) is made at the first
 * query in that worker. A name is asked as A and (ipv6=on, the default) AAAA at the same time over UDP (one
 * connected socket per server, a random 16-bit id per question, the answer checked against the question:
 * core/dns.c); a CNAME without addresses is asked again for its target. The servers are tried in turn: the
 * questions still unanswered go to the next server every HY_RESOLVER_RESEND_MS until the caller's timeout
 * (resolver_timeout) ends its wait. An answer is cached per worker for its TTL (the smallest of the records used),
 * or for `valid=` when given; an answer without addresses for 10 s or valid=; an error answer (NXDOMAIN, SERVFAIL ...)
 * is not cached (nginx): the next query asks again, and a truncated answer is asked again over TCP of the same
 * server (when that fails, the next server gets the question over UDP at the next resend). Nothing here is
 * thread-safe. */
#ifndef HY_EVENT_RESOLVER_H
#define HY_EVENT_RESOLVER_H

#include <sys/socket.h>
#include "loop.h"
#include "../core/dns.h"

#define HY_RESOLVER_MAX_SERVERS 16
#define HY_RESOLVER_RESEND_MS 5000 /* nginx's resend timeout */
#define HY_RESOLVE_TIMEDOUT 110 /* status of a wait that ended before an answer (nginx's NGX_RESOLVE_TIMEDOUT) */

typedef struct hy_resolver_rt hy_resolver_rt_t;

typedef struct hy_resolver {
    struct sockaddr_storage servers[HY_RESOLVER_MAX_SERVERS];
    socklen_t server_lens[HY_RESOLVER_MAX_SERVERS];
    size_t nservers;
    int64_t valid_ms; /* valid=: how long answers are cached; -1: the answer's TTL */
    bool ipv4, ipv6;  /* which addresses are asked for (at least one) */
    hy_resolver_rt_t *rt; /* the worker's state (NULL until the first query) */
} hy_resolver_t;

typedef struct hy_resolve_result {
    int status; /* 0, an RCODE (HY_DNS_SERVFAIL, HY_DNS_NXDOMAIN ...) or HY_RESOLVE_TIMEDOUT */
    const hy_dns_addr_t *addrs; /* valid during the callback only */
    size_t naddrs;
    const hy_dns_srv_t *srvs; /* an SRV name's records (internal: hy_resolve_srv_start's users get hy_srv_addr_t) */
    size_t nsrvs;
    uint64_t expire_ms; /* monotonic time until which the answer is cached (ask again after it) */
} hy_resolve_result_t;

typedef struct hy_resolve hy_resolve_t;
typedef void (*hy_resolve_cb)(void *data, const hy_resolve_result_t *res);

/** Resolve name (len bytes) with r on loop; cb(data, result) runs once, within timeout_ms. Returns the pending
 * wait, or NULL when cb has already run (a cached answer, or an invalid name: status HY_DNS_FORMERR). */
hy_resolve_t *hy_resolve_start(hy_loop_t *loop, hy_resolver_t *r, const char *name, size_t len, int64_t timeout_ms,
                               hy_resolve_cb cb, void *data);
/** Stop waiting (cb will not run). The question may still be answered and cached for others. */
void hy_resolve_cancel(hy_resolve_t *q);
/* ---- SRV (RFC 2782): `server ... service=` in upstream{} */

typedef struct hy_srv_addr {
    hy_dns_addr_t addr;
    uint16_t port, priority, weight; /* the SRV record's (a weight of 0 counts as 1, as nginx) */
} hy_srv_addr_t;

typedef struct hy_resolve_srv_result {
    int status; /* 0 (naddrs > 0), or as hy_resolve_result_t's */
    const hy_srv_addr_t *addrs; /* valid during the callback only; ordered by priority, then as answered */
    size_t naddrs;
    uint64_t expire_ms; /* the earliest expiry of the SRV answer and its targets' */
} hy_resolve_srv_result_t;

typedef struct hy_resolve_srv hy_resolve_srv_t;
typedef void (*hy_resolve_srv_cb)(void *data, const hy_resolve_srv_result_t *res);

/** Resolve the SRV records of name (e.g. "_http._tcp.example.net"), then each record's target as a host name
 * (A/AAAA, cached as names are), as nginx: the addresses of all targets that resolved, with each record's port,
 * priority and weight. When no target gave an address, the status is NXDOMAIN if a target (or the SRV name)
 * does not exist, else the first failure's. cb runs once; returns the pending wait, or NULL when cb has run. */
hy_resolve_srv_t *hy_resolve_srv_start(hy_loop_t *loop, hy_resolver_t *r, const char *name, size_t len,
                                       int64_t timeout_ms, hy_resolve_srv_cb cb, void *data);
/** Stop waiting (cb will not run). */
void hy_resolve_srv_cancel(hy_resolve_srv_t *q);
/** Free r's worker state (sockets, cache, waits without telling their owners): the generation that owns r is
 * being released. */
void hy_resolver_release(hy_resolver_t *r);
/** nginx's words for a status: "Host not found", "Operation timed out" ... */
const char *hy_resolve_strerror(int status);
/** Fill r's servers from "addr[:port]" (IPv4, [IPv6] or a host name resolved now with getaddrinfo: all its
 * addresses). 0, or -1 (*why: "invalid port", "host not found", "too many resolvers"). */
int hy_resolver_add_server(hy_resolver_t *r, const char *spec, size_t len, const char **why);

#endif
