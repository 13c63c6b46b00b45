/* limit_conf.h — the location settings limit_req and limit_conn share in shape (each module keeps its own copy,
 * set by its own directives: limit_req_status / limit_conn_status, ..._log_level, ..._dry_run), with nginx's
 * defaults and value checks in one place. */
#ifndef HY_HTTP_LIMIT_CONF_H
#define HY_HTTP_LIMIT_CONF_H

#include <stdint.h>
#include "../conf/conf.h"

typedef struct hy_limit_loc {
    hy_array_t *limits; /* the module's limit entries; NULL when none at this level (inherited) */
    int64_t status;     /* answer when rejected: 400..599, default 503 */
    int log_level;      /* info, notice, warn, error (default) */
    int dry_run;        /* count and log, never delay or reject */
} hy_limit_loc_t;

/** create_loc_conf / merge_loc_conf of both modules. */
void *hy_limit_loc_create(hy_conf_t *cf);
int hy_limit_loc_merge(hy_conf_t *cf, void *parent, void *child);

/** The values of ..._log_level (hy_slot_enum's table) and the bounds of ..._status (hy_slot_num's). */
extern const hy_enum_t hy_limit_log_levels[];
extern const hy_bounds_t hy_limit_status_bounds;

#endif
