/* floor.c — the least a reverse proxy can do per request, as a yardstick for bench/proxy.sh and bench/apps.sh.
 *
 * It makes the same socket calls per request as hayate and nginx do in those benchmarks, and no HTTP work beyond
 * finding where a message ends: the client's request is forwarded byte for byte, the upstream's response is sent
 * back byte for byte (FastCGI: its stdout under a fixed status line). Each client connection keeps its own upstream
 * connection (http-close: one per request). One process, one epoll set, every socket registered once,
 * edge-triggered. Its CPU per request is therefore a floor for any proxy on the same machine and kernel: what is
 * left when the proxy's own code costs next to nothing. Not a server: no timeouts, no partial writes (a send that
 * does not take everything closes the client and counts a failure), no request bodies.
 *
 *   usage: floor PORT UPSTREAM MODE [SCRIPT]
 *     PORT      listens on 127.0.0.1:PORT
 *     UPSTREAM  127.0.0.1:PORT or unix:PATH
 *     MODE      http-ka     HTTP/1.1 with a kept upstream connection per client connection (seed 003-ka)
 *               fcgi-ka     FastCGI with FCGI_KEEP_CONN on a kept connection, SCRIPT as SCRIPT_FILENAME (php-fcgi-ka)
 *               http-close  HTTP with a connection per request (seed 004 with and without keepalive: gunicorn's
 *                           sync worker closes every connection). "Connection: close" is added to the request, which
 *                           is sent right after connect(2) (on loopback and unix sockets the connection is up by then;
 *                           EPOLLOUT is asked for only if the send finds it is not); the backend's Connection header
 *                           is taken out of the response, so the client keeps its connection; the upstream connection
 *                           ends after the response, with a reset if the backend closed first (TCP), as hayate does.
 *                           Not a floor for seed003-noka: there it answers before the backend's FIN arrives, closes
 *                           first, and pays the FIN round and a TIME_WAIT that the saturated servers do not.
 *   SIGTERM, SIGINT or SIGQUIT ends it; it prints "floor: N requests, F failures" on stderr.
 *
 *   cc -O2 -Wall -Wextra -Werror -o floor bench/floor.c   (bench/lib.sh: floor_build) */
#define _GNU_SOURCE
#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/epoll.h>
#include <sys/socket.h>
#include <sys/uio.h>
#include <sys/un.h>
#include <unistd.h>

enum { MODE_HTTP_KA, MODE_FCGI_KA, MODE_HTTP_CLOSE };
enum { BUF = 16384 };

struct side { /* one socket: the client's or the upstream's */
    int fd;
    int is_up;
    struct conn *c;
};

struct conn {
    struct side cl, up; /* up.fd is -1 while there is no upstream connection */
    size_t cl_len, up_len;
    int busy;     /* a request is at the upstream */
    int up_ready; /* the upstream socket took its connect (an EPOLLOUT arrived or a send went through) */
    int cl_edge;  /* the client's socket became readable while a request was at the upstream */
    int dead;     /* closed; freed after the batch of events (a later event of the batch may name it) */
    struct conn *next_dead;
    char cl_buf[4096];
    char up_buf[BUF];
};

static int mode, ep;
static struct sockaddr_storage up_addr;
static socklen_t up_addrlen;
static char fcgi_req[2048];
static size_t fcgi_req_len;
static unsigned long requests, failures;
static volatile sig_atomic_t stop;
static struct conn *dead;

static void on_term(int sig) {
    (void)sig;
    stop = 1;
}

static void watch(struct side *s, uint32_t out) {
    struct epoll_event ev = {.events = EPOLLIN | out | EPOLLRDHUP | EPOLLET, .data.ptr = s};
    if (epoll_ctl(ep, EPOLL_CTL_ADD, s->fd, &ev) < 0) perror("floor: epoll_ctl");
}

