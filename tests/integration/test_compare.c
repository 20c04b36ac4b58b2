/* Integration tests of `llmload compare` against `llmload sim` on
 * 127.0.0.1: runs of one configuration with other seeds come out `same`
 * on every row; a sim with a dearer decode step comes out `worse` on
 * TPOT, and one that fails a fifth of its requests worse on the error
 * rate and its http_5xx row; a different workload is refused without
 * --allow-different; the --fail-on gate's exit statuses (1 fail, 5
 * inconclusive); usage errors.
 *
 * The same-config runs use constant arrivals, so the offered counts are
 * equal and only the server and the machine vary: with Poisson arrivals
 * each pair may differ in its offered count by chance, and the rate rows
 * then false-alarm at the 5% their interval promises (that rate, over 40
 * pairs, is test_compare_noise.c's). */
#include <jansson.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "harness.h"
#include "test.h"

/* 40 req/s for 2 s: 80 requests, enough for p50 and p90 (a p99 needs
 * 563 and is never called: "too few values"). */
#define CMP_WORKLOAD                                                                               \
    "--rate", "40", "--duration", "2s", "--arrival", "constant", "--prompt-tokens", "64",          \
        "--output-tokens", "16", "--ignore-eos", "--slo", "ttft=500ms"

static const char *const workload[] = {CMP_WORKLOAD, NULL};

/* One run on harness_cur_sim with seed (and extra args, may be NULL). */
static char *run_seed(const char *seed, const char *const *extra)
{
    struct harness_argv a = {0};
    const char *s[] = {"--seed", seed, NULL};
    harness_argv_add(&a, s);
    harness_argv_add(&a, extra);
    return harness_run_client(workload, a.v, HARNESS_RC_OK_OR_INVALID, NULL);
}

/* Run `llmload compare base cand --out <tmp>/cmp --force args...`; fail
 * unless it exits want. Returns compare.json (NULL when want is 2) and
 * stderr in *err (caller frees) when err is not NULL. */
static json_t *compare(const char *base, const char *cand, const char *const *args, int want,
                       char **err)
{
    char out[700];
    harness_tmp_path(out, sizeof out, "cmp");
    struct harness_argv a = {0};
    const char *fixed[] = {"compare", base, cand, "--out", out, "--force", NULL};
    harness_argv_add(&a, fixed);
    harness_argv_add(&a, args);
    free(harness_run_expect(a.v, 60, want, err));
    if (want == 2)
        return NULL;
    json_t *j = harness_json_load(out, "compare.json");
    assert_string_equal(harness_sval(j, "schema"), "llmload.compare/1");
    assert_int_equal(harness_ival(j, "exit_status"), want);
    return j;
}

/* The row named name of the first candidate. */
static json_t *row(json_t *cmp, const char *name)
{
    json_t *rows = json_object_get(json_array_get(json_object_get(cmp, "candidates"), 0), "rows");
    return harness_row_named(rows, name);
}

static double diff_of(json_t *r, const char *k)
{
    return harness_num(json_object_get(r, "diff"), k);
}

/* The rows compare must show for base and cand: four latencies at three
 * percentiles, goodput, attainment, error rate, output tok/s and achieved
 * rate (17), and a row for each error kind that occurred on either side
 * (summary.json's requests.by_kind). */
static size_t rows_expected(const char *base, const char *cand)
{
    size_t n = 17;
    json_t *sb = harness_summary_load(base), *sc = harness_summary_load(cand);
    json_t *kb = json_object_get(json_object_get(sb, "requests"), "by_kind");
    json_t *kc = json_object_get(json_object_get(sc, "requests"), "by_kind");
    const char *k;
    json_t *v;
    json_object_foreach(kb, k, v)
    {
        if (strcmp(k, "ok") == 0)
            continue;
        json_t *w = json_object_get(kc, k);
        n += json_integer_value(v) > 0 || (w && json_integer_value(w) > 0);
    }
    json_object_foreach(kc, k, v)
    {
        if (strcmp(k, "ok") != 0 && json_integer_value(v) > 0 && !json_object_get(kb, k))
            n++;
    }
    json_decref(sb);
    json_decref(sc);
    return n;
}

/* Edit a results directory's file (run.json, summary.json): set key
 * (under the object obj when not NULL, else at the top) to v (stolen). */
