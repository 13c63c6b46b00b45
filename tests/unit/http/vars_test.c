/* vars_test.c — the variable engine: complex-value compilation (literals, $name, ${name}, captures, errors),
 * every builtin variable's formatting on a hand-built request, caching, and map's matching order (exact, then
 * wildcard hostnames, then regexes in order, then default), all through a real config parse. */
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>
#include <arpa/inet.h>
#include "../harness.h"
#include "http/vars.h"
#include "conf/cycle.h"
#include "core/clock.h"
#include "event/sock.h"

static hy_cycle_t *cycle;
static hy_conf_t cf;
static char prefix[] = "/tmp/hy-vars-test-XXXXXX";

static const char config[] =
    "events { }\n"
    "http {\n"
    "  map $arg_k $m {\n"
    "    default dflt;\n"
    "    exact ex;\n"
    "    ~^exa regex1;\n"
    "    ~^e(x)(.*) r2-$2-$1;\n"
    "    ~*^UP up;\n"
    "  }\n"
    "  map $http_host $h {\n"
    "    hostnames;\n"
    "    *.example.com wc;\n"
    "    www.example.com exact;\n"
    "    ~example re;\n"
    "    www.example.* tail;\n"
    "  }\n"
    "  map $arg_a$arg_b $cat { 12 twelve; }\n"
    "  log_format t '$remote_addr $m';\n"
    "  access_log off;\n"
    "  server { listen 127.0.0.1:1; server_name srv.test alt.test; root /srv/www; location /al/ { alias /data/; } }\n"
    "}\n";

static int setup(void)
{
    if (mkdtemp(prefix) == NULL)
        return -1;
    hy_clock_update();
    hy_pool_t *pool = hy_pool_create(16384);
    cycle = hy_pcalloc(pool, sizeof(*cycle));
    cycle->pool = pool;
    cycle->refs = 1;
    char *p = hy_palloc(pool, strlen(prefix) + 2);
    snprintf(p, strlen(prefix) + 2, "%s/", prefix);
    cycle->prefix = cycle->conf_prefix = p;
    cycle->conf_file = "(test)";
    cycle->test_only = true;
    int nmod = hy_modules_init();
    cycle->core_conf = hy_pcalloc(pool, sizeof(void *) * (size_t)nmod);
    for (int i = 0; i < nmod; i++)
        if (hy_modules[i]->create_core_conf)
            cycle->core_conf[i] = hy_modules[i]->create_core_conf(cycle);
    cf.cycle = cycle;
    cf.pool = pool;
    cf.ctx = HY_CTX_MAIN;
    if (hy_conf_parse_string(&cf, "test.conf", config, strlen(config)) != 0)
        return -1;
    cf.main_conf = cycle->http_main_conf; /* to look up indexes after the parse */
    cf.ctx = HY_CTX_HTTP;
    return 0;
}

/* a request as h1 would leave it */
static hy_sock_t sock;
static hy_conn_t conn;
static hy_header_t hdrs[8];

static hy_req_t *new_req(hy_pool_t *pool, const char *target, const char *uri, const char *args)
{
    hy_req_t *r = hy_pcalloc(pool, sizeof(*r));
    r->pool = pool;
    r->conn = &conn;
    r->method = HY_STR("GET");
    r->method_id = HY_M_GET;
    r->version = 11;
    r->target = (hy_str_t){(char *)target, strlen(target)};
    r->uri = (hy_str_t){(char *)uri, strlen(uri)};
    r->args = args ? (hy_str_t){(char *)args, strlen(args)} : HY_STR_NULL;
    r->content_length = -1;
    r->content_length_n = -1;
    r->last_modified = -1;
    hy_http_main_conf_t *m = hy_http_main(cycle);
    r->srv = ((hy_http_srv_conf_t **)m->servers->elts)[0];
    r->request_line = HY_STR("GET /x HTTP/1.1");
    r->conn_requests = 3;
    r->start_ms = (uint64_t)hy_clock_time_ms() - 1234;
    return r;
}

