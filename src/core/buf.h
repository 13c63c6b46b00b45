/* buf.h — contiguous input buffer on recycled blocks.
 * States: empty (base == NULL, nothing allocated: an idle keep-alive connection costs no buffer),
 * or [base .. off) consumed, [off .. off+len) data, [off+len .. cap) free. */
#ifndef HY_CORE_BUF_H
#define HY_CORE_BUF_H

#include <stddef.h>
#include "hayate.h"
#include "types.h"

#define HY_BUF_BLOCK 16384 /* recycled block size */

struct hy_buf {
    char *base; /* owned: recycled block or malloc'd; NULL when empty */
    size_t off;
    size_t len;
    size_t cap;
};

/** Make room for at least `min` bytes after the data; returns the writable tail and its size in *avail.
 * Grows by doubling up to `limit` total capacity; returns NULL when that would exceed the limit. */
char *hy_buf_reserve(hy_buf_t *b, size_t min, size_t limit, size_t *avail);
/** n bytes were written at the tail. */
static inline void hy_buf_commit(hy_buf_t *b, size_t n)
{
    b->len += n;
}
/** Drop n bytes from the front; releases the block when it becomes empty. */
void hy_buf_consume(hy_buf_t *b, size_t n);
/** Release the memory (back to the recycler when it is a standard block). */
void hy_buf_release(hy_buf_t *b);
/** A standard block of HY_BUF_BLOCK bytes from the recycler (or malloc'd), for other queues of 16 KiB pieces (the
 * HTTP/2 output blocks); hy_buf_block_put gives it back (freed when the recycler is full). */
char *hy_buf_block_get(void);
void hy_buf_block_put(char *p);
/** Free the recycled blocks no buffer holds (when the worker goes idle after a burst; see hy_mem_trim).
 * Returns how many were freed. */
int hy_buf_trim(void);
static inline char *hy_buf_data(const hy_buf_t *b)
{
    return b->base + b->off;
}

#endif
