/* range.h — Range / If-Range (RFC 9110 §14) with nginx range-filter semantics; multipart/byteranges framing. */
#ifndef HY_HTTP_RANGE_H
#define HY_HTTP_RANGE_H

#include <stddef.h>
#include <stdint.h>
#include <stdbool.h>
#include "../core/str.h"

typedef struct hy_range {
    int64_t start, end; /* inclusive byte positions */
} hy_range_t;

#define HY_RANGE_NOT_SATISFIABLE (-416)

/** Parse a Range header value against a representation of `size` bytes into at most `max` ranges (in request
 * order; overlapping and repeated ranges are kept, as nginx does).
 * Returns n >= 1: ranges to serve (206); 0: ignore the header and send 200 with the full body (unit other than
 * "bytes", an empty "bytes=", more than `max` satisfiable ranges, max <= 0, ranges adding up to more than the
 * representation, or size 0 with a range starting at 0); HY_RANGE_NOT_SATISFIABLE (-416): answer 416 with
 * "Content-Range: bytes * /size" — nginx answers 416 (not 400, not 200) for syntax errors after "bytes=" and for
 * sets in which no range overlaps the representation. Only SP is allowed around numbers, '-' and ','. */
int hy_range_parse(const char *value, size_t len, int64_t size, hy_range_t *out, int max);
/** Upper bound on the number of ranges in a Range value (commas + 1), for sizing the array when max_ranges is
 * unlimited. */
int hy_range_count(const char *value, size_t len);
/** Write one multipart/byteranges part header "\r\n--BOUNDARY\r\nContent-Type: TYPE\r\nContent-Range: bytes
 * S-E/SIZE\r\n\r\n" (no Content-Type line when type is empty). Returns its length (as snprintf: when the
 * result is >= cap the output was truncated and must not be used). */
size_t hy_range_part_header(char *out, size_t cap, const char *boundary, hy_str_t type, const hy_range_t *r,
                            int64_t size);
/** Write the closing "\r\n--BOUNDARY--\r\n"; same return convention as hy_range_part_header. */
size_t hy_range_multipart_end(char *out, size_t cap, const char *boundary);
/** Total Content-Length of a multipart/byteranges body for these n ranges: part headers + range bytes + end. */
int64_t hy_range_multipart_length(const hy_range_t *r, int n, const char *boundary, hy_str_t type, int64_t size);
/** Write "bytes S-E/SIZE" (the single-range Content-Range value) into out; returns length (as snprintf). */
size_t hy_range_content_range(char *out, size_t cap, const hy_range_t *r, int64_t size);
/** If-Range check: true if the Range may be honoured — the value is a strong ETag exactly equal to `etag` (as
 * sent, with quotes; weak tags on either side never match), or an HTTP-date equal to last_modified (< 0: none). */
bool hy_range_if_range_ok(const char *value, size_t len, hy_str_t etag, int64_t last_modified);

#endif
