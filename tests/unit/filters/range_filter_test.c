/* range_filter_test.c — the range filter (filters/range_filter.c) through the real request core
 * (tests/unit/loopback.h): the static handler serves an uncompressed file from memory (small) and as a file
 * segment (large); single ranges, multipart/byteranges in any order and overlapping, 416, If-Range; a response
 * whose handler allows no ranges (return), and compressed bodies (gzip_static's .gz, on-the-fly gzip) that the
 * filter must leave whole; and a producer that streams its body in batches (hy_req_send_more), as a proxy
 * will: one range is cut as the batches pass, several ranges leave the body whole. */
#include "../harness.h"
#include "../loopback.h"
#include <stdarg.h>
#include <sys/stat.h>
#include "core/file.h"
#include "conf/cycle.h"
#include "http/phases.h"

/* what went on the "wire": memory and file segments alike */
static struct {
    int status;
    bool finished, accept_ranges;
    int64_t content_length;
    char content_type[128];
    char content_range[64], content_encoding[16];
    int file_segs, mem_segs;
    char *body;
    size_t len, cap;
} out;

static void header_value(hy_req_t *req, const char *name, char *dst, size_t cap)
{
    dst[0] = '\0';
    if (req->headers_out == NULL)
        return;
    hy_header_t *h = req->headers_out->elts;
    for (size_t i = 0; i < req->headers_out->nelts; i++)
        if (hy_str_caseeq(h[i].name, name))
            snprintf(dst, cap, "%.*s", (int)h[i].value.len, h[i].value.ptr);
}

static void append(const char *p, size_t n)
{
    if (out.len + n > out.cap) {
        out.cap = (out.len + n) * 2;
        out.body = realloc(out.body, out.cap);
    }
    memcpy(out.body + out.len, p, n);
    out.len += n;
}

static void cap_send(hy_req_t *req, bool is_final)
{
    out.status = req->status;
    out.accept_ranges = req->accept_ranges;
    out.content_length = req->content_length_n;
    snprintf(out.content_type, sizeof(out.content_type), "%.*s", (int)req->content_type.len, req->content_type.ptr);
    header_value(req, "Content-Range", out.content_range, sizeof(out.content_range));
    header_value(req, "Content-Encoding", out.content_encoding, sizeof(out.content_encoding));
    for (hy_seg_t *s = req->body.head; s; s = s->next) {
        if (s->kind == HY_SEG_MEM) {
            out.mem_segs++;
            append(s->mem.ptr, s->mem.len);
        } else {
            out.file_segs++;
            char *tmp = malloc((size_t)s->file.len);
            ssize_t r = pread(s->file.file->fd, tmp, (size_t)s->file.len, s->file.off);
            append(tmp, r > 0 ? (size_t)r : 0);
            free(tmp);
        }
    }
    hy_outq_clear(&req->body);
    if (is_final) {
        out.finished = true;
        req->finished = true;
    }
}

static void cap_abort(hy_req_t *req)
{
}
static const hy_conn_ops_t cap_ops = {.send = cap_send, .abort = cap_abort};

static char root[64];
static char small[1000], big[100000];

static void write_file(const char *name, const char *data, size_t len)
{
    char path[128];
    snprintf(path, sizeof(path), "%s/%s", root, name);
    FILE *f = fopen(path, "wb");
    fwrite(data, 1, len, f);
    fclose(f);
}

/* GET target with extra header pairs (name, value, ..., NULL) */
static void get(hy_cycle_t *c, const char *target, ...)
{
    hy_pool_t *pool;
    hy_req_t *r = lb_request(c, &pool, "GET", target, "localhost");
    hy_header_t *h = hy_palloc(pool, sizeof(hy_header_t) * 8);
    size_t n = 0;
    h[n++] = r->headers[0];
    va_list ap;
    va_start(ap, target);
    for (const char *name; (name = va_arg(ap, const char *)) != NULL && n < 8;) {
        const char *value = va_arg(ap, const char *);
        h[n++] = (hy_header_t){(hy_str_t){(char *)name, strlen(name)}, (hy_str_t){(char *)value, strlen(value)}};
    }
    va_end(ap);
    r->headers = h;
    r->num_headers = n;
    ((hy_conn_t *)r->conn)->ops = &cap_ops;
    free(out.body);
    memset(&out, 0, sizeof(out));
    lb_run(r); /* lb_last stays empty: the capture above replaced the loopback's send */
    ok(out.finished);
    hy_pool_destroy(pool);
}

static hy_cycle_t *load(const char *loc_body)
{
    char conf[512];
    snprintf(conf, sizeof(conf), "server { listen 127.0.0.1:1; root %s; %s }", root, loc_body);
    return lb_load(conf, false);
}

