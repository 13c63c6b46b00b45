/* ssl_session.c — session caches and tickets (see ssl_session.h).
 *
 * The shared cache lives in a zone (conf/zone.h): a hash table of session ids plus an LRU list, entries
 * allocated from the zone's slab, all under the zone's lock. Sessions are stored DER-encoded (at most 4 KiB,
 * nginx's limit), so any worker can decode a session another one created. A full zone evicts the least
 * recently stored sessions; expired ones are dropped when met.
 *
 * Ticket keys: nginx's key file layout (48 bytes: name, AES-128 key, HMAC key; 80 bytes: name, HMAC-SHA256 key,
 * AES-256 key), the first file encrypts, all decrypt. Without files a key is generated once per start, in the
 * master when it first loads the configuration, so every worker it forks (and every reload) shares it. */
#include <errno.h>
#include <fcntl.h>
#include <string.h>
#include <unistd.h>
#include <openssl/core_names.h>
#include <openssl/evp.h>
#include <openssl/rand.h>
#include "ssl_session.h"
#include "../conf/zone.h"
#include "../core/clock.h"
#include "../core/log.h"
#include "../core/slab.h"

#define MAX_SESSION_DER 4096

typedef struct sess_node {
    struct sess_node *hnext;         /* hash chain */
    struct sess_node *lprev, *lnext; /* LRU: newest at the head */
    uint32_t hash;
    uint8_t id_len;
    uint8_t id[SSL_MAX_SSL_SESSION_ID_LENGTH];
    int64_t expire_s;
    uint32_t der_len;
    unsigned char der[];
} sess_node_t;

typedef struct ticket_key {
    unsigned char name[16], hmac[32], aes[32];
    size_t size; /* 48 or 80 */
} ticket_key_t;

#define ZONE_KEYS 3 /* the current ticket key and two retired ones that still decrypt */

typedef struct sess_shared {
    uint32_t nbuckets;
    sess_node_t *lru_head, *lru_tail;
    uint64_t stored, evicted;
    ticket_key_t keys[ZONE_KEYS]; /* with a shared cache and no key files: rotated by whichever worker sees */
    uint32_t nkeys;               /* the current one expire (nginx 1.23's scheme) */
    int64_t rotate_at_s;
    sess_node_t *buckets[];
} sess_shared_t;

typedef struct sess_cache {
    hy_zone_t *zone;
    sess_shared_t *sh;    /* in the zone */
    int64_t key_period_s; /* ticket key rotation: the longest ssl_session_timeout of the servers using it */
} sess_cache_t;

typedef struct ticket_keys {
    ticket_key_t *keys; /* key files, or the per-start key */
    size_t n;
    sess_cache_t *zone; /* set: the keys live in the shared cache's zone and rotate */
} ticket_keys_t;

static int cache_idx = -1, ticket_idx = -1, session_ctx_idx = -1;

/* The context whose cache and ticket keys serve a connection: the default server's (the one it was accepted with),
 * even after SNI switched to another server's context. OpenSSL calls the first context's callbacks (resumption is
 * decided before SNI is), so this keeps storing and finding a session, encrypting and decrypting a ticket on one
 * context's keys — nginx's rule too ("session resumption happens before SNI"). */
static SSL_CTX *session_ctx(SSL *ssl)
{
    SSL_CTX *ctx = session_ctx_idx < 0 ? NULL : SSL_get_ex_data(ssl, session_ctx_idx);
    return ctx ? ctx : SSL_get_SSL_CTX(ssl);
}

void hy_http_ssl_session_pin(SSL *ssl)
{
    if (session_ctx_idx < 0)
        session_ctx_idx = SSL_get_ex_new_index(0, NULL, NULL, NULL, NULL);
    if (session_ctx_idx >= 0 && SSL_get_ex_data(ssl, session_ctx_idx) == NULL)
        SSL_set_ex_data(ssl, session_ctx_idx, SSL_get_SSL_CTX(ssl));
}
static ticket_key_t start_key; /* generated once per start (see above) */
static bool have_start_key;

