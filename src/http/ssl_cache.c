/* ssl_cache.c — TLS objects loaded by name and their configuration-time and run-time caches (see ssl_cache.h). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <sys/stat.h>
#include <openssl/err.h>
#include <openssl/pem.h>
#include <openssl/store.h>
#include <openssl/ui.h>
#include <openssl/x509.h>
#include "ssl_cache.h"
#include "ssl-t.h"
#include "../conf/cycle.h"
#include "../event/tls.h"

/* ---------------------------------------------------------------- objects */

typedef struct pw_state {
    const hy_str_t *pw; /* the password to give, or NULL */
    bool asked;         /* the key was encrypted: never cached */
} pw_state_t;

static int pw_cb(char *buf, int size, int rwflag, void *userdata)
{
    pw_state_t *st = userdata;
    (void)rwflag;
    st->asked = true;
    if (st->pw == NULL || size <= 0)
        return 0;
    size_t n = HY_MIN(st->pw->len, (size_t)size);
    memcpy(buf, st->pw->ptr, n);
    return (int)n;
}

bool hy_ssl_obj_is_special(hy_str_t name)
{
    return (name.len >= 5 && memcmp(name.ptr, "data:", 5) == 0) ||
           (name.len >= 6 && memcmp(name.ptr, "store:", 6) == 0);
}

static bool is_path(const char *name)
{
    return !hy_ssl_obj_is_special((hy_str_t){(char *)name, strlen(name)});
}

static BIO *open_bio(const char *name, const char **err)
{
    BIO *bio = strncmp(name, "data:", 5) == 0 ? BIO_new_mem_buf(name + 5, -1) : BIO_new_file(name, "r");
    if (bio == NULL)
        *err = "BIO_new_file() failed";
    return bio;
}

static bool at_pem_end(void)
{
    unsigned long e = ERR_peek_last_error();
    return ERR_GET_LIB(e) == ERR_LIB_PEM && ERR_GET_REASON(e) == PEM_R_NO_START_LINE;
}

static void *load_chain(const char *name, const char **err)
{
    BIO *bio = open_bio(name, err);
    if (bio == NULL)
        return NULL;
    STACK_OF(X509) *chain = sk_X509_new_null();
    X509 *x = PEM_read_bio_X509_AUX(bio, NULL, NULL, NULL); /* the certificate, then the rest of the chain */
    if (x == NULL)
        *err = "PEM_read_bio_X509_AUX() failed";
    while (x != NULL && chain) {
        sk_X509_push(chain, x);
        x = PEM_read_bio_X509(bio, NULL, NULL, NULL);
        if (x == NULL && !at_pem_end())
            *err = "PEM_read_bio_X509() failed";
    }
    BIO_free(bio);
    if (*err != NULL) {
        sk_X509_pop_free(chain, X509_free);
        return NULL;
    }
    ERR_clear_error();
    return chain;
}

/* every certificate (CA) or CRL of a PEM file, TRUSTED CERTIFICATE ones included */
static void *load_info(const char *name, bool crls, const char **err)
{
    BIO *bio = open_bio(name, err);
    if (bio == NULL)
        return NULL;
    STACK_OF(X509_INFO) *infos = PEM_X509_INFO_read_bio(bio, NULL, NULL, NULL);
    BIO_free(bio);
    const char *fn = crls ? "X509_LOOKUP_load_file() failed" : "SSL_CTX_load_verify_locations() failed";
    if (infos == NULL) {
        *err = fn;
        return NULL;
    }
    void *out = crls ? (void *)sk_X509_CRL_new_null() : (void *)sk_X509_new_null();
    int n = 0;
    for (int i = 0; i < sk_X509_INFO_num(infos); i++) {
        X509_INFO *in = sk_X509_INFO_value(infos, i);
        if (crls && in->crl && X509_CRL_up_ref(in->crl))
            sk_X509_CRL_push(out, in->crl), n++;
        else if (!crls && in->x509 && X509_up_ref(in->x509))
            sk_X509_push(out, in->x509), n++;
    }
    sk_X509_INFO_pop_free(infos, X509_INFO_free);
    if (n == 0) {
        ERR_raise(ERR_LIB_X509, X509_R_NO_CERTIFICATE_OR_CRL_FOUND);
        *err = fn;
        crls ? sk_X509_CRL_free(out) : sk_X509_free(out);
        return NULL;
    }
    return out;
}

