/* Integration tests of --expect against `llmload sim` on 127.0.0.1: on
 * `llmload run`, thresholds the sim's truth meets pass (exit 0) and one it
 * cannot meet (a TPOT under its 4 ms decode step) exits 7 with one line
 * that gives the measured value and the bound; summary.json records each
 * expectation and its result, run.json's outcome the status and its
 * "expect" the spec, which `llmload report` judges again; INVALID (1)
 * wins over a failed expectation; usage errors name the item.
 *
 * A run on this shared box may come out INVALID (the generator's own
 * lateness): its status is then 1 whatever the thresholds did, which the
 * tests check from run.json's outcome rather than by luck. */
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "harness.h"
#include "test.h"

#define EXP_WORKLOAD                                                                               \
    "--rate", "40", "--duration", "2s", "--arrival", "constant", "--prompt-tokens", "64",          \
        "--output-tokens", "16", "--ignore-eos", "--slo", "ttft=500ms", "--lateness-tolerance",    \
        "20%"

static const char *const workload[] = {EXP_WORKLOAD, NULL};

/* Run against harness_cur_sim with --expect spec; fail unless the status
 * is want, or 1 when run.json says INVALID. Returns the results dir;
 * *err gets stderr (caller frees). */
static char *run_expect(const char *spec, int want, char **err)
{
    const char *args[] = {"--expect", spec, NULL};
    int st = -1;
    char *out = NULL;
    char *dir = harness_run_against_sim("run", workload, args, 60, &st, &out, err);
    json_t *run = harness_json_load(dir, "run.json");
    json_t *o = json_object_get(run, "outcome");
    int invalid = json_is_true(json_object_get(o, "invalid"));
    int w = invalid ? 1 : want;
    if (st != w)
        fail_msg("run --expect '%s' exited %d, want %d\nstdout:\n%s\nstderr:\n%s", spec, st, w, out,
                 *err);
    assert_int_equal(harness_ival(o, "exit_status"), w);
    json_decref(run);
    free(out);
    return dir;
}

/* The number of lines of s that hold needle. */
static int count_lines(const char *s, const char *needle)
{
    int n = 0;
    for (const char *p = s; (p = strstr(p, needle)) != NULL; p += strlen(needle))
        n++;
    return n;
}

