/* sock_io_test.c — the plain transport's writes and reads on real sockets: a file region sent with sendfile and
 * with pread+write (sendfile off), a file that is shorter than the region (an I/O error, not a hang), MSG_MORE
 * output (more_until_close), segments gathered into one send or a writev, limit_rate pacing (the write completes, later, with the cap lifted), reads up to
 * EOF, a write or a shutdown on a closed socket, a reset (RST at the peer), and an outbound connect from a
 * local address (proxy_bind) that this host has or has not. sock_test.c has the connect cases. */
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include "../harness.h"
#include "event/sock.h"
#include "core/clock.h"
#include "core/mem.h"
#include "core/file.h"

static hy_loop_t loop;
static const char *got_err;
static int calls;

static void on_done(hy_sock_t *s, const char *err)
{
    (void)s;
    got_err = err;
    calls++;
}

static void run_until(int *counter, int want, int max_iter)
{
    for (int i = 0; i < max_iter && *counter < want; i++) {
        hy_clock_update();
        hy_loop_run_once(&loop, 20);
    }
}

/* a connected TCP pair: *a wrapped in s (non-blocking), *peer a plain blocking fd */
static int tcp_pair(hy_sock_t *s, int *peer)
{
    int l = socket(AF_INET, SOCK_STREAM, 0);
    struct sockaddr_in sa = {.sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
    bind(l, (struct sockaddr *)&sa, sizeof(sa));
    socklen_t sl = sizeof(sa);
    getsockname(l, (struct sockaddr *)&sa, &sl);
    listen(l, 4);
    int c = socket(AF_INET, SOCK_STREAM, 0);
    if (connect(c, (struct sockaddr *)&sa, sizeof(sa)) != 0)
        return -1;
    int a = accept(l, NULL, NULL);
    close(l);
    fcntl(a, F_SETFL, fcntl(a, F_GETFL) | O_NONBLOCK);
    hy_sock_init(s, &loop, a);
    s->peer_len = sizeof(struct sockaddr_in);
    memcpy(&s->peer, &sa, sizeof(sa));
    *peer = c;
    return 0;
}

static hy_file_t *temp_file(const char *content, size_t len)
{
    char path[] = "/tmp/hy-sockio-XXXXXX";
    int fd = mkstemp(path);
    unlink(path);
    (void)!write(fd, content, len);
    hy_file_t *f = hy_calloc(sizeof(*f));
    f->fd = fd;
    f->refs = 1;
    f->size = (int64_t)len;
    return f;
}

static size_t read_all(int fd, char *buf, size_t cap, size_t want)
{
    size_t n = 0;
    while (n < want && n < cap) {
        ssize_t r = read(fd, buf + n, cap - n);
        if (r <= 0)
            break;
        n += (size_t)r;
    }
    return n;
}

static void test_file_regions(void)
{
    for (int sendfile_on = 1; sendfile_on >= 0; sendfile_on--) {
        hy_sock_t s;
        int peer;
        ok(tcp_pair(&s, &peer) == 0);
        s.use_sendfile = sendfile_on;
        hy_file_t *f = temp_file("0123456789abcdef", 16);
        hy_outq_push_copy(&s.outq, "head:", 5);
        hy_outq_push_file(&s.outq, f, 4, 8);
        calls = 0;
        hy_sock_write(&s, on_done);
        run_until(&calls, 1, 100);
        is_int(calls, 1);
        ok(got_err == NULL);
        char b[64] = {0};
        is_int(read_all(peer, b, sizeof(b), 13), 13);
        is_str(b, "head:456789ab");
        is_int(s.bytes_out, 13);
        /* a region past the file's end: the file shrank under the response */
        hy_outq_push_file(&s.outq, f, 10, 20);
        calls = 0;
        hy_sock_write(&s, on_done);
        run_until(&calls, 1, 100);
        is_int(calls, 1);
        ok(got_err == hy_err_io);
        hy_file_unref(f);
        hy_sock_close(&s);
        hy_loop_run_once(&loop, 0);
        close(peer);
    }
}

static void test_more_and_rate(void)
{
    hy_sock_t s;
    int peer;
    ok(tcp_pair(&s, &peer) == 0);
    s.more_until_close = true;
    hy_sock_set_nodelay(&s);
    hy_sock_set_nodelay(&s); /* once */
    ok(s.is_nodelay);
    hy_sock_set_cork(&s, true);
    ok(s.is_corked);
    hy_sock_set_cork(&s, true);
    hy_sock_set_cork(&s, false);
    ok(!s.is_corked);
    hy_outq_push_copy(&s.outq, "more", 4);
    calls = 0;
    hy_sock_write(&s, on_done);
    run_until(&calls, 1, 100);
    ok(calls == 1 && got_err == NULL);
    hy_sock_shutdown_write(&s); /* the held segment leaves with the FIN */
    char b[40000];
    is_int(read_all(peer, b, sizeof(b), 4), 4);
    hy_sock_close(&s);
    hy_loop_run_once(&loop, 0);
    close(peer);

    /* limit_rate: 8000 B/s, 1 KB at full speed, 12000 bytes: the first write stops at the cap (the first
     * second's bytes and the 1 KB, as nginx counts), the timer opens it again until everything is out */
    ok(tcp_pair(&s, &peer) == 0);
    hy_sock_set_rate(&s, 8000, 1024);
    hy_sock_set_rate(&s, 8000, 1024); /* again: the same pacing restarts */
    char *data = malloc(12000);
    memset(data, 'r', 12000);
    hy_outq_push_mem(&s.outq, data, 12000, NULL, NULL);
    calls = 0;
    hy_sock_write(&s, on_done);
    ok(calls == 0); /* held back by the cap */
    ok(s.bytes_out < 12000);
    run_until(&calls, 1, 500);
    is_int(calls, 1);
    ok(got_err == NULL);
    is_int(read_all(peer, b, sizeof(b), 12000), 12000);
    /* paced, then the limit lifted while the output waits for the timer */
    hy_sock_set_rate(&s, 1000, 0);
    memset(data, 's', 12000);
    hy_outq_push_mem(&s.outq, data, 12000, NULL, NULL);
    calls = 0;
    hy_sock_write(&s, on_done);
    ok(calls == 0);
    hy_sock_set_rate(&s, 0, 0);
    ok(s.rate == NULL && s.write_cap == UINT64_MAX);
    hy_sock_write(&s, on_done); /* the protocol writes again once the cap is gone */
    run_until(&calls, 1, 200);
    ok(calls >= 1 && got_err == NULL);
    ok(read_all(peer, b, sizeof(b), 12000) == 12000);
    free(data);
    hy_sock_close(&s);
    hy_loop_run_once(&loop, 0);
    close(peer);
}

/* pushes n segments of len bytes, segment i filled with 'a' + i % 26; the peer must read them in order */
static void push_segments(hy_sock_t *s, char *expect, int n, size_t len)
{
    for (int i = 0; i < n; i++) {
        memset(expect + (size_t)i * len, 'a' + i % 26, len);
        hy_outq_push_copy(&s->outq, expect + (size_t)i * len, len);
    }
}

static void test_gathered_segments(void)
{
    hy_sock_t s;
    int peer;
    static char expect[8192], b[8192];
    ok(tcp_pair(&s, &peer) == 0);
    /* a head, a body and a tail (under 2 KiB together: copied, one send) */
    push_segments(&s, expect, 3, 283);
    hy_sock_write(&s, NULL);
    is_int(read_all(peer, b, sizeof(b), 849), 849);
    ok(memcmp(b, expect, 849) == 0);
    /* 20 segments of 300 bytes (6,000: writev) */
    push_segments(&s, expect, 20, 300);
    hy_sock_write(&s, NULL);
    is_int(read_all(peer, b, sizeof(b), 6000), 6000);
    ok(memcmp(b, expect, 6000) == 0);
    /* limit_rate's cap inside the gathered bytes: the first send stops there, the rest follows in order */
    hy_sock_set_rate(&s, 500, 0); /* 500 bytes now, the rest a second later */
    push_segments(&s, expect, 4, 250);
    calls = 0;
    hy_sock_write(&s, on_done);
    ok(calls == 0 && s.bytes_out < 849 + 6000 + 1000);
    run_until(&calls, 1, 200);
    is_int(calls, 1);
    is_int(read_all(peer, b, sizeof(b), 1000), 1000);
    ok(memcmp(b, expect, 1000) == 0);
    hy_sock_close(&s);
    hy_loop_run_once(&loop, 0);
    close(peer);
}

static int reads;
static const char *read_err;

static void on_read(hy_sock_t *s, const char *err)
{
    (void)s;
    reads++;
    read_err = err;
}

static void test_reads_and_closing(void)
{
    hy_sock_t s;
    int peer;
    ok(tcp_pair(&s, &peer) == 0);
    reads = 0;
    hy_sock_read_start(&s, on_read);
    (void)!write(peer, "abc", 3);
    run_until(&reads, 1, 100);
    ok(reads == 1 && read_err == NULL);
    is_strn(hy_buf_data(&s.input), s.input.len, "abc");
    ok(hy_sock_has_unread(&s)); /* buffered input counts */
    hy_buf_consume(&s.input, 3);
    shutdown(peer, SHUT_WR);
    run_until(&reads, 2, 100);
    ok(read_err == hy_err_eof && s.is_eof);
    ok(!hy_sock_has_unread(&s)); /* EOF: nothing more will come */
    hy_sock_read_now(&s);        /* no longer reading: nothing happens */
    is_int(reads, 2);
    hy_sock_close(&s);
    hy_sock_close(&s); /* twice: a no-op */
    ok(!hy_sock_has_unread(&s));
    is_int(hy_sock_shutdown_write(&s), -EBADF);
    calls = 0;
    hy_outq_push_copy(&s.outq, "late", 4);
    hy_sock_write(&s, on_done);
    ok(calls == 1 && got_err == hy_err_io);
    hy_outq_clear(&s.outq);
    hy_loop_run_once(&loop, 0);
    close(peer);

    /* a reset: the peer's next read fails with ECONNRESET instead of EOF */
    ok(tcp_pair(&s, &peer) == 0);
    (void)!write(peer, "unread", 6);
    usleep(10000);
    hy_sock_reset(&s);
    hy_sock_reset(&s); /* closed already: no option to set */
    hy_loop_run_once(&loop, 0);
    char b[8];
    errno = 0;
    ok(read(peer, b, sizeof(b)) < 0 && errno == ECONNRESET);
    close(peer);
}

static void test_connect_from(void)
{
    int l = socket(AF_INET, SOCK_STREAM, 0);
    struct sockaddr_in sa = {.sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
    bind(l, (struct sockaddr *)&sa, sizeof(sa));
    socklen_t sl = sizeof(sa);
    getsockname(l, (struct sockaddr *)&sa, &sl);
    listen(l, 4);
    struct sockaddr_in local = {.sin_family = AF_INET};
    inet_pton(AF_INET, "127.0.0.2", &local.sin_addr);
    hy_sock_t s;
    calls = 0;
    is_int(hy_sock_connect_from(&s, &loop, (struct sockaddr *)&sa, sizeof(sa), (struct sockaddr *)&local,
                                sizeof(local), 2000, on_done),
           0);
    run_until(&calls, 1, 100);
    ok(calls == 1 && got_err == NULL);
    struct sockaddr_in seen;
    socklen_t seen_len = sizeof(seen);
    int a = accept(l, (struct sockaddr *)&seen, &seen_len);
    ok(a >= 0 && seen.sin_addr.s_addr == local.sin_addr.s_addr); /* the connection comes from 127.0.0.2 */
    close(a);
    hy_sock_close(&s);
    hy_loop_run_once(&loop, 0);
    /* an address this host does not have: the error comes back at once, no socket is left */
    inet_pton(AF_INET, "192.0.2.1", &local.sin_addr);
    is_int(hy_sock_connect_from(&s, &loop, (struct sockaddr *)&sa, sizeof(sa), (struct sockaddr *)&local,
                                sizeof(local), 2000, on_done),
           -EADDRNOTAVAIL);
    close(l);
}

int main(void)
{
    hy_clock_update();
    if (hy_loop_init(&loop) != 0)
        return 1;
    subtest("file regions: sendfile on and off, a file that shrank", test_file_regions);
    subtest("MSG_MORE, cork, nodelay, limit_rate", test_more_and_rate);
    subtest("small segments copied into one send, many by writev, a rate cap inside them", test_gathered_segments);
    subtest("reads to EOF, closed sockets, reset", test_reads_and_closing);
    subtest("connect from a local address", test_connect_from);
    return done_testing();
}