static void test_memory_body(void)
{
    hy_cycle_t *c = load("location /r { return 200 \"0123456789\"; }");
    get(c, "/small.txt", "Range", "bytes=10-19", NULL);
    is_int(out.status, 206);
    ok(out.mem_segs >= 1 && out.file_segs == 0); /* a small file leaves from memory */
    is_str(out.content_range, "bytes 10-19/1000");
    is_int(out.content_length, 10);
    ok(out.len == 10 && memcmp(out.body, small + 10, 10) == 0);

    get(c, "/small.txt", "Range", "bytes=-5", NULL); /* suffix */
    is_int(out.status, 206);
    ok(out.len == 5 && memcmp(out.body, small + 995, 5) == 0);

    /* multipart, out of order and overlapping, as nginx keeps them */
    get(c, "/small.txt", "Range", "bytes=20-22,0-3,1-2", NULL);
    is_int(out.status, 206);
    ok(strncmp(out.content_type, "multipart/byteranges; boundary=", 31) == 0);
    is_int(out.content_length, (int64_t)out.len);
    const char *boundary = out.content_type + 31;
    char want[1024];
    int wl = 0;
    const int spans[3][2] = {{20, 22}, {0, 3}, {1, 2}};
    for (int i = 0; i < 3; i++) {
        wl += snprintf(want + wl, sizeof(want) - (size_t)wl,
                       "\r\n--%s\r\nContent-Type: text/plain\r\nContent-Range: bytes %d-%d/1000\r\n\r\n", boundary,
                       spans[i][0], spans[i][1]);
        memcpy(want + wl, small + spans[i][0], (size_t)(spans[i][1] - spans[i][0] + 1));
        wl += spans[i][1] - spans[i][0] + 1;
    }
    wl += snprintf(want + wl, sizeof(want) - (size_t)wl, "\r\n--%s--\r\n", boundary);
    ok(out.len == (size_t)wl && memcmp(out.body, want, (size_t)wl) == 0);

    get(c, "/small.txt", "Range", "bytes=5000-", NULL); /* nothing satisfiable: 416 with bytes * /size */
    is_int(out.status, 416);
    is_str(out.content_range, "bytes */1000");
    ok(!out.accept_ranges);

    get(c, "/small.txt", "Range", "bytes=0-1", "If-Range", "\"other\"", NULL); /* If-Range mismatch: whole */
    is_int(out.status, 200);
    is_int(out.len, 1000);
    ok(out.accept_ranges);

    get(c, "/r", "Range", "bytes=0-1", NULL); /* return allows no ranges: the filter leaves it alone */
    is_int(out.status, 200);
    ok(out.len == 10 && memcmp(out.body, "0123456789", 10) == 0);
    ok(out.content_range[0] == '\0');
    hy_cycle_unref(c);
}

static void test_file_body(void)
{
    hy_cycle_t *c = load("");
    get(c, "/big.txt", "Range", "bytes=50000-50099", NULL);
    is_int(out.status, 206);
    ok(out.file_segs == 1 && out.mem_segs == 0); /* the file segment is cut, not read */
    is_str(out.content_range, "bytes 50000-50099/100000");
    ok(out.len == 100 && memcmp(out.body, big + 50000, 100) == 0);

    get(c, "/big.txt", "Range", "bytes=99990-,0-9", NULL);
    is_int(out.status, 206);
    is_int(out.file_segs, 2);
    is_int(out.content_length, (int64_t)out.len);
    ok(memmem(out.body, out.len, big + 99990, 10) != NULL);
    ok(memmem(out.body, out.len, "Content-Range: bytes 0-9/100000\r\n\r\n", 35) != NULL);

    get(c, "/big.txt", NULL); /* no Range: 200 with Accept-Ranges */
    is_int(out.status, 200);
    ok(out.accept_ranges);
    is_int(out.len, 100000);
    hy_cycle_unref(c);
}

static void test_compressed_body(void)
{
    /* gzip_static: the .gz is served whole (nginx 1.22 allows no ranges on it) */
    static const char gz[] = "\x1f\x8b\x08\x00\x00\x00\x00\x00\x00\x03not-really-gzip-but-served-as-is";
    write_file("page.html", small, sizeof(small));
    write_file("page.html.gz", gz, sizeof(gz) - 1);
    hy_cycle_t *c = load("gzip_static on;");
    get(c, "/page.html", "Accept-Encoding", "gzip", "Range", "bytes=0-9", NULL);
    is_int(out.status, 200);
    is_str(out.content_encoding, "gzip");
    ok(out.len == sizeof(gz) - 1 && memcmp(out.body, gz, out.len) == 0);
    ok(out.content_range[0] == '\0' && !out.accept_ranges);
    get(c, "/page.html", "Range", "bytes=0-9", NULL); /* no gzip accepted: the plain file, ranged */
    is_int(out.status, 206);
    ok(out.len == 10 && memcmp(out.body, small, 10) == 0);

    hy_cycle_unref(c);
    /* on-the-fly gzip clears accept_ranges: the compressed body goes out whole */
    c = load("gzip on; gzip_types text/plain;");
    get(c, "/big.txt", "Accept-Encoding", "gzip", "Range", "bytes=0-9", NULL);
    is_int(out.status, 200);
    is_str(out.content_encoding, "gzip");
    ok(out.content_range[0] == '\0' && !out.accept_ranges);
    ok(out.len > 18 && (unsigned char)out.body[0] == 0x1f && (unsigned char)out.body[1] == 0x8b);
    get(c, "/big.txt", "Range", "bytes=0-9", NULL); /* the same file uncompressed keeps its ranges */
    is_int(out.status, 206);
    ok(out.len == 10 && memcmp(out.body, big, 10) == 0);
    hy_cycle_unref(c);
}

