/* test_merge_hist.c: the hist.jsonl `llmload merge` writes into a merged
 * run's directory, and the page drawn from it (docs/distributed.md,
 * "Merging the shards"; docs/formats.md, "hist.jsonl"; docs/report.md, "A
 * single run's page"), end to end against `llmload sim`.
 *
 * - Two shards of a run, merged: hist.jsonl has one line per second, no
 *   "shard" or "worker", in time order; each second's ok and failed
 *   counts and TTFT, TPOT and E2E counts are the shards' lines of that
 *   second added up, and so are the totals. report.html's per-second
 *   charts have a point per second the lines hold (the parent wrote no
 *   hist.jsonl and drew "nothing counted"), its header and title say
 *   "merged from 2 shards", and `llmload report` rebuilds report.html
 *   byte for byte, leaving summary.json and hist.jsonl as they were.
 * - The same shards merged with --hist-only write the same hist.jsonl,
 *   byte for byte, and the page says "histograms only".
 * - Shard 0 alone (--allow-partial): its lines only, and the page says
 *   "merged from 1 of 2 shards".
 * - hist.jsonl.tmp cannot be made (a directory there): the merge warns,
 *   exits 3 and removes the hist.jsonl an earlier merge left.
 * - A shard without hist.jsonl: the merge warns, writes none and removes
 *   the one a --force merge left there; the records still merge (exit 0).
 * - A killed shard's cut-off last line (no newline): skipped with a
 *   warning naming FILE:LINE, the same hist.jsonl written; with its
 *   newline it is a bad line, and none is written.
 *
 * All traffic is to 127.0.0.1, 20 requests/s for 3 s per shard; the file
 * takes about 7 s. */
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "harness.h"
#include "test.h"
#include "util/util.h"

#define SIM_FAST "--step-base", "10ms", "--step-per-prefill-token", "0", "--step-per-seq", "0"

/* One load of 3 s after a 1 s warm-up, the same in both shards. */
static const char *const load[] = {"--rate",
                                   "20",
                                   "--arrival",
                                   "constant",
                                   "--duration",
                                   "3s",
                                   "--warmup",
                                   "1s",
                                   "--prompt-tokens",
                                   "8",
                                   "--output-tokens",
                                   "10",
                                   "--ignore-eos",
                                   "--seed",
                                   "9",
                                   "--prompt-salt",
                                   "5",
                                   "--no-metrics",
                                   "--quiet",
                                   NULL};

/* The most seconds a log here holds (3 s of load, the warm-up, the drain). */
#define SECONDS 16

/* A log's counts per second: ok, failed, and the values of TTFT, TPOT
 * and E2E ("llh1 COUNT ..."), summed over its lines. */
struct secs {
    int64_t ok[SECONDS], failed[SECONDS], ttft[SECONDS], tpot[SECONDS], e2e[SECONDS];
    size_t lines, lines_ttft;
};

static int64_t hist_n(json_t *line, const char *key)
{
    const char *s = harness_sval(line, key);
    return s ? strtoll(s + 5, NULL, 10) : 0; /* past "llh1 " */
}

/* dir's hist.jsonl added up per second into *s; combined: each line must
 * be a merged one (no shard or worker, seconds rising). */
static void secs_load(const char *dir, struct secs *s, int combined)
{
    memset(s, 0, sizeof *s);
    json_t *lines = harness_jsonl_in(dir, "hist.jsonl");
    int64_t prev = -1;
    for (size_t i = 0; i < json_array_size(lines); i++) {
        json_t *o = json_array_get(lines, i);
        int64_t t = harness_ival_req(o, "t_ns");
        assert_int_equal(t % 1000000000, 0);
        int64_t k = t / 1000000000;
        assert_true(k >= 0 && k < SECONDS);
        if (combined) {
            assert_null(json_object_get(o, "shard"));
            assert_null(json_object_get(o, "worker"));
            assert_true(k > prev);
            prev = k;
        }
        s->ok[k] += harness_ival_req(o, "ok");
        s->failed[k] += harness_ival_req(o, "failed");
        s->ttft[k] += hist_n(o, "ttft");
        s->tpot[k] += hist_n(o, "tpot");
        s->e2e[k] += hist_n(o, "e2e");
        s->lines_ttft += json_object_get(o, "ttft") != NULL;
    }
    s->lines = json_array_size(lines);
    json_decref(lines);
}

/* Two shards of load, one after the other, into <tmp>/hK. */
static void shards_run(char sd[2][600])
{
    char url[160];
    const char *sim[] = {SIM_FAST, NULL};
    harness_sim_v1_start(url, sizeof url, sim);
    harness_two_shards_run(url, "h", load, sd);
}

