/* h1.h — the HTTP/1.x server connection: keep-alive, pipelining, body framing, timeouts, lingering close. */
#ifndef HY_HTTP_H1_H
#define HY_HTTP_H1_H

#include <sys/socket.h>
#include "../event/listen.h"
#include "../http/core.h"

/** Accept callback for HTTP listeners (listener->data is the hy_http_addr_t). Takes ownership of fd. */
void hy_h1_accept(hy_listener_t *l, int fd, struct sockaddr_storage *peer, socklen_t peer_len);
/** Per-worker limits: max connections (worker_connections). */
void hy_h1_set_limits(int64_t max_connections);
/** Connections open now. */
size_t hy_h1_num_connections(void);
/** Graceful stop: close idle connections now, finish in-flight requests with "Connection: close". */
void hy_h1_shutdown(hy_loop_t *loop);

/** Fast stop: close every connection now (memory is freed at the end of the loop iteration). */
void hy_h1_close_all(void);

#endif
