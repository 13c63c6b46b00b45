/* realip.c — nginx's realip module: the client address a trusted proxy reports replaces the connection's for the
 * request ($remote_addr, $binary_remote_addr, $remote_port, the access log, the error log's "client:", geo, and
 * whatever else reads hy_req_peer).
 *
 * `set_real_ip_from ADDR[/BITS] | unix: | HOSTNAME` (hostnames resolved once, at configuration time),
 * `real_ip_header X-Real-IP | X-Forwarded-For | proxy_protocol | NAME`, `real_ip_recursive on|off`.
 * Applied at POST_READ with the server's settings and again at PREACCESS with the location's, as nginx does; the
 * first one that replaces the address wins. $realip_remote_addr / $realip_remote_port keep the connection's. */
#include <string.h>
#include <stdio.h>
#include <netdb.h>
#include <arpa/inet.h>
#include <netinet/in.h>
#include "vars.h"
#include "core.h"
#include "phases.h"
#include "realip.h"
#include "../conf/cycle.h"

enum { RIP_XREALIP = 0, RIP_XFWD, RIP_HEADER, RIP_PROXY };

typedef struct rip_cidr {
    int family; /* AF_INET, AF_INET6, or AF_UNIX (any unix-socket peer) */
    uint8_t b[16];
    unsigned bits;
} rip_cidr_t;

typedef struct rip_loc {
    hy_array_t *from; /* rip_cidr_t; NULL: unset (inherited), and nothing trusted */
    int type;         /* RIP_*, HY_UNSET */
    hy_str_t header;  /* RIP_HEADER's name */
    int recursive;
} rip_loc_t;

typedef struct rip_main {
    bool used; /* some set_real_ip_from: the phase handlers are registered */
} rip_main_t;

hy_module_t hy_http_realip_module;

/* ---- addresses ---- */

/* IPv4/IPv6 text → family + bytes (an IPv4-mapped IPv6 address counts as IPv4) */
static bool parse_ip(const char *s, size_t len, int *family, uint8_t b[16])
{
    char text[INET6_ADDRSTRLEN];
    if (len == 0 || len >= sizeof(text))
        return false;
    memcpy(text, s, len);
    text[len] = '\0';
    memset(b, 0, 16);
    if (inet_pton(AF_INET, text, b) == 1) {
        *family = AF_INET;
        return true;
    }
    if (inet_pton(AF_INET6, text, b) != 1)
        return false;
    static const uint8_t mapped[12] = {0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff};
    if (memcmp(b, mapped, 12) == 0) {
        memmove(b, b + 12, 4);
        memset(b + 4, 0, 12);
        *family = AF_INET;
    } else {
        *family = AF_INET6;
    }
    return true;
}

static bool bit_at(const uint8_t *b, unsigned i)
{
    return (b[i >> 3] >> (7 - (i & 7))) & 1;
}

static bool trusted(const hy_array_t *from, const struct sockaddr_storage *ss)
{
    int family = ss->ss_family;
    uint8_t b[16] = {0};
    if (family == AF_INET) {
        memcpy(b, &((const struct sockaddr_in *)ss)->sin_addr, 4);
    } else if (family == AF_INET6) {
        char text[INET6_ADDRSTRLEN];
        hy_inet_ntop(AF_INET6, &((const struct sockaddr_in6 *)ss)->sin6_addr, text, sizeof(text));
        parse_ip(text, strlen(text), &family, b);
    }
    const rip_cidr_t *c = from->elts;
    for (size_t i = 0; i < from->nelts; i++) {
        if (c[i].family != family)
            continue;
        unsigned k = 0;
        while (k < c[i].bits && bit_at(c[i].b, k) == bit_at(b, k))
            k++;
        if (k == c[i].bits)
            return true;
    }
    return false;
}