static void json_file_set(const char *dir, const char *file, const char *obj, const char *key,
                          json_t *v)
{
    char rj[800];
    snprintf(rj, sizeof rj, "%s/%s", dir, file);
    json_t *run = harness_json_load(NULL, rj);
    json_t *o = obj ? json_object_get(run, obj) : run;
    assert_non_null(o);
    json_object_set_new(o, key, v);
    assert_int_equal(json_dump_file(run, rj, JSON_INDENT(2)), 0);
    json_decref(run);
}

static void run_json_set(const char *dir, const char *obj, const char *key, json_t *v)
{
    json_file_set(dir, "run.json", obj, key, v);
}

/* Set a side's outcome, in run.json's outcome and in summary.json, as a
 * run that ended so would have written them. */
static void outcome_set(const char *dir, int invalid, const char *reason, int interrupted)
{
    run_json_set(dir, "outcome", "invalid", json_boolean(invalid));
    run_json_set(dir, "outcome", "invalid_reason", reason ? json_string(reason) : json_null());
    run_json_set(dir, "outcome", "interrupted", json_boolean(interrupted));
    run_json_set(dir, "outcome", "stopped_in", interrupted ? json_string("load") : json_null());
    json_file_set(dir, "summary.json", NULL, "invalid", json_boolean(invalid));
    json_file_set(dir, "summary.json", NULL, "invalid_reason",
                  reason ? json_string(reason) : json_null());
    json_file_set(dir, "summary.json", NULL, "interrupted", json_boolean(interrupted));
}

/* The second sim of test_compare_slower_decode_is_worse (the teardown
 * stops it when a test fails half-way). */
static struct harness_sim slow_sim;

/* Three pairs of runs, one configuration, six seeds: every row `same`. */
static void test_compare_same_config_is_same(void **state)
{
    harness_tmp_begin();
    harness_cur_sim_start(NULL);
    for (int p = 0; p < 3; p++) {
        char s1[8], s2[8];
        snprintf(s1, sizeof s1, "%d", 2 * p + 1);
        snprintf(s2, sizeof s2, "%d", 2 * p + 2);
        char *a = run_seed(s1, NULL), *b = run_seed(s2, NULL);
        json_t *j = compare(a, b, NULL, 0, NULL);
        json_t *rows = json_object_get(json_array_get(json_object_get(j, "candidates"), 0), "rows");
        assert_int_equal(json_array_size(rows), rows_expected(a, b));
        size_t i;
        json_t *r;
        json_array_foreach(rows, i, r)
        {
            /* A latency row's verdict is left to bench/compare.sh: on a
             * shared box the other tests' load moves a whole run's TPOT
             * by more than any interval within one run allows (the
             * between-run variation --repeat will bring is not in yet);
             * here its interval must hold its own estimate. */
            const char *name = harness_sval(r, "row");
            json_t *d = json_object_get(r, "diff");
            if (strncmp(name, "ttft_", 5) == 0 || strncmp(name, "tpot_", 5) == 0 ||
                strncmp(name, "itl_", 4) == 0 || strncmp(name, "e2e_", 4) == 0) {
                if (json_is_number(json_object_get(d, "lo")))
                    assert_true(harness_num(d, "lo") <= harness_num(d, "value") &&
                                harness_num(d, "value") <= harness_num(d, "hi"));
                continue;
            }
            if (strcmp(harness_sval(r, "verdict"), "same") != 0)
                fail_msg("pair %d: row %s is %s (diff %s)", p, name, harness_sval(r, "verdict"),
                         json_dumps(d, JSON_COMPACT));
        }
        /* Numbers, not only verdicts: the rate rows are the summaries'
         * figures (whatever the box's load did to the sends), the p99
         * too few. */
        assert_true(
            json_is_true(json_object_get(json_object_get(row(j, "ttft_p99"), "diff"), "too_few")));
        json_t *sa = harness_summary_load(a), *sb = harness_summary_load(b);
        double ra = harness_num(sa, "throughput.send_rate_per_s");
        double rb = harness_num(sb, "throughput.send_rate_per_s");
        ASSERT_NEAR(harness_num(row(j, "achieved_rate"), "baseline"), ra, 1e-9);
        ASSERT_NEAR(diff_of(row(j, "achieved_rate"), "value"), rb / ra - 1, 1e-9);
        json_decref(sa);
        json_decref(sb);
        ASSERT_NEAR(harness_num(row(j, "error_rate"), "baseline"), 0, 1e-12);
        json_decref(j);
        if (p == 0) {
            /* Runs without an SLO (their summaries as such a run writes
             * them): a gate on goodput is inconclusive and says why, where
             * it read "goodput - -> -, - [-inf, +inf]" alone. */
            for (int s = 0; s < 2; s++) {
                json_file_set(s ? b : a, "summary.json", "throughput", "goodput_per_s",
                              json_null());
                json_file_set(s ? b : a, "summary.json", "throughput", "attainment", json_null());
            }
            char *err = NULL;
            const char *gate[] = {"--fail-on", "goodput:-5%", "--quiet", NULL};
            json_decref(compare(a, b, gate, 5, &err));
            HARNESS_HAS(err, "inconclusive: goodput - -> -");
            HARNESS_HAS(err,
                        "(no value on either side: goodput and attainment need an SLO, --slo)");
            free(err);
        }
        harness_results_free(a);
        harness_results_free(b);
    }
    harness_sim_teardown(NULL);
    harness_tmp_end();
}

