/* upgrade.h — nginx's binary upgrade: on USR2 the master starts the binary again (the file may have been
 * replaced) with its listening sockets inherited, named in the HAYATE environment variable ("fd;fd;...;", as
 * nginx's NGINX variable); the new master adopts them, so the kernel's accept queues are never closed and no
 * connection is refused while old and new workers hand over. */
#ifndef HY_PROCESS_UPGRADE_H
#define HY_PROCESS_UPGRADE_H

#include <sys/types.h>
#include "lset.h"

/** Fork and exec the command line this process was started with (hy_title_argv), passing every socket of
 * `lset` in HAYATE. Returns the child's pid, or -1 after logging (nothing was started). */
pid_t hy_upgrade_exec(const hy_lset_t *lset);
/** Sockets inherited through HAYATE (read once; the variable is then removed): a set laid out for `cycle`'s
 * addresses, for hy_lset_open() to take over from; sockets no address wants are closed. NULL when nothing was
 * inherited. The caller frees it with hy_lset_free(set, false) after hy_lset_open(). */
hy_lset_t *hy_upgrade_inherited(hy_cycle_t *cycle);
/** True when this process was started by a master's USR2 (HAYATE was set). */
bool hy_upgrade_was_inherited(void);
/** How many valid sockets HAYATE named. */
size_t hy_upgrade_num_inherited(void);

#endif
