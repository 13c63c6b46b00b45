/* log_access.h — the access-log module (log_format, access_log): what other layers may ask of it. */
#ifndef HY_HTTP_LOG_ACCESS_H
#define HY_HTTP_LOG_ACCESS_H

#include <stddef.h>
#include "../conf/conf.h"

extern hy_module_t hy_http_log_module;

/** The access-log files of a generation (absolute paths in the cycle pool): fills up to cap entries of out and
 * returns how many there are. For --doctor and the start-time permission check. */
size_t hy_http_access_log_paths(hy_cycle_t *cycle, const char **out, size_t cap);
/** Write the lines of unbuffered logs gathered in this loop iteration now (a protocol calls it before it closes a
 * connection: the client that sees the close may look at the log, as nginx writes the line before closing). */
void hy_http_access_log_flush(void);

#endif
