/* charset.c — nginx's charset module (see charset.h).
 *
 * Charsets are known by name from charset, source_charset and charset_map (case-insensitive); each gets an index
 * at parse time. charset_map SRC DST { XX YY; ... } fills one table pair: SRC→DST and DST→SRC, starting from
 * ASCII as itself and every other byte as '?'; when DST is utf-8 the values are UTF-8 byte sequences in hex
 * (at most 3 bytes: the BMP). A location that recodes between two fixed charsets needs a map between them
 * (checked after the http block, nginx's words).
 *
 * The header filter follows nginx's ngx_http_charset_header_filter: the destination is the upstream's
 * X-Accel-Charset when it sent one (req->override_charset, whatever the directives say), else the location's charset
 * (a response whose Content-Type already names a charset keeps it unless override_charset is on; one that
 * does not is only touched when its type is in charset_types); the source is the charset the response names,
 * else source_charset. No source: the charset is only named. Equal: named. Different: recoded through the map
 * (not when the response has a Content-Encoding), else logged and left alone. 301 and 302 never name one.
 * Recoding to or from UTF-8 changes the length: Content-Length is dropped (chunked). */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <unistd.h>
#include "charset.h"
#include "charset_recode.h"
#include "../http/vars.h"
#include "../conf/cycle.h"
#include "../core/file.h"
#include "../core/log.h"
#include "../core/outq.h"

#define IDX (hy_http_charset_module.index)
#define CS_OFF (-2)
#define CS_NONE (-3) /* a name no charset_map/charset/source_charset knows */
#define CS_VAR (-4)  /* from a variable, looked up per request */

typedef struct cs_charset {
    hy_str_t name;
    bool utf8;
    void **tables; /* by destination index: the recoding table, NULL: none (built by postconfiguration) */
} cs_charset_t;

typedef struct cs_map {
    int src, dst;
    uint8_t *src2dst; /* 256 bytes, or 256 * 4 when dst is utf-8 */
    void *dst2src;    /* 256 bytes, or 256 page pointers when dst is utf-8 */
} cs_map_t;

typedef struct cs_main {
    hy_array_t *charsets; /* cs_charset_t */
    hy_array_t *maps;     /* cs_map_t */
    hy_array_t *recodes;  /* int[2]: fixed source → destination pairs locations use */
} cs_main_t;

typedef struct cs_value {
    int index; /* HY_UNSET, CS_OFF, CS_VAR or a charset index */
    hy_complex_t var;
} cs_value_t;

typedef struct cs_loc {
    cs_value_t charset, source;
    int override;
    hy_array_t *types; /* hy_str_t; NULL: inherit/default; an entry "*": any */
} cs_loc_t;

typedef struct cs_ctx {
    hy_recode_t rc;
    bool skip_once; /* the header filter recoded what was queued: the body filters of that send pass it on */
} cs_ctx_t;

static int recode_queue(hy_req_t *req, cs_ctx_t *ctx);

static int add_charset(cs_main_t *m, hy_pool_t *pool, hy_str_t name)
{
    cs_charset_t *c = m->charsets->elts;
    for (size_t i = 0; i < m->charsets->nelts; i++)
        if (hy_str_caseeq_str(c[i].name, name))
            return (int)i;
    c = hy_array_push(m->charsets);
    c->name = hy_str_dup(pool, name);
    c->utf8 = hy_str_caseeq(name, "utf-8");
    c->tables = NULL;
    return (int)m->charsets->nelts - 1;
}

static int find_charset(const cs_main_t *m, hy_str_t name)
{
    const cs_charset_t *c = m->charsets->elts;
    for (size_t i = 0; i < m->charsets->nelts; i++)
        if (hy_str_caseeq_str(c[i].name, name))
            return (int)i;
    return CS_NONE;
}

/* ---------------- header filter ---------------- */

static cs_loc_t *loc_conf(hy_req_t *req)
{
    hy_http_loc_conf_t *lc = req->loc ? req->loc : req->srv ? req->srv->loc : NULL;
    return lc ? lc->loc_conf[IDX] : NULL;
}

static cs_main_t *main_conf(hy_req_t *req)
{
    return req->conn->cycle->http_main_conf[IDX];
}

static bool type_listed(const cs_loc_t *c, hy_str_t mime)
{
    const hy_str_t *t = c->types->elts;
    for (size_t i = 0; i < c->types->nelts; i++)
        if (hy_str_eq(t[i], "*") || hy_str_caseeq_str(t[i], mime))
            return true;
    return false;
}

