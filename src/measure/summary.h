/* summary.h: what `llmload run` prints at the end of a load point, and the
 * same figures as summary.json.
 *
 * The terminal summary follows h2load's shape: totals first, then one row
 * per latency with its percentiles and count, then throughput. Every figure
 * printed is also in summary.json, in integer nanoseconds or plain counts
 * (docs/formats.md documents the schema). */
#ifndef LL_SUMMARY_H
#define LL_SUMMARY_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include <jansson.h>

#include "measure/stats.h"
#include "measure/statushint.h"
#include "measure/verdict.h"

/* The schema name written as summary.json's "schema". Bumped on any change
 * that could break a reader (a removed or retyped field). */
#define SUMMARY_SCHEMA "llmload.summary/1"

/* What a run's requested prompt lengths were, for the check of the
 * server's prompt count against them (summary_prompt_note). */
enum summary_prompts {
    SUMMARY_PROMPTS_OTHER = 0,  /* a dataset's or a trace's, or token IDs: no advice */
    SUMMARY_PROMPTS_SYNTHETIC,  /* llmload's words, one per token: no calibration */
    SUMMARY_PROMPTS_CALIBRATED, /* llmload's words, scaled by a calibration */
};

/* Prompts are off when the server counted more than this share more or
 * fewer tokens than were requested, over the requests that said. */
#define SUMMARY_PROMPT_OFF 0.10

/* The first ok responses (that report a prompt count) whose ratio the
 * driver judges during a run, to warn before the summary. */
#define SUMMARY_PROMPT_FIRST 20

/* 1 when server / requested is off by more than SUMMARY_PROMPT_OFF. */
int summary_prompt_off(uint64_t requested, uint64_t server);

/* The one warning that prompts are not the length asked, with the ratio
 * and what to do: "the server counted 2.15x the requested prompt tokens
 * (over N ok requests): prompts are 115% longer than asked; ...". The
 * driver's warning during a run and the summary's are this text. */
void summary_prompt_warning(char *buf, size_t len, uint64_t requested, uint64_t server, uint64_t n,
                            enum summary_prompts prompts, int embeddings);

/* The warning when every request of n failed with a 400, 413 or 422 (a
 * status a prompt's length can cause, measure/statushint.h) and the
 * prompts were llmload's words without a calibration: the prompts may be
 * longer on the server than asked. embeddings 1 (--api openai-embeddings): the
 * advice names calibrate's completions fit, whose prompts carry no chat
 * template, as an embedding's input carries none (and --calibrate auto,
 * which it refuses, is not offered); the warning above likewise. */
void summary_prompt_4xx_warning(char *buf, size_t len, uint64_t n, int embeddings);

/* The summary's line about the server's prompt count (no "note:" or
 * "warning:" in it): the warning above when prompts are off or every
 * request failed with a 400, 413 or 422 (*warning = 1), else a note of how many
 * differed and by how much (*warning = 0); "" when there is nothing to
 * say. */
void summary_prompt_note(char *buf, size_t len, const struct stats *s, enum summary_prompts prompts,
                         int *warning);

/* The warning when every one of n requests failed with a 4xx of cause c
 * (measure/statushint.h), which no prompt length explains: "all 3
 * requests failed with a 404 or 405: is --url the API's base, ...". ""
 * for a length's cause (summary_prompt_4xx_warning's) and any other.
 * The driver's warning during a run and the summary's are this text. */
void summary_status_warning(char *buf, size_t len, uint64_t n, enum status_cause c);

/* summary_status_warning over s: "" unless every record of s is an
 * http_4xx and their statuses share a cause. Printed as a warning, and
 * summary.json's "status_warning". */
void summary_status_note(char *buf, size_t len, const struct stats *s);

/* Facts about the run that the stats cannot know; the driver fills it.
 * Strings are borrowed and may be NULL (printed as "-", written as null). */
