/* dist.h: the one DIST grammar shared by every option that takes a
 * distribution (prompt and output lengths, think time, ...).
 *
 *   DIST  := N | KIND ":" ARGS [",min=" X] [",max=" Y]
 *   KIND  := fixed:N | uniform:A,B | normal:MU,SD | lognormal:MU,SIGMA
 *          | lognormal:median=M,sigma=S | exponential:MEAN | gamma:K,THETA
 *
 * docs/distributions.md is the user's reference. Values are plain numbers
 * (a k/M/G suffix allowed: "1.5k") or, when the caller asks for durations,
 * durations with a unit ("500ms", "2s"; a bare number is seconds), stored
 * and sampled in nanoseconds. min= and max= truncate: samples outside are
 * redrawn up to DIST_MAX_REDRAWS times, then clamped (dist_sample_counted
 * counts it; no run does: dist_parse refuses an interval so narrow that
 * clamping is more than rare). A struct dist is fixed-size and holds no pointers:
 * copy it freely. */
#ifndef LL_DIST_H
#define LL_DIST_H

#include <stddef.h>
#include <stdint.h>

#include "util/rng.h"

/* Draws of a truncated distribution before a sample is clamped. */
#define DIST_MAX_REDRAWS 64
/* Longest spec dist_parse accepts and dist_format writes, NUL included. */
#define DIST_SPEC_MAX 256

/* The unit of a distribution's values. */
enum dist_unit {
    DIST_UNIT_NONE,        /* plain numbers (tokens, counts) */
    DIST_UNIT_DURATION_NS, /* durations; parsed with units, held in ns */
};

enum dist_kind {
    DIST_FIXED,       /* a = N */
    DIST_UNIFORM,     /* a = A, b = B: continuous uniform on [A, B] */
    DIST_NORMAL,      /* a = MU, b = SD */
    DIST_LOGNORMAL,   /* a = MU, b = SIGMA of the underlying normal (MU in
                         log of the unit: log(ns) for durations) */
    DIST_EXPONENTIAL, /* a = MEAN */
    DIST_GAMMA,       /* a = K (shape), b = THETA (scale); mean K * THETA */
};

struct dist {
    enum dist_kind kind;
    enum dist_unit unit;
    double a;          /* first parameter (see enum dist_kind), in the unit */
    double b;          /* second parameter, or 0 */
    double min;        /* truncation bounds in the unit; -inf/+inf if none */
    double max;
    int has_min;       /* min= was given (or set by dist_require_nonneg) */
    int has_max;       /* max= was given */
    int by_median;     /* lognormal written as median=M,sigma=S */
    double median;     /* that M, in the unit, kept for dist_format */
};

/* Parse spec (the grammar above) into *out. unit says whether values are
 * plain numbers or durations (durations must be >= 0; a bare number is
 * seconds). Returns 0, or LL_E_INVAL with a one-line reason in err (errlen
 * bytes, may be 0) naming the bad part and what was expected, e.g.
 *   normal: expected MU,SD with SD >= 0, got "5"
 * *out is written only on success. empirical:FILE is rejected as not
 * supported yet, and so is a spec of DIST_SPEC_MAX bytes or more. A truncation interval that holds less than 0.1% of the
 * distribution's mass (exact, or for gamma estimated from 20000 draws of a
 * fixed stream) is rejected. */
int dist_parse(const char *spec, enum dist_unit unit, struct dist *out,
               char *err, size_t errlen);

/* For quantities that cannot be negative (token lengths): returns
 * LL_E_INVAL with a reason in err if any parameter or bound of d is
 * negative (fixed:-1, uniform:-5,10, normal:-3,1, min=-1, ...). A normal
 * distribution is the only kind whose support reaches below 0; if it has
 * no min, this sets min = 0 (samples below 0 are redrawn) and dist_format
 * shows it. Returns 0 otherwise. Call it after dist_parse. */
int dist_require_nonneg(struct dist *d, char *err, size_t errlen);

/* One sample of d, using r. Truncation as described above; never NaN. */
double dist_sample(const struct dist *d, struct rng *r);

/* Same as dist_sample, and adds 1 to *clamped (if not NULL) when the
 * redraws ran out and the sample was clamped to [min, max]. */
