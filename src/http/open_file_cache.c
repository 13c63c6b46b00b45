/* open_file_cache.c — nginx's open_file_cache: a per-worker table of open files (a worker is single-threaded)
 * keyed by path, with LRU eviction, `valid` revalidation by inode/size/mtime and cached errors, so repeated
 * hits on hot files cost no open(2)/fstat(2); and the 200 response for an open file that static, index and
 * gzip_static share. File-system calls block the worker: the documented trade-off (as nginx without aio). */
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/stat.h>
#include "open_file_cache.h"
#include "../core/clock.h"
#include "../core/log.h"
#include "../core/nofollow.h"
#include "vars.h"

/* ---------------- open-file cache (per worker; a worker is single-threaded) ---------------- */

typedef struct ofc_entry {
    struct ofc_entry *hnext;            /* hash chain */
    struct ofc_entry *lru_prev, *lru_next;
    char *path;                         /* owned */
    size_t path_len;
    uint32_t hash;
    hy_file_t *file;                    /* a reference, or NULL when the entry caches an error */
    int symlinks;                       /* the disable_symlinks it was opened with (HY_SYMLINKS_*) ... */
    size_t symlinks_from;               /* ... and its from= prefix length */
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

/* ---------------- disable_symlinks ---------------- */

int hy_http_symlinks(hy_req_t *req, const hy_http_loc_conf_t *lc, const char *path, size_t len, size_t *from)
{
    *from = 0;
    if (lc->disable_symlinks == HY_SYMLINKS_OFF || lc->disable_symlinks == HY_UNSET)
        return HY_SYMLINKS_OFF;
    if (lc->disable_symlinks_from == NULL || req == NULL)
        return lc->disable_symlinks;
    /* as nginx: a from= that is not a directory prefix of the path is ignored; the whole path turns checks off */
    hy_str_t f;
    if (hy_vars_eval(req, lc->disable_symlinks_from, &f) != 0 || f.len == 0 || f.len > len ||
        memcmp(f.ptr, path, f.len) != 0)
        return lc->disable_symlinks;
    if (f.len == len)
        return HY_SYMLINKS_OFF;
    if (path[f.len] == '/')
        *from = f.len;
    else if (path[f.len - 1] == '/' && f.len > 1)
        *from = f.len - 1;
    return lc->disable_symlinks;
}

int hy_http_open(hy_req_t *req, const hy_http_loc_conf_t *lc, const char *path, size_t len, int flags)
{
    size_t from;
    int mode = hy_http_symlinks(req, lc, path, len, &from);
    return hy_open_nofollow(path, len, mode, from, flags);
}

/* stat(2) under a disable_symlinks mode: a plain stat when off, else the checked open (O_PATH) and fstat */
static int stat_mode(const char *path, size_t len, int mode, size_t from, struct stat *st)
{
    if (mode == HY_SYMLINKS_OFF)
        return stat(path, st) == 0 ? 0 : errno;
    int fd = hy_open_nofollow(path, len, mode, from, O_PATH);
    if (fd < 0)
        return -fd;
    int err = fstat(fd, st) == 0 ? 0 : errno;
    close(fd);
    return err;
}

int hy_http_stat(hy_req_t *req, const hy_http_loc_conf_t *lc, const char *path, size_t len, struct stat *st)
{
    size_t from;
    int mode = hy_http_symlinks(req, lc, path, len, &from);
    return stat_mode(path, len, mode, from, st);
}

static hy_file_t *file_open(const char *path, size_t len, int mode, size_t from, int *err)
{
    int fd = hy_open_nofollow(path, len, mode, from, O_RDONLY | O_NONBLOCK);
    if (fd < 0) {
        *err = -fd;
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
    f->mtime_nsec = st.st_mtim.tv_nsec;
    f->ctime_ns = (int64_t)st.st_ctim.tv_sec * 1000000000 + st.st_ctim.tv_nsec;
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
static bool same_file(const hy_file_t *f, const struct stat *st)
{
    return st->st_ino == f->ino && st->st_dev == f->dev && st->st_size == f->size && st->st_mtime == f->mtime &&
           st->st_mtim.tv_nsec == f->mtime_nsec &&
           (int64_t)st->st_ctim.tv_sec * 1000000000 + st->st_ctim.tv_nsec == f->ctime_ns;
}

hy_file_t *hy_ofc_open(hy_req_t *req, const hy_http_loc_conf_t *lc, const char *path, size_t len, int *err)
{
    size_t from;
    const int mode = hy_http_symlinks(req, lc, path, len, &from);
    if (lc->open_file_cache_max <= 0)
        return file_open(path, len, mode, from, err);
    /* the implicit cache (no open_file_cache configured): checked by stat(2) on every use, errors not kept,
     * the fd kept from the first use — what a request sees is what nginx without a cache shows */
    const bool implicit = lc->open_file_cache_implicit;
    const int64_t valid_ms = implicit ? 0 : lc->open_file_cache_valid_ms;
    const int64_t min_uses = implicit ? 1 : lc->open_file_cache_min_uses;
    const int cache_errors = implicit ? 0 : lc->open_file_cache_errors;
    uint64_t now = hy_clock_now_ms();
    /* as nginx: each use also closes up to two entries unused for longer than `inactive` (oldest first) */
    for (int i = 0; i < 2 && lru_tail && now - lru_tail->last_use_ms > (uint64_t)lc->open_file_cache_inactive_ms; i++)
        ofc_remove(lru_tail);
    uint32_t h = (uint32_t)hy_hash_bytes(path, len);
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
        const bool same_mode = e->symlinks == mode && e->symlinks_from == from;
        e->symlinks = mode, e->symlinks_from = from;
        if (now < e->valid_until_ms && same_mode) {
            if (e->file)
                return hy_file_ref(e->file);
            if (e->err) {
                *err = e->err;
                return NULL;
            }
        }
        /* revalidate: the same file, unchanged (inode, size, mtime and ctime to the nanosecond), keeps the open
         * fd and the bytes of a small one */
        struct stat st;
        if (e->file && stat_mode(path, len, mode, from, &st) == 0 && same_file(e->file, &st)) {
            e->valid_until_ms = now + (uint64_t)valid_ms;
            return hy_file_ref(e->file);
        }
        if (e->file)
            hy_file_unref(e->file);
        e->file = file_open(path, len, mode, from, &e->err);
        if (e->file)
            load_small(e->file);
        if (e->file == NULL && !cache_errors) {
            *err = e->err;
            ofc_remove(e);
            return NULL;
        }
        e->valid_until_ms = now + (uint64_t)valid_ms;
        if (e->file == NULL) {
            *err = e->err;
            return NULL;
        }
        e->err = 0;
        if (e->uses < min_uses) { /* nginx: the fd stays open from min_uses accesses on */
            hy_file_t *once = e->file;
            e->file = NULL;
            return once;
        }
        return hy_file_ref(e->file);
    }
    hy_file_t *f = file_open(path, len, mode, from, err);
    if (f == NULL && !cache_errors)
        return NULL;
    if (f)
        load_small(f);
    while (ofc_count >= (size_t)lc->open_file_cache_max && lru_tail)
        ofc_remove(lru_tail);
    e = hy_calloc(sizeof(*e));
    e->path = hy_strndup(path, len);
    e->path_len = len;
    e->hash = h;
    e->symlinks = mode, e->symlinks_from = from;
    e->file = f && min_uses <= 1 ? hy_file_ref(f) : NULL; /* else counted, not kept */
    e->err = f ? 0 : *err;
    e->uses = 1;
    e->last_use_ms = now;
    e->valid_until_ms = now + (uint64_t)valid_ms;
    e->hnext = ofc_table[h & (OFC_BUCKETS - 1)];
    ofc_table[h & (OFC_BUCKETS - 1)] = e;
    lru_push(e);
    ofc_count++;
    return f;
}

/* ---------------- shared by the file-serving handlers ---------------- */

int hy_http_errno_status(int err)
{
    switch (err) {
    case ENOENT: case ENOTDIR: case ENAMETOOLONG:
        return 404;
    case EACCES: case EPERM: case ELOOP: case EMLINK:
        return 403;
    default:
        return 500;
    }
}

void hy_http_log_open_error(hy_req_t *req, const char *call, const char *path, int err, int level)
{
    hy_req_log(req, level, "%s \"%s\" failed (%d: %s)", call, path, err, strerror(err));
}

void hy_http_send_file(hy_req_t *req, hy_file_t *f)
{
    const hy_http_loc_conf_t *lc = req->loc;
    req->status = 200;
    req->file = f;
    req->last_modified = f->mtime;
    if (req->content_type.len == 0) /* nginx keeps one already set (X-Accel-Redirect carries it over) */
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
    if (req->method_id == HY_M_HEAD)
        req->header_only = true;
    req->content_length_n = f->size;
    if (!req->header_only && f->size > 0)
        push_body(req, f, 0, f->size);
    hy_req_send(req, true); /* f stays referenced while the filters run: they may read req->file */
    hy_file_unref(f);       /* (req may be gone: the protocol can finish the exchange inside the send) */
}
