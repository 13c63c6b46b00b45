/* request.h — one HTTP request/response exchange, independent of the protocol that carries it.
 * A protocol front-end (h1 today, h2 later) fills the request part, calls hy_req_process(), and implements
 * hy_conn_ops_t to put the response on the wire. Handlers set the response fields, append body segments to
 * req->body and call hy_req_finish(). */
#ifndef HY_HTTP_REQUEST_H
#define HY_HTTP_REQUEST_H

#include <sys/socket.h>
#include "../core/hayate.h"
#include "../core/types.h"
#include "../core/str.h"
#include "../core/mem.h"
#include "../core/outq.h"
#include "core.h"
#include "../event/loop.h"

typedef struct hy_header {
    hy_str_t name, value; /* borrowed from the input buffer or the request pool */
} hy_header_t;

enum hy_method {
    HY_M_UNKNOWN = 0, HY_M_GET, HY_M_HEAD, HY_M_POST, HY_M_PUT, HY_M_DELETE, HY_M_OPTIONS, HY_M_PATCH,
    HY_M_TRACE, HY_M_CONNECT,
};

/** Backpressure (h2o's generator "proceed"): a producer that streams a body calls hy_req_send_more() with this
 * callback and produces nothing more until the protocol calls it back, once its output has drained. */
typedef void (*hy_req_proceed_cb)(hy_req_t *req);

typedef struct hy_conn_ops {
    /** Put the response head (first call) and the body segments queued in req->body on the wire.
     * is_final: nothing more will come; the protocol finishes the exchange when written. */
    void (*send)(hy_req_t *req, bool is_final);
    /** Drop the exchange without a (complete) response: h1 closes, h2 resets the stream. */
    void (*abort)(hy_req_t *req);
} hy_conn_ops_t;

/** What every protocol's connection shares (embedded first in h1/h2 connection structs). */
struct hy_conn {
    uint64_t id;                    /* $connection, "*N" in the error log */
    const hy_conn_ops_t *ops;
    hy_http_addr_t *addr;           /* borrowed from the generation: servers on the listening address */
    hy_cycle_t *cycle;              /* borrowed: the generation this connection was accepted under */
    hy_sock_t *sock;                /* borrowed (embedded in the protocol's struct) */
    char peer_text[64];             /* "127.0.0.1" for logs */
    uint16_t local_port;
};

struct hy_req {
    hy_pool_t *pool;                /* owned by the protocol; reset between keep-alive requests */
    hy_conn_t *conn;
    /* request */
    hy_str_t method;
    int method_id;                  /* enum hy_method */
    int version;                    /* 10 or 11 */
    hy_str_t target;                /* as sent */
    hy_str_t uri;                   /* decoded, normalised path */
    hy_str_t args;                  /* query string, not decoded */
    hy_str_t host;                  /* validated, lower-case, no port; empty when none */
    hy_header_t *headers;           /* all request header fields, in order */
    size_t num_headers;
    const hy_str_t *h_connection, *h_if_modified_since, *h_if_unmodified_since, *h_if_none_match, *h_if_match,
        *h_range, *h_if_range, *h_expect, *h_user_agent;
    int64_t content_length;         /* -1 when none */
    bool chunked;
    bool keepalive;                 /* may the connection be kept after this response */
    bool expect_continue;
    bool is_internal;               /* reached through an internal redirect */
    bool error_page;                /* an error_page redirect happened (recursive_error_pages off: no more) */
    int uri_changes;                /* rewrite cycles and internal redirects left (nginx's 11 → 500 at 0) */
    bool uri_changed;               /* set by a REWRITE handler: POST_REWRITE searches the location again */
    uint32_t _phase;                /* the phase engine's current step (http/phases.c) */
    const struct hy_phase_engine *_engine; /* borrowed from the generation's http{} conf */
    int err_status;                 /* error_page's status override of the final response (0: none) */
    int request_line_status;        /* non-zero: parse error to answer */
    /* routing */
    hy_http_srv_conf_t *srv;
    hy_http_loc_conf_t *loc;
    /* response */
    int status;
    hy_str_t status_line;           /* optional full reason override */
    hy_str_t content_type;
    int64_t content_length_n;       /* -1: unknown (chunked on 1.1, close on 1.0) */
    int64_t last_modified;          /* -1: none */
    hy_str_t etag;
    hy_str_t location;
    hy_file_t *file;                /* the static file being served (borrowed: the body segments hold refs) */
    hy_array_t *headers_out;        /* hy_header_t extras, NULL when none */
    bool accept_ranges;
    bool header_only;               /* HEAD, 304, 204: no body on the wire */
    bool head_sent;
    bool finished;
    hy_outq_t body;                 /* segments not yet handed to the protocol */
    int64_t body_bytes_sent;        /* body bytes handed to the connection ($body_bytes_sent) */
    int64_t bytes_sent;             /* head + body bytes handed to the connection ($bytes_sent) */
    int64_t request_length;         /* head + body bytes read ($request_length) */
    hy_str_t request_line;          /* "GET / HTTP/1.1" as sent ($request) */
    uint64_t start_ms;              /* wall-clock ms when the first byte of the head was parsed ($request_time) */
    uint64_t conn_requests;         /* number of this request on its connection, from 1 ($connection_requests) */
    void **ctx;                     /* per-module request state, indexed by module index (NULL until used) */
    bool logged, filters_started, chunked_out;
    bool pipelined;                 /* parsed from bytes that arrived with the previous request ($pipe) */
    hy_req_proceed_cb _proceed;     /* set by hy_req_send_more: called once when the protocol drained */
    int _filter_status;             /* set by hy_req_filter_finalize: hy_req_send answers with it instead */
    bool _filter_held;              /* a body filter streams the rest (hy_req_filter_hold): sends are not final */
    hy_defer_t _defer;
};

