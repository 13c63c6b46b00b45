/* split_clients.c — nginx's split_clients. Each line of the block is "PERCENT% VALUE" (at most two decimals, as
 * nginx's ngx_atofp with two points) or "* VALUE". At the end of the block the percentages become cumulative
 * upper bounds over the 32-bit hash space (bound += percent * 0xffffffff / 10000, nginx's arithmetic, so the
 * same string lands in the same bucket as with nginx); "*" takes the rest. A hash above every bound and no "*"
 * gives the empty value. */
#include <string.h>
#include "split_clients.h"
#include "vars.h"
#include "../core/murmur.h"

typedef struct split_part {
    uint32_t bound; /* while parsing: percent * 100; then the cumulative bound; 0 = "*" */
    hy_str_t value;
} split_part_t;

typedef struct split {
    hy_complex_t src;
    hy_array_t *parts; /* split_part_t */
} split_t;

static void split_get(hy_req_t *req, hy_var_value_t *v, uintptr_t data)
{
    const split_t *s = (const split_t *)data;
    hy_str_t src;
    hy_vars_eval(req, &s->src, &src);
    uint32_t h = hy_murmur_hash2(src.ptr, src.len);
    v->ptr = "", v->len = 0, v->not_found = false;
    const split_part_t *p = s->parts->elts;
    for (size_t i = 0; i < s->parts->nelts; i++)
        if (p[i].bound == 0 || h < p[i].bound) {
            v->ptr = p[i].value.ptr;
            v->len = p[i].value.len;
            return;
        }
}

/* "51.2" → 5120: digits with at most one '.', at most two decimals; -1 when invalid or above 100% */
static int64_t parse_percent(const char *p, size_t n)
{
    int64_t v = 0;
    int decimals = -1;
    if (n == 0)
        return -1;
    for (size_t i = 0; i < n; i++) {
        if (p[i] == '.') {
            if (decimals >= 0)
                return -1;
            decimals = 0;
            continue;
        }
        if (p[i] < '0' || p[i] > '9' || decimals == 2)
            return -1;
        v = v * 10 + (p[i] - '0');
        if (decimals >= 0)
            decimals++;
        if (v > 100000)
            return -1;
    }
    for (int d = decimals < 0 ? 0 : decimals; d < 2; d++)
        v *= 10;
    return v;
}

static int split_raw(hy_conf_t *cf, void *data)
{
    split_t *s = data;
    size_t n;
    hy_str_t *a = hy_conf_args(cf, &n);
    if (n != 2)
        return hy_conf_error(cf, "invalid number of the split_clients parameters");
    split_part_t *part = hy_array_push(s->parts);
    part->value = hy_str_dup(cf->pool, a[1]);
    if (a[0].len == 1 && a[0].ptr[0] == '*') {
        part->bound = 0;
        return 0;
    }
    int64_t pct = a[0].len && a[0].ptr[a[0].len - 1] == '%' ? parse_percent(a[0].ptr, a[0].len - 1) : -1;
    if (pct <= 0)
        return hy_conf_error(cf, "invalid percent value \"%s\"", a[0].ptr);
    part->bound = (uint32_t)pct;
    return 0;
}

static int set_split_clients(hy_conf_t *cf, const hy_directive_t *d, void *conf)
{
    (void)d;
    (void)conf;
    size_t n;
    hy_str_t *a = hy_conf_args(cf, &n);
    hy_str_t dst = a[2];
    if (dst.len < 2 || dst.ptr[0] != '$')
        return hy_conf_error(cf, "invalid variable name \"%s\"", dst.ptr);
    split_t *s = hy_pcalloc(cf->pool, sizeof(*s));
    if (hy_vars_compile(cf, a[1], &s->src) != 0)
        return -1;
    hy_str_t name = hy_str_dup(cf->pool, (hy_str_t){dst.ptr + 1, dst.len - 1});
    s->parts = hy_array_create(cf->pool, 4, sizeof(split_part_t));
    hy_conf_raw_fn saved_raw = cf->raw;
    void *saved_data = cf->raw_data;
    cf->raw = split_raw;
    cf->raw_data = s;
    int rc = hy_conf_parse_block(cf);
    cf->raw = saved_raw;
    cf->raw_data = saved_data;
    if (rc != 0)
        return rc;
    uint32_t sum = 0, bound = 0;
    split_part_t *p = s->parts->elts;
    for (size_t i = 0; i < s->parts->nelts; i++) {
        sum = p[i].bound ? sum + p[i].bound : 10000;
        if (sum > 10000)
            return hy_conf_error(cf, "percent total is greater than 100%%");
        if (p[i].bound) {
            bound += (uint32_t)(p[i].bound * (uint64_t)0xffffffff / 10000);
            p[i].bound = bound;
        }
    }
    return hy_vars_define(cf, name, split_get, (uintptr_t)s, 0) < 0 ? -1 : 0;
}

static const hy_directive_t split_clients_directives[] = {
    {.name = "split_clients", .ctx = HY_CTX_HTTP, .args = HY_ARGS_2 | HY_ARGS_BLOCK, .set = set_split_clients},
    {0},
};

hy_module_t hy_http_split_clients_module = {
    .name = "http_split_clients",
    .directives = split_clients_directives,
};
