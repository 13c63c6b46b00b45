/* subrequest.c — child requests with their own response sink (see subrequest.h for the contract).
 *
 * Lifetimes: the hy_subreq_t is malloc'd, because the loop's defers cannot be cancelled: it is freed once the
 * subrequest is destroyed, no defer of it is queued and (waited) the parent's arena no longer points at it.
 * Every subrequest runs on a shadow of the client connection (a copy without the socket, holding its own
 * reference to the generation), so tearing it down never touches a connection the protocol may have freed. */
#include <stddef.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "subrequest.h"
#include "body.h"
#include "phases.h"
#include "../conf/cycle.h"
#include "../core/log.h"

hy_module_t hy_http_subrequest_module;

typedef struct sr_loc {
    int log_subrequest; /* log_subrequest on: the LOG phase runs for subrequests of this location */
    int64_t output_buffer_size; /* subrequest_output_buffer_size */
} sr_loc_t;

#define SR_POOL_SIZE 4096

static void sr_send(hy_req_t *req, bool is_final);
static void sr_abort(hy_req_t *req);
static void sr_read_body(hy_req_t *req);

static const hy_conn_ops_t sr_ops = {
    .name = "subrequest",
    .send = sr_send,
    .abort = sr_abort,
    .read_body = sr_read_body,
};

typedef struct sr_state {
    hy_subreq_t pub;
    bool alive;         /* the subrequest exists (its pool is not destroyed) */
    bool parent_linked; /* waited: the parent's arena has our cleanup */
    bool in_done;
} sr_state_t;

static void maybe_free(sr_state_t *s)
{
    if (!s->alive && !s->parent_linked && !s->pub.done_defer.linked && !s->pub.proceed_defer.linked)
        free(s);
}

static void destroy(sr_state_t *s)
{
    if (!s->alive)
        return;
    s->alive = false;
    hy_conn_t *shadow = s->pub.shadow;
    hy_pool_destroy(s->pub.pool); /* runs the subrequest's cleanups: its upstream goes with it */
    s->pub.pool = NULL;
    s->pub.req = NULL;
    hy_outq_clear(&s->pub.out);
    if (shadow) {
        hy_cycle_unref(shadow->cycle);
        free(shadow);
        s->pub.shadow = NULL;
    }
}

static hy_loop_t *loop_of(sr_state_t *s)
{
    return s->pub.shadow->sock.loop;
}

static void on_done(hy_defer_t *d)
{
    sr_state_t *s = d->data;
    hy_req_t *req = s->pub.req;
    if (s->alive && req->loc) {
        const sr_loc_t *lc = req->loc->loc_conf[hy_http_subrequest_module.index];
        if (lc && lc->log_subrequest == 1)
            hy_req_log_phase(req);
    }
    if (s->alive && !s->pub.cancelled) {
        s->in_done = true;
        if (s->pub.done)
            s->pub.done(s->pub.parent, s->pub.req, s->pub.data);
        s->in_done = false;
    }
    destroy(s);
    maybe_free(s);
}

static void on_proceed(hy_defer_t *d)
{
    sr_state_t *s = d->data;
    if (s->alive && !s->pub.ended)
        hy_req_proceed(s->pub.req);
    maybe_free(s);
}

static void end(sr_state_t *s)
{
    if (s->pub.ended)
        return;
    s->pub.ended = true;
    s->pub.req->finished = true;
    hy_defer(loop_of(s), &s->pub.done_defer);
}

/* HY_SR_OUTPUT: the body, made independent of the subrequest's arena and of its producers' buffers */
static void keep_output(hy_outq_t *out, hy_outq_t *body)
{
    for (hy_seg_t *g = body->head; g; g = g->next) {
        if (g->kind == HY_SEG_MEM && g->mem.len)
            hy_outq_push_copy(out, g->mem.ptr, g->mem.len);
        else if (g->kind == HY_SEG_FILE && g->file.len)
            hy_outq_push_file(out, g->file.file, g->file.off, g->file.len);
    }
}

