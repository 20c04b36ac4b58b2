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

/* Half the requests begin with one of two shared 128-token prefixes. On the
 * sim a shared request is served 128 cached tokens (8 whole blocks) once
 * its group's prefix has been computed; an unshared one, whose nonce comes
 * first, is never served a cached token. */
static void test_prefix_sharing(void **state)
{
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
 * blocks), under seed and --prompt-salt salt (NULL: the default, auto).
 * One user, closed loop: each request ends before the next is sent, so a
 * group's prefix is always computed before its next request comes and a
 * cold cache serves exactly what the workload shares. Checks that
 * summary.json's workload share is the one the workload implies, counted
 * here from the schedule: every prefix request's 64 tokens but the first
 * of each group, over every prompt token. Returns summary.json (caller
 * decrefs); *salt_out gets run.json's prompt_salt, *auto_out whether it
 * was drawn (either may be NULL). */
static json_t *cache_run(const char *seed, const char *salt, int64_t *salt_out, int *auto_out)
{
    const char *args[] = {"--users",
                          "1",
                          "--requests",
                          "60",
                          "--prompt-tokens",
                          "128",
                          "--output-tokens",
                          "2",
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
                          salt ? "--prompt-salt" : NULL,
                          salt,
                          NULL};
    char *dir = harness_run_client(NULL, args, HARNESS_RC_OK_OR_INVALID, NULL);
    struct workload w;
    harness_workload(&w, 1, "128", "2", 1);
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
    json_t *run = harness_json_load(dir, "run.json");
    json_t *cfg = json_object_get(run, "config");
    int64_t used = harness_ival_req(cfg, "prompt_salt");
    int drawn = json_is_true(json_object_get(cfg, "prompt_salt_auto"));
    if (salt) {
        assert_int_equal(used, strtoll(salt, NULL, 10));
        assert_false(drawn);
    } else {
        assert_true(drawn);
    }
    if (salt_out)
        *salt_out = used;
    if (auto_out)
        *auto_out = drawn;
    json_decref(run);
    harness_results_free(dir);
    double implied = harness_num(s, "tokens.workload_cached_share");
    print_message("seed %s, prompt salt %lld%s: cached share %.4f, the workload's %.4f, "
                  "warning %s\n",
                  seed, (long long)used, drawn ? " (auto)" : "",
                  harness_num(s, "tokens.cached_share"), implied,
                  json_string_value(json_object_get(s, "cache_warning")));
    ASSERT_NEAR(implied, shared / (60 * 128), 1e-9);
    assert_true(shared >= 5 * 64); /* the premise: the run shares something */
    return s;
}

/* The sim's prefix cache outlives a run, as a real server's does. The same
 * seed and the same --prompt-salt run twice against one sim send the same
 * prompts, and the second run finds them all again: 7 of the 8 blocks of
 * every prompt (the last is always computed), 87.5%, far past the 10% the
 * workload shares, and it warns. Another salt sends other text: exactly
 * the workload's share again, and no warning. */
static void test_cache_carryover(void **state)
{
    const char *sargs[] = {NULL};
    harness_cur_sim_start(sargs);
    json_t *s = cache_run("7", "5", NULL, NULL);
    double implied = harness_num(s, "tokens.workload_cached_share");
    ASSERT_NEAR(harness_num(s, "tokens.cached_share"), implied, 1e-9);
    assert_true(json_is_null(json_object_get(s, "cache_warning")));
    json_decref(s);

    s = cache_run("7", "5", NULL, NULL);
    ASSERT_NEAR(harness_num(s, "tokens.cached_share"), 7.0 / 8.0, 1e-9);
    const char *why = json_string_value(json_object_get(s, "cache_warning"));
    assert_non_null(why);
    assert_non_null(strstr(why, "the server remembers an earlier run that sent these prompts "
                                "(the same --seed and --prompt-salt): use --prompt-salt auto "
                                "(the default), or restart it"));
    json_decref(s);

    s = cache_run("7", "6", NULL, NULL);
    ASSERT_NEAR(harness_num(s, "tokens.cached_share"), implied, 1e-9);
    assert_true(json_is_null(json_object_get(s, "cache_warning")));
    json_decref(s);
}

