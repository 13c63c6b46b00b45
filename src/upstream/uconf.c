/* uconf.c — the shared upstream location settings (see uconf.h): setters, inheritance, applying them to an
 * exchange, and the CGI-like response head (FastCGI, uwsgi, SCGI) with nginx's Status/Location rules. */
#include <stdio.h>
#include <string.h>
#include <arpa/inet.h>
#include "uconf.h"
#include "../core/log.h"
#include "../conf/cycle.h"
#include "../http/phases.h"
#include "../http/vars.h"

const hy_enum_t hy_uconf_next_upstream_names[] = {
    {"error", HY_UPS_FT_ERROR},
    {"timeout", HY_UPS_FT_TIMEOUT},
    {"invalid_header", HY_UPS_FT_INVALID_HEADER},
    {"http_500", HY_UPS_FT_500},
    {"http_502", HY_UPS_FT_502},
    {"http_503", HY_UPS_FT_503},
    {"http_504", HY_UPS_FT_504},
    {"http_403", HY_UPS_FT_403},
    {"http_404", HY_UPS_FT_404},
    {"http_429", HY_UPS_FT_429},
    {"non_idempotent", HY_UPS_FT_NON_IDEMPOTENT},
    {"off", HY_UPS_FT_OFF},
    {"updating", 0},
    {NULL, 0},
};

const hy_enum_t hy_uconf_ignore_names[] = {
    {"X-Accel-Redirect", HY_UIGN_XA_REDIRECT},
    {"X-Accel-Expires", HY_UIGN_XA_EXPIRES},
    {"X-Accel-Limit-Rate", HY_UIGN_XA_LIMIT_RATE},
    {"X-Accel-Buffering", HY_UIGN_XA_BUFFERING},
    {"X-Accel-Charset", HY_UIGN_XA_CHARSET},
    {"Expires", HY_UIGN_EXPIRES},
    {"Cache-Control", HY_UIGN_CACHE_CONTROL},
    {"Set-Cookie", HY_UIGN_SET_COOKIE},
    {"Vary", HY_UIGN_VARY},
    {NULL, 0},
};

/* ---------------------------------------------------------------- setters */

int hy_uconf_set_bufs(hy_conf_t *cf, const hy_directive_t *d, void *conf)
{
    hy_uconf_t *c = (hy_uconf_t *)((char *)conf + d->offset);
    size_t n;
    hy_str_t *a = hy_conf_args(cf, &n);
    if (c->bufs_num != HY_UNSET)
        return hy_conf_error(cf, "\"%s\" directive is duplicate", d->name);
    int64_t num = hy_parse_int(a[1].ptr, a[1].len), size = hy_parse_size(a[2].ptr, a[2].len);
    if (num <= 0 || size <= 0) /* nginx's bufs slot */
        return hy_conf_error(cf, "\"%s\" directive invalid value", d->name);
    c->bufs_num = num;
    c->bufs_size = size;
    return 0;
}

/* next_upstream, ignore_headers: names OR'ed ("off" alone clears next_upstream) */
int hy_uconf_set_mask(hy_conf_t *cf, const hy_directive_t *d, void *conf)
{
    int *slot = (int *)((char *)conf + d->offset);
    size_t n;
    hy_str_t *a = hy_conf_args(cf, &n);
    int mask = 0;
    for (size_t i = 1; i < n; i++) {
        const hy_enum_t *e = d->post;
        for (; e->name; e++)
            if (hy_str_caseeq(a[i], e->name))
                break;
        if (e->name == NULL)
            return hy_conf_error(cf, "invalid value \"%s\"", a[i].ptr);
        mask |= e->value;
    }
    if (*slot != HY_UNSET) /* a repeated directive adds its names (nginx's bitmask slot) */
        mask |= *slot;
    if (d->post == (const void *)hy_uconf_next_upstream_names && (mask & HY_UPS_FT_OFF))
        mask = HY_UPS_FT_OFF;
    *slot = mask;
    return 0;
}

int hy_uconf_set_names(hy_conf_t *cf, const hy_directive_t *d, void *conf)
{
    hy_array_t **slot = (hy_array_t **)((char *)conf + d->offset);
    size_t n;
    hy_str_t *a = hy_conf_args(cf, &n);
    if (*slot == NULL)
        *slot = hy_array_create(cf->pool, 4, sizeof(hy_str_t));
    *(hy_str_t *)hy_array_push(*slot) = hy_str_dup(cf->pool, a[1]);
    return 0;
}

