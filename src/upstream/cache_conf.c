/* cache_conf.c — the directives of the response cache (see cache.h): *_cache_path, *_cache, *_cache_key,
 * *_cache_valid, *_cache_bypass, *_no_cache and the inheritance of the cache settings. */
#include <string.h>
#include "cache.h"
#include "../conf/zone.h"
#include "../conf/cycle.h"
#include "../http/vars.h"

static const char cache_tag; /* the keys zones' owner */
/* the cache paths of the newest configuration parsed (in a worker: its own), for *_cache with variables */
static const hy_cycle_t *paths_cycle;
static hy_array_t *paths;

const hy_enum_t hy_ucache_methods_names[] = {
    {"GET", HY_UCACHE_GET},
    {"HEAD", HY_UCACHE_HEAD},
    {"POST", HY_UCACHE_POST},
    {NULL, 0},
};

const hy_enum_t hy_ucache_stale_names[] = {
    {"error", HY_UPS_FT_ERROR},
    {"timeout", HY_UPS_FT_TIMEOUT},
    {"invalid_header", HY_UPS_FT_INVALID_HEADER},
    {"updating", HY_UCACHE_STALE_UPDATING},
    {"http_500", HY_UPS_FT_500},
    {"http_502", HY_UPS_FT_502},
    {"http_503", HY_UPS_FT_503},
    {"http_504", HY_UPS_FT_504},
    {"http_403", HY_UPS_FT_403},
    {"http_404", HY_UPS_FT_404},
    {"http_429", HY_UPS_FT_429},
    {"off", 0},
    {NULL, 0},
};

void hy_ucache_conf_init(hy_ucache_conf_t *c)
{
    memset(c, 0, sizeof(*c));
    c->set = HY_UNSET;
    c->methods = c->use_stale = HY_UNSET;
    c->min_uses = c->max_range_offset = HY_UNSET;
    c->lock = c->revalidate = c->convert_head = c->background_update = c->force_ranges = HY_UNSET;
    c->lock_timeout = c->lock_age = HY_UNSET_MSEC;
}

int hy_ucache_conf_merge(hy_conf_t *cf, hy_ucache_conf_t *c, const hy_ucache_conf_t *p, const char *module)
{
    if (c->set == HY_UNSET) {
        c->set = p->set == HY_UNSET ? 0 : p->set;
        c->zone = p->zone;
        c->zone_cv = p->zone_cv;
    }
    if (c->key == NULL)
        c->key = p->key;
    if (c->valid == NULL)
        c->valid = p->valid;
    if (c->bypass == NULL)
        c->bypass = p->bypass;
    if (c->no_cache == NULL)
        c->no_cache = p->no_cache;
    hy_merge_value(c->methods, p->methods, 0);
    c->methods |= HY_UCACHE_GET | HY_UCACHE_HEAD;
    hy_merge_value(c->use_stale, p->use_stale, 0);
    hy_merge_value(c->min_uses, p->min_uses, 1);
    hy_merge_value(c->max_range_offset, p->max_range_offset, INT64_MAX);
    hy_merge_value(c->lock, p->lock, 0);
    hy_merge_value(c->lock_timeout, p->lock_timeout, 5000);
    hy_merge_value(c->lock_age, p->lock_age, 5000);
    hy_merge_value(c->revalidate, p->revalidate, 0);
    /* a HEAD is passed as GET to fill the cache (proxy_cache_convert_head; always for the other modules) */
    hy_merge_value(c->convert_head, p->convert_head, 1);
    hy_merge_value(c->background_update, p->background_update, 0);
    hy_merge_value(c->force_ranges, p->force_ranges, 0);
    if (hy_ucache_on(c) && c->key == NULL) {
        hy_complex_t *k = hy_pcalloc(cf->pool, sizeof(*k));
        if (strcmp(module, "proxy") != 0) /* nginx warns, and every request then has the empty key */
            hy_conf_warn(cf, "no \"%s_cache_key\" for \"%s_cache\"", module, module);
        else if (hy_vars_compile(cf, HY_STR("$scheme$proxy_host$request_uri"), k) != 0)
            return -1;
        c->key = k;
    }
    return 0;
}

static hy_ucache_conf_t *cconf(void *conf, const hy_directive_t *d, size_t field)
{
    return (hy_ucache_conf_t *)((char *)conf + d->offset - field);
}