/* Issue 17's experiment: two identical runs, one after the other, against
 * one sim with its prefix cache, each with the default --prompt-salt
 * (auto). Each draws its own salt (run.json says which), so the second
 * finds nothing of the first: both read exactly the share the workload
 * implies (10%: 25% of requests share 64 of 128 tokens, less each group's
 * first), not the 87.5% of a repeat, and neither warns. */
static void test_salt_two_identical_runs(void **state)
{
    const char *sargs[] = {NULL};
    harness_cur_sim_start(sargs);
    int64_t salt[2];
    for (int k = 0; k < 2; k++) {
        int drawn = 0;
        json_t *s = cache_run("7", NULL, &salt[k], &drawn);
        assert_true(drawn);
        ASSERT_NEAR(harness_num(s, "tokens.cached_share"),
                    harness_num(s, "tokens.workload_cached_share"), 1e-9);
        ASSERT_NEAR(harness_num(s, "tokens.cached_share"), 0.10, 1e-9);
        assert_true(json_is_null(json_object_get(s, "cache_warning")));
        json_decref(s);
    }
    assert_true(salt[0] != salt[1]);
}

/* The salt changes the text, never the schedule. Dry-run dumps under two
 * salts and the default are byte-identical; two real runs under two salts
 * have the same requests at the same offsets (sched_ns, lengths), the
 * same prefix groups (each run's later group requests hit its own
 * prefixes: harness_check_prefix_hits), and the second run's first
 * request of each group finds nothing the first run left. */
static void test_salt_keeps_schedule(void **state)
{
    HARNESS_EXPECT_USAGES(
        {{"run", "--rate", "1", "--prompt-salt", "often"},
         "--prompt-salt: expected auto or a whole number from 0 to 2^63-1"},
        {{"replay", "none.jsonl", "--prompt-salt", "-1"}, "--prompt-salt: expected auto"},
        {{"sweep", "--rates", "1", "--prompt-salt", "9223372036854775808"},
         "--prompt-salt: expected auto"},
        /* --burst's list reads past blanks, as --slo's: " count " is count */
        {{"run", "--rate", "1", "--burst", "at=1s, count = 0"},
         "--burst count: expected a whole number >= 1 (e.g. 100 or 10k), got \"0\""},
        /* the spec once, then the instant and the window (not "at=at=") */
        {{"run", "--rate", "1", "--duration", "10s", "--burst", "at=10s,count=5"},
         "--burst at=10s,count=5: at 10s is not inside --duration (10s)"});
    harness_tmp_begin();
    char f[3][600];
    const char *salts[3] = {"1", "2", NULL};
    char *b[3];
    size_t l[3];
    for (int k = 0; k < 3; k++) {
        char name[16];
        snprintf(name, sizeof name, "s%d.jsonl", k);
        harness_tmp_path(f[k], sizeof f[k], name);
        const char *a[] = {"run",
                           "--rate",
                           "200",
                           "--duration",
                           "2s",
                           "--seed",
                           "7",
                           "--prompt-tokens",
                           "uniform:10,100",
                           "--prefix-fraction",
                           "0.3",
                           "--prefix-groups",
                           "3",
                           "--prefix-tokens",
                           "8",
                           "--dump-schedule",
                           f[k],
                           "--dry-run",
                           salts[k] ? "--prompt-salt" : NULL,
                           salts[k],
                           NULL};
        free(harness_run_expect(a, 30, 0, NULL));
        b[k] = harness_read_file(f[k], &l[k]);
        assert_non_null(b[k]);
    }
    assert_true(l[0] > 1000);
    for (int k = 1; k < 3; k++) {
        assert_int_equal(l[k], l[0]);
        assert_memory_equal(b[k], b[0], l[0]);
    }
    for (int k = 0; k < 3; k++)
        free(b[k]);
    harness_tmp_end();

    const char *sargs[] = {NULL};
    harness_cur_sim_start(sargs);
    const char *a1[] = {HARNESS_PREFIX_RUN, "--duration", "2s", "--no-metrics",
                        "--prompt-salt",    "1",          NULL};
    const char *a2[] = {HARNESS_PREFIX_RUN, "--duration", "2s", "--no-metrics",
                        "--prompt-salt",    "2",          NULL};
    char *d1 = harness_run_client(NULL, a1, HARNESS_RC_OK_OR_INVALID, NULL);
    char *d2 = harness_run_client(NULL, a2, HARNESS_RC_OK_OR_INVALID, NULL);
    harness_check_prefix_hits(d1);
    harness_check_prefix_hits(d2);
    struct harness_recs *r1 = harness_requests_load(d1), *r2 = harness_requests_load(d2);
    assert_int_equal(r1->n, r2->n);
    struct workload w;
    harness_workload(&w, 1, "256", "8", 1);
    w.prefix = (struct wl_prefix){.fraction = 0.5, .groups = 2, .tokens = 128};
    int64_t first_sched[2] = {INT64_MAX, INT64_MAX}, first_cached[2] = {-1, -1};
    for (size_t i = 0; i < r1->n; i++) {
        int64_t id = harness_ival(r1->items[i], "id");
        json_t *o = NULL;
        for (size_t j = 0; j < r2->n && !o; j++)
            o = harness_ival(r2->items[j], "id") == id ? r2->items[j] : NULL;
        assert_non_null(o);
        assert_int_equal(harness_ival(o, "sched_ns"), harness_ival(r1->items[i], "sched_ns"));
        assert_int_equal(harness_ival(o, "prompt_tokens"),
                         harness_ival(r1->items[i], "prompt_tokens"));
        assert_int_equal(harness_ival(o, "max_tokens"), harness_ival(r1->items[i], "max_tokens"));
        struct req_spec spec;
        workload_spec(&w, (uint64_t)id, &spec);
        if (spec.prefix_id >= 0 && harness_ival(o, "sched_ns") < first_sched[spec.prefix_id]) {
            first_sched[spec.prefix_id] = harness_ival(o, "sched_ns");
            first_cached[spec.prefix_id] = harness_ival(o, "cached_tokens");
        }
    }
    assert_int_equal(first_cached[0], 0);
    assert_int_equal(first_cached[1], 0);
    harness_recs_free(r1);
    harness_recs_free(r2);
    harness_results_free(d1);
    harness_results_free(d2);
}

