/* proxy_conf.c — the proxy module's directives, their inheritance (nginx's merge rules: proxy_set_header and
 * proxy_hide_header lists are inherited only by levels that define none), proxy_pass URL parsing, and the
 * proxy_redirect rewriting of Location and Refresh. */
#include <stdio.h>
#include <string.h>
#include <arpa/inet.h>
#include <sys/un.h>
#include "proxy_conf.h"
#include "../http/vars.h"
#include "../conf/conf_regex.h"

#define PL(f) offsetof(proxy_loc_t, f)

/* ---------------------------------------------------------------- URL */

int hy_proxy_parse_url(hy_str_t url, hy_proxy_url_t *out)
{
    memset(out, 0, sizeof(*out));
    size_t skip;
    if (url.len > 7 && hy_mem_caseeq(url.ptr, "http://", 7))
        skip = 7;
    else if (url.len > 8 && hy_mem_caseeq(url.ptr, "https://", 8))
        skip = 8, out->is_tls = true;
    else
        return -1;
    uint16_t default_port = out->is_tls ? 443 : 80;
    const char *p = url.ptr + skip, *end = url.ptr + url.len;
    const char *hend;
    if ((size_t)(end - p) > 5 && memcmp(p, "unix:", 5) == 0) {
        hend = memchr(p + 5, ':', (size_t)(end - p - 5));
        if (hend == NULL)
            hend = end;
        out->host = (hy_str_t){(char *)p, (size_t)(hend - p)};
        out->host_header = HY_STR("localhost");
        out->port_text = HY_STR_NULL;
        out->prefix = (hy_str_t){url.ptr, (size_t)(hend - url.ptr)};
        if (hend < end)
            hend++; /* the ':' before the URI */
        if (hend < end) {
            out->uri = (hy_str_t){(char *)hend, (size_t)(end - hend)};
            out->has_uri = true;
        }
        return out->host.len > 5 ? 0 : -1;
    }
    hend = p;
    while (hend < end && *hend != '/' && *hend != '?')
        hend++;
    if (hend == p)
        return -1;
    hy_str_t hp = {(char *)p, (size_t)(hend - p)};
    const char *colon = NULL;
    if (hp.ptr[0] == '[') {
        const char *rb = memchr(hp.ptr, ']', hp.len);
        if (rb == NULL)
            return -1;
        if (rb + 1 < hend && rb[1] == ':')
            colon = rb + 1;
        else if (rb + 1 != hend)
            return -1;
    } else {
        colon = memchr(hp.ptr, ':', hp.len);
    }
    out->port = default_port;
    if (colon) {
        int64_t v = hy_parse_int(colon + 1, (size_t)(hend - colon - 1));
        if (v < 1 || v > 65535)
            return -1;
        out->port = (uint16_t)v;
        out->explicit_port = true;
        out->host = (hy_str_t){hp.ptr, (size_t)(colon - hp.ptr)};
        out->port_text = (hy_str_t){(char *)colon + 1, (size_t)(hend - colon - 1)};
    } else {
        out->host = hp;
        out->port_text = out->is_tls ? HY_STR("443") : HY_STR("80");
    }
    if (out->host.len == 0)
        return -1;
    out->host_header = out->port == default_port ? out->host : hp;
    out->prefix = (hy_str_t){url.ptr, (size_t)(hend - url.ptr)};
    if (hend < end) {
        out->uri = (hy_str_t){(char *)hend, (size_t)(end - hend)};
        out->has_uri = true;
    }
    return 0;
}

