/* proxy_cookie.c — proxy_cookie_flags (nginx 1.19.3+): the Secure, HttpOnly and SameSite attributes of a proxied
 * Set-Cookie set or removed per cookie name (see proxy_conf.h).
 *
 * A rule is `NAME flag...`: NAME is text with variables (compared case-insensitively with the cookie's name) or
 * `~regex` (caseless); each flag is secure, httponly, samesite=strict|lax|none, nosecure, nohttponly or nosamesite,
 * itself text with variables (1.19.8). The first rule whose name matches applies, as nginx does it: the cookie is
 * split at ';' into attributes (spaces around each dropped) and written again joined by "; "; a Secure or HttpOnly
 * attribute the rule sets stays where it is as written, one it unsets goes; a SameSite attribute becomes the
 * rule's "SameSite=Lax" in place, or goes; the flags set and not found are appended (Secure, HttpOnly, SameSite).
 * A cookie no rule names is left byte for byte. */
#include <string.h>
#include "proxy_conf.h"
#include "../http/vars.h"
#include "../conf/conf_regex.h"
#include "../core/log.h"

enum {
    F_SECURE = 1 << 0,   /* the rule says something about Secure */
    F_SECURE_ON = 1 << 1,
    F_HTTPONLY = 1 << 2, /* ... about HttpOnly */
    F_HTTPONLY_ON = 1 << 3,
    F_SAMESITE = 1 << 4, /* ... about SameSite */
    F_STRICT = 1 << 5,
    F_LAX = 1 << 6,
    F_NONE = 1 << 7,
};

typedef struct proxy_cookie_flags {
    hy_regex_t *regex; /* ~ form */
    hy_complex_t name;
    hy_complex_t *flags; /* nflags flag texts */
    size_t nflags;
} proxy_cookie_flags_t;

/* One flag's bits, or -1 when it is none of nginx's. */
static int flag_bits(hy_str_t f)
{
    static const struct {
        const char *text;
        int bits;
    } table[] = {
        {"secure", F_SECURE | F_SECURE_ON},
        {"nosecure", F_SECURE},
        {"httponly", F_HTTPONLY | F_HTTPONLY_ON},
        {"nohttponly", F_HTTPONLY},
        {"samesite=strict", F_SAMESITE | F_STRICT},
        {"samesite=lax", F_SAMESITE | F_LAX},
        {"samesite=none", F_SAMESITE | F_NONE},
        {"nosamesite", F_SAMESITE},
    };
    for (size_t i = 0; i < HY_ARRAY_SIZE(table); i++)
        if (hy_str_caseeq(f, table[i].text))
            return table[i].bits;
    return -1;
}

int hy_proxy__set_cookie_flags(hy_conf_t *cf, const hy_directive_t *d, void *conf)
{
    (void)d;
    proxy_loc_t *pl = conf;
    size_t n;
    hy_str_t *a = hy_conf_args(cf, &n);
    if (n == 2 && hy_str_eq(a[1], "off")) {
        if (pl->cookie_flags != NULL)
            return hy_conf_error(cf, "\"proxy_cookie_flags\" directive is duplicate");
        pl->cookie_flags = hy_array_create(cf->pool, 1, sizeof(proxy_cookie_flags_t));
        return 0;
    }
    if (pl->cookie_flags == NULL)
        pl->cookie_flags = hy_array_create(cf->pool, 2, sizeof(proxy_cookie_flags_t));
    else if (pl->cookie_flags->nelts == 0)
        return hy_conf_error(cf, "\"proxy_cookie_flags\" directive is duplicate");
    if (n < 3)
        return hy_conf_error(cf, "invalid number of arguments in \"proxy_cookie_flags\" directive");
    proxy_cookie_flags_t *r = hy_array_push(pl->cookie_flags);
    memset(r, 0, sizeof(*r));
    if (a[1].len && a[1].ptr[0] == '~') {
        hy_str_t re = {a[1].ptr + 1, a[1].len - 1};
        while (re.len && re.ptr[0] == ' ')
            re.ptr++, re.len--;
        if ((r->regex = hy_conf_regex(cf, re, true)) == NULL)
            return -1;
    } else if (hy_vars_compile(cf, a[1], &r->name) != 0) {
        return -1;
    }
    r->nflags = n - 2;
    r->flags = hy_pcalloc(cf->pool, r->nflags * sizeof(hy_complex_t));
    for (size_t i = 0; i < r->nflags; i++) {
        if (hy_vars_compile(cf, a[2 + i], &r->flags[i]) != 0)
            return -1;
        if (r->flags[i].parts == NULL && flag_bits(a[2 + i]) < 0)
            return hy_conf_error(cf, "invalid parameter \"%s\"", a[2 + i].ptr);
    }
    return 0;
}

