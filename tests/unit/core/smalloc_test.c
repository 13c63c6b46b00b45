/* smalloc_test.c — the small-block cache: alignment, reuse of a freed block of the same class (not under
 * AddressSanitizer, which disables the cache), realloc within and across classes, large blocks, calloc. */
#include <stdlib.h>
#include "../harness.h"
#include "core/smalloc.h"

#if defined(__SANITIZE_ADDRESS__)
#define CACHED 0
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define CACHED 0
#endif
#endif
#ifndef CACHED
#define CACHED 1
#endif

static void test_alignment_and_sizes(void)
{
    size_t sizes[] = {0, 1, 31, 32, 33, 64, 100, 1000, 4095, 4096, 4097, 100000};
    for (size_t i = 0; i < sizeof(sizes) / sizeof(sizes[0]); i++) {
        unsigned char *p = hy_sm_alloc(sizes[i]);
        ok(p != NULL);
        ok(((uintptr_t)p & 15) == 0);
        memset(p, 0xab, sizes[i]); /* the whole payload is writable (ASan checks the bounds) */
        hy_sm_free(p);
    }
    hy_sm_free(NULL);
}

static void test_reuse(void)
{
    void *a = hy_sm_alloc(40); /* class 64 */
    hy_sm_free(a);
    void *b = hy_sm_alloc(60); /* same class: the block just freed */
    if (CACHED)
        ok(a == b);
    void *c = hy_sm_alloc(60); /* the list is empty: a fresh block */
    ok(c != b);
    hy_sm_free(b);
    hy_sm_free(c);
    /* more frees than the cache keeps: the rest go back to libc (nothing leaks: LeakSanitizer in CI) */
    void *many[HY_SM_KEEP + 10];
    for (int i = 0; i < HY_SM_KEEP + 10; i++)
        many[i] = hy_sm_alloc(200);
    for (int i = 0; i < HY_SM_KEEP + 10; i++)
        hy_sm_free(many[i]);
    void *big = hy_sm_alloc(5000); /* large: never cached */
    hy_sm_free(big);
}

static void test_calloc_realloc(void)
{
    unsigned char *z = hy_sm_calloc(10, 30);
    int zero = 1;
    for (int i = 0; i < 300; i++)
        zero &= z[i] == 0;
    ok(zero);
    hy_sm_free(z);
    ok(hy_sm_calloc(SIZE_MAX / 2, 4) == NULL); /* the product overflows */
    unsigned char *p = hy_sm_realloc(NULL, 20);
    for (int i = 0; i < 20; i++)
        p[i] = (unsigned char)i;
    unsigned char *q = hy_sm_realloc(p, 30); /* still fits its class (32) */
    if (CACHED)
        ok(q == p);
    q = hy_sm_realloc(q, 3000); /* another class: moved, bytes kept */
    int same = 1;
    for (int i = 0; i < 20; i++)
        same &= q[i] == i;
    ok(same);
    q = hy_sm_realloc(q, 10000); /* large */
    same = 1;
    for (int i = 0; i < 20; i++)
        same &= q[i] == i;
    ok(same);
    q = hy_sm_realloc(q, 20000); /* large to larger */
    same = 1;
    for (int i = 0; i < 20; i++)
        same &= q[i] == i;
    ok(same);
    q = hy_sm_realloc(q, 10); /* large to small */
    same = 1;
    for (int i = 0; i < 10; i++)
        same &= q[i] == i;
    ok(same);
    hy_sm_free(q);
}

int main(void)
{
    subtest("alignment and sizes", test_alignment_and_sizes);
    subtest("reuse", test_reuse);
    subtest("calloc and realloc", test_calloc_realloc);
    return done_testing();
}
