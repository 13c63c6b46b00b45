/* sticky.c — session affinity (nginx's `sticky`): cookie, route and learn modes; see sticky.h. The group keeps a
 * pointer to its sticky conf; balancer.c asks hy_upstream__sticky_peer first, upstream.c calls
 * hy_upstream__sticky_head when a response head is accepted. Learn mode keeps its sessions (key -> peer id) in
 * its own shared zone, so every worker sees them and they survive a reload that keeps the zone. */
#include <stdio.h>
#include <string.h>
#include <time.h>
#include <openssl/evp.h>
#include "sticky.h"
#include "../core/clock.h"
#include "../core/log.h"
#include "../conf/zone.h"
#include "../http/vars.h"

enum { ST_COOKIE = 1, ST_ROUTE, ST_LEARN };

#define ST_EXPIRES_NONE (-1)
#define ST_EXPIRES_MAX (-2)
#define ST_BUCKETS 1024

typedef struct st_session {
    struct st_session *next;
    uint64_t expire_ms;
    uint64_t ns; /* the upstream's (a zone may hold the sessions of several) */
    uint8_t idlen;
    char id[64];    /* the peer's id */
    size_t keylen;
    char key[];
} st_session_t;

typedef struct st_shared {
    st_session_t *buckets[ST_BUCKETS];
} st_shared_t;

typedef struct hy_upstream_sticky {
    int mode;
    /* cookie */
    hy_str_t name;
    hy_complex_t cookie; /* $cookie_NAME */
    int64_t expires;     /* seconds, or ST_EXPIRES_* */
    hy_complex_t *domain, *samesite;
    hy_str_t path;
    bool secure, httponly;
    /* route; learn's lookup */
    hy_complex_t *vars;
    size_t nvars;
    /* learn */
    hy_complex_t *create;
    hy_zone_t *zone;
    uint64_t ns; /* hash of the upstream's name: its sessions in the zone */
    int64_t timeout_ms;
    bool header;
} hy_upstream_sticky_t;

/* ---------------------------------------------------------------- peer ids */

/* The peer's id: its route=, else the hex MD5 of its address (cookie and learn; route mode has only routes). */
static size_t peer_id(const hy_upstream_sticky_t *s, hy_upstream_peer_t *p, char out[64])
{
    if (p->route.len || s->mode == ST_ROUTE) {
        size_t n = p->route.len < 64 ? p->route.len : 64;
        if (n)
            memcpy(out, p->route.ptr, n);
        return n;
    }
    if (p->sticky_id_set) {
        memcpy(out, p->sticky_id, 32);
        return 32;
    }
    const char *a = p->name.ptr;
    size_t alen = p->name.len;
    if (alen > 5 && memcmp(a, "unix:", 5) == 0) /* the socket path */
        a += 5, alen -= 5;
    unsigned char md[EVP_MAX_MD_SIZE];
    unsigned int mdlen = 0;
    if (EVP_Digest(a, alen, md, &mdlen, EVP_md5(), NULL) != 1)
        return 0;
    if (mdlen != 16)
        return 0;
    hy_hex_dump(out, md, 16);
    memcpy(p->sticky_id, out, 32);
    p->sticky_id_set = true;
    return 32;
}

static bool tried_has(const uint64_t *t, size_t i)
{
    return i < 256 && (t[i / 64] >> (i % 64)) & 1;
}

/* as balancer.c's rule, without `drain` (a bound request may go to a draining peer) */
static bool usable(const hy_upstream_peer_t *p, uint64_t now)
{
    if (p->down || (p->hc_down && *p->hc_down))
        return false;
    if (p->max_fails && p->fails >= p->max_fails && now - p->checked_ms <= (uint64_t)p->fail_timeout_ms)
        return false;
    return !hy_upstream_peer_full(p);
}

