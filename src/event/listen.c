/* listen.c — listeners. On EMFILE/ENFILE the listener pauses for a short back-off instead of spinning on a
 * readable socket it cannot accept from; existing connections keep working. */
#include <errno.h>
#include <string.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>
#include <fcntl.h>
#include <netdb.h>
#include <arpa/inet.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <sys/un.h>
#include <sys/stat.h>
#include "listen.h"
#include "../core/log.h"
#include "../core/clock.h"
#include "../core/str.h"

#define EMFILE_BACKOFF_MS 100

static void spec_defaults(hy_listen_spec_t *spec)
{
    memset(spec, 0, sizeof(*spec));
    spec->backlog = -1;
    spec->rcvbuf = spec->sndbuf = -1;
    spec->ipv6only = -1;
    spec->keepalive = -1;
}

static void spec_text(hy_listen_spec_t *spec)
{
    char host[INET6_ADDRSTRLEN];
    if (spec->addr.ss_family == AF_INET) {
        struct sockaddr_in *sin = (struct sockaddr_in *)&spec->addr;
        hy_inet_ntop(AF_INET, &sin->sin_addr, host, sizeof(host));
        snprintf(spec->text, sizeof(spec->text), "%s:%u", host, ntohs(sin->sin_port));
    } else if (spec->addr.ss_family == AF_INET6) {
        struct sockaddr_in6 *sin6 = (struct sockaddr_in6 *)&spec->addr;
        hy_inet_ntop(AF_INET6, &sin6->sin6_addr, host, sizeof(host));
        snprintf(spec->text, sizeof(spec->text), "[%s]:%u", host, ntohs(sin6->sin6_port));
    } else {
        struct sockaddr_un *sun = (struct sockaddr_un *)&spec->addr;
        snprintf(spec->text, sizeof(spec->text), "unix:%s", sun->sun_path);
    }
}

/* "8080" or a range "8080-8085" (nginx 1.27.3+): 0 and *lo, *hi (hi == lo for one port), or -1 */
static int parse_ports(const char *s, size_t n, int *lo, int *hi)
{
    const char *dash = n ? memchr(s, '-', n) : NULL;
    int64_t a = hy_parse_int(s, dash ? (size_t)(dash - s) : n);
    int64_t b = dash ? hy_parse_int(dash + 1, n - (size_t)(dash + 1 - s)) : a;
    if (a < 1 || a > 65535 || b < a || b > 65535)
        return -1;
    *lo = (int)a, *hi = (int)b;
    return 0;
}

void hy_listen_set_port(hy_listen_spec_t *spec, int port)
{
    if (spec->addr.ss_family == AF_INET)
        ((struct sockaddr_in *)&spec->addr)->sin_port = htons((uint16_t)port);
    else if (spec->addr.ss_family == AF_INET6)
        ((struct sockaddr_in6 *)&spec->addr)->sin6_port = htons((uint16_t)port);
    else
        return;
    spec->port_last = 0;
    spec_text(spec);
}

