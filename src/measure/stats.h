/* stats.h: the aggregate of one load point, built from records.
 *
 * Each worker owns one struct stats and feeds it from its own records and
 * stream events; nothing is shared on the hot path. At the end the driver
 * merges them with stats_merge and hands the total to summary_print and
 * summary_write_json.
 *
 * What counts where (docs/formats.md says the same for users):
 * - every record counts once in completed and in by_kind[kind];
 * - latency histograms (ttft, ttft_server, ttfc, itl_req, tpot, e2e) take
 *   only records of kind ok, so a fast 429 never improves a percentile;
 * - e2e_failed takes the E2E of every record that is not ok (and has one),
 *   so the time failures cost is still reported, apart;
 * - client_queue (sent - sched) takes every record that was sent, whatever
 *   its kind: it measures the generator and the cap, not the server;
 * - token sums and tokens_source_count are over ok records; output tokens of
 *   failed streams (partial output) are summed apart in output_tokens_failed;
 * - finish reasons and cut-short outputs are over ok records (see
 *   stats_cut_short for what is cut short);
 * - itl takes every gap between output events of a stream scheduled after
 *   the warm-up, fed by the worker's transport as it reads them
 *   (stats_add_itl_gap, any kind: a gap is measured before the record's
 *   kind is known); lateness takes what the driver feeds through
 *   stats_add_lateness. */
#ifndef LL_STATS_H
#define LL_STATS_H

#include <stddef.h>
#include <stdint.h>

#include "measure/hist.h"
#include "measure/record.h"
#include "measure/statushint.h"

/* One point of a load point's in-flight time series (the driver samples
 * it; the sweep judges steadiness from it). */
struct inflight_sample {
    uint64_t t_ns;                    /* relative to the run start */
    uint32_t inflight;                /* requests in the system (sent or queued, not finished) */
    uint64_t done;                    /* records finished so far */
};

/* Distinct finish_reason strings a stats keeps counts of; ok records with
 * a reason past them count in finish_other. */
#define STATS_FINISH_NAMES 8
/* A sample of the server's message per failure kind keeps at most this
 * many bytes (a longer detail is cut to fit and ends in "..."). */
#define STATS_SAMPLE_MAX 100
/* The ok records later than STATS_LATE_KEPT_NS a stats keeps one by one
 * (struct stats_late_send), for the verdict's question whether a move of
 * a percentile is one send's doing (measure/verdict.h). A send no later
 * than STATS_LATE_KEPT_NS is never past a move's limit (its floor is
 * 1 ms), so it needs no entry. Past STATS_LATE_SENDS of them the list is
 * incomplete and the verdict does without it. */
#define STATS_LATE_SENDS 64
#define STATS_LATE_KEPT_NS 1000000

/* One ok record later than STATS_LATE_KEPT_NS: its measured latencies and
 * its own schedule lateness (record.late_ns). */
struct stats_late_send {
    uint64_t ttft_ns; /* ns, first - sched; UINT64_MAX when it had no first token */
    uint64_t e2e_ns;  /* ns, end - sched; UINT64_MAX when unknown */
    uint64_t late_ns; /* ns, its schedule lateness, > STATS_LATE_KEPT_NS */
};

struct stats {
    uint64_t scheduled;             /* arrivals the schedule produced (driver sets) */
    uint64_t sent;                  /* requests handed to the transport (driver sets) */
    uint64_t completed;             /* records added, any kind */
    uint64_t by_kind[REC_KIND_COUNT]; /* records per kind */
    /* The http_4xx records by what their status can mean
     * (status_cause_of): the advice when every request failed with one. */
    uint64_t by_4xx_cause[STATUS_CAUSES];

    struct hist *ttft;              /* ns, first - sched, ok records */
    struct hist *ttft_server;       /* ns, first - sent, ok records */
    struct hist *ttfc;              /* ns, first_content - sched, ok records */
    struct hist *itl;               /* ns, every gap between output events */
    struct hist *itl_req;           /* ns, per ok request: (last - first) / (events - 1) */
    struct hist *tpot;              /* ns, (last - first) / (output_tokens - 1), ok records */
    struct hist *e2e;               /* ns, end - sched, ok records */
    struct hist *e2e_failed;        /* ns, end - sched, records not ok */
    struct hist *client_queue;      /* ns, sent - sched, every sent record */
    struct hist *lateness;          /* ns, generator lateness (stats_add_lateness) */
    /* What TTFT and E2E would read had every send left on time: each ok
     * record's latency less its own late_ns. The verdict compares their
     * percentiles with ttft's and e2e's (measure/verdict.h). */
    struct hist *ttft_ontime; /* ns, ttft - late_ns, ok records */
    struct hist *e2e_ontime;  /* ns, e2e - late_ns, ok records */
    uint64_t late_known;      /* records that carried their late_ns (records
                                       written before late_ns was kept have none) */
    /* The ok records later than STATS_LATE_KEPT_NS: n_late_ok of them,
     * the first STATS_LATE_SENDS kept in late_ok (all of them when
     * n_late_ok <= STATS_LATE_SENDS). */
    uint64_t n_late_ok;
    struct stats_late_send late_ok[STATS_LATE_SENDS];

