/* error_page.c — nginx's error_page and recursive_error_pages (ngx_http_core_module in nginx):
 *   error_page 404 /404.html;            internal redirect, the response keeps status 404
 *   error_page 404 =200 /empty.gif;      ... with status 200
 *   error_page 404 = /fallback;          ... with the status the fallback answers
 *   error_page 404 @named;               named location
 *   error_page 500 http://x/err;         302 redirect (or =301/=303/=307/=308)
 * Error pages are inherited from the level above only when a level has none. Only the first error of a
 * request is redirected unless recursive_error_pages is on. */
#include <string.h>
#include "error_page.h"
#include "phases.h"
#include "vars.h"

#define EP_IDX (hy_http_error_page_module.index)

typedef struct ep_entry {
    int status;
    int overwrite;
    hy_complex_t uri;
} ep_entry_t;

typedef struct ep_conf {
    hy_array_t *pages; /* ep_entry_t; NULL: inherit */
    int recursive;
} ep_conf_t;

int hy_error_page_parse_overwrite(hy_str_t arg)
{
    if (arg.len == 0 || arg.ptr[0] != '=')
        return -1;
    if (arg.len == 1)
        return 0;
    int64_t v = hy_parse_int(arg.ptr + 1, arg.len - 1);
    if (v <= 0 || v > 999)
        return -1;
    return (int)v;
}

int hy_error_page_redirect_status(int overwrite)
{
    switch (overwrite) {
    case 301: case 302: case 303: case 307: case 308:
        return overwrite;
    default:
        return 302;
    }
}

bool hy_error_page_applies(hy_req_t *req, int status)
{
    if (req->uri.ptr == NULL || req->srv == NULL || req->uri_changes == 0 || req->error_page)
        return false;
    hy_http_loc_conf_t *lc = req->loc ? req->loc : req->srv->loc;
    const ep_conf_t *ec = lc->loc_conf[EP_IDX];
    if (ec == NULL || ec->pages == NULL)
        return false;
    const ep_entry_t *e = ec->pages->elts;
    for (size_t i = 0; i < ec->pages->nelts; i++)
        if (e[i].status == status)
            return true;
    return false;
}

bool hy_error_page_redirect(hy_req_t *req, int status)
{
    if (req->uri.ptr == NULL || req->srv == NULL || req->uri_changes == 0)
        return false;
    hy_http_loc_conf_t *lc = req->loc ? req->loc : req->srv->loc;
    const ep_conf_t *ec = lc->loc_conf[EP_IDX];
    if (ec == NULL || ec->pages == NULL)
        return false;
    if (req->error_page)
        return false;
    const ep_entry_t *e = ec->pages->elts, *found = NULL;
    for (size_t i = 0; i < ec->pages->nelts; i++)
        if (e[i].status == status) {
            found = &e[i];
            break;
        }
    if (found == NULL)
        return false;
    if (!ec->recursive)
        req->error_page = true;
    req->err_status = found->overwrite >= 0 ? found->overwrite : status;
    hy_str_t uri;
    hy_vars_eval(req, &found->uri, &uri);
    if (uri.len && uri.ptr[0] == '/') {
        hy_str_t path, args;
        hy_req_split_args(uri, &path, &args);
        if (req->method_id != HY_M_HEAD) {
            req->method_id = HY_M_GET;
            req->method = HY_STR("GET");
        }
        hy_req_internal_redirect(req, path, args);
        return true;
    }
    if (uri.len && uri.ptr[0] == '@') {
        if (req->method_id != HY_M_HEAD) {
            req->method_id = HY_M_GET;
            req->method = HY_STR("GET");
        }
        hy_req_named_redirect(req, uri);
        return true;
    }
    int st = hy_error_page_redirect_status(found->overwrite);
    req->location = uri;
    req->err_status = 0;
    if (!hy_req_msie_refresh(req)) /* nginx refreshes whatever the redirect's code */
        hy_req_special_response(req, st);
    return true;
}

static void *create_loc(hy_conf_t *cf)
{
    ep_conf_t *c = hy_pcalloc(cf->pool, sizeof(*c));
    c->recursive = HY_UNSET;
    return c;
}

static int merge_loc(hy_conf_t *cf, void *parent, void *child)
{
    ep_conf_t *p = parent, *c = child;
    if (c->pages == NULL)
        c->pages = p->pages;
    hy_merge_value(c->recursive, p->recursive, 0);
    return 0;
}

static int set_error_page(hy_conf_t *cf, const hy_directive_t *d, void *conf)
{
    ep_conf_t *ec = conf;
    size_t n;
    hy_str_t *a = hy_conf_args(cf, &n);
    if (ec->pages == NULL)
        ec->pages = hy_array_create(cf->pool, 4, sizeof(ep_entry_t));
    size_t last = n - 1, codes_end = last;
    int overwrite = -1;
    if (a[n - 2].len && a[n - 2].ptr[0] == '=') {
        overwrite = hy_error_page_parse_overwrite(a[n - 2]);
        if (overwrite < 0)
            return hy_conf_error(cf, "invalid value \"%s\"", a[n - 2].ptr);
        codes_end = n - 2;
        if (codes_end < 2)
            return hy_conf_error(cf, "invalid number of arguments in \"error_page\" directive");
    }
    hy_complex_t uri;
    if (hy_vars_compile(cf, a[last], &uri) != 0)
        return -1;
    if (overwrite == 0 && uri.nparts == 0 && uri.value.len && uri.value.ptr[0] != '/' && uri.value.ptr[0] != '@')
        overwrite = -1; /* "=" with a URL: the redirect status decides */
    for (size_t i = 1; i < codes_end; i++) {
        int64_t code = hy_parse_int(a[i].ptr, a[i].len);
        if (code < 0)
            return hy_conf_error(cf, "invalid value \"%s\"", a[i].ptr);
        if (code < 300 || code > 599)
            return hy_conf_error(cf, "value \"%s\" must be between 300 and 599", a[i].ptr);
        if (code == 499)
            return hy_conf_error(cf, "invalid value \"%s\"", a[i].ptr);
        ep_entry_t *e = hy_array_push(ec->pages);
        e->status = (int)code;
        e->overwrite = overwrite;
        e->uri = uri;
    }
    return 0;
}

static const hy_directive_t error_page_directives[] = {
    {.name = "error_page", .ctx = HY_CTX_HTTP_ANY | HY_CTX_LIF, .args = HY_ARGS_2MORE, .set = set_error_page,
     .conf = HY_CONF_LOC},
    {.name = "recursive_error_pages", .ctx = HY_CTX_HTTP_ANY, .args = HY_ARGS_FLAG, .set = hy_slot_flag,
     .conf = HY_CONF_LOC, .offset = offsetof(ep_conf_t, recursive)},
    {0},
};

static int postconfiguration(hy_conf_t *cf)
{
    hy_http_main_conf_t *m = cf->main_conf[hy_http_core_module.index];
    m->error_page = hy_error_page_redirect;
    return 0;
}

hy_module_t hy_http_error_page_module = {
    .name = "http_error_page",
    .directives = error_page_directives,
    .create_loc_conf = create_loc,
    .merge_loc_conf = merge_loc,
    .postconfiguration = postconfiguration,
};
