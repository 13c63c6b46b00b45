/* filter_gzip.h — response compression: nginx's gzip and gzip_static modules, plus brotli and zstd with the
 * directive names of the third-party ngx_brotli / zstd-nginx-module, and a per-worker cache of compressed
 * static files (gzip_cache). One module, one header filter, one body filter; codecs in compress.c. */
#ifndef HY_HTTP_FILTER_GZIP_H
#define HY_HTTP_FILTER_GZIP_H

#include "../http/request.h"
#include "../core/file.h"

extern hy_module_t hy_http_gzip_module;

/* The opener (hy_ofc_open: open-file cache aware): a new reference, or NULL with *err set. */
typedef hy_file_t *(*hy_gzip_open_fn)(hy_req_t *req, const hy_http_loc_conf_t *lc, const char *path, size_t len, int *err);

/** gzip_static / brotli_static / zstd_static (the gzip_static content handler): for `path` (GET/HEAD), try the
 * precompressed variants ("path.br", "path.zst", "path.gz") the location enables and the client accepts,
 * in the client's q order then br > zstd > gzip. On success returns the variant (a new reference) with
 * Content-Encoding set on req; NULL to serve `path` as usual. */
hy_file_t *hy_gzip_static_open(hy_req_t *req, const char *path, size_t len, hy_gzip_open_fn open);
/** Does the request's location enable any of gzip_static / brotli_static / zstd_static (so the handler need not
 * map the path otherwise)? */
bool hy_gzip_static_enabled(hy_req_t *req);

/** nginx's ngx_http_gzip_ok, for gunzip: would this client get a gzip-encoded response here (gzip_http_version,
 * gzip_proxied, gzip_disable, and gzip accepted in Accept-Encoding)? */
bool hy_gzip_client_accepts(hy_req_t *req);
/** nginx's r->gzip_vary: the response depends on Accept-Encoding; gzip's header filter (after the caller's)
 * adds "Vary: Accept-Encoding" with gzip_vary on. */
void hy_gzip_mark_vary(hy_req_t *req);

#endif
