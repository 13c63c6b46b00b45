/* mime.c — extension → MIME type map: open addressing, lower-case keys, built once per config. */
#include <string.h>
#include <strings.h>
#include "core.h"

struct mime_slot {
    hy_str_t ext, type;
};

struct hy_mime_map {
    hy_pool_t *pool;
    size_t cap, used;
    struct mime_slot *slots;
};

hy_mime_map_t *hy_mime_map_create(hy_pool_t *pool)
{
    hy_mime_map_t *m = hy_pcalloc(pool, sizeof(*m));
    m->pool = pool;
    m->cap = 64;
    m->slots = hy_pcalloc(pool, m->cap * sizeof(*m->slots));
    return m;
}

static bool insert(hy_mime_map_t *m, hy_str_t ext, hy_str_t type)
{
    size_t i = hy_hash(ext.ptr, ext.len, true) & (m->cap - 1);
    while (m->slots[i].ext.ptr) {
        if (hy_str_caseeq_str(m->slots[i].ext, ext))
            return false;
        i = (i + 1) & (m->cap - 1);
    }
    m->slots[i].ext = ext;
    m->slots[i].type = type;
    m->used++;
    return true;
}

bool hy_mime_map_add(hy_mime_map_t *m, hy_str_t ext, hy_str_t type)
{
    if ((m->used + 1) * 2 > m->cap) {
        size_t old_cap = m->cap;
        struct mime_slot *old = m->slots;
        m->cap *= 2;
        m->slots = hy_pcalloc(m->pool, m->cap * sizeof(*m->slots));
        m->used = 0;
        for (size_t i = 0; i < old_cap; i++)
            if (old[i].ext.ptr)
                insert(m, old[i].ext, old[i].type);
    }
    return insert(m, ext, type);
}

bool hy_mime_map_replace(hy_mime_map_t *m, hy_str_t ext, hy_str_t type, hy_str_t *prev)
{
    for (size_t i = hy_hash(ext.ptr, ext.len, true) & (m->cap - 1); m->slots[i].ext.ptr; i = (i + 1) & (m->cap - 1))
        if (hy_str_caseeq_str(m->slots[i].ext, ext)) {
            *prev = m->slots[i].type;
            m->slots[i].type = type;
            return true;
        }
    hy_mime_map_add(m, ext, type);
    return false;
}

bool hy_mime_map_find(const hy_mime_map_t *m, const char *ext, size_t len, hy_str_t *type)
{
    if (m == NULL || m->used == 0)
        return false;
    size_t i = hy_hash(ext, len, true) & (m->cap - 1);
    while (m->slots[i].ext.ptr) {
        if (m->slots[i].ext.len == len && strncasecmp(m->slots[i].ext.ptr, ext, len) == 0) {
            *type = m->slots[i].type;
            return true;
        }
        i = (i + 1) & (m->cap - 1);
    }
    return false;
}

hy_str_t hy_http_mime_type(const hy_http_loc_conf_t *lc, const char *path, size_t len)
{
    /* the extension is what follows the last '.' of the last path segment (nginx's ngx_http_set_exten) */
    for (size_t i = len; i > 0; i--) {
        char c = path[i - 1];
        if (c == '/')
            break;
        if (c == '.' && i >= 2 && path[i - 2] != '/') { /* a leading dot ("/.html") is no extension (nginx) */
            hy_str_t t;
            if (hy_mime_map_find(lc->types, path + i, len - i, &t))
                return t;
            break;
        }
    }
    return lc->default_type;
}
