/* httpdate.c — HTTP date formatting/parsing with our own civil-calendar arithmetic (no gmtime, no locale). */
#include "httpdate.h"

#include <stdbool.h>
#include <string.h>
#include <time.h>

const char hy_wday_names[7][4] = {"Sun", "Mon", "Tue", "Wed", "Thu", "Fri", "Sat"};
const char hy_month_names[12][4] = {"Jan", "Feb", "Mar", "Apr", "May", "Jun",
                                    "Jul", "Aug", "Sep", "Oct", "Nov", "Dec"};

#define MIN_TIME INT64_C(-62135596800) /* 0001-01-01T00:00:00Z */
#define MAX_TIME INT64_C(253402300799) /* 9999-12-31T23:59:59Z */

static int64_t floor_div(int64_t a, int64_t b)
{
    int64_t q = a / b;
    return (a % b != 0 && (a < 0) != (b < 0)) ? q - 1 : q;
}

int64_t hy_days_from_civil(int64_t y, int m, int d)
{
    /* Count years from March so the leap day is the last day of the (shifted) year; eras are 400 years. */
    y -= m <= 2;
    int64_t era = floor_div(y, 400);
    int64_t yoe = y - era * 400;                                   /* 0..399 */
    int64_t doy = (153 * (m > 2 ? m - 3 : m + 9) + 2) / 5 + d - 1; /* 0..365 */
    int64_t doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;           /* 0..146096 */
    return era * 146097 + doe - 719468;
}

static void civil_from_days(int64_t z, int *year, int *mon, int *mday)
{
    z += 719468;
    int64_t era = floor_div(z, 146097);
    int64_t doe = z - era * 146097;
    int64_t yoe = (doe - doe / 1460 + doe / 36524 - doe / 146096) / 365;
    int64_t doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    int64_t mp = (5 * doy + 2) / 153;
    int d = (int)(doy - (153 * mp + 2) / 5 + 1);
    int m = (int)(mp < 10 ? mp + 3 : mp - 9);
    *year = (int)(yoe + era * 400 + (m <= 2));
    *mon = m;
    *mday = d;
}

void hy_time_to_civil(int64_t t, int *year, int *mon, int *mday, int *hour, int *min, int *sec, int *wday)
{
    int64_t days = floor_div(t, 86400);
    int64_t secs = t - days * 86400;
    civil_from_days(days, year, mon, mday);
    *hour = (int)(secs / 3600);
    *min = (int)(secs / 60 % 60);
    *sec = (int)(secs % 60);
    int64_t w = (days + 4) % 7; /* 1970-01-01 was a Thursday */
    *wday = (int)(w < 0 ? w + 7 : w);
}

static char *put2(char *p, int v)
{
    p[0] = (char)('0' + v / 10 % 10);
    p[1] = (char)('0' + v % 10);
    return p + 2;
}

static char *put4(char *p, int v)
{
    p[0] = (char)('0' + v / 1000 % 10);
    p[1] = (char)('0' + v / 100 % 10);
    p[2] = (char)('0' + v / 10 % 10);
    p[3] = (char)('0' + v % 10);
    return p + 4;
}

static char *put3(char *p, const char *name)
{
    memcpy(p, name, 3);
    return p + 3;
}

size_t hy_httpdate_format(int64_t t, char *out)
{
    /* one remembered result: a keep-alive client fetching one file asks for the same Last-Modified again and
     * again (~350 instructions a request saved); the process is single-threaded */
    static int64_t last_t = INT64_MIN;
    static char last[HY_HTTPDATE_LEN + 1];
    if (t == last_t) {
        memcpy(out, last, sizeof(last));
        return HY_HTTPDATE_LEN;
    }
    int64_t asked = t;
    if (t < MIN_TIME)
        t = MIN_TIME;
    if (t > MAX_TIME)
        t = MAX_TIME;
    int y, mo, d, h, mi, s, wd;
    hy_time_to_civil(t, &y, &mo, &d, &h, &mi, &s, &wd);
    char *p = put3(out, hy_wday_names[wd]);
    *p++ = ',';
    *p++ = ' ';
    p = put2(p, d);
    *p++ = ' ';
    p = put3(p, hy_month_names[mo - 1]);
    *p++ = ' ';
    p = put4(p, y);
    *p++ = ' ';
    p = put2(p, h);
    *p++ = ':';
    p = put2(p, mi);
    *p++ = ':';
    p = put2(p, s);
    memcpy(p, " GMT", 5);
    memcpy(last, out, sizeof(last));
    last_t = asked;
    return HY_HTTPDATE_LEN;
}

