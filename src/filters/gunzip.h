/* gunzip.h — nginx's gunzip module (gunzip.c): "Content-Encoding: gzip" responses inflated for clients that do
 * not accept gzip; a streaming body filter before sub_filter and gzip in hy_modules[]. */
#ifndef HY_HTTP_FILTER_GUNZIP_H
#define HY_HTTP_FILTER_GUNZIP_H

#include "../http/request.h"

extern hy_module_t hy_http_gunzip_module;

#endif
