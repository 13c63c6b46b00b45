/* mem.h — checked malloc wrappers and arenas (pools) with cleanup handlers.
 * Arenas: one per config generation, connection and request; reset between keep-alive requests. */
#ifndef HY_CORE_MEM_H
#define HY_CORE_MEM_H

#include <stddef.h>
#include "hayate.h"
#include "types.h"

/** malloc/calloc/realloc that die on OOM (small allocations don't fail; see CONTRIBUTING.md). */
void *hy_alloc(size_t n);
void *hy_calloc(size_t n);
void *hy_realloc(void *p, size_t n);
char *hy_strndup(const char *s, size_t n);

/** Set the process's malloc policy once, before anything allocates much (main): the heap is never shrunk
 * behind our back (glibc trims its top whenever 128 KiB are free there, and under TLS load the top rose and
 * fell dozens of times a second, each time faulting its pages in again: 0.1-0.2 minor faults and up to
 * 4 us of CPU per request); blocks below 4 MiB come from the heap rather than their own mapping. Memory goes
 * back to the system only through hy_mem_trim, after a burst of frees. */
void hy_mem_init(void);

/** Bytes of arenas (destroyed, or chunks dropped by a reset) and buffer blocks (core/buf.c) freed since the
 * last hy_mem_trim: the event loop trims after a burst of closes (issue 17). */
size_t hy_mem_released_bytes(void);
/** Count n freed bytes towards hy_mem_released_bytes (for allocators built on hy_alloc). */
void hy_mem_note_released(size_t n);
/** Give the free memory at the top and inside the heap back to the system (glibc's malloc_trim(0)) and reset
 * the released count. Costs a walk of the free lists; meant for after a burst of frees, not every free. */
void hy_mem_trim(void);

/** Create an arena whose first chunk holds `first_chunk` bytes. Owned by the caller; free with hy_pool_destroy. */
hy_pool_t *hy_pool_create(size_t first_chunk);
/** The free span [pos, end) of an arena's current chunk. It is the first member of every hy_pool_t, so that
 * the common allocation below is inlined at its caller (a call cost ~20 instructions, the bump ~6, and a
 * request makes a dozen); everything else about an arena stays private to mem.c. */
typedef struct hy_pool_span {
    char *pos; /* 16-byte aligned */
    char *end;
} hy_pool_span_t;

/** hy_palloc when the current chunk has no room: a new chunk (or a chunk of its own for a big block). */
void *hy_palloc_slow(hy_pool_t *p, size_t n);

/** Allocate n bytes, 16-byte aligned, from the arena. Dies on OOM. Memory lives until reset/destroy. */
static inline void *hy_palloc(hy_pool_t *p, size_t n)
{
    hy_pool_span_t *s = (hy_pool_span_t *)(void *)p;
    n = (n + 15) & ~(size_t)15;
    if (HY_LIKELY((size_t)(s->end - s->pos) >= n)) {
        void *r = s->pos;
        s->pos += n;
        return r;
    }
    return hy_palloc_slow(p, n);
}

/** hy_palloc + zero fill (inlined too: a constant size becomes a few stores). */
static inline void *hy_pcalloc(hy_pool_t *p, size_t n)
{
    void *r = hy_palloc(p, n);
    __builtin_memset(r, 0, n);
    return r;
}
/** Copy n bytes of s into the arena and NUL-terminate. */
char *hy_pstrndup(hy_pool_t *p, const char *s, size_t n);
/** Register fn(arg) to run (LIFO) when the arena is reset or destroyed; for fds and refcounts. */
void hy_pool_on_clear(hy_pool_t *p, void (*fn)(void *), void *arg);
/** Run cleanups, free every chunk but the first and rewind it (keep-alive reuse). */
void hy_pool_reset(hy_pool_t *p);
/** Run cleanups and free everything. NULL is accepted. */
void hy_pool_destroy(hy_pool_t *p);

/* Request arenas: one per request (HTTP/1) or stream (HTTP/2), from a per-worker cache instead of malloc. A
 * keep-alive connection between two requests holds no arena (C10K memory), yet the next request anywhere in the
 * worker gets one without two mallocs and two frees (8 KiB is above glibc's per-thread cache: each was a trip
 * through the main arena). The cache holds up to HY_POOL_CACHE_MAX arenas (4 MiB); the event loop empties it
 * with its trim after a burst of closes. */
#define HY_REQ_POOL_SIZE 8192 /* one chunk holds a request with limits, auth and a proxied head */
#define HY_POOL_CACHE_MAX 512
/** An arena of HY_REQ_POOL_SIZE, from the cache when it has one. */
hy_pool_t *hy_pool_take(void);
/** Reset p (its cleanups run now) and keep it for hy_pool_take, or destroy it when the cache is full. NULL is
 * accepted. The void * form fits hy_loop_free_later. */
void hy_pool_give(void *p);
/** Destroy the cached arenas (counted as released). */
void hy_pool_cache_trim(void);

/** A growable array of fixed-size elements living in an arena (nginx's ngx_array_t). */
struct hy_array {
    void *elts;      /* borrowed from pool */
    size_t nelts;    /* elements in use */
    size_t size;     /* bytes per element */
    size_t nalloc;   /* capacity */
    hy_pool_t *pool; /* borrowed */
};

/** Initialise `a` in place for elements of `size` bytes, room for n. */
void hy_array_init(hy_array_t *a, hy_pool_t *pool, size_t n, size_t size);
/** Create an array in the pool. */
hy_array_t *hy_array_create(hy_pool_t *pool, size_t n, size_t size);
/** Append one zeroed element and return it. */
void *hy_array_push(hy_array_t *a);

#endif
