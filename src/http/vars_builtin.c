/* vars_builtin.c — nginx's built-in variables ($uri, $remote_addr, $status, ...) and the $arg_/$http_/
 * $sent_http_/$cookie_ prefixes: their getters with nginx's exact formats, and the tables the registry in
 * vars.c looks names up in. */
#include <errno.h>
#include <string.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>
#include <unistd.h>
#include <limits.h>
#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/random.h>
#include <sys/un.h>
#include "vars_builtin.h"
#include "../core/log.h"
#include "../core/htpasswd.h"
#include "body.h"
#include "../conf/cycle.h"
#include "../core/clock.h"
#include "../core/httpdate.h"
#include "../core/log.h"
#include "../event/sock.h"

/* ---------------------------------------------------------------- time caches */

static int64_t tl_sec = -1, iso_sec = -1;
static char tl_buf[32], iso_buf[96];

static int (*evaluator)(hy_req_t *req, const hy_complex_t *cv, hy_str_t *out);

void hy_vars__set_evaluator(int (*eval)(hy_req_t *req, const hy_complex_t *cv, hy_str_t *out))
{
    evaluator = eval;
}

const char *hy_vars_time_local(void)
{
    int64_t now = hy_clock_time();
    if (now != tl_sec) {
        hy_timelocal_format(now, tl_buf);
        tl_sec = now;
    }
    return tl_buf;
}

const char *hy_vars_time_iso8601(void)
{
    int64_t now = hy_clock_time();
    if (now != iso_sec) {
        time_t t = (time_t)now;
        struct tm tm;
        localtime_r(&t, &tm);
        int off = (int)(tm.tm_gmtoff / 60) % (24 * 60);
        char sign = off < 0 ? '-' : '+';
        if (off < 0)
            off = -off;
        snprintf(iso_buf, sizeof(iso_buf), "%04d-%02d-%02dT%02d:%02d:%02d%c%02d:%02d", tm.tm_year + 1900,
                 tm.tm_mon + 1, tm.tm_mday, tm.tm_hour, tm.tm_min, tm.tm_sec, sign, off / 60, off % 60);
        iso_sec = now;
    }
    return iso_buf;
}

/* ---------------------------------------------------------------- helpers for getters */

static inline void set_val(hy_var_value_t *v, const char *p, size_t n)
{
    v->ptr = (char *)p;
    v->len = n;
    v->not_found = false;
}

static inline void set_str(hy_var_value_t *v, hy_str_t s)
{
    set_val(v, s.ptr ? s.ptr : "", s.len);
}

static inline void not_found(hy_var_value_t *v)
{
    v->ptr = "";
    v->len = 0;
    v->not_found = true;
}

static void set_int(hy_req_t *req, hy_var_value_t *v, int64_t n)
{
    char *p = hy_palloc(req->pool, 24);
    size_t len = 0;
    if (n < 0)
        p[len++] = '-';
    len += hy_fmt_u64(p + len, n < 0 ? 0 - (uint64_t)n : (uint64_t)n);
    set_val(v, p, len);
}

static void set_msec(hy_req_t *req, hy_var_value_t *v, int64_t ms)
{
    char *p = hy_palloc(req->pool, 32);
    int len = snprintf(p, 32, "%lld.%03lld", (long long)(ms / 1000), (long long)(ms % 1000));
    set_val(v, p, (size_t)len);
}

static const hy_str_t *first_header(hy_req_t *req, const char *name)
{
    for (size_t i = 0; i < req->num_headers; i++)
        if (hy_str_caseeq(req->headers[i].name, name))
            return &req->headers[i].value;
    return NULL;
}

static hy_http_loc_conf_t *req_loc(hy_req_t *req)
{
    return req->loc ? req->loc : req->srv ? req->srv->loc : NULL;
}

/* cscf->server_name: the first name as configured ("" without server_name) */
static hy_str_t server_name(hy_req_t *req)
{
    if (req->srv == NULL || req->srv->server_names == NULL || req->srv->server_names->nelts == 0)
        return HY_STR("");
    hy_server_name_t *sn = req->srv->server_names->elts;
    if (sn[0].kind == 0 || sn[0].kind == 3)
        return sn[0].name;
    char *p = hy_palloc(req->pool, sn[0].name.len + 2);
    if (sn[0].kind == 1) {
        p[0] = '*';
        memcpy(p + 1, sn[0].name.ptr, sn[0].name.len);
    } else {
        memcpy(p, sn[0].name.ptr, sn[0].name.len);
        p[sn[0].name.len] = '*';
    }
    return (hy_str_t){p, sn[0].name.len + 1};
}

