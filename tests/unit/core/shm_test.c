/* shm_test.c — shared mappings, the robust process-shared lock and the slab allocator: size classes,
 * exhaustion, coalescing of freed page runs, random patterns against a shadow table, forked processes
 * contending on the lock and the allocator, and a lock holder killed with SIGKILL. */
#include <errno.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include "../harness.h"
#include "core/shm.h"
#include "core/slab.h"

static size_t page;

static hy_slab_t *new_region(hy_shm_t *shm, size_t npages)
{
    memset(shm, 0, sizeof(*shm));
    if (hy_shm_map(shm, npages * page) != 0)
        return NULL;
    return hy_slab_init(shm->addr, shm->size);
}

static void test_map(void)
{
    hy_shm_t shm = {0};
    is_int(hy_shm_map(&shm, 0), -EINVAL);
    ok(shm.addr == NULL);
    is_int(hy_shm_map(&shm, 100), 0);
    is_int(shm.size, page); /* whole pages */
    unsigned char *p = shm.addr;
    ok(p[0] == 0 && p[page - 1] == 0); /* zeroed */
    /* MAP_SHARED: a child's write is seen by the parent */
    pid_t pid = fork();
    if (pid == 0) {
        p[10] = 42;
        _exit(0);
    }
    int st;
    waitpid(pid, &st, 0);
    is_int(p[10], 42);
    void *addr = shm.addr;
    hy_shm_unmap(&shm);
    ok(shm.addr == NULL && shm.size == 0);
    ok(msync(addr, page, MS_ASYNC) != 0 && errno == ENOMEM); /* really gone */
    hy_shm_unmap(&shm);                                      /* a no-op */
    /* a region too small for the header and a data page */
    is_int(hy_shm_map(&shm, page), 0);
    ok(hy_slab_init(shm.addr, 64) == NULL);
    hy_shm_unmap(&shm);
}

static void test_classes(void)
{
    hy_shm_t shm;
    hy_slab_t *s = new_region(&shm, 16);
    ok(s != NULL);
    hy_slab_stats_t st;
    hy_slab_stats(s, &st);
    is_int(st.page_size, page);
    ok(st.pages_total >= 13 && st.pages_total <= 15); /* header and descriptors take the rest */
    is_int(st.pages_free, st.pages_total);
    size_t total = st.pages_total;

    size_t sizes[] = {0, 1, 8, 9, 16, 17, 100, 128, 129, 1000, page / 2};
    void *ptrs[HY_ARRAY_SIZE(sizes)];
    size_t want_bytes = 0;
    for (size_t i = 0; i < HY_ARRAY_SIZE(sizes); i++) {
        ptrs[i] = hy_slab_alloc(s, sizes[i]);
        ok(ptrs[i] != NULL);
        size_t c = 8;
        while (c < sizes[i])
            c *= 2;
        want_bytes += c;
        ok((uintptr_t)ptrs[i] % c == 0); /* a chunk of 2^k bytes is 2^k-aligned */
        memset(ptrs[i], 0xAB, sizes[i]);
    }
    hy_slab_stats(s, &st);
    is_int(st.bytes_used, want_bytes);
    is_int(st.allocs, HY_ARRAY_SIZE(sizes));
    ok(hy_slab_check(s) == NULL);
    /* larger than half a page: whole pages, page-aligned */
    char *big = hy_slab_alloc(s, page / 2 + 1);
    ok(big != NULL && (uintptr_t)big % page == 0);
    char *big3 = hy_slab_alloc(s, 2 * page + 1);
    ok(big3 != NULL && (uintptr_t)big3 % page == 0);
    memset(big3, 1, 3 * page);
    hy_slab_stats(s, &st);
    is_int(st.bytes_used, want_bytes + 4 * page);
    ok(hy_slab_check(s) == NULL);
    for (size_t i = 0; i < HY_ARRAY_SIZE(sizes); i++)
        hy_slab_free(s, ptrs[i]);
    hy_slab_free(s, big);
    hy_slab_free(s, big3);
    hy_slab_free(s, NULL);
    hy_slab_stats(s, &st);
    is_int(st.pages_free, total); /* every page back: small pages emptied, runs freed */
    is_int(st.pages_small, 0);
    is_int(st.bytes_used, 0);
    is_int(st.frees, HY_ARRAY_SIZE(sizes) + 2);
    ok(hy_slab_check(s) == NULL);
    /* calloc zeroes memory that was dirty */
    unsigned char *z = hy_slab_calloc(s, 1000);
    int dirty = 0;
    for (int i = 0; i < 1000; i++)
        dirty += z[i] != 0;
    is_int(dirty, 0);
    hy_slab_free(s, z);
    hy_shm_unmap(&shm);
}

