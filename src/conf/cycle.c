/* cycle.c — configuration generations' lifetime. */
#include "cycle.h"

void hy_cycle_unref(hy_cycle_t *cycle)
{
    if (cycle && --cycle->refs == 0)
        hy_pool_destroy(cycle->pool);
}