/* ---------------------------------------------------------------- builtin getters */

enum {
    F_REQUEST = 1, F_METHOD, F_REQUEST_URI, F_URI, F_ARGS, F_PROTOCOL,
};

static void get_field(hy_req_t *req, hy_var_value_t *v, uintptr_t data)
{
    switch (data) {
    case F_REQUEST:
        if (req->request_line.len)
            set_str(v, req->request_line);
        else
            not_found(v);
        return;
    case F_METHOD:
        if (req->method.len)
            set_str(v, req->method);
        else
            not_found(v);
        return;
    case F_REQUEST_URI:
        if (req->target.ptr)
            set_str(v, req->target);
        else
            not_found(v);
        return;
    case F_URI:
        if (req->uri.ptr)
            set_str(v, req->uri);
        else
            not_found(v);
        return;
    case F_ARGS:
        if (req->args.len) /* "/x?" has no args for nginx either */
            set_str(v, req->args);
        else
            not_found(v);
        return;
    case F_PROTOCOL:
        if (req->request_line.len == 0 && req->method.len == 0)
            not_found(v);
        else
            set_val(v, req->version == 20 ? "HTTP/2.0" : req->version == 10 ? "HTTP/1.0" : "HTTP/1.1", 8);
        return;
    }
    not_found(v);
}

static void get_const(hy_req_t *req, hy_var_value_t *v, uintptr_t data)
{
    const char *s = (const char *)data;
    set_val(v, s, strlen(s));
}

static void get_not_found(hy_req_t *req, hy_var_value_t *v, uintptr_t data)
{
    not_found(v);
}

static void get_is_args(hy_req_t *req, hy_var_value_t *v, uintptr_t data)
{
    set_val(v, "?", req->args.len ? 1 : 0);
}

static void get_remote_addr(hy_req_t *req, hy_var_value_t *v, uintptr_t data)
{
    const char *t = hy_req_peer_text(req);
    set_val(v, t, strlen(t));
}

static void get_remote_port(hy_req_t *req, hy_var_value_t *v, uintptr_t data)
{
    const struct sockaddr_storage *ss = hy_req_peer(req);
    unsigned port = ss->ss_family == AF_INET    ? ntohs(((const struct sockaddr_in *)ss)->sin_port)
                    : ss->ss_family == AF_INET6 ? ntohs(((const struct sockaddr_in6 *)ss)->sin6_port)
                                                : 0;
    if (port) /* 0: a unix socket, or realip's address came without a port (nginx prints nothing) */
        set_int(req, v, port);
    else
        set_val(v, "", 0);
}

static void get_binary_remote_addr(hy_req_t *req, hy_var_value_t *v, uintptr_t data)
{
    const struct sockaddr_storage *ss = hy_req_peer(req);
    if (ss->ss_family == AF_INET)
        set_val(v, (const char *)&((const struct sockaddr_in *)ss)->sin_addr, 4);
    else if (ss->ss_family == AF_INET6)
        set_val(v, (const char *)&((const struct sockaddr_in6 *)ss)->sin6_addr, 16);
    else
        set_val(v, "unix:", 5); /* nginx: the address text of a unix-socket client */
}

/* $proxy_protocol_addr/_port (data 0) and _server_addr/_server_port (data 1): not found without a header or
 * without addresses in it (v1 UNKNOWN, v2 LOCAL) */
static void get_pp_addr(hy_req_t *req, hy_var_value_t *v, uintptr_t data)
{
    const hy_conn_pp_t *p = req->conn->pp;
    if (p == NULL || !p->pp.has_addrs)
        return not_found(v);
    const char *t = data ? p->pp.dst_text : p->pp.src_text;
    set_val(v, t, strlen(t));
}

static void get_pp_port(hy_req_t *req, hy_var_value_t *v, uintptr_t data)
{
    const hy_conn_pp_t *p = req->conn->pp;
    if (p == NULL || !p->pp.has_addrs)
        return not_found(v);
    set_int(req, v, data ? p->pp.dst_port : p->pp.src_port);
}

/* $proxy_protocol_tlv_NAME (event/proxy_protocol.h names them); nginx's errors are logged, the value not found */
static void get_pp_tlv(hy_req_t *req, hy_var_value_t *v, uintptr_t data)
{
    const hy_conn_pp_t *p = req->conn->pp;
    if (p == NULL)
        return not_found(v);
    hy_str_t val;
    const char *err;
    char *vb = hy_palloc(req->pool, 11);
    const hy_str_t *name = (const hy_str_t *)data;
    int rc = hy_pp_tlv_get(p->pp.tlvs, p->pp.tlvs_len, *name, &val, vb, &err);
    if (rc < 0)
        hy_req_log(req, HY_LOG_ERR, "%s \"%.*s\"", err, (int)name->len, name->ptr);
    if (rc <= 0)
        return not_found(v);
    set_val(v, val.ptr, val.len);
}

