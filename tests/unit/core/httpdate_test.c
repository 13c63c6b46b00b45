/* httpdate_test.c — HTTP date formatting/parsing round trips, calendar edge cases, log time formats. */
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include "../harness.h"
#include "core/hayate.h"
#include "core/httpdate.h"

/* is_str on a char array trips -Waddress in harness.h; compare through strlen instead */
#define is_cstr(a, b) is_strn((a), strlen(a), (b))

static int64_t parse(const char *s)
{
    return hy_httpdate_parse(s, strlen(s));
}

static void test_format(void)
{
    char buf[32];
    memset(buf, 'X', sizeof(buf));
    is_int(hy_httpdate_format(0, buf), 29);
    is_cstr(buf, "Thu, 01 Jan 1970 00:00:00 GMT");
    hy_httpdate_format(784111777, buf);
    is_cstr(buf, "Sun, 06 Nov 1994 08:49:37 GMT");
    hy_httpdate_format(951782400, buf); /* leap day 2000 */
    is_cstr(buf, "Tue, 29 Feb 2000 00:00:00 GMT");
    hy_httpdate_format(2147483647, buf);
    is_cstr(buf, "Tue, 19 Jan 2038 03:14:07 GMT");
    hy_httpdate_format(2147483648, buf);
    is_cstr(buf, "Tue, 19 Jan 2038 03:14:08 GMT");
    hy_httpdate_format(4107542400, buf); /* 2100 is not a leap year */
    is_cstr(buf, "Mon, 01 Mar 2100 00:00:00 GMT");
    hy_httpdate_format(INT64_C(253402300799), buf);
    is_cstr(buf, "Fri, 31 Dec 9999 23:59:59 GMT");
    hy_httpdate_format(INT64_MAX, buf); /* clamped */
    is_cstr(buf, "Fri, 31 Dec 9999 23:59:59 GMT");
    hy_httpdate_format(-1, buf);
    is_cstr(buf, "Wed, 31 Dec 1969 23:59:59 GMT");
    hy_httpdate_format(INT64_MIN, buf);
    is_cstr(buf, "Mon, 01 Jan 0001 00:00:00 GMT");
    hy_httpdate_format(1796004000, buf);
    is_cstr(buf, "Mon, 30 Nov 2026 02:00:00 GMT");
}

/* Compare our formatter with glibc's gmtime_r/strftime in the C locale over many instants. */
static void test_format_vs_libc(void)
{
    uint64_t x = 88172645463325252ULL;
    int bad = 0;
    for (int i = 0; i < 20000; i++) {
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        int64_t t = (int64_t)(x % UINT64_C(253402300800));
        if (i < 800)
            t = (int64_t)i * 86400 * 91 + i; /* dense sweep across 200 years of days */
        char ours[32], libc[64];
        hy_httpdate_format(t, ours);
        time_t tt = (time_t)t;
        struct tm tm;
        gmtime_r(&tt, &tm);
        strftime(libc, sizeof(libc), "%a, %d %b %Y %H:%M:%S GMT", &tm);
        if (strcmp(ours, libc) != 0 && bad++ < 5)
            printf("# t=%" PRId64 ": %s vs %s\n", t, ours, libc);
        int64_t back = hy_httpdate_parse(ours, 29);
        if (back != t && bad++ < 5)
            printf("# round trip t=%" PRId64 " -> %" PRId64 "\n", t, back);
    }
    is_int(bad, 0);
}

static void test_days_from_civil(void)
{
    is_int(hy_days_from_civil(1970, 1, 1), 0);
    is_int(hy_days_from_civil(1969, 12, 31), -1);
    is_int(hy_days_from_civil(2000, 3, 1), 11017);
    is_int(hy_days_from_civil(2000, 2, 29), 11016);
    is_int(hy_days_from_civil(1, 1, 1), -719162);
    int y, mo, d, h, mi, s, wd;
    hy_time_to_civil(784111777, &y, &mo, &d, &h, &mi, &s, &wd);
    is_int(y, 1994);
    is_int(mo, 11);
    is_int(d, 6);
    is_int(h, 8);
    is_int(mi, 49);
    is_int(s, 37);
    is_int(wd, 0);
}

