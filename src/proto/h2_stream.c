/* h2_stream.c — one HTTP/2 stream's exchange with the request core (see h2.c for the connection): the response
 * head and body segments framed by nghttp2's data provider, and the request body handed to the core with the
 * stream window reopened as the core consumes (http/body.h). */
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

static bool connection_field(hy_str_t n)
{
    return hy_str_caseeq(n, "connection") || hy_str_caseeq(n, "keep-alive") || hy_str_caseeq(n, "transfer-encoding") ||
           hy_str_caseeq(n, "upgrade") || hy_str_caseeq(n, "proxy-connection");
}

/* ---- RFC 9218 scheduling ----
 * nghttp2 does it (SETTINGS_NO_RFC7540_PRIORITIES=1 submitted): one queue per urgency, the most urgent served
 * first, the incremental streams of one urgency interleaved frame by frame, the non-incremental ones one after
 * the other in stream order (test_h2_priority.py checks the three). The client's signals are read here: the
 * priority header (h2.c, start_priority) and PRIORITY_UPDATE frames (h2.c, unpack_ext). */

void hy_h2_set_priority(h2stream_t *st, hy_h2_prio_t prio)
{
    st->prio = prio;
    nghttp2_extpri pri = {.urgency = prio.urgency, .inc = prio.incremental};
    /* ours is the only reading of the client's signals: nghttp2's own of the header is switched off */
    nghttp2_session_change_extpri_stream_priority(st->h->ng, st->id, &pri, 1);
    hy_h2_schedule_flush(st->h);
}

/* ---- limit_rate ---- */

