/* Integration tests of `llmload compare` of sweeps, on saved sweeps (no
 * load is sent): the baseline is tests/data/report/sweep-classes; the
 * candidate is the same sweep with every request's decode made 1.5 times
 * slower (last_ns and end_ns moved by half the first-to-last span), a
 * deterministic transform whose truth is known: TPOT, ITL and E2E grow by
 * 50% on every ok request, TTFT stays. The candidate must come out worse
 * on TPOT at every offered rate where its percentile can be bounded and
 * never better, with an SLO capacity no higher; a sweep compared with
 * itself comes out same everywhere; compare.html carries one series per
 * side and colour only on the rows called better or worse; --fail-on
 * gates every common rate (1 on a bounded worsening, 5 on a p99 that a
 * short step cannot bound); mixed kinds are refused, and so is a
 * directory that only claims to be a sweep. */
#include <jansson.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "harness.h"
#include "test.h"

static const char *const raw_files[] = {"run.json", "steps.jsonl", "requests.jsonl"};

/* Copy the fixture's raw files into dir (made); with slow > 1 every ok
 * request's first-to-last span (and so its end) is stretched by slow. */
static void fixture_copy(const char *dir, double slow)
{
    const char *data = getenv("LLMLOAD_DATA");
    assert_non_null(data);
    const char *mk[] = {"mkdir", "-p", dir, NULL};
    assert_int_equal(harness_run_quiet(mk, 10), 0);
    for (size_t i = 0; i < sizeof raw_files / sizeof raw_files[0]; i++) {
        char src[800], dst[800];
        snprintf(src, sizeof src, "%s/report/sweep-classes/%s", data, raw_files[i]);
        snprintf(dst, sizeof dst, "%s/%s", dir, raw_files[i]);
        size_t len = 0;
        char *text = harness_read_file(src, &len);
        assert_non_null(text);
        FILE *f = fopen(dst, "w");
        assert_non_null(f);
        if (slow == 1 || strcmp(raw_files[i], "requests.jsonl") != 0) {
            assert_int_equal(fwrite(text, 1, len, f), len);
        } else {
            char *save = NULL;
            for (char *line = strtok_r(text, "\n", &save); line;
                 line = strtok_r(NULL, "\n", &save)) {
                json_error_t je;
                json_t *r = json_loads(line, 0, &je);
                assert_non_null(r);
                json_t *first = json_object_get(r, "first_ns"),
                       *last = json_object_get(r, "last_ns");
                if (json_is_integer(first) && json_is_integer(last)) {
                    json_int_t d = json_integer_value(last) - json_integer_value(first);
                    json_int_t add = (json_int_t)llround((double)d * (slow - 1));
                    json_object_set_new(r, "last_ns", json_integer(json_integer_value(last) + add));
                    json_int_t end = json_integer_value(json_object_get(r, "end_ns"));
                    json_object_set_new(r, "end_ns", json_integer(end + add));
                }
                char *s = json_dumps(r, JSON_COMPACT | JSON_PRESERVE_ORDER);
                fprintf(f, "%s\n", s);
                free(s);
                json_decref(r);
            }
        }
        assert_int_equal(fclose(f), 0);
        free(text);
    }
}

/* A compare's folders in a fresh temporary folder: the baseline (the
 * fixture as is), with cand a candidate (the fixture stretched by slow,
 * as fixture_copy does), and the output. */
struct dirs {
    char base[700], cand[700], out[700];
};

static void dirs_make(struct dirs *d, int cand, double slow)
{
    harness_tmp_begin();
    harness_tmp_path(d->base, sizeof d->base, "base");
    harness_tmp_path(d->out, sizeof d->out, "cmp");
    fixture_copy(d->base, 1);
    d->cand[0] = '\0';
    if (cand) {
        harness_tmp_path(d->cand, sizeof d->cand, "cand");
        fixture_copy(d->cand, slow);
    }
}

/* `llmload compare base cand --out out ...`, which must exit 0; returns
 * compare.json. */
