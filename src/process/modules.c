/* modules.c — the explicit, ordered list of modules (no constructor magic). It lives in the top layer because
 * it names modules from every layer below. The order is the phase/filter order. */
#include <string.h>
#include "../conf/conf.h"
#include "core_conf.h"
#include "../http/core.h"
#include "../http/ssl_module.h"
#include "../handlers/random_index.h"
#include "../http/http2_module.h"
#include "../handlers/index.h"
#include "../handlers/autoindex.h"
#include "../filters/gzip_static.h"
#include "../handlers/static.h"
#include "../http/vars.h"
#include "../filters/gunzip.h"
#include "../filters/sub.h"
#include "../filters/ssi.h"
#include "../filters/addition.h"
#include "../filters/gzip.h"
#include "../http/error_page.h"
#include "../filters/headers.h"
#include "../filters/charset.h"
#include "../filters/not_modified.h"
#include "../filters/range_filter.h"
#include "../handlers/rewrite.h"
#include "../handlers/try_files.h"
#include "../handlers/empty_gif.h"
#include "../handlers/proxy.h"
#include "../handlers/fastcgi.h"
#include "../handlers/uwsgi.h"
#include "../handlers/scgi.h"
#include "../handlers/memcached.h"
#include "../upstream/upstream.h"
#include "../upstream/health.h"
#include "../upstream/cache.h"
#include "../http/split_clients.h"
#include "../http/referer.h"
#include "../filters/userid.h"
#include "../http/secure_link.h"
#include "../http/realip.h"
#include "../http/stub_status.h"
#include "../http/metrics.h"
#include "../http/limit_req.h"
#include "../http/limit_conn.h"
#include "../http/limit_rate.h"
#include "../http/access.h"
#include "../http/auth_basic.h"
#include "../http/auth_request.h"
#include "../http/mirror.h"
#include "../http/subrequest.h"
#include "../http/resolver_conf.h"
#include "../http/browser.h"

hy_module_t *hy_modules[] = {
    &hy_core_module,
    &hy_events_module,
    &hy_http_core_module,
    &hy_http_realip_module, /* first PREACCESS handler (limits key on the replaced address); before vars */
    /* content handlers, in the order the CONTENT phase tries them (each DECLINES what is not its own) */
    &hy_http_random_index_module, /* before index, as nginx */
    &hy_http_index_module,
    &hy_http_autoindex_module,
    &hy_http_gzip_static_module,
    &hy_static_module,
    &hy_http_ssl_module,     /* before vars: its postconfiguration defines the $ssl_* variables */
    &hy_http_v2_module,      /* before vars: its postconfiguration defines $http2 */
    &hy_http_rewrite_module, /* before vars: its postconfiguration defines named-capture variables */
    &hy_http_try_files_module,
    &hy_http_mirror_module,     /* PRECONTENT, after try_files (nginx runs it second) */
    &hy_http_subrequest_module, /* log_subrequest */
    &hy_http_referer_module, /* before vars: its postconfiguration defines $invalid_referer */
    &hy_http_userid_module,  /* before vars: $uid_got, $uid_set, $uid_reset (after rewrite: a `set` wins) */
    &hy_http_browser_module, /* before vars: $msie, $modern_browser, $ancient_browser (after rewrite: a `set` wins) */
    &hy_http_empty_gif_module, /* a location's own content handler (no phase handler) */
    &hy_http_resolver_module, /* resolver, resolver_timeout (upstream{} blocks without their own use the http level) */
    &hy_http_upstream_module,  /* before vars: defines $upstream_*; before proxy: resolves the groups it names */
    &hy_http_upstream_metrics_module, /* init_worker: per-peer series and the metrics families */
    &hy_http_upstream_hc_module, /* match {}; after upstream: the checks' workers attach to the groups' peers */
    &hy_http_upstream_cache_manager_module, /* init_worker: worker 0 evicts from the *_cache_path directories */
    &hy_http_proxy_module,     /* a location's own content handler; before vars: defines $proxy_* */
    &hy_http_fastcgi_module,   /* a location's own content handler; before vars: $fastcgi_script_name ... */
    &hy_http_uwsgi_module,     /* a location's own content handler */
    &hy_http_scgi_module,      /* a location's own content handler */
    &hy_http_memcached_module, /* a location's own content handler */
    &hy_http_error_page_module,
    &hy_http_access_module,     /* ACCESS phase: allow/deny first, as nginx checks the address before the user */
    &hy_http_auth_basic_module, /* ACCESS phase, after access */
    &hy_http_auth_request_module, /* ACCESS phase, last (nginx runs it after auth_basic) */
    &hy_http_secure_link_module, /* before vars: its postconfiguration defines its variables */
    &hy_http_stub_status_module, /* before vars: its postconfiguration defines $connections_* */
    &hy_http_metrics_module,     /* a location's own handler ("metrics;") and a LOG phase handler (counting) */
    &hy_http_limit_req_module,   /* before vars ($limit_req_status); PREACCESS: before limit_conn, as nginx runs */
    &hy_http_limit_conn_module,  /* them (a request delayed by limit_req is not counted while it waits) */
    &hy_http_vars_module,
    &hy_http_map_module,
    &hy_http_split_clients_module,
    &hy_http_geo_module,
    /* filters, in the order they see a response */
    &hy_http_not_modified_module, /* first: 304/412 on the handler's own validators (before gzip weakens ETag) */
    &hy_http_headers_module, /* add_header, expires: first of the filters that set headers (nginx's filter order) */
    &hy_http_userid_filter_module, /* Set-Cookie after add_header's fields, as nginx's filter order */
    &hy_http_gunzip_module,  /* gunzip: before sub, charset and gzip (as nginx: they see the inflated text) */
    &hy_http_sub_module,     /* sub_filter: before charset and gzip (as nginx: the substituted text is what gets
                              * recoded and compressed) */
    &hy_http_ssi_module,      /* SSI: after sub, before charset and gzip (the processed page, included parts and
                               * all, is what gets recoded and compressed) */
    &hy_http_addition_module, /* add_before_body/add_after_body: after SSI (the added bodies are not the page's
                               * text to process), before charset and gzip */
    &hy_http_charset_module, /* names the charset, recodes the body: before gzip compresses it */
    &hy_http_gzip_module, /* compression: after every filter that sets headers (gzip_proxied reads them) */
    &hy_http_range_module, /* after compression: gzip clears accept_ranges when it encodes on the fly */
    &hy_http_limit_rate_module, /* limit_rate: only reads the location's rate for the protocol's send path */
    &hy_http_log_module, /* last: its log handler runs after the others' */
    NULL,
};

int hy_modules_init(void)
{
    int n = 0;
    for (; hy_modules[n]; n++)
        hy_modules[n]->index = n;
    return n;
}

const hy_directive_t *hy_modules_find(const char *name, size_t len, hy_module_t **mod)
{
    for (int i = 0; hy_modules[i]; i++) {
        const hy_directive_t *d = hy_modules[i]->directives;
        for (; d && d->name; d++)
            if (strlen(d->name) == len && memcmp(d->name, name, len) == 0) {
                if (mod)
                    *mod = hy_modules[i];
                return d;
            }
    }
    return NULL;
}
