/* cache.h — the response cache of the upstream engine (nginx's proxy_cache, fastcgi_cache, uwsgi_cache,
 * scgi_cache): the settings every upstream module shares as <prefix>_cache* (cache_conf.c), the cache paths
 * (<prefix>_cache_path: a keys zone naming a directory), and the engine's hooks (cache.c).
 *
 * Storage: one file per key, named by the hex MD5 of the key under the path's levels (levels=1:2: the last hex
 * digit, then the two before it, as nginx). The disk is the index: a lookup opens that file; every worker sees
 * what another stored. A file is written to "<name>.<pid>.<n>" in the same directory and renamed when the body is
 * complete (a reader never sees half a response). Its layout (host byte order):
 *   hy_ucache_hdr_t | key | vary values | etag | raw head ("NNN reason\r\n" then "Name: value\r\n" fields,
 *   without framing fields) | body (decoded: no chunked framing)
 * valid_until (and the stale-while-revalidate and stale-if-error times) sit at fixed offsets so a revalidation (304)
 * rewrites them in place. The keys zone is claimed (its name and size checked as nginx) but holds no state; min_uses
 * counts per worker; the lock, which also marks an expired entry as being updated, is a "<name>.lock" file.
 *
 * The engine calls, in order: hy_ucache_start (before anything: HIT served from the file, or the request goes on
 * to the upstream with $upstream_cache_status MISS/EXPIRED/BYPASS), hy_ucache_head (the upstream's head: a 304
 * that revalidates, a status to answer with the stale file), hy_ucache_store_begin (after the module's on_head:
 * decide to store, write the head), hy_ucache_tee (each piece of decoded body), hy_ucache_store_end. */
#ifndef HY_UPSTREAM_CACHE_H
#define HY_UPSTREAM_CACHE_H

#include "upstream.h"
#include "../http/vars-t.h"

struct hy_zone;

/* *_ignore_headers bits */
enum {
    HY_UIGN_XA_REDIRECT = 0x1,
    HY_UIGN_XA_EXPIRES = 0x2,
    HY_UIGN_XA_LIMIT_RATE = 0x4,
    HY_UIGN_XA_BUFFERING = 0x8,
    HY_UIGN_XA_CHARSET = 0x10,
    HY_UIGN_EXPIRES = 0x20,
    HY_UIGN_CACHE_CONTROL = 0x40,
    HY_UIGN_SET_COOKIE = 0x80,
    HY_UIGN_VARY = 0x100,
};

/* *_cache_use_stale bits: the HY_UPS_FT_* ones and */
#define HY_UCACHE_STALE_UPDATING 0x10000

/* *_cache_methods bits */
enum { HY_UCACHE_GET = 1, HY_UCACHE_HEAD = 2, HY_UCACHE_POST = 4 };

/** One *_cache_path (the keys zone's data). */
typedef struct hy_ucache_path {
    hy_str_t name;         /* the keys zone */
    hy_str_t dir;          /* absolute, no trailing '/' */
    int levels[3];         /* hex digits per directory level, 0: none */
    int64_t inactive_ms;   /* inactive= (default 10m): the cache manager removes entries unused that long */
    int64_t max_size;      /* max_size= (-1: none; 0 keeps nothing, as nginx): the cache manager removes the least recently used above it */
} hy_ucache_path_t;

typedef struct hy_ucache_valid {
    int status; /* 0: any */
    int64_t sec;
} hy_ucache_valid_t;

/** The location's cache settings (inside hy_uconf_t). */
typedef struct hy_ucache_conf {
    struct hy_zone *zone;       /* *_cache NAME (NULL with off, or unset) */
    hy_complex_t *zone_cv;      /* *_cache with variables: the zone's name at run time ("" no cache) */
    int set;                    /* HY_UNSET, 0 off, 1 a zone */
    hy_complex_t *key;          /* *_cache_key; NULL: inherit (proxy's default at merge) */
    hy_array_t *valid;          /* hy_ucache_valid_t; NULL: inherit */
    int methods;                /* HY_UCACHE_* (GET and HEAD always) */
    hy_array_t *bypass;         /* hy_complex_t; NULL: inherit */
    hy_array_t *no_cache;       /* hy_complex_t; NULL: inherit */
    int64_t min_uses;
    int use_stale;              /* HY_UPS_FT_* | HY_UCACHE_STALE_UPDATING */
    int lock;
    int64_t lock_timeout, lock_age;
    int revalidate, convert_head, background_update;
    int force_ranges;           /* *_force_ranges */
    int64_t max_range_offset;   /* accepted */
    int ignore_headers;         /* a copy of *_ignore_headers (HY_UIGN_*), set by hy_uconf_merge */
} hy_ucache_conf_t;

