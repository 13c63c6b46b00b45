/* gzip_stream_test.c — the gzip filter's streaming of a large complete body (filters/gzip.c) through the real
 * request core (tests/unit/loopback.h): the static handler hands over a 10 MiB file whole; the filter must send
 * it compressed in bounded batches, one per proceed (the backpressure contract of http/request.h), finish the
 * stream byte-exact, ignore Range on it, and free everything when the connection goes away mid-stream. */
#include "../harness.h"
#include "../loopback.h"
#include <zlib.h>
#include "core/file.h"
#include "conf/cycle.h"

static struct {
    int sends, status;
    bool finished;
    size_t max_batch;
    int64_t content_length;
    char *body;
    size_t len, cap;
} out;

static void cap_send(hy_req_t *req, bool is_final)
{
    out.sends++;
    out.status = req->status;
    out.content_length = req->content_length_n;
    size_t batch = 0;
    for (hy_seg_t *s = req->body.head; s; s = s->next) {
        ok(s->kind == HY_SEG_MEM); /* compressed output is memory */
        if (s->kind != HY_SEG_MEM)
            continue;
        if (out.len + s->mem.len > out.cap) {
            out.cap = (out.len + s->mem.len) * 2;
            out.body = realloc(out.body, out.cap);
        }
        memcpy(out.body + out.len, s->mem.ptr, s->mem.len);
        out.len += s->mem.len;
        batch += s->mem.len;
    }
    if (batch > out.max_batch)
        out.max_batch = batch;
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

#define BIG (10 << 20)
static char root[64];
static char *big;

static hy_req_t *start(hy_cycle_t *c, hy_pool_t **pool, const char *range)
{
    hy_req_t *r = lb_request(c, pool, "GET", "/big.txt", "localhost");
    hy_header_t *h = hy_palloc(*pool, sizeof(hy_header_t) * 3);
    size_t n = 0;
    h[n++] = r->headers[0];
    h[n++] = (hy_header_t){HY_STR("Accept-Encoding"), HY_STR("gzip")};
    if (range)
        h[n++] = (hy_header_t){HY_STR("Range"), (hy_str_t){(char *)range, strlen(range)}};
    r->headers = h;
    r->num_headers = n;
    ((hy_conn_t *)r->conn)->ops = &cap_ops;
    free(out.body);
    memset(&out, 0, sizeof(out));
    lb_run(r);
    return r;
}

static void diag_batches(void)
{
    printf("# %d sends, largest batch %zu bytes, %zu compressed bytes\n", out.sends, out.max_batch, out.len);
}

static bool gunzip_equals(const char *z, size_t zlen, const char *want, size_t wlen)
{
    z_stream s = {0};
    if (inflateInit2(&s, 16 + MAX_WBITS) != Z_OK)
        return false;
    char *buf = malloc(wlen + 1);
    s.next_in = (Bytef *)z;
    s.avail_in = (uInt)zlen;
    s.next_out = (Bytef *)buf;
    s.avail_out = (uInt)(wlen + 1);
    int rc = inflate(&s, Z_FINISH);
    bool same = rc == Z_STREAM_END && s.total_out == wlen && memcmp(buf, want, wlen) == 0;
    inflateEnd(&s);
    free(buf);
    return same;
}

static void test_batches(void)
{
    char conf[256];
    snprintf(conf, sizeof(conf), "server { listen 127.0.0.1:1; root %s; gzip on; gzip_types text/plain; }", root);
    hy_cycle_t *c = lb_load(conf, false);
    hy_pool_t *pool;
    hy_req_t *r = start(c, &pool, NULL);
    ok(!out.finished);       /* the handler's final send became the first batch */
    ok(r->_proceed != NULL); /* ... and the filter waits for the protocol to drain it */
    is_int(out.status, 200);
    is_int(out.content_length, -1); /* chunked */
    while (!out.finished && r->_proceed && out.sends < 10000)
        hy_req_proceed(r);
    ok(out.finished);
    ok(out.sends > 10); /* really in batches */
    /* each bounded: BATCH_OUT (64 KiB) plus the output of one 64 KiB read, whatever the body size */
    ok(out.max_batch <= 64 * 1024 + 64 * 1024 + 16384);
    diag_batches();
    ok(gunzip_equals(out.body, out.len, big, BIG));
    hy_pool_destroy(pool);

    r = start(c, &pool, "bytes=0-99"); /* gzip clears accept_ranges: the whole compressed stream */
    while (!out.finished && r->_proceed && out.sends < 10000)
        hy_req_proceed(r);
    is_int(out.status, 200);
    ok(gunzip_equals(out.body, out.len, big, BIG));
    hy_pool_destroy(pool);

    r = start(c, &pool, NULL); /* the client goes away after two batches: the pool's cleanups free the stream */
    hy_req_proceed(r);
    ok(!out.finished && out.sends == 2);
    hy_pool_destroy(pool); /* LeakSanitizer (make asan) checks the codec, the read buffer and the file */
    hy_cycle_unref(c);
}

int main(void)
{
    hy_modules_init();
    snprintf(root, sizeof(root), "/tmp/hy-gzs-XXXXXX");
    if (mkdtemp(root) == NULL)
        return 1;
    big = malloc(BIG);
    uint32_t x = 12345;
    for (size_t i = 0; i < BIG; i++) { /* 16 random letters: about 2:1, so ~5 MiB of compressed output */
        x = x * 1103515245u + 12345u;
        big[i] = (char)('a' + (x >> 16) % 16);
    }
    char path[128];
    snprintf(path, sizeof(path), "%s/big.txt", root);
    FILE *f = fopen(path, "wb");
    fwrite(big, 1, BIG, f);
    fclose(f);
    subtest("a large body goes out in bounded batches, one per proceed", test_batches);
    free(out.body);
    free(big);
    return done_testing();
}
