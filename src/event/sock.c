/* sock.c — plain transport: read(2), writev(2) for runs of memory segments, sendfile(2) for file regions. */
#include <errno.h>
#include <string.h>
#include <unistd.h>
#include <sys/uio.h>
#include <sys/sendfile.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include "sock.h"
#include "../core/file.h"

const char hy_err_eof[] = "connection closed by peer";
const char hy_err_io[] = "I/O error";
const char hy_err_buf_full[] = "input buffer full";

#define READ_BUDGET (256 * 1024) /* per readiness event, for fairness between connections */
#define IOV_BATCH 64

static ssize_t plain_read(hy_sock_t *s, char *buf, size_t len)
{
    ssize_t n;
    do
        n = read(s->io.fd, buf, len);
    while (n < 0 && errno == EINTR);
    return n < 0 ? -errno : n;
}

static int plain_flush(hy_sock_t *s)
{
    hy_outq_t *q = &s->outq;
    while (q->head) {
        ssize_t n;
        if (q->head->kind == HY_SEG_MEM) {
            struct iovec iov[IOV_BATCH];
            int cnt = 0;
            for (hy_seg_t *g = q->head; g && g->kind == HY_SEG_MEM && cnt < IOV_BATCH; g = g->next) {
                iov[cnt].iov_base = (void *)g->mem.ptr;
                iov[cnt].iov_len = g->mem.len;
                cnt++;
            }
            if (s->more_until_close) {
                struct msghdr mh = {.msg_iov = iov, .msg_iovlen = (size_t)cnt};
                n = sendmsg(s->io.fd, &mh, MSG_MORE | MSG_NOSIGNAL);
            } else {
                n = writev(s->io.fd, iov, cnt);
            }
        } else {
            hy_seg_t *g = q->head;
            size_t chunk = (size_t)HY_MIN(g->file.len, (int64_t)1 << 30);
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
            return -errno;
        }
        s->bytes_out += (uint64_t)n;
        hy_outq_consume(q, (size_t)n);
    }
    return 0;
}

static const hy_sock_transport_t plain_transport = {.read = plain_read, .flush = plain_flush};

static void on_io(hy_io_t *io, unsigned rev);
static void do_read(hy_sock_t *s);

void hy_sock_init(hy_sock_t *s, hy_loop_t *loop, int fd)
{
    memset(s, 0, sizeof(*s));
    hy_io_init(&s->io, fd, on_io, s);
    s->loop = loop;
    s->tp = &plain_transport;
    s->read_limit = HY_BUF_BLOCK;
    s->use_sendfile = true;
}

static void update_interest(hy_sock_t *s)
{
    unsigned want = 0;
    if (s->is_reading)
        want |= HY_EV_READ;
    if (s->on_write && !hy_outq_empty(&s->outq))
        want |= HY_EV_WRITE;
    hy_io_set(s->loop, &s->io, want);
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

static void do_flush(hy_sock_t *s)
{
    int r = s->tp->flush(s);
    if (r == -EAGAIN) {
        update_interest(s);
        return;
    }
    finish_write(s, r == 0 ? NULL : hy_err_io);
}

static void on_io(hy_io_t *io, unsigned rev)
{
    hy_sock_t *s = io->data;
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

void hy_sock_set_cork(hy_sock_t *s, bool on)
{
    if (s->is_corked == on)
        return;
    int v = on;
    setsockopt(s->io.fd, IPPROTO_TCP, TCP_CORK, &v, sizeof(v));
    s->is_corked = on;
}

void hy_sock_close(hy_sock_t *s)
{
    if (s->is_closed)
        return;
    s->is_closed = true;
    hy_io_close(s->loop, &s->io);
    hy_outq_clear(&s->outq);
    hy_buf_release(&s->input);
    s->on_read = NULL;
    s->on_write = NULL;
}
