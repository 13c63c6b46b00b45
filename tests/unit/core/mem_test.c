/* mem_test.c — arenas (alignment, big blocks, reset, LIFO cleanups), pstrndup and growable arrays. */
#include <stdlib.h>
#include "../harness.h"
#include "core/mem.h"

static void test_checked_alloc(void)
{
    char *p = hy_alloc(0); /* 0 bytes still yields a freeable pointer */
    ok(p != NULL);
    free(p);
    unsigned char *z = hy_calloc(64);
    int all_zero = 1;
    for (int i = 0; i < 64; i++)
        all_zero &= z[i] == 0;
    ok(all_zero);
    z = hy_realloc(z, 4096);
    z[4095] = 7;
    is_int(z[4095], 7);
    is_int(z[63], 0); /* realloc keeps the old contents */
    free(z);
    char *d = hy_strndup("hello world", 5);
    is_str(d, "hello");
    free(d);
}

static void test_many_allocations(void)
{
    hy_pool_t *p = hy_pool_create(1024);
    enum { N = 5000 };
    unsigned char **ptrs = malloc(sizeof(*ptrs) * N);
    size_t *sizes = malloc(sizeof(*sizes) * N);
    int misaligned = 0;
    for (int i = 0; i < N; i++) {
        sizes[i] = (size_t)(i * 7919 % 300) + 1; /* 1..300 bytes */
        ptrs[i] = hy_palloc(p, sizes[i]);
        if ((uintptr_t)ptrs[i] % 16 != 0)
            misaligned++;
        memset(ptrs[i], (unsigned char)i, sizes[i]);
    }
    is_int(misaligned, 0);
    /* nothing overlapped: every block still holds its own fill byte */
    int corrupt = 0;
    for (int i = 0; i < N; i++)
        for (size_t k = 0; k < sizes[i]; k++)
            if (ptrs[i][k] != (unsigned char)i)
                corrupt++;
    is_int(corrupt, 0);
    free(ptrs);
    free(sizes);
    hy_pool_destroy(p);
}

static void test_alignment_odd_sizes(void)
{
    hy_pool_t *p = hy_pool_create(0); /* tiny first chunk is rounded up */
    int misaligned = 0;
    for (size_t n = 0; n < 200; n++) {
        void *a = hy_palloc(p, n);
        ok(a != NULL);
        if ((uintptr_t)a % 16 != 0)
            misaligned++;
    }
    is_int(misaligned, 0);
    unsigned char *z = hy_pcalloc(p, 333);
    int nz = 0;
    for (int i = 0; i < 333; i++)
        nz += z[i] != 0;
    is_int(nz, 0);
    is_int((uintptr_t)z % 16, 0);
    hy_pool_destroy(p);
}

static void test_big_allocations(void)
{
    hy_pool_t *p = hy_pool_create(512);
    char *small1 = hy_palloc(p, 16);
    memset(small1, 'a', 16);
    char *big = hy_palloc(p, 1 << 20); /* 1 MiB: its own chunk */
    is_int((uintptr_t)big % 16, 0);
    memset(big, 'b', 1 << 20);
    char *small2 = hy_palloc(p, 16);
    memset(small2, 'c', 16);
    char *big2 = hy_palloc(p, 3 * 4096 + 5);
    memset(big2, 'd', 3 * 4096 + 5);
    is_int(small1[15], 'a');
    is_int(big[0], 'b');
    is_int(big[(1 << 20) - 1], 'b');
    is_int(small2[0], 'c');
    is_int(big2[3 * 4096 + 4], 'd');
    /* small allocations after a big one still come out right */
    for (int i = 0; i < 1000; i++) {
        char *s = hy_palloc(p, 40);
        memset(s, 'e', 40);
    }
    is_int(big[12345], 'b');
    hy_pool_destroy(p);
}

static int order[16];
static int norder;
static void record(void *arg)
{
    if (norder < 16)
        order[norder++] = (int)(intptr_t)arg;
}

