/* serve.c — from a loaded generation to a running server: logs, limits, listening sockets, daemon, pid file,
 * then the master (master_process on) or a single worker (off). */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/stat.h>
#include "process.h"
#include "core_conf.h"
#include "limits.h"
#include "lset.h"
#include "master.h"
#include "worker.h"
#include "upgrade.h"
#include "perms.h"
#include "../core/log.h"
#include "../event/listen.h"
#include "../conf/lexer.h"
#include "../conf/zone.h"
#include "../core/stats.h"

static int daemonize(void)
{
    pid_t pid = fork();
    if (pid < 0) {
        hy_log_stderr(HY_LOG_EMERG, "fork() failed (%d: %s)", errno, strerror(errno));
        return -1;
    }
    if (pid > 0)
        _exit(0);
    setsid();
    umask(0022);
    int fd = open("/dev/null", O_RDWR);
    if (fd >= 0) {
        dup2(fd, STDIN_FILENO);
        dup2(fd, STDOUT_FILENO);
        dup2(fd, STDERR_FILENO);
        if (fd > STDERR_FILENO)
            close(fd);
    }
    return 0;
}

static void warn_perm(void *ctx, const char *msg)
{
    hy_log(HY_LOG_WARN, "%s", msg);
}

int hy_serve(hy_cycle_t *cycle, const hy_opts_t *opts)
{
    if (hy_cycle_open_logs(cycle) != 0)
        return 1;
    if (hy_zones_map(cycle) != 0) /* before any fork: workers inherit the mappings */
        return 1;
    hy_core_conf_t *core = hy_core_conf(cycle);
    int64_t nofile = hy_limits_raise_nofile(core);
    bool single = !core->master_process;
    if (!single)
        hy_limits_worker_ids(core, &hy_log_owner_uid, &hy_log_owner_gid);
    const char *why = "master_process off";
    int n = single ? 1 : hy_limits_workers(core, &why);
    sigset_t sigs; /* blocked before the first listening socket: see hy_process_signal_set */
    hy_process_signal_set(&sigs);
    sigprocmask(SIG_BLOCK, &sigs, NULL);
    hy_lset_t *inherited = hy_upgrade_inherited(cycle); /* USR2 of an old master: its sockets */
    hy_lset_t *lset = hy_lset_open(cycle, (size_t)n, inherited);
    hy_lset_free(inherited, false); /* what the configuration did not take over */
    if (lset == NULL)
        return 1;
    /* a new binary started by USR2 stays where the old master is (nginx: no daemon() when inherited) */
    if (core->daemon && !hy_upgrade_was_inherited() && daemonize() != 0)
        return 1;
    if (hy_process_write_pid(cycle) != 0)
        return 1;
    /* the counters' segment: made once, before any fork, kept across reloads (a new binary makes its own) */
    int rc = hy_stats_create((uint64_t)n);
    if (rc != 0)
        hy_log(HY_LOG_ALERT, "mmap() of the status counters failed (%d: %s): counters are per process", -rc,
               strerror(-rc));
    if (single)
        hy_stats_attach(0);
    hy_log_set_targets(cycle->error_logs->elts, cycle->error_logs->nelts);
    hy_conf_log_hook = NULL;
    int64_t wc = hy_limits_worker_connections(core, nofile);
    hy_log(HY_LOG_NOTICE, "hayate/%s, %s", HY_VERSION, single ? "single process" : "master process");
    if (hy_upgrade_was_inherited())
        hy_log(HY_LOG_NOTICE, "using %zu inherited listening socket%s (binary upgrade)", hy_upgrade_num_inherited(),
               hy_upgrade_num_inherited() == 1 ? "" : "s");
    hy_log(HY_LOG_NOTICE, "using %d worker process%s (%s)", n, n == 1 ? "" : "es", why);
    hy_log(HY_LOG_NOTICE, "limits: open files %lld per process, worker_connections %lld%s, listen backlog %d "
           "(net.core.somaxconn), %zu listening address%s", (long long)nofile, (long long)wc,
           core->worker_connections > 0 ? "" : " (from the open-file limit)", hy_listen_somaxconn(),
           lset->num_addrs, lset->num_addrs == 1 ? "" : "es");
    if (wc > nofile)
        hy_log(HY_LOG_WARN, "%lld worker_connections exceed open file resource limit: %lld", (long long)wc,
               (long long)nofile);
    hy_perms_check(cycle, single, warn_perm, NULL); /* a root the workers cannot read: say so now, not per 403 */
    if (single)
        return hy_worker_run(cycle, lset, 0, 1, true, opts);
    return hy_master_run(cycle, lset, n, opts);
}
