/* empty_gif.c — nginx's empty_gif: the location's own content handler answers a 1x1 transparent GIF. */
#include "empty_gif.h"
#include "../http/phases.h"

/* GIF89a, 1x1, one-colour global table, graphic control extension marking colour 0 transparent */
static const unsigned char gif[] = {
    'G', 'I', 'F', '8', '9', 'a', 0x01, 0x00, 0x01, 0x00, 0x80, 0x01, 0x00, 0x00, 0x00, 0x00,
    0xff, 0xff, 0xff, 0x21, 0xf9, 0x04, 0x01, 0x00, 0x00, 0x01, 0x00, 0x2c, 0x00, 0x00, 0x00, 0x00,
    0x01, 0x00, 0x01, 0x00, 0x00, 0x02, 0x02, 0x4c, 0x01, 0x00, 0x3b,
};

/* nginx sends this fixed Last-Modified (Mon, 28 Sep 1970 06:00:00 GMT) with the image */
#define EMPTY_GIF_MTIME 23349600

static int empty_gif_handler(hy_req_t *req)
{
    if (req->method_id != HY_M_GET && req->method_id != HY_M_HEAD)
        return 405;
    req->status = 200;
    req->content_type = HY_STR("image/gif");
    req->content_length_n = (int64_t)sizeof(gif);
    req->last_modified = EMPTY_GIF_MTIME;
    if (req->method_id == HY_M_HEAD)
        req->header_only = true;
    else
        hy_outq_push_mem(&req->body, (const char *)gif, sizeof(gif), NULL, NULL);
    hy_req_send(req, true);
    return HY_DONE;
}

static int set_empty_gif(hy_conf_t *cf, const hy_directive_t *d, void *conf)
{
    (void)d;
    (void)conf;
    hy_http_loc_conf_t *lc = cf->loc_conf[hy_http_core_module.index];
    lc->handler = empty_gif_handler;
    return 0;
}

static const hy_directive_t empty_gif_directives[] = {
    {.name = "empty_gif", .ctx = HY_CTX_LOC, .args = HY_ARGS_0, .set = set_empty_gif, .conf = HY_CONF_LOC},
    {0},
};

hy_module_t hy_http_empty_gif_module = {
    .name = "http_empty_gif",
    .directives = empty_gif_directives,
};
