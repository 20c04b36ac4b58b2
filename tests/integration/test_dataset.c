/* Integration tests of lengths and prompts from files: `empirical:FILE` in
 * --prompt-tokens / --output-tokens, --lengths empirical:PAIRS, and
 * --dataset, run against `llmload sim`.
 *
 * The schedule is a pure function of seed and config, so each test loads
 * the same files the client loaded, asks workload_spec what every request
 * was meant to be, and checks the record against it exactly; and the sim's
 * own count of each prompt (prompt_tokens_server) against the file. */
#include <jansson.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "workload/dataset.h"
#include "workload/empirical.h"
#include "harness.h"
#include "test.h"
#include "workload/workload.h"

#define PAIRS "tests/data/workload/pairs.csv"
#define VALUES "tests/data/workload/values.jsonl"
#define PROMPTS "tests/data/workload/prompts.jsonl"
#define SHAREGPT "tests/data/workload/sharegpt.json"

/* Every run: 30 seeded requests at 100/s, each answer exactly max_tokens. */
static const char *const run_fixed[] = {"--seed", "7", "--rate", "100", "--requests", "30",
                                        "--ignore-eos", NULL};

/* Their workload before the datasets replace its lengths. */
static void base_workload(struct workload *w)
{
    harness_workload(w, 7, "256", "128", 1);
}

static struct empirical *load_emp(const char *path)
{
    char err[300];
    struct empirical *e = NULL;
    if (empirical_load(path, DIST_UNIT_NONE, &e, err, sizeof err) != 0)
        fail_msg("%s", err);
    return e;
}

/* Whether v is one of column col's values. */
static int in_column(const struct empirical *e, int col, int64_t v)
{
    for (size_t i = 0; i < empirical_rows(e); i++) {
        if ((int64_t)llround(empirical_value(e, i, col)) == v)
            return 1;
    }
    return 0;
}

/* Whether (in, out) is one row of a two-column file. */
static int is_row(const struct empirical *e, int64_t in, int64_t out)
{
    for (size_t i = 0; i < empirical_rows(e); i++) {
        if ((int64_t)llround(empirical_value(e, i, 0)) == in &&
            (int64_t)llround(empirical_value(e, i, 1)) == out)
            return 1;
    }
    return 0;
}

/* --prompt-tokens empirical:PAIRS#input and --output-tokens
 * empirical:VALUES: every prompt and max_tokens is one of the file's
 * values, the exact one workload_spec draws, and the sim counts the prompt
 * at exactly that length. */
static void test_empirical_columns(void **state)
{
    const char *args[] = {"--prompt-tokens", "empirical:" PAIRS "#input", "--output-tokens",
                          "empirical:" VALUES, NULL};
    char *dir = harness_run_on_sim(NULL, run_fixed, args);

    struct workload w;
    base_workload(&w);
    struct empirical *pairs = load_emp(PAIRS), *values = load_emp(VALUES);
    w.prompt_emp = pairs;
    w.prompt_col = EMPIRICAL_COL_INPUT;
    w.output_emp = values;
    w.output_col = EMPIRICAL_COL_VALUE;
    struct harness_recs *r = harness_requests_load(dir);
    assert_int_equal(r->n, 30);
    size_t distinct_prompts = 0;
    int64_t first = -1;
    for (size_t i = 0; i < r->n; i++) {
        json_t *rec = r->items[i];
        int64_t p = harness_ival(rec, "prompt_tokens"), m = harness_ival(rec, "max_tokens");
        assert_true(in_column(pairs, EMPIRICAL_COL_INPUT, p));
        assert_true(in_column(values, EMPIRICAL_COL_VALUE, m));
        struct req_spec s;
        workload_spec(&w, (uint64_t)harness_ival(rec, "id"), &s);
        assert_int_equal(p, s.prompt_tokens);
        assert_int_equal(m, s.max_tokens);
        assert_int_equal(harness_ival(rec, "prompt_tokens_server"), p);
        if (first < 0)
            first = p;
        distinct_prompts += p != first;
    }
    assert_true(distinct_prompts > 0);
    harness_recs_free(r);
    empirical_free(pairs);
    empirical_free(values);
    harness_results_free(dir);
}

/* --lengths empirical:PAIRS: every record's (prompt, max_tokens) is one
 * row of the file; over many draws the correlation of the two is the
 * file's (within 0.03 at 20000 draws), whereas independent columns give
 * about 0. */
static void test_empirical_pairs(void **state)
{
    const char *args[] = {"--lengths", "empirical:" PAIRS, NULL};
    char *dir = harness_run_on_sim(NULL, run_fixed, args);

    struct empirical *pairs = load_emp(PAIRS);
    struct harness_recs *r = harness_requests_load(dir);
    assert_int_equal(r->n, 30);
    for (size_t i = 0; i < r->n; i++) {
        int64_t p = harness_ival(r->items[i], "prompt_tokens"),
                m = harness_ival(r->items[i], "max_tokens");
        assert_true(is_row(pairs, p, m));
        assert_int_equal(harness_ival(r->items[i], "prompt_tokens_server"), p);
    }
    harness_recs_free(r);
    harness_results_free(dir);

    /* Correlation: the file's, and that of 20000 draws, joint and apart. */
    struct workload w;
    base_workload(&w);
    double file_r, joint_r, apart_r;
    for (int pass = 0; pass < 3; pass++) {
        size_t n = pass == 0 ? empirical_rows(pairs) : 20000;
        double sx = 0, sy = 0, sxx = 0, syy = 0, sxy = 0;
        if (pass == 1) {
            w.pairs = pairs;
        } else if (pass == 2) {
            w.pairs = NULL;
            w.prompt_emp = pairs;
            w.prompt_col = EMPIRICAL_COL_INPUT;
            w.output_emp = pairs;
            w.output_col = EMPIRICAL_COL_OUTPUT;
        }
        for (size_t i = 0; i < n; i++) {
            double x, y;
            if (pass == 0) {
                x = empirical_value(pairs, i, 0);
                y = empirical_value(pairs, i, 1);
            } else {
                struct req_spec s;
                workload_spec(&w, i, &s);
                x = s.prompt_tokens;
                y = s.max_tokens;
            }
            sx += x;
            sy += y;
            sxx += x * x;
            syy += y * y;
            sxy += x * y;
        }
        double dn = (double)n;
        double cov = sxy / dn - (sx / dn) * (sy / dn);
        double vx = sxx / dn - (sx / dn) * (sx / dn), vy = syy / dn - (sy / dn) * (sy / dn);
        double rho = cov / sqrt(vx * vy);
        if (pass == 0)
            file_r = rho;
        else if (pass == 1)
            joint_r = rho;
        else
            apart_r = rho;
    }
    assert_true(file_r > 0.3);
    ASSERT_NEAR(joint_r, file_r, 0.03);
    ASSERT_NEAR(apart_r, 0.0, 0.03);
    empirical_free(pairs);
}

