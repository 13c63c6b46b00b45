/* appconf.c — the parts fastcgi_pass, uwsgi_pass and scgi_pass share (see appconf.h). */
#include <string.h>
#include "appconf.h"
#include "proxy_conf.h"
#include "../http/vars.h"
#include "../core/log.h"

void hy_app_loc_init(hy_app_loc_t *al)
{
    memset(al, 0, sizeof(*al));
    hy_uconf_init(&al->uc);
}

int hy_app_loc_merge(hy_conf_t *cf, hy_app_loc_t *c, const hy_app_loc_t *p, const char *module,
                     const char *const *hidden, size_t nhidden)
{
    hy_http_loc_conf_t *lc = cf->loc_conf ? cf->loc_conf[hy_http_core_module.index] : NULL;
    if (lc && lc->match == HY_LOC_NONAME && c->group == NULL && c->pass_cv == NULL) {
        /* an "if" or "limit_except" block without its own *_pass passes where its location does (nginx) */
        c->group = p->group, c->pass_cv = p->pass_cv, c->is_tls = p->is_tls;
    }
    hy_uparams_merge(&c->params, &p->params);
    return hy_uconf_merge(cf, &c->uc, &p->uc, module, hidden, nhidden);
}

/* "host:port", "[v6]:port", "unix:/path", "name" (an upstream{}) as a URL the proxy's parser reads; with schemes
 * (uwsgi), an optional "uwsgi://" or "suwsgi://" (TLS: *tls set) before it */
static int parse_target(hy_pool_t *pool, hy_str_t a, hy_proxy_url_t *pu, bool schemes, bool *tls)
{
    *tls = false;
    if (schemes && a.len > 8 && hy_mem_caseeq(a.ptr, "uwsgi://", 8))
        a.ptr += 8, a.len -= 8;
    else if (schemes && a.len > 9 && hy_mem_caseeq(a.ptr, "suwsgi://", 9))
        a.ptr += 9, a.len -= 9, *tls = true;
    char *u = hy_palloc(pool, a.len + 8);
    memcpy(u, "http://", 7);
    memcpy(u + 7, a.ptr, a.len);
    u[a.len + 7] = '\0';
    if (hy_proxy_parse_url((hy_str_t){u, a.len + 7}, pu) != 0 || pu->has_uri)
        return -1;
    if (!pu->explicit_port)
        pu->port = 0;
    return 0;
}

int hy_app_set_pass(hy_conf_t *cf, hy_app_loc_t *al, hy_content_handler_fn handler)
{
    hy_http_loc_conf_t *lc = cf->loc_conf[hy_http_core_module.index];
    size_t n;
    hy_str_t *a = hy_conf_args(cf, &n);
    if (al->group != NULL || al->pass_cv != NULL || lc->handler != NULL)
        return hy_conf_error(cf, "\"%s\" directive is duplicate", a[0].ptr);
    lc->handler = handler;
    lc->auto_redirect = lc->name.len && lc->name.ptr[lc->name.len - 1] == '/';
    if (memchr(a[1].ptr, '$', a[1].len)) {
        al->pass_cv = hy_pcalloc(cf->pool, sizeof(*al->pass_cv));
        return hy_vars_compile(cf, a[1], al->pass_cv);
    }
    al->group = hy_app_target_group(cf, a[1], al->ssl != NULL, &al->is_tls);
    return al->group ? 0 : -1;
}

hy_upstream_group_t *hy_app_target_group(hy_conf_t *cf, hy_str_t target, bool schemes, bool *tls)
{
    hy_proxy_url_t pu;
    if (parse_target(cf->pool, target, &pu, schemes, tls) != 0) {
        hy_conf_error(cf, "invalid host in upstream \"%s\"", target.ptr);
        return NULL;
    }
    return hy_upstream_group_add(cf, hy_str_dup(cf->pool, pu.host), pu.port, pu.explicit_port);
}

hy_ureq_t *hy_app_exchange(hy_req_t *req, const hy_app_loc_t *al, int *status)
{
    hy_upstream_group_t *g = al->group;
    bool tls = al->is_tls;
    hy_str_t host = g ? g->name : HY_STR_NULL;
    hy_proxy_url_t pu;
    if (al->pass_cv != NULL) {
        hy_str_t v;
        hy_vars_eval(req, al->pass_cv, &v);
        if (parse_target(req->pool, v, &pu, al->ssl != NULL, &tls) != 0) {
            hy_req_log(req, HY_LOG_ERR, "invalid host in upstream \"%.*s\"", (int)v.len, v.ptr);
            *status = 500;
            return NULL;
        }
        g = hy_upstream_group_find(req, pu.host, pu.port, pu.explicit_port);
        if (g == NULL)
            g = hy_proxy_group_literal(req, &pu);
        host = pu.host;
    }
    hy_ureq_t *u = hy_upstream_create(req);
    u->group = g;
    if (tls) {
        u->ssl = al->ssl;
        u->ssl_host = host; /* the default uwsgi_ssl_name: the host of uwsgi_pass */
    }
    if (g == NULL && (*status = hy_upstream_resolve_later(u, pu.host, pu.port ? pu.port : 80)) != 0)
        return NULL; /* a name: resolved when the exchange starts */
    u->data = (void *)&al->uc;
    u->on_head = hy_uconf_on_head;
    hy_uconf_apply(&al->uc, u);
    if ((*status = hy_uconf_bind(&al->uc, u)) != 0)
        return NULL;
    u->method = req->method;
    u->uri = req->target;
    return u;
}
