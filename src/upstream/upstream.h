/* upstream.h — the protocol-agnostic upstream engine (nginx's ngx_http_upstream_t idea) and the codec interface
 * the protocol modules plug into (HTTP/1.x now: upstream/h1client.c; FastCGI, uwsgi, SCGI next).
 *
 * A module (handlers/proxy.c) fills a hy_ureq_t for the request — the group of peers, the timeouts, the request
 * line and header fields it wants sent, the codec — and calls hy_upstream_start(). The engine then owns the
 * exchange: it reads the client's body (buffered, or streamed), picks a peer (upstream/group.c), takes an idle
 * keep-alive connection or connects (TCP or unix socket, connect timeout), has the codec serialise the request,
 * sends it (send timeout), has the codec parse the response head (read timeout), hands the head to the module's
 * `on_head` hook (header rewriting), answers the client, and streams the body the codec decodes with
 * backpressure (buffering: read ahead up to `buffers_total` bytes; no buffering: at most `buffer_size` ahead).
 * Errors before the head become 502 (504 on a timeout), with retries on the next peer per next_upstream.
 * The connection goes back to the pool when the codec says the response left it reusable.
 *
 * The codec contract (stable: other codecs are written against it):
 *   create_request  serialise the request head (h1: request line + fields; FastCGI: BEGIN_REQUEST + PARAMS) into
 *                   `out` from u->method/uri/headers/body_length; 0, or -1 (the request fails with 500).
 *   frame_body      wrap n bytes of the request body (h1 chunked: size line + CRLF; FastCGI: STDIN records) into
 *                   `out`; last: the body ends here (h1 chunked: "0\r\n\r\n"; FastCGI: the empty STDIN). n may be 0.
 *   process_head    parse the response head from `in` (without consuming): -1 invalid ("upstream sent invalid
 *                   header"), -2 invalid and logged by the codec in its own words (memcached), 0 need more bytes,
 *                   > 0 the head's length — then u->status, u->headers_in, u->resp_length (-1 unknown) are set and
 *                   the engine consumes those bytes. With 0 a codec may consume input that holds nothing of the head
 *                   (FastCGI: stderr records before it). A codec whose response may end with its head (memcached's
 *                   END) sets u->head_is_whole: the connection may then go back to the pool even when the response
 *                   is not passed on (an intercepted 404).
 *   process_body    decode body bytes from `in` (consume what was used) and append the payload to `out`;
 *                   eof: the upstream closed. Sets *done when the body is complete. Returns 0, -1 when the
 *                   framing is broken or the upstream closed too early ("upstream prematurely closed"), or -2
 *                   when h1's chunked framing is broken ("upstream sent invalid chunked response", nginx's).
 *   reusable        after *done: may the connection carry another request (keep-alive)?
 *   reinit          forget the parse state before a retry on another connection (optional).
 *   frame_file      wrap a request body the client's reader kept in a file (size bytes) into `out` (optional;
 *                   without it the file goes up as it is: h1, uwsgi, SCGI; FastCGI: STDIN records around it).
 *   pending         request body bytes the codec holds back (h2: flow control), counted with the connection's
 *                   queue against the streaming bound (optional).
 * A codec with conn_state keeps state on the connection (h2: the session, in hy_upstream_conn_t.proto_state):
 * pooled connections are only handed to exchanges of the same codec; what it queues on u->conn outside its hooks'
 * `out` (h2: WINDOW_UPDATE, SETTINGS ACK, DATA a window update released) it sends with hy_upstream_codec_flush.
 * Codecs keep their state in u->codec_state (request pool). */
#ifndef HY_UPSTREAM_UPSTREAM_H
#define HY_UPSTREAM_UPSTREAM_H

#include <sys/socket.h>
#include <sys/un.h>
#include "../http/request.h"
#include "../event/sock.h"
#include "../event/resolver.h"

typedef struct hy_ureq hy_ureq_t;

#define HY_UREQ_BODY_CHUNKED (-1)
#define HY_UREQ_BODY_NONE (-2)

