/* referer.c — nginx's valid_referers and $invalid_referer (see referer.h). A level's list holds exact host names
 * (lower-cased), head wildcards (".example.com": any name ending so, from "*.example.com" and ".example.com"),
 * tail wildcards ("www.example.": any name starting so, from "www.example.*"), each with an optional URI prefix
 * ("host/uri"), and regexes. A Referer is checked as nginx does: the host is the text after the scheme up to
 * '/' or ':', lower-cased, at most 256 bytes; exact names first, then the longest head wildcard, then the
 * longest tail wildcard (a hit checks its URI prefix, case-sensitively, and decides); then the server_names
 * regexes against the host; then the ~regexes (caseless) against everything after the scheme. "server_names"
 * is resolved when the level is merged, so server_name lines below it count, as in nginx. */
#include <string.h>
#include "referer.h"
#include "vars.h"
#include "../conf/conf_regex.h"

#define REF_IDX (hy_http_referer_module.index)
#define REF_HOST_MAX 256

typedef struct ref_key {
    hy_str_t key; /* lower-cased; ".example.com" (head) or "www.example." (tail) for wildcards */
    hy_str_t uri; /* the URI prefix; .ptr NULL when the parameter had none */
} ref_key_t;

typedef struct ref_conf {
    hy_array_t *exact, *head, *tail; /* ref_key_t; exact is NULL when the level has no valid_referers */
    hy_array_t *regex;               /* hy_regex_t *: ~REGEX, against the referer after the scheme */
    hy_array_t *sn_regex;            /* hy_regex_t *: regex server names, against the host */
    int no_referer, blocked, server_names;
    const hy_http_srv_conf_t *srv;   /* the server whose names "server_names" takes */
    const char *file;                /* the first valid_referers of the level, for merge-time messages */
    unsigned line;
} ref_conf_t;

static bool caseprefix(hy_str_t v, const char *lit)
{
    size_t n = strlen(lit);
    return v.len >= n && hy_str_caseeq((hy_str_t){v.ptr, n}, lit);
}

bool hy_referer_strip_scheme(hy_str_t v, hy_str_t *rest)
{
    if (v.len < sizeof("http://i.ru") - 1)
        return false;
    size_t skip = caseprefix(v, "http://") ? 7 : caseprefix(v, "https://") ? 8 : 0;
    if (skip == 0)
        return false;
    *rest = (hy_str_t){v.ptr + skip, v.len - skip};
    return true;
}

/* ---------------------------------------------------------------- the variable */

static const ref_key_t *find_key(const ref_conf_t *rc, const char *host, size_t n)
{
    const ref_key_t *k = rc->exact->elts, *best = NULL;
    for (size_t i = 0; i < rc->exact->nelts; i++)
        if (k[i].key.len == n && memcmp(k[i].key.ptr, host, n) == 0)
            return &k[i];
    k = rc->head->elts;
    for (size_t i = 0; i < rc->head->nelts; i++)
        if (n > k[i].key.len && memcmp(host + n - k[i].key.len, k[i].key.ptr, k[i].key.len) == 0 &&
            (best == NULL || k[i].key.len > best->key.len))
            best = &k[i];
    if (best)
        return best;
    k = rc->tail->elts;
    for (size_t i = 0; i < rc->tail->nelts; i++)
        if (n > k[i].key.len && memcmp(host, k[i].key.ptr, k[i].key.len) == 0 &&
            (best == NULL || k[i].key.len > best->key.len))
            best = &k[i];
    return best;
}

static bool any_regex(const hy_array_t *a, hy_str_t s)
{
    hy_regex_t **re = a->elts;
    for (size_t i = 0; i < a->nelts; i++)
        if (hy_regex_exec(re[i], s, NULL) > 0)
            return true;
    return false;
}

static bool referer_valid(hy_req_t *req, const ref_conf_t *rc)
{
    if (rc->exact == NULL)
        return true; /* no valid_referers here */
    const hy_str_t *ref = NULL;
    for (size_t i = 0; i < req->num_headers; i++)
        if (hy_str_caseeq(req->headers[i].name, "referer")) {
            ref = &req->headers[i].value;
            break;
        }
    if (ref == NULL)
        return rc->no_referer == 1;
    hy_str_t rest;
    if (!hy_referer_strip_scheme(*ref, &rest))
        return rc->blocked == 1;
    char host[REF_HOST_MAX];
    size_t n = 0;
    for (; n < rest.len && rest.ptr[n] != '/' && rest.ptr[n] != ':'; n++) {
        if (n == REF_HOST_MAX)
            return false;
        char c = rest.ptr[n];
        host[n] = c >= 'A' && c <= 'Z' ? (char)(c | 0x20) : c;
    }
    const ref_key_t *k = find_key(rc, host, n);
    if (k) {
        if (k->uri.ptr == NULL)
            return true;
        const char *p = memchr(rest.ptr + n, '/', rest.len - n);
        size_t left = p ? rest.len - (size_t)(p - rest.ptr) : 0;
        return p && left >= k->uri.len && memcmp(p, k->uri.ptr, k->uri.len) == 0;
    }
    if (any_regex(rc->sn_regex, (hy_str_t){host, n}))
        return true;
    return any_regex(rc->regex, rest);
}

