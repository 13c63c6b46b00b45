/* h2frame.h — HTTP/2 frames (RFC 9113 §4, §6): the 9-byte frame header, each type's payload checked against its
 * size, stream-id and padding rules, SETTINGS parameters (§6.5.2), and writers of the frames a server sends.
 * Pure: no I/O, no allocation; the session (proto/h2.c) decides what a frame means for its streams.
 *
 * A parse failure names the error code and whether RFC 9113 makes it a connection error (GOAWAY) or a stream
 * error (RST_STREAM on the frame's stream), with a short text for the log. */
#ifndef HY_PROTO_H2FRAME_H
#define HY_PROTO_H2FRAME_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define HY_H2_HDR 9                 /* frame header bytes */
#define HY_H2_DEFAULT_FRAME 16384   /* SETTINGS_MAX_FRAME_SIZE's initial value (and the only one we announce) */
#define HY_H2_MAX_FRAME 16777215
#define HY_H2_MAX_WINDOW 2147483647 /* 2^31-1 (§6.9.1) */
#define HY_H2_DEFAULT_WINDOW 65535

enum { /* frame types (§6, RFC 9218 §7.1) */
    HY_H2_DATA = 0,
    HY_H2_HEADERS = 1,
    HY_H2_PRIORITY = 2,
    HY_H2_RST_STREAM = 3,
    HY_H2_SETTINGS = 4,
    HY_H2_PUSH_PROMISE = 5,
    HY_H2_PING = 6,
    HY_H2_GOAWAY = 7,
    HY_H2_WINDOW_UPDATE = 8,
    HY_H2_CONTINUATION = 9,
    HY_H2_PRIORITY_UPDATE = 0x10,
};

enum { /* flags */
    HY_H2_F_END_STREAM = 0x1,
    HY_H2_F_ACK = 0x1,
    HY_H2_F_END_HEADERS = 0x4,
    HY_H2_F_PADDED = 0x8,
    HY_H2_F_PRIORITY = 0x20,
};

enum { /* error codes (§7) */
    HY_H2_NO_ERROR = 0,
    HY_H2_PROTOCOL_ERROR = 1,
    HY_H2_INTERNAL_ERROR = 2,
    HY_H2_FLOW_CONTROL_ERROR = 3,
    HY_H2_SETTINGS_TIMEOUT = 4,
    HY_H2_STREAM_CLOSED = 5,
    HY_H2_FRAME_SIZE_ERROR = 6,
    HY_H2_REFUSED_STREAM = 7,
    HY_H2_CANCEL = 8,
    HY_H2_COMPRESSION_ERROR = 9,
    HY_H2_CONNECT_ERROR = 10,
    HY_H2_ENHANCE_YOUR_CALM = 11,
    HY_H2_INADEQUATE_SECURITY = 12,
    HY_H2_HTTP_1_1_REQUIRED = 13,
};

enum { /* SETTINGS parameters (§6.5.2, RFC 8441, RFC 9218) */
    HY_H2_SET_HEADER_TABLE_SIZE = 1,
    HY_H2_SET_ENABLE_PUSH = 2,
    HY_H2_SET_MAX_CONCURRENT_STREAMS = 3,
    HY_H2_SET_INITIAL_WINDOW_SIZE = 4,
    HY_H2_SET_MAX_FRAME_SIZE = 5,
    HY_H2_SET_MAX_HEADER_LIST_SIZE = 6,
    HY_H2_SET_ENABLE_CONNECT_PROTOCOL = 8,
    HY_H2_SET_NO_RFC7540_PRIORITIES = 9,
};

typedef struct hy_h2_hdr {
    uint32_t length; /* payload bytes (24 bits) */
    uint8_t type, flags;
    uint32_t sid;    /* stream id, reserved bit cleared */
} hy_h2_hdr_t;

/* What a frame's payload holds once checked; the fields a type does not have stay 0. */
typedef struct hy_h2_frame {
    const uint8_t *data; /* DATA: the data; HEADERS/CONTINUATION: the header block fragment; PING: 8 opaque bytes;
                            SETTINGS: the parameters (6 bytes each); GOAWAY: debug data; PRIORITY_UPDATE: field */
    size_t len;
    uint32_t pad;        /* padding bytes including the pad length byte (DATA, HEADERS) */
    uint32_t dep;        /* PRIORITY, HEADERS with PRIORITY: the dependency (without the exclusive bit) */
    uint32_t value;      /* RST_STREAM and GOAWAY: the error code; WINDOW_UPDATE: the increment;
                            PRIORITY_UPDATE: the prioritized stream id */
    uint32_t last_sid;   /* GOAWAY */
} hy_h2_frame_t;

typedef struct hy_h2_err {
    uint32_t code;    /* HY_H2_*_ERROR */
    bool stream;      /* a stream error (RST_STREAM on the frame's stream); else a connection error */
    const char *what; /* a short text for the log */
} hy_h2_err_t;

