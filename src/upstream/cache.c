/* cache.c — the response cache's run time (see cache.h): lookup, serving a stored response through the output
 * filters (sendfile from the cache file), storing a response as it streams to the client, revalidation, stale
 * responses, the lock, and $upstream_cache_status. */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/stat.h>
#include <openssl/evp.h>
#include "cache.h"
#include "../conf/zone.h"
#include "../core/clock.h"
#include "../core/file.h"
#include "../core/httpdate.h"
#include "../core/log.h"
#include "../http/vars.h"
#include "../http/subrequest.h"

#define MAGIC "HYCACHE1"
#define LOCK_POLL_MS 500

typedef struct file_hdr {
    char magic[8];
    int64_t valid_until; /* unix seconds; rewritten in place by a revalidation */
    int64_t stored;      /* when it was stored */
    int64_t last_modified;
    int64_t body_len;    /* -1 while being written */
    int32_t status;
    uint32_t key_len, vary_len, etag_len, head_len;
    uint32_t flags;      /* FLAG_ERROR: the status alone (an intercepted error) */
    int64_t swr_until;   /* Cache-Control stale-while-revalidate: may be served stale while updated until then */
    int64_t sie_until;   /* Cache-Control stale-if-error: may be served stale on an error until then */
} file_hdr_t;

#define FLAG_ERROR 1u

enum { ST_NONE = 0, ST_MISS, ST_BYPASS, ST_EXPIRED, ST_STALE, ST_UPDATING, ST_REVALIDATED, ST_HIT };
static const char *const status_names[] = {"", "MISS", "BYPASS", "EXPIRED", "STALE", "UPDATING", "REVALIDATED", "HIT"};

typedef struct cache_req {
    hy_ureq_t *u;
    const hy_ucache_conf_t *conf;
    const hy_ucache_path_t *path;
    bool active;          /* the cache is used for this request (else only *_force_ranges) */
    int status;           /* ST_* */
    hy_str_t key;
    char md5[33];
    char *file;           /* the entry's path (the main one, or a variant's) */
    char *main_file;      /* md5(key) */
    bool main_exists;
    hy_str_t main_vary;   /* the main entry's Vary names and values when they differ from the request's */
    hy_str_t req_vary;    /* the request's values for those names */
    bool no_store;        /* min_uses not reached, lock timed out */
    /* a stored entry that expired (kept for revalidation and use_stale) */
    int stale_fd;
    file_hdr_t hdr;
    char *meta;           /* key, vary, etag, head (request pool) */
    bool revalidating;
    bool updater;         /* the background update's subrequest (nginx's cache_updater) */
    /* storing */
    int fd;
    char *tmp;
    int64_t written;
    /* lock */
    char *lockfile;
    bool lock_held;
    hy_timer_t lock_timer;
    uint64_t lock_start;
    void (*go)(hy_ureq_t *u);
} cache_req_t;

static cache_req_t *cr_of(hy_ureq_t *u)
{
    return u ? u->cache : NULL;
}

/* ---------------------------------------------------------------- helpers */

static bool predicates_true(hy_req_t *req, const hy_array_t *a)
{
    if (a == NULL)
        return false;
    const hy_complex_t *cv = a->elts;
    for (size_t i = 0; i < a->nelts; i++) {
        hy_str_t v;
        hy_vars_eval(req, &cv[i], &v);
        if (v.len && !(v.len == 1 && v.ptr[0] == '0'))
            return true;
    }
    return false;
}

static bool read_at(int fd, int64_t off, void *dst, size_t n)
{
    char *d = dst;
    while (n > 0) {
        ssize_t r = pread(fd, d, n, off);
        if (r < 0 && errno == EINTR)
            continue;
        if (r <= 0)
            return false;
        d += r, off += r, n -= (size_t)r;
    }
    return true;
}

static int mkdirs_for(char *file)
{
    for (char *p = file + 1; *p; p++) {
        if (*p != '/')
            continue;
        *p = '\0';
        int rc = mkdir(file, 0700);
        *p = '/';
        if (rc != 0 && errno != EEXIST)
            return -1;
    }
    return 0;
}

/* "<dir>/<levels>/<md5>" (levels=1:2: ".../c/29/b7f5...029c") */
static char *entry_path(hy_pool_t *pool, const hy_ucache_path_t *cp, const char *md5)
{
    char *p = hy_palloc(pool, cp->dir.len + 64), *o = p;
    memcpy(o, cp->dir.ptr, cp->dir.len);
    o += cp->dir.len;
    int end = 32;
    for (int i = 0; i < 3 && cp->levels[i]; i++) {
        *o++ = '/';
        memcpy(o, md5 + end - cp->levels[i], (size_t)cp->levels[i]);
        o += cp->levels[i];
        end -= cp->levels[i];
    }
    *o++ = '/';
    memcpy(o, md5, 32);
    o[32] = '\0';
    return p;
}

