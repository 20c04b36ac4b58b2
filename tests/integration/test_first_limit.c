/* Integration tests of the sweep's first-limit finding (issue 18): the sim
 * set up so that one limit binds first by a wide margin, a two-step sweep
 * (a low rate nothing holds back, then one at about twice the capacity),
 * and the finding must name that limit, the step, and evidence that
 * matches the sim's configuration.
 *
 *   batch      4 sequences, a 22528-token KV cache: running 4/4, KV ~1%
 *   KV cache   64 sequences, a 320-token KV cache (4 requests of 80
 *              tokens): KV full, running 4 of 64
 *   prefill    64 sequences, 64 prefill tokens a step, 1024-token prompts:
 *              one request prefills at a time, the queue grows with 2 or
 *              fewer running
 *   admission  4 sequences and a queue of 2: 429s
 *   compute    no bound binds, each step costs 2 ms a sequence: the batch
 *              grows, not the queue, and TPOT with it
 *   no metrics the batch case with --no-metrics: the cause is unknown, the
 *              client saw TTFT fail and TPOT hold
 *
 * Every step is 1.5 s (+0.5 s warm-up) with constant arrivals, scrapes
 * every 200 ms; each test takes about 6 s. */
#include <jansson.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "harness.h"
#include "test.h"

/* 64-token prompts, 16 output tokens: the small sim's workload, about 12
 * req/s with 4 sequences and a 20 ms step. */
#define SHORT_WORKLOAD HARNESS_SMALL_WORKLOAD
#define STEPS                                                                                      \
    "--step-duration", "1.5s", "--warmup", "0.5s", "--no-recovery", "--ttft-limit", "100s",        \
        "--max-error-rate", "100"

/* The usual two-step sweep of these tests, the engine's sequences given. */
#define LIMIT_ARGS(seqs)                                                                           \
    "--rates", "3,24", STEPS, "--metrics-interval", "200ms", "--engine-limits", seqs,              \
        SHORT_WORKLOAD, NULL

/* One sweep's results: dir, sum its summary.json, fl its
 * findings.first_limit and e fl's evidence (both borrowed from sum), out
 * its stdout. */
struct limit_run {
    char *dir;
    json_t *sum, *fl, *e;
    char *out;
};

/* Run the sweep with args against harness_cur_sim into *lr (free with
 * limit_run_free). */
static void sweep_first_limit(const char *const *args, struct limit_run *lr)
{
    lr->dir = harness_sweep_ok(args, 90, &lr->out, NULL);
    lr->sum = harness_summary_load(lr->dir);
    lr->fl = json_object_get(json_object_get(lr->sum, "findings"), "first_limit");
    assert_true(json_is_object(lr->fl));
    lr->e = json_object_get(lr->fl, "evidence");
    print_message("first_limit: %s\n", harness_sval(lr->fl, "text"));
}

static void limit_run_free(struct limit_run *lr)
{
    free(lr->out);
    json_decref(lr->sum);
    harness_results_free(lr->dir);
}

/* The finding names kind at the second step (index 1, offered rate rps),
 * in the terminal's findings as in summary.json, and TTFT failed there
 * while TPOT held (queueing shows in TTFT; the sim's step time, hence
 * TPOT, does not grow when requests wait). */
static void check_named(json_t *fl, const char *out, const char *kind, const char *line_start,
                        double rps)
{
    assert_string_equal(harness_sval(fl, "kind"), kind);
    assert_true(json_is_true(json_object_get(fl, "reached")));
    assert_int_equal(harness_ival_req(fl, "step"), 1);
    ASSERT_NEAR(harness_num(fl, "offered_rps"), rps, 1e-9);
    assert_string_equal(harness_sval(fl, "latency_failed_first"), "ttft");
    ASSERT_NEAR(harness_num(fl, "ttft_failed_rps"), rps, 1e-9);
    assert_true(harness_is_null(fl, "tpot_failed_rps"));
    assert_non_null(strstr(out, line_start));
    assert_non_null(strstr(out, harness_sval(fl, "text")));
}