/* *_temp_path path [level1 [level2 [level3]]]: as nginx's ngx_conf_set_path_slot, levels of at least one digit and
 * ten in all (the documentation speaks of 1 or 2) */
int hy_uconf_set_temp_path(hy_conf_t *cf, const hy_directive_t *d, void *conf)
{
    hy_uconf_t *c = (hy_uconf_t *)((char *)conf + d->offset - offsetof(hy_uconf_t, temp_path));
    size_t n;
    hy_str_t *a = hy_conf_args(cf, &n);
    if (c->temp_path.ptr != NULL)
        return hy_conf_error(cf, "\"%s\" directive is duplicate", d->name);
    int total = 0;
    for (size_t i = 2; i < n; i++) {
        int64_t v = hy_parse_int(a[i].ptr, a[i].len);
        if (v < 1 || v > 10 || (total += (int)v) > 10) /* the levels are digits of a 10-digit name */
            return hy_conf_error(cf, "invalid value \"%s\"", a[i].ptr);
        c->temp_levels[i - 2] = (int)v;
    }
    char *path = hy_cycle_path(cf->cycle, a[1].ptr, a[1].len);
    size_t len = strlen(path);
    while (len > 1 && path[len - 1] == '/')
        len--;
    c->temp_path = (hy_str_t){path, len};
    return 0;
}

int hy_uconf_parse_bind(hy_str_t v, struct sockaddr_storage *ss, socklen_t *len)
{
    char text[INET6_ADDRSTRLEN + 1];
    long port = 0;
    /* an optional port (nginx 1.11.2): "addr:port", "[v6]:port"; a bare IPv6 address has no brackets */
    hy_str_t ps = {NULL, 0};
    bool has_port = false;
    if (v.len && v.ptr[0] == '[') {
        const char *rb = memchr(v.ptr, ']', v.len);
        if (rb == NULL)
            return -1;
        const char *rest = rb + 1;
        size_t rl = (size_t)(v.ptr + v.len - rest);
        if (rl && rest[0] != ':')
            return -1;
        has_port = rl > 0;
        ps = has_port ? (hy_str_t){(char *)rest + 1, rl - 1} : ps;
        v = (hy_str_t){v.ptr + 1, (size_t)(rb - v.ptr - 1)};
    } else {
        const char *c = v.len ? memchr(v.ptr, ':', v.len) : NULL;
        if (c && memchr(c + 1, ':', (size_t)(v.ptr + v.len - c - 1)) == NULL) { /* one colon: IPv4 with a port */
            has_port = true;
            ps = (hy_str_t){(char *)c + 1, (size_t)(v.ptr + v.len - c - 1)};
            v.len = (size_t)(c - v.ptr);
        }
    }
    if (has_port && (ps.len == 0 || ps.len > 5))
        return -1;
    for (size_t i = 0; i < ps.len; i++) {
        if (ps.ptr[i] < '0' || ps.ptr[i] > '9')
            return -1;
        port = port * 10 + (ps.ptr[i] - '0');
    }
    if (port > 65535 || v.len == 0 || v.len >= sizeof(text))
        return -1;
    memcpy(text, v.ptr, v.len);
    text[v.len] = '\0';
    memset(ss, 0, sizeof(*ss));
    struct sockaddr_in *s4 = (struct sockaddr_in *)ss;
    struct sockaddr_in6 *s6 = (struct sockaddr_in6 *)ss;
    if (inet_pton(AF_INET, text, &s4->sin_addr) == 1) {
        s4->sin_family = AF_INET;
        s4->sin_port = htons((uint16_t)port);
        *len = sizeof(*s4);
    } else if (inet_pton(AF_INET6, text, &s6->sin6_addr) == 1) {
        s6->sin6_family = AF_INET6;
        s6->sin6_port = htons((uint16_t)port);
        *len = sizeof(*s6);
    } else {
        return -1;
    }
    return 0;
}

/* *_bind ADDRESS | off: variables allowed; a literal is checked now ("transparent" would need privileges hayate
 * does not take) */
