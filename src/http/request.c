/* request.c — the request core: routing (server by Host, location by URI), limits, the content handler,
 * and error responses. Protocol-independent: h1 (and later h2) call in here and get called back through
 * hy_conn_ops_t. */
#include <string.h>
#include <stdio.h>
#include <arpa/inet.h>
#include <netinet/in.h>
#include "request.h"
#include "error_page.h"
#include "../event/sock.h"
#include "h1parse.h"
#include "../core/log.h"
#include "../handlers/static.h"
#include "../handlers/rewrite.h"
#include "../handlers/try_files.h"

enum { PH_SERVER_REWRITE = 0, PH_FIND_CONFIG, PH_LOC_REWRITE };
#define HY_MAX_URI_CHANGES 10

static void run_phases(hy_req_t *req, int phase);

static const struct {
    int status;
    const char *reason;
} reasons[] = {
    {100, "Continue"}, {101, "Switching Protocols"}, {200, "OK"}, {201, "Created"}, {202, "Accepted"},
    {203, "Non-Authoritative Information"}, {204, "No Content"}, {205, "Reset Content"}, {206, "Partial Content"},
    {300, "Multiple Choices"}, {301, "Moved Permanently"}, {302, "Moved Temporarily"}, {303, "See Other"},
    {304, "Not Modified"}, {307, "Temporary Redirect"}, {308, "Permanent Redirect"}, {400, "Bad Request"},
    {401, "Unauthorized"}, {402, "Payment Required"}, {403, "Forbidden"}, {404, "Not Found"},
    {405, "Not Allowed"}, {406, "Not Acceptable"}, {408, "Request Time-out"}, {409, "Conflict"}, {410, "Gone"},
    {411, "Length Required"}, {412, "Precondition Failed"}, {413, "Request Entity Too Large"},
    {414, "Request-URI Too Large"}, {415, "Unsupported Media Type"}, {416, "Requested Range Not Satisfiable"},
    {421, "Misdirected Request"}, {429, "Too Many Requests"}, {431, "Request Header Fields Too Large"},
    {500, "Internal Server Error"}, {501, "Not Implemented"}, {502, "Bad Gateway"},
    {503, "Service Temporarily Unavailable"}, {504, "Gateway Time-out"}, {505, "HTTP Version Not Supported"},
    {507, "Insufficient Storage"},
};

const char *hy_http_reason(int status)
{
    for (size_t i = 0; i < HY_ARRAY_SIZE(reasons); i++)
        if (reasons[i].status == status)
            return reasons[i].reason;
    return NULL;
}

int hy_http_method_id(hy_str_t m)
{
    static const struct {
        const char *name;
        int id;
    } methods[] = {{"GET", HY_M_GET},         {"HEAD", HY_M_HEAD},       {"POST", HY_M_POST},
                   {"PUT", HY_M_PUT},         {"DELETE", HY_M_DELETE},   {"OPTIONS", HY_M_OPTIONS},
                   {"PATCH", HY_M_PATCH},     {"TRACE", HY_M_TRACE},     {"CONNECT", HY_M_CONNECT}};
    for (size_t i = 0; i < HY_ARRAY_SIZE(methods); i++)
        if (hy_str_eq(m, methods[i].name))
            return methods[i].id;
    return HY_M_UNKNOWN;
}

void hy_req_add_header(hy_req_t *req, hy_str_t name, hy_str_t value)
{
    if (req->headers_out == NULL)
        req->headers_out = hy_array_create(req->pool, 4, sizeof(hy_header_t));
    hy_header_t *h = hy_array_push(req->headers_out);
    h->name = name;
    h->value = value;
}

