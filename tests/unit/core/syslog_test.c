/* syslog_test.c — the syslog target's parser (server forms and nginx's messages for bad ones) and the datagrams
 * hy_syslog_send writes (RFC 3164 head, nohostname, a forked process opening its own socket), read back from a
 * unix datagram socket and a UDP socket on ::1. */
#include <stdlib.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <netinet/in.h>
#include <arpa/inet.h>
#include <unistd.h>
#include "../harness.h"
#include "core/mem.h"
#include "core/syslog.h"

static hy_pool_t *pool;
static char err[256];

static int parse(const char *spec, hy_syslog_peer_t **p)
{
    err[0] = '\0';
    return hy_syslog_parse(pool, spec, strlen(spec), p, err, sizeof(err));
}

static void test_server_forms(void)
{
    hy_syslog_peer_t *p = NULL;
    is_int(parse("server=unix:/dev/log", &p), 0);
    ok(p != NULL && p->addr.ss_family == AF_UNIX);
    if (p != NULL) {
        is_str(((struct sockaddr_un *)&p->addr)->sun_path, "/dev/log");
        is_str(p->server, "unix:/dev/log");
        is_int(p->facility, 23); /* local7 */
        is_int(p->severity, 6);  /* info */
        is_str(p->tag, "nginx");
    }
    is_int(parse("server=[::1]:5140,facility=user,severity=alert,tag=web_1,nohostname", &p), 0);
    if (ok(p != NULL && p->addr.ss_family == AF_INET6)) {
        struct sockaddr_in6 *s6 = (struct sockaddr_in6 *)&p->addr;
        is_int(ntohs(s6->sin6_port), 5140);
        ok(IN6_IS_ADDR_LOOPBACK(&s6->sin6_addr));
        is_int(p->facility, 1);
        is_int(p->severity, 1);
        is_str(p->tag, "web_1");
        ok(p->nohostname);
    }
    is_int(parse("server=[::1]", &p), 0); /* the default port */
    if (ok(p != NULL && p->addr.ss_family == AF_INET6))
        is_int(ntohs(((struct sockaddr_in6 *)&p->addr)->sin6_port), 514);
    is_int(parse("server=127.0.0.1:65535", &p), 0);
    if (ok(p != NULL && p->addr.ss_family == AF_INET))
        is_int(ntohs(((struct sockaddr_in *)&p->addr)->sin_port), 65535);
}

static void test_bad_specs(void)
{
    static const struct {
        const char *spec, *msg;
    } cases[] = {
        {"server=[::1:514", "invalid host in syslog server \"[::1:514\""},
        {"server=127.0.0.1:", "invalid port in syslog server \"127.0.0.1:\""},
        {"server=127.0.0.1:0", "invalid port in syslog server \"127.0.0.1:0\""},
        {"server=127.0.0.1:65536", "invalid port in syslog server \"127.0.0.1:65536\""},
        {"server=127.0.0.1:123456", "invalid port in syslog server \"127.0.0.1:123456\""},
        {"server=127.0.0.1:5a", "invalid port in syslog server \"127.0.0.1:5a\""},
        {"server=[::1]:x", "invalid port in syslog server \"[::1]:x\""},
        {"server=:514", "no host in syslog server \":514\""},
        {"server=[]:514", "no host in syslog server \"[]:514\""},
        {"server=127.0.0.1,server=127.0.0.2", "duplicate syslog \"server\""},
        {"server=127.0.0.1,facility=nope", "unknown syslog facility \"nope\""},
        {"server=127.0.0.1,severity=loud", "unknown syslog severity \"loud\""},
        {"server=127.0.0.1,tag=a-b", "syslog \"tag\" only allows alphanumeric characters and underscore"},
        {"server=127.0.0.1,tag=aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa", "syslog tag length exceeds 32"},
        {"server=127.0.0.1,bogus", "unknown syslog parameter \"bogus\""},
        {"facility=user", "no syslog server specified"},
        {"", "no syslog server specified"},
    };
    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        hy_syslog_peer_t *p = NULL;
        if (!is_int(parse(cases[i].spec, &p), -1))
            printf("# spec %s\n", cases[i].spec);
        is_str(err, cases[i].msg);
    }
    /* a unix path that does not fit sun_path */
    char spec[256] = "server=unix:/";
    memset(spec + strlen(spec), 'x', 120);
    hy_syslog_peer_t *p = NULL;
    is_int(parse(spec, &p), -1);
    ok(strncmp(err, "too long path in the unix domain socket \"unix:/xxx", 50) == 0);
}

static int unix_receiver(const char *path)
{
    int fd = socket(AF_UNIX, SOCK_DGRAM, 0);
    struct sockaddr_un un = {.sun_family = AF_UNIX};
    snprintf(un.sun_path, sizeof(un.sun_path), "%s", path);
    unlink(path);
    if (fd < 0 || bind(fd, (struct sockaddr *)&un, sizeof(un)) != 0)
        return -1;
    struct timeval tv = {.tv_sec = 5};
    setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
    return fd;
}

