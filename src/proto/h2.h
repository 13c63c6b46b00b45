/* h2.h — the HTTP/2 server connection (RFC 9113) with our own framing (h2frame.h) and HPACK (hpack.h): streams run
 * through the same request core as HTTP/1 (http/phases.h, http/body.h), responses leave from the request's output
 * segments as DATA frames, flow-control windows open as handlers consume request bodies. */
#ifndef HY_PROTO_H2_H
#define HY_PROTO_H2_H

#include "../http/conn.h"

/** The client connection preface (RFC 9113 §3.4) and its first line, which HTTP/1 parsing recognises. */
#define HY_H2_PREFACE "PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n"
#define HY_H2_PREFACE_LINE_LEN 16

/** Take an open connection (TLS with ALPN "h2", or cleartext starting with the preface): h2 becomes
 * c->ops/c->proto. Bytes already in c->sock.input (the preface read by HTTP/1) are processed first. */
void hy_h2_attach(hy_conn_t *c);

#endif