/* peer_done: the backend's FIN came (TCP): a reset ends both sides without a FIN round or a TIME_WAIT */
static void up_close_after(struct conn *c, int peer_done) {
    if (c->up.fd >= 0 && peer_done && up_addr.ss_family == AF_INET)
        setsockopt(c->up.fd, SOL_SOCKET, SO_LINGER, &(struct linger){1, 0}, sizeof(struct linger));
    if (c->up.fd >= 0) close(c->up.fd);
    c->up.fd = -1;
    c->up_len = 0;
    c->up_ready = 0;
}

static void up_close(struct conn *c) {
    up_close_after(c, 0);
}

static void conn_close(struct conn *c, int failed) {
    if (failed) failures++;
    up_close(c);
    close(c->cl.fd);
    c->dead = 1;
    c->next_dead = dead;
    dead = c;
}

/* FastCGI: one name-value pair with one-byte lengths (every pair here is shorter than 128 bytes) */
static void fcgi_pair(size_t *at, const char *name, const char *value) {
    size_t n = strlen(name), v = strlen(value);
    fcgi_req[(*at)++] = (char)n;
    fcgi_req[(*at)++] = (char)v;
    memcpy(fcgi_req + *at, name, n);
    memcpy(fcgi_req + *at + n, value, v);
    *at += n + v;
}

static void fcgi_header(char *h, int type, size_t len) {
    unsigned char *u = (unsigned char *)h;
    u[0] = 1, u[1] = (unsigned char)type, u[2] = 0, u[3] = 1, u[4] = (unsigned char)(len >> 8), u[5] = (unsigned char)len;
    u[6] = 0, u[7] = 0;
}

/* the request fastcgi.conf's parameters make for GET SCRIPT (the same names, values of the same size) */
static void fcgi_build(const char *script) {
    size_t at = 0;
    fcgi_header(fcgi_req, 1, 8); /* BEGIN_REQUEST: role RESPONDER, flags KEEP_CONN */
    memcpy(fcgi_req + 8, "\0\1\1\0\0\0\0\0", 8);
    at = 24; /* the PARAMS header goes at 16 */
    const char *doc = "/var/www", *name = strrchr(script, '/') ? strrchr(script, '/') : script;
    fcgi_pair(&at, "SCRIPT_FILENAME", script);
    fcgi_pair(&at, "QUERY_STRING", "");
    fcgi_pair(&at, "REQUEST_METHOD", "GET");
    fcgi_pair(&at, "CONTENT_TYPE", "");
    fcgi_pair(&at, "CONTENT_LENGTH", "");
    fcgi_pair(&at, "SCRIPT_NAME", name);
    fcgi_pair(&at, "REQUEST_URI", name);
    fcgi_pair(&at, "DOCUMENT_URI", name);
    fcgi_pair(&at, "DOCUMENT_ROOT", doc);
    fcgi_pair(&at, "SERVER_PROTOCOL", "HTTP/1.1");
    fcgi_pair(&at, "REQUEST_SCHEME", "http");
    fcgi_pair(&at, "GATEWAY_INTERFACE", "CGI/1.1");
    fcgi_pair(&at, "SERVER_SOFTWARE", "hayate");
    fcgi_pair(&at, "REMOTE_ADDR", "127.0.0.1");
    fcgi_pair(&at, "REMOTE_PORT", "40000");
    fcgi_pair(&at, "SERVER_ADDR", "127.0.0.1");
    fcgi_pair(&at, "SERVER_PORT", "18800");
    fcgi_pair(&at, "SERVER_NAME", "");
    fcgi_pair(&at, "REDIRECT_STATUS", "200");
    fcgi_pair(&at, "HTTP_HOST", "127.0.0.1:18800");
    size_t plen = at - 24, pad = (8 - plen % 8) % 8;
    fcgi_header(fcgi_req + 16, 4, plen);
    fcgi_req[16 + 6] = (char)pad;
    memset(fcgi_req + at, 0, pad);
    at += pad;
    fcgi_header(fcgi_req + at, 4, 0); /* empty PARAMS */
    fcgi_header(fcgi_req + at + 8, 5, 0); /* empty STDIN */
    fcgi_req_len = at + 16;
}

