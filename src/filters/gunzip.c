/* gunzip.c — nginx's gunzip module: decompress "Content-Encoding: gzip" responses for clients that cannot take
 * gzip (typically with `gzip_static always`, or a backend that always compresses).
 *
 * Header filter, as nginx's: with `gunzip on` and a response whose Content-Encoding is exactly gzip, the
 * response varies on Accept-Encoding (gzip_vary then adds the Vary field); a client that would get gzip (gzip's
 * own rules: gzip_http_version, gzip_proxied, gzip_disable, Accept-Encoding) gets the body as it is. Otherwise
 * Content-Encoding, Content-Length and Accept-Ranges go and a strong ETag is made weak, and the body filter
 * inflates the stream (several gzip members one after another, as nginx). It sits before sub_filter and gzip in
 * hy_modules[], as in nginx, so those see the plain text.
 *
 * Memory is bounded: a complete body (a .gz file) is taken over (hy_req_filter_hold) and inflated one batch of
 * at most gunzip_buffers (number x size) output bytes at a time, the next only when the connection has written
 * the previous one, whatever the compression ratio. A body streamed in pieces (hy_req_send_more) is inflated
 * piece by piece as it comes (each piece whole: its output is bounded by that piece's ratio only).
 * Corrupt data: nginx's "inflate() failed" in the error log, and the connection is closed (the head is out). */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <zlib.h>
#include "gunzip.h"
#include "gzip.h"
#include "../core/file.h"
#include "../core/log.h"

#define IDX (hy_http_gunzip_module.index)
#define READ_CHUNK 65536

typedef struct gunzip_loc {
    int enable;
    int64_t buffers_num, buffers_size;
} gunzip_loc_t;

typedef struct gunzip_ctx {
    z_stream zs;
    bool zs_init, ended, failed, held;
    bool more_out;          /* the last inflate filled its buffer: there may be more output without input */
    size_t out_size, batch; /* one output buffer; output bytes per batch (held) */
    hy_outq_t src;          /* held: the compressed body not inflated yet */
    char *in;               /* READ_CHUNK bytes of input being inflated (zs.next_in points into it) */
} gunzip_ctx_t;

static gunzip_loc_t *req_conf(hy_req_t *req)
{
    hy_http_loc_conf_t *l = req->loc ? req->loc : (req->srv ? req->srv->loc : NULL);
    return l && l->loc_conf ? l->loc_conf[IDX] : NULL;
}

static void free_ctx(void *arg)
{
    gunzip_ctx_t *ctx = arg;
    if (ctx->zs_init)
        inflateEnd(&ctx->zs);
    ctx->zs_init = false;
    hy_outq_clear(&ctx->src);
    free(ctx->in);
    ctx->in = NULL;
}

/* Refill the input from the front of src (when the previous input is used up); false when src is empty. */
static int refill(gunzip_ctx_t *ctx, hy_outq_t *src)
{
    while (ctx->zs.avail_in == 0) {
        hy_seg_t *s = src->head;
        if (s == NULL)
            return 0;
        size_t n;
        if (s->kind == HY_SEG_MEM) {
            n = HY_MIN(s->mem.len, (size_t)READ_CHUNK);
            memcpy(ctx->in, s->mem.ptr, n);
        } else {
            n = (size_t)HY_MIN(s->file.len, (int64_t)READ_CHUNK);
            if (n && !hy_file_read_at(s->file.file, s->file.off, ctx->in, n))
                return -1;
        }
        if (n == 0) { /* an empty segment: hy_outq_consume cannot drop it */
            src->head = s->next;
            if (src->head == NULL)
                src->tail = NULL;
            s->next = NULL;
            hy_outq_t one = {.head = s, .tail = s};
            hy_outq_clear(&one);
            continue;
        }
        hy_outq_consume(src, n);
        ctx->zs.next_in = (Bytef *)ctx->in;
        ctx->zs.avail_in = (uInt)n;
    }
    return 1;
}

/* Inflate from src into out until out holds `limit` bytes or the input is used up. -1 on corrupt data (logged)
 * or a read error. */
