/* ssi.c — nginx's ngx_http_ssi_module: server-side includes in response bodies.
 *
 * Directives: `ssi`, `ssi_types` (text/html always; "*" any), `ssi_silent_errors`, `ssi_value_length`,
 * `ssi_last_modified`, `ssi_min_file_chunk` (read; every included body is kept in memory until it is sent, see
 * splice.h, so there is no smaller chunk to hold back). Commands: include (virtual, file, wait, set, stub), echo
 * (var, default, encoding), set, if/elif/else/endif (not nested, as nginx), config (errmsg, timefmt),
 * block/endblock. Variables $date_local and $date_gmt (the page's timefmt).
 *
 * The body is scanned by ssi_parse.c as it comes (any split); text and command output go into a splice
 * (splice.h) with the included subrequests' bodies, which keeps them in order and streams the rest once the
 * page's producer is done. An included page with SSI on is processed too (this module's body filter runs on
 * subrequests that hand their body to the parent). `wait="yes"` and `set=` pause the scan until the
 * subrequest ended. A command that cannot be done prints the errmsg ("[an error occurred while processing the
 * directive]") unless ssi_silent_errors, and is logged at [error].
 *
 * Variables set by `set` and named captures of `if` are the page's own (one table per request; nginx shares
 * one between a page and its included pages: a difference only for an included page reading a parent's `set`). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <time.h>
#include "ssi.h"
#include "ssi_parse.h"
#include "splice.h"
#include "../http/vars.h"
#include "../http/uri.h"
#include "../core/log.h"
#include "../core/file.h"
#include "../core/clock.h"
#include "../core/regex.h"

#define IDX (hy_http_ssi_module.index)
#define READ_CHUNK 65536
#define BATCH 65536 /* bytes of a complete body scanned per batch */
#define MAX_DEPTH 51 /* requests in a chain of included pages (nginx: 51 levels of subrequests) */
#define DEFAULT_ERRMSG "[an error occurred while processing the directive]"
#define DEFAULT_TIMEFMT "%A, %d-%b-%Y %H:%M:%S %Z"

typedef struct ssi_loc {
    int enable, silent_errors, last_modified;
    int64_t value_length, min_file_chunk; /* min_file_chunk: read, not used (every included body is in memory) */
    hy_array_t *types; /* hy_str_t, lower-case; NULL → inherit */
    bool types_any;
} ssi_loc_t;

typedef struct ssi_var {
    hy_str_t name, value;
} ssi_var_t;

typedef struct ssi_block {
    hy_str_t name;
    char *text; /* malloc'd (freed with the request) */
    size_t len, cap;
} ssi_block_t;

typedef struct ssi_ctx {
    hy_req_t *req;
    const ssi_loc_t *lc;
    hy_ssi_parser_t parser;
    hy_splice_t *splice;
    hy_outq_t in;  /* body not scanned yet */
    bool in_final; /* the producer sent its last byte */
    bool paused;   /* waiting for wait_part */
    bool ended;    /* the scan reached the end */
    bool failed;
    hy_splice_part_t *wait_part;
    char *rbuf;
    hy_str_t errmsg, timefmt;
    hy_array_t *vars;   /* ssi_var_t */
    hy_array_t *blocks; /* ssi_block_t */
    ssi_block_t *block; /* recording: between block and endblock */
    bool conditional, output, matched; /* if/elif/else/endif */
} ssi_ctx_t;

static ssi_loc_t *req_conf(hy_req_t *req)
{
    hy_http_loc_conf_t *l = req->loc ? req->loc : (req->srv ? req->srv->loc : NULL);
    return l && l->loc_conf ? l->loc_conf[IDX] : NULL;
}

static bool type_ok(const ssi_loc_t *lc, hy_str_t ct)
{
    return hy_http_type_listed(lc->types, lc->types_any, true, ct);
}

/* ---------------- variables ---------------- */

static ssi_var_t *find_var(ssi_ctx_t *ctx, hy_str_t name)
{
    if (ctx->vars == NULL)
        return NULL;
    ssi_var_t *v = ctx->vars->elts;
    for (size_t i = 0; i < ctx->vars->nelts; i++)
        if (hy_str_eq_str(v[i].name, name))
            return &v[i];
    return NULL;
}

static void set_var(ssi_ctx_t *ctx, hy_str_t name, hy_str_t value)
{
    hy_pool_t *pool = ctx->req->pool;
    ssi_var_t *v = find_var(ctx, name);
    if (v == NULL) {
        if (ctx->vars == NULL)
            ctx->vars = hy_array_create(pool, 4, sizeof(ssi_var_t));
        v = hy_array_push(ctx->vars);
        v->name = hy_str_dup(pool, name);
    }
    v->value = value.len ? hy_str_dup(pool, value) : HY_STR("");
}