typedef struct hy_upstream_codec {
    const char *name;
    int (*create_request)(hy_ureq_t *u, hy_outq_t *out);
    void (*frame_body)(hy_ureq_t *u, hy_outq_t *out, const char *p, size_t n, bool last);
    int (*process_head)(hy_ureq_t *u, hy_buf_t *in);
    int (*process_body)(hy_ureq_t *u, hy_buf_t *in, bool eof, hy_outq_t *out, bool *done);
    bool (*reusable)(const hy_ureq_t *u);
    void (*reinit)(hy_ureq_t *u);
    void (*frame_file)(hy_ureq_t *u, hy_outq_t *out, hy_file_t *f, int64_t size);
    /* process_head's count includes records that are no part of the head (FastCGI's stderr): the engine does not
     * hold it to *_buffer_size (the codec bounds its head itself) */
    bool head_in_records;
    size_t (*pending)(const hy_ureq_t *u);
    bool conn_state;
} hy_upstream_codec_t;

/* ---- peers and groups (upstream/group.c) */

/* next_upstream conditions (nginx's NGX_HTTP_UPSTREAM_FT_*) */
enum {
    HY_UPS_FT_ERROR = 0x1,
    HY_UPS_FT_TIMEOUT = 0x2,
    HY_UPS_FT_INVALID_HEADER = 0x4,
    HY_UPS_FT_500 = 0x8,
    HY_UPS_FT_502 = 0x10,
    HY_UPS_FT_503 = 0x20,
    HY_UPS_FT_504 = 0x40,
    HY_UPS_FT_403 = 0x80,
    HY_UPS_FT_404 = 0x100,
    HY_UPS_FT_429 = 0x200,
    HY_UPS_FT_NON_IDEMPOTENT = 0x400,
    HY_UPS_FT_OFF = 0x800,
};

typedef struct hy_upstream_peer {
    struct sockaddr_storage sa;
    socklen_t salen;
    hy_str_t name;   /* "127.0.0.1:8080", "unix:/path" ($upstream_addr) */
    hy_str_t server; /* the server as written (host:port) */
    int weight, max_fails, max_conns;
    int64_t fail_timeout_ms;
    bool backup, down;
    bool drain;      /* `drain`: only requests bound to it by `sticky` (upstream/sticky.h) */
    hy_str_t route;  /* `route=`: its id for `sticky` */
    char sticky_id[32]; /* `sticky`: the hex MD5 of its address, computed at first use (per worker) */
    bool sticky_id_set;
    /* per-worker state */
    int current_weight, effective_weight;
    int fails, conns;       /* conns: this worker's tries in flight */
    int *sh_conns;          /* `zone`: the tries in flight of all the workers (group.c), NULL: none kept */
    uint64_t checked_ms, accessed_ms;
    uint32_t stats_base;    /* its counters in the stats segment (upstream/metrics.c), HY_STATS_SINK: none */
    void *ssl_session;      /* the last TLS session (DER, malloc), for *_ssl_session_reuse (upstream/ussl.c) */
    const volatile uint32_t *hc_down; /* health checks (health.c): non-zero while a check holds it down (in the
                                       * group's zone, shared by the workers); NULL: not checked */
    /* least_time (balancer.c): the average response time, when it was last updated, and the sum of the start
     * times of the tries in flight (the engine adds and takes try_start_ms with conns) */
    int64_t lt_avg_ms;
    uint64_t lt_stamp_ms, lt_busy_ms;
} hy_upstream_peer_t;

/** The peer's tries in flight as balancing and max_conns count them: all the workers' when the upstream has a `zone`
 * (nginx's shared peer state), else this worker's. */
static inline int hy_upstream_peer_conns(const hy_upstream_peer_t *p)
{
    return p->sh_conns ? __atomic_load_n(p->sh_conns, __ATOMIC_RELAXED) : p->conns;
}
/** p takes no more tries: `max_conns` is set and reached (counted as hy_upstream_peer_conns counts). */
static inline bool hy_upstream_peer_full(const hy_upstream_peer_t *p)
{
    return p->max_conns && hy_upstream_peer_conns(p) >= p->max_conns;
}
/** A try to p starts (+1) or ends (-1). */
static inline void hy_upstream_peer_conns_add(hy_upstream_peer_t *p, int d)
{
    p->conns += d;
    if (p->sh_conns)
        __atomic_add_fetch(p->sh_conns, d, __ATOMIC_RELAXED);
}

typedef struct hy_upstream_idle hy_upstream_idle_t;

enum hy_upstream_balancer {
    HY_UPS_RR = 0,
    HY_UPS_LEAST_CONN,
    HY_UPS_IP_HASH,
    HY_UPS_HASH,
    HY_UPS_HASH_CONSISTENT,
    HY_UPS_RANDOM,
    HY_UPS_RANDOM_TWO, /* random two [least_conn]: the less loaded of two random picks */
    HY_UPS_LEAST_TIME, /* least_time header|last_byte [inflight] (balancer.c) */
};

