/* health.h — active health checks of upstream groups (NGINX Plus's ngx_http_upstream_hc_module): the `match`
 * blocks (http level, this module) and the checks a location's `health_check` asks for (the directive belongs to
 * the module that passes requests: handlers/proxy_conf.c parses it with hy_upstream_hc_parse and registers it
 * with hy_upstream_hc_add when the location is merged, the location's proxy settings known).
 *
 * The state lives in the group's `zone` (one entry per peer, shared by every worker): per check a
 * "next check due" time that the worker which finds it due claims under the zone's lock (so exactly one process
 * checks a peer per interval), the consecutive failures and passes, and whether the check holds the peer down.
 * The balancers (balancer.c) skip a peer whose entry says down (peer->hc_down). See docs/ARCHITECTURE.md,
 * "Active health checks". */
#ifndef HY_UPSTREAM_HEALTH_H
#define HY_UPSTREAM_HEALTH_H

#include "upstream.h"

typedef struct hy_upstream_hc_conf {
    /* health_check's parameters (hy_upstream_hc_parse) */
    int64_t interval_ms, jitter_ms; /* 5s, 0 */
    int fails, passes;              /* 1, 1 */
    hy_str_t uri;                   /* "/" */
    hy_str_t match;                 /* the match block's name, .ptr NULL: none (2xx and 3xx pass) */
    uint16_t port;                  /* 0: the server's port */
    bool mandatory, persistent;
    const char *file; /* where the directive is (messages) */
    unsigned line;
    /* from the location, filled by the passing module before hy_upstream_hc_add */
    hy_upstream_group_t *group; /* NULL: proxy_pass with variables, or no proxy_pass */
    int64_t connect_timeout_ms, send_timeout_ms, read_timeout_ms;
    hy_str_t host; /* the Host field the proxied request would carry */
    int version;   /* 10, 11 or 20 (proxy_http_version; 20: the probe speaks HTTP/2) */
    const struct hy_ussl *ssl; /* proxy_pass https://: the location's proxy_ssl_* (upstream/ussl.h); NULL: plain */
    hy_str_t ssl_host;         /* the default SNI name and name to verify: the host of proxy_pass */
    bool registered;
} hy_upstream_hc_conf_t;

/** Parse `health_check [interval=] [jitter=] [fails=] [passes=] [uri=] [match=] [port=] [mandatory [persistent]]`
 * from the current statement into hc (defaults as NGINX Plus). 0, or -1 after hy_conf_error. */
int hy_upstream_hc_parse(hy_conf_t *cf, hy_upstream_hc_conf_t *hc);
/** Register a parsed check (its location fields filled). The group's zone and the match name are checked after
 * the http block (postconfiguration), with the directive's file:line. 0, or -1 after hy_conf_error. */
int hy_upstream_hc_add(hy_conf_t *cf, hy_upstream_hc_conf_t *hc);
/** In a worker: give the group's peers that have none their shared health entry (group.c calls it after it
 * rebuilt the peers of `server ... resolve`), and have them checked soon. */
void hy_upstream__hc_attach(hy_upstream_group_t *g);

extern hy_module_t hy_http_upstream_hc_module; /* match {}, the checks' worker side */

#endif
