/* h2_int.h — the state proto/h2.c (connection, I/O, output, scheduling, timers), proto/h2_recv.c (frames
 * received, request heads) and proto/h2_stream.c (a stream's response and request body) share. Private to
 * proto/h2*. */
#ifndef HY_PROTO_H2_INT_H
#define HY_PROTO_H2_INT_H

#include "h2frame.h"
#include "h2_prio.h"
#include "hpack.h"
#include "../http/conn.h"
#include "../http/request.h"
#include "../http/http2_module.h"

enum { CNT_SETTINGS, CNT_PING, CNT_PRIORITY, CNT_WINDOW_UPDATE, CNT_EMPTY_DATA, CNT_N };

#define PRIO_PENDING_MAX 8 /* PRIORITY_UPDATEs kept for streams whose request has not arrived yet */
#define PRIO_FIELD_MAX 1024 /* a longer PRIORITY_UPDATE field value is ignored */
#define MAX_CONTINUATIONS 16 /* CONTINUATION frames in one header block */

typedef struct h2stream h2stream_t;

typedef struct h2conn {
    hy_conn_t *c;
    hy_timer_t timer;
    hy_defer_t flush_defer, proceed_defer;
    hy_http_srv_conf_t *dsrv;
    const hy_http2_srv_conf_t *h2sc;
    h2stream_t *streams; /* open streams (HEADERS received, not closed) */
    size_t nstreams;
    uint64_t num_requests, completed, resets, refused, data_frames_sent;
    uint64_t counters[CNT_N];
    uint64_t new_in_read; /* streams opened by the bytes of one read */
    uint64_t send_mark;
    uint32_t continuations;
    size_t header_limit, field_limit;
    bool closed, goaway, fatal, in_recv, magic_done, preface_done, error_logged, lingering;
    bool settings_acked;    /* the client acknowledged our SETTINGS */
    bool feed_pending;      /* a stream has body bytes of this read for the core (hy_h2_feed_body) */
    bool goaway_recv;       /* the client sent GOAWAY: no stream left, the connection ends */
    bool close_pending;     /* streams reset by us wait for the flush to be closed */
    int32_t max_sid;        /* the highest client stream id a HEADERS frame used */
    int32_t last_proc;      /* the highest stream id taken for processing (GOAWAY's last stream) */
    int32_t goaway_last;    /* with goaway: streams above it are ignored */
    int32_t rst_sent[8];    /* the last streams we reset: frames the client had sent on them are ignored */
    unsigned rst_next;
    /* the last streams closed, and whether the client had ended or reset its side: its DATA or HEADERS on one is a
     * STREAM_CLOSED error (RFC 9113 §5.1) */
    struct {
        int32_t id;
        uint8_t how; /* CLOSED_* in h2_recv.c */
    } closed_ids[16];
    unsigned closed_next;
    /* flow control (RFC 9113 §6.9): what we may send, what the client may send */
    int64_t send_window;       /* connection */
    int64_t peer_iws;          /* the client's SETTINGS_INITIAL_WINDOW_SIZE */
    size_t peer_max_frame;     /* the client's SETTINGS_MAX_FRAME_SIZE */
    int64_t recv_window;       /* connection: bytes the client may still send */
    int64_t recv_unacked;      /* connection: bytes consumed, not yet announced by WINDOW_UPDATE */
    int64_t local_iws;         /* the stream window in force for the client (65535 until our SETTINGS is acked) */
    /* the header block being gathered (HEADERS then CONTINUATION) */
    uint8_t *block;
    size_t block_len, block_cap;
    int32_t head_wait_sid;     /* a new stream's HEADERS frame arrived in part (client_header_timeout) */
    uint64_t head_wait_ms;
    int32_t cont_sid;          /* CONTINUATION expected on this stream (0: none) */
    uint8_t cont_flags, cont_mode; /* the HEADERS frame's flags; what its block is for (h2_recv.c) */
    hy_hpack_dec_t dec;
    hy_hpack_enc_t enc;
    /* output: frames are written into blocks pushed onto the socket's outq at the flush */
    uint8_t *ob;
    size_t ob_len, ob_cap;
    uint64_t send_due;      /* when send_timeout next judges whether output moved */
    uint64_t linger_deadline;
    uint64_t sched_seq;     /* frames framed: incremental streams take turns by the sequence of their last frame */
    struct {
        int32_t id;
        hy_h2_prio_t prio;
    } prio_pending[PRIO_PENDING_MAX]; /* PRIORITY_UPDATEs for idle streams (RFC 9218 §7.1), oldest first */
    size_t prio_npending;
} h2conn_t;

