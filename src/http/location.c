/* location.c — location lookup with nginx's rules (ngx_http_core_find_location):
 * at each level, "=" exact wins at once; otherwise the longest matching prefix is remembered and its nested
 * locations are searched; "^~" on that prefix stops the regex search; then regex locations are tried in config
 * order (the first match wins, and its nested locations are searched); else the remembered prefix. */
#include <string.h>
#include "core.h"

enum { FOUND_NONE = 0, FOUND_PREFIX, FOUND_FINAL };

/* One level, as nginx's ngx_http_core_find_location: *best is updated. FOUND_FINAL stops every level above
 * (an exact match, or a regex match at some level); FOUND_PREFIX lets the levels above try their regexes. */
static int find_in(hy_array_t *locs, const char *path, size_t len, hy_http_loc_conf_t **best, hy_regex_caps_t *caps)
{
    if (locs == NULL)
        return FOUND_NONE;
    hy_http_loc_conf_t **l = locs->elts;
    hy_http_loc_conf_t *prefix = NULL;
    for (size_t i = 0; i < locs->nelts; i++) {
        hy_http_loc_conf_t *c = l[i];
        if (c->match == HY_LOC_EXACT) {
            if (c->name.len == len && memcmp(c->name.ptr, path, len) == 0) {
                *best = c;
                return FOUND_FINAL;
            }
        } else if (c->match == HY_LOC_PREFIX || c->match == HY_LOC_NOREGEX) {
            if (c->name.len <= len && memcmp(c->name.ptr, path, c->name.len) == 0 &&
                (prefix == NULL || c->name.len > prefix->name.len))
                prefix = c;
        }
    }
    int rc = FOUND_NONE;
    bool noregex = false;
    if (prefix) {
        *best = prefix;
        rc = FOUND_PREFIX;
        noregex = prefix->match == HY_LOC_NOREGEX; /* "^~" skips the regexes of this level only */
        if (find_in(prefix->locations, path, len, best, caps) == FOUND_FINAL)
            return FOUND_FINAL;
    }
    if (noregex)
        return rc;
    for (size_t i = 0; i < locs->nelts; i++) {
        hy_http_loc_conf_t *c = l[i];
        if ((c->match == HY_LOC_REGEX || c->match == HY_LOC_REGEX_CASELESS) &&
            hy_regex_exec(c->regex, (hy_str_t){(char *)path, len}, caps) > 0) {
            *best = c;
            find_in(c->locations, path, len, best, caps);
            return FOUND_FINAL;
        }
    }
    return rc;
}

hy_http_loc_conf_t *hy_http_find_location(hy_http_srv_conf_t *srv, const char *path, size_t len,
                                          hy_regex_caps_t *caps)
{
    hy_http_loc_conf_t *best = NULL;
    find_in(srv->loc->locations, path, len, &best, caps);
    return best;
}

hy_http_loc_conf_t *hy_http_find_auto_redirect(hy_http_srv_conf_t *srv, const char *path, size_t len)
{
    for (hy_array_t *locs = srv->loc->locations; locs != NULL;) {
        hy_http_loc_conf_t **l = locs->elts, *prefix = NULL, *slash = NULL;
        for (size_t i = 0; i < locs->nelts; i++) {
            hy_http_loc_conf_t *c = l[i];
            if (c->match != HY_LOC_PREFIX && c->match != HY_LOC_NOREGEX && c->match != HY_LOC_EXACT)
                continue;
            if (c->name.len == len && memcmp(c->name.ptr, path, len) == 0)
                return NULL; /* named exactly: served, not redirected */
            if (c->match != HY_LOC_EXACT && c->auto_redirect && c->name.len == len + 1 && c->name.ptr[len] == '/' &&
                memcmp(c->name.ptr, path, len) == 0)
                slash = c;
            else if (c->match != HY_LOC_EXACT && c->name.len < len && memcmp(c->name.ptr, path, c->name.len) == 0 &&
                     (prefix == NULL || c->name.len > prefix->name.len))
                prefix = c;
        }
        if (slash)
            return slash;
        locs = prefix ? prefix->locations : NULL;
    }
    return NULL;
}

hy_http_loc_conf_t *hy_http_find_named(hy_http_srv_conf_t *srv, const char *name, size_t len)
{
    hy_array_t *locs = srv->loc->locations;
    if (locs == NULL)
        return NULL;
    hy_http_loc_conf_t **l = locs->elts;
    for (size_t i = 0; i < locs->nelts; i++)
        if (l[i]->match == HY_LOC_NAMED && l[i]->name.len == len && memcmp(l[i]->name.ptr, name, len) == 0)
            return l[i];
    return NULL;
}
