/* static.c — static files as nginx serves them (ngx_http_static/index/autoindex modules in one handler):
 * root/alias mapping, index files via internal redirect, directory redirects, autoindex, 304/412, ranges,
 * and an open-file cache so repeated hits on hot files cost no open(2)/fstat(2).
 * File-system calls block the worker; that is the documented trade-off (as nginx without aio). */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/stat.h>
#include "static.h"
#include "../http/phases.h"
#include "autoindex.h"
#include "../filters/range.h"
#include "../http/vars.h"
#include "../filters/gzip.h"
#include "../core/httpdate.h"
#include "../core/clock.h"
#include "../core/file.h"
#include "../core/log.h"
#include "../event/sock.h"
#include <arpa/inet.h>
#include <netinet/in.h>

/* ---------------- open-file cache (per worker; a worker is single-threaded) ---------------- */

typedef struct ofc_entry {
    struct ofc_entry *hnext;            /* hash chain */
    struct ofc_entry *lru_prev, *lru_next;
    char *path;                         /* owned */
    size_t path_len;
    uint32_t hash;
    hy_file_t *file;                    /* a reference, or NULL when the entry caches an error */
    int err;                            /* cached errno (open_file_cache_errors) */
    uint64_t valid_until_ms, last_use_ms;
    int64_t uses;
} ofc_entry_t;

#define OFC_BUCKETS 4096
static ofc_entry_t *ofc_table[OFC_BUCKETS];
static ofc_entry_t *lru_head, *lru_tail; /* most recent at head */
static size_t ofc_count;

static void lru_unlink(ofc_entry_t *e)
{
    if (e->lru_prev)
        e->lru_prev->lru_next = e->lru_next;
    else
        lru_head = e->lru_next;
    if (e->lru_next)
        e->lru_next->lru_prev = e->lru_prev;
    else
        lru_tail = e->lru_prev;
    e->lru_prev = e->lru_next = NULL;
}

static void lru_push(ofc_entry_t *e)
{
    e->lru_prev = NULL;
    e->lru_next = lru_head;
    if (lru_head)
        lru_head->lru_prev = e;
    lru_head = e;
    if (!lru_tail)
        lru_tail = e;
}

static void ofc_remove(ofc_entry_t *e)
{
    ofc_entry_t **pp = &ofc_table[e->hash & (OFC_BUCKETS - 1)];
    while (*pp != e)
        pp = &(*pp)->hnext;
    *pp = e->hnext;
    lru_unlink(e);
    if (e->file)
        hy_file_unref(e->file);
    free(e->path);
    free(e);
    ofc_count--;
}

static hy_file_t *file_open(const char *path, int *err)
{
    int fd = open(path, O_RDONLY | O_NONBLOCK | O_CLOEXEC);
    if (fd < 0) {
        *err = errno;
        return NULL;
    }
    struct stat st;
    if (fstat(fd, &st) != 0) {
        *err = errno;
        close(fd);
        return NULL;
    }
    hy_file_t *f = hy_calloc(sizeof(*f));
    f->fd = fd;
    f->refs = 1;
    f->size = st.st_size;
    f->mtime = st.st_mtime;
    f->dev = st.st_dev;
    f->ino = st.st_ino;
    f->is_dir = S_ISDIR(st.st_mode);
    if (!S_ISREG(st.st_mode) && !f->is_dir) {
        hy_file_unref(f);
        *err = ENOENT; /* nginx: "... is not a regular file" → 404 */
        return NULL;
    }
    return f;
}

/* Small files are served from memory: head and body leave in one writev instead of writev + sendfile (and the
 * cork/uncork around them). The cache keeps the bytes with the fd; they are re-read when the file changes. */
#define SMALL_FILE_MAX 32768

static void load_small(hy_file_t *f)
{
    if (f->is_dir || f->size <= 0 || f->size > SMALL_FILE_MAX || f->data)
        return;
    char *d = hy_alloc((size_t)f->size);
    if (pread(f->fd, d, (size_t)f->size, 0) != (ssize_t)f->size) {
        free(d);
        return;
    }
    f->data = d;
}

static void unref_cb(void *arg)
{
    hy_file_unref(arg);
}

