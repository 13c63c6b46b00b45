/* mirror.h — nginx's ngx_http_mirror_module: `mirror URI|off` (several), `mirror_request_body on|off`. Each mirror
 * is a background subrequest (http/subrequest.h) with the request's method, args and (by default) body; its
 * response is ignored and the request goes on without waiting for it. */
#ifndef HY_HTTP_MIRROR_H
#define HY_HTTP_MIRROR_H

#include "../conf/conf.h"

/* Registers a PRECONTENT phase handler: list it after try_files in hy_modules[] (nginx runs it second). */
extern hy_module_t hy_http_mirror_module;

#endif
