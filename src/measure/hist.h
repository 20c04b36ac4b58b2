/* hist.h: a log-linear, mergeable histogram of uint64 values (latencies in
 * nanoseconds, mostly).
 *
 * Values below 256 are kept exactly. Above that, each power of two is split
 * into 128 equal sub-buckets, so a bucket [lo, hi] is never wider than
 * lo/128 and the midpoint we report is within 1/256 (0.4%) of any value in
 * it. Memory is fixed (about 42 KiB) and allocated once by hist_new;
 * recording is O(1) and never allocates. Values >= HIST_MAX_VALUE are
 * counted in an overflow bucket (they still count towards count, min, max
 * and mean), never clamped silently.
 *
 * Percentiles use the nearest-rank definition of docs/percentiles.md: the
 * pct-th percentile of n values is the ceil(pct/100 * n)-th smallest.
 *
 * A histogram is not thread-safe: each worker owns its own and they are
 * merged at the end (hist_merge). */
#ifndef LL_HIST_H
#define LL_HIST_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

/* ~39 hours in ns; larger values are counted in overflow. */
#define HIST_MAX_VALUE ((uint64_t)1 << 47)

/* Values below this are recorded exactly (one bucket per value). */
#define HIST_EXACT_BELOW 256
/* Linear sub-buckets per power of two above HIST_EXACT_BELOW. */
#define HIST_SUB_BUCKETS 128

struct hist;

/* A new, empty histogram. Aborts on out of memory (never returns NULL).
 * Caller frees with hist_free. */
struct hist *hist_new(void);

/* Free h. NULL does nothing. */
void hist_free(struct hist *h);

/* Forget every value: h becomes as if just made by hist_new. */
void hist_reset(struct hist *h);

/* Record one value v (any uint64; >= HIST_MAX_VALUE goes to overflow). */
void hist_record(struct hist *h, uint64_t v);

/* Record the value v n times (n = 0 does nothing). Same as n calls of
 * hist_record, in O(1). */
void hist_record_n(struct hist *h, uint64_t v, uint64_t n);

/* Add every value of src into dst. Afterwards dst is exactly what recording
 * both value sets into one histogram would have given. src is unchanged;
 * dst == src is allowed (doubles every count). */
void hist_merge(struct hist *dst, const struct hist *src);

/* Number of values recorded, overflow included. */
uint64_t hist_count(const struct hist *h);

/* Number of values recorded that were >= HIST_MAX_VALUE. */
uint64_t hist_overflow(const struct hist *h);

/* Smallest value recorded, exact (overflow included); 0 when empty. */
uint64_t hist_min(const struct hist *h);

/* Largest value recorded, exact (overflow included); 0 when empty. */
uint64_t hist_max(const struct hist *h);

/* Arithmetic mean of every value recorded, exact up to the final division
 * (the sum is kept in 128 bits); 0 when empty. */
double hist_mean(const struct hist *h);

/* The nearest rank of percentile pct among n values: ceil(pct/100 * n),
 * within [1, n] (a product that is an integer up to floating-point rounding
 * counts as that integer, so p50 of 10 values is rank 5, not 6). pct outside
 * (0, 100] is treated as the nearest end: rank 1 or rank n. Returns 0 when
 * n is 0. Code that computes exact percentiles from raw records uses this,
 * so every percentile in llmload has one definition. */
uint64_t hist_percentile_rank(double pct, uint64_t n);

/* The pct-th percentile (0 < pct <= 100) by nearest rank: an estimate of
 * the hist_percentile_rank(pct, n)-th smallest value. The estimate is the
 * midpoint of that value's bucket clamped to [min, max], so it is within
 * 1/256 of the exact value (exact below 256). Rank 1 returns the exact min,
 * rank n (pct = 100) the exact max. When the rank falls among overflow
 * values the result is the exact max (an upper bound). 0 when empty.
 * Cost: one pass over at most 5,248 buckets. */
uint64_t hist_percentile(const struct hist *h, double pct);

/* The estimate of the rank-th smallest value (rank 1 is the least; rank is
 * taken into [1, n]), as hist_percentile gives it for the percentile of
 * that rank: exact at rank 1 and n, else within 1/256. 0 when empty. */
uint64_t hist_rank_value(const struct hist *h, uint64_t rank);

/* Walk the non-empty buckets in increasing order, for plotting and
 * serialising. Set *cursor = 0 before the first call. Each call that
 * returns 1 gives one bucket: values in [*lo, *hi] (inclusive), *count of
 * them. The overflow bucket, if non-empty, comes last as
 * [HIST_MAX_VALUE, max]. Returns 0 when there are no more buckets. */
int hist_iter_next(const struct hist *h, size_t *cursor, uint64_t *lo,
                   uint64_t *hi, uint64_t *count);

/* Serialise h as one line of printable ASCII without a newline, e.g.
 * "llh1 3 5 300 0 312 0 5:1 +2:1 +271:1" for 5, 7, 300 (format in
 * docs/percentiles.md). The string round-trips exactly through
 * hist_from_string. Caller frees with free(). Aborts on out of memory. */
char *hist_to_string(const struct hist *h);

/* Replace the contents of h with the histogram serialised in s (as made by
 * hist_to_string; a trailing newline is allowed). Returns 0, or LL_E_INVAL
 * with a one-line reason in err (errlen bytes, may be 0) when s is not a
 * well-formed, self-consistent histogram; h is then empty. */
int hist_from_string(struct hist *h, const char *s, char *err, size_t errlen);

/* Write hist_to_string(h) and a newline to f. Returns 0 or LL_E_IO. */
int hist_write(const struct hist *h, FILE *f);

#endif
