/* pool.c — the per-worker keep-alive pool of upstream connections (upstream { keepalive N; }): an idle list per
 * group, newest last, at most N entries (the oldest is closed to make room, as nginx). An idle connection stays
 * registered for reading: any byte or EOF from the backend closes it at once (nginx's keepalive close handler; after
 * an EOF with a reset, hy_upstream_conn_end), except what the connection's protocol answers itself (proto_idle:
 * HTTP/2's PING, SETTINGS ...), and keepalive_timeout closes it when unused. Before reuse a peek must find nothing
 * queued (h2o's socketpool), else the connection is dropped and the next one tried. A TLS connection keeps its SSL
 * object (the transport) while parked, and is only handed to exchanges that use the same TLS context.
 * keepalive_requests and keepalive_time are checked when a connection comes back. */
#include <errno.h>
#include <stdlib.h>
#include <sys/socket.h>
#include "upstream.h"
#include "../core/clock.h"

struct hy_upstream_idle {
    hy_upstream_idle_t *prev, *next;
    hy_upstream_conn_t *c;
    hy_timer_t timer;
};

static void free_conn(void *arg)
{
    hy_upstream_conn_t *c = arg;
    if (c->proto_free && c->proto_state)
        c->proto_free(c->proto_state);
    free(c->idle);
    free(c);
}

static void unlink_idle(hy_upstream_conn_t *c)
{
    hy_upstream_idle_t *it = c->idle;
    hy_upstream_group_t *g = c->group;
    if (it == NULL || it->c == NULL)
        return;
    hy_timer_unlink(c->sock.loop, &it->timer);
    if (it->prev)
        it->prev->next = it->next;
    else
        g->idle_head = it->next;
    if (it->next)
        it->next->prev = it->prev;
    else
        g->idle_tail = it->prev;
    it->prev = it->next = NULL;
    it->c = NULL;
    g->nidle--;
    hy_upstream_metrics_idle(g);
}

static void conn_free(hy_upstream_conn_t *c, bool reset)
{
    unlink_idle(c);
    hy_loop_t *loop = c->sock.loop;
    if (reset)
        hy_sock_reset(&c->sock);
    else
        hy_sock_close(&c->sock);
    hy_loop_free_later(loop, free_conn, c);
}

void hy_upstream_conn_close(hy_upstream_conn_t *c)
{
    conn_free(c, false);
}

void hy_upstream_conn_end(hy_upstream_conn_t *c)
{
    /* once the backend has closed its side, nothing we still send matters to it: a FIN would cost the backend's
     * ACK and a TIME_WAIT socket on its side (a tenth to a sixth of a proxy's CPU per request on loopback, seed 003
     * without keep-alive); a reset ends both sides at once (docs/DIFFERENCES.md, "Reverse proxy"). Unix sockets
     * have no such cost. */
    conn_free(c, hy_sock_peer_done(&c->sock) && c->sock.peer.ss_family != AF_UNIX);
}

static void idle_written(hy_sock_t *s, const char *err)
{
    if (err != NULL)
        hy_upstream_conn_close(s->data);
}

static void idle_event(hy_sock_t *s, const char *err)
{
    hy_upstream_conn_t *c = s->data;
    /* a protocol's own traffic (proto_idle: HTTP/2 PING ...) is answered; bytes nobody asked for, EOF or an error
     * leave the connection of no use */
    if (err == NULL && !s->is_eof && c->proto_idle != NULL && s->input.len > 0 && c->proto_idle(c)) {
        if (!hy_outq_empty(&s->outq))
            hy_sock_write(s, idle_written);
        return;
    }
    hy_upstream_conn_end(c);
}

static void idle_timeout(hy_timer_t *t)
{
    hy_upstream_idle_t *it = t->data;
    hy_upstream_conn_close(it->c);
}

/* Nothing queued and no EOF; with probe, a one-byte peek finds no data to read. */
static bool alive(hy_upstream_conn_t *c, bool probe)
{
    if (c->sock.input.len > 0 || hy_sock_peer_done(&c->sock))
        return false;
    if (!probe)
        return true;
    char b;
    ssize_t n = recv(c->sock.io.fd, &b, 1, MSG_PEEK | MSG_DONTWAIT);
    return n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK);
}

hy_upstream_conn_t *hy_upstream_pool_get(hy_upstream_group_t *g, hy_upstream_peer_t *p, const void *tls_key,
                                         const void *proto, bool probe)
{
    for (hy_upstream_idle_t *it = g->idle_tail, *prev; it; it = prev) {
        prev = it->prev;
        hy_upstream_conn_t *c = it->c;
        if (c->peer != p || c->tls_key != tls_key || c->proto != proto)
            continue;
        unlink_idle(c);
        if (!alive(c, probe)) {
            hy_upstream_conn_close(c);
            continue;
        }
        hy_sock_read_stop(&c->sock);
        return c;
    }
    return NULL;
}

void hy_upstream_pool_put(hy_upstream_conn_t *c)
{
    hy_upstream_group_t *g = c->group;
    uint64_t now = hy_clock_now_ms();
    if (g->keepalive == 0 || c->requests >= (uint64_t)g->keepalive_requests ||
        now - c->created_ms >= (uint64_t)g->keepalive_time_ms || c->sock.input.len > 0 || hy_sock_peer_done(&c->sock) ||
        !hy_outq_empty(&c->sock.outq)) { /* bytes after the response, or the backend's close: not reusable */
        hy_upstream_conn_end(c);
        return;
    }
    if (g->nidle >= (size_t)g->keepalive)
        hy_upstream_conn_close(g->idle_head->c);
    if (c->idle == NULL)
        c->idle = hy_calloc(sizeof(*c->idle));
    hy_upstream_idle_t *it = c->idle;
    it->c = c;
    it->prev = g->idle_tail;
    it->next = NULL;
    if (g->idle_tail)
        g->idle_tail->next = it;
    else
        g->idle_head = it;
    g->idle_tail = it;
    g->nidle++;
    hy_upstream_metrics_idle(g);
    it->timer.cb = idle_timeout;
    it->timer.data = it;
    hy_timer_link(c->sock.loop, &it->timer, (uint64_t)g->keepalive_timeout_ms);
    hy_buf_release(&c->sock.input);
    c->sock.data = c;
    hy_sock_read_start(&c->sock, idle_event);
}
