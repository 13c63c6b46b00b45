/* log_access.c — nginx's access log: `log_format name [escape=default|json|none] string ...;` (with the
 * predefined "combined"), `access_log path [format [buffer=size] [flush=time] [if=condition]] | off;` with
 * nginx's inheritance (a level with access_log directives replaces what it would inherit; nothing configured
 * anywhere means "combined" to <prefix>logs/access.log), and `open_log_file_cache`. A path with variables names
 * the file per request (relative paths are under the prefix, as nginx's): the line is written only when the
 * request's root directory exists, and the file is opened for it, through the location's open_log_file_cache
 * (http/log_var_file.c).
 *
 * A format is compiled once into ops (literals, variables, and fast ops for the numbers and times nginx's log
 * module formats itself). A line is measured, then written straight into the file's buffer when it has one
 * (flushed when full, by the flush= timer, on reload, USR1 and exit), else with one write(2). */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <zlib.h>
#include "vars.h"
#include "log_access.h"
#include "phases.h"
#include "log_escape.h"
#include "log_var_file.h"
#include "path.h"
#include "../conf/cycle.h"
#include "../core/clock.h"
#include "../core/httpdate.h"
#include "../core/log.h"
#include "../core/paths.h"

#define LOG_IDX (hy_http_log_module.index)

enum {
    OP_LIT = 0, OP_VAR, OP_STATUS, OP_TIME_LOCAL, OP_TIME_ISO, OP_MSEC, OP_REQUEST_TIME, OP_BYTES_SENT,
    OP_BODY_BYTES_SENT, OP_REQUEST_LENGTH, OP_PIPE,
};

typedef struct log_op {
    int kind;
    int index;    /* OP_VAR */
    hy_str_t lit; /* OP_LIT */
} log_op_t;

typedef struct log_fmt {
    hy_str_t name;
    int escape;   /* HY_ESC_* */
    log_op_t *ops;
    size_t nops;
} log_fmt_t;

typedef struct log_file {
    char *path;      /* absolute, cycle pool */
    int fd;
    char *buf;       /* NULL: unbuffered */
    size_t size, pos; /* size 0: unbuffered (buf, when set, is the per-iteration buffer) */
    bool iter;        /* buf is the per-iteration buffer of an unbuffered log */
    hy_pool_t *pool;  /* the generation's, for that buffer */
    int64_t flush_ms; /* 0: only when full / on signals */
    int gzip_level;   /* gzip[=level]: each flushed buffer is written as one gzip member (0: plain) */
    hy_timer_t timer;
    bool pending;    /* unbuffered file with lines gathered in this loop iteration (on the dirty list) */
    struct log_file *next, *next_dirty;
} log_file_t;

/* Unbuffered logs still write each line before the loop sleeps, but the lines of one loop iteration go out
 * with one write(2) per file: the per-request write was most of the cost of logging (kept with the worker,
 * not the generation, so a generation freed mid-iteration cannot leave a dangling entry behind). */
#define ITER_BUF_SIZE 8192
static log_file_t *dirty_files;
static hy_defer_t dirty_defer;

typedef struct log_main {
    hy_array_t *formats; /* log_fmt_t* */
    log_file_t *files;
} log_main_t;

typedef struct log_entry {
    log_file_t *file;      /* NULL: path_cv names it per request, or syslog */
    hy_complex_t *path_cv;
    hy_syslog_peer_t *syslog;
    log_fmt_t *fmt;
    hy_complex_t *cond; /* if=: skip the line when "" or "0" */
} log_entry_t;

typedef struct log_loc {
    hy_array_t *logs; /* log_entry_t; NULL and !off: unset */
    bool off;
    bool cache_set;          /* open_log_file_cache given here (cache NULL: off) */
    hy_logvf_cache_t *cache; /* for paths with variables */
} log_loc_t;

static const char combined_text[] =
    "$remote_addr - $remote_user [$time_local] \"$request\" $status $body_bytes_sent \"$http_referer\" "
    "\"$http_user_agent\"";

/* ---------------------------------------------------------------- files */

/* nginx's access_log gzip: the buffer is compressed into one gzip member (RFC 1952); a file of concatenated
 * members is a valid gzip stream (`zcat` reads it whole). Returns the bytes to write in *out (malloc'd), or -1. */
