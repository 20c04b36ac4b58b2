/* Unit tests for arrival.c: Poisson inter-arrivals against the exponential
 * CDF (Kolmogorov-Smirnov), gamma burstiness, exact constant spacing,
 * ramps, rate switches, determinism and config checks. */
#include <stdlib.h>
#include <string.h>

#include "test.h"
#include "testutil.h"
#include "workload/arrival.h"
#include "util/util.h"

static struct arrival_config config(enum arrival_kind kind, double rate,
                                    double k, uint64_t seed)
{
    struct arrival_config c;
    memset(&c, 0, sizeof(c));
    c.kind = kind;
    c.rate_per_s = rate;
    c.burstiness = k;
    c.seed = seed;
    return c;
}

static void start(struct arrival *a, const struct arrival_config *c)
{
    char err[200] = "";
    if (arrival_config_check(c, err, sizeof(err)) != 0)
        fail_msg("config rejected: %s", err);
    arrival_init(a, c);
}

/* n inter-arrival gaps in seconds; checks offsets never decrease. */
static double *gaps_s(const struct arrival_config *c, size_t n)
{
    struct arrival a;
    start(&a, c);
    double *g = ll_malloc(n * sizeof(*g));
    uint64_t prev = 0;
    for (size_t i = 0; i < n; i++) {
        uint64_t t = arrival_next_ns(&a);
        assert_true(t >= prev);
        g[i] = (double)(t - prev) / 1e9;
        prev = t;
    }
    return g;
}

/* The Kolmogorov-Smirnov statistic of x (sorted here) against the
 * exponential CDF with the given rate. */
static double ks_exponential(double *x, size_t n, double rate)
{
    qsort(x, n, sizeof(*x), test_cmp_double);
    double d = 0;
    for (size_t i = 0; i < n; i++) {
        double f = 1.0 - exp(-rate * x[i]);
        d = fmax(d, fmax(f - (double)i / n, (double)(i + 1) / n - f));
    }
    return d;
}

static void test_poisson_ks(void **state)
{
    const size_t n = 50000;
    const double crit = 1.63 / sqrt((double)n); /* 1% critical value */
    struct arrival_config c = config(ARRIVAL_POISSON, 100, 0, 2024);
    double *g = gaps_s(&c, n);
    double d = ks_exponential(g, n, 100);
    if (!(d < crit))
        fail_msg("KS D = %.5f >= %.5f", d, crit);
    free(g);

    /* The test has teeth: gamma k = 4 at the same rate, and Poisson at a
     * rate 3% off, are both rejected. */
    c = config(ARRIVAL_GAMMA, 100, 4, 2024);
    g = gaps_s(&c, n);
    assert_true(ks_exponential(g, n, 100) > crit);
    free(g);
    c = config(ARRIVAL_POISSON, 103, 0, 2024);
    g = gaps_s(&c, n);
    assert_true(ks_exponential(g, n, 100) > crit);
    free(g);
}

static void test_gamma_cv(void **state)
{
    const size_t n = 200000;
    static const double ks[] = {0.25, 1.0, 4.0};
    for (size_t j = 0; j < LL_ARRAY_LEN(ks); j++) {
        struct arrival_config c = config(ARRIVAL_GAMMA, 1000, ks[j], 7 + j);
        double *g = gaps_s(&c, n);
        double sum = 0, sum2 = 0;
        for (size_t i = 0; i < n; i++) {
            sum += g[i];
            sum2 += g[i] * g[i];
        }
        double mean = sum / n;
        double cv = sqrt(sum2 / n - mean * mean) / mean;
        ASSERT_REL(mean, 1e-3, 0.01);
        ASSERT_REL(cv, 1.0 / sqrt(ks[j]), 0.03);
        free(g);
    }
}

static void test_constant_exact(void **state)
{
    static const uint64_t rates[] = {1, 3, 7, 1000, 999983};
    for (size_t j = 0; j < LL_ARRAY_LEN(rates); j++) {
        uint64_t rate = rates[j];
        struct arrival_config c = config(ARRIVAL_CONSTANT, (double)rate, 0,
                                         1);
        struct arrival a;
        start(&a, &c);
        for (uint64_t i = 0; i < 100000; i++) {
            /* round(i * 1e9 / rate), in integers. */
            uint64_t want = (2 * i * LL_NS_PER_SEC + rate) / (2 * rate);
            uint64_t got = arrival_next_ns(&a);
            if (got != want)
                fail_msg("rate %llu, arrival %llu: %llu ns, expected %llu",
                         (unsigned long long)rate, (unsigned long long)i,
                         (unsigned long long)got, (unsigned long long)want);
        }
    }
}