/* ---------------- the shared cache ---------------- */

static int init_zone(hy_zone_t *z, void *old_data)
{
    sess_cache_t *c = z->data;
    if (old_data) {
        c->sh = ((sess_cache_t *)old_data)->sh;
        return 0;
    }
    /* about one bucket per 256 bytes of zone: chains stay short when the zone is full of ~1 KiB sessions */
    uint32_t nb = 64;
    while ((size_t)nb * 2 * 256 <= z->size && nb < (1u << 20))
        nb *= 2;
    c->sh = hy_slab_calloc(z->slab, sizeof(sess_shared_t) + sizeof(sess_node_t *) * nb);
    if (c->sh == NULL)
        return -1;
    c->sh->nbuckets = nb;
    return 0;
}

static uint32_t id_hash(const unsigned char *id, size_t len)
{
    uint32_t h = 2166136261u; /* FNV-1a: ids are random already, this only spreads them over the buckets */
    for (size_t i = 0; i < len; i++)
        h = (h ^ id[i]) * 16777619u;
    return h;
}

static sess_node_t **find_slot(sess_shared_t *sh, uint32_t h, const unsigned char *id, size_t len)
{
    sess_node_t **pp = &sh->buckets[h & (sh->nbuckets - 1)];
    for (; *pp; pp = &(*pp)->hnext)
        if ((*pp)->hash == h && (*pp)->id_len == len && memcmp((*pp)->id, id, len) == 0)
            return pp;
    return pp;
}

static void unlink_node(hy_slab_t *slab, sess_shared_t *sh, sess_node_t *n)
{
    sess_node_t **pp = find_slot(sh, n->hash, n->id, n->id_len);
    if (*pp == n)
        *pp = n->hnext;
    if (n->lprev)
        n->lprev->lnext = n->lnext;
    else
        sh->lru_head = n->lnext;
    if (n->lnext)
        n->lnext->lprev = n->lprev;
    else
        sh->lru_tail = n->lprev;
    hy_slab_free_locked(slab, n);
}

/* The zone's lock; a worker that died holding it may have left the table half-updated: start it afresh (the
 * entries it held stay allocated until the zone is recreated, which only costs capacity). */
static void lock_cache(sess_cache_t *c)
{
    if (hy_slab_lock(c->zone->slab)) {
        hy_log(HY_LOG_ALERT, "ssl session cache \"%s\" was being changed by a process that died: cleared",
               c->zone->name.ptr);
        memset(c->sh->buckets, 0, sizeof(sess_node_t *) * c->sh->nbuckets);
        c->sh->lru_head = c->sh->lru_tail = NULL;
    }
}

static sess_cache_t *ctx_cache(SSL_CTX *ctx)
{
    return cache_idx < 0 ? NULL : SSL_CTX_get_ex_data(ctx, cache_idx);
}