static ssize_t gzip_member(const log_file_t *f, char **out)
{
    z_stream z;
    memset(&z, 0, sizeof(z));
    if (deflateInit2(&z, f->gzip_level, Z_DEFLATED, 15 + 16, 8, Z_DEFAULT_STRATEGY) != Z_OK)
        return -1;
    uLong cap = deflateBound(&z, (uLong)f->pos);
    char *buf = malloc(cap);
    if (buf == NULL) {
        deflateEnd(&z);
        return -1;
    }
    z.next_in = (Bytef *)f->buf;
    z.avail_in = (uInt)f->pos;
    z.next_out = (Bytef *)buf;
    z.avail_out = (uInt)cap;
    int rc = deflate(&z, Z_FINISH);
    size_t n = cap - z.avail_out;
    deflateEnd(&z);
    if (rc != Z_STREAM_END) {
        free(buf);
        return -1;
    }
    *out = buf;
    return (ssize_t)n;
}

static void file_flush(log_file_t *f)
{
    if (f->pos == 0)
        return;
    ssize_t n;
    if (f->gzip_level) {
        char *z = NULL;
        ssize_t zl = gzip_member(f, &z);
        if (zl < 0) {
            hy_log(HY_LOG_ALERT, "gzip of the access log \"%s\" failed", f->path);
            f->pos = 0;
            return;
        }
        n = write(f->fd, z, (size_t)zl);
        free(z);
        if (n == zl)
            n = (ssize_t)f->pos; /* all of it went out */
    } else {
        n = write(f->fd, f->buf, f->pos);
    }
    if (n < 0)
        hy_log(HY_LOG_ALERT, "write() to \"%s\" failed (%d: %s)", f->path, errno, strerror(errno));
    else if ((size_t)n != f->pos)
        hy_log(HY_LOG_ALERT, "write() to \"%s\" was incomplete: %zd of %zu", f->path, n, f->pos);
    f->pos = 0;
    if (hy_timer_is_linked(&f->timer) && hy_worker_loop)
        hy_timer_unlink(hy_worker_loop, &f->timer);
}

static void undirty(log_file_t *f)
{
    for (log_file_t **pp = &dirty_files; *pp; pp = &(*pp)->next_dirty)
        if (*pp == f) {
            *pp = f->next_dirty;
            break;
        }
    f->pending = false;
    f->next_dirty = NULL;
}

static void on_dirty_defer(hy_defer_t *d)
{
    while (dirty_files) {
        log_file_t *f = dirty_files;
        dirty_files = f->next_dirty;
        f->pending = false;
        f->next_dirty = NULL;
        file_flush(f);
    }
}

void hy_http_access_log_flush(void)
{
    if (dirty_files)
        on_dirty_defer(&dirty_defer);
}

static void on_flush_timer(hy_timer_t *t)
{
    file_flush(t->data);
}

static void file_cleanup(void *arg)
{
    log_file_t *f = arg;
    if (f->pending)
        undirty(f);
    if (f->buf)
        file_flush(f);
    if (hy_timer_is_linked(&f->timer) && hy_worker_loop)
        hy_timer_unlink(hy_worker_loop, &f->timer);
    if (f->fd >= 0)
        close(f->fd);
    f->fd = -1;
}

static int open_append(const char *path)
{
    return hy_log_open_file(path);
}

static log_file_t *file_get(hy_conf_t *cf, log_main_t *lm, const char *path)
{
    for (log_file_t *f = lm->files; f; f = f->next)
        if (strcmp(f->path, path) == 0)
            return f;
    log_file_t *f = hy_pcalloc(cf->pool, sizeof(*f));
    f->path = hy_pstrndup(cf->pool, path, strlen(path));
    f->fd = -1;
    f->pool = cf->pool;
    f->timer.cb = on_flush_timer;
    f->timer.data = f;
    f->next = lm->files;
    lm->files = f;
    return f;
}

