/* h2_recv.c — the frames an HTTP/2 client sends (see h2.c for the connection): each frame checked (h2frame.h), then
 * applied to the connection and its streams (RFC 9113 §5.1 states, §6.9 windows), header blocks gathered across
 * CONTINUATION frames and decoded (hpack.h) into requests checked as nginx's HTTP/2 module checks them.
 *
 * Stream states: a stream is idle until its HEADERS (ids above max_sid), open while in h->streams (remote_closed
 * once the client ended its side, eof_sent once we did), closed when both sides ended or either reset it; the last
 * closed ones are remembered (closed_ids, rst_sent) so frames on them are judged as RFC 9113 §5.1 and nginx do. */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "h2.h"
#include "h2_int.h"
#include "../http/body.h"
#include "../http/phases.h"
#include "../http/uri.h"
#include "../core/log.h"
#include "../core/clock.h"

#define RESET_MIN 200 /* client resets tolerated before the ratio to completed responses counts */

/* A protocol error of the client's: logged as the session's verdict, answered with GOAWAY. */
static void proto_error(h2conn_t *h, uint32_t code, const char *what)
{
    if (h->fatal)
        return;
    hy_log_conn(HY_LOG_INFO, h->c->id, "client sent invalid HTTP/2: %s (%s), client: %s", what,
                hy_h2_error_name(code), h->c->peer_text);
    hy_h2_conn_error(h, code);
}

static h2stream_t *find_stream(h2conn_t *h, int32_t id)
{
    for (h2stream_t *st = h->streams; st; st = st->next)
        if (st->id == id)
            return st;
    return NULL;
}

/* A stream error: the stream (ours or only an id) is reset. */
static void stream_error(h2conn_t *h, int32_t id, uint32_t code)
{
    h2stream_t *st = find_stream(h, id);
    hy_h2_rst(h, st, id, code);
}

/* ---- malformed requests, checked as nginx's HTTP/2 module does ---- */

/* The first fault of a request: its error log line, logged and answered 400 once the block is whole. */
static void malformed(h2stream_t *st, const char *fmt, ...) HY_PRINTF(2, 3);
static void malformed(h2stream_t *st, const char *fmt, ...)
{
    if (st->bad)
        return;
    st->bad = hy_palloc(st->req.pool, 512);
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(st->bad, 512, fmt, ap);
    va_end(ap);
}

#define SHOWN(s) (int)HY_MIN((s).len, 256), (s).ptr

/* RFC 9113 §8.2.1 as nginx reads it: a name of lower-case letters, digits and '-' ('_' with underscores_in_headers);
 * upper case, controls, space, DEL or ':' (past a pseudo-header's first) refuse the request, other bytes make an
 * invalid name (*invalid: ignore_invalid_headers drops it); a value with NUL, CR or LF refuses it. */
static bool check_field(h2conn_t *h, h2stream_t *st, hy_str_t n, hy_str_t v, bool *invalid)
{
    for (size_t i = n.ptr[0] == ':'; i < n.len; i++) {
        unsigned char c = (unsigned char)n.ptr[i];
        if ((c >= 'a' && c <= 'z') || c == '-' || (c >= '0' && c <= '9') ||
            (c == '_' && h->dsrv->underscores_in_headers))
            continue;
        if (c <= 0x20 || c == 0x7f || c == ':' || (c >= 'A' && c <= 'Z')) {
            malformed(st, "client sent invalid header name: \"%.*s\"", SHOWN(n));
            return false;
        }
        *invalid = true;
    }
    for (size_t i = 0; i < v.len; i++) {
        if (v.ptr[i] == '\0' || v.ptr[i] == '\n' || v.ptr[i] == '\r') {
            malformed(st, "client sent header \"%.*s\" with invalid value: \"%.*s\"", SHOWN(n), SHOWN(v));
            return false;
        }
    }
    return true;
}

/* :path as nginx's ngx_http_parse_uri takes it: '/' first, no control byte, space or DEL */
static bool path_ok(hy_str_t v)
{
    if (v.ptr[0] != '/')
        return false;
    for (size_t i = 1; i < v.len; i++)
        if ((unsigned char)v.ptr[i] <= 0x20 || v.ptr[i] == 0x7f)
            return false;
    return true;
}

static bool method_ok(hy_str_t v)
{
    for (size_t i = 0; i < v.len; i++)
        if ((v.ptr[i] < 'A' || v.ptr[i] > 'Z') && v.ptr[i] != '_' && v.ptr[i] != '-')
            return false;
    return true;
}

static bool scheme_ok(hy_str_t v)
{
    for (size_t i = 0; i < v.len; i++) {
        char c = (char)(v.ptr[i] | 0x20);
        if (c >= 'a' && c <= 'z')
            continue;
        if (i > 0 && ((v.ptr[i] >= '0' && v.ptr[i] <= '9') || v.ptr[i] == '+' || v.ptr[i] == '-' || v.ptr[i] == '.'))
            continue;
        return false;
    }
    return true;
}

