/* upstream.c — the upstream engine (see upstream.h): body reading, peer choice and connection (or reuse), sending
 * the request, reading the response head, retries, and streaming the response body to the client with
 * backpressure. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/stat.h>
#include "upstream.h"
#include "../event/tls.h"
#include "../http/body.h"
#include "../http/core.h"
#include "../http/error_page.h"
#include "../http/phases.h"
#include "../http/vars.h"
#include "../core/clock.h"
#include "../core/file.h"
#include "../core/log.h"
#include "../http/resolver_conf.h"

#define BODY_AHEAD 65536 /* request body bytes queued toward the upstream before the client is read again */

static void try_next(hy_ureq_t *u);
static void on_up_read(hy_sock_t *s, const char *err);
static void send_request(hy_ureq_t *u);
static void pump_body(hy_ureq_t *u);

hy_ureq_t *hy_upstream_of(hy_req_t *req)
{
    return req->ctx ? *hy_req_ctx(req, &hy_http_upstream_module) : NULL;
}

int hy_upstream_field(char **pos, char *end, bool strict_value, hy_str_t *name, hy_str_t *value)
{
    char *q = *pos, *nl = memchr(q, '\n', (size_t)(end - q));
    if (nl == NULL)
        return -1;
    char *e = nl > q && nl[-1] == '\r' ? nl - 1 : nl;
    if (e == q)
        return 0;
    char *colon = memchr(q, ':', (size_t)(e - q));
    if (colon == NULL || colon == q)
        return -1;
    if (!hy_mem_visible(q, (size_t)(colon - q)))
        return -1;
    char *v = colon + 1, *ve = e;
    while (v < ve && (*v == ' ' || *v == '\t'))
        v++;
    while (ve > v && (ve[-1] == ' ' || ve[-1] == '\t'))
        ve--;
    if (strict_value && !hy_mem_no_ctl(v, (size_t)(ve - v)))
        return -1;
    *name = (hy_str_t){q, (size_t)(colon - q)};
    *value = (hy_str_t){v, (size_t)(ve - v)};
    *pos = nl + 1;
    return 1;
}

static const hy_str_t *field_in(const hy_array_t *fields, hy_str_t name)
{
    if (fields == NULL)
        return NULL;
    hy_header_t *h = fields->elts;
    for (size_t i = 0; i < fields->nelts; i++) {
        if (h[i].name.len != name.len)
            continue;
        size_t k = 0;
        for (; k < name.len; k++) {
            char a = h[i].name.ptr[k], b = name.ptr[k];
            if (b == '_')
                b = '-';
            if (a >= 'A' && a <= 'Z')
                a = (char)(a | 0x20);
            if (b >= 'A' && b <= 'Z')
                b = (char)(b | 0x20);
            if (a != b)
                break;
        }
        if (k == name.len)
            return &h[i].value;
    }
    return NULL;
}

const hy_str_t *hy_upstream_header(hy_ureq_t *u, hy_str_t name)
{
    return u ? field_in(u->headers_in, name) : NULL;
}

const hy_str_t *hy_upstream_trailer(hy_ureq_t *u, hy_str_t name)
{
    return u ? field_in(u->trailers_in, name) : NULL;
}

static hy_upstream_log_t *cur_log(hy_ureq_t *u)
{
    return u->log->nelts ? (hy_upstream_log_t *)u->log->elts + u->log->nelts - 1 : NULL;
}

static bool client_gone(hy_ureq_t *u)
{
    return u->req->conn->proto == NULL || u->req->finished;
}

static hy_loop_t *loop_of(hy_ureq_t *u)
{
    return u->req->conn->sock.loop;
}

static void timer_set(hy_ureq_t *u, int64_t ms)
{
    hy_timer_unlink(loop_of(u), &u->timer);
    if (ms > 0)
        hy_timer_link(loop_of(u), &u->timer, (uint64_t)ms);
}

/* Close (failed or unusable) or park (reusable) the current connection, and settle the peer's accounting. */
static void release_conn(hy_ureq_t *u, bool keep)
{
    hy_upstream_conn_t *c = u->conn;
    if (c == NULL)
        return;
    u->conn = NULL;
    hy_upstream_log_t *l = cur_log(u);
    if (l) {
        l->bytes_received = c->sock.bytes_in;
        l->bytes_sent = c->sock.bytes_out;
    }
    if (u->peer) {
        hy_upstream_peer_conns_add(u->peer, -1);
        u->peer->lt_busy_ms -= u->try_start_ms;
    }
    c->sock.bytes_in = c->sock.bytes_out = 0;
    hy_sock_read_stop(&c->sock);
    c->sock.on_write = NULL;
    /* an answer that came before the request was sent whole (a streamed body cut short, bytes still queued):
     * the peer would read what follows as the rest of this body, not reused (nginx: request_body_sent) */
    if (keep && (!hy_outq_empty(&c->sock.outq) || (u->body_streamed && !u->body_last_framed)))
        keep = false;
    if (keep)
        hy_upstream_pool_put(c);
    else if (u->body_done) /* the response is whole (only then is a connection released with body_done set) */
        hy_upstream_conn_end(c);
    else
        hy_upstream_conn_close(c);
}

static void cleanup(void *arg)
{
    hy_ureq_t *u = arg;
    hy_timer_unlink(hy_worker_loop, &u->timer);
    hy_timer_unlink(hy_worker_loop, &u->rate_timer);
    hy_resolve_cancel(u->resolving);
    u->resolving = NULL;
    release_conn(u, false);
    hy_upstream__store_drop(u);
    hy_outq_clear(&u->ahead);
    hy_outq_clear(&u->towrite);
    if (u->temp) {
        hy_file_unref(u->temp);
        u->temp = NULL;
    }
    u->finished = true;
}

