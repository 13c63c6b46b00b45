/* syslog.c — see syslog.h. Parameters as nginx's ngx_syslog_parse_args: server= (an IPv4/IPv6 address or a
 * host name, port 514 by default, or unix:PATH), facility= (kern ... local7, default local7), severity= (emerg ...
 * debug, default info), tag= (letters, digits and '_', at most 32; default "nginx", so syslog rules written for
 * nginx keep matching), nohostname. */
#include <errno.h>
#include <fcntl.h>
#include <netdb.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <time.h>
#include <unistd.h>
#include <netinet/in.h>
#include <sys/un.h>
#include "syslog.h"
#include "clock.h"

static const char *const facilities[] = {"kern", "user", "mail", "daemon", "auth", "intern", "lpr", "news", "uucp",
                                         "clock", "authpriv", "ftp", "ntp", "audit", "alert", "cron", "local0",
                                         "local1", "local2", "local3", "local4", "local5", "local6", "local7", NULL};
static const char *const severities[] = {"emerg", "alert", "crit", "error", "warn", "notice", "info", "debug", NULL};

static int find_name(const char *const *names, const char *v, size_t n)
{
    for (int i = 0; names[i]; i++)
        if (strlen(names[i]) == n && strncmp(names[i], v, n) == 0)
            return i;
    return -1;
}

static int parse_server(hy_syslog_peer_t *p, const char *v, size_t n, char *err, size_t cap)
{
    snprintf(p->server, sizeof(p->server), "%.*s", (int)n, v);
    if (n > 5 && strncmp(v, "unix:", 5) == 0) {
        struct sockaddr_un *un = (struct sockaddr_un *)&p->addr;
        if (n - 5 >= sizeof(un->sun_path)) {
            snprintf(err, cap, "too long path in the unix domain socket \"%.*s\"", (int)n, v);
            return -1;
        }
        un->sun_family = AF_UNIX;
        memcpy(un->sun_path, v + 5, n - 5);
        un->sun_path[n - 5] = '\0';
        p->addrlen = sizeof(*un);
        return 0;
    }
    char host[256], port[8] = "514";
    const char *hs = v, *he;
    const char *colon;
    if (n && v[0] == '[') { /* [IPv6]:port */
        const char *rb = memchr(v, ']', n);
        if (rb == NULL) {
            snprintf(err, cap, "invalid host in syslog server \"%.*s\"", (int)n, v);
            return -1;
        }
        hs = v + 1, he = rb;
        colon = rb + 1 < v + n && rb[1] == ':' ? rb + 1 : NULL;
    } else {
        colon = memchr(v, ':', n);
        he = colon ? colon : v + n;
    }
    if (colon) {
        size_t pl = (size_t)(v + n - colon - 1);
        if (pl == 0 || pl > 5 || strspn(colon + 1, "0123456789") < pl || atoi(colon + 1) < 1 || atoi(colon + 1) > 65535) {
            snprintf(err, cap, "invalid port in syslog server \"%.*s\"", (int)n, v);
            return -1;
        }
        memcpy(port, colon + 1, pl);
        port[pl] = '\0';
    }
    size_t hl = (size_t)(he - hs);
    if (hl == 0 || hl >= sizeof(host)) {
        snprintf(err, cap, "no host in syslog server \"%.*s\"", (int)n, v);
        return -1;
    }
    memcpy(host, hs, hl);
    host[hl] = '\0';
    struct addrinfo hints = {.ai_family = AF_UNSPEC, .ai_socktype = SOCK_DGRAM}, *res = NULL;
    if (getaddrinfo(host, port, &hints, &res) != 0 || res == NULL) {
        snprintf(err, cap, "host not found in syslog server \"%.*s\"", (int)n, v);
        return -1;
    }
    memcpy(&p->addr, res->ai_addr, res->ai_addrlen);
    p->addrlen = res->ai_addrlen;
    freeaddrinfo(res);
    return 0;
}

/* the generation ends: its peer's socket goes (in whichever process opened it) */
static void peer_cleanup(void *arg)
{
    hy_syslog_peer_t *p = arg;
    if (p->fd >= 0)
        close(p->fd);
    p->fd = -1;
}

