/* cmp_int.h: what cmd_compare.c (runs) shares with cmp_sweep.c (sweeps):
 * one side of a comparison as a record set with its facts, the rows of
 * candidate against baseline built from two such sets, and their
 * terminal and JSON forms. A run's side is its whole directory; a
 * sweep's is one step's records (docs/compare.md). Nothing outside
 * those two files includes it. */
#ifndef LL_CMP_INT_H
#define LL_CMP_INT_H

#include <stdint.h>
#include <stdio.h>

#include <jansson.h>

#include "measure/compare.h"
#include "measure/record.h"

#define MAX_SIDES 16

/* The latencies taken from the records: ok requests out of the warm-up
 * and the cold start (--cold-start), as the summary's figures. */
enum { LAT_TTFT, LAT_TPOT, LAT_ITL, LAT_E2E, LAT_N };
#define NPCT 3 /* p50, p90, p99 */

/* One latency with where its request fell in the schedule. */
struct lat_at {
    int32_t step; /* the record's sweep step, -1 for a run */
    uint64_t sched_ns, end_ns;
    double v;
};

/* One latency's values of a side. While records are added they are in
 * at (in the order read); cmp_side_finish sorts them into v and, in the
 * order the requests were scheduled (by step, then sched_ns), into t, and
 * frees at. */
struct vec {
    double *v; /* ascending */
    double *t; /* the same values in scheduled order */
    struct lat_at *at;
    size_t n, cap;
};

struct side {
    const char *dir;
    const char *label;
    char kind[16];
    json_t *run, *summary;
    struct vec lat[LAT_N];
    size_t block[LAT_N];    /* each latency's bootstrap block length (cmp_side_finish) */
    size_t overlap;         /* 1 + the ok requests a request overlapped in flight, on average
                          * (rounded): the least block length */
    double tok_sum, tok_sq; /* output tokens of ok requests, and their squares */
    uint64_t completed, failed, sent, scheduled, good, attained;
    uint64_t slo_judged; /* scheduled less those the SLO could not judge (stats_attainment) */
    /* Arrivals scheduled in the window, --cold-start's included
     * (summary.json's scheduled_rate_per_s x window, scheduled when
     * absent; a sweep's step: its scheduled and its cold records
     * scheduled from the warm-up's end): the requests whose tokens tok_sum
     * counts, where scheduled, as goodput, leaves the cold ones out. */
    uint64_t win_scheduled;
    /* The requests whose sends sent counts: a run's win_scheduled (its
     * send rate counts cold sends), a sweep step's scheduled (its achieved
     * rate leaves them out, docs/sweep.md). */
    uint64_t sent_scheduled;
    /* Requests that ended in the window, any kind, less those the client
     * dropped unsent (summary.json's completion_rate_per_s less its
     * dropped_rate_per_s, x window; a sweep step's records that ended
     * in its window, less client_dropped ones): what the side served, against win_scheduled
     * (cmp_kept_up). */
    uint64_t served;
    uint64_t by_kind[REC_KIND_COUNT]; /* summary.json's requests.by_kind */
    double window_s;
    uint64_t win_lo, win_hi; /* the measurement window, ns from the run's start (a sweep's
                              * side: of the step whose record is being added) */
    double goodput, attainment, tok_s, send_rate;
    int has_slo;
    int no_stream;              /* --api openai-embeddings: no first token, no output, so
                                 * no TTFT, TPOT, ITL or output tok/s rows */
    int invalid, interrupted;   /* run.json's outcome, or summary.json's */
    const char *invalid_reason; /* borrowed from run or summary; NULL when none */
    const char *stopped_in;     /* where a signal stopped it, NULL when unknown */
    char err[1024];
};

enum unit { U_NS, U_RPS, U_TOKS, U_SHARE };

struct row {
    char name[48];  /* ttft_p99, goodput... (compare.json, --fail-on) */
    char title[48]; /* TTFT p99 */
    enum unit unit;
    enum cmp_better dir;
    double base, cand; /* NAN when none */
    struct cmp_diff d;
    /* goodput and output tok/s of two open loops: the difference per
     * scheduled request, whose interval d's spans (d itself is per
     * second); ok 0 otherwise */
    struct cmp_diff per_sched;
    int pp; /* d in percentage points (a share), else a fraction */
    const char *method;
    size_t block_b, block_c; /* a percentile's bootstrap block lengths, each side's (1: single
                              * requests); 0 for other rows */
    size_t n_b, n_c;         /* a percentile's values, each side's; 0 for other rows */
    double pct;              /* a percentile row's percentile (50, 90, 99); 0 for other rows */
    enum cmp_verdict verdict;
    const char *same_why; /* for same: within_noise, too_few or below_min_effect */
    /* The runs behind each side's figure: a sweep's repeats of the rate
     * (--repeat, --confirm), else 1. */
    int runs_b, runs_c;
    struct cmp_diff between; /* the between-run interval (cmp_rows_between); ok 0: none */
    int from_runs;           /* 1: between's was the wider, so d's spans both */
};

/* Add one record to s (its window win_lo..win_hi set first): the
 * latencies of ok records out of the warm-up, the output tokens of ok
 * records that ended in the window. ud is the side. */
void cmp_side_add_record(void *ud, const struct record *r);

/* Sort s's latencies, after its last record: each vec's v (ascending)
 * and t (scheduled order) from its at, which is freed, and each
 * latency's bootstrap block length (at least s->overlap). A second call
 * does nothing. */
void cmp_side_finish(struct side *s);

void cmp_side_free(struct side *s);

/* The most rows cmp_build_rows writes. */
int cmp_rows_max(void);

