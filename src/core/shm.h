/* shm.h — memory shared between the master and its workers: anonymous MAP_SHARED mappings and a
 * process-shared mutex that survives the death of the process holding it.
 *
 * A mapping made before fork() is at the same address in every worker, so pointers stored inside it are valid
 * in all of them. The allocator that lives inside a mapping is core/slab.h; named zones claimed by directives
 * are conf/zone.h. */
#ifndef HY_CORE_SHM_H
#define HY_CORE_SHM_H

#include <pthread.h>
#include <stddef.h>
#include <stdint.h>
#include <stdbool.h>
#include "hayate.h"

/** One anonymous shared mapping. */
typedef struct hy_shm {
    void *addr;  /* owned: the mapping (NULL when not mapped) */
    size_t size; /* bytes mapped */
} hy_shm_t;

/** A mutex for processes sharing a mapping. It lives inside the mapping. Robust: when the process holding it
 * dies (even by SIGKILL), the kernel releases it and the next locker takes it over (see hy_shm_lock). */
typedef struct hy_shm_mutex {
    pthread_mutex_t mutex;
    uint64_t owner_died; /* times a locker found the previous owner dead (protected by the mutex) */
} hy_shm_mutex_t;

/** Map `size` bytes (rounded up to whole pages) of zeroed, anonymous, MAP_SHARED memory into shm.
 * 0, or a negative errno (shm untouched). The mapping is inherited by children forked afterwards. */
int hy_shm_map(hy_shm_t *shm, size_t size);
/** Unmap (this process only; children keep their copy until they exit or unmap it). NULL addr is a no-op;
 * shm is reset to {NULL, 0}. */
void hy_shm_unmap(hy_shm_t *shm);

/** Initialise a mutex placed in shared memory (PTHREAD_PROCESS_SHARED + PTHREAD_MUTEX_ROBUST). Call once,
 * before any other process can see it. 0 or a negative errno. */
int hy_shm_mutex_init(hy_shm_mutex_t *m);
/** Lock, waiting as long as it takes. Returns true when the previous owner died holding the lock: the
 * lock is then held and made consistent again (the caller should treat the data it protects as possibly
 * half-updated), false in the ordinary case. Never fails otherwise (a broken mutex is a fatal error). */
bool hy_shm_mutex_lock(hy_shm_mutex_t *m);
/** Lock if free: true when now held (a dead owner's lock is recovered as by hy_shm_mutex_lock), false when a
 * live process holds it. Never waits. */
bool hy_shm_mutex_trylock(hy_shm_mutex_t *m);
/** Unlock; the caller holds the lock. */
void hy_shm_mutex_unlock(hy_shm_mutex_t *m);

#endif
