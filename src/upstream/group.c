/* group.c — upstream{} blocks and implicit upstreams (proxy_pass host:port), name resolution at load
 * (getaddrinfo), and the balancer: nginx's smooth weighted round robin with max_fails/fail_timeout, backup, down
 * and max_conns. Peer state is per worker (each worker has its own copy after fork, as nginx without `zone`), but
 * for the connection counts of a `zone` upstream's server lines, which live in the zone (share_conns). */
#include <netdb.h>
#include <stdlib.h>
#include <stdio.h>
#include <string.h>
#include <arpa/inet.h>
#include "upstream.h"
#include "health.h"
#include "sticky.h"
#include "../core/clock.h"
#include "../core/log.h"
#include "../core/stats.h"
#include "../conf/cycle.h"
#include "../conf/zone.h"
#include "../http/vars.h"
#include "../http/resolver_conf.h"

typedef struct ups_main {
    hy_array_t *groups;       /* hy_upstream_group_t * */
    hy_upstream_group_t *cur; /* the upstream{} being parsed */
} ups_main_t;

/* One peer a resolve server stands for now: an address with its port; from SRV records also the record's weight
 * and whether it is a backup (records of a priority other than the lowest). Compared with memcmp: built zeroed. */
typedef struct ups_raddr {
    hy_dns_addr_t addr;
    uint16_t port, weight; /* weight 0: the server's weight= */
    uint8_t backup, pad[3];
} ups_raddr_t;

#define UPS_MAX_RADDRS (2 * HY_DNS_MAX_ADDRS)

/* `server NAME resolve [service=S]`: a name the worker resolves again when its answer expires; its addresses
 * (or, with service=, the addresses of its SRV records' targets) are peers */
typedef struct ups_dyn {
    struct ups_group_ext *e;
    char host[256];
    uint16_t port;
    bool srv;                       /* service=: qname is the SRV name asked */
    char qname[HY_DNS_NAME_MAX + 1];
    hy_str_t spec;          /* as written ($upstream_addr's peers are named by address) */
    hy_upstream_peer_t tpl; /* the parameters */
    /* per worker */
    ups_raddr_t *addrs; /* malloc'ed */
    size_t naddrs;
    hy_resolve_t *q;
    hy_resolve_srv_t *sq;
    hy_timer_t timer;
} ups_dyn_t;

typedef struct ups_group_ext {
    hy_upstream_group_t g;
    bool defined; /* an upstream{} block made it */
    bool explicit_port;
    hy_array_t *servers; /* while parsing: hy_upstream_peer_t (then the static peers) */
    hy_array_t *dyn;     /* ups_dyn_t, NULL when none */
    hy_resolver_t *resolver; /* the block's own resolver (else the http level's) */
    int64_t resolver_timeout_ms; /* -1: not given in the block */
    hy_pool_t *wpool;    /* per worker: names and rings of rebuilt peer arrays */
    hy_zone_t *shm;      /* `zone`: the resolved addresses, shared and kept across reloads */
    hy_upstream_peer_t **old_peers; /* per worker: replaced peer arrays (malloc'ed), freed with the generation */
    size_t nold;
    bool peers_malloced;
} ups_group_ext_t;

static ups_main_t *ups_main(hy_conf_t *cf)
{
    return cf->main_conf ? cf->main_conf[hy_http_upstream_module.index] : NULL;
}

static ups_group_ext_t *find_group(ups_main_t *um, hy_str_t name, uint16_t port, bool explicit_port)
{
    ups_group_ext_t **gs = um->groups->elts;
    for (size_t i = 0; i < um->groups->nelts; i++) {
        ups_group_ext_t *e = gs[i];
        if (!hy_str_caseeq_str(e->g.name, name))
            continue;
        if (!explicit_port && !e->explicit_port)
            return e;
        if (explicit_port && e->explicit_port && e->g.port == port)
            return e;
    }
    return NULL;
}

static ups_group_ext_t *new_group(hy_conf_t *cf, ups_main_t *um, hy_str_t name, uint16_t port, bool explicit_port)
{
    ups_group_ext_t *e = hy_pcalloc(cf->pool, sizeof(*e));
    e->g.name = hy_str_dup(cf->pool, name);
    e->g.port = port;
    e->g.file = cf->file;
    e->g.line = cf->line;
    e->g.implicit = true;
    e->g.keepalive_requests = 1000;
    e->g.keepalive_time_ms = 3600000;
    e->g.keepalive_timeout_ms = 60000;
    e->explicit_port = explicit_port;
    e->servers = hy_array_create(cf->pool, 2, sizeof(hy_upstream_peer_t));
    e->resolver_timeout_ms = -1;
    *(ups_group_ext_t **)hy_array_push(um->groups) = e;
    return e;
}

hy_upstream_group_t *hy_upstream_group_add(hy_conf_t *cf, hy_str_t host, uint16_t port, bool explicit_port)
{
    ups_main_t *um = ups_main(cf);
    ups_group_ext_t *e = find_group(um, host, port, explicit_port);
    ups_group_ext_t *named = e == NULL && explicit_port ? find_group(um, host, 0, false) : NULL;
    if (named != NULL && named->defined) { /* nginx: the name of an upstream{} takes no port */
        hy_conf_error(cf, "upstream \"%.*s\" may not have port %u", (int)host.len, host.ptr, (unsigned)port);
        return NULL;
    }
    if (e == NULL)
        e = new_group(cf, um, host, port, explicit_port);
    return &e->g;
}

hy_upstream_group_t *hy_upstream_group_find(hy_req_t *req, hy_str_t host, uint16_t port, bool explicit_port)
{
    void **mc = req->conn->cycle->http_main_conf;
    if (mc == NULL)
        return NULL;
    ups_main_t *um = mc[hy_http_upstream_module.index];
    ups_group_ext_t **gs = um->groups->elts;
    for (size_t i = 0; i < um->groups->nelts; i++) {
        ups_group_ext_t *e = gs[i];
        if (!hy_str_caseeq_str(e->g.name, host))
            continue;
        if (e->defined ? !explicit_port : (e->g.port == port && e->explicit_port == explicit_port))
            return &e->g;
    }
    return NULL;
}

/* ---------------------------------------------------------------- resolution */