typedef struct hy_upstream_point {
    uint32_t hash;
    uint32_t peer;
} hy_upstream_point_t;

typedef struct hy_upstream_group {
    hy_str_t name;    /* the upstream's name, or host[:port] of an implicit one */
    const char *file; /* where it was defined (for messages) */
    unsigned line;
    hy_upstream_peer_t *peers; /* primary then backup peers */
    size_t npeers, nbackup;
    bool implicit; /* from proxy_pass host:port (no upstream block) */
    bool transient; /* made for one request (proxy_pass with variables naming an address): keeps no sessions */
    uint16_t port; /* the port proxy_pass named (for implicit groups; 0 for unix) */
    /* keep-alive pool (per worker) */
    int64_t keepalive;            /* max idle connections per worker; 0: none */
    int64_t keepalive_requests;   /* default 1000 */
    int64_t keepalive_time_ms;    /* default 1h */
    int64_t keepalive_timeout_ms; /* default 60s */
    hy_upstream_idle_t *idle_head, *idle_tail;
    size_t nidle;
    int balancer;                /* enum hy_upstream_balancer */
    struct hy_complex *hash_key; /* hash KEY (http/vars-t.h) */
    hy_upstream_point_t *points; /* hash ... consistent: the ring, sorted */
    size_t npoints;
    bool zone;                  /* `zone` was given (accepted; state stays per worker) */
    uint32_t stats_idle;        /* its idle-pool gauge in the stats segment (upstream/metrics.c) */
    struct hy_upstream_hc_group *hc; /* its active health checks (health.c), NULL: none */
    struct hy_upstream_sticky *sticky; /* `sticky` (upstream/sticky.h), NULL: none */
    bool lt_header, lt_inflight; /* least_time: header (else last_byte); inflight */
} hy_upstream_group_t;

/** A connection to a peer (outlives requests when kept alive). */
typedef struct hy_upstream_conn {
    hy_sock_t sock;
    hy_upstream_group_t *group;
    hy_upstream_peer_t *peer;
    uint64_t created_ms;
    uint64_t requests;        /* requests sent on it */
    hy_upstream_idle_t *idle; /* set while in the pool */
    const void *tls_key;      /* the TLS context it was made with (upstream/ussl.h), NULL: plain */
    const void *proto;        /* the codec whose state it carries (conn_state codecs: h2), NULL: none */
    void *proto_state;        /* that state, freed with proto_free(proto_state) when the connection closes */
    void (*proto_free)(void *state);
    /* bytes arrived while the connection is idle in the pool (h2: the backend's PING, SETTINGS, WINDOW_UPDATE):
     * take all of sock.input, queue any answer on sock.outq and return true to keep it idle; false (or NULL: any
     * byte) closes it */
    bool (*proto_idle)(struct hy_upstream_conn *c);
} hy_upstream_conn_t;

/** The group proxy_pass names: an upstream{} block of this http{} with that name, else (implicit) a group
 * made of the host's addresses (resolved now with getaddrinfo) on port `port` (unix: a "unix:/path" host).
 * `explicit_port` says whether proxy_pass named a port (an upstream{} only matches without one, as nginx).
 * NULL after hy_conf_error. */
hy_upstream_group_t *hy_upstream_group_add(hy_conf_t *cf, hy_str_t host, uint16_t port, bool explicit_port);
/** At run time (proxy_pass with variables): the upstream{} named `host` (no port given), or the implicit upstream
 * another proxy_pass made for the same host and port (nginx looks both up), or NULL. */
hy_upstream_group_t *hy_upstream_group_find(hy_req_t *req, hy_str_t host, uint16_t port, bool explicit_port);
/** Pick a peer for the request with the group's method (round robin, least_conn, ip_hash, hash [consistent],
 * random [two]), honouring weights, max_fails/fail_timeout, backup, down, max_conns; `tried` is a bit set of
 * peer indexes already tried. NULL: no live peer. */
hy_upstream_peer_t *hy_upstream_peer_get(hy_upstream_group_t *g, hy_req_t *req, uint64_t *tried);
/** The group's `zone` (NULL: none), the health checks' list head in it and the generation's epoch of the zone
 * (a number the master makes larger at each load that keeps the zone) — for health.c. */
