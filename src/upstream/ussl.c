/* ussl.c — upstreams over TLS (see ussl.h): the *_ssl_* directives, the client context, and one connection's
 * handshake setup and checks. The transport is event/tls.c's (hy_tls_connect), so a connection parked in the
 * keep-alive pool keeps its SSL object and goes on encrypting when it is taken again. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <arpa/inet.h>
#include <openssl/err.h>
#include <openssl/x509v3.h>
#include "ussl.h"
#include "../http/ssl_module.h"
#include "../http/ssl_cache.h"
#include "../http/vars.h"
#include "../conf/cycle.h"
#include "../event/tls.h"

struct hy_ussl_built {
    SSL_CTX *ctx;
    hy_complex_t *cert_cv, *key_cv; /* a client certificate named with variables: loaded per connection */
    hy_array_t *passwords;
    hy_ssl_cache_t *cert_cache; /* *_ssl_certificate_cache for those (NULL: off) */
};

const hy_bounds_t hy_ussl_depth_bounds = {0, 100};

static int peer_idx = -1; /* SSL ex_data: the peer whose session slot a new session goes to */

/* ---------------------------------------------------------------- directives */

void hy_ussl_init(hy_ussl_t *c)
{
    memset(c, 0, sizeof(*c));
    c->server_name = c->verify = c->session_reuse = HY_UNSET;
    c->verify_depth = HY_UNSET;
    c->protocols = HY_UNSET;
}

int hy_ussl_set_name(hy_conf_t *cf, const hy_directive_t *d, void *conf)
{
    hy_complex_t **slot = (hy_complex_t **)((char *)conf + d->offset);
    size_t n;
    hy_str_t *a = hy_conf_args(cf, &n);
    if (*slot != NULL)
        return hy_conf_error(cf, "\"%s\" directive is duplicate", d->name);
    *slot = hy_pcalloc(cf->pool, sizeof(**slot));
    return hy_vars_compile(cf, a[1], *slot);
}

int hy_ussl_set_path(hy_conf_t *cf, const hy_directive_t *d, void *conf)
{
    hy_str_t *slot = (hy_str_t *)((char *)conf + d->offset);
    size_t n;
    hy_str_t *a = hy_conf_args(cf, &n);
    if (slot->ptr != NULL)
        return hy_conf_error(cf, "\"%s\" directive is duplicate", d->name);
    char *full = hy_cycle_conf_path(cf->cycle, a[1].ptr, a[1].len);
    *slot = (hy_str_t){full, strlen(full)};
    return 0;
}

/* *_ssl_certificate(_key): kept as written (variables are compiled when the context is built); "" means none */
int hy_ussl_set_cert(hy_conf_t *cf, const hy_directive_t *d, void *conf)
{
    hy_str_t *slot = (hy_str_t *)((char *)conf + d->offset);
    size_t n;
    hy_str_t *a = hy_conf_args(cf, &n);
    if (slot->ptr != NULL)
        return hy_conf_error(cf, "\"%s\" directive is duplicate", d->name);
    *slot = hy_str_dup(cf->pool, a[1]);
    size_t nl = strlen(d->name);
    if (nl < 4 || strcmp(d->name + nl - 4, "_key") != 0) { /* *_ssl_certificate: remembered for messages */
        hy_ussl_t *c = (hy_ussl_t *)((char *)slot - offsetof(hy_ussl_t, certificate));
        c->cert_file = cf->file, c->cert_line = cf->line;
    }
    return 0;
}

int hy_ussl_set_passwords(hy_conf_t *cf, const hy_directive_t *d, void *conf)
{
    hy_array_t **slot = (hy_array_t **)((char *)conf + d->offset);
    size_t n;
    hy_str_t *a = hy_conf_args(cf, &n);
    if (*slot != NULL)
        return hy_conf_error(cf, "\"%s\" directive is duplicate", d->name);
    *slot = hy_http_ssl_read_passwords(cf, a[1]);
    return *slot ? 0 : -1;
}

int hy_ussl_set_cert_cache(hy_conf_t *cf, const hy_directive_t *d, void *conf)
{
    hy_ussl_t *c = (hy_ussl_t *)((char *)conf + d->offset - offsetof(hy_ussl_t, cert_cache));
    if (c->cert_cache_set)
        return hy_conf_error(cf, "\"%s\" directive is duplicate", d->name);
    c->cert_cache_set = 1;
    return hy_ssl_cache_parse(cf, &c->cert_cache);
}