double dist_sample_counted(const struct dist *d, struct rng *r,
                           uint64_t *clamped);

/* The most tokens one length of a request may be: the cap of
 * dist_to_tokens, and of a trace line's counts (TRACE_MAX_TOKENS is this
 * constant), so every request a run draws replays from its
 * --dump-schedule. An empirical file of lengths above it is refused
 * (empirical_check_length); a distribution's median may not come near it
 * (DIST_TOKENS_MEDIAN_MAX). */
#define DIST_TOKENS_MAX 100000000u

/* A drawn length v as a request's token count: the nearest integer in
 * [1, DIST_TOKENS_MAX] (below 1, and NaN, give 1; above the cap gives the
 * cap). The workload's lengths, from a distribution, an empirical file or
 * a class, all pass through it, so --workload classes and the flags round
 * alike. */
uint32_t dist_to_tokens(double v);

/* dist_sample rounded to the nearest integer and made >= 0 (for token
 * lengths and nanoseconds). Values beyond 2^63 saturate there. */
uint64_t dist_sample_u64(const struct dist *d, struct rng *r);

/* The analytic mean of d, in its unit. Truncation is ignored: this is the
 * mean of the untruncated distribution. */
double dist_mean(const struct dist *d);

/* Write the canonical spec of d into buf (len bytes): the kind spelled
 * out, numbers in their shortest exact form, durations with the largest
 * unit that keeps them exact ("fixed:500", "uniform:500ms,1500ms",
 * "normal:500,100,min=0"). dist_parse of the result gives back d. Returns
 * the length written (like snprintf, excluding the NUL), or LL_E_FULL if
 * buf is too small (DIST_SPEC_MAX bytes are always enough). */
int dist_format(const struct dist *d, char *buf, size_t len);

/* Token lengths no model's context holds: a length distribution whose
 * median is above DIST_TOKENS_MEDIAN_MAX cannot be meant; one whose p99 is
 * above DIST_TOKENS_P99_WARN probably is not. A lognormal:MU,SIGMA whose
 * median e^MU is above DIST_TOKENS_HINT_MEDIAN was most likely meant as a
 * median of MU. */
#define DIST_TOKENS_MEDIAN_MAX 10e6
#define DIST_TOKENS_P99_WARN 1e6
#define DIST_TOKENS_HINT_MEDIAN 1e6

/* The median and the 99th percentile of d, in its unit, within its
 * truncation bounds (a bound caps the untruncated value). Exact for every
 * kind but gamma (Wilson-Hilferty's approximation). */
double dist_median(const struct dist *d);
double dist_p99(const struct dist *d);

/* The share of d's samples that are clamped (dist_sample_counted): with m
 * the mass of its truncation interval, (1 - m)^DIST_MAX_REDRAWS; 0 without
 * min= or max=. Known before any draw, so a run warns of it instead of
 * counting. */
double dist_clamp_share(const struct dist *d);
/* The clamped share above which dist_check_tokens warns. */
#define DIST_CLAMP_WARN 0.01

/* Check d as a distribution of token lengths: returns LL_E_INVAL with a
 * one-line reason in err (naming no flag) when its p99 rounds to 0 tokens
 * (a fixed 0, uniform:0,0.4), which a request would send as 1; else 0. */
int dist_check_length(const struct dist *d, char *err, size_t errlen);

/* Check d as a distribution of token lengths given to flag (e.g.
 * "--prompt-tokens", as spec; flag NULL: a file's field, which its caller
 * names). Returns LL_E_INVAL with a one-line reason
 * naming flag and spec in err when dist_check_length refuses it or its
 * median is above DIST_TOKENS_MEDIAN_MAX (pointing a lognormal:MU,SIGMA
 * with a huge e^MU to the median= form); else 0, with warn (warnlen
 * bytes) set to a one-line warning when its p99 is above
 * DIST_TOKENS_P99_WARN, or else when more than DIST_CLAMP_WARN of its
 * samples are clamped (dist_clamp_share), "" when neither. */
int dist_check_tokens(const struct dist *d, const char *flag, const char *spec, char *err,
                      size_t errlen, char *warn, size_t warnlen);

/* The static name of a kind: "fixed", "uniform", ... */
const char *dist_kind_name(enum dist_kind k);

#endif
