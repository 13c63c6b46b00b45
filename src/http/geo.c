/* geo.c — nginx's geo module: `geo [$address] $variable { default V; CIDR V; include F; delete CIDR; ranges;
 * proxy CIDR; proxy_recursive; }` at http level. The value depends on the client address ($remote_addr, or the
 * address in X-Forwarded-For when the client is a trusted `proxy`), or on the address text of a variable.
 *
 * CIDR mode: one binary prefix tree per family (IPv4 32 bits, IPv6 128 bits), longest prefix wins; "default"
 * is 0.0.0.0/0 and ::/0. Ranges mode (IPv4 only, as nginx): a sorted array of disjoint ranges where a later
 * range overwrites the part of earlier ones it covers and `delete` clears a range. An IPv4-mapped IPv6 address
 * is looked up as IPv4; an address that cannot be had (a unix-socket client, a variable that is not an
 * address) is looked up as 255.255.255.255, as nginx. */
#include <string.h>
#include <stdio.h>
#include <arpa/inet.h>
#include <sys/socket.h>
#include "vars.h"
#include "../conf/cycle.h"

typedef struct geo_node {
    struct geo_node *child[2];
    const hy_str_t *value; /* NULL: no network ends here */
} geo_node_t;

typedef struct geo_addr {
    int family; /* AF_INET or AF_INET6 (never an IPv4-mapped IPv6: that is AF_INET) */
    uint8_t b[16]; /* network order; IPv4 in the first 4 */
} geo_addr_t;

typedef struct geo_cidr {
    geo_addr_t addr;
    unsigned bits;
} geo_cidr_t;

typedef struct geo_range {
    uint32_t start, end; /* host order, inclusive */
    const hy_str_t *value;
} geo_range_t;

typedef struct geo {
    hy_complex_t src;
    bool has_src, ranges, recursive, is_volatile;
    geo_node_t *tree4, *tree6;
    hy_array_t *rng;     /* geo_range_t, sorted, disjoint (ranges mode) */
    const hy_str_t *deflt; /* ranges mode's default */
    hy_array_t *proxies; /* geo_cidr_t, NULL when none */
    hy_pool_t *pool;
    unsigned entries;    /* networks/ranges seen (for "ranges" placement) */
} geo_t;

static const hy_str_t empty_value = {"", 0};

/* ---- addresses ---- */

static bool parse_addr(const char *p, size_t n, geo_addr_t *a)
{
    char buf[INET6_ADDRSTRLEN + 1];
    if (n == 0 || n >= sizeof(buf))
        return false;
    memcpy(buf, p, n);
    buf[n] = '\0';
    memset(a, 0, sizeof(*a));
    if (inet_pton(AF_INET, buf, a->b) == 1) {
        a->family = AF_INET;
        return true;
    }
    if (inet_pton(AF_INET6, buf, a->b) != 1)
        return false;
    static const uint8_t mapped[12] = {0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff};
    if (memcmp(a->b, mapped, 12) == 0) {
        memmove(a->b, a->b + 12, 4);
        memset(a->b + 4, 0, 12);
        a->family = AF_INET;
    } else {
        a->family = AF_INET6;
    }
    return true;
}

/* nginx's ngx_parse_addr_port for X-Forwarded-For elements: "ADDR", "IPv4:PORT", "[IPv6]" or "[IPv6]:PORT" */
static bool parse_addr_port(const char *p, size_t n, geo_addr_t *a)
{
    if (n && p[0] == '[') {
        const char *close = memchr(p, ']', n);
        if (close == NULL)
            return false;
        size_t rest = n - (size_t)(close + 1 - p);
        if (rest && close[1] != ':')
            return false;
        return parse_addr(p + 1, (size_t)(close - p - 1), a) && a->family == AF_INET6;
    }
    if (parse_addr(p, n, a))
        return true;
    const char *colon = memchr(p, ':', n);
    if (colon && memchr(colon + 1, ':', n - (size_t)(colon + 1 - p)) == NULL)
        return parse_addr(p, (size_t)(colon - p), a) && a->family == AF_INET;
    return false;
}

