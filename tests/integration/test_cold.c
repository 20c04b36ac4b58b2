/* Integration tests of warm and cold apart (issue 18): --cold-start N
 * labels a run's (or a step's) first N requests "cold" and summarises
 * them on their own; --cold-restart CMD makes every sweep step start
 * cold. Against `llmload sim --cold-first D`, whose first engine step
 * after start, or after POST /reset_prefix_cache (which also empties its
 * prefix cache), takes D longer: the ground truth of what is cold.
 *
 * Counts and the sim's deterministic penalty are what is checked; the one
 * time bound (a warm TTFT under the penalty) has a margin of hundreds of
 * milliseconds over the few milliseconds a warm request takes. The file
 * runs in about 10 s. */
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "harness.h"
#include "test.h"

#include "util/util.h"

/* The sim's cold penalty, and the same in ns. */
#define PENALTY "400ms"
#define PENALTY_NS (400 * LL_NS_PER_MS)

/* The records of dir: how many are cold, and whether each cold one is one
 * of the first n of its step (id < n) and no warm-up; the cold ones' and
 * the others' cached tokens (all of them, with -1 as 0) per step (< 8).
 * Fails unless want_cold are cold, each of them rightly. */
struct cold_recs {
    size_t n, cold, cold_wrong;
    int64_t cold_cached[8], warm_cached[8];
    size_t cold_per_step[8];
    int64_t max_cold_ttft_ns, max_warm_ttft_ns;
};

static void cold_recs_count(const char *dir, uint64_t n, size_t want_cold, struct cold_recs *c)
{
    memset(c, 0, sizeof *c);
    struct harness_recs *r = harness_requests_load(dir);
    c->n = r->n;
    for (size_t i = 0; i < r->n; i++) {
        json_t *o = r->items[i];
        int64_t step = harness_ival(o, "step");
        if (step < 0)
            step = 0;
        assert_true(step < 8);
        int cold = json_is_true(json_object_get(o, "cold"));
        json_t *cv = json_object_get(o, "cold");
        /* Written only when true. */
        assert_true(cv == NULL || json_is_true(cv));
        int64_t cached = harness_ival(o, "cached_tokens");
        if (cached < 0)
            cached = 0;
        int64_t ttft = -1;
        if (!harness_is_null(o, "first_ns"))
            ttft = harness_ival_req(o, "first_ns") - harness_ival_req(o, "sched_ns");
        if (cold) {
            c->cold++;
            c->cold_per_step[step]++;
            c->cold_cached[step] += cached;
            if ((uint64_t)harness_ival_req(o, "id") >= n ||
                json_is_true(json_object_get(o, "warmup")))
                c->cold_wrong++;
            if (ttft > c->max_cold_ttft_ns)
                c->max_cold_ttft_ns = ttft;
        } else {
            c->warm_cached[step] += cached;
            if (ttft > c->max_warm_ttft_ns)
                c->max_warm_ttft_ns = ttft;
        }
    }
    harness_recs_free(r);
    assert_int_equal(c->cold, want_cold);
    assert_int_equal(c->cold_wrong, 0);
}

/* A run of 10 sequential requests (one closed-loop user), the first 3
 * cold: the first pays the sim's penalty, and only the cold section
 * shows it; cold 3 + warm 7 = 10, and no warm-up among them. */
