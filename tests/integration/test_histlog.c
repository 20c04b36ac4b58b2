/* test_histlog.c: hist.jsonl, the per-second histogram log (docs/formats.md,
 * "hist.jsonl"), end to end against `llmload sim`.
 *
 * - A run with a warm-up on 2 worker threads: its windows merged are
 *   bucket for bucket the summary's TTFT, ITL, TPOT and E2E histograms
 *   (summary.json's "hist" strings), count the summary's ok and failed
 *   records, and their percentiles are within 1/256 of the record-exact
 *   percentiles of requests.jsonl (the warm-up left out, as the summary
 *   leaves it). Every line is a whole-second window of a worker that ran.
 * - A sweep of 2 steps: each step's windows carry its step index and
 *   merge to that step's records, counts exact and percentiles within
 *   1/256 of the exact ones.
 * - A run stopped by SIGINT part-way: the windows on disk hold everything
 *   its summary counted (the open windows are written as it stops).
 *
 * All traffic is to 127.0.0.1 at most 30 requests/s; about 20 s. */
#include <jansson.h>
#include <stdlib.h>
#include <string.h>

#include "harness.h"
#include "measure/histlog.h"
#include "test.h"
#include "util/util.h"

#define REL_BOUND (1.0 / 256.0)
#define MAX_VALS 4096

static int cmp_u64(const void *a, const void *b)
{
    uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
    return x < y ? -1 : x > y;
}

/* The exact TTFT, TPOT and E2E of the measured ok records of step (-1:
 * any) in dir's requests.jsonl, sorted; *ok and *failed count the
 * measured records (the warm-up's are left out). */
struct exact {
    uint64_t v[3][MAX_VALS]; /* HISTLOG_TTFT, a dummy for ITL, ... as indexed below */
    size_t n[3];
    uint64_t ok, failed;
};
enum { X_TTFT, X_TPOT, X_E2E };

static void exact_load(const char *dir, int step, struct exact *x)
{
    memset(x, 0, sizeof *x);
    struct harness_recs *r = harness_requests_load(dir);
    for (size_t i = 0; i < r->n; i++) {
        json_t *o = r->items[i];
        if (json_is_true(json_object_get(o, "warmup")))
            continue;
        if (step >= 0 && harness_ival_req(o, "step") != step)
            continue;
        if (strcmp(harness_sval(o, "kind"), "ok") != 0) {
            x->failed++;
            continue;
        }
        x->ok++;
        int64_t sched = harness_ival_req(o, "sched_ns"), first = harness_ival_req(o, "first_ns");
        int64_t last = harness_ival_req(o, "last_ns"), end = harness_ival_req(o, "end_ns");
        int64_t out = harness_ival_req(o, "output_tokens"), ev = harness_ival_req(o, "events");
        assert_true(x->n[X_E2E] < MAX_VALS);
        x->v[X_TTFT][x->n[X_TTFT]++] = (uint64_t)(first - sched);
        x->v[X_E2E][x->n[X_E2E]++] = (uint64_t)(end - sched);
        if (out >= 2 && ev >= 2)
            x->v[X_TPOT][x->n[X_TPOT]++] = (uint64_t)(last - first) / (uint64_t)(out - 1);
    }
    harness_recs_free(r);
    for (int m = 0; m < 3; m++)
        qsort(x->v[m], x->n[m], sizeof(uint64_t), cmp_u64);
}

/* Each percentile of the merged window's TTFT, TPOT and E2E within 1/256
 * of the exact one; counts exact. */
static void check_against_exact(const struct histlog_window *t, const struct exact *x,
                                const char *what)
{
    static const double pcts[] = {1, 50, 90, 99, 100};
    static const int hm[3] = {HISTLOG_TTFT, HISTLOG_TPOT, HISTLOG_E2E};
    if (t->ok != x->ok || t->failed != x->failed)
        fail_msg("%s: hist.jsonl counts %llu ok %llu failed, requests.jsonl %llu and %llu", what,
                 (unsigned long long)t->ok, (unsigned long long)t->failed,
                 (unsigned long long)x->ok, (unsigned long long)x->failed);
    for (int m = 0; m < 3; m++) {
        assert_int_equal(hist_count(t->h[hm[m]]), x->n[m]);
        if (x->n[m] < 8)
            fail_msg("%s: only %zu exact values of metric %d", what, x->n[m], m);
        for (size_t p = 0; p < LL_ARRAY_LEN(pcts); p++) {
            uint64_t exact = x->v[m][hist_percentile_rank(pcts[p], x->n[m]) - 1];
            uint64_t got = hist_percentile(t->h[hm[m]], pcts[p]);
            ASSERT_NEAR(got, exact, (double)exact * REL_BOUND);
        }
    }
}

/* Every line of dir/hist.jsonl: a whole-second window of one of threads
 * workers, of step (-1: none). Returns how many lines. */
