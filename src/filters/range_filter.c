/* range_filter.c — Range / If-Range (RFC 9110 §14) as a header and a body filter (see range_filter.h; parsing
 * and multipart framing in range.c).
 *
 * Header filter: decides (If-Range, max_ranges, the parse) and rewrites the head: 206 with Content-Range and the
 * part's length, 206 multipart/byteranges with the framed length, or 416 (hy_req_filter_finalize, so error_page
 * applies) with "Content-Range: bytes * /size".
 * Body filter: one range streams — each batch of segments is cut to the range as it passes (segments are
 * trimmed in place, so memory and file segments keep their owners), wherever the producer is in the body.
 * Several ranges may come in any order and overlap, so they need the whole body queued at the first send
 * (static files, error pages, cached bodies); a streamed body with several ranges is sent whole (200), as
 * nginx refuses to cut multipart ranges out of a body it does not have in one piece. */
#include <stdio.h>
#include <string.h>
#include "range_filter.h"
#include "range.h"
#include "../core/clock.h"

#define IDX (hy_http_range_module.index)
#define MAX_RANGES 1024

typedef struct range_ctx {
    hy_range_t *rs;
    int n;
    int64_t size;  /* the representation's length */
    int64_t pos;   /* single range: original body bytes seen so far */
    hy_str_t type; /* multipart: the representation's Content-Type */
    char boundary[24];
} range_ctx_t;

static uint64_t boundary_seq;

/* "Content-Range: bytes S-E/SIZE" for r, or "bytes * /SIZE" (416) when r is NULL */
static void add_content_range(hy_req_t *req, const hy_range_t *r, int64_t size)
{
    hy_req_del_header(req, "Content-Range"); /* a proxied one is replaced (nginx) */
    char *cr = hy_palloc(req->pool, 64);
    size_t l = r ? hy_range_content_range(cr, 64, r, size) : (size_t)snprintf(cr, 64, "bytes */%lld", (long long)size);
    hy_req_add_header(req, HY_STR("Content-Range"), (hy_str_t){cr, l});
}

static void header_filter(hy_req_t *req)
{
    if (req->status != 200 || !req->accept_ranges || req->h_range == NULL || req->content_length_n < 0 ||
        req->loc == NULL)
        return;
    const hy_http_loc_conf_t *lc = req->loc;
    int max = lc->max_ranges >= 0 ? (int)HY_MIN(lc->max_ranges, MAX_RANGES) : MAX_RANGES;
    if (max == 0)
        return;
    if (req->h_if_range &&
        !hy_range_if_range_ok(req->h_if_range->ptr, req->h_if_range->len, req->etag, req->last_modified))
        return;
    int64_t size = req->content_length_n;
    hy_range_t *rs = hy_palloc(req->pool, sizeof(hy_range_t) * (size_t)max);
    int n = hy_range_parse(req->h_range->ptr, req->h_range->len, size, rs, max);
    if (n == HY_RANGE_NOT_SATISFIABLE) {
        add_content_range(req, NULL, size);
        hy_req_filter_finalize(req, 416);
        return;
    }
    if (n <= 0)
        return;
    if (n > 1 && !req->header_only && (int64_t)req->body.bytes != size)
        return; /* several ranges need the whole body at once: a streamed one goes out whole */
    range_ctx_t *ctx = hy_pcalloc(req->pool, sizeof(*ctx));
    ctx->rs = rs;
    ctx->n = n;
    ctx->size = size;
    *hy_req_ctx(req, &hy_http_range_module) = ctx;
    req->status = 206;
    req->status_line = HY_STR_NULL; /* a proxied "200 OK" is not this response's */
    if (n == 1) {
        add_content_range(req, &rs[0], size);
        req->content_length_n = rs[0].end - rs[0].start + 1;
        return;
    }
    if (boundary_seq == 0)
        boundary_seq = (uint64_t)hy_clock_time_ms() * 1000;
    snprintf(ctx->boundary, sizeof(ctx->boundary), "%020llu", (unsigned long long)++boundary_seq);
    ctx->type = req->content_type;
    req->content_length_n = hy_range_multipart_length(rs, n, ctx->boundary, ctx->type, size);
    char *ct = hy_palloc(req->pool, 64);
    int l = snprintf(ct, 64, "multipart/byteranges; boundary=%s", ctx->boundary);
    req->content_type = (hy_str_t){ct, (size_t)l};
    hy_req_del_header(req, "Content-Range");
}