static void test_cold_run(void **state)
{
    const char *sim[] = {"--cold-first", PENALTY, NULL};
    harness_cur_sim_start(sim);
    /* The first request is scheduled in the warm-up: cold wins, it is
     * never warm-up (the others come after the penalty, past it). */
    const char *args[] = {"--users",      "1",    "--requests",      "10", "--cold-start",    "3",
                          "--warmup",     "50ms", "--prompt-tokens", "64", "--output-tokens", "8",
                          "--ignore-eos", NULL};
    char *dir = harness_run_client(NULL, args, HARNESS_RC_OK_OR_INVALID, NULL);
    harness_sim_teardown(NULL);

    json_t *sum = harness_summary_load(dir);
    json_t *cold = json_object_get(sum, "cold");
    assert_true(json_is_object(cold));
    assert_int_equal(harness_ival_req(cold, "requests"), 3);
    assert_int_equal(harness_ival_req(cold, "scheduled"), 3);
    assert_int_equal(harness_ival_req(cold, "ok"), 3);
    assert_int_equal(harness_ival_req(sum, "warmup_records"), 0);
    json_t *req = json_object_get(sum, "requests");
    assert_int_equal(harness_ival_req(req, "scheduled"), 7);
    assert_int_equal(harness_ival_req(req, "ok"), 7);
    /* The penalty is in the cold figures, never in the warm ones. */
    json_t *ct = json_object_get(cold, "ttft_ns");
    assert_true(harness_ival_req(ct, "max") >= (int64_t)PENALTY_NS);
    assert_true(harness_ival_req(json_object_get(cold, "e2e_ns"), "max") >= (int64_t)PENALTY_NS);
    json_t *wt = json_object_get(json_object_get(sum, "latency_ns"), "ttft");
    assert_int_equal(harness_ival_req(wt, "count"), 7);
    assert_true(harness_ival_req(wt, "max") < (int64_t)PENALTY_NS);
    json_decref(sum);

    struct cold_recs c;
    cold_recs_count(dir, 3, 3, &c);
    assert_int_equal(c.n, 10);
    assert_true(c.max_cold_ttft_ns >= (int64_t)PENALTY_NS);
    assert_true(c.max_warm_ttft_ns < (int64_t)PENALTY_NS);
    harness_results_free(dir);
}

/* The window's scheduled rate counts the cold requests scheduled in it,
 * as its send rate counts their sends: 20 req/s constant for 1 s, the
 * first 6 cold, a 120 ms warm-up over some of them. The parent divided
 * the warm ones alone ("scheduled 2.33 req/s, sent 4.00" at 5 req/s with
 * --cold-start 10), so the rate fell short by the cold share. */
static void test_cold_scheduled_rate(void **state)
{
    harness_cur_sim_start(NULL);
    const char *args[] = {"--rate",          "20", "--arrival", "constant", "--duration",      "1s",
                          "--cold-start",    "6",  "--warmup",  "120ms",    "--prompt-tokens", "32",
                          "--output-tokens", "4",  NULL};
    char *dir = harness_run_client(NULL, args, HARNESS_RC_OK_OR_INVALID, NULL);
    harness_sim_teardown(NULL);

    json_t *sum = harness_summary_load(dir);
    int64_t warmup_ns = harness_ival_req(sum, "warmup_ns");
    int64_t window_ns = harness_ival_req(sum, "window_ns");
    struct harness_recs *r = harness_requests_load(dir);
    size_t in_window = 0, cold_in_window = 0;
    for (size_t i = 0; i < r->n; i++) {
        int64_t sched = harness_ival_req(r->items[i], "sched_ns");
        if (sched < warmup_ns || sched > warmup_ns + window_ns)
            continue;
        in_window++;
        cold_in_window += json_is_true(json_object_get(r->items[i], "cold"));
    }
    harness_recs_free(r);
    /* Some cold requests fall in the window and some in the warm-up. */
    assert_true(cold_in_window > 0 && cold_in_window < 6);
    json_t *req = json_object_get(sum, "requests");
    assert_int_equal(harness_ival_req(req, "scheduled"), (int64_t)(in_window - cold_in_window));
    double rate = harness_num(sum, "throughput.scheduled_rate_per_s");
    ASSERT_NEAR(rate * (double)window_ns / 1e9, (double)in_window, 1e-6);
    json_decref(sum);
    harness_results_free(dir);
}

/* The sweep's flags for two steps of shared prefixes at 4 and 8 req/s:
 * every prompt begins with the one 128-token prefix (8 whole blocks). */
#define SWEEP_WORKLOAD                                                                             \
    "--rates", "4,8", "--step-duration", "1s", "--warmup", "0.5s", "--no-recovery",                \
        "--prompt-tokens", "160", "--output-tokens", "8", "--ignore-eos", "--arrival", "constant", \
        "--prefix-fraction", "1", "--prefix-tokens", "128", "--ttft-limit", "100s",                \
        "--max-error-rate", "100"

/* report.html's table of cold starts (fails the test when there is
 * none): where it starts, and its "</table>" in *end. */
