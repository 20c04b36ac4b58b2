/* Integration tests of workload realism: shared prefixes, cancellations
 * and traffic classes, run against `llmload sim`.
 *
 * The schedule is a pure function of seed and config, so each test rebuilds
 * the same struct workload the client built, asks workload_spec what every
 * request was meant to be, and checks the record against that exactly:
 * which requests share a prefix, which cancel and after how many events,
 * which class each belongs to. */
#include <jansson.h>
#include <stdlib.h>
#include <string.h>

#include "harness.h"
#include "test.h"
#include "workload/workload.h"

#define MS 1000000.0

static const char *const no_metrics[] = {"--no-metrics", NULL};

static void base_workload(struct workload *w, const char *prompt, const char *output)
{
    char err[200];
    memset(w, 0, sizeof *w);
    w->seed = 1;
    w->ignore_eos = 1;
    assert_int_equal(dist_parse(prompt, DIST_UNIT_NONE, &w->prompt_tokens, err, sizeof err), 0);
    assert_int_equal(dist_parse(output, DIST_UNIT_NONE, &w->output_tokens, err, sizeof err), 0);
}

/* Half the requests begin with one of two shared 128-token prefixes. On the
 * sim a shared request is served 128 cached tokens (8 whole blocks) once
 * its group's prefix has been computed; an unshared one, whose nonce comes
 * first, is never served a cached token. */
static void test_prefix_sharing(void **state)
{
    (void)state;
    const char *args[] = {HARNESS_PREFIX_RUN, "--duration", "3s", NULL};
    char *dir = harness_run_on_sim(NULL, no_metrics, args);
    harness_check_prefix_hits(dir);
    harness_results_free(dir);

    /* The one-flag switch: the same run with --all-unique hits nothing. */
    const char *args2[] = {HARNESS_PREFIX_RUN, "--duration", "2s", "--all-unique", NULL};
    dir = harness_run_on_sim(NULL, no_metrics, args2);
    harness_check_no_prefix_hits(dir);
    harness_results_free(dir);
}

/* One run of 60 requests of 128 tokens against the sim already started,
 * a quarter of them beginning with one of two 64-token prefixes (4 whole
 * blocks), under seed. Checks that summary.json's workload share is the
 * one the workload implies, counted here from the schedule: every prefix
 * request's 64 tokens but the first of each group, over every prompt
 * token. Returns summary.json (caller decrefs). */
static json_t *cache_run(const char *seed)
{
    const char *args[] = {"--rate",
                          "30",
                          "--requests",
                          "60",
                          "--prompt-tokens",
                          "128",
                          "--output-tokens",
                          "16",
                          "--ignore-eos",
                          "--prefix-fraction",
                          "0.25",
                          "--prefix-groups",
                          "2",
                          "--prefix-tokens",
                          "64",
                          "--seed",
                          seed,
                          "--no-metrics",
                          NULL};
    char *dir = harness_run_client(NULL, args, HARNESS_RC_OK_OR_INVALID, NULL);
    struct workload w;
    base_workload(&w, "128", "16");
    w.seed = strtoull(seed, NULL, 10);
    w.prefix = (struct wl_prefix){.fraction = 0.25, .groups = 2, .tokens = 64};
    struct harness_recs *r = harness_requests_load(dir);
    assert_int_equal(r->n, 60);
    int seen[2] = {0, 0};
    double shared = 0;
    for (size_t i = 0; i < r->n; i++) {
        struct req_spec spec;
        workload_spec(&w, (uint64_t)harness_ival(r->items[i], "id"), &spec);
        if (spec.prefix_id < 0)
            continue;
        assert_true(spec.prefix_id < 2);
        shared += seen[spec.prefix_id] ? 64 : 0;
        seen[spec.prefix_id] = 1;
    }
    harness_recs_free(r);
    json_t *s = harness_json_load(dir, "summary.json");
    harness_results_free(dir);
    double implied = harness_num(s, "tokens.workload_cached_share");
    print_message("seed %s: cached share %.3f, the workload's %.3f, warning %s\n", seed,
                  harness_num(s, "tokens.cached_share"), implied,
                  json_string_value(json_object_get(s, "cache_warning")));
    ASSERT_NEAR(implied, shared / (60 * 128), 1e-9);
    assert_true(shared >= 5 * 64); /* the premise: the run shares something */
    return s;
}

