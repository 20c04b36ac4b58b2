/* Unit tests of fit.c against known values: the order-statistic interval
 * against the published table of ranks for the median, Student's t
 * against its published table, the 3x3 solver on systems solved by hand,
 * the hinge fit on constructed two-slope series, the slope and the mean's
 * 95% interval computed by hand in the comment beside each. */
#include "test.h"

#include "measure/tdist.h"
#include "sweep/fit.h"
#include "util/util.h"

/* Ranks from the exact binomial CDF (checked against Python's math.comb).
 * For the median at 95%, the published table (Campbell & Gardner, BMJ
 * 1988; Conover, Practical Nonparametric Statistics) gives X(2)..X(9) for
 * n = 10, X(6)..X(15) for n = 20, X(18)..X(33) for n = 50 and
 * X(40)..X(61) for n = 100. */
static void test_ci_ranks_median_table(void **state)
{
    static const struct {
        uint64_t n, lo, hi;
    } table[] = {{10, 2, 9}, {20, 6, 15}, {50, 18, 33}, {100, 40, 61}};
    for (size_t i = 0; i < LL_ARRAY_LEN(table); i++) {
        uint64_t lo = 0, hi = 0;
        assert_int_equal(fit_quantile_ci_ranks(table[i].n, 0.5, 0.95, &lo, &hi), 0);
        assert_int_equal(lo, table[i].lo);
        assert_int_equal(hi, table[i].hi);
    }
}

/* The tail quantile the sweep asks for (p99 TTFT at 95%), from the exact
 * binomial CDF, and the bad arguments. */
static void test_ci_ranks_p99(void **state)
{
    uint64_t lo, hi;
    assert_int_equal(fit_quantile_ci_ranks(1000, 0.99, 0.95, &lo, &hi), 0);
    assert_int_equal(lo, 983);
    assert_int_equal(hi, 997);
    assert_int_equal(fit_quantile_ci_ranks(500, 0.99, 0.95, &lo, &hi), 0);
    assert_int_equal(lo, 490);
    assert_int_equal(hi, 500);
    /* 100 samples cannot bound p99 from above at 95%. */
    assert_int_equal(fit_quantile_ci_ranks(100, 0.99, 0.95, &lo, &hi), 0);
    assert_int_equal(lo, 97);
    assert_int_equal(hi, 0);
    assert_int_equal(fit_quantile_ci_ranks(0, 0.99, 0.95, &lo, &hi), LL_E_INVAL);
    assert_int_equal(fit_quantile_ci_ranks(10, 1.0, 0.95, &lo, &hi), LL_E_INVAL);
    assert_int_equal(fit_quantile_ci_ranks(10, 0.0, 0.95, &lo, &hi), LL_E_INVAL);
    assert_int_equal(fit_quantile_ci_ranks(10, 0.5, 1.0, &lo, &hi), LL_E_INVAL);
}

/* t(0.975, df) from the published table (e.g. NIST/SEMATECH e-Handbook,
 * 1.3.6.7.2), to the table's three decimals. */
static void test_t975_table(void **state)
{
    static const double table[31] = {0,     12.706, 4.303, 3.182, 2.776, 2.571, 2.447, 2.365,
                                      2.306, 2.262,  2.228, 2.201, 2.179, 2.160, 2.145, 2.131,
                                      2.120, 2.110,  2.101, 2.093, 2.086, 2.080, 2.074, 2.069,
                                      2.064, 2.060,  2.056, 2.052, 2.048, 2.045, 2.042};
    for (uint32_t df = 1; df <= 30; df++)
        ASSERT_NEAR(t975(df), table[df], 5e-4);
    /* Past the table, the expansion: the table's 40, 60 and 120 rows and
     * 31 (2.0395, from the t distribution itself). */
    ASSERT_NEAR(t975(31), 2.0395, 2e-4);
    ASSERT_NEAR(t975(40), 2.021, 5e-4);
    ASSERT_NEAR(t975(60), 2.000, 5e-4);
    ASSERT_NEAR(t975(120), 1.980, 5e-4);
    ASSERT_NEAR(t975(1000000), 1.960, 5e-4);
    /* Fractional degrees of freedom (Welch-Satterthwaite's): between the
     * rows, near the exact values (by numerical integration of the t
     * density): 1.5 6.0167, 2.5 3.5747, 5.5 2.5019, always a little
     * above; a rounding error below a row is the row. */
    assert_true(t975(1.5) > 6.0167 && t975(1.5) < 6.0167 * 1.03);
    assert_true(t975(2.5) > 3.5747 && t975(2.5) < 3.5747 * 1.005);
    ASSERT_NEAR(t975(5.5), 2.5019, 1e-3);
    ASSERT_NEAR(t975(3.9999999999), 2.776, 5e-4);
    assert_true(isinf(t975(0)));
    assert_true(isinf(t975(0.5)));
}

