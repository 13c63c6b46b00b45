/* userid.c — nginx's userid module (see userid.h).
 *
 * A uid is 16 bytes: four 32-bit words, the service (v2: the local IPv4 address, or the last four bytes of the
 * IPv6 one, 0 on a unix socket, or userid_service in network order; v1: userid_service or 0 as it is), the time,
 * a per-process start value and a sequence number (v2 words in network order). The cookie is its base64 (24
 * characters, the 23rd replaced by userid_mark when set); $uid_got/$uid_set print the words as %08X each, as
 * nginx does. A received cookie is read from its first 22 characters. A cookie without the current mark is sent
 * again with it; $uid_reset other than "" and "0" makes a new uid ("log": and says so at notice). */
#include <stdio.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include "userid.h"
#include "../http/conn.h"
#include "../http/vars.h"
#include "../core/base64.h"
#include "../core/clock.h"
#include "../core/log.h"

#define IDX (hy_http_userid_module.index)

enum { UID_OFF = 0, UID_LOG, UID_V1, UID_ON };
#define EXPIRES_MAX (-2)
enum { FL_SECURE = 1, FL_HTTPONLY = 2, FL_STRICT = 4, FL_LAX = 8, FL_NONE = 16 };

typedef struct uid_conf {
    int enable;
    hy_str_t name;
    hy_str_t domain; /* "; domain=X", or "" (none); .ptr NULL: unset */
    hy_str_t path;   /* "; path=X" */
    hy_str_t p3p;    /* "" (none) */
    int64_t service; /* HY_UNSET: the address (v2) or 0 (v1) */
    int64_t expires; /* HY_UNSET, 0 off, EXPIRES_MAX, seconds */
    int mark;        /* HY_UNSET, 0 off, the character */
    int flags;       /* HY_UNSET, FL_* */
} uid_conf_t;

typedef struct uid_ctx {
    uint32_t got[4], set[4];
    hy_str_t cookie; /* the received value */
    bool reset;
} uid_ctx_t;

static int reset_index = -1;
static uint32_t sequencer_v1 = 1, sequencer_v2 = 0x03030302, start_value;
static pid_t start_pid;

static uid_conf_t *req_conf(hy_req_t *req)
{
    hy_http_loc_conf_t *lc = req->loc ? req->loc : req->srv ? req->srv->loc : NULL;
    return lc ? lc->loc_conf[IDX] : NULL;
}

/* the value of cookie `name` in the request's Cookie fields, or .ptr NULL */
static hy_str_t find_cookie(hy_req_t *req, hy_str_t name)
{
    for (size_t i = 0; i < req->num_headers; i++) {
        if (!hy_str_caseeq(req->headers[i].name, "cookie"))
            continue;
        const char *p = req->headers[i].value.ptr, *end = p + req->headers[i].value.len;
        while (p < end) {
            while (p < end && (*p == ' ' || *p == ';' || *p == ','))
                p++;
            const char *start = p;
            while (p < end && *p != ';' && *p != ',')
                p++;
            const char *eq = memchr(start, '=', (size_t)(p - start));
            if (eq && (size_t)(eq - start) == name.len && strncasecmp(start, name.ptr, name.len) == 0) {
                const char *vend = p;
                while (vend > eq + 1 && vend[-1] == ' ')
                    vend--;
                return (hy_str_t){(char *)eq + 1, (size_t)(vend - eq - 1)};
            }
        }
    }
    return (hy_str_t){NULL, 0};
}

