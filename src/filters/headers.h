/* headers_filter.h — add_header, expires, charset/source_charset/charset_types as one header filter module. */
#ifndef HY_HTTP_HEADERS_FILTER_H
#define HY_HTTP_HEADERS_FILTER_H

#include "../http/request.h"

extern hy_module_t hy_http_headers_module;

enum { HY_EXPIRES_OFF = 0, HY_EXPIRES_EPOCH, HY_EXPIRES_MAX, HY_EXPIRES_ACCESS, HY_EXPIRES_MODIFIED,
       HY_EXPIRES_DAILY };

/** Statuses add_header (without "always") and expires apply to: 200 201 204 206 301 302 303 304 307 308. */
bool hy_headers_status_ok(int status);
/** Parse expires' arguments (1 or 2 words, without the directive name) → HY_EXPIRES_* and seconds (negative
 * allowed; DAILY: seconds after midnight, < 24 h). -1 when invalid. */
int hy_headers_parse_expires(hy_str_t *args, size_t n, int *type, int64_t *secs);

#endif