/* RFC 9113 §8.3.1: each pseudo-header once, before the regular fields, none unknown, none empty */
static void pseudo_header(h2stream_t *st, hy_str_t n, hy_str_t v, unsigned sidx)
{
    /* the decoder names the static table's entry (:authority 1, :method 2-3, :path 4-5, :scheme 6-7): no compare */
    enum { P_NONE, P_AUTHORITY, P_METHOD, P_PATH, P_SCHEME };
    static const uint8_t which[8] = {P_NONE, P_AUTHORITY, P_METHOD, P_METHOD, P_PATH, P_PATH, P_SCHEME, P_SCHEME};
    int w = sidx < 8 ? which[sidx] : P_NONE;
    if (st->regular_seen) {
        malformed(st, "client sent out of order pseudo-headers");
    } else if (w == P_PATH) {
        if (st->path.ptr)
            malformed(st, "client sent duplicate :path header");
        else if (v.len == 0)
            malformed(st, "client sent empty :path header");
        else if (!path_ok(v))
            malformed(st, "client sent invalid :path header: \"%.*s\"", SHOWN(v));
        st->path = v;
    } else if (w == P_METHOD) {
        if (st->method.ptr)
            malformed(st, "client sent duplicate :method header");
        else if (v.len == 0)
            malformed(st, "client sent empty :method header");
        else if (!method_ok(v))
            malformed(st, "client sent invalid method: \"%.*s\"", SHOWN(v));
        st->method = v;
    } else if (w == P_SCHEME) {
        if (st->scheme.ptr)
            malformed(st, "client sent duplicate :scheme header");
        else if (v.len == 0)
            malformed(st, "client sent empty :scheme header");
        else if (!scheme_ok(v))
            malformed(st, "client sent invalid :scheme header: \"%.*s\"", SHOWN(v));
        st->scheme = v;
    } else if (w == P_AUTHORITY) {
        char *copy = hy_pstrndup(st->req.pool, v.ptr, v.len);
        if (st->authority.ptr)
            malformed(st, "client sent duplicate \":authority\" header");
        else if (hy_http_validate_host(copy, v.len) <= 0)
            malformed(st, "client sent invalid \":authority\" header");
        st->authority = v;
    } else {
        malformed(st, "client sent unknown pseudo-header \"%.*s\"", SHOWN(n));
    }
}

static bool request_line_ok(h2stream_t *st)
{
    if (st->method.ptr == NULL)
        malformed(st, "client sent no :method header");
    else if (st->scheme.ptr == NULL)
        malformed(st, "client sent no :scheme header");
    else if (st->path.ptr == NULL)
        malformed(st, "client sent no :path header");
    return st->bad == NULL;
}

/* One field of a request's header block (hy_hpack_decode's callback). */
static int on_field(void *ud, const hy_hpack_field_t *f)
{
    h2stream_t *st = ud;
    h2conn_t *h = st->h;
    size_t namelen = f->name_len, valuelen = f->value_len;
    /* large_client_header_buffers as nginx reads it for HTTP/2: a name or a value up to its size, all names and
     * values together up to size * number; and, against a list of tiny fields, RFC 9113 §6.5.2's 32 bytes per
     * field (what SETTINGS_MAX_HEADER_LIST_SIZE announces) may not pass the size * number either */
    st->header_bytes += namelen + valuelen;
    st->header_fields++;
    if (namelen <= h->field_limit && valuelen <= h->field_limit && st->header_bytes > h->header_limit) {
        /* fields that fit one by one but not together (indexed ones cost their decoded size): as nginx, a
         * connection error */
        hy_log_conn(HY_LOG_INFO, h->c->id, "client sent too large header, client: %s", h->c->peer_text);
        hy_h2_conn_error(h, HY_H2_ENHANCE_YOUR_CALM);
        return HY_HPACK_CB_ABORT;
    }
    if (namelen > h->field_limit || valuelen > h->field_limit || st->header_bytes > h->header_limit ||
        32 * (uint64_t)st->header_fields > h->header_limit) {
        hy_log_conn(HY_LOG_INFO, h->c->id, "client sent too large header list (header list bomb), client: %s",
                    h->c->peer_text);
        st->too_large = true; /* the stream is reset (INTERNAL_ERROR), the block decoded to its end */
        return HY_HPACK_CB_QUIET;
    }
    if (st->bad)
        return HY_HPACK_CB_OK; /* the rest of a malformed block is decoded (HPACK state) but not kept */
    if (namelen == 0) { /* nginx: a connection error */
        hy_log_conn(HY_LOG_INFO, h->c->id, "client sent zero header name length, client: %s", h->c->peer_text);
        hy_h2_conn_error(h, HY_H2_PROTOCOL_ERROR);
        return HY_HPACK_CB_ABORT;
    }
    hy_pool_t *p = st->req.pool;
    char *nv = hy_palloc(p, namelen + valuelen + 2); /* name and value, each NUL-terminated, in one piece */
    memcpy(nv, f->name, namelen);
    nv[namelen] = '\0';
    memcpy(nv + namelen + 1, f->value, valuelen);
    nv[namelen + 1 + valuelen] = '\0';
    hy_str_t n = {nv, namelen}, v = {nv + namelen + 1, valuelen};
    bool invalid = false;
    if (f->static_idx == 0) { /* the static table's names are valid lower-case names */
        if (!check_field(h, st, n, v, &invalid))
            return HY_HPACK_CB_OK;
    } else {
        for (size_t i = 0; i < valuelen; i++) {
            if (v.ptr[i] == '\0' || v.ptr[i] == '\n' || v.ptr[i] == '\r') {
                malformed(st, "client sent header \"%.*s\" with invalid value: \"%.*s\"", SHOWN(n), SHOWN(v));
                return HY_HPACK_CB_OK;
            }
        }
    }
    if (n.ptr[0] == ':') {
        pseudo_header(st, n, v, f->static_idx);
        return HY_HPACK_CB_OK;
    }
    if (!st->regular_seen) { /* the pseudo-headers are complete: the request line must be */
        st->regular_seen = true;
        if (!request_line_ok(st))
            return HY_HPACK_CB_OK;
    }
    if (invalid && h->dsrv->ignore_invalid_headers) {
        hy_log_conn(HY_LOG_INFO, h->c->id, "client sent invalid header: \"%.*s\", client: %s", (int)n.len, n.ptr,
                    h->c->peer_text);
        return HY_HPACK_CB_OK;
    }
    if (hy_str_eq(n, "priority")) { /* RFC 9218: several fields make one list (start_request parses it) */
        if (st->prio_field.ptr == NULL) {
            st->prio_field = v;
        } else {
            size_t l = st->prio_field.len + 2 + v.len;
            char *j = hy_palloc(p, l);
            memcpy(j, st->prio_field.ptr, st->prio_field.len);
            memcpy(j + st->prio_field.len, ", ", 2);
            memcpy(j + st->prio_field.len + 2, v.ptr, v.len);
            st->prio_field = (hy_str_t){j, l};
        }
    }
    hy_header_t *hd = hy_array_push(st->headers);
    hd->name = n;
    hd->value = v;
    return HY_HPACK_CB_OK;
}

