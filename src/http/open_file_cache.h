/* open_file_cache.h — nginx's open_file_cache (per worker: a worker is single-threaded) and the pieces every
 * file-serving content handler shares (static, index, gzip_static): opening through the cache, the status and
 * error-log line for an errno, and a 200 response for an open file. */
#ifndef HY_HTTP_OPEN_FILE_CACHE_H
#define HY_HTTP_OPEN_FILE_CACHE_H

#include "request.h"
#include "../core/file.h"

struct stat;

/** Open `path` (NUL-terminated, `len` bytes) for the location's open_file_cache and disable_symlinks settings
 * (lc: req's location or the one the caller serves from): a new reference the caller unrefs, or NULL with *err
 * set to the errno (a cached error with open_file_cache_errors; ELOOP for a link disable_symlinks refuses). A
 * cached entry is reused only under the disable_symlinks it was opened with. Small regular files (<= 32 KiB)
 * carry their bytes in f->data. Neither a regular file nor a directory: ENOENT. */
hy_file_t *hy_ofc_open(hy_req_t *req, const hy_http_loc_conf_t *lc, const char *path, size_t len, int *err);
/** The disable_symlinks policy (HY_SYMLINKS_*, core/nofollow.h) for `path` in location lc: *from gets the length
 * of the prefix opened as it is (from=, evaluated for req), 0 for none. */
int hy_http_symlinks(hy_req_t *req, const hy_http_loc_conf_t *lc, const char *path, size_t len, size_t *from);
/** open(2) of path under lc's disable_symlinks: the fd, or -errno. */
int hy_http_open(hy_req_t *req, const hy_http_loc_conf_t *lc, const char *path, size_t len, int flags);
/** stat(2) of path under lc's disable_symlinks (try_files, "if -f", index): 0, or the errno. */
int hy_http_stat(hy_req_t *req, const hy_http_loc_conf_t *lc, const char *path, size_t len, struct stat *st);
/** The HTTP status for an open(2)/stat(2) errno: 404 (ENOENT, ENOTDIR, ENAMETOOLONG), 403 (EACCES, EPERM, and as
 * nginx ELOOP and EMLINK: a symbolic link loop or one disable_symlinks refuses), else 500. */
int hy_http_errno_status(int err);
/** Log `call "path" failed (err: text)` with the request's context at `level`. */
void hy_http_log_open_error(hy_req_t *req, const char *call, const char *path, int err, int level);
/** Answer 200 with the whole of f (a reference the call takes over): Last-Modified, ETag (with `etag on`),
 * Content-Type from req->uri, Content-Length; a HEAD gets no body. Small files go out from memory, larger ones
 * as a file segment (sendfile). Sets req->file for the filters. The response goes through the filters
 * (not_modified, gzip, range...) before it returns. */
void hy_http_send_file(hy_req_t *req, hy_file_t *f);

#endif