static hy_str_t addr_text(hy_pool_t *pool, const struct sockaddr_storage *sa)
{
    char buf[INET6_ADDRSTRLEN + 16], ip[INET6_ADDRSTRLEN];
    int n;
    if (sa->ss_family == AF_INET) {
        const struct sockaddr_in *s4 = (const void *)sa;
        hy_inet_ntop(AF_INET, &s4->sin_addr, ip, sizeof(ip));
        n = snprintf(buf, sizeof(buf), "%s:%u", ip, ntohs(s4->sin_port));
    } else if (sa->ss_family == AF_INET6) {
        const struct sockaddr_in6 *s6 = (const void *)sa;
        hy_inet_ntop(AF_INET6, &s6->sin6_addr, ip, sizeof(ip));
        n = snprintf(buf, sizeof(buf), "[%s]:%u", ip, ntohs(s6->sin6_port));
    } else {
        const struct sockaddr_un *su = (const void *)sa;
        return hy_str_dup(pool, (hy_str_t){buf, (size_t)snprintf(buf, sizeof(buf), "unix:%.*s", 64, su->sun_path)});
    }
    return hy_str_dup(pool, (hy_str_t){buf, (size_t)n});
}

/* "host[:port]" or "[v6][:port]" into host (NUL-terminated) and port. 0, or -1 after hy_conf_error. */
static int split_hostport(hy_conf_t *cf, hy_str_t spec, uint16_t def_port, char host[256], uint16_t *port_out,
                          const char *what)
{
    uint16_t port = def_port;
    const char *colon = NULL;
    if (spec.len && spec.ptr[0] == '[') {
        const char *rb = memchr(spec.ptr, ']', spec.len);
        if (rb == NULL)
            return hy_conf_error(cf, "invalid host in %s \"%.*s\"", what, (int)spec.len, spec.ptr);
        if (rb + 1 < spec.ptr + spec.len && rb[1] == ':')
            colon = rb + 1;
        snprintf(host, 256, "%.*s", (int)(rb - spec.ptr - 1), spec.ptr + 1);
    } else {
        colon = memrchr(spec.ptr, ':', spec.len);
        size_t hl = colon ? (size_t)(colon - spec.ptr) : spec.len;
        if (hl == 0 || hl >= 256)
            return hy_conf_error(cf, "no host in %s \"%.*s\"", what, (int)spec.len, spec.ptr);
        snprintf(host, 256, "%.*s", (int)hl, spec.ptr);
    }
    if (colon) {
        int64_t v = hy_parse_int(colon + 1, (size_t)(spec.ptr + spec.len - colon - 1));
        if (v < 1 || v > 65535)
            return hy_conf_error(cf, "invalid port in %s \"%.*s\"", what, (int)spec.len, spec.ptr);
        port = (uint16_t)v;
    }
    *port_out = port;
    return 0;
}

/* Resolve "host[:port]" or "unix:/path" into peers appended to `out` (a template peer carries the params); def_port
 * 0: a host needs its own port. Returns 0 or -1 after hy_conf_error ("host not found in upstream ...", "no port in
 * upstream ..."). */
static int resolve(hy_conf_t *cf, hy_str_t spec, uint16_t def_port, const hy_upstream_peer_t *tpl, hy_array_t *out,
                   const char *what)
{
    if (spec.len > 5 && memcmp(spec.ptr, "unix:", 5) == 0) {
        struct sockaddr_un su = {.sun_family = AF_UNIX};
        if (spec.len - 5 >= sizeof(su.sun_path))
            return hy_conf_error(cf, "path \"%.*s\" is too long in %s \"%.*s\"", (int)(spec.len - 5), spec.ptr + 5,
                                 what, (int)spec.len, spec.ptr);
        memcpy(su.sun_path, spec.ptr + 5, spec.len - 5);
        hy_upstream_peer_t *p = hy_array_push(out);
        *p = *tpl;
        memcpy(&p->sa, &su, sizeof(su));
        p->salen = (socklen_t)sizeof(su);
        p->name = hy_str_dup(cf->pool, spec);
        p->server = p->name;
        return 0;
    }
    char host[256];
    uint16_t port = def_port;
    if (split_hostport(cf, spec, def_port, host, &port, what) != 0)
        return -1;
    if (port == 0)
        return hy_conf_error(cf, "no port in %s \"%.*s\"", what, (int)spec.len, spec.ptr);
    struct addrinfo hints = {.ai_family = AF_UNSPEC, .ai_socktype = SOCK_STREAM}, *res = NULL;
    char portstr[8];
    snprintf(portstr, sizeof(portstr), "%u", port);
    if (getaddrinfo(host, portstr, &hints, &res) != 0 || res == NULL)
        return hy_conf_error(cf, "host not found in %s \"%.*s\"", what, (int)spec.len, spec.ptr);
    size_t first = out->nelts; /* the same address on two server lines is two peers, as nginx */
    for (struct addrinfo *ai = res; ai; ai = ai->ai_next) {
        if (ai->ai_family != AF_INET && ai->ai_family != AF_INET6)
            continue;
        bool dup = false;
        hy_upstream_peer_t *ps = out->elts;
        for (size_t i = first; i < out->nelts; i++)
            if (ps[i].salen == ai->ai_addrlen && memcmp(&ps[i].sa, ai->ai_addr, ai->ai_addrlen) == 0)
                dup = true;
        if (dup)
            continue;
        hy_upstream_peer_t *p = hy_array_push(out);
        *p = *tpl;
        memcpy(&p->sa, ai->ai_addr, ai->ai_addrlen);
        p->salen = ai->ai_addrlen;
        p->name = addr_text(cf->pool, &p->sa);
        p->server = hy_str_dup(cf->pool, spec);
    }
    freeaddrinfo(res);
    return 0;
}

static void peer_defaults(hy_upstream_peer_t *p)
{
    p->weight = p->effective_weight = 1;
    p->max_fails = 1;
    p->fail_timeout_ms = 10000;
    p->stats_base = HY_STATS_SINK;
}

static socklen_t sockaddr_of(const hy_dns_addr_t *a, uint16_t port, struct sockaddr_storage *ss)
{
    memset(ss, 0, sizeof(*ss));
    if (a->family == AF_INET) {
        struct sockaddr_in *s4 = (void *)ss;
        s4->sin_family = AF_INET;
        s4->sin_port = htons(port);
        memcpy(&s4->sin_addr, a->bytes, 4);
        return sizeof(*s4);
    }
    struct sockaddr_in6 *s6 = (void *)ss;
    s6->sin6_family = AF_INET6;
    s6->sin6_port = htons(port);
    memcpy(&s6->sin6_addr, a->bytes, 16);
    return sizeof(*s6);
}