/* The sim with its step's fixed cost 4 ms -> 5 ms: a decode step (one
 * token per running request) 1 ms dearer, called worse (the two runs at
 * once, on two sims, so the box's load weighs on both). The slowdown
 * expected is 1 ms over the baseline's own step (its TPOT or ITL; an E2E
 * of 16 tokens pays 16 steps), whatever the box's load made that step;
 * the bound is half to one and a half of it, widened by the row's own
 * interval. The gate fails at +10%, passes at +150%, and a p99 (too few
 * values) is inconclusive. */
static void test_compare_slower_decode_is_worse(void **state)
{
    harness_tmp_begin();
    /* Both runs at once, each against its own sim, so that whatever else
     * loads this box slows both alike. */
    harness_cur_sim_start(NULL);
    const char *slow[] = {"--step-base", "5ms", NULL};
    assert_int_equal(harness_sim_start(&slow_sim, slow), 0);
    char slow_dir[700], slow_err[700], slow_url[200];
    harness_tmp_path(slow_dir, sizeof slow_dir, "slow");
    assert_int_equal(mkdir(slow_dir, 0700), 0);
    harness_tmp_path(slow_err, sizeof slow_err, "slow.err");
    strncat(slow_dir, "/r", sizeof slow_dir - strlen(slow_dir) - 1);
    snprintf(slow_url, sizeof slow_url, "%s/v1", slow_sim.url);
    struct harness_argv sa = {0};
    const char *head[] = {"run",     "--url",  slow_url, "--out", slow_dir,
                          "--quiet", "--seed", "2",      NULL};
    harness_argv_add(&sa, head);
    harness_argv_add(&sa, workload);
    pid_t pid = harness_spawn(sa.v, "/dev/null", slow_err, -1, NULL, NULL);
    char *a = run_seed("1", NULL);
    int st = harness_reap(pid, 60000);
    harness_sim_teardown(NULL);
    harness_sim_stop(&slow_sim);
    if (st != 0 && st != 1)
        fail_msg("the run on the slow sim exited %d: %s", st, harness_read_file(slow_err, NULL));
    char *b = strdup(slow_dir);
    assert_non_null(b);

    json_t *j = compare(a, b, NULL, 0, NULL);
    const char *rows[] = {"tpot_p50", "tpot_p90", "itl_p50", "e2e_p50"};
    const double dearer_ns[] = {1e6, 1e6, 1e6, 16e6};
    for (size_t i = 0; i < 4; i++) {
        json_t *r = row(j, rows[i]);
        if (strcmp(harness_sval(r, "verdict"), "worse") != 0)
            fail_msg("%s is %s, want worse", rows[i], harness_sval(r, "verdict"));
        double v = diff_of(r, "value"), lo = diff_of(r, "lo"), hi = diff_of(r, "hi");
        double want = dearer_ns[i] / harness_num(r, "baseline"), w = hi - lo;
        if (!(lo <= v && v <= hi && v > 0.5 * want - w && v < 1.5 * want + w))
            fail_msg("%s: diff %.3f [%.3f, %.3f], want about %.3f", rows[i], v, lo, hi, want);
    }
    json_decref(j);

    char *err = NULL;
    const char *gate_fail[] = {"--fail-on", "tpot_p50:+10%", "--quiet", NULL};
    j = compare(a, b, gate_fail, 1, &err);
    assert_non_null(strstr(err, "FAILS: tpot_p50"));
    free(err);
    assert_string_equal(
        harness_sval(
            json_array_get(
                json_object_get(json_array_get(json_object_get(j, "candidates"), 0), "fail_on"), 0),
            "result"),
        "fail");
    json_decref(j);
    const char *gate_pass[] = {"--fail-on", "tpot_p50:+150%,error_rate:+5pp", "--quiet", NULL};
    json_decref(compare(a, b, gate_pass, 0, NULL));
    const char *gate_inc[] = {"--fail-on", "tpot_p99:+10%", "--quiet", NULL};
    j = compare(a, b, gate_inc, 5, &err);
    assert_non_null(strstr(err, "inconclusive: tpot_p99"));
    /* Each side's count and what a p99 needs, where it read "[-inf, +inf]". */
    HARNESS_HAS(err, "too few for an interval (a p99 needs 563 a side) vs limit +10%");
    assert_null(strstr(err, "inf"));
    {
        json_t *ra = harness_summary_load(a), *rb = harness_summary_load(b);
        char want[80];
        snprintf(want, sizeof want, "n=%.0f vs %.0f: too few", harness_num(ra, "requests.ok"),
                 harness_num(rb, "requests.ok"));
        HARNESS_HAS(err, want);
        json_decref(ra);
        json_decref(rb);
    }
    free(err);
    json_decref(j);
    /* Both: the lowest status wins. */
    const char *gate_both[] = {"--fail-on", "tpot_p99:+10%,tpot_p50:+10%", "--quiet", NULL};
    json_decref(compare(a, b, gate_both, 1, NULL));
    /* --baseline picks the baseline whatever the order. */
    const char *base_a[] = {"--baseline", a, NULL};
    j = compare(b, a, base_a, 0, NULL);
    assert_string_equal(harness_sval(json_object_get(j, "baseline"), "dir"), a);
    assert_string_equal(harness_sval(row(j, "tpot_p50"), "verdict"), "worse");
    json_decref(j);
    /* The same runs swapped: better. */
    j = compare(b, a, NULL, 0, NULL);
    assert_string_equal(harness_sval(row(j, "tpot_p50"), "verdict"), "better");
    json_decref(j);
    harness_results_free(b);

    /* A sim that answers a fifth of its requests with a 500: error rate and
     * its http_5xx row worse, the gate on either fails. */
    const char *faulty[] = {"--fault", "500:0.2", NULL};
    harness_cur_sim_start(faulty);
    char *f = run_seed("3", NULL);
    harness_sim_teardown(NULL);
    const char *gate_err[] = {"--fail-on", "error_rate_http_5xx:+1pp", "--quiet", NULL};
    j = compare(a, f, gate_err, 1, &err);
    assert_non_null(strstr(err, "FAILS: error_rate_http_5xx"));
    free(err);
    json_t *r5 = row(j, "error_rate_http_5xx");
    assert_string_equal(harness_sval(r5, "verdict"), "worse");
    ASSERT_NEAR(harness_num(r5, "baseline"), 0, 1e-12);
    double share = harness_num(r5, "candidate");
    if (!(share > 0.05 && share < 0.4))
        fail_msg("http_5xx share %.3f, want about 0.2", share);
    ASSERT_NEAR(harness_num(row(j, "error_rate"), "candidate"), share, 1e-12);
    assert_string_equal(harness_sval(row(j, "error_rate"), "verdict"), "worse");
    json_decref(j);
    harness_results_free(f);
    harness_results_free(a);
    harness_tmp_end();
}