static void test_reset_and_cleanups(void)
{
    hy_pool_t *p = hy_pool_create(256);
    norder = 0;
    hy_pool_on_clear(p, record, (void *)1);
    hy_pool_on_clear(p, record, (void *)2);
    hy_pool_on_clear(p, record, (void *)3);
    for (int i = 0; i < 500; i++) /* spill into several chunks and big blocks */
        hy_palloc(p, (size_t)(i % 3 == 0 ? 5000 : 100));
    hy_pool_reset(p);
    is_int(norder, 3);
    is_int(order[0], 3); /* LIFO */
    is_int(order[1], 2);
    is_int(order[2], 1);
    /* reset does not run them twice */
    hy_pool_reset(p);
    is_int(norder, 3);
    /* the arena keeps working after a reset, many times over */
    int bad = 0;
    for (int round = 0; round < 50; round++) {
        char *a = hy_palloc(p, 100);
        char *b = hy_palloc(p, 9000);
        memset(a, 'x', 100);
        memset(b, 'y', 9000);
        if (a[99] != 'x' || b[8999] != 'y' || (uintptr_t)a % 16 || (uintptr_t)b % 16)
            bad++;
        hy_pool_reset(p);
    }
    is_int(bad, 0);
    /* cleanups registered after a reset run on destroy, LIFO */
    norder = 0;
    hy_pool_on_clear(p, record, (void *)10);
    hy_pool_on_clear(p, record, (void *)11);
    hy_pool_destroy(p);
    is_int(norder, 2);
    is_int(order[0], 11);
    is_int(order[1], 10);
    hy_pool_destroy(NULL); /* accepted */
    ok(1);
}

static void test_cleanup_order_interleaved(void)
{
    hy_pool_t *p = hy_pool_create(4096);
    norder = 0;
    for (int i = 0; i < 10; i++) {
        hy_pool_on_clear(p, record, (void *)(intptr_t)i);
        hy_palloc(p, 3000); /* cleanups spread over chunks */
    }
    hy_pool_destroy(p);
    is_int(norder, 10);
    int lifo = 1;
    for (int i = 0; i < 10; i++)
        lifo &= order[i] == 9 - i;
    ok(lifo);
}

static void test_pstrndup(void)
{
    hy_pool_t *p = hy_pool_create(256);
    char *s = hy_pstrndup(p, "abcdef", 3);
    is_str(s, "abc");
    char *e = hy_pstrndup(p, NULL, 0); /* n == 0 copies nothing */
    is_str(e, "");
    char *e2 = hy_pstrndup(p, "xyz", 0);
    is_str(e2, "");
    const char *with_nul = "a\0b";
    char *m = hy_pstrndup(p, with_nul, 3);
    ok(m[0] == 'a' && m[1] == '\0' && m[2] == 'b' && m[3] == '\0');
    hy_pool_destroy(p);
}

static void test_arrays(void)
{
    hy_pool_t *p = hy_pool_create(256);
    hy_array_t *a = hy_array_create(p, 2, sizeof(int));
    is_int(a->nelts, 0);
    is_int(a->size, sizeof(int));
    for (int i = 0; i < 1000; i++) {
        int *e = hy_array_push(a);
        is_int(*e, 0); /* pushed elements are zeroed */
        *e = i * 3;
        if (i % 97 == 0)
            hy_palloc(p, 50); /* unrelated allocations in between */
    }
    is_int(a->nelts, 1000);
    ok(a->nalloc >= 1000);
    int *v = a->elts, bad = 0;
    for (int i = 0; i < 1000; i++)
        bad += v[i] != i * 3;
    is_int(bad, 0);

    /* n == 0 still works; elements bigger than a chunk */
    hy_array_t b;
    hy_array_init(&b, p, 0, 1000);
    for (int i = 0; i < 20; i++) {
        char *e = hy_array_push(&b);
        memset(e, 'A' + i, 1000);
    }
    is_int(b.nelts, 20);
    char *bytes = b.elts;
    bad = 0;
    for (int i = 0; i < 20; i++)
        bad += bytes[i * 1000] != 'A' + i || bytes[i * 1000 + 999] != 'A' + i;
    is_int(bad, 0);

    /* struct elements keep their contents across growth */
    struct pair {
        int64_t k;
        const char *v;
    };
    hy_array_t *c = hy_array_create(p, 1, sizeof(struct pair));
    for (int i = 0; i < 100; i++) {
        struct pair *e = hy_array_push(c);
        e->k = i;
        e->v = "val";
    }
    struct pair *ps = c->elts;
    is_int(ps[0].k, 0);
    is_int(ps[99].k, 99);
    is_str(ps[50].v, "val");
    hy_pool_destroy(p);
}

