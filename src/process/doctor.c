/* doctor.c — `hayate --doctor`: what the configuration asks for, what this machine allows, and for every gap
 * the exact command or directive that closes it. Exit status 0 when nothing limits the configured capacity. */
#include <dirent.h>
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <netinet/in.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include "process.h"
#include "perms.h"
#include "core_conf.h"
#include "limits.h"
#include "../http/core.h"
#include "../event/listen.h"

static int problems;

static void fact(const char *what, const char *fmt, ...) HY_PRINTF(2, 3);
static void fact(const char *what, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    printf("  %-28s ", what);
    vprintf(fmt, ap);
    printf("\n");
    va_end(ap);
}

static void finding(bool limits, const char *fmt, ...) HY_PRINTF(2, 3);
static void finding(bool limits, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    printf("  %s ", limits ? "LIMIT:" : "note: ");
    vprintf(fmt, ap);
    printf("\n");
    va_end(ap);
    if (limits)
        problems++;
}

/* ListenOverflows and ListenDrops from /proc/net/netstat (TcpExt). */
static void listen_counters(long long *overflows, long long *drops)
{
    *overflows = *drops = -1;
    FILE *f = fopen("/proc/net/netstat", "re");
    if (f == NULL)
        return;
    char names[4096], values[4096];
    while (fgets(names, sizeof(names), f) && fgets(values, sizeof(values), f)) {
        if (strncmp(names, "TcpExt:", 7) != 0)
            continue;
        char *ns = NULL, *vs = NULL;
        char *n = strtok_r(names, " \n", &ns), *v = strtok_r(values, " \n", &vs);
        while (n && v) {
            if (strcmp(n, "ListenOverflows") == 0)
                *overflows = atoll(v);
            else if (strcmp(n, "ListenDrops") == 0)
                *drops = atoll(v);
            n = strtok_r(NULL, " \n", &ns);
            v = strtok_r(NULL, " \n", &vs);
        }
    }
    fclose(f);
}

/* Would binding this address fail the way the real start would? 0 or an errno. The socket is bound, never
 * listening, so a running hayate's SO_REUSEPORT group gets no connection from it. */
static int bind_error(const hy_listen_spec_t *spec)
{
    int fd = socket(spec->addr.ss_family, SOCK_STREAM | SOCK_CLOEXEC, 0);
    if (fd < 0)
        return errno;
    int one = 1;
    setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
    setsockopt(fd, SOL_SOCKET, SO_REUSEPORT, &one, sizeof(one));
    if (spec->addr.ss_family == AF_INET6) {
        int v6only = spec->ipv6only != 0;
        setsockopt(fd, IPPROTO_IPV6, IPV6_V6ONLY, &v6only, sizeof(v6only));
    }
    int rc = bind(fd, (const struct sockaddr *)&spec->addr, spec->addr_len) == 0 ? 0 : errno;
    close(fd);
    return rc;
}

/* The inode of a listening TCP socket on `port` from /proc/net/tcp{,6}, or 0. */
static unsigned long listening_inode(int port)
{
    static const char *const files[] = {"/proc/net/tcp", "/proc/net/tcp6"};
    for (size_t i = 0; i < 2; i++) {
        FILE *f = fopen(files[i], "re");
        if (f == NULL)
            continue;
        char line[512];
        unsigned long found = 0;
        while (!found && fgets(line, sizeof(line), f)) {
            char local[64];
            unsigned st;
            unsigned long inode;
            if (sscanf(line, " %*d: %63s %*s %x %*s %*s %*s %*s %*s %lu", local, &st, &inode) != 3 || st != 0x0A)
                continue;
            char *colon = strrchr(local, ':');
            if (colon && strtol(colon + 1, NULL, 16) == port)
                found = inode;
        }
        fclose(f);
        if (found)
            return found;
    }
    return 0;
}

/* "pid 1234 (python3)" for the process holding socket `inode`, when /proc lets this user see it. */
static bool socket_holder(unsigned long inode, char *out, size_t size)
{
    char want[64];
    snprintf(want, sizeof(want), "socket:[%lu]", inode);
    DIR *proc = opendir("/proc");
    if (proc == NULL)
        return false;
    struct dirent *pe;
    bool found = false;
    while (!found && (pe = readdir(proc)) != NULL) {
        if (pe->d_name[0] < '1' || pe->d_name[0] > '9')
            continue;
        char dir[300];
        snprintf(dir, sizeof(dir), "/proc/%s/fd", pe->d_name);
        DIR *fds = opendir(dir);
        if (fds == NULL)
            continue;
        struct dirent *fe;
        while (!found && (fe = readdir(fds)) != NULL) {
            char link[600], target[64];
            snprintf(link, sizeof(link), "%s/%s", dir, fe->d_name);
            ssize_t n = readlink(link, target, sizeof(target) - 1);
            if (n <= 0)
                continue;
            target[n] = '\0';
            found = strcmp(target, want) == 0;
        }
        closedir(fds);
        if (found) {
            char comm_path[300], comm[64] = "?";
            snprintf(comm_path, sizeof(comm_path), "/proc/%s/comm", pe->d_name);
            FILE *f = fopen(comm_path, "re");
            if (f) {
                if (fgets(comm, sizeof(comm), f))
                    comm[strcspn(comm, "\n")] = '\0';
                fclose(f);
            }
            snprintf(out, size, "pid %.16s (%.32s)", pe->d_name, comm);
        }
    }
    closedir(proc);
    return found;
}