static ssize_t recv_msg(int fd, char *buf, size_t cap)
{
    ssize_t n = recv(fd, buf, cap - 1, 0);
    buf[n > 0 ? n : 0] = '\0';
    return n;
}

/* "<PRI>Mmm dd hh:mm:ss " then the rest: returns the rest, or NULL when the head is malformed */
static const char *after_stamp(const char *m, const char *pri)
{
    size_t pl = strlen(pri);
    if (strncmp(m, pri, pl) != 0)
        return NULL;
    m += pl;
    if (strlen(m) < 16 || m[3] != ' ' || m[6] != ' ' || m[9] != ':' || m[12] != ':' || m[15] != ' ')
        return NULL;
    return m + 16;
}

static void test_send_unix(void)
{
    char path[64], spec[128], buf[8192];
    snprintf(path, sizeof(path), "/tmp/hy_syslog_test_%d.sock", (int)getpid());
    int rfd = unix_receiver(path);
    if (!ok(rfd >= 0))
        return;
    hy_syslog_peer_t *p = NULL;
    snprintf(spec, sizeof(spec), "server=unix:%s,tag=tst,nohostname", path);
    is_int(parse(spec, &p), 0);
    hy_syslog_send(p, -1, "hello", 5); /* the peer's severity: local7.info = 190 */
    recv_msg(rfd, buf, sizeof(buf));
    const char *rest = after_stamp(buf, "<190>");
    ok(rest != NULL && strcmp(rest, "tst: hello") == 0);
    hy_syslog_send(p, 3, "err", 3); /* a message's own severity: local7.err = 187 */
    recv_msg(rfd, buf, sizeof(buf));
    rest = after_stamp(buf, "<187>");
    ok(rest != NULL && strcmp(rest, "tst: err") == 0);

    /* a forked child does not use the parent's socket: it opens its own (and the parent keeps working) */
    int parent_fd = p->fd;
    ok(parent_fd >= 0);
    pid_t pid = fork();
    if (pid == 0) {
        hy_syslog_send(p, -1, "child", 5);
        _exit(p->fd >= 0 && p->pid == (int)getpid() ? 0 : 1);
    }
    int st = -1;
    waitpid(pid, &st, 0);
    ok(WIFEXITED(st) && WEXITSTATUS(st) == 0);
    recv_msg(rfd, buf, sizeof(buf));
    rest = after_stamp(buf, "<190>");
    ok(rest != NULL && strcmp(rest, "tst: child") == 0);
    is_int(p->fd, parent_fd);

    /* a message longer than a datagram's buffer is cut, not overflowed */
    static char big[10000];
    memset(big, 'm', sizeof(big));
    hy_syslog_send(p, -1, big, sizeof(big));
    ssize_t n = recv_msg(rfd, buf, sizeof(buf));
    is_int(n, 4096);

    /* the receiver goes away: sending fails quietly, and works again once it is back */
    close(rfd);
    unlink(path);
    hy_syslog_send(p, -1, "lost", 4);
    rfd = unix_receiver(path);
    hy_syslog_send(p, -1, "again", 5);
    hy_syslog_send(p, -1, "again", 5);
    n = recv_msg(rfd, buf, sizeof(buf));
    rest = after_stamp(buf, "<190>");
    ok(n > 0 && rest != NULL && strcmp(rest, "tst: again") == 0);
    close(rfd);
    unlink(path);
}

static void test_send_udp6(void)
{
    int rfd = socket(AF_INET6, SOCK_DGRAM, 0);
    struct sockaddr_in6 a = {.sin6_family = AF_INET6, .sin6_addr = IN6ADDR_LOOPBACK_INIT};
    socklen_t al = sizeof(a);
    if (!ok(rfd >= 0 && bind(rfd, (struct sockaddr *)&a, sizeof(a)) == 0 &&
            getsockname(rfd, (struct sockaddr *)&a, &al) == 0))
        return;
    struct timeval tv = {.tv_sec = 5};
    setsockopt(rfd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
    char spec[128], buf[4200], host[256];
    snprintf(spec, sizeof(spec), "server=[::1]:%d,facility=daemon,severity=warn", ntohs(a.sin6_port));
    hy_syslog_peer_t *p = NULL;
    is_int(parse(spec, &p), 0);
    hy_syslog_send(p, -1, "x", 1); /* daemon.warning = 3*8+4 */
    recv_msg(rfd, buf, sizeof(buf));
    const char *rest = after_stamp(buf, "<28>");
    /* with the host name (lower-cased) before the tag */
    gethostname(host, sizeof(host));
    for (char *c = host; *c; c++)
        if (*c >= 'A' && *c <= 'Z')
            *c |= 0x20;
    char want[300];
    snprintf(want, sizeof(want), "%s nginx: x", host);
    ok(rest != NULL && strcmp(rest, want) == 0);
    close(rfd);
}

int main(void)
{
    pool = hy_pool_create(4096);
    subtest("server forms", test_server_forms);
    subtest("bad specs give nginx's messages", test_bad_specs);
    subtest("datagrams on a unix socket", test_send_unix);
    subtest("datagrams over UDP on ::1", test_send_udp6);
    hy_pool_destroy(pool); /* closes the peers' sockets */
    return done_testing();
}
