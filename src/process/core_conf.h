/* core_conf.h — the main-context and events{} directives (nginx's core and events modules). */
#ifndef HY_PROCESS_CORE_CONF_H
#define HY_PROCESS_CORE_CONF_H

#include "../conf/conf.h"
#include "../conf/cycle.h"

extern hy_module_t hy_core_module;
extern hy_module_t hy_events_module;

typedef struct hy_core_conf {
    int daemon, master_process;
    int64_t worker_processes;        /* 0 = auto */
    hy_str_t pid, user, group, working_directory, cpu_affinity;
    int64_t worker_rlimit_nofile, worker_priority, worker_shutdown_timeout_ms;
    bool has_priority;
    hy_array_t *env;                 /* hy_str_t words of `env` ("NAME" or "NAME=value"), NULL when none */
    /* events {} */
    bool has_events;
    int64_t worker_connections;      /* -1: derived from the fd limit */
    int multi_accept, accept_mutex;
    hy_str_t use;
    hy_array_t *debug_nets;          /* debug_connection: hy_log_debug_net_t, NULL when none */
} hy_core_conf_t;

/** The core conf of a generation. */
hy_core_conf_t *hy_core_conf(hy_cycle_t *cycle);

/** nginx's `env` (ngx_set_environment): replaces this process's environment by TZ (and NOTIFY_SOCKET, which
 * hayate's systemd notification reads) and the variables named by
 * `env` (their inherited values) and the `env NAME=value` pairs. Called once in each worker (and in the single
 * process) before it serves; the master keeps its environment. The new environment is allocated for the
 * life of the process; tzset() is called so local times follow its TZ. /proc/PID/environ keeps showing the
 * environment the process started with (the kernel's copy), as for nginx. */
void hy_core_env_apply(const hy_core_conf_t *core);

#endif
