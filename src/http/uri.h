/* uri.h — request-target normalisation (nginx's ngx_http_parse_complex_uri semantics) and Host validation:
 * protocol-neutral pure functions (h1 and h2 both hand their target and authority to the request core, which
 * calls these). No I/O, no allocation. */
#ifndef HY_HTTP_URI_H
#define HY_HTTP_URI_H

#include <stdbool.h>
#include <sys/types.h>
#include "../core/str.h"

/** Request-target -> decoded, normalised path + args, like nginx's ngx_http_parse_complex_uri.
 * Forms: origin-form "/path?query"; absolute-form "scheme://authority[/path][?query]" (*host = the authority as sent,
 * host[:port], pointing into target: pass it through hy_http_validate_host and let it override the Host header, RFC
 * 9112 §3.2.2; userinfo "@" or a non-digit port -> -1); "*" only for OPTIONS (path "*"; nginx 1.22 answers 400 to
 * "OPTIONS *", we accept it as RFC 9112 §3.2.4 says). Authority-form (CONNECT) -> -1.
 * The path (up to the first '?' or '#') is percent-decoded (bad %-escape or %00 -> -1), then normalised on the decoded
 * bytes (so %2F acts as '/' and %2E as '.', as nginx): "." segments removed, ".." pops the previous segment (above the
 * root -> -1), "//" merged into "/" when merge_slashes. A trailing "." or ".." leaves a trailing '/'. The query after
 * the first '?' (up to a '#', not decoded) is returned in *args without the '?'; a '#' fragment is dropped (as nginx).
 * out must have room for target.len + 1 bytes; the path is written NUL-terminated, *out_len = its length.
 * *host is HY_STR_NULL unless absolute-form. Raw bytes <= 0x20 or 0x7f in target -> -1.
 * Returns 0 or -1 (answer 400). */
int hy_http_parse_target(hy_str_t method, hy_str_t target, bool merge_slashes, char *out, size_t *out_len,
                         hy_str_t *args, hy_str_t *host);

/** Validate a Host header value or an absolute-form authority (ngx_http_validate_host): lower-cases in place,
 * strips the ":port" (digits only, may be empty) and one trailing '.'. Rejects: empty host, "..", a leading '.', '/',
 * '\\', '@', NUL, CTL, SP, DEL, a port with non-digits or above 65535. An IPv6 literal "[::1]:8080" or an RFC 3986
 * IPvFuture "[v1.x:y]" is accepted (the port is stripped, the brackets kept). Returns the new length, or -1 (answer 400
 * "client sent invalid host header"). Stricter than nginx, which accepts '\\', '@', a leading '.', junk after ']' and
 * anything after the first ':'. */
ssize_t hy_http_validate_host(char *host, size_t len);

/** nginx's NGX_ESCAPE_URI, for a path sent back in a Location or to an upstream: space, '#', '%', '?', control
 * bytes, bytes >= 0x7f and, as nginx 1.25+ does, the other characters RFC 3986 does not allow in a URI
 * ('"', '<', '>', '\\', '^', '`', '{', '|', '}') become %XX. Writes into dst (room for the returned length) unless dst is NULL; returns
 * the escaped length (n when nothing needs escaping). */
size_t hy_uri_escape(char *dst, const char *src, size_t n);
/** The same with the set of bytes to escape given by `escaped`: each such byte becomes %XX (upper-case hex). */
size_t hy_pct_escape(char *dst, const char *src, size_t n, bool (*escaped)(unsigned char c));
/** hy_pct_escape's predicate for a URI component: true for every byte but RFC 3986's unreserved
 *  (ALPHA DIGIT - . _ ~), as autoindex's hrefs and $ssl_client_escaped_cert escape. */
bool hy_pct_not_unreserved(unsigned char c);

#endif
