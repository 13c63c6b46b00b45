/* str_test.c — counted-string comparisons and the nginx value parsers (integers, sizes, times). */
#include <arpa/inet.h>
#include <errno.h>
#include "../harness.h"
#include "core/str.h"
#include "core/mem.h"

#define S(lit) lit, sizeof(lit) - 1

static void test_eq(void)
{
    ok(hy_str_eq(HY_STR("GET"), "GET"));
    ok(!hy_str_eq(HY_STR("GET"), "get"));
    ok(!hy_str_eq(HY_STR("GET"), "GETX"));
    ok(!hy_str_eq(HY_STR("GETX"), "GET"));
    ok(hy_str_eq(HY_STR(""), ""));
    ok(hy_str_eq(HY_STR_NULL, ""));
    /* only the first len bytes count */
    hy_str_t part = {(char *)"keep-alive", 4};
    ok(hy_str_eq(part, "keep"));
    ok(!hy_str_eq(part, "keep-alive"));

    ok(hy_str_caseeq(HY_STR("Content-Length"), "content-length"));
    ok(hy_str_caseeq(HY_STR("CLOSE"), "close"));
    ok(!hy_str_caseeq(HY_STR("close"), "closed"));
    ok(!hy_str_caseeq(HY_STR("closed"), "close"));
    /* '[' and '{' differ by 0x20 but are not letters */
    ok(!hy_str_caseeq(HY_STR("a["), "a{"));
    ok(!hy_str_caseeq(HY_STR("@"), "`"));

    ok(hy_str_eq_str(HY_STR("abc"), HY_STR("abc")));
    ok(!hy_str_eq_str(HY_STR("abc"), HY_STR("abd")));
    ok(!hy_str_eq_str(HY_STR("abc"), HY_STR("ab")));
    ok(hy_str_eq_str(HY_STR_NULL, HY_STR("")));
    ok(hy_str_eq_str(HY_STR_NULL, HY_STR_NULL));
    ok(hy_str_caseeq_str(HY_STR("Text/HTML"), HY_STR("text/html")));
    ok(!hy_str_caseeq_str(HY_STR("text/html"), HY_STR("text/htm")));
    ok(hy_str_caseeq_str(HY_STR_NULL, HY_STR("")));
    /* counted strings compare their embedded bytes exactly */
    ok(!hy_str_eq_str(HY_STR("a\0b"), HY_STR("a\0c")));
}

static void test_caseeq_embedded_nul(void)
{
    /* BUG (src/core/str.c, hy_str_caseeq_str): it uses strncasecmp, which stops at the first NUL, so two counted
     * strings that differ only after an embedded NUL compare equal. Fix: compare byte by byte over a.len with an
     * ASCII tolower (no NUL stop). */
    ok(!hy_str_caseeq_str(HY_STR("a\0b"), HY_STR("a\0c")));
}

static void test_lower_dup(void)
{
    char s[] = "HeLLo-World_123[@]";
    hy_str_lower(s, sizeof(s) - 1);
    is_str(s, "hello-world_123[@]");
    char t[] = "ABCDEF";
    hy_str_lower(t, 3); /* only n bytes */
    is_str(t, "abcDEF");
    hy_pool_t *p = hy_pool_create(256);
    hy_str_t d = hy_str_dup(p, HY_STR("dup me"));
    is_strn(d.ptr, d.len, "dup me");
    is_int(d.ptr[d.len], '\0');
    hy_str_t src = {(char *)"abcdef", 3};
    hy_str_t d2 = hy_str_dup(p, src);
    is_str(d2.ptr, "abc");
    hy_pool_destroy(p);
}

static void test_parse_int(void)
{
    is_int(hy_parse_int(S("0")), 0);
    is_int(hy_parse_int(S("7")), 7);
    is_int(hy_parse_int(S("007")), 7);
    is_int(hy_parse_int(S("1234567890")), 1234567890);
    is_int(hy_parse_int(S("9223372036854775807")), INT64_MAX);
    is_int(hy_parse_int(S("9223372036854775808")), -1);
    is_int(hy_parse_int(S("9223372036854775810")), -1);
    is_int(hy_parse_int(S("99999999999999999999")), -1);
    is_int(hy_parse_int(S("00000000000000000000000000001")), 1);
    is_int(hy_parse_int(S("")), -1);
    is_int(hy_parse_int(NULL, 0), -1);
    is_int(hy_parse_int(S("-1")), -1);
    is_int(hy_parse_int(S("+1")), -1);
    is_int(hy_parse_int(S(" 1")), -1);
    is_int(hy_parse_int(S("1 ")), -1);
    is_int(hy_parse_int(S("1a")), -1);
    is_int(hy_parse_int(S("0x10")), -1);
    is_int(hy_parse_int("123abc", 3), 123); /* only n bytes are looked at */
}