static json_t *compare_ok(const char *base, const char *cand, const char *out)
{
    const char *args[] = {"compare", base,   cand,      "--out", out, "--force",
                          "--label", "base", "--label", "cand",  NULL};
    char *o = harness_run_expect(args, 60, 0, NULL);
    /* The terminal table fits 120 columns. */
    for (const char *p = o; *p;) {
        size_t n = strcspn(p, "\n");
        if (n > 120)
            fail_msg("a line of %zu columns: %.*s", n, (int)n, p);
        p += n + (p[n] == '\n');
    }
    HARNESS_HAS(o, "SLO capacity");
    free(o);
    json_t *j = harness_json_load(out, "compare.json");
    assert_string_equal(harness_sval(j, "schema"), "llmload.compare/1");
    assert_string_equal(harness_sval(j, "kind"), "sweep");
    return j;
}

static json_t *cand0(json_t *cmp)
{
    return json_array_get(json_object_get(cmp, "candidates"), 0);
}

static json_t *rate_row(json_t *rate, const char *name)
{
    return harness_row_named(json_object_get(rate, "rows"), name);
}

/* `llmload compare base cand --out out --force --quiet [--fail-on spec]`
 * (spec NULL: none), which must exit want with needle on stderr (when
 * not NULL). Returns compare.json (caller decrefs). */
static json_t *compare_quiet(const char *base, const char *cand, const char *out, const char *spec,
                             int want, const char *needle)
{
    const char *args[] = {"compare", base,      cand,      "--out",
                          out,       "--force", "--quiet", spec ? "--fail-on" : NULL,
                          spec,      NULL};
    char *e = NULL;
    free(harness_run_expect(args, 60, want, &e));
    if (needle)
        HARNESS_HAS(e, needle);
    free(e);
    return harness_json_load(out, "compare.json");
}

/* The HTML: one series per side in each chart (side-0 and side-1), and
 * class="better"/"worse" only on rows whose data-verdict says so. */
static void check_html(const char *out, int want_worse)
{
    char *h = harness_read_in(out, "compare.html");
    /* Self-contained: nothing to fetch (xmlns names are not fetched). */
    HARNESS_LACKS(h, "src=", "href=", "url(http", "@import", "<script");
    int charts = 0;
    for (const char *p = strstr(h, "<svg"); p; p = strstr(p + 1, "<svg")) {
        const char *end = strstr(p, "</svg>");
        assert_non_null(end);
        charts++;
        for (int s = 0; s < 3; s++) {
            char key[40];
            snprintf(key, sizeof key, "data-series=\"side-%d\"", s);
            const char *k = strstr(p, key);
            if (s < 2 && !(k && k < end))
                fail_msg("chart %d has no series side-%d", charts, s);
            if (s == 2 && k && k < end)
                fail_msg("chart %d has a third series", charts);
        }
    }
    assert_int_equal(charts, 4);
    int worse = 0;
    for (const char *p = strstr(h, "<tr"); p; p = strstr(p + 1, "<tr")) {
        const char *gt = strchr(p, '>');
        assert_non_null(gt);
        char tag[400];
        snprintf(tag, sizeof tag, "%.*s", (int)(gt - p), p);
        const char *v = strstr(tag, "data-verdict=\"");
        if (!v)
            continue;
        v += 14;
        int coloured = strstr(tag, "class=\"") != NULL;
        int called = strncmp(v, "better\"", 7) == 0 || strncmp(v, "worse\"", 6) == 0;
        if (coloured != called)
            fail_msg("row colour does not match its verdict: %s", tag);
        if (called) {
            char want[40];
            snprintf(want, sizeof want, "class=\"%.*s\"", (int)strcspn(v, "\""), v);
            assert_non_null(strstr(tag, want));
        }
        worse += strncmp(v, "worse\"", 6) == 0;
    }
    if (want_worse)
        assert_true(worse > 0);
    else
        assert_int_equal(worse, 0);
    free(h);
}

