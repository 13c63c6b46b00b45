/* core_module.c — the http core module: http{}, server{}, location{}, types{} and the core directives, with nginx's
 * defaults and inheritance (http → server → location → nested location), and the post-configuration step that
 * groups servers by listening address. */
#include <string.h>
#include <strings.h>
#include <stdio.h>
#include <unistd.h>
#include <arpa/inet.h>
#include <netinet/in.h>
#include "core.h"
#include "phases.h"
#include "vars.h"
#include "../conf/cycle.h"
#include "../conf/conf_regex.h"
#include "../core/log.h"
#include "../core/nofollow.h"

#define CORE_IDX (hy_http_core_module.index)

static int num_modules(void)
{
    int n = 0;
    while (hy_modules[n])
        n++;
    return n;
}

hy_http_main_conf_t *hy_http_main(hy_cycle_t *cycle)
{
    return cycle->http_main_conf ? cycle->http_main_conf[CORE_IDX] : NULL;
}

/* ---------------- conf structs ---------------- */

static void *create_main(hy_conf_t *cf)
{
    hy_http_main_conf_t *m = hy_pcalloc(cf->pool, sizeof(*m));
    m->servers = hy_array_create(cf->pool, 4, sizeof(hy_http_srv_conf_t *));
    m->types_hash_max_size = m->types_hash_bucket_size = HY_UNSET;
    return m;
}

static void *create_srv(hy_conf_t *cf)
{
    hy_http_srv_conf_t *s = hy_pcalloc(cf->pool, sizeof(*s));
    s->client_header_timeout_ms = s->client_header_buffer_size = HY_UNSET;
    s->large_header_num = s->large_header_size = s->max_headers = HY_UNSET;
    s->merge_slashes = s->ignore_invalid_headers = s->underscores_in_headers = HY_UNSET;
    s->file = cf->file;
    s->line = cf->line;
    return s;
}

static void *create_loc(hy_conf_t *cf)
{
    hy_http_loc_conf_t *l = hy_pcalloc(cf->pool, sizeof(*l));
    l->root_is_alias = HY_UNSET;
    l->sendfile = l->tcp_nopush = l->tcp_nodelay = HY_UNSET;
    l->sendfile_max_chunk = HY_UNSET;
    l->keepalive_timeout_ms = l->keepalive_header_sec = l->keepalive_requests = HY_UNSET;
    l->keepalive_time_ms = l->keepalive_disable = HY_UNSET;
    l->client_body_timeout_ms = l->client_max_body_size = l->send_timeout_ms = HY_UNSET;
    l->client_body_buffer_size = HY_UNSET;
    l->client_body_in_file_only = l->client_body_in_single_buffer = HY_UNSET;
    l->reset_timedout_connection = l->lingering_close = HY_UNSET;
    l->lingering_time_ms = l->lingering_timeout_ms = HY_UNSET;
    l->server_tokens = HY_UNSET;
    l->open_file_cache_max = l->open_file_cache_inactive_ms = HY_UNSET;
    l->open_file_cache_valid_ms = l->open_file_cache_min_uses = HY_UNSET;
    l->open_file_cache_errors = l->etag = l->if_modified_since = HY_UNSET;
    l->disable_symlinks = HY_UNSET;
    l->max_ranges = HY_UNSET;
    l->internal = l->chunked_transfer_encoding = l->msie_padding = l->msie_refresh = l->log_not_found = HY_UNSET;
    l->absolute_redirect = l->server_name_in_redirect = l->port_in_redirect = HY_UNSET;
    l->satisfy = HY_UNSET;
    l->auth_delay_ms = HY_UNSET;
    return l;
}

static int merge_srv(hy_conf_t *cf, void *parent, void *child)
{
    hy_http_srv_conf_t *p = parent, *c = child;
    hy_merge_value(c->client_header_timeout_ms, p->client_header_timeout_ms, 60000);
    hy_merge_value(c->client_header_buffer_size, p->client_header_buffer_size, 1024);
    hy_merge_value(c->large_header_num, p->large_header_num, 4);
    hy_merge_value(c->large_header_size, p->large_header_size, 8192);
    hy_merge_value(c->max_headers, p->max_headers, 1000);
    hy_merge_value(c->merge_slashes, p->merge_slashes, 1);
    hy_merge_value(c->ignore_invalid_headers, p->ignore_invalid_headers, 1);
    hy_merge_value(c->underscores_in_headers, p->underscores_in_headers, 0);
    if (c->large_header_size < c->client_header_buffer_size) { /* nginx's check */
        hy_merge_value(c->large_header_size, c->client_header_buffer_size, 8192);
    }
    return 0;
}

static hy_mime_map_t *default_types(hy_conf_t *cf)
{
    /* nginx's built-in types when no types{} block is configured */
    hy_mime_map_t *m = hy_mime_map_create(cf->pool);
    hy_mime_map_add(m, HY_STR("html"), HY_STR("text/html"));
    hy_mime_map_add(m, HY_STR("gif"), HY_STR("image/gif"));
    hy_mime_map_add(m, HY_STR("jpg"), HY_STR("image/jpeg"));
    return m;
}