struct summary_info {
    const char *mode;           /* "open-loop poisson", "closed-loop", "capped (max-concurrency 8)" */
    const char *command;        /* the header's "llmload COMMAND:", NULL = "run"; a mode
                                 * that begins with "COMMAND " is printed without it
                                 * ("llmload replay: t.jsonl, ..." of mode "replay t.jsonl, ...") */
    int closed_loop;            /* 1: every output carries the CLOSED LOOP label */
    double offered_rate_per_s;  /* req/s, intended rate; 0 for closed loop */
    /* A closed loop with --pace: users each start at most one request per
     * pace_ns, so users / pace is the rate it intends (an upper bound when
     * an answer takes longer than the pace); 0 = not paced, no rate. */
    uint32_t paced_users;       /* users (a shard's: its own) */
    uint64_t pace_ns;           /* ns, --pace */
    uint64_t window_ns;         /* ns, measurement window (rates divide by it) */
    /* ns from the window's start to the last arrival scheduled in it, when
     * the window ran on past that arrival for the drain (--requests, a
     * trace, a stop): the scheduled rate is then over it (the arrivals
     * before the last, summary_offering_rate), so the drain
     * does not read as a schedule that fell short; 0 when the offering
     * filled the window (--duration), or none was scheduled after its
     * start. */
    uint64_t offering_ns;
    /* 1 when the window ran on past the offering's end, as above, however
     * late its last arrival (summary_offering_ran_on): offering_ns 0 then
     * means no arrival after the window's start, not a full window, and
     * one arrival has no rate over either. 0: --duration ended it. */
    int offering_ran_on;
    uint64_t warmup_ns;         /* ns, discarded warm-up before the window */
    double inflight_mean;       /* requests, time-weighted mean in flight (driver) */
    double inflight_max;        /* requests, most in flight at once (driver) */
    int invalid;                /* 1: generator-bound run, figures not trustworthy */
    char invalid_reason[320];   /* why, when invalid */
    int expect_failed;          /* 1: an --expect threshold failed (exit 7) */
    char lateness_warning[512]; /* valid, but lateness p99 > 1ms or one late send moved a
                                 * percentile past its limit: whose, what it moved; "" = none */
    char cut_short_warning[320]; /* summary_cut_short_warning's, "" = none */
    /* Whose the late sends were (struct verdict's cause): the INVALID
     * headline's words (verdict_invalid_headline). */
    enum verdict_late_cause invalid_cause;
    /* Steady state (a sweep step's rule): judged only where the load held
     * still; steady_warning says why not, "" when steady or not judged;
     * steady_unjudged why it was not judged, "" when judged
     * (sweep_steady_unjudged's words). */
    int steady_judged, steady;
    char steady_warning[512];  /* the longest: a closed loop's, 490 with a 159-byte reason */
    char steady_unjudged[320]; /* the longest: a spend guard's, 239 with a 159-byte reason */
    struct verdict_move lateness_moved; /* the self-check's nearest call (what NULL: none) */
    double lateness_tolerance;          /* share of a percentile the lateness may move it */
    /* The cached share the workload implies (driver_result's
     * workload_cached_share, 0..1), printed beside the server's when
     * workload_share_known; and the warning when the server's is far
     * above it (verdict_cache_carryover), "" = none. */
    int workload_share_known;
    double workload_cached_share;
    char cache_warning[320];
    const char *target_url;
    const char *model;
    const char *model_note; /* after the model line's name in brackets, or NULL */
    const char *version;
    uint64_t seed;
    /* The prompt content's salt (--prompt-salt), printed beside the seed
     * so a run's text can be sent again; has_prompt_salt 0: none shown. */
    int has_prompt_salt;
    uint64_t prompt_salt;
    int prompt_salt_auto;
    int interrupted;            /* 1: stopped by a signal, partial results */
    const char *stop_reason;    /* why offering stopped early (the spend guard), NULL or
                                 * "" when it did not */
    uint64_t records_written;   /* lines in requests.jsonl */
    /* --shard K/N: this process offered only its share of the schedule
     * (shards 0 or 1: not sharded). An empty window of one shard is not
     * the run's: llmload merge judges the whole (summary_measured). */
    uint32_t shard, shards;
    const char *slo;            /* canonical SLO spec, NULL when none: goodput is printed */
    int slo_by_class;           /* 1: a traffic class has its own SLO, so goodput and
                                 * attainment count each request against its class's
                                 * (slo, when given, is the others'): printed even
                                 * without slo */
    /* Partly-open sessions (llmload run --sessions); all 0 otherwise.
     * offered_rate_per_s is then the intended request rate: the session
     * rate times the mean turns per session. */
    int sessions;               /* 1: print and write the session figures */
    double session_rate_per_s;  /* sessions/s, intended */
    double session_turns_mean;  /* turns per session, intended mean */
    uint64_t sessions_started;  /* sessions that arrived inside the window */
    uint64_t sessions_cut;      /* of those started, the ones cut short (--duration, spend
                                 * guard, signal) */
    uint64_t sessions_failed;   /* of those started, the ones a failed turn ended before
                                 * their last */
    /* When the count ended the session arrivals and the window ran on
     * past the last one for its turns and the drain (summary_session_span):
     * ns from the window's start to the last session's start, and the
     * sessions that started in the window, the last included (2 or more).
     * The realised session rate is then over that span, as the window is
     * over its own: half-open, the starts before the last over it, not
     * started / window. 0 and 0: over the window. */
    uint64_t session_arrivals_ns;
    uint64_t session_arrivals;
    enum summary_prompts prompts; /* what the requested prompt lengths were (below) */
    /* --cold-start: the cold requests asked for (0 = none), and their own
     * figures (NULL when none), kept apart from every other figure. */
    uint64_t cold_requests;
    const struct stats *cold;
};

