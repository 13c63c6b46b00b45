/* request.c — the request core: routing (server by Host, location by URI), limits, the content handler,
 * and error responses. Protocol-independent: h1 (and later h2) call in here and get called back through
 * hy_conn_ops_t. */
#include <string.h>
#include <stdio.h>
#include "request.h"
#include "h1parse.h"
#include "../core/log.h"
#include "../handlers/static.h"

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
    if (req->method.len)
        n += snprintf(buf + n, cap - (size_t)n, ", request: \"%.*s %.*s HTTP/1.%d\"", (int)req->method.len,
                      req->method.ptr, (int)req->target.len, req->target.ptr, req->version == 10 ? 0 : 1);
    if (req->host.len)
        n += snprintf(buf + n, cap - (size_t)n, ", host: \"%.*s\"", (int)req->host.len, req->host.ptr);
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

void hy_req_send(hy_req_t *req, bool is_final)
{
    /* the filter chain (nginx's header and body filters), in module order */
    if (!req->filters_started) {
        req->filters_started = true;
        for (int i = 0; hy_modules[i]; i++)
            if (hy_modules[i]->header_filter)
                hy_modules[i]->header_filter(req);
    }
    for (int i = 0; hy_modules[i]; i++)
        if (hy_modules[i]->body_filter)
            hy_modules[i]->body_filter(req, is_final);
    req->conn->ops->send(req, is_final);
}

void hy_req_error(hy_req_t *req, int status)
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
    req->content_length_n = -1;
    req->last_modified = -1;
    req->etag = HY_STR_NULL;
    req->accept_ranges = false;
    hy_outq_clear(&req->body);
    if (status == 304 || status == 204 || status < 200) {
        req->header_only = true;
        req->content_length_n = status == 204 || status == 304 ? -1 : 0;
        hy_req_send(req, true);
        return;
    }
    const char *reason = hy_http_reason(status);
    char *body = hy_palloc(req->pool, 320);
    int n = snprintf(body, 320,
                     "<html>\r\n<head><title>%d %s</title></head>\r\n<body>\r\n<center><h1>%d %s</h1></center>\r\n"
                     "<hr><center>%s</center>\r\n</body>\r\n</html>\r\n",
                     status, reason ? reason : "", status, reason ? reason : "",
                     lc->server_tokens == HY_TOKENS_OFF ? "hayate" : "hayate/" HY_VERSION);
    req->content_type = HY_STR("text/html");
    req->content_length_n = n;
    if (req->method_id == HY_M_HEAD)
        req->header_only = true;
    hy_outq_push_mem(&req->body, body, (size_t)n, NULL, NULL);
    hy_req_send(req, true);
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
    if (host == NULL && abs_host.ptr == NULL && req->version >= 11) {
        log_bad(req, "client sent HTTP/1.1 request without \"Host\" header");
        hy_req_error(req, 400);
        return;
    }
    hy_str_t h = abs_host.ptr ? abs_host : host ? *host : HY_STR_NULL;
    if (h.ptr) {
        char *copy = hy_pstrndup(req->pool, h.ptr, h.len);
        ssize_t hl = hy_http_validate_host(copy, h.len);
        if (hl < 0) {
            log_bad(req, "client sent invalid host header");
            hy_req_error(req, 400);
            return;
        }
        req->host = (hy_str_t){copy, (size_t)hl};
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
        if (slot && *slot == NULL)
            *slot = v;
    }
    if (req->h_expect && req->version >= 11 && hy_str_caseeq(*req->h_expect, "100-continue"))
        req->expect_continue = true;

    req->srv = hy_http_find_server(req->conn->addr, req->host.ptr, req->host.len);
    req->loc = hy_http_find_location(req->srv, req->uri.ptr, req->uri.len);
    if (req->loc == NULL)
        req->loc = req->srv->loc;
    if (req->loc->internal == 1 && !req->is_internal) {
        hy_req_error(req, 404);
        return;
    }
    if (req->loc->client_max_body_size > 0 && req->content_length > req->loc->client_max_body_size) {
        char what[128];
        snprintf(what, sizeof(what), "client intended to send too large body: %lld bytes",
                 (long long)req->content_length);
        hy_log_conn(HY_LOG_ERR, req->conn->id, "%s, client: %s", what, req->conn->peer_text);
        hy_req_error(req, 413);
        return;
    }
    if (req->loc->handler)
        req->loc->handler(req);
    else
        hy_static_handler(req);
}
