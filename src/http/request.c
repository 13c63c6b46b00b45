/* request.c — the request core: routing (server by Host, location by URI), limits, the content handler,
 * and error responses. Protocol-independent: h1 (and later h2) call in here and get called back through
 * hy_conn_ops_t. */
#include <stdarg.h>
#include <string.h>
#include <stdio.h>
#include <arpa/inet.h>
#include <netinet/in.h>
#include "request.h"

#define HY_FILTERS_MAX 64 /* modules with a filter of one kind (each kind has about a dozen) */
#include "msie.h"
#include "uri.h"
#include "../event/sock.h"
#include "../core/log.h"
#include "../core/clock.h"
#include "../core/httpdate.h"

hy_str_t (*hy_http_charset_of)(hy_req_t *req, hy_str_t content_type);
void (*hy_http_make_trailers)(hy_req_t *req);


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
    int n = snprintf(buf, cap, ", client: %s", hy_req_peer_text(req));
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

void hy_req_log(hy_req_t *req, int level, const char *fmt, ...)
{
    if (level > hy_log_max_level && !req->conn->debug)
        return;
    char msg[2048], ctx[512];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof(msg), fmt, ap);
    va_end(ap);
    hy_req_log_ctx(req, ctx, sizeof(ctx));
    const hy_http_loc_conf_t *lc = req->loc ? req->loc : req->srv ? req->srv->loc : NULL;
    if (req->conn->debug) /* debug_connection: every error_log, whatever its level */
        hy_log_scoped_all(lc ? lc->error_log_scope : 0, level, req->conn->id, "%s%s", msg, ctx);
    else
        hy_log_scoped(lc ? lc->error_log_scope : 0, level, req->conn->id, "%s%s", msg, ctx);
}

const hy_str_t *hy_req_out_header(hy_req_t *req, const char *name)
{
    if (req->headers_out == NULL)
        return NULL;
    hy_header_t *h = req->headers_out->elts;
    for (size_t i = 0; i < req->headers_out->nelts; i++)
        if (hy_str_caseeq(h[i].name, name))
            return &h[i].value;
    return NULL;
}

void hy_req_del_header(hy_req_t *req, const char *name)
{
    if (req->headers_out == NULL)
        return;
    hy_header_t *h = req->headers_out->elts;
    size_t k = 0;
    for (size_t i = 0; i < req->headers_out->nelts; i++)
        if (!hy_str_caseeq(h[i].name, name))
            h[k++] = h[i];
    req->headers_out->nelts = k;
}

void hy_req_weaken_etag(hy_req_t *req)
{
    hy_str_t et = req->etag;
    if (et.len == 0 || (et.len > 2 && et.ptr[0] == 'W' && et.ptr[1] == '/'))
        return;
    if (et.ptr[0] != '"') {
        req->etag = HY_STR_NULL;
        return;
    }
    char *w = hy_palloc(req->pool, et.len + 2);
    w[0] = 'W', w[1] = '/';
    memcpy(w + 2, et.ptr, et.len);
    req->etag = (hy_str_t){w, et.len + 2};
}

void **hy_req_ctx(hy_req_t *req, const hy_module_t *m)
{
    static size_t nmodules; /* the list is fixed at build time: counted once */
    if (req->ctx == NULL) {
        if (nmodules == 0)
            while (hy_modules[nmodules])
                nmodules++;
        req->ctx = hy_pcalloc(req->pool, sizeof(void *) * nmodules);
    }
    return &req->ctx[m->index];
}