size_t hy_req_log_ctx(hy_req_t *req, char *buf, size_t cap)
{
    int n = snprintf(buf, cap, ", client: %s", req->conn->peer_text);
    if (req->srv && req->srv->server_names && req->srv->server_names->nelts) {
        hy_server_name_t *sn = req->srv->server_names->elts;
        n += snprintf(buf + n, cap - (size_t)n, ", server: %.*s", (int)sn[0].name.len, sn[0].name.ptr);
    } else {
        n += snprintf(buf + n, cap - (size_t)n, ", server: ");
    }
    if (req->request_line.len)
        n += snprintf(buf + n, cap - (size_t)n, ", request: \"%.*s\"", (int)req->request_line.len,
                      req->request_line.ptr);
    else if (req->method.len)
        n += snprintf(buf + n, cap - (size_t)n, ", request: \"%.*s %.*s HTTP/1.%d\"", (int)req->method.len,
                      req->method.ptr, (int)req->target.len, req->target.ptr, req->version == 10 ? 0 : 1);
    /* nginx prints Host and Referer as the client sent them */
    const hy_str_t *host = NULL, *ref = NULL;
    for (size_t i = 0; i < req->num_headers && (size_t)n < cap; i++) {
        if (host == NULL && hy_str_caseeq(req->headers[i].name, "host"))
            host = &req->headers[i].value;
        else if (ref == NULL && hy_str_caseeq(req->headers[i].name, "referer"))
            ref = &req->headers[i].value;
    }
    if (host && (size_t)n < cap)
        n += snprintf(buf + n, cap - (size_t)n, ", host: \"%.*s\"", (int)host->len, host->ptr);
    else if (req->host.len && (size_t)n < cap)
        n += snprintf(buf + n, cap - (size_t)n, ", host: \"%.*s\"", (int)req->host.len, req->host.ptr);
    if (ref && (size_t)n < cap)
        n += snprintf(buf + n, cap - (size_t)n, ", referrer: \"%.*s\"", (int)ref->len, ref->ptr);
    return (size_t)n < cap ? (size_t)n : cap - 1;
}

void **hy_req_ctx(hy_req_t *req, const hy_module_t *m)
{
    if (req->ctx == NULL) {
        int n = 0;
        while (hy_modules[n])
            n++;
        req->ctx = hy_pcalloc(req->pool, sizeof(void *) * (size_t)n);
    }
    return &req->ctx[m->index];
}

void hy_req_log_phase(hy_req_t *req)
{
    if (req->logged)
        return;
    req->logged = true;
    for (int i = 0; hy_modules[i]; i++)
        if (hy_modules[i]->log_handler)
            hy_modules[i]->log_handler(req);
}

/* nginx's header filter: a Location starting with "/" becomes absolute (absolute_redirect), with the Host (or the
 * server_name with server_name_in_redirect, or the local address) and the port unless 80 (port_in_redirect) */
static void absolute_location(hy_req_t *req)
{
    const hy_http_loc_conf_t *lc = req->loc ? req->loc : req->srv->loc;
    if (!lc->absolute_redirect)
        return;
    hy_str_t host = req->host;
    if (lc->server_name_in_redirect || host.len == 0) {
        host = HY_STR_NULL;
        if (req->srv->server_names && req->srv->server_names->nelts) {
            hy_server_name_t *sn = req->srv->server_names->elts;
            if (sn[0].kind == 0 && sn[0].name.len)
                host = sn[0].name;
        }
    }
    char ip[INET6_ADDRSTRLEN + 4];
    if (host.len == 0) {
        struct sockaddr_storage ss;
        socklen_t sl = sizeof(ss);
        host = HY_STR("localhost");
        if (getsockname(req->conn->sock->io.fd, (struct sockaddr *)&ss, &sl) == 0) {
            if (ss.ss_family == AF_INET && inet_ntop(AF_INET, &((struct sockaddr_in *)&ss)->sin_addr, ip, 64)) {
                host = (hy_str_t){ip, strlen(ip)};
            } else if (ss.ss_family == AF_INET6 &&
                       inet_ntop(AF_INET6, &((struct sockaddr_in6 *)&ss)->sin6_addr, ip + 1, 64)) {
                ip[0] = '[';
                size_t l = strlen(ip);
                ip[l] = ']';
                host = (hy_str_t){ip, l + 1};
            }
        }
    }
    size_t cap = host.len + req->location.len + 24;
    char *p = hy_palloc(req->pool, cap);
    int n = snprintf(p, cap, "http://%.*s", (int)host.len, host.ptr);
    if (lc->port_in_redirect && req->conn->local_port && req->conn->local_port != 80)
        n += snprintf(p + n, cap - (size_t)n, ":%u", req->conn->local_port);
    memcpy(p + n, req->location.ptr, req->location.len);
    req->location = (hy_str_t){p, (size_t)n + req->location.len};
}