static void test_first_limit_batch(void **state)
{
    harness_small_sim_start(NULL);
    const char *args[] = {LIMIT_ARGS("seqs=4")};
    struct limit_run lr;
    sweep_first_limit(args, &lr);
    check_named(lr.fl, lr.out, "batch", "first limit: the batch (running 4/4 = max sequences", 24);
    ASSERT_NEAR(harness_num(lr.e, "running_max"), HARNESS_SMALL_SIM_SEQS, 1e-9);
    assert_int_equal(harness_ival_req(lr.e, "max_seqs"), HARNESS_SMALL_SIM_SEQS);
    assert_string_equal(harness_sval(lr.e, "max_seqs_source"), "engine_limits");
    /* The KV cache's size, from the sim's vllm:cache_config_info: 1408
     * blocks of 16 tokens; 4 requests of 80 tokens use about 1% of it. */
    ASSERT_NEAR(harness_num(lr.e, "kv_capacity_tokens"), 22528, 1e-9);
    assert_string_equal(harness_sval(lr.e, "kv_capacity_source"), "metrics");
    assert_true(harness_num(lr.e, "kv_usage_max") < 0.1);
    assert_true(harness_num(lr.e, "preemptions") == 0);
    /* 24 req/s against ~12: the queue grows ~12 a second; at 3 req/s
     * nothing waited. */
    ASSERT_IN_RANGE(harness_num(lr.e, "queue_before"), 0, 1);
    assert_true(harness_num(lr.e, "queue_max") > 8);
    assert_int_equal(harness_ival_req(lr.e, "rejected_429"), 0);
    /* The report: the finding under the knee, and rebuilt the same. */
    char *html = harness_read_in(lr.dir, "report.html");
    const char *knee = strstr(html, "<div class=\"card knee\">");
    assert_non_null(knee);
    const char *card_end = strstr(knee, "</div></div>");
    const char *named = strstr(knee, "first limit: batch at 24 req/s (step 1)");
    assert_true(named && named < card_end);
    free(html);
    const char *files[] = {"summary.json", "report.html", NULL};
    free(harness_report_rebuilds(lr.dir, files));
    limit_run_free(&lr);
}

/* No --engine-limits: the batch bound from the server's own /props
 * (llama.cpp's total_slots, which the sim answers with its
 * --max-num-seqs), kept in run.json's contract: the same finding. */
static void test_first_limit_batch_from_props(void **state)
{
    harness_small_sim_start(NULL);
    const char *args[] = {"--rates", "3,24",         STEPS, "--metrics-interval",
                          "200ms",   SHORT_WORKLOAD, NULL};
    struct limit_run lr;
    sweep_first_limit(args, &lr);
    check_named(lr.fl, lr.out, "batch", "first limit: the batch (running 4/4 = max sequences", 24);
    assert_int_equal(harness_ival_req(lr.e, "max_seqs"), HARNESS_SMALL_SIM_SEQS);
    assert_string_equal(harness_sval(lr.e, "max_seqs_source"), "props");
    /* A setting only when the flag gave it. */
    assert_true(json_is_null(json_object_get(
        json_object_get(json_object_get(lr.sum, "settings"), "engine_limits"), "seqs")));
    const char *files[] = {"summary.json", NULL};
    free(harness_report_rebuilds(lr.dir, files));
    limit_run_free(&lr);
}

static void test_first_limit_kv(void **state)
{
    /* 64 sequences, but the KV cache's 320 tokens (20 blocks, 5 a
     * request) hold 4 requests: it binds first, 16 times short of the
     * batch bound. */
    const char *sim[] = {"--max-num-seqs", "64", "--step-base", "20ms", "--kv-tokens", "320", NULL};
    harness_cur_sim_start(sim);
    const char *args[] = {LIMIT_ARGS("seqs=64")};
    struct limit_run lr;
    sweep_first_limit(args, &lr);
    check_named(lr.fl, lr.out, "kv_cache",
                "first limit: KV cache (at 24 req/s, step 1: KV 100% of 320", 24);
    ASSERT_NEAR(harness_num(lr.e, "kv_capacity_tokens"), 320, 1e-9);
    assert_true(harness_num(lr.e, "kv_usage_max") >= 0.95);
    ASSERT_IN_RANGE(harness_num(lr.e, "running_max"), 1, 4);
    assert_true(harness_num(lr.e, "queue_max") > 8);
    limit_run_free(&lr);
}

