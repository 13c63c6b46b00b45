/* proxy.c — nginx's proxy module on the upstream engine (upstream/upstream.h) and its HTTP/1.x codec:
 * proxy_pass (URI rules: with or without a URI part, regex and named locations, after "rewrite ... break",
 * variables), the request head (proxy_set_header over nginx's defaults, proxy_pass_request_headers/_body,
 * proxy_set_body), the response head (proxy_hide_header/proxy_pass_header, proxy_ignore_headers, X-Accel-*),
 * timeouts, buffering and next_upstream settings, and $proxy_host, $proxy_port, $proxy_add_x_forwarded_for. */
#include <string.h>
#include "proxy.h"
#include "proxy_conf.h"
#include "rewrite.h"
#include "../http/uri.h"
#include "../http/vars.h"
#include "../core/httpdate.h"
#include "../core/log.h"
#include "../http/phases.h"
#include "../upstream/h1client.h"
#include "../upstream/h2client.h"

typedef struct proxy_ctx {
    hy_str_t host, port;
} proxy_ctx_t;

static proxy_ctx_t *pctx(hy_req_t *req)
{
    return req->ctx ? *hy_req_ctx(req, &hy_http_proxy_module) : NULL;
}

/* ---------------------------------------------------------------- request URI */

/* the path part of a request to the upstream, escaped as nginx escapes it (NGX_ESCAPE_URI) */
static hy_str_t escape_uri(hy_pool_t *pool, hy_str_t s)
{
    size_t n = hy_uri_escape(NULL, s.ptr, s.len);
    if (n == s.len)
        return s;
    char *p = hy_palloc(pool, n);
    hy_uri_escape(p, s.ptr, s.len);
    return (hy_str_t){p, n};
}

static hy_str_t concat3(hy_pool_t *pool, hy_str_t a, hy_str_t b, hy_str_t c)
{
    char *p = hy_palloc(pool, a.len + b.len + c.len + 1);
    if (a.len)
        memcpy(p, a.ptr, a.len);
    if (b.len)
        memcpy(p + a.len, b.ptr, b.len);
    if (c.len)
        memcpy(p + a.len + b.len, c.ptr, c.len);
    return (hy_str_t){p, a.len + b.len + c.len};
}

/* The URI to send: nginx's ngx_http_proxy_create_request rules. */
static hy_str_t request_uri(hy_req_t *req, const proxy_loc_t *pl, hy_str_t uri_part, bool has_uri_part)
{
    bool changed = req->is_internal || hy_rewrite_uri_changed_in_location(req);
    hy_str_t args = req->args;
    if (has_uri_part && pl->url_cv == NULL && !hy_rewrite_uri_changed_in_location(req) &&
        req->uri.len >= pl->loc_prefix.len) {
        /* the location's prefix replaced by the URI part */
        hy_str_t rest =
            escape_uri(req->pool, (hy_str_t){req->uri.ptr + pl->loc_prefix.len, req->uri.len - pl->loc_prefix.len});
        return concat3(req->pool, uri_part, rest,
                       args.len ? concat3(req->pool, HY_STR("?"), args, HY_STR_NULL) : HY_STR_NULL);
    }
    if (has_uri_part && pl->url_cv != NULL)
        return uri_part; /* proxy_pass with variables and a URI part: sent as evaluated */
    if (!changed && req->target.len && req->target.ptr[0] == '/')
        return req->target; /* the URI as the client sent it */
    hy_str_t e = escape_uri(req->pool, req->uri);
    return args.len ? concat3(req->pool, e, HY_STR("?"), args) : e;
}

/* ---------------------------------------------------------------- request head */

static bool name_in(const hy_array_t *a, hy_str_t name)
{
    if (a == NULL)
        return false;
    const proxy_hdr_t *h = a->elts;
    for (size_t i = 0; i < a->nelts; i++)
        if (hy_str_caseeq_str(h[i].name, name))
            return true;
    return false;
}

static void build_headers(hy_req_t *req, const proxy_loc_t *pl, hy_ureq_t *u)
{
    const hy_array_t *set = pl->headers; /* merged: the level's own, then nginx's defaults not overridden */
    size_t cap = set->nelts + (pl->uc.pass_request_headers ? req->num_headers : 0);
    hy_header_t *out = hy_palloc(req->pool, (cap + 1) * sizeof(*out));
    size_t n = 0;
    const proxy_hdr_t *h = set->elts;
    for (size_t i = 0; i < set->nelts; i++) {
        hy_str_t v;
        hy_vars_eval(req, &h[i].value, &v);
        if (v.len == 0)
            continue; /* an empty value: the field is not sent */
        out[n++] = (hy_header_t){h[i].name, v};
    }
    if (pl->uc.pass_request_headers)
        for (size_t i = 0; i < req->num_headers; i++) {
            hy_str_t nm = req->headers[i].name;
            bool cache_range = pl->headers_cache && (hy_str_caseeq(nm, "Range") || hy_str_caseeq(nm, "If-Range")) &&
                               !name_in(pl->set_headers, nm) && hy_ucache_passes_range(u);
            if ((name_in(set, nm) && !cache_range) || hy_str_caseeq(nm, "Transfer-Encoding"))
                continue;
            /* nginx sends the client's Content-Length even with proxy_pass_request_body off (configs clear it
             * with proxy_set_header Content-Length ""); otherwise the codec frames the body itself */
            if (hy_str_caseeq(nm, "Content-Length") && pl->uc.pass_request_body)
                continue;
            out[n++] = req->headers[i];
        }
    u->headers = out;
    u->nheaders = n;
}

