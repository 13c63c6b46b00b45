/* listen.h — listening sockets: what a `listen` directive asks for, opening and binding it, and the accept
 * loop with EMFILE/ENFILE back-off. */
#ifndef HY_EVENT_LISTEN_H
#define HY_EVENT_LISTEN_H

#include <sys/socket.h>
#include "loop.h"

typedef struct hy_listen_spec {
    struct sockaddr_storage addr;
    socklen_t addr_len;
    char text[128];     /* "127.0.0.1:8080", "[::1]:8080", "unix:/path" — as nginx prints it */
    int backlog;        /* -1: default (the kernel's somaxconn) */
    int rcvbuf, sndbuf; /* -1: unset */
    int ipv6only;       /* -1 unset, 0, 1 */
    int keepalive;      /* so_keepalive: -1 unset, 0 off, 1 on */
    int keepidle, keepintvl, keepcnt; /* so_keepalive=idle:intvl:cnt (0 = system default) */
    bool reuseport, deferred, default_server, is_unix, bind;
    bool ssl;           /* listen ... ssl: connections start with a TLS handshake */
    bool proxy_protocol; /* listen ... proxy_protocol: connections start with a PROXY protocol header */
    bool http2;          /* listen ... http2 (deprecated form of `http2 on`): HTTP/2 on this address */
    int port_last;       /* a port range "addr:8080-8085" (nginx 1.27.3+): its last port, the spec holding the
                          * first; 0: one port. The caller makes one spec per port (hy_listen_set_port). */
} hy_listen_spec_t;

typedef void (*hy_accept_cb)(hy_listener_t *l, int fd, struct sockaddr_storage *peer, socklen_t peer_len);

struct hy_listener {
    hy_io_t io;
    hy_loop_t *loop;
    int fd;
    hy_listen_spec_t spec;
    hy_accept_cb on_accept;
    void *data;        /* the protocol's per-address data (e.g. the server blocks on this address) */
    int accept_batch;  /* connections taken per readiness event (multi_accept: large) */
    hy_timer_t backoff;
    uint64_t last_emfile_log_ms;
    bool paused;
};

/** Parse "addr:port", "port", "[v6]:port", "*:port", "unix:/path" into spec (defaults set); the port may be a
 * range "lo-hi" (spec->port_last). 0, or -1 with a
 * reason in *err ("invalid port", "host not found", ...). */
int hy_listen_parse(const char *s, size_t n, hy_listen_spec_t *spec, const char **err);
/** Set the port of an inet spec (its text follows) and clear port_last. */
void hy_listen_set_port(hy_listen_spec_t *spec, int port);
/** True if two specs name the same address. */
bool hy_listen_same_addr(const hy_listen_spec_t *a, const hy_listen_spec_t *b);
/** The kernel's somaxconn (the default backlog). */
int hy_listen_somaxconn(void);
/** socket + options + bind + listen. Returns the fd or -errno (*what names the failing call). */
int hy_listen_open(const hy_listen_spec_t *spec, const char **what);
/** Start accepting on an open fd. */
void hy_listener_start(hy_listener_t *l, hy_loop_t *loop, int fd, hy_accept_cb cb, void *data);
void hy_listener_stop(hy_listener_t *l);

#endif
