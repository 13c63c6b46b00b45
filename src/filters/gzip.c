/* filter_gzip.c — response compression as nginx's ngx_http_gzip_module and ngx_http_gzip_static_module do it,
 * plus brotli and zstd (ngx_brotli's and zstd-nginx-module's directive names) and a compressed-body cache.
 *
 * Header filter: a response is eligible for a codec when the codec is on, the status is 200/403/404, no
 * Content-Encoding is set, it has a body (not HEAD/304/204), its length is unknown or >= *_min_length and its
 * type is in *_types (text/html always). Eligible → "Vary: Accept-Encoding" (with gzip_vary) whatever the
 * client says, as nginx. Then the client checks shared by every codec (gzip_http_version, gzip_proxied with
 * Via, gzip_disable), and Accept-Encoding picks the codec: highest q, ties br > zstd > gzip.
 * Compressing: Content-Encoding added, Accept-Ranges dropped, a strong ETag made weak (W/"..."), Last-Modified
 * kept. When the whole body is already queued (static files, error pages) and fits WHOLE_MAX it is compressed at
 * once and sent with a correct Content-Length; static files go through the per-worker cache keyed by file identity
 * and version. A larger complete body is streamed with backpressure: the filter takes it over (hy_req_filter_hold),
 * reads and compresses one batch, and compresses the next only when the connection has written the previous one
 * (proceed), so memory stays bounded whatever the file's size. A body that arrives in pieces is streamed through
 * the codec as it comes. Streamed bodies are chunked on HTTP/1.1, close-delimited on 1.0. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <unistd.h>
#include <sys/stat.h>
#include "gzip.h"
#include "compress.h"
#include "compress_cache.h"
#include "accept_encoding.h"
#include "../conf/cycle.h"
#include "../conf/conf_regex.h"
#include "../core/httpdate.h"
#include "../core/clock.h"
#include "../http/msie.h"
#include "../core/log.h"

#define IDX (hy_http_gzip_module.index)
#define NCODEC 3               /* gzip, br, zstd: HY_CODING_* below HY_CODING_IDENTITY */
#define WHOLE_MAX (8 << 20)    /* complete bodies up to this size are compressed in one buffer; larger stream */
#define READ_CHUNK 65536

enum { STATIC_OFF = 0, STATIC_ON, STATIC_ALWAYS };
enum {
    PROXIED_OFF = 0x002, PROXIED_EXPIRED = 0x004, PROXIED_NO_CACHE = 0x008, PROXIED_NO_STORE = 0x010,
    PROXIED_PRIVATE = 0x020, PROXIED_NO_LM = 0x040, PROXIED_NO_ETAG = 0x080, PROXIED_AUTH = 0x100,
    PROXIED_ANY = 0x200,
};

static const int server_prefs[NCODEC] = {HY_CODING_BR, HY_CODING_ZSTD, HY_CODING_GZIP};
static const char *const static_ext[NCODEC] = {".gz", ".br", ".zst"};

typedef struct codec_conf {
    int enable;         /* gzip / brotli / zstd */
    int static_mode;    /* *_static: STATIC_* */
    int64_t level;      /* *_comp_level */
    int64_t min_length; /* *_min_length */
    hy_array_t *types;  /* *_types: hy_str_t, lower-case; "*" = any; NULL → inherit */
    bool types_any;
} codec_conf_t;

typedef struct gz_loc {
    codec_conf_t c[NCODEC];
    int vary, http_version, disable_msie6;
    int64_t proxied;              /* PROXIED_* bits, HY_UNSET until set */
    hy_array_t *disable;          /* hy_regex_t *, NULL → inherit / none */
    int64_t buffers_num, buffers_size; /* parsed, unused: bodies are compressed whole or in 16 KiB chunks */
} gz_loc_t;

typedef struct gz_main {
    int64_t cache_size;      /* 0 = off */
    int64_t cache_max_file;
} gz_main_t;

typedef struct gz_ctx {
    bool vary, vary_added;
    bool static_sent;        /* a precompressed variant is being served: no ranges (nginx 1.22) */
    bool client_tested, client_ok;
    bool ae_parsed;
    hy_accept_encoding_t ae;
    hy_zstream_t *zs;        /* streaming: freed at is_final or when the request pool is reset */
    int zs_codec;
    bool zs_failed;
    bool big, big_started;   /* a large complete body, compressed batch by batch with backpressure */
    hy_outq_t src;           /* big: the body not compressed yet (file segments hold their file) */
    char *rbuf;              /* big: READ_CHUNK bytes for file reads */
} gz_ctx_t;

/* the per-worker cache (init_worker creates it, flush_worker drops it) */
static hy_ccache_t *cache;
static int64_t cache_max_file;

/* ---------------- request helpers ---------------- */

static gz_loc_t *req_conf(hy_req_t *req)
{
    hy_http_loc_conf_t *l = req->loc ? req->loc : (req->srv ? req->srv->loc : NULL);
    return l && l->loc_conf ? l->loc_conf[IDX] : NULL;
}

