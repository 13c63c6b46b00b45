/* path.c — nginx's ngx_http_map_uri_to_path: a URI to a file-system path under the location's root or alias.
 * In the core because every handler that touches files (static, index, try_files, autoindex) needs it. */
#include <string.h>
#include "path.h"
#include "vars.h"

/* root + uri, or alias + (uri minus the location prefix). NUL-terminated in the request pool. */
char *hy_http_map_uri_to_path(hy_req_t *req, const hy_http_loc_conf_t *lc, hy_str_t uri, size_t *len)
{
    hy_str_t base = lc->root_is_alias == 1 ? lc->alias : lc->root;
    size_t skip = 0;
    bool regex = lc->alias_regex; /* of the location that set the alias (nested ones inherit it) */
    if (lc->root_cv) { /* root/alias with variables; an alias with captures in a regex location is the whole path */
        hy_vars_eval(req, lc->root_cv, &base);
        if (lc->root_is_alias == 1 && regex)
            skip = uri.len;
    }
    hy_str_t prefix = lc->alias_prefix;
    if (lc->root_is_alias == 1 && !regex && uri.len >= prefix.len && memcmp(uri.ptr, prefix.ptr, prefix.len) == 0)
        skip = prefix.len;
    size_t n = base.len + uri.len - skip;
    char *p = hy_palloc(req->pool, n + 1);
    memcpy(p, base.ptr, base.len);
    memcpy(p + base.len, uri.ptr + skip, uri.len - skip);
    p[n] = '\0';
    *len = n;
    return p;
}
