/* log_test.c — the error log (core/log.c): level names, targets chosen by level and scope, the line's prefix
 * (*connection id), control characters escaped and long lines cut without a broken escape, hy_log_stderr's
 * copy to the log, reopening (a rotated file is created again, a vanished directory is an alert on the old
 * file, the owner and mode a root master gives the workers' user). */
#include <fcntl.h>
#include <stdlib.h>
#include <unistd.h>
#include <sys/stat.h>
#include "../harness.h"
#include "core/log.h"

static char dir[64];

static char *slurp(const char *path)
{
    static char buf[65536];
    int fd = open(path, O_RDONLY);
    if (fd < 0)
        return NULL;
    ssize_t n = read(fd, buf, sizeof(buf) - 1);
    close(fd);
    buf[n < 0 ? 0 : n] = '\0';
    return buf;
}

static void test_levels(void)
{
    is_int(hy_log_level_parse("warn", 4), HY_LOG_WARN);
    is_int(hy_log_level_parse("debug", 5), HY_LOG_DEBUG);
    is_int(hy_log_level_parse("emerg", 5), HY_LOG_EMERG);
    is_int(hy_log_level_parse("warning", 7), -1);
    is_int(hy_log_level_parse("err", 2), -1);
    is_str(hy_log_level_name(HY_LOG_ERR), "error");
    is_str(hy_log_level_name(HY_LOG_INFO), "info");
    is_str(hy_log_level_name(0), "?");
    is_str(hy_log_level_name(HY_LOG_DEBUG + 1), "?");
    hy_log_set_targets(NULL, 0);
    is_int(hy_log_max_level, HY_LOG_NOTICE);
}

static void test_targets(void)
{
    char a[128], b[128];
    snprintf(a, sizeof(a), "%s/a.log", dir);
    snprintf(b, sizeof(b), "%s/b.log", dir);
    hy_log_target_t t[2] = {
        {.path = a, .fd = hy_log_open_file(a), .level = HY_LOG_WARN, .scope = 0},
        {.path = b, .fd = hy_log_open_file(b), .level = HY_LOG_INFO, .scope = 3},
    };
    ok(t[0].fd >= 0 && t[1].fd >= 0);
    hy_log_set_targets(t, 2);
    is_int(hy_log_max_level, HY_LOG_INFO);
    hy_log(HY_LOG_ERR, "main %d", 1);
    hy_log(HY_LOG_INFO, "main info, below warn");
    hy_log_conn(HY_LOG_WARN, 42, "with a connection");
    hy_log_scoped(3, HY_LOG_INFO, 7, "scoped %s", "info");
    hy_log_scoped(3, HY_LOG_DEBUG, 7, "scoped debug, above the max level");
    hy_log_scoped(2, HY_LOG_EMERG, 0, "another scope: nobody");
    char *s = slurp(a);
    ok(s && strstr(s, "[error] ") && strstr(s, ": main 1\n"));
    ok(s && strstr(s, "main info") == NULL);
    ok(s && strstr(s, "[warn] ") && strstr(s, ": *42 with a connection\n"));
    ok(s && strstr(s, "scoped") == NULL && strstr(s, "nobody") == NULL);
    s = slurp(b);
    ok(s && strstr(s, "[info] ") && strstr(s, ": *7 scoped info\n"));
    ok(s && strstr(s, "scoped debug") == NULL && strstr(s, "main") == NULL);
    hy_log_set_targets(NULL, 0);
    close(t[0].fd);
    close(t[1].fd);
}

static void test_escapes_and_length(void)
{
    char a[128];
    snprintf(a, sizeof(a), "%s/esc.log", dir);
    unlink(a);
    hy_log_target_t t = {.path = a, .fd = hy_log_open_file(a), .level = HY_LOG_DEBUG};
    hy_log_set_targets(&t, 1);
    hy_log(HY_LOG_ERR, "a\nb\rc\x7f" "d\x01");
    char *s = slurp(a);
    ok(s && strstr(s, ": a\\x0ab\\x0dc\\x7fd\\x01\n"));
    /* a line far longer than a log line: cut, one newline at its end */
    char *big = malloc(10000);
    memset(big, 'x', 9999);
    big[9999] = '\0';
    unlink(a);
    close(t.fd);
    t.fd = hy_log_open_file(a);
    hy_log(HY_LOG_ERR, "%s", big);
    s = slurp(a);
    ok(s && strlen(s) == 4095 && s[4094] == '\n' && strchr(s, '\n') == s + 4094);
    /* control characters to the end: escapes are never cut in half */
    memset(big, '\n', 3000);
    big[3000] = '\0';
    unlink(a);
    close(t.fd);
    t.fd = hy_log_open_file(a);
    hy_log(HY_LOG_ERR, "%s", big);
    s = slurp(a);
    size_t len = s ? strlen(s) : 0;
    ok(len > 1000 && len <= 4095 && s[len - 1] == '\n');
    char *last = s ? strrchr(s, '\\') : NULL;
    ok(last && s + len - 1 - last == 4); /* ...\x0a then the newline */
    free(big);
    hy_log_set_targets(NULL, 0);
    close(t.fd);
}

