/* Unit tests for dist.c: parsing (every kind, units, truncation, every
 * error message), sample moments and quantiles, canonical formatting. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "test.h"
#include "testutil.h"
#include "workload/dist.h"
#include "util/util.h"

#define NDRAWS 200000

static struct dist parse_ok(const char *spec, enum dist_unit unit)
{
    struct dist d;
    char err[256] = "";
    if (dist_parse(spec, unit, &d, err, sizeof(err)) != 0)
        fail_msg("dist_parse(\"%s\") failed: %s", spec, err);
    return d;
}

struct stats {
    double mean, sd, lo, hi;
};

static struct stats sample_stats(const struct dist *d, uint64_t seed)
{
    struct rng r;
    rng_seed(&r, seed, 0);
    double sum = 0, sum2 = 0, lo = INFINITY, hi = -INFINITY;
    for (int i = 0; i < NDRAWS; i++) {
        double x = dist_sample(d, &r);
        sum += x;
        sum2 += x * x;
        lo = fmin(lo, x);
        hi = fmax(hi, x);
    }
    double mean = sum / NDRAWS;
    struct stats s = {mean, sqrt(sum2 / NDRAWS - mean * mean), lo, hi};
    return s;
}

/* Each kind: the parsed parameters, the analytic mean, and the sample mean
 * and SD of 200k draws against the known values. Tolerances: the mean
 * within 4 standard errors (sd / sqrt(n)), the SD within 2%. */
static void test_kinds_moments(void **state)
{
    static const struct {
        const char *spec;
        double mean, sd;
    } cases[] = {
        {"fixed:500", 500, 0},
        {"500", 500, 0},
        {"1.5k", 1500, 0},
        {"uniform:100,900", 500, 800 / 3.4641016151377544},
        {"normal:500,100", 500, 100},
        {"lognormal:6,0.5", 457.14471327, 243.63086350}, /* e^6.125 */
        {"lognormal:median=403.42879349,sigma=0.5", 457.14471327,
         243.63086350},
        {"exponential:250", 250, 250},
        {"gamma:4,50", 200, 100},
        {"gamma:0.5,10", 5, 7.0710678},
    };
    for (size_t i = 0; i < LL_ARRAY_LEN(cases); i++) {
        struct dist d = parse_ok(cases[i].spec, DIST_UNIT_NONE);
        ASSERT_REL(dist_mean(&d), cases[i].mean, 1e-8);
        struct stats s = sample_stats(&d, 100 + i);
        double se = cases[i].sd / sqrt(NDRAWS);
        ASSERT_NEAR(s.mean, cases[i].mean, 4 * se);
        ASSERT_NEAR(s.sd, cases[i].sd, 0.02 * cases[i].sd);
    }
    /* uniform stays inside [A, B]; exponential and gamma stay positive. */
    struct dist d = parse_ok("uniform:100,900", DIST_UNIT_NONE);
    struct stats s = sample_stats(&d, 1);
    assert_true(s.lo >= 100 && s.hi <= 900);
    assert_true(s.lo < 101 && s.hi > 899);
    d = parse_ok("gamma:0.5,10", DIST_UNIT_NONE);
    s = sample_stats(&d, 2);
    assert_true(s.lo >= 0);
}

/* Lognormal quantiles: median e^MU, p90 e^(MU + 1.2816 SIGMA), p99
 * e^(MU + 2.3263 SIGMA). The sample quantile's standard error is about
 * sqrt(p(1-p)/n) / pdf; 2% covers it at p99 with room. */
