/* Integration tests of `llmload compare` of sweeps run here against
 * `llmload sim` on 127.0.0.1 (the saved-sweep tests are
 * test_compare_sweep.c):
 *
 * - a sweep with --repeat 2 and --step-duration auto holds its repeats
 *   for different lengths; compare counts each repeat's output tokens in
 *   that repeat's own window, so the output tok/s row's difference agrees
 *   with its two values and the candidate's value with the records.
 *
 * - the sim with a 20% slower decode step comes out worse on TPOT and on
 *   its SLO capacity, whose bracket lies wholly below the baseline's,
 *   and fails --fail-on capacity:-10%.
 *
 * - a sweep of only empty steps (no request scheduled in any window) has
 *   no capacity (not_judged), and a rate empty on both sides no rows.
 *
 * - two sweeps of one sim with other seeds draw other Poisson schedules:
 *   their achieved rate is judged per scheduled request, not per second,
 *   their output tok/s on both scales (same when either explains the
 *   difference); with --cold-start, output tok/s per request scheduled in
 *   the window cold ones included, as its tokens are counted.
 *
 * - past the capacity, other seeds' goodput and output tok/s are the
 *   server's pace, the same both ways with the values' own difference;
 *   a sim with a step twice as long reads worse on both.
 *
 * Every sweep is short (steps of 1 to 3 s at 8 req/s or less, against the
 * small sim: 4 sequences, a 20 ms decode step; past the capacity, 4 s at
 * 40 req/s against 8 sequences) and sets
 * --lateness-tolerance 100% (its most): a late wake-up of the generator
 * on a loaded 2-core VM must not make a step INVALID (and so leave its
 * rate out of the comparison); what these tests judge is compare, not
 * the generator. */
#include <jansson.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "harness.h"
#include "test.h"

static struct harness_sim sims[2];

/* Stop both sims (safe on one not running). */
static void sims_stop(void)
{
    for (size_t i = 0; i < sizeof sims / sizeof sims[0]; i++)
        harness_sim_stop(&sims[i]);
}

/* A comparison's places in the test's temporary directory: the
 * baseline sweep's results in <tmp>/base, the candidate's in
 * <tmp>/cand_name, compare's in <tmp>/cmp. */
struct cmp_dirs {
    char base[700], cand[700], out[700];
};

static void cmp_dirs_init(struct cmp_dirs *d, const char *cand_name)
{
    harness_tmp_path(d->base, sizeof d->base, "base");
    harness_tmp_path(d->cand, sizeof d->cand, cand_name);
    harness_tmp_path(d->out, sizeof d->out, "cmp");
}

/* How each test against the small sim begins: a fresh temporary
 * directory, sims[0] started as the small sim (HARNESS_SMALL_SIM), and the
 * comparison's places in d (the candidate's in <tmp>/cand_name). */
static void small_sim_compare_begin(struct cmp_dirs *d, const char *cand_name)
{
    const char *small[] = {HARNESS_SMALL_SIM, NULL};
    harness_tmp_begin();
    assert_int_equal(harness_sim_start(&sims[0], small), 0);
    cmp_dirs_init(d, cand_name);
}

static int teardown(void **state)
{
    (void)state;
    sims_stop();
    harness_tmp_end();
    return 0;
}

/* The workload and the sweep's fixed flags: constant arrivals of 64
 * prompt and 16 output tokens (ignore_eos), no recovery step. */
#define SWEEP_COMMON                                                                               \
    "--prompt-tokens", "64", "--output-tokens", "16", "--ignore-eos", "--arrival", "constant",     \
        "--warmup", "0.5s", "--no-recovery", "--lateness-tolerance", "100%", "--quiet", "--force"

/* `llmload sweep` against sim into dir with args (NULL-terminated) after
 * SWEEP_COMMON; it must exit want. */
static void sweep_exits(const struct harness_sim *sim, const char *dir, const char *const *args,
                        int want)
{
    char url[160];
    snprintf(url, sizeof url, "%s/v1", sim->url);
    struct harness_argv a = {0};
    const char *fixed[] = {"sweep", "--url", url, "--out", dir, SWEEP_COMMON, NULL};
    harness_argv_add(&a, fixed);
    harness_argv_add(&a, args);
    free(harness_run_expect(a.v, 120, want, NULL));
}

static void sweep_ok(const struct harness_sim *sim, const char *dir, const char *const *args)
{
    sweep_exits(sim, dir, args, 0);
}