/* One sweep of two steps at 20 req/s (a rate and its --repeat) against
 * the sim already started, half the requests in one of two 128-token
 * prefix groups, under --prompt-salt salt (NULL: auto). For each step,
 * *first_hit gets how many of its groups' first requests were served
 * cached tokens (an earlier step's or sweep's text), *later_hits how many
 * of the groups' later requests were (its own text). Returns run.json's
 * prompt_salt. */
static int64_t salt_sweep(const char *salt, int *first_hit, int *later_hits)
{
    const char *args[] = {"--rates",
                          "20",
                          "--repeat",
                          "2",
                          "--step-duration",
                          "1s",
                          "--warmup",
                          "0s",
                          "--no-recovery",
                          "--no-metrics",
                          HARNESS_PREFIX_WORK,
                          "--seed",
                          "7",
                          salt ? "--prompt-salt" : NULL,
                          salt,
                          NULL};
    int status = -1;
    char *out = NULL, *err = NULL;
    char *dir = harness_run_against_sim("sweep", NULL, args, 60, &status, &out, &err);
    if (status != 0)
        fail_msg("llmload sweep exited %d\n%s\n%s", status, out, err);
    free(out);
    free(err);
    struct harness_recs *r = harness_requests_load(dir);
    int64_t seen[2][2];
    for (int k = 0; k < 2; k++)
        seen[k][0] = seen[k][1] = INT64_MAX;
    int64_t first_cached[2][2] = {{0, 0}, {0, 0}};
    *first_hit = *later_hits = 0;
    for (size_t i = 0; i < r->n; i++) {
        int64_t step = harness_ival_req(r->items[i], "step");
        assert_true(step == 0 || step == 1);
        struct workload w;
        harness_workload(&w, 1, "256", "8", 1);
        w.seed = 7 + (uint64_t)step; /* a step's schedule: the sweep's seed + its index */
        w.prefix = (struct wl_prefix){.fraction = 0.5, .groups = 2, .tokens = 128};
        struct req_spec spec;
        workload_spec(&w, (uint64_t)harness_ival_req(r->items[i], "id"), &spec);
        if (spec.prefix_id < 0)
            continue;
        int64_t sched = harness_ival_req(r->items[i], "sched_ns");
        int64_t cached = harness_ival_req(r->items[i], "cached_tokens");
        if (sched < seen[step][spec.prefix_id]) {
            if (seen[step][spec.prefix_id] != INT64_MAX)
                *later_hits += first_cached[step][spec.prefix_id] > 0;
            seen[step][spec.prefix_id] = sched;
            first_cached[step][spec.prefix_id] = cached;
        } else {
            *later_hits += cached > 0;
        }
    }
    for (int k = 0; k < 2; k++)
        for (int g = 0; g < 2; g++)
            *first_hit += seen[k][g] != INT64_MAX && first_cached[k][g] > 0;
    harness_recs_free(r);
    int64_t used = harness_run_config_ival(dir, "prompt_salt");
    harness_results_free(dir);
    return used;
}

