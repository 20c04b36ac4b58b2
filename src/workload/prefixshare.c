/* prefixshare.c: the cached share a run's workload implies. See prefixshare.h. */
#include "workload/prefixshare.h"

#include <math.h>
#include <stdlib.h>

#include "util/util.h"

#define PREFIX_SHARE_EMPTY UINT64_MAX

void prefix_share_init(struct prefix_share *p)
{
    *p = (struct prefix_share){0};
}

void prefix_share_reset(struct prefix_share *p)
{
    free(p->group);
    free(p->min_tokens);
    prefix_share_init(p);
}

static size_t slot_of(uint64_t key, size_t cap)
{
    uint64_t h = key * 0x9E3779B97F4A7C15ULL;
    return (size_t)(h >> 32) & (cap - 1);
}

/* Keep group key's minimum at most tokens (a new group starts there). */
static void note_group(struct prefix_share *p, uint64_t key, uint32_t tokens);

static void grow(struct prefix_share *p)
{
    struct prefix_share old = *p;
    p->cap = old.cap ? 2 * old.cap : 16;
    p->n = 0;
    p->group = ll_malloc(p->cap * sizeof *p->group);
    p->min_tokens = ll_malloc(p->cap * sizeof *p->min_tokens);
    for (size_t i = 0; i < p->cap; i++)
        p->group[i] = PREFIX_SHARE_EMPTY;
    for (size_t i = 0; i < old.cap; i++)
        if (old.group[i] != PREFIX_SHARE_EMPTY)
            note_group(p, old.group[i], old.min_tokens[i]);
    free(old.group);
    free(old.min_tokens);
}

static void note_group(struct prefix_share *p, uint64_t key, uint32_t tokens)
{
    if (2 * (p->n + 1) > p->cap)
        grow(p);
    size_t i = slot_of(key, p->cap);
    while (p->group[i] != PREFIX_SHARE_EMPTY && p->group[i] != key)
        i = (i + 1) & (p->cap - 1);
    if (p->group[i] == PREFIX_SHARE_EMPTY) {
        p->group[i] = key;
        p->min_tokens[i] = tokens;
        p->n++;
    } else if (tokens < p->min_tokens[i]) {
        p->min_tokens[i] = tokens;
    }
}

void prefix_share_add(struct prefix_share *p, const struct req_spec *spec)
{
    p->requests++;
    p->prompt_tokens += (uint64_t)spec->prompt_tokens + spec->image_tokens;
    if (spec->prompt_text != NULL || spec->history_len > 0 || spec->dataset_entry >= 0)
        p->unknown = 1;
    if (spec->prefix_id < 0 || spec->prefix_tokens == 0)
        return;
    /* The group's shared images come before its text prefix: a cache
     * that finds the text finds them too (docs/workload.md, "Images"). */
    uint32_t l = LL_MIN(spec->prefix_tokens, spec->prompt_tokens) + spec->prefix_image_tokens;
    p->prefix_tokens += l;
    note_group(p, (uint64_t)spec->prefix_id, l);
}

void prefix_share_merge(struct prefix_share *dst, const struct prefix_share *src)
{
    dst->requests += src->requests;
    dst->prompt_tokens += src->prompt_tokens;
    dst->prefix_tokens += src->prefix_tokens;
    dst->unknown |= src->unknown;
    for (size_t i = 0; i < src->cap; i++)
        if (src->group[i] != PREFIX_SHARE_EMPTY)
            note_group(dst, src->group[i], src->min_tokens[i]);
}

uint64_t prefix_share_cached_tokens(const struct prefix_share *p)
{
    uint64_t first = 0;
    for (size_t i = 0; i < p->cap; i++)
        if (p->group[i] != PREFIX_SHARE_EMPTY)
            first += p->min_tokens[i];
    return p->prefix_tokens - first;
}

double prefix_share_implied(const struct prefix_share *p)
{
    if (p->unknown || p->prompt_tokens == 0)
        return NAN;
    return (double)prefix_share_cached_tokens(p) / (double)p->prompt_tokens;
}
