/* rewrite.c — nginx's rewrite module (ngx_http_rewrite_module): return, rewrite, if, set, break, rewrite_log,
 * uninitialized_variable_warn. Each server or location level holds a list of operations run in order by
 * hy_rewrite_run(); an "if" holds its own list and its own location conf (nginx's noname location), which
 * becomes the request's conf when the condition holds. Variables made by "set" and by named regex captures
 * live in a per-request table of this module, read through getters registered with the variable engine. */
#include <stdio.h>
#include <string.h>
#include <unistd.h>
#include <sys/stat.h>
#include "rewrite.h"
#include "../http/phases.h"
#include "../http/uri.h"
#include "../http/vars.h"
#include "../http/open_file_cache.h"
#include "../http/limit_rate.h"
#include "../conf/cycle.h"
#include "../conf/conf_regex.h"
#include "../core/log.h"

#define RW_IDX (hy_http_rewrite_module.index)

enum { OP_RETURN = 1, OP_REWRITE, OP_SET, OP_BREAK, OP_IF };
#define SET_ARGS (-2) /* OP_SET target: the request's $args */
#define SET_LIMIT_RATE (-3) /* OP_SET target: the request's $limit_rate (http/limit_rate.h) */
enum { FLAG_NONE = 0, FLAG_LAST, FLAG_BREAK, FLAG_REDIRECT, FLAG_PERMANENT };
enum { C_TRUTHY = 1, C_EQ, C_NE, C_RE, C_NRE, C_FILE };

/* named captures of one regex: group number → variable slot (hangs off hy_regex_t.data) */
typedef struct rw_names {
    int n;
    int *group, *slot;
} rw_names_t;

typedef struct rw_conf rw_conf_t;

typedef struct rw_op {
    int kind;
    int code;            /* OP_RETURN: status; OP_REWRITE: FLAG_*; OP_IF: C_* */
    hy_complex_t cv;     /* return text, replacement, set value, if right-hand side or file name */
    bool has_text;       /* OP_RETURN */
    hy_regex_t *rx;      /* OP_REWRITE, OP_IF with ~ */
    bool redirect, add_args, has_q; /* OP_REWRITE */
    int var;             /* OP_SET: slot; OP_IF: variable index of the left-hand side */
    bool negate;         /* OP_IF */
    char file_op;        /* OP_IF C_FILE: 'f' 'd' 'e' 'x' */
    hy_http_loc_conf_t *if_loc; /* OP_IF */
} rw_op_t;

struct rw_conf {
    hy_array_t *ops; /* rw_op_t; NULL when the level has none (not inherited, as nginx) */
    int log, uninit_warn;
};

typedef struct rw_main {
    hy_array_t *slots; /* hy_str_t names of "set" and named-capture variables */
    bool has_ops;      /* some level has return/rewrite/set/break/if: the phase handlers are needed */
} rw_main_t;

typedef struct rw_ctx {
    hy_str_t *vals;
    uint8_t *set;
    size_t n;
    uint32_t named_nmatch; /* req->captures.nmatch whose named captures were set */
    bool uri_kept_location; /* "rewrite ... break" changed the URI in the location (nginx's !valid_location) */
    bool handler_lost;      /* an `if` with its own content handler (proxy_pass) matched, then one without */
} rw_ctx_t;

/* ---------------------------------------------------------------- pure helpers */

bool hy_rewrite_truthy(hy_str_t v)
{
    return !(v.len == 0 || (v.len == 1 && v.ptr[0] == '0'));
}

void hy_rewrite_split(hy_pool_t *pool, hy_str_t result, bool has_q, bool add_args, hy_str_t old_args,
                      hy_str_t *uri, hy_str_t *args)
{
    char *q = has_q && result.len ? memchr(result.ptr, '?', result.len) : NULL;
    if (q == NULL) {
        *uri = result;
        if (!add_args)
            *args = HY_STR("");
        else
            *args = old_args;
        return;
    }
    *uri = (hy_str_t){result.ptr, (size_t)(q - result.ptr)};
    hy_str_t a = {q + 1, result.len - (size_t)(q - result.ptr) - 1};
    if (add_args && old_args.len) {
        char *p = hy_palloc(pool, a.len + 1 + old_args.len);
        memcpy(p, a.ptr, a.len);
        p[a.len] = '&';
        memcpy(p + a.len + 1, old_args.ptr, old_args.len);
        a = (hy_str_t){p, a.len + 1 + old_args.len};
    }
    *args = a;
}

