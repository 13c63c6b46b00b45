/* worker.c — the worker loop. Signals come through signalfd: QUIT = graceful (stop accepting, finish
 * in-flight requests, close idle keep-alive connections, exit when none is left or at worker_shutdown_timeout),
 * TERM/INT = fast, USR1 = reopen logs, HUP = reload (single-process mode only; workers ignore it). */
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/signalfd.h>
#include <sys/wait.h>
#include "worker.h"
#include "core_conf.h"
#include "limits.h"
#include "title.h"
#include "notify.h"
#include "upgrade.h"
#include "../core/log.h"
#include "../core/clock.h"
#include "../event/loop.h"
#include "../event/listen.h"
#include "../http/core.h"
#include "../proto/accept.h"
#include "../conf/lexer.h"
#include "../conf/zone.h"
#include "../core/stats.h"

static hy_loop_t loop;
static hy_cycle_t *current;
static hy_lset_t *cur_lset;
static size_t my_slot;
static bool is_single;
static const hy_opts_t *run_opts;
static hy_listener_t *listeners; /* owned: one per address of the current generation */
static size_t num_listeners;
static hy_io_t sig_io;
static bool quitting;
static hy_timer_t shutdown_timer;
static char *pid_path;
static pid_t new_binary; /* single process: the binary USR2 started, until it exits */
pid_t hy_master_pid;

void hy_process_conf_log_hook(const char *level, const char *msg)
{
    int l = hy_log_level_parse(level, strlen(level));
    hy_log(l > 0 ? l : HY_LOG_EMERG, "%s", msg);
}

