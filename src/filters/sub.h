/* sub.h — nginx's sub_filter module (sub.c): string substitution in response bodies, a streaming body filter
 * placed before compression in hy_modules[] (the substituted text is what gets compressed). */
#ifndef HY_HTTP_FILTER_SUB_H
#define HY_HTTP_FILTER_SUB_H

#include "../http/request.h"

extern hy_module_t hy_http_sub_module;

#endif