size_t hy_rewrite_unescape_redirect(const char *in, size_t n, char *out)
{
    char *d = out;
    size_t i = 0;
    while (i < n) {
        char ch = in[i];
        if (ch == '?')
            break; /* the rest, the '?' included, is copied as it is */
        if (ch != '%') {
            *d++ = ch;
            i++;
            continue;
        }
        int hi = i + 1 < n ? hy_hex_digit(in[i + 1]) : -2;
        if (hi == -2)
            return (size_t)(d - out); /* a '%' at the end goes */
        if (hi < 0) { /* "%z": the '%' goes, the character stays */
            *d++ = in[i + 1];
            i += 2;
            continue;
        }
        int lo = i + 2 < n ? hy_hex_digit(in[i + 2]) : -2;
        if (lo == -2)
            return (size_t)(d - out);
        if (lo < 0) { /* "%2z": all three go */
            i += 3;
            continue;
        }
        unsigned char c = (unsigned char)(hi << 4 | lo);
        i += 3;
        if (c == '?') {
            *d++ = '?';
            break; /* an escaped '?' ends the decoding too */
        }
        if (c > '%' && c < 0x7f) {
            *d++ = (char)c;
        } else { /* controls, space, '"', '#', '%', and bytes above 0x7e stay escaped (no header splitting) */
            memmove(d, in + i - 3, 3); /* in place, d may be that very spot */
            d += 3;
        }
    }
    memmove(d, in + i, n - i);
    return (size_t)(d - out) + (n - i);
}

hy_str_t hy_rewrite_redirect_location(hy_pool_t *pool, hy_str_t result, bool has_q, bool add_args,
                                      hy_str_t old_args)
{
    char *u = hy_palloc(pool, result.len + 1);
    result.len = hy_rewrite_unescape_redirect(result.ptr, result.len, u);
    result.ptr = u;
    if (!add_args || old_args.len == 0)
        return result;
    char *p = hy_palloc(pool, result.len + 1 + old_args.len);
    memcpy(p, result.ptr, result.len);
    p[result.len] = has_q ? '&' : '?';
    memcpy(p + result.len + 1, old_args.ptr, old_args.len);
    return (hy_str_t){p, result.len + 1 + old_args.len};
}

/* ---------------------------------------------------------------- per-request variables */

static rw_ctx_t *req_ctx(hy_req_t *req)
{
    void **slot = hy_req_ctx(req, &hy_http_rewrite_module);
    if (*slot)
        return *slot;
    rw_main_t *m = req->conn->cycle->http_main_conf[RW_IDX];
    size_t n = m->slots->nelts;
    rw_ctx_t *c = hy_pcalloc(req->pool, sizeof(*c) + n * (sizeof(hy_str_t) + 1));
    c->vals = (hy_str_t *)(c + 1);
    c->set = (uint8_t *)(c->vals + n);
    c->n = n;
    *slot = c;
    return c;
}

/* nginx's set keeps the prefixed variables' own getter: `set $http_foo` in one location leaves $http_foo the
 * request's Foo field where it is not set */
static bool prefixed(hy_str_t n)
{
    static const char *const pre[] = {"http_", "sent_http_", "sent_trailer_", "cookie_", "arg_"};
    for (size_t i = 0; i < sizeof(pre) / sizeof(pre[0]); i++) {
        size_t l = strlen(pre[i]);
        if (n.len > l && hy_str_caseeq((hy_str_t){n.ptr, l}, pre[i]))
            return true;
    }
    return false;
}

static void get_slot(hy_req_t *req, hy_var_value_t *v, uintptr_t data)
{
    rw_ctx_t *c = req_ctx(req);
    v->not_found = false;
    if (data < c->n && c->set[data]) {
        v->ptr = c->vals[data].ptr;
        v->len = c->vals[data].len;
        return;
    }
    v->ptr = "";
    v->len = 0;
    rw_main_t *m = req->conn->cycle->http_main_conf[RW_IDX];
    hy_str_t *names = m->slots->elts;
    if (prefixed(names[data])) { /* not set in this request: the request's own $http_foo etc. (nginx) */
        if (!hy_var_get_builtin(req, names[data], v))
            v->ptr = "", v->len = 0, v->not_found = true;
        return;
    }
    hy_http_loc_conf_t *lc = req->loc ? req->loc : req->srv ? req->srv->loc : NULL;
    rw_conf_t *rc = lc ? lc->loc_conf[RW_IDX] : NULL;
    if (rc && rc->uninit_warn) {
        hy_req_log(req, HY_LOG_WARN, "using uninitialized \"%.*s\" variable", (int)names[data].len, names[data].ptr);
    }
}

static void set_slot(hy_req_t *req, int slot, hy_str_t v)
{
    rw_ctx_t *c = req_ctx(req);
    if ((size_t)slot >= c->n)
        return;
    c->vals[slot] = v;
    c->set[slot] = 1;
}