static void get_server_addr(hy_req_t *req, hy_var_value_t *v, uintptr_t data)
{
    const struct sockaddr_storage *local = hy_conn_local_addr(req->conn, NULL);
    if (local == NULL) {
        not_found(v);
        return;
    }
    struct sockaddr_storage ss = *local;
    size_t cap = INET6_ADDRSTRLEN + sizeof(((struct sockaddr_un *)0)->sun_path) + 5;
    char *p = hy_palloc(req->pool, cap);
    if (ss.ss_family == AF_INET)
        hy_inet_ntop(AF_INET, &((struct sockaddr_in *)&ss)->sin_addr, p, INET6_ADDRSTRLEN);
    else if (ss.ss_family == AF_INET6)
        hy_inet_ntop(AF_INET6, &((struct sockaddr_in6 *)&ss)->sin6_addr, p, INET6_ADDRSTRLEN);
    else /* nginx: the listening socket's path */
        snprintf(p, cap, "unix:%.*s", (int)sizeof(((struct sockaddr_un *)0)->sun_path),
                 ((struct sockaddr_un *)&ss)->sun_path);
    set_val(v, p, strlen(p));
}

static void get_server_port(hy_req_t *req, hy_var_value_t *v, uintptr_t data)
{
    if (req->conn->local_port == 0) /* a unix socket: nginx's value is empty */
        set_val(v, "", 0);
    else
        set_int(req, v, req->conn->local_port);
}

static void get_remote_user(hy_req_t *req, hy_var_value_t *v, uintptr_t data)
{
    const hy_str_t *h = first_header(req, "authorization");
    const char *user, *password;
    size_t ulen;
    char *out = h ? hy_palloc(req->pool, h->len + 1) : NULL;
    if (h == NULL || !hy_htpasswd_basic(h->ptr, h->len, out, &user, &ulen, &password)) {
        not_found(v);
        return;
    }
    set_val(v, user, ulen);
}

static void get_time_local(hy_req_t *req, hy_var_value_t *v, uintptr_t data)
{
    set_val(v, hy_vars_time_local(), HY_TIMELOCAL_LEN);
}

static void get_time_iso8601(hy_req_t *req, hy_var_value_t *v, uintptr_t data)
{
    const char *s = hy_vars_time_iso8601();
    set_val(v, s, strlen(s));
}

static const char *(*date_format)(hy_req_t *req, char *buf, size_t size);

void hy_vars_set_date_format(const char *(*fmt)(hy_req_t *req, char *buf, size_t size))
{
    date_format = fmt;
}

static void get_date(hy_req_t *req, hy_var_value_t *v, uintptr_t gmt)
{
    char fbuf[256];
    const char *fmt = date_format ? date_format(req, fbuf, sizeof(fbuf)) : NULL;
    if (fmt == NULL)
        fmt = "%A, %d-%b-%Y %H:%M:%S %Z";
    time_t t = (time_t)hy_clock_time();
    struct tm tm;
    if (gmt)
        gmtime_r(&t, &tm);
    else
        localtime_r(&t, &tm);
    char *buf = hy_palloc(req->pool, 256);
    size_t n = strftime(buf, 256, fmt, &tm);
    set_val(v, buf, n);
}

static void get_msec(hy_req_t *req, hy_var_value_t *v, uintptr_t data)
{
    set_msec(req, v, hy_clock_time_ms());
}

static void get_request_time(hy_req_t *req, hy_var_value_t *v, uintptr_t data)
{
    int64_t ms = hy_clock_time_ms() - (int64_t)req->start_ms;
    set_msec(req, v, ms < 0 ? 0 : ms);
}

/* $connection_time: seconds since the connection was accepted, with milliseconds (nginx 1.19.10+) */
static void get_connection_time(hy_req_t *req, hy_var_value_t *v, uintptr_t data)
{
    int64_t ms = hy_clock_time_ms() - (int64_t)req->conn->start_ms;
    set_msec(req, v, ms < 0 ? 0 : ms);
}

static void get_status(hy_req_t *req, hy_var_value_t *v, uintptr_t data)
{
    char *p = hy_palloc(req->pool, 16);
    int len = snprintf(p, 16, "%03d", req->status > 0 ? req->status : 0);
    set_val(v, p, (size_t)len);
}

