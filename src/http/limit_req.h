/* limit_req.h — nginx's ngx_http_limit_req_module (limit_req_zone, limit_req, limit_req_status,
 * limit_req_log_level, limit_req_dry_run, $limit_req_status): a leaky bucket per key, kept in a shared zone so
 * the limit holds across every worker. */
#ifndef HY_HTTP_LIMIT_REQ_H
#define HY_HTTP_LIMIT_REQ_H

#include "../conf/conf.h"
#include "../conf/zone.h"
#include "limit_table.h"

extern hy_module_t hy_http_limit_req_module;

/** The shared table of a zone this module owns (its `passed`/`delayed`/`rejected` counters, summed over the
 * workers, read without the lock), or NULL for another module's zone or one not mapped yet. */
const hy_ltable_t *hy_limit_req_table(const hy_zone_t *zone);

#endif