struct h2stream {
    hy_req_t req; /* first: the core's request, container of the stream */
    h2conn_t *h;
    h2stream_t *prev, *next;
    int32_t id;
    hy_array_t *headers; /* hy_header_t while the header block arrives */
    hy_str_t method, path, authority, scheme;
    size_t header_bytes, header_fields;
    hy_outq_t out;  /* response body segments not yet framed */
    size_t chunk_size;
    char *rb;       /* request body bytes received, not taken by the core yet (malloc) */
    size_t rb_len, rb_cap;
    int64_t body_total, body_max;
    uint64_t body_last_ms; /* when body bytes last arrived, or the handler asked (client_body_timeout) */
    uint64_t head_start_ms; /* when the HEADERS frame began (client_header_timeout until the block is whole) */
    bool linked, started, head_sent, final, want_proceed, reset, eof_sent;
    bool rb_end, end_delivered, body_reading, body_waiting, too_large, feed_pending;
    bool remote_closed;  /* the client ended its side (END_STREAM) */
    bool close_pending;  /* reset by us: closed at the next flush */
    bool trailers_due;   /* the response's trailers go out after the body */
    /* a malformed request (nginx's checks, h2_recv.c): the error log line of the first fault, answered 400; a body
     * that does not match its content-length, answered 400 when the handler reads it (body_bad) */
    char *bad;
    bool regular_seen, body_bad;
    bool window_open; /* a buffered body's stream window was opened to the maximum (hy_h2_feed_body) */
    /* flow control */
    int64_t send_window;
    int64_t recv_window, recv_max, recv_unacked;
    /* RFC 9218 (h2.c, pick_stream) */
    hy_h2_prio_t prio;
    uint64_t last_seq;
    hy_str_t prio_field; /* the priority header field(s) while the head arrives */
    /* limit_rate, per stream as in nginx: body bytes framed since the request started */
    bool rate_wait;
    hy_timer_t rate_timer;
    uint64_t rate_start_ms;
    int64_t rate_sent;
};

static inline h2stream_t *stream_of(hy_req_t *req)
{
    return (h2stream_t *)req;
}

/* h2.c */
/** Run the flush (frames into the socket's outq) from the loop, once. */
void hy_h2_schedule_flush(h2conn_t *h);
/** Room for n bytes of frames at the end of the connection's output; hy_h2_out_commit(h, n) then keeps them. */
uint8_t *hy_h2_out(h2conn_t *h, size_t n);
static inline void hy_h2_out_commit(h2conn_t *h, size_t n)
{
    h->ob_len += n;
}
/** A file region goes out after the frames written so far, without a copy. */
void hy_h2_out_file(h2conn_t *h, hy_file_t *f, int64_t off, int64_t len);
/** RST_STREAM for a stream of ours (it is closed at the next flush) or an id without one. */
void hy_h2_rst(h2conn_t *h, h2stream_t *st, int32_t id, uint32_t code);
/** A connection error: GOAWAY with the code and the last stream taken; nothing more is read. */
void hy_h2_conn_error(h2conn_t *h, uint32_t code);
/** GOAWAY NO_ERROR with this last stream (graceful). */
void hy_h2_goaway(h2conn_t *h, int32_t last);
enum {
    HY_H2_CLOSED_BY_US = 1,    /* we reset it or ended it while the client's side was open */
    HY_H2_CLOSED_CLIENT = 2,   /* the client ended (END_STREAM) or reset its side */
    HY_H2_CLOSED_ANSWERED = 4, /* a frame on it was answered with RST_STREAM already */
};
/** The closed-stream memory (closed_ids): the entry of a stream, or NULL. */
uint8_t *hy_h2_closed_how(h2conn_t *h, int32_t id);
void hy_h2_note_closed(h2conn_t *h, int32_t id, uint8_t how);
/** The stream is closed (both sides ended, or reset): its request ends, it leaves the connection. */
void hy_h2_stream_close(h2stream_t *st);
/** Request body bytes acknowledged: the connection's window (and the stream's, while it reads) reopen. */
void hy_h2_consume(h2conn_t *h, h2stream_t *st, size_t n);
/** Open the stream's receive window to `size` (a buffered body, hy_h2_feed_body). */
void hy_h2_open_window(h2stream_t *st, int64_t size);
void hy_h2_stream_free(h2stream_t *st);
void hy_h2_calm_down(h2conn_t *h, const char *fmt, const char *what);
bool hy_h2_count_frame(h2conn_t *h, int which);

/* h2_recv.c */
/** Frames in p[0, n): returns the bytes consumed (whole frames; the rest waits for more). */
size_t hy_h2_recv(h2conn_t *h, const uint8_t *p, size_t n);

/* h2_stream.c: the protocol ops of a stream, its response framing and its request body */
void hy_h2_send(hy_req_t *req, bool is_final);
/* The request body's END_STREAM came (DATA or trailers): content-length is checked, then the end fed to the core. */
void hy_h2_body_end(h2stream_t *st);
void hy_h2_abort(hy_req_t *req);
void hy_h2_read_body(hy_req_t *req);
/** The body cannot be read (408, 413): the handler answers; the rest is acknowledged and dropped. */
void hy_h2_body_fail(h2stream_t *st, int status);
/** Hand buffered request body bytes to the core until it is all taken or the handler pauses; while a read is being
 * processed, only noted, and done once it is (the DATA frames of one read reach the core as one piece). */
void hy_h2_feed_body(h2stream_t *st);
void hy_h2_on_data(h2conn_t *h, h2stream_t *st, const uint8_t *data, size_t len);
/** Set a stream's priority (RFC 9218) for the scheduler (h2.c). */
void hy_h2_set_priority(h2stream_t *st, hy_h2_prio_t prio);
/** Connection defer: runs the proceed of streams whose segments were all framed (backpressure). */
void hy_h2_on_proceed_defer(hy_defer_t *d);
/** Whether the stream has a frame to send now (body within the windows, or its end). */
bool hy_h2_stream_ready(h2stream_t *st);
/** Frame the stream's next DATA frame (or its trailers); the stream may end (hy_h2_stream_close). */
void hy_h2_frame_next(h2stream_t *st);

#endif
