/* static.c — nginx's static module: the last content handler. Maps the URI to a file under root/alias, answers
 * 301 for a directory, 405 for methods other than GET/HEAD, and sends the file (hy_http_send_file: sendfile or
 * memory, ETag, Last-Modified) with Accept-Ranges. Conditional requests (304/412) are the not_modified filter's
 * and ranges (206/416) the range filter's; index files, listings and precompressed variants are other
 * content handlers before this one (src/process/modules.c). A URI ending in '/' is declined: the chain's end
 * answers 403 for it. */
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>
#include <arpa/inet.h>
#include <netinet/in.h>
#include "static.h"
#include "../http/phases.h"
#include "../http/path.h"
#include "../http/uri.h"
#include "../http/open_file_cache.h"
#include "../core/log.h"
#include "../event/sock.h"

static void redirect_dir(hy_req_t *req)
{
    /* nginx: 301 to the URI with a slash; the core makes it absolute (absolute_redirect, port_in_redirect) */
    size_t esc = hy_uri_escape(NULL, req->uri.ptr, req->uri.len); /* "/dir sp" -> "/dir%20sp/" (nginx) */
    char *loc = hy_palloc(req->pool, esc + req->args.len + 3);
    size_t n = hy_uri_escape(loc, req->uri.ptr, req->uri.len);
    loc[n++] = '/';
    if (req->args.len) {
        loc[n++] = '?';
        memcpy(loc + n, req->args.ptr, req->args.len);
        n += req->args.len;
    }
    req->location = (hy_str_t){loc, n};
    hy_req_error(req, 301);
}

/* CONTENT: the last handler of the chain */
static int static_content_phase(hy_req_t *req)
{
    if (req->method_id != HY_M_GET && req->method_id != HY_M_HEAD && req->method_id != HY_M_POST)
        return 405;
    if (req->uri.len > 0 && req->uri.ptr[req->uri.len - 1] == '/')
        return HY_DECLINED;
    const hy_http_loc_conf_t *lc = req->loc;
    size_t plen;
    char *path = hy_http_map_uri_to_path(req, lc, req->uri, &plen);
    int err = 0;
    hy_file_t *f = hy_ofc_open(req, lc, path, plen, &err);
    if (f == NULL) {
        int st = hy_http_errno_status(err);
        if (st != 404 || lc->log_not_found)
            hy_http_log_open_error(req, "open()", path, err, st == 500 ? HY_LOG_CRIT : HY_LOG_ERR);
        return st;
    }
    if (f->is_dir) {
        hy_file_unref(f);
        redirect_dir(req);
        return HY_DONE;
    }
    if (req->method_id == HY_M_POST) {
        hy_file_unref(f);
        return 405;
    }
    req->accept_ranges = true; /* the range filter may answer 206/416 */
    hy_http_send_file(req, f);
    return HY_DONE;
}

static int postconfiguration(hy_conf_t *cf)
{
    return hy_http_phase_add(cf, HY_PHASE_CONTENT, static_content_phase);
}

hy_module_t hy_static_module = {
    .name = "static",
    .postconfiguration = postconfiguration,
};