/* Another --output-tokens is another workload: refused with one line that
 * names the key, accepted with --allow-different, which compare.json
 * keeps; labels; a sweep and mixed kinds are refused. */
static void test_compare_different_workload_refused(void **state)
{
    harness_tmp_begin();
    harness_cur_sim_start(NULL);
    char *a = run_seed("1", NULL);
    const char *longer[] = {"--output-tokens", "32", NULL};
    char *b = run_seed("2", longer);
    harness_sim_teardown(NULL);

    char *err = NULL;
    compare(a, b, NULL, 2, &err);
    assert_non_null(strstr(err, "did not run the same workload: output_tokens"));
    assert_non_null(strstr(err, "fixed:32"));
    assert_int_equal(strchr(err, '\n') - err + 1, (long)strlen(err)); /* one line */
    free(err);

    const char *allow[] = {"--allow-different", "output_tokens", "--label", "short",
                           "--label",           "long",          NULL};
    json_t *j = compare(a, b, allow, 0, NULL);
    json_t *c = json_array_get(json_object_get(j, "candidates"), 0);
    assert_string_equal(harness_sval(c, "label"), "long");
    assert_string_equal(harness_sval(json_object_get(j, "baseline"), "label"), "short");
    json_t *d = json_array_get(json_object_get(c, "config_differences"), 0);
    assert_string_equal(harness_sval(d, "key"), "output_tokens");
    assert_string_equal(harness_sval(d, "candidate"), "fixed:32");
    /* 32 tokens for 16: E2E clearly longer, output tokens/s doubled. */
    assert_string_equal(harness_sval(row(j, "e2e_p50"), "verdict"), "worse");
    ASSERT_NEAR(diff_of(row(j, "output_tokens_per_s"), "value"), 1.0, 0.15);
    json_decref(j);

    /* run.json's tags: information only, listed when they differ. */
    char rj[800];
    snprintf(rj, sizeof rj, "%s/run.json", b);
    json_t *run = harness_json_load(NULL, rj);
    json_object_set_new(run, "tags", json_pack("{ss}", "build", "v2"));
    assert_int_equal(json_dump_file(run, rj, JSON_INDENT(2)), 0);
    json_decref(run);
    j = compare(a, b, allow, 0, NULL);
    c = json_array_get(json_object_get(j, "candidates"), 0);
    json_t *tags = json_object_get(c, "tags_differ");
    json_t *bt = json_object_get(tags, "baseline"); /* no --tag: none, or {} */
    assert_true(json_is_null(bt) || (json_is_object(bt) && json_object_size(bt) == 0));
    assert_string_equal(harness_sval(json_object_get(tags, "candidate"), "build"), "v2");
    assert_int_equal(json_array_size(json_object_get(c, "load_differences")), 0);
    json_decref(j);

    /* Another load (rate, arrival, a --requests cap) is compared, with one
     * note line naming it: a latency at 10 req/s against one at 40
     * measures the load too. */
    run_json_set(b, "config", "rate_per_s", json_real(10));
    run_json_set(b, "config", "arrival", json_string("poisson"));
    run_json_set(b, "config", "requests", json_integer(70));
    char *note = NULL;
    j = compare(a, b, allow, 0, &note);
    HARNESS_HAS(note, "llmload: compare: note: short and long ran different loads (rate_per_s "
                      "40.0 vs 10.0, arrival \"constant\" vs \"poisson\", requests 0 vs 70): "
                      "their latencies differ by the load as well as by the server\n");
    free(note);
    c = json_array_get(json_object_get(j, "candidates"), 0);
    json_t *ld = json_object_get(c, "load_differences");
    assert_int_equal(json_array_size(ld), 3);
    assert_string_equal(harness_sval(json_array_get(ld, 0), "key"), "rate_per_s");
    ASSERT_NEAR(harness_num(json_array_get(ld, 0), "baseline"), 40, 1e-9);
    ASSERT_NEAR(harness_num(json_array_get(ld, 0), "candidate"), 10, 1e-9);
    json_decref(j);

    const char *bad_allow[] = {"compare", a, b, "--allow-different", "url", NULL};
    harness_expect_usage(bad_allow, "--allow-different");
    const char *bad_fail[] = {"compare", a, b, "--fail-on", "error_rate:+1%", NULL};
    harness_expect_usage(bad_fail, "percentage points");
    const char *one[] = {"compare", a, NULL};
    harness_expect_usage(one, "two results directories");
    const char *boot[] = {"compare", a, b, "--bootstrap", "5", NULL};
    harness_expect_usage(boot, "--bootstrap");
    const char *noout[] = {"compare",       a,       b,  "--allow-different",
                           "output_tokens", "--out", "", NULL};
    harness_expect_usage(noout, "compare: --out: results directory: empty path");
    const char *twice[] = {"compare", a, b, "--label", "x", "--label", "x", NULL};
    harness_expect_usage(twice, "--label: \"x\" given twice");
    const char *nodir[] = {"compare", a, "", NULL}; /* blamed /run.json */
    harness_expect_usage(nodir, "compare: a results directory is an empty path");

    /* a run.json from a newer llmload: was read as this one's format */
    char newer[700], to[800];
    harness_tmp_path(newer, sizeof newer, "newer");
    assert_int_equal(mkdir(newer, 0755), 0);
    snprintf(to, sizeof to, "%s/run.json", newer);
    harness_write_file(to, "{\"schema\": \"llmload.run/2\", \"command\": \"run\"}\n");
    const char *nargs[] = {"compare", a, newer, NULL};
    harness_expect_usage(nargs, "run.json: schema llmload.run/2 is newer than this llmload reads");

    /* b with its records emptied: every percentile was "n/a", exit 0 */
    char emptied[700], from[800];
    harness_tmp_path(emptied, sizeof emptied, "emptied");
    assert_int_equal(mkdir(emptied, 0755), 0);
    static const char *const kept[] = {"run.json", "summary.json"};
    for (size_t i = 0; i < 2; i++) {
        snprintf(from, sizeof from, "%s/%s", b, kept[i]);
        snprintf(to, sizeof to, "%s/%s", emptied, kept[i]);
        char *text = harness_read_file(from, NULL);
        assert_non_null(text);
        harness_write_file(to, text);
        free(text);
    }
    snprintf(to, sizeof to, "%s/requests.jsonl", emptied);
    harness_write_file(to, "");
    const char *eargs[] = {"compare", a, emptied, "--allow-different", "output_tokens", NULL};
    snprintf(to, sizeof to, "%s/requests.jsonl: empty, but summary.json counts", emptied);
    harness_expect_usage(eargs, to);

    char sweep[700], replay[700];
    harness_tmp_results_stub(sweep, sizeof sweep, "sweep", "sweep");
    harness_tmp_results_stub(replay, sizeof replay, "replay", "replay");
    const char *sw[] = {"compare", a, sweep, NULL};
    harness_expect_usage(sw, "mixed kinds");
    const char *mixed[] = {"compare", a, replay, NULL};
    harness_expect_usage(mixed, "mixed kinds");
    harness_results_free(a);
    harness_results_free(b);
    harness_tmp_end();
}