/* 1..5: mean 3, s = sqrt(2.5) = 1.5811, half-width 2.776 x 1.5811 /
 * sqrt(5) = 1.9629. One value: no interval. */
static void test_mean_ci95(void **state)
{
    double v[] = {1, 2, 3, 4, 5}, mean, ci;
    fit_mean_ci95(v, 5, &mean, &ci);
    ASSERT_NEAR(mean, 3.0, 1e-12);
    ASSERT_NEAR(ci, 2.776 * sqrt(2.5) / sqrt(5.0), 1e-9);
    fit_mean_ci95(v, 1, &mean, &ci);
    ASSERT_NEAR(mean, 1.0, 0);
    ASSERT_NEAR(ci, 0.0, 0);
    fit_mean_ci95(v, 0, &mean, &ci);
    ASSERT_NEAR(mean, 0.0, 0);
    ASSERT_NEAR(ci, 0.0, 0);
}

static void test_slope(void **state)
{
    double x[] = {0, 1, 2, 3}, y[] = {1, 3, 5, 7};
    ASSERT_NEAR(fit_slope(x, y, 4), 2.0, 1e-12);
    ASSERT_NEAR(fit_slope(x, y, 1), 0.0, 0);
    double xc[] = {2, 2, 2};
    ASSERT_NEAR(fit_slope(xc, y, 3), 0.0, 0);
    /* y = 1, 2, 2, 4 on x = 0..3: Sxy = 4.5, Sxx = 5, slope 0.9. */
    double y2[] = {1, 2, 2, 4};
    ASSERT_NEAR(fit_slope(x, y2, 4), 0.9, 1e-12);
}

/* 2x + y - z = 8, -3x - y + 2z = -11, -2x + y + 2z = -3 has the one
 * solution (2, 3, -1); the second system has 0 where the first pivot
 * would be without row swaps, and its solution is (1, 2, 3); the third is
 * singular (row 3 = row 1 + row 2). */
static void test_solve3(void **state)
{
    double m[3][3] = {{2, 1, -1}, {-3, -1, 2}, {-2, 1, 2}}, r[3] = {8, -11, -3}, v[3];
    assert_int_equal(fit_solve3(m, r, v), 0);
    ASSERT_NEAR(v[0], 2.0, 1e-12);
    ASSERT_NEAR(v[1], 3.0, 1e-12);
    ASSERT_NEAR(v[2], -1.0, 1e-12);

    /* 0x + y + z = 5, x + 0y + 2z = 7, 3x + y + 0z = 5. */
    double m2[3][3] = {{0, 1, 1}, {1, 0, 2}, {3, 1, 0}}, r2[3] = {5, 7, 5};
    assert_int_equal(fit_solve3(m2, r2, v), 0);
    ASSERT_NEAR(v[0], 1.0, 1e-12);
    ASSERT_NEAR(v[1], 2.0, 1e-12);
    ASSERT_NEAR(v[2], 3.0, 1e-12);

    double m3[3][3] = {{1, 2, 3}, {4, 5, 6}, {5, 7, 9}}, r3[3] = {1, 2, 3};
    assert_int_equal(fit_solve3(m3, r3, v), -1);
}

