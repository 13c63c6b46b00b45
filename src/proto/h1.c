/* h1.c — HTTP/1.0 and 1.1 server connections (RFC 9112).
 * One request at a time: the next pipelined request is parsed only after the current response has been
 * written (h2o's rule), so responses always leave in order. A request body that no handler reads is discarded
 * as it arrives (nginx's discard), so keep-alive survives bodies on static locations. Errors that leave the
 * framing unknown close the connection after a lingering read, so the client gets to read the response. */
#include <errno.h>
#include <string.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include "h1.h"
#include "h1parse.h"
#include "h2.h"
#include "../http/log_access.h"
#include "../http/http2_module.h"
#include "../http/request.h"
#include "../http/conn.h"
#include "../http/body.h"
#include "../http/phases.h"
#include "../http/msie.h"
#include "../core/log.h"
#include "../core/clock.h"
#include "../core/file.h"
#include "../core/httpdate.h"
#include "../event/sock.h"
#include "../conf/cycle.h"

#define MAX_HEADERS 128
#define SHUTDOWN_GRACE_MS 1000 /* how long an idle keep-alive connection may stay after a graceful stop */

enum { ST_HEAD = 0, ST_REQ, ST_LINGER, ST_CLOSED };

typedef struct h1conn {
    hy_conn_t *c;          /* the connection (registry, transport); this struct is its ->proto */
    hy_timer_t timer;
    hy_defer_t parse_defer;
    hy_defer_t proceed_defer; /* backpressure: the producer's proceed runs from the loop, never nested in a write */
    hy_pool_t *pool;       /* owned: request arena, reset between requests */
    hy_req_t *req;         /* in pool */
    hy_http_srv_conf_t *dsrv; /* default server of the address: header limits and timeouts before Host */
    int state;
    uint64_t num_requests;
    size_t last_len;
    int64_t body_left;     /* Content-Length bytes still to discard */
    int64_t body_total;    /* chunked payload bytes seen (client_max_body_size) */
    int64_t body_max;
    hy_h1_chunked_t chunked;
    bool body_chunked, body_pending, resp_done, keepalive, linger_needed;
    bool chunked_out;      /* this response is sent chunked (RFC 9112 §7.1) */
    bool upgraded;         /* a 101: the socket belongs to the request's handler (h1_upgrade) */
    bool body_reading;     /* the core's body reader (http/body.h) takes the payload; else it is discarded */
    bool body_waiting;     /* a streaming handler has not taken all it was offered: reading paused */
    bool in_feed, written_pending; /* re-entrancy guard: a response finished from a body callback */
    bool sent_continue;    /* "100 Continue" already went out */
    hy_req_proceed_cb close_cb; /* h1_watch_close: told once when the client closes before the response ends */
    size_t decoded;        /* chunked: payload bytes at the start of the input already decoded in place */
    bool decoded_last;     /* ... and they end the body */
    uint64_t send_mark;
    uint64_t req_start_ms;  /* wall-clock ms when this request's first bytes were seen */
    bool next_pipelined;    /* the next request starts in bytes already buffered */
    uint64_t linger_deadline;
    int64_t keepalive_ms, body_timeout_ms, send_timeout_ms, linger_time_ms, linger_timeout_ms;
    int lingering_close, reset_timedout;
} h1conn_t;



/* Whether v contains w (n bytes), case-insensitively (nginx reads "Connection: te, close" as close). */
static bool has_word(hy_str_t v, const char *w, size_t n)
{
    for (size_t i = 0; i + n <= v.len; i++)
        if (hy_mem_caseeq(v.ptr + i, w, n))
            return true;
    return false;
}
static void on_read(hy_sock_t *s, const char *err);
static void on_written_partial(hy_sock_t *s, const char *err);
static void on_timer(hy_timer_t *t);
/* nginx's other reasons to end a connection after this request: its age (keepalive_time) and keepalive_disable's
 * browsers (old MSIE after a POST, Safari on macOS) */
static bool keepalive_refused(h1conn_t *h, const hy_req_t *req, const hy_http_loc_conf_t *lc)
{
    if (hy_clock_time_ms() - (int64_t)h->c->start_ms > lc->keepalive_time_ms)
        return true;
    if ((lc->keepalive_disable & HY_KEEPALIVE_DISABLE_MSIE6) && req->method_id == HY_M_POST &&
        hy_http_ua_msie6(req->h_user_agent))
        return true;
    return (lc->keepalive_disable & HY_KEEPALIVE_DISABLE_SAFARI) && hy_http_ua_safari(req->h_user_agent);
}

static void on_parse_defer(hy_defer_t *d);
static void on_proceed_defer(hy_defer_t *d);
static void h1_send(hy_req_t *req, bool is_final);
static void h1_abort(hy_req_t *req);
static void conn_close(h1conn_t *h);
static void try_parse(h1conn_t *h, const char *err);

static void h1_shutdown(hy_conn_t *c);
static void h1_close(hy_conn_t *c);
static void h1_read_body(hy_req_t *req);
static hy_sock_t *h1_upgrade(hy_req_t *req);
static void h1_watch_close(hy_req_t *req, hy_req_proceed_cb cb);

static const hy_conn_ops_t h1_ops = {
    .name = "HTTP/1.1", .send = h1_send, .abort = h1_abort, .read_body = h1_read_body, .shutdown = h1_shutdown,
    .close = h1_close, .upgrade = h1_upgrade, .watch_close = h1_watch_close,
};

static void idle_add(h1conn_t *h)
{
    hy_conn_set_state(h->c, HY_CONN_WAITING);
}

static void idle_del(h1conn_t *h)
{
    if (h->c->is_idle)
        hy_conn_set_state(h->c, HY_CONN_READING);
}