hy_upstream_group_t *hy_upstream_group_of_addrs(hy_pool_t *pool, hy_str_t name, const hy_dns_addr_t *addrs,
                                                size_t n, uint16_t port)
{
    hy_upstream_group_t *g = hy_pcalloc(pool, sizeof(*g));
    g->peers = hy_pcalloc(pool, (n ? n : 1) * sizeof(*g->peers));
    for (size_t i = 0; i < n; i++) {
        hy_upstream_peer_t *p = &g->peers[i];
        p->salen = sockaddr_of(&addrs[i], port, &p->sa);
        p->name = addr_text(pool, &p->sa);
        p->server = name;
        peer_defaults(p);
    }
    g->npeers = n;
    g->name = name;
    g->port = port;
    g->implicit = true;
    g->keepalive_requests = 1000;
    g->keepalive_time_ms = 3600000;
    g->keepalive_timeout_ms = 60000;
    g->stats_idle = HY_STATS_SINK;
    return g;
}

/* ---------------------------------------------------------------- directives */

static int set_upstream(hy_conf_t *cf, const hy_directive_t *d, void *conf)
{
    (void)d, (void)conf;
    ups_main_t *um = ups_main(cf);
    size_t n;
    hy_str_t *a = hy_conf_args(cf, &n);
    ups_group_ext_t *e = find_group(um, a[1], 0, false);
    if (e != NULL && e->defined)
        return hy_conf_error(cf, "duplicate upstream \"%s\"", a[1].ptr);
    ups_group_ext_t **gs = um->groups->elts;
    for (size_t i = 0; i < um->groups->nelts; i++) /* a proxy_pass before it gave that name a port */
        if (gs[i]->explicit_port && !gs[i]->defined && hy_str_caseeq_str(gs[i]->g.name, a[1])) {
            cf->file = gs[i]->g.file, cf->line = gs[i]->g.line; /* nginx names the proxy_pass */
            return hy_conf_error(cf, "upstream \"%s\" may not have port %u", a[1].ptr, (unsigned)gs[i]->g.port);
        }
    if (e == NULL)
        e = new_group(cf, um, a[1], 0, false);
    e->defined = true;
    e->g.implicit = false;
    e->g.file = cf->file;
    e->g.line = cf->line;
    uint32_t saved_ctx = cf->ctx;
    hy_upstream_group_t *saved = um->cur;
    um->cur = &e->g;
    cf->ctx = HY_CTX_UPSTREAM;
    int rc = hy_conf_parse_block(cf);
    cf->ctx = saved_ctx;
    um->cur = saved;
    if (rc != 0)
        return -1;
    if (e->servers->nelts == 0 && e->dyn == NULL)
        return hy_conf_error(cf, "no servers are inside upstream");
    return 0;
}

static bool param(hy_str_t a, const char *name, hy_str_t *val)
{
    size_t n = strlen(name);
    if (a.len < n || memcmp(a.ptr, name, n) != 0)
        return false;
    *val = (hy_str_t){a.ptr + n, a.len - n};
    return true;
}

static int set_server(hy_conf_t *cf, const hy_directive_t *d, void *conf)
{
    (void)d, (void)conf;
    ups_main_t *um = ups_main(cf);
    ups_group_ext_t *e = (ups_group_ext_t *)um->cur;
    size_t n;
    hy_str_t *a = hy_conf_args(cf, &n);
    hy_upstream_peer_t tpl = {.weight = 1, .max_fails = 1, .fail_timeout_ms = 10000};
    bool resolve_it = false;
    hy_str_t service = {NULL, 0};
    for (size_t i = 2; i < n; i++) {
        hy_str_t v;
        int64_t x;
        if (param(a[i], "weight=", &v)) {
            if ((x = hy_parse_int(v.ptr, v.len)) < 1 || x > 1000000)
                goto invalid;
            tpl.weight = (int)x;
        } else if (param(a[i], "max_fails=", &v)) {
            if ((x = hy_parse_int(v.ptr, v.len)) < 0)
                goto invalid;
            tpl.max_fails = (int)x;
        } else if (param(a[i], "max_conns=", &v)) {
            if ((x = hy_parse_int(v.ptr, v.len)) < 0)
                goto invalid;
            tpl.max_conns = (int)x;
        } else if (param(a[i], "fail_timeout=", &v)) {
            if ((x = hy_parse_sec(v.ptr, v.len)) < 0)
                goto invalid;
            tpl.fail_timeout_ms = x * 1000;
        } else if (hy_str_eq(a[i], "backup")) {
            tpl.backup = true;
        } else if (hy_str_eq(a[i], "down")) {
            tpl.down = true;
        } else if (hy_str_eq(a[i], "drain")) {
            tpl.drain = true;
        } else if (param(a[i], "route=", &v)) {
            if (v.len == 0 || v.len > 64) /* a peer id holds 64 bytes (sticky.c) */
                return hy_conf_error(cf, "invalid route \"%.*s\"", (int)v.len, v.ptr);
            tpl.route = hy_str_dup(cf->pool, v);
        } else if (hy_str_eq(a[i], "resolve")) {
            resolve_it = true;
        } else if (param(a[i], "service=", &v)) {
            if (v.len == 0)
                return hy_conf_error(cf, "service is empty");
            service = v;
        } else {
            goto invalid;
        }
        continue;
    invalid:
        return hy_conf_error(cf, "invalid parameter \"%s\"", a[i].ptr);
    }
    if (service.len && !resolve_it)
        return hy_conf_error(cf, "service upstream \"%s\" requires \"resolve\" parameter", a[1].ptr);
    if (resolve_it && !(a[1].len > 5 && memcmp(a[1].ptr, "unix:", 5) == 0)) {
        ups_dyn_t d0 = {.e = e, .port = 80, .tpl = tpl};
        if (split_hostport(cf, a[1], service.len ? 0 : 80, d0.host, &d0.port, "upstream") != 0)
            return -1;
        if (service.len && d0.port != 0)
            return hy_conf_error(cf, "service upstream \"%s\" may not have port", a[1].ptr);
        unsigned char tmp[16];
        bool is_addr = inet_pton(AF_INET, d0.host, tmp) == 1 || inet_pton(AF_INET6, d0.host, tmp) == 1;
        if (service.len && is_addr)
            return hy_conf_error(cf, "service upstream \"%s\" requires domain name", a[1].ptr);
        if (service.len) { /* RFC 2782's name when the service has no dot ("http": _http._tcp.HOST), else joined */
            bool dotted = memchr(service.ptr, '.', service.len) != NULL;
            int k = snprintf(d0.qname, sizeof(d0.qname), dotted ? "%.*s.%s" : "_%.*s._tcp.%s", (int)service.len,
                             service.ptr, d0.host);
            if (k < 0 || (size_t)k >= sizeof(d0.qname) || !hy_dns_name_valid(d0.qname, (size_t)k))
                return hy_conf_error(cf, "invalid service \"%.*s\" in upstream \"%s\"", (int)service.len,
                                     service.ptr, a[1].ptr);
            d0.srv = true;
        }
        if (!is_addr) {
            if (!hy_dns_name_valid(d0.host, strlen(d0.host)))
                return hy_conf_error(cf, "invalid host in upstream \"%s\"", a[1].ptr);
            /* a name: resolved by the workers (nginx 1.27.3: not at load) */
            if (e->dyn == NULL)
                e->dyn = hy_array_create(cf->pool, 2, sizeof(ups_dyn_t));
            d0.spec = hy_str_dup(cf->pool, a[1]);
            *(ups_dyn_t *)hy_array_push(e->dyn) = d0;
            return 0;
        }
    }
    return resolve(cf, a[1], 80, &tpl, e->servers, "upstream");
}