static void write_line(log_file_t *f, const char *line, size_t len)
{
    if (f->buf == NULL) {
        ssize_t n = write(f->fd, line, len);
        if (n < 0)
            hy_log(HY_LOG_ALERT, "write() to \"%s\" failed (%d: %s)", f->path, errno, strerror(errno));
        return;
    }
    if (len > f->size - f->pos)
        file_flush(f);
    if (len > f->size) {
        if (write(f->fd, line, len) < 0)
            hy_log(HY_LOG_ALERT, "write() to \"%s\" failed (%d: %s)", f->path, errno, strerror(errno));
        return;
    }
    memcpy(f->buf + f->pos, line, len);
    f->pos += len;
}

/* ---------------------------------------------------------------- formats */


static const struct {
    const char *name;
    int op;
} fast_ops[] = {
    {"status", OP_STATUS},         {"time_local", OP_TIME_LOCAL},       {"time_iso8601", OP_TIME_ISO},
    {"msec", OP_MSEC},             {"request_time", OP_REQUEST_TIME},   {"bytes_sent", OP_BYTES_SENT},
    {"body_bytes_sent", OP_BODY_BYTES_SENT}, {"request_length", OP_REQUEST_LENGTH}, {"pipe", OP_PIPE},
};

/* the words after the name (and escape=), concatenated, compiled into ops */
static int compile_format(hy_conf_t *cf, log_fmt_t *fmt, hy_str_t *words, size_t n)
{
    hy_array_t ops;
    hy_array_init(&ops, cf->pool, 8, sizeof(log_op_t));
    for (size_t w = 0; w < n; w++) {
        hy_str_t text = hy_str_dup(cf->pool, words[w]);
        const char *p = text.ptr, *end = p + text.len;
        while (p < end) {
            if (*p != '$') {
                const char *d = memchr(p, '$', (size_t)(end - p));
                const char *e = d ? d : end;
                log_op_t *op = hy_array_push(&ops);
                op->kind = OP_LIT;
                op->lit = (hy_str_t){(char *)p, (size_t)(e - p)};
                p = e;
                continue;
            }
            const char *dollar = p++;
            hy_str_t name;
            if (hy_vars_scan_name(cf, &p, end, &name) != 0)
                return -1;
            if (name.len == 0)
                return hy_conf_error(cf, "invalid parameter \"%s\"", dollar);
            log_op_t *op = hy_array_push(&ops);
            op->kind = OP_VAR;
            for (size_t i = 0; i < HY_ARRAY_SIZE(fast_ops); i++)
                if (hy_str_eq(name, fast_ops[i].name))
                    op->kind = fast_ops[i].op;
            if (op->kind == OP_VAR) {
                op->index = hy_vars_index(cf, name);
                if (op->index < 0)
                    return -1;
            }
        }
    }
    /* merge adjacent literals (from several words) */
    log_op_t *o = ops.elts;
    size_t k = 0;
    for (size_t i = 0; i < ops.nelts; i++) {
        if (k && o[i].kind == OP_LIT && o[k - 1].kind == OP_LIT) {
            char *m = hy_palloc(cf->pool, o[k - 1].lit.len + o[i].lit.len);
            memcpy(m, o[k - 1].lit.ptr, o[k - 1].lit.len);
            memcpy(m + o[k - 1].lit.len, o[i].lit.ptr, o[i].lit.len);
            o[k - 1].lit = (hy_str_t){m, o[k - 1].lit.len + o[i].lit.len};
            continue;
        }
        o[k++] = o[i];
    }
    fmt->ops = o;
    fmt->nops = k;
    return 0;
}

static log_fmt_t *find_format(hy_conf_t *cf, log_main_t *lm, hy_str_t name)
{
    log_fmt_t **f = lm->formats->elts;
    for (size_t i = 0; i < lm->formats->nelts; i++)
        if (hy_str_eq_str(f[i]->name, name)) {
            if (i == 0 && f[0]->ops == NULL) { /* "combined": builtin variables only, cannot fail */
                hy_str_t text = HY_STR(combined_text);
                if (compile_format(cf, f[0], &text, 1) != 0)
                    return NULL;
            }
            return f[i];
        }
    return NULL;
}

/* ---------------------------------------------------------------- the line */

typedef struct piece {
    const char *p;
    size_t n;
    bool esc;
} piece_t;

static size_t fmt_msec(char *buf, int64_t ms)
{
    if (ms < 0)
        ms = 0;
    return (size_t)snprintf(buf, 32, "%lld.%03lld", (long long)(ms / 1000), (long long)(ms % 1000));
}

