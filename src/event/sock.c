/* sock.c — stream sockets and the plain transport: recv(2), send(2) for one memory segment, writev(2) for runs
 * of them, sendfile(2) for file regions (recv/send rather than read/write: they skip the VFS layer, about 0.2 µs
 * per call here, see docs/ARCHITECTURE.md); socket options, lingering-close peeks, outbound connect. */
#include <errno.h>
#include <fcntl.h>
#include <string.h>
#include <unistd.h>
#include <poll.h>
#include <sys/socket.h>
#include <sys/uio.h>
#include <sys/sendfile.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include "sock.h"
#include "../core/file.h"
#include "../core/clock.h"
#include "../core/mem.h"
#include <stdlib.h>

const char hy_err_eof[] = "connection closed by peer";
const char hy_err_io[] = "I/O error";
const char hy_err_buf_full[] = "input buffer full";
const char hy_err_timeout[] = "timed out";
const char hy_err_connect[] = "connect() failed";
const char hy_err_handshake[] = "handshake failed";

/* limit_rate's pacing state (hy_sock_set_rate) */
struct hy_sock_rate {
    uint64_t rate, after; /* bytes per second; bytes at full speed first */
    uint64_t base;        /* bytes_out when the pacing started */
    uint64_t start_ms;
    hy_timer_t timer;
    bool waiting; /* the output waits for the timer: write readiness is not watched */
};

#define READ_BUDGET (256 * 1024) /* per readiness event, for fairness between connections */
#define IOV_BATCH 64

/* recv(2), EINTR retried: bytes, 0 at EOF, or -errno; EAGAIN tells the loop the receive queue is empty */
static ssize_t sock_recv(hy_sock_t *s, char *buf, size_t len, int flags)
{
    ssize_t n;
    do
        n = recv(s->io.fd, buf, len, flags);
    while (n < 0 && errno == EINTR);
    if (n >= 0)
        return n;
    int e = errno;
    if (e == EAGAIN)
        hy_io_drained(&s->io, HY_EV_READ);
    return -e;
}

static ssize_t plain_read(hy_sock_t *s, char *buf, size_t len)
{
    ssize_t n = sock_recv(s, buf, len, 0);
    if (n >= 0 && (size_t)n < len) /* a stream socket returns less only when its queue is empty (or at EOF) */
        hy_io_drained(&s->io, HY_EV_READ);
    return n;
}

/* bytes the transport may still write under limit_rate's cap (SIZE_MAX without one) */
static size_t write_room(const hy_sock_t *s)
{
    if (s->write_cap == UINT64_MAX)
        return SIZE_MAX;
    return s->bytes_out >= s->write_cap ? 0 : (size_t)HY_MIN(s->write_cap - s->bytes_out, (uint64_t)SIZE_MAX);
}

/* segments that together fit in this many bytes are copied and sent with one send(2) instead of writev(2) */
#define GATHER_MAX 2048

