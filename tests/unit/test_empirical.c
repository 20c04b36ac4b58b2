/* test_empirical.c: empirical distributions: CSV and JSONL parsing with
 * exact values, every error message (file:line:col and field), type-7
 * quantiles, bootstrap sampling, and joint pairs that keep the file's
 * correlation. */
#include "test.h"
#include "testutil.h"

#include <stdlib.h>
#include <string.h>

#include "workload/empirical.h"
#include "util/util.h"

static struct empirical *parse_ok(const char *text, enum dist_unit unit)
{
    struct empirical *e = NULL;
    char err[512] = "";
    if (empirical_parse("x.csv", text, strlen(text), unit, &e, err,
                        sizeof(err)) != 0)
        fail_msg("empirical_parse failed: %s\n%s", err, text);
    return e;
}

/* Parse must fail, and the message must contain every non-NULL part. */
static void parse_bad(const char *text, enum dist_unit unit, const char *a,
                      const char *b, const char *c)
{
    struct empirical *e = (struct empirical *)1;
    char err[512] = "";
    int rc = empirical_parse("x.csv", text, strlen(text), unit, &e, err, sizeof(err));
    assert_rejected(rc, e, err, text, a, b, c);
}

/* parse_ok(text, unit), which must hold rows x cols values, exactly the
 * rows x cols of want, row by row. Caller frees with empirical_free. */
static struct empirical *parse_values(const char *text, enum dist_unit unit, size_t rows, int cols,
                                      const double *want)
{
    struct empirical *e = parse_ok(text, unit);
    assert_int_equal(empirical_rows(e), rows);
    assert_int_equal(empirical_columns(e), cols);
    for (size_t r = 0; r < rows; r++)
        for (int c = 0; c < cols; c++) {
            double got = empirical_value(e, r, c), w = want[r * (size_t)cols + (size_t)c];
            if (got != w)
                fail_msg("%s: row %zu column %d is %.17g, want %.17g", text, r, c, got, w);
        }
    return e;
}

static void test_csv_single(void **state)
{
    struct empirical *e = parse_values("40\n10\n\n# a comment\n 30 \r\n20", DIST_UNIT_NONE, 4, 1,
                                       (double[]){40, 10, 30, 20});
    /* sorted 10 20 30 40: type 7, h = p * 3 */
    ASSERT_NEAR(empirical_quantile(e, 0, 0), 10, 0);
    ASSERT_NEAR(empirical_quantile(e, 0, 0.25), 17.5, 1e-12);
    ASSERT_NEAR(empirical_quantile(e, 0, 0.5), 25, 1e-12);
    ASSERT_NEAR(empirical_quantile(e, 0, 0.9), 37, 1e-12);
    ASSERT_NEAR(empirical_quantile(e, 0, 1), 40, 0);
    ASSERT_NEAR(empirical_mean(e, 0), 25, 1e-12);
    empirical_free(e);

    e = parse_values("value\n7.5\n", DIST_UNIT_NONE, 1, 1, (double[]){7.5});
    ASSERT_NEAR(empirical_quantile(e, 0, 0.3), 7.5, 0);
    empirical_free(e);
}

static void test_csv_pairs(void **state)
{
    struct empirical *e = parse_values("input, output\r\n100,20\r\n300 , 60\r\n", DIST_UNIT_NONE, 2,
                                       2, (double[]){100, 20, 300, 60});
    ASSERT_NEAR(empirical_mean(e, 1), 40, 1e-12);
    empirical_free(e);
}

static void test_jsonl(void **state)
{
    struct empirical *e = parse_values("{\"value\": 5}\n\n{\"value\": 2.5}\n", DIST_UNIT_NONE, 2, 1,
                                       (double[]){5, 2.5});
    empirical_free(e);

    /* Pairs come out in EMPIRICAL_COL_INPUT, EMPIRICAL_COL_OUTPUT order,
     * whatever the order of the keys. */
    assert_int_equal(EMPIRICAL_COL_INPUT, 0);
    assert_int_equal(EMPIRICAL_COL_OUTPUT, 1);
    e = parse_values("{\"output\": 9, \"input\": 100}\n{\"input\":1,\"output\":2}", DIST_UNIT_NONE,
                     2, 2, (double[]){100, 9, 1, 2});
    empirical_free(e);
}

static void test_durations(void **state)
{
    struct empirical *e = parse_values("250ms\n2\n1.5us\n", DIST_UNIT_DURATION_NS, 3, 1,
                                       (double[]){250e6, 2e9, 1500});
    empirical_free(e);
    e = parse_values("{\"value\": \"1.5s\"}\n{\"value\": 0.5}\n", DIST_UNIT_DURATION_NS, 2, 1,
                     (double[]){1.5e9, 0.5e9});
    empirical_free(e);
}

