/* limit_conf.c — see limit_conf.h. */
#include "limit_conf.h"
#include "../core/log.h"
#include "../core/mem.h"

const hy_enum_t hy_limit_log_levels[] = {
    {"info", HY_LOG_INFO}, {"notice", HY_LOG_NOTICE}, {"warn", HY_LOG_WARN}, {"error", HY_LOG_ERR}, {NULL, 0},
};
const hy_bounds_t hy_limit_status_bounds = {400, 599};

void *hy_limit_loc_create(hy_conf_t *cf)
{
    hy_limit_loc_t *c = hy_pcalloc(cf->pool, sizeof(*c));
    c->status = HY_UNSET;
    c->log_level = c->dry_run = HY_UNSET;
    return c;
}

int hy_limit_loc_merge(hy_conf_t *cf, void *parent, void *child)
{
    (void)cf;
    hy_limit_loc_t *p = parent, *c = child;
    if (c->limits == NULL)
        c->limits = p->limits;
    hy_merge_value(c->status, p->status, 503);
    hy_merge_value(c->log_level, p->log_level, HY_LOG_ERR);
    hy_merge_value(c->dry_run, p->dry_run, 0);
    return 0;
}
