/* h2.c — HTTP/2 server connections (RFC 9113) with hayate's own framing (h2frame.h) and HPACK (hpack.h): the
 * connection, its output, the scheduling of DATA frames, stream lifecycle, timers and limits. Frames received and
 * request heads are h2_recv.c; a stream's response and request body are h2_stream.c.
 *
 * Input: the socket's input buffer is walked frame by frame (h2_recv.c); a frame is processed once whole, a
 * partial one stays in the buffer for the next read (read_limit holds two frames of the size we announce).
 * Output: frames are written into blocks (hy_h2_out) pushed onto the socket's outq at the flush, which runs once
 * per loop iteration (deferred) and frames DATA from the streams' segment queues in RFC 9218 order while the outq
 * is below its high-watermark; file segments go out without a copy. The socket's drain runs the flush again.
 *
 * Request bodies: bytes are acknowledged (hy_h2_consume, WINDOW_UPDATE once half the window is consumed) when the
 * core takes them, so a slow handler slows its client, and a body nobody reads is acknowledged as it arrives. The
 * stream window is http2_body_preread_size; the connection window is opened wide once, as nginx does, so one stuck
 * stream never blocks the others.
 *
 * Protections (each logged at info with its own words, then GOAWAY ENHANCE_YOUR_CALM): rapid reset, new streams
 * per read, CONTINUATION frames per header block, SETTINGS/PING/PRIORITY/WINDOW_UPDATE/empty DATA frames beyond
 * a budget that grows with the requests served, header lists beyond large_client_header_buffers, streams
 * beyond http2_max_concurrent_streams; zero-window readers meet send_timeout. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "h2.h"
#include "h2_int.h"
#include "../http/body.h"
#include "../http/phases.h"
#include "../core/buf.h"
#include "../core/log.h"
#include "../core/clock.h"
#include "../event/sock.h"

#define FLUSH_BLOCK HY_BUF_BLOCK
#define OUTQ_HIGH (256 * 1024) /* stop framing DATA above this many queued bytes */
#define FRAME_BUDGET 500       /* control frames allowed before any request */
#define FRAME_BUDGET_PER_REQ 8 /* ... plus these per request served */
#define REFUSED_MIN 32         /* streams refused before calm, at least (a small http2_max_concurrent_streams) */

static const char *const cnt_names[CNT_N] = {"SETTINGS", "PING", "PRIORITY", "WINDOW_UPDATE", "empty DATA"};

static const hy_conn_ops_t h2_ops;
static void conn_close(h2conn_t *h);
static void linger(h2conn_t *h);
static void on_read(hy_sock_t *s, const char *err);
static void flush(h2conn_t *h);

void hy_h2_stream_free(h2stream_t *st)
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
    hy_loop_free_later(h->c->sock.loop, hy_pool_give, st->req.pool);
}

/* ---- output ---- */

/* Output blocks of FLUSH_BLOCK (= HY_BUF_BLOCK) bytes come from and go back to the worker's block recycler
 * (core/buf), which a burst over many connections needs (one block per connection with output in a loop
 * iteration; a fresh 16 KiB malloc costs as much as framing a response, and a private cache of 16 let glibc trim
 * and regrow the heap under TLS load); larger ones, for a huge header block, are malloc'd and freed. */
static void block_give(void *p)
{
    hy_buf_block_put(p);
}

/* the frames written so far join the socket's outq */
static void out_push(h2conn_t *h)
{
    if (h->ob_len)
        hy_outq_push_mem(&h->c->sock.outq, (const char *)h->ob, h->ob_len,
                         h->ob_cap == FLUSH_BLOCK ? block_give : free, h->ob);
    else if (h->ob)
        (h->ob_cap == FLUSH_BLOCK ? block_give : free)(h->ob);
    h->ob = NULL;
    h->ob_len = h->ob_cap = 0;
}

uint8_t *hy_h2_out(h2conn_t *h, size_t n)
{
    if (h->ob_len + n > h->ob_cap) {
        out_push(h);
        if (n <= FLUSH_BLOCK) {
            h->ob = (uint8_t *)hy_buf_block_get();
            h->ob_cap = FLUSH_BLOCK;
        } else {
            h->ob = hy_alloc(n);
            h->ob_cap = n;
        }
    }
    return h->ob + h->ob_len;
}