/* Content-Type split into its media type and the value of its charset parameter (empty: none) */
static void split_type(hy_str_t ct, hy_str_t *mime, hy_str_t *charset)
{
    const char *semi = memchr(ct.ptr, ';', ct.len);
    *mime = (hy_str_t){ct.ptr, semi ? (size_t)(semi - ct.ptr) : ct.len};
    while (mime->len && (mime->ptr[mime->len - 1] == ' ' || mime->ptr[mime->len - 1] == '\t'))
        mime->len--;
    *charset = (hy_str_t){NULL, 0};
    for (size_t i = mime->len; i + 8 <= ct.len; i++) {
        if (strncasecmp(ct.ptr + i, "charset=", 8) != 0)
            continue;
        const char *p = ct.ptr + i + 8, *end = ct.ptr + ct.len;
        if (p < end && *p == '"') {
            p++;
            const char *q = memchr(p, '"', (size_t)(end - p));
            *charset = (hy_str_t){(char *)p, q ? (size_t)(q - p) : (size_t)(end - p)};
        } else {
            const char *q = p;
            while (q < end && *q != ';' && *q != ' ')
                q++;
            *charset = (hy_str_t){(char *)p, (size_t)(q - p)};
        }
        return;
    }
}

/* the charset a value names for this request: its index, or CS_NONE (*name: the name, possibly empty) */
static int resolve(hy_req_t *req, const cs_main_t *m, const cs_value_t *v, hy_str_t *name)
{
    if (v->index >= 0) {
        *name = ((cs_charset_t *)m->charsets->elts)[v->index].name;
        return v->index;
    }
    hy_vars_eval(req, &v->var, name);
    return find_charset(m, *name);
}

/* nginx's ngx_http_set_charset: the Content-Type names `name` (never for 301 and 302) */
static void set_charset(hy_req_t *req, hy_str_t mime, hy_str_t name)
{
    if (req->status == 301 || req->status == 302 || name.len == 0)
        return;
    size_t n = mime.len + 10 + name.len;
    char *p = hy_palloc(req->pool, n + 1);
    memcpy(p, mime.ptr, mime.len);
    memcpy(p + mime.len, "; charset=", 10);
    memcpy(p + mime.len + 10, name.ptr, name.len);
    req->content_type = (hy_str_t){p, n};
}

static bool has_content_encoding(hy_req_t *req)
{
    if (req->headers_out == NULL)
        return false;
    const hy_header_t *h = req->headers_out->elts;
    for (size_t i = 0; i < req->headers_out->nelts; i++)
        if (hy_str_caseeq(h[i].name, "content-encoding") && h[i].value.len)
            return true;
    return false;
}

static cs_ctx_t *start_recoding(hy_req_t *req, const cs_main_t *m, int src, int dst)
{
    const cs_charset_t *cs = m->charsets->elts;
    cs_ctx_t *ctx = hy_pcalloc(req->pool, sizeof(*ctx));
    if (cs[dst].utf8) {
        ctx->rc.mode = HY_RECODE_TO_UTF8;
        ctx->rc.table = cs[src].tables[dst];
    } else if (cs[src].utf8) {
        ctx->rc.mode = HY_RECODE_FROM_UTF8;
        ctx->rc.pages = cs[src].tables[dst];
    } else {
        ctx->rc.mode = HY_RECODE_BYTE;
        ctx->rc.table = cs[src].tables[dst];
    }
    *hy_req_ctx(req, &hy_http_charset_module) = ctx;
    return ctx;
}

/* What the filter does with a response of Content-Type ct (nginx's ngx_http_charset_header_filter) */
typedef struct cs_decision {
    hy_str_t mime;  /* ct without parameters */
    hy_str_t dname; /* the charset named (when name) */
    hy_str_t sname;
    bool name;      /* the Content-Type names dname */
    bool no_map;    /* recoding was needed and there is no map: logged, left alone */
    bool unknown_override; /* X-Accel-Charset names a charset no directive knows: logged, left alone */
    int src, dst;   /* recode from src to dst when both >= 0 */
} cs_decision_t;