struct hy_zone *hy_upstream__zone(hy_upstream_group_t *g, void ***hc_root, uint64_t *epoch);
/** hash ... consistent: build the group's ring (160 points per unit of weight), at load. */
void hy_upstream__build_ring(hy_pool_t *pool, hy_upstream_group_t *g);
/** `sticky` (upstream/sticky.c): the upstream's response from u->peer was accepted (complete false: its head,
 * before it goes to the client; true: its body is all in): cookie mode sets the cookie at the head, learn mode
 * remembers the session the response creates (at the head with `header`, else when complete). */
void hy_upstream__sticky_response(hy_ureq_t *u, bool complete);
/** least_time: a try on p took ms to its response head (header true) or to its last byte; the group's
 * least_time measures one of them (the other call is ignored), other methods ignore both. */
void hy_upstream__lt_sample(hy_upstream_group_t *g, hy_upstream_peer_t *p, bool header, int64_t ms);
/** The outcome of a try: failed counts toward max_fails. */
void hy_upstream_peer_free(hy_upstream_group_t *g, hy_upstream_peer_t *p, bool failed);
/** Keep-alive pool: an idle connection to peer p made with the same TLS context (tls_key, NULL: plain) carrying
 * the same codec state (proto, NULL: none), or NULL.
 * probe: also check it alive with a one-byte peek (a close by the backend that arrived since the loop last
 * polled). Without it a dead connection shows as an error on the first read or write, which the caller must
 * then be free to retry on a fresh connection (the keep-alive race). */
hy_upstream_conn_t *hy_upstream_pool_get(hy_upstream_group_t *g, hy_upstream_peer_t *p, const void *tls_key,
                                         const void *proto, bool probe);
/** Keep-alive pool: park a connection (or close it when the pool is full or its limits are reached). */
void hy_upstream_pool_put(hy_upstream_conn_t *c);
/** Close and free an upstream connection. */
void hy_upstream_conn_close(hy_upstream_conn_t *c);
/** Close and free an upstream connection whose exchange is over: its response was read whole (or it sat idle in
 * the pool), so nothing still queued for the backend matters. A TCP connection the backend has closed already
 * (hy_sock_peer_done) is closed with a reset; any other as hy_upstream_conn_close. Not for tunnels, whose
 * half-closed direction may still carry data. */
void hy_upstream_conn_end(hy_upstream_conn_t *c);

extern hy_module_t hy_http_upstream_module; /* upstream{}, server, keepalive*, and the $upstream_* variables */
/** The i-th group of the generation's http{} (upstream{} blocks and implicit ones), NULL past the end. */
hy_upstream_group_t *hy_upstream_group_at(hy_cycle_t *cycle, size_t i);

/* ---- per-peer metrics (upstream/metrics.c): hooks the engine and the pool call */
extern hy_module_t hy_http_upstream_metrics_module;
/** A try on peer p ended: failed (counts toward max_fails) or not, after response_ms. */
void hy_upstream_metrics_try(hy_upstream_group_t *g, hy_upstream_peer_t *p, bool failed, int64_t response_ms);
/** The group's idle keep-alive pool changed size. */
void hy_upstream_metrics_idle(hy_upstream_group_t *g);
/** Define the $upstream_* variables (variables.c; the module's postconfiguration calls it). */
int hy_upstream__define_vars(hy_conf_t *cf);

/* ---- one exchange */

enum hy_ureq_state {
    HY_UREQ_INIT = 0,
    HY_UREQ_BODY,
    HY_UREQ_CONNECT,
    HY_UREQ_SEND,
    HY_UREQ_HEAD,
    HY_UREQ_BODY_OUT,
    HY_UREQ_DONE,
    HY_UREQ_TUNNEL, /* after a 101: raw bytes both ways (tunnel.c) */
};

