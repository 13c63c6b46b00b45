/* env_test.c — nginx's `env` (hy_core_env_apply): only TZ and the named variables survive, NAME=value sets one,
 * a named variable that is not set stays unset. Configurations go through the real loader (hy_cycle_load). */
#include <stdlib.h>
#include <time.h>
#include <unistd.h>
#include <sys/wait.h>
#include "../harness.h"
#include "core/coverage.h" /* a forked child flushes its counters before _exit */
#include "process/process.h"
#include "process/core_conf.h"

static char tmpdir[64];

static hy_cycle_t *load(const char *main_directives)
{
    char path[128];
    snprintf(path, sizeof(path), "%s/env.conf", tmpdir);
    FILE *f = fopen(path, "w");
    if (f == NULL)
        return NULL;
    fprintf(f, "error_log stderr;\n%s\nevents {}\n", main_directives);
    fclose(f);
    char prefix[80];
    snprintf(prefix, sizeof(prefix), "%s/", tmpdir);
    hy_opts_t opts = {.prefix = prefix, .conf_file = path, .quiet = true, .test = true};
    return hy_cycle_load(&opts);
}

/* Each case runs in a forked child: hy_core_env_apply replaces this process's environment for good, as in a
 * worker. The child exits with 0, or the line of the first check that failed. */
#define CHECK(c)                                                                                                   \
    do {                                                                                                           \
        if (!(c))                                                                                                  \
            HY_COVERAGE_FLUSH(), _exit(__LINE__ % 250 + 1);                                                        \
    } while (0)

static int in_child(void (*fn)(void))
{
    fflush(stdout);
    fflush(stderr);
    pid_t pid = fork();
    if (pid == 0) {
        fn();
        HY_COVERAGE_FLUSH();
        _exit(0);
    }
    int st = 0;
    waitpid(pid, &st, 0);
    return WIFEXITED(st) ? WEXITSTATUS(st) : 255;
}

static bool env_is(const char *name, const char *want)
{
    const char *v = getenv(name);
    return want == NULL ? v == NULL : v != NULL && strcmp(v, want) == 0;
}

static void named_only(void)
{
    setenv("HY_KEEP", "kept", 1);
    setenv("HY_DROP", "dropped", 1);
    setenv("HY_OVERRIDE", "old", 1);
    setenv("TZ", "XST-9", 1);
    unsetenv("HY_ABSENT");
    hy_cycle_t *c = load("env HY_KEEP;\nenv HY_SET=by-conf;\nenv HY_ABSENT;\nenv HY_OVERRIDE=new;");
    CHECK(c != NULL);
    hy_core_env_apply(hy_core_conf(c));
    CHECK(env_is("HY_KEEP", "kept"));
    CHECK(env_is("HY_SET", "by-conf"));
    CHECK(env_is("HY_OVERRIDE", "new"));
    CHECK(env_is("TZ", "XST-9")); /* kept without being named */
    CHECK(env_is("HY_DROP", NULL));
    CHECK(env_is("HY_ABSENT", NULL));
    CHECK(env_is("PATH", NULL));
}

static void no_env_directive(void)
{
    setenv("HY_DROP", "dropped", 1);
    setenv("TZ", "XST-3", 1);
    setenv("NOTIFY_SOCKET", "/run/x.sock", 1);
    hy_cycle_t *c = load("");
    CHECK(c != NULL);
    hy_core_env_apply(hy_core_conf(c));
    CHECK(env_is("HY_DROP", NULL));
    CHECK(env_is("TZ", "XST-3"));
    CHECK(env_is("NOTIFY_SOCKET", "/run/x.sock")); /* hayate's own: systemd notification */
}

static void tz_set_by_conf(void)
{
    setenv("TZ", "XST-3", 1);
    hy_cycle_t *c = load("env TZ=YST-5;");
    CHECK(c != NULL);
    hy_core_env_apply(hy_core_conf(c));
    CHECK(env_is("TZ", "YST-5"));
    time_t t = 0;
    struct tm tm;
    localtime_r(&t, &tm);
    CHECK(tm.tm_gmtoff == 5 * 3600); /* tzset() ran: local time follows the new TZ */
}

static void test_named_only(void) { is_int(in_child(named_only), 0); }
static void test_no_env_directive(void) { is_int(in_child(no_env_directive), 0); }
static void test_tz_set_by_conf(void) { is_int(in_child(tz_set_by_conf), 0); }

int main(void)
{
    snprintf(tmpdir, sizeof(tmpdir), "/tmp/hy_env_test_XXXXXX");
    if (mkdtemp(tmpdir) == NULL) {
        perror("mkdtemp");
        return 1;
    }
    subtest("only TZ and named variables, NAME=value sets", test_named_only);
    subtest("no env directive: everything but TZ removed", test_no_env_directive);
    subtest("env TZ=... sets the time zone", test_tz_set_by_conf);
    char path[128];
    snprintf(path, sizeof(path), "%s/env.conf", tmpdir);
    unlink(path);
    rmdir(tmpdir);
    return done_testing();
}