/* The upstream engine calls this once the client's body is read (nginx creates the request then): the fields
 * and proxy_set_body may use $request_body and $request_body_file. */
static int prepare(hy_ureq_t *u)
{
    const proxy_loc_t *pl = u->data;
    if (pl->set_body != NULL) {
        hy_vars_eval(u->req, pl->set_body, &u->set_body);
        u->body_length = (int64_t)u->set_body.len;
    }
    build_headers(u->req, pl, u);
    return 0;
}

/* ---------------------------------------------------------------- response head */

static bool hidden(const proxy_loc_t *pl, hy_str_t name)
{
    return hy_uconf_hidden(&pl->uc, name);
}

static int on_head(hy_ureq_t *u)
{
    hy_req_t *req = u->req;
    const proxy_loc_t *pl = u->data;
    hy_uconf_head_status(u);
    req->content_type = HY_STR_NULL;
    req->content_length_n = u->resp_chunked ? -1 : u->resp_length;
    req->last_modified = -1;
    hy_header_t *h = u->headers_in->elts;
    hy_str_t accel_redirect = HY_STR_NULL;
    bool seen_expires = false;
    for (size_t i = 0; i < u->headers_in->nelts; i++) {
        hy_str_t nm = h[i].name, v = h[i].value;
        hy_uconf_accel_field(u, &pl->uc, nm, v, &accel_redirect);
        if (hidden(pl, nm))
            continue;
        if (hy_str_caseeq(nm, "Content-Type")) {
            if (req->content_type.len == 0) /* the first of duplicates, as nginx */
                req->content_type = v;
        } else if (hy_str_caseeq(nm, "Expires")) {
            if (!seen_expires)
                hy_req_add_header(req, nm, v);
            seen_expires = true;
        } else if (hy_str_caseeq(nm, "Last-Modified") && req->last_modified < 0) {
            int64_t t = hy_httpdate_parse(v.ptr, v.len);
            if (t >= 0)
                req->last_modified = t;
            else
                hy_req_add_header(req, nm, v);
        } else if (hy_str_caseeq(nm, "ETag") && req->etag.len == 0) {
            req->etag = v;
        } else if (hy_str_caseeq(nm, "Location") && req->location.len == 0) {
            req->location = hy_proxy_rewrite_location(req, pl, v);
        } else if (hy_str_caseeq(nm, "Refresh")) {
            hy_req_add_header(req, nm, hy_proxy_rewrite_refresh(req, pl, v));
        } else if (hy_str_caseeq(nm, "Set-Cookie")) {
            hy_req_add_header(req, nm, hy_proxy_cookie_flags(req, pl, hy_proxy_rewrite_cookie(req, pl, v)));
        } else {
            hy_req_add_header(req, nm, v);
        }
    }
    if (accel_redirect.len) /* nginx honours it whatever the status */
        return hy_uconf_accel_redirect(u, accel_redirect);
    /* proxy_pass_trailers: a body of unknown length may end with the upstream's trailers: the client's response is
     * framed so they can follow (HTTP/1.1 chunked, HTTP/2 a last HEADERS) */
    if (pl->pass_trailers && u->resp_length < 0 && req->method_id != HY_M_HEAD && u->status != 204 && u->status != 304)
        req->expect_trailers = true;
    return 0;
}

/* ---------------------------------------------------------------- handler */

/* proxy_pass with variables: "http://host[:port][/uri]" evaluated now; the host names an upstream{}, is an
 * address literal, or is a name the location's resolver resolves (*g NULL then). */
