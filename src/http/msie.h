/* msie.h — nginx's browser quirks for built-in error pages (msie_padding). */
#ifndef HY_HTTP_MSIE_H
#define HY_HTTP_MSIE_H

#include "request.h"
#include "core.h"

/** The padding nginx appends to a built-in error page (status >= 400) for MSIE and Chrome user agents when
 * msie_padding is on, so those browsers show the page instead of their own "friendly" one; an empty string
 * otherwise. The result is static. `lc` is the location whose msie_padding applies. */
hy_str_t hy_http_msie_padding(const hy_req_t *req, const hy_http_loc_conf_t *lc, int status);

#endif