static gz_ctx_t *req_ctx(hy_req_t *req)
{
    void **slot = hy_req_ctx(req, &hy_http_gzip_module);
    if (*slot == NULL)
        *slot = hy_pcalloc(req->pool, sizeof(gz_ctx_t));
    return *slot;
}

static bool has_req_header(hy_req_t *req, const char *name)
{
    for (size_t i = 0; i < req->num_headers; i++)
        if (hy_str_caseeq(req->headers[i].name, name))
            return true;
    return false;
}

/* a token (case-insensitive) in a list such as Cache-Control, as nginx's ngx_http_parse_multi_header_lines()
 * without a value: after the start, a "," or a space, and before the end, a "," or a space ("no-cache=..." is
 * not "no-cache") */
static bool has_token(hy_str_t v, const char *tok)
{
    size_t n = strlen(tok);
    for (size_t i = 0; i + n <= v.len; i++) {
        if (strncasecmp(v.ptr + i, tok, n) != 0)
            continue;
        bool start = i == 0 || v.ptr[i - 1] == ',' || v.ptr[i - 1] == ' ';
        bool end = i + n == v.len || v.ptr[i + n] == ',' || v.ptr[i + n] == ' ';
        if (start && end)
            return true;
    }
    return false;
}

/* nginx's ngx_http_gzip_ok() minus Accept-Encoding: HTTP version, msie6, proxied requests, gzip_disable */
static bool client_ok(hy_req_t *req, gz_loc_t *lc, gz_ctx_t *ctx)
{
    if (ctx->client_tested)
        return ctx->client_ok;
    ctx->client_tested = true;
    ctx->client_ok = false;
    if (lc->disable_msie6 && hy_http_ua_msie6(req->h_user_agent)) /* nginx's "msie6" (http/msie.c) */
        return false;
    if (req->version < lc->http_version)
        return false;
    if (has_req_header(req, "Via")) {
        int64_t p = lc->proxied;
        if (p & PROXIED_OFF)
            return false;
        if (p & PROXIED_ANY)
            goto ok;
        if ((p & PROXIED_AUTH) && has_req_header(req, "Authorization"))
            goto ok;
        const hy_str_t *e = hy_req_out_header(req, "Expires");
        if (e) {
            if (!(p & PROXIED_EXPIRED))
                return false;
            int64_t expires = hy_httpdate_parse(e->ptr, e->len);
            if (expires < 0 || expires >= hy_clock_time())
                return false;
            goto ok;
        }
        const hy_str_t *cc = hy_req_out_header(req, "Cache-Control");
        if (cc) {
            if (((p & PROXIED_NO_CACHE) && has_token(*cc, "no-cache")) ||
                ((p & PROXIED_NO_STORE) && has_token(*cc, "no-store")) ||
                ((p & PROXIED_PRIVATE) && has_token(*cc, "private")))
                goto ok;
            return false;
        }
        /* nginx tests the Last-Modified header element, which only a proxied response has at this point:
         * a static file's own modification time does not count */
        if ((p & PROXIED_NO_LM) &&
            (hy_req_out_header(req, "Last-Modified") || (req->last_modified >= 0 && req->file == NULL)))
            return false; /* a proxied Last-Modified is kept as req->last_modified, a file's comes with req->file */
        if ((p & PROXIED_NO_ETAG) && req->etag.len)
            return false;
    }
ok:
    if (lc->disable && req->h_user_agent) {
        hy_regex_t **re = lc->disable->elts;
        for (size_t i = 0; i < lc->disable->nelts; i++) /* nginx's ngx_regex_exec_array: no captures */
            if (hy_regex_exec(re[i], *req->h_user_agent, NULL) > 0)
                return false;
    }
    ctx->client_ok = true;
    return true;
}

static const hy_accept_encoding_t *req_ae(hy_req_t *req, gz_ctx_t *ctx)
{
    if (!ctx->ae_parsed) {
        ctx->ae_parsed = true;
        hy_ae_init(&ctx->ae);
        for (size_t i = 0; i < req->num_headers; i++)
            if (hy_str_caseeq(req->headers[i].name, "Accept-Encoding"))
                hy_ae_parse(&ctx->ae, req->headers[i].value.ptr, req->headers[i].value.len);
    }
    return &ctx->ae;
}

static bool type_ok(const codec_conf_t *cc, hy_str_t ct)
{
    return hy_http_type_listed(cc->types, cc->types_any, false, ct);
}

/* Bit set of the codecs that would encode this response (nginx's first test in its header filter). */
static unsigned eligible(hy_req_t *req, gz_loc_t *lc, int64_t length)
{
    /* HEAD is not excluded: nginx sets header_only after the filters, so HEAD gets GET's headers */
    if (req->status != 200 && req->status != 403 && req->status != 404)
        return 0;
    const hy_str_t *ce = hy_req_out_header(req, "Content-Encoding");
    if (ce && ce->len)
        return 0;
    unsigned set = 0;
    for (int c = 0; c < NCODEC; c++) {
        const codec_conf_t *cc = &lc->c[c];
        if (cc->enable == 1 && (length < 0 || length >= cc->min_length) && type_ok(cc, req->content_type))
            set |= 1u << c;
    }
    return set;
}

