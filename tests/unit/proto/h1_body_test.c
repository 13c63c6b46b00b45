/* h1_body_test.c — request bodies read through the protocol (http/body.h) on a real HTTP/1 connection: the
 * server side of a socketpair runs the real accept path, h1 and the request core; locations get test content
 * handlers that read the body buffered (memory, then a temp file past client_body_buffer_size) or streamed
 * (taking 7 bytes at a time, so the protocol must pause and resume). Content-Length and chunked bodies,
 * 100-continue, client_max_body_size, malformed chunks, client_body_timeout, client_body_in_file_only, and a
 * pipelined request after a body. */
#include <dirent.h>
#include <poll.h>
#include <stdarg.h>
#include <sys/stat.h>
#include "../harness.h"
#include "../loopback.h"
#include "http/body.h"
#include "http/phases.h"
#include "proto/accept.h"
#include "core/clock.h"

static hy_loop_t loop;
static hy_cycle_t *cyc;
static char tmp[64];
static int cfd = -1; /* the client's end */
static int stream_calls;
static hy_req_t *stream_req;
static hy_defer_t resume_defer;

static uint32_t sum_bytes(uint32_t h, const char *p, size_t n)
{
    for (size_t i = 0; i < n; i++)
        h = h * 31 + (unsigned char)p[i];
    return h;
}

static void respond(hy_req_t *req, const char *fmt, ...)
{
    char *buf = hy_palloc(req->pool, 256);
    va_list ap;
    va_start(ap, fmt);
    int n = vsnprintf(buf, 256, fmt, ap);
    va_end(ap);
    req->status = 200;
    req->content_type = HY_STR("text/plain");
    req->content_length_n = n;
    hy_outq_push_mem(&req->body, buf, (size_t)n, NULL, NULL);
    hy_req_send(req, true);
}

static void on_buffered(hy_req_t *req, const char *err)
{
    hy_req_body_t *b = req->body_in;
    if (err) {
        hy_req_error(req, b->status);
        return;
    }
    uint32_t h = 0;
    if (b->fd >= 0) {
        char chunk[4096];
        ssize_t n;
        while ((n = read(b->fd, chunk, sizeof(chunk))) > 0)
            h = sum_bytes(h, chunk, (size_t)n);
    } else {
        h = sum_bytes(h, b->mem, b->mem_len);
    }
    struct stat st;
    bool exists = b->path && stat(b->path, &st) == 0;
    respond(req, "size=%lld file=%d sum=%u exists=%d", (long long)b->received, b->fd >= 0, h, exists);
}

static int buffer_handler(hy_req_t *req)
{
    hy_req_read_body(req, HY_BODY_BUFFER, on_buffered);
    return HY_DONE;
}

static uint32_t stream_sum;
static int64_t stream_size;

static void on_resume(hy_defer_t *d)
{
    if (stream_req)
        hy_req_body_resume(stream_req);
}

static void on_stream(hy_req_t *req, const char *err)
{
    hy_req_body_t *b = req->body_in;
    stream_calls++;
    if (err) {
        stream_req = NULL;
        hy_req_error(req, b->status);
        return;
    }
    if (b->complete) {
        stream_req = NULL;
        respond(req, "size=%lld sum=%u", (long long)stream_size, stream_sum);
        return;
    }
    size_t n = b->data_len < 7 ? b->data_len : 7; /* a slow consumer: the protocol must hold the rest */
    stream_sum = sum_bytes(stream_sum, b->data, n);
    stream_size += (int64_t)n;
    hy_req_body_consume(req, n);
    if (b->data_len > 0) { /* more waiting: take it on the next loop turn */
        stream_req = req;
        hy_defer(&loop, &resume_defer);
    }
}

static int stream_handler(hy_req_t *req)
{
    stream_sum = 0;
    stream_size = 0;
    hy_req_read_body(req, HY_BODY_STREAM, on_stream);
    return HY_DONE;
}