static void test_exhaustion(void)
{
    hy_shm_t shm;
    hy_slab_t *s = new_region(&shm, 16);
    hy_slab_stats_t st;
    hy_slab_stats(s, &st);
    size_t total = st.pages_total, per_page = page / 8, n = 0;
    void **ptrs = malloc(sizeof(void *) * total * per_page);
    for (;;) {
        void *p = hy_slab_alloc(s, 8);
        if (p == NULL)
            break;
        ptrs[n++] = p;
    }
    is_int(n, total * per_page); /* every byte of every page handed out */
    hy_slab_stats(s, &st);
    is_int(st.failed, 1);
    is_int(st.pages_free, 0);
    ok(hy_slab_alloc(s, page * 2) == NULL); /* no page left for a run either */
    ok(hy_slab_alloc(s, 16) == NULL);       /* nor for another class */
    hy_slab_stats(s, &st);
    is_int(st.failed, 3);
    ok(hy_slab_check(s) == NULL);
    /* free every other chunk: all pages stay in use, the freed chunks serve new 8-byte requests */
    for (size_t i = 0; i < n; i += 2)
        hy_slab_free(s, ptrs[i]);
    ok(hy_slab_check(s) == NULL);
    ok(hy_slab_alloc(s, 16) == NULL); /* still no free page */
    for (size_t i = 0; i < n; i += 2)
        ok(ptrs[i] = hy_slab_alloc(s, 8));
    ok(hy_slab_alloc(s, 8) == NULL);
    /* free everything in a scrambled order: the pages come back and merge into one run */
    for (size_t k = 0; k < n; k++)
        hy_slab_free(s, ptrs[(k * 7919) % n]); /* 7919 is prime, n a power-of-two multiple: a permutation */
    hy_slab_stats(s, &st);
    is_int(st.pages_free, total);
    ok(hy_slab_check(s) == NULL);
    void *all = hy_slab_alloc(s, total * page);
    ok(all != NULL);
    ok(hy_slab_alloc(s, 1) == NULL);
    hy_slab_free(s, all);
    free(ptrs);
    hy_shm_unmap(&shm);
}

static void test_coalescing(void)
{
    hy_shm_t shm;
    hy_slab_t *s = new_region(&shm, 32);
    hy_slab_stats_t st;
    hy_slab_stats(s, &st);
    size_t total = st.pages_total;
    /* runs of 3, 2 and 4 pages and one small page, then the rest in one run */
    char *a = hy_slab_alloc(s, 3 * page), *b = hy_slab_alloc(s, 2 * page), *c = hy_slab_alloc(s, 4 * page);
    char *small = hy_slab_alloc(s, 64);
    char *rest = hy_slab_alloc(s, (total - 10) * page);
    ok(a && b && c && small && rest);
    ok(hy_slab_alloc(s, page) == NULL);
    /* free the middle run's neighbours, then it: one 9-page run must form */
    hy_slab_free(s, a);
    hy_slab_free(s, c);
    ok(hy_slab_check(s) == NULL);
    ok(hy_slab_alloc(s, 5 * page) == NULL); /* 3 and 4 free pages, not contiguous */
    hy_slab_free(s, b);
    ok(hy_slab_check(s) == NULL);
    char *nine = hy_slab_alloc(s, 9 * page);
    ok(nine != NULL);
    hy_slab_free(s, nine);
    /* freeing the last chunk of the small page gives its page back, merging with both sides */
    hy_slab_free(s, rest);
    hy_slab_free(s, small);
    hy_slab_stats(s, &st);
    is_int(st.pages_free, total);
    ok(hy_slab_check(s) == NULL);
    ok(hy_slab_alloc(s, total * page) != NULL);
    hy_shm_unmap(&shm);
}

/* Random allocations and frees against a shadow table; each block is filled with its own byte pattern, so an
 * overlap between two live blocks shows as a changed pattern. Returns the number of corrupted blocks. */
typedef struct {
    unsigned char *p;
    size_t len;
    unsigned char tag;
} block_t;

static unsigned rnd(unsigned *state)
{
    *state = *state * 1103515245u + 12345u;
    return *state >> 8;
}

static bool intact(const block_t *b)
{
    for (size_t i = 0; i < b->len; i++)
        if (b->p[i] != b->tag)
            return false;
    return true;
}