/* ---- parsing ---- */

typedef struct cursor {
    const char *p, *end;
} cursor_t;

static bool at_end(const cursor_t *c)
{
    return c->p >= c->end;
}

static bool take_char(cursor_t *c, char ch)
{
    if (at_end(c) || *c->p != ch)
        return false;
    c->p++;
    return true;
}

static bool is_digit(char ch)
{
    return ch >= '0' && ch <= '9';
}

static bool is_alpha(char ch)
{
    return (ch >= 'a' && ch <= 'z') || (ch >= 'A' && ch <= 'Z');
}

/* exactly n digits */
static bool take_digits(cursor_t *c, int n, int *out)
{
    if (c->end - c->p < n)
        return false;
    int v = 0;
    for (int i = 0; i < n; i++) {
        if (!is_digit(c->p[i]))
            return false;
        v = v * 10 + (c->p[i] - '0');
    }
    c->p += n;
    *out = v;
    return true;
}

/* The month whose three-letter name starts at p (1-12), 0 for none; p has 3 bytes. */
static int month_at(const char *p)
{
    for (int i = 0; i < 12; i++)
        if (memcmp(p, hy_month_names[i], 3) == 0)
            return i + 1;
    return 0;
}

static bool take_month(cursor_t *c, int *mon)
{
    if (c->end - c->p < 3 || (*mon = month_at(c->p)) == 0)
        return false;
    c->p += 3;
    return true;
}

/* "hh:mm:ss" */
static bool take_time(cursor_t *c, int *h, int *mi, int *s)
{
    return take_digits(c, 2, h) && take_char(c, ':') && take_digits(c, 2, mi) && take_char(c, ':') &&
           take_digits(c, 2, s);
}

static bool ws(char ch)
{
    return ch == ' ' || ch == '\t';
}

/* After the date: optional " GMT" (any case), then end of input, whitespace or ';'. */
static bool take_tail(cursor_t *c, bool zone)
{
    if (zone) {
        const char *save = c->p;
        while (!at_end(c) && *c->p == ' ')
            c->p++;
        if (c->end - c->p >= 3 && (c->p[0] | 0x20) == 'g' && (c->p[1] | 0x20) == 'm' && (c->p[2] | 0x20) == 't')
            c->p += 3;
        else
            c->p = save;
    }
    return at_end(c) || ws(*c->p) || *c->p == ';' || *c->p == '\r' || *c->p == '\n';
}

static int days_in_month(int y, int m)
{
    static const int dm[12] = {31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31};
    if (m == 2 && ((y % 4 == 0 && y % 100 != 0) || y % 400 == 0))
        return 29;
    return dm[m - 1];
}

/* The parsed fields as a time, -1 for a date that does not exist or comes before 1970. */
static int64_t civil_time(int year, int mon, int day, int h, int mi, int s)
{
    if (year < 1970 || day < 1 || day > days_in_month(year, mon) || h > 23 || mi > 59 || s > 59)
        return -1;
    return hy_days_from_civil(year, mon, day) * 86400 + h * 3600 + mi * 60 + s;
}

static int two(const char *p)
{
    return is_digit(p[0]) && is_digit(p[1]) ? (p[0] - '0') * 10 + (p[1] - '0') : -1;
}

/* The form nearly every sender uses, "Sun, 06 Nov 1994 08:49:37 GMT" with nothing around it, at fixed offsets;
 * -2 for anything else (the general parser below decides), so both give the same answer for every input. */
static int64_t parse_fixdate(const char *p, size_t n)
{
    if (n != 29 || !is_alpha(p[0]) || !is_alpha(p[1]) || !is_alpha(p[2]) || p[3] != ',' || p[4] != ' ' ||
        p[7] != ' ' || p[11] != ' ' || p[16] != ' ' || p[19] != ':' || p[22] != ':' || p[25] != ' ' ||
        (p[26] | 0x20) != 'g' || (p[27] | 0x20) != 'm' || (p[28] | 0x20) != 't')
        return -2;
    int day = two(p + 5), y1 = two(p + 12), y2 = two(p + 14), h = two(p + 17), mi = two(p + 20), s = two(p + 23);
    int mon = month_at(p + 8);
    if (day < 0 || y1 < 0 || y2 < 0 || h < 0 || mi < 0 || s < 0 || mon == 0)
        return -2;
    return civil_time(y1 * 100 + y2, mon, day, h, mi, s);
}

