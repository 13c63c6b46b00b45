/* stats_test.c — the shared counter segment: the private slot before it exists, sums over slots written by
 * forked processes, gauges zeroed on release while counters stay, series keys stable and bounded, the
 * histogram's buckets. */
#include <stddef.h>
#include <stdio.h>
#include <unistd.h>
#include <sys/wait.h>
#include "../harness.h"
#include "core/stats.h"

#define SUM(f) hy_stats_sum(offsetof(hy_stats_slot_t, f))

static void test_private(void)
{
    ok(!hy_stats_shared());
    hy_stats_add(&hy_stats_me->requests, 3);
    is_int(SUM(requests), 3);
    is_int(hy_stats_series("x", 1), HY_STATS_SINK); /* no segment: the sink */
    is_int(hy_stats_info().generation, 0);
}

static void test_shared(void)
{
    is_int(hy_stats_create(2), 0);
    ok(hy_stats_shared());
    is_int(hy_stats_create(5), 0); /* once: the second call keeps the first segment */
    is_int(hy_stats_info().workers, 2);
    is_int(hy_stats_info().generation, 1);
    is_int(SUM(requests), 0); /* the private slot's 3 are not shared */
    for (size_t ix = 0; ix < 3; ix++) {
        pid_t pid = fork();
        if (pid == 0) {
            hy_stats_attach(ix);
            for (size_t i = 0; i <= ix; i++)
                hy_stats_add(&hy_stats_me->requests, 10);
            hy_stats_add(&hy_stats_me->active, 2);
            hy_stats_add(&hy_stats_me->active, (uint64_t)-1);
            _exit(0);
        }
        int st;
        waitpid(pid, &st, 0);
    }
    is_int(SUM(requests), 10 + 20 + 30);
    is_int(SUM(active), 3);
    hy_stats_release(1);
    is_int(SUM(active), 2);    /* a dead process's gauges go */
    is_int(SUM(requests), 60); /* its counters stay */
    hy_stats_reloaded(4);
    is_int(hy_stats_info().generation, 2);
    is_int(hy_stats_info().reloads, 1);
    is_int(hy_stats_info().workers, 4);
}

static void test_series(void)
{
    uint32_t a = hy_stats_series("alpha", 4);
    ok(a != HY_STATS_SINK);
    uint32_t b = hy_stats_series("beta", 2);
    is_int(b, a + 4);
    is_int(hy_stats_series("alpha", 4), a);
    is_int(hy_stats_series("gamma", 0), HY_STATS_SINK);
    is_int(hy_stats_series("gamma", HY_STATS_SERIES_MAX_N + 1), HY_STATS_SINK);
    pid_t pid = fork();
    if (pid == 0) { /* another process finds the same key, registers a new one */
        hy_stats_attach(5);
        hy_stats_add(&hy_stats_me->ext[hy_stats_series("beta", 2) + 1], 7);
        hy_stats_series("delta", 1);
        _exit(0);
    }
    int st;
    waitpid(pid, &st, 0);
    is_int(hy_stats_sum_ext(b + 1), 7);
    is_int(hy_stats_series("delta", 1), b + 2);
    const char *key;
    uint32_t base;
    ok(hy_stats_series_at(0, &key, &base));
    is_str(key, "alpha");
    is_int(base, a);
    ok(hy_stats_series_at(2, &key, &base));
    is_str(key, "delta");
    ok(!hy_stats_series_at(3, &key, &base));
    /* a full table: the sink */
    char k[32];
    uint32_t last = 0;
    for (int i = 0; i < HY_STATS_MAX_SERIES + 10; i++) {
        snprintf(k, sizeof(k), "fill%d", i);
        last = hy_stats_series(k, 1);
    }
    is_int(last, HY_STATS_SINK);
}

static void test_histogram(void)
{
    hy_stats_observe_ms(0);
    hy_stats_observe_ms(5);
    hy_stats_observe_ms(6);
    hy_stats_observe_ms(20000);
    is_int(hy_stats_me->dur_buckets[0], 2); /* le 5 ms */
    is_int(hy_stats_me->dur_buckets[1], 1); /* le 10 ms */
    is_int(hy_stats_me->dur_buckets[HY_STATS_BUCKETS], 1);
    is_int(hy_stats_me->dur_count, 4);
    is_int(hy_stats_me->dur_sum_ms, 20011);
}

int main(void)
{
    subtest("private slot", test_private);
    subtest("shared", test_shared);
    subtest("series", test_series);
    subtest("histogram", test_histogram);
    return done_testing();
}
