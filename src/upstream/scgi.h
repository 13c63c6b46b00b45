/* scgi.h — the SCGI codec for the upstream engine (scgi_pass), and the response side it shares with uwsgi: a CGI
 * head (Status:, or an HTTP status line) then the body up to Content-Length or the connection's close. */
#ifndef HY_UPSTREAM_SCGI_H
#define HY_UPSTREAM_SCGI_H

#include "upstream.h"
#include "params.h"

extern const hy_upstream_codec_t hy_upstream_scgi_codec;

/** Prepare u for the SCGI codec (uwsgi: its modifiers) with the parameters to send. */
void hy_upstream_scgi_init(hy_ureq_t *u, const hy_uparams_t *params, bool pass_headers);

/* The codec state of SCGI and uwsgi (u->codec_state). */
typedef struct hy_upstream_raw {
    int64_t left; /* body bytes left when the head gave a Content-Length, else -1 */
    bool no_body;
    int mod1, mod2;             /* uwsgi_modifier1/2 */
    const hy_uparams_t *params; /* evaluated into u->headers as the request is sent */
    bool pass_headers;
    hy_str_t tail;              /* uwsgi_string: bytes after the vars, inside the packet's size */
} hy_upstream_raw_t;

/* The response side of SCGI and uwsgi (codec functions). */
int hy_upstream_raw_process_head(hy_ureq_t *u, hy_buf_t *in);
int hy_upstream_raw_process_body(hy_ureq_t *u, hy_buf_t *in, bool eof, hy_outq_t *out, bool *done);
bool hy_upstream_raw_reusable(const hy_ureq_t *u);
void hy_upstream_raw_reinit(hy_ureq_t *u);
/** The request body as it is (no framing). */
void hy_upstream_raw_frame_body(hy_ureq_t *u, hy_outq_t *out, const char *p, size_t n, bool last);

#endif
