/* sub.c — nginx's sub_filter module: replace strings in response bodies.
 *
 * `sub_filter STRING REPLACEMENT` (several per level, inherited as a whole by a level that has none; both may
 * hold variables, evaluated once per request), `sub_filter_once` (each STRING replaced at most once; default
 * on), `sub_filter_last_modified`, `sub_filter_types` (text/html always; "*" any).
 *
 * Header filter, as nginx's: a response with a body (length unknown or > 0) of a listed type gets the filter;
 * Content-Length goes, and Last-Modified and ETag go too unless sub_filter_last_modified is on (then a strong
 * ETag is made weak). Unlike nginx, a response that already has a Content-Encoding (a precompressed file, a
 * compressed upstream body) is left alone: substituting inside compressed bytes would only corrupt them.
 *
 * Matching is case-insensitive (ASCII; the strings are lower-cased once). The leftmost match wins; at the same
 * position, the first configured string. Matches that span buffers are found: bytes that may begin a match
 * are kept back (fewer than the longest string) until the next buffer decides. A complete body (a static file,
 * an error page) is taken over (hy_req_filter_hold) and read READ_CHUNK bytes at a time, the next batch only when
 * the connection has written the previous one, so memory stays bounded whatever the file's size; once every
 * string has been replaced (sub_filter_once) the rest of the file is passed on as file segments. A body streamed
 * in pieces (hy_req_send_more) is substituted piece by piece as it comes. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <unistd.h>
#include "sub.h"
#include "../http/vars.h"
#include "../core/log.h"
#include "../core/file.h"

#define IDX (hy_http_sub_module.index)
#define READ_CHUNK 65536
#define BATCH_OUT 65536

typedef struct sub_pair {
    hy_complex_t match; /* lower-cased literal parts when constant */
    hy_complex_t repl;
} sub_pair_t;

typedef struct sub_loc {
    hy_array_t *pairs; /* sub_pair_t; NULL → inherit */
    int once, last_modified;
    hy_array_t *types; /* hy_str_t, lower-case, text/html first; NULL → inherit */
    bool types_any;
} sub_loc_t;

typedef struct pat {
    hy_str_t s; /* lower-case */
    const hy_complex_t *repl;
    hy_str_t r; /* the replacement, evaluated at first use */
    bool have_r, done;
} pat_t;

typedef struct sub_ctx {
    pat_t *p;
    size_t n, active, maxlen;
    bool once;
    unsigned char first[256]; /* can a string start with this byte (either case)? */
    char *pend;               /* bytes that may begin a match, fewer than maxlen */
    size_t pend_len;
    bool big, big_started; /* a complete body, produced batch by batch */
    bool failed;           /* the connection closes: nothing more goes out */
    hy_outq_t src;
    char *rbuf;
} sub_ctx_t;

typedef struct obuf {
    char *p;
    size_t len, cap;
} obuf_t;

static sub_loc_t *req_conf(hy_req_t *req)
{
    hy_http_loc_conf_t *l = req->loc ? req->loc : (req->srv ? req->srv->loc : NULL);
    return l && l->loc_conf ? l->loc_conf[IDX] : NULL;
}

static bool type_ok(const sub_loc_t *lc, hy_str_t ct)
{
    return hy_http_type_listed(lc->types, lc->types_any, true, ct);
}

/* ---------------- matching ---------------- */

static void ob_add(obuf_t *o, const char *p, size_t n)
{
    if (n == 0)
        return;
    if (o->len + n > o->cap) {
        size_t cap = o->cap ? o->cap : 4096;
        while (cap < o->len + n)
            cap *= 2;
        o->p = hy_realloc(o->p, cap);
        o->cap = cap;
    }
    memcpy(o->p + o->len, p, n);
    o->len += n;
}

static void ob_flush(obuf_t *o, hy_outq_t *out)
{
    if (o->len)
        hy_outq_push_mem(out, o->p, o->len, free, o->p);
    else
        free(o->p);
    *o = (obuf_t){0};
}

static inline unsigned char lower(unsigned char c)
{
    return c >= 'A' && c <= 'Z' ? (unsigned char)(c | 0x20) : c;
}

