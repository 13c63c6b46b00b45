/* perms.h — can the workers' user reach what the configuration points them at? Document roots need search
 * permission on every directory down to them and read permission on them; log files need search permission on
 * the directories above them (workers reopen them by path on USR1). `make run` from a checkout under /root is
 * the classic case: every request is a 403 and nothing said why. --doctor reports these; the master logs them
 * at [warn] when it starts. */
#ifndef HY_PROCESS_PERMS_H
#define HY_PROCESS_PERMS_H

#include <stdbool.h>
#include "../conf/cycle.h"

/** Receives one problem, a full sentence with the fix. */
typedef void (*hy_perms_report_fn)(void *ctx, const char *msg);

/** Check every variable-free root/alias and every error log of `cycle` for the user the workers will run as
 * (`user` when the master is root, else the current user; nothing to check when that is root). `single`:
 * master_process off (no privilege drop). Each problem is reported once; returns how many were. */
int hy_perms_check(hy_cycle_t *cycle, bool single, hy_perms_report_fn report, void *ctx);

#endif
