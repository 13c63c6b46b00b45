/* fastcgi.c — the FastCGI codec (see fastcgi.h): BEGIN_REQUEST (responder role, FCGI_KEEP_CONN with
 * fastcgi_keep_conn), the parameters as PARAMS records, the body as STDIN records (a file-backed body as record
 * headers around file regions), and the response: STDOUT records carry the CGI head then the body, STDERR records
 * are logged at [error] as nginx words it ("FastCGI sent in stderr: ...", fastcgi_catch_stderr fails the try),
 * END_REQUEST ends it (the connection is reusable only with FCGI_KEEP_CONN). One request id (1) per connection. */
#include <string.h>
#include "fastcgi.h"
#include "uconf.h"
#include "../core/log.h"

enum { FCGI_BEGIN = 1, FCGI_END = 3, FCGI_PARAMS = 4, FCGI_STDIN = 5, FCGI_STDOUT = 6, FCGI_STDERR = 7 };

#define REC_MAX 32768 /* content bytes per record we send (a multiple of 8: no padding but the last) */

typedef struct fcgi {
    hy_fcgi_opts_t o;
    /* the record being read */
    unsigned char hdr[8];
    size_t hdr_have;
    int type;
    size_t left, pad; /* content bytes left in it, then padding bytes */
    bool in_rec;
    /* head phase */
    size_t scan; /* bytes of the input walked (the engine consumes them when the head is complete) */
    char *hd;    /* STDOUT bytes so far */
    size_t hd_len, hd_cap;
    /* STDERR record text gathered until the record ends */
    char *err;
    size_t err_len, err_cap;
    bool ended, failed;
    hy_outq_t *out; /* process_body's output */
    int64_t got;    /* body bytes taken (a Content-Length bounds them, as nginx) */
    bool warned;
} fcgi_t;

static fcgi_t *st(hy_ureq_t *u)
{
    if (u->codec_state == NULL)
        u->codec_state = hy_pcalloc(u->req->pool, sizeof(fcgi_t));
    return u->codec_state;
}

void hy_upstream_fcgi_init(hy_ureq_t *u, const hy_fcgi_opts_t *o)
{
    u->codec = &hy_upstream_fcgi_codec;
    st(u)->o = *o;
}

static void reinit(hy_ureq_t *u)
{
    fcgi_t *s = st(u);
    hy_fcgi_opts_t o = s->o;
    memset(s, 0, sizeof(*s));
    s->o = o;
}

/* ---------------------------------------------------------------- request */

static void rec_header(unsigned char *h, int type, size_t len, size_t pad)
{
    h[0] = 1, h[1] = (unsigned char)type, h[2] = 0, h[3] = 1;
    h[4] = (unsigned char)(len >> 8), h[5] = (unsigned char)len, h[6] = (unsigned char)pad, h[7] = 0;
}

static size_t len_size(size_t n)
{
    return n < 128 ? 1 : 4;
}

static unsigned char *put_len(unsigned char *p, size_t n)
{
    if (n < 128) {
        *p++ = (unsigned char)n;
    } else {
        *p++ = (unsigned char)(0x80 | (n >> 24)), *p++ = (unsigned char)(n >> 16);
        *p++ = (unsigned char)(n >> 8), *p++ = (unsigned char)n;
    }
    return p;
}

/* Wrap data into records of `type` (each padded to 8 bytes) in one allocation. */
static void push_records(hy_ureq_t *u, hy_outq_t *out, int type, const unsigned char *data, size_t n)
{
    size_t nrec = (n + REC_MAX - 1) / REC_MAX;
    char *buf = hy_palloc(u->req->pool, n + nrec * 16), *o = buf;
    for (size_t off = 0; off < n; off += REC_MAX) {
        size_t l = HY_MIN(REC_MAX, n - off), pad = (8 - l % 8) % 8;
        rec_header((unsigned char *)o, type, l, pad);
        memcpy(o + 8, data + off, l);
        memset(o + 8 + l, 0, pad);
        o += 8 + l + pad;
    }
    hy_outq_push_mem(out, buf, (size_t)(o - buf), NULL, NULL);
}

