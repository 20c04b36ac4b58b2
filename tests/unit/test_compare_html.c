/* test_compare_html.c: compare.html, read back. Hand-made compare.json
 * documents (runs with two candidates, sweeps with one) go in; the test
 * checks that the page is well-formed (every tag closed, attributes
 * quoted, entities valid), that each chart has exactly one series per
 * side carrying the document's numbers, that colour (class better or
 * worse) is on exactly the rows called so, that hostile labels are
 * escaped, that nothing is fetched, and that the same document gives the
 * same bytes. */
#include "test.h"
#include "testutil.h"

#include <jansson.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "report/compare_html.h"
#include "util/strbuf.h"

static json_t *row(const char *name, const char *unit, double b, double c, double d,
                   const char *verdict)
{
    json_t *diff = json_pack("{s:s,s:f,s:f,s:f,s:b}", "kind", "relative", "value", d, "lo",
                             d - 0.05, "hi", d + 0.05, "too_few", 0);
    return json_pack("{s:s,s:s,s:s,s:f,s:f,s:o,s:s,s:s,s:n}", "row", name, "unit", unit, "better",
                     "lower", "baseline", b, "candidate", c, "diff", diff, "method", "bootstrap",
                     "verdict", verdict, "same_because");
}

/* Runs: a baseline and two candidates; candidate 1 worse on ttft_p99 and
 * better on e2e_p50, candidate 2 the same everywhere. */
static json_t *runs_doc(void)
{
    json_t *doc =
        json_pack("{s:s,s:s,s:s,s:i,s:f,s:f}", "schema", "llmload.compare/1", "version", "test",
                  "kind", "run", "bootstrap", 2000, "confidence", 0.95, "min_effect", 0.05);
    json_object_set_new(doc, "baseline", json_pack("{s:s,s:s}", "dir", "a", "label", "base<&>\"'"));
    json_t *cands = json_array();
    for (int c = 0; c < 2; c++) {
        json_t *rows = json_array();
        static const char *const names[] = {"ttft_p50", "ttft_p90", "ttft_p99",
                                            "e2e_p50",  "e2e_p90",  "e2e_p99"};
        for (int i = 0; i < 6; i++) {
            const char *v = "same";
            if (c == 0 && i == 2)
                v = "worse";
            if (c == 0 && i == 3)
                v = "better";
            double base = 1e6 * (10 + i), cand = base * (1 + 0.1 * (c + 1));
            json_array_append_new(rows, row(names[i], "ns", base, cand, 0.1 * (c + 1), v));
        }
        json_t *jc = json_pack("{s:s,s:s,s:[],s:n,s:o,s:[],s:s,s:s}", "dir", c ? "c" : "b", "label",
                               c ? "cand2" : "cand1", "config_differences", "tags_differ", "rows",
                               rows, "fail_on", "outcome", c ? "INVALID" : "ok", "invalid_reason",
                               "lateness p99 9ms");
        if (c == 1)
            json_object_set_new(jc, "load_differences",
                                json_pack("[{s:s,s:f,s:f}]", "key", "rate_per_s", "baseline", 40.0,
                                          "candidate", 10.0));
        json_array_append_new(cands, jc);
    }
    json_object_set_new(doc, "candidates", cands);
    json_object_set_new(doc, "exit_status", json_integer(0));
    return doc;
}

static json_t *bracket(double v, double lo, double hi)
{
    return json_pack("{s:b,s:f,s:f,s:f,s:b,s:n}", "found", 1, "value", v, "lo", lo, "hi", hi,
                     "lower_bound", 0, "why");
}

static json_t *curve(double scale)
{
    json_t *a = json_array();
    static const double rates[] = {4, 12, 24};
    for (int i = 0; i < 3; i++)
        json_array_append_new(a, json_pack("{s:f,s:f,s:f,s:f,s:f,s:b}", "offered_rps", rates[i],
                                           "ttft_p99_ns", 1e7 * (i + 1), "tpot_p99_ns",
                                           5e6 * (i + 1) * scale, "goodput_rps", rates[i] * 0.9,
                                           "attainment", 1.0 - 0.1 * i, "pass", i < 1));
    return a;
}