/* The slot of variable `name` owned by this module ("set" or a named capture), defining it when new. */
static int slot_for(hy_conf_t *cf, hy_str_t name)
{
    rw_main_t *m = cf->main_conf[RW_IDX];
    hy_str_t *names = m->slots->elts;
    for (size_t i = 0; i < m->slots->nelts; i++)
        if (hy_str_eq_str(names[i], name))
            return (int)i;
    int slot = (int)m->slots->nelts;
    *(hy_str_t *)hy_array_push(m->slots) = hy_str_dup(cf->pool, name);
    if (hy_vars_define(cf, name, get_slot, (uintptr_t)slot, HY_VAR_NOCACHE) < 0)
        return -1;
    return slot;
}

/* ---------------------------------------------------------------- regexes and captures */

/* Register the named captures of `re` as variables (nginx: every named capture of a server_name, location,
 * rewrite or if regex is a variable) and hang the group → slot table off re->data. */
static int names_of(hy_conf_t *cf, hy_regex_t *re)
{
    uint32_t count;
    const hy_regex_name_t *names = hy_regex_names(re, &count);
    if (count == 0 || re->data)
        return 0;
    rw_names_t *out = hy_pcalloc(cf->pool, sizeof(*out));
    out->group = hy_palloc(cf->pool, sizeof(int) * count);
    out->slot = hy_palloc(cf->pool, sizeof(int) * count);
    for (uint32_t i = 0; i < count; i++) {
        out->group[i] = (int)names[i].group;
        out->slot[i] = slot_for(cf, names[i].name);
        if (out->slot[i] < 0)
            return -1;
    }
    out->n = (int)count;
    re->data = out;
    return 0;
}

static hy_regex_t *compile_rx(hy_conf_t *cf, hy_str_t pat, bool caseless)
{
    hy_regex_t *re = hy_conf_regex(cf, pat, caseless);
    if (re == NULL || names_of(cf, re) != 0)
        return NULL;
    return re;
}

void hy_rewrite_named_captures(hy_req_t *req)
{
    const hy_regex_caps_t *caps = &req->captures;
    if (caps->re == NULL || caps->re->data == NULL)
        return;
    rw_ctx_t *c = req_ctx(req);
    if (c->named_nmatch == caps->nmatch)
        return;
    c->named_nmatch = caps->nmatch;
    const rw_names_t *names = caps->re->data;
    for (int i = 0; i < names->n; i++)
        set_slot(req, names->slot[i], hy_regex_group(caps, (uint32_t)names->group[i]));
}

/* Match into the request's captures ($1..$9 and named ones); true on a match. As nginx's script regex code, a
 * failed rewrite or if match empties $1..$9 (named captures keep their values). */
static bool rx_exec(hy_req_t *req, const hy_regex_t *re, hy_str_t subject)
{
    if (hy_regex_exec(re, subject, hy_req_captures(req)) <= 0) {
        req->captures.n = 0;
        return false;
    }
    hy_rewrite_named_captures(req);
    return true;
}

/* ---------------------------------------------------------------- running */

enum { R_NEXT = 0, R_LAST, R_BREAK, R_DONE };

static void log_notice(hy_req_t *req, const char *fmt, hy_str_t a, hy_str_t b)
{
    char line[1024];
    snprintf(line, sizeof(line), fmt, (int)a.len, a.ptr, (int)b.len, b.ptr);
    hy_req_log(req, HY_LOG_NOTICE, "%s", line);
}

static void do_return(hy_req_t *req, const rw_op_t *op)
{
    int code = op->code;
    if (code < 400 || op->has_text) {
        hy_str_t text;
        hy_vars_eval(req, &op->cv, &text);
        if (code == 301 || code == 302 || code == 303 || code == 307 || code == 308) {
            req->location = text;
            hy_req_error(req, code);
            return;
        }
        hy_http_loc_conf_t *lc = req->loc ? req->loc : req->srv->loc;
        req->status = code;
        if (req->content_type.len == 0) /* nginx keeps one already set (X-Accel-Redirect carries it over) */
            req->content_type = hy_http_mime_type(lc, req->uri.ptr, req->uri.len);
        req->content_length_n = (int64_t)text.len;
        int sent = req->err_status ? req->err_status : code; /* an error_page's code is what goes out (nginx) */
        if (sent == 204 || sent == 304) {
            req->header_only = true;
            req->content_length_n = -1;
            if (sent == 204)
                req->content_type = HY_STR_NULL;
        }
        if (req->method_id == HY_M_HEAD)
            req->header_only = true;
        if (!req->header_only && text.len)
            hy_outq_push_mem(&req->body, text.ptr, text.len, NULL, NULL);
        hy_req_send(req, true);
        return;
    }
    hy_req_error(req, code);
}

/* nginx's NGX_ESCAPE_ARGS: " ", "#", "%", "&", "+", ";", "?", control bytes and bytes >= 0x7f */
static bool args_escaped(unsigned char c)
{
    return c <= ' ' || c >= 0x7f || c == '#' || c == '%' || c == '&' || c == '+' || c == ';' || c == '?';
}

