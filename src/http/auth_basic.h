/* auth_basic.h — nginx's ngx_http_auth_basic_module: `auth_basic off|REALM`, `auth_basic_user_file FILE`
 * (auth_basic.c; the file format and password schemes are core/htpasswd.h). */
#ifndef HY_HTTP_AUTH_BASIC_H
#define HY_HTTP_AUTH_BASIC_H

#include "../conf/conf.h"

/* Registers an ACCESS phase handler: list it after the access module in hy_modules[]. */
extern hy_module_t hy_http_auth_basic_module;

#endif