hy_upstream_group_t *hy_proxy_group_literal(hy_req_t *req, const hy_proxy_url_t *pu)
{
    struct sockaddr_storage ss = {0};
    socklen_t len;
    char host[128];
    hy_str_t h = pu->host;
    if (h.len > 5 && memcmp(h.ptr, "unix:", 5) == 0) {
        struct sockaddr_un *su = (void *)&ss;
        if (h.len - 5 >= sizeof(su->sun_path))
            return NULL;
        su->sun_family = AF_UNIX;
        memcpy(su->sun_path, h.ptr + 5, h.len - 5);
        len = sizeof(*su);
        snprintf(host, sizeof(host), "%.*s", (int)HY_MIN(h.len, sizeof(host) - 1), h.ptr);
        goto make;
    }
    if (h.len && h.ptr[0] == '[')
        h = (hy_str_t){h.ptr + 1, h.len - 2};
    if (h.len >= sizeof(host))
        return NULL;
    memcpy(host, h.ptr, h.len);
    host[h.len] = '\0';
    struct sockaddr_in *s4 = (void *)&ss;
    struct sockaddr_in6 *s6 = (void *)&ss;
    if (inet_pton(AF_INET, host, &s4->sin_addr) == 1) {
        s4->sin_family = AF_INET;
        s4->sin_port = htons(pu->port);
        len = sizeof(*s4);
    } else if (inet_pton(AF_INET6, host, &s6->sin6_addr) == 1) {
        s6->sin6_family = AF_INET6;
        s6->sin6_port = htons(pu->port);
        len = sizeof(*s6);
    } else {
        return NULL;
    }
make:;
    hy_upstream_group_t *g = hy_pcalloc(req->pool, sizeof(*g));
    hy_upstream_peer_t *p = hy_pcalloc(req->pool, sizeof(*p));
    memcpy(&p->sa, &ss, len);
    p->salen = len;
    char buf[160];
    int n = ss.ss_family == AF_UNIX   ? snprintf(buf, sizeof(buf), "%s", host)
            : ss.ss_family == AF_INET ? snprintf(buf, sizeof(buf), "%s:%u", host, pu->port)
                                      : snprintf(buf, sizeof(buf), "[%s]:%u", host, pu->port);
    p->name = hy_str_dup(req->pool, (hy_str_t){buf, (size_t)n});
    p->weight = p->effective_weight = 1;
    p->max_fails = 1;
    p->fail_timeout_ms = 10000;
    g->name = pu->host;
    g->peers = p;
    g->npeers = 1;
    g->implicit = true;
    g->transient = true;
    g->keepalive_requests = 1000;
    g->keepalive_time_ms = 3600000;
    g->keepalive_timeout_ms = 60000;
    return g;
}

/* ---------------------------------------------------------------- proxy_redirect */

static hy_str_t replace_prefix(hy_req_t *req, hy_str_t v, size_t cut, hy_str_t repl)
{
    char *p = hy_palloc(req->pool, repl.len + v.len - cut + 1);
    memcpy(p, repl.ptr, repl.len);
    memcpy(p + repl.len, v.ptr + cut, v.len - cut);
    return (hy_str_t){p, repl.len + v.len - cut};
}

hy_str_t hy_proxy_rewrite_location(hy_req_t *req, const proxy_loc_t *pl, hy_str_t v)
{
    if (pl->redirects == NULL)
        return v;
    const proxy_redirect_t *r = pl->redirects->elts;
    for (size_t i = 0; i < pl->redirects->nelts; i++) {
        if (r[i].regex) {
            if (hy_regex_exec(r[i].regex, v, hy_req_captures(req)) == 1) {
                hy_str_t out;
                hy_vars_eval(req, &r[i].to, &out);
                return out;
            }
            continue;
        }
        hy_str_t from, to;
        hy_vars_eval(req, &r[i].from, &from);
        if (from.len <= v.len && memcmp(from.ptr, v.ptr, from.len) == 0) {
            hy_vars_eval(req, &r[i].to, &to);
            return replace_prefix(req, v, from.len, to);
        }
    }
    return v;
}

