/* ssi.h — nginx's SSI module (ssi.c, with the scanner ssi_parse.c and the ordered output splice.c): server-side
 * includes in response bodies, a body filter placed after sub_filter and before charset and gzip in hy_modules[]
 * (the processed page is what gets recoded and compressed). */
#ifndef HY_FILTERS_SSI_H
#define HY_FILTERS_SSI_H

#include "../http/request.h"

extern hy_module_t hy_http_ssi_module;

#endif
