/* ssl_module.c — nginx's ngx_http_ssl_module for hayate: the ssl_* directives of http{} and server{}, one SSL_CTX
 * per server with certificates (built when the server's configuration is merged, so a bad certificate, key or
 * password fails -t and a reload with file:line and OpenSSL's reason), SNI choosing a server's context, ALPN
 * (http/1.1 only until HTTP/2 exists) and the $ssl_* variables. */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <strings.h>
#include <unistd.h>
#include <openssl/err.h>
#include <openssl/ocsp.h>
#include <openssl/pem.h>
#include <openssl/x509.h>
#include "ssl_module.h"
#include "http2_module.h"
#include "ssl_session.h"
#include "ssl_ocsp.h"
#include "ssl_cache.h"
#include "conn.h"
#include "request.h"
#include "phases.h"
#include "vars.h"
#include "uri.h"
#include "../conf/cycle.h"
#include "../core/log.h"
#include "../event/tls.h"

enum {
    PROTO_SSLv2 = 0x01,
    PROTO_SSLv3 = 0x02,
    PROTO_TLSv1 = 0x04,
    PROTO_TLSv1_1 = 0x08,
    PROTO_TLSv1_2 = 0x10,
    PROTO_TLSv1_3 = 0x20,
};

/* nginx's default is "HIGH:!aNULL:!MD5"; ours keeps only forward-secret key exchange and AEAD ciphers (TLS 1.2:
 * ECDHE with AES-GCM or ChaCha20-Poly1305; TLS 1.3's suites are AEAD by definition). See docs/DIFFERENCES.md. */
#define DEFAULT_CIPHERS                                                                                                \
    "ECDHE-ECDSA-AES128-GCM-SHA256:ECDHE-RSA-AES128-GCM-SHA256:ECDHE-ECDSA-AES256-GCM-SHA384:"                         \
    "ECDHE-RSA-AES256-GCM-SHA384:ECDHE-ECDSA-CHACHA20-POLY1305:ECDHE-RSA-CHACHA20-POLY1305"

static const unsigned char alpn_protos[] = "\x08http/1.1\x08http/1.0";
static const unsigned char alpn_protos_h2[] = "\x02h2\x08http/1.1\x08http/1.0";

typedef hy_ssl_conf_cmd_t conf_cmd_t;

static hy_http_ssl_srv_conf_t *ssl_conf(hy_http_srv_conf_t *srv)
{
    return srv->srv_conf[hy_http_ssl_module.index];
}

/* ---------------- configuration ---------------- */

static void *create_srv(hy_conf_t *cf)
{
    hy_http_ssl_srv_conf_t *c = hy_pcalloc(cf->pool, sizeof(*c));
    c->enable = HY_UNSET;
    c->ocsp = HY_UNSET;
    c->protocols = HY_UNSET;
    c->prefer_server_ciphers = HY_UNSET;
    c->reject_handshake = HY_UNSET;
    c->session_tickets = HY_UNSET;
    c->early_data = HY_UNSET;
    c->buffer_size = HY_UNSET_SIZE;
    c->handshake_timeout_ms = HY_UNSET_MSEC;
    c->session_timeout_s = HY_UNSET;
    c->cache_mode = HY_UNSET;
    c->builtin_size = HY_UNSET;
    c->verify = HY_UNSET;
    c->verify_depth = HY_UNSET;
    c->stapling = HY_UNSET;
    c->stapling_verify = HY_UNSET;
    return c;
}

static int set_ssl_on(hy_conf_t *cf, const hy_directive_t *d, void *conf)
{
    hy_http_ssl_srv_conf_t *c = conf;
    if (hy_slot_flag(cf, d, conf) != 0)
        return -1;
    c->enable_file = cf->file, c->enable_line = cf->line;
    /* nginx 1.22's wording (ngx_http_ssl_enable) */
    hy_conf_warn(cf, "the \"ssl\" directive is deprecated, use the \"listen ... ssl\" directive instead");
    return 0;
}

static int push_path(hy_conf_t *cf, hy_array_t **arr, hy_str_t v)
{
    if (*arr == NULL)
        *arr = hy_array_create(cf->pool, 2, sizeof(hy_str_t));
    hy_str_t *p = hy_array_push(*arr);
    if (hy_ssl_obj_is_special(v)) { /* data:PEM, store:URI: not a file name */
        *p = hy_str_dup(cf->pool, v);
        return 0;
    }
    char *full = hy_cycle_conf_path(cf->cycle, v.ptr, v.len);
    *p = (hy_str_t){full, strlen(full)};
    return 0;
}

static int set_certificate(hy_conf_t *cf, const hy_directive_t *d, void *conf)
{
    hy_http_ssl_srv_conf_t *c = conf;
    size_t n;
    hy_str_t *a = hy_conf_args(cf, &n);
    if (c->certificates == NULL)
        c->cert_file = cf->file, c->cert_line = cf->line;
    return push_path(cf, &c->certificates, a[1]);
}

static int set_certificate_key(hy_conf_t *cf, const hy_directive_t *d, void *conf)
{
    hy_http_ssl_srv_conf_t *c = conf;
    size_t n;
    hy_str_t *a = hy_conf_args(cf, &n);
    return push_path(cf, &c->keys, a[1]);
}

static int set_certificate_cache(hy_conf_t *cf, const hy_directive_t *d, void *conf)
{
    hy_http_ssl_srv_conf_t *c = conf;
    (void)d;
    if (c->cert_cache_set)
        return hy_conf_error(cf, "\"ssl_certificate_cache\" directive is duplicate");
    c->cert_cache_set = 1;
    return hy_ssl_cache_parse(cf, &c->cert_cache);
}

hy_array_t *hy_http_ssl_read_passwords(hy_conf_t *cf, hy_str_t file)
{
    char *path = hy_cycle_conf_path(cf->cycle, file.ptr, file.len);
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0) {
        hy_conf_error(cf, "open() \"%s\" failed (%d: %s)", path, errno, strerror(errno));
        return NULL;
    }
    char buf[4096];
    size_t len = 0;
    ssize_t r;
    while (len < sizeof(buf) && (r = read(fd, buf + len, sizeof(buf) - len)) > 0)
        len += (size_t)r;
    close(fd);
    hy_array_t *pws = hy_array_create(cf->pool, 2, sizeof(hy_str_t));
    /* one password per line (nginx: CR/LF separated, empty lines skipped) */
    for (size_t i = 0; i < len;) {
        size_t j = i;
        while (j < len && buf[j] != '\n' && buf[j] != '\r')
            j++;
        if (j > i) {
            hy_str_t *p = hy_array_push(pws);
            p->ptr = hy_pstrndup(cf->pool, buf + i, j - i);
            p->len = j - i;
        }
        i = j + 1;
    }
    explicit_bzero(buf, sizeof(buf));
    if (pws->nelts == 0) {
        hy_conf_error(cf, "no passwords are defined in \"%s\"", path);
        return NULL;
    }
    return pws;
}

static int set_password_file(hy_conf_t *cf, const hy_directive_t *d, void *conf)
{
    hy_http_ssl_srv_conf_t *c = conf;
    size_t n;
    hy_str_t *a = hy_conf_args(cf, &n);
    if (c->passwords)
        return hy_conf_error(cf, "\"ssl_password_file\" directive is duplicate");
    c->passwords = hy_http_ssl_read_passwords(cf, a[1]);
    return c->passwords ? 0 : -1;
}

int hy_http_ssl_parse_protocols(hy_conf_t *cf, const hy_str_t *a, size_t n, int prev)
{
    static const hy_enum_t names[] = {{"SSLv2", PROTO_SSLv2},
                                      {"SSLv3", PROTO_SSLv3},
                                      {"TLSv1", PROTO_TLSv1},
                                      {"TLSv1.1", PROTO_TLSv1_1},
                                      {"TLSv1.2", PROTO_TLSv1_2},
                                      {"TLSv1.3", PROTO_TLSv1_3},
                                      {NULL, 0}};
    int bits = prev == HY_UNSET ? 0 : prev;
    for (size_t i = 1; i < n; i++) {
        const hy_enum_t *e = names;
        while (e->name && !hy_str_caseeq(a[i], e->name))
            e++;
        if (e->name == NULL)
            return hy_conf_error(cf, "invalid value \"%s\"", a[i].ptr);
        if (bits & e->value)
            hy_conf_warn(cf, "duplicate value \"%s\"", a[i].ptr);
        bits |= e->value;
    }
    return bits;
}