/* A sweep's steps and repeats, and two sweeps in a row, never share text:
 * with the default salt no group's first request in any step of either
 * sweep is served a cached token, while each step's later requests of a
 * group are (the step's own prefix). A third sweep given the first's salt
 * sends the first's text again, and its groups' first requests hit. */
static void test_salt_sweeps(void **state)
{
    /* Room for all three sweeps' blocks: nothing is evicted, so a miss is
     * text the cache never saw. */
    const char *sargs[] = {"--kv-tokens", "200000", NULL};
    harness_cur_sim_start(sargs);
    int first_hit, later;
    int64_t salt = salt_sweep(NULL, &first_hit, &later);
    print_message("sweep 1 (salt %lld): %d groups' first requests hit, %d later ones\n",
                  (long long)salt, first_hit, later);
    assert_int_equal(first_hit, 0);
    assert_true(later >= 8);
    int64_t salt2 = salt_sweep(NULL, &first_hit, &later);
    print_message("sweep 2 (salt %lld): %d groups' first requests hit, %d later ones\n",
                  (long long)salt2, first_hit, later);
    assert_true(salt2 != salt);
    assert_int_equal(first_hit, 0);
    assert_true(later >= 8);
    char again[32];
    snprintf(again, sizeof again, "%lld", (long long)salt);
    assert_int_equal(salt_sweep(again, &first_hit, &later), salt);
    print_message("sweep 3 (salt %s again): %d groups' first requests hit\n", again, first_hit);
    assert_int_equal(first_hit, 4);
}

/* 30% of clients walk away after a drawn number of output events: each
 * such record is "cancelled" with exactly that many events, every other one
 * is ok with all its tokens. */
