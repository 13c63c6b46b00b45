/* slab_check_test.c — white-box tests of the slab allocator (core/slab.c is compiled into this test, so the page
 * descriptors are visible): hy_slab_check must name each broken invariant when a descriptor, a list or a counter
 * is damaged on purpose, and hy_slab_init's layout fits the pages into odd-sized regions. The black-box tests
 * of the allocator are in shm_test.c. */
#include <signal.h>
#include <stdlib.h>
#include <sys/wait.h>
#include "../harness.h"
#include "core/slab.c" /* the allocator under test, with its private page_t and struct hy_slab */
#include "core/coverage.h"

static size_t page;

static hy_slab_t *region(hy_shm_t *shm, size_t npages)
{
    memset(shm, 0, sizeof(*shm));
    if (hy_shm_map(shm, npages * page) != 0)
        return NULL;
    return hy_slab_init(shm->addr, shm->size);
}

static void test_init_layout(void)
{
    hy_shm_t shm = {0};
    is_int(hy_shm_map(&shm, 4 * page), 0);
    /* header + descriptor + one page, but the data page cannot be page-aligned inside it */
    ok(hy_slab_init(shm.addr, page + 1024) == NULL);
    /* three pages less a little: two pages would not fit after the aligned header, one does */
    hy_slab_t *s = hy_slab_init(shm.addr, 3 * page - 64);
    ok(s != NULL);
    is_int(s->npages, 1);
    ok((uintptr_t)s->data % page == 0);
    ok((char *)s->data + page <= (char *)shm.addr + 3 * page - 64);
    ok(hy_slab_check(s) == NULL);
    /* a request larger than every page of the region fails and is counted */
    ok(hy_slab_alloc(s, 2 * page) == NULL);
    ok(hy_slab_calloc(s, 2 * page) == NULL);
    hy_slab_stats_t st;
    hy_slab_stats(s, &st);
    is_int(st.failed, 2);
    is_int(st.allocs, 0);
    hy_shm_unmap(&shm);
}

/* Each damage() call breaks one thing, checks the message, then puts it back: the region is whole again. */
#define EXPECT(msg)                                                                                                \
    do {                                                                                                           \
        const char *why = hy_slab_check(s);                                                                        \
        ok(why != NULL && strcmp(why, (msg)) == 0);                                                                \
        if (why == NULL || strcmp(why, (msg)) != 0)                                                                \
            printf("#   got: %s\n#  want: %s\n", why ? why : "(null)", (msg));                                  \
    } while (0)

static uint32_t page_of(hy_slab_t *s, void *p)
{
    return (uint32_t)((size_t)((char *)p - s->data) >> s->page_shift);
}

static void test_check_runs(void)
{
    hy_shm_t shm;
    hy_slab_t *s = region(&shm, 32);
    /* layout from the end: [free run F][used run R: 3 pages][small page S (64-byte chunks)] */
    char *r = hy_slab_alloc(s, 3 * page);
    char *c1 = hy_slab_alloc(s, 64), *c2 = hy_slab_alloc(s, 64);
    ok(r && c1 && c2);
    ok(hy_slab_check(s) == NULL);
    uint32_t ri = page_of(s, r), si = page_of(s, c1), fi = s->free_runs;
    page_t *R = &s->pages[ri], *S = &s->pages[si], *F = &s->pages[fi];
    ok(fi == 0 && F->kind == PAGE_FREE);

    uint32_t keep = F->npages;
    F->npages = 0;
    EXPECT("a free run has a bad length");
    F->npages = s->npages + 1;
    EXPECT("a free run has a bad length");
    F->npages = keep;

    s->pages[1].kind = PAGE_SMALL;
    EXPECT("a page inside a free run is not free");
    s->pages[1].kind = PAGE_FREE;

    s->pages[keep - 1].head = 1;
    EXPECT("a free run's last page does not point at its first");
    s->pages[keep - 1].head = 0;

    /* split the free run in two touching runs */
    F->npages = 2;
    s->pages[1].head = 0;
    s->pages[2].npages = keep - 2;
    s->pages[keep - 1].head = 2;
    EXPECT("two free runs touch (not merged)");
    F->npages = keep;
    s->pages[keep - 1].head = 0;

    keep = R->npages;
    R->npages = 0;
    EXPECT("a used run has a bad length");
    R->npages = s->npages;
    EXPECT("a used run has a bad length");
    R->npages = keep;

    s->pages[ri + 1].kind = PAGE_FREE;
    EXPECT("a page inside a used run is not marked as its body");
    s->pages[ri + 1].kind = PAGE_RUN_BODY;

    R->kind = 0;
    EXPECT("a page starts no run");
    R->kind = PAGE_RUN;

    uint8_t shift = S->shift;
    S->shift = 2;
    EXPECT("a small page has a bad chunk size");
    S->shift = (uint8_t)s->page_shift;
    EXPECT("a small page has a bad chunk size");
    S->shift = shift;

    /* the free list is threaded through the free chunks: damage the first free chunk's link */
    char *first_free = s->data + ((size_t)si << s->page_shift) + S->free_off;
    uint32_t link;
    memcpy(&link, first_free, sizeof(link));
    uint32_t bad = 3; /* not at a chunk boundary */
    memcpy(first_free, &bad, sizeof(bad));
    EXPECT("a small page's free list is broken");
    bad = (uint32_t)page; /* past the page */
    memcpy(first_free, &bad, sizeof(bad));
    EXPECT("a small page's free list is broken");
    bad = S->free_off; /* a loop onto itself */
    memcpy(first_free, &bad, sizeof(bad));
    EXPECT("a small page's free list is broken");
    memcpy(first_free, &link, sizeof(link));

    S->nused++;
    EXPECT("a small page's used and free chunks do not add up");
    S->nused--;

    ok(hy_slab_check(s) == NULL);
    hy_slab_free(s, c1);
    hy_slab_free(s, c2);
    hy_slab_free(s, r);
    ok(hy_slab_check(s) == NULL);
    hy_shm_unmap(&shm);
}