/* A variant's entry (the response for other values of the Vary fields than the main entry's): md5(key, vv). */
static char *variant_path(cache_req_t *cr, hy_str_t vv)
{
    hy_req_t *req = cr->u->req;
    char *buf = hy_palloc(req->pool, cr->key.len + vv.len + 1);
    memcpy(buf, cr->key.ptr, cr->key.len);
    buf[cr->key.len] = '\n';
    memcpy(buf + cr->key.len + 1, vv.ptr, vv.len);
    unsigned char md[EVP_MAX_MD_SIZE];
    unsigned mdlen = 0;
    char hex[33];
    EVP_Digest(buf, cr->key.len + 1 + vv.len, md, &mdlen, EVP_md5(), NULL);
    hy_hex_dump(hex, md, 16);
    hex[32] = '\0';
    return entry_path(req->pool, cr->path, hex);
}

/* ---------------------------------------------------------------- min_uses (per worker) */

static struct {
    char md5[32];
    uint32_t uses;
} uses_tab[1024];

static uint32_t count_use(const char *md5)
{
    unsigned ix = (unsigned)strtoul((char[4]){md5[0], md5[1], md5[2], 0}, NULL, 16) & 1023;
    if (memcmp(uses_tab[ix].md5, md5, 32) != 0) {
        memcpy(uses_tab[ix].md5, md5, 32);
        uses_tab[ix].uses = 0;
    }
    return ++uses_tab[ix].uses;
}

/* ---------------------------------------------------------------- lock */

static void lock_release(cache_req_t *cr)
{
    if (cr->lock_held) {
        unlink(cr->lockfile);
        cr->lock_held = false;
    }
}

/* 1: taken, 0: another request holds it */
static int lock_take(cache_req_t *cr)
{
    if (cr->lockfile == NULL) {
        size_t n = strlen(cr->file);
        cr->lockfile = hy_palloc(cr->u->req->pool, n + 6);
        memcpy(cr->lockfile, cr->file, n);
        memcpy(cr->lockfile + n, ".lock", 6);
    }
    for (int attempt = 0; attempt < 2; attempt++) {
        int fd = open(cr->lockfile, O_CREAT | O_EXCL | O_WRONLY | O_CLOEXEC, 0600);
        if (fd < 0 && errno == ENOENT && mkdirs_for(cr->lockfile) == 0)
            fd = open(cr->lockfile, O_CREAT | O_EXCL | O_WRONLY | O_CLOEXEC, 0600);
        if (fd >= 0) {
            close(fd);
            cr->lock_held = true;
            return 1;
        }
        if (errno != EEXIST)
            return 1; /* no lock possible: go on without one */
        struct stat st;
        if (stat(cr->lockfile, &st) != 0)
            continue; /* released meanwhile */
        /* *_cache_lock_age: the request that holds it is taking too long: one more may go */
        if (hy_clock_time_ms() - ((int64_t)st.st_mtim.tv_sec * 1000 + st.st_mtim.tv_nsec / 1000000) >=
            cr->conf->lock_age) {
            utimensat(AT_FDCWD, cr->lockfile, NULL, 0);
            return 1;
        }
        return 0;
    }
    return 0;
}

/* ---------------------------------------------------------------- serving a stored response */

static void file_done(hy_file_t *f)
{
    close(f->fd);
    free(f);
}

/* Ranges of a proxied response (nginx): served when the upstream said "Accept-Ranges" and the response comes
 * from the cache or is being stored, or always with *_force_ranges; the upstream's field gives way to the range
 * filter's own. */
static void ranges(cache_req_t *cr, hy_ureq_t *u, hy_req_t *req)
{
    if (cr->conf->force_ranges == 1 || hy_upstream_header(u, HY_STR("Accept-Ranges")) != NULL) {
        req->accept_ranges = true;
        hy_req_del_header(req, "Accept-Ranges");
    }
}