int hy_ussl_set_protocols(hy_conf_t *cf, const hy_directive_t *d, void *conf)
{
    int *slot = (int *)((char *)conf + d->offset);
    size_t n;
    hy_str_t *a = hy_conf_args(cf, &n);
    *slot = hy_http_ssl_parse_protocols(cf, a, n, *slot); /* repeated: the protocols add up, as in nginx */
    return *slot < 0 ? -1 : 0;
}

int hy_ussl_set_conf_command(hy_conf_t *cf, const hy_directive_t *d, void *conf)
{
    hy_array_t **slot = (hy_array_t **)((char *)conf + d->offset);
    size_t n;
    hy_str_t *a = hy_conf_args(cf, &n);
    if (*slot == NULL)
        *slot = hy_array_create(cf->pool, 2, sizeof(hy_ssl_conf_cmd_t));
    hy_ssl_conf_cmd_t *cmd = hy_array_push(*slot);
    cmd->name = hy_str_dup(cf->pool, a[1]);
    cmd->value = hy_str_dup(cf->pool, a[2]);
    return 0;
}

/* ---------------------------------------------------------------- the context */

static void free_ctx(void *p)
{
    SSL_CTX_free(p);
}

static int on_verify(int ok, X509_STORE_CTX *store)
{
    (void)ok, (void)store;
    return 1; /* as nginx: the handshake completes; the result is checked after it (hy_ussl_check) */
}

/* A peer's saved session, DER-encoded: every connection resumes from a fresh copy. OpenSSL marks a TLS 1.3 session
 * object it resumed from as used up (clients should use a ticket once), so keeping the object itself would allow
 * one resumption per ticket when the server sends no new ticket after a resumption (as nginx's and ours do). */
typedef struct saved_session {
    size_t len;
    unsigned char der[];
} saved_session_t;

/* A new session from the upstream (after the handshake in TLS 1.2, with a NewSessionTicket in TLS 1.3): it becomes
 * the peer's session for the next connection (per worker, as nginx keeps it without a zone). */
static int on_new_session(SSL *ssl, SSL_SESSION *sess)
{
    hy_upstream_peer_t *p = peer_idx < 0 ? NULL : SSL_get_ex_data(ssl, peer_idx);
    int len = i2d_SSL_SESSION(sess, NULL);
    if (p == NULL || len <= 0 || len > 16384)
        return 0;
    saved_session_t *ss = hy_alloc(sizeof(*ss) + (size_t)len);
    unsigned char *o = ss->der;
    ss->len = (size_t)i2d_SSL_SESSION(sess, &o);
    free(p->ssl_session);
    p->ssl_session = ss;
    return 0; /* OpenSSL keeps its reference */
}

/* The peer's saved session as a new object (the caller frees it), or NULL. */
static SSL_SESSION *saved_session(hy_upstream_peer_t *p)
{
    saved_session_t *ss = p->ssl_session;
    if (ss == NULL)
        return NULL;
    const unsigned char *q = ss->der;
    return d2i_SSL_SESSION(NULL, &q, (long)ss->len);
}

void hy_ussl_free_sessions(void *arg)
{
    hy_upstream_group_t *g = arg;
    for (size_t i = 0; i < g->npeers; i++) {
        free(g->peers[i].ssl_session);
        g->peers[i].ssl_session = NULL;
    }
}

static bool has_var(hy_str_t v)
{
    return memchr(v.ptr, '$', v.len) != NULL;
}

/* a certificate or key name: a file relative to the configuration's directory, or data:/store: as written */
static char *conf_name(hy_conf_t *cf, hy_str_t v)
{
    if (hy_ssl_obj_is_special(v))
        return hy_pstrndup(cf->pool, v.ptr, v.len);
    return hy_cycle_conf_path(cf->cycle, v.ptr, v.len);
}

