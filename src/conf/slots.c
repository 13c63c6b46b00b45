/* slots.c — generic directive setters: store the first argument at d->offset in the module's conf struct.
 * Messages follow nginx's ngx_conf_set_*_slot exactly (e.g. num: "directive invalid number", size/time:
 * "directive invalid value", enum: bare `invalid value "x"`), so -t output matches nginx's. */
#include <stdbool.h>
#include <string.h>
#include "conf.h"

#define FIELD(conf, d, type) ((type *)((char *)(conf) + (d)->offset))

static hy_str_t *value(hy_conf_t *cf)
{
    size_t n;
    hy_str_t *w = hy_conf_args(cf, &n);
    HY_ASSERT(n >= 2);
    return &w[1];
}

static int duplicate(hy_conf_t *cf, const hy_directive_t *d)
{
    return hy_conf_error(cf, "\"%s\" directive is duplicate", d->name);
}

/* nginx's ngx_conf_check_num_bounds; max == -1 means no upper bound */
static int check_bounds(hy_conf_t *cf, const hy_directive_t *d, int64_t v)
{
    const hy_bounds_t *b = d->post;
    if (b == NULL)
        return 0;
    if (b->max == -1) {
        if (v >= b->min)
            return 0;
        return hy_conf_error(cf, "value must be equal to or greater than %lld", (long long)b->min);
    }
    if (v >= b->min && v <= b->max)
        return 0;
    return hy_conf_error(cf, "value must be between %lld and %lld", (long long)b->min, (long long)b->max);
}

int hy_slot_flag(hy_conf_t *cf, const hy_directive_t *d, void *conf)
{
    HY_ASSERT(conf != NULL);
    int *field = FIELD(conf, d, int);
    if (*field != HY_UNSET)
        return duplicate(cf, d);
    hy_str_t *v = value(cf);
    if (hy_str_caseeq(*v, "on")) {
        *field = 1;
    } else if (hy_str_caseeq(*v, "off")) {
        *field = 0;
    } else {
        return hy_conf_error(cf, "invalid value \"%s\" in \"%s\" directive, it must be \"on\" or \"off\"", v->ptr,
                             d->name);
    }
    return 0;
}

/* shared body of the int64_t slots: duplicate check, parse, bounds */
static int set_int64(hy_conf_t *cf, const hy_directive_t *d, void *conf, int64_t (*parse)(const char *, size_t),
                     const char *invalid)
{
    HY_ASSERT(conf != NULL);
    int64_t *field = FIELD(conf, d, int64_t);
    if (*field != HY_UNSET)
        return duplicate(cf, d);
    hy_str_t *v = value(cf);
    int64_t n = parse(v->ptr, v->len);
    if (n < 0)
        return hy_conf_error(cf, "\"%s\" directive %s", d->name, invalid);
    if (check_bounds(cf, d, n) != 0)
        return -1;
    *field = n;
    return 0;
}

int hy_slot_num(hy_conf_t *cf, const hy_directive_t *d, void *conf)
{
    return set_int64(cf, d, conf, hy_parse_int, "invalid number");
}

int hy_slot_size(hy_conf_t *cf, const hy_directive_t *d, void *conf)
{
    return set_int64(cf, d, conf, hy_parse_size, "invalid value");
}

int hy_slot_msec(hy_conf_t *cf, const hy_directive_t *d, void *conf)
{
    return set_int64(cf, d, conf, hy_parse_msec, "invalid value");
}

int hy_slot_sec(hy_conf_t *cf, const hy_directive_t *d, void *conf)
{
    return set_int64(cf, d, conf, hy_parse_sec, "invalid value");
}

int hy_slot_str(hy_conf_t *cf, const hy_directive_t *d, void *conf)
{
    HY_ASSERT(conf != NULL);
    hy_str_t *field = FIELD(conf, d, hy_str_t);
    if (field->ptr != NULL)
        return duplicate(cf, d);
    *field = *value(cf); /* the word lives in cf->pool, NUL-terminated */
    return 0;
}

int hy_slot_enum(hy_conf_t *cf, const hy_directive_t *d, void *conf)
{
    HY_ASSERT(conf != NULL && d->post != NULL);
    int *field = FIELD(conf, d, int);
    if (*field != HY_UNSET)
        return duplicate(cf, d);
    hy_str_t *v = value(cf);
    for (const hy_enum_t *e = d->post; e->name != NULL; e++) {
        if (hy_str_caseeq(*v, e->name)) {
            *field = e->value;
            return 0;
        }
    }
    return hy_conf_error(cf, "invalid value \"%s\"", v->ptr);
}

/* nginx's ngx_conf_set_bitmask_slot: every argument is a name of the hy_enum_t[] table in post (case-insensitive);
 * their values OR'ed into an int field */
int hy_slot_bitmask(hy_conf_t *cf, const hy_directive_t *d, void *conf)
{
    HY_ASSERT(conf != NULL && d->post != NULL);
    int *field = FIELD(conf, d, int);
    if (*field != HY_UNSET)
        return duplicate(cf, d);
    size_t n;
    hy_str_t *a = hy_conf_args(cf, &n);
    int mask = 0;
    for (size_t i = 1; i < n; i++) {
        const hy_enum_t *e = d->post;
        while (e->name != NULL && !hy_str_caseeq(a[i], e->name))
            e++;
        if (e->name == NULL)
            return hy_conf_error(cf, "invalid value \"%s\"", a[i].ptr);
        mask |= e->value;
    }
    *field = mask;
    return 0;
}

/* --- check-only slots (accepted directives): the value is validated by the storing slot above, with nginx's
 * message, into a scratch field, and then dropped. They cannot see duplicates (nothing is stored); a duplicate
 * of a directive that has no effect is harmless. */

static int check_into(hy_conf_t *cf, const hy_directive_t *d, hy_conf_set_fn real, bool is_int)
{
    hy_directive_t tmp = *d;
    tmp.offset = 0;
    int scratch_int = HY_UNSET;
    int64_t scratch_64 = HY_UNSET;
    return real(cf, &tmp, is_int ? (void *)&scratch_int : (void *)&scratch_64);
}

int hy_slot_check_flag(hy_conf_t *cf, const hy_directive_t *d, void *conf)
{
    return check_into(cf, d, hy_slot_flag, true);
}

int hy_slot_check_num(hy_conf_t *cf, const hy_directive_t *d, void *conf)
{
    return check_into(cf, d, hy_slot_num, false);
}

int hy_slot_check_size(hy_conf_t *cf, const hy_directive_t *d, void *conf)
{
    return check_into(cf, d, hy_slot_size, false);
}

int hy_slot_check_msec(hy_conf_t *cf, const hy_directive_t *d, void *conf)
{
    return check_into(cf, d, hy_slot_msec, false);
}

int hy_slot_check_bitmask(hy_conf_t *cf, const hy_directive_t *d, void *conf)
{
    return check_into(cf, d, hy_slot_bitmask, true);
}

/* nginx's ngx_conf_set_bufs_slot: "number size", both positive */
int hy_slot_check_bufs(hy_conf_t *cf, const hy_directive_t *d, void *conf)
{
    size_t n;
    hy_str_t *a = hy_conf_args(cf, &n);
    HY_ASSERT(n == 3);
    if (hy_parse_int(a[1].ptr, a[1].len) <= 0)
        return hy_conf_error(cf, "invalid value \"%s\" in \"%s\" directive", a[1].ptr, d->name);
    if (hy_parse_size(a[2].ptr, a[2].len) <= 0)
        return hy_conf_error(cf, "invalid value \"%s\" in \"%s\" directive", a[2].ptr, d->name);
    return 0;
}
