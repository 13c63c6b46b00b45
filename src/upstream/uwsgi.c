/* uwsgi.c — the uwsgi codec (see uwsgi.h): a packet header (modifier1, the vars' size as 16-bit little endian,
 * modifier2), the vars (16-bit little-endian lengths before each name and value) and uwsgi_string's bytes (inside
 * the size), then the body as it is. The
 * response is HTTP-like (a status line and header fields, see scgi.h), read until Content-Length or the close. */
#include <string.h>
#include "uwsgi.h"
#include "scgi.h"
#include "../core/log.h"

typedef hy_upstream_raw_t uw_t;

void hy_upstream_uwsgi_init(hy_ureq_t *u, const hy_uparams_t *params, bool pass_headers, int modifier1, int modifier2,
                            hy_str_t tail)
{
    uw_t *s = hy_pcalloc(u->req->pool, sizeof(*s));
    s->params = params;
    s->pass_headers = pass_headers;
    s->mod1 = modifier1;
    s->mod2 = modifier2;
    s->tail = tail;
    u->codec_state = s;
    u->codec = &hy_upstream_uwsgi_codec;
}

static int create_request(hy_ureq_t *u, hy_outq_t *out)
{
    const uw_t *s = u->codec_state;
    if (s->params)
        hy_uparams_build(u, s->params, s->pass_headers);
    size_t len = 0;
    for (size_t i = 0; i < u->nheaders; i++) {
        if (u->headers[i].name.len > 65535 || u->headers[i].value.len > 65535)
            len = 65536;
        len += 4 + u->headers[i].name.len + u->headers[i].value.len;
    }
    len += s->tail.len;
    if (len > 65535) {
        hy_req_log(u->req, HY_LOG_ALERT, "uwsgi request is too big: %zu", len);
        return -1;
    }
    unsigned char *buf = hy_palloc(u->req->pool, len + 4), *p = buf;
    *p++ = (unsigned char)s->mod1;
    *p++ = (unsigned char)(len & 0xff);
    *p++ = (unsigned char)(len >> 8);
    *p++ = (unsigned char)s->mod2;
    for (size_t i = 0; i < u->nheaders; i++) {
        hy_str_t kv[2] = {u->headers[i].name, u->headers[i].value};
        for (int k = 0; k < 2; k++) {
            *p++ = (unsigned char)(kv[k].len & 0xff);
            *p++ = (unsigned char)(kv[k].len >> 8);
            if (kv[k].len)
                memcpy(p, kv[k].ptr, kv[k].len);
            p += kv[k].len;
        }
    }
    if (s->tail.len)
        memcpy(p, s->tail.ptr, s->tail.len);
    p += s->tail.len;
    hy_outq_push_mem(out, (char *)buf, (size_t)(p - buf), NULL, NULL);
    return 0;
}

const hy_upstream_codec_t hy_upstream_uwsgi_codec = {
    .name = "uwsgi",
    .create_request = create_request,
    .frame_body = hy_upstream_raw_frame_body,
    .process_head = hy_upstream_raw_process_head,
    .process_body = hy_upstream_raw_process_body,
    .reusable = hy_upstream_raw_reusable,
    .reinit = hy_upstream_raw_reinit,
};