int hy_uconf_set_bind(hy_conf_t *cf, const hy_directive_t *d, void *conf)
{
    hy_complex_t **slot = (hy_complex_t **)((char *)conf + d->offset);
    size_t n;
    hy_str_t *a = hy_conf_args(cf, &n);
    if (*slot != NULL)
        return hy_conf_error(cf, "\"%s\" directive is duplicate", d->name);
    if (n == 3 && !hy_str_eq(a[2], "transparent"))
        return hy_conf_error(cf, "invalid parameter \"%s\"", a[2].ptr);
    if (n == 3)
        return hy_conf_error(cf, "\"%s ... transparent\" is not supported by hayate yet", d->name);
    *slot = hy_pcalloc(cf->pool, sizeof(**slot));
    hy_str_t v = hy_str_eq(a[1], "off") ? HY_STR("") : a[1];
    if (v.len && memchr(v.ptr, '$', v.len) == NULL) {
        struct sockaddr_storage ss;
        socklen_t l;
        if (hy_uconf_parse_bind(v, &ss, &l) != 0)
            return hy_conf_error(cf, "invalid address \"%s\"", a[1].ptr);
    }
    return hy_vars_compile(cf, v, *slot);
}

/* *_store on | off | string */
int hy_uconf_set_store(hy_conf_t *cf, const hy_directive_t *d, void *conf)
{
    hy_uconf_t *c = (hy_uconf_t *)((char *)conf + d->offset);
    size_t n;
    hy_str_t *a = hy_conf_args(cf, &n);
    if (c->store != HY_UNSET)
        return hy_conf_error(cf, "\"%s\" directive is duplicate", d->name);
    if (hy_str_eq(a[1], "off") || hy_str_eq(a[1], "on")) {
        c->store = hy_str_eq(a[1], "on");
        return 0;
    }
    c->store = 2;
    c->store_path = hy_pcalloc(cf->pool, sizeof(*c->store_path));
    return hy_vars_compile(cf, a[1], c->store_path);
}

/* *_store_access user:rw group:r all:r (nginx's ngx_conf_set_access_slot: the user's rw unless given) */
int hy_uconf_set_store_access(hy_conf_t *cf, const hy_directive_t *d, void *conf)
{
    int *slot = (int *)((char *)conf + d->offset);
    size_t n;
    hy_str_t *a = hy_conf_args(cf, &n);
    if (*slot != HY_UNSET)
        return hy_conf_error(cf, "\"%s\" directive is duplicate", d->name);
    int mode = 0, user = 0600;
    for (size_t i = 1; i < n; i++) {
        const char *p = a[i].ptr, *end = a[i].ptr + a[i].len;
        int shift;
        if (a[i].len >= 5 && memcmp(p, "user:", 5) == 0) {
            shift = 6, p += 5, user = 0;
        } else if (a[i].len >= 6 && memcmp(p, "group:", 6) == 0) {
            shift = 3, p += 6;
        } else if (a[i].len >= 4 && memcmp(p, "all:", 4) == 0) {
            shift = 0, p += 4;
        } else {
            return hy_conf_error(cf, "invalid value \"%s\"", a[i].ptr);
        }
        int right = 0;
        for (; p < end; p++) {
            if (*p == 'r')
                right |= 4;
            else if (*p == 'w')
                right |= 2;
            else
                return hy_conf_error(cf, "invalid value \"%s\"", a[i].ptr);
        }
        mode |= right << shift;
    }
    *slot = mode | user;
    return 0;
}

int hy_uconf_bind(const hy_uconf_t *c, hy_ureq_t *u)
{
    return hy_uconf_bind_value(c->bind, u);
}

int hy_uconf_bind_value(const hy_complex_t *bind, hy_ureq_t *u)
{
    if (bind == NULL)
        return 0;
    hy_str_t b;
    hy_vars_eval(u->req, bind, &b);
    if (b.len && hy_uconf_parse_bind(b, &u->bind, &u->bind_len) != 0) { /* nginx: logged, connects unbound */
        hy_req_log(u->req, HY_LOG_ERR, "invalid local address \"%.*s\"", (int)b.len, b.ptr);
        u->bind_len = 0;
    }
    return 0;
}

