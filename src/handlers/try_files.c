/* try_files.c — nginx's try_files: each parameter but the last names a file (or, ending in "/", a directory)
 * under root/alias; the first that exists becomes the URI the content handler serves. The last parameter is the
 * fallback: an internal redirect to a URI (args after '?'), a named location, or "=code". Like nginx, the
 * directive is not inherited by nested locations or "if" blocks. */
#include <string.h>
#include <sys/stat.h>
#include "try_files.h"
#include "../http/phases.h"
#include "../http/path.h"
#include "../http/vars.h"
#include "../http/open_file_cache.h"
#include "../core/log.h"

#define TF_IDX (hy_http_try_files_module.index)

typedef struct tf_item {
    hy_complex_t cv;
    bool test_dir;
} tf_item_t;

typedef struct tf_conf {
    tf_item_t *items; /* NULL: no try_files at this level */
    size_t n;
} tf_conf_t;

/* PRECONTENT: the first existing file becomes req->uri (DECLINED: content handlers go on), else the fallback */
static int try_files_phase(hy_req_t *req)
{
    hy_http_loc_conf_t *lc = req->loc;
    const tf_conf_t *tc = lc->loc_conf[TF_IDX];
    if (tc == NULL || tc->items == NULL)
        return HY_DECLINED;
    for (size_t i = 0; i + 1 < tc->n; i++) {
        hy_str_t name;
        hy_vars_eval(req, &tc->items[i].cv, &name);
        if (name.len == 0)
            continue;
        size_t plen;
        char *path = hy_http_map_uri_to_path(req, lc, name, &plen);
        struct stat st;
        if (hy_http_stat(req, lc, path, plen, &st) != 0) /* disable_symlinks applies */
            continue;
        if ((S_ISDIR(st.st_mode) != 0) != tc->items[i].test_dir)
            continue;
        req->uri = name;
        return HY_DECLINED;
    }
    const tf_item_t *fb = &tc->items[tc->n - 1];
    hy_str_t v;
    hy_vars_eval(req, &fb->cv, &v);
    if (v.len > 1 && v.ptr[0] == '=') {
        int64_t code = hy_parse_int(v.ptr + 1, v.len - 1);
        if (code < 0 || code > 999)
            code = 500;
        return (int)code == 0 ? 500 : (int)code;
    }
    if (v.len && v.ptr[0] == '@') {
        hy_req_named_redirect(req, v);
        return HY_DONE;
    }
    hy_str_t uri, args;
    hy_req_split_args(v, &uri, &args);
    hy_req_internal_redirect(req, uri, args);
    return HY_DONE;
}

static bool seen; /* a try_files directive in the http{} being configured */

static int postconfiguration(hy_conf_t *cf)
{
    /* a configuration without try_files pays nothing for it on its requests */
    bool used = seen;
    seen = false;
    return used ? hy_http_phase_add(cf, HY_PHASE_PRECONTENT, try_files_phase) : 0;
}

static void *create_loc(hy_conf_t *cf)
{
    return hy_pcalloc(cf->pool, sizeof(tf_conf_t));
}

static int set_try_files(hy_conf_t *cf, const hy_directive_t *d, void *conf)
{
    tf_conf_t *tc = conf;
    size_t n;
    hy_str_t *a = hy_conf_args(cf, &n);
    if (tc->items)
        return hy_conf_error(cf, "\"try_files\" directive is duplicate");
    seen = true;
    tc->n = n - 1;
    tc->items = hy_pcalloc(cf->pool, sizeof(tf_item_t) * tc->n);
    for (size_t i = 1; i < n; i++) {
        hy_str_t w = a[i];
        tf_item_t *it = &tc->items[i - 1];
        if (i + 1 < n && w.len > 1 && w.ptr[w.len - 1] == '/') {
            it->test_dir = true;
            w.len--;
        }
        if (i + 1 == n && w.len > 1 && w.ptr[0] == '=') {
            int64_t code = hy_parse_int(w.ptr + 1, w.len - 1);
            if (code < 0 || code > 999)
                return hy_conf_error(cf, "invalid code \"%s\"", w.ptr);
        }
        if (hy_vars_compile(cf, w, &it->cv) != 0)
            return -1;
    }
    return 0;
}

static const hy_directive_t try_files_directives[] = {
    {.name = "try_files", .ctx = HY_CTX_SERVER | HY_CTX_LOC, .args = HY_ARGS_2MORE, .set = set_try_files,
     .conf = HY_CONF_LOC},
    {0},
};

hy_module_t hy_http_try_files_module = {
    .name = "http_try_files",
    .directives = try_files_directives,
    .create_loc_conf = create_loc,
    .postconfiguration = postconfiguration,
};
