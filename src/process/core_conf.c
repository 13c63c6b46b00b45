/* core_conf.c — nginx's main-context directives and events{}. The process model itself (master/workers,
 * affinity, privileges) is the process layer's; here they are parsed and checked. */
#include <string.h>
#include <stdio.h>
#include <unistd.h>
#include <errno.h>
#include <pwd.h>
#include <grp.h>
#include "core_conf.h"
#include "../core/log.h"
#include "../core/paths.h"
#include "../http/core.h"

hy_core_conf_t *hy_core_conf(hy_cycle_t *cycle)
{
    return cycle->core_conf[hy_core_module.index];
}

static void *create_core(hy_cycle_t *cycle)
{
    hy_core_conf_t *c = hy_pcalloc(cycle->pool, sizeof(*c));
    c->daemon = c->master_process = HY_UNSET;
    c->worker_processes = c->worker_rlimit_nofile = c->worker_shutdown_timeout_ms = HY_UNSET;
    c->worker_connections = HY_UNSET;
    c->multi_accept = c->accept_mutex = HY_UNSET;
    return c;
}

static int init_core(hy_cycle_t *cycle, void *conf)
{
    hy_core_conf_t *c = conf;
    if (c->daemon == HY_UNSET)
        c->daemon = 1;
    if (c->master_process == HY_UNSET)
        c->master_process = 1;
    if (c->worker_processes == HY_UNSET)
        c->worker_processes = 1;
    if (c->multi_accept == HY_UNSET)
        c->multi_accept = 0;
    if (c->accept_mutex == HY_UNSET)
        c->accept_mutex = 0;
    if (c->pid.ptr == NULL)
        c->pid = HY_STR(HY_PATH_PID);
    return 0;
}

static int set_worker_processes(hy_conf_t *cf, const hy_directive_t *d, void *conf)
{
    hy_core_conf_t *c = conf;
    size_t n;
    hy_str_t *a = hy_conf_args(cf, &n);
    if (c->worker_processes != HY_UNSET)
        return hy_conf_error(cf, "\"worker_processes\" directive is duplicate");
    if (hy_str_eq(a[1], "auto")) {
        c->worker_processes = 0;
        return 0;
    }
    int64_t v = hy_parse_int(a[1].ptr, a[1].len);
    if (v <= 0 || v > 1024)
        return hy_conf_error(cf, "\"worker_processes\" directive invalid value"); /* nginx's wording */
    c->worker_processes = v;
    return 0;
}

static int set_error_log(hy_conf_t *cf, const hy_directive_t *d, void *conf)
{
    size_t n;
    hy_str_t *a = hy_conf_args(cf, &n);
    hy_syslog_peer_t *peer = NULL;
    if (a[1].len > 7 && memcmp(a[1].ptr, "syslog:", 7) == 0) {
        char err[256];
        if (hy_syslog_parse(cf->pool, a[1].ptr + 7, a[1].len - 7, &peer, err, sizeof(err)) != 0)
            return hy_conf_error(cf, "%s", err);
    }
    if (a[1].len > 7 && memcmp(a[1].ptr, "memory:", 7) == 0)
        return hy_conf_error(cf, "memory error logs are not supported by hayate");
    int level = HY_LOG_ERR;
    if (n == 3) {
        level = hy_log_level_parse(a[2].ptr, a[2].len);
        if (level < 0)
            return hy_conf_error(cf, "invalid log level \"%s\"", a[2].ptr);
    }
    if (cf->cycle->error_logs == NULL)
        cf->cycle->error_logs = hy_array_create(cf->pool, 2, sizeof(hy_log_target_t));
    /* in http{}, server{} or location{}: the level's own targets, for its requests (nginx's clcf->error_log) */
    unsigned scope = 0;
    if (cf->loc_conf && (cf->ctx & HY_CTX_HTTP_ANY)) {
        hy_http_loc_conf_t *lc = cf->loc_conf[hy_http_core_module.index];
        if (lc->error_log_scope == 0) {
            unsigned last = 0;
            hy_log_target_t *all = cf->cycle->error_logs->elts;
            for (size_t i = 0; i < cf->cycle->error_logs->nelts; i++)
                last = all[i].scope > last ? all[i].scope : last;
            lc->error_log_scope = last + 1;
        }
        scope = lc->error_log_scope;
    }
    hy_log_target_t *t = hy_array_push(cf->cycle->error_logs);
    t->scope = scope;
    t->syslog = peer;
    t->path = hy_str_eq(a[1], "stderr") ? "stderr"
              : peer                    ? hy_pstrndup(cf->pool, a[1].ptr, a[1].len)
                                        : hy_cycle_path(cf->cycle, a[1].ptr, a[1].len);
    t->level = level;
    t->fd = -1;
    return 0;
}