static void test_run_expect(void **state)
{
    harness_tmp_begin();
    harness_cur_sim_start(NULL);

    /* The sim's truth: TTFT about 10 ms, TPOT 4.5 ms, no errors, every
     * request within the SLO (about 40/s of goodput). */
    char *err = NULL;
    char *a = run_expect("ttft_p99<2s,tpot_p50<=100ms,itl_p90<100ms,e2e_p50<3s,error_rate<1%,"
                         "goodput>=10/s,attainment>=90%,achieved_rate>20/s,"
                         "output_tokens_per_s>100/s,error_rate_http_5xx<=0%",
                         0, &err);
    assert_null(strstr(err, "--expect"));
    free(err);
    json_t *s = harness_expect_passed(a, 10);
    json_t *ex = json_object_get(s, "expect");
    json_t *o;
    /* The values are the summary's own figures. */
    o = json_array_get(ex, 0);
    assert_string_equal(harness_sval(o, "expect"), "ttft_p99<2s");
    assert_string_equal(harness_sval(o, "op"), "<");
    ASSERT_NEAR(harness_num(o, "bound"), 2e9, 0);
    ASSERT_NEAR(harness_num(o, "value"), harness_num(s, "latency_ns.ttft.p99"), 0);
    ASSERT_NEAR(harness_num(json_array_get(ex, 5), "value"),
                harness_num(s, "throughput.goodput_per_s"), 0);
    json_decref(s);
    const char *rep_a[] = {"report", a, NULL};
    free(harness_run_expect(rep_a, 60, 0, NULL));
    harness_results_free(a);

    /* A TPOT under 1 ms: the sim's decode step alone is 4 ms. */
    /* With every percentile summary.json carries (p95, p99_9 too). */
    char *b = run_expect("ttft_p99<2s,tpot_p50<1ms,e2e_p95<3s,ttft_p99_9<2s", 7, &err);
    assert_int_equal(count_lines(err, "llmload: --expect: "), 1);
    assert_non_null(strstr(err, "llmload: --expect: tpot_p50 is "));
    assert_non_null(strstr(err, "ms, not < 1ms\n"));
    free(err);
    s = harness_summary_load(b);
    ex = json_object_get(s, "expect");
    assert_string_equal(harness_sval(json_array_get(ex, 0), "result"), "pass");
    o = json_array_get(ex, 1);
    assert_string_equal(harness_sval(o, "result"), "fail");
    double tpot = harness_num(o, "value");
    if (!(tpot >= 4e6))
        fail_msg("tpot_p50 %.0f ns: under the sim's 4 ms step", tpot);
    ASSERT_NEAR(tpot, harness_num(s, "latency_ns.tpot.p50"), 0);
    o = json_array_get(ex, 2);
    assert_string_equal(harness_sval(o, "result"), "pass");
    ASSERT_NEAR(harness_num(o, "value"), harness_num(s, "latency_ns.e2e.p95"), 0);
    o = json_array_get(ex, 3);
    assert_string_equal(harness_sval(o, "result"), "pass");
    ASSERT_NEAR(harness_num(o, "value"), harness_num(s, "latency_ns.ttft.p99_9"), 0);
    json_decref(s);
    /* `llmload report` judges it again from run.json's "expect" (the
     * parent rebuilt the page and exited 0): the same line, exit 7. */
    json_t *run = harness_json_load(b, "run.json");
    assert_string_equal(harness_sval(run, "expect"),
                        "ttft_p99<2s,tpot_p50<1ms,e2e_p95<3s,ttft_p99_9<2s");
    json_decref(run);
    const char *rep[] = {"report", b, NULL};
    free(harness_run_expect(rep, 60, 7, &err));
    assert_int_equal(count_lines(err, "llmload: --expect: "), 1);
    assert_non_null(strstr(err, "llmload: --expect: tpot_p50 is "));
    free(err);
    harness_results_free(b);

    HARNESS_EXPECT_USAGES(
        {{"run", "--rate", "1", "--expect", "ttft_p99<500"},
         "--expect: \"ttft_p99<500\": the value of ttft_p99"},
        {{"run", "--rate", "1", "--expect", "ttft_p98<1s"},
         "no metric \"ttft_p98\" (ttft_, tpot_, itl_, e2e_ with p50, p90, p95, p99 or p99_9;"},
        {{"run", "--rate", "1", "--expect", "goodput>=2/s"}, "goodput needs --slo"},
        {{"run", "--rate", "1", "--expect", "ttft_p99<1s,"}, "--expect: a trailing comma"},
        {{"run", "--rate", "1", "--expect", "error_rate=1%"}, "the operator must be one of"});
    harness_sim_teardown(NULL);
    harness_tmp_end();
}

/* INVALID wins: 2 ms of injected lateness on every send (the test hook
 * LLMLOAD_TEST_SEND_DELAY_NS) against the instant sim, whose TTFT is under
 * a millisecond, makes the run INVALID (test_guards.c); a failed
 * expectation beside it still prints its line, and the status is 1. */
