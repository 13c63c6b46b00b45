/* static.h — the static-file content handler (root/alias, index, autoindex, conditional requests, ranges,
 * sendfile) and the per-worker open-file cache. */
#ifndef HY_HANDLERS_STATIC_H
#define HY_HANDLERS_STATIC_H

#include "../http/request.h"
#include "../http/path.h"

extern hy_module_t hy_static_module;

typedef struct hy_static_loc_conf {
    hy_array_t *index;        /* hy_str_t names; NULL → inherit ("index.html") */
    int autoindex, autoindex_exact_size, autoindex_localtime, autoindex_format;
} hy_static_loc_conf_t;


#endif
