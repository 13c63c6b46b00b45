/* body.c — request body buffering, spooling and streaming (see body.h). */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/stat.h>
#include "body.h"
#include "../core/log.h"
#include "../core/file.h"

const char hy_err_body[] = "request body could not be read";

static uint32_t temp_seq;

static void body_cleanup(void *arg)
{
    hy_req_body_t *b = arg;
    free(b->mem);
    b->mem = NULL;
    if (b->fd >= 0) {
        close(b->fd);
        b->fd = -1;
        if (!b->keep_file && b->path)
            unlink(b->path);
    }
}

int hy_req_temp_open(hy_req_t *req, hy_str_t dir, const int levels[3], char **path_out)
{
    for (int attempt = 0; attempt < 8; attempt++) {
        char name[16];
        uint32_t seq = (uint32_t)getpid() * 7919u + ++temp_seq;
        snprintf(name, sizeof(name), "%010u", seq);
        size_t cap = dir.len + 32;
        char *path = hy_palloc(req->pool, cap);
        size_t o = (size_t)snprintf(path, cap, "%.*s", (int)dir.len, dir.ptr);
        size_t tail = 10;
        for (int l = 0; l < 3 && levels[l]; l++) {
            int w = levels[l];
            tail -= (size_t)w;
            o += (size_t)snprintf(path + o, cap - o, "/%.*s", w, name + tail);
            mkdir(path, 0700);
        }
        snprintf(path + o, cap - o, "/%s", name);
        int fd = open(path, O_RDWR | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
        if (fd < 0 && errno == ENOENT && attempt < 7) { /* a fresh prefix: the directory itself */
            char *d = hy_pstrndup(req->pool, dir.ptr, dir.len);
            mkdir(d, 0700);
            continue;
        }
        if (fd < 0 && errno == EEXIST && attempt < 7)
            continue;
        if (fd < 0) { /* the last attempt's failure is logged too (a directory that cannot be made) */
            hy_req_log(req, HY_LOG_CRIT, "open() \"%s\" failed (%d: %s)", path, errno, strerror(errno));
            return -1;
        }
        *path_out = path;
        return fd;
    }
    return -1;
}

static int open_temp(hy_req_t *req, hy_req_body_t *b)
{
    const hy_http_loc_conf_t *lc = req->loc ? req->loc : req->srv->loc;
    int fd = hy_req_temp_open(req, lc->client_body_temp_path, lc->client_body_temp_levels, &b->path);
    if (fd < 0)
        return -1;
    b->fd = fd;
    return 0;
}

static void fail(hy_req_t *req, int status)
{
    hy_req_body_t *b = req->body_in;
    if (b->failed || b->complete)
        return;
    b->failed = true;
    b->status = status;
    b->cb(req, hy_err_body);
}

static int buffer_in_mem(hy_req_body_t *b, const char *p, size_t n, size_t limit);

/* client_body_buffer_size: how much of a body is kept in memory */
static size_t mem_limit(const hy_http_loc_conf_t *lc)
{
    return lc->client_body_buffer_size > 0 ? (size_t)lc->client_body_buffer_size : 16384;
}

/* buffer mode: memory up to client_body_buffer_size, then the temp file */
static int buffer_in(hy_req_t *req, hy_req_body_t *b, const char *p, size_t n)
{
    const hy_http_loc_conf_t *lc = req->loc ? req->loc : req->srv->loc;
    size_t limit = mem_limit(lc);
    if (b->fd < 0 && (lc->client_body_in_file_only || b->mem_len + n > limit)) {
        if (open_temp(req, b) != 0 || !hy_write_all(b->fd, b->mem, b->mem_len))
            return -1;
        free(b->mem);
        b->mem = NULL;
        b->mem_len = b->mem_cap = 0;
    }
    if (b->fd >= 0)
        return hy_write_all(b->fd, p, n) ? 0 : -1;
    return buffer_in_mem(b, p, n, limit);
}

/* append n bytes to b->mem, growing it up to `limit` bytes (the caller checked that they fit) */
static int buffer_in_mem(hy_req_body_t *b, const char *p, size_t n, size_t limit)
{
    if (b->mem_len + n > b->mem_cap) {
        size_t cap = b->mem_cap ? b->mem_cap : 1024;
        while (cap < b->mem_len + n)
            cap *= 2;
        if (cap > limit)
            cap = limit;
        char *m = realloc(b->mem, cap);
        if (m == NULL)
            return -1;
        b->mem = m;
        b->mem_cap = cap;
    }
    memcpy(b->mem + b->mem_len, p, n);
    b->mem_len += n;
    return 0;
}

/* streaming: a copy of what went by while it fits in client_body_buffer_size, for $request_body after the
 * exchange (nginx's unbuffered reader keeps the body in its buffer when it fits); dropped for good past that */
static void stream_keep(hy_req_t *req, hy_req_body_t *b, const char *p, size_t n)
{
    size_t limit = mem_limit(req->loc ? req->loc : req->srv->loc);
    if (b->mem_len + n > limit || buffer_in_mem(b, p, n, limit) != 0) {
        free(b->mem);
        b->mem = NULL;
        b->mem_len = b->mem_cap = 0;
        b->mem_dropped = true;
    }
}

size_t hy_req__body_in(hy_req_t *req, const char *p, size_t n, bool last)
{
    hy_req_body_t *b = req->body_in;
    if (b == NULL || b->failed || b->complete)
        return n;
    if (b->mode == HY_BODY_BUFFER) {
        if (n && buffer_in(req, b, p, n) != 0) {
            fail(req, 500);
            return n;
        }
        b->received += (int64_t)n;
        if (last && n == 0 && b->fd < 0 && b->mem_len == 0 && (req->content_length >= 0 || req->body_follows)) {
            /* an empty body that was sent (Content-Length: 0, empty HTTP/2 DATA): client_body_in_file_only writes
             * its empty file all the same, as nginx ($request_body_file names it) */
            const hy_http_loc_conf_t *lc = req->loc ? req->loc : req->srv->loc;
            if (lc->client_body_in_file_only && open_temp(req, b) != 0) {
                fail(req, 500);
                return n;
            }
        }
        if (last) {
            b->complete = true;
            if (b->fd >= 0)
                lseek(b->fd, 0, SEEK_SET);
            b->cb(req, NULL);
        }
        return n;
    }
    /* streaming: offer the bytes; what the handler did not take stays with the protocol */
    b->data = p;
    b->data_len = n;
    b->last = last;
    size_t before = n;
    if (n > 0 || last) {
        b->in_cb = true;
        b->cb(req, NULL);
        b->in_cb = false;
    }
    if (b->failed)
        return before;
    size_t took = before - b->data_len;
    b->received += (int64_t)took;
    if (took > 0 && !b->mem_dropped)
        stream_keep(req, b, p, took);
    if (last && b->data_len == 0 && !b->complete) {
        b->complete = true;
        b->data = NULL;
        b->cb(req, NULL);
    }
    return took;
}

void hy_req__body_error(hy_req_t *req, int status)
{
    if (req->body_in)
        fail(req, status);
}

void hy_req_body_consume(hy_req_t *req, size_t n)
{
    hy_req_body_t *b = req->body_in;
    if (n > b->data_len)
        n = b->data_len;
    b->data += n;
    b->data_len -= n;
}

void hy_req_body_resume(hy_req_t *req)
{
    hy_req_body_t *b = req->body_in;
    if (b == NULL || b->in_cb || b->complete || b->failed)
        return;
    if (hy_req_ops(req)->read_body)
        hy_req_ops(req)->read_body(req);
}

int hy_req_read_body(hy_req_t *req, enum hy_body_mode mode, hy_req_body_cb cb)
{
    if (req->body_in) { /* read already (mirror_request_body): a buffered body is delivered again */
        hy_req_body_t *r = req->body_in;
        if (mode != HY_BODY_BUFFER || r->mode != HY_BODY_BUFFER || !r->complete || r->failed)
            return -1;
        r->cb = cb;
        cb(req, NULL);
        return 0;
    }
    hy_req_body_t *b = hy_pcalloc(req->pool, sizeof(*b));
    b->mode = mode;
    b->cb = cb;
    b->fd = -1;
    const hy_http_loc_conf_t *lc = req->loc ? req->loc : req->srv->loc;
    b->keep_file = lc->client_body_in_file_only == 1;
    req->body_in = b;
    hy_pool_on_clear(req->pool, body_cleanup, b);
    if (hy_req_ops(req)->read_body == NULL) { /* a protocol without bodies */
        b->complete = true;
        cb(req, NULL);
        return 0;
    }
    hy_req_ops(req)->read_body(req);
    return 0;
}

hy_str_t hy_req_body_text(hy_req_t *req)
{
    hy_req_body_t *b = req->body_in;
    if (b == NULL || b->fd >= 0 || b->mem == NULL || (b->mode == HY_BODY_STREAM && (!b->complete || b->mem_dropped)))
        return HY_STR_NULL;
    return (hy_str_t){b->mem, b->mem_len};
}