/* the fields of a block nobody takes (trailers, a refused or ignored stream): decoded for the table only */
static int quiet_field(void *ud, const hy_hpack_field_t *f)
{
    (void)ud, (void)f;
    return HY_HPACK_CB_QUIET;
}

/* ---- RFC 9218 priority signals: the request's priority header, then PRIORITY_UPDATE frames ---- */

static void start_priority(h2conn_t *h, h2stream_t *st)
{
    hy_h2_prio_t prio = {HY_H2_URGENCY_DEFAULT, false};
    if (st->prio_field.len)
        hy_h2_prio_parse(st->prio_field.ptr, st->prio_field.len, &prio); /* a malformed one: the defaults */
    /* a PRIORITY_UPDATE that came before the request is the more recent signal (RFC 9218 §7.1) */
    for (size_t i = 0; i < h->prio_npending; i++) {
        if (h->prio_pending[i].id == st->id) {
            prio = h->prio_pending[i].prio;
            memmove(&h->prio_pending[i], &h->prio_pending[i + 1],
                    (h->prio_npending - i - 1) * sizeof(h->prio_pending[0]));
            h->prio_npending--;
            break;
        }
    }
    st->prio = prio;
}

/* PRIORITY_UPDATE (RFC 9218 §7.1): on stream 0, naming a request stream; an open stream is rescheduled, an idle
 * one keeps the signal for its request (a few at most), a closed one ignores it, as does a value that does not
 * parse or is above PRIO_FIELD_MAX. */
static void on_priority_update(h2conn_t *h, const hy_h2_frame_t *f)
{
    int32_t id = (int32_t)f->value;
    hy_h2_prio_t prio = {HY_H2_URGENCY_DEFAULT, false};
    if (f->len > PRIO_FIELD_MAX || (id & 1) == 0 || !hy_h2_prio_parse((const char *)f->data, f->len, &prio))
        return;
    h2stream_t *st = find_stream(h, id);
    if (st) {
        if (!st->reset)
            hy_h2_set_priority(st, prio);
    } else if (id > h->max_sid) {
        size_t i;
        for (i = 0; i < h->prio_npending && h->prio_pending[i].id != id; i++)
            ;
        if (i == PRIO_PENDING_MAX) { /* full: the oldest goes */
            memmove(&h->prio_pending[0], &h->prio_pending[1], (PRIO_PENDING_MAX - 1) * sizeof(h->prio_pending[0]));
            i = PRIO_PENDING_MAX - 1;
        } else if (i == h->prio_npending) {
            h->prio_npending++;
        }
        h->prio_pending[i].id = id;
        h->prio_pending[i].prio = prio;
    }
}

/* The request's cookie fields become the first one, their values joined by "; "; the others leave the list. */
static void join_cookies(hy_pool_t *p, hy_array_t *headers, size_t len)
{
    hy_header_t *hd = headers->elts;
    char *v = hy_palloc(p, len), *w = v;
    size_t first = SIZE_MAX, k = 0;
    for (size_t i = 0; i < headers->nelts; i++) {
        if (hy_str_eq(hd[i].name, "cookie")) {
            if (w != v) {
                memcpy(w, "; ", 2);
                w += 2;
            }
            memcpy(w, hd[i].value.ptr, hd[i].value.len);
            w += hd[i].value.len;
            if (first != SIZE_MAX)
                continue;
            first = k;
        }
        hd[k++] = hd[i];
    }
    hd[first].value = (hy_str_t){v, (size_t)(w - v)};
    headers->nelts = k;
}

/* A malformed request's 400, logged with nginx's line; error_page 400 of the default server applies (nginx's request
 * starts with its URI changes allowed and an empty URI) */
static void refuse(hy_req_t *req, const char *why)
{
    hy_req_log(req, HY_LOG_INFO, "%s", why);
    if (req->uri.ptr == NULL)
        req->uri = (hy_str_t){"", 0};
    req->uri_changes = HY_MAX_URI_CHANGES + 1; /* as hy_req_process */
    hy_req_error(req, 400);
}