static int merge_loc(hy_conf_t *cf, void *parent, void *child)
{
    hy_http_loc_conf_t *p = parent, *c = child;
    if (c->root.ptr == NULL && c->alias.ptr == NULL) {
        if (p->root.ptr == NULL && p->alias.ptr == NULL) {
            char *r = hy_cycle_path(cf->cycle, "html", 4);
            p->root = (hy_str_t){r, strlen(r)};
            p->root_is_alias = 0;
        }
        c->root = p->root;
        c->alias = p->alias;
        c->alias_prefix = p->alias_prefix; /* an inherited alias keeps the prefix of the location that set it */
        c->alias_regex = p->alias_regex;
        c->root_is_alias = p->root_is_alias;
        c->root_cv = p->root_cv;
    }
    if (c->error_log_scope == 0)
        c->error_log_scope = p->error_log_scope;
    hy_merge_value(c->sendfile, p->sendfile, 0);
    hy_merge_value(c->sendfile_max_chunk, p->sendfile_max_chunk, 2 * 1024 * 1024); /* nginx 1.21.4+ */
    hy_merge_value(c->tcp_nopush, p->tcp_nopush, 0);
    hy_merge_value(c->tcp_nodelay, p->tcp_nodelay, 1);
    hy_merge_value(c->keepalive_timeout_ms, p->keepalive_timeout_ms, 75000);
    hy_merge_value(c->keepalive_header_sec, p->keepalive_header_sec, 0);
    hy_merge_value(c->keepalive_requests, p->keepalive_requests, 1000);
    hy_merge_value(c->keepalive_time_ms, p->keepalive_time_ms, 3600 * 1000);
    hy_merge_value(c->keepalive_disable, p->keepalive_disable, HY_KEEPALIVE_DISABLE_MSIE6);
    hy_merge_value(c->client_body_timeout_ms, p->client_body_timeout_ms, 60000);
    hy_merge_value(c->client_max_body_size, p->client_max_body_size, 1024 * 1024);
    hy_merge_value(c->client_body_buffer_size, p->client_body_buffer_size, 16384);
    hy_merge_value(c->client_body_in_file_only, p->client_body_in_file_only, 0);
    hy_merge_value(c->client_body_in_single_buffer, p->client_body_in_single_buffer, 0);
    if (c->client_body_temp_path.ptr == NULL) {
        if (p->client_body_temp_path.ptr) {
            c->client_body_temp_path = p->client_body_temp_path;
            memcpy(c->client_body_temp_levels, p->client_body_temp_levels, sizeof(c->client_body_temp_levels));
        } else {
            char *d = hy_cycle_path(cf->cycle, "client_body_temp", 16);
            c->client_body_temp_path = (hy_str_t){d, strlen(d)};
        }
    }
    hy_merge_value(c->send_timeout_ms, p->send_timeout_ms, 60000);
    hy_merge_value(c->reset_timedout_connection, p->reset_timedout_connection, 0);
    hy_merge_value(c->lingering_close, p->lingering_close, HY_LINGER_ON);
    hy_merge_value(c->lingering_time_ms, p->lingering_time_ms, 30000);
    hy_merge_value(c->lingering_timeout_ms, p->lingering_timeout_ms, 5000);
    hy_merge_value(c->server_tokens, p->server_tokens, HY_TOKENS_ON);
    if (c->types == NULL) {
        if (p->types == NULL)
            p->types = default_types(cf);
        c->types = p->types;
    }
    hy_merge_str(c->default_type, p->default_type, "text/plain");
    hy_merge_str(c->post_action, p->post_action, "");
    if (hy_str_eq(c->post_action, "off"))
        c->post_action = HY_STR("");
    if (c->open_file_cache_max == HY_UNSET) {
        if (p->open_file_cache_max == HY_UNSET) { /* nowhere configured: the implicit cache (open_file_cache.h) */
            c->open_file_cache_max = HY_OFC_IMPLICIT_MAX;
            c->open_file_cache_inactive_ms = 60000;
            c->open_file_cache_implicit = true;
        } else {
            c->open_file_cache_max = p->open_file_cache_max;
            c->open_file_cache_inactive_ms = p->open_file_cache_inactive_ms;
            c->open_file_cache_implicit = p->open_file_cache_implicit;
        }
    }
    hy_merge_value(c->open_file_cache_valid_ms, p->open_file_cache_valid_ms, 60000);
    hy_merge_value(c->open_file_cache_min_uses, p->open_file_cache_min_uses, 1);
    hy_merge_value(c->open_file_cache_errors, p->open_file_cache_errors, 0);
    if (c->disable_symlinks == HY_UNSET) {
        c->disable_symlinks = p->disable_symlinks == HY_UNSET ? HY_SYMLINKS_OFF : p->disable_symlinks;
        c->disable_symlinks_from = p->disable_symlinks_from;
    }
    hy_merge_value(c->etag, p->etag, 1);
    hy_merge_value(c->if_modified_since, p->if_modified_since, HY_IMS_EXACT);
    hy_merge_value(c->max_ranges, p->max_ranges, -2); /* -2: unlimited */
    if (c->max_ranges == -2)
        c->max_ranges = -1;
    hy_merge_value(c->internal, c->internal, 0); /* not inherited */
    hy_merge_value(c->chunked_transfer_encoding, p->chunked_transfer_encoding, 1);
    hy_merge_value(c->msie_padding, p->msie_padding, 1);
    hy_merge_value(c->msie_refresh, p->msie_refresh, 0);
    hy_merge_value(c->log_not_found, p->log_not_found, 1);
    hy_merge_value(c->absolute_redirect, p->absolute_redirect, 1);
    hy_merge_value(c->server_name_in_redirect, p->server_name_in_redirect, 0);
    hy_merge_value(c->port_in_redirect, p->port_in_redirect, 1);
    hy_merge_value(c->satisfy, p->satisfy, HY_SATISFY_ALL);
    hy_merge_value(c->auth_delay_ms, p->auth_delay_ms, 0);
    /* an "if" or "limit_except" block keeps its location's content handler (proxy_pass ...), as nginx: its request
     * keeps the handler the location set; the module's merge inherits the target with it */
    if (c->match == HY_LOC_NONAME && c->handler == NULL)
        c->handler = p->handler;
    return 0;
}

/* ---------------- blocks ---------------- */

static void **create_confs(hy_conf_t *cf, int level)
{
    int n = num_modules();
    void **confs = hy_pcalloc(cf->pool, sizeof(void *) * (size_t)n);
    for (int i = 0; i < n; i++) {
        hy_module_t *m = hy_modules[i];
        if (level == 0 && m->create_main_conf)
            confs[i] = m->create_main_conf(cf);
        else if (level == 1 && m->create_srv_conf)
            confs[i] = m->create_srv_conf(cf);
        else if (level == 2 && m->create_loc_conf)
            confs[i] = m->create_loc_conf(cf);
    }
    return confs;
}

void **hy_http_create_loc_confs(hy_conf_t *cf)
{
    return create_confs(cf, 2);
}

static int merge_locations(hy_conf_t *cf, void **parent, hy_http_loc_conf_t *lc)
{
    int n = num_modules();
    void **saved = cf->loc_conf;
    cf->loc_conf = lc->loc_conf; /* a module's merge can see which location it merges (an "if" block's, ...) */
    for (int i = 0; i < n; i++)
        if (hy_modules[i]->merge_loc_conf && parent[i] && lc->loc_conf[i] &&
            hy_modules[i]->merge_loc_conf(cf, parent[i], lc->loc_conf[i]) != 0) {
            cf->loc_conf = saved;
            return -1;
        }
    cf->loc_conf = saved;
    if (lc->locations) {
        hy_http_loc_conf_t **kids = lc->locations->elts;
        for (size_t k = 0; k < lc->locations->nelts; k++)
            if (merge_locations(cf, lc->loc_conf, kids[k]) != 0)
                return -1;
    }
    return 0;
}

static int build_addrs(hy_conf_t *cf, hy_http_main_conf_t *m);

/* client_body_temp_path path [level1 [level2 [level3]]]: levels are 1 or 2 digits (nginx) */
static int set_client_body_temp_path(hy_conf_t *cf, const hy_directive_t *d, void *conf)
{
    hy_http_loc_conf_t *l = conf;
    size_t n;
    hy_str_t *a = hy_conf_args(cf, &n);
    if (l->client_body_temp_path.ptr)
        return hy_conf_error(cf, "\"%s\" directive is duplicate", a[0].ptr);
    if (n > 5)
        return hy_conf_error(cf, "invalid number of arguments in \"%s\" directive", a[0].ptr);
    int total = 0; /* nginx: each level at least 1 digit, all of them within the 10-digit name */
    for (size_t i = 2; i < n; i++) {
        int64_t v = hy_parse_int(a[i].ptr, a[i].len);
        if (v < 1 || v > 10)
            return hy_conf_error(cf, "\"%s\" directive invalid value", a[0].ptr);
        l->client_body_temp_levels[i - 2] = (int)v;
        total += (int)v;
    }
    if (total > 10)
        return hy_conf_error(cf, "\"%s\" directive invalid value", a[0].ptr);
    char *path = hy_cycle_path(cf->cycle, a[1].ptr, a[1].len);
    size_t len = strlen(path);
    while (len > 1 && path[len - 1] == '/')
        len--;
    l->client_body_temp_path = (hy_str_t){path, len};
    return 0;
}

static int set_http(hy_conf_t *cf, const hy_directive_t *d, void *conf)
{
    if (cf->cycle->http_main_conf)
        return hy_conf_error(cf, "\"http\" directive is duplicate");
    hy_conf_t saved = *cf;
    cf->main_conf = create_confs(cf, 0);
    cf->cycle->http_main_conf = cf->main_conf;
    cf->srv_conf = create_confs(cf, 1);
    cf->loc_conf = create_confs(cf, 2);
    hy_http_main_conf_t *m = cf->main_conf[CORE_IDX];
    m->loc = cf->loc_conf[CORE_IDX];
    m->loc->loc_conf = cf->loc_conf;
    cf->ctx = HY_CTX_HTTP;
    int rc = hy_conf_parse_block(cf);
    void **http_srv = cf->srv_conf, **http_loc = cf->loc_conf;
    cf->ctx = saved.ctx;
    if (rc != 0)
        goto out;
    /* merge http → server → locations */
    int n = num_modules();
    hy_http_srv_conf_t **srvs = m->servers->elts;
    for (size_t s = 0; s < m->servers->nelts; s++) {
        for (int i = 0; i < n; i++) {
            if (hy_modules[i]->merge_srv_conf && http_srv[i] && srvs[s]->srv_conf[i] &&
                hy_modules[i]->merge_srv_conf(cf, http_srv[i], srvs[s]->srv_conf[i]) != 0) {
                rc = -1;
                goto out;
            }
        }
        if (merge_locations(cf, http_loc, srvs[s]->loc) != 0) {
            rc = -1;
            goto out;
        }
    }
    /* the http level itself gets defaults too (nothing inherits from above it) */
    void **empty_loc = create_confs(cf, 2);
    hy_http_loc_conf_t *top = empty_loc[CORE_IDX];
    top->loc_conf = empty_loc;
    for (int i = 0; i < n; i++)
        if (hy_modules[i]->merge_loc_conf && empty_loc[i] && http_loc[i])
            hy_modules[i]->merge_loc_conf(cf, empty_loc[i], http_loc[i]);
    rc = build_addrs(cf, m);
    for (int i = 0; rc == 0 && i < n; i++)
        if (hy_modules[i]->postconfiguration && hy_modules[i]->postconfiguration(cf) != 0)
            rc = -1;
    if (rc == 0)
        rc = hy_http_phases_init(cf);
out:
    cf->main_conf = saved.main_conf;
    cf->srv_conf = saved.srv_conf;
    cf->loc_conf = saved.loc_conf;
    return rc;
}