/* One traffic class's figures, for the per-class breakdown. */
struct summary_class {
    const char *name;           /* borrowed */
    const struct stats *s;      /* counted like the total, with the class's SLO */
    const char *slo;            /* the class's SLO spec, NULL when none */
};

/* Print one line per class: scheduled, ok, failed, TTFT and TPOT p50/p99,
 * E2E p99, goodput and attainment. Nothing when n is 0. */
void summary_print_classes(FILE *f, const struct summary_class *c, size_t n, uint64_t window_ns);

/* The same as a JSON array (caller owns the reference). */
json_t *summary_classes_json(const struct summary_class *c, size_t n, uint64_t window_ns);

/* One endpoint's figures (several --url), for the per-endpoint breakdown. */
struct summary_endpoint {
    const char *url;       /* its API base (borrowed) */
    uint32_t weight;       /* its --url-weights weight (1 without) */
    const struct stats *s; /* the requests it carried, counted like the total */
};

/* Print one line per endpoint: its index, requests (records counted),
 * ok, errors, TTFT and TPOT p50/p99, output tokens/s over the window, and
 * its URL. Nothing when n is 0. */
void summary_print_endpoints(FILE *f, const struct summary_endpoint *ep, size_t n,
                             uint64_t window_ns);

/* The same as a JSON array (summary.json's "endpoints"; caller owns the
 * reference). */
json_t *summary_endpoints_json(const struct summary_endpoint *ep, size_t n, uint64_t window_ns);

/* The share of ok requests cut short (stats_cut_short) from which the
 * summary warns: 1%. */
#define SUMMARY_CUT_SHORT_WARN 0.01

/* The warning when s's cut-short outputs are at least SUMMARY_CUT_SHORT_WARN
 * of its ok records: how many, and what they do to TPOT and throughput,
 * one line into buf (len bytes). Returns 1 when it wrote one, else 0 and
 * buf is "". */
int summary_cut_short_warning(const struct stats *s, char *buf, size_t len);

/* The cold start's figures (--cold-start N, the first N requests, kept
 * out of every warm figure): one line, "cold start: ..." with the counts,
 * TTFT p50/p90/p99/max, E2E p50/p99 and the cached share of the prompt
 * tokens. summary_print prints it when info->cold is set; a sweep prints
 * it per step. */