static void test_lognormal_quantiles(void **state)
{
    struct dist d = parse_ok("lognormal:median=2s,sigma=0.8",
                             DIST_UNIT_DURATION_NS);
    ASSERT_REL(d.a, log(2e9), 1e-12);
    double *x = ll_malloc(NDRAWS * sizeof(*x));
    struct rng r;
    rng_seed(&r, 77, 0);
    for (int i = 0; i < NDRAWS; i++)
        x[i] = dist_sample(&d, &r);
    qsort(x, NDRAWS, sizeof(*x), test_cmp_double);
    ASSERT_REL(x[NDRAWS / 2 - 1], 2e9, 0.01);
    ASSERT_REL(x[(int)(0.9 * NDRAWS) - 1], 2e9 * exp(1.2815516 * 0.8), 0.01);
    ASSERT_REL(x[(int)(0.99 * NDRAWS) - 1], 2e9 * exp(2.3263479 * 0.8),
               0.02);
    ASSERT_REL(x[(int)(0.1 * NDRAWS) - 1], 2e9 * exp(-1.2815516 * 0.8),
               0.01);
    free(x);
}

static void test_truncation(void **state)
{
    /* A standard normal cut to [-1, 1]: all inside, mean 0, SD of the
     * truncated normal sqrt(1 - 2 phi(1) / (2 Phi(1) - 1)) = 0.53956. */
    struct dist d = parse_ok("normal:0,1,min=-1,max=1", DIST_UNIT_NONE);
    struct stats s = sample_stats(&d, 3);
    assert_true(s.lo >= -1 && s.hi <= 1);
    ASSERT_NEAR(s.mean, 0, 4 * 0.54 / sqrt(NDRAWS));
    ASSERT_REL(s.sd, 0.53956, 0.01);

    /* Exponential cut above 100 (mean 100): memoryless, so the mean is
     * 200 and nothing falls below 100. Only min given. */
    d = parse_ok("exponential:100,min=100", DIST_UNIT_NONE);
    s = sample_stats(&d, 4);
    assert_true(s.lo >= 100);
    ASSERT_NEAR(s.mean, 200, 4 * 100 / sqrt(NDRAWS));

    /* Only max: lognormal with a cap. */
    d = parse_ok("lognormal:6,1,max=1000", DIST_UNIT_NONE);
    s = sample_stats(&d, 5);
    assert_true(s.hi <= 1000 && s.lo > 0);

    /* Gamma's mass is estimated, so an interval it almost never reaches
     * is refused as the other kinds' are (the parent accepted
     * gamma:2,1,min=60,max=61 and clamped every sample, silently). */
    char err[256];
    assert_int_equal(dist_parse("gamma:2,1,min=60,max=61", DIST_UNIT_NONE, &d, err, sizeof err),
                     LL_E_INVAL);
    assert_string_equal(err, "gamma: min=60,max=61 keeps only 0% of the distribution (expected "
                             "at least 0.1%)");
    assert_int_equal(dist_parse("gamma:1,1,min=50", DIST_UNIT_NONE, &d, err, sizeof err),
                     LL_E_INVAL);
    /* Such an interval, built by hand: every sample clamps to min, and is
     * counted. */
    d = parse_ok("gamma:1,1", DIST_UNIT_NONE);
    d.min = 50;
    d.has_min = 1;
    struct rng r;
    rng_seed(&r, 6, 0);
    uint64_t clamped = 0;
    for (int i = 0; i < 1000; i++)
        assert_true(dist_sample_counted(&d, &r, &clamped) == 50.0);
    assert_int_equal(clamped, 1000);
    /* A reachable interval clamps nothing. */
    d = parse_ok("normal:0,1,min=-1,max=1", DIST_UNIT_NONE);
    clamped = 0;
    for (int i = 0; i < 10000; i++)
        dist_sample_counted(&d, &r, &clamped);
    assert_int_equal(clamped, 0);
}

