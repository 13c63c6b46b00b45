/* sock.h — a non-blocking stream socket: an input buffer, an output queue, and read/write callbacks.
 * Protocol layers (h1 now, h2 beside it later) sit on top; TLS will slot in underneath through `tp`
 * (a transport vtable: plain read/writev/sendfile today, OpenSSL records later) without changing them. */
#ifndef HY_EVENT_SOCK_H
#define HY_EVENT_SOCK_H

#include <sys/socket.h>
#include "loop.h"
#include "../core/buf.h"
#include "../core/outq.h"

/* Error sentinels for callbacks (compare pointers; log the text). */
extern const char hy_err_eof[];        /* peer closed its side */
extern const char hy_err_io[];         /* read/write error */
extern const char hy_err_buf_full[];   /* input reached read_limit */

typedef void (*hy_sock_cb)(hy_sock_t *s, const char *err);

typedef struct hy_sock_transport {
    /** Read plaintext into buf; >0 bytes, 0 EOF, -EAGAIN, or another -errno. */
    ssize_t (*read)(hy_sock_t *s, char *buf, size_t len);
    /** Write as much of the outq as possible: 0 all written, -EAGAIN, or another -errno. */
    int (*flush)(hy_sock_t *s);
} hy_sock_transport_t;

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
    void *data;                     /* the protocol's connection */
    uint64_t bytes_in, bytes_out;
    struct sockaddr_storage peer;
    socklen_t peer_len;
    bool is_reading, is_eof, is_closed, is_corked, use_sendfile;
    bool more_until_close; /* the connection closes after this output: hold partial segments (MSG_MORE) so the
                            * last data leaves together with the FIN, as TCP_CORK + close does */
};

/** Wrap an accepted non-blocking fd. The sock does not own its memory (embedded in a connection). */
void hy_sock_init(hy_sock_t *s, hy_loop_t *loop, int fd);
/** Start calling cb when input grows, on EOF (err = hy_err_eof) and on errors. Data already buffered is not
 * re-announced: check s->input yourself. */
void hy_sock_read_start(hy_sock_t *s, hy_sock_cb cb);
void hy_sock_read_stop(hy_sock_t *s);
/** Read now, without waiting for readiness (a fresh connection's first bytes are often already there). */
void hy_sock_read_now(hy_sock_t *s);
/** Flush the outq now as far as the kernel takes it; cb (may be NULL) fires once when all is written, or with
 * an error. cb may run before this returns. */
void hy_sock_write(hy_sock_t *s, hy_sock_cb cb);
/** TCP_CORK on/off (tcp_nopush). */
void hy_sock_set_cork(hy_sock_t *s, bool on);
/** Close the fd and release buffers; the owner frees the memory (use hy_loop_free_later). */
void hy_sock_close(hy_sock_t *s);

#endif
