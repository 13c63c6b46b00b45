/* dns.h — the DNS wire format a stub resolver needs (RFC 1035, AAAA: RFC 3596): encode one question, parse the
 * answer to it. Pure functions: no I/O, no allocation; the client on the event loop is event/resolver.c.
 *
 * The parser trusts nothing: every offset is bounds-checked, compressed names follow at most HY_DNS_MAX_HOPS
 * pointers (a loop ends there), a name longer than 255 bytes is malformed, the answer must carry the query's id,
 * have QR set and repeat the question (same name, case-insensitively, type and class IN). Addresses are taken from
 * the records whose owner is the question's name or, following the CNAME chain inside the answer section (at most
 * HY_DNS_MAX_CNAMES links), the chain's last name; records of other owners are ignored (no cache poisoning from
 * unrelated records). For an SRV question (RFC 2782) the records' priority, weight, port and target (a name that
 * may be compressed) are taken the same way. */
#ifndef HY_CORE_DNS_H
#define HY_CORE_DNS_H

#include <stddef.h>
#include <stdint.h>
#include <stdbool.h>

#define HY_DNS_A 1
#define HY_DNS_CNAME 5
#define HY_DNS_AAAA 28
#define HY_DNS_SRV 33 /* RFC 2782 */
#define HY_DNS_NAME_MAX 255  /* a name in text, without the root dot, fits HY_DNS_NAME_MAX + 1 bytes with its NUL */
#define HY_DNS_QUERY_MAX 512 /* a query always fits */
#define HY_DNS_MAX_ADDRS 32  /* addresses kept from one answer (the rest are ignored) */
#define HY_DNS_MAX_HOPS 64
#define HY_DNS_MAX_CNAMES 16
#define HY_DNS_MAX_SRVS 16   /* SRV records kept from one answer */

/* response codes (the header's RCODE) */
enum { HY_DNS_NOERROR = 0, HY_DNS_FORMERR = 1, HY_DNS_SERVFAIL = 2, HY_DNS_NXDOMAIN = 3, HY_DNS_NOTIMP = 4,
       HY_DNS_REFUSED = 5 };

/* hy_dns_parse's results */
enum { HY_DNS_OK = 0, HY_DNS_MALFORMED = -1, HY_DNS_MISMATCH = -2 };

typedef struct hy_dns_addr {
    int family;        /* AF_INET or AF_INET6 */
    uint8_t bytes[16]; /* 4 or 16 bytes, network order */
} hy_dns_addr_t;

typedef struct hy_dns_srv {
    uint16_t priority, weight, port;
    char target[HY_DNS_NAME_MAX + 1]; /* lower case, no trailing dot ("" for the root: no service) */
} hy_dns_srv_t;

typedef struct hy_dns_answer {
    int rcode;       /* HY_DNS_NOERROR, HY_DNS_NXDOMAIN ... (0..15) */
    bool truncated;  /* TC: the answer did not fit (ask again over TCP) */
    uint32_t ttl;    /* the smallest TTL of the records used (addresses and CNAME links); 0 when none */
    size_t naddrs;
    hy_dns_addr_t addrs[HY_DNS_MAX_ADDRS];
    size_t nsrvs; /* qtype HY_DNS_SRV: the records (the addresses stay empty) */
    hy_dns_srv_t srvs[HY_DNS_MAX_SRVS];
    char cname[HY_DNS_NAME_MAX + 1]; /* the chain ends at this name without addresses of the type asked: "" when
                                      * there is no CNAME (ask again for this name) */
} hy_dns_answer_t;

/** Is `name` (len bytes, no trailing dot needed) a host name a query can carry: labels of 1..63 bytes, at most
 * 255 bytes (RFC 1035's limit is 253 in text; nginx follows a CNAME to 255), no space or control byte. */
bool hy_dns_name_valid(const char *name, size_t len);
/** Write the query for (name, qtype) with id and RD set into out (room for HY_DNS_QUERY_MAX bytes). Returns its
 * length, or -1 when the name is not valid (hy_dns_name_valid). A trailing dot is allowed. */
int hy_dns_query(uint8_t *out, uint16_t id, const char *name, size_t len, uint16_t qtype);
/** The id of a message (0 when shorter than a header). */
uint16_t hy_dns_id(const uint8_t *msg, size_t len);
/** Parse msg[0..len) as the answer to the query (id, name, qtype). HY_DNS_OK with *out filled (an rcode other
 * than NOERROR and a truncated answer are OK results: look at out), HY_DNS_MISMATCH when it answers another
 * question (wrong id, not a response, another name, type or class: ignore it and keep waiting), HY_DNS_MALFORMED
 * when the bytes do not follow the format (out is then unspecified). */
int hy_dns_parse(const uint8_t *msg, size_t len, uint16_t id, const char *name, size_t name_len, uint16_t qtype,
                 hy_dns_answer_t *out);

#endif