static void start_request(h2conn_t *h, h2stream_t *st, bool end_stream)
{
    hy_req_t *req = &st->req;
    hy_pool_t *p = req->pool;
    req->conn = h->c;
    req->version = 20;
    req->content_length = -1;
    req->content_length_n = -1;
    req->last_modified = -1;
    req->srv = h->dsrv;
    req->start_ms = (uint64_t)hy_clock_time_ms();
    req->conn_requests = ++h->num_requests;
    req->keepalive = true;
    hy_conn_count_request(h->c);
    st->started = true;
    st->rate_start_ms = hy_clock_now_ms();
    start_priority(h, st);
    st->rb_end = end_stream;
    req->body_follows = !end_stream;
    /* :authority stands for Host (RFC 9113 §8.3.1); a Host field the client sent as well is kept first */
    bool has_host = false, host_differs = false, cl_bad = false;
    const char *conn_field = NULL; /* RFC 9113 §8.2.2: connection-specific fields make a request malformed */
    size_t te = 0;
    bool te_bad = false;
    hy_header_t *hd = st->headers->elts;
    size_t cookies = 0, cookie_len = 0;
    for (size_t i = 0; i < st->headers->nelts; i++) {
        if (hy_str_eq(hd[i].name, "cookie")) {
            cookies++;
            cookie_len += hd[i].value.len + 2;
        } else if (hy_str_eq(hd[i].name, "host")) {
            has_host = true;
            host_differs |= st->authority.ptr && !hy_str_eq_str(hd[i].value, st->authority);
        } else if (hy_str_eq(hd[i].name, "content-length")) {
            if (req->content_length < 0 && !cl_bad) {
                req->content_length = hy_parse_int(hd[i].value.ptr, hd[i].value.len);
                cl_bad = req->content_length < 0;
            }
        } else if (hy_str_eq(hd[i].name, "te")) {
            te++;
            te_bad |= !hy_str_caseeq(hd[i].value, "trailers");
        } else if (conn_field == NULL) {
            if (hy_str_eq(hd[i].name, "connection"))
                conn_field = "Connection";
            else if (hy_str_eq(hd[i].name, "keep-alive"))
                conn_field = "Keep-Alive";
            else if (hy_str_eq(hd[i].name, "transfer-encoding"))
                conn_field = "Transfer-Encoding";
            else if (hy_str_eq(hd[i].name, "upgrade"))
                conn_field = "Upgrade";
        }
    }
    if (cookies > 1) /* crumbs made one field again, joined by "; " (RFC 9113 §8.2.3), as nginx passes it on */
        join_cookies(p, st->headers, cookie_len);
    if (!has_host && st->authority.len) {
        hy_header_t *x = hy_array_push(st->headers);
        x->name = HY_STR("host");
        x->value = st->authority;
        req->implied_headers = 1;
    }
    req->headers = st->headers->elts;
    req->num_headers = st->headers->nelts;
    req->method = st->method;
    req->method_id = hy_http_method_id(st->method);
    req->target = st->path;
    size_t rl = st->method.len + st->path.len + 10; /* "METHOD PATH HTTP/2.0" */
    char *line = hy_palloc(p, rl);
    if (st->method.len)
        memcpy(line, st->method.ptr, st->method.len);
    line[st->method.len] = ' ';
    if (st->path.len) /* CONNECT has none */
        memcpy(line + st->method.len + 1, st->path.ptr, st->path.len);
    memcpy(line + st->method.len + 1 + st->path.len, " HTTP/2.0", 9);
    req->request_line = (hy_str_t){line, rl};
    /* $request_length: the header block as it came (nginx's), without padding and priority fields */
    req->request_length = (int64_t)h->block_len;
    hy_conn_set_state(h->c, HY_CONN_WRITING);
    /* keepalive_requests and keepalive_time bound the connection's streams: the last one is announced by GOAWAY */
    hy_http_loc_conf_t *lc = h->dsrv->loc;
    if (!h->goaway && ((lc->keepalive_requests > 0 && h->num_requests >= (uint64_t)lc->keepalive_requests) ||
                       hy_clock_time_ms() - (int64_t)h->c->start_ms > lc->keepalive_time_ms)) {
        hy_h2_goaway(h, st->id);
    }
    if (st->too_large) {
        hy_req_error(req, 413);
        return;
    }
    if (!st->regular_seen)
        request_line_ok(st);
    if (st->bad) {
        refuse(req, st->bad);
        return;
    }
    /* then nginx's checks of the whole head, in its order (ngx_http_v2_run_request) */
    const char *bad = NULL;
    char cline[64];
    if (conn_field) {
        snprintf(cline, sizeof(cline), "client sent \"%s\" header", conn_field);
        bad = cline;
    } else if (te > 1 || te_bad) {
        bad = "client sent invalid \"TE\" header";
    } else if (!has_host && st->authority.ptr == NULL) {
        bad = "client sent neither \":authority\" nor \"Host\" header";
    } else if (host_differs) { /* one request, two names */
        bad = "client sent \":authority\" and \"Host\" headers with different values";
    } else if (cl_bad) {
        bad = "client sent invalid \"Content-Length\" header";
    } else if (req->content_length > 0 && end_stream) {
        bad = "client prematurely closed stream";
    }
    if (bad) {
        refuse(req, bad);
        return;
    }
    if (req->method_id == HY_M_CONNECT || req->method_id == HY_M_TRACE) { /* nginx: 405 whatever the target */
        hy_req_log(req, HY_LOG_INFO, "client sent %s method", req->method_id == HY_M_CONNECT ? "CONNECT" : "TRACE");
        hy_req_error(req, 405);
        return;
    }
    hy_req_process(req);
}


/* ---- frames on closed streams ---- */

static bool reset_by_us(h2conn_t *h, int32_t id)
{
    for (size_t i = 0; i < HY_ARRAY_SIZE(h->rst_sent); i++)
        if (h->rst_sent[i] == id)
            return true;
    return false;
}

/* DATA or HEADERS on a client stream that is closed. Once the client had ended or reset its side, the frame is a
 * STREAM_CLOSED stream error (RFC 9113 §5.1), answered once per stream; a second HEADERS without END_STREAM
 * (trailers that do not end the request, RFC 9113 §8.1) on a stream we reset while the client was sending is a
 * PROTOCOL_ERROR stream error. Frames the client sent before it saw our RST_STREAM are otherwise ignored (RFC 9113
 * §5.4.2), as are frames on streams closed long ago. */
static void closed_stream_frame(h2conn_t *h, const hy_h2_hdr_t *hd)
{
    uint8_t *how = hy_h2_closed_how(h, (int32_t)hd->sid);
    if (how == NULL || (*how & HY_H2_CLOSED_ANSWERED))
        return;
    uint32_t code;
    if (*how & HY_H2_CLOSED_CLIENT)
        code = HY_H2_STREAM_CLOSED;
    else if (hd->type == HY_H2_HEADERS && !(hd->flags & HY_H2_F_END_STREAM))
        code = HY_H2_PROTOCOL_ERROR;
    else
        return;
    *how |= HY_H2_CLOSED_ANSWERED;
    hy_log_conn(HY_LOG_INFO, h->c->id, "client sent %s frame for closed stream %u, client: %s",
                hd->type == HY_H2_DATA ? "DATA" : "HEADERS", hd->sid, h->c->peer_text);
    hy_h2_rst(h, NULL, (int32_t)hd->sid, code);
}

/* ---- HEADERS and CONTINUATION ---- */

enum { BLOCK_NEW = 1, BLOCK_TRAILERS, BLOCK_IGNORE };