static bool all_digits(hy_str_t s)
{
    if (s.len == 0)
        return false;
    for (size_t i = 0; i < s.len; i++)
        if (s.ptr[i] < '0' || s.ptr[i] > '9')
            return false;
    return true;
}

/* A variable's value: the page's own, a capture ($1), or nginx's; false when there is none. */
static bool get_var(ssi_ctx_t *ctx, hy_str_t name, hy_str_t *out)
{
    ssi_var_t *v = find_var(ctx, name);
    if (v) {
        *out = v->value;
        return true;
    }
    if (all_digits(name)) {
        hy_req_t *req = ctx->req;
        uint32_t n = (uint32_t)atoi(name.ptr);
        if (req->captures.n == 0 || n >= req->captures.n)
            return false;
        *out = hy_regex_group(&req->captures, n);
        return true;
    }
    hy_var_value_t vv;
    char nbuf[128];
    if (name.len >= sizeof(nbuf))
        return false;
    memcpy(nbuf, name.ptr, name.len); /* the getter of a prefix keeps a pointer to the name */
    nbuf[name.len] = '\0';
    hy_str_t nm = {hy_pstrndup(ctx->req->pool, nbuf, name.len), name.len};
    if (!hy_var_get_by_name(ctx->req, nm, &vv) || vv.not_found)
        return false;
    *out = (hy_str_t){vv.ptr, vv.len};
    return true;
}

typedef struct sbuf {
    char *p;
    size_t len, cap;
    hy_pool_t *pool;
} sbuf_t;

static void sb_add(sbuf_t *b, const char *p, size_t n)
{
    if (n == 0)
        return;
    if (b->len + n > b->cap) {
        size_t cap = b->cap ? b->cap * 2 : 64;
        while (cap < b->len + n)
            cap *= 2;
        char *np = hy_palloc(b->pool, cap);
        if (b->len)
            memcpy(np, b->p, b->len);
        b->p = np;
        b->cap = cap;
    }
    memcpy(b->p + b->len, p, n);
    b->len += n;
}

static bool name_char(char c)
{
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_';
}

/* $name and ${name} replaced by their values (nothing when there is none); "\$" is a dollar. Returns -1 on a
 * missing "}" or an empty name. */
static int evaluate(ssi_ctx_t *ctx, hy_str_t in, hy_str_t *out)
{
    if (memchr(in.ptr, '$', in.len) == NULL && memchr(in.ptr, '\\', in.len) == NULL) {
        *out = in;
        return 0;
    }
    sbuf_t b = {.pool = ctx->req->pool};
    size_t i = 0;
    while (i < in.len) {
        char c = in.ptr[i];
        if (c == '\\' && i + 1 < in.len && in.ptr[i + 1] == '$') {
            sb_add(&b, "$", 1);
            i += 2;
            continue;
        }
        if (c != '$') {
            sb_add(&b, &c, 1);
            i++;
            continue;
        }
        i++;
        hy_str_t name;
        if (i < in.len && in.ptr[i] == '{') {
            size_t s = ++i;
            while (i < in.len && in.ptr[i] != '}')
                i++;
            if (i == in.len)
                return -1;
            name = (hy_str_t){in.ptr + s, i - s};
            i++;
        } else {
            size_t s = i;
            while (i < in.len && name_char(in.ptr[i]))
                i++;
            name = (hy_str_t){in.ptr + s, i - s};
        }
        if (name.len == 0)
            return -1;
        hy_str_t v;
        if (get_var(ctx, name, &v))
            sb_add(&b, v.ptr, v.len);
    }
    *out = (hy_str_t){b.p ? b.p : "", b.len};
    return 0;
}

/* $date_local, $date_gmt (http/vars_builtin.c): the page's timefmt */
static const char *date_format(hy_req_t *req, char *buf, size_t size)
{
    ssi_ctx_t *ctx = req->ctx ? req->ctx[IDX] : NULL;
    if (ctx == NULL || ctx->timefmt.len == 0 || ctx->timefmt.len >= size)
        return NULL;
    memcpy(buf, ctx->timefmt.ptr, ctx->timefmt.len);
    buf[ctx->timefmt.len] = '\0';
    return buf;
}

/* ---------------- output ---------------- */

static void out_text(ssi_ctx_t *ctx, const char *p, size_t n)
{
    if (n == 0)
        return;
    ssi_block_t *b = ctx->block;
    if (b) {
        if (b->len + n > b->cap) {
            size_t cap = b->cap ? b->cap * 2 : 256;
            while (cap < b->len + n)
                cap *= 2;
            b->text = hy_realloc(b->text, cap);
            b->cap = cap;
        }
        memcpy(b->text + b->len, p, n);
        b->len += n;
        return;
    }
    hy_splice_text(ctx->splice, p, n);
}

