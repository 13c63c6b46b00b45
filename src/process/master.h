/* master.h — the master process. */
#ifndef HY_PROCESS_MASTER_H
#define HY_PROCESS_MASTER_H

#include "process.h"
#include "lset.h"

/** Fork n workers on lset and supervise them until stopped. Returns the exit status. */
int hy_master_run(hy_cycle_t *cycle, hy_lset_t *lset, int n, const hy_opts_t *opts);

#endif
