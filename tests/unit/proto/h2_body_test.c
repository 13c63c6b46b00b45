/* h2_body_test.c — request bodies over HTTP/2 (proto/h2.c) through the protocol-neutral reader (http/body.h):
 * the server side of a socketpair runs the real accept path, h1's preface detection, h2 and the request core;
 * the client is an nghttp2 client session. Bodies larger than the stream window (http2_body_preread_size) only
 * complete if the window reopens as the handler consumes; a streaming handler taking 7 bytes at a time checks
 * that the protocol holds the rest and resumes; client_max_body_size answers 413 without content-length. */
#include <poll.h>
#include <stdarg.h>
#include <nghttp2/nghttp2.h>
#include "../harness.h"
#include "../loopback.h"
#include "http/body.h"
#include "http/phases.h"
#include "proto/accept.h"
#include "core/clock.h"

static hy_loop_t loop;
static hy_cycle_t *cyc;
static int cfd = -1;
static hy_req_t *stream_req;
static hy_defer_t resume_defer;
static uint32_t stream_sum;
static int64_t stream_size;

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
        lseek(b->fd, 0, SEEK_SET);
        while ((n = read(b->fd, chunk, sizeof(chunk))) > 0)
            h = sum_bytes(h, chunk, (size_t)n);
    } else {
        h = sum_bytes(h, b->mem, b->mem_len);
    }
    respond(req, "size=%lld file=%d sum=%u", (long long)b->received, b->fd >= 0, h);
}

static int buffer_handler(hy_req_t *req)
{
    hy_req_read_body(req, HY_BODY_BUFFER, on_buffered);
    return HY_DONE;
}

static void on_resume(hy_defer_t *d)
{
    (void)d;
    if (stream_req)
        hy_req_body_resume(stream_req);
}