void hy_h2_out_file(h2conn_t *h, hy_file_t *f, int64_t off, int64_t len)
{
    out_push(h);
    hy_outq_push_file(&h->c->sock.outq, f, off, len);
}

void hy_h2_calm_down(h2conn_t *h, const char *fmt, const char *what)
{
    char text[160];
    snprintf(text, sizeof(text), fmt, what);
    hy_log_conn(HY_LOG_INFO, h->c->id, "%s, client: %s", text, h->c->peer_text);
    if (!h->fatal) {
        h->error_logged = true;
        hy_h2_conn_error(h, HY_H2_ENHANCE_YOUR_CALM);
    }
}

void hy_h2_conn_error(h2conn_t *h, uint32_t code)
{
    h->error_logged = true;
    if (h->fatal || h->closed)
        return;
    h->fatal = true;
    hy_h2_write_goaway(hy_h2_out(h, 17), (uint32_t)h->last_proc, code);
    hy_h2_out_commit(h, 17);
    hy_h2_schedule_flush(h);
}

void hy_h2_goaway(h2conn_t *h, int32_t last)
{
    if (h->closed)
        return;
    h->goaway = true;
    h->goaway_last = last;
    hy_h2_write_goaway(hy_h2_out(h, 17), (uint32_t)last, HY_H2_NO_ERROR);
    hy_h2_out_commit(h, 17);
    hy_h2_schedule_flush(h);
}

bool hy_h2_count_frame(h2conn_t *h, int which)
{
    uint64_t budget = FRAME_BUDGET + FRAME_BUDGET_PER_REQ * h->num_requests;
    if (which == CNT_WINDOW_UPDATE) /* a small window legitimately answers each DATA frame (two levels) */
        budget += 2 * h->data_frames_sent;
    if (++h->counters[which] <= budget)
        return true;
    hy_h2_calm_down(h, "client sent too many %s frames (flood)", cnt_names[which]);
    return false;
}

void hy_h2_rst(h2conn_t *h, h2stream_t *st, int32_t id, uint32_t code)
{
    if (h->closed)
        return;
    if (st) {
        if (st->close_pending)
            return;
        st->reset = true;
        st->close_pending = true;
        h->close_pending = true;
        id = st->id;
    }
    hy_h2_write_rst(hy_h2_out(h, 13), (uint32_t)id, code);
    hy_h2_out_commit(h, 13);
    h->rst_sent[h->rst_next++ % HY_ARRAY_SIZE(h->rst_sent)] = id;
    if (st == NULL && (code == HY_H2_REFUSED_STREAM || code == HY_H2_PROTOCOL_ERROR) &&
        ++h->refused > HY_MAX((uint64_t)h->h2sc->max_concurrent_streams, REFUSED_MIN))
        hy_h2_calm_down(h, "client opened too many concurrent streams%s", "");
    hy_h2_schedule_flush(h);
}

/* ---- flow control of request bodies ---- */

static void window_update(h2conn_t *h, int32_t id, int64_t inc)
{
    hy_h2_write_window_update(hy_h2_out(h, 13), (uint32_t)id, (uint32_t)inc);
    hy_h2_out_commit(h, 13);
}

void hy_h2_consume(h2conn_t *h, h2stream_t *st, size_t n)
{
    if (n == 0 || h->closed)
        return;
    h->recv_unacked += (int64_t)n;
    if (h->recv_unacked >= HY_H2_MAX_WINDOW / 2) {
        window_update(h, 0, h->recv_unacked);
        h->recv_window += h->recv_unacked;
        h->recv_unacked = 0;
    }
    if (st == NULL || st->reset || st->remote_closed)
        return;
    st->recv_unacked += (int64_t)n;
    if (st->recv_unacked >= st->recv_max / 2) {
        window_update(h, st->id, st->recv_unacked);
        st->recv_window += st->recv_unacked;
        st->recv_unacked = 0;
    }
    hy_h2_schedule_flush(h);
}

void hy_h2_open_window(h2stream_t *st, int64_t size)
{
    h2conn_t *h = st->h;
    if (size <= st->recv_max || st->reset || st->remote_closed || h->closed)
        return;
    int64_t inc = size - st->recv_max + st->recv_unacked;
    st->recv_max = size;
    st->recv_unacked = 0;
    st->recv_window += inc;
    window_update(h, st->id, inc);
    hy_h2_schedule_flush(h);
}