static void test_compare_sweeps_slower_decode(void **state)
{
    struct dirs dirs;
    dirs_make(&dirs, 1, 1.5);
    const char *base = dirs.base, *slow = dirs.cand, *out = dirs.out;
    json_t *j = compare_ok(base, slow, out);
    json_t *b = json_object_get(j, "baseline"), *c = cand0(j);

    /* The fixture's truth (tests/data/report/README.md): capacity 12 req/s,
     * 24 failing; knee between 12 and 24. Brackets one step wide. */
    json_t *bc = json_object_get(b, "capacity");
    assert_true(json_is_true(json_object_get(bc, "found")));
    assert_true(fabs(harness_num(bc, "value") - 12) < 1e-9);
    assert_true(fabs(harness_num(bc, "lo") - 12) < 1e-9);
    assert_true(fabs(harness_num(bc, "hi") - 24) < 1e-9);
    json_t *cc = json_object_get(c, "capacity");
    assert_true(json_is_true(json_object_get(cc, "found")));
    assert_true(harness_num(cc, "value") <= harness_num(bc, "value"));
    assert_true(harness_num(cc, "hi") - harness_num(cc, "lo") > 0);
    const char *cv = harness_sval(json_object_get(c, "capacity_verdict"), "verdict");
    assert_true(strcmp(cv, "same") == 0 || strcmp(cv, "worse") == 0);
    json_t *bk = json_object_get(b, "knee");
    assert_true(json_is_true(json_object_get(bk, "found")));
    assert_true(harness_num(bk, "lo") <= harness_num(bk, "value"));
    assert_true(harness_num(bk, "hi") > harness_num(bk, "value"));

    /* Curves: TPOT p99 1.5 times the baseline's at each of the 4 rates,
     * TTFT p99 unchanged. */
    json_t *cb = json_object_get(b, "curve"), *ccv = json_object_get(c, "curve");
    assert_int_equal(json_array_size(cb), 4);
    assert_int_equal(json_array_size(ccv), 4);
    for (size_t i = 0; i < 4; i++) {
        json_t *p = json_array_get(cb, i), *q = json_array_get(ccv, i);
        assert_true(fabs(harness_num(p, "offered_rps") - harness_num(q, "offered_rps")) < 1e-9);
        double r = harness_num(q, "tpot_p99_ns") / harness_num(p, "tpot_p99_ns");
        if (fabs(r - 1.5) > 0.01)
            fail_msg("TPOT p99 ratio %.4f at %g req/s", r, harness_num(p, "offered_rps"));
        assert_true(fabs(harness_num(q, "ttft_p99_ns") - harness_num(p, "ttft_p99_ns")) < 1);
    }

    /* Per common rate: TPOT worse wherever its percentile is bounded
     * (p50 everywhere; p99 never has the ~700 values it needs here), never
     * better; TTFT never called. */
    json_t *rates = json_object_get(c, "rates");
    assert_int_equal(json_array_size(rates), 4);
    size_t i;
    json_t *rate;
    json_array_foreach(rates, i, rate)
    {
        static const char *const tp[] = {"tpot_p50", "tpot_p90", "tpot_p99"};
        for (size_t k = 0; k < 3; k++) {
            json_t *r = rate_row(rate, tp[k]);
            json_t *d = json_object_get(r, "diff");
            assert_true(fabs(harness_num(d, "value") - 0.5) < 0.01);
            const char *v = harness_sval(r, "verdict");
            if (json_is_true(json_object_get(d, "too_few")))
                assert_string_equal(v, "same");
            else
                assert_string_equal(v, "worse");
        }
        assert_string_equal(harness_sval(rate_row(rate, "tpot_p50"), "verdict"), "worse");
        static const char *const tt[] = {"ttft_p50", "ttft_p90", "ttft_p99"};
        for (size_t k = 0; k < 3; k++)
            assert_string_equal(harness_sval(rate_row(rate, tt[k]), "verdict"), "same");
    }
    json_decref(j);
    check_html(out, 1);
    harness_tmp_end();
}

/* A sweep against itself: every row and both brackets same. */
static void test_compare_sweep_with_itself(void **state)
{
    struct dirs dirs;
    dirs_make(&dirs, 0, 1);
    const char *base = dirs.base, *out = dirs.out;
    json_t *j = compare_ok(base, base, out);
    json_t *c = cand0(j);
    assert_string_equal(harness_sval(json_object_get(c, "capacity_verdict"), "verdict"), "same");
    assert_string_equal(harness_sval(json_object_get(c, "knee_verdict"), "verdict"), "same");
    size_t i, k;
    json_t *rate, *r;
    size_t rows = 0;
    json_array_foreach(json_object_get(c, "rates"), i, rate)
    {
        json_array_foreach(json_object_get(rate, "rows"), k, r)
        {
            rows++;
            if (strcmp(harness_sval(r, "verdict"), "same") != 0)
                fail_msg("%s at rate %zu: %s", harness_sval(r, "row"), i,
                         harness_sval(r, "verdict"));
        }
    }
    assert_true(rows >= 4 * 17);
    json_decref(j);
    check_html(out, 0);
    harness_tmp_end();
}

