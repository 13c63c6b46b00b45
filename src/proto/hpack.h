/* hpack.h — HPACK (RFC 7541): header block decoding and encoding for hayate's own HTTP/2 framing (proto/h2*).
 * Pure: no I/O; memory only through the calls named below. A decoder and an encoder each hold one dynamic table
 * (§2.3.2); a connection has one of each. Every failure is a COMPRESSION_ERROR for the caller (RFC 9113 §4.3):
 * after one, the decoder's table is out of step with the peer's and the connection must end.
 *
 * Decoding, as a state machine per header block:
 *   idle --hy_hpack_decode(block)--> fields delivered in order through the callback --> idle (0)
 *                                                                                  \-> failed (<0): stop using it
 * The decoder stops at the first error, so the code says what went wrong first, reading the block in order: a block
 * that ends inside a field representation returns HY_HPACK_ERR_TRUNCATED only when nothing before that point failed.
 * The whole block (HEADERS + CONTINUATION payloads, padding and priority removed) is passed in one call: the
 * caller gathers it (it is bounded by the header-list limits the caller enforces on the frames' sizes).
 *
 * Encoding: hy_hpack_encode_begin() starts a block (it emits a pending dynamic table size update, §4.2/§6.3),
 * then one hy_hpack_encode_*() per field; each writes at most hy_hpack_field_bound() bytes at `out` and returns
 * how many it wrote. The encoder indexes fields worth indexing (§6.2.1) and finds them again through a small hash,
 * so a second response with the same `server`, `content-type`, `last-modified`... costs one byte per field. */
#ifndef HY_PROTO_HPACK_H
#define HY_PROTO_HPACK_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define HY_HPACK_DEFAULT_TABLE 4096 /* SETTINGS_HEADER_TABLE_SIZE's initial value (RFC 9113 §6.5.2) */

/* Errors (negative): the block is malformed for HPACK; the caller answers with COMPRESSION_ERROR (h2_recv.c answers
 * HY_HPACK_ERR_TRUNCATED of a block carried by one frame as nginx does, a frame of incorrect length). */
enum {
    HY_HPACK_ERR = -1,      /* bad index, integer overflow (above 2^32-1, or more than 5 continuation octets with more
                               of the block after them), bad Huffman code or padding (§5.2: padding longer than 7 bits
                               or not all ones, or an EOS symbol), no memory; and a truncated block (below) that has a
                               string length written in 6 octets before its cut (an integer nginx refuses as too long;
                               the decoder accepts it in a whole block) */
    HY_HPACK_ERR_SIZE = -2, /* a table size update above the limit, or one not at the block's start (§4.2) */
    HY_HPACK_ERR_CB = -3,   /* the callback returned HY_HPACK_CB_ABORT */
    HY_HPACK_ERR_TRUNCATED = -4, /* the block ends inside a field representation (§6) or a size update: inside an
                                    integer (its octets continue to the end, however many), before a string's
                                    length, or before the last byte of a string (raw or Huffman) */
};

/* What the field callback returns. */
enum {
    HY_HPACK_CB_OK = 0,    /* go on */
    HY_HPACK_CB_QUIET = 1, /* deliver no more fields of this block, but decode it to its end (the dynamic table
                              must stay in step with the peer's): a stream-level refusal, e.g. a too large list */
    HY_HPACK_CB_ABORT = 2, /* stop now: hy_hpack_decode returns HY_HPACK_ERR_CB (a connection error) */
};

typedef struct hy_hpack_field {
    const char *name, *value; /* valid during the callback only (they may point into the block, the table or the
                                 decoder's scratch space for Huffman-decoded strings); not NUL-terminated */
    size_t name_len, value_len;
    unsigned static_idx; /* 1..61 when the name is a static table name (by index or by equal bytes), else 0: a fast
                            switch on known names. Always the name's FIRST static index: ":path" is 4 (never 5),
                            ":method" 2, ":scheme" 6, ":status" 8 */
    bool never_indexed;  /* sent as a never-indexed literal (§6.2.3): to be re-sent the same way by a proxy */
} hy_hpack_field_t;

typedef int (*hy_hpack_field_cb)(void *ud, const hy_hpack_field_t *f);

