/* store.c — *_store (nginx's proxy_store, fastcgi_store ...): the upstream's response body is written, as it is
 * decoded, to a file in the module's temp_path; when a 200 response is complete and its length is the announced
 * one, the file gets *_store_access, the mtime of Last-Modified, and is renamed to the store's path (the URI's
 * root/alias path, or the path the directive's string gives), its directories made as needed; a rename across
 * file systems copies. Any other end removes the file. */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include "upstream.h"
#include "../core/httpdate.h"
#include "../core/log.h"
#include "../core/file.h"
#include "../http/body.h"
#include "../http/path.h"
#include "../http/vars.h"

static bool store_open(hy_ureq_t *u)
{
    if (u->store_tmp != NULL)
        return true;
    if (u->store_failed)
        return false;
    char *path = NULL;
    int fd = hy_req_temp_open(u->req, u->temp_path, u->temp_levels, &path);
    if (fd < 0) {
        u->store_failed = true;
        return false;
    }
    u->store_fd = fd;
    u->store_tmp = path;
    return true;
}

static void store_close(hy_ureq_t *u, bool remove)
{
    if (u->store_tmp == NULL)
        return;
    close(u->store_fd);
    if (remove)
        unlink(u->store_tmp);
    u->store_tmp = NULL;
    u->store_failed = true; /* done with it */
}

void hy_upstream__store_write(hy_ureq_t *u, const hy_outq_t *fresh)
{
    if (!u->buffering) /* nginx stores through its buffered path only (proxy_buffering off, X-Accel-Buffering: no) */
        u->store_failed = true;
    if (!store_open(u))
        return;
    for (const hy_seg_t *g = fresh->head; g; g = g->next) {
        if (g->kind == HY_SEG_MEM && hy_write_all(u->store_fd, g->mem.ptr, g->mem.len)) {
            u->store_size += (int64_t)g->mem.len;
            continue;
        }
        hy_req_log(u->req, HY_LOG_CRIT, "write() to temp file \"%s\" failed (%d: %s)", u->store_tmp, errno,
                   strerror(errno));
        store_close(u, true);
        return;
    }
}

void hy_upstream__store_drop(hy_ureq_t *u)
{
    store_close(u, true);
}

/* make the directories above path (nginx's ngx_create_full_path) */
static void make_parents(char *path, mode_t mode)
{
    for (char *p = strchr(path + 1, '/'); p; p = strchr(p + 1, '/')) {
        *p = '\0';
        mkdir(path, mode);
        *p = '/';
    }
}

/* rename() across file systems: a copy next to `to`, renamed over it */
static bool copy_file(hy_ureq_t *u, const char *from, const char *to, mode_t mode)
{
    int in = open(from, O_RDONLY | O_CLOEXEC);
    if (in < 0)
        return false;
    size_t cap = strlen(to) + 16;
    char *tmp = hy_palloc(u->req->pool, cap);
    snprintf(tmp, cap, "%s.%010u", to, (unsigned)getpid());
    int out = open(tmp, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
    bool ok = out >= 0;
    char buf[16384];
    while (ok) {
        ssize_t r = read(in, buf, sizeof(buf));
        if (r < 0 && errno == EINTR)
            continue;
        if (r <= 0) {
            ok = r == 0;
            break;
        }
        ok = hy_write_all(out, buf, (size_t)r);
    }
    close(in);
    if (out < 0)
        return false;
    ok = ok && fchmod(out, mode) == 0;
    close(out);
    ok = ok && rename(tmp, to) == 0;
    if (!ok)
        unlink(tmp);
    return ok;
}

void hy_upstream__store_end(hy_ureq_t *u)
{
    hy_req_t *req = u->req;
    if (!u->buffering || u->status != 200 || (u->resp_length >= 0 && u->resp_length != u->store_size) || !store_open(u)) {
        store_close(u, true);
        return;
    }
    char *to;
    if (u->store == 1) {
        size_t len;
        to = hy_http_map_uri_to_path(req, req->loc ? req->loc : req->srv->loc, req->uri, &len);
    } else {
        hy_str_t v;
        hy_vars_eval(req, u->store_path, &v);
        to = hy_pstrndup(req->pool, v.ptr, v.len);
    }
    mode_t mode = (mode_t)u->store_access;
    (void)fchmod(u->store_fd, mode);
    const hy_str_t *lm = hy_upstream_header(u, HY_STR("Last-Modified"));
    int64_t t = lm ? hy_httpdate_parse(lm->ptr, lm->len) : -1;
    struct timespec ts[2] = {{.tv_sec = (time_t)t}, {.tv_sec = (time_t)t}};
    if (t >= 0)
        (void)futimens(u->store_fd, ts);
    const char *from = u->store_tmp;
    int rc = rename(from, to);
    if (rc != 0 && errno == ENOENT) {
        make_parents(to, mode | (mode & 0444) >> 2);
        rc = rename(from, to);
    }
    if (rc != 0 && errno == EXDEV) {
        if (!copy_file(u, from, to, mode))
            hy_req_log(req, HY_LOG_CRIT, "copy \"%s\" to \"%s\" failed (%d: %s)", from, to, errno, strerror(errno));
        else if (t >= 0)
            (void)utimensat(AT_FDCWD, to, ts, 0);
        store_close(u, true);
        return;
    }
    if (rc != 0)
        hy_req_log(req, HY_LOG_CRIT, "rename() \"%s\" to \"%s\" failed (%d: %s)", from, to, errno, strerror(errno));
    store_close(u, rc != 0);
}