static void test_run_expect_invalid_wins(void **state)
{
    harness_tmp_begin();
    const char *instant[] = {"--profile", "instant", NULL};
    harness_cur_sim_start(instant);
    setenv("LLMLOAD_TEST_SEND_DELAY_NS", "2000000", 1);
    const char *args[] = {"--rate",
                          "10",
                          "--arrival",
                          "constant",
                          "--duration",
                          "1s",
                          "--prompt-tokens",
                          "8",
                          "--output-tokens",
                          "2",
                          "--expect",
                          "ttft_p50<1us",
                          NULL};
    int st = -1;
    char *out = NULL, *err = NULL;
    char *d = harness_run_against_sim("run", NULL, args, 60, &st, &out, &err);
    unsetenv("LLMLOAD_TEST_SEND_DELAY_NS");
    json_t *s = harness_summary_load(d);
    if (!json_is_true(json_object_get(s, "invalid")))
        fail_msg("2 ms of lateness on the instant sim left the run valid:\n%s", out);
    if (st != 1)
        fail_msg("an INVALID run with a failed --expect exited %d, want 1\n%s", st, err);
    assert_non_null(strstr(err, "llmload: --expect: ttft_p50 is "));
    assert_string_equal(harness_sval(json_array_get(json_object_get(s, "expect"), 0), "result"),
                        "fail");
    json_decref(s);
    free(out);
    free(err);
    harness_results_free(d);
    harness_sim_teardown(NULL);
    harness_tmp_end();
}

/* sweep --expect: the small sim at half its capacity (the SLO met) and
 * at two and a half times it (missed): only the steps at or under the SLO
 * capacity count. A TPOT under 1 ms fails on each of them (exit 7, one
 * line per step that names it); the TTFT bound, the SLO's own, is checked
 * on the same steps only, which summary.json's findings and expect say. */
static void test_sweep_expect(void **state)
{
    char rates[200];
    static const double f[] = {0.5, 2.5};
    harness_sweep_rates(rates, sizeof rates, harness_small_sim_start(NULL), f, 2);
    const char *args[] = {"--rates",
                          rates,
                          "--step-duration",
                          "2s",
                          "--warmup",
                          "0.3s",
                          "--slo",
                          "ttft=300ms",
                          "--no-recovery",
                          "--lateness-tolerance",
                          "20%",
                          "--expect",
                          "tpot_p50<1ms,ttft_p99<=300ms,error_rate<1%",
                          HARNESS_SMALL_WORKLOAD,
                          NULL};
    int st = -1;
    char *out = NULL, *err = NULL;
    char *dir = harness_run_against_sim("sweep", NULL, args, 90, &st, &out, &err);
    harness_sim_teardown(NULL);
    json_t *sum = harness_json_load(dir, "summary.json");
    json_t *fd = json_object_get(sum, "findings");
    if (!json_is_number(json_object_get(fd, "slo_capacity_rps")))
        fail_msg("no SLO capacity at half the sim's capacity:\n%s", out);
    double cap = harness_num(fd, "slo_capacity_rps");
    if (st != 7)
        fail_msg("sweep --expect exited %d, want 7\nstdout:\n%s\nstderr:\n%s", st, out, err);
    /* The steps that count: load steps, not INVALID, at or under the
     * capacity; each failed tpot_p50 and had its line. */
    json_t *ex = json_object_get(sum, "expect");
    size_t want = 0, i;
    json_t *step;
    json_array_foreach(json_object_get(sum, "steps"), i, step)
    {
        if (strcmp(harness_sval(step, "kind"), "load") == 0 &&
            !json_is_true(json_object_get(step, "invalid")) &&
            harness_num(step, "offered_rps") <= cap * (1 + 1e-9))
            want++;
    }
    assert_true(want >= 1);
    assert_int_equal(json_array_size(ex), want);
    int lines = 0;
    for (const char *p = err; (p = strstr(p, "llmload: --expect: step ")) != NULL; p++)
        lines++;
    json_array_foreach(ex, i, step)
    {
        if (!(harness_num(step, "offered_rps") <= cap * (1 + 1e-9)))
            fail_msg("step %lld at %.3g req/s checked, over the capacity %.3g",
                     (long long)harness_ival(step, "step"), harness_num(step, "offered_rps"), cap);
        json_t *r = json_object_get(step, "results");
        assert_string_equal(harness_sval(json_array_get(r, 0), "result"), "fail");
        char line[160];
        snprintf(line, sizeof line, "llmload: --expect: step %lld (",
                 (long long)harness_ival(step, "step"));
        assert_non_null(strstr(err, line));
        /* A step that met the SLO has its TTFT p99 within it, and no error. */
        for (size_t k = 1; k < 3; k++) {
            json_t *o = json_array_get(r, k);
            const char *res = harness_sval(o, "result");
            int fails = strcmp(res, "fail") == 0;
            if (fails)
                fail_msg("step %lld: %s %s (value %s)", (long long)harness_ival(step, "step"),
                         harness_sval(o, "expect"), res,
                         json_dumps(json_object_get(o, "value"), JSON_ENCODE_ANY));
        }
    }
    assert_int_equal(lines, (int)want); /* one failed threshold a step: tpot_p50 */
    assert_non_null(strstr(err, "tpot_p50 is "));
    assert_non_null(strstr(err, ", not < 1ms"));
    /* `llmload report` re-checks it from run.json. */
    const char *rep[] = {"report", dir, NULL};
    int rst = -1;
    char *rout = NULL, *rerr = NULL;
    assert_int_equal(harness_run(rep, 60, &rst, &rout, &rerr), 0);
    assert_int_equal(rst, 7);
    assert_non_null(strstr(rerr, "llmload: --expect: step "));
    free(rout);
    free(rerr);
    json_decref(sum);
    free(out);
    free(err);
    harness_results_free(dir);

    HARNESS_EXPECT_USAGES(
        {{"sweep", "--rates", "1", "--expect", "ttft_p99<1s"}, "--expect: needs --slo"},
        {{"sweep", "--rates", "1", "--slo", "ttft=1s", "--expect", "ttft_p99<1"},
         "--expect: \"ttft_p99<1\""});
}