static int churn(hy_slab_t *s, unsigned seed, int ops, int nslots, bool check_often)
{
    block_t *slots = calloc((size_t)nslots, sizeof(block_t));
    int bad = 0;
    for (int i = 0; i < ops; i++) {
        block_t *b = &slots[rnd(&seed) % (unsigned)nslots];
        if (b->p != NULL) {
            bad += !intact(b);
            hy_slab_free(s, b->p);
            b->p = NULL;
            continue;
        }
        unsigned r = rnd(&seed);
        size_t len = r % 8 == 0 ? page / 2 + r % (3 * page) : 1 + r % 700; /* mostly small, some page runs */
        b->p = hy_slab_alloc(s, len);
        if (b->p == NULL)
            continue; /* full: a normal outcome */
        b->len = len;
        b->tag = (unsigned char)(1 + (uintptr_t)b % 251);
        memset(b->p, b->tag, len);
        if (check_often && i % 500 == 0 && hy_slab_check(s) != NULL)
            bad++;
    }
    for (int i = 0; i < nslots; i++) {
        if (slots[i].p) {
            bad += !intact(&slots[i]);
            hy_slab_free(s, slots[i].p);
        }
    }
    free(slots);
    return bad;
}

static void test_random(void)
{
    hy_shm_t shm;
    hy_slab_t *s = new_region(&shm, 64);
    hy_slab_stats_t st;
    hy_slab_stats(s, &st);
    is_int(churn(s, 12345, 40000, 300, true), 0);
    const char *why = hy_slab_check(s);
    is_str(why ? why : "ok", "ok");
    hy_slab_stats(s, &st);
    is_int(st.pages_free, st.pages_total);
    is_int(st.bytes_used, 0);
    ok(st.failed > 0); /* the load was chosen to fill the region at times */
    is_int(st.allocs, st.frees);
    hy_shm_unmap(&shm);
}

/* Freeing something that is not a live allocation stops the process (hy_fatal) instead of corrupting a region
 * other processes use: run it in a child and expect SIGABRT. */
static bool free_aborts(hy_slab_t *s, void *p)
{
    pid_t pid = fork();
    if (pid == 0) {
        FILE *null = fopen("/dev/null", "w");
        if (null != NULL)
            stderr = null; /* the fatal message */
        hy_slab_free(s, p);
        _exit(0);
    }
    int st;
    waitpid(pid, &st, 0);
    return WIFSIGNALED(st) && WTERMSIG(st) == SIGABRT;
}

static void test_bad_free(void)
{
    hy_shm_t shm;
    hy_slab_t *s = new_region(&shm, 16);
    char *small = hy_slab_alloc(s, 64), *other = hy_slab_alloc(s, 64), *run = hy_slab_alloc(s, 2 * page);
    int on_stack;
    ok(free_aborts(s, &on_stack));  /* outside the region */
    ok(free_aborts(s, small + 8));  /* inside a chunk */
    ok(free_aborts(s, run + 16));   /* inside a page run */
    ok(free_aborts(s, run + page)); /* the second page of a run */
    ok(free_aborts(s, run - page)); /* a free page (runs are cut from the end of the free pages) */
    hy_slab_free(s, small);
    hy_slab_free(s, other);
    ok(free_aborts(s, small));    /* twice: its page went back to the free pages */
    ok(hy_slab_check(s) == NULL); /* the children's attempts changed nothing */
    hy_slab_free(s, run);
    hy_shm_unmap(&shm);
}

/* A start line for forked children: each blocks in wait_start() until the parent calls release_start() after
 * forking them all, so they really run at the same time instead of one after the other. */
static int start_pipe[2];

static void wait_start(void)
{
    close(start_pipe[1]);
    char c;
    (void)!read(start_pipe[0], &c, 1); /* returns 0 (EOF) once the parent closed its end */
    close(start_pipe[0]);
}

static void release_start(void)
{
    close(start_pipe[0]);
    close(start_pipe[1]);
}

static void wait_children(pid_t *pids, int n, int *failed)
{
    for (int i = 0; i < n; i++) {
        int st;
        if (waitpid(pids[i], &st, 0) != pids[i] || !WIFEXITED(st) || WEXITSTATUS(st) != 0)
            (*failed)++;
    }
}

/* 4 processes × 100k increments of a plain (non-atomic) counter under the lock: the exact total or a lost
 * update. */
static void test_lock_contention(void)
{
    hy_shm_t shm;
    hy_slab_t *s = new_region(&shm, 16);
    volatile uint64_t *counter = hy_slab_calloc(s, sizeof(uint64_t));
    enum { KIDS = 4, ROUNDS = 100000 };
    pid_t pids[KIDS];
    ok(pipe(start_pipe) == 0);
    for (int k = 0; k < KIDS; k++) {
        pids[k] = fork();
        if (pids[k] == 0) {
            wait_start();
            for (int i = 0; i < ROUNDS; i++) {
                hy_slab_lock(s);
                uint64_t v = *counter;
                *counter = v + 1;
                hy_slab_unlock(s);
            }
            _exit(0);
        }
    }
    release_start();
    int failed = 0;
    wait_children(pids, KIDS, &failed);
    is_int(failed, 0);
    is_int(*counter, (uint64_t)KIDS * ROUNDS);
    hy_shm_unmap(&shm);
}