static EVP_PKEY *load_store_key(const char *uri, pw_state_t *st, const char **err)
{
    UI_METHOD *ui = UI_UTIL_wrap_read_pem_callback(pw_cb, 0);
    OSSL_STORE_CTX *store = OSSL_STORE_open(uri, ui, st, NULL, NULL);
    EVP_PKEY *pkey = NULL;
    if (store == NULL) {
        *err = "OSSL_STORE_open() failed";
    } else {
        while (pkey == NULL && !OSSL_STORE_eof(store)) {
            OSSL_STORE_INFO *info = OSSL_STORE_load(store);
            if (info == NULL)
                continue;
            if (OSSL_STORE_INFO_get_type(info) == OSSL_STORE_INFO_PKEY)
                pkey = OSSL_STORE_INFO_get1_PKEY(info);
            OSSL_STORE_INFO_free(info);
        }
        OSSL_STORE_close(store);
        if (pkey == NULL)
            *err = "OSSL_STORE_load() failed";
    }
    UI_destroy_method(ui);
    return pkey;
}

/* each password is tried in turn; without any an encrypted key fails rather than prompting on the terminal */
static EVP_PKEY *load_key(const char *name, hy_array_t *passwords, bool *uncacheable, const char **err)
{
    hy_str_t *pw = passwords ? passwords->elts : NULL;
    size_t tries = passwords ? passwords->nelts : 1;
    pw_state_t st = {pw, false};
    EVP_PKEY *pkey = NULL;
    if (strncmp(name, "store:", 6) == 0) {
        pkey = load_store_key(name + 6, &st, err);
    } else {
        BIO *bio = open_bio(name, err);
        if (bio == NULL)
            return NULL;
        for (size_t i = 0; i < tries && pkey == NULL; i++) {
            if (i > 0) {
                ERR_clear_error();
                (void)BIO_reset(bio);
            }
            st.pw = pw ? &pw[i] : NULL;
            pkey = PEM_read_bio_PrivateKey(bio, NULL, pw_cb, &st);
        }
        BIO_free(bio);
        if (pkey == NULL)
            *err = "PEM_read_bio_PrivateKey() failed";
    }
    *uncacheable = st.asked;
    return pkey;
}

static void *create(int type, const char *name, hy_array_t *passwords, bool *uncacheable, const char **err)
{
    *uncacheable = false;
    *err = NULL;
    ERR_clear_error();
    switch (type) {
    case HY_SSL_OBJ_CERT:
        return load_chain(name, err);
    case HY_SSL_OBJ_KEY:
        return load_key(name, passwords, uncacheable, err);
    case HY_SSL_OBJ_CRL:
        return load_info(name, true, err);
    default:
        return load_info(name, false, err);
    }
}

void hy_ssl_obj_free(int type, void *obj)
{
    if (obj == NULL)
        return;
    if (type == HY_SSL_OBJ_KEY)
        EVP_PKEY_free(obj);
    else if (type == HY_SSL_OBJ_CRL)
        sk_X509_CRL_pop_free(obj, X509_CRL_free);
    else
        sk_X509_pop_free(obj, X509_free);
}

/* a new reference: the caller frees it with hy_ssl_obj_free */
static void *ref(int type, void *obj)
{
    if (type == HY_SSL_OBJ_KEY) {
        EVP_PKEY_up_ref(obj);
        return obj;
    }
    if (type == HY_SSL_OBJ_CRL) {
        STACK_OF(X509_CRL) *s = sk_X509_CRL_dup(obj);
        for (int i = 0; s && i < sk_X509_CRL_num(s); i++)
            X509_CRL_up_ref(sk_X509_CRL_value(s, i));
        return s;
    }
    STACK_OF(X509) *s = sk_X509_dup(obj);
    for (int i = 0; s && i < sk_X509_num(s); i++)
        X509_up_ref(sk_X509_value(s, i));
    return s;
}

/* ---------------------------------------------------------------- tables */

typedef struct entry {
    struct entry *hnext;       /* bucket chain */
    struct entry *prev, *next; /* the list: most recently used first */
    int type;
    uint32_t hash;
    void *value;
    time_t created, accessed;
    dev_t dev;
    ino_t ino;
    time_t mtime;
    uint64_t gen; /* configuration table: the generation that last used it */
    char *name;   /* the bytes after the entry (a pointer, not a flexible array: the list sentinel embeds one) */
} entry_t;

