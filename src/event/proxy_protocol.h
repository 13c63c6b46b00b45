/* proxy_protocol.h — the PROXY protocol header a load balancer sends before the client's bytes (haproxy's
 * proxy-protocol.txt: v1 text, v2 binary with TLVs), and nginx's $proxy_protocol_tlv_NAME lookup.
 * Pure functions: no I/O, no allocation. Parsed TLVs point into the caller's buffer. */
#ifndef HY_EVENT_PROXY_PROTOCOL_H
#define HY_EVENT_PROXY_PROTOCOL_H

#include <stddef.h>
#include <stdint.h>
#include <stdbool.h>
#include <sys/types.h>
#include <sys/socket.h>
#include "../core/str.h"

#define HY_PP_V1_MAX 107   /* longest v1 line, CRLF included (the spec's limit, nginx's too) */
#define HY_PP_MAX 4096     /* longest header accepted (nginx's NGX_PROXY_PROTOCOL_MAX_HEADER) */
#define HY_PP_ADDR_TEXT 48 /* room for any address text a header can carry, NUL included */

typedef struct hy_pp {
    int version;                      /* 1 or 2 */
    bool has_addrs;                   /* v1 TCP4/TCP6, v2 PROXY command over STREAM with INET/INET6 addresses;
                                       * false for v1 UNKNOWN and v2 LOCAL / other transports / other families */
    struct sockaddr_storage src, dst; /* AF_INET or AF_INET6 with the port, when has_addrs */
    char src_text[HY_PP_ADDR_TEXT];   /* v1: the address as sent; v2: printed (inet_ntop); "" without addrs */
    char dst_text[HY_PP_ADDR_TEXT];
    uint16_t src_port, dst_port; /* host order; 0 without addrs */
    const uint8_t *tlvs;         /* v2: the TLVs after the addresses (into the input), NULL when none */
    size_t tlvs_len;
} hy_pp_t;

enum { HY_PP_ERROR = -1, HY_PP_AGAIN = -2 };

/** Parse the header at the start of buf[0..len) (the bytes received so far).
 * Returns the header's length in bytes (> 0; the bytes after it belong to the next protocol), HY_PP_AGAIN when
 * buf is a proper prefix of a header that may still be valid (read more, then call again with the longer buffer),
 * or HY_PP_ERROR with *reason set to nginx's log wording:
 *   "broken header"                           v1: not "PROXY " + (TCP4|TCP6) SP addr SP addr SP port SP port CRLF
 *                                             or "PROXY UNKNOWN" ... CRLF within HY_PP_V1_MAX bytes; an address
 *                                             that is not IPv4/IPv6 text, a port outside 0..65535 or of more than
 *                                             5 digits; bytes that are neither v1 nor the v2 signature
 *   "unknown PROXY protocol version"          v2: version nibble other than 2
 *   "header is too large"                     v2: header longer than HY_PP_MAX
 *   "broken PROXY protocol v2 addresses"      v2: shorter than the address block its family needs (nginx closes
 *                                             without a message here)
 * v2 headers with the LOCAL command, a non-STREAM transport or the UNSPEC/UNIX family are accepted without
 * addresses (as nginx: the connection keeps its own addresses). Address texts accept upper-case hex (v1).
 * A v1 line is accepted when its address family disagrees with TCP4/TCP6 (as nginx). */
ssize_t hy_pp_parse(const char *buf, size_t len, hy_pp_t *pp, const char **reason);

/** Find TLV `type` in tlvs[0..len): 1 found (*value points into tlvs), 0 absent, -1 broken TLV list (a TLV
 * running past the end: nginx's "broken PROXY protocol TLV"). type > 0xff is never found. */
int hy_pp_tlv_find(const uint8_t *tlvs, size_t len, unsigned type, hy_str_t *value);

/** nginx's $proxy_protocol_tlv_NAME: name is what follows "proxy_protocol_tlv_":
 *   alpn, authority, unique_id, ssl, netns (case-insensitive) or 0xHEX (any number of hex digits): a top-level
 *   TLV; ssl_version, ssl_cn, ssl_cipher, ssl_sig_alg, ssl_key_alg or ssl_0xHEX: a sub-TLV of the SSL TLV (0x20,
 *   after its 1-byte client and 4-byte verify fields); ssl_verify: the verify field in decimal, written to
 *   verify_buf (11 bytes). Returns 1 found, 0 absent, -1 error with *err: "broken PROXY protocol TLV",
 *   "unknown PROXY protocol TLV", "invalid PROXY protocol TLV" (0x without hex digits, or a non-hex digit). */
int hy_pp_tlv_get(const uint8_t *tlvs, size_t len, hy_str_t name, hy_str_t *value, char verify_buf[11],
                  const char **err);

#endif