/* The bits of the first rule whose name matches the cookie's, or 0. */
static int rule_for(hy_req_t *req, const hy_array_t *rules, hy_str_t name)
{
    const proxy_cookie_flags_t *r = rules->elts;
    for (size_t i = 0; i < rules->nelts; i++) {
        if (r[i].regex) {
            if (hy_regex_exec(r[i].regex, name, hy_req_captures(req)) != 1)
                continue;
        } else {
            hy_str_t want;
            hy_vars_eval(req, &r[i].name, &want);
            if (!hy_str_caseeq_str(want, name))
                continue;
        }
        int bits = 0;
        for (size_t k = 0; k < r[i].nflags; k++) {
            hy_str_t f;
            hy_vars_eval(req, &r[i].flags[k], &f);
            int b = flag_bits(f);
            if (b < 0) {
                hy_req_log(req, HY_LOG_ERR, "invalid proxy_cookie_flags flag \"%.*s\"", (int)f.len, f.ptr);
                continue;
            }
            if (b & F_SAMESITE) /* the last samesite flag wins */
                bits &= ~(F_STRICT | F_LAX | F_NONE);
            bits |= b;
        }
        return bits;
    }
    return 0;
}

/* [p, e) without the spaces and tabs around it. */
static hy_str_t trimmed(const char *p, const char *e)
{
    while (p < e && (*p == ' ' || *p == '\t'))
        p++;
    while (e > p && (e[-1] == ' ' || e[-1] == '\t'))
        e--;
    return (hy_str_t){(char *)p, (size_t)(e - p)};
}

/* An attribute's name (before '=', trimmed). */
static hy_str_t attr_name(hy_str_t a)
{
    const char *eq = a.len ? memchr(a.ptr, '=', a.len) : NULL;
    return eq ? trimmed(a.ptr, eq) : a;
}

static const char *samesite_text(int bits)
{
    return bits & F_STRICT ? "SameSite=Strict" : bits & F_LAX ? "SameSite=Lax" : "SameSite=None";
}

hy_str_t hy_proxy_cookie_flags(hy_req_t *req, const proxy_loc_t *pl, hy_str_t v)
{
    if (pl->cookie_flags == NULL || pl->cookie_flags->nelts == 0)
        return v;
    const char *end = v.ptr + v.len, *semi = memchr(v.ptr, ';', v.len);
    const char *first = semi ? semi : end;
    const char *eq = memchr(v.ptr, '=', (size_t)(first - v.ptr));
    if (eq == NULL)
        return v;
    int bits = rule_for(req, pl->cookie_flags, trimmed(v.ptr, eq));
    if (bits == 0)
        return v;
    char *buf = hy_palloc(req->pool, 2 * v.len + sizeof("; Secure; HttpOnly; SameSite=Strict")), *o = buf;
    hy_str_t head = trimmed(v.ptr, first);
    memcpy(o, head.ptr, head.len);
    o += head.len;
    bool secure = false, httponly = false, samesite = false;
    for (const char *p = first; p < end;) { /* p at ';' */
        const char *next = memchr(p + 1, ';', (size_t)(end - p - 1));
        if (next == NULL)
            next = end;
        hy_str_t a = trimmed(p + 1, next), n = attr_name(a);
        p = next;
        if (a.len == 0)
            continue;
        if (hy_str_caseeq(n, "secure")) {
            if ((bits & F_SECURE) && !(bits & F_SECURE_ON))
                continue;
            secure = true;
        } else if (hy_str_caseeq(n, "httponly")) {
            if ((bits & F_HTTPONLY) && !(bits & F_HTTPONLY_ON))
                continue;
            httponly = true;
        } else if (hy_str_caseeq(n, "samesite") && (bits & F_SAMESITE)) {
            if (!(bits & (F_STRICT | F_LAX | F_NONE)))
                continue;
            a = (hy_str_t){(char *)samesite_text(bits), strlen(samesite_text(bits))};
            samesite = true;
        }
        memcpy(o, "; ", 2);
        memcpy(o + 2, a.ptr, a.len);
        o += 2 + a.len;
    }
#define APPEND(lit) (memcpy(o, lit, strlen(lit)), o += strlen(lit))
    if ((bits & F_SECURE_ON) && !secure)
        APPEND("; Secure");
    if ((bits & F_HTTPONLY_ON) && !httponly)
        APPEND("; HttpOnly");
    if ((bits & (F_STRICT | F_LAX | F_NONE)) && !samesite) {
        APPEND("; ");
        APPEND(samesite_text(bits));
    }
#undef APPEND
    return (hy_str_t){buf, (size_t)(o - buf)};
}
