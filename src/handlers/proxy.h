/* proxy.h — nginx's ngx_http_proxy_module (proxy_pass and the proxy_* directives) on the upstream engine. */
#ifndef HY_HANDLERS_PROXY_H
#define HY_HANDLERS_PROXY_H

#include "../http/request.h"

extern hy_module_t hy_http_proxy_module;

#endif
