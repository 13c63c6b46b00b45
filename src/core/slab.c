/* slab.c — the shared-region allocator (see slab.h for the model; nginx's ngx_slab.c was studied, this is
 * our own layout).
 *
 * Layout of a region: [hy_slab_t header][page_t descriptors, one per data page][pad][data pages].
 * Every data page is in exactly one run:
 *   - a free run: every page PAGE_FREE; its first page has npages, its last page has `head` (its first
 *     page's index), so a run being freed finds its left neighbour's head in O(1). Free runs are in one
 *     doubly linked list (first fit) and never touch each other (they are merged when freed).
 *   - a used run (allocation > page/2): first page PAGE_RUN with npages, the others PAGE_RUN_BODY.
 *   - a small page (PAGE_SMALL): chunks of 2^shift bytes; the free ones form a list threaded through the
 *     chunks themselves (each holds the page offset of the next, as uint32_t). A page with at least one free
 *     chunk is on its class's list; a page with no chunk in use goes back to the free runs.
 * Links are page indices (NIL = none) and data/pages are absolute pointers: the region is mapped before
 * fork, so it is at the same address in every process. */
#include <string.h>
#include <unistd.h>
#include "slab.h"
#include "shm.h"

#define NIL UINT32_MAX
#define MAX_CLASSES 16 /* shifts 3 .. 18: enough for pages up to 512 KiB */

enum page_kind { PAGE_FREE = 1, PAGE_RUN, PAGE_RUN_BODY, PAGE_SMALL };

typedef struct page {
    uint32_t prev, next; /* free-run list (first page of a free run) or class list (small page) */
    uint32_t npages;     /* first page of a free or used run: its length in pages */
    uint32_t head;       /* last page of a free run: index of the run's first page */
    uint8_t kind;        /* enum page_kind */
    uint8_t shift;       /* PAGE_SMALL: log2 of the chunk size */
    uint32_t nused;      /* PAGE_SMALL: chunks handed out */
    uint32_t free_off;   /* PAGE_SMALL: offset in the page of the first free chunk, NIL when full */
} page_t;

struct hy_slab {
    hy_shm_mutex_t lock;
    size_t page_size;
    uint32_t page_shift;
    uint32_t npages;               /* data pages */
    char *data;                    /* first data page */
    page_t *pages;                 /* descriptors, npages of them */
    uint32_t free_runs;            /* first free run in the list */
    uint32_t classes[MAX_CLASSES]; /* per shift - MIN_SHIFT: first small page with a free chunk */
    size_t pages_free, pages_small, bytes_used;
    uint64_t allocs, frees, failed;
};

/* ---- lists of pages (by index) ---- */

static void list_push(hy_slab_t *s, uint32_t *head, uint32_t i)
{
    s->pages[i].prev = NIL;
    s->pages[i].next = *head;
    if (*head != NIL)
        s->pages[*head].prev = i;
    *head = i;
}

static void list_remove(hy_slab_t *s, uint32_t *head, uint32_t i)
{
    page_t *p = &s->pages[i];
    if (p->prev != NIL)
        s->pages[p->prev].next = p->next;
    else
        *head = p->next;
    if (p->next != NIL)
        s->pages[p->next].prev = p->prev;
    p->prev = p->next = NIL;
}

/* ---- page runs ---- */

/* Make pages [i, i+n), already marked PAGE_FREE, one free run and put it on the list. */
static void set_free_run(hy_slab_t *s, uint32_t i, uint32_t n)
{
    s->pages[i].npages = n;
    s->pages[i + n - 1].head = i;
    list_push(s, &s->free_runs, i);
}

/* n contiguous pages (first fit, cut from the end of the run so the list node stays), or NIL. */
static uint32_t pages_alloc(hy_slab_t *s, uint32_t n)
{
    for (uint32_t h = s->free_runs; h != NIL; h = s->pages[h].next) {
        uint32_t m = s->pages[h].npages;
        if (m < n)
            continue;
        if (m == n) {
            list_remove(s, &s->free_runs, h);
        } else {
            s->pages[h].npages = m - n;
            s->pages[h + m - n - 1].head = h; /* the run's new last page */
        }
        uint32_t i = h + m - n;
        s->pages[i].kind = PAGE_RUN;
        s->pages[i].npages = n;
        for (uint32_t k = i + 1; k < i + n; k++)
            s->pages[k].kind = PAGE_RUN_BODY;
        s->pages_free -= n;
        return i;
    }
    return NIL;
}