static int up_connect(struct conn *c) {
    int fd = socket(up_addr.ss_family, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
    if (fd < 0) return -1;
    if (up_addr.ss_family == AF_INET) setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &(int){1}, sizeof(int));
    if (connect(fd, (struct sockaddr *)&up_addr, up_addrlen) < 0 && errno != EINPROGRESS) {
        close(fd);
        return -1;
    }
    c->up.fd = fd;
    c->up_len = 0;
    c->up_ready = 0;
    if (mode != MODE_HTTP_CLOSE) watch(&c->up, EPOLLOUT);
    return 0;
}

/* sends the request that waits in cl_buf (http) or the fixed FastCGI request; 0 sent or waiting, -1 failed */
static int up_send(struct conn *c) {
    const char *p = mode == MODE_FCGI_KA ? fcgi_req : c->cl_buf;
    size_t n = mode == MODE_FCGI_KA ? fcgi_req_len : c->cl_len;
    ssize_t w = send(c->up.fd, p, n, MSG_NOSIGNAL);
    if (w < 0 && (errno == EAGAIN || errno == ENOTCONN) && !c->up_ready) return 0; /* still connecting: EPOLLOUT */
    if (w != (ssize_t)n) return -1;
    c->up_ready = 1;
    c->cl_len = 0;
    return 0;
}

static void on_request(struct conn *c) {
    if (c->up.fd < 0 && up_connect(c) < 0) return conn_close(c, 1);
    c->busy = 1;
    if (mode == MODE_HTTP_CLOSE) { /* "Connection: close" before the blank line (the client sends none) */
        static const char cc[] = "Connection: close\r\n\r\n";
        if (c->cl_len + sizeof cc - 3 > sizeof c->cl_buf) return conn_close(c, 1);
        memcpy(c->cl_buf + c->cl_len - 2, cc, sizeof cc - 1);
        c->cl_len += sizeof cc - 3;
        size_t n = c->cl_len;
        if (up_send(c) < 0) return conn_close(c, 1);
        watch(&c->up, c->cl_len == n ? EPOLLOUT : 0); /* not sent yet: connecting, EPOLLOUT says when */
        return;
    }
    if (up_send(c) < 0) conn_close(c, 1);
}

/* Each mode's answer: when up_buf holds a whole response, sends it to the client and returns 1; 0 while more is
 * to come; -1 on a malformed response or a send that did not take everything. */

/* HTTP: the head and Content-Length's bytes, sent back as they came */
static int http_respond(struct conn *c) {
    char *end = memmem(c->up_buf, c->up_len, "\r\n\r\n", 4);
    if (!end) return 0;
    size_t head = (size_t)(end - c->up_buf) + 4, body = 0;
    for (char *p = c->up_buf; p < end; p++)
        if ((*p == 'C' || *p == 'c') && !strncasecmp(p, "content-length:", 15)) {
            body = strtoul(p + 15, NULL, 10);
            break;
        }
    if (c->up_len < head + body) return 0;
    if (mode == MODE_HTTP_CLOSE) { /* the backend's "Connection: close" is its own: the client keeps its connection */
        for (char *p = c->up_buf; p + 13 < end; p++)
            if (p[0] == '\n' && (p[1] == 'C' || p[1] == 'c') && !strncasecmp(p + 1, "connection:", 11)) {
                char *eol = memchr(p + 1, '\n', (size_t)(end + 2 - p));
                size_t cut = (size_t)(eol - p);
                memmove(p + 1, eol + 1, c->up_len - (size_t)(eol + 1 - c->up_buf));
                c->up_len -= cut, head -= cut;
                break;
            }
    }
    return send(c->cl.fd, c->up_buf, head + body, MSG_NOSIGNAL) == (ssize_t)(head + body) ? 1 : -1;
}

