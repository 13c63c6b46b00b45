/* server_name_test.c — virtual server selection by Host on configurations built by the real parser and modules
 * (hy_cycle_load). Rules: https://nginx.org/en/docs/http/server_names.html and
 * https://nginx.org/en/docs/http/request_processing.html */
#include <stdlib.h>
#include <unistd.h>
#include <fcntl.h>
#include "../harness.h"
#include "process/process.h"
#include "http/core.h"

static char tmpdir[64];

static hy_cycle_t *load(const char *http_body, bool quiet)
{
    char path[128];
    snprintf(path, sizeof(path), "%s/test.conf", tmpdir);
    FILE *f = fopen(path, "w");
    if (f == NULL)
        return NULL;
    fprintf(f, "events {}\nhttp {\n%s\n}\n", http_body);
    fclose(f);
    char prefix[80];
    snprintf(prefix, sizeof(prefix), "%s/", tmpdir);
    hy_opts_t opts = {.prefix = prefix, .conf_file = path, .quiet = true};
    int saved = -1;
    if (quiet) {
        fflush(stderr);
        saved = dup(2);
        int devnull = open("/dev/null", O_WRONLY);
        dup2(devnull, 2);
        close(devnull);
    }
    hy_cycle_t *c = hy_cycle_load(&opts);
    if (quiet) {
        fflush(stderr);
        dup2(saved, 2);
        close(saved);
    }
    return c;
}

static hy_http_addr_t *addr_for(hy_cycle_t *c, const char *text)
{
    hy_http_main_conf_t *m = hy_http_main(c);
    if (m == NULL || m->addrs == NULL)
        return NULL;
    hy_http_addr_t *a = m->addrs->elts;
    for (size_t i = 0; i < m->addrs->nelts; i++)
        if (strcmp(a[i].spec.text, text) == 0)
            return &a[i];
    return NULL;
}

/* the first server_name of the chosen server (as written in the config, lower-cased), or "(null)" */
static const char *pick(hy_http_addr_t *a, const char *host)
{
    static char buf[256];
    hy_http_srv_conf_t *s = hy_http_find_server(a, host, strlen(host), NULL);
    if (s == NULL)
        return "(null)";
    if (s->server_names == NULL || s->server_names->nelts == 0)
        return "(unnamed)";
    /* every test server has a "tag" exact name first: "sN" */
    hy_server_name_t *sn = s->server_names->elts;
    snprintf(buf, sizeof(buf), "%.*s", (int)sn[0].name.len, sn[0].name.ptr);
    return buf;
}

static const char *conf =
    "server { listen 127.0.0.1:18181; server_name s0 default.test; }\n"
    "server { listen 127.0.0.1:18181; server_name s1 *.example.com; }\n"
    "server { listen 127.0.0.1:18181; server_name s2 *.www.example.com; }\n"
    "server { listen 127.0.0.1:18181; server_name s3 .example.org; }\n"
    "server { listen 127.0.0.1:18181; server_name s4 www.example.*; }\n"
    "server { listen 127.0.0.1:18181; server_name s5 \"~^www\\d+\\.example\\.net$\"; }\n"
    "server { listen 127.0.0.1:18181; server_name s6 exact.example.com; }\n"
    "server { listen 127.0.0.1:18181; server_name s7 ~^.*\\.example\\.com$ ~^regex\\.; }\n"
    "server { listen 127.0.0.1:18181; server_name s8 www.example.com; }\n"
    "server { listen 127.0.0.1:18181; server_name s9 mail.*; }\n"
    "server { listen 127.0.0.1:18181; server_name s10 mail.example.*; }\n"
    "server { listen 127.0.0.1:18181; server_name s11 ~^mail\\.; }\n"
    "server { listen 127.0.0.1:18181; server_name s12 Upper.Example.NET; }\n"
    /* second address: the default_server is not the first */
    "server { listen 127.0.0.1:18182; server_name t0 *.example.com one.test; }\n"
    "server { listen 127.0.0.1:18182 default_server; server_name t1 two.test; }\n"
    "server { listen 127.0.0.1:18182; server_name t2 three.test; }\n"
    /* third address: a single server */
    "server { listen 127.0.0.1:18183; server_name u0 only.test; }\n"
    /* a server on two addresses */
    "server { listen 127.0.0.1:18184; listen 127.0.0.1:18185; server_name v0 both.test; }\n"
    "server { listen 127.0.0.1:18185; server_name v1 second.test; }\n";

