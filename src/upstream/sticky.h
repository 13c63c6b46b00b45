/* sticky.h — session affinity for upstream groups (nginx's `sticky` directive):
 *   sticky cookie NAME [expires=TIME|max] [domain=D] [httponly] [samesite=strict|lax|none|$var] [secure] [path=P];
 *   sticky route $var ...;
 *   sticky learn create=$var lookup=$var zone=NAME:SIZE [timeout=TIME] [header] [sync];
 * A peer's id is its `route=` parameter, else (cookie and learn) the hex MD5 of its address ("ip:port" or the
 * unix path). The bound peer is used when it can take the request (not down, not failed past max_fails, under
 * max_conns, not tried yet by this request; a backup only when no primary can); otherwise the group's balancing
 * method chooses, as if the client were not bound. A `drain` peer gets only requests bound to it. */
#ifndef HY_UPSTREAM_STICKY_H
#define HY_UPSTREAM_STICKY_H

#include "upstream.h"

/** The `sticky` directive of the upstream{} being parsed (group g). 0, or -1 after hy_conf_error. */
int hy_upstream__sticky_conf(hy_conf_t *cf, hy_upstream_group_t *g);
/** The peer the request is bound to, if it can take it now (marks it tried); NULL: let the balancer choose. */
hy_upstream_peer_t *hy_upstream__sticky_peer(hy_upstream_group_t *g, hy_req_t *req, uint64_t *tried);
/* hy_upstream__sticky_response (the response hook) is declared in upstream.h, which upstream.c uses. */

#endif
