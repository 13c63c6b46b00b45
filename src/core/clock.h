/* clock.h — the cached clock: read once per loop iteration; HTTP and log date strings cached per second. */
#ifndef HY_CORE_CLOCK_H
#define HY_CORE_CLOCK_H

#include <stdint.h>

/** Refresh the cache (the loop calls it after every epoll_wait). */
void hy_clock_update(void);
/** Refresh only if never set (for logging outside the loop). */
void hy_clock_update_if_stale(void);
/** Monotonic milliseconds, as of the last update. */
uint64_t hy_clock_now_ms(void);
/** Wall-clock seconds / milliseconds since the epoch, as of the last update. */
int64_t hy_clock_time(void);
int64_t hy_clock_time_ms(void);
/** "Mon, 30 Nov 2026 10:00:00 GMT" for the current second (29 chars, NUL-terminated, static). */
const char *hy_clock_http_date(void);
/** "2026/11/30 10:00:00" local time for the current second (static). */
const char *hy_clock_log_date(void);

#endif