    uint64_t prompt_tokens;         /* tokens, ok records: the server's count if given, else requested */
    uint64_t output_tokens;         /* tokens, ok records */
    uint64_t output_tokens_failed;  /* tokens received by records that are not ok */
    uint64_t failed_started;        /* records not ok that had their first token: the
                                     * server took their prompt (cancelled, cut short) */
    uint64_t events;                /* output-bearing events, ok records */
    uint64_t cached_tokens;         /* tokens, ok records that reported a cached count */
    uint64_t cached_reported;       /* ok records that reported a cached count */
    uint64_t prompt_mismatch;       /* ok records whose server prompt count != requested */
    /* The server's prompt count against the requested one, over the ok
     * records that reported a count (prompt_tokens_server) and asked for
     * at least one token: how many, both sums, and the extremes of each
     * one's (server - requested) / requested (valid when prompt_usage_n). */
    uint64_t prompt_usage_n;
    uint64_t prompt_usage_requested; /* tokens, requested */
    uint64_t prompt_usage_server;    /* tokens, the server's count */
    double prompt_err_min, prompt_err_max;

    uint64_t ok_e2e_sum_ns;         /* ns, sum of E2E over ok records */
    uint64_t all_e2e_sum_ns;        /* ns, sum of E2E over every record with one */
    uint64_t all_e2e_count;         /* records in all_e2e_sum_ns */
    uint64_t all_service_sum_ns;    /* ns, sum of end - sent over every sent record with an end */
    uint64_t all_service_count;     /* records in all_service_sum_ns */

    uint64_t tokens_source_count[3]; /* ok records per enum rec_tokens_source */
    /* ok records by their finish_reason: finish_name[i] (the API's string,
     * "" = slot unused, in the order first seen) counted finish_count[i]. */
    char finish_name[STATS_FINISH_NAMES][REC_FINISH_REASON_MAX];
    uint64_t finish_count[STATS_FINISH_NAMES];
    uint64_t finish_other;          /* ok records whose reason found no slot */
    uint64_t finish_none;           /* ok records whose response carried no finish_reason */
    uint64_t cut_short;             /* ok records cut short (stats_cut_short) */
    uint64_t cut_short_unjudged;    /* ok records whose output count came from counted
                                       events, which cannot be held against max_tokens */
    uint64_t retry_after_seen;      /* records that carried a Retry-After */
    uint64_t retry_after_sum_ms;    /* ms, sum of those Retry-After values */
    uint64_t slo_met;               /* ok records that met every SLO threshold (driver counts) */
    uint64_t slo_unjudged;          /* records the client cancelled before they had shown a
                                       miss (slo_judge): out of attainment's count */

    /* Throughput is counted by time, not by schedule (the driver counts
     * these): events inside the measurement window, whichever request
     * they belong to, warm-up ones included. Rates divide these by the
     * window. */
    uint64_t win_sent;              /* requests sent in the window */
    /* Cold arrivals (--cold-start) scheduled in the window, from the
     * warm-up's end: out of scheduled, yet their sends are in win_sent, so
     * the window's scheduled rate counts them beside it. */
    uint64_t win_scheduled_cold;
    uint64_t win_completed;         /* records that ended in the window, any kind */
    uint64_t win_ok;                /* ok records that ended in the window */
    uint64_t win_dropped;           /* client_dropped records that ended in the window:
                                       counted in win_completed, never sent */
    uint64_t win_slo_met;           /* ... that met every SLO threshold */
    uint64_t win_prompt_tokens;     /* tokens, of win_ok records */
    uint64_t win_output_tokens;     /* tokens, of win_ok records */
    uint64_t win_request_bytes;     /* bytes, request bodies of the requests sent in the window */
    uint64_t win_inputs;            /* embeddings inputs, of win_ok records (record.inputs) */
    /* openai-embeddings (record.inputs > 0): the records that carried
     * inputs, any kind, so the summaries can drop the figures of a
     * stream; and the inputs of the ok ones. */
    uint64_t inputs_records;
    uint64_t inputs;
    /* The warm-up's records, which the figures above leave out: their
     * output tokens (any kind; of them, those of records not ok), ok
     * requests, the prompt and cached tokens of the ok ones (as
     * prompt_tokens and cached_tokens count them), and the records not ok
     * that had their first token; for what is measured over the whole run
     * (the server's counters, its GPU energy: docs/server-metrics.md). */
    uint64_t warmup_output_tokens, warmup_output_tokens_failed, warmup_ok;
    uint64_t warmup_prompt_tokens, warmup_cached_tokens, warmup_failed_started;