/* `llmload compare base cand --out out --quiet [extra]`, which must exit
 * want; returns compare.json. */
static json_t *compare_run(const char *base, const char *cand, const char *out,
                           const char *const *extra, int want)
{
    struct harness_argv a = {0};
    const char *fixed[] = {"compare", base, cand, "--out", out, "--force", "--quiet", NULL};
    harness_argv_add(&a, fixed);
    if (extra)
        harness_argv_add(&a, extra);
    free(harness_run_expect(a.v, 60, want, NULL));
    return harness_json_load(out, "compare.json");
}

/* The output tokens per second of dir's load steps at rate, as the sweep
 * defines them: each step's ok requests that ended in its own window
 * [warmup_ns, duration_ns), summed over the steps, over the sum of their
 * windows. *windows gets each step's window_ns (at most 8). */
static double tokens_per_s_truth(const char *dir, double rate, int64_t *windows, size_t *n_win)
{
    char path[800];
    snprintf(path, sizeof path, "%s/steps.jsonl", dir);
    json_t *steps = harness_jsonl_load(path);
    snprintf(path, sizeof path, "%s/requests.jsonl", dir);
    json_t *recs = harness_jsonl_load(path);
    double tokens = 0, window_ns = 0;
    *n_win = 0;
    size_t i;
    json_t *s;
    json_array_foreach(steps, i, s)
    {
        if (strcmp(harness_sval(s, "kind"), "load") != 0 ||
            fabs(harness_num(s, "offered_rps") - rate) > 1e-9)
            continue;
        assert_true(*n_win < 8);
        windows[(*n_win)++] = harness_ival(s, "window_ns");
        window_ns += (double)harness_ival(s, "window_ns");
        tokens += harness_step_window_tokens(recs, s);
    }
    json_decref(steps);
    json_decref(recs);
    assert_true(window_ns > 0);
    return tokens / (window_ns / 1e9);
}

/* --repeat 2 with --step-duration auto:1s: the first repeat holds 1 s, the
 * second 5 x the first's E2E p99 (16 steps of 20 ms or more: over 320 ms,
 * so 2 s or more once rounded up), so their windows differ by a second or
 * more. Compared with a sweep of one 2 s step at the same rate, the
 * candidate's output tok/s is the records' (each repeat's own window),
 * and the row's difference is its two values' (candidate / baseline - 1):
 * a shared window (the first repeat's) would count only the second
 * repeat's first second, a third of its tokens. */
static void test_compare_sweep_repeat_own_windows(void **state)
{
    (void)state;
    struct cmp_dirs places;
    small_sim_compare_begin(&places, "rep");
    const char *fixed_hold[] = {"--rates", "8", "--step-duration", "2s", NULL};
    sweep_ok(&sims[0], places.base, fixed_hold);
    const char *auto_hold[] = {
        "--rates", "8", "--repeat", "2", "--step-duration", "auto:1s", "--max-step-duration",
        "3s",      NULL};
    sweep_ok(&sims[0], places.cand, auto_hold);
    harness_sim_stop(&sims[0]);

    int64_t win[8];
    size_t nw = 0;
    double truth = tokens_per_s_truth(places.cand, 8, win, &nw);
    assert_int_equal(nw, 2);
    if (!(win[1] >= win[0] + 900000000LL))
        fail_msg("the premise: the second repeat holds longer (windows %lld and %lld ns)",
                 (long long)win[0], (long long)win[1]);

    json_t *j = compare_run(places.base, places.cand, places.out, NULL, 0);
    json_t *rates = json_object_get(json_array_get(json_object_get(j, "candidates"), 0), "rates");
    assert_int_equal(json_array_size(rates), 1);
    json_t *r =
        harness_row_named(json_object_get(json_array_get(rates, 0), "rows"), "output_tokens_per_s");
    double b = harness_num(r, "baseline"), c = harness_num(r, "candidate");
    double d = harness_num(json_object_get(r, "diff"), "value");
    printf("output tok/s at 8 req/s: baseline %.2f, candidate %.2f (records: %.2f), diff %+.4f "
           "(values: %+.4f)\n",
           b, c, truth, d, c / b - 1);
    if (fabs(c - truth) > 1e-6 * truth)
        fail_msg("candidate output tok/s %.4f, the records say %.4f", c, truth);
    if (fabs(d - (c / b - 1)) > 1e-6)
        fail_msg("output tok/s diff %+.6f, its values say %+.6f", d, c / b - 1);
    json_decref(j);
}

