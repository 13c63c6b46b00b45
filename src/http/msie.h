/* msie.h — nginx's browser quirks for built-in error pages (msie_padding). */
#ifndef HY_HTTP_MSIE_H
#define HY_HTTP_MSIE_H

#include <stdbool.h>
#include "../core/str.h"

/** The padding nginx appends to a built-in error page (status >= 400) for MSIE and Chrome user agents when
 * msie_padding is on, so those browsers show the page instead of their own "friendly" one; an empty string
 * otherwise. The result is static. `enabled` is the location's msie_padding, `version` the request's HTTP version
 * (10 = 1.0; HTTP/0.9 gets none), `user_agent` its User-Agent value or NULL. Pure. */
hy_str_t hy_http_msie_padding(bool enabled, int version, const hy_str_t *user_agent, int status);

#endif
