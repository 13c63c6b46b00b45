/* mem.c — checked allocation and arenas. An arena is a list of chunks; big requests get their own chunk.
 * Cleanups run LIFO on reset/destroy so fds and refcounts hung on a request or connection never leak. */
#include <stdlib.h>
#include <string.h>
#include <stdio.h>
#include <stdarg.h>
#include <unistd.h>
#include <malloc.h>
#include "mem.h"

void hy_fatal(const char *fmt, ...)
{
    va_list ap;
    char msg[512];
    va_start(ap, fmt);
    vsnprintf(msg, sizeof(msg), fmt, ap);
    va_end(ap);
    fprintf(stderr, "hayate: [emerg] fatal: %s\n", msg);
    abort();
}

void *hy_alloc(size_t n)
{
    void *p = malloc(n ? n : 1);
    if (HY_UNLIKELY(p == NULL))
        hy_fatal("out of memory allocating %zu bytes", n);
    return p;
}

void *hy_calloc(size_t n)
{
    void *p = calloc(1, n ? n : 1);
    if (HY_UNLIKELY(p == NULL))
        hy_fatal("out of memory allocating %zu bytes", n);
    return p;
}

void *hy_realloc(void *p, size_t n)
{
    void *q = realloc(p, n ? n : 1);
    if (HY_UNLIKELY(q == NULL))
        hy_fatal("out of memory allocating %zu bytes", n);
    return q;
}

char *hy_strndup(const char *s, size_t n)
{
    char *p = hy_alloc(n + 1);
    memcpy(p, s, n);
    p[n] = '\0';
    return p;
}

#define HEAP_TRIM_THRESHOLD ((size_t)1 << 30) /* glibc never trims the top by itself */
#define HEAP_MMAP_THRESHOLD ((size_t)4 << 20)  /* fixed (the default adapts, up to 32 MiB) */

void hy_mem_init(void)
{
    mallopt(M_TRIM_THRESHOLD, (int)HEAP_TRIM_THRESHOLD);
    mallopt(M_MMAP_THRESHOLD, (int)HEAP_MMAP_THRESHOLD);
}

static size_t released_bytes; /* per process: a worker is single-threaded */

size_t hy_mem_released_bytes(void)
{
    return released_bytes;
}

void hy_mem_note_released(size_t n)
{
    released_bytes += n;
}

void hy_mem_trim(void)
{
    released_bytes = 0;
    malloc_trim(0);
}

typedef struct chunk {
    struct chunk *next;
    size_t cap; /* usable bytes after the header */
    _Alignas(16) char data[];
} chunk_t;

typedef struct cleanup {
    struct cleanup *next;
    void (*fn)(void *);
    void *arg;
} cleanup_t;

struct hy_pool {
    hy_pool_span_t span; /* first member (mem.h): the free part of head */
    chunk_t *head;     /* owned: current chunk (allocation happens here first) */
    chunk_t *first;    /* owned: the chunk kept across resets */
    cleanup_t *cleanups;
    size_t chunk_size;
};

static chunk_t *chunk_new(size_t cap)
{
    chunk_t *c = hy_alloc(sizeof(chunk_t) + cap);
    c->next = NULL;
    c->cap = cap;
    return c;
}

hy_pool_t *hy_pool_create(size_t first_chunk)
{
    hy_pool_t *p = hy_alloc(sizeof(*p));
    if (first_chunk < 256)
        first_chunk = 256;
    p->first = p->head = chunk_new(first_chunk);
    p->span = (hy_pool_span_t){p->first->data, p->first->data + first_chunk};
    p->cleanups = NULL;
    p->chunk_size = first_chunk < 4096 ? 4096 : first_chunk;
    return p;
}

void *hy_palloc_slow(hy_pool_t *p, size_t n)
{
    /* n is rounded to 16 by hy_palloc */
    if (n > p->chunk_size / 4) {
        /* a big block gets its own chunk, linked behind the head so the head keeps its free space */
        chunk_t *big = chunk_new(n);
        big->next = p->head->next;
        p->head->next = big;
        return big->data;
    }
    chunk_t *nc = chunk_new(p->chunk_size);
    nc->next = p->head;
    p->head = nc;
    p->span = (hy_pool_span_t){nc->data + n, nc->data + p->chunk_size};
    return nc->data;
}

char *hy_pstrndup(hy_pool_t *p, const char *s, size_t n)
{
    char *r = hy_palloc(p, n + 1);
    if (n)
        memcpy(r, s, n);
    r[n] = '\0';
    return r;
}

void hy_pool_on_clear(hy_pool_t *p, void (*fn)(void *), void *arg)
{
    cleanup_t *c = hy_palloc(p, sizeof(*c));
    c->fn = fn;
    c->arg = arg;
    c->next = p->cleanups;
    p->cleanups = c;
}

static void run_cleanups(hy_pool_t *p)
{
    while (p->cleanups) {
        cleanup_t *c = p->cleanups;
        p->cleanups = c->next;
        c->fn(c->arg);
    }
}

void hy_pool_reset(hy_pool_t *p)
{
    run_cleanups(p);
    chunk_t *c = p->head;
    while (c) {
        chunk_t *next = c->next;
        if (c != p->first) {
            released_bytes += c->cap;
            free(c);
        }
        c = next;
    }
    p->first->next = NULL;
    p->head = p->first;
    p->span = (hy_pool_span_t){p->first->data, p->first->data + p->first->cap};
}

void hy_pool_destroy(hy_pool_t *p)
{
    if (p == NULL)
        return;
    hy_pool_reset(p);
    released_bytes += p->first->cap;
    free(p->first);
    free(p);
}

static hy_pool_t *pool_cache[HY_POOL_CACHE_MAX];
static size_t pool_cache_n;

hy_pool_t *hy_pool_take(void)
{
    return pool_cache_n ? pool_cache[--pool_cache_n] : hy_pool_create(HY_REQ_POOL_SIZE);
}

void hy_pool_give(void *arg)
{
    hy_pool_t *p = arg;
    if (p == NULL)
        return;
    if (pool_cache_n == HY_POOL_CACHE_MAX || p->first->cap != HY_REQ_POOL_SIZE) {
        hy_pool_destroy(p);
        return;
    }
    hy_pool_reset(p); /* runs the request's cleanups now, keeps only the first chunk */
    pool_cache[pool_cache_n++] = p;
}

void hy_pool_cache_trim(void)
{
    while (pool_cache_n)
        hy_pool_destroy(pool_cache[--pool_cache_n]);
}

void hy_array_init(hy_array_t *a, hy_pool_t *pool, size_t n, size_t size)
{
    a->pool = pool;
    a->size = size;
    a->nelts = 0;
    a->nalloc = n ? n : 1;
    a->elts = hy_palloc(pool, a->nalloc * size);
}

hy_array_t *hy_array_create(hy_pool_t *pool, size_t n, size_t size)
{
    hy_array_t *a = hy_palloc(pool, sizeof(*a));
    hy_array_init(a, pool, n, size);
    return a;
}

void *hy_array_push(hy_array_t *a)
{
    if (a->nelts == a->nalloc) {
        void *n = hy_palloc(a->pool, a->nalloc * 2 * a->size);
        memcpy(n, a->elts, a->nelts * a->size);
        a->elts = n;
        a->nalloc *= 2;
    }
    void *e = (char *)a->elts + a->nelts * a->size;
    a->nelts++;
    memset(e, 0, a->size);
    return e;
}