/* A new stream's HEADERS frame (its block may continue): the stream, or NULL when refused or ignored. */
static h2stream_t *new_stream(h2conn_t *h, const hy_h2_hdr_t *hd, const hy_h2_frame_t *f)
{
    int32_t sid = (int32_t)hd->sid;
    if (h->goaway && sid > h->goaway_last)
        return NULL; /* after our GOAWAY: ignored (RFC 9113 §6.8) */
    if (f->dep == hd->sid) { /* RFC 9113 §5.3.1 allows a stream error; nginx makes it a connection error */
        hy_log_conn(HY_LOG_INFO, h->c->id, "client sent HEADERS frame for stream %d with incorrect dependency, "
                    "client: %s", sid, h->c->peer_text);
        hy_h2_conn_error(h, HY_H2_PROTOCOL_ERROR);
        return NULL;
    }
    if (h->nstreams >= (size_t)h->h2sc->max_concurrent_streams) {
        if (h->settings_acked) { /* the client knew the limit: a connection error */
            h->refused++;
            proto_error(h, HY_H2_PROTOCOL_ERROR, "request HEADERS: max concurrent streams exceeded");
        } else {
            hy_h2_rst(h, NULL, sid, HY_H2_REFUSED_STREAM);
        }
        return NULL;
    }
    if (!h->settings_acked && !(hd->flags & HY_H2_F_END_STREAM) &&
        h->h2sc->body_preread_size < HY_H2_DEFAULT_WINDOW) {
        /* a body may come before the client knows our smaller stream window: refused, as nginx does */
        hy_log_conn(HY_LOG_INFO, h->c->id, "client sent stream with data before settings were acknowledged, "
                    "client: %s", h->c->peer_text);
        hy_h2_rst(h, NULL, sid, HY_H2_REFUSED_STREAM);
        return NULL;
    }
    hy_pool_t *pool = hy_pool_take();
    h2stream_t *st = hy_pcalloc(pool, sizeof(*st));
    st->req.pool = pool;
    st->h = h;
    st->id = sid;
    st->headers = hy_array_create(pool, 16, sizeof(hy_header_t));
    st->body_max = -1;
    st->prio = (hy_h2_prio_t){HY_H2_URGENCY_DEFAULT, false};
    st->send_window = h->peer_iws;
    st->recv_window = st->recv_max = h->local_iws;
    st->remote_closed = hd->flags & HY_H2_F_END_STREAM;
    st->linked = true;
    st->next = h->streams;
    if (h->streams)
        h->streams->prev = st;
    h->streams = st;
    h->nstreams++;
    h->last_proc = sid;
    /* client_header_timeout until the header block is whole (on_timer), as nginx's per stream */
    uint64_t now = hy_clock_now_ms(), hto = (uint64_t)h->dsrv->client_header_timeout_ms;
    st->head_start_ms = now;
    if (h->nstreams == 1) { /* from the idle timeout to send_timeout's watch over the active streams */
        uint64_t sto = (uint64_t)h->dsrv->loc->send_timeout_ms;
        h->send_due = now + sto;
        h->send_mark = h->c->sock.bytes_out;
        hy_timer_link(h->c->sock.loop, &h->timer, HY_MIN(sto, hto));
    } else if (!hy_timer_is_linked(&h->timer) || h->timer.expire_at > now + hto) {
        hy_timer_link(h->c->sock.loop, &h->timer, hto);
    }
    if (h->c->is_idle || h->c->state == HY_CONN_NEW)
        hy_conn_set_state(h->c, HY_CONN_READING);
    return st;
}

/* An HPACK integer at p[*i] of more than 4 octets, all continuing (the prefix all ones): nginx refuses it
 * (NGX_HTTP_V2_INT_OCTETS) as soon as it sees it, whatever follows. 1: such an integer, 0: a whole one (*i past it,
 * *v its value), -1: the bytes end inside it. */
static int int_overlong(const uint8_t *p, size_t len, size_t *i, unsigned n, size_t *v)
{
    size_t mask = ((size_t)1 << n) - 1, k = *i;
    *v = p[k++] & mask;
    if (*v == mask) {
        for (unsigned octets = 1;; octets++) {
            if (octets >= 4)
                return 1;
            if (k >= len)
                return -1;
            uint8_t b = p[k++];
            *v += (size_t)(b & 0x7f) << (7 * (octets - 1));
            if (!(b & 0x80))
                break;
        }
    }
    *i = k;
    return 0;
}

/* The first bytes of a header block whose frame has not all arrived: whether an integer in them is one nginx
 * refuses at once (COMPRESSION_ERROR before the frame's end, which may never come). A pre-scan of its own, not
 * hy_hpack_decode's answer: the decoder takes only a whole block (decoding changes the dynamic table, so a block
 * cannot be decoded twice), and nginx's limit here (4 octets) is not the decoder's (6). */
static bool block_prefix_bad(const uint8_t *p, size_t len)
{
    size_t i = 0, v;
    while (i < len) {
        uint8_t b = p[i];
        unsigned n = b & 0x80 ? 7 : (b & 0xe0) == 0x20 ? 5 : b & 0x40 ? 6 : 4;
        int r = int_overlong(p, len, &i, n, &v);
        if (r)
            return r > 0;
        if ((b & 0x80) || (b & 0xe0) == 0x20)
            continue;
        for (int strings = v == 0 ? 2 : 1; strings > 0; strings--) {
            if (i >= len)
                return false;
            r = int_overlong(p, len, &i, 7, &v);
            if (r)
                return r > 0;
            if (v > len - i)
                return false;
            i += v;
        }
    }
    return false;
}

/* A whole header block: decoded (always: the table stays in step), then the request starts or the trailers end
 * the body. */