hy_str_t hy_http_absolute_url(hy_req_t *req, hy_str_t path)
{
    const hy_http_loc_conf_t *lc = req->loc ? req->loc : req->srv->loc;
    hy_str_t host = req->host; /* nginx: the Host, else (HTTP/1.0 without one) the local address */
    if (lc->server_name_in_redirect) {
        host = HY_STR_NULL;
        if (req->srv->server_names && req->srv->server_names->nelts) {
            hy_server_name_t *sn = req->srv->server_names->elts;
            if (sn[0].kind == 0 && sn[0].name.len)
                host = sn[0].name;
        }
    }
    char ip[INET6_ADDRSTRLEN + 4];
    if (host.len == 0) { /* nginx: the local address the request came in on */
        const struct sockaddr_storage *ss = hy_conn_local_addr(req->conn, NULL);
        host = HY_STR("localhost");
        if (ss && ss->ss_family == AF_INET &&
            hy_inet_ntop(AF_INET, &((const struct sockaddr_in *)ss)->sin_addr, ip, sizeof(ip))) {
            host = (hy_str_t){ip, strlen(ip)};
        } else if (ss && ss->ss_family == AF_INET6 &&
                   hy_inet_ntop(AF_INET6, &((const struct sockaddr_in6 *)ss)->sin6_addr, ip + 1, sizeof(ip) - 2)) {
            ip[0] = '[';
            size_t l = strlen(ip);
            ip[l] = ']';
            host = (hy_str_t){ip, l + 1};
        }
    }
    hy_str_t scheme = req->conn->scheme.len ? req->conn->scheme : HY_STR("http");
    unsigned default_port = hy_str_eq(scheme, "https") ? 443 : 80;
    size_t cap = scheme.len + host.len + path.len + 16;
    char *p = hy_palloc(req->pool, cap);
    int n = snprintf(p, cap, "%.*s://%.*s", (int)scheme.len, scheme.ptr, (int)host.len, host.ptr);
    if (lc->port_in_redirect && req->conn->local_port && req->conn->local_port != default_port)
        n += snprintf(p + n, cap - (size_t)n, ":%u", req->conn->local_port);
    memcpy(p + n, path.ptr, path.len);
    return (hy_str_t){p, (size_t)n + path.len};
}

/* A header value from the configuration may hold request data ($uri decodes %0D%0A): CR, LF and NUL (which RFC
 * 9110 §5.5 forbids in field values, and which would end the header line) are percent-encoded here, once, so no
 * request can add header lines to its response whatever protocol serialises the head, and $sent_http_* shows
 * what was sent. Other control characters go out as they are, as nginx sends them. nginx sends CR/LF raw too;
 * that is the deliberate difference (docs/DIFFERENCES.md). */
static bool must_encode(unsigned char c)
{
    return c == '\r' || c == '\n' || c == '\0';
}

static bool has_ctl8(uint64_t x)
{
    /* a byte < 0x20 or == 0x7f in the 8 bytes of x (bit tricks: "has less than" and "has zero byte"): the cheap
     * test that sends the rare value with a control character to the byte loop */
    const uint64_t ones = 0x0101010101010101ull, highs = 0x8080808080808080ull;
    uint64_t lt = (x - ones * 0x20) & ~x & highs;
    uint64_t d = x ^ (ones * 0x7f);
    uint64_t eq = (d - ones) & ~d & highs;
    return (lt | eq) != 0;
}

static hy_str_t clean_value(hy_pool_t *pool, hy_str_t v)
{
    size_t i = 0;
    for (; i + 8 <= v.len; i += 8) { /* the common case, clean text, 8 bytes at a time */
        uint64_t x;
        memcpy(&x, v.ptr + i, 8);
        if (has_ctl8(x))
            break;
    }
    size_t bad = 0;
    for (; i < v.len; i++) {
        unsigned char c = (unsigned char)v.ptr[i];
        bad += must_encode(c);
    }
    if (bad == 0)
        return v;
    char *p = hy_palloc(pool, v.len + 2 * bad);
    return (hy_str_t){p, hy_pct_escape(p, v.ptr, v.len, must_encode)};
}

