/* gzip_static.c — precompressed variants as a content handler (see gzip_static.h). The variant is chosen by
 * hy_gzip_static_open (filters/gzip.c: it shares the gzip module's configuration and per-request state, so the
 * gzip filter adds Vary and leaves the body alone). As nginx 1.22, the response has no Accept-Ranges, so the
 * range filter sends it whole. */
#include "gzip_static.h"
#include "gzip.h"
#include "../http/phases.h"
#include "../http/path.h"
#include "../http/open_file_cache.h"

static int gzip_static_content_phase(hy_req_t *req)
{
    if (req->method_id != HY_M_GET && req->method_id != HY_M_HEAD)
        return HY_DECLINED;
    if (req->uri.len == 0 || req->uri.ptr[req->uri.len - 1] == '/' || !hy_gzip_static_enabled(req))
        return HY_DECLINED;
    size_t plen;
    char *path = hy_http_map_uri_to_path(req, req->loc, req->uri, &plen);
    hy_file_t *f = hy_gzip_static_open(req, path, plen, hy_ofc_open);
    if (f == NULL)
        return HY_DECLINED;
    hy_http_send_file(req, f);
    return HY_DONE;
}

static int postconfiguration(hy_conf_t *cf)
{
    return hy_http_phase_add(cf, HY_PHASE_CONTENT, gzip_static_content_phase);
}

hy_module_t hy_http_gzip_static_module = {
    .name = "http_gzip_static",
    .postconfiguration = postconfiguration,
};