/* ---- closed streams ---- */

uint8_t *hy_h2_closed_how(h2conn_t *h, int32_t id)
{
    for (size_t i = 0; i < HY_ARRAY_SIZE(h->closed_ids); i++)
        if (h->closed_ids[i].id == id)
            return &h->closed_ids[i].how;
    return NULL;
}

void hy_h2_note_closed(h2conn_t *h, int32_t id, uint8_t how)
{
    uint8_t *p = hy_h2_closed_how(h, id);
    if (p == NULL) {
        unsigned i = h->closed_next++ % HY_ARRAY_SIZE(h->closed_ids);
        h->closed_ids[i].id = id;
        h->closed_ids[i].how = 0;
        p = &h->closed_ids[i].how;
    }
    *p |= how;
}

void hy_h2_stream_close(h2stream_t *st)
{
    h2conn_t *h = st->h;
    if (!st->linked)
        return;
    /* an open stream is not in the ring yet (ids are used once): its entry is written without a search */
    unsigned slot = h->closed_next++ % HY_ARRAY_SIZE(h->closed_ids);
    h->closed_ids[slot].id = st->id;
    h->closed_ids[slot].how = st->remote_closed ? HY_H2_CLOSED_CLIENT : HY_H2_CLOSED_BY_US;
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
    hy_h2_stream_free(st);
    if (h->nstreams == 0 && !h->closed) {
        hy_conn_set_state(h->c, HY_CONN_WAITING);
        hy_http_loc_conf_t *lc = h->dsrv->loc;
        hy_timer_link(h->c->sock.loop, &h->timer, (uint64_t)lc->keepalive_timeout_ms);
        hy_h2_schedule_flush(h);
    }
}

/* ---- scheduling (RFC 9218): the most urgent ready stream first; in one urgency the non-incremental ones one
 * after the other in stream order, the incremental ones frame by frame in turn ---- */

static h2stream_t *pick_stream(h2conn_t *h)
{
    h2stream_t *best = NULL;
    for (h2stream_t *st = h->streams; st; st = st->next) {
        if (!hy_h2_stream_ready(st))
            continue;
        if (best == NULL || st->prio.urgency < best->prio.urgency) {
            best = st;
            continue;
        }
        if (st->prio.urgency > best->prio.urgency)
            continue;
        if (st->prio.incremental != best->prio.incremental) {
            if (!st->prio.incremental)
                best = st;
            continue;
        }
        if (st->prio.incremental ? (st->last_seq < best->last_seq ||
                                    (st->last_seq == best->last_seq && st->id < best->id))
                                 : st->id < best->id)
            best = st;
    }
    return best;
}

/* prio order: urgency, then the non-incremental streams by id, then the incremental ones by their last turn */
static bool sched_before(const h2stream_t *a, const h2stream_t *b)
{
    if (a->prio.urgency != b->prio.urgency)
        return a->prio.urgency < b->prio.urgency;
    if (a->prio.incremental != b->prio.incremental)
        return !a->prio.incremental;
    if (a->prio.incremental && a->last_seq != b->last_seq)
        return a->last_seq < b->last_seq;
    return a->id < b->id;
}

/* One round of framing: the ready streams in priority order, a non-incremental one until it is done or blocked,
 * an incremental one a frame per round; a less urgent group waits while a more urgent stream is still ready (the
 * next round). With more ready streams than a round holds, one frame of the best (pick_stream). Returns whether a
 * stream was ready. */