/* The replacement of a rewrite: as hy_vars_eval, except that, as in nginx, a capture after the replacement's
 * '?' -- or anywhere in a redirect's replacement -- is escaped for the arguments when the request's path was
 * sent with a %-escape or a '+' (its decoded form could otherwise break the arguments or the Location apart;
 * a redirect then unescapes what nginx's redirect unescaping takes back, so "/a%20%3Fb" captured gives
 * "/a%20?b" as in nginx). */
static void eval_replacement(hy_req_t *req, const rw_op_t *op, hy_str_t *out)
{
    const hy_complex_t *cv = &op->cv;
    hy_str_t path = req->target;
    const char *q = path.len ? memchr(path.ptr, '?', path.len) : NULL;
    if (q)
        path.len = (size_t)(q - path.ptr);
    bool quoted = path.len && (memchr(path.ptr, '%', path.len) || memchr(path.ptr, '+', path.len));
    if ((!op->has_q && !op->redirect) || !quoted || cv->nparts == 0) {
        hy_vars_eval(req, cv, out);
        return;
    }
    size_t cap = 1;
    for (size_t i = 0; i < cv->nparts; i++) {
        const hy_cv_part_t *part = &cv->parts[i];
        if (part->kind == HY_CV_LITERAL)
            cap += part->lit.len;
        else if (part->kind == HY_CV_CAPTURE)
            cap += 3 * hy_regex_group(&req->captures, (uint32_t)part->index).len;
        else
            cap += hy_var_get(req, part->index)->len;
    }
    char *buf = hy_palloc(req->pool, cap), *o = buf;
    bool in_args = false;
    for (size_t i = 0; i < cv->nparts; i++) {
        const hy_cv_part_t *part = &cv->parts[i];
        hy_str_t v;
        if (part->kind == HY_CV_LITERAL) {
            v = part->lit;
        } else if (part->kind == HY_CV_CAPTURE) {
            v = hy_regex_group(&req->captures, (uint32_t)part->index);
        } else {
            const hy_var_value_t *vv = hy_var_get(req, part->index);
            v = (hy_str_t){vv->ptr, vv->len};
        }
        if ((in_args || op->redirect) && part->kind == HY_CV_CAPTURE) {
            o += hy_pct_escape(o, v.ptr, v.len, args_escaped);
        } else {
            memcpy(o, v.ptr, v.len);
            o += v.len;
        }
        if (part->kind == HY_CV_LITERAL && memchr(v.ptr, '?', v.len))
            in_args = true;
    }
    *o = '\0';
    *out = (hy_str_t){buf, (size_t)(o - buf)};
}

/* returns R_* ; *changed is set when the URI was rewritten */
static int do_rewrite(hy_req_t *req, const rw_op_t *op, const rw_conf_t *rc, bool *changed)
{
    if (!rx_exec(req, op->rx, req->uri)) {
        if (rc->log == 1)
            log_notice(req, "\"%.*s\" does not match \"%.*s\"", op->rx->pattern, req->uri);
        return R_NEXT;
    }
    if (rc->log == 1)
        log_notice(req, "\"%.*s\" matches \"%.*s\"", op->rx->pattern, req->uri);
    hy_str_t result;
    eval_replacement(req, op, &result);
    if (op->redirect) {
        hy_str_t loc = hy_rewrite_redirect_location(req->pool, result, op->has_q, op->add_args, req->args);
        if (rc->log == 1)
            log_notice(req, "rewritten redirect: \"%.*s\"%.*s", loc, HY_STR(""));
        req->location = loc;
        hy_req_error(req, op->code == FLAG_PERMANENT ? 301 : 302);
        return R_DONE;
    }
    hy_str_t uri, args;
    hy_rewrite_split(req->pool, result, op->has_q, op->add_args, req->args, &uri, &args);
    if (rc->log == 1)
        log_notice(req, "rewritten data: \"%.*s\", args: \"%.*s\"", uri, args);
    if (uri.len == 0) {
        hy_req_log(req, HY_LOG_ERR, "the rewritten URI has a zero length");
        hy_req_error(req, 500);
        return R_DONE;
    }
    req->uri = uri;
    req->args = args;
    req->is_internal = true;
    *changed = true;
    if (op->code == FLAG_LAST)
        return R_LAST;
    if (op->code == FLAG_BREAK)
        return R_BREAK;
    return R_NEXT;
}

