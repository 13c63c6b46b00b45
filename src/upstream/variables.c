/* variables.c — $upstream_addr, $upstream_status, $upstream_*_time, $upstream_bytes_*, $upstream_response_length
 * (one value per try, joined with ", " as nginx), $upstream_http_NAME, $upstream_cookie_NAME and
 * $upstream_trailer_NAME. */
#include <stdio.h>
#include <string.h>
#include <strings.h>
#include "upstream.h"
#include "cache.h"
#include "../http/vars.h"

enum { V_ADDR, V_STATUS, V_RESPONSE_TIME, V_CONNECT_TIME, V_HEADER_TIME, V_BYTES_RECEIVED, V_BYTES_SENT, V_LENGTH };

static void not_found(hy_var_value_t *v)
{
    v->ptr = "";
    v->len = 0;
    v->not_found = true;
}

static size_t fmt_ms(char *p, int64_t ms)
{
    if (ms < 0)
        return (size_t)sprintf(p, "-");
    return (size_t)sprintf(p, "%lld.%03lld", (long long)(ms / 1000), (long long)(ms % 1000));
}

static void get_log(hy_req_t *req, hy_var_value_t *v, uintptr_t what)
{
    hy_ureq_t *u = hy_upstream_of(req);
    if (u == NULL || u->log->nelts == 0) {
        not_found(v);
        return;
    }
    hy_upstream_log_t *l = u->log->elts;
    size_t n = u->log->nelts, cap = 0;
    for (size_t i = 0; i < n; i++)
        cap += l[i].addr.len + 32;
    char *buf = hy_palloc(req->pool, cap), *p = buf;
    for (size_t i = 0; i < n; i++) {
        if (i)
            *p++ = ',', *p++ = ' ';
        switch (what) {
        case V_ADDR:
            memcpy(p, l[i].addr.ptr, l[i].addr.len);
            p += l[i].addr.len;
            break;
        case V_STATUS:
            p += l[i].status ? (size_t)sprintf(p, "%d", l[i].status) : (size_t)sprintf(p, "-");
            break;
        case V_RESPONSE_TIME:
            p += fmt_ms(p, l[i].response_ms);
            break;
        case V_CONNECT_TIME:
            p += fmt_ms(p, l[i].connect_ms);
            break;
        case V_HEADER_TIME:
            p += fmt_ms(p, l[i].header_ms);
            break;
        case V_BYTES_RECEIVED:
            p += hy_fmt_u64(p, l[i].bytes_received);
            break;
        case V_BYTES_SENT:
            p += hy_fmt_u64(p, l[i].bytes_sent);
            break;
        case V_LENGTH:
            p += hy_fmt_u64(p, l[i].response_length < 0 ? 0 : (uint64_t)l[i].response_length);
            break;
        }
    }
    v->ptr = buf;
    v->len = (size_t)(p - buf);
    v->not_found = false;
}

static void get_http(hy_req_t *req, hy_var_value_t *v, uintptr_t data)
{
    const hy_str_t *name = (const hy_str_t *)data;
    hy_ureq_t *u = hy_upstream_of(req);
    hy_str_t val; /* repeated fields joined with ", " (nginx 1.23+) */
    if (u == NULL || u->headers_in == NULL ||
        !hy_vars_join_fields(req, u->headers_in->elts, u->headers_in->nelts, *name, ", ", &val)) {
        not_found(v);
        return;
    }
    v->ptr = val.ptr;
    v->len = val.len;
    v->not_found = false;
}

static void get_trailer(hy_req_t *req, hy_var_value_t *v, uintptr_t data)
{
    const hy_str_t *val = hy_upstream_trailer(hy_upstream_of(req), *(const hy_str_t *)data);
    if (val == NULL) {
        not_found(v);
        return;
    }
    v->ptr = val->ptr;
    v->len = val->len;
    v->not_found = false;
}

static void get_cookie(hy_req_t *req, hy_var_value_t *v, uintptr_t data)
{
    const hy_str_t *name = (const hy_str_t *)data;
    hy_ureq_t *u = hy_upstream_of(req);
    if (u != NULL && u->headers_in != NULL) {
        hy_header_t *h = u->headers_in->elts;
        for (size_t i = 0; i < u->headers_in->nelts; i++) {
            if (!hy_str_caseeq(h[i].name, "Set-Cookie"))
                continue;
            /* NAME [spaces] = [spaces] VALUE [spaces] (; ...): the first cookie of the field (nginx's parse) */
            const char *p = h[i].value.ptr, *end = p + h[i].value.len;
            if ((size_t)(end - p) <= name->len || strncasecmp(p, name->ptr, name->len) != 0)
                continue;
            const char *q = p + name->len;
            while (q < end && *q == ' ')
                q++;
            if (q == end || *q != '=')
                continue;
            q++;
            while (q < end && *q == ' ')
                q++;
            const char *vs = q;
            while (q < end && *q != ';')
                q++;
            const char *ve = q;
            while (ve > vs && ve[-1] == ' ')
                ve--;
            if (ve == vs)
                continue;
            v->ptr = (char *)vs;
            v->len = (size_t)(ve - vs);
            v->not_found = false;
            return;
        }
    }
    not_found(v);
}

int hy_upstream__define_vars(hy_conf_t *cf)
{
    static const struct {
        const char *name;
        int what;
    } vars[] = {
        {"upstream_addr", V_ADDR},
        {"upstream_status", V_STATUS},
        {"upstream_response_time", V_RESPONSE_TIME},
        {"upstream_connect_time", V_CONNECT_TIME},
        {"upstream_header_time", V_HEADER_TIME},
        {"upstream_bytes_received", V_BYTES_RECEIVED},
        {"upstream_bytes_sent", V_BYTES_SENT},
        {"upstream_response_length", V_LENGTH},
    };
    for (size_t i = 0; i < HY_ARRAY_SIZE(vars); i++)
        if (hy_vars_define(cf, (hy_str_t){(char *)vars[i].name, strlen(vars[i].name)}, get_log, (uintptr_t)vars[i].what,
                           HY_VAR_NOCACHE) < 0)
            return -1;
    if (hy_vars_define_prefix(cf, "upstream_http_", get_http, HY_VAR_NOCACHE) < 0 ||
        hy_vars_define_prefix(cf, "upstream_cookie_", get_cookie, HY_VAR_NOCACHE) < 0 ||
        hy_vars_define_prefix(cf, "upstream_trailer_", get_trailer, HY_VAR_NOCACHE) < 0)
        return -1;
    return hy_ucache__define_vars(cf);
}
