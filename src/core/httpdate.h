/* httpdate.h — HTTP dates (RFC 9110 §5.6.7) and nginx's log time formats, without locale or TZ state. */
#ifndef HY_CORE_HTTPDATE_H
#define HY_CORE_HTTPDATE_H

#include <stddef.h>
#include <stdint.h>

#define HY_HTTPDATE_LEN 29 /* "Sun, 06 Nov 1994 08:49:37 GMT" */
#define HY_LOGDATE_LEN 19  /* "2026/11/30 10:00:00" */
#define HY_TIMELOCAL_LEN 26 /* "30/Nov/2026:10:00:00 +0000" */

/** Format t as IMF-fixdate "Sun, 06 Nov 1994 08:49:37 GMT" into out (must hold 30 bytes); NUL-terminates and
 * returns 29. Times outside years 1..9999 are clamped to that range. */
size_t hy_httpdate_format(int64_t t, char *out);
/** Parse an HTTP date → Unix time, or -1 if invalid. Accepts IMF-fixdate, RFC 850 ("Sunday, 06-Nov-94 08:49:37
 * GMT"; two-digit years 70-99 → 19xx, 00-69 → 20xx) and asctime ("Sun Nov  6 08:49:37 1994"). Lenient like nginx:
 * the weekday is not checked against the date, "GMT" may be missing or lower case, and anything after whitespace
 * or ';' is ignored (old IE's "; length=N"). Years before 1970 are invalid. Thread-safe, no libc time calls. */
int64_t hy_httpdate_parse(const char *p, size_t n);
/** Format t as nginx's error-log time "2026/11/30 10:00:00" in local time (localtime_r); out holds 20 bytes.
 * NUL-terminates and returns 19. */
size_t hy_logdate_format(int64_t t, char *out);
/** Format t as nginx's $time_local "30/Nov/2026:10:00:00 +0000" (local time and its UTC offset); out holds 27
 * bytes. NUL-terminates and returns 26. */
size_t hy_timelocal_format(int64_t t, char *out);
/** Break t (UTC) into civil fields: year, month 1-12, day 1-31, hour, minute, second, weekday 0=Sunday. */
void hy_time_to_civil(int64_t t, int *year, int *mon, int *mday, int *hour, int *min, int *sec, int *wday);
/** Days since 1970-01-01 of the civil date y-m-d (proleptic Gregorian, m 1-12); negative before 1970. */
int64_t hy_days_from_civil(int64_t y, int m, int d);

/** Three-letter English names, as HTTP and nginx's logs use them (index 0 = Sunday / January). */
extern const char hy_wday_names[7][4];
extern const char hy_month_names[12][4];

#endif
