/* affinity_test.c — worker_cpu_affinity as hy_limits_set_affinity applies it (nginx's rules: one bit mask per
 * worker, the last one repeating; "auto" puts worker i on the i-th allowed CPU, of the mask when one follows).
 * Each case runs in a forked child: the affinity it sets is the child's own and is checked there. */
#include <sched.h>
#include <stdlib.h>
#include <unistd.h>
#include <sys/wait.h>
#include "../harness.h"
#include "core/coverage.h"
#include "process/limits.h"

static cpu_set_t allowed;
static int first_cpu = -1, second_cpu = -1; /* the two lowest CPUs this process may run on */

/* The affinity the child ends with after hy_limits_set_affinity(spec, slot), as a bit mask of CPUs 0..62
 * (0 when it could not be read); -1 from the parent when the child failed. */
static long long affinity_after(const char *spec, int slot)
{
    int fds[2];
    if (pipe(fds) != 0)
        return -1;
    fflush(stdout);
    pid_t pid = fork();
    if (pid == 0) {
        close(fds[0]);
        hy_core_conf_t c;
        memset(&c, 0, sizeof(c));
        c.cpu_affinity = (hy_str_t){(char *)spec, strlen(spec)};
        hy_limits_set_affinity(&c, slot, 4);
        cpu_set_t set;
        long long mask = 0;
        if (sched_getaffinity(0, sizeof(set), &set) == 0)
            for (int i = 0; i < 63; i++)
                if (CPU_ISSET(i, &set))
                    mask |= 1LL << i;
        ssize_t w = write(fds[1], &mask, sizeof(mask));
        HY_COVERAGE_FLUSH();
        _exit(w == (ssize_t)sizeof(mask) ? 0 : 1);
    }
    close(fds[1]);
    long long mask = -1;
    if (read(fds[0], &mask, sizeof(mask)) != (ssize_t)sizeof(mask))
        mask = -1;
    close(fds[0]);
    int st = 0;
    waitpid(pid, &st, 0);
    return WIFEXITED(st) && WEXITSTATUS(st) == 0 ? mask : -1;
}

static long long allowed_mask(void)
{
    long long m = 0;
    for (int i = 0; i < 63; i++)
        if (CPU_ISSET(i, &allowed))
            m |= 1LL << i;
    return m;
}

/* A mask string with CPU `cpu` set (rightmost character is CPU 0). */
static const char *mask_for(char *buf, int cpu)
{
    int n = cpu + 1;
    for (int i = 0; i < n; i++)
        buf[i] = i == n - 1 - cpu ? '1' : '0';
    buf[n] = '\0';
    return buf;
}

static void test_none(void)
{
    is_int(affinity_after("", 0), allowed_mask()); /* no worker_cpu_affinity: unchanged */
}

static void test_masks(void)
{
    char a[80], b[80], spec[200];
    mask_for(a, first_cpu);
    is_int(affinity_after(a, 0), 1LL << first_cpu);
    is_int(affinity_after(a, 3), 1LL << first_cpu); /* the last mask repeats for the workers after it */
    if (second_cpu < 0)
        return;
    mask_for(b, second_cpu);
    snprintf(spec, sizeof(spec), "%s %s", a, b);
    is_int(affinity_after(spec, 0), 1LL << first_cpu);
    is_int(affinity_after(spec, 1), 1LL << second_cpu);
    is_int(affinity_after(spec, 2), 1LL << second_cpu);
    /* both CPUs in one mask, the leading zeros of a longer mask ignored */
    snprintf(spec, sizeof(spec), "000%s", a);
    spec[strlen(spec) - 1 - (size_t)second_cpu] = '1';
    is_int(affinity_after(spec, 0), (1LL << first_cpu) | (1LL << second_cpu));
}

static void test_empty_mask_changes_nothing(void)
{
    is_int(affinity_after("0000", 0), allowed_mask()); /* no CPU named: left as it was */
}

static void test_auto(void)
{
    is_int(affinity_after("auto", 0), 1LL << first_cpu);
    if (second_cpu < 0)
        return;
    is_int(affinity_after("auto", 1), 1LL << second_cpu);
    int n = CPU_COUNT(&allowed);
    is_int(affinity_after("auto", n), 1LL << first_cpu); /* wraps around */
    char m[80], spec[100];
    snprintf(spec, sizeof(spec), "auto %s", mask_for(m, second_cpu));
    is_int(affinity_after(spec, 0), 1LL << second_cpu); /* only the CPUs of the mask */
    is_int(affinity_after(spec, 1), 1LL << second_cpu);
    is_int(affinity_after("auto 0", 0), allowed_mask()); /* a mask naming no allowed CPU: unchanged */
}

int main(void)
{
    if (sched_getaffinity(0, sizeof(allowed), &allowed) != 0)
        return done_testing();
    for (int i = 0; i < 62; i++)
        if (CPU_ISSET(i, &allowed)) {
            if (first_cpu < 0)
                first_cpu = i;
            else if (second_cpu < 0)
                second_cpu = i;
        }
    if (first_cpu < 0)
        return done_testing();
    subtest("no worker_cpu_affinity", test_none);
    subtest("bit masks per worker", test_masks);
    subtest("a mask without a CPU", test_empty_mask_changes_nothing);
    subtest("auto, auto with a mask", test_auto);
    return done_testing();
}