/* does text (any case) begin with n bytes of the lower-case pat? */
static bool ceq(const char *text, const char *pat, size_t n)
{
    for (size_t i = 0; i < n; i++)
        if (lower((unsigned char)text[i]) != (unsigned char)pat[i])
            return false;
    return true;
}

static hy_str_t replacement(hy_req_t *req, pat_t *p)
{
    if (!p->have_r) {
        p->have_r = true;
        if (hy_vars_eval(req, p->repl, &p->r) != 0)
            p->r = HY_STR_NULL;
    }
    return p->r;
}

/* Scan the kept-back bytes followed by data into out; without final, bytes that may begin a match are kept
 * back again. */
static void scan(hy_req_t *req, sub_ctx_t *ctx, const char *data, size_t len, bool final, hy_outq_t *out)
{
    char *joined = NULL;
    const char *buf = data;
    size_t blen = len;
    if (ctx->pend_len) {
        joined = hy_alloc(ctx->pend_len + len);
        memcpy(joined, ctx->pend, ctx->pend_len);
        if (len)
            memcpy(joined + ctx->pend_len, data, len);
        buf = joined, blen = ctx->pend_len + len;
        ctx->pend_len = 0;
    }
    obuf_t o = {0};
    size_t i = 0, emitted = 0, keep = blen;
    while (i < blen && ctx->active) {
        if (!ctx->first[(unsigned char)buf[i]]) {
            i++;
            continue;
        }
        size_t avail = blen - i;
        pat_t *hit = NULL;
        bool partial = false;
        for (size_t k = 0; k < ctx->n; k++) {
            pat_t *p = &ctx->p[k];
            if (p->done || p->s.len == 0)
                continue;
            if (avail >= p->s.len) {
                if (ceq(buf + i, p->s.ptr, p->s.len)) {
                    hit = p;
                    break;
                }
            } else if (!final && ceq(buf + i, p->s.ptr, avail)) {
                partial = true; /* an earlier string may still match here: wait for more bytes */
                break;
            }
        }
        if (partial) {
            keep = i;
            break;
        }
        if (hit == NULL) {
            i++;
            continue;
        }
        ob_add(&o, buf + emitted, i - emitted);
        hy_str_t r = replacement(req, hit);
        ob_add(&o, r.ptr, r.len);
        i += hit->s.len;
        emitted = i;
        if (ctx->once) {
            hit->done = true;
            ctx->active--;
        }
    }
    ob_add(&o, buf + emitted, keep - emitted);
    ob_flush(&o, out);
    if (keep < blen) {
        ctx->pend_len = blen - keep;
        memmove(ctx->pend, buf + keep, ctx->pend_len);
    }
    free(joined);
}

static bool exhausted(const sub_ctx_t *ctx)
{
    return ctx->active == 0 && ctx->pend_len == 0;
}

/* Drop the empty first segment of q (hy_outq_consume cannot). */
static void drop_empty(hy_outq_t *q)
{
    hy_seg_t *s = q->head;
    q->head = s->next;
    if (q->head == NULL)
        q->tail = NULL;
    s->next = NULL;
    hy_outq_t one = {.head = s, .tail = s};
    hy_outq_clear(&one);
}

/* Substitute from src into out until out holds `limit` bytes or src is empty (then, final: the kept-back
 * bytes are flushed). Returns -1 when a file cannot be read. */
static int run(hy_req_t *req, sub_ctx_t *ctx, hy_outq_t *src, bool final, size_t limit, hy_outq_t *out)
{
    while (src->head && out->bytes < limit) {
        if (exhausted(ctx)) { /* sub_filter_once and every string used: the rest as it is */
            hy_outq_move(out, src);
            break;
        }
        hy_seg_t *s = src->head;
        size_t n;
        if (s->kind == HY_SEG_MEM) {
            n = HY_MIN(s->mem.len, (size_t)READ_CHUNK);
            scan(req, ctx, s->mem.ptr, n, false, out);
        } else {
            n = (size_t)HY_MIN(s->file.len, (int64_t)READ_CHUNK);
            if (ctx->rbuf == NULL)
                ctx->rbuf = hy_alloc(READ_CHUNK);
            if (n && !hy_file_read_at(s->file.file, s->file.off, ctx->rbuf, n))
                return -1;
            scan(req, ctx, ctx->rbuf, n, false, out);
        }
        if (n == 0)
            drop_empty(src);
        else
            hy_outq_consume(src, n);
    }
    if (final && src->head == NULL && ctx->pend_len)
        scan(req, ctx, NULL, 0, true, out);
    return 0;
}

