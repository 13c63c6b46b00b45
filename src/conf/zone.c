/* zone.c — named shared memory zones: claims at parse time (nginx's ngx_shared_memory_add rules and
 * messages), the two argument spellings, mapping before fork and keeping mappings across reloads. */
#include <errno.h>
#include <string.h>
#include <unistd.h>
#include "zone.h"
#include "cycle.h"
#include "../core/log.h"

/* Every mapped zone of every live generation of this process, newest first. A mapping is shared by the
 * zones of several generations when it was kept; it is unmapped when the last of them is released. */
static hy_zone_t *live;

static size_t min_size(void)
{
    return HY_ZONE_MIN_PAGES * (size_t)sysconf(_SC_PAGESIZE);
}

hy_zone_t *hy_zone_claim(hy_conf_t *cf, hy_str_t name, size_t size, const void *tag)
{
    hy_cycle_t *cycle = cf->cycle;
    if (size != 0 && size < min_size()) {
        hy_conf_error(cf, "zone \"%.*s\" is too small", (int)name.len, name.ptr);
        return NULL;
    }
    if (cycle->zones == NULL)
        cycle->zones = hy_array_create(cycle->pool, 4, sizeof(hy_zone_t *));
    hy_zone_t **zs = cycle->zones->elts;
    for (size_t i = 0; i < cycle->zones->nelts; i++) {
        hy_zone_t *z = zs[i];
        if (!hy_str_eq_str(z->name, name))
            continue;
        if (z->tag != tag) {
            hy_conf_error(cf, "the shared memory zone \"%.*s\" is already declared for a different use", (int)name.len,
                          name.ptr);
            return NULL;
        }
        if (z->size == 0)
            z->size = size;
        if (size != 0 && size != z->size) {
            hy_conf_error(cf, "the size %zu of shared memory zone \"%.*s\" conflicts with already declared size %zu",
                          size, (int)name.len, name.ptr, z->size);
            return NULL;
        }
        return z;
    }
    hy_zone_t *z = hy_pcalloc(cycle->pool, sizeof(*z));
    z->name = hy_str_dup(cycle->pool, name);
    z->size = size;
    z->tag = tag;
    *(hy_zone_t **)hy_array_push(cycle->zones) = z;
    return z;
}

/* nginx's ngx_parse_size: digits with an optional k/K/m/M (no g, unlike offsets); -1 on error. */
static int64_t parse_zone_size(const char *p, size_t n)
{
    if (n > 0 && (p[n - 1] == 'g' || p[n - 1] == 'G'))
        return -1;
    return hy_parse_size(p, n);
}

int hy_zone_parse_named(hy_conf_t *cf, hy_str_t arg, hy_str_t *name, size_t *size)
{
    hy_str_t rest = arg;
    if (rest.len >= 5 && memcmp(rest.ptr, "zone=", 5) == 0) {
        rest.ptr += 5;
        rest.len -= 5;
    }
    const char *colon = memchr(rest.ptr, ':', rest.len);
    if (colon == NULL)
        return hy_conf_error(cf, "invalid zone size \"%.*s\"", (int)arg.len, arg.ptr);
    *name = (hy_str_t){rest.ptr, (size_t)(colon - rest.ptr)};
    int64_t v = parse_zone_size(colon + 1, (size_t)(rest.ptr + rest.len - colon - 1));
    if (v < 0)
        return hy_conf_error(cf, "invalid zone size \"%.*s\"", (int)arg.len, arg.ptr);
    if ((uint64_t)v < min_size())
        return hy_conf_error(cf, "zone \"%.*s\" is too small", (int)arg.len, arg.ptr);
    if (name->len == 0) {
        size_t n = 0;
        hy_str_t *w = cf->args ? hy_conf_args(cf, &n) : NULL;
        return hy_conf_error(cf, "\"%.*s\" must have \"zone\" parameter", n ? (int)w[0].len : 4, n ? w[0].ptr : "zone");
    }
    *size = (size_t)v;
    return 0;
}

int hy_zone_parse_shared(hy_conf_t *cf, hy_str_t arg, hy_str_t *name, size_t *size)
{
    if (arg.len <= 7 || memcmp(arg.ptr, "shared:", 7) != 0)
        return hy_conf_error(cf, "invalid session cache \"%.*s\"", (int)arg.len, arg.ptr);
    const char *start = arg.ptr + 7, *end = arg.ptr + arg.len;
    const char *colon = memchr(start, ':', (size_t)(end - start));
    if (colon == NULL || colon == start)
        return hy_conf_error(cf, "invalid session cache \"%.*s\"", (int)arg.len, arg.ptr);
    int64_t v = parse_zone_size(colon + 1, (size_t)(end - colon - 1));
    if (v < 0)
        return hy_conf_error(cf, "invalid session cache \"%.*s\"", (int)arg.len, arg.ptr);
    if ((uint64_t)v < min_size())
        return hy_conf_error(cf, "session cache \"%.*s\" is too small", (int)arg.len, arg.ptr);
    *name = (hy_str_t){(char *)start, (size_t)(colon - start)};
    *size = (size_t)v;
    return 0;
}

