/* core.h — the http core module: conf structs for http{}, server{} and location{}, and the lookups the
 * request path needs (server by address and Host, location by URI, MIME type by extension). */
#ifndef HY_HTTP_CORE_H
#define HY_HTTP_CORE_H

#include "../core/regex.h"
#include "../conf/conf.h"
#include "../event/listen.h"

extern hy_module_t hy_http_core_module;

typedef struct hy_mime_map hy_mime_map_t; /* extension → type, built from types {} */

/* HY_LOC_NONAME: the conf of an "if" or "limit_except" block (nginx's noname location): never matched, merged
 * from its parent */
enum { HY_LOC_PREFIX = 0, HY_LOC_EXACT, HY_LOC_NOREGEX, HY_LOC_REGEX, HY_LOC_REGEX_CASELESS, HY_LOC_NAMED,
       HY_LOC_NONAME };
enum { HY_IMS_OFF = 0, HY_IMS_EXACT, HY_IMS_BEFORE };
enum { HY_LINGER_OFF = 0, HY_LINGER_ON, HY_LINGER_ALWAYS };
enum { HY_TOKENS_OFF = 0, HY_TOKENS_ON, HY_TOKENS_BUILD };
enum { HY_SATISFY_ALL = 0, HY_SATISFY_ANY };

/* keepalive_disable's browsers (bits) */
#define HY_KEEPALIVE_DISABLE_MSIE6 1
#define HY_KEEPALIVE_DISABLE_SAFARI 2

/* Entries of the open-file cache a location has when no open_file_cache is configured at any level: the files
 * are stat(2)ed on every use, so every request sees the file as it is (nginx's behaviour with the cache off),
 * without the open(2)/close(2) and, for files up to 32 KiB, the read (http/open_file_cache.c). */
#define HY_OFC_IMPLICIT_MAX 256

typedef struct hy_http_loc_conf hy_http_loc_conf_t;

/* A location's own content handler (nginx's clcf->handler: proxy_pass, stub_status ...): when set, it takes the
 * CONTENT phase instead of the chain of content-phase handlers. Returns a phase result (http/phases.h). */
typedef int (*hy_content_handler_fn)(hy_req_t *req);

struct hy_http_loc_conf {
    hy_str_t name;          /* location pattern as written ("" for the server level) */
    int match;              /* HY_LOC_* */
    hy_regex_t *regex;      /* conf pool; NULL unless a regex location */
    void **loc_conf;        /* every module's conf for this location (indexed by module) */
    hy_array_t *locations;  /* hy_http_loc_conf_t* nested (NULL when none) */
    hy_http_loc_conf_t *parent;
    hy_content_handler_fn handler; /* NULL → the CONTENT phase's chain (index, autoindex, static ...) */
    bool auto_redirect;     /* a prefix ending in '/' served by proxy_pass or another pass: "/x" gets a 301 to "/x/" (nginx) */

