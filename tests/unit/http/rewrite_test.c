/* rewrite_test.c — table-driven checks of nginx's documented rules: rewrite's args handling (the `?` rule),
 * redirect Locations, `if` truthiness, add_header/expires status rules, expires parsing, error_page `=` forms.
 * Expectations come from the nginx documentation (ngx_http_rewrite_module, ngx_http_headers_module,
 * ngx_http_core_module error_page) and were checked against nginx 1.22 through the integration tests. */
#include <string.h>
#include "../harness.h"
#include "core/hayate.h"
#include "handlers/rewrite.h"
#include "filters/headers.h"
#include "http/error_page.h"

static hy_str_t S(const char *s)
{
    return (hy_str_t){(char *)s, strlen(s)};
}

/* replacement as written in the config, old args, → uri and args after an internal rewrite */
typedef struct split_case {
    const char *repl, *old_args, *uri, *args;
} split_case_t;

static const split_case_t split_cases[] = {
    {"/show", "a=1", "/show", "a=1"},          /* no '?': the old args stay */
    {"/show", "", "/show", ""},
    {"/show?", "a=1", "/show", ""},            /* trailing '?': args dropped */
    {"/show?n=1", "a=1", "/show", "n=1&a=1"},  /* new args, old appended */
    {"/show?n=1", "", "/show", "n=1"},
    {"/show?n=1?", "a=1", "/show", "n=1"},     /* new args, trailing '?': old not appended */
    {"/s?x=1&y=2", "z", "/s", "x=1&y=2&z"},
};

static void test_split(void)
{
    hy_pool_t *pool = hy_pool_create(4096);
    for (size_t i = 0; i < HY_ARRAY_SIZE(split_cases); i++) {
        const split_case_t *c = &split_cases[i];
        hy_str_t repl = S(c->repl);
        bool add_args = true;
        if (repl.len && repl.ptr[repl.len - 1] == '?') {
            repl.len--;
            add_args = false;
        }
        bool has_q = memchr(repl.ptr, '?', repl.len) != NULL;
        hy_str_t uri, args;
        hy_rewrite_split(pool, repl, has_q, add_args, S(c->old_args), &uri, &args);
        is_strn(uri.ptr, uri.len, c->uri);
        is_strn(args.ptr, args.len, c->args);
    }
    hy_pool_destroy(pool);
}

typedef struct loc_case {
    const char *repl, *old_args, *location;
} loc_case_t;

static const loc_case_t loc_cases[] = {
    {"/new", "q=1", "/new?q=1"},
    {"/new", "", "/new"},
    {"/new?", "q=1", "/new"},
    {"/new?a=b", "q=1", "/new?a=b&q=1"},
    {"/new?a=b?", "q=1", "/new?a=b"},
    {"http://x.example/p", "k=v", "http://x.example/p?k=v"},
};

static void test_redirect_location(void)
{
    hy_pool_t *pool = hy_pool_create(4096);
    for (size_t i = 0; i < HY_ARRAY_SIZE(loc_cases); i++) {
        const loc_case_t *c = &loc_cases[i];
        hy_str_t repl = S(c->repl);
        bool add_args = true;
        if (repl.len && repl.ptr[repl.len - 1] == '?') {
            repl.len--;
            add_args = false;
        }
        bool has_q = memchr(repl.ptr, '?', repl.len) != NULL;
        hy_str_t l = hy_rewrite_redirect_location(pool, repl, has_q, add_args, S(c->old_args));
        is_strn(l.ptr, l.len, c->location);
    }
    hy_pool_destroy(pool);
}

/* nginx's NGX_UNESCAPE_REDIRECT (nginx-tests rewrite_unescape.t) */
static const struct {
    const char *in, *out;
} unesc_cases[] = {
    {"http%3A%2F%2Fexample.com%2F%3Ffrom", "http://example.com/?from"},
    {"http%3A%2F%2Fexample.com%0D%0Asplit", "http://example.com%0D%0Asplit"},
    {"http%3A%2F%2Fexample.com%2F%3Ffrom%3Dblah", "http://example.com/?from%3Dblah"}, /* an escaped ? ends it */
    {"/a%20b%25c%22%23", "/a%20b%25c%22%23"},                                        /* at or below '%' stay */
    {"/caf%C3%A9%7e%7F", "/caf%C3%A9~%7F"},                                          /* above 0x7e stay */
    {"/p?x=%3A", "/p?x=%3A"},                                                       /* after a literal ? */
    {"/%zz", "/zz"},
    {"/%2zq", "/q"},
    {"/end%", "/end"},
    {"/end%4", "/end"},
    {"plain", "plain"},
};