static void log_error(hy_ureq_t *u, int level, const char *what, int err, const char *phase)
{
    hy_str_t addr = u->peer ? u->peer->name : HY_STR("");
    if (err)
        hy_req_log(u->req, level, "%s (%d: %s) while %s, upstream: \"%.*s\"", what, err, strerror(err), phase,
                   (int)addr.len, addr.ptr);
    else
        hy_req_log(u->req, level, "%s while %s, upstream: \"%.*s\"", what, phase, (int)addr.len, addr.ptr);
}

void hy_upstream_log_error(hy_ureq_t *u, int level, const char *what, const char *phase)
{
    log_error(u, level, what, 0, phase);
}

static bool idempotent(hy_ureq_t *u)
{
    return !(hy_str_eq(u->req->method, "POST") || hy_str_eq(u->req->method, "LOCK") ||
             hy_str_eq(u->req->method, "PATCH"));
}

static int max_tries(hy_ureq_t *u)
{
    int t = 0; /* peers marked down do not count (nginx) */
    for (size_t i = 0; i < u->group->npeers; i++)
        t += !u->group->peers[i].down;
    if (u->next_upstream_tries > 0 && u->next_upstream_tries < t)
        t = (int)u->next_upstream_tries;
    return t;
}

/* A try failed (ft: HY_UPS_FT_*): retry when next_upstream allows it, else answer status. */
static void try_failed(hy_ureq_t *u, int ft, int status)
{
    hy_upstream_log_t *l = cur_log(u);
    if (l && l->status == 0)
        l->status = status;
    if (l && l->response_ms < 0)
        l->response_ms = (int64_t)(hy_clock_now_ms() - u->try_start_ms);
    bool reused_race = u->reused && !u->head_seen && (ft == HY_UPS_FT_ERROR) && (idempotent(u) || !u->body_sent_any);
    bool sent = u->conn != NULL && u->conn->sock.bytes_out > 0;
    release_conn(u, false);
    if (client_gone(u))
        return;
    if (reused_race && !u->body_sent_any) {
        /* the keep-alive race: the backend closed an idle connection as we reused it; a fresh connection to
         * the same peer, not counted as a try and not as the peer's failure */
        u->reused = false;
        u->state = HY_UREQ_CONNECT;
        u->force_fresh = true;
        try_next(u);
        return;
    }
    if (reused_race) { /* idempotent, body already consumed but buffered: resend on a fresh connection */
        u->reused = false;
        u->force_fresh = true;
        try_next(u);
        return;
    }
    if (u->peer && ft != HY_UPS_FT_403 && ft != HY_UPS_FT_404)
        hy_upstream_peer_free(u->group, u->peer, true);
    if (u->peer)
        hy_upstream_metrics_try(u->group, u->peer, ft != HY_UPS_FT_403 && ft != HY_UPS_FT_404, l ? l->response_ms : 0);
    uint64_t now = hy_clock_now_ms();
    bool can = (u->next_upstream & ft) && u->tries < max_tries(u) &&
               (u->next_upstream_timeout_ms == 0 || now - u->start_ms < (uint64_t)u->next_upstream_timeout_ms) &&
               (!sent || idempotent(u) || (u->next_upstream & HY_UPS_FT_NON_IDEMPOTENT)) &&
               (!u->body_sent_any || !u->body_streamed);
    if (can) {
        u->peer = NULL;
        try_next(u);
        return;
    }
    u->state = HY_UREQ_DONE;
    hy_timer_unlink(loop_of(u), &u->timer);
    if (u->cache != NULL && hy_ucache_failed(u, ft)) /* *_cache_use_stale */
        return;
    hy_req_error(u->req, status);
}

/* ---------------------------------------------------------------- connect */

/* The TLS handshake with the upstream ended (hy_ussl_connect started it, bounded by the connect timeout). */
static void on_handshake(hy_sock_t *s, const char *err)
{
    hy_ureq_t *u = s->data;
    if (err == hy_err_timeout) {
        log_error(u, HY_LOG_ERR, "upstream timed out", ETIMEDOUT, "SSL handshaking to upstream");
        try_failed(u, HY_UPS_FT_TIMEOUT, 504);
        return;
    }
    if (err != NULL) {
        const char *why = hy_tls_handshake_error(s);
        char what[300];
        if (*why)
            snprintf(what, sizeof(what), "SSL_do_handshake() failed (SSL: %s)", why);
        else
            snprintf(what, sizeof(what), "peer closed connection in SSL handshake");
        log_error(u, HY_LOG_ERR, what, 0, "SSL handshaking to upstream");
        try_failed(u, HY_UPS_FT_ERROR, 502);
        return;
    }
    const char *bad = hy_ussl_check(u);
    if (bad != NULL) {
        log_error(u, HY_LOG_ERR, bad, 0, "SSL handshaking to upstream");
        try_failed(u, HY_UPS_FT_ERROR, 502);
        return;
    }
    if (client_gone(u)) {
        release_conn(u, false);
        return;
    }
    send_request(u);
}

static void on_connected(hy_sock_t *s, const char *err)
{
    hy_ureq_t *u = s->data;
    hy_upstream_log_t *l = cur_log(u);
    if (err != NULL) {
        if (err == hy_err_timeout) {
            log_error(u, HY_LOG_ERR, "upstream timed out", ETIMEDOUT, "connecting to upstream");
            try_failed(u, HY_UPS_FT_TIMEOUT, 504);
        } else {
            log_error(u, HY_LOG_ERR, "connect() failed", s->last_errno, "connecting to upstream");
            try_failed(u, HY_UPS_FT_ERROR, 502);
        }
        return;
    }
    l->connect_ms = (int64_t)(hy_clock_now_ms() - u->try_start_ms);
    if (client_gone(u)) {
        release_conn(u, false);
        return;
    }
    if (u->ssl != NULL) {
        const char *bad = hy_ussl_connect(u, on_handshake);
        if (bad != NULL) { /* our side could not set the connection up (a certificate that does not load ...): 500,
                            * not a failure of the peer, no retry (nginx) */
            log_error(u, HY_LOG_ERR, bad, 0, "SSL handshaking to upstream");
            if (l->status == 0)
                l->status = 500;
            release_conn(u, false);
            u->state = HY_UREQ_DONE;
            hy_timer_unlink(loop_of(u), &u->timer);
            hy_req_error(u->req, 500);
        }
        return;
    }
    send_request(u);
}

