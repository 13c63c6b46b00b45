/* cycle_load.c — building a configuration generation: prefix and paths, -g, the file (or the embedded
 * default), module defaults, log files. Everything lives in the generation's arena. */
#include <errno.h>
#include <string.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>
#include <sys/stat.h>
#include "process.h"
#include "core_conf.h"
#include "../core/log.h"
#include "../http/core.h"
#include "../conf/zone.h"
#include "../core/paths.h"

static hy_conf_t *last_cf; /* for -T: the parse state of the generation just loaded */

hy_cycle_t *hy_cycle_load(const hy_opts_t *opts)
{
    hy_pool_t *pool = hy_pool_create(16384);
    hy_cycle_t *cycle = hy_pcalloc(pool, sizeof(*cycle));
    cycle->pool = pool;
    cycle->refs = 1;
    cycle->prefix = hy_pstrndup(pool, opts->prefix, strlen(opts->prefix));
    cycle->test_only = opts->test;
    cycle->error_log = opts->error_log;
    if (opts->conf_file) {
        cycle->conf_file = hy_pstrndup(pool, opts->conf_file, strlen(opts->conf_file));
        const char *slash = strrchr(cycle->conf_file, '/');
        cycle->conf_prefix = hy_pstrndup(pool, cycle->conf_file, (size_t)(slash - cycle->conf_file) + 1);
    } else {
        cycle->conf_file = "(embedded)";
        size_t n = strlen(cycle->prefix);
        char *cp = hy_palloc(pool, n + 6);
        memcpy(cp, cycle->prefix, n);
        memcpy(cp + n, "conf/", 6);
        cycle->conf_prefix = cp;
    }
    int nmod = hy_modules_init();
    cycle->core_conf = hy_pcalloc(pool, sizeof(void *) * (size_t)nmod);
    for (int i = 0; i < nmod; i++)
        if (hy_modules[i]->create_core_conf)
            cycle->core_conf[i] = hy_modules[i]->create_core_conf(cycle);

    hy_conf_t *cf = hy_pcalloc(pool, sizeof(*cf));
    cf->cycle = cycle;
    cf->pool = pool;
    cf->ctx = HY_CTX_MAIN;
    if (opts->dump)
        hy_conf_dump_enable(cf);
    int rc = 0;
    if (opts->directives && opts->directives[0])
        rc = hy_conf_parse_string(cf, NULL, opts->directives, strlen(opts->directives));
    if (rc == 0) {
        cf->ctx = HY_CTX_MAIN;
        if (opts->conf_file)
            rc = hy_conf_parse_file(cf, opts->conf_file);
        else
            rc = hy_conf_parse_string(cf, "(embedded)", hy_default_conf, strlen(hy_default_conf));
    }
    if (rc == 0) {
        for (int i = 0; i < nmod && rc == 0; i++)
            if (hy_modules[i]->init_core_conf && hy_modules[i]->init_core_conf(cycle, cycle->core_conf[i]) != 0)
                rc = -1;
    }
    if (rc == 0 && hy_zones_check(cycle) != 0) /* claims only: "-t" maps nothing */
        rc = -1;
    if (rc == 0 && !hy_core_conf(cycle)->has_events) {
        hy_log_stderr(HY_LOG_EMERG, "no \"events\" section in configuration");
        rc = -1;
    }
    if (rc != 0) {
        hy_pool_destroy(pool);
        return NULL;
    }
    last_cf = cf;
    return cycle;
}

void hy_cycle_dump(hy_cycle_t *cycle)
{
    if (last_cf && last_cf->cycle == cycle)
        hy_conf_dump_write(last_cf, STDOUT_FILENO);
}

static void close_fd(void *arg)
{
    close((int)(intptr_t)arg);
}

int hy_cycle_open_logs(hy_cycle_t *cycle)
{
    hy_array_t *logs = cycle->error_logs;
    size_t main_logs = 0;
    for (size_t i = 0; logs && i < logs->nelts; i++)
        main_logs += ((hy_log_target_t *)logs->elts)[i].scope == 0;
    if (main_logs == 0) { /* nginx's default: -e, else <prefix>logs/error.log at [error] */
        if (logs == NULL)
            logs = cycle->error_logs = hy_array_create(cycle->pool, 1, sizeof(hy_log_target_t));
        hy_log_target_t *t = hy_array_push(logs);
        t->scope = 0;
        t->syslog = NULL;
        if (cycle->error_log && strcmp(cycle->error_log, "stderr") == 0)
            t->path = "stderr";
        else if (cycle->error_log)
            t->path = hy_cycle_path(cycle, cycle->error_log, strlen(cycle->error_log));
        else
            t->path = hy_cycle_path(cycle, HY_PATH_ERROR_LOG, strlen(HY_PATH_ERROR_LOG));
        t->level = HY_LOG_ERR;
    }
    hy_log_target_t *t = logs->elts;
    for (size_t i = 0; i < logs->nelts; i++) {
        if (t[i].syslog) {
            t[i].fd = -1;
            continue;
        }
        int fd = hy_log_open_file(t[i].path);
        if (fd < 0 && fd == -ENOENT && strcmp(t[i].path, "stderr") != 0) {
            /* a fresh prefix has no logs/ yet: create the directory the log lives in, then retry */
            char *dir = hy_pstrndup(cycle->pool, t[i].path, strlen(t[i].path));
            char *slash = strrchr(dir, '/');
            if (slash && slash != dir) {
                *slash = '\0';
                mkdir(dir, 0755);
                fd = hy_log_open_file(t[i].path);
            }
        }
        if (fd < 0) {
            hy_log_stderr(HY_LOG_EMERG, "open() \"%s\" failed (%d: %s)", t[i].path, -fd, strerror(-fd));
            return -1;
        }
        t[i].fd = fd;
        hy_pool_on_clear(cycle->pool, close_fd, (void *)(intptr_t)fd);
    }
    return 0;
}