/* nginx's bitmask slot: a repeated directive adds its protocols to those already named */
static int set_protocols(hy_conf_t *cf, const hy_directive_t *d, void *conf)
{
    hy_http_ssl_srv_conf_t *c = conf;
    size_t n;
    hy_str_t *a = hy_conf_args(cf, &n);
    c->protocols = hy_http_ssl_parse_protocols(cf, a, n, c->protocols);
    return c->protocols < 0 ? -1 : 0;
}

static int set_conf_command(hy_conf_t *cf, const hy_directive_t *d, void *conf)
{
    hy_http_ssl_srv_conf_t *c = conf;
    size_t n;
    hy_str_t *a = hy_conf_args(cf, &n);
    if (c->conf_commands == NULL)
        c->conf_commands = hy_array_create(cf->pool, 2, sizeof(conf_cmd_t));
    conf_cmd_t *cmd = hy_array_push(c->conf_commands);
    cmd->name = hy_str_dup(cf->pool, a[1]);
    cmd->value = hy_str_dup(cf->pool, a[2]);
    return 0;
}

static int set_path_str(hy_conf_t *cf, hy_str_t *dst, const char *name)
{
    size_t n;
    hy_str_t *a = hy_conf_args(cf, &n);
    if (dst->ptr)
        return hy_conf_error(cf, "\"%s\" directive is duplicate", name);
    char *full = hy_cycle_conf_path(cf->cycle, a[1].ptr, a[1].len);
    *dst = (hy_str_t){full, strlen(full)};
    return 0;
}

static int set_dhparam(hy_conf_t *cf, const hy_directive_t *d, void *conf)
{
    return set_path_str(cf, &((hy_http_ssl_srv_conf_t *)conf)->dhparam, d->name);
}

static int set_client_certificate(hy_conf_t *cf, const hy_directive_t *d, void *conf)
{
    return set_path_str(cf, &((hy_http_ssl_srv_conf_t *)conf)->client_certificate, d->name);
}

static int set_trusted_certificate(hy_conf_t *cf, const hy_directive_t *d, void *conf)
{
    return set_path_str(cf, &((hy_http_ssl_srv_conf_t *)conf)->trusted_certificate, d->name);
}

static int set_crl(hy_conf_t *cf, const hy_directive_t *d, void *conf)
{
    return set_path_str(cf, &((hy_http_ssl_srv_conf_t *)conf)->crl, d->name);
}


/* nginx parses the responder as an http:// URL (only when it would query it); hayate checks the prefix always. */
static int set_stapling_responder(hy_conf_t *cf, const hy_directive_t *d, void *conf)
{
    size_t n;
    hy_str_t *a = hy_conf_args(cf, &n);
    if (a[1].len <= 7 || strncasecmp((const char *)a[1].ptr, "http://", 7) != 0)
        return hy_conf_error(cf, "invalid URL prefix in OCSP responder \"%.*s\" in \"%s\"", (int)a[1].len, a[1].ptr,
                             d->name);
    return hy_slot_str(cf, d, conf);
}

/* ssl_ocsp_cache off | [shared:]name:size — the statuses are kept per worker (DIFFERENCES.md) */
static int set_ocsp_cache(hy_conf_t *cf, const hy_directive_t *d, void *conf)
{
    hy_http_ssl_srv_conf_t *c = conf;
    size_t n;
    hy_str_t *a = hy_conf_args(cf, &n);
    if (c->ocsp_cache_set)
        return hy_conf_error(cf, "\"%s\" directive is duplicate", d->name);
    c->ocsp_cache_set = 1;
    if (hy_str_eq(a[1], "off"))
        return 0;
    hy_str_t v = a[1];
    if (v.len > 7 && memcmp(v.ptr, "shared:", 7) == 0)
        v.ptr += 7, v.len -= 7;
    const char *colon = memchr(v.ptr, ':', v.len);
    if (colon == NULL || colon == v.ptr || hy_parse_size(colon + 1, v.len - (size_t)(colon + 1 - v.ptr)) <= 0)
        return hy_conf_error(cf, "invalid value \"%s\"", a[1].ptr);
    c->ocsp_cache = hy_ssl_ocsp_cache_new(cf->pool);
    return 0;
}

static int set_stapling_file(hy_conf_t *cf, const hy_directive_t *d, void *conf)
{
    return set_path_str(cf, &((hy_http_ssl_srv_conf_t *)conf)->stapling_file, d->name);
}

static int set_ticket_key(hy_conf_t *cf, const hy_directive_t *d, void *conf)
{
    hy_http_ssl_srv_conf_t *c = conf;
    size_t n;
    hy_str_t *a = hy_conf_args(cf, &n);
    if (c->ticket_key_files == NULL)
        c->ticket_key_files = hy_array_create(cf->pool, 2, sizeof(hy_str_t));
    char *full = hy_cycle_conf_path(cf->cycle, a[1].ptr, a[1].len);
    *(hy_str_t *)hy_array_push(c->ticket_key_files) = (hy_str_t){full, strlen(full)};
    c->ticket_file = cf->file, c->ticket_line = cf->line;
    return 0;
}

/* ---------------- building a server's context ---------------- */

int hy_http_ssl_conf_fail(hy_conf_t *cf, const char *fmt, const char *arg)
{
    char why[512];
    hy_tls_error_text(why, sizeof(why));
    char what[1024];
    snprintf(what, sizeof(what), fmt, arg);
    return hy_conf_error(cf, "%s (SSL: %s)", what, why);
}

#define ssl_fail hy_http_ssl_conf_fail

static int password_cb(char *buf, int size, int rwflag, void *userdata)
{
    const hy_str_t *pw = userdata;
    if (pw == NULL || size <= 0)
        return 0;
    size_t n = HY_MIN(pw->len, (size_t)size);
    memcpy(buf, pw->ptr, n);
    return (int)n;
}

EVP_PKEY *hy_http_ssl_read_key(const char *path, hy_array_t *passwords)
{
    size_t tries = passwords ? passwords->nelts : 1;
    hy_str_t *pw = passwords ? passwords->elts : NULL;
    EVP_PKEY *key = NULL;
    for (size_t i = 0; i < tries && key == NULL; i++) {
        BIO *bio = BIO_new_file(path, "r");
        if (bio == NULL)
            return NULL;
        ERR_clear_error();
        /* without a password file an encrypted key fails rather than prompting on the terminal */
        key = PEM_read_bio_PrivateKey(bio, NULL, password_cb, pw ? &pw[i] : NULL);
        BIO_free(bio);
        if (key == NULL && i + 1 < tries)
            ERR_clear_error();
    }
    return key;
}

int hy_http_ssl_apply_protocols(SSL_CTX *ctx, int p)
{
    static const struct {
        int bit, version;
    } v[] = {{PROTO_SSLv3, SSL3_VERSION},
             {PROTO_TLSv1, TLS1_VERSION},
             {PROTO_TLSv1_1, TLS1_1_VERSION},
             {PROTO_TLSv1_2, TLS1_2_VERSION},
             {PROTO_TLSv1_3, TLS1_3_VERSION}};
    /* OpenSSL negotiates within one contiguous range of versions: with a gap ("TLSv1 TLSv1.3") it would keep the
     * lowest run (TLSv1 alone, whose ciphers the default security level refuses: no handshake at all). The
     * highest run is taken instead, what nginx ends with on Debian (whose system MinProtocol drops the low one) */
    int top = -1;
    for (int i = 0; i < (int)HY_ARRAY_SIZE(v); i++)
        if (p & v[i].bit)
            top = i;
    int lo = TLS1_3_VERSION, hi = TLS1_3_VERSION;
    if (top < 0) { /* only SSLv2, which OpenSSL 3 does not have: nothing can be negotiated */
        SSL_CTX_set_options(ctx, SSL_OP_NO_TLSv1_3);
    } else {
        int bottom = top;
        while (bottom > 0 && (p & v[bottom - 1].bit))
            bottom--;
        lo = v[bottom].version, hi = v[top].version;
    }
    return SSL_CTX_set_min_proto_version(ctx, lo) == 1 && SSL_CTX_set_max_proto_version(ctx, hi) == 1 ? 0 : -1;
}