/* proxy_ignore_client_abort off: the client closed while the upstream answers (nginx's check for a broken
 * connection): the upstream connection is closed and the request ends; 499 when nothing was sent yet. */
static void on_client_close(hy_req_t *req)
{
    hy_ureq_t *u = hy_upstream_of(req);
    if (u == NULL || u->finished || u->state == HY_UREQ_DONE || u->state == HY_UREQ_TUNNEL)
        return;
    u->client_closed = true;
    hy_req_log(req, HY_LOG_INFO, "client prematurely closed connection, so upstream connection is closed too");
    hy_resolve_cancel(u->resolving); /* closed while the name was being resolved */
    u->resolving = NULL;
    hy_upstream_log_t *l = cur_log(u);
    if (l && l->response_ms < 0)
        l->response_ms = (int64_t)(hy_clock_now_ms() - u->try_start_ms);
    release_conn(u, false);
    u->state = HY_UREQ_DONE;
    hy_timer_unlink(loop_of(u), &u->timer);
    hy_timer_unlink(loop_of(u), &u->rate_timer);
    if (!req->head_sent)
        req->status = 499;
    req->keepalive = false;
    hy_req_ops(req)->abort(req);
}

static void try_next(hy_ureq_t *u)
{
    hy_req_t *req = u->req;
    if (!u->ignore_client_abort && hy_req_ops(req)->watch_close)
        hy_req_ops(req)->watch_close(req, on_client_close);
    if (u->codec->reinit)
        u->codec->reinit(u);
    u->head_seen = u->head_is_whole = false;
    u->headers_in = NULL;
    u->trailers_in = NULL;
    u->status = 0;
    if (!u->force_fresh || u->peer == NULL) {
        u->peer = hy_upstream_peer_get(u->group, req, u->tried);
        if (u->peer == NULL) {
            hy_req_log(req, HY_LOG_ERR, "no live upstreams while connecting to upstream, upstream: \"%.*s\"",
                       (int)u->group->name.len, u->group->name.ptr);
            hy_upstream_log_t *l = hy_array_push(u->log);
            l->addr = u->group->name;
            l->status = 502;
            l->connect_ms = l->header_ms = l->response_ms = -1;
            l->response_length = -1;
            u->state = HY_UREQ_DONE;
            hy_req_error(req, 502);
            return;
        }
        u->tries++;
    }
    bool fresh = u->force_fresh;
    u->force_fresh = false;
    u->try_start_ms = hy_clock_now_ms();
    hy_upstream_log_t *l = hy_array_push(u->log);
    l->addr = u->peer->name;
    l->connect_ms = l->header_ms = l->response_ms = -1;
    l->response_length = -1;
    hy_upstream_peer_conns_add(u->peer, 1);
    u->peer->lt_busy_ms += u->try_start_ms;
    const void *tls_key = hy_ussl_key(u->ssl);
    /* An idempotent request that meets a connection the backend has just closed is retried on a fresh one
     * (try_failed: the keep-alive race), so only the others pay for the peek that finds such a close first. */
    const void *proto = u->codec->conn_state ? u->codec : NULL;
    hy_upstream_conn_t *c = fresh ? NULL : hy_upstream_pool_get(u->group, u->peer, tls_key, proto, !idempotent(u));
    if (c != NULL) {
        u->conn = c;
        u->reused = true;
        c->sock.data = u;
        l->connect_ms = 0;
        send_request(u);
        return;
    }
    u->reused = false;
    c = hy_calloc(sizeof(*c));
    c->group = u->group;
    c->peer = u->peer;
    c->created_ms = hy_clock_now_ms();
    c->tls_key = tls_key;
    c->proto = proto;
    u->conn = c;
    u->state = HY_UREQ_CONNECT;
    bool bind = u->bind_len && u->bind.ss_family == u->peer->sa.ss_family;
    int rc = hy_sock_connect_from(&c->sock, loop_of(u), (const struct sockaddr *)&u->peer->sa, u->peer->salen,
                                  bind ? (const struct sockaddr *)&u->bind : NULL, bind ? u->bind_len : 0,
                                  (uint64_t)u->connect_timeout_ms, on_connected);
    c->sock.data = u;
    if (rc < 0) {
        free(c);
        u->conn = NULL;
        log_error(u, bind ? HY_LOG_CRIT : HY_LOG_ALERT, bind ? "bind() failed" : "socket() failed", -rc,
                  "connecting to upstream");
        try_failed(u, HY_UPS_FT_ERROR, 502);
        return;
    }
    if (u->socket_keepalive && u->peer->sa.ss_family != AF_UNIX) {
        int one = 1;
        setsockopt(c->sock.io.fd, SOL_SOCKET, SO_KEEPALIVE, &one, sizeof(one));
    }
}

/* ---------------------------------------------------------------- run-time resolution */

int hy_upstream_resolve_later(hy_ureq_t *u, hy_str_t host, uint16_t port)
{
    const hy_http_resolver_conf_t *rc = hy_http_resolver_loc(u->req->loc->loc_conf);
    if (rc == NULL || rc->resolver == NULL) {
        hy_req_log(u->req, HY_LOG_ERR, "no resolver defined to resolve %.*s", (int)host.len, host.ptr);
        return 502;
    }
    u->resolve_host = host;
    u->resolve_port = port;
    return 0;
}

static void on_resolved(void *data, const hy_resolve_result_t *res)
{
    hy_ureq_t *u = data;
    u->resolving = NULL;
    if (client_gone(u))
        return;
    if (res->status != 0) {
        hy_req_log(u->req, HY_LOG_ERR, "%.*s could not be resolved (%d: %s)", (int)u->resolve_host.len,
                   u->resolve_host.ptr, res->status, hy_resolve_strerror(res->status));
        u->state = HY_UREQ_DONE;
        hy_req_error(u->req, 502);
        return;
    }
    u->group = hy_upstream_group_of_addrs(u->req->pool, u->resolve_host, res->addrs, res->naddrs, u->resolve_port);
    try_next(u);
}

