/* h2_int.h — the state proto/h2.c (session, I/O, stream lifecycle, limits) and proto/h2_stream.c (a stream's
 * response and request body) share. Private to proto/h2*. */
#ifndef HY_PROTO_H2_INT_H
#define HY_PROTO_H2_INT_H

#include "h2_compat.h"
#include "h2_prio.h"
#include "../http/conn.h"
#include "../http/request.h"
#include "../http/http2_module.h"

enum { CNT_SETTINGS, CNT_PING, CNT_PRIORITY, CNT_WINDOW_UPDATE, CNT_EMPTY_DATA, CNT_N };

#define PRIO_PENDING_MAX 8 /* PRIORITY_UPDATEs kept for streams whose request has not arrived yet */
#define PRIO_FIELD_MAX 1024 /* a longer PRIORITY_UPDATE field value is ignored */

typedef struct h2stream h2stream_t;

typedef struct h2conn {
    hy_conn_t *c;
    nghttp2_session *ng;
    hy_timer_t timer;
    hy_defer_t flush_defer, proceed_defer;
    hy_http_srv_conf_t *dsrv;
    const hy_http2_srv_conf_t *h2sc;
    h2stream_t *streams; /* open streams (a request started) */
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
    bool drop_settings_ack; /* the SETTINGS supplied for a client that sent none is not acknowledged */
    int32_t max_sid;        /* the highest client stream id a HEADERS frame used */
    int32_t rst_sent[8];    /* the last streams we reset: frames the client had sent on them are ignored */
    unsigned rst_next;
    /* the last streams closed, and whether the client had ended or reset its side: its DATA or HEADERS on one is a
     * STREAM_CLOSED error (RFC 9113 §5.1), which nghttp2, having forgotten the stream, would ignore (h2.c) */
    struct {
        int32_t id;
        uint8_t how; /* CLOSED_* in h2.c */
    } closed_ids[16];
    unsigned closed_next;
    /* the frame scanner ahead of nghttp2 (h2.c, recv_frames): nghttp2 skips PRIORITY frames with RFC 7540
     * priorities off, their validity is judged here; so are DATA on forgotten streams and whole header blocks */
    uint8_t scan_hdr[9], scan_prio[5];
    uint8_t scan_hlen, scan_plen;
    bool scan_ign; /* the DATA frame being walked is one nghttp2 ignores */
    uint32_t scan_left;
    size_t block_len;       /* the header block's bytes so far (HEADERS and CONTINUATION payloads) */
    uint64_t send_due;      /* when send_timeout next judges whether output moved */
    uint64_t linger_deadline;
    struct {
        int32_t id;
        hy_h2_prio_t prio;
    } prio_pending[PRIO_PENDING_MAX]; /* PRIORITY_UPDATEs for idle streams (RFC 9218 §7.1), oldest first */
    size_t prio_npending;
    char ext[4 + PRIO_FIELD_MAX]; /* the PRIORITY_UPDATE frame being received */
    size_t ext_len;
    bool ext_over;
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
    bool linked, started, head_sent, final, deferred, want_proceed, reset, eof_sent;
    bool rb_end, end_delivered, body_reading, body_waiting, too_large, feed_pending;
    /* a malformed request (nginx's checks, h2.c): the error log line of the first fault, answered 400; a body that
     * does not match its content-length, answered 400 when the handler reads it (body_bad) */
    char *bad;
    bool regular_seen, body_bad;
    bool window_open; /* a buffered body's stream window was opened to the maximum (hy_h2_feed_body) */
    /* RFC 9218 (h2_stream.c, hy_h2_set_priority) */
    hy_h2_prio_t prio;
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
/** Run the flush (mem_send into the socket's outq) from the loop, once. */
void hy_h2_schedule_flush(h2conn_t *h);

/* h2_stream.c: the protocol ops of a stream and the nghttp2 callbacks about its body */
void hy_h2_send(hy_req_t *req, bool is_final);
/* The request body's END_STREAM came (DATA or trailers): content-length is checked, then the end fed to the core. */
void hy_h2_body_end(h2stream_t *st);
void hy_h2_abort(hy_req_t *req);
void hy_h2_read_body(hy_req_t *req);
/** The body cannot be read (408, 413): the handler answers; the rest is acknowledged and dropped. */
void hy_h2_body_fail(h2stream_t *st, int status);
/** Hand buffered request body bytes to the core until it is all taken or the handler pauses; while nghttp2 reads,
 * only noted, and done once the read is processed (the DATA frames of one read reach the core as one piece). */
void hy_h2_feed_body(h2stream_t *st);
int hy_h2_on_data_chunk(nghttp2_session *ng, uint8_t flags, int32_t id, const uint8_t *data, size_t len, void *user);
/** Set a stream's priority (RFC 9218) for nghttp2's scheduler, which from then on ignores its own reading of the
 * client's signals for the stream. */
void hy_h2_set_priority(h2stream_t *st, hy_h2_prio_t prio);
/** Connection defer: runs the proceed of streams whose segments were all framed (backpressure). */
void hy_h2_on_proceed_defer(hy_defer_t *d);

#endif