static void sockaddr_to_addr(const struct sockaddr_storage *ss, geo_addr_t *a)
{
    memset(a, 0, sizeof(*a));
    if (ss->ss_family == AF_INET) {
        a->family = AF_INET;
        memcpy(a->b, &((const struct sockaddr_in *)ss)->sin_addr, 4);
    } else if (ss->ss_family == AF_INET6) {
        char text[INET6_ADDRSTRLEN];
        hy_inet_ntop(AF_INET6, &((const struct sockaddr_in6 *)ss)->sin6_addr, text, sizeof(text));
        parse_addr(text, strlen(text), a); /* folds an IPv4-mapped peer to IPv4 */
    } else { /* unix socket: INADDR_NONE, as nginx */
        a->family = AF_INET;
        memset(a->b, 0xff, 4);
    }
}

static bool bit_at(const uint8_t *b, unsigned i)
{
    return (b[i >> 3] >> (7 - (i & 7))) & 1;
}

static bool cidr_match(const geo_cidr_t *c, const geo_addr_t *a)
{
    if (c->addr.family != a->family)
        return false;
    for (unsigned i = 0; i < c->bits; i++)
        if (bit_at(c->addr.b, i) != bit_at(a->b, i))
            return false;
    return true;
}

/* "ADDR" or "ADDR/BITS"; host bits set after the mask draw nginx's warning and are cleared. */
static int parse_cidr(hy_conf_t *cf, hy_str_t s, geo_cidr_t *c, const char *what)
{
    const char *slash = memchr(s.ptr, '/', s.len);
    size_t alen = slash ? (size_t)(slash - s.ptr) : s.len;
    if (!parse_addr(s.ptr, alen, &c->addr))
        return hy_conf_error(cf, "invalid %s \"%s\"", what, s.ptr);
    unsigned max = c->addr.family == AF_INET ? 32 : 128;
    bool mapped = c->addr.family == AF_INET && memchr(s.ptr, ':', alen) != NULL;
    if (slash == NULL) {
        c->bits = max;
        return 0;
    }
    int64_t bits = hy_parse_int(slash + 1, s.len - alen - 1);
    if (mapped) /* "::ffff:a.b.c.d/120" counts the 96 mapping bits */
        bits -= 96;
    if (bits < 0 || bits > max)
        return hy_conf_error(cf, "invalid %s \"%s\"", what, s.ptr);
    c->bits = (unsigned)bits;
    bool low = false;
    for (unsigned i = c->bits; i < max; i++)
        if (bit_at(c->addr.b, i)) {
            low = true;
            c->addr.b[i >> 3] &= (uint8_t)~(1u << (7 - (i & 7)));
        }
    if (low)
        hy_conf_warn(cf, "low address bits of %s are meaningless", s.ptr);
    return 0;
}

/* ---- the CIDR trees ---- */

static geo_node_t **tree_of(geo_t *g, int family)
{
    return family == AF_INET ? &g->tree4 : &g->tree6;
}

/** The node for the network (created when `create`), NULL when absent. */
static geo_node_t *tree_node(geo_t *g, const geo_cidr_t *c, bool create)
{
    geo_node_t **slot = tree_of(g, c->addr.family);
    for (unsigned i = 0;; i++) {
        if (*slot == NULL) {
            if (!create)
                return NULL;
            *slot = hy_pcalloc(g->pool, sizeof(geo_node_t));
        }
        if (i == c->bits)
            return *slot;
        slot = &(*slot)->child[bit_at(c->addr.b, i)];
    }
}

static const hy_str_t *tree_find(const geo_t *g, const geo_addr_t *a)
{
    const geo_node_t *n = a->family == AF_INET ? g->tree4 : g->tree6;
    unsigned max = a->family == AF_INET ? 32 : 128;
    const hy_str_t *best = NULL;
    for (unsigned i = 0; n; i++) {
        if (n->value)
            best = n->value;
        if (i == max)
            break;
        n = n->child[bit_at(a->b, i)];
    }
    return best ? best : &empty_value;
}