/* The first try: after resolving the host when the group is not known yet. */
static void first_try(hy_ureq_t *u)
{
    if (u->prepare != NULL) {
        int (*prepare)(hy_ureq_t *) = u->prepare;
        u->prepare = NULL; /* once */
        if (prepare(u) != 0) {
            u->state = HY_UREQ_DONE;
            hy_req_error(u->req, 500);
            return;
        }
    }
    if (u->group != NULL) {
        try_next(u);
        return;
    }
    hy_req_t *req = u->req;
    if (!u->ignore_client_abort && hy_req_ops(req)->watch_close) /* a client gone while we wait: 499 at once */
        hy_req_ops(req)->watch_close(req, on_client_close);
    const hy_http_resolver_conf_t *rc = hy_http_resolver_loc(u->req->loc->loc_conf);
    u->resolving = hy_resolve_start(loop_of(u), rc->resolver, u->resolve_host.ptr, u->resolve_host.len,
                                    rc->timeout_ms, on_resolved, u);
}

/* ---------------------------------------------------------------- send */

static void file_free(hy_file_t *f)
{
    free(f); /* the body reader owns the fd */
}

static void on_sent(hy_sock_t *s, const char *err)
{
    hy_ureq_t *u = s->data;
    if (err != NULL) {
        log_error(u, HY_LOG_ERR, "writev() failed", s->last_errno ? s->last_errno : EPIPE,
                  "sending request to upstream");
        try_failed(u, HY_UPS_FT_ERROR, 502);
        return;
    }
    if (u->state != HY_UREQ_SEND)
        return;
    if (u->body_streamed && !u->body_last_framed) {
        timer_set(u, u->send_timeout_ms);
        pump_body(u);
        return;
    }
    u->state = HY_UREQ_HEAD;
    timer_set(u, u->read_timeout_ms);
}

static void flush(hy_ureq_t *u)
{
    hy_sock_t *s = &u->conn->sock;
    timer_set(u, u->send_timeout_ms);
    hy_sock_write(s, on_sent);
}

/* Streaming: move what the client sent so far toward the upstream (bounded), frame the end once it came. Bytes
 * are taken only inside the body reader's callback; outside it, a resume has the protocol offer them again. */
static void pump_body(hy_ureq_t *u)
{
    hy_req_body_t *b = u->req->body_in;
    if (u->conn == NULL || u->state != HY_UREQ_SEND || b == NULL || u->pumping)
        return;
    hy_outq_t *out = &u->conn->sock.outq;
    size_t queued = out->bytes + (u->codec->pending ? u->codec->pending(u) : 0);
    if (!u->in_body_cb) {
        if (!b->complete && queued < BODY_AHEAD)
            hy_req_body_resume(u->req);
        return;
    }
    u->pumping = true;
    if (b->data_len > 0 && queued < BODY_AHEAD) {
        u->codec->frame_body(u, out, b->data, b->data_len, false);
        u->body_sent_any = true;
        hy_req_body_consume(u->req, b->data_len);
    }
    if (b->complete && b->data_len == 0 && !u->body_last_framed) {
        u->codec->frame_body(u, out, NULL, 0, true);
        u->body_last_framed = true;
    }
    u->pumping = false;
    if (!hy_outq_empty(out))
        hy_sock_write(&u->conn->sock, on_sent);
    else if (u->body_last_framed)
        on_sent(&u->conn->sock, NULL);
}

/* A write error is left to the read side (it may fire inside the codec's hooks, where the connection must stay). */
static void on_codec_sent(hy_sock_t *s, const char *err)
{
    hy_ureq_t *u = s->data;
    if (err == NULL && u != NULL && u->conn != NULL && &u->conn->sock == s && u->state == HY_UREQ_SEND)
        on_sent(s, NULL);
}

void hy_upstream_codec_flush(hy_ureq_t *u)
{
    if (u->conn == NULL || hy_outq_empty(&u->conn->sock.outq))
        return;
    hy_sock_write(&u->conn->sock, on_codec_sent);
}

static void send_request(hy_ureq_t *u)
{
    hy_upstream_conn_t *c = u->conn;
    hy_req_t *req = u->req;
    c->requests++;
    c->sock.read_limit = (size_t)(u->buffer_size > 0 ? u->buffer_size : 4096) + 65536;
    u->state = HY_UREQ_SEND;
    if (u->codec->create_request(u, &c->sock.outq) != 0) {
        release_conn(u, false);
        hy_req_error(req, 500);
        return;
    }
    hy_req_body_t *b = req->body_in;
    if (u->set_body.ptr != NULL) {
        u->codec->frame_body(u, &c->sock.outq, u->set_body.ptr, u->set_body.len, true);
    } else if (u->body_streamed) {
        u->body_last_framed = false;
    } else if (b != NULL && u->body_length != HY_UREQ_BODY_NONE) {
        if (b->fd >= 0) {
            struct stat stt;
            hy_file_t *f = hy_calloc(sizeof(*f));
            f->fd = b->fd;
            f->refs = 1;
            f->size = fstat(b->fd, &stt) == 0 ? stt.st_size : 0;
            f->on_free = file_free;
            if (u->codec->frame_file)
                u->codec->frame_file(u, &c->sock.outq, f, f->size);
            else
                hy_outq_push_file(&c->sock.outq, f, 0, f->size);
            hy_file_unref(f);
        } else if (b->mem_len) {
            u->codec->frame_body(u, &c->sock.outq, b->mem, b->mem_len, false);
        }
        u->codec->frame_body(u, &c->sock.outq, NULL, 0, true);
        u->body_sent_any = b->mem_len > 0 || b->fd >= 0;
    }
    hy_sock_read_start(&c->sock, on_up_read);
    if (u->body_streamed) {
        timer_set(u, u->send_timeout_ms);
        hy_sock_write(&c->sock, on_sent); /* the head; then the body as the client sends it */
        return;
    }
    flush(u);
}

