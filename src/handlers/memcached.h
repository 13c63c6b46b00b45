/* memcached.h — nginx's ngx_http_memcached_module (memcached_pass, $memcached_key, the memcached_* directives) on
 * the upstream engine; upstream/memcached.c is the codec. */
#ifndef HY_HANDLERS_MEMCACHED_H
#define HY_HANDLERS_MEMCACHED_H

#include "../http/request.h"

extern hy_module_t hy_http_memcached_module;

#endif