void hy_req_finalize_head(hy_req_t *req)
{
    const hy_http_loc_conf_t *lc = req->loc ? req->loc : req->srv ? req->srv->loc : NULL;
    size_t extra = req->headers_out ? req->headers_out->nelts : 0;
    /* room for the protocol's framing fields too (h1 inserts up to three) */
    hy_array_t *a = hy_array_create(req->pool, 8 + HY_RESP_FRAMING_SLOTS + extra, sizeof(hy_header_t));
    hy_header_t *h = a->elts;
    size_t n = 0;
    if (!req->no_own_server)
        h[n++] = (hy_header_t){HY_STR("Server"),
                               lc && lc->server_tokens == HY_TOKENS_OFF ? HY_STR("hayate") : HY_STR("hayate/" HY_VERSION)};
    char *buf = hy_palloc(req->pool, 29 + 20 + 32);
    memcpy(buf, hy_clock_http_date(), 29);
    if (!req->no_own_date)
        h[n++] = (hy_header_t){HY_STR("Date"), {buf, 29}};
    /* Content-Type and ETag come from the configuration (types, default_type, charset) and the file system, never
     * from request data: only Location and the extras (add_header with variables, handlers) are cleaned */
    if (req->content_type.len)
        h[n++] = (hy_header_t){HY_STR("Content-Type"), req->content_type};
    if (req->content_length_n >= 0) {
        char *p = buf + 29;
        h[n++] = (hy_header_t){HY_STR("Content-Length"), {p, hy_fmt_u64(p, (uint64_t)req->content_length_n)}};
    }
    if (req->last_modified >= 0) {
        char *p = buf + 29 + 20;
        h[n++] = (hy_header_t){HY_STR("Last-Modified"), {p, hy_httpdate_format(req->last_modified, p)}};
    }
    if (req->location.len)
        h[n++] = (hy_header_t){HY_STR("Location"), clean_value(req->pool, req->location)};
    req->resp_framing_ix = n;
    for (int i = 0; i < HY_RESP_FRAMING_SLOTS; i++) /* empty slots a protocol fills with its framing fields */
        h[n++] = (hy_header_t){HY_STR_NULL, HY_STR_NULL};
    if (req->etag.len)
        h[n++] = (hy_header_t){HY_STR("ETag"), req->etag};
    for (size_t i = 0; i < extra; i++) {
        hy_header_t *x = (hy_header_t *)req->headers_out->elts + i;
        h[n++] = (hy_header_t){x->name, clean_value(req->pool, x->value)};
    }
    if (req->accept_ranges)
        h[n++] = (hy_header_t){HY_STR("Accept-Ranges"), HY_STR("bytes")};
    a->nelts = n;
    req->resp_headers = a;
}

void hy_req_insert_header(hy_req_t *req, size_t ix, hy_str_t name, hy_str_t value)
{
    hy_array_t *a = req->resp_headers;
    hy_header_t *slot = (hy_header_t *)a->elts + ix;
    if (ix < a->nelts && slot->name.len == 0) { /* a reserved framing slot */
        slot->name = name;
        slot->value = value;
        return;
    }
    hy_array_push(a);
    hy_header_t *h = a->elts;
    if (ix > a->nelts - 1)
        ix = a->nelts - 1;
    memmove(h + ix + 1, h + ix, sizeof(hy_header_t) * (a->nelts - 1 - ix));
    h[ix].name = name;
    h[ix].value = value;
}

const hy_str_t *hy_req_sent_header(hy_req_t *req, hy_str_t name)
{
    if (req->resp_headers == NULL)
        return NULL;
    hy_header_t *h = req->resp_headers->elts;
    for (size_t i = 0; i < req->resp_headers->nelts; i++) {
        if (h[i].name.len != name.len)
            continue;
        size_t k = 0;
        for (; k < name.len; k++) {
            unsigned char a = (unsigned char)h[i].name.ptr[k], b = (unsigned char)name.ptr[k];
            if (b == '_')
                b = '-';
            if (a >= 'A' && a <= 'Z')
                a |= 0x20;
            if (b >= 'A' && b <= 'Z')
                b |= 0x20;
            if (a != b)
                break;
        }
        if (k == name.len)
            return &h[i].value;
    }
    return NULL;
}

void hy_req_unsend_header(hy_req_t *req, const char *name)
{
    if (req->resp_headers == NULL)
        return;
    hy_header_t *h = req->resp_headers->elts;
    for (size_t i = 0; i < req->resp_headers->nelts; i++)
        if (h[i].name.len && hy_str_caseeq(h[i].name, name))
            h[i] = (hy_header_t){HY_STR_NULL, HY_STR_NULL};
}

void hy_req_add_trailer(hy_req_t *req, hy_str_t name, hy_str_t value)
{
    if (req->trailers == NULL)
        req->trailers = hy_array_create(req->pool, 4, sizeof(hy_header_t));
    hy_header_t *h = hy_array_push(req->trailers);
    h->name = name;
    h->value = clean_value(req->pool, value);
}

hy_array_t *hy_req_trailers(hy_req_t *req)
{
    if (!req->trailers_made) {
        req->trailers_made = true;
        if (req->expect_trailers && hy_http_make_trailers != NULL)
            hy_http_make_trailers(req);
    }
    return req->trailers;
}