static void free_conn(void *arg)
{
    h1conn_t *h = arg;
    hy_pool_give(h->pool);
    free(h);
}

static void conn_close(h1conn_t *h)
{
    if (h->state == ST_CLOSED)
        return;
    if (h->state == ST_REQ && h->req)
        hy_req_log_phase(h->req); /* the client went away mid-response: still one log line */
    hy_http_access_log_flush();
    h->state = ST_CLOSED;
    hy_loop_t *loop = h->c->sock.loop;
    hy_timer_unlink(loop, &h->timer);
    h->c->proto = NULL;
    hy_conn_close(h->c);
    hy_loop_free_later(loop, free_conn, h);
}

static void conn_reset(h1conn_t *h)
{
    hy_sock_reset(&h->c->sock);
    conn_close(h);
}

static void h1_close(hy_conn_t *c)
{
    conn_close(c->proto);
}

void hy_h1_attach(hy_conn_t *c)
{
    h1conn_t *h = hy_calloc(sizeof(*h));
    h->c = c;
    c->ops = &h1_ops;
    c->proto = h;
    c->sock.data = h;
    h->dsrv = c->addr->default_server;
    h->timer.cb = on_timer;
    h->timer.data = h;
    h->parse_defer.cb = on_parse_defer;
    h->parse_defer.data = h;
    h->proceed_defer.cb = on_proceed_defer;
    h->proceed_defer.data = h;
    c->sock.read_limit = (size_t)(h->dsrv->large_header_num * h->dsrv->large_header_size);
    if (c->sock.read_limit < (size_t)h->dsrv->client_header_buffer_size)
        c->sock.read_limit = (size_t)h->dsrv->client_header_buffer_size;
    h->state = ST_HEAD;
    hy_timer_link(c->sock.loop, &h->timer, (uint64_t)h->dsrv->client_header_timeout_ms);
    hy_sock_read_start(&c->sock, on_read);
    hy_sock_read_now(&c->sock);
}

/* ---- lingering close (nginx's lingering_close): stop writing, read and drop what the client still sends ---- */

static bool client_sent_more(h1conn_t *h)
{
    if (h->linger_needed || h->c->sock.input.len > 0)
        return true;
    if (h->req && h->req->status < 400)
        return false; /* a normal last response: skip the syscall (requests sent after it may be reset) */
    return hy_sock_has_unread(&h->c->sock); /* unread bytes: close() would reset */
}

static void start_linger(h1conn_t *h)
{
    hy_http_access_log_flush(); /* the line is in the file before the client sees the close (nginx) */
    if (h->lingering_close == HY_LINGER_OFF || (h->lingering_close == HY_LINGER_ON && !client_sent_more(h))) {
        conn_close(h);
        return;
    }
    if (hy_sock_shutdown_write(&h->c->sock) != 0) {
        conn_close(h);
        return;
    }
    h->state = ST_LINGER;
    h->linger_deadline = hy_clock_now_ms() + (uint64_t)h->linger_time_ms;
    hy_buf_release(&h->c->sock.input);
    hy_timer_link(h->c->sock.loop, &h->timer, (uint64_t)h->linger_timeout_ms);
    hy_sock_read_start(&h->c->sock, on_read);
}

static void linger_read(h1conn_t *h, const char *err)
{
    hy_buf_release(&h->c->sock.input);
    if (err != NULL && err != hy_err_buf_full) {
        conn_close(h);
        return;
    }
    uint64_t now = hy_clock_now_ms();
    if (now >= h->linger_deadline) {
        conn_close(h);
        return;
    }
    hy_timer_link(h->c->sock.loop, &h->timer, HY_MIN((uint64_t)h->linger_timeout_ms, h->linger_deadline - now));
}

/* ---- request body discarding ---- */

/* Drop body bytes from the input. Returns false when the body is malformed or too large (connection must go). */
static bool discard_body(h1conn_t *h)
{
    hy_buf_t *in = &h->c->sock.input;
    if (!h->body_pending || in->len == 0)
        return true;
    if (!h->body_chunked) {
        size_t n = (size_t)HY_MIN((int64_t)in->len, h->body_left);
        if (h->req)
            h->req->request_length += (int64_t)n;
        hy_buf_consume(in, n);
        h->body_left -= (int64_t)n;
        if (h->body_left == 0)
            h->body_pending = false;
        return true;
    }
    size_t len = in->len;
    size_t before = in->len;
    ssize_t r = hy_h1_decode_chunked(&h->chunked, hy_buf_data(in), &len);
    if (h->req && r != -1)
        h->req->request_length += (int64_t)(r >= 0 ? before - (size_t)r : before);
    if (r == -1)
        return false;
    h->body_total += (int64_t)len;
    if (h->body_max > 0 && h->body_total > h->body_max)
        return false;
    if (r == -2) {
        hy_buf_consume(in, in->len);
        return true;
    }
    /* complete: payload at [0,len), the next request's bytes at [len, len + r) */
    in->len = len + (size_t)r;
    hy_buf_consume(in, len);
    h->body_pending = false;
    return true;
}

/* ---- request body reading for the core (http/body.h) ---- */

static bool expects_continue(const hy_req_t *req)
{
    return req->h_expect && req->version >= 11 && hy_str_caseeq(*req->h_expect, "100-continue");
}

static void on_written(hy_sock_t *s, const char *err);

/* The core no longer takes the body (the response is final): decoded bytes it left are dropped, the rest of the
 * body goes through the discard path. */
static void body_stop(h1conn_t *h)
{
    if (!h->body_reading)
        return;
    h->body_reading = false;
    h->body_waiting = false;
    if (h->decoded) {
        hy_buf_consume(&h->c->sock.input, h->decoded);
        h->decoded = 0;
    }
    if (h->decoded_last)
        h->body_pending = false;
}