static void test_units(void **state)
{
    struct dist d = parse_ok("exponential:2s", DIST_UNIT_DURATION_NS);
    assert_true(d.kind == DIST_EXPONENTIAL && d.a == 2e9);
    ASSERT_REL(dist_mean(&d), 2e9, 1e-12);
    d = parse_ok("uniform:500ms,1.5s", DIST_UNIT_DURATION_NS);
    assert_true(d.a == 5e8 && d.b == 1.5e9);
    struct stats s = sample_stats(&d, 8);
    assert_true(s.lo >= 5e8 && s.hi <= 1.5e9);
    ASSERT_REL(s.mean, 1e9, 0.005);
    d = parse_ok("2", DIST_UNIT_DURATION_NS); /* bare number: seconds */
    assert_true(d.kind == DIST_FIXED && d.a == 2e9);
    d = parse_ok("250ms", DIST_UNIT_DURATION_NS);
    assert_true(d.a == 2.5e8);
    d = parse_ok("normal:1s,100ms,min=0,max=2s", DIST_UNIT_DURATION_NS);
    assert_true(d.a == 1e9 && d.b == 1e8 && d.min == 0 && d.max == 2e9);
    d = parse_ok("gamma:2,500ms", DIST_UNIT_DURATION_NS);
    assert_true(d.a == 2 && d.b == 5e8); /* K has no unit */
    d = parse_ok("  uniform : 1 , 2 ", DIST_UNIT_NONE); /* spaces trimmed */
    assert_true(d.a == 1 && d.b == 2);

    struct rng r;
    rng_seed(&r, 1, 0);
    d = parse_ok("fixed:1500ms", DIST_UNIT_DURATION_NS);
    assert_int_equal(dist_sample_u64(&d, &r), 1500000000ULL);
}