static void decide(hy_req_t *req, hy_str_t ct, cs_decision_t *d)
{
    *d = (cs_decision_t){.src = -1, .dst = -1};
    cs_loc_t *c = loc_conf(req);
    if (c == NULL || ct.len == 0)
        return;
    hy_str_t given;
    split_type(ct, &d->mime, &given);
    const cs_main_t *m = main_conf(req);
    int dst, src;
    if (req->override_charset.len) { /* X-Accel-Charset: the destination, whatever charset and its types say */
        d->dname = req->override_charset;
        dst = find_charset(m, d->dname);
        if (dst == CS_NONE) {
            d->unknown_override = true;
            return;
        }
    } else {
        if (c->charset.index == CS_OFF || (given.len ? !c->override : !type_listed(c, d->mime)))
            return;
        dst = resolve(req, m, &c->charset, &d->dname);
    }
    if (given.len) {
        d->sname = given;
        src = find_charset(m, given);
    } else if (c->source.index == CS_OFF) {
        d->name = true;
        return;
    } else {
        src = resolve(req, m, &c->source, &d->sname);
    }
    if (dst == CS_NONE || src == CS_NONE) {
        d->name = src == dst && hy_str_caseeq_str(d->dname, d->sname);
        d->no_map = !d->name;
        return;
    }
    if (src == dst) {
        d->name = true;
        return;
    }
    if (has_content_encoding(req))
        return;
    const cs_charset_t *cs = m->charsets->elts;
    if (cs[src].tables == NULL || cs[src].tables[dst] == NULL) {
        d->no_map = true;
        return;
    }
    d->name = true;
    d->src = src, d->dst = dst;
}

hy_str_t hy_charset_of(hy_req_t *req, hy_str_t content_type)
{
    cs_decision_t d;
    decide(req, content_type, &d);
    return d.name && req->status != 301 && req->status != 302 ? d.dname : (hy_str_t){"", 0};
}

static void header_filter(hy_req_t *req)
{
    /* a complete body queued by the handler, not rewritten by a filter before this one (sub_filter makes the
     * length unknown and substitutes in its body filter, which runs after every header filter) */
    bool whole = req->content_length_n >= 0 && (int64_t)req->body.bytes == req->content_length_n;
    cs_decision_t d;
    decide(req, req->content_type, &d);
    if (d.no_map)
        hy_req_log(req, HY_LOG_ERR, "no \"charset_map\" between the charsets \"%.*s\" and \"%.*s\"",
                   (int)d.sname.len, d.sname.ptr, (int)d.dname.len, d.dname.ptr);
    if (d.unknown_override)
        hy_req_log(req, HY_LOG_ERR, "unknown charset \"%.*s\" to override", (int)d.dname.len, d.dname.ptr);
    if (!d.name)
        return;
    set_charset(req, d.mime, d.dname);
    if (d.src < 0)
        return;
    const cs_main_t *m = main_conf(req);
    const cs_charset_t *cs = m->charsets->elts;
    if (cs[d.src].utf8 || cs[d.dst].utf8) { /* the length changes: no Content-Length, no ranges (nginx's) */
        req->content_length_n = -1;
        req->accept_ranges = false;
    }
    if (req->header_only)
        return;
    cs_ctx_t *ctx = start_recoding(req, m, d.src, d.dst);
    /* a complete body is recoded now, before the header filters after this one see it: gzip compresses a
     * complete body in its header filter. Anything else is recoded as it passes the body filter. The body is no
     * longer the file's bytes: no file-keyed caching */
    req->file = NULL;
    if (req->body.head == NULL || !whole)
        return;
    if (recode_queue(req, ctx) != 0) {
        req->ctx[IDX] = NULL;
        hy_req_filter_finalize(req, 500);
        return;
    }
    ctx->skip_once = true;
}

/* ---------------- body filter ---------------- */

#define READ_CHUNK (64 * 1024)

static void push_recoded(cs_ctx_t *ctx, hy_outq_t *out, const uint8_t *src, size_t n)
{
    uint8_t *buf = hy_alloc(hy_recode_bound(&ctx->rc, n) + 1);
    size_t len = hy_recode(&ctx->rc, src, n, buf);
    if (len == 0) {
        free(buf);
        return;
    }
    hy_outq_push_mem(out, (const char *)buf, len, free, buf);
}

/* Every queued segment recoded into new memory (the originals may be shared: cached files, literals); -1 after
 * logging a read error (the queue untouched). */
