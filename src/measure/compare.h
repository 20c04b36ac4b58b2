/* compare.h: the statistics of `llmload compare`: is a candidate's figure
 * different from the baseline's by more than the noise of the two runs?
 *
 * Pure functions of numbers (docs/compare.md explains each method): a
 * percentile's difference by bootstrap over the raw values, a rate's by
 * the Poisson interval of its count, a share's by Newcombe's interval of
 * two Wilson intervals, and the verdict and --fail-on gate read from those
 * intervals. Every interval here is a 95% one. */
#ifndef LL_COMPARE_H
#define LL_COMPARE_H

#include <stddef.h>
#include <stdint.h>

/* z of a two-sided 95% interval. */
#define CMP_Z95 1.959963984540054
/* Each tail's share of a two-sided 95% interval. */
#define CMP_TAIL95 0.025

/* A difference and its interval. For a relative difference (percentiles,
 * rates) the numbers are fractions: (candidate / baseline) - 1, so 0.10 is
 * 10% more; for a share, differences of the two shares (0.005 is half a
 * percentage point). ok is 0 when it could not be computed (a side with
 * no value); then the rest is 0. */
struct cmp_diff {
    int ok;
    int too_few; /* a percentile with too few values on a side to bound it
                  * (cmp_pct_enough): diff is set, lo and hi are -inf and +inf */
    double diff, lo, hi;
};

/* Whether n values bound their p-th percentile at 95% without
 * assumptions: the order-statistic interval, ranks
 * floor(np - z sqrt(np(1-p))) to ceil(np + z sqrt(np(1-p))) + 1, lies
 * within 1..n. A p99 needs 563 values, a p90 53, a p50 8 (cmp_pct_min_n).
 * Below that a resample cannot show how far the true percentile may
 * lie past the largest value drawn, so the bootstrap's interval would be
 * too narrow. */
int cmp_pct_enough(size_t n, double p);

/* The fewest values that bound their p-th percentile (0 < p < 100), as
 * cmp_pct_enough decides: 8 for p50, 53 for p90, 563 for p99. What a
 * row with too few values says it lacks. */
size_t cmp_pct_min_n(double p);

/* The nearest-rank p-th percentile (0 < p <= 100) of the n sorted values
 * v: the hist_percentile_rank(p, n)-th smallest, the one definition of
 * docs/percentiles.md. n must be > 0. */
double cmp_percentile_sorted(const double *v, size_t n, double p);

/* Bootstrap intervals of the relative difference of percentiles between
 * two samples. base (nb values) and cand (nc values) must be sorted
 * ascending; ps holds np percentiles (ascending, each in (0, 100]).
 * resamples draws of each side (with replacement, the same size as the
 * side) are made with a generator seeded by seed; for each the
 * percentiles of both are taken, and out[i] gets the observed relative
 * difference of ps[i] and the 2.5th and 97.5th percentiles of the
 * resampled ones. Sides are resampled independently. Cost: one pass of
 * nb + nc per resample whatever np is (the values are sorted once, by the
 * caller, and a resample is counts of indices). out[i].ok is 0 when a side
 * is empty, or the baseline's percentile is 0; out[i].too_few is 1 when a
 * side has too few values for ps[i] (cmp_pct_enough). Returns 0 (out of
 * memory aborts, as ll_malloc does). */
int cmp_bootstrap_pct(const double *base, size_t nb, const double *cand, size_t nc,
                      const double *ps, size_t np, unsigned resamples, uint64_t seed,
                      struct cmp_diff *out);

/* One side of a percentile bootstrap. Requests of one run are not
 * independent: those in flight together share the server's batches, so
 * their decode times rise and fall together, and a resample of single
 * requests sees less spread than a run has. A block bootstrap resamples
 * runs of consecutive requests instead, which keeps that correlation. */
struct cmp_sample {
    const double *sorted;   /* the n values, ascending */
    const double *in_order; /* the same n values in the order the requests were scheduled;
                             * may be NULL when block is 1 */
    size_t n;
    size_t block; /* 1: the values are taken as independent (the plain bootstrap); L > 1:
                   * circular blocks of L consecutive values of in_order */
};

