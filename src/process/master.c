/* master.c — the master process (nginx's model): it owns the configuration generations and the listening
 * sockets, forks workers, re-forks one that dies, reloads on HUP (new workers on the new generation, then QUIT
 * to the old ones; a broken config leaves everything as it was), and never serves a request itself. */
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <sys/signalfd.h>
#include <sys/wait.h>
#include "master.h"
#include "../core/coverage.h"
#include "worker.h"
#include "limits.h"
#include "title.h"
#include "upgrade.h"
#include "notify.h"
#include "core_conf.h"
#include "../core/log.h"
#include "../core/clock.h"
#include "../conf/lexer.h"
#include "../conf/zone.h"
#include "../core/stats.h"

#define MAX_WORKERS 1024
_Static_assert(MAX_WORKERS <= HY_STATS_MAX_SLOTS, "every worker needs a slot of the status counters");

typedef struct worker {
    pid_t pid;           /* 0: free */
    hy_cycle_t *cycle;   /* the generation it serves (a reference) */
    size_t slot;
    bool retiring;       /* sent QUIT: do not respawn */
    int64_t started_ms;
} worker_t;

static worker_t workers[MAX_WORKERS];
static hy_cycle_t *current;
static hy_lset_t *cur_lset;
static int num_workers;
static const hy_opts_t *run_opts;
static int sigfd = -1;
/* binary upgrade (nginx's USR2/WINCH): */
static pid_t new_binary;  /* the master USR2 started, until it exits */
static pid_t old_master;  /* when this master was started by USR2: the master that did */
static bool noaccepting;  /* WINCH: workers told to quit and not respawned until HUP */
static bool daemonized;   /* WINCH is honoured only then (nginx: in the foreground it is a terminal resize) */

static pid_t spawn(hy_cycle_t *cycle, size_t slot)
{
    int ix = 0; /* the workers[] entry, also the worker's slot of the shared counters (core/stats.h) */
    while (ix < MAX_WORKERS && workers[ix].pid != 0)
        ix++;
    if (ix == MAX_WORKERS) {
        hy_log(HY_LOG_ALERT, "too many worker processes (%d) while spawning \"worker process\"", MAX_WORKERS);
        return -1;
    }
    pid_t pid = fork();
    if (pid < 0) {
        hy_log(HY_LOG_ALERT, "fork() failed while spawning \"worker process\" (%d: %s)", errno, strerror(errno));
        return -1;
    }
    if (pid == 0) {
        close(sigfd);
        hy_stats_attach((size_t)ix);
        int rc = hy_worker_run(cycle, cur_lset, slot, num_workers, false, run_opts);
        HY_COVERAGE_FLUSH();
        _exit(rc);
    }
    workers[ix] = (worker_t){.pid = pid, .cycle = cycle, .slot = slot, .started_ms = hy_clock_time_ms()};
    cycle->refs++;
    hy_log(HY_LOG_NOTICE, "start worker process %d", (int)pid);
    return pid;
}

static void signal_workers(int sig, hy_cycle_t *only)
{
    for (int i = 0; i < MAX_WORKERS; i++) {
        if (workers[i].pid == 0 || (only && workers[i].cycle != only))
            continue;
        if (sig == SIGQUIT || sig == SIGTERM)
            workers[i].retiring = true;
        if (kill(workers[i].pid, sig) != 0 && errno != ESRCH)
            hy_log(HY_LOG_ALERT, "kill(%d, %d) failed (%d: %s)", (int)workers[i].pid, sig, errno, strerror(errno));
    }
}

static int live_workers(void)
{
    int n = 0;
    for (int i = 0; i < MAX_WORKERS; i++)
        n += workers[i].pid != 0;
    return n;
}

static void spawn_all(void)
{
    for (int i = 0; i < num_workers; i++)
        spawn(current, (size_t)i);
}

/* The new binary exited: its pid file is gone (or never written), ours takes the name back; workers come
 * back if WINCH had sent them away (nginx's ngx_reap_children). */
static void new_binary_exited(int status, bool respawn)
{
    if (WIFSIGNALED(status)) /* nginx's levels and words (ngx_process_get_status) */
        hy_log(HY_LOG_ALERT, "new binary process %d exited on signal %d", (int)new_binary, WTERMSIG(status));
    else
        hy_log(HY_LOG_NOTICE, "new binary process %d exited with code %d", (int)new_binary, WEXITSTATUS(status));
    new_binary = 0;
    hy_process_pid_oldbin(false);
    if (noaccepting && respawn) {
        noaccepting = false;
        spawn_all();
    }
}

