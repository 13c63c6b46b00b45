/* vars.c — the variable engine: registry of used variables per http{}, "complex values" compiled at config
 * time, per-request evaluation with a per-request cache, and regex captures. The built-in variables' getters
 * live in vars_builtin.c. */
#include <string.h>
#include "vars.h"
#include "vars_builtin.h"
#include "../conf/cycle.h"
#include "../conf/suggest.h"

#define VARS_IDX (hy_http_vars_module.index)

/* A variable in use in this generation (index = position). get == NULL: referenced, not defined (yet). */
typedef struct var_def {
    hy_str_t name;
    hy_var_get_fn get;
    uintptr_t data;
    unsigned flags;
    const char *file; /* first use, for messages */
    unsigned line;
} var_def_t;

typedef struct vars_main {
    hy_array_t *vars;                 /* var_def_t */
    bool resolved;                    /* after the http block: unknown names fail at once */
    hy_array_t *named_regexes;        /* hy_regex_t * with named groups, from http-level users (map) */
    void (*set_named)(hy_req_t *req); /* the capture variables' owner's setter (rewrite) */
    hy_array_t *prefixes;             /* prefix_def_t: prefixes a module above defines ($upstream_http_...) */
} vars_main_t;

typedef struct prefix_def {
    hy_str_t prefix;
    hy_var_get_fn get;
    unsigned flags;
} prefix_def_t;

/* A module's getter for names with the prefix (data: a hy_str_t * suffix), replacing the built-in one. */
static void apply_prefix(vars_main_t *vm, var_def_t *def)
{
    if (vm->prefixes == NULL)
        return;
    prefix_def_t *p = vm->prefixes->elts;
    for (size_t i = 0; i < vm->prefixes->nelts; i++)
        if (def->name.len >= p[i].prefix.len && memcmp(def->name.ptr, p[i].prefix.ptr, p[i].prefix.len) == 0) {
            def->get = p[i].get;
            def->flags = p[i].flags;
        }
}

typedef struct vars_ctx {
    hy_var_value_t *vals;
    uint8_t *valid;
    size_t n;
} vars_ctx_t;

/* ---------------------------------------------------------------- registry */

static vars_main_t *vars_main(hy_conf_t *cf)
{
    return cf->main_conf ? cf->main_conf[VARS_IDX] : NULL;
}

static int find_index(vars_main_t *vm, hy_str_t name)
{
    var_def_t *defs = vm->vars->elts;
    for (size_t i = 0; i < vm->vars->nelts; i++)
        if (hy_str_eq_str(defs[i].name, name))
            return (int)i;
    return -1;
}

/* The error for a name no module defines: an nginx variable hayate lacks says so; any other name gets nginx's
 * "unknown" wording and the nearest known name. */
static int unknown_variable(hy_conf_t *cf, vars_main_t *vm, hy_str_t name)
{
    if (hy_suggest_variable(name.ptr, name.len))
        return hy_conf_error(cf, "\"$%.*s\" variable is not supported by hayate yet", (int)name.len, name.ptr);
    hy_suggest_t near = {NULL, 0};
    hy_vars__suggest_builtin(&near, name.ptr, name.len);
    var_def_t *defs = vm->vars->elts;
    for (size_t i = 0; i < vm->vars->nelts; i++)
        if (defs[i].get != NULL && defs[i].name.ptr[defs[i].name.len] == '\0')
            hy_suggest_near(&near, name.ptr, name.len, defs[i].name.ptr);
    for (size_t i = 0; hy_suggest_variables[i]; i++)
        hy_suggest_near(&near, name.ptr, name.len, hy_suggest_variables[i]);
    if (near.best != NULL)
        return hy_conf_error(cf, "unknown \"%.*s\" variable (did you mean \"$%s\"?)", (int)name.len, name.ptr,
                             near.best);
    return hy_conf_error(cf, "unknown \"%.*s\" variable", (int)name.len, name.ptr);
}