static hy_str_t var(hy_req_t *r, const char *name)
{
    int idx = hy_vars_index(&cf, (hy_str_t){(char *)name, strlen(name)});
    if (idx < 0)
        return HY_STR("<error>");
    const hy_var_value_t *v = hy_var_get(r, idx);
    return v->not_found ? HY_STR("<nf>") : (hy_str_t){v->ptr, v->len};
}

#define is_var(r, name, want)                                                                                          \
    do {                                                                                                               \
        hy_str_t got_ = var((r), (name));                                                                              \
        is_strn(got_.ptr, got_.len, (want));                                                                           \
    } while (0)

static void test_compile(void)
{
    hy_complex_t cv;
    is_int(hy_vars_compile(&cf, HY_STR("plain text"), &cv), 0);
    is_int(cv.nparts, 0);
    is_strn(cv.value.ptr, cv.value.len, "plain text");
    is_int(hy_vars_compile(&cf, HY_STR("a$uri${args}b$1c"), &cv), 0);
    is_int(cv.nparts, 6);
    is_int(cv.parts[0].kind, HY_CV_LITERAL);
    is_strn(cv.parts[0].lit.ptr, cv.parts[0].lit.len, "a");
    is_int(cv.parts[1].kind, HY_CV_VAR);
    is_int(cv.parts[2].kind, HY_CV_VAR);
    is_int(cv.parts[3].kind, HY_CV_LITERAL);
    is_int(cv.parts[4].kind, HY_CV_CAPTURE);
    is_int(cv.parts[4].index, 1);
    is_strn(cv.parts[5].lit.ptr, cv.parts[5].lit.len, "c");
    /* the same name twice gets the same index */
    is_int(hy_vars_index(&cf, HY_STR("uri")), hy_vars_index(&cf, HY_STR("uri")));
    /* errors (messages on stderr, nginx's wording) */
    fprintf(stderr, "# three expected config errors follow\n");
    is_int(hy_vars_compile(&cf, HY_STR("x ${uri"), &cv), -1);
    is_int(hy_vars_compile(&cf, HY_STR("x $ y"), &cv), -1);
    is_int(hy_vars_compile(&cf, HY_STR("$no_such_variable"), &cv), -1); /* after the http block: at once */
}