/* `llmload merge shards... --out <tmp>/name [opts]` exiting 0, or 1 when
 * the merged run is INVALID (a loaded machine's late sends); the merged
 * directory's path into merged, its stderr returned (caller frees). */
static char *merge_rc(const char *const *shards, const char *name, const char *const *opts,
                      char *merged, size_t len, int want_rc)
{
    harness_tmp_path(merged, len, name);
    const char *head[] = {"merge", NULL};
    const char *out[] = {"--out", merged, NULL};
    struct harness_argv a = {.n = 0};
    harness_argv_add(&a, head);
    harness_argv_add(&a, shards);
    harness_argv_add(&a, out);
    if (opts)
        harness_argv_add(&a, opts);
    char *err = NULL;
    free(harness_run_expect(a.v, 60, want_rc, &err));
    return err;
}

static char *merge(const char *const *shards, const char *name, const char *const *opts,
                   char *merged, size_t len)
{
    return merge_rc(shards, name, opts, merged, len, HARNESS_RC_OK_OR_INVALID);
}

/* The merged log's seconds are the given shards' seconds added up. */
static void secs_summed(const char *merged, char sd[2][600], int n_shards)
{
    struct secs m, s[2];
    secs_load(merged, &m, 1);
    for (int k = 0; k < n_shards; k++)
        secs_load(sd[k], &s[k], 0);
    int64_t ok = 0, want_ok = 0;
    for (int i = 0; i < SECONDS; i++) {
        int64_t w[5] = {0};
        for (int k = 0; k < n_shards; k++) {
            w[0] += s[k].ok[i];
            w[1] += s[k].failed[i];
            w[2] += s[k].ttft[i];
            w[3] += s[k].tpot[i];
            w[4] += s[k].e2e[i];
        }
        assert_int_equal(m.ok[i], w[0]);
        assert_int_equal(m.failed[i], w[1]);
        assert_int_equal(m.ttft[i], w[2]);
        assert_int_equal(m.tpot[i], w[3]);
        assert_int_equal(m.e2e[i], w[4]);
        ok += m.ok[i];
        want_ok += w[0];
    }
    assert_true(ok >= 15 * n_shards); /* 3 s at 10/s a shard, less the warm-up */
    assert_int_equal(ok, want_ok);
}

/* report.html of merged: a point per second of TTFT p99 that hist.jsonl
 * holds, ok points summing to what ended in the window's whole seconds,
 * and the words "merged" in its header and title. */
static void page_check(const char *merged, const char *words)
{
    struct secs m;
    secs_load(merged, &m, 1);
    char *doc = harness_read_in(merged, "report.html");
    double xs[SECONDS], ys[SECONDS];
    size_t n = harness_svg_points(doc, "chart-ttft-time", "ttft_p99", xs, ys, SECONDS);
    assert_true(n >= 3);
    assert_int_equal(n, m.lines_ttft);
    n = harness_svg_points(doc, "chart-completions", "ok_per_s", xs, ys, SECONDS);
    assert_true(n >= 1);
    for (size_t i = 0; i < n && i < SECONDS; i++)
        assert_int_equal((int64_t)ys[i], m.ok[(int)xs[i]]);
    char want[160];
    snprintf(want, sizeof want, "<span id=\"merged\">%s</span>", words);
    HARNESS_HAS(doc, want);
    snprintf(want, sizeof want, "<title>llmload run, %s</title>", words);
    HARNESS_HAS(doc, want);
    free(doc);
}

/* Merged whole: every second added up, the charts drawn, the page
 * rebuilt byte for byte; --hist-only writes the same hist.jsonl. */