/* The codec to encode with, or -1; marks ctx->vary when the response is eligible at all. */
static int decide(hy_req_t *req, gz_loc_t *lc, int64_t length, gz_ctx_t *ctx)
{
    unsigned set = eligible(req, lc, length);
    if (set == 0)
        return -1;
    ctx->vary = true;
    if (!client_ok(req, lc, ctx))
        return -1;
    return hy_ae_choose(req_ae(req, ctx), set, server_prefs, NCODEC);
}

/* ---------------- compressing ---------------- */

static void push_free(void *arg, char *buf, size_t len)
{
    hy_outq_push_mem(arg, buf, len, free, buf);
}

/* Feed every segment of q to a stream (final: finish it), output appended to out. */
static int stream_queue(hy_zstream_t *zs, hy_outq_t *q, bool final, hy_outq_t *out)
{
    char *buf = NULL;
    int rc = 0;
    for (hy_seg_t *s = q->head; s && rc == 0; s = s->next) {
        if (s->kind == HY_SEG_MEM) {
            rc = hy_zstream_write(zs, s->mem.ptr, s->mem.len, false, push_free, out);
            continue;
        }
        if (buf == NULL)
            buf = hy_alloc(READ_CHUNK);
        for (int64_t done = 0; done < s->file.len && rc == 0;) {
            size_t n = (size_t)HY_MIN((int64_t)READ_CHUNK, s->file.len - done);
            if (!hy_file_read_at(s->file.file, s->file.off + done, buf, n))
                rc = -1;
            else
                rc = hy_zstream_write(zs, buf, n, false, push_free, out);
            done += (int64_t)n;
        }
    }
    free(buf);
    if (rc == 0 && final)
        rc = hy_zstream_write(zs, NULL, 0, true, push_free, out);
    return rc;
}

/* The whole body (queued in req->body) as one buffer; *owned when it had to be copied. */
static char *gather(hy_req_t *req, size_t total, bool *owned)
{
    hy_seg_t *s = req->body.head;
    *owned = false;
    if (s && s->next == NULL && s->kind == HY_SEG_MEM)
        return (char *)s->mem.ptr;
    char *buf = hy_alloc(total ? total : 1), *p = buf;
    for (; s; s = s->next) {
        if (s->kind == HY_SEG_MEM) {
            memcpy(p, s->mem.ptr, s->mem.len);
            p += s->mem.len;
        } else {
            if (!hy_file_read_at(s->file.file, s->file.off, p, (size_t)s->file.len)) {
                free(buf);
                return NULL;
            }
            p += s->file.len;
        }
    }
    *owned = true;
    return buf;
}

static void log_fail(hy_req_t *req, int codec, const char *what)
{
    hy_req_log(req, HY_LOG_ERR, "%s compression failed (%s), sent uncompressed", hy_codec_name(codec), what);
}

/* The cache key of the static file being served whole, when it is cacheable. */
static bool file_key(hy_req_t *req, int codec, int level, hy_ccache_key_t *key)
{
    hy_file_t *f = req->file;
    if (cache == NULL || f == NULL || req->status != 200 || f->size != req->content_length_n ||
        req->content_length_n > cache_max_file)
        return false;
    struct stat st;
    if (fstat(f->fd, &st) != 0 || st.st_size != f->size)
        return false;
    *key = (hy_ccache_key_t){.dev = (uint64_t)st.st_dev, .ino = (uint64_t)st.st_ino, .size = st.st_size,
                             .mtime_ns = (int64_t)st.st_mtim.tv_sec * 1000000000 + st.st_mtim.tv_nsec,
                             .ctime_ns = (int64_t)st.st_ctim.tv_sec * 1000000000 + st.st_ctim.tv_nsec,
                             .codec = codec, .level = level};
    return true;
}

/* HEAD: the compressed length when the cache knows it, else none (nginx never sends one) */
static void head_length(hy_req_t *req, int codec, int level)
{
    hy_ccache_key_t key;
    hy_ccache_entry_t *e = file_key(req, codec, level, &key) ? hy_ccache_get(cache, &key) : NULL;
    req->content_length_n = e ? (int64_t)e->len : -1;
    if (e)
        hy_ccache_release(e);
}

