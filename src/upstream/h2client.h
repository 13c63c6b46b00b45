/* h2client.h — the HTTP/2 client codec of the upstream engine (proxy_http_version 2; see upstream.h for the
 * contract): libnghttp2 in client mode, h2c with prior knowledge to plain upstreams, ALPN "h2" over TLS. */
#ifndef HY_UPSTREAM_H2CLIENT_H
#define HY_UPSTREAM_H2CLIENT_H

#include "upstream.h"

extern const hy_upstream_codec_t hy_upstream_h2_codec;

#endif
