/* accept.c — the one place a connection enters: register it (http/conn.c), run the transport's handshake (TLS
 * slots in here; plain has none), then pick the protocol: ALPN's choice on TLS, otherwise HTTP/1.x (which
 * hands a cleartext HTTP/2 preface over to h2 once h2 exists). */
#include "accept.h"
#include "h1.h"
#include "../core/log.h"

static void on_handshake(hy_sock_t *s, const char *err)
{
    hy_conn_t *c = s->data;
    if (err) {
        hy_log_conn(HY_LOG_INFO, c->id, "%s while handshaking, client: %s", err, c->peer_text);
        hy_conn_close(c);
        return;
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
    hy_sock_handshake(&c->sock, on_handshake);
}
