/* phases_test.c — the phase engine: the order of phases, DECLINED chains, OK skipping the rest of a phase,
 * statuses, AGAIN/resume, URI changes looping back to FIND_CONFIG (10 → 500), the content chain's 403/404, and
 * which module sits in which phase of a real configuration. Requests run through the real request core
 * (tests/unit/loopback.h). */
#include "../harness.h"
#include "../loopback.h"
#include "http/phases.h"
#include "conf/cycle.h"
#include "handlers/rewrite.h"
#include "conf/cycle.h"

static char trace[256];
static void mark(const char *s)
{
    strncat(trace, s, sizeof(trace) - strlen(trace) - 1);
}

static int again_left, rewrite_loops, content_status;

static int h_post_read_a(hy_req_t *r) { mark("a"); return HY_DECLINED; }
static int h_post_read_b(hy_req_t *r) { mark("b"); return HY_OK; }
static int h_post_read_c(hy_req_t *r) { mark("c"); return HY_DECLINED; } /* skipped: b said OK */
static int h_server_rw(hy_req_t *r) { mark("S"); return HY_DECLINED; }
static int h_rewrite(hy_req_t *r)
{
    mark("R");
    if (rewrite_loops > 0) {
        rewrite_loops--;
        r->uri = HY_STR("/other");
        r->uri_changed = true;
    }
    return HY_DECLINED;
}
static int h_preaccess(hy_req_t *r)
{
    mark("P");
    if (again_left > 0) {
        again_left--;
        return HY_AGAIN;
    }
    return HY_DECLINED;
}
static int h_access1(hy_req_t *r) { mark("A"); return HY_OK; }
static int h_access2(hy_req_t *r) { mark("B"); return HY_DECLINED; } /* still runs: access OK is per module */
static int h_precontent(hy_req_t *r) { mark("T"); return HY_DECLINED; }
static int h_content1(hy_req_t *r) { mark("1"); return HY_DECLINED; }
static int h_content2(hy_req_t *r)
{
    mark("2");
    if (content_status)
        return content_status;
    return HY_DECLINED;
}
static int h_log(hy_req_t *r) { mark("L"); return HY_OK; }

/* An engine of test handlers on a real server/location configuration. */
static struct hy_phase_engine *test_engine(hy_cycle_t *c)
{
    static void *main_conf[64];
    hy_http_main_conf_t *m = hy_pcalloc(c->pool, sizeof(*m));
    main_conf[hy_http_core_module.index] = m;
    hy_conf_t cf = {.cycle = c, .pool = c->pool, .main_conf = main_conf};
    hy_http_phase_add(&cf, HY_PHASE_POST_READ, h_post_read_a);
    hy_http_phase_add(&cf, HY_PHASE_POST_READ, h_post_read_b);
    hy_http_phase_add(&cf, HY_PHASE_POST_READ, h_post_read_c);
    hy_http_phase_add(&cf, HY_PHASE_SERVER_REWRITE, h_server_rw);
    hy_http_phase_add(&cf, HY_PHASE_REWRITE, h_rewrite);
    hy_http_phase_add(&cf, HY_PHASE_PREACCESS, h_preaccess);
    hy_http_phase_add(&cf, HY_PHASE_ACCESS, h_access1);
    hy_http_phase_add(&cf, HY_PHASE_ACCESS, h_access2);
    hy_http_phase_add(&cf, HY_PHASE_PRECONTENT, h_precontent);
    hy_http_phase_add(&cf, HY_PHASE_CONTENT, h_content1);
    hy_http_phase_add(&cf, HY_PHASE_CONTENT, h_content2);
    hy_http_phase_add(&cf, HY_PHASE_LOG, h_log);
    ok(hy_http_phase_add(&cf, HY_PHASE_FIND_CONFIG, h_log) != 0); /* the core's own phases take no handlers */
    hy_http_phases_init(&cf);
    return m->phases;
}

static lb_resp_t *run(hy_cycle_t *c, struct hy_phase_engine *e, const char *target, hy_pool_t **pool)
{
    trace[0] = '\0';
    hy_req_t *r = lb_request(c, pool, "GET", target, "localhost");
    r->_engine = e;
    lb_resp_t *resp = lb_run(r);
    if (resp->finished)
        hy_req_log_phase(r);
    return resp;
}

static void test_order_and_declined(void)
{
    hy_cycle_t *c = lb_load("server { listen 127.0.0.1:1; location / { } location /other { } }", false);
    ok(c != NULL);
    struct hy_phase_engine *e = test_engine(c);
    hy_pool_t *pool;
    lb_resp_t *r = run(c, e, "/x", &pool);
    /* a,b (OK: c skipped) → S → R → P → A, B → T → 1, 2 (both declined) → 404 → log */
    is_str(trace, "abSRPABT12L");
    is_int(r->status, 404);
    hy_pool_destroy(pool);

    r = run(c, e, "/dir/", &pool); /* every content handler declined on a directory URI: 403 */
    is_int(r->status, 403);
    hy_pool_destroy(pool);

    content_status = 418; /* a status from a handler answers the request (error_page would apply) */
    r = run(c, e, "/x", &pool);
    is_int(r->status, 418);
    is_str(trace, "abSRPABT12L");
    content_status = 0;
    hy_pool_destroy(pool);
    hy_cycle_unref(c);
}

