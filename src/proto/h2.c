/* h2.c — HTTP/2 server connections (RFC 9113, HPACK RFC 7541) on libnghttp2 (see h2.h): the session, I/O,
 * stream lifecycle, timers and limits; a stream's response and request body are h2_stream.c.
 *
 * Input: whatever the socket read is handed to nghttp2_session_mem_recv at once. Output: a deferred flush loops
 * mem_send into the socket's outq (frames copied into blocks of FLUSH_BLOCK bytes) until nghttp2 has nothing
 * more or the outq is above its high-watermark; the socket's drain runs the flush again. Each stream's response
 * body waits in the stream's own segment queue; its data provider copies from it into DATA frames (memory or
 * pread of file segments) and answers DEFERRED while the handler has produced nothing more.
 *
 * Request bodies: nghttp2's automatic WINDOW_UPDATEs are off; bytes are acknowledged (nghttp2_session_consume)
 * when the core takes them, so a slow handler slows its client, and a body nobody reads is acknowledged as it
 * arrives. The stream window is http2_body_preread_size; the connection window is opened wide once, as nginx
 * does, so one stuck stream never blocks the others.
 *
 * Protections (each logged at info with its own words, then GOAWAY ENHANCE_YOUR_CALM): rapid reset, new streams
 * per read, CONTINUATION frames per header block, SETTINGS/PING/PRIORITY/WINDOW_UPDATE/empty DATA frames beyond
 * a budget that grows with the requests served, header lists beyond large_client_header_buffers, streams
 * beyond http2_max_concurrent_streams; zero-window readers meet send_timeout. */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "h2.h"
#include "h2_int.h"
#include "../http/body.h"
#include "../http/phases.h"
#include "../http/uri.h"
#include "../core/log.h"
#include "../core/smalloc.h"
#include "../core/clock.h"
#include "../event/sock.h"

#define FLUSH_BLOCK 16384
#define OUTQ_HIGH (256 * 1024) /* stop pulling frames from nghttp2 above this many queued bytes */
#define REQ_POOL_SIZE 8192 /* one chunk holds a request with limits, auth and a proxied head: no malloc per request */
#define MAX_CONTINUATIONS 16   /* CONTINUATION frames in one header block */
#define MAX_RESPONSE_HEAD (1 << 20) /* a response header block (nghttp2's estimate) */
#define FRAME_BUDGET 500       /* control frames allowed before any request (below nghttp2's 1000 queued ACKs) */
#define FRAME_BUDGET_PER_REQ 8 /* ... plus these per request served */
#define RESET_MIN 200          /* client resets tolerated before the ratio to completed responses counts */
#define REFUSED_MIN 32         /* streams refused before calm, at least (a small http2_max_concurrent_streams) */

static const char *const cnt_names[CNT_N] = {"SETTINGS", "PING", "PRIORITY", "WINDOW_UPDATE", "empty DATA"};

static const hy_conn_ops_t h2_ops;
void hy_h2_schedule_flush(h2conn_t *h);
static void conn_close(h2conn_t *h);
static void linger(h2conn_t *h);
static void on_read(hy_sock_t *s, const char *err);

/* ---- per-stream arenas: a small per-worker cache, as HTTP/1's ---- */

#define POOL_CACHE_MAX 64
static hy_pool_t *pool_cache[POOL_CACHE_MAX];
static int pool_cache_n;

static hy_pool_t *pool_take(void)
{
    return pool_cache_n ? pool_cache[--pool_cache_n] : hy_pool_create(REQ_POOL_SIZE);
}

static void pool_give(void *arg)
{
    hy_pool_t *p = arg;
    if (pool_cache_n == POOL_CACHE_MAX) {
        hy_pool_destroy(p);
        return;
    }
    hy_pool_reset(p); /* runs the request's cleanups */
    pool_cache[pool_cache_n++] = p;
}

static void stream_free(h2stream_t *st)
{
    h2conn_t *h = st->h;
    if (st->linked) {
        if (st->prev)
            st->prev->next = st->next;
        else
            h->streams = st->next;
        if (st->next)
            st->next->prev = st->prev;
        st->linked = false;
        h->nstreams--;
    }
    if (st->started && !st->req.logged)
        hy_req_log_phase(&st->req);
    hy_outq_clear(&st->out);
    if (hy_timer_is_linked(&st->rate_timer))
        hy_timer_unlink(h->c->sock.loop, &st->rate_timer);
    free(st->rb);
    st->rb = NULL;
    hy_loop_free_later(h->c->sock.loop, pool_give, st->req.pool);
}

/* ---- limits ---- */

static void calm_down(h2conn_t *h, const char *fmt, const char *what)
{
    char text[160];
    snprintf(text, sizeof(text), fmt, what);
    hy_log_conn(HY_LOG_INFO, h->c->id, "%s, client: %s", text, h->c->peer_text);
    if (!h->fatal) {
        h->fatal = true;
        nghttp2_session_terminate_session(h->ng, NGHTTP2_ENHANCE_YOUR_CALM);
    }
}

/* A connection error of ours, logged by the caller: GOAWAY with the code and the last stream processed; nghttp2
 * reads nothing more. */
static void conn_error(h2conn_t *h, uint32_t code)
{
    h->error_logged = true;
    if (!h->fatal) {
        h->fatal = true;
        nghttp2_session_terminate_session(h->ng, code);
    }
}

static bool count_frame(h2conn_t *h, int which)
{
    uint64_t budget = FRAME_BUDGET + FRAME_BUDGET_PER_REQ * h->num_requests;
    if (which == CNT_WINDOW_UPDATE) /* a small window legitimately answers each DATA frame (two levels) */
        budget += 2 * h->data_frames_sent;
    if (++h->counters[which] <= budget)
        return true;
    calm_down(h, "client sent too many %s frames (flood)", cnt_names[which]);
    return false;
}

/* ---- request head ---- */

static int on_begin_headers(nghttp2_session *ng, const nghttp2_frame *frame, void *user)
{
    h2conn_t *h = user;
    if (frame->hd.type != NGHTTP2_HEADERS || frame->headers.cat != NGHTTP2_HCAT_REQUEST)
        return 0;
    if (!h->settings_acked && !(frame->hd.flags & NGHTTP2_FLAG_END_STREAM) &&
        h->h2sc->body_preread_size < NGHTTP2_INITIAL_WINDOW_SIZE) {
        /* a body may come before the client knows our smaller stream window: refused, as nginx does */
        hy_log_conn(HY_LOG_INFO, h->c->id, "client sent stream with data before settings were acknowledged, "
                    "client: %s", h->c->peer_text);
        nghttp2_submit_rst_stream(ng, NGHTTP2_FLAG_NONE, frame->hd.stream_id, NGHTTP2_REFUSED_STREAM);
        return 0;
    }
    hy_pool_t *pool = pool_take();
    h2stream_t *st = hy_pcalloc(pool, sizeof(*st));
    st->req.pool = pool;
    st->h = h;
    st->id = frame->hd.stream_id;
    st->headers = hy_array_create(pool, 16, sizeof(hy_header_t));
    st->body_max = -1;
    st->prio = (hy_h2_prio_t){HY_H2_URGENCY_DEFAULT, false};
    nghttp2_session_set_stream_user_data(ng, st->id, st);
    st->linked = true;
    st->next = h->streams;
    if (h->streams)
        h->streams->prev = st;
    h->streams = st;
    h->nstreams++;
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
    return 0;
}