/* Give pages [i, i+n) back, merged with free neighbours. */
static void pages_free(hy_slab_t *s, uint32_t i, uint32_t n)
{
    s->pages_free += n;
    for (uint32_t k = i; k < i + n; k++) /* only these: the neighbours' pages are marked already */
        s->pages[k].kind = PAGE_FREE;
    uint32_t next = i + n;
    if (next < s->npages && s->pages[next].kind == PAGE_FREE) { /* the first page of the run on the right */
        list_remove(s, &s->free_runs, next);
        n += s->pages[next].npages;
    }
    if (i > 0 && s->pages[i - 1].kind == PAGE_FREE) { /* the last page of the run on the left */
        uint32_t h = s->pages[i - 1].head;
        list_remove(s, &s->free_runs, h);
        n += s->pages[h].npages;
        i = h;
    }
    set_free_run(s, i, n);
}

/* ---- setup ---- */

hy_slab_t *hy_slab_init(void *addr, size_t size)
{
    size_t page = (size_t)sysconf(_SC_PAGESIZE);
    uint32_t shift = 0;
    while (((size_t)1 << shift) < page)
        shift++;
    if (size < sizeof(hy_slab_t) + sizeof(page_t) + page || shift - HY_SLAB_MIN_SHIFT > MAX_CLASSES)
        return NULL;
    hy_slab_t *s = addr;
    memset(s, 0, sizeof(*s));
    if (hy_shm_mutex_init(&s->lock) != 0)
        return NULL;
    s->page_size = page;
    s->page_shift = shift;
    s->pages = (page_t *)((char *)addr + (sizeof(hy_slab_t) + 15) / 16 * 16);
    /* as many pages as fit after the header and their descriptors, data page-aligned */
    size_t n = (size - sizeof(hy_slab_t)) / (page + sizeof(page_t));
    uintptr_t end = (uintptr_t)addr + size;
    uintptr_t data = 0;
    for (; n > 0; n--) {
        data = ((uintptr_t)(s->pages + n) + page - 1) & ~(uintptr_t)(page - 1);
        if (data + n * page <= end)
            break;
    }
    if (n == 0)
        return NULL;
    if (n > NIL - 1)
        n = NIL - 1;
    s->npages = (uint32_t)n;
    s->data = (char *)data;
    s->free_runs = NIL;
    for (size_t c = 0; c < MAX_CLASSES; c++)
        s->classes[c] = NIL;
    memset(s->pages, 0, n * sizeof(page_t));
    for (size_t k = 0; k < n; k++)
        s->pages[k].kind = PAGE_FREE;
    set_free_run(s, 0, s->npages);
    s->pages_free = n;
    return s;
}

bool hy_slab_lock(hy_slab_t *slab)
{
    return hy_shm_mutex_lock(&slab->lock);
}

void hy_slab_unlock(hy_slab_t *slab)
{
    hy_shm_mutex_unlock(&slab->lock);
}

/* ---- allocation ---- */

static void *small_alloc(hy_slab_t *s, uint32_t shift)
{
    uint32_t *cls = &s->classes[shift - HY_SLAB_MIN_SHIFT];
    uint32_t i = *cls;
    if (i == NIL) { /* carve a fresh page into chunks, each pointing at the next */
        i = pages_alloc(s, 1);
        if (i == NIL)
            return NULL;
        page_t *p = &s->pages[i];
        p->kind = PAGE_SMALL;
        p->shift = (uint8_t)shift;
        p->nused = 0;
        p->free_off = 0;
        char *base = s->data + ((size_t)i << s->page_shift);
        size_t chunk = (size_t)1 << shift;
        for (size_t off = 0; off < s->page_size; off += chunk) {
            uint32_t next = off + chunk < s->page_size ? (uint32_t)(off + chunk) : NIL;
            memcpy(base + off, &next, sizeof(next));
        }
        s->pages_small++;
        list_push(s, cls, i);
    }
    page_t *p = &s->pages[i];
    char *chunk = s->data + ((size_t)i << s->page_shift) + p->free_off;
    memcpy(&p->free_off, chunk, sizeof(p->free_off));
    p->nused++;
    if (p->free_off == NIL) /* full: nothing more to hand out from this page */
        list_remove(s, cls, i);
    s->bytes_used += (size_t)1 << shift;
    return chunk;
}

