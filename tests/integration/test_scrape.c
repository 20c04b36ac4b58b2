/* Integration tests of server-metrics scraping and --expose: `llmload run`
 * against `llmload sim`, whose /metrics uses vLLM's names.
 *
 * The sim is made small and exact: 4 sequences in the batch, 10 ms steps
 * whatever the work, 8-token prompts and 20 output tokens (ignore_eos), so
 * a request is served in about 21 steps (210 ms) and the capacity is about
 * 4 / 0.21 s = 19 requests/s. Tolerances are stated beside each check and
 * are loose enough for a shared 2-core machine. */
#include <arpa/inet.h>
#include <jansson.h>
#include <netinet/in.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "harness.h"
#include "test.h"
#include "util/util.h"

/* The background client of the --expose test, killed if a check fails. */
static pid_t cur_client;

static int sim_teardown(void **state)
{
    harness_kill_reap(&cur_client);
    harness_sim_teardown(NULL);
    return 0;
}

#define SIM_SMALL                                                                              \
    "--max-num-seqs", "4", "--step-base", "10ms", "--step-per-prefill-token", "0",             \
        "--step-per-seq", "0"
#define WORK "--prompt-tokens", "8", "--output-tokens", "20", "--ignore-eos"

static void sim_start_small(void)
{
    const char *sargs[] = {SIM_SMALL, NULL};
    harness_cur_sim_start(sargs);
}

/* Lines of server_metrics.jsonl: how many, how many ok. Every line must
 * parse and carry an integer t_ns. */
static void count_lines(const char *dir, size_t *lines, size_t *ok)
{
    char path[700];
    snprintf(path, sizeof path, "%s/server_metrics.jsonl", dir);
    json_t *all = harness_jsonl_load(path);
    *lines = json_array_size(all);
    *ok = 0;
    for (size_t i = 0; i < *lines; i++) {
        json_t *j = json_array_get(all, i);
        assert_true(json_is_integer(json_object_get(j, "t_ns")));
        *ok += json_is_true(json_object_get(j, "ok"));
    }
    json_decref(all);
}

/* On the small sim: WORK at rate per second (constant arrivals) for
 * duration, scraped every 200 ms. Returns summary.json (caller decrefs);
 * *dir gets the results dir (caller releases it with
 * harness_results_free). */
static json_t *scraped_run(const char *rate, const char *duration, char **dir)
{
    sim_start_small();
    const char *args[] = {"--rate", rate, "--arrival", "constant", "--duration", duration,
                          "--metrics-interval", "200ms", WORK, NULL};
    *dir = harness_run_client(NULL, args, HARNESS_RC_OK_OR_INVALID, NULL);
    return harness_json_load(*dir, "summary.json");
}

/* Above capacity (40/s against ~19/s) the queue must build up; the server
 * finishes every request, so its generation-token count over the run is
 * the client's (20 per request). */
static void test_overload_queue_rises(void **state)
{
    char *dir;
    json_t *s = scraped_run("40", "2s", &dir);
    assert_string_equal(json_string_value(json_object_get(json_object_get(s, "server"), "engine")),
                        "vllm");
    /* 80 arrivals in 2 s, 19 served per second: by the end of offering
     * some 40 wait. Demand at least 10 at the peak and 2 on average. */
    ASSERT_IN_RANGE(harness_num(s, "server.waiting.max"), 10, 80);
    ASSERT_IN_RANGE(harness_num(s, "server.waiting.mean"), 2, 80);
    ASSERT_NEAR(harness_num(s, "server.running.max"), 4, 0);
    ASSERT_NEAR(harness_num(s, "server.generation_tokens.delta"), 80 * 20, 0);
    ASSERT_NEAR(harness_num(s, "server.generation_tokens.client"), 80 * 20, 0);
    ASSERT_NEAR(harness_num(s, "server.request_success.delta"), 80, 0);
    assert_int_equal((int)harness_num(s, "server.failed"), 0);
    size_t lines, ok;
    count_lines(dir, &lines, &ok);
    assert_true(lines >= 10); /* >= 6 s at 200 ms */
    assert_int_equal(ok, lines);
    ASSERT_NEAR(harness_num(s, "server.scrapes"), (double)lines, 0);
    json_decref(s);
    harness_results_free(dir);
}