/* nginx's ngx_http_log_script_write: nothing is logged unless the request's root directory exists; the file is
 * named now and opened through the location's cache */
static void write_var(hy_req_t *req, const log_entry_t *e, const log_loc_t *ll, const char *line, size_t len)
{
    hy_http_loc_conf_t *lc = req->loc ? req->loc : req->srv->loc;
    size_t rl;
    char *root = hy_http_map_uri_to_path(req, lc, HY_STR(""), &rl);
    struct stat st;
    int err = stat(root, &st) != 0 ? errno : S_ISDIR(st.st_mode) ? 0 : ENOTDIR;
    if (err) {
        hy_req_log(req, HY_LOG_ERR, "testing \"%s\" existence failed (%d: %s)", root, err, strerror(err));
        return;
    }
    hy_str_t name;
    hy_vars_eval(req, e->path_cv, &name);
    char *path = hy_pstrndup(req->pool, name.ptr, name.len);
    err = hy_logvf_write(ll->cache, path, line, len);
    if (err)
        hy_req_log(req, HY_LOG_CRIT, "open() \"%s\" failed (%d: %s)", path, err, strerror(err));
}

static void log_one(hy_req_t *req, const log_entry_t *e, const log_loc_t *ll)
{
    const log_fmt_t *fmt = e->fmt;
    piece_t stack_pieces[32];
    piece_t *pc = fmt->nops <= 32 ? stack_pieces : hy_palloc(req->pool, sizeof(piece_t) * fmt->nops);
    char nums[4][32];
    int nnum = 0;
    size_t total = 1; /* "\n" */
    for (size_t i = 0; i < fmt->nops; i++) {
        const log_op_t *op = &fmt->ops[i];
        piece_t *x = &pc[i];
        x->esc = false;
        char *nb = nnum < 4 ? nums[nnum] : hy_palloc(req->pool, 32);
        switch (op->kind) {
        case OP_LIT:
            x->p = op->lit.ptr, x->n = op->lit.len;
            break;
        case OP_VAR: {
            const hy_var_value_t *v = hy_var_get(req, op->index);
            if (v->not_found) {
                if (fmt->escape == HY_ESC_DEFAULT)
                    x->p = "-", x->n = 1;
                else
                    x->p = "", x->n = 0;
            } else {
                x->p = v->ptr, x->n = v->len;
                x->esc = fmt->escape != HY_ESC_NONE;
            }
            break;
        }
        case OP_STATUS:
            x->p = nb, x->n = (size_t)snprintf(nb, 32, "%03d", req->status > 0 ? req->status : 0), nnum++;
            break;
        case OP_TIME_LOCAL:
            x->p = hy_vars_time_local(), x->n = HY_TIMELOCAL_LEN;
            break;
        case OP_TIME_ISO:
            x->p = hy_vars_time_iso8601(), x->n = strlen(x->p);
            break;
        case OP_MSEC:
            x->p = nb, x->n = fmt_msec(nb, hy_clock_time_ms()), nnum++;
            break;
        case OP_REQUEST_TIME:
            x->p = nb, x->n = fmt_msec(nb, hy_clock_time_ms() - (int64_t)req->start_ms), nnum++;
            break;
        case OP_BYTES_SENT:
        case OP_BODY_BYTES_SENT:
        case OP_REQUEST_LENGTH: {
            int64_t v = op->kind == OP_BYTES_SENT        ? req->bytes_sent
                        : op->kind == OP_BODY_BYTES_SENT ? req->body_bytes_sent
                                                         : req->request_length;
            x->p = nb, x->n = (size_t)snprintf(nb, 32, "%lld", (long long)(v < 0 ? 0 : v)), nnum++;
            break;
        }
        case OP_PIPE:
            x->p = req->pipelined ? "p" : ".", x->n = 1;
            break;
        default:
            x->p = "", x->n = 0;
        }
        total += x->esc ? hy_log_escape_len(fmt->escape, x->p, x->n) : x->n;
    }
    log_file_t *f = e->file;
    if (f == NULL) {
        char *line = hy_palloc(req->pool, total), *o = line;
        for (size_t i = 0; i < fmt->nops; i++) {
            if (pc[i].esc) {
                o = hy_log_escape(fmt->escape, o, pc[i].p, pc[i].n);
            } else if (pc[i].n) {
                memcpy(o, pc[i].p, pc[i].n);
                o += pc[i].n;
            }
        }
        *o = '\n';
        if (e->syslog)
            hy_syslog_send(e->syslog, -1, line, total - 1);
        else
            write_var(req, e, ll, line, total);
        return;
    }
    if (f->size == 0 && hy_worker_loop) { /* unbuffered: gather this iteration's lines (see ITER_BUF_SIZE) */
        if (f->buf == NULL)
            f->buf = hy_palloc(f->pool, ITER_BUF_SIZE);
        f->iter = true;
    }
    size_t cap = f->iter ? ITER_BUF_SIZE : f->size;
    char *line;
    bool direct = f->buf && total <= cap;
    if (direct) {
        if (total > cap - f->pos)
            file_flush(f);
        line = f->buf + f->pos;
    } else {
        line = hy_palloc(req->pool, total);
    }
    char *o = line;
    for (size_t i = 0; i < fmt->nops; i++) {
        if (pc[i].esc) {
            o = hy_log_escape(fmt->escape, o, pc[i].p, pc[i].n);
        } else if (pc[i].n) {
            memcpy(o, pc[i].p, pc[i].n);
            o += pc[i].n;
        }
    }
    *o++ = '\n';
    if (direct) {
        bool was_empty = f->pos == 0;
        f->pos += total;
        if (f->iter) {
            if (!f->pending) {
                f->pending = true;
                f->next_dirty = dirty_files;
                dirty_files = f;
                dirty_defer.cb = on_dirty_defer;
                hy_defer(hy_worker_loop, &dirty_defer);
            }
        } else if (was_empty && f->flush_ms > 0 && hy_worker_loop && !hy_timer_is_linked(&f->timer)) {
            hy_timer_link(hy_worker_loop, &f->timer, (uint64_t)f->flush_ms);
        }
    } else if (f->iter) {
        file_flush(f);
        if (write(f->fd, line, total) < 0)
            hy_log(HY_LOG_ALERT, "write() to \"%s\" failed (%d: %s)", f->path, errno, strerror(errno));
    } else {
        write_line(f, line, total);
    }
}