static void get_int64_field(hy_req_t *req, hy_var_value_t *v, uintptr_t data)
{
    int64_t n = *(const int64_t *)((const char *)req + data);
    set_int(req, v, n < 0 ? 0 : n);
}

static void get_connection(hy_req_t *req, hy_var_value_t *v, uintptr_t data)
{
    set_int(req, v, (int64_t)req->conn->id);
}

static void get_connection_requests(hy_req_t *req, hy_var_value_t *v, uintptr_t data)
{
    set_int(req, v, (int64_t)req->conn_requests);
}

static void get_pid(hy_req_t *req, hy_var_value_t *v, uintptr_t data)
{
    set_int(req, v, (int64_t)getpid());
}

static void get_hostname(hy_req_t *req, hy_var_value_t *v, uintptr_t data)
{
    static char name[HOST_NAME_MAX + 1];
    if (name[0] == '\0' && gethostname(name, sizeof(name) - 1) != 0)
        name[0] = '\0';
    set_val(v, name, strlen(name));
}

static void get_request_id(hy_req_t *req, hy_var_value_t *v, uintptr_t data)
{
    static uint64_t s0, s1;
    if (s0 == 0 && s1 == 0) {
        if (getrandom(&s0, sizeof(s0), 0) != sizeof(s0) || getrandom(&s1, sizeof(s1), 0) != sizeof(s1)) {
            s0 = (uint64_t)time(NULL) ^ ((uint64_t)getpid() << 32);
            s1 = (uint64_t)(uintptr_t)req ^ 0x9e3779b97f4a7c15ull;
        }
        s0 |= 1;
    }
    hy_req_t *top = req; /* one id per client request: its subrequests share it (nginx) */
    while (top->parent)
        top = top->parent;
    if (top->request_id) {
        set_val(v, top->request_id, 32);
        return;
    }
    char *p = hy_palloc(top->pool, 32);
    top->request_id = p;
    uint64_t r[2];
    for (int k = 0; k < 2; k++) { /* xorshift128+ */
        uint64_t x = s0, y = s1;
        s0 = y;
        x ^= x << 23;
        s1 = x ^ y ^ (x >> 17) ^ (y >> 26);
        r[k] = s1 + y;
    }
    hy_hex_dump(p, (const unsigned char *)r, sizeof(r));
    set_val(v, p, 32);
}

static void get_host(hy_req_t *req, hy_var_value_t *v, uintptr_t data)
{
    if (req->host.len)
        set_str(v, req->host);
    else
        set_str(v, server_name(req));
}

/* The port the client named: the absolute-form target's authority wins over the Host header (nginx 1.29's
 * $request_port); 0 when neither has one. */
static int64_t request_port(const hy_req_t *req)
{
    hy_str_t a = HY_STR_NULL, t = req->target;
    const char *sep = t.len && t.ptr[0] != '/' ? memmem(t.ptr, t.len, "://", 3) : NULL;
    if (sep) {
        a.ptr = (char *)sep + 3;
        a.len = 0;
        while (a.ptr + a.len < t.ptr + t.len && !strchr("/?#", a.ptr[a.len]))
            a.len++;
    } else {
        for (size_t i = 0; i < req->num_headers && a.ptr == NULL; i++)
            if (hy_str_caseeq(req->headers[i].name, "host"))
                a = req->headers[i].value;
    }
    size_t i = a.len;
    while (i > 0 && a.ptr[i - 1] >= '0' && a.ptr[i - 1] <= '9')
        i--;
    if (i == 0 || i == a.len || a.ptr[i - 1] != ':')
        return 0;
    int64_t port = hy_parse_int(a.ptr + i, a.len - i);
    return port > 0 && port <= 65535 ? port : 0;
}

static void get_request_port(hy_req_t *req, hy_var_value_t *v, uintptr_t data)
{
    int64_t port = request_port(req);
    if (port == 0)
        set_val(v, "", 0);
    else
        set_int(req, v, port);
}

static void get_is_request_port(hy_req_t *req, hy_var_value_t *v, uintptr_t data)
{
    set_val(v, ":", request_port(req) ? 1 : 0);
}

static void get_server_name(hy_req_t *req, hy_var_value_t *v, uintptr_t data)
{
    set_str(v, server_name(req));
}

static void get_content_type(hy_req_t *req, hy_var_value_t *v, uintptr_t data)
{
    hy_str_t val; /* repeated lines joined, as $http_content_type (nginx 1.23+) */
    if (hy_vars_join_fields(req, req->headers, req->num_headers, HY_STR("content_type"), ", ", &val))
        set_str(v, val);
    else
        not_found(v);
}