static void test_errors(void **state)
{
    static const struct {
        const char *spec;
        enum dist_unit unit;
        const char *msg;
    } bad[] = {
        {"normal:5", DIST_UNIT_NONE,
         "normal: expected MU,SD with SD >= 0, got \"5\""},
        {"normal:5,-1", DIST_UNIT_NONE,
         "normal: expected MU,SD with SD >= 0, got \"5,-1\""},
        {"normal:5,1,7", DIST_UNIT_NONE,
         "normal: expected MU,SD with SD >= 0, got \"5,1,7\""},
        {"normal:5,x", DIST_UNIT_NONE,
         "normal: \"x\" is not a number (expected MU,SD with SD >= 0)"},
        {"uniform:9,1", DIST_UNIT_NONE,
         "uniform: expected A,B with A <= B, got \"9,1\""},
        {"uniform:1,", DIST_UNIT_NONE,
         "uniform: expected A,B with A <= B, got \"1,\""},
        {"exponential:0", DIST_UNIT_NONE,
         "exponential: expected MEAN with MEAN > 0, got \"0\""},
        {"gamma:0,1", DIST_UNIT_NONE,
         "gamma: expected K,THETA with K > 0 and THETA > 0, got \"0,1\""},
        {"gamma:2e6,1", DIST_UNIT_NONE,
         "gamma: expected K <= 1e+06, got \"2e6,1\""},
        {"lognormal:6,-1", DIST_UNIT_NONE,
         "lognormal: expected MU,SIGMA or median=M,sigma=S with SIGMA >= 0 "
         "and M > 0, got \"6,-1\""},
        {"lognormal:median=0,sigma=1", DIST_UNIT_NONE,
         "lognormal: expected MU,SIGMA or median=M,sigma=S with SIGMA >= 0 "
         "and M > 0, got \"median=0,sigma=1\""},
        {"lognormal:median=5", DIST_UNIT_NONE,
         "lognormal: expected MU,SIGMA or median=M,sigma=S with SIGMA >= 0 "
         "and M > 0, got \"median=5\""},
        {"lognormal:6,20", DIST_UNIT_NONE,
         "lognormal: expected SIGMA <= 10 and |MU| <= 100, got \"6,20\""},
        {"lognormal:1,2", DIST_UNIT_DURATION_NS,
         "lognormal: for a duration write median=M,sigma=S (e.g. "
         "lognormal:median=2s,sigma=0.5), got \"1,2\""},
        {"fixed:1e16", DIST_UNIT_NONE,
         "fixed: \"1e16\" is beyond +-1e+15 (expected N)"},
        {"", DIST_UNIT_NONE,
         "empty distribution (expected e.g. 500, uniform:100,900 or "
         "exponential:2s)"},
        {"fast", DIST_UNIT_NONE,
         "expected a number or KIND:ARGS (fixed, uniform, normal, lognormal, "
         "exponential, gamma), got \"fast\""},
        {"5,6", DIST_UNIT_DURATION_NS,
         "expected a duration or KIND:ARGS (fixed, uniform, normal, "
         "lognormal, exponential, gamma), got \"5,6\""},
        {"poisson:3", DIST_UNIT_NONE,
         "unknown distribution \"poisson\" (expected fixed, uniform, normal, "
         "lognormal, exponential or gamma)"},
        {"empirical:lengths.csv", DIST_UNIT_NONE,
         "empirical:FILE is not supported yet (use fixed, uniform, normal, "
         "lognormal, exponential or gamma)"},
        {"exponential:2 parsecs", DIST_UNIT_DURATION_NS,
         "exponential: \"2 parsecs\" is not a duration such as 500ms or 2s "
         "(expected MEAN with MEAN > 0)"},
        {"uniform:-1s,2s", DIST_UNIT_DURATION_NS,
         "uniform: \"-1s\" is negative (durations are >= 0) (expected A,B "
         "with A <= B)"},
        {"normal:5,1,mni=3", DIST_UNIT_NONE,
         "normal: unknown option \"mni=3\" (expected min=X or max=Y)"},
        {"lognormal:5,1,mode=3", DIST_UNIT_NONE,
         "lognormal: unknown option \"mode=3\" (expected median=M, sigma=S, "
         "min=X or max=Y)"},
        {"normal:5,1,min=1,min=2", DIST_UNIT_NONE,
         "normal: min= given twice"},
        {"normal:5,1,min=1,7", DIST_UNIT_NONE,
         "normal: expected MU,SD with SD >= 0, got \"5,1,min=1,7\""},
        {"normal:5,1,min=9,max=3", DIST_UNIT_NONE,
         "normal: min=9 is above max=3"},
        {"normal:5,1,max=x", DIST_UNIT_NONE,
         "normal: max=: \"x\" is not a number"},
        {"normal:0,1,min=10", DIST_UNIT_NONE,
         "normal: min=10,max=- keeps only 7.62e-22% of the distribution "
         "(expected at least 0.1%)"},
        {"fixed:5,min=6", DIST_UNIT_NONE,
         "fixed: min=6,max=- keeps only 0% of the distribution (expected at "
         "least 0.1%)"},
        {"uniform:0,100,min=200,max=300", DIST_UNIT_NONE,
         "uniform: min=200,max=300 keeps only 0% of the distribution "
         "(expected at least 0.1%)"},
    };
    char err[512];
    struct dist d, untouched;
    memset(&untouched, 0x5a, sizeof(untouched));
    for (size_t i = 0; i < LL_ARRAY_LEN(bad); i++) {
        d = untouched;
        err[0] = '\0';
        int rc = dist_parse(bad[i].spec, bad[i].unit, &d, err, sizeof(err));
        if (rc != LL_E_INVAL)
            fail_msg("\"%s\": rc %d, expected LL_E_INVAL", bad[i].spec, rc);
        if (strcmp(err, bad[i].msg) != 0)
            fail_msg("\"%s\":\n  got      %s\n  expected %s", bad[i].spec,
                     err, bad[i].msg);
        assert_memory_equal(&d, &untouched, sizeof(d));
    }
    /* Too long, and no error buffer at all. */
    char longspec[DIST_SPEC_MAX + 10];
    memset(longspec, '1', sizeof(longspec) - 1);
    longspec[sizeof(longspec) - 1] = '\0';
    assert_int_equal(dist_parse(longspec, DIST_UNIT_NONE, &d, err,
                                sizeof(err)), LL_E_INVAL);
    assert_non_null(strstr(err, "longer than"));
    assert_int_equal(dist_parse("bad", DIST_UNIT_NONE, &d, NULL, 0),
                     LL_E_INVAL);
}