/* a fresh connection: the server end goes through the real accept path */
static void connect_client(void)
{
    if (cfd >= 0)
        close(cfd);
    int sv[2];
    socketpair(AF_UNIX, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0, sv);
    static hy_listener_t l;
    hy_http_main_conf_t *m = hy_http_main(cyc);
    l.loop = &loop;
    l.data = m->addrs->elts;
    struct sockaddr_storage peer = {.ss_family = AF_UNIX};
    hy_proto_accept(&l, sv[0], &peer, sizeof(sa_family_t));
    cfd = sv[1];
}

static void send_all(const char *p, size_t n)
{
    while (n > 0) {
        ssize_t w = write(cfd, p, n);
        if (w < 0) {
            hy_loop_run_once(&loop, 10); /* let the server drain */
            continue;
        }
        p += w;
        n -= (size_t)w;
        hy_loop_run_once(&loop, 0);
    }
}

static void send_str(const char *s)
{
    send_all(s, strlen(s));
}

/* Run the server until `want` complete responses (by Content-Length) arrived, or the connection closed. */
static char resp[65536];
static size_t resp_len;
static int read_responses(int want, int max_ms)
{
    resp_len = 0;
    int got = 0;
    for (int t = 0; t < max_ms / 5 && got < want; t++) {
        hy_loop_run_once(&loop, 5);
        ssize_t n = read(cfd, resp + resp_len, sizeof(resp) - resp_len - 1);
        if (n == 0)
            break;
        if (n > 0)
            resp_len += (size_t)n;
        resp[resp_len] = '\0';
        got = 0;
        const char *p = resp;
        for (;;) {
            const char *e = strstr(p, "\r\n\r\n");
            if (e == NULL)
                break;
            if (strncmp(p, "HTTP/1.1 100", 12) == 0) {
                p = e + 4;
                continue;
            }
            const char *cl = strstr(p, "Content-Length: ");
            long len = cl && cl < e ? strtol(cl + 16, NULL, 10) : 0;
            if ((size_t)(e + 4 + len - resp) > resp_len)
                break;
            got++;
            p = e + 4 + len;
        }
    }
    return got;
}

static char *make_body(size_t n)
{
    char *b = malloc(n);
    for (size_t i = 0; i < n; i++)
        b[i] = (char)('a' + (i * 7) % 26);
    return b;
}

static void post(const char *uri, const char *body, size_t n, bool chunked, const char *extra)
{
    char head[512];
    int hl;
    if (chunked)
        hl = snprintf(head, sizeof(head), "POST %s HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n%s\r\n", uri,
                      extra);
    else
        hl = snprintf(head, sizeof(head), "POST %s HTTP/1.1\r\nHost: x\r\nContent-Length: %zu\r\n%s\r\n", uri, n,
                      extra);
    send_all(head, (size_t)hl);
    if (!chunked) {
        send_all(body, n);
        return;
    }
    for (size_t o = 0; o < n;) { /* uneven chunks */
        size_t c = n - o < 3000 ? n - o : 3000 - (o % 1000);
        char sz[32];
        int sl = snprintf(sz, sizeof(sz), "%zx\r\n", c);
        send_all(sz, (size_t)sl);
        send_all(body + o, c);
        send_str("\r\n");
        o += c;
    }
    send_str("0\r\n\r\n");
}

static void expect_body(const char *what)
{
    const char *b = strstr(resp, "\r\n\r\n");
    ok(b != NULL);
    if (b == NULL)
        return;
    if (strncmp(b + 4, what, strlen(what)) != 0)
        printf("# got: %s\n# want: %s\n", b + 4, what);
    ok(strncmp(b + 4, what, strlen(what)) == 0);
}