static int on_servername(SSL *ssl, int *alert, void *arg);
static int on_client_hello(SSL *ssl, int *alert, void *arg);
static int on_verify(int ok, X509_STORE_CTX *store)
{
    return 1; /* as nginx: the handshake goes on; the request is answered 495/496 by the verify phase */
}

static int setup_verify(hy_conf_t *cf, hy_http_ssl_srv_conf_t *c)
{
    SSL_CTX *ctx = c->ctx;
    if (c->verify != HY_SSL_VERIFY_OFF) {
        SSL_CTX_set_verify(ctx, SSL_VERIFY_PEER, on_verify);
        SSL_CTX_set_verify_depth(ctx, (int)c->verify_depth);
    }
    if (c->client_certificate.ptr && hy_ssl_ctx_use_ca(cf, ctx, c->client_certificate.ptr, true) != 0)
        return -1;
    if (c->trusted_certificate.ptr && hy_ssl_ctx_use_ca(cf, ctx, c->trusted_certificate.ptr, false) != 0)
        return -1;
    if (c->crl.ptr && hy_ssl_ctx_use_crl(cf, ctx, c->crl.ptr) != 0)
        return -1;
    return 0;
}

/* OCSP stapling from a file: the response is read once at configuration time and sent to every client that
 * asks (status_request, RFC 6066 §8). OpenSSL frees what it is given, hence the copy per handshake. */
static int on_status(SSL *ssl, void *arg)
{
    hy_str_t *resp = arg;
    if (resp == NULL || resp->len == 0)
        return SSL_TLSEXT_ERR_NOACK;
    unsigned char *p = OPENSSL_malloc(resp->len);
    if (p == NULL)
        return SSL_TLSEXT_ERR_NOACK;
    memcpy(p, resp->ptr, resp->len);
    if (SSL_set_tlsext_status_ocsp_resp(ssl, p, (long)resp->len) != 1) {
        OPENSSL_free(p);
        return SSL_TLSEXT_ERR_NOACK;
    }
    return SSL_TLSEXT_ERR_OK;
}

static int setup_stapling(hy_conf_t *cf, hy_http_ssl_srv_conf_t *c)
{
    if (!c->stapling)
        return 0;
    if (c->stapling_file.ptr == NULL)
        return hy_ssl_ocsp_setup(cf, c); /* the certificate's responder, queried by the workers */
    BIO *bio = BIO_new_file(c->stapling_file.ptr, "rb");
    if (bio == NULL)
        return ssl_fail(cf, "BIO_new_file(\"%s\") failed", c->stapling_file.ptr);
    OCSP_RESPONSE *resp = d2i_OCSP_RESPONSE_bio(bio, NULL);
    BIO_free(bio);
    if (resp == NULL)
        return ssl_fail(cf, "d2i_OCSP_RESPONSE_bio(\"%s\") failed", c->stapling_file.ptr);
    unsigned char *der = NULL;
    int len = i2d_OCSP_RESPONSE(resp, &der);
    OCSP_RESPONSE_free(resp);
    if (len <= 0)
        return ssl_fail(cf, "i2d_OCSP_RESPONSE(\"%s\") failed", c->stapling_file.ptr);
    c->stapled.ptr = hy_palloc(cf->pool, (size_t)len);
    memcpy(c->stapled.ptr, der, (size_t)len);
    c->stapled.len = (size_t)len;
    OPENSSL_free(der);
    SSL_CTX_set_tlsext_status_cb(c->ctx, on_status);
    SSL_CTX_set_tlsext_status_arg(c->ctx, &c->stapled);
    return 0;
}

static int on_alpn(SSL *ssl, const unsigned char **out, unsigned char *outlen, const unsigned char *in, unsigned inlen,
                   void *arg);

static void free_ctx(void *p)
{
    SSL_CTX_free(p);
}

/* ---------------- certificates named by variables ---------------- */

static bool has_var(hy_str_t v)
{
    return memchr(v.ptr, '$', v.len) != NULL;
}

/* nginx's rule: when any ssl_certificate or ssl_certificate_key of the server has variables, every pair is
 * evaluated and loaded at each handshake (after SNI chose the server). 1 when so, 0 when all are static, -1. */
static int compile_dynamic(hy_conf_t *cf, hy_http_ssl_srv_conf_t *c)
{
    if (c->certificates == NULL || c->keys == NULL)
        return 0;
    hy_str_t *certs = c->certificates->elts, *keys = c->keys->elts;
    size_t n = c->certificates->nelts;
    bool any = false;
    for (size_t i = 0; i < n; i++)
        any = any || has_var(certs[i]) || has_var(keys[i]);
    if (!any)
        return 0;
    c->cert_values = hy_pcalloc(cf->pool, n * sizeof(hy_complex_t));
    c->key_values = hy_pcalloc(cf->pool, n * sizeof(hy_complex_t));
    c->ncert_values = n;
    for (size_t i = 0; i < n; i++)
        if (hy_vars_compile(cf, certs[i], &c->cert_values[i]) != 0 || hy_vars_compile(cf, keys[i], &c->key_values[i]))
            return -1;
    return 1;
}

static int use_dynamic_pair(SSL *ssl, hy_conn_t *conn, hy_http_ssl_srv_conf_t *c, const char *cert, const char *key)
{
    char msg[1536];
    if (hy_ssl_use_pair(ssl, c->cert_cache, cert, key, c->passwords, msg, sizeof(msg)) == NULL)
        return 0;
    hy_log_conn(HY_LOG_ERR, conn->id, "%s while SSL handshaking, client: %s", msg, conn->peer_text);
    return -1;
}

/* SSL_CTX_set_cert_cb: evaluate the pairs for this connection (a request-less evaluation: connection and SSL
 * variables, map, geo) and load them into the SSL object. 1 goes on, 0 fails the handshake. */
static int on_cert(SSL *ssl, void *arg)
{
    hy_http_ssl_srv_conf_t *c = arg;
    hy_sock_t *s = hy_tls_sock(ssl);
    hy_conn_t *conn = s ? s->data : NULL;
    if (conn == NULL)
        return 0;
    hy_pool_t *pool = hy_pool_create(2048);
    if (pool == NULL)
        return 0;
    hy_req_t *req = hy_pcalloc(pool, sizeof(*req));
    req->pool = pool;
    req->conn = conn;
    req->srv = conn->addr->default_server;
    req->loc = req->srv->loc;
    req->version = 11;
    req->content_length = req->content_length_n = req->last_modified = -1;
    int rc = 1;
    for (size_t i = 0; i < c->ncert_values && rc == 1; i++) {
        hy_str_t cv, kv;
        hy_vars_eval(req, &c->cert_values[i], &cv);
        hy_vars_eval(req, &c->key_values[i], &kv);
        char *cert = hy_pstrndup(pool, cv.ptr, cv.len), *key = hy_pstrndup(pool, kv.ptr, kv.len);
        if (use_dynamic_pair(ssl, conn, c, cert, key) != 0)
            rc = 0;
    }
    hy_pool_destroy(pool);
    ERR_clear_error();
    return rc;
}

/* No request is taken from a client that has not authenticated yet where the server asks for a certificate. */
static int allow_early_data(SSL *ssl, void *arg)
{
    (void)arg;
    return (SSL_get_verify_mode(ssl) & SSL_VERIFY_PEER) ? 0 : 1;
}