/* ---------------------------------------------------------------- response */

static void on_client_drained(hy_req_t *req);

/* ---- the read-ahead: memory up to proxy_buffers, then the temp file (nginx's event pipe, simplified: what does
 * not fit the memory buffers while the client is busy is gathered in `towrite` and written to the file in
 * proxy_temp_file_write_size pieces; the client gets the memory part, then the file's regions by sendfile). */

static bool may_spill(const hy_ureq_t *u)
{
    return u->buffering && u->max_temp_file_size > 0 && !u->temp_failed && u->temp_size < u->max_temp_file_size;
}

/* What `towrite` holds goes to the client's queue: as memory (the client is ready, the body ended, or the file
 * failed). */
static void towrite_to_memory(hy_ureq_t *u)
{
    u->ahead_mem += u->towrite.bytes;
    hy_outq_move(&u->ahead, &u->towrite);
}

/* Write `towrite` to the temp file (created on the first write and unlinked at once: the space is freed with the
 * last descriptor, as nginx does) and queue that region of the file for the client. */
static void spill_flush(hy_ureq_t *u)
{
    if (hy_outq_empty(&u->towrite))
        return;
    if (u->temp == NULL && !u->temp_failed) {
        char *path = NULL;
        int fd = hy_req_temp_open(u->req, u->temp_path, u->temp_levels, &path);
        if (fd < 0) {
            u->temp_failed = true;
        } else {
            unlink(path);
            u->temp = hy_calloc(sizeof(*u->temp));
            u->temp->fd = fd;
            u->temp->refs = 1;
            hy_str_t addr = u->peer ? u->peer->name : HY_STR("");
            hy_req_log(u->req, HY_LOG_WARN,
                       "an upstream response is buffered to a temporary file %s while reading upstream, upstream: "
                       "\"%.*s\"",
                       path, (int)addr.len, addr.ptr);
        }
    }
    if (u->temp_failed) {
        towrite_to_memory(u);
        return;
    }
    int64_t start = u->temp_size;
    size_t n = u->towrite.bytes;
    for (hy_seg_t *g = u->towrite.head; g; g = g->next) {
        if (g->kind == HY_SEG_MEM && hy_write_all(u->temp->fd, g->mem.ptr, g->mem.len))
            continue;
        hy_req_log(u->req, HY_LOG_CRIT, "write() to temp file failed (%d: %s)", errno, strerror(errno));
        u->temp_failed = true; /* what was written past start is never queued; the file takes no more */
        towrite_to_memory(u);
        return;
    }
    u->temp_size += (int64_t)n;
    u->temp->size = u->temp_size;
    hy_outq_clear(&u->towrite);
    hy_outq_push_file(&u->ahead, u->temp, start, (int64_t)n);
}

/* Newly decoded body bytes: to memory while the buffers have room (or the client takes them now), else toward the
 * temp file. */
static void stash(hy_ureq_t *u, hy_outq_t *fresh)
{
    if (hy_outq_empty(fresh))
        return;
    if (u->store)
        hy_upstream__store_write(u, fresh);
    if (!hy_outq_empty(&u->towrite) ||
        (u->client_waiting && may_spill(u) && u->ahead_mem + fresh->bytes > (size_t)u->buffers_total)) {
        hy_outq_move(&u->towrite, fresh);
        if ((int64_t)u->towrite.bytes >= u->temp_file_write_size)
            spill_flush(u);
        return;
    }
    u->ahead_mem += fresh->bytes;
    hy_outq_move(&u->ahead, fresh);
}

static void fail_deliver(hy_ureq_t *u);

static void finish_client(hy_ureq_t *u)
{
    u->state = HY_UREQ_DONE;
    hy_timer_unlink(loop_of(u), &u->timer);
    hy_req_send(u->req, true);
}

/* Hand what was decoded to the client when it is not busy; finish when all is there. */
static void deliver(hy_ureq_t *u)
{
    if (u->client_waiting || client_gone(u))
        return;
    towrite_to_memory(u); /* the client is ready: no need for the file */
    if (!hy_outq_empty(&u->ahead)) {
        hy_outq_move(&u->req->body, &u->ahead);
        u->ahead_mem = 0;
        if (u->body_done) {
            finish_client(u);
            return;
        }
        u->client_waiting = true;
        hy_req_send_more(u->req, on_client_drained);
        return;
    }
    if (u->body_done)
        finish_client(u);
}

static void on_client_drained(hy_req_t *req)
{
    hy_ureq_t *u = hy_upstream_of(req);
    if (u == NULL || u->finished)
        return;
    u->client_waiting = false;
    if (client_gone(u)) {
        release_conn(u, false);
        return;
    }
    if (u->body_error) {
        fail_deliver(u);
        return;
    }
    if (u->conn && !u->body_done && !u->conn->sock.is_reading) {
        hy_sock_read_start(&u->conn->sock, on_up_read);
        hy_sock_read_now(&u->conn->sock);
        if (u->finished)
            return;
    }
    deliver(u);
}

static void on_failed_drained(hy_req_t *req);

static void body_failed(hy_ureq_t *u, const char *what)
{
    log_error(u, HY_LOG_ERR, what, 0, "reading upstream");
    hy_upstream_log_t *l = cur_log(u);
    if (l)
        l->response_ms = (int64_t)(hy_clock_now_ms() - u->try_start_ms);
    if (u->peer) /* a try, not a failure of the peer (nginx frees it as not failed) */
        hy_upstream_metrics_try(u->group, u->peer, false, l ? l->response_ms : 0);
    release_conn(u, false);
    u->state = HY_UREQ_DONE;
    hy_timer_unlink(loop_of(u), &u->timer);
    towrite_to_memory(u);
    u->req->keepalive = false;
    u->body_error = true;
    if (u->client_waiting && !client_gone(u))
        return; /* a slow client: the send in flight drains first, then on_client_drained hands over the rest */
    fail_deliver(u);
}