/* The sim's prefix cache outlives a run, as a real server's does: the same
 * seed run twice against one sim finds its own prompts again (the first
 * 7 of 8 blocks of every one), far past the 5-12% the workload shares, and
 * the second run warns; a different seed sends other prompts and does not.
 * The first run, on a cold cache, hits at most what the workload shares
 * (a group's second request may come before its first was computed). */
static void test_cache_carryover(void **state)
{
    (void)state;
    const char *sargs[] = {NULL};
    harness_cur_sim_start(sargs);
    json_t *s = cache_run("7");
    double implied = harness_num(s, "tokens.workload_cached_share");
    assert_true(harness_num(s, "tokens.cached_share") <= implied + 1e-9);
    assert_true(json_is_null(json_object_get(s, "cache_warning")));
    json_decref(s);

    s = cache_run("7");
    assert_true(harness_num(s, "tokens.cached_share") >= implied + 0.5);
    const char *why = json_string_value(json_object_get(s, "cache_warning"));
    assert_non_null(why);
    assert_non_null(strstr(why, "the server remembers an earlier run: use another --seed, "
                                "or restart it"));
    json_decref(s);

    s = cache_run("8");
    assert_true(harness_num(s, "tokens.cached_share") <=
                harness_num(s, "tokens.workload_cached_share") + 1e-9);
    assert_true(json_is_null(json_object_get(s, "cache_warning")));
    json_decref(s);
}

/* 30% of clients walk away after a drawn number of output events: each
 * such record is "cancelled" with exactly that many events, every other one
 * is ok with all its tokens. */
static void test_cancel_after_tokens(void **state)
{
    (void)state;
    const char *args[] = {"--rate", "20", "--duration", "3s", "--prompt-tokens", "32",
                          "--output-tokens", "40", "--ignore-eos", "--cancel-fraction", "0.3",
                          "--cancel-after-tokens", "uniform:5,20", NULL};
    char *dir = harness_run_on_sim(NULL, no_metrics, args);

    struct workload w;
    char err[200];
    base_workload(&w, "32", "40");
    w.cancel.kind = WL_CANCEL_AFTER_TOKENS;
    w.cancel.fraction = 0.3;
    assert_int_equal(dist_parse("uniform:5,20", DIST_UNIT_NONE, &w.cancel.after, err, sizeof err),
                     0);
    struct harness_recs *r = harness_requests_load(dir);
    size_t cancelled = 0;
    for (size_t i = 0; i < r->n; i++) {
        struct req_spec spec;
        workload_spec(&w, (uint64_t)harness_ival(r->items[i], "id"), &spec);
        if (spec.cancel_kind == WL_CANCEL_AFTER_TOKENS) {
            cancelled++;
            assert_string_equal(harness_sval(r->items[i], "kind"), "cancelled");
            assert_int_equal(harness_ival(r->items[i], "events"), (int64_t)spec.cancel_after);
        } else {
            assert_string_equal(harness_sval(r->items[i], "kind"), "ok");
            assert_int_equal(harness_ival(r->items[i], "events"), 40);
        }
    }
    assert_true(cancelled >= 5 && cancelled < r->n);
    harness_recs_free(r);
    harness_results_free(dir);
}

/* Cancellation after a drawn time: the record ends that long after it was
 * sent (the transport checks every 5 ms). */
static void test_cancel_after_time(void **state)
{
    (void)state;
    const char *args[] = {"--rate", "10", "--duration", "2s", "--prompt-tokens", "32",
                          "--output-tokens", "128", "--ignore-eos", "--cancel-after", "200ms",
                          NULL};
    char *dir = harness_run_on_sim(NULL, no_metrics, args);
    struct harness_recs *r = harness_requests_load(dir);
    assert_true(r->n > 5);
    for (size_t i = 0; i < r->n; i++) {
        assert_string_equal(harness_sval(r->items[i], "kind"), "cancelled");
        double held =
            (double)(harness_ival(r->items[i], "end_ns") - harness_ival(r->items[i], "sent_ns"));
        ASSERT_NEAR(held, 200 * MS, 30 * MS);
        assert_true(harness_ival(r->items[i], "events") > 0);
    }
    harness_recs_free(r);
    harness_results_free(dir);
}

/* Traffic classes from a workload file: every record names the class its
 * index drew, with that class's lengths; the summary breaks out each. */