static void block_done(h2conn_t *h, int mode, int32_t sid, uint8_t flags, const uint8_t *b, size_t len, bool one)
{
    h->cont_sid = 0;
    bool end = flags & HY_H2_F_END_STREAM;
    h2stream_t *st = mode == BLOCK_IGNORE ? NULL : find_stream(h, sid);
    int rc;
    if (mode == BLOCK_NEW && st && !st->reset && !st->started)
        rc = hy_hpack_decode(&h->dec, b, len, on_field, st);
    else
        rc = hy_hpack_decode(&h->dec, b, len, quiet_field, NULL);
    if (rc < 0) {
        if (h->fatal)
            return;
        if (one && rc == HY_HPACK_ERR_TRUNCATED) {
            /* the block of one frame ends inside a field representation (RFC 7541 §6): nginx answers it as a frame
             * of incorrect length, in its words; a block of several frames, or one that failed before, is a
             * COMPRESSION_ERROR */
            hy_log_conn(HY_LOG_INFO, h->c->id, "client sent header block with incorrect length, client: %s",
                        h->c->peer_text);
            hy_h2_conn_error(h, HY_H2_FRAME_SIZE_ERROR);
            return;
        }
        proto_error(h, HY_H2_COMPRESSION_ERROR, "header block cannot be decoded");
        return;
    }
    if (h->fatal || st == NULL)
        return;
    if (mode == BLOCK_NEW) {
        if (st->too_large) {
            hy_h2_rst(h, st, 0, HY_H2_INTERNAL_ERROR);
            return;
        }
        if (!st->started && !st->reset)
            start_request(h, st, end);
        return;
    }
    if (!end) { /* trailers without END_STREAM: malformed (RFC 9113 §8.1), the stream reset */
        hy_log_conn(HY_LOG_INFO, h->c->id, "client sent trailers without END_STREAM, client: %s", h->c->peer_text);
        if (!st->reset)
            hy_h2_rst(h, st, 0, HY_H2_PROTOCOL_ERROR);
        return;
    }
    st->remote_closed = true;
    if (st->started) /* trailers end the body */
        hy_h2_body_end(st);
}

static void on_headers(h2conn_t *h, const hy_h2_hdr_t *hd, const hy_h2_frame_t *f)
{
    int32_t sid = (int32_t)hd->sid;
    int mode;
    if ((sid & 1) == 0) {
        proto_error(h, HY_H2_PROTOCOL_ERROR, "request HEADERS: invalid stream_id");
        return;
    }
    if (sid > h->max_sid) {
        h->max_sid = sid;
        /* new streams in the bytes of one read, refused ones too */
        if (++h->new_in_read > 2 * (uint64_t)h->h2sc->max_concurrent_streams) {
            hy_h2_calm_down(h, "client sent too many streams at once%s", "");
            return;
        }
        mode = new_stream(h, hd, f) ? BLOCK_NEW : BLOCK_IGNORE;
        if (h->fatal)
            return;
    } else {
        h2stream_t *st = find_stream(h, sid);
        if (st && st->remote_closed) { /* RFC 9113 §5.1: half-closed (remote) */
            hy_h2_rst(h, st, 0, HY_H2_STREAM_CLOSED);
            mode = BLOCK_IGNORE;
        } else if (st) {
            mode = BLOCK_TRAILERS;
        } else if (reset_by_us(h, sid)) {
            closed_stream_frame(h, hd);
            mode = BLOCK_IGNORE;
        } else {
            /* a new stream must use a higher id than all before (RFC 9113 §5.1.1): the stream is closed, or was
             * implicitly closed while idle; nginx ends the connection */
            hy_log_conn(HY_LOG_INFO, h->c->id, "client sent HEADERS frame with incorrect identifier %d, the last "
                        "was %d, client: %s", sid, h->max_sid, h->c->peer_text);
            hy_h2_conn_error(h, HY_H2_PROTOCOL_ERROR);
            return;
        }
    }
    h->continuations = 0;
    h->block_len = f->len;
    if (hd->flags & HY_H2_F_END_HEADERS) {
        block_done(h, mode, sid, hd->flags, f->data, f->len, true);
        return;
    }
    if (h->block_cap < f->len) {
        h->block_cap = HY_MAX(f->len, (size_t)HY_H2_DEFAULT_FRAME);
        free(h->block);
        h->block = hy_alloc(h->block_cap);
    }
    if (f->len) /* an empty block leaves h->block unallocated: no memcpy from or to NULL */
        memcpy(h->block, f->data, f->len);
    h->cont_sid = sid;
    h->cont_flags = hd->flags;
    h->cont_mode = (uint8_t)mode;
}

static void on_continuation(h2conn_t *h, const hy_h2_hdr_t *hd, const hy_h2_frame_t *f)
{
    if (h->cont_sid == 0) {
        proto_error(h, HY_H2_PROTOCOL_ERROR, "unexpected CONTINUATION frame");
        return;
    }
    if (++h->continuations > MAX_CONTINUATIONS) {
        hy_h2_calm_down(h, "client sent too many CONTINUATION frames (flood)%s", "");
        return;
    }
    if (h->block_len + f->len > h->block_cap) {
        h->block_cap = HY_MAX(h->block_cap * 2, h->block_len + f->len);
        h->block = hy_realloc(h->block, h->block_cap);
    }
    if (f->len)
        memcpy(h->block + h->block_len, f->data, f->len);
    h->block_len += f->len;
    if (hd->flags & HY_H2_F_END_HEADERS)
        block_done(h, h->cont_mode, h->cont_sid, h->cont_flags, h->block, h->block_len, false);
}

/* ---- the other frames ---- */

