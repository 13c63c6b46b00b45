/* tls.c — the TLS transport (see tls.h). Why a socket BIO and not memory BIOs: with SSL_set_fd OpenSSL reads
 * exactly the records it needs and writes each record with one write(2), so there is no extra copy through a
 * BIO pair and no second buffer to size; our loop only has to wait for the readiness OpenSSL reports
 * (WANT_READ/WANT_WRITE), which is all a non-blocking socket BIO needs. The loop is level-triggered, so bytes
 * OpenSSL left in the kernel's queue wake us again. Memory BIOs would only pay off for kernel TLS offload
 * tricks or a userspace TCP stack, neither of which we have. */
#include <errno.h>
#include <string.h>
#include <unistd.h>
#include <sys/socket.h>
#include <openssl/err.h>
#include "tls.h"
#include "../core/buf.h"
#include "../core/file.h"
#include "../core/mem.h"
#include "../core/stats.h"

#define RECORD_FIRST 1400 /* the first record fits one TCP segment: the client can start parsing at once */
#define RECORD_MAX 16384  /* TLS's limit (RFC 8446 §5.1) */
/* OpenSSL's record buffers (about 34 KiB a connection) stay with a keep-alive connection while this worker holds
 * at most this many TLS connections: freeing and allocating them around every request (SSL_MODE_RELEASE_BUFFERS,
 * nginx's choice) costs ~1,500 instructions a request, 5% of a small response. Above it, a connection gives them
 * back whenever it waits for its next request, so 10,000 idle connections do not hold 340 MiB. */
#ifndef HY_TLS_KEEP_BUFFERS_MAX /* -DHY_TLS_KEEP_BUFFERS_MAX=0 builds nginx's behaviour, for bench/cpu_ab.sh */
#define HY_TLS_KEEP_BUFFERS_MAX 512
#endif

static size_t live; /* TLS connections of this process (one event loop per process) */

typedef struct tls_conn {
    SSL *ssl;
    hy_buf_t wbuf; /* the plaintext of the record being written (recycled block); empty between writes */
    size_t record; /* size of the next record: grows from RECORD_FIRST to record_max */
    size_t record_max;
    bool peeked;     /* the first byte was checked for a plain HTTP request (always true for a client) */
    bool client;     /* hy_tls_connect: our side connected (upstreams); not in the server's handshake counts */
    bool failed;     /* a fatal error: no close_notify may be sent (RFC 8446 §6.2) */
    uint8_t ktls;    /* kernel TLS for sending: 0 not known yet, 1 yes (SSL_sendfile for files), 2 no */
    uint8_t early;   /* TLS 1.3 0-RTT, see "Early data" below: EARLY_NONE, EARLY_READING, EARLY_FINISHED */
    bool early_checked; /* SSL_read_early_data gave its first answer in the handshake step */
    char *ebuf;      /* owned: early data read while the handshake step ran, not yet given to the reader */
    size_t elen, eoff;
    char error[200]; /* OpenSSL's reason for a failed handshake, for the caller's log line */
} tls_conn_t;

static char plain_marker; /* s->tls after a plain HTTP request arrived on a TLS port */

/* Empty the thread's OpenSSL error queue before an I/O call (SSL_get_error needs it empty). ERR_clear_error
 * always walks all 16 slots (~800 instructions in OpenSSL 3, twice per keep-alive request: 5% of a small TLS
 * response); the queue is nearly always empty already, which ERR_peek_error tells for a fraction of that. */
static inline void clear_errors(void)
{
    if (ERR_peek_error() != 0)
        ERR_clear_error();
}