static void on_text(void *arg, const char *p, size_t n)
{
    ssi_ctx_t *ctx = arg;
    if (ctx->output)
        out_text(ctx, p, n);
}

static int cmd_error(ssi_ctx_t *ctx, const char *fmt, hy_str_t a)
{
    hy_req_log(ctx->req, HY_LOG_ERR, fmt, (int)a.len, a.ptr);
    if (ctx->lc->silent_errors != 1)
        out_text(ctx, ctx->errmsg.ptr, ctx->errmsg.len);
    return 0;
}

static const hy_str_t *param(const hy_ssi_cmd_t *cmd, const char *name)
{
    for (size_t i = 0; i < cmd->nparams; i++)
        if (hy_str_eq(cmd->params[i].name, name))
            return &cmd->params[i].value;
    return NULL;
}

/* every parameter is one of names[] (NULL-terminated); the first unknown one, else NULL */
static const hy_ssi_param_t *unknown_param(const hy_ssi_cmd_t *cmd, const char *const *names)
{
    for (size_t i = 0; i < cmd->nparams; i++) {
        const char *const *n = names;
        for (; *n; n++)
            if (hy_str_eq(cmd->params[i].name, *n))
                break;
        if (*n == NULL)
            return &cmd->params[i];
    }
    return NULL;
}

static void free_blocks(void *arg)
{
    ssi_ctx_t *ctx = arg;
    if (ctx->blocks == NULL)
        return;
    ssi_block_t *b = ctx->blocks->elts;
    for (size_t i = 0; i < ctx->blocks->nelts; i++) {
        free(b[i].text);
        b[i].text = NULL;
    }
}

static ssi_block_t *find_block(ssi_ctx_t *ctx, hy_str_t name)
{
    if (ctx->blocks == NULL)
        return NULL;
    ssi_block_t *b = ctx->blocks->elts;
    for (size_t i = ctx->blocks->nelts; i-- > 0;)
        if (hy_str_eq_str(b[i].name, name))
            return &b[i];
    return NULL;
}

/* ---------------- echo ---------------- */

/* echo encoding=url: nginx's escaping for HTML attributes */
static bool url_escaped(unsigned char c)
{
    return c <= 0x20 || c >= 0x7f || strchr("\"#%'<>\\^`{|}", c);
}

static void echo_value(ssi_ctx_t *ctx, hy_str_t v, int enc)
{
    if (enc == 0)
        return out_text(ctx, v.ptr, v.len);
    if (enc == 1) {
        char *o = hy_palloc(ctx->req->pool, hy_pct_escape(NULL, v.ptr, v.len, url_escaped) + 1);
        if (o != NULL)
            out_text(ctx, o, hy_pct_escape(o, v.ptr, v.len, url_escaped));
        return;
    }
    sbuf_t b = {.pool = ctx->req->pool};
    for (size_t i = 0; i < v.len; i++) { /* entity */
        unsigned char c = (unsigned char)v.ptr[i];
        switch (c) {
        case '<': sb_add(&b, "&lt;", 4); break;
        case '>': sb_add(&b, "&gt;", 4); break;
        case '&': sb_add(&b, "&amp;", 5); break;
        case '"': sb_add(&b, "&quot;", 6); break;
        default: sb_add(&b, (const char *)&c, 1);
        }
    }
    out_text(ctx, b.p, b.len);
}

static int cmd_echo(ssi_ctx_t *ctx, const hy_ssi_cmd_t *cmd)
{
    static const char *const names[] = {"var", "default", "encoding", NULL};
    const hy_ssi_param_t *bad = unknown_param(cmd, names);
    if (bad)
        return cmd_error(ctx, "invalid parameter \"%.*s\" in \"echo\" SSI command", bad->name);
    const hy_str_t *var = param(cmd, "var"), *def = param(cmd, "default"), *enc = param(cmd, "encoding");
    if (var == NULL)
        return cmd_error(ctx, "\"var\" parameter is missing in \"%.*s\" SSI command", cmd->name);
    int e = 2;
    if (enc) {
        if (hy_str_eq(*enc, "none"))
            e = 0;
        else if (hy_str_eq(*enc, "url"))
            e = 1;
        else if (hy_str_eq(*enc, "entity"))
            e = 2;
        else /* nginx: logged, and the value echoed with the default encoding */
            hy_req_log(ctx->req, HY_LOG_ERR, "unknown encoding \"%.*s\" in the \"echo\" command", (int)enc->len,
                       enc->ptr);
    }
    hy_str_t v;
    if (get_var(ctx, *var, &v))
        echo_value(ctx, v, e);
    else if (def) /* as it is (nginx does not evaluate it) */
        echo_value(ctx, *def, e);
    else {
        echo_value(ctx, HY_STR("(none)"), e);
    }
    return 0;
}

/* ---------------- set, config ---------------- */