hy_str_t hy_proxy_rewrite_refresh(hy_req_t *req, const proxy_loc_t *pl, hy_str_t v)
{
    for (size_t i = 0; i + 4 <= v.len; i++)
        if (hy_mem_caseeq(v.ptr + i, "url=", 4)) {
            hy_str_t head = {v.ptr, i + 4}, url = {v.ptr + i + 4, v.len - i - 4};
            hy_str_t r = hy_proxy_rewrite_location(req, pl, url);
            if (r.ptr == url.ptr)
                return v;
            return replace_prefix(req, r, 0, head);
        }
    return v;
}

/* One attribute value through a proxy_cookie_domain / proxy_cookie_path list; NULL when no rule matched. */
static const char *cookie_rule(hy_req_t *req, const hy_array_t *rules, bool domain, hy_str_t val, hy_str_t *out)
{
    const proxy_redirect_t *r = rules->elts;
    bool dot = domain && val.len && val.ptr[0] == '.';
    hy_str_t cmp = dot ? (hy_str_t){val.ptr + 1, val.len - 1} : val;
    for (size_t i = 0; i < rules->nelts; i++) {
        hy_str_t to;
        if (r[i].regex) {
            if (hy_regex_exec(r[i].regex, val, hy_req_captures(req)) != 1)
                continue;
            hy_vars_eval(req, &r[i].to, out);
            return "";
        }
        hy_str_t from;
        hy_vars_eval(req, &r[i].from, &from);
        if (domain) { /* the whole name, case-insensitive, leading dots ignored on both sides */
            if (from.len && from.ptr[0] == '.')
                from.ptr++, from.len--;
            if (!hy_str_caseeq_str(from, cmp))
                continue;
            hy_vars_eval(req, &r[i].to, &to);
            if (to.len && to.ptr[0] == '.')
                to.ptr++, to.len--;
            *out = dot ? replace_prefix(req, to, 0, HY_STR(".")) : to;
            return "";
        }
        if (from.len > val.len || memcmp(from.ptr, val.ptr, from.len) != 0) /* path: a prefix */
            continue;
        hy_vars_eval(req, &r[i].to, &to);
        *out = replace_prefix(req, val, from.len, to);
        return "";
    }
    return NULL;
}

hy_str_t hy_proxy_rewrite_cookie(hy_req_t *req, const proxy_loc_t *pl, hy_str_t v)
{
    bool dom = pl->cookie_domains && pl->cookie_domains->nelts, path = pl->cookie_paths && pl->cookie_paths->nelts;
    if (!dom && !path)
        return v;
    const char *p = memchr(v.ptr, ';', v.len), *end = v.ptr + v.len;
    if (p == NULL)
        return v;
    size_t cap = v.len + 256, o = (size_t)(p - v.ptr);
    char *buf = hy_palloc(req->pool, cap);
    memcpy(buf, v.ptr, o);
    while (p < end) { /* p at ';' */
        const char *a = p + 1, *next = memchr(a, ';', (size_t)(end - a));
        if (next == NULL)
            next = end;
        const char *name = a;
        while (name < next && *name == ' ')
            name++;
        const char *eq = memchr(name, '=', (size_t)(next - name));
        hy_str_t out = HY_STR_NULL;
        bool is_dom = eq && (size_t)(eq - name) == 6 && hy_mem_caseeq(name, "domain", 6);
        bool is_path = eq && (size_t)(eq - name) == 4 && hy_mem_caseeq(name, "path", 4);
        hy_str_t val = eq ? (hy_str_t){(char *)eq + 1, (size_t)(next - eq - 1)} : HY_STR_NULL;
        if (((is_dom && dom && cookie_rule(req, pl->cookie_domains, true, val, &out)) ||
             (is_path && path && cookie_rule(req, pl->cookie_paths, false, val, &out))) &&
            o + (size_t)(eq + 1 - p) + out.len + (size_t)(end - next) < cap) {
            memcpy(buf + o, p, (size_t)(eq + 1 - p));
            o += (size_t)(eq + 1 - p);
            memcpy(buf + o, out.ptr, out.len);
            o += out.len;
        } else {
            if (o + (size_t)(next - p) >= cap)
                return v;
            memcpy(buf + o, p, (size_t)(next - p));
            o += (size_t)(next - p);
        }
        p = next;
    }
    return (hy_str_t){buf, o};
}

