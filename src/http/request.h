/* request.h — one HTTP request/response exchange, independent of the protocol that carries it.
 * A protocol (proto/h1, h2 next) fills the request part (method, target, headers, version), starts it with
 * hy_req_process() (http/phases.h) and implements hy_conn_ops_t (http/conn.h) to put the response on the wire
 * and to deliver the body (http/body.h). Handlers set the response fields, append body segments to req->body and
 * call hy_req_send(req, true) (or hy_req_send_more to stream); filters run in hy_req_send, then the head is
 * finalised into req->resp_headers for the protocol. */
#ifndef HY_HTTP_REQUEST_H
#define HY_HTTP_REQUEST_H

#include <sys/socket.h>
#include "../core/hayate.h"
#include "../core/types.h"
#include "../core/str.h"
#include "../core/mem.h"
#include "../core/outq.h"
#include "../core/regex.h"
#include "core.h"
#include "conn.h"
#include "../event/loop.h"

typedef struct hy_header {
    hy_str_t name, value; /* borrowed from the input buffer or the request pool */
} hy_header_t;

enum hy_method {
    HY_M_UNKNOWN = 0, HY_M_GET, HY_M_HEAD, HY_M_POST, HY_M_PUT, HY_M_DELETE, HY_M_OPTIONS, HY_M_PATCH,
    HY_M_TRACE, HY_M_CONNECT,
};

#define HY_RESP_FRAMING_SLOTS 3

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
    uint8_t implied_headers;        /* of them, added by the protocol (HTTP/2's Host from :authority): max_headers
                                     * does not count them */
    const hy_str_t *h_connection, *h_if_modified_since, *h_if_unmodified_since, *h_if_none_match, *h_if_match,
        *h_range, *h_if_range, *h_expect, *h_user_agent;
    int64_t content_length;         /* -1 when none */
    bool body_follows;              /* HTTP/2: the HEADERS frame did not end the stream, a body follows (of unknown
                                     * length when content_length is -1: nginx's chunked for h2) */
    bool keepalive;                 /* may the connection be kept after this response */
    bool is_internal;               /* reached through an internal redirect */
    bool redirect_keeps_head;       /* the next internal redirect keeps content_type and headers_out (set by
                                     * X-Accel-Redirect: the fields it carries over from the upstream) */
    bool error_page;                /* an error_page redirect happened (recursive_error_pages off: no more) */
    bool post_action;               /* the response is out: the location's post_action runs, its output dropped */
    int uri_changes;                /* rewrite cycles and internal redirects left (nginx's 11 → 500 at 0) */
    bool uri_changed;               /* set by a REWRITE handler: POST_REWRITE searches the location again */
    uint32_t _phase;                /* the phase engine's current step (http/phases.c) */
    const struct hy_phase_engine *_engine; /* borrowed from the generation's http{} conf */
    int err_status;                 /* error_page's status override of the final response (0: none) */
    int access_code;                /* satisfy any: the 401/403 an ACCESS handler gave, answered after the phase */
    int request_line_status;        /* non-zero: parse error to answer */
    const struct sockaddr_storage *peer; /* realip's client address (http/realip.c), NULL: the connection's peer;
                                          * read it through hy_req_peer / hy_req_peer_text */
    const char *peer_text;
    /* routing */
    hy_http_srv_conf_t *srv;
    hy_http_loc_conf_t *loc;
    hy_regex_caps_t captures;       /* $1..$9: the last regex match with groups (server_name, location, rewrite,
                                     * if, map), nginx's r->captures; use through hy_req_captures() */
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
    hy_array_t *resp_headers;       /* the final response head (hy_header_t), built once by hy_req_finalize_head
                                     * after the header filters; protocols serialise it, $sent_http_* read it */
    size_t resp_framing_ix;         /* where a protocol puts its framing fields (h1: Transfer-Encoding,
                                     * Connection, Keep-Alive), to keep nginx's header order: HY_RESP_FRAMING_SLOTS
                                     * empty entries (name.len 0) wait there; serialisers skip empty entries */
    hy_array_t *trailers;           /* trailer fields (hy_header_t) sent after the body, made once as the response ends
                                     * (hy_req_trailers); NULL until then or when none */
    bool expect_trailers;           /* a header filter will add trailers (add_trailer): the protocol frames the body so
                                     * they can follow it (h1: chunked, Content-Length dropped; h2: a last HEADERS) */
    bool trailers_made;             /* hy_req_trailers ran */
    bool accept_ranges;
    bool disable_not_modified;      /* the not_modified filter leaves the response alone (nginx: a proxied response
                                     * the cache does not store) */
    bool no_own_date, no_own_server; /* a proxied response passes the upstream's Date / Server (*_pass_header):
                                      * the server's own field is not added, even when the upstream sent none */
    bool header_only;               /* HEAD, 304, 204: no body on the wire */
    bool head_sent;
    bool finished;
    hy_outq_t body;                 /* segments not yet handed to the protocol */
    int64_t body_bytes_sent;        /* body bytes handed to the connection ($body_bytes_sent) */
    int64_t bytes_sent;             /* head + body bytes handed to the connection ($bytes_sent) */
    int64_t request_length;         /* head + body bytes read ($request_length) */
    int64_t limit_rate;             /* bytes/s for the response, 0: none ($limit_rate; http/limit_rate.c) */
    int64_t limit_rate_after;       /* bytes sent at full speed first (limit_rate_after) */
    bool limit_rate_set;            /* `set $limit_rate` decided: the location's limit_rate is not read */
    hy_str_t override_charset;      /* the upstream's X-Accel-Charset: the charset filter's destination (nginx) */
    hy_str_t request_line;          /* "GET / HTTP/1.1" as sent ($request) */
    uint64_t start_ms;              /* wall-clock ms when the first byte of the head was parsed ($request_time) */
    uint64_t conn_requests;         /* number of this request on its connection, from 1 ($connection_requests) */
    void **ctx;                     /* per-module request state, indexed by module index (NULL until used) */
    void *vars_cache;               /* the variable values computed so far (http/vars.c), NULL until one is read */
    bool logged, filters_started;
    bool pipelined;                 /* parsed from bytes that arrived with the previous request ($pipe) */
    struct hy_req_body *body_in;    /* the request body reader (http/body.h), NULL until a handler asks */
    hy_req_proceed_cb _proceed;     /* set by hy_req_send_more: called once when the protocol drained */
    int _filter_status;             /* set by hy_req_filter_finalize: hy_req_send answers with it instead */
    bool _filter_held;              /* a body filter streams the rest (hy_req_filter_hold): sends are not final */
    hy_defer_t _defer;
    /* subrequests (http/subrequest.h) */
    const hy_conn_ops_t *ops;       /* the response's sink: NULL → the connection's protocol (conn->ops); a
                                     * subrequest's own sink otherwise. Reach it through hy_req_ops() */
    hy_req_t *parent;               /* the request that waits for this subrequest (NULL: main or background) */
    struct hy_subreq *sr;           /* non-NULL for a subrequest (its state, owned by http/subrequest.c) */
    bool sr_output;                 /* a subrequest whose body goes to its parent (HY_SR_OUTPUT) */
    const char *request_id;         /* $request_id (32 hex digits) once made; a subrequest uses its parent's */
};

