/* ussl.h — upstreams over TLS (nginx's proxy_ssl_* and uwsgi_ssl_*): the settings a location holds, their
 * directives (the table rows a module includes with HY_USSL_DIRECTIVES("proxy", proxy_loc_t, ssl)), inheritance,
 * the client SSL_CTX built from them, and the handshake's setup and checks for one connection.
 *
 * Semantics (nginx's): SNI only with *_ssl_server_name on, with *_ssl_name (default: the host of *_pass, its port
 * cut off) and never for an address literal; *_ssl_verify off by default, on it needs *_ssl_trusted_certificate
 * and checks the chain (depth *_ssl_verify_depth, CRLs of *_ssl_crl) and the name; a failed check is a failed try
 * (next_upstream "error", 502) logged as nginx does; *_ssl_certificate/_key present a client certificate (loaded
 * per connection when they have variables; "" means none); *_ssl_session_reuse on (default) keeps the last
 * session of each peer (per worker) and offers it on the next connection to that peer.
 *
 * The context is built when a location that uses TLS is merged (so -t reports a bad file with file:line), and
 * shared by every level below the last one that set a *_ssl_* directive. */
#ifndef HY_UPSTREAM_USSL_H
#define HY_UPSTREAM_USSL_H

#include <openssl/ssl.h>
#include "upstream.h"
#include "../http/vars-t.h"

typedef struct hy_ussl_built hy_ussl_built_t;

typedef struct hy_ussl {
    int server_name, verify, session_reuse; /* flags, HY_UNSET until merged */
    int64_t verify_depth;
    int protocols;
    hy_complex_t *name;              /* *_ssl_name; NULL: the host of *_pass */
    hy_str_t trusted_certificate, crl; /* full paths; .ptr NULL: none */
    hy_str_t certificate, certificate_key; /* as written ("" set: none); .ptr NULL: unset */
    const char *cert_file;           /* where *_ssl_certificate was, for messages */
    unsigned cert_line;
    hy_array_t *passwords;     /* hy_str_t */
    struct hy_ssl_cache *cert_cache; /* *_ssl_certificate_cache (NULL: off) */
    int cert_cache_set;
    hy_str_t ciphers;
    hy_array_t *conf_commands; /* hy_ssl_conf_cmd_t (http/ssl_module.h) */
    hy_ussl_built_t *built;    /* the context (shared with the parent when this level set nothing) */
} hy_ussl_t;

/** Every field unset (create_loc_conf). */
void hy_ussl_init(hy_ussl_t *c);
/** nginx's inheritance and defaults; `module` names the directives in messages ("proxy"); `needed`: this location
 * passes to TLS upstreams (https://, suwsgi://, or *_pass with variables), so the context is built now. 0, or -1
 * after hy_conf_error. */
int hy_ussl_merge(hy_conf_t *cf, hy_ussl_t *c, const hy_ussl_t *p, const char *module, bool needed);
/** Whether the location's context exists (hy_ussl_merge built it). */
bool hy_ussl_ready(const hy_ussl_t *c);

/* hy_ussl_connect, hy_ussl_check, hy_ussl_key, hy_ussl_free_sessions: declared in upstream.h (the engine calls
 * them; upstream.c cannot include this header without an include cycle). */

/** A health probe's TLS (upstream/health.c), without a request: on the connected sock s, start the handshake with the
 * location's context as a proxied request would (SNI with *_ssl_server_name on: *_ssl_name when it has no variables,
 * else `host`, the host of *_pass; a port cut off), ALPN "h2" when `h2`; no session is offered or kept, and a
 * client certificate named with variables is not presented. `name` (cap bytes) receives the name to check. cb as
 * for hy_sock_handshake_within (bounded by timeout_ms; it may run before this returns). NULL, or why the connection
 * could not be set up (cb is not called then). */
const char *hy_ussl_probe_start(const hy_ussl_t *c, hy_sock_t *s, hy_str_t host, bool h2, uint64_t timeout_ms,
                                hy_sock_cb cb, char *name, size_t cap);
