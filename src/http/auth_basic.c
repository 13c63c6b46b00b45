/* auth_basic.c — HTTP Basic authentication against an htpasswd file, as nginx's auth_basic module.
 *
 * A request needs `auth_basic` (a realm other than "off", variables allowed) and `auth_basic_user_file` (a path
 * with variables allowed, relative to the configuration's directory); otherwise the handler declines. A request
 * without usable credentials, with an unknown user or a wrong password gets 401 with
 * `WWW-Authenticate: Basic realm="REALM"` and nginx's error-log line. A missing file is 403, another open
 * failure 500.
 *
 * Files are cached per worker (up to CACHE_MAX of them) and read again when their inode, size or mtime changed,
 * looked at most once a second: an edited file takes effect without a reload. */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/stat.h>
#include "auth_basic.h"
#include "core.h"
#include "phases.h"
#include "request.h"
#include "vars.h"
#include "../conf/cycle.h"
#include "../core/clock.h"
#include "../core/htpasswd.h"
#include "../core/log.h"

#define CACHE_MAX 32
#define RECHECK_MS 1000
#define FILE_MAX (64 * 1024 * 1024)

typedef struct ab_loc {
    hy_complex_t *realm;     /* NULL: unset */
    hy_complex_t *user_file; /* NULL: unset */
} ab_loc_t;

/* one cached file (worker memory) */
typedef struct ab_file {
    char *path;
    char *data;
    size_t len;
    dev_t dev;
    ino_t ino;
    off_t size;
    struct timespec mtime;
    uint64_t checked_ms;
    struct ab_file *next;
} ab_file_t;

static ab_file_t *cache;
static unsigned cache_n;

hy_module_t hy_http_auth_basic_module;

static void file_free(ab_file_t *f)
{
    free(f->path);
    free(f->data);
    free(f);
}

static bool same_file(const ab_file_t *f, const struct stat *st)
{
    return f->dev == st->st_dev && f->ino == st->st_ino && f->size == st->st_size &&
           f->mtime.tv_sec == st->st_mtim.tv_sec && f->mtime.tv_nsec == st->st_mtim.tv_nsec;
}

/* Read path into f (replacing its contents). 0, or an errno with *op naming the call that failed. */
static int file_read(ab_file_t *f, const char *path, const char **op)
{
    *op = "open()";
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0)
        return errno;
    struct stat st;
    int err = 0;
    char *data = NULL;
    size_t got = 0;
    if (fstat(fd, &st) != 0) {
        err = errno, *op = "fstat()";
        goto out;
    }
    size_t cap = st.st_size > 0 && st.st_size < FILE_MAX ? (size_t)st.st_size : 4096;
    data = malloc(cap + 1);
    for (;;) {
        if (data == NULL) {
            err = ENOMEM, *op = "malloc()";
            goto out;
        }
        ssize_t n = read(fd, data + got, cap - got);
        if (n < 0 && errno == EINTR)
            continue;
        if (n < 0) {
            err = errno, *op = "pread()"; /* nginx's wording (ngx_read_file) */
            goto out;
        }
        if (n == 0)
            break;
        got += (size_t)n;
        if (got == cap) {
            if (cap >= FILE_MAX) {
                err = EFBIG, *op = "read()";
                goto out;
            }
            cap *= 2;
            char *bigger = realloc(data, cap + 1);
            if (bigger == NULL)
                free(data);
            data = bigger;
        }
    }
    free(f->data);
    f->data = data, data = NULL;
    f->len = got;
    f->dev = st.st_dev, f->ino = st.st_ino, f->size = st.st_size, f->mtime = st.st_mtim;
out:
    free(data);
    close(fd);
    return err;
}

/* The cached contents of path, read again when it changed; NULL with *err / *op on failure (the entry is
 * dropped: the next request tries again). */
static const ab_file_t *file_get(const char *path, int *err, const char **op)
{
    uint64_t now = hy_clock_now_ms();
    ab_file_t **pp = &cache, *f = NULL;
    for (; *pp; pp = &(*pp)->next)
        if (strcmp((*pp)->path, path) == 0) {
            f = *pp;
            *pp = f->next; /* unlinked; put back in front below */
            break;
        }
    if (f && now - f->checked_ms < RECHECK_MS)
        goto keep;
    struct stat st;
    if (f && stat(path, &st) == 0 && same_file(f, &st)) {
        f->checked_ms = now;
        goto keep;
    }
    if (f == NULL) {
        if (cache_n == CACHE_MAX) { /* drop the least recently used (the list's tail) */
            ab_file_t **t = &cache;
            while ((*t)->next)
                t = &(*t)->next;
            file_free(*t);
            *t = NULL;
            cache_n--;
        }
        f = calloc(1, sizeof(*f));
        if (f == NULL || (f->path = strdup(path)) == NULL) {
            free(f);
            *err = ENOMEM, *op = "malloc()";
            return NULL;
        }
        cache_n++;
    }
    *err = file_read(f, path, op);
    if (*err != 0) {
        file_free(f);
        cache_n--;
        return NULL;
    }
    f->checked_ms = now;
keep:
    f->next = cache;
    cache = f;
    return f;
}

static int unauthorized(hy_req_t *req, hy_str_t realm)
{
    size_t n = sizeof("Basic realm=\"\"") - 1 + realm.len;
    char *v = hy_palloc(req->pool, n + 1);
    snprintf(v, n + 1, "Basic realm=\"%.*s\"", (int)realm.len, realm.ptr);
    hy_req_add_header(req, HY_STR("WWW-Authenticate"), (hy_str_t){v, n});
    return 401;
}

