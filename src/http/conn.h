/* conn.h — client connections, whatever their protocol: identity (id, peer, local address, scheme, SNI name),
 * the generation they were accepted under, and the per-worker registry of every open connection (counts for
 * worker_connections and the status counters, the idle list whose oldest entry is closed at the limit,
 * graceful shutdown and close-all). The protocol (proto/h1, h2 next) owns the connection's behaviour through
 * hy_conn_ops_t; proto/accept.c creates connections and picks the protocol. */
#ifndef HY_HTTP_CONN_H
#define HY_HTTP_CONN_H

#include <sys/socket.h>
#include "../core/hayate.h"
#include "../core/types.h"
#include "../core/str.h"
#include "../event/sock.h"
#include "../event/listen.h"
#include "../event/proxy_protocol.h"

typedef struct hy_http_addr hy_http_addr_t;

/** Backpressure (h2o's generator "proceed"): a producer that streams a body calls hy_req_send_more() with this
 * callback and produces nothing more until the protocol calls it back, once its output has drained. */
typedef void (*hy_req_proceed_cb)(hy_req_t *req);

/* What a protocol implements. Request-level hooks take the request, connection-level ones the connection. */
typedef struct hy_conn_ops {
    const char *name; /* "HTTP/1.1", "HTTP/2.0" */
    /** Several requests share the socket at once (HTTP/2): no module may take over its reads while a request
     * waits (HTTP/1.x lets limit_req watch the socket for the client's close; HTTP/2 resets the stream itself). */
    bool multiplexed;
    /** Put the response head (first call) and the body segments queued in req->body on the wire.
     * is_final: nothing more will come; the protocol finishes the exchange when written. */
    void (*send)(hy_req_t *req, bool is_final);
    /** Drop the exchange without a (complete) response: h1 closes, h2 resets the stream. */
    void (*abort)(hy_req_t *req);
    /** Deliver the request body to the core (http/body.h: hy_req__body_in / hy_req__body_error), now with what is
     * buffered and then as it arrives; called again to resume after a streaming handler consumed. */
    void (*read_body)(hy_req_t *req);
    /** Graceful stop: finish what is in flight, take no new requests (h1: Connection: close on the next
     * response, idle connections closed after a short grace; h2: GOAWAY). */
    void (*shutdown)(hy_conn_t *c);
    /** Close now (worker_connections reached and this connection is the oldest idle one, or exit). */
    void (*close)(hy_conn_t *c);
    /** Switching protocols (a 101 to an Upgrade request, e.g. a proxied WebSocket): queue the response head
     * (req->status 101, `Connection: upgrade`), then hand the socket over to the caller, who carries raw bytes
     * both ways from then on (its callbacks and `data`; bytes the client sent after the request are in
     * its input already) and ends the exchange with `abort`. NULL when the protocol cannot (HTTP/2, a request
     * body still pending). Optional. */
    hy_sock_t *(*upgrade)(hy_req_t *req);
    /** While a handler waits for the response it produces (an upstream's), have `on_close` called once if the client
     * closes its side before the response ends (nginx's check for a broken connection); NULL stops watching. The
     * watch ends by itself with the response. Optional (HTTP/2 resets the stream itself). */
    void (*watch_close)(hy_req_t *req, hy_req_proceed_cb on_close);
} hy_conn_ops_t;

/* The PROXY protocol header a connection started with (listen ... proxy_protocol): parsed, and its raw bytes
 * (pp.tlvs points into raw). One malloc'd block, freed with the connection. */
typedef struct hy_conn_pp {
    hy_pp_t pp;
    size_t len;
    char raw[];
} hy_conn_pp_t;

enum hy_conn_state {
    HY_CONN_READING = 0, /* reading a request head or body */
    HY_CONN_WRITING,     /* a request is being answered */
    HY_CONN_WAITING,     /* idle keep-alive, between requests */
    HY_CONN_NEW,         /* accepted (or handshaking), no byte of a request yet: counted as waiting, as nginx does,
                          * but not on the idle list */
};

struct hy_conn {
    uint64_t id;                    /* $connection, "*N" in the error log */
    const hy_conn_ops_t *ops;       /* set by the protocol that took the connection */
    void *proto;                    /* the protocol's connection state (owned by the protocol) */
    hy_http_addr_t *addr;           /* borrowed from the generation: servers on the local address */
    hy_cycle_t *cycle;              /* ref: the generation this connection was accepted under */
    hy_sock_t sock;                 /* owned: the transport */
    hy_str_t scheme;                /* "http" or "https" ($scheme, absolute redirects) */
    hy_str_t server_name;           /* the SNI name of a TLS connection, empty otherwise */
    char peer_text[64];             /* "127.0.0.1" for logs and $remote_addr */
    uint16_t local_port;            /* $server_port, redirects (0 for unix sockets) */
    uint8_t state;                  /* enum hy_conn_state */
    bool is_idle;
    bool is_plain_on_tls;           /* a plain HTTP request arrived on a TLS address: answered 497 */
    bool debug;                     /* the peer is in debug_connection: its messages go to every error_log */
    hy_conn_pp_t *pp;               /* owned: the PROXY protocol header, NULL when none was read */
    uint64_t start_ms;              /* wall-clock ms of the accept ($connection_time) */
    struct hy_conn *_prev, *_next;           /* registry: every open connection */
    struct hy_conn *_idle_prev, *_idle_next; /* registry: idle ones, oldest first */
};

/** worker_connections: above it, the oldest idle connection is closed to make room (or the new one refused). */
void hy_conns_set_limit(int64_t max_connections);
/** Register an accepted fd: capacity check (closes the fd and returns NULL when full), id, peer text, the
 * address's servers (by the local address when the listener is a wildcard covering specific addresses), the
 * generation's reference. The connection starts NEW with no protocol; the caller picks one, and the protocol moves
 * it to READING when the first bytes of a request arrive. */
hy_conn_t *hy_conn_open(hy_listener_t *l, int fd, const struct sockaddr_storage *peer, socklen_t peer_len);
/** Unregister and close the transport; the memory is freed at the end of the loop iteration. The protocol
 * releases its own state (conn->proto) first. */
void hy_conn_close(hy_conn_t *c);
/** Move between READING / WRITING / WAITING; WAITING puts the connection on the idle list (newest last). */
void hy_conn_set_state(hy_conn_t *c, enum hy_conn_state state);
/** Count one request (the status counters). */
void hy_conn_count_request(hy_conn_t *c);
/** The connection's local address (cached). */
const struct sockaddr_storage *hy_conn_local_addr(hy_conn_t *c, socklen_t *len);
/** Open connections in this worker. */
size_t hy_conns_count(void);
/** Graceful stop: every connection's ops->shutdown; new requests are answered with a close. */
void hy_conns_shutdown(void);
/** True after hy_conns_shutdown. */
bool hy_conns_shutting_down(void);
/** Close every connection now (exit, worker_shutdown_timeout). */
void hy_conns_close_all(void);

#endif