static void cidr_add(hy_conf_t *cf, geo_t *g, const geo_cidr_t *c, hy_str_t net, const hy_str_t *value)
{
    geo_node_t *n = tree_node(g, c, true);
    if (n->value)
        hy_conf_warn(cf, "duplicate network \"%s\", value: \"%.*s\", old value: \"%.*s\"", net.ptr,
                     (int)value->len, value->ptr, (int)n->value->len, n->value->ptr);
    n->value = value;
}

/* ---- ranges ---- */

/** Remove [s, e] from the ranges (splitting those that straddle it); true when anything was covered. */
static bool ranges_cut(geo_t *g, uint32_t s, uint32_t e)
{
    hy_array_t *old = g->rng;
    hy_array_t *out = hy_array_create(g->pool, old->nelts + 2, sizeof(geo_range_t));
    geo_range_t *r = old->elts;
    bool hit = false;
    for (size_t i = 0; i < old->nelts; i++) {
        if (r[i].end < s || r[i].start > e) {
            *(geo_range_t *)hy_array_push(out) = r[i];
            continue;
        }
        hit = true;
        if (r[i].start < s)
            *(geo_range_t *)hy_array_push(out) = (geo_range_t){r[i].start, s - 1, r[i].value};
        if (r[i].end > e)
            *(geo_range_t *)hy_array_push(out) = (geo_range_t){e + 1, r[i].end, r[i].value};
    }
    g->rng = out;
    return hit;
}

static void ranges_add(geo_t *g, uint32_t s, uint32_t e, const hy_str_t *value)
{
    ranges_cut(g, s, e);
    geo_range_t *r = hy_array_push(g->rng);
    size_t n = g->rng->nelts;
    r = g->rng->elts;
    size_t i = n - 1;
    while (i > 0 && r[i - 1].start > s) {
        r[i] = r[i - 1];
        i--;
    }
    r[i] = (geo_range_t){s, e, value};
}

/* nginx keeps ranges split at /16 boundaries and deletes only a stored piece that equals the deleted one:
 * per /16 chunk of [s, e], the range covering it must have exactly that extent inside the chunk. */
static bool ranges_delete(geo_t *g, uint32_t s, uint32_t e)
{
    bool all = true;
    for (uint64_t cs = s; cs <= e; cs = (cs | 0xffff) + 1) {
        uint32_t chunk_lo = (uint32_t)cs & 0xffff0000u, chunk_hi = chunk_lo | 0xffff;
        uint32_t ce = e < chunk_hi ? e : chunk_hi;
        const geo_range_t *r = g->rng->elts;
        bool ok = false;
        for (size_t i = 0; i < g->rng->nelts; i++) {
            uint32_t lo = r[i].start > chunk_lo ? r[i].start : chunk_lo;
            uint32_t hi = r[i].end < chunk_hi ? r[i].end : chunk_hi;
            if (r[i].start <= r[i].end && lo == cs && hi == ce && r[i].start <= ce && r[i].end >= cs) {
                ok = true;
                break;
            }
        }
        if (ok)
            ranges_cut(g, (uint32_t)cs, ce);
        else
            all = false;
    }
    return all;
}

static const hy_str_t *ranges_find(const geo_t *g, uint32_t a)
{
    const geo_range_t *r = g->rng->elts;
    size_t lo = 0, hi = g->rng->nelts;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (r[mid].end < a)
            lo = mid + 1;
        else if (r[mid].start > a)
            hi = mid;
        else
            return r[mid].value;
    }
    return g->deflt ? g->deflt : &empty_value;
}

