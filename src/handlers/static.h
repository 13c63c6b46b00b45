/* static.h — nginx's static module: the content handler that serves files under root/alias (the last of the
 * content chain). */
#ifndef HY_HANDLERS_STATIC_H
#define HY_HANDLERS_STATIC_H

#include "../http/request.h"

extern hy_module_t hy_static_module;

#endif