/* After a failed body, as nginx: the client gets the head and all that came of the body (in memory or in the temp
 * file), then the connection is aborted (HTTP/1: closed without a last chunk; HTTP/2: the stream reset). */
static void fail_deliver(hy_ureq_t *u)
{
    hy_outq_move(&u->req->body, &u->ahead);
    u->ahead_mem = 0;
    if (!client_gone(u) && (!u->req->head_sent || !hy_outq_empty(&u->req->body))) {
        u->client_waiting = true;
        hy_req_send_more(u->req, on_failed_drained);
        return;
    }
    if (hy_req_ops(u->req)->abort)
        hy_req_ops(u->req)->abort(u->req);
}

static void on_failed_drained(hy_req_t *req)
{
    hy_ureq_t *u = hy_upstream_of(req);
    if (u == NULL || u->finished || req->finished)
        return;
    u->client_waiting = false;
    if (hy_req_ops(req)->abort)
        hy_req_ops(req)->abort(req);
}

static void read_body(hy_ureq_t *u, bool eof);

static void on_rate_timer(hy_timer_t *t)
{
    hy_ureq_t *u = t->data;
    if (u->conn == NULL || u->body_done || u->client_waiting || client_gone(u))
        return;
    if (u->conn->sock.input.len) {
        read_body(u, u->conn->sock.is_eof);
        if (u->conn == NULL || u->body_done || u->conn->sock.is_reading || hy_timer_is_linked(&u->rate_timer))
            return;
    }
    hy_sock_read_start(&u->conn->sock, on_up_read);
    hy_sock_read_now(&u->conn->sock);
}

/* proxy_limit_rate: decode no more of the input than the rate allows since the body began; the rest waits in the
 * input (reading stopped) until a timer lets more through. Returns true when it handled this read. */
static bool limited_body(hy_ureq_t *u, bool eof)
{
    hy_sock_t *s = &u->conn->sock;
    uint64_t now = hy_clock_now_ms();
    int64_t allowed =
        (int64_t)((now - u->body_start_ms) * (uint64_t)u->limit_rate / 1000) + u->limit_rate / 10 - (int64_t)u->paced;
    if (allowed >= (int64_t)s->input.len)
        return false;
    if (allowed > 0) {
        hy_buf_t tmp = {0};
        size_t avail;
        char *p = hy_buf_reserve(&tmp, (size_t)allowed, (size_t)allowed + HY_BUF_BLOCK, &avail);
        memcpy(p, hy_buf_data(&s->input), (size_t)allowed);
        hy_buf_commit(&tmp, (size_t)allowed);
        bool done = false;
        hy_outq_t fresh = {0};
        int rc = u->codec->process_body(u, &tmp, false, &fresh, &done);
        size_t used = (size_t)allowed - tmp.len;
        hy_buf_release(&tmp);
        u->resp_bytes += (int64_t)fresh.bytes;
        if (u->cache != NULL)
            hy_ucache_tee(u, &fresh);
        stash(u, &fresh);
        if (rc != 0) {
            body_failed(u, rc == -2 ? "upstream sent invalid chunked response" : "upstream sent invalid body");
            return true;
        }
        hy_buf_consume(&s->input, used);
        u->paced += used;
        if (done) { /* the rest of the input is not part of the body: let the normal path finish */
            (void)eof;
            return false;
        }
    }
    hy_sock_read_stop(s);
    u->rate_timer.cb = on_rate_timer;
    u->rate_timer.data = u;
    hy_timer_link(loop_of(u), &u->rate_timer, 100);
    timer_set(u, u->read_timeout_ms);
    deliver(u);
    return true;
}

static void read_body(hy_ureq_t *u, bool eof)
{
    hy_sock_t *s = &u->conn->sock;
    bool done = false;
    if (u->limit_rate > 0 && limited_body(u, eof))
        return;
    u->paced += s->input.len; /* limit_rate: all of it goes through now */
    hy_outq_t fresh = {0};
    int rc = u->codec->process_body(u, &s->input, eof, &fresh, &done);
    u->resp_bytes += (int64_t)fresh.bytes;
    if (u->cache != NULL)
        hy_ucache_tee(u, &fresh);
    stash(u, &fresh);
    if (rc != 0) {
        body_failed(u, rc == -2 ? "upstream sent invalid chunked response" : "upstream prematurely closed connection");
        return;
    }
    if (done) {
        u->body_done = true;
        if (u->pass_trailers && u->trailers_in) { /* sent if the response is framed for them */
            hy_header_t *t = u->trailers_in->elts;
            for (size_t i = 0; i < u->trailers_in->nelts; i++)
                hy_req_add_trailer(u->req, t[i].name, t[i].value);
        }
        towrite_to_memory(u); /* less than one write's worth: the client gets it from memory */
        hy_upstream_log_t *l = cur_log(u);
        l->response_ms = (int64_t)(hy_clock_now_ms() - u->try_start_ms);
        l->response_length = u->resp_bytes;
        hy_upstream_peer_free(u->group, u->peer, false);
        hy_upstream_metrics_try(u->group, u->peer, false, l->response_ms);
        hy_upstream__lt_sample(u->group, u->peer, false, l->response_ms);
        if (u->group->sticky)
            hy_upstream__sticky_response(u, true);
        if (u->cache != NULL && rc == 0)
            hy_ucache_store_end(u, true);
        if (u->store)
            hy_upstream__store_end(u);
        release_conn(u, u->codec->reusable(u) && s->input.len == 0);
        deliver(u);
        return;
    }
    timer_set(u, u->read_timeout_ms);
    deliver(u); /* first: a client ready for more takes what was read, and the memory is free again */
    int64_t limit = u->buffering ? u->buffers_total : u->buffer_size;
    if (u->conn != NULL && !u->finished && (int64_t)u->ahead_mem >= limit && !(u->client_waiting && may_spill(u)))
        hy_sock_read_stop(&u->conn->sock);
}

