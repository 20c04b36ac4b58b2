/* Integration tests of --extra-body and a class's extra_body, against the
 * sim's --log, which names the top-level keys of each body it does not
 * read ("ignored_keys") and the max_tokens each request asked:
 *
 * - the global extra fields reach every request, a class's own on top of
 *   them (on the class's own API): the sim's keys per path, its counts
 *   the records' per class; run.json keeps both, the contract says the
 *   temperature differs per class;
 * - a key llmload writes is refused up front (exit 2, one line, nothing
 *   sent); with --extra-body-override the extra max_tokens is what the
 *   sim was asked and what the records count, with one warning;
 * - bad values, in run, sweep and replay, are one-line usage errors;
 * - compare sees two runs with other extra bodies as other workloads. */
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "harness.h"
#include "test.h"
#include "util/util.h"

/* The lines of the sim's log at path, parsed (the sim stopped: flushed). */
static struct harness_recs *sim_log(const char *path)
{
    return harness_recs_load(path);
}

static int count_str(const char *hay, const char *needle)
{
    int n = 0;
    for (const char *p = strstr(hay, needle); p; p = strstr(p + 1, needle))
        n++;
    return n;
}

/* A key list of the sim's log as one comma-joined string. */
static void keys_of(json_t *line, char *buf, size_t len)
{
    json_t *k = json_object_get(line, "ignored_keys");
    size_t at = 0;
    buf[0] = '\0';
    for (size_t i = 0; i < json_array_size(k) && at < len; i++)
        at += (size_t)snprintf(buf + at, len - at, "%s%s", i ? "," : "",
                               json_string_value(json_array_get(k, i)));
}

static void test_fields_reach_sim(void **state)
{
    harness_tmp_begin();
    char logp[600], wl[600];
    harness_tmp_file(wl, sizeof wl, "w.json",
                     "{\"classes\": [\n"
                     " {\"name\": \"tools\", \"prompt_tokens\": 16, \"output_tokens\": 4,\n"
                     "  \"api\": \"chat\",\n"
                     "  \"extra_body\": {\"temperature\": 0.5, \"tools\": [{\"type\": "
                     "\"function\", \"function\": {\"name\": \"f\"}}]}},\n"
                     " {\"name\": \"plain\", \"prompt_tokens\": 16, \"output_tokens\": 4,\n"
                     "  \"api\": \"anthropic-messages\"}]}\n");
    const char *sargs[] = {"--profile", "instant", NULL};
    harness_logged_sim_start(logp, sizeof logp, sargs);
    const char *args[] = {
        "--rate",       "100",
        "--requests",   "40",
        "--workload",   wl,
        "--extra-body", "{\"temperature\":0,\"chat_template_kwargs\":{\"enable_thinking\":false}}",
        "--no-metrics", NULL};
    char *dir = harness_run_client(NULL, args, HARNESS_RC_OK_OR_INVALID, NULL);
    harness_sim_stop(&harness_cur_sim);

    struct harness_recs *recs = harness_requests_load(dir);
    assert_int_equal(recs->n, 40);
    size_t by_class[2] = {0, 0};
    for (size_t i = 0; i < recs->n; i++) {
        json_t *r = recs->items[i];
        if (strcmp(harness_sval(r, "kind"), "ok") != 0)
            fail_msg("record %zu: %s %s", i, harness_sval(r, "kind"), harness_sval(r, "detail"));
        by_class[strcmp(harness_sval(r, "class"), "tools") == 0 ? 0 : 1]++;
    }
    harness_recs_free(recs);
    assert_true(by_class[0] > 0 && by_class[1] > 0);

    struct harness_recs *log = sim_log(logp);
    assert_int_equal(log->n, 40);
    size_t by_path[2] = {0, 0};
    for (size_t i = 0; i < log->n; i++) {
        json_t *l = log->items[i];
        char keys[256];
        keys_of(l, keys, sizeof keys);
        const char *path = harness_sval(l, "path");
        assert_int_equal(harness_ival_req(l, "status"), 200);
        if (strcmp(path, "/v1/chat/completions") == 0) {
            /* The global keys in their order, the class's own after. */
            assert_string_equal(keys, "temperature,chat_template_kwargs,tools");
            by_path[0]++;
        } else {
            assert_string_equal(path, "/v1/messages");
            assert_string_equal(keys, "temperature,chat_template_kwargs");
            by_path[1]++;
        }
    }
    harness_recs_free(log);
    assert_int_equal(by_path[0], by_class[0]);
    assert_int_equal(by_path[1], by_class[1]);

    json_t *run = harness_json_load(dir, "run.json");
    json_t *cfg = json_object_get(run, "config");
    json_t *want = json_loads("{\"temperature\":0,\"chat_template_kwargs\":{\"enable_thinking\":"
                              "false}}",
                              0, NULL);
    assert_true(json_equal(json_object_get(cfg, "extra_body"), want));
    json_decref(want);
    json_t *cls = json_object_get(json_object_get(cfg, "class_extra_body"), "tools");
    assert_int_equal(json_object_size(cls), 3);
    assert_true(json_real_value(json_object_get(cls, "temperature")) == 0.5);
    assert_null(json_object_get(json_object_get(cfg, "class_extra_body"), "plain"));
    /* The contract: the "tools" class sends 0.5, "plain" the global 0;
     * neither sends top_p. */
    json_t *smp = json_object_get(json_object_get(run, "contract"), "sampling");
    assert_string_equal(harness_sval(smp, "temperature"), "per class");
    assert_true(json_is_null(json_object_get(smp, "top_p")));
    json_decref(run);
    harness_results_free(dir);
}