static bool file_test(hy_req_t *req, const rw_op_t *op)
{
    hy_str_t path;
    hy_vars_eval(req, &op->cv, &path);
    char *p = hy_pstrndup(req->pool, path.ptr, path.len);
    struct stat st;
    bool ok, found = hy_http_stat(req, req->loc, p, path.len, &st) == 0; /* disable_symlinks applies */
    switch (op->file_op) {
    case 'f':
        ok = found && !S_ISDIR(st.st_mode);
        break;
    case 'd':
        ok = found && S_ISDIR(st.st_mode);
        break;
    case 'e':
        ok = found;
        break;
    default: /* 'x': nginx tests the owner's execute bit (ngx_is_exec), so a searchable directory counts */
        ok = found && (st.st_mode & S_IXUSR);
        break;
    }
    return ok != op->negate;
}

static bool condition(hy_req_t *req, const rw_op_t *op)
{
    if (op->code == C_FILE)
        return file_test(req, op);
    const hy_var_value_t *v = hy_var_get(req, op->var);
    hy_str_t lhs = {v->ptr, v->len};
    switch (op->code) {
    case C_TRUTHY:
        return hy_rewrite_truthy(lhs);
    case C_EQ:
    case C_NE: {
        hy_str_t rhs;
        hy_vars_eval(req, &op->cv, &rhs);
        return hy_str_eq_str(lhs, rhs) == (op->code == C_EQ);
    }
    default: { /* C_RE, C_NRE: the subject is copied, captures point into it */
        hy_str_t subj = {hy_pstrndup(req->pool, lhs.ptr, lhs.len), lhs.len};
        return rx_exec(req, op->rx, subj) == (op->code == C_RE);
    }
    }
}

static int run_ops(hy_req_t *req, const rw_conf_t *rc, bool *changed)
{
    const rw_op_t *ops = rc->ops->elts;
    for (size_t i = 0; i < rc->ops->nelts; i++) {
        const rw_op_t *op = &ops[i];
        switch (op->kind) {
        case OP_RETURN:
            do_return(req, op);
            return R_DONE;
        case OP_REWRITE: {
            int r = do_rewrite(req, op, rc, changed);
            if (r != R_NEXT)
                return r;
            break;
        }
        case OP_SET: {
            hy_str_t v;
            hy_vars_eval(req, &op->cv, &v);
            if (op->var == SET_ARGS) {
                req->args = v;
            } else if (op->var == SET_LIMIT_RATE) {
                int64_t r = hy_limit_rate_parse(v);
                if (r < 0) {
                    hy_req_log(req, HY_LOG_ERR, "invalid $limit_rate \"%.*s\"", (int)v.len, v.ptr);
                } else {
                    req->limit_rate = r;
                    req->limit_rate_set = true;
                }
            } else
                set_slot(req, op->var, v);
            break;
        }
        case OP_BREAK:
            return R_BREAK;
        case OP_IF:
            if (condition(req, op)) {
                /* nginx keeps the content handler an earlier `if` set (a later block without one does not reset
                 * it) but takes this block's settings: proxy_pass in one `if`, a second `if` without is a 500 */
                if (req->loc && req->loc->handler && !op->if_loc->handler)
                    req_ctx(req)->handler_lost = true;
                else if (op->if_loc->handler)
                    req_ctx(req)->handler_lost = false;
                req->loc = op->if_loc;
                const rw_conf_t *inner = op->if_loc->loc_conf[RW_IDX];
                if (inner->ops) {
                    int r = run_ops(req, inner, changed);
                    if (r != R_NEXT)
                        return r;
                }
            }
            break;
        default:
            break;
        }
    }
    return R_NEXT;
}

int hy_rewrite_run(hy_req_t *req, hy_http_loc_conf_t *lc)
{
    const rw_conf_t *rc = lc->loc_conf[RW_IDX];
    if (rc == NULL || rc->ops == NULL)
        return HY_RW_CONTINUE;
    bool changed = false;
    switch (run_ops(req, rc, &changed)) {
    case R_DONE:
        return HY_RW_DONE;
    case R_LAST:
        return HY_RW_URI_CHANGED;
    case R_BREAK:
        if (changed)
            req_ctx(req)->uri_kept_location = true;
        return HY_RW_CONTINUE;
    default:
        return changed ? HY_RW_URI_CHANGED : HY_RW_CONTINUE;
    }
}

/* ---------------------------------------------------------------- directives */

static rw_op_t *push_op(hy_conf_t *cf, rw_conf_t *rc)
{
    ((rw_main_t *)cf->main_conf[RW_IDX])->has_ops = true;
    if (rc->ops == NULL)
        rc->ops = hy_array_create(cf->pool, 4, sizeof(rw_op_t));
    rw_op_t *op = hy_array_push(rc->ops);
    memset(op, 0, sizeof(*op));
    return op;
}