static void test_nonneg(void **state)
{
    char err[256];
    static const struct bad_input bad[] = {
        {"-1", "fixed: N must be >= 0 for a quantity that cannot be "
               "negative, got -1"},
        {"uniform:-5,10", "uniform: A must be >= 0 for a quantity that "
                          "cannot be negative, got -5"},
        {"normal:-3,1", "normal: MU must be >= 0 for a quantity that cannot "
                        "be negative, got -3"},
        {"normal:3,1,min=-1", "normal: min= must be >= 0, got -1"},
        {"exponential:3,max=-0.5", "exponential: max= must be >= 0, got -0.5"},
    };
    for (size_t i = 0; i < LL_ARRAY_LEN(bad); i++) {
        struct dist d;
        /* max=-0.5 with an exponential keeps no mass: parse may refuse
         * first, which is as good; otherwise the check must. */
        if (dist_parse(bad[i].in, DIST_UNIT_NONE, &d, err, sizeof(err)))
            continue;
        assert_int_equal(dist_require_nonneg(&d, err, sizeof(err)),
                         LL_E_INVAL);
        assert_string_equal(err, bad[i].why);
    }
    /* normal without min gets min=0, shown by dist_format; samples are
     * never negative even though MU is only 1 SD above 0. */
    struct dist d = parse_ok("normal:100,100", DIST_UNIT_NONE);
    assert_int_equal(dist_require_nonneg(&d, err, sizeof(err)), 0);
    char buf[DIST_SPEC_MAX];
    assert_true(dist_format(&d, buf, sizeof(buf)) > 0);
    assert_string_equal(buf, "normal:100,100,min=0");
    struct stats s = sample_stats(&d, 9);
    assert_true(s.lo >= 0);
    d = parse_ok("lognormal:6,1", DIST_UNIT_NONE);
    assert_int_equal(dist_require_nonneg(&d, err, sizeof(err)), 0);
    assert_false(d.has_min);
}

static void test_format_round_trip(void **state)
{
    static const struct {
        const char *spec;
        enum dist_unit unit;
        const char *canon;
    } cases[] = {
        {"500", DIST_UNIT_NONE, "fixed:500"},
        {"1.5k", DIST_UNIT_NONE, "fixed:1500"},
        {"uniform:0.1,0.3", DIST_UNIT_NONE, "uniform:0.1,0.3"},
        {"normal:500,100,max=900,min=10", DIST_UNIT_NONE,
         "normal:500,100,min=10,max=900"},
        {"lognormal:6.2,0.5", DIST_UNIT_NONE, "lognormal:6.2,0.5"},
        {"lognormal:median=500,sigma=0.5", DIST_UNIT_NONE,
         "lognormal:median=500,sigma=0.5"},
        {"exponential:2s", DIST_UNIT_DURATION_NS, "exponential:2s"},
        {"uniform:500ms,1.5s", DIST_UNIT_DURATION_NS,
         "uniform:500ms,1500ms"},
        {"gamma:0.25,1500us", DIST_UNIT_DURATION_NS, "gamma:0.25,1500us"},
        {"lognormal:median=2s,sigma=0.5,max=1m", DIST_UNIT_DURATION_NS,
         "lognormal:median=2s,sigma=0.5,max=60s"},
        {"7ns", DIST_UNIT_DURATION_NS, "fixed:7ns"},
        {"0", DIST_UNIT_DURATION_NS, "fixed:0s"},
    };
    char buf[DIST_SPEC_MAX], again[DIST_SPEC_MAX];
    for (size_t i = 0; i < LL_ARRAY_LEN(cases); i++) {
        struct dist d = parse_ok(cases[i].spec, cases[i].unit);
        int n = dist_format(&d, buf, sizeof(buf));
        assert_int_equal(n, (int)strlen(cases[i].canon));
        assert_string_equal(buf, cases[i].canon);
        struct dist e = parse_ok(buf, cases[i].unit);
        assert_true(e.kind == d.kind && e.a == d.a && e.b == d.b &&
                    e.min == d.min && e.max == d.max &&
                    e.has_min == d.has_min && e.has_max == d.has_max);
        dist_format(&e, again, sizeof(again));
        assert_string_equal(again, buf);
    }
    struct dist d = parse_ok("normal:500,100", DIST_UNIT_NONE);
    assert_int_equal(dist_format(&d, buf, 8), LL_E_FULL);
    d = parse_ok("normal:500,100,min=1", DIST_UNIT_NONE);
    assert_int_equal(dist_format(&d, buf, 16), LL_E_FULL); /* fits sans min */
    assert_string_equal(dist_kind_name(DIST_GAMMA), "gamma");
}