void summary_print_cold(FILE *f, const struct stats *cold, uint64_t n);

/* The same as summary.json's "cold" object (docs/formats.md); caller owns
 * the reference. */
json_t *summary_cold_json(const struct stats *cold, uint64_t n);

/* Whose the late sends of a load point were: the counts and seconds of
 * summary.json's "lateness_diagnosis" (docs/formats.md), which a run, a
 * merge of shards and each sweep step write alike. */
struct summary_late {
    uint64_t late_sends;           /* window sends later than VERDICT_LATE_NS */
    uint64_t asleep;               /* ...of which came due while a worker slept and it
                              * woke late (<= late_sends) */
    double cpu_s, wall_s;          /* s, the workers' CPU time and their threads' wall
                              * time, summed; NAN: not known */
    uint64_t invol_switches;       /* the workers' involuntary context switches; read
                              * only when cpu_s and wall_s are known */
    enum verdict_late_cause cause; /* as the caller judged it (verdict_late_cause
                                    * of the very figures its verdict used, which
                                    * each caller holds in its own units) */
};

/* summary.json's "lateness_diagnosis" object of l: late_sends,
 * asleep_when_due, worker_cpu_s, worker_wall_s, involuntary_switches (the
 * last three null unless both seconds are finite) and cause's name, in
 * that order. Caller owns the reference; out of memory aborts. */
json_t *summary_late_json(const struct summary_late *l);

/* summary_info's offering_ns of a run whose window ran from warmup_ns
 * for window_ns and whose latest arrival (any: warm-up and cold start
 * included) was scheduled at last_sched_ns, all from the run's start:
 * last_sched_ns - warmup_ns when the window ran on past that arrival
 * for the drain; 0 when --duration ended the window (duration_ns, 0 =
 * none, is its end) or no arrival came after its start. `llmload run`
 * passes the driver's last arrival; `llmload merge` and `llmload report`
 * the latest sched_ns of the records, with the merged window, so that
 * the three agree on the same files. */
uint64_t summary_offering_ns(uint64_t duration_ns, uint64_t warmup_ns, uint64_t window_ns,
                             uint64_t last_sched_ns);

/* 1 when a window from warmup_ns for window_ns ran on past its offering
 * for the drain (--requests, a trace, a stop ended the offering), 0 when
 * --duration (duration_ns, 0 = none) ended it: summary_info's
 * offering_ran_on, set beside offering_ns from the same arguments by
 * run, merge and report. */
int summary_offering_ran_on(uint64_t duration_ns, uint64_t warmup_ns, uint64_t window_ns);

/* The starts of a session run's sessions in the window, read off their
 * records: a session's first turn (turn 0) is scheduled at its arrival. */
struct summary_session_starts {
    uint64_t n;       /* sessions that started at or after the window's start */
    uint64_t last_ns; /* the latest of their starts, from the run's start */
};

/* Count r in st when it is a session's first turn scheduled at or after
 * warmup_ns (the window's start; a cold session counts, as the driver's
 * sessions started do). Any other record is left out. st starts zeroed. */
void summary_session_starts_add(struct summary_session_starts *st, const struct record *r,
                                uint64_t warmup_ns);

/* Set info's session_arrivals_ns and session_arrivals from st when the
 * window (info's warmup_ns and window_ns, already set) ran on past the
 * last session's start and --duration (duration_ns, 0 = none) did not end
 * it (summary_offering_ns of that start), and st holds two starts or
 * more; else 0 and 0. `llmload run` passes the driver's count of the
 * sessions that arrived in the window and the last arrival, `llmload
 * merge` and `llmload report` the same read off the merged records
 * (summary_session_starts_add), so that the three agree. */
void summary_session_span(struct summary_info *info, uint64_t duration_ns,
                          const struct summary_session_starts *st);

