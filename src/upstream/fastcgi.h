/* fastcgi.h — the FastCGI codec for the upstream engine (fastcgi_pass). */
#ifndef HY_UPSTREAM_FASTCGI_H
#define HY_UPSTREAM_FASTCGI_H

#include "upstream.h"
#include "params.h"

typedef struct hy_fcgi_opts {
    bool keep_conn;                 /* fastcgi_keep_conn: FCGI_KEEP_CONN, the connection may be pooled */
    const hy_array_t *catch_stderr; /* hy_str_t: a stderr record holding one of them fails the try */
    const hy_uparams_t *params;     /* evaluated into u->headers as the request is sent */
    bool pass_headers;              /* fastcgi_pass_request_headers */
} hy_fcgi_opts_t;

/** Prepare u for the FastCGI codec (u->headers are the parameters, in order). */
void hy_upstream_fcgi_init(hy_ureq_t *u, const hy_fcgi_opts_t *o);

extern const hy_upstream_codec_t hy_upstream_fcgi_codec;

#endif
