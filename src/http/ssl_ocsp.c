/* ssl_ocsp.c — OCSP stapling from the certificate's responder (see ssl_ocsp.h for the contract). */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <arpa/inet.h>
#include <netdb.h>
#include <string.h>
#include <strings.h>
#include <time.h>
#include <openssl/err.h>
#include <openssl/ocsp.h>
#include <openssl/pem.h>
#include <openssl/x509v3.h>
#include "ssl_ocsp.h"
#include "../conf/cycle.h"
#include "../core/log.h"
#include "../core/mem.h"
#include "../event/sock.h"
#include "../event/tls.h"

#define OCSP_TIMEOUT_MS 60000
#define OCSP_RESPONSE_MAX (256 * 1024)
#define RETRY_S 300
#define REFRESH_MAX_S 3600

typedef struct ocsp_fetch ocsp_fetch_t;

typedef struct ocsp_staple {
    X509 *cert;              /* the context's (borrowed) */
    X509 *issuer;            /* a reference of ours */
    OCSP_CERTID *id;         /* ours */
    X509_STORE *store;       /* the context's trusted store (borrowed), for ssl_stapling_verify */
    STACK_OF(X509) *chain;   /* the certificate's chain in the context (borrowed) */
    bool verify;
    const char *file;        /* the certificate file, for messages */
    char host[256];          /* the responder's host, for the Host field and messages */
    char *path;              /* its URI path (conf pool) */
    struct sockaddr_storage sa;
    socklen_t salen;
    char peer[INET6_ADDRSTRLEN + 8];
    /* per worker */
    unsigned char *resp;     /* the DER response being stapled (malloc'd), resp_len bytes */
    size_t resp_len;
    time_t valid, refresh;   /* wall seconds */
    ocsp_fetch_t *fetch;     /* a query in flight */
} ocsp_staple_t;

typedef struct ocsp_set {
    size_t n;
    ocsp_staple_t *staples;
} ocsp_set_t;

struct ocsp_fetch {
    hy_sock_t sock;
    hy_timer_t timer;
    ocsp_staple_t *st;
    char *request; /* the HTTP request (malloc'd) */
};

/* ---------------- configuration ---------------- */

static void free_staple(void *p)
{
    ocsp_staple_t *st = p;
    if (st->fetch) { /* the generation ends with a query in flight */
        ocsp_fetch_t *f = st->fetch;
        if (hy_timer_is_linked(&f->timer))
            hy_timer_unlink(f->sock.loop, &f->timer);
        hy_sock_close(&f->sock);
        hy_loop_free_later(f->sock.loop, free, f->request);
        hy_loop_free_later(f->sock.loop, free, f);
        st->fetch = NULL;
    }
    OCSP_CERTID_free(st->id);
    X509_free(st->issuer);
    free(st->resp);
}

/* http://host[:port][/path] → host, port text, path (default "/"). NULL, or what is wrong in nginx's words
 * ("invalid URL prefix" when it is no http:// URL, else about the part after it). */
static const char *parse_url(const char *url, char *host, size_t hostcap, char *port, size_t portcap,
                             const char **path)
{
    if (strncasecmp(url, "http://", 7) != 0)
        return "invalid URL prefix";
    const char *h = url + 7, *end = h + strcspn(h, "/?#");
    const char *colon = NULL;
    if (*h == '[') { /* [IPv6]:port */
        const char *rb = memchr(h, ']', (size_t)(end - h));
        if (rb == NULL)
            return "invalid host";
        if (rb + 1 < end && rb[1] == ':')
            colon = rb + 1;
        else if (rb + 1 != end)
            return "invalid host";
        if (rb == h + 1)
            return "no host";
        if ((size_t)(rb - h - 1) >= hostcap)
            return "invalid host";
        memcpy(host, h + 1, (size_t)(rb - h - 1));
        host[rb - h - 1] = '\0';
    } else {
        colon = memchr(h, ':', (size_t)(end - h));
        const char *he = colon ? colon : end;
        if (he == h)
            return "no host";
        if ((size_t)(he - h) >= hostcap)
            return "invalid host";
        memcpy(host, h, (size_t)(he - h));
        host[he - h] = '\0';
    }
    if (colon) {
        size_t pl = (size_t)(end - colon - 1);
        if (pl == 0 || pl >= portcap || strspn(colon + 1, "0123456789") < pl)
            return "invalid port";
        memcpy(port, colon + 1, pl);
        port[pl] = '\0';
    } else {
        snprintf(port, portcap, "80");
    }
    *path = *end == '/' ? end : "/";
    return NULL;
}

