/* h2_stream.c — one HTTP/2 stream's exchange with the request core (see h2.c for the connection): the response
 * head HPACK-encoded straight into the connection's output, body segments framed as DATA when the scheduler (h2.c)
 * picks the stream (file regions without a copy), and the request body handed to the core with the stream window
 * reopened as the core consumes (http/body.h). */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "h2_int.h"
#include "../http/body.h"
#include "../core/file.h"
#include "../core/log.h"
#include "../core/clock.h"

/* ---- response ---- */

static inline bool connection_field(hy_str_t n)
{
    switch (n.len) { /* the length first: most fields are none of these */
    case 7:
        return hy_str_caseeq(n, "upgrade");
    case 10:
        return hy_str_caseeq(n, "connection") || hy_str_caseeq(n, "keep-alive");
    case 16:
        return hy_str_caseeq(n, "proxy-connection");
    case 17:
        return hy_str_caseeq(n, "transfer-encoding");
    default:
        return false;
    }
}

/* ---- RFC 9218 scheduling: h2.c (pick_stream) frames the most urgent ready stream first; the client's signals are
 * the priority header (h2_recv.c, start_priority) and PRIORITY_UPDATE frames (h2_recv.c, on_priority_update) ---- */

void hy_h2_set_priority(h2stream_t *st, hy_h2_prio_t prio)
{
    st->prio = prio;
    hy_h2_schedule_flush(st->h);
}

/* ---- limit_rate ---- */

static void on_rate_timer(hy_timer_t *t)
{
    h2stream_t *st = t->data;
    st->rate_wait = false;
    if (st->reset || st->h->closed)
        return;
    hy_h2_schedule_flush(st->h);
}

/* How many body bytes the stream may frame now under limit_rate (nginx's per-request arithmetic: the rate times
 * the seconds since the request started, plus one second's worth, plus limit_rate_after); when none, the stream
 * pauses until a useful chunk may go (about 50 ms worth), and 0 is returned. */
static size_t rate_allow(h2stream_t *st, size_t length)
{
    int64_t rate = st->req.limit_rate;
    if (rate <= 0)
        return length;
    int64_t after = HY_MAX(st->req.limit_rate_after, 0);
    uint64_t elapsed = hy_clock_now_ms() - st->rate_start_ms;
    int64_t allowed = after + rate + (int64_t)((uint64_t)rate * elapsed / 1000) - st->rate_sent;
    if (allowed > 0)
        return HY_MIN(length, (size_t)allowed);
    int64_t chunk = HY_MAX(HY_MIN(rate / 20, 16384), 1);
    st->rate_wait = true;
    if (st->rate_timer.cb == NULL) {
        st->rate_timer.cb = on_rate_timer;
        st->rate_timer.data = st;
    }
    hy_timer_link(st->h->c->sock.loop, &st->rate_timer, (uint64_t)((-allowed + chunk) * 1000 / rate + 1));
    return 0;
}

/* A header block (response head or trailers) framed into the connection's output: :status if not 0, then the
 * fields, names lower-cased, HTTP/1 connection fields left out (RFC 9113 §8.2.2); their bytes are counted in
 * $bytes_sent. false when the block would pass MAX_RESPONSE_HEAD (nothing written). */
#define MAX_RESPONSE_HEAD (1 << 20)
#define ZEROCOPY_MIN 16384 /* file regions of DATA frames at least this large go out by sendfile */
static bool send_block(h2stream_t *st, unsigned status, const hy_array_t *a, bool end_stream)
{
    h2conn_t *h = st->h;
    hy_req_t *req = &st->req;
    const hy_header_t *hd = a ? a->elts : NULL;
    size_t n = a ? a->nelts : 0, bound = 6 + 5, maxname = 0;
    for (size_t i = 0; i < n; i++) {
        bound += hy_hpack_field_bound(hd[i].name.len, hd[i].value.len);
        maxname = HY_MAX(maxname, hd[i].name.len);
    }
    if (bound > MAX_RESPONSE_HEAD)
        return false;
    size_t room = hy_h2_headers_size(bound, h->peer_max_frame);
    uint8_t *p = hy_h2_out(h, room), *w = p + HY_H2_HDR;
    w += hy_hpack_encode_begin(&h->enc, w);
    if (status)
        w += hy_hpack_encode_status(&h->enc, w, status);
    char lname[256], *lower = maxname > sizeof(lname) ? hy_palloc(req->pool, maxname) : lname;
    for (size_t i = 0; i < n; i++) {
        if (hd[i].name.len == 0 || connection_field(hd[i].name))
            continue;
        hy_lower_copy(lower, hd[i].name.ptr, hd[i].name.len);
        /* never-indexed literals are not used (as nginx and nghttp2 did not): nginx's own test client, for one,
         * cannot read them */
        w += hy_hpack_encode_field(&h->enc, w, lower, hd[i].name.len, hd[i].value.ptr, hd[i].value.len, false);
        req->bytes_sent += (int64_t)(hd[i].name.len + hd[i].value.len + 2);
    }
    size_t total = hy_h2_frame_headers(p, (size_t)(w - p) - HY_H2_HDR, (uint32_t)st->id, end_stream,
                                       h->peer_max_frame);
    hy_h2_out_commit(h, total);
    return true;
}

