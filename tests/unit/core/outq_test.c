/* outq_test.c — output queue: memory/copy/file segments, partial consumption across segment boundaries,
 * release callbacks (exactly once), move, clear, and file reference counts. */
#include <stdlib.h>
#include <unistd.h>
#include <fcntl.h>
#include <errno.h>
#include "../harness.h"
#include "core/outq.h"
#include "core/file.h"
#include "core/mem.h"

static int released[8];
static void rel(void *arg)
{
    released[(intptr_t)arg]++;
}

static size_t count_segs(const hy_outq_t *q)
{
    size_t n = 0;
    for (hy_seg_t *s = q->head; s; s = s->next)
        n++;
    return n;
}

static void test_push_consume_mem(void)
{
    memset(released, 0, sizeof(released));
    hy_outq_t q = {0};
    ok(hy_outq_empty(&q));
    hy_outq_push_mem(&q, "hello ", 6, rel, (void *)1);
    hy_outq_push_mem(&q, "big ", 4, rel, (void *)2);
    hy_outq_push_mem(&q, "world", 5, rel, (void *)3);
    ok(!hy_outq_empty(&q));
    is_int(q.bytes, 15);
    is_int(count_segs(&q), 3);
    ok(q.tail->next == NULL);

    hy_outq_consume(&q, 3); /* inside the first segment */
    is_int(q.bytes, 12);
    is_strn(q.head->mem.ptr, q.head->mem.len, "lo ");
    is_int(released[1], 0);

    hy_outq_consume(&q, 3 + 2); /* finishes the first, into the second */
    is_int(released[1], 1);
    is_int(released[2], 0);
    is_int(q.bytes, 7);
    is_strn(q.head->mem.ptr, q.head->mem.len, "g ");
    is_int(count_segs(&q), 2);

    hy_outq_consume(&q, 2); /* exactly at the boundary */
    is_int(released[2], 1);
    is_int(released[3], 0);
    is_strn(q.head->mem.ptr, q.head->mem.len, "world");
    is_int(count_segs(&q), 1);
    ok(q.head == q.tail);

    hy_outq_consume(&q, 0); /* nothing */
    is_int(released[3], 0);
    hy_outq_consume(&q, 5);
    is_int(released[3], 1);
    ok(hy_outq_empty(&q));
    ok(q.tail == NULL);
    is_int(q.bytes, 0);
    /* each callback exactly once */
    is_int(released[1], 1);
    is_int(released[2], 1);

    /* the queue is reusable after draining */
    hy_outq_push_mem(&q, "again", 5, NULL, NULL);
    is_int(q.bytes, 5);
    ok(q.head == q.tail);
    hy_outq_consume(&q, 5);
    ok(hy_outq_empty(&q));
}

static void test_consume_across_many(void)
{
    memset(released, 0, sizeof(released));
    hy_outq_t q = {0};
    hy_outq_push_mem(&q, "a", 1, rel, (void *)1);
    hy_outq_push_mem(&q, "bb", 2, rel, (void *)1);
    hy_outq_push_mem(&q, "ccc", 3, rel, (void *)1);
    hy_outq_push_mem(&q, "dddd", 4, rel, (void *)2);
    hy_outq_consume(&q, 1 + 2 + 3 + 1); /* three whole segments and one byte */
    is_int(released[1], 3);
    is_int(released[2], 0);
    is_strn(q.head->mem.ptr, q.head->mem.len, "ddd");
    is_int(q.bytes, 3);
    hy_outq_clear(&q);
    is_int(released[2], 1);
    ok(hy_outq_empty(&q));
    is_int(q.bytes, 0);
}

static void test_zero_length(void)
{
    memset(released, 0, sizeof(released));
    hy_outq_t q = {0};
    hy_outq_push_mem(&q, "", 0, rel, (void *)4); /* nothing queued; released at once */
    ok(hy_outq_empty(&q));
    is_int(released[4], 1);
    hy_outq_push_copy(&q, "x", 0);
    ok(hy_outq_empty(&q));
    is_int(q.bytes, 0);
}

static void test_push_copy(void)
{
    hy_outq_t q = {0};
    char src[16];
    memcpy(src, "copied!", 8);
    hy_outq_push_copy(&q, src, 7);
    memcpy(src, "XXXXXXX", 8); /* the queue holds its own copy */
    is_strn(q.head->mem.ptr, q.head->mem.len, "copied!");
    ok(q.head->mem.ptr != src);
    hy_outq_consume(&q, 3);
    is_strn(q.head->mem.ptr, q.head->mem.len, "ied!");
    hy_outq_consume(&q, 4); /* frees the copy (leak checkers would notice otherwise) */
    ok(hy_outq_empty(&q));
    for (int i = 0; i < 100; i++)
        hy_outq_push_copy(&q, "0123456789", 10);
    is_int(q.bytes, 1000);
    hy_outq_consume(&q, 995);
    is_strn(q.head->mem.ptr, q.head->mem.len, "56789");
    hy_outq_clear(&q);
    ok(hy_outq_empty(&q));
}

static hy_file_t *temp_file(const char *content)
{
    char path[] = "/tmp/hy_outq_test_XXXXXX";
    int fd = mkstemp(path);
    if (fd < 0)
        return NULL;
    unlink(path);
    ssize_t w = write(fd, content, strlen(content));
    (void)w;
    hy_file_t *f = hy_calloc(sizeof(*f));
    f->fd = fd;
    f->refs = 1;
    f->size = (int64_t)strlen(content);
    f->on_free = NULL;
    return f;
}

static int fd_open(int fd)
{
    return fcntl(fd, F_GETFD) != -1;
}

