/* userid.h — nginx's userid module: the visitor cookie (userid, userid_name, userid_domain, userid_path,
 * userid_expires, userid_p3p, userid_flags, userid_service, userid_mark) and $uid_got, $uid_set, $uid_reset. */
#ifndef HY_FILTERS_USERID_H
#define HY_FILTERS_USERID_H

#include "../http/request.h"

/* Directives, confs and variables: listed before the variables module (its postconfiguration defines them). */
extern hy_module_t hy_http_userid_module;
/* The Set-Cookie/P3P header filter: listed after the headers filter, as in nginx's filter order. */
extern hy_module_t hy_http_userid_filter_module;

#endif