static uid_ctx_t *get_uid(hy_req_t *req, const uid_conf_t *c)
{
    void **slot = hy_req_ctx(req, &hy_http_userid_module);
    if (*slot)
        return *slot;
    uid_ctx_t *ctx = hy_pcalloc(req->pool, sizeof(*ctx));
    *slot = ctx;
    hy_str_t v = find_cookie(req, c->name);
    if (v.ptr == NULL)
        return ctx;
    ctx->cookie = v;
    if (v.len < 22) {
        hy_req_log(req, HY_LOG_ERR, "client sent too short userid cookie \"%.*s\"", (int)v.len, v.ptr);
        return ctx;
    }
    unsigned char out[24];
    if (hy_base64_decode(v.ptr, 22, out) != 16) {
        hy_req_log(req, HY_LOG_ERR, "client sent invalid userid cookie \"%.*s\"", (int)v.len, v.ptr);
        return ctx;
    }
    memcpy(ctx->got, out, 16);
    return ctx;
}

static int make_uid(hy_req_t *req, uid_ctx_t *ctx, const uid_conf_t *c)
{
    if (ctx->set[3] != 0)
        return 0;
    if (ctx->got[3] != 0) {
        const hy_var_value_t *r = reset_index >= 0 ? hy_var_get(req, reset_index) : NULL;
        if (r == NULL || r->not_found || r->len == 0 || (r->len == 1 && r->ptr[0] == '0')) {
            if (c->mark == 0 || (ctx->cookie.len > 23 && ctx->cookie.ptr[22] == c->mark && ctx->cookie.ptr[23] == '='))
                return 0;
            memcpy(ctx->set, ctx->got, 16); /* sent again, with the mark */
            return 0;
        }
        ctx->reset = true;
        if (r->len == 3 && memcmp(r->ptr, "log", 3) == 0)
            hy_req_log(req, HY_LOG_NOTICE, "userid cookie \"%.*s=%08X%08X%08X%08X\" was reset", (int)c->name.len,
                       c->name.ptr, ctx->got[0], ctx->got[1], ctx->got[2], ctx->got[3]);
    }
    if (start_pid != getpid()) {
        start_pid = getpid();
        start_value = (uint32_t)((hy_clock_time_ms() / 20) << 16) | ((uint32_t)start_pid & 0xffff);
    }
    uint32_t now = (uint32_t)hy_clock_time();
    if (c->enable == UID_V1) {
        ctx->set[0] = c->service == HY_UNSET ? 0 : (uint32_t)c->service;
        ctx->set[1] = now;
        ctx->set[2] = start_value;
        ctx->set[3] = sequencer_v1;
        sequencer_v1 += 0x100;
        return 0;
    }
    if (c->service == HY_UNSET) {
        const struct sockaddr_storage *ss = hy_conn_local_addr(req->conn, NULL);
        ctx->set[0] = 0;
        if (ss && ss->ss_family == AF_INET)
            ctx->set[0] = ((const struct sockaddr_in *)ss)->sin_addr.s_addr;
        else if (ss && ss->ss_family == AF_INET6)
            memcpy(&ctx->set[0], ((const struct sockaddr_in6 *)ss)->sin6_addr.s6_addr + 12, 4);
    } else {
        ctx->set[0] = htonl((uint32_t)c->service);
    }
    ctx->set[1] = htonl(now);
    ctx->set[2] = htonl(start_value);
    ctx->set[3] = htonl(sequencer_v2);
    sequencer_v2 += 0x100;
    if (sequencer_v2 < 0x03030302)
        sequencer_v2 = 0x03030302;
    return 0;
}

static void uid_value(hy_req_t *req, hy_var_value_t *v, hy_str_t name, const uint32_t *uid)
{
    size_t n = name.len + 33;
    char *p = hy_palloc(req->pool, n + 1);
    snprintf(p, n + 1, "%.*s=%08X%08X%08X%08X", (int)name.len, name.ptr, uid[0], uid[1], uid[2], uid[3]);
    v->ptr = p, v->len = n, v->not_found = false;
}

static void get_uid_got(hy_req_t *req, hy_var_value_t *v, uintptr_t data)
{
    (void)data;
    const uid_conf_t *c = req_conf(req);
    v->ptr = "", v->len = 0, v->not_found = true;
    if (c == NULL || c->enable <= UID_OFF)
        return;
    uid_ctx_t *ctx = get_uid(req, c);
    if (ctx->got[3] != 0)
        uid_value(req, v, c->name, ctx->got);
}