static int cmd_set(ssi_ctx_t *ctx, const hy_ssi_cmd_t *cmd)
{
    static const char *const names[] = {"var", "value", NULL};
    const hy_ssi_param_t *bad = unknown_param(cmd, names);
    if (bad)
        return cmd_error(ctx, "invalid parameter \"%.*s\" in \"set\" SSI command", bad->name);
    const hy_str_t *var = param(cmd, "var"), *value = param(cmd, "value");
    if (var == NULL || value == NULL)
        return cmd_error(ctx, "a parameter is missing in \"%.*s\" SSI command", cmd->name);
    hy_str_t v;
    if (evaluate(ctx, *value, &v) != 0)
        return cmd_error(ctx, "invalid variable name in \"%.*s\"", *value);
    set_var(ctx, *var, v);
    return 0;
}

static int cmd_config(ssi_ctx_t *ctx, const hy_ssi_cmd_t *cmd)
{
    static const char *const names[] = {"errmsg", "timefmt", NULL};
    const hy_ssi_param_t *bad = unknown_param(cmd, names);
    if (bad)
        return cmd_error(ctx, "invalid parameter \"%.*s\" in \"config\" SSI command", bad->name);
    const hy_str_t *errmsg = param(cmd, "errmsg"), *timefmt = param(cmd, "timefmt");
    if (errmsg)
        ctx->errmsg = hy_str_dup(ctx->req->pool, *errmsg);
    if (timefmt)
        ctx->timefmt = hy_str_dup(ctx->req->pool, *timefmt);
    return 0;
}

/* ---------------- if ---------------- */

/* nginx's expression: TEXT, TEXT = TEXT, TEXT != TEXT, TEXT = /REGEX/, TEXT != /REGEX/ (TEXT with variables).
 * 1 true, 0 false, -1 invalid. */
static int expr(ssi_ctx_t *ctx, hy_str_t e)
{
    const char *p = e.ptr, *end = e.ptr + e.len;
    const char *ls = p; /* no spaces before the left side: nginx finds no expression then */
    while (p < end && *p != ' ' && *p != '=' && *p != '!')
        p++;
    hy_str_t left;
    if (evaluate(ctx, (hy_str_t){(char *)ls, (size_t)(p - ls)}, &left) != 0)
        return -1;
    while (p < end && *p == ' ')
        p++;
    if (p == end)
        return left.len > 0;
    bool neg = false;
    if (*p == '=') {
        p++;
    } else if (*p == '!' && p + 1 < end && p[1] == '=') {
        neg = true;
        p += 2;
    } else {
        return -1;
    }
    while (p < end && *p == ' ')
        p++;
    hy_str_t right = {(char *)p, (size_t)(end - p)};
    bool eq;
    if (right.len && right.ptr[0] == '/') { /* a regex: it must end with "/" too */
        if (right.len < 2 || right.ptr[right.len - 1] != '/')
            return -1;
        hy_str_t pat; /* nginx expands variables in the pattern too ("\\$" is a dollar) */
        if (evaluate(ctx, (hy_str_t){right.ptr + 1, right.len - 2}, &pat) != 0)
            return -1;
        char err[HY_REGEX_ERR_MAX];
        hy_regex_t *re = hy_regex_compile(ctx->req->pool, pat, false, err);
        if (re == NULL) {
            hy_req_log(ctx->req, HY_LOG_ERR, "%s", err);
            return -1;
        }
        hy_str_t subject = left.len ? hy_str_dup(ctx->req->pool, left) : HY_STR("");
        int rc = hy_regex_exec(re, subject, hy_req_captures(ctx->req));
        eq = rc > 0;
        if (eq) { /* named groups are the page's variables */
            uint32_t n;
            const hy_regex_name_t *names = hy_regex_names(re, &n);
            for (uint32_t i = 0; i < n; i++)
                set_var(ctx, names[i].name, hy_regex_group(&ctx->req->captures, names[i].group));
        }
    } else {
        hy_str_t r;
        if (evaluate(ctx, right, &r) != 0)
            return -1;
        eq = left.len == r.len && (r.len == 0 || memcmp(left.ptr, r.ptr, r.len) == 0);
    }
    return neg ? !eq : eq;
}

static int cmd_if(ssi_ctx_t *ctx, const hy_ssi_cmd_t *cmd, bool elif)
{
    const hy_str_t *e = param(cmd, "expr");
    if (e == NULL || cmd->nparams != 1) {
        if (!elif)
            ctx->conditional = false;
        return cmd_error(ctx, "\"expr\" parameter is missing in \"%.*s\" SSI command", cmd->name);
    }
    if (elif && ctx->matched) {
        ctx->output = false;
        return 0;
    }
    int r = expr(ctx, *e);
    if (r < 0) { /* as nginx: the message, and the text goes on as if there were no "if" */
        if (!elif)
            ctx->conditional = false;
        return cmd_error(ctx, "invalid expression in \"%.*s\"", *e);
    }
    ctx->output = r == 1;
    ctx->matched = r == 1;
    return 0;
}