/* Replace the complete queued body with its compressed form; false (body untouched) on failure. */
static bool compress_whole(hy_req_t *req, int codec, int level)
{
    size_t total = (size_t)req->content_length_n;
    hy_ccache_key_t key;
    bool keyed = file_key(req, codec, level, &key);
    hy_ccache_entry_t *e = keyed ? hy_ccache_get(cache, &key) : NULL;
    if (e) {
        hy_outq_clear(&req->body);
        hy_outq_push_mem(&req->body, e->data, e->len, hy_ccache_release, e);
        req->content_length_n = (int64_t)e->len;
        return true;
    }
    bool owned;
    char *in = gather(req, total, &owned);
    if (in == NULL) {
        log_fail(req, codec, "read");
        return false;
    }
    size_t out_len = 0;
    char *out = hy_compress_buf(codec, level, in, total, &out_len);
    if (owned)
        free(in);
    if (out == NULL) {
        log_fail(req, codec, "buffer");
        return false;
    }
    hy_outq_clear(&req->body);
    e = keyed ? hy_ccache_put(cache, &key, out, out_len) : NULL;
    if (e)
        hy_outq_push_mem(&req->body, e->data, e->len, hy_ccache_release, e);
    else
        hy_outq_push_mem(&req->body, out, out_len, free, out);
    req->content_length_n = (int64_t)out_len;
    return true;
}

static void free_stream(void *arg)
{
    gz_ctx_t *ctx = arg;
    hy_zstream_free(ctx->zs);
    ctx->zs = NULL;
}

/* ---------------- a large complete body: streamed with backpressure ---------------- */

#define BATCH_OUT 65536 /* compressed bytes handed to the protocol per batch (at least one codec chunk) */

static void free_big(void *arg)
{
    gz_ctx_t *ctx = arg;
    hy_zstream_free(ctx->zs);
    ctx->zs = NULL;
    hy_outq_clear(&ctx->src);
    free(ctx->rbuf);
    ctx->rbuf = NULL;
}

/* Compress from ctx->src into out until out holds BATCH_OUT bytes or the source is done (then the stream is
 * finished and freed). Memory: one READ_CHUNK buffer and the codec's state, whatever the body's size. */
static int big_batch(gz_ctx_t *ctx, hy_outq_t *out)
{
    while (out->bytes < BATCH_OUT && ctx->src.head) {
        hy_seg_t *s = ctx->src.head;
        int rc = 0;
        size_t n;
        if (s->kind == HY_SEG_MEM) {
            n = HY_MIN(s->mem.len, (size_t)READ_CHUNK);
            rc = hy_zstream_write(ctx->zs, s->mem.ptr, n, false, push_free, out);
        } else {
            n = (size_t)HY_MIN(s->file.len, (int64_t)READ_CHUNK);
            if (!hy_file_read_at(s->file.file, s->file.off, ctx->rbuf, n))
                return -1;
            rc = hy_zstream_write(ctx->zs, ctx->rbuf, n, false, push_free, out);
        }
        if (rc != 0)
            return -1;
        if (n == 0) { /* an empty segment: consume() cannot drop it, a one-segment queue can */
            ctx->src.head = s->next;
            if (ctx->src.head == NULL)
                ctx->src.tail = NULL;
            s->next = NULL;
            hy_outq_t one = {.head = s, .tail = s};
            hy_outq_clear(&one);
            continue;
        }
        hy_outq_consume(&ctx->src, n);
    }
    if (ctx->src.head == NULL && ctx->zs) {
        if (hy_zstream_write(ctx->zs, NULL, 0, true, push_free, out) != 0)
            return -1;
        free_big(ctx);
    }
    return 0;
}

static void big_fail(hy_req_t *req, gz_ctx_t *ctx, hy_outq_t *out)
{
    /* the head is out or decided: nothing sane can follow; close instead of ending the body short */
    log_fail(req, ctx->zs_codec, "stream");
    hy_outq_clear(out);
    free_big(ctx);
    req->keepalive = false;
    hy_req_ops(req)->abort(req);
}

/* proceed: the protocol wrote the previous batch; queue the next one */
static void big_proceed(hy_req_t *req)
{
    gz_ctx_t *ctx = req->ctx[IDX];
    hy_outq_t out = {0};
    if (big_batch(ctx, &out) != 0) {
        big_fail(req, ctx, &out);
        return;
    }
    hy_outq_move(&req->body, &out);
    bool done = ctx->zs == NULL;
    hy_req_filter_send(req, &hy_http_gzip_module, done, done ? NULL : big_proceed);
}

/* body filter, first call: take the body over and send its first batch; the rest follows in big_proceed */
static void big_start(hy_req_t *req, gz_ctx_t *ctx)
{
    ctx->big_started = true;
    hy_outq_move(&ctx->src, &req->body);
    ctx->rbuf = hy_alloc(READ_CHUNK);
    hy_outq_t out = {0};
    if (big_batch(ctx, &out) != 0) {
        big_fail(req, ctx, &out);
        return;
    }
    hy_outq_move(&req->body, &out);
    if (ctx->zs)
        hy_req_filter_hold(req, big_proceed);
}

