/* subrequest.h — child requests of a request (nginx's ngx_http_subrequest, in its simple form): a request for
 * another URI (+args), run through the normal phases of the location that URI selects, whose response goes to
 * a sink instead of the client. Users: auth_request (http/auth_request.c), mirror (http/mirror.c), SSI and addition
 * (filters/ssi.c, filters/addition.c, through filters/splice.c).
 *
 * The contract:
 *   - A subrequest is an hy_req_t with its own arena (req->pool), its own module contexts (req->ctx) and its own
 *     response fields; it shares the parent's server (req->srv), request line, Host and header fields, and the
 *     connection's identity (req->conn: a shadow, see below); its method is GET (HY_SR_METHOD: the parent's).
 *     It starts at SERVER_REWRITE with is_internal set (so `internal` locations accept it) and the parent's
 *     remaining redirect budget. The ACCESS phase is skipped for subrequests (nginx); header filters run (so
 *     add_header reaches the parent), body filters do not (HY_SR_OUTPUT: see below); the LOG phase runs only with
 *     `log_subrequest on` (nginx), when the subrequest ends.
 *   - Its response goes to its own hy_conn_ops_t (req->ops; request-level code reaches it through hy_req_ops):
 *     `send` discards the body (counting $body_bytes_sent), a non-final send has its proceed called from the
 *     loop, a final one ends the subrequest; `abort` ends it too (sr->aborted); `read_body` delivers the body
 *     given at creation (HY_SR_BODY: the parent's buffered body), else an empty one. `upgrade` is NULL.
 *   - `done` is called once, from the loop (never inside hy_subrequest or a send), when the subrequest ended:
 *     its status (sr->status; 0 when it was aborted before answering), response fields (headers_out, ...) and
 *     its variables are still readable then; it is destroyed after `done` returns (its arena and everything in
 *     it, the upstream connection included).
 *   - HY_SR_WAITED (auth_request): the parent is waiting (its phase handler returned HY_AGAIN and `done`
 *     resumes it); req->parent is set. If the parent ends first (its arena is cleared: the client went away),
 *     the subrequest is destroyed without calling `done`.
 *   - Every subrequest runs on a shadow of the client connection (a malloc'd copy: same id, peer, addresses and
 *     generation — it holds its own reference — without the socket or the PROXY protocol header), so it can be
 *     torn down whatever the protocol did with the real connection.
 *   - HY_SR_OUTPUT (SSI's include, addition): the parent wants the body. The sink keeps what the subrequest sends
 *     in sr->out (memory segments copied, file segments referenced, so it outlives the subrequest's arena), for
 *     `done` to take (hy_outq_move); what is left there is released with the subrequest. The body filters of
 *     modules with `subrequest_body` set run on it (SSI: an included page is processed too), the others do not;
 *     the parent's conditional and Range fields are not passed on (the not_modified and range filters are for
 *     the main response only, as nginx's). Nothing bounds sr->out: a subrequest's body is held in memory until
 *     it ended (nginx's postpone filter holds it in memory too, when it is not the active request).
 *   - HY_SR_BACKGROUND (mirror): the subrequest is detached: it copies what it reads of the parent (header
 *     fields, request line, body) into its own arena, so the parent answers and the connection moves on without
 *     waiting; it ends on its own (its upstream's timeouts bound it). req->parent is NULL; `done` gets NULL.
 */
#ifndef HY_HTTP_SUBREQUEST_H
#define HY_HTTP_SUBREQUEST_H

#include "request.h"
#include "../conf/conf.h"

/* `log_subrequest on|off` (nginx's core directive): the LOG phase runs for subrequests too;
 * `subrequest_output_buffer_size` (see hy_subrequest_output_limit). */
extern hy_module_t hy_http_subrequest_module;

enum {
    HY_SR_WAITED = 0x1,     /* the parent waits for `done` */
    HY_SR_BACKGROUND = 0x2, /* detached: the parent does not wait */
    HY_SR_BODY = 0x4,       /* the subrequest gets the parent's (already read, buffered) body */
    HY_SR_METHOD = 0x8,     /* the parent's method (default: GET, as nginx) */
    HY_SR_OUTPUT = 0x10,    /* the body is kept for the parent (sr->out), see above */
};

/** Called once when sr ended (see above); parent is NULL for a background subrequest. */
typedef void (*hy_subreq_done_cb)(hy_req_t *parent, hy_req_t *sr, void *data);

typedef struct hy_subreq {
    hy_req_t *req;     /* the subrequest (in its own pool) */
    hy_req_t *parent;  /* HY_SR_WAITED: the waiting parent; NULL otherwise or once it is gone */
    hy_pool_t *pool;   /* owned */
    hy_conn_t *shadow; /* owned (background): the connection stand-in */
    hy_subreq_done_cb done;
    void *data;
    hy_str_t body; /* the body read_body delivers (the subrequest's pool, or the parent's while it waits) */
    size_t body_off;
    hy_outq_t out;  /* HY_SR_OUTPUT: the body sent so far */
    bool output;    /* HY_SR_OUTPUT */
    hy_defer_t done_defer, proceed_defer;
    bool ended, aborted, cancelled;
} hy_subreq_t;

/** Create and start a subrequest of `parent` for uri (absolute path, decoded) and args (may be empty), with flags
 * HY_SR_*. Returns the subrequest (it may already have answered: `done` still comes from the loop), or NULL when it
 * cannot be made (out of memory, HY_SR_BODY without a complete in-memory or file body). */
hy_req_t *hy_subrequest(hy_req_t *parent, hy_str_t uri, hy_str_t args, unsigned flags, hy_subreq_done_cb done,
                        void *data);
/** `subrequest_output_buffer_size` of the subrequest's location: how much of its body a parent keeps as a value
 * (SSI's `include ... set=`). */
size_t hy_subrequest_output_limit(const hy_req_t *sr);
/** True when req is a subrequest. */
static inline bool hy_req_is_subrequest(const hy_req_t *req)
{
    return req->sr != NULL;
}

#endif