/* Well below capacity (4/s) nothing waits, tokens match, and the server's
 * TTFT p50 (from its histogram's delta) agrees with the client's TTFT
 * from the send time to within the bucket that holds it. */
static void test_low_rate_agrees(void **state)
{
    char *dir;
    json_t *s = scraped_run("4", "3s", &dir);
    /* A request may wait for the next step boundary (10 ms) before it
     * joins the batch: a scrape at that instant sees 1. */
    ASSERT_IN_RANGE(harness_num(s, "server.waiting.max"), 0, 1);
    ASSERT_IN_RANGE(harness_num(s, "server.waiting.mean"), 0, 0.2);
    ASSERT_IN_RANGE(harness_num(s, "server.running.max"), 1, 4);
    double gen = harness_num(s, "server.generation_tokens.delta");
    double client = harness_num(s, "server.generation_tokens.client");
    ASSERT_NEAR(client, 12 * 20, 0);
    ASSERT_REL(gen, client, 0.03);
    ASSERT_NEAR(harness_num(s, "server.prompt_tokens.delta"),
                harness_num(s, "server.prompt_tokens.client"), 0);
    ASSERT_NEAR(harness_num(s, "server.ttft.count"), 12, 0);
    /* First token after one 10 ms step (plus up to one step of waiting):
     * vLLM's buckets there are (0.01, 0.02]; the client, who also counts
     * the loopback and its own stack, must land in the same bucket or
     * within 10 ms above it. */
    double lo = json_number_value(json_array_get(
        json_object_get(json_object_get(json_object_get(s, "server"), "ttft"), "p50_bucket_s"), 0));
    double hi = json_number_value(json_array_get(
        json_object_get(json_object_get(json_object_get(s, "server"), "ttft"), "p50_bucket_s"), 1));
    double server_p50 = harness_num(s, "server.ttft.p50_s");
    double client_p50 = harness_num(s, "server.ttft.client_from_sent_p50_s");
    ASSERT_IN_RANGE(server_p50, lo, hi);
    assert_true(hi - lo <= 0.05);
    ASSERT_IN_RANGE(client_p50, lo, hi + 0.01);
    json_decref(s);
    harness_results_free(dir);
}

/* One run with prefix sharing against the small sim started with extra
 * (NULL-terminated, may be empty): 24 requests of 64 tokens, half of them
 * beginning with one of two 32-token prefixes (two KV blocks, so later
 * requests of a group find them cached). Checks that the server's prompt
 * counter equals the client's like-for-like figure exactly, whichever way
 * the engine counts, and returns summary.json (caller decrefs). */
