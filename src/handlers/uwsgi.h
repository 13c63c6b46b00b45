/* uwsgi.h — nginx's ngx_http_uwsgi_module (uwsgi_pass and the uwsgi_* directives) on the upstream engine. */
#ifndef HY_HANDLERS_UWSGI_H
#define HY_HANDLERS_UWSGI_H

#include "../http/request.h"

extern hy_module_t hy_http_uwsgi_module;

#endif
