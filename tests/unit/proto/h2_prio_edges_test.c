/* h2_prio_edges_test.c — the RFC 8941 grammar corners of the Priority field parser (h2_prio.c) that
 * h2_prio_test.c leaves out: keys with digits and "_-.*", Tokens with ":" and "/", negative and decimal numbers at
 * their digit limits, String escapes, Byte Sequences, Booleans, Parameters and Inner Lists that are valid (and
 * skipped) or malformed (the whole value refused). */
#include <string.h>
#include "../harness.h"
#include "proto/h2_prio.h"

/* urgency*2 + incremental after parsing from {7, true}, or -1 when the value is refused */
static int parse_n(const char *s, size_t n)
{
    hy_h2_prio_t p = {7, true};
    if (!hy_h2_prio_parse(s, n, &p))
        return -1;
    return p.urgency * 2 + p.incremental;
}

static int parse(const char *s)
{
    return parse_n(s, strlen(s));
}

static void test_keys(void)
{
    is_int(parse("a_1-b.c*=1, u=2"), 4); /* a key of every allowed kind of byte */
    is_int(parse("*x=1, u=3"), 6);       /* a key may start with "*" */
    is_int(parse("9=1"), -1);            /* ... not with a digit */
    is_int(parse("u=1;A"), -1);          /* a parameter's key is lowercase too */
    is_int(parse_n("u=1, i\0", 7), -1);  /* a NUL ends the key: what follows is not a comma */
}

static void test_numbers(void)
{
    is_int(parse("x=-5, u=1"), 2);
    is_int(parse("u=-0"), 0);                    /* -0 is 0: a valid urgency */
    is_int(parse("x=-"), -1);
    is_int(parse("x=-a"), -1);
    is_int(parse("x=123456789012.123, u=1"), 2); /* 12 integer and 3 fraction digits: the limits */
    is_int(parse("x=1234567890123.5"), -1);      /* 13 integer digits before the point */
    is_int(parse("x=123456789012.1234"), -1);    /* 4 fraction digits */
    is_int(parse("x=1."), -1);                   /* no fraction digit */
    is_int(parse("x=1.2.3"), -1);                /* a second point ends the number: not a comma */
    is_int(parse("x=999999999999999, u=1"), 2);  /* 15 digits */
}

static void test_strings_tokens_bytes_booleans(void)
{
    is_int(parse("x=\"a\\\\b\\\"c\", u=1"), 2); /* escaped backslash and quote */
    is_int(parse("x=\"a\\"), -1);               /* a backslash at the end */
    is_int(parse("x=\"a\\x\""), -1);            /* only \" and \\ are escapes */
    is_int(parse("x=\"\x7f\""), -1);            /* DEL is not printable */
    is_int(parse("x=\"\xc3\xa9\""), -1);        /* neither is a byte above 0x7e */
    is_int(parse("x=Abc:d/e!#$%&'*+-.^_`|~, u=5"), 10);
    is_int(parse("x=*tok, i"), 7);
    is_int(parse("x=:abc"), -1);                /* an unterminated Byte Sequence */
    is_int(parse("x=::, u=1"), 2);              /* an empty one */
    is_int(parse("x=?"), -1);
    is_int(parse("i=?1;p=?0"), 7);
    is_int(parse("x=@"), -1);                   /* no Bare Item starts with "@" */
    is_int(parse("x="), -1);
}

static void test_params_and_lists(void)
{
    is_int(parse("u=1;a=?1;b;c=\"s\";d=:AA==:, i"), 3);
    is_int(parse("u=1;a=@"), -1);
    is_int(parse("u=1; a=1"), 2);                /* SP after ";" */
    is_int(parse("x=(), u=6"), 12);              /* an empty Inner List */
    is_int(parse("x=( a;q=1  b );r=2, u=0"), 0); /* items with parameters, the list's own parameters */
    is_int(parse("x=(a,b)"), -1);                /* items are separated by SP */
    is_int(parse("x=(@)"), -1);
    is_int(parse("x=(a;B)"), -1);
    is_int(parse("x=("), -1);
    is_int(parse("x=( "), -1);
    is_int(parse("x=();Q"), -1);
    is_int(parse("i;A"), -1);                    /* a bare key's parameters */
    is_int(parse("i;a=1, u=1"), 3);
}

static void test_separators(void)
{
    is_int(parse("u=1,\t i"), 3); /* OWS after the comma: SP and HTAB */
    is_int(parse("u=1\t, i"), 3); /* ... and before it */
    is_int(parse("u=1, "), -1);   /* a trailing comma with OWS */
    is_int(parse("   "), 6);      /* only SP: an empty Dictionary */
}

int main(void)
{
    subtest("keys", test_keys);
    subtest("numbers", test_numbers);
    subtest("strings, tokens, byte sequences, booleans", test_strings_tokens_bytes_booleans);
    subtest("parameters and inner lists", test_params_and_lists);
    subtest("separators", test_separators);
    return done_testing();
}