int hy_process_write_pid(hy_cycle_t *cycle)
{
    hy_core_conf_t *core = hy_core_conf(cycle);
    char *path = hy_cycle_path(cycle, core->pid.ptr, core->pid.len);
    free(pid_path);
    pid_path = hy_strndup(path, strlen(path));
    int fd = open(pid_path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
    if (fd < 0) {
        hy_log_stderr(HY_LOG_EMERG, "open() \"%s\" failed (%d: %s)", pid_path, errno, strerror(errno));
        return -1;
    }
    char buf[32];
    int n = snprintf(buf, sizeof(buf), "%d\n", (int)getpid());
    (void)!write(fd, buf, (size_t)n);
    close(fd);
    return 0;
}

int hy_process_pid_oldbin(bool to_oldbin)
{
    if (pid_path == NULL)
        return -1;
    size_t len = strlen(pid_path);
    bool is_old = len > 7 && strcmp(pid_path + len - 7, ".oldbin") == 0;
    if (is_old == to_oldbin)
        return 0;
    char *np = hy_alloc(len + 8);
    memcpy(np, pid_path, len + 1);
    if (to_oldbin)
        memcpy(np + len, ".oldbin", 8);
    else
        np[len - 7] = '\0';
    if (rename(pid_path, np) != 0) {
        hy_log(HY_LOG_ALERT, "rename() %s to %s failed (%d: %s)", pid_path, np, errno, strerror(errno));
        free(np);
        return -1;
    }
    free(pid_path);
    pid_path = np;
    return 0;
}

void hy_process_remove_pid(void)
{
    if (pid_path)
        unlink(pid_path);
}

static void apply_limits(hy_cycle_t *cycle, bool announce)
{
    hy_core_conf_t *core = hy_core_conf(cycle);
    struct rlimit rl;
    getrlimit(RLIMIT_NOFILE, &rl);
    int64_t wc = hy_limits_worker_connections(core, (int64_t)rl.rlim_cur);
    hy_conns_set_limit(wc);
    hy_log_set_debug_nets(core->debug_nets ? core->debug_nets->elts : NULL,
                          core->debug_nets ? core->debug_nets->nelts : 0);
    if (announce && core->worker_connections > (int64_t)rl.rlim_cur)
        hy_log(HY_LOG_WARN, "%lld worker_connections exceed open file resource limit: %lld", (long long)wc,
               (long long)rl.rlim_cur);
}

static void start_listeners(hy_cycle_t *cycle)
{
    hy_http_main_conf_t *m = hy_http_main(cycle);
    hy_http_addr_t *addrs = m ? m->addrs->elts : NULL;
    int batch = hy_core_conf(cycle)->multi_accept ? 512 : 8;
    num_listeners = cur_lset->num_addrs;
    listeners = hy_calloc(sizeof(hy_listener_t) * (num_listeners ? num_listeners : 1));
    for (size_t i = 0; i < num_listeners; i++) {
        listeners[i].spec = cur_lset->specs[i];
        listeners[i].accept_batch = batch;
        int fd = hy_lset_fd(cur_lset, my_slot, i);
        if (fd >= 0) /* no socket: the address is served through its port's wildcard socket */
            hy_listener_start(&listeners[i], &loop, fd, hy_proto_accept, &addrs[i]);
    }
}

static void stop_listeners(void)
{
    for (size_t i = 0; i < num_listeners; i++)
        if (listeners[i].loop)
            hy_listener_stop(&listeners[i]);
    /* events for these watchers may still be queued in this loop iteration: free at its end */
    if (listeners)
        hy_loop_free_later(&loop, free, listeners);
    listeners = NULL;
    num_listeners = 0;
}

static int modules_init_worker(hy_cycle_t *cycle)
{
    for (int i = 0; hy_modules[i]; i++)
        if (hy_modules[i]->init_worker && hy_modules[i]->init_worker(cycle) != 0)
            return -1;
    return 0;
}

static void modules_flush(hy_cycle_t *cycle, bool reopen)
{
    for (int i = 0; hy_modules[i]; i++)
        if (hy_modules[i]->flush_worker)
            hy_modules[i]->flush_worker(cycle, reopen);
}

/* Single-process reload: a new generation in place, listening sockets carried over. */
static void reload_in_place(void)
{
    hy_cycle_t *nc = hy_cycle_load(run_opts);
    if (nc == NULL) {
        hy_log(HY_LOG_ERR, "reconfiguration failed, the old configuration stays in force");
        return;
    }
    if (hy_cycle_open_logs(nc) != 0 || hy_zones_map(nc) != 0) {
        hy_log(HY_LOG_ERR, "reconfiguration failed, the old configuration stays in force");
        hy_cycle_unref(nc);
        return;
    }
    hy_lset_t *ns = hy_lset_open(nc, 1, cur_lset);
    if (ns == NULL) {
        hy_log(HY_LOG_ERR, "reconfiguration failed, the old configuration stays in force");
        hy_cycle_unref(nc);
        return;
    }
    stop_listeners();
    hy_lset_free(cur_lset, false); /* what the new set did not take over */
    cur_lset = ns;
    hy_cycle_t *old = current;
    modules_flush(old, false);
    current = nc;
    hy_log_set_targets(nc->error_logs->elts, nc->error_logs->nelts);
    apply_limits(nc, true);
    modules_init_worker(nc);
    start_listeners(nc);
    hy_cycle_unref(old);
    hy_stats_reloaded(1);
    hy_log(HY_LOG_NOTICE, "reconfigured from %s", nc->conf_file);
}

static void on_shutdown_timeout(hy_timer_t *t)
{
    hy_log(HY_LOG_NOTICE, "worker_shutdown_timeout expired, closing %zu connection(s)", hy_conns_count());
    loop.stop = true;
}

static void graceful_stop(void)
{
    if (quitting)
        return;
    quitting = true;
    if (!is_single)
        hy_title_set("worker process is shutting down");
    stop_listeners();
    /* our copies of the listening sockets go now: the master (or nobody, when single) keeps the originals */
    hy_lset_free(cur_lset, is_single && new_binary == 0); /* a new binary keeps serving unix sockets */
    cur_lset = NULL;
    hy_conns_shutdown();
    hy_core_conf_t *core = hy_core_conf(current);
    if (core->worker_shutdown_timeout_ms > 0) {
        shutdown_timer.cb = on_shutdown_timeout;
        hy_timer_link(&loop, &shutdown_timer, (uint64_t)core->worker_shutdown_timeout_ms);
    }
}

/* master_process off: USR2 starts the new binary on the same sockets, as the master does (upgrade.h); QUIT
 * then ends this process. */
static void change_binary(uint32_t from)
{
    hy_log(HY_LOG_NOTICE, "signal %d (SIGUSR2) received from %u, changing binary", SIGUSR2, from);
    if (new_binary > 0) {
        hy_log(HY_LOG_ALERT, "the changing binary signal is ignored: you should shutdown or terminate before "
               "either old or new binary's process");
        return;
    }
    if (hy_process_pid_oldbin(true) != 0)
        return;
    new_binary = hy_upgrade_exec(cur_lset);
    if (new_binary < 0) {
        new_binary = 0;
        hy_process_pid_oldbin(false);
    }
}

static void reap_new_binary(void)
{
    int status;
    pid_t pid;
    while ((pid = waitpid(-1, &status, WNOHANG)) > 0) {
        if (pid != new_binary)
            continue;
        hy_log(HY_LOG_NOTICE, "new binary process %d exited", (int)pid);
        new_binary = 0;
        hy_process_pid_oldbin(false);
    }
}

static void on_signal_io(hy_io_t *io, unsigned rev)
{
    struct signalfd_siginfo si;
    while (read(io->fd, &si, sizeof(si)) == (ssize_t)sizeof(si)) {
        switch (si.ssi_signo) {
        case SIGHUP:
            if (is_single && !quitting) {
                hy_log(HY_LOG_NOTICE, "signal %d (SIGHUP) received from %u, reconfiguring", SIGHUP, si.ssi_pid);
                hy_notify_reloading();
                reload_in_place();
                hy_notify_ready();
            }
            break;
        case SIGUSR2:
            if (is_single && !quitting)
                change_binary(si.ssi_pid);
            break;
        case SIGCHLD:
            if (is_single)
                reap_new_binary();
            break;
        case SIGUSR1:
            if (is_single)
                hy_log(HY_LOG_NOTICE, "signal %d (SIGUSR1) received from %u, reopening logs", SIGUSR1, si.ssi_pid);
            hy_log_reopen();
            modules_flush(current, true);
            break;
        case SIGQUIT:
            if (is_single) {
                hy_log(HY_LOG_NOTICE, "signal %d (SIGQUIT) received from %u, shutting down", SIGQUIT, si.ssi_pid);
                hy_notify_stopping();
            }
            else
                hy_log(HY_LOG_NOTICE, "gracefully shutting down");
            graceful_stop();
            break;
        case SIGTERM:
        case SIGINT:
            if (is_single) {
                hy_log(HY_LOG_NOTICE, "signal %d (%s) received from %u, exiting", si.ssi_signo,
                       si.ssi_signo == SIGTERM ? "SIGTERM" : "SIGINT", si.ssi_pid);
                hy_notify_stopping();
            }
            loop.stop = true;
            break;
        default:
            break;
        }
    }
}

void hy_process_signal_set(sigset_t *set)
{
    static const int sigs[] = {SIGHUP, SIGUSR1, SIGUSR2, SIGWINCH, SIGQUIT, SIGTERM, SIGINT, SIGCHLD};
    sigemptyset(set);
    for (size_t i = 0; i < HY_ARRAY_SIZE(sigs); i++)
        sigaddset(set, sigs[i]);
}

static int setup_signals(void)
{
    sigset_t set;
    hy_process_signal_set(&set); /* USR2 (binary upgrade) and WINCH: the single process acts, workers ignore */
    if (sigprocmask(SIG_BLOCK, &set, NULL) != 0)
        return -1;
    signal(SIGPIPE, SIG_IGN);
    int fd = signalfd(-1, &set, SFD_NONBLOCK | SFD_CLOEXEC);
    if (fd < 0)
        return -1;
    hy_io_init(&sig_io, fd, on_signal_io, NULL);
    hy_io_set(&loop, &sig_io, HY_EV_READ);
    return 0;
}

int hy_worker_run(hy_cycle_t *cycle, hy_lset_t *lset, size_t slot, int num_workers, bool single,
                  const hy_opts_t *opts)
{
    run_opts = opts;
    current = cycle;
    cur_lset = lset;
    my_slot = slot;
    hy_worker_slot = slot;
    is_single = single;
    hy_core_conf_t *core = hy_core_conf(cycle);
    hy_core_env_apply(core);
    if (!single) {
        hy_title_set("worker process");
        hy_zones_worker_init(cycle); /* let go of zones only older generations use */
        hy_limits_set_affinity(core, (int)slot, num_workers);
        if (core->has_priority)
            setpriority(PRIO_PROCESS, 0, (int)core->worker_priority);
        if (hy_limits_drop_privileges(core) != 0)
            return 2;
        /* an orphaned worker winds down instead of serving forever. Set after the privilege drop, which
         * clears it (prctl(2)); a master that died before this line is caught by the getppid() check. */
        prctl(PR_SET_PDEATHSIG, SIGQUIT);
        if (getppid() != hy_master_pid) {
            hy_log(HY_LOG_NOTICE, "master process %d is gone, worker exiting", (int)hy_master_pid);
            return 0;
        }
        if (core->working_directory.len && chdir(core->working_directory.ptr) != 0) {
            /* nginx: the worker ends with the fatal code 2, which the master does not respawn */
            hy_log(HY_LOG_ALERT, "chdir(\"%s\") failed (%d: %s)", core->working_directory.ptr, errno,
                   strerror(errno));
            return 2;
        }
    }
    if (hy_loop_init(&loop) != 0) {
        hy_log(HY_LOG_EMERG, "epoll_create1() failed (%d: %s)", errno, strerror(errno));
        return 2;
    }
    hy_worker_loop = &loop;
    if (setup_signals() != 0) {
        hy_log(HY_LOG_EMERG, "signalfd() failed (%d: %s)", errno, strerror(errno));
        return 2;
    }
    apply_limits(cycle, single);
    if (modules_init_worker(cycle) != 0)
        return 2;
    start_listeners(cycle);
    hy_conf_log_hook = hy_process_conf_log_hook;
    if (single)
        hy_notify_ready();
    while (!loop.stop) {
        if (hy_loop_run_once(&loop, quitting ? 100 : -1) != 0)
            break;
        if (quitting && hy_conns_count() == 0)
            break;
    }
    modules_flush(current, false);
    stop_listeners();
    hy_conns_close_all();
    hy_loop_run_once(&loop, 0); /* runs the deferred frees */
    hy_lset_free(cur_lset, single && new_binary == 0);
    cur_lset = NULL;
    if (single) {
        hy_log(HY_LOG_NOTICE, "exit");
        hy_process_remove_pid();
    }
    return 0;
}