/* ---- malformed requests, checked as nginx's HTTP/2 module does (nghttp2's own HTTP checks are off, h2.c setup) ---- */

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
static void pseudo_header(h2stream_t *st, hy_str_t n, hy_str_t v)
{
    if (st->regular_seen) {
        malformed(st, "client sent out of order pseudo-headers");
    } else if (hy_str_eq(n, ":path")) {
        if (st->path.ptr)
            malformed(st, "client sent duplicate :path header");
        else if (v.len == 0)
            malformed(st, "client sent empty :path header");
        else if (!path_ok(v))
            malformed(st, "client sent invalid :path header: \"%.*s\"", SHOWN(v));
        st->path = v;
    } else if (hy_str_eq(n, ":method")) {
        if (st->method.ptr)
            malformed(st, "client sent duplicate :method header");
        else if (v.len == 0)
            malformed(st, "client sent empty :method header");
        else if (!method_ok(v))
            malformed(st, "client sent invalid method: \"%.*s\"", SHOWN(v));
        st->method = v;
    } else if (hy_str_eq(n, ":scheme")) {
        if (st->scheme.ptr)
            malformed(st, "client sent duplicate :scheme header");
        else if (v.len == 0)
            malformed(st, "client sent empty :scheme header");
        else if (!scheme_ok(v))
            malformed(st, "client sent invalid :scheme header: \"%.*s\"", SHOWN(v));
        st->scheme = v;
    } else if (hy_str_eq(n, ":authority")) {
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

static int on_header(nghttp2_session *ng, const nghttp2_frame *frame, const uint8_t *name, size_t namelen,
                     const uint8_t *value, size_t valuelen, uint8_t flags, void *user)
{
    (void)flags;
    h2conn_t *h = user;
    if (frame->hd.type != NGHTTP2_HEADERS || frame->headers.cat != NGHTTP2_HCAT_REQUEST)
        return 0; /* trailers are not passed on (nginx ignores them too) */
    h2stream_t *st = nghttp2_session_get_stream_user_data(ng, frame->hd.stream_id);
    if (st == NULL || st->reset)
        return 0;
    /* large_client_header_buffers as nginx reads it for HTTP/2: a name or a value up to its size, all names and
     * values together up to size * number; and, against a list of tiny fields, RFC 9113 §6.5.2's 32 bytes per
     * field (what SETTINGS_MAX_HEADER_LIST_SIZE announces) may not pass the size * number either */
    st->header_bytes += namelen + valuelen;
    st->header_fields++;
    if (namelen <= h->field_limit && valuelen <= h->field_limit && st->header_bytes > h->header_limit) {
        /* fields that fit one by one but not together (indexed ones cost their decoded size): as nginx, a
         * connection error */
        hy_log_conn(HY_LOG_INFO, h->c->id, "client sent too large header, client: %s", h->c->peer_text);
        conn_error(h, NGHTTP2_ENHANCE_YOUR_CALM);
        return NGHTTP2_ERR_CALLBACK_FAILURE;
    }
    if (namelen > h->field_limit || valuelen > h->field_limit || st->header_bytes > h->header_limit ||
        32 * (uint64_t)st->header_fields > h->header_limit) {
        hy_log_conn(HY_LOG_INFO, h->c->id, "client sent too large header list (header list bomb), client: %s",
                    h->c->peer_text);
        st->too_large = true;
        return NGHTTP2_ERR_TEMPORAL_CALLBACK_FAILURE;
    }
    if (st->bad)
        return 0; /* the rest of a malformed block is decoded (HPACK state) but not kept */
    if (namelen == 0) { /* nginx: a connection error */
        hy_log_conn(HY_LOG_INFO, h->c->id, "client sent zero header name length, client: %s", h->c->peer_text);
        h->error_logged = true;
        nghttp2_session_terminate_session(ng, NGHTTP2_PROTOCOL_ERROR);
        return 0;
    }
    hy_pool_t *p = st->req.pool;
    hy_str_t n = {hy_pstrndup(p, (const char *)name, namelen), namelen};
    hy_str_t v = {hy_pstrndup(p, (const char *)value, valuelen), valuelen};
    bool invalid = false;
    if (!check_field(h, st, n, v, &invalid))
        return 0;
    if (name[0] == ':') {
        pseudo_header(st, n, v);
        return 0;
    }
    if (!st->regular_seen) { /* the pseudo-headers are complete: the request line must be */
        st->regular_seen = true;
        if (!request_line_ok(st))
            return 0;
    }
    if (invalid && h->dsrv->ignore_invalid_headers) {
        hy_log_conn(HY_LOG_INFO, h->c->id, "client sent invalid header: \"%.*s\", client: %s", (int)n.len, n.ptr,
                    h->c->peer_text);
        return 0;
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
    return 0;
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
    hy_h2_set_priority(st, prio);
}

static int on_ext_chunk(nghttp2_session *ng, const nghttp2_frame_hd *hd, const uint8_t *data, size_t len, void *user)
{
    (void)ng, (void)hd;
    h2conn_t *h = user;
    /* a value above the kept size is ignored, but the stream id in front of it is still read and checked */
    if (h->ext_len + len > sizeof(h->ext)) {
        h->ext_over = true;
        len = sizeof(h->ext) - h->ext_len;
    }
    memcpy(h->ext + h->ext_len, data, len);
    h->ext_len += len;
    return 0;
}

/* PRIORITY_UPDATE (RFC 9218 §7.1): on stream 0, naming a request stream; an open stream is rescheduled, an idle
 * one keeps the signal for its request (a few at most), a closed one ignores it, as does a value that does not
 * parse. Consumed here: nghttp2 sees no frame. */
static int unpack_ext(nghttp2_session *ng, void **payload, const nghttp2_frame_hd *hd, void *user)
{
    (void)payload;
    h2conn_t *h = user;
    if (hd->type != NGHTTP2_PRIORITY_UPDATE)
        return NGHTTP2_ERR_CANCEL;
    if (!count_frame(h, CNT_PRIORITY))
        return NGHTTP2_ERR_CALLBACK_FAILURE;
    uint32_t id = 0;
    if (h->ext_len >= 4)
        id = ((uint32_t)(uint8_t)h->ext[0] << 24 | (uint32_t)(uint8_t)h->ext[1] << 16 |
              (uint32_t)(uint8_t)h->ext[2] << 8 | (uint8_t)h->ext[3]) & 0x7fffffff;
    if (hd->stream_id != 0 || id == 0) {
        hy_log_conn(HY_LOG_INFO, h->c->id, "client sent invalid PRIORITY_UPDATE frame, client: %s", h->c->peer_text);
        h->error_logged = true;
        nghttp2_session_terminate_session(ng, NGHTTP2_PROTOCOL_ERROR);
        return NGHTTP2_ERR_CANCEL;
    }
    hy_h2_prio_t prio = {HY_H2_URGENCY_DEFAULT, false};
    if (h->ext_over || (id & 1) == 0 || !hy_h2_prio_parse(h->ext + 4, h->ext_len - 4, &prio))
        return NGHTTP2_ERR_CANCEL;
    h2stream_t *st = nghttp2_session_get_stream_user_data(ng, (int32_t)id);
    if (st) {
        if (!st->reset)
            hy_h2_set_priority(st, prio);
    } else if ((int32_t)id > nghttp2_session_get_last_proc_stream_id(ng)) {
        size_t i;
        for (i = 0; i < h->prio_npending && h->prio_pending[i].id != (int32_t)id; i++)
            ;
        if (i == PRIO_PENDING_MAX) { /* full: the oldest goes */
            memmove(&h->prio_pending[0], &h->prio_pending[1], (PRIO_PENDING_MAX - 1) * sizeof(h->prio_pending[0]));
            i = PRIO_PENDING_MAX - 1;
        } else if (i == h->prio_npending) {
            h->prio_npending++;
        }
        h->prio_pending[i].id = (int32_t)id;
        h->prio_pending[i].prio = prio;
    }
    return NGHTTP2_ERR_CANCEL;
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

static void start_request(h2conn_t *h, h2stream_t *st, const nghttp2_frame *frame)
{
    bool end_stream = frame->hd.flags & NGHTTP2_FLAG_END_STREAM;
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
    size_t extra = frame->headers.padlen + (frame->hd.flags & NGHTTP2_FLAG_PRIORITY ? 5 : 0);
    req->request_length = (int64_t)(h->block_len > extra ? h->block_len - extra : 0);
    hy_conn_set_state(h->c, HY_CONN_WRITING);
    /* keepalive_requests and keepalive_time bound the connection's streams: the last one is announced by GOAWAY */
    hy_http_loc_conf_t *lc = h->dsrv->loc;
    if (!h->goaway && ((lc->keepalive_requests > 0 && h->num_requests >= (uint64_t)lc->keepalive_requests) ||
                       hy_clock_time_ms() - (int64_t)h->c->start_ms > lc->keepalive_time_ms)) {
        h->goaway = true;
        nghttp2_submit_goaway(h->ng, NGHTTP2_FLAG_NONE, st->id, NGHTTP2_NO_ERROR, NULL, 0);
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

enum {
    CLOSED_BY_US = 1,      /* we reset it or ended it while the client's side was open */
    CLOSED_CLIENT = 2,     /* the client ended (END_STREAM) or reset its side */
    CLOSED_ANSWERED = 4,   /* a frame on it was answered with RST_STREAM already */
};

static uint8_t *closed_how(h2conn_t *h, int32_t id)
{
    for (size_t i = 0; i < HY_ARRAY_SIZE(h->closed_ids); i++)
        if (h->closed_ids[i].id == id)
            return &h->closed_ids[i].how;
    return NULL;
}

static void note_closed(h2conn_t *h, int32_t id, uint8_t how)
{
    uint8_t *p = closed_how(h, id);
    if (p == NULL) {
        unsigned i = h->closed_next++ % HY_ARRAY_SIZE(h->closed_ids);
        h->closed_ids[i].id = id;
        h->closed_ids[i].how = 0;
        p = &h->closed_ids[i].how;
    }
    *p |= how;
}

/* DATA or HEADERS on a client stream nghttp2 has forgotten (it would ignore the frame). Once the client had ended or
 * reset its side, the frame is a STREAM_CLOSED stream error (RFC 9113 §5.1), answered once per stream; a second
 * HEADERS without END_STREAM (trailers that do not end the request, RFC 9113 §8.1) on a stream we reset while the
 * client was sending is a PROTOCOL_ERROR stream error. Frames the client sent before it saw our RST_STREAM are
 * otherwise ignored (RFC 9113 §5.4.2). Returns false for a stream not among the recently closed. */
static bool closed_stream_frame(h2conn_t *h, const nghttp2_frame_hd *hd)
{
    uint8_t *how = closed_how(h, hd->stream_id);
    if (how == NULL)
        return false;
    if (*how & CLOSED_ANSWERED)
        return true;
    uint32_t code;
    if (*how & CLOSED_CLIENT)
        code = NGHTTP2_STREAM_CLOSED;
    else if (hd->type == NGHTTP2_HEADERS && !(hd->flags & NGHTTP2_FLAG_END_STREAM))
        code = NGHTTP2_PROTOCOL_ERROR;
    else
        return true;
    *how |= CLOSED_ANSWERED;
    hy_log_conn(HY_LOG_INFO, h->c->id, "client sent %s frame for closed stream %d, client: %s",
                hd->type == NGHTTP2_DATA ? "DATA" : "HEADERS", hd->stream_id, h->c->peer_text);
    nghttp2_submit_rst_stream(h->ng, NGHTTP2_FLAG_NONE, hd->stream_id, code);
    return true;
}

static int on_frame_recv(nghttp2_session *ng, const nghttp2_frame *frame, void *user)
{
    h2conn_t *h = user;
    h2stream_t *st;
    bool end = frame->hd.flags & NGHTTP2_FLAG_END_STREAM;
    switch (frame->hd.type) {
    case NGHTTP2_HEADERS:
        st = nghttp2_session_get_stream_user_data(ng, frame->hd.stream_id);
        if (st == NULL)
            return 0;
        if (frame->headers.cat == NGHTTP2_HCAT_REQUEST) {
            if (!st->started && !st->reset)
                start_request(h, st, frame);
            return 0;
        }
        if (!end) { /* trailers without END_STREAM: malformed (RFC 9113 §8.1), the stream reset as nghttp2 did */
            hy_log_conn(HY_LOG_INFO, h->c->id, "client sent trailers without END_STREAM, client: %s", h->c->peer_text);
            if (!st->reset) {
                st->reset = true;
                nghttp2_submit_rst_stream(ng, NGHTTP2_FLAG_NONE, st->id, NGHTTP2_PROTOCOL_ERROR);
            }
            return 0;
        }
        if (st->started) /* trailers end the body */
            hy_h2_body_end(st);
        return 0;
    case NGHTTP2_DATA:
        if (frame->hd.length == 0 && !end && !count_frame(h, CNT_EMPTY_DATA))
            return NGHTTP2_ERR_CALLBACK_FAILURE;
        st = nghttp2_session_get_stream_user_data(ng, frame->hd.stream_id);
        if (st && end && st->started)
            hy_h2_body_end(st);
        return 0;
    case NGHTTP2_RST_STREAM:
        note_closed(h, frame->hd.stream_id, CLOSED_CLIENT);
        st = nghttp2_session_get_stream_user_data(ng, frame->hd.stream_id);
        if (st && !st->eof_sent) { /* reset before its response was out */
            h->resets++;
            if (h->resets > RESET_MIN && h->resets > h->completed) {
                calm_down(h, "client reset too many streams (rapid reset)%s", "");
                return NGHTTP2_ERR_CALLBACK_FAILURE;
            }
        }
        return 0;
    case NGHTTP2_SETTINGS:
        if (frame->hd.flags & NGHTTP2_FLAG_ACK)
            h->settings_acked = true;
        return count_frame(h, CNT_SETTINGS) ? 0 : NGHTTP2_ERR_CALLBACK_FAILURE;
    case NGHTTP2_PING:
        return count_frame(h, CNT_PING) ? 0 : NGHTTP2_ERR_CALLBACK_FAILURE;
    case NGHTTP2_WINDOW_UPDATE:
        return count_frame(h, CNT_WINDOW_UPDATE) ? 0 : NGHTTP2_ERR_CALLBACK_FAILURE;
    default:
        return 0;
    }
}

static bool reset_by_us(h2conn_t *h, int32_t id)
{
    for (size_t i = 0; i < HY_ARRAY_SIZE(h->rst_sent); i++)
        if (h->rst_sent[i] == id)
            return true;
    return false;
}

static int on_begin_frame(nghttp2_session *ng, const nghttp2_frame_hd *hd, void *user)
{
    h2conn_t *h = user;
    if (hd->type == NGHTTP2_PRIORITY) { /* counted here: with RFC 9218 on, nghttp2 drops them unannounced */
        if (!count_frame(h, CNT_PRIORITY))
            return NGHTTP2_ERR_CALLBACK_FAILURE;
        if (hd->stream_id == 0) { /* RFC 9113 §6.3, which nghttp2 no longer checks */
            hy_log_conn(HY_LOG_INFO, h->c->id, "client sent PRIORITY frame with incorrect identifier, client: %s",
                        h->c->peer_text);
            conn_error(h, NGHTTP2_PROTOCOL_ERROR);
            return NGHTTP2_ERR_CALLBACK_FAILURE;
        }
    } else if (hd->type == NGHTTP2_PRIORITY_UPDATE) {
        h->ext_len = 0;
        h->ext_over = false;
    } else if (hd->type == NGHTTP2_HEADERS) {
        h->continuations = 0;
        h->block_len = hd->length;
        if (hd->stream_id & 1) {
            if (hd->stream_id > h->max_sid) {
                h->max_sid = hd->stream_id;
                /* new streams in the bytes of one read, counted here: those nghttp2 refuses too */
                if (++h->new_in_read > 2 * (uint64_t)h->h2sc->max_concurrent_streams) {
                    calm_down(h, "client sent too many streams at once%s", "");
                    return NGHTTP2_ERR_CALLBACK_FAILURE;
                }
            } else if (nghttp2_session_find_stream(ng, hd->stream_id) == NULL && reset_by_us(h, hd->stream_id)) {
                closed_stream_frame(h, hd);
            } else if (nghttp2_session_find_stream(ng, hd->stream_id) == NULL) {
                /* a new stream must use a higher id than all before (RFC 9113 §5.1.1): the stream is closed, or
                 * was implicitly closed while idle; nghttp2 would ignore the frame, nginx ends the connection */
                hy_log_conn(HY_LOG_INFO, h->c->id, "client sent HEADERS frame with incorrect identifier %d, the last "
                            "was %d, client: %s", hd->stream_id, h->max_sid, h->c->peer_text);
                conn_error(h, NGHTTP2_PROTOCOL_ERROR);
                return NGHTTP2_ERR_CALLBACK_FAILURE;
            }
        }
    } else if (hd->type == NGHTTP2_CONTINUATION) {
        h->block_len += hd->length;
        if (++h->continuations > MAX_CONTINUATIONS) {
            calm_down(h, "client sent too many CONTINUATION frames (flood)%s", "");
            return NGHTTP2_ERR_CALLBACK_FAILURE;
        }
    } else if (hd->type == NGHTTP2_PUSH_PROMISE) {
        /* a client cannot push (RFC 9113 §8.4): a connection error at the frame's header, as nginx answers it,
         * not after a payload that may never come (nghttp2 would wait for it) */
        h->error_logged = true;
        hy_log_conn(HY_LOG_INFO, h->c->id, "client sent PUSH_PROMISE frame, client: %s", h->c->peer_text);
        nghttp2_session_terminate_session(ng, NGHTTP2_PROTOCOL_ERROR);
    }
    return 0;
}

/* The SETTINGS frame supplied for a client that sent none (client_preface) is not acknowledged: the client never
 * asked, and nginx sends no such ACK. */
static int before_frame_send(nghttp2_session *ng, const nghttp2_frame *frame, void *user)
{
    (void)ng;
    h2conn_t *h = user;
    if (h->drop_settings_ack && frame->hd.type == NGHTTP2_SETTINGS && (frame->hd.flags & NGHTTP2_FLAG_ACK)) {
        h->drop_settings_ack = false;
        return NGHTTP2_ERR_CANCEL;
    }
    return 0;
}

/* DATA frames as large as the client's SETTINGS_MAX_FRAME_SIZE allows, up to http2_chunk_size (nghttp2 would stop
 * at 16384); nghttp2 applies the flow-control windows after. */
static hy_ng_ssize data_length(nghttp2_session *ng, uint8_t type, int32_t id, int32_t conn_window,
                               int32_t stream_window, uint32_t max_frame, void *user)
{
    (void)type, (void)conn_window, (void)stream_window, (void)user;
    h2stream_t *st = nghttp2_session_get_stream_user_data(ng, id);
    size_t n = st && st->chunk_size ? st->chunk_size : 16384;
    return (hy_ng_ssize)HY_MIN(n, (size_t)max_frame);
}

/* A frame nghttp2 could not prepare: a response head above MAX_RESPONSE_HEAD. nghttp2 drops it and leaves the
 * stream open; it is reset instead, so the client does not wait for it. */
static int on_frame_not_send(nghttp2_session *ng, const nghttp2_frame *frame, int error, void *user)
{
    h2conn_t *h = user;
    if (frame->hd.type != NGHTTP2_HEADERS)
        return 0;
    h2stream_t *st = nghttp2_session_get_stream_user_data(ng, frame->hd.stream_id);
    if (st && !st->reset) {
        hy_req_log(&st->req, HY_LOG_ERR, "could not send the response header (%s)", nghttp2_strerror(error));
        st->reset = true;
        nghttp2_submit_rst_stream(ng, NGHTTP2_FLAG_NONE, st->id, NGHTTP2_INTERNAL_ERROR);
        hy_h2_schedule_flush(h);
    }
    return 0;
}

/* nghttp2's own verdicts on what the client sent (protocol errors it answers with GOAWAY or RST_STREAM) */
static int on_error(nghttp2_session *ng, int code, const char *msg, size_t len, void *user)
{
    (void)ng;
    h2conn_t *h = user;
    if (strstr(msg, "max concurrent streams exceeded"))
        h->refused++;
    h->error_logged = true;
    hy_log_conn(HY_LOG_INFO, h->c->id, "client sent invalid HTTP/2: %.*s (%s), client: %s", (int)len, msg,
                nghttp2_strerror(code), h->c->peer_text);
    return 0;
}

static int on_frame_send(nghttp2_session *ng, const nghttp2_frame *frame, void *user)
{
    h2conn_t *h = user;
    if (frame->hd.type == NGHTTP2_DATA)
        h->data_frames_sent++;
    if (frame->hd.type == NGHTTP2_GOAWAY && frame->goaway.error_code != NGHTTP2_NO_ERROR && !h->fatal) {
        /* nghttp2's own verdict (its reason travels as the GOAWAY's debug data), unless on_error logged it */
        h->fatal = true;
        if (!h->error_logged)
            hy_log_conn(HY_LOG_INFO, h->c->id, "client sent invalid HTTP/2: %.*s (%s), client: %s",
                    (int)frame->goaway.opaque_data_len, (const char *)frame->goaway.opaque_data,
                    nghttp2_http2_strerror(frame->goaway.error_code), h->c->peer_text);
    }
    if (frame->hd.type == NGHTTP2_RST_STREAM)
        h->rst_sent[h->rst_next++ % HY_ARRAY_SIZE(h->rst_sent)] = frame->hd.stream_id;
    if (frame->hd.type == NGHTTP2_RST_STREAM &&
        (frame->rst_stream.error_code == NGHTTP2_REFUSED_STREAM ||
         frame->rst_stream.error_code == NGHTTP2_PROTOCOL_ERROR)) {
        h2stream_t *st = nghttp2_session_get_stream_user_data(ng, frame->hd.stream_id);
        if (st == NULL && ++h->refused > HY_MAX((uint64_t)h->h2sc->max_concurrent_streams, REFUSED_MIN)) {
            calm_down(h, "client opened too many concurrent streams%s", "");
            return 0;
        }
    }
    if ((frame->hd.type == NGHTTP2_DATA || frame->hd.type == NGHTTP2_HEADERS) &&
        (frame->hd.flags & NGHTTP2_FLAG_END_STREAM)) {
        h2stream_t *st = nghttp2_session_get_stream_user_data(ng, frame->hd.stream_id);
        if (st)
            st->eof_sent = true;
        /* the response is complete while the client still sends a body: stop it without error (RFC 9113 §8.1, as
         * nginx does) */
        if (st && !st->reset && nghttp2_session_get_stream_remote_close(ng, st->id) == 0) {
            st->reset = true;
            nghttp2_submit_rst_stream(ng, NGHTTP2_FLAG_NONE, st->id, NGHTTP2_NO_ERROR);
        }
    }
    return 0;
}

static int on_stream_close(nghttp2_session *ng, int32_t id, uint32_t error_code, void *user)
{
    h2conn_t *h = user;
    if (id & 1) /* the client's side: ended, or open while we closed ours */
        note_closed(h, id, nghttp2_session_get_stream_remote_close(ng, id) == 1 ? CLOSED_CLIENT : CLOSED_BY_US);
    h2stream_t *st = nghttp2_session_get_stream_user_data(ng, id);
    if (st == NULL)
        return 0;
    nghttp2_session_set_stream_user_data(ng, id, NULL);
    if (st->final && !st->reset)
        h->completed++;
    if (!st->final && st->started) {
        st->reset = true;
        if (st->req.status == 0)
            st->req.status = 499; /* nginx logs a stream the client reset as 499 */
        if (st->body_reading) {
            st->body_reading = false;
            hy_req__body_error(&st->req, 499);
        }
    }
    st->reset = true;
    (void)error_code;
    stream_free(st);
    if (h->nstreams == 0 && !h->closed) {
        hy_conn_set_state(h->c, HY_CONN_WAITING);
        hy_http_loc_conf_t *lc = h->dsrv->loc;
        hy_timer_link(h->c->sock.loop, &h->timer, (uint64_t)lc->keepalive_timeout_ms);
    }
    return 0;
}

/* ---- I/O ---- */

static void on_written(hy_sock_t *s, const char *err);

static void push_block(h2conn_t *h, char *blk, size_t len)
{
    hy_outq_push_mem(&h->c->sock.outq, blk, len, free, blk);
}

static void flush(h2conn_t *h)
{
    hy_sock_t *s = &h->c->sock;
    char *blk = NULL;
    size_t blen = 0;
    while (s->outq.bytes + blen < OUTQ_HIGH) {
        const uint8_t *data;
        hy_ng_ssize n = hy_ng_mem_send(h->ng, &data);
        if (n < 0) {
            hy_log_conn(HY_LOG_ERR, h->c->id, "nghttp2_session_mem_send() failed: %s", nghttp2_strerror((int)n));
            h->fatal = true;
            break;
        }
        if (n == 0)
            break;
        if (blk && blen + (size_t)n > FLUSH_BLOCK) {
            push_block(h, blk, blen);
            blk = NULL;
        }
        if (blk == NULL) {
            size_t cap = HY_MAX((size_t)n, FLUSH_BLOCK);
            blk = hy_alloc(cap);
            blen = 0;
        }
        memcpy(blk + blen, data, (size_t)n);
        blen += (size_t)n;
    }
    if (blk)
        push_block(h, blk, blen);
    if (!hy_outq_empty(&s->outq)) {
        h->send_mark = s->bytes_out;
        hy_sock_write(s, on_written);
        return;
    }
    if (h->fatal || (!nghttp2_session_want_read(h->ng) && !nghttp2_session_want_write(h->ng)))
        linger(h);
}

/* The session is over and everything is written: stop writing and read what the client still sends for a
 * while (nginx's lingering close), so a frame it sent meanwhile (a PING) does not turn our close into a reset
 * that would destroy the responses it has not read yet. */
static void linger(h2conn_t *h)
{
    hy_http_loc_conf_t *lc = h->dsrv->loc;
    if (h->lingering)
        return;
    if (lc->lingering_close == HY_LINGER_OFF || hy_sock_shutdown_write(&h->c->sock) != 0) {
        conn_close(h);
        return;
    }
    h->lingering = true;
    h->linger_deadline = hy_clock_now_ms() + (uint64_t)lc->lingering_time_ms;
    hy_timer_link(h->c->sock.loop, &h->timer, (uint64_t)lc->lingering_timeout_ms);
    hy_sock_read_start(&h->c->sock, on_read);
}

static void on_flush_defer(hy_defer_t *d)
{
    h2conn_t *h = d->data;
    if (!h->closed && !h->in_recv)
        flush(h);
}

void hy_h2_schedule_flush(h2conn_t *h)
{
    if (!h->closed)
        hy_defer(h->c->sock.loop, &h->flush_defer);
}

static void on_written(hy_sock_t *s, const char *err)
{
    h2conn_t *h = s->data;
    if (h->closed)
        return;
    if (err) {
        conn_close(h);
        return;
    }
    flush(h);
}

/* The client preface: the magic, checked here, then the client's SETTINGS. Clients that wait for the server's
 * SETTINGS before sending theirs (nginx accepts them; nginx's own test client is one) get an empty SETTINGS
 * frame supplied in their place, since nghttp2 insists on it. Returns false while more bytes are needed. */
static bool client_preface(h2conn_t *h, hy_buf_t *in, const char *err)
{
    static const char magic[] = HY_H2_PREFACE;
    size_t m = HY_MIN(in->len, sizeof(magic) - 1);
    if (!h->magic_done) {
        if (m > 0 && memcmp(hy_buf_data(in), magic, m) != 0) { /* nothing read yet: an empty buffer has no data */
            hy_log_conn(HY_LOG_INFO, h->c->id, "client sent invalid HTTP/2 preface, client: %s", h->c->peer_text);
            h->fatal = true;
            return false;
        }
        if (m < sizeof(magic) - 1)
            return false;
        hy_buf_consume(in, sizeof(magic) - 1);
        h->magic_done = true;
    }
    if (in->len < 5)
        return false;
    const unsigned char *p = (const unsigned char *)hy_buf_data(in);
    if (p[3] != NGHTTP2_SETTINGS || (p[4] & NGHTTP2_FLAG_ACK)) {
        static const uint8_t empty_settings[9] = {0, 0, 0, NGHTTP2_SETTINGS, 0, 0, 0, 0, 0};
        h->drop_settings_ack = true;
        hy_ng_mem_recv(h->ng, empty_settings, sizeof(empty_settings));
    }
    h->preface_done = true;
    (void)err;
    return true;
}

/* An HPACK integer with an n-bit prefix at p[*i]: false if the block ends inside it. */
static bool hpack_int(const uint8_t *p, size_t len, size_t *i, unsigned n, size_t *v)
{
    size_t mask = ((size_t)1 << n) - 1;
    *v = p[(*i)++] & mask;
    if (*v < mask)
        return true;
    for (unsigned shift = 0;; shift += 7) {
        if (*i >= len)
            return false;
        uint8_t b = p[(*i)++];
        if (shift < 28)
            *v += (size_t)(b & 0x7f) << shift;
        else
            *v = SIZE_MAX; /* too long: nghttp2 answers it (COMPRESSION_ERROR) */
        if (!(b & 0x80))
            return true;
    }
}

/* Whether a whole header block ends where a field representation ends (RFC 7541 §6): nginx answers one that ends
 * inside a representation as a frame of incorrect length (FRAME_SIZE_ERROR), nghttp2 as COMPRESSION_ERROR. Only
 * the structure is read; the fields themselves are nghttp2's. */
static bool hpack_block_whole(const uint8_t *p, size_t len)
{
    size_t i = 0, v;
    while (i < len) {
        uint8_t b = p[i];
        if (b & 0x80) { /* indexed */
            if (!hpack_int(p, len, &i, 7, &v))
                return false;
            continue;
        }
        if ((b & 0xe0) == 0x20) { /* dynamic table size update */
            if (!hpack_int(p, len, &i, 5, &v))
                return false;
            continue;
        }
        if (!hpack_int(p, len, &i, b & 0x40 ? 6 : 4, &v)) /* a literal: its name's index, 0 for a literal name */
            return false;
        for (int strings = v == 0 ? 2 : 1; strings > 0; strings--) {
            if (i >= len || !hpack_int(p, len, &i, 7, &v))
                return false;
            if (v > len - i)
                return v == SIZE_MAX; /* an overlong length is nghttp2's to refuse */
            i += v;
        }
    }
    return true;
}

/* A HEADERS frame's payload: whether its header block (padding and priority fields taken off) is whole. */
static bool headers_whole(const uint8_t *b, size_t blen, uint8_t flags)
{
    if (flags & NGHTTP2_FLAG_PADDED) { /* nghttp2 judges a bad pad length */
        blen = blen > 0 && b[0] < blen ? blen - 1 - b[0] : 0;
        b++;
    }
    if (flags & NGHTTP2_FLAG_PRIORITY) {
        b += HY_MIN(blen, 5);
        blen -= HY_MIN(blen, 5);
    }
    return hpack_block_whole(b, blen);
}

/* recv_frames: nghttp2 reads p[*done, upto) and *done moves there. False when the walk stops, *ret then being
 * recv_frames' result: nghttp2's error, or n once the connection is closing. */
static bool feed_to(h2conn_t *h, const uint8_t *p, size_t *done, size_t upto, size_t n, hy_ng_ssize *ret)
{
    hy_ng_ssize r = hy_ng_mem_recv(h->ng, p + *done, upto - *done);
    *done = upto;
    *ret = r < 0 ? r : (hy_ng_ssize)n;
    return r >= 0 && !h->closed && !h->fatal;
}

/* nghttp2 reads the bytes, in pieces that end after each PRIORITY frame depending on its own stream: with RFC 7540
 * priorities off nghttp2 skips PRIORITY frames unchecked and unannounced, and such a frame is a connection error
 * PROTOCOL_ERROR as nginx makes it (RFC 9113 §5.3.1 allows a stream error; an idle stream cannot be reset); and after the header of a DATA frame on a stream that may be closed
 * (closed_stream_frame), and after a WINDOW_UPDATE of 0 on a stream (a stream error nghttp2 sees only on a stream
 * it knows). A HEADERS frame that arrives whole in one read with a header block ending inside a field is a
 * FRAME_SIZE_ERROR, as nginx (nghttp2 says COMPRESSION_ERROR). Only frame headers are walked, and the payload of
 * PRIORITY and WINDOW_UPDATE frames (and of such a HEADERS frame, for its structure only). */
static int32_t scan_sid(const h2conn_t *h)
{
    return (int32_t)(((uint32_t)h->scan_hdr[5] << 24 | (uint32_t)h->scan_hdr[6] << 16 | (uint32_t)h->scan_hdr[7] << 8 |
                      h->scan_hdr[8]) & 0x7fffffff);
}

static hy_ng_ssize recv_frames(h2conn_t *h, const uint8_t *p, size_t n)
{
    size_t done = 0, i = 0;
    hy_ng_ssize ret = (hy_ng_ssize)n;
    bool closing = false; /* a frame of these bytes may close a stream (nghttp2 has not read them yet) */
    while (i < n) {
        if (h->scan_left == 0 && h->scan_hlen < 9) { /* a frame header */
            size_t k = HY_MIN(n - i, (size_t)(9 - h->scan_hlen));
            memcpy(h->scan_hdr + h->scan_hlen, p + i, k);
            h->scan_hlen += k, i += k;
            if (h->scan_hlen < 9)
                break;
            h->scan_left = (uint32_t)h->scan_hdr[0] << 16 | (uint32_t)h->scan_hdr[1] << 8 | h->scan_hdr[2];
            h->scan_plen = 0;
            nghttp2_frame_hd hd = {.length = h->scan_left, .stream_id = scan_sid(h), .type = h->scan_hdr[3],
                                   .flags = h->scan_hdr[4]};
            if (k == 9 && hd.type == NGHTTP2_HEADERS && (hd.flags & NGHTTP2_FLAG_END_HEADERS) &&
                hd.length <= n - i && !headers_whole(p + i, hd.length, hd.flags)) {
                /* a whole header block, all in this read, that ends inside a field: nginx's FRAME_SIZE_ERROR */
                if (!feed_to(h, p, &done, i - 9, n, &ret))
                    return ret;
                hy_log_conn(HY_LOG_INFO, h->c->id, "client sent header block with incorrect length, client: %s",
                            h->c->peer_text);
                conn_error(h, NGHTTP2_FRAME_SIZE_ERROR);
                return (hy_ng_ssize)n;
            }
            if (hd.type == NGHTTP2_DATA && (hd.stream_id & 1) &&
                     (closing || nghttp2_session_find_stream(h->ng, hd.stream_id) == NULL)) {
                /* nghttp2 ignores DATA on a stream it forgot without a word (not even on_begin_frame): it reads
                 * up to this header, then the stream's fate is known */
                if (!feed_to(h, p, &done, i, n, &ret))
                    return ret;
                if (hd.stream_id <= h->max_sid && nghttp2_session_find_stream(h->ng, hd.stream_id) == NULL) {
                    closed_stream_frame(h, &hd);
                    h->scan_ign = (hd.flags & NGHTTP2_FLAG_PADDED) && hd.length > 0;
                }
            }
            if (hd.type == NGHTTP2_RST_STREAM || (hd.flags & NGHTTP2_FLAG_END_STREAM))
                closing = true;
            if (h->scan_left == 0)
                h->scan_hlen = 0;
            continue;
        }
        size_t k = HY_MIN(n - i, (size_t)h->scan_left);
        if (h->scan_ign && h->scan_plen == 0) {
            /* the pad length of a padded DATA frame nghttp2 ignores, unchecked there: one that leaves no room is
             * a connection error PROTOCOL_ERROR (RFC 9113 §6.1) wherever the frame goes */
            h->scan_ign = false;
            uint32_t len = (uint32_t)h->scan_hdr[0] << 16 | (uint32_t)h->scan_hdr[1] << 8 | h->scan_hdr[2];
            if (p[i] >= len) {
                hy_log_conn(HY_LOG_INFO, h->c->id, "client sent padded DATA frame with incorrect length: %u, "
                            "padding: %u, client: %s", len, p[i], h->c->peer_text);
                conn_error(h, NGHTTP2_PROTOCOL_ERROR);
                return (hy_ng_ssize)n;
            }
        }
        if ((h->scan_hdr[3] == NGHTTP2_PRIORITY || h->scan_hdr[3] == NGHTTP2_WINDOW_UPDATE) && h->scan_plen < 5) {
            size_t c = HY_MIN(k, (size_t)(5 - h->scan_plen));
            memcpy(h->scan_prio + h->scan_plen, p + i, c);
            h->scan_plen += c;
        }
        h->scan_left -= k, i += k;
        if (h->scan_left)
            break;
        h->scan_hlen = 0;
        int32_t sid = scan_sid(h);
        int32_t val = (int32_t)(((uint32_t)h->scan_prio[0] << 24 | (uint32_t)h->scan_prio[1] << 16 |
                                 (uint32_t)h->scan_prio[2] << 8 | h->scan_prio[3]) & 0x7fffffff);
        if (h->scan_hdr[3] == NGHTTP2_WINDOW_UPDATE && h->scan_plen == 4 && sid != 0 && val == 0) {
            /* an increment of 0 is a stream error (RFC 9113 §6.9), which nghttp2 sees only on a stream it knows */
            if (!feed_to(h, p, &done, i, n, &ret))
                return ret;
            if (sid <= h->max_sid && nghttp2_session_find_stream(h->ng, sid) == NULL) {
                hy_log_conn(HY_LOG_INFO, h->c->id, "client sent WINDOW_UPDATE frame for closed stream %d with "
                            "incorrect window increment 0, client: %s", sid, h->c->peer_text);
                nghttp2_submit_rst_stream(h->ng, NGHTTP2_FLAG_NONE, sid, NGHTTP2_PROTOCOL_ERROR);
            }
            continue;
        }
        if (h->scan_hdr[3] != NGHTTP2_PRIORITY || h->scan_plen != 5 || sid == 0 || val != sid)
            continue;
        if (!feed_to(h, p, &done, i, n, &ret))
            return ret;
        hy_log_conn(HY_LOG_INFO, h->c->id, "client sent PRIORITY frame for stream %d with incorrect dependency, "
                    "client: %s", sid, h->c->peer_text);
        conn_error(h, NGHTTP2_PROTOCOL_ERROR);
        return (hy_ng_ssize)n;
    }
    if (done < n)
        feed_to(h, p, &done, n, n, &ret);
    return ret;
}

static void on_read(hy_sock_t *s, const char *err)
{
    h2conn_t *h = s->data;
    hy_buf_t *in = &s->input;
    if (h->lingering) {
        hy_buf_release(in);
        if ((err && err != hy_err_buf_full) || hy_clock_now_ms() >= h->linger_deadline)
            conn_close(h);
        else
            hy_timer_link(s->loop, &h->timer, (uint64_t)h->dsrv->loc->lingering_timeout_ms);
        return;
    }
    if (!h->preface_done && !h->fatal && !client_preface(h, in, err)) {
        if (h->fatal || (err && err != hy_err_buf_full)) {
            conn_close(h);
            return;
        }
        flush(h); /* our SETTINGS go out while the client's preface is incomplete */
        return;
    }
    if (in->len && !h->fatal) {
        h->in_recv = true;
        h->new_in_read = 0;
        hy_ng_ssize n = recv_frames(h, (const uint8_t *)hy_buf_data(in), in->len);
        h->in_recv = false;
        if (h->closed)
            return;
        if (h->feed_pending) { /* request body bytes this read brought, handed on together */
            h->feed_pending = false;
            for (h2stream_t *st = h->streams, *nx; st && !h->closed; st = nx) {
                nx = st->next;
                if (st->feed_pending) {
                    st->feed_pending = false;
                    if (st->body_reading && !st->body_waiting)
                        hy_h2_feed_body(st);
                }
            }
            if (h->closed)
                return;
        }
        if (n < 0) {
            if (n != NGHTTP2_ERR_CALLBACK_FAILURE || !h->fatal)
                hy_log_conn(HY_LOG_INFO, h->c->id, "client sent invalid HTTP/2 data (%s), client: %s",
                            nghttp2_strerror((int)n), h->c->peer_text);
            if (n == NGHTTP2_ERR_BAD_CLIENT_MAGIC) {
                conn_close(h);
                return;
            }
            if (!h->fatal) {
                h->fatal = true;
                nghttp2_session_terminate_session(h->ng, NGHTTP2_PROTOCOL_ERROR);
            }
        }
        hy_buf_consume(in, in->len);
    }
    if (h->fatal)
        hy_sock_read_stop(s);
    if (err && err != hy_err_buf_full) {
        conn_close(h);
        return;
    }
    flush(h);
}

/* client_body_timeout, as nginx: no 408 goes out, the stream is reset with PROTOCOL_ERROR (the handler sees the
 * error and the access log its 408); the body bytes held are acknowledged, the connection goes on. */
static void body_timeout(h2conn_t *h, h2stream_t *st)
{
    if (st->rb_len)
        nghttp2_session_consume(h->ng, st->id, st->rb_len);
    st->rb_len = 0;
    st->body_reading = false;
    st->reset = true;
    nghttp2_submit_rst_stream(h->ng, NGHTTP2_FLAG_NONE, st->id, NGHTTP2_PROTOCOL_ERROR);
    hy_req__body_error(&st->req, 408);
}

/* Timers: idle (no stream: keepalive_timeout, GOAWAY then close), send_timeout while output waits for a client
 * that does not read or keeps its window closed. */
static void on_timer(hy_timer_t *t)
{
    h2conn_t *h = t->data;
    hy_http_loc_conf_t *lc = h->dsrv->loc;
    if (h->lingering) {
        conn_close(h);
        return;
    }
    if (h->nstreams == 0) {
        if (!h->goaway && !h->fatal) {
            h->fatal = true; /* close once the GOAWAY is out */
            nghttp2_submit_goaway(h->ng, NGHTTP2_FLAG_NONE, nghttp2_session_get_last_proc_stream_id(h->ng),
                                  NGHTTP2_NO_ERROR, NULL, 0);
            hy_timer_link(h->c->sock.loop, &h->timer, (uint64_t)lc->send_timeout_ms);
            flush(h);
            return;
        }
        conn_close(h);
        return;
    }
    uint64_t now = hy_clock_now_ms(), sto = (uint64_t)lc->send_timeout_ms;
    if (now >= h->send_due) { /* send_timeout: output waited all that time and none of it moved */
        bool waiting = !hy_outq_empty(&h->c->sock.outq);
        for (h2stream_t *st = h->streams; st; st = st->next) {
            if (st->reset)
                continue;
            waiting = waiting || st->out.head != NULL || (st->final && !st->eof_sent);
        }
        if (waiting && h->c->sock.bytes_out == h->send_mark) {
            hy_log_conn(HY_LOG_INFO, h->c->id, "client timed out (110: Connection timed out) while sending "
                        "response to client, client: %s", h->c->peer_text);
            conn_close(h);
            return;
        }
        h->send_mark = h->c->sock.bytes_out;
        h->send_due = now + sto;
    }
    uint64_t next = h->send_due - now, hto = (uint64_t)h->dsrv->client_header_timeout_ms;
    for (h2stream_t *st = h->streams, *nx; st; st = nx) {
        nx = st->next;
        if (st->reset || st->final)
            continue;
        if (!st->started) { /* client_header_timeout: the header block is not whole yet */
            if (now - st->head_start_ms >= hto) {
                hy_log_conn(HY_LOG_INFO, h->c->id, "client timed out (110: Connection timed out) while reading "
                            "client request headers, client: %s", h->c->peer_text);
                st->reset = true; /* as nginx: the stream ends with PROTOCOL_ERROR, the connection goes on */
                nghttp2_submit_rst_stream(h->ng, NGHTTP2_FLAG_NONE, st->id, NGHTTP2_PROTOCOL_ERROR);
                continue;
            }
            next = HY_MIN(next, hto - (now - st->head_start_ms));
            continue;
        }
        /* client_body_timeout: a stream whose handler waits for body bytes that do not come */
        if (!st->body_reading || st->body_waiting || st->rb_end)
            continue;
        hy_http_loc_conf_t *blc = st->req.loc ? st->req.loc : lc;
        uint64_t limit = (uint64_t)blc->client_body_timeout_ms;
        if (now - st->body_last_ms >= limit) {
            hy_req_log(&st->req, HY_LOG_INFO, "client timed out (110: Connection timed out) while reading client "
                       "request body");
            body_timeout(h, st);
            continue;
        }
        next = HY_MIN(next, limit - (now - st->body_last_ms));
    }
    hy_timer_link(h->c->sock.loop, &h->timer, next);
    hy_h2_schedule_flush(h);
}

static void free_conn(void *arg)
{
    h2conn_t *h = arg;
    nghttp2_session_del(h->ng);
    free(h);
}

static void conn_close(h2conn_t *h)
{
    if (h->closed)
        return;
    h->closed = true;
    while (h->streams) {
        h2stream_t *st = h->streams;
        if (!st->final && st->started) {
            st->reset = true;
            if (st->req.status == 0)
                st->req.status = 499;
        }
        st->reset = true;
        nghttp2_session_set_stream_user_data(h->ng, st->id, NULL);
        stream_free(st);
    }
    hy_loop_t *loop = h->c->sock.loop;
    hy_timer_unlink(loop, &h->timer);
    h->c->proto = NULL;
    hy_conn_close(h->c);
    hy_loop_free_later(loop, free_conn, h);
}

static void h2_close(hy_conn_t *c)
{
    conn_close(c->proto);
}

/* Graceful stop: GOAWAY with the last stream taken; streams in flight finish, then the connection closes. */
static void h2_shutdown(hy_conn_t *c)
{
    h2conn_t *h = c->proto;
    if (h->goaway || h->closed)
        return;
    h->goaway = true;
    nghttp2_submit_goaway(h->ng, NGHTTP2_FLAG_NONE, nghttp2_session_get_last_proc_stream_id(h->ng),
                          NGHTTP2_NO_ERROR, NULL, 0);
    hy_h2_schedule_flush(h);
}

static const hy_conn_ops_t h2_ops = {
    .name = "HTTP/2.0", .multiplexed = true, .send = hy_h2_send, .abort = hy_h2_abort, .read_body = hy_h2_read_body, .shutdown = h2_shutdown,
    .close = h2_close,
};

static nghttp2_session_callbacks *callbacks;
static nghttp2_option *options;

static void setup_once(void)
{
    if (callbacks)
        return;
    nghttp2_session_callbacks_new(&callbacks);
    nghttp2_session_callbacks_set_on_begin_headers_callback(callbacks, on_begin_headers);
    nghttp2_session_callbacks_set_on_header_callback(callbacks, on_header);
    nghttp2_session_callbacks_set_on_frame_recv_callback(callbacks, on_frame_recv);
    nghttp2_session_callbacks_set_on_data_chunk_recv_callback(callbacks, hy_h2_on_data_chunk);
    nghttp2_session_callbacks_set_on_stream_close_callback(callbacks, on_stream_close);
    nghttp2_session_callbacks_set_on_frame_send_callback(callbacks, on_frame_send);
    nghttp2_session_callbacks_set_before_frame_send_callback(callbacks, before_frame_send);
    nghttp2_session_callbacks_set_on_frame_not_send_callback(callbacks, on_frame_not_send);
    hy_ng_set_data_source_read_length_cb(callbacks, data_length);
    nghttp2_session_callbacks_set_on_begin_frame_callback(callbacks, on_begin_frame);
    nghttp2_session_callbacks_set_error_callback2(callbacks, on_error);
    nghttp2_session_callbacks_set_on_extension_chunk_recv_callback(callbacks, on_ext_chunk);
    nghttp2_session_callbacks_set_unpack_extension_callback(callbacks, unpack_ext);
    nghttp2_option_new(&options);
    nghttp2_option_set_no_auto_window_update(options, 1);
    nghttp2_option_set_no_closed_streams(options, 1);
    /* response heads up to 1 MiB, in as many CONTINUATION frames as needed (nghttp2's default stops at 64 KiB;
     * nginx has no such bound); its frame buffers grow only for a head that needs them */
    nghttp2_option_set_max_send_header_block_length(options, MAX_RESPONSE_HEAD);
    nghttp2_option_set_no_recv_client_magic(options, 1); /* client_preface() checks it */
    /* nghttp2's HTTP messaging checks reset a malformed request's stream; nginx answers most with 400: on_header,
     * start_request and hy_h2_body_end make nginx's checks instead (docs/ARCHITECTURE.md, HTTP/2) */
    nghttp2_option_set_no_http_messaging(options, 1);
    hy_ng_option_set_max_continuations(options, 4 * MAX_CONTINUATIONS); /* ours (logged) decides first */
    nghttp2_option_set_user_recv_extension_type(options, NGHTTP2_PRIORITY_UPDATE); /* unpack_ext reads it */
}

/* nghttp2 allocates per stream, per header field and per frame: its blocks come from the small-block cache
 * (core/smalloc.h), which costs a few instructions where libc's malloc/free pair costs about 200. */
static void *ng_malloc(size_t n, void *ud)
{
    (void)ud;
    return hy_sm_alloc(n);
}

static void ng_free(void *p, void *ud)
{
    (void)ud;
    hy_sm_free(p);
}

static void *ng_calloc(size_t nmemb, size_t size, void *ud)
{
    (void)ud;
    return hy_sm_calloc(nmemb, size);
}

static void *ng_realloc(void *p, size_t n, void *ud)
{
    (void)ud;
    return hy_sm_realloc(p, n);
}

static nghttp2_mem ng_mem = {NULL, ng_malloc, ng_free, ng_calloc, ng_realloc};

void hy_h2_attach(hy_conn_t *c)
{
    setup_once();
    h2conn_t *h = hy_calloc(sizeof(*h));
    h->c = c;
    h->dsrv = c->addr->default_server;
    h->h2sc = hy_http2_srv_conf(h->dsrv);
    h->field_limit = (size_t)h->dsrv->large_header_size;
    h->header_limit = (size_t)(h->dsrv->large_header_num * h->dsrv->large_header_size);
    h->timer.cb = on_timer;
    h->timer.data = h;
    h->flush_defer.cb = on_flush_defer;
    h->flush_defer.data = h;
    h->proceed_defer.cb = hy_h2_on_proceed_defer;
    h->proceed_defer.data = h;
    c->ops = &h2_ops;
    c->proto = h;
    c->sock.data = h;
    c->sock.read_limit = hy_http2_recv_buffer_size(c->cycle); /* each read is consumed whole */
    nghttp2_session_server_new3(&h->ng, callbacks, h, options, &ng_mem);
    nghttp2_settings_entry iv[] = {
        {NGHTTP2_SETTINGS_MAX_CONCURRENT_STREAMS, (uint32_t)h->h2sc->max_concurrent_streams},
        {NGHTTP2_SETTINGS_INITIAL_WINDOW_SIZE, (uint32_t)h->h2sc->body_preread_size},
        {NGHTTP2_SETTINGS_MAX_HEADER_LIST_SIZE, (uint32_t)h->header_limit},
        {NGHTTP2_SETTINGS_NO_RFC7540_PRIORITIES, 1}, /* RFC 9218 replaces the RFC 7540 tree (h2_stream.c) */
    };
    nghttp2_submit_settings(h->ng, NGHTTP2_FLAG_NONE, iv, HY_ARRAY_SIZE(iv));
    nghttp2_session_set_local_window_size(h->ng, NGHTTP2_FLAG_NONE, 0, NGHTTP2_MAX_WINDOW_SIZE);
    hy_timer_link(c->sock.loop, &h->timer, (uint64_t)h->dsrv->client_header_timeout_ms);
    hy_sock_read_start(&c->sock, on_read);
    if (c->sock.input.len)
        on_read(&c->sock, NULL);
    else
        hy_sock_read_now(&c->sock);
}