/* The stored response's status and fields into u, as if the upstream had just sent them. */
static void load_head(cache_req_t *cr, const file_hdr_t *hdr, char *meta)
{
    hy_ureq_t *u = cr->u;
    char *head = meta + hdr->key_len + hdr->vary_len + hdr->etag_len, *end = head + hdr->head_len;
    u->headers_in = hy_array_create(u->req->pool, 8, sizeof(hy_header_t));
    u->status = hdr->status;
    char *nl = memchr(head, '\n', hdr->head_len);
    u->status_line = HY_STR_NULL;
    if (nl && nl - head > 5)
        u->status_line = (hy_str_t){head + 4, (size_t)(nl - 1 - (head + 4))};
    char *p = nl ? nl + 1 : end;
    hy_str_t nm, v;
    while (p < end && hy_upstream_field(&p, end, false, &nm, &v) == 1)
        *(hy_header_t *)hy_array_push(u->headers_in) = (hy_header_t){nm, v};
}

/* Answer the request from the stored response in fd (its header hdr, meta: key .. head). */
static void serve(cache_req_t *cr, int fd, const file_hdr_t *hdr, char *meta, int status)
{
    hy_ureq_t *u = cr->u;
    hy_req_t *req = u->req;
    cr->status = status;
    u->state = HY_UREQ_DONE;
    futimens(fd, NULL); /* the entry's mtime is its last access: the cache manager's inactive= and LRU */
    if (hdr->flags & FLAG_ERROR) {
        close(fd);
        hy_req_error(req, hdr->status);
        return;
    }
    load_head(cr, hdr, meta);
    u->resp_length = hdr->body_len;
    u->resp_chunked = false;
    int rc = u->on_head ? u->on_head(u) : 0;
    if (rc != 0) {
        close(fd);
        if (rc > 0)
            hy_req_error(req, rc);
        return;
    }
    ranges(cr, u, req);
    if (req->method_id == HY_M_HEAD || u->status == 204 || u->status == 304)
        req->header_only = true;
    hy_file_t *f = hy_calloc(sizeof(*f));
    f->fd = fd;
    f->refs = 1;
    f->on_free = file_done;
    int64_t body_start = (int64_t)sizeof(*hdr) + hdr->key_len + hdr->vary_len + hdr->etag_len + hdr->head_len;
    f->size = body_start + hdr->body_len;
    if (hdr->body_len > 0 && !req->header_only)
        hy_outq_push_file(&req->body, f, body_start, hdr->body_len);
    hy_file_unref(f);
    hy_req_send(req, true);
}

/* Open and check the entry: 1 found (fd, hdr, meta set), 0 none (or not this key / not these Vary values). */
static int open_entry(cache_req_t *cr, int *fdp, file_hdr_t *hdr, char **meta)
{
    hy_req_t *req = cr->u->req;
    int fd = open(cr->file, O_RDONLY | O_CLOEXEC);
    if (fd < 0)
        return 0;
    if (!read_at(fd, 0, hdr, sizeof(*hdr)) || memcmp(hdr->magic, MAGIC, 8) != 0 || hdr->body_len < 0 ||
        hdr->key_len != cr->key.len || hdr->head_len > (1u << 24) || hdr->vary_len > (1u << 20)) {
        close(fd);
        return 0;
    }
    size_t n = (size_t)hdr->key_len + hdr->vary_len + hdr->etag_len + hdr->head_len;
    char *m = hy_palloc(req->pool, n + 1);
    if (!read_at(fd, sizeof(*hdr), m, n) || memcmp(m, cr->key.ptr, cr->key.len) != 0) {
        close(fd);
        return 0;
    }
    if (hdr->vary_len) {
        char *vs = m + hdr->key_len, *nl = memchr(vs, '\n', hdr->vary_len);
        hy_str_t now = hy_ucache__vary_values(req, (hy_str_t){vs, nl ? (size_t)(nl - vs) : 0});
        if (now.len != hdr->vary_len || memcmp(now.ptr, vs, now.len) != 0) {
            close(fd);
            if (cr->file == cr->main_file) { /* the main entry is another variant: remember it for the store */
                cr->main_vary = (hy_str_t){vs, hdr->vary_len};
                cr->req_vary = now;
            }
            return 2;
        }
    } else if (cr->file == cr->main_file) {
        cr->main_vary = HY_STR_NULL;
    }
    *fdp = fd;
    *meta = m;
    return 1;
}

static void cleanup(void *arg)
{
    cache_req_t *cr = arg;
    hy_timer_unlink(hy_worker_loop, &cr->lock_timer);
    if (cr->stale_fd >= 0)
        close(cr->stale_fd);
    cr->stale_fd = -1;
    if (cr->fd >= 0) {
        close(cr->fd);
        unlink(cr->tmp);
        cr->fd = -1;
    }
    lock_release(cr);
}

