/* regex_captures_test.c — each regex runs once per request: a request through the real request core
 * (hy_req_process) on a configuration loaded by the real parser, with a regex server_name, a regex location and
 * a rewrite, runs exactly three regexes, and $1..$9 and the named captures of all three are right. The
 * protocol is a stub that keeps the response. */
#include <stdlib.h>
#include <unistd.h>
#include <fcntl.h>
#include "../harness.h"
#include "process/process.h"
#include "http/request.h"
#include "http/phases.h"
#include "core/clock.h"
#include "core/regex.h"
#include "event/sock.h"

static char tmpdir[64];

static const char config[] =
    "events {}\n"
    "http {\n"
    "  access_log off;\n"
    "  server { listen 127.0.0.1:18183; server_name default.test; return 200 \"default\"; }\n"
    "  server {\n"
    "    listen 127.0.0.1:18183;\n"
    "    server_name ~^(?<sub>[a-z]+)\\.(\\w+)$;\n"
    "    location /plain/ { return 200 \"plain $1 $sub\"; }\n"
    "    location ~ ^/loc/(\\w+)/ {\n"
    "      rewrite ^/loc/(\\w+)/(?<rest>.*)$ /final/$1;\n"
    "      return 200 \"$uri $1 $2 $sub $rest\";\n"
    "    }\n"
    "  }\n"
    "}\n";

static hy_cycle_t *load(void)
{
    char path[128];
    snprintf(path, sizeof(path), "%s/test.conf", tmpdir);
    FILE *f = fopen(path, "w");
    if (f == NULL)
        return NULL;
    fputs(config, f);
    fclose(f);
    char prefix[80];
    snprintf(prefix, sizeof(prefix), "%s/", tmpdir);
    hy_opts_t opts = {.prefix = prefix, .conf_file = path, .quiet = true};
    return hy_cycle_load(&opts);
}

/* the stub protocol: the response body, flattened */
static char body[512];
static size_t body_len;
static int sent_status;

static void stub_send(hy_req_t *req, bool is_final)
{
    sent_status = req->status;
    for (hy_seg_t *s = req->body.head; s; s = s->next) {
        if (s->kind != HY_SEG_MEM)
            continue;
        size_t n = s->mem.len;
        if (body_len + n > sizeof(body) - 1)
            n = sizeof(body) - 1 - body_len;
        memcpy(body + body_len, s->mem.ptr, n);
        body_len += n;
    }
    hy_outq_clear(&req->body);
    body[body_len] = '\0';
    req->finished = is_final;
}

static void stub_abort(hy_req_t *req)
{
    sent_status = -1;
}

static const hy_conn_ops_t stub_ops = {.send = stub_send, .abort = stub_abort};

static hy_sock_t sock;
static hy_conn_t conn;
static hy_header_t hdrs[1];

/* run GET target with Host: host through the request core; returns the regex executions it took */
static uint64_t run(hy_pool_t *pool, const char *host, const char *target)
{
    body_len = 0;
    body[0] = '\0';
    sent_status = 0;
    hy_pool_reset(pool);
    hy_req_t *r = hy_pcalloc(pool, sizeof(*r));
    r->pool = pool;
    r->conn = &conn;
    r->method = HY_STR("GET");
    r->method_id = HY_M_GET;
    r->version = 11;
    r->target = (hy_str_t){(char *)target, strlen(target)};
    r->content_length = -1;
    r->content_length_n = -1;
    r->last_modified = -1;
    r->srv = conn.addr->default_server;
    r->conn_requests = 1;
    r->start_ms = (uint64_t)hy_clock_time_ms();
    hdrs[0] = (hy_header_t){HY_STR("Host"), (hy_str_t){(char *)host, strlen(host)}};
    r->headers = hdrs;
    r->num_headers = 1;
    uint64_t before = hy_regex_exec_count;
    hy_req_process(r);
    return hy_regex_exec_count - before;
}

static void test_once_per_request(void)
{
    hy_pool_t *pool = hy_pool_create(4096);

    /* server_name regex + location regex + rewrite: three executions, no regex run twice */
    is_int(run(pool, "abc.test", "/loc/x/y/z"), 3);
    is_int(sent_status, 200);
    /* $1/$2 from the rewrite (the last match), $sub from the server name, $rest from the rewrite */
    is_str(body, "/final/x x y/z abc y/z");

    /* a prefix location: the server_name regex and the (failing) location regex run once each; the failed
     * match leaves the server name's captures as $1 */
    is_int(run(pool, "abc.test", "/plain/"), 2);
    is_str(body, "plain abc abc");

    /* an exact server name: no regex at all */
    is_int(run(pool, "default.test", "/loc/x/y"), 0);
    is_str(body, "default");
    hy_pool_destroy(pool);
}

int main(void)
{
    snprintf(tmpdir, sizeof(tmpdir), "/tmp/hy-rxcap-XXXXXX");
    if (mkdtemp(tmpdir) == NULL)
        return 1;
    hy_clock_update();
    hy_cycle_t *c = load();
    ok(c != NULL);
    if (c == NULL)
        return done_testing();
    hy_http_main_conf_t *m = hy_http_main(c);
    conn.addr = m->addrs->elts;
    conn.cycle = c;
    conn.ops = &stub_ops;
    conn.sock = sock;
    conn.id = 1;
    snprintf(conn.peer_text, sizeof(conn.peer_text), "127.0.0.1");
    subtest("server + location + rewrite: each regex once", test_once_per_request);
    char cmd[128];
    snprintf(cmd, sizeof(cmd), "rm -rf %s", tmpdir);
    if (system(cmd) != 0)
        return 1;
    return done_testing();
}