static void body_fail(h1conn_t *h, int status)
{
    h->keepalive = false;
    h->linger_needed = true;
    h->body_pending = false;
    h->body_reading = false;
    hy_req__body_error(h->req, status);
}

/* Hand buffered payload to the core until it is all taken, the core pauses us, or more must be read. */
static void feed_body(h1conn_t *h)
{
    hy_buf_t *in = &h->c->sock.input;
    hy_req_t *req = h->req;
    h->in_feed = true;
    while (h->body_reading && h->body_pending && h->state == ST_REQ) {
        const char *p;
        size_t n;
        bool last;
        if (!h->body_chunked) {
            n = (size_t)HY_MIN((int64_t)in->len, h->body_left);
            last = (int64_t)n == h->body_left;
            if (n == 0 && !last)
                break;
        } else {
            if (h->decoded == 0 && !h->decoded_last) {
                if (in->len == 0)
                    break;
                size_t len = in->len, before = in->len;
                ssize_t r = hy_h1_decode_chunked(&h->chunked, hy_buf_data(in), &len);
                if (r == -1) {
                    hy_log_conn(HY_LOG_INFO, h->c->id, "client sent invalid chunked body, client: %s",
                                h->c->peer_text);
                    body_fail(h, 400);
                    break;
                }
                req->request_length += (int64_t)(r >= 0 ? before - (size_t)r : before);
                h->body_total += (int64_t)len;
                if (h->body_max > 0 && h->body_total > h->body_max) {
                    hy_log_conn(HY_LOG_ERR, h->c->id, "client intended to send too large chunked body: %lld bytes, "
                                "client: %s", (long long)h->body_total, h->c->peer_text);
                    body_fail(h, 413);
                    break;
                }
                in->len = len + (r >= 0 ? (size_t)r : 0);
                h->decoded = len;
                h->decoded_last = r >= 0;
                if (len == 0 && r < 0)
                    break;
            }
            n = h->decoded;
            last = h->decoded_last;
        }
        p = hy_buf_data(in);
        size_t took = hy_req__body_in(req, p, n, last);
        if (h->state == ST_REQ && !h->body_reading && !h->body_chunked) {
            /* the response ended while the handler took these bytes and body_stop ran (it drops the decoded
             * chunked bytes itself): the bytes taken are this body's, not the start of the next request */
            hy_buf_consume(in, took);
            h->body_left -= (int64_t)took;
            req->request_length += (int64_t)took;
            if (h->body_left == 0)
                h->body_pending = false;
        }
        if (h->state != ST_REQ || !h->body_reading)
            break; /* closed, or the response ended and body_stop ran */
        hy_buf_consume(in, took);
        if (!h->body_chunked) {
            h->body_left -= (int64_t)took;
            req->request_length += (int64_t)took;
        } else {
            h->decoded -= took;
        }
        if (took < n) { /* the handler is full: stop reading until it resumes us */
            h->body_waiting = true;
            break;
        }
        if (last) {
            h->body_pending = false;
            h->decoded_last = false;
            break;
        }
    }
    h->in_feed = false;
    if (h->state == ST_CLOSED)
        return;
    if (h->written_pending) {
        h->written_pending = false;
        on_written(&h->c->sock, NULL);
        return;
    }
    if (h->state == ST_REQ && h->body_reading && h->body_pending && !h->body_waiting) {
        hy_timer_link(h->c->sock.loop, &h->timer, (uint64_t)h->body_timeout_ms);
        hy_sock_read_start(&h->c->sock, on_read);
    } else if (h->state == ST_REQ && !h->resp_done) {
        if (h->close_cb && !h->body_pending && h->c->sock.input.len < h->c->sock.read_limit)
            hy_sock_read_start(&h->c->sock, on_read); /* h1_watch_close: only the close is of interest now */
        else
            hy_sock_read_stop(&h->c->sock);
        if (!h->body_pending)
            hy_timer_unlink(h->c->sock.loop, &h->timer);
    }
}

static void h1_read_body(hy_req_t *req)
{
    h1conn_t *h = req->conn->proto;
    if (h->state != ST_REQ || h->resp_done)
        return;
    if (!h->body_reading) {
        h->body_reading = true;
        hy_http_loc_conf_t *lc = req->loc ? req->loc : h->dsrv->loc;
        h->body_max = lc->client_max_body_size;
        h->body_timeout_ms = lc->client_body_timeout_ms;
        /* RFC 9110 §10.1.1: the client waits for "100 Continue" before sending the body; nginx answers it as
         * the body is asked for, an empty one (Content-Length: 0) too */
        if (expects_continue(req) && h->c->sock.input.len == 0 && !h->sent_continue) {
            h->sent_continue = true;
            hy_outq_push_mem(&h->c->sock.outq, "HTTP/1.1 100 Continue\r\n\r\n", 25, NULL, NULL);
            hy_sock_write(&h->c->sock, on_written_partial);
        }
        if (!h->body_pending) {
            hy_req__body_in(req, "", 0, true);
            return;
        }
    }
    h->body_waiting = false;
    feed_body(h);
}

/* Whether the chunked body bytes already buffered are well-formed so far, without consuming them (the handler
 * has not said yet whether it reads or discards the body). */
static bool chunked_prefix_valid(h1conn_t *h)
{
    hy_buf_t *in = &h->c->sock.input;
    hy_h1_chunked_t d = h->chunked;
    char *copy = hy_alloc(in->len);
    memcpy(copy, hy_buf_data(in), in->len);
    size_t len = in->len;
    ssize_t r = hy_h1_decode_chunked(&d, copy, &len);
    free(copy);
    return r != -1;
}

/* ---- the request cycle ---- */