int hy_uconf_set_limit_rate(hy_conf_t *cf, const hy_directive_t *d, void *conf)
{
    hy_uconf_t *c = (hy_uconf_t *)((char *)conf + d->offset - offsetof(hy_uconf_t, limit_rate));
    size_t n;
    hy_str_t *a = hy_conf_args(cf, &n);
    if (memchr(a[1].ptr, '$', a[1].len) == NULL)
        return hy_slot_size(cf, d, conf);
    if (c->limit_rate != HY_UNSET_SIZE)
        return hy_conf_error(cf, "\"%s\" directive is duplicate", d->name);
    c->limit_rate = 0;
    c->limit_rate_cv = hy_pcalloc(cf->pool, sizeof(*c->limit_rate_cv));
    return hy_vars_compile(cf, a[1], c->limit_rate_cv);
}

/* ---------------------------------------------------------------- levels */

void hy_uconf_init(hy_uconf_t *c)
{
    memset(c, 0, sizeof(*c));
    c->connect_timeout = c->send_timeout = c->read_timeout = HY_UNSET_MSEC;
    c->buffering = c->request_buffering = c->intercept_errors = c->socket_keepalive = HY_UNSET;
    c->pass_request_headers = c->pass_request_body = HY_UNSET;
    c->buffer_size = c->limit_rate = HY_UNSET_SIZE;
    c->bufs_num = c->bufs_size = HY_UNSET;
    c->next_upstream = c->ignore_headers = HY_UNSET;
    c->next_tries = c->next_timeout = HY_UNSET;
    c->ignore_client_abort = HY_UNSET;
    c->max_temp_file_size = c->temp_file_write_size = c->temp_file_write_size_conf = HY_UNSET_SIZE;
    c->store = c->store_access = HY_UNSET;
    hy_ucache_conf_init(&c->cache);
}

static bool list_has(const hy_array_t *a, hy_str_t name)
{
    if (a == NULL)
        return false;
    const hy_str_t *s = a->elts;
    for (size_t i = 0; i < a->nelts; i++)
        if (s[i].len == name.len && hy_mem_caseeq(s[i].ptr, name.ptr, name.len))
            return true;
    return false;
}

