/* verdict.h: the self-check of a load point. Did the generator keep its
 * schedule well enough that the figures measure the server and not the
 * client?
 *
 * `llmload run`, `replay` and every step of `sweep` judge with this one
 * function (docs/metrics.md, "INVALID"). The rule, in proportion to what
 * is judged: a load point is INVALID when taking each request's own
 * schedule lateness out of its latencies would move a headline percentile
 * (TTFT and E2E at p50, p90 and p99) by more than the larger of
 * VERDICT_MOVE_FLOOR_NS and the tolerance (--lateness-tolerance, default
 * 2%) of that percentile, where the moves are more than one send's
 * doing (with one send later than that limit, or one whose lateness taken
 * down to the limit would leave every move within its own, the move past
 * it is that one send's: a valid point, warned), or (where the caller
 * asks) when fewer than
 * VERDICT_ACHIEVED_MIN of the scheduled requests were sent in the window.
 * Below that line, a lateness p99 over VERDICT_LATE_NS is a warning that
 * says whose the lateness was and what it moved. */
#ifndef LL_VERDICT_H
#define LL_VERDICT_H

#include <stddef.h>
#include <stdint.h>

#include "util/util.h"

struct hist;
struct stats;
struct stats_late_send;

/* Schedule lateness past which a send counts as late (the diagnosis of
 * whose it was), and a lateness p99 past which a valid run is warned. */
#define VERDICT_LATE_NS LL_NS_PER_MS
/* Below this a percentile's move is never material, whatever its size. */
#define VERDICT_MOVE_FLOOR_NS LL_NS_PER_MS
/* The share of a percentile lateness may move it, unless told otherwise. */
#define VERDICT_TOLERANCE_DEFAULT 0.02
/* The least share of scheduled requests that must be sent in the window. */
#define VERDICT_ACHIEVED_MIN 0.99

struct verdict_input {
    const struct hist *lateness;  /* window sends' schedule lateness, ns; may be empty */
    /* The latencies as measured, and as they would read had every send
     * left on time (struct stats's ttft_ontime, e2e_ontime). Any NULL: the
     * moves cannot be known, and a lateness p99 over VERDICT_LATE_NS is
     * then INVALID (the rule before the moves were measured). */
    const struct hist *ttft, *ttft_ontime, *e2e, *e2e_ontime;
    /* The ok sends later than STATS_LATE_KEPT_NS, one by one (struct
     * stats's late_ok, n_late_ok of them): with them the judge asks
     * whether a move past its limit is one send's doing. NULL, or more
     * than STATS_LATE_SENDS of them: not known, and a move past its limit
     * with two sends or more later than that limit is INVALID. */
    const struct stats_late_send *late_ok;
    uint64_t n_late_ok;
    double tolerance; /* share of a percentile; <= 0 = VERDICT_TOLERANCE_DEFAULT */
    /* Whose lateness (run and replay): window sends later than
     * VERDICT_LATE_NS, and those of them due while the worker slept and
     * woke late. Read only when kept is not NULL. */
    uint64_t late_sends, late_asleep;
    /* The workers' CPU time and involuntary context switches over wall_ns
     * of their threads' lives (driver_result's worker_*); wall_ns 0: not
     * known. See verdict_late_cause. */
    uint64_t cpu_ns, invol_switches, wall_ns;
    /* What the generator had to keep, for the reason ("the schedule", "the
     * trace's times"); NULL gives the short reasons a sweep step prints. */
    const char *kept;
    /* The achieved-rate check, when check_achieved: scheduled > 0 requests
     * in the window, sent_in_window of them sent. */
    int check_achieved;
    uint64_t scheduled, sent_in_window;
};

/* What the judge found: the percentile lateness moved most, for its limit. */
struct verdict_move {
    const char *what;  /* "TTFT p99", ...; NULL when nothing could be judged */
    uint64_t moved_ns; /* measured minus on-time percentile (0 when lower) */
    uint64_t limit_ns; /* max(VERDICT_MOVE_FLOOR_NS, tolerance x percentile) */
    uint64_t value_ns; /* the percentile as measured */
    /* Window sends later than limit_ns (counted by whole buckets of the
     * lateness histogram: never fewer than the true count); UINT64_MAX
     * when no lateness was recorded. A move over its limit makes the
     * point INVALID only when this is 2 or more (and the move is not one
     * send's doing: verdict_input.late_ok). */
    uint64_t sends_past_limit;
};