static void test_parse_size(void)
{
    is_int(hy_parse_size(S("0")), 0);
    is_int(hy_parse_size(S("1024")), 1024);
    is_int(hy_parse_size(S("16k")), 16 * 1024);
    is_int(hy_parse_size(S("16K")), 16 * 1024);
    is_int(hy_parse_size(S("1m")), 1024 * 1024);
    is_int(hy_parse_size(S("1M")), 1024 * 1024);
    is_int(hy_parse_size(S("1g")), 1024LL * 1024 * 1024);
    is_int(hy_parse_size(S("1G")), 1024LL * 1024 * 1024);
    is_int(hy_parse_size(S("8g")), 8LL * 1024 * 1024 * 1024);
    is_int(hy_parse_size(S("9223372036854775807")), INT64_MAX);
    is_int(hy_parse_size(S("9007199254740991k")), 9007199254740991LL * 1024);
    is_int(hy_parse_size(S("9007199254740992k")), -1); /* 2^63: overflow */
    is_int(hy_parse_size(S("8796093022208m")), -1);    /* 2^43 MiB = 2^63 */
    is_int(hy_parse_size(S("8589934592g")), -1);       /* 2^33 GiB = 2^63 */
    is_int(hy_parse_size(S("8589934591g")), 8589934591LL * 1024 * 1024 * 1024);
    is_int(hy_parse_size(S("9223372036854775808")), -1);
    is_int(hy_parse_size(S("")), -1);
    is_int(hy_parse_size(S("k")), -1);
    is_int(hy_parse_size(S("m")), -1);
    is_int(hy_parse_size(S("1kb")), -1);
    is_int(hy_parse_size(S("1t")), -1);
    is_int(hy_parse_size(S("-1k")), -1);
    is_int(hy_parse_size(S("1 k")), -1);
    is_int(hy_parse_size(S("1.5k")), -1);
}

static void test_parse_msec(void)
{
    is_int(hy_parse_msec(S("500ms")), 500);
    is_int(hy_parse_msec(S("0")), 0);
    is_int(hy_parse_msec(S("0ms")), 0);
    is_int(hy_parse_msec(S("30")), 30000); /* a bare number means seconds */
    is_int(hy_parse_msec(S("30s")), 30000);
    is_int(hy_parse_msec(S("5m")), 5 * 60000);
    is_int(hy_parse_msec(S("1h")), 3600000);
    is_int(hy_parse_msec(S("1h 30m")), 5400000);
    is_int(hy_parse_msec(S("1h30m")), 5400000);
    is_int(hy_parse_msec(S("1h  30m")), 5400000);
    is_int(hy_parse_msec(S("90m")), 5400000);
    is_int(hy_parse_msec(S("5400s")), 5400000);
    is_int(hy_parse_msec(S("1d")), 86400000LL);
    is_int(hy_parse_msec(S("1w")), 7 * 86400000LL);
    is_int(hy_parse_msec(S("1M")), 30 * 86400000LL); /* accepted per str.h (nginx rejects y/M for ms values) */
    is_int(hy_parse_msec(S("1y")), 365 * 86400000LL);
    is_int(hy_parse_msec(S("1d 2h 3m 4s 5ms")), 86400000LL + 2 * 3600000 + 3 * 60000 + 4000 + 5);
    is_int(hy_parse_msec(S("2s500ms")), 2500);
    is_int(hy_parse_msec(S("1m 1ms")), 60001);
    /* errors */
    is_int(hy_parse_msec(S("")), -1);
    is_int(hy_parse_msec(S(" ")), -1);
    is_int(hy_parse_msec(S("ms")), -1);
    is_int(hy_parse_msec(S("s")), -1);
    is_int(hy_parse_msec(S("1x")), -1);
    is_int(hy_parse_msec(S("1H")), -1);
    is_int(hy_parse_msec(S("1S")), -1);
    is_int(hy_parse_msec(S("1 h")), -1);
    is_int(hy_parse_msec(S("1.5h")), -1);
    is_int(hy_parse_msec(S("-1s")), -1);
    is_int(hy_parse_msec(S("1hh")), -1);
    is_int(hy_parse_msec(S("10sec")), -1);
    /* overflow of a single value */
    is_int(hy_parse_msec(S("99999999999999999999")), -1);
    is_int(hy_parse_msec(S("9999999999999999999ms")), -1);
    is_int(hy_parse_msec(S("100000000000000y")), -1);
}

static void test_parse_msec_sum_overflow(void)
{
    /* BUG (src/core/str.c, parse_time): each part is checked against INT64_MAX/4 but the running total is not,
     * so five big parts (each in range, in nginx's required most-to-least significant order) overflow int64
     * (signed overflow, UB) instead of returning -1. nginx checks "total > MAX - value" before each addition.
     * Fix: `if (total > INT64_MAX - v * unit_ms) return -1;` before `total += v * unit_ms`. */
    int64_t v = hy_parse_msec(S("70000000y 880000000M 3800000000w 26000000000d 600000000000h"));
    is_int(v, -1);
    int64_t s = hy_parse_sec(S("70000000y 880000000M 3800000000w 26000000000d 600000000000h"));
    is_int(s, -1);
}

