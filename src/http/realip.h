/* realip.h — nginx's realip module (set_real_ip_from, real_ip_header, real_ip_recursive, $realip_remote_addr,
 * $realip_remote_port; realip.c). */
#ifndef HY_HTTP_REALIP_H
#define HY_HTTP_REALIP_H

#include "../conf/conf.h"

/* Registers POST_READ and PREACCESS handlers: listed before every other PREACCESS module in hy_modules[]
 * (limit_req/limit_conn key on the replaced address), and before the variables module (its postconfiguration
 * defines $realip_remote_*). */
extern hy_module_t hy_http_realip_module;

#endif