static void test_check_lists_and_counters(void)
{
    hy_shm_t shm;
    hy_slab_t *s = region(&shm, 32);
    char *big = hy_slab_alloc(s, 2 * page);
    char *c1 = hy_slab_alloc(s, 32);
    ok(big && c1);
    uint32_t si = page_of(s, c1), cls = 5 - HY_SLAB_MIN_SHIFT;
    page_t *S = &s->pages[si];
    ok(s->classes[cls] == si);

    /* a page with no chunk in use that was not given back */
    S->nused = 0;
    S->free_off = 0;
    uint32_t next = 32;
    memcpy(s->data + ((size_t)si << s->page_shift), &next, sizeof(next)); /* c1's chunk rejoins the list */
    EXPECT("a small page with no chunk in use was not given back");
    S->nused = 1;
    S->free_off = 32;

    /* the free-run list: wrong kind, wrong back link, a run missing from the list */
    uint32_t fr = s->free_runs;
    s->pages[fr].prev = 7;
    EXPECT("the free-run list is broken");
    s->pages[fr].prev = NIL;
    s->free_runs = NIL;
    EXPECT("the free-run list does not hold every free run");
    s->free_runs = fr;

    /* the class list: a full page listed, a page with room missing, a wrong class */
    s->classes[cls - 1] = si; /* listed in the 16-byte class too */
    EXPECT("a size class list is broken");
    s->classes[cls - 1] = NIL;
    s->classes[cls] = NIL;
    EXPECT("a size class list misses a page with room");
    s->classes[cls] = si;
    S->prev = 3;
    EXPECT("a size class list is broken");
    S->prev = NIL;

    /* the counters */
    s->pages_free++;
    EXPECT("the counters do not match the pages");
    s->pages_free--;
    s->pages_small++;
    EXPECT("the counters do not match the pages");
    s->pages_small--;
    s->bytes_used += 8;
    EXPECT("the counters do not match the pages");
    s->bytes_used -= 8;

    ok(hy_slab_check(s) == NULL);
    hy_slab_free(s, c1);
    hy_slab_free(s, big);
    ok(hy_slab_check(s) == NULL);
    hy_shm_unmap(&shm);
}

#ifdef HY_COVERAGE
static void flush_and_abort(int sig)
{
    (void)sig;
    HY_COVERAGE_FLUSH(); /* the child's counters, before abort() ends it */
    signal(SIGABRT, SIG_DFL);
    raise(SIGABRT);
}
#endif

/* hy_slab_free of something that is not a live allocation aborts (hy_fatal); in a child. */
static bool free_aborts(hy_slab_t *s, void *p)
{
    fflush(stdout);
    pid_t pid = fork();
    if (pid == 0) {
#ifdef HY_COVERAGE
        signal(SIGABRT, flush_and_abort);
#endif
        FILE *null = fopen("/dev/null", "w");
        if (null != NULL)
            stderr = null;
        hy_slab_free(s, p);
        _exit(0);
    }
    int st;
    waitpid(pid, &st, 0);
    return WIFSIGNALED(st) && WTERMSIG(st) == SIGABRT;
}

static void test_bad_free_kinds(void)
{
    hy_shm_t shm;
    hy_slab_t *s = region(&shm, 16);
    char *c = hy_slab_alloc(s, 64), *run = hy_slab_alloc(s, 2 * page);
    ok(free_aborts(s, s->data - 1));                                  /* before the data pages */
    ok(free_aborts(s, s->data + ((size_t)s->npages << s->page_shift))); /* just past them */
    ok(free_aborts(s, run + 16));                                     /* inside a run's first page */
    ok(free_aborts(s, c + 8));                                        /* inside a chunk */
    ok(free_aborts(s, run + page));                                   /* a run's body page */
    /* a small page whose every chunk is free already (nused 0): a double free */
    page_t *S = &s->pages[page_of(s, c)];
    S->nused = 0;
    ok(free_aborts(s, c));
    S->nused = 1;
    hy_slab_free(s, c);
    hy_slab_free(s, run);
    ok(hy_slab_check(s) == NULL);
    hy_shm_unmap(&shm);
}

int main(void)
{
    page = (size_t)sysconf(_SC_PAGESIZE);
    subtest("init layout", test_init_layout);
    subtest("check: runs and pages", test_check_runs);
    subtest("check: lists and counters", test_check_lists_and_counters);
    subtest("bad free kinds", test_bad_free_kinds);
    return done_testing();
}