static int log_handler(hy_req_t *req)
{
    hy_http_loc_conf_t *lc = req->loc ? req->loc : req->srv ? req->srv->loc : NULL;
    if (lc == NULL || lc->loc_conf == NULL)
        return HY_OK;
    log_loc_t *ll = lc->loc_conf[LOG_IDX];
    if (ll == NULL || ll->off || ll->logs == NULL)
        return HY_OK;
    log_entry_t *e = ll->logs->elts;
    for (size_t i = 0; i < ll->logs->nelts; i++) {
        if (e[i].cond) {
            hy_str_t v;
            hy_vars_eval(req, e[i].cond, &v);
            if (v.len == 0 || (v.len == 1 && v.ptr[0] == '0'))
                continue;
        }
        log_one(req, &e[i], ll);
    }
    return HY_OK;
}

/* ---------------------------------------------------------------- directives */

static log_main_t *log_main(hy_conf_t *cf)
{
    return cf->main_conf[LOG_IDX];
}

static int set_log_format(hy_conf_t *cf, const hy_directive_t *d, void *conf)
{
    log_main_t *lm = conf;
    size_t n;
    hy_str_t *a = hy_conf_args(cf, &n);
    if (find_format(cf, lm, a[1]))
        return hy_conf_error(cf, "duplicate \"log_format\" name \"%s\"", a[1].ptr);
    log_fmt_t *fmt = hy_pcalloc(cf->pool, sizeof(*fmt));
    fmt->name = hy_str_dup(cf->pool, a[1]);
    size_t first = 2;
    if (n > 2 && a[2].len > 7 && memcmp(a[2].ptr, "escape=", 7) == 0) {
        const char *v = a[2].ptr + 7;
        if (strcmp(v, "default") == 0)
            fmt->escape = HY_ESC_DEFAULT;
        else if (strcmp(v, "json") == 0)
            fmt->escape = HY_ESC_JSON;
        else if (strcmp(v, "none") == 0)
            fmt->escape = HY_ESC_NONE;
        else
            return hy_conf_error(cf, "unknown log format escaping \"%s\"", v);
        first = 3;
    }
    if (compile_format(cf, fmt, a + first, n - first) != 0)
        return -1;
    *(log_fmt_t **)hy_array_push(lm->formats) = fmt;
    return 0;
}