static int set_ups_resolver(hy_conf_t *cf, const hy_directive_t *d, void *conf)
{
    (void)conf;
    ups_group_ext_t *e = (ups_group_ext_t *)ups_main(cf)->cur;
    if (strcmp(d->name, "resolver") == 0) {
        if (e->resolver != NULL)
            return hy_conf_error(cf, "\"resolver\" directive is duplicate");
        e->resolver = hy_http_resolver_parse(cf);
        return e->resolver ? 0 : -1;
    }
    if (e->resolver_timeout_ms != -1)
        return hy_conf_error(cf, "\"resolver_timeout\" directive is duplicate");
    e->resolver_timeout_ms = hy_http_resolver_timeout_parse(cf);
    return e->resolver_timeout_ms < 0 ? -1 : 0;
}

static int set_keepalive(hy_conf_t *cf, const hy_directive_t *d, void *conf)
{
    (void)conf;
    ups_main_t *um = ups_main(cf);
    size_t n;
    hy_str_t *a = hy_conf_args(cf, &n);
    hy_upstream_group_t *g = um->cur;
    int64_t v;
    if (strcmp(d->name, "keepalive") == 0) {
        if (g->keepalive)
            return hy_conf_error(cf, "\"keepalive\" directive is duplicate");
        if ((v = hy_parse_int(a[1].ptr, a[1].len)) <= 0)
            return hy_conf_error(cf, "invalid value \"%s\" in \"keepalive\" directive", a[1].ptr);
        g->keepalive = v;
    } else if (strcmp(d->name, "keepalive_requests") == 0) {
        if ((v = hy_parse_int(a[1].ptr, a[1].len)) < 0)
            return hy_conf_error(cf, "\"%s\" directive invalid number", d->name); /* nginx's num slot */
        g->keepalive_requests = v;
    } else {
        if ((v = hy_parse_msec(a[1].ptr, a[1].len)) < 0)
            return hy_conf_error(cf, "\"%s\" directive invalid value", d->name); /* nginx's msec slot */
        if (strcmp(d->name, "keepalive_time") == 0)
            g->keepalive_time_ms = v;
        else
            g->keepalive_timeout_ms = v;
    }
    return 0;
}

static int set_method(hy_conf_t *cf, const hy_directive_t *d, void *conf)
{
    (void)conf;
    ups_main_t *um = ups_main(cf);
    hy_upstream_group_t *g = um->cur;
    size_t n;
    hy_str_t *a = hy_conf_args(cf, &n);
    if (g->balancer != HY_UPS_RR)
        hy_conf_warn(cf, "load balancing method redefined");
    if (strcmp(d->name, "least_conn") == 0) {
        g->balancer = HY_UPS_LEAST_CONN;
    } else if (strcmp(d->name, "ip_hash") == 0) {
        g->balancer = HY_UPS_IP_HASH;
    } else if (strcmp(d->name, "hash") == 0) {
        if (n == 3 && !hy_str_eq(a[2], "consistent"))
            return hy_conf_error(cf, "invalid parameter \"%s\"", a[2].ptr);
        g->hash_key = hy_pcalloc(cf->pool, sizeof(hy_complex_t));
        if (hy_vars_compile(cf, a[1], g->hash_key) != 0)
            return -1;
        g->balancer = n == 3 ? HY_UPS_HASH_CONSISTENT : HY_UPS_HASH;
    } else if (strcmp(d->name, "least_time") == 0) { /* least_time header | last_byte [inflight] */
        if (!hy_str_eq(a[1], "header") && !hy_str_eq(a[1], "last_byte"))
            return hy_conf_error(cf, "invalid parameter \"%s\"", a[1].ptr);
        if (n == 3 && !hy_str_eq(a[2], "inflight"))
            return hy_conf_error(cf, "invalid parameter \"%s\"", a[2].ptr);
        g->balancer = HY_UPS_LEAST_TIME;
        g->lt_header = hy_str_eq(a[1], "header");
        g->lt_inflight = n == 3;
    } else { /* random [two [least_conn]] */
        g->balancer = HY_UPS_RANDOM;
        if (n >= 2) {
            if (!hy_str_eq(a[1], "two"))
                return hy_conf_error(cf, "invalid parameter \"%s\"", a[1].ptr);
            if (n == 3 && !hy_str_eq(a[2], "least_conn"))
                return hy_conf_error(cf, "invalid parameter \"%s\"", a[2].ptr);
            g->balancer = HY_UPS_RANDOM_TWO;
        }
    }
    return 0;
}

/* The upstream zone holds what `server ... resolve` learnt (nginx keeps it there across reloads): one entry per
 * upstream and name, with the addresses last resolved. Several upstreams may share one zone. */
typedef struct ups_sh_entry {
    struct ups_sh_entry *next;
    char key[600]; /* "UPSTREAM\nHOST", "UPSTREAM\nSRV _service._tcp.HOST" */
    size_t naddrs;
    ups_raddr_t addrs[UPS_MAX_RADDRS];
} ups_sh_entry_t;

