/* regex_test.c — the regex layer: nginx's compile error wording, capture counts and named groups, matching
 * into a capture record (replaced on every match, untouched on a failed one, grown from the pool for many
 * groups), caseless matching, the execution counter, and the same results with and without JIT. */
#include <stdio.h>
#include <string.h>
#include "../harness.h"
#include "core/hayate.h"
#include "core/regex.h"

static hy_regex_t *rx(hy_pool_t *p, const char *pat, bool caseless)
{
    char err[HY_REGEX_ERR_MAX];
    hy_regex_t *re = hy_regex_compile(p, (hy_str_t){(char *)pat, strlen(pat)}, caseless, err);
    if (re == NULL)
        fprintf(stderr, "# unexpected: %s\n", err);
    return re;
}

static hy_str_t S(const char *s)
{
    return (hy_str_t){(char *)s, strlen(s)};
}

#define is_group(caps, i, want)                                                                                        \
    do {                                                                                                               \
        hy_str_t g_ = hy_regex_group((caps), (i));                                                                     \
        is_strn(g_.ptr, g_.len, (want));                                                                               \
    } while (0)

static void test_errors(void)
{
    hy_pool_t *p = hy_pool_create(4096);
    char err[HY_REGEX_ERR_MAX];
    /* error at the end of the pattern: no "at" part (nginx's ngx_regex_compile) */
    ok(hy_regex_compile(p, S("^/a(b"), false, err) == NULL);
    is_str(err, "pcre2_compile() failed: missing closing parenthesis in \"^/a(b\"");
    /* error inside: the rest of the pattern from PCRE2's offset */
    ok(hy_regex_compile(p, S("a)b"), false, err) == NULL);
    is_str(err, "pcre2_compile() failed: unmatched closing parenthesis in \"a)b\" at \")b\"");
    ok(hy_regex_compile(p, S("(?<a>x)(?<a>y)"), false, err) == NULL);
    is_str(err, "pcre2_compile() failed: two named subpatterns have the same name (PCRE2_DUPNAMES not set) in "
                "\"(?<a>x)(?<a>y)\" at \"y)\"");
    /* the pattern is counted, not NUL-terminated: the bytes after it are not part of it */
    hy_str_t part = {(char *)"(ab)(", 4};
    hy_regex_t *re = hy_regex_compile(p, part, false, err);
    ok(re != NULL);
    if (re) {
        is_str(re->pattern.ptr, "(ab)");
        is_int(re->ncaptures, 1);
    }
    hy_pool_destroy(p);
}

static void test_names(void)
{
    hy_pool_t *p = hy_pool_create(4096);
    hy_regex_t *re = rx(p, "^(?<sub>[a-z]+)\\.(\\w+)\\.(?<tld>test)$", false);
    ok(re != NULL);
    if (re == NULL)
        return;
    is_int(re->ncaptures, 3);
    uint32_t n;
    const hy_regex_name_t *names = hy_regex_names(re, &n);
    is_int(n, 2);
    /* PCRE2's name table is sorted by name */
    is_strn(names[0].name.ptr, names[0].name.len, "sub");
    is_int(names[0].group, 1);
    is_strn(names[1].name.ptr, names[1].name.len, "tld");
    is_int(names[1].group, 3);
    hy_regex_t *plain = rx(p, "^/x/(\\d+)$", false);
    ok(hy_regex_names(plain, &n) == NULL);
    is_int(n, 0);
    hy_pool_destroy(p);
}