int64_t hy_httpdate_parse(const char *p, size_t n)
{
    if (p == NULL)
        return -1;
    int64_t fast = parse_fixdate(p, n);
    if (fast != -2)
        return fast;
    cursor_t c = {p, p + n};
    while (!at_end(&c) && ws(*c.p))
        c.p++;
    /* weekday name: letters, not checked against the date (nginx doesn't either) */
    const char *wd = c.p;
    while (!at_end(&c) && is_alpha(*c.p))
        c.p++;
    size_t wdlen = (size_t)(c.p - wd);
    if (wdlen < 3 || at_end(&c))
        return -1;

    int year, mon, day, h, mi, s;
    if (*c.p == ',') {
        c.p++;
        while (!at_end(&c) && *c.p == ' ')
            c.p++;
        if (!take_digits(&c, 2, &day))
            return -1;
        if (take_char(&c, ' ')) {
            /* IMF-fixdate: "06 Nov 1994 08:49:37 GMT" */
            if (!take_month(&c, &mon) || !take_char(&c, ' ') || !take_digits(&c, 4, &year))
                return -1;
        } else if (take_char(&c, '-')) {
            /* RFC 850: "06-Nov-94 08:49:37 GMT" (a 4-digit year is tolerated) */
            if (!take_month(&c, &mon) || !take_char(&c, '-'))
                return -1;
            if (c.end - c.p >= 4 && is_digit(c.p[2]) && is_digit(c.p[3])) {
                if (!take_digits(&c, 4, &year))
                    return -1;
            } else {
                if (!take_digits(&c, 2, &year))
                    return -1;
                year += year < 70 ? 2000 : 1900;
            }
        } else {
            return -1;
        }
        if (!take_char(&c, ' ') || !take_time(&c, &h, &mi, &s) || !take_tail(&c, true))
            return -1;
    } else if (*c.p == ' ' && wdlen == 3) {
        /* asctime: "Nov  6 08:49:37 1994" */
        c.p++;
        if (!take_month(&c, &mon) || !take_char(&c, ' '))
            return -1;
        take_char(&c, ' ');
        if (at_end(&c) || !is_digit(*c.p))
            return -1;
        day = *c.p++ - '0';
        if (!at_end(&c) && is_digit(*c.p))
            day = day * 10 + (*c.p++ - '0');
        if (!take_char(&c, ' ') || !take_time(&c, &h, &mi, &s) || !take_char(&c, ' ') ||
            !take_digits(&c, 4, &year) || !take_tail(&c, false))
            return -1;
    } else {
        return -1;
    }

    return civil_time(year, mon, day, h, mi, s);
}

/* ---- local time (log formats) ---- */

static void local_tm(int64_t t, struct tm *tm)
{
    if (t < MIN_TIME + 86400)
        t = MIN_TIME + 86400;
    if (t > MAX_TIME - 86400)
        t = MAX_TIME - 86400;
    time_t tt = (time_t)t;
    if (localtime_r(&tt, tm) == NULL)
        memset(tm, 0, sizeof(*tm));
}

size_t hy_logdate_format(int64_t t, char *out)
{
    struct tm tm;
    local_tm(t, &tm);
    char *p = put4(out, tm.tm_year + 1900);
    *p++ = '/';
    p = put2(p, tm.tm_mon + 1);
    *p++ = '/';
    p = put2(p, tm.tm_mday);
    *p++ = ' ';
    p = put2(p, tm.tm_hour);
    *p++ = ':';
    p = put2(p, tm.tm_min);
    *p++ = ':';
    p = put2(p, tm.tm_sec);
    *p = '\0';
    return HY_LOGDATE_LEN;
}

size_t hy_timelocal_format(int64_t t, char *out)
{
    struct tm tm;
    local_tm(t, &tm);
    char *p = put2(out, tm.tm_mday);
    *p++ = '/';
    p = put3(p, hy_month_names[tm.tm_mon >= 0 && tm.tm_mon < 12 ? tm.tm_mon : 0]);
    *p++ = '/';
    p = put4(p, tm.tm_year + 1900);
    *p++ = ':';
    p = put2(p, tm.tm_hour);
    *p++ = ':';
    p = put2(p, tm.tm_min);
    *p++ = ':';
    p = put2(p, tm.tm_sec);
    *p++ = ' ';
    long off = tm.tm_gmtoff / 60; /* minutes east of UTC */
    *p++ = off < 0 ? '-' : '+';
    if (off < 0)
        off = -off;
    p = put2(p, (int)(off / 60 % 100));
    p = put2(p, (int)(off % 60));
    *p = '\0';
    return HY_TIMELOCAL_LEN;
}