static int run(hy_req_t *req, gunzip_ctx_t *ctx, hy_outq_t *src, size_t limit, hy_outq_t *out)
{
    while (out->bytes < limit) {
        int r = refill(ctx, src);
        if (r < 0) {
            hy_req_log(req, HY_LOG_ERR, "gunzip: reading the response body failed");
            return -1;
        }
        if (r == 0 && !ctx->more_out)
            return 0;
        if (r && ctx->ended) { /* another gzip member follows the one that ended */
            inflateReset(&ctx->zs);
            ctx->ended = false;
        }
        char *buf = hy_alloc(ctx->out_size);
        ctx->zs.next_out = (Bytef *)buf;
        ctx->zs.avail_out = (uInt)ctx->out_size;
        uInt in_before = ctx->zs.avail_in;
        int rc = inflate(&ctx->zs, Z_NO_FLUSH);
        size_t got = ctx->out_size - ctx->zs.avail_out;
        /* a full output buffer may leave output inside zlib even when the input is used up */
        ctx->more_out = rc == Z_OK && ctx->zs.avail_out == 0;
        if (rc == Z_BUF_ERROR && got == 0 && in_before && ctx->zs.avail_in == in_before)
            rc = Z_DATA_ERROR; /* no progress with input and room: never loop on it */
        if (got)
            hy_outq_push_mem(out, buf, got, free, buf);
        else
            free(buf);
        if (rc == Z_STREAM_END) {
            ctx->ended = true;
        } else if (rc != Z_OK && rc != Z_BUF_ERROR) {
            hy_req_log(req, HY_LOG_ERR, "inflate() failed: %d", rc);
            return -1;
        }
    }
    return 0;
}

/* Is there input or output left (a held body)? */
static bool pending(const gunzip_ctx_t *ctx)
{
    return ctx->src.head || ctx->zs.avail_in || ctx->more_out;
}

static void abort_proceed(hy_req_t *req)
{
    hy_req_ops(req)->abort(req);
}

/* The head is out or decided: nothing sane can follow; close instead of ending the body short. Inside a send
 * (our body filter) the connection cannot go away under the filters after us: the close waits for the
 * protocol's proceed. */
static void fail(hy_req_t *req, gunzip_ctx_t *ctx, hy_outq_t *out, bool in_send)
{
    hy_outq_clear(out);
    free_ctx(ctx);
    ctx->failed = true;
    req->keepalive = false;
    if (in_send) {
        hy_outq_clear(&req->body);
        hy_req_filter_hold(req, abort_proceed);
    } else {
        hy_req_ops(req)->abort(req);
    }
}

static void held_proceed(hy_req_t *req)
{
    gunzip_ctx_t *ctx = req->ctx[IDX];
    hy_outq_t out = {0};
    if (run(req, ctx, &ctx->src, ctx->batch, &out) != 0)
        return fail(req, ctx, &out, false);
    hy_outq_move(&req->body, &out);
    bool done = !pending(ctx);
    if (done)
        free_ctx(ctx);
    hy_req_filter_send(req, &hy_http_gunzip_module, done, done ? NULL : held_proceed);
}

static void body_filter(hy_req_t *req, bool is_final)
{
    if (req->ctx == NULL || req->ctx[IDX] == NULL)
        return;
    gunzip_ctx_t *ctx = req->ctx[IDX];
    if (ctx->held)
        return; /* our own batches going through */
    if (ctx->failed || !ctx->zs_init) {
        hy_outq_clear(&req->body);
        return;
    }
    hy_outq_t out = {0};
    if (is_final && !hy_outq_empty(&req->body)) { /* the producer is done: our pace */
        ctx->held = true;
        hy_outq_move(&ctx->src, &req->body);
        if (run(req, ctx, &ctx->src, ctx->batch, &out) != 0)
            return fail(req, ctx, &out, true);
        hy_outq_move(&req->body, &out);
        if (pending(ctx))
            hy_req_filter_hold(req, held_proceed);
        else
            free_ctx(ctx);
        return;
    }
    hy_outq_t src = {0};
    hy_outq_move(&src, &req->body);
    /* everything given now is inflated now: bytes left in zs.next_in point into ctx->in, never into src */
    int rc = run(req, ctx, &src, SIZE_MAX, &out);
    hy_outq_clear(&src);
    if (rc != 0)
        return fail(req, ctx, &out, true);
    hy_outq_move(&req->body, &out);
    if (is_final)
        free_ctx(ctx);
}