int hy_uconf_merge(hy_conf_t *cf, hy_uconf_t *c, const hy_uconf_t *p, const char *module, const char *const *hidden,
                   size_t nhidden)
{
    if (hy_ucache_conf_merge(cf, &c->cache, &p->cache, module) != 0)
        return -1;
    hy_merge_value(c->connect_timeout, p->connect_timeout, 60000);
    hy_merge_value(c->send_timeout, p->send_timeout, 60000);
    hy_merge_value(c->read_timeout, p->read_timeout, 60000);
    hy_merge_value(c->buffering, p->buffering, 1);
    hy_merge_value(c->request_buffering, p->request_buffering, 1);
    hy_merge_value(c->intercept_errors, p->intercept_errors, 0);
    hy_merge_value(c->socket_keepalive, p->socket_keepalive, 0);
    hy_merge_value(c->pass_request_headers, p->pass_request_headers, 1);
    hy_merge_value(c->pass_request_body, p->pass_request_body, 1);
    hy_merge_value(c->buffer_size, p->buffer_size, 4096);
    if (c->limit_rate == HY_UNSET_SIZE)
        c->limit_rate_cv = p->limit_rate_cv;
    hy_merge_value(c->limit_rate, p->limit_rate, 0);
    if (c->bufs_num == HY_UNSET) {
        c->bufs_num = p->bufs_num == HY_UNSET ? 8 : p->bufs_num;
        c->bufs_size = p->bufs_num == HY_UNSET ? 4096 : p->bufs_size;
    }
    if (c->bufs_num < 2)
        return hy_conf_error(cf, "there must be at least 2 \"%s_buffers\"", module);
    hy_merge_value(c->ignore_client_abort, p->ignore_client_abort, 0);
    if (c->temp_path.ptr == NULL) {
        if (p->temp_path.ptr != NULL) {
            c->temp_path = p->temp_path;
            memcpy(c->temp_levels, p->temp_levels, sizeof(c->temp_levels));
        } else { /* nginx's default: <prefix>proxy_temp, fastcgi_temp, uwsgi_temp, scgi_temp */
            char name[32];
            int l = snprintf(name, sizeof(name), "%s_temp", module);
            char *d = hy_cycle_path(cf->cycle, name, (size_t)l);
            c->temp_path = (hy_str_t){d, strlen(d)};
        }
    }
    /* nginx's checks against the larger of one buffer and buffer_size */
    int64_t one = c->buffer_size > c->bufs_size ? c->buffer_size : c->bufs_size;
    /* as nginx: what was written is inherited, the default is computed at each level from its own buffers */
    if (c->temp_file_write_size_conf == HY_UNSET_SIZE)
        c->temp_file_write_size_conf = c->temp_file_write_size != HY_UNSET_SIZE ? c->temp_file_write_size
                                                                                : p->temp_file_write_size_conf;
    c->temp_file_write_size = c->temp_file_write_size_conf != HY_UNSET_SIZE ? c->temp_file_write_size_conf : 2 * one;
    if (c->temp_file_write_size < one)
        return hy_conf_error(cf,
                             "\"%s_temp_file_write_size\" must be equal to or greater than the maximum of the value "
                             "of \"%s_buffer_size\" and one of the \"%s_buffers\"",
                             module, module, module);
    hy_merge_value(c->max_temp_file_size, p->max_temp_file_size, 1024 * 1024 * 1024);
    if (c->max_temp_file_size != 0 && c->max_temp_file_size < one)
        return hy_conf_error(cf,
                             "\"%s_max_temp_file_size\" must be equal to zero to disable temporary files usage or "
                             "must be equal to or greater than the maximum of the value of \"%s_buffer_size\" and "
                             "one of the \"%s_buffers\"",
                             module, module, module);
    if (c->store == HY_UNSET) {
        c->store = p->store == HY_UNSET ? 0 : p->store;
        c->store_path = p->store_path;
    }
    hy_merge_value(c->store_access, p->store_access, 0600);
    hy_merge_value(c->next_upstream, p->next_upstream, HY_UPS_FT_ERROR | HY_UPS_FT_TIMEOUT);
    if (c->next_upstream & HY_UPS_FT_OFF)
        c->next_upstream = 0;
    hy_merge_value(c->next_tries, p->next_tries, 0);
    hy_merge_value(c->next_timeout, p->next_timeout, 0);
    hy_merge_value(c->ignore_headers, p->ignore_headers, 0);
    c->cache.ignore_headers = c->ignore_headers;
    if (c->bind == NULL)
        c->bind = p->bind;
    if (c->hide_names == NULL)
        c->hide_names = p->hide_names;
    if (c->pass_names == NULL)
        c->pass_names = p->pass_names;
    if (c->hide_names == p->hide_names && c->pass_names == p->pass_names && p->hide != NULL) {
        c->hide = p->hide;
        c->hide_lens = p->hide_lens;
        c->hide_date = p->hide_date;
        c->hide_server = p->hide_server;
        return 0;
    }
    c->hide = hy_array_create(cf->pool, nhidden + 2, sizeof(hy_str_t));
    for (size_t i = 0; i < nhidden; i++) {
        hy_str_t nm = {(char *)hidden[i], strlen(hidden[i])};
        if (!list_has(c->pass_names, nm))
            *(hy_str_t *)hy_array_push(c->hide) = nm;
    }
    if (c->hide_names)
        for (size_t i = 0; i < c->hide_names->nelts; i++)
            *(hy_str_t *)hy_array_push(c->hide) = ((hy_str_t *)c->hide_names->elts)[i];
    c->hide_lens = 0;
    for (size_t i = 0; i < c->hide->nelts; i++)
        c->hide_lens |= (uint64_t)1 << (((hy_str_t *)c->hide->elts)[i].len % 64);
    c->hide_date = hy_uconf_hidden(c, HY_STR("Date"));
    c->hide_server = hy_uconf_hidden(c, HY_STR("Server"));
    return 0;
}