static X509 *find_issuer(X509 *cert, STACK_OF(X509) *chain, X509_STORE *store)
{
    for (int i = 0; chain && i < sk_X509_num(chain); i++) {
        X509 *c = sk_X509_value(chain, i);
        if (X509_check_issued(c, cert) == X509_V_OK) {
            X509_up_ref(c);
            return c;
        }
    }
    X509 *issuer = NULL;
    X509_STORE_CTX *sctx = X509_STORE_CTX_new();
    if (sctx && X509_STORE_CTX_init(sctx, store, NULL, NULL) == 1 && X509_STORE_CTX_get1_issuer(&issuer, sctx, cert) != 1)
        issuer = NULL;
    X509_STORE_CTX_free(sctx);
    ERR_clear_error();
    return issuer;
}

/* The certificate file a context certificate came from (for messages as nginx words them). */
static const char *cert_file(hy_http_ssl_srv_conf_t *c, X509 *cert)
{
    hy_str_t *paths = c->certificates ? c->certificates->elts : NULL;
    for (size_t i = 0; paths && i < c->certificates->nelts; i++) {
        BIO *bio = BIO_new_file(paths[i].ptr, "r");
        X509 *x = bio ? PEM_read_bio_X509(bio, NULL, NULL, NULL) : NULL;
        BIO_free(bio);
        bool same = x && X509_cmp(x, cert) == 0;
        X509_free(x);
        if (same)
            return paths[i].ptr;
    }
    ERR_clear_error();
    return "?";
}

/* One certificate: 1 set up, 0 not stapled (warned), -1 out of memory. */
static int setup_one(hy_conf_t *cf, hy_http_ssl_srv_conf_t *c, ocsp_staple_t *st)
{
    st->file = cert_file(c, st->cert);
    st->issuer = find_issuer(st->cert, st->chain, st->store);
    if (st->issuer == NULL) {
        hy_conf_warn(cf, "\"ssl_stapling\" ignored, issuer certificate not found for certificate \"%s\"", st->file);
        return 0;
    }
    const char *url = c->stapling_responder.ptr;
    STACK_OF(OPENSSL_STRING) *aia = NULL;
    if (url == NULL) {
        aia = X509_get1_ocsp(st->cert);
        url = aia && sk_OPENSSL_STRING_num(aia) > 0 ? sk_OPENSSL_STRING_value(aia, 0) : NULL;
        if (url == NULL) {
            X509_email_free(aia);
            hy_conf_warn(cf, "\"ssl_stapling\" ignored, no OCSP responder URL in the certificate \"%s\"", st->file);
            return 0;
        }
    }
    char port[8];
    const char *path;
    const char *bad = parse_url(url, st->host, sizeof(st->host), port, sizeof(port), &path);
    if (bad == NULL)
        st->path = hy_pstrndup(cf->pool, path, strlen(path));
    char url_copy[512];
    snprintf(url_copy, sizeof(url_copy), "%s", url);
    X509_email_free(aia);
    if (bad) { /* nginx quotes the URL after "http://" unless the prefix is what is wrong */
        bool prefix = strncasecmp(url_copy, "http://", 7) != 0;
        hy_conf_warn(cf, "\"ssl_stapling\" ignored, %s in OCSP responder \"%s\" in the certificate \"%s\"", bad,
                     prefix ? url_copy : url_copy + 7, st->file);
        return 0;
    }
    struct addrinfo hints = {.ai_socktype = SOCK_STREAM, .ai_flags = AI_ADDRCONFIG}, *ai = NULL;
    if (getaddrinfo(st->host, port, &hints, &ai) != 0 || ai == NULL) {
        hy_conf_warn(cf, "\"ssl_stapling\" ignored, host not found in OCSP responder \"%s\" in the certificate \"%s\"",
                     url_copy + 7, st->file);
        return 0;
    }
    memcpy(&st->sa, ai->ai_addr, ai->ai_addrlen);
    st->salen = ai->ai_addrlen;
    char ip[INET6_ADDRSTRLEN] = "?";
    getnameinfo(ai->ai_addr, ai->ai_addrlen, ip, sizeof(ip), NULL, 0, NI_NUMERICHOST);
    snprintf(st->peer, sizeof(st->peer), ai->ai_family == AF_INET6 ? "[%s]:%s" : "%s:%s", ip, port);
    freeaddrinfo(ai);
    st->id = OCSP_cert_to_id(NULL, st->cert, st->issuer);
    if (st->id == NULL)
        return hy_conf_error(cf, "%s", "OCSP_cert_to_id() failed"), -1;
    return 1;
}

