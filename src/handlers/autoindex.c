/* autoindex.c — nginx's autoindex module: render a directory listing byte-compatible with nginx's output, and
 * the content handler that answers with it. */
#include "autoindex.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include "../core/hayate.h"
#include "../core/httpdate.h"
#include "../http/phases.h"
#include "../http/path.h"
#include "../http/open_file_cache.h"
#include "../http/uri.h"
#include "../core/log.h"

#define NAME_LEN 50 /* html column width for names, as nginx */

typedef struct entry {
    char *name;
    size_t len;
    char kind; /* 'd' directory, 'f' regular file, 'o' other */
    int64_t size;
    int64_t mtime;
} entry_t;

typedef struct sbuf {
    char *p;
    size_t len, cap;
    bool oom;
} sbuf_t;

static bool sb_reserve(sbuf_t *b, size_t n)
{
    if (b->oom)
        return false;
    if (b->len + n <= b->cap)
        return true;
    size_t cap = b->cap ? b->cap : 4096;
    while (cap < b->len + n)
        cap *= 2;
    char *p = realloc(b->p, cap);
    if (p == NULL) {
        b->oom = true;
        return false;
    }
    b->p = p;
    b->cap = cap;
    return true;
}

static void sb_add(sbuf_t *b, const char *s, size_t n)
{
    if (sb_reserve(b, n)) {
        memcpy(b->p + b->len, s, n);
        b->len += n;
    }
}

#define sb_lit(b, lit) sb_add((b), (lit), sizeof(lit) - 1)

static void sb_char(sbuf_t *b, char c, size_t count)
{
    if (sb_reserve(b, count)) {
        memset(b->p + b->len, c, count);
        b->len += count;
    }
}

static void sb_fmt(sbuf_t *b, const char *fmt, ...) HY_PRINTF(2, 3);

static void sb_fmt(sbuf_t *b, const char *fmt, ...)
{
    char tmp[128];
    va_list ap;
    va_start(ap, fmt);
    int n = vsnprintf(tmp, sizeof(tmp), fmt, ap);
    va_end(ap);
    if (n > 0)
        sb_add(b, tmp, (size_t)n < sizeof(tmp) ? (size_t)n : sizeof(tmp) - 1);
}

/* & < > " → entities (html text and xml) */
static void sb_html(sbuf_t *b, const char *s, size_t n)
{
    size_t run = 0;
    for (size_t i = 0; i < n; i++) {
        const char *rep;
        switch (s[i]) {
        case '&': rep = "&amp;"; break;
        case '<': rep = "&lt;"; break;
        case '>': rep = "&gt;"; break;
        case '"': rep = "&quot;"; break;
        default: continue;
        }
        sb_add(b, s + run, i - run);
        sb_add(b, rep, strlen(rep));
        run = i + 1;
    }
    sb_add(b, s + run, n - run);
}

/* Percent-encode everything but RFC 3986 unreserved characters (what nginx's listing does for hrefs). */
static void sb_url(sbuf_t *b, const char *s, size_t n)
{
    if (sb_reserve(b, n * 3))
        b->len += hy_pct_escape(b->p + b->len, s, n, hy_pct_not_unreserved);
}

static void sb_json(sbuf_t *b, const char *s, size_t n)
{
    static const char hex[] = "0123456789ABCDEF";
    for (size_t i = 0; i < n; i++) {
        unsigned char c = (unsigned char)s[i];
        switch (c) {
        case '"': sb_lit(b, "\\\""); break;
        case '\\': sb_lit(b, "\\\\"); break;
        case '\b': sb_lit(b, "\\b"); break;
        case '\f': sb_lit(b, "\\f"); break;
        case '\n': sb_lit(b, "\\n"); break;
        case '\r': sb_lit(b, "\\r"); break;
        case '\t': sb_lit(b, "\\t"); break;
        default:
            if (c < 0x20) {
                char u[6] = {'\\', 'u', '0', '0', hex[c >> 4], hex[c & 15]};
                sb_add(b, u, sizeof(u));
            } else {
                sb_add(b, (const char *)&s[i], 1);
            }
        }
    }
}

