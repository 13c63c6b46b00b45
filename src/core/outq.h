/* outq.h — the output queue: segments of memory or of a file region, flushed with writev/sendfile. */
#ifndef HY_CORE_OUTQ_H
#define HY_CORE_OUTQ_H

#include <stddef.h>
#include <sys/types.h>
#include "hayate.h"
#include "types.h"

enum { HY_SEG_MEM = 1, HY_SEG_FILE = 2 };

struct hy_seg {
    hy_seg_t *next;
    uint8_t kind;
    union {
        struct {
            const char *ptr; /* borrowed until release(arg) is called (or until the owner's arena ends) */
            size_t len;
            void (*release)(void *arg);
            void *arg;
        } mem;
        struct {
            hy_file_t *file; /* a reference, dropped when the segment is done */
            int64_t off;
            int64_t len;
        } file;
    };
};

struct hy_outq {
    hy_seg_t *head, *tail;
    size_t bytes; /* queued, for high-watermarks */
};

/** Append memory. The bytes must stay valid until sent; release (may be NULL) is called then. */
void hy_outq_push_mem(hy_outq_t *q, const char *ptr, size_t len, void (*release)(void *), void *arg);
/** Append a copy of the bytes (a malloc'd copy freed when sent). */
void hy_outq_push_copy(hy_outq_t *q, const char *ptr, size_t len);
/** Append a file region; takes a new reference on f. */
void hy_outq_push_file(hy_outq_t *q, hy_file_t *f, int64_t off, int64_t len);
/** Drop n sent bytes from the front, releasing finished segments. */
void hy_outq_consume(hy_outq_t *q, size_t n);
/** Move every segment of src to the end of dst (no copy). */
void hy_outq_move(hy_outq_t *dst, hy_outq_t *src);
/** Release everything (connection closed). */
void hy_outq_clear(hy_outq_t *q);
static inline bool hy_outq_empty(const hy_outq_t *q)
{
    return q->head == NULL;
}

#endif