static int runtime_target(hy_req_t *req, const proxy_loc_t *pl, hy_upstream_group_t **g, hy_str_t *uri, bool *has_uri,
                          bool *is_tls, proxy_ctx_t *ctx, hy_str_t *resolve_host, uint16_t *resolve_port)
{
    hy_str_t url;
    hy_vars_eval(req, pl->url_cv, &url);
    hy_proxy_url_t pu;
    if (hy_proxy_parse_url(url, &pu) != 0) {
        hy_req_log(req, HY_LOG_ERR, "invalid URL prefix in \"%.*s\"", (int)url.len, url.ptr);
        return 500;
    }
    *g = hy_upstream_group_find(req, pu.host, pu.port, pu.explicit_port);
    if (*g == NULL) /* NULL: a name to resolve (hy_upstream_resolve_later) */
        *g = hy_proxy_group_literal(req, &pu);
    *resolve_host = pu.host;
    *resolve_port = pu.port;
    *uri = pu.uri;
    *has_uri = pu.has_uri;
    *is_tls = pu.is_tls;
    ctx->host = pu.host_header;
    ctx->port = pu.port_text;
    return 0;
}

static int proxy_handler(hy_req_t *req)
{
    const proxy_loc_t *pl = req->loc->loc_conf[hy_http_proxy_module.index];
    proxy_ctx_t *ctx = hy_pcalloc(req->pool, sizeof(*ctx));
    *hy_req_ctx(req, &hy_http_proxy_module) = ctx;
    hy_upstream_group_t *g = pl->group;
    hy_str_t uri_part = pl->uri_part;
    bool has_uri = pl->has_uri, is_tls = pl->is_tls;
    ctx->host = pl->host_header;
    ctx->port = pl->port_text;
    hy_str_t resolve_host = HY_STR_NULL;
    uint16_t resolve_port = 0;
    if (pl->url_cv != NULL) {
        int rc = runtime_target(req, pl, &g, &uri_part, &has_uri, &is_tls, ctx, &resolve_host, &resolve_port);
        if (rc != 0)
            return rc;
    }
    hy_ureq_t *u = hy_upstream_create(req);
    if (g == NULL) {
        int rc = hy_upstream_resolve_later(u, resolve_host, resolve_port);
        if (rc != 0)
            return rc;
    }
    u->codec = pl->http_version == 20 ? &hy_upstream_h2_codec : &hy_upstream_h1_codec;
    u->group = g;
    u->data = (void *)pl;
    u->on_head = on_head;
    u->pass_trailers = pl->pass_trailers;
    if (is_tls) {
        u->ssl = &pl->ssl;
        u->ssl_host = ctx->host; /* $proxy_host: the upstream{} name or the URL.s host (ussl.c cuts a port) */
    }
    hy_uconf_apply(&pl->uc, u);
    int brc = hy_uconf_bind(&pl->uc, u);
    if (brc != 0)
        return brc;
    u->version = pl->http_version;
    u->method = req->method;
    if (pl->method != NULL)
        hy_vars_eval(req, pl->method, &u->method);
    u->uri = request_uri(req, pl, uri_part, has_uri);
    if (pl->set_body != NULL)
        u->set_body = HY_STR(""); /* evaluated by prepare(), when $request_body is known */
    u->prepare = prepare;
    return hy_upstream_start(u);
}

int hy_proxy__set_handler(hy_conf_t *cf)
{
    hy_http_loc_conf_t *lc = cf->loc_conf[hy_http_core_module.index];
    lc->handler = proxy_handler;
    lc->auto_redirect = lc->name.len && lc->name.ptr[lc->name.len - 1] == '/';
    return 0;
}

/* ---------------------------------------------------------------- variables */

static void get_proxy_host(hy_req_t *req, hy_var_value_t *v, uintptr_t data)
{
    proxy_ctx_t *c = pctx(req);
    if (c == NULL) {
        v->ptr = "", v->len = 0, v->not_found = true;
        return;
    }
    hy_str_t s = data ? c->port : c->host;
    v->ptr = s.ptr, v->len = s.len, v->not_found = false;
}

static void get_add_xff(hy_req_t *req, hy_var_value_t *v, uintptr_t data)
{
    (void)data;
    const char *addr = hy_req_peer_text(req);
    hy_str_t a = {(char *)addr, strlen(addr)}, prev = HY_STR_NULL;
    for (size_t i = 0; i < req->num_headers; i++)
        if (hy_str_caseeq(req->headers[i].name, "X-Forwarded-For")) {
            prev = prev.len ? concat3(req->pool, prev, HY_STR(", "), req->headers[i].value) : req->headers[i].value;
        }
    hy_str_t r = prev.len ? concat3(req->pool, prev, HY_STR(", "), a) : a;
    v->ptr = r.ptr, v->len = r.len, v->not_found = false;
}

int hy_proxy__define_vars(hy_conf_t *cf)
{
    if (hy_vars_define(cf, HY_STR("proxy_host"), get_proxy_host, 0, HY_VAR_NOCACHE) < 0 ||
        hy_vars_define(cf, HY_STR("proxy_port"), get_proxy_host, 1, HY_VAR_NOCACHE) < 0 ||
        hy_vars_define(cf, HY_STR("proxy_add_x_forwarded_for"), get_add_xff, 0, HY_VAR_NOCACHE) < 0)
        return -1;
    return 0;
}
