/* empty_gif.h — nginx's ngx_http_empty_gif_module: `empty_gif;` in a location makes it answer a 1x1 transparent
 * GIF (43 bytes) to GET and HEAD, 405 to any other method. */
#ifndef HY_HANDLERS_EMPTY_GIF_H
#define HY_HANDLERS_EMPTY_GIF_H

#include "../http/request.h"

extern hy_module_t hy_http_empty_gif_module;

#endif