/* ---------------- include ---------------- */

typedef struct inc {
    ssi_ctx_t *ctx;
    hy_str_t set;         /* set="var": the body is the variable's value */
    ssi_block_t *stub;    /* stub="block": shown when the subrequest fails or is empty */
} inc_t;

static void inc_done(hy_splice_part_t *part, hy_req_t *sr, void *data)
{
    inc_t *in = data;
    ssi_ctx_t *ctx = in->ctx;
    bool failed = part->status == 0 || part->status >= 300 || hy_outq_empty(&part->q);
    if (in->stub && failed) {
        hy_outq_clear(&part->q);
        if (in->stub->len)
            hy_outq_push_copy(&part->q, in->stub->text, in->stub->len);
    }
    if (in->set.len) { /* the body, read, becomes the variable (up to subrequest_output_buffer_size) */
        sbuf_t b = {.pool = ctx->req->pool};
        size_t max = hy_subrequest_output_limit(sr);
        if (part->q.bytes > max) {
            hy_outq_clear(&part->q);
            hy_req_log(ctx->req, HY_LOG_ERR, "too big subrequest response: %zu bytes for \"%.*s\"",
                       (size_t)part->q.bytes, (int)in->set.len, in->set.ptr);
            if (ctx->lc->silent_errors != 1)
                hy_outq_push_copy(&part->q, ctx->errmsg.ptr, ctx->errmsg.len);
            return;
        }
        for (hy_seg_t *g = part->q.head; g && b.len < max; g = g->next) {
            if (g->kind == HY_SEG_MEM) {
                sb_add(&b, g->mem.ptr, HY_MIN(g->mem.len, max - b.len));
            } else {
                size_t n = (size_t)HY_MIN(g->file.len, (int64_t)(max - b.len));
                char *tmp = hy_palloc(ctx->req->pool, n + 1);
                if (n && hy_file_read_at(g->file.file, g->file.off, tmp, n))
                    sb_add(&b, tmp, n);
            }
        }
        set_var(ctx, in->set, (hy_str_t){b.p ? b.p : "", b.len});
        hy_outq_clear(&part->q);
    }
}

static int depth(hy_req_t *req)
{
    int d = 0;
    for (; req; req = req->parent)
        d++;
    return d;
}

static int cmd_include(ssi_ctx_t *ctx, const hy_ssi_cmd_t *cmd)
{
    static const char *const names[] = {"virtual", "file", "wait", "set", "stub", NULL};
    const hy_ssi_param_t *bad = unknown_param(cmd, names);
    if (bad)
        return cmd_error(ctx, "invalid parameter \"%.*s\" in \"include\" SSI command", bad->name);
    const hy_str_t *virt = param(cmd, "virtual"), *file = param(cmd, "file"), *wait = param(cmd, "wait"),
                   *set = param(cmd, "set"), *stub = param(cmd, "stub");
    if ((virt == NULL) == (file == NULL))
        return cmd_error(ctx, "\"include\" SSI command needs one of \"virtual\" or \"file\"%.*s",
                         HY_STR(""));
    if (wait && !hy_str_eq(*wait, "yes") && !hy_str_eq(*wait, "no"))
        return cmd_error(ctx, "invalid value \"%.*s\" in the \"wait\" parameter", *wait);
    if (wait && file)
        return cmd_error(ctx, "\"wait\" cannot be used with file=\"%.*s\"", *file);
    if (ctx->block)
        return cmd_error(ctx, "\"include\" SSI command inside the \"%.*s\" block", ctx->block->name);
    ssi_block_t *blk = NULL;
    if (stub && (blk = find_block(ctx, *stub)) == NULL)
        return cmd_error(ctx, "\"%.*s\" SSI block is not defined", *stub);
    hy_req_t *req = ctx->req;
    if (depth(req) > MAX_DEPTH)
        return cmd_error(ctx, "subrequests cycle while processing \"%.*s\"", virt ? *virt : *file);
    hy_str_t uri;
    if (evaluate(ctx, virt ? *virt : *file, &uri) != 0)
        return cmd_error(ctx, "invalid variable name in \"%.*s\"", virt ? *virt : *file);
    hy_str_t args = HY_STR("");
    const char *q = uri.len ? memchr(uri.ptr, '?', uri.len) : NULL;
    if (q) {
        args = (hy_str_t){(char *)q + 1, uri.len - (size_t)(q + 1 - uri.ptr)};
        uri.len = (size_t)(q - uri.ptr);
    }
    if (uri.len == 0 || uri.ptr[0] != '/') { /* relative to the page's directory */
        size_t dir = req->uri.len;
        while (dir > 0 && req->uri.ptr[dir - 1] != '/')
            dir--;
        sbuf_t b = {.pool = req->pool};
        sb_add(&b, req->uri.ptr, dir);
        sb_add(&b, uri.ptr, uri.len);
        uri = (hy_str_t){b.p, b.len};
    }
    /* decode %XX; a ".." segment is refused (nginx's unsafe URI) */
    char *d = hy_palloc(req->pool, uri.len + 1);
    size_t n = 0;
    for (size_t i = 0; i < uri.len; i++) {
        char c = uri.ptr[i];
        int hi, lo;
        if (c == '%' && i + 2 < uri.len && (hi = hy_hex_digit(uri.ptr[i + 1])) >= 0 && (lo = hy_hex_digit(uri.ptr[i + 2])) >= 0) {
            c = (char)(hi * 16 + lo);
            i += 2;
        }
        if (c == '\0')
            return cmd_error(ctx, "unsafe URI \"%.*s\" was detected", uri);
        d[n++] = c;
    }
    d[n] = '\0';
    hy_str_t path = {d, n};
    for (size_t i = 0; i + 1 < n; i++)
        if (d[i] == '.' && d[i + 1] == '.' && (i == 0 || d[i - 1] == '/') && (i + 2 == n || d[i + 2] == '/'))
            return cmd_error(ctx, "unsafe URI \"%.*s\" was detected", uri);
    inc_t *in = hy_pcalloc(req->pool, sizeof(*in));
    in->ctx = ctx;
    in->stub = blk;
    if (set)
        in->set = hy_str_dup(req->pool, *set);
    hy_splice_part_t *part = hy_splice_include(ctx->splice, path, args.len ? hy_str_dup(req->pool, args) : args,
                                               inc_done, in);
    if (part == NULL)
        return cmd_error(ctx, "could not start the subrequest for \"%.*s\"", uri);
    if ((wait && hy_str_eq(*wait, "yes")) || set) {
        ctx->paused = true;
        ctx->wait_part = part;
        return 1;
    }
    return 0;
}