int hy_listen_parse(const char *s, size_t n, hy_listen_spec_t *spec, const char **err)
{
    spec_defaults(spec);
    if (n >= 5 && memcmp(s, "unix:", 5) == 0) {
        struct sockaddr_un *sun = (struct sockaddr_un *)&spec->addr;
        if (n - 5 == 0 || n - 5 >= sizeof(sun->sun_path)) { /* nginx's words */
            *err = n - 5 == 0 ? "no path in the unix domain socket" : "too long path in the unix domain socket";
            return -1;
        }
        sun->sun_family = AF_UNIX;
        memcpy(sun->sun_path, s + 5, n - 5);
        spec->addr_len = (socklen_t)sizeof(*sun);
        spec->is_unix = true;
        spec_text(spec);
        return 0;
    }
    char host[256] = "";
    const char *port_s = s;
    size_t port_n = n;
    if (n > 0 && s[0] == '[') {
        const char *close_br = memchr(s, ']', n);
        if (!close_br || (size_t)(close_br - s - 1) >= sizeof(host)) {
            *err = "invalid host"; /* nginx's words for an unclosed bracket */
            return -1;
        }
        memcpy(host, s + 1, (size_t)(close_br - s - 1));
        port_s = close_br + 1;
        port_n = n - (size_t)(port_s - s);
        if (port_n == 0) {
            port_s = "80", port_n = 2;
        } else if (port_s[0] != ':') {
            *err = "invalid host";
            return -1;
        } else {
            port_s++, port_n--;
        }
    } else {
        const char *colon = memrchr(s, ':', n);
        if (colon) {
            if ((size_t)(colon - s) >= sizeof(host)) {
                *err = "invalid host";
                return -1;
            }
            memcpy(host, s, (size_t)(colon - s));
            port_s = colon + 1;
            port_n = n - (size_t)(port_s - s);
        } else if (hy_parse_int(s, n) < 0 && parse_ports(s, n, &(int){0}, &(int){0}) != 0) { /* only a host: 80 */
            if (n >= sizeof(host)) {
                *err = "invalid host";
                return -1;
            }
            memcpy(host, s, n);
            port_s = "80", port_n = 2;
        }
    }
    int port, port_last;
    if (parse_ports(port_s, port_n, &port, &port_last) != 0) {
        *err = "invalid port";
        return -1;
    }
    if (strchr(host, ':') || (s[0] == '[')) {
        struct sockaddr_in6 *sin6 = (struct sockaddr_in6 *)&spec->addr;
        sin6->sin6_family = AF_INET6;
        sin6->sin6_port = htons((uint16_t)port);
        if (host[0] && strcmp(host, "::") != 0 && inet_pton(AF_INET6, host, &sin6->sin6_addr) != 1) {
            *err = "invalid IPv6 address";
            return -1;
        }
        spec->addr_len = sizeof(*sin6);
    } else {
        struct sockaddr_in *sin = (struct sockaddr_in *)&spec->addr;
        sin->sin_family = AF_INET;
        sin->sin_port = htons((uint16_t)port);
        if (host[0] == '\0' || strcmp(host, "*") == 0) {
            sin->sin_addr.s_addr = htonl(INADDR_ANY);
        } else if (inet_pton(AF_INET, host, &sin->sin_addr) != 1) {
            struct addrinfo hints = {.ai_family = AF_INET, .ai_socktype = SOCK_STREAM}, *res = NULL;
            if (getaddrinfo(host, NULL, &hints, &res) != 0 || res == NULL) {
                *err = "host not found";
                return -1;
            }
            sin->sin_addr = ((struct sockaddr_in *)res->ai_addr)->sin_addr;
            freeaddrinfo(res);
        }
        spec->addr_len = sizeof(*sin);
    }
    spec_text(spec);
    spec->port_last = port_last > port ? port_last : 0;
    return 0;
}

bool hy_listen_same_addr(const hy_listen_spec_t *a, const hy_listen_spec_t *b)
{
    return a->addr_len == b->addr_len && strcmp(a->text, b->text) == 0;
}

int hy_listen_somaxconn(void)
{
    static int cached = -1;
    if (cached > 0)
        return cached;
    cached = 4096;
    FILE *f = fopen("/proc/sys/net/core/somaxconn", "re");
    if (f) {
        int v;
        if (fscanf(f, "%d", &v) == 1 && v > 0)
            cached = v;
        fclose(f);
    }
    return cached;
}