static void test_merged_hist(void **state)
{
    (void)state;
    char sd[2][600], merged[600], hist_only[600];
    shards_run(sd);
    const char *both[] = {sd[1], sd[0], NULL};
    free(merge(both, "merged", NULL, merged, sizeof merged));
    secs_summed(merged, sd, 2);
    page_check(merged, "merged from 2 shards");

    /* report rebuilds the page from the files beside it (summary.json
     * from the records and its own ITL histograms, so it stays). */
    char *hist = harness_read_in(merged, "hist.jsonl");
    char *sum = harness_read_in(merged, "summary.json");
    const char *files[] = {"report.html", NULL};
    free(harness_report_rebuilds(merged, files));
    char *again = harness_read_in(merged, "hist.jsonl");
    assert_string_equal(again, hist);
    free(again);
    again = harness_read_in(merged, "summary.json");
    assert_string_equal(again, sum);
    free(again);
    free(sum);

    const char *ho[] = {"--hist-only", NULL};
    free(merge(both, "hist-only", ho, hist_only, sizeof hist_only));
    again = harness_read_in(hist_only, "hist.jsonl");
    assert_string_equal(again, hist);
    free(again);
    char *doc = harness_read_in(hist_only, "report.html");
    HARNESS_HAS(doc, "<span id=\"merged\">merged from 2 shards, histograms only</span>");
    free(doc);

    /* Shard 0 alone: its own seconds, and the page says what is missing. */
    const char *one[] = {sd[0], NULL};
    const char *partial[] = {"--allow-partial", NULL};
    free(merge(one, "partial", partial, merged, sizeof merged));
    secs_summed(merged, sd, 1);
    page_check(merged, "merged from 1 of 2 shards");

    /* hist.jsonl.tmp cannot be made (a directory there): said, exit 3,
     * and the previous merge's hist.jsonl gone, not drawn as this one's. */
    char from[700], to[700];
    harness_tmp_path(merged, sizeof merged, "merged");
    snprintf(from, sizeof from, "%s/hist.jsonl.tmp", merged);
    assert_int_equal(mkdir(from, 0755), 0);
    const char *force[] = {"--force", NULL};
    char *err = merge_rc(both, "merged", force, merged, sizeof merged, 3);
    HARNESS_HAS(err, "merge: warning: no hist.jsonl written", from);
    free(err);
    assert_int_equal(rmdir(from), 0);
    snprintf(from, sizeof from, "%s/hist.jsonl", merged);
    assert_int_not_equal(access(from, F_OK), 0);

    /* No hist.jsonl in shard 1: said, none written, the old one gone. */
    free(merge(both, "merged", force, merged, sizeof merged)); /* the old one */
    assert_int_equal(access(from, F_OK), 0);
    snprintf(from, sizeof from, "%s/hist.jsonl", sd[1]);
    snprintf(to, sizeof to, "%s/hist.jsonl.away", sd[1]);
    assert_int_equal(rename(from, to), 0);
    err = merge(both, "merged", force, merged, sizeof merged);
    HARNESS_HAS(err, "merge: warning: no hist.jsonl written", from);
    free(err);
    snprintf(from, sizeof from, "%s/hist.jsonl", merged);
    assert_int_not_equal(access(from, F_OK), 0);
    doc = harness_read_in(merged, "report.html");
    assert_int_equal(harness_svg_points(doc, "chart-ttft-time", "ttft_p99", NULL, NULL, 0), 0);
    free(doc);

    /* A killed shard's cut-off last line (no newline): skipped with a
     * warning naming it, and the seconds before it merged as before. */
    snprintf(from, sizeof from, "%s/hist.jsonl", sd[1]);
    assert_int_equal(rename(to, from), 0);
    snprintf(from, sizeof from, "%s/hist.jsonl", sd[0]);
    char *log0 = harness_read_in(sd[0], "hist.jsonl");
    size_t lines0 = 0;
    for (const char *c = log0; *c; c++)
        lines0 += *c == '\n';
    FILE *f = fopen(from, "a");
    assert_non_null(f);
    fputs("{\"t_ns\":5,", f);
    assert_int_equal(fclose(f), 0);
    err = merge(both, "merged", force, merged, sizeof merged);
    char want[800];
    snprintf(want, sizeof want, "merge: warning: %s:%zu: a cut-off last line, skipped", from,
             lines0 + 1);
    HARNESS_HAS(err, want);
    free(err);
    again = harness_read_in(merged, "hist.jsonl");
    assert_string_equal(again, hist);
    free(again);
    doc = harness_read_in(merged, "report.html");
    assert_true(harness_svg_points(doc, "chart-ttft-time", "ttft_p99", NULL, NULL, 0) >= 3);
    free(doc);

    /* The same line with its newline is a bad line like any: none written. */
    f = fopen(from, "a");
    assert_non_null(f);
    fputs("\n", f);
    assert_int_equal(fclose(f), 0);
    err = merge(both, "merged", force, merged, sizeof merged);
    HARNESS_HAS(err, "merge: warning: no hist.jsonl written", from);
    free(err);
    snprintf(to, sizeof to, "%s/hist.jsonl", merged);
    assert_int_not_equal(access(to, F_OK), 0);
    free(log0);
    free(hist);
}

HARNESS_MAIN(cmocka_unit_test_teardown(test_merged_hist, harness_sim_tmp_teardown))
