/* prefixshare.h: the cached share a run's workload implies.
 *
 * An ideal prefix cache that starts empty finds, in each request, the
 * shared-prefix tokens an earlier request of the same run already sent:
 * the first request of a prefix group computes its prefix (its shared
 * images and its text), every later one finds it. Prompt tokens count
 * every image's tokens too, as the server does. Everything after the prefix is unique (docs/workload.md, "The
 * synthetic prompt"), so nothing else can be a hit. A server that reports
 * far more cached tokens than that remembers an earlier run (one with the
 * same --seed and --prompt-salt sent the same prompts), and the run
 * measured a warm cache.
 *
 * The tally is order-free, so each worker keeps its own and they merge at
 * the end: per prefix group the fewest prefix tokens any of its requests
 * had. The implied hits are the prefix tokens of every request less that
 * minimum once per group: exact when a group's requests share one prefix
 * length (a prompt no shorter than its prefix, one length per group), an
 * upper bound otherwise, so a warning built on it errs towards silence.
 * Memory is one entry per distinct group seen. */
#ifndef LL_PREFIXSHARE_H
#define LL_PREFIXSHARE_H

#include <stddef.h>
#include <stdint.h>

#include "workload/workload.h"

struct prefix_share {
    uint64_t requests;      /* requests tallied */
    uint64_t prompt_tokens; /* tokens, their prompts (requested lengths) */
    uint64_t prefix_tokens; /* tokens, their shared prefixes: min(prefix, prompt) each */
    int unknown;            /* 1: a prompt llmload did not build (a dataset's, a
                             * trace's text, a session's history): what it
                             * shares is not known, nor then the share */
    /* Groups seen: open addressing, cap a power of two (0 before the first). */
    uint64_t *group;      /* prefix_id, or PREFIX_SHARE_EMPTY */
    uint32_t *min_tokens; /* fewest prefix tokens a request of the group had */
    size_t cap, n;
};

/* Make p empty (no allocation until the first group). */
void prefix_share_init(struct prefix_share *p);

/* Free p's table; p is empty again. */
void prefix_share_reset(struct prefix_share *p);

/* Tally one request sent: its prompt length, and its shared prefix when it
 * has one (spec->prefix_id >= 0). A request whose prompt is a text or a
 * history llmload did not write makes the share unknown. */
void prefix_share_add(struct prefix_share *p, const struct req_spec *spec);

/* Fold src into dst (groups by their minimum). */
void prefix_share_merge(struct prefix_share *dst, const struct prefix_share *src);

/* The tokens an ideal cache would have found: prefix_tokens less each
 * group's minimum once. */
uint64_t prefix_share_cached_tokens(const struct prefix_share *p);

/* prefix_share_cached_tokens over prompt_tokens, 0..1; NAN when unknown or
 * nothing was tallied. */
double prefix_share_implied(const struct prefix_share *p);

#endif
