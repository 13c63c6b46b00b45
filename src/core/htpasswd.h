/* htpasswd.h — pure htpasswd parsing and password verification (nginx's ngx_http_auth_basic_module file format
 * and ngx_crypt's schemes), with no I/O: the auth_basic module reads the file and hands its bytes here.
 *
 * File format (nginx's line rules): "user:hash[:comment]" lines; a line starting with '#' or CR is skipped, empty
 * lines too; the hash ends at ':', CR, LF or the end of the buffer. The user must be followed by ':' exactly.
 *
 * Schemes, chosen by the hash's prefix: "$apr1$" (Apache's MD5-based crypt), "{PLAIN}", "{SHA}" (base64 SHA-1),
 * "{SSHA}" (base64 of SHA-1(password salt) followed by the salt); anything else goes to crypt(3) (libcrypt:
 * "$1$", "$5$", "$6$", "$y$", "$2b$"/"$2y$", DES...). */
#ifndef HY_CORE_HTPASSWD_H
#define HY_CORE_HTPASSWD_H

#include <stdbool.h>
#include <stddef.h>

/** Find the line of `user` (ulen bytes, no ':' in it) in buf: true with *hash / *hlen (borrowed from buf). */
bool hy_htpasswd_find(const char *buf, size_t len, const char *user, size_t ulen, const char **hash, size_t *hlen);

enum { HY_HTPASSWD_MATCH = 0, HY_HTPASSWD_MISMATCH = 1, HY_HTPASSWD_ERROR = -1 };
/** Verify a NUL-terminated password against a NUL-terminated stored hash: HY_HTPASSWD_MATCH, _MISMATCH, or
 * _ERROR when crypt(3) failed outright (nginx answers 500: "crypt() failed"). */
int hy_htpasswd_verify(const char *password, const char *hash);

#define HY_APR1_MAX 64 /* "$apr1$" + 8 salt + "$" + 22 + NUL fits */
/** Apache's "$apr1$" hash of password with salt (up to 8 characters, stops at '$'; the "$apr1$" prefix is
 * optional). Writes the full "$apr1$salt$hash" string to out (NUL-terminated). `magic` is "$apr1$" or "$1$"
 * (the same algorithm as crypt's MD5, which makes it testable against libcrypt). */
void hy_htpasswd_md5crypt(const char *password, const char *magic, const char *salt, char out[HY_APR1_MAX]);

/** nginx's ngx_http_auth_basic_user: "Basic <base64(user:password)>" (case-insensitive scheme, spaces after it)
 * decoded into out (len bytes + 1 available). true with *user (ulen > 0) and the NUL-terminated *password, both
 * pointing into out; false when there is no usable user/password. */
bool hy_htpasswd_basic(const char *value, size_t len, char *out, const char **user, size_t *ulen,
                       const char **password);

#endif