/* Whose the sends later than VERDICT_LATE_NS were. */
enum verdict_late_cause {
    VERDICT_LATE_NONE = 0,  /* no late send */
    VERDICT_LATE_ASLEEP,    /* the worker slept through their due time and woke late:
                             * the OS or VM did not run it in time */
    VERDICT_LATE_PREEMPTED, /* awake, but the worker used little CPU and the OS
                             * switched it out against its will: the host's fault */
    VERDICT_LATE_BUSY,      /* awake and working: the generator's own limit */
    VERDICT_LATE_CAUSE_COUNT,
};

struct verdict {
    int invalid;               /* 1: INVALID */
    int warned;                /* 1: valid, with a lateness warning */
    char reason[320];          /* INVALID: why, one line; else "" */
    char warning[512];         /* warned: whose lateness and what it moved; else ""
                                * (one late send's, whose a preemption: past 320) */
    uint64_t lateness_p99_ns;  /* 0 when no lateness was recorded */
    struct verdict_move worst; /* the move nearest its limit (largest moved/limit) */
    uint64_t lone_late_ns;     /* ns, valid with a move past its limit that one send
                                * made: that send's lateness; else 0 */
    /* Whose the late sends were (verdict_late_cause of the input's
     * counts), whether valid or not: the INVALID headline's cause. */
    enum verdict_late_cause cause;
};

/* A worker that used less than this share of its wall time on a CPU had
 * no load of its own to be late with. */
#define VERDICT_BUSY_MIN_CPU_SHARE 0.25

/* Classify late sends (a pure function of the counts). late_sends of them
 * were later than VERDICT_LATE_NS, late_asleep of those came due while the
 * worker slept and it woke late. The workers used cpu_ns of CPU over
 * wall_ns of their threads' lives and were switched out involuntarily
 * invol_switches times. NONE when late_sends is 0; ASLEEP when at least
 * half were asleep; else PREEMPTED when wall_ns is known, the CPU share
 * is under VERDICT_BUSY_MIN_CPU_SHARE and at least one switch was
 * involuntary; else BUSY (also when the CPU figures are not known). */
enum verdict_late_cause verdict_late_cause(uint64_t late_sends, uint64_t late_asleep,
                                           uint64_t cpu_ns, uint64_t wall_ns,
                                           uint64_t invol_switches);

/* "none", "asleep", "preempted", "busy" (summary.json's
 * lateness_diagnosis.cause). */
const char *verdict_late_cause_name(enum verdict_late_cause c);

/* The cause named name (verdict_late_cause_name's words); NONE for NULL
 * or any other name (an older file's: not known). */
enum verdict_late_cause verdict_late_cause_from_name(const char *name);

/* The INVALID headline: who could not keep the schedule, by the cause of
 * the late sends, so that it never blames the generator for the host's
 * fault. The host (OS or VM) for ASLEEP and PREEMPTED, the generator for
 * BUSY, "the client" when not known (NONE). One clause, no capital and no
 * full stop, the same for a run and for steps: the terminal's "*** INVALID
 * RUN: ... ***", the HTML pages' banners and verdict line all print it.
 * Static storage. */
const char *verdict_invalid_headline(enum verdict_late_cause c);

/* A prefix cache warmed by an earlier run: the ok requests that reported
 * cached tokens must number at least VERDICT_CACHE_MIN_REQUESTS, and the
 * share the server reported pass the one the workload implies by more
 * than VERDICT_CACHE_MARGIN (a share, 0.20 = 20 percentage points). */
#define VERDICT_CACHE_MIN_REQUESTS 20
#define VERDICT_CACHE_MARGIN 0.20

/* Does the server cache far more than the workload shares? reported_share
 * is the cached prompt tokens the server reported over the prompt tokens
 * (0..1), from reported ok requests that reported a cached count;
 * implied_share the share an ideal prefix cache would have served within
 * the run (workload/prefixshare.h), NAN when unknown. Returns 1 with a
 * one-line warning in buf (len bytes) when it does, else 0 with buf "". */
int verdict_cache_carryover(double reported_share, double implied_share, uint64_t reported,
                            char *buf, size_t len);

/* Point in's ttft, ttft_ontime, e2e, e2e_ontime and late sends at s's;
 * the on-time ones stay NULL when no record of s carried its late_ns
 * (records from before it was kept: the moves cannot be known). */
void verdict_latencies(struct verdict_input *in, const struct stats *s);

/* Judge a load point into out. Returns out->invalid. */
int verdict_judge(const struct verdict_input *in, struct verdict *out);

#endif