static int parse_range(hy_conf_t *cf, hy_str_t s, uint32_t *start, uint32_t *end)
{
    const char *dash = memchr(s.ptr, '-', s.len);
    geo_addr_t a, b;
    if (dash == NULL || !parse_addr(s.ptr, (size_t)(dash - s.ptr), &a) || a.family != AF_INET ||
        !parse_addr(dash + 1, s.len - (size_t)(dash + 1 - s.ptr), &b) || b.family != AF_INET)
        return hy_conf_error(cf, "invalid range \"%s\"", s.ptr);
    uint32_t x, y;
    memcpy(&x, a.b, 4);
    memcpy(&y, b.b, 4);
    *start = ntohl(x), *end = ntohl(y);
    if (*start > *end)
        return hy_conf_error(cf, "invalid range \"%s\"", s.ptr);
    return 0;
}

/* ---- the block ---- */

static int geo_raw(hy_conf_t *cf, void *data)
{
    geo_t *g = data;
    size_t n;
    hy_str_t *a = hy_conf_args(cf, &n);
    if (n == 1 && hy_str_eq(a[0], "ranges")) {
        if (g->entries)
            return hy_conf_error(cf, "the \"ranges\" directive must be the first directive inside \"geo\" block");
        g->ranges = true;
        return 0;
    }
    if (n == 1 && hy_str_eq(a[0], "volatile")) { /* nginx 1.29's parameter: evaluated at each use */
        g->is_volatile = true;
        return 0;
    }
    if (n == 1 && hy_str_eq(a[0], "proxy_recursive")) {
        g->recursive = true;
        return 0;
    }
    if (n != 2)
        return hy_conf_error(cf, "invalid number of the geo parameters");
    if (hy_str_eq(a[0], "proxy")) {
        geo_cidr_t c;
        if (parse_cidr(cf, a[1], &c, "network") != 0)
            return -1;
        if (g->proxies == NULL)
            g->proxies = hy_array_create(g->pool, 2, sizeof(geo_cidr_t));
        *(geo_cidr_t *)hy_array_push(g->proxies) = c;
        return 0;
    }
    bool del = hy_str_eq(a[0], "delete");
    hy_str_t key = del ? a[1] : a[0];
    hy_str_t *value = NULL;
    if (!del) {
        value = hy_palloc(g->pool, sizeof(*value));
        *value = hy_str_dup(g->pool, a[1]);
    }
    g->entries++;
    if (g->ranges) {
        if (!del && hy_str_eq(key, "default")) {
            g->deflt = value;
            return 0;
        }
        uint32_t s = 0, e = 0;
        if (parse_range(cf, key, &s, &e) != 0)
            return -1;
        if (!del)
            ranges_add(g, s, e, value);
        else if (!ranges_delete(g, s, e))
            hy_conf_warn(cf, "no address range \"%s\" to delete", key.ptr);
        return 0;
    }
    if (hy_str_eq(key, "default")) {
        if (del)
            return hy_conf_error(cf, "invalid network \"%s\"", key.ptr);
        geo_cidr_t c4 = {.addr = {.family = AF_INET}, .bits = 0}, c6 = {.addr = {.family = AF_INET6}, .bits = 0};
        cidr_add(cf, g, &c4, key, value);
        cidr_add(cf, g, &c6, key, value);
        return 0;
    }
    geo_cidr_t c;
    if (parse_cidr(cf, key, &c, "network") != 0)
        return -1;
    if (!del) {
        cidr_add(cf, g, &c, key, value);
        return 0;
    }
    geo_node_t *node = tree_node(g, &c, false);
    if (node == NULL || node->value == NULL)
        hy_conf_warn(cf, "no network \"%s\" to delete", key.ptr);
    else
        node->value = NULL;
    return 0;
}

/* ---- per request ---- */

/* One X-Forwarded-For value, nginx's ngx_http_get_forwarded_addr_internal: 1 = replaced, 0 = declined (the
 * current address is not a trusted proxy, or the last element is not an address), 2 = done (recursive walk
 * stopped at a trusted address). */