static void test_parse_time_unit_order(void)
{
    /* BUG (src/core/str.c, parse_time): nginx's time syntax takes units "in the order from the most to the least
     * significant" (https://nginx.org/en/docs/syntax.html) and ngx_parse_time() rejects a unit that is not
     * smaller than the previous one ("30m 1h", "1h 1h"). hayate accepts and adds them.
     * Fix: remember the rank of the last unit (y > M > w > d > h > m > s > ms) and fail unless strictly smaller. */
    is_int(hy_parse_msec(S("30m 1h")), -1);
    is_int(hy_parse_msec(S("1h 1h")), -1);
    is_int(hy_parse_msec(S("1s 1m")), -1);
    is_int(hy_parse_sec(S("1d 1w")), -1);
}

static void test_parse_sec(void)
{
    is_int(hy_parse_sec(S("30")), 30);
    is_int(hy_parse_sec(S("0")), 0);
    is_int(hy_parse_sec(S("30s")), 30);
    is_int(hy_parse_sec(S("1m")), 60);
    is_int(hy_parse_sec(S("1h 30m")), 5400);
    is_int(hy_parse_sec(S("1d")), 86400);
    is_int(hy_parse_sec(S("1w")), 7 * 86400);
    is_int(hy_parse_sec(S("1M")), 30 * 86400);
    is_int(hy_parse_sec(S("1y")), 365 * 86400);
    is_int(hy_parse_sec(S("1y 1M 1w 1d 1h 1m 1s")), 365 * 86400 + 30 * 86400 + 7 * 86400 + 86400 + 3600 + 60 + 1);
    is_int(hy_parse_sec(S("500ms")), -1); /* ms not allowed for second values */
    is_int(hy_parse_sec(S("1s 500ms")), -1);
    is_int(hy_parse_sec(S("")), -1);
    is_int(hy_parse_sec(S("abc")), -1);
    is_int(hy_parse_sec(S("1z")), -1);
    is_int(hy_parse_sec(S("99999999999999999999")), -1);
}

static void test_fmt(void)
{
    char b[32];
    const uint64_t vals[] = {0, 1, 9, 10, 15, 16, 99, 100, 255, 256, 12345, 0xfffff, 4294967295u, 1ull << 63, UINT64_MAX};
    for (size_t i = 0; i < sizeof(vals) / sizeof(vals[0]); i++) {
        char want[32];
        int wl = snprintf(want, sizeof(want), "%llu", (unsigned long long)vals[i]);
        size_t n = hy_fmt_u64(b, vals[i]);
        is_int(n, wl);
        ok(memcmp(b, want, n) == 0);
        wl = snprintf(want, sizeof(want), "%llx", (unsigned long long)vals[i]);
        n = hy_fmt_hex(b, vals[i]);
        is_int(n, wl);
        ok(memcmp(b, want, n) == 0);
    }
}

static void test_inet_ntop(void)
{
    const char *addrs[] = {"0.0.0.0", "127.0.0.1", "10.20.30.40", "255.255.255.255", "1.22.133.9", "100.9.0.199"};
    for (size_t i = 0; i < sizeof(addrs) / sizeof(addrs[0]); i++) {
        struct in_addr a;
        inet_pton(AF_INET, addrs[i], &a);
        char out[INET_ADDRSTRLEN];
        ok(hy_inet_ntop(AF_INET, &a, out, sizeof(out)) == out);
        is_str(out, addrs[i]);
        char small[15]; /* "255.255.255.255" + NUL needs 16 */
        const char *r = hy_inet_ntop(AF_INET, &a, small, sizeof(small));
        ok(strlen(addrs[i]) < sizeof(small) ? r == small && strcmp(small, addrs[i]) == 0 : r == NULL && errno == ENOSPC);
    }
    struct in6_addr a6;
    inet_pton(AF_INET6, "2001:db8::1", &a6);
    char out6[INET6_ADDRSTRLEN];
    ok(hy_inet_ntop(AF_INET6, &a6, out6, sizeof(out6)) != NULL);
    is_str(out6, "2001:db8::1");
    ok(hy_inet_ntop(12345, &a6, out6, sizeof(out6)) == NULL);
}

int main(void)
{
    subtest("hy_inet_ntop: dotted quads as inet_ntop, IPv6 through it", test_inet_ntop);
    subtest("hy_fmt_u64 / hy_fmt_hex match printf", test_fmt);
    subtest("eq / caseeq / eq_str / caseeq_str", test_eq);
    subtest("caseeq_str with an embedded NUL (regression)", test_caseeq_embedded_nul);
    subtest("lower / dup", test_lower_dup);
    subtest("hy_parse_int", test_parse_int);
    subtest("hy_parse_size", test_parse_size);
    subtest("hy_parse_msec", test_parse_msec);
    subtest("time sum overflow returns -1 (regression)", test_parse_msec_sum_overflow);
    subtest("time units must decrease (regression, nginx syntax)", test_parse_time_unit_order);
    subtest("hy_parse_sec", test_parse_sec);
    return done_testing();
}