static int on_status(SSL *ssl, void *arg);

int hy_ssl_ocsp_setup(hy_conf_t *cf, hy_http_ssl_srv_conf_t *c)
{
    SSL_CTX *ctx = c->ctx;
    size_t n = 0;
    for (int r = SSL_CTX_set_current_cert(ctx, SSL_CERT_SET_FIRST); r == 1;
         r = SSL_CTX_set_current_cert(ctx, SSL_CERT_SET_NEXT))
        n++;
    ocsp_set_t *set = hy_pcalloc(cf->pool, sizeof(*set));
    set->staples = hy_pcalloc(cf->pool, (n ? n : 1) * sizeof(ocsp_staple_t));
    size_t i = 0;
    for (int r = SSL_CTX_set_current_cert(ctx, SSL_CERT_SET_FIRST); r == 1 && i < n;
         r = SSL_CTX_set_current_cert(ctx, SSL_CERT_SET_NEXT)) {
        ocsp_staple_t *st = &set->staples[set->n];
        st->cert = SSL_CTX_get0_certificate(ctx);
        SSL_CTX_get0_chain_certs(ctx, &st->chain);
        st->store = SSL_CTX_get_cert_store(ctx);
        st->verify = c->stapling_verify == 1;
        i++;
        if (st->cert == NULL)
            continue;
        int rc = setup_one(cf, c, st);
        if (rc > 0) {
            hy_pool_on_clear(cf->pool, free_staple, st);
            set->n++;
        } else {
            free_staple(st);
            memset(st, 0, sizeof(*st));
            if (rc < 0)
                return -1;
        }
    }
    SSL_CTX_set_current_cert(ctx, SSL_CERT_SET_FIRST);
    ERR_clear_error();
    if (set->n == 0)
        return 0;
    SSL_CTX_set_tlsext_status_cb(ctx, on_status);
    SSL_CTX_set_tlsext_status_arg(ctx, set);
    return 0;
}

/* ---------------- the query ---------------- */

static void fetch_log(ocsp_staple_t *st, int level, const char *what)
{
    hy_log(level, "%s while requesting certificate status, responder: %s, peer: %s, certificate: \"%s\"", what,
           st->host, st->peer, st->file);
}

static void fetch_end(ocsp_fetch_t *f)
{
    ocsp_staple_t *st = f->st;
    st->fetch = NULL;
    if (hy_timer_is_linked(&f->timer))
        hy_timer_unlink(f->sock.loop, &f->timer);
    hy_sock_close(&f->sock);
    hy_loop_free_later(f->sock.loop, free, f->request);
    hy_loop_free_later(f->sock.loop, free, f);
}

static void fetch_fail(ocsp_fetch_t *f, const char *what)
{
    ocsp_staple_t *st = f->st;
    fetch_log(st, HY_LOG_ERR, what);
    st->refresh = time(NULL) + RETRY_S;
    fetch_end(f);
}

static time_t asn1_time(const ASN1_GENERALIZEDTIME *t)
{
    struct tm tm;
    if (t == NULL || ASN1_TIME_to_tm(t, &tm) != 1)
        return (time_t)-1;
    return timegm(&tm);
}

