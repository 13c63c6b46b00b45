/* memcached.c — the memcached codec (see memcached.h). */
#include <stdio.h>
#include <string.h>
#include "memcached.h"
#include "../http/uri.h"
#include "../http/vars.h"
#include "../core/log.h"

#define END_LINE "\r\nEND\r\n"
#define END_LEN (sizeof(END_LINE) - 1)

static hy_upstream_mc_t *st(const hy_ureq_t *u)
{
    return u->codec_state;
}

void hy_upstream_memcached_init(hy_ureq_t *u, int key_index, uint64_t gzip_flag)
{
    hy_upstream_mc_t *s = hy_pcalloc(u->req->pool, sizeof(*s));
    s->key_index = key_index;
    s->gzip_flag = gzip_flag;
    u->codec_state = s;
    u->codec = &hy_upstream_memcached_codec;
}

const hy_upstream_mc_t *hy_upstream_memcached_state(const hy_ureq_t *u)
{
    return st(u);
}

static bool escaped(unsigned char c)
{
    return c <= 0x20 || c == '%';
}

size_t hy_upstream_memcached_escape(char *dst, const char *src, size_t n)
{
    return hy_pct_escape(dst, src, n, escaped);
}

static int create_request(hy_ureq_t *u, hy_outq_t *out)
{
    hy_upstream_mc_t *s = st(u);
    const hy_var_value_t *v = hy_var_get(u->req, s->key_index);
    if (v->not_found || v->len == 0) {
        hy_req_log(u->req, HY_LOG_ERR, "the \"$memcached_key\" variable is not set");
        return -1;
    }
    char *buf = hy_palloc(u->req->pool, 4 + 3 * v->len + 2);
    memcpy(buf, "get ", 4);
    size_t n = hy_upstream_memcached_escape(buf + 4, v->ptr, v->len);
    s->key = (hy_str_t){buf + 4, n};
    memcpy(buf + 4 + n, "\r\n", 2);
    hy_outq_push_mem(out, buf, 4 + n + 2, NULL, NULL);
    return 0;
}

static void frame_body(hy_ureq_t *u, hy_outq_t *out, const char *p, size_t n, bool last)
{
    (void)u, (void)out, (void)p, (void)n, (void)last; /* no body goes up (the handler discards the client's) */
}

/* log nginx's words for an invalid head line and answer -2 (invalid, logged) */
static int invalid(hy_ureq_t *u, const char *what, hy_str_t line, bool with_key)
{
    char msg[512];
    hy_str_t key = st(u)->key;
    if (with_key)
        snprintf(msg, sizeof(msg), "memcached sent %s in response \"%.*s\" for key \"%.*s\"", what, (int)line.len,
                 line.ptr, (int)key.len, key.ptr);
    else
        snprintf(msg, sizeof(msg), "memcached sent invalid response: \"%.*s\"", (int)line.len, line.ptr);
    hy_upstream_log_error(u, HY_LOG_ERR, msg, "reading response header from upstream");
    return -2;
}

static int process_head(hy_ureq_t *u, hy_buf_t *in)
{
    hy_upstream_mc_t *s = st(u);
    char *data = hy_buf_data(in);
    char *lf = memchr(data, '\n', in->len);
    if (lf == NULL)
        return 0;
    hy_str_t line = {data, (size_t)(lf - data)};
    if (line.len == 0 || lf[-1] != '\r')
        return invalid(u, NULL, line, false);
    line.len--;
    size_t head = (size_t)(lf + 1 - data);
    s->no_body = u->req->method_id == HY_M_HEAD;
    if (line.len == 3 && memcmp(line.ptr, "END", 3) == 0) {
        hy_req_log(u->req, HY_LOG_INFO, "key: \"%.*s\" was not found by memcached", (int)s->key.len, s->key.ptr);
        u->status = 404;
        u->resp_length = 0;
        s->no_body = true;
        s->trailer_ok = true;
        u->head_is_whole = in->len == head; /* nothing after END: the connection may serve another request */
        return (int)head;
    }
    if (line.len < 6 || memcmp(line.ptr, "VALUE ", 6) != 0)
        return invalid(u, NULL, line, false);
    const char *p = line.ptr + 6, *end = line.ptr + line.len;
    if ((size_t)(end - p) < s->key.len || memcmp(p, s->key.ptr, s->key.len) != 0)
        return invalid(u, "invalid key", line, true);
    p += s->key.len;
    if (p == end || *p++ != ' ')
        return invalid(u, NULL, line, false);
    const char *flags = p, *sp = memchr(p, ' ', (size_t)(end - p));
    if (sp == NULL)
        return invalid(u, NULL, line, false);
    if (s->gzip_flag) { /* nginx reads the flags only when they mean something */
        int64_t f = hy_parse_int(flags, (size_t)(sp - flags));
        if (f < 0)
            return invalid(u, "invalid flags", line, true);
        s->gzipped = ((uint64_t)f & s->gzip_flag) != 0;
    }
    int64_t len = hy_parse_int(sp + 1, (size_t)(end - sp - 1));
    if (len < 0)
        return invalid(u, "invalid length", line, true);
    u->status = 200;
    u->resp_length = len;
    s->left = len;
    s->rest = END_LEN;
    return (int)head;
}

static int process_body(hy_ureq_t *u, hy_buf_t *in, bool eof, hy_outq_t *out, bool *done)
{
    hy_upstream_mc_t *s = st(u);
    if (s->no_body) {
        hy_buf_consume(in, in->len);
        *done = true;
        return 0;
    }
    const char *p = hy_buf_data(in);
    size_t n = in->len;
    if (s->left > 0 && n > 0) {
        size_t take = (int64_t)n > s->left ? (size_t)s->left : n;
        hy_outq_push_copy(out, p, take);
        s->left -= (int64_t)take;
        p += take, n -= take;
    }
    if (s->left == 0 && s->rest > 0 && n > 0) {
        const char *want = &END_LINE[END_LEN - s->rest];
        if (n > s->rest || memcmp(p, want, n) != 0) { /* the value goes whole all the same (nginx) */
            hy_upstream_log_error(u, HY_LOG_ERR, "memcached sent invalid trailer", "reading upstream");
            s->rest = 0;
            hy_buf_consume(in, in->len);
            *done = true;
            return 0;
        }
        s->rest -= n;
        s->trailer_ok = s->rest == 0;
    }
    hy_buf_consume(in, in->len);
    *done = s->left == 0 && s->rest == 0;
    if (!*done && eof) {
        *done = true;
        return -1; /* upstream prematurely closed */
    }
    return 0;
}

static bool reusable(const hy_ureq_t *u)
{
    const hy_upstream_mc_t *s = st(u);
    return s->trailer_ok && s->left == 0 && s->rest == 0;
}

static void reinit(hy_ureq_t *u)
{
    hy_upstream_mc_t *s = st(u);
    s->gzipped = s->no_body = s->trailer_ok = false;
    s->left = 0;
    s->rest = 0;
}

const hy_upstream_codec_t hy_upstream_memcached_codec = {
    .name = "memcached",
    .create_request = create_request,
    .frame_body = frame_body,
    .process_head = process_head,
    .process_body = process_body,
    .reusable = reusable,
    .reinit = reinit,
};
