/* base64.c — see base64.h. One decoder, two alphabets: a value table per alphabet (0xff: not in it). */
#include <stdint.h>
#include "base64.h"

/* the value of c in the alphabet whose 62nd and 63rd characters are c62 and c63; -1 outside it */
static int value(unsigned char c, char c62, char c63)
{
    if (c >= 'A' && c <= 'Z')
        return c - 'A';
    if (c >= 'a' && c <= 'z')
        return c - 'a' + 26;
    if (c >= '0' && c <= '9')
        return c - '0' + 52;
    if (c == (unsigned char)c62)
        return 62;
    if (c == (unsigned char)c63)
        return 63;
    return -1;
}

static long decode(const char *s, size_t len, unsigned char *out, char c62, char c63)
{
    size_t n = 0;
    while (n < len && s[n] != '=') {
        if (value((unsigned char)s[n], c62, c63) < 0)
            return -1;
        n++;
    }
    if (n % 4 == 1)
        return -1;
    size_t o = 0;
    uint32_t acc = 0;
    int bits = 0;
    for (size_t i = 0; i < n; i++) {
        acc = (acc << 6) | (uint32_t)value((unsigned char)s[i], c62, c63);
        bits += 6;
        if (bits >= 8) {
            bits -= 8;
            out[o++] = (unsigned char)(acc >> bits);
        }
    }
    return (long)o;
}

long hy_base64_decode(const char *s, size_t len, unsigned char *out)
{
    return decode(s, len, out, '+', '/');
}

long hy_base64url_decode(const char *s, size_t len, unsigned char *out)
{
    return decode(s, len, out, '-', '_');
}