static int set_access_log(hy_conf_t *cf, const hy_directive_t *d, void *conf)
{
    log_loc_t *ll = conf;
    log_main_t *lm = log_main(cf);
    size_t n;
    hy_str_t *a = hy_conf_args(cf, &n);
    if (hy_str_eq(a[1], "off")) {
        if (n != 2)
            return hy_conf_error(cf, "invalid parameter \"%s\"", a[2].ptr);
        ll->off = true;
        return 0;
    }
    hy_syslog_peer_t *peer = NULL;
    if (a[1].len > 7 && memcmp(a[1].ptr, "syslog:", 7) == 0) {
        char err[256];
        if (hy_syslog_parse(cf->pool, a[1].ptr + 7, a[1].len - 7, &peer, err, sizeof(err)) != 0)
            return hy_conf_error(cf, "%s", err);
    }
    log_fmt_t *fmt = find_format(cf, lm, n > 2 ? a[2] : HY_STR("combined"));
    if (fmt == NULL)
        return hy_conf_error(cf, "unknown log format \"%s\"", a[2].ptr);
    int64_t size = 0, flush = 0;
    int gzip = 0;
    hy_complex_t *cond = NULL;
    for (size_t i = 3; i < n; i++) {
        hy_str_t o = a[i];
        if (o.len > 7 && memcmp(o.ptr, "buffer=", 7) == 0) {
            size = hy_parse_size(o.ptr + 7, o.len - 7);
            if (size <= 0 || size > 64 * 1024 * 1024)
                return hy_conf_error(cf, "invalid buffer size \"%s\"", o.ptr + 7);
        } else if (o.len > 6 && memcmp(o.ptr, "flush=", 6) == 0) {
            flush = hy_parse_msec(o.ptr + 6, o.len - 6);
            if (flush <= 0)
                return hy_conf_error(cf, "invalid flush time \"%s\"", o.ptr + 6);
        } else if (hy_str_eq(o, "gzip")) {
            gzip = 1; /* nginx's default level */
        } else if (o.len > 5 && memcmp(o.ptr, "gzip=", 5) == 0) {
            int64_t lvl = hy_parse_int(o.ptr + 5, o.len - 5);
            if (lvl < 1 || lvl > 9)
                return hy_conf_error(cf, "invalid compression level \"%s\"", o.ptr + 5);
            gzip = (int)lvl;
        } else if (o.len > 3 && memcmp(o.ptr, "if=", 3) == 0) {
            cond = hy_palloc(cf->pool, sizeof(*cond));
            if (hy_vars_compile(cf, (hy_str_t){o.ptr + 3, o.len - 3}, cond) != 0)
                return -1;
        } else {
            return hy_conf_error(cf, "invalid parameter \"%s\"", o.ptr);
        }
    }
    if (gzip && size == 0)
        size = 64 * 1024; /* nginx: gzip buffers 64K by default */
    if (flush && size == 0)
        return hy_conf_error(cf, "no buffer is defined for access_log \"%s\"", a[1].ptr);
    if (peer || memchr(a[1].ptr, '$', a[1].len)) {
        if (size)
            return hy_conf_error(cf, peer ? "logs to syslog cannot be buffered"
                                          : "buffered logs cannot have variables in name");
        if (peer) {
            if (ll->logs == NULL)
                ll->logs = hy_array_create(cf->pool, 2, sizeof(log_entry_t));
            *(log_entry_t *)hy_array_push(ll->logs) = (log_entry_t){.syslog = peer, .fmt = fmt, .cond = cond};
            return 0;
        }
        const char *full = hy_cycle_path(cf->cycle, a[1].ptr, a[1].len);
        hy_complex_t *cv = hy_palloc(cf->pool, sizeof(*cv));
        if (hy_vars_compile(cf, (hy_str_t){(char *)full, strlen(full)}, cv) != 0)
            return -1;
        if (ll->logs == NULL)
            ll->logs = hy_array_create(cf->pool, 2, sizeof(log_entry_t));
        log_entry_t *e = hy_array_push(ll->logs);
        *e = (log_entry_t){.path_cv = cv, .fmt = fmt, .cond = cond};
        return 0;
    }
    log_file_t *f = file_get(cf, lm, hy_cycle_path(cf->cycle, a[1].ptr, a[1].len));
    if (size) {
        if (f->size) {
            if ((int64_t)f->size != size || f->flush_ms != flush || f->gzip_level != gzip)
                return hy_conf_error(cf, "access_log \"%s\" already defined with conflicting parameters", a[1].ptr);
        } else {
            f->buf = hy_palloc(cf->pool, (size_t)size);
            f->size = (size_t)size;
            f->flush_ms = flush;
            f->gzip_level = gzip;
        }
    }
    if (ll->logs == NULL)
        ll->logs = hy_array_create(cf->pool, 2, sizeof(log_entry_t));
    log_entry_t *e = hy_array_push(ll->logs);
    e->file = f;
    e->path_cv = NULL;
    e->syslog = NULL;
    e->fmt = fmt;
    e->cond = cond;
    return 0;
}