/* FastCGI: the records up to END_REQUEST; their stdout under a fixed status line and its Content-Length */
static int fcgi_respond(struct conn *c) {
    static char out[BUF];
    size_t at = 0, o = 0;
    const unsigned char *u = (const unsigned char *)c->up_buf;
    for (;;) {
        if (c->up_len - at < 8) return 0;
        int type = u[at + 1];
        size_t len = (size_t)u[at + 4] << 8 | u[at + 5], rec = 8 + len + u[at + 6];
        if (c->up_len - at < rec) return 0;
        if (type == 6 && o + len <= sizeof out) memcpy(out + o, c->up_buf + at + 8, len), o += len;
        at += rec;
        if (type == 3) break;
    }
    char *end = memmem(out, o, "\r\n\r\n", 4);
    if (!end) return -1;
    char head[64];
    int hl = snprintf(head, sizeof head, "HTTP/1.1 200 OK\r\nContent-Length: %zu\r\n", o - (size_t)(end + 4 - out));
    struct iovec iov[2] = {{head, (size_t)hl}, {out, o}};
    return writev(c->cl.fd, iov, 2) == (ssize_t)(hl + o) ? 1 : -1;
}

static void on_client(struct conn *c, uint32_t ev);

static void on_up(struct conn *c, uint32_t ev) {
    if ((ev & EPOLLOUT) && !c->up_ready && c->busy && c->cl_len) {
        c->up_ready = 1;
        if (up_send(c) < 0) return conn_close(c, 1);
    }
    if (!(ev & (EPOLLIN | EPOLLRDHUP | EPOLLHUP | EPOLLERR)) || !c->busy) return;
    for (;;) {
        size_t room = sizeof c->up_buf - c->up_len;
        ssize_t r = recv(c->up.fd, c->up_buf + c->up_len, room, 0);
        if (r < 0 && errno == EAGAIN) return;
        if (r == 0 && mode == MODE_HTTP_CLOSE && c->up_len > 0) { /* a body delimited by the close */
            ev |= EPOLLRDHUP;
            if (send(c->cl.fd, c->up_buf, c->up_len, MSG_NOSIGNAL) != (ssize_t)c->up_len) return conn_close(c, 1);
            break;
        }
        if (r <= 0) return conn_close(c, 1);
        c->up_len += (size_t)r;
        int k = mode == MODE_FCGI_KA ? fcgi_respond(c) : http_respond(c);
        if (k < 0) return conn_close(c, 1);
        if (k) break;
        if (c->up_len == sizeof c->up_buf) return conn_close(c, 1);
        if ((size_t)r < room) return; /* a short read: the socket is drained, the next edge brings more */
    }
    c->up_len = 0;
    c->busy = 0;
    requests++;
    if (mode == MODE_HTTP_CLOSE) up_close_after(c, (ev & (EPOLLRDHUP | EPOLLHUP)) != 0);
    if (c->cl_edge) on_client(c, EPOLLIN);
}

static void on_client(struct conn *c, uint32_t ev) {
    if (!(ev & (EPOLLIN | EPOLLRDHUP | EPOLLHUP | EPOLLERR))) return;
    if (c->busy) { /* no pipelining: what came waits in the socket until this request is answered */
        c->cl_edge = 1;
        return;
    }
    c->cl_edge = 0;
    for (;;) {
        size_t room = sizeof c->cl_buf - c->cl_len;
        ssize_t r = recv(c->cl.fd, c->cl_buf + c->cl_len, room, 0);
        if (r < 0 && errno == EAGAIN) return;
        if (r <= 0) return conn_close(c, 0);
        c->cl_len += (size_t)r;
        if (c->cl_len >= 4 && !memcmp(c->cl_buf + c->cl_len - 4, "\r\n\r\n", 4)) return on_request(c);
        if (c->cl_len == sizeof c->cl_buf) return conn_close(c, 1);
        if ((size_t)r < room) return;
    }
}