static void test_stderr_copy(void)
{
    char a[128], e[128];
    snprintf(a, sizeof(a), "%s/copy.log", dir);
    snprintf(e, sizeof(e), "%s/stderr.txt", dir);
    int saved = dup(2);
    int efd = open(e, O_WRONLY | O_CREAT | O_TRUNC, 0644);
    dup2(efd, 2);
    close(efd);
    hy_log_target_t t = {.path = a, .fd = hy_log_open_file(a), .level = HY_LOG_NOTICE};
    hy_log_set_targets(&t, 1);
    hy_log_stderr(HY_LOG_ERR, "to both %s", "places\n");
    hy_log_quiet = true;
    hy_log_stderr(HY_LOG_NOTICE, "quiet notice");
    hy_log_stderr(HY_LOG_WARN, "quiet warn");
    hy_log_quiet = false;
    /* an error_log on stderr: hy_log_stderr's own line is the only copy */
    hy_log_target_t t2[2] = {t, {.path = "stderr", .fd = hy_log_open_file("stderr"), .level = HY_LOG_NOTICE}};
    hy_log_set_targets(t2, 2);
    hy_log_stderr(HY_LOG_ERR, "once on stderr");
    hy_log_set_targets(NULL, 0);
    hy_log(HY_LOG_ERR, "no target %d", 5);
    hy_log_quiet = true;
    hy_log(HY_LOG_NOTICE, "no target, quiet");
    hy_log_quiet = false;
    dup2(saved, 2);
    close(saved);
    close(t2[1].fd);
    close(t.fd);
    char *s = slurp(e);
    ok(s && strstr(s, "hayate: [error] to both places\\x0a\n"));
    ok(s && strstr(s, "quiet notice") == NULL && strstr(s, "hayate: [warn] quiet warn\n"));
    ok(s && strstr(s, "hayate: [error] once on stderr\n") && strstr(strstr(s, "once on stderr") + 1, "once on stderr") == NULL);
    ok(s && strstr(s, "hayate: [error] no target 5\n") && strstr(s, "no target, quiet") == NULL);
    s = slurp(a);
    ok(s && strstr(s, "[error] ") && strstr(s, ": to both places\\x0a\n"));
    ok(s && strstr(s, "quiet notice") && strstr(s, "quiet warn")); /* the log has them, stderr does not */
    ok(s && strstr(s, "once on stderr") == NULL); /* with an error_log on stderr, the message is not logged again */
}

static void test_reopen(void)
{
    char sub[128], a[256], moved[512];
    snprintf(sub, sizeof(sub), "%s/logs", dir);
    mkdir(sub, 0755);
    snprintf(a, sizeof(a), "%s/r.log", sub);
    snprintf(moved, sizeof(moved), "%s/r.log.1", sub);
    hy_log_target_t t[3] = {
        {.path = a, .fd = hy_log_open_file(a), .level = HY_LOG_NOTICE},
        {.path = "stderr", .fd = -1, .level = HY_LOG_NOTICE},
        {.path = "syslog:server=127.0.0.1", .fd = -1, .level = HY_LOG_NOTICE, .syslog = (hy_syslog_peer_t *)1},
    };
    hy_log_set_targets(t, 1);
    hy_log(HY_LOG_NOTICE, "before");
    ok(rename(a, moved) == 0);
    hy_log_set_targets(t, 3); /* reopen skips stderr and syslog targets */
    hy_log_reopen();
    hy_log_set_targets(t, 1);
    hy_log(HY_LOG_NOTICE, "after");
    char *s = slurp(moved);
    ok(s && strstr(s, "before") && strstr(s, "after") == NULL);
    s = slurp(a);
    ok(s && strstr(s, "after") && strstr(s, "before") == NULL);
    /* the directory vanished: the old file keeps the fd, and says why */
    ok(rename(a, moved) == 0);
    char gone[256];
    snprintf(gone, sizeof(gone), "%s.gone", sub);
    ok(rename(sub, gone) == 0);
    hy_log_reopen();
    snprintf(moved, sizeof(moved), "%s/r.log.1", gone);
    s = slurp(moved);
    ok(s && strstr(s, "[alert] ") && strstr(s, "open() \"") && strstr(s, "r.log\" failed (2: No such file or directory)"));
    hy_log_set_targets(NULL, 0);
    close(t[0].fd);
    /* reopened by a root master: the workers' user becomes the owner and may read and write it */
    if (geteuid() == 0) {
        char o[256];
        snprintf(o, sizeof(o), "%s/owned.log", dir);
        int fd = open(o, O_WRONLY | O_CREAT, 0040);
        fchmod(fd, 0040);
        close(fd);
        hy_log_owner_uid = 65534;
        fd = hy_log_reopen_file(o);
        ok(fd >= 0);
        struct stat st;
        ok(stat(o, &st) == 0 && st.st_uid == 65534 && (st.st_mode & 0777) == 0640);
        close(fd);
        fd = hy_log_reopen_file(o); /* already rw for the owner: the mode stays */
        ok(stat(o, &st) == 0 && (st.st_mode & 0777) == 0640);
        close(fd);
        fd = hy_log_reopen_file("stderr"); /* never chowned */
        ok(fd >= 0);
        close(fd);
        hy_log_owner_uid = -1;
    }
}

int main(void)
{
    snprintf(dir, sizeof(dir), "/tmp/hy-log-test-XXXXXX");
    if (mkdtemp(dir) == NULL)
        return 1;
    subtest("levels", test_levels);
    subtest("targets", test_targets);
    subtest("escapes and length", test_escapes_and_length);
    subtest("stderr copy", test_stderr_copy);
    subtest("reopen", test_reopen);
    char cmd[128];
    snprintf(cmd, sizeof(cmd), "rm -rf %s", dir);
    (void)!system(cmd);
    return done_testing();
}