static int forwarded(const geo_t *g, geo_addr_t *addr, const char *xff, size_t len)
{
    const geo_cidr_t *c = g->proxies->elts;
    size_t i = 0;
    while (i < g->proxies->nelts && !cidr_match(&c[i], addr))
        i++;
    if (i == g->proxies->nelts)
        return 0;
    while (len && (xff[len - 1] == ' ' || xff[len - 1] == ','))
        len--;
    size_t p = len;
    while (p > 0 && xff[p - 1] != ' ' && xff[p - 1] != ',')
        p--;
    geo_addr_t got;
    if (!parse_addr_port(xff + p, len - p, &got))
        return 0;
    *addr = got;
    if (g->recursive && p > 0) {
        int rc = forwarded(g, addr, xff, p - 1);
        return rc == 0 ? 2 : rc;
    }
    return 1;
}

static void client_addr(hy_req_t *req, const geo_t *g, geo_addr_t *a)
{
    sockaddr_to_addr(hy_req_peer(req), a);
    if (g->proxies == NULL)
        return;
    for (size_t i = req->num_headers; i-- > 0;) { /* the last X-Forwarded-For first, as nginx 1.22 */
        const hy_header_t *h = &req->headers[i];
        if (!hy_str_caseeq(h->name, "X-Forwarded-For"))
            continue;
        if (forwarded(g, a, h->value.ptr, h->value.len) != 1 || !g->recursive)
            break;
    }
}

static void geo_get(hy_req_t *req, hy_var_value_t *v, uintptr_t data)
{
    const geo_t *g = (const geo_t *)data;
    geo_addr_t a;
    if (g->has_src) {
        hy_str_t s;
        hy_vars_eval(req, &g->src, &s);
        if (!parse_addr(s.ptr, s.len, &a)) {
            memset(&a, 0, sizeof(a));
            a.family = AF_INET;
            memset(a.b, 0xff, 4); /* INADDR_NONE, as nginx */
        }
    } else {
        client_addr(req, g, &a);
    }
    const hy_str_t *val;
    if (g->ranges) {
        uint32_t x = 0xffffffffu;
        if (a.family == AF_INET) {
            memcpy(&x, a.b, 4);
            x = ntohl(x);
        }
        val = ranges_find(g, x);
    } else {
        val = tree_find(g, &a);
    }
    v->ptr = val->ptr;
    v->len = val->len;
    v->not_found = false;
}

static int set_geo(hy_conf_t *cf, const hy_directive_t *d, void *conf)
{
    (void)d, (void)conf;
    size_t n;
    hy_str_t *a = hy_conf_args(cf, &n);
    hy_str_t dst = a[n - 1];
    if (dst.len < 2 || dst.ptr[0] != '$')
        return hy_conf_error(cf, "invalid variable name \"%s\"", dst.ptr);
    geo_t *g = hy_pcalloc(cf->pool, sizeof(*g));
    g->pool = cf->pool;
    g->rng = hy_array_create(cf->pool, 8, sizeof(geo_range_t));
    if (n == 3) {
        if (a[1].len < 2 || a[1].ptr[0] != '$')
            return hy_conf_error(cf, "invalid variable name \"%s\"", a[1].ptr);
        if (hy_vars_compile(cf, a[1], &g->src) != 0)
            return -1;
        g->has_src = true;
    }
    hy_str_t name = hy_str_dup(cf->pool, (hy_str_t){dst.ptr + 1, dst.len - 1});
    hy_conf_t saved = *cf;
    cf->raw = geo_raw;
    cf->raw_data = g;
    int rc = hy_conf_parse_block(cf);
    cf->raw = saved.raw;
    cf->raw_data = saved.raw_data;
    if (rc != 0)
        return rc;
    return hy_vars_define(cf, name, geo_get, (uintptr_t)g, g->is_volatile ? HY_VAR_NOCACHE : 0) < 0 ? -1 : 0;
}

static const hy_directive_t geo_directives[] = {
    {.name = "geo", .ctx = HY_CTX_HTTP, .args = HY_ARGS_1 | HY_ARGS_2 | HY_ARGS_BLOCK, .set = set_geo},
    {0},
};

hy_module_t hy_http_geo_module = {
    .name = "http_geo",
    .directives = geo_directives,
};
