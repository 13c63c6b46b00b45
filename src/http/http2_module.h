/* http2_module.h — nginx's HTTP/2 directives (ngx_http_v2_module): `http2 on|off` (1.25.1+) and the
 * `listen ... http2` parameter (core_module.c sets hy_listen_spec_t.http2), the stream limits and buffer sizes,
 * and the obsolete names nginx maps onto the generic directives. The protocol itself is proto/h2.c; this unit
 * only holds the configuration, so the TLS layer (ALPN) and the protocol read the same answer. */
#ifndef HY_HTTP_HTTP2_MODULE_H
#define HY_HTTP_HTTP2_MODULE_H

#include "../conf/conf.h"
#include "core.h"

extern hy_module_t hy_http_v2_module;

typedef struct hy_http2_srv_conf {
    int enable;                      /* http2 on|off (HY_UNSET: off) */
    int64_t max_concurrent_streams;  /* http2_max_concurrent_streams (128) */
    int64_t body_preread_size;       /* http2_body_preread_size (64k): the initial stream window */
} hy_http2_srv_conf_t;

typedef struct hy_http2_loc_conf {
    int64_t chunk_size; /* http2_chunk_size (8k): the largest DATA frame of a response */
} hy_http2_loc_conf_t;

typedef struct hy_http2_main_conf {
    int64_t recv_buffer_size; /* http2_recv_buffer_size (256k): how much is read from the socket at once */
} hy_http2_main_conf_t;

/** The server's HTTP/2 settings. */
const hy_http2_srv_conf_t *hy_http2_srv_conf(const hy_http_srv_conf_t *srv);
/** The location's HTTP/2 settings (NULL loc: the server's). */
const hy_http2_loc_conf_t *hy_http2_loc_conf(const hy_http_loc_conf_t *loc);
/** http2_recv_buffer_size of the generation (256k without an http{} setting). */
size_t hy_http2_recv_buffer_size(hy_cycle_t *cycle);
/** Whether HTTP/2 is on for srv reached through addr: `http2 on` in the server or `listen ... http2` on the
 * address (nginx's rule for ALPN and for the cleartext preface). */
bool hy_http2_enabled(const hy_http_addr_t *addr, const hy_http_srv_conf_t *srv);

#endif