static bool client_upgrade(hy_req_t *req)
{
    for (size_t i = 0; i < req->num_headers; i++)
        if (hy_str_caseeq(req->headers[i].name, "Upgrade"))
            return true;
    return false;
}

static int ft_of_status(int status)
{
    switch (status) {
    case 500:
        return HY_UPS_FT_500;
    case 502:
        return HY_UPS_FT_502;
    case 503:
        return HY_UPS_FT_503;
    case 504:
        return HY_UPS_FT_504;
    case 403:
        return HY_UPS_FT_403;
    case 404:
        return HY_UPS_FT_404;
    case 429:
        return HY_UPS_FT_429;
    default:
        return 0;
    }
}

/* proxy_limit_rate's value with variables: a size; empty is no limit, an invalid one is logged and no limit */
static int64_t eval_limit_rate(hy_ureq_t *u)
{
    hy_str_t v;
    if (hy_vars_eval(u->req, u->limit_rate_cv, &v) != 0 || v.len == 0)
        return 0;
    int64_t r = hy_parse_size(v.ptr, v.len);
    if (r < 0) {
        hy_req_log(u->req, HY_LOG_ERR, "invalid limit rate \"%.*s\"", (int)v.len, v.ptr);
        return 0;
    }
    return r;
}

static void got_head(hy_ureq_t *u)
{
    hy_req_t *req = u->req;
    hy_upstream_log_t *l = cur_log(u);
    l->status = u->status;
    l->header_ms = (int64_t)(hy_clock_now_ms() - u->try_start_ms);
    hy_upstream__lt_sample(u->group, u->peer, true, l->header_ms);
    int ft = ft_of_status(u->status);
    if (ft && (u->next_upstream & ft) && u->tries < max_tries(u) &&
        (u->next_upstream_timeout_ms == 0 || hy_clock_now_ms() - u->start_ms < (uint64_t)u->next_upstream_timeout_ms) &&
        (idempotent(u) || (u->next_upstream & HY_UPS_FT_NON_IDEMPOTENT)) && !u->body_streamed) {
        try_failed(u, ft, u->status);
        return;
    }
    if (u->cache != NULL && hy_ucache_head(u)) { /* revalidated (304), or a stale response instead of this one */
        release_conn(u, false);
        return;
    }
    if (u->intercept_errors && u->status >= 300) {
        if (hy_error_page_applies(req, u->status)) {
            if (u->status == 401) { /* the challenge goes with the intercepted 401 (nginx) */
                hy_header_t *h = u->headers_in->elts;
                for (size_t i = 0; i < u->headers_in->nelts; i++)
                    if (hy_str_caseeq(h[i].name, "WWW-Authenticate"))
                        hy_req_add_header(req, h[i].name, h[i].value);
            }
            release_conn(u, u->head_is_whole);
            u->state = HY_UREQ_DONE;
            hy_timer_unlink(loop_of(u), &u->timer);
            if (u->cache != NULL) /* a cacheable intercepted status is stored as such (nginx) */
                hy_ucache_store_error(u);
            hy_req_error(req, u->status);
            return;
        }
    }
    req->status = u->status;
    if (u->status == 101) { /* switching protocols: only to a client that asked for it, over a tunnel */
        int rc = client_upgrade(req) && u->upgrade && u->on_head ? u->on_head(u) : 502;
        if (rc == 0 && hy_upstream__tunnel(u))
            return;
        if (rc >= 0)
            log_error(u, HY_LOG_ERR, "upstream sent 101 response to a request that cannot switch", 0,
                      "reading response header from upstream");
        release_conn(u, false);
        u->state = HY_UREQ_DONE;
        hy_timer_unlink(loop_of(u), &u->timer);
        if (rc >= 0)
            hy_req_error(req, 502);
        return;
    }
    int rc = u->on_head ? u->on_head(u) : 0;
    if (rc == 0 && u->group->sticky)
        hy_upstream__sticky_response(u, false);
    if (rc != 0) {
        release_conn(u, rc > 0 && u->head_is_whole);
        u->state = HY_UREQ_DONE;
        hy_timer_unlink(loop_of(u), &u->timer);
        if (rc > 0)
            hy_req_error(req, rc);
        return;
    }
    if (req->method_id == HY_M_HEAD || u->status == 204 || u->status == 304)
        req->header_only = true;
    req->disable_not_modified = true; /* unless the cache stores it (nginx: !u->cacheable) */
    if (u->cache != NULL)
        hy_ucache_store_begin(u);
    u->state = HY_UREQ_BODY_OUT;
    u->body_start_ms = hy_clock_now_ms();
    if (u->limit_rate_cv) /* nginx 1.27: evaluated now, so $upstream_http_* can set it */
        u->limit_rate = eval_limit_rate(u);
    read_body(u, u->conn->sock.is_eof);
}

static void on_up_read(hy_sock_t *s, const char *err)
{
    hy_ureq_t *u = s->data;
    if (client_gone(u)) {
        release_conn(u, false);
        return;
    }
    if (u->state == HY_UREQ_BODY_OUT) {
        read_body(u, err == hy_err_eof || err == hy_err_io);
        return;
    }
    if (s->input.len)
        u->head_seen = true;
    int rc = u->codec->process_head(u, &s->input);
    if (rc > 0 && u->buffer_size > 0 && (size_t)rc > (size_t)u->buffer_size && !u->codec->head_in_records)
        rc = 0; /* a whole head read at once must still fit in *_buffer_size (nginx reads it into that buffer) */
    if (rc < 0) {
        if (rc != -2) /* -2: the codec said it in its words */
            log_error(u, HY_LOG_ERR, "upstream sent invalid header", 0, "reading response header from upstream");
        try_failed(u, HY_UPS_FT_INVALID_HEADER, 502);
        return;
    }
    if (rc == 0) {
        if (err == hy_err_buf_full || s->input.len >= (size_t)u->buffer_size) {
            log_error(u, HY_LOG_ERR, "upstream sent too big header", 0, "reading response header from upstream");
            try_failed(u, HY_UPS_FT_INVALID_HEADER, 502);
        } else if (err != NULL) {
            log_error(u, HY_LOG_ERR, "upstream prematurely closed connection", 0,
                      "reading response header from upstream");
            try_failed(u, HY_UPS_FT_ERROR, 502);
        }
        return;
    }
    hy_buf_consume(&s->input, (size_t)rc);
    u->state = HY_UREQ_HEAD;
    got_head(u);
}