static void test_parse_formats(void)
{
    is_int(parse("Sun, 06 Nov 1994 08:49:37 GMT"), 784111777);
    is_int(parse("Sunday, 06-Nov-94 08:49:37 GMT"), 784111777);
    is_int(parse("Sun Nov  6 08:49:37 1994"), 784111777);
    is_int(parse("Sun Nov 06 08:49:37 1994"), 784111777);
    is_int(parse("Sun Nov 6 08:49:37 1994"), 784111777);
    is_int(parse("Thu, 01 Jan 1970 00:00:00 GMT"), 0);
    is_int(parse("Thursday, 01-Jan-70 00:00:00 GMT"), 0);
    is_int(parse("Thu Jan  1 00:00:00 1970"), 0);
    is_int(parse("Tue, 29 Feb 2000 00:00:00 GMT"), 951782400);
    is_int(parse("Thu, 29 Feb 2024 12:00:00 GMT"), 1709208000);
    is_int(parse("Tue, 19 Jan 2038 03:14:08 GMT"), 2147483648);
    is_int(parse("Friday, 31-Dec-49 23:59:59 GMT"), 2524607999); /* 2-digit year < 70 → 20xx */
    is_int(parse("Fri, 31 Dec 9999 23:59:59 GMT"), INT64_C(253402300799));
    is_int(parse("Mon Nov 30 04:07:41 2026"), parse("Mon, 30 Nov 2026 04:07:41 GMT"));
    is_int(parse("Sunday, 06-Nov-94 08:49:37"), 784111777);
    is_int(parse("Sun Nov  6 08:49:37 1994 GMT"), 784111777);
    /* lenient like nginx: weekday not checked, GMT optional / any case, multiple spaces, trailing parameters */
    is_int(parse("Tue, 30 Nov 2026 04:07:41 GMT"), 1796011661);
    is_int(parse("Mon, 30 Nov 2026 04:07:41 gmt"), 1796011661);
    is_int(parse("Mon, 30 Nov 2026 04:07:41"), 1796011661);
    is_int(parse("Mon,  30 Nov 2026 04:07:41 GMT"), 1796011661);
    is_int(parse("Mon, 30 Nov 2026 04:07:41 GMT; length=5"), 1796011661);
    is_int(parse("  Mon, 30 Nov 2026 04:07:41 GMT  "), 1796011661);
    /* the length argument is honoured */
    is_int(hy_httpdate_parse("Mon, 30 Nov 2026 04:07:41 GMTXYZ", 29), 1796011661);
}

static void test_parse_fixed_form_agrees(void)
{
    /* the 29-byte form has a fast path; a leading space sends the same text through the general parser, which
     * skips it: every one-byte change of a valid date must get the same answer from both */
    static const char subst[] = "0159: ,GMTgmtJanFebxZ\t;-\xff";
    uint64_t x = 2463534242ULL;
    int differ = 0, tried = 0;
    for (int i = 0; i < 400; i++) {
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        char date[32], spaced[34];
        hy_httpdate_format((int64_t)(x % UINT64_C(253402300800)), date);
        for (int pos = 0; pos < HY_HTTPDATE_LEN; pos++)
            for (size_t k = 0; k < sizeof(subst) - 1; k++) {
                char m[32];
                memcpy(m, date, HY_HTTPDATE_LEN);
                m[pos] = subst[k];
                spaced[0] = ' ';
                memcpy(spaced + 1, m, HY_HTTPDATE_LEN);
                int64_t a = hy_httpdate_parse(m, HY_HTTPDATE_LEN), b = hy_httpdate_parse(spaced, HY_HTTPDATE_LEN + 1);
                tried++;
                if (a != b && differ++ < 5)
                    printf("# \"%.29s\": %" PRId64 " (fixed form) vs %" PRId64 " (general)\n", m, a, b);
            }
    }
    is_int(differ, 0);
    ok(tried > 100000);
    is_int(parse("Sun, 30 Feb 2020 08:49:37 GMT"), -1); /* no such day: refused by the fast path, as by the other */
    is_int(parse("Sat, 29 Feb 2020 08:49:37 gmt"), 1582966177);
}