/* Rewrite the hold rule's factor in sweep dir's run.json (config.sweep):
 * compare reads the sweep under it as `llmload report` would. */
static void set_min_hold(const char *dir, double factor)
{
    json_t *run = harness_json_load(dir, "run.json");
    json_t *sw = json_object_get(json_object_get(run, "config"), "sweep");
    assert_non_null(sw);
    json_object_set_new(sw, "min_hold_factor", json_real(factor));
    char path[800];
    snprintf(path, sizeof path, "%s/run.json", dir);
    assert_int_equal(json_dump_file(run, path, JSON_INDENT(2)), 0);
    json_decref(run);
}

/* The sim with a 20% slower decode step (24 ms against 20 ms) against
 * the small sim, each swept at 4 and 8 req/s (3 s holds) with the SLO
 * tpot=23ms at 50% attainment. The premise holds by construction, with a
 * wide margin: the slower sim's every decode step lasts 24 ms or more, so
 * (barring a catch-up burst after a stall) none of its requests meets the
 * SLO and its lowest rate fails; the small sim's TPOT is 20-21 ms (the
 * step, 150 us per sequence, 10 us per prefill token), and only a VM
 * slowing half its requests' decode by 10% for seconds would fail a step
 * at 50% attainment. So the baseline's capacity bracket starts at 8 req/s
 * (at 4 if a rate failed, disputed by --confirm's re-run otherwise) and
 * the candidate's is [0, 4]: compare must call the capacity worse with
 * brackets apart, and TPOT p50 worse by about 20% at both rates. */
static void test_compare_sweep_slower_decode_sim(void **state)
{
    (void)state;
    struct cmp_dirs places;
    small_sim_compare_begin(&places, "slow");
    const char *slower[] = {HARNESS_SMALL_SIM, "--step-base", "24ms", NULL};
    assert_int_equal(harness_sim_start(&sims[1], slower), 0);
    const char *ladder[] = {"--rates",      "4,8",   "--step-duration",
                            "3s",           "--slo", "tpot=23ms",
                            "--attainment", "50",    NULL};
    sweep_ok(&sims[0], places.base, ladder);
    sweep_ok(&sims[1], places.cand, ladder);
    sims_stop();

    json_t *j = compare_run(places.base, places.cand, places.out, NULL, 0);
    json_t *b = json_object_get(j, "baseline");
    json_t *c = json_array_get(json_object_get(j, "candidates"), 0);
    json_t *bc = json_object_get(b, "capacity"), *cc = json_object_get(c, "capacity");
    assert_true(json_is_true(json_object_get(bc, "found")));
    assert_true(json_is_true(json_object_get(cc, "found")));
    printf("SLO capacity: baseline %g [%g, %s], candidate %g [%g, %g]\n", harness_num(bc, "value"),
           harness_num(bc, "lo"), harness_is_null(bc, "hi") ? "-" : "bounded",
           harness_num(cc, "value"), harness_num(cc, "lo"), harness_num(cc, "hi"));
    /* The candidate's bracket is closed above and lies wholly below the
     * baseline's. */
    assert_false(harness_is_null(cc, "hi"));
    if (!(harness_num(cc, "hi") < harness_num(bc, "lo")))
        fail_msg("capacity brackets overlap: candidate [%g, %g], baseline from %g",
                 harness_num(cc, "lo"), harness_num(cc, "hi"), harness_num(bc, "lo"));
    assert_string_equal(harness_sval(json_object_get(c, "capacity_verdict"), "verdict"), "worse");
    json_t *cd = json_object_get(json_object_get(c, "capacity_verdict"), "diff");
    assert_true(harness_num(cd, "hi") < 0);

    /* TPOT p50 worse by about the step's 20% at both rates (the per-sequence
     * and prefill costs, the same on both, dilute it a little). */
    json_t *rates = json_object_get(c, "rates");
    assert_int_equal(json_array_size(rates), 2);
    size_t i;
    json_t *rate;
    json_array_foreach(rates, i, rate)
    {
        json_t *r = harness_row_named(json_object_get(rate, "rows"), "tpot_p50");
        double d = harness_num(json_object_get(r, "diff"), "value");
        printf("at %g req/s: TPOT p50 %+.1f%%, %s\n", harness_num(rate, "offered_rps"), 100 * d,
               harness_sval(r, "verdict"));
        if (!(d > 0.10 && d < 0.30))
            fail_msg("TPOT p50 %+.3f at %g req/s, want +10%% to +30%%", d,
                     harness_num(rate, "offered_rps"));
        assert_string_equal(harness_sval(r, "verdict"), "worse");
    }
    json_decref(j);

    /* --fail-on capacity:-10%: the capacity fell by more, outside the
     * brackets: exit 1, said on stderr, and the candidate's fail_on. */
    const char *gate[] = {"--fail-on", "capacity:-10%", NULL};
    j = compare_run(places.base, places.cand, places.out, gate, 1);
    c = json_array_get(json_object_get(j, "candidates"), 0);
    assert_string_equal(harness_sval(json_array_get(json_object_get(c, "fail_on"), 0), "result"),
                        "fail");
    assert_int_equal(harness_ival(j, "exit_status"), 1);
    json_decref(j);

    /* The same sweeps under a hold rule no step meets (min_hold_factor
     * 1000): each capacity rests on short steps, whose passes and misses a
     * longer hold may turn, so the brackets apart are no verdict: same,
     * because short_steps, the interval unbounded above, and the gate
     * inconclusive (5), not failed. */
    set_min_hold(places.base, 1000);
    set_min_hold(places.cand, 1000);
    j = compare_run(places.base, places.cand, places.out, gate, 5);
    b = json_object_get(j, "baseline");
    c = json_array_get(json_object_get(j, "candidates"), 0);
    assert_true(json_is_true(json_object_get(json_object_get(b, "capacity"), "on_short_steps")));
    assert_true(json_is_true(json_object_get(json_object_get(c, "capacity"), "on_short_steps")));
    json_t *cv = json_object_get(c, "capacity_verdict");
    assert_string_equal(harness_sval(cv, "verdict"), "same");
    assert_string_equal(harness_sval(cv, "same_because"), "short_steps");
    assert_true(harness_is_null(json_object_get(cv, "diff"), "hi"));
    assert_string_equal(harness_sval(json_array_get(json_object_get(c, "fail_on"), 0), "result"),
                        "inconclusive");
    json_decref(j);
}