struct hy_ureq {
    hy_req_t *req;
    const hy_upstream_codec_t *codec;
    void *codec_state; /* the codec's (request pool) */
    hy_upstream_group_t *group;
    void *data; /* the module's */
    /* settings (the module fills them) */
    int64_t connect_timeout_ms, send_timeout_ms, read_timeout_ms;
    int64_t buffer_size;    /* the response head must fit (proxy_buffer_size) */
    int64_t buffers_total;  /* read-ahead while the client is slower (proxy_buffers number*size) */
    bool buffering;         /* proxy_buffering */
    bool request_buffering; /* proxy_request_buffering */
    bool pass_body;         /* proxy_pass_request_body */
    bool intercept_errors;
    bool socket_keepalive;            /* proxy_socket_keepalive: SO_KEEPALIVE on upstream TCP connections */
    int64_t limit_rate;               /* proxy_limit_rate: bytes/s read from the upstream (0: no limit) */
    const struct hy_complex *limit_rate_cv; /* proxy_limit_rate with variables: sets limit_rate as the body starts */
    const struct hy_ussl *ssl;        /* TLS to the upstream (upstream/ussl.h: proxy_ssl_*), NULL: plain */
    hy_str_t ssl_host;                /* the default name to send and check: the host of *_pass */
    hy_str_t ssl_name;                /* the name used for this connection (ussl.c) */
    struct sockaddr_storage bind;     /* proxy_bind: the local address of upstream connections */
    socklen_t bind_len;               /* 0: none */
    int next_upstream;                /* HY_UPS_FT_* */
    int64_t next_upstream_tries;      /* 0: no limit */
    int64_t next_upstream_timeout_ms; /* 0: no limit */
    bool ignore_client_abort;         /* proxy_ignore_client_abort: a client gone does not end the exchange */
    bool discard_body;                /* the client's body is not read by the exchange: its protocol discards it
                                       * (memcached, as nginx's ngx_http_discard_request_body) */
    bool pass_trailers;               /* proxy_pass_trailers: the upstream's trailer fields end the client's response
                                       * (sent when it is framed for trailers: req->expect_trailers) */
    /* buffering: what the memory buffers cannot hold while the client is slower goes to a temp file */
    hy_str_t temp_path;           /* proxy_temp_path (absolute) */
    const int *temp_levels;       /* its levels (3 entries, 0 ends) */
    int64_t max_temp_file_size;   /* proxy_max_temp_file_size: 0, no temp file (reading the upstream pauses) */
    int64_t temp_file_write_size; /* proxy_temp_file_write_size: bytes gathered before a write */
    /* *_store (upstream/store.c): the body also goes to a file in temp_path, renamed to the store's path when a 200
     * response is complete */
    int store;                             /* 0: off, 1: the root/alias path of the URI, 2: store_path's */
    const struct hy_complex *store_path;   /* store 2: the path with variables */
    int store_access;                      /* the stored file's mode (directories made: plus x where r) */
    char *store_tmp;                       /* the file being written (request pool), NULL: not open */
    int store_fd;
    int64_t store_size;                    /* bytes written to it */
    bool store_failed;                     /* it could not be written: nothing is stored */
    /* the request to send */
    hy_str_t method, uri; /* uri: path + args as sent upstream */
    int version;          /* 10 or 11 */
    hy_header_t *headers; /* fields to send, in order (the module evaluated them) */
    size_t nheaders;
    hy_str_t set_body;   /* proxy_set_body: sent instead of the client's body (.ptr NULL: none) */
    int64_t body_length; /* bytes of body to send, or HY_UREQ_BODY_CHUNKED (length unknown: h1 chunked)
                          * or HY_UREQ_BODY_NONE (no body, no framing field) */
    /* hooks */
    /** Optional, called once (then cleared) before the first peer is tried: after the client's body was read (buffered), or as
     * its streaming begins. Builds what may depend on the body ($request_body, $request_body_file), as nginx
     * creates the upstream request only then: the proxy's header list and proxy_set_body. 0, or -1 (500). */
    int (*prepare)(hy_ureq_t *u);
    /** The head arrived (u->status, u->headers_in): fill the client's response (req->status, headers_out ...).
     * Returns 0, or an HTTP status to answer instead. */
    int (*on_head)(hy_ureq_t *u);
    /* the response (codec fills) */
    int status;
    hy_str_t status_line;   /* reason phrase as sent */
    hy_array_t *headers_in; /* hy_header_t, request pool */
    /* the trailer fields of a chunked response (hy_header_t, request pool), or NULL */
    hy_array_t *trailers_in;
    int64_t resp_length;    /* -1 unknown */
    bool resp_chunked, resp_keepalive, upgrade;
    bool head_is_whole;     /* the head is the whole response, and nothing followed it (process_head above) */
    /* engine state */
    int state; /* enum hy_ureq_state */
    hy_upstream_peer_t *peer;
    hy_upstream_conn_t *conn;
    bool reused;           /* conn came from the pool */
    bool body_sent_any;    /* some body bytes left for the upstream */
    bool body_streamed;    /* the client's body goes up as it arrives (request_buffering off) */
    bool body_kept;        /* the client's body is read (for $request_body) but not sent (set_body, pass_body off) */
    bool body_last_framed; /* streaming: the end of the body is queued */
    bool in_body_cb;       /* streaming: inside the body reader's callback */
    bool pumping;          /* streaming: pump_body is running */
    bool force_fresh;      /* the next try connects anew to the same peer (keep-alive race) */
    bool head_seen;        /* a response byte arrived */
    uint64_t tried[4];     /* peers tried (bit set, 256 peers) */
    int tries;
    uint64_t start_ms, try_start_ms;
    hy_outq_t ahead;     /* decoded body waiting for the client (memory, then temp file regions, then memory) */
    size_t ahead_mem;    /* bytes of `ahead` in memory (the read-ahead bound applies to them) */
    hy_outq_t towrite;   /* decoded body gathered for the temp file (comes after `ahead`) */
    hy_file_t *temp;     /* the temp file (unlinked at creation; a reference), NULL before the first write */
    int64_t temp_size;   /* bytes written to it */
    bool temp_failed;    /* it could not be created or written: no more spilling */
    bool client_closed;  /* the client went away during the exchange (499) */
    bool client_waiting; /* a hy_req_send_more is in flight */
    bool body_error;     /* the body failed (premature close, bad framing, timeout): what came goes, then abort */
    bool body_done, finished;
    hy_timer_t timer;
    hy_sock_t *client_sock; /* HY_UREQ_TUNNEL: the client's socket, handed over by its protocol */
    hy_timer_t rate_timer;  /* limit_rate: reading resumes when it fires */
    uint64_t body_start_ms; /* limit_rate: when the body started */
    uint64_t paced;         /* limit_rate: body bytes let through so far */
    /* a host to resolve before the first try (proxy_pass & co. with variables naming no upstream{}): set with
     * hy_upstream_resolve_later; the group is then made of its addresses on resolve_port */
    hy_str_t resolve_host;
    uint16_t resolve_port;
    hy_resolve_t *resolving; /* the pending wait */
    /* the response cache (upstream/cache.h): the location's settings (NULL: none), the request's state (NULL: the
     * cache is not used for this request) */
    const struct hy_ucache_conf *cache_conf;
    void *cache;
    /* $upstream_* (one entry per try, joined with ", ") */
    hy_array_t *log;    /* hy_upstream_log_t */
    int64_t resp_bytes; /* body bytes received ($upstream_response_length) */
};