static int plain_flush(hy_sock_t *s)
{
    hy_outq_t *q = &s->outq;
    while (q->head) {
        ssize_t n;
        size_t room = write_room(s);
        if (room == 0)
            return -EAGAIN;
        if (q->head->kind == HY_SEG_MEM) {
            struct iovec iov[IOV_BATCH];
            int cnt = 0;
            size_t total = 0;
            hy_seg_t *g = q->head;
            bool cut = false; /* limit_rate's cap stops this batch inside the queue */
            for (; g && g->kind == HY_SEG_MEM && cnt < IOV_BATCH && room > 0; g = g->next) {
                iov[cnt].iov_base = (void *)g->mem.ptr;
                iov[cnt].iov_len = HY_MIN(g->mem.len, room);
                cut = iov[cnt].iov_len < g->mem.len;
                room -= iov[cnt].iov_len;
                total += iov[cnt].iov_len;
                cnt++;
            }
            /* MSG_MORE only for the queue's last bytes before the close: the kernel holds a partial segment
             * until more data comes or 200 ms pass, so bytes whose successors wait for limit_rate or for
             * the upstream would be held back */
            if (s->more_until_close && g == NULL && !cut) {
                struct msghdr mh = {.msg_iov = iov, .msg_iovlen = (size_t)cnt};
                n = sendmsg(s->io.fd, &mh, MSG_MORE | MSG_NOSIGNAL);
            } else if (cnt == 1) {
                n = send(s->io.fd, iov[0].iov_base, iov[0].iov_len, MSG_NOSIGNAL);
            } else if (total <= GATHER_MAX) { /* a small response: one copy costs less than writev's iovec */
                char tmp[GATHER_MAX];         /* import and VFS layer (a head and a 612-byte body: 850 bytes) */
                size_t at = 0;
                for (int i = 0; i < cnt; i++) {
                    memcpy(tmp + at, iov[i].iov_base, iov[i].iov_len);
                    at += iov[i].iov_len;
                }
                n = send(s->io.fd, tmp, at, MSG_NOSIGNAL);
            } else {
                n = writev(s->io.fd, iov, cnt);
            }
        } else {
            hy_seg_t *g = q->head;
            size_t chunk = HY_MIN((size_t)HY_MIN(g->file.len, (int64_t)1 << 30), room);
            if (s->use_sendfile) {
                off_t off = g->file.off;
                n = sendfile(s->io.fd, g->file.file->fd, &off, chunk);
                if (n == 0) /* the file shrank under us: nothing more will come */
                    return -EIO;
            } else {
                char tmp[32768];
                n = pread(g->file.file->fd, tmp, HY_MIN(chunk, sizeof(tmp)), g->file.off);
                if (n == 0)
                    return -EIO;
                if (n > 0)
                    n = write(s->io.fd, tmp, (size_t)n);
            }
        }
        if (n < 0) {
            if (errno == EINTR)
                continue;
            if (errno == EAGAIN)
                hy_io_drained(&s->io, HY_EV_WRITE);
            return -errno;
        }
        /* a short write marks nothing: the next try says EAGAIN if the buffer is full (a short sendfile(2) may
         * have other reasons, and an edge that never comes would stall the response) */
        s->bytes_out += (uint64_t)n;
        hy_outq_consume(q, (size_t)n);
    }
    return 0;
}

static int plain_shutdown(hy_sock_t *s)
{
    return shutdown(s->io.fd, SHUT_WR) == 0 ? 0 : -errno;
}

static bool plain_has_unread(hy_sock_t *s)
{
    char b;
    return recv(s->io.fd, &b, 1, MSG_PEEK | MSG_DONTWAIT) > 0;
}

const hy_sock_transport_t hy_sock_plain_transport = {
    .name = "plain", .edge = true, .read = plain_read, .flush = plain_flush, .shutdown = plain_shutdown,
    .has_unread = plain_has_unread,
};

static void on_io(hy_io_t *io, unsigned rev);
static void do_read(hy_sock_t *s);

void hy_sock_init(hy_sock_t *s, hy_loop_t *loop, int fd)
{
    memset(s, 0, sizeof(*s));
    hy_io_init(&s->io, fd, on_io, s);
    s->loop = loop;
    s->tp = &hy_sock_plain_transport;
    s->read_limit = HY_BUF_BLOCK;
    s->use_sendfile = true;
    s->write_cap = UINT64_MAX;
}

/* every interest change goes through here: the transport says whether the fd may be edge-triggered */
static void io_set(hy_sock_t *s, unsigned want)
{
    s->io.edge = s->tp->edge;
    hy_io_set(s->loop, &s->io, want);
}

static void update_interest(hy_sock_t *s)
{
    unsigned want = 0;
    if (s->is_reading)
        want |= HY_EV_READ;
    if (s->on_write && !hy_outq_empty(&s->outq) && (s->rate == NULL || !s->rate->waiting))
        want |= HY_EV_WRITE;
    io_set(s, want);
}

void hy_sock_read_now(hy_sock_t *s)
{
    if (s->is_reading)
        do_read(s);
}

void hy_sock_read_start(hy_sock_t *s, hy_sock_cb cb)
{
    s->on_read = cb;
    s->is_reading = true;
    update_interest(s);
}

void hy_sock_read_stop(hy_sock_t *s)
{
    s->is_reading = false;
    update_interest(s);
}

static void do_read(hy_sock_t *s)
{
    size_t total = 0;
    const char *err = NULL;
    while (total < READ_BUDGET) {
        size_t avail;
        char *p = hy_buf_reserve(&s->input, 1024, s->read_limit, &avail);
        if (p == NULL) {
            err = hy_err_buf_full;
            break;
        }
        ssize_t n = s->tp->read(s, p, avail);
        if (n > 0) {
            hy_buf_commit(&s->input, (size_t)n);
            s->bytes_in += (uint64_t)n;
            total += (size_t)n;
            if ((size_t)n < avail)
                break; /* the socket is drained: skip the EAGAIN round trip */
            continue;
        }
        if (n == 0) {
            s->is_eof = true;
            err = hy_err_eof;
        } else if (n != -EAGAIN) {
            err = hy_err_io;
        }
        break;
    }
    if (s->input.len == 0 && s->input.base)
        hy_buf_release(&s->input);
    if (err == hy_err_eof || err == hy_err_io)
        s->is_reading = false, update_interest(s);
    if ((total > 0 || err) && s->on_read)
        s->on_read(s, err);
}

