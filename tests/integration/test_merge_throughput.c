/* test_merge_throughput.c: the throughput a run intended and the span it
 * offered over, as `llmload merge` and `llmload report` rebuild them
 * (docs/distributed.md, "Merging the shards"; docs/formats.md's
 * intended_rate_per_s, offering_ns and scheduled_offering_rate_per_s),
 * end to end against `llmload sim`.
 *
 * - One process (`--shard 0/1`, the only run merge takes alone), merged
 *   and then rebuilt by `llmload report`: the merged and the rebuilt
 *   summary.json hold the run's own offered and intended rates, offering
 *   and scheduled rates over it, value for value, and both print the
 *   run's throughput lines word for word. Once for an open loop whose
 *   window runs on past its last arrival (--requests), once for a paced
 *   closed loop ("intended 4.00 req/s (2 users at one request per
 *   500.00ms)").
 * - Two shards merged: the whole's intended rate (the shards' own
 *   summaries give half of it each), the offering from the window's start
 *   to the latest sched_ns of either shard (constant arrivals at 20/s, 12
 *   of them: 550 ms, where shard 0's alone is 500 ms), and the scheduled
 *   rate over it, the 11 arrivals before the last over the span that ends
 *   at it (11 / 0.55 s, their 20.00/s; the parent counted all 12, 21.82);
 *   `llmload report` on the merged directory
 *   writes the same summary.json and prints the same lines.
 *
 * Before these were rebuilt, merge and report wrote the three figures as
 * null and printed a paced closed loop as "closed loop, no intended rate".
 *
 * All traffic is to 127.0.0.1, at most 20 requests/s, 12 per run; the
 * file takes about 10 s. */
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "harness.h"
#include "test.h"
#include "util/util.h"

/* An open loop of constant arrivals: 12 at 20/s, the last at 550 ms. */
#define OPEN_LOAD                                                                                  \
    "--rate", "20", "--arrival", "constant", "--requests", "12", "--output-tokens", "4",           \
        "--ignore-eos"

/* A paced closed loop: 2 users, one request each per 500 ms, 6 in all. */
#define PACED_LOAD                                                                                 \
    "--users", "2", "--pace", "500ms", "--requests", "6", "--output-tokens", "4", "--ignore-eos"

/* What every run here adds: one seed and salt (a sharded run needs one),
 * no /metrics scrape. */
#define COMMON "--seed", "9", "--prompt-salt", "5", "--no-metrics", "--quiet"

/* The throughput figures the merge rebuilds, and the offered rate beside them. */
static const char *const thr_keys[] = {
    "offered_rate_per_s",   "intended_rate_per_s", "offering_ns", "scheduled_offering_rate_per_s",
    "scheduled_rate_per_s",
};

/* The summary's throughput lines in text (the "throughput:" line and the
 * one beneath it about the offering, when there is one). */
#define THR_HEAD "throughput: "
#define THR_NEXT "            (scheduled over the "

/* Fail unless summaries a and b hold the same throughput.KEY, each of
 * thr_keys, exactly (null for null). */
static void thr_equal(json_t *a, json_t *b, const char *what)
{
    json_t *ta = json_object_get(a, "throughput"), *tb = json_object_get(b, "throughput");
    for (size_t i = 0; i < LL_ARRAY_LEN(thr_keys); i++) {
        json_t *x = json_object_get(ta, thr_keys[i]), *y = json_object_get(tb, thr_keys[i]);
        if (!x || !y || !json_equal(x, y)) {
            char *sx = x ? json_dumps(x, JSON_ENCODE_ANY) : NULL;
            char *sy = y ? json_dumps(y, JSON_ENCODE_ANY) : NULL;
            fail_msg("%s: throughput.%s: %s, the run's %s", what, thr_keys[i], sy ? sy : "absent",
                     sx ? sx : "absent");
        }
    }
}

/* The latest sched_ns of dir's records. */
static int64_t recs_last_sched(const char *dir)
{
    struct harness_recs *r = harness_requests_load(dir);
    int64_t last = -1;
    for (size_t i = 0; i < r->n; i++) {
        int64_t t = harness_ival_req(r->items[i], "sched_ns");
        last = t > last ? t : last;
    }
    harness_recs_free(r);
    return last;
}

/* `llmload ARGS...` exiting 0 or 1: its throughput lines (caller frees). */
static char *run_thr(const char *const *args)
{
    return harness_run_lines(args, THR_HEAD, THR_NEXT);
}

/* `llmload report dir`: summary.json must come out byte for byte as it
 * was, and the throughput lines printed must be want. */
