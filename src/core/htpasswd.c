/* htpasswd.c — htpasswd lines and password schemes (see htpasswd.h). */
#include <crypt.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <openssl/crypto.h>
#include <openssl/evp.h>
#include "htpasswd.h"
#include "base64.h"

bool hy_htpasswd_find(const char *buf, size_t len, const char *user, size_t ulen, const char **hash, size_t *hlen)
{
    size_t i = 0;
    while (i < len) {
        const char *nl = memchr(buf + i, '\n', len - i);
        size_t end = nl ? (size_t)(nl - buf) : len;
        const char *line = buf + i;
        size_t n = end - i;
        /* nginx: '#' or CR first skips the line; the user name, then ':' exactly */
        if (n > ulen && line[0] != '#' && line[0] != '\r' && memcmp(line, user, ulen) == 0 && line[ulen] == ':') {
            const char *p = line + ulen + 1, *e = line + n;
            const char *q = p;
            while (q < e && *q != ':' && *q != '\r')
                q++;
            *hash = p;
            *hlen = (size_t)(q - p);
            return true;
        }
        i = end + 1;
    }
    return false;
}

bool hy_htpasswd_basic(const char *value, size_t len, char *out, const char **user, size_t *ulen, const char **password)
{
    if (len < 6 || strncasecmp(value, "Basic ", 6) != 0)
        return false;
    value += 6, len -= 6;
    while (len && *value == ' ')
        value++, len--;
    if (len == 0)
        return false;
    long n = hy_base64_decode(value, len, (unsigned char *)out);
    if (n < 0)
        return false;
    out[n] = '\0';
    const char *colon = memchr(out, ':', (size_t)n);
    if (colon == NULL || colon == out)
        return false;
    *user = out;
    *ulen = (size_t)(colon - out);
    *password = colon + 1;
    return true;
}

/* ---- digests ---- */

static bool digest(const EVP_MD *md, const void *a, size_t alen, const void *b, size_t blen, unsigned char *out)
{
    EVP_MD_CTX *ctx = EVP_MD_CTX_new();
    bool ok = ctx && EVP_DigestInit_ex(ctx, md, NULL) == 1 && EVP_DigestUpdate(ctx, a, alen) == 1 &&
              EVP_DigestUpdate(ctx, b, blen) == 1 && EVP_DigestFinal_ex(ctx, out, NULL) == 1;
    EVP_MD_CTX_free(ctx);
    return ok;
}

static const char itoa64[] = "./0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz";

static char *to64(char *p, uint32_t v, int n)
{
    while (n-- > 0) {
        *p++ = itoa64[v & 0x3f];
        v >>= 6;
    }
    return p;
}