/* nginx's ngx_parse_addr_port: "ADDR", "IPv4:PORT", "[IPv6]" or "[IPv6]:PORT" (port 1..65535) */
static bool parse_addr_port(const char *s, size_t len, struct sockaddr_storage *ss)
{
    const char *addr = s;
    size_t alen = len;
    long port = 0;
    const char *ps = NULL;
    if (len && s[0] == '[') {
        const char *rb = memchr(s, ']', len);
        if (rb == NULL)
            return false;
        addr = s + 1, alen = (size_t)(rb - s - 1);
        if (rb + 1 < s + len) {
            if (rb[1] != ':')
                return false;
            ps = rb + 2;
        }
    } else {
        const char *colon = memchr(s, ':', len);
        if (colon && memchr(colon + 1, ':', (size_t)(s + len - colon - 1)) == NULL) {
            alen = (size_t)(colon - s);
            ps = colon + 1;
        }
    }
    if (ps) {
        size_t pl = (size_t)(s + len - ps);
        if (pl == 0 || pl > 5)
            return false;
        for (size_t i = 0; i < pl; i++) {
            if (ps[i] < '0' || ps[i] > '9')
                return false;
            port = port * 10 + (ps[i] - '0');
        }
        if (port < 1 || port > 65535)
            return false;
    }
    char text[INET6_ADDRSTRLEN];
    if (alen == 0 || alen >= sizeof(text))
        return false;
    memcpy(text, addr, alen);
    text[alen] = '\0';
    memset(ss, 0, sizeof(*ss));
    struct sockaddr_in *in = (struct sockaddr_in *)ss;
    struct sockaddr_in6 *in6 = (struct sockaddr_in6 *)ss;
    if (inet_pton(AF_INET, text, &in->sin_addr) == 1) {
        in->sin_family = AF_INET;
        in->sin_port = htons((uint16_t)port);
        return true;
    }
    if (inet_pton(AF_INET6, text, &in6->sin6_addr) == 1) {
        in6->sin6_family = AF_INET6;
        in6->sin6_port = htons((uint16_t)port);
        return true;
    }
    return false;
}

/* nginx's ngx_http_get_forwarded_addr_internal on one list: 1 replaced, 0 declined (the current address is not
 * trusted, or the last element is not an address), 2 done (a recursive walk stopped at an untrusted address) */
static int forwarded(const hy_array_t *from, bool recursive, struct sockaddr_storage *addr, const char *xff, size_t len)
{
    if (!trusted(from, addr))
        return 0;
    while (len && (xff[len - 1] == ' ' || xff[len - 1] == ','))
        len--;
    size_t p = len;
    while (p > 0 && xff[p - 1] != ' ' && xff[p - 1] != ',')
        p--;
    struct sockaddr_storage got;
    if (!parse_addr_port(xff + p, len - p, &got))
        return 0;
    *addr = got;
    if (recursive && p > 0) {
        int rc = forwarded(from, recursive, addr, xff, p - 1);
        return rc == 0 ? 2 : rc;
    }
    return 1;
}

static const hy_str_t *header(hy_req_t *req, hy_str_t name)
{
    for (size_t i = 0; i < req->num_headers; i++)
        if (req->headers[i].name.len == name.len && strncasecmp(req->headers[i].name.ptr, name.ptr, name.len) == 0)
            return &req->headers[i].value;
    return NULL;
}

/* ---- the phase handler ---- */

static int realip(hy_req_t *req, const hy_http_loc_conf_t *lc)
{
    if (req->peer || lc == NULL) /* replaced already (POST_READ, or before an internal redirect) */
        return HY_DECLINED;
    const rip_loc_t *rl = lc->loc_conf[hy_http_realip_module.index];
    if (rl->from == NULL)
        return HY_DECLINED;
    struct sockaddr_storage addr = req->conn->sock.peer;
    int rc = 0;
    if (rl->type == RIP_XFWD) { /* every X-Forwarded-For, the last one first */
        bool found = false;
        for (size_t i = req->num_headers; i-- > 0;) {
            const hy_header_t *h = &req->headers[i];
            if (!hy_str_caseeq(h->name, "X-Forwarded-For"))
                continue;
            rc = forwarded(rl->from, rl->recursive == 1, &addr, h->value.ptr, h->value.len);
            if (rl->recursive != 1)
                break;
            if (rc == 0 && found) {
                rc = 2;
                break;
            }
            if (rc != 1)
                break;
            found = true;
        }
    } else if (rl->type == RIP_PROXY) {
        const hy_conn_pp_t *p = req->conn->pp;
        if (p == NULL || !p->pp.has_addrs)
            return HY_DECLINED;
        rc = forwarded(rl->from, false, &addr, p->pp.src_text, strlen(p->pp.src_text));
        if (rc != 0) { /* the header's port too */
            if (addr.ss_family == AF_INET)
                ((struct sockaddr_in *)&addr)->sin_port = htons(p->pp.src_port);
            else
                ((struct sockaddr_in6 *)&addr)->sin6_port = htons(p->pp.src_port);
        }
    } else {
        const hy_str_t *v = header(req, rl->type == RIP_XREALIP ? HY_STR("X-Real-IP") : rl->header);
        if (v == NULL)
            return HY_DECLINED;
        rc = forwarded(rl->from, rl->recursive == 1, &addr, v->ptr, v->len);
    }
    if (rc == 0)
        return HY_DECLINED;
    struct sockaddr_storage *ss = hy_palloc(req->pool, sizeof(*ss));
    *ss = addr;
    char *text = hy_palloc(req->pool, INET6_ADDRSTRLEN);
    if (addr.ss_family == AF_INET)
        hy_inet_ntop(AF_INET, &((struct sockaddr_in *)ss)->sin_addr, text, INET6_ADDRSTRLEN);
    else
        hy_inet_ntop(AF_INET6, &((struct sockaddr_in6 *)ss)->sin6_addr, text, INET6_ADDRSTRLEN);
    req->peer = ss;
    req->peer_text = text;
    return HY_DECLINED;
}

