/* suggest_test.c — "did you mean" (edit distance with transpositions, thresholds by length) and the list of
 * nginx variables hayate lacks. */
#include "../harness.h"
#include "conf/suggest.h"

static const char *nearest(const char *name, const char *const *cands)
{
    hy_suggest_t near = {NULL, 0};
    for (size_t i = 0; cands[i]; i++)
        hy_suggest_near(&near, name, strlen(name), cands[i]);
    return near.best ? near.best : "(none)";
}

static void test_near(void)
{
    static const char *const dirs[] = {"server_name", "server_tokens", "root", "listen", "location", NULL};
    is_str(nearest("server_nmae", dirs), "server_name");  /* transposition: 1 */
    is_str(nearest("servr_name", dirs), "server_name");   /* deletion */
    is_str(nearest("server_namee", dirs), "server_name"); /* insertion */
    is_str(nearest("lisen", dirs), "listen");
    is_str(nearest("locaiton", dirs), "location");
    is_str(nearest("server_name", dirs), "(none)"); /* an exact match is not a suggestion */
    is_str(nearest("rot", dirs), "root");           /* short names: distance 1 only */
    is_str(nearest("rt", dirs), "(none)");
    is_str(nearest("xyzzy", dirs), "(none)");
    is_str(nearest("serv_nme", dirs), "(none)"); /* 3 edits */
    static const char *const vars[] = {"uri", "url_x", "args", NULL};
    is_str(nearest("uir", vars), "uri");
    is_str(nearest("ur", vars), "uri");
    /* the nearest wins, the first of equals stays */
    static const char *const two[] = {"abcdef", "abcdxf", "abcdeg", NULL};
    is_str(nearest("abcdez", two), "abcdef");
    /* long names do not overflow the table */
    char longname[200];
    memset(longname, 'a', sizeof(longname) - 1);
    longname[sizeof(longname) - 1] = '\0';
    static const char *const longs[] = {"aaaa", NULL};
    is_str(nearest(longname, longs), "(none)");
}

static void test_variables(void)
{
    ok(hy_suggest_variable("gzip_ratio", 10));
    ok(hy_suggest_variable("ssl_protocol", 12));
    ok(hy_suggest_variable("sent_trailer_foo", 16)); /* a family */
    ok(!hy_suggest_variable("sent_trailer_", 13));   /* the family name alone is no variable */
    ok(!hy_suggest_variable("gzip_rati", 9));
    ok(!hy_suggest_variable("no_such_thing", 13));
    ok(!hy_suggest_variable("", 0));
}

int main(void)
{
    subtest("did you mean", test_near);
    subtest("nginx variables hayate lacks", test_variables);
    return done_testing();
}