/* Queue [off, off+len) of f: from memory when the content is small, else as a file segment (sendfile). */
static void push_body(hy_req_t *req, hy_file_t *f, int64_t off, int64_t len)
{
    if (f->data) {
        hy_outq_push_mem(&req->body, f->data + off, (size_t)len, unref_cb, hy_file_ref(f));
        return;
    }
    if (f->size <= SMALL_FILE_MAX) {
        char *d = hy_palloc(req->pool, (size_t)len);
        if (pread(f->fd, d, (size_t)len, off) == (ssize_t)len) {
            hy_outq_push_mem(&req->body, d, (size_t)len, NULL, NULL);
            return;
        }
    }
    hy_outq_push_file(&req->body, f, off, len);
}

/* Returns a new reference (caller unrefs), or NULL with *err. */
static hy_file_t *ofc_open(const hy_http_loc_conf_t *lc, const char *path, size_t len, int *err)
{
    if (lc->open_file_cache_max <= 0)
        return file_open(path, err);
    uint64_t now = hy_clock_now_ms();
    uint32_t h = (uint32_t)hy_hash(path, len, false);
    ofc_entry_t *e = ofc_table[h & (OFC_BUCKETS - 1)];
    while (e && !(e->hash == h && e->path_len == len && memcmp(e->path, path, len) == 0))
        e = e->hnext;
    if (e && now - e->last_use_ms > (uint64_t)lc->open_file_cache_inactive_ms) {
        ofc_remove(e);
        e = NULL;
    }
    if (e) {
        e->uses++;
        e->last_use_ms = now;
        lru_unlink(e);
        lru_push(e);
        if (now < e->valid_until_ms) {
            if (e->file)
                return hy_file_ref(e->file);
            if (e->err) {
                *err = e->err;
                return NULL;
            }
        }
        /* revalidate: same file (inode, size, mtime) keeps the open fd */
        struct stat st;
        if (e->file && stat(path, &st) == 0 && st.st_ino == e->file->ino && st.st_dev == e->file->dev &&
            st.st_size == e->file->size && st.st_mtime == e->file->mtime) {
            e->valid_until_ms = now + (uint64_t)lc->open_file_cache_valid_ms;
            return hy_file_ref(e->file);
        }
        if (e->file)
            hy_file_unref(e->file);
        e->file = file_open(path, &e->err);
        if (e->file)
            load_small(e->file);
        if (e->file == NULL && !lc->open_file_cache_errors) {
            *err = e->err;
            ofc_remove(e);
            return NULL;
        }
        e->valid_until_ms = now + (uint64_t)lc->open_file_cache_valid_ms;
        if (e->file == NULL) {
            *err = e->err;
            return NULL;
        }
        e->err = 0;
        return hy_file_ref(e->file);
    }
    hy_file_t *f = file_open(path, err);
    if (f == NULL && !lc->open_file_cache_errors)
        return NULL;
    if (f)
        load_small(f);
    while (ofc_count >= (size_t)lc->open_file_cache_max && lru_tail)
        ofc_remove(lru_tail);
    e = hy_calloc(sizeof(*e));
    e->path = hy_strndup(path, len);
    e->path_len = len;
    e->hash = h;
    e->file = f ? hy_file_ref(f) : NULL;
    e->err = f ? 0 : *err;
    e->uses = 1;
    e->last_use_ms = now;
    e->valid_until_ms = now + (uint64_t)lc->open_file_cache_valid_ms;
    e->hnext = ofc_table[h & (OFC_BUCKETS - 1)];
    ofc_table[h & (OFC_BUCKETS - 1)] = e;
    lru_push(e);
    ofc_count++;
    return f;
}

/* ---------------- mapping and responses ---------------- */

static void log_open_error(hy_req_t *req, const char *call, const char *path, int err, int level)
{
    char ctx[512];
    hy_req_log_ctx(req, ctx, sizeof(ctx));
    hy_log_conn(level, req->conn->id, "%s \"%s\" failed (%d: %s)%s", call, path, err, strerror(err), ctx);
}

static int status_for_errno(int err)
{
    switch (err) {
    case ENOENT: case ENOTDIR: case ENAMETOOLONG: case ELOOP:
        return 404;
    case EACCES: case EPERM:
        return 403;
    default:
        return 500;
    }
}

