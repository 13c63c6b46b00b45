/* accept.c — the one place a connection enters: register it (http/conn.c), run the transport's handshake (TLS
 * slots in here; plain has none), then pick the protocol: ALPN's choice on TLS, otherwise HTTP/1.x (which
 * hands a cleartext HTTP/2 preface over to h2 once h2 exists). */
#include "accept.h"
#include "h1.h"
#include "../core/log.h"
#include "../event/tls.h"
#include "../http/ssl_module.h"

static void on_handshake(hy_sock_t *s, const char *err)
{
    hy_conn_t *c = s->data;
    if (err) {
        const char *why = hy_tls_handshake_error(s);
        if (*why) /* nginx's wording and level for a client's bad handshake */
            hy_log_conn(HY_LOG_INFO, c->id, "SSL_do_handshake() failed (SSL: %s) while SSL handshaking, client: %s",
                        why, c->peer_text);
        else
            hy_log_conn(HY_LOG_INFO, c->id, "%s while handshaking, client: %s", err, c->peer_text);
        hy_conn_close(c);
        return;
    }
    if (hy_tls_was_plain_http(s)) { /* the request is read over plain HTTP and answered 497 (phases.c) */
        c->scheme = HY_STR("http");
        c->is_plain_on_tls = true;
    }
    hy_str_t alpn = hy_sock_alpn(s);
    c->server_name = hy_sock_server_name(s);
    if (alpn.len && !hy_str_eq(alpn, "http/1.1") && !hy_str_eq(alpn, "http/1.0")) {
        /* only protocols we offered can be negotiated; HTTP/2 is not offered yet */
        hy_log_conn(HY_LOG_INFO, c->id, "unexpected ALPN protocol, client: %s", c->peer_text);
        hy_conn_close(c);
        return;
    }
    hy_h1_attach(c);
}

void hy_proto_accept(hy_listener_t *l, int fd, struct sockaddr_storage *peer, socklen_t peer_len)
{
    hy_conn_t *c = hy_conn_open(l, fd, peer, peer_len);
    if (c == NULL)
        return;
    c->sock.data = c;
    hy_http_ssl_accept_t tls;
    if (hy_http_ssl_for_addr(c->addr, &tls)) {
        if (hy_tls_accept(&c->sock, tls.ctx, tls.record_max_bytes) != 0) {
            hy_log_conn(HY_LOG_ALERT, c->id, "SSL_new() failed, client: %s", c->peer_text);
            hy_conn_close(c);
            return;
        }
        c->scheme = HY_STR("https");
        hy_sock_handshake_within(&c->sock, tls.handshake_timeout_ms, on_handshake);
        return;
    }
    hy_sock_handshake(&c->sock, on_handshake);
}
