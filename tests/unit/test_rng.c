/* Unit tests for rng.c: the reference xoshiro256** sequence, determinism,
 * stream independence, uniform range, and the moments of each variate. */
#include <stdlib.h>
#include <string.h>

#include "test.h"
#include "testutil.h"
#include "util/rng.h"
#include "util/util.h"

static void test_reference_sequence(void **state)
{
    /* xoshiro256** from state {1, 2, 3, 4}, as the reference code gives.
     * The first is rotl(2 * 5, 7) * 9 = 11520 by hand. */
    struct rng r = {{1, 2, 3, 4}};
    assert_int_equal(rng_next(&r), 11520ULL);
    assert_int_equal(rng_next(&r), 0ULL);
    assert_int_equal(rng_next(&r), 1509978240ULL);
    assert_int_equal(rng_next(&r), 1215971899390074240ULL);
}

static void test_determinism(void **state)
{
    struct rng a, b;
    rng_seed(&a, 42, 7);
    rng_seed(&b, 42, 7);
    for (int i = 0; i < 1000; i++)
        assert_int_equal(rng_next(&a), rng_next(&b));
    /* Seed 0 stream 0 is a valid, non-degenerate state. */
    rng_seed(&a, 0, 0);
    assert_true((a.s[0] | a.s[1] | a.s[2] | a.s[3]) != 0);
    uint64_t x = rng_next(&a), y = rng_next(&a);
    assert_true(x != y);
}

static void test_streams(void **state)
{
    /* 4096 streams of one seed, plus 4096 seeds of one stream: all first
     * outputs distinct. */
    enum { N = 4096 };
    static uint64_t first[2 * N];
    struct rng r;
    for (int i = 0; i < N; i++) {
        rng_seed(&r, 1234, (uint64_t)i);
        first[i] = rng_next(&r);
        rng_seed(&r, (uint64_t)i + 5000, 0); /* not 1234: no pair twice */
        first[N + i] = rng_next(&r);
    }
    qsort(first, 2 * N, sizeof(first[0]), test_cmp_u64);
    for (int i = 1; i < 2 * N; i++)
        assert_true(first[i] != first[i - 1]);

    /* Neighbouring streams are uncorrelated: the sample correlation of
     * 100k paired uniforms is within 4 standard errors (4/sqrt(n)) of 0.
     * Also check streams of neighbouring seeds. */
    const int n = 100000;
    for (int pair = 0; pair < 2; pair++) {
        struct rng a, b;
        rng_seed(&a, 99, 0);
        if (pair == 0)
            rng_seed(&b, 99, 1);
        else
            rng_seed(&b, 100, 0);
        double sx = 0, sy = 0, sxx = 0, syy = 0, sxy = 0;
        for (int i = 0; i < n; i++) {
            double x = rng_uniform(&a), y = rng_uniform(&b);
            sx += x;
            sy += y;
            sxx += x * x;
            syy += y * y;
            sxy += x * y;
        }
        double cov = sxy / n - (sx / n) * (sy / n);
        double corr = cov / sqrt((sxx / n - (sx / n) * (sx / n)) *
                                 (syy / n - (sy / n) * (sy / n)));
        ASSERT_NEAR(corr, 0.0, 4.0 / sqrt(n));
    }
}

/* The inverse of an odd a modulo 2^64, by Newton's iteration. */
static uint64_t inverse_u64(uint64_t a)
{
    uint64_t x = a; /* correct to 3 bits for odd a */
    for (int i = 0; i < 5; i++)
        x *= 2 - a * x;
    return x;
}

static void test_uniform_range(void **state)
{
    /* The extremes: rng_next = 0 (s[1] = 0) and rng_next = 2^64 - 1. */
    struct rng r = {{5, 0, 6, 7}};
    double u = rng_uniform(&r);
    assert_true(u == 0x1.0p-53);
    /* Solve rotl(s1 * 5, 7) * 9 = ~0 for s1. */
    uint64_t t = UINT64_MAX * inverse_u64(9);
    t = (t >> 7) | (t << 57);
    uint64_t s1 = t * inverse_u64(5);
    struct rng top = {{5, s1, 6, 7}};
    struct rng probe = top;
    assert_int_equal(rng_next(&probe), UINT64_MAX);
    u = rng_uniform(&top);
    assert_true(u == 1.0 - 0x1.0p-53);

    /* 1e6 draws: all in (0, 1), mean 1/2, variance 1/12, and each tenth
     * of the interval holds its share (chi-square, 9 d.o.f., < 27.9 at
     * p = 0.001). */
    rng_seed(&r, 3, 3);
    const int n = 1000000;
    double sum = 0, sum2 = 0;
    int bins[10] = {0};
    for (int i = 0; i < n; i++) {
        u = rng_uniform(&r);
        assert_true(u > 0.0 && u < 1.0);
        sum += u;
        sum2 += u * u;
        bins[(int)(u * 10)]++;
    }
    ASSERT_NEAR(sum / n, 0.5, 4 * sqrt(1.0 / 12 / n));
    ASSERT_NEAR(sum2 / n - (sum / n) * (sum / n), 1.0 / 12, 0.001);
    double chi2 = 0;
    for (int i = 0; i < 10; i++)
        chi2 += (bins[i] - n / 10.0) * (bins[i] - n / 10.0) / (n / 10.0);
    assert_true(chi2 < 27.9);
}

