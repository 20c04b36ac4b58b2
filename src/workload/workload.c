/* workload.c: request lengths, classes, shared prefixes, cancellations. */
#include "workload/workload.h"

#include <math.h>

#include "util/rng.h"
#include "util/util.h"
#include "workload/dataset.h"
#include "workload/empirical.h"
#include "workload/synthprompt.h"

/* Stream offset so workload draws never share an RNG stream with the
 * arrival process or other consumers seeded from the same seed. */
#define WORKLOAD_STREAM_BASE 0x5157000000000000ULL
/* The stream of request i's images: its own, so adding images changes
 * no other draw. */
#define WORKLOAD_IMAGE_STREAM 0x494D000000000000ULL
/* The stream of prefix group g's shared images' sizes (schedule-wide:
 * above 2^63, as the prefix text's streams). */
#define WORKLOAD_GROUP_IMAGE_STREAM (RNG_STREAM_ARRIVAL | 0x4749000000000000ULL)

/* One length from an empirical column when one is set, else from d. */
static uint32_t draw_tokens(const struct dist *d, const struct empirical *e, int col,
                            struct rng *r)
{
    if (e)
        return dist_to_tokens(empirical_sample(e, col, r));
    return dist_to_tokens(dist_sample(d, r));
}

void workload_spec(const struct workload *w, uint64_t index, struct req_spec *out)
{
    workload_spec_class(w, index, -1, out);
}

void workload_spec_class(const struct workload *w, uint64_t index, int32_t class_idx,
                         struct req_spec *out)
{
    struct rng r;
    rng_seed(&r, w->seed, WORKLOAD_STREAM_BASE + index);
    out->index = index;
    out->class_idx = -1;
    out->class_name = NULL;
    out->prompt_text = NULL;
    out->prompt_text_len = 0;
    out->history = NULL;
    out->history_len = 0;
    out->session = -1;
    out->turn = -1;
    out->api = -1;
    out->ignore_eos = w->ignore_eos;
    out->calib = w->calib;
    out->dataset_entry = -1;
    const struct wl_prefix *prefix = &w->prefix;
    const struct wl_cancel *cancel = &w->cancel;
    const struct image_cfg *images = &w->images;
    if (w->classes) {
        size_t k = wl_pick_class(w->classes, &r); /* drawn either way: the draws after stay */
        if (class_idx >= 0 && (size_t)class_idx < w->classes->n)
            k = (size_t)class_idx;
        const struct wl_class *c = &w->classes->classes[k];
        out->class_idx = (int32_t)k;
        out->class_name = c->name;
        wl_class_lengths(c, &r, &out->prompt_tokens, &out->max_tokens);
        if (out->prompt_tokens < 1)
            out->prompt_tokens = 1;
        if (out->max_tokens < 1)
            out->max_tokens = 1;
        if (c->api >= 0)
            out->api = c->api;
        if (c->ignore_eos >= 0)
            out->ignore_eos = c->ignore_eos;
        prefix = &c->prefix;
        cancel = &c->cancel;
        if (c->images.set)
            images = &c->images;
    } else if (w->pairs) {
        double in, outv;
        empirical_sample_pair(w->pairs, &r, &in, &outv);
        out->prompt_tokens = dist_to_tokens(in);
        out->max_tokens = dist_to_tokens(outv);
    } else {
        out->prompt_tokens = draw_tokens(&w->prompt_tokens, w->prompt_emp, w->prompt_col, &r);
        out->max_tokens = draw_tokens(&w->output_tokens, w->output_emp, w->output_col, &r);
    }
    if (w->dataset) {
        size_t e = dataset_pick(w->dataset, &r);
        const struct dataset_entry *de = &w->dataset->entries[e];
        out->dataset_entry = (int64_t)e;
        out->prompt_text = dataset_prompt(w->dataset, e, &out->prompt_text_len);
        out->prompt_tokens = de->prompt_tokens >= 1 ? de->prompt_tokens : 1;
        if (de->output_tokens >= 1)
            out->max_tokens = de->output_tokens;
        /* A verbatim prompt has no synthetic prefix; the draws below still
         * happen, so cancellations stay where they would be. */
        (void)wl_prefix_draw(prefix, &r);
        out->prefix_id = -1;
        out->prefix_tokens = 0;
        goto cancel;
    }
    out->prefix_id = wl_prefix_draw(prefix, &r);
    out->prefix_tokens = out->prefix_id >= 0 ? prefix->tokens : 0;
    /* A prefix longer than the prompt would make the prompt longer than
     * asked: the prompt grows to hold the prefix plus its nonce. */
    if (out->prefix_id >= 0 && out->prompt_tokens < out->prefix_tokens + 4)
        out->prompt_tokens = out->prefix_tokens + 4;
cancel:
    workload_images(images, w->seed, out);
    uint64_t after = 0;
    if (wl_cancel_draw(cancel, &r, &after)) {
        out->cancel_kind = cancel->kind;
        out->cancel_after = after;
    } else {
        out->cancel_kind = WL_CANCEL_NONE;
        out->cancel_after = 0;
    }
    out->inputs = w->has_batch ? dist_to_tokens(dist_sample(&w->batch, &r)) : 1;
    if (out->inputs < 1)
        out->inputs = 1;
}