/* A sweep whose every step is empty (0.3 req/s, constant arrivals, a 1 s
 * hold after a 0.5 s warm-up: its first request goes at 0 s, in the
 * warm-up, its second at 3.3 s, after the step: none is scheduled in the
 * window, by construction) has no capacity: compare says not_judged, as
 * for a sweep of INVALID steps, and calls no capacity verdict; it did not
 * find the capacity [0, 0.3] and call it worse than the baseline's. The
 * baseline's 0.3 req/s step is empty too, so the one rate both ran has
 * no step with a request on either side: no per-rate rows for it. */
static void test_compare_sweep_empty_steps_sim(void **state)
{
    (void)state;
    struct cmp_dirs places;
    small_sim_compare_begin(&places, "empty");
    const char *ladder[] = {"--rates", "0.3,8", "--step-duration", "1s", "--slo", "ttft=5s", NULL};
    const char *low[] = {"--rates", "0.3", "--step-duration", "1s", "--slo", "ttft=5s", NULL};
    sweep_ok(&sims[0], places.base, ladder);
    sweep_exits(&sims[0], places.cand, low, 1); /* no step could be judged */
    harness_sim_stop(&sims[0]);

    /* The premise, from the sweeps' own summaries: 0.3 req/s is places.cand on
     * both sides, 8 req/s (8 requests in its window) is not. */
    json_t *sb = harness_json_load(places.base, "summary.json");
    json_t *se = harness_json_load(places.cand, "summary.json");
    json_t *steps = json_object_get(sb, "steps");
    assert_string_equal(harness_sval(json_array_get(steps, 0), "verdict"), "empty");
    assert_string_not_equal(harness_sval(json_array_get(steps, 1), "verdict"), "empty");
    assert_string_equal(harness_sval(json_array_get(json_object_get(se, "steps"), 0), "verdict"),
                        "empty");
    json_decref(sb);
    json_decref(se);

    json_t *j = compare_run(places.base, places.cand, places.out, NULL, 0);
    json_t *c = json_array_get(json_object_get(j, "candidates"), 0);
    json_t *cc = json_object_get(c, "capacity");
    printf("empty sweep's capacity: found %d, why %s; capacity verdict %s\n",
           json_is_true(json_object_get(cc, "found")),
           harness_is_null(cc, "why") ? "null" : harness_sval(cc, "why"),
           harness_sval(json_object_get(c, "capacity_verdict"), "verdict"));
    assert_true(json_is_false(json_object_get(cc, "found")));
    assert_string_equal(harness_sval(cc, "why"), "not_judged");
    assert_string_not_equal(harness_sval(json_object_get(c, "capacity_verdict"), "verdict"),
                            "worse");
    assert_int_equal(json_array_size(json_object_get(c, "rates")), 0);
    json_decref(j);
}

