/* try_files.h — nginx's try_files (a core directive in nginx; its own module here): checks files and
 * directories in order and serves the first that exists (a PRECONTENT phase handler), else redirects to the last parameter (a URI, a named
 * location or "=code"). */
#ifndef HY_HANDLERS_TRY_FILES_H
#define HY_HANDLERS_TRY_FILES_H

#include "../http/request.h"

extern hy_module_t hy_http_try_files_module;

#endif