/* Arrivals with offsets in [from_ns, to_ns], among the first ones up to
 * to_ns. */
static uint64_t count_between(const struct arrival_config *c,
                              uint64_t from_ns, uint64_t to_ns)
{
    struct arrival a;
    start(&a, c);
    uint64_t n = 0, prev = 0;
    for (;;) {
        uint64_t t = arrival_next_ns(&a);
        assert_true(t >= prev);
        prev = t;
        if (t > to_ns)
            return n;
        n += t >= from_ns;
    }
}

/* Constant arrivals ramping from 10/s to 1000/s over 10 s. */
static struct arrival_config ramp_10_to_1000(void)
{
    struct arrival_config c = config(ARRIVAL_CONSTANT, 10, 0, 1);
    c.ramp_to_per_s = 1000;
    c.ramp_ns = 10 * LL_NS_PER_SEC;
    return c;
}

static void test_ramp(void **state)
{
    const uint64_t s = LL_NS_PER_SEC;
    /* L(t) = 10 t + 49.5 t^2 (t in s), so L(10) = 5050, L(1) = 59.5,
     * L(10) - L(9) = 950.5. */
    struct arrival_config c = ramp_10_to_1000();

    /* Constant: the i-th arrival is exactly at L^-1(i). */
    struct arrival a;
    start(&a, &c);
    for (int i = 0; i <= 5050; i++) {
        double want = (-10 + sqrt(100 + 198.0 * i)) / 99 * 1e9;
        uint64_t got = arrival_next_ns(&a);
        ASSERT_NEAR((double)got, want, 1.0);
    }
    /* ... and after the ramp, 1000/s exactly. */
    uint64_t t = arrival_next_ns(&a);
    assert_int_equal(t, 10 * s + LL_NS_PER_MS);
    assert_int_equal(count_between(&c, 0, 10 * s), 5051); /* i = 0..5050 */
    assert_int_equal(count_between(&c, 0, 1 * s), 60);    /* i = 0..59 */

    /* Poisson: counts within 4 SD (sqrt of the mean) of the integral. */
    c.kind = ARRIVAL_POISSON;
    ASSERT_NEAR(count_between(&c, 0, 10 * s), 5050, 4 * sqrt(5050));
    ASSERT_NEAR(count_between(&c, 9 * s, 10 * s), 950.5, 4 * sqrt(950.5));
    ASSERT_NEAR(count_between(&c, 0, 1 * s), 59.5, 4 * sqrt(59.5));
    ASSERT_NEAR(count_between(&c, 10 * s, 12 * s), 2000, 4 * sqrt(2000));

    /* Gamma k = 4, ramping down 1000/s to 100/s over 5 s: L(5) = 2750.
     * (Count variance is about L/k; 4 sqrt(L) is generous.) */
    c.kind = ARRIVAL_GAMMA;
    c.burstiness = 4;
    c.rate_per_s = 1000;
    c.ramp_to_per_s = 100;
    c.ramp_ns = 5 * s;
    ASSERT_NEAR(count_between(&c, 0, 5 * s), 2750, 4 * sqrt(2750));
    ASSERT_NEAR(count_between(&c, 0, 1 * s), 910, 4 * sqrt(910));
    ASSERT_NEAR(count_between(&c, 5 * s, 7 * s), 200, 4 * sqrt(200));

    /* Ramping up from nothing: 0 to 200/s over 10 s, L(10) = 1000, and
     * L(5) = 250. */
    c.kind = ARRIVAL_POISSON;
    c.rate_per_s = 0;
    c.ramp_to_per_s = 200;
    c.ramp_ns = 10 * s;
    ASSERT_NEAR(count_between(&c, 0, 10 * s), 1000, 4 * sqrt(1000));
    ASSERT_NEAR(count_between(&c, 0, 5 * s), 250, 4 * sqrt(250));
    c.kind = ARRIVAL_CONSTANT;
    assert_int_equal(count_between(&c, 0, 10 * s), 1000); /* L^-1(1..1000), none at 0 */
}