/* Check the DER OCSP response body; on success it becomes the staple. NULL, or what was wrong. */
static const char *accept_response(ocsp_staple_t *st, const unsigned char *der, size_t len, char *why, size_t cap)
{
    const unsigned char *p = der;
    OCSP_RESPONSE *resp = d2i_OCSP_RESPONSE(NULL, &p, (long)len);
    if (resp == NULL)
        return "d2i_OCSP_RESPONSE() failed";
    const char *err = NULL;
    OCSP_BASICRESP *basic = NULL;
    int n = OCSP_response_status(resp);
    if (n != OCSP_RESPONSE_STATUS_SUCCESSFUL) {
        snprintf(why, cap, "OCSP response not successful (%d: %s)", n, OCSP_response_status_str(n));
        err = why;
        goto done;
    }
    basic = OCSP_response_get1_basic(resp);
    if (basic == NULL) {
        err = "OCSP_response_get1_basic() failed";
        goto done;
    }
    if (OCSP_basic_verify(basic, st->chain, st->store, st->verify ? OCSP_TRUSTOTHER : OCSP_NOVERIFY) != 1) {
        err = "OCSP_basic_verify() failed";
        goto done;
    }
    int reason;
    ASN1_GENERALIZEDTIME *thisupdate = NULL, *nextupdate = NULL;
    if (OCSP_resp_find_status(basic, st->id, &n, &reason, NULL, &thisupdate, &nextupdate) != 1) {
        err = "certificate status not found in the OCSP response";
        goto done;
    }
    if (n != V_OCSP_CERTSTATUS_GOOD) {
        snprintf(why, cap, "certificate status \"%s\" in the OCSP response", OCSP_cert_status_str(n));
        err = why;
        goto done;
    }
    if (OCSP_check_validity(thisupdate, nextupdate, 300, -1) != 1) {
        err = "OCSP_check_validity() failed";
        goto done;
    }
    time_t now = time(NULL), valid = nextupdate ? asn1_time(nextupdate) : now + 10 * 365 * 86400;
    if (valid == (time_t)-1) {
        err = "invalid nextUpdate time in certificate status";
        goto done;
    }
    unsigned char *copy = malloc(len);
    if (copy == NULL) {
        err = "out of memory";
        goto done;
    }
    memcpy(copy, der, len);
    free(st->resp);
    st->resp = copy, st->resp_len = len;
    st->valid = valid;
    /* refresh before it expires, but not sooner than in 5 minutes, and at least once an hour (nginx's rule) */
    time_t r = valid - 300 < now + REFRESH_MAX_S ? valid - 300 : now + REFRESH_MAX_S;
    st->refresh = r > now + RETRY_S ? r : now + RETRY_S;
done:
    OCSP_BASICRESP_free(basic);
    OCSP_RESPONSE_free(resp);
    ERR_clear_error();
    return err;
}

/* The body of a responder's answer, the connection closed (HTTP/1.0). NULL, or what was wrong (nginx's words). */
static const char *http_body(hy_sock_t *s, const char *err, const unsigned char **body, size_t *blen, char *why,
                             size_t cap)
{
    if (err != NULL && err != hy_err_eof)
        return err == hy_err_buf_full ? "OCSP responder sent too big response" : "recv() failed";
    const char *d = hy_buf_data(&s->input);
    size_t len = s->input.len;
    const char *eoh = NULL; /* the empty line ending the head: CRLF or a bare LF, as nginx accepts */
    for (const char *p = d; p && p < d + len && eoh == NULL; p++) {
        p = memchr(p, '\n', (size_t)(d + len - p));
        if (p == NULL)
            break;
        const char *q = p + 1;
        if (q < d + len && *q == '\r')
            q++;
        if (q < d + len && *q == '\n')
            eoh = q + 1;
    }
    if (len == 0)
        return "OCSP responder prematurely closed connection";
    int status = 0;
    if (eoh == NULL && len >= 12 && strncmp(d, "HTTP/1.", 7) == 0 && sscanf(d + 8, " %3d", &status) == 1)
        return "OCSP responder prematurely closed connection"; /* a status line, then the end inside the head */
    if (eoh == NULL || len < 12 || strncmp(d, "HTTP/1.", 7) != 0 || sscanf(d + 8, " %3d", &status) != 1 ||
        status != 200) {
        if (!status)
            return "OCSP responder sent invalid response";
        snprintf(why, cap, "OCSP responder sent invalid response (HTTP status %d)", status);
        return why;
    }
    *body = (const unsigned char *)eoh;
    *blen = len - (size_t)(eoh - d);
    return NULL;
}

static void on_read(hy_sock_t *s, const char *err)
{
    ocsp_fetch_t *f = s->data;
    if (err == NULL)
        return; /* HTTP/1.0: the responder closes after the response */
    char why[160];
    const unsigned char *body;
    size_t blen;
    const char *bad = http_body(s, err, &body, &blen, why, sizeof(why));
    if (bad == NULL)
        bad = accept_response(f->st, body, blen, why, sizeof(why));
    if (bad) {
        fetch_fail(f, bad);
        return;
    }
    fetch_end(f);
}

static void on_timeout(hy_timer_t *t)
{
    fetch_fail(t->data, "OCSP responder timed out");
}

static void on_connect(hy_sock_t *s, const char *err)
{
    ocsp_fetch_t *f = s->data;
    if (err) {
        char why[128];
        snprintf(why, sizeof(why), "connect() failed (%d: %s)", s->last_errno, strerror(s->last_errno));
        fetch_fail(f, err == hy_err_timeout ? "OCSP responder timed out" : why);
        return;
    }
    s->read_limit = OCSP_RESPONSE_MAX;
    hy_outq_push_mem(&s->outq, f->request, strlen(f->request), NULL, NULL);
    hy_sock_write(s, NULL);
    hy_sock_read_start(s, on_read);
}