/* ---------------- commands ---------------- */

static int on_cmd(void *arg, const hy_ssi_cmd_t *cmd)
{
    ssi_ctx_t *ctx = arg;
    hy_str_t name = cmd->name;
    if (cmd->error) {
        if (!ctx->output)
            return 0;
        return cmd_error(ctx, "%.*s", (hy_str_t){(char *)cmd->error, strlen(cmd->error)});
    }
    if (hy_str_eq(name, "if")) {
        if (ctx->conditional)
            return cmd_error(ctx, "the \"%.*s\" command inside the \"if\" command", name);
        ctx->conditional = true;
        return cmd_if(ctx, cmd, false);
    }
    if (hy_str_eq(name, "elif")) {
        if (!ctx->conditional)
            return cmd_error(ctx, "the \"%.*s\" command without the \"if\" command", name);
        return cmd_if(ctx, cmd, true);
    }
    if (hy_str_eq(name, "else")) {
        if (!ctx->conditional)
            return cmd_error(ctx, "the \"%.*s\" command without the \"if\" command", name);
        ctx->output = !ctx->matched;
        ctx->matched = true;
        return 0;
    }
    if (hy_str_eq(name, "endif")) {
        if (!ctx->conditional)
            return cmd_error(ctx, "the \"%.*s\" command without the \"if\" command", name);
        ctx->conditional = ctx->matched = false;
        ctx->output = true;
        return 0;
    }
    if (!ctx->output)
        return 0;
    if (hy_str_eq(name, "echo"))
        return cmd_echo(ctx, cmd);
    if (hy_str_eq(name, "set"))
        return cmd_set(ctx, cmd);
    if (hy_str_eq(name, "config"))
        return cmd_config(ctx, cmd);
    if (hy_str_eq(name, "include"))
        return cmd_include(ctx, cmd);
    if (hy_str_eq(name, "block")) {
        const hy_str_t *bn = param(cmd, "name");
        if (bn == NULL || cmd->nparams != 1)
            return cmd_error(ctx, "mandatory \"name\" parameter is absent in \"%.*s\" SSI command", name);
        if (ctx->block)
            return cmd_error(ctx, "the \"block\" command inside the \"%.*s\" block", ctx->block->name);
        if (ctx->blocks == NULL) {
            ctx->blocks = hy_array_create(ctx->req->pool, 2, sizeof(ssi_block_t));
            hy_pool_on_clear(ctx->req->pool, free_blocks, ctx);
        }
        ssi_block_t *b = hy_array_push(ctx->blocks);
        memset(b, 0, sizeof(*b));
        b->name = hy_str_dup(ctx->req->pool, *bn);
        ctx->block = b;
        return 0;
    }
    if (hy_str_eq(name, "endblock")) {
        ctx->block = NULL; /* nginx: an "endblock" without a block is no error */
        return 0;
    }
    return cmd_error(ctx, "unknown SSI command \"%.*s\"", name);
}

