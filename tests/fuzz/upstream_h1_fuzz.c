/* upstream_h1_fuzz.c — libFuzzer driver: the upstream HTTP/1.x response codec (upstream/h1client.c) on whatever an
 * upstream may send. The first input byte picks the request method (GET or HEAD), the next two seed the split
 * points; the rest is the upstream's byte stream, given once whole and once in random pieces (each piece appended
 * to the input buffer as a socket read would, then EOF). Invariants: no crash; the head is found at the same place
 * and parsed the same way; the decoded body is the same, never longer than the input, and the outcome (done,
 * error) does not depend on the cuts. */
#include <string.h>

#include "fuzz.h"
#include "upstream/h1client.h"

typedef struct result {
    int head;          /* process_head's final result (<0 bad, 0 incomplete, >0 head length) */
    int status;
    int64_t resp_length;
    bool chunked, keepalive;
    int body;          /* 0 ok, -1 broken framing */
    bool done;
    char *payload;
    size_t plen;
} result_t;

static void feed(hy_buf_t *in, const uint8_t *p, size_t n)
{
    size_t avail;
    char *dst = hy_buf_reserve(in, n ? n : 1, 1 << 24, &avail);
    CHECK(dst != NULL);
    memcpy(dst, p, n);
    hy_buf_commit(in, n);
}

static void drain(hy_outq_t *out, result_t *r, size_t cap)
{
    for (hy_seg_t *s = out->head; s; s = s->next) {
        CHECK(s->kind == HY_SEG_MEM);
        CHECK(r->plen + s->mem.len <= cap);
        memcpy(r->payload + r->plen, s->mem.ptr, s->mem.len);
        r->plen += s->mem.len;
    }
    hy_outq_clear(out);
}

static void run(const uint8_t *data, size_t size, bool head_method, uint32_t seed, result_t *r)
{
    hy_pool_t *pool = hy_pool_create(4096);
    hy_req_t req = {.pool = pool};
    hy_ureq_t u = {.req = &req, .codec = &hy_upstream_h1_codec, .method = head_method ? HY_STR("HEAD") : HY_STR("GET")};
    hy_buf_t in = {0};
    hy_outq_t out = {0};
    memset(r, 0, sizeof(*r));
    r->payload = malloc(size + 1);
    uint32_t x = seed | 1;
    size_t pos = 0;
    bool in_body = false;
    for (;;) {
        size_t n = size - pos;
        if (seed != 0 && n > 0) {
            x ^= x << 13;
            x ^= x >> 17;
            x ^= x << 5;
            n = x % (n + 1);
        }
        feed(&in, data + pos, n);
        pos += n;
        bool eof = pos == size;
        if (!in_body) {
            r->head = hy_upstream_h1_codec.process_head(&u, &in);
            if (r->head < 0)
                break;
            if (r->head > 0) {
                CHECK((size_t)r->head <= in.len);
                hy_buf_consume(&in, (size_t)r->head);
                r->status = u.status;
                r->resp_length = u.resp_length;
                r->chunked = u.resp_chunked;
                r->keepalive = u.resp_keepalive;
                in_body = true;
            }
        }
        if (in_body) {
            r->body = hy_upstream_h1_codec.process_body(&u, &in, eof, &out, &r->done);
            drain(&out, r, size);
            if (r->body != 0 || r->done)
                break;
        }
        if (eof)
            break;
    }
    hy_buf_release(&in);
    hy_pool_destroy(pool);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size < 3)
        return 0;
    bool head_method = data[0] & 1;
    uint32_t seed = (uint32_t)data[1] << 8 | data[2];
    data += 3;
    size -= 3;
    result_t a, b;
    run(data, size, head_method, 0, &a);
    run(data, size, head_method, seed ? seed : 1, &b);
    CHECK(a.plen <= size && b.plen <= size);
    /* where the head ends and what it says do not depend on the cuts (interim 1xx heads are skipped alike) */
    CHECK((a.head > 0) == (b.head > 0) && (a.head < 0) == (b.head < 0));
    if (a.head > 0) {
        CHECK(a.status == b.status && a.resp_length == b.resp_length && a.chunked == b.chunked &&
              a.keepalive == b.keepalive);
        CHECK(a.status >= 100 && a.status <= 599);
        CHECK(a.body == b.body && a.done == b.done);
        if (a.body == 0)
            CHECK(a.plen == b.plen && memcmp(a.payload, b.payload, a.plen) == 0);
        if (a.resp_length >= 0 && a.done && !head_method && a.status != 204 && a.status != 304)
            CHECK((int64_t)a.plen == a.resp_length);
    }
    free(a.payload);
    free(b.payload);
    return 0;
}
