/* sock.h — a non-blocking stream socket: an input buffer, an output queue, and read/write callbacks.
 * Protocol layers (proto/h1, h2 next) sit on top and never touch the fd: every system call on it — read, write,
 * sendfile, shutdown, socket options, peeking for unread bytes, the handshake of a secure transport — goes
 * through this API and its transport vtable `tp` (plain recv/send/writev/sendfile here; event/tls.c adds OpenSSL
 * records under the same vtable). Outbound connections to upstreams start with hy_sock_connect. */
#ifndef HY_EVENT_SOCK_H
#define HY_EVENT_SOCK_H

#include <sys/socket.h>
#include "loop.h"
#include "../core/buf.h"
#include "../core/outq.h"
#include "../core/str.h"

/* Error sentinels for callbacks (compare pointers; log the text). */
extern const char hy_err_eof[];        /* peer closed its side */
extern const char hy_err_io[];         /* read/write error */
extern const char hy_err_buf_full[];   /* input reached read_limit */
extern const char hy_err_timeout[];    /* hy_sock_connect: no connection within the timeout */
extern const char hy_err_connect[];    /* hy_sock_connect: refused, unreachable ... (errno in s->last_errno) */
extern const char hy_err_handshake[];  /* the transport's handshake failed */

typedef void (*hy_sock_cb)(hy_sock_t *s, const char *err);

/* The transport: how plaintext gets in and out of the fd. Every hook gets the sock; NULL hooks mean "nothing to
 * do" (the plain transport has no handshake, no ALPN, no SNI). */
typedef struct hy_sock_transport {
    const char *name; /* "plain", "tls" */
    /** The fd may be watched edge-triggered (event/loop.h): read and flush call hy_io_drained when the kernel's
     * queue is empty or full. TLS is not: OpenSSL reads a record at a time and may leave bytes in the kernel. */
    bool edge;
    /** Read plaintext into buf; >0 bytes, 0 EOF, -EAGAIN, or another -errno. */
    ssize_t (*read)(hy_sock_t *s, char *buf, size_t len);
    /** Write as much of the outq as possible: 0 all written, -EAGAIN, or another -errno. */
    int (*flush)(hy_sock_t *s);
    /** One handshake step: 0 done, -EAGAIN wait (set s->hs_want_write when it waits for writability), or
     * another -errno (failed). */
    int (*handshake)(hy_sock_t *s);
    /** Orderly end of our sending side (TLS: close_notify first). 0 or -errno. */
    int (*shutdown)(hy_sock_t *s);
    /** Whether the peer sent bytes not read yet (plaintext or records still in the transport's buffers). */
    bool (*has_unread)(hy_sock_t *s);
    /** The handshake's results: the negotiated ALPN protocol and the SNI name (empty when none). */
    hy_str_t (*alpn)(hy_sock_t *s);
    hy_str_t (*server_name)(hy_sock_t *s);
    /** The connection waits for the peer's next request: give back what can be rebuilt cheaply (TLS: record
     * buffers, while many connections are open). Optional. */
    void (*idle)(hy_sock_t *s);
    /** Release the transport's state (called once by hy_sock_close). */
    void (*release)(hy_sock_t *s);
} hy_sock_transport_t;

/** The plain transport (recv/send/writev/sendfile, edge-triggered); TLS falls back to it for a plain HTTP request
 * on a TLS port. */
extern const hy_sock_transport_t hy_sock_plain_transport;

struct hy_sock {
    hy_io_t io;
    hy_loop_t *loop;                /* borrowed */
    const hy_sock_transport_t *tp;  /* plain by default */
    void *tls;                      /* owned by tls.c when set (later) */
    hy_buf_t input;                 /* owned */
    hy_outq_t outq;                 /* owned */
    size_t read_limit;              /* input never grows beyond this */
    hy_sock_cb on_read;             /* set while reading */
    hy_sock_cb on_write;            /* called once when the outq drained (or on error) */
    hy_sock_cb on_connect;          /* hy_sock_connect / hy_sock_handshake: called once */
    hy_timer_t _timer;              /* connect timeout */
    hy_defer_t _connect_defer;      /* a connect that finished at once is reported from the loop */
    void *data;                     /* the protocol's connection */
    uint64_t bytes_in, bytes_out;
    struct sockaddr_storage peer;
    socklen_t peer_len;
    struct sockaddr_storage local; /* hy_sock_local_addr fills it once */
    socklen_t local_len;           /* 0 until known */
    int last_errno;                /* the errno behind the last hy_err_io / hy_err_connect */
    bool is_reading, is_eof, is_closed, is_corked, use_sendfile, is_nodelay, hs_want_write, is_connecting;
    uint64_t write_cap;        /* transports write no further than this bytes_out (UINT64_MAX: no cap; limit_rate) */
    uint64_t turn_max;         /* bytes one flush writes before the loop's other work (sendfile_max_chunk; 0: no
                                * bound): the rest goes in the next iteration, the socket being still writable */
    struct hy_sock_rate *rate; /* limit_rate's pacing, NULL when none (hy_sock_set_rate) */
    bool more_until_close; /* the connection closes after this output: hold partial segments (MSG_MORE) so the
                            * last data leaves together with the FIN, as TCP_CORK + close does */
};