#define ROUND_MAX 32
static bool schedule_round(h2conn_t *h)
{
    h2stream_t *r[ROUND_MAX];
    size_t n = 0;
    hy_sock_t *s = &h->c->sock;
    for (h2stream_t *st = h->streams; st; st = st->next) {
        if (!hy_h2_stream_ready(st))
            continue;
        if (n == ROUND_MAX) {
            h2stream_t *best = pick_stream(h);
            best->last_seq = ++h->sched_seq;
            hy_h2_frame_next(best);
            return true;
        }
        size_t i = n++;
        for (; i > 0 && sched_before(st, r[i - 1]); i--) /* insertion: rounds are short */
            r[i] = r[i - 1];
        r[i] = st;
    }
    for (size_t i = 0, group = 0; i < n && !h->fatal && !h->closed; i++) {
        if (r[i]->prio.urgency != r[group]->prio.urgency) {
            for (size_t k = group; k < i; k++)
                if (hy_h2_stream_ready(r[k]))
                    return true;
            group = i;
        }
        h2stream_t *st = r[i];
        do {
            if (s->outq.bytes + h->ob_len >= OUTQ_HIGH)
                return true;
            st->last_seq = ++h->sched_seq;
            hy_h2_frame_next(st);
        } while (!st->prio.incremental && !h->fatal && !h->closed && hy_h2_stream_ready(st));
    }
    return n > 0;
}

/* streams whose RST_STREAM or END_STREAM is written close */
static void close_pending(h2conn_t *h)
{
    if (!h->close_pending)
        return;
    h->close_pending = false;
    for (h2stream_t *st = h->streams, *nx; st && !h->closed; st = nx) {
        nx = st->next;
        if (st->close_pending)
            hy_h2_stream_close(st);
    }
}

static void on_written(hy_sock_t *s, const char *err);