static int set_open_log_file_cache(hy_conf_t *cf, const hy_directive_t *d, void *conf)
{
    log_loc_t *ll = conf;
    size_t n;
    hy_str_t *a = hy_conf_args(cf, &n);
    if (ll->cache_set)
        return hy_conf_error(cf, "\"open_log_file_cache\" directive is duplicate");
    ll->cache_set = true;
    if (n == 2 && hy_str_eq(a[1], "off"))
        return 0;
    int64_t max = 0, inactive = 10000, valid = 60000, min_uses = 1;
    for (size_t i = 1; i < n; i++) {
        hy_str_t o = a[i];
        if (o.len > 4 && memcmp(o.ptr, "max=", 4) == 0) {
            max = hy_parse_int(o.ptr + 4, o.len - 4); /* nginx: max=0 is no max */
            if (max < 0)
                return hy_conf_error(cf, "invalid \"open_log_file_cache\" parameter \"%s\"", o.ptr);
        } else if (o.len > 9 && memcmp(o.ptr, "inactive=", 9) == 0) {
            inactive = hy_parse_sec(o.ptr + 9, o.len - 9);
            if (inactive < 0)
                return hy_conf_error(cf, "invalid \"open_log_file_cache\" parameter \"%s\"", o.ptr);
            inactive *= 1000;
        } else if (o.len > 6 && memcmp(o.ptr, "valid=", 6) == 0) {
            valid = hy_parse_sec(o.ptr + 6, o.len - 6);
            if (valid < 0)
                return hy_conf_error(cf, "invalid \"open_log_file_cache\" parameter \"%s\"", o.ptr);
            valid *= 1000;
        } else if (o.len > 9 && memcmp(o.ptr, "min_uses=", 9) == 0) {
            min_uses = hy_parse_int(o.ptr + 9, o.len - 9);
            if (min_uses < 0)
                return hy_conf_error(cf, "invalid \"open_log_file_cache\" parameter \"%s\"", o.ptr);
        } else {
            return hy_conf_error(cf, "invalid \"open_log_file_cache\" parameter \"%s\"", o.ptr);
        }
    }
    if (max == 0)
        return hy_conf_error(cf, "\"open_log_file_cache\" must have \"max\" parameter");
    ll->cache = hy_logvf_cache_create(cf->pool, (size_t)max, inactive, valid, (unsigned)min_uses);
    return 0;
}

/* ---------------------------------------------------------------- confs */

static void *create_main(hy_conf_t *cf)
{
    log_main_t *lm = hy_pcalloc(cf->pool, sizeof(*lm));
    lm->formats = hy_array_create(cf->pool, 4, sizeof(log_fmt_t *));
    /* the predefined "combined", compiled on first use (cf->main_conf is not set while confs are created) */
    log_fmt_t *fmt = hy_pcalloc(cf->pool, sizeof(*fmt));
    fmt->name = HY_STR("combined");
    *(log_fmt_t **)hy_array_push(lm->formats) = fmt;
    return lm;
}

static void *create_loc(hy_conf_t *cf)
{
    return hy_pcalloc(cf->pool, sizeof(log_loc_t));
}