static void redirect_dir(hy_req_t *req)
{
    /* nginx: 301 to the URI with a slash; the core makes it absolute (absolute_redirect, port_in_redirect) */
    size_t cap = req->uri.len + req->args.len + 3;
    char *loc = hy_palloc(req->pool, cap);
    int n = snprintf(loc, cap, "%.*s/", (int)req->uri.len, req->uri.ptr);
    if (req->args.len)
        n += snprintf(loc + n, cap - (size_t)n, "?%.*s", (int)req->args.len, req->args.ptr);
    req->location = (hy_str_t){loc, (size_t)n};
    hy_req_error(req, 301);
}

static bool etag_list_match(hy_str_t list, hy_str_t etag, bool weak)
{
    /* If-None-Match uses weak comparison, If-Match strong (RFC 9110 §13.1.1-2) */
    const char *p = list.ptr, *end = list.ptr + list.len;
    while (p < end) {
        while (p < end && (*p == ' ' || *p == '\t' || *p == ','))
            p++;
        if (p >= end)
            break;
        if (*p == '*')
            return true;
        bool is_weak = false;
        if (end - p >= 2 && p[0] == 'W' && p[1] == '/') {
            is_weak = true;
            p += 2;
        }
        const char *s = p;
        if (p < end && *p == '"') {
            p++;
            while (p < end && *p != '"')
                p++;
            if (p < end)
                p++;
        } else {
            while (p < end && *p != ',' && *p != ' ')
                p++;
        }
        size_t n = (size_t)(p - s);
        hy_str_t e = etag;
        if (e.len > 2 && e.ptr[0] == 'W' && e.ptr[1] == '/') {
            if (!weak)
                continue;
            e.ptr += 2, e.len -= 2;
        }
        if ((weak || !is_weak) && n == e.len && memcmp(s, e.ptr, n) == 0)
            return true;
    }
    return false;
}

/* nginx's not_modified filter. Returns 0 to go on, or a status (304/412) to answer. */
static int check_conditions(hy_req_t *req, const hy_http_loc_conf_t *lc)
{
    if (req->h_if_unmodified_since && req->last_modified >= 0) {
        int64_t t = hy_httpdate_parse(req->h_if_unmodified_since->ptr, req->h_if_unmodified_since->len);
        if (t >= 0 && req->last_modified > t)
            return 412;
    }
    if (req->h_if_match && !etag_list_match(*req->h_if_match, req->etag, false))
        return 412;
    if (req->h_if_modified_since || req->h_if_none_match) {
        if (req->h_if_modified_since && !req->h_if_none_match) {
            if (lc->if_modified_since == HY_IMS_OFF || req->last_modified < 0)
                return 0;
            int64_t t = hy_httpdate_parse(req->h_if_modified_since->ptr, req->h_if_modified_since->len);
            if (t < 0)
                return 0;
            if (lc->if_modified_since == HY_IMS_EXACT ? t != req->last_modified : t < req->last_modified)
                return 0;
        }
        if (req->h_if_none_match && (req->etag.len == 0 || !etag_list_match(*req->h_if_none_match, req->etag, true)))
            return 0;
        return 304;
    }
    return 0;
}

static uint64_t boundary_seq;

