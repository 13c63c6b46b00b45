/* charset.h — nginx's charset module: charset, source_charset, override_charset, charset_types and charset_map.
 * A header filter names the charset in Content-Type; a body filter recodes the body between two single-byte
 * charsets (one byte for one byte) or between a single-byte charset and UTF-8, through the charset_map tables
 * (conf/koi-win, conf/koi-utf, conf/win-utf ship the common ones). Recoding code in charset_recode.c. */
#ifndef HY_HTTP_FILTER_CHARSET_H
#define HY_HTTP_FILTER_CHARSET_H

#include "../http/request.h"

extern hy_module_t hy_http_charset_module;

#endif