static void test_released_count(void)
{
    hy_mem_trim();
    is_int((long long)hy_mem_released_bytes(), 0);
    hy_pool_t *p = hy_pool_create(4096);
    (void)hy_palloc(p, 100);
    (void)hy_palloc(p, 5000); /* more than the first chunk holds: a chunk of its own */
    hy_pool_reset(p);         /* frees the big chunk, keeps the first */
    ok(hy_mem_released_bytes() >= 5000);
    size_t after_reset = hy_mem_released_bytes();
    hy_pool_destroy(p);
    ok(hy_mem_released_bytes() >= after_reset + 4096);
    hy_mem_trim();
    is_int((long long)hy_mem_released_bytes(), 0);
}

static int cleanups_run;
static void count_cleanup(void *arg)
{
    (void)arg;
    cleanups_run++;
}

static void test_pool_cache(void)
{
    hy_pool_cache_trim();
    hy_mem_trim();
    /* a given arena comes back, reset: its cleanups ran, its space is whole again */
    hy_pool_t *p = hy_pool_take();
    char *first = hy_palloc(p, 64);
    (void)hy_palloc(p, 3 * HY_REQ_POOL_SIZE); /* a chunk of its own, freed by the reset */
    hy_pool_on_clear(p, count_cleanup, NULL);
    cleanups_run = 0;
    hy_pool_give(p);
    is_int(cleanups_run, 1);
    hy_pool_t *q = hy_pool_take();
    ok(q == p);
    ok(hy_palloc(q, 64) == first);
    /* an arena of another size is destroyed, not cached */
    hy_pool_t *odd = hy_pool_create(1024);
    hy_mem_trim();
    hy_pool_give(odd);
    is_int((long long)hy_mem_released_bytes(), 1024);
    hy_pool_give(NULL);
    /* bounded: past HY_POOL_CACHE_MAX the arenas are freed */
    hy_pool_t **many = hy_alloc(sizeof(*many) * (HY_POOL_CACHE_MAX + 10));
    for (int i = 0; i < HY_POOL_CACHE_MAX + 10; i++)
        many[i] = hy_pool_create(HY_REQ_POOL_SIZE);
    hy_mem_trim();
    for (int i = 0; i < HY_POOL_CACHE_MAX + 10; i++)
        hy_pool_give(many[i]);
    ok(hy_mem_released_bytes() >= 10 * HY_REQ_POOL_SIZE); /* at least the 10 (+ odd ones) over the bound */
    ok(hy_mem_released_bytes() < 20 * HY_REQ_POOL_SIZE);
    /* the trim frees what the cache held */
    hy_mem_trim();
    hy_pool_cache_trim();
    ok(hy_mem_released_bytes() >= (size_t)(HY_POOL_CACHE_MAX - 2) * HY_REQ_POOL_SIZE);
    free(many);
    hy_pool_give(q);
    hy_pool_cache_trim();
    hy_mem_trim();
}

int main(void)
{
    subtest("checked malloc wrappers", test_checked_alloc);
    subtest("many small allocations, no overlap, 16-byte aligned", test_many_allocations);
    subtest("alignment of odd sizes, pcalloc zeroes", test_alignment_odd_sizes);
    subtest("big allocations", test_big_allocations);
    subtest("reset keeps working; cleanups LIFO on reset and destroy", test_reset_and_cleanups);
    subtest("cleanups across chunks run LIFO", test_cleanup_order_interleaved);
    subtest("pstrndup", test_pstrndup);
    subtest("arrays grow and keep their contents", test_arrays);
    subtest("freed arena bytes are counted until hy_mem_trim", test_released_count);
    subtest("request arenas: the per-worker cache", test_pool_cache);
    return done_testing();
}