static void next_request(h1conn_t *h)
{
    if (h->num_requests == 0 && h->dsrv->loc->tcp_nodelay) /* as nginx: only once a connection goes keep-alive */
        hy_sock_set_nodelay(&h->c->sock);
    h->num_requests++;
    h->req = NULL;
    h->close_cb = NULL;
    if (h->c->sock.input.len > 0) {
        hy_pool_reset(h->pool);
    } else { /* an idle keep-alive connection holds no request arena (and no input buffer) */
        hy_pool_give(h->pool);
        h->pool = NULL;
    }
    h->state = ST_HEAD;
    h->last_len = 0;
    h->resp_done = false;
    if (h->c->sock.rate)
        hy_sock_set_rate(&h->c->sock, 0, 0);
    hy_sock_set_cork(&h->c->sock, false);
    if (hy_conns_shutting_down() && h->c->sock.input.len == 0) {
        conn_close(h);
        return;
    }
    h->next_pipelined = h->c->sock.input.len > 0;
    if (h->c->sock.input.len > 0) {
        hy_conn_set_state(h->c, HY_CONN_READING);
        hy_timer_link(h->c->sock.loop, &h->timer, (uint64_t)h->dsrv->client_header_timeout_ms);
        hy_defer(h->c->sock.loop, &h->parse_defer);
    } else {
        idle_add(h);
        hy_sock_idle(&h->c->sock);
        hy_timer_link(h->c->sock.loop, &h->timer, (uint64_t)h->keepalive_ms);
    }
    hy_sock_read_start(&h->c->sock, on_read);
}

static void on_parse_defer(hy_defer_t *d)
{
    h1conn_t *h = d->data;
    if (h->state == ST_HEAD)
        try_parse(h, NULL);
}

static void on_written(hy_sock_t *s, const char *err)
{
    h1conn_t *h = s->data;
    if (err) {
        conn_close(h);
        return;
    }
    if (!h->resp_done)
        return;
    if (h->in_feed) { /* the response ended inside a body callback: finish once feed_body unwinds */
        h->written_pending = true;
        return;
    }
    if (h->req && hy_req_post_action(h->req))
        return; /* its final send comes back here */
    if (h->req)
        hy_req_log_phase(h->req);
    if (!h->keepalive) {
        start_linger(h);
        return;
    }
    if (h->body_pending && !discard_body(h)) {
        conn_close(h);
        return;
    }
    if (h->body_pending) { /* the response is out; wait for the rest of the body to drop it */
        hy_timer_link(h->c->sock.loop, &h->timer, (uint64_t)h->body_timeout_ms);
        hy_sock_read_start(&h->c->sock, on_read);
        return;
    }
    next_request(h);
}

static void on_written_partial(hy_sock_t *s, const char *err)
{
    h1conn_t *h = s->data;
    if (err) {
        conn_close(h);
        return;
    }
    if (h->req && h->state == ST_REQ && h->req->_proceed)
        hy_defer(h->c->sock.loop, &h->proceed_defer); /* backpressure: the producer may queue its next batch */
}

static void on_proceed_defer(hy_defer_t *d)
{
    h1conn_t *h = d->data;
    if (h->state == ST_REQ && h->req)
        hy_req_proceed(h->req);
}

static size_t put(char *p, const char *s, size_t n)
{
    memcpy(p, s, n);
    return n;
}

#define PUTS(lit) (o += put(buf + o, lit, sizeof(lit) - 1))
#define PUTSTR(st) (o += put(buf + o, (st).ptr, (st).len))

/* The status line, then the finalised head (http/request.c) with HTTP/1's framing fields put where nginx puts
 * them, then the blank line. */
static void build_head(h1conn_t *h, hy_req_t *req)
{
    hy_http_loc_conf_t *lc = req->loc ? req->loc : h->dsrv->loc;
    if (h->chunked_out)
        hy_req_insert_header(req, req->resp_framing_ix++, HY_STR("Transfer-Encoding"), HY_STR("chunked"));
    if (h->upgraded) {
        hy_req_insert_header(req, req->resp_framing_ix++, HY_STR("Connection"), HY_STR("upgrade"));
    } else if (h->keepalive) {
        hy_req_insert_header(req, req->resp_framing_ix++, HY_STR("Connection"), HY_STR("keep-alive"));
        if (lc->keepalive_header_sec > 0) {
            char *t = hy_palloc(req->pool, 32);
            int tl = snprintf(t, 32, "timeout=%lld", (long long)lc->keepalive_header_sec);
            hy_req_insert_header(req, req->resp_framing_ix++, HY_STR("Keep-Alive"), (hy_str_t){t, (size_t)tl});
        }
    } else {
        hy_req_insert_header(req, req->resp_framing_ix++, HY_STR("Connection"), HY_STR("close"));
    }
    hy_header_t *hd = req->resp_headers->elts;
    size_t n = req->resp_headers->nelts;
    size_t cap = 64 + req->status_line.len;
    for (size_t i = 0; i < n; i++)
        cap += hd[i].name.len + hd[i].value.len + 4;
    char *buf = hy_palloc(req->pool, cap);
    size_t o = 0;
    if (expects_continue(req) && !h->sent_continue && h->body_pending && h->keepalive && h->chunked.total == 0 &&
        h->body_left == req->content_length)
        PUTS("HTTP/1.1 100 Continue\r\n\r\n");
    PUTS("HTTP/1.1 ");
    if (req->status_line.len) {
        PUTSTR(req->status_line);
    } else {
        int st = req->status;
        if (st < 100 || st > 999)
            st = 500;
        buf[o++] = (char)('0' + st / 100), buf[o++] = (char)('0' + st / 10 % 10), buf[o++] = (char)('0' + st % 10);
        buf[o++] = ' ';
        const char *reason = hy_http_reason(req->status);
        if (reason)
            o += put(buf + o, reason, strlen(reason));
    }
    PUTS("\r\n");
    for (size_t i = 0; i < n; i++) { /* values were made safe when the head was finalised (http/request.c) */
        if (hd[i].name.len == 0)
            continue; /* an unused framing slot */
        PUTSTR(hd[i].name);
        PUTS(": ");
        PUTSTR(hd[i].value);
        PUTS("\r\n");
    }
    PUTS("\r\n");
    req->bytes_sent += (int64_t)o;
    hy_outq_push_mem(&h->c->sock.outq, buf, o, NULL, NULL);
}