/* A ramp from nothing, 0 to 50/s over 10 s (L(t) = 2.5 t^2, L(10) = 250):
 * constant arrivals at exactly L^-1(1), L^-1(2), ... = 10 sqrt(i / 250) s,
 * the first at 0.632 s, none at 0 where the rate is 0 (the parent put
 * one there), then 50/s after the ramp. Poisson and gamma: a first
 * arrival after 0, no NaN (UINT64_MAX) among them, and a quarter of the
 * ramp's arrivals in its first half (L(5) = 62.5 of 250 at 0 to 50/s;
 * 500 of 2000 at 0 to 400/s, checked within 6 SD of a Poisson count). */
static void test_ramp_from_zero(void **state)
{
    const uint64_t s = LL_NS_PER_SEC;
    struct arrival_config c = config(ARRIVAL_CONSTANT, 0, 0, 1);
    c.ramp_to_per_s = 50;
    c.ramp_ns = 10 * s;
    struct arrival a;
    start(&a, &c);
    for (int i = 1; i <= 250; i++) {
        double want = 10 * sqrt(i / 250.0) * 1e9;
        uint64_t got = arrival_next_ns(&a);
        if (fabs((double)got - want) > 1.0)
            fail_msg("0 -> 50/s, arrival %d: %llu ns, expected %.1f", i, (unsigned long long)got,
                     want);
    }
    assert_int_equal(arrival_next_ns(&a), 10 * s + 20 * LL_NS_PER_MS);
    assert_int_equal(count_between(&c, 0, 5 * s), 62); /* floor(L(5)) */

    static const enum arrival_kind kinds[] = {ARRIVAL_POISSON, ARRIVAL_GAMMA};
    for (size_t j = 0; j < LL_ARRAY_LEN(kinds); j++) {
        c = config(kinds[j], 0, 4, 5 + j);
        c.ramp_to_per_s = 400;
        c.ramp_ns = 10 * s;
        start(&a, &c);
        uint64_t prev = arrival_next_ns(&a);
        assert_true(prev > 0);
        for (int i = 0; i < 3000; i++) {
            uint64_t t = arrival_next_ns(&a);
            assert_true(t >= prev && t < 20 * s);
            prev = t;
        }
        double first = (double)count_between(&c, 0, 5 * s - 1);
        double second = (double)count_between(&c, 5 * s, 10 * s - 1);
        ASSERT_NEAR(first, 500, 6 * sqrt(500));
        ASSERT_NEAR(second, 1500, 6 * sqrt(1500));
        ASSERT_NEAR(first / (first + second), 0.25, 0.05);
    }
}

/* A rate switch. Constant arrivals are exact to the ns on both sides:
 * 10/s then 4/s from 1 s (the switch falls on an arrival), and 3/s then
 * 7/s from 0.5 s (L(0.5) = 1.5: the first arrival after the switch is
 * half a spacing of the new rate after it). */
static void test_switch_constant_exact(void **state)
{
    struct arrival_config c = config(ARRIVAL_CONSTANT, 10, 0, 1);
    c.switch_at_ns = LL_NS_PER_SEC;
    c.switch_to_per_s = 4;
    struct arrival a;
    start(&a, &c);
    for (uint64_t i = 0; i < 1000; i++) {
        uint64_t want = i < 10 ? i * 100 * LL_NS_PER_MS
                               : LL_NS_PER_SEC + (i - 10) * 250 * LL_NS_PER_MS;
        uint64_t got = arrival_next_ns(&a);
        if (got != want)
            fail_msg("10/s -> 4/s, arrival %llu: %llu ns, expected %llu",
                     (unsigned long long)i, (unsigned long long)got,
                     (unsigned long long)want);
    }
    c = config(ARRIVAL_CONSTANT, 3, 0, 1);
    c.switch_at_ns = 500 * LL_NS_PER_MS;
    c.switch_to_per_s = 7;
    start(&a, &c);
    assert_int_equal(arrival_next_ns(&a), 0);
    assert_int_equal(arrival_next_ns(&a), 333333333);
    for (uint64_t i = 2; i < 1000; i++) {
        /* 0.5 s + (i - 1.5) / 7 s = (2i - 3) / 14 s + 0.5 s, rounded. */
        uint64_t want = 500 * LL_NS_PER_MS +
                        ((2 * i - 3) * 2 * LL_NS_PER_SEC + 14) / 28;
        uint64_t got = arrival_next_ns(&a);
        if (got != want)
            fail_msg("3/s -> 7/s, arrival %llu: %llu ns, expected %llu",
                     (unsigned long long)i, (unsigned long long)got,
                     (unsigned long long)want);
    }
}

