/* httpdate_fuzz.c — libFuzzer driver: HTTP date parsing (hy_httpdate_parse). A parsed time formats back to an
 * IMF-fixdate that parses to the same time; also exercises the civil-time conversion on it. */
#include <string.h>

#include "fuzz.h"
#include "core/httpdate.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    char *v = malloc(size ? size : 1);
    memcpy(v, data, size);
    int64_t t = hy_httpdate_parse(v, size);
    CHECK(t >= -1);
    if (t >= 0) {
        char out[HY_HTTPDATE_LEN + 1];
        CHECK(hy_httpdate_format(t, out) == HY_HTTPDATE_LEN);
        int y, mo, d, h, mi, s, wd;
        hy_time_to_civil(t, &y, &mo, &d, &h, &mi, &s, &wd);
        CHECK(y >= 1970 && mo >= 1 && mo <= 12 && d >= 1 && d <= 31 && h < 24 && mi < 60 && s < 61 && wd < 7);
        if (y <= 9999)
            CHECK(hy_httpdate_parse(out, HY_HTTPDATE_LEN) == t);
    }
    free(v);
    return 0;
}