int hy_syslog_parse(hy_pool_t *pool, const char *spec, size_t len, hy_syslog_peer_t **out, char *err, size_t cap)
{
    hy_syslog_peer_t *p = hy_pcalloc(pool, sizeof(*p));
    p->facility = 23; /* local7 */
    p->severity = 6;  /* info */
    strcpy(p->tag, "nginx");
    p->fd = -1;
    bool have_server = false;
    const char *s = spec, *end = spec + len;
    while (s < end) {
        const char *c = memchr(s, ',', (size_t)(end - s));
        const char *e = c ? c : end;
        size_t n = (size_t)(e - s);
        if (n > 7 && strncmp(s, "server=", 7) == 0) {
            if (have_server) {
                snprintf(err, cap, "duplicate syslog \"server\"");
                return -1;
            }
            have_server = true;
            if (parse_server(p, s + 7, n - 7, err, cap) != 0)
                return -1;
        } else if (n > 9 && strncmp(s, "facility=", 9) == 0) {
            p->facility = find_name(facilities, s + 9, n - 9);
            if (p->facility < 0) {
                snprintf(err, cap, "unknown syslog facility \"%.*s\"", (int)(n - 9), s + 9);
                return -1;
            }
        } else if (n > 9 && strncmp(s, "severity=", 9) == 0) {
            p->severity = find_name(severities, s + 9, n - 9);
            if (p->severity < 0) {
                snprintf(err, cap, "unknown syslog severity \"%.*s\"", (int)(n - 9), s + 9);
                return -1;
            }
        } else if (n >= 4 && strncmp(s, "tag=", 4) == 0) { /* "tag=" alone: an empty tag, as nginx */
            if (n - 4 > 32) {
                snprintf(err, cap, "syslog tag length exceeds 32");
                return -1;
            }
            for (size_t i = 4; i < n; i++) {
                char ch = s[i];
                if (!((ch >= 'a' && ch <= 'z') || (ch >= 'A' && ch <= 'Z') || (ch >= '0' && ch <= '9') || ch == '_')) {
                    snprintf(err, cap, "syslog \"tag\" only allows alphanumeric characters and underscore");
                    return -1;
                }
            }
            memcpy(p->tag, s + 4, n - 4);
            p->tag[n - 4] = '\0';
        } else if (n == 10 && strncmp(s, "nohostname", 10) == 0) {
            p->nohostname = true;
        } else {
            snprintf(err, cap, "unknown syslog parameter \"%.*s\"", (int)n, s);
            return -1;
        }
        s = c ? c + 1 : end;
    }
    if (!have_server) {
        snprintf(err, cap, "no syslog server specified");
        return -1;
    }
    hy_pool_on_clear(pool, peer_cleanup, p);
    *out = p;
    return 0;
}

static const char *hostname(void)
{
    static char name[256];
    if (name[0] == '\0') {
        if (gethostname(name, sizeof(name) - 1) != 0)
            strcpy(name, "localhost");
        name[sizeof(name) - 1] = '\0';
        for (char *c = name; *c; c++)
            if (*c >= 'A' && *c <= 'Z')
                *c |= 0x20;
    }
    return name;
}

static bool peer_open(hy_syslog_peer_t *p)
{
    if (p->fd >= 0 && p->pid == (int)getpid())
        return true;
    if (p->fd >= 0) { /* the parent's copy, inherited by a forked worker: its own socket instead */
        close(p->fd);
        p->fd = -1;
    }
    int fd = socket(p->addr.ss_family, SOCK_DGRAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
    if (fd < 0)
        return false;
    if (connect(fd, (struct sockaddr *)&p->addr, p->addrlen) != 0) {
        close(fd);
        return false;
    }
    p->fd = fd;
    p->pid = (int)getpid();
    return true;
}

void hy_syslog_send(hy_syslog_peer_t *p, int severity, const char *msg, size_t len)
{
    static const char *const months[] = {"Jan", "Feb", "Mar", "Apr", "May", "Jun",
                                         "Jul", "Aug", "Sep", "Oct", "Nov", "Dec"};
    char buf[4096];
    hy_clock_update_if_stale();
    time_t t = (time_t)hy_clock_time();
    struct tm tm;
    localtime_r(&t, &tm);
    int pri = p->facility * 8 + (severity < 0 ? p->severity : severity);
    int n = p->nohostname ? snprintf(buf, sizeof(buf), "<%d>%s %2d %02d:%02d:%02d %s: ", pri, months[tm.tm_mon],
                                     tm.tm_mday, tm.tm_hour, tm.tm_min, tm.tm_sec, p->tag)
                          : snprintf(buf, sizeof(buf), "<%d>%s %2d %02d:%02d:%02d %s %s: ", pri, months[tm.tm_mon],
                                     tm.tm_mday, tm.tm_hour, tm.tm_min, tm.tm_sec, hostname(), p->tag);
    size_t h = (size_t)n, room = sizeof(buf) - h;
    size_t m = len < room ? len : room;
    memcpy(buf + h, msg, m);
    if (!peer_open(p))
        return;
    if (send(p->fd, buf, h + m, MSG_NOSIGNAL) < 0 && errno != EAGAIN) {
        close(p->fd); /* ECONNREFUSED from a receiver that went away: a new socket next time */
        p->fd = -1;
    }
}
