/* serve.c — running a generation: limits, listeners, pid file, signals (signalfd in the loop), reload in
 * place with the listening sockets kept open, graceful and fast stop. Single process for now; the
 * master/worker split reuses these pieces (see docs/ARCHITECTURE.md). */
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/resource.h>
#include <sys/signalfd.h>
#include <sys/stat.h>
#include "process.h"
#include "core_conf.h"
#include "../core/log.h"
#include "../core/clock.h"
#include "../event/loop.h"
#include "../event/listen.h"
#include "../http/core.h"
#include "../http/h1.h"
#include "../conf/lexer.h"
#include <sys/un.h>

static hy_loop_t loop;
static hy_cycle_t *current;
static const hy_opts_t *run_opts;
static hy_listener_t *listeners; /* owned: one per address of the current generation */
static size_t num_listeners;
static hy_io_t sig_io;
static bool quitting;
static hy_timer_t shutdown_timer;
static char *pid_path;

static void conf_log_hook(const char *level, const char *msg)
{
    int l = hy_log_level_parse(level, strlen(level));
    hy_log(l > 0 ? l : HY_LOG_EMERG, "%s", msg);
}

static int64_t raise_nofile(hy_core_conf_t *core)
{
    struct rlimit rl;
    if (getrlimit(RLIMIT_NOFILE, &rl) != 0)
        return 1024;
    rlim_t want = core->worker_rlimit_nofile > 0 ? (rlim_t)core->worker_rlimit_nofile : rl.rlim_max;
    struct rlimit nr = {.rlim_cur = want, .rlim_max = rl.rlim_max > want ? rl.rlim_max : want};
    if (setrlimit(RLIMIT_NOFILE, &nr) != 0) {
        nr.rlim_max = rl.rlim_max;
        nr.rlim_cur = want < rl.rlim_max ? want : rl.rlim_max;
        if (setrlimit(RLIMIT_NOFILE, &nr) != 0)
            hy_log(HY_LOG_WARN, "setrlimit(RLIMIT_NOFILE, %llu) failed (%d: %s)", (unsigned long long)want, errno,
                   strerror(errno));
    }
    getrlimit(RLIMIT_NOFILE, &rl);
    return (int64_t)rl.rlim_cur;
}

static void apply_limits(hy_cycle_t *cycle)
{
    hy_core_conf_t *core = hy_core_conf(cycle);
    int64_t nofile = raise_nofile(core);
    int64_t wc = core->worker_connections;
    if (wc <= 0) {
        wc = nofile - 32; /* what the fd limit allows, less a reserve for logs, files being served, listeners */
        if (wc < 64)
            wc = 64;
    } else if (wc > nofile) {
        hy_log(HY_LOG_WARN, "%lld worker_connections exceed open file resource limit: %lld", (long long)wc,
               (long long)nofile);
    }
    hy_h1_set_limits(wc);
    hy_log(HY_LOG_NOTICE, "limits: open files %lld, worker_connections %lld, listen backlog %d", (long long)nofile,
           (long long)wc, hy_listen_somaxconn());
}

static void on_signal_io(hy_io_t *io, unsigned rev);