/* Completions follow offered load up to 12 req/s, then stay there. */
static void test_knee_saturating(void **state)
{
    double x[] = {3, 6, 9, 12, 15, 18}, y[] = {3, 6, 9, 12, 12, 12};
    struct fit_knee k;
    fit_knee(x, y, 6, &k);
    assert_true(k.found);
    ASSERT_NEAR(k.knee_x, 12.0, 0.05);
    ASSERT_NEAR(k.slope_below, 1.0, 1e-6);
    ASSERT_NEAR(k.slope_above, 0.0, 1e-6);
    ASSERT_NEAR(k.y_at_knee, 12.0, 0.05);
    /* The knee between two steps: y = min(x, 10.5). */
    double y2[] = {3, 6, 9, 10.5, 10.5, 10.5};
    fit_knee(x, y2, 6, &k);
    assert_true(k.found);
    ASSERT_NEAR(k.knee_x, 10.5, 0.05);
    /* Unsorted input gives the same answer. */
    double xu[] = {18, 3, 12, 6, 15, 9}, yu[] = {12, 3, 12, 6, 12, 9};
    fit_knee(xu, yu, 6, &k);
    assert_true(k.found);
    ASSERT_NEAR(k.knee_x, 12.0, 0.05);
    assert_int_equal(k.edge, 0);
}

/* The fit places k between the second smallest and the second largest
 * x: completions still rising at 20 of {5, 10, 20, 40} (y 29 at 40: the
 * ceiling near 28) fit a knee at 20 exactly as a ceiling of 20 does, and
 * edge says the knee may lie anywhere up to 40. A bend at the bottom of
 * the range is where the data bend. */
static void test_knee_at_edge(void **state)
{
    double x[] = {5, 10, 20, 40}, up[] = {5, 10, 20, 29}, flat[] = {5, 10, 20, 20};
    struct fit_knee k;
    fit_knee(x, up, 4, &k);
    assert_true(k.found);
    ASSERT_NEAR(k.knee_x, 20, 1e-9);
    assert_int_equal(k.edge, 1);
    ASSERT_NEAR(k.beyond_x, 40, 0);
    fit_knee(x, flat, 4, &k);
    assert_int_equal(k.edge, 1);
    double low[] = {5, 10, 10, 10};
    fit_knee(x, low, 4, &k);
    assert_true(k.found);
    ASSERT_NEAR(k.knee_x, 10, 1e-9);
    assert_int_equal(k.edge, 0);
}

/* A constructed two-slope series: y = 5 + 2x up to x = 10, then slope 0.25
 * (y = 25 + 0.25 (x - 10)), on x = 2, 4, ..., 20. The hinge fits it
 * exactly: knee 10, slopes 2 and 0.25, y 25 at the knee, no residual. */
static void test_knee_two_slopes(void **state)
{
    double x[10], y[10];
    for (int i = 0; i < 10; i++) {
        x[i] = 2.0 * (i + 1);
        y[i] = x[i] <= 10 ? 5 + 2 * x[i] : 25 + 0.25 * (x[i] - 10);
    }
    struct fit_knee k;
    fit_knee(x, y, 10, &k);
    assert_true(k.found);
    ASSERT_NEAR(k.knee_x, 10.0, 1e-9);
    ASSERT_NEAR(k.slope_below, 2.0, 1e-9);
    ASSERT_NEAR(k.slope_above, 0.25, 1e-9);
    ASSERT_NEAR(k.y_at_knee, 25.0, 1e-9);
    ASSERT_NEAR(k.sse, 0.0, 1e-9);
    /* Above half the slope below: a bend, but not a knee. */
    for (int i = 0; i < 10; i++)
        y[i] = x[i] <= 10 ? 2 * x[i] : 20 + 1.5 * (x[i] - 10);
    fit_knee(x, y, 10, &k);
    assert_false(k.found);
    ASSERT_NEAR(k.knee_x, 10.0, 1e-9);
    ASSERT_NEAR(k.slope_above, 1.5, 1e-9);
}

static void test_knee_none(void **state)
{
    double x[] = {3, 6, 9, 12, 15}, y[] = {3, 6, 9, 12, 15};
    struct fit_knee k;
    fit_knee(x, y, 5, &k);
    assert_false(k.found);
    fit_knee(x, y, 3, &k); /* too few points */
    assert_false(k.found);
}

UNIT_TESTS(test_ci_ranks_median_table, test_ci_ranks_p99, test_t975_table, test_mean_ci95,
           test_slope, test_solve3, test_knee_saturating, test_knee_two_slopes, test_knee_at_edge,
           test_knee_none)