/* As cmp_bootstrap_pct, with each side resampled as a circular block
 * bootstrap (Politis and Romano 1992): a resample is ceil(n / L) blocks,
 * each L consecutive values of in_order from a start drawn uniformly in
 * [0, n), wrapping past the end, cut to n values. A side with block 1
 * draws exactly as cmp_bootstrap_pct does (the same generator, the same
 * interval). block must be in [1, n] for a side with values. Returns 0
 * (out of memory aborts). */
int cmp_bootstrap_pct_blocks(const struct cmp_sample *b, const struct cmp_sample *c,
                             const double *ps, size_t np, unsigned resamples, uint64_t seed,
                             struct cmp_diff *out);

/* The largest block length cmp_block_length returns for n values:
 * ceil(min(3 sqrt(n), n / 3)), at least 1. */
size_t cmp_block_max(size_t n);

/* The block length of the circular block bootstrap for the series x (n
 * values in time order) by Politis and White's (2004) automatic rule as
 * corrected by Patton, Politis and White (2009): the lag m after which
 * KN = max(5, sqrt(log10 n)) autocorrelations in a row are within
 * 2 sqrt(log10(n) / n) of 0, a flat-top lag window of 2m, and
 * b = (2 G^2 / D)^(1/3) n^(1/3), D = 4/3 g(0)^2. Rounded to the nearest
 * integer, in [1, cmp_block_max(n)]. A series without correlation (or
 * constant, or n < 8) gives 1. */
size_t cmp_block_length(const double *x, size_t n);

/* The block length for the percentiles ps (np of them) of the values x
 * (n, in time order): a percentile's sampling error is that of the share
 * of values at or under it, so for each p that n values bound
 * (cmp_pct_enough) cmp_block_length of the series 1{x_t <= q_p}, q_p the
 * values' p-th percentile; the largest of them and of floor_len, at most
 * cmp_block_max(n). Returns 1 when n is 0. */
size_t cmp_pct_block_length(const double *x, size_t n, const double *ps, size_t np,
                            size_t floor_len);

/* Wilson score interval of a share k of n (k <= n, n > 0) at z. */
void cmp_wilson(uint64_t k, uint64_t n, double z, double *lo, double *hi);

/* The difference of shares kc/nc - kb/nb and its 95% interval by
 * Newcombe's hybrid score method (from the Wilson interval of each);
 * ok 0 when a side has n = 0. */
struct cmp_diff cmp_share_diff(uint64_t kb, uint64_t nb, uint64_t kc, uint64_t nc);

/* The relative difference of two totals, each a sum over a Poisson number
 * of events (a count: each event adds 1; a token total: each adds its
 * tokens): (sc / sb) - 1 with its 95% interval, from the normal interval
 * of log(sc / sb) whose variance is vb / sb^2 + vc / sc^2, where v is the
 * total's variance estimate: the sum of squares of what each event added
 * (the count itself for a count). Both totals per the same length of time
 * (the caller scales by the windows first: the ratio of rates is the ratio
 * of totals times the ratio of windows, which the caller passes as
 * scale = window_b / window_c). When one total is 0 and the other is not,
 * the interval is the exact one of the share of events that fell on each
 * side (Clopper-Pearson: with all n on one side, the other side's share
 * is at most 1 - 0.025^(1/n); the nonzero total counted as s^2 / v
 * events): the
 * candidate's 0 reads -100% with an upper bound below 0 when there were
 * enough events (a collapse is worse, not noise); the baseline's 0 reads
 * +infinity with a finite lower bound. ok 0 when both are 0. */
struct cmp_diff cmp_total_ratio(double sb, double vb, double sc, double vc, double scale);

/* 1 when an open loop kept up with its schedule in a window: it
 * finished (served: the requests that ended in the window, any kind, less
 * those the client dropped unsent) at least CMP_KEPT_UP_SHARE of the
 * arrivals scheduled in it (scheduled; 0 keeps up). Below the server's
 * capacity the two differ by the requests in flight at the window's two
 * edges, which cancel on average; above it the server sets served, and
 * the rest queue. */