static void test_exec_captures(void)
{
    hy_pool_t *p = hy_pool_create(4096);
    hy_regex_caps_t caps = {.pool = p};
    hy_regex_t *host = rx(p, "^(?<sub>[a-z]+)\\.(\\w+)\\.test$", true);
    hy_regex_t *loc = rx(p, "^/loc/([^/]+)/(.*)$", false);
    hy_regex_t *none = rx(p, "^/loc/", false);
    hy_regex_t *opt = rx(p, "^/o(x)?(y)?(z)$", false);
    uint64_t before = hy_regex_exec_count;

    /* nothing matched yet: every group is empty */
    is_group(&caps, 1, "");
    ok(caps.re == NULL);

    const char *h = "Foo.Bar.test";
    is_int(hy_regex_exec(host, S(h), &caps), 1); /* caseless */
    is_int(caps.n, 3);
    ok(caps.re == host);
    ok(caps.subject == h); /* offsets into the caller's string, no copy */
    is_group(&caps, 0, "Foo.Bar.test");
    is_group(&caps, 1, "Foo");
    is_group(&caps, 2, "Bar");
    is_group(&caps, 3, "");
    is_group(&caps, 9, "");
    uint32_t m = caps.nmatch;

    /* a failed match leaves the record alone */
    is_int(hy_regex_exec(loc, S("/other/a/b"), &caps), 0);
    ok(caps.re == host && caps.nmatch == m);
    is_group(&caps, 1, "Foo");

    /* a match replaces it */
    is_int(hy_regex_exec(loc, S("/loc/a/b/c"), &caps), 1);
    ok(caps.re == loc && caps.nmatch == m + 1);
    is_group(&caps, 1, "a");
    is_group(&caps, 2, "b/c");

    /* so does a match of a regex without groups (nginx 1.22: $1 is then empty) */
    is_int(hy_regex_exec(none, S("/loc/a/b/c"), &caps), 1);
    is_int(caps.n, 1);
    is_group(&caps, 1, "");

    /* groups that did not take part are empty, later ones still set */
    is_int(hy_regex_exec(opt, S("/oyz"), &caps), 1);
    is_group(&caps, 1, "");
    is_group(&caps, 2, "y");
    is_group(&caps, 3, "z");

    /* without a record: only the answer */
    is_int(hy_regex_exec(loc, S("/loc/q/r"), NULL), 1);
    is_group(&caps, 3, "z");

    /* an empty or NULL subject */
    is_int(hy_regex_exec(none, HY_STR_NULL, &caps), 0);
    hy_regex_t *empty = rx(p, "^$", false);
    is_int(hy_regex_exec(empty, HY_STR_NULL, &caps), 1);

    is_int(hy_regex_exec_count - before, 8); /* every call counts, matched or not */
    hy_pool_destroy(p);
}

static void test_many_groups(void)
{
    hy_pool_t *p = hy_pool_create(4096);
    hy_regex_caps_t caps = {.pool = p};
    char pat[256] = "^", subj[64] = "";
    size_t n = 1;
    for (int i = 0; i < 24; i++) {
        memcpy(pat + n, "(.)", 3);
        n += 3;
        subj[i] = (char)('a' + i);
    }
    pat[n] = '$';
    hy_regex_t *small = rx(p, "^(.)(.)", false);
    is_int(hy_regex_exec(small, S("xy"), &caps), 1);
    uint32_t size = caps.size;
    ok(size >= 3);
    hy_regex_t *big = rx(p, pat, false);
    is_int(big->ncaptures, 24);
    is_int(hy_regex_exec(big, S(subj), &caps), 1);
    ok(caps.size >= 25);
    is_int(caps.n, 25);
    is_group(&caps, 1, "a");
    is_group(&caps, 9, "i");
    is_group(&caps, 24, "x");
    is_group(&caps, 25, "");
    hy_pool_destroy(p);
}

static void test_jit_same_results(void)
{
    static const char *pats[] = {"^/img/.*\\.(png|jpe?g|gif)$", "(?i)^/API/v(\\d+)/", "a+b", "^(?:[^/]*/){3}x$"};
    static const char *subjects[] = {
        "/img/a/b.jpeg", "/img/x.txt", "/api/v12/users", "caaab", "/a/b/c/x", "/a/b/x", ""};
    hy_pool_t *p = hy_pool_create(4096);
    int diff = 0;
    for (size_t i = 0; i < HY_ARRAY_SIZE(pats); i++) {
        hy_regex_jit = true;
        hy_regex_t *a = rx(p, pats[i], false);
        hy_regex_jit = false;
        hy_regex_t *b = rx(p, pats[i], false);
        hy_regex_jit = true;
        for (size_t j = 0; j < HY_ARRAY_SIZE(subjects); j++) {
            hy_regex_caps_t ca = {.pool = p}, cb = {.pool = p};
            int ra = hy_regex_exec(a, S(subjects[j]), &ca), rb = hy_regex_exec(b, S(subjects[j]), &cb);
            if (ra != rb || ca.n != cb.n || (ca.n && memcmp(ca.ov, cb.ov, sizeof(size_t) * 2 * ca.n) != 0))
                diff++;
        }
    }
    is_int(diff, 0);
    hy_pool_destroy(p);
}

int main(void)
{
    subtest("compile errors (nginx's wording)", test_errors);
    subtest("named groups", test_names);
    subtest("exec into a capture record", test_exec_captures);
    subtest("many groups grow the record", test_many_groups);
    subtest("JIT and interpreter agree", test_jit_same_results);
    return done_testing();
}