int hy_vars_index(hy_conf_t *cf, hy_str_t name)
{
    vars_main_t *vm = vars_main(cf);
    if (vm == NULL)
        return hy_conf_error(cf, "variables are only available inside the \"http\" block");
    int idx = find_index(vm, name);
    if (idx >= 0)
        return idx;
    var_def_t *def = hy_array_push(vm->vars);
    def->name = hy_str_dup(cf->pool, name);
    def->file = cf->file;
    def->line = cf->line;
    if (!hy_vars__lookup_builtin(cf, def->name, &def->get, &def->data, &def->flags) && vm->resolved) {
        vm->vars->nelts--;
        return unknown_variable(cf, vm, name);
    }
    apply_prefix(vm, def);
    return (int)(vm->vars->nelts - 1);
}

int hy_vars_define_prefix(hy_conf_t *cf, const char *prefix, hy_var_get_fn get, unsigned flags)
{
    vars_main_t *vm = vars_main(cf);
    if (vm == NULL)
        return hy_conf_error(cf, "variables are only available inside the \"http\" block");
    if (vm->prefixes == NULL)
        vm->prefixes = hy_array_create(cf->pool, 4, sizeof(prefix_def_t));
    prefix_def_t *p = hy_array_push(vm->prefixes);
    p->prefix = (hy_str_t){(char *)prefix, strlen(prefix)};
    p->get = get;
    p->flags = flags;
    var_def_t *defs = vm->vars->elts;
    for (size_t i = 0; i < vm->vars->nelts; i++)
        apply_prefix(vm, &defs[i]);
    return 0;
}

int hy_vars_define(hy_conf_t *cf, hy_str_t name, hy_var_get_fn get, uintptr_t data, unsigned flags)
{
    vars_main_t *vm = vars_main(cf);
    if (vm == NULL)
        return hy_conf_error(cf, "variables are only available inside the \"http\" block");
    int idx = find_index(vm, name);
    if (idx < 0) {
        hy_array_push(vm->vars);
        idx = (int)vm->vars->nelts - 1;
    }
    var_def_t *def = (var_def_t *)vm->vars->elts + idx;
    def->name = hy_str_dup(cf->pool, name);
    def->get = get;
    def->data = data;
    def->flags = flags;
    return idx;
}

bool hy_vars_is_defined(hy_conf_t *cf, hy_str_t name)
{
    vars_main_t *vm = vars_main(cf);
    int idx = vm ? find_index(vm, name) : -1;
    return idx >= 0 && ((var_def_t *)vm->vars->elts)[idx].get != NULL;
}

static inline bool name_char(char c)
{
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_';
}

int hy_vars_scan_name(hy_conf_t *cf, const char **pp, const char *end, hy_str_t *name)
{
    const char *p = *pp;
    bool bracket = p < end && *p == '{';
    if (bracket)
        p++;
    const char *ns = p;
    while (p < end && name_char(*p))
        p++;
    *name = (hy_str_t){(char *)ns, (size_t)(p - ns)};
    if (bracket) {
        if (p >= end || *p != '}')
            return hy_conf_error(cf, "the closing bracket in \"%.*s\" variable is missing", (int)name->len,
                                 name->ptr);
        p++;
    }
    *pp = p;
    return 0;
}

int hy_vars_compile(hy_conf_t *cf, hy_str_t text, hy_complex_t *out)
{
    out->value = hy_str_dup(cf->pool, text);
    out->parts = NULL;
    out->nparts = 0;
    if (memchr(text.ptr, '$', text.len) == NULL)
        return 0;
    hy_array_t parts;
    hy_array_init(&parts, cf->pool, 4, sizeof(hy_cv_part_t));
    const char *p = out->value.ptr, *end = p + out->value.len;
    while (p < end) {
        if (*p != '$') {
            const char *d = memchr(p, '$', (size_t)(end - p));
            const char *e = d ? d : end;
            hy_cv_part_t *part = hy_array_push(&parts);
            part->kind = HY_CV_LITERAL;
            part->lit = (hy_str_t){(char *)p, (size_t)(e - p)};
            p = e;
            continue;
        }
        p++;
        if (p < end && *p >= '1' && *p <= '9') {
            hy_cv_part_t *part = hy_array_push(&parts);
            part->kind = HY_CV_CAPTURE;
            part->index = *p - '0';
            p++;
            continue;
        }
        hy_str_t name;
        if (hy_vars_scan_name(cf, &p, end, &name) != 0)
            return -1;
        if (name.len == 0)
            return hy_conf_error(cf, "invalid variable name");
        int idx = hy_vars_index(cf, name);
        if (idx < 0)
            return -1;
        hy_cv_part_t *part = hy_array_push(&parts);
        part->kind = HY_CV_VAR;
        part->index = idx;
    }
    out->parts = parts.elts;
    out->nparts = parts.nelts;
    return 0;
}

