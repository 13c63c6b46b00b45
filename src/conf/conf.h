/* conf.h — the config language's shared types: contexts, the directive table, modules, the parse state.
 *
 * The lexer/parser (conf/lexer.c, conf/parser.c) read nginx syntax and dispatch each directive to the
 * matching entry of a module's directive table; generic setters (conf/slots.c) store values at an offset
 * into the module's conf struct for the current level. Block directives (events, http, server, location,
 * types) are ordinary directives whose setter creates the inner level and calls hy_conf_parse_block(). */
#ifndef HY_CONF_CONF_H
#define HY_CONF_CONF_H

#include <stddef.h>
#include <stdint.h>
#include <stdbool.h>
#include "../core/hayate.h"
#include "../core/types.h"
#include "../core/str.h"
#include "../core/mem.h"

/* contexts a directive may appear in (bit set) */
#define HY_CTX_MAIN 0x01u
#define HY_CTX_EVENTS 0x02u
#define HY_CTX_HTTP 0x04u
#define HY_CTX_SERVER 0x08u
#define HY_CTX_LOC 0x10u
#define HY_CTX_TYPES 0x20u    /* inside types { } (handled by a raw handler, see below) */
#define HY_CTX_UPSTREAM 0x40u /* inside upstream { } (no module uses it yet) */
#define HY_CTX_LIF 0x80u      /* inside "if" in a location (rewrite module) */
#define HY_CTX_SIF 0x100u     /* inside "if" in a server (rewrite module) */
#define HY_CTX_LMT 0x200u     /* inside limit_except { } in a location (nginx's NGX_HTTP_LMT_CONF) */
#define HY_CTX_HTTP_ANY (HY_CTX_HTTP | HY_CTX_SERVER | HY_CTX_LOC)

/* argument counts (bit set); ARGS_n means exactly n arguments after the name */
#define HY_ARGS_0 0x0001u
#define HY_ARGS_1 0x0002u
#define HY_ARGS_2 0x0004u
#define HY_ARGS_3 0x0008u
#define HY_ARGS_4 0x0010u
#define HY_ARGS_5 0x0020u
#define HY_ARGS_6 0x0040u
#define HY_ARGS_7 0x0080u
#define HY_ARGS_12 (HY_ARGS_1 | HY_ARGS_2)
#define HY_ARGS_123 (HY_ARGS_1 | HY_ARGS_2 | HY_ARGS_3)
#define HY_ARGS_FLAG 0x0100u  /* exactly one argument, "on" or "off" (checked by hy_slot_flag) */
#define HY_ARGS_1MORE 0x0200u /* one or more */
#define HY_ARGS_2MORE 0x0400u /* two or more */
#define HY_ARGS_ANY 0x0800u   /* any number, including none */
#define HY_ARGS_BLOCK 0x1000u /* must be followed by { ... } instead of ; */

/* which level's conf struct `offset` indexes */
enum hy_conf_level {
    HY_CONF_CORE = 0, /* main or events context: the module's core conf (cycle->core_conf[module->index]) */
    HY_CONF_HTTP_MAIN,
    HY_CONF_SRV,
    HY_CONF_LOC,
};

#define HY_UNSET -1
#define HY_UNSET_MSEC ((int64_t)-1)
#define HY_UNSET_SIZE ((int64_t)-1)
#define HY_UNSET_PTR NULL

/** A setter: returns 0 on success, -1 after reporting with hy_conf_error. `conf` is the module's conf struct
 * at the level named by d->conf for the current context (NULL when the module has none there). */
typedef int (*hy_conf_set_fn)(hy_conf_t *cf, const hy_directive_t *d, void *conf);

/** Bounds for numeric slots, pointed to by hy_directive_t.post. */
typedef struct hy_bounds {
    int64_t min, max;
} hy_bounds_t;

/** One entry of an enum slot table ({NULL, 0} terminates), pointed to by hy_directive_t.post. */
typedef struct hy_enum {
    const char *name;
    int value;
} hy_enum_t;

struct hy_directive {
    const char *name;
    uint32_t ctx;      /* HY_CTX_* bit set */
    uint32_t args;     /* HY_ARGS_* bit set */
    hy_conf_set_fn set; /* generic slot setter or custom */
    uint8_t conf;      /* enum hy_conf_level */
    uint16_t offset;   /* offsetof() into the module's conf struct at that level */
    const void *post;  /* hy_bounds_t, hy_enum_t[] or setter-specific data */
};