static int teardown(void **state)
{
    unsetenv("LLMLOAD_TEST_SEND_DELAY_NS");
    pid_t *none[] = {NULL};
    harness_cleanup(none);
    return 0;
}

/* An --expect latency a run without a stream has no value for (TTFT,
 * TPOT, ITL: --no-stream or openai-embeddings; the rule --slo keeps) was
 * taken, the whole run made, and then exit 7 "has no value": refused up
 * front, exit 2 with the --expect item named, before any request (nothing
 * listens on port 9: a connection error would mean it went on). */
static void test_expect_streamless(void **state)
{
    (void)state;
#define NOWHERE "--url", "http://127.0.0.1:9/v1"
    HARNESS_EXPECT_USAGES(
        {{"run", NOWHERE, "--rate", "1", "--no-stream", "--expect", "tpot_p99<50ms"},
         "--expect: \"tpot_p99<50ms\": tpot has no meaning with --no-stream (no stream: no "
         "first token before the last, no token pace); judge it by e2e_"},
        {{"run", NOWHERE, "--rate", "1", "--no-stream", "--expect", "e2e_p99<2s,itl_p50<5ms"},
         "--expect: \"itl_p50<5ms\": itl has no meaning with --no-stream"},
        {{"run", NOWHERE, "--rate", "1", "--no-stream", "--expect", "ttft_p90<1s"},
         "--expect: \"ttft_p90<1s\": ttft has no meaning with --no-stream"},
        {{"run", NOWHERE, "--rate", "1", "--api", "openai-embeddings", "--expect", "ttft_p99<1s"},
         "--expect: \"ttft_p99<1s\": ttft has no meaning for openai-embeddings"},
        {{"sweep", NOWHERE, "--rates", "1", "--no-stream", "--slo", "e2e=1s", "--expect",
          "tpot_p99<50ms"},
         "--expect: \"tpot_p99<50ms\": tpot has no meaning with --no-stream"});
#undef NOWHERE
}

HARNESS_MAIN(cmocka_unit_test_teardown(test_run_expect, teardown),
             cmocka_unit_test(test_expect_streamless),
             cmocka_unit_test_teardown(test_run_expect_invalid_wins, teardown),
             cmocka_unit_test_teardown(test_sweep_expect, teardown))
