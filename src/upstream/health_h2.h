/* health_h2.h — the small HTTP/2 client of an active health check's probe (proxy_http_version 2; health.c runs
 * the probe's life cycle: connect, TLS, timers, the verdict). One exchange on one connection, one stream (1):
 * hy_hc_h2_request writes the connection's first bytes and the GET; hy_hc_h2_frames reads the frames the
 * upstream sends until the stream ends; hy_hc_h2_response gives the response to judge. HPACK is libnghttp2's
 * (deflater for the request, inflater for the response head); the framing is ours.
 *
 * State of a hy_hc_h2_t: head pending (1xx heads are skipped, a header block may span HEADERS + CONTINUATION
 * frames), then head done (status and fields known) while DATA fills the body examined, then done (END_STREAM,
 * or HY_HC_BODY_MAX bytes of body kept). Trailers are decoded and ignored.
 *
 * Ownership: the caller allocates one with hy_hc_h2_new and frees it with hy_hc_h2_free; the exchange owns its
 * HPACK inflater and its body buffer (malloc'd on the first DATA frame, HY_HC_BODY_MAX bytes), which
 * hy_hc_h2_free releases. The caller owns the socket; the codec only consumes its input and queues ACKs on its
 * outq. */
#ifndef HY_UPSTREAM_HEALTH_H2_H
#define HY_UPSTREAM_HEALTH_H2_H

#include <stdbool.h>
#include <stddef.h>
#include "../event/sock.h"
#include "../http/request.h"

#define HY_HC_BODY_MAX (256 * 1024) /* the response body a check examines (both protocols), as NGINX Plus */
#define HY_HC_HEAD_MAX (32 * 1024)  /* a response head must fit (both protocols) */
#define HY_HC_H2_FRAME_MAX 16384    /* SETTINGS_MAX_FRAME_SIZE's default: we announce no other; a larger frame fails */
#define HY_HC_H2_READ_LIMIT (4 * (HY_HC_H2_FRAME_MAX + 9)) /* the probe's sock->read_limit for HTTP/2 */

typedef struct hy_hc_h2 hy_hc_h2_t;

/** A new exchange (head pending, no body buffer yet), or NULL when out of memory. */
hy_hc_h2_t *hy_hc_h2_new(void);
/** Free the exchange, its inflater and its body buffer. NULL is accepted. */
void hy_hc_h2_free(hy_hc_h2_t *h);

/** Write into out (cap >= 4096) the connection preface, our SETTINGS (no push, stream windows large enough for
 * the body examined) with a WINDOW_UPDATE to match on the connection, and one HEADERS frame with END_STREAM on
 * stream 1: GET uri (1500 bytes at most), :authority host (400 at most), :scheme "https" or "http".
 * Returns the length written, 0 when HPACK encoding failed. */
size_t hy_hc_h2_request(hy_str_t uri, hy_str_t host, bool https, char *out, size_t cap);

/** Process the complete frames in s->input (consumed from it; an incomplete frame is left for the next call).
 * SETTINGS and PING are answered with their ACKs, queued on s->outq (*wrote set true: the caller writes them).
 * *done is set true when the stream ended or the body examined is full (the remaining input is not read).
 * Returns NULL, or why the check fails (a static string or one formatted into buf of cap bytes): a malformed
 * frame or header block, a frame larger than HY_HC_H2_FRAME_MAX, a head larger than HY_HC_HEAD_MAX, RST_STREAM
 * of stream 1, a GOAWAY that excludes it, a HPACK error, out of memory. */
const char *hy_hc_h2_frames(hy_hc_h2_t *h, hy_sock_t *s, bool *done, bool *wrote, char *buf, size_t cap);

/** The response: false while no final head was received. Else true with its status, its fields (*nh of them,
 * pseudo-fields left out) and the body examined (at most HY_HC_BODY_MAX bytes; {NULL, 0} when no DATA came),
 * all pointing into h: valid until hy_hc_h2_free. */
bool hy_hc_h2_response(const hy_hc_h2_t *h, int *status, const hy_header_t **hs, size_t *nh, hy_str_t *body);

#endif