/* Early data (TLS 1.3 0-RTT), when the SSL_CTX allows it (SSL_get_max_early_data > 0, ssl_early_data on):
 *   EARLY_NONE      no early data on this connection (not offered, rejected, or not enabled): the handshake
 *                   completes in tls_handshake as usual;
 *   EARLY_READING   the client's early data was accepted and the handshake step returned as soon as its first
 *                   bytes arrived (kept in ebuf): the protocol reads and answers them while the handshake is
 *                   still open — tls_read goes on with SSL_read_early_data, tls_flush writes with
 *                   SSL_write_early_data (0.5-RTT data);
 *   EARLY_FINISHED  SSL_read_early_data said the early data ended: SSL_read_ex completes the handshake (the
 *                   client's Finished) and reads on; writes stay early until the handshake is complete.
 * Requests read while the handshake is open are the replayable ones: $ssl_early_data is "1" for them. */
enum { EARLY_NONE, EARLY_READING, EARLY_FINISHED };
#define EARLY_MAX 16384 /* what http/ssl_module.c allows (SSL_CTX_set_max_early_data) */

static void count_handshake(tls_conn_t *t)
{
    hy_stats_add(&hy_stats_me->tls_handshakes, 1);
    if (SSL_session_reused(t->ssl))
        hy_stats_add(&hy_stats_me->tls_resumed, 1);
}

/* SSL_read_early_data into buf: bytes (> 0), 0 when the early data has ended (EARLY_FINISHED), or a -errno. */
static ssize_t read_early(tls_conn_t *t, char *buf, size_t len, bool *want_write)
{
    size_t n = 0;
    clear_errors();
    switch (SSL_read_early_data(t->ssl, buf, len, &n)) {
    case SSL_READ_EARLY_DATA_SUCCESS:
        t->early = EARLY_READING;
        return (ssize_t)n > 0 ? (ssize_t)n : -EAGAIN;
    case SSL_READ_EARLY_DATA_FINISH:
        t->early = t->early == EARLY_READING ? EARLY_FINISHED : EARLY_NONE;
        return 0;
    default: {
        int e = SSL_get_error(t->ssl, 0);
        if (e == SSL_ERROR_WANT_READ)
            return -EAGAIN;
        if (e == SSL_ERROR_WANT_WRITE) {
            *want_write = true;
            return -EAGAIN;
        }
        t->failed = true;
        if (e == SSL_ERROR_SYSCALL)
            return errno ? -errno : -ECONNRESET;
        hy_tls_error_text(t->error, sizeof(t->error));
        return -EPROTO;
    }
    }
}

static ssize_t tls_read(hy_sock_t *s, char *buf, size_t len)
{
    tls_conn_t *t = s->tls;
    size_t total = 0;
    if (HY_UNLIKELY(t->early != EARLY_NONE)) {
        if (t->eoff < t->elen) { /* what the handshake step read */
            size_t k = HY_MIN(len, t->elen - t->eoff);
            memcpy(buf, t->ebuf + t->eoff, k);
            t->eoff += k;
            return (ssize_t)k;
        }
        if (t->early == EARLY_READING) {
            bool ww = false;
            ssize_t r = read_early(t, buf, len, &ww);
            if (r != 0)
                return r;
        }
        if (SSL_is_init_finished(t->ssl)) { /* the client's Finished arrived through SSL_read_ex below */
            free(t->ebuf);
            t->ebuf = NULL;
            t->early = EARLY_NONE;
            count_handshake(t);
        }
    }
    /* drain what OpenSSL holds already, so that a short result means "nothing more buffered" to the caller
     * (sock.c stops reading on a short read); not the kernel's queue: that would cost a read() ending in EAGAIN
     * per request, and the level-triggered loop tells us when more arrived */
    while (total < len) {
        size_t n = 0;
        clear_errors();
        int r = SSL_read_ex(t->ssl, buf + total, len - total, &n);
        if (r == 1) {
            total += n;
            if (!SSL_has_pending(t->ssl))
                break; /* OpenSSL holds no more bytes; more from the kernel wakes the (level-triggered) loop */
            continue;
        }
        if (total > 0)
            break; /* report the data now; a sticky EOF or error shows again on the next call */
        int e = SSL_get_error(t->ssl, r);
        switch (e) {
        case SSL_ERROR_WANT_READ:
        case SSL_ERROR_WANT_WRITE:
            return -EAGAIN;
        case SSL_ERROR_ZERO_RETURN:
            return 0; /* close_notify (or an unexpected EOF: SSL_OP_IGNORE_UNEXPECTED_EOF) */
        case SSL_ERROR_SYSCALL:
            t->failed = true;
            return errno ? -errno : 0;
        default:
            t->failed = true;
            return -EPROTO;
        }
    }
    return (ssize_t)total;
}