/* The modules with a header filter and those with a body filter, in hy_modules[] order: found once per process,
 * so a response walks a dozen filters rather than every module. */
typedef struct filters {
    int nheader, nbody;
    const hy_module_t *header[HY_FILTERS_MAX], *body[HY_FILTERS_MAX];
} filters_t;

static const filters_t *filters(void)
{
    static filters_t f;
    static bool done;
    if (HY_LIKELY(done))
        return &f;
    for (int i = 0; hy_modules[i]; i++) {
        if (hy_modules[i]->header_filter && f.nheader < HY_FILTERS_MAX)
            f.header[f.nheader++] = hy_modules[i];
        if (hy_modules[i]->body_filter && f.nbody < HY_FILTERS_MAX)
            f.body[f.nbody++] = hy_modules[i];
    }
    done = true;
    return &f;
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
        /* nginx's header filter: a Location starting with "/" becomes absolute (absolute_redirect) */
        if (req->location.len && req->location.ptr[0] == '/' && req->srv &&
            (req->loc ? req->loc : req->srv->loc)->absolute_redirect)
            req->location = hy_http_absolute_url(req, req->location);
        const filters_t *f = filters();
        for (int i = 0; i < f->nheader; i++) {
            f->header[i]->header_filter(req);
            if (req->_filter_status) { /* a filter replaced the response: answer the error instead */
                int status = req->_filter_status;
                req->_filter_status = 0;
                req->filters_started = false;
                hy_req_error(req, status);
                return;
            }
        }
        hy_req_finalize_head(req);
    }
    /* a subrequest's body is discarded (no body filter), or kept for its parent (HY_SR_OUTPUT: the filters
     * that ask for subrequest bodies) */
    bool sub = req->sr != NULL, out = req->sr_output;
    const filters_t *f = filters();
    for (int i = 0; i < f->nbody && (!sub || out); i++)
        if (!sub || f->body[i]->subrequest_body)
            f->body[i]->body_filter(req, is_final && !req->_filter_held);
    hy_req_ops(req)->send(req, is_final && !req->_filter_held);
}

void hy_req_filter_hold(hy_req_t *req, hy_req_proceed_cb proceed)
{
    req->_filter_held = true;
    req->_proceed = proceed;
}

void hy_req_filter_send(hy_req_t *req, const hy_module_t *m, bool is_final, hy_req_proceed_cb proceed)
{
    req->_filter_held = !is_final;
    req->_proceed = is_final ? NULL : proceed;
    const filters_t *f = filters();
    for (int i = 0; i < f->nbody; i++)
        if (f->body[i]->index > m->index && (req->sr == NULL || f->body[i]->subrequest_body))
            f->body[i]->body_filter(req, is_final);
    hy_req_ops(req)->send(req, is_final);
}

void hy_req_filter_finalize(hy_req_t *req, int status)
{
    req->_filter_status = status;
}

void hy_req_send_more(hy_req_t *req, hy_req_proceed_cb proceed)
{
    req->_proceed = proceed;
    hy_req_send(req, false);
}

