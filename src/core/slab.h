/* slab.h — an allocator living inside one shared mapping (core/shm.h), used by every process that maps it.
 *
 * The region starts with the allocator's header (lock, lists, statistics) and one descriptor per data page;
 * the rest is whole pages. Requests up to half a page come from size classes of 8, 16, 32 ... page/2 bytes
 * (a page is carved into chunks of one class; a chunk of 2^k bytes is 2^k-aligned); larger ones take a run
 * of whole pages (page-aligned). Freed chunks go back to their page, a page whose chunks are all free goes
 * back to the free pages, and free page runs merge with their free neighbours, so memory freed in any order
 * can serve a large request again.
 *
 * A full region is a normal condition: allocation returns NULL (counted in the statistics) and the caller
 * makes room, e.g. by evicting its least recently used entries, and tries again under the same lock. */
#ifndef HY_CORE_SLAB_H
#define HY_CORE_SLAB_H

#include <stddef.h>
#include <stdint.h>
#include <stdbool.h>
#include "hayate.h"

#define HY_SLAB_MIN_SHIFT 3 /* smallest chunk: 8 bytes */

typedef struct hy_slab hy_slab_t;

/** A snapshot of a region's use (hy_slab_stats). */
typedef struct hy_slab_stats {
    size_t page_size;   /* bytes per page */
    size_t pages_total; /* data pages in the region */
    size_t pages_free;  /* pages in no use */
    size_t pages_small; /* pages carved into chunks of a size class */
    size_t bytes_used;  /* bytes handed out, rounded up to the class or to whole pages */
    uint64_t allocs;    /* successful allocations */
    uint64_t frees;
    uint64_t failed;     /* allocations that returned NULL for want of room */
    uint64_t owner_died; /* times the lock was recovered from a process that died holding it */
} hy_slab_stats_t;

/** Lay out an allocator over `size` bytes at `addr` (page-aligned, normally a fresh hy_shm_map mapping, in one
 * process before the others can see it). Returns the allocator (at addr), or NULL when the region cannot hold
 * the header and one data page. */
hy_slab_t *hy_slab_init(void *addr, size_t size);

/** Take the region's lock (core/shm.h's robust mutex; other shared data of the region may use it too).
 * Returns true when the previous holder died with it: the lock is held and the caller should treat what it
 * protects as possibly half-updated. */
bool hy_slab_lock(hy_slab_t *slab);
/** Release the region's lock. */
void hy_slab_unlock(hy_slab_t *slab);

/** Allocate `size` bytes in the region (taking its lock). NULL when the region has no room (never dies).
 * The memory is shared: pointers into it are valid in every process that mapped the region before fork. */
void *hy_slab_alloc(hy_slab_t *slab, size_t size);
/** hy_slab_alloc + zero fill. */
void *hy_slab_calloc(hy_slab_t *slab, size_t size);
/** Return memory from hy_slab_alloc/calloc (taking the lock). NULL is a no-op; a pointer that is not the
 * start of a live allocation of this region is a fatal error. */
void hy_slab_free(hy_slab_t *slab, void *p);
/** The same three for a caller that already holds the lock. */
void *hy_slab_alloc_locked(hy_slab_t *slab, size_t size);
void *hy_slab_calloc_locked(hy_slab_t *slab, size_t size);
void hy_slab_free_locked(hy_slab_t *slab, void *p);

/** Fill *out with the region's counters (taking the lock). */
void hy_slab_stats(hy_slab_t *slab, hy_slab_stats_t *out);
/** Walk every page and list and check the allocator's invariants (taking the lock); for tests and debugging.
 * Returns NULL when all hold, else a static description of the first broken one. */
const char *hy_slab_check(hy_slab_t *slab);

#endif