static int build_ctx(hy_conf_t *cf, hy_http_ssl_srv_conf_t *c)
{
    SSL_CTX *ctx = SSL_CTX_new(TLS_server_method());
    if (ctx == NULL)
        return ssl_fail(cf, "%s", "SSL_CTX_new() failed");
    hy_pool_on_clear(cf->pool, free_ctx, ctx); /* the generation's arena owns it: freed with the last connection */
    c->ctx = ctx;
    /* no compression (CRIME), no renegotiation by clients, server-side preference when asked; no SSL_MODE_RELEASE_
     * BUFFERS (nginx's): an idle keep-alive connection gives its record buffers back only when the worker holds
     * many connections (event/tls.c, tls_idle), not after every request */
    SSL_CTX_set_options(ctx, SSL_OP_NO_COMPRESSION | SSL_OP_NO_RENEGOTIATION | SSL_OP_IGNORE_UNEXPECTED_EOF |
                                 SSL_OP_SINGLE_DH_USE | SSL_OP_SINGLE_ECDH_USE);
    if (c->prefer_server_ciphers)
        SSL_CTX_set_options(ctx, SSL_OP_CIPHER_SERVER_PREFERENCE);
    SSL_CTX_set_mode(ctx, SSL_MODE_NO_AUTO_CHAIN);
    SSL_CTX_set_read_ahead(ctx, 1); /* one read(2) per burst instead of two per record (header, then body) */
    if (hy_http_ssl_apply_protocols(ctx, c->protocols) != 0)
        return ssl_fail(cf, "%s", "SSL_CTX_set_min_proto_version() failed");
    if (SSL_CTX_set_cipher_list(ctx, c->ciphers.ptr) != 1)
        return ssl_fail(cf, "SSL_CTX_set_cipher_list(\"%s\") failed", c->ciphers.ptr);
    if (!hy_str_eq(c->ecdh_curve, "auto") && SSL_CTX_set1_groups_list(ctx, c->ecdh_curve.ptr) != 1)
        return ssl_fail(cf, "SSL_CTX_set1_curves_list(\"%s\") failed", c->ecdh_curve.ptr);
    if (c->dhparam.ptr) {
        BIO *bio = BIO_new_file(c->dhparam.ptr, "r");
        if (bio == NULL)
            return ssl_fail(cf, "BIO_new_file(\"%s\") failed", c->dhparam.ptr);
        EVP_PKEY *dh = PEM_read_bio_Parameters(bio, NULL);
        BIO_free(bio);
        if (dh == NULL)
            return ssl_fail(cf, "PEM_read_bio_DHparams(\"%s\") failed", c->dhparam.ptr); /* nginx's words */
        if (SSL_CTX_set0_tmp_dh_pkey(ctx, dh) != 1) {
            EVP_PKEY_free(dh);
            return ssl_fail(cf, "SSL_CTX_set0_tmp_dh_pkey(\"%s\") failed", c->dhparam.ptr);
        }
    }
    hy_str_t *certs = c->certificates ? c->certificates->elts : NULL, *keys = c->keys ? c->keys->elts : NULL;
    int dyn = compile_dynamic(cf, c);
    if (dyn < 0)
        return -1;
    for (size_t i = 0; !dyn && c->certificates && i < c->certificates->nelts; i++) {
        /* each pair goes to the slot of its key type (RSA, ECDSA, ...): OpenSSL picks by the client's
         * signature algorithms */
        if (hy_ssl_ctx_use_pair(cf, ctx, certs[i].ptr, keys[i].ptr, c->passwords) != 0)
            return -1;
    }
    if (setup_verify(cf, c) != 0 || (!dyn && setup_stapling(cf, c) != 0))
        return -1;
    if (dyn)
        SSL_CTX_set_cert_cb(ctx, on_cert, c);
    SSL_CTX_set_tlsext_servername_callback(ctx, on_servername);
    SSL_CTX_set_client_hello_cb(ctx, on_client_hello, NULL);
    SSL_CTX_set_alpn_select_cb(ctx, on_alpn, NULL);
    if (hy_http_ssl_session_setup(cf, c) != 0)
        return -1;
    if (c->early_data) {
        /* TLS 1.3 0-RTT, up to one record (nginx's amount). OpenSSL's replay protection comes with a nonzero
         * max_early_data: tickets become single-use session-cache entries, and our zone's get/remove callbacks
         * (http/ssl_session.c) carry the removal to every worker; without a session cache nothing resumes, so
         * nothing arrives early */
        SSL_CTX_set_max_early_data(ctx, 16384);
        SSL_CTX_set_recv_max_early_data(ctx, 16384);
        SSL_CTX_set_allow_early_data_cb(ctx, allow_early_data, NULL);
    }
    return hy_http_ssl_conf_commands(cf, ctx, c->conf_commands, true);
}

int hy_http_ssl_conf_commands(hy_conf_t *cf, SSL_CTX *ctx, const hy_array_t *cmds, bool server)
{
    if (cmds == NULL)
        return 0;
    SSL_CONF_CTX *cctx = SSL_CONF_CTX_new();
    SSL_CONF_CTX_set_flags(cctx, SSL_CONF_FLAG_FILE | (server ? SSL_CONF_FLAG_SERVER : SSL_CONF_FLAG_CLIENT) |
                                     SSL_CONF_FLAG_CERTIFICATE | SSL_CONF_FLAG_SHOW_ERRORS);
    SSL_CONF_CTX_set_ssl_ctx(cctx, ctx);
    conf_cmd_t *cmd = cmds->elts;
    for (size_t i = 0; i < cmds->nelts; i++) {
        ERR_clear_error();
        const char *value = cmd[i].value.ptr;
        int type = SSL_CONF_cmd_value_type(cctx, cmd[i].name.ptr);
        if (type == SSL_CONF_TYPE_FILE || type == SSL_CONF_TYPE_DIR) /* relative to the prefix, as nginx */
            value = hy_cycle_conf_path(cf->cycle, cmd[i].value.ptr, cmd[i].value.len);
        if (SSL_CONF_cmd(cctx, cmd[i].name.ptr, value) <= 0) {
            SSL_CONF_CTX_free(cctx);
            char what[512];
            snprintf(what, sizeof(what), "SSL_CONF_cmd(\"%s\", \"%s\") failed", cmd[i].name.ptr, value);
            return ssl_fail(cf, "%s", what);
        }
    }
    SSL_CONF_CTX_finish(cctx);
    SSL_CONF_CTX_free(cctx);
    return 0;
}

