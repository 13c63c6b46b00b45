/* accept.h — accepted connections enter here and leave with a protocol (HTTP/1.x today). */
#ifndef HY_PROTO_ACCEPT_H
#define HY_PROTO_ACCEPT_H

#include "../http/conn.h"

/** Accept callback for HTTP listeners (listener->data is the hy_http_addr_t). Takes ownership of fd. */
void hy_proto_accept(hy_listener_t *l, int fd, struct sockaddr_storage *peer, socklen_t peer_len);

#endif