/* Replace the first from in dir/name by to (which must be there). */
static void file_replace(const char *dir, const char *name, const char *from, const char *to)
{
    char path[800];
    snprintf(path, sizeof path, "%s/%s", dir, name);
    size_t len = 0;
    char *text = harness_read_file(path, &len);
    assert_non_null(text);
    char *at = strstr(text, from);
    if (!at)
        fail_msg("%s: no \"%s\"", path, from);
    FILE *f = fopen(path, "w");
    assert_non_null(f);
    fwrite(text, 1, (size_t)(at - text), f);
    fputs(to, f);
    fputs(at + strlen(from), f);
    assert_int_equal(fclose(f), 0);
    free(text);
}

/* A candidate sweep stopped in its second step (12 req/s): compare says
 * so on stderr and in compare.json, and leaves the half-run rate out of
 * the per-rate rows; the other rates stay. */
static void test_compare_sweep_interrupted(void **state)
{
    struct dirs dirs;
    dirs_make(&dirs, 1, 1);
    const char *base = dirs.base, *cand = dirs.cand, *out = dirs.out;
    /* The 12 req/s line's "interrupted": false becomes true. */
    char path[800];
    snprintf(path, sizeof path, "%s/steps.jsonl", cand);
    char *text = harness_read_file(path, NULL);
    char *line = strstr(text, "\"offered_rps\":12.0,");
    assert_non_null(line);
    char *flag = strstr(line, "\"interrupted\":false");
    assert_non_null(flag);
    memcpy(flag, "\"interrupted\":true ", strlen("\"interrupted\":true ")); /* same length */
    FILE *f = fopen(path, "w");
    assert_non_null(f);
    fputs(text, f);
    assert_int_equal(fclose(f), 0);
    free(text);
    file_replace(cand, "run.json", "{",
                 "{\"outcome\": {\"interrupted\": true, \"stopped_in\": \"load\"}, ");

    json_t *j = compare_quiet(base, cand, out, NULL, 0, "was interrupted");
    json_t *c = cand0(j);
    assert_true(json_is_true(json_object_get(c, "interrupted")));
    assert_string_equal(harness_sval(c, "outcome"), "interrupted");
    assert_true(json_is_false(json_object_get(json_object_get(j, "baseline"), "interrupted")));
    size_t i;
    json_t *rate;
    size_t n = 0;
    json_array_foreach(json_object_get(c, "rates"), i, rate)
    {
        n++;
        if (harness_num(rate, "offered_rps") == 12.0)
            fail_msg("the interrupted step's rate, 12 req/s, was compared");
    }
    assert_int_equal(n, 3); /* 4, 24 and 36 */
    json_decref(j);
    harness_tmp_end();
}

/* Mixed kinds, a directory that is no sweep, and a request's line twice
 * are refused with one line. */
static void test_compare_sweep_refusals(void **state)
{
    harness_tmp_begin();
    char base[700], run[700];
    harness_tmp_path(base, sizeof base, "base");
    fixture_copy(base, 1);
    harness_tmp_results_stub(run, sizeof run, "run", "run");
    const char *mixed[] = {"compare", base, run, NULL};
    harness_expect_usage(mixed, "mixed kinds");
    const char *mixed2[] = {"compare", run, base, NULL};
    harness_expect_usage(mixed2, "sweeps with sweeps");
    /* A run.json that says sweep, and nothing else: one line, exit 2. */
    char bare[700];
    harness_tmp_results_stub(bare, sizeof bare, "bare", "sweep");
    const char *nosweep[] = {"compare", base, bare, NULL};
    harness_expect_usage(nosweep, "no config.sweep");
    /* A request's line twice (a file appended to another) would count it
     * twice in every figure: refused, naming the file and both lines. */
    char twice[700], cmd[2000];
    harness_tmp_path(twice, sizeof twice, "twice");
    fixture_copy(twice, 1);
    snprintf(cmd, sizeof cmd, "cd '%s' && sed -n 5p requests.jsonl >> requests.jsonl", twice);
    assert_int_equal(system(cmd), 0);
    const char *dup[] = {"compare", base, twice, NULL};
    harness_expect_usage(dup, "/twice/requests.jsonl:");
    harness_expect_usage(dup, ": request id 5 of step 0 again (first at line 5): one line per "
                              "request; was a file appended to another?");
    harness_tmp_end();
}