/* The last chunk, with the trailer section when the response has trailers (RFC 9112 §7.1.2) */
static void last_chunk(h1conn_t *h, hy_req_t *req)
{
    const hy_array_t *t = req->expect_trailers ? hy_req_trailers(req) : NULL;
    if (t == NULL || t->nelts == 0) {
        hy_outq_push_mem(&h->c->sock.outq, "0\r\n\r\n", 5, NULL, NULL);
        req->bytes_sent += 5;
        return;
    }
    const hy_header_t *hd = t->elts;
    size_t cap = 5;
    for (size_t i = 0; i < t->nelts; i++)
        cap += hd[i].name.len + hd[i].value.len + 4;
    char *buf = hy_palloc(req->pool, cap);
    size_t o = 0;
    PUTS("0\r\n");
    for (size_t i = 0; i < t->nelts; i++) { /* values were made safe by hy_req_add_trailer */
        PUTSTR(hd[i].name);
        PUTS(": ");
        PUTSTR(hd[i].value);
        PUTS("\r\n");
    }
    PUTS("\r\n");
    req->bytes_sent += (int64_t)o;
    hy_outq_push_mem(&h->c->sock.outq, buf, o, NULL, NULL);
}

static void h1_send(hy_req_t *req, bool is_final)
{
    h1conn_t *h = req->conn->proto;
    if (h->state == ST_CLOSED)
        return;
    hy_http_loc_conf_t *lc = req->loc ? req->loc : h->dsrv->loc;
    if (!req->head_sent) {
        req->head_sent = true;
        /* keep-alive decision (nginx's ngx_http_set_keepalive rules) */
        /* a body of unknown length is chunked on 1.1 (RFC 9112 §7.1), delimited by the close on 1.0; so is one
         * with trailers to follow (add_trailer), its Content-Length dropped as nginx does */
        h->chunked_out = (req->content_length_n < 0 || req->expect_trailers) && !req->header_only &&
                         req->status >= 200 && req->status != 204 && req->status != 304 && req->version >= 11 &&
                         lc->chunked_transfer_encoding;
        if (h->chunked_out && req->content_length_n >= 0) {
            req->content_length_n = -1;
            hy_req_unsend_header(req, "Content-Length");
        }
        h->keepalive = req->keepalive && !hy_conns_shutting_down() && lc->keepalive_timeout_ms > 0 &&
                       (lc->keepalive_requests <= 0 || h->num_requests + 1 < (uint64_t)lc->keepalive_requests) &&
                       (req->content_length_n >= 0 || req->header_only || h->chunked_out) && !keepalive_refused(h, req, lc);
        if (!hy_outq_empty(&req->body) && lc->tcp_nopush && lc->sendfile && req->body.head->kind == HY_SEG_FILE)
            hy_sock_set_cork(&h->c->sock, true);
        h->c->sock.use_sendfile = lc->sendfile != 0;
        h->c->sock.turn_max = (uint64_t)lc->sendfile_max_chunk;
        h->keepalive_ms = lc->keepalive_timeout_ms;
        h->body_timeout_ms = lc->client_body_timeout_ms;
        h->send_timeout_ms = lc->send_timeout_ms;
        h->linger_time_ms = lc->lingering_time_ms;
        h->linger_timeout_ms = lc->lingering_timeout_ms;
        h->lingering_close = lc->lingering_close;
        h->reset_timedout = lc->reset_timedout_connection;
        h->body_max = lc->client_max_body_size;
        if (h->body_pending && !h->keepalive)
            h->linger_needed = true;
        if (req->limit_rate > 0) /* limit_rate (http/limit_rate.c): the socket paces this response */
            hy_sock_set_rate(&h->c->sock, (uint64_t)req->limit_rate, (uint64_t)HY_MAX(req->limit_rate_after, 0));
        build_head(h, req);
    }
    if (req->header_only || req->post_action) {
        hy_outq_clear(&req->body);
    } else {
        size_t n = req->body.bytes;
        req->body_bytes_sent += (int64_t)n;
        req->bytes_sent += (int64_t)n;
        if (h->chunked_out && n > 0) {
            char *sz = hy_palloc(req->pool, 20);
            int l = snprintf(sz, 20, "%zx\r\n", n);
            hy_outq_push_mem(&h->c->sock.outq, sz, (size_t)l, NULL, NULL);
            hy_outq_move(&h->c->sock.outq, &req->body);
            hy_outq_push_mem(&h->c->sock.outq, "\r\n", 2, NULL, NULL);
            req->bytes_sent += l + 2;
        } else {
            hy_outq_move(&h->c->sock.outq, &req->body);
        }
        if (h->chunked_out && is_final)
            last_chunk(h, req);
    }
    if (is_final) {
        h->resp_done = true;
        h->close_cb = NULL;
        req->finished = true;
        body_stop(h); /* whatever of the body nobody took is discarded from here on */
        h->c->sock.more_until_close = !h->keepalive; /* one packet carries the response's tail and the FIN */
        h->send_mark = h->c->sock.bytes_out;
        hy_timer_link(h->c->sock.loop, &h->timer, (uint64_t)h->send_timeout_ms);
        if (h->body_pending && h->keepalive)
            hy_sock_read_start(&h->c->sock, on_read); /* keep dropping the body while we write */
        else
            hy_sock_read_stop(&h->c->sock);
        hy_sock_write(&h->c->sock, on_written);
        /* nginx's ngx_http_test_reading: a response still going out (a slow client, limit_rate) is ended by the
         * client's close, not by a later write that fails (on_read, ST_REQ) */
        if (h->state == ST_REQ && h->req == req && !h->body_pending && !hy_outq_empty(&h->c->sock.outq) &&
            h->c->sock.input.len < h->c->sock.read_limit)
            hy_sock_read_start(&h->c->sock, on_read);
    } else { /* streaming (hy_req_send_more): send_timeout applies between batches too */
        h->send_mark = h->c->sock.bytes_out;
        if (!h->body_reading) /* while the body is still read, client_body_timeout owns the timer */
            hy_timer_link(h->c->sock.loop, &h->timer, (uint64_t)h->send_timeout_ms);
        hy_sock_write(&h->c->sock, on_written_partial);
    }
}