#define PARAMS_MAX 65528 /* content bytes of one PARAMS record: 65535 rounded down to a multiple of 8 */

static size_t pair_size(const hy_header_t *h)
{
    return len_size(h->name.len) + len_size(h->value.len) + h->name.len + h->value.len;
}

/* The name-value pairs [from, to) of the parameters (FastCGI 3.4) at p; returns the end. */
static unsigned char *put_params(const hy_ureq_t *u, size_t from, size_t to, unsigned char *p)
{
    for (size_t i = from; i < to; i++) {
        const hy_header_t *h = &u->headers[i];
        p = put_len(p, h->name.len);
        p = put_len(p, h->value.len);
        if (h->name.len)
            memcpy(p, h->name.ptr, h->name.len);
        p += h->name.len;
        if (h->value.len)
            memcpy(p, h->value.ptr, h->value.len);
        p += h->value.len;
    }
    return p;
}

/* BEGIN_REQUEST, the PARAMS records, the empty PARAMS and (unless frame_body will send the body and end it) the
 * empty STDIN, in one segment written once. Each PARAMS record holds whole name-value pairs (PHP-FPM parses every
 * record on its own), at most PARAMS_MAX bytes: nearly always one record. A single pair larger than a record
 * cannot be sent: -1 (nginx: "fastcgi request record is too big", 500). */
static int create_request(hy_ureq_t *u, hy_outq_t *out)
{
    fcgi_t *s = st(u);
    if (s->o.params)
        hy_uparams_build(u, s->o.params, s->o.pass_headers);
    size_t plen = 0;
    for (size_t i = 0; i < u->nheaders; i++) {
        size_t n = pair_size(&u->headers[i]);
        if (n > PARAMS_MAX) {
            hy_req_log(u->req, HY_LOG_ALERT, "fastcgi request record is too big: %zu", n);
            return -1;
        }
        plen += n;
    }
    size_t nrec = plen > 0, rec = 0;
    if (plen > PARAMS_MAX) /* rare: count the records the pairs fill */
        for (size_t i = 0; i < u->nheaders; i++) {
            size_t n = pair_size(&u->headers[i]);
            if (rec + n > PARAMS_MAX)
                nrec++, rec = 0;
            rec += n;
        }
    bool framed =
        u->set_body.ptr != NULL || u->body_streamed || (u->req->body_in != NULL && u->body_length != HY_UREQ_BODY_NONE);
    size_t tail = framed ? 8 : 16;
    unsigned char *buf = hy_palloc(u->req->pool, 16 + plen + nrec * 16 + tail), *p = buf;
    rec_header(p, FCGI_BEGIN, 8, 0);
    memset(p + 8, 0, 8);
    p[9] = 1; /* FCGI_RESPONDER */
    p[10] = s->o.keep_conn ? 1 : 0;
    p += 16;
    for (size_t i = 0, j; i < u->nheaders; i = j) {
        size_t n = plen;
        j = u->nheaders;
        if (plen > PARAMS_MAX)
            for (j = i, n = 0; j < u->nheaders && (j == i || n + pair_size(&u->headers[j]) <= PARAMS_MAX); j++)
                n += pair_size(&u->headers[j]);
        size_t pad = (8 - n % 8) % 8;
        rec_header(p, FCGI_PARAMS, n, pad);
        unsigned char *e = put_params(u, i, j, p + 8);
        memset(e, 0, pad);
        p = e + pad;
    }
    rec_header(p, FCGI_PARAMS, 0, 0);
    if (!framed)
        rec_header(p + 8, FCGI_STDIN, 0, 0);
    p += tail;
    hy_outq_push_mem(out, (char *)buf, (size_t)(p - buf), NULL, NULL);
    return 0;
}

static void frame_body(hy_ureq_t *u, hy_outq_t *out, const char *p, size_t n, bool last)
{
    if (n)
        push_records(u, out, FCGI_STDIN, (const unsigned char *)p, n);
    if (last) {
        unsigned char *h = hy_palloc(u->req->pool, 8);
        rec_header(h, FCGI_STDIN, 0, 0);
        hy_outq_push_mem(out, (char *)h, 8, NULL, NULL);
    }
}