static void finish_write(hy_sock_t *s, const char *err)
{
    hy_sock_cb cb = s->on_write;
    s->on_write = NULL;
    update_interest(s);
    if (cb)
        cb(s, err);
}

/* ---- limit_rate ---- */

static void do_flush(hy_sock_t *s);

static void on_rate_timer(hy_timer_t *t)
{
    hy_sock_t *s = t->data;
    s->rate->waiting = false;
    if (s->on_write && !s->is_closed)
        do_flush(s);
}

/* Open the cap as far as the rate allows by now: nginx's "rate * (seconds elapsed + 1) + after" bytes since the
 * start (in ms here). false when nothing may go yet: the timer is armed for when a useful chunk may. */
static bool rate_open(hy_sock_t *s)
{
    struct hy_sock_rate *r = s->rate;
    uint64_t elapsed = hy_clock_now_ms() - r->start_ms;
    uint64_t allowed = r->after + r->rate + r->rate * elapsed / 1000;
    uint64_t sent = s->bytes_out - r->base;
    if (sent < allowed) {
        s->write_cap = r->base + allowed;
        return true;
    }
    uint64_t chunk = HY_MAX(HY_MIN(r->rate / 20, 16384), 1); /* wake for ~50 ms worth, not for every byte */
    r->waiting = true;
    update_interest(s);
    hy_timer_link(s->loop, &r->timer, (sent - allowed + chunk) * 1000 / r->rate + 1);
    return false;
}

void hy_sock_set_rate(hy_sock_t *s, uint64_t rate, uint64_t after)
{
    if (rate == 0) {
        if (s->rate) {
            hy_timer_unlink(s->loop, &s->rate->timer);
            free(s->rate);
            s->rate = NULL;
        }
        s->write_cap = UINT64_MAX;
        if (!s->is_closed)
            update_interest(s);
        return;
    }
    if (s->rate == NULL) {
        s->rate = hy_calloc(sizeof(*s->rate));
        s->rate->timer.cb = on_rate_timer;
        s->rate->timer.data = s;
    }
    s->rate->rate = rate;
    s->rate->after = after;
    s->rate->base = s->bytes_out;
    s->rate->start_ms = hy_clock_now_ms();
}

static void do_flush(hy_sock_t *s)
{
    if (s->rate && (s->rate->waiting || !rate_open(s)))
        return;
    uint64_t cap = s->write_cap; /* a turn's bound rides on limit_rate's cap for the transport's flush */
    if (s->turn_max && cap > s->bytes_out && cap - s->bytes_out > s->turn_max)
        s->write_cap = s->bytes_out + s->turn_max;
    int r = s->tp->flush(s);
    s->write_cap = cap;
    if (r == -EAGAIN) {
        /* the kernel's buffer is full (WRITE drained: the next edge resumes it), or the turn's bound stopped it
         * (WRITE still ready and wanted: the loop comes back in its next iteration, after the others' turn) */
        if (s->rate && !hy_outq_empty(&s->outq) && s->bytes_out >= s->write_cap)
            rate_open(s); /* the cap, not the kernel, stopped it: wait for the timer, not for writability */
        update_interest(s);
        return;
    }
    finish_write(s, r == 0 ? NULL : hy_err_io);
}

static void connect_done(hy_sock_t *s, const char *err);
static void handshake_step(hy_sock_t *s);

static void on_io(hy_io_t *io, unsigned rev)
{
    hy_sock_t *s = io->data;
    if (s->is_connecting) {
        int e = 0;
        socklen_t el = sizeof(e);
        if (getsockopt(io->fd, SOL_SOCKET, SO_ERROR, &e, &el) != 0)
            e = errno;
        if (e == 0 && !(rev & (HY_EV_WRITE | HY_EV_ERROR)))
            return;
        s->last_errno = e;
        connect_done(s, e ? hy_err_connect : NULL);
        return;
    }
    if (s->on_connect) { /* handshake in progress */
        handshake_step(s);
        return;
    }
    if ((rev & HY_EV_WRITE) && s->on_write) {
        do_flush(s);
        if (s->is_closed || io->cb == NULL)
            return;
    }
    if ((rev & (HY_EV_READ | HY_EV_ERROR)) && s->is_reading)
        do_read(s);
}