static void test_buffered(void)
{
    char *body = make_body(100000);
    char want[128];
    connect_client();
    post("/buf", body, 100, false, "");
    is_int(read_responses(1, 3000), 1);
    snprintf(want, sizeof(want), "size=100 file=0 sum=%u", sum_bytes(0, body, 100));
    expect_body(want); /* under client_body_buffer_size: memory */
    post("/buf", body, 100000, false, "");
    is_int(read_responses(1, 5000), 1);
    snprintf(want, sizeof(want), "size=100000 file=1 sum=%u exists=1", sum_bytes(0, body, 100000));
    expect_body(want); /* spooled to a temp file under client_body_temp_path */
    post("/buf", body, 100000, true, "");
    is_int(read_responses(1, 5000), 1);
    expect_body(want); /* chunked, same bytes */
    free(body);
    /* the temp files are gone after their requests (levels 1 2: tmp/cbt/D/DD/NNNNNNNNNN) */
    char cmd[160];
    snprintf(cmd, sizeof(cmd), "find %s/cbt -type f | wc -l", tmp);
    FILE *f = popen(cmd, "r");
    int files = -1;
    if (f) {
        if (fscanf(f, "%d", &files) != 1)
            files = -1;
        pclose(f);
    }
    is_int(files, 0);
    snprintf(cmd, sizeof(cmd), "find %s/cbt -mindepth 2 -maxdepth 2 -type d | grep -c '/[0-9]/[0-9][0-9]$'", tmp);
    f = popen(cmd, "r");
    int dirs = 0;
    if (f) {
        if (fscanf(f, "%d", &dirs) != 1)
            dirs = 0;
        pclose(f);
    }
    ok(dirs >= 1); /* the levels were made */
}

static void test_streamed(void)
{
    char *body = make_body(20000);
    char want[128];
    connect_client();
    stream_calls = 0;
    post("/stream", body, 20000, true, "");
    is_int(read_responses(1, 10000), 1);
    snprintf(want, sizeof(want), "size=20000 sum=%u", sum_bytes(0, body, 20000));
    expect_body(want);
    ok(stream_calls >= 20000 / 7); /* bytes were offered again and again: backpressure held them */
    post("/stream", body, 5000, false, ""); /* keep-alive survives, Content-Length too */
    is_int(read_responses(1, 10000), 1);
    snprintf(want, sizeof(want), "size=5000 sum=%u", sum_bytes(0, body, 5000));
    expect_body(want);
    free(body);
}

static void test_errors(void)
{
    char *body = make_body(300000);
    connect_client();
    post("/buf", body, 300000, true, ""); /* client_max_body_size 256k, chunked: found while reading */
    read_responses(1, 5000);
    ok(strncmp(resp, "HTTP/1.1 413", 12) == 0);
    connect_client();
    send_str("POST /buf HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\n5\r\nabcde\r\nZZ\r\n");
    read_responses(1, 3000);
    ok(strncmp(resp, "HTTP/1.1 400", 12) == 0);
    connect_client(); /* client_body_timeout 200ms: half a body, then silence → closed without a response (408) */
    send_str("POST /buf HTTP/1.1\r\nHost: x\r\nContent-Length: 10\r\n\r\nabc");
    is_int(read_responses(1, 3000), 0);
    ok(resp_len == 0);
    ok(read(cfd, resp, 1) == 0); /* end of stream: closed, not merely silent */
    free(body);
}

static void test_continue_and_pipeline(void)
{
    connect_client();
    send_str("POST /buf HTTP/1.1\r\nHost: x\r\nContent-Length: 5\r\nExpect: 100-continue\r\n\r\n");
    resp_len = 0;
    resp[0] = '\0';
    for (int i = 0; i < 100 && resp_len == 0; i++) {
        hy_loop_run_once(&loop, 5);
        ssize_t n = read(cfd, resp, sizeof(resp) - 1);
        if (n > 0)
            resp_len = (size_t)n, resp[n] = '\0';
    }
    ok(strncmp(resp, "HTTP/1.1 100 Continue\r\n\r\n", 25) == 0); /* before we send a byte of the body */
    send_str("hello");
    is_int(read_responses(1, 3000), 1);
    ok(strstr(resp, "size=5 file=0") != NULL);
    /* a body and the next request in one write */
    const char *two = "POST /buf HTTP/1.1\r\nHost: x\r\nContent-Length: 3\r\n\r\nxyzPOST /buf HTTP/1.1\r\nHost: x\r\n"
                      "Content-Length: 2\r\n\r\nhi";
    send_all(two, strlen(two));
    is_int(read_responses(2, 3000), 2);
    ok(strstr(resp, "size=3 file=0") != NULL && strstr(resp, "size=2 file=0") != NULL);
}