typedef struct hy_upstream_log {
    hy_str_t addr;
    int status;                                 /* 0: none ("-" for $upstream_status... nginx prints 502 for errors) */
    int64_t connect_ms, header_ms, response_ms; /* -1: not reached */
    uint64_t bytes_received, bytes_sent;
    int64_t response_length;
} hy_upstream_log_t;

/* ---- TLS to the upstream (upstream/ussl.c; the settings and directives are in ussl.h) */

/** For the engine (upstream.c): put TLS under the freshly connected u->conn with the exchange's settings (u->ssl):
 * SNI, the peer's saved session, the client certificate; then run the handshake bounded by the connect timeout,
 * cb as hy_sock_handshake's (it may fire before this returns). NULL, or what went wrong (for the error log; cb never
 * fires then). */
const char *hy_ussl_connect(hy_ureq_t *u, hy_sock_cb cb);
/** After the handshake: with *_ssl_verify on, the chain's verification and the name. NULL when it passes, else
 * nginx's words for the error log (request pool). */
const char *hy_ussl_check(hy_ureq_t *u);
/** The key pooled connections are matched by (the context), NULL for a plain exchange. */
const void *hy_ussl_key(const struct hy_ussl *c);
/** Free the sessions the peers of g keep (the generation's clean-up). */
void hy_ussl_free_sessions(void *g);

/** *_store (store.c): newly decoded body bytes (memory segments) also go to the store's file (made on first use). */
void hy_upstream__store_write(hy_ureq_t *u, const hy_outq_t *fresh);
/** *_store: the body is complete: a 200 whose length is as announced is renamed to the store's path (its
 * directories made, its mtime from Last-Modified); otherwise the file is removed. */
void hy_upstream__store_end(hy_ureq_t *u);
/** *_store: the exchange ends without a complete body: the file is removed. */
void hy_upstream__store_drop(hy_ureq_t *u);