static hy_sock_t *h1_upgrade(hy_req_t *req)
{
    h1conn_t *h = req->conn->proto;
    if (h == NULL || h->state != ST_REQ || req->head_sent || h->body_pending || req->version < 11)
        return NULL;
    h->upgraded = true;
    req->keepalive = false;
    req->header_only = true;
    req->content_length_n = -1;
    hy_req_send(req, false); /* the head, through the filters */
    hy_timer_unlink(h->c->sock.loop, &h->timer);
    hy_sock_read_stop(&h->c->sock);
    return &h->c->sock;
}

/* nginx's ngx_http_upstream_check_broken_connection: read the client's side while the response is produced, only to
 * see it close; bytes it sends meanwhile (a pipelined request) stay buffered, and a full buffer ends the watch. */
static void h1_watch_close(hy_req_t *req, hy_req_proceed_cb cb)
{
    h1conn_t *h = req->conn->proto;
    if (h == NULL || h->state != ST_REQ || h->req != req || h->resp_done || h->upgraded)
        return;
    h->close_cb = cb;
    if (cb != NULL && !h->body_pending && h->c->sock.input.len < h->c->sock.read_limit)
        hy_sock_read_start(&h->c->sock, on_read);
}

static void h1_abort(hy_req_t *req)
{
    conn_close(req->conn->proto);
}

static void rebase(hy_str_t *s, const char *from, size_t n, char *to)
{
    if (s->ptr >= from && s->ptr < from + n)
        s->ptr = to + (s->ptr - from);
}

static hy_pool_t *conn_pool(h1conn_t *h)
{
    if (h->pool == NULL)
        h->pool = hy_pool_take();
    return h->pool;
}

static hy_req_t *new_req(h1conn_t *h)
{
    hy_req_t *req = hy_pcalloc(conn_pool(h), sizeof(*req));
    req->pool = h->pool;
    req->conn = h->c;
    req->version = 11;
    req->content_length = -1;
    req->content_length_n = -1;
    req->last_modified = -1;
    req->srv = h->dsrv;
    req->conn_requests = h->num_requests + 1;
    req->start_ms = (uint64_t)hy_clock_time_ms();
    h->req = req;
    return req;
}

/* A request we cannot parse: answer and close (framing unknown). */
static void bad_request(h1conn_t *h, int status, const char *reason, hy_h1_request_t *r)
{
    hy_req_t *req = new_req(h);
    h->linger_needed = true;
    h->state = ST_REQ;
    if (r && r->request_line.len)
        hy_log_conn(HY_LOG_INFO, h->c->id, "%s while reading client request headers, client: %s, request: \"%.*s\"",
                    reason, h->c->peer_text, (int)r->request_line.len, r->request_line.ptr);
    else
        hy_log_conn(HY_LOG_INFO, h->c->id, "%s while reading client request line, client: %s", reason,
                    h->c->peer_text);
    hy_req_error(req, status);
}

/* The connection speaks HTTP/2: h2 takes it over with the bytes read so far. */
static void to_h2(h1conn_t *h)
{
    hy_conn_t *c = h->c;
    hy_loop_t *loop = c->sock.loop;
    hy_timer_unlink(loop, &h->timer);
    h->state = ST_CLOSED;
    c->proto = NULL;
    hy_loop_free_later(loop, free_conn, h);
    hy_h2_attach(c);
}

/* The start of an incomplete request line: false if the method so far has a byte other than A-Z, '_' and '-' (the
 * parser takes any token; a complete line with such a method is answered 400 below, as nginx answers it). */
static bool method_prefix_ok(const char *p, size_t len)
{
    size_t i = 0;
    while (i < len && (p[i] == '\r' || p[i] == '\n'))
        i++;
    for (; i < len && p[i] != ' '; i++)
        if (!((p[i] >= 'A' && p[i] <= 'Z') || p[i] == '_' || p[i] == '-'))
            return false;
    return true;
}