static void test_in_file_only(void)
{
    connect_client();
    post("/keep", "abcdef", 6, false, "");
    is_int(read_responses(1, 3000), 1);
    ok(strstr(resp, "size=6 file=1") != NULL && strstr(resp, "exists=1") != NULL);
    char cmd[160];
    snprintf(cmd, sizeof(cmd), "find %s/cbt -type f | wc -l", tmp);
    FILE *f = popen(cmd, "r");
    int files = -1;
    if (f) {
        if (fscanf(f, "%d", &files) != 1)
            files = -1;
        pclose(f);
    }
    is_int(files, 1); /* client_body_in_file_only on: the file stays */
}

static int count_files(void)
{
    char cmd[160];
    snprintf(cmd, sizeof(cmd), "find %s/cbt -type f | wc -l", tmp);
    FILE *f = popen(cmd, "r");
    int files = -1;
    if (f) {
        if (fscanf(f, "%d", &files) != 1)
            files = -1;
        pclose(f);
    }
    return files;
}

static void test_in_file_only_clean_and_unwritable(void)
{
    int before = count_files();
    connect_client();
    post("/clean", "abcdefgh", 8, false, "");
    is_int(read_responses(1, 3000), 1);
    ok(strstr(resp, "size=8 file=1") != NULL && strstr(resp, "exists=1") != NULL); /* on disk while handled */
    is_int(count_files(), before); /* client_body_in_file_only clean: removed after the request */
    connect_client();
    post("/nodir", "abc", 3, false, ""); /* the temp path cannot be created: 500 */
    is_int(read_responses(1, 3000), 1);
    ok(strncmp(resp, "HTTP/1.1 500 ", 13) == 0);
}

static void set_handler(const char *uri, hy_content_handler_fn fn)
{
    hy_http_main_conf_t *m = hy_http_main(cyc);
    hy_http_srv_conf_t *srv = ((hy_http_srv_conf_t **)m->servers->elts)[0];
    hy_http_loc_conf_t *lc = hy_http_find_location(srv, uri, strlen(uri), NULL);
    lc->handler = fn;
}

int main(void)
{
    hy_modules_init();
    hy_clock_update();
    hy_loop_init(&loop);
    resume_defer.cb = on_resume;
    snprintf(tmp, sizeof(tmp), "/tmp/hy-body-XXXXXX");
    if (mkdtemp(tmp) == NULL)
        return 1;
    char conf[1024];
    snprintf(conf, sizeof(conf),
             "client_body_buffer_size 1k; client_max_body_size 256k; client_body_timeout 200ms;"
             "client_body_temp_path %s/cbt 1 2;"
             "server { listen 127.0.0.1:1; location /buf { } location /stream { } location /keep {"
             " client_body_in_file_only on; } location /clean { client_body_in_file_only clean; }"
             " location /nodir { client_body_in_file_only on; client_body_temp_path /proc/hy-no/such; } }",
             tmp);
    cyc = lb_load(conf, false);
    ok(cyc != NULL);
    if (cyc == NULL)
        return done_testing();
    set_handler("/buf", buffer_handler);
    set_handler("/stream", stream_handler);
    set_handler("/keep", buffer_handler);
    set_handler("/clean", buffer_handler);
    set_handler("/nodir", buffer_handler);
    subtest("buffered: memory, temp file with levels, chunked", test_buffered);
    subtest("streamed with backpressure", test_streamed);
    subtest("413, 400, 408", test_errors);
    subtest("100-continue, pipelined after a body", test_continue_and_pipeline);
    subtest("client_body_in_file_only", test_in_file_only);
    subtest("client_body_in_file_only clean; a temp path that cannot be created", test_in_file_only_clean_and_unwritable);
    char cmd[128];
    snprintf(cmd, sizeof(cmd), "rm -rf %s", tmp);
    if (system(cmd) != 0)
        printf("# cleanup failed\n");
    return done_testing();
}
