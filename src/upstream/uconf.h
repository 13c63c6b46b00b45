/* uconf.h — the engine-side location settings every upstream module shares (nginx's ngx_http_upstream_conf_t
 * idea): timeouts, buffering, buffers, next_upstream, hidden/passed/ignored response fields, intercept_errors,
 * request buffering, socket keep-alive; their setters, inheritance and the table rows a module includes with
 * HY_UCONF_DIRECTIVES("fastcgi", fcgi_loc_t, uc). Also the response-head handling of the CGI-like protocols
 * (FastCGI, uwsgi, SCGI): hidden fields, X-Accel-*, Status and Location, as nginx does it for them. */
#ifndef HY_UPSTREAM_UCONF_H
#define HY_UPSTREAM_UCONF_H

#include <stddef.h>
#include "upstream.h"
#include "cache.h"
#include "../http/vars-t.h"

/* *_ignore_headers bits: HY_UIGN_* (cache.h) */

typedef struct hy_uconf {
    int64_t connect_timeout, send_timeout, read_timeout;
    int buffering, request_buffering, intercept_errors, socket_keepalive;
    int pass_request_headers, pass_request_body;
    int64_t buffer_size, bufs_num, bufs_size;
    int64_t limit_rate; /* bytes/s read from the upstream (0: no limit) */
    hy_complex_t *limit_rate_cv; /* *_limit_rate with variables (evaluated when the response body starts), or NULL */
    hy_complex_t *bind; /* *_bind (NULL: inherit; the value "": off) */
    int next_upstream;
    int64_t next_tries, next_timeout;
    int ignore_headers;
    hy_array_t *hide_names, *pass_names; /* hy_str_t as written at this level; NULL: inherit */
    hy_array_t *hide;                    /* merged: the module's hidden fields + hide - pass */
    uint64_t hide_lens;                  /* merged: bit (len % 64) set for each name in hide (a cheap first test) */
    bool hide_date, hide_server;         /* merged: Date / Server are in hide (asked of every response) */
    int ignore_client_abort;             /* *_ignore_client_abort */
    /* *_buffering on, memory buffers full, client slower: the rest goes to a temp file (nginx's event pipe) */
    hy_str_t temp_path;           /* absolute; .ptr NULL until merged (default <prefix>P_temp) */
    int temp_levels[3];           /* digits per directory level, 0 = none */
    int64_t max_temp_file_size;   /* 0: no temp file (reading the upstream pauses); default 1024m */
    int64_t temp_file_write_size; /* bytes written at once; default 2 buffers */
    int64_t temp_file_write_size_conf; /* as written (HY_UNSET_SIZE: none): the default is of each level's buffers */
    int store;                    /* *_store: 0 off, 1 on (the root/alias path), 2 store_path; HY_UNSET */
    hy_complex_t *store_path;     /* *_store with a string */
    int store_access;             /* *_store_access: the mode, default 0600 */
    hy_ucache_conf_t cache;       /* *_cache* (upstream/cache.h) */
} hy_uconf_t;

extern const hy_enum_t hy_uconf_next_upstream_names[];
extern const hy_enum_t hy_uconf_ignore_names[];

/** Every field unset (create_loc_conf). */
void hy_uconf_init(hy_uconf_t *c);
/** nginx's inheritance and defaults; `module` names the directives in messages ("fastcgi"); `hidden` is the
 * module's default list of hidden response fields. 0, or -1 after hy_conf_error. */
int hy_uconf_merge(hy_conf_t *cf, hy_uconf_t *c, const hy_uconf_t *p, const char *module, const char *const *hidden,
                   size_t nhidden);
/** Copy the settings into an exchange. */
void hy_uconf_apply(const hy_uconf_t *c, hy_ureq_t *u);
/** *_bind evaluated for the exchange's request into u->bind: 0 (a value that is no address is logged and the
 * connection is not bound, as nginx). */
