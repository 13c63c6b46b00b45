/* h1client.c — the HTTP/1.x client codec for the upstream engine (proxy_pass): the request head, chunked request
 * bodies, the status line and header fields of the response (1xx interim responses other than 101 skipped), and
 * response bodies framed by Content-Length, chunked coding or the connection's close. */
#include <string.h>
#include "h1client.h"

enum { CH_SIZE = 0, CH_EXT, CH_SIZE_LF, CH_DATA, CH_DATA_CR, CH_DATA_LF, CH_TR_START, CH_TR_LINE, CH_TR_LF, CH_DONE };

typedef struct h1c {
    int64_t remaining; /* Content-Length bytes left, -1: not length-framed */
    int ch_state;
    uint64_t ch_left; /* bytes left in the current chunk */
    int ch_digits;
    bool chunked, close_delimited, no_body;
    char *tr; /* the trailer section as received (request pool), up to TRAILERS_MAX */
    size_t tr_len;
} h1c_t;

#define TRAILERS_MAX 4096 /* trailer bytes kept for $upstream_trailer_*; more are read and dropped */

static h1c_t *st(hy_ureq_t *u)
{
    if (u->codec_state == NULL)
        u->codec_state = hy_pcalloc(u->req->pool, sizeof(h1c_t));
    return u->codec_state;
}

static void reinit(hy_ureq_t *u)
{
    if (u->codec_state)
        memset(u->codec_state, 0, sizeof(h1c_t));
}

static void put(char **p, hy_str_t s)
{
    memcpy(*p, s.ptr, s.len);
    *p += s.len;
}

static int create_request(hy_ureq_t *u, hy_outq_t *out)
{
    size_t len = u->method.len + 1 + u->uri.len + 11 + 2 + 40;
    for (size_t i = 0; i < u->nheaders; i++)
        len += u->headers[i].name.len + 2 + u->headers[i].value.len + 2;
    char *buf = hy_palloc(u->req->pool, len), *p = buf;
    put(&p, u->method);
    *p++ = ' ';
    put(&p, u->uri);
    put(&p, u->version == 10 ? HY_STR(" HTTP/1.0\r\n") : HY_STR(" HTTP/1.1\r\n"));
    for (size_t i = 0; i < u->nheaders; i++) {
        put(&p, u->headers[i].name);
        *p++ = ':', *p++ = ' ';
        put(&p, u->headers[i].value);
        *p++ = '\r', *p++ = '\n';
    }
    if (u->body_length >= 0) {
        put(&p, HY_STR("Content-Length: "));
        p += hy_fmt_u64(p, (uint64_t)u->body_length);
        *p++ = '\r', *p++ = '\n';
    } else if (u->body_length == HY_UREQ_BODY_CHUNKED) {
        put(&p, HY_STR("Transfer-Encoding: chunked\r\n"));
    }
    *p++ = '\r', *p++ = '\n';
    hy_outq_push_mem(out, buf, (size_t)(p - buf), NULL, NULL);
    return 0;
}

static void frame_body(hy_ureq_t *u, hy_outq_t *out, const char *p, size_t n, bool last)
{
    if (u->body_length != HY_UREQ_BODY_CHUNKED) {
        if (n)
            hy_outq_push_copy(out, p, n);
        return;
    }
    if (n) {
        char line[24];
        size_t l = hy_fmt_hex(line, n);
        line[l++] = '\r', line[l++] = '\n';
        hy_outq_push_copy(out, line, l);
        hy_outq_push_copy(out, p, n);
        hy_outq_push_mem(out, "\r\n", 2, NULL, NULL);
    }
    if (last)
        hy_outq_push_mem(out, "0\r\n\r\n", 5, NULL, NULL);
}

/* ---------------------------------------------------------------- response head */

static const char *find_head_end(const char *p, size_t n)
{
    if (n == 0)
        return NULL;
    const char *end = p + n;
    for (const char *q = p; (q = memchr(q, '\n', (size_t)(end - q))) != NULL; q++) {
        if (q + 1 < end && q[1] == '\n')
            return q + 2;
        if (q + 2 < end && q[1] == '\r' && q[2] == '\n')
            return q + 3;
    }
    return NULL;
}

/* The tokens of a Connection value (separated by commas, spaces or tabs, in any case) that matter here, in one
 * pass: "close" and "upgrade". */
static void connection_tokens(hy_str_t v, bool *close, bool *upgrade)
{
    const char *p = v.ptr, *end = v.ptr + v.len;
    while (p < end) {
        while (p < end && (*p == ',' || *p == ' ' || *p == '\t'))
            p++;
        const char *t = p;
        while (p < end && *p != ',' && *p != ' ' && *p != '\t')
            p++;
        size_t tl = (size_t)(p - t);
        if (tl == 5 && hy_mem_caseeq(t, "close", 5))
            *close = true;
        else if (tl == 7 && hy_mem_caseeq(t, "upgrade", 7))
            *upgrade = true;
    }
}