static void test_first_limit_prefill(void **state)
{
    const char *sim[] = {"--max-num-seqs",  "64", "--step-base", "20ms",
                         "--prefill-chunk", "64", NULL};
    harness_cur_sim_start(sim);
    /* A 1024-token prompt takes 16 steps of 64 prefill tokens (~0.33 s),
     * one request at a time: about 3 req/s. 12 req/s builds a queue of
     * ~9 a second while at most 2 run (one prefilling, one decoding). */
    const char *args[] = {"--rates",   "1,12",
                          STEPS,       "--metrics-interval",
                          "200ms",     "--engine-limits",
                          "seqs=64",   "--prompt-tokens",
                          "1024",      "--output-tokens",
                          "4",         "--ignore-eos",
                          "--arrival", "constant",
                          NULL};
    struct limit_run lr;
    sweep_first_limit(args, &lr);
    check_named(lr.fl, lr.out, "prefill", "first limit: prefill (the queue grew at 12 req/s", 12);
    ASSERT_IN_RANGE(harness_num(lr.e, "running_max"), 1, 3);
    assert_true(harness_num(lr.e, "kv_usage_max") < 0.2);
    assert_true(harness_num(lr.e, "preemptions") == 0);
    assert_true(harness_num(lr.e, "queue_max") > 6);
    assert_true(harness_num(lr.e, "queue_mean") >= 2);
    /* The engine prefills at most 64 tokens a ~21 ms step, ~3.1k/s; the
     * counter adds a whole prompt (1024) at a first token, so one span of
     * ~1.5 s reads that give or take ~700/s. */
    ASSERT_IN_RANGE(harness_num(lr.e, "prompt_tokens_per_s"), 1000, 5000);
    limit_run_free(&lr);
}

/* requests.jsonl's 429s of step 1's window (warm-up left out). */
static size_t window_429s(const char *dir)
{
    struct harness_recs *r = harness_requests_load(dir);
    size_t n = 0;
    for (size_t i = 0; i < r->n; i++) {
        json_t *o = r->items[i];
        if (harness_ival(o, "step") == 1 && !json_is_true(json_object_get(o, "warmup")) &&
            strcmp(harness_sval(o, "kind"), "http_429") == 0)
            n++;
    }
    harness_recs_free(r);
    return n;
}

static void test_first_limit_admission(void **state)
{
    const char *sim[] = {"--queue-limit", "2", NULL};
    harness_small_sim_start(sim);
    const char *args[] = {LIMIT_ARGS("seqs=4")};
    struct limit_run lr;
    sweep_first_limit(args, &lr);
    check_named(lr.fl, lr.out, "admission", "first policy: admission (", 24);
    assert_true(json_is_true(json_object_get(lr.fl, "policy")));
    /* Half of 24 req/s over 1.5 s is refused; the count is the records'. */
    int64_t rej = harness_ival_req(lr.e, "rejected_429");
    assert_true(rej > 8);
    assert_int_equal((size_t)rej, window_429s(lr.dir));
    ASSERT_IN_RANGE(harness_num(lr.e, "queue_max"), 1, 2);
    limit_run_free(&lr);
}

