/* secure_link.c — nginx's secure_link module: the $secure_link and $secure_link_expires variables.
 *
 * `secure_link HASH[,EXPIRES]; secure_link_md5 TEXT;`: HASH is the base64url MD5 of TEXT (padding optional);
 * $secure_link is "1" when it matches, "0" when it matches but EXPIRES (Unix seconds) has passed, and not
 * found (empty) otherwise; $secure_link_expires is EXPIRES. `secure_link_secret WORD;` (the old form): the
 * request is /PREFIX/HEX-MD5/LINK with HEX-MD5 = md5(LINK WORD), and $secure_link is LINK. Variable-only: the
 * location decides what to do with them (usually `if`). */
#include <string.h>
#include <time.h>
#include <openssl/evp.h>
#include "vars.h"
#include "core.h"
#include "secure_link.h"
#include "../conf/cycle.h"
#include "../core/base64.h"

typedef struct sl_loc {
    hy_complex_t *variable; /* secure_link */
    hy_complex_t *md5;      /* secure_link_md5 */
    hy_str_t secret;        /* secure_link_secret; .ptr NULL when unset */
} sl_loc_t;

hy_module_t hy_http_secure_link_module;

static const sl_loc_t *loc_conf(hy_req_t *req)
{
    hy_http_loc_conf_t *lc = req->loc ? req->loc : req->srv ? req->srv->loc : NULL;
    return lc ? lc->loc_conf[hy_http_secure_link_module.index] : NULL;
}

static void md5(const void *a, size_t alen, const void *b, size_t blen, unsigned char out[16])
{
    EVP_MD_CTX *ctx = EVP_MD_CTX_new();
    unsigned int n = 16;
    if (ctx == NULL || EVP_DigestInit_ex(ctx, EVP_md5(), NULL) != 1 || EVP_DigestUpdate(ctx, a, alen) != 1 ||
        EVP_DigestUpdate(ctx, b, blen) != 1 || EVP_DigestFinal_ex(ctx, out, &n) != 1)
        memset(out, 0xff, 16); /* never equal to a decoded hash in practice; the link is refused */
    EVP_MD_CTX_free(ctx);
}

static void not_found(hy_var_value_t *v)
{
    v->ptr = "", v->len = 0, v->not_found = true;
}

/* The old form: /PREFIX/HEX/LINK from the target as sent. */
static void old_variable(hy_req_t *req, const sl_loc_t *c, hy_var_value_t *v)
{
    const char *p = req->target.ptr, *last = p + req->target.len, *start, *end;
    if (req->target.len < 1)
        return not_found(v);
    p++;
    while (p < last && *p != '/')
        p++;
    if (p == last)
        return not_found(v);
    start = ++p;
    while (p < last && *p != '/')
        p++;
    if (p == last)
        return not_found(v);
    end = p++;
    size_t len = (size_t)(last - p);
    if (end - start != 32 || len == 0)
        return not_found(v);
    unsigned char h[16];
    md5(p, len, c->secret.ptr, c->secret.len, h);
    for (int i = 0; i < 16; i++) {
        int hi = hy_hex_digit(start[2 * i]), lo = hy_hex_digit(start[2 * i + 1]);
        if (hi < 0 || lo < 0 || (unsigned char)(hi << 4 | lo) != h[i])
            return not_found(v);
    }
    v->ptr = (char *)p, v->len = len, v->not_found = false;
}

/* nginx's ngx_atotm: digits only, no overflow; -1 otherwise */
static int64_t parse_time(const char *p, size_t n)
{
    if (n == 0)
        return -1;
    int64_t t = 0;
    for (size_t i = 0; i < n; i++) {
        if (p[i] < '0' || p[i] > '9' || t > (INT64_MAX - 9) / 10)
            return -1;
        t = t * 10 + (p[i] - '0');
    }
    return t;
}

/* Evaluates `secure_link`: the hash part in *hash, the expiry text in *exp (ptr NULL when none).
 * false when the expiry is present but not a positive number. */
static bool split_link(hy_req_t *req, const sl_loc_t *c, hy_str_t *hash, hy_str_t *exp, int64_t *expires)
{
    hy_str_t val;
    hy_vars_eval(req, c->variable, &val);
    const char *comma = val.len ? memchr(val.ptr, ',', val.len) : NULL;
    *exp = (hy_str_t){NULL, 0};
    *expires = 0;
    *hash = val;
    if (comma) {
        hash->len = (size_t)(comma - val.ptr);
        exp->ptr = (char *)comma + 1;
        exp->len = val.len - hash->len - 1;
        *expires = parse_time(exp->ptr, exp->len);
        if (*expires <= 0)
            return false;
    }
    return true;
}