static const char *cold_table(const char *html, const char **end)
{
    const char *t = strstr(html, "<table id=\"cold\">");
    assert_non_null(t);
    *end = strstr(t, "</table>");
    assert_non_null(*end);
    return t;
}

/* --cold-restart resets the sim's prefix cache (and its cold penalty)
 * before each step: each step's first request is cold, served no cached
 * token and pays the penalty, while the warm ones share the prefix. (Each
 * step draws its prompts from its own seed, so its prefix is new to the
 * cache either way: the penalty is what shows the reset ran;
 * test_cold_sim_reset_endpoint shows it empties the cache.) */
static void test_cold_sweep_restart(void **state)
{
    const char *sim[] = {"--cold-first", PENALTY, NULL};
    harness_cur_sim_start(sim);
    char cmd[256];
    snprintf(cmd, sizeof cmd, "curl -fsS -X POST %s/reset_prefix_cache", harness_cur_sim.url);
    const char *args[] = {SWEEP_WORKLOAD, "--cold-start", "1", "--cold-restart", cmd, NULL};
    char *dir = harness_sweep_ok(args, 60, NULL, NULL);

    json_t *sum = harness_summary_load(dir);
    json_t *steps = json_object_get(sum, "steps");
    assert_int_equal(json_array_size(steps), 2);
    for (size_t i = 0; i < 2; i++) {
        json_t *st = json_array_get(steps, i);
        json_t *cold = json_object_get(st, "cold");
        assert_true(json_is_object(cold));
        assert_int_equal(harness_ival_req(cold, "requests"), 1);
        assert_int_equal(harness_ival_req(cold, "ok"), 1);
        assert_int_equal(harness_ival_req(cold, "cached_tokens"), 0);
        assert_true(harness_ival_req(json_object_get(cold, "ttft_ns"), "max") >=
                    (int64_t)PENALTY_NS);
        json_t *wt = json_object_get(json_object_get(st, "latency_ns"), "ttft");
        assert_true(harness_ival_req(wt, "max") < (int64_t)PENALTY_NS);
    }
    json_decref(sum);

    json_t *facts = harness_jsonl_in(dir, "steps.jsonl");
    size_t loads = 0;
    for (size_t i = 0; i < json_array_size(facts); i++) {
        json_t *f = json_array_get(facts, i);
        if (strcmp(harness_sval(f, "kind"), "load") != 0)
            continue;
        loads++;
        assert_int_equal(harness_ival_req(f, "cold_start"), 1);
        assert_true(json_is_true(json_object_get(f, "cold_restart")));
        assert_int_equal(harness_ival_req(json_object_get(f, "cold"), "cached_tokens"), 0);
    }
    assert_int_equal(loads, 2);
    json_decref(facts);

    struct cold_recs c;
    cold_recs_count(dir, 1, 2, &c);
    for (size_t i = 0; i < 2; i++) {
        assert_int_equal(c.cold_per_step[i], 1);
        assert_int_equal(c.cold_cached[i], 0);
        assert_true(c.warm_cached[i] > 0);
    }
    /* `report` counts the cold figures again from the records, and the
     * page has its table: one row per step. */
    const char *files[] = {"summary.json", "report.html", NULL};
    free(harness_report_rebuilds(dir, files));
    char *html = harness_read_in(dir, "report.html");
    const char *end, *t = cold_table(html, &end);
    size_t rows = 0;
    for (const char *p = strstr(t, "<tr><td>"); p && p < end; p = strstr(p + 1, "<tr><td>"))
        rows++;
    assert_int_equal(rows, 2);
    free(html);
    harness_results_free(dir);
}

/* Without --cold-restart only the sweep's first step starts cold: the
 * second step's first request finds the prefix cached, and is warm. */
