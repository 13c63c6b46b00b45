/* conn.c — the per-worker connection registry (see conn.h). Workers are single-threaded: plain globals. */
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>
#include <arpa/inet.h>
#include <netinet/in.h>
#include "conn.h"
#include "core.h"
#include "../conf/cycle.h"
#include "../core/clock.h"
#include "../core/log.h"
#include "../core/mem.h"
#include "../core/stats.h"

static size_t max_conns = 1024;
static uint64_t next_id = 1;
static hy_conn_t *all_head;
static hy_conn_t *idle_head, *idle_tail; /* oldest idle first */
static bool shutting_down;
/* the counters live in this process's slot of the shared segment (core/stats.h): stub_status and the metrics
 * endpoint sum them over every worker */

void hy_conns_set_limit(int64_t max_connections)
{
    if (max_connections > 0)
        max_conns = (size_t)max_connections;
}

size_t hy_conns_count(void)
{
    return (size_t)hy_stats_me->active;
}

bool hy_conns_shutting_down(void)
{
    return shutting_down;
}

static uint64_t *state_counter(uint8_t state)
{
    hy_stats_slot_t *s = hy_stats_me;
    return state == HY_CONN_WRITING ? &s->writing : state == HY_CONN_READING ? &s->reading : &s->waiting;
}

static void idle_del(hy_conn_t *c)
{
    if (!c->is_idle)
        return;
    c->is_idle = false;
    if (c->_idle_prev)
        c->_idle_prev->_idle_next = c->_idle_next;
    else
        idle_head = c->_idle_next;
    if (c->_idle_next)
        c->_idle_next->_idle_prev = c->_idle_prev;
    else
        idle_tail = c->_idle_prev;
}

void hy_conn_set_state(hy_conn_t *c, enum hy_conn_state state)
{
    if (c->state == state)
        return;
    hy_stats_add(state_counter(c->state), (uint64_t)-1);
    hy_stats_add(state_counter((uint8_t)state), 1);
    c->state = (uint8_t)state;
    if (state != HY_CONN_WAITING) {
        idle_del(c);
        return;
    }
    c->is_idle = true;
    c->_idle_next = NULL;
    c->_idle_prev = idle_tail;
    if (idle_tail)
        idle_tail->_idle_next = c;
    else
        idle_head = c;
    idle_tail = c;
}

void hy_conn_count_request(hy_conn_t *c)
{
    hy_stats_add(&hy_stats_me->requests, 1);
}

const struct sockaddr_storage *hy_conn_local_addr(hy_conn_t *c, socklen_t *len)
{
    return hy_sock_local_addr(&c->sock, len);
}

static void peer_text(hy_conn_t *c, const struct sockaddr_storage *ss)
{
    if (ss->ss_family == AF_INET)
        hy_inet_ntop(AF_INET, &((const struct sockaddr_in *)ss)->sin_addr, c->peer_text, sizeof(c->peer_text));
    else if (ss->ss_family == AF_INET6)
        hy_inet_ntop(AF_INET6, &((const struct sockaddr_in6 *)ss)->sin6_addr, c->peer_text, sizeof(c->peer_text));
    else
        snprintf(c->peer_text, sizeof(c->peer_text), "unix:");
}

hy_conn_t *hy_conn_open(hy_listener_t *l, int fd, const struct sockaddr_storage *peer, socklen_t peer_len)
{
    hy_stats_slot_t *s = hy_stats_me;
    hy_stats_add(&s->accepted, 1);
    if (s->active >= max_conns) {
        if (idle_head && idle_head->ops) { /* make room: the oldest idle keep-alive connection goes (as nginx) */
            idle_head->ops->close(idle_head);
        } else {
            hy_log(HY_LOG_ALERT, "%zu worker_connections are not enough", max_conns);
            close(fd);
            return NULL;
        }
    }
    hy_conn_t *c = hy_calloc(sizeof(*c));
    hy_stats_add(&s->handled, 1);
    hy_stats_add(&s->active, 1);
    hy_stats_add(&s->waiting, 1);
    c->_next = all_head;
    if (all_head)
        all_head->_prev = c;
    all_head = c;
    c->id = next_id++;
    c->state = HY_CONN_NEW;
    c->start_ms = (uint64_t)hy_clock_time_ms();
    c->debug = hy_log_debug_peer(peer);
    hy_sock_init(&c->sock, l->loop, fd);
    c->sock.peer = *peer;
    c->sock.peer_len = peer_len;
    peer_text(c, peer);
    hy_http_addr_t *addr = l->data;
    if (addr->covers)
        addr = hy_http_addr_for_local(addr, hy_sock_local_addr(&c->sock, NULL));
    c->addr = addr;
    c->cycle = addr->cycle;
    addr->cycle->refs++;
    c->scheme = HY_STR("http");
    if (!addr->spec.is_unix)
        c->local_port = ntohs(addr->spec.addr.ss_family == AF_INET6
                                  ? ((struct sockaddr_in6 *)&addr->spec.addr)->sin6_port
                                  : ((struct sockaddr_in *)&addr->spec.addr)->sin_port);
    return c;
}

static void free_conn(void *arg)
{
    hy_conn_t *c = arg;
    hy_cycle_unref(c->cycle);
    free(c->pp);
    free(c);
}

void hy_conn_close(hy_conn_t *c)
{
    idle_del(c);
    hy_stats_add(state_counter(c->state), (uint64_t)-1);
    hy_stats_add(&hy_stats_me->active, (uint64_t)-1);
    if (c->_prev)
        c->_prev->_next = c->_next;
    else
        all_head = c->_next;
    if (c->_next)
        c->_next->_prev = c->_prev;
    hy_sock_close(&c->sock);
    hy_loop_free_later(c->sock.loop, free_conn, c);
}

void hy_conns_shutdown(void)
{
    shutting_down = true;
    for (hy_conn_t *c = all_head, *next; c; c = next) {
        next = c->_next;
        if (c->ops && c->ops->shutdown)
            c->ops->shutdown(c);
    }
}

void hy_conns_close_all(void)
{
    while (all_head) {
        hy_conn_t *c = all_head;
        if (c->ops)
            c->ops->close(c);
        else
            hy_conn_close(c);
    }
}