/* The HTTP request: GET path/base64(DER request, URL-escaped) HTTP/1.0 (as nginx asks). NULL when out of memory. */
static char *build_request(const OCSP_CERTID *cid, const char *path, const char *host)
{
    OCSP_REQUEST *req = OCSP_REQUEST_new();
    OCSP_CERTID *id = OCSP_CERTID_dup((OCSP_CERTID *)cid);
    if (req == NULL || id == NULL || OCSP_request_add0_id(req, id) == NULL) {
        OCSP_CERTID_free(id);
        OCSP_REQUEST_free(req);
        return NULL;
    }
    unsigned char *der = NULL;
    int len = i2d_OCSP_REQUEST(req, &der);
    OCSP_REQUEST_free(req);
    if (len <= 0)
        return NULL;
    size_t b64cap = ((size_t)len + 2) / 3 * 4 + 1;
    unsigned char *b64 = malloc(b64cap);
    size_t pathlen = strlen(path);
    size_t cap = 64 + pathlen + b64cap * 3 + strlen(host);
    char *out = malloc(cap);
    if (b64 == NULL || out == NULL) {
        free(b64), free(out), OPENSSL_free(der);
        return NULL;
    }
    int bl = EVP_EncodeBlock(b64, der, len);
    OPENSSL_free(der);
    size_t o = (size_t)snprintf(out, cap, "GET %s%s", path, path[pathlen - 1] == '/' ? "" : "/");
    for (int i = 0; i < bl; i++) {
        unsigned char ch = b64[i];
        if (ch == '+' || ch == '/' || ch == '=')
            o += (size_t)snprintf(out + o, cap - o, "%%%02X", ch);
        else
            out[o++] = (char)ch;
    }
    snprintf(out + o, cap - o, " HTTP/1.0\r\nHost: %s\r\n\r\n", host);
    free(b64);
    return out;
}

static void fetch_start(ocsp_staple_t *st, hy_loop_t *loop)
{
    ocsp_fetch_t *f = calloc(1, sizeof(*f));
    if (f == NULL)
        return;
    f->st = st;
    f->request = build_request(st->id, st->path, st->host);
    if (f->request == NULL) {
        free(f);
        return;
    }
    st->fetch = f;
    if (hy_sock_connect(&f->sock, loop, (struct sockaddr *)&st->sa, st->salen, OCSP_TIMEOUT_MS, on_connect) != 0) {
        st->fetch = NULL;
        fetch_log(st, HY_LOG_ERR, "socket() failed");
        st->refresh = time(NULL) + RETRY_S;
        free(f->request), free(f);
        return;
    }
    f->sock.data = f;
    f->timer.cb = on_timeout, f->timer.data = f;
    hy_timer_link(loop, &f->timer, OCSP_TIMEOUT_MS); /* the whole query, connect included */
}

/* ---------------- handshakes ---------------- */

static int on_status(SSL *ssl, void *arg)
{
    ocsp_set_t *set = arg;
    X509 *cert = SSL_get_certificate(ssl);
    ocsp_staple_t *st = NULL;
    for (size_t i = 0; i < set->n && st == NULL; i++)
        if (set->staples[i].cert == cert)
            st = &set->staples[i];
    if (st == NULL)
        return SSL_TLSEXT_ERR_NOACK;
    time_t now = time(NULL);
    int rc = SSL_TLSEXT_ERR_NOACK;
    if (st->resp && st->valid >= now) {
        unsigned char *p = OPENSSL_malloc(st->resp_len);
        if (p) {
            memcpy(p, st->resp, st->resp_len);
            if (SSL_set_tlsext_status_ocsp_resp(ssl, p, (long)st->resp_len) == 1)
                rc = SSL_TLSEXT_ERR_OK;
            else
                OPENSSL_free(p);
        }
    }
    hy_sock_t *s = hy_tls_sock(ssl);
    if (st->fetch == NULL && st->refresh <= now && s != NULL)
        fetch_start(st, s->loop);
    return rc;
}

/* ---------------- client certificates (ssl_ocsp) ---------------- */

struct hy_ssl_ocsp_cache { /* ssl_ocsp_cache: per worker (see ssl_ocsp.h) */
    struct ocsp_cached *head;
};

