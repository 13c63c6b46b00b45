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

/* Shared with the upstream side (upstream/ussl.c: proxy_ssl_*, uwsgi_ssl_*), which builds client contexts. */

/** One ssl_conf_command / proxy_ssl_conf_command pair (the arrays below hold these). */
typedef struct hy_ssl_conf_cmd {
    hy_str_t name, value;
} hy_ssl_conf_cmd_t;

/** A *_password_file: its passwords (hy_str_t, one a line, cf->pool). NULL after hy_conf_error. */
hy_array_t *hy_http_ssl_read_passwords(hy_conf_t *cf, hy_str_t file);
/** The protocol names a[1..n) ("TLSv1.2" ..., any case) added to prev (a bit set, or HY_UNSET for none) as a bit
 * set for hy_http_ssl_apply_protocols; a name already in the set is warned about ("duplicate value"), as nginx's
 * bitmask slot does. -1 after hy_conf_error. */
int hy_http_ssl_parse_protocols(hy_conf_t *cf, const hy_str_t *a, size_t n, int prev);
/** Restrict ctx to the protocols of the bit set (its highest contiguous run: OpenSSL knows no gaps). 0, or -1
 * (OpenSSL refused). */
int hy_http_ssl_apply_protocols(SSL_CTX *ctx, int protocols);
/** A PEM private key, each password tried in turn (none: an encrypted key fails); NULL with OpenSSL's error queue
 * saying why. The caller frees the key. */
EVP_PKEY *hy_http_ssl_read_key(const char *path, hy_array_t *passwords);
/** Apply SSL_CONF commands (hy_ssl_conf_cmd_t; NULL: none) to ctx as a server's or a client's. 0, or -1 after
 * hy_conf_error. */
int hy_http_ssl_conf_commands(hy_conf_t *cf, SSL_CTX *ctx, const hy_array_t *cmds, bool server);
/** hy_conf_error with fmt (one %s: arg) and OpenSSL's error queue appended ("(SSL: ...)"); returns -1. */
int hy_http_ssl_conf_fail(hy_conf_t *cf, const char *fmt, const char *arg);

#endif
