/* stub_status.h — nginx's stub_status (the basic status page, counters summed over every worker and kept across
 * reloads: core/stats.h) and the $connections_active/reading/writing/waiting variables. */
#ifndef HY_HTTP_STUB_STATUS_H
#define HY_HTTP_STUB_STATUS_H

#include "../conf/conf.h"

extern hy_module_t hy_http_stub_status_module;

#endif