/* The relative difference of a and b, for values that must agree within
 * the summary histogram's resolution (1/256). */
static void assert_close(double a, double b, const char *what)
{
    if (!(fabs(a - b) <= 0.01 * fabs(b)))
        fail_msg("%s: %.0f, want %.0f (within 1%%)", what, a, b);
}

/* --cold-start: the cold requests are out of compare's percentiles, as
 * they are out of the summary's (a sim whose first step pays 300 ms makes
 * the cold ones' TTFT 30 times the warm ones'); cold_start is a workload
 * key, and so are a replay's trace, trace_requests and calibration; an
 * INVALID or interrupted side is flagged on stderr, in the table's header
 * and in compare.json; a --out directory that holds files without --force
 * is a usage error (2), as it is for run. */
static void test_compare_cold_outcome_keys(void **state)
{
    harness_tmp_begin();
    const char *cold_sim[] = {"--cold-first", "300ms", NULL};
    harness_cur_sim_start(cold_sim);
    const char *cold[] = {"--cold-start", "20", NULL};
    char *a = run_seed("1", cold), *b = run_seed("2", cold);
    harness_sim_teardown(NULL);

    json_t *sa = harness_summary_load(a);
    /* The premise: the cold requests were slow, the warm ones not. */
    double cold_p90 = harness_num(sa, "cold.ttft_ns.p90");
    double warm_p90 = harness_num(sa, "latency_ns.ttft.p90");
    if (!(cold_p90 > 4 * warm_p90))
        fail_msg("cold TTFT p90 %.0f ns, warm %.0f ns: the sim's cold step did not show", cold_p90,
                 warm_p90);
    json_t *j = compare(a, b, NULL, 0, NULL);
    assert_close(harness_num(row(j, "ttft_p90"), "baseline"), warm_p90, "ttft_p90");
    assert_close(harness_num(row(j, "ttft_p99"), "baseline"),
                 harness_num(sa, "latency_ns.ttft.p99"), "ttft_p99");
    assert_close(harness_num(row(j, "e2e_p90"), "baseline"), harness_num(sa, "latency_ns.e2e.p90"),
                 "e2e_p90");
    /* Each side's outcome as its run ended (this box may make one INVALID). */
    json_t *ra = harness_json_load(a, "run.json");
    assert_string_equal(harness_sval(json_object_get(j, "baseline"), "outcome"),
                        json_is_true(json_object_get(json_object_get(ra, "outcome"), "invalid"))
                            ? "INVALID"
                            : "ok");
    json_decref(ra);
    json_decref(j);
    json_decref(sa);

    /* An INVALID candidate and an interrupted baseline: one warning line
     * each, the header and compare.json say so. */
    outcome_set(b, 1, "lateness moved TTFT p99", 0);
    outcome_set(a, 0, NULL, 1);
    char out[700], *e = NULL;
    harness_tmp_path(out, sizeof out, "cmp_outcome");
    const char *args[] = {"compare", a, b, "--out", out, "--label", "a", "--label", "b", NULL};
    char *o = harness_run_expect(args, 60, 0, &e);
    HARNESS_HAS(e, "warning: the candidate b", "was INVALID: lateness moved TTFT p99",
                "warning: the baseline a", "was interrupted in load");
    HARNESS_HAS(o, "(candidate, INVALID) vs", "(baseline, interrupted)");
    free(o);
    free(e);
    j = harness_json_load(out, "compare.json");
    json_t *c = json_array_get(json_object_get(j, "candidates"), 0);
    assert_string_equal(harness_sval(c, "outcome"), "INVALID");
    assert_true(json_is_true(json_object_get(c, "invalid")));
    assert_string_equal(harness_sval(c, "invalid_reason"), "lateness moved TTFT p99");
    assert_string_equal(harness_sval(json_object_get(j, "baseline"), "outcome"), "interrupted");
    json_decref(j);

    /* --out that holds compare.json now: 2 without --force. */
    const char *again[] = {"compare", a, b, "--out", out, "--quiet", NULL};
    harness_expect_usage(again, "--force");

    /* Another --cold-start is another workload. */
    run_json_set(b, "config", "cold_start", json_integer(0));
    char *err = NULL;
    compare(a, b, NULL, 2, &err);
    assert_non_null(strstr(err, "did not run the same workload: cold_start (20 vs 0)"));
    free(err);
    run_json_set(b, "config", "cold_start", json_integer(20));

    /* Two replays of other traces: trace, trace_requests and calibration
     * all named. */
    const char *const names[] = {"t1.jsonl", "t2.jsonl"};
    for (int i = 0; i < 2; i++) {
        const char *d = i ? b : a;
        run_json_set(d, NULL, "command", json_string("replay"));
        run_json_set(d, "config", "trace", json_string(names[i]));
        run_json_set(d, "config", "trace_requests", json_integer(80 + i));
        run_json_set(d, "config", "calibration",
                     json_pack("{sf}", "tokens_per_word", i ? 1.5 : 1.3));
    }
    compare(a, b, NULL, 2, &err);
    HARNESS_HAS(err, "trace (\"t1.jsonl\" vs \"t2.jsonl\")", "trace_requests (80 vs 81)",
                "calibration (");
    free(err);
    harness_results_free(a);
    harness_results_free(b);
    harness_tmp_end();
}