static bool is_url(hy_str_t s)
{
    return (s.len >= 7 && memcmp(s.ptr, "http://", 7) == 0) || (s.len >= 8 && memcmp(s.ptr, "https://", 8) == 0) ||
           (s.len >= 7 && memcmp(s.ptr, "$scheme", 7) == 0);
}

static int set_return(hy_conf_t *cf, const hy_directive_t *d, void *conf)
{
    size_t n;
    hy_str_t *a = hy_conf_args(cf, &n);
    rw_op_t *op = push_op(cf, conf);
    op->kind = OP_RETURN;
    int64_t code = hy_parse_int(a[1].ptr, a[1].len);
    if (code < 0) {
        if (n != 2 || !is_url(a[1]))
            return hy_conf_error(cf, "invalid return code \"%s\"", a[1].ptr);
        op->code = 302;
        op->has_text = true;
        return hy_vars_compile(cf, a[1], &op->cv);
    }
    if (code > 999)
        return hy_conf_error(cf, "invalid return code \"%s\"", a[1].ptr);
    op->code = (int)code;
    if (n == 3) {
        op->has_text = true;
        return hy_vars_compile(cf, a[2], &op->cv);
    }
    op->cv.value = HY_STR("");
    return 0;
}

static int set_rewrite(hy_conf_t *cf, const hy_directive_t *d, void *conf)
{
    size_t n;
    hy_str_t *a = hy_conf_args(cf, &n);
    rw_op_t *op = push_op(cf, conf);
    op->kind = OP_REWRITE;
    if ((op->rx = compile_rx(cf, a[1], false)) == NULL)
        return -1;
    hy_str_t repl = a[2];
    op->code = FLAG_NONE;
    if (is_url(repl)) {
        op->redirect = true;
        op->code = FLAG_REDIRECT;
    }
    if (n == 4) {
        if (hy_str_eq(a[3], "last")) {
            if (!op->redirect)
                op->code = FLAG_LAST;
        } else if (hy_str_eq(a[3], "break")) {
            if (!op->redirect)
                op->code = FLAG_BREAK;
        } else if (hy_str_eq(a[3], "redirect")) {
            op->redirect = true;
            op->code = FLAG_REDIRECT;
        } else if (hy_str_eq(a[3], "permanent")) {
            op->redirect = true;
            op->code = FLAG_PERMANENT;
        } else {
            return hy_conf_error(cf, "invalid parameter \"%s\"", a[3].ptr);
        }
    }
    op->add_args = true;
    if (repl.len && repl.ptr[repl.len - 1] == '?') {
        repl.len--;
        op->add_args = false;
    }
    op->has_q = repl.len && memchr(repl.ptr, '?', repl.len) != NULL;
    return hy_vars_compile(cf, repl, &op->cv);
}

static int set_set(hy_conf_t *cf, const hy_directive_t *d, void *conf)
{
    size_t n;
    hy_str_t *a = hy_conf_args(cf, &n);
    if (a[1].len < 2 || a[1].ptr[0] != '$')
        return hy_conf_error(cf, "invalid variable name \"%s\"", a[1].ptr);
    hy_str_t name = {a[1].ptr + 1, a[1].len - 1};
    rw_op_t *op = push_op(cf, conf);
    op->kind = OP_SET;
    if (hy_str_eq(name, "args")) {
        op->var = SET_ARGS; /* nginx's changeable built-ins: it rewrites the request's query */
    } else if (hy_str_eq(name, "limit_rate")) {
        op->var = SET_LIMIT_RATE; /* ... and this one sets the response's rate */
    } else if (hy_vars_is_builtin(name)) {
        return hy_conf_error(cf, "the duplicate \"%.*s\" variable", (int)name.len, name.ptr);
    } else {
        op->var = slot_for(cf, name);
        if (op->var < 0)
            return -1;
    }
    return hy_vars_compile(cf, a[2], &op->cv);
}

static int set_break(hy_conf_t *cf, const hy_directive_t *d, void *conf)
{
    push_op(cf, conf)->kind = OP_BREAK;
    return 0;
}

