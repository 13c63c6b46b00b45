/* worker.h — a worker's life: event loop over its listeners, signals, graceful and fast exit. The same
 * code runs the single-process mode (master_process off), where the worker also reloads in place. */
#ifndef HY_PROCESS_WORKER_H
#define HY_PROCESS_WORKER_H

#include "process.h"
#include "lset.h"
#include <signal.h>
#include <sys/types.h>

/** Run a worker for `cycle` on slot `slot` of `lset` until it stops. single: master_process off (the worker
 * handles HUP itself and owns the pid file). Returns the exit status. */
int hy_worker_run(hy_cycle_t *cycle, hy_lset_t *lset, size_t slot, int num_workers, bool single,
                  const hy_opts_t *opts);
/** The master's pid, set by the master before it forks workers (a worker that finds another parent exits). */
extern pid_t hy_master_pid;
/** Process-wide helpers shared with the master. */
int hy_process_write_pid(hy_cycle_t *cycle);
void hy_process_remove_pid(void);
/** Binary upgrade: rename the pid file to "<pid>.oldbin" (true) or back (false). 0, or -1 after logging. */
int hy_process_pid_oldbin(bool to_oldbin);
void hy_process_conf_log_hook(const char *level, const char *msg);
/** The control signals the master, a worker and the single process read from a signalfd: HUP USR1 USR2 WINCH
 * QUIT TERM INT CHLD. hy_serve blocks them before it opens a listening socket, so a signal sent to a server that
 * already accepts connections waits for its signalfd instead of killing the process with the default action. */
void hy_process_signal_set(sigset_t *set);

#endif