/* Two open-loop runs on the default sim (harness_cur_sim, started
 * here) at 20 req/s for 3 s of 32 prompt and 4 output tokens, seeds 5
 * and 4 (43 and 78 arrivals), with extra (NULL-terminated, may be NULL)
 * after: their results directories into dirs. */
static void two_seeds(const char *const *extra, char *dirs[2])
{
    harness_cur_sim_start(NULL);
    const char *seeds[2] = {"5", "4"};
    for (int i = 0; i < 2; i++) {
        const char *args[] = {"--rate",
                              "20",
                              "--duration",
                              "3s",
                              "--seed",
                              seeds[i],
                              "--prompt-tokens",
                              "32",
                              "--output-tokens",
                              "4",
                              "--ignore-eos",
                              "--no-metrics",
                              NULL};
        struct harness_argv a = {0};
        harness_argv_add(&a, args);
        harness_argv_add(&a, extra);
        dirs[i] = harness_run_client(NULL, a.v, HARNESS_RC_OK_OR_INVALID, NULL);
    }
}

/* two_seeds' directories freed, its sim stopped, the test's tmp ended. */
static void two_seeds_free(char *dirs[2])
{
    for (int i = 0; i < 2; i++)
        harness_results_free(dirs[i]);
    harness_sim_teardown(NULL);
    harness_tmp_end();
}