static void test_builtins(void)
{
    hy_pool_t *pool = hy_pool_create(4096);
    hy_req_t *r = new_req(pool, "/dir/a.txt?x=1&Y=%41&z", "/dir/a.txt", "x=1&Y=%41&z");
    hdrs[0] = (hy_header_t){HY_STR("Host"), HY_STR("Srv.Test:8080")};
    hdrs[1] = (hy_header_t){HY_STR("User-Agent"), HY_STR("ua \"1\"")};
    hdrs[2] = (hy_header_t){HY_STR("X-Forwarded-For"), HY_STR("1.1.1.1")};
    hdrs[3] = (hy_header_t){HY_STR("x-forwarded-for"), HY_STR("2.2.2.2")};
    hdrs[4] = (hy_header_t){HY_STR("Cookie"), HY_STR("a=1; sid = abc ; z=9")};
    hdrs[5] = (hy_header_t){HY_STR("Authorization"), HY_STR("Basic dXNlcjpwYXNzOndvcmQ=")};
    hdrs[6] = (hy_header_t){HY_STR("Content-Length"), HY_STR("42")};
    r->headers = hdrs;
    r->num_headers = 7;
    r->host = HY_STR("srv.test");
    is_var(r, "remote_addr", "192.0.2.7");
    is_var(r, "remote_port", "54321");
    hy_str_t bin = var(r, "binary_remote_addr");
    is_int(bin.len, 4);
    ok(bin.len == 4 && memcmp(bin.ptr, "\xc0\x00\x02\x07", 4) == 0);
    is_var(r, "remote_user", "user");
    is_var(r, "request", "GET /x HTTP/1.1");
    is_var(r, "request_method", "GET");
    is_var(r, "request_uri", "/dir/a.txt?x=1&Y=%41&z");
    is_var(r, "uri", "/dir/a.txt");
    is_var(r, "document_uri", "/dir/a.txt");
    is_var(r, "args", "x=1&Y=%41&z");
    is_var(r, "query_string", "x=1&Y=%41&z");
    is_var(r, "is_args", "?");
    is_var(r, "arg_x", "1");
    is_var(r, "arg_y", "%41"); /* names match case-insensitively, values are not decoded */
    is_var(r, "arg_z", "<nf>"); /* no '=' */
    is_var(r, "http_user_agent", "ua \"1\"");
    is_var(r, "http_host", "Srv.Test:8080");
    is_var(r, "http_x_forwarded_for", "1.1.1.1, 2.2.2.2"); /* nginx 1.22 joins these */
    is_var(r, "http_nope", "<nf>");
    is_var(r, "cookie_sid", "abc ");
    is_var(r, "cookie_a", "1");
    is_var(r, "cookie_nope", "<nf>");
    is_var(r, "content_length", "42");
    is_var(r, "content_type", "<nf>");
    is_var(r, "host", "srv.test");
    is_var(r, "server_name", "srv.test");
    is_var(r, "server_port", "8080");
    is_var(r, "server_protocol", "HTTP/1.1");
    is_var(r, "scheme", "http");
    is_var(r, "https", "");
    is_var(r, "status", "000");
    r->status = 404;
    is_var(r, "status", "404"); /* not cached */
    r->body_bytes_sent = 153;
    r->bytes_sent = 300;
    r->request_length = 77;
    is_var(r, "body_bytes_sent", "153");
    is_var(r, "bytes_sent", "300");
    is_var(r, "request_length", "77");
    is_var(r, "connection", "17");
    is_var(r, "connection_requests", "3");
    char pid[16];
    snprintf(pid, sizeof(pid), "%d", (int)getpid());
    is_var(r, "pid", pid);
    is_var(r, "nginx_version", HY_NGINX_COMPAT_VERSION);
    is_var(r, "hayate_version", HY_VERSION);
    is_var(r, "document_root", "/srv/www");
    is_var(r, "request_filename", "/srv/www/dir/a.txt");
    is_var(r, "upstream_addr", "<nf>");
    is_var(r, "upstream_http_server", "<nf>");
    is_var(r, "sent_http_content_type", "<nf>");
    r->content_type = HY_STR("text/plain");
    r->content_length_n = 3;
    is_var(r, "sent_http_content_type", "text/plain");
    is_var(r, "sent_http_content_length", "3");
    hy_str_t rt = var(r, "request_time");
    is_strn(rt.ptr, rt.len, "1.234");
    hy_str_t ms = var(r, "msec");
    ok(ms.len > 4 && ms.ptr[ms.len - 4] == '.');
    hy_str_t tl = var(r, "time_local");
    is_int(tl.len, 26);
    ok(tl.len == 26 && tl.ptr[2] == '/' && tl.ptr[6] == '/' && tl.ptr[11] == ':' && tl.ptr[20] == ' ');
    hy_str_t iso = var(r, "time_iso8601");
    is_int(iso.len, 25);
    ok(iso.len == 25 && iso.ptr[4] == '-' && iso.ptr[10] == 'T' && iso.ptr[22] == ':');
    hy_str_t id1 = var(r, "request_id");
    is_int(id1.len, 32);
    hy_str_t id1b = var(r, "request_id");
    ok(id1.ptr == id1b.ptr); /* cached within the request */
    /* complex value over several variables */
    hy_complex_t cv;
    hy_vars_compile(&cf, HY_STR("$request_method ${uri}?$args!"), &cv);
    hy_str_t out;
    hy_vars_eval(r, &cv, &out);
    is_strn(out.ptr, out.len, "GET /dir/a.txt?x=1&Y=%41&z!");

    /* a second request on the same connection: fresh cache, no args, host from server_name, alias */
    hy_pool_t *pool2 = hy_pool_create(4096);
    hy_req_t *r2 = new_req(pool2, "/al/f", "/al/f", NULL);
    r2->loc = hy_http_find_location(r2->srv, "/al/f", 5, NULL);
    is_var(r2, "args", "<nf>");
    is_var(r2, "is_args", "");
    is_var(r2, "host", "srv.test");
    is_var(r2, "remote_user", "<nf>");
    is_var(r2, "request_filename", "/data/f");
    hy_str_t id2 = var(r2, "request_id");
    ok(id2.len == 32 && memcmp(id1.ptr, id2.ptr, 32) != 0);
    hy_pool_destroy(pool2);
    hy_pool_destroy(pool);
}