static void get_content_length(hy_req_t *req, hy_var_value_t *v, uintptr_t data)
{
    const hy_str_t *h = first_header(req, "content-length");
    if (h)
        set_str(v, *h);
    else if (req->body_in != NULL && req->body_in->complete && req->body_in->mode == HY_BODY_BUFFER)
        set_int(req, v, req->body_in->received); /* a chunked body read whole: its size, as nginx */
    else
        not_found(v);
}

static hy_str_t document_root(hy_req_t *req, bool *alias)
{
    hy_http_loc_conf_t *lc = req_loc(req);
    *alias = false;
    if (lc == NULL)
        return HY_STR_NULL;
    *alias = lc->root_is_alias == 1;
    hy_str_t r = *alias ? lc->alias : lc->root;
    if (lc->root_cv) /* root/alias with variables or captures: evaluated for this request */
        evaluator(req, lc->root_cv, &r);
    return r;
}

static void get_document_root(hy_req_t *req, hy_var_value_t *v, uintptr_t data)
{
    bool alias;
    hy_str_t r = document_root(req, &alias); /* nginx 1.22: an alias as written, even when it ends with the
                                                location's name */
    if (r.ptr == NULL) {
        not_found(v);
        return;
    }
    set_str(v, r);
}

static void get_realpath_root(hy_req_t *req, hy_var_value_t *v, uintptr_t data)
{
    hy_var_value_t root;
    get_document_root(req, &root, 0);
    if (root.not_found) {
        not_found(v);
        return;
    }
    char *path = hy_pstrndup(req->pool, root.ptr, root.len);
    char *real = hy_palloc(req->pool, PATH_MAX);
    if (realpath(path, real) == NULL) {
        hy_req_log(req, HY_LOG_CRIT, "realpath() \"%s\" failed (%d: %s)", path, errno, strerror(errno));
        not_found(v);
        return;
    }
    set_val(v, real, strlen(real));
}

static void get_request_filename(hy_req_t *req, hy_var_value_t *v, uintptr_t data)
{
    bool alias;
    hy_str_t r = document_root(req, &alias);
    if (r.ptr == NULL || req->uri.ptr == NULL) {
        not_found(v);
        return;
    }
    hy_str_t uri = req->uri;
    if (alias) {
        hy_http_loc_conf_t *lc = req_loc(req);
        size_t skip = lc->alias_regex ? uri.len : lc->alias_prefix.len;
        if (skip > uri.len)
            skip = uri.len;
        uri.ptr += skip;
        uri.len -= skip;
    }
    char *p = hy_palloc(req->pool, r.len + uri.len + 1);
    memcpy(p, r.ptr, r.len);
    memcpy(p + r.len, uri.ptr, uri.len);
    p[r.len + uri.len] = '\0';
    set_val(v, p, r.len + uri.len);
}

/* ---- prefixes: data points to the hy_str_t suffix (lower-case as written) */

/* header name vs variable suffix: case-insensitive, '-' in the header equals '_' in the name */
static bool header_name_eq(hy_str_t hname, const hy_str_t *suffix)
{
    if (hname.len != suffix->len)
        return false;
    for (size_t i = 0; i < hname.len; i++) {
        unsigned char c = (unsigned char)hname.ptr[i];
        if (c >= 'A' && c <= 'Z')
            c = (unsigned char)(c | 0x20);
        else if (c == '-')
            c = '_';
        unsigned char s = (unsigned char)suffix->ptr[i];
        if (s >= 'A' && s <= 'Z')
            s = (unsigned char)(s | 0x20);
        if (c != s)
            return false;
    }
    return true;
}

bool hy_vars_join_fields(hy_req_t *req, const hy_header_t *fields, size_t n, hy_str_t name, const char *sep,
                         hy_str_t *out)
{
    size_t total = 0, count = 0, slen = strlen(sep), first = 0;
    for (size_t i = 0; i < n; i++)
        if (fields[i].name.len && header_name_eq(fields[i].name, &name)) {
            if (count++ == 0)
                first = i;
            total += fields[i].value.len;
        }
    if (count == 0)
        return false;
    if (count == 1) {
        *out = fields[first].value;
        return true;
    }
    char *p = hy_palloc(req->pool, total + (count - 1) * slen + 1), *o = p;
    for (size_t i = first; i < n; i++)
        if (fields[i].name.len && header_name_eq(fields[i].name, &name)) {
            if (o != p)
                memcpy(o, sep, slen), o += slen;
            memcpy(o, fields[i].value.ptr, fields[i].value.len);
            o += fields[i].value.len;
        }
    *out = (hy_str_t){p, (size_t)(o - p)};
    return true;
}