#define NBUCKETS 256

struct hy_ssl_cache {
    entry_t *buckets[NBUCKETS];
    entry_t head; /* list sentinel */
    unsigned max, current;
    time_t inactive, valid;
};

static uint32_t hash_of(int type, const char *name)
{
    uint32_t h = 2166136261u ^ (uint32_t)type;
    for (const unsigned char *p = (const unsigned char *)name; *p; p++)
        h = (h ^ *p) * 16777619u;
    return h;
}

static void table_init(hy_ssl_cache_t *c)
{
    memset(c, 0, sizeof(*c));
    c->head.prev = c->head.next = &c->head;
}

static entry_t *lookup(hy_ssl_cache_t *c, int type, const char *name, uint32_t h)
{
    for (entry_t *e = c->buckets[h % NBUCKETS]; e; e = e->hnext)
        if (e->hash == h && e->type == type && strcmp(e->name, name) == 0)
            return e;
    return NULL;
}

static void list_remove(entry_t *e)
{
    e->prev->next = e->next;
    e->next->prev = e->prev;
}

static void list_push_front(hy_ssl_cache_t *c, entry_t *e)
{
    e->next = c->head.next;
    e->prev = &c->head;
    c->head.next->prev = e;
    c->head.next = e;
}

static entry_t *insert(hy_ssl_cache_t *c, int type, const char *name, uint32_t h, void *value)
{
    size_t n = strlen(name);
    entry_t *e = hy_alloc(sizeof(*e) + n + 1);
    memset(e, 0, sizeof(*e));
    e->name = (char *)(e + 1);
    memcpy(e->name, name, n + 1);
    e->type = type, e->hash = h, e->value = value;
    e->hnext = c->buckets[h % NBUCKETS];
    c->buckets[h % NBUCKETS] = e;
    list_push_front(c, e);
    c->current++;
    return e;
}

static void drop(hy_ssl_cache_t *c, entry_t *e)
{
    entry_t **pp = &c->buckets[e->hash % NBUCKETS];
    while (*pp != e)
        pp = &(*pp)->hnext;
    *pp = e->hnext;
    list_remove(e);
    hy_ssl_obj_free(e->type, e->value);
    free(e);
    c->current--;
}

/* the file's identity; all zero when it cannot be seen (data:, store:, gone) */
static void identity(const char *name, dev_t *dev, ino_t *ino, time_t *mtime)
{
    struct stat st;
    if (is_path(name) && stat(name, &st) == 0)
        *dev = st.st_dev, *ino = st.st_ino, *mtime = st.st_mtime;
    else
        *dev = 0, *ino = 0, *mtime = 0;
}

/* ---------------------------------------------------------------- configuration time */

static hy_ssl_cache_t conf_table;
static bool conf_table_ready;
static const hy_cycle_t *conf_cycle; /* the generation being read; NULL once it is freed */
static uint64_t conf_gen;

static void forget_cycle(void *arg)
{
    if (conf_cycle == arg)
        conf_cycle = NULL;
}

static void begin_generation(hy_cycle_t *cycle)
{
    if (!conf_table_ready) {
        table_init(&conf_table);
        conf_table_ready = true;
    }
    if (conf_cycle == cycle)
        return;
    /* a new generation: what the previous one did not use goes; the rest may be inherited */
    for (entry_t *e = conf_table.head.next, *next; e != &conf_table.head; e = next) {
        next = e->next;
        if (e->gen < conf_gen)
            drop(&conf_table, e);
    }
    conf_gen++;
    conf_cycle = cycle;
    hy_pool_on_clear(cycle->pool, forget_cycle, cycle);
}

