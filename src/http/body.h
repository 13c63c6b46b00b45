/* body.h — reading request bodies, protocol-neutral (nginx's ngx_http_read_client_request_body). A handler asks
 * for the body once, in one of two modes; the protocol (h1 decodes Content-Length or chunked framing; h2 will
 * take DATA frames) hands payload bytes to the core, which buffers, spools or streams them:
 *
 *   HY_BODY_BUFFER  the whole body: kept in memory up to client_body_buffer_size, beyond that (or always, with
 *                   client_body_in_file_only) written to a temp file under client_body_temp_path. `cb` fires
 *                   once, when the body is complete (req->body_in->complete) or on an error.
 *   HY_BODY_STREAM  payload as it arrives: `cb` fires whenever bytes wait in req->body_in->data/data_len; the
 *                   handler takes what it can with hy_req_body_consume() — in the callback or later, followed
 *                   by hy_req_body_resume(). The protocol reads nothing more from the client while bytes wait
 *                   (backpressure: a slow upstream slows the client, memory stays bounded). After the last byte
 *                   is consumed, cb fires once more with complete set and data_len 0. The bytes consumed are
 *                   also copied into mem while they fit in client_body_buffer_size (for $request_body).
 *
 * Errors (malformed framing 400, client_max_body_size 413, client_body_timeout 408, client gone 499) call cb with
 * err != NULL and req->body_in->status set; the handler then finishes the request (hy_req_error(status)). A
 * body no handler asked for is discarded by the protocol (keep-alive survives it). */
#ifndef HY_HTTP_BODY_H
#define HY_HTTP_BODY_H

#include "request.h"

enum hy_body_mode { HY_BODY_BUFFER = 0, HY_BODY_STREAM };

extern const char hy_err_body[]; /* cb's err: the body could not be read; req->body_in->status says why */

typedef void (*hy_req_body_cb)(hy_req_t *req, const char *err);

typedef struct hy_req_body {
    int mode;                 /* enum hy_body_mode */
    hy_req_body_cb cb;
    int64_t received;         /* payload bytes taken from the protocol so far */
    bool complete;            /* every payload byte arrived (and, streaming, was consumed) */
    bool failed;
    int status;               /* on error: 400, 408, 413, 499 */
    /* HY_BODY_BUFFER */
    char *mem;                /* owned (malloc, freed with the request): the body, or its first part before spooling */
    size_t mem_len, mem_cap;
    int fd;                   /* -1, or the temp file holding the whole body (after spooling) */
    char *path;               /* the temp file's name (request pool) */
    bool keep_file;           /* client_body_in_file_only on: the file outlives the request */
    /* HY_BODY_STREAM */
    const char *data;         /* bytes waiting for the handler (borrowed from the protocol's buffer) */
    size_t data_len;
    bool last;                /* data ends the body */
    bool in_cb;               /* cb is running: resume happens when it returns */
    bool mem_dropped;         /* more went by than client_body_buffer_size: mem keeps no copy ($request_body "") */
} hy_req_body_t;

/** Start reading req's body (no body: cb fires at once with complete set). Returns 0; -1 if a reader was already
 * started (a programming error) — except that a body already read whole in HY_BODY_BUFFER mode (mirror reads it
 * first) is delivered again to a second HY_BODY_BUFFER reader: cb replaces the first one's and fires at once.
 * cb may fire before this returns. */
int hy_req_read_body(hy_req_t *req, enum hy_body_mode mode, hy_req_body_cb cb);
/** Streaming: the handler took n bytes of req->body_in->data. */
void hy_req_body_consume(hy_req_t *req, size_t n);
/** Streaming: the handler can take more (after consuming outside the callback). */
void hy_req_body_resume(hy_req_t *req);
/** The body in one piece for $request_body (memory only: empty when spooled to a file, as nginx). A streamed
 * body is kept (copied as it goes by) while it fits in client_body_buffer_size, and given once complete. */
hy_str_t hy_req_body_text(hy_req_t *req);

/** A temp file under dir, named as nginx names them: a 10-digit number, with `levels` (digits per directory, 0 ends
 * the list) directories taken from its tail ("proxy_temp/7/45/0000012457"), created as needed (and dir itself).
 * Returns the fd (read-write, close-on-exec, mode 0600; the caller owns it) and its name in *path (req's pool), or
 * -1 (logged at crit). The file is not removed: the caller unlinks it when it wants. */
int hy_req_temp_open(hy_req_t *req, hy_str_t dir, const int levels[3], char **path);

/* For protocols. */
/** Payload bytes from the protocol; last: they end the body. Returns how many the core took (fewer only while a
 * streaming handler has bytes waiting; the protocol keeps the rest and stops reading until ops->read_body is
 * called again). */
size_t hy_req__body_in(hy_req_t *req, const char *p, size_t n, bool last);
/** The protocol failed to read the body (status: 400, 408, 413, 499). */
void hy_req__body_error(hy_req_t *req, int status);

#endif
