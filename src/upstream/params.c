/* params.c — *_param parameters and the HTTP_* fields from the client's header (see params.h). */
#include <string.h>
#include "params.h"
#include "cache.h"
#include "../http/vars.h"

int hy_uparams_set(hy_conf_t *cf, const hy_directive_t *d, void *conf)
{
    hy_uparams_t *ps = (hy_uparams_t *)((char *)conf + d->offset);
    size_t n;
    hy_str_t *a = hy_conf_args(cf, &n);
    if (n == 4 && !hy_str_eq(a[3], "if_not_empty"))
        return hy_conf_error(cf, "invalid parameter \"%s\"", a[3].ptr);
    if (ps->list == NULL)
        ps->list = hy_array_create(cf->pool, 16, sizeof(hy_uparam_t));
    hy_uparam_t *p = hy_array_push(ps->list);
    p->name = hy_str_dup(cf->pool, a[1]);
    p->if_not_empty = n == 4;
    ps->nhttp += a[1].len > 5 && memcmp(a[1].ptr, "HTTP_", 5) == 0;
    return hy_vars_compile(cf, a[2], &p->value);
}

void hy_uparams_merge(hy_uparams_t *c, const hy_uparams_t *p)
{
    if (c->list == NULL)
        c->list = p->list, c->nhttp = p->nhttp;
}

/* "X-Forwarded-For" → is it named by a parameter "HTTP_X_FORWARDED_FOR"? */
static bool overridden(const hy_uparams_t *ps, hy_str_t field)
{
    if (ps->list == NULL || ps->nhttp == 0)
        return false;
    const hy_uparam_t *p = ps->list->elts;
    for (size_t i = 0; i < ps->list->nelts; i++) {
        hy_str_t nm = p[i].name;
        if (nm.len != field.len + 5 || memcmp(nm.ptr, "HTTP_", 5) != 0)
            continue;
        size_t k = 0;
        for (; k < field.len; k++) {
            char c = field.ptr[k];
            c = c == '-' ? '_' : (c >= 'a' && c <= 'z') ? (char)(c - 32) : c;
            if (c != nm.ptr[5 + k])
                break;
        }
        if (k == field.len)
            return true;
    }
    return false;
}

static hy_str_t http_name(hy_pool_t *pool, hy_str_t field)
{
    char *s = hy_palloc(pool, field.len + 5);
    memcpy(s, "HTTP_", 5);
    for (size_t k = 0; k < field.len; k++) {
        char c = field.ptr[k];
        s[5 + k] = c == '-' ? '_' : (c >= 'a' && c <= 'z') ? (char)(c - 32) : c;
    }
    return (hy_str_t){s, field.len + 5};
}

/* With the cache on, the client's conditional and range fields do not go to the upstream: nginx's cache parameters
 * replace them (If-Modified-Since and If-None-Match carry the stored validators while revalidating). */
static const struct {
    const char *field, *param, *var;
} cache_params[] = {
    {"If-Modified-Since", "HTTP_IF_MODIFIED_SINCE", "upstream_cache_last_modified"},
    {"If-Unmodified-Since", "HTTP_IF_UNMODIFIED_SINCE", NULL},
    {"If-None-Match", "HTTP_IF_NONE_MATCH", "upstream_cache_etag"},
    {"If-Match", "HTTP_IF_MATCH", NULL},
    {"Range", "HTTP_RANGE", NULL},
    {"If-Range", "HTTP_IF_RANGE", NULL},
};

static bool cache_field(hy_str_t nm)
{
    for (size_t i = 0; i < HY_ARRAY_SIZE(cache_params); i++)
        if (hy_str_caseeq(nm, cache_params[i].field))
            return true;
    return false;
}

void hy_uparams_build(hy_ureq_t *u, const hy_uparams_t *ps, bool pass_headers)
{
    hy_req_t *req = u->req;
    size_t np = ps->list ? ps->list->nelts : 0;
    size_t cap = np + (pass_headers ? req->num_headers : 0) + HY_ARRAY_SIZE(cache_params);
    hy_header_t *out = hy_palloc(req->pool, (cap + 1) * sizeof(*out));
    size_t n = 0;
    const hy_uparam_t *p = np ? ps->list->elts : NULL;
    for (size_t i = 0; i < np; i++) {
        hy_str_t v;
        hy_vars_eval(req, &p[i].value, &v);
        if (v.len == 0 && p[i].if_not_empty)
            continue;
        out[n++] = (hy_header_t){p[i].name, v};
    }
    bool cache = u->cache_conf != NULL && hy_ucache_on(u->cache_conf);
    for (size_t i = 0; cache && i < HY_ARRAY_SIZE(cache_params); i++) {
        hy_str_t pn = {(char *)cache_params[i].param, strlen(cache_params[i].param)}, v = HY_STR_NULL;
        bool named = false;
        for (size_t k = 0; k < np && !named; k++)
            named = hy_str_eq_str(p[k].name, pn);
        if (named)
            continue;
        if (cache_params[i].var != NULL) {
            hy_var_value_t vv;
            if (hy_var_get_by_name(req, (hy_str_t){(char *)cache_params[i].var, strlen(cache_params[i].var)}, &vv) &&
                !vv.not_found)
                v = (hy_str_t){vv.ptr, vv.len};
        }
        if (v.len)
            out[n++] = (hy_header_t){pn, v};
    }
    if (pass_headers)
        for (size_t i = 0; i < req->num_headers; i++) {
            hy_str_t nm = req->headers[i].name;
            bool ok = nm.len > 0;
            for (size_t k = 0; k < nm.len && ok; k++) /* nginx passes only fields with a valid name */
                ok = (nm.ptr[k] >= 'a' && nm.ptr[k] <= 'z') || (nm.ptr[k] >= 'A' && nm.ptr[k] <= 'Z') ||
                     (nm.ptr[k] >= '0' && nm.ptr[k] <= '9') || nm.ptr[k] == '-';
            bool range = hy_str_caseeq(nm, "Range") || hy_str_caseeq(nm, "If-Range");
            if (!ok || overridden(ps, nm) || (cache && cache_field(nm) && !(range && hy_ucache_passes_range(u))))
                continue;
            size_t k = 0; /* a repeated field joins the first one's value (", ", "; " for Cookie), as nginx */
            while (k < i && !hy_str_caseeq_str(req->headers[k].name, nm))
                k++;
            if (k < i) {
                hy_str_t hn = http_name(req->pool, nm);
                for (size_t j = np; j < n; j++)
                    if (hy_str_eq_str(out[j].name, hn)) {
                        hy_str_t a = out[j].value, b = req->headers[i].value;
                        char *v = hy_palloc(req->pool, a.len + b.len + 2);
                        if (a.len)
                            memcpy(v, a.ptr, a.len);
                        v[a.len] = hy_str_caseeq(nm, "Cookie") ? ';' : ',', v[a.len + 1] = ' ';
                        if (b.len)
                            memcpy(v + a.len + 2, b.ptr, b.len);
                        out[j].value = (hy_str_t){v, a.len + b.len + 2};
                        break;
                    }
                continue;
            }
            out[n++] = (hy_header_t){http_name(req->pool, nm), req->headers[i].value};
        }
    u->headers = out;
    u->nheaders = n;
}