static void on_timer(hy_timer_t *t)
{
    hy_ureq_t *u = t->data;
    if (client_gone(u))
        return;
    if (u->state == HY_UREQ_BODY_OUT) {
        log_error(u, HY_LOG_ERR, "upstream timed out", ETIMEDOUT, "reading upstream");
        body_failed(u, "upstream timed out (110: Connection timed out)");
        return;
    }
    log_error(u, HY_LOG_ERR, "upstream timed out", ETIMEDOUT,
              u->state == HY_UREQ_SEND ? "sending request to upstream" : "reading response header from upstream");
    try_failed(u, HY_UPS_FT_TIMEOUT, 504);
}

/* ---------------------------------------------------------------- start */

static void on_body(hy_req_t *req, const char *err)
{
    hy_ureq_t *u = hy_upstream_of(req);
    if (u == NULL || u->finished)
        return;
    if (err != NULL) {
        release_conn(u, false);
        u->state = HY_UREQ_DONE;
        hy_timer_unlink(loop_of(u), &u->timer);
        if (!req->head_sent)
            hy_req_error(req, req->body_in->status);
        return;
    }
    if (u->body_streamed) {
        u->in_body_cb = true;
        pump_body(u);
        u->in_body_cb = false;
        return;
    }
    hy_req_body_t *b = req->body_in;
    int64_t len = b->received;
    if (!u->body_kept)
        /* an HTTP/2 body that came as empty DATA frames is a body all the same: "Content-Length: 0", as nginx */
        u->body_length = len > 0 || req->content_length >= 0 || req->body_follows ? len : HY_UREQ_BODY_NONE;
    u->state = HY_UREQ_CONNECT;
    first_try(u);
}

hy_ureq_t *hy_upstream_create(hy_req_t *req)
{
    hy_ureq_t *u = hy_pcalloc(req->pool, sizeof(*u));
    u->req = req;
    u->version = 10;
    u->body_length = HY_UREQ_BODY_NONE;
    u->timer.cb = on_timer;
    u->timer.data = u;
    u->log = hy_array_create(req->pool, 2, sizeof(hy_upstream_log_t));
    return u;
}

static bool client_chunked(hy_req_t *req)
{
    for (size_t i = 0; i < req->num_headers; i++)
        if (hy_str_caseeq(req->headers[i].name, "Transfer-Encoding"))
            return true;
    return false;
}

static void start_exchange(hy_ureq_t *u);

int hy_upstream_start(hy_ureq_t *u)
{
    hy_req_t *req = u->req;
    *hy_req_ctx(req, &hy_http_upstream_module) = u;
    hy_pool_on_clear(req->pool, cleanup, u);
    u->start_ms = hy_clock_now_ms();
    if (u->cache_conf != NULL && hy_ucache_start(u, start_exchange)) /* answered from the cache, or waits */
        return HY_DONE;
    start_exchange(u);
    return HY_DONE;
}

static void start_exchange(hy_ureq_t *u)
{
    hy_req_t *req = u->req;
    if (u->discard_body) { /* the protocol discards what the client sends */
        u->body_length = HY_UREQ_BODY_NONE;
        first_try(u);
        return;
    }
    bool has_body = req->content_length > 0 || client_chunked(req) || (req->body_follows && req->content_length < 0);
    /* as nginx, the client's body is read even when it is not sent (proxy_set_body, proxy_pass_request_body
     * off): $request_body may be used in what is sent instead */
    if (u->set_body.ptr != NULL) {
        u->body_length = (int64_t)u->set_body.len; /* prepare() may set it again */
        u->body_kept = true;
    } else if (!u->pass_body) {
        u->body_length = HY_UREQ_BODY_NONE;
        u->body_kept = true;
    } else if (req->content_length == 0) {
        u->body_length = 0;
        /* read (empty) all the same: nginx answers "Expect" with 100 Continue; an HTTP/2 stream not ended yet is
         * waited for (its END_STREAM ends the body sent unbuffered: FastCGI's empty stdin record comes then) */
        has_body = req->h_expect != NULL || req->body_follows;
    }
    if (req->body_in && req->body_in->failed) {
        /* a body that failed (an error_page redirect after 400/413 came here): nginx discarded it, none is sent */
        if (u->set_body.ptr == NULL)
            u->body_length = HY_UREQ_BODY_NONE;
        has_body = false;
    }
    if (!has_body) { /* a body not passed on is discarded by the protocol */
        first_try(u);
        return;
    }
    /* a body read already (mirror_request_body) is passed buffered */
    if (!u->request_buffering && !u->body_kept && !(req->body_in && req->body_in->complete)) {
        u->body_streamed = true;
        u->body_length = req->content_length >= 0 ? req->content_length : HY_UREQ_BODY_CHUNKED;
        if (u->version == 10 && u->body_length == HY_UREQ_BODY_CHUNKED)
            u->body_streamed = false; /* HTTP/1.0 has no chunked coding: the body is read whole first */
    }
    u->state = HY_UREQ_BODY;
    hy_req_read_body(req, u->body_streamed ? HY_BODY_STREAM : HY_BODY_BUFFER, on_body);
    if (u->body_streamed && !u->finished && u->state == HY_UREQ_BODY) {
        u->state = HY_UREQ_CONNECT;
        first_try(u);
    }
    return;
}