static void send_ranges(hy_req_t *req, hy_file_t *f, const hy_http_loc_conf_t *lc)
{
    int max = lc->max_ranges >= 0 ? (int)HY_MIN(lc->max_ranges, 1024) : 1024;
    if (max == 0)
        goto full;
    hy_range_t *rs = hy_palloc(req->pool, sizeof(hy_range_t) * (size_t)max);
    if (req->h_if_range && !hy_range_if_range_ok(req->h_if_range->ptr, req->h_if_range->len, req->etag,
                                                 req->last_modified))
        goto full;
    int n = hy_range_parse(req->h_range->ptr, req->h_range->len, f->size, rs, max);
    if (n == HY_RANGE_NOT_SATISFIABLE) {
        char *cr = hy_palloc(req->pool, 48);
        int l = snprintf(cr, 48, "bytes */%lld", (long long)f->size);
        hy_req_add_header(req, HY_STR("Content-Range"), (hy_str_t){cr, (size_t)l});
        hy_file_unref(f);
        hy_req_error(req, 416);
        return;
    }
    if (n <= 0)
        goto full;
    req->status = 206;
    if (n == 1) {
        char *cr = hy_palloc(req->pool, 64);
        size_t l = hy_range_content_range(cr, 64, &rs[0], f->size);
        hy_req_add_header(req, HY_STR("Content-Range"), (hy_str_t){cr, l});
        req->content_length_n = rs[0].end - rs[0].start + 1;
        if (!req->header_only)
            push_body(req, f, rs[0].start, req->content_length_n);
        hy_file_unref(f);
        hy_req_send(req, true);
        return;
    }
    char *boundary = hy_palloc(req->pool, 24);
    if (boundary_seq == 0)
        boundary_seq = (uint64_t)hy_clock_time_ms() * 1000;
    snprintf(boundary, 24, "%020llu", (unsigned long long)++boundary_seq);
    hy_str_t type = req->content_type;
    req->content_length_n = hy_range_multipart_length(rs, n, boundary, type, f->size);
    char *ct = hy_palloc(req->pool, 64);
    int l = snprintf(ct, 64, "multipart/byteranges; boundary=%s", boundary);
    req->content_type = (hy_str_t){ct, (size_t)l};
    if (!req->header_only) {
        size_t part_cap = 128 + type.len;
        for (int i = 0; i < n; i++) {
            char *ph = hy_palloc(req->pool, part_cap);
            size_t pl = hy_range_part_header(ph, part_cap, boundary, type, &rs[i], f->size);
            hy_outq_push_mem(&req->body, ph, pl, NULL, NULL);
            hy_outq_push_file(&req->body, f, rs[i].start, rs[i].end - rs[i].start + 1);
        }
        char *end = hy_palloc(req->pool, 64);
        size_t el = hy_range_multipart_end(end, 64, boundary);
        hy_outq_push_mem(&req->body, end, el, NULL, NULL);
    }
    hy_file_unref(f);
    hy_req_send(req, true);
    return;
full:
    req->content_length_n = f->size;
    if (!req->header_only)
        push_body(req, f, 0, f->size);
    hy_req_send(req, true); /* f stays referenced while the filters run: the gzip filter reads req->file */
    hy_file_unref(f);
}

static void serve_file(hy_req_t *req, hy_file_t *f, const hy_http_loc_conf_t *lc)
{
    req->status = 200;
    req->file = f;
    req->last_modified = f->mtime;
    req->content_type = hy_http_mime_type(lc, req->uri.ptr, req->uri.len);
    if (lc->etag) {
        char *et = hy_palloc(req->pool, 40); /* nginx's format: "<mtime hex>-<size hex>" */
        size_t l = 0;
        et[l++] = '"';
        l += hy_fmt_hex(et + l, (uint64_t)f->mtime);
        et[l++] = '-';
        l += hy_fmt_hex(et + l, (uint64_t)f->size);
        et[l++] = '"';
        req->etag = (hy_str_t){et, l};
    }
    int cond = check_conditions(req, lc);
    if (cond) {
        hy_file_unref(f);
        if (cond == 304) {
            req->status = 304;
            req->header_only = true;
            req->content_length_n = -1;
            hy_req_send(req, true);
        } else {
            hy_req_error(req, cond);
        }
        return;
    }
    req->accept_ranges = true;
    if (req->method_id == HY_M_HEAD)
        req->header_only = true;
    if (req->h_range && f->size >= 0 && !hy_gzip_no_ranges(req, f->size)) { /* gzip: no ranges (nginx) */
        send_ranges(req, f, lc);
        return;
    }
    req->content_length_n = f->size;
    if (!req->header_only && f->size > 0)
        push_body(req, f, 0, f->size);
    hy_req_send(req, true); /* f stays referenced while the filters run: the gzip filter reads req->file */
    hy_file_unref(f);
}

static void autoindex(hy_req_t *req, const hy_http_loc_conf_t *lc, const hy_static_loc_conf_t *sc)
{
    size_t plen;
    char *dir = hy_http_map_uri_to_path(req, lc, req->uri, &plen);
    hy_autoindex_opts_t o = {.exact_size = sc->autoindex_exact_size != 0,
                             .localtime = sc->autoindex_localtime == 1,
                             .format = sc->autoindex_format};
    char *out = NULL;
    size_t out_len = 0;
    int r = hy_autoindex_render(dir, req->uri, &o, &out, &out_len);
    if (r < 0) {
        int err = -r;
        log_open_error(req, "opendir()", dir, err, err == ENOENT ? HY_LOG_ERR : HY_LOG_CRIT);
        hy_req_error(req, status_for_errno(err));
        return;
    }
    req->status = 200;
    req->content_type = hy_autoindex_content_type(&o);
    req->content_length_n = (int64_t)out_len;
    if (req->method_id == HY_M_HEAD)
        req->header_only = true;
    hy_outq_push_mem(&req->body, out, out_len, free, out);
    hy_req_send(req, true);
}