static int parse_upstream(const char *s) {
    memset(&up_addr, 0, sizeof up_addr);
    if (!strncmp(s, "unix:", 5)) {
        struct sockaddr_un *un = (struct sockaddr_un *)&up_addr;
        un->sun_family = AF_UNIX;
        if (strlen(s + 5) >= sizeof un->sun_path) return -1;
        strcpy(un->sun_path, s + 5);
        up_addrlen = sizeof *un;
        return 0;
    }
    const char *colon = strrchr(s, ':');
    if (!colon) return -1;
    char host[64];
    snprintf(host, sizeof host, "%.*s", (int)(colon - s), s);
    struct sockaddr_in *in = (struct sockaddr_in *)&up_addr;
    in->sin_family = AF_INET;
    in->sin_port = htons((unsigned short)atoi(colon + 1));
    up_addrlen = sizeof *in;
    return inet_pton(AF_INET, host, &in->sin_addr) == 1 ? 0 : -1;
}

int main(int argc, char **argv) {
    if (argc < 4 || parse_upstream(argv[2]) < 0) {
        fprintf(stderr, "usage: floor PORT 127.0.0.1:PORT|unix:PATH http-ka|http-close|fcgi-ka [SCRIPT]\n");
        return 2;
    }
    if (!strcmp(argv[3], "http-ka")) mode = MODE_HTTP_KA;
    else if (!strcmp(argv[3], "http-close")) mode = MODE_HTTP_CLOSE;
    else if (!strcmp(argv[3], "fcgi-ka") && argc > 4) mode = MODE_FCGI_KA, fcgi_build(argv[4]);
    else return fprintf(stderr, "floor: unknown mode %s (fcgi-ka needs SCRIPT)\n", argv[3]), 2;
    signal(SIGPIPE, SIG_IGN);
    struct sigaction sa = {.sa_handler = on_term};
    sigaction(SIGTERM, &sa, NULL);
    sigaction(SIGINT, &sa, NULL);
    sigaction(SIGQUIT, &sa, NULL);
    int ls = socket(AF_INET, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
    struct sockaddr_in a = {.sin_family = AF_INET, .sin_port = htons((unsigned short)atoi(argv[1]))};
    a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    setsockopt(ls, SOL_SOCKET, SO_REUSEADDR, &(int){1}, sizeof(int));
    if (bind(ls, (struct sockaddr *)&a, sizeof a) < 0 || listen(ls, 4096) < 0) return perror("floor: listen"), 1;
    ep = epoll_create1(EPOLL_CLOEXEC);
    struct epoll_event lev = {.events = EPOLLIN, .data.ptr = NULL};
    epoll_ctl(ep, EPOLL_CTL_ADD, ls, &lev);
    struct epoll_event evs[512];
    while (!stop) {
        int n = epoll_wait(ep, evs, 512, -1);
        for (int i = 0; i < n; i++) {
            struct side *s = evs[i].data.ptr;
            if (!s) {
                int fd;
                while ((fd = accept4(ls, NULL, NULL, SOCK_NONBLOCK | SOCK_CLOEXEC)) >= 0) {
                    struct conn *c = calloc(1, sizeof *c);
                    if (!c) {
                        close(fd);
                        continue;
                    }
                    setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &(int){1}, sizeof(int));
                    c->cl = (struct side){fd, 0, c};
                    c->up = (struct side){-1, 1, c};
                    watch(&c->cl, EPOLLOUT);
                }
                continue;
            }
            if (s->c->dead) continue; /* closed by an earlier event of this batch */
            if (s->is_up) on_up(s->c, evs[i].events);
            else on_client(s->c, evs[i].events);
        }
        while (dead) {
            struct conn *c = dead;
            dead = c->next_dead;
            free(c);
        }
    }
    fprintf(stderr, "floor: %lu requests, %lu failures\n", requests, failures);
    return 0;
}