static int set_server(hy_conf_t *cf, const hy_directive_t *d, void *conf)
{
    hy_conf_t saved = *cf;
    hy_http_main_conf_t *m = cf->main_conf[CORE_IDX];
    void **srv_conf = create_confs(cf, 1);
    void **loc_conf = create_confs(cf, 2);
    hy_http_srv_conf_t *s = srv_conf[CORE_IDX];
    s->srv_conf = srv_conf;
    s->loc = loc_conf[CORE_IDX];
    s->loc->loc_conf = loc_conf;
    s->server_names = hy_array_create(cf->pool, 2, sizeof(hy_server_name_t));
    s->listens = hy_array_create(cf->pool, 2, sizeof(hy_listen_spec_t));
    *(hy_http_srv_conf_t **)hy_array_push(m->servers) = s;
    cf->srv_conf = srv_conf;
    cf->loc_conf = loc_conf;
    cf->ctx = HY_CTX_SERVER;
    int rc = hy_conf_parse_block(cf);
    cf->ctx = saved.ctx;
    cf->srv_conf = saved.srv_conf;
    cf->loc_conf = saved.loc_conf;
    if (rc != 0)
        return rc;
    if (s->listens->nelts == 0) { /* nginx: *:80 as root, *:8000 otherwise */
        hy_listen_spec_t *ls = hy_array_push(s->listens);
        const char *err = NULL;
        const char *def = getuid() == 0 ? "*:80" : "*:8000";
        hy_listen_parse(def, strlen(def), ls, &err);
    }
    return 0;
}

static int set_location(hy_conf_t *cf, const hy_directive_t *d, void *conf)
{
    size_t n;
    hy_str_t *a = hy_conf_args(cf, &n);
    hy_http_loc_conf_t *parent = cf->loc_conf[CORE_IDX];
    void **loc_conf = create_confs(cf, 2);
    hy_http_loc_conf_t *lc = loc_conf[CORE_IDX];
    lc->loc_conf = loc_conf;
    lc->parent = parent;
    hy_str_t mod = n == 3 ? a[1] : HY_STR_NULL, name = n == 3 ? a[2] : a[1];
    if (n == 3) {
        if (hy_str_eq(mod, "="))
            lc->match = HY_LOC_EXACT;
        else if (hy_str_eq(mod, "^~"))
            lc->match = HY_LOC_NOREGEX;
        else if (hy_str_eq(mod, "~"))
            lc->match = HY_LOC_REGEX;
        else if (hy_str_eq(mod, "~*"))
            lc->match = HY_LOC_REGEX_CASELESS;
        else
            return hy_conf_error(cf, "invalid location modifier \"%s\"", mod.ptr);
    } else if (name.len > 1 && name.ptr[0] == '=') {
        lc->match = HY_LOC_EXACT, name.ptr++, name.len--;
    } else if (name.len > 2 && name.ptr[0] == '^' && name.ptr[1] == '~') {
        lc->match = HY_LOC_NOREGEX, name.ptr += 2, name.len -= 2;
    } else if (name.len > 2 && name.ptr[0] == '~' && name.ptr[1] == '*') {
        lc->match = HY_LOC_REGEX_CASELESS, name.ptr += 2, name.len -= 2;
    } else if (name.len > 1 && name.ptr[0] == '~') {
        lc->match = HY_LOC_REGEX, name.ptr++, name.len--;
    } else if (name.len > 0 && name.ptr[0] == '@') {
        lc->match = HY_LOC_NAMED;
    }
    lc->name = hy_str_dup(cf->pool, name);
    if (lc->match == HY_LOC_REGEX || lc->match == HY_LOC_REGEX_CASELESS) {
        lc->regex = hy_conf_regex(cf, lc->name, lc->match == HY_LOC_REGEX_CASELESS);
        if (lc->regex == NULL)
            return -1;
    }
    if (cf->ctx == HY_CTX_LOC) { /* nesting rules (nginx's ngx_http_core_location) */
        if (parent->match == HY_LOC_EXACT)
            return hy_conf_error(cf, "location \"%s\" cannot be inside the exact location \"%s\"", lc->name.ptr,
                                 parent->name.ptr);
        if (parent->match == HY_LOC_NAMED)
            return hy_conf_error(cf, "location \"%s\" cannot be inside the named location \"%s\"", lc->name.ptr,
                                 parent->name.ptr);
        if (lc->match == HY_LOC_NAMED)
            return hy_conf_error(cf, "named location \"%s\" can be on the server level only", lc->name.ptr);
        if ((lc->match == HY_LOC_PREFIX || lc->match == HY_LOC_EXACT || lc->match == HY_LOC_NOREGEX) &&
            (parent->match == HY_LOC_PREFIX || parent->match == HY_LOC_NOREGEX) &&
            (lc->name.len < parent->name.len || memcmp(lc->name.ptr, parent->name.ptr, parent->name.len) != 0))
            return hy_conf_error(cf, "location \"%s\" is outside location \"%s\"", lc->name.ptr, parent->name.ptr);
    }
    if (parent->locations == NULL)
        parent->locations = hy_array_create(cf->pool, 4, sizeof(hy_http_loc_conf_t *));
    hy_http_loc_conf_t **kids = parent->locations->elts;
    for (size_t i = 0; i < parent->locations->nelts; i++)
        if (kids[i]->match != HY_LOC_REGEX && kids[i]->match != HY_LOC_REGEX_CASELESS &&
            kids[i]->match != HY_LOC_NONAME &&
            (kids[i]->match == HY_LOC_EXACT) == (lc->match == HY_LOC_EXACT) &&
            hy_str_eq_str(kids[i]->name, lc->name))
            return hy_conf_error(cf, "duplicate location \"%s\"", lc->name.ptr);
    *(hy_http_loc_conf_t **)hy_array_push(parent->locations) = lc;
    hy_conf_t saved = *cf;
    cf->loc_conf = loc_conf;
    cf->ctx = HY_CTX_LOC;
    int rc = hy_conf_parse_block(cf);
    cf->ctx = saved.ctx;
    cf->loc_conf = saved.loc_conf;
    return rc;
}

/* nginx's method bits (ngx_http_request.h); the first 14 are the names limit_except takes */
static const struct {
    const char *name;
    uint32_t bit;
} method_bits[] = {
    {"GET", 0x2},         {"HEAD", 0x4},       {"POST", 0x8},   {"PUT", 0x10},      {"DELETE", 0x20},
    {"MKCOL", 0x40},      {"COPY", 0x80},      {"MOVE", 0x100}, {"OPTIONS", 0x200}, {"PROPFIND", 0x400},
    {"PROPPATCH", 0x800}, {"LOCK", 0x1000},    {"UNLOCK", 0x2000}, {"PATCH", 0x4000}, {"TRACE", 0x8000},
    {"CONNECT", 0x10000},
};
#define LMT_NAMES 14

