/* h2client.c — the HTTP/2 client codec of the upstream engine (proxy_http_version 2).
 *
 * One stream per exchange and one exchange at a time on a connection (as nginx's proxy to HTTP/2 backends): the
 * nghttp2 client session lives with the connection (hy_upstream_conn_t.proto_state, freed when it closes), so it
 * survives in the keep-alive pool and carries the next exchange's stream; the stream's state lives with the request
 * (u->codec_state). The engine's byte-stream contract holds: create_request and frame_body/frame_file queue what
 * the session produces (preface, SETTINGS, HEADERS, DATA as the peer's flow-control window allows) on `out`;
 * process_head and process_body feed every received byte to the session and consume them (process_head leaves the
 * bytes of the call that completes the head for the engine to consume); what the session wants to send then
 * (SETTINGS ACK, WINDOW_UPDATE, request DATA a window update released) goes out with hy_upstream_codec_flush.
 * A connection that got GOAWAY, a protocol error or a stream that did not end cleanly is not reused. */
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <nghttp2/nghttp2.h>
#include "h2client.h"
#include "../core/file.h"
#include "../core/smalloc.h"
#include "../core/log.h"

typedef struct h2conn {
    nghttp2_session *session;
    hy_ureq_t *u; /* the exchange on it now (set at each entry from the engine) */
    bool goaway, failed;
} h2conn_t;

typedef struct h2stream {
    int32_t sid;
    hy_outq_t body;  /* request body not framed yet (copies and file regions) */
    bool body_last;  /* the end of the request body is in `body` */
    bool body_none;  /* no body: END_STREAM went with HEADERS */
    bool head_done;  /* the final response head arrived */
    bool remote_end; /* END_STREAM from the upstream */
    bool closed;     /* the stream is closed (close_err: its error code) */
    bool too_big;    /* the head did not fit in buffer_size */
    int rst;         /* RST_STREAM frames received for it (a second one is a protocol error, as nginx) */
    uint32_t rst_err;
    uint32_t close_err;
    hy_outq_t resp;    /* response DATA not handed to the engine yet */
    size_t head_bytes; /* the response head's size as nginx counts it (name + value + 4 per field) */
} h2stream_t;

static void stream_clear(void *arg)
{
    h2stream_t *rs = arg;
    hy_outq_clear(&rs->body);
    hy_outq_clear(&rs->resp);
}

static h2stream_t *st(hy_ureq_t *u)
{
    if (u->codec_state == NULL) {
        u->codec_state = hy_pcalloc(u->req->pool, sizeof(h2stream_t));
        hy_pool_on_clear(u->req->pool, stream_clear, u->codec_state);
    }
    return u->codec_state;
}

static void reinit(hy_ureq_t *u)
{
    if (u->codec_state == NULL)
        return;
    stream_clear(u->codec_state);
    memset(u->codec_state, 0, sizeof(h2stream_t));
}

static h2conn_t *conn_of(hy_ureq_t *u)
{
    h2conn_t *cs = u->conn ? u->conn->proto_state : NULL;
    if (cs)
        cs->u = u;
    return cs;
}

/* ---------------------------------------------------------------- session callbacks */

static h2stream_t *ours(h2conn_t *cs, int32_t sid)
{
    if (cs->u == NULL || cs->u->codec_state == NULL)
        return NULL;
    h2stream_t *rs = cs->u->codec_state;
    return sid > 0 && rs->sid == sid ? rs : NULL; /* 0: the connection's frames, or no stream yet */
}