/* Gaps between consecutive arrivals that both lie in [from_ns, to_ns),
 * in seconds; *n gets their count. Caller frees. */
static double *gaps_between(const struct arrival_config *c, uint64_t from_ns,
                            uint64_t to_ns, size_t *n)
{
    struct arrival a;
    start(&a, c);
    size_t cap = 1024;
    double *g = ll_malloc(cap * sizeof(*g));
    uint64_t prev = UINT64_MAX;
    *n = 0;
    for (;;) {
        uint64_t t = arrival_next_ns(&a);
        if (t >= to_ns)
            return g;
        if (t >= from_ns && prev != UINT64_MAX && prev >= from_ns) {
            if (*n == cap) {
                cap *= 2;
                g = ll_realloc(g, cap * sizeof(*g));
            }
            g[(*n)++] = (double)(t - prev) / 1e9;
        }
        prev = t;
    }
}

/* Poisson and gamma across a switch: the counts before and after match
 * the two rates, and the Poisson gaps inside each segment pass KS against
 * that segment's exponential (and fail against the other rate). */
static void test_switch_random(void **state)
{
    const uint64_t s = LL_NS_PER_SEC;
    struct arrival_config c = config(ARRIVAL_POISSON, 500, 0, 77);
    c.switch_at_ns = 20 * s;
    c.switch_to_per_s = 100;
    ASSERT_NEAR(count_between(&c, 0, 20 * s - 1), 10000, 4 * sqrt(10000));
    ASSERT_NEAR(count_between(&c, 20 * s, 120 * s), 10000, 4 * sqrt(10000));
    ASSERT_NEAR(count_between(&c, 20 * s, 21 * s), 100, 4 * sqrt(100));
    size_t n;
    double *g = gaps_between(&c, 0, 20 * s, &n);
    ASSERT_IN_RANGE(n, 9500, 10500);
    double crit = 1.63 / sqrt((double)n);
    double d = ks_exponential(g, n, 500);
    if (!(d < crit))
        fail_msg("before the switch: KS D = %.5f >= %.5f", d, crit);
    assert_true(ks_exponential(g, n, 100) > crit);
    free(g);
    g = gaps_between(&c, 20 * s, 120 * s, &n);
    ASSERT_IN_RANGE(n, 9500, 10500);
    crit = 1.63 / sqrt((double)n);
    d = ks_exponential(g, n, 100);
    if (!(d < crit))
        fail_msg("after the switch: KS D = %.5f >= %.5f", d, crit);
    assert_true(ks_exponential(g, n, 500) > crit);
    free(g);

    c.kind = ARRIVAL_GAMMA;
    c.burstiness = 4;
    ASSERT_NEAR(count_between(&c, 0, 20 * s - 1), 10000, 4 * sqrt(10000));
    ASSERT_NEAR(count_between(&c, 20 * s, 120 * s), 10000, 4 * sqrt(10000));
}

/* A switch with a ramp: inside the ramp (10/s to 1000/s over 10 s, cut at
 * 5 s where L = 50 + 49.5 x 25 = 1287.5, to 50/s) and after it (switch at
 * 12 s, L = 5050 + 2000 = 7050, to 100/s). Constant arrivals, exact. */
static void test_switch_ramp(void **state)
{
    const uint64_t s = LL_NS_PER_SEC;
    struct arrival_config c = ramp_10_to_1000();
    c.switch_at_ns = 5 * s;
    c.switch_to_per_s = 50;
    assert_int_equal(count_between(&c, 0, 5 * s - 1), 1288); /* i = 0..1287 */
    assert_int_equal(count_between(&c, 5 * s, 15 * s), 500);  /* i = 1288..1787 */
    struct arrival a;
    start(&a, &c);
    for (int i = 0; i < 1288; i++)
        assert_true(arrival_next_ns(&a) < 5 * s);
    assert_int_equal(arrival_next_ns(&a), 5 * s + 10 * LL_NS_PER_MS);
    assert_int_equal(arrival_next_ns(&a), 5 * s + 30 * LL_NS_PER_MS);

    c.switch_at_ns = 12 * s;
    c.switch_to_per_s = 100;
    assert_int_equal(count_between(&c, 0, 12 * s - 1), 7050);
    start(&a, &c);
    for (int i = 0; i < 7050; i++)
        arrival_next_ns(&a);
    assert_int_equal(arrival_next_ns(&a), 12 * s);
    assert_int_equal(arrival_next_ns(&a), 12 * s + 10 * LL_NS_PER_MS);
    c.kind = ARRIVAL_POISSON;
    ASSERT_NEAR(count_between(&c, 12 * s, 22 * s), 1000, 4 * sqrt(1000));
}