/** create_loc_conf: every field unset. */
void hy_ucache_conf_init(hy_ucache_conf_t *c);
/** Inheritance and defaults; `module` ("proxy") gets the default key $scheme$proxy_host$request_uri, the others
 * need *_cache_key with *_cache (nginx's "no \"fastcgi_cache_key\" for \"fastcgi_cache\""). 0 or -1. */
int hy_ucache_conf_merge(hy_conf_t *cf, hy_ucache_conf_t *c, const hy_ucache_conf_t *p, const char *module);
/** Is the cache on for these settings? */
static inline bool hy_ucache_on(const hy_ucache_conf_t *c)
{
    return c != NULL && (c->zone != NULL || c->zone_cv != NULL);
}
/** The *_cache_path whose keys zone is `name` (run time: *_cache with variables), or NULL. */
const hy_ucache_path_t *hy_ucache_path_find(hy_str_t name);

int hy_ucache_set_path(hy_conf_t *cf, const hy_directive_t *d, void *conf);
int hy_ucache_set_cache(hy_conf_t *cf, const hy_directive_t *d, void *conf);
int hy_ucache_set_key(hy_conf_t *cf, const hy_directive_t *d, void *conf);
int hy_ucache_set_valid(hy_conf_t *cf, const hy_directive_t *d, void *conf);
int hy_ucache_set_predicates(hy_conf_t *cf, const hy_directive_t *d, void *conf);
extern const hy_enum_t hy_ucache_methods_names[];
extern const hy_enum_t hy_ucache_stale_names[];

/* the engine's hooks are declared in upstream.h (hy_ucache_start ...) */

/** The cache manager (cache_manager.c; nginx's cache manager process, run by worker 0 on its loop): every
 * min(inactive, 10 s) it walks each cache path's levels, a bounded number of entries per tick, removes entries
 * whose last access (the file's mtime: stored, or touched by a HIT) is older than inactive=, leftover ".lock" files
 * and temporary files whose writer is gone; then, above max_size= (disk blocks of the entries), the least recently
 * used entries until under it. */
extern hy_module_t hy_http_upstream_cache_manager_module;

/* ---- for cache.c (cache_fields.c) */
typedef struct hy_ucache_stale {
    int64_t swr_sec, sie_sec; /* Cache-Control stale-while-revalidate=, stale-if-error= (0: none) */
} hy_ucache_stale_t;
/** Until when (unix seconds) u's response may be kept: its fields (X-Accel-Expires, Cache-Control, Expires, unless
 * ignored) or *_cache_valid for status; 0 not to be stored (*uncacheable: a field forbids it); -1 with fields_only
 * when no field says. A past "X-Accel-Expires: @t" is kept (stored, expired at once, as nginx). ext (optional):
 * the stale-* extensions. */
int64_t hy_ucache__validity(hy_ureq_t *u, int status, bool fields_only, bool *uncacheable, hy_ucache_stale_t *ext);
/** The response's Vary names, normalized (lower case, trimmed, empties dropped, ',' between; several Vary fields
 * joined). */
hy_str_t hy_ucache__vary_names(hy_ureq_t *u);
/** "names\n" then the request's values of those fields (whitespace-normalized, repeated fields joined), one a line. */
hy_str_t hy_ucache__vary_values(hy_req_t *req, hy_str_t names);
/** The cache path a keys zone names (NULL: not a cache's zone, or a zone only referenced). */
const hy_ucache_path_t *hy_ucache__zone_path(const struct hy_zone *z);
/** $upstream_cache_status, $upstream_cache_last_modified, $upstream_cache_etag. */
int hy_ucache__define_vars(hy_conf_t *cf);

#endif