/** Wrap an accepted non-blocking fd. The sock does not own its memory (embedded in a connection). */
void hy_sock_init(hy_sock_t *s, hy_loop_t *loop, int fd);
/** The peer's end is known: read (EOF), or announced by epoll and not read yet (edge-triggered sockets). */
static inline bool hy_sock_peer_done(const hy_sock_t *s)
{
    return s->is_eof || (s->io.ready & HY_EV_PEER_DONE);
}
/** Start calling cb when input grows, on EOF (err = hy_err_eof) and on errors. Data already buffered is not
 * re-announced: check s->input yourself. */
void hy_sock_read_start(hy_sock_t *s, hy_sock_cb cb);
void hy_sock_read_stop(hy_sock_t *s);
/** Read now, without waiting for readiness (a fresh connection's first bytes are often already there). */
void hy_sock_read_now(hy_sock_t *s);
/** Flush the outq now as far as the kernel takes it; cb (may be NULL) fires once when all is written, or with
 * an error. cb may run before this returns. */
void hy_sock_write(hy_sock_t *s, hy_sock_cb cb);
/** TCP_CORK on/off (tcp_nopush); no-op on unix sockets. */
void hy_sock_set_cork(hy_sock_t *s, bool on);
/** TCP_NODELAY on (tcp_nodelay); no-op on unix sockets and when already set. */
void hy_sock_set_nodelay(hy_sock_t *s);
/** Whether the peer sent bytes nobody has read yet (buffered input, the transport's buffers, or the kernel's
 * receive queue, peeked without consuming). Lingering close uses it to avoid a reset. */
bool hy_sock_has_unread(hy_sock_t *s);
/** The protocol waits for the peer's next request on this socket (keep-alive): the transport may shrink. */
void hy_sock_idle(hy_sock_t *s);
/** Receive from the fd itself, past the transport and the input buffer: for a header that precedes every
 * transport byte (the PROXY protocol). peek leaves the bytes queued. >0 bytes, 0 EOF, -EAGAIN or another -errno. */
ssize_t hy_sock_recv_raw(hy_sock_t *s, char *buf, size_t len, bool peek);
/** Orderly end of our sending side (shutdown(SHUT_WR); TLS sends close_notify first). 0 or -errno. */
int hy_sock_shutdown_write(hy_sock_t *s);
/** The local address of the connection (getsockname once, then cached). NULL when unknown. */
const struct sockaddr_storage *hy_sock_local_addr(hy_sock_t *s, socklen_t *len);
/** Run the transport's handshake to its end (immediately done for plain); cb fires exactly once, with NULL or
 * hy_err_handshake / hy_err_eof / hy_err_timeout. The caller bounds it with its own timer if needed. cb may run
 * before this returns. */
void hy_sock_handshake(hy_sock_t *s, hy_sock_cb cb);
/** hy_sock_handshake bounded by timeout_ms (cb gets hy_err_timeout when it runs out). */
void hy_sock_handshake_within(hy_sock_t *s, uint64_t timeout_ms, hy_sock_cb cb);
/** The negotiated ALPN protocol and the SNI name, empty for plain connections. */
hy_str_t hy_sock_alpn(hy_sock_t *s);
hy_str_t hy_sock_server_name(hy_sock_t *s);
/** Outbound: a non-blocking connect to a TCP or unix-socket address. On 0, cb fires exactly once (never before
 * this returns): NULL when connected, hy_err_connect (s->last_errno says why) or hy_err_timeout after timeout_ms.
 * On -errno (socket() failed) cb never fires. The sock is initialised here; close it with hy_sock_close. */
int hy_sock_connect(hy_sock_t *s, hy_loop_t *loop, const struct sockaddr *sa, socklen_t len, uint64_t timeout_ms,
                    hy_sock_cb cb);
/** hy_sock_connect from a given local address (proxy_bind): bound before connecting (IP_BIND_ADDRESS_NO_PORT, so
 * the port is picked at connect time). -errno when the bind fails (cb never fires then). */
int hy_sock_connect_from(hy_sock_t *s, hy_loop_t *loop, const struct sockaddr *sa, socklen_t len,
                         const struct sockaddr *local, socklen_t local_len, uint64_t timeout_ms, hy_sock_cb cb);
/** limit_rate: from now on the output leaves at `rate` bytes per second once `after` bytes went out at full speed
 * (nginx's pacing: one second's worth at once, then a timer releases the rest; no CPU is spent waiting). rate 0
 * removes the pacing. */
void hy_sock_set_rate(hy_sock_t *s, uint64_t rate, uint64_t after);
/** Close the fd and release buffers; the owner frees the memory (use hy_loop_free_later). */
void hy_sock_close(hy_sock_t *s);
/** Close with a reset (SO_LINGER 0: RST instead of FIN; reset_timedout_connection). */
void hy_sock_reset(hy_sock_t *s);

#endif