/* P_cache_path path [levels=1:2] keys_zone=name:size [inactive=time] [max_size=size] [use_temp_path=on|off] and
 * the manager/loader/purger tuning parameters (accepted) */
int hy_ucache_set_path(hy_conf_t *cf, const hy_directive_t *d, void *conf)
{
    (void)conf;
    size_t n;
    hy_str_t *a = hy_conf_args(cf, &n);
    hy_ucache_path_t *cp = hy_pcalloc(cf->pool, sizeof(*cp));
    char *dir = hy_cycle_path(cf->cycle, a[1].ptr, a[1].len);
    size_t len = strlen(dir);
    while (len > 1 && dir[len - 1] == '/')
        len--;
    cp->dir = (hy_str_t){dir, len};
    cp->inactive_ms = 600000;
    cp->max_size = -1;
    size_t zsize = 0;
    for (size_t i = 2; i < n; i++) {
        hy_str_t v = a[i];
        if (v.len > 7 && memcmp(v.ptr, "levels=", 7) == 0) {
            const char *p = v.ptr + 7, *e = v.ptr + v.len;
            int k = 0;
            while (p < e) {
                if (k == 3 || (*p != '1' && *p != '2') || (p + 1 < e && p[1] != ':'))
                    return hy_conf_error(cf, "invalid \"levels\" \"%s\"", v.ptr);
                cp->levels[k++] = *p - '0';
                p += 2;
            }
            if (k == 0)
                return hy_conf_error(cf, "invalid \"levels\" \"%s\"", v.ptr);
        } else if (v.len > 10 && memcmp(v.ptr, "keys_zone=", 10) == 0) {
            if (hy_zone_parse_named(cf, (hy_str_t){v.ptr + 10, v.len - 10}, &cp->name, &zsize) != 0)
                return -1;
        } else if (v.len > 9 && memcmp(v.ptr, "inactive=", 9) == 0) {
            if ((cp->inactive_ms = hy_parse_msec(v.ptr + 9, v.len - 9)) < 0)
                return hy_conf_error(cf, "invalid inactive value \"%s\"", v.ptr);
        } else if (v.len > 9 && memcmp(v.ptr, "max_size=", 9) == 0) {
            if ((cp->max_size = hy_parse_size(v.ptr + 9, v.len - 9)) < 0)
                return hy_conf_error(cf, "invalid max_size value \"%s\"", v.ptr);
        } else if (v.len > 14 && memcmp(v.ptr, "use_temp_path=", 14) == 0) {
            hy_str_t f = {v.ptr + 14, v.len - 14};
            if (!hy_str_eq(f, "on") && !hy_str_eq(f, "off"))
                return hy_conf_error(cf, "invalid use_temp_path value \"%s\", it must be \"on\" or \"off\"", f.ptr);
        } else {
            static const char *const tuning[] = {"min_free=",         "manager_files=",   "manager_sleep=",
                                                 "manager_threshold=", "loader_files=",    "loader_sleep=",
                                                 "loader_threshold=",  "purger=",          "purger_files=",
                                                 "purger_sleep=",      "purger_threshold="};
            bool ok = false;
            for (size_t k = 0; k < HY_ARRAY_SIZE(tuning) && !ok; k++)
                ok = v.len > strlen(tuning[k]) && memcmp(v.ptr, tuning[k], strlen(tuning[k])) == 0;
            if (!ok)
                return hy_conf_error(cf, "invalid parameter \"%s\"", v.ptr);
        }
    }
    if (cp->name.len == 0)
        return hy_conf_error(cf, "\"%s\" must have \"keys_zone\" parameter", d->name);
    hy_zone_t *z = hy_zone_claim(cf, cp->name, zsize, &cache_tag);
    if (z == NULL)
        return -1;
    if (z->data != NULL)
        return hy_conf_error(cf, "duplicate zone \"%.*s\"", (int)cp->name.len, cp->name.ptr);
    cp->name = z->name;
    z->data = cp;
    if (paths_cycle != cf->cycle) { /* the first path of this configuration */
        paths_cycle = cf->cycle;
        paths = hy_array_create(cf->pool, 4, sizeof(hy_ucache_path_t *));
    }
    *(hy_ucache_path_t **)hy_array_push(paths) = cp;
    return 0;
}