uint32_t hy_http_method_bit(hy_str_t method)
{
    for (size_t i = 0; i < HY_ARRAY_SIZE(method_bits); i++)
        if (hy_str_eq(method, method_bits[i].name))
            return method_bits[i].bit;
    return 0x1;
}

hy_http_loc_conf_t *hy_http_limit_except(hy_http_loc_conf_t *lc, hy_str_t method)
{
    if (lc->limit_except_loc && (hy_http_method_bit(method) & lc->limit_except))
        return lc->limit_except_loc;
    return lc;
}

/* limit_except METHOD ... { }: the block's conf applies to every method not listed (GET implies HEAD) */
static int set_limit_except(hy_conf_t *cf, const hy_directive_t *d, void *conf)
{
    hy_http_loc_conf_t *parent = conf;
    if (parent->limit_except)
        return hy_conf_error(cf, "\"limit_except\" directive is duplicate");
    size_t n;
    hy_str_t *a = hy_conf_args(cf, &n);
    uint32_t mask = 0xffffffffu;
    for (size_t i = 1; i < n; i++) {
        size_t k = 0;
        while (k < LMT_NAMES && strcasecmp(a[i].ptr, method_bits[k].name) != 0)
            k++;
        if (k == LMT_NAMES)
            return hy_conf_error(cf, "invalid method \"%s\"", a[i].ptr);
        mask &= ~method_bits[k].bit;
    }
    if (mask & 0x2) /* GET not allowed: HEAD is not either */
        mask |= 0x4;
    else
        mask &= ~0x4u;
    parent->limit_except = mask;
    void **confs = create_confs(cf, 2);
    hy_http_loc_conf_t *lc = confs[CORE_IDX];
    lc->loc_conf = confs;
    lc->parent = parent;
    lc->name = parent->name;
    lc->match = HY_LOC_NONAME;
    lc->is_limit_except = true;
    parent->limit_except_loc = lc;
    if (parent->locations == NULL)
        parent->locations = hy_array_create(cf->pool, 4, sizeof(hy_http_loc_conf_t *));
    *(hy_http_loc_conf_t **)hy_array_push(parent->locations) = lc;
    hy_conf_t saved = *cf;
    cf->loc_conf = confs;
    cf->ctx = HY_CTX_LMT;
    int rc = hy_conf_parse_block(cf);
    cf->ctx = saved.ctx;
    cf->loc_conf = saved.loc_conf;
    return rc;
}

static int types_raw(hy_conf_t *cf, void *data)
{
    hy_mime_map_t *m = data;
    size_t n;
    hy_str_t *a = hy_conf_args(cf, &n);
    if (n < 2)
        return hy_conf_error(cf, "invalid number of arguments in \"types\" directive"); /* nginx wording */
    hy_str_t type = hy_str_dup(cf->pool, a[0]);
    for (size_t i = 1; i < n; i++) {
        hy_str_t ext = hy_str_dup(cf->pool, a[i]);
        hy_str_lower(ext.ptr, ext.len);
        hy_str_t prev;
        if (hy_mime_map_replace(m, ext, type, &prev)) /* the last one wins, as in nginx */
            hy_conf_warn(cf, "duplicate extension \"%s\", content type: \"%s\", previous content type: \"%.*s\"",
                         ext.ptr, type.ptr, (int)prev.len, prev.ptr);
    }
    return 0;
}

static int set_types(hy_conf_t *cf, const hy_directive_t *d, void *conf)
{
    hy_http_loc_conf_t *lc = conf;
    if (lc->types == NULL)
        lc->types = hy_mime_map_create(cf->pool);
    hy_conf_t saved = *cf;
    cf->raw = types_raw;
    cf->raw_data = lc->types;
    cf->ctx = HY_CTX_TYPES;
    int rc = hy_conf_parse_block(cf);
    cf->raw = saved.raw;
    cf->raw_data = saved.raw_data;
    cf->ctx = saved.ctx;
    return rc;
}

/* ---------------- directives with their own syntax ---------------- */

static int set_listen(hy_conf_t *cf, const hy_directive_t *d, void *conf)
{
    hy_http_srv_conf_t *s = conf;
    size_t n;
    hy_str_t *a = hy_conf_args(cf, &n);
    hy_listen_spec_t spec;
    const char *err = NULL;
    if (hy_listen_parse(a[1].ptr, a[1].len, &spec, &err) != 0)
        return hy_conf_error(cf, "%s in \"%s\" of the \"listen\" directive", err, a[1].ptr);
    for (size_t i = 2; i < n; i++) {
        hy_str_t o = a[i];
        if (hy_str_eq(o, "default_server") || hy_str_eq(o, "default")) {
            spec.default_server = true;
        } else if (hy_str_eq(o, "ssl")) {
            spec.ssl = true;
        } else if (hy_str_eq(o, "proxy_protocol")) {
            spec.proxy_protocol = true;
        } else if (hy_str_eq(o, "http2")) {
            spec.http2 = true;
            hy_conf_warn(cf, "the \"listen ... http2\" directive is deprecated, use the \"http2\" directive instead");
        } else if (hy_str_eq(o, "quic") || hy_str_eq(o, "http3")) {
            return hy_conf_error(cf, "the \"%s\" parameter of the \"listen\" directive is not supported by hayate yet "
                                 "(HTTP/3 is not planned yet)", o.ptr);
        } else if (o.len > 8 && memcmp(o.ptr, "backlog=", 8) == 0) {
            int64_t v = hy_parse_int(o.ptr + 8, o.len - 8);
            if (v <= 0 || v > 65535)
                return hy_conf_error(cf, "invalid backlog \"%s\"", o.ptr);
            spec.backlog = (int)v;
        } else if (o.len > 7 && memcmp(o.ptr, "rcvbuf=", 7) == 0) {
            int64_t v = hy_parse_size(o.ptr + 7, o.len - 7);
            if (v < 0 || v > INT32_MAX)
                return hy_conf_error(cf, "invalid rcvbuf \"%s\"", o.ptr);
            spec.rcvbuf = (int)v;
        } else if (o.len > 7 && memcmp(o.ptr, "sndbuf=", 7) == 0) {
            int64_t v = hy_parse_size(o.ptr + 7, o.len - 7);
            if (v < 0 || v > INT32_MAX)
                return hy_conf_error(cf, "invalid sndbuf \"%s\"", o.ptr);
            spec.sndbuf = (int)v;
        } else if (hy_str_eq(o, "reuseport")) {
            spec.reuseport = true;
        } else if (hy_str_eq(o, "deferred")) {
            spec.deferred = true;
        } else if (hy_str_eq(o, "bind")) {
            spec.bind = true;
        } else if (hy_str_eq(o, "ipv6only=on") || hy_str_eq(o, "ipv6only=off")) {
            if (spec.addr.ss_family == AF_INET6) /* nginx ignores it on other addresses */
                spec.ipv6only = hy_str_eq(o, "ipv6only=on");
        } else if (o.len > 13 && memcmp(o.ptr, "so_keepalive=", 13) == 0) {
            const char *v = o.ptr + 13;
            if (strcmp(v, "on") == 0) {
                spec.keepalive = 1;
            } else if (strcmp(v, "off") == 0) {
                spec.keepalive = 0;
            } else {
                int vals[3] = {0, 0, 0}, k = 0;
                const char *p = v;
                while (k < 3) {
                    const char *e = strchr(p, ':');
                    size_t len = e ? (size_t)(e - p) : strlen(p);
                    if (len) {
                        int64_t t = hy_parse_sec(p, len);
                        if (t < 0 || t > 86400 * 365)
                            return hy_conf_error(cf, "invalid so_keepalive value: \"%s\"", v);
                        vals[k] = (int)t;
                    }
                    k++;
                    if (!e)
                        break;
                    p = e + 1;
                }
                spec.keepalive = 1;
                spec.keepidle = vals[0], spec.keepintvl = vals[1], spec.keepcnt = vals[2];
            }
        } else if ((o.len > 9 && memcmp(o.ptr, "fastopen=", 9) == 0) || (o.len > 7 && memcmp(o.ptr, "setfib=", 7) == 0) ||
                   (o.len > 14 && memcmp(o.ptr, "accept_filter=", 14) == 0)) {
            hy_conf_warn(cf, "the \"%.*s\" parameter of the \"listen\" directive is ignored by hayate",
                         (int)(memchr(o.ptr, '=', o.len) ? (char *)memchr(o.ptr, '=', o.len) - o.ptr : (long)o.len),
                         o.ptr);
        } else {
            return hy_conf_error(cf, "invalid parameter \"%s\"", o.ptr);
        }
    }
    int first = spec.port_last ? ntohs(((struct sockaddr_in *)&spec.addr)->sin_port) : 0; /* same offset in v6 */
    for (int port = first; port <= (spec.port_last ? spec.port_last : first); port++) { /* a range: one per port */
        hy_listen_spec_t one = spec;
        if (spec.port_last)
            hy_listen_set_port(&one, port);
        hy_listen_spec_t *have = s->listens->elts;
        for (size_t i = 0; i < s->listens->nelts; i++)
            if (hy_listen_same_addr(&have[i], &one))
                return hy_conf_error(cf, "a duplicate listen %s", one.text);
        *(hy_listen_spec_t *)hy_array_push(s->listens) = one;
    }
    return 0;
}

