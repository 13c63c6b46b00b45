/* open_file_cache.h — nginx's open_file_cache (per worker: a worker is single-threaded) and the pieces every
 * file-serving content handler shares (static, index, gzip_static): opening through the cache, the status and
 * error-log line for an errno, and a 200 response for an open file. */
#ifndef HY_HTTP_OPEN_FILE_CACHE_H
#define HY_HTTP_OPEN_FILE_CACHE_H

#include "request.h"
#include "../core/file.h"

/** Open `path` (NUL-terminated, `len` bytes) for the location's open_file_cache settings: a new reference the
 * caller unrefs, or NULL with *err set to the errno (a cached error with open_file_cache_errors). Small regular
 * files (<= 32 KiB) carry their bytes in f->data. Neither a regular file nor a directory: ENOENT. */
hy_file_t *hy_ofc_open(const hy_http_loc_conf_t *lc, const char *path, size_t len, int *err);
/** The HTTP status for an open(2)/stat(2) errno: 404 (ENOENT, ENOTDIR, ENAMETOOLONG, ELOOP), 403 (EACCES,
 * EPERM), else 500. */
int hy_http_errno_status(int err);
/** Log `call "path" failed (err: text)` with the request's context at `level`. */
void hy_http_log_open_error(hy_req_t *req, const char *call, const char *path, int err, int level);
/** Answer 200 with the whole of f (a reference the call takes over): Last-Modified, ETag (with `etag on`),
 * Content-Type from req->uri, Content-Length; a HEAD gets no body. Small files go out from memory, larger ones
 * as a file segment (sendfile). Sets req->file for the filters. The response goes through the filters
 * (not_modified, gzip, range...) before it returns. */
void hy_http_send_file(hy_req_t *req, hy_file_t *f);

#endif
