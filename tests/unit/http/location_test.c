/* location_test.c — location selection with nginx's rules, on configurations built by the real parser and
 * modules (hy_cycle_load), and the http core's configuration errors for locations, listen and default_server.
 * Rules: https://nginx.org/en/docs/http/ngx_http_core_module.html#location */
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
    if (quiet) { /* expected errors: keep the test output readable */
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

static hy_http_srv_conf_t *server(hy_cycle_t *c, size_t i)
{
    hy_http_main_conf_t *m = hy_http_main(c);
    if (m == NULL || m->servers == NULL || i >= m->servers->nelts)
        return NULL;
    return ((hy_http_srv_conf_t **)m->servers->elts)[i];
}

/* "modifier name" of the location chosen for path, "(none)" for the server level */
static const char *loc(hy_http_srv_conf_t *srv, const char *path)
{
    static char buf[256];
    hy_http_loc_conf_t *l = hy_http_find_location(srv, path, strlen(path), NULL);
    if (l == NULL)
        return "(none)";
    static const char *mods[] = {"", "= ", "^~ ", "~ ", "~* ", ""};
    snprintf(buf, sizeof(buf), "%s%.*s", l->match >= 0 && l->match <= HY_LOC_NAMED ? mods[l->match] : "?",
             (int)l->name.len, l->name.ptr);
    return buf;
}

static void test_nginx_doc_example(void)
{
    /* the example from the documentation of "location" */
    hy_cycle_t *c = load("server {\n"
                         "    listen 127.0.0.1:18080;\n"
                         "    location = / { }\n"                          /* A */
                         "    location / { }\n"                            /* B */
                         "    location /documents/ { }\n"                  /* C */
                         "    location ^~ /images/ { }\n"                  /* D */
                         "    location ~* \\.(gif|jpg|jpeg)$ { }\n"       /* E */
                         "}\n",
                         false);
    ok(c != NULL);
    if (c == NULL)
        return;
    hy_http_srv_conf_t *s = server(c, 0);
    is_str(loc(s, "/"), "= /");
    is_str(loc(s, "/index.html"), "/");
    is_str(loc(s, "/documents/document.html"), "/documents/");
    is_str(loc(s, "/images/1.gif"), "^~ /images/");
    is_str(loc(s, "/documents/1.jpg"), "~* \\.(gif|jpg|jpeg)$");
    /* and around it */
    is_str(loc(s, "/documents/1.JPG"), "~* \\.(gif|jpg|jpeg)$"); /* ~* is case-insensitive */
    is_str(loc(s, "/1.gif"), "~* \\.(gif|jpg|jpeg)$");
    is_str(loc(s, "/documents"), "/"); /* "/documents/" is not a prefix of "/documents" */
    is_str(loc(s, "/images/"), "^~ /images/");
    is_str(loc(s, "/Images/1.gif"), "~* \\.(gif|jpg|jpeg)$"); /* prefixes are case-sensitive */
    hy_cycle_unref(c);
}

static void test_prefix_exact_regex(void)
{
    hy_cycle_t *c = load("server {\n"
                         "    listen 127.0.0.1:18080;\n"
                         "    location /a/ { }\n"
                         "    location /a/b/ { }\n"
                         "    location /a/b/c { }\n"
                         "    location = /exact { }\n"
                         "    location /exact { }\n"
                         "    location ~ \\.php$ { }\n"
                         "    location ~ ^/a/b/.*\\.php$ { }\n"
                         "    location ~* \\.PNG$ { }\n"
                         "    location ^~ /static/ { }\n"
                         "    location /static/deep/ { }\n"
                         "    location @fallback { }\n"
                         "    location =/noblank { }\n"
                         "    location ~^/tight/ { }\n"
                         "}\n",
                         false);
    ok(c != NULL);
    if (c == NULL)
        return;
    hy_http_srv_conf_t *s = server(c, 0);
    /* "=" exact */
    is_str(loc(s, "/exact"), "= /exact");
    is_str(loc(s, "/exact/more"), "/exact");
    is_str(loc(s, "/exactly"), "/exact");
    is_str(loc(s, "/noblank"), "= /noblank"); /* "=/x" without a space */
    is_str(loc(s, "/noblank/x"), "(none)");
    /* longest prefix, whatever the config order */
    is_str(loc(s, "/a/x"), "/a/");
    is_str(loc(s, "/a/b/x"), "/a/b/");
    is_str(loc(s, "/a/b/cd"), "/a/b/c");
    is_str(loc(s, "/a/b"), "/a/");
    is_str(loc(s, "/a"), "(none)");
    is_str(loc(s, "/nothing"), "(none)"); /* no "/" location: the server level */
    /* regexes in config order: the first match wins, not the most specific */
    is_str(loc(s, "/a/b/x.php"), "~ \\.php$");
    is_str(loc(s, "/x.php"), "~ \\.php$");
    is_str(loc(s, "/x.PHP"), "(none)"); /* "~" is case-sensitive */
    is_str(loc(s, "/x.png"), "~* \\.PNG$");
    is_str(loc(s, "/x.PnG"), "~* \\.PNG$");
    is_str(loc(s, "/tight/a"), "~ ^/tight/");
    /* "^~" on the longest prefix stops the regex search, but only when it is the longest */
    is_str(loc(s, "/static/x.php"), "^~ /static/");
    is_str(loc(s, "/static/deep/x.php"), "~ \\.php$");
    is_str(loc(s, "/static/deep/x"), "/static/deep/");
    /* named locations are never chosen by URI */
    is_str(loc(s, "@fallback"), "(none)");
    hy_http_loc_conf_t *n = hy_http_find_named(s, "@fallback", 9);
    ok(n != NULL);
    if (n)
        is_strn(n->name.ptr, n->name.len, "@fallback");
    if (n)
        is_int(n->match, HY_LOC_NAMED);
    ok(hy_http_find_named(s, "@nope", 5) == NULL);
    ok(hy_http_find_named(s, "@fall", 5) == NULL);
    ok(hy_http_find_named(s, "/a/", 3) == NULL); /* only named ones */
    /* parent links */
    hy_http_loc_conf_t *l = hy_http_find_location(s, "/a/b/x", 6, NULL);
    ok(l && l->parent == s->loc);
    hy_cycle_unref(c);
}

static void test_nested(void)
{
    hy_cycle_t *c = load("server {\n"
                         "    listen 127.0.0.1:18080;\n"
                         "    location / { }\n"
                         "    location /img/ {\n"
                         "        location ~ \\.gif$ { }\n"
                         "        location /img/thumbs/ { }\n"
                         "        location = /img/logo.png { }\n"
                         "    }\n"
                         "    location ~ \\.(gif|jpg)$ { }\n"
                         "    location ~ ^/re/ {\n"
                         "        location ~ \\.txt$ { }\n"
                         "    }\n"
                         "}\n",
                         false);
    ok(c != NULL);
    if (c == NULL)
        return;
    hy_http_srv_conf_t *s = server(c, 0);
    /* a regex nested in the longest prefix is checked before the outer regexes */
    is_str(loc(s, "/img/a.gif"), "~ \\.gif$");
    hy_http_loc_conf_t *l = hy_http_find_location(s, "/img/a.gif", 10, NULL);
    ok(l && l->parent && hy_str_eq(l->parent->name, "/img/"));
    /* nested regex does not match: outer regexes next */
    is_str(loc(s, "/img/a.jpg"), "~ \\.(gif|jpg)$");
    l = hy_http_find_location(s, "/img/a.jpg", 10, NULL);
    ok(l && l->parent == s->loc);
    /* nested prefix, then the nested regexes of its parent */
    is_str(loc(s, "/img/thumbs/x.png"), "/img/thumbs/");
    is_str(loc(s, "/img/thumbs/x.gif"), "~ \\.gif$");
    is_str(loc(s, "/img/x.png"), "/img/");
    is_str(loc(s, "/img/logo.png"), "= /img/logo.png"); /* nested exact */
    /* locations nested in a regex location */
    is_str(loc(s, "/re/a.txt"), "~ \\.txt$");
    is_str(loc(s, "/re/a.bin"), "~ ^/re/");
    is_str(loc(s, "/re/a.gif"), "~ \\.(gif|jpg)$"); /* config order: this regex comes before ^/re/ */
    is_str(loc(s, "/other.gif"), "~ \\.(gif|jpg)$");
    is_str(loc(s, "/other"), "/");
    hy_cycle_unref(c);
}

static void test_noregex_nested(void)
{
    /* BUG (src/http/location.c, find_in): for a "^~" prefix it returns FOUND_FINAL at once, without searching the
     * locations nested in it. nginx (ngx_http_core_find_location) always descends into the longest prefix's
     * nested locations; "^~" only skips the regexes at the level where that prefix was found. So
     * "location ^~ /nore/ { location /nore/inner/ {} location ~ \.gif$ {} }" must route /nore/inner/x to
     * "/nore/inner/" and /nore/a.gif to the nested regex. Fix: for NOREGEX, run the nested find_in first (keep a
     * FOUND_FINAL from it), then return FOUND_FINAL without trying this level's regexes. */
    hy_cycle_t *c = load("server {\n"
                         "    listen 127.0.0.1:18080;\n"
                         "    location ^~ /nore/ {\n"
                         "        location /nore/inner/ { }\n"
                         "        location ~ \\.gif$ { }\n"
                         "    }\n"
                         "    location ~ \\.(gif|txt)$ { }\n"
                         "}\n",
                         false);
    ok(c != NULL);
    if (c == NULL)
        return;
    hy_http_srv_conf_t *s = server(c, 0);
    is_str(loc(s, "/nore/x.txt"), "^~ /nore/"); /* outer regex skipped (this already works) */
    is_str(loc(s, "/nore/inner/x"), "/nore/inner/");
    is_str(loc(s, "/nore/a.gif"), "~ \\.gif$");
    hy_cycle_unref(c);
}

static void test_nginx_search_quirks(void)
{
    /* Deviations from what nginx's code (ngx_http_core_find_location / _find_static_location) does in corner
     * cases the documentation does not spell out. Marked so the lead can decide; both are in
     * src/http/location.c, find_in.
     * 1. A URI equal to a plain prefix location's name does NOT end the search: nginx 1.22 answers /x.gif from
     *    "location ~ \.gif$" here (checked against the real nginx: an inclusive node returns NGX_AGAIN).
     * 2. A "^~" found in a nested level only stops the regexes of that level: the nested call returns
     *    NGX_DECLINED/AGAIN, and the outer level still runs its own regexes (its noregex is its own prefix's).
     *    Fix: distinguish "final because exact/regex matched" from "final because ^~" and only propagate the
     *    first out of the nested call. */
    hy_cycle_t *c = load("server {\n"
                         "    listen 127.0.0.1:18080;\n"
                         "    location /x.gif { }\n"
                         "    location /p/ {\n"
                         "        location ^~ /p/q/ { }\n"
                         "    }\n"
                         "    location ~ \\.gif$ { }\n"
                         "}\n",
                         false);
    ok(c != NULL);
    if (c == NULL)
        return;
    hy_http_srv_conf_t *s = server(c, 0);
    is_str(loc(s, "/x.gif"), "~ \\.gif$");        /* 1 */
    is_str(loc(s, "/x.gifs"), "/x.gif");          /* no regex match anyway */
    is_str(loc(s, "/p/q/a.gif"), "~ \\.gif$");    /* 2 */
    is_str(loc(s, "/p/q/a.png"), "^~ /p/q/");
    hy_cycle_unref(c);
}

static void test_config_errors(void)
{
    const char *bad[] = {
        /* duplicate locations */
        "server { location /a/ { } location /a/ { } }",
        "server { location = /a { } location = /a { } }",
        "server { location /a/ { } location ^~ /a/ { } }",
        "server { location @n { } location @n { } }",
        "server { location /a/ { location /a/b/ { } location /a/b/ { } } }",
        /* nesting rules */
        "server { location /a/ { location /b/ { } } }",
        "server { location /a/ { location = /b { } } }",
        "server { location ^~ /a/ { location /ab { } } }",
        "server { location = /a { location /a/b { } } }",
        "server { location @n { location /x { } } }",
        "server { location /a/ { location @n { } } }",
        /* bad patterns and modifiers */
        "server { location ~ ( { } }",
        "server { location ~~ /x { } }",
        "server { location = /a /b { } }",
        /* listen */
        "server { listen 127.0.0.1:18080; listen 127.0.0.1:18080; }",
        "server { listen 18081 default_server; } server { listen 18081 default_server; }",
        "server { listen 127.0.0.1:18082 default; } server { listen 127.0.0.1:18082 default_server; }",
        /* location at the http level */
        "location / { }",
    };
    for (size_t i = 0; i < HY_ARRAY_SIZE(bad); i++) {
        hy_cycle_t *c = load(bad[i], true);
        if (!ok(c == NULL))
            printf("#   accepted: %s\n", bad[i]);
        if (c)
            hy_cycle_unref(c);
    }
    const char *good[] = {
        "server { location = /a { } location /a { } }",         /* exact and prefix with the same name */
        "server { location ~ /a { } location ~ /a { } }",       /* regexes are not checked for duplicates */
        "server { location /a/ { } location /b/ { } }",
        "server { location /a/ { location ~ \\.x$ { } location /a/b/ { } } }",
        "server { location ~ ^/r { location /anything/ { } } }", /* prefixes under a regex: not "outside" */
        "server { listen 18083 default_server; } server { listen 18083; } server { listen 18084 default_server; }",
        "server { listen 127.0.0.1:18085; } server { listen 127.0.0.1:18085; }",
    };
    for (size_t i = 0; i < HY_ARRAY_SIZE(good); i++) {
        hy_cycle_t *c = load(good[i], false);
        if (!ok(c != NULL))
            printf("#   rejected: %s\n", good[i]);
        if (c)
            hy_cycle_unref(c);
    }
}

int main(void)
{
    snprintf(tmpdir, sizeof(tmpdir), "/tmp/hy_location_test_XXXXXX");
    if (mkdtemp(tmpdir) == NULL) {
        perror("mkdtemp");
        return 1;
    }
    subtest("nginx documentation example", test_nginx_doc_example);
    subtest("exact, longest prefix, regex order, ^~, named", test_prefix_exact_regex);
    subtest("nested locations", test_nested);
    subtest("locations nested in ^~ are searched", test_noregex_nested);
    subtest("nginx search corner cases (checked against nginx 1.22)", test_nginx_search_quirks);
    subtest("configuration errors", test_config_errors);
    char path[128];
    snprintf(path, sizeof(path), "%s/test.conf", tmpdir);
    unlink(path);
    rmdir(tmpdir);
    return done_testing();
}
