/* Integration tests of the declared contract (docs/run.md, "What was
 * measured"): --tag KEY=VALUE in run.json and the report's header, and
 * run.json's "contract": what `llmload sim` says about itself at /version
 * (as vLLM) and /props (as llama.cpp), and the sampling parameters sent. */
#include <jansson.h>
#include <stdlib.h>
#include <string.h>

#include "harness.h"
#include "test.h"

#include "util/util.h"

/* run.json's tags and contract after a short run against the sim started
 * with --max-num-seqs 3 --context-tokens 2048: the sim's own answers,
 * trimmed to the kept fields, and the sampling flags as given. */
static void test_run_contract(void **state)
{
    const char *sim[] = {"--max-num-seqs", "3", "--context-tokens", "2048", NULL};
    const char *fixed[] = {"--no-metrics", NULL};
    const char *args[] = {"--rate",          "10",    "--duration",   "0.5s",
                          "--output-tokens", "8",     "--ignore-eos", "--tag",
                          "engine=sim",      "--tag", "gpu.count=0",  "--tag",
                          "note=a b=c",      NULL};
    char *dir = harness_run_on_sim(sim, fixed, args);
    json_t *run = harness_json_load(dir, "run.json");
    json_t *tags = json_object_get(run, "tags");
    assert_int_equal(json_object_size(tags), 3);
    assert_string_equal(harness_sval(tags, "engine"), "sim");
    assert_string_equal(harness_sval(tags, "gpu.count"), "0");
    assert_string_equal(harness_sval(tags, "note"), "a b=c");

    json_t *srv = json_object_get(json_object_get(run, "contract"), "server");
    assert_non_null(srv);
    assert_non_null(strstr(harness_sval(srv, "root"), "http://127.0.0.1:"));
    assert_null(strstr(harness_sval(srv, "root"), "/v1"));
    assert_true(strncmp(harness_sval(srv, "header"), "llmload-sim/", 12) == 0);
    json_t *ver = json_object_get(srv, "version");
    assert_true(strncmp(harness_sval(ver, "version"), "llmload-sim ", 12) == 0);
    json_t *props = json_object_get(srv, "props");
    assert_true(strncmp(harness_sval(props, "build_info"), "llmload-sim ", 12) == 0);
    assert_string_equal(harness_sval(props, "model_path"), "llmload-sim");
    assert_int_equal(harness_ival_req(props, "total_slots"), 3);
    assert_int_equal(harness_ival_req(props, "n_ctx"), 2048);
    assert_null(json_object_get(props, "chat_template"));
    assert_null(json_object_get(props, "default_generation_settings"));
    /* the sim serves neither SGLang's nor TGI's */
    assert_null(json_object_get(srv, "get_server_info"));
    assert_null(json_object_get(srv, "info"));

    json_t *smp = json_object_get(json_object_get(run, "contract"), "sampling");
    assert_true(json_is_null(json_object_get(smp, "temperature")));
    assert_true(json_is_null(json_object_get(smp, "top_p")));
    assert_true(json_is_true(json_object_get(smp, "ignore_eos")));
    assert_true(json_is_true(json_object_get(smp, "stream")));
    assert_string_equal(harness_sval(json_object_get(smp, "max_tokens"), "distribution"),
                        "fixed:8");
    json_decref(run);
    harness_results_free(dir);
}

/* A sweep keeps them too, and its report's header shows the tags and what
 * the server said. Without --tag, run.json's tags are {}. */
static void test_sweep_header(void **state)
{
    harness_small_sim_start(NULL);
    /* Constant arrivals at 10/s: 3 requests in the 0.3 s window (at 4/s,
     * Poisson, the seed's window held none: an empty step, exit 1). */
    const char *args[] = {"--rates", "10",       "--arrival", "constant",      "--step-duration",
                          "0.5s",    "--warmup", "0.2s",      "--no-recovery", "--output-tokens",
                          "4",       "--tag",    "gpu=none",  "--tag",         "engine=sim-1",
                          NULL};
    char *dir = harness_sweep_ok(args, 60, NULL, NULL);
    char *html = harness_read_in(dir, "report.html");
    assert_non_null(strstr(html, "<dt>tags</dt><dd>gpu=none engine=sim-1</dd>"));
    assert_non_null(strstr(html, "<dt>server</dt><dd>llmload-sim/"));
    assert_non_null(strstr(html, "props: build_info=llmload-sim "));
    assert_non_null(strstr(html, "total_slots=4"));
    free(html);
    json_t *run = harness_json_load(dir, "run.json");
    assert_string_equal(harness_sval(json_object_get(run, "tags"), "engine"), "sim-1");
    json_decref(run);
    harness_results_free(dir);

    const char *sim[] = {NULL};
    const char *fixed[] = {"--no-metrics", NULL};
    const char *plain[] = {"--rate", "10", "--arrival", "constant", "--duration", "0.3s", NULL};
    dir = harness_run_on_sim(sim, fixed, plain);
    run = harness_json_load(dir, "run.json");
    assert_true(json_is_object(json_object_get(run, "tags")));
    assert_int_equal(json_object_size(json_object_get(run, "tags")), 0);
    json_decref(run);
    harness_results_free(dir);
}

/* replay keeps them too; its max_tokens are the trace's. */
static void test_replay_contract(void **state)
{
    harness_cur_sim_start(NULL);
    harness_tmp_begin();
    char trace[600], out[600], url[200];
    harness_tmp_path(trace, sizeof trace, "trace.jsonl");
    harness_tmp_path(out, sizeof out, "r");
    snprintf(url, sizeof url, "%s/v1", harness_cur_sim.url);
    harness_write_file(trace, "{\"t\":0.0,\"prompt_tokens\":20,\"output_tokens\":4}\n"
                              "{\"t\":0.05,\"prompt_tokens\":20,\"output_tokens\":6}\n");
    const char *args[] = {"replay", trace,     "--url", url,     "--out",
                          out,      "--quiet", "--tag", "run=3", NULL};
    /* 0, or 1 where a slow (sanitized) build's lateness makes it INVALID:
     * run.json says the same either way. */
    int status = -1;
    char *o = NULL, *e = NULL;
    harness_run(args, 30, &status, &o, &e);
    if (status != 0 && status != 1)
        fail_msg("llmload replay exited %d\n%s", status, e ? e : "");
    free(o);
    free(e);
    harness_sim_teardown(NULL);
    json_t *run = harness_json_load(out, "run.json");
    assert_string_equal(harness_sval(json_object_get(run, "tags"), "run"), "3");
    json_t *c = json_object_get(run, "contract");
    assert_string_equal(
        harness_sval(json_object_get(json_object_get(c, "sampling"), "max_tokens"), "distribution"),
        "the trace's");
    assert_non_null(json_object_get(json_object_get(c, "server"), "props"));
    json_decref(run);
    harness_tmp_end();
}

/* Bad tags name the flag, in run, replay and sweep alike. */
static void test_bad_tags(void **state)
{
    HARNESS_EXPECT_USAGES({{"run", "--tag", "engine"}, "--tag"},
                          {{"run", "--tag", "=vllm"}, "--tag"},
                          {{"sweep", "--tag", "gpu type=H100"}, "--tag"},
                          {{"replay", "--tag", "gpu=H100", "--tag", "gpu=A100"}, "given twice"});
}

HARNESS_MAIN(cmocka_unit_test(test_bad_tags),
             cmocka_unit_test_teardown(test_run_contract, harness_sim_teardown),
             cmocka_unit_test_teardown(test_sweep_header, harness_sim_teardown),
             cmocka_unit_test_teardown(test_replay_contract, harness_sim_teardown))