/* Copy up to `want` bytes from the front of the outq into the record buffer without consuming them: the same
 * bytes stay queued until SSL_write took them, so a retry after WANT_WRITE passes identical data. */
static int fill_record(hy_sock_t *s, tls_conn_t *t, size_t want)
{
    size_t avail;
    char *dst = hy_buf_reserve(&t->wbuf, want, HY_BUF_BLOCK, &avail);
    if (dst == NULL)
        return -ENOMEM;
    size_t n = 0;
    for (hy_seg_t *g = s->outq.head; g && n < want; g = g->next) {
        if (g->kind == HY_SEG_MEM) {
            size_t k = HY_MIN(g->mem.len, want - n);
            memcpy(dst + n, g->mem.ptr, k);
            n += k;
        } else {
            size_t k = (size_t)HY_MIN((int64_t)(want - n), g->file.len);
            ssize_t r;
            do
                r = pread(g->file.file->fd, dst + n, k, g->file.off);
            while (r < 0 && errno == EINTR);
            if (r <= 0)
                return r == 0 ? -EIO : -errno; /* the file shrank under us: nothing more will come */
            n += (size_t)r;
            if ((size_t)r < k)
                break; /* a short read: send what we have, the rest follows in the next record */
        }
    }
    hy_buf_commit(&t->wbuf, n);
    return 0;
}

/* Kernel TLS (ssl_conf_command Options KTLS): where OpenSSL could hand the connection's send side to the kernel
 * (a kernel with the `tls` ULP, after the handshake), a file segment at the head of the queue goes out with
 * SSL_sendfile — the kernel encrypts the page-cache pages, no copy through a record buffer. Elsewhere (this
 * build machine's kernel has no tls ULP) ktls_send is false and files are pread into records as before. */
static bool ktls_send(tls_conn_t *t)
{
    if (HY_LIKELY(t->ktls == 0))
        t->ktls = SSL_is_init_finished(t->ssl) ? (BIO_get_ktls_send(SSL_get_wbio(t->ssl)) ? 1 : 2) : 0;
    return t->ktls == 1;
}

static int ktls_sendfile(hy_sock_t *s, tls_conn_t *t, size_t cap)
{
    hy_seg_t *g = s->outq.head;
    size_t len = (size_t)HY_MIN((uint64_t)g->file.len, (uint64_t)cap);
    clear_errors();
    ossl_ssize_t n = SSL_sendfile(t->ssl, g->file.file->fd, (off_t)g->file.off, len, 0);
    if (n <= 0) {
        int e = SSL_get_error(t->ssl, (int)n);
        if (e == SSL_ERROR_WANT_WRITE || e == SSL_ERROR_WANT_READ)
            return -EAGAIN;
        t->failed = true;
        return e == SSL_ERROR_SYSCALL && errno ? -errno : -EIO;
    }
    hy_outq_consume(&s->outq, (size_t)n);
    s->bytes_out += (uint64_t)n;
    return 0;
}