/* one dynamic table (§2.3.2, §4): entries newest first, evicted oldest first; size counts name+value+32 each.
 * Private to hpack.c: descriptors in a ring indexed by insertion number; bytes appended to one buffer of 2*max
 * bytes in insertion order (the live ones are [bytes_start, bytes_head)), moved to its start when the end is
 * reached — so an entry's name and value are contiguous and stay where they are until the next insertion. */
typedef struct hy_hpack_table {
    struct hy_hpack_entry *ring; /* malloc'd circular array of entry descriptors (grows by doubling) */
    size_t cap, count;           /* ring capacity (a power of 2, or 0), number of entries */
    size_t size, max;            /* current size and the limit now in force */
    uint32_t inserted;           /* entries inserted so far: the newest is ring[(inserted - 1) & (cap - 1)] */
    char *bytes;                 /* entries' name and value bytes (malloc'd at the first insertion) */
    size_t bytes_cap, bytes_start, bytes_head;
} hy_hpack_table_t;

typedef struct hy_hpack_dec {
    hy_hpack_table_t t;
    size_t settings_max; /* the SETTINGS_HEADER_TABLE_SIZE we announced: a size update above it is an error */
    char *scratch;       /* Huffman output for the field being delivered (malloc'd, grows) */
    size_t scratch_cap;
} hy_hpack_dec_t;

typedef struct hy_hpack_enc {
    hy_hpack_table_t t;
    size_t peer_max;     /* the peer's SETTINGS_HEADER_TABLE_SIZE (4096 until it says otherwise) */
    size_t want_max;     /* the table size the encoder will use (min(peer_max, 4096)) */
    size_t update_min;   /* the smallest size wanted since the last block (§4.2: signalled first when smaller) */
    bool size_update;    /* a dynamic table size update is due at the next block's start */
    uint32_t hash[256];  /* (name,value) hash -> entry's insertion number + 1 (0: empty), checked on lookup */
} hy_hpack_enc_t;

/** Decoder with the static table and an empty dynamic table limited to `settings_max` (what we announce; at most
 * 2^30). d->settings_max may be lowered later, when the peer has acknowledged a smaller SETTINGS_HEADER_TABLE_SIZE. */
void hy_hpack_dec_init(hy_hpack_dec_t *d, size_t settings_max);
void hy_hpack_dec_free(hy_hpack_dec_t *d);

/** Decode one whole header block, calling cb(ud, field) for each field in order (callback returns above).
 * Returns 0, or a negative HY_HPACK_ERR*. Empty names are delivered (the caller refuses them, nginx's way). */
int hy_hpack_decode(hy_hpack_dec_t *d, const uint8_t *block, size_t len, hy_hpack_field_cb cb, void *ud);

/** Encoder with the static table and an empty dynamic table of 4096 bytes (the peer's initial limit). */
void hy_hpack_enc_init(hy_hpack_enc_t *e);
void hy_hpack_enc_free(hy_hpack_enc_t *e);

/** The peer's SETTINGS_HEADER_TABLE_SIZE: the encoder will announce min(size, 4096) at the next block's start. */
void hy_hpack_enc_peer_max(hy_hpack_enc_t *e, size_t size);

/** Upper bound of the bytes one hy_hpack_encode_field of these lengths writes (integers, no Huffman growth). */
static inline size_t hy_hpack_field_bound(size_t name_len, size_t value_len)
{
    return name_len + value_len + 12;
}

/** Start a block: writes the pending table size update, if any (at most 6 bytes at out). Returns bytes written. */
size_t hy_hpack_encode_begin(hy_hpack_enc_t *e, uint8_t *out);

/** `:status` (3 digits, 100..999): one byte for the 7 codes of the static table. Returns bytes written (≤ 5). */
size_t hy_hpack_encode_status(hy_hpack_enc_t *e, uint8_t *out, unsigned status);

/** One field; `name` is lower case already (the caller lowers it). Values of common response fields are indexed
 * (the encoder's choice; a value over 256 bytes or with `sensitive` set is never indexed, and `sensitive` sends it
 * as never-indexed, §6.2.3, for authorization/cookie/set-cookie a proxy passes on). Strings are Huffman-coded when
 * that is shorter. Returns bytes written (≤ hy_hpack_field_bound). */
size_t hy_hpack_encode_field(hy_hpack_enc_t *e, uint8_t *out, const char *name, size_t name_len, const char *value,
                             size_t value_len, bool sensitive);

#endif