/* How many draws the moment and fraction checks of each variate take. */
#define DRAWS 200000

/* Sample mean and variance of n draws of a variate. */
struct moments {
    double mean, var;
};

static struct moments moments_of(double (*draw)(struct rng *, double,
                                                double),
                                 double p1, double p2, uint64_t seed, int n)
{
    struct rng r;
    rng_seed(&r, seed, 0);
    double sum = 0, sum2 = 0;
    for (int i = 0; i < n; i++) {
        double x = draw(&r, p1, p2);
        sum += x;
        sum2 += x * x;
    }
    struct moments m = {sum / n, sum2 / n - (sum / n) * (sum / n)};
    return m;
}

static double draw_normal(struct rng *r, double mu, double sd)
{
    return mu + sd * rng_normal(r);
}

static double draw_exponential(struct rng *r, double mean, double unused)
{
    (void)unused;
    return rng_exponential(r, mean);
}

static double draw_gamma(struct rng *r, double shape, double scale)
{
    return rng_gamma(r, shape, scale);
}

/* Of DRAWS draws (seeded as moments_of), the fraction strictly between lo
 * and hi is p, within 4 binomial standard errors. */
static void assert_fraction_in(double (*draw)(struct rng *, double, double), double p1, double p2,
                               uint64_t seed, double lo, double hi, double p)
{
    struct rng r;
    rng_seed(&r, seed, 0);
    int in = 0;
    for (int i = 0; i < DRAWS; i++) {
        double x = draw(&r, p1, p2);
        in += x > lo && x < hi;
    }
    ASSERT_NEAR((double)in / DRAWS, p, 4 * sqrt(p * (1 - p) / DRAWS));
}

static void test_normal(void **state)
{
    struct moments m = moments_of(draw_normal, 0, 1, 5, DRAWS);
    ASSERT_NEAR(m.mean, 0.0, 4 / sqrt(DRAWS));
    ASSERT_NEAR(m.var, 1.0, 0.015);
    /* P(|Z| < 1.96) = 0.95. */
    assert_fraction_in(draw_normal, 0, 1, 6, -1.959964, 1.959964, 0.95);
}

static void test_exponential(void **state)
{
    struct moments m = moments_of(draw_exponential, 2.5, 0, 7, DRAWS);
    ASSERT_REL(m.mean, 2.5, 4 / sqrt(DRAWS));
    ASSERT_REL(m.var, 6.25, 0.03);
    /* P(X > mean) = 1/e. */
    assert_fraction_in(draw_exponential, 2.5, 0, 8, 2.5, INFINITY, exp(-1));
    struct rng r;
    rng_seed(&r, 8, 0);
    assert_true(rng_exponential(&r, 0) == 0.0);
    assert_true(rng_exponential(&r, -1) == 0.0);
}

static void test_gamma(void **state)
{
    const int n = DRAWS;
    /* shape, scale: mean shape * scale, variance shape * scale^2. The
     * tolerance on the mean is 4 standard errors; the variance's is
     * looser (its standard error grows with 6/shape, the excess kurtosis). */
    static const double cases[][2] = {
        {0.25, 4.0}, {0.5, 1.0}, {1.0, 3.0}, {4.0, 0.5}, {30.0, 2.0}};
    for (size_t i = 0; i < LL_ARRAY_LEN(cases); i++) {
        double k = cases[i][0], th = cases[i][1];
        struct moments m = moments_of(draw_gamma, k, th, 9 + i, n);
        ASSERT_REL(m.mean, k * th, 4 / sqrt(k * n));
        ASSERT_REL(m.var, k * th * th, 4 * sqrt((2 + 6 / k) / n));
    }
    struct rng r;
    rng_seed(&r, 1, 1);
    assert_true(rng_gamma(&r, 0, 1) == 0.0);
    assert_true(rng_gamma(&r, 1, -1) == 0.0);
    assert_true(rng_gamma(&r, NAN, 1) == 0.0);
    /* A tiny shape gives tiny (possibly 0) values, never NaN. */
    for (int i = 0; i < 1000; i++) {
        double x = rng_gamma(&r, 1e-3, 1);
        assert_true(x >= 0 && isfinite(x));
    }
}

UNIT_TESTS(test_reference_sequence, test_determinism, test_streams, test_uniform_range, test_normal,
           test_exponential, test_gamma)