/* Our side of the stream ended (END_STREAM sent): closed if the client's was, else stopped without error (RFC 9113
 * §8.1, as nginx does: the response is complete while the client still sends a body). */
static void local_end(h2stream_t *st)
{
    st->eof_sent = true;
    if (st->remote_closed) {
        st->close_pending = true;
        st->h->close_pending = true;
        return;
    }
    hy_h2_rst(st->h, st, 0, HY_H2_NO_ERROR);
}

bool hy_h2_stream_ready(h2stream_t *st)
{
    if (st->reset || !st->head_sent || st->eof_sent || st->rate_wait || st->close_pending)
        return false;
    if (st->out.head)
        return st->send_window > 0 && st->h->send_window > 0;
    return st->final;
}

static void want_proceed(h2stream_t *st)
{
    if (st->req._proceed && !st->want_proceed) {
        st->want_proceed = true;
        hy_defer(st->h->c->sock.loop, &st->h->proceed_defer);
    }
}

void hy_h2_frame_next(h2stream_t *st)
{
    h2conn_t *h = st->h;
    if (st->out.head == NULL) { /* final, all framed: the end (trailers, or an empty DATA frame) */
        if (st->trailers_due && send_block(st, 0, st->req.trailers, true)) {
            st->req.bytes_sent += 9;
        } else {
            hy_h2_write_data_hdr(hy_h2_out(h, HY_H2_HDR), (uint32_t)st->id, 0, true);
            hy_h2_out_commit(h, HY_H2_HDR);
            h->data_frames_sent++;
        }
        local_end(st);
        return;
    }
    size_t length = HY_MIN(st->chunk_size ? st->chunk_size : 16384, h->peer_max_frame);
    length = (size_t)HY_MIN((int64_t)length, HY_MIN(st->send_window, h->send_window));
    length = HY_MIN(length, st->out.bytes);
    if ((length = rate_allow(st, length)) == 0)
        return;
    /* the body ends with this frame unless trailers follow: END_STREAM on it (no empty DATA frame after) */
    bool end = length == st->out.bytes && st->final && !st->trailers_due;
    hy_h2_write_data_hdr(hy_h2_out(h, HY_H2_HDR), (uint32_t)st->id, (uint32_t)length, end);
    hy_h2_out_commit(h, HY_H2_HDR);
    size_t o = 0;
    while (o < length) {
        hy_seg_t *s = st->out.head;
        size_t n;
        if (s->kind == HY_SEG_MEM) {
            n = HY_MIN(length - o, s->mem.len);
            memcpy(hy_h2_out(h, n), s->mem.ptr, n);
            hy_h2_out_commit(h, n);
        } else {
            n = (size_t)HY_MIN((int64_t)(length - o), s->file.len);
            if (s->file.file->data) { /* cached in memory */
                memcpy(hy_h2_out(h, n), s->file.file->data + s->file.off, n);
                hy_h2_out_commit(h, n);
            } else if (n >= ZEROCOPY_MIN && st->h->c->sock.tls == NULL) {
                /* the file's region itself goes out after the frame header (sendfile): no copy */
                hy_h2_out_file(h, s->file.file, s->file.off, (int64_t)n);
            } else { /* small pieces: a copy costs less than a second system call per frame */
                ssize_t r = pread(s->file.file->fd, hy_h2_out(h, n), n, (off_t)s->file.off);
                if (r != (ssize_t)n) {
                    hy_req_log(&st->req, HY_LOG_CRIT, "pread() failed (%d: %s)", r < 0 ? errno : 0,
                               r < 0 ? strerror(errno) : "file truncated");
                    h->fatal = true; /* the frame header promised bytes that are not there */
                    hy_h2_conn_error(h, HY_H2_INTERNAL_ERROR);
                    return;
                }
                hy_h2_out_commit(h, n);
            }
        }
        hy_outq_consume(&st->out, n);
        o += n;
    }
    st->send_window -= (int64_t)length;
    h->send_window -= (int64_t)length;
    st->rate_sent += (int64_t)length;
    h->data_frames_sent++;
    if (end) {
        local_end(st);
        return;
    }
    if (st->out.head == NULL && !st->final)
        want_proceed(st);
}