typedef struct ups_sh {
    ups_sh_entry_t *head;
    void *hc_head;  /* the health checks' peer entries (health.c) */
    uint64_t epoch; /* loads that used the zone so far */
} ups_sh_t;

typedef struct ups_zone_data {
    ups_sh_t *sh;
    uint64_t epoch;     /* this generation's (health.c: entries of an older one are reset) */
    hy_array_t *groups; /* ups_group_ext_t *: this generation's upstreams in the zone */
} ups_zone_data_t;

static bool same_addr(const hy_upstream_peer_t *a, const hy_upstream_peer_t *b);

/* The connection counts of e's static peers, shared by this generation's workers (nginx keeps its peers' state in
 * the zone): one int per `server` line, wired into the parsed servers (rebuilt arrays copy them) and the group's
 * peers. Peers that `resolve` finds keep per-worker counts. A new generation gets new counts; the old ones stay in
 * the zone (a few bytes per reload), and a full zone leaves the counts per worker, said once in the log. */
static void share_conns(hy_zone_t *z, ups_group_ext_t *e)
{
    hy_upstream_peer_t *ps = e->servers->elts;
    size_t np = e->servers->nelts;
    if (np == 0)
        return;
    int *cells = hy_slab_calloc(z->slab, np * sizeof(int));
    if (cells == NULL) {
        hy_log(HY_LOG_WARN, "no room in zone \"%.*s\" for the connection counts of upstream \"%.*s\": they are "
               "counted per worker", (int)z->name.len, z->name.ptr, (int)e->g.name.len, e->g.name.ptr);
        return;
    }
    for (size_t j = 0; j < np; j++)
        ps[j].sh_conns = &cells[j];
    size_t k = 0; /* the group's peers are the servers, primary ones first (postconfiguration) */
    for (int backup = 0; backup < 2; backup++)
        for (size_t j = 0; j < np && k < e->g.npeers; j++)
            if (ps[j].backup == (backup == 1) && same_addr(&e->g.peers[k], &ps[j]))
                e->g.peers[k++].sh_conns = &cells[j];
}

static int init_zone(hy_zone_t *z, void *old_data)
{
    ups_zone_data_t *zd = z->data;
    if (old_data)
        zd->sh = ((ups_zone_data_t *)old_data)->sh;
    else
        zd->sh = hy_slab_calloc(z->slab, sizeof(ups_sh_t));
    if (zd->sh == NULL)
        return -1;
    hy_slab_lock(z->slab);
    zd->epoch = ++zd->sh->epoch;
    hy_slab_unlock(z->slab);
    ups_group_ext_t **gs = zd->groups ? zd->groups->elts : NULL;
    for (size_t i = 0; gs && i < zd->groups->nelts; i++)
        share_conns(z, gs[i]);
    return 0;
}

struct hy_zone *hy_upstream__zone(hy_upstream_group_t *g, void ***hc_root, uint64_t *epoch)
{
    hy_zone_t *z = ((ups_group_ext_t *)g)->shm;
    ups_zone_data_t *zd = z ? z->data : NULL;
    if (zd == NULL || zd->sh == NULL || z->slab == NULL)
        return NULL;
    *hc_root = &zd->sh->hc_head;
    *epoch = zd->epoch;
    return z;
}

static int set_zone(hy_conf_t *cf, const hy_directive_t *d, void *conf)
{
    (void)d, (void)conf;
    ups_main_t *um = ups_main(cf);
    size_t n;
    hy_str_t *a = hy_conf_args(cf, &n);
    if (a[1].len == 0)
        return hy_conf_error(cf, "invalid zone name \"%s\"", a[1].ptr);
    int64_t size = 0;
    if (n == 3) {
        size = hy_parse_size(a[2].ptr, a[2].len);
        if (size < 0)
            return hy_conf_error(cf, "invalid zone size \"%s\"", a[2].ptr);
        if (size < 8 * 4096)
            return hy_conf_error(cf, "zone \"%s\" is too small", a[1].ptr);
    }
    hy_zone_t *z = hy_zone_claim(cf, a[1], (size_t)size, &hy_http_upstream_module);
    if (z == NULL)
        return -1;
    if (z->data == NULL) {
        z->data = hy_pcalloc(cf->pool, sizeof(ups_zone_data_t));
        z->init = init_zone;
    }
    um->cur->zone = true;
    ((ups_group_ext_t *)um->cur)->shm = z;
    ups_zone_data_t *zd = z->data;
    if (zd->groups == NULL)
        zd->groups = hy_array_create(cf->pool, 4, sizeof(ups_group_ext_t *));
    *(ups_group_ext_t **)hy_array_push(zd->groups) = (ups_group_ext_t *)um->cur;
    return 0;
}

static ups_sh_entry_t *sh_find(ups_sh_t *sh, const char *key)
{
    for (ups_sh_entry_t *x = sh->head; x; x = x->next)
        if (strcmp(x->key, key) == 0)
            return x;
    return NULL;
}

/* The addresses the zone remembers for d (from this generation's workers or an earlier one's), into d. */
/* The zone's table for d's group and d's key in it ("group\nname"), or NULL when the group keeps none. */
static ups_zone_data_t *sh_open(ups_dyn_t *d, char *key, size_t cap)
{
    hy_zone_t *z = d->e->shm;
    ups_zone_data_t *zd = z ? z->data : NULL;
    if (zd == NULL || zd->sh == NULL || z->slab == NULL)
        return NULL;
    snprintf(key, cap, "%.*s\n%s%s", (int)HY_MIN(d->e->g.name.len, 300), d->e->g.name.ptr, d->srv ? "SRV " : "",
             d->srv ? d->qname : d->host);
    return zd;
}

static void sh_load(ups_dyn_t *d)
{
    char key[600];
    ups_zone_data_t *zd = sh_open(d, key, sizeof(key));
    if (zd == NULL)
        return;
    hy_zone_t *z = d->e->shm;
    hy_slab_lock(z->slab);
    ups_sh_entry_t *x = sh_find(zd->sh, key);
    if (x != NULL && x->naddrs) {
        d->addrs = hy_alloc(x->naddrs * sizeof(*d->addrs));
        memcpy(d->addrs, x->addrs, x->naddrs * sizeof(*d->addrs));
        d->naddrs = x->naddrs;
    }
    hy_slab_unlock(z->slab);
}

