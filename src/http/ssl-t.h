/* ssl-t.h — the types of the http ssl module's configuration, apart from its functions (ssl_module.h), so the
 * session code (ssl_session.c) and the module (ssl_module.c) can share them without including each other. */
#ifndef HY_HTTP_SSL_T_H
#define HY_HTTP_SSL_T_H

#include <openssl/ssl.h>
#include "core.h"
#include "vars-t.h"

extern hy_module_t hy_http_ssl_module; /* defined in ssl_module.c; the session cache claims zones under it */

enum hy_ssl_cache_mode {
    HY_SSL_CACHE_OFF = 0,
    HY_SSL_CACHE_NONE,
    HY_SSL_CACHE_BUILTIN,
    HY_SSL_CACHE_SHARED,
    HY_SSL_CACHE_BOTH
};

enum { HY_SSL_OCSP_OFF = 0, HY_SSL_OCSP_ON, HY_SSL_OCSP_LEAF };

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
    int early_data; /* ssl_early_data: TLS 1.3 0-RTT accepted (event/tls.c reads it; $ssl_early_data) */
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
    int stapling, stapling_verify;
    hy_str_t stapling_file, stapling_responder;
    hy_str_t stapled; /* the DER OCSP response read from stapling_file (conf pool) */
    hy_complex_t *cert_values, *key_values; /* variables in ssl_certificate(_key): every pair is loaded per
                                             * handshake (ncert_values of them); NULL when all are static */
    size_t ncert_values;
    int ocsp;                              /* ssl_ocsp: HY_SSL_OCSP_* */
    hy_str_t ocsp_responder;
    struct hy_ssl_ocsp_cache *ocsp_cache;  /* ssl_ocsp_cache (NULL: off) */
    int ocsp_cache_set;
    struct hy_ssl_cache *cert_cache; /* ssl_certificate_cache for those (NULL: off) */
    int cert_cache_set;
    SSL_CTX *ctx;     /* owned by the generation (freed with its arena) */
} hy_http_ssl_srv_conf_t;

#endif