/* ---------------------------------------------------------------- directives */

static int set_pass(hy_conf_t *cf, const hy_directive_t *d, void *conf)
{
    (void)d;
    proxy_loc_t *pl = conf;
    hy_http_loc_conf_t *lc = cf->loc_conf[hy_http_core_module.index];
    size_t n;
    hy_str_t *a = hy_conf_args(cf, &n);
    if (pl->url.ptr != NULL || pl->url_cv != NULL || lc->handler != NULL)
        return hy_conf_error(cf, "\"proxy_pass\" directive is duplicate");
    if (memchr(a[1].ptr, '$', a[1].len)) {
        pl->url_cv = hy_pcalloc(cf->pool, sizeof(*pl->url_cv));
        if (hy_vars_compile(cf, a[1], pl->url_cv) != 0)
            return -1;
        pl->url = a[1];
        return hy_proxy__set_handler(cf);
    }
    hy_proxy_url_t pu;
    if (hy_proxy_parse_url(a[1], &pu) != 0)
        return hy_conf_error(cf, "invalid URL prefix in \"%s\"", a[1].ptr);
    if (pu.has_uri && (lc->match == HY_LOC_REGEX || lc->match == HY_LOC_REGEX_CASELESS || lc->match == HY_LOC_NAMED ||
                       (cf->ctx & HY_CTX_LIF) || lc->is_limit_except))
        return hy_conf_error(cf, "\"proxy_pass\" cannot have URI part in location given by regular expression, or "
                                 "inside named location, or inside \"if\" statement, or inside \"limit_except\" block");
    pl->group = hy_upstream_group_add(cf, pu.host, pu.port, pu.explicit_port);
    if (pl->group == NULL)
        return -1;
    pl->url = hy_str_dup(cf->pool, pu.prefix);
    pl->is_tls = pu.is_tls;
    pl->uri_part = hy_str_dup(cf->pool, pu.uri);
    pl->has_uri = pu.has_uri;
    pl->host_header = hy_str_dup(cf->pool, pu.host_header);
    pl->port_text = hy_str_dup(cf->pool, pu.port_text);
    pl->loc_prefix = lc->name;
    return hy_proxy__set_handler(cf);
}

static int set_header(hy_conf_t *cf, const hy_directive_t *d, void *conf)
{
    (void)d;
    proxy_loc_t *pl = conf;
    size_t n;
    hy_str_t *a = hy_conf_args(cf, &n);
    if (pl->set_headers == NULL)
        pl->set_headers = hy_array_create(cf->pool, 4, sizeof(proxy_hdr_t));
    proxy_hdr_t *h = hy_array_push(pl->set_headers);
    h->name = hy_str_dup(cf->pool, a[1]);
    return hy_vars_compile(cf, a[2], &h->value);
}

/* proxy_set_body, proxy_method: one value with variables */
static int set_complex(hy_conf_t *cf, const hy_directive_t *d, void *conf)
{
    hy_complex_t **slot = (hy_complex_t **)((char *)conf + d->offset);
    size_t n;
    hy_str_t *a = hy_conf_args(cf, &n);
    if (*slot != NULL)
        return hy_conf_error(cf, "\"%s\" directive is duplicate", d->name);
    *slot = hy_pcalloc(cf->pool, sizeof(**slot));
    return hy_vars_compile(cf, a[1], *slot);
}