int hy_uconf_bind(const hy_uconf_t *c, hy_ureq_t *u);
/** The same for a *_bind value kept outside a hy_uconf_t (memcached_bind); NULL: not bound. */
int hy_uconf_bind_value(const hy_complex_t *bind, hy_ureq_t *u);
/** An IPv4 or IPv6 literal, with an optional port ("127.0.0.2:8000", "[::1]:8000"): a local address to bind to. 0 or -1. */
int hy_uconf_parse_bind(hy_str_t v, struct sockaddr_storage *ss, socklen_t *len);
/** Is the response field hidden from the client (the settings' list or a hop-by-hop field)? */
bool hy_uconf_hidden(const hy_uconf_t *c, hy_str_t name);
/** on_head for the CGI-like modules: u->data is the location's hy_uconf_t. Fills the client's response from
 * the upstream's head: status (and reason), fields not hidden, X-Accel-Redirect/-Limit-Rate/-Buffering. */
/** The shared parts of a response head's handling (the proxy's and the app modules' on_head): the client's status
 * and status line from the upstream's; one upstream field's X-Accel-Buffering/-Redirect/-Limit-Rate meaning (unless
 * ignored; a redirect target goes to *redirect); the X-Accel-Redirect itself (the response is dropped and the
 * request redirected to the URI or named location; returns -1, the engine's "redirected"). */
void hy_uconf_head_status(hy_ureq_t *u);
void hy_uconf_accel_field(hy_ureq_t *u, const hy_uconf_t *c, hy_str_t nm, hy_str_t v, hy_str_t *redirect);
int hy_uconf_accel_redirect(hy_ureq_t *u, hy_str_t target);
int hy_uconf_on_head(hy_ureq_t *u);
/** A CGI response head ("Status:" field, or an HTTP status line as uwsgi apps send; without either: 302 when
 * there is a Location, else 200) in p[0..n) (kept: the fields point into it) into u->status, u->status_line,
 * u->headers_in, u->resp_length. 0, or -1 when invalid. */
int hy_uconf_parse_cgi_head(hy_ureq_t *u, char *p, size_t n);
/** Length of a CGI head (up to and with the empty line) in p[0..n), or 0 when it is not complete yet. */
size_t hy_uconf_cgi_head_end(const char *p, size_t n);

int hy_uconf_set_bufs(hy_conf_t *cf, const hy_directive_t *d, void *conf);
int hy_uconf_set_mask(hy_conf_t *cf, const hy_directive_t *d, void *conf);
int hy_uconf_set_names(hy_conf_t *cf, const hy_directive_t *d, void *conf);
int hy_uconf_set_temp_path(hy_conf_t *cf, const hy_directive_t *d, void *conf);
int hy_uconf_set_bind(hy_conf_t *cf, const hy_directive_t *d, void *conf);
/** *_limit_rate: a size, or (nginx 1.27) a value with variables evaluated once the upstream's header is in. */
int hy_uconf_set_limit_rate(hy_conf_t *cf, const hy_directive_t *d, void *conf);
int hy_uconf_set_store(hy_conf_t *cf, const hy_directive_t *d, void *conf);
int hy_uconf_set_store_access(hy_conf_t *cf, const hy_directive_t *d, void *conf);

