/* hayate.h — compiler attributes and tiny macros shared by every layer. */
#ifndef HY_CORE_HAYATE_H
#define HY_CORE_HAYATE_H

#include <stddef.h>
#include <stdint.h>
#include <stdbool.h>

#define HY_VERSION "0.1.0"
#define HY_NGINX_COMPAT_VERSION "1.22.1" /* the nginx whose semantics we follow; $nginx_version */

#define HY_LIKELY(x) __builtin_expect(!!(x), 1)
#define HY_UNLIKELY(x) __builtin_expect(!!(x), 0)
#define HY_NORETURN __attribute__((noreturn))
#define HY_COLD __attribute__((cold))
#define HY_PRINTF(a, b) __attribute__((format(printf, a, b)))
#define HY_ARRAY_SIZE(a) (sizeof(a) / sizeof((a)[0]))
#define HY_MIN(a, b) ((a) < (b) ? (a) : (b))
#define HY_MAX(a, b) ((a) > (b) ? (a) : (b))
#define hy_container_of(ptr, type, member) ((type *)((char *)(ptr)-offsetof(type, member)))

/** Abort with a message; used for broken invariants and OOM. Never returns. */
HY_NORETURN HY_COLD void hy_fatal(const char *fmt, ...) HY_PRINTF(1, 2);

/* Cheap invariant checks stay on in release builds (HAProxy BUG_ON). */
#define HY_ASSERT(c)                                                                                                   \
    do {                                                                                                               \
        if (HY_UNLIKELY(!(c)))                                                                                         \
            hy_fatal("assertion failed: %s (%s:%d)", #c, __FILE__, __LINE__);                                          \
    } while (0)

#endif