/* Sweeps: a baseline and one candidate whose capacity is worse. */
static json_t *sweeps_doc(void)
{
    json_t *doc =
        json_pack("{s:s,s:s,s:s,s:i,s:f,s:f}", "schema", "llmload.compare/1", "version", "test",
                  "kind", "sweep", "bootstrap", 2000, "confidence", 0.95, "min_effect", 0.05);
    json_object_set_new(doc, "baseline",
                        json_pack("{s:s,s:s,s:o,s:o,s:o}", "dir", "a", "label", "base", "capacity",
                                  bracket(24, 24, 36), "knee", bracket(20, 12, 24), "curve",
                                  curve(1)));
    json_t *rows = json_array();
    json_array_append_new(rows, row("tpot_p50", "ns", 5e6, 7.5e6, 0.5, "worse"));
    json_array_append_new(rows, row("ttft_p50", "ns", 5e6, 5e6, 0, "same"));
    json_t *rates = json_array();
    json_array_append_new(rates, json_pack("{s:f,s:o}", "offered_rps", 4.0, "rows", rows));
    json_t *diffs = json_array();
    json_array_append_new(diffs, json_pack("{s:s,s:s,s:s}", "key", "output_tokens", "baseline",
                                           "fixed:16", "candidate", "fixed:32"));
    json_t *c = json_pack("{s:s,s:s,s:o,s:o,s:o,s:o,s:{s:s,s:n},s:{s:s,s:s},s:o}", "dir", "b",
                          "label", "slow", "capacity", bracket(4, 4, 12), "knee",
                          bracket(16, 12, 24), "curve", curve(1.5), "config_differences", diffs,
                          "capacity_verdict", "verdict", "worse", "same_because", "knee_verdict",
                          "verdict", "same", "same_because", "brackets_overlap", "rates", rates);
    json_object_set_new(doc, "candidates", json_pack("[o]", c));
    json_object_set_new(doc, "exit_status", json_integer(0));
    return doc;
}

static char *render(json_t *doc)
{
    struct strbuf b;
    strbuf_init(&b);
    compare_html_render(doc, &b);
    return b.data; /* the caller frees */
}

/* Every <tr> with a data-verdict: class="better"/"worse" exactly when the
 * verdict is better/worse. Returns how many were coloured. */
static int check_row_colours(const char *h)
{
    int coloured = 0;
    for (const char *p = strstr(h, "<tr"); p; p = strstr(p + 1, "<tr")) {
        const char *gt = strchr(p, '>');
        assert_non_null(gt);
        char tag[400];
        snprintf(tag, sizeof tag, "%.*s", (int)(gt - p + 1), p);
        char v[32], cls[32];
        if (!svgtest_attr(tag, "data-verdict", v, sizeof v))
            continue;
        int has = svgtest_attr(tag, "class", cls, sizeof cls);
        int called = strcmp(v, "better") == 0 || strcmp(v, "worse") == 0;
        if (has != called || (has && strcmp(cls, v) != 0))
            fail_msg("row colour does not match its verdict: %s", tag);
        coloured += has;
    }
    return coloured;
}

/* Chart id has one series per side, side-0 .. side-(n-1), each with
 * npts points; ys of side s into y (npts). */
static void check_series(const char *h, const char *id, int nsides, size_t npts, int side,
                         double *y)
{
    size_t len;
    const char *s = svgtest_chart_find(h, id, &len);
    if (!s)
        fail_msg("no chart %s", id);
    for (int k = 0; k <= nsides; k++) {
        char key[16];
        snprintf(key, sizeof key, "side-%d", k);
        double xs[16], ys[16];
        size_t n =
            svgtest_collect(s, len, "<circle class=\"pt\"", key, "data-x", "data-y", xs, ys, 16);
        if (k < nsides && n != npts)
            fail_msg("chart %s: series %s has %zu points, want %zu", id, key, n, npts);
        if (k == nsides && n != 0)
            fail_msg("chart %s: a series %s beyond the sides", id, key);
        if (k == side)
            memcpy(y, ys, npts * sizeof *y);
    }
}