/* Length of the UTF-8 sequence starting at s (n bytes left), or 0 if invalid. */
static size_t utf8_seq(const unsigned char *s, size_t n)
{
    unsigned char c = s[0];
    size_t len;
    uint32_t cp;
    if (c < 0x80)
        return 1;
    if (c >= 0xc2 && c <= 0xdf) {
        len = 2;
        cp = c & 0x1f;
    } else if (c >= 0xe0 && c <= 0xef) {
        len = 3;
        cp = c & 0x0f;
    } else if (c >= 0xf0 && c <= 0xf4) {
        len = 4;
        cp = c & 0x07;
    } else {
        return 0;
    }
    if (n < len)
        return 0;
    for (size_t i = 1; i < len; i++) {
        if ((s[i] & 0xc0) != 0x80)
            return 0;
        cp = (cp << 6) | (s[i] & 0x3f);
    }
    if ((len == 3 && (cp < 0x800 || (cp >= 0xd800 && cp <= 0xdfff))) || (len == 4 && (cp < 0x10000 || cp > 0x10ffff)))
        return 0;
    return len;
}

/* Display length of a name in "units" (characters when utf8 and valid, else bytes); *cut gets the byte length
 * of the first `limit` units. */
static size_t display_len(const char *name, size_t len, bool utf8, size_t limit, size_t *cut)
{
    if (utf8) {
        size_t units = 0, i = 0, cutb = 0;
        const unsigned char *s = (const unsigned char *)name;
        while (i < len) {
            size_t l = utf8_seq(s + i, len - i);
            if (l == 0)
                goto bytes; /* invalid UTF-8: measure in bytes */
            i += l;
            units++;
            if (units == limit)
                cutb = i;
        }
        *cut = units > limit ? cutb : len;
        return units;
    }
bytes:
    *cut = len > limit ? limit : len;
    return len;
}

static void html_size(sbuf_t *b, const entry_t *e, bool exact)
{
    if (e->kind == 'd') {
        if (exact)
            sb_fmt(b, " %19s", "-");
        else
            sb_fmt(b, " %7s", "-");
        return;
    }
    if (exact) {
        sb_fmt(b, " %19" PRId64, e->size);
        return;
    }
    int64_t len = e->size, v;
    char scale = 0;
    static const int64_t K = 1024, M = 1024 * 1024, G = 1024 * 1024 * 1024;
    if (len > G - 1) {
        v = len / G + (len % G > G / 2 - 1);
        scale = 'G';
    } else if (len > M - 1) {
        v = len / M + (len % M > M / 2 - 1);
        scale = 'M';
    } else if (len > 9999) {
        v = len / K + (len % K > K / 2 - 1);
        scale = 'K';
    } else {
        v = len;
    }
    if (scale)
        sb_fmt(b, " %6" PRId64 "%c", v, scale);
    else
        sb_fmt(b, " %7" PRId64, v);
}

static void civil(int64_t t, bool local, int *y, int *mo, int *d, int *h, int *mi, int *s)
{
    if (local) {
        struct tm tm;
        time_t tt = (time_t)t;
        if (localtime_r(&tt, &tm) != NULL) {
            *y = tm.tm_year + 1900;
            *mo = tm.tm_mon + 1;
            *d = tm.tm_mday;
            *h = tm.tm_hour;
            *mi = tm.tm_min;
            *s = tm.tm_sec;
            return;
        }
    }
    int wd;
    hy_time_to_civil(t, y, mo, d, h, mi, s, &wd);
}

static void render_html(sbuf_t *b, hy_str_t uri, const entry_t *ents, size_t n, const hy_autoindex_opts_t *o)
{
    sb_lit(b, "<html>\r\n<head><title>Index of ");
    sb_html(b, uri.ptr, uri.len);
    sb_lit(b, "</title></head>\r\n<body>\r\n<h1>Index of ");
    sb_html(b, uri.ptr, uri.len);
    sb_lit(b, "</h1><hr><pre><a href=\"../\">../</a>\r\n");

    for (size_t i = 0; i < n; i++) {
        const entry_t *e = &ents[i];
        bool dir = e->kind == 'd';
        sb_lit(b, "<a href=\"");
        sb_url(b, e->name, e->len);
        if (dir)
            sb_lit(b, "/");
        sb_lit(b, "\">");

        size_t cut;
        size_t units = display_len(e->name, e->len, o->utf8, NAME_LEN - 3, &cut);
        if (units > NAME_LEN) {
            sb_html(b, e->name, cut);
            sb_lit(b, "..&gt;</a>");
        } else {
            sb_html(b, e->name, e->len);
            if (dir && units < NAME_LEN) {
                sb_lit(b, "/");
                units++;
            }
            sb_lit(b, "</a>");
            sb_char(b, ' ', NAME_LEN - units);
        }

        int y, mo, d, h, mi, s;
        civil(e->mtime, o->localtime, &y, &mo, &d, &h, &mi, &s);
        sb_fmt(b, " %02d-%s-%d %02d:%02d", d, hy_month_names[mo - 1], y, h, mi);
        html_size(b, e, o->exact_size);
        sb_lit(b, "\r\n");
    }
    sb_lit(b, "</pre><hr></body>\r\n</html>\r\n");
}