    hy_str_t root;          /* with variables-free paths for now; absolute (prefix applied) */
    hy_str_t alias;         /* set instead of root when alias is used */
    hy_str_t alias_prefix;  /* the name of the location that set the alias: the URI prefix it replaces, inherited
                             * with it by nested locations (nginx's clcf->alias length) */
    bool alias_regex;       /* the alias was set in a regex location: with captures it names the whole path */
    int root_is_alias;      /* -1 unset */
    void *root_cv;          /* hy_complex_t (http/vars.h) when root/alias has variables or captures, else NULL */
    int sendfile, tcp_nopush, tcp_nodelay;
    int64_t sendfile_max_chunk; /* bytes one flush writes before the worker turns to other work (0: no bound) */
    int64_t keepalive_timeout_ms, keepalive_header_sec, keepalive_requests;
    int64_t keepalive_time_ms; /* a connection older than this ends after its current request (default 1h) */
    int keepalive_disable;     /* HY_KEEPALIVE_DISABLE_* bits; HY_UNSET until merged (default msie6) */
    int64_t client_body_timeout_ms, client_max_body_size, send_timeout_ms, client_body_buffer_size;
    hy_str_t client_body_temp_path; /* absolute; .ptr NULL until merged (default <prefix>client_body_temp) */
    int client_body_temp_levels[3]; /* digits per directory level, 0 = none */
    int client_body_in_file_only;   /* 0 off, 1 on (file kept), 2 clean (file removed) */
    int client_body_in_single_buffer;
    int reset_timedout_connection, lingering_close;
    int64_t lingering_time_ms, lingering_timeout_ms;
    int server_tokens;
    hy_mime_map_t *types;   /* NULL → inherit */
    hy_str_t default_type;
    hy_str_t post_action;   /* post_action URI or @name; "" (off) when none */
    int64_t open_file_cache_max;      /* 0 = off; -1 unset */
    bool open_file_cache_implicit;    /* no open_file_cache anywhere above: hayate's default cache (stat on each use) */
    int64_t open_file_cache_inactive_ms;
    int64_t open_file_cache_valid_ms, open_file_cache_min_uses;
    int open_file_cache_errors;
    int disable_symlinks;             /* HY_SYMLINKS_* (core/nofollow.h); HY_UNSET until merged (off) */
    void *disable_symlinks_from;      /* hy_complex_t: disable_symlinks' from= (a prefix not checked), or NULL */
    int etag, if_modified_since, max_ranges_set;
    int64_t max_ranges;
    int internal, chunked_transfer_encoding, msie_padding, msie_refresh, log_not_found;
    int absolute_redirect, server_name_in_redirect, port_in_redirect;
    int satisfy;                      /* HY_SATISFY_*: how the ACCESS phase combines its handlers (phases.c) */
    uint32_t limit_except;            /* methods (hy_http_method_bit) that get limit_except_loc; 0 = none */
    hy_http_loc_conf_t *limit_except_loc; /* the limit_except { } block's conf (a noname child) */
    bool is_limit_except;             /* this conf is a limit_except { } block */
    int64_t auth_delay_ms;            /* auth_delay: a 401 from the ACCESS phase waits this long (0: none) */
    unsigned error_log_scope;         /* error_log at this level (core/log.h target scope); 0: inherited, and
                                       * at the top the main error_log */
};

/** nginx's method bit for a request method as sent (uppercase names only; others are the "unknown" bit 1). */
uint32_t hy_http_method_bit(hy_str_t method);
/** nginx's ngx_http_update_location_config step for limit_except: the conf a request with `method` uses in lc. */
hy_http_loc_conf_t *hy_http_limit_except(hy_http_loc_conf_t *lc, hy_str_t method);

typedef struct hy_server_name {
    hy_str_t name;          /* lower-cased; for wildcards without the "*." / ".*" */
    int kind;               /* 0 exact, 1 leading wildcard (*.x / .x), 2 trailing wildcard (x.*), 3 regex */
    hy_regex_t *regex;
} hy_server_name_t;

typedef struct hy_http_srv_conf {
    hy_array_t *server_names;     /* hy_server_name_t */
    hy_array_t *listens;          /* hy_listen_spec_t (this server's own listen directives) */
    hy_http_loc_conf_t *loc;      /* the server-level location conf (inherits http's) */
    void **srv_conf;              /* every module's srv conf */
    int64_t client_header_timeout_ms, client_header_buffer_size;
    int64_t large_header_num, large_header_size;
    int64_t max_headers;          /* request header fields allowed (max_headers, default 1000); more: 494 → 400 */
    int merge_slashes, ignore_invalid_headers, underscores_in_headers;
    const char *file;             /* where the server block starts, for messages */
    unsigned line;
} hy_http_srv_conf_t;

