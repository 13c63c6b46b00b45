/* h1parse.h — zero-copy, stateless HTTP/1 request parser, request framing (RFC 9112 §6) and in-place chunked
 * decoder (target normalisation and Host validation are protocol-neutral: http/uri.h).
 * Pure functions: no I/O, no allocation. Parsed strings point into the caller's buffer. */
#ifndef HY_PROTO_H1PARSE_H
#define HY_PROTO_H1PARSE_H

#include <stddef.h>
#include <stdint.h>
#include <stdbool.h>
#include <sys/types.h>
#include "../core/str.h"

typedef struct hy_h1_header {
    hy_str_t name;  /* field name as sent (case preserved), points into the input buffer */
    hy_str_t value; /* field value, OWS trimmed on both sides, points into the input buffer */
} hy_h1_header_t;

typedef struct hy_h1_request {
    hy_str_t method;         /* token as sent (case-sensitive, RFC 9110 §9.1) */
    hy_str_t target;         /* request-target as sent (not decoded) */
    hy_str_t request_line;   /* "GET / HTTP/1.1" without the line end and trailing spaces (for logs, $request) */
    int version;             /* 10 for HTTP/1.0, 11 for HTTP/1.1 (HTTP/1.2..1.9 are read as 11, RFC 9110 §2.5) */
    hy_h1_header_t *headers; /* caller-provided array */
    size_t num_headers;      /* in: capacity of headers[]; out: number of fields (written only on success) */
    bool invalid_names;      /* out, on success: some field name holds visible non-tchar bytes (nginx's "invalid
                                header"); when false, every name is a token and needs no hy_h1_field_name_valid */
    int error_status;        /* on -1: the status to answer: 400, 414 or 505 */
    const char *error_reason; /* on -1: static text for the error log, nginx's wording where nginx has one */
} hy_h1_request_t;

/** Parse request line + header fields from buf[0..len).
 * last_len: length of the buffer at the previous call that returned -2 for the same request (0 the first time).
 * With last_len == 0 the whole buffer is parsed. With last_len > 0, when the new bytes complete no line, only the
 * limit on the current (incomplete) line is checked; otherwise the whole buffer is parsed again. So the full parse
 * runs at most once per line, and a syntax error is reported as soon as the line that holds it is complete.
 * Leading empty lines (CRLF or LF) before the request line are skipped and counted in the consumed bytes.
 * Returns the bytes consumed through the empty line (> 0), -2 if incomplete, -1 on error (r->error_status and
 * r->error_reason set).
 * max_line: longest request line, line end excluded (over it: 414 "client sent too long URI"); 0 = no limit.
 * max_header_line: longest header line, line end excluded (over it: 400 "client sent too long header line"; nginx
 * answers that with "400 Request Header Or Cookie Too Large"); 0 = no limit.
 * More fields than r->num_headers: 400 "client sent too many header lines".
 * A field name may hold visible bytes that are not tchar (nginx's "invalid header": "Foo@Bar"); the caller checks
 * names with hy_h1_field_name_valid and drops or refuses such fields (ignore_invalid_headers).
 * Stricter than nginx (on purpose): obs-fold, whitespace before ':', a field line without ':', a CTL in a field
 * name, CTLs other than HTAB in a value, a bare CR anywhere (even in leading empty lines) are all 400.
 * Matches nginx: LF alone ends a line, several SPs between request-line words and trailing SPs after the version are
 * accepted, bytes >= 0x80 are accepted in the target and in values. Header pointers point into buf (cast from
 * const: write through them only if buf is writable). "PRI * HTTP/2.0" (the h2 preface) gives -1/505: detect the
 * preface before calling this. */
int hy_h1_parse_request(const char *buf, size_t len, size_t last_len, size_t max_line, size_t max_header_line,
                        hy_h1_request_t *r);

/** Whether a parsed field name is a token (RFC 9110 §5.1); false for nginx's "invalid header" names. */
bool hy_h1_field_name_valid(hy_str_t name);

/** Request framing from the parsed headers (RFC 9112 §6.1-6.3). Fills *content_length (-1: none) and *chunked.
 * Returns 0, or -1 with *status and *reason set:
 *   400 "client sent duplicate header line"         two Content-Length (even equal) or two Transfer-Encoding fields
 *   400 "client sent invalid \"Content-Length\" header"  empty, non-digit, sign, list, space inside, > INT64_MAX
 *   400 "client sent HTTP/1.0 request with \"Transfer-Encoding\" header"
 *   400 "client sent \"Content-Length\" and \"Transfer-Encoding\" headers at the same time"  (whatever the coding;
 *        nginx answers 501 for "TE: gzip" + CL, we answer 400: a message with both is never processed)
 *   501 "client sent unknown \"Transfer-Encoding\""  anything but "chunked" (case-insensitive, OWS trimmed)
 * On any error the connection must be closed after the response (the framing is unknown). */
int hy_h1_framing(const hy_h1_request_t *r, int64_t *content_length, bool *chunked, int *status, const char **reason);

#define HY_H1_CHUNK_MAX_SIZE ((UINT64_C(1) << 62) - 1) /* largest chunk-size accepted */
#define HY_H1_CHUNK_LINE_MAX 4096                      /* longest chunk-size line (with extensions) */
#define HY_H1_TRAILERS_MAX 65536                       /* largest trailer section */

/* Streaming state of the chunked decoder; zero-initialise before the first call ({0} is the start state). */
typedef struct hy_h1_chunked {
    int state;
    uint64_t remaining; /* chunk-size being read, then data bytes left in the current chunk */
    size_t line_bytes;  /* bytes in the current size line / in the trailer section */
    uint64_t total;     /* payload bytes decoded so far (all calls) */
} hy_h1_chunked_t;

/** In-place streaming chunked decoder (RFC 9112 §7.1). Decodes buf[0..*len) (the bytes received since the previous
 * call) in place: on return the payload bytes decoded from this input are at buf[0..*len).
 * Returns -2: all input used, need more data; -1: invalid (bad or missing hex size, "0x" prefix, size over
 * HY_H1_CHUNK_MAX_SIZE, missing CRLF after data, CTL in an extension or trailer, a bare CR, a size line over
 * HY_H1_CHUNK_LINE_MAX or trailers over HY_H1_TRAILERS_MAX); >= 0: the body is complete, and the value is the number
 * of bytes that followed the final CRLF of the chunked body (the start of the next pipelined request). Those bytes
 * are moved to sit right after the payload: they are at buf[*len .. *len + ret).
 * Chunk extensions (";name=value") and trailer fields are accepted and skipped. A line ends with CRLF or a bare LF
 * (as nginx); whitespace between the size and ';' or the line end is accepted (BWS, as nginx). Once complete, further
 * calls treat all input as leftover. */
ssize_t hy_h1_decode_chunked(hy_h1_chunked_t *d, char *buf, size_t *len);

/** True once hy_h1_decode_chunked has seen the end of the chunked body. */
bool hy_h1_chunked_done(const hy_h1_chunked_t *d);

#endif
