/* splice.c — a body of the filter's own bytes and subrequests' bodies, in order (see splice.h). */
#include <string.h>
#include "splice.h"

hy_splice_t *hy_splice_create(hy_req_t *req, const hy_module_t *m, hy_req_proceed_cb proceed)
{
    hy_splice_t *s = hy_pcalloc(req->pool, sizeof(*s));
    s->req = req;
    s->m = m;
    s->proceed = proceed;
    return s;
}

static void clear_parts(void *arg)
{
    hy_splice_t *s = arg;
    for (hy_splice_part_t *p = s->head; p; p = p->next)
        hy_outq_clear(&p->q);
    s->head = s->tail = NULL;
}

static hy_splice_part_t *add_part(hy_splice_t *s)
{
    hy_splice_part_t *p = hy_pcalloc(s->req->pool, sizeof(*p));
    p->splice = s;
    if (!s->cleanup) { /* release what was never sent */
        s->cleanup = true;
        hy_pool_on_clear(s->req->pool, clear_parts, s);
    }
    if (s->tail)
        s->tail->next = p;
    else
        s->head = p;
    s->tail = p;
    return p;
}

static hy_outq_t *tail_q(hy_splice_t *s)
{
    if (s->tail == NULL || s->tail->pending)
        return &add_part(s)->q;
    return &s->tail->q;
}

void hy_splice_text(hy_splice_t *s, const char *p, size_t n)
{
    if (n)
        hy_outq_push_copy(tail_q(s), p, n);
}

void hy_splice_queue(hy_splice_t *s, hy_outq_t *q)
{
    if (!hy_outq_empty(q))
        hy_outq_move(tail_q(s), q);
}

static void on_done(hy_req_t *parent, hy_req_t *sr, void *data)
{
    (void)parent;
    hy_splice_part_t *p = data;
    hy_splice_t *s = p->splice;
    hy_outq_move(&p->q, &sr->sr->out);
    p->status = sr->status;
    p->pending = false;
    s->pending--;
    if (p->done)
        p->done(p, sr, p->data);
    if (s->changed && !s->changed(s, s->data)) {
        s->finished = true;
        hy_req_ops(s->req)->abort(s->req); /* last: the request may be gone after it */
        return;
    }
    hy_splice_push(s);
}

hy_splice_part_t *hy_splice_include(hy_splice_t *s, hy_str_t uri, hy_str_t args, hy_splice_part_cb done,
                                    void *data)
{
    hy_splice_part_t *p = add_part(s);
    p->pending = true;
    p->done = done;
    p->data = data;
    s->pending++;
    if (hy_subrequest(s->req, uri, args, HY_SR_OUTPUT, on_done, p) == NULL) {
        p->pending = false;
        s->pending--;
        return NULL;
    }
    return p;
}

void hy_splice_end_input(hy_splice_t *s)
{
    s->input_done = true;
}

bool hy_splice_complete(const hy_splice_t *s)
{
    return s->input_done && s->pending == 0;
}

bool hy_splice_has_ready(const hy_splice_t *s)
{
    return s->head && !s->head->pending && !hy_outq_empty(&s->head->q);
}

bool hy_splice_waits(const hy_splice_t *s)
{
    return s->head && s->head->pending;
}

/* the ready prefix into out */
static void take(hy_splice_t *s, hy_outq_t *out)
{
    while (s->head && !s->head->pending) {
        hy_splice_part_t *p = s->head;
        hy_outq_move(out, &p->q);
        s->head = p->next;
        if (s->head == NULL)
            s->tail = NULL;
    }
}

void hy_splice_body(hy_splice_t *s, bool is_final)
{
    take(s, &s->req->body);
    if (!is_final || s->finished)
        return;
    if (hy_splice_complete(s)) {
        s->finished = true;
        return;
    }
    s->held = true;
    s->draining = true; /* this send's proceed comes when the protocol took it */
    hy_req_filter_hold(s->req, s->proceed);
}

void hy_splice_push(hy_splice_t *s)
{
    if (!s->held || s->draining || s->finished)
        return;
    hy_req_t *req = s->req;
    take(s, &req->body);
    if (hy_splice_complete(s)) {
        s->finished = true;
        hy_req_filter_send(req, s->m, true, NULL);
    } else if (!hy_outq_empty(&req->body)) {
        s->draining = true;
        hy_req_filter_send(req, s->m, false, s->proceed);
    }
}

void hy_splice_proceed(hy_splice_t *s)
{
    s->draining = false;
    hy_splice_push(s);
}