/* --fail-on at every common rate: TPOT p50 50% worse fails (1) at each of
 * the 4 rates; TPOT p99, never bounded in these steps, is inconclusive
 * (5); the sweep against itself passes (0) a +30% gate. (Not +10%: at 36
 * req/s, past the fixture's knee, its TPOT climbs through the step, and
 * the block bootstrap, which keeps consecutive requests together, gave
 * TPOT p50 [-11.6%, +13.1%], where single requests gave under 10%; with
 * the widening of few blocks [-21.8%, +27.9%]: a trend through the step
 * is correlation longer than any block, which the extrapolation from
 * blocks of L and 2L sees.) */
static void test_compare_sweeps_fail_on(void **state)
{
    struct dirs dirs;
    dirs_make(&dirs, 1, 1.5);
    const char *base = dirs.base, *slow = dirs.cand, *out = dirs.out;
    static const struct {
        const char *spec;
        int same, want;
        const char *result;
    } cases[] = {
        {"tpot_p50:+10%", 0, 1, "fail"},
        {"tpot_p99:+10%", 0, 5, "inconclusive"},
        {"tpot_p50:+30%", 1, 0, "pass"},
    };
    for (size_t k = 0; k < sizeof cases / sizeof cases[0]; k++) {
        /* stderr names each rate that did not pass. */
        json_t *j = compare_quiet(base, cases[k].same ? base : slow, out, cases[k].spec,
                                  cases[k].want, cases[k].want ? "at 36 req/s" : NULL);
        assert_int_equal(harness_ival(j, "exit_status"), cases[k].want);
        size_t i;
        json_t *rate;
        json_array_foreach(json_object_get(cand0(j), "rates"), i, rate)
        {
            json_t *g = json_array_get(json_object_get(rate, "fail_on"), 0);
            assert_non_null(g);
            assert_string_equal(harness_sval(g, "result"), cases[k].result);
        }
        json_decref(j);
    }
    /* A limit under --min-effect (5%) is the user's to set, and it judges;
     * a note says the table will call what it fails "same". */
    json_decref(compare_quiet(base, base, out, "tpot_p50:+2%", 5, /* inconclusive: wide */
                              "note: --fail-on tpot_p50:+2% is under --min-effect 5%: a change "
                              "between them fails the gate where the table reads it same\n"));
    harness_tmp_end();
}

/* --fail-on's capacity and knee rows, once per candidate, on the
 * fixture against itself: the capacity bracket [12, 24] against [12, 24]
 * allows a change from 12/24 - 1 = -50% to 24/12 - 1 = +100%, so a -10%
 * threshold is inconclusive (5) and a -70% one passes; the knee's [12,
 * 24] allows -50%, so knee:-10% is inconclusive and knee:-60% passes.
 * compare.json has the gates in the candidate's fail_on (not in the
 * rates'), and the brackets' interval in capacity_verdict.diff. Runs
 * have no capacity: the row is refused for them (2). */