static void test_cold_sweep_first_step_only(void **state)
{
    const char *sim[] = {"--cold-first", PENALTY, NULL};
    harness_cur_sim_start(sim);
    const char *args[] = {SWEEP_WORKLOAD, "--cold-start", "2", NULL};
    char *dir = harness_sweep_ok(args, 60, NULL, NULL);
    json_t *sum = harness_summary_load(dir);
    json_t *steps = json_object_get(sum, "steps");
    assert_int_equal(json_array_size(steps), 2);
    json_t *cold = json_object_get(json_array_get(steps, 0), "cold");
    assert_int_equal(harness_ival_req(cold, "requests"), 2);
    assert_int_equal(harness_ival_req(cold, "completed"), 2);
    assert_null(json_object_get(json_array_get(steps, 1), "cold"));
    json_decref(sum);
    struct cold_recs c;
    cold_recs_count(dir, 2, 2, &c);
    assert_int_equal(c.cold_per_step[0], 2);
    /* Only step 0 has a cold start: its row alone. */
    char *html = harness_read_in(dir, "report.html");
    const char *end, *t = cold_table(html, &end);
    /* Steps named from 0, as the steps table and the terminal name them. */
    const char *row1 = strstr(t, "<tr><td>0</td>"), *row2 = strstr(t, "<tr><td>1</td>");
    assert_true(row1 && row1 < end);
    assert_true(!row2 || row2 > end);
    free(html);
    harness_results_free(dir);
}

/* A failing command fails the sweep (exit 3) with a message that names
 * it and its exit status; bad flags are usage errors. */
static void test_cold_errors(void **state)
{
    harness_cur_sim_start(NULL);
    const char *args[] = {SWEEP_WORKLOAD, "--cold-start", "1", "--cold-restart", "exit 7", NULL};
    int status = 0;
    char *out = NULL, *err = NULL;
    char *dir = harness_run_against_sim("sweep", NULL, args, 60, &status, &out, &err);
    harness_sim_teardown(NULL);
    assert_int_equal(status, 3);
    assert_non_null(strstr(err, "--cold-restart: \"exit 7\" failed with exit status 7"));
    free(out);
    free(err);
    harness_results_free(dir);

    HARNESS_EXPECT_USAGES(
        {{"run", "--url", "http://127.0.0.1:9/v1", "--rate", "1", "--cold-start", "0"},
         "--cold-start"},
        {{"run", "--url", "http://127.0.0.1:9/v1", "--rate", "1", "--requests", "4", "--cold-start",
          "4"},
         "--cold-start: 4 is not below --requests 4: no request would be warm"},
        {{"sweep", "--url", "http://127.0.0.1:9/v1", "--cold-restart", "true"},
         "--cold-restart: needs --cold-start"},
        {{"sweep", "--url", "http://127.0.0.1:9/v1", "--cold-start", "1", "--cold-restart-timeout",
          "5s"},
         "--cold-restart-timeout: needs --cold-restart"},
        {{"sim", "--cold-first", "soon"}, "--cold-first"});
}

/* One run of 4 sequential requests sharing one 128-token prefix, the
 * first cold; returns its summary's "cold" cached_tokens (and the cold
 * TTFT's max in *cold_ttft_max) and checks that the warm ones were served
 * the prefix. */
static int64_t cold_run_cached(int64_t *cold_ttft_max)
{
    const char *args[] = {"--users", "1", "--requests", "4", "--cold-start", "1", "--prompt-tokens",
                          "160", "--output-tokens", "8", "--ignore-eos", "--prefix-fraction", "1",
                          "--prefix-tokens", "128",
                          /* one text every run, so a second run finds the
                           * first's prefix unless the cache was reset */
                          "--prompt-salt", "3", NULL};
    char *dir = harness_run_client(NULL, args, HARNESS_RC_OK_OR_INVALID, NULL);
    json_t *sum = harness_summary_load(dir);
    json_t *cold = json_object_get(sum, "cold");
    int64_t cached = harness_ival_req(cold, "cached_tokens");
    *cold_ttft_max = harness_ival_req(json_object_get(cold, "ttft_ns"), "max");
    /* 3 warm requests, each served at least the 8 cached blocks of the
     * prefix. */
    assert_true(harness_ival_req(json_object_get(sum, "tokens"), "cached_tokens") >= 3 * 128);
    json_decref(sum);
    harness_results_free(dir);
    return cached;
}