static int set_server_name(hy_conf_t *cf, const hy_directive_t *d, void *conf)
{
    hy_http_srv_conf_t *s = conf;
    size_t n;
    hy_str_t *a = hy_conf_args(cf, &n);
    for (size_t i = 1; i < n; i++) {
        hy_str_t v = a[i];
        if (v.len == 0) { /* server_name "": this server takes requests without Host (hy_http_find_server) */
            hy_server_name_t *sn = hy_array_push(s->server_names);
            sn->name = (hy_str_t){"", 0};
            sn->kind = 0;
            sn->regex = NULL;
            continue;
        }
        if (v.ptr[0] == '~') {
            if (v.len < 2)
                return hy_conf_error(cf, "empty regex in server name \"%s\"", v.ptr);
            hy_server_name_t *sn = hy_array_push(s->server_names);
            sn->name = hy_str_dup(cf->pool, v);
            sn->kind = 3;
            sn->regex = hy_conf_regex(cf, (hy_str_t){v.ptr + 1, v.len - 1}, true);
            if (sn->regex == NULL)
                return -1;
            continue;
        }
        hy_str_t name = hy_str_dup(cf->pool, v);
        hy_str_lower(name.ptr, name.len);
        char *star = memchr(name.ptr, '*', name.len);
        if (star) {
            bool head = name.len > 2 && name.ptr[0] == '*' && name.ptr[1] == '.' && !memchr(name.ptr + 1, '*', name.len - 1);
            bool tail = name.len > 2 && name.ptr[name.len - 1] == '*' && name.ptr[name.len - 2] == '.' &&
                        star == name.ptr + name.len - 1;
            if (!head && !tail)
                return hy_conf_error(cf, "invalid server name or wildcard \"%s\" on %s", v.ptr,
                                     s->listens->nelts ? ((hy_listen_spec_t *)s->listens->elts)[0].text : "0.0.0.0:80");
            hy_server_name_t *sn = hy_array_push(s->server_names);
            sn->name = head ? (hy_str_t){name.ptr + 1, name.len - 1} : (hy_str_t){name.ptr, name.len - 1};
            sn->kind = head ? 1 : 2;
            continue;
        }
        if (name.len > 1 && name.ptr[0] == '.') { /* ".example.com" = "example.com" + "*.example.com" */
            hy_server_name_t *sn = hy_array_push(s->server_names);
            sn->name = (hy_str_t){name.ptr + 1, name.len - 1};
            sn->kind = 0;
            sn = hy_array_push(s->server_names);
            sn->name = name;
            sn->kind = 1;
            continue;
        }
        hy_server_name_t *sn = hy_array_push(s->server_names);
        sn->name = name;
        sn->kind = 0;
    }
    return 0;
}

static int set_root(hy_conf_t *cf, const hy_directive_t *d, void *conf)
{
    hy_http_loc_conf_t *lc = conf;
    size_t n;
    hy_str_t *a = hy_conf_args(cf, &n);
    bool alias = strcmp(d->name, "alias") == 0;
    if (lc->root.ptr || lc->alias.ptr) {
        if ((lc->root_is_alias == 1) == alias)
            return hy_conf_error(cf, "\"%s\" directive is duplicate", d->name);
        return hy_conf_error(cf, "\"%s\" directive is duplicate, \"%s\" directive was specified earlier", d->name,
                             lc->root_is_alias == 1 ? "alias" : "root");
    }
    if (alias && lc->match == HY_LOC_NAMED)
        return hy_conf_error(cf, "the \"alias\" directive cannot be used inside the named location");
    hy_str_t v = a[1];
    if (!alias && v.len > 1 && v.ptr[v.len - 1] == '/')
        v.len--; /* nginx drops a trailing slash from root */
    char *p = v.len && v.ptr[0] == '$' ? hy_pstrndup(cf->pool, v.ptr, v.len) : hy_cycle_path(cf->cycle, v.ptr, v.len);
    hy_str_t path = {p, strlen(p)};
    if (memchr(path.ptr, '$', path.len)) { /* variables or regex captures: evaluated per request */
        hy_complex_t *cv = hy_palloc(cf->pool, sizeof(*cv));
        if (hy_vars_compile(cf, path, cv) != 0)
            return -1;
        lc->root_cv = cv;
    }
    if (alias) {
        lc->alias = path;
        lc->alias_prefix = lc->name;
        lc->alias_regex = lc->match == HY_LOC_REGEX || lc->match == HY_LOC_REGEX_CASELESS ||
                          (lc->match == HY_LOC_NONAME && lc->parent && lc->parent->regex);
        lc->root_is_alias = 1;
    } else {
        lc->root = path;
        lc->root_is_alias = 0;
    }
    return 0;
}

static int set_keepalive_timeout(hy_conf_t *cf, const hy_directive_t *d, void *conf)
{
    hy_http_loc_conf_t *lc = conf;
    size_t n;
    hy_str_t *a = hy_conf_args(cf, &n);
    if (lc->keepalive_timeout_ms != HY_UNSET)
        return hy_conf_error(cf, "\"keepalive_timeout\" directive is duplicate");
    lc->keepalive_timeout_ms = hy_parse_msec(a[1].ptr, a[1].len);
    if (lc->keepalive_timeout_ms < 0)
        return hy_conf_error(cf, "\"keepalive_timeout\" directive invalid value");
    if (n == 3) {
        lc->keepalive_header_sec = hy_parse_sec(a[2].ptr, a[2].len);
        if (lc->keepalive_header_sec < 0)
            return hy_conf_error(cf, "\"keepalive_timeout\" directive invalid value");
    }
    return 0;
}

static int set_large_buffers(hy_conf_t *cf, const hy_directive_t *d, void *conf)
{
    hy_http_srv_conf_t *s = conf;
    size_t n;
    hy_str_t *a = hy_conf_args(cf, &n);
    if (s->large_header_num != HY_UNSET)
        return hy_conf_error(cf, "\"large_client_header_buffers\" directive is duplicate");
    int64_t num = hy_parse_int(a[1].ptr, a[1].len), size = hy_parse_size(a[2].ptr, a[2].len);
    if (num <= 0 || num > 1024)
        return hy_conf_error(cf, "\"large_client_header_buffers\" directive invalid value"); /* nginx's words */
    if (size <= 0 || size > 64 * 1024 * 1024)
        return hy_conf_error(cf, "\"large_client_header_buffers\" directive invalid value");
    s->large_header_num = num;
    s->large_header_size = size;
    return 0;
}

