/* msie.h — nginx's browser quirks for built-in error pages (msie_padding, msie_refresh). */
#ifndef HY_HTTP_MSIE_H
#define HY_HTTP_MSIE_H

#include <stdbool.h>
#include "../core/str.h"

/** The padding nginx appends to a built-in error page (status >= 400) for MSIE and Chrome user agents when
 * msie_padding is on, so those browsers show the page instead of their own "friendly" one; an empty string
 * otherwise. The result is static. `enabled` is the location's msie_padding, `version` the request's HTTP version
 * (10 = 1.0; HTTP/0.9 gets none), `user_agent` its User-Agent value or NULL. Pure. */
hy_str_t hy_http_msie_padding(bool enabled, int version, const hy_str_t *user_agent, int status);

/** nginx's browser flags for keepalive_disable (ngx_http_process_user_agent, case-sensitive substrings):
 * msie6 — "MSIE 4.x" or "MSIE 5.x", or "MSIE 6.x" without "SV1" after it, and no "Opera"; safari — neither MSIE
 * nor Opera, not "Gecko/", not "Chrome/", and "Safari/" with "Mac OS X". user_agent NULL: neither. Pure. */
bool hy_http_ua_msie6(const hy_str_t *user_agent);
bool hy_http_ua_safari(const hy_str_t *user_agent);
/** nginx's "msie" flag (msie_padding and msie_refresh): "MSIE " with at least three bytes after it, no "Opera". */
bool hy_http_ua_msie(const hy_str_t *user_agent);

/** msie_refresh's page (ngx_http_send_refresh): `<html><head><meta http-equiv="Refresh" content="0; URL=...">`
 * with the location escaped as nginx's refresh escape does (space, '"', '\'', control bytes and bytes >= 0x7f
 * become %XX). Writes into dst unless it is NULL; returns the page's length. Pure. */
size_t hy_http_msie_refresh_page(char *dst, hy_str_t location);

#endif