#define HY_UCONF_OFF(T, M, F) (offsetof(T, M) + offsetof(hy_uconf_t, F))
/* The table rows of the shared settings for module prefix P ("fastcgi"), location type T, member M. */
#define HY_UCONF_DIRECTIVES(P, T, M)                                                                                   \
    {.name = P "_connect_timeout",                                                                                     \
     .ctx = HY_CTX_HTTP_ANY,                                                                                           \
     .args = HY_ARGS_1,                                                                                                \
     .set = hy_slot_msec,                                                                                              \
     .conf = HY_CONF_LOC,                                                                                              \
     .offset = HY_UCONF_OFF(T, M, connect_timeout)},                                                                   \
        {.name = P "_send_timeout",                                                                                    \
         .ctx = HY_CTX_HTTP_ANY,                                                                                       \
         .args = HY_ARGS_1,                                                                                            \
         .set = hy_slot_msec,                                                                                          \
         .conf = HY_CONF_LOC,                                                                                          \
         .offset = HY_UCONF_OFF(T, M, send_timeout)},                                                                  \
        {.name = P "_read_timeout",                                                                                    \
         .ctx = HY_CTX_HTTP_ANY,                                                                                       \
         .args = HY_ARGS_1,                                                                                            \
         .set = hy_slot_msec,                                                                                          \
         .conf = HY_CONF_LOC,                                                                                          \
         .offset = HY_UCONF_OFF(T, M, read_timeout)},                                                                  \
        {.name = P "_buffering",                                                                                       \
         .ctx = HY_CTX_HTTP_ANY,                                                                                       \
         .args = HY_ARGS_FLAG,                                                                                         \
         .set = hy_slot_flag,                                                                                          \
         .conf = HY_CONF_LOC,                                                                                          \
         .offset = HY_UCONF_OFF(T, M, buffering)},                                                                     \
        {.name = P "_request_buffering",                                                                               \
         .ctx = HY_CTX_HTTP_ANY,                                                                                       \
         .args = HY_ARGS_FLAG,                                                                                         \
         .set = hy_slot_flag,                                                                                          \
         .conf = HY_CONF_LOC,                                                                                          \
         .offset = HY_UCONF_OFF(T, M, request_buffering)},                                                             \
        {.name = P "_buffer_size",                                                                                     \
         .ctx = HY_CTX_HTTP_ANY,                                                                                       \
         .args = HY_ARGS_1,                                                                                            \
         .set = hy_slot_size,                                                                                          \
         .conf = HY_CONF_LOC,                                                                                          \
         .offset = HY_UCONF_OFF(T, M, buffer_size)},                                                                   \
        {.name = P "_buffers",                                                                                         \
         .ctx = HY_CTX_HTTP_ANY,                                                                                       \
         .args = HY_ARGS_2,                                                                                            \
         .set = hy_uconf_set_bufs,                                                                                     \
         .conf = HY_CONF_LOC,                                                                                          \
         .offset = offsetof(T, M)},                                                                                    \
        {.name = P "_busy_buffers_size",                                                                               \
         .ctx = HY_CTX_HTTP_ANY,                                                                                       \
         .args = HY_ARGS_1,                                                                                            \
         .set = hy_slot_check_size,                                                                                    \
         .conf = HY_CONF_LOC},                                                                                         \
        {.name = P "_next_upstream",                                                                                   \
         .ctx = HY_CTX_HTTP_ANY,                                                                                       \
         .args = HY_ARGS_1MORE,                                                                                        \
         .set = hy_uconf_set_mask,                                                                                     \
         .conf = HY_CONF_LOC,                                                                                          \
         .offset = HY_UCONF_OFF(T, M, next_upstream),                                                                  \
         .post = hy_uconf_next_upstream_names},                                                                        \
        {.name = P "_next_upstream_tries",                                                                             \
         .ctx = HY_CTX_HTTP_ANY,                                                                                       \
         .args = HY_ARGS_1,                                                                                            \
         .set = hy_slot_num,                                                                                           \
         .conf = HY_CONF_LOC,                                                                                          \
         .offset = HY_UCONF_OFF(T, M, next_tries)},                                                                    \
        {.name = P "_next_upstream_timeout",                                                                           \
         .ctx = HY_CTX_HTTP_ANY,                                                                                       \
         .args = HY_ARGS_1,                                                                                            \
         .set = hy_slot_msec,                                                                                          \
         .conf = HY_CONF_LOC,                                                                                          \
         .offset = HY_UCONF_OFF(T, M, next_timeout)},                                                                  \
        {.name = P "_hide_header",                                                                                     \
         .ctx = HY_CTX_HTTP_ANY,                                                                                       \
         .args = HY_ARGS_1,                                                                                            \
         .set = hy_uconf_set_names,                                                                                    \
         .conf = HY_CONF_LOC,                                                                                          \
         .offset = HY_UCONF_OFF(T, M, hide_names)},                                                                    \
        {.name = P "_pass_header",                                                                                     \
         .ctx = HY_CTX_HTTP_ANY,                                                                                       \
         .args = HY_ARGS_1,                                                                                            \
         .set = hy_uconf_set_names,                                                                                    \
         .conf = HY_CONF_LOC,                                                                                          \
         .offset = HY_UCONF_OFF(T, M, pass_names)},                                                                    \
        {.name = P "_ignore_headers",                                                                                  \
         .ctx = HY_CTX_HTTP_ANY,                                                                                       \
         .args = HY_ARGS_1MORE,                                                                                        \
         .set = hy_uconf_set_mask,                                                                                     \
         .conf = HY_CONF_LOC,                                                                                          \
         .offset = HY_UCONF_OFF(T, M, ignore_headers),                                                                 \
         .post = hy_uconf_ignore_names},                                                                               \
        {.name = P "_intercept_errors",                                                                                \
         .ctx = HY_CTX_HTTP_ANY,                                                                                       \
         .args = HY_ARGS_FLAG,                                                                                         \
         .set = hy_slot_flag,                                                                                          \
         .conf = HY_CONF_LOC,                                                                                          \
         .offset = HY_UCONF_OFF(T, M, intercept_errors)},                                                              \
        {.name = P "_pass_request_headers",                                                                            \
         .ctx = HY_CTX_HTTP_ANY,                                                                                       \
         .args = HY_ARGS_FLAG,                                                                                         \
         .set = hy_slot_flag,                                                                                          \
         .conf = HY_CONF_LOC,                                                                                          \
         .offset = HY_UCONF_OFF(T, M, pass_request_headers)},                                                          \
        {.name = P "_pass_request_body",                                                                               \
         .ctx = HY_CTX_HTTP_ANY,                                                                                       \
         .args = HY_ARGS_FLAG,                                                                                         \
         .set = hy_slot_flag,                                                                                          \
         .conf = HY_CONF_LOC,                                                                                          \
         .offset = HY_UCONF_OFF(T, M, pass_request_body)},                                                             \
        {.name = P "_socket_keepalive",                                                                                \
         .ctx = HY_CTX_HTTP_ANY,                                                                                       \
         .args = HY_ARGS_FLAG,                                                                                         \
         .set = hy_slot_flag,                                                                                          \
         .conf = HY_CONF_LOC,                                                                                          \
         .offset = HY_UCONF_OFF(T, M, socket_keepalive)},                                                              \
        {.name = P "_bind",                                                                                            \
         .ctx = HY_CTX_HTTP_ANY,                                                                                       \
         .args = HY_ARGS_12,                                                                                           \
         .set = hy_uconf_set_bind,                                                                                     \
         .conf = HY_CONF_LOC,                                                                                          \
         .offset = HY_UCONF_OFF(T, M, bind)},                                                                          \
        {.name = P "_limit_rate",                                                                                      \
         .ctx = HY_CTX_HTTP_ANY,                                                                                       \
         .args = HY_ARGS_1,                                                                                            \
         .set = hy_uconf_set_limit_rate,                                                                               \
         .conf = HY_CONF_LOC,                                                                                          \
         .offset = HY_UCONF_OFF(T, M, limit_rate)},                                                                    \
        {.name = P "_ignore_client_abort",                                                                            \
         .ctx = HY_CTX_HTTP_ANY,                                                                                       \
         .args = HY_ARGS_FLAG,                                                                                         \
         .set = hy_slot_flag,                                                                                          \
         .conf = HY_CONF_LOC,                                                                                          \
         .offset = HY_UCONF_OFF(T, M, ignore_client_abort)},                                                           \
        {.name = P "_temp_path",                                                                                       \
         .ctx = HY_CTX_HTTP_ANY,                                                                                       \
         .args = HY_ARGS_1 | HY_ARGS_2 | HY_ARGS_3 | HY_ARGS_4,                                                        \
         .set = hy_uconf_set_temp_path,                                                                                \
         .conf = HY_CONF_LOC,                                                                                          \
         .offset = HY_UCONF_OFF(T, M, temp_path)},                                                                     \
        {.name = P "_store",                                                                                           \
         .ctx = HY_CTX_HTTP_ANY,                                                                                       \
         .args = HY_ARGS_1,                                                                                            \
         .set = hy_uconf_set_store,                                                                                    \
         .conf = HY_CONF_LOC,                                                                                          \
         .offset = offsetof(T, M)},                                                                                    \
        {.name = P "_store_access",                                                                                    \
         .ctx = HY_CTX_HTTP_ANY,                                                                                       \
         .args = HY_ARGS_1 | HY_ARGS_2 | HY_ARGS_3,                                                                    \
         .set = hy_uconf_set_store_access,                                                                             \
         .conf = HY_CONF_LOC,                                                                                          \
         .offset = HY_UCONF_OFF(T, M, store_access)},                                                                  \
        {.name = P "_max_temp_file_size",                                                                              \
         .ctx = HY_CTX_HTTP_ANY,                                                                                       \
         .args = HY_ARGS_1,                                                                                            \
         .set = hy_slot_size,                                                                                          \
         .conf = HY_CONF_LOC,                                                                                          \
         .offset = HY_UCONF_OFF(T, M, max_temp_file_size)},                                                            \
    {.name = P "_temp_file_write_size",                                                                               \
     .ctx = HY_CTX_HTTP_ANY,                                                                                           \
     .args = HY_ARGS_1,                                                                                                \
     .set = hy_slot_size,                                                                                              \
     .conf = HY_CONF_LOC,                                                                                              \
     .offset = HY_UCONF_OFF(T, M, temp_file_write_size)},                                                              \
        HY_UCACHE_DIRECTIVES(P, T, M)