/* Two open loops on one server whose Poisson schedules drew 43 and 78
 * requests in 3 s (seeds 5 and 4 at 20 req/s): the sends per second
 * differ by +81%, beyond Poisson noise, and the parent called the
 * candidate's achieved rate "better" (and its output tok/s), though the
 * server set neither. The achieved rate judged per scheduled request is
 * the same, output tok/s within an interval that spans per second and
 * per scheduled request too; compare.json says rates_per_scheduled, and
 * a note names both schedules' counts. */
static void test_compare_open_loop_schedules(void **state)
{
    (void)state;
    harness_tmp_begin();
    char *dirs[2];
    two_seeds(NULL, dirs);
    json_t *sa = harness_summary_load(dirs[0]), *sb = harness_summary_load(dirs[1]);
    int64_t na = harness_ival_req(json_object_get(sa, "requests"), "scheduled");
    int64_t nb = harness_ival_req(json_object_get(sb, "requests"), "scheduled");
    assert_int_equal(na, 43);
    assert_int_equal(nb, 78);
    json_decref(sa);
    json_decref(sb);
    char *err = NULL;
    json_t *j = compare(dirs[0], dirs[1], NULL, 0, &err);
    HARNESS_HAS(err, "note: open loops: the achieved rate is judged per scheduled request, "
                     "goodput and output tok/s per second within an interval that spans both");
    HARNESS_HAS(err, "scheduled 43, ");
    assert_true(json_is_true(json_object_get(json_array_get(json_object_get(j, "candidates"), 0),
                                             "rates_per_scheduled")));
    json_t *r = row(j, "achieved_rate");
    assert_string_equal(harness_sval(r, "verdict"), "same");
    /* every request sent on both sides: the same rate per scheduled one */
    ASSERT_NEAR(diff_of(r, "value"), 0, 0.03);
    assert_true(harness_num(r, "candidate") > 1.5 * harness_num(r, "baseline"));
    assert_string_equal(harness_sval(row(j, "output_tokens_per_s"), "verdict"), "same");
    json_decref(j);
    free(err);
    two_seeds_free(dirs);
}