static void get_http(hy_req_t *req, hy_var_value_t *v, uintptr_t data)
{
    const hy_str_t *suffix = (const hy_str_t *)data;
    /* nginx (1.23+) joins repeated request fields: Cookie with "; ", any other with ", " */
    hy_str_t val;
    if (hy_vars_join_fields(req, req->headers, req->num_headers, *suffix,
                            hy_str_caseeq(*suffix, "cookie") ? "; " : ", ", &val))
        set_str(v, val);
    else
        not_found(v);
}

/* $sent_trailer_NAME: the response's trailers made so far (add_trailer evaluates them in order) */
static void get_sent_trailer(hy_req_t *req, hy_var_value_t *v, uintptr_t data)
{
    hy_str_t val;
    if (req->trailers && hy_vars_join_fields(req, req->trailers->elts, req->trailers->nelts,
                                             *(const hy_str_t *)data, ", ", &val))
        set_str(v, val);
    else
        not_found(v);
}

static void get_sent_http(hy_req_t *req, hy_var_value_t *v, uintptr_t data)
{
    const hy_str_t *s = (const hy_str_t *)data;
    if (req->resp_headers) { /* the head as it went out (http/request.c), framing fields included */
        if (req->logged && hy_str_caseeq(*s, "connection")) {
            if (req->status == 101) /* nginx: an upgraded connection says so */
                set_val(v, "upgrade", 7);
            else
                set_val(v, "close", 5); /* nginx clears r->keepalive before the log phase */
            return;
        }
        hy_str_t val; /* repeated fields joined (nginx 1.23+) */
        if (hy_vars_join_fields(req, req->resp_headers->elts, req->resp_headers->nelts, *s, ", ", &val))
            set_str(v, val);
        else
            not_found(v);
        return;
    }
    /* before the head is final: the response fields as they stand */
    if (hy_str_caseeq(*s, "content_type")) {
        if (req->content_type.len)
            set_str(v, req->content_type);
        else
            not_found(v);
        return;
    }
    if (hy_str_caseeq(*s, "content_length")) {
        if (req->content_length_n >= 0)
            set_int(req, v, req->content_length_n);
        else
            not_found(v);
        return;
    }
    if (hy_str_caseeq(*s, "location")) {
        if (req->location.len)
            set_str(v, req->location);
        else
            not_found(v);
        return;
    }
    if (hy_str_caseeq(*s, "last_modified")) {
        if (req->last_modified >= 0) {
            char *p = hy_palloc(req->pool, 32);
            set_val(v, p, hy_httpdate_format(req->last_modified, p));
        } else {
            not_found(v);
        }
        return;
    }
    if (hy_str_caseeq(*s, "etag")) {
        if (req->etag.len)
            set_str(v, req->etag);
        else
            not_found(v);
        return;
    }
    /* Accept-Ranges is not among them: nginx's range filter adds it after the headers filter has run */
    hy_str_t val;
    if (req->headers_out && hy_vars_join_fields(req, req->headers_out->elts, req->headers_out->nelts, *s, ", ", &val))
        set_str(v, val);
    else
        not_found(v);
}

static void get_arg(hy_req_t *req, hy_var_value_t *v, uintptr_t data)
{
    const hy_str_t *name = (const hy_str_t *)data;
    const char *p = req->args.ptr, *end = p + req->args.len;
    while (p && p < end) {
        const char *amp = memchr(p, '&', (size_t)(end - p));
        const char *seg_end = amp ? amp : end;
        if ((size_t)(seg_end - p) > name->len && p[name->len] == '=' && strncasecmp(p, name->ptr, name->len) == 0) {
            set_val(v, p + name->len + 1, (size_t)(seg_end - p - (ptrdiff_t)name->len - 1));
            return;
        }
        p = amp ? amp + 1 : end;
    }
    not_found(v);
}

