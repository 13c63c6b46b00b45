/* env_test.c — nginx's `env` (hy_core_env_apply): only TZ and the named variables survive, NAME=value sets one,
 * a named variable that is not set stays unset. Configurations go through the real loader (hy_cycle_load). */
#include <stdlib.h>
#include <time.h>
#include <unistd.h>
#include "../harness.h"
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

static void test_named_only(void)
{
    setenv("HY_KEEP", "kept", 1);
    setenv("HY_DROP", "dropped", 1);
    setenv("HY_OVERRIDE", "old", 1);
    setenv("TZ", "XST-9", 1);
    unsetenv("HY_ABSENT");
    hy_cycle_t *c = load("env HY_KEEP;\nenv HY_SET=by-conf;\nenv HY_ABSENT;\nenv HY_OVERRIDE=new;");
    ok(c != NULL);
    if (c == NULL)
        return;
    hy_core_env_apply(hy_core_conf(c));
    is_str(getenv("HY_KEEP"), "kept");
    is_str(getenv("HY_SET"), "by-conf");
    is_str(getenv("HY_OVERRIDE"), "new");
    is_str(getenv("TZ"), "XST-9"); /* kept without being named */
    ok(getenv("HY_DROP") == NULL);
    ok(getenv("HY_ABSENT") == NULL);
    ok(getenv("PATH") == NULL);
    hy_cycle_unref(c);
}

static void test_no_env_directive(void)
{
    setenv("HY_DROP", "dropped", 1);
    setenv("TZ", "XST-3", 1);
    hy_cycle_t *c = load("");
    ok(c != NULL);
    if (c == NULL)
        return;
    hy_core_env_apply(hy_core_conf(c));
    ok(getenv("HY_DROP") == NULL);
    is_str(getenv("TZ"), "XST-3");
    hy_cycle_unref(c);
}

static void test_tz_set_by_conf(void)
{
    setenv("TZ", "XST-3", 1);
    hy_cycle_t *c = load("env TZ=YST-5;");
    ok(c != NULL);
    if (c == NULL)
        return;
    hy_core_env_apply(hy_core_conf(c));
    is_str(getenv("TZ"), "YST-5");
    time_t t = 0;
    struct tm tm;
    localtime_r(&t, &tm);
    is_int(tm.tm_gmtoff, 5 * 3600); /* tzset() ran: local time follows the new TZ */
    hy_cycle_unref(c);
}

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
