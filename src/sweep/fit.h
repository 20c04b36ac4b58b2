/* fit.h: the numerical fits of a sweep's analysis, pure functions of their
 * arguments: the order-statistic interval of a quantile (exact binomial),
 * the lower tail of a binomial, the least-squares slope, the 3x3 linear
 * solver, the two-segment (hinge) knee fit, and Student's t at 97.5% with
 * the mean's 95% interval built on it. Nothing here knows about steps or records; sweep.c gives the
 * numbers their meaning. */
#ifndef LL_FIT_H
#define LL_FIT_H

#include <stddef.h>
#include <stdint.h>

/* Ranks (1-based) of the order statistics that bracket the q-quantile
 * (0 < q < 1) of n samples with confidence conf (e.g. 0.95), from the
 * binomial distribution: P(X(lo) <= x_q <= X(hi)) >= conf, each tail at
 * most (1 - conf) / 2. *hi is 0 when no rank up to n is high enough, *lo
 * is 0 when none is low enough. Returns 0, or LL_E_INVAL for bad
 * arguments (n == 0 included). Costs O(hi) lgamma calls. */
int fit_quantile_ci_ranks(uint64_t n, double q, double conf, uint64_t *lo, uint64_t *hi);

/* P(X <= k) for X ~ Binomial(n, p), 0 <= p <= 1 (1 when k >= n). Costs
 * O(k) lgamma calls. */
double fit_binom_cdf(uint64_t n, uint64_t k, double p);

/* P(X >= k) for X ~ Hypergeometric(N, K, n): the number of marked ones
 * among n drawn without replacement from N of which K are marked (K, n <=
 * N; 1 when k == 0, 0 when k > min(K, n)). Costs O(min(K, n) - k) lgamma
 * calls. */
double fit_hypergeom_upper_tail(uint64_t N, uint64_t K, uint64_t n, uint64_t k);

/* The least-squares slope of y on x over n points (0 when n < 2 or every
 * x is equal). */
double fit_slope(const double *x, const double *y, size_t n);

/* Solve the 3x3 system m v = r by Gaussian elimination with partial
 * pivoting; m and r are overwritten. Returns 0 with the solution in v, or
 * -1 when a pivot is under 1e-12 in magnitude (singular; v is then not
 * meaningful). */
int fit_solve3(double m[3][3], double r[3], double v[3]);

/* A two-segment (hinge) fit y = a + b x + c max(0, x - k). */
struct fit_knee {
    int found;                   /* 1: the slope above k is under half the slope below */
    double knee_x;               /* k, in x units */
    double slope_below;          /* b */
    double slope_above;          /* b + c */
    double y_at_knee;            /* a + b k */
    double sse;                  /* residual sum of squares */
    /* 1 when k is at the top of its range (the second largest x): with
     * completions still on the line there, the knee may lie anywhere up
     * to beyond_x (the largest x). A k at the bottom is where the data
     * bend: the points below it are on the line. */
    int edge;
    double beyond_x;
};

/* Fit the hinge to n points (x need not be sorted; n >= 4 for a result;
 * k ranges between the second smallest and the second largest x, and
 * edge says when it ends on the largest). Fills *out (found 0 when n < 4 or
 * no bend). */
void fit_knee(const double *x, const double *y, size_t n, struct fit_knee *out);

/* The mean of v[0..n) into *mean, and into *ci the half-width of its 95%
 * interval, t(0.975, n - 1) s / sqrt(n) with s the sample standard
 * deviation (0 when n < 2). n == 0 gives mean 0. */
void fit_mean_ci95(const double *v, uint32_t n, double *mean, double *ci);

/* P(X <= k) for X ~ Poisson(lambda), lambda > 0 (1 when lambda is not
 * above 0). Costs O(k) exp and lgamma calls at most (fewer when k is
 * below lambda, the lower tail a caller asks about). */
double fit_poisson_cdf(uint64_t k, double lambda);

#endif
