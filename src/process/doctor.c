/* doctor.c — `hayate --doctor`: what the configuration asks for, what this machine allows, and for every gap
 * the exact command or directive that closes it. Exit status 0 when nothing limits the configured capacity. */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/resource.h>
#include "process.h"
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
    int64_t nofile = core->worker_rlimit_nofile > 0 ? core->worker_rlimit_nofile : hard;
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
    fact("open files (RLIMIT_NOFILE)", "soft %lld, hard %lld; hayate raises the soft limit to %lld at start",
         (long long)soft, (long long)hard, (long long)(nofile < hard || geteuid() == 0 ? nofile : hard));
    if (core->worker_connections > 0 && need > nofile)
        finding(true, "worker_connections %lld needs about %lld open files per worker but the limit is %lld: raise it "
                "with `worker_rlimit_nofile %lld;` (as root) or `ulimit -Hn %lld` before starting, or lower "
                "worker_connections", (long long)wc, (long long)need, (long long)nofile, (long long)need,
                (long long)need);
    if (nofile < 10000 + 32)
        finding(true, "the open-file limit (%lld) allows fewer than 10,000 concurrent connections per worker: "
                "`worker_rlimit_nofile 65536;` (as root), or raise the hard limit (`ulimit -Hn 65536`, "
                "LimitNOFILE=65536 in a systemd unit)", (long long)nofile);
    finding(false, "a proxied request holds two descriptors (client + upstream): plan worker_connections x 2 "
            "once proxying");
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
    if (o1 >= 0 && o2 > o1)
        finding(true, "listen queues are overflowing right now: raise net.core.somaxconn and the listen backlog, "
                "or add workers");

    printf("\nupstream ports\n");
    FILE *f = fopen("/proc/sys/net/ipv4/ip_local_port_range", "re");
    int lo = 0, hi = 0;
    if (f) {
        if (fscanf(f, "%d %d", &lo, &hi) != 2)
            lo = hi = 0;
        fclose(f);
    }
    fact("net.ipv4.ip_local_port_range", "%d-%d (%d ports per upstream address)", lo, hi, hi - lo + 1);
    finding(false, "no upstreams are configured yet; with proxying, each upstream address allows about %d "
            "concurrent connections without keep-alive reuse", hi - lo + 1);

    printf("\n%s\n", problems ? "result: something limits the configured capacity (see LIMIT lines)"
                              : "result: nothing on this machine limits the configured capacity");
    return problems ? 1 : 0;
}
