/* Unit tests for hist.c: percentiles against exact sorted values, merge,
 * overflow, iteration and the string round trip. */
#include <stdlib.h>
#include <string.h>

#include "test.h"
#include "testutil.h"
#include "measure/hist.h"
#include "util/rng.h"
#include "util/util.h"

/* The bucket midpoint is within 1/256 of any value in the bucket. */
#define HIST_REL_BOUND (1.0 / 256.0)

/* Nearest rank computed independently of hist.c, in integers: the
 * percentile is given in thousandths of a percent (99.9 -> 99900). */
static uint64_t rank_exact(uint64_t pct_milli, uint64_t n)
{
    return (pct_milli * n + 100000 - 1) / 100000;
}

typedef uint64_t gen_fn(struct rng *r);

static uint64_t gen_uniform(struct rng *r)
{
    return 1 + rng_next(r) % 1000000;
}

static uint64_t gen_lognormal(struct rng *r)
{
    /* median 1 ms, sigma 2: p99.9 is ~480x the median. */
    return (uint64_t)llround(exp(log(1e6) + 2.0 * rng_normal(r)));
}

static uint64_t gen_constant(struct rng *r)
{
    (void)r;
    return 12345;
}

static uint64_t gen_two_point(struct rng *r)
{
    return rng_uniform(r) < 0.9 ? 100 : 5000000000ULL;
}

static uint64_t gen_small(struct rng *r)
{
    return rng_next(r) % 300; /* crosses the exact / log boundary */
}

/* Record n draws of gen into a histogram and an array, then compare every
 * reported percentile with the exact one from the sorted array. */
static void check_against_sorted(gen_fn *gen, uint64_t seed)
{
    const size_t n = 200000;
    static const uint64_t pcts_milli[] = {1000,  10000, 25000, 50000, 75000,
                                          90000, 95000, 99000, 99900, 99990};
    uint64_t *v = ll_malloc(n * sizeof(*v));
    struct hist *h = hist_new();
    struct rng r;
    rng_seed(&r, seed, 0);
    for (size_t i = 0; i < n; i++) {
        v[i] = gen(&r);
        hist_record(h, v[i]);
    }
    qsort(v, n, sizeof(*v), test_cmp_u64);

    assert_int_equal(hist_count(h), n);
    assert_int_equal(hist_min(h), v[0]);
    assert_int_equal(hist_max(h), v[n - 1]);
    assert_int_equal(hist_percentile(h, 100.0), v[n - 1]);
    long double sum = 0;
    for (size_t i = 0; i < n; i++)
        sum += v[i];
    ASSERT_REL(hist_mean(h), (double)(sum / n), 1e-12);

    for (size_t i = 0; i < LL_ARRAY_LEN(pcts_milli); i++) {
        double pct = (double)pcts_milli[i] / 1000.0;
        uint64_t rank = rank_exact(pcts_milli[i], n);
        assert_int_equal(hist_percentile_rank(pct, n), rank);
        uint64_t exact = v[rank - 1];
        uint64_t got = hist_percentile(h, pct);
        ASSERT_REL(got, exact, HIST_REL_BOUND);
        assert_true(got >= v[0] && got <= v[n - 1]);
        /* By rank: the same estimate, and the rank below's within the
         * same bound of its exact value. */
        assert_int_equal(hist_rank_value(h, rank), got);
        if (rank > 1)
            ASSERT_REL(hist_rank_value(h, rank - 1), v[rank - 2], HIST_REL_BOUND);
    }
    assert_int_equal(hist_rank_value(h, 0), v[0]);
    assert_int_equal(hist_rank_value(h, n + 5), v[n - 1]);
    hist_free(h);
    free(v);
}

/* A distribution checked against its sorted samples, as a cmocka test's
 * initial state. */
struct sorted_case {
    gen_fn *gen;
    uint64_t seed;
};

static const struct sorted_case uniform_case = {gen_uniform, 1};
static const struct sorted_case lognormal_case = {gen_lognormal, 2};
static const struct sorted_case small_case = {gen_small, 5};

static void run_sorted_case(void **state)
{
    const struct sorted_case *c = *state;
    check_against_sorted(c->gen, c->seed);
}

#define SORTED_TEST(name, c) { #name, run_sorted_case, NULL, NULL, (void *)&(c) }

static void test_percentiles_constant(void **state)
{
    check_against_sorted(gen_constant, 3);
    /* One value: every percentile is exactly it (clamped to [min, max]). */
    struct hist *h = hist_new();
    hist_record_n(h, 987654321, 10);
    assert_int_equal(hist_percentile(h, 50), 987654321);
    assert_int_equal(hist_percentile(h, 99.9), 987654321);
    hist_free(h);
}