static int on_new_session(SSL *ssl, SSL_SESSION *sess)
{
    sess_cache_t *c = ctx_cache(session_ctx(ssl));
    if (c == NULL || c->sh == NULL)
        return 0;
    int len = i2d_SSL_SESSION(sess, NULL);
    if (len <= 0 || len > MAX_SESSION_DER)
        return 0; /* too large to share (a long certificate chain of a client): resumption simply fails */
    unsigned char buf[MAX_SESSION_DER], *p = buf;
    i2d_SSL_SESSION(sess, &p);
    unsigned id_len = 0;
    const unsigned char *id = SSL_SESSION_get_id(sess, &id_len);
    if (id_len == 0 || id_len > SSL_MAX_SSL_SESSION_ID_LENGTH)
        return 0;
    uint32_t h = id_hash(id, id_len);
    int64_t now = hy_clock_time();
    hy_slab_t *slab = c->zone->slab;
    lock_cache(c);
    sess_shared_t *sh = c->sh;
    sess_node_t **pp = find_slot(sh, h, id, id_len);
    if (*pp)
        unlink_node(slab, sh, *pp);
    for (int i = 0; i < 2 && sh->lru_tail && sh->lru_tail->expire_s <= now; i++)
        unlink_node(slab, sh, sh->lru_tail); /* expired sessions go first */
    sess_node_t *n = NULL;
    for (int tries = 0; tries < 8; tries++) {
        n = hy_slab_alloc_locked(slab, sizeof(*n) + (size_t)len);
        if (n || sh->lru_tail == NULL)
            break;
        unlink_node(slab, sh, sh->lru_tail); /* full: the least recently stored session makes room */
        sh->evicted++;
    }
    if (n) {
        n->hash = h;
        n->id_len = (uint8_t)id_len;
        memcpy(n->id, id, id_len);
        n->expire_s = now + (int64_t)SSL_SESSION_get_timeout(sess);
        n->der_len = (uint32_t)len;
        memcpy(n->der, buf, (size_t)len);
        pp = find_slot(sh, h, id, id_len);
        n->hnext = NULL;
        *pp = n;
        n->lprev = NULL;
        n->lnext = sh->lru_head;
        if (sh->lru_head)
            sh->lru_head->lprev = n;
        else
            sh->lru_tail = n;
        sh->lru_head = n;
        sh->stored++;
    }
    hy_slab_unlock(slab);
    return 0; /* we keep no reference to sess */
}

static SSL_SESSION *on_get_session(SSL *ssl, const unsigned char *id, int len, int *copy)
{
    *copy = 0;
    sess_cache_t *c = ctx_cache(session_ctx(ssl));
    if (c == NULL || c->sh == NULL || len <= 0 || len > SSL_MAX_SSL_SESSION_ID_LENGTH)
        return NULL;
    unsigned char buf[MAX_SESSION_DER];
    size_t der_len = 0;
    uint32_t h = id_hash(id, (size_t)len);
    hy_slab_t *slab = c->zone->slab;
    lock_cache(c);
    sess_node_t **pp = find_slot(c->sh, h, id, (size_t)len);
    if (*pp) {
        if ((*pp)->expire_s > hy_clock_time()) {
            der_len = (*pp)->der_len;
            memcpy(buf, (*pp)->der, der_len);
            if (SSL_get_max_early_data(ssl) > 0 && SSL_version(ssl) == TLS1_3_VERSION)
                unlink_node(slab, c->sh, *pp); /* single use: 0-RTT replay protection (see session setup) */
        } else {
            unlink_node(slab, c->sh, *pp);
        }
    }
    hy_slab_unlock(slab);
    if (der_len == 0)
        return NULL;
    const unsigned char *p = buf;
    return d2i_SSL_SESSION(NULL, &p, (long)der_len);
}

static void on_remove_session(SSL_CTX *ctx, SSL_SESSION *sess)
{
    sess_cache_t *c = ctx_cache(ctx);
    if (c == NULL || c->sh == NULL)
        return;
    unsigned id_len = 0;
    const unsigned char *id = SSL_SESSION_get_id(sess, &id_len);
    if (id_len == 0 || id_len > SSL_MAX_SSL_SESSION_ID_LENGTH)
        return;
    hy_slab_t *slab = c->zone->slab;
    lock_cache(c);
    sess_node_t **pp = find_slot(c->sh, id_hash(id, id_len), id, id_len);
    if (*pp)
        unlink_node(slab, c->sh, *pp);
    hy_slab_unlock(slab);
}

/* ---------------- tickets ---------------- */

static void key_from_bytes(ticket_key_t *k, const unsigned char *b, size_t size)
{
    k->size = size;
    memcpy(k->name, b, 16);
    if (size == 48) {
        memcpy(k->aes, b + 16, 16);
        memcpy(k->hmac, b + 32, 16);
    } else {
        memcpy(k->hmac, b + 16, 32);
        memcpy(k->aes, b + 48, 32);
    }
}