static int post_read_phase(hy_req_t *req)
{
    return realip(req, req->srv ? req->srv->loc : NULL);
}

static int preaccess_phase(hy_req_t *req)
{
    return realip(req, req->loc);
}

/* ---- variables: the connection's own address and port ---- */

static void get_realip_addr(hy_req_t *req, hy_var_value_t *v, uintptr_t data)
{
    v->ptr = req->conn->peer_text;
    v->len = strlen(req->conn->peer_text);
    v->not_found = false;
}

static void get_realip_port(hy_req_t *req, hy_var_value_t *v, uintptr_t data)
{
    const struct sockaddr_storage *ss = &req->conn->sock.peer;
    unsigned port = ss->ss_family == AF_INET    ? ntohs(((const struct sockaddr_in *)ss)->sin_port)
                    : ss->ss_family == AF_INET6 ? ntohs(((const struct sockaddr_in6 *)ss)->sin6_port)
                                                : 0;
    char *p = hy_palloc(req->pool, 8);
    v->len = port ? (size_t)snprintf(p, 8, "%u", port) : 0;
    v->ptr = p;
    v->not_found = false;
}

/* ---- directives ---- */

static int set_from(hy_conf_t *cf, const hy_directive_t *d, void *conf)
{
    rip_loc_t *rl = conf;
    size_t n;
    hy_str_t *a = hy_conf_args(cf, &n);
    hy_str_t s = a[1];
    if (rl->from == NULL)
        rl->from = hy_array_create(cf->pool, 4, sizeof(rip_cidr_t));
    ((rip_main_t *)cf->main_conf[hy_http_realip_module.index])->used = true;
    rip_cidr_t c = {0};
    if (hy_str_eq(s, "unix:")) {
        c.family = AF_UNIX;
        *(rip_cidr_t *)hy_array_push(rl->from) = c;
        return 0;
    }
    const char *slash = memchr(s.ptr, '/', s.len);
    size_t alen = slash ? (size_t)(slash - s.ptr) : s.len;
    if (parse_ip(s.ptr, alen, &c.family, c.b)) {
        unsigned max = c.family == AF_INET ? 32 : 128;
        bool mapped = c.family == AF_INET && memchr(s.ptr, ':', alen) != NULL;
        int64_t bits = slash ? hy_parse_int(slash + 1, s.len - alen - 1) : (int64_t)max + (mapped ? 96 : 0);
        if (mapped) /* "::ffff:a.b.c.d/120" counts the 96 mapping bits */
            bits -= 96;
        if (bits < 0 || bits > max) /* not a network: nginx then tries it as a host name, which fails */
            return hy_conf_error(cf, "host not found in set_real_ip_from \"%s\"", s.ptr);
        c.bits = (unsigned)bits;
        bool low = false;
        for (unsigned i = c.bits; i < max; i++)
            if (bit_at(c.b, i)) {
                low = true;
                c.b[i >> 3] &= (uint8_t) ~(1u << (7 - (i & 7)));
            }
        if (low)
            hy_conf_warn(cf, "low address bits of %s are meaningless", s.ptr);
        *(rip_cidr_t *)hy_array_push(rl->from) = c;
        return 0;
    }
    /* a host name: every address it resolves to now, as nginx */
    struct addrinfo hints = {.ai_family = AF_UNSPEC, .ai_socktype = SOCK_STREAM}, *res = NULL;
    if (getaddrinfo(s.ptr, NULL, &hints, &res) != 0 || res == NULL)
        return hy_conf_error(cf, "host not found in set_real_ip_from \"%s\"", s.ptr);
    for (struct addrinfo *ai = res; ai; ai = ai->ai_next) {
        rip_cidr_t h = {0};
        char text[INET6_ADDRSTRLEN];
        if (ai->ai_family == AF_INET)
            hy_inet_ntop(AF_INET, &((struct sockaddr_in *)ai->ai_addr)->sin_addr, text, sizeof(text));
        else if (ai->ai_family == AF_INET6)
            hy_inet_ntop(AF_INET6, &((struct sockaddr_in6 *)ai->ai_addr)->sin6_addr, text, sizeof(text));
        else
            continue;
        if (!parse_ip(text, strlen(text), &h.family, h.b))
            continue;
        h.bits = h.family == AF_INET ? 32 : 128;
        *(rip_cidr_t *)hy_array_push(rl->from) = h;
    }
    freeaddrinfo(res);
    return 0;
}