static void free_ctx(void *arg)
{
    sub_ctx_t *ctx = arg;
    hy_outq_clear(&ctx->src);
    free(ctx->rbuf);
    ctx->rbuf = NULL;
}

static void abort_proceed(hy_req_t *req)
{
    hy_req_ops(req)->abort(req);
}

/* The head is out or decided: nothing sane can follow; close instead of ending the body short. Inside a send
 * (our body filter) the connection cannot go away under the filters after us: the close waits for the
 * protocol's proceed. */
static void fail(hy_req_t *req, sub_ctx_t *ctx, hy_outq_t *out, bool in_send)
{
    hy_req_log(req, HY_LOG_ERR, "sub_filter: reading the response body failed");
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

static void big_proceed(hy_req_t *req)
{
    sub_ctx_t *ctx = req->ctx[IDX];
    hy_outq_t out = {0};
    if (run(req, ctx, &ctx->src, true, BATCH_OUT, &out) != 0)
        return fail(req, ctx, &out, false);
    hy_outq_move(&req->body, &out);
    bool done = ctx->src.head == NULL;
    if (done)
        free_ctx(ctx);
    hy_req_filter_send(req, &hy_http_sub_module, done, done ? NULL : big_proceed);
}

static void body_filter(hy_req_t *req, bool is_final)
{
    if (req->ctx == NULL || req->ctx[IDX] == NULL)
        return;
    sub_ctx_t *ctx = req->ctx[IDX];
    if (ctx->failed)
        return hy_outq_clear(&req->body);
    if (ctx->big_started)
        return; /* our own batches going through (hy_req_filter_send starts after us) */
    if (is_final && !hy_outq_empty(&req->body) && !exhausted(ctx)) { /* the producer is done: our pace */
        ctx->big = ctx->big_started = true;
        hy_outq_move(&ctx->src, &req->body);
        hy_outq_t out = {0};
        if (run(req, ctx, &ctx->src, true, BATCH_OUT, &out) != 0)
            return fail(req, ctx, &out, true);
        hy_outq_move(&req->body, &out);
        if (ctx->src.head)
            hy_req_filter_hold(req, big_proceed);
        else
            free_ctx(ctx);
        return;
    }
    hy_outq_t src = {0}, out = {0};
    hy_outq_move(&src, &req->body);
    if (run(req, ctx, &src, is_final, SIZE_MAX, &out) != 0) {
        hy_outq_clear(&src);
        return fail(req, ctx, &out, true);
    }
    hy_outq_move(&req->body, &out);
}

/* ---------------- header filter ---------------- */

static void header_filter(hy_req_t *req)
{
    sub_loc_t *lc = req_conf(req);
    if (lc == NULL || lc->pairs == NULL || req->content_length_n == 0 || !type_ok(lc, req->content_type))
        return;
    const hy_str_t *ce = hy_req_out_header(req, "Content-Encoding");
    if (ce && ce->len && !hy_str_caseeq(*ce, "identity"))
        return;
    sub_pair_t *pairs = lc->pairs->elts;
    size_t n = lc->pairs->nelts;
    sub_ctx_t *ctx = hy_pcalloc(req->pool, sizeof(*ctx));
    ctx->p = hy_pcalloc(req->pool, n * sizeof(pat_t));
    for (size_t i = 0; i < n; i++) {
        pat_t *p = &ctx->p[i];
        hy_str_t m = pairs[i].match.value;
        if (pairs[i].match.nparts) { /* with variables: evaluated for this request, lower-cased */
            hy_str_t v;
            if (hy_vars_eval(req, &pairs[i].match, &v) != 0)
                v = HY_STR_NULL;
            m = v.len ? hy_str_dup(req->pool, v) : HY_STR_NULL;
            hy_str_lower(m.ptr, m.len);
        }
        p->s = m;
        p->repl = &pairs[i].repl;
        if (m.len == 0)
            continue; /* an empty string matches nothing */
        ctx->active++;
        ctx->maxlen = HY_MAX(ctx->maxlen, m.len);
        unsigned char c = (unsigned char)m.ptr[0];
        ctx->first[c] = 1;
        if (c >= 'a' && c <= 'z')
            ctx->first[c - 32] = 1;
    }
    if (ctx->active == 0)
        return;
    ctx->n = n;
    ctx->once = lc->once == 1;
    ctx->pend = hy_palloc(req->pool, ctx->maxlen);
    hy_pool_on_clear(req->pool, free_ctx, ctx);
    *hy_req_ctx(req, &hy_http_sub_module) = ctx;
    hy_req_body_rewritten(req, lc->last_modified == 1);
}

/* ---------------- configuration ---------------- */

static void *create_loc(hy_conf_t *cf)
{
    sub_loc_t *l = hy_pcalloc(cf->pool, sizeof(*l));
    l->once = l->last_modified = HY_UNSET;
    return l;
}

static int merge_loc(hy_conf_t *cf, void *parent, void *child)
{
    (void)cf;
    sub_loc_t *p = parent, *c = child;
    hy_merge_value(c->once, p->once, 1);
    hy_merge_value(c->last_modified, p->last_modified, 0);
    if (c->pairs == NULL)
        c->pairs = p->pairs;
    if (c->types == NULL && !c->types_any) {
        c->types = p->types;
        c->types_any = p->types_any;
    }
    return 0;
}

static int set_sub(hy_conf_t *cf, const hy_directive_t *d, void *conf)
{
    (void)d;
    sub_loc_t *lc = conf;
    size_t n;
    hy_str_t *a = hy_conf_args(cf, &n);
    if (lc->pairs == NULL)
        lc->pairs = hy_array_create(cf->pool, 2, sizeof(sub_pair_t));
    sub_pair_t *pair = hy_array_push(lc->pairs);
    memset(pair, 0, sizeof(*pair));
    hy_str_t m = hy_str_dup(cf->pool, a[1]);
    if (hy_vars_compile(cf, m, &pair->match) != 0 || hy_vars_compile(cf, a[2], &pair->repl) != 0)
        return -1;
    if (pair->match.nparts == 0) {
        hy_str_lower(pair->match.value.ptr, pair->match.value.len);
        if (pair->match.value.len == 0)
            return hy_conf_error(cf, "empty search pattern");
    }
    return 0;
}

static int set_types(hy_conf_t *cf, const hy_directive_t *d, void *conf)
{
    (void)d;
    sub_loc_t *lc = conf;
    size_t n;
    hy_str_t *a = hy_conf_args(cf, &n);
    if (lc->types == NULL) {
        lc->types = hy_array_create(cf->pool, n, sizeof(hy_str_t));
        *(hy_str_t *)hy_array_push(lc->types) = HY_STR("text/html");
    }
    for (size_t i = 1; i < n; i++) {
        if (hy_str_eq(a[i], "*")) {
            lc->types_any = true;
            continue;
        }
        hy_str_t t = hy_str_dup(cf->pool, a[i]);
        hy_str_lower(t.ptr, t.len);
        *(hy_str_t *)hy_array_push(lc->types) = t;
    }
    return 0;
}

#define LOC(field) .conf = HY_CONF_LOC, .offset = offsetof(sub_loc_t, field)

static const hy_directive_t sub_directives[] = {
    {.name = "sub_filter", .ctx = HY_CTX_HTTP_ANY, .args = HY_ARGS_2, .set = set_sub, LOC(pairs)},
    {.name = "sub_filter_once", .ctx = HY_CTX_HTTP_ANY, .args = HY_ARGS_FLAG, .set = hy_slot_flag, LOC(once)},
    {.name = "sub_filter_last_modified", .ctx = HY_CTX_HTTP_ANY, .args = HY_ARGS_FLAG, .set = hy_slot_flag,
     LOC(last_modified)},
    {.name = "sub_filter_types", .ctx = HY_CTX_HTTP_ANY, .args = HY_ARGS_1MORE, .set = set_types, LOC(types)},
    {0},
};

hy_module_t hy_http_sub_module = {
    .name = "http_sub",
    .directives = sub_directives,
    .create_loc_conf = create_loc,
    .merge_loc_conf = merge_loc,
    .header_filter = header_filter,
    .body_filter = body_filter,
};