static void test_runs_page(void **state)
{
    json_t *doc = runs_doc();
    char *h = render(doc);
    assert_well_formed(h);
    static const char *const has[] = {
        "base&lt;&amp;&gt;",     /* the hostile label, escaped */
        "data-row=\"ttft_p99\"", /* rows keep their name in data-row, */
        "<td>TTFT p99</td>",     /* titled as the terminal table titles them */
        "div.chart{",            /* one card per chart: its style on the div */
        "cand2 (candidate) was INVALID: lateness p99 9ms", /* said at the top */
        /* another load, said as the terminal's note line says it */
        "load differs (latencies move with the load as well as the server): rate_per_s: 40.0 "
        "vs 10.0</div>",
        NULL,
    };
    static const char *const lacks[] = {
        "<script",
        "src=",
        "href=", /* self-contained */
        "base<&>",
        "<td>ttft_p99</td>",
        "\n.chart{",             /* not on the svg inside it (class "chart" too): a second border */
        "cand1 (candidate) was", /* an ok side is not named at the top */
        NULL,
    };
    assert_page(h, has, lacks);
    assert_int_equal(check_row_colours(h), 2);
    double y[3];
    /* The baseline's TTFT p50/p90/p99 (10, 11, 12 ms), cand2's 1.2 times. */
    check_series(h, "cmp-ttft", 3, 3, 0, y);
    assert_true(fabs(y[0] - 10) < 1e-9 && fabs(y[2] - 12) < 1e-9);
    check_series(h, "cmp-ttft", 3, 3, 2, y);
    assert_true(fabs(y[0] - 12) < 1e-9);
    check_series(h, "cmp-e2e", 3, 3, 1, y);
    assert_true(fabs(y[0] - 13 * 1.1) < 1e-9);
    /* Deterministic. */
    char *h2 = render(doc);
    assert_string_equal(h, h2);
    free(h2);
    free(h);
    json_decref(doc);
}

static void test_sweeps_page(void **state)
{
    json_t *doc = sweeps_doc();
    char *h = render(doc);
    assert_well_formed(h);
    /* capacity worse, tpot_p50 worse: two coloured rows, no more. */
    assert_int_equal(check_row_colours(h), 2);
    assert_non_null(strstr(h, "data-row=\"capacity\" data-verdict=\"worse\""));
    assert_non_null(strstr(h, "data-row=\"knee\" data-verdict=\"same\""));
    /* The allowed difference is shown at the top, before the charts. */
    const char *d = strstr(h, "output_tokens");
    assert_non_null(d);
    assert_true(d < strstr(h, "<svg"));
    double y[3];
    check_series(h, "cmp-tpot", 2, 3, 1, y);
    assert_true(fabs(y[1] - 10 * 1.5) < 1e-9);
    check_series(h, "cmp-ttft", 2, 3, 0, y);
    assert_true(fabs(y[2] - 30) < 1e-9);
    check_series(h, "cmp-goodput", 2, 3, 0, y);
    assert_true(fabs(y[2] - 24 * 0.9) < 1e-9);
    check_series(h, "cmp-attainment", 2, 3, 1, y);
    assert_true(fabs(y[1] - 90) < 1e-9);
    /* Each side's capacity marked in each chart, at its value. */
    size_t len;
    const char *g = svgtest_chart_find(h, "cmp-goodput", &len);
    assert_non_null(g);
    double xs[4], ys[4];
    assert_int_equal(svgtest_collect(g, len, "<line class=\"vline\" data-key=\"capacity-side-0\"",
                                     NULL, "data-x", "data-x", xs, ys, 4),
                     1);
    assert_true(fabs(xs[0] - 24) < 1e-9);
    assert_int_equal(svgtest_collect(g, len, "<line class=\"vline\" data-key=\"capacity-side-1\"",
                                     NULL, "data-x", "data-x", xs, ys, 4),
                     1);
    assert_true(fabs(xs[0] - 4) < 1e-9);
    free(h);
    json_decref(doc);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_runs_page),
        cmocka_unit_test(test_sweeps_page),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
