/* access.c — nginx's access module. `allow` and `deny` rules of a level are tried in order, the first whose
 * network holds the client decides (deny: 403, allow: access granted); no matching rule declines. Rules are kept
 * per family, as nginx keeps them: an IPv4 client is checked against the IPv4 rules, an IPv6 one against the IPv6
 * rules — except an IPv4-mapped IPv6 client, checked against the IPv4 rules when the level has any — and a
 * unix-socket client against `unix:` rules; `all` is a rule of every family. A level without rules inherits all of
 * its parent's. */
#include <string.h>
#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include "access.h"
#include "core.h"
#include "phases.h"
#include "request.h"
#include "../conf/cycle.h"
#include "../core/log.h"

enum { FAM_INET = 0, FAM_INET6, FAM_UNIX, FAM_COUNT };

typedef struct access_rule {
    uint8_t addr[16], mask[16]; /* network order; IPv4 in the first 4 bytes */
    bool deny;
} access_rule_t;

typedef struct access_loc {
    hy_array_t *rules[FAM_COUNT]; /* access_rule_t; NULL when the family has none */
} access_loc_t;

hy_module_t hy_http_access_module;

static int match(const hy_array_t *rules, const uint8_t *addr, size_t n)
{
    const access_rule_t *r = rules->elts;
    for (size_t i = 0; i < rules->nelts; i++) {
        size_t k = 0;
        while (k < n && (addr[k] & r[i].mask[k]) == r[i].addr[k])
            k++;
        if (k == n)
            return r[i].deny ? 403 : HY_OK;
    }
    return HY_DECLINED;
}

static int handler(hy_req_t *req)
{
    const access_loc_t *c = req->loc->loc_conf[hy_http_access_module.index];
    if (c->rules[FAM_INET] == NULL && c->rules[FAM_INET6] == NULL && c->rules[FAM_UNIX] == NULL)
        return HY_DECLINED;
    const struct sockaddr_storage *peer = hy_req_peer(req); /* realip's address when it replaced the peer */
    int rc = HY_DECLINED;
    if (peer->ss_family == AF_UNIX) {
        if (c->rules[FAM_UNIX])
            rc = match(c->rules[FAM_UNIX], NULL, 0);
    } else if (peer->ss_family == AF_INET) {
        if (c->rules[FAM_INET])
            rc = match(c->rules[FAM_INET], (const uint8_t *)&((const struct sockaddr_in *)peer)->sin_addr, 4);
    } else if (peer->ss_family == AF_INET6) {
        const uint8_t *a = ((const struct sockaddr_in6 *)peer)->sin6_addr.s6_addr;
        static const uint8_t mapped[12] = {0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff};
        if (c->rules[FAM_INET] && memcmp(a, mapped, 12) == 0)
            rc = match(c->rules[FAM_INET], a + 12, 4);
        else if (c->rules[FAM_INET6])
            rc = match(c->rules[FAM_INET6], a, 16);
    }
    if (rc == 403 && req->loc->satisfy == HY_SATISFY_ALL)
        hy_req_log(req, HY_LOG_ERR, "access forbidden by rule");
    return rc;
}

static void push(hy_conf_t *cf, access_loc_t *c, int fam, const access_rule_t *r)
{
    if (c->rules[fam] == NULL)
        c->rules[fam] = hy_array_create(cf->pool, 4, sizeof(access_rule_t));
    *(access_rule_t *)hy_array_push(c->rules[fam]) = *r;
}

/* nginx's ngx_ptocidr: ADDRESS or ADDRESS/BITS, IPv4 or IPv6; host bits after the mask warn and are cleared.
 * Returns the family, -1 when invalid. */
static int parse_cidr(hy_conf_t *cf, hy_str_t s, access_rule_t *r)
{
    const char *slash = memchr(s.ptr, '/', s.len);
    size_t alen = slash ? (size_t)(slash - s.ptr) : s.len;
    char buf[INET6_ADDRSTRLEN + 1];
    if (alen == 0 || alen >= sizeof(buf))
        return -1;
    memcpy(buf, s.ptr, alen);
    buf[alen] = '\0';
    int fam;
    size_t len;
    if (inet_pton(AF_INET, buf, r->addr) == 1)
        fam = FAM_INET, len = 4;
    else if (inet_pton(AF_INET6, buf, r->addr) == 1)
        fam = FAM_INET6, len = 16;
    else
        return -1;
    int64_t bits = (int64_t)len * 8;
    if (slash) {
        bits = hy_parse_int(slash + 1, s.len - alen - 1);
        if (bits < 0 || bits > (int64_t)len * 8)
            return -1;
    }
    bool low = false;
    for (size_t i = 0; i < len; i++) {
        int64_t b = bits - (int64_t)i * 8;
        r->mask[i] = b >= 8 ? 0xff : b <= 0 ? 0 : (uint8_t)(0xff << (8 - b));
        if (r->addr[i] & ~r->mask[i])
            low = true;
        r->addr[i] &= r->mask[i];
    }
    if (low)
        hy_conf_warn(cf, "low address bits of %s are meaningless", s.ptr);
    return fam;
}

static int set_rule(hy_conf_t *cf, const hy_directive_t *d, void *conf)
{
    access_loc_t *c = conf;
    size_t n;
    hy_str_t *a = hy_conf_args(cf, &n);
    access_rule_t r;
    memset(&r, 0, sizeof(r));
    r.deny = d->name[0] == 'd';
    if (hy_str_eq(a[1], "all")) {
        for (int f = 0; f < FAM_COUNT; f++)
            push(cf, c, f, &r); /* a zero mask matches every address */
        return 0;
    }
    if (hy_str_eq(a[1], "unix:")) {
        push(cf, c, FAM_UNIX, &r);
        return 0;
    }
    int fam = parse_cidr(cf, a[1], &r);
    if (fam < 0)
        return hy_conf_error(cf, "invalid parameter \"%s\"", a[1].ptr);
    push(cf, c, fam, &r);
    return 0;
}

static void *create_loc(hy_conf_t *cf)
{
    return hy_pcalloc(cf->pool, sizeof(access_loc_t));
}

static int merge_loc(hy_conf_t *cf, void *parent, void *child)
{
    access_loc_t *p = parent, *c = child;
    if (c->rules[FAM_INET] == NULL && c->rules[FAM_INET6] == NULL && c->rules[FAM_UNIX] == NULL)
        *c = *p;
    return 0;
}

static int postconfiguration(hy_conf_t *cf)
{
    return hy_http_phase_add(cf, HY_PHASE_ACCESS, handler);
}

static const hy_directive_t access_directives[] = {
    {.name = "allow", .ctx = HY_CTX_HTTP_ANY | HY_CTX_LMT, .args = HY_ARGS_1, .set = set_rule, .conf = HY_CONF_LOC},
    {.name = "deny", .ctx = HY_CTX_HTTP_ANY | HY_CTX_LMT, .args = HY_ARGS_1, .set = set_rule, .conf = HY_CONF_LOC},
    {0},
};

hy_module_t hy_http_access_module = {
    .name = "http_access",
    .directives = access_directives,
    .create_loc_conf = create_loc,
    .merge_loc_conf = merge_loc,
    .postconfiguration = postconfiguration,
};
