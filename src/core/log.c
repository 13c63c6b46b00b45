/* log.c — error log writer. One write(2) per line, so concurrent workers never interleave within a line. */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <errno.h>
#include <pthread.h>
#include <fcntl.h>
#include <unistd.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <arpa/inet.h>
#include <netinet/in.h>
#include "log.h"
#include "clock.h"

int hy_log_max_level = HY_LOG_NOTICE;
int hy_log_owner_uid = -1, hy_log_owner_gid = -1;
bool hy_log_quiet;

static hy_log_target_t *targets; /* borrowed */
static size_t num_targets;

static const char *const level_names[] = {"", "emerg", "alert", "crit", "error", "warn", "notice", "info", "debug"};

int hy_log_level_parse(const char *name, size_t len)
{
    for (int i = 1; i <= HY_LOG_DEBUG; i++)
        if (strlen(level_names[i]) == len && memcmp(level_names[i], name, len) == 0)
            return i;
    return -1;
}

const char *hy_log_level_name(int level)
{
    return level >= 1 && level <= HY_LOG_DEBUG ? level_names[level] : "?";
}

void hy_log_set_targets(hy_log_target_t *t, size_t n)
{
    targets = t;
    num_targets = n;
    hy_log_max_level = n ? 0 : HY_LOG_NOTICE;
    for (size_t i = 0; i < n; i++)
        if (t[i].level > hy_log_max_level)
            hy_log_max_level = t[i].level;
}

int hy_log_open_file(const char *path)
{
    if (strcmp(path, "stderr") == 0)
        return dup(STDERR_FILENO);
    int fd = open(path, O_WRONLY | O_APPEND | O_CREAT | O_CLOEXEC, 0644);
    if (fd < 0)
        return -errno;
    return fd;
}

int hy_log_reopen_file(const char *path)
{
    int fd = hy_log_open_file(path);
    if (fd < 0 || hy_log_owner_uid < 0 || geteuid() != 0 || strcmp(path, "stderr") == 0)
        return fd;
    /* nginx's ngx_reopen_files(): the owner becomes the workers' user, so their own reopen succeeds; the group
     * and the other permission bits stay as logrotate's `create 0640 www-data adm` made them */
    struct stat st;
    if (fchown(fd, (uid_t)hy_log_owner_uid, (gid_t)-1) != 0)
        hy_log(HY_LOG_ALERT, "fchown(\"%s\", %d) failed (%d: %s)", path, hy_log_owner_uid, errno, strerror(errno));
    else if (fstat(fd, &st) == 0 && (st.st_mode & (S_IRUSR | S_IWUSR)) != (S_IRUSR | S_IWUSR) &&
             fchmod(fd, st.st_mode | S_IRUSR | S_IWUSR) != 0)
        hy_log(HY_LOG_ALERT, "fchmod(\"%s\") failed (%d: %s)", path, errno, strerror(errno));
    return fd;
}

void hy_log_reopen(void)
{
    for (size_t i = 0; i < num_targets; i++) {
        if (strcmp(targets[i].path, "stderr") == 0 || targets[i].syslog)
            continue;
        int fd = hy_log_reopen_file(targets[i].path);
        if (fd < 0) {
            hy_log(HY_LOG_ALERT, "open() \"%s\" failed (%d: %s)", targets[i].path, -fd, strerror(-fd));
            continue;
        }
        dup2(fd, targets[i].fd); /* keep the fd number: nothing else needs to know */
        close(fd);
    }
}

/* Escape control characters in line[from, *n) in place as "\xHH", so that no message (a decoded URI, a header a
 * client sent) can end its line early and forge another one. Truncates to cap - 1 bytes (room for the '\n'). */