static void test_parse_invalid(void)
{
    static const char *bad[] = {
        "",
        "garbage",
        "Sun, 06 Nov 1994",
        "Sun, 06 Nov 1994 08:49 GMT",
        "Sun, 6 Nov 1994 08:49:37 GMT",
        "Sun, 06 nov 1994 08:49:37 GMT",
        "Sun, 06 Foo 1994 08:49:37 GMT",
        "Sun, 06 Nov 94 08:49:37 GMT",
        "Sun, 06 Nov 1994 8:49:37 GMT",
        "Sun, 06 Nov 1994 24:00:00 GMT",
        "Sun, 06 Nov 1994 23:60:00 GMT",
        "Sun, 06 Nov 1994 23:59:60 GMT",
        "Sun, 00 Nov 1994 08:49:37 GMT",
        "Sun, 31 Nov 1994 08:49:37 GMT",
        "Thu, 29 Feb 2001 00:00:00 GMT",
        "Mon, 29 Feb 2100 00:00:00 GMT",
        "Wed, 31 Dec 1969 23:59:59 GMT",
        "Sun, 06 Nov 1994 08:49:37 GMTxx",
        "Sun, 06 Nov 1994 08:49:37x",
        "Sun 06 Nov 1994 08:49:37 GMT",
        "Sunday, 06-Nov 94 08:49:37 GMT",
        "Sunday, 06 Nov-94 08:49:37 GMT",
        "Sunday Nov  6 08:49:37 1994",
        "Sun Nov  6 08:49:37 94",
        "Sun Nov  6 08:49:37",
        "Sun Nov 32 08:49:37 1994",
        "Sun, 06 Nov 19a4 08:49:37 GMT",
        "1994-11-06T08:49:37Z",
        "784111777",
        ", 06 Nov 1994 08:49:37 GMT",
        "Su, 06 Nov 1994 08:49:37 GMT",
    };
    for (size_t i = 0; i < HY_ARRAY_SIZE(bad); i++) {
        if (!is_int(parse(bad[i]), -1))
            printf("#   \"%s\"\n", bad[i]);
    }
    is_int(hy_httpdate_parse(NULL, 0), -1);
    /* truncated at every length: never reads past n, never succeeds early */
    const char *full = "Sun, 06 Nov 1994 08:49:37 GMT";
    int early = 0;
    for (size_t n = 0; n < 25; n++) {
        char *copy = malloc(n ? n : 1);
        memcpy(copy, full, n);
        early += hy_httpdate_parse(copy, n) != -1;
        free(copy);
    }
    is_int(early, 0);
}

static void test_local_formats(void)
{
    setenv("TZ", "UTC", 1);
    tzset();
    char buf[32];
    memset(buf, 'X', sizeof(buf));
    is_int(hy_logdate_format(1796004000, buf), 19);
    is_cstr(buf, "2026/11/30 02:00:00");
    is_int(hy_timelocal_format(1796004000, buf), 26);
    is_cstr(buf, "30/Nov/2026:02:00:00 +0000");

    setenv("TZ", "JST-9", 1);
    tzset();
    hy_logdate_format(1796004000, buf);
    is_cstr(buf, "2026/11/30 11:00:00");
    hy_timelocal_format(1796004000, buf);
    is_cstr(buf, "30/Nov/2026:11:00:00 +0900");

    setenv("TZ", "IST+3:30", 1); /* UTC-03:30 */
    tzset();
    hy_timelocal_format(1796004000, buf);
    is_cstr(buf, "29/Nov/2026:22:30:00 -0330");
    hy_logdate_format(0, buf);
    is_cstr(buf, "1969/12/31 20:30:00");
    setenv("TZ", "UTC", 1);
    tzset();
}

int main(void)
{
    subtest("format", test_format);
    subtest("format matches libc, round trips", test_format_vs_libc);
    subtest("civil calendar", test_days_from_civil);
    subtest("parse the three formats", test_parse_formats);
    subtest("parse rejects invalid", test_parse_invalid);
    subtest("the fixed 29-byte form's fast path answers as the general parser", test_parse_fixed_form_agrees);
    subtest("log time formats", test_local_formats);
    return done_testing();
}
