/* health_h2.c — the HTTP/2 client of a health check's probe (proxy_http_version 2; contract in health_h2.h).
 *
 * The probe of a location that passes with HTTP/2 speaks it: the preface, a SETTINGS frame (no push, stream
 * windows large enough for the body examined) with a WINDOW_UPDATE to match on the connection, one HEADERS frame
 * with END_STREAM (HPACK by libnghttp2's deflater), then frames are read until stream 1 ends. The response head
 * (HEADERS + CONTINUATION, 1xx heads skipped, trailers ignored) goes through libnghttp2's HPACK inflater. SETTINGS
 * and PING get their ACKs; RST_STREAM of the stream, a GOAWAY that excludes it, a frame larger than the default
 * maximum or a HPACK error fail the check. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <nghttp2/nghttp2.h>
#include "health_h2.h"
#include "../core/outq.h"

enum { H2_DATA = 0, H2_HEADERS = 1, H2_RST_STREAM = 3, H2_SETTINGS = 4, H2_PING = 6, H2_GOAWAY = 7,
       H2_CONTINUATION = 9 };
enum { H2F_END_STREAM = 1, H2F_ACK = 1, H2F_END_HEADERS = 4, H2F_PADDED = 8, H2F_PRIORITY = 0x20 };
#define H2_WINDOW (HY_HC_BODY_MAX + 65536)

struct hy_hc_h2 {
    nghttp2_hd_inflater *inf;
    bool in_block, block_end_stream; /* a header block is being gathered (HEADERS without END_HEADERS) */
    bool head_done, ended;
    int status;
    size_t nh, strs_len, block_len, body_len;
    hy_header_t hs[100];
    char *body;                 /* malloc HY_HC_BODY_MAX, on the first DATA frame */
    char block[HY_HC_HEAD_MAX]; /* the header block's fragments */
    char strs[HY_HC_HEAD_MAX];  /* the decoded fields' names and values */
};

hy_hc_h2_t *hy_hc_h2_new(void)
{
    hy_hc_h2_t *h = calloc(1, sizeof(*h));
    if (h != NULL && nghttp2_hd_inflate_new(&h->inf) != 0) {
        free(h);
        return NULL;
    }
    return h;
}

void hy_hc_h2_free(hy_hc_h2_t *h)
{
    if (h == NULL)
        return;
    if (h->inf)
        nghttp2_hd_inflate_del(h->inf);
    free(h->body);
    free(h);
}

static void frame_head(char *p, size_t len, int type, int flags, uint32_t sid)
{
    p[0] = (char)(len >> 16), p[1] = (char)(len >> 8), p[2] = (char)len;
    p[3] = (char)type, p[4] = (char)flags;
    p[5] = (char)(sid >> 24 & 0x7f), p[6] = (char)(sid >> 16), p[7] = (char)(sid >> 8), p[8] = (char)sid;
}

static void put32(char *p, uint32_t v)
{
    p[0] = (char)(v >> 24), p[1] = (char)(v >> 16), p[2] = (char)(v >> 8), p[3] = (char)v;
}

size_t hy_hc_h2_request(hy_str_t uri, hy_str_t host, bool https, char *out, size_t cap)
{
    static const char preface[] = "PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n";
    size_t n = sizeof(preface) - 1;
    memcpy(out, preface, n);
    frame_head(out + n, 12, H2_SETTINGS, 0, 0); /* ENABLE_PUSH 0, INITIAL_WINDOW_SIZE */
    n += 9;
    out[n] = 0, out[n + 1] = 2, put32(out + n + 2, 0);
    out[n + 6] = 0, out[n + 7] = 4, put32(out + n + 8, H2_WINDOW);
    n += 12;
    frame_head(out + n, 4, 8 /* WINDOW_UPDATE */, 0, 0);
    put32(out + n + 9, H2_WINDOW - 65535);
    n += 13;
    uri.len = HY_MIN(uri.len, 1500), host.len = HY_MIN(host.len, 400);
    const char *scheme = https ? "https" : "http";
    nghttp2_nv nva[] = {
        {(uint8_t *)":method", (uint8_t *)"GET", 7, 3, NGHTTP2_NV_FLAG_NONE},
        {(uint8_t *)":scheme", (uint8_t *)scheme, 7, strlen(scheme), NGHTTP2_NV_FLAG_NONE},
        {(uint8_t *)":authority", (uint8_t *)host.ptr, 10, host.len, NGHTTP2_NV_FLAG_NONE},
        {(uint8_t *)":path", (uint8_t *)uri.ptr, 5, uri.len, NGHTTP2_NV_FLAG_NONE},
    };
    nghttp2_hd_deflater *def = NULL;
    if (nghttp2_hd_deflate_new(&def, 4096) != 0)
        return 0;
    ssize_t hl = nghttp2_hd_deflate_hd(def, (uint8_t *)out + n + 9, cap - n - 9, nva, HY_ARRAY_SIZE(nva));
    nghttp2_hd_deflate_del(def);
    if (hl <= 0)
        return 0;
    frame_head(out + n, (size_t)hl, H2_HEADERS, H2F_END_STREAM | H2F_END_HEADERS, 1);
    return n + 9 + (size_t)hl;
}

