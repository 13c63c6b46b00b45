/* htpasswd_fuzz.c — libFuzzer driver: htpasswd lines and the Authorization header (core/htpasswd.h). The input's
 * first line is an Authorization value, the rest an htpasswd file. A found hash lies inside the file, ends before
 * any ':', CR or LF, and the cheap schemes ($apr1$, {PLAIN}, {SHA}, {SSHA}) verify without crashing (crypt(3)'s
 * are left out: a bcrypt cost in the input would make one run take minutes). */
#include <string.h>

#include "fuzz.h"
#include "core/htpasswd.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    const char *in = (const char *)data;
    const char *nl = memchr(in, '\n', size);
    size_t hlen = nl ? (size_t)(nl - in) : size;
    const char *file = nl ? nl + 1 : in + size;
    size_t flen = size - (size_t)(file - in);
    char *header = malloc(hlen + 1);
    memcpy(header, in, hlen);
    char *out = malloc(hlen + 4);
    const char *user = NULL, *password = NULL;
    size_t ulen = 0;
    if (hy_htpasswd_basic(header, hlen, out, &user, &ulen, &password)) {
        CHECK(ulen > 0 && user == out && password > user + ulen && password[-1] == ':');
        CHECK(memchr(user, ':', ulen) == NULL);
        const char *hash;
        size_t n;
        if (hy_htpasswd_find(file, flen, user, ulen, &hash, &n)) {
            CHECK(hash >= file + ulen + 1 && hash + n <= file + flen && hash[-1] == ':');
            CHECK(memchr(hash, ':', n) == NULL && memchr(hash, '\n', n) == NULL && memchr(hash, '\r', n) == NULL);
            char *h = malloc(n + 1);
            memcpy(h, hash, n);
            h[n] = '\0';
            if (strncmp(h, "$apr1$", 6) == 0 || h[0] == '{') {
                int rc = hy_htpasswd_verify(password, h);
                CHECK(rc == HY_HTPASSWD_MATCH || rc == HY_HTPASSWD_MISMATCH);
                if (strncmp(h, "{PLAIN}", 7) == 0)
                    CHECK((rc == HY_HTPASSWD_MATCH) == (strcmp(password, h + 7) == 0));
            }
            free(h);
        }
    }
    free(out);
    free(header);
    return 0;
}
