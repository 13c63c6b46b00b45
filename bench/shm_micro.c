/* shm_micro.c — microbenchmark of the shared-zone primitives (core/shm.h, core/slab.h): the lock uncontended
 * and contended by P processes, and slab alloc+free pairs (small and page runs), in one 16 MiB region.
 *
 *   make && cc -O2 -std=c11 -D_GNU_SOURCE -Isrc -o build/shm_micro bench/shm_micro.c build/libhayate.a \
 *       $(pkg-config --libs libpcre2-8 libssl libcrypto zlib libbrotlienc libzstd libdeflate) && build/shm_micro
 *
 * Prints nanoseconds per operation; numbers depend on the machine and its load (not a test). */
#include <stdio.h>
#include <stdlib.h>
#include <time.h>
#include <unistd.h>
#include <sys/wait.h>
#include "core/shm.h"
#include "core/slab.h"

static double now_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec * 1e9 + (double)ts.tv_nsec;
}

static void lock_loop(hy_slab_t *s, volatile uint64_t *counter, int n)
{
    for (int i = 0; i < n; i++) {
        hy_slab_lock(s);
        (*counter)++;
        hy_slab_unlock(s);
    }
}

int main(void)
{
    hy_shm_t shm;
    if (hy_shm_map(&shm, 16 << 20) != 0)
        return 1;
    hy_slab_t *s = hy_slab_init(shm.addr, shm.size);
    volatile uint64_t *counter = hy_slab_calloc(s, sizeof(uint64_t));
    enum { N = 2000000 };

    double t = now_ns();
    lock_loop(s, counter, N);
    printf("lock+unlock, 1 process:            %6.1f ns/op\n", (now_ns() - t) / N);

    for (int procs = 2; procs <= 4; procs *= 2) {
        *counter = 0;
        t = now_ns();
        for (int k = 0; k < procs; k++)
            if (fork() == 0) {
                lock_loop(s, counter, N / procs);
                _exit(0);
            }
        while (wait(NULL) > 0)
            ;
        printf("lock+unlock, %d processes:          %6.1f ns/op (total %llu)\n", procs, (now_ns() - t) / N,
               (unsigned long long)*counter);
    }

    static void *ptrs[1024];
    size_t sizes[] = {64, 1000, 3 * 4096};
    for (size_t k = 0; k < sizeof(sizes) / sizeof(sizes[0]); k++) {
        t = now_ns();
        int rounds = N / 1024;
        for (int r = 0; r < rounds; r++) {
            for (int i = 0; i < 1024; i++)
                ptrs[i] = hy_slab_alloc(s, sizes[k]);
            for (int i = 0; i < 1024; i++)
                hy_slab_free(s, ptrs[i]);
        }
        printf("alloc+free %5zu bytes, 1 process:  %6.1f ns/pair\n", sizes[k], (now_ns() - t) / (rounds * 1024.0));
    }
    hy_slab_stats_t st;
    hy_slab_stats(s, &st);
    printf("pages %zu, free %zu, failed %llu\n", st.pages_total, st.pages_free, (unsigned long long)st.failed);
    hy_shm_unmap(&shm);
    return 0;
}