static void header_filter(hy_req_t *req)
{
    gz_loc_t *lc = req_conf(req);
    if (lc == NULL)
        return;
    bool have_ctx = req->ctx && req->ctx[IDX];
    if (!have_ctx && lc->c[0].enable != 1 && lc->c[1].enable != 1 && lc->c[2].enable != 1)
        return; /* nothing on here and no *_static variant was looked at: no per-request state needed */
    gz_ctx_t *ctx = req_ctx(req);
    if (ctx->static_sent && req->status == 200)
        req->accept_ranges = false;
    int codec = decide(req, lc, req->content_length_n, ctx);
    if (codec >= 0) {
        int level = (int)lc->c[codec].level;
        bool whole = req->content_length_n >= 0 && (int64_t)req->body.bytes == req->content_length_n;
        bool ok = false;
        if (req->header_only) {
            head_length(req, codec, level);
            ok = true;
        } else if (whole && req->content_length_n > WHOLE_MAX) { /* large: stream it, bounded memory */
            ctx->zs = hy_zstream_new(codec, level);
            ctx->zs_codec = codec;
            if (ctx->zs) {
                ctx->big = true;
                hy_pool_on_clear(req->pool, free_big, ctx);
                req->content_length_n = -1;
                ok = true;
            } else {
                log_fail(req, codec, "init");
            }
        } else if (whole) {
            ok = compress_whole(req, codec, level);
        } else {
            ctx->zs = hy_zstream_new(codec, level);
            ctx->zs_codec = codec;
            if (ctx->zs) {
                hy_pool_on_clear(req->pool, free_stream, ctx);
                req->content_length_n = -1;
                ok = true;
            } else {
                log_fail(req, codec, "init");
            }
        }
        if (ok) {
            hy_req_add_header(req, HY_STR("Content-Encoding"),
                              (hy_str_t){(char *)hy_codec_name(codec), strlen(hy_codec_name(codec))});
            req->accept_ranges = false;
            hy_req_del_header(req, "Accept-Ranges"); /* a proxied one (nginx-tests gzip.t) */
            hy_req_weaken_etag(req);
        }
    }
    if (ctx->vary && !ctx->vary_added && lc->vary == 1) {
        ctx->vary_added = true;
        hy_req_add_header(req, HY_STR("Vary"), HY_STR("Accept-Encoding"));
    }
}

static void body_filter(hy_req_t *req, bool is_final)
{
    if (req->ctx == NULL || req->ctx[IDX] == NULL)
        return;
    gz_ctx_t *ctx = req->ctx[IDX];
    if (ctx->big) {
        if (!ctx->big_started)
            big_start(req, ctx);
        return;
    }
    if (ctx->zs == NULL) {
        if (ctx->zs_failed)
            hy_outq_clear(&req->body);
        return;
    }
    hy_outq_t out = {0};
    if (stream_queue(ctx->zs, &req->body, is_final, &out) != 0) {
        /* the head is out: nothing sane can follow; drop the rest and close after this response */
        log_fail(req, ctx->zs_codec, "stream");
        ctx->zs_failed = true;
        req->keepalive = false;
        hy_outq_clear(&out);
        hy_zstream_free(ctx->zs);
        ctx->zs = NULL;
    }
    hy_outq_clear(&req->body);
    hy_outq_move(&req->body, &out);
    if (is_final && ctx->zs) {
        hy_zstream_free(ctx->zs);
        ctx->zs = NULL;
    }
}

/* ---------------- for gunzip ---------------- */

bool hy_gzip_client_accepts(hy_req_t *req)
{
    gz_loc_t *lc = req_conf(req);
    if (lc == NULL)
        return false;
    gz_ctx_t *ctx = req_ctx(req);
    return client_ok(req, lc, ctx) && hy_ae_q(req_ae(req, ctx), HY_CODING_GZIP) > 0;
}

void hy_gzip_mark_vary(hy_req_t *req)
{
    if (req_conf(req))
        req_ctx(req)->vary = true;
}

/* ---------------- gzip_static, brotli_static, zstd_static ---------------- */

bool hy_gzip_static_enabled(hy_req_t *req)
{
    gz_loc_t *lc = req_conf(req);
    return lc && (lc->c[0].static_mode > 0 || lc->c[1].static_mode > 0 || lc->c[2].static_mode > 0);
}