/* Open (or take over from the previous generation) one listener per address. */
static int open_listeners(hy_cycle_t *cycle, hy_listener_t **out, size_t *out_n)
{
    hy_http_main_conf_t *m = hy_http_main(cycle);
    size_t n = m ? m->addrs->nelts : 0;
    hy_listener_t *ls = hy_calloc(sizeof(hy_listener_t) * (n ? n : 1));
    hy_http_addr_t *addrs = m ? m->addrs->elts : NULL;
    int accept_batch = hy_core_conf(cycle)->multi_accept ? 512 : 8;
    for (size_t i = 0; i < n; i++) {
        ls[i].fd = -1;
        for (size_t k = 0; k < num_listeners; k++)
            if (listeners[k].fd >= 0 && hy_listen_same_addr(&listeners[k].spec, &addrs[i].spec)) {
                ls[i].fd = listeners[k].fd; /* keep the socket: no refused connections across reload */
                listeners[k].fd = -1;
                break;
            }
        if (ls[i].fd < 0) {
            const char *what = "";
            int fd = hy_listen_open(&addrs[i].spec, &what);
            if (fd < 0) {
                hy_log_stderr(HY_LOG_EMERG, "%s to %s failed (%d: %s)", what, addrs[i].spec.text, -fd, strerror(-fd));
                for (size_t k = 0; k < i; k++) { /* give taken-over sockets back, close new ones */
                    bool taken = false;
                    for (size_t j = 0; j < num_listeners; j++)
                        if (listeners[j].fd < 0 && hy_listen_same_addr(&listeners[j].spec, &ls[k].spec)) {
                            listeners[j].fd = ls[k].fd;
                            taken = true;
                        }
                    if (!taken)
                        close(ls[k].fd);
                }
                free(ls);
                return -1;
            }
            ls[i].fd = fd;
        }
        ls[i].spec = addrs[i].spec;
        ls[i].accept_batch = accept_batch;
    }
    *out = ls;
    *out_n = n;
    return 0;
}

static void start_listeners(hy_cycle_t *cycle)
{
    hy_http_main_conf_t *m = hy_http_main(cycle);
    hy_http_addr_t *addrs = m ? m->addrs->elts : NULL;
    for (size_t i = 0; i < num_listeners; i++)
        hy_listener_start(&listeners[i], &loop, listeners[i].fd, hy_h1_accept, &addrs[i]);
}

static void close_listeners(void)
{
    for (size_t i = 0; i < num_listeners; i++) {
        if (listeners[i].loop)
            hy_listener_stop(&listeners[i]);
        if (listeners[i].fd >= 0) {
            close(listeners[i].fd);
            if (listeners[i].spec.is_unix)
                unlink(((struct sockaddr_un *)&listeners[i].spec.addr)->sun_path);
        }
    }
    free(listeners);
    listeners = NULL;
    num_listeners = 0;
}

static int write_pid(hy_cycle_t *cycle)
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