/* One listening address and the servers on it. */
typedef struct hy_http_addr {
    hy_listen_spec_t spec;                /* merged options (the default_server's listen carries them) */
    hy_http_srv_conf_t *default_server;   /* borrowed */
    hy_array_t *servers;                  /* hy_http_srv_conf_t* in config order */
    hy_cycle_t *cycle;                    /* the generation it belongs to */
    struct hy_http_addr *via;             /* a specific address served through the wildcard socket of its port
                                           * (nginx binds only "*:port" and picks by local address); NULL when
                                           * it has a socket of its own */
    hy_array_t *covers;                   /* on a wildcard: the hy_http_addr_t* it dispatches to, or NULL */
} hy_http_addr_t;

typedef struct hy_http_main_conf {
    hy_array_t *servers;   /* hy_http_srv_conf_t* */
    hy_array_t *addrs;     /* hy_http_addr_t, built at postconfiguration */
    hy_http_loc_conf_t *loc; /* http-level defaults for locations */
    int64_t types_hash_max_size, types_hash_bucket_size;
    struct hy_phase_engine *phases; /* http/phases.c: registrations, then the flat step array */
    /* error_page's hook (http/error_page.c installs it): perform the error_page that applies to status and return
     * true, or false for the built-in page. The core calls it from hy_req_error without naming the module. */
    bool (*error_page)(hy_req_t *req, int status);
} hy_http_main_conf_t;

/** For a connection accepted on a wildcard socket: the address whose servers apply, by the connection's local
 * address (NULL: the wildcard's own). */
hy_http_addr_t *hy_http_addr_for_local(hy_http_addr_t *wildcard, const struct sockaddr_storage *local);
/** The http{} confs of a cycle (NULL without an http block). */
hy_http_main_conf_t *hy_http_main(hy_cycle_t *cycle);
/** Pick the server for a Host (lower-cased, port stripped); default server when nothing matches. The regex
 * server name that selects the server (each tried runs once) leaves its captures in `caps` (may be NULL), so
 * host must outlive them. */
hy_http_srv_conf_t *hy_http_find_server(hy_http_addr_t *addr, const char *host, size_t len, hy_regex_caps_t *caps);
/** Location for a decoded, normalised path (never a named location). NULL → use the server level. Every regex
 * location tried runs once; the matching one leaves its captures in `caps` (may be NULL), so path must
 * outlive them. */
hy_http_loc_conf_t *hy_http_find_location(hy_http_srv_conf_t *srv, const char *path, size_t len,
                                          hy_regex_caps_t *caps);
/** nginx's auto redirect: the prefix location, at the level the search for `path` reaches, whose name is path
 * plus "/" and whose handler is a *_pass (auto_redirect); NULL when there is none or a location is named
 * exactly `path`. The caller answers 301 to the URI with a slash. */
hy_http_loc_conf_t *hy_http_find_auto_redirect(hy_http_srv_conf_t *srv, const char *path, size_t len);
/** Named location "@name" in the server, or NULL. */
hy_http_loc_conf_t *hy_http_find_named(hy_http_srv_conf_t *srv, const char *name, size_t len);
/** Every module's location-level conf, freshly created (for blocks such as "if" that act as a location). */
void **hy_http_create_loc_confs(hy_conf_t *cf);
/** MIME type for a file name's extension (lower-cased lookup), or the default_type. */
hy_str_t hy_http_mime_type(const hy_http_loc_conf_t *lc, const char *path, size_t len);

/* MIME maps (http/mime.c). */
hy_mime_map_t *hy_mime_map_create(hy_pool_t *pool);
/** Add ext → type; false if ext already present (nginx warns "duplicate extension"). */
bool hy_mime_map_add(hy_mime_map_t *m, hy_str_t ext, hy_str_t type);
/** Set ext → type; an earlier type of ext is replaced (nginx's types{}: the last one wins) and, then, returned in
 * *prev with true. */
bool hy_mime_map_replace(hy_mime_map_t *m, hy_str_t ext, hy_str_t type, hy_str_t *prev);
bool hy_mime_map_find(const hy_mime_map_t *m, const char *ext, size_t len, hy_str_t *type);

#endif
