/* smalloc.c — the small-block cache (see smalloc.h). */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include "smalloc.h"

#define HDR 16         /* header bytes before the payload: keeps malloc's 16-byte alignment */
#define NCLASS 8       /* 32 << 0 ... 32 << 7 = 4096 */
#define LARGE 0xff     /* the class of a block from libc with no class */

#if defined(__SANITIZE_ADDRESS__)
#define KEEP 0
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define KEEP 0
#endif
#endif
#ifndef KEEP
#define KEEP HY_SM_KEEP
#endif

typedef struct sm_free {
    struct sm_free *next;
} sm_free_t;

static sm_free_t *lists[NCLASS]; /* each: payloads of freed blocks of that class */
static int counts[NCLASS];

/* The class of a payload of n bytes, or LARGE. */
static inline unsigned class_of(size_t n)
{
    if (n > (size_t)32 << (NCLASS - 1))
        return LARGE;
    return n <= 32 ? 0 : (unsigned)(64 - __builtin_clzll((unsigned long long)(n - 1))) - 5;
}

static inline unsigned char *hdr(void *p)
{
    return (unsigned char *)p - HDR;
}

static void *from_libc(unsigned c, size_t n)
{
    unsigned char *b = malloc(HDR + (c == LARGE ? n : (size_t)32 << c));
    if (b == NULL)
        return NULL;
    b[0] = (unsigned char)c;
    if (c == LARGE)
        memcpy(b + 8, &n, sizeof(n));
    return b + HDR;
}

void *hy_sm_alloc(size_t n)
{
    unsigned c = class_of(n);
    if (c != LARGE && lists[c] != NULL) {
        sm_free_t *f = lists[c];
        lists[c] = f->next;
        counts[c]--;
        return f;
    }
    return from_libc(c, n);
}

void *hy_sm_calloc(size_t nmemb, size_t size)
{
    if (size && nmemb > SIZE_MAX / size)
        return NULL;
    void *p = hy_sm_alloc(nmemb * size);
    if (p)
        memset(p, 0, nmemb * size);
    return p;
}

/* The payload bytes p can hold. */
static size_t capacity(void *p)
{
    unsigned c = hdr(p)[0];
    if (c != LARGE)
        return (size_t)32 << c;
    size_t n;
    memcpy(&n, hdr(p) + 8, sizeof(n));
    return n;
}

void *hy_sm_realloc(void *p, size_t n)
{
    if (p == NULL)
        return hy_sm_alloc(n);
    size_t cap = capacity(p);
    if (n <= cap && hdr(p)[0] != LARGE)
        return p;
    void *q = hy_sm_alloc(n);
    if (q == NULL)
        return NULL;
    memcpy(q, p, cap < n ? cap : n);
    hy_sm_free(p);
    return q;
}

void hy_sm_free(void *p)
{
    if (p == NULL)
        return;
    unsigned c = hdr(p)[0];
    if (c != LARGE && counts[c] < (int)KEEP) {
        sm_free_t *f = p;
        f->next = lists[c];
        lists[c] = f;
        counts[c]++;
        return;
    }
    free(hdr(p));
}
