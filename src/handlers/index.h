/* index.h — nginx's index module: a URI ending in '/' is internally redirected to its first existing index
 * file (`index` directive); a content handler before autoindex and static. */
#ifndef HY_HANDLERS_INDEX_H
#define HY_HANDLERS_INDEX_H

#include "../http/request.h"

extern hy_module_t hy_http_index_module;

#endif
