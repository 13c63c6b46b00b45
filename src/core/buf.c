/* buf.c — input buffers. Standard 16 KiB blocks come from a per-process free list (a worker is single-
 * threaded), so a busy connection reuses warm memory and an idle one holds none. */
#include <stdlib.h>
#include <string.h>
#include "buf.h"
#include "mem.h"

#define RECYCLE_MAX 256 /* 4 MiB: a burst of HTTP/2 output blocks on as many connections (proto/h2.c) */

static char *recycled[RECYCLE_MAX];
static int num_recycled;

char *hy_buf_block_get(void)
{
    if (num_recycled > 0)
        return recycled[--num_recycled];
    return hy_alloc(HY_BUF_BLOCK);
}

static void block_put(char *p, size_t cap)
{
    if (cap == HY_BUF_BLOCK && num_recycled < RECYCLE_MAX) {
        recycled[num_recycled++] = p;
    } else {
        hy_mem_note_released(cap);
        free(p);
    }
}

void hy_buf_block_put(char *p)
{
    block_put(p, HY_BUF_BLOCK);
}

int hy_buf_trim(void)
{
    int n = num_recycled;
    while (num_recycled > 0)
        free(recycled[--num_recycled]);
    hy_mem_note_released((size_t)n * HY_BUF_BLOCK);
    return n;
}

char *hy_buf_reserve(hy_buf_t *b, size_t min, size_t limit, size_t *avail)
{
    if (b->base == NULL) {
        if (min > limit)
            return NULL;
        size_t cap = HY_BUF_BLOCK;
        while (cap < min)
            cap *= 2;
        if (cap > limit)
            cap = limit;
        b->base = cap == HY_BUF_BLOCK ? hy_buf_block_get() : hy_alloc(cap);
        b->cap = cap;
        b->off = b->len = 0;
    }
    if (b->cap - b->off - b->len < min) {
        if (b->off > 0) { /* compact */
            memmove(b->base, b->base + b->off, b->len);
            b->off = 0;
        }
        if (b->cap - b->len < min) {
            if (b->len > limit || limit - b->len < min)
                return NULL;
            size_t cap = b->cap;
            while (cap - b->len < min)
                cap *= 2;
            if (cap > limit)
                cap = limit;
            char *n = hy_alloc(cap);
            memcpy(n, b->base, b->len);
            block_put(b->base, b->cap);
            b->base = n;
            b->cap = cap;
        }
    }
    *avail = b->cap - b->off - b->len;
    return b->base + b->off + b->len;
}

void hy_buf_consume(hy_buf_t *b, size_t n)
{
    HY_ASSERT(n <= b->len);
    b->off += n;
    b->len -= n;
    if (b->len == 0)
        hy_buf_release(b);
}

void hy_buf_release(hy_buf_t *b)
{
    if (b->base)
        block_put(b->base, b->cap);
    b->base = NULL;
    b->off = b->len = b->cap = 0;
}