static void get_uid_set(hy_req_t *req, hy_var_value_t *v, uintptr_t data)
{
    (void)data;
    const uid_conf_t *c = req_conf(req);
    v->ptr = "", v->len = 0, v->not_found = true;
    if (c == NULL || c->enable < UID_V1)
        return;
    uid_ctx_t *ctx = get_uid(req, c);
    make_uid(req, ctx, c);
    if (ctx->set[3] != 0)
        uid_value(req, v, c->name, ctx->set);
}

static void get_uid_reset(hy_req_t *req, hy_var_value_t *v, uintptr_t data)
{
    (void)req, (void)data;
    v->ptr = "", v->len = 0, v->not_found = false;
}

/* ---------------- the header filter ---------------- */

static const char b64[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";

static size_t base64_16(const uint8_t *in, char *out)
{
    size_t o = 0;
    for (size_t i = 0; i < 15; i += 3) {
        uint32_t w = (uint32_t)in[i] << 16 | (uint32_t)in[i + 1] << 8 | in[i + 2];
        out[o++] = b64[w >> 18], out[o++] = b64[(w >> 12) & 63], out[o++] = b64[(w >> 6) & 63];
        out[o++] = b64[w & 63];
    }
    out[o++] = b64[in[15] >> 2], out[o++] = b64[(in[15] & 3) << 4], out[o++] = '=', out[o++] = '=';
    return o;
}

/* nginx's ngx_http_cookie_time: a two-digit year up to 2037 (old browsers), four digits after */
static size_t cookie_time(char *buf, size_t cap, int64_t t)
{
    static const char *wd[] = {"Sun", "Mon", "Tue", "Wed", "Thu", "Fri", "Sat"};
    static const char *mon[] = {"Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec"};
    time_t tt = (time_t)t;
    struct tm tm;
    gmtime_r(&tt, &tm);
    int year = tm.tm_year + 1900;
    return (size_t)snprintf(buf, cap, "%s, %02d-%s-%02d %02d:%02d:%02d GMT", wd[tm.tm_wday], tm.tm_mday,
                            mon[tm.tm_mon], year > 2037 ? year : year % 100, tm.tm_hour, tm.tm_min, tm.tm_sec);
}

static void header_filter(hy_req_t *req)
{
    const uid_conf_t *c = req_conf(req);
    if (c == NULL || c->enable < UID_V1)
        return;
    uid_ctx_t *ctx = get_uid(req, c);
    make_uid(req, ctx, c);
    if (ctx->set[3] == 0)
        return;
    size_t cap = c->name.len + 32 + 48 + c->domain.len + c->path.len + 64;
    char *p = hy_palloc(req->pool, cap), *o = p;
    memcpy(o, c->name.ptr, c->name.len);
    o += c->name.len;
    *o++ = '=';
    if (ctx->got[3] == 0 || ctx->reset) {
        o += base64_16((const uint8_t *)ctx->set, o);
        if (c->mark)
            o[-2] = (char)c->mark;
    } else {
        memcpy(o, ctx->cookie.ptr, 22);
        o += 22;
        *o++ = (char)c->mark;
        *o++ = '=';
    }
    if (c->expires == EXPIRES_MAX) {
        o += sprintf(o, "; expires=Thu, 31-Dec-37 23:55:55 GMT");
    } else if (c->expires > 0) {
        o += sprintf(o, "; expires=");
        o += cookie_time(o, 40, hy_clock_time() + c->expires);
    }
    memcpy(o, c->domain.ptr, c->domain.len);
    o += c->domain.len;
    memcpy(o, c->path.ptr, c->path.len);
    o += c->path.len;
    static const struct { int bit; const char *text; } fl[] = {{FL_SECURE, "; secure"}, {FL_HTTPONLY, "; httponly"},
        {FL_STRICT, "; samesite=strict"}, {FL_LAX, "; samesite=lax"}, {FL_NONE, "; samesite=none"}};
    for (size_t i = 0; i < HY_ARRAY_SIZE(fl); i++)
        if (c->flags & fl[i].bit)
            o += sprintf(o, "%s", fl[i].text);
    hy_req_add_header(req, HY_STR("Set-Cookie"), (hy_str_t){p, (size_t)(o - p)});
    if (c->p3p.len)
        hy_req_add_header(req, HY_STR("P3P"), c->p3p);
}

/* ---------------- configuration ---------------- */

static void *create_loc(hy_conf_t *cf)
{
    uid_conf_t *c = hy_pcalloc(cf->pool, sizeof(*c));
    c->enable = c->mark = c->flags = HY_UNSET;
    c->service = c->expires = HY_UNSET;
    return c;
}

static int merge_loc(hy_conf_t *cf, void *parent, void *child)
{
    (void)cf;
    uid_conf_t *p = parent, *c = child;
    hy_merge_value(c->enable, p->enable, UID_OFF);
    hy_merge_value(c->flags, p->flags, 0);
    hy_merge_value(c->service, p->service, HY_UNSET);
    hy_merge_value(c->expires, p->expires, 0);
    hy_merge_value(c->mark, p->mark, 0);
    if (c->name.ptr == NULL)
        c->name = p->name.ptr ? p->name : HY_STR("uid");
    if (c->domain.ptr == NULL)
        c->domain = p->domain.ptr ? p->domain : HY_STR("");
    if (c->path.ptr == NULL)
        c->path = p->path.ptr ? p->path : HY_STR("; path=/");
    if (c->p3p.ptr == NULL)
        c->p3p = p->p3p.ptr ? p->p3p : HY_STR("");
    return 0;
}

static hy_str_t prefixed(hy_conf_t *cf, const char *prefix, hy_str_t v)
{
    size_t pl = strlen(prefix);
    char *p = hy_palloc(cf->pool, pl + v.len + 1);
    memcpy(p, prefix, pl);
    memcpy(p + pl, v.ptr, v.len + 1);
    return (hy_str_t){p, pl + v.len};
}

/* userid_domain, userid_path, userid_p3p: "none" (not for the path) is nothing; else the cookie attribute */
static int set_attr(hy_conf_t *cf, const hy_directive_t *d, void *conf)
{
    hy_str_t *field = (hy_str_t *)((char *)conf + d->offset);
    size_t n;
    hy_str_t *a = hy_conf_args(cf, &n);
    if (field->ptr)
        return hy_conf_error(cf, "\"%s\" directive is duplicate", d->name);
    const char *prefix = d->post;
    if (hy_str_eq(a[1], "none") && strcmp(d->name, "userid_path") != 0)
        *field = HY_STR("");
    else
        *field = prefix ? prefixed(cf, prefix, a[1]) : hy_str_dup(cf->pool, a[1]);
    return 0;
}

static int set_expires(hy_conf_t *cf, const hy_directive_t *d, void *conf)
{
    uid_conf_t *c = conf;
    size_t n;
    hy_str_t *a = hy_conf_args(cf, &n);
    if (c->expires != HY_UNSET)
        return hy_conf_error(cf, "\"%s\" directive is duplicate", d->name);
    if (hy_str_eq(a[1], "max")) {
        c->expires = EXPIRES_MAX;
    } else if (hy_str_eq(a[1], "off")) {
        c->expires = 0;
    } else {
        c->expires = hy_parse_sec(a[1].ptr, a[1].len);
        if (c->expires < 0)
            return hy_conf_error(cf, "\"%s\" directive invalid value", d->name);
    }
    return 0;
}

static int set_mark(hy_conf_t *cf, const hy_directive_t *d, void *conf)
{
    uid_conf_t *c = conf;
    size_t n;
    hy_str_t *a = hy_conf_args(cf, &n);
    if (c->mark != HY_UNSET)
        return hy_conf_error(cf, "\"%s\" directive is duplicate", d->name);
    if (hy_str_eq(a[1], "off")) {
        c->mark = 0;
        return 0;
    }
    char m = a[1].ptr[0];
    if (a[1].len != 1 || !((m >= '0' && m <= '9') || (m >= 'a' && m <= 'z') || (m >= 'A' && m <= 'Z') || m == '='))
        return hy_conf_error(cf, "\"%s\" directive value must be \"off\" or a single letter, digit or \"=\"",
                             d->name);
    c->mark = m;
    return 0;
}

static const hy_enum_t enable_enum[] = {
    {"off", UID_OFF}, {"log", UID_LOG}, {"v1", UID_V1}, {"on", UID_ON}, {NULL, 0}};
static const hy_enum_t flags_enum[] = {{"off", 0},           {"secure", FL_SECURE},    {"httponly", FL_HTTPONLY},
                                       {"samesite=strict", FL_STRICT}, {"samesite=lax", FL_LAX},
                                       {"samesite=none", FL_NONE}, {NULL, 0}};
static const hy_bounds_t service_bounds = {0, INT64_MAX};

static int postconfiguration(hy_conf_t *cf)
{
    if (hy_vars_define(cf, HY_STR("uid_got"), get_uid_got, 0, 0) < 0 ||
        hy_vars_define(cf, HY_STR("uid_set"), get_uid_set, 0, 0) < 0)
        return -1;
    /* nginx's $uid_reset is changeable: a map (or set) that defines it is the one read */
    if (!hy_vars_is_defined(cf, HY_STR("uid_reset")) &&
        hy_vars_define(cf, HY_STR("uid_reset"), get_uid_reset, 0, 0) < 0)
        return -1;
    reset_index = hy_vars_index(cf, HY_STR("uid_reset"));
    return reset_index < 0 ? -1 : 0;
}

#define UID_CTX HY_CTX_HTTP_ANY
#define UC(field) .conf = HY_CONF_LOC, .offset = offsetof(uid_conf_t, field)

static const hy_directive_t userid_directives[] = {
    {.name = "userid", .ctx = UID_CTX, .args = HY_ARGS_1, .set = hy_slot_enum, UC(enable), .post = enable_enum},
    {.name = "userid_service", .ctx = UID_CTX, .args = HY_ARGS_1, .set = hy_slot_num, UC(service),
     .post = &service_bounds},
    {.name = "userid_name", .ctx = UID_CTX, .args = HY_ARGS_1, .set = set_attr, UC(name)},
    {.name = "userid_domain", .ctx = UID_CTX, .args = HY_ARGS_1, .set = set_attr, UC(domain), .post = "; domain="},
    {.name = "userid_path", .ctx = UID_CTX, .args = HY_ARGS_1, .set = set_attr, UC(path), .post = "; path="},
    {.name = "userid_expires", .ctx = UID_CTX, .args = HY_ARGS_1, .set = set_expires, UC(expires)},
    {.name = "userid_p3p", .ctx = UID_CTX, .args = HY_ARGS_1, .set = set_attr, UC(p3p)},
    {.name = "userid_mark", .ctx = UID_CTX, .args = HY_ARGS_1, .set = set_mark, UC(mark)},
    {.name = "userid_flags", .ctx = UID_CTX, .args = HY_ARGS_1MORE, .set = hy_slot_bitmask, UC(flags),
     .post = flags_enum},
    {0},
};

hy_module_t hy_http_userid_module = {
    .name = "http_userid",
    .directives = userid_directives,
    .create_loc_conf = create_loc,
    .merge_loc_conf = merge_loc,
    .postconfiguration = postconfiguration,
};

hy_module_t hy_http_userid_filter_module = {
    .name = "http_userid_filter",
    .header_filter = header_filter,
};
