/* secure_link.h — nginx's secure_link module ($secure_link, $secure_link_expires; secure_link.c). */
#ifndef HY_HTTP_SECURE_LINK_H
#define HY_HTTP_SECURE_LINK_H

#include "../conf/conf.h"

/* Variable-only; listed before the variables module in hy_modules[] (its postconfiguration defines them). */
extern hy_module_t hy_http_secure_link_module;

#endif
