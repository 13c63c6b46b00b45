/* htpasswd_test.c — htpasswd lines (nginx's rules) and every password scheme; the vectors were made by
 * `openssl passwd`, `mkpasswd` and `htpasswd` (apache2-utils). */
#include <string.h>
#include "../harness.h"
#include "core/htpasswd.h"
#include "core/base64.h"

static bool find(const char *buf, const char *user, char *out)
{
    const char *h;
    size_t n;
    if (!hy_htpasswd_find(buf, strlen(buf), user, strlen(user), &h, &n))
        return false;
    memcpy(out, h, n);
    out[n] = '\0';
    return true;
}

static void test_lines(void)
{
    char h[128];
    const char *f = "# comment\n\nalice:{PLAIN}a1:comment\r\nbob:{PLAIN}b2\r\n#carol:x\n carol:c\ndave:d";
    ok(find(f, "alice", h) && strcmp(h, "{PLAIN}a1") == 0);
    ok(find(f, "bob", h) && strcmp(h, "{PLAIN}b2") == 0);
    ok(!find(f, "carol", h)); /* "#carol" is a comment, " carol" another user */
    ok(find(f, " carol", h) && strcmp(h, "c") == 0);
    ok(find(f, "dave", h) && strcmp(h, "d") == 0); /* the last line without a newline */
    ok(!find(f, "ali", h));                        /* the name must be followed by ':' */
    ok(!find("alice\n", "alice", h));
    ok(find("alice:\n", "alice", h) && h[0] == '\0');
    ok(!find("", "alice", h));
    ok(find("x:1\nx:2\n", "x", h) && strcmp(h, "1") == 0); /* the first line wins */
}

static void test_md5crypt(void)
{
    char out[HY_APR1_MAX];
    hy_htpasswd_md5crypt("secret", "$apr1$", "abcdefgh", out);
    is_str(out, "$apr1$abcdefgh$h9FWgUz3n9YxylKLlR5SQ/");
    hy_htpasswd_md5crypt("secret", "$apr1$", "$apr1$abcdefgh$h9FWgUz3n9YxylKLlR5SQ/", out);
    is_str(out, "$apr1$abcdefgh$h9FWgUz3n9YxylKLlR5SQ/");
    hy_htpasswd_md5crypt("", "$apr1$", "ab", out);
    is_str(out, "$apr1$ab$S8K6Sgp3W8c9Jb6LxgywZ.");
    hy_htpasswd_md5crypt("secret", "$1$", "abcdefgh", out); /* the same algorithm as libcrypt's $1$ */
    is_str(out, "$1$abcdefgh$cHJi5PXp/ki/ktXzqlk6I1");
    /* long passwords take the 16-byte steps more than once */
    const char *longpw = "0123456789abcdef0123456789abcdef0123456789";
    hy_htpasswd_md5crypt(longpw, "$1$", "xyz", out);
    ok(strncmp(out, "$1$xyz$", 7) == 0);
    is_int(hy_htpasswd_verify(longpw, out), HY_HTPASSWD_MATCH); /* checked by crypt(3) */
}

static void test_verify(void)
{
    static const char *good[] = {
        "$apr1$abcdefgh$h9FWgUz3n9YxylKLlR5SQ/",
        "$1$abcdefgh$cHJi5PXp/ki/ktXzqlk6I1",
        "$5$abc$qsg6EHbUzHQzF1POlD7zUwBINSELQxypPaeDcZe6vH0",
        "$6$abc$IdWKNKTJEb8LxY7CGg8YBXlvtfZzFw7Mp/r6niK9YB2mdvgY..TKjv1T..8RadRt2qvUHYRLr/TsVArtr91iR1",
        "$y$j9T$3YFJlE/yuQJzGgCLH0loD.$RdlSsDkK6TtUF3uBTsc1JDCD3dStgixjJkBDaqMFND3",
        "$2b$05$5PZxieC1yROArtzeBPSgzOMvd3dQvQ89A9QZl3favq5DrbgEyLiQi",
        "{PLAIN}secret",
        "{SHA}5en6G6MezRroT3XKqkdPOmY/BfQ=",
        "{SSHA}1G904nLkTkGWjKNnQuB/hpWXC/hzYWx0c2FsdA==",
    };
    for (size_t i = 0; i < sizeof(good) / sizeof(good[0]); i++) {
        is_int(hy_htpasswd_verify("secret", good[i]), HY_HTPASSWD_MATCH);
        is_int(hy_htpasswd_verify("Secret", good[i]), HY_HTPASSWD_MISMATCH);
        is_int(hy_htpasswd_verify("", good[i]), HY_HTPASSWD_MISMATCH);
    }
    is_int(hy_htpasswd_verify("secret", "{PLAIN}secret2"), HY_HTPASSWD_MISMATCH);
    is_int(hy_htpasswd_verify("secret", "{SSHA}!!!"), HY_HTPASSWD_MISMATCH);
    is_int(hy_htpasswd_verify("secret", "{SSHA}"), HY_HTPASSWD_MISMATCH);
    is_int(hy_htpasswd_verify("secret", "{SHA}"), HY_HTPASSWD_MISMATCH);
    is_int(hy_htpasswd_verify("secret", "$apr1$"), HY_HTPASSWD_MISMATCH);
    int rc = hy_htpasswd_verify("secret", "");
    ok(rc != HY_HTPASSWD_MATCH);
    rc = hy_htpasswd_verify("secret", "$9$junk");
    ok(rc != HY_HTPASSWD_MATCH);
}

static bool basic(const char *v, char *out, const char **user, size_t *ulen, const char **pw)
{
    return hy_htpasswd_basic(v, strlen(v), out, user, ulen, pw);
}

static void test_basic(void)
{
    char out[128];
    const char *u, *p;
    size_t ul;
    ok(basic("Basic dXNlcjpwYXNz", out, &u, &ul, &p)); /* user:pass */
    is_strn(u, ul, "user");
    is_str(p, "pass");
    ok(basic("bAsIc    dXNlcjo=", out, &u, &ul, &p)); /* "user:" */
    is_strn(u, ul, "user");
    is_str(p, "");
    ok(!basic("Basic OnBhc3M=", out, &u, &ul, &p)); /* ":pass": no user */
    ok(!basic("Basic dXNlcg==", out, &u, &ul, &p)); /* "user": no colon */
    ok(!basic("Basic ", out, &u, &ul, &p));
    ok(!basic("Basic", out, &u, &ul, &p));
    ok(!basic("Bearer dXNlcjpwYXNz", out, &u, &ul, &p));
    ok(!basic("Basic dXN!cjpwYXNz", out, &u, &ul, &p));
    ok(!basic("Basic dXNlc", out, &u, &ul, &p)); /* 4n+1 */
    unsigned char raw[8];
    is_int(hy_base64_decode("YWI=", 4, raw), 2);
    is_int(hy_base64_decode("YWI", 3, raw), 2);
    is_int(hy_base64_decode("Y", 1, raw), -1);
}

int main(void)
{
    subtest("lines", test_lines);
    subtest("md5crypt", test_md5crypt);
    subtest("verify", test_verify);
    subtest("basic", test_basic);
    return done_testing();
}