void *hy_ssl_obj_load(hy_conf_t *cf, int type, const char *name, hy_array_t *passwords, const char **err)
{
    bool invalidate = (type & HY_SSL_OBJ_INVALIDATE) && strncmp(name, "data:", 5) != 0;
    type &= ~HY_SSL_OBJ_INVALIDATE;
    begin_generation(cf->cycle);
    uint32_t h = hash_of(type, name);
    entry_t *e = lookup(&conf_table, type, name, h);
    *err = NULL;
    if (e && !invalidate && e->gen == conf_gen)
        return ref(type, e->value);
    dev_t dev;
    ino_t ino;
    time_t mtime;
    identity(name, &dev, &ino, &mtime);
    const hy_ssl_core_conf_t *core = cf->cycle->core_conf ? cf->cycle->core_conf[hy_http_ssl_module.index] : NULL;
    bool inherit = core == NULL || core->object_cache_inheritable != 0;
    if (e && !invalidate && inherit && (ino != 0 || !is_path(name)) && e->dev == dev && e->ino == ino &&
        e->mtime == mtime) {
        e->gen = conf_gen;
        return ref(type, e->value);
    }
    bool uncacheable;
    void *value = create(type, name, passwords, &uncacheable, err);
    if (value == NULL || uncacheable)
        return value;
    if (e) {
        hy_ssl_obj_free(type, e->value);
        e->value = value;
    } else {
        e = insert(&conf_table, type, name, h, value);
    }
    e->gen = conf_gen, e->dev = dev, e->ino = ino, e->mtime = mtime;
    return ref(type, value);
}

/* ---------------------------------------------------------------- run time */

static void free_cache(void *arg)
{
    hy_ssl_cache_t *c = arg;
    while (c->head.next != &c->head)
        drop(c, c->head.next);
    free(c);
}

hy_ssl_cache_t *hy_ssl_cache_create(hy_pool_t *pool, unsigned max, int64_t inactive_s, int64_t valid_s)
{
    hy_ssl_cache_t *c = hy_alloc(sizeof(*c));
    table_init(c);
    c->max = max, c->inactive = (time_t)inactive_s, c->valid = (time_t)valid_s;
    hy_pool_on_clear(pool, free_cache, c);
    return c;
}

/* nginx's expiry: n == 0 evicts the least recently used one and then up to two inactive ones, n == 1 up to two
 * inactive ones */
static void expire(hy_ssl_cache_t *c, int n, time_t now)
{
    for (; n < 3 && c->head.prev != &c->head; n++) {
        entry_t *e = c->head.prev;
        if (n != 0 && now - e->accessed <= c->inactive)
            return;
        drop(c, e);
    }
}

void *hy_ssl_cache_fetch(hy_ssl_cache_t *c, int type, const char *name, hy_array_t *passwords, const char **err)
{
    bool invalidate = type & HY_SSL_OBJ_INVALIDATE;
    type &= ~HY_SSL_OBJ_INVALIDATE;
    bool uncacheable;
    if (c == NULL)
        return create(type, name, passwords, &uncacheable, err);
    *err = NULL;
    time_t now = time(NULL);
    uint32_t h = hash_of(type, name);
    entry_t *e = lookup(c, type, name, h);
    if (e != NULL) {
        list_remove(e);
        bool fresh = strncmp(name, "data:", 5) == 0 || (!invalidate && now - e->created <= c->valid);
        if (!fresh) {
            dev_t dev;
            ino_t ino;
            time_t mtime;
            identity(name, &dev, &ino, &mtime);
            if (!invalidate && is_path(name) && ino != 0 && dev == e->dev && ino == e->ino && mtime == e->mtime) {
                e->created = now; /* unchanged: valid again */
            } else {
                void *value = create(type, name, passwords, &uncacheable, err);
                if (value == NULL || uncacheable) {
                    list_push_front(c, e); /* drop() unlinks it */
                    drop(c, e);
                    return value;
                }
                hy_ssl_obj_free(type, e->value);
                e->value = value;
                e->dev = dev, e->ino = ino, e->mtime = mtime, e->created = now;
            }
        }
        list_push_front(c, e);
    } else {
        void *value = create(type, name, passwords, &uncacheable, err);
        if (value == NULL || uncacheable)
            return value;
        expire(c, 1, now);
        if (c->current >= c->max)
            expire(c, 0, now);
        e = insert(c, type, name, h, value);
        identity(name, &e->dev, &e->ino, &e->mtime);
        e->created = now;
    }
    e->accessed = now;
    return ref(type, e->value);
}

