/* auth_request.h — nginx's ngx_http_auth_request_module: `auth_request URI|off` asks a subrequest
 * (http/subrequest.h) whether the request may go on (2xx yes, 401/403 answered as such, anything else 500);
 * `auth_request_set $var value` takes values from the subrequest's context (e.g. $upstream_http_x_user). */
#ifndef HY_HTTP_AUTH_REQUEST_H
#define HY_HTTP_AUTH_REQUEST_H

#include "../conf/conf.h"

/* Registers an ACCESS phase handler: list it after auth_basic in hy_modules[] (nginx runs it last). */
extern hy_module_t hy_http_auth_request_module;

#endif