static int merge_loc(hy_conf_t *cf, void *parent, void *child)
{
    log_loc_t *p = parent, *c = child;
    if (!c->cache_set) {
        c->cache_set = p->cache_set;
        c->cache = p->cache;
    }
    if (c->logs || c->off)
        return 0;
    c->logs = p->logs;
    c->off = p->off;
    if (c->logs || c->off)
        return 0;
    /* nothing configured up to here: nginx's default, combined to logs/access.log */
    log_main_t *lm = log_main(cf);
    c->logs = hy_array_create(cf->pool, 1, sizeof(log_entry_t));
    log_entry_t *e = hy_array_push(c->logs);
    e->file = file_get(cf, lm, hy_cycle_path(cf->cycle, HY_PATH_HTTP_LOG, strlen(HY_PATH_HTTP_LOG)));
    e->fmt = find_format(cf, lm, HY_STR("combined"));
    return 0;
}

static int postconfiguration(hy_conf_t *cf)
{
    log_main_t *lm = log_main(cf);
    if (hy_http_phase_add(cf, HY_PHASE_LOG, log_handler) != 0)
        return -1;
    for (log_file_t *f = lm->files; f; f = f->next) {
        int fd = open_append(f->path);
        if (fd == -ENOENT) { /* a fresh prefix has no logs/ yet */
            char *dir = hy_pstrndup(cf->pool, f->path, strlen(f->path));
            char *slash = strrchr(dir, '/');
            if (slash && slash != dir) {
                *slash = '\0';
                mkdir(dir, 0755);
                fd = open_append(f->path);
            }
        }
        if (fd < 0) {
            hy_log_stderr(HY_LOG_EMERG, "open() \"%s\" failed (%d: %s)", f->path, -fd, strerror(-fd));
            return -1;
        }
        f->fd = fd;
        hy_pool_on_clear(cf->pool, file_cleanup, f);
    }
    return 0;
}

static void flush_worker(hy_cycle_t *cycle, bool reopen)
{
    if (cycle == NULL || cycle->http_main_conf == NULL)
        return;
    log_main_t *lm = cycle->http_main_conf[LOG_IDX];
    if (lm == NULL)
        return;
    for (log_file_t *f = lm->files; f; f = f->next) {
        if (f->pending)
            undirty(f);
        if (f->buf)
            file_flush(f);
        if (reopen && f->fd >= 0) {
            int fd = hy_log_reopen_file(f->path); /* owner to the workers' user, as nginx */
            if (fd < 0) {
                hy_log(HY_LOG_ALERT, "open() \"%s\" failed (%d: %s)", f->path, -fd, strerror(-fd));
                continue;
            }
            dup2(fd, f->fd); /* keep the fd number, O_CLOEXEC is not carried by dup2 */
            fcntl(f->fd, F_SETFD, FD_CLOEXEC);
            close(fd);
        }
    }
}

static const hy_directive_t log_directives[] = {
    {.name = "log_format", .ctx = HY_CTX_HTTP, .args = HY_ARGS_2MORE, .set = set_log_format,
     .conf = HY_CONF_HTTP_MAIN},
    {.name = "access_log", .ctx = HY_CTX_HTTP_ANY | HY_CTX_LIF | HY_CTX_LMT, .args = HY_ARGS_1MORE, .set = set_access_log,
     .conf = HY_CONF_LOC},
    {.name = "open_log_file_cache", .ctx = HY_CTX_HTTP_ANY, .args = HY_ARGS_1MORE, .set = set_open_log_file_cache,
     .conf = HY_CONF_LOC},
    {0},
};

hy_module_t hy_http_log_module = {
    .name = "http_log",
    .directives = log_directives,
    .create_main_conf = create_main,
    .create_loc_conf = create_loc,
    .merge_loc_conf = merge_loc,
    .postconfiguration = postconfiguration,
    .flush_worker = flush_worker,
};

size_t hy_http_access_log_paths(hy_cycle_t *cycle, const char **out, size_t cap)
{
    if (cycle == NULL || cycle->http_main_conf == NULL)
        return 0;
    log_main_t *lm = cycle->http_main_conf[LOG_IDX];
    size_t n = 0;
    for (log_file_t *f = lm ? lm->files : NULL; f; f = f->next) {
        if (n < cap)
            out[n] = f->path;
        n++;
    }
    return n;
}
