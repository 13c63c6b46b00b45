/* browser_test.c — the browser module's pure parts: modern_browser's version numbers and the classification of
 * User-Agent strings (http/browser.h), nginx's rules: the offsets the marks are looked for after, the comparison as
 * each dotted part completes, Opera first, and the order of the other checks. */
#include <string.h>
#include "../harness.h"
#include "core/mem.h"
#include "http/browser.h"

static hy_pool_t *pool;

static uint64_t ver(const char *s)
{
    uint64_t v = 0;
    ok(hy_browser_parse_version((hy_str_t){(char *)s, strlen(s)}, &v));
    return v;
}

static void test_versions(void)
{
    is_int(ver("4000.99.99.99"), 4000999999);
    is_int(ver("1.9"), 1090000);
    is_int(ver("525.0.1"), 525000100);
    is_int(ver("3"), 3000000);
    is_int(ver(""), 0);
    uint64_t v;
    ok(!hy_browser_parse_version(HY_STR("1.x"), &v));
    ok(!hy_browser_parse_version(HY_STR("-1"), &v));
    is_int(hy_browser_mask(HY_STR("Opera")), 0);
    is_int(hy_browser_mask(HY_STR("KONQUEROR")), 4);
    is_int(hy_browser_mask(HY_STR("chrome")), -1);
    is_int(hy_browser_mask(HY_STR("msi")), -1);
}

/* a conf as merge leaves it: the list sorted by mask, Opera first */
static hy_browser_conf_t conf(const char *const *names, const char *const *versions, size_t n, bool unlisted)
{
    hy_browser_conf_t c = {0};
    c.modern = hy_array_create(pool, 6, sizeof(hy_browser_modern_t));
    for (size_t i = 0; i < n; i++)
        *(hy_browser_modern_t *)hy_array_push(c.modern) = (hy_browser_modern_t){
            ver(versions[i]), (unsigned)hy_browser_mask((hy_str_t){(char *)names[i], strlen(names[i])})};
    c.modern_unlisted = unlisted;
    c.sorted = true;
    return c;
}

static int cls(const hy_browser_conf_t *c, const char *ua)
{
    hy_str_t s = {(char *)ua, ua ? strlen(ua) : 0};
    return hy_browser_classify(c, ua ? &s : NULL);
}

static void test_classify(void)
{
    const char *const names[] = {"opera", "msie", "gecko"};
    const char *const versions[] = {"4001", "8.0", "1.9"};
    hy_browser_conf_t c = conf(names, versions, 3, false);
    enum { M = HY_BROWSER_MODERN, A = HY_BROWSER_ANCIENT };
    is_int(cls(&c, "Mozilla/5.0 (X11; rv:2.0) Gecko"), M);  /* "2." is past 1.9 already */
    is_int(cls(&c, "Mozilla/5.0 (X11; rv:1.10) Gecko"), M); /* a part is a number: 1.10 is past 1.9 */
    is_int(cls(&c, "Mozilla/5.0 (X11; rv:1.9) Gecko"), M);  /* equal */
    is_int(cls(&c, "Mozilla/5.0 (X11; rv:1.8.9) Gecko"), A);
    is_int(cls(&c, "Mozilla/4.0 (compatible; MSIE 8.0; Windows)"), M);
    is_int(cls(&c, "Mozilla/4.0 (compatible; MSIE 7.0; Windows)"), A);
    is_int(cls(&c, "MSIE 9.0 at the start is before the offset"), A); /* not found: a list without `unlisted` */
    is_int(cls(&c, "Mozilla/4.0 (compatible; MSIE 9.0) Opera 9"), A); /* Opera checked first */
    is_int(cls(&c, "Mozilla/4.0 (compatible; MSIE "), A);             /* nothing after the mark */
    is_int(cls(&c, NULL), A);
    c.modern_unlisted = true;
    is_int(cls(&c, "curl/8"), M);
    is_int(cls(&c, NULL), M);
    c.ancient = hy_array_create(pool, 2, sizeof(hy_str_t));
    *(hy_str_t *)hy_array_push(c.ancient) = HY_STR("curl");
    is_int(cls(&c, "curl/8"), A);
    is_int(cls(&c, "Wget/1"), M);
    hy_browser_conf_t ns = {0};
    ns.netscape4 = true;
    ns.modern_unlisted = true;
    is_int(cls(&ns, "Mozilla/4.72 [en] (X11)"), A);
    is_int(cls(&ns, "Mozilla/4.72 "), M); /* nginx: longer than "Mozilla/4.72 " only */
    is_int(cls(&ns, "Mozilla/5.0 (X11; Linux)"), M);
    is_int(cls(&ns, "Mozilla/0.9 (X11; Linux)"), M);
}

int main(void)
{
    pool = hy_pool_create(4096);
    subtest("modern_browser versions and names", test_versions);
    subtest("classification", test_classify);
    hy_pool_destroy(pool);
    return done_testing();
}