static int recode_queue(hy_req_t *req, cs_ctx_t *ctx)
{
    hy_outq_t out = {0};
    uint8_t *rbuf = NULL;
    for (hy_seg_t *s = req->body.head; s; s = s->next) {
        if (s->kind == HY_SEG_MEM) {
            push_recoded(ctx, &out, (const uint8_t *)s->mem.ptr, s->mem.len);
            continue;
        }
        if (rbuf == NULL)
            rbuf = hy_alloc(READ_CHUNK);
        for (int64_t done = 0; done < s->file.len;) {
            size_t n = (size_t)HY_MIN((int64_t)READ_CHUNK, s->file.len - done);
            if (!hy_file_read_at(s->file.file, s->file.off + done, rbuf, n)) {
                hy_req_log(req, HY_LOG_CRIT, "pread() failed while recoding (%d: %s)", errno, strerror(errno));
                free(rbuf);
                hy_outq_clear(&out);
                return -1;
            }
            push_recoded(ctx, &out, rbuf, n);
            done += (int64_t)n;
        }
    }
    free(rbuf);
    hy_outq_clear(&req->body);
    hy_outq_move(&req->body, &out);
    return 0;
}

static void body_filter(hy_req_t *req, bool is_final)
{
    (void)is_final;
    cs_ctx_t *ctx = req->ctx ? req->ctx[IDX] : NULL;
    if (ctx == NULL)
        return;
    if (ctx->skip_once) {
        ctx->skip_once = false;
        return;
    }
    if (req->body.head == NULL || recode_queue(req, ctx) == 0)
        return;
    /* the head is out: nothing sane can follow; close instead of ending the body short */
    req->keepalive = false;
    req->ctx[IDX] = NULL;
    hy_outq_clear(&req->body);
    hy_req_ops(req)->abort(req);
}

/* ---------------- configuration ---------------- */

static void *create_main(hy_conf_t *cf)
{
    cs_main_t *m = hy_pcalloc(cf->pool, sizeof(*m));
    m->charsets = hy_array_create(cf->pool, 4, sizeof(cs_charset_t));
    m->maps = hy_array_create(cf->pool, 2, sizeof(cs_map_t));
    m->recodes = hy_array_create(cf->pool, 2, sizeof(int[2]));
    return m;
}

static void *create_loc(hy_conf_t *cf)
{
    cs_loc_t *c = hy_pcalloc(cf->pool, sizeof(*c));
    c->charset.index = c->source.index = c->override = HY_UNSET;
    return c;
}

static int merge_loc(hy_conf_t *cf, void *parent, void *child)
{
    cs_loc_t *p = parent, *c = child;
    if (c->charset.index == HY_UNSET)
        c->charset = p->charset.index == HY_UNSET ? (cs_value_t){.index = CS_OFF} : p->charset;
    if (c->source.index == HY_UNSET)
        c->source = p->source.index == HY_UNSET ? (cs_value_t){.index = CS_OFF} : p->source;
    hy_merge_value(c->override, p->override, 0);
    if (c->types == NULL) {
        if (p->types == NULL) {
            static const char *defaults[] = {"text/html", "text/xml", "text/plain", "text/vnd.wap.wml",
                                             "application/javascript", "application/rss+xml"};
            p->types = hy_array_create(cf->pool, 6, sizeof(hy_str_t));
            for (size_t i = 0; i < HY_ARRAY_SIZE(defaults); i++)
                *(hy_str_t *)hy_array_push(p->types) = (hy_str_t){(char *)defaults[i], strlen(defaults[i])};
        }
        c->types = p->types;
    }
    if (c->charset.index < 0 || c->source.index < 0 || c->charset.index == c->source.index)
        return 0;
    cs_main_t *m = cf->main_conf[IDX];
    int(*r)[2] = m->recodes->elts;
    for (size_t i = 0; i < m->recodes->nelts; i++)
        if (r[i][0] == c->source.index && r[i][1] == c->charset.index)
            return 0;
    int *nr = hy_array_push(m->recodes);
    nr[0] = c->source.index, nr[1] = c->charset.index;
    return 0;
}

/* nginx's ngx_http_charset_postconfiguration: each pair a location recodes has a map (either way round); the
 * maps become the charsets' per-destination tables */