static void test_percentiles_two_point(void **state)
{
    check_against_sorted(gen_two_point, 4);
    /* 90 values of 100, 10 of 5e9: p90 is the 90th (100), p91 the 91st. */
    struct hist *h = hist_new();
    hist_record_n(h, 100, 90);
    hist_record_n(h, 5000000000ULL, 10);
    assert_int_equal(hist_percentile(h, 90), 100);
    ASSERT_REL(hist_percentile(h, 90.5), 5e9, HIST_REL_BOUND);
    assert_int_equal(hist_percentile(h, 100), 5000000000ULL);
    hist_free(h);
}

static void test_nearest_rank(void **state)
{
    /* Values 1..10 are below 256, so percentiles are exact. */
    struct hist *h = hist_new();
    for (uint64_t v = 10; v >= 1; v--)
        hist_record(h, v);
    assert_int_equal(hist_percentile(h, 50), 5);   /* ceil(5.0) = 5 */
    assert_int_equal(hist_percentile(h, 50.1), 6); /* ceil(5.01) = 6 */
    assert_int_equal(hist_percentile(h, 10), 1);
    assert_int_equal(hist_percentile(h, 11), 2);
    assert_int_equal(hist_percentile(h, 90), 9);
    assert_int_equal(hist_percentile(h, 99.9), 10);
    assert_int_equal(hist_percentile(h, 100), 10);
    assert_int_equal(hist_percentile(h, 0.001), 1);
    hist_free(h);

    assert_int_equal(hist_percentile_rank(99.9, 1000), 999);
    assert_int_equal(hist_percentile_rank(99.99, 10000), 9999);
    assert_int_equal(hist_percentile_rank(99.9, 1001), 1000);
    assert_int_equal(hist_percentile_rank(0.1, 1000), 1);
    assert_int_equal(hist_percentile_rank(0.01, 1000), 1);
    assert_int_equal(hist_percentile_rank(95, 20), 19);
    assert_int_equal(hist_percentile_rank(100, 7), 7);
    assert_int_equal(hist_percentile_rank(50, 0), 0);
    assert_int_equal(hist_percentile_rank(-5, 7), 1);
    assert_int_equal(hist_percentile_rank(250, 7), 7);
}

static void test_empty(void **state)
{
    struct hist *h = hist_new();
    assert_int_equal(hist_count(h), 0);
    assert_int_equal(hist_min(h), 0);
    assert_int_equal(hist_max(h), 0);
    assert_true(hist_mean(h) == 0.0);
    assert_int_equal(hist_percentile(h, 50), 0);
    size_t cur = 0;
    uint64_t lo, hi, c;
    assert_int_equal(hist_iter_next(h, &cur, &lo, &hi, &c), 0);
    hist_record_n(h, 5, 0); /* n = 0 changes nothing */
    assert_int_equal(hist_count(h), 0);
    assert_int_equal(hist_min(h), 0);
    hist_record(h, 7);
    hist_reset(h);
    assert_int_equal(hist_count(h), 0);
    assert_int_equal(hist_max(h), 0);
    hist_free(h);
    hist_free(NULL);
}

static void test_merge(void **state)
{
    struct hist *a = hist_new(), *b = hist_new(), *all = hist_new();
    struct rng r;
    rng_seed(&r, 9, 0);
    for (int i = 0; i < 50000; i++) {
        uint64_t v = gen_lognormal(&r);
        hist_record(i % 3 ? a : b, v);
        hist_record(all, v);
    }
    hist_record(b, HIST_MAX_VALUE + 5); /* overflow merges too */
    hist_record(all, HIST_MAX_VALUE + 5);
    hist_merge(a, b);
    char *sa = hist_to_string(a), *sall = hist_to_string(all);
    assert_string_equal(sa, sall);
    free(sa);
    free(sall);
    assert_int_equal(hist_count(a), 50001);
    assert_int_equal(hist_overflow(a), 1);
    assert_int_equal(hist_min(a), hist_min(all));
    assert_int_equal(hist_max(a), HIST_MAX_VALUE + 5);
    assert_true(hist_mean(a) == hist_mean(all));
    assert_int_equal(hist_percentile(a, 99), hist_percentile(all, 99));

    /* Merging into an empty histogram copies; merging an empty one is a
     * no-op; merging into itself doubles every count. */
    struct hist *e = hist_new();
    hist_merge(e, all);
    assert_int_equal(hist_percentile(e, 50), hist_percentile(all, 50));
    assert_int_equal(hist_min(e), hist_min(all));
    hist_reset(b);
    hist_merge(e, b);
    assert_int_equal(hist_count(e), 50001);
    hist_merge(e, e);
    assert_int_equal(hist_count(e), 100002);
    assert_int_equal(hist_overflow(e), 2);
    ASSERT_REL(hist_mean(e), hist_mean(all), 1e-12);
    assert_int_equal(hist_percentile(e, 50), hist_percentile(all, 50));
    hist_free(a);
    hist_free(b);
    hist_free(all);
    hist_free(e);
}

