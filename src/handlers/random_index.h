/* random_index.h — nginx's random_index module (random_index.c): a URI ending in '/' is internally redirected to
 * a random file of its directory; a content handler before index in hy_modules[]. */
#ifndef HY_HANDLERS_RANDOM_INDEX_H
#define HY_HANDLERS_RANDOM_INDEX_H

#include "../http/request.h"

extern hy_module_t hy_http_random_index_module;

#endif
