/* httpdate_edges_test.c — hy_httpdate_parse's less common spellings (RFC 850 with a four-digit year, a tab or
 * CR/LF after the date, asctime's day in one or two digits) and refusals (a weekday with non-letters, a broken
 * year), and the log formats clamped at the ends of the time range. httpdate_test.c has the main cases. */
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include "../harness.h"
#include "core/hayate.h"
#include "core/httpdate.h"

static int64_t parse(const char *s)
{
    return hy_httpdate_parse(s, strlen(s));
}

static void test_accepted(void)
{
    is_int(parse("Sunday, 06-Nov-1994 08:49:37 GMT"), 784111777); /* RFC 850 with a 4-digit year */
    is_int(parse("Sunday, 06-Nov-69 08:49:37 GMT"), parse("Wed, 06 Nov 2069 08:49:37 GMT"));
    is_int(parse("SUNDAY, 06-Nov-94 08:49:37 GMT"), 784111777);
    is_int(parse("sun, 06 Nov 1994 08:49:37 GMT\tx"), 784111777);
    is_int(parse("Sun, 06 Nov 1994 08:49:37 GMT\r\n"), 784111777);
    is_int(parse("Sun, 06 Nov 1994 08:49:37\n"), 784111777);
    is_int(parse("Sun, 06 Nov 1994 08:49:37 gMt;x"), 784111777);
    is_int(parse("Sun Nov 16 08:49:37 1994"), 784111777 + 10 * 86400);
    is_int(parse("Sun Nov  6 08:49:37 1994\t"), 784111777);
}

static void test_refused(void)
{
    static const char *bad[] = {
        "Sunday, 06-Nov-x994 08:49:37 GMT", /* looks like a 4-digit year, is not */
        "Sunday, 06-Nov-9x 08:49:37 GMT",
        "Sunday, 06-Nov-94",
        "Sunday, 06-Nox-94 08:49:37 GMT",
        "S@n, 06 Nov 1994 08:49:37 GMT",
        "Su1, 06 Nov 1994 08:49:37 GMT",
        "Sun Nov  x 08:49:37 1994",
        "Sun Nov ",
        "Sun Nov",
        "Sun Nov 6x08:49:37 1994",
        "Sun Nov  6 08:49:37 1994x",
        "Sun Nov  6 08:49:37 199",
        "Sun Nov  6 08:49:37x1994",
        "Sun Nov  6 08:49:3",
        "Sun Nov 6",
        "Sun,",
        "Sun, 0",
        "Sun, 06",
        "Sun, 06x",
        "Sun, 06 Nov 1994 08:49:37 GMT\x01",
        "Sun, 06 Nov 1994 08-49-37 GMT",
        "Sunday",
    };
    for (size_t i = 0; i < HY_ARRAY_SIZE(bad); i++) {
        if (!is_int(parse(bad[i]), -1))
            printf("#   \"%s\"\n", bad[i]);
    }
}

static void test_clamped_log_formats(void)
{
    setenv("TZ", "UTC", 1);
    tzset();
    char lo[32], hi[32];
    is_int(hy_logdate_format(INT64_MIN / 2, lo), 19);
    is_int(hy_logdate_format(INT64_MAX / 2, hi), 19);
    lo[19] = hi[19] = '\0';
    ok(strcmp(lo, hi) < 0); /* both clamped into the representable range, still ordered */
    char t[32];
    is_int(hy_timelocal_format(INT64_MAX / 2, t), 26);
    is_int(hy_httpdate_format(0, t), 29);
    t[29] = '\0';
    is_str(t, "Thu, 01 Jan 1970 00:00:00 GMT");
}

int main(void)
{
    subtest("accepted spellings", test_accepted);
    subtest("refused", test_refused);
    subtest("clamped log formats", test_clamped_log_formats);
    return done_testing();
}