static void test_overflow(void **state)
{
    struct hist *h = hist_new();
    hist_record(h, HIST_MAX_VALUE - 1); /* the largest in-range value */
    hist_record(h, HIST_MAX_VALUE);
    hist_record(h, UINT64_MAX);
    assert_int_equal(hist_count(h), 3);
    assert_int_equal(hist_overflow(h), 2);
    assert_int_equal(hist_min(h), HIST_MAX_VALUE - 1);
    assert_int_equal(hist_max(h), UINT64_MAX);
    /* The sum needs more than 64 bits: (2^47 - 1 + 2^47 + 2^64 - 1) / 3. */
    long double want = ((long double)HIST_MAX_VALUE * 2 - 2 +
                        18446744073709551616.0L) / 3;
    ASSERT_REL(hist_mean(h), (double)want, 1e-15);
    assert_int_equal(hist_percentile(h, 33), HIST_MAX_VALUE - 1);
    assert_int_equal(hist_percentile(h, 50), UINT64_MAX); /* in overflow */

    size_t cur = 0;
    uint64_t lo, hi, c;
    assert_int_equal(hist_iter_next(h, &cur, &lo, &hi, &c), 1);
    assert_true(lo <= HIST_MAX_VALUE - 1 && hi == HIST_MAX_VALUE - 1);
    assert_int_equal(c, 1);
    assert_int_equal(hist_iter_next(h, &cur, &lo, &hi, &c), 1);
    assert_int_equal(lo, HIST_MAX_VALUE);
    assert_int_equal(hi, UINT64_MAX);
    assert_int_equal(c, 2);
    assert_int_equal(hist_iter_next(h, &cur, &lo, &hi, &c), 0);
    assert_int_equal(hist_iter_next(h, &cur, &lo, &hi, &c), 0);

    /* record_n's sum also needs 128 bits: 2^46 * 2^20 = 2^66. */
    hist_reset(h);
    hist_record_n(h, (uint64_t)1 << 46, (uint64_t)1 << 20);
    assert_true(hist_mean(h) == 0x1.0p46);
    hist_free(h);
}

static void test_iteration(void **state)
{
    struct hist *h = hist_new();
    struct rng r;
    rng_seed(&r, 11, 0);
    for (int i = 0; i < 20000; i++)
        hist_record(h, rng_next(&r) >> (rng_next(&r) % 64));
    size_t cur = 0;
    uint64_t lo, hi, c, total = 0, prev_hi = 0;
    int first = 1;
    while (hist_iter_next(h, &cur, &lo, &hi, &c)) {
        assert_true(c > 0);
        assert_true(lo <= hi);
        assert_true(first || lo > prev_hi);
        if (lo >= 256 && lo < HIST_MAX_VALUE)
            assert_true(hi - lo + 1 <= lo / 128);
        if (lo < 256)
            assert_int_equal(lo, hi);
        total += c;
        prev_hi = hi;
        first = 0;
    }
    assert_int_equal(total, hist_count(h));
    hist_free(h);
}

/* Every value maps into a bucket that contains it, and the percentile of a
 * single value is within the bound, across the whole range. */
static void test_bucket_bounds(void **state)
{
    struct hist *h = hist_new();
    struct rng r;
    rng_seed(&r, 12, 0);
    for (int i = 0; i < 3000; i++) {
        uint64_t v = (rng_next(&r) >> 17) >> (rng_next(&r) % 47);
        if (i < 47)
            v = ((uint64_t)1 << i) - 1; /* the edge below each power */
        hist_reset(h);
        hist_record(h, v);
        hist_record(h, HIST_MAX_VALUE - 1);
        hist_record(h, 0);
        uint64_t got = hist_percentile(h, 50); /* the 2nd of 3: v */
        assert_true(fabs((double)got - (double)v) <= (double)v / 256.0);
        size_t cur = 0;
        uint64_t lo, hi, c;
        while (hist_iter_next(h, &cur, &lo, &hi, &c))
            if (lo <= v && v <= hi)
                break;
        assert_true(lo <= v && v <= hi);
    }
    hist_free(h);
}

