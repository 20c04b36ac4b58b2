/* test_compare.c: the statistics of `llmload compare` (measure/compare.c):
 * a bootstrap interval that covers a known shift and excludes none, the
 * Wilson and Newcombe intervals against published values, the Poisson
 * ratio, verdicts, and the --fail-on parser and gate. */
#include "test.h"

#include <math.h>
#include <string.h>
#include <time.h>

#include "measure/compare.h"
#include "sweep/fit.h"
#include "util/rng.h"

static int dcmp(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

/* n lognormal values (median m, sigma 0.5) from stream, sorted. */
static double *lognormal_sorted(size_t n, double m, uint64_t stream)
{
    struct rng r;
    rng_seed(&r, 99, stream);
    double *v = malloc(n * sizeof *v);
    assert_non_null(v);
    for (size_t i = 0; i < n; i++)
        v[i] = m * exp(0.5 * rng_normal(&r));
    qsort(v, n, sizeof *v, dcmp);
    return v;
}

static void test_percentile_nearest_rank(void **state)
{
    double v[] = {1, 2, 3, 4, 5, 6, 7, 8, 9, 10};
    assert_true(cmp_percentile_sorted(v, 10, 50) == 5);
    assert_true(cmp_percentile_sorted(v, 10, 90) == 9);
    assert_true(cmp_percentile_sorted(v, 10, 99) == 10);
    assert_true(cmp_percentile_sorted(v, 10, 0.1) == 1);
    assert_true(cmp_percentile_sorted(v, 1, 99) == 1);
    /* The project's one rank (hist_percentile_rank): 7% of 100 is
     * 7.000000000000001 in floating point, rank 7, not 8. */
    double w[100];
    for (int i = 0; i < 100; i++)
        w[i] = i + 1;
    assert_true(cmp_percentile_sorted(w, 100, 7) == 7);
    assert_true(cmp_percentile_sorted(w, 100, 14) == 14);
}

static const double ps[] = {50, 90, 99};

/* A candidate 20% slower than the baseline (other draws of the same
 * shape): every interval holds +20% and excludes 0. */
static void test_bootstrap_covers_shift(void **state)
{
    size_t n = 3000;
    double *b = lognormal_sorted(n, 100.0, 1), *c = lognormal_sorted(n, 120.0, 2);
    struct cmp_diff d[3];
    assert_int_equal(cmp_bootstrap_pct(b, n, c, n, ps, 3, 2000, 7, d), 0);
    for (int i = 0; i < 3; i++) {
        assert_true(d[i].ok);
        if (!(d[i].lo < 0.2 && d[i].hi > 0.2 && d[i].lo > 0))
            fail_msg("p%g: diff %.4f [%.4f, %.4f] should hold 0.2 and exclude 0", ps[i], d[i].diff,
                     d[i].lo, d[i].hi);
        assert_int_equal(cmp_verdict_of(&d[i], CMP_LOWER_BETTER, 0), CMP_WORSE);
        assert_int_equal(cmp_verdict_of(&d[i], CMP_HIGHER_BETTER, 0), CMP_BETTER);
    }
    /* The same seed gives the same interval. */
    struct cmp_diff e[3];
    assert_int_equal(cmp_bootstrap_pct(b, n, c, n, ps, 3, 2000, 7, e), 0);
    assert_memory_equal(d, e, sizeof d);
    free(b);
    free(c);
}

/* Two samples of one distribution: the intervals hold 0 (same); over 40
 * pairs at p50 and p90 at most 6 of 80 intervals miss 0 (95%: 4 expected). */
static void test_bootstrap_same_distribution(void **state)
{
    size_t n = 1000;
    int miss = 0;
    for (uint64_t k = 0; k < 40; k++) {
        double *b = lognormal_sorted(n, 100.0, 100 + 2 * k);
        double *c = lognormal_sorted(n, 100.0, 101 + 2 * k);
        struct cmp_diff d[2];
        assert_int_equal(cmp_bootstrap_pct(b, n, c, n, ps, 2, 500, k, d), 0);
        for (int i = 0; i < 2; i++)
            miss += cmp_verdict_of(&d[i], CMP_LOWER_BETTER, 0) != CMP_SAME;
        free(b);
        free(c);
    }
    print_message("same distribution: %d of 80 intervals missed 0\n", miss);
    assert_true(miss <= 6);
}

/* 10,000 values a side, 2,000 resamples, three percentiles: the time is
 * printed, not bounded (this runs under valgrind and ASan, on shared
 * machines); what is asserted is that so many values give a tight
 * interval around the estimate at p50 and p90 (two draws of one
 * distribution: the p50's sampling spread is about 1.5% a side). */
static void test_bootstrap_large(void **state)
{
    size_t n = 10000;
    double *b = lognormal_sorted(n, 100.0, 5), *c = lognormal_sorted(n, 100.0, 6);
    struct cmp_diff d[3];
    struct timespec t0, t1;
    clock_gettime(CLOCK_MONOTONIC, &t0);
    assert_int_equal(cmp_bootstrap_pct(b, n, c, n, ps, 3, 2000, 1, d), 0);
    clock_gettime(CLOCK_MONOTONIC, &t1);
    double s = (double)(t1.tv_sec - t0.tv_sec) + (double)(t1.tv_nsec - t0.tv_nsec) / 1e9;
    print_message("bootstrap 2x10000 values, 2000 resamples: %.3f s\n", s);
    for (int i = 0; i < 2; i++) {
        assert_true(d[i].ok && !d[i].too_few);
        assert_true(d[i].lo <= d[i].diff && d[i].diff <= d[i].hi);
        assert_true(d[i].hi - d[i].lo < 0.08);
        assert_true(d[i].hi - d[i].lo > 0.005);
    }
    free(b);
    free(c);
}

/* n values of a Gaussian AR(1) series x_t = mu + phi (x_{t-1} - mu) + e_t,
 * e_t standard normal, started in its stationary law, in time order. */
static double *ar1(size_t n, double mu, double phi, uint64_t stream)
{
    struct rng r;
    rng_seed(&r, 2024, stream);
    double *v = malloc(n * sizeof *v);
    assert_non_null(v);
    double y = rng_normal(&r) / sqrt(1 - phi * phi);
    for (size_t i = 0; i < n; i++) {
        v[i] = mu + y;
        y = phi * y + rng_normal(&r);
    }
    return v;
}

static double *sorted_copy(const double *v, size_t n)
{
    double *s = malloc(n * sizeof *s);
    assert_non_null(s);
    memcpy(s, v, n * sizeof *s);
    qsort(s, n, sizeof *s, dcmp);
    return s;
}

/* The standard error of log(m_c / m_b) for the medians of two independent
 * Gaussian AR(1) series of n values, mean mu (large against the spread):
 * the sample median's variance is Var(F_n(mu)) / f(mu)^2, where
 * n Var(F_n(mu)) = 1/4 + 2 sum_k arcsin(phi^k) / (2 pi) (the covariance
 * of two indicators of a bivariate normal at its median) and
 * f(mu) = 1 / (sigma sqrt(2 pi)), sigma^2 = 1 / (1 - phi^2). Independent
 * values (phi 0) give the familiar pi sigma^2 / (2 n). */
static double ar1_median_log_ratio_se(size_t n, double mu, double phi)
{
    double lr = 0.25;
    for (double rho = phi; rho > 1e-12; rho *= phi)
        lr += 2 * asin(rho) / (2 * M_PI);
    double sigma2 = 1 / (1 - phi * phi);
    double var_med = lr * 2 * M_PI * sigma2 / (double)n;
    return sqrt(2 * var_med) / mu;
}

/* The standard error a 95% interval of a relative difference implies. */
static double implied_se(const struct cmp_diff *d)
{
    return (log1p(d->hi) - log1p(d->lo)) / (2 * CMP_Z95);
}

/* Correlated values (an AR(1) series, phi 0.8, as decode times of
 * requests that shared batches): the plain bootstrap, which takes them
 * as independent, claims an interval of the medians' difference far
 * narrower than the closed-form truth (about 0.4 of it); the circular
 * block bootstrap, its block length from the data, comes within 25% of
 * it, averaged over ten pairs. */
static void test_block_bootstrap_ar1(void **state)
{
    size_t n = 2000;
    double mu = 50, phi = 0.8, truth = ar1_median_log_ratio_se(n, mu, phi);
    double plain = 0, block = 0;
    size_t lsum = 0;
    const double p50[] = {50};
    for (uint64_t k = 0; k < 10; k++) {
        double *tb = ar1(n, mu, phi, 2 * k), *tc = ar1(n, mu, phi, 2 * k + 1);
        double *sb = sorted_copy(tb, n), *sc = sorted_copy(tc, n);
        size_t lb = cmp_pct_block_length(tb, n, p50, 1, 1);
        size_t lc = cmp_pct_block_length(tc, n, p50, 1, 1);
        assert_true(lb > 3 && lb <= cmp_block_max(n));
        lsum += lb + lc;
        struct cmp_sample xb = {sb, tb, n, lb}, xc = {sc, tc, n, lc};
        struct cmp_diff d, e;
        assert_int_equal(cmp_bootstrap_pct_blocks(&xb, &xc, p50, 1, 1000, k, &d), 0);
        assert_int_equal(cmp_bootstrap_pct(sb, n, sc, n, p50, 1, 1000, k, &e), 0);
        assert_true(d.ok && !d.too_few && d.lo <= d.diff && d.diff <= d.hi);
        block += implied_se(&d) / 10;
        plain += implied_se(&e) / 10;
        free(tb);
        free(tc);
        free(sb);
        free(sc);
    }
    print_message("AR(1) phi 0.8, medians: truth se %.5f, block %.5f (mean block %.1f), "
                  "plain %.5f\n",
                  truth, block, (double)lsum / 20, plain);
    assert_true(block > 0.75 * truth && block < 1.33 * truth);
    assert_true(plain < 0.6 * truth);
}

/* Independent values: the block length found is 1 or close to it, and a
 * block bootstrap forced to blocks of 10 agrees with the plain one
 * within 20% (blocks of independent values are independent values). */
static void test_block_bootstrap_iid(void **state)
{
    size_t n = 3000;
    double *tb = ar1(n, 50, 0, 100), *tc = ar1(n, 50, 0, 101);
    double *sb = sorted_copy(tb, n), *sc = sorted_copy(tc, n);
    size_t lb = cmp_pct_block_length(tb, n, ps, 3, 1);
    size_t lc = cmp_pct_block_length(tc, n, ps, 3, 1);
    print_message("independent values: block lengths %zu and %zu\n", lb, lc);
    assert_true(lb <= 3 && lc <= 3);
    for (int i = 0; i < 3; i++)
        assert_true(cmp_block_length(tb, n) <= 3);
    struct cmp_sample xb = {sb, tb, n, 10}, xc = {sc, tc, n, 10};
    struct cmp_diff d[3], e[3];
    assert_int_equal(cmp_bootstrap_pct_blocks(&xb, &xc, ps, 3, 1000, 3, d), 0);
    assert_int_equal(cmp_bootstrap_pct(sb, n, sc, n, ps, 3, 1000, 3, e), 0);
    for (int i = 0; i < 2; i++) {
        double r = implied_se(&d[i]) / implied_se(&e[i]);
        print_message("p%g: block/plain interval width %.3f\n", ps[i], r);
        assert_true(r > 0.8 && r < 1.2);
    }
    /* Block 1 is the plain bootstrap, draw for draw. */
    struct cmp_sample ob = {sb, tb, n, 1}, oc = {sc, tc, n, 1};
    assert_int_equal(cmp_bootstrap_pct_blocks(&ob, &oc, ps, 3, 1000, 3, d), 0);
    assert_memory_equal(d, e, sizeof d);
    free(tb);
    free(tc);
    free(sb);
    free(sc);
}

/* How often the block bootstrap's interval of the p90's difference holds
 * the true one, 0, over reps pairs of series of 80 values of one law (an
 * AR(1) of mean 20; phi 0 gives independent values), each side's block
 * length from its data. */
static double p90_coverage_80(double phi, int reps)
{
    const double p90[] = {90};
    size_t n = 80;
    int held = 0;
    for (int k = 0; k < reps; k++) {
        double *tb = ar1(n, 20, phi, 5000 + 2 * (uint64_t)k);
        double *tc = ar1(n, 20, phi, 5001 + 2 * (uint64_t)k);
        double *sb = sorted_copy(tb, n), *sc = sorted_copy(tc, n);
        struct cmp_sample xb = {sb, tb, n, cmp_pct_block_length(tb, n, p90, 1, 1)};
        struct cmp_sample xc = {sc, tc, n, cmp_pct_block_length(tc, n, p90, 1, 1)};
        struct cmp_diff d;
        assert_int_equal(cmp_bootstrap_pct_blocks(&xb, &xc, p90, 1, 1000, (uint64_t)k, &d), 0);
        assert_true(d.ok && !d.too_few);
        held += d.lo <= 0 && d.hi >= 0;
        free(tb);
        free(tc);
        free(sb);
        free(sc);
    }
    return (double)held / reps;
}

/* A p90 of 80 values is what a 2-second run at 40 req/s gives, and the
 * noise test called those rows different in about 9% of pairs, not 5%,
 * before the widening of few blocks (Student's t over the blocks and the
 * variance extrapolated from blocks of L and 2L). Not because a resample's p90 of so few values takes few distinct
 * values: of independent values the interval holds the true difference
 * in 97% of these 300 pairs. A smoothed bootstrap (each value drawn moved
 * by a kernel draw, Silverman's bandwidth), tried against it on 400 pairs
 * of independent normal, lognormal and lognormal-on-a-grid values (ties),
 * held it in 98%, 98% and 98% where the plain one held it in 98%, 98% and
 * 99%. Of correlated values (phi 0.8) the block bootstrap holds it in
 * about 80%, smoothed or not: 80 values are too few for the block length
 * rule to see the whole correlation (docs/compare.md, "How often it
 * cries wolf"). The widening of few blocks brings that to 86% here, 84%
 * to 88% over other seeds (the block length of the rule alone, 3.6 on
 * average: the noise test's runs also have the floor of twice the
 * requests in flight), and leaves independent values' 97%: the interval
 * is no wider where the values are independent. */
static void test_block_bootstrap_p90_coverage_80(void **state)
{
    double iid = p90_coverage_80(0, 300), corr = p90_coverage_80(0.8, 300);
    print_message("p90 of 80 values, coverage of the true difference: independent %.3f, "
                  "AR(1) phi 0.8 %.3f\n",
                  iid, corr);
    assert_true(iid >= 0.93 && iid <= 0.99);
    assert_true(corr >= 0.83 && corr < iid);
}

/* Politis and White's rule on known series: constant and short series
 * give 1; an AR(1) of phi 0.5 a short block, of phi 0.9 a longer one,
 * never past cmp_block_max. */
static void test_block_length(void **state)
{
    double c[100];
    for (int i = 0; i < 100; i++)
        c[i] = 7;
    assert_int_equal(cmp_block_length(c, 100), 1);
    assert_int_equal(cmp_block_length(c, 5), 1);
    assert_int_equal(cmp_block_max(9), 3);
    assert_int_equal(cmp_block_max(10000), 300);
    size_t n = 5000;
    double *a = ar1(n, 0, 0.5, 7), *b = ar1(n, 0, 0.9, 8);
    size_t la = cmp_block_length(a, n), lb = cmp_block_length(b, n);
    print_message("AR(1) block lengths: phi 0.5 %zu, phi 0.9 %zu\n", la, lb);
    assert_true(la >= 3 && la < lb && lb <= cmp_block_max(n));
    /* The floor wins over a shorter block. */
    assert_int_equal(cmp_pct_block_length(c, 100, ps, 3, 9), 9);
    assert_int_equal(cmp_pct_block_length(c, 100, ps, 3, 1000), cmp_block_max(100));
    free(a);
    free(b);
}

/* The order-statistic rule: a p99 needs 563 values, a p90 53, a p50 8. */
static void test_pct_enough(void **state)
{
    assert_false(cmp_pct_enough(0, 50));
    assert_false(cmp_pct_enough(5, 50));
    assert_true(cmp_pct_enough(20, 50));
    assert_false(cmp_pct_enough(40, 90));
    assert_true(cmp_pct_enough(80, 90));
    assert_false(cmp_pct_enough(500, 99));
    assert_true(cmp_pct_enough(800, 99));
    /* The fewest that bound each, which a row with too few values names. */
    assert_int_equal(cmp_pct_min_n(50), 8);
    assert_int_equal(cmp_pct_min_n(90), 53);
    assert_int_equal(cmp_pct_min_n(99), 563);
    assert_int_equal(cmp_pct_min_n(99.9), 5661);
    for (size_t k = 1; k < 3 * 563; k++)
        assert_int_equal(cmp_pct_enough(k, 99), k >= 563);
    /* Too few for p99: the row is same whatever the values, the gate inconclusive. */
    size_t n = 100;
    double *b = lognormal_sorted(n, 100.0, 1), *c = lognormal_sorted(n, 200.0, 2);
    struct cmp_diff d[3];
    assert_int_equal(cmp_bootstrap_pct(b, n, c, n, ps, 3, 500, 7, d), 0);
    assert_false(d[0].too_few);
    assert_int_equal(cmp_verdict_of(&d[0], CMP_LOWER_BETTER, 0), CMP_WORSE);
    assert_true(d[2].ok && d[2].too_few);
    assert_true(d[2].diff > 0);
    assert_int_equal(cmp_verdict_of(&d[2], CMP_LOWER_BETTER, 0), CMP_SAME);
    struct cmp_threshold t = {"ttft_p99", 0.10, 0};
    assert_int_equal(cmp_gate_of(&d[2], &t), CMP_GATE_INCONCLUSIVE);
    free(b);
    free(c);
}

/* A difference outside noise but under the minimum effect is same. */
static void test_min_effect(void **state)
{
    struct cmp_diff d = {1, 0, 0.03, 0.01, 0.05};
    assert_int_equal(cmp_verdict_of(&d, CMP_LOWER_BETTER, 0), CMP_WORSE);
    assert_int_equal(cmp_verdict_of(&d, CMP_LOWER_BETTER, 0.05), CMP_SAME);
    d.diff = -0.08;
    d.lo = -0.10;
    d.hi = -0.06;
    assert_int_equal(cmp_verdict_of(&d, CMP_LOWER_BETTER, 0.05), CMP_BETTER);
}

static void test_bootstrap_empty_side(void **state)
{
    double v[] = {1, 2, 3};
    struct cmp_diff d[3];
    assert_int_equal(cmp_bootstrap_pct(v, 3, v, 0, ps, 3, 100, 1, d), 0);
    assert_false(d[0].ok);
    assert_int_equal(cmp_verdict_of(&d[0], CMP_LOWER_BETTER, 0), CMP_NA);
}

/* Wilson intervals: Newcombe (1998), Table I: 0/10 is [0, 0.2775],
 * 1/29 is [0.0061, 0.1718], 81/263 is [0.2553, 0.3662]. */
static void test_wilson(void **state)
{
    double lo, hi;
    cmp_wilson(0, 10, CMP_Z95, &lo, &hi);
    ASSERT_NEAR(lo, 0, 1e-12);
    ASSERT_NEAR(hi, 0.2775, 1e-4);
    cmp_wilson(1, 29, CMP_Z95, &lo, &hi);
    ASSERT_NEAR(lo, 0.0061, 1e-4);
    ASSERT_NEAR(hi, 0.1718, 1e-4);
    cmp_wilson(81, 263, CMP_Z95, &lo, &hi);
    ASSERT_NEAR(lo, 0.2553, 1e-4);
    ASSERT_NEAR(hi, 0.3662, 1e-4);
}

/* Newcombe (1998), Table II, method 10: 56/70 - 48/80 = 0.2000,
 * [0.0524, 0.3339]; 9/10 - 3/10 = 0.6, [0.1705, 0.8090]. */
static void test_share_diff_newcombe(void **state)
{
    struct cmp_diff d = cmp_share_diff(48, 80, 56, 70);
    assert_true(d.ok);
    ASSERT_NEAR(d.diff, 0.2, 1e-12);
    ASSERT_NEAR(d.lo, 0.0524, 1e-4);
    ASSERT_NEAR(d.hi, 0.3339, 1e-4);
    d = cmp_share_diff(3, 10, 9, 10);
    ASSERT_NEAR(d.diff, 0.6, 1e-12);
    ASSERT_NEAR(d.lo, 0.1705, 1e-4);
    ASSERT_NEAR(d.hi, 0.8090, 1e-4);
    /* 0 of 1000 against 0 of 1000: same, a narrow interval. */
    d = cmp_share_diff(0, 1000, 0, 1000);
    assert_int_equal(cmp_verdict_of(&d, CMP_LOWER_BETTER, 0), CMP_SAME);
    assert_true(d.hi < 0.005 && d.lo > -0.005);
    /* 0 of 1000 against 30 of 1000 errors: worse. */
    d = cmp_share_diff(0, 1000, 30, 1000);
    assert_int_equal(cmp_verdict_of(&d, CMP_LOWER_BETTER, 0), CMP_WORSE);
    d = cmp_share_diff(0, 0, 3, 10);
    assert_false(d.ok);
}

/* Counts of 100 and 100: log ratio's SE sqrt(1/100 + 1/100); 400 vs 300
 * in equal windows: -25%, outside noise; window scaling. */
static void test_total_ratio(void **state)
{
    struct cmp_diff d = cmp_total_ratio(100, 100, 100, 100, 1.0);
    ASSERT_NEAR(d.diff, 0, 1e-12);
    ASSERT_NEAR(d.lo, exp(-CMP_Z95 * sqrt(0.02)) - 1, 1e-12);
    ASSERT_NEAR(d.hi, exp(CMP_Z95 * sqrt(0.02)) - 1, 1e-12);
    d = cmp_total_ratio(400, 400, 300, 300, 1.0);
    ASSERT_NEAR(d.diff, -0.25, 1e-12);
    assert_int_equal(cmp_verdict_of(&d, CMP_HIGHER_BETTER, 0), CMP_WORSE);
    /* 300 in 10 s against 600 in 20 s: the same rate. */
    d = cmp_total_ratio(300, 300, 600, 600, 10.0 / 20.0);
    ASSERT_NEAR(d.diff, 0, 1e-12);
    d = cmp_total_ratio(0, 0, 0, 0, 1.0);
    assert_false(d.ok);
}

/* A difference of exactly a pp threshold is not past it: 98.5% less
 * 99.5% reads -0.010000000000000009 as doubles, and with its whole
 * interval past 0 it failed "-1pp"; a hair more fails. */
static void test_gate_at_threshold(void **state)
{
    (void)state;
    struct cmp_threshold t = {.amount = -1.0 / 100, .pp = 1};
    double diff = 197.0 / 200 - 199.0 / 200;
    assert_true(diff < -0.01);
    /* The interval's far end at the same difference: at the threshold,
     * not past it. */
    struct cmp_diff d = {.ok = 1, .diff = diff, .lo = diff, .hi = -0.005};
    assert_int_equal(cmp_gate_of(&d, &t), CMP_GATE_PASS);
    d.lo = -0.0102;
    assert_int_equal(cmp_gate_of(&d, &t), CMP_GATE_INCONCLUSIVE);
    d.diff = -0.0101;
    d.lo = -0.0102;
    d.hi = -0.001;
    assert_int_equal(cmp_gate_of(&d, &t), CMP_GATE_FAIL);
}

/* Kept up: served at least 90% of the window's arrivals. The review's
 * pair past the capacity (40 of 50, 20 of 30) kept up on neither side;
 * a step below it that finished 95 of 100 (more in flight at the
 * window's end than at its start) did, as did one that finished more
 * than it scheduled (the warm-up's in flight ending in the window). */
static void test_kept_up(void **state)
{
    (void)state;
    assert_false(cmp_kept_up(40, 50));
    assert_false(cmp_kept_up(20, 30));
    assert_false(cmp_kept_up(93, 119));
    assert_true(cmp_kept_up(95, 100));
    assert_true(cmp_kept_up(90, 100));
    assert_false(cmp_kept_up(89, 100));
    assert_true(cmp_kept_up(105, 100));
    assert_true(cmp_kept_up(0, 0));
    assert_false(cmp_kept_up(0, 1));
}

/* One side's total 0, the other's not: the share of the events that fell
 * on each side, exactly. Goodput 46 in 3 s against 0 (a collapse seen
 * against llama.cpp read "n/a" and a --fail-on gate "inconclusive"): -100%,
 * the upper bound Clopper-Pearson's at 0 of 46, 1 - 0.025^(1/46) =
 * 0.0771, a ratio of at most 0.0835: worse, and a -10% gate fails.
 * Windows scale the bound. 46 against 0 the other way: no finite value, a
 * lower bound of 1 / 0.0835 - 1 = 10.98: better. 5 against 0 (two
 * identical sweeps' overloaded steps against llama.cpp: Wilson's bound
 * read +30.2%, better) has a lower bound of 0.025^(1/5) / (1 -
 * 0.025^(1/5)) - 1 = -8.4%: same, as all 5 on one side of equal rates
 * happens 6% of the time; 6 against 0 (3%) is better. Two events against
 * none cannot tell; a token total counts as s^2 / v events. */
static void test_total_ratio_one_zero(void **state)
{
    (void)state;
    double e46 = pow(0.025, 1.0 / 46), r46 = (1 - e46) / e46; /* 0.0835 */
    struct cmp_diff d = cmp_total_ratio(46, 46, 0, 0, 1.0);
    assert_true(d.ok);
    ASSERT_NEAR(d.diff, -1, 0);
    ASSERT_NEAR(d.lo, -1, 0);
    ASSERT_NEAR(d.hi, r46 - 1, 1e-9);
    ASSERT_NEAR(d.hi, -0.9165, 1e-4);
    assert_int_equal(cmp_verdict_of(&d, CMP_HIGHER_BETTER, 0), CMP_WORSE);
    struct cmp_threshold t = {.amount = -0.10};
    assert_int_equal(cmp_gate_of(&d, &t), CMP_GATE_FAIL);
    /* The candidate's window twice as long: its 0 bounds a rate half as
     * high. */
    d = cmp_total_ratio(46, 46, 0, 0, 0.5);
    ASSERT_NEAR(d.hi, 0.5 * r46 - 1, 1e-9);

    d = cmp_total_ratio(0, 0, 46, 46, 1.0);
    assert_true(d.ok);
    assert_true(isinf(d.diff) && d.diff > 0 && isinf(d.hi));
    ASSERT_NEAR(d.lo, 1 / r46 - 1, 1e-9);
    assert_int_equal(cmp_verdict_of(&d, CMP_HIGHER_BETTER, 0), CMP_BETTER);
    assert_int_equal(cmp_gate_of(&d, &t), CMP_GATE_PASS);

    d = cmp_total_ratio(0, 0, 5, 5, 1.0);
    ASSERT_NEAR(d.lo, -0.0836, 1e-4);
    assert_int_equal(cmp_verdict_of(&d, CMP_HIGHER_BETTER, 0), CMP_SAME);
    d = cmp_total_ratio(0, 0, 6, 6, 1.0);
    ASSERT_NEAR(d.lo, 0.1774, 1e-4);
    assert_int_equal(cmp_verdict_of(&d, CMP_HIGHER_BETTER, 0), CMP_BETTER);

    d = cmp_total_ratio(2, 2, 0, 0, 1.0);
    assert_true(d.hi > 0); /* (1 - 0.025^(1/2)) / 0.025^(1/2) - 1 = 4.3: within noise */
    assert_int_equal(cmp_verdict_of(&d, CMP_HIGHER_BETTER, 0), CMP_SAME);
    /* 4600 tokens over 46 requests of 100 each: v = 46 x 100^2, 46
     * events, the same bound as the count's. */
    d = cmp_total_ratio(4600, 46 * 100.0 * 100.0, 0, 0, 1.0);
    ASSERT_NEAR(d.hi, r46 - 1, 1e-9);
}

/* The between-run interval against hand-worked numbers: Welch's degrees
 * of freedom with runs on both sides; one side of one run taken to vary
 * as the other; nothing with one run a side. */
static void test_between_runs(void **state)
{
    /* Shares, 3 runs a side, each with variance 0.0004: v = 0.0004 / 3 a
     * side, Welch df = (2v)^2 / (2 v^2 / 2) = 4, t = 2.776. */
    const double b[] = {0.10, 0.12, 0.14}, c[] = {0.20, 0.22, 0.24};
    struct cmp_diff d = cmp_between_runs(b, 3, c, 3, 0, 0.10);
    assert_true(d.ok);
    double h = 2.776 * sqrt(2 * 0.0004 / 3);
    ASSERT_NEAR(d.diff, 0.10, 1e-12);
    ASSERT_NEAR(d.lo, 0.10 - h, 1e-12);
    ASSERT_NEAR(d.hi, 0.10 + h, 1e-12);
    assert_int_equal(cmp_verdict_of(&d, CMP_LOWER_BETTER, 0), CMP_WORSE);

    /* Relative: 100 and 110 against one run of 130. The baseline's CV^2
     * per run is 50 / 105^2, the candidate's taken the same; df = 1, t =
     * 12.706: an interval as wide as two runs deserve. */
    const double rb[] = {100, 110}, rc[] = {130};
    double diff = 130.0 / 105 - 1, cv2 = 50.0 / (105.0 * 105.0);
    d = cmp_between_runs(rb, 2, rc, 1, 1, diff);
    assert_true(d.ok);
    h = 12.706 * sqrt(cv2 / 2 + cv2 / 1);
    ASSERT_NEAR(d.lo, exp(log(1 + diff) - h) - 1, 1e-12);
    ASSERT_NEAR(d.hi, exp(log(1 + diff) + h) - 1, 1e-12);
    assert_int_equal(cmp_verdict_of(&d, CMP_LOWER_BETTER, 0), CMP_SAME);
    /* The same, the sides swapped: one run of the baseline. */
    d = cmp_between_runs(rc, 1, rb, 2, 1, 105.0 / 130 - 1);
    assert_true(d.ok);
    ASSERT_NEAR(d.hi, exp(log(105.0 / 130) + h) - 1, 1e-12);

    /* Runs that agree exactly: a zero-width interval. */
    const double e[] = {5, 5, 5};
    d = cmp_between_runs(e, 3, e, 3, 1, 0);
    assert_true(d.ok);
    ASSERT_NEAR(d.hi - d.lo, 0, 1e-12);

    /* Not computed: one run a side, a side empty, a mean of 0. */
    assert_false(cmp_between_runs(rc, 1, rc, 1, 1, 0).ok);
    assert_false(cmp_between_runs(rb, 2, rc, 0, 1, 0).ok);
    const double z[] = {0, 0};
    assert_false(cmp_between_runs(z, 2, rb, 2, 1, 0).ok);
    assert_true(cmp_between_runs(z, 2, rb, 2, 0, 105).ok);
}

static void test_thresholds_parse(void **state)
{
    struct cmp_threshold t[8];
    size_t n;
    char err[200];
    assert_int_equal(cmp_thresholds_parse("ttft_p99:+10%,goodput:-5%,error_rate:+0.5pp", t, 8, &n,
                                          err, sizeof err),
                     0);
    assert_int_equal(n, 3);
    assert_string_equal(t[0].row, "ttft_p99");
    ASSERT_NEAR(t[0].amount, 0.10, 1e-12);
    assert_int_equal(t[0].pp, 0);
    assert_string_equal(t[1].row, "goodput");
    ASSERT_NEAR(t[1].amount, -0.05, 1e-12);
    assert_string_equal(t[2].row, "error_rate");
    ASSERT_NEAR(t[2].amount, 0.005, 1e-12);
    assert_int_equal(t[2].pp, 1);
    /* Blanks around items and the colon, as a user types a list (the
     * parent: no row " error_rate"). */
    assert_int_equal(
        cmp_thresholds_parse("ttft_p99 : +10%, error_rate:\t+0.5pp ", t, 8, &n, err, sizeof err),
        0);
    assert_int_equal(n, 2);
    assert_string_equal(t[0].row, "ttft_p99");
    ASSERT_NEAR(t[0].amount, 0.10, 1e-12);
    assert_string_equal(t[1].row, "error_rate");
    assert_int_equal(t[1].pp, 1);
    const char *bad[] = {"",
                         "ttft_p99 +10%",
                         "ttft_p99:+10%, ",
                         " :+1%",
                         "ttft_p99",
                         "ttft_p99:10%",
                         "ttft_p99:+10",
                         "ttft_p99:+x%",
                         "ttft_p99:+0%",
                         "ttft_p99:+10%,",
                         ":+1%",
                         "a:+1%,,b:+1%",
                         "ttft_p99:+10ms"};
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        err[0] = '\0';
        if (cmp_thresholds_parse(bad[i], t, 8, &n, err, sizeof err) == 0)
            fail_msg("\"%s\" parsed", bad[i]);
        assert_non_null(strstr(err, "--fail-on"));
    }
}

