/* access.h — nginx's ngx_http_access_module: `allow` / `deny` ADDRESS | CIDR | unix: | all (access.c). */
#ifndef HY_HTTP_ACCESS_H
#define HY_HTTP_ACCESS_H

#include "../conf/conf.h"

/* Registers an ACCESS phase handler: list it before auth_basic in hy_modules[] (nginx checks the address
 * first). */
extern hy_module_t hy_http_access_module;

#endif