static int build(hy_conf_t *cf, hy_ussl_t *c, hy_ussl_built_t *b, const char *module)
{
    SSL_CTX *ctx = SSL_CTX_new(TLS_client_method());
    if (ctx == NULL)
        return hy_http_ssl_conf_fail(cf, "%s", "SSL_CTX_new() failed");
    hy_pool_on_clear(cf->pool, free_ctx, ctx); /* the generation's arena owns it */
    b->ctx = ctx;
    /* an upstream that closes without close_notify ends an EOF-delimited body, as a plain one does */
    SSL_CTX_set_options(ctx, SSL_OP_NO_COMPRESSION | SSL_OP_IGNORE_UNEXPECTED_EOF);
    SSL_CTX_set_mode(ctx, SSL_MODE_NO_AUTO_CHAIN);
    if (hy_http_ssl_apply_protocols(ctx, c->protocols) != 0)
        return hy_http_ssl_conf_fail(cf, "%s", "SSL_CTX_set_min_proto_version() failed");
    if (SSL_CTX_set_cipher_list(ctx, c->ciphers.ptr) != 1)
        return hy_http_ssl_conf_fail(cf, "SSL_CTX_set_cipher_list(\"%s\") failed", c->ciphers.ptr);
    if (c->verify) {
        if (c->trusted_certificate.ptr == NULL)
            return hy_conf_error(cf, "no %s_ssl_trusted_certificate for %s_ssl_verify", module, module);
        SSL_CTX_set_verify(ctx, SSL_VERIFY_PEER, on_verify);
        SSL_CTX_set_verify_depth(ctx, (int)c->verify_depth);
        if (hy_ssl_ctx_use_ca(cf, ctx, c->trusted_certificate.ptr, false) != 0 ||
            (c->crl.ptr && hy_ssl_ctx_use_crl(cf, ctx, c->crl.ptr) != 0))
            return -1;
    }
    if (c->certificate.len) {
        if (c->certificate_key.len == 0) {
            if (c->cert_file)
                cf->file = c->cert_file, cf->line = c->cert_line;
            return hy_conf_error(cf, "no \"%s_ssl_certificate_key\" is defined for certificate \"%s\"", module,
                                 c->certificate.ptr);
        }
        b->passwords = c->passwords;
        b->cert_cache = c->cert_cache;
        if (has_var(c->certificate) || has_var(c->certificate_key)) {
            b->cert_cv = hy_pcalloc(cf->pool, sizeof(hy_complex_t));
            b->key_cv = hy_pcalloc(cf->pool, sizeof(hy_complex_t));
            if (hy_vars_compile(cf, c->certificate, b->cert_cv) != 0 ||
                hy_vars_compile(cf, c->certificate_key, b->key_cv) != 0)
                return -1;
        } else {
            char *crt = conf_name(cf, c->certificate), *key = conf_name(cf, c->certificate_key);
            if (hy_ssl_ctx_use_pair(cf, ctx, crt, key, c->passwords) != 0)
                return -1;
        }
    }
    if (c->session_reuse) {
        if (peer_idx < 0)
            peer_idx = SSL_get_ex_new_index(0, NULL, NULL, NULL, NULL);
        SSL_CTX_set_session_cache_mode(ctx, SSL_SESS_CACHE_CLIENT | SSL_SESS_CACHE_NO_INTERNAL);
        SSL_CTX_sess_set_new_cb(ctx, on_new_session);
    } else {
        SSL_CTX_set_session_cache_mode(ctx, SSL_SESS_CACHE_OFF);
        SSL_CTX_set_options(ctx, SSL_OP_NO_TICKET);
    }
    return hy_http_ssl_conf_commands(cf, ctx, c->conf_commands, false);
}