static int postconfiguration(hy_conf_t *cf)
{
    hy_http_charset_of = hy_charset_of; /* autoindex asks it through the http layer */
    cs_main_t *m = cf->main_conf ? cf->main_conf[IDX] : NULL;
    if (m == NULL)
        return 0;
    cs_charset_t *cs = m->charsets->elts;
    cs_map_t *t = m->maps->elts;
    int(*r)[2] = m->recodes->elts;
    for (size_t i = 0; i < m->recodes->nelts; i++) {
        bool found = false;
        for (size_t j = 0; j < m->maps->nelts && !found; j++)
            found = (t[j].src == r[i][0] && t[j].dst == r[i][1]) || (t[j].src == r[i][1] && t[j].dst == r[i][0]);
        if (!found)
            return hy_conf_error(cf, "no \"charset_map\" between the charsets \"%.*s\" and \"%.*s\"",
                                 (int)cs[r[i][0]].name.len, cs[r[i][0]].name.ptr, (int)cs[r[i][1]].name.len,
                                 cs[r[i][1]].name.ptr);
    }
    for (size_t j = 0; j < m->maps->nelts; j++) {
        cs_charset_t *s = &cs[t[j].src], *d = &cs[t[j].dst];
        if (s->tables == NULL)
            s->tables = hy_pcalloc(cf->pool, sizeof(void *) * m->charsets->nelts);
        if (d->tables == NULL)
            d->tables = hy_pcalloc(cf->pool, sizeof(void *) * m->charsets->nelts);
        s->tables[t[j].dst] = t[j].src2dst;
        d->tables[t[j].src] = t[j].dst2src;
    }
    return 0;
}

/* "C0" → 192; -1 when not 1-2 hex digits (nginx reads any length; more than a byte is refused after) */
static int hexbyte(const char *p, size_t n)
{
    int v = 0;
    if (n == 0 || n > 2)
        return -1;
    for (size_t i = 0; i < n; i++) {
        int d = hy_hex_digit((unsigned char)p[i]);
        if (d < 0)
            return -1;
        v = v * 16 + d;
    }
    return v;
}

static int map_raw(hy_conf_t *cf, void *data)
{
    cs_map_t *t = data;
    size_t n;
    hy_str_t *a = hy_conf_args(cf, &n);
    if (n != 2)
        return hy_conf_error(cf, "invalid parameters number");
    int src = hexbyte(a[0].ptr, a[0].len);
    if (src < 0)
        return hy_conf_error(cf, "invalid value \"%s\"", a[0].ptr);
    cs_main_t *m = cf->main_conf[IDX];
    if (!((cs_charset_t *)m->charsets->elts)[t->dst].utf8) {
        int dst = hexbyte(a[1].ptr, a[1].len);
        if (dst < 0)
            return hy_conf_error(cf, "invalid value \"%s\"", a[1].ptr);
        t->src2dst[src] = (uint8_t)dst;
        ((uint8_t *)t->dst2src)[dst] = (uint8_t)src;
        return 0;
    }
    uint8_t seq[4];
    size_t len = a[1].len / 2, used;
    if (a[1].len % 2 || len == 0 || len > 3)
        return hy_conf_error(cf, "invalid value \"%s\"", a[1].ptr);
    for (size_t i = 0; i < len; i++) {
        int b = hexbyte(a[1].ptr + 2 * i, 2);
        if (b < 0)
            return hy_conf_error(cf, "invalid value \"%s\"", a[1].ptr);
        seq[i] = (uint8_t)b;
    }
    int32_t cp = hy_utf8_decode_one(seq, len, &used);
    if (cp < 0 || used != len)
        return hy_conf_error(cf, "invalid value \"%s\"", a[1].ptr);
    uint8_t *e = t->src2dst + src * 4;
    e[0] = (uint8_t)len;
    memcpy(e + 1, seq, len);
    uint8_t **pages = t->dst2src;
    if (pages[cp >> 8] == NULL)
        pages[cp >> 8] = hy_pcalloc(cf->pool, 256);
    pages[cp >> 8][cp & 0xff] = (uint8_t)src;
    return 0;
}

