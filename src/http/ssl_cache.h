/* ssl_cache.h — TLS objects loaded by name (certificate chains, private keys, CRL lists, CA lists) and their two
 * caches, as nginx keeps them:
 *
 * - configuration time (hy_ssl_obj_load): within one generation a name is read once (a FIFO named by several
 *   directives works, the server and the proxy side share a CA file); with `ssl_object_cache_inheritable on`
 *   (the default, main context) an object of the previous generation is taken again on reload when its file's
 *   inode and mtime are unchanged. One table in the process that reads the configuration (the master).
 * - run time (hy_ssl_cache_t, `ssl_certificate_cache` / `proxy_ssl_certificate_cache` / uwsgi's): certificates
 *   and keys named with variables, per worker: at most `max` objects (least recently used evicted), dropped after
 *   `inactive` without use, and after `valid` the file is checked again (changed inode or mtime: reloaded).
 *
 * A name is a path (absolute), `data:PEM` (certificates and keys), or `store:URI` (keys, OSSL_STORE). A key that
 * needed a password is never cached. Fetches return a new reference the caller owns: STACK_OF(X509) for CERT
 * (leaf first) and CA, EVP_PKEY for KEY, STACK_OF(X509_CRL) for CRL; free with hy_ssl_obj_free. */
#ifndef HY_HTTP_SSL_CACHE_H
#define HY_HTTP_SSL_CACHE_H

#include <openssl/ssl.h>
#include "core.h"

enum hy_ssl_obj_type { HY_SSL_OBJ_CERT = 0, HY_SSL_OBJ_KEY, HY_SSL_OBJ_CRL, HY_SSL_OBJ_CA };
#define HY_SSL_OBJ_INVALIDATE 0x100 /* or'ed to the type: read the file again, whatever is cached */

typedef struct hy_ssl_cache hy_ssl_cache_t;

/** Configuration-time load (the generation's table). NULL with *err naming the failed call (OpenSSL's queue
 * holds the reason). */
void *hy_ssl_obj_load(hy_conf_t *cf, int type, const char *name, hy_array_t *passwords, const char **err);
void hy_ssl_obj_free(int type, void *obj);

/** A run-time cache freed with `pool` (the generation's arena). */
hy_ssl_cache_t *hy_ssl_cache_create(hy_pool_t *pool, unsigned max, int64_t inactive_s, int64_t valid_s);
/** Run-time fetch; cache NULL (off): loaded every time. */
void *hy_ssl_cache_fetch(hy_ssl_cache_t *c, int type, const char *name, hy_array_t *passwords, const char **err);

/** The *_certificate_cache directive's value: `off` (NULL) or `max=N [inactive=time] [valid=time]` (defaults 10s
 * and 60s). 0, or -1 after hy_conf_error. */
int hy_ssl_cache_parse(hy_conf_t *cf, hy_ssl_cache_t **out);

/** Configuration time: a certificate chain and its key into ctx (the key's type picks the slot). 0, or -1 after
 * hy_conf_error with file names and OpenSSL's reason. */
int hy_ssl_ctx_use_pair(hy_conf_t *cf, SSL_CTX *ctx, const char *cert, const char *key, hy_array_t *passwords);
/** Configuration time: trust the certificates of a CA file (`names`: also ask clients for their subjects). */
int hy_ssl_ctx_use_ca(hy_conf_t *cf, SSL_CTX *ctx, const char *path, bool names);
/** Configuration time: the CRLs of a file, checked for the whole chain. */
int hy_ssl_ctx_use_crl(hy_conf_t *cf, SSL_CTX *ctx, const char *path);
/** Run time: a pair into one SSL object through the cache (a mismatched pair, as after an uneven update of the
 * files, is read again once). NULL, or the error text written into msg. */
const char *hy_ssl_use_pair(SSL *ssl, hy_ssl_cache_t *c, const char *cert, const char *key, hy_array_t *passwords,
                            char *msg, size_t msglen);

/** A name that is not a file path (data:, store:): kept as written instead of made absolute. */
bool hy_ssl_obj_is_special(hy_str_t name);

/** The http ssl module's main-context (core) conf: ssl_object_cache_inheritable (HY_UNSET reads as on). */
typedef struct hy_ssl_core_conf {
    int object_cache_inheritable;
} hy_ssl_core_conf_t;

#endif