const hy_ucache_path_t *hy_ucache_path_find(hy_str_t name)
{
    for (size_t i = 0; paths && i < paths->nelts; i++) {
        const hy_ucache_path_t *cp = ((hy_ucache_path_t **)paths->elts)[i];
        if (hy_str_eq_str(cp->name, name))
            return cp;
    }
    return NULL;
}

const hy_ucache_path_t *hy_ucache__zone_path(const struct hy_zone *z)
{
    return z->tag == &cache_tag ? z->data : NULL;
}

/* P_cache zone | off */
int hy_ucache_set_cache(hy_conf_t *cf, const hy_directive_t *d, void *conf)
{
    hy_ucache_conf_t *c = cconf(conf, d, offsetof(hy_ucache_conf_t, zone));
    size_t n;
    hy_str_t *a = hy_conf_args(cf, &n);
    if (c->set != HY_UNSET)
        return hy_conf_error(cf, "\"%s\" directive is duplicate", d->name);
    if (hy_str_eq(a[1], "off")) {
        c->set = 0;
        return 0;
    }
    c->set = 1;
    if (memchr(a[1].ptr, '$', a[1].len)) {
        c->zone_cv = hy_pcalloc(cf->pool, sizeof(*c->zone_cv));
        return hy_vars_compile(cf, a[1], c->zone_cv);
    }
    c->zone = hy_zone_claim(cf, a[1], 0, &cache_tag);
    if (c->zone == NULL)
        return -1;
    c->set = 1;
    return 0;
}

int hy_ucache_set_key(hy_conf_t *cf, const hy_directive_t *d, void *conf)
{
    hy_ucache_conf_t *c = cconf(conf, d, offsetof(hy_ucache_conf_t, key));
    size_t n;
    hy_str_t *a = hy_conf_args(cf, &n);
    if (c->key != NULL)
        return hy_conf_error(cf, "\"%s\" directive is duplicate", d->name);
    c->key = hy_pcalloc(cf->pool, sizeof(*c->key));
    return hy_vars_compile(cf, a[1], c->key);
}

/* P_cache_valid [code ...| any] time: without codes 200, 301 and 302 */
int hy_ucache_set_valid(hy_conf_t *cf, const hy_directive_t *d, void *conf)
{
    hy_ucache_conf_t *c = cconf(conf, d, offsetof(hy_ucache_conf_t, valid));
    size_t n;
    hy_str_t *a = hy_conf_args(cf, &n);
    int64_t ms = hy_parse_msec(a[n - 1].ptr, a[n - 1].len);
    if (ms < 0)
        return hy_conf_error(cf, "invalid time value \"%s\"", a[n - 1].ptr);
    if (c->valid == NULL)
        c->valid = hy_array_create(cf->pool, 4, sizeof(hy_ucache_valid_t));
    if (n == 2) {
        static const int def[] = {200, 301, 302};
        for (size_t i = 0; i < 3; i++)
            *(hy_ucache_valid_t *)hy_array_push(c->valid) = (hy_ucache_valid_t){def[i], ms / 1000};
        return 0;
    }
    for (size_t i = 1; i + 1 < n; i++) {
        int status = 0;
        if (!hy_str_eq(a[i], "any")) {
            int64_t s = hy_parse_int(a[i].ptr, a[i].len);
            if (s < 200 || s > 599)
                return hy_conf_error(cf, "invalid status \"%s\"", a[i].ptr);
            status = (int)s;
        }
        *(hy_ucache_valid_t *)hy_array_push(c->valid) = (hy_ucache_valid_t){status, ms / 1000};
    }
    return 0;
}

/* P_cache_bypass, P_no_cache: values tested at run time (true: not empty and not "0") */
int hy_ucache_set_predicates(hy_conf_t *cf, const hy_directive_t *d, void *conf)
{
    size_t field = strstr(d->name, "_no_cache") ? offsetof(hy_ucache_conf_t, no_cache) : offsetof(hy_ucache_conf_t, bypass);
    hy_ucache_conf_t *c = cconf(conf, d, field);
    hy_array_t **slot = field == offsetof(hy_ucache_conf_t, no_cache) ? &c->no_cache : &c->bypass;
    size_t n;
    hy_str_t *a = hy_conf_args(cf, &n);
    if (*slot == NULL)
        *slot = hy_array_create(cf->pool, n, sizeof(hy_complex_t));
    for (size_t i = 1; i < n; i++)
        if (hy_vars_compile(cf, a[i], hy_array_push(*slot)) != 0)
            return -1;
    return 0;
}