static int on_header(nghttp2_session *s, const nghttp2_frame *f, const uint8_t *name, size_t namelen,
                     const uint8_t *value, size_t valuelen, uint8_t flags, void *ud)
{
    (void)s, (void)flags;
    h2conn_t *cs = ud;
    h2stream_t *rs = ours(cs, f->hd.stream_id);
    if (rs == NULL || f->hd.type != NGHTTP2_HEADERS)
        return 0;
    hy_ureq_t *u = cs->u;
    hy_pool_t *pool = u->req->pool;
    if (rs->head_done) { /* trailers */
        if (namelen == 0 || name[0] == ':')
            return 0;
        if (u->trailers_in == NULL)
            u->trailers_in = hy_array_create(pool, 4, sizeof(hy_header_t));
        *(hy_header_t *)hy_array_push(u->trailers_in) = (hy_header_t){
            {hy_pstrndup(pool, (const char *)name, namelen), namelen},
            {hy_pstrndup(pool, (const char *)value, valuelen), valuelen}};
        return 0;
    }
    rs->head_bytes += namelen + valuelen + 4;
    if (u->buffer_size > 0 && rs->head_bytes > (size_t)u->buffer_size) {
        rs->too_big = true;
        return NGHTTP2_ERR_TEMPORAL_CALLBACK_FAILURE; /* the stream is reset */
    }
    if (namelen == 7 && memcmp(name, ":status", 7) == 0) {
        u->status = (int)hy_parse_int((const char *)value, valuelen);
        return 0;
    }
    if (namelen && name[0] == ':')
        return 0;
    if (u->headers_in == NULL)
        u->headers_in = hy_array_create(pool, 16, sizeof(hy_header_t));
    hy_header_t *h = hy_array_push(u->headers_in);
    h->name = (hy_str_t){hy_pstrndup(pool, (const char *)name, namelen), namelen};
    h->value = (hy_str_t){hy_pstrndup(pool, (const char *)value, valuelen), valuelen};
    if (namelen == 14 && memcmp(name, "content-length", 14) == 0)
        u->resp_length = hy_parse_int(h->value.ptr, h->value.len);
    return 0;
}

static int on_frame_recv(nghttp2_session *s, const nghttp2_frame *f, void *ud)
{
    (void)s;
    h2conn_t *cs = ud;
    if (f->hd.type == NGHTTP2_GOAWAY) {
        cs->goaway = true; /* streams past its last id are closed by the session (REFUSED_STREAM) */
        return 0;
    }
    h2stream_t *rs = ours(cs, f->hd.stream_id);
    if (rs == NULL)
        return 0;
    hy_ureq_t *u = cs->u;
    if (f->hd.type == NGHTTP2_RST_STREAM) { /* also after END_STREAM: an error code still fails the response */
        if (++rs->rst > 1)
            cs->failed = true;
        if (f->rst_stream.error_code != NGHTTP2_NO_ERROR)
            rs->rst_err = f->rst_stream.error_code;
        return 0;
    }
    if (f->hd.type == NGHTTP2_HEADERS && !rs->head_done) {
        if (u->status >= 100 && u->status < 200) { /* an interim response (100, 103): dropped */
            u->status = 0;
            u->headers_in = NULL;
            u->resp_length = -1;
            rs->head_bytes = 0;
        } else {
            rs->head_done = true;
            if (u->headers_in == NULL)
                u->headers_in = hy_array_create(u->req->pool, 1, sizeof(hy_header_t));
        }
    }
    if ((f->hd.type == NGHTTP2_HEADERS || f->hd.type == NGHTTP2_DATA) && (f->hd.flags & NGHTTP2_FLAG_END_STREAM))
        rs->remote_end = true;
    return 0;
}

static int on_data(nghttp2_session *s, uint8_t flags, int32_t sid, const uint8_t *data, size_t len, void *ud)
{
    (void)s, (void)flags;
    h2stream_t *rs = ours(ud, sid);
    if (rs != NULL && len > 0)
        hy_outq_push_copy(&rs->resp, (const char *)data, len);
    return 0;
}

static int on_stream_close(nghttp2_session *s, int32_t sid, uint32_t err, void *ud)
{
    (void)s;
    h2conn_t *cs = ud;
    h2stream_t *rs = ours(cs, sid);
    if (rs == NULL)
        return 0;
    rs->closed = true;
    rs->close_err = err;
    if (err != NGHTTP2_NO_ERROR && !rs->too_big)
        hy_req_log(cs->u->req, HY_LOG_ERR, "upstream rejected request with error %u while %s, upstream: \"%.*s\"",
                   err, rs->head_done ? "reading upstream" : "reading response header from upstream",
                   cs->u->peer ? (int)cs->u->peer->name.len : 0, cs->u->peer ? cs->u->peer->name.ptr : "");
    return 0;
}