/* May the expired entry be served while it is being updated (use_stale updating, or its stale-while-revalidate)? */
static bool stale_while_updating(const cache_req_t *cr)
{
    return (cr->conf->use_stale & HY_UCACHE_STALE_UPDATING) || cr->hdr.swr_until >= hy_clock_time();
}

/* *_cache_background_update: keys whose update a background subrequest was started for (per worker); the
 * subrequest's own lookup finds its key here and goes to the upstream to store the fresh response. */
#define BG_MAX 64
static char bg_keys[BG_MAX][32];
static size_t bg_n;

static bool bg_claim(const char *md5)
{
    for (size_t i = 0; i < bg_n; i++)
        if (memcmp(bg_keys[i], md5, 32) == 0) {
            memmove(bg_keys[i], bg_keys[i + 1], (bg_n - i - 1) * 32);
            bg_n--;
            return true;
        }
    return false;
}

/* A detached subrequest: a background update (or a mirror); an SSI include or an auth_request has its parent. */
static bool is_detached(const hy_req_t *req)
{
    return hy_req_is_subrequest(req) && req->parent == NULL;
}

/* Start a background update of the expired entry this request marked as being updated (its lock file). */
static bool background_update(cache_req_t *cr)
{
    hy_req_t *req = cr->u->req;
    if (is_detached(req) || bg_n == BG_MAX)
        return false;
    lock_release(cr); /* the subrequest takes it again */
    memcpy(bg_keys[bg_n++], cr->md5, 32);
    if (hy_subrequest(req, req->uri, req->args, HY_SR_BACKGROUND, NULL, NULL) == NULL) {
        bg_claim(cr->md5);
        return false;
    }
    return true;
}

/* Answer with the expired entry this request holds (STALE, UPDATING, REVALIDATED); its lock, if any, goes. */
static void serve_stale(cache_req_t *cr, int status)
{
    int fd = cr->stale_fd;
    cr->stale_fd = -1;
    lock_release(cr);
    serve(cr, fd, &cr->hdr, cr->meta, status);
}

/* Look the key up: 1 answered (HIT, or UPDATING with a stale one), 0 go to the upstream, 2 wait for the lock. */
static int lookup(cache_req_t *cr)
{
    int fd;
    file_hdr_t hdr;
    char *meta;
    if (cr->stale_fd >= 0) {
        close(cr->stale_fd);
        cr->stale_fd = -1;
    }
    cr->file = cr->main_file;
    cr->main_vary = HY_STR_NULL;
    cr->main_exists = false;
    int found = open_entry(cr, &fd, &hdr, &meta);
    cr->main_exists = found != 0;
    if (found == 2) { /* look for this request's variant */
        cr->file = variant_path(cr, cr->req_vary);
        found = open_entry(cr, &fd, &hdr, &meta);
    }
    if (found == 1) {
        if (hdr.valid_until >= hy_clock_time()) { /* valid through its last second, as nginx */
            serve(cr, fd, &hdr, meta, ST_HIT);
            return 1;
        }
        cr->stale_fd = fd;
        cr->hdr = hdr;
        cr->meta = meta;
        cr->status = ST_EXPIRED;
        cr->revalidating = cr->conf->revalidate == 1 && (hdr.last_modified >= 0 || hdr.etag_len > 0);
        if (cr->updater) {
            lock_take(cr); /* the "updating" mark its parent released for it */
            return 0;
        }
        /* The lock file marks an expired entry as being updated, with *_cache_lock or without (nginx's node
         * "updating"): while another request updates it, this one gets it stale (UPDATING) when allowed. */
        if (!lock_take(cr)) {
            if (stale_while_updating(cr)) {
                serve_stale(cr, ST_UPDATING);
                return 1;
            }
            if (cr->conf->lock == 1)
                return 2;
            return 0; /* to the upstream too (nginx), its response stored as well */
        }
        /* this request updates it (a lock file taken over by its age counts too: never taken a second time) */
        if (cr->conf->background_update == 1 && stale_while_updating(cr) && background_update(cr)) {
            serve_stale(cr, ST_STALE);
            return 1;
        }
        return 0;
    }
    cr->status = ST_MISS;
    if (cr->conf->lock == 1 && !cr->no_store && !lock_take(cr))
        return 2;
    return 0;
}

