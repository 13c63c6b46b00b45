/* sock_test.c — the socket layer's transport seam on real loopback sockets: outbound connect (TCP success,
 * refusal, unix socket, timeout on a listener whose queue is full), the callback never firing before
 * hy_sock_connect returns, reads/writes through the transport, has_unread peeking, shutdown of the write side,
 * the cached local address, and the plain transport's empty handshake/ALPN/SNI. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <sys/un.h>
#include "../harness.h"
#include "event/sock.h"
#include "core/clock.h"

static hy_loop_t loop;
static const char *got_err;
static int calls;

static void on_conn(hy_sock_t *s, const char *err)
{
    got_err = err;
    calls++;
}

static void run_until(int *counter, int want, int max_iter)
{
    for (int i = 0; i < max_iter && *counter < want; i++)
        hy_loop_run_once(&loop, 50);
}

static int tcp_listener(struct sockaddr_in *sa, int backlog)
{
    int fd = socket(AF_INET, SOCK_STREAM, 0);
    memset(sa, 0, sizeof(*sa));
    sa->sin_family = AF_INET;
    sa->sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    bind(fd, (struct sockaddr *)sa, sizeof(*sa));
    socklen_t l = sizeof(*sa);
    getsockname(fd, (struct sockaddr *)sa, &l);
    listen(fd, backlog);
    return fd;
}

static void test_connect_tcp(void)
{
    struct sockaddr_in sa;
    int lfd = tcp_listener(&sa, 16);
    hy_sock_t s;
    calls = 0;
    is_int(hy_sock_connect(&s, &loop, (struct sockaddr *)&sa, sizeof(sa), 2000, on_conn), 0);
    is_int(calls, 0); /* never before it returns */
    run_until(&calls, 1, 100);
    is_int(calls, 1);
    ok(got_err == NULL);
    int afd = accept(lfd, NULL, NULL);
    ok(afd >= 0);
    /* plaintext through the transport: write from the sock, read at the peer */
    hy_outq_push_mem(&s.outq, "ping", 4, NULL, NULL);
    hy_sock_write(&s, NULL);
    char b[8] = {0};
    is_int((int)read(afd, b, sizeof(b)), 4);
    is_str(b, "ping");
    /* has_unread peeks without consuming; the local address is the connection's */
    ok(!hy_sock_has_unread(&s));
    (void)!write(afd, "x", 1);
    for (int i = 0; i < 50 && !hy_sock_has_unread(&s); i++)
        usleep(1000);
    ok(hy_sock_has_unread(&s));
    ok(hy_sock_has_unread(&s)); /* still there: peeked, not read */
    socklen_t ll;
    const struct sockaddr_storage *la = hy_sock_local_addr(&s, &ll);
    ok(la != NULL && la->ss_family == AF_INET && ((const struct sockaddr_in *)la)->sin_addr.s_addr == htonl(INADDR_LOOPBACK));
    /* the plain transport: no handshake, no ALPN, no SNI */
    calls = 0;
    hy_sock_handshake(&s, on_conn);
    is_int(calls, 1);
    ok(got_err == NULL);
    is_int((int)hy_sock_alpn(&s).len, 0);
    is_int((int)hy_sock_server_name(&s).len, 0);
    /* shutdown of our side: the peer reads EOF */
    is_int(hy_sock_shutdown_write(&s), 0);
    is_int((int)read(afd, b, sizeof(b)), 0);
    hy_sock_close(&s);
    hy_loop_run_once(&loop, 0);
    close(afd);
    close(lfd);
}

static void test_connect_refused(void)
{
    struct sockaddr_in sa;
    int lfd = tcp_listener(&sa, 1);
    close(lfd); /* nothing listens on that port now */
    hy_sock_t s;
    calls = 0;
    is_int(hy_sock_connect(&s, &loop, (struct sockaddr *)&sa, sizeof(sa), 2000, on_conn), 0);
    is_int(calls, 0);
    run_until(&calls, 1, 100);
    is_int(calls, 1);
    ok(got_err == hy_err_connect);
    is_int(s.last_errno, ECONNREFUSED);
    hy_sock_close(&s);
    hy_loop_run_once(&loop, 0);
}

static void test_connect_unix(void)
{
    struct sockaddr_un su = {.sun_family = AF_UNIX};
    snprintf(su.sun_path, sizeof(su.sun_path), "/tmp/hy-sock-test-%d", (int)getpid());
    unlink(su.sun_path);
    int lfd = socket(AF_UNIX, SOCK_STREAM, 0);
    ok(bind(lfd, (struct sockaddr *)&su, sizeof(su)) == 0);
    listen(lfd, 4);
    hy_sock_t s;
    calls = 0;
    is_int(hy_sock_connect(&s, &loop, (struct sockaddr *)&su, sizeof(su), 2000, on_conn), 0);
    is_int(calls, 0); /* a unix connect completes at once, but is reported from the loop */
    run_until(&calls, 1, 100);
    is_int(calls, 1);
    ok(got_err == NULL);
    hy_sock_set_nodelay(&s); /* no-ops on unix sockets, no error */
    hy_sock_set_cork(&s, true);
    ok(!s.is_corked);
    hy_sock_close(&s);
    hy_loop_run_once(&loop, 0);
    close(lfd);
    unlink(su.sun_path);
    /* a unix path nobody listens on */
    calls = 0;
    is_int(hy_sock_connect(&s, &loop, (struct sockaddr *)&su, sizeof(su), 2000, on_conn), 0);
    run_until(&calls, 1, 100);
    ok(got_err == hy_err_connect);
    hy_sock_close(&s);
    hy_loop_run_once(&loop, 0);
}

static void test_connect_timeout(void)
{
    /* a listener with a full accept queue drops SYNs, so a connect neither succeeds nor fails: the timeout ends
     * it (loopback only) */
    struct sockaddr_in sa;
    int lfd = tcp_listener(&sa, 0);
    int fill[4];
    for (int i = 0; i < 4; i++) {
        fill[i] = socket(AF_INET, SOCK_STREAM | SOCK_NONBLOCK, 0);
        connect(fill[i], (struct sockaddr *)&sa, sizeof(sa));
    }
    usleep(20000);
    hy_sock_t s;
    calls = 0;
    is_int(hy_sock_connect(&s, &loop, (struct sockaddr *)&sa, sizeof(sa), 150, on_conn), 0);
    run_until(&calls, 1, 200);
    is_int(calls, 1);
    ok(got_err == hy_err_timeout);
    hy_sock_close(&s);
    hy_loop_run_once(&loop, 0);
    for (int i = 0; i < 4; i++)
        close(fill[i]);
    close(lfd);
}

int main(void)
{
    hy_clock_update();
    ok(hy_loop_init(&loop) == 0);
    subtest("connect over TCP, transport I/O, peek, shutdown, local address", test_connect_tcp);
    subtest("connect refused", test_connect_refused);
    subtest("connect to a unix socket", test_connect_unix);
    subtest("connect timeout", test_connect_timeout);
    return done_testing();
}