#define CMP_KEPT_UP_SHARE 0.9
int cmp_kept_up(uint64_t served, uint64_t scheduled);

/* The between-run 95% interval of a difference, from each side's figure
 * run by run (b: nb runs' values, c: nc runs'; the repeats of one rate
 * of a sweep), around diff (the difference of the pooled figures, so the
 * interval holds the value it is shown with). relative 1: diff is
 * c / b - 1 and the interval is exp(log(1 + diff) +- t sqrt(vb + vc)) - 1,
 * v a side's squared coefficient of variation over its runs divided by
 * their count (the delta method for the log of a mean); relative 0 (a
 * share in percentage points): diff +- t sqrt(vb + vc), v the runs'
 * variance over their count. A side of one run has no variance of its
 * own: it is taken to vary as the other side does (its CV^2, or variance,
 * per run). t is t975 (tdist.h) at Welch-Satterthwaite's degrees of freedom (rounded
 * down), or at n - 1 of the side with runs when the other has one. ok 0
 * when neither side has two runs, a side has none, or (relative) a mean
 * is not above 0 or 1 + diff is not. Values must be finite. */
struct cmp_diff cmp_between_runs(const double *b, size_t nb, const double *c, size_t nc,
                                 int relative, double diff);

/* Which direction of a figure is better. */
enum cmp_better { CMP_LOWER_BETTER, CMP_HIGHER_BETTER };

enum cmp_verdict {
    CMP_SAME, /* the interval holds 0: within noise */
    CMP_BETTER,
    CMP_WORSE,
    CMP_NA, /* not computed */
};

/* "same", "better", "worse", "n/a". Static string. */
const char *cmp_verdict_name(enum cmp_verdict v);

/* The verdict of d for a figure where dir is better: same when the
 * interval holds 0 (or is unbounded: too_few) or the difference is smaller
 * than min_effect in size (in d's unit; 0 for none), else better or worse
 * by the sign of the difference. */
enum cmp_verdict cmp_verdict_of(const struct cmp_diff *d, enum cmp_better dir, double min_effect);

/* One --fail-on threshold: a row name ("ttft_p99", "goodput",
 * "error_rate") and the worsening it allows, as a fraction of the
 * baseline (pct: "+10%" is 0.10) or in percentage points of a share (pp:
 * "+0.5pp" is 0.005). The sign is the direction that is worse: + for
 * more, - for less. */
struct cmp_threshold {
    char row[32];
    double amount; /* signed: +0.10, -0.05, +0.005 */
    int pp;        /* 1: percentage points (a share's difference), 0: percent */
};

/* Parse "ttft_p99:+10%,goodput:-5%,error_rate:+0.5pp" into at most max
 * thresholds; *n gets how many. The sign is required, the amount must be
 * a positive finite number, and the unit "%" or "pp". Row names are not
 * checked here. Returns 0, or -1 with a one-line reason in err. */
int cmp_thresholds_parse(const char *spec, struct cmp_threshold *out, size_t max, size_t *n,
                         char *err, size_t errlen);

enum cmp_gate {
    CMP_GATE_PASS,         /* within the threshold, or within noise */
    CMP_GATE_FAIL,         /* worse past the threshold, outside noise */
    CMP_GATE_INCONCLUSIVE, /* within noise, but the interval reaches past the threshold */
};

/* The gate of one threshold on one difference, whose unit (fraction or
 * pp) must be the threshold's. Worse beyond the threshold and outside
 * noise (the interval excludes 0 on the worse side, and the difference
 * is past the threshold) fails. Otherwise, when the interval reaches past
 * the threshold on the worse side (the run was too short to tell), it is
 * inconclusive; else it passes. A difference not computed is
 * inconclusive, and so is one whose interval is unbounded (too_few). */
enum cmp_gate cmp_gate_of(const struct cmp_diff *d, const struct cmp_threshold *t);

#endif