static void test_errors(void **state)
{
    parse_bad("", DIST_UNIT_NONE, "x.csv: no values", NULL, NULL);
    parse_bad("\n# only\n\n", DIST_UNIT_NONE, "x.csv: no values", NULL, NULL);
    parse_bad("input,output\n", DIST_UNIT_NONE, "x.csv: no values", NULL, NULL);
    parse_bad("10\n-3\n", DIST_UNIT_NONE, "x.csv:2:1: value: expected a number",
              "got \"-3\"", NULL);
    parse_bad("input,output\n10,20\n30, -4\n", DIST_UNIT_NONE,
              "x.csv:3:5: output: expected a number in [0, 1e15]", "\"-4\"", NULL);
    parse_bad("10,20\n30\n", DIST_UNIT_NONE, "x.csv:2:1: expected 2 columns as on line 1",
              "got 1", NULL);
    parse_bad("1,2,3\n", DIST_UNIT_NONE, "x.csv:1:5: expected 1 or 2 columns", NULL, NULL);
    parse_bad("10\n500ms\n", DIST_UNIT_NONE, "x.csv:2:1: value:", "\"500ms\"", NULL);
    parse_bad("10\nabc\n", DIST_UNIT_NONE, "x.csv:2:1: value:", "\"abc\"", NULL);
    parse_bad("10\n1e400\n", DIST_UNIT_NONE, "x.csv:2:1:", NULL, NULL);
    parse_bad("10,\n", DIST_UNIT_NONE, "x.csv:1:4: output: expected", "got \"\"", NULL);
    parse_bad("1\n5 parsecs\n", DIST_UNIT_DURATION_NS, "x.csv:2:1: value: expected a duration",
              NULL, NULL);
    parse_bad("{\"value\": 1}\n{\"valeu\": 2}\n", DIST_UNIT_NONE,
              "x.csv:2:2: valeu: unknown field (allowed: value, input, output)", NULL, NULL);
    parse_bad("{\"value\": 1, \"value\": 2}\n", DIST_UNIT_NONE,
              "x.csv:1:14: value: repeated field", NULL, NULL);
    parse_bad("{\"value\": 1}\n{\"input\": 1, \"output\": 2}\n", DIST_UNIT_NONE,
              "x.csv:2:1: expected 1 column as on line 1", NULL, NULL);
    parse_bad("{\"input\": 1}\n", DIST_UNIT_NONE,
              "x.csv:1:1: expected either \"value\" or both", NULL, NULL);
    parse_bad("{\"value\": -1}\n", DIST_UNIT_NONE, "x.csv:1:11: value: expected", "got -1", NULL);
    parse_bad("{\"value\": \"12\"}\n", DIST_UNIT_NONE, "x.csv:1:11: value:", NULL, NULL);
    parse_bad("{\"value\": 1\n", DIST_UNIT_NONE, "x.csv:1:", "invalid JSON", NULL);
    parse_bad("{\"value\": 1}\n[1]\n", DIST_UNIT_NONE, "x.csv:2:1: expected an object", NULL, NULL);
}

static void test_load_file(void **state)
{
    char path[512], err[512] = "";
    struct empirical *e = NULL;
    test_data_path("workload", "values.jsonl", path, sizeof(path));
    assert_int_equal(empirical_load(path, DIST_UNIT_NONE, &e, err, sizeof(err)), 0);
    assert_int_equal(empirical_rows(e), 8);
    assert_true(empirical_value(e, 4, 0) == 1000);
    empirical_free(e);

    /* A byte-order mark at the start is skipped: the header reads "input". */
    test_data_path("workload", "bom_pairs.csv", path, sizeof(path));
    if (empirical_load(path, DIST_UNIT_NONE, &e, err, sizeof(err)) != 0)
        fail_msg("%s", err);
    assert_int_equal(empirical_rows(e), 2);
    assert_true(empirical_value(e, 1, 1) == 40);
    empirical_free(e);

    e = (struct empirical *)1;
    int rc = empirical_load("/nonexistent/lens.csv", DIST_UNIT_NONE, &e, err, sizeof(err));
    assert_load_missing(rc, e, err, "/nonexistent/lens.csv");
    empirical_free(NULL);
}

/* Draws are observed values only, and their quantiles are the file's:
 * values 1..1000, 200k draws; the sample p-quantile of a bootstrap is
 * within a few standard errors (sqrt(p(1-p)/n) * 1000 ~ 1.1) of the file's. */
