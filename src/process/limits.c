/* limits.c — machine limits and per-worker process settings. */
#include <errno.h>
#include <grp.h>
#include <pwd.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/resource.h>
#include "limits.h"
#include "../core/log.h"

int64_t hy_limits_read_int(const char *path)
{
    FILE *f = fopen(path, "re");
    if (f == NULL)
        return -1;
    long long v = -1;
    if (fscanf(f, "%lld", &v) != 1)
        v = -1;
    fclose(f);
    return v;
}

int64_t hy_limits_raise_nofile(const hy_core_conf_t *core)
{
    struct rlimit rl;
    if (getrlimit(RLIMIT_NOFILE, &rl) != 0)
        return 1024;
    rlim_t want = core->worker_rlimit_nofile > 0 ? (rlim_t)core->worker_rlimit_nofile : rl.rlim_max;
    struct rlimit nr = {.rlim_cur = want, .rlim_max = rl.rlim_max > want ? rl.rlim_max : want};
    if (setrlimit(RLIMIT_NOFILE, &nr) != 0) { /* not root: only up to the hard limit */
        nr.rlim_max = rl.rlim_max;
        nr.rlim_cur = want < rl.rlim_max ? want : rl.rlim_max;
        if (setrlimit(RLIMIT_NOFILE, &nr) != 0)
            hy_log(HY_LOG_WARN, "setrlimit(RLIMIT_NOFILE, %llu) failed (%d: %s)", (unsigned long long)want, errno,
                   strerror(errno));
    }
    getrlimit(RLIMIT_NOFILE, &rl);
    return (int64_t)rl.rlim_cur;
}

int hy_limits_cpus_allowed(void)
{
    cpu_set_t set;
    if (sched_getaffinity(0, sizeof(set), &set) != 0)
        return (int)sysconf(_SC_NPROCESSORS_ONLN);
    return CPU_COUNT(&set);
}

int hy_limits_cgroup_cpus(void)
{
    return hy_limits_cgroup_cpus_at("/sys/fs/cgroup/cpu.max");
}

int hy_limits_cgroup_cpus_at(const char *path)
{
    FILE *f = fopen(path, "re");
    if (f == NULL)
        return 0;
    char quota[32] = "";
    long long period = 0;
    int n = fscanf(f, "%31s %lld", quota, &period);
    fclose(f);
    if (n != 2 || strcmp(quota, "max") == 0 || period <= 0)
        return 0;
    long long q = atoll(quota);
    if (q <= 0)
        return 0;
    return (int)((q + period - 1) / period);
}

int64_t hy_limits_cgroup_memory(void)
{
    return hy_limits_cgroup_memory_at("/sys/fs/cgroup/memory.max");
}

int64_t hy_limits_cgroup_memory_at(const char *path)
{
    FILE *f = fopen(path, "re");
    if (f == NULL)
        return 0;
    char v[32] = "";
    int n = fscanf(f, "%31s", v);
    fclose(f);
    if (n != 1 || strcmp(v, "max") == 0)
        return 0;
    return atoll(v);
}

int hy_limits_workers(const hy_core_conf_t *core, const char **why)
{
    static char buf[160];
    if (core->worker_processes > 0) {
        *why = "worker_processes";
        return (int)core->worker_processes;
    }
    int cpus = hy_limits_cpus_allowed();
    int quota = hy_limits_cgroup_cpus();
    if (cpus < 1)
        cpus = 1;
    if (quota > 0 && quota < cpus) {
        snprintf(buf, sizeof(buf), "auto: %d CPUs allowed, capped by the cgroup cpu.max quota to %d", cpus, quota);
        *why = buf;
        return quota;
    }
    snprintf(buf, sizeof(buf), "auto: %d CPU%s in the affinity mask%s", cpus, cpus == 1 ? "" : "s",
             quota > 0 ? " (cgroup quota allows as many)" : "");
    *why = buf;
    return cpus;
}