static void get_cookie(hy_req_t *req, hy_var_value_t *v, uintptr_t data)
{
    const hy_str_t *name = (const hy_str_t *)data;
    for (size_t i = 0; i < req->num_headers; i++) {
        if (!hy_str_caseeq(req->headers[i].name, "cookie"))
            continue;
        const char *p = req->headers[i].value.ptr, *end = p + req->headers[i].value.len;
        while (p < end) {
            if ((size_t)(end - p) >= name->len && strncasecmp(p, name->ptr, name->len) == 0) {
                const char *q = p + name->len;
                while (q < end && *q == ' ')
                    q++;
                if (q < end && *q == '=') {
                    q++;
                    while (q < end && *q == ' ')
                        q++;
                    const char *vs = q;
                    while (q < end && *q != ';')
                        q++;
                    set_val(v, vs, (size_t)(q - vs));
                    return;
                }
            }
            while (p < end) { /* RFC 6265 §4.2.1: cookies are separated by ';' only (nginx 1.29.6 as well) */
                char c = *p++;
                if (c == ';')
                    break;
            }
            while (p < end && *p == ' ')
                p++;
        }
    }
    not_found(v);
}

/* ---------------------------------------------------------------- tables */

typedef struct builtin {
    const char *name;
    hy_var_get_fn get;
    uintptr_t data;
    unsigned flags;
} builtin_t;

/* nginx: the body when a handler read it into memory; empty when it went to a file */
static void get_request_body(hy_req_t *req, hy_var_value_t *v, uintptr_t data)
{
    hy_str_t b = hy_req_body_text(req);
    if (b.ptr == NULL) {
        not_found(v);
        return;
    }
    set_str(v, b);
}

static void get_request_body_file(hy_req_t *req, hy_var_value_t *v, uintptr_t data)
{
    if (req->body_in == NULL || req->body_in->path == NULL || req->body_in->fd < 0) {
        not_found(v);
        return;
    }
    set_val(v, req->body_in->path, strlen(req->body_in->path));
}

/* $scheme and $https from the connection (TLS sets "https") */
static void get_scheme(hy_req_t *req, hy_var_value_t *v, uintptr_t data)
{
    set_str(v, req->conn->scheme.len ? req->conn->scheme : HY_STR("http"));
}

static void get_https(hy_req_t *req, hy_var_value_t *v, uintptr_t data)
{
    if (hy_str_eq(req->conn->scheme, "https"))
        set_val(v, "on", 2);
    else
        set_val(v, "", 0);
}

static const builtin_t builtins[] = {
    {"remote_addr", get_remote_addr, 0, 0},
    {"remote_port", get_remote_port, 0, 0},
    {"remote_user", get_remote_user, 0, 0},
    {"binary_remote_addr", get_binary_remote_addr, 0, 0},
    {"proxy_protocol_addr", get_pp_addr, 0, 0},
    {"proxy_protocol_port", get_pp_port, 0, 0},
    {"proxy_protocol_server_addr", get_pp_addr, 1, 0},
    {"proxy_protocol_server_port", get_pp_port, 1, 0},
    {"time_local", get_time_local, 0, HY_VAR_NOCACHE},
    {"time_iso8601", get_time_iso8601, 0, HY_VAR_NOCACHE},
    {"msec", get_msec, 0, HY_VAR_NOCACHE},
    {"date_local", get_date, 0, HY_VAR_NOCACHE},
    {"date_gmt", get_date, 1, HY_VAR_NOCACHE},
    {"request", get_field, F_REQUEST, 0},
    {"request_method", get_field, F_METHOD, 0},
    {"request_uri", get_field, F_REQUEST_URI, 0},
    {"uri", get_field, F_URI, HY_VAR_NOCACHE},
    {"document_uri", get_field, F_URI, HY_VAR_NOCACHE},
    {"args", get_field, F_ARGS, HY_VAR_NOCACHE},
    {"query_string", get_field, F_ARGS, HY_VAR_NOCACHE},
    {"is_args", get_is_args, 0, HY_VAR_NOCACHE},
    {"content_type", get_content_type, 0, 0},
    {"content_length", get_content_length, 0, HY_VAR_NOCACHE},
    {"host", get_host, 0, 0},
    {"request_port", get_request_port, 0, 0},
    {"is_request_port", get_is_request_port, 0, 0},
    {"hostname", get_hostname, 0, 0},
    {"server_name", get_server_name, 0, 0},
    {"server_addr", get_server_addr, 0, 0},
    {"server_port", get_server_port, 0, 0},
    {"server_protocol", get_field, F_PROTOCOL, 0},
    {"scheme", get_scheme, 0, 0},
    {"https", get_https, 0, 0},
    {"status", get_status, 0, HY_VAR_NOCACHE},
    {"body_bytes_sent", get_int64_field, offsetof(hy_req_t, body_bytes_sent), HY_VAR_NOCACHE},
    {"bytes_sent", get_int64_field, offsetof(hy_req_t, bytes_sent), HY_VAR_NOCACHE},
    {"request_length", get_int64_field, offsetof(hy_req_t, request_length), HY_VAR_NOCACHE},
    {"limit_rate", get_int64_field, offsetof(hy_req_t, limit_rate), HY_VAR_NOCACHE},
    {"request_body", get_request_body, 0, HY_VAR_NOCACHE},
    {"request_body_file", get_request_body_file, 0, HY_VAR_NOCACHE},
    {"request_time", get_request_time, 0, HY_VAR_NOCACHE},
    {"connection_time", get_connection_time, 0, HY_VAR_NOCACHE},
    {"connection", get_connection, 0, 0},
    {"connection_requests", get_connection_requests, 0, 0},
    {"pid", get_pid, 0, 0},
    {"request_id", get_request_id, 0, 0},
    {"request_filename", get_request_filename, 0, HY_VAR_NOCACHE},
    {"document_root", get_document_root, 0, HY_VAR_NOCACHE},
    {"realpath_root", get_realpath_root, 0, HY_VAR_NOCACHE},
    {"nginx_version", get_const, (uintptr_t)HY_NGINX_COMPAT_VERSION, 0},
    {"hayate_version", get_const, (uintptr_t)HY_VERSION, 0},
    /* filled by the proxy issue; without an upstream nginx reports them not found ("-" in logs) */
    {"upstream_addr", get_not_found, 0, HY_VAR_NOCACHE},
    {"upstream_status", get_not_found, 0, HY_VAR_NOCACHE},
    {"upstream_response_time", get_not_found, 0, HY_VAR_NOCACHE},
    {"upstream_connect_time", get_not_found, 0, HY_VAR_NOCACHE},
    {"upstream_header_time", get_not_found, 0, HY_VAR_NOCACHE},
    {"upstream_response_length", get_not_found, 0, HY_VAR_NOCACHE},
    {"upstream_bytes_received", get_not_found, 0, HY_VAR_NOCACHE},
    {"upstream_bytes_sent", get_not_found, 0, HY_VAR_NOCACHE},
    {"upstream_cache_status", get_not_found, 0, HY_VAR_NOCACHE},
    {"upstream_queue_time", get_not_found, 0, HY_VAR_NOCACHE},
};

