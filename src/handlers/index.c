/* index.c — nginx's index module (ngx_http_index_module). For a URI ending in '/', the index names are tried in
 * order: an absolute name ("/x.html") redirects without a check, a relative one when the file exists
 * (open_file_cache aware); the redirect is a full internal redirect, so rewrites, try_files and error_page
 * apply to the new URI. None found: DECLINED (autoindex, then the chain's 403, follow), or 404 when the
 * directory itself does not exist. */
#include <errno.h>
#include <string.h>
#include <sys/stat.h>
#include "index.h"
#include "../http/phases.h"
#include "../http/path.h"
#include "../http/open_file_cache.h"
#include "../http/vars.h"
#include "../core/log.h"

typedef struct index_loc {
    hy_array_t *index; /* hy_complex_t names (variables allowed, nginx 0.7.x+); NULL → inherit ("index.html") */
} index_loc_t;

static int index_content_phase(hy_req_t *req)
{
    if (req->uri.len == 0 || req->uri.ptr[req->uri.len - 1] != '/')
        return HY_DECLINED;
    if (req->method_id != HY_M_GET && req->method_id != HY_M_HEAD && req->method_id != HY_M_POST)
        return HY_DECLINED;
    const hy_http_loc_conf_t *lc = req->loc;
    const index_loc_t *ic = lc->loc_conf[hy_http_index_module.index];
    size_t dlen;
    char *dir = hy_http_map_uri_to_path(req, lc, req->uri, &dlen);
    const hy_complex_t *names = ic->index->elts;
    bool dir_checked = false;
    for (size_t i = 0; i < ic->index->nelts; i++) {
        hy_str_t nm;
        hy_vars_eval(req, &names[i], &nm);
        if (nm.len == 0)
            continue;
        if (nm.ptr[0] == '/') { /* absolute index: redirect without checking */
            hy_req_internal_redirect(req, nm, req->args);
            return HY_DONE;
        }
        char *path = hy_palloc(req->pool, dlen + nm.len + 1);
        memcpy(path, dir, dlen);
        memcpy(path + dlen, nm.ptr, nm.len);
        path[dlen + nm.len] = '\0';
        int err = 0;
        hy_file_t *f = hy_ofc_open(req, lc, path, dlen + nm.len, &err);
        if (f) {
            hy_file_unref(f);
            char *u = hy_palloc(req->pool, req->uri.len + nm.len + 1);
            memcpy(u, req->uri.ptr, req->uri.len);
            memcpy(u + req->uri.len, nm.ptr, nm.len);
            hy_req_internal_redirect(req, (hy_str_t){u, req->uri.len + nm.len}, req->args);
            return HY_DONE;
        }
        if (err != ENOENT && err != ENOTDIR) {
            int st = hy_http_errno_status(err);
            hy_http_log_open_error(req, "open()", path, err, st == 500 ? HY_LOG_CRIT : HY_LOG_ERR);
            return st;
        }
        if (!dir_checked) {
            dir_checked = true;
            struct stat st;
            int e = hy_http_stat(req, lc, dir, dlen, &st); /* disable_symlinks applies: a refused link is 403 */
            if (e == ELOOP || e == EMLINK) {
                hy_http_log_open_error(req, "open()", dir, e, HY_LOG_ERR);
                return 403;
            }
            if (e != 0 || !S_ISDIR(st.st_mode)) {
                if (lc->log_not_found)
                    hy_req_log(req, HY_LOG_ERR, "\"%s\" is not found (2: No such file or directory)", dir);
                return 404;
            }
        }
    }
    return HY_DECLINED;
}

static int postconfiguration(hy_conf_t *cf)
{
    return hy_http_phase_add(cf, HY_PHASE_CONTENT, index_content_phase);
}

static void *create_loc(hy_conf_t *cf)
{
    return hy_pcalloc(cf->pool, sizeof(index_loc_t));
}

static int merge_loc(hy_conf_t *cf, void *parent, void *child)
{
    index_loc_t *p = parent, *c = child;
    if (c->index == NULL) {
        if (p->index) {
            c->index = p->index;
        } else {
            c->index = hy_array_create(cf->pool, 1, sizeof(hy_complex_t));
            if (hy_vars_compile(cf, HY_STR("index.html"), hy_array_push(c->index)) != 0)
                return -1;
        }
    }
    return 0;
}

static int set_index(hy_conf_t *cf, const hy_directive_t *d, void *conf)
{
    index_loc_t *c = conf;
    size_t n;
    hy_str_t *a = hy_conf_args(cf, &n);
    if (c->index == NULL)
        c->index = hy_array_create(cf->pool, n, sizeof(hy_complex_t));
    for (size_t i = 1; i < n; i++) {
        if (a[i].len == 0)
            return hy_conf_error(cf, "index \"%s\" in \"index\" directive is invalid", a[1].ptr);
        if (a[i].ptr[0] == '/' && i != n - 1) /* nginx: an absolute index ends the search */
            hy_conf_warn(cf, "only the last index in \"index\" directive should be absolute");
        if (hy_vars_compile(cf, a[i], hy_array_push(c->index)) != 0)
            return -1;
    }
    return 0;
}

static const hy_directive_t index_directives[] = {
    {.name = "index", .ctx = HY_CTX_HTTP_ANY, .args = HY_ARGS_1MORE, .set = set_index, .conf = HY_CONF_LOC},
    {0},
};

hy_module_t hy_http_index_module = {
    .name = "http_index",
    .directives = index_directives,
    .create_loc_conf = create_loc,
    .merge_loc_conf = merge_loc,
    .postconfiguration = postconfiguration,
};
