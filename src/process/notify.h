/* notify.h — systemd's service notification protocol (sd_notify(3)), spoken directly: one datagram per state
 * change to the AF_UNIX socket named by $NOTIFY_SOCKET, so a `Type=notify` unit knows when hayate is ready,
 * reloading and stopping. No libsystemd. Without $NOTIFY_SOCKET every call does nothing. */
#ifndef HY_PROCESS_NOTIFY_H
#define HY_PROCESS_NOTIFY_H

/** Send "READY=1" (with STATUS= and MAINPID=). Errors are logged once at [warn]; never fatal. */
void hy_notify_ready(void);
/** Send "RELOADING=1" with MONOTONIC_USEC= (what systemd's notify-reload asks for). */
void hy_notify_reloading(void);
/** Send "STOPPING=1". */
void hy_notify_stopping(void);

#endif
