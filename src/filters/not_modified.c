/* not_modified.c — conditional requests as nginx's not_modified filter (ngx_http_not_modified_filter_module):
 * for a 200 response with a validator, If-Unmodified-Since / If-Match failing → 412 (the response is replaced
 * through hy_req_filter_finalize, so error_page applies), If-Modified-Since / If-None-Match matching → 304
 * (no body, no Content-Length, no Accept-Ranges). A filter, not part of the static handler, so every content
 * handler's responses (and proxied ones) get it. It runs first in the filter order: its decision sees the
 * strong validators before gzip weakens the ETag. RFC 9110 §13. */
#include <string.h>
#include "not_modified.h"
#include "../core/httpdate.h"

static bool etag_list_match(hy_str_t list, hy_str_t etag, bool weak)
{
    /* If-None-Match uses weak comparison, If-Match strong (RFC 9110 §13.1.1-2) */
    const char *p = list.ptr, *end = list.ptr + list.len;
    while (p < end) {
        while (p < end && (*p == ' ' || *p == '\t' || *p == ','))
            p++;
        if (p >= end)
            break;
        if (*p == '*')
            return true;
        bool is_weak = false;
        if (end - p >= 2 && p[0] == 'W' && p[1] == '/') {
            is_weak = true;
            p += 2;
        }
        const char *s = p;
        if (p < end && *p == '"') {
            p++;
            while (p < end && *p != '"')
                p++;
            if (p < end)
                p++;
        } else {
            while (p < end && *p != ',' && *p != ' ')
                p++;
        }
        size_t n = (size_t)(p - s);
        hy_str_t e = etag;
        if (e.len > 2 && e.ptr[0] == 'W' && e.ptr[1] == '/') {
            if (!weak)
                continue;
            e.ptr += 2, e.len -= 2;
        }
        if ((weak || !is_weak) && n == e.len && memcmp(s, e.ptr, n) == 0)
            return true;
    }
    return false;
}

/* nginx's not_modified filter. Returns 0 to go on, or a status (304/412) to answer. */
static int check_conditions(hy_req_t *req, const hy_http_loc_conf_t *lc)
{
    if (req->h_if_unmodified_since && req->last_modified >= 0) {
        int64_t t = hy_httpdate_parse(req->h_if_unmodified_since->ptr, req->h_if_unmodified_since->len);
        if (t >= 0 && req->last_modified > t)
            return 412;
    }
    if (req->h_if_match && !hy_str_eq(*req->h_if_match, "*") &&
        (req->etag.len == 0 || !etag_list_match(*req->h_if_match, req->etag, false))) /* nginx: "*" always holds */
        return 412;
    if (req->h_if_modified_since || req->h_if_none_match) {
        if (req->h_if_modified_since && !req->h_if_none_match) {
            if (lc->if_modified_since == HY_IMS_OFF || req->last_modified < 0)
                return 0;
            int64_t t = hy_httpdate_parse(req->h_if_modified_since->ptr, req->h_if_modified_since->len);
            if (t < 0)
                return 0;
            if (lc->if_modified_since == HY_IMS_EXACT ? t != req->last_modified : t < req->last_modified)
                return 0;
        }
        if (req->h_if_none_match && (req->etag.len == 0 || !etag_list_match(*req->h_if_none_match, req->etag, true)))
            return 0;
        return 304;
    }
    return 0;
}

static void header_filter(hy_req_t *req)
{
    if (req->status != 200 || req->loc == NULL || req->disable_not_modified)
        return;
    if (!req->h_if_unmodified_since && !req->h_if_match && !req->h_if_modified_since && !req->h_if_none_match)
        return;
    int cond = check_conditions(req, req->loc);
    if (cond == 412) {
        hy_req_filter_finalize(req, 412);
        return;
    }
    if (cond == 304) {
        req->status = 304;
        req->status_line = HY_STR_NULL;
        req->header_only = true;
        req->content_length_n = -1;
        req->accept_ranges = false;
        req->file = NULL;
        hy_outq_clear(&req->body);
    }
}

hy_module_t hy_http_not_modified_module = {
    .name = "http_not_modified",
    .header_filter = header_filter,
};