#define MAX_INTERNAL_REDIRECTS 10

static void serve_static(hy_req_t *req)
{
    for (int hops = 0; hops <= MAX_INTERNAL_REDIRECTS; hops++) {
        const hy_http_loc_conf_t *lc = req->loc;
        const hy_static_loc_conf_t *sc = lc->loc_conf[hy_static_module.index];
        if (req->method_id != HY_M_GET && req->method_id != HY_M_HEAD && req->method_id != HY_M_POST) {
            hy_req_error(req, 405);
            return;
        }
        if (req->uri.len > 0 && req->uri.ptr[req->uri.len - 1] == '/') {
            /* index module: the first index file that exists → internal redirect */
            size_t dlen;
            char *dir = hy_http_map_uri_to_path(req, lc, req->uri, &dlen);
            hy_str_t *names = sc->index->elts;
            bool dir_checked = false;
            for (size_t i = 0; i < sc->index->nelts; i++) {
                hy_str_t nm = names[i];
                if (nm.len && nm.ptr[0] == '/') { /* absolute index: redirect without checking */
                    req->uri = nm;
                    goto redirect;
                }
                char *path = hy_palloc(req->pool, dlen + nm.len + 1);
                memcpy(path, dir, dlen);
                memcpy(path + dlen, nm.ptr, nm.len);
                path[dlen + nm.len] = '\0';
                int err = 0;
                hy_file_t *f = ofc_open(lc, path, dlen + nm.len, &err);
                if (f) {
                    hy_file_unref(f);
                    char *u = hy_palloc(req->pool, req->uri.len + nm.len + 1);
                    memcpy(u, req->uri.ptr, req->uri.len);
                    memcpy(u + req->uri.len, nm.ptr, nm.len);
                    req->uri = (hy_str_t){u, req->uri.len + nm.len};
                    goto redirect;
                }
                if (err != ENOENT && err != ENOTDIR) {
                    log_open_error(req, "open()", path, err, status_for_errno(err) == 500 ? HY_LOG_CRIT : HY_LOG_ERR);
                    hy_req_error(req, status_for_errno(err));
                    return;
                }
                if (!dir_checked) {
                    dir_checked = true;
                    struct stat st;
                    if (stat(dir, &st) != 0 || !S_ISDIR(st.st_mode)) {
                        char ctx[512];
                        hy_req_log_ctx(req, ctx, sizeof(ctx));
                        hy_log_conn(HY_LOG_ERR, req->conn->id, "\"%s\" is not found (2: No such file or directory)%s",
                                    dir, ctx);
                        hy_req_error(req, 404);
                        return;
                    }
                }
            }
            if (sc->autoindex == 1) {
                autoindex(req, lc, sc);
                return;
            }
            char ctx[512];
            hy_req_log_ctx(req, ctx, sizeof(ctx));
            hy_log_conn(HY_LOG_ERR, req->conn->id, "directory index of \"%s\" is forbidden%s", dir, ctx);
            hy_req_error(req, 403);
            return;
        }
        size_t plen;
        char *path = hy_http_map_uri_to_path(req, lc, req->uri, &plen);
        int err = 0;
        hy_file_t *f = hy_gzip_static_open(req, path, plen, ofc_open); /* gzip_static & co: path.gz, ... */
        if (f == NULL)
            f = ofc_open(lc, path, plen, &err);
        if (f == NULL) {
            int st = status_for_errno(err);
            if (st != 404 || lc->log_not_found)
                log_open_error(req, "open()", path, err, st == 500 ? HY_LOG_CRIT : HY_LOG_ERR);
            hy_req_error(req, st);
            return;
        }
        if (f->is_dir) {
            hy_file_unref(f);
            redirect_dir(req);
            return;
        }
        if (req->method_id == HY_M_POST) {
            hy_file_unref(f);
            hy_req_error(req, 405);
            return;
        }
        serve_file(req, f, lc);
        return;
    redirect: /* nginx's index module: a full internal redirect (rewrites, try_files, error_page apply) */
        hy_req_internal_redirect(req, req->uri, req->args);
        return;
    }
    char ctx[512];
    hy_req_log_ctx(req, ctx, sizeof(ctx));
    hy_log_conn(HY_LOG_ERR, req->conn->id, "rewrite or internal redirection cycle while internally redirecting to "
                "\"%.*s\"%s", (int)req->uri.len, req->uri.ptr, ctx);
    hy_req_error(req, 500);
}