static json_t *prefix_run_joined(const char *const *extra, const char *engine, int less_cached)
{
    struct harness_argv sargs = {.n = 0};
    harness_argv_add(&sargs, (const char *const[]){SIM_SMALL, NULL});
    harness_argv_add(&sargs, extra);
    harness_cur_sim_start(sargs.v);
    const char *args[] = {"--rate",
                          "8",
                          "--arrival",
                          "constant",
                          "--duration",
                          "3s",
                          "--metrics-interval",
                          "200ms",
                          "--prompt-tokens",
                          "64",
                          "--output-tokens",
                          "8",
                          "--ignore-eos",
                          "--prefix-fraction",
                          "0.5",
                          "--prefix-groups",
                          "2",
                          "--prefix-tokens",
                          "32",
                          "--seed",
                          "5",
                          NULL};
    char *out = NULL, *err = NULL;
    char *dir = harness_run_sim_verdict("run", args, 60, &out, &err);
    json_t *s = harness_json_load(dir, "summary.json");
    assert_string_equal(json_string_value(json_object_get(json_object_get(s, "server"), "engine")),
                        engine);
    double prompt = harness_num(s, "tokens.prompt_tokens");
    double cached = harness_num(s, "tokens.cached_tokens");
    double server = harness_num(s, "server.prompt_tokens.delta");
    double client = harness_num(s, "server.prompt_tokens.client");
    print_message("%s: prompt %.0f, cached %.0f; server %.0f, client %.0f\n", engine, prompt,
                  cached, server, client);
    ASSERT_NEAR(prompt, 24 * 64, 0);
    assert_true(cached >= 64); /* the premise: some prefix blocks were hits */
    ASSERT_NEAR(client, less_cached ? prompt - cached : prompt, 0);
    ASSERT_NEAR(server, client, 0);
    json_t *pt = json_object_get(json_object_get(s, "server"), "prompt_tokens");
    assert_int_equal(json_is_true(json_object_get(pt, "excludes_cached")), less_cached);
    if (less_cached)
        ASSERT_NEAR(harness_num(s, "server.prompt_tokens.client_cached"), cached, 0);
    /* The summary's lines name whose each count is. */
    char want[200];
    snprintf(want, sizeof want, "%s server %.0f, client sent%s %.0f (server/client 1.000)\n",
             less_cached ? "prompt tokens (less cached)" : "prompt tokens       ", server,
             less_cached ? " less cached" : "", client);
    if (!strstr(out, want))
        fail_msg("no \"%s\" in the run's output:\n%s", want, out);
    snprintf(want, sizeof want, "generation tokens    server %.0f, client received %.0f",
             harness_num(s, "server.generation_tokens.delta"),
             harness_num(s, "server.generation_tokens.client"));
    if (!strstr(out, want))
        fail_msg("no \"%s\" in the run's output:\n%s", want, out);
    free(out);
    free(err);
    harness_results_free(dir);
    harness_sim_teardown(NULL);
    return s;
}

/* With --warmup the server serves the warm-up's requests too: the client's
 * side of its counters counts them (against llama.cpp it read about 2x:
 * 1320 generated against the window's 630). 8/s for 3 s, the first 1 s
 * warm-up: every one of the 24 requests, 20 tokens each, on both sides. */
static void test_warmup_counted(void **state)
{
    (void)state;
    sim_start_small();
    const char *args[] = {"--rate",   "8",  "--arrival",          "constant", "--duration", "3s",
                          "--warmup", "1s", "--metrics-interval", "200ms",    WORK,         NULL};
    char *dir = harness_run_client(NULL, args, HARNESS_RC_OK_OR_INVALID, NULL);
    json_t *s = harness_json_load(dir, "summary.json");
    ASSERT_NEAR(harness_num(s, "server.generation_tokens.client"), 24 * 20, 0);
    ASSERT_NEAR(harness_num(s, "server.generation_tokens.delta"), 24 * 20, 0);
    ASSERT_NEAR(harness_num(s, "server.prompt_tokens.client"),
                harness_num(s, "server.prompt_tokens.delta"), 0);
    ASSERT_NEAR(harness_num(s, "server.request_success.client"), 24, 0);
    ASSERT_NEAR(harness_num(s, "server.request_success.delta"), 24, 0);
    json_decref(s);
    harness_results_free(dir);
}

/* The server's prompt counter beside the client's, with cached tokens:
 * vLLM's names count every prompt token, llama.cpp's (the sim's
 * --prompt-counter-excludes-cached) leave the cached ones out, and the
 * join compares like with like either way (server/client 1.00). */
static void test_prompt_counter_and_cache(void **state)
{
    const char *none[] = {NULL};
    json_decref(prefix_run_joined(none, "vllm", 0));
    const char *excl[] = {"--prompt-counter-excludes-cached", NULL};
    json_decref(prefix_run_joined(excl, "llamacpp", 1));
}

/* A port on 127.0.0.1 that refuses connections (bound, not listening). */
static int closed_port(int *hold)
{
    int port;
    *hold = harness_bind_local(-1, &port);
    return port;
}

/* A metrics URL that fails: a warning, counted gaps, and the run still
 * succeeds with all its requests. --no-metrics: no file, no "server". */
