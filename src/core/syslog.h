/* syslog.h — nginx's syslog logging (RFC 3164 over UDP or a unix datagram socket): the
 * `syslog:server=ADDR[:PORT],facility=F,severity=S,tag=T,nohostname` target error_log and access_log accept.
 * A message goes out as "<PRI>Mmm dd hh:mm:ss HOST TAG: TEXT" (no HOST with nohostname), one datagram each. The
 * socket is opened on first use in each process and again after a send fails (a receiver that went away). */
#ifndef HY_CORE_SYSLOG_H
#define HY_CORE_SYSLOG_H

#include <stdbool.h>
#include <stddef.h>
#include <sys/socket.h>
#include "mem.h"

typedef struct hy_syslog_peer {
    int facility;  /* 0..23 */
    int severity;  /* 0..7: access logs use it; error logs send each message's own level */
    char tag[33];
    bool nohostname;
    struct sockaddr_storage addr;
    socklen_t addrlen;
    int fd;        /* -1 until first use */
    int pid;       /* the process that opened fd (a forked worker opens its own) */
    char server[128]; /* as written, for messages */
} hy_syslog_peer_t;

/** Parse what follows "syslog:" (spec, spec_len bytes). 0, or -1 with nginx's message in err (cap bytes). */
int hy_syslog_parse(hy_pool_t *pool, const char *spec, size_t len, hy_syslog_peer_t **out, char *err, size_t cap);
/** Send one message at syslog severity `severity` (-1: the peer's). Failures are not reported (the socket is
 * reopened on the next message), as nginx does. */
void hy_syslog_send(hy_syslog_peer_t *peer, int severity, const char *msg, size_t len);

#endif
