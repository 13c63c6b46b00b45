/* notify.c — sd_notify's datagram, written by hand (see notify.h). The address is a path, or an abstract
 * socket when it starts with '@' (systemd's convention). */
#include <errno.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <sys/socket.h>
#include <sys/un.h>
#include "notify.h"
#include "../core/log.h"

static void send_state(const char *state)
{
    const char *path = getenv("NOTIFY_SOCKET");
    if (path == NULL || path[0] == '\0')
        return;
    struct sockaddr_un sun = {.sun_family = AF_UNIX};
    size_t len = strlen(path);
    if ((path[0] != '/' && path[0] != '@') || len >= sizeof(sun.sun_path)) {
        hy_log(HY_LOG_WARN, "NOTIFY_SOCKET \"%s\" is not a unix socket address, not notifying", path);
        return;
    }
    memcpy(sun.sun_path, path, len);
    if (path[0] == '@')
        sun.sun_path[0] = '\0';
    socklen_t alen = (socklen_t)(offsetof(struct sockaddr_un, sun_path) + len + (path[0] == '@' ? 0 : 1));
    int fd = socket(AF_UNIX, SOCK_DGRAM | SOCK_CLOEXEC, 0);
    if (fd < 0)
        return;
    if (sendto(fd, state, strlen(state), MSG_NOSIGNAL, (struct sockaddr *)&sun, alen) < 0) {
        static bool warned;
        if (!warned)
            hy_log(HY_LOG_WARN, "sendto() NOTIFY_SOCKET \"%s\" failed (%d: %s)", path, errno, strerror(errno));
        warned = true;
    }
    close(fd);
}

void hy_notify_ready(void)
{
    char msg[128];
    snprintf(msg, sizeof(msg), "READY=1\nSTATUS=serving\nMAINPID=%d", (int)getpid());
    send_state(msg);
}

void hy_notify_reloading(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    char msg[128];
    snprintf(msg, sizeof(msg), "RELOADING=1\nSTATUS=reloading\nMONOTONIC_USEC=%llu",
             (unsigned long long)ts.tv_sec * 1000000ULL + (unsigned long long)ts.tv_nsec / 1000ULL);
    send_state(msg);
}

void hy_notify_stopping(void)
{
    send_state("STOPPING=1\nSTATUS=stopping");
}