/* Two Poisson sweeps of one default sim at 20 req/s for 3 s, seeds 5 and
 * 4 (more flags after them, NULL-terminated), into <tmp>/5 and <tmp>/4
 * (dirs), compared as baseline and candidate: compare.json (caller
 * decrefs), its one rate in *rate. The default sim serves 20 req/s of
 * these well below its capacity (the small one's 4 sequences would
 * saturate). */
static json_t *seed_sweeps_compared(const char *const *more, char dirs[2][700], json_t **rate)
{
    assert_int_equal(harness_sim_start(&sims[0], NULL), 0);
    const char *seeds[2] = {"5", "4"};
    for (int i = 0; i < 2; i++) {
        harness_tmp_path(dirs[i], sizeof dirs[i], seeds[i]);
        const char *head[] = {"--rates", "20",     "--step-duration", "3s", "--arrival",
                              "poisson", "--seed", seeds[i],          NULL};
        struct harness_argv a = {0};
        harness_argv_add(&a, head);
        harness_argv_add(&a, more);
        sweep_ok(&sims[0], dirs[i], a.v);
    }
    harness_sim_stop(&sims[0]);
    char out[700];
    harness_tmp_path(out, sizeof out, "cmp");
    json_t *j = compare_run(dirs[0], dirs[1], out, NULL, 0);
    *rate = json_array_get(
        json_object_get(json_array_get(json_object_get(j, "candidates"), 0), "rates"), 0);
    assert_non_null(*rate);
    return j;
}

/* Two Poisson sweeps of one sim at 20 req/s with seeds 5 and 4 draw
 * 43 and 72 requests in their 3 s windows: the
 * client's arrivals, which the server does not set. Per second the
 * parent read the candidate's achieved rate +67% (and output tok/s
 * likewise) better; the achieved rate per scheduled request is about 0,
 * same, and output tok/s, below the capacity, is about 0 per scheduled
 * request and +67% per second, its interval spanning both: same. */
static void test_compare_sweep_other_seeds_sim(void **state)
{
    (void)state;
    harness_tmp_begin();
    char dirs[2][700];
    json_t *k;
    json_t *j = seed_sweeps_compared(NULL, dirs, &k);
    json_t *rows = json_object_get(k, "rows");
    json_t *ach = harness_row_named(rows, "achieved_rate");
    /* the premise: the candidate sent half again as many a second */
    assert_true(harness_num(ach, "candidate") > 1.4 * harness_num(ach, "baseline"));
    ASSERT_NEAR(harness_num(json_object_get(ach, "diff"), "value"), 0, 0.05);
    assert_string_equal(harness_sval(ach, "verdict"), "same");
    json_t *r = harness_row_named(rows, "output_tokens_per_s");
    json_t *d = json_object_get(r, "diff");
    ASSERT_NEAR(harness_num(json_object_get(r, "per_scheduled"), "value"), 0, 0.05);
    ASSERT_NEAR(harness_num(d, "value"),
                harness_num(r, "candidate") / harness_num(r, "baseline") - 1, 1e-9);
    /* the interval spans the one per scheduled request */
    assert_true(harness_num(d, "lo") <= harness_num(json_object_get(r, "per_scheduled"), "lo"));
    assert_string_equal(harness_sval(r, "verdict"), "same");
    assert_true(json_is_true(json_object_get(k, "rates_per_scheduled")));
    json_decref(j);
}

/* Of dir's one step, from its records: the requests scheduled in its
 * window, cold ones included (*n), the warm ones (*warm), and the output
 * tokens of ok requests that ended in it (*tokens); *tps and *achieved
 * are its summary.json's output_tokens_per_s and achieved_rps. */
