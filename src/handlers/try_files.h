/* try_files.h — nginx's try_files (a core directive in nginx; its own module here): checks files and
 * directories in order and serves the first that exists, else redirects to the last parameter (a URI, a named
 * location or "=code"). */
#ifndef HY_HANDLERS_TRY_FILES_H
#define HY_HANDLERS_TRY_FILES_H

#include "../http/request.h"

extern hy_module_t hy_http_try_files_module;

/** The try_files phase for req->loc. Returns false to go on to the content handler (req->uri may have changed),
 * true when the request was redirected or answered. */
bool hy_try_files_run(hy_req_t *req);

#endif