/* 4 processes allocate and free concurrently in one region; each verifies its blocks' patterns (another
 * process handed the same bytes would overwrite them). At the end every invariant holds and nothing leaked. */
static void test_alloc_contention(void)
{
    hy_shm_t shm;
    hy_slab_t *s = new_region(&shm, 128);
    enum { KIDS = 4 };
    pid_t pids[KIDS];
    ok(pipe(start_pipe) == 0);
    for (int k = 0; k < KIDS; k++) {
        pids[k] = fork();
        if (pids[k] == 0) {
            wait_start();
            _exit(churn(s, 1000u + (unsigned)k, 30000, 200, false) == 0 ? 0 : 1);
        }
    }
    release_start();
    int failed = 0;
    wait_children(pids, KIDS, &failed);
    is_int(failed, 0);
    const char *why = hy_slab_check(s);
    is_str(why ? why : "ok", "ok");
    hy_slab_stats_t st;
    hy_slab_stats(s, &st);
    is_int(st.pages_free, st.pages_total);
    is_int(st.bytes_used, 0);
    is_int(st.allocs, st.frees);
    ok(st.allocs > 4 * 10000);
    hy_shm_unmap(&shm);
}

/* A process killed (SIGKILL) while it holds the lock: the next locker gets it, is told, and the lock keeps
 * working. */
static void test_owner_dies(void)
{
    hy_shm_t shm;
    hy_slab_t *s = new_region(&shm, 16);
    int held[2], never[2];
    ok(pipe(held) == 0 && pipe(never) == 0);
    pid_t pid = fork();
    if (pid == 0) {
        close(held[0]);
        close(never[1]);
        hy_slab_lock(s);
        (void)!write(held[1], "L", 1);
        char c;
        (void)!read(never[0], &c, 1); /* blocks until killed */
        _exit(0);
    }
    close(held[1]);
    close(never[0]);
    char c;
    is_int(read(held[0], &c, 1), 1); /* the child holds the lock now */
    kill(pid, SIGKILL);
    int st;
    waitpid(pid, &st, 0);
    ok(WIFSIGNALED(st) && WTERMSIG(st) == SIGKILL);
    ok(hy_slab_lock(s) == true); /* recovered from the dead owner */
    void *p = hy_slab_alloc_locked(s, 100);
    ok(p != NULL);
    hy_slab_free_locked(s, p);
    hy_slab_unlock(s);
    ok(hy_slab_lock(s) == false); /* an ordinary lock again */
    hy_slab_unlock(s);
    hy_slab_stats_t stats;
    hy_slab_stats(s, &stats);
    is_int(stats.owner_died, 1);
    close(held[0]);
    close(never[1]);
    hy_shm_unmap(&shm);
}

/* trylock on a bare mutex in a mapping: busy while a live process holds it, recovered when it died */
static void test_trylock(void)
{
    hy_shm_t shm;
    ok(hy_shm_map(&shm, sizeof(hy_shm_mutex_t)) == 0);
    hy_shm_mutex_t *m = shm.addr;
    is_int(hy_shm_mutex_init(m), 0);
    int held[2], go[2];
    ok(pipe(held) == 0 && pipe(go) == 0);
    pid_t pid = fork();
    if (pid == 0) {
        hy_shm_mutex_lock(m);
        (void)!write(held[1], "L", 1);
        char c;
        (void)!read(go[0], &c, 1);
        _exit(0); /* exits holding it */
    }
    char c;
    is_int(read(held[0], &c, 1), 1);
    ok(hy_shm_mutex_trylock(m) == false); /* busy */
    (void)!write(go[1], "G", 1);
    int st;
    waitpid(pid, &st, 0);
    ok(hy_shm_mutex_trylock(m) == true); /* the owner is gone: recovered */
    is_int(m->owner_died, 1);
    hy_shm_mutex_unlock(m);
    ok(hy_shm_mutex_trylock(m) == true);
    hy_shm_mutex_unlock(m);
    is_int(m->owner_died, 1);
    close(held[0]);
    close(held[1]);
    close(go[0]);
    close(go[1]);
    hy_shm_unmap(&shm);
}

int main(void)
{
    page = (size_t)sysconf(_SC_PAGESIZE);
    subtest("map", test_map);
    subtest("size classes", test_classes);
    subtest("exhaustion", test_exhaustion);
    subtest("coalescing", test_coalescing);
    subtest("random", test_random);
    subtest("bad free", test_bad_free);
    subtest("lock contention", test_lock_contention);
    subtest("alloc contention", test_alloc_contention);
    subtest("owner dies", test_owner_dies);
    subtest("trylock", test_trylock);
    return done_testing();
}