/* L(t), the expected arrivals in [0, t], the count the offered rate is
 * built from: the ramp's integral (L(10) = 5050, L(1) = 59.5), on past it
 * at the end rate, round where the rates are round (0 to 200/s over 10 s
 * holds 1000, not 999.99...), and a switch's step inside the ramp
 * (1287.5 at 5 s, then 50/s). */
static void test_expected(void **state)
{
    const uint64_t s = LL_NS_PER_SEC;
    struct arrival_config c = ramp_10_to_1000();
    struct arrival a;
    start(&a, &c);
    assert_true(arrival_expected(&a, 0) == 0);
    ASSERT_NEAR(arrival_expected(&a, 1 * s), 59.5, 1e-9);
    assert_true(arrival_expected(&a, 10 * s) == 5050);
    assert_true(arrival_expected(&a, 12 * s) == 7050);
    c.switch_at_ns = 5 * s;
    c.switch_to_per_s = 50;
    start(&a, &c);
    assert_true(arrival_expected(&a, 5 * s) == 1287.5);
    assert_true(arrival_expected(&a, 15 * s) == 1787.5);
    c = config(ARRIVAL_POISSON, 0, 0, 1);
    c.ramp_to_per_s = 200;
    c.ramp_ns = 10 * s;
    start(&a, &c);
    assert_true(arrival_expected(&a, 10 * s) == 1000);
    ASSERT_NEAR(arrival_expected(&a, 5 * s), 250, 1e-9);
    c = config(ARRIVAL_CONSTANT, 10, 0, 1);
    start(&a, &c);
    assert_true(arrival_expected(&a, 2 * s) == 20);
    /* a pure function of the config: drawing does not change it */
    arrival_next_ns(&a);
    assert_true(arrival_expected(&a, 2 * s) == 20);
}

static void test_determinism(void **state)
{
    static const enum arrival_kind kinds[] = {ARRIVAL_POISSON,
                                              ARRIVAL_GAMMA};
    for (size_t j = 0; j < LL_ARRAY_LEN(kinds); j++) {
        struct arrival_config c = config(kinds[j], 50, 0.5, 99);
        c.ramp_to_per_s = 150;
        c.ramp_ns = 3 * LL_NS_PER_SEC;
        c.switch_at_ns = 2 * LL_NS_PER_SEC;
        c.switch_to_per_s = 30;
        struct arrival a, b;
        start(&a, &c);
        start(&b, &c);
        for (int i = 0; i < 2000; i++)
            assert_int_equal(arrival_next_ns(&a), arrival_next_ns(&b));
        start(&a, &c); /* seed 99 again, against seed 100 */
        c.seed = 100;
        start(&b, &c);
        int differ = 0;
        for (int i = 0; i < 100; i++)
            differ += arrival_next_ns(&a) != arrival_next_ns(&b);
        assert_true(differ > 90);
        assert_int_equal(a.index, 100);
    }
    /* First arrivals: constant at 0; Poisson after 0. */
    struct arrival a;
    struct arrival_config c = config(ARRIVAL_CONSTANT, 5, 0, 1);
    start(&a, &c);
    assert_int_equal(arrival_next_ns(&a), 0);
    assert_int_equal(arrival_next_ns(&a), 200 * LL_NS_PER_MS);
    c.kind = ARRIVAL_POISSON;
    start(&a, &c);
    assert_true(arrival_next_ns(&a) > 0);
}