static void render_json(sbuf_t *b, const entry_t *ents, size_t n)
{
    sb_lit(b, "[\r\n");
    for (size_t i = 0; i < n; i++) {
        const entry_t *e = &ents[i];
        sb_lit(b, "{ \"name\":\"");
        sb_json(b, e->name, e->len);
        sb_lit(b, "\", \"type\":\"");
        if (e->kind == 'd')
            sb_lit(b, "directory");
        else if (e->kind == 'f')
            sb_lit(b, "file");
        else
            sb_lit(b, "other");
        sb_lit(b, "\", \"mtime\":\"");
        char date[HY_HTTPDATE_LEN + 1];
        sb_add(b, date, hy_httpdate_format(e->mtime, date));
        sb_lit(b, "\"");
        if (e->kind == 'f')
            sb_fmt(b, ", \"size\":%" PRId64, e->size);
        sb_lit(b, " }");
        if (i + 1 < n)
            sb_lit(b, ",");
        sb_lit(b, "\r\n");
    }
    sb_lit(b, "]");
}

static void render_xml(sbuf_t *b, const entry_t *ents, size_t n)
{
    sb_lit(b, "<?xml version=\"1.0\"?>\r\n<list>\r\n");
    for (size_t i = 0; i < n; i++) {
        const entry_t *e = &ents[i];
        const char *tag = e->kind == 'd' ? "directory" : e->kind == 'f' ? "file" : "other";
        int y, mo, d, h, mi, s, wd;
        hy_time_to_civil(e->mtime, &y, &mo, &d, &h, &mi, &s, &wd);
        sb_fmt(b, "<%s mtime=\"%04d-%02d-%02dT%02d:%02d:%02dZ\"", tag, y, mo, d, h, mi, s);
        if (e->kind == 'f')
            sb_fmt(b, " size=\"%" PRId64 "\"", e->size);
        sb_lit(b, ">");
        sb_html(b, e->name, e->len);
        sb_fmt(b, "</%s>\r\n", tag);
    }
    sb_lit(b, "</list>\r\n");
}

static int cmp_entries(const void *a, const void *b)
{
    const entry_t *x = a, *y = b;
    bool xd = x->kind == 'd', yd = y->kind == 'd';
    if (xd != yd)
        return xd ? -1 : 1;
    return strcmp(x->name, y->name);
}

static void free_entries(entry_t *ents, size_t n)
{
    for (size_t i = 0; i < n; i++)
        free(ents[i].name);
    free(ents);
}

static int read_entries(const char *dirpath, entry_t **out, size_t *out_n)
{
    DIR *dir = opendir(dirpath);
    if (dir == NULL)
        return -errno;
    int dfd = dirfd(dir);
    entry_t *ents = NULL;
    size_t n = 0, cap = 0;
    int rc = 0;
    for (;;) {
        errno = 0;
        struct dirent *de = readdir(dir);
        if (de == NULL) {
            rc = errno ? -errno : 0;
            break;
        }
        if (de->d_name[0] == '.')
            continue; /* ".", ".." and hidden files */
        struct stat st;
        if (fstatat(dfd, de->d_name, &st, 0) != 0) {
            if ((errno != ENOENT && errno != ELOOP) || fstatat(dfd, de->d_name, &st, AT_SYMLINK_NOFOLLOW) != 0)
                continue;
        }
        if (n == cap) {
            size_t ncap = cap ? cap * 2 : 64;
            entry_t *ne = realloc(ents, ncap * sizeof(*ne));
            if (ne == NULL) {
                rc = -ENOMEM;
                break;
            }
            ents = ne;
            cap = ncap;
        }
        size_t len = strlen(de->d_name);
        char *name = malloc(len + 1);
        if (name == NULL) {
            rc = -ENOMEM;
            break;
        }
        memcpy(name, de->d_name, len + 1);
        ents[n++] = (entry_t){
            .name = name,
            .len = len,
            .kind = S_ISDIR(st.st_mode) ? 'd' : S_ISREG(st.st_mode) ? 'f' : 'o',
            .size = (int64_t)st.st_size,
            .mtime = (int64_t)st.st_mtime,
        };
    }
    closedir(dir);
    if (rc != 0) {
        free_entries(ents, n);
        return rc;
    }
    if (n > 1)
        qsort(ents, n, sizeof(*ents), cmp_entries);
    *out = ents;
    *out_n = n;
    return 0;
}

