/* stub_status.c — nginx's ngx_http_stub_status_module: the status page in nginx's exact text, and the
 * $connections_* variables. The counters are the shared ones (core/stats.h), summed over every worker. */
#include <stdio.h>
#include <stddef.h>
#include <string.h>
#include "stub_status.h"
#include "request.h"
#include "phases.h"
#include "vars.h"
#include "../core/stats.h"

#define SUM(field) hy_stats_sum(offsetof(hy_stats_slot_t, field))

static int stub_status_handler(hy_req_t *req)
{
    if (req->method_id != HY_M_GET && req->method_id != HY_M_HEAD)
        return 405;
    char *p = hy_palloc(req->pool, 256);
    int n =
        snprintf(p, 256,
                 "Active connections: %llu \n"
                 "server accepts handled requests\n"
                 " %llu %llu %llu \n"
                 "Reading: %llu Writing: %llu Waiting: %llu \n",
                 (unsigned long long)SUM(active), (unsigned long long)SUM(accepted), (unsigned long long)SUM(handled),
                 (unsigned long long)SUM(requests), (unsigned long long)SUM(reading), (unsigned long long)SUM(writing),
                 (unsigned long long)SUM(waiting));
    req->status = 200;
    req->content_type = HY_STR("text/plain");
    req->content_length_n = n;
    if (req->method_id == HY_M_HEAD)
        req->header_only = true;
    else
        hy_outq_push_mem(&req->body, p, (size_t)n, NULL, NULL); /* the request pool outlives the send */
    hy_req_send(req, true);
    return HY_DONE;
}

/* "stub_status;" (nginx also takes, and ignores, one argument: the old "stub_status on;") */
static int set_stub_status(hy_conf_t *cf, const hy_directive_t *d, void *conf)
{
    hy_http_loc_conf_t *lc = cf->loc_conf[hy_http_core_module.index];
    lc->handler = stub_status_handler;
    return 0;
}

static void get_connections(hy_req_t *req, hy_var_value_t *v, uintptr_t off)
{
    char *p = hy_palloc(req->pool, 24);
    int n = snprintf(p, 24, "%llu", (unsigned long long)hy_stats_sum((size_t)off));
    *v = (hy_var_value_t){.ptr = p, .len = (size_t)n};
}

static int postconfiguration(hy_conf_t *cf)
{
    static const struct {
        const char *name;
        size_t off;
    } vars[] = {
        {"connections_active", offsetof(hy_stats_slot_t, active)},
        {"connections_reading", offsetof(hy_stats_slot_t, reading)},
        {"connections_writing", offsetof(hy_stats_slot_t, writing)},
        {"connections_waiting", offsetof(hy_stats_slot_t, waiting)},
    };
    for (size_t i = 0; i < HY_ARRAY_SIZE(vars); i++)
        if (hy_vars_define(cf, (hy_str_t){(char *)vars[i].name, strlen(vars[i].name)}, get_connections, vars[i].off,
                           HY_VAR_NOCACHE) < 0)
            return -1;
    return 0;
}

static const hy_directive_t stub_status_directives[] = {
    {.name = "stub_status",
     .ctx = HY_CTX_SERVER | HY_CTX_LOC,
     .args = HY_ARGS_0 | HY_ARGS_1,
     .set = set_stub_status,
     .conf = HY_CONF_LOC},
    {0},
};

hy_module_t hy_http_stub_status_module = {
    .name = "http_stub_status",
    .directives = stub_status_directives,
    .postconfiguration = postconfiguration,
};