static void get_secure_link(hy_req_t *req, hy_var_value_t *v, uintptr_t data)
{
    (void)data;
    const sl_loc_t *c = loc_conf(req);
    if (c && c->secret.ptr)
        return old_variable(req, c, v);
    if (c == NULL || c->variable == NULL || c->md5 == NULL)
        return not_found(v);
    hy_str_t hash, exp, text;
    int64_t expires;
    if (!split_link(req, c, &hash, &exp, &expires) || hash.len > 24)
        return not_found(v);
    unsigned char got[18], want[16];
    if (hy_base64url_decode(hash.ptr, hash.len, got) != 16)
        return not_found(v);
    hy_vars_eval(req, c->md5, &text);
    md5(text.ptr, text.len, "", 0, want);
    if (memcmp(got, want, 16) != 0)
        return not_found(v);
    v->ptr = (expires && expires < (int64_t)time(NULL)) ? "0" : "1";
    v->len = 1;
    v->not_found = false;
}

static void get_secure_link_expires(hy_req_t *req, hy_var_value_t *v, uintptr_t data)
{
    (void)data;
    const sl_loc_t *c = loc_conf(req);
    if (c == NULL || c->secret.ptr || c->variable == NULL || c->md5 == NULL)
        return not_found(v);
    hy_str_t hash, exp;
    int64_t expires;
    if (!split_link(req, c, &hash, &exp, &expires) || exp.ptr == NULL)
        return not_found(v);
    v->ptr = exp.ptr, v->len = exp.len, v->not_found = false;
}

static int set_complex(hy_conf_t *cf, const hy_directive_t *d, void *conf)
{
    sl_loc_t *c = conf;
    hy_complex_t **slot = strcmp(d->name, "secure_link") == 0 ? &c->variable : &c->md5;
    if (*slot)
        return hy_conf_error(cf, "\"%s\" directive is duplicate", d->name);
    size_t n;
    hy_str_t *a = hy_conf_args(cf, &n);
    *slot = hy_palloc(cf->pool, sizeof(**slot));
    return hy_vars_compile(cf, a[1], *slot);
}

static int set_secret(hy_conf_t *cf, const hy_directive_t *d, void *conf)
{
    sl_loc_t *c = conf;
    if (c->secret.ptr)
        return hy_conf_error(cf, "\"%s\" directive is duplicate", d->name);
    size_t n;
    hy_str_t *a = hy_conf_args(cf, &n);
    c->secret = hy_str_dup(cf->pool, a[1]);
    return 0;
}

static void *create_loc(hy_conf_t *cf)
{
    return hy_pcalloc(cf->pool, sizeof(sl_loc_t));
}

/* as nginx: a location with its own secure_link_secret takes neither of the others; one with neither of the
 * new-form directives inherits the secret, else the new form's two directives are inherited */
static int merge_loc(hy_conf_t *cf, void *parent, void *child)
{
    sl_loc_t *p = parent, *c = child;
    if (c->secret.ptr) {
        if (c->variable || c->md5)
            return hy_conf_error(cf, "\"secure_link_secret\" cannot be mixed with \"secure_link\" and "
                                     "\"secure_link_md5\"");
        return 0;
    }
    if (c->variable == NULL)
        c->variable = p->variable;
    if (c->md5 == NULL)
        c->md5 = p->md5;
    if (c->variable == NULL && c->md5 == NULL)
        c->secret = p->secret;
    return 0;
}

static int postconfiguration(hy_conf_t *cf)
{
    if (hy_vars_define(cf, HY_STR("secure_link"), get_secure_link, 0, 0) < 0 ||
        hy_vars_define(cf, HY_STR("secure_link_expires"), get_secure_link_expires, 0, 0) < 0)
        return -1;
    return 0;
}

static const hy_directive_t sl_directives[] = {
    {.name = "secure_link", .ctx = HY_CTX_HTTP_ANY, .args = HY_ARGS_1, .set = set_complex, .conf = HY_CONF_LOC},
    {.name = "secure_link_md5", .ctx = HY_CTX_HTTP_ANY, .args = HY_ARGS_1, .set = set_complex,
     .conf = HY_CONF_LOC},
    {.name = "secure_link_secret", .ctx = HY_CTX_LOC, .args = HY_ARGS_1, .set = set_secret, .conf = HY_CONF_LOC},
    {0},
};

hy_module_t hy_http_secure_link_module = {
    .name = "http_secure_link",
    .directives = sl_directives,
    .create_loc_conf = create_loc,
    .merge_loc_conf = merge_loc,
    .postconfiguration = postconfiguration,
};