static int tls_flush(hy_sock_t *s)
{
    tls_conn_t *t = s->tls;
    for (;;) {
        if (t->wbuf.len == 0) {
            if (s->outq.head == NULL)
                break;
            size_t want = t->record;
            if (s->write_cap != UINT64_MAX) { /* limit_rate (hy_sock_set_rate) */
                if (s->bytes_out >= s->write_cap)
                    return -EAGAIN;
                want = (size_t)HY_MIN((uint64_t)want, s->write_cap - s->bytes_out);
            }
            if (s->outq.head->kind == HY_SEG_FILE && ktls_send(t)) {
                int r = ktls_sendfile(s, t, s->write_cap != UINT64_MAX ? want : SIZE_MAX);
                if (r != 0)
                    return r;
                continue;
            }
            int r = fill_record(s, t, want);
            if (r != 0)
                return r;
        }
        size_t n = 0, len = t->wbuf.len;
        clear_errors();
        int r = HY_UNLIKELY(t->early != EARLY_NONE && !SSL_is_init_finished(t->ssl))
                    ? SSL_write_early_data(t->ssl, hy_buf_data(&t->wbuf), len, &n) /* 0.5-RTT data */
                    : SSL_write_ex(t->ssl, hy_buf_data(&t->wbuf), len, &n);
        if (r != 1) {
            int e = SSL_get_error(t->ssl, r);
            if (e == SSL_ERROR_WANT_WRITE || e == SSL_ERROR_WANT_READ)
                return -EAGAIN;
            t->failed = true;
            return e == SSL_ERROR_SYSCALL && errno ? -errno : -EIO;
        }
        hy_outq_consume(&s->outq, len);
        hy_buf_consume(&t->wbuf, len); /* empty: the block goes back to the recycler */
        s->bytes_out += len;
        /* records grow: a fast first byte, then full records for throughput (h2o's and CDNs' dynamic sizing) */
        if (t->record < t->record_max)
            t->record = HY_MIN(t->record * 2, t->record_max);
    }
    return 0;
}

static void conn_free(tls_conn_t *t)
{
    free(t->ebuf);
    SSL_free(t->ssl);
    hy_buf_release(&t->wbuf);
    free(t);
    live--;
}

static void to_plain(hy_sock_t *s, tls_conn_t *t)
{
    conn_free(t);
    s->tls = &plain_marker;
    s->tp = &hy_sock_plain_transport;
}

static int tls_handshake(hy_sock_t *s)
{
    tls_conn_t *t = s->tls;
    s->hs_want_write = false;
    if (!t->peeked) {
        /* nginx's check: a TLS ClientHello starts with a handshake record (0x16), an SSLv2-style hello with the
         * high bit; anything else is a plain HTTP request, answered with 497 over plain HTTP */
        unsigned char b;
        ssize_t n;
        do
            n = recv(s->io.fd, &b, 1, MSG_PEEK);
        while (n < 0 && errno == EINTR);
        if (n == 0)
            return -ECONNRESET;
        if (n < 0)
            return errno == EAGAIN || errno == EWOULDBLOCK ? -EAGAIN : -errno;
        t->peeked = true;
        if (b != 0x16 && !(b & 0x80)) {
            to_plain(s, t);
            return 0;
        }
    }
    if (!t->early_checked && !t->client && SSL_get_max_early_data(t->ssl) > 0) {
        /* early data enabled: SSL_read_early_data must be the first call (it runs the handshake up to the
         * client's Finished); the first accepted bytes end the step, the protocol reads them from ebuf */
        char tmp[EARLY_MAX];
        ssize_t n = read_early(t, tmp, sizeof(tmp), &s->hs_want_write);
        if (n > 0) {
            t->ebuf = hy_alloc((size_t)n);
            memcpy(t->ebuf, tmp, (size_t)n);
            t->elen = (size_t)n, t->eoff = 0;
            t->early_checked = true;
            return 0;
        }
        if (n < 0) {
            if (n != -EAGAIN)
                hy_stats_add(&hy_stats_me->tls_failed, 1);
            return (int)n;
        }
        t->early_checked = true; /* none (or none more): the handshake completes as usual */
    }
    clear_errors();
    int r = SSL_do_handshake(t->ssl);
    if (r == 1) {
        t->early = EARLY_NONE;
        if (!t->client)
            count_handshake(t);
        return 0;
    }
    int e = SSL_get_error(t->ssl, r);
    if (e == SSL_ERROR_WANT_READ)
        return -EAGAIN;
    if (e == SSL_ERROR_WANT_WRITE) {
        s->hs_want_write = true;
        return -EAGAIN;
    }
    t->failed = true;
    if (!t->client)
        hy_stats_add(&hy_stats_me->tls_failed, 1);
    if (e == SSL_ERROR_SYSCALL)
        return errno ? -errno : -ECONNRESET;
    hy_tls_error_text(t->error, sizeof(t->error));
    return -EPROTO;
}