void hy_sock_write(hy_sock_t *s, hy_sock_cb cb)
{
    s->on_write = cb;
    if (s->is_closed) {
        finish_write(s, hy_err_io);
        return;
    }
    do_flush(s);
}

static bool is_tcp(hy_sock_t *s)
{
    return s->peer.ss_family == AF_INET || s->peer.ss_family == AF_INET6;
}

void hy_sock_set_cork(hy_sock_t *s, bool on)
{
    if (s->is_corked == on || !is_tcp(s))
        return;
    int v = on;
    setsockopt(s->io.fd, IPPROTO_TCP, TCP_CORK, &v, sizeof(v));
    s->is_corked = on;
}

void hy_sock_set_nodelay(hy_sock_t *s)
{
    if (s->is_nodelay || !is_tcp(s))
        return;
    int one = 1;
    setsockopt(s->io.fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
    s->is_nodelay = true;
}

void hy_sock_idle(hy_sock_t *s)
{
    if (s->tp->idle)
        s->tp->idle(s);
}

bool hy_sock_has_unread(hy_sock_t *s)
{
    if (s->input.len > 0)
        return true;
    if (s->is_closed || s->is_eof)
        return false;
    return s->tp->has_unread ? s->tp->has_unread(s) : false;
}

ssize_t hy_sock_recv_raw(hy_sock_t *s, char *buf, size_t len, bool peek)
{
    ssize_t n = sock_recv(s, buf, len, peek ? MSG_PEEK : 0);
    if (n > 0 && !peek)
        s->bytes_in += (uint64_t)n;
    return n;
}

int hy_sock_shutdown_write(hy_sock_t *s)
{
    if (s->is_closed)
        return -EBADF;
    return s->tp->shutdown ? s->tp->shutdown(s) : 0;
}

const struct sockaddr_storage *hy_sock_local_addr(hy_sock_t *s, socklen_t *len)
{
    if (s->local_len == 0) {
        socklen_t l = sizeof(s->local);
        if (getsockname(s->io.fd, (struct sockaddr *)&s->local, &l) != 0)
            return NULL;
        s->local_len = l;
    }
    if (len)
        *len = s->local_len;
    return &s->local;
}

hy_str_t hy_sock_alpn(hy_sock_t *s)
{
    return s->tp->alpn ? s->tp->alpn(s) : HY_STR_NULL;
}

hy_str_t hy_sock_server_name(hy_sock_t *s)
{
    return s->tp->server_name ? s->tp->server_name(s) : HY_STR_NULL;
}

/* ---- handshake (a transport's; plain has none) ---- */

static void handshake_finish(hy_sock_t *s, const char *err)
{
    hy_sock_cb cb = s->on_connect;
    s->on_connect = NULL;
    hy_timer_unlink(s->loop, &s->_timer);
    s->hs_want_write = false;
    update_interest(s);
    cb(s, err);
}

static void handshake_step(hy_sock_t *s)
{
    int r = s->tp->handshake(s);
    if (r == -EAGAIN) {
        io_set(s, s->hs_want_write ? HY_EV_WRITE : HY_EV_READ);
        return;
    }
    handshake_finish(s, r == 0 ? NULL : r == -ECONNRESET || r == -EPIPE ? hy_err_eof : hy_err_handshake);
}

static void on_handshake_timeout(hy_timer_t *t)
{
    hy_sock_t *s = t->data;
    if (s->on_connect)
        handshake_finish(s, hy_err_timeout);
}

void hy_sock_handshake_within(hy_sock_t *s, uint64_t timeout_ms, hy_sock_cb cb)
{
    if (s->tp->handshake == NULL) {
        cb(s, NULL);
        return;
    }
    s->on_connect = cb;
    s->_timer.cb = on_handshake_timeout;
    s->_timer.data = s;
    hy_timer_link(s->loop, &s->_timer, timeout_ms);
    handshake_step(s);
}

void hy_sock_handshake(hy_sock_t *s, hy_sock_cb cb)
{
    if (s->tp->handshake == NULL) {
        cb(s, NULL);
        return;
    }
    s->on_connect = cb;
    handshake_step(s);
}

/* ---- outbound connect ---- */

static void connect_done(hy_sock_t *s, const char *err)
{
    s->is_connecting = false;
    hy_timer_unlink(s->loop, &s->_timer);
    hy_sock_cb cb = s->on_connect;
    s->on_connect = NULL;
    update_interest(s);
    cb(s, err);
}

static void on_connect_timeout(hy_timer_t *t)
{
    hy_sock_t *s = t->data;
    s->last_errno = ETIMEDOUT;
    connect_done(s, hy_err_timeout);
}

static void on_connect_defer(hy_defer_t *d)
{
    hy_sock_t *s = d->data;
    if (s->is_connecting)
        connect_done(s, s->last_errno ? hy_err_connect : NULL);
}

/* A loopback destination (127.0.0.0/8, ::1): the kernel completes the handshake inside connect(2), which still
 * says EINPROGRESS. */
static bool loopback(const struct sockaddr *sa)
{
    if (sa->sa_family == AF_INET)
        return (ntohl(((const struct sockaddr_in *)sa)->sin_addr.s_addr) >> 24) == 127;
    if (sa->sa_family == AF_INET6)
        return IN6_IS_ADDR_LOOPBACK(&((const struct sockaddr_in6 *)sa)->sin6_addr);
    return false;
}

int hy_sock_connect(hy_sock_t *s, hy_loop_t *loop, const struct sockaddr *sa, socklen_t len, uint64_t timeout_ms,
                    hy_sock_cb cb)
{
    return hy_sock_connect_from(s, loop, sa, len, NULL, 0, timeout_ms, cb);
}

int hy_sock_connect_from(hy_sock_t *s, hy_loop_t *loop, const struct sockaddr *sa, socklen_t len,
                         const struct sockaddr *local, socklen_t local_len, uint64_t timeout_ms, hy_sock_cb cb)
{
    int fd = socket(sa->sa_family, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
    if (fd < 0)
        return -errno;
    if (local != NULL) {
        int one = 1;
#ifdef IP_BIND_ADDRESS_NO_PORT
        setsockopt(fd, IPPROTO_IP, IP_BIND_ADDRESS_NO_PORT, &one, sizeof(one));
#endif
        /* a given port (proxy_bind addr:port) may be bound again while an old connection is in TIME_WAIT (nginx) */
        if (((const struct sockaddr_in *)local)->sin_port != 0)
            setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
        if (bind(fd, local, local_len) != 0) {
            int e = errno;
            close(fd);
            return -e;
        }
    }
    hy_sock_init(s, loop, fd);
    memcpy(&s->peer, sa, len);
    s->peer_len = len;
    s->on_connect = cb;
    s->is_connecting = true;
    s->_timer.cb = on_connect_timeout;
    s->_timer.data = s;
    int r;
    do
        r = connect(fd, sa, len);
    while (r != 0 && errno == EINTR);
    if (r != 0 && errno == EINPROGRESS && loopback(sa)) {
        /* to a loopback address the connection is usually up already: one poll(2) tells, and saves the
         * EPOLLOUT registration, its wake-up and SO_ERROR (a refusal or anything unclear goes the usual way) */
        struct pollfd p = {.fd = fd, .events = POLLOUT};
        if (poll(&p, 1, 0) == 1 && p.revents == POLLOUT)
            r = 0;
        else
            errno = EINPROGRESS;
    }
    if (r == 0 || errno != EINPROGRESS) {
        /* done at once (unix sockets, or an immediate refusal): report from the loop, never from here */
        s->last_errno = r == 0 ? 0 : errno;
        s->_connect_defer.cb = on_connect_defer;
        s->_connect_defer.data = s;
        hy_defer(loop, &s->_connect_defer);
        return 0;
    }
    hy_timer_link(loop, &s->_timer, timeout_ms);
    io_set(s, HY_EV_WRITE);
    return 0;
}

void hy_sock_reset(hy_sock_t *s)
{
    if (!s->is_closed) {
        struct linger l = {.l_onoff = 1, .l_linger = 0};
        setsockopt(s->io.fd, SOL_SOCKET, SO_LINGER, &l, sizeof(l));
    }
    hy_sock_close(s);
}

void hy_sock_close(hy_sock_t *s)
{
    if (s->is_closed)
        return;
    s->is_closed = true;
    s->is_connecting = false;
    s->on_connect = NULL;
    hy_timer_unlink(s->loop, &s->_timer);
    hy_sock_set_rate(s, 0, 0);
    if (s->tp->release)
        s->tp->release(s);
    hy_io_close(s->loop, &s->io);
    hy_outq_clear(&s->outq);
    hy_buf_release(&s->input);
    s->on_read = NULL;
    s->on_write = NULL;
}