void hy_req_send(hy_req_t *req, bool is_final)
{
    /* the filter chain (nginx's header and body filters), in module order */
    if (!req->filters_started) {
        req->filters_started = true;
        if (req->err_status) { /* error_page's status wins over the redirected request's */
            req->status = req->err_status;
            req->status_line = HY_STR_NULL;
        }
        if (req->location.len && req->location.ptr[0] == '/' && req->srv)
            absolute_location(req);
        for (int i = 0; hy_modules[i]; i++)
            if (hy_modules[i]->header_filter)
                hy_modules[i]->header_filter(req);
    }
    for (int i = 0; hy_modules[i]; i++)
        if (hy_modules[i]->body_filter)
            hy_modules[i]->body_filter(req, is_final);
    req->conn->ops->send(req, is_final);
}

/* hayate's own sentence under each built-in error page's heading */
static const char *explain(int status)
{
    switch (status) {
    case 301: case 302: case 303: case 307: case 308:
        return "The document has moved to the address in the Location header.";
    case 400: return "hayate could not understand this request.";
    case 401: return "This resource needs valid credentials.";
    case 402: return "This resource needs payment.";
    case 403: return "You are not allowed to see this resource.";
    case 404: return "Nothing was found at this address.";
    case 405: return "This method is not allowed on this resource.";
    case 406: return "No representation of this resource matches the request.";
    case 408: return "The request took too long to arrive.";
    case 409: return "The request conflicts with the state of the resource.";
    case 410: return "This resource is gone for good.";
    case 411: return "This request needs a Content-Length.";
    case 412: return "A precondition of the request did not hold.";
    case 413: return "The request body is larger than this server accepts.";
    case 414: return "The request address is longer than this server accepts.";
    case 415: return "The media type of the request body is not supported.";
    case 416: return "The requested range is outside the resource.";
    case 421: return "This server does not answer for that host.";
    case 429: return "Too many requests: slow down and try again later.";
    case 431: case 494: return "The request header fields are too large.";
    case 500: return "hayate hit an internal error while answering.";
    case 501: return "This server does not implement that method.";
    case 502: return "The upstream server sent an invalid answer.";
    case 503: return "The service is not available right now: try again later.";
    case 504: return "The upstream server did not answer in time.";
    case 505: return "This HTTP version is not supported.";
    case 507: return "The server has no room to store this.";
    default: return NULL;
    }
}