typedef struct ocsp_cached {
    struct ocsp_cached *next;
    int status; /* V_OCSP_CERTSTATUS_* */
    time_t valid;
    size_t idlen;
    unsigned char id[];
} ocsp_cached_t;

#define OCSP_WAITERS 8

typedef struct ocsp_check {
    STACK_OF(X509) *certs; /* the verified chain, leaf first */
    int n, i;              /* certificates to check, the next one */
    OCSP_CERTID *id;       /* of certs[i] */
    const char *failure;   /* NULL: good so far */
    bool done;
    hy_http_ssl_srv_conf_t *conf;
    X509_STORE *store;
    hy_loop_t *loop;
    struct ocsp_query *q; /* the query in flight */
    char host[256];
    size_t nwait;
    void (*cb[OCSP_WAITERS])(void *);
    void *arg[OCSP_WAITERS];
} ocsp_check_t;

/* one responder query: its own memory, freed after the loop iteration that closes it (hy_sock_close's rule) */
typedef struct ocsp_query {
    hy_sock_t sock;
    hy_timer_t timer;
    char *request;
    ocsp_check_t *k;
} ocsp_query_t;

static int check_idx = -1;

static void check_stop_io(ocsp_check_t *k)
{
    ocsp_query_t *q = k->q;
    if (q == NULL)
        return;
    k->q = NULL;
    if (hy_timer_is_linked(&q->timer))
        hy_timer_unlink(k->loop, &q->timer);
    hy_sock_close(&q->sock);
    hy_loop_free_later(k->loop, free, q->request);
    hy_loop_free_later(k->loop, free, q);
}

static void check_free(void *parent, void *ptr, CRYPTO_EX_DATA *ad, int idx, long argl, void *argp)
{
    (void)parent, (void)ad, (void)idx, (void)argl, (void)argp;
    ocsp_check_t *k = ptr;
    if (k == NULL)
        return;
    check_stop_io(k);
    OCSP_CERTID_free(k->id);
    sk_X509_pop_free(k->certs, X509_free);
    if (k->loop)
        hy_loop_free_later(k->loop, free, k);
    else
        free(k);
}

static int id_der(OCSP_CERTID *id, unsigned char **out)
{
    *out = NULL;
    return i2d_OCSP_CERTID(id, out);
}

static ocsp_cached_t *cache_find(struct hy_ssl_ocsp_cache *c, OCSP_CERTID *id)
{
    unsigned char *der;
    int n = id_der(id, &der);
    ocsp_cached_t *hit = NULL;
    time_t now = time(NULL);
    for (ocsp_cached_t **pp = &c->head; n > 0 && *pp;) {
        ocsp_cached_t *e = *pp;
        if (e->valid < now) { /* expired: dropped when met */
            *pp = e->next;
            free(e);
            continue;
        }
        if (e->idlen == (size_t)n && memcmp(e->id, der, (size_t)n) == 0)
            hit = e;
        pp = &e->next;
    }
    OPENSSL_free(der);
    return hit;
}

static void cache_store(struct hy_ssl_ocsp_cache *c, OCSP_CERTID *id, int status, time_t valid)
{
    unsigned char *der;
    int n = id_der(id, &der);
    if (n <= 0)
        return;
    ocsp_cached_t *e = cache_find(c, id);
    if (e == NULL) {
        e = hy_alloc(sizeof(*e) + (size_t)n);
        memcpy(e->id, der, (size_t)n);
        e->idlen = (size_t)n;
        e->next = c->head;
        c->head = e;
    }
    e->status = status, e->valid = valid;
    OPENSSL_free(der);
}

struct hy_ssl_ocsp_cache *hy_ssl_ocsp_cache_new(hy_pool_t *pool)
{
    return hy_pcalloc(pool, sizeof(struct hy_ssl_ocsp_cache));
}

static void check_next(ocsp_check_t *k);

static void check_finish(ocsp_check_t *k, const char *failure)
{
    check_stop_io(k);
    k->failure = failure;
    k->done = true;
    size_t n = k->nwait;
    k->nwait = 0;
    for (size_t i = 0; i < n; i++)
        k->cb[i](k->arg[i]);
}

static void check_error(ocsp_check_t *k, const char *what)
{
    hy_log(HY_LOG_ERR, "%s while requesting certificate status, responder: %s", what, k->host);
    check_finish(k, "certificate status request failed");
}