static void sh_store(ups_dyn_t *d)
{
    char key[600];
    ups_zone_data_t *zd = sh_open(d, key, sizeof(key));
    if (zd == NULL)
        return;
    hy_zone_t *z = d->e->shm;
    hy_slab_lock(z->slab);
    ups_sh_entry_t *x = sh_find(zd->sh, key);
    if (x == NULL && (x = hy_slab_calloc_locked(z->slab, sizeof(*x))) != NULL) {
        memcpy(x->key, key, strlen(key) + 1);
        x->next = zd->sh->head;
        zd->sh->head = x;
    }
    if (x != NULL) {
        x->naddrs = HY_MIN(d->naddrs, UPS_MAX_RADDRS);
        if (x->naddrs)
            memcpy(x->addrs, d->addrs, x->naddrs * sizeof(*d->addrs));
    }
    hy_slab_unlock(z->slab);
}

/* ---------------------------------------------------------------- server ... resolve (per worker) */

static bool same_addr(const hy_upstream_peer_t *a, const hy_upstream_peer_t *b)
{
    return a->salen == b->salen && memcmp(&a->sa, &b->sa, a->salen) == 0 && hy_str_eq_str(a->server, b->server);
}

/* The group's peers anew: the static ones, then every resolve server's current addresses; primary before backup.
 * A peer that was there before keeps its state (weights, failures, connections). The old array is not freed:
 * requests in flight and idle keep-alive connections point into it (it is only replaced when addresses change). */
static void rebuild(ups_group_ext_t *e)
{
    if (e->wpool == NULL)
        e->wpool = hy_pool_create(4096);
    size_t nstatic = e->servers->nelts, n = nstatic;
    ups_dyn_t *ds = e->dyn->elts;
    for (size_t i = 0; i < e->dyn->nelts; i++)
        n += ds[i].naddrs;
    hy_upstream_peer_t *all = hy_pcalloc(e->wpool, (n ? n : 1) * sizeof(*all)), *ps = e->servers->elts;
    size_t k = 0;
    for (size_t i = 0; i < nstatic; i++)
        all[k++] = ps[i];
    for (size_t i = 0; i < e->dyn->nelts; i++)
        for (size_t j = 0; j < ds[i].naddrs; j++) {
            hy_upstream_peer_t *p = &all[k++];
            const ups_raddr_t *ra = &ds[i].addrs[j];
            *p = ds[i].tpl;
            if (ds[i].srv) { /* a plain name's peers take port, weight and backup from the server as it is now
                              * (the zone may hold what an earlier configuration resolved) */
                p->weight = ra->weight ? ra->weight : p->weight;
                p->backup = ra->backup != 0;
            }
            p->salen = sockaddr_of(&ra->addr, ds[i].srv ? ra->port : ds[i].port, &p->sa);
            p->name = addr_text(e->wpool, &p->sa);
            p->server = ds[i].spec;
            p->stats_base = HY_STATS_SINK;
        }
    hy_upstream_peer_t *peers = hy_alloc((n ? n : 1) * sizeof(*peers));
    size_t m = 0, nbackup = 0;
    for (int backup = 0; backup < 2; backup++)
        for (size_t j = 0; j < n; j++) {
            if (all[j].backup != (backup == 1))
                continue;
            hy_upstream_peer_t *p = &peers[m++];
            *p = all[j];
            p->effective_weight = p->weight;
            for (size_t o = 0; o < e->g.npeers; o++)
                if (same_addr(&e->g.peers[o], p)) {
                    const hy_upstream_peer_t *old = &e->g.peers[o];
                    p->current_weight = old->current_weight;
                    p->effective_weight = old->effective_weight;
                    p->fails = old->fails;
                    p->conns = old->conns;
                    p->checked_ms = old->checked_ms;
                    p->accessed_ms = old->accessed_ms;
                    p->stats_base = old->stats_base;
                    p->hc_down = old->hc_down;
                    p->lt_avg_ms = old->lt_avg_ms;
                    p->lt_stamp_ms = old->lt_stamp_ms;
                    p->lt_busy_ms = old->lt_busy_ms;
                    break;
                }
            nbackup += backup;
        }
    if (e->peers_malloced) { /* kept until the generation goes: requests and idle connections point into it */
        e->old_peers = realloc(e->old_peers, (e->nold + 1) * sizeof(*e->old_peers));
        e->old_peers[e->nold++] = e->g.peers;
    }
    e->g.peers = peers;
    e->peers_malloced = true;
    e->g.npeers = n;
    e->g.nbackup = nbackup;
    if (e->g.balancer == HY_UPS_HASH_CONSISTENT)
        hy_upstream__build_ring(e->wpool, &e->g);
    if (e->g.hc)
        hy_upstream__hc_attach(&e->g);
}

static void dyn_resolve(ups_dyn_t *d);

static void on_dyn_timer(hy_timer_t *t)
{
    dyn_resolve(t->data);
}

/* An answer for d: status, and n peers in ra (malloc'ed; taken) */
static void dyn_answer(ups_dyn_t *d, int status, ups_raddr_t *ra, size_t n, uint64_t expire_ms)
{
    uint64_t now = hy_clock_now_ms();
    if (status != 0 && d->srv)
        hy_log(HY_LOG_ERR, "service %s of %s could not be resolved (%d: %s) in upstream \"%.*s\"", d->qname,
               d->host, status, hy_resolve_strerror(status), (int)d->e->g.name.len, d->e->g.name.ptr);
    else if (status != 0)
        hy_log(HY_LOG_ERR, "%s could not be resolved (%d: %s) in upstream \"%.*s\"", d->host, status,
               hy_resolve_strerror(status), (int)d->e->g.name.len, d->e->g.name.ptr);
    /* as nginx 1.27.3: a name that does not exist (NXDOMAIN) or has no address leaves no peer; a failure to get an
     * answer (SERVFAIL, REFUSED, a timeout ...) keeps the peers it had */
    bool keep = status != 0 && status != HY_DNS_NXDOMAIN;
    if (status != 0)
        n = 0;
    bool changed = !keep && (n != d->naddrs || (n && memcmp(d->addrs, ra, n * sizeof(*ra)) != 0));
    if (changed) {
        free(d->addrs);
        d->addrs = n ? ra : NULL;
        ra = NULL;
        d->naddrs = n;
        rebuild(d->e);
        sh_store(d);
    }
    free(ra);
    /* ask again when the answer expires (at least a second later: a TTL of 0 must not spin) */
    uint64_t wait = expire_ms > now + 1000 ? expire_ms - now : 1000;
    hy_timer_link(hy_worker_loop, &d->timer, wait);
}

