/* ssl_ocsp.h — OCSP stapling from the certificate's responder (`ssl_stapling on` without `ssl_stapling_file`).
 *
 * At configuration time, for every certificate of a server's context: its issuer (from the certificate chain, or
 * the context's trusted store: ssl_trusted_certificate / ssl_client_certificate), the responder (the
 * `ssl_stapling_responder` URL, else the certificate's Authority Information Access OCSP URL; an `http://` URL
 * whose host is an address, or a name resolved now with getaddrinfo) and the certificate's OCSP id. What makes
 * stapling impossible is a warning with nginx's words, and that certificate is not stapled; start never fails.
 *
 * At run time, per worker, as nginx: a client that asks for the status (status_request) gets the cached response
 * while it is valid; the first such handshake, and any after the refresh time, starts a query in the background
 * (HTTP/1.0 GET of the base64 request to the responder, 60 s bounds), so that first client gets no staple. A good
 * answer is cached until min(nextUpdate, one hour), and checked first when `ssl_stapling_verify on` (signature
 * and the responder's chain against the trusted store); an error is logged and retried after 5 minutes. Only a
 * "good" status is stapled. */
#ifndef HY_HTTP_SSL_OCSP_H
#define HY_HTTP_SSL_OCSP_H

#include "ssl-t.h"

/** Set up responder queries for the certificates of c->ctx (installs the status callback). 0, or -1 after
 * hy_conf_error (out of memory only). */
int hy_ssl_ocsp_setup(hy_conf_t *cf, hy_http_ssl_srv_conf_t *c);

/* Client certificates (ssl_ocsp on|leaf): after the handshake, the verified chain's certificates (the leaf only
 * with "leaf", all but the root with "on") are checked with their responder (ssl_ocsp_responder, else the
 * certificate's AIA URL; an address, as no resolver is used here), answers verified against the context's trusted
 * store; ssl_ocsp_cache keeps statuses until nextUpdate (per worker). The state lives with the SSL object, so a
 * connection is checked once; a resumed session is checked again. */
struct hy_ssl_ocsp_cache *hy_ssl_ocsp_cache_new(hy_pool_t *pool);
/** 0: done (see hy_ssl_ocsp_client_failure); 1: pending, cb(arg) is called once when done; -1: too many waiters. */
int hy_ssl_ocsp_validate(SSL *ssl, hy_http_ssl_srv_conf_t *c, hy_loop_t *loop, void (*cb)(void *), void *arg);
/** NULL when good or not checked, else nginx's reason ("certificate revoked", ...). */
const char *hy_ssl_ocsp_client_failure(SSL *ssl);

#endif
