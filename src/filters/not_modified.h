/* not_modified.h — nginx's not_modified filter: If-Modified-Since / If-None-Match → 304, If-Unmodified-Since /
 * If-Match → 412, for every 200 response (static, gzip_static, proxied...). */
#ifndef HY_FILTERS_NOT_MODIFIED_H
#define HY_FILTERS_NOT_MODIFIED_H

#include "../http/request.h"

extern hy_module_t hy_http_not_modified_module;

#endif
