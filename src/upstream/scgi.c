/* scgi.c — the SCGI codec (see scgi.h): the request head is a netstring of NUL-separated names and values,
 * CONTENT_LENGTH first (always present, the body's size) then the parameters; the body follows as it is. The
 * response (shared with uwsgi) is a CGI head, then the body until Content-Length bytes or the close; the
 * connection is never reused (as nginx). */
#include <string.h>
#include "scgi.h"
#include "uconf.h"

typedef hy_upstream_raw_t raw_t;

static raw_t *st(hy_ureq_t *u)
{
    if (u->codec_state == NULL)
        u->codec_state = hy_pcalloc(u->req->pool, sizeof(raw_t));
    return u->codec_state;
}

void hy_upstream_raw_reinit(hy_ureq_t *u)
{
    raw_t *s = st(u);
    s->left = 0;
    s->no_body = false;
}

void hy_upstream_raw_frame_body(hy_ureq_t *u, hy_outq_t *out, const char *p, size_t n, bool last)
{
    (void)u, (void)last;
    if (n)
        hy_outq_push_copy(out, p, n);
}

int hy_upstream_raw_process_head(hy_ureq_t *u, hy_buf_t *in)
{
    char *data = hy_buf_data(in);
    size_t e = hy_uconf_cgi_head_end(data, in->len);
    if (e == 0)
        return 0;
    char *copy = hy_pstrndup(u->req->pool, data, e);
    if (hy_uconf_parse_cgi_head(u, copy, e) != 0)
        return -1;
    raw_t *s = st(u);
    s->no_body = u->status == 204 || u->status == 304 || hy_str_eq(u->method, "HEAD");
    s->left = s->no_body ? -1 : u->resp_length;
    return (int)e;
}

int hy_upstream_raw_process_body(hy_ureq_t *u, hy_buf_t *in, bool eof, hy_outq_t *out, bool *done)
{
    raw_t *s = st(u);
    size_t take = in->len;
    if (s->left >= 0 && (int64_t)take > s->left)
        take = (size_t)s->left;
    if (s->no_body)
        take = 0;
    if (take) {
        hy_outq_push_copy(out, hy_buf_data(in), take);
        if (s->left >= 0)
            s->left -= (int64_t)take;
    }
    hy_buf_consume(in, in->len);
    *done = eof || s->left == 0 || s->no_body;
    return s->left > 0 && eof ? -1 : 0;
}

bool hy_upstream_raw_reusable(const hy_ureq_t *u)
{
    (void)u;
    return false;
}

void hy_upstream_scgi_init(hy_ureq_t *u, const hy_uparams_t *params, bool pass_headers)
{
    raw_t *s = st(u);
    s->params = params;
    s->pass_headers = pass_headers;
    u->codec = &hy_upstream_scgi_codec;
}

static int create_request(hy_ureq_t *u, hy_outq_t *out)
{
    raw_t *s = st(u);
    if (s->params)
        hy_uparams_build(u, s->params, s->pass_headers);
    char cl[24];
    size_t cll = (size_t)hy_fmt_u64(cl, (uint64_t)(u->body_length > 0 ? u->body_length : 0));
    size_t len = sizeof("CONTENT_LENGTH") + cll + 1;
    for (size_t i = 0; i < u->nheaders; i++)
        len += u->headers[i].name.len + u->headers[i].value.len + 2;
    char *buf = hy_palloc(u->req->pool, len + 24), *p = buf;
    p += hy_fmt_u64(p, len);
    *p++ = ':';
    memcpy(p, "CONTENT_LENGTH", sizeof("CONTENT_LENGTH"));
    p += sizeof("CONTENT_LENGTH");
    memcpy(p, cl, cll);
    p += cll;
    *p++ = '\0';
    for (size_t i = 0; i < u->nheaders; i++) {
        if (u->headers[i].name.len)
            memcpy(p, u->headers[i].name.ptr, u->headers[i].name.len);
        p += u->headers[i].name.len;
        *p++ = '\0';
        if (u->headers[i].value.len)
            memcpy(p, u->headers[i].value.ptr, u->headers[i].value.len);
        p += u->headers[i].value.len;
        *p++ = '\0';
    }
    *p++ = ',';
    hy_outq_push_mem(out, buf, (size_t)(p - buf), NULL, NULL);
    return 0;
}

const hy_upstream_codec_t hy_upstream_scgi_codec = {
    .name = "scgi",
    .create_request = create_request,
    .frame_body = hy_upstream_raw_frame_body,
    .process_head = hy_upstream_raw_process_head,
    .process_body = hy_upstream_raw_process_body,
    .reusable = hy_upstream_raw_reusable,
    .reinit = hy_upstream_raw_reinit,
};