static int set_open_file_cache(hy_conf_t *cf, const hy_directive_t *d, void *conf)
{
    hy_http_loc_conf_t *lc = conf;
    size_t n;
    hy_str_t *a = hy_conf_args(cf, &n);
    if (lc->open_file_cache_max != HY_UNSET)
        return hy_conf_error(cf, "\"open_file_cache\" directive is duplicate");
    int64_t max = -1, inactive = 60000;
    for (size_t i = 1; i < n; i++) {
        if (hy_str_eq(a[i], "off")) {
            max = 0;
        } else if (a[i].len > 4 && memcmp(a[i].ptr, "max=", 4) == 0) {
            max = hy_parse_int(a[i].ptr + 4, a[i].len - 4);
            if (max <= 0)
                return hy_conf_error(cf, "invalid \"open_file_cache\" parameter \"%s\"", a[i].ptr);
        } else if (a[i].len > 9 && memcmp(a[i].ptr, "inactive=", 9) == 0) {
            inactive = hy_parse_msec(a[i].ptr + 9, a[i].len - 9);
            if (inactive < 0)
                return hy_conf_error(cf, "invalid \"open_file_cache\" parameter \"%s\"", a[i].ptr);
        } else {
            return hy_conf_error(cf, "invalid \"open_file_cache\" parameter \"%s\"", a[i].ptr);
        }
    }
    if (max < 0)
        return hy_conf_error(cf, "\"open_file_cache\" must have the \"max\" parameter");
    lc->open_file_cache_max = max;
    lc->open_file_cache_inactive_ms = inactive;
    return 0;
}

static int set_disable_symlinks(hy_conf_t *cf, const hy_directive_t *d, void *conf)
{
    hy_http_loc_conf_t *lc = conf;
    size_t n;
    hy_str_t *a = hy_conf_args(cf, &n);
    if (lc->disable_symlinks != HY_UNSET)
        return hy_conf_error(cf, "\"disable_symlinks\" directive is duplicate");
    for (size_t i = 1; i < n; i++) {
        if (hy_str_eq(a[i], "off")) {
            lc->disable_symlinks = HY_SYMLINKS_OFF;
        } else if (hy_str_eq(a[i], "if_not_owner")) {
            lc->disable_symlinks = HY_SYMLINKS_NOTOWNER;
        } else if (hy_str_eq(a[i], "on")) {
            lc->disable_symlinks = HY_SYMLINKS_ON;
        } else if (a[i].len >= 5 && memcmp(a[i].ptr, "from=", 5) == 0 && lc->disable_symlinks_from == NULL) {
            hy_str_t v = {a[i].ptr + 5, a[i].len - 5};
            if (v.len == 0)
                return hy_conf_error(cf, "invalid value \"%s\"", a[i].ptr);
            if (hy_str_eq(v, "off"))
                continue;
            lc->disable_symlinks_from = hy_pcalloc(cf->pool, sizeof(hy_complex_t));
            if (hy_vars_compile(cf, v, lc->disable_symlinks_from) != 0)
                return -1;
        } else {
            return hy_conf_error(cf, "invalid parameter \"%s\"", a[i].ptr);
        }
    }
    if (lc->disable_symlinks == HY_UNSET)
        return hy_conf_error(cf, "\"off\", \"on\" or \"if_not_owner\" parameter expected");
    if (lc->disable_symlinks == HY_SYMLINKS_OFF && lc->disable_symlinks_from)
        return hy_conf_error(cf, "\"from=\" cannot be used with \"off\" parameter");
    return 0;
}

static int set_internal(hy_conf_t *cf, const hy_directive_t *d, void *conf)
{
    ((hy_http_loc_conf_t *)conf)->internal = 1;
    return 0;
}

/* ---------------- post-configuration: servers grouped by listening address ---------------- */

static bool addr_is_wildcard(const hy_listen_spec_t *l)
{
    if (l->addr.ss_family == AF_INET)
        return ((const struct sockaddr_in *)&l->addr)->sin_addr.s_addr == htonl(INADDR_ANY);
    if (l->addr.ss_family == AF_INET6)
        return IN6_IS_ADDR_UNSPECIFIED(&((const struct sockaddr_in6 *)&l->addr)->sin6_addr);
    return false;
}

static uint16_t addr_port(const struct sockaddr_storage *a)
{
    return a->ss_family == AF_INET6 ? ((const struct sockaddr_in6 *)a)->sin6_port
                                    : ((const struct sockaddr_in *)a)->sin_port;
}

static int build_addrs(hy_conf_t *cf, hy_http_main_conf_t *m)
{
    m->addrs = hy_array_create(cf->pool, 4, sizeof(hy_http_addr_t));
    hy_http_srv_conf_t **srvs = m->servers->elts;
    for (size_t s = 0; s < m->servers->nelts; s++) {
        hy_listen_spec_t *ls = srvs[s]->listens->elts;
        for (size_t i = 0; i < srvs[s]->listens->nelts; i++) {
            hy_http_addr_t *addr = NULL, *all = m->addrs->elts;
            for (size_t k = 0; k < m->addrs->nelts; k++)
                if (hy_listen_same_addr(&all[k].spec, &ls[i]))
                    addr = &all[k];
            if (addr == NULL) {
                addr = hy_array_push(m->addrs);
                addr->spec = ls[i];
                addr->servers = hy_array_create(cf->pool, 2, sizeof(hy_http_srv_conf_t *));
                addr->default_server = srvs[s];
                addr->cycle = cf->cycle;
            } else {
                bool has_opts = ls[i].backlog != -1 || ls[i].rcvbuf != -1 || ls[i].sndbuf != -1 ||
                                ls[i].reuseport || ls[i].deferred || ls[i].ipv6only != -1 || ls[i].keepalive != -1;
                if (ls[i].default_server && addr->spec.default_server) {
                    cf->file = srvs[s]->file, cf->line = srvs[s]->line;
                    return hy_conf_error(cf, "a duplicate default server for %s", ls[i].text);
                }
                if (has_opts && (addr->spec.backlog != -1 || addr->spec.rcvbuf != -1 || addr->spec.reuseport ||
                                 addr->spec.deferred || addr->spec.keepalive != -1)) {
                    cf->file = srvs[s]->file, cf->line = srvs[s]->line;
                    return hy_conf_error(cf, "duplicate listen options for %s", ls[i].text);
                }
                if (has_opts) {
                    bool d = addr->spec.default_server, was_ssl = addr->spec.ssl, was_pp = addr->spec.proxy_protocol,
                         was_h2 = addr->spec.http2;
                    addr->spec = ls[i];
                    addr->spec.default_server = d;
                    addr->spec.ssl |= was_ssl;
                    addr->spec.proxy_protocol |= was_pp;
                    addr->spec.http2 |= was_h2;
                }
                if (ls[i].default_server) {
                    addr->default_server = srvs[s];
                    addr->spec.default_server = true;
                }
            }
            addr->spec.ssl |= ls[i].ssl; /* nginx: "ssl" on any listen of an address makes it TLS */
            addr->spec.proxy_protocol |= ls[i].proxy_protocol; /* the same for proxy_protocol */
            addr->spec.http2 |= ls[i].http2;                   /* and for http2 */
            *(hy_http_srv_conf_t **)hy_array_push(addr->servers) = srvs[s];
        }
    }
    /* two servers claiming the same exact name on one address: nginx keeps the first and warns */
    hy_http_addr_t *all = m->addrs->elts;
    for (size_t k = 0; k < m->addrs->nelts; k++) {
        hy_http_srv_conf_t **as = all[k].servers->elts;
        for (size_t i = 0; i < all[k].servers->nelts; i++)
            for (size_t j = 0; j < i; j++) {
                hy_server_name_t *ni = as[i]->server_names->elts, *nj = as[j]->server_names->elts;
                for (size_t x = 0; x < as[i]->server_names->nelts; x++)
                    for (size_t y = 0; y < as[j]->server_names->nelts; y++)
                        if (ni[x].kind == nj[y].kind && ni[x].kind != 3 && hy_str_eq_str(ni[x].name, nj[y].name))
                            hy_conf_warn(cf, "conflicting server name \"%s\" on %s, ignored", ni[x].name.ptr,
                                         all[k].spec.text);
            }
    }
    /* nginx binds only the wildcard address of a port and picks a specific address's servers by the local
     * address of each connection (unless that listen says "bind") */
    for (size_t k = 0; k < m->addrs->nelts; k++) {
        hy_http_addr_t *a = &all[k];
        if (a->spec.is_unix || a->spec.bind || addr_is_wildcard(&a->spec))
            continue;
        for (size_t w = 0; w < m->addrs->nelts; w++) {
            hy_http_addr_t *wa = &all[w];
            if (wa->spec.is_unix || !addr_is_wildcard(&wa->spec) || wa->spec.addr.ss_family != a->spec.addr.ss_family ||
                addr_port(&wa->spec.addr) != addr_port(&a->spec.addr))
                continue;
            a->via = wa;
            if (wa->covers == NULL)
                wa->covers = hy_array_create(cf->pool, 2, sizeof(hy_http_addr_t *));
            *(hy_http_addr_t **)hy_array_push(wa->covers) = a;
            break;
        }
    }
    return 0;
}