static void on_lock_timer(hy_timer_t *t)
{
    cache_req_t *cr = t->data;
    hy_ureq_t *u = cr->u;
    if (u->req->finished || u->finished)
        return;
    int rc = lookup(cr);
    if (rc == 1)
        return;
    if (rc == 2) {
        if (hy_clock_now_ms() - cr->lock_start < (uint64_t)cr->conf->lock_timeout) {
            hy_timer_link(hy_worker_loop, &cr->lock_timer, LOCK_POLL_MS);
            return;
        }
        cr->no_store = true; /* *_cache_lock_timeout: to the upstream, the response is not stored (nginx) */
    }
    cr->go(u);
}

/* Does the Range ask from beyond max (a suffix "-N" counts as beyond; max 0: every range)? */
static bool range_too_far(const hy_str_t *v, int64_t max)
{
    if (max == 0)
        return true;
    const char *p = v->ptr, *e = v->ptr + v->len;
    if (v->len < 6 || memcmp(p, "bytes=", 6) != 0)
        return false;
    p += 6;
    while (p < e && *p == ' ')
        p++;
    if (p < e && *p == '-')
        return true;
    int64_t off = 0;
    while (p < e && *p >= '0' && *p <= '9' && off < INT64_MAX / 10)
        off = off * 10 + (*p++ - '0');
    return off > max;
}

bool hy_ucache_passes_range(hy_ureq_t *u)
{
    const cache_req_t *cr = cr_of(u);
    return cr == NULL || !cr->active || cr->no_store;
}

int hy_ucache_start(hy_ureq_t *u, void (*go)(hy_ureq_t *u))
{
    hy_req_t *req = u->req;
    const hy_ucache_conf_t *c = u->cache_conf;
    cache_req_t *cr = hy_pcalloc(req->pool, sizeof(*cr));
    cr->u = u;
    cr->conf = c;
    cr->fd = cr->stale_fd = -1;
    cr->go = go;
    u->cache = cr;
    if (!hy_ucache_on(c))
        return 0; /* only *_force_ranges */
    int m = req->method_id == HY_M_GET ? HY_UCACHE_GET
            : req->method_id == HY_M_HEAD ? HY_UCACHE_HEAD
            : req->method_id == HY_M_POST ? HY_UCACHE_POST
                                          : 0;
    if (!(c->methods & m))
        return 0;
    if (c->zone_cv != NULL) {
        hy_str_t name;
        hy_vars_eval(req, c->zone_cv, &name);
        if (name.len == 0)
            return 0;
        cr->path = hy_ucache_path_find(name);
        if (cr->path == NULL) {
            hy_req_log(req, HY_LOG_ERR, "cache \"%.*s\" not found", (int)name.len, name.ptr);
            u->state = HY_UREQ_DONE;
            hy_req_error(req, 500);
            return 1;
        }
    } else {
        cr->path = c->zone->data;
    }
    if (cr->path == NULL)
        return 0;
    if (req->h_range != NULL && range_too_far(req->h_range, c->max_range_offset))
        return 0; /* *_cache_max_range_offset: to the upstream with its Range, not stored */
    cr->active = true;
    hy_pool_on_clear(req->pool, cleanup, cr);
    if (req->method_id == HY_M_HEAD && c->convert_head == 1)
        u->method = HY_STR("GET");
    hy_vars_eval(req, c->key, &cr->key);
    unsigned char md[EVP_MAX_MD_SIZE];
    unsigned mdlen = 0;
    EVP_Digest(cr->key.ptr, cr->key.len, md, &mdlen, EVP_md5(), NULL);
    hy_hex_dump(cr->md5, md, 16);
    cr->md5[32] = '\0';
    cr->file = cr->main_file = entry_path(req->pool, cr->path, cr->md5);
    if (predicates_true(req, c->bypass)) {
        cr->status = ST_BYPASS;
        return 0;
    }
    /* the background update: to the upstream (revalidating the expired entry when configured), stored */
    cr->updater = is_detached(req) && bg_claim(cr->md5);
    if (!cr->updater && (int64_t)count_use(cr->md5) < c->min_uses)
        cr->no_store = true;
    int rc = lookup(cr);
    if (rc != 2)
        return rc;
    cr->lock_start = hy_clock_now_ms();
    cr->lock_timer.cb = on_lock_timer;
    cr->lock_timer.data = cr;
    hy_timer_link(hy_worker_loop, &cr->lock_timer, LOCK_POLL_MS);
    return 1;
}

/* ---------------------------------------------------------------- the upstream's answer */

static int stale_ft(int status)
{
    switch (status) {
    case 500: return HY_UPS_FT_500;
    case 502: return HY_UPS_FT_502;
    case 503: return HY_UPS_FT_503;
    case 504: return HY_UPS_FT_504;
    case 403: return HY_UPS_FT_403;
    case 404: return HY_UPS_FT_404;
    case 429: return HY_UPS_FT_429;
    default: return 0;
    }
}