static void new_key(ticket_key_t *k)
{
    unsigned char b[80];
    if (RAND_bytes(b, sizeof(b)) != 1)
        return; /* keeps the previous bytes: still a valid (if not fresh) key */
    key_from_bytes(k, b, sizeof(b));
    explicit_bzero(b, sizeof(b));
}

/* The zone's ticket keys, rotated when the current one is older than the period: copied out under the lock so
 * the crypto runs without it. */
static size_t zone_keys(sess_cache_t *c, ticket_key_t *out)
{
    lock_cache(c);
    sess_shared_t *sh = c->sh;
    int64_t now = hy_clock_time();
    if (sh->nkeys == 0 || now >= sh->rotate_at_s) {
        memmove(&sh->keys[1], &sh->keys[0], sizeof(ticket_key_t) * (ZONE_KEYS - 1));
        new_key(&sh->keys[0]);
        if (sh->nkeys < ZONE_KEYS)
            sh->nkeys++;
        sh->rotate_at_s = now + (c->key_period_s > 0 ? c->key_period_s : 300);
    }
    size_t n = sh->nkeys;
    memcpy(out, sh->keys, sizeof(ticket_key_t) * n);
    hy_slab_unlock(c->zone->slab);
    return n;
}

static int on_ticket(SSL *ssl, unsigned char *name, unsigned char *iv, EVP_CIPHER_CTX *ectx, EVP_MAC_CTX *hctx, int enc)
{
    ticket_keys_t *tk = SSL_CTX_get_ex_data(session_ctx(ssl), ticket_idx);
    ticket_key_t zkeys[ZONE_KEYS];
    ticket_keys_t zone_view;
    if (tk && tk->zone) {
        zone_view.n = zone_keys(tk->zone, zkeys);
        zone_view.keys = zkeys;
        zone_view.zone = NULL;
        tk = &zone_view;
    }
    if (tk == NULL || tk->n == 0)
        return enc ? -1 : 0;
    size_t i = 0;
    if (!enc) {
        while (i < tk->n && memcmp(tk->keys[i].name, name, 16) != 0)
            i++;
        if (i == tk->n)
            return 0; /* unknown key (rotated out, or another cluster's): a full handshake */
    }
    ticket_key_t *k = &tk->keys[i];
    const EVP_CIPHER *cipher = k->size == 48 ? EVP_aes_128_cbc() : EVP_aes_256_cbc();
    OSSL_PARAM params[] = {
        OSSL_PARAM_construct_octet_string(OSSL_MAC_PARAM_KEY, k->hmac, k->size == 48 ? 16 : 32),
        OSSL_PARAM_construct_utf8_string(OSSL_MAC_PARAM_DIGEST, "SHA256", 0),
        OSSL_PARAM_construct_end(),
    };
    if (enc) {
        if (RAND_bytes(iv, EVP_CIPHER_get_iv_length(cipher)) != 1 ||
            EVP_EncryptInit_ex(ectx, cipher, NULL, k->aes, iv) != 1 || EVP_MAC_CTX_set_params(hctx, params) != 1)
            return -1;
        memcpy(name, k->name, 16);
        return 1;
    }
    if (EVP_MAC_CTX_set_params(hctx, params) != 1 || EVP_DecryptInit_ex(ectx, cipher, NULL, k->aes, iv) != 1)
        return -1;
    return i == 0 ? 1 : 2; /* 2: decrypted with an older key, issue a fresh ticket */
}

static int load_ticket_keys(hy_conf_t *cf, hy_http_ssl_srv_conf_t *c, ticket_keys_t *tk)
{
    hy_str_t *files = c->ticket_key_files->elts;
    tk->n = c->ticket_key_files->nelts;
    tk->keys = hy_pcalloc(cf->pool, sizeof(ticket_key_t) * tk->n);
    for (size_t i = 0; i < tk->n; i++) {
        unsigned char b[81];
        int fd = open(files[i].ptr, O_RDONLY | O_CLOEXEC);
        if (fd < 0)
            return hy_conf_error(cf, "open() \"%s\" failed (%d: %s)", files[i].ptr, errno, strerror(errno));
        ssize_t n = read(fd, b, sizeof(b));
        close(fd);
        if (n != 48 && n != 80) {
            explicit_bzero(b, sizeof(b));
            return hy_conf_error(cf, "\"%s\" must be 48 or 80 bytes", files[i].ptr);
        }
        key_from_bytes(&tk->keys[i], b, (size_t)n);
        explicit_bzero(b, sizeof(b));
    }
    return 0;
}