/* ---------------------------------------------------------------- per request */

/* The request's cache: a field of the request rather than a module context, so that reading one variable
 * does not make the request allocate the whole per-module context array. */
static vars_ctx_t *req_ctx(hy_req_t *req, const vars_main_t *vm)
{
    vars_ctx_t *ctx = req->vars_cache;
    if (HY_LIKELY(ctx != NULL))
        return ctx;
    size_t n = vm->vars->nelts;
    /* only the valid flags are zeroed: a value is read only once its flag says it was computed (a zeroed
     * cache of every variable cost a request that reads one ~80 instructions) */
    ctx = hy_palloc(req->pool, sizeof(*ctx) + n * (sizeof(hy_var_value_t) + 1));
    ctx->vals = (hy_var_value_t *)(ctx + 1);
    ctx->valid = (uint8_t *)(ctx->vals + n);
    memset(ctx->valid, 0, n);
    ctx->n = n;
    req->vars_cache = ctx;
    return ctx;
}

const hy_var_value_t *hy_var_get(hy_req_t *req, int index)
{
    static hy_var_value_t missing = {"", 0, true};
    const vars_main_t *vm = req->conn->cycle->http_main_conf[VARS_IDX];
    if (HY_UNLIKELY(index < 0 || (size_t)index >= vm->vars->nelts))
        return &missing;
    vars_ctx_t *ctx = req_ctx(req, vm);
    if (HY_UNLIKELY((size_t)index >= ctx->n)) { /* indexed after this request's cache was made */
        size_t n = vm->vars->nelts;
        hy_var_value_t *vals = hy_palloc(req->pool, n * (sizeof(hy_var_value_t) + 1));
        uint8_t *valid = (uint8_t *)(vals + n);
        memcpy(vals, ctx->vals, ctx->n * sizeof(hy_var_value_t));
        memcpy(valid, ctx->valid, ctx->n);
        memset(valid + ctx->n, 0, n - ctx->n);
        ctx->vals = vals, ctx->valid = valid, ctx->n = n;
    }
    hy_var_value_t *v = &ctx->vals[index];
    if (ctx->valid[index])
        return v;
    const var_def_t *def = (const var_def_t *)vm->vars->elts + index;
    if (ctx->valid[index] == 2) { /* a map whose value refers to itself: nginx reports it not found */
        *v = (hy_var_value_t){"", 0, true};
        return v;
    }
    ctx->valid[index] = 2;
    hy_var_value_t tmp;
    def->get(req, &tmp, def->data);
    *v = tmp;
    ctx->valid[index] = (def->flags & HY_VAR_NOCACHE) ? 0 : 1;
    return v;
}

bool hy_var_get_by_name(hy_req_t *req, hy_str_t name, hy_var_value_t *v)
{
    vars_main_t *vm = req->conn->cycle->http_main_conf[VARS_IDX];
    int idx = find_index(vm, name);
    if (idx >= 0 && ((const var_def_t *)vm->vars->elts)[idx].get != NULL) {
        *v = *hy_var_get(req, idx);
        return true;
    }
    return hy_var_get_builtin(req, name, v);
}

bool hy_var_get_builtin(hy_req_t *req, hy_str_t name, hy_var_value_t *v)
{
    vars_main_t *vm = req->conn->cycle->http_main_conf[VARS_IDX];
    hy_conf_t cf;
    memset(&cf, 0, sizeof(cf));
    cf.pool = req->pool; /* where a prefix's suffix is kept */
    var_def_t def = {.name = name};
    if (!hy_vars__lookup_builtin(&cf, name, &def.get, &def.data, &def.flags))
        return false;
    apply_prefix(vm, &def);
    def.get(req, v, def.data);
    return true;
}