static void test_names(void)
{
    hy_cycle_t *c = load(conf, false);
    ok(c != NULL);
    if (c == NULL)
        return;
    hy_http_addr_t *a = addr_for(c, "127.0.0.1:18181");
    ok(a != NULL);
    if (a == NULL)
        return;
    is_int(a->servers->nelts, 13);
    /* exact */
    is_str(pick(a, "default.test"), "s0");
    is_str(pick(a, "www.example.com"), "s8");   /* exact beats *.example.com and www.example.* */
    is_str(pick(a, "exact.example.com"), "s6"); /* exact beats an earlier wildcard */
    is_str(pick(a, "upper.example.net"), "s12"); /* names are lower-cased at configuration */
    /* leading wildcards */
    is_str(pick(a, "a.example.com"), "s1");
    is_str(pick(a, "a.b.example.com"), "s1");  /* "*" may span several labels */
    is_str(pick(a, "x.www.example.com"), "s2"); /* the longest wildcard wins */
    is_str(pick(a, "example.com"), "s0");       /* "*.example.com" does not match "example.com" */
    is_str(pick(a, "badexample.com"), "s0");    /* matches only on a dot border */
    /* ".example.org" matches the name itself and any subdomain */
    is_str(pick(a, "example.org"), "s3");
    is_str(pick(a, "www.example.org"), "s3");
    is_str(pick(a, "a.b.example.org"), "s3");
    is_str(pick(a, "xexample.org"), "s0");
    /* trailing wildcards */
    is_str(pick(a, "www.example.net"), "s4");   /* trailing wildcard beats the regex s5 */
    is_str(pick(a, "www.example"), "s0");       /* needs something after the dot */
    is_str(pick(a, "mail.example.net"), "s10"); /* longest trailing wildcard */
    is_str(pick(a, "mail.example.org"), "s3");  /* a leading wildcard beats a trailing one */
    is_str(pick(a, "mail.other.org"), "s9");    /* beats the regex s11 */
    /* regex, in config order, after the wildcards */
    is_str(pick(a, "www12.example.net"), "s5");
    is_str(pick(a, "www1.example.netx"), "s0");
    is_str(pick(a, "regex.test"), "s7");        /* second name of s7 */
    /* leading wildcard beats regex: s7's regex also matches "a.example.com" but s1 wins (checked above) */
    /* unknown or missing host: the default server (the first one here) */
    is_str(pick(a, "unknown.host"), "s0");
    is_str(pick(a, ""), "s0");
    ok(hy_http_find_server(a, NULL, 0, NULL) == a->default_server);

    hy_http_addr_t *b = addr_for(c, "127.0.0.1:18182");
    ok(b != NULL);
    if (b) {
        is_str(pick(b, "one.test"), "t0");
        is_str(pick(b, "three.test"), "t2");
        is_str(pick(b, "unknown.test"), "t1"); /* default_server, although not first */
        is_str(pick(b, "example.com"), "t1");
        is_str(pick(b, "a.example.com"), "t0"); /* names are per address: s1 is not on this one */
        is_str(pick(b, ""), "t1");
        ok(b->spec.default_server);
    }
    hy_http_addr_t *u = addr_for(c, "127.0.0.1:18183");
    ok(u != NULL);
    if (u) {
        is_str(pick(u, "only.test"), "u0");
        is_str(pick(u, "anything.else"), "u0");
    }
    hy_http_addr_t *v4 = addr_for(c, "127.0.0.1:18184"), *v5 = addr_for(c, "127.0.0.1:18185");
    ok(v4 != NULL && v5 != NULL);
    if (v4 && v5) {
        is_int(v4->servers->nelts, 1);
        is_int(v5->servers->nelts, 2);
        is_str(pick(v5, "second.test"), "v1");
        is_str(pick(v5, "both.test"), "v0");
        is_str(pick(v5, "nope.test"), "v0");
        is_str(pick(v4, "second.test"), "v0");
    }
    hy_cycle_unref(c);
}

static void test_name_errors(void)
{
    const char *bad[] = {
        "server { server_name www.*.example.com; }",
        "server { server_name *example.com; }",
        "server { server_name example*; }",
        "server { server_name \"~\"; }",
        "server { server_name ~^(unclosed; }",
    };
    for (size_t i = 0; i < HY_ARRAY_SIZE(bad); i++) {
        hy_cycle_t *c = load(bad[i], true);
        if (!ok(c == NULL))
            printf("#   accepted: %s\n", bad[i]);
        if (c)
            hy_cycle_unref(c);
    }
    /* an empty name and the catch-all "_" are fine */
    hy_cycle_t *c = load("server { listen 127.0.0.1:18186; server_name \"\"; }\n"
                         "server { listen 127.0.0.1:18186; server_name _; }\n",
                         false);
    ok(c != NULL);
    if (c) {
        hy_http_addr_t *a = addr_for(c, "127.0.0.1:18186");
        ok(a != NULL);
        if (a) {
            ok(hy_http_find_server(a, "_", 1, NULL) == ((hy_http_srv_conf_t **)a->servers->elts)[1]); /* literally "_" */
            ok(hy_http_find_server(a, "x.test", 6, NULL) == ((hy_http_srv_conf_t **)a->servers->elts)[0]);
        }
        hy_cycle_unref(c);
    }
}

int main(void)
{
    snprintf(tmpdir, sizeof(tmpdir), "/tmp/hy_server_name_test_XXXXXX");
    if (mkdtemp(tmpdir) == NULL) {
        perror("mkdtemp");
        return 1;
    }
    subtest("server names: exact, wildcards, regex, default", test_names);
    subtest("invalid server names", test_name_errors);
    char path[128];
    snprintf(path, sizeof(path), "%s/test.conf", tmpdir);
    unlink(path);
    rmdir(tmpdir);
    return done_testing();
}