/* As nginx: the words apply in order and a second ssl_session_cache goes on from the first one; "off", "none" and
 * "builtin[:N]" replace one another, "shared:NAME:SIZE" adds the zone, which "off" and "none" leave unused. */
int hy_http_ssl_set_session_cache(hy_conf_t *cf, const hy_directive_t *d, void *conf)
{
    hy_http_ssl_srv_conf_t *c = conf;
    size_t n;
    hy_str_t *a = hy_conf_args(cf, &n);
    int mode = c->cache_mode == HY_SSL_CACHE_BOTH     ? HY_SSL_CACHE_BUILTIN
               : c->cache_mode == HY_SSL_CACHE_SHARED ? HY_UNSET
                                                      : c->cache_mode; /* the builtin part so far */
    for (size_t i = 1; i < n; i++) {
        if (hy_str_eq(a[i], "off")) {
            mode = HY_SSL_CACHE_OFF;
        } else if (hy_str_eq(a[i], "none")) {
            mode = HY_SSL_CACHE_NONE;
        } else if (hy_str_eq(a[i], "builtin")) {
            mode = HY_SSL_CACHE_BUILTIN;
        } else if (a[i].len > 8 && memcmp(a[i].ptr, "builtin:", 8) == 0) {
            int64_t v = hy_parse_int(a[i].ptr + 8, a[i].len - 8);
            if (v < 0)
                return hy_conf_error(cf, "invalid session cache \"%s\"", a[i].ptr);
            c->builtin_size = v;
            mode = HY_SSL_CACHE_BUILTIN;
        } else if (a[i].len > 7 && memcmp(a[i].ptr, "shared:", 7) == 0) {
            hy_str_t name;
            size_t size;
            if (hy_zone_parse_shared(cf, a[i], &name, &size) != 0)
                return -1;
            c->cache_zone = hy_zone_claim(cf, name, size, &hy_http_ssl_module);
            if (c->cache_zone == NULL)
                return -1;
            if (c->cache_zone->data == NULL) {
                sess_cache_t *sc = hy_pcalloc(cf->pool, sizeof(*sc));
                sc->zone = c->cache_zone;
                c->cache_zone->data = sc;
                c->cache_zone->init = init_zone;
            }
        } else {
            return hy_conf_error(cf, "invalid session cache \"%s\"", a[i].ptr);
        }
    }
    if (mode == HY_UNSET)
        c->cache_mode = HY_SSL_CACHE_SHARED;
    else if (mode == HY_SSL_CACHE_BUILTIN && c->cache_zone)
        c->cache_mode = HY_SSL_CACHE_BOTH;
    else
        c->cache_mode = mode;
    return 0;
}

