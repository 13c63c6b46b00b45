/* stats.c — the shared counter segment (see stats.h). */
#include <string.h>
#include <time.h>
#include "stats.h"

typedef struct series {
    char key[HY_STATS_KEY_MAX];
    uint32_t base, n;
} series_t;

typedef struct segment {
    hy_shm_mutex_t lock; /* series registration */
    hy_stats_info_t info;
    uint32_t slots_used; /* 1 + the highest slot index ever attached (summing stops there) */
    uint32_t num_series; /* published with release order after the entry is written */
    uint32_t ext_used;
    series_t series[HY_STATS_MAX_SERIES];
    hy_stats_slot_t slots[HY_STATS_MAX_SLOTS];
} segment_t;

const uint32_t hy_stats_bucket_le_ms[HY_STATS_BUCKETS] = {5, 10, 25, 50, 100, 250, 500, 1000, 2500, 5000, 10000};

static hy_stats_slot_t private_slot;
hy_stats_slot_t *hy_stats_me = &private_slot;
static hy_shm_t shm;
static segment_t *seg;

int hy_stats_create(uint64_t workers)
{
    if (seg)
        return 0;
    int rc = hy_shm_map(&shm, sizeof(segment_t));
    if (rc != 0)
        return rc;
    segment_t *s = shm.addr;
    rc = hy_shm_mutex_init(&s->lock);
    if (rc != 0) {
        hy_shm_unmap(&shm);
        return rc;
    }
    s->info = (hy_stats_info_t){.generation = 1, .workers = workers, .start_time = (int64_t)time(NULL)};
    s->ext_used = HY_STATS_SERIES_MAX_N; /* ext[0..15]: the sink */
    seg = s;
    return 0;
}

bool hy_stats_shared(void)
{
    return seg != NULL;
}

static void zero_gauges(hy_stats_slot_t *sl)
{
    __atomic_store_n(&sl->active, 0, __ATOMIC_RELAXED);
    __atomic_store_n(&sl->reading, 0, __ATOMIC_RELAXED);
    __atomic_store_n(&sl->writing, 0, __ATOMIC_RELAXED);
    __atomic_store_n(&sl->waiting, 0, __ATOMIC_RELAXED);
}

void hy_stats_attach(size_t ix)
{
    if (seg == NULL || ix >= HY_STATS_MAX_SLOTS)
        return;
    hy_stats_me = &seg->slots[ix];
    zero_gauges(hy_stats_me);
    uint32_t used = __atomic_load_n(&seg->slots_used, __ATOMIC_ACQUIRE);
    while (used < ix + 1 && !__atomic_compare_exchange_n(&seg->slots_used, &used, (uint32_t)ix + 1, false,
                                                         __ATOMIC_ACQ_REL, __ATOMIC_ACQUIRE))
        ;
}

void hy_stats_release(size_t ix)
{
    if (seg && ix < HY_STATS_MAX_SLOTS)
        zero_gauges(&seg->slots[ix]);
}

void hy_stats_reloaded(uint64_t workers)
{
    if (seg == NULL)
        return;
    __atomic_store_n(&seg->info.generation, seg->info.generation + 1, __ATOMIC_RELAXED);
    __atomic_store_n(&seg->info.reloads, seg->info.reloads + 1, __ATOMIC_RELAXED);
    __atomic_store_n(&seg->info.workers, workers, __ATOMIC_RELAXED);
}

hy_stats_info_t hy_stats_info(void)
{
    if (seg == NULL)
        return (hy_stats_info_t){0};
    return (hy_stats_info_t){
        .generation = __atomic_load_n(&seg->info.generation, __ATOMIC_RELAXED),
        .reloads = __atomic_load_n(&seg->info.reloads, __ATOMIC_RELAXED),
        .workers = __atomic_load_n(&seg->info.workers, __ATOMIC_RELAXED),
        .start_time = seg->info.start_time,
    };
}

uint64_t hy_stats_sum(size_t off)
{
    if (seg == NULL)
        return __atomic_load_n((uint64_t *)((char *)&private_slot + off), __ATOMIC_RELAXED);
    uint64_t sum = 0;
    uint32_t used = __atomic_load_n(&seg->slots_used, __ATOMIC_ACQUIRE);
    for (uint32_t i = 0; i < used; i++)
        sum += __atomic_load_n((uint64_t *)((char *)&seg->slots[i] + off), __ATOMIC_RELAXED);
    return sum;
}

uint64_t hy_stats_sum_ext(uint32_t ix)
{
    if (ix >= HY_STATS_EXT)
        return 0;
    return hy_stats_sum(offsetof(hy_stats_slot_t, ext) + ix * sizeof(uint64_t));
}

uint64_t hy_stats_max_ext(uint32_t ix)
{
    if (ix >= HY_STATS_EXT)
        return 0;
    size_t off = offsetof(hy_stats_slot_t, ext) + ix * sizeof(uint64_t);
    if (seg == NULL)
        return __atomic_load_n((uint64_t *)((char *)&private_slot + off), __ATOMIC_RELAXED);
    uint64_t max = 0;
    uint32_t used = __atomic_load_n(&seg->slots_used, __ATOMIC_ACQUIRE);
    for (uint32_t i = 0; i < used; i++) {
        uint64_t v = __atomic_load_n((uint64_t *)((char *)&seg->slots[i] + off), __ATOMIC_RELAXED);
        if (v > max)
            max = v;
    }
    return max;
}

uint32_t hy_stats_series(const char *key, uint32_t n)
{
    if (seg == NULL || n == 0 || n > HY_STATS_SERIES_MAX_N)
        return HY_STATS_SINK;
    char k[HY_STATS_KEY_MAX];
    size_t len = strnlen(key, sizeof(k) - 1);
    memcpy(k, key, len);
    k[len] = '\0';
    uint32_t base = HY_STATS_SINK;
    hy_shm_mutex_lock(&seg->lock); /* a dead owner cannot leave a half entry: entries are published last */
    uint32_t num = seg->num_series;
    for (uint32_t i = 0; i < num; i++)
        if (strcmp(seg->series[i].key, k) == 0) {
            base = seg->series[i].base;
            goto out;
        }
    if (num < HY_STATS_MAX_SERIES && seg->ext_used + n <= HY_STATS_EXT) {
        series_t *e = &seg->series[num];
        memcpy(e->key, k, len + 1);
        e->base = seg->ext_used;
        e->n = n;
        seg->ext_used += n;
        base = e->base;
        __atomic_store_n(&seg->num_series, num + 1, __ATOMIC_RELEASE);
    }
out:
    hy_shm_mutex_unlock(&seg->lock);
    return base;
}

bool hy_stats_series_at(uint32_t i, const char **key, uint32_t *base)
{
    if (seg == NULL || i >= __atomic_load_n(&seg->num_series, __ATOMIC_ACQUIRE))
        return false;
    *key = seg->series[i].key;
    *base = seg->series[i].base;
    return true;
}
