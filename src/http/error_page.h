/* error_page.h — nginx's error_page and recursive_error_pages (core directives in nginx; a module here): an
 * error status is answered by an internal redirect to a URI, a named location, or a redirect to a URL, with
 * the `=code` / `=` forms that change the final status. */
#ifndef HY_HTTP_ERROR_PAGE_H
#define HY_HTTP_ERROR_PAGE_H

#include "request.h"

extern hy_module_t hy_http_error_page_module;

/** If an error_page applies to `status` for the request's location, perform it (internal redirect, named
 * location, or external redirect) and return true; false to send the built-in page. */
bool hy_error_page_redirect(hy_req_t *req, int status);
/** Whether an error_page would take `status` for the request (proxy_intercept_errors asks before it drops the
 * upstream's response). */
bool hy_error_page_applies(hy_req_t *req, int status);

/* One parsed "error_page" target (exposed for unit tests). */
typedef struct hy_error_page_spec {
    int overwrite;      /* -1: keep the error status; 0: "=" (the target's status); else "=code" */
    hy_str_t uri;       /* "/uri", "@name" or a URL, as written */
} hy_error_page_spec_t;

/** Parse the "=..." argument of error_page: "=" → 0, "=404" → 404. -1 when invalid. */
int hy_error_page_parse_overwrite(hy_str_t arg);
/** The status an external (URL) error_page answers with: `overwrite` when it is a redirect code, else 302. */
int hy_error_page_redirect_status(int overwrite);

#endif