static void remove_pid(void)
{
    if (pid_path)
        unlink(pid_path);
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

static void reload(void)
{
    hy_log(HY_LOG_NOTICE, "reconfiguring");
    hy_cycle_t *nc = hy_cycle_load(run_opts);
    if (nc == NULL) {
        hy_log(HY_LOG_ERR, "reconfiguration failed, the old configuration stays in force");
        return;
    }
    if (hy_cycle_open_logs(nc) != 0) {
        hy_cycle_unref(nc);
        return;
    }
    hy_listener_t *ls;
    size_t n;
    for (size_t i = 0; i < num_listeners; i++)
        hy_listener_stop(&listeners[i]);
    if (open_listeners(nc, &ls, &n) != 0) {
        hy_log(HY_LOG_ERR, "reconfiguration failed, the old configuration stays in force");
        start_listeners(current);
        hy_cycle_unref(nc);
        return;
    }
    for (size_t i = 0; i < num_listeners; i++) /* sockets the new generation does not listen on */
        listeners[i].loop = NULL;
    close_listeners();
    listeners = ls;
    num_listeners = n;
    hy_cycle_t *old = current;
    modules_flush(old, false);
    current = nc;
    modules_init_worker(nc);
    hy_log_set_targets(nc->error_logs->elts, nc->error_logs->nelts);
    apply_limits(nc);
    start_listeners(nc);
    hy_cycle_unref(old);
    hy_log(HY_LOG_NOTICE, "reconfigured from %s", nc->conf_file);
}

static void on_shutdown_timeout(hy_timer_t *t)
{
    hy_log(HY_LOG_NOTICE, "worker_shutdown_timeout expired, closing the remaining connections");
    remove_pid();
    exit(0);
}

static void graceful_stop(void)
{
    if (quitting)
        return;
    quitting = true;
    hy_log(HY_LOG_NOTICE, "gracefully shutting down");
    close_listeners();
    hy_h1_shutdown(&loop);
    hy_core_conf_t *core = hy_core_conf(current);
    if (core->worker_shutdown_timeout_ms > 0) {
        shutdown_timer.cb = on_shutdown_timeout;
        hy_timer_link(&loop, &shutdown_timer, (uint64_t)core->worker_shutdown_timeout_ms);
    }
}

static void on_signal_io(hy_io_t *io, unsigned rev)
{
    struct signalfd_siginfo si;
    while (read(io->fd, &si, sizeof(si)) == (ssize_t)sizeof(si)) {
        switch (si.ssi_signo) {
        case SIGHUP:
            hy_log(HY_LOG_NOTICE, "signal %d (SIGHUP) received from %u, reconfiguring", SIGHUP, si.ssi_pid);
            if (!quitting)
                reload();
            break;
        case SIGUSR1:
            hy_log(HY_LOG_NOTICE, "signal %d (SIGUSR1) received from %u, reopening logs", SIGUSR1, si.ssi_pid);
            hy_log_reopen();
            modules_flush(current, true);
            break;
        case SIGQUIT:
            hy_log(HY_LOG_NOTICE, "signal %d (SIGQUIT) received from %u, shutting down", SIGQUIT, si.ssi_pid);
            graceful_stop();
            break;
        case SIGTERM:
        case SIGINT:
            hy_log(HY_LOG_NOTICE, "signal %d (%s) received from %u, exiting", si.ssi_signo,
                   si.ssi_signo == SIGTERM ? "SIGTERM" : "SIGINT", si.ssi_pid);
            loop.stop = true;
            break;
        default:
            break;
        }
    }
}

static int setup_signals(void)
{
    sigset_t set;
    sigemptyset(&set);
    sigaddset(&set, SIGHUP);
    sigaddset(&set, SIGUSR1);
    sigaddset(&set, SIGQUIT);
    sigaddset(&set, SIGTERM);
    sigaddset(&set, SIGINT);
    sigaddset(&set, SIGCHLD);
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

int hy_serve(hy_cycle_t *cycle, const hy_opts_t *opts)
{
    run_opts = opts;
    current = cycle;
    if (hy_cycle_open_logs(cycle) != 0)
        return 1;
    if (hy_loop_init(&loop) != 0) {
        hy_log_stderr(HY_LOG_EMERG, "epoll_create1() failed (%d: %s)", errno, strerror(errno));
        return 1;
    }
    hy_worker_loop = &loop;
    if (open_listeners(cycle, &listeners, &num_listeners) != 0)
        return 1;
    hy_core_conf_t *core = hy_core_conf(cycle);
    if (core->daemon && daemonize() != 0)
        return 1;
    if (write_pid(cycle) != 0)
        return 1;
    hy_log_set_targets(cycle->error_logs->elts, cycle->error_logs->nelts);
    hy_conf_log_hook = NULL;
    if (setup_signals() != 0) {
        hy_log(HY_LOG_EMERG, "signalfd() failed (%d: %s)", errno, strerror(errno));
        return 1;
    }
    apply_limits(cycle);
    hy_log(HY_LOG_NOTICE, "hayate/%s started, pid %d, %zu listening address%s", HY_VERSION, (int)getpid(),
           num_listeners, num_listeners == 1 ? "" : "es");
    if (modules_init_worker(cycle) != 0)
        return 1;
    start_listeners(cycle);
    hy_conf_log_hook = conf_log_hook;
    while (!loop.stop) {
        if (hy_loop_run_once(&loop, quitting ? 100 : -1) != 0)
            break;
        if (quitting && hy_h1_num_connections() == 0)
            break;
    }
    hy_log(HY_LOG_NOTICE, "exit");
    modules_flush(current, false);
    close_listeners();
    hy_h1_close_all();
    hy_loop_run_once(&loop, 0); /* runs the deferred frees */
    remove_pid();
    return 0;
}