static void on_rate_timer(hy_timer_t *t)
{
    h2stream_t *st = t->data;
    st->rate_wait = false;
    if (st->reset || st->h->closed)
        return;
    nghttp2_session_resume_data(st->h->ng, st->id);
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

/* name/value pairs for nghttp2: names lower-cased, HTTP/1 connection fields left out (RFC 9113 §8.2.2); the
 * bytes are counted in $bytes_sent */
static size_t to_nv(hy_req_t *req, const hy_array_t *a, nghttp2_nv *nv)
{
    const hy_header_t *hd = a->elts;
    size_t k = 0;
    for (size_t i = 0; i < a->nelts; i++) {
        if (hd[i].name.len == 0 || connection_field(hd[i].name))
            continue;
        char *name = hy_palloc(req->pool, hd[i].name.len);
        hy_lower_copy(name, hd[i].name.ptr, hd[i].name.len);
        /* the request's arena outlives the frame (it goes when the stream closes): nghttp2 need not copy */
        nv[k++] = (nghttp2_nv){(uint8_t *)name, (uint8_t *)hd[i].value.ptr, hd[i].name.len, hd[i].value.len,
                               NGHTTP2_NV_FLAG_NO_COPY_NAME | NGHTTP2_NV_FLAG_NO_COPY_VALUE};
        req->bytes_sent += (int64_t)(hd[i].name.len + hd[i].value.len + 2);
    }
    return k;
}

/* The response's trailers (made by the core as it ended: hy_req_trailers) as the HEADERS frame that ends the
 * stream. 0 when submitted. */
static int submit_trailers(h2stream_t *st)
{
    hy_req_t *req = &st->req;
    nghttp2_nv *nv = hy_palloc(req->pool, sizeof(*nv) * req->trailers->nelts);
    size_t k = to_nv(req, req->trailers, nv);
    if (k == 0)
        return -1;
    req->bytes_sent += 9;
    int rv = nghttp2_submit_trailer(st->h->ng, st->id, nv, k);
    if (rv != 0) {
        hy_req_log(req, HY_LOG_ERR, "nghttp2_submit_trailer() failed: %s", nghttp2_strerror(rv));
        return -1;
    }
    return 0;
}

static hy_ng_ssize read_body_cb(nghttp2_session *ng, int32_t id, uint8_t *buf, size_t length, uint32_t *flags,
                                nghttp2_data_source *src, void *user)
{
    (void)ng, (void)id, (void)user;
    h2stream_t *st = src->ptr;
    if (length > st->chunk_size)
        length = st->chunk_size;
    if (st->out.head && (length = rate_allow(st, length)) == 0)
        return NGHTTP2_ERR_DEFERRED;
    size_t o = 0;
    while (o < length && st->out.head) {
        hy_seg_t *s = st->out.head;
        size_t n;
        if (s->kind == HY_SEG_MEM) {
            n = HY_MIN(length - o, s->mem.len);
            memcpy(buf + o, s->mem.ptr, n);
        } else {
            n = (size_t)HY_MIN((int64_t)(length - o), s->file.len);
            if (s->file.file->data) {
                memcpy(buf + o, s->file.file->data + s->file.off, n);
            } else {
                ssize_t r = pread(s->file.file->fd, buf + o, n, (off_t)s->file.off);
                if (r <= 0) {
                    hy_req_log(&st->req, HY_LOG_CRIT, "pread() failed (%d: %s)", r < 0 ? errno : 0,
                               r < 0 ? strerror(errno) : "file truncated");
                    return NGHTTP2_ERR_TEMPORAL_CALLBACK_FAILURE; /* resets the stream */
                }
                n = (size_t)r;
            }
        }
        hy_outq_consume(&st->out, n);
        o += n;
    }
    st->rate_sent += (int64_t)o;
    if (st->out.head == NULL) {
        if (st->final) {
            *flags |= NGHTTP2_DATA_FLAG_EOF;
            /* trailers: the stream ends with their HEADERS frame instead (nghttp2 sends no empty DATA frame
             * before it when nothing is left, as nginx) */
            if (st->req.trailers && st->req.trailers->nelts && submit_trailers(st) == 0)
                *flags |= NGHTTP2_DATA_FLAG_NO_END_STREAM;
        } else {
            if (st->req._proceed && !st->want_proceed) {
                st->want_proceed = true;
                hy_defer(st->h->c->sock.loop, &st->h->proceed_defer);
            }
            if (o == 0) {
                st->deferred = true;
                return NGHTTP2_ERR_DEFERRED;
            }
        }
    }
    return (hy_ng_ssize)o;
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

static void submit_head(h2stream_t *st)
{
    hy_req_t *req = &st->req;
    size_t n = req->resp_headers->nelts;
    nghttp2_nv *nv = hy_palloc(req->pool, sizeof(*nv) * (n + 1));
    char *status = hy_palloc(req->pool, 4);
    int code = req->status < 100 || req->status > 999 ? 500 : req->status;
    status[0] = (char)('0' + code / 100), status[1] = (char)('0' + code / 10 % 10), status[2] = (char)('0' + code % 10);
    size_t k = 0;
    nv[k++] = (nghttp2_nv){(uint8_t *)":status", (uint8_t *)status, 7, 3,
                           NGHTTP2_NV_FLAG_NO_COPY_NAME | NGHTTP2_NV_FLAG_NO_COPY_VALUE};
    k += to_nv(req, req->resp_headers, nv + k);
    req->bytes_sent += 9 + 4; /* frame header and status */
    int rv;
    if (req->header_only) {
        rv = hy_ng_submit_response(st->h->ng, st->id, nv, k, NULL);
    } else {
        hy_ng_data_provider dp = {.source.ptr = st, .read_callback = read_body_cb};
        rv = hy_ng_submit_response(st->h->ng, st->id, nv, k, &dp);
    }
    if (rv != 0)
        hy_req_log(req, HY_LOG_ERR, "nghttp2_submit_response() failed: %s", nghttp2_strerror(rv));
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
    if (!req->head_sent) {
        req->head_sent = true;
        hy_http_loc_conf_t *lc = req->loc ? req->loc : h->dsrv->loc;
        st->chunk_size = (size_t)hy_http2_loc_conf(lc)->chunk_size;
        submit_head(st);
    }
    if (req->header_only) {
        hy_outq_clear(&req->body);
    } else {
        req->body_bytes_sent += (int64_t)req->body.bytes;
        req->bytes_sent += (int64_t)req->body.bytes;
        hy_outq_move(&st->out, &req->body);
    }
    if (is_final) {
        if (req->expect_trailers && !req->header_only)
            hy_req_trailers(req); /* made now, at the response's end (nginx's last buffer), sent after its DATA */
        st->final = true;
        req->finished = true;
        body_stop(st);
    }
    if (st->deferred) {
        st->deferred = false;
        nghttp2_session_resume_data(h->ng, st->id);
    }
    hy_h2_schedule_flush(h);
}

void hy_h2_abort(hy_req_t *req)
{
    h2stream_t *st = stream_of(req);
    st->final = req->finished = true;
    if (st->reset || st->h->closed)
        return;
    st->reset = true;
    nghttp2_submit_rst_stream(st->h->ng, NGHTTP2_FLAG_NONE, st->id, NGHTTP2_INTERNAL_ERROR);
    hy_h2_schedule_flush(st->h);
}

/* ---- request body ---- */

static void body_stop(h2stream_t *st)
{
    if (st->rb_len && !st->reset) /* what nobody took is acknowledged: the window reopens */
        nghttp2_session_consume(st->h->ng, st->id, st->rb_len);
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
        nghttp2_session_consume(st->h->ng, st->id, st->rb_len);
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
            nghttp2_session_set_local_window_size(st->h->ng, NGHTTP2_FLAG_NONE, st->id, 1 << 30);
        }
        if (took) {
            memmove(st->rb, st->rb + took, n - took);
            st->rb_len -= took;
            st->req.request_length += (int64_t)took;
            nghttp2_session_consume(st->h->ng, st->id, took);
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
        nghttp2_session_consume(st->h->ng, st->id, st->rb_len);
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

int hy_h2_on_data_chunk(nghttp2_session *ng, uint8_t flags, int32_t id, const uint8_t *data, size_t len, void *user)
{
    (void)flags;
    h2conn_t *h = user;
    h2stream_t *st = nghttp2_session_get_stream_user_data(ng, id);
    if (st == NULL || !st->started || st->reset || st->final) {
        nghttp2_session_consume(ng, id, len); /* nobody will read it: acknowledge as it arrives */
        if (st)
            st->body_total += (int64_t)len;
        return 0;
    }
    st->body_total += (int64_t)len;
    st->body_last_ms = hy_clock_now_ms();
    if (st->body_bad) { /* already refused: dropped as it comes */
        nghttp2_session_consume(ng, id, len);
        return 0;
    }
    if (st->req.content_length >= 0 && st->body_total > st->req.content_length) {
        hy_req_log(&st->req, HY_LOG_INFO, "client intended to send body data larger than declared");
        nghttp2_session_consume(ng, id, len);
        body_refuse(st);
        return 0;
    }
    int64_t max = st->body_max;
    if (!st->body_reading) { /* not asked for yet: client_max_body_size of the location found so far */
        hy_http_loc_conf_t *lc = st->req.loc ? st->req.loc : h->dsrv->loc;
        max = lc->client_max_body_size;
    }
    if (max > 0 && st->body_total > max) {
        hy_req_log(&st->req, HY_LOG_ERR, "client intended to send too large body: %lld bytes",
                   (long long)st->body_total);
        nghttp2_session_consume(ng, id, len);
        if (st->body_reading) {
            hy_h2_body_fail(st, 413);
        } else if (!st->req.head_sent) {
            st->too_large = true;
            st->rb_len = 0;
        }
        return 0;
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
    return 0;
}