int64_t hy_limits_worker_connections(const hy_core_conf_t *core, int64_t nofile)
{
    if (core->worker_connections > 0)
        return core->worker_connections;
    int64_t wc = nofile - 32; /* a reserve for logs, files being served, listeners */
    return wc < 64 ? 64 : wc;
}

void hy_limits_set_affinity(const hy_core_conf_t *core, int slot, int n)
{
    if (core->cpu_affinity.len == 0)
        return;
    cpu_set_t set;
    CPU_ZERO(&set);
    const char *a = core->cpu_affinity.ptr;
    if (strncmp(a, "auto", 4) == 0) {
        /* auto [mask]: worker i on the i-th allowed CPU (of the mask when given) */
        cpu_set_t allowed;
        if (sched_getaffinity(0, sizeof(allowed), &allowed) != 0)
            return;
        const char *mask = a[4] == ' ' ? a + 5 : NULL;
        int cpus[CPU_SETSIZE], nc = 0;
        size_t ml = mask ? strlen(mask) : 0;
        for (int c = 0; c < CPU_SETSIZE; c++) {
            if (!CPU_ISSET(c, &allowed))
                continue;
            if (mask && (size_t)c < ml && mask[ml - 1 - (size_t)c] != '1')
                continue;
            if (mask && (size_t)c >= ml)
                continue;
            cpus[nc++] = c;
        }
        if (nc == 0)
            return;
        CPU_SET(cpus[slot % nc], &set);
    } else {
        /* one bit mask per worker, space separated; the last repeats (nginx) */
        const char *p = a;
        for (int i = 0; i < slot; i++) {
            const char *sp = strchr(p, ' ');
            if (sp == NULL)
                break;
            p = sp + 1;
        }
        size_t len = strcspn(p, " ");
        for (size_t i = 0; i < len; i++)
            if (p[len - 1 - i] == '1' && i < CPU_SETSIZE)
                CPU_SET((int)i, &set);
    }
    (void)n;
    if (CPU_COUNT(&set) > 0 && sched_setaffinity(0, sizeof(set), &set) != 0)
        hy_log(HY_LOG_ALERT, "sched_setaffinity() failed (%d: %s)", errno, strerror(errno));
}

bool hy_limits_worker_ids(const hy_core_conf_t *core, int *uid, int *gid)
{
    if (geteuid() != 0)
        return false;
    const char *user = core->user.ptr ? core->user.ptr : "nobody";
    struct passwd *pw = getpwnam(user);
    if (pw == NULL)
        return false;
    *uid = (int)pw->pw_uid;
    *gid = (int)pw->pw_gid;
    struct group *gr = getgrnam(core->group.ptr ? core->group.ptr : "nogroup");
    if (gr)
        *gid = (int)gr->gr_gid;
    return true;
}

int hy_limits_drop_privileges(const hy_core_conf_t *core)
{
    if (geteuid() != 0)
        return 0;
    const char *user = core->user.ptr ? core->user.ptr : "nobody";
    const char *group = core->group.ptr ? core->group.ptr : NULL;
    struct passwd *pw = getpwnam(user);
    if (pw == NULL) {
        hy_log(HY_LOG_EMERG, "getpwnam(\"%s\") failed", user);
        return -1;
    }
    gid_t gid = pw->pw_gid;
    if (group) {
        struct group *gr = getgrnam(group);
        if (gr == NULL) {
            hy_log(HY_LOG_EMERG, "getgrnam(\"%s\") failed", group);
            return -1;
        }
        gid = gr->gr_gid;
    } else {
        struct group *gr = getgrnam("nogroup"); /* nginx's default group on Debian is nogroup */
        if (gr)
            gid = gr->gr_gid;
    }
    if (setgid(gid) != 0 || initgroups(user, gid) != 0 || setuid(pw->pw_uid) != 0) {
        hy_log(HY_LOG_EMERG, "dropping privileges to %s failed (%d: %s)", user, errno, strerror(errno));
        return -1;
    }
    return 0;
}
