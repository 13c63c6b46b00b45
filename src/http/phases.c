/* phases.c — the phase engine (see phases.h for the phase table and the result contract), and the request
 * entry points that start it: hy_req_process (target, Host, server), internal and named redirects. */
#include <stdio.h>
#include <string.h>
#include "phases.h"
#include "request.h"
#include "uri.h"
#include "vars.h"
#include "path.h"
#include "../conf/cycle.h"
#include "../core/log.h"
#include "../event/loop.h"

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
    hy_req_log(req, HY_LOG_ERR, "rewrite or internal redirection cycle %s \"%.*s\"", what, (int)req->uri.len,
               req->uri.ptr);
}

static int check_find_config(hy_req_t *req, const step_t *s)
{
    req->uri_changed = false;
    req->loc = hy_http_find_location(req->srv, req->uri.ptr, req->uri.len, hy_req_captures(req));
    hy_vars_named_captures(req); /* a regex location's named captures become $name */
    hy_http_loc_conf_t *slash;
    if ((req->loc == NULL || req->loc->match != HY_LOC_EXACT) &&
        (slash = hy_http_find_auto_redirect(req->srv, req->uri.ptr, req->uri.len)) != NULL) {
        /* nginx: "/x" where "location /x/ { proxy_pass ...; }" is a 301 to "/x/" with the arguments */
        req->loc = slash;
        size_t esc = hy_uri_escape(NULL, req->uri.ptr, req->uri.len);
        char *loc = hy_palloc(req->pool, esc + req->args.len + 2);
        size_t n = hy_uri_escape(loc, req->uri.ptr, req->uri.len);
        loc[n++] = '/';
        if (req->args.len) {
            loc[n++] = '?';
            memcpy(loc + n, req->args.ptr, req->args.len);
            n += req->args.len;
        }
        req->location = (hy_str_t){loc, n};
        hy_req_error(req, 301);
        return -1;
    }
    if (req->loc == NULL)
        req->loc = req->srv->loc;
    req->loc = hy_http_limit_except(req->loc, req->method);
    if (hy_log_max_level >= HY_LOG_DEBUG || req->conn->debug) /* nginx's debug line, to the location's own error_log */
        hy_req_log(req, HY_LOG_DEBUG, "using configuration \"%s%.*s\"",
                   req->loc->match == HY_LOC_EXACT ? "=" : "", (int)req->loc->name.len, req->loc->name.ptr);
    if (req->loc->internal == 1 && !req->is_internal) {
        hy_req_error(req, 404);
        return -1;
    }
    if (req->loc->client_max_body_size > 0 && req->content_length > req->loc->client_max_body_size) {
        hy_req_log(req, HY_LOG_ERR, "client intended to send too large body: %lld bytes",
                   (long long)req->content_length);
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

/* A 401 from the ACCESS phase (nginx's ngx_http_core_auth_delay): with auth_delay, answered only after that
 * long, so that a wrong password costs an attacker time whatever the password scheme. */
typedef struct auth_delay {
    hy_timer_t timer;
    hy_req_t *req;
} auth_delay_t;

static void auth_delay_clear(void *arg)
{
    auth_delay_t *d = arg;
    if (hy_timer_is_linked(&d->timer) && hy_worker_loop)
        hy_timer_unlink(hy_worker_loop, &d->timer);
}

static void auth_delay_done(hy_timer_t *t)
{
    auth_delay_t *d = t->data;
    hy_req_error(d->req, 401);
}

static void unauthorized(hy_req_t *req)
{
    if (req->loc->auth_delay_ms <= 0 || hy_worker_loop == NULL) {
        hy_req_error(req, 401);
        return;
    }
    hy_req_log(req, HY_LOG_INFO, "delaying unauthorized request");
    auth_delay_t *d = hy_pcalloc(req->pool, sizeof(*d));
    d->req = req;
    d->timer.cb = auth_delay_done;
    d->timer.data = d;
    hy_pool_on_clear(req->pool, auth_delay_clear, d); /* the connection may close first */
    hy_timer_link(hy_worker_loop, &d->timer, (uint64_t)req->loc->auth_delay_ms);
}

static void drop_challenge(hy_req_t *req)
{
    hy_array_t *h = req->headers_out;
    if (h == NULL)
        return;
    hy_header_t *e = h->elts;
    size_t k = 0;
    for (size_t i = 0; i < h->nelts; i++)
        if (!hy_str_caseeq(e[i].name, "www-authenticate"))
            e[k++] = e[i];
    h->nelts = k;
}

/* ACCESS (nginx's ngx_http_core_access_phase): DECLINED passes to the next handler. satisfy all: OK means
 * "allowed by this module" and the others still run; any other answer ends the request. satisfy any: OK ends the
 * phase (access granted), a 401 or 403 is remembered (a 401 sticks) and the next handler tried; POST_ACCESS
 * answers with what was remembered when no handler allowed. */
static int check_access(hy_req_t *req, const step_t *s)
{
    if (req->sr != NULL) /* nginx: a subrequest skips the access phase (the main request passed it) */
        return (int)s->next;
    int rc = s->handler(req);
    if (rc == HY_DECLINED)
        return (int)(req->_phase + 1);
    if (rc == HY_AGAIN || rc == HY_DONE)
        return -1;
    if (req->loc->satisfy != HY_SATISFY_ANY) {
        if (rc == HY_OK)
            return (int)(req->_phase + 1);
    } else {
        if (rc == HY_OK) { /* granted: an earlier handler's challenge goes too (nginx) */
            req->access_code = 0;
            drop_challenge(req);
            return (int)s->next;
        }
        if (rc == 401 || rc == 403) {
            if (req->access_code != 401)
                req->access_code = rc;
            return (int)(req->_phase + 1);
        }
    }
    if (rc == 401)
        unauthorized(req);
    else
        finalize(req, rc);
    return -1;
}

static int check_post_access(hy_req_t *req, const step_t *s)
{
    int code = req->access_code;
    if (code == 0)
        return (int)s->next;
    req->access_code = 0;
    if (code == 403)
        hy_req_log(req, HY_LOG_ERR, "access forbidden by rule");
    if (code == 401)
        unauthorized(req);
    else
        hy_req_error(req, code);
    return -1;
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
        if (dir) { /* nginx's ngx_http_core_content_phase: index and autoindex declined */
            size_t len;
            const char *path = hy_http_map_uri_to_path(req, req->loc, req->uri, &len);
            hy_req_log(req, HY_LOG_ERR, "directory index of \"%s\" is forbidden", path);
        } else {
            hy_req_log(req, HY_LOG_ERR, "no handler found");
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
        /* The core's own steps: FIND_CONFIG and POST_REWRITE do their work; CONTENT ends with the "nobody took
         * it" answer. Other phases need no step of their own: a DECLINED from their last handler falls through
         * to the next phase's first step, and a phase without handlers takes no step at all (nginx's layout). */
        if (p == HY_PHASE_FIND_CONFIG || p == HY_PHASE_POST_REWRITE || p == HY_PHASE_CONTENT ||
            (p == HY_PHASE_POST_ACCESS && e->regs[HY_PHASE_ACCESS] && e->regs[HY_PHASE_ACCESS]->nelts))
            e->steps[k++] = (step_t){.checker = ck, .phase = (uint8_t)p};
        if (p == HY_PHASE_LOG) /* the log phase is run by hy_req_log_phase, never walked */
            break;
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

/* ---- starting and redirecting requests ---- */

static const hy_str_t *find_header(hy_req_t *req, const char *name, int *count)
{
    const hy_str_t *v = NULL;
    *count = 0;
    for (size_t i = 0; i < req->num_headers; i++)
        if (hy_str_caseeq(req->headers[i].name, name)) {
            if (v == NULL)
                v = &req->headers[i].value;
            (*count)++;
        }
    return v;
}

static void log_bad(hy_req_t *req, const char *what)
{
    hy_req_log(req, HY_LOG_INFO, "%s", what);
}

/* Validate host[:port] and make it req->host (lower-cased copy, port and trailing dot off); -1 when invalid. */
static int set_host(hy_req_t *req, hy_str_t h)
{
    char *copy = hy_pstrndup(req->pool, h.ptr, h.len);
    ssize_t hl = hy_http_validate_host(copy, h.len);
    if (hl < 0)
        return -1;
    req->host = (hy_str_t){copy, (size_t)hl};
    return 0;
}

/* max_headers of the request's server: header fields as received (the dropped invalid ones not counted), the
 * cookie fields of HTTP/2, which nginx keeps apart, neither */
static bool too_many_headers(const hy_req_t *req)
{
    size_t n = req->num_headers - req->implied_headers;
    if (n <= (size_t)req->srv->max_headers)
        return false;
    for (size_t i = 0; req->version >= 20 && i < req->num_headers; i++)
        if (hy_str_caseeq(req->headers[i].name, "cookie"))
            n--;
    return n > (size_t)req->srv->max_headers;
}

void hy_req_process(hy_req_t *req)
{
    hy_http_srv_conf_t *dsrv = req->conn->addr->default_server;
    req->srv = dsrv;
    req->uri_changes = HY_MAX_URI_CHANGES + 1; /* the default server's error_page applies to the 400s below (nginx) */
    /* nginx answers TRACE, and CONNECT to an authority, with 405 before anything else (a CONNECT with any other
     * target is a bad request); the connection is not kept: keep-alive is not decided yet at that point */
    if (req->method_id == HY_M_TRACE || req->method_id == HY_M_CONNECT) {
        bool authority = false;
        if (req->method_id == HY_M_CONNECT) { /* host:port, RFC 9112 §3.2.3 */
            const char *colon = req->target.len ? memrchr(req->target.ptr, ':', req->target.len) : NULL;
            char *copy = hy_pstrndup(req->pool, req->target.ptr, req->target.len);
            authority = colon && colon > req->target.ptr && colon + 1 < req->target.ptr + req->target.len &&
                        req->target.ptr[0] != '/' && hy_http_validate_host(copy, req->target.len) > 0;
            for (const char *p = colon ? colon + 1 : NULL; authority && p < req->target.ptr + req->target.len; p++)
                authority = *p >= '0' && *p <= '9';
        }
        req->keepalive = false;
        log_bad(req, req->method_id == HY_M_TRACE ? "client sent TRACE method" : "client sent CONNECT method");
        hy_req_error(req, req->method_id == HY_M_TRACE || authority ? 405 : 400);
        return;
    }
    /* request-target → decoded, normalised path (nginx's ngx_http_parse_complex_uri) */
    char *path = hy_palloc(req->pool, req->target.len + 2);
    size_t path_len = 0;
    hy_str_t abs_host = HY_STR_NULL;
    if (hy_http_parse_target(req->method, req->target, dsrv->merge_slashes != 0, path, &path_len, &req->args,
                             &abs_host) != 0) {
        req->uri = (hy_str_t){path, 0}; /* nginx: $uri is then empty (logged as such), not "not found" */
        log_bad(req, "client sent invalid request");
        hy_req_error(req, 400);
        return;
    }
    req->uri = (hy_str_t){path, path_len};
    /* Host (RFC 9112 §3.2): required on 1.1, exactly one, valid; an absolute-form authority wins */
    int nhost;
    const hy_str_t *host = find_header(req, "host", &nhost);
    if (nhost > 1) {
        log_bad(req, "client sent duplicate host header");
        hy_req_error(req, 400);
        return;
    }
    if (host == NULL && req->version >= 11) {
        log_bad(req, "client sent HTTP/1.1 request without \"Host\" header");
        hy_req_error(req, 400);
        return;
    }
    /* the Host header is validated whatever the target's form (its bytes reach $http_host and the logs); an
     * absolute-form authority (checked by hy_http_parse_target) then wins for routing, as in nginx */
    if ((host != NULL && set_host(req, *host) < 0) || (abs_host.ptr != NULL && set_host(req, abs_host) < 0)) {
        log_bad(req, "client sent invalid host header");
        hy_req_error(req, 400);
        return;
    }
    /* known headers, in one pass (the first of each wins) */
    const hy_str_t *authorization = NULL, *content_range = NULL; /* only checked for being unique (nginx 1.23+) */
    for (size_t i = 0; i < req->num_headers; i++) {
        const hy_str_t *n = &req->headers[i].name, *v = &req->headers[i].value;
        const hy_str_t **slot = NULL;
        switch (n->len) {
        case 5:
            if (hy_str_caseeq(*n, "range"))
                slot = &req->h_range;
            break;
        case 6:
            if (hy_str_caseeq(*n, "expect"))
                slot = &req->h_expect;
            break;
        case 8:
            if (hy_str_caseeq(*n, "if-match"))
                slot = &req->h_if_match;
            else if (hy_str_caseeq(*n, "if-range"))
                slot = &req->h_if_range;
            break;
        case 10:
            if (hy_str_caseeq(*n, "user-agent"))
                slot = &req->h_user_agent;
            break;
        case 13:
            if (hy_str_caseeq(*n, "if-none-match"))
                slot = &req->h_if_none_match;
            else if (hy_str_caseeq(*n, "authorization"))
                slot = &authorization;
            else if (hy_str_caseeq(*n, "content-range"))
                slot = &content_range;
            break;
        case 17:
            if (hy_str_caseeq(*n, "if-modified-since"))
                slot = &req->h_if_modified_since;
            break;
        case 19:
            if (hy_str_caseeq(*n, "if-unmodified-since"))
                slot = &req->h_if_unmodified_since;
            break;
        default:
            break;
        }
        if (slot && *slot == NULL) {
            *slot = v;
        } else if (slot && slot != &req->h_range && slot != &req->h_user_agent) {
            /* nginx's unique header lines (the conditionals, Expect, Authorization, Content-Range): a second one
             * is 400 */
            char what[512];
            snprintf(what, sizeof(what),
                     "client sent duplicate header line: \"%.*s: %.*s\", previous value: \"%.*s: %.*s\"",
                     (int)n->len, n->ptr, (int)v->len, v->ptr, (int)n->len, n->ptr, (int)(*slot)->len,
                     (*slot)->ptr);
            log_bad(req, what);
            hy_req_error(req, 400);
            return;
        }
    }

    req->srv = hy_http_find_server(req->conn->addr, req->host.ptr, req->host.len, hy_req_captures(req));
    hy_vars_named_captures(req); /* named captures of a regex server_name become $name */
    req->uri_changes = HY_MAX_URI_CHANGES + 1;
    if (too_many_headers(req)) {
        log_bad(req, "client sent too many header lines");
        hy_req_error(req, 494); /* "400 Bad Request" with nginx's "Request Header Or Cookie Too Large" page */
        return;
    }
    if (req->conn->is_plain_on_tls) { /* nginx: after the server is known, so its error_page 497 applies */
        log_bad(req, "client sent plain HTTP request to HTTPS port");
        hy_req_error(req, 497);
        return;
    }
    hy_http_phases_run(req, HY_PHASE_POST_READ);
}

/* An ACCESS handler's challenge (WWW-Authenticate) outlives an error_page redirect, as in nginx, whose
 * internal redirects keep the response headers: a custom 401 page still asks for credentials. */
static void keep_challenge(hy_req_t *req)
{
    hy_array_t *h = req->headers_out;
    req->headers_out = NULL;
    if (h == NULL || req->err_status == 0) /* not an error_page redirect */
        return;
    hy_header_t *e = h->elts;
    for (size_t i = 0; i < h->nelts; i++)
        if (hy_str_caseeq(e[i].name, "www-authenticate"))
            hy_req_add_header(req, e[i].name, e[i].value);
}

/* the response state a redirect starts over with (nginx keeps headers_out, but hayate's handlers have not
 * sent anything yet when they redirect, so only what they set must go) */
static void reset_response(hy_req_t *req)
{
    bool keep = req->redirect_keeps_head;
    req->redirect_keeps_head = false;
    req->status = 0;
    req->status_line = HY_STR_NULL;
    if (!keep)
        req->content_type = HY_STR_NULL;
    req->content_length_n = -1;
    req->last_modified = -1;
    req->etag = HY_STR_NULL;
    if (req->err_status == 0) /* an error_page redirect keeps the Location (nginx keeps headers_out) */
        req->location = HY_STR_NULL;
    req->file = NULL;
    if (!keep)
        keep_challenge(req);
    req->accept_ranges = false;
    req->header_only = false;
    hy_outq_clear(&req->body);
}

void hy_req_internal_redirect(hy_req_t *req, hy_str_t uri, hy_str_t args)
{
    req->uri = uri;
    req->args = args;
    if (--req->uri_changes <= 0) {
        log_cycle(req, "while internally redirecting to");
        req->uri_changes = 0;
        hy_req_error(req, 500);
        return;
    }
    req->is_internal = true;
    reset_response(req);
    hy_http_phases_run(req, HY_PHASE_SERVER_REWRITE);
}

bool hy_req_post_action(hy_req_t *req)
{
    const hy_http_loc_conf_t *lc = req->loc ? req->loc : req->srv ? req->srv->loc : NULL;
    if (req->post_action || lc == NULL || lc->post_action.len == 0 || req->uri.ptr == NULL)
        return false;
    req->post_action = true;
    req->err_status = 0;
    req->finished = false;
    req->filters_started = false;
    if (req->method_id != HY_M_HEAD) {
        req->method_id = HY_M_GET;
        req->method = HY_STR("GET");
    }
    hy_str_t to = lc->post_action;
    if (to.ptr[0] == '@') {
        hy_req_named_redirect(req, to);
    } else {
        hy_str_t path, args;
        hy_req_split_args(to, &path, &args);
        hy_req_internal_redirect(req, path, args);
    }
    return true;
}

void hy_req_named_redirect(hy_req_t *req, hy_str_t name)
{
    hy_http_loc_conf_t *named = hy_http_find_named(req->srv, name.ptr, name.len);
    if (named == NULL) {
        hy_req_log(req, HY_LOG_ERR, "could not find named location \"%.*s\"", (int)name.len, name.ptr);
        hy_req_error(req, 500);
        return;
    }
    if (--req->uri_changes <= 0) { /* nginx names the location here, not the URI */
        hy_req_log(req, HY_LOG_ERR, "rewrite or internal redirection cycle while redirect to named location \"%.*s\"",
                   (int)name.len, name.ptr);
        req->uri_changes = 0;
        hy_req_error(req, 500);
        return;
    }
    req->is_internal = true;
    reset_response(req);
    req->loc = hy_http_limit_except(named, req->method);
    hy_http_phases_run(req, HY_PHASE_REWRITE);
}