hy_file_t *hy_gzip_static_open(hy_req_t *req, const char *path, size_t len, hy_gzip_open_fn open)
{
    if (req->method_id != HY_M_GET && req->method_id != HY_M_HEAD)
        return NULL;
    gz_loc_t *lc = req_conf(req);
    if (lc == NULL || (lc->c[0].static_mode <= 0 && lc->c[1].static_mode <= 0 && lc->c[2].static_mode <= 0))
        return NULL;
    gz_ctx_t *ctx = req_ctx(req);
    bool cok = client_ok(req, lc, ctx);
    const hy_accept_encoding_t *ae = req_ae(req, ctx);
    /* candidates by rank: accepted ones by q, then the server's preference; "always" counts as accepted */
    int order[NCODEC], rank[NCODEC], n = 0;
    for (int i = 0; i < NCODEC; i++) {
        int c = server_prefs[i], mode = lc->c[c].static_mode;
        if (mode <= 0)
            continue;
        int q = hy_ae_q(ae, c);
        int r = mode == STATIC_ALWAYS ? HY_MAX(q, 1) : (cok && q > 0 ? q : -1);
        int k = n++;
        while (k > 0 && rank[k - 1] < r) { /* stable insertion: equal ranks keep the preference order */
            order[k] = order[k - 1], rank[k] = rank[k - 1];
            k--;
        }
        order[k] = c, rank[k] = r;
    }
    hy_http_loc_conf_t *core = req->loc ? req->loc : req->srv->loc;
    char *vpath = hy_palloc(req->pool, len + 5);
    memcpy(vpath, path, len);
    for (int i = 0; i < n; i++) {
        int c = order[i];
        bool accepted = rank[i] > 0;
        if (!accepted && lc->vary != 1)
            continue; /* nginx opens the variant anyway with gzip_vary, for the Vary header */
        size_t el = strlen(static_ext[c]);
        memcpy(vpath + len, static_ext[c], el + 1);
        int err = 0;
        hy_file_t *f = open(req, core, vpath, len + el, &err);
        if (f == NULL) {
            if (err != ENOENT && err != ENOTDIR && err != ENAMETOOLONG) {
                char lctx[512];
                hy_req_log_ctx(req, lctx, sizeof(lctx));
                hy_log_conn(err == EACCES || err == ELOOP ? HY_LOG_ERR : HY_LOG_CRIT, req->conn->id,
                            "open() \"%s\" failed (%d: %s)%s", vpath, err, strerror(err), lctx);
            }
            continue;
        }
        if (lc->c[c].static_mode == STATIC_ON)
            ctx->vary = true;
        if (!accepted || f->is_dir) {
            hy_file_unref(f);
            continue;
        }
        const char *name = hy_codec_name(c);
        hy_req_add_header(req, HY_STR("Content-Encoding"), (hy_str_t){(char *)name, strlen(name)});
        ctx->static_sent = true;
        return f;
    }
    return NULL;
}

/* ---------------- configuration ---------------- */

static void *create_main(hy_conf_t *cf)
{
    gz_main_t *m = hy_pcalloc(cf->pool, sizeof(*m));
    m->cache_size = m->cache_max_file = HY_UNSET;
    return m;
}

static void *create_loc(hy_conf_t *cf)
{
    gz_loc_t *l = hy_pcalloc(cf->pool, sizeof(*l));
    for (int c = 0; c < NCODEC; c++) {
        l->c[c].enable = l->c[c].static_mode = HY_UNSET;
        l->c[c].level = l->c[c].min_length = HY_UNSET;
    }
    l->vary = l->http_version = l->disable_msie6 = HY_UNSET;
    l->proxied = l->buffers_num = l->buffers_size = HY_UNSET;
    return l;
}

static int merge_loc(hy_conf_t *cf, void *parent, void *child)
{
    gz_loc_t *p = parent, *c = child;
    static const int64_t def_level[NCODEC] = {1, 6, 1}; /* nginx gzip, ngx_brotli, zstd-nginx-module */
    for (int i = 0; i < NCODEC; i++) {
        codec_conf_t *cc = &c->c[i], *pc = &p->c[i];
        hy_merge_value(cc->enable, pc->enable, 0);
        hy_merge_value(cc->static_mode, pc->static_mode, STATIC_OFF);
        hy_merge_value(cc->level, pc->level, def_level[i]);
        hy_merge_value(cc->min_length, pc->min_length, 20);
        if (cc->types == NULL) {
            if (pc->types == NULL) {
                pc->types = hy_array_create(cf->pool, 1, sizeof(hy_str_t));
                *(hy_str_t *)hy_array_push(pc->types) = HY_STR("text/html");
            }
            cc->types = pc->types;
            cc->types_any = pc->types_any;
        }
    }
    hy_merge_value(c->vary, p->vary, 0);
    hy_merge_value(c->http_version, p->http_version, 11);
    hy_merge_value(c->disable_msie6, p->disable_msie6, 0);
    hy_merge_value(c->proxied, p->proxied, PROXIED_OFF);
    if (c->disable == NULL)
        c->disable = p->disable;
    if (c->buffers_num == HY_UNSET) {
        c->buffers_num = p->buffers_num == HY_UNSET ? 32 : p->buffers_num;
        c->buffers_size = p->buffers_size == HY_UNSET ? 4096 : p->buffers_size;
    }
    return 0;
}

#define FIELDP(conf, d, type) ((type *)((char *)(conf) + (d)->offset))

