/* addition.h — nginx's addition module (addition.c): the bodies of subrequests added before and after a
 * response body (add_before_body, add_after_body, addition_types), a body filter after SSI in hy_modules[]. */
#ifndef HY_FILTERS_ADDITION_H
#define HY_FILTERS_ADDITION_H

#include "../http/request.h"

extern hy_module_t hy_http_addition_module;

#endif
