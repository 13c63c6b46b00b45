/* ssi_parse_test.c — the SSI scanner: commands and text come out the same whatever the split of the input (every
 * split point, and one byte at a time), parameters and quoting, errors skip to "-->", limits, pausing. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "../harness.h"
#include "filters/ssi_parse.h"

/* the events rendered as one string: text as is, commands as {name|p=v|p=v}, errors as {!name} */
typedef struct sink {
    char out[8192];
    size_t len;
    int pause_on; /* pause after the n-th command (1-based), 0: never */
    int cmds;
} sink_t;

static void add(sink_t *s, const char *p, size_t n)
{
    if (s->len + n < sizeof(s->out)) {
        memcpy(s->out + s->len, p, n);
        s->len += n;
        s->out[s->len] = '\0';
    }
}

static void on_text(void *arg, const char *p, size_t n)
{
    add(arg, p, n);
}

static int on_cmd(void *arg, const hy_ssi_cmd_t *cmd)
{
    sink_t *s = arg;
    add(s, cmd->error ? "{!" : "{", cmd->error ? 2 : 1);
    add(s, cmd->name.ptr, cmd->name.len);
    for (size_t i = 0; i < cmd->nparams; i++) {
        add(s, "|", 1);
        add(s, cmd->params[i].name.ptr, cmd->params[i].name.len);
        add(s, "=", 1);
        add(s, cmd->params[i].value.ptr, cmd->params[i].value.len);
    }
    add(s, "}", 1);
    return ++s->cmds == s->pause_on;
}

static char values[HY_SSI_MAX_PARAMS * 65];

/* scan `in` split at `at` (and one byte at a time when at < 0) */
static const char *scan(const char *in, long at, size_t value_len)
{
    static sink_t s;
    memset(&s, 0, sizeof(s));
    hy_ssi_parser_t p;
    hy_ssi_parser_init(&p, value_len, values, on_text, on_cmd, &s);
    size_t n = strlen(in);
    if (at < 0) {
        for (size_t i = 0; i < n; i++)
            hy_ssi_feed(&p, in + i, 1);
    } else {
        hy_ssi_feed(&p, in, (size_t)at);
        hy_ssi_feed(&p, in + at, n - (size_t)at);
    }
    hy_ssi_finish(&p);
    return s.out;
}

/* the same result for every split */
static void same(const char *in, const char *want)
{
    size_t n = strlen(in);
    for (long at = -1; at <= (long)n; at++) {
        const char *got = scan(in, at, 64);
        if (strcmp(got, want) != 0) {
            is_str(got, want);
            printf("# input \"%s\" split at %ld\n", in, at);
            return;
        }
    }
    ok(1);
}

static void test_commands(void)
{
    same("plain text", "plain text");
    same("a<!--#echo var=\"x\" -->b", "a{echo|var=x}b");
    same("<!--# include virtual=\"/a?b=c\" wait='yes'-->", "{include|virtual=/a?b=c|wait=yes}");
    same("<!--#endif-->", "{endif}");
    same("<!--#else -->x<!--#endif -->", "{else}x{endif}");
    same("<!--#set var = \"v\"  value= 'a b' -->", "{set|var=v|value=a b}");
    same("<!--#set var=\"v\" value=\"q\\\"uote\" -->", "{set|var=v|value=q\"uote}");
    same("<!--#set var=\"v\" value=\"back\\slash\" -->", "{set|var=v|value=back\\slash}");
    same("<!--#set var=\"v\" value=\"a-->b\" -->", "{set|var=v|value=a-->b}");
    same("<!--#echo var=\"\" -->", "{echo|var=}");
}

static void test_not_commands(void)
{
    same("<!-- a comment -->", "<!-- a comment -->");
    same("<<!--#x -->", "<{x}");
    same("<!<!-<!--<!--#x -->", "<!<!-<!--{x}");
    same("a < b <! c <!- d", "a < b <! c <!- d");
    same("tail <!--", "tail <!--"); /* held back, then delivered at the end */
    same("tail <!--#echo var", "tail "); /* an unterminated command is dropped */
}

static void test_errors(void)
{
    same("a<!--# -->b", "a{!}b");
    same("a<!--#echo var=x -->b", "a{!echo}b");
    same("a<!--#echo var=\"x\" - ->b<!--#y -->c", "a{!echo}c"); /* skipped to the next "-->" */
    same("a<!--#echo ==\"x\" --->b", "a{!echo}b");
    same("a<!--#echo var=\"x\" --->b", "a{!echo}b"); /* "-" then "->": not the end; skipped to the next "-->" */
    /* limits: name length, parameter count, value length */
    char name[64];
    memset(name, 'n', 33);
    strcpy(name + 33, " -->");
    char in[128];
    snprintf(in, sizeof(in), "<!--#%s", name);
    same(in, "{!nnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnn}");
    ok(strcmp(scan("<!--#s v=\"12345\" -->", -1, 4), "{!s}") == 0);
    ok(strcmp(scan("<!--#s v=\"1234\" -->", -1, 4), "{s|v=1234}") == 0);
    char many[512] = "<!--#m";
    for (int i = 0; i < 17; i++)
        strcat(many, " a=\"1\"");
    strcat(many, " -->x");
    ok(strcmp(scan(many, 7, 64), "{!m}x") == 0);
}

static void test_pause(void)
{
    sink_t s = {.pause_on = 1};
    hy_ssi_parser_t p;
    hy_ssi_parser_init(&p, 64, values, on_text, on_cmd, &s);
    const char *in = "a<!--#one -->b<!--#two -->c";
    size_t n = strlen(in);
    size_t took = hy_ssi_feed(&p, in, n);
    is_int(took, strlen("a<!--#one -->"));
    is_str(s.out, "a{one}");
    took += hy_ssi_feed(&p, in + took, n - took);
    is_int(took, n);
    hy_ssi_finish(&p);
    is_str(s.out, "a{one}b{two}c");
}

int main(void)
{
    subtest("commands, any split", test_commands);
    subtest("text that is not a command", test_not_commands);
    subtest("errors and limits", test_errors);
    subtest("pause after a command", test_pause);
    return done_testing();
}