int hy_ssl_cache_parse(hy_conf_t *cf, hy_ssl_cache_t **out)
{
    size_t n;
    hy_str_t *a = hy_conf_args(cf, &n);
    *out = NULL;
    if (n == 2 && hy_str_eq(a[1], "off"))
        return 0;
    int64_t max = -1, inactive = 10, valid = 60;
    for (size_t i = 1; i < n; i++) {
        hy_str_t v = a[i];
        if (v.len > 4 && memcmp(v.ptr, "max=", 4) == 0) {
            max = hy_parse_int(v.ptr + 4, v.len - 4);
            if (max <= 0)
                goto invalid;
        } else if (v.len > 9 && memcmp(v.ptr, "inactive=", 9) == 0) {
            inactive = hy_parse_sec(v.ptr + 9, v.len - 9);
            if (inactive < 0)
                goto invalid;
        } else if (v.len > 6 && memcmp(v.ptr, "valid=", 6) == 0) {
            valid = hy_parse_sec(v.ptr + 6, v.len - 6);
            if (valid < 0)
                goto invalid;
        } else {
            goto invalid;
        }
        continue;
    invalid:
        return hy_conf_error(cf, "invalid parameter \"%s\"", v.ptr);
    }
    if (max < 0)
        return hy_conf_error(cf, "\"%s\" must have \"max\" parameter", a[0].ptr);
    *out = hy_ssl_cache_create(cf->pool, (unsigned)max, inactive, valid);
    return 0;
}

/* ---------------------------------------------------------------- using them */

static int conf_fail(hy_conf_t *cf, const char *what, const char *name, const char *err)
{
    char why[512];
    hy_tls_error_text(why, sizeof(why));
    return hy_conf_error(cf, "%s \"%s\": %s (SSL: %s)", what, name, err, why);
}

/* "fn(\"path\") failed (SSL: ...)": the call that failed, as nginx words it */
static int list_fail(hy_conf_t *cf, const char *fn, const char *path)
{
    char why[512];
    hy_tls_error_text(why, sizeof(why));
    return hy_conf_error(cf, "%s(\"%s\") failed (SSL: %s)", fn, path, why);
}

/* the chain's leaf into the slot of its key type, the rest as that slot's chain (consumes chain) */
static int use_chain_ctx(SSL_CTX *ctx, STACK_OF(X509) *chain)
{
    X509 *leaf = sk_X509_shift(chain);
    int ok = leaf && SSL_CTX_use_certificate(ctx, leaf) == 1 && SSL_CTX_set0_chain(ctx, chain) == 1;
    X509_free(leaf);
    if (!ok)
        sk_X509_pop_free(chain, X509_free);
    return ok ? 0 : -1;
}

static bool key_mismatch(void)
{
    unsigned long e = ERR_peek_last_error();
    return ERR_GET_LIB(e) == ERR_LIB_X509 && ERR_GET_REASON(e) == X509_R_KEY_VALUES_MISMATCH;
}

int hy_ssl_ctx_use_pair(hy_conf_t *cf, SSL_CTX *ctx, const char *cert, const char *key, hy_array_t *passwords)
{
    for (int mask = 0;; mask = HY_SSL_OBJ_INVALIDATE) {
        const char *err;
        STACK_OF(X509) *chain = hy_ssl_obj_load(cf, HY_SSL_OBJ_CERT | mask, cert, NULL, &err);
        if (chain == NULL)
            return conf_fail(cf, "cannot load certificate", cert, err);
        if (use_chain_ctx(ctx, chain) != 0)
            return list_fail(cf, "SSL_CTX_use_certificate", cert);
        EVP_PKEY *pkey = hy_ssl_obj_load(cf, HY_SSL_OBJ_KEY | mask, key, passwords, &err);
        if (pkey == NULL)
            return conf_fail(cf, "cannot load certificate key", key, err);
        int ok = SSL_CTX_use_PrivateKey(ctx, pkey);
        EVP_PKEY_free(pkey);
        if (ok == 1)
            return 0;
        if (mask == 0 && key_mismatch()) { /* a pair cached from an uneven update of its files: read both again */
            ERR_clear_error();
            continue;
        }
        char why[512];
        hy_tls_error_text(why, sizeof(why));
        return hy_conf_error(cf, "SSL_CTX_use_PrivateKey(\"%s\") failed (SSL: %s)", key, why);
    }
}