static int set_charset_map(hy_conf_t *cf, const hy_directive_t *d, void *conf)
{
    (void)d;
    cs_main_t *m = conf;
    size_t n;
    hy_str_t *a = hy_conf_args(cf, &n);
    int src = add_charset(m, cf->pool, a[1]), dst = add_charset(m, cf->pool, a[2]);
    if (src == dst)
        return hy_conf_error(cf, "\"charset_map\" between the same charsets \"%s\" and \"%s\"", a[1].ptr, a[2].ptr);
    cs_map_t *t = m->maps->elts;
    for (size_t i = 0; i < m->maps->nelts; i++)
        if ((t[i].src == src && t[i].dst == dst) || (t[i].src == dst && t[i].dst == src))
            return hy_conf_error(cf, "duplicate \"charset_map\" between \"%s\" and \"%s\"", a[1].ptr, a[2].ptr);
    t = hy_array_push(m->maps);
    t->src = src, t->dst = dst;
    if (((cs_charset_t *)m->charsets->elts)[dst].utf8) {
        t->src2dst = hy_pcalloc(cf->pool, 256 * 4);
        uint8_t **pages = hy_pcalloc(cf->pool, 256 * sizeof(uint8_t *));
        pages[0] = hy_pcalloc(cf->pool, 256);
        for (int i = 0; i < 256; i++) {
            t->src2dst[i * 4] = 1;
            t->src2dst[i * 4 + 1] = i < 128 ? (uint8_t)i : '?';
            if (i < 128)
                pages[0][i] = (uint8_t)i;
        }
        t->dst2src = pages;
    } else {
        t->src2dst = hy_palloc(cf->pool, 256);
        uint8_t *back = hy_palloc(cf->pool, 256);
        for (int i = 0; i < 256; i++)
            t->src2dst[i] = back[i] = i < 128 ? (uint8_t)i : '?';
        t->dst2src = back;
    }
    hy_conf_raw_fn saved_raw = cf->raw;
    void *saved_data = cf->raw_data;
    cf->raw = map_raw;
    cf->raw_data = t;
    int rc = hy_conf_parse_block(cf);
    cf->raw = saved_raw;
    cf->raw_data = saved_data;
    return rc;
}

/* charset / source_charset: a name (known from then on), a $variable, or (charset only) "off" */
static int set_charset_value(hy_conf_t *cf, const hy_directive_t *d, void *conf)
{
    cs_value_t *v = (cs_value_t *)((char *)conf + d->offset);
    size_t n;
    hy_str_t *a = hy_conf_args(cf, &n);
    if (v->index != HY_UNSET)
        return hy_conf_error(cf, "\"%s\" directive is duplicate", d->name);
    if (d->offset == offsetof(cs_loc_t, charset) && hy_str_eq(a[1], "off")) {
        v->index = CS_OFF;
        return 0;
    }
    if (a[1].ptr[0] == '$') {
        v->index = CS_VAR;
        return hy_vars_compile(cf, a[1], &v->var);
    }
    v->index = add_charset(cf->main_conf[IDX], cf->pool, a[1]);
    return 0;
}

static int set_charset_types(hy_conf_t *cf, const hy_directive_t *d, void *conf)
{
    (void)d;
    cs_loc_t *c = conf;
    size_t n;
    hy_str_t *a = hy_conf_args(cf, &n);
    if (c->types == NULL)
        c->types = hy_array_create(cf->pool, n, sizeof(hy_str_t));
    for (size_t i = 1; i < n; i++)
        *(hy_str_t *)hy_array_push(c->types) = hy_str_dup(cf->pool, a[i]);
    return 0;
}

#define CS_CTX (HY_CTX_HTTP_ANY | HY_CTX_LIF)
#define CS(field) .conf = HY_CONF_LOC, .offset = offsetof(cs_loc_t, field)

static const hy_directive_t charset_directives[] = {
    {.name = "charset", .ctx = CS_CTX, .args = HY_ARGS_1, .set = set_charset_value, CS(charset)},
    {.name = "source_charset", .ctx = CS_CTX, .args = HY_ARGS_1, .set = set_charset_value, CS(source)},
    {.name = "override_charset", .ctx = CS_CTX, .args = HY_ARGS_FLAG, .set = hy_slot_flag, CS(override)},
    {.name = "charset_types", .ctx = HY_CTX_HTTP_ANY, .args = HY_ARGS_1MORE, .set = set_charset_types, CS(types)},
    {.name = "charset_map", .ctx = HY_CTX_HTTP, .args = HY_ARGS_2 | HY_ARGS_BLOCK, .set = set_charset_map,
     .conf = HY_CONF_HTTP_MAIN},
    {0},
};

hy_module_t hy_http_charset_module = {
    .name = "http_charset",
    .directives = charset_directives,
    .create_main_conf = create_main,
    .create_loc_conf = create_loc,
    .merge_loc_conf = merge_loc,
    .postconfiguration = postconfiguration,
    .header_filter = header_filter,
    .body_filter = body_filter,
};
