/* lexer_test.c — the nginx tokenizer: words, quotes, escapes, comments, ${var}, line numbers and every
 * lexical error message (texts checked against nginx 1.22's own -t output). */
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <fcntl.h>
#include "../harness.h"
#include "conf/conf.h"
#include "conf/compat.h"
#include "conf/lexer.h"

/* The parser (linked for hy_conf_error) looks directives up here; the lexer test needs none. */
hy_module_t *hy_modules[] = {NULL};
int hy_modules_init(void) { return 0; }
const hy_directive_t *hy_modules_find(const char *name, size_t len, hy_module_t **mod) { return NULL; }
const hy_compat_t *hy_compat_find(const char *name, size_t len) { return NULL; }
const hy_compat_t hy_compat_directives[] = {{NULL, 0, NULL}};

static char msg_buf[16384], level_buf[16];
static char *last_msg = msg_buf, *last_level = level_buf;

static void hook(const char *level, const char *msg)
{
    snprintf(level_buf, sizeof(level_buf), "%s", level);
    snprintf(msg_buf, sizeof(msg_buf), "%s", msg);
}

/* Tokenize `text` as file "t.conf" (or -g parameters when cmdline) and render every statement as
 * "[w1][w2];" / "[w]{" / "}" separated by spaces, ending with "EOF" or "ERR". */
static char out[65536];
static unsigned out_line;

static const char *lex_all(const char *text, size_t len, bool cmdline)
{
    hy_pool_t *pool = hy_pool_create(4096);
    hy_conf_t cf = {.pool = pool, .file = cmdline ? NULL : "t.conf", .line = cmdline ? 0 : 1};
    cf.args = hy_array_create(pool, 4, sizeof(hy_str_t));
    hy_lexer_t lx;
    hy_lexer_init(&lx, text, len, cmdline);
    cf._in = &lx;
    cf.in_cmdline = cmdline;
    last_msg[0] = '\0';
    size_t o = 0;
    out[0] = '\0';
    int saved = dup(2);
    int devnull = open("/dev/null", O_WRONLY);
    dup2(devnull, 2);
    close(devnull);
    for (;;) {
        int rc = hy_lexer_next(&cf, &lx);
        size_t n;
        hy_str_t *w = hy_conf_args(&cf, &n);
        for (size_t i = 0; i < n; i++) {
            if (w[i].ptr[w[i].len] != '\0')
                o += (size_t)snprintf(out + o, sizeof(out) - o, "<not NUL-terminated>");
            o += (size_t)snprintf(out + o, sizeof(out) - o, "[%.*s]", (int)w[i].len, w[i].ptr);
        }
        static const char *const ends[] = {
            [HY_LEX_OK] = "; ", [HY_LEX_BLOCK_START] = "{ ", [HY_LEX_BLOCK_DONE] = "} ", [HY_LEX_EOF] = "EOF"};
        const char *end = rc == HY_LEX_ERROR ? "ERR" : ends[rc];
        o += (size_t)snprintf(out + o, sizeof(out) - o, "%s", end);
        if (rc == HY_LEX_EOF || rc == HY_LEX_ERROR || o >= sizeof(out) - 1)
            break;
    }
    fflush(stderr);
    dup2(saved, 2);
    close(saved);
    out_line = cf.line;
    hy_pool_destroy(pool);
    return out;
}

static const char *lex(const char *text) { return lex_all(text, strlen(text), false); }

static void test_words(void)
{
    is_str(lex(""), "EOF");
    is_str(lex("  \n\t \r\n"), "EOF");
    is_str(lex("a b;\nc {\n d;\n}\n"), "[a][b]; [c]{ [d]; } EOF");
    is_str(lex("a\tb\r\nc;"), "[a][b][c]; EOF");
    is_str(lex("a;b;"), "[a]; [b]; EOF");
    is_str(lex("location /x{}"), "[location][/x]{ } EOF");
    is_str(lex("a b};"), "[a][b}]; EOF"); /* "}" only closes a block at the start of a word */
    is_str(lex("{}"), "ERR");
}