static void cold_step_counts(const char *dir, double *n, double *warm, double *tokens, double *tps,
                             double *achieved)
{
    json_t *steps = harness_jsonl_in(dir, "steps.jsonl");
    json_t *step = json_array_get(steps, 0);
    json_t *recs = harness_jsonl_in(dir, "requests.jsonl");
    int64_t lo = harness_ival(step, "warmup_ns");
    *n = *warm = 0;
    size_t i;
    json_t *x;
    json_array_foreach(recs, i, x)
    {
        if (harness_ival(x, "step") == 0 && harness_ival(x, "sched_ns") >= lo) {
            *n += 1;
            *warm += !json_is_true(json_object_get(x, "cold"));
        }
    }
    assert_int_equal((int64_t)*warm, harness_ival(step, "scheduled"));
    *tokens = harness_step_window_tokens(recs, step);
    json_decref(steps);
    json_decref(recs);
    json_t *sum = harness_summary_load(dir);
    json_t *st = json_array_get(json_object_get(sum, "steps"), 0);
    *tps = harness_num(st, "output_tokens_per_s");
    *achieved = harness_num(st, "achieved_rps");
    json_decref(sum);
}

/* The seeds 5 and 4 again, with --cold-start 30: 20 and 57 warm requests
 * scheduled in the 3 s window, 43 and 72 with the cold ones. A step's
 * output tok/s counts its cold requests' tokens (docs/sweep.md), its
 * achieved rate only warm sends. Over the warm requests alone the
 * parent read "output tok/s -40% [-60%, -14%] worse" of one server;
 * over the requests they are of, the difference per scheduled request
 * is the records' own ratio (cold ones in both counts), the difference
 * shown is the values' (per second), the verdict same, and each column
 * stays its sweep's figure per second. */
static void test_compare_sweep_cold_start_sim(void **state)
{
    (void)state;
    harness_tmp_begin();
    char dirs[2][700];
    double n[2], warm[2], tokens[2], tps[2], achieved[2];
    const char *more[] = {"--cold-start", "30", "--output-tokens", "4", NULL};
    json_t *k;
    json_t *j = seed_sweeps_compared(more, dirs, &k);
    for (int i = 0; i < 2; i++)
        cold_step_counts(dirs[i], &n[i], &warm[i], &tokens[i], &tps[i], &achieved[i]);
    printf("scheduled in the window (warm): %.0f (%.0f), %.0f (%.0f); tokens ended in it: %.0f, "
           "%.0f\n",
           n[0], warm[0], n[1], warm[1], tokens[0], tokens[1]);
    /* the premise: the schedules (a function of the seed) put other
     * shares of cold requests in the windows */
    assert_int_equal((int)warm[0], 20);
    assert_int_equal((int)warm[1], 57);
    assert_int_equal((int)n[0], 43);
    assert_int_equal((int)n[1], 72);
    json_t *rows = json_object_get(k, "rows");
    json_t *r = harness_row_named(rows, "output_tokens_per_s");
    double want = (tokens[1] / n[1]) / (tokens[0] / n[0]) - 1;
    double d = harness_num(json_object_get(r, "per_scheduled"), "value");
    printf("output tok/s per scheduled: %+.4f, the records: %+.4f, %s\n", d, want,
           harness_sval(r, "verdict"));
    ASSERT_NEAR(d, want, 1e-9);
    ASSERT_NEAR(harness_num(json_object_get(r, "diff"), "value"), tps[1] / tps[0] - 1, 1e-9);
    assert_string_equal(harness_sval(r, "verdict"), "same");
    ASSERT_NEAR(harness_num(r, "baseline"), tps[0], 1e-9 * tps[0]);
    ASSERT_NEAR(harness_num(r, "candidate"), tps[1], 1e-9 * tps[1]);
    r = harness_row_named(rows, "achieved_rate");
    assert_string_equal(harness_sval(r, "verdict"), "same");
    ASSERT_NEAR(harness_num(r, "baseline"), achieved[0], 1e-9 * achieved[0]);
    ASSERT_NEAR(harness_num(r, "candidate"), achieved[1], 1e-9 * achieved[1]);
    json_decref(j);
}

/* The sim with 8 sequences serves about 23 req/s of these (64 prompt, 16
 * output tokens); at 40 req/s offered for 4 s its queue grows through
 * the step, and what it finishes in the window is its own pace, not the
 * schedule's. Seeds 1176 and 135 draw 119 and 204 arrivals in that window
 * (30 and 51 req/s: each past the capacity, by 1.3 and 2.2 times). */
#define PAST_SIM "--max-num-seqs", "8", "--step-base", "20ms"
#define PAST_LOW_SEED "1176"
#define PAST_HIGH_SEED "135"

/* Start sims[0] as that sim and sims[1] with a step twice as long (40
 * ms): half its capacity. */