/* The request body for DATA frames: from the queue (memory copies, file regions read with pread). */
static ssize_t read_body(nghttp2_session *s, int32_t sid, uint8_t *buf, size_t length, uint32_t *flags,
                         nghttp2_data_source *src, void *ud)
{
    (void)s, (void)src;
    h2stream_t *rs = ours(ud, sid);
    if (rs == NULL)
        return NGHTTP2_ERR_TEMPORAL_CALLBACK_FAILURE;
    size_t n = 0;
    while (n < length && rs->body.head != NULL) {
        hy_seg_t *g = rs->body.head;
        size_t take = length - n;
        if (g->kind == HY_SEG_MEM) {
            if (take > g->mem.len)
                take = g->mem.len;
            memcpy(buf + n, g->mem.ptr, take);
        } else {
            if ((int64_t)take > g->file.len)
                take = (size_t)g->file.len;
            ssize_t r = pread(g->file.file->fd, buf + n, take, g->file.off);
            if (r <= 0)
                return NGHTTP2_ERR_TEMPORAL_CALLBACK_FAILURE;
            take = (size_t)r;
        }
        hy_outq_consume(&rs->body, take);
        n += take;
    }
    if (rs->body.head == NULL && rs->body_last)
        *flags |= NGHTTP2_DATA_FLAG_EOF;
    else if (n == 0)
        return NGHTTP2_ERR_DEFERRED; /* frame_body resumes it */
    return (ssize_t)n;
}

static void conn_free(void *arg)
{
    h2conn_t *cs = arg;
    nghttp2_session_del(cs->session);
    free(cs);
}

static int pump(h2conn_t *cs, hy_outq_t *out);

/* The pool's proto_idle: frames of the connection itself while no exchange uses it (PING, SETTINGS, WINDOW_UPDATE,
 * which the session answers); anything that leaves the session unusable (GOAWAY, an error, a frame on a stream)
 * closes the connection. */
static bool idle_input(hy_upstream_conn_t *c)
{
    h2conn_t *cs = c->proto_state;
    hy_buf_t *in = &c->sock.input;
    cs->u = NULL; /* no exchange: the callbacks find no stream of ours */
    ssize_t r = nghttp2_session_mem_recv(cs->session, (const uint8_t *)hy_buf_data(in), in->len);
    hy_buf_consume(in, in->len);
    if (r < 0 || cs->goaway || !nghttp2_session_want_read(cs->session))
        return false;
    return pump(cs, &c->sock.outq) == 0;
}

/* libnghttp2 allocates per frame and per field: from the small-block cache (core/smalloc) */
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

static h2conn_t *conn_new(hy_upstream_conn_t *c)
{
    nghttp2_session_callbacks *cb;
    if (nghttp2_session_callbacks_new(&cb) != 0)
        return NULL;
    nghttp2_session_callbacks_set_on_header_callback(cb, on_header);
    nghttp2_session_callbacks_set_on_frame_recv_callback(cb, on_frame_recv);
    nghttp2_session_callbacks_set_on_data_chunk_recv_callback(cb, on_data);
    nghttp2_session_callbacks_set_on_stream_close_callback(cb, on_stream_close);
    h2conn_t *cs = hy_calloc(sizeof(*cs));
    int rc = nghttp2_session_client_new3(&cs->session, cb, cs, NULL, &ng_mem);
    nghttp2_session_callbacks_del(cb);
    if (rc != 0) {
        free(cs);
        return NULL;
    }
    nghttp2_settings_entry iv[] = {{NGHTTP2_SETTINGS_ENABLE_PUSH, 0}};
    nghttp2_submit_settings(cs->session, NGHTTP2_FLAG_NONE, iv, 1);
    c->proto_state = cs;
    c->proto_free = conn_free;
    c->proto_idle = idle_input;
    return cs;
}

