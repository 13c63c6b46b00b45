/* h2_prio_test.c — RFC 9218 Priority field values: u and i read, defaults, parameters ignored when out of range
 * or of another type, unknown members skipped, repeated keys (last wins), and values that are not a Dictionary
 * ignored as a whole. */
#include <string.h>
#include "../harness.h"
#include "proto/h2_prio.h"

/* urgency*2 + incremental after parsing from {7, true}, or -1 when the value is refused */
static int parse(const char *s)
{
    hy_h2_prio_t p = {7, true};
    if (!hy_h2_prio_parse(s, strlen(s), &p))
        return -1;
    return p.urgency * 2 + p.incremental;
}

static void test_valid(void)
{
    is_int(parse(""), 6);
    is_int(parse("u=0"), 0);
    is_int(parse("u=7"), 14);
    is_int(parse("i"), 7);
    is_int(parse("i=?1"), 7);
    is_int(parse("i=?0"), 6);
    is_int(parse("u=1, i"), 3);
    is_int(parse("  u=1,i"), 3);
    is_int(parse("u=1 ,\ti "), 3);
    is_int(parse("i, u=5"), 11);
    is_int(parse("u=2;foo=bar, i;x"), 5);
}

static void test_ignored_parameters(void)
{
    is_int(parse("u=8"), 6);          /* out of range: the default */
    is_int(parse("u=-1, i"), 7);      /* ... while i still counts */
    is_int(parse("u=1.5"), 6);        /* a Decimal */
    is_int(parse("u=\"1\""), 6);      /* a String */
    is_int(parse("u=high"), 6);       /* a Token */
    is_int(parse("u=?1"), 6);         /* a Boolean */
    is_int(parse("u=(1 2)"), 6);      /* an Inner List */
    is_int(parse("i=1"), 6);          /* i is a Boolean */
    is_int(parse("i=tok, u=0"), 0);
    is_int(parse("foo=bar, u=1"), 2); /* unknown keys */
    is_int(parse("x=:AAA=:, y=(a b);p=1, z=\"q\\\"s\", u=4"), 8);
    is_int(parse("u=1, u=2"), 4);     /* the last member counts */
    is_int(parse("u=1, u=9"), 6);     /* ... even when it is then ignored */
    is_int(parse("U=1"), -1);         /* keys are lowercase */
}

static void test_refused(void)
{
    is_int(parse("u=1,"), -1);        /* trailing comma */
    is_int(parse("u=1 i"), -1);       /* no comma */
    is_int(parse(",u=1"), -1);
    is_int(parse("u="), -1);
    is_int(parse("u=1;"), -1);
    is_int(parse("u=(1 2"), -1);      /* unterminated Inner List */
    is_int(parse("x=\"abc"), -1);     /* unterminated String */
    is_int(parse("x=?2"), -1);
    is_int(parse("x=:a*:"), -1);
    is_int(parse("x=1234567890123456"), -1);
    is_int(parse("x=1.2345"), -1);
    is_int(parse("\tu=1"), -1);       /* only SP may lead */
    is_int(parse("u=1\x01"), -1);
}

int main(void)
{
    subtest("valid values", test_valid);
    subtest("ignored parameters", test_ignored_parameters);
    subtest("refused values", test_refused);
    return done_testing();
}