/* The peer whose id is `id` and that can take the request: primaries first; a backup only when no primary can. */
static hy_upstream_peer_t *by_id(const hy_upstream_sticky_t *s, hy_upstream_group_t *g, hy_str_t id, uint64_t *tried)
{
    if (id.len == 0 || id.len > 64)
        return NULL;
    uint64_t now = hy_clock_now_ms();
    size_t nprim = g->npeers - g->nbackup;
    bool one = nprim == 1 && g->nbackup == 0; /* a lone peer: max_fails does not count (as the balancer) */
    for (size_t i = 0; i < g->npeers; i++) {
        hy_upstream_peer_t *p = &g->peers[i];
        char buf[64];
        size_t n = peer_id(s, p, buf);
        if (n != id.len || memcmp(buf, id.ptr, n) != 0 || tried_has(tried, i))
            continue;
        if (one ? (p->down || (p->hc_down && *p->hc_down) || hy_upstream_peer_full(p))
                : !usable(p, now))
            continue;
        if (p->backup) {
            bool primary_alive = false;
            for (size_t j = 0; j < nprim && !primary_alive; j++)
                primary_alive = !tried_has(tried, j) && !g->peers[j].drain && usable(&g->peers[j], now);
            if (primary_alive)
                return NULL;
        }
        if (now - p->checked_ms > (uint64_t)p->fail_timeout_ms)
            p->checked_ms = now;
        if (i < 256)
            tried[i / 64] |= UINT64_C(1) << (i % 64);
        return p;
    }
    return NULL;
}

/* ---------------------------------------------------------------- learn: the sessions in the zone */

static uint32_t key_hash(hy_str_t k)
{
    uint32_t h = 2166136261u;
    for (size_t i = 0; i < k.len; i++)
        h = (h ^ (unsigned char)k.ptr[i]) * 16777619u;
    return h;
}

/* The session of `key` (zone locked), expired ones dropped on the way. */
static st_session_t **session_find(hy_zone_t *z, uint64_t ns, hy_str_t key, uint64_t now)
{
    st_shared_t *sh = z->data;
    st_session_t **pp = &sh->buckets[(key_hash(key) ^ (uint32_t)ns) % ST_BUCKETS];
    while (*pp) {
        st_session_t *e = *pp;
        if (e->expire_ms <= now) {
            *pp = e->next;
            hy_slab_free_locked(z->slab, e);
            continue;
        }
        if (e->ns == ns && e->keylen == key.len && memcmp(e->key, key.ptr, key.len) == 0)
            return pp;
        pp = &e->next;
    }
    return pp;
}

static bool learn_lookup(hy_upstream_sticky_t *s, hy_str_t key, char id[64], size_t *idlen)
{
    hy_zone_t *z = s->zone;
    if (z->data == NULL)
        return false;
    uint64_t now = hy_clock_now_ms();
    hy_slab_lock(z->slab);
    st_session_t **pp = session_find(z, s->ns, key, now);
    bool found = *pp != NULL;
    if (found) {
        *idlen = (*pp)->idlen;
        memcpy(id, (*pp)->id, *idlen);
    }
    hy_slab_unlock(z->slab);
    return found;
}

static void learn_store(hy_upstream_sticky_t *s, hy_str_t key, const char *id, size_t idlen)
{
    hy_zone_t *z = s->zone;
    if (z->data == NULL || key.len == 0 || key.len > 4096)
        return;
    uint64_t now = hy_clock_now_ms();
    hy_slab_lock(z->slab);
    st_session_t **pp = session_find(z, s->ns, key, now), *e = *pp;
    if (e == NULL) {
        e = hy_slab_alloc_locked(z->slab, sizeof(*e) + key.len);
        if (e == NULL) {
            hy_slab_unlock(z->slab);
            hy_log(HY_LOG_ERR, "could not allocate new session in zone \"%s\"", z->name.ptr);
            return;
        }
        e->next = NULL;
        e->ns = s->ns;
        e->keylen = key.len;
        memcpy(e->key, key.ptr, key.len);
        *pp = e;
    }
    e->idlen = (uint8_t)idlen;
    memcpy(e->id, id, idlen);
    e->expire_ms = now + (uint64_t)s->timeout_ms;
    hy_slab_unlock(z->slab);
}