static void test_file_segments(void)
{
    hy_file_t *f = temp_file("0123456789abcdefghij");
    ok(f != NULL);
    if (f == NULL)
        return;
    int fd = f->fd;
    hy_outq_t q = {0};
    hy_outq_push_mem(&q, "HDR", 3, NULL, NULL);
    hy_outq_push_file(&q, f, 5, 10);
    hy_outq_push_file(&q, f, 0, 2);
    is_int(f->refs, 3);
    is_int(q.bytes, 15);
    hy_outq_push_file(&q, f, 0, 0); /* empty region: nothing queued, no reference */
    is_int(f->refs, 3);
    is_int(count_segs(&q), 3);

    hy_outq_consume(&q, 3 + 4); /* header and 4 file bytes */
    is_int(q.head->kind, HY_SEG_FILE);
    is_int(q.head->file.off, 9);
    is_int(q.head->file.len, 6);
    is_int(f->refs, 3);
    hy_outq_consume(&q, 6 + 1); /* across the file/file boundary */
    is_int(f->refs, 2);
    is_int(q.head->file.off, 1);
    is_int(q.head->file.len, 1);
    is_int(q.bytes, 1);

    /* the owner drops its reference: still open while queued */
    hy_file_unref(f);
    is_int(f->refs, 1);
    ok(fd_open(fd));
    hy_outq_consume(&q, 1); /* last reference: closed (and freed) */
    ok(hy_outq_empty(&q));
    ok(!fd_open(fd));
    is_int(errno, EBADF);
}

static int freed_count;
static void my_free(hy_file_t *f)
{
    freed_count++;
    close(f->fd);
    free(f);
}

static void test_file_on_free_and_clear(void)
{
    hy_file_t *f = temp_file("abc");
    ok(f != NULL);
    if (f == NULL)
        return;
    f->on_free = my_free;
    freed_count = 0;
    hy_outq_t q = {0};
    for (int i = 0; i < 5; i++)
        hy_outq_push_file(&q, f, 0, 3);
    is_int(f->refs, 6);
    hy_file_unref(f);
    is_int(freed_count, 0);
    hy_outq_clear(&q);
    is_int(freed_count, 1); /* exactly once, at the last reference */
    ok(hy_outq_empty(&q));

    /* clear with mixed segments releases each memory segment once */
    memset(released, 0, sizeof(released));
    hy_file_t *g = temp_file("xyz");
    int gfd = g->fd;
    hy_outq_push_mem(&q, "a", 1, rel, (void *)5);
    hy_outq_push_file(&q, g, 0, 3);
    hy_outq_push_mem(&q, "b", 1, rel, (void *)6);
    hy_file_unref(g); /* only the queue holds it now */
    ok(fd_open(gfd));
    hy_outq_clear(&q);
    is_int(released[5], 1);
    is_int(released[6], 1);
    ok(!fd_open(gfd));
    hy_outq_clear(&q); /* clearing an empty queue is harmless */
    is_int(released[5], 1);
}

static void test_move(void)
{
    memset(released, 0, sizeof(released));
    hy_outq_t a = {0}, b = {0};
    hy_outq_move(&a, &b); /* both empty */
    ok(hy_outq_empty(&a) && hy_outq_empty(&b));
    hy_outq_push_mem(&b, "one", 3, rel, (void *)1);
    hy_outq_push_mem(&b, "two", 3, rel, (void *)2);
    hy_outq_move(&a, &b); /* into an empty queue */
    ok(hy_outq_empty(&b));
    is_int(b.bytes, 0);
    ok(b.tail == NULL);
    is_int(a.bytes, 6);
    is_int(count_segs(&a), 2);
    hy_outq_push_mem(&b, "three", 5, rel, (void *)3);
    hy_outq_move(&a, &b); /* appended after the existing ones */
    is_int(a.bytes, 11);
    is_int(count_segs(&a), 3);
    is_strn(a.tail->mem.ptr, a.tail->mem.len, "three");
    hy_outq_move(&b, &a); /* move it all back */
    ok(hy_outq_empty(&a));
    hy_outq_push_mem(&a, "four", 4, rel, (void *)4); /* a is usable after being emptied */
    ok(a.head == a.tail);
    hy_outq_consume(&b, 11);
    is_int(released[1], 1);
    is_int(released[2], 1);
    is_int(released[3], 1);
    is_int(released[4], 0);
    ok(hy_outq_empty(&b));
    hy_outq_clear(&a);
    is_int(released[4], 1);
    /* nothing released twice */
    is_int(released[1] + released[2] + released[3] + released[4], 4);
}

static void test_segment_reuse(void)
{
    /* segments come from a free list: heavy push/consume keeps accounting correct */
    memset(released, 0, sizeof(released));
    hy_outq_t q = {0};
    size_t pushed = 0, consumed = 0;
    for (int round = 0; round < 1000; round++) {
        for (int k = 0; k < 3; k++) {
            hy_outq_push_mem(&q, "abcdefg", 7, rel, (void *)7);
            pushed += 7;
        }
        hy_outq_consume(&q, 10);
        consumed += 10;
    }
    is_int(q.bytes, pushed - consumed);
    hy_outq_consume(&q, q.bytes);
    ok(hy_outq_empty(&q));
    is_int(released[7], 3000);
}

int main(void)
{
    subtest("push mem, consume partial and across boundaries", test_push_consume_mem);
    subtest("consume across many segments", test_consume_across_many);
    subtest("zero-length pushes", test_zero_length);
    subtest("push copy", test_push_copy);
    subtest("file segments and refcounts", test_file_segments);
    subtest("file on_free and clear", test_file_on_free_and_clear);
    subtest("move", test_move);
    subtest("segment reuse", test_segment_reuse);
    return done_testing();
}
