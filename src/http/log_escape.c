/* log_escape.c — the access log's escaping of variable values (log_format escape=default|json|none), nginx's
 * rules (ngx_http_log_escape, ngx_escape_json). */
#include <stdbool.h>
#include <string.h>
#include "log_escape.h"

/* nginx's ngx_http_log_escape: '"', '\\', bytes < 0x20 and >= 0x7f become \xHH (upper-case hex) */
static inline bool esc_default(unsigned char c)
{
    return c < 0x20 || c >= 0x7f || c == '"' || c == '\\';
}

size_t hy_log_escape_len(int mode, const char *src, size_t n)
{
    const unsigned char *s = (const unsigned char *)src;
    size_t extra = 0;
    if (mode == HY_ESC_DEFAULT) {
        for (size_t i = 0; i < n; i++)
            extra += esc_default(s[i]) ? 3 : 0;
    } else if (mode == HY_ESC_JSON) {
        for (size_t i = 0; i < n; i++) {
            unsigned char c = s[i];
            if (c == '"' || c == '\\' || c == '\n' || c == '\r' || c == '\t' || c == '\b' || c == '\f')
                extra += 1;
            else if (c < 0x20)
                extra += 5;
        }
    }
    return n + extra;
}

char *hy_log_escape(int mode, char *dst, const char *src, size_t n)
{
    static const char hex_uc[] = "0123456789ABCDEF";
    const unsigned char *s = (const unsigned char *)src;
    if (mode == HY_ESC_NONE) {
        memcpy(dst, src, n);
        return dst + n;
    }
    if (mode == HY_ESC_DEFAULT) {
        for (size_t i = 0; i < n; i++) {
            unsigned char c = s[i];
            if (esc_default(c)) {
                *dst++ = '\\', *dst++ = 'x', *dst++ = hex_uc[c >> 4], *dst++ = hex_uc[c & 0xf];
            } else {
                *dst++ = (char)c;
            }
        }
        return dst;
    }
    for (size_t i = 0; i < n; i++) {
        unsigned char c = s[i];
        if (c > 0x1f && c != '"' && c != '\\') {
            *dst++ = (char)c;
            continue;
        }
        *dst++ = '\\';
        switch (c) {
        case '"': *dst++ = '"'; break;
        case '\\': *dst++ = '\\'; break;
        case '\n': *dst++ = 'n'; break;
        case '\r': *dst++ = 'r'; break;
        case '\t': *dst++ = 't'; break;
        case '\b': *dst++ = 'b'; break;
        case '\f': *dst++ = 'f'; break;
        default:
            *dst++ = 'u', *dst++ = '0', *dst++ = '0', *dst++ = hex_uc[c >> 4], *dst++ = hex_uc[c & 0xf];
        }
    }
    return dst;
}