int hy_autoindex_render(const char *dirpath, hy_str_t uri, const hy_autoindex_opts_t *o, char **out,
                        size_t *out_len)
{
    entry_t *ents = NULL;
    size_t n = 0;
    int rc = read_entries(dirpath, &ents, &n);
    if (rc != 0)
        return rc;

    sbuf_t b = {0};
    switch (o->format) {
    case HY_AUTOINDEX_JSON:
        render_json(&b, ents, n);
        break;
    case HY_AUTOINDEX_JSONP:
        if (o->callback.len > 0) {
            sb_lit(&b, "/* callback */\r\n");
            sb_add(&b, o->callback.ptr, o->callback.len);
            sb_lit(&b, "(");
        }
        render_json(&b, ents, n);
        if (o->callback.len > 0)
            sb_lit(&b, ");");
        break;
    case HY_AUTOINDEX_XML:
        render_xml(&b, ents, n);
        break;
    default:
        render_html(&b, uri, ents, n, o);
        break;
    }
    free_entries(ents, n);
    if (b.oom) {
        free(b.p);
        return -ENOMEM;
    }
    *out = b.p;
    *out_len = b.len;
    return 0;
}

hy_str_t hy_autoindex_content_type(const hy_autoindex_opts_t *o)
{
    switch (o->format) {
    case HY_AUTOINDEX_JSON:
        return HY_STR("application/json");
    case HY_AUTOINDEX_JSONP:
        return o->callback.len > 0 ? HY_STR("application/javascript") : HY_STR("application/json");
    case HY_AUTOINDEX_XML:
        return HY_STR("text/xml; charset=utf-8");
    default:
        return HY_STR("text/html");
    }
}

/* ---------------- the content handler (nginx's ngx_http_autoindex_module) ---------------- */


typedef struct autoindex_loc {
    int enable, exact_size, localtime, format;
} autoindex_loc_t;

/* nginx's jsonp callback: the "callback" argument, up to 128 characters of letters, digits, '_' and '.';
 * anything else is a bad request. Returns false after logging. */