/* ---------------- the body ---------------- */

/* Scan what came in, up to a pause or `limit` bytes; at the end of the input, tell the splice. Returns -1 when a
 * file cannot be read. */
static int scan(ssi_ctx_t *ctx, size_t limit)
{
    hy_outq_t *src = &ctx->in;
    size_t done = 0;
    while (src->head && !ctx->paused && done < limit) {
        hy_seg_t *s = src->head;
        size_t n, took = 0;
        if (s->kind == HY_SEG_MEM) {
            n = HY_MIN(s->mem.len, (size_t)READ_CHUNK);
            if (n)
                took = hy_ssi_feed(&ctx->parser, s->mem.ptr, n);
        } else {
            n = (size_t)HY_MIN(s->file.len, (int64_t)READ_CHUNK);
            if (ctx->rbuf == NULL)
                ctx->rbuf = hy_alloc(READ_CHUNK);
            if (n && !hy_file_read_at(s->file.file, s->file.off, ctx->rbuf, n))
                return -1;
            if (n)
                took = hy_ssi_feed(&ctx->parser, ctx->rbuf, n);
        }
        if (n == 0) { /* an empty segment: dropped */
            src->head = s->next;
            if (src->head == NULL)
                src->tail = NULL;
            s->next = NULL;
            hy_outq_t one = {.head = s, .tail = s};
            hy_outq_clear(&one);
            continue;
        }
        hy_outq_consume(src, took);
        done += took;
    }
    if (ctx->in_final && src->head == NULL && !ctx->paused && !ctx->ended) {
        ctx->ended = true;
        hy_ssi_finish(&ctx->parser);
        if (ctx->block) /* an unterminated block is dropped, as nginx */
            ctx->block = NULL;
        hy_splice_end_input(ctx->splice);
    }
    return 0;
}

/* Scan more of the body. While the producer streams, all it gave (it bounds its batches itself); once it is done
 * (a whole file), BATCH bytes at a time until something is ready to go out, the scan waits, or the part at the
 * head is an included page still running: the rest waits for the protocol's proceed or that page, so memory
 * stays bounded whatever the page's size. */
static int fill(ssi_ctx_t *ctx)
{
    if (!ctx->in_final)
        return scan(ctx, SIZE_MAX);
    do {
        if (scan(ctx, BATCH) != 0)
            return -1;
    } while (ctx->in.head && !ctx->paused && !hy_splice_has_ready(ctx->splice) && !hy_splice_waits(ctx->splice));
    return 0;
}

static void free_ctx(void *arg)
{
    ssi_ctx_t *ctx = arg;
    hy_outq_clear(&ctx->in);
    free(ctx->rbuf);
    ctx->rbuf = NULL;
}

static void abort_proceed(hy_req_t *req)
{
    hy_req_ops(req)->abort(req);
}

/* the page's file cannot be read: nothing sane can follow (the caller aborts the request) */
static void fail(ssi_ctx_t *ctx)
{
    hy_req_log(ctx->req, HY_LOG_ERR, "ssi: reading the response body failed");
    ctx->failed = true;
    ctx->req->keepalive = false;
    free_ctx(ctx);
}

static void proceed(hy_req_t *req)
{
    ssi_ctx_t *ctx = req->ctx[IDX];
    if (!ctx->paused && fill(ctx) != 0) {
        fail(ctx);
        ctx->splice->finished = true;
        return hy_req_ops(req)->abort(req);
    }
    hy_splice_proceed(ctx->splice);
}

/* a subrequest ended: the scan goes on */
static bool changed(hy_splice_t *s, void *data)
{
    (void)s;
    ssi_ctx_t *ctx = data;
    if (ctx->failed)
        return true;
    if (ctx->paused) {
        if (ctx->wait_part->pending)
            return true;
        ctx->paused = false;
        ctx->wait_part = NULL;
    }
    if (fill(ctx) != 0) { /* the page goes on (it may have waited for that part, or been scanned up to it) */
        fail(ctx);
        return false;
    }
    return true;
}

static void body_filter(hy_req_t *req, bool is_final)
{
    if (req->ctx == NULL || req->ctx[IDX] == NULL)
        return;
    ssi_ctx_t *ctx = req->ctx[IDX];
    if (ctx->failed)
        return hy_outq_clear(&req->body);
    if (ctx->splice->finished || ctx->splice->held)
        return;
    hy_outq_move(&ctx->in, &req->body);
    if (is_final)
        ctx->in_final = true;
    if (fill(ctx) != 0) { /* inside a send: the abort waits for the protocol's proceed */
        fail(ctx);
        ctx->splice->finished = true;
        hy_req_filter_hold(req, abort_proceed);
        return;
    }
    hy_splice_body(ctx->splice, is_final);
}