static void on_data(h2conn_t *h, const hy_h2_hdr_t *hd, const hy_h2_frame_t *f)
{
    int32_t sid = (int32_t)hd->sid;
    bool end = hd->flags & HY_H2_F_END_STREAM;
    if ((sid & 1) == 0 || sid > h->max_sid) {
        proto_error(h, HY_H2_PROTOCOL_ERROR, "DATA: stream in idle");
        return;
    }
    if ((int64_t)hd->length > h->recv_window) {
        proto_error(h, HY_H2_FLOW_CONTROL_ERROR, "DATA: connection flow control window exceeded");
        return;
    }
    h->recv_window -= hd->length;
    if (hd->length == 0 && !end && !hy_h2_count_frame(h, CNT_EMPTY_DATA))
        return;
    h2stream_t *st = find_stream(h, sid);
    if (st == NULL || st->remote_closed) {
        if (st)
            hy_h2_rst(h, st, 0, HY_H2_STREAM_CLOSED); /* half-closed (remote): RFC 9113 §5.1 */
        else
            closed_stream_frame(h, hd);
        hy_h2_consume(h, NULL, hd->length);
        return;
    }
    if ((int64_t)hd->length > st->recv_window) {
        hy_h2_rst(h, st, 0, HY_H2_FLOW_CONTROL_ERROR);
        hy_h2_consume(h, NULL, hd->length);
        return;
    }
    st->recv_window -= hd->length;
    if (f->pad) /* padding is acknowledged at once */
        hy_h2_consume(h, st, f->pad);
    if (f->len)
        hy_h2_on_data(h, st, f->data, f->len);
    if (end) {
        st->remote_closed = true;
        if (st->started)
            hy_h2_body_end(st);
    }
}

static void on_rst_stream(h2conn_t *h, const hy_h2_hdr_t *hd)
{
    int32_t sid = (int32_t)hd->sid;
    if (sid > h->max_sid || (sid & 1) == 0) {
        proto_error(h, HY_H2_PROTOCOL_ERROR, "RST_STREAM: stream in idle");
        return;
    }
    h2stream_t *st = find_stream(h, sid);
    if (st == NULL) {
        hy_h2_note_closed(h, sid, HY_H2_CLOSED_CLIENT);
        return;
    }
    if (!st->eof_sent) { /* reset before its response was out */
        h->resets++;
        if (h->resets > RESET_MIN && h->resets > h->completed) {
            hy_h2_calm_down(h, "client reset too many streams (rapid reset)%s", "");
            return;
        }
    }
    st->remote_closed = true; /* noted as closed by the client (hy_h2_stream_close) */
    hy_h2_stream_close(st);
}

static void on_settings(h2conn_t *h, const hy_h2_hdr_t *hd, const hy_h2_frame_t *f)
{
    if (!hy_h2_count_frame(h, CNT_SETTINGS))
        return;
    if (hd->flags & HY_H2_F_ACK) {
        if (!h->settings_acked) { /* our stream window is in force from now on */
            h->settings_acked = true;
            int64_t iws = h->h2sc->body_preread_size, delta = iws - h->local_iws;
            h->local_iws = iws;
            for (h2stream_t *st = h->streams; st; st = st->next) {
                if (st->window_open)
                    continue;
                st->recv_window += delta;
                st->recv_max = iws;
            }
        }
        return;
    }
    hy_h2_err_t e;
    for (size_t i = 0; i < f->len / 6; i++) {
        uint16_t id;
        uint32_t v;
        hy_h2_setting_at(f, i, &id, &v);
        if (hy_h2_setting_check(id, v, &e) < 0) {
            proto_error(h, e.code, e.what);
            return;
        }
        if (id == HY_H2_SET_HEADER_TABLE_SIZE) {
            hy_hpack_enc_peer_max(&h->enc, v);
        } else if (id == HY_H2_SET_INITIAL_WINDOW_SIZE) {
            int64_t delta = (int64_t)v - h->peer_iws;
            h->peer_iws = v;
            for (h2stream_t *st = h->streams; st; st = st->next) {
                st->send_window += delta;
                if (st->send_window > HY_H2_MAX_WINDOW) {
                    proto_error(h, HY_H2_FLOW_CONTROL_ERROR, "SETTINGS: stream window overflow");
                    return;
                }
            }
        } else if (id == HY_H2_SET_MAX_FRAME_SIZE) {
            h->peer_max_frame = v;
        }
    }
    hy_h2_write_settings_ack(hy_h2_out(h, 9));
    hy_h2_out_commit(h, 9);
    hy_h2_schedule_flush(h);
}

static void on_window_update(h2conn_t *h, const hy_h2_hdr_t *hd, const hy_h2_frame_t *f)
{
    int32_t sid = (int32_t)hd->sid;
    if (sid == 0) {
        h->send_window += f->value;
        if (h->send_window > HY_H2_MAX_WINDOW)
            proto_error(h, HY_H2_FLOW_CONTROL_ERROR, "WINDOW_UPDATE: connection window overflow");
        hy_h2_schedule_flush(h);
        return;
    }
    if (sid > h->max_sid && (sid & 1)) {
        proto_error(h, HY_H2_PROTOCOL_ERROR, "WINDOW_UPDATE to idle stream");
        return;
    }
    h2stream_t *st = find_stream(h, sid);
    if (st == NULL)
        return;
    st->send_window += f->value;
    if (st->send_window > HY_H2_MAX_WINDOW)
        hy_h2_rst(h, st, 0, HY_H2_FLOW_CONTROL_ERROR);
    hy_h2_schedule_flush(h);
}

/* A frame that failed its checks (h2frame.c), with nginx's words where the tests and nginx's suite look for them */
static void frame_error(h2conn_t *h, const hy_h2_hdr_t *hd, const uint8_t *payload, const hy_h2_err_t *e)
{
    int32_t sid = (int32_t)hd->sid;
    switch (hd->type) {
    case HY_H2_PRIORITY:
        if (sid == 0) {
            hy_log_conn(HY_LOG_INFO, h->c->id, "client sent PRIORITY frame with incorrect identifier, client: %s",
                        h->c->peer_text);
            hy_h2_conn_error(h, HY_H2_PROTOCOL_ERROR);
            return;
        }
        if (e->code == HY_H2_PROTOCOL_ERROR) { /* its own dependency: a connection error, as nginx */
            hy_log_conn(HY_LOG_INFO, h->c->id, "client sent PRIORITY frame for stream %d with incorrect "
                        "dependency, client: %s", sid, h->c->peer_text);
            hy_h2_conn_error(h, HY_H2_PROTOCOL_ERROR);
            return;
        }
        break;
    case HY_H2_PRIORITY_UPDATE:
        hy_log_conn(HY_LOG_INFO, h->c->id, "client sent invalid PRIORITY_UPDATE frame, client: %s", h->c->peer_text);
        hy_h2_conn_error(h, HY_H2_PROTOCOL_ERROR);
        return;
    case HY_H2_DATA:
        if (e->code == HY_H2_PROTOCOL_ERROR && sid != 0) {
            hy_log_conn(HY_LOG_INFO, h->c->id, "client sent padded DATA frame with incorrect length: %u, "
                        "padding: %u, client: %s", hd->length, payload[0], h->c->peer_text);
            hy_h2_conn_error(h, HY_H2_PROTOCOL_ERROR);
            return;
        }
        break;
    case HY_H2_WINDOW_UPDATE:
        if (e->stream && sid <= h->max_sid && find_stream(h, sid) == NULL) {
            hy_log_conn(HY_LOG_INFO, h->c->id, "client sent WINDOW_UPDATE frame for closed stream %d with "
                        "incorrect window increment 0, client: %s", sid, h->c->peer_text);
            hy_h2_rst(h, NULL, sid, HY_H2_PROTOCOL_ERROR);
            return;
        }
        break;
    default:
        break;
    }
    if (e->stream)
        stream_error(h, sid, e->code);
    else
        proto_error(h, e->code, e->what);
}