void hy_req_proceed(hy_req_t *req)
{
    hy_req_proceed_cb cb = req->_proceed;
    if (cb == NULL || req->finished)
        return;
    req->_proceed = NULL;
    cb(req);
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
    case 495: return "The SSL certificate error.";
    case 496: return "No required SSL certificate was sent.";
    case 497: return "The plain HTTP request was sent to HTTPS port.";
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

bool hy_req_msie_refresh(hy_req_t *req)
{
    hy_http_loc_conf_t *lc = req->loc ? req->loc : req->srv ? req->srv->loc : NULL;
    if (req->location.len == 0 || lc == NULL || lc->msie_refresh != 1 || !hy_http_ua_msie(req->h_user_agent))
        return false;
    size_t len = hy_http_msie_refresh_page(NULL, req->location);
    char *page = hy_palloc(req->pool, len);
    hy_http_msie_refresh_page(page, req->location);
    req->status = 200;
    req->err_status = 0;
    req->status_line = HY_STR_NULL;
    req->location = HY_STR_NULL;
    req->last_modified = -1;
    req->etag = HY_STR_NULL;
    req->accept_ranges = false;
    req->file = NULL;
    hy_outq_clear(&req->body);
    req->content_type = HY_STR("text/html");
    req->content_length_n = (int64_t)len;
    if (req->method_id == HY_M_HEAD)
        req->header_only = true;
    else
        hy_outq_push_mem(&req->body, page, len, NULL, NULL);
    hy_req_send(req, true);
    return true;
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
    int code = status; /* the page's own code: nginx answers 494..497 with "400 Bad Request" */
    if (status >= 494 && status <= 497) {
        status = 400;
        if (code != 494) /* nginx keeps the connection after "Request Header Too Large" */
            req->keepalive = false;
    }
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
    if ((status == 301 || status == 302) && hy_req_msie_refresh(req))
        return;
    const char *reason = hy_http_reason(status);
    const char *why = explain(code);
    if (reason == NULL || (why == NULL && status < 400)) { /* codes without a page: empty body (nginx) */
        req->content_type = HY_STR_NULL;
        req->content_length_n = 0;
        if (req->method_id == HY_M_HEAD)
            req->header_only = true;
        hy_req_send(req, true);
        return;
    }
    hy_str_t pad = hy_http_msie_padding(lc->msie_padding, req->version, req->h_user_agent, status);
    char *body = hy_palloc(req->pool, 512 + pad.len);
    int n = snprintf(body, 512,
                     "<html>\r\n<head><title>%d %s</title></head>\r\n<body>\r\n<center><h1>%d %s</h1></center>\r\n"
                     "%s%s%s<hr><center>%s</center>\r\n</body>\r\n</html>\r\n",
                     status, reason, status, reason, why ? "<center><p>" : "", why ? why : "",
                     why ? "</p></center>\r\n" : "",
                     lc->server_tokens == HY_TOKENS_OFF ? "hayate" : "hayate/" HY_VERSION);
    memcpy(body + n, pad.ptr, pad.len);
    n += (int)pad.len;
    req->content_type = HY_STR("text/html");
    req->content_length_n = n;
    if (req->method_id == HY_M_HEAD)
        req->header_only = true;
    hy_outq_push_mem(&req->body, body, (size_t)n, NULL, NULL);
    hy_req_send(req, true);
}

void hy_req_error(hy_req_t *req, int status)
{
    if (status == 444 || status == 408 || status == 499) {
        /* nginx: close the connection without a response (ngx_http_finalize_request terminates a request that
         * ends with 408 or 499 too: `return 408;` answers nothing, error_page is not consulted; 408/499 logged) */
        req->status = status;
        req->keepalive = false;
        hy_req_ops(req)->abort(req);
        return;
    }
    if (status >= 495 && status <= 497)
        req->keepalive = false; /* nginx: before error_page, so a redirect for 497 closes too */
    hy_http_main_conf_t *m = hy_http_main(req->conn->cycle);
    if (status >= 300 && status != 304 && m && m->error_page && m->error_page(req, status))
        return; /* error_page took it (an internal redirect or a redirect response) */
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

bool hy_http_type_listed(const hy_array_t *types, bool any, bool text_html, hy_str_t ct)
{
    if (any)
        return true;
    size_t n = 0;
    while (n < ct.len && ct.ptr[n] != ';')
        n++;
    while (n > 0 && (ct.ptr[n - 1] == ' ' || ct.ptr[n - 1] == '\t'))
        n--;
    if (n == 0)
        return false;
    if (text_html && n == 9 && strncasecmp(ct.ptr, "text/html", 9) == 0)
        return true;
    const hy_str_t *t = types ? types->elts : NULL;
    for (size_t i = 0; types && i < types->nelts; i++)
        if (t[i].len == n && strncasecmp(t[i].ptr, ct.ptr, n) == 0)
            return true;
    return false;
}

void hy_req_body_rewritten(hy_req_t *req, bool keep_validators)
{
    req->content_length_n = -1;
    req->accept_ranges = false; /* nginx's range filter offers no ranges on a body of unknown length */
    hy_req_del_header(req, "Content-Length");
    hy_req_del_header(req, "Accept-Ranges"); /* a proxied one */
    if (keep_validators) {
        hy_req_weaken_etag(req);
        return;
    }
    req->last_modified = -1;
    hy_req_del_header(req, "Last-Modified");
    req->etag = HY_STR_NULL;
    hy_req_del_header(req, "ETag");
}