static hy_str_t map_for(const char *mapvar, const char *args, const char *host)
{
    static hy_pool_t *pool;
    if (pool)
        hy_pool_destroy(pool);
    pool = hy_pool_create(4096);
    char *a = hy_pstrndup(pool, args, strlen(args));
    hy_req_t *r = new_req(pool, "/", "/", a);
    static hy_header_t h[1];
    h[0] = (hy_header_t){HY_STR("Host"), {(char *)host, strlen(host)}};
    r->headers = h;
    r->num_headers = 1;
    return var(r, mapvar);
}

#define is_map(mapvar, args, host, want)                                                                               \
    do {                                                                                                               \
        hy_str_t got_ = map_for((mapvar), (args), (host));                                                             \
        is_strn(got_.ptr, got_.len, (want));                                                                           \
    } while (0)

static void test_map(void)
{
    is_map("m", "k=exact", "", "ex");       /* exact beats the regexes that also match */
    is_map("m", "k=EXACT", "", "ex");       /* exact keys are case-insensitive */
    is_map("m", "k=exam", "", "regex1");    /* regexes in order: the first that matches */
    is_map("m", "k=exo", "", "r2-o-x");     /* captures in the value */
    is_map("m", "k=ups", "", "up");         /* ~* is caseless */
    is_map("m", "k=other", "", "dflt");
    is_map("m", "", "", "dflt");
    is_map("h", "", "www.example.com", "exact");
    is_map("h", "", "a.example.com", "wc");  /* wildcard beats the regex */
    is_map("h", "", "www.example.org", "tail");
    is_map("h", "", "example.net", "re");
    is_map("h", "", "a.example.com.", "wc"); /* trailing dot ignored with hostnames */
    is_map("h", "", "none.test", "");        /* no default: empty, but found */
    is_map("cat", "a=1&b=2", "", "twelve");
}

int main(void)
{
    if (setup() != 0) {
        printf("not ok - setup\n0 passed, 1 failed\n");
        return 1;
    }
    memset(&sock, 0, sizeof(sock));
    struct sockaddr_in *sin = (struct sockaddr_in *)&sock.peer;
    sin->sin_family = AF_INET;
    sin->sin_port = htons(54321);
    inet_pton(AF_INET, "192.0.2.7", &sin->sin_addr);
    sock.io.fd = -1;
    conn.id = 17;
    conn.sock = sock;
    conn.cycle = cycle;
    snprintf(conn.peer_text, sizeof(conn.peer_text), "192.0.2.7");
    conn.local_port = 8080;
    subtest("compile", test_compile);
    subtest("builtin variables", test_builtins);
    subtest("map matching order", test_map);
    char cmd[128];
    snprintf(cmd, sizeof(cmd), "rm -rf %s", prefix);
    if (system(cmd) != 0)
        printf("# could not remove %s\n", prefix);
    return done_testing();
}