/** After a 101 to an Upgrade request: take the client's socket over and tunnel (tunnel.c). false when the client's
 * protocol cannot switch (nothing was sent then). */
bool hy_upstream__tunnel(hy_ureq_t *u);
/** For conn_state codecs: send what they queued on u->conn's output outside their hooks; the engine's send path
 * goes on when it is written (a streamed body's next piece). */
void hy_upstream_codec_flush(hy_ureq_t *u);
/** For codecs: log `what` with the engine's context (", while PHASE, upstream: ADDR"), as the engine's own errors. */
void hy_upstream_log_error(hy_ureq_t *u, int level, const char *what, const char *phase);
/** A fresh exchange for req (request pool), settings zeroed; the module fills it. */
hy_ureq_t *hy_upstream_create(hy_req_t *req);
/** The exchange goes to host:port, resolved with the location's resolver (resolver, resolver_timeout) when the
 * exchange starts (after the body was read, as nginx): 0, or 502 after logging "no resolver defined to resolve
 * HOST" when the location has no resolver. u->group stays NULL. An answer without addresses or a timeout logs
 * "HOST could not be resolved (N: text)" and answers 502. */
int hy_upstream_resolve_later(hy_ureq_t *u, hy_str_t host, uint16_t port);
/** A group (request pool) of the given addresses on port, named name (an implicit upstream made at run time). */
hy_upstream_group_t *hy_upstream_group_of_addrs(hy_pool_t *pool, hy_str_t name, const hy_dns_addr_t *addrs,
                                                size_t n, uint16_t port);
/** Run it: returns a phase result (HY_DONE: the engine answers the request). */
int hy_upstream_start(hy_ureq_t *u);
/** The exchange of a request (for the $upstream_* variables), or NULL. */
hy_ureq_t *hy_upstream_of(hy_req_t *req);
/** One "Name: value" line of a response head at *pos (before end), for the codecs: 1 a field (name, value trimmed;
 * *pos moves past its line), 0 the empty line ending the head, -1 invalid (no line end, no name, a space or control
 * in the name, or with strict_value a control character in the value). */
int hy_upstream_field(char **pos, char *end, bool strict_value, hy_str_t *name, hy_str_t *value);
/** A response header field of the upstream (case-insensitive; '_' matches '-'), or NULL. */
const hy_str_t *hy_upstream_header(hy_ureq_t *u, hy_str_t name);
/** A trailer field of the upstream's chunked response (same matching), or NULL ($upstream_trailer_NAME). */
const hy_str_t *hy_upstream_trailer(hy_ureq_t *u, hy_str_t name);

/* ---- the response cache's hooks for the engine (upstream/cache.c; the settings: upstream/cache.h) */

/** Before the exchange starts: 1 when the request was answered from the cache (or waits for a lock and will be
 * answered or continue by itself), 0 to go on to the upstream now. */
int hy_ucache_start(hy_ureq_t *u, void (*go)(hy_ureq_t *u));
/** The upstream's head arrived (before the module's on_head): true when the cache answered instead (a 304 that
 * revalidated the stored response, or a status *_cache_use_stale names with a stale file at hand): the caller
 * drops the upstream connection and stops. */
bool hy_ucache_head(hy_ureq_t *u);
/** A try failed with ft (HY_UPS_FT_*) and no retry follows: true when a stale response was served instead. */
bool hy_ucache_failed(hy_ureq_t *u, int ft);
/** After the module's on_head accepted the response: decide whether to store it, begin the file. */
void hy_ucache_store_begin(hy_ureq_t *u);
/** *_intercept_errors took the upstream's status: store the status alone when it is cacheable (a HIT then answers
 * it with the error_page, as nginx). */
void hy_ucache_store_error(hy_ureq_t *u);
/** Does the client's Range (and If-Range) go to the upstream? Yes unless the response may be stored (below
 * *_cache_min_uses, past *_cache_max_range_offset, bypassed, or no cache: nginx passes it). */
bool hy_ucache_passes_range(hy_ureq_t *u);
/** Decoded body bytes (memory segments of q) for the file being stored. */
void hy_ucache_tee(hy_ureq_t *u, const hy_outq_t *q);
/** The body is complete (ok) or the exchange failed: rename the file into place, or drop it. */
void hy_ucache_store_end(hy_ureq_t *u, bool ok);
#endif