static void header_filter(hy_req_t *req)
{
    gunzip_loc_t *lc = req_conf(req);
    if (lc == NULL || lc->enable != 1)
        return;
    const hy_str_t *ce = hy_req_out_header(req, "Content-Encoding");
    if (ce == NULL || !hy_str_caseeq(*ce, "gzip"))
        return;
    hy_gzip_mark_vary(req);
    if (!req->sr_output && hy_gzip_client_accepts(req)) /* a body for a parent (SSI include) is always inflated:
                                                         * it becomes part of the parent's, as nginx */
        return;
    gunzip_ctx_t *ctx = hy_pcalloc(req->pool, sizeof(*ctx));
    *hy_req_ctx(req, &hy_http_gunzip_module) = ctx;
    hy_req_del_header(req, "Content-Encoding");
    hy_req_del_header(req, "Content-Length");
    req->content_length_n = -1;
    req->accept_ranges = false;
    hy_req_del_header(req, "Accept-Ranges"); /* a proxied one (nginx's ngx_http_clear_accept_ranges) */
    hy_req_weaken_etag(req);
    if (req->header_only)
        return;
    if (inflateInit2(&ctx->zs, 16 + MAX_WBITS) != Z_OK) {
        hy_req_log(req, HY_LOG_ERR, "inflateInit2() failed");
        ctx->failed = true;
        req->keepalive = false;
        return;
    }
    ctx->zs_init = true;
    ctx->in = hy_alloc(READ_CHUNK);
    ctx->out_size = (size_t)lc->buffers_size;
    ctx->batch = (size_t)(lc->buffers_num * lc->buffers_size);
    hy_pool_on_clear(req->pool, free_ctx, ctx);
}

/* ---------------- configuration ---------------- */

static void *create_loc(hy_conf_t *cf)
{
    gunzip_loc_t *l = hy_pcalloc(cf->pool, sizeof(*l));
    l->enable = HY_UNSET;
    l->buffers_num = l->buffers_size = HY_UNSET;
    return l;
}

static int merge_loc(hy_conf_t *cf, void *parent, void *child)
{
    (void)cf;
    gunzip_loc_t *p = parent, *c = child;
    hy_merge_value(c->enable, p->enable, 0);
    if (c->buffers_num == HY_UNSET) {
        long page = sysconf(_SC_PAGESIZE);
        int64_t def_size = page > 0 ? page : 4096; /* nginx: 32 4k or 16 8k, one memory page */
        c->buffers_num = p->buffers_num == HY_UNSET ? (def_size >= 8192 ? 16 : 32) : p->buffers_num;
        c->buffers_size = p->buffers_size == HY_UNSET ? def_size : p->buffers_size;
    }
    return 0;
}

static int set_buffers(hy_conf_t *cf, const hy_directive_t *d, void *conf)
{
    gunzip_loc_t *lc = conf;
    if (lc->buffers_num != HY_UNSET)
        return hy_conf_error(cf, "\"%s\" directive is duplicate", d->name);
    size_t n;
    hy_str_t *a = hy_conf_args(cf, &n);
    int64_t num = hy_parse_int(a[1].ptr, a[1].len), size = hy_parse_size(a[2].ptr, a[2].len);
    if (num <= 0 || size <= 0)
        return hy_conf_error(cf, "\"%s\" directive invalid value", d->name);
    lc->buffers_num = num;
    lc->buffers_size = size;
    return 0;
}

#define LOC(field) .conf = HY_CONF_LOC, .offset = offsetof(gunzip_loc_t, field)

static const hy_directive_t gunzip_directives[] = {
    {.name = "gunzip", .ctx = HY_CTX_HTTP_ANY, .args = HY_ARGS_FLAG, .set = hy_slot_flag, LOC(enable)},
    {.name = "gunzip_buffers", .ctx = HY_CTX_HTTP_ANY, .args = HY_ARGS_2, .set = set_buffers, LOC(buffers_num)},
    {0},
};

hy_module_t hy_http_gunzip_module = {
    .name = "http_gunzip",
    .directives = gunzip_directives,
    .create_loc_conf = create_loc,
    .merge_loc_conf = merge_loc,
    .header_filter = header_filter,
    .body_filter = body_filter,
    .subrequest_body = true,
};