int hy_ussl_merge(hy_conf_t *cf, hy_ussl_t *c, const hy_ussl_t *p, const char *module, bool needed)
{
    bool own = c->server_name != HY_UNSET || c->verify != HY_UNSET || c->session_reuse != HY_UNSET ||
               c->verify_depth != HY_UNSET || c->protocols != HY_UNSET || c->name || c->trusted_certificate.ptr ||
               c->crl.ptr || c->certificate.ptr || c->certificate_key.ptr || c->passwords || c->ciphers.ptr ||
               c->conf_commands || c->cert_cache_set;
    hy_merge_value(c->server_name, p->server_name, 0);
    hy_merge_value(c->verify, p->verify, 0);
    hy_merge_value(c->session_reuse, p->session_reuse, 1);
    hy_merge_value(c->verify_depth, p->verify_depth, 1);
    /* nginx's default since 1.23.4; older ones also allowed TLSv1 and TLSv1.1 */
    hy_merge_value(c->protocols, p->protocols, 0x30 /* TLSv1.2 TLSv1.3 */);
    hy_merge_str(c->ciphers, p->ciphers, "DEFAULT");
    if (c->name == NULL)
        c->name = p->name;
    if (c->trusted_certificate.ptr == NULL)
        c->trusted_certificate = p->trusted_certificate;
    if (c->crl.ptr == NULL)
        c->crl = p->crl;
    if (c->certificate.ptr == NULL)
        c->certificate = p->certificate, c->cert_file = p->cert_file, c->cert_line = p->cert_line;
    if (c->certificate_key.ptr == NULL)
        c->certificate_key = p->certificate_key;
    if (c->passwords == NULL)
        c->passwords = p->passwords;
    if (c->conf_commands == NULL)
        c->conf_commands = p->conf_commands;
    if (!c->cert_cache_set)
        c->cert_cache = p->cert_cache, c->cert_cache_set = p->cert_cache_set;
    if (!own) {
        /* the same settings as the parent's: one context for both (made at the parent's level if it has none) */
        hy_ussl_t *pp = (hy_ussl_t *)p;
        if (pp->built == NULL)
            pp->built = hy_pcalloc(cf->pool, sizeof(hy_ussl_built_t));
        c->built = pp->built;
    } else if (c->built == NULL) {
        c->built = hy_pcalloc(cf->pool, sizeof(hy_ussl_built_t));
    }
    if (!needed || c->built->ctx != NULL)
        return 0;
    return build(cf, c, c->built, module);
}

bool hy_ussl_ready(const hy_ussl_t *c)
{
    return c->built && c->built->ctx;
}

const void *hy_ussl_key(const hy_ussl_t *c)
{
    return c && c->built ? c->built->ctx : NULL;
}

/* ---------------------------------------------------------------- one connection */

/* The name to check and to send: *_ssl_name or the host of *_pass, without a port (nginx cuts it: $proxy_host and
 * $http_host carry one). */
static hy_str_t cut_port(hy_str_t name)
{
    const char *p = name.ptr, *end = name.ptr + name.len;
    if (name.len && *p == '[') {
        p = memchr(p, ']', name.len);
        if (p == NULL)
            p = name.ptr;
    }
    const char *colon = memchr(p, ':', (size_t)(end - p));
    if (colon)
        name.len = (size_t)(colon - name.ptr);
    return name;
}

static hy_str_t ssl_name(hy_ureq_t *u)
{
    hy_str_t name = u->ssl_host;
    if (u->ssl->name)
        hy_vars_eval(u->req, u->ssl->name, &name);
    name = cut_port(name);
    return (hy_str_t){hy_pstrndup(u->req->pool, name.ptr, name.len), name.len};
}

static bool is_address(hy_str_t name)
{
    struct in_addr a4;
    return name.len == 0 || name.ptr[0] == '[' || inet_pton(AF_INET, name.ptr, &a4) == 1;
}

/* A file named at run time, relative to the configuration's directory (request pool, NUL-terminated). */
static char *conf_path(hy_req_t *req, hy_str_t v)
{
    const char *pre = (v.len && v.ptr[0] == '/') || hy_ssl_obj_is_special(v) ? "" : req->conn->cycle->conf_prefix;
    size_t pl = strlen(pre);
    char *p = hy_palloc(req->pool, pl + v.len + 1);
    memcpy(p, pre, pl);
    memcpy(p + pl, v.ptr, v.len);
    p[pl + v.len] = '\0';
    return p;
}

/* The connection's SSL object on sock s with ALPN "h2" when h2 and SNI name (NUL-terminated) when
 * *_ssl_server_name is on and name is not an address: NULL and *out, or why not. Shared by proxied connections
 * and health probes. */
static const char *tls_start(const hy_ussl_t *c, hy_sock_t *s, hy_str_t name, bool h2, SSL **out)
{
    SSL *ssl = hy_tls_connect(s, c->built->ctx);
    if (ssl == NULL)
        return "SSL_new() failed";
    *out = ssl;
    if (h2 && SSL_set_alpn_protos(ssl, (const unsigned char *)"\x02h2", 3) != 0) {
        ERR_clear_error();
        return "SSL_set_alpn_protos() failed";
    }
    if (c->server_name && !is_address(name) && SSL_set_tlsext_host_name(ssl, name.ptr) != 1) {
        ERR_clear_error();
        return "SSL_set_tlsext_host_name() failed";
    }
    return NULL;
}

