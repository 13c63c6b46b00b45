/* perms.c — permission checks for the workers' user (see perms.h). */
#include <errno.h>
#include <stdarg.h>
#include <grp.h>
#include <pwd.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/stat.h>
#include "perms.h"
#include "../http/log_access.h"
#include "core_conf.h"
#include "limits.h"
#include "../core/log.h"
#include "../http/core.h"

#define MAX_GROUPS 256
#define MAX_SEEN 256

typedef struct who {
    uid_t uid;
    gid_t groups[MAX_GROUPS];
    int ngroups;
    char name[64];
} who_t;

typedef struct checker {
    who_t who;
    hy_perms_report_fn report;
    void *ctx;
    int problems;
    char *seen[MAX_SEEN]; /* paths already checked */
    size_t nseen;
} checker_t;

/* Who the workers will be; false when that is root (nothing to check). */
static bool worker_identity(hy_core_conf_t *core, bool single, who_t *w)
{
    if (geteuid() == 0 && !single) {
        int uid, gid;
        if (!hy_limits_worker_ids(core, &uid, &gid))
            return false; /* an unknown user fails the configuration elsewhere */
        const char *user = core->user.ptr ? core->user.ptr : "nobody";
        w->uid = (uid_t)uid;
        snprintf(w->name, sizeof(w->name), "%s", user);
        w->ngroups = MAX_GROUPS;
        if (getgrouplist(user, (gid_t)gid, w->groups, &w->ngroups) < 0)
            w->ngroups = 0;
        if (w->ngroups < MAX_GROUPS) /* the primary group from `user u g` may not be in u's list */
            w->groups[w->ngroups++] = (gid_t)gid;
    } else {
        w->uid = geteuid();
        struct passwd *pw = getpwuid(w->uid);
        snprintf(w->name, sizeof(w->name), "%s", pw ? pw->pw_name : "?");
        w->ngroups = getgroups(MAX_GROUPS - 1, w->groups);
        if (w->ngroups < 0)
            w->ngroups = 0;
        w->groups[w->ngroups++] = getegid();
    }
    return w->uid != 0;
}

/* Permission bit `bit` (4 r, 2 w, 1 x) for `w` on `st`, as the kernel decides it (owner, else group, else other). */
static bool may(const who_t *w, const struct stat *st, unsigned bit)
{
    if (st->st_uid == w->uid)
        return (st->st_mode >> 6) & bit;
    for (int i = 0; i < w->ngroups; i++)
        if (st->st_gid == w->groups[i])
            return (st->st_mode >> 3) & bit;
    return st->st_mode & bit;
}

static void describe(const struct stat *st, char *buf, size_t size)
{
    static const char bits[] = "rwxrwxrwx";
    char mode[11];
    mode[0] = S_ISDIR(st->st_mode) ? 'd' : '-';
    for (int i = 0; i < 9; i++)
        mode[i + 1] = (st->st_mode & (0400u >> i)) ? bits[i] : '-';
    mode[10] = '\0';
    struct passwd *pw = getpwuid(st->st_uid);
    struct group *gr = getgrgid(st->st_gid);
    char u[16], g[16];
    snprintf(u, sizeof(u), "%u", (unsigned)st->st_uid);
    snprintf(g, sizeof(g), "%u", (unsigned)st->st_gid);
    snprintf(buf, size, "%s %s:%s", mode, pw ? pw->pw_name : u, gr ? gr->gr_name : g);
}

static void problem(checker_t *c, const char *fmt, ...) HY_PRINTF(2, 3);
static void problem(checker_t *c, const char *fmt, ...)
{
    char msg[1024];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof(msg), fmt, ap);
    va_end(ap);
    c->report(c->ctx, msg);
    c->problems++;
}

static bool seen(checker_t *c, const char *path)
{
    for (size_t i = 0; i < c->nseen; i++)
        if (strcmp(c->seen[i], path) == 0)
            return true;
    if (c->nseen < MAX_SEEN)
        c->seen[c->nseen++] = hy_strndup(path, strlen(path));
    return false;
}

/* Search permission on every directory from "/" down to `dir` (included when `self`), then `want` on `dir`.
 * `what` names it for the message ("document root", "log file"). */