static void try_parse(h1conn_t *h, const char *err)
{
    hy_buf_t *in = &h->c->sock.input;
    if (in->len == 0) {
        if (err)
            conn_close(h);
        return;
    }
    if (h->c->state == HY_CONN_NEW) /* the first bytes: nginx counts the connection as reading from now on */
        hy_conn_set_state(h->c, HY_CONN_READING);
    if (h->num_requests == 0 && h->req == NULL && h->last_len == 0 && h->c->sock.tp == &hy_sock_plain_transport &&
        !h->c->is_plain_on_tls && hy_http2_enabled(h->c->addr, h->dsrv)) { /* cleartext only, as nginx */
        /* HTTP/2 with prior knowledge (RFC 9113 §3.3): the connection starts with the preface */
        size_t m = HY_MIN(in->len, sizeof(HY_H2_PREFACE) - 1);
        if (memcmp(hy_buf_data(in), HY_H2_PREFACE, m) == 0) {
            if (m < sizeof(HY_H2_PREFACE) - 1) {
                if (err)
                    conn_close(h);
                return; /* wait for the rest of it */
            }
            to_h2(h);
            return;
        }
    }
    if (h->last_len == 0) { /* the first bytes of a request: nginx counts it now (400s and abandoned heads too) */
        h->req_start_ms = (uint64_t)hy_clock_time_ms();
        hy_conn_count_request(h->c);
    }
    hy_h1_header_t hdrs[MAX_HEADERS];
    hy_h1_request_t r = {.headers = hdrs, .num_headers = MAX_HEADERS};
    const char *data = hy_buf_data(in);
    int n = hy_h1_parse_request(data, in->len, h->last_len, (size_t)h->dsrv->large_header_size,
                                (size_t)h->dsrv->large_header_size, &r);
    if (n < 0 && h->c->is_idle) { /* a keep-alive connection's next request is not complete yet (or bad) */
        idle_del(h);
        hy_timer_link(h->c->sock.loop, &h->timer, (uint64_t)h->dsrv->client_header_timeout_ms);
    }
    if (n == -2) {
        h->last_len = in->len;
        if (!method_prefix_ok(data, in->len)) { /* nginx answers a bad method byte as it comes, not at the line's end */
            bad_request(h, 400, "client sent invalid method", NULL);
            return;
        }
        if (err == hy_err_buf_full) {
            /* nginx: a request line that does not fit is 414, a header section that does not fit is 400 */
            const char *eol = memchr(data, '\n', in->len);
            if (eol == NULL)
                bad_request(h, 414, "client sent too long URI", NULL);
            else
                bad_request(h, 400, "client sent too large request or too long header line", NULL);
        } else if (err) {
            hy_log_conn(HY_LOG_INFO, h->c->id, "client prematurely closed connection while reading client request "
                        "headers, client: %s", h->c->peer_text);
            conn_close(h);
        }
        return;
    }
    if (n == -1) {
        bad_request(h, r.error_status ? r.error_status : 400, r.error_reason ? r.error_reason : "client sent invalid "
                    "request", &r);
        return;
    }
    for (size_t i = 0; r.invalid_names && i < r.num_headers && !h->dsrv->ignore_invalid_headers; i++) {
        if (!hy_h1_field_name_valid(hdrs[i].name)) { /* nginx would pass it on; hayate refuses (DIFFERENCES.md) */
            bad_request(h, 400, "client sent invalid header line", &r);
            return;
        }
    }
    /* copy the head into the request arena so the input buffer can move on */
    char *copy = hy_palloc(conn_pool(h), (size_t)n + 1);
    memcpy(copy, data, (size_t)n);
    copy[n] = '\0';
    rebase(&r.method, data, (size_t)n, copy);
    rebase(&r.target, data, (size_t)n, copy);
    rebase(&r.request_line, data, (size_t)n, copy);
    hy_header_t *headers = hy_palloc(h->pool, sizeof(hy_header_t) * (r.num_headers ? r.num_headers : 1));
    size_t nh = 0;
    bool drop_underscores = !h->dsrv->underscores_in_headers && h->dsrv->ignore_invalid_headers;
    for (size_t i = 0; i < r.num_headers; i++) {
        rebase(&hdrs[i].name, data, (size_t)n, copy);
        rebase(&hdrs[i].value, data, (size_t)n, copy);
        if (drop_underscores && memchr(hdrs[i].name.ptr, '_', hdrs[i].name.len))
            continue; /* nginx ignores such fields by default (underscores_in_headers off) */
        if (r.invalid_names && !hy_h1_field_name_valid(hdrs[i].name)) { /* ignore_invalid_headers on (off: refused) */
            hy_log_conn(HY_LOG_INFO, h->c->id, "client sent invalid header line: \"%.*s\", client: %s",
                        (int)hdrs[i].name.len, hdrs[i].name.ptr, h->c->peer_text);
            continue;
        }
        headers[nh].name = hdrs[i].name;
        headers[nh].value = hdrs[i].value;
        nh++;
    }
    hy_buf_consume(in, (size_t)n);
    h->last_len = 0;
    hy_req_t *req = new_req(h);
    req->request_line = r.request_line;
    req->request_length = n;
    req->pipelined = h->next_pipelined;
    h->next_pipelined = false;
    req->start_ms = h->req_start_ms;
    req->method = r.method;
    req->method_id = hy_http_method_id(r.method);
    req->target = r.target;
    req->version = r.version;
    req->headers = headers;
    req->num_headers = nh;
    h->state = ST_REQ;
    h->linger_needed = false;
    hy_conn_set_state(h->c, HY_CONN_WRITING);
    hy_sock_read_stop(&h->c->sock);
    hy_timer_unlink(h->c->sock.loop, &h->timer);

    /* framing: decided here, before anything else, and fatal to the connection when wrong (RFC 9112 §6.3) */
    r.headers = hdrs;
    int status = 0;
    const char *reason = NULL;
    int64_t cl;
    bool chunked;
    if (hy_h1_framing(&r, &cl, &chunked, &status, &reason) != 0) {
        h->linger_needed = true;
        hy_log_conn(HY_LOG_INFO, h->c->id, "%s, client: %s, request: \"%.*s\"", reason, h->c->peer_text,
                    (int)r.request_line.len, r.request_line.ptr);
        hy_req_error(req, status);
        return;
    }
    req->content_length = cl;
    h->body_pending = cl > 0 || chunked;
    h->body_chunked = chunked;
    h->body_left = cl > 0 ? cl : 0;
    h->body_total = 0;
    memset(&h->chunked, 0, sizeof(h->chunked));
    /* keep-alive by default on 1.1, on request on 1.0 (RFC 9112 §9.3) */
    req->keepalive = req->version >= 11;
    for (size_t i = 0; i < nh; i++) {
        if (hy_str_caseeq(headers[i].name, "connection")) { /* as nginx: the words anywhere in the value */
            if (has_word(headers[i].value, "close", 5))
                req->keepalive = false;
            else if (has_word(headers[i].value, "keep-alive", 10))
                req->keepalive = true;
        }
    }
    /* methods are upper-case tokens in practice; nginx answers 400 to anything else */
    for (size_t i = 0; i < req->method.len; i++) {
        char c = req->method.ptr[i];
        if (!((c >= 'A' && c <= 'Z') || c == '_' || c == '-')) {
            h->linger_needed = true;
            hy_log_conn(HY_LOG_INFO, h->c->id, "client sent invalid method while reading client request line, "
                        "client: %s, request: \"%.*s\"", h->c->peer_text, (int)r.request_line.len, r.request_line.ptr);
            h->body_pending = false;
            hy_req_error(req, 400);
            return;
        }
    }
    /* body bytes that came with the head are checked now, so a malformed body is answered with 400, not with a
     * keep-alive response followed by a broken connection */
    if (h->body_pending && h->body_chunked && in->len > 0) {
        if (!chunked_prefix_valid(h)) {
            h->body_pending = false;
            h->linger_needed = true;
            hy_log_conn(HY_LOG_INFO, h->c->id, "client sent invalid chunked body, client: %s, request: \"%.*s\"",
                        h->c->peer_text, (int)r.request_line.len, r.request_line.ptr);
            hy_req_error(req, 400);
            return;
        }
    }
    hy_req_process(req);
}

