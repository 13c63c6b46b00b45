/* range_filter.h — nginx's range filter as a module: a 200 response whose handler allowed ranges
 * (req->accept_ranges) and whose length is known answers a Range request with 206 (one part or
 * multipart/byteranges) or 416. It runs after compression: the gzip filter clears accept_ranges when it encodes
 * on the fly, so a compressed body is always sent whole. */
#ifndef HY_FILTERS_RANGE_FILTER_H
#define HY_FILTERS_RANGE_FILTER_H

#include "../http/request.h"

extern hy_module_t hy_http_range_module;

#endif
