/* title.h — process titles as nginx shows them (`hayate: master process /usr/sbin/hayate -c ...`,
 * `hayate: worker process`): the title is written over the argv area that /proc/PID/cmdline (ps, top) shows.
 * The original arguments are kept in a copy, which the binary upgrade (USR2) re-executes. */
#ifndef HY_PROCESS_TITLE_H
#define HY_PROCESS_TITLE_H

/** Take over argv: copies the arguments (hy_title_argv) and moves the environment out of the area that
 * follows them, so later titles can use all of it. Call once, first thing in main(). */
void hy_title_init(int argc, char **argv);
/** Replace the process title by "hayate: <title>" (truncated to the argv area). No-op before init. */
void hy_title_set(const char *title);
/** The command line as given, NULL-terminated (process lifetime). NULL before init. */
char *const *hy_title_argv(void);
/** The command line as one string, arguments separated by spaces (process lifetime). "" before init. */
const char *hy_title_cmdline(void);

#endif