static int parse_head(hy_ureq_t *u, char *p, size_t n)
{
    h1c_t *s = st(u);
    char *end = p + n, *eol = memchr(p, '\n', n);
    if (n < 12 || memcmp(p, "HTTP/1.", 7) != 0 || (p[7] != '0' && p[7] != '1') || p[8] != ' ')
        return -1;
    int version = p[7] == '1' ? 11 : 10;
    if (p[9] < '1' || p[9] > '5' || p[10] < '0' || p[10] > '9' || p[11] < '0' || p[11] > '9')
        return -1;
    u->status = (p[9] - '0') * 100 + (p[10] - '0') * 10 + (p[11] - '0');
    char *r = p + 12, *le = eol > p && eol[-1] == '\r' ? eol - 1 : eol;
    while (r < le && *r == ' ')
        r++;
    u->status_line = (hy_str_t){r, (size_t)(le - r)};
    u->headers_in = hy_array_create(u->req->pool, 16, sizeof(hy_header_t));
    int64_t clen = -1;
    bool chunked = false, conn_close = version == 10; /* nginx: an HTTP/1.0 answer's connection is not kept */
    for (char *q = eol + 1; q < end;) {
        hy_str_t name, value;
        int f = hy_upstream_field(&q, end, true, &name, &value);
        if (f < 0)
            return -1;
        if (f == 0)
            break;
        hy_header_t *h = hy_array_push(u->headers_in);
        h->name = name;
        h->value = value;
        if (hy_str_caseeq(h->name, "Content-Length")) { /* a second one, even equal, is refused (nginx) */
            int64_t x = hy_parse_int(h->value.ptr, h->value.len);
            if (x < 0 || clen >= 0 || chunked)
                return -1;
            clen = x;
        } else if (hy_str_caseeq(h->name, "Transfer-Encoding")) {
            if (!hy_str_caseeq(h->value, "chunked") || chunked || clen >= 0)
                return -1;
            chunked = true;
        } else if (hy_str_caseeq(h->name, "Connection")) {
            connection_tokens(h->value, &conn_close, &u->upgrade);
        }
    }
    memset(s, 0, sizeof(*s));
    s->remaining = -1;
    u->resp_chunked = false;
    u->resp_length = -1;
    if (u->status == 204 || u->status == 304 || hy_str_eq(u->method, "HEAD")) {
        s->no_body = true; /* the length a HEAD response announces is the client's to see */
        u->resp_length = clen;
    } else if (chunked) {
        s->chunked = u->resp_chunked = true; /* Transfer-Encoding wins over Content-Length (RFC 9112 6.3) */
    } else if (clen >= 0) {
        s->remaining = u->resp_length = clen;
    } else {
        s->close_delimited = true;
        conn_close = true;
    }
    u->resp_keepalive = !conn_close;
    return 0;
}

static int process_head(hy_ureq_t *u, hy_buf_t *in)
{
    for (;;) {
        char *data = hy_buf_data(in);
        const char *he = find_head_end(data, in->len);
        if (he == NULL)
            return 0;
        size_t hl = (size_t)(he - data);
        /* 1xx interim responses (100 Continue, 103 Early Hints) are read and dropped; 101 switches */
        if (hl > 12 && memcmp(data, "HTTP/1.", 7) == 0 && data[9] == '1' && !(data[10] == '0' && data[11] == '1')) {
            hy_buf_consume(in, hl);
            continue;
        }
        char *copy = hy_pstrndup(u->req->pool, data, hl);
        if (parse_head(u, copy, hl) != 0)
            return -1;
        return (int)hl;
    }
}

/* ---------------------------------------------------------------- response body */

static void trailer_byte(hy_ureq_t *u, h1c_t *s, char c)
{
    if (s->tr == NULL)
        s->tr = hy_palloc(u->req->pool, TRAILERS_MAX);
    if (s->tr_len < TRAILERS_MAX)
        s->tr[s->tr_len++] = c;
}

/* The trailer fields (RFC 9112 7.1.2) into u->trailers_in; lines that are no field, or cut at the limit, are
 * dropped. */
