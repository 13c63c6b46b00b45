/* accept.c — the one place a connection enters: register it (http/conn.c), read the PROXY protocol header on a
 * `listen ... proxy_protocol` address (before any transport byte: exactly the header is consumed, so what follows
 * reaches TLS or HTTP untouched), run the transport's handshake (TLS slots in here; plain has none), then pick
 * the protocol: ALPN's choice on TLS, otherwise HTTP/1.x (which hands a cleartext HTTP/2 preface over to h2 where
 * the address enables HTTP/2). */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "accept.h"
#include "h1.h"
#include "h2.h"
#include "../core/log.h"
#include "../core/mem.h"
#include "../http/core.h"
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
    if (hy_str_eq(alpn, "h2")) { /* offered only where the server enables HTTP/2 (http/ssl_module.c) */
        hy_h2_attach(c);
        return;
    }
    if (alpn.len && !hy_str_eq(alpn, "http/1.1") && !hy_str_eq(alpn, "http/1.0")) {
        /* only protocols we offered can be negotiated */
        hy_log_conn(HY_LOG_INFO, c->id, "unexpected ALPN protocol, client: %s", c->peer_text);
        hy_conn_close(c);
        return;
    }
    hy_h1_attach(c);
}

static void start_transport(hy_conn_t *c)
{
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

/* ---- the PROXY protocol header: a handshake step on a transport of its own (the plain one plus this step) ---- */

static hy_sock_transport_t pp_transport;

/* nginx logs the broken bytes up to the first line end; ours are escaped */
static void log_broken(hy_conn_t *c, const char *why, const char *buf, size_t len)
{
    char text[HY_PP_V1_MAX * 4 + 1];
    size_t o = 0;
    if (strcmp(why, "broken header") == 0) {
        for (size_t i = 0; i < len && i < HY_PP_V1_MAX && buf[i] != '\r' && buf[i] != '\n'; i++) {
            unsigned char ch = (unsigned char)buf[i];
            if (ch >= 0x20 && ch < 0x7f && ch != '"' && ch != '\\')
                text[o++] = (char)ch;
            else
                o += (size_t)snprintf(text + o, 5, "\\x%02X", ch);
        }
        text[o] = '\0';
        hy_log_conn(HY_LOG_ERR, c->id, "broken header: \"%s\" while reading PROXY protocol, client: %s, server: %s",
                    text, c->peer_text, c->addr->spec.text);
    } else if (strcmp(why, "unknown PROXY protocol version") == 0) {
        hy_log_conn(HY_LOG_ERR, c->id, "%s: %u while reading PROXY protocol, client: %s, server: %s", why,
                    (unsigned)((unsigned char)buf[12] >> 4), c->peer_text, c->addr->spec.text);
    } else {
        hy_log_conn(HY_LOG_ERR, c->id, "%s while reading PROXY protocol, client: %s, server: %s", why, c->peer_text,
                    c->addr->spec.text);
    }
}

/* Peek what arrived; a complete header is consumed exactly, an incomplete one (every byte of it belongs to the
 * header) is consumed and kept in c->pp->raw until the rest arrives. */
static int pp_step(hy_sock_t *s)
{
    hy_conn_t *c = s->data;
    hy_conn_pp_t *p = c->pp;
    char buf[HY_PP_MAX];
    size_t have = p->len;
    memcpy(buf, p->raw, have);
    ssize_t n = hy_sock_recv_raw(s, buf + have, HY_PP_MAX - have, true);
    if (n == 0)
        return -ECONNRESET;
    if (n < 0)
        return (int)n;
    const char *why;
    ssize_t rc = hy_pp_parse(buf, have + (size_t)n, &p->pp, &why);
    if (rc == HY_PP_ERROR) {
        log_broken(c, why, buf, have + (size_t)n);
        return -EPROTO;
    }
    size_t take = rc == HY_PP_AGAIN ? (size_t)n : (size_t)rc - have;
    if (hy_sock_recv_raw(s, p->raw + have, take, false) != (ssize_t)take)
        return -EIO;
    p->len = have + take;
    if (rc == HY_PP_AGAIN)
        return -EAGAIN;
    if (p->pp.tlvs) /* parsed from the stack copy: point into raw */
        p->pp.tlvs = (const uint8_t *)p->raw + (p->pp.tlvs - (const uint8_t *)buf);
    return 0;
}

static void pp_done(hy_sock_t *s, const char *err)
{
    hy_conn_t *c = s->data;
    s->tp = &hy_sock_plain_transport;
    if (err) {
        if (err == hy_err_timeout)
            hy_log_conn(HY_LOG_INFO, c->id, "client timed out while reading PROXY protocol, client: %s, server: %s",
                        c->peer_text, c->addr->spec.text);
        else if (err == hy_err_eof)
            hy_log_conn(HY_LOG_INFO, c->id,
                        "client closed connection while reading PROXY protocol, client: %s, "
                        "server: %s",
                        c->peer_text, c->addr->spec.text);
        hy_conn_close(c); /* a broken header was logged by pp_step */
        return;
    }
    hy_conn_pp_t *p = c->pp;
    size_t tlv_off = p->pp.tlvs ? (size_t)(p->pp.tlvs - (const uint8_t *)p->raw) : 0;
    p = hy_realloc(p, sizeof(*p) + p->len);
    if (p->pp.tlvs)
        p->pp.tlvs = (const uint8_t *)p->raw + tlv_off;
    c->pp = p;
    start_transport(c);
}

void hy_proto_accept(hy_listener_t *l, int fd, struct sockaddr_storage *peer, socklen_t peer_len)
{
    hy_conn_t *c = hy_conn_open(l, fd, peer, peer_len);
    if (c == NULL)
        return;
    c->sock.data = c;
    if (c->addr->spec.proxy_protocol) {
        if (pp_transport.read == NULL) {
            pp_transport = hy_sock_plain_transport;
            pp_transport.name = "proxy_protocol";
            pp_transport.handshake = pp_step;
            pp_transport.edge = false; /* pp_step peeks: a partial header leaves the bytes in the kernel */
        }
        c->pp = hy_calloc(sizeof(*c->pp) + HY_PP_MAX);
        c->sock.tp = &pp_transport;
        /* nginx bounds the header by client_header_timeout (the default server's) */
        hy_sock_handshake_within(&c->sock, (uint64_t)c->addr->default_server->client_header_timeout_ms, pp_done);
        return;
    }
    start_transport(c);
}