/* Rewrite the entry's life in place (a revalidation). */
static void renew(cache_req_t *cr, int64_t until, hy_ucache_stale_t ext)
{
    int64_t stale[2] = {ext.swr_sec ? until + ext.swr_sec : 0, ext.sie_sec ? until + ext.sie_sec : 0};
    _Static_assert(offsetof(file_hdr_t, sie_until) == offsetof(file_hdr_t, swr_until) + sizeof(int64_t), "layout");
    int wfd = open(cr->file, O_WRONLY | O_CLOEXEC);
    if (wfd < 0)
        return;
    if (pwrite(wfd, &until, sizeof(until), offsetof(file_hdr_t, valid_until)) != (ssize_t)sizeof(until) ||
        pwrite(wfd, stale, sizeof(stale), offsetof(file_hdr_t, swr_until)) != (ssize_t)sizeof(stale))
        hy_req_log(cr->u->req, HY_LOG_CRIT, "pwrite() \"%s\" failed (%d: %s)", cr->file, errno, strerror(errno));
    close(wfd);
}

bool hy_ucache_head(hy_ureq_t *u)
{
    cache_req_t *cr = cr_of(u);
    if (cr == NULL || !cr->active || cr->stale_fd < 0)
        return false;
    if (u->status == 304 && cr->revalidating) {
        /* The new life: the 304's own fields, else the stored response's fields read again now (nginx), else
         * *_cache_valid of the stored status; stale-while-revalidate and stale-if-error come with it. */
        bool unc = false;
        hy_ucache_stale_t ext = {0, 0};
        int64_t until = hy_ucache__validity(u, 304, true, &unc, &ext);
        if (until < 0) {
            unc = false;
            load_head(cr, &cr->hdr, cr->meta);
            until = hy_ucache__validity(u, cr->hdr.status, false, &unc, &ext);
        }
        if (until > 0 && !cr->no_store)
            renew(cr, until, ext);
        serve_stale(cr, ST_REVALIDATED);
        return true;
    }
    int ft = stale_ft(u->status);
    /* stale-if-error covers a 5xx only with *_cache_use_stale updating (nginx since 1.19.3) */
    bool sie = cr->hdr.sie_until >= hy_clock_time() && u->status >= 500 && u->status <= 504 &&
               (cr->conf->use_stale & HY_UCACHE_STALE_UPDATING);
    if (ft && ((cr->conf->use_stale & ft) || sie)) {
        serve_stale(cr, ST_STALE);
        return true;
    }
    return false;
}

bool hy_ucache_failed(hy_ureq_t *u, int ft)
{
    cache_req_t *cr = cr_of(u);
    if (cr == NULL || !cr->active || cr->stale_fd < 0 || u->req->head_sent)
        return false;
    if (!(cr->conf->use_stale & ft) && cr->hdr.sie_until < hy_clock_time())
        return false;
    serve_stale(cr, ST_STALE);
    return true;
}

static void append(char **o, const char *p, size_t n)
{
    memcpy(*o, p, n);
    *o += n;
}

/* The file being written: "<entry>.<pid>.<n>" beside the entry (renamed into place when complete). 0 or -1. */
static int open_tmp(cache_req_t *cr)
{
    static unsigned seq;
    hy_req_t *req = cr->u->req;
    size_t fl = strlen(cr->file);
    cr->tmp = hy_palloc(req->pool, fl + 32);
    snprintf(cr->tmp, fl + 32, "%s.%d.%u", cr->file, (int)getpid(), ++seq);
    int fd = open(cr->tmp, O_CREAT | O_EXCL | O_WRONLY | O_CLOEXEC, 0600);
    if (fd < 0 && errno == ENOENT && mkdirs_for(cr->tmp) == 0)
        fd = open(cr->tmp, O_CREAT | O_EXCL | O_WRONLY | O_CLOEXEC, 0600);
    if (fd < 0) {
        hy_req_log(req, HY_LOG_CRIT, "open() \"%s\" failed (%d: %s)", cr->tmp, errno, strerror(errno));
        lock_release(cr);
        return -1;
    }
    cr->fd = fd;
    cr->written = 0;
    return 0;
}