static void on_stream(hy_req_t *req, const char *err)
{
    hy_req_body_t *b = req->body_in;
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
    size_t n = b->data_len < 7 ? b->data_len : 7;
    stream_sum = sum_bytes(stream_sum, b->data, n);
    stream_size += (int64_t)n;
    hy_req_body_consume(req, n);
    if (b->data_len > 0) {
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

/* ---- the client ---- */

typedef struct client {
    const char *body;
    size_t len, off;
    int status;
    char resp[512];
    size_t resp_len;
    bool closed;
    uint32_t error;
} client_t;

static ssize_t body_read(nghttp2_session *s, int32_t id, uint8_t *buf, size_t length, uint32_t *flags,
                         nghttp2_data_source *src, void *user)
{
    client_t *c = user;
    if (c->body == NULL)
        return NGHTTP2_ERR_DEFERRED; /* a client that never sends its body */
    size_t n = c->len - c->off < length ? c->len - c->off : length;
    memcpy(buf, c->body + c->off, n);
    c->off += n;
    if (c->off == c->len)
        *flags |= NGHTTP2_DATA_FLAG_EOF;
    return (ssize_t)n;
}

static int on_header(nghttp2_session *s, const nghttp2_frame *f, const uint8_t *name, size_t nl, const uint8_t *value,
                     size_t vl, uint8_t flags, void *user)
{
    client_t *c = user;
    if (nl == 7 && memcmp(name, ":status", 7) == 0)
        c->status = atoi((const char *)value);
    return 0;
}

static int on_data(nghttp2_session *s, uint8_t flags, int32_t id, const uint8_t *data, size_t len, void *user)
{
    client_t *c = user;
    if (c->resp_len + len < sizeof(c->resp)) {
        memcpy(c->resp + c->resp_len, data, len);
        c->resp_len += len;
        c->resp[c->resp_len] = '\0';
    }
    return 0;
}

static int on_close(nghttp2_session *s, int32_t id, uint32_t error, void *user)
{
    client_t *c = user;
    c->closed = true;
    c->error = error;
    return 0;
}

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

/* One POST over a new connection; runs client and server until the stream closes. */
static client_t *post(const char *path, const char *body, size_t len, bool with_length)
{
    static client_t c;
    memset(&c, 0, sizeof(c));
    c.body = body, c.len = len;
    nghttp2_session_callbacks *cbs;
    nghttp2_session_callbacks_new(&cbs);
    nghttp2_session_callbacks_set_on_header_callback(cbs, on_header);
    nghttp2_session_callbacks_set_on_data_chunk_recv_callback(cbs, on_data);
    nghttp2_session_callbacks_set_on_stream_close_callback(cbs, on_close);
    nghttp2_session *s;
    nghttp2_session_client_new(&s, cbs, &c);
    nghttp2_session_callbacks_del(cbs);
    nghttp2_submit_settings(s, NGHTTP2_FLAG_NONE, NULL, 0);
    char cl[32];
    snprintf(cl, sizeof(cl), "%zu", len);
    nghttp2_nv nv[] = {
        {(uint8_t *)":method", (uint8_t *)"POST", 7, 4, 0},
        {(uint8_t *)":path", (uint8_t *)path, 5, strlen(path), 0},
        {(uint8_t *)":scheme", (uint8_t *)"http", 7, 4, 0},
        {(uint8_t *)":authority", (uint8_t *)"x", 10, 1, 0},
        {(uint8_t *)"content-length", (uint8_t *)cl, 14, strlen(cl), 0},
    };
    nghttp2_data_provider dp = {.read_callback = body_read};
    nghttp2_submit_request(s, NULL, nv, with_length ? 5 : 4, &dp, NULL);
    connect_client();
    const uint8_t *pending = NULL;
    ssize_t pending_len = 0;
    for (int t = 0; t < 2000 && !c.closed; t++) {
        if (pending_len == 0)
            pending_len = nghttp2_session_mem_send(s, &pending);
        if (pending_len > 0) {
            ssize_t w = write(cfd, pending, (size_t)pending_len);
            if (w > 0)
                pending += w, pending_len -= w;
        }
        hy_loop_run_once(&loop, pending_len > 0 ? 1 : 2);
        char buf[65536];
        ssize_t n = read(cfd, buf, sizeof(buf));
        if (n == 0)
            break;
        if (n > 0)
            nghttp2_session_mem_recv(s, (const uint8_t *)buf, (size_t)n);
    }
    nghttp2_session_del(s);
    return &c;
}

static char *make_body(size_t n)
{
    char *b = malloc(n);
    for (size_t i = 0; i < n; i++)
        b[i] = (char)('a' + (i * 7) % 26);
    return b;
}

static void expect(client_t *c, int status, const char *body)
{
    is_int(c->status, status);
    if (body && strcmp(c->resp, body) != 0)
        printf("# got: %s\n# want: %s\n", c->resp, body);
    ok(body == NULL || strcmp(c->resp, body) == 0);
}

static void test_buffered(void)
{
    char *body = make_body(300000);
    char want[128];
    snprintf(want, sizeof(want), "size=100 file=0 sum=%u", sum_bytes(0, body, 100));
    expect(post("/buf", body, 100, true), 200, want);
    /* past the 16k stream window: completes only if the window reopens as the core takes the bytes */
    snprintf(want, sizeof(want), "size=200000 file=1 sum=%u", sum_bytes(0, body, 200000));
    expect(post("/buf", body, 200000, true), 200, want);
    expect(post("/buf", body, 200000, false), 200, want); /* no content-length */
    free(body);
}

static void test_streamed(void)
{
    char *body = make_body(100000);
    char want[128];
    snprintf(want, sizeof(want), "size=100000 sum=%u", sum_bytes(0, body, 100000));
    expect(post("/stream", body, 100000, true), 200, want);
    free(body);
}

static void test_too_large(void)
{
    char *body = make_body(300000);
    expect(post("/buf", body, 300000, true), 413, NULL);  /* content-length: before the handler */
    expect(post("/buf", body, 300000, false), 413, NULL); /* counted as it arrives */
    free(body);
}

static void test_body_timeout(void)
{
    /* the handler waits for a body that never comes: client_body_timeout (200ms) resets the stream with
     * PROTOCOL_ERROR and sends no response, as nginx */
    client_t *c = post("/buf", NULL, 10, true);
    expect(c, 0, NULL);
    ok(c->closed);
    is_int(c->error, NGHTTP2_PROTOCOL_ERROR);
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
    static char tmp[64];
    snprintf(tmp, sizeof(tmp), "/tmp/hy-h2body-XXXXXX");
    if (mkdtemp(tmp) == NULL)
        return 1;
    char conf[1024];
    snprintf(conf, sizeof(conf),
             "client_body_buffer_size 1k; client_max_body_size 256k; client_body_timeout 200ms; client_body_temp_path %s/cbt;"
             "http2_body_preread_size 16k;"
             "server { listen 127.0.0.1:1; http2 on; location /buf { } location /stream { } }",
             tmp);
    cyc = lb_load(conf, false);
    ok(cyc != NULL);
    if (cyc == NULL)
        return done_testing();
    set_handler("/buf", buffer_handler);
    set_handler("/stream", stream_handler);
    subtest("buffered: memory, temp file, without content-length", test_buffered);
    subtest("streamed with backpressure", test_streamed);
    subtest("client_max_body_size", test_too_large);
    subtest("client_body_timeout", test_body_timeout);
    char cmd[128];
    snprintf(cmd, sizeof(cmd), "rm -rf %s", tmp);
    if (system(cmd) != 0)
        printf("# cleanup failed\n");
    return done_testing();
}
