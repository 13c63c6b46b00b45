/* regex_jit.c — cost of a regex match through hy_regex_exec with and without PCRE2's JIT, and of compiling.
 * Build and run (after `make`):
 *   cc -O2 -Isrc -D_GNU_SOURCE -o build/regex_jit bench/regex_jit.c build/libhayate.a $(pkg-config --libs libpcre2-8) && build/regex_jit
 * Prints ns per match for typical location / server_name / rewrite patterns, and µs per compile. */
#include <stdio.h>
#include <string.h>
#include <time.h>
#include "core/regex.h"

static double now_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec * 1e9 + (double)ts.tv_nsec;
}

static const struct {
    const char *pattern, *subject;
    bool caseless;
} cases[] = {
    {"\\.(gif|jpg|jpeg|png|css|js|ico|svg|woff2?)$", "/static/img/gallery/2026/11/some-long-photo-name.jpeg", true},
    {"\\.(gif|jpg|jpeg|png|css|js|ico|svg|woff2?)$", "/static/docs/index.html", true},
    {"^/api/v(\\d+)/users/(\\d+)/(?<action>[a-z]+)$", "/api/v2/users/123456/profile", false},
    {"^(?<sub>[a-z0-9-]+)\\.example\\.com$", "www-eu-1.example.com", true},
    {"^/old/(.*)$", "/old/a/b/c/d/e/f/g/h/i/j/k/l/m/n/o/p", false},
};

int main(void)
{
    enum { N = 1000000, C = 2000 };
    hy_pool_t *pool = hy_pool_create(1 << 16);
    hy_regex_caps_t caps = {.pool = pool};
    char err[HY_REGEX_ERR_MAX];
    printf("%-48s %10s %10s\n", "pattern / subject", "interp ns", "jit ns");
    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        double ns[2];
        for (int jit = 0; jit < 2; jit++) {
            hy_regex_jit = jit;
            hy_str_t pat = {(char *)cases[i].pattern, strlen(cases[i].pattern)};
            hy_regex_t *re = hy_regex_compile(pool, pat, cases[i].caseless, err);
            hy_str_t subj = {(char *)cases[i].subject, strlen(cases[i].subject)};
            int matches = 0;
            double t0 = now_ns();
            for (int k = 0; k < N; k++)
                matches += hy_regex_exec(re, subj, &caps) > 0;
            ns[jit] = (now_ns() - t0) / N;
            if (matches != 0 && matches != N)
                return 1;
        }
        printf("%-48.48s %10.1f %10.1f\n", cases[i].subject, ns[0], ns[1]);
    }
    for (int jit = 0; jit < 2; jit++) {
        hy_regex_jit = jit;
        hy_str_t pat = {(char *)cases[2].pattern, strlen(cases[2].pattern)};
        double t0 = now_ns();
        for (int k = 0; k < C; k++)
            hy_regex_compile(pool, pat, false, err);
        printf("compile %s: %.1f us\n", jit ? "with JIT" : "interpreted", (now_ns() - t0) / C / 1000);
        hy_pool_reset(pool);
    }
    hy_pool_destroy(pool);
    return 0;
}