static void test_failing_url_is_a_gap(void **state)
{
    sim_start_small();
    int hold;
    char murl[100];
    snprintf(murl, sizeof murl, "http://127.0.0.1:%d/metrics", closed_port(&hold));
    const char *args[] = {"--rate", "4", "--arrival", "constant", "--duration", "1s",
                          "--metrics-url", murl, "--metrics-interval", "200ms", WORK, NULL};
    char *err = NULL;
    char *dir = harness_run_client(NULL, args, HARNESS_RC_OK_OR_INVALID, &err);
    assert_non_null(strstr(err, "warning"));
    assert_non_null(strstr(err, murl));
    free(err);
    json_t *s = harness_json_load(dir, "summary.json");
    double scrapes = harness_num(s, "server.scrapes");
    assert_true(scrapes >= 3);
    ASSERT_NEAR(harness_num(s, "server.failed"), scrapes, 0);
    assert_null(json_object_get(json_object_get(s, "server"), "engine"));
    size_t lines, ok;
    count_lines(dir, &lines, &ok);
    ASSERT_NEAR((double)lines, scrapes, 0);
    assert_int_equal(ok, 0);
    json_decref(s);
    harness_results_free(dir);
    close(hold);

    const char *args2[] = {"--rate",       "4",  "--arrival", "constant", "--duration", "1s",
                           "--no-metrics", WORK, NULL};
    dir = harness_run_client(NULL, args2, HARNESS_RC_OK_OR_INVALID, NULL);
    s = harness_json_load(dir, "summary.json");
    assert_null(json_object_get(s, "server"));
    char path[700];
    snprintf(path, sizeof path, "%s/server_metrics.jsonl", dir);
    assert_int_equal(access(path, F_OK), -1);
    json_decref(s);
    harness_results_free(dir);
}

static char *scrape_expose(int port)
{
    static const char req[] = "GET /metrics HTTP/1.1\r\nHost: x\r\n\r\n";
    char *resp = NULL;
    size_t len = 0;
    if (harness_http(port, req, sizeof req - 1, &resp, &len, 2000) != 0)
        return NULL;
    return resp;
}

/* A run in the background on the small sim: `llmload run --url <sim>/v1
 * --out <tmp>/r --quiet <args...>` (args NULL-terminated), its pid in
 * cur_client (the teardown kills it if a check fails), its stdout and
 * stderr in files beside r. */
struct bg_run {
    char *tmp; /* harness_tmpdir's; the test removes and frees it */
    char out[600], errp[600];
};

static void bg_run_start(struct bg_run *r, const char *const *args)
{
    sim_start_small();
    r->tmp = harness_tmpdir();
    char outp[600], url[200];
    snprintf(r->out, sizeof r->out, "%s/r", r->tmp);
    snprintf(outp, sizeof outp, "%s/r.stdout", r->tmp);
    snprintf(r->errp, sizeof r->errp, "%s/r.stderr", r->tmp);
    snprintf(url, sizeof url, "%s/v1", harness_cur_sim.url);
    const char *run[] = {"run", "--url", url, "--out", r->out, "--quiet", NULL};
    struct harness_argv a = {0};
    harness_argv_add(&a, run);
    harness_argv_add(&a, args);
    cur_client = harness_spawn(a.v, outp, r->errp, -1, NULL, NULL);
}

/* --expose, scraped by this test while the run is in progress: the
 * counters rise between two scrapes two seconds apart. */