/** A module: its directives and how its conf structs are created and merged. Listed in process/modules.c. */
struct hy_module {
    const char *name;
    const hy_directive_t *directives; /* {0}-terminated, or NULL */
    int index;                        /* position in hy_modules[]; set by hy_modules_init() */
    void *(*create_core_conf)(hy_cycle_t *cycle);                      /* main/events level */
    int (*init_core_conf)(hy_cycle_t *cycle, void *conf);              /* defaults after parsing; -1 = error */
    void *(*create_main_conf)(hy_conf_t *cf);                          /* http {} level */
    void *(*create_srv_conf)(hy_conf_t *cf);
    void *(*create_loc_conf)(hy_conf_t *cf);
    int (*merge_srv_conf)(hy_conf_t *cf, void *parent, void *child); /* -1 after hy_conf_error */
    int (*merge_loc_conf)(hy_conf_t *cf, void *parent, void *child);
    int (*postconfiguration)(hy_conf_t *cf); /* after the whole http{} is merged; -1 = error */
    /* Response filters (http modules), called in hy_modules[] order (see http/request.h):
     * header_filter: once, before the response head is finalised; may change status/headers/length.
     * body_filter: on every hy_req_send; may rewrite the segments queued in req->body (is_final: last call).
     * Request-processing handlers (rewrite, access, content, log ...) are not listed here: a module registers them
     * into the phase engine from its postconfiguration (http/phases.h). */
    void (*header_filter)(hy_req_t *req);
    void (*body_filter)(hy_req_t *req, bool is_final);
    /** body_filter runs on the body of a subrequest whose parent takes it (HY_SR_OUTPUT, http/subrequest.h) */
    bool subrequest_body;
    /** Per-worker initialisation after the generation is live (e.g. open log buffers); -1 = error. */
    int (*init_worker)(hy_cycle_t *cycle);
    /** Graceful exit or reopen (USR1): flush buffers (reopen = true: reopen files too). */
    void (*flush_worker)(hy_cycle_t *cycle, bool reopen);
};

/** A raw block handler (nginx's cf->handler): receives every statement inside the block (e.g. types {}),
 * with cf->args holding its words (args[0] is the first word). Returns 0 or -1 after hy_conf_error. */
typedef int (*hy_conf_raw_fn)(hy_conf_t *cf, void *data);

/** The parse state. Owned by the caller of hy_conf_parse_file; valid during parsing only. */
struct hy_conf {
    hy_cycle_t *cycle;  /* borrowed: the generation being built */
    hy_pool_t *pool;    /* borrowed: the generation's arena; everything parsed lives here */
    hy_pool_t *temp;    /* borrowed: scratch arena freed after parsing */
    hy_array_t *args;   /* hy_str_t words of the current statement, NUL-terminated, in temp or pool */
    uint32_t ctx;       /* HY_CTX_* of the current block */
    void **main_conf;   /* http-level confs indexed by module index (NULL outside http) */
    void **srv_conf;    /* current server's confs (NULL outside server) */
    void **loc_conf;    /* current location's confs (NULL outside location) */
    hy_conf_raw_fn raw; /* when set, statements inside the current block go here instead of tables */
    void *raw_data;
    /* position, for messages: */
    const char *file; /* current file name, NUL-terminated, lives in pool */
    unsigned line;    /* line of the current statement's first token */
    /* private to the parser: */
    void *_in;         /* current input (lexer state) */
    bool in_cmdline;   /* parsing -g parameters: messages say "in command line" */
    int _include_depth;
    void *_dump;       /* -T dump collector: list of (file, contents), NULL when not dumping */
    int _unsupported;  /* "not supported yet" errors reported so far: parsing goes on to list them all */
};

/** Optional observer of every config message: level is "emerg" or "warn", msg the text after the
 * "hayate: [level] " prefix (with its " in FILE:LINE" suffix, no newline). Called after the stderr line. */
extern void (*hy_conf_log_hook)(const char *level, const char *msg);
/** Report a config error: writes "hayate: [emerg] <msg> in <file>:<line>" to stderr (and the startup error
 * log when open). Always returns -1 so setters can `return hy_conf_error(...)`. */
int hy_conf_error(hy_conf_t *cf, const char *fmt, ...) HY_PRINTF(2, 3);
/** Same line format at [warn] level; parsing continues. */
void hy_conf_warn(hy_conf_t *cf, const char *fmt, ...) HY_PRINTF(2, 3);