void hy_uconf_apply(const hy_uconf_t *c, hy_ureq_t *u)
{
    u->connect_timeout_ms = c->connect_timeout;
    u->send_timeout_ms = c->send_timeout;
    u->read_timeout_ms = c->read_timeout;
    u->buffer_size = c->buffer_size;
    u->buffers_total = c->bufs_num * c->bufs_size;
    u->buffering = c->buffering;
    u->request_buffering = c->request_buffering;
    u->pass_body = c->pass_request_body;
    u->intercept_errors = c->intercept_errors;
    u->socket_keepalive = c->socket_keepalive;
    u->limit_rate = c->limit_rate;
    u->limit_rate_cv = c->limit_rate_cv;
    u->next_upstream = c->next_upstream;
    u->next_upstream_tries = c->next_tries;
    u->next_upstream_timeout_ms = c->next_timeout;
    u->ignore_client_abort = c->ignore_client_abort;
    u->temp_path = c->temp_path;
    u->temp_levels = c->temp_levels;
    u->max_temp_file_size = c->max_temp_file_size;
    u->temp_file_write_size = c->temp_file_write_size;
    u->store = c->store;
    u->store_path = c->store_path;
    u->store_access = c->store_access;
    u->cache_conf = hy_ucache_on(&c->cache) || c->cache.force_ranges == 1 ? &c->cache : NULL;
}

/* A hop-by-hop field or the framing, never passed on; by length first (every response field comes through here). */
static bool is_hop(hy_str_t n)
{
    switch (n.len) {
    case 2:
        return hy_mem_caseeq(n.ptr, "TE", 2);
    case 7:
        return hy_mem_caseeq(n.ptr, "Trailer", 7);
    case 10:
        return hy_mem_caseeq(n.ptr, "Connection", 10) || hy_mem_caseeq(n.ptr, "Keep-Alive", 10);
    case 14:
        return hy_mem_caseeq(n.ptr, "Content-Length", 14);
    case 16:
        return hy_mem_caseeq(n.ptr, "Proxy-Connection", 16);
    case 17:
        return hy_mem_caseeq(n.ptr, "Transfer-Encoding", 17);
    default:
        return false;
    }
}

bool hy_uconf_hidden(const hy_uconf_t *c, hy_str_t name)
{
    return is_hop(name) || ((c->hide_lens >> (name.len % 64) & 1) && list_has(c->hide, name));
}

/* ---------------------------------------------------------------- the CGI-like response head */

size_t hy_uconf_cgi_head_end(const char *p, size_t n)
{
    if (n == 0)
        return 0;
    if (n >= 1 && p[0] == '\n')
        return 1;
    if (n >= 2 && p[0] == '\r' && p[1] == '\n')
        return 2;
    const char *end = p + n;
    for (const char *q = p; (q = memchr(q, '\n', (size_t)(end - q))) != NULL; q++) {
        if (q + 1 < end && q[1] == '\n')
            return (size_t)(q + 2 - p);
        if (q + 2 < end && q[1] == '\r' && q[2] == '\n')
            return (size_t)(q + 3 - p);
    }
    return 0;
}

static int three_digits(const char *p, size_t n)
{
    if (n < 3 || p[0] < '1' || p[0] > '9' || p[1] < '0' || p[1] > '9' || p[2] < '0' || p[2] > '9' ||
        (n > 3 && p[3] != ' '))
        return -1;
    return (p[0] - '0') * 100 + (p[1] - '0') * 10 + (p[2] - '0');
}

int hy_uconf_parse_cgi_head(hy_ureq_t *u, char *p, size_t n)
{
    char *end = p + n, *q = p;
    u->status = 0;
    u->status_line = HY_STR_NULL;
    u->resp_length = -1;
    u->headers_in = hy_array_create(u->req->pool, 16, sizeof(hy_header_t));
    if (n > 9 && memcmp(p, "HTTP/", 5) == 0) { /* a status line (uwsgi apps, nph-style SCGI apps) */
        char *nl = memchr(p, '\n', n), *le = nl > p && nl[-1] == '\r' ? nl - 1 : nl;
        char *sp = memchr(p, ' ', (size_t)(le - p));
        if (sp == NULL || (u->status = three_digits(sp + 1, (size_t)(le - sp - 1))) < 0)
            return -1;
        char *r = sp + 4;
        while (r < le && *r == ' ')
            r++;
        u->status_line = (hy_str_t){r, (size_t)(le - r)};
        q = nl + 1;
    }
    bool location = false;
    while (q < end) {
        hy_str_t name, value;
        int f = hy_upstream_field(&q, end, false, &name, &value);
        if (f < 0)
            return -1;
        if (f == 0)
            break;
        if (hy_str_caseeq(name, "Status")) {
            int s = three_digits(value.ptr, value.len);
            if (s < 0)
                return -1;
            u->status = s;
            u->status_line = value.len > 4 ? (hy_str_t){value.ptr + 4, value.len - 4} : HY_STR_NULL;
            continue;
        }
        if (hy_str_caseeq(name, "Location"))
            location = true;
        if (hy_str_caseeq(name, "Content-Length")) {
            int64_t x = hy_parse_int(value.ptr, value.len);
            if (x < 0)
                return -1;
            u->resp_length = x;
        }
        *(hy_header_t *)hy_array_push(u->headers_in) = (hy_header_t){name, value};
    }
    if (u->status == 0) /* nginx: a Location without Status is a 302 (no CGI local redirect) */
        u->status = location ? 302 : 200;
    return 0;
}