static void test_sample_u64(void **state)
{
    struct rng r;
    rng_seed(&r, 10, 0);
    struct dist d = parse_ok("fixed:2.5", DIST_UNIT_NONE);
    assert_int_equal(dist_sample_u64(&d, &r), 3); /* half away from zero */
    d = parse_ok("fixed:-4", DIST_UNIT_NONE);
    assert_int_equal(dist_sample_u64(&d, &r), 0);
    d = parse_ok("uniform:10,12", DIST_UNIT_NONE);
    int seen[3] = {0};
    for (int i = 0; i < 4000; i++) {
        uint64_t v = dist_sample_u64(&d, &r);
        assert_true(v >= 10 && v <= 12);
        seen[v - 10]++;
    }
    /* 10 and 12 get a quarter each, 11 half. */
    ASSERT_NEAR(seen[1] / 4000.0, 0.5, 0.04);
    ASSERT_NEAR(seen[0] / 4000.0, 0.25, 0.04);
}

static void test_determinism(void **state)
{
    struct dist d = parse_ok("gamma:0.7,100", DIST_UNIT_NONE);
    struct rng a, b;
    rng_seed(&a, 5, 17);
    rng_seed(&b, 5, 17);
    for (int i = 0; i < 1000; i++)
        assert_true(dist_sample(&d, &a) == dist_sample(&d, &b));
}

/* Token lengths no model's context holds: a median over 10M is an error
 * naming the flag and the spec (a lognormal:MU,SIGMA with a huge e^MU is
 * pointed at median=); a p99 over 1M is a warning; a bound caps both. */
static void test_check_tokens(void **state)
{
    static const struct bad_input bad[] = {
        {"lognormal:100,0.5", "--prompt-tokens lognormal:100,0.5: a median of 2.69e+43 tokens, "
                              "beyond any model's context (at most 10000000): lognormal:MU,SIGMA "
                              "takes MU as the log of the median; for a median of 100 tokens "
                              "write lognormal:median=100,sigma=0.5"},
        {"lognormal:17,1", "--prompt-tokens lognormal:17,1: a median of 2.42e+07 tokens, beyond "
                           "any model's context (at most 10000000): lognormal:MU,SIGMA takes MU "
                           "as the log of the median; for a median of 17 tokens write "
                           "lognormal:median=17,sigma=1"},
        {"lognormal:median=20M,sigma=1", "--prompt-tokens lognormal:median=20M,sigma=1: a median "
                                         "of 2e+07 tokens, beyond any model's context (at most "
                                         "10000000)"},
        {"20M", "--prompt-tokens 20M: a median of 2e+07 tokens, beyond any model's context"},
        {"uniform:1,30M", "--prompt-tokens uniform:1,30M: a median of 1.5e+07 tokens"},
        {"normal:11M,1k", "--prompt-tokens normal:11M,1k: a median of 1.1e+07 tokens"},
        {"exponential:20M", "--prompt-tokens exponential:20M: a median of 1.39e+07 tokens"},
        {"gamma:2,10M", "--prompt-tokens gamma:2,10M: a median of 1.68e+07 tokens"},
        {"0", "--prompt-tokens 0: a length of 0 tokens (it would be sent as 1); expected at "
              "least 1"},
        {"0.4", "--prompt-tokens 0.4: a length of 0 tokens"},
        {"uniform:0,0.4", "--prompt-tokens uniform:0,0.4: 99% of the lengths round to 0 tokens "
                          "(each would be sent as 1); expected lengths of at least 1"},
    };
    char err[400], warn[300];
    for (size_t i = 0; i < LL_ARRAY_LEN(bad); i++) {
        struct dist d;
        assert_int_equal(dist_parse(bad[i].in, DIST_UNIT_NONE, &d, err, sizeof err), 0);
        err[0] = '\0';
        assert_int_equal(
            dist_check_tokens(&d, "--prompt-tokens", bad[i].in, err, sizeof err, warn, sizeof warn),
            LL_E_INVAL);
        if (strncmp(err, bad[i].why, strlen(bad[i].why)) != 0)
            fail_msg("%s: got \"%s\", want \"%s...\"", bad[i].in, err, bad[i].why);
    }
    static const struct {
        const char *spec;
        const char *warn; /* NULL: none */
    } ok[] = {
        {"10M", "warning: --prompt-tokens 10M: 1% of the lengths are above 1e+07 tokens"},
        {"lognormal:median=100,sigma=4", "warning: --prompt-tokens lognormal:median=100,sigma=4: "
                                         "1% of the lengths are above 1.1e+06 tokens"},
        {"lognormal:median=100,sigma=4,max=1M", NULL},
        {"lognormal:5,0.5", NULL},
        {"uniform:1,1M", NULL},
        {"1", NULL},
        {"0.5", NULL},
        {"uniform:0,2", NULL},
        {"lognormal:100,0.5,max=4k", "keeps only"}, /* dist_parse already refuses */
    };
    for (size_t i = 0; i < LL_ARRAY_LEN(ok); i++) {
        struct dist d;
        if (dist_parse(ok[i].spec, DIST_UNIT_NONE, &d, err, sizeof err) != 0) {
            assert_non_null(ok[i].warn);
            assert_non_null(strstr(err, ok[i].warn));
            continue;
        }
        assert_int_equal(dist_check_tokens(&d, "--prompt-tokens", ok[i].spec, err, sizeof err, warn,
                                           sizeof warn),
                         0);
        if (!ok[i].warn)
            assert_string_equal(warn, "");
        else if (strncmp(warn, ok[i].warn, strlen(ok[i].warn)) != 0)
            fail_msg("%s: warning \"%s\", want \"%s...\"", ok[i].spec, warn, ok[i].warn);
    }
}

