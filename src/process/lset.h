/* lset.h — the listening sockets of a generation: one SO_REUSEPORT socket per worker slot and address (so
 * the kernel spreads connections and no worker wakes for another's), or one shared socket for addresses that
 * cannot be shared that way (unix sockets). Owned by the master; workers inherit them across fork. */
#ifndef HY_PROCESS_LSET_H
#define HY_PROCESS_LSET_H

#include "../conf/cycle.h"
#include "../event/listen.h"

typedef struct hy_lset {
    size_t num_addrs, num_slots;
    hy_listen_spec_t *specs; /* owned, [num_addrs] */
    int *fds;                /* owned, [slot * num_addrs + addr]; a shared socket's fd repeats in every slot */
    bool *shared;            /* owned, [num_addrs] */
} hy_lset_t;

/** Open the sockets the generation's http addresses need for `slots` workers, taking over matching sockets
 * from `old` (may be NULL) so nothing is refused across a reload. NULL after logging the failing call. */
hy_lset_t *hy_lset_open(hy_cycle_t *cycle, size_t slots, hy_lset_t *old);
/** Close every socket still owned by the set (taken-over ones were handed on) and free it. NULL is fine. */
void hy_lset_free(hy_lset_t *s, bool unlink_unix);
static inline int hy_lset_fd(const hy_lset_t *s, size_t slot, size_t addr)
{
    return s->fds[slot * s->num_addrs + addr];
}

#endif