static inline void hy_h2_hdr_parse(const uint8_t *p, hy_h2_hdr_t *h)
{
    h->length = (uint32_t)p[0] << 16 | (uint32_t)p[1] << 8 | p[2];
    h->type = p[3];
    h->flags = p[4];
    h->sid = ((uint32_t)p[5] << 24 | (uint32_t)p[6] << 16 | (uint32_t)p[7] << 8 | p[8]) & 0x7fffffff;
}

static inline uint32_t hy_h2_get32(const uint8_t *p)
{
    return (uint32_t)p[0] << 24 | (uint32_t)p[1] << 16 | (uint32_t)p[2] << 8 | p[3];
}

static inline uint8_t *hy_h2_put32(uint8_t *p, uint32_t v)
{
    p[0] = (uint8_t)(v >> 24), p[1] = (uint8_t)(v >> 16), p[2] = (uint8_t)(v >> 8), p[3] = (uint8_t)v;
    return p + 4;
}

/** Write a frame header at p; returns p + 9. */
static inline uint8_t *hy_h2_hdr_write(uint8_t *p, uint32_t length, uint8_t type, uint8_t flags, uint32_t sid)
{
    p[0] = (uint8_t)(length >> 16), p[1] = (uint8_t)(length >> 8), p[2] = (uint8_t)length;
    p[3] = type, p[4] = flags;
    return hy_h2_put32(p + 5, sid & 0x7fffffff);
}

/** Check a whole frame's payload against its type's rules (§6.1-§6.10, RFC 9218 §7.1) and fill *f. Frames of an
 * unknown type pass (they are to be ignored, §4.1). A HEADERS frame depending on its own stream passes too (a stream
 * error, §5.3.1, but its header block must still be decoded: f->dep == h->sid tells it). Returns 0, or -1 with *err set. The session's own rules
 * (stream states, CONTINUATION sequences, windows, the frame size we announced) are not checked here. */
int hy_h2_frame_parse(const hy_h2_hdr_t *h, const uint8_t *payload, hy_h2_frame_t *f, hy_h2_err_t *err);

/** One SETTINGS parameter's value (§6.5.2): 0, or -1 with *err (a connection error). Unknown ids pass. */
int hy_h2_setting_check(uint16_t id, uint32_t value, hy_h2_err_t *err);

/** Read the i-th parameter of a SETTINGS payload. */
static inline void hy_h2_setting_at(const hy_h2_frame_t *f, size_t i, uint16_t *id, uint32_t *value)
{
    const uint8_t *p = f->data + 6 * i;
    *id = (uint16_t)(p[0] << 8 | p[1]);
    *value = hy_h2_get32(p + 2);
}

/* Writers: each writes a whole frame at p and returns the end. Sizes: SETTINGS 9 + 6n, the others fixed. */
uint8_t *hy_h2_write_settings(uint8_t *p, const uint16_t *ids, const uint32_t *values, size_t n);
uint8_t *hy_h2_write_settings_ack(uint8_t *p);                                   /* 9 bytes */
uint8_t *hy_h2_write_ping_ack(uint8_t *p, const uint8_t opaque[8]);              /* 17 bytes */
uint8_t *hy_h2_write_window_update(uint8_t *p, uint32_t sid, uint32_t increment); /* 13 bytes */
uint8_t *hy_h2_write_rst(uint8_t *p, uint32_t sid, uint32_t code);                /* 13 bytes */
uint8_t *hy_h2_write_goaway(uint8_t *p, uint32_t last_sid, uint32_t code);        /* 17 bytes */
/** A DATA frame's header for `len` bytes that follow. */
static inline uint8_t *hy_h2_write_data_hdr(uint8_t *p, uint32_t sid, uint32_t len, bool end_stream)
{
    return hy_h2_hdr_write(p, len, HY_H2_DATA, end_stream ? HY_H2_F_END_STREAM : 0, sid);
}

/** Bytes a header block of `block_len` takes as HEADERS + CONTINUATION frames of at most max_frame payload bytes. */
static inline size_t hy_h2_headers_size(size_t block_len, size_t max_frame)
{
    size_t frames = block_len ? (block_len + max_frame - 1) / max_frame : 1;
    return block_len + frames * HY_H2_HDR;
}

/** Frame a header block in place: p holds 9 free bytes, then the block (block_len bytes), and room up to
 * hy_h2_headers_size(block_len, max_frame) bytes. Writes HEADERS (flags: END_STREAM if asked, END_HEADERS on the
 * last frame) and as many CONTINUATION frames as the block needs; returns the total bytes. */
size_t hy_h2_frame_headers(uint8_t *p, size_t block_len, uint32_t sid, bool end_stream, size_t max_frame);

const char *hy_h2_error_name(uint32_t code);

#endif