/* A clash is refused before anything is sent; under --extra-body-override
 * the extra max_tokens is the one the sim was asked and the records count. */
static void test_override_max_tokens(void **state)
{
    char logp[600];
    const char *sargs[] = {"--profile", "instant", NULL};
    harness_logged_sim_start(logp, sizeof logp, sargs);
    const char *fixed[] = {"--rate",          "100",          "--requests",         "12",
                           "--prompt-tokens", "16",           "--output-tokens",    "20",
                           "--no-metrics",    "--extra-body", "{\"max_tokens\":7}", NULL};
    int status = -1;
    char *out = NULL, *err = NULL;
    const char *none[] = {NULL};
    char *dir = harness_run_against_sim("run", fixed, none, 30, &status, &out, &err);
    const char *why = "--extra-body: \"max_tokens\" is a key llmload writes itself in openai-chat "
                      "requests";
    if (status != 2 || !strstr(err, why) || count_str(err, "\n") != 1)
        fail_msg("exit %d, stderr:\n%s\nexpected exit 2 and one line with: %s", status, err, why);
    free(out);
    free(err);
    harness_results_free(dir);

    const char *args[] = {"--extra-body-override", NULL};
    dir = harness_run_client(fixed, args, HARNESS_RC_OK_OR_INVALID, &err);
    assert_int_equal(count_str(err, "--extra-body-override: the extra body sends \"max_tokens\" "
                                    "in place of llmload's"),
                     1);
    free(err);
    harness_sim_stop(&harness_cur_sim);
    struct harness_recs *recs = harness_requests_load(dir);
    assert_int_equal(recs->n, 12);
    for (size_t i = 0; i < recs->n; i++) {
        json_t *r = recs->items[i];
        assert_string_equal(harness_sval(r, "kind"), "ok");
        assert_int_equal(harness_ival_req(r, "max_tokens"), 20); /* llmload's own draw */
        assert_int_equal(harness_ival_req(r, "output_tokens"), 7);
        assert_string_equal(harness_sval(r, "tokens_source"), "usage");
    }
    harness_recs_free(recs);
    /* The refused run sent nothing: the log holds the 12, each asked 7. */
    struct harness_recs *log = sim_log(logp);
    assert_int_equal(log->n, 12);
    for (size_t i = 0; i < log->n; i++) {
        assert_int_equal(harness_ival_req(log->items[i], "max_tokens"), 7);
        assert_null(json_object_get(log->items[i], "ignored_keys"));
    }
    harness_recs_free(log);
    harness_results_free(dir);
}