static int spec_port(const hy_listen_spec_t *spec)
{
    if (spec->addr.ss_family == AF_INET)
        return ntohs(((const struct sockaddr_in *)&spec->addr)->sin_port);
    if (spec->addr.ss_family == AF_INET6)
        return ntohs(((const struct sockaddr_in6 *)&spec->addr)->sin6_port);
    return -1;
}

static void on_perm_problem(void *ctx, const char *msg)
{
    finding(true, "%s", msg);
}

int hy_doctor(hy_cycle_t *cycle)
{
    hy_core_conf_t *core = hy_core_conf(cycle);
    struct rlimit rl;
    getrlimit(RLIMIT_NOFILE, &rl);
    const char *why;
    int workers = core->master_process ? hy_limits_workers(core, &why) : 1;
    if (!core->master_process)
        why = "master_process off";
    int64_t soft = (int64_t)rl.rlim_cur, hard = (int64_t)rl.rlim_max;
    /* what the server will really get: it raises the soft limit to worker_rlimit_nofile (or the hard limit);
     * only root can go above the hard limit */
    bool root = geteuid() == 0;
    int64_t nofile = core->worker_rlimit_nofile > 0 ? core->worker_rlimit_nofile : hard;
    if (!root && nofile > hard)
        nofile = hard;
    int64_t wc = hy_limits_worker_connections(core, nofile);
    int64_t need = wc + 32;
    printf("hayate doctor — configuration %s\n\n", cycle->conf_file);
    printf("workers\n");
    fact("worker processes", "%d (%s)", workers, why);
    fact("CPUs allowed", "%d", hy_limits_cpus_allowed());
    int quota = hy_limits_cgroup_cpus();
    fact("cgroup cpu.max", quota ? "%d CPU(s)" : "unlimited", quota);
    int64_t mem = hy_limits_cgroup_memory();
    if (mem)
        fact("cgroup memory.max", "%lld MiB", (long long)(mem >> 20));
    else
        fact("cgroup memory.max", "unlimited");

    printf("\nconnections\n");
    fact("worker_connections", "%lld per worker%s, %lld in all", (long long)wc,
         core->worker_connections > 0 ? "" : " (default: what the open-file limit allows)", (long long)wc * workers);
    fact("open files (RLIMIT_NOFILE)", "soft %lld, hard %lld for this user (uid %u); hayate %s %lld at start",
         (long long)soft, (long long)hard, (unsigned)geteuid(), nofile > soft ? "raises the soft limit to" :
         "keeps", (long long)nofile);
    if (!root && core->worker_rlimit_nofile > hard)
        finding(true, "worker_rlimit_nofile %lld is above this user's hard limit %lld and only root may raise "
                "it: start as root, or raise the hard limit (`ulimit -Hn %lld`, LimitNOFILE=%lld in a systemd "
                "unit, /etc/security/limits.conf)", (long long)core->worker_rlimit_nofile, (long long)hard,
                (long long)core->worker_rlimit_nofile, (long long)core->worker_rlimit_nofile);
    if (core->worker_connections > 0 && need > nofile)
        finding(true, "worker_connections %lld needs about %lld open files per worker but the limit is %lld: raise it "
                "with `worker_rlimit_nofile %lld;` (as root) or `ulimit -Hn %lld` before starting, or lower "
                "worker_connections", (long long)wc, (long long)need, (long long)nofile, (long long)need,
                (long long)need);
    if (nofile < 10000 + 32)
        finding(true, "the open-file limit (%lld) allows fewer than 10,000 concurrent connections per worker: "
                "`worker_rlimit_nofile 65536;` (as root), or raise the hard limit (`ulimit -Hn 65536`, "
                "LimitNOFILE=65536 in a systemd unit)", (long long)nofile);
    int64_t file_max = hy_limits_read_int("/proc/sys/fs/file-max");
    int64_t nr_open = hy_limits_read_int("/proc/sys/fs/nr_open");
    fact("fs.file-max", "%lld", (long long)file_max);
    fact("fs.nr_open", "%lld", (long long)nr_open);
    if (file_max > 0 && file_max < wc * workers + 1024)
        finding(true, "fs.file-max (%lld) is below what %d workers x %lld connections need: "
                "`sysctl -w fs.file-max=%lld`", (long long)file_max, workers, (long long)wc,
                (long long)(wc * workers * 2));
    if (core->worker_rlimit_nofile > 0 && nr_open > 0 && core->worker_rlimit_nofile > nr_open)
        finding(true, "worker_rlimit_nofile %lld is above fs.nr_open (%lld): `sysctl -w fs.nr_open=%lld`",
                (long long)core->worker_rlimit_nofile, (long long)nr_open, (long long)core->worker_rlimit_nofile);

    printf("\nlisten queues\n");
    int somaxconn = hy_listen_somaxconn();
    int64_t syn_backlog = hy_limits_read_int("/proc/sys/net/ipv4/tcp_max_syn_backlog");
    fact("net.core.somaxconn", "%d", somaxconn);
    fact("net.ipv4.tcp_max_syn_backlog", "%lld", (long long)syn_backlog);
    hy_http_main_conf_t *m = hy_http_main(cycle);
    if (m) {
        hy_http_addr_t *a = m->addrs->elts;
        for (size_t i = 0; i < m->addrs->nelts; i++) {
            int want = a[i].spec.backlog > 0 ? a[i].spec.backlog : somaxconn;
            fact(a[i].spec.text, "backlog %d%s, one queue per worker%s", want > somaxconn ? somaxconn : want,
                 a[i].spec.backlog > 0 ? "" : " (somaxconn)", a[i].spec.is_unix ? " (unix: one shared queue)" : "");
            if (want > somaxconn)
                finding(true, "listen %s asks for backlog=%d but net.core.somaxconn caps it at %d: "
                        "`sysctl -w net.core.somaxconn=%d`", a[i].spec.text, want, somaxconn, want);
            if (a[i].via || a[i].spec.is_unix)
                continue;
            int err = bind_error(&a[i].spec);
            char who[128] = "";
            unsigned long inode = err == EADDRINUSE ? listening_inode(spec_port(&a[i].spec)) : 0;
            bool known = inode && socket_holder(inode, who, sizeof(who));
            if (err == EADDRINUSE)
                finding(true, "listen %s: the address is already in use%s%s, so the start would fail with "
                        "EADDRINUSE: stop it, or choose another address", a[i].spec.text,
                        known ? " by " : " (by a process this user cannot see)", who);
            else if (err == EACCES)
                finding(true, "listen %s: this user may not bind ports below 1024: start as root, or grant "
                        "CAP_NET_BIND_SERVICE (AmbientCapabilities= in a systemd unit)", a[i].spec.text);
            else if (err != 0)
                finding(true, "listen %s: bind() failed (%d: %s)", a[i].spec.text, err, strerror(err));
        }
    }
    if (somaxconn < 1024)
        finding(true, "net.core.somaxconn %d overflows under bursts of new connections: "
                "`sysctl -w net.core.somaxconn=4096`", somaxconn);
    if (syn_backlog > 0 && syn_backlog < somaxconn)
        finding(false, "net.ipv4.tcp_max_syn_backlog (%lld) is below somaxconn (%d): "
                "`sysctl -w net.ipv4.tcp_max_syn_backlog=%d`", (long long)syn_backlog, somaxconn, somaxconn);
    long long o1, d1, o2, d2;
    listen_counters(&o1, &d1);
    sleep(1);
    listen_counters(&o2, &d2);
    fact("ListenOverflows", "%lld (%+lld in the last second)", o2, o1 >= 0 ? o2 - o1 : 0);
    fact("ListenDrops", "%lld (%+lld in the last second)", d2, d1 >= 0 ? d2 - d1 : 0);
    printf("  (system-wide counters since boot: ListenOverflows counts connections the kernel dropped because a\n"
           "   listening socket's accept queue was full, i.e. the server accepted too slowly for the backlog;\n"
           "   ListenDrops counts those and every other connection dropped before accept. A count that grows\n"
           "   while hayate runs means the backlog or the workers are too small.)\n");
    if (o1 >= 0 && o2 > o1)
        finding(true, "listen queues are overflowing right now: raise net.core.somaxconn and the listen backlog, "
                "or add workers");

    printf("\npermissions\n");
    if (hy_perms_check(cycle, !core->master_process, on_perm_problem, NULL) == 0)
        fact("document roots, log files", "reachable by the workers' user");
    printf("\n%s\n", problems ? "result: something limits the configured capacity (see LIMIT lines)"
                              : "result: nothing on this machine limits the configured capacity");
    return problems ? 1 : 0;
}