static void test_string_round_trip(void **state)
{
    struct hist *h = hist_new(), *g = hist_new();
    char err[128];

    /* The documented example. */
    hist_record(h, 5);
    hist_record(h, 7);
    hist_record(h, 300);
    char *s = hist_to_string(h);
    assert_string_equal(s, "llh1 3 5 300 0 312 0 5:1 +2:1 +271:1");
    free(s);

    struct rng r;
    rng_seed(&r, 13, 0);
    for (int i = 0; i < 10000; i++)
        hist_record(h, gen_lognormal(&r));
    hist_record_n(h, UINT64_MAX, 3);
    s = hist_to_string(h);
    assert_int_equal(hist_from_string(g, s, err, sizeof(err)), 0);
    char *t = hist_to_string(g);
    assert_string_equal(s, t);
    free(t);
    assert_int_equal(hist_count(g), hist_count(h));
    assert_int_equal(hist_min(g), hist_min(h));
    assert_int_equal(hist_max(g), UINT64_MAX);
    assert_true(hist_mean(g) == hist_mean(h));
    assert_int_equal(hist_percentile(g, 99.9), hist_percentile(h, 99.9));

    /* A trailing newline (as hist_write puts) is accepted. */
    size_t n = strlen(s);
    char *nl = ll_malloc(n + 2);
    memcpy(nl, s, n);
    nl[n] = '\n';
    nl[n + 1] = '\0';
    assert_int_equal(hist_from_string(g, nl, err, sizeof(err)), 0);
    assert_int_equal(hist_count(g), hist_count(h));
    free(nl);
    free(s);

    /* Empty. */
    hist_reset(h);
    s = hist_to_string(h);
    assert_string_equal(s, "llh1 0 0 0 0 0 0");
    assert_int_equal(hist_from_string(g, s, err, sizeof(err)), 0);
    assert_int_equal(hist_count(g), 0);
    assert_int_equal(hist_min(g), 0);
    free(s);
    hist_free(h);
    hist_free(g);
}

/* Strings hist_from_string refuses, each with its reason. */
static const struct bad_input bad_strings[] = {
    {"", "starting with \"llh1\""},
    {"llh2 0 0 0 0 0 0", "starting with \"llh1\""},
    {"llh1 0 0 0 0 0", "a number for overflow"},
    {"llh1 1 5 5 0 5 0", "do not add up"},
    {"llh1 1 5 5 0 5 0 5:2", "do not add up"},
    {"llh1 2 5 7 0 12 0 5:1 7:1", "increasing order"},
    {"llh1 2 5 7 0 12 0 +5:1 +2:1", "increasing order"},
    {"llh1 2 5 7 0 12 0 5:1 +0:1", "increasing order"},
    {"llh1 1 5 5 0 5 0 5:0", "increasing order"},
    {"llh1 1 5 5 0 5 0 99999:1", "out of range"},
    {"llh1 1 5 5 0 5 0 5:1 x", "INDEX:COUNT"},
    {"llh1 1 5 5 0 5 0 5:1,", "unexpected text"},
    {"llh1 1 6 6 0 6 0 5:1", "min is not in the lowest bucket"},
    {"llh1 1 5 9 0 5 0 5:1", "max is not in the highest bucket"},
    {"llh1 1 5 5 0 5 1", "min is below the overflow range"},
    {"llh1 0 0 1 0 0 0", "non-zero totals"},
    {"llh1 99999999999999999999 0 0 0 0 0", "a number for count"},
    {"llh1 -1 0 0 0 0 0", "a number for count"},
};

/* hist_from_string into ctx, a struct hist given a value first: a failed
 * parse must leave it empty. */
static int parse_into_full(void *ctx, const char *in, char *err, size_t errlen)
{
    struct hist *h = ctx;
    hist_record(h, 3);
    int rc = hist_from_string(h, in, err, errlen);
    if (rc != 0)
        assert_int_equal(hist_count(h), 0);
    return rc;
}

static void test_string_rejects(void **state)
{
    struct hist *h = hist_new();
    test_refusals(parse_into_full, h, LL_E_INVAL, bad_strings, LL_ARRAY_LEN(bad_strings));
    assert_int_equal(hist_from_string(h, "llh1 0 0 0 0 0 0 x", NULL, 0),
                     LL_E_INVAL);
    hist_free(h);
}

static void test_write(void **state)
{
    struct hist *h = hist_new();
    hist_record(h, 42);
    struct test_mem m;
    test_mem_open(&m);
    assert_int_equal(hist_write(h, m.f), 0);
    char *mem = test_mem_close(&m);
    assert_string_equal(mem, "llh1 1 42 42 0 42 0 42:1\n");
    free(mem);
    hist_free(h);
}

TEST_MAIN(SORTED_TEST(test_percentiles_uniform, uniform_case),
          SORTED_TEST(test_percentiles_lognormal, lognormal_case),
          cmocka_unit_test(test_percentiles_constant),
          cmocka_unit_test(test_percentiles_two_point),
          SORTED_TEST(test_percentiles_small, small_case),
          cmocka_unit_test(test_nearest_rank),
          cmocka_unit_test(test_empty),
          cmocka_unit_test(test_merge),
          cmocka_unit_test(test_overflow),
          cmocka_unit_test(test_iteration),
          cmocka_unit_test(test_bucket_bounds),
          cmocka_unit_test(test_string_round_trip),
          cmocka_unit_test(test_string_rejects),
          cmocka_unit_test(test_write))