static void reap(bool respawn)
{
    int status;
    pid_t pid;
    while ((pid = waitpid(-1, &status, WNOHANG)) > 0) {
        if (pid == new_binary) {
            new_binary_exited(status, respawn);
            continue;
        }
        worker_t *w = NULL;
        for (int i = 0; i < MAX_WORKERS; i++)
            if (workers[i].pid == pid)
                w = &workers[i];
        if (w == NULL)
            continue;
        if (WIFSIGNALED(status))
            hy_log(w->retiring ? HY_LOG_NOTICE : HY_LOG_ALERT, "worker process %d exited on signal %d%s", (int)pid,
                   WTERMSIG(status), WCOREDUMP(status) ? " (core dumped)" : "");
        else if (WEXITSTATUS(status) != 0)
            hy_log(HY_LOG_ALERT, "worker process %d exited with fatal code %d and cannot be respawned", (int)pid,
                   WEXITSTATUS(status));
        else
            hy_log(HY_LOG_NOTICE, "worker process %d exited with code 0", (int)pid);
        hy_cycle_t *cycle = w->cycle;
        size_t slot = w->slot;
        bool again = respawn && !w->retiring && cycle == current && !(WIFEXITED(status) && WEXITSTATUS(status) == 2);
        bool crash_loop = hy_clock_time_ms() - w->started_ms < 1000;
        w->pid = 0;
        w->cycle = NULL;
        hy_stats_release((size_t)(w - workers)); /* its gauges: a dead process holds no connection */
        hy_cycle_unref(cycle);
        if (again) {
            if (crash_loop) /* a worker that dies at once would otherwise be re-forked in a tight loop */
                usleep(200 * 1000);
            spawn(current, slot);
        }
    }
}

static void reload(void)
{
    hy_cycle_t *nc = hy_cycle_load(run_opts);
    if (nc == NULL) {
        hy_log(HY_LOG_ERR, "reconfiguration failed, the old configuration stays in force");
        return;
    }
    if (hy_cycle_open_logs(nc) != 0 || hy_zones_map(nc) != 0) { /* zones: kept or new, before forking */
        hy_cycle_unref(nc);
        hy_log(HY_LOG_ERR, "reconfiguration failed, the old configuration stays in force");
        return;
    }
    const char *why;
    int n = hy_limits_workers(hy_core_conf(nc), &why);
    if (n > MAX_WORKERS)
        n = MAX_WORKERS;
    hy_lset_t *ns = hy_lset_open(nc, (size_t)n, cur_lset);
    if (ns == NULL) {
        hy_cycle_unref(nc);
        hy_log(HY_LOG_ERR, "reconfiguration failed, the old configuration stays in force");
        return;
    }
    hy_cycle_t *old = current;
    /* sockets of addresses (and worker slots) the new generation dropped close before any new worker is
     * forked, so no new worker inherits a socket nobody will accept on; old workers keep their own copies
     * until they have drained */
    hy_lset_free(cur_lset, true);
    current = nc;
    cur_lset = ns;
    num_workers = n;
    hy_stats_reloaded((uint64_t)n);
    hy_log_set_targets(nc->error_logs->elts, nc->error_logs->nelts);
    hy_log(HY_LOG_NOTICE, "using %d worker process%s (%s)", n, n == 1 ? "" : "es", why);
    for (int i = 0; i < n; i++)
        spawn(nc, (size_t)i);
    signal_workers(SIGQUIT, old);
    hy_cycle_unref(old);
    hy_log(HY_LOG_NOTICE, "reconfigured from %s", nc->conf_file);
}

static void wait_all(int timeout_ms)
{
    int64_t deadline = hy_clock_time_ms() + timeout_ms;
    while (live_workers() > 0) {
        reap(false);
        if (live_workers() == 0)
            break;
        hy_clock_update();
        if (timeout_ms >= 0 && hy_clock_time_ms() > deadline) {
            hy_log(HY_LOG_NOTICE, "workers did not exit in time, sending SIGKILL");
            signal_workers(SIGKILL, NULL);
            timeout_ms = -1;
        }
        usleep(20 * 1000);
    }
}