static void test_compare_sweeps_fail_on_capacity(void **state)
{
    struct dirs dirs;
    dirs_make(&dirs, 0, 1);
    const char *base = dirs.base, *out = dirs.out;
    static const struct {
        const char *spec;
        int want;
        const char *result[2];
    } cases[] = {
        {"capacity:-10%", 5, {"inconclusive", NULL}},
        {"capacity:-70%,knee:-60%", 0, {"pass", "pass"}},
        {"knee:-10%,capacity:-70%", 5, {"inconclusive", "pass"}},
    };
    for (size_t k = 0; k < sizeof cases / sizeof cases[0]; k++) {
        json_t *j = compare_quiet(base, base, out, cases[k].spec, cases[k].want,
                                  cases[k].want == 5 ? "inconclusive: " : NULL);
        json_t *c = cand0(j);
        json_t *gates = json_object_get(c, "fail_on");
        for (size_t g = 0; g < 2; g++) {
            if (!cases[k].result[g]) {
                assert_int_equal(json_array_size(gates), g);
                break;
            }
            assert_string_equal(harness_sval(json_array_get(gates, g), "result"),
                                cases[k].result[g]);
        }
        size_t i;
        json_t *rate;
        json_array_foreach(json_object_get(c, "rates"), i, rate)
            assert_int_equal(json_array_size(json_object_get(rate, "fail_on")), 0);
        json_t *d = json_object_get(json_object_get(c, "capacity_verdict"), "diff");
        assert_true(fabs(harness_num(d, "value")) < 1e-12);
        assert_true(fabs(harness_num(d, "lo") - (12.0 / 24 - 1)) < 1e-9);
        assert_true(fabs(harness_num(d, "hi") - 1.0) < 1e-9);
        json_decref(j);
    }
    char run[700];
    harness_tmp_results_stub(run, sizeof run, "run", "run");
    const char *runs[] = {"compare", run, run, "--fail-on", "capacity:-10%", NULL};
    harness_expect_usage(runs, "--fail-on: capacity is a row of sweeps");
    const char *pp[] = {"compare", base, base, "--fail-on", "knee:-1pp", NULL};
    harness_expect_usage(pp, "--fail-on: knee takes percent");
    harness_tmp_end();
}

/* Output tokens per second of step idx of the sweep in dir, from its
 * records: its ok requests that ended in its own window [warmup_ns,
 * duration_ns), over window_ns; *scheduled gets the step's scheduled
 * count (steps.jsonl). */
static double step_tokens_per_s(const char *dir, int64_t idx, double *scheduled)
{
    json_t *steps = harness_jsonl_in(dir, "steps.jsonl");
    json_t *recs = harness_jsonl_in(dir, "requests.jsonl");
    json_t *st = NULL, *x;
    size_t i;
    json_array_foreach(steps, i, x)
    {
        if (json_is_integer(json_object_get(x, "step")) && harness_ival(x, "step") == idx)
            st = x;
    }
    assert_non_null(st);
    double tokens = harness_step_window_tokens(recs, st);
    double w = (double)harness_ival(st, "window_ns") / 1e9;
    *scheduled = (double)harness_ival(st, "scheduled");
    json_decref(steps);
    json_decref(recs);
    return tokens / w;
}

/* The between-run variation: the candidate is the fixture with its
 * second step (12 req/s) relabelled a repeat of the first (4 req/s), so
 * at 4 req/s the candidate has two runs that differ threefold and the
 * baseline one. Each row's interval there is the wider of the records'
 * and the runs': output tok/s's is the runs', computed here from the two
 * steps' records as docs/compare.md says (the candidate's squared CV over
 * its runs, the baseline's taken the same, t at 1 degree of freedom), and
 * the table and compare.json say "runs" / "between_runs"; at 24 req/s,
 * one run a side, every row keeps its own interval. The table still
 * fits 120 columns (compare_ok). */