static void on_dyn_resolved(void *data, const hy_resolve_result_t *res)
{
    ups_dyn_t *d = data;
    d->q = NULL;
    size_t n = res->status == 0 ? HY_MIN(res->naddrs, UPS_MAX_RADDRS) : 0;
    ups_raddr_t *ra = n ? hy_calloc(n * sizeof(*ra)) : NULL;
    for (size_t i = 0; i < n; i++) {
        ra[i].addr = res->addrs[i];
        ra[i].port = d->port;
        ra[i].backup = d->tpl.backup;
    }
    dyn_answer(d, res->status, ra, n, res->expire_ms);
}

/* service=: the records of the lowest priority are primary peers, the others backup; with `backup` on the server
 * the lowest priority's are backup peers and the others are left out (nginx). The record's weight is the peer's
 * unless the server has weight= (other than 1). */
static void on_dyn_srv_resolved(void *data, const hy_resolve_srv_result_t *res)
{
    ups_dyn_t *d = data;
    d->sq = NULL;
    size_t n = res->status == 0 ? res->naddrs : 0;
    uint16_t minp = UINT16_MAX;
    for (size_t i = 0; i < n; i++)
        minp = HY_MIN(minp, res->addrs[i].priority);
    ups_raddr_t *ra = n ? hy_calloc(HY_MIN(n, UPS_MAX_RADDRS) * sizeof(*ra)) : NULL;
    size_t k = 0;
    for (size_t i = 0; i < n && k < UPS_MAX_RADDRS; i++) {
        bool primary = res->addrs[i].priority == minp;
        if (d->tpl.backup && !primary)
            continue;
        ra[k].addr = res->addrs[i].addr;
        ra[k].port = res->addrs[i].port;
        ra[k].weight = d->tpl.weight != 1 ? (uint16_t)HY_MIN(d->tpl.weight, UINT16_MAX) : res->addrs[i].weight;
        ra[k].backup = d->tpl.backup || !primary;
        k++;
    }
    dyn_answer(d, res->status, ra, k, res->expire_ms);
}

static void dyn_resolve(ups_dyn_t *d)
{
    if (d->srv)
        d->sq = hy_resolve_srv_start(hy_worker_loop, d->e->resolver, d->qname, strlen(d->qname),
                                     d->e->resolver_timeout_ms, on_dyn_srv_resolved, d);
    else
        d->q = hy_resolve_start(hy_worker_loop, d->e->resolver, d->host, strlen(d->host), d->e->resolver_timeout_ms,
                                on_dyn_resolved, d);
}

static int init_worker(hy_cycle_t *cycle)
{
    for (size_t i = 0;; i++) {
        hy_upstream_group_t *g = hy_upstream_group_at(cycle, i);
        if (g == NULL)
            break;
        ups_group_ext_t *e = (ups_group_ext_t *)g;
        if (e->dyn == NULL)
            continue;
        ups_dyn_t *ds = e->dyn->elts;
        bool known = false;
        for (size_t j = 0; j < e->dyn->nelts; j++) {
            sh_load(&ds[j]); /* nginx's "preresolve": what the zone remembers serves until the first answer */
            known |= ds[j].naddrs > 0;
        }
        if (known)
            rebuild(e);
        for (size_t j = 0; j < e->dyn->nelts; j++) {
            ds[j].timer.cb = on_dyn_timer;
            ds[j].timer.data = &ds[j];
            dyn_resolve(&ds[j]);
        }
    }
    return 0;
}

/* The generation is released (no request of it is left): the worker's memory of its resolve servers goes. */
static void dyn_cleanup(void *arg)
{
    ups_group_ext_t *e = arg;
    ups_dyn_t *ds = e->dyn->elts;
    for (size_t j = 0; j < e->dyn->nelts; j++) {
        if (hy_worker_loop != NULL)
            hy_timer_unlink(hy_worker_loop, &ds[j].timer);
        free(ds[j].addrs);
        ds[j].addrs = NULL;
        ds[j].naddrs = 0;
    }
    for (size_t i = 0; i < e->nold; i++)
        free(e->old_peers[i]);
    free(e->old_peers);
    e->old_peers = NULL;
    e->nold = 0;
    if (e->peers_malloced) {
        free(e->g.peers);
        e->g.peers = NULL;
        e->g.npeers = 0;
        e->peers_malloced = false;
    }
    if (e->wpool)
        hy_pool_destroy(e->wpool);
    e->wpool = NULL;
}

/* A generation going away in this worker (reload in place, exit): its names are not asked again. */
static void flush_worker(hy_cycle_t *cycle, bool reopen)
{
    if (reopen)
        return;
    for (size_t i = 0;; i++) {
        hy_upstream_group_t *g = hy_upstream_group_at(cycle, i);
        if (g == NULL)
            break;
        ups_group_ext_t *e = (ups_group_ext_t *)g;
        if (e->dyn == NULL)
            continue;
        ups_dyn_t *ds = e->dyn->elts;
        for (size_t j = 0; j < e->dyn->nelts; j++) {
            hy_timer_unlink(hy_worker_loop, &ds[j].timer);
            hy_resolve_cancel(ds[j].q);
            ds[j].q = NULL;
            hy_resolve_srv_cancel(ds[j].sq);
            ds[j].sq = NULL;
        }
    }
}

/* ---------------------------------------------------------------- passive health */

void hy_upstream_peer_free(hy_upstream_group_t *g, hy_upstream_peer_t *p, bool failed)
{
    uint64_t now = hy_clock_now_ms();
    if (failed) {
        p->fails++;
        p->accessed_ms = now;
        p->checked_ms = now;
        if (p->max_fails) {
            p->effective_weight -= p->weight / p->max_fails;
            if (p->fails >= p->max_fails && g->npeers > 1)
                hy_log(HY_LOG_WARN, "upstream server temporarily disabled while connecting to upstream");
        }
        if (p->effective_weight < 0)
            p->effective_weight = 0;
    } else if (p->accessed_ms < p->checked_ms) {
        p->fails = 0;
    }
}

hy_upstream_group_t *hy_upstream_group_at(hy_cycle_t *cycle, size_t i)
{
    ups_main_t *um = cycle->http_main_conf ? cycle->http_main_conf[hy_http_upstream_module.index] : NULL;
    if (um == NULL || i >= um->groups->nelts)
        return NULL;
    return &((ups_group_ext_t **)um->groups->elts)[i]->g;
}