static void test_first_limit_compute(void **state)
{
    /* No bound that binds (1000 sequences, 8192 prefill tokens a step),
     * but each step costs 2 ms a sequence: a batch of n steps every
     * 5 + 2n ms, and with 16 tokens each about 31 req/s at most however
     * large the batch. At 80 req/s the batch (not the queue) grows by
     * ~50 a second and every step slows with it. */
    const char *sim[] = {"--max-num-seqs",  "1000", "--step-base", "5ms", "--step-per-seq", "2ms",
                         "--prefill-chunk", "8192", NULL};
    harness_cur_sim_start(sim);
    const char *args[] = {
        "--rates",   "5,80",         STEPS, "--metrics-interval", "200ms", "--engine-limits",
        "seqs=1000", SHORT_WORKLOAD, NULL};
    struct limit_run lr;
    sweep_first_limit(args, &lr);
    assert_string_equal(harness_sval(lr.fl, "kind"), "compute");
    assert_int_equal(harness_ival_req(lr.fl, "step"), 1);
    ASSERT_NEAR(harness_num(lr.fl, "offered_rps"), 80, 1e-9);
    assert_non_null(strstr(lr.out, "first limit: compute (at 80 req/s, step 1, not steady with "
                                   "no queue growing"));
    /* TPOT is the step time: it failed there. */
    ASSERT_NEAR(harness_num(lr.fl, "tpot_failed_rps"), 80, 1e-9);
    ASSERT_IN_RANGE(harness_num(lr.e, "running_max"), 40, 500);
    assert_true(harness_num(lr.e, "kv_usage_max") < 0.9);
    assert_true(harness_num(lr.e, "preemptions") == 0);
    assert_int_equal(harness_ival_req(lr.e, "rejected_429"), 0);
    limit_run_free(&lr);
}

static void test_first_limit_no_metrics(void **state)
{
    harness_small_sim_start(NULL);
    const char *args[] = {"--rates", "3,24", STEPS, "--no-metrics", SHORT_WORKLOAD, NULL};
    struct limit_run lr;
    sweep_first_limit(args, &lr);
    assert_string_equal(harness_sval(lr.fl, "kind"), "unknown");
    assert_false(json_is_true(json_object_get(lr.fl, "reached")));
    assert_false(json_is_true(json_object_get(lr.fl, "server_metrics")));
    assert_true(harness_is_null(lr.fl, "step"));
    assert_string_equal(harness_sval(lr.fl, "latency_failed_first"), "ttft");
    ASSERT_NEAR(harness_num(lr.fl, "ttft_failed_rps"), 24, 1e-9);
    assert_non_null(strstr(lr.out, "first limit: unknown (no server metrics); the client alone: "
                                   "TTFT failed alone from 24 req/s"));
    limit_run_free(&lr);
}

static void test_engine_limits_flag(void **state)
{
    HARNESS_EXPECT_USAGES(
        {{"sweep", "--rates", "2", "--engine-limits", "slots=4"},
         "--engine-limits: unknown key \"slots\""},
        {{"sweep", "--rates", "2", "--engine-limits", "seqs=0"}, "--engine-limits: seqs=\"0\""},
        {{"sweep", "--rates", "2", "--engine-limits", "kv_tokens=1e3"},
         "--engine-limits: kv_tokens=\"1e3\""},
        {{"sweep", "--rates", "2", "--engine-limits", "seqs"},
         "--engine-limits: \"seqs\" is not KEY=N"},
        {{"sweep", "--rates", "2", "--engine-limits", "seqs=4,"},
         "--engine-limits: empty item in \"seqs=4,\""},
        {{"sweep", "--rates", "2", "--engine-limits", ",kv_tokens=9"},
         "--engine-limits: empty item"},
        /* blanks around an item, its key and its value are read past (as
         * --slo's list): the second " seqs " is seqs, not an unknown key */
        {{"sweep", "--rates", "2", "--engine-limits", "seqs=4, seqs = 5"},
         "--engine-limits: seqs given twice"});
}

HARNESS_MAIN(cmocka_unit_test_teardown(test_first_limit_batch, harness_sim_teardown),
             cmocka_unit_test_teardown(test_first_limit_batch_from_props, harness_sim_teardown),
             cmocka_unit_test_teardown(test_first_limit_kv, harness_sim_teardown),
             cmocka_unit_test_teardown(test_first_limit_prefill, harness_sim_teardown),
             cmocka_unit_test_teardown(test_first_limit_admission, harness_sim_teardown),
             cmocka_unit_test_teardown(test_first_limit_compute, harness_sim_teardown),
             cmocka_unit_test_teardown(test_first_limit_no_metrics, harness_sim_teardown),
             cmocka_unit_test(test_engine_limits_flag))
