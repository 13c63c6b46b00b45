/* ssl_session.c — session caches and tickets (see ssl_session.h). */
#include <string.h>
#include <openssl/evp.h>
#include <openssl/rand.h>
#include "ssl_session.h"
#include "../conf/zone.h"

int hy_http_ssl_set_session_cache(hy_conf_t *cf, const hy_directive_t *d, void *conf)
{
    hy_http_ssl_srv_conf_t *c = conf;
    size_t n;
    hy_str_t *a = hy_conf_args(cf, &n);
    if (c->cache_mode != HY_UNSET)
        return hy_conf_error(cf, "\"ssl_session_cache\" directive is duplicate");
    bool builtin = false, shared = false;
    for (size_t i = 1; i < n; i++) {
        if (hy_str_eq(a[i], "off")) {
            c->cache_mode = HY_SSL_CACHE_OFF;
        } else if (hy_str_eq(a[i], "none")) {
            c->cache_mode = HY_SSL_CACHE_NONE;
        } else if (hy_str_eq(a[i], "builtin")) {
            builtin = true;
        } else if (a[i].len > 8 && memcmp(a[i].ptr, "builtin:", 8) == 0) {
            int64_t v = hy_parse_int(a[i].ptr + 8, a[i].len - 8);
            if (v < 0)
                return hy_conf_error(cf, "invalid session cache \"%s\"", a[i].ptr);
            c->builtin_size = v;
            builtin = true;
        } else if (a[i].len > 7 && memcmp(a[i].ptr, "shared:", 7) == 0) {
            hy_str_t name;
            size_t size;
            if (hy_zone_parse_shared(cf, a[i], &name, &size) != 0)
                return -1;
            c->cache_zone = hy_zone_claim(cf, name, size, &hy_http_ssl_module);
            if (c->cache_zone == NULL)
                return -1;
            shared = true;
        } else {
            return hy_conf_error(cf, "invalid session cache \"%s\"", a[i].ptr);
        }
        if ((c->cache_mode == HY_SSL_CACHE_OFF || c->cache_mode == HY_SSL_CACHE_NONE) && n > 2)
            return hy_conf_error(cf, "invalid session cache \"%s\"", a[i].ptr);
    }
    if (builtin || shared)
        c->cache_mode = builtin && shared ? HY_SSL_CACHE_BOTH : builtin ? HY_SSL_CACHE_BUILTIN : HY_SSL_CACHE_SHARED;
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
    default:
        SSL_CTX_set_session_cache_mode(ctx, SSL_SESS_CACHE_SERVER);
        if (c->builtin_size != HY_UNSET)
            SSL_CTX_sess_set_cache_size(ctx, c->builtin_size);
        break;
    }
    if (!c->session_tickets)
        SSL_CTX_set_options(ctx, SSL_OP_NO_TICKET);
    return 0;
}