/** Count a "not supported by hayate yet" error already reported with hy_conf_error(): the parse goes on, so
 * that one run lists them all, and hy_conf_parse_file()/hy_conf_parse_string() then return -1. */
void hy_conf_unsupported(hy_conf_t *cf);
/** Parse a whole file (top level: main context). -1 after an error was reported. */
int hy_conf_parse_file(hy_conf_t *cf, const char *path);
/** Parse an in-memory config (the embedded default) as if it were file `name`. */
int hy_conf_parse_string(hy_conf_t *cf, const char *name, const char *text, size_t len);
/** Called by a block directive's setter after it set cf->ctx / *_conf: parses until the matching "}".
 * The caller saves and restores the fields it changed. -1 after an error. */
int hy_conf_parse_block(hy_conf_t *cf);

/** The words of the current statement. */
static inline hy_str_t *hy_conf_args(hy_conf_t *cf, size_t *n)
{
    *n = cf->args->nelts;
    return (hy_str_t *)cf->args->elts;
}

/* -T support: when cf->_dump is set (hy_conf_dump_enable), every file read is recorded;
 * hy_conf_dump_write prints them as nginx -T does ("# configuration file PATH:" + contents). */
void hy_conf_dump_enable(hy_conf_t *cf);
void hy_conf_dump_write(hy_conf_t *cf, int fd);

/* Generic setters (conf/slots.c). The field at d->offset: */
int hy_slot_flag(hy_conf_t *cf, const hy_directive_t *d, void *conf);  /* int: 0/1, starts HY_UNSET */
int hy_slot_num(hy_conf_t *cf, const hy_directive_t *d, void *conf);   /* int64_t, bounds in post */
int hy_slot_size(hy_conf_t *cf, const hy_directive_t *d, void *conf);  /* int64_t bytes */
int hy_slot_msec(hy_conf_t *cf, const hy_directive_t *d, void *conf);  /* int64_t ms */
int hy_slot_sec(hy_conf_t *cf, const hy_directive_t *d, void *conf);   /* int64_t s */
int hy_slot_str(hy_conf_t *cf, const hy_directive_t *d, void *conf);   /* hy_str_t, .ptr NULL when unset */
int hy_slot_enum(hy_conf_t *cf, const hy_directive_t *d, void *conf);    /* int, table hy_enum_t[] in post */
int hy_slot_bitmask(hy_conf_t *cf, const hy_directive_t *d, void *conf); /* int, names of hy_enum_t[] post OR'ed */
/* Check-only setters for `accepted` directives (no effect in hayate): each validates the value exactly as the
 * nginx slot named in its comment does (same message through hy_conf_error, -1) and stores nothing. */
int hy_slot_check_flag(hy_conf_t *cf, const hy_directive_t *d, void *conf);    /* on|off */
int hy_slot_check_num(hy_conf_t *cf, const hy_directive_t *d, void *conf);     /* number, bounds in post */
int hy_slot_check_size(hy_conf_t *cf, const hy_directive_t *d, void *conf);    /* size (k, m) */
int hy_slot_check_msec(hy_conf_t *cf, const hy_directive_t *d, void *conf);    /* time (ms, s, m, ...) */
int hy_slot_check_bitmask(hy_conf_t *cf, const hy_directive_t *d, void *conf); /* names of hy_enum_t[] post */
int hy_slot_check_bufs(hy_conf_t *cf, const hy_directive_t *d, void *conf);    /* "number size" */
/** "is duplicate" check helper used by the slots: returns true if the field was already set. */

/* Merge helpers: child takes parent's value if unset, else the default. */
#define hy_merge_value(child, parent, def)                                                                             \
    do {                                                                                                               \
        if ((child) == HY_UNSET)                                                                                       \
            (child) = ((parent) == HY_UNSET) ? (def) : (parent);                                                       \
    } while (0)
#define hy_merge_str(child, parent, def)                                                                               \
    do {                                                                                                               \
        if ((child).ptr == NULL)                                                                                       \
            (child) = ((parent).ptr == NULL) ? HY_STR(def) : (parent);                                                 \
    } while (0)

/* The module list (process/modules.c): NULL-terminated; its order is the filter order and the order of each
 * phase's handlers. */
extern hy_module_t *hy_modules[];
/** Assign indexes; returns the number of modules. */
int hy_modules_init(void);
/** Find a directive by name in all modules; NULL when unknown. *mod receives its module. */
const hy_directive_t *hy_modules_find(const char *name, size_t len, hy_module_t **mod);

#endif