static int tls_shutdown(hy_sock_t *s)
{
    tls_conn_t *t = s->tls;
    if (!t->failed && SSL_is_init_finished(t->ssl)) {
        /* close_notify (RFC 8446 §6.1); we do not wait for the peer's: the socket's lingering close reads on */
        ERR_clear_error();
        SSL_set_quiet_shutdown(t->ssl, 0);
        if (SSL_shutdown(t->ssl) < 0)
            ERR_clear_error();
    }
    return shutdown(s->io.fd, SHUT_WR) == 0 ? 0 : -errno;
}

static bool tls_has_unread(hy_sock_t *s)
{
    tls_conn_t *t = s->tls;
    if (SSL_pending(t->ssl) > 0 || SSL_has_pending(t->ssl))
        return true;
    char b;
    return recv(s->io.fd, &b, 1, MSG_PEEK | MSG_DONTWAIT) > 0;
}

static hy_str_t tls_alpn(hy_sock_t *s)
{
    tls_conn_t *t = s->tls;
    const unsigned char *p = NULL;
    unsigned n = 0;
    SSL_get0_alpn_selected(t->ssl, &p, &n);
    return n ? (hy_str_t){(char *)p, n} : HY_STR_NULL;
}

static hy_str_t tls_server_name(hy_sock_t *s)
{
    tls_conn_t *t = s->tls;
    const char *n = SSL_get_servername(t->ssl, TLSEXT_NAMETYPE_host_name);
    return n ? (hy_str_t){(char *)n, strlen(n)} : HY_STR_NULL;
}

static void tls_idle(hy_sock_t *s)
{
    tls_conn_t *t = s->tls;
    if (live > HY_TLS_KEEP_BUFFERS_MAX)
        SSL_free_buffers(t->ssl); /* refuses (harmlessly) while a record is still buffered */
}

static void tls_release(hy_sock_t *s)
{
    tls_conn_t *t = s->tls;
    s->tls = NULL;
    /* a connection that ended without an error keeps its session resumable: OpenSSL drops the session of an SSL
     * freed without a shutdown (RFC 5246 §7.2.1 asks that only for errors, and a client closing first or our
     * lingering close are not errors) */
    if (!t->failed && SSL_is_init_finished(t->ssl)) {
        /* close_notify before the fd closes (RFC 8446 §6.1), best effort: a client that reads to EOF (ab, HTTP/1.0)
         * otherwise sees a truncation. The protocol closes without hy_sock_shutdown_write when it skips the
         * lingering close, so this is the one place every clean end passes through. */
        if (!(SSL_get_shutdown(t->ssl) & SSL_SENT_SHUTDOWN)) {
            ERR_clear_error();
            SSL_shutdown(t->ssl);
            ERR_clear_error();
        }
        SSL_set_shutdown(t->ssl, SSL_SENT_SHUTDOWN | SSL_RECEIVED_SHUTDOWN);
    }
    conn_free(t);
}