static int parse_condition(hy_conf_t *cf, rw_op_t *op)
{
    size_t n;
    hy_str_t *a = hy_conf_args(cf, &n);
    size_t cur = 1, last = n - 1;
    hy_str_t first = a[1], end;
    if (first.len < 1 || first.ptr[0] != '(')
        return hy_conf_error(cf, "invalid condition \"%s\"", first.ptr);
    if (first.len == 1) {
        cur = 2;
    } else {
        a[1].ptr++;
        a[1].len--;
    }
    if (cur > last)
        return hy_conf_error(cf, "invalid condition \"%s\"", a[last].ptr);
    end = a[last];
    if (end.len < 1 || end.ptr[end.len - 1] != ')')
        return hy_conf_error(cf, "invalid condition \"%s\"", end.ptr);
    if (end.len == 1) {
        if (last == cur)
            return hy_conf_error(cf, "invalid condition \"%s\"", end.ptr);
        last--;
    } else {
        a[last].len--;
        a[last].ptr[a[last].len] = '\0';
    }
    hy_str_t w = a[cur];
    if (w.len > 1 && w.ptr[0] == '$') {
        if (cur != last && cur + 2 != last)
            return hy_conf_error(cf, "invalid condition \"%s\"", w.ptr);
        op->var = hy_vars_index(cf, (hy_str_t){w.ptr + 1, w.len - 1});
        if (op->var < 0)
            return -1;
        if (cur == last) {
            op->code = C_TRUTHY;
            return 0;
        }
        hy_str_t o = a[cur + 1], rhs = a[last];
        if (hy_str_eq(o, "=") || hy_str_eq(o, "!=")) {
            op->code = o.len == 1 ? C_EQ : C_NE;
            return hy_vars_compile(cf, rhs, &op->cv);
        }
        if (hy_str_eq(o, "~") || hy_str_eq(o, "~*") || hy_str_eq(o, "!~") || hy_str_eq(o, "!~*")) {
            op->code = o.ptr[0] == '!' ? C_NRE : C_RE;
            return (op->rx = compile_rx(cf, rhs, o.ptr[o.len - 1] == '*')) ? 0 : -1;
        }
        return hy_conf_error(cf, "unexpected \"%s\" in condition", o.ptr);
    }
    if ((w.len == 2 && w.ptr[0] == '-') || (w.len == 3 && w.ptr[0] == '!' && w.ptr[1] == '-')) {
        if (cur + 1 != last)
            return hy_conf_error(cf, "invalid condition \"%s\"", w.ptr);
        char c = w.ptr[w.len - 1];
        if (c != 'f' && c != 'd' && c != 'e' && c != 'x')
            return hy_conf_error(cf, "invalid condition \"%s\"", w.ptr);
        op->code = C_FILE;
        op->file_op = c;
        op->negate = w.ptr[0] == '!';
        return hy_vars_compile(cf, a[last], &op->cv);
    }
    return hy_conf_error(cf, "invalid condition \"%s\"", w.ptr);
}

static int set_if(hy_conf_t *cf, const hy_directive_t *d, void *conf)
{
    rw_op_t *op = push_op(cf, conf);
    op->kind = OP_IF;
    if (parse_condition(cf, op) != 0)
        return -1;
    hy_http_loc_conf_t *parent = cf->loc_conf[hy_http_core_module.index];
    void **confs = hy_http_create_loc_confs(cf);
    hy_http_loc_conf_t *lc = confs[hy_http_core_module.index];
    lc->loc_conf = confs;
    lc->parent = parent;
    lc->name = parent->name;
    lc->match = HY_LOC_NONAME;
    op->if_loc = lc;
    if (parent->locations == NULL)
        parent->locations = hy_array_create(cf->pool, 4, sizeof(hy_http_loc_conf_t *));
    *(hy_http_loc_conf_t **)hy_array_push(parent->locations) = lc;
    hy_conf_t saved = *cf;
    cf->loc_conf = confs;
    cf->ctx = cf->ctx == HY_CTX_SERVER ? HY_CTX_SIF : HY_CTX_LIF;
    int rc = hy_conf_parse_block(cf);
    cf->ctx = saved.ctx;
    cf->loc_conf = saved.loc_conf;
    return rc;
}

/* ---------------------------------------------------------------- module */

static void *create_main(hy_conf_t *cf)
{
    rw_main_t *m = hy_pcalloc(cf->pool, sizeof(*m));
    m->slots = hy_array_create(cf->pool, 4, sizeof(hy_str_t));
    return m;
}

static void *create_loc(hy_conf_t *cf)
{
    rw_conf_t *c = hy_pcalloc(cf->pool, sizeof(*c));
    c->log = c->uninit_warn = HY_UNSET;
    return c;
}

static int merge_loc(hy_conf_t *cf, void *parent, void *child)
{
    rw_conf_t *p = parent, *c = child;
    hy_merge_value(c->log, p->log, 0);
    hy_merge_value(c->uninit_warn, p->uninit_warn, 1);
    return 0;
}

static int collect_locations(hy_conf_t *cf, hy_array_t *locs)
{
    if (locs == NULL)
        return 0;
    hy_http_loc_conf_t **l = locs->elts;
    for (size_t i = 0; i < locs->nelts; i++) {
        if (l[i]->regex && names_of(cf, l[i]->regex) != 0)
            return -1;
        if (collect_locations(cf, l[i]->locations) != 0)
            return -1;
    }
    return 0;
}

bool hy_rewrite_uri_changed_in_location(hy_req_t *req)
{
    void **slot = req->ctx ? hy_req_ctx(req, &hy_http_rewrite_module) : NULL;
    return slot && *slot && ((rw_ctx_t *)*slot)->uri_kept_location;
}

