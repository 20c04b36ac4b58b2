/* steady.h: the steady-state rule of a load point, a sweep step's and a
 * run's alike (docs/sweep.md, "Steady state"; docs/run.md, "Steady"): did
 * the TTFT tail rise from the window's first half to its second, or the
 * requests in the system grow over it? Pure functions of histograms and
 * the driver's in-flight series. */
#ifndef LL_STEADY_H
#define LL_STEADY_H

#include <stddef.h>
#include <stdint.h>

#include "measure/hist.h"
#include "measure/stats.h"
#include "util/util.h"

/* Steady-state rule (sweep_tail_test, sweep_steady_verdict): a step is
 * not steady when its TTFT tail rose within it, or its backlog grew.
 *
 * The tail is judged at the highest quantile q (at most 0.99) that leaves
 * SWEEP_TAIL_EXCEED requests above it in the smaller half, never below the
 * median: comparing the halves' p99 of 100 requests each compares two
 * near-maxima, which differ by chance far more often than not. With T the
 * q-quantile of both halves together, a steady step puts each request
 * above T in either half alike: given how many are above T in all, the
 * number of them in the second half is hypergeometric (the second half a
 * draw without replacement from the step). The tail rose when that count
 * is improbably large (its upper tail under SWEEP_TAIL_ALPHA, the
 * false-alarm rate at any step size, for requests independent of each
 * other) and the second half's q-quantile is more than
 * SWEEP_TAIL_GROWTH_MIN_NS above the first half's and either more than
 * SWEEP_TAIL_GROWTH times it or above it by more than SWEEP_TAIL_RISE_PER_S
 * of the time between the halves, W/2 (a rise that matters). The second
 * bar is the queue's: in a queue served in order the TTFT of a request
 * scheduled t later is longer by (offered / served - 1) x t, so a rise of
 * a quarter of W/2 says the load ran at 1.25 times what was served or
 * more. The ratio alone missed it under a TTFT that a backlog built
 * before the window had made a large constant: 100/s of 2,000 + 200
 * tokens against the sim's 9.3/s, after a 2.5 s warm-up, rose from p74
 * 27 s to 33.6 s within 1.5 s, 1.25x. Halves of fewer than
 * 2 x SWEEP_TAIL_EXCEED requests are not judged.
 *
 * The backlog grew when the in-flight count grew over the window by more
 * than max(SWEEP_BACKLOG_MIN, SWEEP_BACKLOG_FRACTION x its mean,
 * SWEEP_BACKLOG_NOISE x sqrt(its mean)) (the last term is the Poisson
 * noise of a count with that mean). */
#define SWEEP_TAIL_GROWTH 1.5
#define SWEEP_TAIL_GROWTH_MIN_NS (100 * LL_NS_PER_MS)
#define SWEEP_TAIL_RISE_PER_S 0.25
#define SWEEP_TAIL_EXCEED 20
#define SWEEP_TAIL_ALPHA 0.01
#define SWEEP_BACKLOG_MIN 4.0
#define SWEEP_BACKLOG_FRACTION 0.5
#define SWEEP_BACKLOG_NOISE 3.0

/* A run's backlog test needs at least this much of its window past the
 * fill-up and before offering ended (cli/runconfig.c's run_backlog_span):
 * ten of the driver's in-flight samples. */
#define SWEEP_BACKLOG_SPAN_MIN_NS (1000 * LL_NS_PER_MS)

/* The driver's in-flight sampling interval: a step's series has a sample
 * this often while its run lasts (sweep_facts.series). */
#define SWEEP_SERIES_EVERY_NS (100 * LL_NS_PER_MS)

/* The TTFT tail test of a step (the rule at SWEEP_TAIL_GROWTH). */
struct sweep_tail_test {
    int judged;              /* 1: both halves large enough to judge */
    double q;                /* the quantile judged, (0.5, 0.99] */
    uint64_t h1_ns, h2_ns;   /* ns, each half's q-quantile */
    uint64_t threshold_ns;   /* ns, both halves' q-quantile */
    uint64_t above1, above2; /* requests above the threshold in each half */
    double p_value;          /* P(at least above2 of them in the second half) if steady */
    int rose;                /* 1: improbable if steady, and material */
};

/* The TTFT tail test over a step's two halves (h1: requests scheduled in
 * the window's first half, h2: its second) of a window of window_ns, by
 * the rule at SWEEP_TAIL_GROWTH, into *out. window_ns 0: the ratio's bar
 * alone (no time between the halves to rise against). */
void sweep_tail_test(const struct hist *h1, const struct hist *h2, uint64_t window_ns,
                     struct sweep_tail_test *out);

/* The in-flight count's fitted change over a window [warmup_ns, end_ns]
 * of window_ns: the least-squares slope of series' samples inside it
 * times the window's length; after the last sample (unless interrupted)
 * the count reads 0 every SWEEP_SERIES_EVERY_NS to end_ns. A step's and
 * a run's backlog test (sweep_steady_verdict). */
double sweep_inflight_growth(const struct inflight_sample *series, size_t n_series,
                             uint64_t warmup_ns, uint64_t end_ns, uint64_t window_ns,
                             int interrupted);

/* Steady-state verdict from a step's (or a run's) tail test and in-flight
 * growth (the rule at SWEEP_TAIL_GROWTH). Writes the reason when unsteady
 * into reason ("" otherwise), the tail's "within the <within>" ("step",
 * "run"). Returns 1 when steady. */
int sweep_steady_verdict(const struct sweep_tail_test *tail, double inflight_growth,
                         double inflight_mean, const char *within, char *reason, size_t len);

/* What decides whether a run's steadiness is judged (sweep_steady_unjudged;
 * docs/run.md, "Steady"). The load's shape first, then how the run ended,
 * then, once the two tests were tried (tested), whether either could be. */
struct sweep_steady_case {
    int trace;                /* 1: a replayed trace sent at its own times */
    int sessions;             /* 1: --sessions */
    int bursts;               /* 1: --burst */
    int rate_changes;         /* 1: a ramp (--ramp-to) or a switch of rate */
    int no_first_token;       /* 1: answers in one piece with no first token (embeddings) */
    int merged;               /* 1: merged from shards */
    int invalid;              /* 1: the run is INVALID (the client's delay is in its latencies) */
    int interrupted;          /* 1: a signal cut the offering short */
    const char *stop_reason;  /* why the offering stopped early; NULL or "" if it did not */
    int tested;               /* 1: the tests were tried, and the fields below are theirs */
    int tail_judged;          /* 1: sweep_tail_test judged the halves */
    uint64_t tail_ok_min;     /* requests, ok in the smaller half the tail test saw */
    int backlog_judged;       /* 1: the backlog's span was long enough */
    uint64_t backlog_span_ns; /* ns, from the fill-up to the last arrival (0: none) */
    uint64_t done;            /* requests, window records of any kind (tested only) */
    uint64_t failed;          /* requests, window records not ok (tested only) */
    int requests_bound;       /* 1: --requests bounds the offering, no duration */
};

/* Whether a run's steadiness goes unjudged, and why. The one home of
 * those words: "not judged: " and the case, with what to change when
 * the data was too little. Returns 1 and writes the reason into reason
 * (truncated to len, which should be 320 or more); returns 0 with reason
 * "" when c says nothing against judging (before the tests, tested 0:
 * the load held still and the run was not cut short). When neither test
 * could judge and as many window requests failed as succeeded, the
 * failures are the cause named ("too few requests succeeded"), not the
 * run's length. c is read only. */
int sweep_steady_unjudged(const struct sweep_steady_case *c, char *reason, size_t len);

#endif
