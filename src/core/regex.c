/* regex.c — compile, match and capture records over PCRE2 (see regex.h). */
#include <stdio.h>
#include <string.h>
#include "regex.h"
#include "hayate.h"

uint64_t hy_regex_exec_count;
bool hy_regex_jit = true;

/* One match block per process (workers are single-threaded), sized for the regex with the most groups
 * compiled so far; nginx does the same (ngx_regex_match_data). */
static pcre2_match_data *match_data;
static uint32_t match_pairs;

static void free_code(void *code)
{
    pcre2_code_free(code);
}

static int names_of(hy_pool_t *pool, hy_regex_t *re)
{
    uint32_t count = 0, entry = 0;
    PCRE2_SPTR table = NULL;
    pcre2_pattern_info(re->code, PCRE2_INFO_NAMECOUNT, &count);
    if (count == 0)
        return 0;
    pcre2_pattern_info(re->code, PCRE2_INFO_NAMEENTRYSIZE, &entry);
    pcre2_pattern_info(re->code, PCRE2_INFO_NAMETABLE, &table);
    re->names = hy_palloc(pool, sizeof(hy_regex_name_t) * count);
    for (uint32_t i = 0; i < count; i++) {
        const unsigned char *e = table + (size_t)i * entry; /* 2 bytes of group number, then the name */
        const char *name = (const char *)e + 2;
        re->names[i].group = (uint32_t)((e[0] << 8) | e[1]);
        re->names[i].name = (hy_str_t){(char *)name, strlen(name)};
    }
    re->nnames = count;
    return 0;
}

hy_regex_t *hy_regex_compile(hy_pool_t *pool, hy_str_t pattern, bool caseless, char *err)
{
    int code;
    PCRE2_SIZE off;
    pcre2_code *c =
        pcre2_compile((PCRE2_SPTR)pattern.ptr, pattern.len, caseless ? PCRE2_CASELESS : 0, &code, &off, NULL);
    if (c == NULL) {
        PCRE2_UCHAR msg[256];
        pcre2_get_error_message(code, msg, sizeof(msg));
        int n = snprintf(err, HY_REGEX_ERR_MAX, "pcre2_compile() failed: %s in \"%.*s\"", (char *)msg, (int)pattern.len,
                         pattern.ptr);
        if (off < pattern.len && n > 0 && n < HY_REGEX_ERR_MAX) /* nginx: no "at" for an error at the end */
            snprintf(err + n, HY_REGEX_ERR_MAX - (size_t)n, " at \"%.*s\"", (int)(pattern.len - off),
                     pattern.ptr + off);
        return NULL;
    }
    hy_pool_on_clear(pool, free_code, c);
    if (hy_regex_jit)
        pcre2_jit_compile(c, PCRE2_JIT_COMPLETE); /* without JIT support pcre2_match interprets: not an error */
    hy_regex_t *re = hy_pcalloc(pool, sizeof(*re));
    re->code = c;
    re->pattern = (hy_str_t){hy_pstrndup(pool, pattern.ptr, pattern.len), pattern.len};
    pcre2_pattern_info(c, PCRE2_INFO_CAPTURECOUNT, &re->ncaptures);
    names_of(pool, re);
    return re;
}

const hy_regex_name_t *hy_regex_names(const hy_regex_t *re, uint32_t *n)
{
    *n = re->nnames;
    return re->names;
}

static pcre2_match_data *match_block(uint32_t pairs)
{
    if (match_data == NULL || pairs > match_pairs) {
        if (match_data)
            pcre2_match_data_free(match_data);
        match_pairs = pairs < 10 ? 10 : pairs;
        match_data = pcre2_match_data_create(match_pairs, NULL);
        if (match_data == NULL)
            hy_fatal("out of memory allocating a regex match block of %u pairs", match_pairs);
    }
    return match_data;
}

int hy_regex_exec(const hy_regex_t *re, hy_str_t subject, hy_regex_caps_t *caps)
{
    hy_regex_exec_count++;
    pcre2_match_data *md = match_block(re->ncaptures + 1);
    int rc = pcre2_match(re->code, (PCRE2_SPTR)(subject.ptr ? subject.ptr : ""), subject.len, 0, 0, md, NULL);
    if (rc == PCRE2_ERROR_NOMATCH)
        return 0;
    if (rc < 0)
        return rc;
    if (caps == NULL)
        return 1;
    uint32_t n = rc == 0 ? pcre2_get_ovector_count(md) : (uint32_t)rc; /* rc 0: the block was too small */
    if (n > caps->size) {
        uint32_t size = re->ncaptures + 1 > 10 ? re->ncaptures + 1 : 10;
        caps->ov = hy_palloc(caps->pool, sizeof(size_t) * 2 * size);
        caps->size = size;
    }
    memcpy(caps->ov, pcre2_get_ovector_pointer(md), sizeof(size_t) * 2 * n);
    caps->n = n;
    caps->subject = subject.ptr;
    caps->re = re;
    caps->nmatch++;
    return 1;
}

hy_str_t hy_regex_group(const hy_regex_caps_t *caps, uint32_t i)
{
    if (caps == NULL || i >= caps->n || caps->ov[2 * i] == PCRE2_UNSET)
        return HY_STR("");
    return (hy_str_t){(char *)caps->subject + caps->ov[2 * i], caps->ov[2 * i + 1] - caps->ov[2 * i]};
}
