/* fastcgi.h — nginx's ngx_http_fastcgi_module (fastcgi_pass and the fastcgi_* directives) on the upstream engine. */
#ifndef HY_HANDLERS_FASTCGI_H
#define HY_HANDLERS_FASTCGI_H

#include "../http/request.h"

extern hy_module_t hy_http_fastcgi_module;

#endif
