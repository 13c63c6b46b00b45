/* limits_test.c — the process limits and per-worker settings that need no particular machine: reading a
 * number from a file, worker counts and worker_connections, dropping privileges (in forked children: it
 * cannot be undone), the worker ids the master gives its log files. */
#include <pwd.h>
#include <grp.h>
#include <stdlib.h>
#include <unistd.h>
#include <sys/wait.h>
#include "../harness.h"
#include "core/coverage.h" /* a forked child flushes its counters before _exit */
#include "process/limits.h"

static hy_core_conf_t conf(void)
{
    hy_core_conf_t c;
    memset(&c, 0, sizeof(c));
    c.worker_processes = c.worker_connections = c.worker_rlimit_nofile = -1;
    return c;
}

static void test_read_int(void)
{
    char path[] = "/tmp/hy_limits_test_XXXXXX";
    int fd = mkstemp(path);
    ok(fd >= 0);
    ok(write(fd, "4096\n", 5) == 5);
    close(fd);
    is_int(hy_limits_read_int(path), 4096);
    FILE *f = fopen(path, "w");
    fputs("max\n", f);
    fclose(f);
    is_int(hy_limits_read_int(path), -1); /* not a number */
    unlink(path);
    is_int(hy_limits_read_int(path), -1); /* no file */
}

static void test_workers_and_connections(void)
{
    hy_core_conf_t c = conf();
    const char *why = NULL;
    c.worker_processes = 3;
    is_int(hy_limits_workers(&c, &why), 3);
    is_str(why, "worker_processes");
    c.worker_processes = 0; /* auto */
    int n = hy_limits_workers(&c, &why);
    ok(n >= 1 && n <= hy_limits_cpus_allowed());
    ok(strncmp(why, "auto: ", 6) == 0);
    is_int(hy_limits_worker_connections(&c, 1024), 1024 - 32); /* derived from the open-file limit */
    is_int(hy_limits_worker_connections(&c, 50), 64);          /* never below 64 */
    c.worker_connections = 512;
    is_int(hy_limits_worker_connections(&c, 100000), 512);     /* as configured */
    c.worker_rlimit_nofile = 2048;
    is_int(hy_limits_raise_nofile(&c), 2048);
}

static void put(const char *path, const char *text)
{
    FILE *f = fopen(path, "w");
    if (f != NULL) {
        fputs(text, f);
        fclose(f);
    }
}

static void test_cgroup_files(void)
{
    char path[] = "/tmp/hy_limits_cg_XXXXXX";
    int fd = mkstemp(path);
    ok(fd >= 0);
    close(fd);
    put(path, "max 100000\n");
    is_int(hy_limits_cgroup_cpus_at(path), 0);      /* unlimited */
    put(path, "150000 100000\n");
    is_int(hy_limits_cgroup_cpus_at(path), 2);      /* 1.5 CPUs, rounded up */
    put(path, "100000 100000\n");
    is_int(hy_limits_cgroup_cpus_at(path), 1);
    put(path, "0 100000\n");
    is_int(hy_limits_cgroup_cpus_at(path), 0);      /* nonsense quota */
    put(path, "50000\n");
    is_int(hy_limits_cgroup_cpus_at(path), 0);      /* no period */
    put(path, "max\n");
    is_int(hy_limits_cgroup_memory_at(path), 0);
    put(path, "536870912\n");
    is_int(hy_limits_cgroup_memory_at(path), 536870912);
    put(path, "");
    is_int(hy_limits_cgroup_memory_at(path), 0);
    unlink(path);
    is_int(hy_limits_cgroup_cpus_at(path), 0);      /* no cgroup v2 */
    is_int(hy_limits_cgroup_memory_at(path), 0);
}

/* run fn in a child; its exit status */
static int in_child(int (*fn)(void))
{
    fflush(stdout);
    pid_t pid = fork();
    if (pid == 0) {
        int rc = fn();
        HY_COVERAGE_FLUSH();
        _exit(rc);
    }
    int st = 0;
    waitpid(pid, &st, 0);
    return WIFEXITED(st) ? WEXITSTATUS(st) : 99;
}

static int drop_to_nobody(void)
{
    hy_core_conf_t c = conf();
    if (hy_limits_drop_privileges(&c) != 0)
        return 1;
    struct passwd *pw = getpwnam("nobody");
    return pw != NULL && getuid() == pw->pw_uid && geteuid() == pw->pw_uid ? 0 : 2;
}

static int drop_unknown_user(void)
{
    hy_core_conf_t c = conf();
    c.user = HY_STR("hy-no-such-user");
    return hy_limits_drop_privileges(&c) == -1 && getuid() == 0 ? 0 : 1;
}

static int drop_unknown_group(void)
{
    hy_core_conf_t c = conf();
    c.user = HY_STR("nobody");
    c.group = HY_STR("hy-no-such-group");
    return hy_limits_drop_privileges(&c) == -1 && getuid() == 0 ? 0 : 1;
}

static int drop_with_group(void)
{
    hy_core_conf_t c = conf();
    c.user = HY_STR("nobody");
    c.group = HY_STR("nogroup");
    struct group *gr = getgrnam("nogroup");
    if (gr == NULL || hy_limits_drop_privileges(&c) != 0)
        return 1;
    return getgid() == gr->gr_gid ? 0 : 2;
}

static void test_drop_privileges(void)
{
    if (geteuid() != 0 || getpwnam("nobody") == NULL) {
        hy_core_conf_t c = conf();
        is_int(hy_limits_drop_privileges(&c), 0); /* not root: nothing to drop */
        return;
    }
    is_int(in_child(drop_to_nobody), 0);
    is_int(in_child(drop_unknown_user), 0);
    is_int(in_child(drop_unknown_group), 0);
    if (getgrnam("nogroup") != NULL)
        is_int(in_child(drop_with_group), 0);
}

static void test_worker_ids(void)
{
    hy_core_conf_t c = conf();
    int uid = -5, gid = -5;
    if (geteuid() != 0) {
        ok(!hy_limits_worker_ids(&c, &uid, &gid));
        return;
    }
    struct passwd *pw = getpwnam("nobody");
    if (pw == NULL)
        return;
    ok(hy_limits_worker_ids(&c, &uid, &gid));
    is_int(uid, pw->pw_uid);
    c.user = HY_STR("hy-no-such-user");
    ok(!hy_limits_worker_ids(&c, &uid, &gid));
}

int main(void)
{
    subtest("hy_limits_read_int", test_read_int);
    subtest("workers, worker_connections, RLIMIT_NOFILE", test_workers_and_connections);
    subtest("cgroup v2 cpu.max and memory.max", test_cgroup_files);
    subtest("dropping privileges (forked children)", test_drop_privileges);
    subtest("worker ids for log ownership", test_worker_ids);
    return done_testing();
}