static int set_redirect(hy_conf_t *cf, const hy_directive_t *d, void *conf)
{
    proxy_loc_t *pl = conf;
    size_t n;
    hy_str_t *a = hy_conf_args(cf, &n);
    /* nginx 1.22: "off" next to any other proxy_redirect of the level is a duplicate (either order) */
    if (pl->redirect == 0)
        return hy_conf_error(cf, "\"%s\" directive is duplicate", d->name);
    if (n == 2 && hy_str_eq(a[1], "off")) {
        if (pl->redirects && pl->redirects->nelts)
            return hy_conf_error(cf, "\"%s\" directive is duplicate", d->name);
        pl->redirect = 0;
        pl->redirects = NULL;
        return 0;
    }
    if (n == 2 && !hy_str_eq(a[1], "default"))
        return hy_conf_error(cf, "invalid parameter \"%s\"", a[1].ptr);
    if (pl->redirects == NULL)
        pl->redirects = hy_array_create(cf->pool, 2, sizeof(proxy_redirect_t));
    if (n == 2) { /* default: filled in at merge, when proxy_pass is known */
        if (pl->url_cv != NULL)
            return hy_conf_error(cf, "\"proxy_redirect default\" cannot be used with \"proxy_pass\" directive with "
                                     "variables");
        if (pl->url.ptr == NULL)
            return hy_conf_error(cf, "\"proxy_redirect default\" should be placed after the \"proxy_pass\" directive");
        proxy_redirect_t *r = hy_array_push(pl->redirects);
        char buf[2048];
        int l = pl->has_uri ? snprintf(buf, sizeof(buf), "%.*s%.*s", (int)pl->url.len, pl->url.ptr,
                                       (int)pl->uri_part.len, pl->uri_part.ptr)
                            : snprintf(buf, sizeof(buf), "%.*s/", (int)pl->url.len, pl->url.ptr);
        hy_str_t fv = hy_str_dup(cf->pool, (hy_str_t){buf, (size_t)l});
        hy_str_t tv = pl->has_uri ? pl->loc_prefix : HY_STR("/");
        r->from = (hy_complex_t){fv, NULL, 0};
        r->to = (hy_complex_t){hy_str_dup(cf->pool, tv), NULL, 0};
        pl->redirect = 2;
        return 0;
    }
    proxy_redirect_t *r = hy_array_push(pl->redirects);
    if (a[1].len && a[1].ptr[0] == '~') {
        bool caseless = a[1].len > 1 && a[1].ptr[1] == '*';
        hy_str_t pat = {a[1].ptr + 1 + caseless, a[1].len - 1 - caseless};
        if ((r->regex = hy_conf_regex(cf, pat, caseless)) == NULL)
            return -1;
    } else if (hy_vars_compile(cf, a[1], &r->from) != 0) {
        return -1;
    }
    if (hy_vars_compile(cf, a[2], &r->to) != 0)
        return -1;
    pl->redirect = 2;
    return 0;
}

/* proxy_cookie_domain / proxy_cookie_path: off, or FROM TO (strings with variables, or ~regex; domain regexes are
 * caseless, as nginx) */
static int set_cookie_rule(hy_conf_t *cf, const hy_directive_t *d, void *conf)
{
    hy_array_t **slot = (hy_array_t **)((char *)conf + d->offset);
    size_t n;
    hy_str_t *a = hy_conf_args(cf, &n);
    bool domain = strcmp(d->name, "proxy_cookie_domain") == 0;
    if (n == 2) {
        if (!hy_str_eq(a[1], "off"))
            return hy_conf_error(cf, "invalid parameter \"%s\"", a[1].ptr);
        if (*slot != NULL && (*slot)->nelts)
            return hy_conf_error(cf, "\"%s\" directive is duplicate", d->name);
        *slot = hy_array_create(cf->pool, 1, sizeof(proxy_redirect_t));
        return 0;
    }
    if (*slot == NULL)
        *slot = hy_array_create(cf->pool, 2, sizeof(proxy_redirect_t));
    else if ((*slot)->nelts == 0)
        return hy_conf_error(cf, "\"%s\" directive is duplicate", d->name);
    proxy_redirect_t *r = hy_array_push(*slot);
    if (a[1].len && a[1].ptr[0] == '~') {
        bool caseless = domain || (a[1].len > 1 && a[1].ptr[1] == '*');
        size_t skip = a[1].len > 1 && a[1].ptr[1] == '*' ? 2 : 1;
        if ((r->regex = hy_conf_regex(cf, (hy_str_t){a[1].ptr + skip, a[1].len - skip}, caseless)) == NULL)
            return -1;
    } else if (hy_vars_compile(cf, a[1], &r->from) != 0) {
        return -1;
    }
    return hy_vars_compile(cf, a[2], &r->to);
}