static void escape_ctl(char *line, size_t from, size_t *n, size_t cap)
{
    size_t nctl = 0;
    for (size_t i = from; i < *n; i++)
        nctl += (unsigned char)line[i] < 0x20 || line[i] == 0x7f;
    if (nctl == 0)
        return;
    char tmp[4096];
    size_t len = *n - from;
    if (len > sizeof(tmp))
        len = sizeof(tmp);
    memcpy(tmp, line + from, len);
    size_t w = from;
    for (size_t i = 0; i < len; i++) {
        unsigned char c = (unsigned char)tmp[i];
        if (c >= 0x20 && c != 0x7f) {
            if (w + 1 > cap - 1)
                break;
            line[w++] = (char)c;
        } else {
            if (w + 4 > cap - 1)
                break;
            line[w++] = '\\';
            line[w++] = 'x';
            line[w++] = "0123456789abcdef"[c >> 4];
            line[w++] = "0123456789abcdef"[c & 15];
        }
    }
    *n = w;
}

static bool force_all; /* hy_log_scoped_all: the targets' levels do not filter */

/* The "PID#TID: " of every line, cached (getpid and gettid are a system call each, and a worker that logs a
 * line per request, e.g. an upstream that refuses connections, paid two per line): reset in a forked child. */
static int log_pid;
static long log_tid;

static void log_forked(void)
{
    log_pid = 0;
}

static void log_ids(void)
{
    static bool registered;
    if (!registered) {
        registered = true;
        pthread_atfork(NULL, NULL, log_forked);
    }
    log_pid = (int)getpid();
    log_tid = (long)syscall(SYS_gettid);
}

static void vlog(unsigned scope, int level, uint64_t conn_id, const char *fmt, va_list ap)
{
    char line[4096];
    size_t n = 0;
    if (num_targets == 0) {
        n = (size_t)snprintf(line, sizeof(line), "hayate: [%s] ", level_names[level]);
    } else {
        hy_clock_update_if_stale();
        if (log_pid == 0)
            log_ids();
        n = (size_t)snprintf(line, sizeof(line), "%s [%s] %d#%ld: ", hy_clock_log_date(), level_names[level],
                             log_pid, log_tid);
        if (conn_id)
            n += (size_t)snprintf(line + n, sizeof(line) - n, "*%llu ", (unsigned long long)conn_id);
    }
    size_t prefix_len = n;
    int w = vsnprintf(line + n, sizeof(line) - n - 1, fmt, ap);
    if (w < 0)
        w = 0;
    n += (size_t)w;
    if (n > sizeof(line) - 2)
        n = sizeof(line) - 2;
    escape_ctl(line, prefix_len, &n, sizeof(line) - 1);
    line[n++] = '\n';
    if (num_targets == 0) {
        if (!(hy_log_quiet && level > HY_LOG_WARN))
            (void)!write(STDERR_FILENO, line, n);
        return;
    }
    for (size_t i = 0; i < num_targets; i++) {
        if (targets[i].scope != scope || (level > targets[i].level && !force_all))
            continue;
        if (targets[i].syslog) /* the line without its newline; the message's own level is the severity */
            hy_syslog_send(targets[i].syslog, level - 1, line, n - 1);
        else
            (void)!write(targets[i].fd, line, n);
    }
}

void hy_log(int level, const char *fmt, ...)
{
    if (level > hy_log_max_level)
        return;
    va_list ap;
    va_start(ap, fmt);
    vlog(0, level, 0, fmt, ap);
    va_end(ap);
}

void hy_log_conn(int level, uint64_t conn_id, const char *fmt, ...)
{
    if (level > hy_log_max_level)
        return;
    va_list ap;
    va_start(ap, fmt);
    vlog(0, level, conn_id, fmt, ap);
    va_end(ap);
}

void hy_log_scoped(unsigned scope, int level, uint64_t conn_id, const char *fmt, ...)
{
    if (level > hy_log_max_level)
        return;
    va_list ap;
    va_start(ap, fmt);
    vlog(scope, level, conn_id, fmt, ap);
    va_end(ap);
}

