/* uwsgi.h — the uwsgi codec for the upstream engine (uwsgi_pass). */
#ifndef HY_UPSTREAM_UWSGI_H
#define HY_UPSTREAM_UWSGI_H

#include "upstream.h"
#include "params.h"

/** Prepare u for the uwsgi codec with the packet's modifiers (u->headers are the variables, in order) and the
 * bytes uwsgi_string puts after the vars (counted in the packet's size, as nginx; empty for none). */
void hy_upstream_uwsgi_init(hy_ureq_t *u, const hy_uparams_t *params, bool pass_headers, int modifier1, int modifier2,
                            hy_str_t tail);

extern const hy_upstream_codec_t hy_upstream_uwsgi_codec;

#endif
