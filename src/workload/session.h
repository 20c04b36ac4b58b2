/* session.h: the partly-open load model's bookkeeping (`llmload run
 * --sessions`). Sessions arrive by an open-loop arrival process; each runs
 * a drawn number of turns closed-loop inside: turn k+1 is due at the end of
 * turn k plus a drawn think time, and resends the earlier turns as context
 * (chatbody.h).
 *
 * A worker owns one session_set: its open sessions, found by ordinal (the
 * worker's n-th session; the driver's session i mod W == w is the worker's
 * ordinal (i - w) / W), and a min-heap of turns due. Nothing here does I/O
 * or knows about time sources: the driver says when. */
#ifndef LL_SESSION_H
#define LL_SESSION_H

#include <stddef.h>
#include <stdint.h>

#include "workload/chatbody.h"
#include "workload/dist.h"
#include "util/dueheap.h"
#include "util/rng.h"

/* Most turns in one session; a turn's request id is
 * session * SESSION_MAX_TURNS + turn. */
#define SESSION_MAX_TURNS 1000u

struct session {
    uint64_t index;              /* session index over the whole run */
    uint32_t turns;              /* turns drawn, [1, SESSION_MAX_TURNS] */
    uint32_t started;            /* turns started so far */
    struct rng rng;              /* its think-time draws */
    struct chat_turn *hist;      /* turns entries; [0, started) are filled */
    int in_window;               /* 1: arrived at or after the warm-up (the driver
                                  * sets it; the summary's sessions are these) */
};

struct session_set {
    struct session **ring;       /* open sessions by ordinal % cap, NULL = closed */
    size_t cap;
    uint64_t oldest;             /* no session below this ordinal is open */
    uint64_t next;               /* ordinal of the next session opened */
    uint64_t open;               /* sessions open now */
    struct due_heap due;         /* turns due: at_ns their intended send time
                                  * (relative), id the session's ordinal */
};

/* Check a --turns distribution: nonnegative, and its largest possible
 * draw (fixed N, uniform's B, else max=) at most SESSION_MAX_TURNS.
 * Returns 0, or LL_E_INVAL with a reason in err. */
int session_turns_check(const struct dist *turns, char *err, size_t errlen);

/* One draw of a turn count: rounded to the nearest integer, at least 1
 * (session_turns_check keeps it at most SESSION_MAX_TURNS; a larger draw
 * is impossible after it). */
uint32_t session_draw_turns(const struct dist *turns, struct rng *r);

/* The mean turns per session that turns gives, estimated from 100000
 * draws of a fixed generator (exact for fixed counts): the factor from
 * the intended session rate to the intended request rate. */
double session_turns_mean(const struct dist *turns);

/* Initialise an empty set. */
void session_set_init(struct session_set *s);

/* Free every open session, the ring and the heap. Safe twice. */
void session_set_reset(struct session_set *s);

/* Open the set's next session (ordinal s->next) with turns turns, its
 * think RNG seeded from (seed, stream). Returns it (owned by the set). */
struct session *session_open(struct session_set *s, uint64_t index, uint32_t turns,
                             uint64_t seed, uint64_t stream);

/* The open session of this ordinal, or NULL. */
struct session *session_get(const struct session_set *s, uint64_t ordinal);

/* Close (free) the session of this ordinal. NULL-safe on a closed one. */
void session_close(struct session_set *s, uint64_t ordinal);

/* Open sessions whose in_window is set (the window's, which a run counts
 * cut when it ends with them open). One pass over the open ordinals. */
uint64_t session_set_open_in_window(const struct session_set *s);

/* Turns due: push one, look at the earliest, pop it. */
void session_due_push(struct session_set *s, uint64_t at_ns, uint64_t ordinal);
const struct due *session_due_peek(const struct session_set *s); /* NULL when none */
struct due session_due_pop(struct session_set *s);               /* one is due */

#endif