void hy_ucache_store_begin(hy_ureq_t *u)
{
    cache_req_t *cr = cr_of(u);
    hy_req_t *req = u->req;
    if (cr == NULL)
        return;
    if (!cr->active) {
        if (cr->conf->force_ranges == 1)
            ranges(cr, u, req);
        return;
    }
    bool unc = false;
    hy_ucache_stale_t ext;
    int64_t until = hy_ucache__validity(u, u->status, false, &unc, &ext);
    if (unc || until <= 0 || u->status == 206 || predicates_true(req, cr->conf->no_cache)) {
        lock_release(cr);
        return;
    }
    /* cacheable (nginx's u->cacheable): ranges and not_modified apply even when min_uses keeps it from the disk */
    req->disable_not_modified = false;
    ranges(cr, u, req);
    if (cr->no_store) {
        lock_release(cr);
        return;
    }
    bool validators = u->status == 200 || u->status == 206; /* only those are revalidated (nginx) */
    /* the head as stored: the status line, then the fields without framing ones */
    size_t cap = 64;
    hy_header_t *h = u->headers_in->elts;
    for (size_t i = 0; i < u->headers_in->nelts; i++)
        cap += h[i].name.len + h[i].value.len + 4;
    cap += u->status_line.len;
    char *head = hy_palloc(req->pool, cap), *o = head;
    o += snprintf(o, 8, "%03d ", u->status);
    append(&o, u->status_line.ptr ? u->status_line.ptr : "", u->status_line.len);
    append(&o, "\r\n", 2);
    hy_str_t etag = HY_STR_NULL, vary = HY_STR_NULL;
    int64_t lm = -1;
    for (size_t i = 0; i < u->headers_in->nelts; i++) {
        hy_str_t nm = h[i].name;
        if (hy_str_caseeq(nm, "Transfer-Encoding") || hy_str_caseeq(nm, "Connection") ||
            hy_str_caseeq(nm, "Keep-Alive") || hy_str_caseeq(nm, "Content-Length"))
            continue;
        if (hy_str_caseeq(nm, "ETag") && etag.len == 0 && validators)
            etag = h[i].value;
        else if (hy_str_caseeq(nm, "Last-Modified") && lm < 0 && validators)
            lm = hy_httpdate_parse(h[i].value.ptr, h[i].value.len);
        append(&o, nm.ptr, nm.len);
        append(&o, ": ", 2);
        append(&o, h[i].value.ptr, h[i].value.len);
        append(&o, "\r\n", 2);
    }
    if (!(cr->conf->ignore_headers & HY_UIGN_VARY))
        vary = hy_ucache__vary_names(u);
    hy_str_t vv = vary.len ? hy_ucache__vary_values(req, vary) : HY_STR_NULL;
    /* where it goes: the main entry, unless that holds another variant with the same Vary names */
    cr->file = cr->main_file;
    if (vv.len && cr->main_vary.len) {
        const char *nl = memchr(cr->main_vary.ptr, '\n', cr->main_vary.len);
        size_t nlen = nl ? (size_t)(nl - cr->main_vary.ptr) : 0;
        if (nlen == vary.len && memcmp(cr->main_vary.ptr, vary.ptr, nlen) == 0)
            cr->file = variant_path(cr, vv);
    }
    file_hdr_t hdr = {.swr_until = ext.swr_sec ? until + ext.swr_sec : 0,
                      .sie_until = ext.sie_sec ? until + ext.sie_sec : 0,
                      .valid_until = until,
                      .stored = hy_clock_time(),
                      .last_modified = lm,
                      .body_len = -1,
                      .status = u->status,
                      .key_len = (uint32_t)cr->key.len,
                      .vary_len = (uint32_t)vv.len,
                      .etag_len = (uint32_t)etag.len,
                      .head_len = (uint32_t)(o - head)};
    memcpy(hdr.magic, MAGIC, 8);
    if (open_tmp(cr) != 0)
        return;
    int fd = cr->fd;
    if (!hy_write_all(fd, &hdr, sizeof(hdr)) || !hy_write_all(fd, cr->key.ptr, cr->key.len) ||
        (vv.len && !hy_write_all(fd, vv.ptr, vv.len)) || (etag.len && !hy_write_all(fd, etag.ptr, etag.len)) ||
        !hy_write_all(fd, head, (size_t)(o - head)))
        hy_ucache_store_end(u, false);
}