/* A client certificate named with variables: evaluated for this request ("" for either: none). */
static const char *dynamic_cert(hy_ureq_t *u, SSL *ssl)
{
    const hy_ussl_built_t *b = u->ssl->built;
    hy_str_t cv, kv;
    hy_vars_eval(u->req, b->cert_cv, &cv);
    hy_vars_eval(u->req, b->key_cv, &kv);
    if (cv.len == 0 || kv.len == 0)
        return NULL;
    char *crt = conf_path(u->req, cv), *key = conf_path(u->req, kv);
    char *msg = hy_palloc(u->req->pool, 1536);
    return hy_ssl_use_pair(ssl, b->cert_cache, crt, key, b->passwords, msg, 1536);
}

const char *hy_ussl_connect(hy_ureq_t *u, hy_sock_cb cb)
{
    const hy_ussl_t *c = u->ssl;
    hy_sock_t *s = &u->conn->sock;
    if (!hy_ussl_ready(c)) /* a merge that did not expect TLS here (a bug): refuse rather than crash */
        return "no SSL context for the upstream";
    SSL *ssl;
    u->ssl_name = ssl_name(u);
    const char *err = tls_start(c, s, u->ssl_name, u->version == 20, &ssl);
    if (err)
        return err;
    if (c->session_reuse && u->peer) {
        if (!u->group->transient)
            SSL_set_ex_data(ssl, peer_idx, u->peer);
        SSL_SESSION *sess = saved_session(u->peer);
        if (sess && SSL_set_session(ssl, sess) != 1)
            ERR_clear_error(); /* a session OpenSSL refuses: a full handshake */
        SSL_SESSION_free(sess);
    }
    if (c->built->cert_cv && (err = dynamic_cert(u, ssl)) != NULL)
        return err;
    hy_sock_handshake_within(s, (uint64_t)u->connect_timeout_ms, cb);
    return NULL;
}

/* The verification's result for name n: NULL when good, else why (in msg). */
static const char *check_peer(SSL *ssl, hy_str_t n, char *msg, size_t cap)
{
    long rc = SSL_get_verify_result(ssl);
    if (rc != X509_V_OK) {
        snprintf(msg, cap, "upstream SSL certificate verify error: (%ld:%s)", rc, X509_verify_cert_error_string(rc));
        return msg;
    }
    X509 *cert = SSL_get0_peer_certificate(ssl);
    /* names only, as nginx (an address as the name never matches) */
    bool ok = cert && n.len && X509_check_host(cert, n.ptr, n.len, 0, NULL) == 1;
    if (ok)
        return NULL;
    snprintf(msg, cap, "upstream SSL certificate does not match \"%.*s\"", (int)n.len, n.ptr);
    return msg;
}

const char *hy_ussl_check(hy_ureq_t *u)
{
    if (!u->ssl->verify)
        return NULL;
    size_t cap = u->ssl_name.len + 256;
    return check_peer(hy_tls_ssl(&u->conn->sock), u->ssl_name, hy_palloc(u->req->pool, cap), cap);
}

/* ---------------------------------------------------------------- a health probe (no request) */

const char *hy_ussl_probe_start(const hy_ussl_t *c, hy_sock_t *s, hy_str_t host, bool h2, uint64_t timeout_ms,
                                hy_sock_cb cb, char *name, size_t cap)
{
    if (!hy_ussl_ready(c))
        return "no SSL context for the upstream";
    hy_str_t n = c->name && c->name->parts == NULL ? c->name->value : host;
    n = cut_port(n);
    snprintf(name, cap, "%.*s", (int)HY_MIN(n.len, cap - 1), n.ptr);
    n = (hy_str_t){name, strlen(name)};
    SSL *ssl;
    const char *err = tls_start(c, s, n, h2, &ssl);
    if (err)
        return err;
    hy_sock_handshake_within(s, timeout_ms, cb);
    return NULL;
}

const char *hy_ussl_probe_check(const hy_ussl_t *c, hy_sock_t *s, const char *name, char *buf, size_t cap)
{
    if (!c->verify)
        return NULL;
    return check_peer(hy_tls_ssl(s), (hy_str_t){(char *)name, strlen(name)}, buf, cap);
}
