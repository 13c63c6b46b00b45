/* phases.c — the phase engine (see phases.h for the phase table and the result contract). */
#include <stdio.h>
#include <string.h>
#include "phases.h"
#include "request.h"
#include "path.h"
#include "../conf/cycle.h"
#include "../core/log.h"

#define HY_MAX_URI_CHANGES 10

typedef struct step step_t;
typedef int (*checker_fn)(hy_req_t *req, const step_t *s);

struct step {
    checker_fn checker;
    hy_phase_handler_fn handler; /* NULL for the core's own steps */
    uint32_t next;               /* first step of the next phase (the checker's jump on HY_OK) */
    uint8_t phase;
};

struct hy_phase_engine {
    hy_array_t *regs[HY_PHASE_COUNT]; /* hy_phase_handler_fn, filled by hy_http_phase_add */
    step_t *steps;
    uint32_t num_steps;
    uint32_t start[HY_PHASE_COUNT]; /* first step of each phase */
};

static struct hy_phase_engine *engine_of(hy_conf_t *cf)
{
    hy_http_main_conf_t *m = cf->main_conf[hy_http_core_module.index];
    if (m->phases == NULL)
        m->phases = hy_pcalloc(cf->pool, sizeof(struct hy_phase_engine));
    return m->phases;
}

int hy_http_phase_add(hy_conf_t *cf, enum hy_phase phase, hy_phase_handler_fn fn)
{
    if (phase == HY_PHASE_FIND_CONFIG || phase == HY_PHASE_POST_REWRITE || phase == HY_PHASE_POST_ACCESS)
        return hy_conf_error(cf, "phase %d takes no module handlers", (int)phase);
    struct hy_phase_engine *e = engine_of(cf);
    if (e->regs[phase] == NULL)
        e->regs[phase] = hy_array_create(cf->pool, 2, sizeof(hy_phase_handler_fn));
    *(hy_phase_handler_fn *)hy_array_push(e->regs[phase]) = fn;
    return 0;
}

/* ---- checkers: what a handler's result means in each phase (nginx's ngx_http_core_*_phase) ---- */

static void finalize(hy_req_t *req, int rc)
{
    if (rc >= 100 && rc <= 999)
        hy_req_error(req, rc);
    else if (rc != HY_DONE && rc != HY_AGAIN)
        hy_req_error(req, 500); /* a handler returned nonsense: answer rather than hang */
}

/* generic: OK → next phase, DECLINED → next handler, anything else stops the walk */
static int check_generic(hy_req_t *req, const step_t *s)
{
    int rc = s->handler(req);
    if (rc == HY_OK)
        return (int)s->next;
    if (rc == HY_DECLINED)
        return (int)(req->_phase + 1);
    finalize(req, rc);
    return -1;
}

/* REWRITE: the server's null location has no location rewrite phase (nginx skips it) */
static int check_rewrite(hy_req_t *req, const step_t *s)
{
    if (req->loc == req->srv->loc)
        return (int)s->next;
    return check_generic(req, s);
}

static void log_cycle(hy_req_t *req, const char *what)
{
    char ctx[512];
    hy_req_log_ctx(req, ctx, sizeof(ctx));
    hy_log_conn(HY_LOG_ERR, req->conn->id, "rewrite or internal redirection cycle %s \"%.*s\"%s", what,
                (int)req->uri.len, req->uri.ptr, ctx);
}

static int check_find_config(hy_req_t *req, const step_t *s)
{
    req->uri_changed = false;
    req->loc = hy_http_find_location(req->srv, req->uri.ptr, req->uri.len);
    if (req->loc == NULL)
        req->loc = req->srv->loc;
    if (req->loc->internal == 1 && !req->is_internal) {
        hy_req_error(req, 404);
        return -1;
    }
    if (req->loc->client_max_body_size > 0 && req->content_length > req->loc->client_max_body_size) {
        char ctx[512];
        hy_req_log_ctx(req, ctx, sizeof(ctx));
        hy_log_conn(HY_LOG_ERR, req->conn->id, "client intended to send too large body: %lld bytes%s",
                    (long long)req->content_length, ctx);
        hy_req_error(req, 413);
        return -1;
    }
    return (int)s->next;
}

static int check_post_rewrite(hy_req_t *req, const step_t *s)
{
    if (!req->uri_changed)
        return (int)s->next;
    if (--req->uri_changes == 0) {
        log_cycle(req, "while processing");
        hy_req_error(req, 500);
        return -1;
    }
    req->is_internal = true;
    return (int)req->_engine->start[HY_PHASE_FIND_CONFIG];
}

/* ACCESS: an answer (a status) ends the request; OK means "allowed by this module" and the others still run
 * (satisfy all, nginx's default) */
static int check_access(hy_req_t *req, const step_t *s)
{
    int rc = s->handler(req);
    if (rc == HY_OK || rc == HY_DECLINED)
        return (int)(req->_phase + 1);
    finalize(req, rc);
    return -1;
}

static int check_post_access(hy_req_t *req, const step_t *s)
{
    return (int)s->next;
}