static void report_same(const char *dir, const char *want)
{
    char path[700];
    snprintf(path, sizeof path, "%s/summary.json", dir);
    char *before = harness_read_file(path, NULL);
    const char *rep[] = {"report", dir, NULL};
    char *got = run_thr(rep);
    assert_string_equal(got, want);
    free(got);
    char *after = harness_read_file(path, NULL);
    assert_non_null(before);
    assert_non_null(after);
    assert_string_equal(after, before);
    free(before);
    free(after);
}

/* One process of load (NULL-terminated flags) with --shard 0/1 into
 * <tmp>/<name>, merged alone into <tmp>/<name>-merged, then rebuilt by
 * report: the merged and rebuilt summaries hold the run's throughput
 * figures exactly and print its lines, which must hold has (NULL: any).
 * Returns the run's summary (caller decrefs). */
static json_t *one_merged(const char *url, const char *name, const char *const *load,
                          const char *has)
{
    char dir[600], merged[600], leaf[64];
    harness_tmp_path(dir, sizeof dir, name);
    snprintf(leaf, sizeof leaf, "%s-merged", name);
    harness_tmp_path(merged, sizeof merged, leaf);
    const char *head[] = {"run", "--url", url, "--out", dir, "--shard", "0/1", COMMON, NULL};
    struct harness_argv a = {.n = 0};
    harness_argv_add(&a, head);
    harness_argv_add(&a, load);
    char *run_lines = run_thr(a.v);
    if (has)
        HARNESS_HAS(run_lines, has);
    const char *m[] = {"merge", dir, "--out", merged, NULL};
    char *merge_lines = run_thr(m);
    assert_string_equal(merge_lines, run_lines);
    json_t *s1 = harness_summary_load(dir), *sm = harness_summary_load(merged);
    thr_equal(s1, sm, "merged");
    json_decref(sm);
    report_same(merged, run_lines);
    free(merge_lines);
    free(run_lines);
    return s1;
}

/* A run merged alone, then rebuilt: the run's own figures and lines. */
static void test_report_matches_run(void **state)
{
    (void)state;
    char url[160];
    harness_sim_v1_start(url, sizeof url, NULL);
    const char *open[] = {OPEN_LOAD, NULL};
    json_t *s = one_merged(url, "open", open, NULL);
    /* each figure there to compare: not two nulls */
    json_t *thr = json_object_get(s, "throughput");
    ASSERT_NEAR(harness_num(thr, "intended_rate_per_s"), 20, 1e-9);
    ASSERT_NEAR(harness_num(thr, "offering_ns"), 550e6, 1e3);
    ASSERT_NEAR(harness_num(thr, "scheduled_offering_rate_per_s"), 11 / 0.55, 1e-4);
    json_decref(s);

    /* The count ends the offering at 550 ms and the drain (150 tokens,
     * 600 ms or more each) runs past --duration's 1 s: the window runs to
     * the last response and all 12 completions count, in the run as in
     * its merge (the parent's merge counted those that ended by 1 s). */
    const char *drain[] = {"--rate",     "20", "--arrival",       "constant", "--requests",   "12",
                           "--duration", "1s", "--output-tokens", "150",      "--ignore-eos", NULL};
    s = one_merged(url, "drain", drain, NULL);
    double window_s = (double)harness_ival(s, "window_ns") / 1e9;
    assert_true(window_s > 1.1);
    ASSERT_NEAR(harness_num(json_object_get(s, "throughput"), "completion_rate_per_s"),
                12 / window_s, 1e-6);
    json_decref(s);

    const char *paced[] = {PACED_LOAD, NULL};
    s = one_merged(url, "paced", paced, NULL);
    thr = json_object_get(s, "throughput");
    assert_true(harness_is_null(thr, "offered_rate_per_s"));
    ASSERT_NEAR(harness_num(thr, "intended_rate_per_s"), 4, 1e-9);
    assert_true(harness_num(thr, "offering_ns") > 0);
    json_decref(s);

    /* One arrival, at the window's start, and the count ended the
     * offering: no rate over it in run, merge and report, where the parent
     * read 1 over the drain's window ("scheduled 27.25 req/s"). */
    const char *one[] = {"--rate", "10", "--arrival", "constant", "--requests", "1", NULL};
    s = one_merged(url, "one", one, "(scheduled 1 request, no rate over one arrival)");
    thr = json_object_get(s, "throughput");
    assert_true(harness_is_null(thr, "offering_ns"));
    assert_true(harness_is_null(thr, "scheduled_offering_rate_per_s"));
    json_decref(s);

    /* One arrival at 0 under --duration (0.5/s for 1 s): the window is
     * the offering's own fixed time, and n over it is its count's rate,
     * 1.00, as for any --duration run. */
    const char *dur1[] = {"--rate", "0.5", "--arrival", "constant", "--duration", "1s", NULL};
    s = one_merged(url, "dur1", dur1, "(scheduled 1.00 req/s)");
    thr = json_object_get(s, "throughput");
    assert_true(harness_is_null(thr, "offering_ns"));
    ASSERT_NEAR(harness_num(thr, "scheduled_rate_per_s"), 1, 1e-9);
    json_decref(s);
}

