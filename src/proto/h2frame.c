/* h2frame.c — HTTP/2 frame payloads and writers (see h2frame.h). */
#include <string.h>
#include "h2frame.h"

static int fail(hy_h2_err_t *err, uint32_t code, bool stream, const char *what)
{
    err->code = code;
    err->stream = stream;
    err->what = what;
    return -1;
}

/* the pad length byte of a PADDED frame: the payload after it, less the padding */
static int unpad(const hy_h2_hdr_t *h, const uint8_t **p, size_t *len, hy_h2_frame_t *f, hy_h2_err_t *err)
{
    if (!(h->flags & HY_H2_F_PADDED))
        return 0;
    if (*len < 1)
        return fail(err, HY_H2_FRAME_SIZE_ERROR, false, "padded frame without pad length");
    uint8_t pad = (*p)[0];
    if ((size_t)pad >= *len) /* §6.1, §6.2: padding as long as the payload or longer */
        return fail(err, HY_H2_PROTOCOL_ERROR, false, "padding is longer than the payload");
    f->pad = (uint32_t)pad + 1;
    *p += 1;
    *len -= (size_t)pad + 1;
    return 0;
}

int hy_h2_frame_parse(const hy_h2_hdr_t *h, const uint8_t *p, hy_h2_frame_t *f, hy_h2_err_t *err)
{
    size_t len = h->length;
    memset(f, 0, sizeof(*f));
    switch (h->type) {
    case HY_H2_DATA:
        if (h->sid == 0)
            return fail(err, HY_H2_PROTOCOL_ERROR, false, "DATA frame on stream 0");
        if (unpad(h, &p, &len, f, err) < 0)
            return -1;
        break;
    case HY_H2_HEADERS:
        if (h->sid == 0)
            return fail(err, HY_H2_PROTOCOL_ERROR, false, "HEADERS frame on stream 0");
        if (unpad(h, &p, &len, f, err) < 0)
            return -1;
        if (h->flags & HY_H2_F_PRIORITY) {
            if (len < 5)
                return fail(err, HY_H2_FRAME_SIZE_ERROR, false, "HEADERS frame too short for its priority");
            f->dep = hy_h2_get32(p) & 0x7fffffff; /* its own stream: the caller's (the block is decoded still) */
            p += 5, len -= 5;
        }
        break;
    case HY_H2_PRIORITY:
        if (h->sid == 0)
            return fail(err, HY_H2_PROTOCOL_ERROR, false, "PRIORITY frame on stream 0");
        if (len != 5)
            return fail(err, HY_H2_FRAME_SIZE_ERROR, true, "PRIORITY frame of a length other than 5");
        f->dep = hy_h2_get32(p) & 0x7fffffff;
        if (f->dep == h->sid)
            return fail(err, HY_H2_PROTOCOL_ERROR, true, "PRIORITY frame depends on its own stream");
        break;
    case HY_H2_RST_STREAM:
        if (h->sid == 0)
            return fail(err, HY_H2_PROTOCOL_ERROR, false, "RST_STREAM frame on stream 0");
        if (len != 4)
            return fail(err, HY_H2_FRAME_SIZE_ERROR, false, "RST_STREAM frame of a length other than 4");
        f->value = hy_h2_get32(p);
        break;
    case HY_H2_SETTINGS:
        if (h->sid != 0)
            return fail(err, HY_H2_PROTOCOL_ERROR, false, "SETTINGS frame on a stream");
        if ((h->flags & HY_H2_F_ACK) && len != 0)
            return fail(err, HY_H2_FRAME_SIZE_ERROR, false, "SETTINGS ACK with a payload");
        if (len % 6)
            return fail(err, HY_H2_FRAME_SIZE_ERROR, false, "SETTINGS frame of a length not a multiple of 6");
        break;
    case HY_H2_PUSH_PROMISE:
        return fail(err, HY_H2_PROTOCOL_ERROR, false, "PUSH_PROMISE from a client");
    case HY_H2_PING:
        if (h->sid != 0)
            return fail(err, HY_H2_PROTOCOL_ERROR, false, "PING frame on a stream");
        if (len != 8)
            return fail(err, HY_H2_FRAME_SIZE_ERROR, false, "PING frame of a length other than 8");
        break;
    case HY_H2_GOAWAY:
        if (h->sid != 0)
            return fail(err, HY_H2_PROTOCOL_ERROR, false, "GOAWAY frame on a stream");
        if (len < 8)
            return fail(err, HY_H2_FRAME_SIZE_ERROR, false, "GOAWAY frame shorter than 8");
        f->last_sid = hy_h2_get32(p) & 0x7fffffff;
        f->value = hy_h2_get32(p + 4);
        p += 8, len -= 8;
        break;
    case HY_H2_WINDOW_UPDATE:
        if (len != 4)
            return fail(err, HY_H2_FRAME_SIZE_ERROR, false, "WINDOW_UPDATE frame of a length other than 4");
        f->value = hy_h2_get32(p) & 0x7fffffff;
        if (f->value == 0) /* §6.9: a stream error on a stream, a connection error on the connection */
            return fail(err, HY_H2_PROTOCOL_ERROR, h->sid != 0, "WINDOW_UPDATE with an increment of 0");
        break;
    case HY_H2_CONTINUATION:
        if (h->sid == 0)
            return fail(err, HY_H2_PROTOCOL_ERROR, false, "CONTINUATION frame on stream 0");
        break;
    case HY_H2_PRIORITY_UPDATE:
        if (h->sid != 0 || len < 4)
            return fail(err, HY_H2_PROTOCOL_ERROR, false, "invalid PRIORITY_UPDATE frame");
        f->value = hy_h2_get32(p) & 0x7fffffff;
        if (f->value == 0)
            return fail(err, HY_H2_PROTOCOL_ERROR, false, "invalid PRIORITY_UPDATE frame");
        p += 4, len -= 4;
        break;
    default:
        break;
    }
    f->data = p;
    f->len = len;
    return 0;
}