static void test_sample_quantiles(void **state)
{
    size_t cap = 1000 * 6 + 1, at = 0;
    char *text = malloc(cap);
    assert_non_null(text);
    for (int v = 1000; v >= 1; v--)
        at += (size_t)snprintf(text + at, cap - at, "%d\n", v);
    struct empirical *e = parse_ok(text, DIST_UNIT_NONE);
    free(text);
    ASSERT_NEAR(empirical_quantile(e, 0, 0.5), 500.5, 1e-9);
    ASSERT_NEAR(empirical_quantile(e, 0, 0.99), 990.01, 1e-9);

    enum { N = 200000 };
    int *counts = calloc(1001, sizeof(int));
    assert_non_null(counts);
    struct rng r;
    rng_seed(&r, 42, 0);
    for (int i = 0; i < N; i++) {
        double x = empirical_sample(e, 0, &r);
        assert_true(x >= 1 && x <= 1000 && x == floor(x));
        counts[(int)x]++;
    }
    const double ps[] = {0.1, 0.5, 0.9, 0.99};
    for (size_t k = 0; k < LL_ARRAY_LEN(ps); k++) {
        long need = (long)(ps[k] * N), run = 0;
        int q = 0;
        for (int v = 1; v <= 1000; v++) {
            run += counts[v];
            if (run >= need) {
                q = v;
                break;
            }
        }
        ASSERT_NEAR(q, empirical_quantile(e, 0, ps[k]), 6);
    }
    free(counts);
    empirical_free(e);
}

static double pearson(const double *x, const double *y, size_t n)
{
    double mx = 0, my = 0, sxx = 0, syy = 0, sxy = 0;
    for (size_t i = 0; i < n; i++) {
        mx += x[i];
        my += y[i];
    }
    mx /= (double)n;
    my /= (double)n;
    for (size_t i = 0; i < n; i++) {
        sxx += (x[i] - mx) * (x[i] - mx);
        syy += (y[i] - my) * (y[i] - my);
        sxy += (x[i] - mx) * (y[i] - my);
    }
    return sxy / sqrt(sxx * syy);
}

/* Joint draws keep the file's correlation: Pearson r of 100k sampled pairs
 * within 0.02 of the r of the file's rows; and every pair is a file row. */
static void test_pairs_correlation(void **state)
{
    char path[512], err[512] = "";
    struct empirical *e = NULL;
    test_data_path("workload", "pairs.csv", path, sizeof(path));
    if (empirical_load(path, DIST_UNIT_NONE, &e, err, sizeof(err)) != 0)
        fail_msg("%s", err);
    size_t n = empirical_rows(e);
    assert_int_equal(n, 500);
    double *x = malloc(n * sizeof(double)), *y = malloc(n * sizeof(double));
    assert_non_null(x);
    assert_non_null(y);
    for (size_t i = 0; i < n; i++) {
        x[i] = empirical_value(e, i, 0);
        y[i] = empirical_value(e, i, 1);
    }
    double r_file = pearson(x, y, n);
    assert_true(r_file > 0.5); /* the sample file is strongly correlated */

    enum { N = 100000 };
    double *sx = malloc(N * sizeof(double)), *sy = malloc(N * sizeof(double));
    assert_non_null(sx);
    assert_non_null(sy);
    struct rng r;
    rng_seed(&r, 7, 1);
    for (size_t i = 0; i < N; i++) {
        empirical_sample_pair(e, &r, &sx[i], &sy[i]);
        if (i < 2000) {
            int found = 0;
            for (size_t k = 0; k < n && !found; k++)
                found = x[k] == sx[i] && y[k] == sy[i];
            assert_true(found);
        }
    }
    ASSERT_NEAR(pearson(sx, sy, N), r_file, 0.02);
    /* Drawing the two columns independently loses it. */
    for (size_t i = 0; i < N; i++)
        sy[i] = empirical_sample(e, 1, &r);
    ASSERT_NEAR(pearson(sx, sy, N), 0, 0.02);
    free(x);
    free(y);
    free(sx);
    free(sy);
    empirical_free(e);
}

/* Token lengths above DIST_TOKENS_MAX are refused by the length check (the
 * parent drew them and cut them to 4e9); the bound itself passes. */
static void test_check_length_max(void **state)
{
    (void)state;
    char err[256];
    struct empirical *e = parse_ok("5\n1e12\n2e9\n7\n", DIST_UNIT_NONE);
    assert_int_equal(empirical_check_length(e, 0, err, sizeof err), LL_E_INVAL);
    assert_string_equal(err, "2 of its 4 lengths are above 100000000 tokens (the largest "
                             "1e+12); expected at most 100000000");
    empirical_free(e);
    e = parse_ok("input,output\n5,100000000\n", DIST_UNIT_NONE);
    assert_int_equal(empirical_check_length(e, 0, err, sizeof err), 0);
    assert_int_equal(empirical_check_length(e, 1, err, sizeof err), 0);
    empirical_free(e);
}

UNIT_TESTS(test_csv_single, test_csv_pairs, test_jsonl, test_durations, test_errors,
           test_check_length_max, test_load_file, test_sample_quantiles, test_pairs_correlation)