static void start(hy_req_t *req, const ssi_loc_t *lc)
{
    ssi_ctx_t *ctx = hy_pcalloc(req->pool, sizeof(*ctx));
    ctx->req = req;
    ctx->lc = lc;
    ctx->output = true;
    ctx->errmsg = HY_STR(DEFAULT_ERRMSG);
    ctx->splice = hy_splice_create(req, &hy_http_ssi_module, proceed);
    ctx->splice->changed = changed;
    ctx->splice->data = ctx;
    size_t vl = (size_t)lc->value_length;
    hy_ssi_parser_init(&ctx->parser, vl, hy_palloc(req->pool, hy_ssi_values_size(vl)), on_text, on_cmd, ctx);
    hy_pool_on_clear(req->pool, free_ctx, ctx);
    *hy_req_ctx(req, &hy_http_ssi_module) = ctx;
}

static void header_filter(hy_req_t *req)
{
    ssi_loc_t *lc = req_conf(req);
    if (lc == NULL || lc->enable != 1 || req->content_length_n == 0 || !type_ok(lc, req->content_type))
        return;
    const hy_str_t *ce = hy_req_out_header(req, "Content-Encoding");
    if (ce && ce->len && !hy_str_caseeq(*ce, "identity"))
        return;
    if (!req->header_only) /* a HEAD response's head says what a GET would get (nginx) */
        start(req, lc);
    hy_req_body_rewritten(req, lc->last_modified == 1);
}

/* ---------------- configuration ---------------- */

static void *create_loc(hy_conf_t *cf)
{
    ssi_loc_t *l = hy_pcalloc(cf->pool, sizeof(*l));
    l->enable = l->silent_errors = l->last_modified = HY_UNSET;
    l->value_length = l->min_file_chunk = HY_UNSET;
    return l;
}

static int merge_loc(hy_conf_t *cf, void *parent, void *child)
{
    (void)cf;
    ssi_loc_t *p = parent, *c = child;
    hy_merge_value(c->enable, p->enable, 0);
    hy_merge_value(c->silent_errors, p->silent_errors, 0);
    hy_merge_value(c->last_modified, p->last_modified, 0);
    hy_merge_value(c->value_length, p->value_length, 256);
    hy_merge_value(c->min_file_chunk, p->min_file_chunk, 1024);
    if (c->types == NULL && !c->types_any) {
        c->types = p->types;
        c->types_any = p->types_any;
    }
    return 0;
}

static int set_types(hy_conf_t *cf, const hy_directive_t *d, void *conf)
{
    (void)d;
    ssi_loc_t *lc = conf;
    size_t n;
    hy_str_t *a = hy_conf_args(cf, &n);
    if (lc->types == NULL)
        lc->types = hy_array_create(cf->pool, n, sizeof(hy_str_t));
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

static void *create_main(hy_conf_t *cf)
{
    hy_vars_set_date_format(date_format);
    return hy_pcalloc(cf->pool, 1);
}

#define LOC(field) .conf = HY_CONF_LOC, .offset = offsetof(ssi_loc_t, field)

static const hy_directive_t ssi_directives[] = {
    {.name = "ssi", .ctx = HY_CTX_HTTP_ANY | HY_CTX_LIF, .args = HY_ARGS_FLAG, .set = hy_slot_flag, LOC(enable)},
    {.name = "ssi_silent_errors", .ctx = HY_CTX_HTTP_ANY, .args = HY_ARGS_FLAG, .set = hy_slot_flag,
     LOC(silent_errors)},
    {.name = "ssi_last_modified", .ctx = HY_CTX_HTTP_ANY, .args = HY_ARGS_FLAG, .set = hy_slot_flag,
     LOC(last_modified)},
    {.name = "ssi_value_length", .ctx = HY_CTX_HTTP_ANY, .args = HY_ARGS_1, .set = hy_slot_size,
     LOC(value_length)},
    {.name = "ssi_min_file_chunk", .ctx = HY_CTX_HTTP_ANY, .args = HY_ARGS_1, .set = hy_slot_size,
     LOC(min_file_chunk)},
    {.name = "ssi_types", .ctx = HY_CTX_HTTP_ANY, .args = HY_ARGS_1MORE, .set = set_types, LOC(types)},
    {0},
};

hy_module_t hy_http_ssi_module = {
    .name = "http_ssi",
    .directives = ssi_directives,
    .create_loc_conf = create_loc,
    .merge_loc_conf = merge_loc,
    .create_main_conf = create_main,
    .header_filter = header_filter,
    .body_filter = body_filter,
    .subrequest_body = true,
};