static int set_user(hy_conf_t *cf, const hy_directive_t *d, void *conf)
{
    hy_core_conf_t *c = conf;
    size_t n;
    hy_str_t *a = hy_conf_args(cf, &n);
    if (c->user.ptr)
        return hy_conf_error(cf, "\"user\" directive is duplicate");
    c->user = hy_str_dup(cf->pool, a[1]);
    c->group = n == 3 ? hy_str_dup(cf->pool, a[2]) : c->user;
    if (geteuid() != 0) {
        hy_conf_warn(cf, "the \"user\" directive makes sense only if the master process runs with super-user "
                     "privileges, ignored");
        return 0;
    }
    /* as nginx: both names must resolve now, so -t catches what would make every worker die at start */
    errno = 0;
    if (getpwnam(c->user.ptr) == NULL)
        return hy_conf_error(cf, "getpwnam(\"%s\") failed", c->user.ptr);
    if (getgrnam(c->group.ptr) == NULL)
        return hy_conf_error(cf, "getgrnam(\"%s\") failed", c->group.ptr);
    return 0;
}

static int set_affinity(hy_conf_t *cf, const hy_directive_t *d, void *conf)
{
    hy_core_conf_t *c = conf;
    size_t n;
    hy_str_t *a = hy_conf_args(cf, &n);
    if (c->cpu_affinity.ptr)
        return hy_conf_error(cf, "\"worker_cpu_affinity\" directive is duplicate");
    size_t total = 0;
    for (size_t i = 1; i < n; i++) {
        if (hy_str_eq(a[i], "auto")) {
            if (i != 1)
                return hy_conf_error(cf, "invalid character \"a\" in \"worker_cpu_affinity\" directive");
        } else {
            for (size_t k = 0; k < a[i].len; k++)
                if (a[i].ptr[k] != '0' && a[i].ptr[k] != '1')
                    return hy_conf_error(cf, "invalid character \"%c\" in \"worker_cpu_affinity\"", a[i].ptr[k]);
        }
        total += a[i].len + 1;
    }
    char *p = hy_palloc(cf->pool, total + 1);
    size_t o = 0;
    for (size_t i = 1; i < n; i++) {
        memcpy(p + o, a[i].ptr, a[i].len);
        o += a[i].len;
        p[o++] = ' ';
    }
    p[o ? o - 1 : 0] = '\0';
    c->cpu_affinity = (hy_str_t){p, o ? o - 1 : 0};
    return 0;
}

static int set_priority(hy_conf_t *cf, const hy_directive_t *d, void *conf)
{
    hy_core_conf_t *c = conf;
    size_t n;
    hy_str_t *a = hy_conf_args(cf, &n);
    if (c->has_priority)
        return hy_conf_error(cf, "\"worker_priority\" directive is duplicate");
    bool neg = a[1].len > 0 && a[1].ptr[0] == '-';
    bool sign = neg || (a[1].len > 0 && a[1].ptr[0] == '+');
    int64_t v = hy_parse_int(a[1].ptr + sign, a[1].len - sign);
    if (v < 0 || v > 20) /* nginx: any number (setpriority clamps); nice values are -20..20 */
        return hy_conf_error(cf, "\"worker_priority\" directive invalid number");
    c->worker_priority = neg ? -v : v;
    c->has_priority = true;
    return 0;
}

static int set_events(hy_conf_t *cf, const hy_directive_t *d, void *conf)
{
    hy_core_conf_t *c = conf;
    if (c->has_events)
        return hy_conf_error(cf, "\"events\" directive is duplicate");
    c->has_events = true;
    uint32_t saved = cf->ctx;
    cf->ctx = HY_CTX_EVENTS;
    int rc = hy_conf_parse_block(cf);
    cf->ctx = saved;
    return rc;
}

static int set_debug_connection(hy_conf_t *cf, const hy_directive_t *d, void *conf)
{
    hy_core_conf_t *c = conf;
    size_t n;
    hy_str_t *a = hy_conf_args(cf, &n);
    hy_log_debug_net_t net;
    if (hy_log_debug_net_parse(a[1].ptr, a[1].len, &net) != 0)
        return hy_conf_error(cf, "invalid parameter \"%s\" (hayate takes an address, a CIDR or \"unix:\")", a[1].ptr);
    if (c->debug_nets == NULL)
        c->debug_nets = hy_array_create(cf->pool, 2, sizeof(hy_log_debug_net_t));
    *(hy_log_debug_net_t *)hy_array_push(c->debug_nets) = net;
    return 0;
}