/* The sim's reset endpoint: POST answers 200 (GET 405), and makes the
 * sim cold again. The same run twice finds the prefix cached the second
 * time, and fast; after POST /reset_prefix_cache, its first request is
 * served no cached token and pays the penalty again. */
static void test_cold_sim_reset_endpoint(void **state)
{
    const char *sim[] = {"--cold-first", PENALTY, NULL};
    harness_cur_sim_start(sim);
    int64_t ttft;
    assert_int_equal(cold_run_cached(&ttft), 0);
    assert_true(ttft >= (int64_t)PENALTY_NS);
    assert_true(cold_run_cached(&ttft) >= 128);
    assert_true(ttft < (int64_t)PENALTY_NS);

    static const char post[] = "POST /reset_prefix_cache HTTP/1.1\r\nHost: x\r\n"
                               "Content-Length: 0\r\nConnection: close\r\n\r\n";
    static const char get[] = "GET /reset_prefix_cache HTTP/1.1\r\nHost: x\r\n"
                              "Connection: close\r\n\r\n";
    char *resp = NULL;
    size_t len = 0;
    assert_int_equal(harness_http(harness_cur_sim.port, get, sizeof get - 1, &resp, &len, 5000), 0);
    assert_non_null(strstr(resp, "HTTP/1.1 405"));
    free(resp);
    assert_int_equal(harness_http(harness_cur_sim.port, post, sizeof post - 1, &resp, &len, 5000),
                     0);
    assert_non_null(strstr(resp, "HTTP/1.1 200"));
    free(resp);

    assert_int_equal(cold_run_cached(&ttft), 0);
    assert_true(ttft >= (int64_t)PENALTY_NS);
    harness_sim_teardown(NULL);
}

/* A replay's cold start is the trace's first N lines, whatever their
 * session ids (a trace's own, in no schedule order): ids 0 and 1 here,
 * though every line is of session 0. */
static void test_cold_replay(void **state)
{
    harness_cur_sim_start(NULL);
    char *tmp = harness_tmpdir();
    char trace[600], out[600], url[200];
    snprintf(trace, sizeof trace, "%s/trace.jsonl", tmp);
    snprintf(out, sizeof out, "%s/r", tmp);
    snprintf(url, sizeof url, "%s/v1", harness_cur_sim.url);
    harness_write_file(trace,
                       "{\"t\":0.0,\"prompt_tokens\":20,\"output_tokens\":2,\"session_id\":0}\n"
                       "{\"t\":0.05,\"prompt_tokens\":20,\"output_tokens\":2,\"session_id\":0}\n"
                       "{\"t\":0.1,\"prompt_tokens\":20,\"output_tokens\":2,\"session_id\":0}\n"
                       "{\"t\":0.15,\"prompt_tokens\":20,\"output_tokens\":2,\"session_id\":0}\n");
    const char *args[] = {"replay",  trace,          "--url",        url, "--out", out,
                          "--quiet", "--ignore-eos", "--cold-start", "2", NULL};
    free(harness_run_expect(args, 60, HARNESS_RC_OK_OR_INVALID, NULL));
    harness_sim_teardown(NULL);
    json_t *sum = harness_summary_load(out);
    assert_int_equal(harness_ival_req(json_object_get(sum, "cold"), "scheduled"), 2);
    assert_int_equal(harness_ival_req(json_object_get(sum, "requests"), "scheduled"), 2);
    json_decref(sum);
    struct cold_recs c;
    cold_recs_count(out, 2, 2, &c);
    assert_int_equal(c.n, 4);
    harness_rm_rf(tmp);
    free(tmp);
}

HARNESS_MAIN(cmocka_unit_test_teardown(test_cold_run, harness_sim_teardown),
             cmocka_unit_test_teardown(test_cold_scheduled_rate, harness_sim_teardown),
             cmocka_unit_test_teardown(test_cold_sweep_restart, harness_sim_teardown),
             cmocka_unit_test_teardown(test_cold_sweep_first_step_only, harness_sim_teardown),
             cmocka_unit_test_teardown(test_cold_errors, harness_sim_teardown),
             cmocka_unit_test_teardown(test_cold_sim_reset_endpoint, harness_sim_teardown),
             cmocka_unit_test_teardown(test_cold_replay, harness_sim_teardown))