static int zone_init(hy_zone_t *z, void *old_data)
{
    if (old_data != NULL) { /* kept: the sessions stay */
        z->data = old_data;
        return 0;
    }
    st_shared_t *sh = hy_slab_calloc(z->slab, sizeof(*sh));
    if (sh == NULL) {
        hy_log(HY_LOG_ERR, "zone \"%s\" is too small for sticky sessions", z->name.ptr);
        return -1;
    }
    z->data = sh;
    return 0;
}

/* ---------------------------------------------------------------- run time */

/* The first non-empty value of the variables */
static hy_str_t first_value(hy_req_t *req, const hy_upstream_sticky_t *s)
{
    hy_str_t v = HY_STR_NULL;
    for (size_t i = 0; i < s->nvars; i++) {
        hy_vars_eval(req, &s->vars[i], &v);
        if (v.len)
            return v;
    }
    return HY_STR_NULL;
}

hy_upstream_peer_t *hy_upstream__sticky_peer(hy_upstream_group_t *g, hy_req_t *req, uint64_t *tried)
{
    hy_upstream_sticky_t *s = g->sticky;
    hy_str_t v;
    switch (s->mode) {
    case ST_COOKIE:
        hy_vars_eval(req, &s->cookie, &v);
        return by_id(s, g, v, tried);
    case ST_ROUTE: {
        v = first_value(req, s);
        const char *dot = v.len ? memrchr(v.ptr, '.', v.len) : NULL;
        if (dot)
            v = (hy_str_t){(char *)dot + 1, v.len - (size_t)(dot + 1 - v.ptr)};
        return by_id(s, g, v, tried);
    }
    default: {
        v = first_value(req, s);
        char id[64];
        size_t idlen;
        if (v.len == 0 || !learn_lookup(s, v, id, &idlen))
            return NULL;
        return by_id(s, g, (hy_str_t){id, idlen}, tried);
    }
    }
}

static size_t cookie_time(char *out, size_t n, time_t t)
{
    struct tm tm;
    gmtime_r(&t, &tm);
    return strftime(out, n, "%a, %d-%b-%y %H:%M:%S GMT", &tm);
}

/* learn: the response names the session (create), which is bound to the peer that answered; a response that
 * names none prolongs the session the request was bound by (lookup), if it has not expired meanwhile */
static void learn_response(hy_upstream_sticky_t *s, hy_ureq_t *u, const char *id, size_t idlen)
{
    hy_str_t key;
    hy_vars_eval(u->req, s->create, &key);
    if (key.len) {
        learn_store(s, key, id, idlen);
        return;
    }
    key = first_value(u->req, s);
    hy_zone_t *z = s->zone;
    if (key.len == 0 || z->data == NULL)
        return;
    uint64_t now = hy_clock_now_ms();
    hy_slab_lock(z->slab);
    st_session_t **pp = session_find(z, s->ns, key, now);
    if (*pp)
        (*pp)->expire_ms = now + (uint64_t)s->timeout_ms;
    hy_slab_unlock(z->slab);
}

