/* response_head_test.c — the response head is finalised once into a header list, in nginx's order, whatever
 * the protocol: Server, Date, Content-Type, Content-Length, Last-Modified, Location, [framing], ETag, extras,
 * Accept-Ranges; $sent_http_* read it (framing fields a protocol inserted included). */
#include "../harness.h"
#include "../loopback.h"
#include "http/vars.h"

static const char *names(hy_req_t *r)
{
    static char buf[512];
    buf[0] = '\0';
    hy_header_t *h = r->resp_headers->elts;
    for (size_t i = 0; i < r->resp_headers->nelts; i++) {
        if (h[i].name.len == 0)
            continue; /* a framing slot nobody filled */
        strncat(buf, h[i].name.ptr, h[i].name.len);
        strncat(buf, ";", sizeof(buf) - strlen(buf) - 1);
    }
    return buf;
}

static void test_order(void)
{
    hy_cycle_t *c = lb_load("server { listen 127.0.0.1:1; server_tokens off;"
                            " location / { add_header X-A 1; add_header X-B 2; return 302 /elsewhere; } }",
                            false);
    ok(c != NULL);
    hy_pool_t *pool;
    hy_req_t *r = lb_request(c, &pool, "GET", "/", "example.com");
    lb_resp_t *resp = lb_run(r);
    is_int(resp->status, 302);
    ok(r->resp_headers != NULL);
    is_str(names(r), "Server;Date;Content-Type;Content-Length;Location;X-A;X-B;");
    const hy_str_t *loc = hy_req_sent_header(r, HY_STR("location"));
    ok(loc && hy_str_eq(*loc, "http://example.com/elsewhere")); /* made absolute once, by the core */
    const hy_str_t *srv = hy_req_sent_header(r, HY_STR("SERVER"));
    ok(srv && hy_str_eq(*srv, "hayate"));
    ok(hy_req_sent_header(r, HY_STR("x_b")) != NULL); /* '_' matches '-', as $sent_http_x_b */
    ok(hy_req_sent_header(r, HY_STR("Connection")) == NULL); /* framing belongs to the protocol */
    /* a protocol inserts its framing fields at resp_framing_ix: nginx's place, after Location */
    hy_req_insert_header(r, r->resp_framing_ix++, HY_STR("Connection"), HY_STR("keep-alive"));
    is_str(names(r), "Server;Date;Content-Type;Content-Length;Location;Connection;X-A;X-B;");
    /* $sent_http_* reads the list */
    hy_complex_t cv;
    hy_conf_t cf = {.cycle = c, .pool = c->pool, .main_conf = c->http_main_conf};
    ok(hy_vars_compile(&cf, HY_STR("$sent_http_connection|$sent_http_x_a|$sent_http_location"), &cv) == 0);
    hy_str_t out;
    hy_vars_eval(r, &cv, &out);
    ok(hy_str_eq(out, "keep-alive|1|http://example.com/elsewhere"));
    hy_pool_destroy(pool);
}

int main(void)
{
    hy_modules_init();
    subtest("nginx's order, framing slot, $sent_http_*", test_order);
    return done_testing();
}
