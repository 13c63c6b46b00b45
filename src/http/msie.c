/* msie.c — msie_padding (https://nginx.org/en/docs/http/ngx_http_core_module.html#msie_padding): the user-agent
 * classification follows nginx's ngx_http_process_user_agent (case-sensitive substrings): "MSIE " with at least
 * three bytes after it is MSIE unless "Opera" is there too; otherwise "Chrome/" is Chrome unless "Gecko/" (Firefox
 * and the like) came first. The padding text is nginx's, so padded pages have nginx's length. */
#include <string.h>
#include "msie.h"
#include "uri.h"

#define PAD_LINE "<!-- a padding to disable MSIE and Chrome friendly error page -->\r\n"
static const char padding[] = PAD_LINE PAD_LINE PAD_LINE PAD_LINE PAD_LINE PAD_LINE;

static bool has(const hy_str_t *ua, const char *needle)
{
    return memmem(ua->ptr, ua->len, needle, strlen(needle)) != NULL;
}

static bool wants_padding(const hy_str_t *ua)
{
    if (ua == NULL)
        return false;
    if (has(ua, "Opera"))
        return false;
    const char *m = memmem(ua->ptr, ua->len, "MSIE ", 5);
    if (m != NULL && m + 7 < ua->ptr + ua->len)
        return true;
    return !has(ua, "Gecko/") && has(ua, "Chrome/");
}

hy_str_t hy_http_msie_padding(bool enabled, int version, const hy_str_t *user_agent, int status)
{
    if (status < 400 || !enabled || version < 10 || !wants_padding(user_agent))
        return (hy_str_t){"", 0};
    return (hy_str_t){(char *)padding, sizeof(padding) - 1};
}

bool hy_http_ua_msie6(const hy_str_t *ua)
{
    if (ua == NULL || has(ua, "Opera"))
        return false;
    const char *m = memmem(ua->ptr, ua->len, "MSIE ", 5);
    if (m == NULL || m + 7 >= ua->ptr + ua->len || m[6] != '.')
        return false;
    if (m[5] == '4' || m[5] == '5')
        return true;
    hy_str_t rest = {(char *)m + 8, (size_t)(ua->ptr + ua->len - (m + 8))};
    return m[5] == '6' && !has(&rest, "SV1");
}

bool hy_http_ua_safari(const hy_str_t *ua)
{
    if (ua == NULL || has(ua, "Opera"))
        return false;
    const char *m = memmem(ua->ptr, ua->len, "MSIE ", 5);
    if (m != NULL && m + 7 < ua->ptr + ua->len)
        return false; /* MSIE */
    return !has(ua, "Gecko/") && !has(ua, "Chrome/") && has(ua, "Safari/") && has(ua, "Mac OS X");
}

bool hy_http_ua_msie(const hy_str_t *ua)
{
    if (ua == NULL || has(ua, "Opera"))
        return false;
    const char *m = memmem(ua->ptr, ua->len, "MSIE ", 5);
    return m != NULL && m + 7 < ua->ptr + ua->len;
}

#define REFRESH_HEAD "<html><head><meta http-equiv=\"Refresh\" content=\"0; URL="
#define REFRESH_TAIL "\"></head><body></body></html>\r\n"

static bool refresh_escaped(unsigned char c)
{
    return c <= 0x20 || c >= 0x7f || c == '"' || c == '\'';
}

size_t hy_http_msie_refresh_page(char *dst, hy_str_t location)
{
    size_t n = sizeof(REFRESH_HEAD) - 1;
    if (dst)
        memcpy(dst, REFRESH_HEAD, n);
    n += hy_pct_escape(dst ? dst + n : NULL, location.ptr, location.len, refresh_escaped);
    if (dst)
        memcpy(dst + n, REFRESH_TAIL, sizeof(REFRESH_TAIL) - 1);
    return n + sizeof(REFRESH_TAIL) - 1;
}