/* The rate of n arrivals over a span of span_ns that ends at the last of
 * them, per second: the n - 1 arrivals before the last over the span
 * (n over it reads high by one arrival in n). NAN when n < 2 or the span
 * is 0: one arrival spans nothing. A span a fixed time cut (--duration)
 * is not one of these: n over that time is its rate. */
double summary_arrival_rate(uint64_t n, uint64_t span_ns);

/* A session run's realised session rate, sessions/s: the starts over
 * info->session_arrivals_ns (summary_arrival_rate) when it is set, else
 * the sessions started over the window. */
double summary_session_rate(const struct summary_info *info);

/* The scheduled rate over the offering, req/s: the window's scheduled
 * requests over info->offering_ns, which ends at the last arrival
 * (summary_arrival_rate); NAN when offering_ns is 0 or fewer than two
 * were scheduled. The throughput line and summary.json's
 * scheduled_offering_rate_per_s (null for NAN) both give it. */
double summary_offering_rate(const struct stats *s, const struct summary_info *info);

/* Print the human summary of s to f (see the layout in summary.c). Plain
 * text, no colours, lines under 100 columns. Empty histograms print "-". */
void summary_print(FILE *f, const struct stats *s,
                   const struct summary_info *info);

/* Build the summary.json object of s and info (schema SUMMARY_SCHEMA).
 * Caller owns the reference (json_decref). Aborts on out of memory. */
json_t *summary_json(const struct stats *s, const struct summary_info *info);

/* Why a window that nothing came due in (s->scheduled 0, not
 * interrupted) is empty, and what to change, into buf: the spend guard
 * stopped offering first, every request came due in the warm-up or was
 * cold, or none came due at all (the rate too low for the run's length);
 * a shard's (info->shards > 1) begins "shard K/N: " and, when none came
 * due, says no arrival fell to it. The summary's requests line and the
 * run's exit line say it. */
void summary_empty_why(char *buf, size_t len, const struct summary_info *info);

/* What a server gauge (queue depth, running, KV-cache usage) with no
 * figure says, on the terminal's Server lines (scrapejoin.c) and the run
 * page's (report_runsrv.c): with ok scrapes in the window, "not exported
 * by this engine"; with none, that none fell there (the engine may well
 * have it). A static string. */
const char *summary_gauge_absent(size_t ok_scrapes);

/* Whether a window measured anything: the one rule behind exit 6 (run,
 * replay, merge), summary.json's "nothing_measured" and the run page's
 * FAILED banner. */
enum summary_measured {
    SUMMARY_MEASURED,    /* a request of the window was ok, or the only ones that ended
                          * were cancelled on purpose (--cancel-after), or a signal cut
                          * an empty window short */
    SUMMARY_NONE_OK,     /* requests of the window ended and none was ok */
    SUMMARY_EMPTY,       /* none was in the window (summary_empty_why says why) */
    SUMMARY_SHARD_EMPTY, /* none was in this shard's window: not a failure of the run,
                          * which llmload merge judges whole (its words are
                          * summary.json's "shard_empty" and the run page's note) */
};

/* Which case s and info are, with its words into buf (len bytes; "" for
 * SUMMARY_MEASURED): "no request succeeded: all N of the window failed",
 * "nothing was measured: " and summary_empty_why's, or a shard's
 * summary_empty_why alone. Pure. */
enum summary_measured summary_measured(char *buf, size_t len, const struct stats *s,
                                       const struct summary_info *info);

/* summary.json's object for one latency histogram h (latency_ns.NAME):
 * count, min, the percentiles, max, mean, overflow and the histogram's
 * string. Caller owns it. */
json_t *summary_latency_json(const struct hist *h);

/* Write summary_json(s, info) to path atomically (path.tmp, then rename).
 * Returns 0, or LL_E_IO / LL_E_RANGE with the reason in err (errlen bytes). */
int summary_write_json(const char *path, const struct stats *s,
                       const struct summary_info *info, char *err,
                       size_t errlen);

#endif