static void test_uri_changes(void)
{
    hy_cycle_t *c = lb_load("server { listen 127.0.0.1:1; location / { } location /other { } }", false);
    struct hy_phase_engine *e = test_engine(c);
    hy_pool_t *pool;
    rewrite_loops = 1; /* one URI change: FIND_CONFIG and REWRITE run again */
    lb_resp_t *r = run(c, e, "/x", &pool);
    is_str(trace, "abSRRPABT12L");
    is_int(r->status, 404);
    hy_pool_destroy(pool);

    rewrite_loops = 100; /* nginx: the 11th change is a cycle → 500 */
    r = run(c, e, "/x", &pool);
    is_int(r->status, 500);
    /* the first pass and 10 changes run REWRITE; the 11th change is the cycle; then the log phase */
    is_int((int)(strlen(trace) - strlen("abS")), 11 + 1);
    rewrite_loops = 0;
    hy_pool_destroy(pool);
    hy_cycle_unref(c);
}

static void test_again_resume(void)
{
    hy_cycle_t *c = lb_load("server { listen 127.0.0.1:1; location / { } }", false);
    struct hy_phase_engine *e = test_engine(c);
    hy_pool_t *pool;
    trace[0] = '\0';
    again_left = 1;
    hy_req_t *req = lb_request(c, &pool, "GET", "/x", "localhost");
    req->_engine = e;
    lb_resp_t *r = lb_run(req);
    is_str(trace, "abSRP"); /* stopped at the handler that returned AGAIN */
    ok(!r->finished);
    hy_http_phases_resume(req); /* the same handler runs again, then the rest */
    is_str(trace, "abSRPPABT12");
    ok(r->finished);
    is_int(r->status, 404);
    hy_pool_destroy(pool);
    hy_cycle_unref(c);
}

static void test_real_modules(void)
{
    /* which module sits in which phase with the real module list */
    hy_cycle_t *c = lb_load("server { listen 127.0.0.1:1; location / { return 200 ok; }"
                            " location /t { try_files $uri =404; } }", false);
    hy_phase_handler_fn fns[16];
    is_int((int)hy_http_phase_handlers(c, HY_PHASE_SERVER_REWRITE, fns, 16), 1);
    is_int((int)hy_http_phase_handlers(c, HY_PHASE_REWRITE, fns, 16), 1);
    is_int((int)hy_http_phase_handlers(c, HY_PHASE_PRECONTENT, fns, 16), 1); /* try_files */
    ok(hy_http_phase_handlers(c, HY_PHASE_CONTENT, fns, 16) >= 1);           /* static (last) */
    is_int((int)hy_http_phase_handlers(c, HY_PHASE_LOG, fns, 16), 2);       /* metrics counting, access log */
    is_int((int)hy_http_phase_handlers(c, HY_PHASE_FIND_CONFIG, fns, 16), 0);
    /* a module whose directives are not used takes no step: no rewrite or try_files → only FIND_CONFIG and the
     * content chain run */
    hy_cycle_t *plain = lb_load("server { listen 127.0.0.1:1; location / { } }", false);
    is_int((int)hy_http_phase_handlers(plain, HY_PHASE_SERVER_REWRITE, fns, 16), 0);
    is_int((int)hy_http_phase_handlers(plain, HY_PHASE_REWRITE, fns, 16), 0);
    is_int((int)hy_http_phase_handlers(plain, HY_PHASE_PRECONTENT, fns, 16), 0);
    size_t access_plain = hy_http_phase_handlers(plain, HY_PHASE_ACCESS, fns, 16);
    hy_cycle_unref(plain);
    /* mirror (PRECONTENT, after try_files) and auth_request (ACCESS, last) only when used */
    hy_cycle_t *sub = lb_load("server { listen 127.0.0.1:1; location / { mirror /m; auth_request /a; }"
                              " location /t { try_files $uri =404; } location /m { } location /a { } }", false);
    is_int((int)hy_http_phase_handlers(sub, HY_PHASE_PRECONTENT, fns, 16), 2);
    is_int((int)hy_http_phase_handlers(sub, HY_PHASE_ACCESS, fns, 16), (int)access_plain + 1);
    hy_cycle_unref(sub);
    /* and a request through them: return in the REWRITE phase answers */
    hy_pool_t *pool;
    hy_req_t *req = lb_request(c, &pool, "GET", "/", "localhost");
    lb_resp_t *r = lb_run(req);
    is_int(r->status, 200);
    ok(r->body_len == 2 && memcmp(r->body, "ok", 2) == 0);
    hy_pool_destroy(pool);
    hy_cycle_unref(c);
}

int main(void)
{
    hy_modules_init();
    subtest("phase order and DECLINED chains", test_order_and_declined);
    subtest("URI changes loop to FIND_CONFIG", test_uri_changes);
    subtest("AGAIN and resume", test_again_resume);
    subtest("real modules in their phases", test_real_modules);
    return done_testing();
}