void hy_h2_on_proceed_defer(hy_defer_t *d)
{
    h2conn_t *h = d->data;
    for (h2stream_t *st = h->streams, *next; st && !h->closed; st = next) {
        next = st->next;
        if (st->want_proceed) {
            st->want_proceed = false;
            if (!st->reset)
                hy_req_proceed(&st->req);
        }
    }
}

/* The response head: HEADERS, with END_STREAM when nothing follows (no body, no trailers). */
static void send_head(h2stream_t *st)
{
    hy_req_t *req = &st->req;
    unsigned code = req->status < 100 || req->status > 999 ? 500 : (unsigned)req->status;
    req->bytes_sent += 9 + 4; /* frame header and status */
    bool end = st->final && st->out.head == NULL && !st->trailers_due;
    if (!send_block(st, code, req->resp_headers, end)) {
        hy_req_log(req, HY_LOG_ERR, "could not send the response header (too large)");
        hy_h2_rst(st->h, st, 0, HY_H2_INTERNAL_ERROR);
        return;
    }
    st->head_sent = true;
    if (end)
        local_end(st);
}

static void body_stop(h2stream_t *st);
static void body_refuse(h2stream_t *st);

void hy_h2_send(hy_req_t *req, bool is_final)
{
    h2stream_t *st = stream_of(req);
    h2conn_t *h = st->h;
    if (st->reset || h->closed) {
        hy_outq_clear(&req->body);
        if (is_final)
            st->final = req->finished = true;
        return;
    }
    bool head = !req->head_sent;
    if (head) {
        req->head_sent = true;
        hy_http_loc_conf_t *lc = req->loc ? req->loc : h->dsrv->loc;
        st->chunk_size = (size_t)hy_http2_loc_conf(lc)->chunk_size;
    }
    if (req->header_only) {
        hy_outq_clear(&req->body);
    } else {
        req->body_bytes_sent += (int64_t)req->body.bytes;
        req->bytes_sent += (int64_t)req->body.bytes;
        hy_outq_move(&st->out, &req->body);
    }
    if (is_final) {
        if (req->expect_trailers && !req->header_only) {
            hy_req_trailers(req); /* made now, at the response's end (nginx's last buffer), sent after its DATA */
            st->trailers_due = false; /* only if a field is left once the connection fields are out */
            const hy_header_t *t = req->trailers ? req->trailers->elts : NULL;
            for (size_t i = 0; t && i < req->trailers->nelts && !st->trailers_due; i++)
                st->trailers_due = t[i].name.len && !connection_field(t[i].name);
        }
        st->final = true;
        req->finished = true;
        body_stop(st);
    }
    if (head)
        send_head(st);
    if (!is_final && st->out.head == NULL)
        want_proceed(st);
    hy_h2_schedule_flush(h);
}

void hy_h2_abort(hy_req_t *req)
{
    h2stream_t *st = stream_of(req);
    st->final = req->finished = true;
    if (st->reset || st->h->closed)
        return;
    hy_h2_rst(st->h, st, 0, HY_H2_INTERNAL_ERROR);
}

/* ---- request body ---- */

static void body_stop(h2stream_t *st)
{
    if (st->rb_len && !st->reset) /* what nobody took is acknowledged: the window reopens */
        hy_h2_consume(st->h, st, st->rb_len);
    st->rb_len = 0;
    st->body_reading = false;
    st->body_waiting = false;
}

/* The handler answers (413...); the rest of the body is acknowledged and dropped, and the stream reset without
 * error once the response is out (on_frame_send). */
void hy_h2_body_fail(h2stream_t *st, int status)
{
    st->body_reading = false;
    if (st->rb_len && !st->reset)
        hy_h2_consume(st->h, st, st->rb_len);
    st->rb_len = 0;
    hy_req__body_error(&st->req, status);
    hy_h2_schedule_flush(st->h);
}

/* Hand buffered body bytes to the core until it is all taken or the handler pauses us. */
void hy_h2_feed_body(h2stream_t *st)
{
    if (st->h->in_recv) { /* the DATA of one read go to the core together, once the read is processed (h2.c) */
        st->feed_pending = true;
        st->h->feed_pending = true;
        return;
    }
    while (st->body_reading && !st->reset && (st->rb_len > 0 || (st->rb_end && !st->end_delivered))) {
        size_t n = st->rb_len;
        size_t took = hy_req__body_in(&st->req, st->rb, n, st->rb_end);
        if (!st->body_reading)
            return; /* the response ended (body_stop acknowledged the rest) or the body failed */
        if (took && !st->window_open && !st->rb_end && st->req.body_in->mode == HY_BODY_BUFFER) {
            /* a buffered body is taken whole as it arrives (memory, then the temp file): once the preread window
             * brought bytes, the stream's window opens wide, as nginx's does, instead of WINDOW_UPDATEs
             * of half the preread window (DATA beyond the preread window before that is still refused). 1 GiB,
             * not 2^31-1: WINDOW_UPDATEs already out and a SETTINGS not acknowledged yet stay below the maximum. */
            st->window_open = true;
            hy_h2_open_window(st, 1 << 30);
        }
        if (took) {
            memmove(st->rb, st->rb + took, n - took);
            st->rb_len -= took;
            st->req.request_length += (int64_t)took;
            hy_h2_consume(st->h, st, took);
        }
        if (took < n) {
            st->body_waiting = true;
            break;
        }
        if (st->rb_end)
            st->end_delivered = true;
    }
    hy_h2_schedule_flush(st->h);
}

