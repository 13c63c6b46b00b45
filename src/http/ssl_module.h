/* ssl_module.h — the http ssl module (nginx's ngx_http_ssl_module): ssl_* directives per server, one SSL_CTX per
 * server that has certificates (or ssl_reject_handshake), SNI choosing the server's context, ALPN, the $ssl_*
 * variables. The transport itself is event/tls.c; proto/accept.c starts it with hy_http_ssl_ctx(). */
#ifndef HY_HTTP_SSL_MODULE_H
#define HY_HTTP_SSL_MODULE_H

#include <openssl/ssl.h>
#include "core.h"
#include "ssl-t.h"

extern hy_module_t hy_http_ssl_module;

/* What a connection on a TLS address needs from its default server. */
typedef struct hy_http_ssl_accept {
    SSL_CTX *ctx;                  /* NULL: the address is not TLS */
    size_t record_max_bytes;       /* ssl_buffer_size */
    uint64_t handshake_timeout_ms; /* ssl_handshake_timeout */
} hy_http_ssl_accept_t;

/** For a connection on `addr`: whether it is TLS (listen ... ssl, or the deprecated "ssl on" in the address's
 * default server) and with which context and limits. Returns false for a plain address. */
bool hy_http_ssl_for_addr(hy_http_addr_t *addr, hy_http_ssl_accept_t *out);

#endif
