/* proxy_url_test.c — proxy_pass URLs (hy_proxy_parse_url: host, port, $proxy_host, URI part, unix sockets, IPv6
 * literals, what is refused) and the one-peer group a proxy_pass with variables makes for an address literal. */
#include <stdlib.h>
#include <arpa/inet.h>
#include "../harness.h"
#include "core/mem.h"
#include "handlers/proxy_conf.h"

static hy_proxy_url_t pu;

static int parse(const char *url)
{
    return hy_proxy_parse_url((hy_str_t){(char *)url, strlen(url)}, &pu);
}

static void test_urls(void)
{
    is_int(parse("http://127.0.0.1:8080/app/x?y"), 0);
    is_strn(pu.host.ptr, pu.host.len, "127.0.0.1");
    is_int(pu.port, 8080);
    ok(pu.explicit_port);
    is_strn(pu.host_header.ptr, pu.host_header.len, "127.0.0.1:8080");
    is_strn(pu.port_text.ptr, pu.port_text.len, "8080");
    ok(pu.has_uri);
    is_strn(pu.uri.ptr, pu.uri.len, "/app/x?y");
    is_strn(pu.prefix.ptr, pu.prefix.len, "http://127.0.0.1:8080");

    is_int(parse("HTTP://backend"), 0); /* the scheme is caseless; port 80 implied, no URI */
    is_strn(pu.host.ptr, pu.host.len, "backend");
    is_int(pu.port, 80);
    ok(!pu.explicit_port);
    is_strn(pu.host_header.ptr, pu.host_header.len, "backend");
    is_strn(pu.port_text.ptr, pu.port_text.len, "80");
    ok(!pu.has_uri);

    is_int(parse("http://b:80/"), 0); /* an explicit :80 is not in $proxy_host */
    is_strn(pu.host_header.ptr, pu.host_header.len, "b");
    ok(pu.explicit_port);
    is_int(parse("http://b?x=1"), 0);
    is_strn(pu.uri.ptr, pu.uri.len, "?x=1");

    is_int(parse("http://[::1]:81/u"), 0);
    is_strn(pu.host.ptr, pu.host.len, "[::1]");
    is_int(pu.port, 81);
    is_strn(pu.host_header.ptr, pu.host_header.len, "[::1]:81");
    is_int(parse("http://[::1]"), 0);
    is_int(pu.port, 80);

    is_int(parse("http://unix:/run/app.sock"), 0);
    is_strn(pu.host.ptr, pu.host.len, "unix:/run/app.sock");
    is_strn(pu.host_header.ptr, pu.host_header.len, "localhost");
    ok(!pu.has_uri);
    is_int(parse("http://unix:/run/app.sock:/api/"), 0);
    is_strn(pu.host.ptr, pu.host.len, "unix:/run/app.sock");
    ok(pu.has_uri);
    is_strn(pu.uri.ptr, pu.uri.len, "/api/");
    is_int(parse("http://unix:"), -1); /* "unix:" and nothing: not more than 5 bytes of host */

    is_int(parse("https://b"), 0); /* TLS: port 443 implied and not in $proxy_host */
    ok(pu.is_tls);
    is_int(pu.port, 443);
    is_strn(pu.host_header.ptr, pu.host_header.len, "b");
    is_int(parse("https://b:8443/x"), 0);
    ok(pu.is_tls && pu.port == 8443);
    is_strn(pu.host_header.ptr, pu.host_header.len, "b:8443");

    const char *bad[] = {"ftp://x", "http://", "http:///a", "http://?a", "http://[::1/",
                         "http://[::1]x/", "http://:80/", "http://h:0/", "http://h:65536/", "http://h:x/"};
    for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++)
        if (!is_int(parse(bad[i]), -1))
            printf("# %s\n", bad[i]);
}

static void test_literal_group(void)
{
    hy_req_t req = {.pool = hy_pool_create(4096)};
    hy_upstream_group_t *g;
    parse("http://127.0.0.1:8080/");
    g = hy_proxy_group_literal(&req, &pu);
    if (ok(g != NULL && g->npeers == 1 && g->implicit)) {
        is_strn(g->peers[0].name.ptr, g->peers[0].name.len, "127.0.0.1:8080");
        is_int(g->peers[0].sa.ss_family, AF_INET);
        is_int(ntohs(((struct sockaddr_in *)&g->peers[0].sa)->sin_port), 8080);
    }
    parse("http://[::1]:9/");
    g = hy_proxy_group_literal(&req, &pu);
    if (ok(g != NULL))
        is_strn(g->peers[0].name.ptr, g->peers[0].name.len, "[::1]:9");
    parse("http://unix:/tmp/x.sock:/");
    g = hy_proxy_group_literal(&req, &pu);
    if (ok(g != NULL)) {
        is_int(g->peers[0].sa.ss_family, AF_UNIX);
        is_strn(g->peers[0].name.ptr, g->peers[0].name.len, "unix:/tmp/x.sock");
    }
    parse("http://backend.example/"); /* a name, not a literal: the caller resolves or fails */
    ok(hy_proxy_group_literal(&req, &pu) == NULL);
    char longu[300] = "http://unix:/";
    memset(longu + strlen(longu), 'x', 200);
    parse(longu);
    ok(hy_proxy_group_literal(&req, &pu) == NULL); /* does not fit sun_path */
    char longh[300] = "http://";
    memset(longh + 7, 'a', 200);
    parse(longh);
    ok(hy_proxy_group_literal(&req, &pu) == NULL);
    hy_pool_destroy(req.pool);
}

int main(void)
{
    subtest("proxy_pass URLs", test_urls);
    subtest("a literal address is a one-peer group", test_literal_group);
    return done_testing();
}