    /* The first non-empty detail seen per failure kind, made printable
     * (stats_sample_copy); "" when none. Copied into the struct, so
     * adding a record allocates nothing; stats_merge keeps dst's sample
     * and takes src's only for kinds dst has none of. */
    char sample[REC_KIND_COUNT][STATS_SAMPLE_MAX + 1];

    /* Borrowed, NULL = none: also fed every gap stats_add_itl_gap takes
     * (the worker's open hist.jsonl window, measure/histlog.h). Not a
     * histogram of this stats: init, reset and merge leave it alone. */
    struct hist *itl_window;
};

/* Make s empty and allocate its histograms (aborts on out of memory).
 * Undo with stats_free. */
void stats_init(struct stats *s);

/* Free the histograms of s and zero it. Safe on a zeroed struct and twice. */
void stats_free(struct stats *s);

/* Forget every value (histograms emptied, counters zeroed) but keep the
 * allocations: for a sweep's next step. */
void stats_reset(struct stats *s);

/* Add one finished record (see the header comment for what goes where).
 * Does not touch scheduled or sent: the driver counts those when they
 * happen. O(1), allocates nothing. */
void stats_add_record(struct stats *s, const struct record *r);

struct slo;

/* Count r as a load point counts it (the driver for each record as it
 * finishes, `llmload merge` for each record of the shards): throughput by
 * time (a send or a completion in [warmup_ns, window_end_ns], whichever
 * request it belongs to, docs/metrics.md), then, unless r is warm-up or
 * cold, its latencies (stats_add_record), sent and its SLO verdict
 * against slo (never NULL; an unset slo meets nothing). window_end_ns is
 * relative to the run start; UINT64_MAX = open-ended. */
void stats_account(struct stats *s, const struct record *r, uint64_t warmup_ns,
                   uint64_t window_end_ns, const struct slo *slo);

/* stats_account with the SLO verdict given: met is slo_judge's for the SLO
 * that applies to r (slo_judge_any: its class's, in a run with classes):
 * 1 met, 0 missed, SLO_UNJUDGED not judged. */
void stats_account_met(struct stats *s, const struct record *r, uint64_t warmup_ns,
                       uint64_t window_end_ns, int met);

/* stats_account_met's counts by time alone: a send, a completion (its
 * tokens, inputs and SLO verdict) in [from_ns, to_ns]. It touches only
 * those win_ counters, so s may be a zeroed struct stats that was never
 * stats_init'd: the driver tallies what falls after --duration so, and
 * adds it (stats_merge_window) when the window runs past --duration. */
void stats_account_window(struct stats *s, const struct record *r, uint64_t from_ns, uint64_t to_ns,
                          int met);

/* Add src's counts of stats_account_window into dst (stats_merge adds
 * them too). */
void stats_merge_window(struct stats *dst, const struct stats *src);

/* The arrivals scheduled in the window, cold ones included (scheduled
 * plus win_scheduled_cold): what the window's scheduled rate divides, so
 * that it counts the requests the send rate counts (a run with
 * --cold-start 10 at 5 req/s read "scheduled 2.33 req/s, sent 4.00"). */
uint64_t stats_win_scheduled(const struct stats *s);

/* Count one window request's SLO verdict (slo_judge's: 1 met, 0 missed,
 * SLO_UNJUDGED not judged) into slo_met and slo_unjudged: the one tally
 * attainment (stats_attainment) reads, for runs and sweep steps alike. */
void stats_add_slo(struct stats *s, int verdict);

/* Add one gap, in ns, between two consecutive output events of a stream.
 * The transport calls it on the hot path, as it reads them. O(1). */
void stats_add_itl_gap(struct stats *s, uint64_t gap_ns);

/* Add one generator lateness sample, in ns: when an arrival was processed
 * minus when it was scheduled. */
void stats_add_lateness(struct stats *s, uint64_t late_ns);

/* Add everything in src to dst. Afterwards dst equals a stats that had been
 * fed both inputs. src is unchanged; dst != src. */
void stats_merge(struct stats *dst, const struct stats *src);

/* What the client counted of what a server's counters count over a whole
 * run: every request the server served, the window's (st), the cold
 * start's (cold; NULL for none) and the warm-up's (st's warmup_* counts).
 * output_tokens of every record (failed_output_tokens of them were not
 * ok); prompt_tokens and cached_tokens of the ok ones; completed_ok;
 * failed_started: records not ok that had their first token. The run's
 * server lines and its energy per token divide by these, and merge alike. */