/* The share of samples clamped is known before the load: (1 - m)^64, and a
 * length spec that clamps more than 1% warns (the parent said the count
 * reached the report; nothing counted it). */
static void test_clamp_share(void **state)
{
    (void)state;
    struct dist d = parse_ok("uniform:0,100,min=99", DIST_UNIT_NONE);
    ASSERT_NEAR(dist_clamp_share(&d), pow(0.99, 64), 1e-12);
    struct rng r;
    rng_seed(&r, 9, 0);
    uint64_t clamped = 0;
    enum { N = 200000 };
    for (int i = 0; i < N; i++)
        dist_sample_counted(&d, &r, &clamped);
    double share = pow(0.99, 64); /* 0.526 */
    ASSERT_NEAR((double)clamped / N, share, 5 * sqrt(share * (1 - share) / N));
    d = parse_ok("uniform:0,100", DIST_UNIT_NONE);
    assert_true(dist_clamp_share(&d) == 0);
    d = parse_ok("normal:500,100,min=0", DIST_UNIT_NONE);
    assert_true(dist_clamp_share(&d) < 1e-100);

    char err[256], warn[300];
    d = parse_ok("uniform:0,100,min=99", DIST_UNIT_NONE);
    assert_int_equal(dist_check_tokens(&d, "--prompt-tokens", "uniform:0,100,min=99", err,
                                       sizeof err, warn, sizeof warn),
                     0);
    assert_string_equal(warn, "warning: --prompt-tokens uniform:0,100,min=99: about 53% of the "
                              "lengths are clamped to min= or max= (the interval holds 1% of "
                              "the distribution)");
    d = parse_ok("uniform:0,100,min=10", DIST_UNIT_NONE);
    assert_int_equal(dist_check_tokens(&d, "--prompt-tokens", "uniform:0,100,min=10", err,
                                       sizeof err, warn, sizeof warn),
                     0);
    assert_string_equal(warn, "");
}

UNIT_TESTS(test_kinds_moments, test_lognormal_quantiles, test_truncation, test_units, test_errors,
           test_nonneg, test_format_round_trip, test_sample_u64, test_determinism,
           test_check_tokens, test_clamp_share)