void hy_uconf_head_status(hy_ureq_t *u)
{
    hy_req_t *req = u->req;
    req->status = u->status;
    const hy_uconf_t *c = u->data; /* the module's location settings begin with their hy_uconf_t */
    req->no_own_date = !c->hide_date;
    req->no_own_server = !c->hide_server;
    if (u->status_line.len) {
        char *p = hy_palloc(req->pool, u->status_line.len + 5);
        p[0] = (char)('0' + u->status / 100), p[1] = (char)('0' + u->status / 10 % 10);
        p[2] = (char)('0' + u->status % 10), p[3] = ' ';
        memcpy(p + 4, u->status_line.ptr, u->status_line.len);
        req->status_line = (hy_str_t){p, u->status_line.len + 4};
    } else if (hy_http_reason(u->status) == NULL) {
        char *p = hy_palloc(req->pool, 4);
        p[0] = (char)('0' + u->status / 100), p[1] = (char)('0' + u->status / 10 % 10);
        p[2] = (char)('0' + u->status % 10);
        req->status_line = (hy_str_t){p, 3};
    }
}

void hy_uconf_accel_field(hy_ureq_t *u, const hy_uconf_t *c, hy_str_t nm, hy_str_t v, hy_str_t *redirect)
{
    if (nm.len < 15 || (nm.ptr[0] | 0x20) != 'x') /* not one of the X-Accel-* fields below: most fields */
        return;
    hy_req_t *req = u->req;
    if (!(c->ignore_headers & HY_UIGN_XA_BUFFERING) && hy_str_caseeq(nm, "X-Accel-Buffering")) {
        if (hy_str_caseeq(v, "no"))
            u->buffering = false;
        else if (hy_str_caseeq(v, "yes"))
            u->buffering = true;
    } else if (!(c->ignore_headers & HY_UIGN_XA_REDIRECT) && hy_str_caseeq(nm, "X-Accel-Redirect")) {
        *redirect = v;
    } else if (!(c->ignore_headers & HY_UIGN_XA_LIMIT_RATE) && hy_str_caseeq(nm, "X-Accel-Limit-Rate")) {
        int64_t r = hy_parse_int(v.ptr, v.len);
        if (r >= 0) {
            req->limit_rate = r;
            req->limit_rate_set = true;
        } else if (!hy_str_caseeq(v, "off")) {
            hy_req_log(req, HY_LOG_ERR, "upstream sent invalid \"X-Accel-Limit-Rate\" header");
        }
    } else if (!(c->ignore_headers & HY_UIGN_XA_CHARSET) && hy_str_caseeq(nm, "X-Accel-Charset")) {
        if (req->override_charset.ptr == NULL) /* the first one (nginx) */
            req->override_charset = v;
    }
}

/* nginx's ngx_http_parse_unsafe_uri for an X-Accel-Redirect target: the args split off at '?', the path
 * percent-decoded when it has escapes; refused (false) when empty, holding a NUL, or with a ".." segment. */
