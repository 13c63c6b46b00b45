/* params.h — the CGI-style parameters of fastcgi_param, uwsgi_param and scgi_param: `NAME value [if_not_empty]`,
 * nginx's inheritance (a level that names any parameter replaces the inherited set), and the request's list:
 * the parameters, then the client's header fields as HTTP_* (unless *_pass_request_headers off; a parameter
 * HTTP_X overrides the client's X field). */
#ifndef HY_UPSTREAM_PARAMS_H
#define HY_UPSTREAM_PARAMS_H

#include "upstream.h"
#include "../http/vars-t.h"

typedef struct hy_uparam {
    hy_str_t name;
    hy_complex_t value;
    bool if_not_empty;
} hy_uparam_t;

typedef struct hy_uparams {
    hy_array_t *list; /* hy_uparam_t; NULL: inherit */
    size_t nhttp;     /* how many of them are named HTTP_*: none, and no client field can be overridden */
} hy_uparams_t;

/** The setter of *_param; d->offset locates the hy_uparams_t. */
int hy_uparams_set(hy_conf_t *cf, const hy_directive_t *d, void *conf);
void hy_uparams_merge(hy_uparams_t *c, const hy_uparams_t *p);
/** The request's parameters (evaluated) and, with pass_headers, the client's fields as HTTP_*: into u->headers.
 */
void hy_uparams_build(hy_ureq_t *u, const hy_uparams_t *ps, bool pass_headers);

#endif