static const hy_str_t *authorization(hy_req_t *req)
{
    for (size_t i = 0; i < req->num_headers; i++)
        if (hy_str_caseeq(req->headers[i].name, "authorization"))
            return &req->headers[i].value;
    return NULL;
}

static int handler(hy_req_t *req)
{
    const ab_loc_t *c = req->loc->loc_conf[hy_http_auth_basic_module.index];
    if (c->realm == NULL || c->user_file == NULL)
        return HY_DECLINED;
    hy_str_t realm;
    if (hy_vars_eval(req, c->realm, &realm) != 0)
        return 500;
    if (hy_str_eq(realm, "off"))
        return HY_DECLINED;
    const hy_str_t *h = authorization(req);
    char *buf = h ? hy_palloc(req->pool, h->len + 4) : NULL;
    const char *user = NULL, *password = NULL;
    size_t ulen = 0;
    if (h == NULL || !hy_htpasswd_basic(h->ptr, h->len, buf, &user, &ulen, &password)) {
        hy_req_log(req, HY_LOG_INFO, "no user/password was provided for basic authentication");
        return unauthorized(req, realm);
    }
    hy_str_t path;
    if (hy_vars_eval(req, c->user_file, &path) != 0)
        return 500;
    if (path.len == 0 || path.ptr[0] != '/') { /* nginx's conf_prefixed complex value */
        const char *pre = req->conn->cycle->conf_prefix;
        size_t pl = strlen(pre);
        char *full = hy_palloc(req->pool, pl + path.len + 1);
        memcpy(full, pre, pl);
        memcpy(full + pl, path.ptr, path.len);
        path = (hy_str_t){full, pl + path.len};
    }
    char *cpath = hy_pstrndup(req->pool, path.ptr, path.len);
    int err = 0;
    const char *op = "";
    const ab_file_t *f = file_get(cpath, &err, &op);
    if (f == NULL) {
        hy_req_log(req, err == ENOENT ? HY_LOG_ERR : HY_LOG_CRIT, "%s \"%s\" failed (%d: %s)", op, cpath, err,
                   strerror(err));
        return err == ENOENT ? 403 : 500;
    }
    const char *hash;
    size_t hlen;
    if (!hy_htpasswd_find(f->data, f->len, user, ulen, &hash, &hlen)) {
        hy_req_log(req, HY_LOG_ERR, "user \"%.*s\" was not found in \"%s\"", (int)ulen, user, cpath);
        return unauthorized(req, realm);
    }
    char *chash = hy_pstrndup(req->pool, hash, hlen);
    int rc = hy_htpasswd_verify(password, chash);
    if (rc == HY_HTPASSWD_MATCH)
        return HY_OK;
    if (rc == HY_HTPASSWD_ERROR) {
        hy_req_log(req, HY_LOG_CRIT, "crypt() failed");
        return 500;
    }
    hy_req_log(req, HY_LOG_ERR, "user \"%.*s\": password mismatch", (int)ulen, user);
    return unauthorized(req, realm);
}

static int set_complex(hy_conf_t *cf, const hy_directive_t *d, void *conf)
{
    ab_loc_t *c = conf;
    hy_complex_t **slot = strcmp(d->name, "auth_basic") == 0 ? &c->realm : &c->user_file;
    if (*slot)
        return hy_conf_error(cf, "\"%s\" directive is duplicate", d->name);
    size_t n;
    hy_str_t *a = hy_conf_args(cf, &n);
    hy_str_t text = a[1];
    if (slot == &c->user_file && text.len == 0)
        return hy_conf_error(cf, "invalid value \"\"");
    *slot = hy_palloc(cf->pool, sizeof(**slot));
    if (hy_vars_compile(cf, text, *slot) != 0)
        return -1;
    if (slot == &c->user_file && (*slot)->nparts == 0 && text.ptr[0] != '/') { /* relative to the conf's dir */
        char *full = hy_cycle_conf_path(cf->cycle, text.ptr, text.len);
        (*slot)->value = (hy_str_t){full, strlen(full)};
    }
    return 0;
}

static void *create_loc(hy_conf_t *cf)
{
    return hy_pcalloc(cf->pool, sizeof(ab_loc_t));
}

static int merge_loc(hy_conf_t *cf, void *parent, void *child)
{
    ab_loc_t *p = parent, *c = child;
    if (c->realm == NULL)
        c->realm = p->realm;
    if (c->user_file == NULL)
        c->user_file = p->user_file;
    return 0;
}

static int postconfiguration(hy_conf_t *cf)
{
    return hy_http_phase_add(cf, HY_PHASE_ACCESS, handler);
}

static void flush_worker(hy_cycle_t *cycle, bool reopen)
{
    if (reopen)
        return;
    while (cache) {
        ab_file_t *f = cache;
        cache = f->next;
        file_free(f);
    }
    cache_n = 0;
}

static const hy_directive_t ab_directives[] = {
    {.name = "auth_basic",
     .ctx = HY_CTX_HTTP_ANY | HY_CTX_LMT,
     .args = HY_ARGS_1,
     .set = set_complex,
     .conf = HY_CONF_LOC},
    {.name = "auth_basic_user_file",
     .ctx = HY_CTX_HTTP_ANY | HY_CTX_LMT,
     .args = HY_ARGS_1,
     .set = set_complex,
     .conf = HY_CONF_LOC},
    {0},
};

hy_module_t hy_http_auth_basic_module = {
    .name = "http_auth_basic",
    .directives = ab_directives,
    .create_loc_conf = create_loc,
    .merge_loc_conf = merge_loc,
    .postconfiguration = postconfiguration,
    .flush_worker = flush_worker,
};
