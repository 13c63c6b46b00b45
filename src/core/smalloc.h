/* smalloc.h — a cache of freed small blocks, by size class, for a library that allocates and frees many small
 * objects per request through an allocator we give it (libnghttp2: a stream, its header fields, its frames).
 *
 * Blocks carry a 16-byte header (their class), so free needs no size and the payload keeps malloc's 16-byte
 * alignment. Classes are 32, 64 ... 4096 bytes; a freed block goes on its class's list (at most HY_SM_KEEP blocks a
 * class, the rest back to libc), and an allocation of that class takes the most recently freed one: two loads and a
 * store, where glibc's malloc/free pair costs about 200 instructions. Larger blocks go to libc directly.
 *
 * Ownership: a block from hy_sm_alloc/calloc/realloc is the caller's until hy_sm_free; blocks of this allocator
 * and of libc's are not interchangeable. State is per process (workers are single-threaded; nothing here locks).
 * Under AddressSanitizer nothing is cached, so a use after free is still reported. */
#ifndef HY_CORE_SMALLOC_H
#define HY_CORE_SMALLOC_H

#include <stddef.h>

#define HY_SM_KEEP 64 /* freed blocks kept per class: bounds what the cache holds (~0.5 MiB at most) */

/** n bytes (n may be 0), or NULL when libc has none. */
void *hy_sm_alloc(size_t n);
/** nmemb * size zeroed bytes, or NULL (also when the product overflows). */
void *hy_sm_calloc(size_t nmemb, size_t size);
/** The block resized to n bytes, its first bytes kept (p NULL: hy_sm_alloc); NULL and p untouched on failure. */
void *hy_sm_realloc(void *p, size_t n);
/** Give p back (NULL: nothing). */
void hy_sm_free(void *p);

#endif