/** The request's capture record, ready for hy_regex_exec (its offsets are allocated from the request's arena).
 * Subjects matched into it must live as long as the request. */
static inline hy_regex_caps_t *hy_req_captures(hy_req_t *req)
{
    req->captures.pool = req->pool;
    return &req->captures;
}

/** The request's client address: the connection's peer, or the one realip put in its place ($remote_addr,
 * $binary_remote_addr, $remote_port, geo, allow/deny, limit keys and the error log's "client:" read it here). */
static inline const struct sockaddr_storage *hy_req_peer(const hy_req_t *req)
{
    return req->peer ? req->peer : &req->conn->sock.peer;
}
static inline const char *hy_req_peer_text(const hy_req_t *req)
{
    return req->peer_text ? req->peer_text : req->conn->peer_text;
}

/** Where this request's response goes (hy_conn_ops_t): the protocol's ops, or a subrequest's sink. Request-level
 * calls (send, abort, read_body, upgrade) go through this, never through req->conn->ops directly. */
static inline const hy_conn_ops_t *hy_req_ops(const hy_req_t *req)
{
    return req->ops ? req->ops : req->conn->ops;
}

/** Per-module request context slot (allocated on first use). */
void **hy_req_ctx(hy_req_t *req, const hy_module_t *m);

/** The charset a filter will name in the Content-Type of req's response with `content_type` ("" when none): set
 * by the charset filter when it is built in (a registration, so handlers need not include filters); NULL else.
 * A handler rendering text (autoindex) asks it beforehand. */
extern hy_str_t (*hy_http_charset_of)(hy_req_t *req, hy_str_t content_type);
/** Made by the headers filter (add_trailer) when it is built in: adds req's trailer fields with hy_req_add_trailer,
 * evaluated now (nginx evaluates them at the response's last buffer). NULL else. */
extern void (*hy_http_make_trailers)(hy_req_t *req);
/** The trailer fields to send after the body of a response with req->expect_trailers (hy_header_t, values made
 * safe): made once, on the first call, which a protocol makes as it writes the end of the response; NULL or empty
 * when there are none. Later calls (and $sent_trailer_*) read the same list. */