hy_http_addr_t *hy_http_addr_for_local(hy_http_addr_t *wildcard, const struct sockaddr_storage *local)
{
    if (local == NULL)
        return wildcard;
    const struct sockaddr_storage ss = *local;
    hy_http_addr_t **c = wildcard->covers->elts;
    for (size_t i = 0; i < wildcard->covers->nelts; i++) {
        const struct sockaddr_storage *a = &c[i]->spec.addr;
        if (a->ss_family != ss.ss_family)
            continue;
        if (ss.ss_family == AF_INET && ((const struct sockaddr_in *)a)->sin_addr.s_addr ==
                                           ((struct sockaddr_in *)&ss)->sin_addr.s_addr)
            return c[i];
        if (ss.ss_family == AF_INET6 && memcmp(&((const struct sockaddr_in6 *)a)->sin6_addr,
                                               &((struct sockaddr_in6 *)&ss)->sin6_addr, sizeof(struct in6_addr)) == 0)
            return c[i];
    }
    return wildcard;
}

/* ---------------- the table ---------------- */

#define LOC(field) .conf = HY_CONF_LOC, .offset = offsetof(hy_http_loc_conf_t, field)
#define SRV(field) .conf = HY_CONF_SRV, .offset = offsetof(hy_http_srv_conf_t, field)
#define MAIN(field) .conf = HY_CONF_HTTP_MAIN, .offset = offsetof(hy_http_main_conf_t, field)

static const hy_enum_t in_file_only_enum[] = {{"off", 0}, {"on", 1}, {"clean", 2}, {NULL, 0}};
static const hy_enum_t lingering_enum[] = {{"off", HY_LINGER_OFF}, {"on", HY_LINGER_ON}, {"always", HY_LINGER_ALWAYS},
                                           {NULL, 0}};
static const hy_enum_t tokens_enum[] = {{"off", HY_TOKENS_OFF}, {"on", HY_TOKENS_ON}, {"build", HY_TOKENS_BUILD},
                                        {NULL, 0}};
static const hy_enum_t ims_enum[] = {{"off", HY_IMS_OFF}, {"exact", HY_IMS_EXACT}, {"before", HY_IMS_BEFORE},
                                     {NULL, 0}};
static const hy_enum_t satisfy_enum[] = {{"all", HY_SATISFY_ALL}, {"any", HY_SATISFY_ANY}, {NULL, 0}};
static const hy_enum_t keepalive_disable_names[] = {
    {"none", 0}, {"msie6", HY_KEEPALIVE_DISABLE_MSIE6}, {"safari", HY_KEEPALIVE_DISABLE_SAFARI}, {NULL, 0}};
static const hy_bounds_t positive = {1, INT64_MAX};
static const hy_bounds_t non_negative = {0, INT64_MAX};

