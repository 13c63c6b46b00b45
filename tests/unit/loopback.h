/* loopback.h — run a synthetic request through the real request core (phases, handlers, filters) without a
 * socket (h2o's loopback connection): a fake protocol records what would go on the wire. Header-only; include
 * it once per test binary, after harness.h. */
#ifndef HY_TESTS_LOOPBACK_H
#define HY_TESTS_LOOPBACK_H

#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "process/process.h"
#include "http/core.h"
#include "http/request.h"
#include "http/phases.h"
#include "core/outq.h"
#include "event/sock.h"

typedef struct lb_resp {
    int status;
    int sends;        /* calls of ops->send */
    bool finished, aborted;
    char body[8192];
    size_t body_len;
} lb_resp_t;

static lb_resp_t lb_last;

static inline void lb_send(hy_req_t *req, bool is_final)
{
    lb_last.status = req->status;
    lb_last.sends++;
    for (hy_seg_t *s = req->body.head; s; s = s->next)
        if (s->kind == HY_SEG_MEM && lb_last.body_len + s->mem.len < sizeof(lb_last.body)) {
            memcpy(lb_last.body + lb_last.body_len, s->mem.ptr, s->mem.len);
            lb_last.body_len += s->mem.len;
        }
    hy_outq_clear(&req->body);
    if (is_final) {
        lb_last.finished = true;
        req->finished = true;
    }
}

static inline void lb_abort(hy_req_t *req)
{
    lb_last.aborted = true;
}

static const hy_conn_ops_t lb_ops = {.send = lb_send, .abort = lb_abort};

/* Load "events {} http { <http_body> }" from a temporary prefix (quiet: stderr muted, for expected errors). */
static inline hy_cycle_t *lb_load(const char *http_body, bool quiet)
{
    static char dir[64];
    if (dir[0] == '\0') {
        snprintf(dir, sizeof(dir), "/tmp/hy-lb-XXXXXX");
        if (mkdtemp(dir) == NULL)
            return NULL;
    }
    char path[128];
    snprintf(path, sizeof(path), "%s/test.conf", dir);
    FILE *f = fopen(path, "w");
    if (f == NULL)
        return NULL;
    fprintf(f, "error_log stderr;\nevents {}\nhttp {\naccess_log off;\n%s\n}\n", http_body);
    fclose(f);
    char prefix[80];
    snprintf(prefix, sizeof(prefix), "%s/", dir);
    hy_opts_t opts = {.prefix = prefix, .conf_file = path, .quiet = true};
    int saved = -1;
    if (quiet) {
        fflush(stderr);
        saved = dup(2);
        int devnull = open("/dev/null", O_WRONLY);
        dup2(devnull, 2);
        close(devnull);
    }
    hy_cycle_t *c = hy_cycle_load(&opts);
    if (quiet) {
        fflush(stderr);
        dup2(saved, 2);
        close(saved);
    }
    return c;
}

/* A request on the first listening address of the cycle: method, target, Host header (NULL: none). The
 * request lives in *pool (the caller destroys it). Not processed yet: tests may adjust it, then lb_run(). */
static inline hy_req_t *lb_request(hy_cycle_t *c, hy_pool_t **pool, const char *method, const char *target,
                            const char *host)
{
    static hy_conn_t conn;
    hy_http_main_conf_t *m = hy_http_main(c);
    memset(&conn, 0, sizeof(conn));
    conn.ops = &lb_ops;
    conn.addr = m->addrs->elts;
    conn.cycle = c;
    conn.scheme = HY_STR("http");
    snprintf(conn.peer_text, sizeof(conn.peer_text), "127.0.0.1");
    *pool = hy_pool_create(4096);
    hy_req_t *r = hy_pcalloc(*pool, sizeof(*r));
    r->pool = *pool;
    r->conn = &conn;
    r->method = (hy_str_t){(char *)method, strlen(method)};
    r->method_id = hy_http_method_id(r->method);
    r->target = (hy_str_t){(char *)target, strlen(target)};
    r->version = 11;
    r->content_length = -1;
    r->content_length_n = -1;
    r->last_modified = -1;
    r->keepalive = true;
    if (host) {
        r->headers = hy_palloc(*pool, sizeof(hy_header_t));
        r->headers[0] = (hy_header_t){HY_STR("Host"), (hy_str_t){(char *)host, strlen(host)}};
        r->num_headers = 1;
    }
    return r;
}

static inline lb_resp_t *lb_run(hy_req_t *r)
{
    memset(&lb_last, 0, sizeof(lb_last));
    hy_req_process(r);
    return &lb_last;
}

#endif