void *hy_slab_alloc_locked(hy_slab_t *slab, size_t size)
{
    void *r = NULL;
    if (size <= slab->page_size / 2) {
        uint32_t shift = HY_SLAB_MIN_SHIFT;
        while (((size_t)1 << shift) < size)
            shift++;
        r = small_alloc(slab, shift);
    } else if (size <= (size_t)slab->npages << slab->page_shift) {
        uint32_t n = (uint32_t)((size + slab->page_size - 1) >> slab->page_shift);
        uint32_t i = pages_alloc(slab, n);
        if (i != NIL) {
            r = slab->data + ((size_t)i << slab->page_shift);
            slab->bytes_used += (size_t)n << slab->page_shift;
        }
    }
    if (r == NULL) {
        slab->failed++;
        return NULL;
    }
    slab->allocs++;
    return r;
}

void *hy_slab_calloc_locked(hy_slab_t *slab, size_t size)
{
    void *p = hy_slab_alloc_locked(slab, size);
    if (p != NULL)
        memset(p, 0, size);
    return p;
}

void hy_slab_free_locked(hy_slab_t *s, void *ptr)
{
    if (ptr == NULL)
        return;
    char *c = ptr;
    if (c < s->data || c >= s->data + ((size_t)s->npages << s->page_shift))
        hy_fatal("hy_slab_free(): pointer %p outside the shared region", ptr);
    uint32_t i = (uint32_t)((size_t)(c - s->data) >> s->page_shift);
    size_t off = (size_t)(c - s->data) & (s->page_size - 1);
    page_t *p = &s->pages[i];
    if (p->kind == PAGE_RUN && off == 0) {
        s->bytes_used -= (size_t)p->npages << s->page_shift;
        pages_free(s, i, p->npages);
    } else if (p->kind == PAGE_SMALL && (off & (((size_t)1 << p->shift) - 1)) == 0 && p->nused > 0) {
        uint32_t *cls = &s->classes[p->shift - HY_SLAB_MIN_SHIFT];
        s->bytes_used -= (size_t)1 << p->shift;
        memcpy(c, &p->free_off, sizeof(p->free_off));
        if (p->free_off == NIL) /* it was full: it has room again */
            list_push(s, cls, i);
        p->free_off = (uint32_t)off;
        if (--p->nused == 0) { /* all chunks free: the page goes back to the page runs */
            list_remove(s, cls, i);
            s->pages_small--;
            pages_free(s, i, 1);
        }
    } else {
        hy_fatal("hy_slab_free(): %p is not an allocation of the shared region", ptr);
    }
    s->frees++;
}

void *hy_slab_alloc(hy_slab_t *slab, size_t size)
{
    hy_slab_lock(slab);
    void *p = hy_slab_alloc_locked(slab, size);
    hy_slab_unlock(slab);
    return p;
}

void *hy_slab_calloc(hy_slab_t *slab, size_t size)
{
    hy_slab_lock(slab);
    void *p = hy_slab_calloc_locked(slab, size);
    hy_slab_unlock(slab);
    return p;
}

void hy_slab_free(hy_slab_t *slab, void *p)
{
    hy_slab_lock(slab);
    hy_slab_free_locked(slab, p);
    hy_slab_unlock(slab);
}

/* ---- statistics and checks ---- */

void hy_slab_stats(hy_slab_t *s, hy_slab_stats_t *out)
{
    hy_slab_lock(s);
    *out = (hy_slab_stats_t){
        .page_size = s->page_size,
        .pages_total = s->npages,
        .pages_free = s->pages_free,
        .pages_small = s->pages_small,
        .bytes_used = s->bytes_used,
        .allocs = s->allocs,
        .frees = s->frees,
        .failed = s->failed,
        .owner_died = s->lock.owner_died,
    };
    hy_slab_unlock(s);
}

