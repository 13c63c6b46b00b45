/* resolver_conf.h — the `resolver` and `resolver_timeout` directives (nginx's http core module: http, server,
 * location; upstream{} has its own pair in upstream/group.c, parsed by the same function). The DNS client itself is
 * event/resolver.c. */
#ifndef HY_HTTP_RESOLVER_CONF_H
#define HY_HTTP_RESOLVER_CONF_H

#include "../conf/conf.h"
#include "../event/resolver.h"

#define HY_RESOLVER_TIMEOUT_DEFAULT_MS 30000

typedef struct hy_http_resolver_conf {
    hy_resolver_t *resolver; /* NULL: none (nginx: "no resolver defined to resolve NAME") */
    int64_t timeout_ms;      /* resolver_timeout, default 30 s */
} hy_http_resolver_conf_t;

extern hy_module_t hy_http_resolver_module;

/** A location's resolver settings (its merged loc_conf array). */
const hy_http_resolver_conf_t *hy_http_resolver_loc(void **loc_conf);
/** The http{} level's settings while the configuration is read (for upstream{} blocks without their own). */
const hy_http_resolver_conf_t *hy_http_resolver_main(hy_conf_t *cf);
/** Parse `resolver address ... [valid=time] [ipv4=on|off] [ipv6=on|off] [status_zone=name]` from the current
 * directive's words. NULL after hy_conf_error. */
hy_resolver_t *hy_http_resolver_parse(hy_conf_t *cf);
/** Parse resolver_timeout's value (ms), or -1 after hy_conf_error. */
int64_t hy_http_resolver_timeout_parse(hy_conf_t *cf);

#endif