/* a checked answer for certs[i]: 0 good (go on), else finished */
static int check_answer(ocsp_check_t *k, const unsigned char *der, size_t len)
{
    const unsigned char *p = der;
    OCSP_RESPONSE *resp = d2i_OCSP_RESPONSE(NULL, &p, (long)len);
    OCSP_BASICRESP *basic = resp ? OCSP_response_get1_basic(resp) : NULL;
    const char *err = NULL;
    int status = -1, reason;
    ASN1_GENERALIZEDTIME *thisupdate = NULL, *nextupdate = NULL;
    if (resp == NULL || OCSP_response_status(resp) != OCSP_RESPONSE_STATUS_SUCCESSFUL || basic == NULL)
        err = "OCSP response not successful";
    else if (OCSP_basic_verify(basic, k->certs, k->store, 0) != 1)
        err = "OCSP_basic_verify() failed";
    else if (OCSP_resp_find_status(basic, k->id, &status, &reason, NULL, &thisupdate, &nextupdate) != 1)
        err = "certificate status not found in the OCSP response";
    else if (OCSP_check_validity(thisupdate, nextupdate, 300, -1) != 1)
        err = "OCSP_check_validity() failed";
    time_t valid = nextupdate ? asn1_time(nextupdate) : time(NULL) + 3600;
    OCSP_BASICRESP_free(basic);
    OCSP_RESPONSE_free(resp);
    if (err) {
        char why[512];
        hy_tls_error_text(why, sizeof(why));
        char msg[700];
        snprintf(msg, sizeof(msg), "%s%s%s%s", err, why[0] ? " (SSL: " : "", why, why[0] ? ")" : "");
        check_error(k, msg);
        return -1;
    }
    if (k->conf->ocsp_cache && valid != (time_t)-1)
        cache_store(k->conf->ocsp_cache, k->id, status, valid);
    if (status == V_OCSP_CERTSTATUS_GOOD)
        return 0;
    check_finish(k, status == V_OCSP_CERTSTATUS_REVOKED ? "certificate revoked" : "certificate status unknown");
    return -1;
}

static void check_on_read(hy_sock_t *s, const char *err)
{
    ocsp_check_t *k = ((ocsp_query_t *)s->data)->k;
    if (err == NULL)
        return;
    char why[160];
    const unsigned char *body;
    size_t blen;
    const char *bad = http_body(s, err, &body, &blen, why, sizeof(why));
    if (bad) {
        check_error(k, bad);
        return;
    }
    if (check_answer(k, body, blen) == 0) {
        check_stop_io(k);
        k->i++;
        check_next(k);
    }
}

static void check_on_timeout(hy_timer_t *t)
{
    check_error(((ocsp_query_t *)t->data)->k, "OCSP responder timed out");
}

static void check_on_connect(hy_sock_t *s, const char *err)
{
    ocsp_query_t *q = s->data;
    ocsp_check_t *k = q->k;
    if (err) {
        char why[128];
        snprintf(why, sizeof(why), "connect() failed (%d: %s)", s->last_errno, strerror(s->last_errno));
        check_error(k, err == hy_err_timeout ? "OCSP responder timed out" : why);
        return;
    }
    s->read_limit = OCSP_RESPONSE_MAX;
    hy_outq_push_mem(&s->outq, q->request, strlen(q->request), NULL, NULL);
    hy_sock_write(s, NULL);
    hy_sock_read_start(s, check_on_read);
}