static void parse_trailers(hy_ureq_t *u, h1c_t *s)
{
    if (s->tr_len == 0)
        return;
    u->trailers_in = hy_array_create(u->req->pool, 4, sizeof(hy_header_t));
    char *q = s->tr, *end = s->tr + s->tr_len;
    while (q < end) {
        char *nl = memchr(q, '\n', (size_t)(end - q));
        if (nl == NULL)
            break;
        hy_str_t name, value;
        char *p = q;
        if (hy_upstream_field(&p, end, true, &name, &value) == 1)
            *(hy_header_t *)hy_array_push(u->trailers_in) = (hy_header_t){name, value};
        q = nl + 1;
    }
}

static int dechunk(hy_ureq_t *u, h1c_t *s, hy_buf_t *in, hy_outq_t *out, bool *done)
{
    char *p = hy_buf_data(in), *end = p + in->len;
    while (p < end && s->ch_state != CH_DONE) {
        char c = *p;
        switch (s->ch_state) {
        case CH_SIZE: {
            int h = hy_hex_digit(c);
            if (h >= 0) {
                if (++s->ch_digits > 15)
                    return -1;
                s->ch_left = s->ch_left * 16 + (uint64_t)h;
            } else if (s->ch_digits == 0) {
                return -1;
            } else if (c == ';' || c == ' ' || c == '\t') {
                s->ch_state = CH_EXT;
            } else if (c == '\r') {
                s->ch_state = CH_SIZE_LF;
            } else if (c == '\n') {
                s->ch_state = s->ch_left ? CH_DATA : CH_TR_START;
            } else {
                return -1;
            }
            p++;
            break;
        }
        case CH_EXT:
            if (c == '\n')
                s->ch_state = s->ch_left ? CH_DATA : CH_TR_START;
            p++;
            break;
        case CH_SIZE_LF:
            if (c != '\n')
                return -1;
            s->ch_state = s->ch_left ? CH_DATA : CH_TR_START;
            p++;
            break;
        case CH_DATA: {
            size_t take = (size_t)(end - p) < s->ch_left ? (size_t)(end - p) : (size_t)s->ch_left;
            hy_outq_push_copy(out, p, take);
            p += take;
            s->ch_left -= take;
            if (s->ch_left == 0)
                s->ch_state = CH_DATA_CR;
            break;
        }
        case CH_DATA_CR:
            if (c == '\r')
                s->ch_state = CH_DATA_LF;
            else if (c == '\n')
                s->ch_state = CH_SIZE, s->ch_digits = 0;
            else
                return -1;
            p++;
            break;
        case CH_DATA_LF:
            if (c != '\n')
                return -1;
            s->ch_state = CH_SIZE, s->ch_digits = 0;
            p++;
            break;
        case CH_TR_START: /* an empty line ends the trailers */
            if (c == '\r')
                s->ch_state = CH_TR_LF;
            else if (c == '\n')
                s->ch_state = CH_DONE;
            else
                s->ch_state = CH_TR_LINE, trailer_byte(u, s, c);
            p++;
            break;
        case CH_TR_LINE:
            trailer_byte(u, s, c);
            if (c == '\n')
                s->ch_state = CH_TR_START;
            p++;
            break;
        case CH_TR_LF:
            if (c != '\n')
                return -1;
            s->ch_state = CH_DONE;
            p++;
            break;
        }
    }
    hy_buf_consume(in, (size_t)(p - hy_buf_data(in)));
    *done = s->ch_state == CH_DONE;
    if (*done)
        parse_trailers(u, s);
    return 0;
}

static int process_body(hy_ureq_t *u, hy_buf_t *in, bool eof, hy_outq_t *out, bool *done)
{
    h1c_t *s = st(u);
    *done = false;
    if (s->no_body) {
        *done = true;
        return 0;
    }
    if (s->chunked) {
        if (dechunk(u, s, in, out, done) != 0)
            return -2; /* broken chunked framing */
        return *done || !eof ? 0 : -1;
    }
    if (s->remaining >= 0) {
        size_t take = in->len < (uint64_t)s->remaining ? in->len : (size_t)s->remaining;
        if (take) {
            hy_outq_push_copy(out, hy_buf_data(in), take);
            hy_buf_consume(in, take);
            s->remaining -= (int64_t)take;
        }
        *done = s->remaining == 0;
        return *done || !eof ? 0 : -1;
    }
    if (in->len) {
        hy_outq_push_copy(out, hy_buf_data(in), in->len);
        hy_buf_consume(in, in->len);
    }
    *done = eof;
    return 0;
}

static bool reusable(const hy_ureq_t *u)
{
    const h1c_t *s = u->codec_state;
    return s != NULL && u->resp_keepalive && !s->close_delimited && u->status != 101;
}

const hy_upstream_codec_t hy_upstream_h1_codec = {
    .name = "http",
    .create_request = create_request,
    .frame_body = frame_body,
    .process_head = process_head,
    .process_body = process_body,
    .reusable = reusable,
    .reinit = reinit,
};
