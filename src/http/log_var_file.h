/* log_var_file.h — access logs whose path has variables: the file is named per request and opened for the line
 * (nginx's ngx_http_log_script_write), through nginx's open_log_file_cache when the location has one (max
 * entries, inactive, valid, min_uses: the descriptors of files used often enough stay open). Per worker. */
#ifndef HY_HTTP_LOG_VAR_FILE_H
#define HY_HTTP_LOG_VAR_FILE_H

#include <stddef.h>
#include <stdint.h>
#include "../core/mem.h"

typedef struct hy_logvf_cache hy_logvf_cache_t;

/** A cache (nginx's open_log_file_cache max= inactive= valid= min_uses=), closed with the pool. */
hy_logvf_cache_t *hy_logvf_cache_create(hy_pool_t *pool, size_t max, int64_t inactive_ms, int64_t valid_ms,
                                        unsigned min_uses);
/** Append `len` bytes to the file `path` (absolute, NUL-terminated), through cache c (NULL: open, write, close).
 * Returns 0, or the errno of the open() that failed (nothing written). */
int hy_logvf_write(hy_logvf_cache_t *c, const char *path, const char *line, size_t len);
/** Close every cached descriptor (USR1, exit). */
void hy_logvf_cache_flush(hy_logvf_cache_t *c);

#endif