int hy_zones_check(hy_cycle_t *cycle)
{
    if (cycle->zones == NULL)
        return 0;
    hy_zone_t **zs = cycle->zones->elts;
    for (size_t i = 0; i < cycle->zones->nelts; i++) {
        if (zs[i]->size == 0) {
            /* nginx reports this after parsing, without a file:line */
            hy_log_stderr(HY_LOG_EMERG, "zero size shared memory zone \"%s\"", zs[i]->name.ptr);
            return -1;
        }
    }
    return 0;
}

/* The newest live zone whose mapping a zone of the new generation can keep. */
static hy_zone_t *find_live(const hy_zone_t *z)
{
    for (hy_zone_t *l = live; l != NULL; l = l->_next)
        if (l->tag == z->tag && l->size == z->size && hy_str_eq_str(l->name, z->name))
            return l;
    return NULL;
}

static void link_live(hy_zone_t *z)
{
    z->_prev = NULL;
    z->_next = live;
    if (live)
        live->_prev = z;
    live = z;
    z->_linked = true;
}

static void unlink_live(hy_zone_t *z)
{
    if (z->_prev)
        z->_prev->_next = z->_next;
    else
        live = z->_next;
    if (z->_next)
        z->_next->_prev = z->_prev;
    z->_prev = z->_next = NULL;
    z->_linked = false;
}

/* Pool cleanup of a generation: its zones leave the live list; mappings nobody else uses are unmapped. */
static void release_zones(void *arg)
{
    hy_cycle_t *cycle = arg;
    hy_zone_t **zs = cycle->zones->elts;
    for (size_t i = 0; i < cycle->zones->nelts; i++) {
        hy_zone_t *z = zs[i];
        if (!z->_linked)
            continue;
        unlink_live(z);
        bool shared = false;
        for (hy_zone_t *l = live; l != NULL && !shared; l = l->_next)
            shared = l->shm.addr == z->shm.addr;
        if (!shared)
            hy_shm_unmap(&z->shm);
        z->slab = NULL;
    }
}

int hy_zones_map(hy_cycle_t *cycle)
{
    if (cycle->zones == NULL || cycle->zones->nelts == 0)
        return 0;
    hy_pool_on_clear(cycle->pool, release_zones, cycle);
    hy_zone_t **zs = cycle->zones->elts;
    for (size_t i = 0; i < cycle->zones->nelts; i++) {
        hy_zone_t *z = zs[i];
        HY_ASSERT(!z->_linked && z->size > 0);
        hy_zone_t *old = find_live(z);
        void *old_data = NULL;
        if (old != NULL) {
            z->shm = old->shm;
            z->slab = old->slab;
            z->is_kept = true;
            old_data = old->data;
        } else {
            int rc = hy_shm_map(&z->shm, z->size);
            if (rc != 0) {
                hy_log(HY_LOG_EMERG,
                       "mmap(MAP_ANONYMOUS|MAP_SHARED, %zu) failed for shared memory zone \"%s\" "
                       "(%d: %s)",
                       z->size, z->name.ptr, -rc, strerror(-rc));
                return -1;
            }
            z->slab = hy_slab_init(z->shm.addr, z->shm.size);
            HY_ASSERT(z->slab != NULL); /* sizes are at least HY_ZONE_MIN_PAGES pages */
        }
        link_live(z);
        if (z->init != NULL && z->init(z, old_data) != 0)
            return -1;
    }
    return 0;
}

static bool in_cycle(hy_cycle_t *cycle, const hy_zone_t *z)
{
    hy_zone_t **zs = cycle->zones ? cycle->zones->elts : NULL;
    for (size_t i = 0; zs && i < cycle->zones->nelts; i++)
        if (zs[i] == z)
            return true;
    return false;
}

void hy_zones_worker_init(hy_cycle_t *cycle)
{
    hy_zone_t *others = NULL; /* the other generations' zones, unlinked, chained through _next */
    for (hy_zone_t *z = live, *next; z != NULL; z = next) {
        next = z->_next;
        if (in_cycle(cycle, z))
            continue;
        unlink_live(z);
        z->_next = others;
        others = z;
    }
    for (hy_zone_t *z = others, *next; z != NULL; z = next) {
        next = z->_next;
        z->_next = NULL;
        bool used = false; /* kept by this generation: the same mapping */
        for (hy_zone_t *l = live; l != NULL && !used; l = l->_next)
            used = l->shm.addr == z->shm.addr;
        if (!used && z->shm.addr != NULL) {
            void *addr = z->shm.addr;
            hy_shm_unmap(&z->shm);
            for (hy_zone_t *o = next; o != NULL; o = o->_next) /* other generations sharing it */
                if (o->shm.addr == addr)
                    o->shm = (hy_shm_t){0};
        }
        z->shm = (hy_shm_t){0};
        z->slab = NULL;
    }
}

size_t hy_zones_mapped(void)
{
    size_t n = 0;
    for (hy_zone_t *z = live; z != NULL; z = z->_next) {
        bool seen = false; /* count each mapping once: it is listed once per generation keeping it */
        for (hy_zone_t *e = live; e != z && !seen; e = e->_next)
            seen = e->shm.addr == z->shm.addr;
        n += !seen;
    }
    return n;
}