static int set_header(hy_conf_t *cf, const hy_directive_t *d, void *conf)
{
    rip_loc_t *rl = conf;
    size_t n;
    hy_str_t *a = hy_conf_args(cf, &n);
    if (strcmp(a[1].ptr, "X-Real-IP") == 0) {
        rl->type = RIP_XREALIP;
    } else if (strcmp(a[1].ptr, "X-Forwarded-For") == 0) {
        rl->type = RIP_XFWD;
    } else if (strcmp(a[1].ptr, "proxy_protocol") == 0) {
        rl->type = RIP_PROXY;
    } else {
        rl->type = RIP_HEADER;
        rl->header = hy_str_dup(cf->pool, a[1]);
    }
    return 0;
}

static void *create_loc(hy_conf_t *cf)
{
    rip_loc_t *rl = hy_pcalloc(cf->pool, sizeof(*rl));
    rl->type = HY_UNSET;
    rl->recursive = HY_UNSET;
    return rl;
}

static int merge_loc(hy_conf_t *cf, void *parent, void *child)
{
    rip_loc_t *p = parent, *c = child;
    if (c->from == NULL)
        c->from = p->from;
    hy_merge_value(c->recursive, p->recursive, 0);
    if (c->type == HY_UNSET) {
        c->type = p->type == HY_UNSET ? RIP_XREALIP : p->type;
        c->header = p->header;
    }
    return 0;
}

static void *create_main(hy_conf_t *cf)
{
    return hy_pcalloc(cf->pool, sizeof(rip_main_t));
}

static int postconfiguration(hy_conf_t *cf)
{
    if (hy_vars_define(cf, HY_STR("realip_remote_addr"), get_realip_addr, 0, 0) < 0 ||
        hy_vars_define(cf, HY_STR("realip_remote_port"), get_realip_port, 0, 0) < 0)
        return -1;
    /* a configuration without set_real_ip_from pays nothing for the module on its requests */
    if (((rip_main_t *)cf->main_conf[hy_http_realip_module.index])->used &&
        (hy_http_phase_add(cf, HY_PHASE_POST_READ, post_read_phase) != 0 ||
         hy_http_phase_add(cf, HY_PHASE_PREACCESS, preaccess_phase) != 0))
        return -1;
    return 0;
}

static const hy_directive_t rip_directives[] = {
    {.name = "set_real_ip_from", .ctx = HY_CTX_HTTP_ANY, .args = HY_ARGS_1, .set = set_from, .conf = HY_CONF_LOC},
    {.name = "real_ip_header", .ctx = HY_CTX_HTTP_ANY, .args = HY_ARGS_1, .set = set_header, .conf = HY_CONF_LOC},
    {.name = "real_ip_recursive",
     .ctx = HY_CTX_HTTP_ANY,
     .args = HY_ARGS_FLAG,
     .set = hy_slot_flag,
     .conf = HY_CONF_LOC,
     .offset = offsetof(rip_loc_t, recursive)},
    {0},
};

hy_module_t hy_http_realip_module = {
    .name = "http_realip",
    .directives = rip_directives,
    .create_main_conf = create_main,
    .create_loc_conf = create_loc,
    .merge_loc_conf = merge_loc,
    .postconfiguration = postconfiguration,
};
