/* ssl_module.h — the http ssl module (nginx's ngx_http_ssl_module): ssl_* directives per server, one SSL_CTX per
 * server that has certificates (or ssl_reject_handshake), SNI choosing the server's context, ALPN, the $ssl_*
 * variables. The transport itself is event/tls.c; proto/accept.c starts it with hy_http_ssl_ctx(). */
#ifndef HY_HTTP_SSL_MODULE_H
#define HY_HTTP_SSL_MODULE_H

#include <openssl/ssl.h>
#include "core.h"

extern hy_module_t hy_http_ssl_module;

enum hy_ssl_cache_mode {
    HY_SSL_CACHE_OFF = 0,
    HY_SSL_CACHE_NONE,
    HY_SSL_CACHE_BUILTIN,
    HY_SSL_CACHE_SHARED,
    HY_SSL_CACHE_BOTH
};

enum hy_ssl_verify { HY_SSL_VERIFY_OFF = 0, HY_SSL_VERIFY_ON, HY_SSL_VERIFY_OPTIONAL, HY_SSL_VERIFY_OPTIONAL_NO_CA };

/* A server's (or http{}'s) ssl settings; the context is built when the server's configuration is merged. */
typedef struct hy_http_ssl_srv_conf {
    int enable; /* deprecated "ssl on" */
    const char *enable_file;
    unsigned enable_line;
    hy_array_t *certificates, *keys; /* hy_str_t full paths, pairs in order */
    const char *cert_file;           /* where the first ssl_certificate is, for messages */
    unsigned cert_line;
    hy_array_t *passwords; /* hy_str_t, from ssl_password_file */
    int protocols;         /* bit set */
    hy_str_t ciphers, ecdh_curve, dhparam;
    hy_array_t *conf_commands; /* name/value pairs */
    int prefer_server_ciphers, reject_handshake, session_tickets;
    int64_t buffer_size, handshake_timeout_ms, session_timeout_s;
    int cache_mode;               /* enum hy_ssl_cache_mode */
    int64_t builtin_size;         /* builtin:N (HY_UNSET: OpenSSL's default 20480) */
    struct hy_zone *cache_zone;   /* shared:NAME:SIZE */
    hy_array_t *ticket_key_files; /* hy_str_t full paths */
    const char *ticket_file;
    unsigned ticket_line;
    int verify; /* ssl_verify_client: enum hy_ssl_verify */
    int64_t verify_depth;
    hy_str_t client_certificate, trusted_certificate, crl;
    int stapling, stapling_verify, early_data;
    hy_str_t stapling_file, stapling_responder;
    hy_str_t stapled; /* the DER OCSP response read from stapling_file (conf pool) */
    SSL_CTX *ctx;     /* owned by the generation (freed with its arena) */
} hy_http_ssl_srv_conf_t;

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