static bool jsonp_callback(hy_req_t *req, hy_str_t *cb)
{
    *cb = HY_STR_NULL;
    const char *p = req->args.ptr, *end = req->args.ptr + req->args.len;
    while (p && p < end) {
        const char *amp = memchr(p, '&', (size_t)(end - p));
        const char *e = amp ? amp : end;
        if (e - p >= 9 && memcmp(p, "callback=", 9) == 0) {
            *cb = (hy_str_t){(char *)p + 9, (size_t)(e - p - 9)};
            break;
        }
        p = amp ? amp + 1 : NULL;
    }
    if (cb->len > 128) { /* nginx 1.22's limit, and its [info] line with the whole name */
        hy_req_log(req, HY_LOG_INFO, "client sent too long callback name: \"%.*s\"", (int)cb->len, cb->ptr);
        return false;
    }
    for (size_t i = 0; i < cb->len; i++) {
        char c = cb->ptr[i];
        if (!((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_' || c == '.')) {
            hy_req_log(req, HY_LOG_INFO, "client sent invalid callback name: \"%.*s\"", (int)cb->len, cb->ptr);
            return false;
        }
    }
    return true;
}

static int autoindex_content_phase(hy_req_t *req)
{
    if (req->uri.len == 0 || req->uri.ptr[req->uri.len - 1] != '/')
        return HY_DECLINED;
    if (req->method_id != HY_M_GET && req->method_id != HY_M_HEAD)
        return HY_DECLINED;
    const hy_http_loc_conf_t *lc = req->loc;
    const autoindex_loc_t *ac = lc->loc_conf[hy_http_autoindex_module.index];
    if (ac->enable != 1)
        return HY_DECLINED;
    size_t plen;
    char *dir = hy_http_map_uri_to_path(req, lc, req->uri, &plen);
    hy_autoindex_opts_t o = {.exact_size = ac->exact_size != 0, .localtime = ac->localtime == 1,
                             .format = ac->format};
    /* nginx measures and cuts names in characters when the response's charset is utf-8 */
    o.utf8 = hy_http_charset_of && hy_str_caseeq(hy_http_charset_of(req, hy_autoindex_content_type(&o)), "utf-8");
    if (o.format == HY_AUTOINDEX_JSONP && !jsonp_callback(req, &o.callback))
        return 400;
    char *out = NULL;
    size_t out_len = 0;
    int r = hy_autoindex_render(dir, req->uri, &o, &out, &out_len);
    if (r < 0) {
        int err = -r;
        hy_http_log_open_error(req, "opendir()", dir, err, err == ENOENT ? HY_LOG_ERR : HY_LOG_CRIT);
        return hy_http_errno_status(err);
    }
    req->status = 200;
    req->content_type = hy_autoindex_content_type(&o);
    req->content_length_n = (int64_t)out_len;
    if (req->method_id == HY_M_HEAD)
        req->header_only = true;
    hy_outq_push_mem(&req->body, out, out_len, free, out);
    hy_req_send(req, true);
    return HY_DONE;
}

static int autoindex_postconfiguration(hy_conf_t *cf)
{
    return hy_http_phase_add(cf, HY_PHASE_CONTENT, autoindex_content_phase);
}

static void *autoindex_create_loc(hy_conf_t *cf)
{
    autoindex_loc_t *c = hy_pcalloc(cf->pool, sizeof(*c));
    c->enable = c->exact_size = c->localtime = c->format = HY_UNSET;
    return c;
}

static int autoindex_merge_loc(hy_conf_t *cf, void *parent, void *child)
{
    autoindex_loc_t *p = parent, *c = child;
    hy_merge_value(c->enable, p->enable, 0);
    hy_merge_value(c->exact_size, p->exact_size, 1);
    hy_merge_value(c->localtime, p->localtime, 0);
    hy_merge_value(c->format, p->format, HY_AUTOINDEX_HTML);
    return 0;
}

static const hy_enum_t autoindex_formats[] = {
    {"html", HY_AUTOINDEX_HTML}, {"xml", HY_AUTOINDEX_XML}, {"json", HY_AUTOINDEX_JSON},
    {"jsonp", HY_AUTOINDEX_JSONP}, {NULL, 0},
};

static const hy_directive_t autoindex_directives[] = {
    {.name = "autoindex", .ctx = HY_CTX_HTTP_ANY, .args = HY_ARGS_FLAG, .set = hy_slot_flag, .conf = HY_CONF_LOC,
     .offset = offsetof(autoindex_loc_t, enable)},
    {.name = "autoindex_exact_size", .ctx = HY_CTX_HTTP_ANY, .args = HY_ARGS_FLAG, .set = hy_slot_flag,
     .conf = HY_CONF_LOC, .offset = offsetof(autoindex_loc_t, exact_size)},
    {.name = "autoindex_localtime", .ctx = HY_CTX_HTTP_ANY, .args = HY_ARGS_FLAG, .set = hy_slot_flag,
     .conf = HY_CONF_LOC, .offset = offsetof(autoindex_loc_t, localtime)},
    {.name = "autoindex_format", .ctx = HY_CTX_HTTP_ANY, .args = HY_ARGS_1, .set = hy_slot_enum,
     .conf = HY_CONF_LOC, .offset = offsetof(autoindex_loc_t, format), .post = autoindex_formats},
    {0},
};

hy_module_t hy_http_autoindex_module = {
    .name = "http_autoindex",
    .directives = autoindex_directives,
    .create_loc_conf = autoindex_create_loc,
    .merge_loc_conf = autoindex_merge_loc,
    .postconfiguration = autoindex_postconfiguration,
};
