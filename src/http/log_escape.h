/* log_escape.h — the access log's escaping of variable values (log_format escape=), nginx's rules. */
#ifndef HY_HTTP_LOG_ESCAPE_H
#define HY_HTTP_LOG_ESCAPE_H

#include <stddef.h>

enum { HY_ESC_DEFAULT = 0, HY_ESC_JSON, HY_ESC_NONE };
/** Bytes needed to write src escaped with `mode` (HY_ESC_*). */
size_t hy_log_escape_len(int mode, const char *src, size_t n);
/** Write src escaped into dst (room for hy_log_escape_len bytes); returns the end of what was written. */
char *hy_log_escape(int mode, char *dst, const char *src, size_t n);

#endif