/* health_check [parameters] (NGINX Plus): registered at merge, when the location's proxy settings are known */
static int set_health_check(hy_conf_t *cf, const hy_directive_t *d, void *conf)
{
    (void)d;
    proxy_loc_t *pl = conf;
    if (pl->health_checks == NULL)
        pl->health_checks = hy_array_create(cf->pool, 1, sizeof(hy_upstream_hc_conf_t));
    return hy_upstream_hc_parse(cf, hy_array_push(pl->health_checks));
}

/* The location's health checks get its settings: the group, timeouts, HTTP version and the Host field the proxied
 * request carries (a proxy_set_header Host without variables, else $proxy_host). */
static int register_health_checks(hy_conf_t *cf, proxy_loc_t *c)
{
    hy_str_t host = c->host_header;
    const proxy_hdr_t *h = c->headers->elts;
    for (size_t i = 0; i < c->headers->nelts; i++)
        if (hy_str_caseeq(h[i].name, "Host") && h[i].value.parts == NULL)
            host = h[i].value.value;
    hy_upstream_hc_conf_t *hc = c->health_checks->elts;
    for (size_t i = 0; i < c->health_checks->nelts; i++) {
        hc[i].group = c->url_cv ? NULL : c->group;
        hc[i].connect_timeout_ms = c->uc.connect_timeout;
        hc[i].send_timeout_ms = c->uc.send_timeout;
        hc[i].read_timeout_ms = c->uc.read_timeout;
        hc[i].host = host;
        hc[i].version = c->http_version;
        hc[i].ssl = c->is_tls ? &c->ssl : NULL;
        hc[i].ssl_host = c->host_header;
        if (hy_upstream_hc_add(cf, &hc[i]) != 0)
            return -1;
    }
    return 0;
}

static const hy_enum_t http_versions[] = {{"1.0", 10}, {"1.1", 11}, {"2", 20}, {NULL, 0}};

#define LOCS (HY_CTX_HTTP_ANY)
static const hy_directive_t proxy_directives[] = {
    {.name = "proxy_pass",
     .ctx = HY_CTX_LOC | HY_CTX_LIF | HY_CTX_LMT,
     .args = HY_ARGS_1,
     .set = set_pass,
     .conf = HY_CONF_LOC},
    {.name = "proxy_http_version",
     .ctx = LOCS,
     .args = HY_ARGS_1,
     .set = hy_slot_enum,
     .conf = HY_CONF_LOC,
     .offset = PL(http_version),
     .post = http_versions},
    {.name = "proxy_pass_trailers",
     .ctx = LOCS,
     .args = HY_ARGS_FLAG,
     .set = hy_slot_flag,
     .conf = HY_CONF_LOC,
     .offset = PL(pass_trailers)},
    {.name = "proxy_set_header", .ctx = LOCS, .args = HY_ARGS_2, .set = set_header, .conf = HY_CONF_LOC},
    {.name = "proxy_set_body",
     .ctx = LOCS,
     .args = HY_ARGS_1,
     .set = set_complex,
     .conf = HY_CONF_LOC,
     .offset = PL(set_body)},
    {.name = "proxy_method",
     .ctx = LOCS,
     .args = HY_ARGS_1,
     .set = set_complex,
     .conf = HY_CONF_LOC,
     .offset = PL(method)},
    {.name = "proxy_cookie_domain",
     .ctx = LOCS,
     .args = HY_ARGS_12,
     .set = set_cookie_rule,
     .conf = HY_CONF_LOC,
     .offset = PL(cookie_domains)},
    {.name = "proxy_cookie_path",
     .ctx = LOCS,
     .args = HY_ARGS_12,
     .set = set_cookie_rule,
     .conf = HY_CONF_LOC,
     .offset = PL(cookie_paths)},
    {.name = "proxy_cookie_flags", .ctx = LOCS, .args = HY_ARGS_1MORE, .set = hy_proxy__set_cookie_flags, .conf = HY_CONF_LOC},
    HY_UCONF_DIRECTIVES("proxy", proxy_loc_t, uc),
    {.name = "proxy_cache_convert_head",
     .ctx = HY_CTX_HTTP_ANY,
     .args = HY_ARGS_FLAG,
     .set = hy_slot_flag,
     .conf = HY_CONF_LOC,
     .offset = HY_UCACHE_OFF(proxy_loc_t, uc, convert_head)},
    HY_USSL_DIRECTIVES("proxy", proxy_loc_t, ssl),
    {.name = "proxy_redirect", .ctx = LOCS, .args = HY_ARGS_12, .set = set_redirect, .conf = HY_CONF_LOC},
    {.name = "health_check", .ctx = HY_CTX_LOC, .args = HY_ARGS_ANY, .set = set_health_check, .conf = HY_CONF_LOC},
    {0},
};