/* The gathered header block is complete: decode it. NULL, or why the response is invalid. */
static const char *h2_decode(hy_hc_h2_t *h)
{
    const uint8_t *in = (const uint8_t *)h->block;
    size_t inlen = h->block_len;
    bool trailer = h->head_done;
    int status = 0;
    h->nh = h->strs_len = 0;
    h->in_block = false;
    h->block_len = 0;
    for (;;) {
        nghttp2_nv nv;
        int fl = 0;
        ssize_t rv = nghttp2_hd_inflate_hd2(h->inf, &nv, &fl, in, inlen, 1);
        if (rv < 0)
            return "invalid HTTP/2 response (HPACK error)";
        in += rv, inlen -= (size_t)rv;
        if ((fl & NGHTTP2_HD_INFLATE_EMIT) && !trailer) {
            if (nv.namelen == 7 && memcmp(nv.name, ":status", 7) == 0) {
                if (nv.valuelen != 3)
                    return "invalid HTTP/2 response (:status)";
                for (int i = 0; i < 3; i++) {
                    if (nv.value[i] < '0' || nv.value[i] > '9')
                        return "invalid HTTP/2 response (:status)";
                    status = status * 10 + (nv.value[i] - '0');
                }
            } else if (nv.namelen && nv.name[0] != ':' && h->nh < HY_ARRAY_SIZE(h->hs) &&
                       h->strs_len + nv.namelen + nv.valuelen <= sizeof(h->strs)) {
                char *p = h->strs + h->strs_len;
                memcpy(p, nv.name, nv.namelen);
                memcpy(p + nv.namelen, nv.value, nv.valuelen);
                h->strs_len += nv.namelen + nv.valuelen;
                h->hs[h->nh++] = (hy_header_t){{p, nv.namelen}, {p + nv.namelen, nv.valuelen}};
            }
        }
        if (fl & NGHTTP2_HD_INFLATE_FINAL) {
            nghttp2_hd_inflate_end_headers(h->inf);
            break;
        }
        if (rv == 0 && inlen == 0)
            return "invalid HTTP/2 response (HPACK error)";
    }
    if (trailer) { /* trailers: not examined; they end the stream */
        h->ended = h->block_end_stream;
        return h->ended ? NULL : "invalid HTTP/2 response (trailers without END_STREAM)";
    }
    if (status < 100)
        return "invalid HTTP/2 response (no :status)";
    if (status < 200) { /* an informational head: the final one follows */
        h->nh = h->strs_len = 0;
        return h->block_end_stream ? "invalid HTTP/2 response (1xx with END_STREAM)" : NULL;
    }
    h->status = status;
    h->head_done = true;
    h->ended = h->block_end_stream;
    return NULL;
}

/* A frame's payload without its padding (and the priority fields of HEADERS). false: malformed. */
static bool h2_unpad(int type, int flags, const char **p, size_t *len)
{
    size_t pad = 0;
    if (flags & H2F_PADDED) {
        if (*len < 1)
            return false;
        pad = (unsigned char)(*p)[0];
        (*p)++, (*len)--;
    }
    if (type == H2_HEADERS && (flags & H2F_PRIORITY)) {
        if (*len < 5)
            return false;
        *p += 5, *len -= 5;
    }
    if (pad > *len)
        return false;
    *len -= pad;
    return true;
}

