/* cycle.h — one configuration generation: everything parsed from one config file, in one arena. */
#ifndef HY_CONF_CYCLE_H
#define HY_CONF_CYCLE_H

#include "../core/hayate.h"
#include "../core/types.h"
#include "../core/str.h"
#include "../core/mem.h"

struct hy_cycle {
    hy_pool_t *pool;         /* owned: the generation's arena */
    const char *prefix;      /* "-p" prefix, absolute, ends with '/'; lives in pool */
    const char *conf_prefix; /* directory of conf_file, ends with '/'; relative includes resolve here */
    const char *conf_file;   /* absolute path, or "(embedded)" for the built-in default */
    const char *error_log;   /* -e value or NULL */
    void **core_conf;        /* per module (index): main/events-level confs */
    void **http_main_conf;   /* per module: http{}-level confs; NULL when there is no http block */
    void *http;              /* the http core's runtime data (servers, listens); owned by http/ */
    hy_array_t *listen_specs; /* hy_listen_spec_t from every listen directive (event/listen.h) */
    hy_array_t *error_logs;   /* error_log targets (core/log.h) */
    hy_array_t *zones;        /* hy_zone_t * claimed by directives (conf/zone.h); NULL when none */
    bool test_only;          /* -t / -T: validate, open no sockets */
    int refs;                /* connections still served under this generation (+1 while current) */
};

/** Drop a reference; the generation's arena is destroyed with the last one. */
void hy_cycle_unref(hy_cycle_t *cycle);

/** Resolve `name` against the prefix (for paths in directives: root, pid, logs...). Absolute names are
 * returned as is. Result lives in the cycle pool, NUL-terminated. */
char *hy_cycle_path(hy_cycle_t *cycle, const char *name, size_t len);
/** Same, against conf_prefix (for include and other config files). */
char *hy_cycle_conf_path(hy_cycle_t *cycle, const char *name, size_t len);

#endif