static int set_use(hy_conf_t *cf, const hy_directive_t *d, void *conf)
{
    hy_core_conf_t *c = conf;
    size_t n;
    hy_str_t *a = hy_conf_args(cf, &n);
    if (c->use.ptr)
        return hy_conf_error(cf, "\"use\" directive is duplicate");
    if (!hy_str_eq(a[1], "epoll"))
        return hy_conf_error(cf, "invalid event type \"%s\"", a[1].ptr);
    c->use = HY_STR("epoll");
    return 0;
}

static int set_env(hy_conf_t *cf, const hy_directive_t *d, void *conf)
{
    hy_core_conf_t *c = conf;
    size_t n;
    hy_str_t *a = hy_conf_args(cf, &n);
    if (c->env == NULL)
        c->env = hy_array_create(cf->pool, 4, sizeof(hy_str_t));
    *(hy_str_t *)hy_array_push(c->env) = a[1]; /* applied by hy_core_env_apply in the workers */
    return 0;
}

#define CORE(field) .conf = HY_CONF_CORE, .offset = offsetof(hy_core_conf_t, field)
static const hy_bounds_t positive = {1, INT64_MAX};
static const hy_bounds_t conns_bounds = {1, 1 << 24};

static const hy_directive_t core_directives[] = {
    {.name = "daemon", .ctx = HY_CTX_MAIN, .args = HY_ARGS_FLAG, .set = hy_slot_flag, CORE(daemon)},
    {.name = "master_process", .ctx = HY_CTX_MAIN, .args = HY_ARGS_FLAG, .set = hy_slot_flag, CORE(master_process)},
    {.name = "worker_processes", .ctx = HY_CTX_MAIN, .args = HY_ARGS_1, .set = set_worker_processes,
     CORE(worker_processes)},
    {.name = "error_log", .ctx = HY_CTX_MAIN | HY_CTX_HTTP_ANY, .args = HY_ARGS_12, .set = set_error_log},
    {.name = "pid", .ctx = HY_CTX_MAIN, .args = HY_ARGS_1, .set = hy_slot_str, CORE(pid)},
    {.name = "user", .ctx = HY_CTX_MAIN, .args = HY_ARGS_12, .set = set_user, CORE(user)},
    {.name = "worker_rlimit_nofile", .ctx = HY_CTX_MAIN, .args = HY_ARGS_1, .set = hy_slot_num,
     CORE(worker_rlimit_nofile), .post = &positive},
    {.name = "worker_cpu_affinity", .ctx = HY_CTX_MAIN, .args = HY_ARGS_1MORE, .set = set_affinity,
     CORE(cpu_affinity)},
    {.name = "worker_priority", .ctx = HY_CTX_MAIN, .args = HY_ARGS_1, .set = set_priority},
    {.name = "worker_shutdown_timeout", .ctx = HY_CTX_MAIN, .args = HY_ARGS_1, .set = hy_slot_msec,
     CORE(worker_shutdown_timeout_ms)},
    {.name = "working_directory", .ctx = HY_CTX_MAIN, .args = HY_ARGS_1, .set = hy_slot_str,
     CORE(working_directory)},
    {.name = "env", .ctx = HY_CTX_MAIN, .args = HY_ARGS_1, .set = set_env},
    {.name = "pcre_jit", .ctx = HY_CTX_MAIN, .args = HY_ARGS_FLAG, .set = hy_slot_check_flag},
    {.name = "events", .ctx = HY_CTX_MAIN, .args = HY_ARGS_0 | HY_ARGS_BLOCK, .set = set_events},
    {0},
};

static const hy_directive_t events_directives[] = {
    {.name = "worker_connections", .ctx = HY_CTX_EVENTS, .args = HY_ARGS_1, .set = hy_slot_num,
     CORE(worker_connections), .post = &conns_bounds},
    {.name = "multi_accept", .ctx = HY_CTX_EVENTS, .args = HY_ARGS_FLAG, .set = hy_slot_flag, CORE(multi_accept)},
    {.name = "accept_mutex", .ctx = HY_CTX_EVENTS, .args = HY_ARGS_FLAG, .set = hy_slot_flag, CORE(accept_mutex)},
    {.name = "use", .ctx = HY_CTX_EVENTS, .args = HY_ARGS_1, .set = set_use},
    {.name = "debug_connection", .ctx = HY_CTX_EVENTS, .args = HY_ARGS_1, .set = set_debug_connection},
    {0},
};

hy_module_t hy_core_module = {
    .name = "core",
    .directives = core_directives,
    .create_core_conf = create_core,
    .init_core_conf = init_core,
};

/* events{} directives share the core conf struct: the table lives in its own module for the docs' grouping */
static void *events_conf(hy_cycle_t *cycle)
{
    return cycle->core_conf[hy_core_module.index]; /* created before: hy_modules[] lists core first */
}

hy_module_t hy_events_module = {
    .name = "events",
    .directives = events_directives,
    .create_core_conf = events_conf,
};
