/* referer.h — nginx's ngx_http_referer_module: `valid_referers none | blocked | server_names | NAME[/URI] |
 * ~REGEX ...` (server, location) and the variable $invalid_referer ("1" when the request's Referer is not among
 * them, "" when it is or when the level has no valid_referers). referer_hash_max_size and
 * referer_hash_bucket_size are accepted (the lists are searched directly). */
#ifndef HY_HTTP_REFERER_H
#define HY_HTTP_REFERER_H

#include "../conf/conf.h"
#include "../core/str.h"

extern hy_module_t hy_http_referer_module;

/** Where a Referer value's host starts: after "http://" or "https://" (any case) when the value is at least 11
 * bytes ("http://i.ru", as nginx); *rest is then the text after the scheme. false for anything else (no scheme:
 * a "blocked" referer). */
bool hy_referer_strip_scheme(hy_str_t value, hy_str_t *rest);

#endif