void hy_req_special_response(hy_req_t *req, int status)
{
    switch (status) { /* nginx drops keep-alive after these (ngx_http_special_response_handler) */
    case 400: case 408: case 413: case 414: case 431: case 500: case 501: case 505:
        req->keepalive = false;
        break;
    default:
        break;
    }
    hy_http_loc_conf_t *lc = req->loc ? req->loc : req->srv->loc;
    req->status = status;
    req->err_status = 0;
    req->status_line = HY_STR_NULL;
    req->content_length_n = -1;
    req->last_modified = -1;
    req->etag = HY_STR_NULL;
    req->accept_ranges = false;
    req->file = NULL;
    hy_outq_clear(&req->body);
    if (status == 304 || status == 204 || status < 200) {
        req->header_only = true;
        req->content_length_n = status == 204 || status == 304 ? -1 : 0;
        hy_req_send(req, true);
        return;
    }
    const char *reason = hy_http_reason(status);
    const char *why = explain(status);
    if (reason == NULL || (why == NULL && status < 400)) { /* codes without a page: empty body (nginx) */
        req->content_type = HY_STR_NULL;
        req->content_length_n = 0;
        if (req->method_id == HY_M_HEAD)
            req->header_only = true;
        hy_req_send(req, true);
        return;
    }
    char *body = hy_palloc(req->pool, 512);
    int n = snprintf(body, 512,
                     "<html>\r\n<head><title>%d %s</title></head>\r\n<body>\r\n<center><h1>%d %s</h1></center>\r\n"
                     "%s%s%s<hr><center>%s</center>\r\n</body>\r\n</html>\r\n",
                     status, reason, status, reason, why ? "<center><p>" : "", why ? why : "",
                     why ? "</p></center>\r\n" : "",
                     lc->server_tokens == HY_TOKENS_OFF ? "hayate" : "hayate/" HY_VERSION);
    req->content_type = HY_STR("text/html");
    req->content_length_n = n;
    if (req->method_id == HY_M_HEAD)
        req->header_only = true;
    hy_outq_push_mem(&req->body, body, (size_t)n, NULL, NULL);
    hy_req_send(req, true);
}

void hy_req_error(hy_req_t *req, int status)
{
    if (status == 444) { /* nginx: close the connection without a response */
        req->status = 444;
        req->keepalive = false;
        req->conn->ops->abort(req);
        return;
    }
    if (status >= 300 && status != 304 && hy_error_page_redirect(req, status))
        return;
    hy_req_special_response(req, status);
}

void hy_req_split_args(hy_str_t in, hy_str_t *uri, hy_str_t *args)
{
    char *q = in.len ? memchr(in.ptr, '?', in.len) : NULL;
    if (q == NULL) {
        *uri = in;
        *args = (hy_str_t){in.ptr + in.len, 0};
        return;
    }
    *uri = (hy_str_t){in.ptr, (size_t)(q - in.ptr)};
    *args = (hy_str_t){q + 1, in.len - (size_t)(q - in.ptr) - 1};
}

static const hy_str_t *find_header(hy_req_t *req, const char *name, int *count)
{
    const hy_str_t *v = NULL;
    *count = 0;
    for (size_t i = 0; i < req->num_headers; i++)
        if (hy_str_caseeq(req->headers[i].name, name)) {
            if (v == NULL)
                v = &req->headers[i].value;
            (*count)++;
        }
    return v;
}

static void log_bad(hy_req_t *req, const char *what)
{
    char ctx[512];
    hy_req_log_ctx(req, ctx, sizeof(ctx));
    hy_log_conn(HY_LOG_INFO, req->conn->id, "%s%s", what, ctx);
}

/* Validate host[:port] and make it req->host (lower-cased copy, port and trailing dot off); -1 when invalid. */
static int set_host(hy_req_t *req, hy_str_t h)
{
    char *copy = hy_pstrndup(req->pool, h.ptr, h.len);
    ssize_t hl = hy_http_validate_host(copy, h.len);
    if (hl < 0)
        return -1;
    req->host = (hy_str_t){copy, (size_t)hl};
    return 0;
}