struct stats_served {
    double output_tokens, prompt_tokens, cached_tokens, completed_ok;
    double failed_started, failed_output_tokens;
};
void stats_served(const struct stats *st, const struct stats *cold, struct stats_served *out);

/* Copy detail into out (STATS_SAMPLE_MAX + 1 bytes) so it is safe to
 * print on a terminal and to put in JSON: every byte that is not
 * printable ASCII (control bytes, DEL, bytes of multi-byte characters)
 * becomes '?', and a detail longer than
 * STATS_SAMPLE_MAX bytes is cut and ends in "...". */
void stats_sample_copy(char *out, const char *detail, size_t detail_cap);

/* The share of the scheduled requests the SLO judged (all but slo_unjudged)
 * that met it: slo_met over scheduled less slo_unjudged; NAN when none was
 * judged. The one home of attainment for run, merge, sweep and compare. */
double stats_attainment(const struct stats *s);

/* Records of any kind other than ok. */
uint64_t stats_failed(const struct stats *s);

/* Where a measured share stands against a target share that a user gave as
 * a percentage (--attainment 99.9, --max-error-rate 0.7%, --expect
 * error_rate<1%, --fail-on's pp): -1 below, 0 equal, 1 above. The share is
 * a ratio of counts (k / n) and the target a decimal over 100, each
 * rounded once or twice on its way to a double, so an exact 999 / 1000
 * reads 0.999 while 99.9 / 100 reads 0.99900000000000011, and a step at
 * exactly the target failed with "attainment 99.9% < 99.9%". Two values
 * within STATS_SHARE_REL_TOL of each other, relative to the larger, are
 * equal: the roundings are under 1e-15 relative, and two different ratios
 * k / n and a decimal target with d places (after the point of the
 * fraction) differ by at least 1 / (n 10^d), more than the tolerance for
 * any n up to 1e12 / 10^d (a billion requests at 99.9%). A NAN on either
 * side reads 0: callers that must not pass a NAN check for it first. */
#define STATS_SHARE_REL_TOL 1e-12
int stats_share_cmp(double share, double target);

/* The error rate every verdict and figure uses (a sweep step's, a class's,
 * an endpoint's, --expect's and compare's): the requests that ended in an
 * error over the requests the client let end. A request the client
 * cancelled (kind cancelled: a workload's cancel, or a run stopped by a
 * signal) is neither: it says nothing of the server, so a workload with
 * 10% cancellations does not read a 10% error rate. errors is a count of
 * error records (all of them, or of one kind) of completed requests, of
 * which the client cancelled cancelled (pass 0 for the share of the
 * cancellations themselves, which is over every completed request). 0 when
 * the client let none end. */
double stats_error_share(double errors, double completed, double cancelled);

/* Records of an error kind (neither ok nor cancelled): failed less the
 * client's cancellations. */
uint64_t stats_errors(const struct stats *s);

/* The requests the client let end: completed less its cancellations, what
 * an error rate is over. 0 when it cancelled every one: then there is no
 * error rate to judge, though stats_error_share reads 0. */
uint64_t stats_let_end(const struct stats *s);

/* stats_errors over the requests the client let end (stats_error_share). */
double stats_error_rate(const struct stats *s);

/* 1 when s counts openai-embeddings records (inputs_records > 0): no
 * stream, so no TTFT, ITL or TPOT to report, and inputs/s to add. */
int stats_embeddings(const struct stats *s);

/* The share of the prompt tokens the server said it served from cache:
 * cached_tokens / prompt_tokens, or NAN when no record reported a cached
 * count or there were no prompt tokens. */
double stats_cached_share(const struct stats *s);

/* Whether an ok record's output was cut short: fewer output tokens than
 * its max_tokens, by the server's own count (usage), when it asked for
 * exactly max_tokens (ignore_eos) or the server said a token limit ended
 * it (stats_finish_by_length: a limit other than max_tokens, the context
 * say). Such outputs make
 * TPOT and output throughput describe less work than the workload asked
 * for. 0 for a record that is not ok, or whose count came from counted
 * events (an event may carry several tokens). */
int stats_cut_short(const struct record *r);

/* 1 when finish_reason (NUL-terminated, "" = none) says a token limit
 * ended the output: "length" (chat, completions), "max_tokens" and
 * "model_context_window_exceeded" (Anthropic), "incomplete:max_output_tokens"
 * (the Responses API's incomplete status with its reason); else 0. The one
 * place that decides it, for stats_cut_short. */
int stats_finish_by_length(const char *finish_reason);

#endif