static bool safe_target(hy_req_t *req, hy_str_t *path, hy_str_t *args)
{
    hy_req_split_args(*path, path, args);
    if (memchr(path->ptr, '%', path->len)) {
        char *d = hy_palloc(req->pool, path->len + 1), *o = d;
        for (size_t i = 0; i < path->len; i++) {
            int hi, lo;
            if (path->ptr[i] == '%' && i + 2 < path->len && (hi = hy_hex_digit(path->ptr[i + 1])) >= 0 &&
                (lo = hy_hex_digit(path->ptr[i + 2])) >= 0) {
                *o++ = (char)(hi * 16 + lo);
                i += 2;
            } else {
                *o++ = path->ptr[i];
            }
        }
        *path = (hy_str_t){d, (size_t)(o - d)};
    }
    if (path->len == 0 || memchr(path->ptr, '\0', path->len))
        return false;
    for (size_t i = 0; i < path->len;) { /* each segment between '/' */
        size_t j = i;
        while (j < path->len && path->ptr[j] != '/')
            j++;
        if (j - i == 2 && path->ptr[i] == '.' && path->ptr[i + 1] == '.')
            return false;
        i = j + 1;
    }
    return true;
}

/* The fields an X-Accel-Redirect keeps from the upstream's response (nginx: Content-Type, Set-Cookie,
 * Content-Disposition, Cache-Control, Expires, Accept-Ranges), whatever *_hide_header says. */
static void keep_redirect_fields(hy_ureq_t *u)
{
    hy_req_t *req = u->req;
    const hy_header_t *h = u->headers_in->elts;
    for (size_t i = 0; i < u->headers_in->nelts; i++) {
        hy_str_t nm = h[i].name;
        if (hy_str_caseeq(nm, "Content-Type"))
            req->content_type = h[i].value;
        else if (hy_str_caseeq(nm, "Set-Cookie") || hy_str_caseeq(nm, "Content-Disposition") ||
                 hy_str_caseeq(nm, "Cache-Control") || hy_str_caseeq(nm, "Expires") ||
                 hy_str_caseeq(nm, "Accept-Ranges"))
            hy_req_add_header(req, nm, h[i].value);
    }
}

int hy_uconf_accel_redirect(hy_ureq_t *u, hy_str_t accel_redirect)
{
    hy_req_t *req = u->req;
    hy_str_t uri = hy_str_dup(req->pool, accel_redirect);
    req->no_own_date = req->no_own_server = false;
    req->headers_out = NULL;
    req->content_type = HY_STR_NULL;
    req->location = HY_STR_NULL;
    req->status_line = HY_STR_NULL;
    req->etag = HY_STR_NULL;
    req->last_modified = -1;
    req->content_length_n = -1;
    keep_redirect_fields(u);
    req->redirect_keeps_head = true;
    if (uri.ptr[0] == '@') { /* nginx: a named location keeps the method; a URI redirect is a GET (or HEAD) */
        hy_req_named_redirect(req, uri);
    } else {
        hy_str_t path = uri, args;
        if (!safe_target(req, &path, &args)) {
            hy_req_log(req, HY_LOG_ERR, "unsafe URI \"%.*s\" was detected", (int)uri.len, uri.ptr);
            req->redirect_keeps_head = false;
            hy_req_error(req, 404);
            return -1;
        }
        if (req->method_id != HY_M_HEAD) {
            req->method_id = HY_M_GET;
            req->method = HY_STR("GET");
        }
        hy_req_internal_redirect(req, path, args);
    }
    return -1;
}

int hy_uconf_on_head(hy_ureq_t *u)
{
    hy_req_t *req = u->req;
    const hy_uconf_t *c = u->data;
    hy_uconf_head_status(u);
    req->content_type = HY_STR_NULL;
    req->content_length_n = u->resp_length;
    req->last_modified = -1;
    hy_header_t *h = u->headers_in->elts;
    hy_str_t accel_redirect = HY_STR_NULL;
    for (size_t i = 0; i < u->headers_in->nelts; i++) {
        hy_str_t nm = h[i].name, v = h[i].value;
        hy_uconf_accel_field(u, c, nm, v, &accel_redirect);
        if (hy_uconf_hidden(c, nm))
            continue;
        if (hy_str_caseeq(nm, "Content-Type"))
            req->content_type = v;
        else if (hy_str_caseeq(nm, "ETag") && req->etag.len == 0)
            req->etag = v;
        else if (hy_str_caseeq(nm, "Location") && req->location.len == 0)
            req->location = v;
        else
            hy_req_add_header(req, nm, v);
    }
    if (accel_redirect.len) /* nginx honours it whatever the status */
        return hy_uconf_accel_redirect(u, accel_redirect);
    return 0;
}
