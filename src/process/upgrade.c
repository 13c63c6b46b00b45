/* upgrade.c — the binary upgrade's socket hand-over (see upgrade.h). */
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <sys/un.h>
#include "upgrade.h"
#include "title.h"
#include "../core/coverage.h"
#include "../core/log.h"
#include "../core/mem.h"
#include "../http/core.h"

#define ENV_NAME "HAYATE"
#define MAX_INHERITED 4096

static bool inherited;
static size_t num_inherited; /* sockets taken from HAYATE */

pid_t hy_upgrade_exec(const hy_lset_t *lset)
{
    char *const *argv = hy_title_argv();
    if (argv == NULL || argv[0] == NULL) {
        hy_log(HY_LOG_ALERT, "the command line is unknown, cannot start a new binary");
        return -1;
    }
    /* "fd;fd;...;": every distinct socket of the set (a shared socket repeats over the slots) */
    size_t cells = lset ? lset->num_addrs * lset->num_slots : 0;
    char *env = hy_alloc(sizeof(ENV_NAME) + 1 + cells * 12 + 1);
    size_t o = (size_t)snprintf(env, sizeof(ENV_NAME) + 1, "%s=", ENV_NAME);
    for (size_t i = 0; i < cells; i++) {
        int fd = lset->fds[i];
        bool seen = fd < 0;
        for (size_t j = 0; j < i && !seen; j++)
            seen = lset->fds[j] == fd;
        if (!seen)
            o += (size_t)snprintf(env + o, 13, "%d;", fd);
    }
    pid_t pid = fork();
    if (pid < 0) {
        hy_log(HY_LOG_ALERT, "fork() failed while executing new binary process \"%s\" (%d: %s)", argv[0], errno,
               strerror(errno));
        free(env);
        return -1;
    }
    if (pid > 0) {
        free(env);
        hy_log(HY_LOG_NOTICE, "start new binary process %d", (int)pid);
        return pid;
    }
    for (size_t i = 0; i < cells; i++)
        if (lset->fds[i] >= 0)
            fcntl(lset->fds[i], F_SETFD, 0); /* these survive the exec */
    putenv(env);
    sigset_t none;
    sigemptyset(&none);
    sigprocmask(SIG_SETMASK, &none, NULL);
    HY_COVERAGE_FLUSH(); /* exec replaces this image: its counters would be lost */
    execvp(argv[0], argv);
    hy_log(HY_LOG_ALERT, "execve() failed while executing new binary process \"%s\" (%d: %s)", argv[0], errno,
           strerror(errno));
    HY_COVERAGE_FLUSH();
    _exit(1);
}

bool hy_upgrade_was_inherited(void)
{
    return inherited;
}

size_t hy_upgrade_num_inherited(void)
{
    return num_inherited;
}

/* Does the bound address of `fd` name spec's address? */
static bool same_address(int fd, const hy_listen_spec_t *spec)
{
    struct sockaddr_storage ss;
    socklen_t len = sizeof(ss);
    if (getsockname(fd, (struct sockaddr *)&ss, &len) != 0 || ss.ss_family != spec->addr.ss_family)
        return false;
    if (ss.ss_family == AF_INET) {
        const struct sockaddr_in *a = (const void *)&ss, *b = (const void *)&spec->addr;
        return a->sin_port == b->sin_port && a->sin_addr.s_addr == b->sin_addr.s_addr;
    }
    if (ss.ss_family == AF_INET6) {
        const struct sockaddr_in6 *a = (const void *)&ss, *b = (const void *)&spec->addr;
        return a->sin6_port == b->sin6_port && memcmp(&a->sin6_addr, &b->sin6_addr, sizeof(a->sin6_addr)) == 0;
    }
    if (ss.ss_family == AF_UNIX) {
        const struct sockaddr_un *a = (const void *)&ss, *b = (const void *)&spec->addr;
        return strncmp(a->sun_path, b->sun_path, sizeof(a->sun_path)) == 0;
    }
    return false;
}

hy_lset_t *hy_upgrade_inherited(hy_cycle_t *cycle)
{
    const char *v = getenv(ENV_NAME);
    if (v == NULL)
        return NULL;
    inherited = true;
    int fds[MAX_INHERITED];
    size_t nfds = 0;
    for (const char *p = v; *p && nfds < MAX_INHERITED;) {
        size_t len = strcspn(p, ";");
        int64_t fd = hy_parse_int(p, len);
        int type = 0;
        socklen_t tl = sizeof(type);
        if (fd < 0 || fd > INT32_MAX || getsockopt((int)fd, SOL_SOCKET, SO_TYPE, &type, &tl) != 0 ||
            type != SOCK_STREAM) {
            hy_log_stderr(HY_LOG_EMERG,
                          "invalid socket number \"%.*s\" in " ENV_NAME " environment variable, "
                          "ignoring the rest of the variable",
                          (int)len, p);
            break; /* as nginx */
        }
        fds[nfds++] = (int)fd;
        fcntl((int)fd, F_SETFD, FD_CLOEXEC);
        /* a socket that did not come from hayate may be blocking: the workers accept until EAGAIN */
        int fl = fcntl((int)fd, F_GETFL);
        if (fl >= 0 && !(fl & O_NONBLOCK))
            fcntl((int)fd, F_SETFL, fl | O_NONBLOCK);
        p += len;
        if (*p == ';')
            p++;
    }
    num_inherited = nfds;
    unsetenv(ENV_NAME); /* not passed on to anything this process starts */
    hy_http_main_conf_t *m = hy_http_main(cycle);
    size_t n = m ? m->addrs->nelts : 0;
    hy_http_addr_t *addrs = m ? m->addrs->elts : NULL;
    /* how many sockets each address gets: the slots of the inherited set */
    size_t slots = 1;
    size_t *count = hy_calloc(sizeof(size_t) * (n ? n : 1));
    int *owner = hy_alloc(sizeof(int) * (nfds ? nfds : 1));
    for (size_t i = 0; i < nfds; i++) {
        owner[i] = -1;
        for (size_t a = 0; a < n && owner[i] < 0; a++)
            if (!addrs[a].via && same_address(fds[i], &addrs[a].spec) && !(addrs[a].spec.is_unix && count[a] > 0)) {
                owner[i] = (int)a;
                if (++count[a] > slots)
                    slots = count[a];
            }
    }
    hy_lset_t *s = hy_calloc(sizeof(*s));
    s->num_addrs = n;
    s->num_slots = slots;
    s->specs = hy_calloc(sizeof(hy_listen_spec_t) * (n ? n : 1));
    s->shared = hy_calloc(sizeof(bool) * (n ? n : 1));
    s->fds = hy_alloc(sizeof(int) * (n * slots > 0 ? n * slots : 1));
    for (size_t i = 0; i < n * slots; i++)
        s->fds[i] = -1;
    for (size_t a = 0; a < n; a++) {
        s->specs[a] = addrs[a].spec;
        s->shared[a] = addrs[a].spec.is_unix;
        if (!s->shared[a])
            s->specs[a].reuseport = true;
        count[a] = 0;
    }
    for (size_t i = 0; i < nfds; i++) {
        if (owner[i] < 0) { /* the new configuration has no such address */
            close(fds[i]);
            continue;
        }
        size_t a = (size_t)owner[i];
        s->fds[count[a]++ * n + a] = fds[i];
    }
    free(count);
    free(owner);
    return s;
}