/* The table rows of the cache settings (upstream/cache.h) for prefix P. */
#define HY_UCACHE_OFF(T, M, F) (offsetof(T, M) + offsetof(hy_uconf_t, cache) + offsetof(hy_ucache_conf_t, F))
#define HY_UCACHE_DIRECTIVES(P, T, M)                                                                                  \
    {.name = P "_cache_path", .ctx = HY_CTX_HTTP, .args = HY_ARGS_2MORE, .set = hy_ucache_set_path, .conf = HY_CONF_LOC}, \
        {.name = P "_cache",                                                                                           \
         .ctx = HY_CTX_HTTP_ANY,                                                                                       \
         .args = HY_ARGS_1,                                                                                            \
         .set = hy_ucache_set_cache,                                                                                   \
         .conf = HY_CONF_LOC,                                                                                          \
         .offset = HY_UCACHE_OFF(T, M, zone)},                                                                         \
        {.name = P "_cache_key",                                                                                       \
         .ctx = HY_CTX_HTTP_ANY,                                                                                       \
         .args = HY_ARGS_1,                                                                                            \
         .set = hy_ucache_set_key,                                                                                     \
         .conf = HY_CONF_LOC,                                                                                          \
         .offset = HY_UCACHE_OFF(T, M, key)},                                                                          \
        {.name = P "_cache_valid",                                                                                     \
         .ctx = HY_CTX_HTTP_ANY,                                                                                       \
         .args = HY_ARGS_1MORE,                                                                                        \
         .set = hy_ucache_set_valid,                                                                                   \
         .conf = HY_CONF_LOC,                                                                                          \
         .offset = HY_UCACHE_OFF(T, M, valid)},                                                                        \
        {.name = P "_cache_methods",                                                                                   \
         .ctx = HY_CTX_HTTP_ANY,                                                                                       \
         .args = HY_ARGS_1MORE,                                                                                        \
         .set = hy_uconf_set_mask,                                                                                     \
         .conf = HY_CONF_LOC,                                                                                          \
         .offset = HY_UCACHE_OFF(T, M, methods),                                                                       \
         .post = hy_ucache_methods_names},                                                                             \
        {.name = P "_cache_bypass",                                                                                    \
         .ctx = HY_CTX_HTTP_ANY,                                                                                       \
         .args = HY_ARGS_1MORE,                                                                                        \
         .set = hy_ucache_set_predicates,                                                                              \
         .conf = HY_CONF_LOC,                                                                                          \
         .offset = HY_UCACHE_OFF(T, M, bypass)},                                                                       \
        {.name = P "_no_cache",                                                                                        \
         .ctx = HY_CTX_HTTP_ANY,                                                                                       \
         .args = HY_ARGS_1MORE,                                                                                        \
         .set = hy_ucache_set_predicates,                                                                              \
         .conf = HY_CONF_LOC,                                                                                          \
         .offset = HY_UCACHE_OFF(T, M, no_cache)},                                                                     \
        {.name = P "_cache_min_uses",                                                                                  \
         .ctx = HY_CTX_HTTP_ANY,                                                                                       \
         .args = HY_ARGS_1,                                                                                            \
         .set = hy_slot_num,                                                                                           \
         .conf = HY_CONF_LOC,                                                                                          \
         .offset = HY_UCACHE_OFF(T, M, min_uses)},                                                                     \
        {.name = P "_cache_use_stale",                                                                                 \
         .ctx = HY_CTX_HTTP_ANY,                                                                                       \
         .args = HY_ARGS_1MORE,                                                                                        \
         .set = hy_uconf_set_mask,                                                                                     \
         .conf = HY_CONF_LOC,                                                                                          \
         .offset = HY_UCACHE_OFF(T, M, use_stale),                                                                     \
         .post = hy_ucache_stale_names},                                                                               \
        {.name = P "_cache_lock",                                                                                      \
         .ctx = HY_CTX_HTTP_ANY,                                                                                       \
         .args = HY_ARGS_FLAG,                                                                                         \
         .set = hy_slot_flag,                                                                                          \
         .conf = HY_CONF_LOC,                                                                                          \
         .offset = HY_UCACHE_OFF(T, M, lock)},                                                                         \
        {.name = P "_cache_lock_timeout",                                                                              \
         .ctx = HY_CTX_HTTP_ANY,                                                                                       \
         .args = HY_ARGS_1,                                                                                            \
         .set = hy_slot_msec,                                                                                          \
         .conf = HY_CONF_LOC,                                                                                          \
         .offset = HY_UCACHE_OFF(T, M, lock_timeout)},                                                                 \
        {.name = P "_cache_lock_age",                                                                                  \
         .ctx = HY_CTX_HTTP_ANY,                                                                                       \
         .args = HY_ARGS_1,                                                                                            \
         .set = hy_slot_msec,                                                                                          \
         .conf = HY_CONF_LOC,                                                                                          \
         .offset = HY_UCACHE_OFF(T, M, lock_age)},                                                                     \
        {.name = P "_cache_revalidate",                                                                                \
         .ctx = HY_CTX_HTTP_ANY,                                                                                       \
         .args = HY_ARGS_FLAG,                                                                                         \
         .set = hy_slot_flag,                                                                                          \
         .conf = HY_CONF_LOC,                                                                                          \
         .offset = HY_UCACHE_OFF(T, M, revalidate)},                                                                   \
        {.name = P "_cache_background_update",                                                                         \
         .ctx = HY_CTX_HTTP_ANY,                                                                                       \
         .args = HY_ARGS_FLAG,                                                                                         \
         .set = hy_slot_flag,                                                                                          \
         .conf = HY_CONF_LOC,                                                                                          \
         .offset = HY_UCACHE_OFF(T, M, background_update)},                                                            \
        {.name = P "_cache_max_range_offset",                                                                          \
         .ctx = HY_CTX_HTTP_ANY,                                                                                       \
         .args = HY_ARGS_1,                                                                                            \
         .set = hy_slot_num,                                                                                           \
         .conf = HY_CONF_LOC,                                                                                          \
         .offset = HY_UCACHE_OFF(T, M, max_range_offset)},                                                             \
    {                                                                                                                  \
        .name = P "_force_ranges", .ctx = HY_CTX_HTTP_ANY, .args = HY_ARGS_FLAG, .set = hy_slot_flag,                  \
        .conf = HY_CONF_LOC, .offset = HY_UCACHE_OFF(T, M, force_ranges)                                               \
    }

#endif