void hy_ucache_store_error(hy_ureq_t *u)
{
    cache_req_t *cr = cr_of(u);
    if (cr == NULL || !cr->active || cr->no_store)
        return;
    bool unc = false;
    int64_t until = hy_ucache__validity(u, u->status, false, &unc, NULL);
    if (unc || until <= 0 || predicates_true(u->req, cr->conf->no_cache)) {
        lock_release(cr);
        return;
    }
    file_hdr_t hdr = {.valid_until = until, .stored = hy_clock_time(), .last_modified = -1, .body_len = 0,
                      .status = u->status, .key_len = (uint32_t)cr->key.len, .head_len = 6, .flags = FLAG_ERROR};
    memcpy(hdr.magic, MAGIC, 8);
    char head[8];
    snprintf(head, sizeof(head), "%03d \r\n", u->status);
    if (open_tmp(cr) != 0)
        return;
    if (!hy_write_all(cr->fd, &hdr, sizeof(hdr)) || !hy_write_all(cr->fd, cr->key.ptr, cr->key.len) ||
        !hy_write_all(cr->fd, head, 6)) {
        hy_ucache_store_end(u, false);
        return;
    }
    int64_t rl = u->resp_length;
    u->resp_length = -1;
    hy_ucache_store_end(u, true);
    u->resp_length = rl;
}

void hy_ucache_tee(hy_ureq_t *u, const hy_outq_t *q)
{
    cache_req_t *cr = cr_of(u);
    if (cr == NULL || cr->fd < 0)
        return;
    for (const hy_seg_t *g = q->head; g; g = g->next) {
        if (g->kind != HY_SEG_MEM || !hy_write_all(cr->fd, g->mem.ptr, g->mem.len)) {
            hy_ucache_store_end(u, false);
            return;
        }
        cr->written += (int64_t)g->mem.len;
    }
}

void hy_ucache_store_end(hy_ureq_t *u, bool ok)
{
    cache_req_t *cr = cr_of(u);
    if (cr == NULL)
        return;
    if (cr->fd >= 0) {
        /* a HEAD sent as HEAD (*_cache_convert_head off) is stored without a body, as nginx */
        ok = ok && (u->resp_length < 0 || cr->written == u->resp_length || hy_str_eq(u->method, "HEAD"));
        int64_t len = cr->written;
        if (ok && pwrite(cr->fd, &len, sizeof(len), offsetof(file_hdr_t, body_len)) != (ssize_t)sizeof(len))
            ok = false;
        close(cr->fd);
        cr->fd = -1;
        if (ok && rename(cr->tmp, cr->file) != 0) {
            hy_req_log(u->req, HY_LOG_CRIT, "rename() \"%s\" to \"%s\" failed (%d: %s)", cr->tmp, cr->file, errno,
                       strerror(errno));
            ok = false;
        }
        if (!ok)
            unlink(cr->tmp);
    }
    lock_release(cr);
}

/* ---------------------------------------------------------------- variables */

static void get_status(hy_req_t *req, hy_var_value_t *v, uintptr_t data)
{
    (void)data;
    cache_req_t *cr = cr_of(hy_upstream_of(req));
    if (cr == NULL || cr->status == ST_NONE) {
        v->ptr = "", v->len = 0, v->not_found = true;
        return;
    }
    v->ptr = (char *)status_names[cr->status];
    v->len = strlen(v->ptr);
    v->not_found = false;
}

/* the stored response's validators while revalidating it (the upstream request's If-Modified-Since and
 * If-None-Match) */
static void get_validator(hy_req_t *req, hy_var_value_t *v, uintptr_t data)
{
    cache_req_t *cr = cr_of(hy_upstream_of(req));
    v->ptr = "", v->len = 0, v->not_found = true;
    if (cr == NULL || !cr->revalidating || cr->meta == NULL)
        return;
    if (data == 0 && cr->hdr.last_modified >= 0) {
        char *b = hy_palloc(req->pool, 32);
        v->len = hy_httpdate_format(cr->hdr.last_modified, b);
        v->ptr = b;
        v->not_found = false;
    } else if (data == 1 && cr->hdr.etag_len) {
        v->ptr = cr->meta + cr->hdr.key_len + cr->hdr.vary_len;
        v->len = cr->hdr.etag_len;
        v->not_found = false;
    }
}

int hy_ucache__define_vars(hy_conf_t *cf)
{
    if (hy_vars_define(cf, HY_STR("upstream_cache_status"), get_status, 0, HY_VAR_NOCACHE) < 0 ||
        hy_vars_define(cf, HY_STR("upstream_cache_last_modified"), get_validator, 0, HY_VAR_NOCACHE) < 0 ||
        hy_vars_define(cf, HY_STR("upstream_cache_etag"), get_validator, 1, HY_VAR_NOCACHE) < 0)
        return -1;
    return 0;
}