int workload_has_images(const struct workload *w)
{
    for (size_t i = 0; w->classes && i < w->classes->n; i++) {
        if (w->classes->classes[i].images.set)
            return 1;
    }
    return w->images.set;
}

void workload_images(const struct image_cfg *c, uint64_t seed, struct req_spec *spec)
{
    spec->images = 0;
    spec->image_draw = 0;
    spec->image_tokens = 0;
    spec->image_cfg = NULL;
    spec->image_data = NULL;
    spec->prefix_images = 0;
    spec->prefix_image_draw = 0;
    spec->prefix_image_tokens = 0;
    if (!c || !c->set)
        return;
    struct rng r;
    rng_seed(&r, seed, WORKLOAD_IMAGE_STREAM + spec->index);
    uint64_t n = dist_sample_u64(&c->count, &r);
    spec->images = n > IMAGE_PER_REQUEST_MAX ? IMAGE_PER_REQUEST_MAX : (uint32_t)n;
    spec->image_draw = rng_next(&r);
    spec->image_cfg = c;
    uint64_t tokens = 0;
    for (uint32_t k = 0; k < spec->images; k++) {
        uint32_t iw, ih;
        image_pick_size(c, spec->image_draw, k, &iw, &ih);
        tokens += image_tokens(iw, ih);
    }
    if (spec->prefix_id >= 0 && c->prefix_count > 0) {
        uint64_t shared = 0;
        spec->prefix_images = LL_MIN(c->prefix_count, (uint32_t)IMAGE_PER_REQUEST_MAX);
        spec->prefix_image_draw = workload_group_draw(seed, (uint64_t)spec->prefix_id);
        for (uint32_t k = 0; k < spec->prefix_images; k++) {
            uint32_t iw, ih;
            image_pick_size(c, spec->prefix_image_draw, k, &iw, &ih);
            shared += image_tokens(iw, ih);
        }
        spec->prefix_image_tokens = shared > UINT32_MAX ? UINT32_MAX : (uint32_t)shared;
        tokens += shared;
    }
    spec->image_tokens = tokens > UINT32_MAX ? UINT32_MAX : (uint32_t)tokens;
}

uint64_t workload_group_draw(uint64_t seed, uint64_t group)
{
    struct rng r;
    rng_seed(&r, seed, WORKLOAD_GROUP_IMAGE_STREAM ^ group);
    return rng_next(&r);
}

const char *workload_class_name(const struct workload *w, const struct req_spec *spec)
{
    if (!w->classes || spec->class_idx < 0 || (size_t)spec->class_idx >= w->classes->n)
        return NULL;
    return w->classes->classes[spec->class_idx].name;
}

size_t workload_prompt(uint64_t seed, const struct req_spec *spec, char *buf, size_t len)
{
    uint32_t words = workload_calib_words(&spec->calib, spec->prompt_tokens);
    uint32_t prefix_words = spec->prefix_id >= 0
                                ? workload_calib_prefix_words(&spec->calib, spec->prefix_tokens)
                                : 0;
    return wl_prompt_build(seed, spec->index, words, spec->prefix_id, prefix_words, buf, len);
}

size_t workload_prompt_part(uint64_t seed, const struct req_spec *spec,
                            enum workload_prompt_part part, char *buf, size_t len)
{
    uint32_t words = workload_calib_words(&spec->calib, spec->prompt_tokens);
    uint32_t prefix_words =
        spec->prefix_id >= 0 ? workload_calib_prefix_words(&spec->calib, spec->prefix_tokens) : 0;
    uint32_t shared = LL_MIN(prefix_words, words);
    if (part == WORKLOAD_PROMPT_PREFIX)
        return shared ? wl_prompt_build(seed, spec->index, shared, spec->prefix_id, prefix_words,
                                        buf, len)
                      : 0;
    uint32_t from = part == WORKLOAD_PROMPT_REST ? shared : 0;
    return wl_prompt_build_from(seed, spec->index, words, spec->prefix_id, prefix_words, from, buf,
                                len);
}

/* splitmix64's finaliser: a bijection of 64-bit values. */
static uint64_t content_mix(uint64_t z)
{
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ULL;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBULL;
    return z ^ (z >> 31);
}

uint64_t workload_content_seed(uint64_t seed, uint64_t salt)
{
    if (salt == 0)
        return seed;
    /* Each input through its own bijection before they meet, so (s, t)
     * and (t, s) differ, then once more to spread the sum. */
    return content_mix(content_mix(seed ^ 0x636F6E74656E74ULL) +
                       content_mix(salt + 0x9E3779B97F4A7C15ULL)) |
           WL_SEED_SALTED;
}

uint32_t workload_calib_words(const struct workload_calib *c, uint32_t target_tokens)
{
    if (!(c->tokens_per_word > 0))
        return target_tokens;
    return dist_to_tokens(((double)target_tokens - c->intercept_tokens) / c->tokens_per_word);
}

uint32_t workload_calib_prefix_words(const struct workload_calib *c, uint32_t prefix_tokens)
{
    if (!(c->tokens_per_word > 0) || prefix_tokens == 0)
        return prefix_tokens;
    return dist_to_tokens((double)prefix_tokens / c->tokens_per_word);
}
