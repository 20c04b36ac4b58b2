/* verdict.h: the self-check of a load point. Did the generator keep its
 * schedule, so that the figures measure the server and not the client?
 *
 * `llmload run`, `replay` and every step of `sweep` judge with this one
 * function (docs/metrics.md, "INVALID"). Today's rule: the window sends'
 * schedule lateness p99 over VERDICT_LATE_NS, or (where the caller asks)
 * fewer than VERDICT_ACHIEVED_MIN of the scheduled requests sent in the
 * window. */
#ifndef LL_VERDICT_H
#define LL_VERDICT_H

#include <stddef.h>
#include <stdint.h>

#include "util/util.h"

struct hist;

/* Schedule lateness past which a load point is INVALID (at p99), and a send
 * counts in the lateness diagnosis. */
#define VERDICT_LATE_NS LL_NS_PER_MS
/* The least share of scheduled requests that must be sent in the window. */
#define VERDICT_ACHIEVED_MIN 0.99

struct verdict_input {
    const struct hist *lateness;  /* window sends' schedule lateness, ns; may be empty */
    /* Whose lateness (run and replay): window sends later than
     * VERDICT_LATE_NS, and those of them due while the worker slept and
     * woke late. Read only when kept is not NULL. */
    uint64_t late_sends, late_asleep;
    /* What the generator had to keep, for the reason ("the schedule", "the
     * trace's times"); NULL gives the short reason a sweep step prints. */
    const char *kept;
    /* The achieved-rate check, when check_achieved: scheduled > 0 requests
     * in the window, sent_in_window of them sent. */
    int check_achieved;
    uint64_t scheduled, sent_in_window;
};

/* Judge a load point. Returns 1 when it is INVALID, with a one-line reason
 * in reason (len >= 1; cut to fit), else 0 with reason empty. */
int verdict_judge(const struct verdict_input *in, char *reason, size_t len);

#endif
