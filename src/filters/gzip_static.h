/* gzip_static.h — the content handler of gzip_static / brotli_static / zstd_static (nginx's
 * ngx_http_gzip_static_module): serves "path.gz" (".br", ".zst") with Content-Encoding when the location enables
 * it and the client accepts it; DECLINED otherwise, so the static handler serves the file itself. Registered
 * before static (src/process/modules.c); its directives live with the gzip filter's (filters/gzip.c). */
#ifndef HY_FILTERS_GZIP_STATIC_H
#define HY_FILTERS_GZIP_STATIC_H

#include "../http/request.h"

extern hy_module_t hy_http_gzip_static_module;

#endif