static size_t check_lines(const char *dir, int threads, int max_step)
{
    char path[700];
    snprintf(path, sizeof path, "%s/hist.jsonl", dir);
    json_t *lines = harness_jsonl_load(path);
    size_t i, n = json_array_size(lines);
    json_t *o;
    json_array_foreach(lines, i, o)
    {
        assert_int_equal(harness_ival_req(o, "t_ns") % 1000000000, 0);
        assert_true(harness_ival_req(o, "worker") < threads);
        assert_int_equal(harness_ival_req(o, "shard"), 0);
        json_t *st = json_object_get(o, "step");
        if (max_step < 0)
            assert_null(st);
        else
            assert_true(json_integer_value(st) >= 0 && json_integer_value(st) <= max_step);
    }
    json_decref(lines);
    return n;
}

static void test_run_windows_are_the_summary(void **state)
{
    const char *args[] = {"--rate",
                          "30",
                          "--duration",
                          "4s",
                          "--warmup",
                          "1s",
                          "--threads",
                          "2",
                          "--prompt-tokens",
                          "uniform:8,200",
                          "--output-tokens",
                          "uniform:2,40",
                          NULL};
    char *dir = harness_run_on_sim(NULL, NULL, args);
    assert_true(check_lines(dir, 2, -1) >= 4);
    char path[700], err[400];
    snprintf(path, sizeof path, "%s/hist.jsonl", dir);
    struct histlog_window t;
    histlog_window_init(&t);
    uint64_t windows = 0;
    if (histlog_merge_file(path, HISTLOG_ALL_STEPS, &t, &windows, err, sizeof err) != 0)
        fail_msg("%s", err);
    json_t *sum = harness_summary_load(dir);
    json_t *lat = json_object_get(sum, "latency_ns");
    for (int m = 0; m < HISTLOG_METRICS; m++) {
        const char *name = histlog_metric_name((enum histlog_metric)m);
        const char *want = harness_sval(json_object_get(lat, name), "hist");
        char *got = hist_to_string(t.h[m]);
        if (strcmp(got, want) != 0)
            fail_msg("%s: hist.jsonl merged \"%s\", summary.json \"%s\"", name, got, want);
        free(got);
    }
    json_t *req = json_object_get(sum, "requests");
    assert_int_equal(t.ok, harness_ival_req(req, "ok"));
    assert_int_equal(t.failed, harness_ival_req(req, "failed"));
    json_decref(sum);
    struct exact *x = malloc(sizeof *x);
    exact_load(dir, -1, x);
    check_against_exact(&t, x, "run");
    free(x);
    histlog_window_free(&t);
    harness_results_free(dir);
}

static void test_sweep_windows_per_step(void **state)
{
    harness_small_sim_start(NULL);
    const char *args[] = {"--rates",         "6,10",
                          "--step-duration", "2s",
                          "--warmup",        "0.5s",
                          "--no-recovery",   "--no-metrics",
                          "--prompt-tokens", "uniform:8,100",
                          "--output-tokens", "16",
                          "--ignore-eos",    NULL};
    char *dir = harness_sweep_ok(args, 60, NULL, NULL);
    check_lines(dir, 64, 1);
    char path[700], err[400];
    snprintf(path, sizeof path, "%s/hist.jsonl", dir);
    struct exact *x = malloc(sizeof *x);
    for (int step = 0; step < 2; step++) {
        struct histlog_window t;
        histlog_window_init(&t);
        if (histlog_merge_file(path, step, &t, NULL, err, sizeof err) != 0)
            fail_msg("%s", err);
        exact_load(dir, step, x);
        check_against_exact(&t, x, step ? "step 1" : "step 0");
        histlog_window_free(&t);
    }
    free(x);
    harness_results_free(dir);
}

/* Every window of dir's hist.jsonl merged into t (initialised). */
static void merge_dir(const char *dir, struct histlog_window *t)
{
    char path[700], err[400];
    snprintf(path, sizeof path, "%s/hist.jsonl", dir);
    if (histlog_merge_file(path, HISTLOG_ALL_STEPS, t, NULL, err, sizeof err) != 0)
        fail_msg("%s", err);
}

static void test_interrupt_keeps_windows(void **state)
{
    char dir[600];
    const char *a[] = {"--rate", "20",        "--duration", "30s", "--warmup",
                       "0",      "--threads", "2",          NULL};
    harness_run_interrupted(dir, sizeof dir, "r", a, 3000);
    struct histlog_window t;
    histlog_window_init(&t);
    merge_dir(dir, &t);
    json_t *sum = harness_summary_load(dir);
    assert_true(json_is_true(json_object_get(sum, "interrupted")));
    int64_t ok = harness_ival_req(json_object_get(sum, "requests"), "ok");
    assert_true(ok > 0);
    assert_int_equal(t.ok, ok);
    char *got = hist_to_string(t.h[HISTLOG_TTFT]);
    assert_string_equal(
        got, harness_sval(json_object_get(json_object_get(sum, "latency_ns"), "ttft"), "hist"));
    free(got);
    json_decref(sum);
    histlog_window_free(&t);
}

HARNESS_MAIN(cmocka_unit_test_teardown(test_run_windows_are_the_summary, harness_sim_teardown),
             cmocka_unit_test_teardown(test_sweep_windows_per_step, harness_sim_teardown),
             cmocka_unit_test_teardown(test_interrupt_keeps_windows, harness_client_teardown))
