/* base64.h — base64 decoding as nginx does it (ngx_decode_base64 and ngx_decode_base64url): pure functions. */
#ifndef HY_CORE_BASE64_H
#define HY_CORE_BASE64_H

#include <stddef.h>

/** Decode standard base64 (RFC 4648 §4) from s[0..len): stops at the first '=', fails (-1) on any other byte
 * outside the alphabet or on a length of 4n+1 before it. Returns the decoded length; out must hold len * 3 / 4 + 3
 * bytes. No NUL is written. */
long hy_base64_decode(const char *s, size_t len, unsigned char *out);

/** The same for the URL-safe alphabet (RFC 4648 §5: '-' and '_' instead of '+' and '/'). */
long hy_base64url_decode(const char *s, size_t len, unsigned char *out);

#endif