int hy_listen_open(const hy_listen_spec_t *spec, const char **what)
{
    int fd = socket(spec->addr.ss_family, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
    if (fd < 0) {
        *what = "socket()";
        return -errno;
    }
    int one = 1;
    if (!spec->is_unix)
        setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
    if (spec->reuseport)
        setsockopt(fd, SOL_SOCKET, SO_REUSEPORT, &one, sizeof(one));
    if (spec->addr.ss_family == AF_INET6 && spec->ipv6only >= 0)
        setsockopt(fd, IPPROTO_IPV6, IPV6_V6ONLY, &spec->ipv6only, sizeof(int));
    else if (spec->addr.ss_family == AF_INET6) /* nginx's default: ipv6only=on */
        setsockopt(fd, IPPROTO_IPV6, IPV6_V6ONLY, &one, sizeof(one));
    if (spec->rcvbuf > 0)
        setsockopt(fd, SOL_SOCKET, SO_RCVBUF, &spec->rcvbuf, sizeof(int));
    if (spec->sndbuf > 0)
        setsockopt(fd, SOL_SOCKET, SO_SNDBUF, &spec->sndbuf, sizeof(int));
    if (spec->keepalive == 1) {
        setsockopt(fd, SOL_SOCKET, SO_KEEPALIVE, &one, sizeof(one));
        if (spec->keepidle > 0)
            setsockopt(fd, IPPROTO_TCP, TCP_KEEPIDLE, &spec->keepidle, sizeof(int));
        if (spec->keepintvl > 0)
            setsockopt(fd, IPPROTO_TCP, TCP_KEEPINTVL, &spec->keepintvl, sizeof(int));
        if (spec->keepcnt > 0)
            setsockopt(fd, IPPROTO_TCP, TCP_KEEPCNT, &spec->keepcnt, sizeof(int));
    }
    if (spec->is_unix) {
        /* a stale socket file from a crashed run would make bind fail: remove it if nobody listens */
        const struct sockaddr_un *sun = (const struct sockaddr_un *)&spec->addr;
        struct stat st;
        if (stat(sun->sun_path, &st) == 0 && S_ISSOCK(st.st_mode)) {
            int probe = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
            if (probe >= 0 && connect(probe, (const struct sockaddr *)sun, sizeof(*sun)) != 0 &&
                errno == ECONNREFUSED)
                unlink(sun->sun_path);
            if (probe >= 0)
                close(probe);
        }
    }
    if (bind(fd, (const struct sockaddr *)&spec->addr, spec->addr_len) != 0) {
        *what = "bind()";
        goto fail;
    }
    if (spec->is_unix)
        chmod(((const struct sockaddr_un *)&spec->addr)->sun_path, 0666);
    int backlog = spec->backlog > 0 ? spec->backlog : hy_listen_somaxconn();
    if (listen(fd, backlog) != 0) {
        *what = "listen()";
        goto fail;
    }
    if (spec->deferred && !spec->is_unix) {
        int secs = 1;
        setsockopt(fd, IPPROTO_TCP, TCP_DEFER_ACCEPT, &secs, sizeof(secs));
    }
    return fd;
fail:;
    int e = errno;
    close(fd);
    return -e;
}

static void on_backoff(hy_timer_t *t)
{
    hy_listener_t *l = t->data;
    l->paused = false;
    hy_io_set(l->loop, &l->io, HY_EV_READ);
}

static void on_listen_io(hy_io_t *io, unsigned rev)
{
    hy_listener_t *l = io->data;
    for (int i = 0; i < l->accept_batch; i++) {
        struct sockaddr_storage peer;
        socklen_t plen = sizeof(peer);
        int fd = accept4(l->fd, (struct sockaddr *)&peer, &plen, SOCK_NONBLOCK | SOCK_CLOEXEC);
        if (fd < 0) {
            if (errno == EINTR || errno == ECONNABORTED)
                continue;
            if (errno == EMFILE || errno == ENFILE || errno == ENOBUFS || errno == ENOMEM) {
                uint64_t now = hy_clock_now_ms();
                if (now - l->last_emfile_log_ms >= 1000) {
                    l->last_emfile_log_ms = now;
                    hy_log(HY_LOG_ERR, "accept4() failed (%d: %s) on %s, pausing accepts for %d ms", errno,
                           strerror(errno), l->spec.text, EMFILE_BACKOFF_MS);
                }
                l->paused = true;
                hy_io_set(l->loop, &l->io, 0);
                hy_timer_link(l->loop, &l->backoff, EMFILE_BACKOFF_MS);
            }
            return;
        }
        l->on_accept(l, fd, &peer, plen);
        if (l->paused)
            return;
    }
}

void hy_listener_start(hy_listener_t *l, hy_loop_t *loop, int fd, hy_accept_cb cb, void *data)
{
    l->loop = loop;
    l->fd = fd;
    l->on_accept = cb;
    l->data = data;
    if (l->accept_batch <= 0)
        l->accept_batch = 16;
    l->backoff.cb = on_backoff;
    l->backoff.data = l;
    hy_io_init(&l->io, fd, on_listen_io, l);
    hy_io_set(loop, &l->io, HY_EV_READ);
}

void hy_listener_stop(hy_listener_t *l)
{
    hy_timer_unlink(l->loop, &l->backoff);
    hy_io_remove(l->loop, &l->io);
}
