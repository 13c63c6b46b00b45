/* splice.h — a response body made of the filter's own bytes and the bodies of subrequests, in order (the part of
 * nginx's postpone filter that SSI's include and the addition module need). Used by ssi.c and addition.c.
 *
 * The contract:
 *   - A splice belongs to one request and one body filter module (m). It is a list of parts: ready bytes, or a
 *     subrequest started with HY_SR_OUTPUT (http/subrequest.h) whose body takes its place once it ended.
 *   - The module appends its bytes with hy_splice_text / hy_splice_queue and subrequests with hy_splice_include,
 *     in output order, and calls hy_splice_end_input once it will append nothing more.
 *   - In its body filter, after appending, the module calls hy_splice_body: the ready prefix goes into req->body
 *     for the filters after it; on the final send, when parts are still pending, the rest is streamed from then
 *     on (hy_req_filter_hold / hy_req_filter_send): each subrequest's body as soon as it ended and the protocol
 *     took the previous batch. While the parent's producer still streams (non-final sends), bytes after a pending
 *     subrequest wait for the producer's next send.
 *   - The module's proceed callback (given at creation; it finds its splice through its request context) must
 *     call hy_splice_proceed.
 *   - When a subrequest ended: part_done (hy_splice_include's) may replace part->q (its body, already moved there),
 *     e.g. by a stub; then the splice's `changed` hook (may append more: SSI resumes a page waiting on it), then
 *     the ready bytes go out if the final send passed. When `changed` returns false the request is aborted
 *     (hy_req_ops(req)->abort) as the last thing done.
 *   - Everything lives in the request's arena; subrequests still running when it is cleared go with it. */
#ifndef HY_FILTERS_SPLICE_H
#define HY_FILTERS_SPLICE_H

#include "../http/request.h"
#include "../http/subrequest.h"

typedef struct hy_splice hy_splice_t;
typedef struct hy_splice_part hy_splice_part_t;

typedef void (*hy_splice_part_cb)(hy_splice_part_t *part, hy_req_t *sr, void *data);

struct hy_splice_part {
    hy_splice_part_t *next;
    hy_splice_t *splice;
    hy_outq_t q;     /* ready bytes; a subrequest's body once it ended */
    bool pending;    /* a subrequest still running */
    int status;      /* the subrequest's status once it ended (0: aborted before answering) */
    hy_splice_part_cb done;
    void *data;
};

struct hy_splice {
    hy_req_t *req;
    const hy_module_t *m;
    hy_req_proceed_cb proceed;
    hy_splice_part_t *head, *tail;
    size_t pending;
    bool input_done, held, draining, finished, cleanup;
    bool (*changed)(hy_splice_t *s, void *data); /* after a subrequest ended (optional); false: the response
                                                   * cannot go on (the splice aborts it) */
    void *data;
};

hy_splice_t *hy_splice_create(hy_req_t *req, const hy_module_t *m, hy_req_proceed_cb proceed);
/** Append a copy of n bytes. */
void hy_splice_text(hy_splice_t *s, const char *p, size_t n);
/** Append the segments of q (moved). */
void hy_splice_queue(hy_splice_t *s, hy_outq_t *q);
/** Start a subrequest for uri?args (HY_SR_OUTPUT) whose body comes next; done (may be NULL) is called when it
 * ended. Returns the part, or NULL when it could not be started. */
hy_splice_part_t *hy_splice_include(hy_splice_t *s, hy_str_t uri, hy_str_t args, hy_splice_part_cb done,
                                    void *data);
/** The module appends nothing more. */
void hy_splice_end_input(hy_splice_t *s);
/** True when every part has gone out or is ready and the input ended. */
bool hy_splice_complete(const hy_splice_t *s);
/** Bytes are ready to go out at the head. */
bool hy_splice_has_ready(const hy_splice_t *s);
/** The head is a subrequest still running. */
bool hy_splice_waits(const hy_splice_t *s);
/** From the module's body filter (see above). */
void hy_splice_body(hy_splice_t *s, bool is_final);
/** From the module's proceed callback. */
void hy_splice_proceed(hy_splice_t *s);
/** Send what is ready when the final send passed (after the module appended outside its body filter). */
void hy_splice_push(hy_splice_t *s);

#endif
