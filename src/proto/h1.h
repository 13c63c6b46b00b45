/* h1.h — the HTTP/1.x server connection: keep-alive, pipelining, body framing, timeouts, lingering close. */
#ifndef HY_PROTO_H1_H
#define HY_PROTO_H1_H

#include "../http/conn.h"

/** Take an open connection (proto/accept.c calls this once the transport is ready and HTTP/1 was chosen): h1
 * becomes c->ops/c->proto and starts reading the first request. */
void hy_h1_attach(hy_conn_t *c);

#endif