void hy_req_process(hy_req_t *req)
{
    hy_http_srv_conf_t *dsrv = req->conn->addr->default_server;
    req->srv = dsrv;
    /* request-target → decoded, normalised path (nginx's ngx_http_parse_complex_uri) */
    char *path = hy_palloc(req->pool, req->target.len + 2);
    size_t path_len = 0;
    hy_str_t abs_host = HY_STR_NULL;
    if (hy_http_parse_target(req->method, req->target, dsrv->merge_slashes != 0, path, &path_len, &req->args,
                             &abs_host) != 0) {
        log_bad(req, "client sent invalid request");
        hy_req_error(req, 400);
        return;
    }
    req->uri = (hy_str_t){path, path_len};
    /* Host (RFC 9112 §3.2): required on 1.1, exactly one, valid; an absolute-form authority wins */
    int nhost;
    const hy_str_t *host = find_header(req, "host", &nhost);
    if (nhost > 1) {
        log_bad(req, "client sent duplicate host header");
        hy_req_error(req, 400);
        return;
    }
    if (host == NULL && req->version >= 11) {
        log_bad(req, "client sent HTTP/1.1 request without \"Host\" header");
        hy_req_error(req, 400);
        return;
    }
    /* the Host header is validated whatever the target's form (its bytes reach $http_host and the logs); an
     * absolute-form authority (checked by hy_http_parse_target) then wins for routing, as in nginx */
    if ((host != NULL && set_host(req, *host) < 0) || (abs_host.ptr != NULL && set_host(req, abs_host) < 0)) {
        log_bad(req, "client sent invalid host header");
        hy_req_error(req, 400);
        return;
    }
    /* known headers, in one pass (the first of each wins) */
    for (size_t i = 0; i < req->num_headers; i++) {
        const hy_str_t *n = &req->headers[i].name, *v = &req->headers[i].value;
        const hy_str_t **slot = NULL;
        switch (n->len) {
        case 5:
            if (hy_str_caseeq(*n, "range"))
                slot = &req->h_range;
            break;
        case 6:
            if (hy_str_caseeq(*n, "expect"))
                slot = &req->h_expect;
            break;
        case 8:
            if (hy_str_caseeq(*n, "if-match"))
                slot = &req->h_if_match;
            else if (hy_str_caseeq(*n, "if-range"))
                slot = &req->h_if_range;
            break;
        case 10:
            if (hy_str_caseeq(*n, "user-agent"))
                slot = &req->h_user_agent;
            break;
        case 13:
            if (hy_str_caseeq(*n, "if-none-match"))
                slot = &req->h_if_none_match;
            break;
        case 17:
            if (hy_str_caseeq(*n, "if-modified-since"))
                slot = &req->h_if_modified_since;
            break;
        case 19:
            if (hy_str_caseeq(*n, "if-unmodified-since"))
                slot = &req->h_if_unmodified_since;
            break;
        default:
            break;
        }
        if (slot && *slot == NULL) {
            *slot = v;
        } else if (slot && slot != &req->h_range && slot != &req->h_user_agent) {
            /* nginx's unique header lines (the conditionals, Expect): a second one is 400 */
            char what[512];
            snprintf(what, sizeof(what),
                     "client sent duplicate header line: \"%.*s: %.*s\", previous value: \"%.*s: %.*s\"",
                     (int)n->len, n->ptr, (int)v->len, v->ptr, (int)n->len, n->ptr, (int)(*slot)->len,
                     (*slot)->ptr);
            log_bad(req, what);
            hy_req_error(req, 400);
            return;
        }
    }
    if (req->h_expect && req->version >= 11 && hy_str_caseeq(*req->h_expect, "100-continue"))
        req->expect_continue = true;

    req->srv = hy_http_find_server(req->conn->addr, req->host.ptr, req->host.len);
    if (req->host.len)
        hy_rewrite_server_name_captures(req);
    req->uri_changes = HY_MAX_URI_CHANGES + 1;
    run_phases(req, PH_SERVER_REWRITE);
}

static void log_cycle(hy_req_t *req, const char *what)
{
    char ctx[512];
    hy_req_log_ctx(req, ctx, sizeof(ctx));
    hy_log_conn(HY_LOG_ERR, req->conn->id, "rewrite or internal redirection cycle %s \"%.*s\"%s", what,
                (int)req->uri.len, req->uri.ptr, ctx);
}

