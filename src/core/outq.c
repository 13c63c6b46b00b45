/* outq.c — output segment queue with a free list of segment objects. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "outq.h"
#include "file.h"
#include "mem.h"

static hy_seg_t *free_segs;

bool hy_file_read_at(hy_file_t *f, int64_t off, void *dst, size_t n)
{
    char *d = dst;
    while (n > 0) {
        ssize_t r = pread(f->fd, d, n, off);
        if (r <= 0) {
            if (r < 0 && errno == EINTR)
                continue;
            return false;
        }
        d += r, n -= (size_t)r, off += r;
    }
    return true;
}

void hy_file_unref(hy_file_t *f)
{
    HY_ASSERT(f->refs > 0);
    if (--f->refs > 0)
        return;
    if (f->on_free) {
        f->on_free(f);
    } else {
        if (f->fd >= 0)
            close(f->fd);
        free(f->data);
        free(f);
    }
}

static hy_seg_t *seg_new(hy_outq_t *q)
{
    hy_seg_t *s = free_segs;
    if (s)
        free_segs = s->next;
    else
        s = hy_alloc(sizeof(*s));
    s->next = NULL;
    if (q->tail)
        q->tail->next = s;
    else
        q->head = s;
    q->tail = s;
    return s;
}

void hy_outq_push_mem(hy_outq_t *q, const char *ptr, size_t len, void (*release)(void *), void *arg)
{
    if (len == 0) {
        if (release)
            release(arg);
        return;
    }
    hy_seg_t *s = seg_new(q);
    s->kind = HY_SEG_MEM;
    s->mem.ptr = ptr;
    s->mem.len = len;
    s->mem.release = release;
    s->mem.arg = arg;
    q->bytes += len;
}

void hy_outq_push_copy(hy_outq_t *q, const char *ptr, size_t len)
{
    if (len == 0)
        return;
    char *c = hy_alloc(len);
    memcpy(c, ptr, len);
    hy_outq_push_mem(q, c, len, free, c);
}

void hy_outq_push_file(hy_outq_t *q, hy_file_t *f, int64_t off, int64_t len)
{
    if (len <= 0)
        return;
    hy_seg_t *s = seg_new(q);
    s->kind = HY_SEG_FILE;
    s->file.file = hy_file_ref(f);
    s->file.off = off;
    s->file.len = len;
    q->bytes += (size_t)len;
}

static void seg_done(hy_outq_t *q)
{
    hy_seg_t *s = q->head;
    q->head = s->next;
    if (q->head == NULL)
        q->tail = NULL;
    if (s->kind == HY_SEG_MEM) {
        if (s->mem.release)
            s->mem.release(s->mem.arg);
    } else {
        hy_file_unref(s->file.file);
    }
    s->next = free_segs;
    free_segs = s;
}

void hy_outq_consume(hy_outq_t *q, size_t n)
{
    q->bytes -= n;
    while (n > 0) {
        hy_seg_t *s = q->head;
        HY_ASSERT(s != NULL);
        if (s->kind == HY_SEG_MEM) {
            if (n < s->mem.len) {
                s->mem.ptr += n;
                s->mem.len -= n;
                return;
            }
            n -= s->mem.len;
        } else {
            if ((int64_t)n < s->file.len) {
                s->file.off += (int64_t)n;
                s->file.len -= (int64_t)n;
                return;
            }
            n -= (size_t)s->file.len;
        }
        seg_done(q);
    }
}

void hy_outq_clear(hy_outq_t *q)
{
    while (q->head)
        seg_done(q);
    q->bytes = 0;
}

void hy_outq_move(hy_outq_t *dst, hy_outq_t *src)
{
    if (src->head == NULL)
        return;
    if (dst->tail)
        dst->tail->next = src->head;
    else
        dst->head = src->head;
    dst->tail = src->tail;
    dst->bytes += src->bytes;
    src->head = src->tail = NULL;
    src->bytes = 0;
}
