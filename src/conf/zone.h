/* zone.h — named shared memory zones (nginx's ngx_shm_zone_t): claimed by directive setters while a
 * configuration is parsed, mapped by the master before it forks the workers, kept across reloads.
 *
 * Lifecycle:
 *   1. parse: a setter calls hy_zone_claim(cf, name, size, tag) and sets zone->init and zone->data. One name
 *      claimed twice is one zone (same tag required; a size of 0 refers to a zone another directive sizes).
 *   2. hy_cycle_load: hy_zones_check reports zones nobody sized ("-t" stops here: nothing is mapped).
 *   3. the master (or the single process) calls hy_zones_map before forking: each zone is either kept from a
 *      live generation (same name, size and tag: the same mapping) or freshly mapped with a slab allocator
 *      (core/slab.h) at its start; then zone->init(zone, old_data) runs, old_data being the previous
 *      generation's zone->data for a kept zone, NULL for a new one.
 *   4. the workers use zone->slab (and zone->data) after fork; pointers into the zone are valid everywhere.
 *   5. when a generation is released (hy_cycle_unref), mappings no live generation uses any more are unmapped.
 * See docs/ARCHITECTURE.md, "Shared memory zones", for an example. */
#ifndef HY_CONF_ZONE_H
#define HY_CONF_ZONE_H

#include "conf.h"
#include "../core/shm.h"
#include "../core/slab.h"

#define HY_ZONE_MIN_PAGES 8 /* nginx refuses zones smaller than 8 pages */

typedef struct hy_zone hy_zone_t;

/** Called in the master after the zone is mapped, before any worker of the generation exists. old_data: the
 * previous generation's zone->data when the mapping was kept (its state is still in the zone), NULL for a
 * fresh zone (zeroed memory, empty allocator). 0, or -1 after logging: the generation is not started. */
typedef int (*hy_zone_init_fn)(hy_zone_t *zone, void *old_data);

struct hy_zone {
    hy_str_t name;        /* lives in the cycle pool, NUL-terminated */
    size_t size;          /* bytes; 0 while only referenced */
    const void *tag;      /* the owning module (any address unique to it, e.g. &my_module) */
    hy_zone_init_fn init; /* set by the owner after claiming; NULL: nothing to do */
    void *data;           /* the owner's (e.g. its conf); handed to the next generation's init */
    hy_slab_t *slab;      /* the allocator at the start of the mapping; NULL until mapped */
    hy_shm_t shm;         /* the mapping, shared with other generations' zones when kept */
    bool is_kept;         /* the mapping came from an earlier generation */
    /* private: the process-wide list of mapped zones (all live generations, newest first) */
    hy_zone_t *_prev, *_next;
    bool _linked;
};

/** Claim zone `name` for the module identified by `tag` while parsing (from a directive setter). size 0 is a
 * reference to a zone another directive sizes. The same name claimed again returns the same zone. NULL after
 * hy_conf_error with nginx's messages: a different tag ("... is already declared for a different use"),
 * another non-zero size ("the size N of shared memory zone ... conflicts with already declared size M"), a
 * size under HY_ZONE_MIN_PAGES pages ("zone ... is too small"). The zone lives in the cycle pool. */
hy_zone_t *hy_zone_claim(hy_conf_t *cf, hy_str_t name, size_t size, const void *tag);

/** Parse nginx's "zone=NAME:SIZE" (or "NAME:SIZE") argument, as limit_req_zone/limit_conn_zone do. Sets
 * *name (pointing into arg) and *size. 0, or -1 after hy_conf_error with nginx's messages: "invalid zone size",
 * "zone ... is too small", "... must have \"zone\" parameter" (empty name). */
int hy_zone_parse_named(hy_conf_t *cf, hy_str_t arg, hy_str_t *name, size_t *size);
/** Parse nginx's "shared:NAME:SIZE" argument, as ssl_session_cache does. 0, or -1 after hy_conf_error:
 * "invalid session cache", "session cache ... is too small". */
int hy_zone_parse_shared(hy_conf_t *cf, hy_str_t arg, hy_str_t *name, size_t *size);

/** After parsing: every claimed zone has a size. 0, or -1 after logging nginx's
 * "zero size shared memory zone" (to stderr and the error log). Maps nothing (this is all "-t" does). */
int hy_zones_check(hy_cycle_t *cycle);
/** Map the generation's zones (keeping live mappings with the same name, size and tag) and run their init
 * callbacks, in the master before forking. 0, or -1 after logging; the generation's mappings are released
 * with it either way (hy_cycle_unref). Call once per generation. */
int hy_zones_map(hy_cycle_t *cycle);
/** In a worker just forked for `cycle`: unmap the zones inherited from other generations that `cycle` does not
 * use (a reload forks the new workers while the old generation is still alive in the master), so the memory of
 * a dropped zone is freed once the old workers are gone. */
void hy_zones_worker_init(hy_cycle_t *cycle);
/** Number of distinct mappings this process holds (for tests and diagnostics). */
size_t hy_zones_mapped(void);

#endif
