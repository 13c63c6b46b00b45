/* ssl_session.h — TLS session resumption for the http ssl module: ssl_session_cache (off, none, builtin[:N],
 * shared:NAME:SIZE in a shared memory zone so that any worker resumes a session), ssl_session_timeout,
 * ssl_session_tickets and the ticket keys (ssl_session_ticket_key files, or keys generated once per start by
 * the master and inherited by every worker). */
#ifndef HY_HTTP_SSL_SESSION_H
#define HY_HTTP_SSL_SESSION_H

#include "ssl-t.h"

/** The ssl_session_cache directive's setter (nginx's syntax and messages). */
int hy_http_ssl_set_session_cache(hy_conf_t *cf, const hy_directive_t *d, void *conf);
/** Configure c->ctx for resumption from the merged settings: cache mode and size, timeout, session id
 * context, tickets and their keys. 0, or -1 after hy_conf_error (unreadable or malformed key file). */
/** Before SNI switches the connection to another server's context: remember the one it was accepted with, whose
 * session cache and ticket keys keep serving the connection (nginx's rule). */
void hy_http_ssl_session_pin(SSL *ssl);
int hy_http_ssl_session_setup(hy_conf_t *cf, hy_http_ssl_srv_conf_t *c);

#endif