static void flush(h2conn_t *h)
{
    hy_sock_t *s = &h->c->sock;
    close_pending(h);
    if (h->closed)
        return;
    while (!h->fatal && s->outq.bytes + h->ob_len < OUTQ_HIGH && schedule_round(h)) {
        if (h->closed)
            return;
        close_pending(h);
        if (h->closed)
            return;
    }
    close_pending(h);
    if (h->closed)
        return;
    out_push(h);
    if (!hy_outq_empty(&s->outq)) {
        h->send_mark = s->bytes_out;
        hy_sock_write(s, on_written);
        return;
    }
    if (h->fatal || ((h->goaway || h->goaway_recv) && h->nstreams == 0))
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
    if (!h->closed && !h->in_recv && !h->lingering)
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

/* The client connection preface's magic (RFC 9113 §3.4). Its SETTINGS frame is taken as any SETTINGS: clients
 * that wait for the server's SETTINGS before sending theirs (nginx accepts them; nginx's own test client is one)
 * are served too. Returns false while more bytes are needed. */
static bool client_preface(h2conn_t *h, hy_buf_t *in)
{
    static const char magic[] = HY_H2_PREFACE;
    size_t m = HY_MIN(in->len, sizeof(magic) - 1);
    if (m > 0 && memcmp(hy_buf_data(in), magic, m) != 0) { /* nothing read yet: an empty buffer has no data */
        hy_log_conn(HY_LOG_INFO, h->c->id, "client sent invalid HTTP/2 preface, client: %s", h->c->peer_text);
        h->fatal = true;
        return false;
    }
    if (m < sizeof(magic) - 1)
        return false;
    hy_buf_consume(in, sizeof(magic) - 1);
    h->magic_done = h->preface_done = true;
    return true;
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
    if (!h->preface_done && !h->fatal && !client_preface(h, in)) {
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
        size_t used = hy_h2_recv(h, (const uint8_t *)hy_buf_data(in), in->len);
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
        hy_buf_consume(in, h->fatal ? in->len : used);
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
        hy_h2_consume(h, st, st->rb_len);
    st->rb_len = 0;
    st->body_reading = false;
    hy_h2_rst(h, st, 0, HY_H2_PROTOCOL_ERROR);
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
    if (h->head_wait_sid && !h->fatal) { /* client_header_timeout of a HEADERS frame that stopped half-way */
        uint64_t now = hy_clock_now_ms(), hto = (uint64_t)h->dsrv->client_header_timeout_ms;
        if (now - h->head_wait_ms >= hto) {
            hy_log_conn(HY_LOG_INFO, h->c->id, "client timed out (110: Connection timed out) while reading "
                        "client request headers, client: %s", h->c->peer_text);
            int32_t sid = h->head_wait_sid;
            h->head_wait_sid = 0;
            h->max_sid = HY_MAX(h->max_sid, sid); /* the frame's end, when it comes, is decoded and ignored */
            hy_h2_rst(h, NULL, sid, HY_H2_PROTOCOL_ERROR);
            if (h->nstreams == 0) {
                hy_timer_link(h->c->sock.loop, &h->timer, (uint64_t)lc->keepalive_timeout_ms);
                flush(h);
                return;
            }
        } else if (h->nstreams == 0) {
            hy_timer_link(h->c->sock.loop, &h->timer, hto - (now - h->head_wait_ms));
            return;
        }
    }
    if (h->nstreams == 0) {
        if (!h->goaway && !h->fatal) {
            hy_h2_goaway(h, h->last_proc);
            h->fatal = true; /* close once the GOAWAY is out */
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
    if (h->head_wait_sid)
        next = HY_MIN(next, hto - HY_MIN(hto, now - h->head_wait_ms));
    for (h2stream_t *st = h->streams, *nx; st; st = nx) {
        nx = st->next;
        if (st->reset || st->final)
            continue;
        if (!st->started) { /* client_header_timeout: the header block is not whole yet */
            if (now - st->head_start_ms >= hto) {
                hy_log_conn(HY_LOG_INFO, h->c->id, "client timed out (110: Connection timed out) while reading "
                            "client request headers, client: %s", h->c->peer_text);
                /* as nginx: the stream ends with PROTOCOL_ERROR, the connection goes on */
                hy_h2_rst(h, st, 0, HY_H2_PROTOCOL_ERROR);
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
    hy_hpack_dec_free(&h->dec);
    hy_hpack_enc_free(&h->enc);
    free(h->block);
    if (h->ob)
        (h->ob_cap == FLUSH_BLOCK ? block_give : free)(h->ob);
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
        hy_h2_stream_free(st);
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
    hy_h2_goaway(h, h->last_proc);
}

static const hy_conn_ops_t h2_ops = {
    .name = "HTTP/2.0", .multiplexed = true, .send = hy_h2_send, .abort = hy_h2_abort, .read_body = hy_h2_read_body, .shutdown = h2_shutdown,
    .close = h2_close,
};

void hy_h2_attach(hy_conn_t *c)
{
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
    h->send_window = HY_H2_DEFAULT_WINDOW;
    h->peer_iws = HY_H2_DEFAULT_WINDOW;
    h->peer_max_frame = HY_H2_DEFAULT_FRAME;
    h->local_iws = HY_H2_DEFAULT_WINDOW;
    h->recv_window = HY_H2_MAX_WINDOW;
    hy_hpack_dec_init(&h->dec, HY_HPACK_DEFAULT_TABLE);
    hy_hpack_enc_init(&h->enc);
    c->ops = &h2_ops;
    c->proto = h;
    c->sock.data = h;
    if (h->dsrv->loc->tcp_nodelay) /* as nginx: frames go out as they are made */
        hy_sock_set_nodelay(&c->sock);
    /* a partial frame waits in the input: room for a whole one of the size we announce, and the next */
    c->sock.read_limit = HY_MAX(hy_http2_recv_buffer_size(c->cycle), (size_t)2 * (HY_H2_DEFAULT_FRAME + HY_H2_HDR));
    uint16_t ids[] = {HY_H2_SET_MAX_CONCURRENT_STREAMS, HY_H2_SET_INITIAL_WINDOW_SIZE,
                      HY_H2_SET_MAX_HEADER_LIST_SIZE, HY_H2_SET_NO_RFC7540_PRIORITIES};
    uint32_t vals[] = {(uint32_t)h->h2sc->max_concurrent_streams, (uint32_t)h->h2sc->body_preread_size,
                       (uint32_t)h->header_limit, 1}; /* RFC 9218 replaces the RFC 7540 tree */
    uint8_t *p = hy_h2_out(h, 9 + 6 * 4 + 13);
    uint8_t *e = hy_h2_write_settings(p, ids, vals, 4);
    /* the connection window opened wide once (the body's bytes are paced by the stream windows) */
    e = hy_h2_write_window_update(e, 0, HY_H2_MAX_WINDOW - HY_H2_DEFAULT_WINDOW);
    hy_h2_out_commit(h, (size_t)(e - p));
    hy_timer_link(c->sock.loop, &h->timer, (uint64_t)h->dsrv->client_header_timeout_ms);
    hy_sock_read_start(&c->sock, on_read);
    if (c->sock.input.len)
        on_read(&c->sock, NULL);
    else
        hy_sock_read_now(&c->sock);
}