int hy_master_run(hy_cycle_t *cycle, hy_lset_t *lset, int n, const hy_opts_t *opts)
{
    current = cycle;
    cur_lset = lset;
    num_workers = n;
    run_opts = opts;
    hy_master_pid = getpid();
    old_master = hy_upgrade_was_inherited() ? getppid() : 0;
    daemonized = hy_core_conf(cycle)->daemon || hy_upgrade_was_inherited();
    char title[1024];
    snprintf(title, sizeof(title), "master process %s", hy_title_cmdline());
    hy_title_set(title);
    sigset_t set;
    hy_process_signal_set(&set);
    sigprocmask(SIG_BLOCK, &set, NULL);
    signal(SIGPIPE, SIG_IGN);
    sigfd = signalfd(-1, &set, SFD_CLOEXEC);
    if (sigfd < 0) {
        hy_log(HY_LOG_EMERG, "signalfd() failed (%d: %s)", errno, strerror(errno));
        return 1;
    }
    hy_conf_log_hook = hy_process_conf_log_hook;
    for (int i = 0; i < n; i++)
        spawn(cycle, (size_t)i);
    hy_notify_ready();
    bool stopping = false;
    int status = 0;
    while (!stopping || live_workers() > 0) {
        struct signalfd_siginfo si;
        ssize_t r = read(sigfd, &si, sizeof(si));
        if (r != (ssize_t)sizeof(si))
            continue;
        hy_clock_update();
        switch (si.ssi_signo) {
        case SIGCHLD:
            reap(!stopping);
            break;
        case SIGHUP:
            hy_log(HY_LOG_NOTICE, "signal %d (SIGHUP) received from %u, reconfiguring", SIGHUP, si.ssi_pid);
            if (!stopping && noaccepting) { /* rollback of an upgrade: the old workers come back as they were */
                noaccepting = false;
                hy_log(HY_LOG_NOTICE, "start worker processes");
                spawn_all();
            } else if (!stopping) {
                hy_notify_reloading();
                reload();
                hy_notify_ready(); /* also after a failed reload: the old configuration still serves */
            }
            break;
        case SIGUSR2:
            hy_log(HY_LOG_NOTICE, "signal %d (SIGUSR2) received from %u, changing binary", SIGUSR2, si.ssi_pid);
            if (stopping)
                break;
            if (new_binary > 0 || (old_master > 1 && getppid() == old_master)) {
                hy_log(HY_LOG_ALERT, "the changing binary signal is ignored: you should shutdown or terminate "
                       "before either old or new binary's process");
                break;
            }
            if (hy_process_pid_oldbin(true) != 0)
                break;
            new_binary = hy_upgrade_exec(cur_lset);
            if (new_binary < 0) {
                new_binary = 0;
                hy_process_pid_oldbin(false);
            }
            break;
        case SIGWINCH:
            if (!daemonized || stopping)
                break;
            hy_log(HY_LOG_NOTICE, "signal %d (SIGWINCH) received from %u, stop accepting connections", SIGWINCH,
                   si.ssi_pid);
            noaccepting = true;
            signal_workers(SIGQUIT, NULL);
            break;
        case SIGUSR1:
            hy_log(HY_LOG_NOTICE, "signal %d (SIGUSR1) received from %u, reopening logs", SIGUSR1, si.ssi_pid);
            hy_log_reopen();
            /* the master (re)creates every log file with the workers' owner first, so their reopen succeeds */
            for (int i = 0; hy_modules[i]; i++)
                if (hy_modules[i]->flush_worker)
                    hy_modules[i]->flush_worker(current, true);
            signal_workers(SIGUSR1, NULL);
            break;
        case SIGQUIT:
            hy_log(HY_LOG_NOTICE, "signal %d (SIGQUIT) received from %u, shutting down", SIGQUIT, si.ssi_pid);
            stopping = true;
            hy_notify_stopping();
            /* stop listening at once: new connections are refused instead of queueing for nobody */
            hy_lset_free(cur_lset, new_binary == 0); /* a new binary keeps serving unix sockets */
            cur_lset = NULL;
            signal_workers(SIGQUIT, NULL);
            break;
        case SIGTERM:
        case SIGINT:
            hy_log(HY_LOG_NOTICE, "signal %d (%s) received from %u, exiting", si.ssi_signo,
                   si.ssi_signo == SIGTERM ? "SIGTERM" : "SIGINT", si.ssi_pid);
            stopping = true;
            hy_notify_stopping();
            hy_lset_free(cur_lset, new_binary == 0);
            cur_lset = NULL;
            signal_workers(SIGTERM, NULL);
            wait_all(5000);
            break;
        default:
            break;
        }
    }
    hy_lset_free(cur_lset, new_binary == 0);
    cur_lset = NULL;
    hy_log(HY_LOG_NOTICE, "exit");
    hy_process_remove_pid();
    return status;
}