/* CONTENT: the last handler of the chain; it answers every request it gets */
static int static_content_phase(hy_req_t *req)
{
    serve_static(req);
    return HY_DONE;
}

static int postconfiguration(hy_conf_t *cf)
{
    return hy_http_phase_add(cf, HY_PHASE_CONTENT, static_content_phase);
}

/* ---------------- the module: index and autoindex directives ---------------- */

static void *create_loc(hy_conf_t *cf)
{
    hy_static_loc_conf_t *c = hy_pcalloc(cf->pool, sizeof(*c));
    c->autoindex = c->autoindex_exact_size = c->autoindex_localtime = c->autoindex_format = HY_UNSET;
    return c;
}

static int merge_loc(hy_conf_t *cf, void *parent, void *child)
{
    hy_static_loc_conf_t *p = parent, *c = child;
    if (c->index == NULL) {
        if (p->index) {
            c->index = p->index;
        } else {
            c->index = hy_array_create(cf->pool, 1, sizeof(hy_str_t));
            *(hy_str_t *)hy_array_push(c->index) = HY_STR("index.html");
        }
    }
    hy_merge_value(c->autoindex, p->autoindex, 0);
    hy_merge_value(c->autoindex_exact_size, p->autoindex_exact_size, 1);
    hy_merge_value(c->autoindex_localtime, p->autoindex_localtime, 0);
    hy_merge_value(c->autoindex_format, p->autoindex_format, HY_AUTOINDEX_HTML);
    return 0;
}

static int set_index(hy_conf_t *cf, const hy_directive_t *d, void *conf)
{
    hy_static_loc_conf_t *c = conf;
    size_t n;
    hy_str_t *a = hy_conf_args(cf, &n);
    if (c->index == NULL)
        c->index = hy_array_create(cf->pool, n, sizeof(hy_str_t));
    for (size_t i = 1; i < n; i++) {
        if (a[i].len == 0)
            return hy_conf_error(cf, "index \"%s\" in \"index\" directive is invalid", a[1].ptr);
        *(hy_str_t *)hy_array_push(c->index) = hy_str_dup(cf->pool, a[i]);
    }
    return 0;
}

static const hy_enum_t autoindex_formats[] = {
    {"html", HY_AUTOINDEX_HTML}, {"xml", HY_AUTOINDEX_XML}, {"json", HY_AUTOINDEX_JSON},
    {"jsonp", HY_AUTOINDEX_JSONP}, {NULL, 0},
};

static const hy_directive_t static_directives[] = {
    {.name = "index", .ctx = HY_CTX_HTTP_ANY, .args = HY_ARGS_1MORE, .set = set_index, .conf = HY_CONF_LOC},
    {.name = "autoindex", .ctx = HY_CTX_HTTP_ANY, .args = HY_ARGS_FLAG, .set = hy_slot_flag, .conf = HY_CONF_LOC,
     .offset = offsetof(hy_static_loc_conf_t, autoindex)},
    {.name = "autoindex_exact_size", .ctx = HY_CTX_HTTP_ANY, .args = HY_ARGS_FLAG, .set = hy_slot_flag,
     .conf = HY_CONF_LOC, .offset = offsetof(hy_static_loc_conf_t, autoindex_exact_size)},
    {.name = "autoindex_localtime", .ctx = HY_CTX_HTTP_ANY, .args = HY_ARGS_FLAG, .set = hy_slot_flag,
     .conf = HY_CONF_LOC, .offset = offsetof(hy_static_loc_conf_t, autoindex_localtime)},
    {.name = "autoindex_format", .ctx = HY_CTX_HTTP_ANY, .args = HY_ARGS_1, .set = hy_slot_enum,
     .conf = HY_CONF_LOC, .offset = offsetof(hy_static_loc_conf_t, autoindex_format), .post = autoindex_formats},
    {0},
};

hy_module_t hy_static_module = {
    .name = "static",
    .directives = static_directives,
    .create_loc_conf = create_loc,
    .merge_loc_conf = merge_loc,
    .postconfiguration = postconfiguration,
};