/* The same two schedules (seeds 5 and 4 at 20 req/s for 3 s: 43 and 78
 * arrivals) with --cold-start 30: 13 and 48 warm requests, but all 43
 * and 78 sent in the window. Judged over the warm ones alone, the parent
 * read "achieved rate -50.9% worse" (and output tok/s -52%) of one
 * server: sends and tokens are per request scheduled in the window, cold
 * ones included, goodput per warm one. Goodput's difference shown is
 * per second (the values', +269%), its interval spanning the one per
 * warm request scheduled (about 0): same. */
static void test_compare_open_loop_cold(void **state)
{
    (void)state;
    harness_tmp_begin();
    char *dirs[2];
    const char *cold[] = {"--cold-start", "30", "--slo", "e2e=10s", NULL};
    two_seeds(cold, dirs);
    json_t *sa = harness_summary_load(dirs[0]), *sb = harness_summary_load(dirs[1]);
    assert_int_equal(harness_ival_req(json_object_get(sa, "requests"), "scheduled"), 13);
    assert_int_equal(harness_ival_req(json_object_get(sb, "requests"), "scheduled"), 48);
    /* the arrivals sent in the window, cold or warm: all of them on an
     * idle box; one sent past the window's end on a loaded one (.ci/run
     * read 77 of 78), which moves the rates per scheduled request by 1.3%,
     * inside the 3% asked of them below */
    ASSERT_NEAR(harness_num(sa, "throughput.send_rate_per_s") * 3, 43, 1 + 1e-6);
    ASSERT_NEAR(harness_num(sb, "throughput.send_rate_per_s") * 3, 78, 1 + 1e-6);
    json_decref(sa);
    json_decref(sb);
    char *err = NULL;
    json_t *j = compare(dirs[0], dirs[1], NULL, 0, &err);
    json_t *r = row(j, "achieved_rate");
    assert_string_equal(harness_sval(r, "verdict"), "same");
    ASSERT_NEAR(diff_of(r, "value"), 0, 0.03);
    assert_string_equal(harness_sval(row(j, "output_tokens_per_s"), "verdict"), "same");
    r = row(j, "goodput");
    assert_string_equal(harness_sval(r, "verdict"), "same");
    ASSERT_NEAR(harness_num(json_object_get(r, "per_scheduled"), "value"), 0, 0.1);
    /* the difference shown is the values' (13 and 48 warm a second) */
    ASSERT_NEAR(diff_of(r, "value"), harness_num(r, "candidate") / harness_num(r, "baseline") - 1,
                1e-9);
    HARNESS_HAS(err, "scheduled 43, ");
    HARNESS_HAS(err, " 78 in the window, --cold-start's included");
    json_decref(j);
    free(err);
    two_seeds_free(dirs);
}

static int teardown(void **state)
{
    harness_sim_stop(&slow_sim);
    pid_t *none[] = {NULL};
    harness_cleanup(none);
    return 0;
}

HARNESS_MAIN(cmocka_unit_test_teardown(test_compare_same_config_is_same, teardown),
             cmocka_unit_test_teardown(test_compare_slower_decode_is_worse, teardown),
             cmocka_unit_test_teardown(test_compare_different_workload_refused, teardown),
             cmocka_unit_test_teardown(test_compare_cold_outcome_keys, teardown),
             cmocka_unit_test_teardown(test_compare_open_loop_schedules, teardown),
             cmocka_unit_test_teardown(test_compare_open_loop_cold, teardown))
