/* appconf.h — what fastcgi_pass, uwsgi_pass and scgi_pass share: the location settings (the engine's shared
 * settings, the *_param list, the target), the *_pass setter (address, unix:path, upstream name, variables) and
 * the exchange each handler starts from. */
#ifndef HY_HANDLERS_APPCONF_H
#define HY_HANDLERS_APPCONF_H

#include "../upstream/uconf.h"
#include "../upstream/params.h"
#include "../http/core.h"

typedef struct hy_app_loc {
    hy_uconf_t uc; /* first: an exchange's u->data for hy_uconf_on_head */
    hy_uparams_t params;
    hy_upstream_group_t *group; /* NULL with variables */
    hy_complex_t *pass_cv;      /* *_pass with variables */
    const struct hy_ussl *ssl;  /* uwsgi: its uwsgi_ssl_* settings, and uwsgi:// / suwsgi:// are accepted; NULL: no
                                 * scheme (FastCGI, SCGI) */
    bool is_tls;                /* suwsgi:// */
} hy_app_loc_t;

void hy_app_loc_init(hy_app_loc_t *al);
/** Merge the shared parts (`module`: "fastcgi"); hidden: the module's default hidden response fields. */
int hy_app_loc_merge(hy_conf_t *cf, hy_app_loc_t *c, const hy_app_loc_t *p, const char *module,
                     const char *const *hidden, size_t nhidden);
/** The *_pass directive: the target, and `handler` as the location's content handler. */
int hy_app_set_pass(hy_conf_t *cf, hy_app_loc_t *al, hy_content_handler_fn handler);
/** The group of a *_pass target without variables ("host:port", "[v6]:port", "unix:/path", an upstream's name; with
 * schemes, uwsgi's "uwsgi://" or "suwsgi://" first, *tls set by the latter); no port given: port 0, which the group
 * refuses at the end of http{} unless an upstream{} takes the name. NULL after hy_conf_error. */
hy_upstream_group_t *hy_app_target_group(hy_conf_t *cf, hy_str_t target, bool schemes, bool *tls);
/** A new exchange for req with the location's target (evaluated when it has variables), settings and
 * hy_uconf_on_head (the codec evaluates the parameters when it sends: after the body was read); NULL with *status set
 * (500, 502) when the target cannot be used. */
hy_ureq_t *hy_app_exchange(hy_req_t *req, const hy_app_loc_t *al, int *status);

#endif