static void test_cancel_after_tokens(void **state)
{
    const char *args[] = {"--rate", "20", "--duration", "3s", "--prompt-tokens", "32",
                          "--output-tokens", "40", "--ignore-eos", "--cancel-fraction", "0.3",
                          "--cancel-after-tokens", "uniform:5,20", NULL};
    char *dir = harness_run_on_sim(NULL, no_metrics, args);

    struct workload w;
    char err[200];
    harness_workload(&w, 1, "32", "40", 1);
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

/* 40 requests at 20/s, 4 output tokens each, half of them cancelled by
 * cancel_flag cancel_value, against a sim whose every step lasts 30 ms or
 * more, with --slo ttft=2s and --expect error_rate<1%: the records' count
 * of cancelled requests in *cancelled (all 40 are cancelled or ok), and
 * summary.json (caller decrefs). */
static json_t *cancel_run(const char *cancel_flag, const char *cancel_value, int64_t *cancelled)
{
    const char *sargs[] = {"--step-base", "30ms", NULL};
    const char *args[] = {"--rate",
                          "20",
                          "--arrival",
                          "constant",
                          "--requests",
                          "40",
                          "--prompt-tokens",
                          "16",
                          "--output-tokens",
                          "4",
                          "--ignore-eos",
                          "--cancel-fraction",
                          "0.5",
                          cancel_flag,
                          cancel_value,
                          "--slo",
                          "ttft=2s",
                          "--expect",
                          "error_rate<1%",
                          NULL};
    char *dir = harness_run_on_sim(sargs, no_metrics, args);
    struct harness_recs *r = harness_requests_load(dir);
    int64_t ok = 0;
    *cancelled = 0;
    for (size_t i = 0; i < r->n; i++) {
        const char *kind = harness_sval(r->items[i], "kind");
        *cancelled += strcmp(kind, "cancelled") == 0;
        ok += strcmp(kind, "ok") == 0;
    }
    assert_int_equal(r->n, 40);
    assert_true(*cancelled > 0 && ok > 0);
    assert_int_equal(*cancelled + ok, 40);
    json_t *sj = harness_summary_load(dir);
    harness_recs_free(r);
    harness_results_free(dir);
    return sj;
}

/* A request the client cancelled is not an SLO miss unless it had
 * already missed: cancelled 1 ms after they were sent, no token comes
 * before the cancellation (and 2 s had not passed). The others' TTFT is a
 * few steps, under the threshold by seconds. Attainment is over the
 * judged requests: 100%, with the cancelled ones counted in
 * throughput.slo_unjudged. It read 50%, the workload's own cancellations
 * held against the server. Nor are they errors: --expect error_rate<1%
 * holds (it read 50% and the run exited 7). */
static void test_cancel_not_an_slo_miss(void **state)
{
    int64_t cancelled;
    json_t *sj = cancel_run("--cancel-after", "1ms", &cancelled);
    assert_int_equal((int64_t)harness_num(sj, "throughput.slo_unjudged"), cancelled);
    ASSERT_NEAR(harness_num(sj, "throughput.attainment"), 1.0, 0);
    json_decref(sj);
}

/* Cancelled after their second token, with an SLO of TTFT alone: the
 * first token came in time, so the SLO was decided and met, and every
 * request is judged. They were left out (slo_unjudged 24) while a late
 * first token would have counted, leaning attainment against the
 * server. */
static void test_cancel_after_ttft_met(void **state)
{
    int64_t cancelled;
    json_t *sj = cancel_run("--cancel-after-tokens", "2", &cancelled);
    assert_int_equal((int64_t)harness_num(sj, "throughput.slo_unjudged"), 0);
    ASSERT_NEAR(harness_num(sj, "throughput.attainment"), 1.0, 0);
    /* Goodput still counts ok requests alone: 40 - cancelled of them. */
    assert_int_equal((int64_t)harness_num(sj, "requests.ok"), 40 - cancelled);
    json_decref(sj);
}

/* Traffic classes from a workload file: every record names the class its
 * index drew, with that class's lengths; the summary breaks out each. */
static void test_classes(void **state)
{
    char *tmp = harness_tmpdir();
    char path[600];
    snprintf(path, sizeof path, "%s/w.json", tmp);
    harness_write_file(
        path, "{\"classes\": [\n"
              " {\"name\": \"short\", \"weight\": 3, \"prompt_tokens\": 16, \"output_tokens\": 4,"
              "  \"ignore_eos\": true},\n"
              " {\"name\": \"long\", \"weight\": 1, \"prompt_tokens\": 300, \"output_tokens\": 30,"
              "  \"ignore_eos\": true, \"api\": \"completions\", \"slo\": {\"ttft_ms\": 1000}}\n"
              "]}\n");
    const char *args[] = {"--rate", "20", "--duration", "3s", "--workload", path, NULL};
    char *dir = harness_run_on_sim(NULL, no_metrics, args);

    struct wl_file *wf = NULL;
    char err[300];
    assert_int_equal(wl_file_load(path, &wf, err, sizeof err), 0);
    struct workload w;
    harness_workload(&w, 1, "1", "1", 1);
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

/* The whole run's goodput and attainment count each request against its
 * class's SLO, as the class table and a sweep step do: a class's own SLO
 * replaces --slo for it. "tight" asks an E2E of 1 us, which no request
 * meets; "loose" an E2E of 60 s, which every ok request on the sim meets,
 * so the run's attainment is exactly the loose share of the scheduled
 * requests, whatever the timing (the old count judged both by --slo's
 * 60 s and gave 100%). Without --slo the classes' own still give the run
 * a goodput, and --expect attainment takes them. */
static void test_class_slo_whole_run(void **state)
{
    char *tmp = harness_tmpdir();
    char path[600];
    snprintf(path, sizeof path, "%s/w.json", tmp);
    harness_write_file(path, "{\"classes\": [\n"
                             " {\"name\": \"tight\", \"prompt_tokens\": 16, \"output_tokens\": 4,"
                             "  \"slo\": {\"e2e_ms\": 0.001}},\n"
                             " {\"name\": \"loose\", \"prompt_tokens\": 16, \"output_tokens\": 4,"
                             "  \"slo\": {\"e2e_ms\": 60000}}\n"
                             "]}\n");
    for (int with_slo = 1; with_slo >= 0; with_slo--) {
        harness_cur_sim_start(NULL);
        const char *args[] = {"--rate",         "20",
                              "--duration",     "2s",
                              "--workload",     path,
                              "--no-metrics",   "--expect",
                              "attainment>=1%", with_slo ? "--slo" : NULL,
                              "e2e=60s",        NULL};
        char *out = NULL, *err = NULL;
        char *dir = harness_run_sim_verdict("run", args, 60, &out, &err);
        json_t *s = harness_summary_load(dir);
        struct harness_recs *r = harness_requests_load(dir);
        double window_ns = harness_num(s, "window_ns");
        size_t n = 0, loose = 0, loose_ended = 0;
        for (size_t i = 0; i < r->n; i++) {
            json_t *x = r->items[i];
            assert_string_equal(harness_sval(x, "kind"), "ok");
            n++;
            if (strcmp(harness_sval(x, "class"), "loose") != 0)
                continue;
            loose++;
            loose_ended += (double)harness_ival(x, "end_ns") <= window_ns;
        }
        assert_true(loose > 5 && loose < n); /* the premise: both classes ran */
        ASSERT_NEAR(harness_num(s, "requests.scheduled"), (double)n, 0);
        ASSERT_NEAR(harness_num(s, "throughput.attainment"), (double)loose / (double)n, 1e-9);
        ASSERT_NEAR(harness_num(s, "throughput.goodput_per_s"),
                    (double)loose_ended / (window_ns / 1e9), 1e-9);
        assert_true(
            json_is_true(json_object_get(json_object_get(s, "throughput"), "slo_by_class")));
        const char *has[] = {with_slo ? "met their class's SLO (its own, else e2e=60s)"
                                      : "met their class's SLO (its own; a class without one",
                             NULL};
        harness_text_check("stdout", out, has, NULL);
        print_message("with --slo %d: %zu of %zu loose, attainment %.3f\n", with_slo, loose, n,
                      harness_num(s, "throughput.attainment"));
        json_decref(s);
        harness_recs_free(r);
        free(out);
        free(err);
        harness_results_free(dir);
        harness_sim_teardown(state);
    }
    harness_rm_rf(tmp);
    free(tmp);
}

/* Explicit bursts merge into the arrivals: count requests at exactly the
 * burst's offset, with its lengths, and the same schedule as the dump. */
static void test_bursts(void **state)
{
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
             cmocka_unit_test_teardown(test_salt_two_identical_runs, harness_sim_teardown),
             cmocka_unit_test_teardown(test_salt_keeps_schedule, harness_sim_teardown),
             cmocka_unit_test_teardown(test_salt_sweeps, harness_sim_teardown),
             cmocka_unit_test_teardown(test_cancel_after_tokens, harness_sim_teardown),
             cmocka_unit_test_teardown(test_cancel_after_time, harness_sim_teardown),
             cmocka_unit_test_teardown(test_cancel_not_an_slo_miss, harness_sim_teardown),
             cmocka_unit_test_teardown(test_cancel_after_ttft_met, harness_sim_teardown),
             cmocka_unit_test_teardown(test_classes, harness_sim_teardown),
             cmocka_unit_test_teardown(test_class_slo_whole_run, harness_sim_teardown),
             cmocka_unit_test_teardown(test_bursts, harness_sim_teardown))