/* 1 when b and c are both open loops (run.json's config.load_model
 * "open") with requests scheduled in the window: one schedule may draw
 * more arrivals than the other (another --seed), which is not the
 * server's doing. Their achieved rate is then judged per scheduled
 * request, not per second; their goodput and output tok/s per second
 * with an interval that spans the one per scheduled request too where
 * both sides kept up with their schedules (cmp_kept_up; cmp_rows.c). Each
 * count is over the requests it counts: goodput per warm request
 * scheduled (scheduled), output tokens per request scheduled in the
 * window, cold ones included (win_scheduled), sends per sent_scheduled. */
int cmp_per_scheduled(const struct side *b, const struct side *c);

/* The rows of candidate c against baseline b into rows (cmp_rows_max of
 * them); returns how many, or -1 when out of memory. */
int cmp_build_rows(const struct side *b, const struct side *c, unsigned resamples, uint64_t seed,
                   double min_effect, const int *kind_wanted, struct row *rows);

/* Each row's verdict (and same_why) from its d, with min_effect (a
 * fraction; not for shares). */
void cmp_row_judge(struct row *r, double min_effect);

/* Side s's figure of the row named row (ttft_p50, goodput, ...), in the
 * row's unit; NAN when it has none. */
double cmp_side_value(const struct side *s, const char *row);

/* With the runs behind each side (bs: nb of them, cs: nc; a sweep's
 * repeats of one rate, each a side of its own), each of the n rows gets
 * its between-run interval (cmp_between_runs, around the row's pooled
 * difference) and runs_b, runs_c; where that interval is wider than the
 * row's own, d's interval becomes their span (from_runs 1: it keeps the
 * row's own bounds, per scheduled request's included, where they reach
 * further) and the row is judged again. */
void cmp_rows_between(struct row *rows, int n, const struct side *const *bs, size_t nb,
                      const struct side *const *cs, size_t nc, double min_effect);

/* The rows as a table (a heading naming the sides, then one line each;
 * with a column saying which interval each row used when a side has
 * runs). */
void cmp_print_table(FILE *f, const struct side *b, const struct side *c, const struct row *rows,
                     int n, unsigned resamples);

/* A row's value (in its unit) and a difference (% or pp) as text in buf. */
const char *cmp_fmt_value(const struct row *r, double v, char *buf, size_t len);
const char *cmp_fmt_diff(const struct row *r, double x, char *buf, size_t len);

/* One row as compare.json's object. */
json_t *cmp_row_json(const struct row *r);

/* Row names, as --fail-on gives them (a run's rows are --expect's
 * metrics: measure/expect.h's expect_error_kind, expect_figure): whether
 * a row is a share (its differences in percentage points); whether a row
 * is a sweep's own (its SLO capacity, "capacity", or its knee, "knee":
 * once per candidate, not per offered rate); whether a table has such a
 * row. */
int cmp_is_share_row(const char *name);
int cmp_sweep_row(const char *name);
int cmp_known_row(const char *name);

/* The bootstrap's seed, the same for every comparison (results repeat). */
#define CMP_SEED 0x636f6d70617265ULL

/* Read and analyse every side's sweep (sides[i].dir), before the
 * workload check and before anything is written: a directory that is
 * not a readable sweep exits 2 with one line that says why. */
void cmp_sweeps_load(const struct side *sides, int nd);

/* The options of a comparison of sweeps, as compare_main parsed them. */
struct cmp_opts {
    unsigned resamples;
    double min_effect;
    int quiet;
    const int *kind_wanted;
    json_t **diffs; /* per candidate: the allowed config differences (owned by the caller) */
    const struct cmp_threshold *th; /* --fail-on, checked at every common rate */
    size_t n_th;
};

/* How a side ended: "ok", "INVALID", "interrupted" or "INVALID,
 * interrupted". */
const char *cmp_outcome_name(const struct side *s);

/* A side as compare.json names it (dir, label, outcome, invalid,
 * invalid_reason, interrupted, shard); caller owns it. */
json_t *cmp_side_json(const struct side *s);

/* The nd sides' warnings (sides[0] the baseline), one stderr line each:
 * a side that was INVALID or interrupted, and one that is one shard of a
 * sharded run; but when every side is the same shard K/N (like for like
 * shares of the load), one note line says so instead of the shard
 * warnings. */
void cmp_sides_warn(const struct side *sides, int nd);

/* compare's exit status when a --fail-on row's interval is too wide to
 * pass or fail it. */
#define CMP_EXIT_INCONCLUSIVE 5

/* The --fail-on gates of o on one candidate's rows (at offered rate
 * rate; NAN for runs), as compare.json's "fail_on" array; each failing or
 * inconclusive one said on stderr, and counted in *fail or *inconclusive.
 * Caller owns the array. */
json_t *cmp_gates(const struct cmp_opts *o, const struct side *c, double rate,
                  const struct row *rows, int n, int *fail, int *inconclusive);

/* The end of either kind: cands into doc as "candidates", the exit
 * status (1 on a failed --fail-on, else CMP_EXIT_INCONCLUSIVE on an
 * inconclusive one, else 0; 3 when the files cannot be written) as
 * "exit_status", then compare.json and compare.html into outdir, said on
 * stdout unless quiet. Takes doc's and cands' references. */
int cmp_finish(json_t *doc, json_t *cands, int fail, int inconclusive, int quiet,
               const char *outdir);

/* compare of sweeps, after cmp_sweeps_load: sides[0] the baseline, every
 * one a sweep. Writes compare.json and compare.html into outdir and
 * prints unless quiet. Returns the exit status: 1 when a --fail-on
 * threshold fails at some common rate, else 5 when one is inconclusive
 * at some rate, else 0; 3 when a file cannot be written. */
int cmp_sweeps(struct side *sides, int nd, const struct cmp_opts *o, const char *outdir);

#endif