static void test_classes(void **state)
{
    (void)state;
    char *tmp = harness_tmpdir();
    char path[600];
    snprintf(path, sizeof path, "%s/w.json", tmp);
    FILE *f = fopen(path, "w");
    assert_non_null(f);
    fputs("{\"classes\": [\n"
          " {\"name\": \"short\", \"weight\": 3, \"prompt_tokens\": 16, \"output_tokens\": 4,"
          "  \"ignore_eos\": true},\n"
          " {\"name\": \"long\", \"weight\": 1, \"prompt_tokens\": 300, \"output_tokens\": 30,"
          "  \"ignore_eos\": true, \"api\": \"completions\", \"slo\": {\"ttft_ms\": 1000}}\n"
          "]}\n",
          f);
    fclose(f);
    const char *args[] = {"--rate", "20", "--duration", "3s", "--workload", path, NULL};
    char *dir = harness_run_on_sim(NULL, no_metrics, args);

    struct wl_file *wf = NULL;
    char err[300];
    assert_int_equal(wl_file_load(path, &wf, err, sizeof err), 0);
    struct workload w;
    base_workload(&w, "1", "1");
    w.classes = wf;
    struct harness_recs *r = harness_requests_load(dir);
    size_t n_short = 0;
    for (size_t i = 0; i < r->n; i++) {
        struct req_spec spec;
        workload_spec(&w, (uint64_t)harness_ival(r->items[i], "id"), &spec);
        assert_string_equal(harness_sval(r->items[i], "class"), spec.class_name);
        assert_string_equal(harness_sval(r->items[i], "kind"), "ok");
        assert_int_equal(harness_ival(r->items[i], "prompt_tokens_server"), spec.prompt_tokens);
        assert_int_equal(harness_ival(r->items[i], "output_tokens"), spec.max_tokens);
        n_short += strcmp(spec.class_name, "short") == 0;
    }
    assert_true(n_short > 0 && n_short < r->n);

    json_t *s = harness_summary_load(dir);
    json_t *classes = json_object_get(s, "classes");
    assert_int_equal(json_array_size(classes), 2);
    json_t *c0 = json_array_get(classes, 0), *c1 = json_array_get(classes, 1);
    assert_string_equal(harness_sval(c0, "name"), "short");
    assert_int_equal(harness_ival(c0, "scheduled"), (int64_t)n_short);
    assert_int_equal(harness_ival(c1, "scheduled"), (int64_t)(r->n - n_short));
    assert_string_equal(harness_sval(c1, "slo"), "ttft=1s");
    json_decref(s);
    harness_recs_free(r);
    wl_file_free(wf);
    harness_results_free(dir);
    harness_rm_rf(tmp);
    free(tmp);
}

/* Explicit bursts merge into the arrivals: count requests at exactly the
 * burst's offset, with its lengths, and the same schedule as the dump. */
static void test_bursts(void **state)
{
    (void)state;
    const char *args[] = {"--rate", "5", "--arrival", "constant", "--duration", "2s",
                          "--prompt-tokens", "32", "--output-tokens", "4", "--ignore-eos",
                          "--burst", "at=1s,count=6,prompt-tokens=1000",
                          "--burst", "at=500ms,count=2", NULL};
    char *dir = harness_run_on_sim(NULL, no_metrics, args);
    struct harness_recs *r = harness_requests_load(dir);
    assert_int_equal(r->n, 10 + 6 + 2);
    int at_1s = 0, at_500 = 0;
    for (size_t i = 0; i < r->n; i++) {
        int64_t sched = harness_ival(r->items[i], "sched_ns");
        assert_string_equal(harness_sval(r->items[i], "kind"), "ok");
        if (harness_ival(r->items[i], "prompt_tokens_server") == 1000) {
            at_1s++;
            assert_int_equal(sched, 1000000000LL);
        } else if (sched == 500000000LL) {
            at_500++;
        } else {
            assert_int_equal(sched % 200000000LL, 0); /* the constant 5/s arrivals */
        }
    }
    assert_int_equal(at_1s, 6);
    assert_int_equal(at_500, 2);
    harness_recs_free(r);
    harness_results_free(dir);
}

HARNESS_MAIN(cmocka_unit_test_teardown(test_prefix_sharing, harness_sim_teardown),
             cmocka_unit_test_teardown(test_cache_carryover, harness_sim_teardown),
             cmocka_unit_test_teardown(test_cancel_after_tokens, harness_sim_teardown),
             cmocka_unit_test_teardown(test_cancel_after_time, harness_sim_teardown),
             cmocka_unit_test_teardown(test_classes, harness_sim_teardown),
             cmocka_unit_test_teardown(test_bursts, harness_sim_teardown))