/* RFC 9113 §8.1.1: DATA that do not add up to content-length make the request malformed; nginx answers 400 when the
 * handler reads the body (now, or when it asks: hy_h2_read_body), and drops the rest */
static void body_refuse(h2stream_t *st)
{
    st->body_bad = true;
    if (st->rb_len && !st->reset)
        hy_h2_consume(st->h, st, st->rb_len);
    st->rb_len = 0;
    if (st->body_reading)
        hy_h2_body_fail(st, 400);
}

void hy_h2_body_end(h2stream_t *st)
{
    st->rb_end = true;
    if (!st->body_bad && st->req.content_length >= 0 && st->body_total != st->req.content_length) {
        hy_req_log(&st->req, HY_LOG_INFO,
                   "client prematurely closed stream: only %lld out of %lld bytes of request body received",
                   (long long)st->body_total, (long long)st->req.content_length);
        body_refuse(st);
        return;
    }
    if (st->body_reading && !st->body_waiting)
        hy_h2_feed_body(st);
}

void hy_h2_read_body(hy_req_t *req)
{
    h2stream_t *st = stream_of(req);
    if (st->final || st->reset)
        return;
    if (st->body_bad && !st->body_reading) {
        st->body_reading = true;
        hy_h2_body_fail(st, 400);
        return;
    }
    if (!st->body_reading) {
        st->body_reading = true;
        hy_http_loc_conf_t *lc = req->loc ? req->loc : st->h->dsrv->loc;
        st->body_max = lc->client_max_body_size;
        if (st->body_max > 0 && st->body_total > st->body_max) {
            hy_h2_body_fail(st, 413);
            return;
        }
        /* the connection's timer (h2.c, on_timer) watches client_body_timeout from now on */
        uint64_t due = hy_clock_now_ms() + (uint64_t)lc->client_body_timeout_ms;
        if (!hy_timer_is_linked(&st->h->timer) || st->h->timer.expire_at > due)
            hy_timer_link(st->h->c->sock.loop, &st->h->timer, (uint64_t)lc->client_body_timeout_ms);
    }
    st->body_waiting = false;
    st->body_last_ms = hy_clock_now_ms();
    hy_h2_feed_body(st);
}

void hy_h2_on_data(h2conn_t *h, h2stream_t *st, const uint8_t *data, size_t len)
{
    if (!st->started || st->reset || st->final) {
        hy_h2_consume(h, st, len); /* nobody will read it: acknowledge as it arrives */
        st->body_total += (int64_t)len;
        return;
    }
    st->body_total += (int64_t)len;
    st->body_last_ms = hy_clock_now_ms();
    if (st->body_bad) { /* already refused: dropped as it comes */
        hy_h2_consume(h, st, len);
        return;
    }
    if (st->req.content_length >= 0 && st->body_total > st->req.content_length) {
        hy_req_log(&st->req, HY_LOG_INFO, "client intended to send body data larger than declared");
        hy_h2_consume(h, st, len);
        body_refuse(st);
        return;
    }
    int64_t max = st->body_max;
    if (!st->body_reading) { /* not asked for yet: client_max_body_size of the location found so far */
        hy_http_loc_conf_t *lc = st->req.loc ? st->req.loc : h->dsrv->loc;
        max = lc->client_max_body_size;
    }
    if (max > 0 && st->body_total > max) {
        hy_req_log(&st->req, HY_LOG_ERR, "client intended to send too large body: %lld bytes",
                   (long long)st->body_total);
        hy_h2_consume(h, st, len);
        if (st->body_reading) {
            hy_h2_body_fail(st, 413);
        } else if (!st->req.head_sent) {
            st->too_large = true;
            st->rb_len = 0;
        }
        return;
    }
    if (st->rb_len + len > st->rb_cap) {
        size_t cap = st->rb_cap ? st->rb_cap : 16384;
        while (cap < st->rb_len + len)
            cap *= 2;
        st->rb = hy_realloc(st->rb, cap);
        st->rb_cap = cap;
    }
    memcpy(st->rb + st->rb_len, data, len);
    st->rb_len += len;
    if (st->body_reading && !st->body_waiting)
        hy_h2_feed_body(st);
    return;
}