static void check_path(checker_t *c, const char *what, const char *shown, const char *dir, unsigned want)
{
    char path[4096];
    size_t len = strlen(dir);
    if (len == 0 || dir[0] != '/' || len >= sizeof(path))
        return;
    memcpy(path, dir, len + 1);
    while (len > 1 && path[len - 1] == '/')
        path[--len] = '\0';
    for (size_t i = 1; i <= len; i++) {
        if (i < len && path[i] != '/')
            continue;
        char save = path[i];
        path[i] = '\0';
        struct stat st;
        char d[128];
        if (stat(path, &st) != 0) {
            if (errno == ENOENT && want) /* a missing log directory is created at start */
                problem(c, "the %s \"%s\" does not exist (\"%s\" is missing)", what, shown, path);
            path[i] = save;
            return;
        }
        bool last = i == len;
        if (S_ISDIR(st.st_mode) && !may(&c->who, &st, 1)) {
            describe(&st, d, sizeof(d));
            problem(c,
                    "the workers' user \"%s\" cannot reach the %s \"%s\": no search (x) permission on \"%s\" "
                    "(%s); `chmod o+x %s`, move it, or set `user` to one who can",
                    c->who.name, what, shown, path, d, path);
            return;
        }
        if (last && want && !may(&c->who, &st, want)) {
            describe(&st, d, sizeof(d));
            problem(c,
                    "the workers' user \"%s\" cannot %s the %s \"%s\" (%s); `chmod o+%s %s`, or set `user` to "
                    "one who can",
                    c->who.name, want == 4 ? "read" : "write", what, shown, d, want == 4 ? "r" : "w", path);
            return;
        }
        path[i] = save;
    }
}

static void check_locations(checker_t *c, hy_http_loc_conf_t *lc)
{
    if (lc == NULL)
        return;
    hy_str_t r = lc->alias.len ? lc->alias : lc->root;
    if (r.len && lc->root_cv == NULL && r.len < 4096) {
        char path[4096];
        memcpy(path, r.ptr, r.len);
        path[r.len] = '\0';
        if (!seen(c, path))
            check_path(c, "document root", path, path, 4);
    }
    if (lc->locations) {
        hy_http_loc_conf_t **l = lc->locations->elts;
        for (size_t i = 0; i < lc->locations->nelts; i++)
            check_locations(c, l[i]);
    }
}

/* A log file's directory must let the workers' user reach it (reopen after USR1 happens in the workers too). */
static void check_log(checker_t *c, const char *what, const char *path)
{
    const char *slash = path ? strrchr(path, '/') : NULL;
    if (slash == NULL || strcmp(path, "stderr") == 0)
        return;
    char dir[4096];
    size_t dl = (size_t)(slash - path);
    if (dl == 0 || dl >= sizeof(dir))
        return;
    memcpy(dir, path, dl);
    dir[dl] = '\0';
    if (!seen(c, path))
        check_path(c, what, path, dir, 0);
}

int hy_perms_check(hy_cycle_t *cycle, bool single, hy_perms_report_fn report, void *ctx)
{
    checker_t *c = hy_calloc(sizeof(*c));
    c->report = report;
    c->ctx = ctx;
    if (worker_identity(hy_core_conf(cycle), single, &c->who)) {
        hy_http_main_conf_t *m = hy_http_main(cycle);
        if (m) {
            hy_http_srv_conf_t **s = m->servers->elts;
            for (size_t i = 0; i < m->servers->nelts; i++)
                check_locations(c, s[i]->loc);
        }
        hy_log_target_t *t = cycle->error_logs ? cycle->error_logs->elts : NULL;
        for (size_t i = 0; t && i < cycle->error_logs->nelts; i++)
            if (t[i].syslog == NULL)
                check_log(c, "log file", t[i].path);
        const char *access[64];
        size_t na = hy_http_access_log_paths(cycle, access, HY_ARRAY_SIZE(access));
        for (size_t i = 0; i < na && i < HY_ARRAY_SIZE(access); i++)
            check_log(c, "access log", access[i]);
    }
    int n = c->problems;
    for (size_t i = 0; i < c->nseen; i++)
        free(c->seen[i]);
    free(c);
    return n;
}