void hy_log_stderr(int level, const char *fmt, ...)
{
    char msg[2048];
    va_list ap;
    va_start(ap, fmt);
    int mn = vsnprintf(msg, sizeof(msg), fmt, ap);
    va_end(ap);
    size_t ml = mn < 0 ? 0 : HY_MIN((size_t)mn, sizeof(msg) - 1);
    escape_ctl(msg, 0, &ml, sizeof(msg));
    msg[ml] = '\0';
    if (!(hy_log_quiet && level > HY_LOG_WARN)) {
        char line[2200];
        int n = snprintf(line, sizeof(line), "hayate: [%s] %s\n", level_names[level], msg);
        (void)!write(STDERR_FILENO, line, (size_t)HY_MIN(n, (int)sizeof(line) - 1));
    }
    if (num_targets) {
        for (size_t i = 0; i < num_targets; i++) {
            if (targets[i].scope == 0 && strcmp(targets[i].path, "stderr") == 0)
                return; /* already on stderr */
        }
        hy_log(level, "%s", msg);
    }
}

/* ---------------------------------------------------------------- debug_connection */

static const hy_log_debug_net_t *debug_nets;
static size_t num_debug_nets;

int hy_log_debug_net_parse(const char *s, size_t n, hy_log_debug_net_t *out)
{
    char buf[64];
    if (n == 0 || n >= sizeof(buf))
        return -1;
    if (n == 5 && memcmp(s, "unix:", 5) == 0) { /* every connection on a unix-domain listener */
        memset(out, 0, sizeof(*out));
        out->family = AF_UNIX;
        return 0;
    }
    memcpy(buf, s, n);
    buf[n] = '\0';
    char *slash = strchr(buf, '/');
    if (slash)
        *slash = '\0';
    memset(out, 0, sizeof(*out));
    int bits;
    if (inet_pton(AF_INET, buf, out->addr) == 1) {
        out->family = AF_INET, bits = 32;
    } else if (inet_pton(AF_INET6, buf, out->addr) == 1) {
        out->family = AF_INET6, bits = 128;
    } else {
        return -1;
    }
    if (slash) {
        char *end;
        long b = strtol(slash + 1, &end, 10);
        if (slash[1] == '\0' || *end != '\0' || b < 0 || b > bits)
            return -1;
        bits = (int)b;
    }
    for (int i = 0; i < 16; i++) {
        int k = bits - i * 8;
        out->mask[i] = (uint8_t)(k >= 8 ? 0xff : k <= 0 ? 0 : (0xff << (8 - k)) & 0xff);
        out->addr[i] &= out->mask[i];
    }
    return 0;
}

void hy_log_set_debug_nets(const hy_log_debug_net_t *nets, size_t n)
{
    debug_nets = n ? nets : NULL;
    num_debug_nets = n;
}

bool hy_log_debug_peer(const void *sockaddr)
{
    const struct sockaddr *sa = sockaddr;
    if (sa == NULL || num_debug_nets == 0)
        return false;
    uint8_t a[16];
    int family = sa->sa_family;
    if (family == AF_INET) {
        memcpy(a, &((const struct sockaddr_in *)sa)->sin_addr, 4);
    } else if (family == AF_INET6) {
        memcpy(a, &((const struct sockaddr_in6 *)sa)->sin6_addr, 16);
    } else if (family != AF_UNIX) {
        return false;
    }
    for (size_t i = 0; i < num_debug_nets; i++) {
        const hy_log_debug_net_t *d = &debug_nets[i];
        if (d->family != family)
            continue;
        if (family == AF_UNIX)
            return true;
        size_t len = family == AF_INET ? 4 : 16, k;
        for (k = 0; k < len && (a[k] & d->mask[k]) == d->addr[k]; k++)
            ;
        if (k == len)
            return true;
    }
    return false;
}

void hy_log_scoped_all(unsigned scope, int level, uint64_t conn_id, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    force_all = true;
    vlog(scope, level, conn_id, fmt, ap);
    force_all = false;
    va_end(ap);
}
