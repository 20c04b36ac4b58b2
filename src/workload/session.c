/* session.c: open sessions and their due turns (see session.h). */
#include "workload/session.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "util/util.h"

#define SESSION_MEAN_DRAWS 100000

int session_turns_check(const struct dist *turns, char *err, size_t errlen)
{
    struct dist d = *turns;
    if (dist_require_nonneg(&d, err, errlen) != 0)
        return LL_E_INVAL;
    double top = d.has_max ? d.max : INFINITY;
    if (d.kind == DIST_FIXED)
        top = LL_MIN(top, d.a);
    else if (d.kind == DIST_UNIFORM)
        top = LL_MIN(top, d.b);
    if (!(top < SESSION_MAX_TURNS + 0.5)) {
        snprintf(err, errlen, "at most %u turns per session: give a bounded distribution "
                              "(fixed, uniform, or max=%u), got an upper end of %g",
                 SESSION_MAX_TURNS, SESSION_MAX_TURNS, top);
        return LL_E_INVAL;
    }
    /* A draw is rounded, at least 1: "--turns 0" ran one turn a session
     * without a word, where a length of 0 tokens is refused. */
    if (dist_p99(&d) < 0.5) {
        snprintf(err, errlen,
                 d.kind == DIST_FIXED
                     ? "0 turns per session (each would run 1); expected at least 1"
                     : "99%% of the draws round to 0 turns (each would run 1); "
                       "expected at least 1");
        return LL_E_INVAL;
    }
    return 0;
}

uint32_t session_draw_turns(const struct dist *turns, struct rng *r)
{
    uint64_t n = dist_sample_u64(turns, r);
    if (n < 1)
        return 1;
    return n > SESSION_MAX_TURNS ? SESSION_MAX_TURNS : (uint32_t)n;
}

double session_turns_mean(const struct dist *turns)
{
    struct rng r;
    rng_seed(&r, 0x7475726e73ULL, 0);
    if (turns->kind == DIST_FIXED)
        return (double)session_draw_turns(turns, &r);
    double sum = 0;
    for (int i = 0; i < SESSION_MEAN_DRAWS; i++)
        sum += session_draw_turns(turns, &r);
    return sum / SESSION_MEAN_DRAWS;
}

void session_set_init(struct session_set *s)
{
    memset(s, 0, sizeof *s);
}

void session_set_reset(struct session_set *s)
{
    for (size_t i = 0; i < s->cap; i++) {
        if (s->ring[i]) {
            free(s->ring[i]->hist);
            free(s->ring[i]);
        }
    }
    free(s->ring);
    due_heap_reset(&s->due);
    session_set_init(s);
}

/* Grow the ring so ordinals [oldest, next] fit; open sessions move to
 * their slot under the new capacity. */
static void ring_grow(struct session_set *s)
{
    size_t cap = s->cap ? s->cap * 2 : 64;
    struct session **ring = ll_calloc(cap, sizeof *ring);
    for (uint64_t o = s->oldest; o < s->next; o++)
        ring[o % cap] = s->ring[o % s->cap];
    free(s->ring);
    s->ring = ring;
    s->cap = cap;
}

struct session *session_open(struct session_set *s, uint64_t index, uint32_t turns,
                             uint64_t seed, uint64_t stream)
{
    if (s->next - s->oldest + 1 > s->cap)
        ring_grow(s);
    struct session *x = ll_calloc(1, sizeof *x);
    x->index = index;
    x->turns = turns;
    x->hist = ll_calloc(turns, sizeof *x->hist);
    rng_seed(&x->rng, seed, stream);
    s->ring[s->next % s->cap] = x;
    s->next++;
    s->open++;
    return x;
}

struct session *session_get(const struct session_set *s, uint64_t ordinal)
{
    if (ordinal < s->oldest || ordinal >= s->next)
        return NULL;
    return s->ring[ordinal % s->cap];
}

void session_close(struct session_set *s, uint64_t ordinal)
{
    struct session *x = session_get(s, ordinal);
    if (!x)
        return;
    free(x->hist);
    free(x);
    s->ring[ordinal % s->cap] = NULL;
    s->open--;
    while (s->oldest < s->next && !s->ring[s->oldest % s->cap])
        s->oldest++;
}

uint64_t session_set_open_in_window(const struct session_set *s)
{
    uint64_t n = 0;
    for (uint64_t k = s->oldest; k < s->next; k++) {
        const struct session *x = session_get(s, k);
        n += (uint64_t)(x && x->in_window);
    }
    return n;
}

void session_due_push(struct session_set *s, uint64_t at_ns, uint64_t ordinal)
{
    due_heap_push(&s->due, at_ns, ordinal);
}

const struct due *session_due_peek(const struct session_set *s)
{
    return due_heap_peek(&s->due);
}

struct due session_due_pop(struct session_set *s)
{
    return due_heap_pop(&s->due);
}