static void sr_send(hy_req_t *req, bool is_final)
{
    sr_state_t *s = (sr_state_t *)req->sr;
    if (s->pub.ended)
        return;
    req->head_sent = true;
    req->body_bytes_sent += (int64_t)req->body.bytes;
    if (s->pub.output && !req->header_only)
        keep_output(&s->pub.out, &req->body);
    hy_outq_clear(&req->body);
    if (is_final)
        end(s);
    else
        hy_defer(loop_of(s), &s->pub.proceed_defer); /* the sink drained at once; proceed from the loop */
}

static void sr_abort(hy_req_t *req)
{
    sr_state_t *s = (sr_state_t *)req->sr;
    s->pub.aborted = true;
    if (!req->head_sent)
        req->status = 0;
    end(s);
}

static void sr_read_body(hy_req_t *req)
{
    sr_state_t *s = (sr_state_t *)req->sr;
    hy_str_t b = s->pub.body;
    size_t took = hy_req__body_in(req, b.ptr ? b.ptr + s->pub.body_off : "", b.len - s->pub.body_off, true);
    s->pub.body_off += took;
}

/* the parent's arena is cleared: a waited subrequest still running goes with it (no `done`) */
static void on_parent_clear(void *arg)
{
    sr_state_t *s = arg;
    s->parent_linked = false;
    s->pub.parent = NULL;
    s->pub.cancelled = true;
    if (!s->in_done)
        destroy(s);
    maybe_free(s);
}

static hy_str_t dup_str(hy_pool_t *p, hy_str_t v)
{
    if (v.ptr == NULL)
        return v;
    return (hy_str_t){hy_pstrndup(p, v.ptr, v.len), v.len};
}

static hy_conn_t *make_shadow(hy_conn_t *c, hy_pool_t *pool)
{
    hy_conn_t *sh = malloc(sizeof(*sh));
    if (sh == NULL)
        return NULL;
    *sh = *c;
    sh->ops = &sr_ops;
    sh->proto = sh; /* never NULL: "the client is gone" is told by the subrequest's own end */
    sh->pp = NULL;  /* the PROXY protocol header stays with the real connection */
    sh->is_idle = false;
    sh->_prev = sh->_next = sh->_idle_prev = sh->_idle_next = NULL;
    sh->scheme = dup_str(pool, c->scheme);
    sh->server_name = dup_str(pool, c->server_name);
    hy_loop_t *loop = c->sock.loop;
    memset(&sh->sock, 0, sizeof(sh->sock));
    sh->sock.loop = loop;
    hy_io_init(&sh->sock.io, -1, NULL, NULL);
    sh->sock.peer = c->sock.peer;
    sh->sock.peer_len = c->sock.peer_len;
    hy_sock_local_addr(&c->sock, NULL); /* cached in the copy, so $server_addr never asks a socket */
    sh->sock.local = c->sock.local;
    sh->sock.local_len = c->sock.local_len;
    sh->cycle->refs++;
    return sh;
}

