/* log.h — the error log: nginx's levels and line format, several targets, reopen on USR1.
 * File lines: "2026/11/30 10:00:00 [error] PID#TID: *CID message". Before the config's logs are open
 * (and during -t) messages go to stderr as "hayate: [level] message". */
#ifndef HY_CORE_LOG_H
#define HY_CORE_LOG_H

#include <stdint.h>
#include <stdbool.h>
#include "hayate.h"
#include "types.h"
#include "syslog.h"

enum hy_log_level {
    HY_LOG_EMERG = 1,
    HY_LOG_ALERT,
    HY_LOG_CRIT,
    HY_LOG_ERR,
    HY_LOG_WARN,
    HY_LOG_NOTICE,
    HY_LOG_INFO,
    HY_LOG_DEBUG,
};

typedef struct hy_log_target {
    const char *path; /* borrowed from the cycle pool; "stderr" for the standard error */
    int fd;
    int level;        /* lines at this level or more severe are written */
    unsigned scope;   /* 0: the main error_log; else the http{}/server{}/location{} level that declared it
                       * (its requests' messages go there instead, hy_log_scoped) */
    hy_syslog_peer_t *syslog; /* syslog:server=...: path is "syslog:..." and fd stays -1 */
} hy_log_target_t;

/** The most verbose level any target accepts; callers may test it before formatting. */
extern int hy_log_max_level;

/** Level name ("emerg".."debug") → level, or -1. */
int hy_log_level_parse(const char *name, size_t len);
/** Level → name. */
const char *hy_log_level_name(int level);
/** Replace the active targets (the array lives in the caller's pool until the next call).
 * n == 0 means stderr-only startup mode. */
void hy_log_set_targets(hy_log_target_t *targets, size_t n);
/** The workers' user and group when root runs them as another user (-1: not the case). */
extern int hy_log_owner_uid, hy_log_owner_gid;
/** Open a log file for appending (O_APPEND|O_CREAT|O_CLOEXEC, 0644 when created; owner untouched); -errno on
 * failure. "stderr" gives a duplicate of the standard error. */
int hy_log_open_file(const char *path);
/** Open a log file again for USR1 (nginx's ngx_reopen_files): as hy_log_open_file(), then, when root with
 * hy_log_owner_uid set, the owner becomes that user (never the group) and the owner gets read and write
 * permission if it lacked them; the other mode bits are kept. Failures of the ownership change are logged. */
int hy_log_reopen_file(const char *path);
/** Reopen every file target (USR1); errors are logged to the targets that still work. */
void hy_log_reopen(void);
/** Write one line at `level`. conn_id > 0 adds "*CID " like nginx. */
void hy_log(int level, const char *fmt, ...) HY_PRINTF(2, 3);
void hy_log_conn(int level, uint64_t conn_id, const char *fmt, ...) HY_PRINTF(3, 4);
/** As hy_log_conn, to the targets of `scope` (0: the main ones). */
void hy_log_scoped(unsigned scope, int level, uint64_t conn_id, const char *fmt, ...) HY_PRINTF(4, 5);
/** debug_connection (https://nginx.org/en/docs/ngx_core_module.html#debug_connection): an address or CIDR
 * whose connections log at every level to every error_log, whatever its level. */
typedef struct hy_log_debug_net {
    int family;          /* AF_INET, AF_INET6 */
    uint8_t addr[16], mask[16];
} hy_log_debug_net_t;
/** "192.0.2.1", "192.0.2.0/24", "::1", "2001:db8::/32", "unix:" (unix-domain connections) -> 0, or -1. */
int hy_log_debug_net_parse(const char *s, size_t n, hy_log_debug_net_t *out);
/** The active list (borrowed until the next call; n == 0: none). */
void hy_log_set_debug_nets(const hy_log_debug_net_t *nets, size_t n);
/** Whether a peer address (struct sockaddr *) is in the active list. */
bool hy_log_debug_peer(const void *sockaddr);
/** As hy_log_scoped, for a debug connection: written to the scope's targets whatever their level. */
void hy_log_scoped_all(unsigned scope, int level, uint64_t conn_id, const char *fmt, ...) HY_PRINTF(4, 5);
/** Startup mode output, always to stderr: "hayate: [level] message". Also copied to file targets if open. */
void hy_log_stderr(int level, const char *fmt, ...) HY_PRINTF(2, 3);
/** Set true with -q: non-error stderr messages during -t are suppressed. */
extern bool hy_log_quiet;

#endif