static void past_sims_start(void)
{
    const char *fast[] = {PAST_SIM, NULL};
    const char *slow[] = {"--max-num-seqs", "8", "--step-base", "40ms", NULL};
    assert_int_equal(harness_sim_start(&sims[0], fast), 0);
    assert_int_equal(harness_sim_start(&sims[1], slow), 0);
}

/* A sweep of sim at 40 req/s for 4 s with seed, into <tmp>/name (dir). */
static void past_capacity_sweep(const struct harness_sim *sim, const char *seed, const char *name,
                                char *dir, size_t len)
{
    harness_tmp_path(dir, len, name);
    const char *args[] = {"--rates", "40", "--step-duration", "4s",      "--arrival", "poisson",
                          "--seed",  seed, "--slo",           "e2e=60s", NULL};
    sweep_ok(sim, dir, args);
}

/* compare base cand: its one rate's rows. */
static json_t *past_capacity_rows(const char *base, const char *cand, json_t **doc)
{
    char out[700];
    harness_tmp_path(out, sizeof out, "cmp");
    *doc = compare_run(base, cand, out, NULL, 0);
    json_t *rates =
        json_object_get(json_array_get(json_object_get(*doc, "candidates"), 0), "rates");
    assert_int_equal(json_array_size(rates), 1);
    return json_object_get(json_array_get(rates, 0), "rows");
}

/* The premise of the tests past the capacity: the first step of the sweep
 * in dir scheduled want requests in its window (a function of the seed). */
static void assert_first_scheduled(const char *dir, int64_t want)
{
    json_t *steps = harness_jsonl_in(dir, "steps.jsonl");
    assert_int_equal(harness_ival(json_array_get(steps, 0), "scheduled"), want);
    json_decref(steps);
}

/* Two sweeps of one sim past its capacity whose schedules drew 119 and
 * 204 arrivals in the window: each finished what the server could, about
 * 93 requests. Per scheduled request, the parent read the one that drew
 * fewer as better by half again (and the other way round, worse), with
 * a difference whose sign could go against the two values beside it.
 * Now goodput and output tok/s are the same both ways, each difference
 * the values' own ratio, its interval per second's alone (both sides
 * fell behind their schedules, cmp_kept_up). The sim with a step twice as long (40 ms), same
 * seed, finishes about 55% as many: worse on both rows. */
static void test_compare_sweep_past_capacity_sim(void **state)
{
    (void)state;
    harness_tmp_begin();
    past_sims_start();
    char low[700], high[700], slower[700];
    past_capacity_sweep(&sims[0], PAST_LOW_SEED, "low", low, sizeof low);
    past_capacity_sweep(&sims[0], PAST_HIGH_SEED, "high", high, sizeof high);
    past_capacity_sweep(&sims[1], PAST_HIGH_SEED, "slower", slower, sizeof slower);
    sims_stop();

    /* The premise: the schedules' counts (a function of the seed), and
     * both sides past the capacity (they finished well under what they
     * sent). */
    const char *dirs[2] = {low, high};
    assert_first_scheduled(low, 119);
    assert_first_scheduled(high, 204);

    const char *names[] = {"goodput", "output_tokens_per_s"};
    for (int dir = 0; dir < 2; dir++) {
        json_t *j;
        json_t *rows = past_capacity_rows(dirs[dir], dirs[1 - dir], &j);
        json_t *ach = harness_row_named(rows, "achieved_rate");
        json_t *gp = harness_row_named(rows, "goodput");
        assert_true(harness_num(gp, "baseline") < 0.9 * harness_num(ach, "baseline"));
        assert_true(harness_num(gp, "candidate") < 0.9 * harness_num(ach, "candidate"));
        for (int i = 0; i < 2; i++) {
            json_t *r = harness_row_named(rows, names[i]);
            double b = harness_num(r, "baseline"), c = harness_num(r, "candidate");
            json_t *d = json_object_get(r, "diff");
            printf("%s -> %s: %s %.2f -> %.2f, %+.1f%% [%+.1f%%, %+.1f%%] %s\n",
                   dir ? "high" : "low", dir ? "low" : "high", names[i], b, c,
                   100 * harness_num(d, "value"), 100 * harness_num(d, "lo"),
                   100 * harness_num(d, "hi"), harness_sval(r, "verdict"));
            /* the difference is the values' (its sign theirs) */
            if (fabs(harness_num(d, "value") - (c / b - 1)) > 1e-9)
                fail_msg("%s: diff %+.4f, its values say %+.4f", names[i], harness_num(d, "value"),
                         c / b - 1);
            assert_string_equal(harness_sval(r, "verdict"), "same");
            /* and its interval is per second's alone: both sides fell
             * behind their schedules, so per scheduled request (reported
             * beside it) does not widen it */
            json_t *ps = json_object_get(r, "per_scheduled");
            printf("  per scheduled request %+.1f%% [%+.1f%%, %+.1f%%]\n",
                   100 * harness_num(ps, "value"), 100 * harness_num(ps, "lo"),
                   100 * harness_num(ps, "hi"));
            assert_true(harness_num(d, "lo") > harness_num(ps, "lo") ||
                        harness_num(d, "hi") < harness_num(ps, "hi"));
        }
        json_decref(j);
    }

    /* The slower server, same schedule: worse on both. */
    json_t *j;
    json_t *rows = past_capacity_rows(high, slower, &j);
    for (int i = 0; i < 2; i++) {
        json_t *r = harness_row_named(rows, names[i]);
        double d = harness_num(json_object_get(r, "diff"), "value");
        printf("slower step: %s %.2f -> %.2f, %+.1f%% [%+.1f%%, %+.1f%%] %s\n", names[i],
               harness_num(r, "baseline"), harness_num(r, "candidate"), 100 * d,
               100 * harness_num(json_object_get(r, "diff"), "lo"),
               100 * harness_num(json_object_get(r, "diff"), "hi"), harness_sval(r, "verdict"));
        assert_true(d < -0.25);
        assert_string_equal(harness_sval(r, "verdict"), "worse");
    }
    json_decref(j);
}