void hy_upstream__sticky_response(hy_ureq_t *u, bool complete)
{
    hy_upstream_sticky_t *s = u->group->sticky;
    hy_req_t *req = u->req;
    if (u->peer == NULL)
        return;
    char id[64];
    size_t idlen = peer_id(s, u->peer, id);
    if (s->mode == ST_LEARN) {
        if (idlen && complete == !s->header) /* `header`: as soon as the head arrives; else once it is all in */
            learn_response(s, u, id, idlen);
        return;
    }
    if (complete)
        return;
    if (s->mode != ST_COOKIE || idlen == 0)
        return;
    hy_str_t domain = HY_STR_NULL, samesite = HY_STR_NULL;
    if (s->domain)
        hy_vars_eval(req, s->domain, &domain);
    if (s->samesite) {
        hy_vars_eval(req, s->samesite, &samesite);
        if (samesite.len && !hy_str_caseeq(samesite, "strict") && !hy_str_caseeq(samesite, "lax") &&
            !hy_str_caseeq(samesite, "none"))
            samesite = HY_STR("strict"); /* a value that is none of the three */
    }
    size_t cap = s->name.len + idlen + domain.len + s->path.len + samesite.len + 200;
    char *b = hy_palloc(req->pool, cap), *o = b;
    memcpy(o, s->name.ptr, s->name.len);
    o += s->name.len;
    *o++ = '=';
    memcpy(o, id, idlen);
    o += idlen;
    if (s->expires == ST_EXPIRES_MAX) {
        o += sprintf(o, "; expires=Thu, 31-Dec-37 23:55:55 GMT; max-age=315360000");
    } else if (s->expires >= 0) {
        o += sprintf(o, "; expires=");
        o += cookie_time(o, 40, (time_t)(hy_clock_time() + s->expires));
        o += sprintf(o, "; max-age=%lld", (long long)s->expires);
    }
    if (domain.len)
        o += sprintf(o, "; domain=%.*s", (int)domain.len, domain.ptr);
    if (s->path.len)
        o += sprintf(o, "; path=%.*s", (int)s->path.len, s->path.ptr);
    if (samesite.len)
        o += sprintf(o, "; samesite=%.*s", (int)samesite.len, samesite.ptr);
    if (s->secure)
        o += sprintf(o, "; secure");
    if (s->httponly)
        o += sprintf(o, "; httponly");
    hy_req_add_header(req, HY_STR("Set-Cookie"), (hy_str_t){b, (size_t)(o - b)});
}

/* ---------------------------------------------------------------- configuration */

static bool param(hy_str_t a, const char *name, hy_str_t *val)
{
    size_t n = strlen(name);
    if (a.len < n || memcmp(a.ptr, name, n) != 0)
        return false;
    *val = (hy_str_t){a.ptr + n, a.len - n};
    return true;
}

static hy_complex_t *compile(hy_conf_t *cf, hy_str_t text)
{
    hy_complex_t *c = hy_pcalloc(cf->pool, sizeof(*c));
    return hy_vars_compile(cf, text, c) == 0 ? c : NULL;
}

static int is_var(hy_str_t v)
{
    return v.len > 1 && v.ptr[0] == '$';
}

static int sticky_tag;