static void test_unescape_redirect(void)
{
    for (size_t i = 0; i < HY_ARRAY_SIZE(unesc_cases); i++) {
        char out[128];
        size_t n = hy_rewrite_unescape_redirect(unesc_cases[i].in, strlen(unesc_cases[i].in), out);
        is_strn(out, n, unesc_cases[i].out);
        char same[128]; /* in place */
        strcpy(same, unesc_cases[i].in);
        n = hy_rewrite_unescape_redirect(same, strlen(same), same);
        is_strn(same, n, unesc_cases[i].out);
    }
}

static void test_truthy(void)
{
    ok(!hy_rewrite_truthy(S("")));
    ok(!hy_rewrite_truthy(S("0")));
    ok(hy_rewrite_truthy(S("1")));
    ok(hy_rewrite_truthy(S("00")));   /* only the exact string "0" is false */
    ok(hy_rewrite_truthy(S("false")));
    ok(hy_rewrite_truthy(S(" ")));
}

static void test_status_rules(void)
{
    static const int yes[] = {200, 201, 204, 206, 301, 302, 303, 304, 307, 308};
    static const int no[] = {100, 202, 203, 205, 300, 305, 400, 403, 404, 410, 500, 502, 503};
    for (size_t i = 0; i < HY_ARRAY_SIZE(yes); i++)
        ok(hy_headers_status_ok(yes[i]));
    for (size_t i = 0; i < HY_ARRAY_SIZE(no); i++)
        ok(!hy_headers_status_ok(no[i]));
}

typedef struct exp_case {
    const char *a, *b; /* b NULL: one argument */
    int rc, type;
    int64_t secs;
} exp_case_t;

static const exp_case_t exp_cases[] = {
    {"1h", NULL, 0, HY_EXPIRES_ACCESS, 3600},
    {"30d", NULL, 0, HY_EXPIRES_ACCESS, 30 * 86400},
    {"-1", NULL, 0, HY_EXPIRES_ACCESS, -1},
    {"0", NULL, 0, HY_EXPIRES_ACCESS, 0},
    {"epoch", NULL, 0, HY_EXPIRES_EPOCH, 0},
    {"max", NULL, 0, HY_EXPIRES_MAX, 0},
    {"off", NULL, 0, HY_EXPIRES_OFF, 0},
    {"modified", "1d", 0, HY_EXPIRES_MODIFIED, 86400},
    {"@15h30m", NULL, 0, HY_EXPIRES_DAILY, 15 * 3600 + 30 * 60},
    {"@24h", NULL, -1, 0, 0},
    {"soon", NULL, -1, 0, 0},
    {"later", "1h", -1, 0, 0},
};

static void test_expires_parse(void)
{
    for (size_t i = 0; i < HY_ARRAY_SIZE(exp_cases); i++) {
        const exp_case_t *c = &exp_cases[i];
        hy_str_t args[2] = {S(c->a), c->b ? S(c->b) : HY_STR_NULL};
        int type = -9;
        int64_t secs = -9;
        int rc = hy_headers_parse_expires(args, c->b ? 2 : 1, &type, &secs);
        is_int(rc, c->rc);
        if (c->rc == 0) {
            is_int(type, c->type);
            is_int(secs, c->secs);
        }
    }
}

static void test_error_page_forms(void)
{
    is_int(hy_error_page_parse_overwrite(S("=")), 0);       /* "=": the target's status */
    is_int(hy_error_page_parse_overwrite(S("=200")), 200);
    is_int(hy_error_page_parse_overwrite(S("=301")), 301);
    is_int(hy_error_page_parse_overwrite(S("=abc")), -1);
    is_int(hy_error_page_parse_overwrite(S("404")), -1);
    is_int(hy_error_page_parse_overwrite(S("=1000")), -1);
    /* external targets: 302 unless the overwrite is a redirect code */
    is_int(hy_error_page_redirect_status(-1), 302);
    is_int(hy_error_page_redirect_status(0), 302);
    is_int(hy_error_page_redirect_status(200), 302);
    is_int(hy_error_page_redirect_status(301), 301);
    is_int(hy_error_page_redirect_status(303), 303);
    is_int(hy_error_page_redirect_status(307), 307);
    is_int(hy_error_page_redirect_status(308), 308);
}

int main(void)
{
    subtest("rewrite: the ? rule for internal rewrites", test_split);
    subtest("rewrite: redirect Location and args", test_redirect_location);
    subtest("rewrite: redirect unescaping", test_unescape_redirect);
    subtest("if: variable truthiness", test_truthy);
    subtest("add_header/expires: statuses without always", test_status_rules);
    subtest("expires: argument forms", test_expires_parse);
    subtest("error_page: = forms and redirect codes", test_error_page_forms);
    return done_testing();
}
