/* harness.h — a tiny TAP-style unit-test harness (picotest's model), header-only.
 * Each test file defines main() { subtest("name", fn); ...; return done_testing(); }.
 * Prints "ok N - ..." / "not ok N - ... at file:line" and a closing "N passed, N failed" line. */
#ifndef HY_TESTS_HARNESS_H
#define HY_TESTS_HARNESS_H

#include <stdio.h>
#include <string.h>
#include <stdint.h>
#include <inttypes.h>

static int harness_passed, harness_failed;
static const char *harness_sub = "";

static inline int harness_ok(int cond, const char *expr, const char *file, int line)
{
    if (cond) {
        harness_passed++;
    } else {
        harness_failed++;
        printf("not ok - %s: %s at %s:%d\n", harness_sub, expr, file, line);
    }
    return cond;
}

static inline int harness_is_int(int64_t got, int64_t want, const char *expr, const char *file, int line)
{
    if (got == want) {
        harness_passed++;
        return 1;
    }
    harness_failed++;
    printf("not ok - %s: %s at %s:%d\n#   got: %" PRId64 "\n#  want: %" PRId64 "\n", harness_sub, expr, file, line, got,
           want);
    return 0;
}

static inline int harness_is_mem(const char *got, size_t glen, const char *want, size_t wlen, const char *expr,
                                 const char *file, int line)
{
    if (got != NULL && glen == wlen && memcmp(got, want, wlen) == 0) {
        harness_passed++;
        return 1;
    }
    harness_failed++;
    printf("not ok - %s: %s at %s:%d\n#   got: \"%.*s\"\n#  want: \"%.*s\"\n", harness_sub, expr, file, line,
           got ? (int)glen : 6, got ? got : "(null)", (int)wlen, want);
    return 0;
}

#define ok(c) harness_ok(!!(c), #c, __FILE__, __LINE__)
#define is_int(a, b) harness_is_int((int64_t)(a), (int64_t)(b), #a " == " #b, __FILE__, __LINE__)
static inline int harness_is_cstr(const char *got, const char *want, const char *expr, const char *file, int line)
{
    return harness_is_mem(got, got ? strlen(got) : 0, want, strlen(want), expr, file, line);
}
#define is_str(a, b) harness_is_cstr((a), (b), #a " eq " #b, __FILE__, __LINE__)
/* compare a (ptr,len) with a C string */
#define is_strn(p, n, b) harness_is_mem((p), (n), (b), strlen(b), #p " eq " #b, __FILE__, __LINE__)

static inline void subtest(const char *name, void (*fn)(void))
{
    int before = harness_failed;
    harness_sub = name;
    fn();
    printf("%s - %s\n", harness_failed == before ? "ok" : "not ok", name);
}

static inline int done_testing(void)
{
    printf("%d passed, %d failed\n", harness_passed, harness_failed);
    return harness_failed ? 1 : 0;
}

#endif
