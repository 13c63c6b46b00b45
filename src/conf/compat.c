/* compat.c — every nginx (1.22) directive that hayate's module tables do not define, so that an nginx config
 * gets a precise answer instead of "unknown directive": pure tuning knobs are accepted with a [warn]
 * (HY_COMPAT_WARN), features hayate lacks are an error naming the issue that brings them (HY_COMPAT_NOT_YET).
 *
 * The table is sorted by name (strcmp order) so hy_compat_find is a binary search; the unit test
 * tests/unit/conf/directives_doc_test.c checks the order, checks that no name is also in a module table, and
 * checks docs/directives.md against both. When a module starts implementing a directive, delete its line here.
 * Names were taken from the directives Debian's nginx 1.22 binary knows, plus the dynamic modules it ships
 * separately (geoip, image_filter, perl, xslt, mail, stream) from nginx's documentation. */
#include <string.h>
#include "compat.h"

const hy_compat_t hy_compat_directives[] = {
    {"accept_mutex_delay", HY_COMPAT_WARN, "no accept mutex"},
    {"aio", HY_COMPAT_WARN, "no AIO: sendfile and read()"},
    {"aio_write", HY_COMPAT_WARN, "no AIO"},
    {"connection_pool_size", HY_COMPAT_WARN, "arena sizes are automatic"},
    {"create_full_put_path", HY_COMPAT_NOT_YET, "not planned"},
    {"dav_access", HY_COMPAT_NOT_YET, "not planned"},
    {"dav_methods", HY_COMPAT_NOT_YET, "not planned"},
    {"debug_points", HY_COMPAT_WARN, "debugging aid"},
    {"directio", HY_COMPAT_WARN, "no O_DIRECT"},
    {"directio_alignment", HY_COMPAT_WARN, "no O_DIRECT"},
    {"epoll_events", HY_COMPAT_WARN, "epoll batch size is fixed"},
    {"fastcgi_send_lowat", HY_COMPAT_WARN, "not supported on Linux (nginx warns and ignores it too)"},
    {"flv", HY_COMPAT_NOT_YET, "not planned"},
    {"geoip_city", HY_COMPAT_NOT_YET, "not planned"},
    {"geoip_country", HY_COMPAT_NOT_YET, "not planned"},
    {"geoip_org", HY_COMPAT_NOT_YET, "not planned"},
    {"geoip_proxy", HY_COMPAT_NOT_YET, "not planned"},
    {"geoip_proxy_recursive", HY_COMPAT_NOT_YET, "not planned"},
    {"grpc_bind", HY_COMPAT_NOT_YET, "gRPC proxy"},
    {"grpc_buffer_size", HY_COMPAT_NOT_YET, "gRPC proxy"},
    {"grpc_connect_timeout", HY_COMPAT_NOT_YET, "gRPC proxy"},
    {"grpc_hide_header", HY_COMPAT_NOT_YET, "gRPC proxy"},
    {"grpc_ignore_headers", HY_COMPAT_NOT_YET, "gRPC proxy"},
    {"grpc_intercept_errors", HY_COMPAT_NOT_YET, "gRPC proxy"},
    {"grpc_next_upstream", HY_COMPAT_NOT_YET, "gRPC proxy"},
    {"grpc_next_upstream_timeout", HY_COMPAT_NOT_YET, "gRPC proxy"},
    {"grpc_next_upstream_tries", HY_COMPAT_NOT_YET, "gRPC proxy"},
    {"grpc_pass", HY_COMPAT_NOT_YET, "gRPC proxy"},
    {"grpc_pass_header", HY_COMPAT_NOT_YET, "gRPC proxy"},
    {"grpc_read_timeout", HY_COMPAT_NOT_YET, "gRPC proxy"},
    {"grpc_send_timeout", HY_COMPAT_NOT_YET, "gRPC proxy"},
    {"grpc_set_header", HY_COMPAT_NOT_YET, "gRPC proxy"},
    {"grpc_socket_keepalive", HY_COMPAT_NOT_YET, "gRPC proxy"},
    {"grpc_ssl_certificate", HY_COMPAT_NOT_YET, "gRPC proxy"},
    {"grpc_ssl_certificate_key", HY_COMPAT_NOT_YET, "gRPC proxy"},
    {"grpc_ssl_ciphers", HY_COMPAT_NOT_YET, "gRPC proxy"},
    {"grpc_ssl_conf_command", HY_COMPAT_NOT_YET, "gRPC proxy"},
    {"grpc_ssl_crl", HY_COMPAT_NOT_YET, "gRPC proxy"},
    {"grpc_ssl_name", HY_COMPAT_NOT_YET, "gRPC proxy"},
    {"grpc_ssl_password_file", HY_COMPAT_NOT_YET, "gRPC proxy"},
    {"grpc_ssl_protocols", HY_COMPAT_NOT_YET, "gRPC proxy"},
    {"grpc_ssl_server_name", HY_COMPAT_NOT_YET, "gRPC proxy"},
    {"grpc_ssl_session_reuse", HY_COMPAT_NOT_YET, "gRPC proxy"},
    {"grpc_ssl_trusted_certificate", HY_COMPAT_NOT_YET, "gRPC proxy"},
    {"grpc_ssl_verify", HY_COMPAT_NOT_YET, "gRPC proxy"},
    {"grpc_ssl_verify_depth", HY_COMPAT_NOT_YET, "gRPC proxy"},
    {"gzip_hash", HY_COMPAT_WARN, "zlib tuning (undocumented in nginx)"},
    {"gzip_no_buffer", HY_COMPAT_WARN, "undocumented in nginx"},
    {"gzip_window", HY_COMPAT_WARN, "zlib tuning (undocumented in nginx)"},
    {"http2_max_concurrent_pushes", HY_COMPAT_NOT_YET, "HTTP/2"},
    {"http2_pool_size", HY_COMPAT_WARN, "HTTP/2 buffer tuning"},
    {"http2_push", HY_COMPAT_NOT_YET, "HTTP/2"},
    {"http2_push_preload", HY_COMPAT_NOT_YET, "HTTP/2"},
    {"http2_streams_index_size", HY_COMPAT_WARN, "HTTP/2 buffer tuning"},
    {"image_filter", HY_COMPAT_NOT_YET, "not planned"},
    {"image_filter_buffer", HY_COMPAT_NOT_YET, "not planned"},
    {"image_filter_interlace", HY_COMPAT_NOT_YET, "not planned"},
    {"image_filter_jpeg_quality", HY_COMPAT_NOT_YET, "not planned"},
    {"image_filter_sharpen", HY_COMPAT_NOT_YET, "not planned"},
    {"image_filter_transparency", HY_COMPAT_NOT_YET, "not planned"},
    {"image_filter_webp_quality", HY_COMPAT_NOT_YET, "not planned"},
    {"load_module", HY_COMPAT_WARN, "no dynamic modules; directives of the module are checked one by one"},
    {"lock_file", HY_COMPAT_WARN, "no accept mutex"},
    {"mail", HY_COMPAT_NOT_YET, "mail proxy; not planned"},
    {"map_hash_bucket_size", HY_COMPAT_WARN, "hash sizing is automatic"},
    {"map_hash_max_size", HY_COMPAT_WARN, "hash sizing is automatic"},
    {"min_delete_depth", HY_COMPAT_NOT_YET, "not planned"},
    {"mp4", HY_COMPAT_NOT_YET, "not planned"},
    {"mp4_buffer_size", HY_COMPAT_NOT_YET, "not planned"},
    {"mp4_max_buffer_size", HY_COMPAT_NOT_YET, "not planned"},
    {"mp4_start_key_frame", HY_COMPAT_NOT_YET, "not planned"},
    {"output_buffers", HY_COMPAT_WARN, "buffer sizes are automatic"},
    {"perl", HY_COMPAT_NOT_YET, "not planned"},
    {"perl_modules", HY_COMPAT_NOT_YET, "not planned"},
    {"perl_require", HY_COMPAT_NOT_YET, "not planned"},
    {"perl_set", HY_COMPAT_NOT_YET, "not planned"},
    {"postpone_gzipping", HY_COMPAT_WARN, "undocumented in nginx"},
    {"postpone_output", HY_COMPAT_WARN, "buffer sizes are automatic"},
    {"proxy_headers_hash_bucket_size", HY_COMPAT_WARN, "hash sizing is automatic"},
    {"proxy_headers_hash_max_size", HY_COMPAT_WARN, "hash sizing is automatic"},
    {"proxy_send_lowat", HY_COMPAT_WARN, "not supported on Linux (nginx warns and ignores it too)"},
    {"read_ahead", HY_COMPAT_WARN, "kernel default read-ahead"},
    {"request_pool_size", HY_COMPAT_WARN, "arena sizes are automatic"},
    {"send_lowat", HY_COMPAT_WARN, "not supported on Linux (nginx warns and ignores it too)"},
    {"slice", HY_COMPAT_NOT_YET, "not planned"},
    {"ssi_ignore_recycled_buffers", HY_COMPAT_WARN, "undocumented in nginx"},
    {"ssl_engine", HY_COMPAT_NOT_YET, "TLS"},
    {"stream", HY_COMPAT_NOT_YET, "TCP/UDP proxy; not planned"},
    {"thread_pool", HY_COMPAT_WARN, "no thread pools (no blocking file I/O offload)"},
    {"timer_resolution", HY_COMPAT_WARN, "time is cached per loop iteration"},
    {"worker_aio_requests", HY_COMPAT_WARN, "no AIO"},
    {"worker_rlimit_core", HY_COMPAT_WARN, "core-dump size is left to the environment"},
    {"xml_entities", HY_COMPAT_NOT_YET, "not planned"},
    {"xslt_last_modified", HY_COMPAT_NOT_YET, "not planned"},
    {"xslt_param", HY_COMPAT_NOT_YET, "not planned"},
    {"xslt_string_param", HY_COMPAT_NOT_YET, "not planned"},
    {"xslt_stylesheet", HY_COMPAT_NOT_YET, "not planned"},
    {"xslt_types", HY_COMPAT_NOT_YET, "not planned"},
    {NULL, 0, NULL},
};

/* Entries before the {NULL} terminator. */
#define COMPAT_COUNT (sizeof(hy_compat_directives) / sizeof(hy_compat_directives[0]) - 1)

/* strcmp order between the counted string (name, len) and a NUL-terminated table key. */
static int compat_cmp(const char *name, size_t len, const char *key)
{
    size_t klen = strlen(key);
    int c = memcmp(name, key, len < klen ? len : klen);
    if (c != 0)
        return c;
    return len < klen ? -1 : (len > klen ? 1 : 0);
}

const hy_compat_t *hy_compat_find(const char *name, size_t len)
{
    if (name == NULL || len == 0 || memchr(name, '\0', len) != NULL)
        return NULL;
    size_t lo = 0, hi = COMPAT_COUNT;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        int c = compat_cmp(name, len, hy_compat_directives[mid].name);
        if (c == 0)
            return &hy_compat_directives[mid];
        if (c < 0)
            hi = mid;
        else
            lo = mid + 1;
    }
    return NULL;
}