static void on_read(hy_sock_t *s, const char *err)
{
    h1conn_t *h = s->data;
    switch (h->state) {
    case ST_HEAD:
        try_parse(h, err);
        return;
    case ST_REQ:
        if (h->close_cb && err && err != hy_err_buf_full && !h->resp_done && !h->body_pending) {
            hy_req_proceed_cb cb = h->close_cb; /* the client closed (or half-closed) while we answer */
            h->close_cb = NULL;
            hy_sock_read_stop(&h->c->sock);
            cb(h->req);
            return;
        }
        if (err && err != hy_err_buf_full && h->resp_done && !h->body_pending && !hy_outq_empty(&h->c->sock.outq)) {
            hy_req_log(h->req, HY_LOG_INFO, "client prematurely closed connection"); /* while we answer */
            conn_close(h);
            return;
        }
        if (h->body_reading) {
            if (err && err != hy_err_buf_full) {
                hy_req_log(h->req, HY_LOG_INFO, "client prematurely closed connection"); /* nginx's words */
                body_fail(h, 400);
                return;
            }
            feed_body(h);
            return;
        }
        if (!discard_body(h)) {
            h->keepalive = false;
            if (!h->resp_done && h->req && !h->req->head_sent) {
                h->body_pending = false;
                h->linger_needed = true;
                hy_req_error(h->req, h->body_max > 0 && h->body_total > h->body_max ? 413 : 400);
            } else {
                conn_close(h);
            }
            return;
        }
        if (err && err != hy_err_buf_full && h->body_pending) {
            conn_close(h);
            return;
        }
        if (!h->body_pending && h->resp_done && hy_outq_empty(&h->c->sock.outq) && h->keepalive)
            next_request(h);
        else if (!h->body_pending && (h->close_cb == NULL || h->resp_done || err != NULL))
            hy_sock_read_stop(&h->c->sock);
        return;
    case ST_LINGER:
        linger_read(h, err);
        return;
    default:
        return;
    }
}

static void on_timer(hy_timer_t *t)
{
    h1conn_t *h = t->data;
    switch (h->state) {
    case ST_HEAD:
        if (h->c->sock.input.len > 0)
            hy_log_conn(HY_LOG_INFO, h->c->id, "client timed out (110: Connection timed out) while reading client "
                        "request headers, client: %s", h->c->peer_text);
        conn_close(h);
        return;
    case ST_REQ:
        if (!hy_outq_empty(&h->c->sock.outq) && h->c->sock.bytes_out != h->send_mark) {
            h->send_mark = h->c->sock.bytes_out; /* send_timeout is between two successive writes */
            hy_timer_link(h->c->sock.loop, &h->timer, (uint64_t)h->send_timeout_ms);
            return;
        }
        hy_log_conn(HY_LOG_INFO, h->c->id, "client timed out (110: Connection timed out) while %s, client: %s",
                    hy_outq_empty(&h->c->sock.outq) ? "reading client request body" : "sending response to client",
                    h->c->peer_text);
        if (h->body_reading && !h->resp_done) { /* nginx: client_body_timeout → 408 */
            body_fail(h, 408);
            return;
        }
        if (h->reset_timedout)
            conn_reset(h);
        else
            conn_close(h);
        return;
    case ST_LINGER:
        conn_close(h);
        return;
    default:
        return;
    }
}

/* Graceful stop. Idle keep-alive connections are not closed at once: a client may have its next request on the
 * wire, and closing would reset it (nginx/nginx PR #437; what makes reloads under load fail). A request that
 * arrives is answered with "Connection: close" (next_request and h1_send read hy_conns_shutting_down); a
 * connection still idle after a short grace period is closed. */
static void h1_shutdown(hy_conn_t *c)
{
    h1conn_t *h = c->proto;
    if (c->is_idle && hy_timer_is_linked(&h->timer) && h->timer.expire_at > hy_clock_now_ms() + SHUTDOWN_GRACE_MS)
        hy_timer_link(c->sock.loop, &h->timer, SHUTDOWN_GRACE_MS);
}
