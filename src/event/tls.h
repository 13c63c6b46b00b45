/* tls.h — TLS as a transport under hy_sock_t (event/sock.h): OpenSSL 3 driven by our own event loop. The SSL
 * object reads and writes the fd itself (a socket BIO, non-blocking); the loop waits for the readiness OpenSSL
 * asks for (SSL_ERROR_WANT_READ / WANT_WRITE). Plaintext goes out as records built in a recycled 16 KiB block from
 * the outq (memory segments copied, file segments pread), starting small and growing to the record limit.
 * Configuration (certificates, protocols, SNI, ALPN, sessions) belongs to the caller that builds the SSL_CTX
 * (http/ssl_module.c); this file knows nothing of HTTP. */
#ifndef HY_EVENT_TLS_H
#define HY_EVENT_TLS_H

#include <openssl/ssl.h>
#include "sock.h"

/** Start a server-side TLS connection on an accepted sock: creates the SSL object from ctx (the caller keeps
 * ctx alive while the connection lives: the generation's reference does that), switches s->tp to the TLS
 * transport. record_max_bytes bounds each record (ssl_buffer_size; 0 = 16 KiB). Run hy_sock_handshake next.
 * 0, or -ENOMEM when OpenSSL could not create the object (the sock stays plain). */
int hy_tls_accept(hy_sock_t *s, SSL_CTX *ctx, size_t record_max_bytes);
/** Start a client-side TLS connection on a connected sock (an upstream): the SSL object from ctx (kept alive by
 * the caller while the sock lives), in connect state, s->tp switched to the TLS transport. The caller configures
 * the returned object (SNI, session, certificate) and then runs hy_sock_handshake(_within). NULL when OpenSSL could
 * not create it (the sock stays plain). */
SSL *hy_tls_connect(hy_sock_t *s, SSL_CTX *ctx);
/** The connection's SSL object, or NULL on a plain sock. */
SSL *hy_tls_ssl(hy_sock_t *s);
/** The sock whose SSL object this is (for OpenSSL callbacks), or NULL. */
hy_sock_t *hy_tls_sock(const SSL *ssl);
/** OpenSSL's reason for the last failed handshake step ("" when none, or on a plain sock); valid until the sock
 * closes. */
const char *hy_tls_handshake_error(hy_sock_t *s);
/** True when the first bytes a client sent on a TLS sock were a plain HTTP request: the handshake then
 * "succeeds" with the sock switched back to the plain transport, and the protocol answers nginx's 497. */
bool hy_tls_was_plain_http(hy_sock_t *s);
/** The ALPN protocols OpenSSL's select callback may choose from (wire format: length-prefixed names); a
 * helper for SSL_CTX_set_alpn_select_cb users. Returns SSL_TLSEXT_ERR_OK or _ALERT_FATAL (no overlap). */
int hy_tls_alpn_select(const unsigned char **out, unsigned char *outlen, const unsigned char *in, unsigned inlen,
                       const unsigned char *ours, unsigned ours_len);
/** OpenSSL's error queue as one line ("error:0A000086:SSL routines::certificate verify failed"), emptied;
 * buf is returned (empty when the queue was empty). */
const char *hy_tls_error_text(char *buf, size_t cap);

#endif
