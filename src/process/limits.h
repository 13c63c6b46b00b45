/* limits.h — what the machine allows and what the server sets for itself: open-file limit, worker count
 * ("auto": CPUs in the affinity mask capped by the cgroup v2 quota), CPU affinity, privileges. */
#ifndef HY_PROCESS_LIMITS_H
#define HY_PROCESS_LIMITS_H

#include <stdint.h>
#include <stdbool.h>
#include "core_conf.h"

/** Raise RLIMIT_NOFILE to worker_rlimit_nofile, or else to the hard limit. Returns the soft limit in force. */
int64_t hy_limits_raise_nofile(const hy_core_conf_t *core);
/** Number of workers for the config; *why gets a short human explanation (static storage). */
int hy_limits_workers(const hy_core_conf_t *core, const char **why);
/** CPUs in this process's affinity mask. */
int hy_limits_cpus_allowed(void);
/** cgroup v2 cpu.max as a CPU count (quota/period rounded up); 0 when unlimited or unknown. */
int hy_limits_cgroup_cpus(void);
/** cgroup v2 memory.max in bytes; 0 when unlimited or unknown. */
int64_t hy_limits_cgroup_memory(void);
/** The same two readings from another file (a cgroup mounted elsewhere; the unit tests). */
int hy_limits_cgroup_cpus_at(const char *path);
int64_t hy_limits_cgroup_memory_at(const char *path);
/** worker_connections in force: configured, or what the fd limit allows. */
int64_t hy_limits_worker_connections(const hy_core_conf_t *core, int64_t nofile);
/** Apply worker_cpu_affinity for worker `slot` of `n` (no-op when unset). */
void hy_limits_set_affinity(const hy_core_conf_t *core, int slot, int n);
/** Drop to user/group when running as root (workers). -1 after logging when it fails. */
int hy_limits_drop_privileges(const hy_core_conf_t *core);
/** The uid/gid workers will run as (root master only); false when privileges are not dropped. */
bool hy_limits_worker_ids(const hy_core_conf_t *core, int *uid, int *gid);
/** Read a single integer from a /proc or /sys file; -1 when absent. */
int64_t hy_limits_read_int(const char *path);

#endif