/** After the probe's handshake: NULL when *_ssl_verify is off or the certificate verifies and matches name, else
 * why (in buf, the same text as a proxied request logs). */
const char *hy_ussl_probe_check(const hy_ussl_t *c, hy_sock_t *s, const char *name, char *buf, size_t cap);

int hy_ussl_set_name(hy_conf_t *cf, const hy_directive_t *d, void *conf);
int hy_ussl_set_path(hy_conf_t *cf, const hy_directive_t *d, void *conf);
int hy_ussl_set_cert(hy_conf_t *cf, const hy_directive_t *d, void *conf);
int hy_ussl_set_passwords(hy_conf_t *cf, const hy_directive_t *d, void *conf);
int hy_ussl_set_cert_cache(hy_conf_t *cf, const hy_directive_t *d, void *conf);
int hy_ussl_set_protocols(hy_conf_t *cf, const hy_directive_t *d, void *conf);
int hy_ussl_set_conf_command(hy_conf_t *cf, const hy_directive_t *d, void *conf);
extern const hy_bounds_t hy_ussl_depth_bounds;

#define HY_USSL_OFF(T, M, F) (offsetof(T, M) + offsetof(hy_ussl_t, F))
#define HY_USSL_ROW(P, N, A, S, T, M, F)                                                                               \
    {                                                                                                                  \
        .name = P N, .ctx = HY_CTX_HTTP_ANY, .args = A, .set = S, .conf = HY_CONF_LOC, .offset = HY_USSL_OFF(T, M, F) \
    }
/* The table rows of the *_ssl_* directives for module prefix P ("proxy"), location type T, member M. */
#define HY_USSL_DIRECTIVES(P, T, M)                                                                                    \
    HY_USSL_ROW(P, "_ssl_server_name", HY_ARGS_FLAG, hy_slot_flag, T, M, server_name),                                 \
        HY_USSL_ROW(P, "_ssl_name", HY_ARGS_1, hy_ussl_set_name, T, M, name),                                          \
        HY_USSL_ROW(P, "_ssl_verify", HY_ARGS_FLAG, hy_slot_flag, T, M, verify),                                       \
        {.name = P "_ssl_verify_depth",                                                                                \
         .ctx = HY_CTX_HTTP_ANY,                                                                                       \
         .args = HY_ARGS_1,                                                                                            \
         .set = hy_slot_num,                                                                                           \
         .conf = HY_CONF_LOC,                                                                                          \
         .offset = HY_USSL_OFF(T, M, verify_depth),                                                                    \
         .post = &hy_ussl_depth_bounds},                                                                               \
        HY_USSL_ROW(P, "_ssl_trusted_certificate", HY_ARGS_1, hy_ussl_set_path, T, M, trusted_certificate),            \
        HY_USSL_ROW(P, "_ssl_crl", HY_ARGS_1, hy_ussl_set_path, T, M, crl),                                            \
        HY_USSL_ROW(P, "_ssl_certificate", HY_ARGS_1, hy_ussl_set_cert, T, M, certificate),                            \
        HY_USSL_ROW(P, "_ssl_certificate_key", HY_ARGS_1, hy_ussl_set_cert, T, M, certificate_key),                    \
        HY_USSL_ROW(P, "_ssl_certificate_cache", HY_ARGS_123, hy_ussl_set_cert_cache, T, M, cert_cache),              \
        HY_USSL_ROW(P, "_ssl_password_file", HY_ARGS_1, hy_ussl_set_passwords, T, M, passwords),                       \
        HY_USSL_ROW(P, "_ssl_protocols", HY_ARGS_1MORE, hy_ussl_set_protocols, T, M, protocols),                       \
        HY_USSL_ROW(P, "_ssl_ciphers", HY_ARGS_1, hy_slot_str, T, M, ciphers),                                         \
        HY_USSL_ROW(P, "_ssl_conf_command", HY_ARGS_2, hy_ussl_set_conf_command, T, M, conf_commands),                 \
        HY_USSL_ROW(P, "_ssl_session_reuse", HY_ARGS_FLAG, hy_slot_flag, T, M, session_reuse)

#endif
