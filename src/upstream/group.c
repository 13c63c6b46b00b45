/* group.c — upstream{} blocks and implicit upstreams (proxy_pass host:port), name resolution at load
 * (getaddrinfo), and the balancer: nginx's smooth weighted round robin with max_fails/fail_timeout, backup, down
 * and max_conns. Peer state is per worker (each worker has its own copy after fork, as nginx without `zone`). */
#include <netdb.h>
#include <stdio.h>
#include <string.h>
#include <arpa/inet.h>
#include "upstream.h"
#include "../core/clock.h"
#include "../core/log.h"
#include "../conf/cycle.h"
#include "../http/vars.h"

typedef struct ups_main {
    hy_array_t *groups;       /* hy_upstream_group_t * */
    hy_upstream_group_t *cur; /* the upstream{} being parsed */
} ups_main_t;

typedef struct ups_group_ext {
    hy_upstream_group_t g;
    bool defined; /* an upstream{} block made it */
    bool explicit_port;
    hy_array_t *servers; /* while parsing: hy_upstream_peer_t */
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
        if (explicit_port && e->defined) /* nginx: an upstream{} matches proxy_pass without a port only */
            continue;
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
    *(ups_group_ext_t **)hy_array_push(um->groups) = e;
    return e;
}

hy_upstream_group_t *hy_upstream_group_add(hy_conf_t *cf, hy_str_t host, uint16_t port, bool explicit_port)
{
    ups_main_t *um = ups_main(cf);
    ups_group_ext_t *e = find_group(um, host, port, explicit_port);
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
        inet_ntop(AF_INET, &s4->sin_addr, ip, sizeof(ip));
        n = snprintf(buf, sizeof(buf), "%s:%u", ip, ntohs(s4->sin_port));
    } else if (sa->ss_family == AF_INET6) {
        const struct sockaddr_in6 *s6 = (const void *)sa;
        inet_ntop(AF_INET6, &s6->sin6_addr, ip, sizeof(ip));
        n = snprintf(buf, sizeof(buf), "[%s]:%u", ip, ntohs(s6->sin6_port));
    } else {
        const struct sockaddr_un *su = (const void *)sa;
        return hy_str_dup(pool, (hy_str_t){buf, (size_t)snprintf(buf, sizeof(buf), "unix:%.*s", 64, su->sun_path)});
    }
    return hy_str_dup(pool, (hy_str_t){buf, (size_t)n});
}

/* Resolve "host[:port]" or "unix:/path" into peers appended to `out` (a template peer carries the params).
 * Returns 0 or -1 after hy_conf_error ("host not found in upstream ..."). */
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
    const char *colon = NULL;
    if (spec.len && spec.ptr[0] == '[') {
        const char *rb = memchr(spec.ptr, ']', spec.len);
        if (rb == NULL)
            return hy_conf_error(cf, "invalid host in %s \"%.*s\"", what, (int)spec.len, spec.ptr);
        if (rb + 1 < spec.ptr + spec.len && rb[1] == ':')
            colon = rb + 1;
        snprintf(host, sizeof(host), "%.*s", (int)(rb - spec.ptr - 1), spec.ptr + 1);
    } else {
        colon = memrchr(spec.ptr, ':', spec.len);
        size_t hl = colon ? (size_t)(colon - spec.ptr) : spec.len;
        if (hl == 0 || hl >= sizeof(host))
            return hy_conf_error(cf, "no host in %s \"%.*s\"", what, (int)spec.len, spec.ptr);
        snprintf(host, sizeof(host), "%.*s", (int)hl, spec.ptr);
    }
    if (colon) {
        int64_t v = hy_parse_int(colon + 1, (size_t)(spec.ptr + spec.len - colon - 1));
        if (v < 1 || v > 65535)
            return hy_conf_error(cf, "invalid port in %s \"%.*s\"", what, (int)spec.len, spec.ptr);
        port = (uint16_t)v;
    }
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
    if (e->servers->nelts == 0)
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
        } else {
            goto invalid;
        }
        continue;
    invalid:
        return hy_conf_error(cf, "invalid parameter \"%s\"", a[i].ptr);
    }
    return resolve(cf, a[1], 80, &tpl, e->servers, "upstream");
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

static int set_zone(hy_conf_t *cf, const hy_directive_t *d, void *conf)
{
    (void)d, (void)conf;
    ups_main_t *um = ups_main(cf);
    size_t n;
    hy_str_t *a = hy_conf_args(cf, &n);
    if (a[1].len == 0)
        return hy_conf_error(cf, "invalid zone name \"%s\"", a[1].ptr);
    if (n == 3) {
        int64_t size = hy_parse_size(a[2].ptr, a[2].len);
        if (size < 0)
            return hy_conf_error(cf, "invalid zone size \"%s\"", a[2].ptr);
        if (size < 8 * 4096)
            return hy_conf_error(cf, "zone \"%s\" is too small", a[1].ptr);
    }
    um->cur->zone = true;
    return 0;
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
            int rc = resolve(cf, s, e->g.port ? e->g.port : 80, &tpl, e->servers, "upstream");
            cf->file = file, cf->line = line;
            if (rc != 0)
                return -1;
        }
        hy_upstream_peer_t *ps = e->servers->elts;
        size_t np = e->servers->nelts;
        e->g.peers = hy_pcalloc(cf->pool, np * sizeof(*ps));
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

static const hy_directive_t ups_directives[] = {
    {.name = "upstream", .ctx = HY_CTX_HTTP, .args = HY_ARGS_1 | HY_ARGS_BLOCK, .set = set_upstream},
    {.name = "server", .ctx = HY_CTX_UPSTREAM, .args = HY_ARGS_1MORE, .set = set_server},
    {.name = "keepalive", .ctx = HY_CTX_UPSTREAM, .args = HY_ARGS_1, .set = set_keepalive},
    {.name = "keepalive_requests", .ctx = HY_CTX_UPSTREAM, .args = HY_ARGS_1, .set = set_keepalive},
    {.name = "keepalive_time", .ctx = HY_CTX_UPSTREAM, .args = HY_ARGS_1, .set = set_keepalive},
    {.name = "keepalive_timeout", .ctx = HY_CTX_UPSTREAM, .args = HY_ARGS_1, .set = set_keepalive},
    {.name = "least_conn", .ctx = HY_CTX_UPSTREAM, .args = HY_ARGS_0, .set = set_method},
    {.name = "ip_hash", .ctx = HY_CTX_UPSTREAM, .args = HY_ARGS_0, .set = set_method},
    {.name = "hash", .ctx = HY_CTX_UPSTREAM, .args = HY_ARGS_12, .set = set_method},
    {.name = "random", .ctx = HY_CTX_UPSTREAM, .args = HY_ARGS_0 | HY_ARGS_12, .set = set_method},
    {.name = "zone", .ctx = HY_CTX_UPSTREAM, .args = HY_ARGS_12, .set = set_zone},
    {0},
};

hy_module_t hy_http_upstream_module = {
    .name = "http_upstream",
    .directives = ups_directives,
    .create_main_conf = create_main,
    .postconfiguration = postconfiguration,
};