static int set_types(hy_conf_t *cf, const hy_directive_t *d, void *conf)
{
    hy_array_t **field = FIELDP(conf, d, hy_array_t *);
    codec_conf_t *cc = (codec_conf_t *)((char *)field - offsetof(codec_conf_t, types));
    size_t n;
    hy_str_t *a = hy_conf_args(cf, &n);
    if (*field == NULL) { /* a second directive adds its types, as nginx's */
        *field = hy_array_create(cf->pool, n, sizeof(hy_str_t));
        *(hy_str_t *)hy_array_push(*field) = HY_STR("text/html"); /* always included, as nginx */
    }
    for (size_t i = 1; i < n; i++) {
        if (hy_str_eq(a[i], "*")) {
            cc->types_any = true;
            continue;
        }
        hy_str_t t = hy_str_dup(cf->pool, a[i]);
        hy_str_lower(t.ptr, t.len);
        hy_str_t *have = (*field)->elts;
        bool dup = false;
        for (size_t k = 0; k < (*field)->nelts; k++)
            dup |= hy_str_eq_str(have[k], t);
        if (!dup)
            *(hy_str_t *)hy_array_push(*field) = t;
    }
    return 0;
}

static int set_proxied(hy_conf_t *cf, const hy_directive_t *d, void *conf)
{
    static const hy_enum_t vals[] = {{"off", PROXIED_OFF}, {"expired", PROXIED_EXPIRED},
                                     {"no-cache", PROXIED_NO_CACHE}, {"no-store", PROXIED_NO_STORE},
                                     {"private", PROXIED_PRIVATE}, {"no_last_modified", PROXIED_NO_LM},
                                     {"no_etag", PROXIED_NO_ETAG}, {"auth", PROXIED_AUTH}, {"any", PROXIED_ANY},
                                     {NULL, 0}};
    gz_loc_t *lc = conf;
    size_t n;
    hy_str_t *a = hy_conf_args(cf, &n);
    int64_t bits = lc->proxied == HY_UNSET ? 0 : lc->proxied; /* nginx: a second directive adds its values */
    for (size_t i = 1; i < n; i++) {
        const hy_enum_t *e = vals;
        while (e->name && !hy_str_eq(a[i], e->name))
            e++;
        if (e->name == NULL)
            return hy_conf_error(cf, "invalid value \"%s\"", a[i].ptr);
        if (bits & e->value)
            hy_conf_warn(cf, "duplicate value \"%s\"", a[i].ptr);
        bits |= e->value;
    }
    lc->proxied = bits;
    return 0;
}

static int set_disable(hy_conf_t *cf, const hy_directive_t *d, void *conf)
{
    gz_loc_t *lc = conf;
    size_t n;
    hy_str_t *a = hy_conf_args(cf, &n);
    for (size_t i = 1; i < n; i++) {
        if (hy_str_eq(a[i], "msie6")) {
            lc->disable_msie6 = 1;
            continue;
        }
        if (hy_str_eq(a[i], "degradation"))
            continue; /* nginx's degradation module is not built in either */
        hy_regex_t *re = hy_conf_regex(cf, a[i], true);
        if (re == NULL)
            return -1;
        if (lc->disable == NULL)
            lc->disable = hy_array_create(cf->pool, 2, sizeof(hy_regex_t *));
        *(hy_regex_t **)hy_array_push(lc->disable) = re;
    }
    return 0;
}

static int set_buffers(hy_conf_t *cf, const hy_directive_t *d, void *conf)
{
    gz_loc_t *lc = conf;
    if (lc->buffers_num != HY_UNSET)
        return hy_conf_error(cf, "\"%s\" directive is duplicate", d->name);
    size_t n;
    hy_str_t *a = hy_conf_args(cf, &n);
    int64_t num = hy_parse_int(a[1].ptr, a[1].len), size = hy_parse_size(a[2].ptr, a[2].len);
    if (num <= 0 || size <= 0)
        return hy_conf_error(cf, "\"%s\" directive invalid value", d->name); /* nginx's words */
    lc->buffers_num = num;
    lc->buffers_size = size;
    return 0;
}

static int set_cache(hy_conf_t *cf, const hy_directive_t *d, void *conf)
{
    gz_main_t *m = conf;
    if (m->cache_size != HY_UNSET)
        return hy_conf_error(cf, "\"%s\" directive is duplicate", d->name);
    size_t n;
    hy_str_t *a = hy_conf_args(cf, &n);
    if (n == 2 && hy_str_eq(a[1], "off")) {
        m->cache_size = 0;
        return 0;
    }
    int64_t size = 16 << 20, max_file = 1 << 20;
    for (size_t i = 1; i < n; i++) {
        if (a[i].len > 5 && memcmp(a[i].ptr, "size=", 5) == 0) {
            size = hy_parse_size(a[i].ptr + 5, a[i].len - 5);
            if (size <= 0)
                return hy_conf_error(cf, "invalid \"%s\" parameter \"%s\"", d->name, a[i].ptr);
        } else if (a[i].len > 9 && memcmp(a[i].ptr, "max_file=", 9) == 0) {
            max_file = hy_parse_size(a[i].ptr + 9, a[i].len - 9);
            if (max_file <= 0)
                return hy_conf_error(cf, "invalid \"%s\" parameter \"%s\"", d->name, a[i].ptr);
        } else {
            return hy_conf_error(cf, "invalid \"%s\" parameter \"%s\"", d->name, a[i].ptr);
        }
    }
    m->cache_size = size;
    m->cache_max_file = max_file;
    return 0;
}

