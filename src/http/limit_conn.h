/* limit_conn.h — nginx's ngx_http_limit_conn_module (limit_conn_zone, limit_conn, limit_conn_status,
 * limit_conn_log_level, limit_conn_dry_run, $limit_conn_status): requests in progress per key, counted in a
 * shared zone so the limit holds across every worker. */
#ifndef HY_HTTP_LIMIT_CONN_H
#define HY_HTTP_LIMIT_CONN_H

#include "../conf/conf.h"
#include "../conf/zone.h"
#include "limit_table.h"

extern hy_module_t hy_http_limit_conn_module;

/** The shared table of a zone this module owns (its `passed`/`delayed`/`rejected` counters, summed over the
 * workers, read without the lock), or NULL for another module's zone or one not mapped yet. */
const hy_ltable_t *hy_limit_conn_table(const hy_zone_t *zone);

#endif
