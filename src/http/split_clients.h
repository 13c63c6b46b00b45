/* split_clients.h — nginx's ngx_http_split_clients_module: `split_clients STRING $var { 10% a; 5.5% b; * c; }`
 * at http level defines $var, chosen by where MurmurHash2(STRING) falls in the cumulative percentages. */
#ifndef HY_HTTP_SPLIT_CLIENTS_H
#define HY_HTTP_SPLIT_CLIENTS_H

#include "../conf/conf.h"

extern hy_module_t hy_http_split_clients_module;

#endif