/* A candidate with half the capacity (a 40 ms step against 20 ms) whose
 * schedule drew fewer arrivals (119 against 204): per second it finished
 * about half as much, per scheduled request nearly as much (each side
 * finished a like share of a different draw). The parent's interval
 * spanned both scales and read that "same"; both sides fell well behind
 * their schedules, so per second alone judges it: worse on both rows. */
static void test_compare_sweep_half_capacity_fewer_arrivals_sim(void **state)
{
    (void)state;
    harness_tmp_begin();
    past_sims_start();
    char base[700], cand[700];
    past_capacity_sweep(&sims[0], PAST_HIGH_SEED, "base", base, sizeof base);
    past_capacity_sweep(&sims[1], PAST_LOW_SEED, "cand", cand, sizeof cand);
    sims_stop();

    /* The premise: the candidate's schedule drew fewer arrivals (the
     * seed's counts). */
    assert_first_scheduled(base, 204);
    assert_first_scheduled(cand, 119);

    json_t *j;
    json_t *rows = past_capacity_rows(base, cand, &j);
    const char *names[] = {"goodput", "output_tokens_per_s"};
    for (int i = 0; i < 2; i++) {
        json_t *r = harness_row_named(rows, names[i]);
        json_t *d = json_object_get(r, "diff"), *ps = json_object_get(r, "per_scheduled");
        printf("half capacity, fewer arrivals: %s %.2f -> %.2f, %+.1f%% [%+.1f%%, %+.1f%%] %s; "
               "per scheduled request %+.1f%% [%+.1f%%, %+.1f%%]\n",
               names[i], harness_num(r, "baseline"), harness_num(r, "candidate"),
               100 * harness_num(d, "value"), 100 * harness_num(d, "lo"),
               100 * harness_num(d, "hi"), harness_sval(r, "verdict"),
               100 * harness_num(ps, "value"), 100 * harness_num(ps, "lo"),
               100 * harness_num(ps, "hi"));
        assert_true(harness_num(d, "value") < -0.25);
        assert_string_equal(harness_sval(r, "verdict"), "worse");
    }
    json_decref(j);
}

HARNESS_MAIN(cmocka_unit_test_teardown(test_compare_sweep_repeat_own_windows, teardown),
             cmocka_unit_test_teardown(test_compare_sweep_slower_decode_sim, teardown),
             cmocka_unit_test_teardown(test_compare_sweep_empty_steps_sim, teardown),
             cmocka_unit_test_teardown(test_compare_sweep_other_seeds_sim, teardown),
             cmocka_unit_test_teardown(test_compare_sweep_cold_start_sim, teardown),
             cmocka_unit_test_teardown(test_compare_sweep_past_capacity_sim, teardown),
             cmocka_unit_test_teardown(test_compare_sweep_half_capacity_fewer_arrivals_sim,
                                       teardown))