/* What the session wants to send, onto out. */
static int pump(h2conn_t *cs, hy_outq_t *out)
{
    for (;;) {
        const uint8_t *d;
        ssize_t n = nghttp2_session_mem_send(cs->session, &d);
        if (n < 0) {
            cs->failed = true;
            return -1;
        }
        if (n == 0)
            return 0;
        hy_outq_push_copy(out, (const char *)d, (size_t)n);
    }
}

/* ---------------------------------------------------------------- request */

/* Hop-by-hop fields HTTP/2 forbids (RFC 9113 8.2.2), Host (it becomes :authority) and Content-Length (the codec
 * sends the body's own). */
static bool dropped(hy_str_t n, hy_str_t v)
{
    return hy_str_caseeq(n, "Host") || hy_str_caseeq(n, "Connection") || hy_str_caseeq(n, "Keep-Alive") ||
           hy_str_caseeq(n, "Proxy-Connection") || hy_str_caseeq(n, "Transfer-Encoding") ||
           hy_str_caseeq(n, "Upgrade") || hy_str_caseeq(n, "Content-Length") ||
           (hy_str_caseeq(n, "TE") && !hy_str_caseeq(v, "trailers"));
}

static nghttp2_nv nv(hy_str_t n, hy_str_t v)
{
    return (nghttp2_nv){(uint8_t *)n.ptr, (uint8_t *)v.ptr, n.len, v.len, NGHTTP2_NV_FLAG_NONE};
}

static int create_request(hy_ureq_t *u, hy_outq_t *out)
{
    h2stream_t *rs = st(u);
    h2conn_t *cs = conn_of(u);
    if (cs == NULL && (cs = conn_new(u->conn)) == NULL)
        return -1;
    cs->u = u;
    hy_pool_t *pool = u->req->pool;
    nghttp2_nv *h = hy_palloc(pool, (u->nheaders + 5) * sizeof(*h));
    size_t n = 0;
    hy_str_t authority = u->group ? u->group->name : HY_STR("localhost");
    for (size_t i = 0; i < u->nheaders; i++)
        if (hy_str_caseeq(u->headers[i].name, "Host"))
            authority = u->headers[i].value;
    h[n++] = nv(HY_STR(":method"), u->method);
    h[n++] = nv(HY_STR(":scheme"), u->ssl ? HY_STR("https") : HY_STR("http"));
    h[n++] = nv(HY_STR(":authority"), authority);
    h[n++] = nv(HY_STR(":path"), u->uri.len ? u->uri : HY_STR("/"));
    for (size_t i = 0; i < u->nheaders; i++) {
        hy_str_t name = u->headers[i].name, value = u->headers[i].value;
        if (dropped(name, value))
            continue;
        char *low = hy_pstrndup(pool, name.ptr, name.len);
        hy_str_lower(low, name.len);
        h[n++] = nv((hy_str_t){low, name.len}, value);
    }
    if (u->body_length >= 0) {
        char *num = hy_palloc(pool, 24);
        size_t l = hy_fmt_u64(num, (uint64_t)u->body_length);
        h[n++] = nv(HY_STR("content-length"), (hy_str_t){num, l});
    }
    rs->body_none = u->body_length == HY_UREQ_BODY_NONE || u->body_length == 0;
    nghttp2_data_provider dp = {.read_callback = read_body};
    u->resp_length = -1;
    rs->sid = nghttp2_submit_request(cs->session, NULL, h, n, rs->body_none ? NULL : &dp, NULL);
    if (rs->sid < 0)
        return -1;
    return pump(cs, out);
}

static void frame_more(hy_ureq_t *u, hy_outq_t *out, h2stream_t *rs)
{
    h2conn_t *cs = conn_of(u);
    if (cs == NULL || rs->closed)
        return;
    nghttp2_session_resume_data(cs->session, rs->sid);
    pump(cs, out);
}

static void frame_body(hy_ureq_t *u, hy_outq_t *out, const char *p, size_t n, bool last)
{
    h2stream_t *rs = st(u);
    if (rs->body_none)
        return;
    if (n)
        hy_outq_push_copy(&rs->body, p, n);
    if (last)
        rs->body_last = true;
    if (last || u->body_streamed) /* a buffered body goes whole: its last DATA frame carries END_STREAM */
        frame_more(u, out, rs);
}