static const builtin_t prefixes[] = {
    {"arg_", get_arg, 0, HY_VAR_NOCACHE}, /* nginx: `set $args` changes it */
    {"http_", get_http, 0, 0},
    {"sent_http_", get_sent_http, 0, HY_VAR_NOCACHE},
    {"sent_trailer_", get_sent_trailer, 0, HY_VAR_NOCACHE},
    {"cookie_", get_cookie, 0, 0},
    {"proxy_protocol_tlv_", get_pp_tlv, 0, 0},
    {"upstream_http_", get_not_found, 0, HY_VAR_NOCACHE},
    {"upstream_cookie_", get_not_found, 0, HY_VAR_NOCACHE},
    {"upstream_trailer_", get_not_found, 0, HY_VAR_NOCACHE},
};

void hy_vars__suggest_builtin(hy_suggest_t *near, const char *name, size_t len)
{
    for (size_t i = 0; i < HY_ARRAY_SIZE(builtins); i++)
        hy_suggest_near(near, name, len, builtins[i].name);
}

bool hy_vars_is_builtin(hy_str_t name)
{
    for (size_t i = 0; i < HY_ARRAY_SIZE(builtins); i++)
        if (hy_str_eq(name, builtins[i].name))
            return true;
    return false;
}

bool hy_vars__lookup_builtin(hy_conf_t *cf, hy_str_t name, hy_var_get_fn *get, uintptr_t *data, unsigned *flags)
{
    for (size_t i = 0; i < HY_ARRAY_SIZE(builtins); i++)
        if (hy_str_eq(name, builtins[i].name)) {
            *get = builtins[i].get, *data = builtins[i].data, *flags = builtins[i].flags;
            return true;
        }
    const builtin_t *best = NULL;
    for (size_t i = 0; i < HY_ARRAY_SIZE(prefixes); i++) { /* longest prefix: upstream_http_ before ... */
        size_t pl = strlen(prefixes[i].name);
        if (name.len >= pl && memcmp(name.ptr, prefixes[i].name, pl) == 0 &&
            (best == NULL || strlen(best->name) < pl))
            best = &prefixes[i];
    }
    if (best == NULL)
        return false;
    size_t pl = strlen(best->name);
    hy_str_t *suffix = hy_palloc(cf->pool, sizeof(*suffix));
    *suffix = (hy_str_t){name.ptr + pl, name.len - pl};
    *get = best->get, *data = (uintptr_t)suffix, *flags = best->flags;
    return true;
}