static void get_invalid_referer(hy_req_t *req, hy_var_value_t *v, uintptr_t data)
{
    (void)data;
    const hy_http_loc_conf_t *lc = req->loc ? req->loc : req->srv ? req->srv->loc : NULL;
    const ref_conf_t *rc = lc ? lc->loc_conf[REF_IDX] : NULL;
    bool valid = rc == NULL || referer_valid(req, rc);
    v->ptr = valid ? "" : "1";
    v->len = valid ? 0 : 1;
    v->not_found = false;
}

/* ---------------------------------------------------------------- directives */

static int dup_error(hy_conf_t *cf, hy_str_t key)
{
    return hy_conf_error(cf, "conflicting parameter \"%.*s\"", (int)key.len, key.ptr);
}

static int push_key(hy_conf_t *cf, hy_array_t *list, hy_str_t key, hy_str_t uri, hy_str_t shown)
{
    ref_key_t *k = list->elts;
    for (size_t i = 0; i < list->nelts; i++)
        if (hy_str_eq_str(k[i].key, key))
            return dup_error(cf, shown);
    k = hy_array_push(list);
    k->key = key;
    k->uri = uri;
    return 0;
}

/* nginx's ngx_hash_add_key with NGX_HASH_WILDCARD_KEY: "*.example.com", ".example.com", "www.example.*" or an
 * exact name; at most one '*', no "..". `name` is lower-cased in place (it lives in the conf pool). */
static int add_referer(hy_conf_t *cf, ref_conf_t *rc, hy_str_t name, hy_str_t uri)
{
    hy_str_lower(name.ptr, name.len);
    int stars = 0;
    for (size_t i = 0; i < name.len; i++) {
        if (name.ptr[i] == '*')
            stars++;
        if (stars > 1 || (name.ptr[i] == '.' && i + 1 < name.len && name.ptr[i + 1] == '.'))
            return hy_conf_error(cf, "invalid hostname or wildcard \"%.*s\"", (int)name.len, name.ptr);
    }
    if (name.len > 1 && name.ptr[0] == '.' && stars == 0) { /* ".example.com": example.com and *.example.com */
        if (push_key(cf, rc->exact, (hy_str_t){name.ptr + 1, name.len - 1}, uri, name) != 0)
            return -1;
        return push_key(cf, rc->head, name, uri, name);
    }
    if (name.len > 2 && name.ptr[0] == '*' && name.ptr[1] == '.')
        return push_key(cf, rc->head, (hy_str_t){name.ptr + 1, name.len - 1}, uri, name);
    if (name.len > 2 && name.ptr[name.len - 2] == '.' && name.ptr[name.len - 1] == '*')
        return push_key(cf, rc->tail, (hy_str_t){name.ptr, name.len - 1}, uri, name);
    if (stars)
        return hy_conf_error(cf, "invalid hostname or wildcard \"%.*s\"", (int)name.len, name.ptr);
    /* an exact name conflicts with the exact part of a ".name" given before, as in nginx */
    return push_key(cf, rc->exact, name, uri, name);
}

static int set_valid_referers(hy_conf_t *cf, const hy_directive_t *d, void *conf)
{
    (void)d;
    ref_conf_t *rc = conf;
    size_t n;
    hy_str_t *a = hy_conf_args(cf, &n);
    if (rc->exact == NULL) {
        rc->exact = hy_array_create(cf->pool, 4, sizeof(ref_key_t));
        rc->head = hy_array_create(cf->pool, 2, sizeof(ref_key_t));
        rc->tail = hy_array_create(cf->pool, 2, sizeof(ref_key_t));
        rc->regex = hy_array_create(cf->pool, 2, sizeof(hy_regex_t *));
        rc->sn_regex = hy_array_create(cf->pool, 2, sizeof(hy_regex_t *));
        rc->file = cf->file;
        rc->line = cf->line;
    }
    for (size_t i = 1; i < n; i++) {
        hy_str_t v = a[i];
        if (v.len == 0)
            return hy_conf_error(cf, "invalid referer \"\"");
        if (hy_str_eq(v, "none")) {
            rc->no_referer = 1;
        } else if (hy_str_eq(v, "blocked")) {
            rc->blocked = 1;
        } else if (hy_str_eq(v, "server_names")) {
            rc->server_names = 1;
            rc->srv = cf->srv_conf[hy_http_core_module.index];
        } else if (v.ptr[0] == '~') {
            if (v.len == 1)
                return hy_conf_error(cf, "empty regex in \"%s\"", v.ptr);
            hy_regex_t *re = hy_conf_regex(cf, (hy_str_t){v.ptr + 1, v.len - 1}, true);
            if (re == NULL)
                return -1;
            *(hy_regex_t **)hy_array_push(rc->regex) = re;
        } else {
            hy_str_t name = hy_str_dup(cf->pool, v), uri = {NULL, 0};
            char *slash = memchr(name.ptr, '/', name.len);
            if (slash) {
                uri = (hy_str_t){slash, name.len - (size_t)(slash - name.ptr)};
                name.len = (size_t)(slash - name.ptr);
            }
            if (add_referer(cf, rc, name, uri) != 0)
                return -1;
        }
    }
    return 0;
}