static void frame_file(hy_ureq_t *u, hy_outq_t *out, hy_file_t *f, int64_t size)
{
    static const char zeros[8];
    for (int64_t off = 0; off < size; off += REC_MAX) {
        size_t l = (size_t)HY_MIN((int64_t)REC_MAX, size - off), pad = (8 - l % 8) % 8;
        unsigned char *h = hy_palloc(u->req->pool, 8);
        rec_header(h, FCGI_STDIN, l, pad);
        hy_outq_push_mem(out, (char *)h, 8, NULL, NULL);
        hy_outq_push_file(out, f, off, (int64_t)l);
        if (pad)
            hy_outq_push_mem(out, zeros, pad, NULL, NULL);
    }
}

/* ---------------------------------------------------------------- records */

static void grow(hy_pool_t *pool, char **buf, size_t *len, size_t *cap, const char *p, size_t n)
{
    if (*len + n > *cap) {
        size_t nc = HY_MAX(*cap * 2, *len + n + 256);
        char *nb = hy_palloc(pool, nc);
        if (*len)
            memcpy(nb, *buf, *len);
        *buf = nb, *cap = nc;
    }
    memcpy(*buf + *len, p, n);
    *len += n;
}

/* A STDERR record ended: log it (trailing line ends dropped, as nginx); fastcgi_catch_stderr. */
static void stderr_done(hy_ureq_t *u, fcgi_t *s)
{
    size_t l = s->err_len;
    while (l && (s->err[l - 1] == '\n' || s->err[l - 1] == '\r' || s->err[l - 1] == ' ' || s->err[l - 1] == '.'))
        l--;
    if (l)
        hy_req_log(u->req, HY_LOG_ERR, "FastCGI sent in stderr: \"%.*s\" while %s", (int)l, s->err,
                   u->state == HY_UREQ_BODY_OUT ? "reading upstream" : "reading response header from upstream");
    if (s->o.catch_stderr) {
        const hy_str_t *c = s->o.catch_stderr->elts;
        for (size_t i = 0; i < s->o.catch_stderr->nelts; i++)
            if (c[i].len <= s->err_len && memmem(s->err, s->err_len, c[i].ptr, c[i].len) != NULL)
                s->failed = true;
    }
    s->err_len = 0;
}

/* Walk the records in p[0..n): STDOUT content goes to `sink` (returns how much of it it took: less stops the
 * walk, the rest of the record stays), STDERR is logged, END_REQUEST ends. Returns bytes walked, or -1. */
typedef size_t (*sink_fn)(hy_ureq_t *u, const char *p, size_t n);

static long walk(hy_ureq_t *u, fcgi_t *s, const char *p, size_t n, sink_fn sink)
{
    size_t i = 0;
    while (i < n && !s->ended) {
        if (!s->in_rec) {
            size_t take = HY_MIN(8 - s->hdr_have, n - i);
            memcpy(s->hdr + s->hdr_have, p + i, take);
            s->hdr_have += take, i += take;
            if (s->hdr_have < 8)
                break;
            s->hdr_have = 0;
            if (s->hdr[0] != 1 || ((s->hdr[2] << 8) | s->hdr[3]) != 1)
                return -1;
            s->type = s->hdr[1];
            s->left = (size_t)((s->hdr[4] << 8) | s->hdr[5]);
            s->pad = s->hdr[6];
            s->in_rec = true;
            if (s->type != FCGI_STDOUT && s->type != FCGI_STDERR && s->type != FCGI_END)
                return -1;
        }
        size_t take = HY_MIN(s->left, n - i);
        if (s->type == FCGI_STDOUT && take) {
            size_t used = sink(u, p + i, take);
            s->left -= used, i += used;
            if (used < take)
                return (long)i;
        } else {
            if (s->type == FCGI_STDERR && take)
                grow(u->req->pool, &s->err, &s->err_len, &s->err_cap, p + i, HY_MIN(take, 65536 - s->err_len));
            s->left -= take, i += take;
        }
        if (s->left > 0)
            break;
        size_t pt = HY_MIN(s->pad, n - i);
        s->pad -= pt, i += pt;
        if (s->pad > 0)
            break;
        s->in_rec = false;
        if (s->type == FCGI_STDERR) {
            stderr_done(u, s);
            if (s->failed)
                return -1;
        } else if (s->type == FCGI_END) {
            s->ended = true;
        }
    }
    return (long)i;
}