static void test_quotes(void)
{
    is_str(lex("a \"b c\" 'd e';"), "[a][b c][d e]; EOF");
    is_str(lex("a \"\" '';"), "[a][][]; EOF");
    is_str(lex("a \"x;y{z}#w\";"), "[a][x;y{z}#w]; EOF");
    is_str(lex("a \"multi\nline\";"), "[a][multi\nline]; EOF");
    is_str(lex("a \"b\"{"), "[a][b]{ EOF");
    is_str(lex("a 'it''s';"), "[a][it]ERR");
    is_str(last_msg, "unexpected \"'\" in t.conf:1");
    /* a quote inside an unquoted word is an ordinary character */
    is_str(lex("a b\"c\";"), "[a][b\"c\"]; EOF");
    /* ")" may follow a quoted word (if conditions) and starts a new word */
    is_str(lex("if ($a = \"b\") {"), "[if][($a][=][b][)]{ EOF");
}

static void test_escapes(void)
{
    is_str(lex("a \"x\\\"y\" 'p\\'q';"), "[a][x\"y][p'q]; EOF");
    is_str(lex("a \"t\\tn\\nr\\r\";"), "[a][t\tn\nr\r]; EOF");
    is_str(lex("a \"back\\\\slash\" \"other\\q\" \"\\$x\";"), "[a][back\\slash][other\\q][\\$x]; EOF");
    /* escapes are decoded in unquoted words too; an escaped separator does not end the word */
    is_str(lex("a x\\\"y b\\ c d\\;e;"), "[a][x\"y][b\\ c][d\\;e]; EOF");
    is_str(lex("a \\\"b\\\";"), "[a][\"b\"]; EOF");
    is_str(lex("a \\\\;"), "[a][\\]; EOF");
}

static void test_comments(void)
{
    is_str(lex("# c1\na; # c2 ;\nb#c;"), "[a]; [b#c]; EOF");
    is_str(lex("a # comment } ;\n b;"), "[a][b]; EOF");
    is_str(lex("a \"#not\";#x"), "[a][#not]; EOF");
    is_str(lex("#only"), "EOF");
}

static void test_variables(void)
{
    is_str(lex("return 200 ${host}x$uri;"), "[return][200][${host}x$uri]; EOF");
    is_str(lex("a \"${b}\";"), "[a][${b}]; EOF");
    is_str(lex("a ${{b};"), "[a][${{b}]; EOF");
    is_str(lex("a $b{"), "[a][$b]{ EOF"); /* only "{" right after "$" is part of the word */
    is_str(lex("a x${b}{}"), "[a][x${b}]{ } EOF");
}

static void test_lines(void)
{
    lex("a;\nb;\n\nc");
    is_str(last_msg, "unexpected end of file, expecting \";\" or \"}\" in t.conf:4");
    lex("a\nb\nc }");
    is_str(last_msg, "unexpected \"}\" in t.conf:3");
    lex("a;\n# x\n;");
    is_str(last_msg, "unexpected \";\" in t.conf:3");
    lex("a;\n\n{");
    is_str(last_msg, "unexpected \"{\" in t.conf:3");
    is_str(last_level, "emerg");
    lex("a;\nb\n\n");
    is_int(out_line, 4);
    is_str(last_msg, "unexpected end of file, expecting \";\" or \"}\" in t.conf:4");
    lex("a;\n\"b\"c;");
    is_str(last_msg, "unexpected \"c\" in t.conf:2");
    lex("a \"b\n\nc");
    is_str(last_msg, "unexpected end of file, expecting \";\" or \"}\" in t.conf:3");
    lex("a;\n\"b\"}");
    is_str(last_msg, "unexpected \"}\" in t.conf:2");
    lex("x;\n \"b\"");
    is_str(last_msg, "unexpected end of file, expecting \";\" or \"}\" in t.conf:2");
}