static void test_expose_while_running(void **state)
{
    const char *args[] = {"--rate", "10",       "--arrival",   "constant", "--duration",
                          "4s",     "--expose", "127.0.0.1:0", WORK,       NULL};
    struct bg_run r;
    bg_run_start(&r, args);
    pid_t pid = cur_client;
    /* Port 0 and the port the run says it listens on: a port picked
     * free beforehand (harness_free_port) could be taken by another
     * process before the run binds it. */
    int port = harness_expose_announced_port(r.errp);
    char addr[64];
    snprintf(addr, sizeof addr, "127.0.0.1:%d", port);
    char *first = NULL;
    for (int i = 0; i < 100 && !first; i++) {
        first = scrape_expose(port);
        if (first && !strstr(first, "200 OK")) {
            free(first);
            first = NULL;
        }
        if (!first)
            harness_sleep_ms(50);
    }
    if (!first) {
        kill(pid, SIGKILL);
        waitpid(pid, NULL, 0);
        fail_msg("--expose %s never answered", addr);
    }
    harness_sleep_ms(2000);
    char *second = scrape_expose(port);
    assert_non_null(second);
    double sent1 = harness_page_value(first, "llmload_requests_sent_total");
    double sent2 = harness_page_value(second, "llmload_requests_sent_total");
    /* 10/s, evenly spaced: about 20 more two seconds later (the page is
     * at most one 1 s update old, so at least 10); demand at least 5. */
    if (!(sent2 >= sent1 + 5))
        fail_msg("sent %g then %g; pages:\n%s\n----\n%s", sent1, sent2, first, second);
    assert_true(harness_page_value(second, "llmload_output_tokens_total") >
                harness_page_value(first, "llmload_output_tokens_total"));
    ASSERT_NEAR(harness_page_value(second, "llmload_offered_rate"), 10, 0);
    ASSERT_IN_RANGE(harness_page_value(second, "llmload_achieved_rate"), 5, 15);
    assert_non_null(strstr(second, "llmload_requests_completed_total{kind=\"ok\"} "));
    assert_non_null(strstr(second, "llmload_ttft_seconds{quantile=\"0.5\"} "));
    ASSERT_NEAR(harness_page_value(second, "llmload_run_finished"), 0, 0);
    ASSERT_IN_RANGE(harness_page_value(second, "llmload_run_elapsed_seconds"), 0.5, 3.5);
    free(first);
    free(second);

    int status = -1;
    for (int i = 0; i < 200; i++) {
        pid_t w = waitpid(pid, &status, WNOHANG);
        if (w == pid)
            break;
        status = -1;
        harness_sleep_ms(50);
    }
    if (status == -1) {
        kill(pid, SIGKILL);
        waitpid(pid, NULL, 0);
        fail_msg("llmload run did not finish");
    }
    cur_client = 0;
    assert_true(WIFEXITED(status));
    assert_true(WEXITSTATUS(status) == 0 || WEXITSTATUS(status) == 1);
    harness_rm_rf(r.tmp);
    free(r.tmp);
}

/* run.json's outcome.exit_status: the run's own exit status, written
 * with every result file before any linger. */
static int outcome_exit_status(const char *dir)
{
    json_t *run = harness_json_load(dir, "run.json");
    int code = (int)harness_num(run, "outcome.exit_status");
    json_decref(run);
    return code;
}

/* --expose-linger: once every result file is written (summary.json and
 * report.html exist when it says so), the final page stays up:
 * llmload_run_finished 1 and each counter at the run's total, which is
 * requests.jsonl's line count with the warm-up's requests in it. Ctrl-C
 * then ends the linger at once (it was 60 s), with the run's own exit
 * status, and leaves run.json as the run wrote it. */