static int64_t seg_len(const hy_seg_t *s)
{
    return s->kind == HY_SEG_MEM ? (int64_t)s->mem.len : s->file.len;
}

/* Take the first segment of q into a queue of its own. */
static hy_outq_t pop(hy_outq_t *q)
{
    hy_seg_t *s = q->head;
    q->head = s->next;
    if (q->head == NULL)
        q->tail = NULL;
    s->next = NULL;
    size_t len = (size_t)seg_len(s);
    q->bytes -= len;
    return (hy_outq_t){.head = s, .tail = s, .bytes = len};
}

/* One range, streaming: keep the part of each segment inside [start, end], drop the rest. */
static void cut_single(range_ctx_t *ctx, hy_outq_t *in, hy_outq_t *out)
{
    const hy_range_t *r = &ctx->rs[0];
    while (!hy_outq_empty(in)) {
        hy_outq_t one = pop(in);
        hy_seg_t *s = one.head;
        int64_t len = seg_len(s), from = HY_MAX(ctx->pos, r->start), to = HY_MIN(ctx->pos + len, r->end + 1);
        int64_t skip = from - ctx->pos;
        ctx->pos += len;
        if (from >= to) {
            hy_outq_clear(&one);
            continue;
        }
        if (s->kind == HY_SEG_MEM) {
            s->mem.ptr += skip;
            s->mem.len = (size_t)(to - from);
        } else {
            s->file.off += skip;
            s->file.len = to - from;
        }
        one.bytes = (size_t)(to - from);
        hy_outq_move(out, &one);
    }
}

static void clear_held(void *arg)
{
    hy_outq_clear(arg);
}

/* [from, to) of the original body (queued whole in held) onto out: memory borrowed from held, files by
 * reference. */
static void copy_span(const hy_outq_t *held, int64_t from, int64_t to, hy_outq_t *out)
{
    int64_t pos = 0;
    for (const hy_seg_t *s = held->head; s && pos < to; s = s->next) {
        int64_t len = seg_len(s), a = HY_MAX(from, pos), b = HY_MIN(to, pos + len);
        if (a < b) {
            if (s->kind == HY_SEG_MEM)
                hy_outq_push_mem(out, s->mem.ptr + (a - pos), (size_t)(b - a), NULL, NULL);
            else
                hy_outq_push_file(out, s->file.file, s->file.off + (a - pos), b - a);
        }
        pos += len;
    }
}

/* Several ranges: the whole body is queued; it stays alive in the request pool (until the response is
 * written) while the parts borrow from it. */
static void cut_multipart(hy_req_t *req, range_ctx_t *ctx, hy_outq_t *in, hy_outq_t *out)
{
    hy_outq_t *held = hy_pcalloc(req->pool, sizeof(*held));
    hy_outq_move(held, in);
    hy_pool_on_clear(req->pool, clear_held, held);
    size_t part_cap = 128 + ctx->type.len;
    for (int i = 0; i < ctx->n; i++) {
        char *ph = hy_palloc(req->pool, part_cap);
        size_t pl = hy_range_part_header(ph, part_cap, ctx->boundary, ctx->type, &ctx->rs[i], ctx->size);
        hy_outq_push_mem(out, ph, pl, NULL, NULL);
        copy_span(held, ctx->rs[i].start, ctx->rs[i].end + 1, out);
    }
    char *end = hy_palloc(req->pool, 64);
    size_t el = hy_range_multipart_end(end, 64, ctx->boundary);
    hy_outq_push_mem(out, end, el, NULL, NULL);
    ctx->n = 0; /* done: anything more (nothing should come) passes through */
}

static void body_filter(hy_req_t *req, bool is_final)
{
    range_ctx_t *ctx = req->ctx ? req->ctx[IDX] : NULL;
    if (ctx == NULL || req->status != 206 || req->header_only || ctx->n == 0 || hy_outq_empty(&req->body))
        return;
    hy_outq_t in = {0}, out = {0};
    hy_outq_move(&in, &req->body);
    if (ctx->n == 1)
        cut_single(ctx, &in, &out);
    else
        cut_multipart(req, ctx, &in, &out);
    hy_outq_move(&req->body, &out);
}

hy_module_t hy_http_range_module = {
    .name = "http_range",
    .header_filter = header_filter,
    .body_filter = body_filter,
};