/* ---------------------------------------------------------------- module */

static void *create_main(hy_conf_t *cf)
{
    ups_main_t *um = hy_pcalloc(cf->pool, sizeof(*um));
    um->groups = hy_array_create(cf->pool, 4, sizeof(ups_group_ext_t *));
    return um;
}

/* Implicit groups resolve their host now; every group gets its peer array. */
static int postconfiguration(hy_conf_t *cf)
{
    ups_main_t *um = ups_main(cf);
    if (hy_upstream__define_vars(cf) != 0)
        return -1;
    ups_group_ext_t **gs = um->groups->elts;
    for (size_t i = 0; i < um->groups->nelts; i++) {
        ups_group_ext_t *e = gs[i];
        if (!e->defined) {
            const char *file = cf->file;
            unsigned line = cf->line;
            cf->file = e->g.file, cf->line = e->g.line;
            hy_upstream_peer_t tpl = {.weight = 1, .max_fails = 1, .fail_timeout_ms = 10000};
            char spec[300];
            hy_str_t s = e->g.name;
            if (e->explicit_port)
                s = (hy_str_t){spec, (size_t)snprintf(spec, sizeof(spec), "%.*s:%u", (int)e->g.name.len, e->g.name.ptr,
                                                      e->g.port)};
            /* port 0: fastcgi_pass, uwsgi_pass, scgi_pass, memcached_pass name no default port (nginx) */
            int rc = resolve(cf, s, e->g.port, &tpl, e->servers, "upstream");
            cf->file = file, cf->line = line;
            if (rc != 0)
                return -1;
        }
        if (e->dyn != NULL) {
            const hy_http_resolver_conf_t *hr = hy_http_resolver_main(cf);
            if (e->resolver == NULL)
                e->resolver = hr->resolver;
            if (e->resolver_timeout_ms == -1)
                e->resolver_timeout_ms = hr->timeout_ms != -1 ? hr->timeout_ms : HY_RESOLVER_TIMEOUT_DEFAULT_MS;
            const ups_dyn_t *d0 = e->dyn->elts;
            const char *file = cf->file;
            unsigned line = cf->line;
            cf->file = NULL; /* nginx's message names the upstream's place itself */
            int rc = 0;
            if (!e->g.zone)
                rc = hy_conf_error(cf, "resolving names at run time requires upstream \"%s\" in %s:%u to be in "
                                       "shared memory", d0->host, e->g.file, e->g.line);
            else if (e->resolver == NULL)
                rc = hy_conf_error(cf, "no resolver defined to resolve names at run time in upstream \"%s\" in "
                                       "%s:%u", d0->host, e->g.file, e->g.line);
            cf->file = file, cf->line = line;
            if (rc != 0)
                return -1;
            hy_pool_on_clear(cf->pool, dyn_cleanup, e);
        }
        hy_upstream_peer_t *ps = e->servers->elts;
        size_t np = e->servers->nelts;
        e->g.peers = hy_pcalloc(cf->pool, (np ? np : 1) * sizeof(*ps));
        hy_pool_on_clear(cf->pool, hy_ussl_free_sessions, &e->g); /* the TLS sessions the peers keep (ussl.c) */
        size_t k = 0;
        for (int backup = 0; backup < 2; backup++)
            for (size_t j = 0; j < np; j++)
                if (ps[j].backup == (backup == 1)) {
                    e->g.peers[k] = ps[j];
                    e->g.peers[k].effective_weight = ps[j].weight;
                    k++;
                    e->g.nbackup += backup;
                }
        e->g.npeers = np;
        if (e->g.balancer == HY_UPS_HASH_CONSISTENT)
            hy_upstream__build_ring(cf->pool, &e->g);
    }
    return 0;
}

static int set_sticky(hy_conf_t *cf, const hy_directive_t *d, void *conf)
{
    (void)d, (void)conf;
    return hy_upstream__sticky_conf(cf, ups_main(cf)->cur);
}

static const hy_directive_t ups_directives[] = {
    {.name = "upstream", .ctx = HY_CTX_HTTP, .args = HY_ARGS_1 | HY_ARGS_BLOCK, .set = set_upstream},
    {.name = "server", .ctx = HY_CTX_UPSTREAM, .args = HY_ARGS_1MORE, .set = set_server},
    {.name = "keepalive", .ctx = HY_CTX_UPSTREAM, .args = HY_ARGS_1, .set = set_keepalive},
    {.name = "keepalive_requests", .ctx = HY_CTX_UPSTREAM, .args = HY_ARGS_1, .set = set_keepalive},
    {.name = "keepalive_time", .ctx = HY_CTX_UPSTREAM, .args = HY_ARGS_1, .set = set_keepalive},
    {.name = "keepalive_timeout", .ctx = HY_CTX_UPSTREAM, .args = HY_ARGS_1, .set = set_keepalive},
    {.name = "least_conn", .ctx = HY_CTX_UPSTREAM, .args = HY_ARGS_0, .set = set_method},
    {.name = "least_time", .ctx = HY_CTX_UPSTREAM, .args = HY_ARGS_12, .set = set_method},
    {.name = "ip_hash", .ctx = HY_CTX_UPSTREAM, .args = HY_ARGS_0, .set = set_method},
    {.name = "hash", .ctx = HY_CTX_UPSTREAM, .args = HY_ARGS_12, .set = set_method},
    {.name = "random", .ctx = HY_CTX_UPSTREAM, .args = HY_ARGS_0 | HY_ARGS_12, .set = set_method},
    {.name = "zone", .ctx = HY_CTX_UPSTREAM, .args = HY_ARGS_12, .set = set_zone},
    {.name = "sticky", .ctx = HY_CTX_UPSTREAM, .args = HY_ARGS_1MORE, .set = set_sticky},
    {.name = "resolver", .ctx = HY_CTX_UPSTREAM, .args = HY_ARGS_1MORE, .set = set_ups_resolver},
    {.name = "resolver_timeout", .ctx = HY_CTX_UPSTREAM, .args = HY_ARGS_1, .set = set_ups_resolver},
    {0},
};

hy_module_t hy_http_upstream_module = {
    .name = "http_upstream",
    .directives = ups_directives,
    .create_main_conf = create_main,
    .postconfiguration = postconfiguration,
    .init_worker = init_worker,
    .flush_worker = flush_worker,
};
