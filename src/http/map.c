/* map.c — nginx's map module: `map SOURCE $var { default V; KEY V; ~REGEX V; ~*REGEX V; hostnames; volatile;
 * include FILE; }` at http level. The variable is evaluated lazily (cached per request unless volatile).
 * Matching order as nginx: exact key (case-insensitive), then wildcard hostnames (most specific leading
 * wildcard, then trailing), then regular expressions in order (captures usable in the value), then default. */
#include <string.h>
#include "vars.h"
#include "../conf/cycle.h"
#include "../conf/conf_regex.h"

typedef struct map_kv {
    hy_str_t key; /* lower-cased; for wildcards without "*." / ".*" */
    hy_complex_t value;
} map_kv_t;

typedef struct map_re {
    hy_regex_t *re;
    hy_complex_t value;
} map_re_t;

typedef struct map {
    hy_complex_t src;
    hy_complex_t *deflt;  /* NULL: "" */
    hy_array_t *exact;    /* map_kv_t while parsing */
    map_kv_t **table;     /* open addressing over exact, size mask+1 */
    size_t mask;
    hy_array_t *head_wc;  /* map_kv_t: key ".example.com" matches any name ending with it */
    hy_array_t *tail_wc;  /* map_kv_t: key "www.example." matches any name starting with it */
    hy_array_t *regex;    /* map_re_t */
    bool hostnames, is_volatile;
} map_t;

static bool eq_lc(hy_str_t key, const char *p, size_t n)
{
    if (key.len != n)
        return false;
    for (size_t i = 0; i < n; i++) {
        unsigned char c = (unsigned char)p[i];
        if (c >= 'A' && c <= 'Z')
            c |= 0x20;
        if ((unsigned char)key.ptr[i] != c)
            return false;
    }
    return true;
}

static bool suffix_lc(hy_str_t suf, const char *p, size_t n)
{
    return n > suf.len && eq_lc(suf, p + n - suf.len, suf.len);
}

static const hy_complex_t *find(hy_req_t *req, map_t *m, hy_str_t s)
{
    size_t len = s.len;
    if (m->hostnames && len && s.ptr[len - 1] == '.')
        len--;
    if (m->table) {
        for (size_t i = hy_hash(s.ptr, len, true) & m->mask;; i = (i + 1) & m->mask) {
            map_kv_t *kv = m->table[i];
            if (kv == NULL)
                break;
            if (eq_lc(kv->key, s.ptr, len))
                return &kv->value;
        }
    }
    if (m->hostnames) {
        map_kv_t *best = NULL, *kv = m->head_wc->elts;
        for (size_t i = 0; i < m->head_wc->nelts; i++) {
            /* ".example.com" keys: "x.example.com" (and, for the ".name" form, "example.com" itself is an
             * exact key added at parse time) */
            if (suffix_lc(kv[i].key, s.ptr, len) && (best == NULL || kv[i].key.len > best->key.len))
                best = &kv[i];
        }
        if (best)
            return &best->value;
        kv = m->tail_wc->elts;
        for (size_t i = 0; i < m->tail_wc->nelts; i++)
            if (len > kv[i].key.len && eq_lc(kv[i].key, s.ptr, kv[i].key.len) &&
                (best == NULL || kv[i].key.len > best->key.len))
                best = &kv[i];
        if (best)
            return &best->value;
    }
    map_re_t *re = m->regex->elts;
    for (size_t i = 0; i < m->regex->nelts; i++) {
        /* as nginx's ngx_http_regex_exec: a match becomes the request's $1..$9 (for the value, and for whatever
         * reads them after this map was evaluated); a failed one leaves them */
        if (hy_regex_exec(re[i].re, s, hy_req_captures(req)) > 0) {
            hy_vars_named_captures(req);
            return &re[i].value;
        }
    }
    return NULL;
}

static void map_get(hy_req_t *req, hy_var_value_t *v, uintptr_t data)
{
    map_t *m = (map_t *)data;
    hy_str_t src, out;
    hy_vars_eval(req, &m->src, &src);
    const hy_complex_t *val = find(req, m, src);
    if (val == NULL)
        val = m->deflt;
    if (val == NULL) {
        v->ptr = "", v->len = 0, v->not_found = false;
        return;
    }
    hy_vars_eval(req, val, &out);
    v->ptr = out.ptr ? out.ptr : "";
    v->len = out.len;
    v->not_found = false;
}

static int add_exact(hy_conf_t *cf, map_t *m, hy_str_t key, const hy_complex_t *value, const char *orig)
{
    map_kv_t *kv = m->exact->elts;
    for (size_t i = 0; i < m->exact->nelts; i++)
        if (hy_str_eq_str(kv[i].key, key))
            return hy_conf_error(cf, "conflicting parameter \"%s\"", orig);
    kv = hy_array_push(m->exact);
    kv->key = key;
    kv->value = *value;
    return 0;
}

static int add_wc(hy_conf_t *cf, hy_array_t *list, hy_str_t key, const hy_complex_t *value, const char *orig)
{
    map_kv_t *kv = list->elts;
    for (size_t i = 0; i < list->nelts; i++)
        if (hy_str_eq_str(kv[i].key, key))
            return hy_conf_error(cf, "conflicting parameter \"%s\"", orig);
    kv = hy_array_push(list);
    kv->key = key;
    kv->value = *value;
    return 0;
}

