/* charset.h — nginx's charset module: charset, source_charset, override_charset, charset_types and charset_map.
 * A header filter names the charset in Content-Type; a body filter recodes the body between two single-byte
 * charsets (one byte for one byte) or between a single-byte charset and UTF-8, through the charset_map tables
 * (conf/koi-win, conf/koi-utf, conf/win-utf ship the common ones). Recoding code in charset_recode.c. */
#ifndef HY_HTTP_FILTER_CHARSET_H
#define HY_HTTP_FILTER_CHARSET_H

#include "../http/request.h"

extern hy_module_t hy_http_charset_module;

/** The charset the charset filter will name in the Content-Type of req's response with `content_type` (at
 * req->status; the request's location settings), or "" when none (nginx's r->headers_out.charset once the head
 * is sent): a handler rendering text (autoindex) measures names in characters when it is utf-8. */
hy_str_t hy_charset_of(hy_req_t *req, hy_str_t content_type);

#endif