/** Per-module request context slot (allocated on first use). */
void **hy_req_ctx(hy_req_t *req, const hy_module_t *m);
/** Run the LOG phase once (http/phases.c); the protocol calls it when the request is over. */
void hy_req_log_phase(hy_req_t *req);

/** Start the request: validates the target and Host, picks the server, runs the phase engine from POST_READ
 * (http/phases.h). On return the response may still be in flight. */
void hy_req_process(hy_req_t *req);
/** Hand the queued body to the protocol; is_final ends the response. */
void hy_req_send(hy_req_t *req, bool is_final);
/** Streaming: hand the queued body (not final) to the protocol and have `proceed` called once the protocol has
 * written it out (the socket drained), so the producer never holds more than one batch in memory. proceed never
 * fires if the connection closes first (the request is then over: the log phase runs); it may not fire before
 * this returns (it is always called from a later loop event). */
void hy_req_send_more(hy_req_t *req, hy_req_proceed_cb proceed);
/** Called by the protocol when the output handed to it has drained: runs the pending proceed callback, if any. */
void hy_req_proceed(hy_req_t *req);
/** For a header filter (nginx's ngx_http_filter_finalize_request): replace the response being sent by
 * hy_req_error(status) — 412 from not_modified, 416 from range. The filters after the caller do not run for the
 * replaced response; the error response (or error_page's redirect) runs the whole chain from the start. */
void hy_req_filter_finalize(hy_req_t *req, int status);
/** For a body filter that turns the body it was given into a stream (compression of a large file): called from
 * its body filter, it makes the current send not final for the filters after it and the protocol, and has
 * `proceed` called (as hy_req_send_more) once the protocol has written what was sent. The filter then hands each
 * next batch on with hy_req_filter_send, the last one with is_final. */
void hy_req_filter_hold(hy_req_t *req, hy_req_proceed_cb proceed);
/** Hand req->body, produced by module m's body filter outside a send (from its proceed), through the body
 * filters after m and to the protocol. Not final: `proceed` is called when it has drained (never after the
 * connection closed); final: the response ends (proceed NULL). */
void hy_req_filter_send(hy_req_t *req, const hy_module_t *m, bool is_final, hy_req_proceed_cb proceed);
/** Finish with an error page for `status` (nginx-like HTML body, keep-alive rules as nginx). error_page
 * redirects apply first; 444 closes the connection without a response. */
void hy_req_error(hy_req_t *req, int status);
/** The built-in response for `status` (no error_page lookup): hayate's HTML page for 3xx-5xx. */
void hy_req_special_response(hy_req_t *req, int status);
/** nginx's ngx_http_internal_redirect: new URI and args (args may be empty), rerun from the server rewrite
 * phase. Counts against the 10-redirect limit (500 after). Always finishes or continues the request. */
void hy_req_internal_redirect(hy_req_t *req, hy_str_t uri, hy_str_t args);
/** nginx's ngx_http_named_location: continue in location "@name" from its rewrite phase (500 if unknown). */
void hy_req_named_redirect(hy_req_t *req, hy_str_t name);
/** Split "uri?args" at the first '?' (args empty when none). */
void hy_req_split_args(hy_str_t in, hy_str_t *uri, hy_str_t *args);
/** Add a response header (name and value must outlive the request: literals or pool memory). */
void hy_req_add_header(hy_req_t *req, hy_str_t name, hy_str_t value);
/** Reason phrase for a status ("OK", "Not Found"...), or NULL for unknown codes. */
const char *hy_http_reason(int status);
/** Method token → enum hy_method. */
int hy_http_method_id(hy_str_t m);
/** Log line context like nginx's: ", client: X, server: Y, request: "...", host: "..."" into buf. */
size_t hy_req_log_ctx(hy_req_t *req, char *buf, size_t cap);

#endif