/* background: the subrequest outlives the parent's arena, so it keeps copies of what it reads */
static void copy_request(hy_req_t *sr, const hy_req_t *p)
{
    hy_pool_t *pool = sr->pool;
    sr->method = dup_str(pool, sr->method);
    sr->target = dup_str(pool, p->target);
    sr->request_line = dup_str(pool, p->request_line);
    sr->host = dup_str(pool, p->host);
    sr->headers = p->num_headers ? hy_palloc(pool, sizeof(hy_header_t) * p->num_headers) : NULL;
    const hy_str_t **known[] = {&sr->h_connection,
                                &sr->h_if_modified_since,
                                &sr->h_if_unmodified_since,
                                &sr->h_if_none_match,
                                &sr->h_if_match,
                                &sr->h_range,
                                &sr->h_if_range,
                                &sr->h_expect,
                                &sr->h_user_agent};
    for (size_t i = 0; i < p->num_headers; i++) {
        sr->headers[i].name = dup_str(pool, p->headers[i].name);
        sr->headers[i].value = dup_str(pool, p->headers[i].value);
        for (size_t k = 0; k < HY_ARRAY_SIZE(known); k++)
            if (*known[k] == &p->headers[i].value)
                *known[k] = &sr->headers[i].value;
    }
    for (size_t k = 0; k < HY_ARRAY_SIZE(known); k++) /* one not among the fields (set by a protocol) */
        if (*known[k] && (*known[k] < &sr->headers[0].value || *known[k] > &sr->headers[p->num_headers].value)) {
            hy_str_t *v = hy_palloc(pool, sizeof(*v));
            *v = dup_str(pool, **known[k]);
            *known[k] = v;
        }
    if (p->peer) {
        struct sockaddr_storage *ss = hy_palloc(pool, sizeof(*ss));
        *ss = *p->peer;
        sr->peer = ss;
        sr->peer_text = hy_pstrndup(pool, p->peer_text, strlen(p->peer_text));
    }
}

/* the parent's body for HY_SR_BODY: in memory as it is (waited) or copied, or read back from its temp file */
static int take_body(sr_state_t *s, hy_req_t *parent, bool copy)
{
    hy_req_body_t *b = parent->body_in;
    if (b == NULL || b->failed || !b->complete || b->mode != HY_BODY_BUFFER)
        return b == NULL ? 0 : -1;
    if (b->fd < 0) {
        hy_str_t m = {b->mem, b->mem_len};
        s->pub.body = copy ? dup_str(s->pub.pool, m) : m;
        return 0;
    }
    size_t len = (size_t)b->received;
    char *buf = hy_palloc(s->pub.pool, len + 1);
    size_t off = 0;
    while (off < len) {
        ssize_t n = pread(b->fd, buf + off, len - off, (off_t)off);
        if (n <= 0)
            return -1;
        off += (size_t)n;
    }
    s->pub.body = (hy_str_t){buf, len};
    return 0;
}