/* certs[i]: from the cache, or a query to its responder; finishes when all are good or one is not */
static void check_next(ocsp_check_t *k)
{
    for (; k->i < k->n; k->i++) {
        X509 *cert = sk_X509_value(k->certs, k->i), *issuer = sk_X509_value(k->certs, k->i + 1);
        OCSP_CERTID_free(k->id);
        k->id = OCSP_cert_to_id(NULL, cert, issuer);
        if (k->id == NULL) {
            check_error(k, "OCSP_cert_to_id() failed");
            return;
        }
        ocsp_cached_t *hit = k->conf->ocsp_cache ? cache_find(k->conf->ocsp_cache, k->id) : NULL;
        if (hit) {
            if (hit->status == V_OCSP_CERTSTATUS_GOOD)
                continue;
            check_finish(k, hit->status == V_OCSP_CERTSTATUS_REVOKED ? "certificate revoked"
                                                                     : "certificate status unknown");
            return;
        }
        const char *url = k->conf->ocsp_responder.ptr;
        STACK_OF(OPENSSL_STRING) *aia = NULL;
        if (url == NULL) {
            aia = X509_get1_ocsp(cert);
            url = aia && sk_OPENSSL_STRING_num(aia) > 0 ? sk_OPENSSL_STRING_value(aia, 0) : NULL;
        }
        char port[8];
        const char *path = "/", *bad = url ? parse_url(url, k->host, sizeof(k->host), port, sizeof(port), &path)
                                           : "no OCSP responder URL in the certificate";
        struct sockaddr_storage sa;
        socklen_t salen = 0;
        memset(&sa, 0, sizeof(sa));
        if (bad == NULL) {
            struct sockaddr_in *a4 = (struct sockaddr_in *)&sa;
            struct sockaddr_in6 *a6 = (struct sockaddr_in6 *)&sa;
            int pn = atoi(port);
            if (inet_pton(AF_INET, k->host, &a4->sin_addr) == 1) {
                a4->sin_family = AF_INET, a4->sin_port = htons((uint16_t)pn), salen = sizeof(*a4);
            } else if (inet_pton(AF_INET6, k->host, &a6->sin6_addr) == 1) {
                a6->sin6_family = AF_INET6, a6->sin6_port = htons((uint16_t)pn), salen = sizeof(*a6);
            } else {
                bad = "no resolver defined to resolve the OCSP responder"; /* names need a resolver: none here */
            }
        }
        char *request = NULL;
        if (bad == NULL && (request = build_request(k->id, path, k->host)) == NULL)
            bad = "out of memory";
        if (aia)
            X509_email_free(aia);
        if (bad) {
            check_error(k, bad);
            return;
        }
        ocsp_query_t *q = hy_alloc(sizeof(*q));
        memset(q, 0, sizeof(*q));
        q->k = k, q->request = request;
        if (hy_sock_connect(&q->sock, k->loop, (struct sockaddr *)&sa, salen, OCSP_TIMEOUT_MS, check_on_connect) != 0) {
            free(request), free(q);
            check_error(k, "socket() failed");
            return;
        }
        k->q = q;
        q->sock.data = q;
        q->timer.cb = check_on_timeout, q->timer.data = q;
        hy_timer_link(k->loop, &q->timer, OCSP_TIMEOUT_MS);
        return;
    }
    check_finish(k, NULL);
}

int hy_ssl_ocsp_validate(SSL *ssl, hy_http_ssl_srv_conf_t *c, hy_loop_t *loop, void (*cb)(void *), void *arg)
{
    if (check_idx < 0)
        check_idx = SSL_get_ex_new_index(0, NULL, NULL, NULL, check_free);
    ocsp_check_t *k = SSL_get_ex_data(ssl, check_idx);
    if (k == NULL) {
        X509 *leaf = SSL_get0_peer_certificate(ssl);
        if (leaf == NULL || SSL_get_verify_result(ssl) != X509_V_OK)
            return 0;
        k = hy_alloc(sizeof(*k));
        memset(k, 0, sizeof(*k));
        k->conf = c;
        k->loop = loop;
        k->store = SSL_CTX_get_cert_store(SSL_get_SSL_CTX(ssl));
        SSL_set_ex_data(ssl, check_idx, k);
        /* the chain again (a resumed session has no verified chain): the peer's certificates against the store */
        X509_STORE_CTX *sctx = X509_STORE_CTX_new();
        if (sctx && X509_STORE_CTX_init(sctx, k->store, leaf, SSL_get_peer_cert_chain(ssl)) == 1) {
            if (X509_verify_cert(sctx) == 1)
                k->certs = X509_STORE_CTX_get1_chain(sctx);
        }
        X509_STORE_CTX_free(sctx);
        ERR_clear_error();
        if (k->certs == NULL) {
            k->done = true;
            k->failure = "certificate status request failed";
            return 0;
        }
        int num = sk_X509_num(k->certs);
        /* nothing to ask about a lone (self-signed) certificate; "leaf": the client's only; "on": all but the root */
        k->n = num < 2 ? 0 : c->ocsp == HY_SSL_OCSP_LEAF ? 1 : num - 1;
        check_next(k);
    }
    if (k->done)
        return 0;
    if (k->nwait == OCSP_WAITERS)
        return -1;
    k->cb[k->nwait] = cb, k->arg[k->nwait] = arg;
    k->nwait++;
    return 1;
}

const char *hy_ssl_ocsp_client_failure(SSL *ssl)
{
    ocsp_check_t *k = check_idx < 0 ? NULL : SSL_get_ex_data(ssl, check_idx);
    return k && k->done ? k->failure : NULL;
}