const char *hy_hc_h2_frames(hy_hc_h2_t *h, hy_sock_t *s, bool *done, bool *wrote, char *buf, size_t cap)
{
    while (s->input.len >= 9 && !*done) {
        const unsigned char *u = (const unsigned char *)hy_buf_data(&s->input);
        size_t len = (size_t)u[0] << 16 | (size_t)u[1] << 8 | u[2];
        int type = u[3], flags = u[4];
        uint32_t sid = (uint32_t)(u[5] & 0x7f) << 24 | (uint32_t)u[6] << 16 | (uint32_t)u[7] << 8 | u[8];
        if (len > HY_HC_H2_FRAME_MAX)
            return "invalid HTTP/2 response (a frame larger than SETTINGS_MAX_FRAME_SIZE)";
        if (s->input.len < 9 + len)
            break;
        const char *p = (const char *)u + 9;
        size_t plen = len;
        if (h->in_block && (type != H2_CONTINUATION || sid != 1))
            return "invalid HTTP/2 response (CONTINUATION expected)";
        switch (type) {
        case H2_DATA:
            if (sid != 1 || !h->head_done)
                return "invalid HTTP/2 response (unexpected DATA)";
            if (!h2_unpad(type, flags, &p, &plen))
                return "invalid HTTP/2 response (padding)";
            if (h->body == NULL && (h->body = malloc(HY_HC_BODY_MAX)) == NULL)
                return "out of memory";
            plen = HY_MIN(plen, HY_HC_BODY_MAX - h->body_len);
            memcpy(h->body + h->body_len, p, plen);
            h->body_len += plen;
            if (flags & H2F_END_STREAM)
                h->ended = true;
            break;
        case H2_HEADERS:
        case H2_CONTINUATION:
            if (sid != 1 || (type == H2_CONTINUATION && !h->in_block))
                return "invalid HTTP/2 response (unexpected HEADERS)";
            if (type == H2_HEADERS) {
                if (!h2_unpad(type, flags, &p, &plen))
                    return "invalid HTTP/2 response (padding)";
                h->in_block = true;
                h->block_end_stream = flags & H2F_END_STREAM;
            }
            if (h->block_len + plen > sizeof(h->block))
                return "the upstream sent too big a response head";
            memcpy(h->block + h->block_len, p, plen);
            h->block_len += plen;
            if (flags & H2F_END_HEADERS) {
                const char *bad = h2_decode(h);
                if (bad)
                    return bad;
            }
            break;
        case H2_RST_STREAM:
            if (sid == 1 && plen == 4) {
                snprintf(buf, cap, "the upstream reset the stream (RST_STREAM, error code %u)",
                         (unsigned)((unsigned char)p[0] << 24 | (unsigned char)p[1] << 16 |
                                    (unsigned char)p[2] << 8 | (unsigned char)p[3]));
                return buf;
            }
            break;
        case H2_SETTINGS:
            if (!(flags & H2F_ACK)) {
                char ack[9];
                frame_head(ack, 0, H2_SETTINGS, H2F_ACK, 0);
                hy_outq_push_copy(&s->outq, ack, 9);
                *wrote = true;
            }
            break;
        case H2_PING:
            if (!(flags & H2F_ACK) && plen == 8) {
                char pong[17];
                frame_head(pong, 8, H2_PING, H2F_ACK, 0);
                memcpy(pong + 9, p, 8);
                hy_outq_push_copy(&s->outq, pong, 17);
                *wrote = true;
            }
            break;
        case H2_GOAWAY:
            if (plen >= 8 && ((unsigned char)p[0] & 0x7f) == 0 && p[1] == 0 && p[2] == 0 && p[3] == 0) {
                snprintf(buf, cap, "the upstream sent GOAWAY (error code %u) before the stream",
                         (unsigned)((unsigned char)p[4] << 24 | (unsigned char)p[5] << 16 |
                                    (unsigned char)p[6] << 8 | (unsigned char)p[7]));
                return buf;
            }
            break;
        default: /* WINDOW_UPDATE, PRIORITY, PUSH_PROMISE (push is off), unknown types: nothing to do */
            break;
        }
        hy_buf_consume(&s->input, 9 + len);
        if (h->ended || (h->head_done && h->body_len >= HY_HC_BODY_MAX))
            *done = true;
    }
    return NULL;
}

bool hy_hc_h2_response(const hy_hc_h2_t *h, int *status, const hy_header_t **hs, size_t *nh, hy_str_t *body)
{
    if (!h->head_done)
        return false;
    *status = h->status;
    *hs = h->hs;
    *nh = h->nh;
    *body = (hy_str_t){h->body, h->body_len};
    return true;
}