/* Poul-Henning Kamp's MD5 crypt, as described for FreeBSD's $1$ and Apache's $apr1$ (only the magic differs) */
void hy_htpasswd_md5crypt(const char *pw, const char *magic, const char *salt, char out[HY_APR1_MAX])
{
    size_t mlen = strlen(magic), plen = strlen(pw);
    if (strncmp(salt, magic, mlen) == 0)
        salt += mlen;
    size_t slen = 0;
    while (slen < 8 && salt[slen] && salt[slen] != '$')
        slen++;
    unsigned char fin[16];
    EVP_MD_CTX *ctx = EVP_MD_CTX_new();
    const EVP_MD *md5 = EVP_md5();
    out[0] = '\0';
    if (ctx == NULL)
        return;
    /* the alternate sum: password, salt, password */
    EVP_DigestInit_ex(ctx, md5, NULL);
    EVP_DigestUpdate(ctx, pw, plen);
    EVP_DigestUpdate(ctx, salt, slen);
    EVP_DigestUpdate(ctx, pw, plen);
    EVP_DigestFinal_ex(ctx, fin, NULL);
    /* the main sum: password, magic, salt, then the alternate sum over the password's length */
    EVP_DigestInit_ex(ctx, md5, NULL);
    EVP_DigestUpdate(ctx, pw, plen);
    EVP_DigestUpdate(ctx, magic, mlen);
    EVP_DigestUpdate(ctx, salt, slen);
    for (size_t i = plen; i > 0; i -= i > 16 ? 16 : i)
        EVP_DigestUpdate(ctx, fin, i > 16 ? 16 : i);
    /* then, for each bit of the length from the lowest: a zero byte when set, the password's first byte when not */
    for (size_t i = plen; i; i >>= 1)
        EVP_DigestUpdate(ctx, (i & 1) ? "" : pw, 1);
    EVP_DigestFinal_ex(ctx, fin, NULL);
    /* 1000 rounds to slow it down */
    for (int r = 0; r < 1000; r++) {
        EVP_DigestInit_ex(ctx, md5, NULL);
        if (r & 1)
            EVP_DigestUpdate(ctx, pw, plen);
        else
            EVP_DigestUpdate(ctx, fin, 16);
        if (r % 3)
            EVP_DigestUpdate(ctx, salt, slen);
        if (r % 7)
            EVP_DigestUpdate(ctx, pw, plen);
        if (r & 1)
            EVP_DigestUpdate(ctx, fin, 16);
        else
            EVP_DigestUpdate(ctx, pw, plen);
        EVP_DigestFinal_ex(ctx, fin, NULL);
    }
    EVP_MD_CTX_free(ctx);
    char *p = out;
    memcpy(p, magic, mlen), p += mlen;
    memcpy(p, salt, slen), p += slen;
    *p++ = '$';
    static const int order[5][3] = {{0, 6, 12}, {1, 7, 13}, {2, 8, 14}, {3, 9, 15}, {4, 10, 5}};
    for (int g = 0; g < 5; g++)
        p = to64(p, (uint32_t)fin[order[g][0]] << 16 | (uint32_t)fin[order[g][1]] << 8 | fin[order[g][2]], 4);
    p = to64(p, fin[11], 2);
    *p = '\0';
}

static int same(const char *a, const char *b)
{
    size_t n = strlen(a);
    return n == strlen(b) && CRYPTO_memcmp(a, b, n) == 0 ? HY_HTPASSWD_MATCH : HY_HTPASSWD_MISMATCH;
}

/* "{SHA}" base64(SHA-1(pw)) and "{SSHA}" base64(SHA-1(pw salt) salt): computed again from the stored salt and
 * compared as text, as nginx does */
static int verify_sha(const char *pw, const char *hash, bool salted)
{
    const char *enc = hash + (salted ? 6 : 5);
    size_t elen = strlen(enc);
    unsigned char *raw = malloc(elen * 3 / 4 + 24);
    char *text = malloc(elen * 2 + 64);
    int rc = HY_HTPASSWD_MISMATCH;
    if (raw == NULL || text == NULL)
        goto out;
    long n = 20;
    if (salted) {
        n = hy_base64_decode(enc, elen, raw);
        if (n < 20)
            n = 20; /* nginx: an undecodable or short value has no salt (and will not match) */
    }
    if (!digest(EVP_sha1(), pw, strlen(pw), raw + 20, (size_t)n - 20, raw))
        goto out;
    size_t plen = salted ? 6 : 5;
    memcpy(text, hash, plen);
    EVP_EncodeBlock((unsigned char *)text + plen, raw, (int)n);
    rc = same(text, hash);
out:
    free(raw);
    free(text);
    return rc;
}

int hy_htpasswd_verify(const char *pw, const char *hash)
{
    if (strncmp(hash, "$apr1$", 6) == 0) {
        char out[HY_APR1_MAX];
        hy_htpasswd_md5crypt(pw, "$apr1$", hash, out);
        return same(out, hash);
    }
    if (strncmp(hash, "{PLAIN}", 7) == 0)
        return same(pw, hash + 7);
    if (strncmp(hash, "{SSHA}", 6) == 0)
        return verify_sha(pw, hash, true);
    if (strncmp(hash, "{SHA}", 5) == 0)
        return verify_sha(pw, hash, false);
    struct crypt_data *data = calloc(1, sizeof(*data));
    if (data == NULL)
        return HY_HTPASSWD_ERROR;
    /* crypt_r as nginx's crypt(): libcrypt answers a bad setting with a failure token ("*0"), never equal */
    const char *out = crypt_r(pw, hash, data);
    int rc = out == NULL ? HY_HTPASSWD_ERROR : same(out, hash);
    free(data);
    return rc;
}