/* Two shards of load (NULL-terminated flags), --shard K/2 into
 * <tmp>/<prefix>K, merged into <tmp>/<prefix>-merged (its path into
 * merged). Returns the merged summary (caller decrefs); *lines gets the
 * merge's throughput lines (caller frees). */
static json_t *two_merged(const char *url, const char *prefix, const char *const *load,
                          char sd[2][600], char *merged, size_t len, char **lines)
{
    const char *common[] = {COMMON, NULL};
    struct harness_argv a = {.n = 0};
    harness_argv_add(&a, common);
    harness_argv_add(&a, load);
    harness_two_shards_run(url, prefix, a.v, sd);
    char leaf[64];
    snprintf(leaf, sizeof leaf, "%s-merged", prefix);
    harness_tmp_path(merged, len, leaf);
    const char *m[] = {"merge", sd[1], sd[0], "--out", merged, NULL};
    *lines = run_thr(m);
    return harness_summary_load(merged);
}

/* Two shards merged: the whole's intended rate, the offering to the
 * latest arrival of either, the scheduled rate over it; report agrees. */
static void test_two_shards_merged(void **state)
{
    (void)state;
    char url[160], sd[2][600], merged[600], *lines = NULL;
    harness_sim_v1_start(url, sizeof url, NULL);

    const char *open[] = {OPEN_LOAD, NULL};
    json_t *sm = two_merged(url, "o", open, sd, merged, sizeof merged, &lines);
    json_t *thr = json_object_get(sm, "throughput");
    int64_t last = recs_last_sched(merged);
    ASSERT_NEAR((double)last, 550e6, 1e3);
    assert_int_equal(harness_ival_req(thr, "offering_ns"), last);
    ASSERT_NEAR(harness_num(thr, "offered_rate_per_s"), 20, 1e-9);
    ASSERT_NEAR(harness_num(thr, "intended_rate_per_s"), 20, 1e-9);
    assert_int_equal(harness_ival_req(json_object_get(sm, "requests"), "scheduled"), 12);
    ASSERT_NEAR(harness_num(thr, "scheduled_offering_rate_per_s"), 11 / ((double)last / 1e9), 1e-9);
    /* shard 0's own: the even ids, the last at 500 ms, and half the rate */
    json_t *s0 = harness_summary_load(sd[0]);
    json_t *t0 = json_object_get(s0, "throughput");
    ASSERT_NEAR(harness_num(t0, "offering_ns"), 500e6, 1e3);
    ASSERT_NEAR(harness_num(t0, "intended_rate_per_s"), 10, 1e-9);
    json_decref(s0);
    HARNESS_HAS(lines, "throughput: offered 20.00 req/s (scheduled 20.00 req/s over the ",
                "of offering)", "            (scheduled over the ");
    report_same(merged, lines);
    free(lines);
    json_decref(sm);

    const char *paced[] = {PACED_LOAD, NULL};
    sm = two_merged(url, "p", paced, sd, merged, sizeof merged, &lines);
    thr = json_object_get(sm, "throughput");
    last = recs_last_sched(merged);
    assert_true(last > 0);
    assert_true(harness_is_null(thr, "offered_rate_per_s"));
    ASSERT_NEAR(harness_num(thr, "intended_rate_per_s"), 4, 1e-9);
    assert_int_equal(harness_ival_req(thr, "offering_ns"), last);
    ASSERT_NEAR(harness_num(thr, "scheduled_offering_rate_per_s"), 5 / ((double)last / 1e9), 1e-9);
    for (int k = 0; k < 2; k++) {
        json_t *s = harness_summary_load(sd[k]);
        ASSERT_NEAR(harness_num(json_object_get(s, "throughput"), "intended_rate_per_s"), 2, 1e-9);
        json_decref(s);
    }
    HARNESS_HAS(lines, "throughput: intended 4.00 req/s (2 users at one request per 500.00ms), "
                       "scheduled ");
    report_same(merged, lines);
    free(lines);
    json_decref(sm);
}

HARNESS_MAIN(cmocka_unit_test_teardown(test_report_matches_run, harness_sim_tmp_teardown),
             cmocka_unit_test_teardown(test_two_shards_merged, harness_sim_tmp_teardown))