int hy_upstream__sticky_conf(hy_conf_t *cf, hy_upstream_group_t *g)
{
    size_t n;
    hy_str_t *a = hy_conf_args(cf, &n);
    if (g->sticky != NULL)
        return hy_conf_error(cf, "\"sticky\" directive is duplicate");
    hy_upstream_sticky_t *s = hy_pcalloc(cf->pool, sizeof(*s));
    s->expires = ST_EXPIRES_NONE;
    s->timeout_ms = 600000;
    if (hy_str_eq(a[1], "cookie")) {
        if (n < 3)
            return hy_conf_error(cf, "invalid number of arguments in \"sticky\" directive");
        s->mode = ST_COOKIE;
        s->name = hy_str_dup(cf->pool, a[2]);
        char buf[300];
        int bl = snprintf(buf, sizeof(buf), "$cookie_%.*s", (int)a[2].len, a[2].ptr);
        if (a[2].len == 0 || bl >= (int)sizeof(buf))
            return hy_conf_error(cf, "invalid cookie name \"%s\"", a[2].ptr);
        if (hy_vars_compile(cf, hy_str_dup(cf->pool, (hy_str_t){buf, (size_t)bl}), &s->cookie) != 0)
            return -1;
        for (size_t i = 3; i < n; i++) {
            hy_str_t v;
            if (param(a[i], "expires=", &v)) {
                if (hy_str_eq(v, "max")) {
                    s->expires = ST_EXPIRES_MAX;
                } else if ((s->expires = hy_parse_sec(v.ptr, v.len)) < 0) {
                    return hy_conf_error(cf, "invalid \"expires\" parameter \"%s\"", a[i].ptr);
                }
            } else if (param(a[i], "domain=", &v)) {
                if (v.len == 0 || (s->domain = compile(cf, v)) == NULL)
                    return v.len ? -1 : hy_conf_error(cf, "invalid \"domain\" parameter \"%s\"", a[i].ptr);
            } else if (param(a[i], "path=", &v)) {
                if (v.len == 0)
                    return hy_conf_error(cf, "invalid \"path\" parameter \"%s\"", a[i].ptr);
                s->path = hy_str_dup(cf->pool, v);
            } else if (param(a[i], "samesite=", &v)) {
                if (!is_var(v) && !hy_str_eq(v, "strict") && !hy_str_eq(v, "lax") && !hy_str_eq(v, "none"))
                    return hy_conf_error(cf, "invalid \"samesite\" parameter \"%s\"", a[i].ptr);
                if ((s->samesite = compile(cf, v)) == NULL)
                    return -1;
            } else if (hy_str_eq(a[i], "secure")) {
                s->secure = true;
            } else if (hy_str_eq(a[i], "httponly")) {
                s->httponly = true;
            } else {
                return hy_conf_error(cf, "invalid parameter \"%s\"", a[i].ptr);
            }
        }
    } else if (hy_str_eq(a[1], "route")) {
        if (n < 3)
            return hy_conf_error(cf, "invalid number of arguments in \"sticky\" directive");
        s->mode = ST_ROUTE;
        s->vars = hy_pcalloc(cf->pool, (n - 2) * sizeof(*s->vars));
        for (size_t i = 2; i < n; i++) {
            if (!is_var(a[i]))
                return hy_conf_error(cf, "invalid parameter \"%s\"", a[i].ptr);
            if (hy_vars_compile(cf, a[i], &s->vars[s->nvars++]) != 0)
                return -1;
        }
    } else if (hy_str_eq(a[1], "learn")) {
        s->mode = ST_LEARN;
        hy_str_t zname = HY_STR_NULL, lookup = HY_STR_NULL, create = HY_STR_NULL;
        size_t zsize = 0;
        for (size_t i = 2; i < n; i++) {
            hy_str_t v;
            if (param(a[i], "zone=", &v)) {
                if (hy_zone_parse_named(cf, v, &zname, &zsize) != 0)
                    return -1;
            } else if (param(a[i], "create=", &v)) {
                if (!is_var(v))
                    return hy_conf_error(cf, "invalid parameter \"%s\"", a[i].ptr);
                create = v;
            } else if (param(a[i], "lookup=", &v)) {
                if (!is_var(v))
                    return hy_conf_error(cf, "invalid parameter \"%s\"", a[i].ptr);
                lookup = v;
            } else if (param(a[i], "timeout=", &v)) {
                int64_t t = hy_parse_msec(v.ptr, v.len);
                if (t <= 0)
                    return hy_conf_error(cf, "invalid \"timeout\" parameter \"%s\"", a[i].ptr);
                s->timeout_ms = t;
            } else if (hy_str_eq(a[i], "header")) {
                s->header = true;
            } else if (hy_str_eq(a[i], "sync")) { /* as limit_req_zone ... sync (docs/DIFFERENCES.md) */
                return hy_conf_error(cf, "invalid parameter \"sync\": zone synchronization is not supported");
            } else {
                return hy_conf_error(cf, "invalid parameter \"%s\"", a[i].ptr);
            }
        }
        if (zname.len == 0)
            return hy_conf_error(cf, "\"zone\" is not specified in \"sticky\" directive");
        if (create.len == 0)
            return hy_conf_error(cf, "\"create\" is not specified in \"sticky\" directive");
        if (lookup.len == 0)
            return hy_conf_error(cf, "\"lookup\" is not specified in \"sticky\" directive");
        if ((s->create = compile(cf, create)) == NULL)
            return -1;
        s->vars = compile(cf, lookup);
        if (s->vars == NULL)
            return -1;
        s->nvars = 1;
        s->zone = hy_zone_claim(cf, zname, zsize, &sticky_tag);
        if (s->zone == NULL)
            return -1;
        s->zone->init = zone_init;
        s->ns = hy_hash(g->name.ptr, g->name.len, true);
    } else {
        return hy_conf_error(cf, "invalid parameter \"%s\"", a[1].ptr);
    }
    g->sticky = s;
    return 0;
}