int hy_vars_eval(hy_req_t *req, const hy_complex_t *cv, hy_str_t *out)
{
    if (cv->nparts == 0) {
        *out = cv->value;
        return 0;
    }
    if (cv->nparts == 1 && cv->parts[0].kind == HY_CV_VAR) {
        const hy_var_value_t *v = hy_var_get(req, cv->parts[0].index);
        *out = (hy_str_t){v->ptr, v->len};
        return 0;
    }
    hy_str_t stack[16], *vals = cv->nparts <= 16 ? stack : hy_palloc(req->pool, sizeof(hy_str_t) * cv->nparts);
    size_t total = 0;
    for (size_t i = 0; i < cv->nparts; i++) {
        const hy_cv_part_t *part = &cv->parts[i];
        if (part->kind == HY_CV_LITERAL) {
            vals[i] = part->lit;
        } else if (part->kind == HY_CV_CAPTURE) {
            vals[i] = hy_regex_group(&req->captures, (uint32_t)part->index);
        } else {
            const hy_var_value_t *v = hy_var_get(req, part->index);
            vals[i] = (hy_str_t){v->ptr, v->len};
        }
        total += vals[i].len;
    }
    char *p = hy_palloc(req->pool, total + 1), *o = p;
    for (size_t i = 0; i < cv->nparts; i++) {
        if (vals[i].len)
            memcpy(o, vals[i].ptr, vals[i].len);
        o += vals[i].len;
    }
    *o = '\0';
    *out = (hy_str_t){p, total};
    return 0;
}

/* ---------------------------------------------------------------- named captures of http-level regexes */

void hy_vars_add_named_regex(hy_conf_t *cf, hy_regex_t *re)
{
    vars_main_t *vm = vars_main(cf);
    if (vm == NULL || re->nnames == 0)
        return;
    if (vm->named_regexes == NULL)
        vm->named_regexes = hy_array_create(cf->pool, 2, sizeof(hy_regex_t *));
    *(hy_regex_t **)hy_array_push(vm->named_regexes) = re;
}

hy_regex_t **hy_vars_named_regexes(hy_conf_t *cf, size_t *n)
{
    vars_main_t *vm = vars_main(cf);
    *n = vm && vm->named_regexes ? vm->named_regexes->nelts : 0;
    return *n ? vm->named_regexes->elts : NULL;
}

void hy_vars_set_named_hook(hy_conf_t *cf, void (*fn)(hy_req_t *req))
{
    vars_main_t *vm = vars_main(cf);
    if (vm)
        vm->set_named = fn;
}

void hy_vars_named_captures(hy_req_t *req)
{
    vars_main_t *vm = req->conn->cycle->http_main_conf[VARS_IDX];
    if (vm->set_named)
        vm->set_named(req);
}

/* ---------------------------------------------------------------- module */

static void *create_main(hy_conf_t *cf)
{
    hy_vars__set_evaluator(hy_vars_eval);
    vars_main_t *vm = hy_pcalloc(cf->pool, sizeof(*vm));
    vm->vars = hy_array_create(cf->pool, 16, sizeof(var_def_t));
    return vm;
}

static int postconfiguration(hy_conf_t *cf)
{
    vars_main_t *vm = vars_main(cf);
    var_def_t *defs = vm->vars->elts;
    int rc = 0;
    for (size_t i = 0; i < vm->vars->nelts; i++)
        if (defs[i].get == NULL) {
            /* nginx reports the first one after the whole http block; we name the place of first use, and
             * every such name, so one -t run lists them all */
            cf->file = defs[i].file;
            cf->line = defs[i].line;
            rc = unknown_variable(cf, vm, defs[i].name);
        }
    vm->resolved = true;
    return rc;
}

hy_module_t hy_http_vars_module = {
    .name = "http_vars",
    .create_main_conf = create_main,
    .postconfiguration = postconfiguration,
};