/* nginx's find_config phase checks: internal locations, client_max_body_size. -1 when answered. */
static int find_config_checks(hy_req_t *req)
{
    if (req->loc->internal == 1 && !req->is_internal) {
        hy_req_error(req, 404);
        return -1;
    }
    if (req->loc->client_max_body_size > 0 && req->content_length > req->loc->client_max_body_size) {
        char what[128];
        snprintf(what, sizeof(what), "client intended to send too large body: %lld bytes",
                 (long long)req->content_length);
        hy_log_conn(HY_LOG_ERR, req->conn->id, "%s, client: %s", what, req->conn->peer_text);
        hy_req_error(req, 413);
        return -1;
    }
    return 0;
}

/* nginx's phase engine from a starting phase: server rewrite → find location → location rewrite (looping
 * while the URI changes) → internal/limits → try_files → content. */
static void run_phases(hy_req_t *req, int phase)
{
    if (phase == PH_SERVER_REWRITE) {
        req->loc = NULL;
        if (hy_rewrite_run(req, req->srv->loc) == HY_RW_DONE)
            return;
    }
    for (;;) {
        if (phase != PH_LOC_REWRITE) {
            req->loc = hy_http_find_location(req->srv, req->uri.ptr, req->uri.len);
            if (req->loc == NULL)
                req->loc = req->srv->loc;
            else if (req->loc->regex)
                hy_rewrite_location_captures(req, req->loc);
        }
        if (phase != PH_LOC_REWRITE && find_config_checks(req) != 0)
            return;
        phase = PH_FIND_CONFIG;
        if (req->loc == req->srv->loc) /* nginx skips the location rewrite phase for the server's null location */
            break;
        int rc = hy_rewrite_run(req, req->loc);
        if (rc == HY_RW_DONE)
            return;
        if (rc != HY_RW_URI_CHANGED)
            break;
        if (--req->uri_changes == 0) {
            log_cycle(req, "while processing");
            hy_req_error(req, 500);
            return;
        }
        req->is_internal = true;
    }
    if (hy_try_files_run(req))
        return;
    if (req->loc->handler)
        req->loc->handler(req);
    else
        hy_static_handler(req);
}

/* the response state a redirect starts over with (nginx keeps headers_out, but hayate's handlers have not
 * sent anything yet when they redirect, so only what they set must go) */
static void reset_response(hy_req_t *req)
{
    req->status = 0;
    req->status_line = HY_STR_NULL;
    req->content_type = HY_STR_NULL;
    req->content_length_n = -1;
    req->last_modified = -1;
    req->etag = HY_STR_NULL;
    req->location = HY_STR_NULL;
    req->file = NULL;
    req->headers_out = NULL;
    req->accept_ranges = false;
    req->header_only = false;
    hy_outq_clear(&req->body);
}

void hy_req_internal_redirect(hy_req_t *req, hy_str_t uri, hy_str_t args)
{
    req->uri = uri;
    req->args = args;
    if (--req->uri_changes <= 0) {
        log_cycle(req, "while internally redirecting to");
        req->uri_changes = 0;
        hy_req_error(req, 500);
        return;
    }
    req->is_internal = true;
    reset_response(req);
    run_phases(req, PH_SERVER_REWRITE);
}

void hy_req_named_redirect(hy_req_t *req, hy_str_t name)
{
    hy_http_loc_conf_t *named = hy_http_find_named(req->srv, name.ptr, name.len);
    if (named == NULL) {
        char ctx[512];
        hy_req_log_ctx(req, ctx, sizeof(ctx));
        hy_log_conn(HY_LOG_ERR, req->conn->id, "could not find named location \"%.*s\"%s", (int)name.len, name.ptr,
                    ctx);
        hy_req_error(req, 500);
        return;
    }
    if (--req->uri_changes <= 0) {
        log_cycle(req, "while redirect to named location");
        req->uri_changes = 0;
        hy_req_error(req, 500);
        return;
    }
    req->is_internal = true;
    reset_response(req);
    req->loc = named;
    run_phases(req, PH_LOC_REWRITE);
}