static void test_expose_linger_final_page(void **state)
{
    const char *args[] = {
        "--rate", "10", "--arrival", "constant",    "--duration",      "1.5s", "--warmup",
        "500ms",  WORK, "--expose",  "127.0.0.1:0", "--expose-linger", "60s",  NULL};
    struct bg_run r;
    bg_run_start(&r, args);
    const char *out = r.out;
    char path[700];
    int port = harness_expose_announced_port(r.errp);
    free(harness_wait_text(r.errp, "serving the final /metrics", 60000));
    static const char *const files[] = {"summary.json", "report.html", "run.json"};
    for (size_t i = 0; i < LL_ARRAY_LEN(files); i++) {
        snprintf(path, sizeof path, "%s/%s", out, files[i]);
        if (access(path, F_OK) != 0)
            fail_msg("%s not written before the linger", files[i]);
    }
    char *page = scrape_expose(port);
    assert_non_null(page);
    assert_non_null(strstr(page, "200 OK"));
    json_t *recs = harness_jsonl_in(out, "requests.jsonl");
    double n = (double)json_array_size(recs);
    json_decref(recs);
    json_t *s = harness_json_load(out, "summary.json");
    /* 10/s, evenly spaced, for 1.5 s: 15 records (one either way for an
     * arrival on a boundary), the warm-up's 5 among them, which the
     * window's count leaves out. */
    ASSERT_NEAR(n, 15, 1);
    assert_true(harness_num(s, "requests.scheduled") < n);
    json_decref(s);
    ASSERT_NEAR(harness_page_value(page, "llmload_run_finished"), 1, 0);
    ASSERT_NEAR(harness_page_value(page, "llmload_requests_scheduled_total"), n, 0);
    ASSERT_NEAR(harness_page_value(page, "llmload_requests_sent_total"), n, 0);
    ASSERT_NEAR(harness_page_value(page, "llmload_requests_completed_total{kind=\"ok\"}"), n, 0);
    ASSERT_NEAR(harness_page_value(page, "llmload_output_tokens_total"), n * 20, 0);
    ASSERT_NEAR(harness_page_value(page, "llmload_requests_in_flight"), 0, 0);
    free(page);

    int want = outcome_exit_status(out);
    assert_true(want == 0 || want == 1);
    assert_int_equal(kill(cur_client, SIGINT), 0);
    uint64_t t0 = ll_now_ns();
    int status = harness_reap(cur_client, 10000);
    double waited_s = (double)(ll_now_ns() - t0) / 1e9;
    cur_client = 0;
    assert_int_equal(status, want);
    if (waited_s > 3)
        fail_msg("the linger took %.1f s to end after SIGINT", waited_s);
    assert_int_equal(outcome_exit_status(out), want);
    char *err = harness_read_file(r.errp, NULL);
    const char *line = strstr(err, "serving the final /metrics");
    assert_null(strstr(line + 1, "serving the final /metrics"));
    assert_null(strstr(err, "interrupt"));
    free(err);
    harness_rm_rf(r.tmp);
    free(r.tmp);
}

/* A linger that runs out ends the process by itself, with the run's exit
 * status, no sooner than the load and the linger together (0.5 s + 1 s). */
static void test_expose_linger_expires(void **state)
{
    sim_start_small();
    const char *args[] = {"--rate",          "10",    "--arrival", "constant",
                          "--duration",      "500ms", "--expose",  "127.0.0.1:0",
                          "--expose-linger", "1s",    WORK,        NULL};
    int status = -1;
    char *o = NULL, *e = NULL;
    uint64_t t0 = ll_now_ns();
    char *dir = harness_run_against_sim("run", NULL, args, 60, &status, &o, &e);
    double took_s = (double)(ll_now_ns() - t0) / 1e9;
    if (!strstr(e, "llmload: results written; serving the final /metrics for 1"))
        fail_msg("no linger line; exit %d, stderr:\n%s", status, e);
    assert_int_equal(status, outcome_exit_status(dir));
    assert_true(status == 0 || status == 1);
    assert_true(took_s >= 1.5);
    free(o);
    free(e);
    harness_results_free(dir);
}

/* --expose-linger goes with --expose, and takes a duration. */
static void test_expose_linger_usage(void **state)
{
    HARNESS_EXPECT_USAGES(
        {{"run", "--rate", "1", "--expose-linger", "30s"}, "--expose-linger: goes with --expose"},
        {{"run", "--rate", "1", "--expose", "127.0.0.1:0", "--expose-linger", "soon"},
         "--expose-linger: expected a duration"},
        {{"run", "--rate", "1", "--expose", "127.0.0.1:0", "--expose-linger", "-1s"},
         "--expose-linger: expected a duration"});
}

HARNESS_MAIN(cmocka_unit_test_teardown(test_overload_queue_rises, sim_teardown),
             cmocka_unit_test_teardown(test_low_rate_agrees, sim_teardown),
             cmocka_unit_test_teardown(test_warmup_counted, sim_teardown),
             cmocka_unit_test_teardown(test_prompt_counter_and_cache, sim_teardown),
             cmocka_unit_test_teardown(test_failing_url_is_a_gap, sim_teardown),
             cmocka_unit_test_teardown(test_expose_while_running, sim_teardown),
             cmocka_unit_test_teardown(test_expose_linger_final_page, sim_teardown),
             cmocka_unit_test_teardown(test_expose_linger_expires, sim_teardown),
             cmocka_unit_test(test_expose_linger_usage))
