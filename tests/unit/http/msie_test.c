/* msie_test.c — nginx's user-agent quirks (msie.h): the msie_padding of built-in error pages, and the msie6 and
 * safari classes of keepalive_disable, with the substrings nginx's ngx_http_process_user_agent looks for. */
#include <string.h>
#include "../harness.h"
#include "http/msie.h"

static hy_str_t ua(const char *s)
{
    return (hy_str_t){(char *)s, strlen(s)};
}

static size_t pad_len(bool on, int version, const char *agent, int status)
{
    hy_str_t a = agent ? ua(agent) : HY_STR_NULL;
    return hy_http_msie_padding(on, version, agent ? &a : NULL, status).len;
}

static void test_padding(void)
{
    const char *ie = "Mozilla/4.0 (compatible; MSIE 8.0; Windows NT 6.1)";
    size_t full = pad_len(true, 11, ie, 404);
    ok(full > 0);
    hy_str_t p = hy_http_msie_padding(true, 11, &(hy_str_t){(char *)ie, strlen(ie)}, 500);
    ok(p.len == full && memmem(p.ptr, p.len, "friendly error page", 19) != NULL);
    is_int(pad_len(true, 11, ie, 302), 0);      /* only error pages */
    is_int(pad_len(false, 11, ie, 404), 0);     /* msie_padding off */
    is_int(pad_len(true, 9, ie, 404), 0);       /* HTTP/0.9 */
    is_int(pad_len(true, 11, NULL, 404), 0);    /* no User-Agent */
    is_int(pad_len(true, 11, "Opera/9.80 (MSIE 8.0)", 404), 0);
    is_int(pad_len(true, 11, "xx MSIE 8", 404), 0);           /* too short after "MSIE " */
    is_int(pad_len(true, 11, "Mozilla/5.0 Chrome/120.0 Safari/537.36", 404), full);
    is_int(pad_len(true, 11, "Mozilla/5.0 Gecko/20100101 Chrome/1", 404), 0);  /* Gecko/ first: not Chrome */
    is_int(pad_len(true, 11, "curl/8.0", 404), 0);
}

static bool msie6(const char *s)
{
    hy_str_t a = ua(s);
    return hy_http_ua_msie6(&a);
}

static bool safari(const char *s)
{
    hy_str_t a = ua(s);
    return hy_http_ua_safari(&a);
}

static void test_msie6(void)
{
    ok(!hy_http_ua_msie6(NULL));
    ok(msie6("Mozilla/4.0 (compatible; MSIE 4.01; Windows 98)"));
    ok(msie6("Mozilla/4.0 (compatible; MSIE 5.5; Windows NT 5.0)"));
    ok(msie6("Mozilla/4.0 (compatible; MSIE 6.0; Windows NT 5.1)"));
    ok(!msie6("Mozilla/4.0 (compatible; MSIE 6.0; Windows NT 5.1; SV1)"));  /* XP SP2 */
    ok(!msie6("Mozilla/4.0 (compatible; MSIE 7.0; Windows NT 6.0)"));
    ok(!msie6("Opera/9.0 (compatible; MSIE 6.0)"));
    ok(!msie6("Mozilla/4.0 (compatible; MSIE 6)"));      /* no '.' after the major version */
    ok(!msie6("MSIE 6."));                                /* too short */
    ok(!msie6("Mozilla/5.0 (X11; Linux) Firefox/120"));
}

static void test_safari(void)
{
    ok(!hy_http_ua_safari(NULL));
    ok(safari("Mozilla/5.0 (Macintosh; Intel Mac OS X 10_15) AppleWebKit/605 Version/17 Safari/605.1"));
    ok(!safari("Mozilla/5.0 (iPhone; CPU iPhone OS 17_0) AppleWebKit/605 Safari/604.1"));   /* no Mac OS X */
    ok(!safari("Mozilla/5.0 (Macintosh; Intel Mac OS X 10_15) Chrome/120 Safari/537.36"));
    ok(!safari("Mozilla/5.0 (Macintosh; Intel Mac OS X 10.15; rv:120) Gecko/20100101 Safari/1"));
    ok(!safari("Mozilla/4.0 (compatible; MSIE 8.0; Mac OS X) Safari/1"));
    ok(!safari("Opera/9.80 (Macintosh; Intel Mac OS X) Safari/1"));
}

int main(void)
{
    subtest("msie_padding: error pages, MSIE and Chrome, HTTP/1.0+", test_padding);
    subtest("keepalive_disable msie6: MSIE 4, 5, 6 without SV1", test_msie6);
    subtest("keepalive_disable safari: Safari on macOS only", test_safari);
    return done_testing();
}
