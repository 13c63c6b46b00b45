/* memcached.h — the memcached codec for the upstream engine (memcached_pass, handlers/memcached.c), nginx's
 * ngx_http_memcached_module on the wire:
 *
 *   request   "get KEY\r\n": the key is the value of $memcached_key, with control characters, space and '%'
 *             escaped as %XX (nginx's NGX_ESCAPE_MEMCACHED). No body goes up.
 *   head      one line. "VALUE KEY FLAGS LENGTH\r\n": status 200, resp_length LENGTH (a KEY other than the one
 *             asked for, or FLAGS that are no number when they are read, or LENGTH that is none: invalid). "END\r\n":
 *             the key is missing, status 404 with no body, and the connection stays reusable (u->head_is_whole).
 *             Anything else is invalid. Each invalid head is logged in nginx's words by the codec (-2).
 *   body      LENGTH bytes of the value, then the trailer "\r\nEND\r\n". A trailer that differs (or bytes after it)
 *             is logged as "memcached sent invalid trailer": the value still goes to the client whole, the connection
 *             is not reused. A close before the end is a premature close.
 *   reusable  after a value read with its whole trailer, and after END; never after HEAD (the value is not read).
 *
 * State (u->codec_state, request pool): the key as sent, the flags and what is left of the value and trailer. */
#ifndef HY_UPSTREAM_MEMCACHED_H
#define HY_UPSTREAM_MEMCACHED_H

#include "upstream.h"

extern const hy_upstream_codec_t hy_upstream_memcached_codec;

typedef struct hy_upstream_mc {
    int key_index;      /* $memcached_key (http/vars.h index) */
    uint64_t gzip_flag; /* memcached_gzip_flag: flags with one of these bits set mean a gzipped value (0: none) */
    hy_str_t key;       /* escaped, as sent */
    bool gzipped;       /* the value's flags had gzip_flag's bits */
    bool no_body;       /* HEAD: the value is not read */
    bool trailer_ok;    /* the trailer came whole and nothing after it */
    int64_t left;       /* value bytes still to come */
    size_t rest;        /* trailer bytes still to come */
} hy_upstream_mc_t;

/** Prepare u for the memcached codec: the key is read from variable key_index when the request is sent. */
void hy_upstream_memcached_init(hy_ureq_t *u, int key_index, uint64_t gzip_flag);
/** The codec's state of u (after hy_upstream_memcached_init). */
const hy_upstream_mc_t *hy_upstream_memcached_state(const hy_ureq_t *u);
/** nginx's NGX_ESCAPE_MEMCACHED (http/uri.h's hy_pct_escape): the bytes below 0x21 and '%' as %XX. dst holds
 * 3 * n bytes, or is NULL to count; returns the length. */
size_t hy_upstream_memcached_escape(char *dst, const char *src, size_t n);

#endif
