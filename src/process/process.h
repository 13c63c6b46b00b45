/* process.h — loading a configuration generation and running the server: the master and its workers, or a
 * single process with master_process off. */
#ifndef HY_PROCESS_PROCESS_H
#define HY_PROCESS_PROCESS_H

#include "../conf/cycle.h"

typedef struct hy_opts {
    const char *prefix;      /* absolute, ends with '/' */
    const char *conf_file;   /* absolute path, or NULL for the embedded default */
    const char *directives;  /* -g, or NULL */
    const char *error_log;   /* -e, or NULL */
    bool test, dump, quiet;
} hy_opts_t;

/** The embedded default configuration. */
extern const char hy_default_conf[];

/** Parse and check a generation. NULL after the errors were reported (stderr / error log). Opens the error
 * log files (as nginx -t does) but no sockets. The result holds one reference. */
hy_cycle_t *hy_cycle_load(const hy_opts_t *opts);
/** Apply the generation's error_log targets (opens files). 0 or -1 after reporting. */
int hy_cycle_open_logs(hy_cycle_t *cycle);
/** Write the -T dump of the generation that was just loaded (stdout). */
void hy_cycle_dump(hy_cycle_t *cycle);
/** `--doctor`: print the machine/config report to stdout; 0 when nothing limits the configured capacity. */
int hy_doctor(hy_cycle_t *cycle);
/** Serve until stopped. Returns the exit status. */
int hy_serve(hy_cycle_t *cycle, const hy_opts_t *opts);

#endif