static void test_gate(void **state)
{
    struct cmp_threshold up = {"ttft_p99", 0.10, 0}, down = {"goodput", -0.05, 0};
    struct cmp_diff worse = {1, 0, 0.30, 0.20, 0.40};  /* past +10%, outside noise */
    struct cmp_diff slight = {1, 0, 0.03, 0.01, 0.05}; /* worse, within the threshold */
    struct cmp_diff noisy = {1, 0, 0.02, -0.15, 0.25}; /* within noise, wider than 10% */
    struct cmp_diff tight = {1, 0, 0.01, -0.03, 0.05}; /* within noise and the threshold */
    struct cmp_diff better = {1, 0, -0.30, -0.40, -0.20};
    assert_int_equal(cmp_gate_of(&worse, &up), CMP_GATE_FAIL);
    assert_int_equal(cmp_gate_of(&slight, &up), CMP_GATE_PASS);
    assert_int_equal(cmp_gate_of(&noisy, &up), CMP_GATE_INCONCLUSIVE);
    assert_int_equal(cmp_gate_of(&tight, &up), CMP_GATE_PASS);
    assert_int_equal(cmp_gate_of(&better, &up), CMP_GATE_PASS);
    /* goodput: less is worse. */
    assert_int_equal(cmp_gate_of(&better, &down), CMP_GATE_FAIL);
    assert_int_equal(cmp_gate_of(&worse, &down), CMP_GATE_PASS);
    assert_int_equal(cmp_gate_of(&noisy, &down), CMP_GATE_INCONCLUSIVE);
    struct cmp_diff none = {0, 0, 0, 0, 0};
    assert_int_equal(cmp_gate_of(&none, &up), CMP_GATE_INCONCLUSIVE);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_percentile_nearest_rank),
        cmocka_unit_test(test_bootstrap_covers_shift),
        cmocka_unit_test(test_bootstrap_same_distribution),
        cmocka_unit_test(test_bootstrap_large),
        cmocka_unit_test(test_bootstrap_empty_side),
        cmocka_unit_test(test_block_bootstrap_ar1),
        cmocka_unit_test(test_block_bootstrap_iid),
        cmocka_unit_test(test_block_length),
        cmocka_unit_test(test_block_bootstrap_p90_coverage_80),
        cmocka_unit_test(test_pct_enough),
        cmocka_unit_test(test_min_effect),
        cmocka_unit_test(test_wilson),
        cmocka_unit_test(test_share_diff_newcombe),
        cmocka_unit_test(test_total_ratio),
        cmocka_unit_test(test_total_ratio_one_zero),
        cmocka_unit_test(test_gate_at_threshold),
        cmocka_unit_test(test_kept_up),
        cmocka_unit_test(test_between_runs),
        cmocka_unit_test(test_thresholds_parse),
        cmocka_unit_test(test_gate),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