/* SERVER_REWRITE: the server's rewrite directives (a regex server_name's captures were recorded when the server
 * was selected) */
static int server_rewrite_phase(hy_req_t *req)
{
    int rc = hy_rewrite_run(req, req->srv->loc);
    return rc == HY_RW_DONE ? HY_DONE : HY_DECLINED; /* a changed URI is simply searched by FIND_CONFIG */
}

/* REWRITE: the location's rewrite directives; "last" (or a changed URI) sends the request back to FIND_CONFIG
 * through POST_REWRITE */
static int rewrite_phase(hy_req_t *req)
{
    int rc = hy_rewrite_run(req, req->loc);
    if (rc == HY_RW_DONE)
        return HY_DONE;
    void **slot = hy_req_ctx(req, &hy_http_rewrite_module);
    bool lost = *slot && ((rw_ctx_t *)*slot)->handler_lost;
    if (lost)
        ((rw_ctx_t *)*slot)->handler_lost = false;
    if (rc == HY_RW_URI_CHANGED) {
        req->uri_changed = true;
    } else if (lost) {
        hy_req_log(req, HY_LOG_ERR, "no upstream configuration");
        hy_req_error(req, 500);
        return HY_DONE;
    }
    return HY_DECLINED;
}

/* named captures of location, server_name and map regexes become variables, as in nginx */
static int postconfiguration(hy_conf_t *cf)
{
    /* a configuration without rewrite directives pays nothing for the module on its requests */
    if (((rw_main_t *)cf->main_conf[RW_IDX])->has_ops &&
        (hy_http_phase_add(cf, HY_PHASE_SERVER_REWRITE, server_rewrite_phase) != 0 ||
         hy_http_phase_add(cf, HY_PHASE_REWRITE, rewrite_phase) != 0))
        return -1;
    size_t n;
    hy_regex_t **mapped = hy_vars_named_regexes(cf, &n);
    for (size_t i = 0; i < n; i++)
        if (names_of(cf, mapped[i]) != 0)
            return -1;
    hy_vars_set_named_hook(cf, hy_rewrite_named_captures);
    hy_http_main_conf_t *hm = cf->main_conf[hy_http_core_module.index];
    hy_http_srv_conf_t **srvs = hm->servers->elts;
    for (size_t s = 0; s < hm->servers->nelts; s++) {
        hy_server_name_t *sn = srvs[s]->server_names->elts;
        for (size_t i = 0; i < srvs[s]->server_names->nelts; i++)
            if (sn[i].kind == 3 && names_of(cf, sn[i].regex) != 0)
                return -1;
        if (collect_locations(cf, srvs[s]->loc->locations) != 0)
            return -1;
    }
    return 0;
}

#define RW_CTX (HY_CTX_SERVER | HY_CTX_LOC | HY_CTX_SIF | HY_CTX_LIF)

static const hy_directive_t rewrite_directives[] = {
    {.name = "return", .ctx = RW_CTX, .args = HY_ARGS_12, .set = set_return, .conf = HY_CONF_LOC},
    {.name = "rewrite", .ctx = RW_CTX, .args = HY_ARGS_2 | HY_ARGS_3, .set = set_rewrite, .conf = HY_CONF_LOC},
    {.name = "set", .ctx = RW_CTX, .args = HY_ARGS_2, .set = set_set, .conf = HY_CONF_LOC},
    {.name = "break", .ctx = RW_CTX, .args = HY_ARGS_0, .set = set_break, .conf = HY_CONF_LOC},
    {.name = "if", .ctx = HY_CTX_SERVER | HY_CTX_LOC, .args = HY_ARGS_1MORE | HY_ARGS_BLOCK, .set = set_if,
     .conf = HY_CONF_LOC},
    {.name = "rewrite_log", .ctx = HY_CTX_HTTP_ANY | HY_CTX_SIF | HY_CTX_LIF, .args = HY_ARGS_FLAG,
     .set = hy_slot_flag, .conf = HY_CONF_LOC, .offset = offsetof(rw_conf_t, log)},
    {.name = "uninitialized_variable_warn", .ctx = HY_CTX_HTTP_ANY | HY_CTX_SIF | HY_CTX_LIF,
     .args = HY_ARGS_FLAG, .set = hy_slot_flag, .conf = HY_CONF_LOC, .offset = offsetof(rw_conf_t, uninit_warn)},
    {0},
};

hy_module_t hy_http_rewrite_module = {
    .name = "http_rewrite",
    .directives = rewrite_directives,
    .create_main_conf = create_main,
    .create_loc_conf = create_loc,
    .merge_loc_conf = merge_loc,
    .postconfiguration = postconfiguration,
};