const char *hy_ssl_use_pair(SSL *ssl, hy_ssl_cache_t *c, const char *cert, const char *key, hy_array_t *passwords,
                            char *msg, size_t msglen)
{
    char why[512];
    for (int mask = 0;; mask = HY_SSL_OBJ_INVALIDATE) {
        const char *err;
        STACK_OF(X509) *chain = hy_ssl_cache_fetch(c, HY_SSL_OBJ_CERT | mask, cert, NULL, &err);
        if (chain == NULL) {
            snprintf(msg, msglen, "cannot load certificate \"%s\": %s (SSL: %s)", cert, err,
                     hy_tls_error_text(why, sizeof(why)));
            return msg;
        }
        X509 *leaf = sk_X509_shift(chain);
        int ok = leaf && SSL_use_certificate(ssl, leaf) == 1 && SSL_set0_chain(ssl, chain) == 1;
        X509_free(leaf);
        if (!ok) {
            sk_X509_pop_free(chain, X509_free);
            snprintf(msg, msglen, "SSL_use_certificate(\"%s\") failed (SSL: %s)", cert,
                     hy_tls_error_text(why, sizeof(why)));
            return msg;
        }
        EVP_PKEY *pkey = hy_ssl_cache_fetch(c, HY_SSL_OBJ_KEY | mask, key, passwords, &err);
        if (pkey == NULL) {
            snprintf(msg, msglen, "cannot load certificate key \"%s\": %s (SSL: %s)", key, err,
                     hy_tls_error_text(why, sizeof(why)));
            return msg;
        }
        ok = SSL_use_PrivateKey(ssl, pkey);
        EVP_PKEY_free(pkey);
        if (ok == 1)
            return NULL;
        if (mask == 0 && key_mismatch()) {
            ERR_clear_error();
            continue;
        }
        snprintf(msg, msglen, "SSL_use_PrivateKey(\"%s\") failed (SSL: %s)", key, hy_tls_error_text(why, sizeof(why)));
        return msg;
    }
}

int hy_ssl_ctx_use_ca(hy_conf_t *cf, SSL_CTX *ctx, const char *path, bool names)
{
    const char *err;
    STACK_OF(X509) *cas = hy_ssl_obj_load(cf, HY_SSL_OBJ_CA, path, NULL, &err);
    if (cas == NULL)
        return list_fail(cf, "SSL_CTX_load_verify_locations", path);
    X509_STORE *store = SSL_CTX_get_cert_store(ctx);
    STACK_OF(X509_NAME) *list = names ? sk_X509_NAME_new_null() : NULL;
    for (int i = 0; i < sk_X509_num(cas); i++) {
        X509 *x = sk_X509_value(cas, i);
        if (X509_STORE_add_cert(store, x) != 1)
            ERR_clear_error(); /* the same certificate twice */
        if (list == NULL)
            continue;
        bool seen = false; /* each name once, as SSL_load_client_CA_file sends it */
        for (int j = 0; j < sk_X509_NAME_num(list) && !seen; j++)
            seen = X509_NAME_cmp(sk_X509_NAME_value(list, j), X509_get_subject_name(x)) == 0;
        X509_NAME *nm = seen ? NULL : X509_NAME_dup(X509_get_subject_name(x));
        if (nm && !sk_X509_NAME_push(list, nm))
            X509_NAME_free(nm);
    }
    hy_ssl_obj_free(HY_SSL_OBJ_CA, cas);
    if (list)
        SSL_CTX_set_client_CA_list(ctx, list); /* the CA names the client is asked for */
    return 0;
}

int hy_ssl_ctx_use_crl(hy_conf_t *cf, SSL_CTX *ctx, const char *path)
{
    const char *err;
    STACK_OF(X509_CRL) *crls = hy_ssl_obj_load(cf, HY_SSL_OBJ_CRL, path, NULL, &err);
    if (crls == NULL)
        return list_fail(cf, "X509_LOOKUP_load_file", path);
    X509_STORE *store = SSL_CTX_get_cert_store(ctx);
    for (int i = 0; i < sk_X509_CRL_num(crls); i++)
        if (X509_STORE_add_crl(store, sk_X509_CRL_value(crls, i)) != 1)
            ERR_clear_error();
    hy_ssl_obj_free(HY_SSL_OBJ_CRL, crls);
    X509_STORE_set_flags(store, X509_V_FLAG_CRL_CHECK | X509_V_FLAG_CRL_CHECK_ALL);
    return 0;
}