/* ---------------------------------------------------------------- levels */

static void *create_loc(hy_conf_t *cf)
{
    proxy_loc_t *pl = hy_pcalloc(cf->pool, sizeof(*pl));
    hy_uconf_init(&pl->uc);
    hy_ussl_init(&pl->ssl);
    pl->http_version = HY_UNSET;
    pl->pass_trailers = HY_UNSET;
    pl->redirect = HY_UNSET;
    return pl;
}

static const struct {
    const char *name, *value;
} default_headers[] = {
    {"Host", "$proxy_host"}, {"Connection", "close"}, {"TE", ""}, {"Keep-Alive", ""}, {"Expect", ""}, {"Upgrade", ""},
    /* with proxy_cache on (the list's end): the client's conditionals and ranges stay here; a revalidation sends
     * the stored validators */
    {"If-Modified-Since", "$upstream_cache_last_modified"}, {"If-Unmodified-Since", ""},
    {"If-None-Match", "$upstream_cache_etag"}, {"If-Match", ""}, {"Range", ""}, {"If-Range", ""},
};
#define N_PLAIN_HEADERS 6 /* default_headers without the cache's */

/* nginx's hidden response fields (proxy_hide_header adds, proxy_pass_header removes: upstream/uconf.c) */
static const char *const default_hidden[] = {"Date",
                                             "Server",
                                             "X-Pad",
                                             "X-Accel-Expires",
                                             "X-Accel-Redirect",
                                             "X-Accel-Limit-Rate",
                                             "X-Accel-Buffering",
                                             "X-Accel-Charset"};