static const hy_directive_t core_directives[] = {
    {.name = "http", .ctx = HY_CTX_MAIN, .args = HY_ARGS_0 | HY_ARGS_BLOCK, .set = set_http},
    {.name = "server", .ctx = HY_CTX_HTTP, .args = HY_ARGS_0 | HY_ARGS_BLOCK, .set = set_server},
    {.name = "location", .ctx = HY_CTX_SERVER | HY_CTX_LOC, .args = HY_ARGS_12 | HY_ARGS_BLOCK, .set = set_location},
    {.name = "types", .ctx = HY_CTX_HTTP_ANY, .args = HY_ARGS_0 | HY_ARGS_BLOCK, .set = set_types, LOC(types)},
    {.name = "listen", .ctx = HY_CTX_SERVER, .args = HY_ARGS_1MORE, .set = set_listen, SRV(listens)},
    {.name = "server_name", .ctx = HY_CTX_SERVER, .args = HY_ARGS_1MORE, .set = set_server_name, SRV(server_names)},
    {.name = "root", .ctx = HY_CTX_HTTP_ANY, .args = HY_ARGS_1, .set = set_root, LOC(root)},
    {.name = "alias", .ctx = HY_CTX_LOC, .args = HY_ARGS_1, .set = set_root, LOC(alias)},
    {.name = "internal", .ctx = HY_CTX_LOC, .args = HY_ARGS_0, .set = set_internal, LOC(internal)},
    {.name = "limit_except", .ctx = HY_CTX_LOC, .args = HY_ARGS_1MORE | HY_ARGS_BLOCK, .set = set_limit_except,
     LOC(limit_except)},
    {.name = "auth_delay", .ctx = HY_CTX_HTTP_ANY, .args = HY_ARGS_1, .set = hy_slot_msec, LOC(auth_delay_ms)},
    {.name = "satisfy", .ctx = HY_CTX_HTTP_ANY, .args = HY_ARGS_1, .set = hy_slot_enum, LOC(satisfy),
     .post = satisfy_enum},
    {.name = "default_type", .ctx = HY_CTX_HTTP_ANY, .args = HY_ARGS_1, .set = hy_slot_str, LOC(default_type)},
    {.name = "post_action", .ctx = HY_CTX_HTTP_ANY | HY_CTX_LIF, .args = HY_ARGS_1, .set = hy_slot_str, LOC(post_action)},
    {.name = "sendfile", .ctx = HY_CTX_HTTP_ANY, .args = HY_ARGS_FLAG, .set = hy_slot_flag, LOC(sendfile)},
    {.name = "sendfile_max_chunk", .ctx = HY_CTX_HTTP_ANY, .args = HY_ARGS_1, .set = hy_slot_size,
     LOC(sendfile_max_chunk)},
    {.name = "tcp_nopush", .ctx = HY_CTX_HTTP_ANY, .args = HY_ARGS_FLAG, .set = hy_slot_flag, LOC(tcp_nopush)},
    {.name = "tcp_nodelay", .ctx = HY_CTX_HTTP_ANY, .args = HY_ARGS_FLAG, .set = hy_slot_flag, LOC(tcp_nodelay)},
    {.name = "keepalive_timeout", .ctx = HY_CTX_HTTP_ANY, .args = HY_ARGS_12, .set = set_keepalive_timeout,
     LOC(keepalive_timeout_ms)},
    {.name = "keepalive_requests", .ctx = HY_CTX_HTTP_ANY, .args = HY_ARGS_1, .set = hy_slot_num,
     LOC(keepalive_requests), .post = &non_negative},
    {.name = "keepalive_time", .ctx = HY_CTX_HTTP_ANY, .args = HY_ARGS_1, .set = hy_slot_msec,
     LOC(keepalive_time_ms)},
    {.name = "keepalive_disable", .ctx = HY_CTX_HTTP_ANY, .args = HY_ARGS_12, .set = hy_slot_bitmask,
     LOC(keepalive_disable), .post = keepalive_disable_names},
    {.name = "client_header_timeout", .ctx = HY_CTX_HTTP | HY_CTX_SERVER, .args = HY_ARGS_1, .set = hy_slot_msec,
     SRV(client_header_timeout_ms)},
    {.name = "client_header_buffer_size", .ctx = HY_CTX_HTTP | HY_CTX_SERVER, .args = HY_ARGS_1,
     .set = hy_slot_size, SRV(client_header_buffer_size), .post = &positive},
    {.name = "max_headers", .ctx = HY_CTX_HTTP | HY_CTX_SERVER, .args = HY_ARGS_1, .set = hy_slot_num,
     SRV(max_headers)},
    {.name = "large_client_header_buffers", .ctx = HY_CTX_HTTP | HY_CTX_SERVER, .args = HY_ARGS_2,
     .set = set_large_buffers, SRV(large_header_num)},
    {.name = "merge_slashes", .ctx = HY_CTX_HTTP | HY_CTX_SERVER, .args = HY_ARGS_FLAG, .set = hy_slot_flag,
     SRV(merge_slashes)},
    {.name = "ignore_invalid_headers", .ctx = HY_CTX_HTTP | HY_CTX_SERVER, .args = HY_ARGS_FLAG,
     .set = hy_slot_flag, SRV(ignore_invalid_headers)},
    {.name = "underscores_in_headers", .ctx = HY_CTX_HTTP | HY_CTX_SERVER, .args = HY_ARGS_FLAG,
     .set = hy_slot_flag, SRV(underscores_in_headers)},
    {.name = "client_body_timeout", .ctx = HY_CTX_HTTP_ANY, .args = HY_ARGS_1, .set = hy_slot_msec,
     LOC(client_body_timeout_ms)},
    {.name = "client_max_body_size", .ctx = HY_CTX_HTTP_ANY, .args = HY_ARGS_1, .set = hy_slot_size,
     LOC(client_max_body_size)},
    {.name = "client_body_buffer_size", .ctx = HY_CTX_HTTP_ANY, .args = HY_ARGS_1, .set = hy_slot_size,
     LOC(client_body_buffer_size)},
    {.name = "client_body_temp_path", .ctx = HY_CTX_HTTP_ANY, .args = HY_ARGS_1MORE,
     .set = set_client_body_temp_path, .conf = HY_CONF_LOC},
    {.name = "client_body_in_file_only", .ctx = HY_CTX_HTTP_ANY, .args = HY_ARGS_1, .set = hy_slot_enum,
     LOC(client_body_in_file_only), .post = in_file_only_enum},
    {.name = "client_body_in_single_buffer", .ctx = HY_CTX_HTTP_ANY, .args = HY_ARGS_FLAG, .set = hy_slot_flag,
     LOC(client_body_in_single_buffer)},
    {.name = "send_timeout", .ctx = HY_CTX_HTTP_ANY, .args = HY_ARGS_1, .set = hy_slot_msec, LOC(send_timeout_ms)},
    {.name = "reset_timedout_connection", .ctx = HY_CTX_HTTP_ANY, .args = HY_ARGS_FLAG, .set = hy_slot_flag,
     LOC(reset_timedout_connection)},
    {.name = "lingering_close", .ctx = HY_CTX_HTTP_ANY, .args = HY_ARGS_1, .set = hy_slot_enum,
     LOC(lingering_close), .post = lingering_enum},
    {.name = "lingering_time", .ctx = HY_CTX_HTTP_ANY, .args = HY_ARGS_1, .set = hy_slot_msec,
     LOC(lingering_time_ms)},
    {.name = "lingering_timeout", .ctx = HY_CTX_HTTP_ANY, .args = HY_ARGS_1, .set = hy_slot_msec,
     LOC(lingering_timeout_ms)},
    {.name = "server_tokens", .ctx = HY_CTX_HTTP_ANY, .args = HY_ARGS_1, .set = hy_slot_enum, LOC(server_tokens),
     .post = tokens_enum},
    {.name = "open_file_cache", .ctx = HY_CTX_HTTP_ANY, .args = HY_ARGS_12, .set = set_open_file_cache,
     LOC(open_file_cache_max)},
    {.name = "open_file_cache_valid", .ctx = HY_CTX_HTTP_ANY, .args = HY_ARGS_1, .set = hy_slot_msec,
     LOC(open_file_cache_valid_ms)},
    {.name = "open_file_cache_min_uses", .ctx = HY_CTX_HTTP_ANY, .args = HY_ARGS_1, .set = hy_slot_num,
     LOC(open_file_cache_min_uses), .post = &positive},
    {.name = "open_file_cache_errors", .ctx = HY_CTX_HTTP_ANY, .args = HY_ARGS_FLAG, .set = hy_slot_flag,
     LOC(open_file_cache_errors)},
    {.name = "disable_symlinks", .ctx = HY_CTX_HTTP_ANY, .args = HY_ARGS_12, .set = set_disable_symlinks,
     LOC(disable_symlinks)},
    {.name = "open_file_cache_events", .ctx = HY_CTX_HTTP_ANY, .args = HY_ARGS_FLAG, .set = hy_slot_check_flag},
    {.name = "etag", .ctx = HY_CTX_HTTP_ANY, .args = HY_ARGS_FLAG, .set = hy_slot_flag, LOC(etag)},
    {.name = "if_modified_since", .ctx = HY_CTX_HTTP_ANY, .args = HY_ARGS_1, .set = hy_slot_enum,
     LOC(if_modified_since), .post = ims_enum},
    {.name = "max_ranges", .ctx = HY_CTX_HTTP_ANY, .args = HY_ARGS_1, .set = hy_slot_num, LOC(max_ranges),
     .post = &non_negative},
    {.name = "chunked_transfer_encoding", .ctx = HY_CTX_HTTP_ANY, .args = HY_ARGS_FLAG, .set = hy_slot_flag,
     LOC(chunked_transfer_encoding)},
    {.name = "msie_padding", .ctx = HY_CTX_HTTP_ANY, .args = HY_ARGS_FLAG, .set = hy_slot_flag, LOC(msie_padding)},
    {.name = "msie_refresh", .ctx = HY_CTX_HTTP_ANY, .args = HY_ARGS_FLAG, .set = hy_slot_flag, LOC(msie_refresh)},
    {.name = "log_not_found", .ctx = HY_CTX_HTTP_ANY, .args = HY_ARGS_FLAG, .set = hy_slot_flag, LOC(log_not_found)},
    {.name = "absolute_redirect", .ctx = HY_CTX_HTTP_ANY, .args = HY_ARGS_FLAG, .set = hy_slot_flag,
     LOC(absolute_redirect)},
    {.name = "server_name_in_redirect", .ctx = HY_CTX_HTTP_ANY, .args = HY_ARGS_FLAG, .set = hy_slot_flag,
     LOC(server_name_in_redirect)},
    {.name = "port_in_redirect", .ctx = HY_CTX_HTTP_ANY, .args = HY_ARGS_FLAG, .set = hy_slot_flag,
     LOC(port_in_redirect)},
    {.name = "types_hash_max_size", .ctx = HY_CTX_HTTP_ANY, .args = HY_ARGS_1, .set = hy_slot_check_num},
    {.name = "types_hash_bucket_size", .ctx = HY_CTX_HTTP_ANY, .args = HY_ARGS_1, .set = hy_slot_check_num},
    {.name = "server_names_hash_max_size", .ctx = HY_CTX_HTTP, .args = HY_ARGS_1, .set = hy_slot_check_num},
    {.name = "server_names_hash_bucket_size", .ctx = HY_CTX_HTTP, .args = HY_ARGS_1, .set = hy_slot_check_num},
    {.name = "variables_hash_max_size", .ctx = HY_CTX_HTTP, .args = HY_ARGS_1, .set = hy_slot_check_num},
    {.name = "variables_hash_bucket_size", .ctx = HY_CTX_HTTP, .args = HY_ARGS_1, .set = hy_slot_check_num},
    {0},
};

hy_module_t hy_http_core_module = {
    .name = "http_core",
    .directives = core_directives,
    .create_main_conf = create_main,
    .create_srv_conf = create_srv,
    .create_loc_conf = create_loc,
    .merge_srv_conf = merge_srv,
    .merge_loc_conf = merge_loc,
};
