/* scgi.h — nginx's ngx_http_scgi_module (scgi_pass and the scgi_* directives) on the upstream engine. */
#ifndef HY_HANDLERS_SCGI_H
#define HY_HANDLERS_SCGI_H

#include "../http/request.h"

extern hy_module_t hy_http_scgi_module;

#endif