int hy_http_ssl_session_setup(hy_conf_t *cf, hy_http_ssl_srv_conf_t *c)
{
    SSL_CTX *ctx = c->ctx;
    /* sessions resume only on a context with the same id context: the certificates name the server */
    unsigned char sid[EVP_MAX_MD_SIZE];
    unsigned sid_len = 0;
    EVP_MD_CTX *md = EVP_MD_CTX_new();
    EVP_DigestInit_ex(md, EVP_sha256(), NULL);
    hy_str_t *certs = c->certificates ? c->certificates->elts : NULL;
    for (size_t i = 0; c->certificates && i < c->certificates->nelts; i++)
        EVP_DigestUpdate(md, certs[i].ptr, certs[i].len + 1);
    EVP_DigestFinal_ex(md, sid, &sid_len);
    EVP_MD_CTX_free(md);
    SSL_CTX_set_session_id_context(ctx, sid, HY_MIN(sid_len, SSL_MAX_SID_CTX_LENGTH));
    SSL_CTX_set_timeout(ctx, (long)c->session_timeout_s);
    switch (c->cache_mode) {
    case HY_SSL_CACHE_OFF:
    case HY_SSL_CACHE_NONE:
        SSL_CTX_set_session_cache_mode(ctx, SSL_SESS_CACHE_OFF);
        break;
    default: {
        long mode = SSL_SESS_CACHE_SERVER;
        if (c->cache_mode == HY_SSL_CACHE_SHARED)
            mode |= SSL_SESS_CACHE_NO_INTERNAL; /* only the zone: every worker sees every session */
        SSL_CTX_set_session_cache_mode(ctx, mode);
        if (c->builtin_size != HY_UNSET)
            SSL_CTX_sess_set_cache_size(ctx, c->builtin_size);
        if (c->cache_zone) {
            if (cache_idx < 0)
                cache_idx = SSL_CTX_get_ex_new_index(0, NULL, NULL, NULL, NULL);
            SSL_CTX_set_ex_data(ctx, cache_idx, c->cache_zone->data);
            SSL_CTX_sess_set_new_cb(ctx, on_new_session);
            SSL_CTX_sess_set_get_cb(ctx, on_get_session);
            SSL_CTX_sess_set_remove_cb(ctx, on_remove_session);
        }
        break;
    }
    }
    bool zone_used = c->cache_zone && (c->cache_mode == HY_SSL_CACHE_SHARED || c->cache_mode == HY_SSL_CACHE_BOTH);
    if (c->early_data && zone_used) {
        /* 0-RTT with the shared cache: OpenSSL's replay protection lives in each process's internal cache, which
         * a ticket used on another worker would not pass through. Instead TLS 1.3 tickets are references to
         * the zone (stateful: SSL_OP_NO_TICKET), which OpenSSL uses once (its remove callback drops a resumed
         * one), and on_get_session already removes a TLS 1.3 session as it hands it out, under the zone's lock,
         * so two workers cannot both resume it in the moment between lookup and removal: each ticket resumes
         * once, on whichever worker, and early data is never accepted twice. (With the builtin cache alone
         * OpenSSL's own protection holds: a session lives in one worker.) */
        SSL_CTX_set_options(ctx, SSL_OP_NO_TICKET | SSL_OP_NO_ANTI_REPLAY);
        return 0;
    }
    if (!c->session_tickets) {
        SSL_CTX_set_options(ctx, SSL_OP_NO_TICKET);
        return 0;
    }
    ticket_keys_t *tk = hy_pcalloc(cf->pool, sizeof(*tk));
    if (c->ticket_key_files) {
        const char *file = cf->file;
        unsigned line = cf->line;
        cf->file = c->ticket_file, cf->line = c->ticket_line;
        int rc = load_ticket_keys(cf, c, tk);
        cf->file = file, cf->line = line;
        if (rc != 0)
            return -1;
    } else if (c->cache_zone) { /* keys in the zone: shared by workers and instances of a reload, rotated */
        sess_cache_t *sc = c->cache_zone->data;
        if (c->session_timeout_s > sc->key_period_s)
            sc->key_period_s = c->session_timeout_s;
        tk->zone = sc;
    } else {
        if (!have_start_key) {
            unsigned char b[80];
            if (RAND_bytes(b, sizeof(b)) != 1)
                return hy_conf_error(cf, "RAND_bytes() failed");
            key_from_bytes(&start_key, b, sizeof(b));
            explicit_bzero(b, sizeof(b));
            have_start_key = true;
        }
        tk->keys = &start_key;
        tk->n = 1;
    }
    if (ticket_idx < 0)
        ticket_idx = SSL_CTX_get_ex_new_index(0, NULL, NULL, NULL, NULL);
    SSL_CTX_set_ex_data(ctx, ticket_idx, tk);
    SSL_CTX_set_tlsext_ticket_key_evp_cb(ctx, on_ticket);
    return 0;
}