/* ---------------- per worker: the cache ---------------- */

static int init_worker(hy_cycle_t *cycle)
{
    gz_main_t *m = cycle->http_main_conf ? cycle->http_main_conf[IDX] : NULL;
    int64_t size = m == NULL ? 0 : m->cache_size == HY_UNSET ? 16 << 20 : m->cache_size;
    cache_max_file = m == NULL || m->cache_max_file == HY_UNSET ? 1 << 20 : m->cache_max_file;
    if (size <= 0) {
        hy_ccache_destroy(cache);
        cache = NULL;
    } else if (cache) {
        hy_ccache_set_max(cache, (size_t)size);
    } else {
        cache = hy_ccache_create((size_t)size);
    }
    return 0;
}

static void flush_worker(hy_cycle_t *cycle, bool reopen)
{
    if (reopen)
        return;
    /* exit or reload: entries still being sent stay alive until released; init_worker builds a new cache */
    hy_ccache_destroy(cache);
    cache = NULL;
    hy_compress_cleanup();
}

/* ---------------- the table ---------------- */

#define LOC(field) .conf = HY_CONF_LOC, .offset = offsetof(gz_loc_t, field)
#define ANY HY_CTX_HTTP_ANY

static const hy_enum_t static_enum[] = {{"off", STATIC_OFF}, {"on", STATIC_ON}, {"always", STATIC_ALWAYS},
                                        {NULL, 0}};
static const hy_enum_t version_enum[] = {{"1.0", 10}, {"1.1", 11}, {NULL, 0}};
static const hy_bounds_t gzip_levels = {1, 9}, br_levels = {0, 11}, zstd_levels = {1, 22};
static const hy_bounds_t non_negative = {0, INT64_MAX};

#define CODEC_DIRECTIVES(prefix, i, levels)                                                                         \
    {.name = prefix, .ctx = ANY | HY_CTX_LIF, .args = HY_ARGS_FLAG, .set = hy_slot_flag, LOC(c[i].enable)},         \
    {.name = prefix "_static", .ctx = ANY, .args = HY_ARGS_1, .set = hy_slot_enum, LOC(c[i].static_mode),          \
     .post = static_enum},                                                                                         \
    {.name = prefix "_comp_level", .ctx = ANY, .args = HY_ARGS_1, .set = hy_slot_num, LOC(c[i].level),             \
     .post = &levels},                                                                                             \
    {.name = prefix "_min_length", .ctx = ANY, .args = HY_ARGS_1, .set = hy_slot_size, LOC(c[i].min_length),       \
     .post = &non_negative},                                                                                       \
    {.name = prefix "_types", .ctx = ANY, .args = HY_ARGS_1MORE, .set = set_types, LOC(c[i].types)}

static const hy_directive_t gzip_directives[] = {
    CODEC_DIRECTIVES("gzip", 0, gzip_levels),
    CODEC_DIRECTIVES("brotli", 1, br_levels),
    CODEC_DIRECTIVES("zstd", 2, zstd_levels),
    {.name = "gzip_vary", .ctx = ANY, .args = HY_ARGS_FLAG, .set = hy_slot_flag, LOC(vary)},
    {.name = "gzip_http_version", .ctx = ANY, .args = HY_ARGS_1, .set = hy_slot_enum, LOC(http_version),
     .post = version_enum},
    {.name = "gzip_proxied", .ctx = ANY, .args = HY_ARGS_1MORE, .set = set_proxied, LOC(proxied)},
    {.name = "gzip_disable", .ctx = ANY, .args = HY_ARGS_1MORE, .set = set_disable, LOC(disable)},
    {.name = "gzip_buffers", .ctx = ANY, .args = HY_ARGS_2, .set = set_buffers, LOC(buffers_num)},
    {.name = "brotli_buffers", .ctx = ANY, .args = HY_ARGS_2, .set = hy_slot_check_bufs},
    {.name = "brotli_window", .ctx = ANY, .args = HY_ARGS_1, .set = hy_slot_check_size},
    {.name = "zstd_buffers", .ctx = ANY, .args = HY_ARGS_2, .set = hy_slot_check_bufs},
    {.name = "gzip_cache", .ctx = HY_CTX_HTTP, .args = HY_ARGS_12, .set = set_cache, .conf = HY_CONF_HTTP_MAIN,
     .offset = offsetof(gz_main_t, cache_size)},
    {0},
};

hy_module_t hy_http_gzip_module = {
    .name = "http_gzip",
    .directives = gzip_directives,
    .create_main_conf = create_main,
    .create_loc_conf = create_loc,
    .merge_loc_conf = merge_loc,
    .header_filter = header_filter,
    .body_filter = body_filter,
    .init_worker = init_worker,
    .flush_worker = flush_worker,
};
