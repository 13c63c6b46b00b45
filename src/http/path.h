/* path.h — URI → file-system path under root/alias (nginx's ngx_http_map_uri_to_path). */
#ifndef HY_HTTP_PATH_H
#define HY_HTTP_PATH_H

#include "request.h"

/** The file-system path for `uri` under lc's root or alias (variables and captures evaluated), NUL-terminated in
 * the request pool; *len gets its length. Never fails (an empty root maps to the bare URI). */
char *hy_http_map_uri_to_path(hy_req_t *req, const hy_http_loc_conf_t *lc, hy_str_t uri, size_t *len);

#endif