static void *referer_create_loc(hy_conf_t *cf)
{
    ref_conf_t *rc = hy_pcalloc(cf->pool, sizeof(*rc));
    rc->no_referer = rc->blocked = rc->server_names = HY_UNSET;
    return rc;
}

static int referer_merge_loc(hy_conf_t *cf, void *parent, void *child)
{
    ref_conf_t *p = parent, *c = child;
    if (c->exact == NULL) { /* nothing here: the enclosing level's list, whole */
        const hy_http_srv_conf_t *srv = c->srv;
        *c = *p;
        c->srv = srv;
        hy_merge_value(c->no_referer, p->no_referer, 0);
        hy_merge_value(c->blocked, p->blocked, 0);
        return 0;
    }
    if (c->server_names == 1 && c->srv) {
        cf->file = c->file;
        cf->line = c->line;
        const hy_server_name_t *sn = c->srv->server_names->elts;
        for (size_t i = 0; i < c->srv->server_names->nelts; i++) {
            if (sn[i].kind == 3) {
                *(const hy_regex_t **)hy_array_push(c->sn_regex) = sn[i].regex;
                continue;
            }
            /* the core keeps wildcards as ".example.com" / "www.example.": back to the written forms */
            hy_str_t name = sn[i].name;
            char *buf = hy_palloc(cf->pool, name.len + 2);
            if (sn[i].kind == 1) {
                buf[0] = '*';
                memcpy(buf + 1, name.ptr, name.len);
                name = (hy_str_t){buf, name.len + 1};
            } else if (sn[i].kind == 2) {
                memcpy(buf, name.ptr, name.len);
                buf[name.len] = '*';
                name = (hy_str_t){buf, name.len + 1};
            } else {
                memcpy(buf, name.ptr, name.len);
                name = (hy_str_t){buf, name.len};
            }
            if (add_referer(cf, c, name, (hy_str_t){NULL, 0}) != 0)
                return -1;
        }
    }
    if ((c->no_referer == 1 || c->blocked == 1) && c->exact->nelts + c->head->nelts + c->tail->nelts == 0) {
        cf->file = c->file;
        cf->line = c->line;
        return hy_conf_error(cf, "the \"none\" or \"blocked\" referers are specified in the \"valid_referers\" "
                                 "directive without any valid referer");
    }
    if (c->no_referer == HY_UNSET)
        c->no_referer = 0;
    if (c->blocked == HY_UNSET)
        c->blocked = 0;
    return 0;
}

static int referer_postconfiguration(hy_conf_t *cf)
{
    return hy_vars_define(cf, HY_STR("invalid_referer"), get_invalid_referer, 0, 0) < 0 ? -1 : 0;
}

static const hy_directive_t referer_directives[] = {
    {.name = "valid_referers", .ctx = HY_CTX_SERVER | HY_CTX_LOC, .args = HY_ARGS_1MORE, .set = set_valid_referers,
     .conf = HY_CONF_LOC},
    /* nginx's ngx_conf_set_num_slot: checked, then unused (the lists are searched directly) */
    {.name = "referer_hash_max_size", .ctx = HY_CTX_SERVER | HY_CTX_LOC, .args = HY_ARGS_1,
     .set = hy_slot_check_num},
    {.name = "referer_hash_bucket_size", .ctx = HY_CTX_SERVER | HY_CTX_LOC, .args = HY_ARGS_1,
     .set = hy_slot_check_num},
    {0},
};

hy_module_t hy_http_referer_module = {
    .name = "http_referer",
    .directives = referer_directives,
    .create_loc_conf = referer_create_loc,
    .merge_loc_conf = referer_merge_loc,
    .postconfiguration = referer_postconfiguration,
};
