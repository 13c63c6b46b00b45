/* proxy_conf.h — the proxy module's location settings, its directives, URL parsing and the response-header
 * rewriting settings (proxy_redirect), shared by proxy.c (the handler) and proxy_conf.c (the directives). */
#ifndef HY_HANDLERS_PROXY_CONF_H
#define HY_HANDLERS_PROXY_CONF_H

#include "../http/vars-t.h"
#include "../core/regex.h"
#include "../upstream/upstream.h"
#include "../upstream/uconf.h"
#include "../upstream/ussl.h"
#include "../upstream/health.h"

extern hy_module_t hy_http_proxy_module; /* proxy_conf.c: the directives; the handler is proxy.c */

typedef struct proxy_hdr {
    hy_str_t name;
    hy_complex_t value;
} proxy_hdr_t;

typedef struct proxy_redirect {
    hy_regex_t *regex; /* ~ / ~* form */
    hy_complex_t from; /* string form (prefix match) */
    hy_complex_t to;
} proxy_redirect_t;

typedef struct proxy_loc {
    hy_uconf_t uc; /* the engine's settings, shared with the other upstream modules (upstream/uconf.h) */
    hy_ussl_t ssl; /* proxy_ssl_* (upstream/ussl.h) */
    /* proxy_pass */
    hy_upstream_group_t *group; /* NULL with variables */
    hy_complex_t *url_cv;       /* proxy_pass with variables */
    hy_str_t url;               /* as written, scheme://host[:port] without the URI part */
    bool is_tls;                /* https:// */
    hy_str_t uri_part;
    bool has_uri;
    hy_str_t host_header; /* $proxy_host */
    hy_str_t port_text;   /* $proxy_port */
    hy_str_t loc_prefix;  /* the location's name (prefix replaced by the URI part) */
    /* request */
    int http_version;
    int pass_trailers; /* proxy_pass_trailers */
    hy_array_t *set_headers; /* proxy_hdr_t as written at this level; NULL: inherit */
    hy_array_t *headers;     /* merged with nginx's defaults */
    bool headers_cache;      /* `headers` has the cache's defaults (proxy_cache on here) */
    hy_complex_t *set_body;
    hy_complex_t *method; /* proxy_method (NULL: the client's) */
    /* response */
    int redirect;                              /* -1 unset, 0 off, 1 default only, 2 the list */
    hy_array_t *redirects;                     /* proxy_redirect_t */
    hy_array_t *cookie_domains, *cookie_paths; /* proxy_redirect_t; NULL: inherit; empty: off */
    hy_array_t *cookie_flags;                  /* proxy_cookie_flags rules (proxy_cookie.c); NULL: inherit; empty: off */
    hy_array_t *health_checks; /* hy_upstream_hc_conf_t (health_check, this location's own: not inherited) */
} proxy_loc_t;

typedef struct hy_proxy_url {
    hy_str_t host;        /* "backend", "127.0.0.1", "unix:/path" */
    hy_str_t host_header; /* $proxy_host: host[:port] ("localhost" for unix) */
    hy_str_t port_text;   /* $proxy_port */
    uint16_t port;
    bool explicit_port;
    hy_str_t uri;
    bool has_uri;
    hy_str_t prefix; /* "http://host[:port]" */
    bool is_tls;     /* https:// (default port 443) */
} hy_proxy_url_t;

/** Parse "http[s]://host[:port][/uri]" (or http://unix:/path:/uri). 0, or -1 when it is not such a URL. */
int hy_proxy_parse_url(hy_str_t url, hy_proxy_url_t *out);
/** proxy_pass with variables naming an address literal: a one-peer group in the request pool, or NULL. */
hy_upstream_group_t *hy_proxy_group_literal(hy_req_t *req, const hy_proxy_url_t *pu);
/** proxy_redirect applied to a Location / Refresh value; proxy_cookie_* to a Set-Cookie value. */
hy_str_t hy_proxy_rewrite_location(hy_req_t *req, const proxy_loc_t *pl, hy_str_t v);
hy_str_t hy_proxy_rewrite_refresh(hy_req_t *req, const proxy_loc_t *pl, hy_str_t v);
hy_str_t hy_proxy_rewrite_cookie(hy_req_t *req, const proxy_loc_t *pl, hy_str_t v);

/* proxy_cookie.c */
/** The setter of proxy_cookie_flags. */
int hy_proxy__set_cookie_flags(hy_conf_t *cf, const hy_directive_t *d, void *conf);
/** proxy_cookie_flags applied to a Set-Cookie value (the value itself when no rule names the cookie). */
hy_str_t hy_proxy_cookie_flags(hy_req_t *req, const proxy_loc_t *pl, hy_str_t v);

/* proxy.c */
int hy_proxy__set_handler(hy_conf_t *cf);
int hy_proxy__define_vars(hy_conf_t *cf);

#endif