static void test_compare_sweep_between_runs(void **state)
{
    harness_tmp_begin();
    char base[700], rep[700], out[700];
    harness_tmp_path(base, sizeof base, "base");
    harness_tmp_path(rep, sizeof rep, "rep");
    harness_tmp_path(out, sizeof out, "cmp");
    fixture_copy(base, 1);
    fixture_copy(rep, 1);
    file_replace(rep, "steps.jsonl",
                 "{\"step\":1,\"repeat\":0,\"kind\":\"load\",\"offered_rps\":12.0,",
                 "{\"step\":1,\"repeat\":1,\"kind\":\"load\",\"offered_rps\":4.0,");
    json_t *j = compare_ok(base, rep, out);
    json_t *rates = json_object_get(cand0(j), "rates");
    assert_int_equal(json_array_size(rates), 3); /* 4, 24, 36 */
    json_t *r4 = json_array_get(rates, 0), *r24 = json_array_get(rates, 1);
    assert_true(fabs(harness_num(r4, "offered_rps") - 4) < 1e-9);
    assert_true(fabs(harness_num(r24, "offered_rps") - 24) < 1e-9);

    double nb, n0, n1;
    double b = step_tokens_per_s(base, 0, &nb), c0 = step_tokens_per_s(rep, 0, &n0),
           c1 = step_tokens_per_s(rep, 1, &n1);
    json_t *r = rate_row(r4, "output_tokens_per_s");
    json_t *d = json_object_get(r, "diff");
    double diff = harness_num(d, "value");
    /* Per second, the values' own ratio; two open loops' per request
     * scheduled too (docs/compare.md), over equal windows the pooled
     * tokens over the pooled scheduled counts. */
    ASSERT_NEAR(diff, harness_num(r, "candidate") / harness_num(r, "baseline") - 1, 1e-9);
    ASSERT_NEAR(harness_num(json_object_get(r, "per_scheduled"), "value"),
                (c0 + c1) / (n0 + n1) / (b / nb) - 1, 1e-9);
    double m = (c0 + c1) / 2, cv2 = ((c0 - m) * (c0 - m) + (c1 - m) * (c1 - m)) / (m * m);
    double h = 12.706 * sqrt(cv2 / 1 + cv2 / 2);
    double lo = expm1(log1p(diff) - h), hi = expm1(log1p(diff) + h);
    printf("output tok/s at 4 req/s: %.1f against %.1f and %.1f: %+.1f%% [%+.1f%%, %+.1f%%] "
           "between runs\n",
           b, c0, c1, 100 * diff, 100 * lo, 100 * hi);
    assert_string_equal(harness_sval(r, "interval"), "between_runs");
    assert_int_equal(harness_ival(json_object_get(r, "runs"), "baseline"), 1);
    assert_int_equal(harness_ival(json_object_get(r, "runs"), "candidate"), 2);
    json_t *bw = json_object_get(r, "between_runs");
    ASSERT_NEAR(harness_num(bw, "lo"), lo, 1e-9 * fabs(lo) + 1e-12);
    ASSERT_NEAR(harness_num(bw, "hi"), hi, 1e-9 * fabs(hi));
    ASSERT_NEAR(harness_num(d, "lo"), lo, 1e-9 * fabs(lo) + 1e-12);
    ASSERT_NEAR(harness_num(d, "hi"), hi, 1e-9 * fabs(hi));
    /* +62% is within a noise that wide. */
    assert_string_equal(harness_sval(r, "verdict"), "same");

    size_t i;
    json_t *x;
    json_array_foreach(json_object_get(r24, "rows"), i, x)
    {
        assert_string_equal(harness_sval(x, "interval"), "within_run");
        assert_true(harness_is_null(x, "between_runs"));
        assert_int_equal(harness_ival(json_object_get(x, "runs"), "candidate"), 1);
    }
    json_decref(j);

    /* The terminal says which interval each row shows. */
    const char *args[] = {"compare", base, rep, "--out", out, "--force", NULL};
    char *o = harness_run_expect(args, 60, 0, NULL);
    HARNESS_HAS(o, "runs: baseline 1, candidate 2");
    const char *line = strstr(o, "\noutput tok/s");
    assert_non_null(line);
    char one[160];
    snprintf(one, sizeof one, "%.*s", (int)strcspn(line + 1, "\n"), line + 1);
    assert_non_null(strstr(one, " runs "));
    free(o);
    char *html = harness_read_in(out, "compare.html");
    assert_non_null(strstr(
        html,
        "data-row=\"output_tokens_per_s\" data-verdict=\"same\" data-interval=\"between_runs\""));
    free(html);
    harness_tmp_end();
}

HARNESS_MAIN(cmocka_unit_test(test_compare_sweeps_slower_decode),
             cmocka_unit_test(test_compare_sweep_between_runs),
             cmocka_unit_test(test_compare_sweeps_fail_on_capacity),
             cmocka_unit_test(test_compare_sweep_with_itself),
             cmocka_unit_test(test_compare_sweep_interrupted),
             cmocka_unit_test(test_compare_sweeps_fail_on),
             cmocka_unit_test(test_compare_sweep_refusals))
