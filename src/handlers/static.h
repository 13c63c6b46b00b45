/* static.h — the static-file content handler (root/alias, index, autoindex, conditional requests, ranges,
 * sendfile) and the per-worker open-file cache. */
#ifndef HY_HANDLERS_STATIC_H
#define HY_HANDLERS_STATIC_H

#include "../http/request.h"

extern hy_module_t hy_static_module;

typedef struct hy_static_loc_conf {
    hy_array_t *index;        /* hy_str_t names; NULL → inherit ("index.html") */
    int autoindex, autoindex_exact_size, autoindex_localtime, autoindex_format;
} hy_static_loc_conf_t;

/** Serve req->uri from the file system per the location's root/alias. Always finishes the request. */
void hy_static_handler(hy_req_t *req);
/** The file-system path for `uri` under lc's root or alias (variables evaluated), NUL-terminated in the request
 * pool; *len gets its length. */
char *hy_static_map_path(hy_req_t *req, const hy_http_loc_conf_t *lc, hy_str_t uri, size_t *len);

#endif