static void frame_file(hy_ureq_t *u, hy_outq_t *out, hy_file_t *f, int64_t size)
{
    h2stream_t *rs = st(u);
    if (rs->body_none || size <= 0)
        return;
    (void)out; /* framed with the end of the body (frame_body) */
    hy_outq_push_file(&rs->body, f, 0, size);
}

static size_t pending(const hy_ureq_t *u)
{
    const h2stream_t *rs = u->codec_state;
    return rs ? rs->body.bytes : 0;
}

/* ---------------------------------------------------------------- response */

/* Every byte of in to the session (not consumed here); what it answers goes out. -1: a connection error. */
static int feed(hy_ureq_t *u, h2conn_t *cs, hy_buf_t *in)
{
    if (in->len > 0) {
        ssize_t r = nghttp2_session_mem_recv(cs->session, (const uint8_t *)hy_buf_data(in), in->len);
        if (r < 0) {
            cs->failed = true;
            hy_req_log(u->req, HY_LOG_ERR, "upstream sent invalid HTTP/2 data (%s) while reading upstream, upstream: "
                       "\"%.*s\"", nghttp2_strerror((int)r), u->peer ? (int)u->peer->name.len : 0,
                       u->peer ? u->peer->name.ptr : "");
        }
    }
    if (pump(cs, &u->conn->sock.outq) == 0)
        hy_upstream_codec_flush(u);
    return cs->failed ? -1 : 0;
}

static int process_head(hy_ureq_t *u, hy_buf_t *in)
{
    h2stream_t *rs = st(u);
    h2conn_t *cs = conn_of(u);
    if (cs == NULL)
        return -1;
    size_t n = in->len;
    if (feed(u, cs, in) != 0 || rs->too_big)
        return -1;
    if (rs->head_done) {
        u->resp_keepalive = true;
        return (int)n; /* the engine consumes them */
    }
    hy_buf_consume(in, n);
    /* a connection error the session answered with GOAWAY itself (a HPACK error ...) leaves it reading nothing */
    return rs->closed || !nghttp2_session_want_read(cs->session) ? -1 : 0;
}

static int process_body(hy_ureq_t *u, hy_buf_t *in, bool eof, hy_outq_t *out, bool *done)
{
    h2stream_t *rs = st(u);
    h2conn_t *cs = conn_of(u);
    *done = false;
    int rc = cs ? feed(u, cs, in) : -1;
    hy_buf_consume(in, in->len);
    if (rc != 0 || rs->rst_err != NGHTTP2_NO_ERROR) { /* what came with the error is not passed on (nginx) */
        hy_outq_clear(&rs->resp);
        return -1;
    }
    hy_outq_move(out, &rs->resp);
    if (rs->remote_end && rs->close_err == NGHTTP2_NO_ERROR) {
        *done = true;
        return 0;
    }
    return rs->closed || eof || !nghttp2_session_want_read(cs->session) ? -1 : 0;
}

static bool reusable(const hy_ureq_t *u)
{
    const h2stream_t *rs = u->codec_state;
    const h2conn_t *cs = u->conn ? u->conn->proto_state : NULL;
    return rs != NULL && cs != NULL && !cs->goaway && !cs->failed && rs->closed && rs->close_err == NGHTTP2_NO_ERROR &&
           rs->rst_err == NGHTTP2_NO_ERROR && /* a RST_STREAM NO_ERROR ends an unread request body: still reusable */
           nghttp2_session_want_read(cs->session) && nghttp2_session_get_next_stream_id(cs->session) < (1u << 30);
}

const hy_upstream_codec_t hy_upstream_h2_codec = {
    .name = "http2",
    .create_request = create_request,
    .frame_body = frame_body,
    .process_head = process_head,
    .process_body = process_body,
    .reusable = reusable,
    .reinit = reinit,
    .frame_file = frame_file,
    .pending = pending,
    .head_in_records = true,
    .conn_state = true,
};
