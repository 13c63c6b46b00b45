/* accept_encoding_test.c — Accept-Encoding parsing, q-values and the choice of a coding. */
#include "../harness.h"
#include "filters/accept_encoding.h"

static const int prefs[] = {HY_CODING_BR, HY_CODING_ZSTD, HY_CODING_GZIP};
#define ALL ((1u << HY_CODING_GZIP) | (1u << HY_CODING_BR) | (1u << HY_CODING_ZSTD))
#define GZ (1u << HY_CODING_GZIP)

static hy_accept_encoding_t parse(const char *s)
{
    hy_accept_encoding_t ae;
    hy_ae_init(&ae);
    hy_ae_parse(&ae, s, strlen(s));
    return ae;
}

static int choose(const char *s, unsigned allowed)
{
    hy_accept_encoding_t ae = parse(s);
    return hy_ae_choose(&ae, allowed, prefs, 3);
}

static void test_qvalue(void)
{
    is_int(hy_ae_parse_qvalue("0", 1), 0);
    is_int(hy_ae_parse_qvalue("1", 1), 1000);
    is_int(hy_ae_parse_qvalue("0.5", 3), 500);
    is_int(hy_ae_parse_qvalue("0.001", 5), 1);
    is_int(hy_ae_parse_qvalue("0.000", 5), 0);
    is_int(hy_ae_parse_qvalue("1.000", 5), 1000);
    is_int(hy_ae_parse_qvalue("1.", 2), 1000);
    is_int(hy_ae_parse_qvalue("1.001", 5), -1);
    is_int(hy_ae_parse_qvalue("0.0001", 6), -1);
    is_int(hy_ae_parse_qvalue("2", 1), -1);
    is_int(hy_ae_parse_qvalue(".5", 2), -1);
    is_int(hy_ae_parse_qvalue("0.a", 3), -1);
    is_int(hy_ae_parse_qvalue("", 0), -1);
}

static void test_parse(void)
{
    hy_accept_encoding_t ae = parse("gzip, deflate, br");
    is_int(hy_ae_q(&ae, HY_CODING_GZIP), 1000);
    is_int(hy_ae_q(&ae, HY_CODING_BR), 1000);
    is_int(hy_ae_q(&ae, HY_CODING_ZSTD), 0);
    is_int(hy_ae_q(&ae, HY_CODING_IDENTITY), 1000);

    ae = parse("gzip;q=0.5 , br ; q=0.8,zstd;Q=0");
    is_int(hy_ae_q(&ae, HY_CODING_GZIP), 500);
    is_int(hy_ae_q(&ae, HY_CODING_BR), 800);
    is_int(hy_ae_q(&ae, HY_CODING_ZSTD), 0);

    ae = parse("GZIP");
    is_int(hy_ae_q(&ae, HY_CODING_GZIP), 1000);
    ae = parse("x-gzip");
    is_int(hy_ae_q(&ae, HY_CODING_GZIP), 1000);
    ae = parse("gzipx, xgzip, gzip-foo");
    is_int(hy_ae_q(&ae, HY_CODING_GZIP), 0);

    ae = parse("*");
    is_int(hy_ae_q(&ae, HY_CODING_GZIP), 1000);
    is_int(hy_ae_q(&ae, HY_CODING_ZSTD), 1000);
    ae = parse("*;q=0, gzip");
    is_int(hy_ae_q(&ae, HY_CODING_GZIP), 1000);
    is_int(hy_ae_q(&ae, HY_CODING_BR), 0);
    is_int(hy_ae_q(&ae, HY_CODING_IDENTITY), 0);
    ae = parse("identity;q=0");
    is_int(hy_ae_q(&ae, HY_CODING_IDENTITY), 0);
    is_int(hy_ae_q(&ae, HY_CODING_GZIP), 0);

    ae = parse("gzip;q=abc");
    is_int(hy_ae_q(&ae, HY_CODING_GZIP), 0);
    ae = parse("gzip;q=0.5;level=3");
    is_int(hy_ae_q(&ae, HY_CODING_GZIP), 500);
    ae = parse("gzip junk");
    is_int(hy_ae_q(&ae, HY_CODING_GZIP), 0);
    ae = parse("gzip;q=0, gzip;q=0.3"); /* listed twice: the highest wins */
    is_int(hy_ae_q(&ae, HY_CODING_GZIP), 300);
    ae = parse(",,, ,gzip,,");
    is_int(hy_ae_q(&ae, HY_CODING_GZIP), 1000);
    ae = parse("");
    ok(ae.present);
    is_int(hy_ae_q(&ae, HY_CODING_GZIP), 0);

    /* two fields */
    hy_ae_init(&ae);
    ok(!ae.present);
    hy_ae_parse(&ae, "br;q=0.1", 8);
    hy_ae_parse(&ae, "gzip", 4);
    is_int(hy_ae_q(&ae, HY_CODING_BR), 100);
    is_int(hy_ae_q(&ae, HY_CODING_GZIP), 1000);
}

static void test_choose(void)
{
    is_int(choose("gzip, deflate, br, zstd", ALL), HY_CODING_BR);
    is_int(choose("gzip, zstd", ALL), HY_CODING_ZSTD);
    is_int(choose("gzip, deflate", ALL), HY_CODING_GZIP);
    is_int(choose("gzip, br", GZ), HY_CODING_GZIP);
    is_int(choose("br", GZ), -1);
    is_int(choose("gzip;q=1, br;q=0.5", ALL), HY_CODING_GZIP); /* client's q first */
    is_int(choose("gzip;q=0", ALL), -1);
    is_int(choose("deflate", ALL), -1);
    is_int(choose("*", GZ), HY_CODING_GZIP);
    is_int(choose("*", ALL), HY_CODING_BR);
    is_int(choose("*, br;q=0", ALL), HY_CODING_ZSTD);
    is_int(choose("identity", ALL), -1);
    is_int(choose("", ALL), -1);
    is_int(choose("gzip", 0), -1);
}

int main(void)
{
    subtest("qvalue", test_qvalue);
    subtest("parse", test_parse);
    subtest("choose", test_choose);
    return done_testing();
}