static void test_usage_errors(void **state)
{
    harness_tmp_begin();
    char wl[600], bad[600], badarg[620];
    harness_tmp_path(wl, sizeof wl, "w.json");
    harness_write_file(wl, "{\"classes\": [{\"name\": \"c\", \"prompt_tokens\": 4, "
                           "\"output_tokens\": 2, \"api\": \"completions\", "
                           "\"extra_body\": {\"prompt\": \"x\"}}]}\n");
    char wl2[600];
    harness_tmp_path(wl2, sizeof wl2, "w2.json");
    harness_write_file(wl2, "{\"classes\": [{\"name\": \"c\", \"prompt_tokens\": 4, "
                            "\"output_tokens\": 2}, {\"name\": \"d\", \"prompt_tokens\": 4, "
                            "\"output_tokens\": 2, \"api\": \"completions\"}]}\n");
    harness_tmp_path(bad, sizeof bad, "bad.json");
    harness_write_file(bad, "{\n  \"top_k\": 1,\n  \"top_p\" 0.9\n}\n");
    snprintf(badarg, sizeof badarg, "@%s", bad);
    HARNESS_EXPECT_USAGES(
        {{"run", "--rate", "1", "--extra-body", "[1]"}, "--extra-body: expected a JSON object"},
        {{"run", "--rate", "1", "--extra-body", "{\"a\":"}, "--extra-body: inline:1:"},
        {{"run", "--rate", "1", "--extra-body", badarg}, "bad.json:3:"},
        {{"run", "--rate", "1", "--extra-body", "@/nonexistent/x.json"},
         "--extra-body: /nonexistent/x.json"},
        {{"run", "--rate", "1", "--extra-body-override"},
         "--extra-body-override: goes with --extra-body"},
        {{"run", "--rate", "1", "--api", "anthropic-messages", "--extra-body",
          "{\"stream\":false}"},
         "\"stream\" is a key llmload writes itself in anthropic-messages requests"},
        {{"run", "--rate", "1", "--workload", wl},
         "w.json: classes[0] (\"c\").extra_body: \"prompt\" is a key"},
        /* --extra-body is checked against each class's own API. */
        {{"run", "--rate", "1", "--workload", wl2, "--extra-body", "{\"prompt\":\"x\"}"},
         ("--extra-body (class \"d\"): \"prompt\" is a key llmload writes itself in "
          "openai-completions")},
        {{"sweep", "--rates", "1,2", "--extra-body", "[1]"},
         "--extra-body: expected a JSON object"},
        {{"replay", "x.jsonl", "--extra-body", "{\"model\":\"m\"}"},
         "\"model\" is a key llmload writes itself in openai-chat"});
}

/* Two runs that sent other extra bodies did not offer the same work. */
static void test_compare_sees_extra_body(void **state)
{
    const char *a[] = {"--extra-body", "{\"temperature\":0}", NULL};
    const char *b[] = {"--extra-body", "{\"temperature\":1}", NULL};
    harness_compare_refuses(a, b, "extra_body");
}

HARNESS_MAIN(cmocka_unit_test_teardown(test_fields_reach_sim, harness_sim_tmp_teardown),
             cmocka_unit_test_teardown(test_override_max_tokens, harness_sim_tmp_teardown),
             cmocka_unit_test_teardown(test_usage_errors, harness_sim_tmp_teardown),
             cmocka_unit_test_teardown(test_compare_sees_extra_body, harness_sim_tmp_teardown))