static int merge_srv(hy_conf_t *cf, void *parent, void *child)
{
    hy_http_ssl_srv_conf_t *p = parent, *c = child;
    hy_merge_value(c->enable, p->enable, 0);
    if (c->enable_file == NULL)
        c->enable_file = p->enable_file, c->enable_line = p->enable_line;
    if (c->certificates == NULL) {
        c->certificates = p->certificates;
        c->keys = p->keys;
        c->cert_file = p->cert_file, c->cert_line = p->cert_line;
    }
    if (c->passwords == NULL)
        c->passwords = p->passwords;
    if (!c->cert_cache_set)
        c->cert_cache = p->cert_cache, c->cert_cache_set = p->cert_cache_set;
    hy_merge_value(c->protocols, p->protocols, PROTO_TLSv1_2 | PROTO_TLSv1_3);
    hy_merge_str(c->ciphers, p->ciphers, DEFAULT_CIPHERS);
    hy_merge_value(c->prefer_server_ciphers, p->prefer_server_ciphers, 0);
    hy_merge_str(c->ecdh_curve, p->ecdh_curve, "auto");
    if (c->dhparam.ptr == NULL)
        c->dhparam = p->dhparam;
    if (c->conf_commands == NULL)
        c->conf_commands = p->conf_commands;
    hy_merge_value(c->buffer_size, p->buffer_size, 16384);
    hy_merge_value(c->handshake_timeout_ms, p->handshake_timeout_ms, 60000);
    hy_merge_value(c->reject_handshake, p->reject_handshake, 0);
    hy_merge_value(c->session_timeout_s, p->session_timeout_s, 300);
    hy_merge_value(c->session_tickets, p->session_tickets, 1);
    hy_merge_value(c->early_data, p->early_data, 0);
    if (c->cache_mode == HY_UNSET) {
        c->cache_mode = p->cache_mode == HY_UNSET ? HY_SSL_CACHE_NONE : p->cache_mode;
        c->builtin_size = p->builtin_size;
        c->cache_zone = p->cache_zone;
    }
    if (c->ticket_key_files == NULL)
        c->ticket_key_files = p->ticket_key_files, c->ticket_file = p->ticket_file, c->ticket_line = p->ticket_line;
    hy_merge_value(c->verify, p->verify, HY_SSL_VERIFY_OFF);
    hy_merge_value(c->verify_depth, p->verify_depth, 1);
    if (c->client_certificate.ptr == NULL)
        c->client_certificate = p->client_certificate;
    if (c->trusted_certificate.ptr == NULL)
        c->trusted_certificate = p->trusted_certificate;
    if (c->crl.ptr == NULL)
        c->crl = p->crl;
    hy_merge_value(c->ocsp, p->ocsp, HY_SSL_OCSP_OFF);
    if (c->ocsp_responder.ptr == NULL)
        c->ocsp_responder = p->ocsp_responder;
    if (!c->ocsp_cache_set)
        c->ocsp_cache = p->ocsp_cache, c->ocsp_cache_set = p->ocsp_cache_set;
    hy_merge_value(c->stapling, p->stapling, 0);
    hy_merge_value(c->stapling_verify, p->stapling_verify, 0);
    if (c->stapling_file.ptr == NULL)
        c->stapling_file = p->stapling_file;
    const char *file = cf->file;
    unsigned line = cf->line;
    if (c->enable && c->certificates == NULL && !c->reject_handshake) {
        cf->file = c->enable_file, cf->line = c->enable_line;
        return hy_conf_error(cf, "no \"ssl_certificate\" is defined for the \"ssl\" directive");
    }
    if (c->certificates && (c->keys == NULL || c->keys->nelts < c->certificates->nelts)) {
        cf->file = c->cert_file, cf->line = c->cert_line;
        hy_str_t *certs = c->certificates->elts;
        return hy_conf_error(cf, "no \"ssl_certificate_key\" is defined for certificate \"%s\"",
                             certs[c->keys ? c->keys->nelts : 0].ptr);
    }
    if (c->certificates && (c->verify == HY_SSL_VERIFY_ON || c->verify == HY_SSL_VERIFY_OPTIONAL) &&
        c->client_certificate.ptr == NULL && c->trusted_certificate.ptr == NULL) {
        cf->file = c->cert_file, cf->line = c->cert_line;
        return hy_conf_error(cf, "no ssl_client_certificate for ssl_verify_client"); /* nginx's words */
    }
    if (c->certificates == NULL && !c->reject_handshake)
        return 0; /* no context: the server cannot be reached over TLS (postconfiguration checks listens) */
    cf->file = c->cert_file ? c->cert_file : file, cf->line = c->cert_file ? c->cert_line : line;
    int rc = build_ctx(cf, c);
    cf->file = file, cf->line = line;
    return rc;
}

/* ---------------- connections ---------------- */

/* The server an SNI name selects (lower case, trailing dots cut), or NULL for a name too long to be one. */
static hy_http_srv_conf_t *server_by_name(hy_conn_t *c, const char *name, size_t len)
{
    char host[256];
    if (len >= sizeof(host))
        return NULL;
    for (size_t i = 0; i < len; i++)
        host[i] = (char)(name[i] >= 'A' && name[i] <= 'Z' ? name[i] + 32 : name[i]);
    while (len > 0 && host[len - 1] == '.')
        len--; /* a trailing dot names the same host (nginx strips it from Host as well) */
    host[len] = '\0';
    return hy_http_find_server(c->addr, host, len, NULL);
}

/* Before OpenSSL picks the protocol version (which precedes the servername callback): the protocols of the server
 * the SNI name selects, as nginx 1.29.2 (ssl_protocols per name-based server). */
static int on_client_hello(SSL *ssl, int *alert, void *arg)
{
    (void)alert, (void)arg;
    hy_sock_t *s = hy_tls_sock(ssl);
    hy_conn_t *c = s ? s->data : NULL;
    const unsigned char *p;
    size_t len;
    if (c == NULL || !SSL_client_hello_get0_ext(ssl, TLSEXT_TYPE_server_name, &p, &len))
        return SSL_CLIENT_HELLO_SUCCESS;
    /* server_name_list: length(2), then entries of type(1) length(2) name; the first host_name counts */
    if (len < 5 || (size_t)((p[0] << 8) | p[1]) != len - 2 || p[2] != TLSEXT_NAMETYPE_host_name)
        return SSL_CLIENT_HELLO_SUCCESS;
    size_t n = (size_t)((p[3] << 8) | p[4]);
    if (n == 0 || n > len - 5 || memchr(p + 5, '\0', n))
        return SSL_CLIENT_HELLO_SUCCESS;
    hy_http_srv_conf_t *srv = server_by_name(c, (const char *)p + 5, n);
    hy_http_ssl_srv_conf_t *sc = srv ? ssl_conf(srv) : NULL;
    if (sc && sc->ctx && sc->ctx != SSL_get_SSL_CTX(ssl)) {
        SSL_set_min_proto_version(ssl, SSL_CTX_get_min_proto_version(sc->ctx));
        SSL_set_max_proto_version(ssl, SSL_CTX_get_max_proto_version(sc->ctx));
    }
    return SSL_CLIENT_HELLO_SUCCESS;
}

static int on_servername(SSL *ssl, int *alert, void *arg)
{
    hy_sock_t *s = hy_tls_sock(ssl);
    hy_conn_t *c = s ? s->data : NULL;
    if (c == NULL)
        return SSL_TLSEXT_ERR_NOACK;
    const char *name = SSL_get_servername(ssl, TLSEXT_NAMETYPE_host_name);
    hy_http_srv_conf_t *srv = c->addr->default_server;
    if (name && *name && (srv = server_by_name(c, name, strlen(name))) == NULL) {
        *alert = SSL_AD_UNRECOGNIZED_NAME;
        return SSL_TLSEXT_ERR_ALERT_FATAL;
    }
    hy_http_ssl_srv_conf_t *sc = ssl_conf(srv);
    if (sc->reject_handshake) {
        *alert = SSL_AD_UNRECOGNIZED_NAME;
        return SSL_TLSEXT_ERR_ALERT_FATAL;
    }
    if (name == NULL)
        return SSL_TLSEXT_ERR_NOACK;
    if (sc->ctx && sc->ctx != SSL_get_SSL_CTX(ssl)) {
        /* the server's certificates and settings; options are per SSL object, copy the new context's; sessions
         * and tickets stay with the default server's context */
        hy_http_ssl_session_pin(ssl);
        SSL_set_SSL_CTX(ssl, sc->ctx);
        SSL_clear_options(ssl, SSL_get_options(ssl) & ~SSL_CTX_get_options(sc->ctx));
        SSL_set_options(ssl, SSL_CTX_get_options(sc->ctx));
        SSL_set_verify(ssl, SSL_CTX_get_verify_mode(sc->ctx), SSL_CTX_get_verify_callback(sc->ctx));
        SSL_set_verify_depth(ssl, SSL_CTX_get_verify_depth(sc->ctx));
    }
    return SSL_TLSEXT_ERR_OK;
}

static int on_alpn(SSL *ssl, const unsigned char **out, unsigned char *outlen, const unsigned char *in, unsigned inlen,
                   void *arg)
{
    (void)arg;
    /* h2 is offered when the server the SNI name chose (else the address's default) enables it, as nginx does */
    hy_sock_t *s = hy_tls_sock(ssl);
    hy_conn_t *c = s ? s->data : NULL;
    bool h2 = false;
    if (c) {
        hy_http_srv_conf_t *srv = c->addr->default_server;
        const char *name = SSL_get_servername(ssl, TLSEXT_NAMETYPE_host_name);
        char host[256];
        size_t len = name ? strlen(name) : 0;
        if (len && len < sizeof(host)) {
            for (size_t i = 0; i < len; i++)
                host[i] = (char)(name[i] >= 'A' && name[i] <= 'Z' ? name[i] + 32 : name[i]);
            while (len > 0 && host[len - 1] == '.')
                len--;
            host[len] = '\0';
            srv = hy_http_find_server(c->addr, host, len, NULL);
        }
        h2 = hy_http2_enabled(c->addr, srv);
    }
    if (h2)
        return hy_tls_alpn_select(out, outlen, in, inlen, alpn_protos_h2, sizeof(alpn_protos_h2) - 1);
    return hy_tls_alpn_select(out, outlen, in, inlen, alpn_protos, sizeof(alpn_protos) - 1);
}