/* ---------------------------------------------------------------- response head */

static size_t head_sink(hy_ureq_t *u, const char *p, size_t n)
{
    fcgi_t *s = u->codec_state;
    size_t before = s->hd_len;
    grow(u->req->pool, &s->hd, &s->hd_len, &s->hd_cap, p, n);
    size_t e = hy_uconf_cgi_head_end(s->hd, s->hd_len);
    if (e == 0)
        return n;
    s->hd_len = e; /* the head is complete: the rest of this record is body */
    return e - before;
}

static int process_head(hy_ureq_t *u, hy_buf_t *in)
{
    fcgi_t *s = st(u);
    char *data = hy_buf_data(in);
    long w = walk(u, s, data + s->scan, in->len - s->scan, head_sink);
    if (w < 0)
        return -1;
    s->scan += (size_t)w;
    size_t e = s->hd_len ? hy_uconf_cgi_head_end(s->hd, s->hd_len) : 0;
    if (e == 0 || e != s->hd_len) {
        if (s->ended)
            return -1; /* END_REQUEST before a whole head: nginx's "prematurely closed stdout" */
        if (s->hd_len == 0 && s->scan > 0) { /* only records no head byte is in (stderr, logged): dropped, so they */
            hy_buf_consume(in, s->scan);  /* do not count against *_buffer_size (nginx reuses its buffer then) */
            s->scan = 0;
        }
        return 0;
    }
    if (hy_uconf_parse_cgi_head(u, s->hd, s->hd_len) != 0)
        return -1;
    size_t rc = s->scan;
    s->scan = 0;
    return rc ? (int)rc : -1;
}

/* ---------------------------------------------------------------- response body */

/* With a Content-Length from the application, what comes past it is dropped (nginx warns once) */
static size_t body_sink(hy_ureq_t *u, const char *p, size_t n)
{
    fcgi_t *s = u->codec_state;
    size_t keep = n;
    if (u->resp_length >= 0 && s->got + (int64_t)n > u->resp_length) {
        keep = s->got < u->resp_length ? (size_t)(u->resp_length - s->got) : 0;
        if (!s->warned)
            hy_req_log(u->req, HY_LOG_WARN, "upstream sent more data than specified in \"Content-Length\" header "
                       "while reading upstream");
        s->warned = true;
    }
    if (keep)
        hy_outq_push_copy(s->out, p, keep);
    s->got += (int64_t)keep;
    return n;
}

static int process_body(hy_ureq_t *u, hy_buf_t *in, bool eof, hy_outq_t *out, bool *done)
{
    fcgi_t *s = st(u);
    if (hy_str_eq(u->method, "HEAD")) { /* the body is not read (nginx): the connection cannot be reused */
        s->o.keep_conn = false;
        *done = true;
        return 0;
    }
    s->out = out;
    long w = walk(u, s, hy_buf_data(in), in->len, body_sink);
    if (w < 0)
        return -1;
    hy_buf_consume(in, (size_t)w);
    if (s->ended && u->resp_length >= 0 && s->got < u->resp_length) /* shorter than its Content-Length */
        return -1;
    *done = s->ended;
    if (s->ended && in->len) /* bytes after END_REQUEST: not reusable, dropped */
        s->o.keep_conn = false, hy_buf_consume(in, in->len);
    return *done || !eof ? 0 : -1;
}

static bool reusable(const hy_ureq_t *u)
{
    const fcgi_t *s = u->codec_state;
    return s != NULL && s->o.keep_conn && s->ended;
}

const hy_upstream_codec_t hy_upstream_fcgi_codec = {
    .name = "fastcgi",
    .create_request = create_request,
    .frame_body = frame_body,
    .frame_file = frame_file,
    .process_head = process_head,
    .process_body = process_body,
    .reusable = reusable,
    .reinit = reinit,
    .head_in_records = true,
};
