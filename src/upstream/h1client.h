/* h1client.h — the HTTP/1.x client codec of the upstream engine (proxy_pass; see upstream.h for the contract). */
#ifndef HY_UPSTREAM_H1CLIENT_H
#define HY_UPSTREAM_H1CLIENT_H

#include "upstream.h"

extern const hy_upstream_codec_t hy_upstream_h1_codec;

#endif