bool hy_http_ssl_for_addr(hy_http_addr_t *addr, hy_http_ssl_accept_t *out)
{
    hy_http_ssl_srv_conf_t *sc = ssl_conf(addr->default_server);
    if (!addr->spec.ssl && sc->enable != 1)
        return false;
    out->ctx = sc->ctx;
    out->record_max_bytes = (size_t)sc->buffer_size;
    out->handshake_timeout_ms = (uint64_t)sc->handshake_timeout_ms;
    return out->ctx != NULL;
}

/* ---------------- variables ---------------- */

static SSL *req_ssl(hy_req_t *req)
{
    return hy_tls_ssl(&req->conn->sock);
}

static void set_cstr(hy_var_value_t *v, const char *s)
{
    if (s == NULL) {
        v->not_found = true;
        return;
    }
    v->ptr = (char *)s;
    v->len = strlen(s);
}

enum {
    V_PROTOCOL,
    V_CIPHER,
    V_CIPHERS,
    V_CURVE,
    V_CURVES,
    V_SESSION_ID,
    V_REUSED,
    V_SERVER_NAME,
    V_ALPN,
    V_CLIENT_VERIFY,
    V_CLIENT_S_DN,
    V_CLIENT_I_DN,
    V_CLIENT_SERIAL,
    V_CLIENT_FINGERPRINT,
    V_CLIENT_RAW_CERT,
    V_CLIENT_CERT,
    V_CLIENT_ESCAPED_CERT,
    V_CLIENT_S_DN_LEGACY,
    V_CLIENT_I_DN_LEGACY,
    V_CLIENT_V_START,
    V_CLIENT_V_END,
    V_CLIENT_V_REMAIN,
    V_EARLY_DATA
};

/* a memory BIO's contents copied into the request pool */
static void from_bio(hy_req_t *req, BIO *bio, char **buf, size_t *len)
{
    char *p = NULL;
    long n = BIO_get_mem_data(bio, &p);
    *buf = hy_palloc(req->pool, n > 0 ? (size_t)n + 1 : 1);
    *len = n > 0 ? (size_t)n : 0;
    if (*len)
        memcpy(*buf, p, *len);
    (*buf)[*len] = '\0';
}

static void client_cert_var(hy_req_t *req, SSL *ssl, hy_var_value_t *v, uintptr_t what)
{
    X509 *cert = SSL_get0_peer_certificate(ssl);
    if (what == V_CLIENT_VERIFY) {
        long rc = SSL_get_verify_result(ssl);
        const char *ocsp = cert && rc == X509_V_OK ? hy_ssl_ocsp_client_failure(ssl) : NULL;
        if (cert == NULL) {
            set_cstr(v, "NONE");
        } else if (ocsp) {
            size_t n = strlen(ocsp);
            char *b = hy_palloc(req->pool, n + 8);
            memcpy(b, "FAILED:", 7);
            memcpy(b + 7, ocsp, n);
            v->ptr = b, v->len = n + 7;
        } else if (rc == X509_V_OK) {
            set_cstr(v, "SUCCESS");
        } else {
            const char *why = X509_verify_cert_error_string(rc);
            size_t n = strlen(why);
            char *b = hy_palloc(req->pool, n + 8);
            memcpy(b, "FAILED:", 7);
            memcpy(b + 7, why, n);
            v->ptr = b, v->len = n + 7;
        }
        return;
    }
    if (cert == NULL) {
        v->ptr = "", v->len = 0; /* nginx: empty when the client sent none */
        return;
    }
    BIO *bio = BIO_new(BIO_s_mem());
    char *buf = NULL;
    size_t len = 0;
    switch (what) {
    case V_CLIENT_S_DN:
    case V_CLIENT_I_DN:
        X509_NAME_print_ex(bio, what == V_CLIENT_S_DN ? X509_get_subject_name(cert) : X509_get_issuer_name(cert), 0,
                           XN_FLAG_RFC2253);
        from_bio(req, bio, &buf, &len);
        break;
    case V_CLIENT_S_DN_LEGACY:
    case V_CLIENT_I_DN_LEGACY: { /* OpenSSL's old one-line form: /C=../O=../CN=.. */
        char *o = X509_NAME_oneline(what == V_CLIENT_S_DN_LEGACY ? X509_get_subject_name(cert)
                                                                  : X509_get_issuer_name(cert), NULL, 0);
        if (o) {
            len = strlen(o);
            buf = hy_pstrndup(req->pool, o, len);
            OPENSSL_free(o);
        }
        break;
    }
    case V_CLIENT_V_START:
    case V_CLIENT_V_END: /* "Sep 12 08:29:44 2023 GMT", as nginx prints it */
        ASN1_TIME_print(bio, what == V_CLIENT_V_START ? X509_get0_notBefore(cert) : X509_get0_notAfter(cert));
        from_bio(req, bio, &buf, &len);
        break;
    case V_CLIENT_V_REMAIN: { /* whole days until notAfter; 0 once less than a day is left or it expired */
        int days = 0, secs = 0;
        if (ASN1_TIME_diff(&days, &secs, NULL, X509_get0_notAfter(cert)) != 1 || days < 0 || secs < 0)
            days = 0;
        buf = hy_palloc(req->pool, 16);
        len = (size_t)snprintf(buf, 16, "%d", days);
        break;
    }
    case V_CLIENT_SERIAL:
        i2a_ASN1_INTEGER(bio, X509_get0_serialNumber(cert));
        from_bio(req, bio, &buf, &len);
        break;
    case V_CLIENT_FINGERPRINT: {
        unsigned char md[EVP_MAX_MD_SIZE];
        unsigned n = 0;
        X509_digest(cert, EVP_sha1(), md, &n);
        buf = hy_palloc(req->pool, (size_t)n * 2 + 1);
        len = hy_hex_dump(buf, md, n);
        buf[len] = '\0';
        break;
    }
    default: { /* the PEM forms */
        PEM_write_bio_X509(bio, cert);
        char *pem;
        size_t n;
        from_bio(req, bio, &pem, &n);
        if (what == V_CLIENT_RAW_CERT) {
            buf = pem, len = n;
        } else if (what == V_CLIENT_CERT) { /* every line but the first starts with a tab (deprecated form) */
            buf = hy_palloc(req->pool, n * 2 + 1);
            for (size_t i = 0; i < n; i++) {
                buf[len++] = pem[i];
                if (pem[i] == '\n' && i + 1 < n)
                    buf[len++] = '\t';
            }
            while (len && buf[len - 1] == '\n')
                len--; /* nginx drops the last newline */
        } else {       /* escaped: a URI component */
            buf = hy_palloc(req->pool, n * 3 + 1);
            len = hy_pct_escape(buf, pem, n, hy_pct_not_unreserved);
        }
        break;
    }
    }
    BIO_free(bio);
    v->ptr = buf ? buf : "", v->len = len;
}

static void put_name(hy_req_t *req, char **buf, size_t *len, size_t *cap, const char *name)
{
    size_t n = strlen(name);
    if (*len + n + 2 > *cap) {
        size_t ncap = (*cap + n + 2) * 2;
        char *nb = hy_palloc(req->pool, ncap);
        if (*len)
            memcpy(nb, *buf, *len);
        *buf = nb, *cap = ncap;
    }
    if (*len)
        (*buf)[(*len)++] = ':';
    memcpy(*buf + *len, name, n);
    *len += n;
}