hy_req_t *hy_subrequest(hy_req_t *parent, hy_str_t uri, hy_str_t args, unsigned flags, hy_subreq_done_cb done,
                        void *data)
{
    bool background = (flags & HY_SR_BACKGROUND) != 0;
    sr_state_t *s = calloc(1, sizeof(*s));
    if (s == NULL)
        return NULL;
    s->pub.pool = hy_pool_create(SR_POOL_SIZE);
    s->pub.done = done;
    s->pub.data = data;
    s->pub.done_defer = (hy_defer_t){.cb = on_done, .data = s};
    s->pub.proceed_defer = (hy_defer_t){.cb = on_proceed, .data = s};
    s->pub.shadow = make_shadow(parent->conn, s->pub.pool);
    if (s->pub.shadow == NULL) {
        hy_pool_destroy(s->pub.pool);
        free(s);
        return NULL;
    }
    s->alive = true;
    hy_pool_t *pool = s->pub.pool;
    hy_req_t *sr = hy_pcalloc(pool, sizeof(*sr));
    s->pub.req = sr;
    sr->pool = pool;
    sr->conn = s->pub.shadow;
    sr->ops = &sr_ops;
    sr->sr = &s->pub;
    sr->method = (flags & HY_SR_METHOD) ? parent->method : HY_STR("GET"); /* nginx: GET unless asked */
    sr->method_id = (flags & HY_SR_METHOD) ? parent->method_id : HY_M_GET;
    sr->version = parent->version;
    sr->target = parent->target;
    sr->request_line = parent->request_line;
    sr->host = parent->host;
    sr->headers = parent->headers;
    sr->num_headers = parent->num_headers;
    sr->h_connection = parent->h_connection;
    sr->h_if_modified_since = parent->h_if_modified_since;
    sr->h_if_unmodified_since = parent->h_if_unmodified_since;
    sr->h_if_none_match = parent->h_if_none_match;
    sr->h_if_match = parent->h_if_match;
    sr->h_range = parent->h_range;
    sr->h_if_range = parent->h_if_range;
    sr->h_expect = parent->h_expect;
    sr->h_user_agent = parent->h_user_agent;
    sr->peer = parent->peer;
    sr->peer_text = parent->peer_text;
    if (background)
        copy_request(sr, parent);
    if (flags & HY_SR_OUTPUT) { /* the main response's validators and range are not the included part's */
        s->pub.output = true;
        sr->sr_output = true;
        sr->h_if_modified_since = sr->h_if_unmodified_since = sr->h_if_none_match = sr->h_if_match = NULL;
        sr->h_range = sr->h_if_range = NULL;
    }
    sr->uri = dup_str(pool, uri);
    sr->args = dup_str(pool, args);
    sr->content_length = -1;
    sr->content_length_n = -1;
    sr->last_modified = -1;
    sr->keepalive = false;
    sr->is_internal = true;
    sr->uri_changes = parent->uri_changes > 0 ? parent->uri_changes : 1;
    sr->srv = parent->srv;
    sr->_engine = parent->_engine;
    sr->start_ms = parent->start_ms;
    sr->conn_requests = parent->conn_requests;
    if (flags & HY_SR_BODY) {
        if (take_body(s, parent, background) != 0) {
            destroy(s);
            free(s);
            return NULL;
        }
        sr->content_length = parent->content_length >= 0 ? (int64_t)s->pub.body.len : -1;
        sr->body_follows = parent->body_follows; /* HTTP/2 without content-length: the body is still there */
    }
    if (!background) {
        s->pub.parent = parent;
        sr->parent = parent;
        s->parent_linked = true;
        hy_pool_on_clear(parent->pool, on_parent_clear, s);
    }
    hy_http_phases_run(sr, HY_PHASE_SERVER_REWRITE);
    return sr;
}

size_t hy_subrequest_output_limit(const hy_req_t *sr)
{
    hy_http_loc_conf_t *l = sr->loc ? sr->loc : (sr->srv ? sr->srv->loc : NULL);
    const sr_loc_t *lc = l && l->loc_conf ? l->loc_conf[hy_http_subrequest_module.index] : NULL;
    return lc && lc->output_buffer_size != HY_UNSET ? (size_t)lc->output_buffer_size : 4096;
}

static void *create_loc(hy_conf_t *cf)
{
    sr_loc_t *c = hy_pcalloc(cf->pool, sizeof(*c));
    c->log_subrequest = HY_UNSET;
    c->output_buffer_size = HY_UNSET;
    return c;
}

static int merge_loc(hy_conf_t *cf, void *parent, void *child)
{
    (void)cf;
    sr_loc_t *p = parent, *c = child;
    hy_merge_value(c->log_subrequest, p->log_subrequest, 0);
    hy_merge_value(c->output_buffer_size, p->output_buffer_size, 4096); /* nginx: one memory page */
    return 0;
}

static const hy_directive_t sr_directives[] = {
    {.name = "log_subrequest",
     .ctx = HY_CTX_HTTP_ANY,
     .args = HY_ARGS_FLAG,
     .set = hy_slot_flag,
     .conf = HY_CONF_LOC,
     .offset = offsetof(sr_loc_t, log_subrequest)},
    {.name = "subrequest_output_buffer_size",
     .ctx = HY_CTX_HTTP_ANY,
     .args = HY_ARGS_1,
     .set = hy_slot_size,
     .conf = HY_CONF_LOC,
     .offset = offsetof(sr_loc_t, output_buffer_size)},
    {0},
};

hy_module_t hy_http_subrequest_module = {
    .name = "http_subrequest",
    .directives = sr_directives,
    .create_loc_conf = create_loc,
    .merge_loc_conf = merge_loc,
};
