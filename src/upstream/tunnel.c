/* tunnel.c — after a 101 Switching Protocols from the upstream to a client's Upgrade request (WebSocket and any
 * other protocol), the engine carries raw bytes both ways between the client's socket (handed over by its
 * protocol, hy_conn_ops_t.upgrade) and the upstream connection. Each direction queues at most TUNNEL_AHEAD bytes
 * before it stops reading its source (backpressure); proxy_read_timeout bounds the time without traffic in
 * either direction (nginx's rule for upgraded connections); a close or error on either side ends both. */
#include <string.h>
#include "upstream.h"
#include "../core/log.h"

#define TUNNEL_AHEAD 65536

static hy_ureq_t *ureq_of(hy_sock_t *s)
{
    return s->data;
}

static void tunnel_end(hy_ureq_t *u)
{
    if (u->state == HY_UREQ_DONE)
        return;
    u->state = HY_UREQ_DONE;
    hy_timer_unlink(hy_worker_loop, &u->timer);
    hy_upstream_conn_t *c = u->conn;
    if (c != NULL) {
        u->conn = NULL;
        if (u->peer) {
            hy_upstream_peer_conns_add(u->peer, -1);
            u->peer->lt_busy_ms -= u->try_start_ms;
        }
        hy_upstream_conn_close(c);
    }
    hy_sock_t *cs = u->client_sock;
    u->client_sock = NULL;
    if (cs != NULL && u->req->conn->proto != NULL && hy_req_ops(u->req)->abort)
        hy_req_ops(u->req)->abort(u->req);
}

static void pump(hy_ureq_t *u, hy_sock_t *from, hy_sock_t *to);

static void on_written(hy_sock_t *s, const char *err)
{
    hy_ureq_t *u = ureq_of(s);
    if (err != NULL) {
        tunnel_end(u);
        return;
    }
    if (u->state != HY_UREQ_TUNNEL)
        return;
    /* the other side may read again */
    hy_sock_t *other = s == u->client_sock ? &u->conn->sock : u->client_sock;
    if (!other->is_reading && !other->is_eof)
        pump(u, other, s);
}

static void on_read(hy_sock_t *s, const char *err);

static void pump(hy_ureq_t *u, hy_sock_t *from, hy_sock_t *to)
{
    if (from->input.len) {
        if (to == u->client_sock) { /* nginx counts what an upgraded connection carried to the client as body */
            u->req->bytes_sent += (int64_t)from->input.len;
            u->req->body_bytes_sent += (int64_t)from->input.len;
        }
        hy_outq_push_copy(&to->outq, hy_buf_data(&from->input), from->input.len);
        hy_buf_consume(&from->input, from->input.len);
        hy_sock_write(to, on_written);
        if (u->state != HY_UREQ_TUNNEL)
            return;
    }
    if (to->outq.bytes >= TUNNEL_AHEAD)
        hy_sock_read_stop(from);
    else if (!from->is_reading && !from->is_eof)
        hy_sock_read_start(from, on_read);
}

static void on_read(hy_sock_t *s, const char *err)
{
    hy_ureq_t *u = ureq_of(s);
    if (u->state != HY_UREQ_TUNNEL)
        return;
    hy_sock_t *to = s == u->client_sock ? &u->conn->sock : u->client_sock;
    pump(u, s, to);
    if (u->state != HY_UREQ_TUNNEL)
        return;
    if (err != NULL && err != hy_err_buf_full) {
        tunnel_end(u);
        return;
    }
    if (u->read_timeout_ms > 0)
        hy_timer_link(hy_worker_loop, &u->timer, (uint64_t)u->read_timeout_ms);
}

static void on_idle(hy_timer_t *t)
{
    hy_ureq_t *u = t->data;
    hy_req_log(u->req, HY_LOG_ERR,
               "upstream timed out (110: Connection timed out) while proxying upgraded "
               "connection");
    tunnel_end(u);
}

static void tunnel_cleanup(void *arg)
{
    hy_ureq_t *u = arg;
    if (u->state == HY_UREQ_TUNNEL) {
        u->client_sock = NULL; /* the protocol closes its own socket */
        tunnel_end(u);
    }
}

bool hy_upstream__tunnel(hy_ureq_t *u)
{
    hy_req_t *req = u->req;
    if (hy_req_ops(req)->upgrade == NULL)
        return false;
    hy_sock_t *cs = hy_req_ops(req)->upgrade(req);
    if (cs == NULL)
        return false;
    u->client_sock = cs;
    u->state = HY_UREQ_TUNNEL;
    cs->data = u;
    u->conn->sock.data = u;
    u->timer.cb = on_idle;
    hy_pool_on_clear(req->pool, tunnel_cleanup, u);
    hy_sock_read_start(&u->conn->sock, on_read);
    hy_sock_write(cs, on_written); /* the 101 head, if the protocol could not write it all */
    if (u->state != HY_UREQ_TUNNEL)
        return true;
    pump(u, &u->conn->sock, cs); /* bytes the upstream sent right after its head */
    if (u->state == HY_UREQ_TUNNEL)
        pump(u, cs, &u->conn->sock); /* bytes the client sent right after its request */
    if (u->state == HY_UREQ_TUNNEL && u->read_timeout_ms > 0)
        hy_timer_link(hy_worker_loop, &u->timer, (uint64_t)u->read_timeout_ms);
    return true;
}