static void get_ssl_var(hy_req_t *req, hy_var_value_t *v, uintptr_t what)
{
    SSL *ssl = req_ssl(req);
    v->ptr = "", v->len = 0, v->not_found = false;
    if (ssl == NULL) {
        v->not_found = true;
        return;
    }
    if (what == V_EARLY_DATA) { /* nginx (OpenSSL): "1" while the handshake is not finished, i.e. the request came
                                  * in 0-RTT data and the client has not proved it is not a replay */
        if (!SSL_is_init_finished(ssl))
            v->ptr = "1", v->len = 1;
        return;
    }
    if (what >= V_CLIENT_VERIFY) {
        client_cert_var(req, ssl, v, what);
        return;
    }
    char *buf = NULL;
    size_t len = 0, cap = 0;
    switch (what) {
    case V_PROTOCOL:
        set_cstr(v, SSL_get_version(ssl));
        return;
    case V_CIPHER:
        set_cstr(v, SSL_get_cipher_name(ssl));
        return;
    case V_CIPHERS: {
        STACK_OF(SSL_CIPHER) *sk = SSL_get_client_ciphers(ssl);
        for (int i = 0; sk && i < sk_SSL_CIPHER_num(sk); i++)
            put_name(req, &buf, &len, &cap, SSL_CIPHER_get_name(sk_SSL_CIPHER_value(sk, i)));
        break;
    }
    case V_CURVE: {
        int nid = SSL_get_negotiated_group(ssl);
        const char *name = nid ? OBJ_nid2sn(nid) : NULL; /* nginx's spelling: "X25519", "prime256v1" */
        if (name == NULL && nid)
            name = SSL_group_to_name(ssl, nid);
        set_cstr(v, name);
        return;
    }
    case V_CURVES: {
        int n = SSL_get1_curves(ssl, NULL);
        if (n <= 0)
            break;
        int *ids = hy_palloc(req->pool, sizeof(int) * (size_t)n);
        SSL_get1_curves(ssl, ids);
        for (int i = 0; i < n; i++) {
            char hex[16];
            const char *name = (ids[i] & TLSEXT_nid_unknown) ? NULL : OBJ_nid2sn(ids[i]);
            if (name == NULL) {
                snprintf(hex, sizeof(hex), "0x%04x", ids[i] & 0xffff);
                name = hex;
            }
            put_name(req, &buf, &len, &cap, name);
        }
        break;
    }
    case V_SESSION_ID: {
        SSL_SESSION *sess = SSL_get0_session(ssl);
        unsigned n = 0;
        const unsigned char *id = sess ? SSL_SESSION_get_id(sess, &n) : NULL;
        buf = hy_palloc(req->pool, (size_t)n * 2 + 1);
        len = hy_hex_dump(buf, id, n); /* nginx: ngx_hex_dump, lower case */
        buf[len] = '\0';
        break;
    }
    case V_REUSED:
        set_cstr(v, SSL_session_reused(ssl) ? "r" : ".");
        return;
    case V_SERVER_NAME: {
        const char *n = SSL_get_servername(ssl, TLSEXT_NAMETYPE_host_name);
        set_cstr(v, n ? n : "");
        return;
    }
    case V_ALPN: {
        const unsigned char *p = NULL;
        unsigned n = 0;
        SSL_get0_alpn_selected(ssl, &p, &n);
        v->ptr = (char *)(p ? p : (const unsigned char *)"");
        v->len = n;
        return;
    }
    }
    if (buf) {
        v->ptr = buf;
        v->len = len;
    }
}

/* nginx's ngx_ssl_verify_error_optional: what optional_no_ca lets through */
static void ocsp_resume(void *arg)
{
    hy_http_phases_resume(arg);
}

static bool verify_error_optional(long rc)
{
    return rc == X509_V_ERR_DEPTH_ZERO_SELF_SIGNED_CERT || rc == X509_V_ERR_SELF_SIGNED_CERT_IN_CHAIN ||
           rc == X509_V_ERR_UNABLE_TO_GET_ISSUER_CERT || rc == X509_V_ERR_UNABLE_TO_GET_ISSUER_CERT_LOCALLY ||
           rc == X509_V_ERR_UNABLE_TO_VERIFY_LEAF_SIGNATURE;
}

/* Client certificates are checked for the request's server, before anything else runs (nginx does it when the
 * request head is complete): 495 for a certificate that failed, 496 for none when required, 421 when Host names
 * another server than the SNI name that chose the verification settings. */
static int verify_phase(hy_req_t *req)
{
    SSL *ssl = req_ssl(req);
    if (ssl == NULL)
        return HY_DECLINED;
    hy_http_ssl_srv_conf_t *sc = ssl_conf(req->srv);
    if (sc->verify == HY_SSL_VERIFY_OFF)
        return HY_DECLINED;
    hy_str_t sni = req->conn->server_name;
    if (sni.len && req->host.len && (sni.len != req->host.len || strncasecmp(sni.ptr, req->host.ptr, sni.len) != 0)) {
        char host[256];
        size_t n = HY_MIN(sni.len, sizeof(host) - 1);
        for (size_t i = 0; i < n; i++)
            host[i] = (char)(sni.ptr[i] >= 'A' && sni.ptr[i] <= 'Z' ? sni.ptr[i] + 32 : sni.ptr[i]);
        host[n] = '\0';
        if (hy_http_find_server(req->conn->addr, host, n, NULL) != req->srv) {
            hy_req_log(req, HY_LOG_INFO,
                       "client attempted to request the server name different from the one that was negotiated");
            return 421;
        }
    }
    X509 *cert = SSL_get0_peer_certificate(ssl);
    long rc = SSL_get_verify_result(ssl);
    if (cert && rc != X509_V_OK && (sc->verify != HY_SSL_VERIFY_OPTIONAL_NO_CA || !verify_error_optional(rc))) {
        hy_req_log(req, HY_LOG_INFO, "client SSL certificate verify error: (%ld:%s)", rc,
                   X509_verify_cert_error_string(rc));
        return 495;
    }
    if (cert == NULL && sc->verify == HY_SSL_VERIFY_ON) {
        hy_req_log(req, HY_LOG_INFO, "client sent no required SSL certificate");
        return 496;
    }
    if (cert && rc == X509_V_OK && sc->ocsp != HY_SSL_OCSP_OFF) {
        int st = hy_ssl_ocsp_validate(ssl, sc, req->conn->sock.loop, ocsp_resume, req);
        if (st == 1)
            return HY_AGAIN; /* the responders are asked; the request goes on when they answered */
        const char *why = st < 0 ? "certificate status request failed" : hy_ssl_ocsp_client_failure(ssl);
        if (why) {
            hy_req_log(req, HY_LOG_INFO, "client SSL certificate verify error: %s", why);
            return 495;
        }
    }
    return HY_DECLINED;
}

static int postconfiguration(hy_conf_t *cf)
{
    static const struct {
        const char *name;
        int what;
    } vars[] = {{"ssl_protocol", V_PROTOCOL},
                {"ssl_cipher", V_CIPHER},
                {"ssl_ciphers", V_CIPHERS},
                {"ssl_curve", V_CURVE},
                {"ssl_curves", V_CURVES},
                {"ssl_session_id", V_SESSION_ID},
                {"ssl_session_reused", V_REUSED},
                {"ssl_server_name", V_SERVER_NAME},
                {"ssl_alpn_protocol", V_ALPN},
                {"ssl_client_verify", V_CLIENT_VERIFY},
                {"ssl_client_s_dn", V_CLIENT_S_DN},
                {"ssl_client_i_dn", V_CLIENT_I_DN},
                {"ssl_client_serial", V_CLIENT_SERIAL},
                {"ssl_client_fingerprint", V_CLIENT_FINGERPRINT},
                {"ssl_client_raw_cert", V_CLIENT_RAW_CERT},
                {"ssl_client_cert", V_CLIENT_CERT},
                {"ssl_client_escaped_cert", V_CLIENT_ESCAPED_CERT},
                {"ssl_client_s_dn_legacy", V_CLIENT_S_DN_LEGACY},
                {"ssl_client_i_dn_legacy", V_CLIENT_I_DN_LEGACY},
                {"ssl_client_v_start", V_CLIENT_V_START},
                {"ssl_client_v_end", V_CLIENT_V_END},
                {"ssl_client_v_remain", V_CLIENT_V_REMAIN},
                {"ssl_early_data", V_EARLY_DATA}};
    for (size_t i = 0; i < HY_ARRAY_SIZE(vars); i++)
        hy_vars_define(cf, (hy_str_t){(char *)vars[i].name, strlen(vars[i].name)}, get_ssl_var, (uintptr_t)vars[i].what,
                       0);
    hy_http_main_conf_t *m = cf->main_conf[hy_http_core_module.index];
    hy_http_srv_conf_t **srvs = m->servers->elts;
    for (size_t i = 0; i < m->servers->nelts; i++)
        if (ssl_conf(srvs[i])->verify != HY_SSL_VERIFY_OFF) {
            if (hy_http_phase_add(cf, HY_PHASE_POST_READ, verify_phase) != 0)
                return -1;
            break;
        }
    /* every TLS address needs a certificate in its default server (nginx's ngx_http_ssl_init) */
    hy_http_addr_t *addrs = m->addrs->elts;
    for (size_t i = 0; i < m->addrs->nelts; i++) {
        if (!addrs[i].spec.ssl)
            continue;
        hy_http_ssl_srv_conf_t *sc = ssl_conf(addrs[i].default_server);
        if (sc->ctx == NULL) {
            cf->file = addrs[i].default_server->file, cf->line = addrs[i].default_server->line;
            return hy_conf_error(cf, "no \"ssl_certificate\" is defined for the \"listen ... ssl\" directive");
        }
    }
    return 0;
}

