/* random_index.c — nginx's random_index module (ngx_http_random_index_module). With `random_index on` in a
 * location, a GET/HEAD/POST whose URI ends in '/' is internally redirected to a file picked at random among the
 * directory's regular files (symbolic links followed) whose names do not start with '.'; it runs before index.
 * No such file: DECLINED (index, autoindex, then the chain's 403). A directory that cannot be opened: 404
 * (missing), 403 (permissions) or 500, logged as nginx's `opendir() "..." failed`. */
#include <dirent.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include "random_index.h"
#include "../http/phases.h"
#include "../http/path.h"
#include "../http/open_file_cache.h"
#include "../core/log.h"

typedef struct ri_loc {
    int enable;
} ri_loc_t;

static bool is_file(const char *dir, size_t dlen, const struct dirent *de, hy_pool_t *pool)
{
    if (de->d_type == DT_REG)
        return true;
    if (de->d_type != DT_LNK && de->d_type != DT_UNKNOWN)
        return false;
    size_t nlen = strlen(de->d_name);
    char *p = hy_palloc(pool, dlen + nlen + 1);
    memcpy(p, dir, dlen);
    memcpy(p + dlen, de->d_name, nlen + 1);
    struct stat st;
    return stat(p, &st) == 0 && S_ISREG(st.st_mode);
}

static int random_index_content_phase(hy_req_t *req)
{
    if (req->uri.len == 0 || req->uri.ptr[req->uri.len - 1] != '/')
        return HY_DECLINED;
    if (req->method_id != HY_M_GET && req->method_id != HY_M_HEAD && req->method_id != HY_M_POST)
        return HY_DECLINED;
    const hy_http_loc_conf_t *lc = req->loc;
    const ri_loc_t *rc = lc->loc_conf[hy_http_random_index_module.index];
    if (rc->enable != 1)
        return HY_DECLINED;
    size_t dlen;
    char *dir = hy_http_map_uri_to_path(req, lc, req->uri, &dlen); /* ends in '/' */
    DIR *d = opendir(dir);
    if (d == NULL) {
        int err = errno, st = hy_http_errno_status(err);
        hy_http_log_open_error(req, "opendir()", dir, err, st == 500 ? HY_LOG_CRIT : HY_LOG_ERR);
        return st;
    }
    /* one pass, reservoir sampling: the k-th file replaces the choice with probability 1/k */
    hy_str_t pick = HY_STR_NULL;
    uint32_t k = 0;
    struct dirent *de;
    errno = 0;
    while ((de = readdir(d)) != NULL) {
        if (de->d_name[0] == '.' || !is_file(dir, dlen, de, req->pool))
            continue;
        if (arc4random_uniform(++k) == 0)
            pick = hy_str_dup(req->pool, (hy_str_t){de->d_name, strlen(de->d_name)});
        errno = 0;
    }
    int err = errno;
    closedir(d);
    if (err) {
        hy_http_log_open_error(req, "readdir()", dir, err, HY_LOG_CRIT);
        return 500;
    }
    if (k == 0)
        return HY_DECLINED;
    char *u = hy_palloc(req->pool, req->uri.len + pick.len);
    memcpy(u, req->uri.ptr, req->uri.len);
    memcpy(u + req->uri.len, pick.ptr, pick.len);
    hy_req_internal_redirect(req, (hy_str_t){u, req->uri.len + pick.len}, req->args);
    return HY_DONE;
}

static int postconfiguration(hy_conf_t *cf)
{
    return hy_http_phase_add(cf, HY_PHASE_CONTENT, random_index_content_phase);
}

static void *create_loc(hy_conf_t *cf)
{
    ri_loc_t *l = hy_pcalloc(cf->pool, sizeof(*l));
    l->enable = HY_UNSET;
    return l;
}

static int merge_loc(hy_conf_t *cf, void *parent, void *child)
{
    (void)cf;
    ri_loc_t *p = parent, *c = child;
    hy_merge_value(c->enable, p->enable, 0);
    return 0;
}

static const hy_directive_t random_index_directives[] = {
    {.name = "random_index", .ctx = HY_CTX_LOC, .args = HY_ARGS_FLAG, .set = hy_slot_flag, .conf = HY_CONF_LOC,
     .offset = offsetof(ri_loc_t, enable)},
    {0},
};

hy_module_t hy_http_random_index_module = {
    .name = "http_random_index",
    .directives = random_index_directives,
    .create_loc_conf = create_loc,
    .merge_loc_conf = merge_loc,
    .postconfiguration = postconfiguration,
};