static char *repeat(char c, size_t n, const char *prefix, const char *suffix)
{
    size_t pl = strlen(prefix), sl = strlen(suffix);
    char *s = malloc(pl + n + sl + 1);
    memcpy(s, prefix, pl);
    memset(s + pl, c, n);
    memcpy(s + pl + n, suffix, sl + 1);
    return s;
}

static void test_too_long(void)
{
    /* boundaries measured with nginx 1.22: a 4095-byte word passes, 4096 fails; quoted 4094 passes */
    char *s = repeat('x', 4095, "a\nb ", ";");
    lex(s);
    is_strn(out, 10, "[a][b][xxx");
    free(s);
    s = repeat('x', 4096, "a\nb ", ";");
    is_str(lex(s), "[a][b]ERR");
    is_str(last_msg, "too long parameter \"xxxxxxxxxx...\" started in t.conf:2");
    free(s);
    s = repeat('x', 4094, "a \"", "\";");
    ok(strstr(lex(s), "ERR") == NULL);
    free(s);
    s = repeat('x', 4095, "a \"", "\";");
    lex(s);
    is_str(last_msg, "too long parameter \"xxxxxxxxxx...\" started in t.conf:1");
    free(s);
    s = repeat('x', 5000, "a \"\n", "\";");
    lex(s);
    is_str(last_msg, "too long parameter, probably missing terminating \"\"\" character in t.conf:1");
    free(s);
    s = repeat('x', 5000, "a\n\n'", "';");
    lex(s);
    is_str(last_msg, "too long parameter, probably missing terminating \"'\" character in t.conf:3");
    free(s);
    /* nginx quirk: a comment is held in the same buffer */
    s = repeat('x', 5000, "a;\n#", "\n");
    lex(s);
    is_str(last_msg, "too long parameter \"#xxxxxxxxx...\" started in t.conf:2");
    free(s);
    /* -g parameters have no such limit */
    s = repeat('x', 5000, "a ", ";");
    ok(strstr(lex_all(s, strlen(s), true), "ERR") == NULL);
    free(s);
}

static void test_cmdline(void)
{
    is_str(lex_all("daemon off; master_process off;", 31, true), "[daemon][off]; [master_process][off]; EOF");
    lex_all("daemon off", 10, true);
    is_str(last_msg, "unexpected end of parameter, expecting \";\" in command line");
}

static void test_binary(void)
{
    /* embedded NUL bytes are ordinary characters: the word keeps its full length */
    static const char text[] = "a b\0c;";
    hy_pool_t *pool = hy_pool_create(1024);
    hy_conf_t cf = {.pool = pool, .file = "t.conf", .line = 1};
    cf.args = hy_array_create(pool, 4, sizeof(hy_str_t));
    hy_lexer_t lx;
    hy_lexer_init(&lx, text, sizeof(text) - 1, false);
    cf._in = &lx;
    is_int(hy_lexer_next(&cf, &lx), HY_LEX_OK);
    size_t n;
    hy_str_t *w = hy_conf_args(&cf, &n);
    is_int(n, 2);
    is_int(w[1].len, 3);
    ok(memcmp(w[1].ptr, "b\0c", 4) == 0);
    is_int(hy_lexer_next(&cf, &lx), HY_LEX_EOF);
    hy_pool_destroy(pool);
}

int main(void)
{
    hy_conf_log_hook = hook;
    subtest("words and statements", test_words);
    subtest("quoted strings", test_quotes);
    subtest("backslash escapes", test_escapes);
    subtest("comments", test_comments);
    subtest("$var and ${var}", test_variables);
    subtest("line numbers and errors", test_lines);
    subtest("too long parameter", test_too_long);
    subtest("-g command line", test_cmdline);
    subtest("binary input", test_binary);
    return done_testing();
}