static void on_frame(h2conn_t *h, const hy_h2_hdr_t *hd, const uint8_t *payload)
{
    hy_h2_frame_t f;
    hy_h2_err_t e;
    if ((hd->type == HY_H2_PRIORITY || hd->type == HY_H2_PRIORITY_UPDATE) && !hy_h2_count_frame(h, CNT_PRIORITY))
        return;
    if (hd->type == HY_H2_WINDOW_UPDATE && !hy_h2_count_frame(h, CNT_WINDOW_UPDATE))
        return;
    if (hy_h2_frame_parse(hd, payload, &f, &e) < 0) {
        frame_error(h, hd, payload, &e);
        return;
    }
    switch (hd->type) {
    case HY_H2_DATA:
        on_data(h, hd, &f);
        break;
    case HY_H2_HEADERS:
        on_headers(h, hd, &f);
        break;
    case HY_H2_CONTINUATION:
        on_continuation(h, hd, &f);
        break;
    case HY_H2_RST_STREAM:
        on_rst_stream(h, hd);
        break;
    case HY_H2_SETTINGS:
        on_settings(h, hd, &f);
        break;
    case HY_H2_PING:
        if (hy_h2_count_frame(h, CNT_PING) && !(hd->flags & HY_H2_F_ACK)) {
            hy_h2_write_ping_ack(hy_h2_out(h, 17), f.data);
            hy_h2_out_commit(h, 17);
            hy_h2_schedule_flush(h);
        }
        break;
    case HY_H2_GOAWAY:
        h->goaway_recv = true;
        hy_h2_schedule_flush(h);
        break;
    case HY_H2_WINDOW_UPDATE:
        on_window_update(h, hd, &f);
        break;
    case HY_H2_PRIORITY_UPDATE:
        on_priority_update(h, &f);
        break;
    default: /* PRIORITY (RFC 7540's tree, replaced by RFC 9218) and unknown types: ignored */
        break;
    }
}

size_t hy_h2_recv(h2conn_t *h, const uint8_t *p, size_t n)
{
    size_t pos = 0;
    while (n - pos >= HY_H2_HDR && !h->fatal && !h->closed) {
        hy_h2_hdr_t hd;
        hy_h2_hdr_parse(p + pos, &hd);
        if (hd.length > HY_H2_DEFAULT_FRAME) { /* above the SETTINGS_MAX_FRAME_SIZE we announced (§4.2) */
            proto_error(h, HY_H2_FRAME_SIZE_ERROR, "frame larger than SETTINGS_MAX_FRAME_SIZE");
            break;
        }
        if (h->cont_sid && (hd.type != HY_H2_CONTINUATION || (int32_t)hd.sid != h->cont_sid)) { /* §6.10 */
            proto_error(h, HY_H2_PROTOCOL_ERROR, "expected CONTINUATION frame");
            break;
        }
        if (hd.type == HY_H2_PUSH_PROMISE) {
            /* a client cannot push (RFC 9113 §8.4): a connection error at the frame's header, as nginx answers
             * it, not after a payload that may never come */
            hy_log_conn(HY_LOG_INFO, h->c->id, "client sent PUSH_PROMISE frame, client: %s", h->c->peer_text);
            hy_h2_conn_error(h, HY_H2_PROTOCOL_ERROR);
            break;
        }
        if (n - pos - HY_H2_HDR < hd.length) {
            if (hd.type == HY_H2_HEADERS && !h->cont_sid) { /* a block's first bytes, judged early */
                const uint8_t *b = p + pos + HY_H2_HDR;
                size_t have = n - pos - HY_H2_HDR, skip = (hd.flags & HY_H2_F_PADDED ? 1 : 0) +
                                                         (hd.flags & HY_H2_F_PRIORITY ? 5 : 0);
                if (have > skip && block_prefix_bad(b + skip, have - skip)) {
                    proto_error(h, HY_H2_COMPRESSION_ERROR, "header block cannot be decoded");
                    break;
                }
            }
            if (hd.type == HY_H2_HEADERS && (int32_t)hd.sid > h->max_sid && h->head_wait_sid == 0) {
                /* a new stream's head in part: client_header_timeout runs from now (h2.c, on_timer) */
                uint64_t hto = (uint64_t)h->dsrv->client_header_timeout_ms;
                h->head_wait_sid = (int32_t)hd.sid;
                h->head_wait_ms = hy_clock_now_ms();
                if (!hy_timer_is_linked(&h->timer) || h->timer.expire_at > h->head_wait_ms + hto)
                    hy_timer_link(h->c->sock.loop, &h->timer, hto);
            }
            break;
        }
        if ((int32_t)hd.sid == h->head_wait_sid)
            h->head_wait_sid = 0;
        on_frame(h, &hd, p + pos + HY_H2_HDR);
        pos += HY_H2_HDR + hd.length;
    }
    return pos;
}