/* ---- a streaming producer: 1000 bytes of `small` in batches of 100, paced by proceed ---- */

static int produced;

static void produce_more(hy_req_t *req)
{
    hy_outq_push_mem(&req->body, small + produced, 100, NULL, NULL);
    produced += 100;
    if (produced == (int)sizeof(small))
        hy_req_send(req, true);
    else
        hy_req_send_more(req, produce_more);
}

static int streaming_content(hy_req_t *req)
{
    req->status = 200;
    req->content_length_n = sizeof(small);
    req->accept_ranges = true; /* as a proxied response with a length would */
    req->content_type = HY_STR("text/plain");
    produced = 0;
    produce_more(req);
    return HY_DONE;
}

static struct hy_phase_engine *streaming_engine(hy_cycle_t *c)
{
    static void *main_conf[64];
    hy_http_main_conf_t *m = hy_pcalloc(c->pool, sizeof(*m));
    main_conf[hy_http_core_module.index] = m;
    hy_conf_t cf = {.cycle = c, .pool = c->pool, .main_conf = main_conf};
    hy_http_phase_add(&cf, HY_PHASE_CONTENT, streaming_content);
    hy_http_phases_init(&cf);
    return m->phases;
}

/* run target with a Range through the streaming producer, calling proceed as a protocol would */
static int stream_get(hy_cycle_t *c, struct hy_phase_engine *e, const char *range)
{
    hy_pool_t *pool;
    hy_req_t *r = lb_request(c, &pool, "GET", "/s", "localhost");
    hy_header_t *h = hy_palloc(pool, sizeof(hy_header_t) * 2);
    h[0] = r->headers[0];
    h[1] = (hy_header_t){HY_STR("Range"), (hy_str_t){(char *)range, strlen(range)}};
    r->headers = h;
    r->num_headers = 2;
    r->_engine = e;
    ((hy_conn_t *)r->conn)->ops = &cap_ops;
    free(out.body);
    memset(&out, 0, sizeof(out));
    lb_run(r);
    int sends = 1;
    while (!out.finished && r->_proceed && sends < 100) {
        hy_req_proceed(r);
        sends++;
    }
    ok(out.finished);
    hy_pool_destroy(pool);
    return sends;
}

static void test_streamed_body(void)
{
    hy_cycle_t *c = load("");
    struct hy_phase_engine *e = streaming_engine(c);
    is_int(stream_get(c, e, "bytes=250-649"), 10); /* ten batches, each cut as it passed */
    is_int(out.status, 206);
    is_str(out.content_range, "bytes 250-649/1000");
    is_int(out.content_length, 400);
    ok(out.len == 400 && memcmp(out.body, small + 250, 400) == 0);

    stream_get(c, e, "bytes=-1"); /* the last byte only: every batch but the last is dropped */
    is_int(out.status, 206);
    ok(out.len == 1 && out.body[0] == small[999]);

    stream_get(c, e, "bytes=0-1,5-6"); /* several ranges need the whole body at once: 200, all of it */
    is_int(out.status, 200);
    ok(out.len == sizeof(small) && memcmp(out.body, small, sizeof(small)) == 0);

    stream_get(c, e, "bytes=2000-"); /* 416 replaces the response at its head; the producer stops */
    is_int(out.status, 416);
    is_str(out.content_range, "bytes */1000");
    hy_cycle_unref(c);
}

int main(void)
{
    hy_modules_init();
    snprintf(root, sizeof(root), "/tmp/hy-range-XXXXXX");
    if (mkdtemp(root) == NULL)
        return 1;
    for (size_t i = 0; i < sizeof(small); i++)
        small[i] = (char)('a' + i % 26);
    for (size_t i = 0; i < sizeof(big); i++)
        big[i] = (char)('A' + (i * 7 + i / 100) % 26);
    write_file("small.txt", small, sizeof(small));
    write_file("big.txt", big, sizeof(big));
    subtest("uncompressed memory body", test_memory_body);
    subtest("uncompressed file body", test_file_body);
    subtest("compressed bodies", test_compressed_body);
    subtest("streamed body", test_streamed_body);
    free(out.body);
    return done_testing();
}
