/* limit_rate.h — nginx's limit_rate and limit_rate_after (variables allowed, nginx 1.17.0+): the response's rate
 * in bytes per second, put in req->limit_rate when the response head goes out (unless `set $limit_rate` set it
 * first), for the protocol to pace its socket (event/sock.h, hy_sock_set_rate). */
#ifndef HY_HTTP_LIMIT_RATE_H
#define HY_HTTP_LIMIT_RATE_H

#include "../conf/conf.h"
#include "../core/str.h"

extern hy_module_t hy_http_limit_rate_module;

/** nginx's size syntax for a rate or an offset given at run time ("16k", "1m", "100"): bytes, or -1. */
int64_t hy_limit_rate_parse(hy_str_t v);

#endif