static int merge_loc(hy_conf_t *cf, void *parent, void *child)
{
    proxy_loc_t *p = parent, *c = child;
    hy_http_loc_conf_t *lc = cf->loc_conf ? cf->loc_conf[hy_http_core_module.index] : NULL;
    if (lc && lc->match == HY_LOC_NONAME && c->url.ptr == NULL && c->url_cv == NULL) {
        /* an "if" or "limit_except" block without its own proxy_pass passes where its location does (nginx) */
        c->group = p->group, c->url_cv = p->url_cv, c->url = p->url, c->is_tls = p->is_tls;
        c->uri_part = p->uri_part, c->has_uri = p->has_uri, c->host_header = p->host_header;
        c->port_text = p->port_text, c->loc_prefix = p->loc_prefix;
    }
    hy_merge_value(c->http_version, p->http_version, 10);
    hy_merge_value(c->pass_trailers, p->pass_trailers, 0);
    if (hy_uconf_merge(cf, &c->uc, &p->uc, "proxy", default_hidden, HY_ARRAY_SIZE(default_hidden)) != 0)
        return -1;
    /* the context is made for a location passing to https://, or with variables (the scheme may be https) */
    if (hy_ussl_merge(cf, &c->ssl, &p->ssl, "proxy", c->is_tls || c->url_cv != NULL) != 0)
        return -1;
    if (c->set_body == NULL)
        c->set_body = p->set_body;
    if (c->method == NULL)
        c->method = p->method;
    if (c->cookie_domains == NULL)
        c->cookie_domains = p->cookie_domains;
    if (c->cookie_paths == NULL)
        c->cookie_paths = p->cookie_paths;
    if (c->cookie_flags == NULL)
        c->cookie_flags = p->cookie_flags;
    /* proxy_pass is not inherited, but a location without one keeps nothing from its parent either */
    if (c->redirect == HY_UNSET) {
        c->redirect = p->redirect == HY_UNSET ? 1 : p->redirect;
        if (c->redirect == 2)
            c->redirects = p->redirects;
    }
    if (c->redirect == 1 && c->url.ptr != NULL && c->url_cv == NULL) { /* default */
        c->redirects = hy_array_create(cf->pool, 1, sizeof(proxy_redirect_t));
        proxy_redirect_t *r = hy_array_push(c->redirects);
        char buf[2048];
        int l = c->has_uri ? snprintf(buf, sizeof(buf), "%.*s%.*s", (int)c->url.len, c->url.ptr, (int)c->uri_part.len,
                                      c->uri_part.ptr)
                           : snprintf(buf, sizeof(buf), "%.*s/", (int)c->url.len, c->url.ptr);
        r->from = (hy_complex_t){hy_str_dup(cf->pool, (hy_str_t){buf, (size_t)l}), NULL, 0};
        r->to = (hy_complex_t){c->has_uri ? c->loc_prefix : HY_STR("/"), NULL, 0};
    }
    /* proxy_set_header: the level's own list (or the inherited one) over nginx's defaults */
    if (c->set_headers == NULL)
        c->set_headers = p->set_headers;
    bool cache = hy_ucache_on(&c->uc.cache);
    if (c->set_headers == p->set_headers && p->headers != NULL && p->headers_cache == cache) {
        c->headers = p->headers;
        c->headers_cache = cache;
    } else {
        size_t own = c->set_headers ? c->set_headers->nelts : 0;
        size_t ndef = cache ? HY_ARRAY_SIZE(default_headers) : N_PLAIN_HEADERS;
        c->headers_cache = cache;
        c->headers = hy_array_create(cf->pool, own + HY_ARRAY_SIZE(default_headers), sizeof(proxy_hdr_t));
        for (size_t i = 0; i < own; i++)
            *(proxy_hdr_t *)hy_array_push(c->headers) = ((proxy_hdr_t *)c->set_headers->elts)[i];
        for (size_t i = 0; i < ndef; i++) {
            hy_str_t nm = {(char *)default_headers[i].name, strlen(default_headers[i].name)};
            bool set = false;
            for (size_t k = 0; k < own; k++)
                set |= hy_str_caseeq_str(((proxy_hdr_t *)c->set_headers->elts)[k].name, nm);
            if (set)
                continue;
            proxy_hdr_t *h = hy_array_push(c->headers);
            h->name = nm;
            if (hy_vars_compile(cf, (hy_str_t){(char *)default_headers[i].value, strlen(default_headers[i].value)},
                                &h->value) != 0)
                return -1;
        }
    }
    if (c->health_checks != NULL && register_health_checks(cf, c) != 0)
        return -1;
    return 0;
}

static int postconfiguration(hy_conf_t *cf)
{
    return hy_proxy__define_vars(cf);
}

hy_module_t hy_http_proxy_module = {
    .name = "http_proxy",
    .directives = proxy_directives,
    .create_loc_conf = create_loc,
    .merge_loc_conf = merge_loc,
    .postconfiguration = postconfiguration,
};