static int map_raw(hy_conf_t *cf, void *data)
{
    map_t *m = data;
    size_t n;
    hy_str_t *a = hy_conf_args(cf, &n);
    if (n == 1 && hy_str_eq(a[0], "hostnames")) {
        m->hostnames = true;
        return 0;
    }
    if (n == 1 && hy_str_eq(a[0], "volatile")) {
        m->is_volatile = true;
        return 0;
    }
    if (n != 2)
        return hy_conf_error(cf, "invalid number of the map parameters");
    hy_complex_t value;
    if (hy_vars_compile(cf, a[1], &value) != 0)
        return -1;
    hy_str_t key = a[0];
    if (hy_str_eq(key, "default")) {
        if (m->deflt)
            return hy_conf_error(cf, "duplicate default map parameter");
        m->deflt = hy_palloc(cf->pool, sizeof(*m->deflt));
        *m->deflt = value;
        return 0;
    }
    if (key.len && key.ptr[0] == '~') {
        bool caseless = key.len > 1 && key.ptr[1] == '*';
        hy_str_t pat = {key.ptr + 1 + caseless, key.len - 1 - caseless};
        hy_regex_t *re = hy_conf_regex(cf, pat, caseless);
        if (re == NULL)
            return -1;
        hy_vars_add_named_regex(cf, re); /* its named captures become variables, as nginx */
        map_re_t *r = hy_array_push(m->regex);
        r->re = re;
        r->value = value;
        return 0;
    }
    if (key.len && key.ptr[0] == '\\')
        key.ptr++, key.len--;
    hy_str_t lc = hy_str_dup(cf->pool, key);
    hy_str_lower(lc.ptr, lc.len);
    const char *orig = lc.ptr; /* nginx names the lower-cased key in its messages */
    if (m->hostnames && lc.len && (lc.ptr[0] == '*' || lc.ptr[0] == '.' || lc.ptr[lc.len - 1] == '*')) {
        char *star = memchr(lc.ptr, '*', lc.len);
        bool head = lc.len > 2 && lc.ptr[0] == '*' && lc.ptr[1] == '.' && !memchr(lc.ptr + 1, '*', lc.len - 1);
        bool dot = lc.len > 1 && lc.ptr[0] == '.' && star == NULL;
        bool tail = lc.len > 2 && lc.ptr[lc.len - 1] == '*' && lc.ptr[lc.len - 2] == '.' && star == lc.ptr + lc.len - 1;
        if (head)
            return add_wc(cf, m->head_wc, (hy_str_t){lc.ptr + 1, lc.len - 1}, &value, orig);
        if (dot) { /* ".example.com": example.com and *.example.com */
            if (add_exact(cf, m, (hy_str_t){lc.ptr + 1, lc.len - 1}, &value, orig) != 0)
                return -1;
            return add_wc(cf, m->head_wc, lc, &value, orig);
        }
        if (tail)
            return add_wc(cf, m->tail_wc, (hy_str_t){lc.ptr, lc.len - 1}, &value, orig);
        return hy_conf_error(cf, "invalid hostname or wildcard \"%s\"", orig);
    }
    if (m->hostnames && memchr(lc.ptr, '*', lc.len))
        return hy_conf_error(cf, "invalid hostname or wildcard \"%s\"", orig);
    return add_exact(cf, m, lc, &value, orig);
}

static int set_map(hy_conf_t *cf, const hy_directive_t *d, void *conf)
{
    size_t n;
    hy_str_t *a = hy_conf_args(cf, &n);
    hy_str_t src = a[1], dst = a[2];
    if (dst.len < 2 || dst.ptr[0] != '$')
        return hy_conf_error(cf, "invalid variable name \"%s\"", dst.ptr);
    map_t *m = hy_pcalloc(cf->pool, sizeof(*m));
    if (hy_vars_compile(cf, src, &m->src) != 0)
        return -1;
    hy_str_t name = {dst.ptr + 1, dst.len - 1};
    m->exact = hy_array_create(cf->pool, 8, sizeof(map_kv_t));
    m->head_wc = hy_array_create(cf->pool, 2, sizeof(map_kv_t));
    m->tail_wc = hy_array_create(cf->pool, 2, sizeof(map_kv_t));
    m->regex = hy_array_create(cf->pool, 2, sizeof(map_re_t));
    hy_str_t name_copy = hy_str_dup(cf->pool, name);
    hy_conf_t saved = *cf;
    cf->raw = map_raw;
    cf->raw_data = m;
    int rc = hy_conf_parse_block(cf);
    cf->raw = saved.raw;
    cf->raw_data = saved.raw_data;
    if (rc != 0)
        return rc;
    if (m->exact->nelts) {
        size_t size = 4;
        while (size < m->exact->nelts * 2)
            size <<= 1;
        m->table = hy_pcalloc(cf->pool, size * sizeof(map_kv_t *));
        m->mask = size - 1;
        map_kv_t *kv = m->exact->elts;
        for (size_t i = 0; i < m->exact->nelts; i++) {
            size_t j = hy_hash(kv[i].key.ptr, kv[i].key.len, true) & m->mask;
            while (m->table[j])
                j = (j + 1) & m->mask;
            m->table[j] = &kv[i];
        }
    }
    return hy_vars_define(cf, name_copy, map_get, (uintptr_t)m, m->is_volatile ? HY_VAR_NOCACHE : 0) < 0 ? -1 : 0;
}

static const hy_directive_t map_directives[] = {
    {.name = "map", .ctx = HY_CTX_HTTP, .args = HY_ARGS_2 | HY_ARGS_BLOCK, .set = set_map},
    {0},
};

hy_module_t hy_http_map_module = {
    .name = "http_map",
    .directives = map_directives,
};
