/* clock.c — cached time. */
#include <time.h>
#include "clock.h"
#include "httpdate.h"

static uint64_t now_ms;
static int64_t wall_ms;
static int64_t cached_sec = -1;
static char http_date[32];
static char log_date[32];

void hy_clock_update(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC_COARSE, &ts);
    now_ms = (uint64_t)ts.tv_sec * 1000 + (uint64_t)ts.tv_nsec / 1000000;
    clock_gettime(CLOCK_REALTIME_COARSE, &ts);
    wall_ms = (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
    if (ts.tv_sec != cached_sec) {
        cached_sec = ts.tv_sec;
        hy_httpdate_format(cached_sec, http_date);
        hy_logdate_format(cached_sec, log_date);
    }
}

void hy_clock_update_if_stale(void)
{
    if (cached_sec < 0)
        hy_clock_update();
}

uint64_t hy_clock_now_ms(void)
{
    return now_ms;
}

int64_t hy_clock_time(void)
{
    return cached_sec;
}

int64_t hy_clock_time_ms(void)
{
    return wall_ms;
}

const char *hy_clock_http_date(void)
{
    return http_date;
}

const char *hy_clock_log_date(void)
{
    return log_date;
}
