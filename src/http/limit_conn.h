/* limit_conn.h — nginx's ngx_http_limit_conn_module (limit_conn_zone, limit_conn, limit_conn_status,
 * limit_conn_log_level, limit_conn_dry_run, $limit_conn_status): requests in progress per key, counted in a
 * shared zone so the limit holds across every worker. */
#ifndef HY_HTTP_LIMIT_CONN_H
#define HY_HTTP_LIMIT_CONN_H

#include "../conf/conf.h"

extern hy_module_t hy_http_limit_conn_module;

#endif