static const hy_sock_transport_t tls_transport = {
    .name = "tls",
    .read = tls_read,
    .flush = tls_flush,
    .handshake = tls_handshake,
    .shutdown = tls_shutdown,
    .has_unread = tls_has_unread,
    .alpn = tls_alpn,
    .server_name = tls_server_name,
    .idle = tls_idle,
    .release = tls_release,
};

static tls_conn_t *start(hy_sock_t *s, SSL *ssl, size_t record_max_bytes)
{
    SSL_set_app_data(ssl, s);
    tls_conn_t *t = hy_calloc(sizeof(*t));
    t->ssl = ssl;
    t->record_max = record_max_bytes == 0 || record_max_bytes > RECORD_MAX ? RECORD_MAX : record_max_bytes;
    t->record = HY_MIN(RECORD_FIRST, t->record_max);
    s->tls = t;
    s->tp = &tls_transport;
    live++;
    return t;
}

int hy_tls_accept(hy_sock_t *s, SSL_CTX *ctx, size_t record_max_bytes)
{
    SSL *ssl = SSL_new(ctx);
    if (ssl == NULL) {
        ERR_clear_error();
        return -ENOMEM;
    }
    if (SSL_set_fd(ssl, s->io.fd) != 1) {
        SSL_free(ssl);
        ERR_clear_error();
        return -ENOMEM;
    }
    SSL_set_accept_state(ssl);
    start(s, ssl, record_max_bytes);
    return 0;
}

SSL *hy_tls_connect(hy_sock_t *s, SSL_CTX *ctx)
{
    SSL *ssl = SSL_new(ctx);
    if (ssl == NULL) {
        ERR_clear_error();
        return NULL;
    }
    if (SSL_set_fd(ssl, s->io.fd) != 1) {
        SSL_free(ssl);
        ERR_clear_error();
        return NULL;
    }
    SSL_set_connect_state(ssl);
    tls_conn_t *t = start(s, ssl, RECORD_MAX);
    t->peeked = true; /* the 497 check is for servers */
    t->client = true;
    return ssl;
}

SSL *hy_tls_ssl(hy_sock_t *s)
{
    return s->tp == &tls_transport ? ((tls_conn_t *)s->tls)->ssl : NULL;
}

hy_sock_t *hy_tls_sock(const SSL *ssl)
{
    return SSL_get_app_data(ssl);
}

const char *hy_tls_handshake_error(hy_sock_t *s)
{
    return s->tp == &tls_transport ? ((tls_conn_t *)s->tls)->error : "";
}

bool hy_tls_was_plain_http(hy_sock_t *s)
{
    return s->tls == &plain_marker;
}

int hy_tls_alpn_select(const unsigned char **out, unsigned char *outlen, const unsigned char *in, unsigned inlen,
                       const unsigned char *ours, unsigned ours_len)
{
    unsigned char *o = NULL;
    /* server preference: the first of ours the client offers (RFC 7301 §3.2) */
    if (SSL_select_next_proto(&o, outlen, ours, ours_len, in, inlen) != OPENSSL_NPN_NEGOTIATED)
        return SSL_TLSEXT_ERR_ALERT_FATAL;
    *out = o;
    return SSL_TLSEXT_ERR_OK;
}

const char *hy_tls_error_text(char *buf, size_t cap)
{
    size_t o = 0;
    unsigned long e;
    const char *data;
    int flags;
    buf[0] = '\0';
    while ((e = ERR_get_error_all(NULL, NULL, NULL, &data, &flags)) != 0) {
        if (o + 2 >= cap)
            continue;
        if (o)
            buf[o++] = ' ', buf[o] = '\0';
        ERR_error_string_n(e, buf + o, cap - o);
        o += strlen(buf + o);
        if ((flags & ERR_TXT_STRING) && data && *data && o + 2 < cap) {
            int n = snprintf(buf + o, cap - o, ":%s", data);
            o = n > 0 ? HY_MIN(o + (size_t)n, cap - 1) : o;
        }
    }
    return buf;
}