#define SSRV(field) .conf = HY_CONF_SRV, .offset = offsetof(hy_http_ssl_srv_conf_t, field)
#define SCTX (HY_CTX_HTTP | HY_CTX_SERVER)

static const hy_bounds_t buffer_bounds = {1, 16384};
static const hy_bounds_t depth_bounds = {0, 100};
static const hy_enum_t verify_modes[] = {{"off", HY_SSL_VERIFY_OFF},
                                         {"on", HY_SSL_VERIFY_ON},
                                         {"optional", HY_SSL_VERIFY_OPTIONAL},
                                         {"optional_no_ca", HY_SSL_VERIFY_OPTIONAL_NO_CA},
                                         {NULL, 0}};

static const hy_enum_t ocsp_modes[] = {{"off", HY_SSL_OCSP_OFF}, {"on", HY_SSL_OCSP_ON}, {"leaf", HY_SSL_OCSP_LEAF},
                                       {NULL, 0}};

static const hy_directive_t directives[] = {
    {.name = "ssl", .ctx = SCTX, .args = HY_ARGS_FLAG, .set = set_ssl_on, SSRV(enable)},
    {.name = "ssl_certificate", .ctx = SCTX, .args = HY_ARGS_1, .set = set_certificate, SSRV(certificates)},
    {.name = "ssl_certificate_key", .ctx = SCTX, .args = HY_ARGS_1, .set = set_certificate_key, SSRV(keys)},
    {.name = "ssl_certificate_cache", .ctx = SCTX, .args = HY_ARGS_123, .set = set_certificate_cache, SSRV(cert_cache)},
    {.name = "ssl_object_cache_inheritable",
     .ctx = HY_CTX_MAIN,
     .args = HY_ARGS_FLAG,
     .set = hy_slot_flag,
     .conf = HY_CONF_CORE,
     .offset = offsetof(hy_ssl_core_conf_t, object_cache_inheritable)},
    {.name = "ssl_password_file", .ctx = SCTX, .args = HY_ARGS_1, .set = set_password_file, SSRV(passwords)},
    {.name = "ssl_protocols", .ctx = SCTX, .args = HY_ARGS_1MORE, .set = set_protocols, SSRV(protocols)},
    {.name = "ssl_ciphers", .ctx = SCTX, .args = HY_ARGS_1, .set = hy_slot_str, SSRV(ciphers)},
    {.name = "ssl_prefer_server_ciphers",
     .ctx = SCTX,
     .args = HY_ARGS_FLAG,
     .set = hy_slot_flag,
     SSRV(prefer_server_ciphers)},
    {.name = "ssl_ecdh_curve", .ctx = SCTX, .args = HY_ARGS_1, .set = hy_slot_str, SSRV(ecdh_curve)},
    {.name = "ssl_dhparam", .ctx = SCTX, .args = HY_ARGS_1, .set = set_dhparam, SSRV(dhparam)},
    {.name = "ssl_conf_command", .ctx = SCTX, .args = HY_ARGS_2, .set = set_conf_command, SSRV(conf_commands)},
    {.name = "ssl_buffer_size",
     .ctx = SCTX,
     .args = HY_ARGS_1,
     .set = hy_slot_size,
     SSRV(buffer_size),
     .post = &buffer_bounds},
    {.name = "ssl_handshake_timeout", .ctx = SCTX, .args = HY_ARGS_1, .set = hy_slot_msec, SSRV(handshake_timeout_ms)},
    {.name = "ssl_reject_handshake", .ctx = SCTX, .args = HY_ARGS_FLAG, .set = hy_slot_flag, SSRV(reject_handshake)},
    {.name = "ssl_verify_client",
     .ctx = SCTX,
     .args = HY_ARGS_1,
     .set = hy_slot_enum,
     SSRV(verify),
     .post = verify_modes},
    {.name = "ssl_verify_depth",
     .ctx = SCTX,
     .args = HY_ARGS_1,
     .set = hy_slot_num,
     SSRV(verify_depth),
     .post = &depth_bounds},
    {.name = "ssl_client_certificate",
     .ctx = SCTX,
     .args = HY_ARGS_1,
     .set = set_client_certificate,
     SSRV(client_certificate)},
    {.name = "ssl_trusted_certificate",
     .ctx = SCTX,
     .args = HY_ARGS_1,
     .set = set_trusted_certificate,
     SSRV(trusted_certificate)},
    {.name = "ssl_crl", .ctx = SCTX, .args = HY_ARGS_1, .set = set_crl, SSRV(crl)},
    {.name = "ssl_early_data", .ctx = SCTX, .args = HY_ARGS_FLAG, .set = hy_slot_flag, SSRV(early_data)},
    {.name = "ssl_ocsp", .ctx = SCTX, .args = HY_ARGS_1, .set = hy_slot_enum, SSRV(ocsp), .post = ocsp_modes},
    {.name = "ssl_ocsp_responder", .ctx = SCTX, .args = HY_ARGS_1, .set = set_stapling_responder, SSRV(ocsp_responder)},
    {.name = "ssl_ocsp_cache", .ctx = SCTX, .args = HY_ARGS_1, .set = set_ocsp_cache, SSRV(ocsp_cache)},
    {.name = "ssl_stapling", .ctx = SCTX, .args = HY_ARGS_FLAG, .set = hy_slot_flag, SSRV(stapling)},
    {.name = "ssl_stapling_file", .ctx = SCTX, .args = HY_ARGS_1, .set = set_stapling_file, SSRV(stapling_file)},
    {.name = "ssl_stapling_verify", .ctx = SCTX, .args = HY_ARGS_FLAG, .set = hy_slot_flag, SSRV(stapling_verify)},
    {.name = "ssl_stapling_responder", .ctx = SCTX, .args = HY_ARGS_1, .set = set_stapling_responder, SSRV(stapling_responder)},
    {.name = "ssl_session_cache",
     .ctx = SCTX,
     .args = HY_ARGS_12,
     .set = hy_http_ssl_set_session_cache,
     SSRV(cache_mode)},
    {.name = "ssl_session_timeout", .ctx = SCTX, .args = HY_ARGS_1, .set = hy_slot_sec, SSRV(session_timeout_s)},
    {.name = "ssl_session_tickets", .ctx = SCTX, .args = HY_ARGS_FLAG, .set = hy_slot_flag, SSRV(session_tickets)},
    {.name = "ssl_session_ticket_key", .ctx = SCTX, .args = HY_ARGS_1, .set = set_ticket_key, SSRV(ticket_key_files)},
    {0},
};

static void *create_core(hy_cycle_t *cycle)
{
    hy_ssl_core_conf_t *c = hy_pcalloc(cycle->pool, sizeof(*c));
    c->object_cache_inheritable = HY_UNSET;
    return c;
}

hy_module_t hy_http_ssl_module = {
    .name = "http_ssl",
    .directives = directives,
    .create_core_conf = create_core,
    .create_srv_conf = create_srv,
    .merge_srv_conf = merge_srv,
    .postconfiguration = postconfiguration,
};