/* --dataset FILE: each record's prompt is an entry's, counted by the sim
 * at the entry's token count; max_tokens is the entry's output length, or
 * --output-tokens where the entry has none. */
static void check_dataset(const char *path, const char *output_flag, uint32_t output_default)
{
    harness_cur_sim_start(NULL);
    char ds[300];
    snprintf(ds, sizeof ds, "%s", path);
    const char *args[] = {"--dataset", ds, "--output-tokens", output_flag, NULL};
    char *dir = harness_run_client(run_fixed, args, HARNESS_RC_OK_OR_INVALID, NULL);
    harness_sim_teardown(NULL);

    char err[300];
    struct dataset *d = NULL;
    if (dataset_load(path, &d, err, sizeof err) != 0)
        fail_msg("%s", err);
    struct workload w;
    base_workload(&w);
    w.dataset = d;
    struct harness_recs *r = harness_requests_load(dir);
    assert_int_equal(r->n, 30);
    size_t with_default = 0, with_data = 0;
    for (size_t i = 0; i < r->n; i++) {
        json_t *rec = r->items[i];
        struct req_spec s;
        workload_spec(&w, (uint64_t)harness_ival(rec, "id"), &s);
        assert_true(s.dataset_entry >= 0 && (size_t)s.dataset_entry < d->n);
        const struct dataset_entry *e = &d->entries[s.dataset_entry];
        assert_int_equal(harness_ival(rec, "prompt_tokens"), e->prompt_tokens);
        assert_int_equal(harness_ival(rec, "prompt_tokens_server"), e->prompt_tokens);
        if (e->output_tokens) {
            assert_int_equal(harness_ival(rec, "max_tokens"), e->output_tokens);
            with_data++;
        } else {
            assert_int_equal(harness_ival(rec, "max_tokens"), output_default);
            with_default++;
        }
    }
    /* Deterministic per (seed, index): the same spec twice. */
    struct req_spec a, b;
    workload_spec(&w, 5, &a);
    workload_spec(&w, 5, &b);
    assert_int_equal(a.dataset_entry, b.dataset_entry);
    assert_ptr_equal(a.prompt_text, b.prompt_text);
    assert_true(with_data > 0);
    if (d->format == DATASET_JSONL)
        assert_true(with_default > 0);
    harness_recs_free(r);
    dataset_free(d);
    harness_results_free(dir);
}

static void test_dataset_jsonl(void **state)
{
    check_dataset(PROMPTS, "11", 11);
}

static void test_dataset_sharegpt(void **state)
{
    check_dataset(SHAREGPT, "11", 11);
}

/* Flags that were taken and ignored: a calibration beside a dataset
 * (whose prompts go verbatim), --max-inflight in a closed loop or
 * sessions (the run had 2 in flight under a cap of 1), --metrics-interval
 * with --no-metrics and nothing else to pace. Each is refused, exit 2,
 * before anything is sent (nothing listens on port 9). */
static void test_ignored_flags_refused(void **state)
{
    (void)state;
#define NOWHERE "--url", "http://127.0.0.1:9/v1"
    HARNESS_EXPECT_USAGES(
        {{"run", NOWHERE, "--rate", "1", "--calibration", "fit.json", "--dataset", SHAREGPT},
         "--calibration: --dataset prompts are sent verbatim; there is nothing to scale"},
        {{"run", NOWHERE, "--users", "2", "--max-inflight", "1"},
         "--max-inflight: has no effect with --users"},
        {{"run", NOWHERE, "--sessions", "2", "--max-inflight", "1"},
         "--max-inflight: has no effect with --sessions"},
        {{"run", NOWHERE, "--rate", "1", "--metrics-interval", "2s", "--no-metrics"},
         "--metrics-interval: has no effect with --no-metrics"},
        {{"sweep", NOWHERE, "--rates", "1", "--metrics-interval", "2s", "--no-metrics"},
         "--metrics-interval: has no effect with --no-metrics"});
#undef NOWHERE
}

HARNESS_MAIN(cmocka_unit_test(test_ignored_flags_refused),
             cmocka_unit_test_teardown(test_empirical_columns, harness_sim_teardown),
             cmocka_unit_test_teardown(test_empirical_pairs, harness_sim_teardown),
             cmocka_unit_test_teardown(test_dataset_jsonl, harness_sim_teardown),
             cmocka_unit_test_teardown(test_dataset_sharegpt, harness_sim_teardown))