hy_array_t *hy_req_trailers(hy_req_t *req);
/** Add a trailer field (name and value must outlive the request: literals or pool memory). */
void hy_req_add_trailer(hy_req_t *req, hy_str_t name, hy_str_t value);
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
 * redirects apply first; 444, 408 and 499 close the connection without a response (as nginx's finalize does). */
void hy_req_error(hy_req_t *req, int status);
/** The built-in response for `status` (no error_page lookup): hayate's HTML page for 3xx-5xx. */
void hy_req_special_response(hy_req_t *req, int status);
/** msie_refresh: when it is on for the request's location, the client is MSIE and req->location is set, answer
 * 200 with nginx's refresh page to the location (no Location header) and return true; false: nothing sent. The
 * built-in 301/302 responses and every error_page redirect try it first (nginx). */
bool hy_req_msie_refresh(hy_req_t *req);
/** Split "uri?args" at the first '?' (args empty when none). */
void hy_req_split_args(hy_str_t in, hy_str_t *uri, hy_str_t *args);
/** "scheme://host[:port]" + path for a redirect, nginx's way: the Host (or the first server_name with
 * server_name_in_redirect, or the local address), the port unless it is the scheme's default (port_in_redirect).
 * The result lives in the request pool. */
hy_str_t hy_http_absolute_url(hy_req_t *req, hy_str_t path);
/** Build req->resp_headers from the response fields (nginx's order: Server, Date, Content-Type, Content-Length,
 * Last-Modified, Location, [framing], ETag, the add_header/handler extras, Accept-Ranges). hy_req_send calls it
 * once, after the header filters; a protocol then only adds its own framing fields (hy_req_insert_header).
 * Values are made safe here (control characters percent-encoded), so protocols copy them as they are. */
void hy_req_finalize_head(hy_req_t *req);
/** Put a field into the finalised head at position ix: into a reserved empty slot when ix is one, else inserted
 * (a protocol's framing fields). */
void hy_req_insert_header(hy_req_t *req, size_t ix, hy_str_t name, hy_str_t value);
/** The value of a field of the finalised head (case-insensitive; '_' in name matches '-'), or NULL. */
const hy_str_t *hy_req_sent_header(hy_req_t *req, hy_str_t name);
/** Remove a field from the finalised head (its entry becomes an empty one, which serialisers skip): a protocol's
 * framing decision, e.g. Content-Length dropped for a chunked response with trailers. */
void hy_req_unsend_header(hy_req_t *req, const char *name);
/** Whether the media type of the Content-Type value `ct` (what precedes any ';', trailing blanks dropped,
 * compared caselessly) is one of `types` (hy_str_t, lower-case; NULL: none), or is text/html when `text_html`
 * says that type always counts; `any` (a "*" in the list) accepts every type. An empty type matches nothing.
 * The *_types directives of gzip, sub_filter, ssi and addition. */
bool hy_http_type_listed(const hy_array_t *types, bool any, bool text_html, hy_str_t ct);
/** The value of a response field in req->headers_out (before the head is finalised; case-insensitive), or NULL. */
const hy_str_t *hy_req_out_header(hy_req_t *req, const char *name);
/** Remove every response field of that name from req->headers_out. */
void hy_req_del_header(hy_req_t *req, const char *name);
/** A filter that changes the body keeps a strong ETag only as a weak one (W/"..."); an ETag that is neither is
 * dropped (nginx's ngx_http_weak_etag). */
void hy_req_weaken_etag(hy_req_t *req);
/** A filter rewrites the body (sub_filter, ssi): its length is unknown now (Content-Length and Accept-Ranges
 * go, no ranges are offered); Last-Modified and ETag go too unless `keep_validators` (the *_last_modified
 * directives: then the ETag is weakened), as nginx's filters do. */
void hy_req_body_rewritten(hy_req_t *req, bool keep_validators);
/** Add a response header (name and value must outlive the request: literals or pool memory). */
void hy_req_add_header(hy_req_t *req, hy_str_t name, hy_str_t value);
/** Reason phrase for a status ("OK", "Not Found"...), or NULL for unknown codes. */
const char *hy_http_reason(int status);
/** Method token → enum hy_method. */
int hy_http_method_id(hy_str_t m);
/** One error-log line about the request: the formatted text, then nginx's context (", client: ..., server: ...,
 * request: ..., host: ..."), tagged with the connection's "*N". */
void hy_req_log(hy_req_t *req, int level, const char *fmt, ...) HY_PRINTF(3, 4);
/** Log line context like nginx's: ", client: X, server: Y, request: "...", host: "..."" into buf. */
size_t hy_req_log_ctx(hy_req_t *req, char *buf, size_t cap);

#endif
