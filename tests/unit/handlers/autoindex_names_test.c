/* autoindex_names_test.c — file names autoindex must escape or measure: JSON escapes for every control character
 * nginx escapes, UTF-8 of 2, 3 and 4 bytes counted as one character each in html (utf8), and invalid sequences
 * (overlong, surrogates, past U+10FFFF, truncated) measured in bytes; a missing directory is -ENOENT. */
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>
#include "../harness.h"
#include "core/hayate.h"
#include "handlers/autoindex.h"

static char dir[64];

static void touch(const char *name)
{
    char p[256];
    snprintf(p, sizeof(p), "%s/%s", dir, name);
    int fd = open(p, O_CREAT | O_WRONLY, 0644);
    if (fd >= 0)
        close(fd);
}

static char *render(int format, bool utf8)
{
    hy_autoindex_opts_t o = {.exact_size = true, .format = format, .utf8 = utf8};
    char *out = NULL;
    size_t len = 0;
    if (hy_autoindex_render(dir, HY_STR("/d/"), &o, &out, &len) != 0)
        return NULL;
    char *z = realloc(out, len + 1);
    z[len] = '\0';
    return z;
}

static void test_json_escapes(void)
{
    touch("c\b\f\n\r\t\\\"\x01.txt");
    char *j = render(HY_AUTOINDEX_JSON, false);
    ok(j != NULL && strstr(j, "\"name\":\"c\\b\\f\\n\\r\\t\\\\\\\"\\u0001.txt\"") != NULL);
    if (j && !strstr(j, "\\u0001"))
        printf("# %s\n", j);
    free(j);
}

static void test_utf8_lengths(void)
{
    /* 50 characters of 3 bytes: one past html's 50-column cut; 4-byte ones too */
    char name[256] = "";
    for (int i = 0; i < 51; i++)
        strcat(name, "\xe2\x82\xac"); /* € */
    touch(name);
    char name4[64] = "\xf0\x9f\x98\x80-emoji";
    touch(name4);
    const char *bad[] = {"\xc0\xaf-overlong", "\xed\xa0\x80-surrogate", "\xf4\x90\x80\x80-too-big",
                         "\xe2\x82-cut", "\xf8-five"};
    for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++)
        touch(bad[i]);
    char *h = render(HY_AUTOINDEX_HTML, true);
    ok(h != NULL);
    if (h != NULL) {
        /* the long name is cut to 47 characters and "..>" (nginx), counted in characters, not bytes */
        char want[256] = ">";
        for (int i = 0; i < 47; i++)
            strcat(want, "\xe2\x82\xac");
        strcat(want, "..&gt;</a>");
        ok(strstr(h, want) != NULL);
        ok(strstr(h, ">\xf0\x9f\x98\x80-emoji</a>") != NULL);
        ok(strstr(h, "-overlong</a>") != NULL && strstr(h, "-surrogate</a>") != NULL);
        ok(strstr(h, "-too-big</a>") != NULL && strstr(h, "-cut</a>") != NULL && strstr(h, "-five</a>") != NULL);
    }
    free(h);
    char *b = render(HY_AUTOINDEX_HTML, false); /* bytes: the long name is cut far earlier */
    ok(b != NULL && strstr(b, "\xe2\x82\xac\xe2\x82\xac\xe2\x82\xac\xe2\x82\xac\xe2\x82\xac\xe2\x82\xac\xe2\x82\xac"
                              "\xe2\x82\xac\xe2\x82\xac\xe2\x82\xac\xe2\x82\xac\xe2\x82\xac\xe2\x82\xac\xe2\x82\xac"
                              "\xe2\x82\xac\xe2\x82\xac\xe2\x82\xac\xe2\x82\xac") == NULL);
    free(b);
    char *x = render(HY_AUTOINDEX_XML, true);
    ok(x != NULL && strstr(x, "\xf0\x9f\x98\x80-emoji</file>") != NULL);
    free(x);
}

static void test_missing_dir(void)
{
    hy_autoindex_opts_t o = {.format = HY_AUTOINDEX_HTML};
    char *out = NULL;
    size_t len = 0;
    is_int(hy_autoindex_render("/nonexistent/hy-autoindex", HY_STR("/"), &o, &out, &len), -ENOENT);
}

int main(void)
{
    snprintf(dir, sizeof(dir), "/tmp/hy_ai_names_XXXXXX");
    if (mkdtemp(dir) == NULL)
        return 1;
    subtest("json escapes", test_json_escapes);
    subtest("utf-8 lengths", test_utf8_lengths);
    subtest("a missing directory", test_missing_dir);
    char cmd[128];
    snprintf(cmd, sizeof(cmd), "rm -rf %s", dir);
    if (system(cmd) != 0)
        return 1;
    return done_testing();
}