static int check_content(hy_req_t *req, const step_t *s)
{
    if (req->loc->handler) { /* a location's own content handler (proxy_pass, stub_status...) takes it all */
        int rc = req->loc->handler(req);
        if (rc == HY_DECLINED)
            rc = 404;
        finalize(req, rc == HY_OK ? HY_DONE : rc);
        return -1;
    }
    if (s->handler == NULL) { /* end of the chain: nobody took it */
        bool dir = req->uri.len && req->uri.ptr[req->uri.len - 1] == '/';
        char ctx[512];
        hy_req_log_ctx(req, ctx, sizeof(ctx));
        if (dir) { /* nginx's ngx_http_core_content_phase: index and autoindex declined */
            size_t len;
            const char *path = hy_http_map_uri_to_path(req, req->loc, req->uri, &len);
            hy_log_conn(HY_LOG_ERR, req->conn->id, "directory index of \"%s\" is forbidden%s", path, ctx);
        } else {
            hy_log_conn(HY_LOG_ERR, req->conn->id, "no handler found%s", ctx);
        }
        hy_req_error(req, dir ? 403 : 404);
        return -1;
    }
    int rc = s->handler(req);
    if (rc == HY_DECLINED)
        return (int)(req->_phase + 1);
    finalize(req, rc == HY_OK ? HY_DONE : rc);
    return -1;
}

int hy_http_phases_init(hy_conf_t *cf)
{
    struct hy_phase_engine *e = engine_of(cf);
    uint32_t n = 0;
    for (int p = 0; p < HY_PHASE_COUNT; p++)
        n += (e->regs[p] ? (uint32_t)e->regs[p]->nelts : 0) + 1;
    e->steps = hy_pcalloc(cf->pool, sizeof(step_t) * n);
    uint32_t k = 0;
    for (int p = 0; p < HY_PHASE_COUNT; p++) {
        e->start[p] = k;
        size_t nh = e->regs[p] ? e->regs[p]->nelts : 0;
        hy_phase_handler_fn *fns = nh ? e->regs[p]->elts : NULL;
        checker_fn ck = check_generic;
        switch (p) {
        case HY_PHASE_FIND_CONFIG: ck = check_find_config; break;
        case HY_PHASE_REWRITE: ck = check_rewrite; break;
        case HY_PHASE_POST_REWRITE: ck = check_post_rewrite; break;
        case HY_PHASE_ACCESS: ck = check_access; break;
        case HY_PHASE_POST_ACCESS: ck = check_post_access; break;
        case HY_PHASE_CONTENT: ck = check_content; break;
        default: break;
        }
        for (size_t i = 0; i < nh; i++)
            e->steps[k++] = (step_t){.checker = ck, .handler = fns[i], .phase = (uint8_t)p};
        /* every phase ends with one core step: the phase's own work for the core phases, the "nobody took it"
         * answer for CONTENT, and a pass-through for the others */
        bool core = p == HY_PHASE_FIND_CONFIG || p == HY_PHASE_POST_REWRITE || p == HY_PHASE_POST_ACCESS ||
                    p == HY_PHASE_CONTENT;
        e->steps[k++] = (step_t){.checker = core ? ck : check_post_access, .phase = (uint8_t)p};
    }
    e->num_steps = k;
    for (uint32_t i = 0; i < k; i++) {
        int p = e->steps[i].phase;
        e->steps[i].next = p + 1 < HY_PHASE_COUNT ? e->start[p + 1] : k;
    }
    return 0;
}

static void walk(hy_req_t *req)
{
    const struct hy_phase_engine *e = req->_engine;
    while (req->_phase < e->start[HY_PHASE_LOG]) {
        const step_t *s = &e->steps[req->_phase];
        int next = s->checker(req, s);
        if (next < 0)
            return;
        req->_phase = (uint32_t)next;
    }
}

void hy_http_phases_run(hy_req_t *req, enum hy_phase from)
{
    if (req->_engine == NULL) {
        hy_http_main_conf_t *m = hy_http_main(req->conn->cycle);
        req->_engine = m->phases;
    }
    if (from == HY_PHASE_SERVER_REWRITE)
        req->loc = NULL;
    req->_phase = req->_engine->start[from];
    walk(req);
}

void hy_http_phases_resume(hy_req_t *req)
{
    walk(req);
}

size_t hy_http_phase_handlers(hy_cycle_t *cycle, enum hy_phase phase, hy_phase_handler_fn *fns, size_t cap)
{
    hy_http_main_conf_t *m = hy_http_main(cycle);
    if (m == NULL || m->phases == NULL)
        return 0;
    const struct hy_phase_engine *e = m->phases;
    size_t n = 0;
    uint32_t end = phase + 1 < HY_PHASE_COUNT ? e->start[phase + 1] : e->num_steps;
    for (uint32_t i = e->start[phase]; i < end; i++)
        if (e->steps[i].handler && n < cap)
            fns[n++] = e->steps[i].handler;
    return n;
}

void hy_req_log_phase(hy_req_t *req)
{
    if (req->logged)
        return;
    req->logged = true;
    const struct hy_phase_engine *e = req->_engine;
    if (e == NULL) { /* answered before routing (a 400 from the protocol): the current generation's engine */
        hy_http_main_conf_t *m = hy_http_main(req->conn->cycle);
        e = m ? m->phases : NULL;
    }
    if (e == NULL)
        return;
    for (uint32_t i = e->start[HY_PHASE_LOG]; i < e->num_steps; i++)
        if (e->steps[i].handler)
            e->steps[i].handler(req);
}