/* A small page's free chunks: each at a chunk boundary, no loop; their count. NIL on a broken list. */
static uint32_t count_free_chunks(hy_slab_t *s, uint32_t i)
{
    page_t *p = &s->pages[i];
    size_t chunk = (size_t)1 << p->shift;
    uint32_t per_page = (uint32_t)(s->page_size / chunk), n = 0;
    for (uint32_t off = p->free_off; off != NIL; n++) {
        if (n >= per_page || off >= s->page_size || (off & (chunk - 1)) != 0)
            return NIL;
        memcpy(&off, s->data + ((size_t)i << s->page_shift) + off, sizeof(off));
    }
    return n;
}

static const char *check_locked(hy_slab_t *s)
{
    size_t free_pages = 0, free_runs = 0, small = 0, used_bytes = 0;
    size_t with_room[MAX_CLASSES] = {0};
    bool prev_free = false;
    for (uint32_t i = 0; i < s->npages;) {
        page_t *p = &s->pages[i];
        uint32_t n = 1;
        if (p->kind == PAGE_FREE) {
            n = p->npages;
            if (n == 0 || n > s->npages - i)
                return "a free run has a bad length";
            for (uint32_t k = i; k < i + n; k++)
                if (s->pages[k].kind != PAGE_FREE)
                    return "a page inside a free run is not free";
            if (s->pages[i + n - 1].head != i)
                return "a free run's last page does not point at its first";
            if (prev_free)
                return "two free runs touch (not merged)";
            free_pages += n;
            free_runs++;
        } else if (p->kind == PAGE_RUN) {
            n = p->npages;
            if (n == 0 || n > s->npages - i)
                return "a used run has a bad length";
            for (uint32_t k = i + 1; k < i + n; k++)
                if (s->pages[k].kind != PAGE_RUN_BODY)
                    return "a page inside a used run is not marked as its body";
            used_bytes += (size_t)n << s->page_shift;
        } else if (p->kind == PAGE_SMALL) {
            if (p->shift < HY_SLAB_MIN_SHIFT || p->shift >= s->page_shift)
                return "a small page has a bad chunk size";
            uint32_t nfree = count_free_chunks(s, i);
            if (nfree == NIL)
                return "a small page's free list is broken";
            if (nfree + p->nused != s->page_size >> p->shift)
                return "a small page's used and free chunks do not add up";
            if (p->nused == 0)
                return "a small page with no chunk in use was not given back";
            if (nfree > 0)
                with_room[p->shift - HY_SLAB_MIN_SHIFT]++;
            used_bytes += (size_t)p->nused << p->shift;
            small++;
        } else {
            return "a page starts no run";
        }
        prev_free = p->kind == PAGE_FREE;
        i += n;
    }
    size_t listed = 0, listed_pages = 0;
    for (uint32_t h = s->free_runs, prev = NIL; h != NIL; prev = h, h = s->pages[h].next) {
        if (++listed > free_runs || s->pages[h].kind != PAGE_FREE || s->pages[h].prev != prev)
            return "the free-run list is broken";
        listed_pages += s->pages[h].npages;
    }
    if (listed != free_runs || listed_pages != free_pages)
        return "the free-run list does not hold every free run";
    for (uint32_t c = 0; c < MAX_CLASSES; c++) {
        size_t n = 0;
        for (uint32_t i = s->classes[c], prev = NIL; i != NIL; prev = i, i = s->pages[i].next) {
            page_t *p = &s->pages[i];
            if (++n > with_room[c] || p->kind != PAGE_SMALL || p->shift != c + HY_SLAB_MIN_SHIFT ||
                p->free_off == NIL || p->prev != prev)
                return "a size class list is broken";
        }
        if (n != with_room[c])
            return "a size class list misses a page with room";
    }
    if (free_pages != s->pages_free || small != s->pages_small || used_bytes != s->bytes_used)
        return "the counters do not match the pages";
    return NULL;
}

const char *hy_slab_check(hy_slab_t *s)
{
    hy_slab_lock(s);
    const char *why = check_locked(s);
    hy_slab_unlock(s);
    return why;
}