int hy_h2_setting_check(uint16_t id, uint32_t v, hy_h2_err_t *err)
{
    switch (id) {
    case HY_H2_SET_ENABLE_PUSH:
    case HY_H2_SET_ENABLE_CONNECT_PROTOCOL:
    case HY_H2_SET_NO_RFC7540_PRIORITIES:
        if (v > 1)
            return fail(err, HY_H2_PROTOCOL_ERROR, false, "SETTINGS: a boolean parameter above 1");
        break;
    case HY_H2_SET_INITIAL_WINDOW_SIZE:
        if (v > HY_H2_MAX_WINDOW)
            return fail(err, HY_H2_FLOW_CONTROL_ERROR, false, "SETTINGS: too large SETTINGS_INITIAL_WINDOW_SIZE");
        break;
    case HY_H2_SET_MAX_FRAME_SIZE:
        if (v < HY_H2_DEFAULT_FRAME || v > HY_H2_MAX_FRAME)
            return fail(err, HY_H2_PROTOCOL_ERROR, false, "SETTINGS: invalid SETTINGS_MAX_FRAME_SIZE");
        break;
    default:
        break;
    }
    return 0;
}

uint8_t *hy_h2_write_settings(uint8_t *p, const uint16_t *ids, const uint32_t *values, size_t n)
{
    p = hy_h2_hdr_write(p, (uint32_t)(6 * n), HY_H2_SETTINGS, 0, 0);
    for (size_t i = 0; i < n; i++) {
        p[0] = (uint8_t)(ids[i] >> 8), p[1] = (uint8_t)ids[i];
        p = hy_h2_put32(p + 2, values[i]);
    }
    return p;
}

uint8_t *hy_h2_write_settings_ack(uint8_t *p)
{
    return hy_h2_hdr_write(p, 0, HY_H2_SETTINGS, HY_H2_F_ACK, 0);
}

uint8_t *hy_h2_write_ping_ack(uint8_t *p, const uint8_t opaque[8])
{
    p = hy_h2_hdr_write(p, 8, HY_H2_PING, HY_H2_F_ACK, 0);
    memcpy(p, opaque, 8);
    return p + 8;
}

uint8_t *hy_h2_write_window_update(uint8_t *p, uint32_t sid, uint32_t increment)
{
    p = hy_h2_hdr_write(p, 4, HY_H2_WINDOW_UPDATE, 0, sid);
    return hy_h2_put32(p, increment & 0x7fffffff);
}

uint8_t *hy_h2_write_rst(uint8_t *p, uint32_t sid, uint32_t code)
{
    p = hy_h2_hdr_write(p, 4, HY_H2_RST_STREAM, 0, sid);
    return hy_h2_put32(p, code);
}

uint8_t *hy_h2_write_goaway(uint8_t *p, uint32_t last_sid, uint32_t code)
{
    p = hy_h2_hdr_write(p, 8, HY_H2_GOAWAY, 0, 0);
    p = hy_h2_put32(p, last_sid & 0x7fffffff);
    return hy_h2_put32(p, code);
}

size_t hy_h2_frame_headers(uint8_t *p, size_t block_len, uint32_t sid, bool end_stream, size_t max_frame)
{
    uint8_t es = end_stream ? HY_H2_F_END_STREAM : 0;
    if (block_len <= max_frame) { /* the usual case: one HEADERS frame, the block stays where it is */
        hy_h2_hdr_write(p, (uint32_t)block_len, HY_H2_HEADERS, es | HY_H2_F_END_HEADERS, sid);
        return block_len + HY_H2_HDR;
    }
    size_t frames = (block_len + max_frame - 1) / max_frame;
    size_t total = block_len + frames * HY_H2_HDR;
    /* move the pieces from the last one back, each to its final place, then write the headers */
    for (size_t i = frames; i-- > 1;) {
        size_t off = i * max_frame, n = i == frames - 1 ? block_len - off : max_frame;
        uint8_t *dst = p + HY_H2_HDR * (i + 1) + off;
        memmove(dst, p + HY_H2_HDR + off, n);
        hy_h2_hdr_write(dst - HY_H2_HDR, (uint32_t)n, HY_H2_CONTINUATION, i == frames - 1 ? HY_H2_F_END_HEADERS : 0,
                        sid);
    }
    hy_h2_hdr_write(p, (uint32_t)max_frame, HY_H2_HEADERS, es, sid);
    return total;
}

const char *hy_h2_error_name(uint32_t code)
{
    static const char *const names[] = {"NO_ERROR", "PROTOCOL_ERROR", "INTERNAL_ERROR", "FLOW_CONTROL_ERROR",
                                        "SETTINGS_TIMEOUT", "STREAM_CLOSED", "FRAME_SIZE_ERROR", "REFUSED_STREAM",
                                        "CANCEL", "COMPRESSION_ERROR", "CONNECT_ERROR", "ENHANCE_YOUR_CALM",
                                        "INADEQUATE_SECURITY", "HTTP_1_1_REQUIRED"};
    return code < sizeof(names) / sizeof(names[0]) ? names[code] : "unknown error";
}