static void test_config_check(void **state)
{
    static const struct {
        enum arrival_kind kind;
        double rate, k, ramp_to;
        uint64_t ramp_ns;
        const char *msg;
    } bad[] = {
        {ARRIVAL_POISSON, -1, 0, 0, 0,
         "arrivals: rate: expected a rate in [0, 1e9] per second, got -1"},
        {ARRIVAL_POISSON, NAN, 0, 0, 0,
         "arrivals: rate: expected a rate in [0, 1e9] per second, got nan"},
        {ARRIVAL_CONSTANT, 2e9, 0, 0, 0,
         "arrivals: rate: expected a rate in [0, 1e9] per second, got 2e+09"},
        {ARRIVAL_POISSON, 0, 0, 0, 0,
         "arrivals: rate: expected a rate > 0 per second (0 only when "
         "ramping up), got 0"},
        {ARRIVAL_POISSON, 5, 0, 10, 0,
         "arrivals: ramp length: expected a ramp longer than 0 ns when "
         "ramping, got 0"},
        {ARRIVAL_POISSON, 5, 0, -3, 0,
         "arrivals: ramp target rate: expected a rate in [0, 1e9] per "
         "second (0 = no ramp), got -3"},
        {ARRIVAL_GAMMA, 5, 0, 0, 0,
         "arrivals: burstiness: expected a gamma shape k in (0, 1e6] (1 = "
         "Poisson), got 0"},
        {ARRIVAL_GAMMA, 5, INFINITY, 0, 0,
         "arrivals: burstiness: expected a gamma shape k in (0, 1e6] (1 = "
         "Poisson), got inf"},
        {(enum arrival_kind)9, 5, 1, 0, 0,
         "arrivals: unknown kind 9 (expected constant, poisson or gamma)"},
    };
    char err[200];
    for (size_t i = 0; i < LL_ARRAY_LEN(bad); i++) {
        struct arrival_config c = config(bad[i].kind, bad[i].rate, bad[i].k,
                                         1);
        c.ramp_to_per_s = bad[i].ramp_to;
        c.ramp_ns = bad[i].ramp_ns;
        err[0] = '\0';
        assert_int_equal(arrival_config_check(&c, err, sizeof(err)),
                         LL_E_INVAL);
        assert_string_equal(err, bad[i].msg);
    }
    /* Burstiness is ignored unless gamma. */
    struct arrival_config c = config(ARRIVAL_POISSON, 5, -1, 1);
    assert_int_equal(arrival_config_check(&c, NULL, 0), 0);
    /* The switch: its rate in range, and a time after the start. */
    c.switch_to_per_s = -1;
    c.switch_at_ns = 1;
    assert_int_equal(arrival_config_check(&c, err, sizeof(err)), LL_E_INVAL);
    assert_string_equal(err, "arrivals: switch rate: expected a rate in [0, "
                             "1e9] per second (0 = no switch), got -1");
    c.switch_to_per_s = NAN;
    assert_int_equal(arrival_config_check(&c, err, sizeof(err)), LL_E_INVAL);
    c.switch_to_per_s = 3;
    c.switch_at_ns = 0;
    assert_int_equal(arrival_config_check(&c, err, sizeof(err)), LL_E_INVAL);
    assert_string_equal(err, "arrivals: switch time: expected a switch later "
                             "than 0 ns (to start at a rate, give that "
                             "rate), got 0");
    c.switch_at_ns = 1;
    assert_int_equal(arrival_config_check(&c, NULL, 0), 0);
}

/* Each kind parses from its name and names itself back; a name is matched
 * exactly, and a refused one leaves k as it was. */
static void test_parse_kind(void **state)
{
    static const struct {
        const char *name;
        enum arrival_kind kind;
    } kinds[] = {
        {"gamma", ARRIVAL_GAMMA},
        {"poisson", ARRIVAL_POISSON},
        {"constant", ARRIVAL_CONSTANT},
    };
    enum arrival_kind k = ARRIVAL_CONSTANT;
    for (size_t i = 0; i < LL_ARRAY_LEN(kinds); i++) {
        assert_int_equal(arrival_parse_kind(kinds[i].name, &k), 0);
        assert_int_equal(k, kinds[i].kind);
        assert_string_equal(arrival_kind_name(kinds[i].kind), kinds[i].name);
    }
    assert_int_equal(arrival_parse_kind("Poisson", &k), LL_E_INVAL);
    assert_int_equal(arrival_parse_kind("", &k), LL_E_INVAL);
    assert_int_equal(k, ARRIVAL_CONSTANT);
}

UNIT_TESTS(test_poisson_ks, test_gamma_cv, test_constant_exact, test_ramp, test_ramp_from_zero,
           test_switch_constant_exact, test_switch_random, test_switch_ramp, test_expected,
           test_determinism, test_config_check, test_parse_kind)
