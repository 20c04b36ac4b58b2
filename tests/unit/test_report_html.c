/* test_report_html.c: report.html, read back.
 *
 * A hand-made five-step sweep goes in; the test parses the page and checks
 * that each chart carries exactly the data points, SLO lines and markers it
 * was given, that hostile text is escaped, that the page is well-formed
 * (every tag closed, attributes quoted, entities valid) and deterministic.
 *
 * With REPORT_SAMPLE_OUT=path in the environment the binary instead writes
 * a realistic synthetic sweep report to path and exits: the input of
 * scripts/screenshot-report.sh and of docs/report-screenshot.png. */
#include "test.h"
#include "testutil.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "measure/hist.h"
#include "measure/record.h"
#include "report/report_html.h"
#include "util/strbuf.h"
#include "util/util.h"

/* ---- reading the page back ---- */

/* Elements starting with prefix inside the chart id whose data-series is
 * series: attributes a and b into xs and ys. Returns the count. */
static size_t points(const char *doc, const char *id, const char *prefix,
                     const char *series, const char *a, const char *b, double *xs,
                     double *ys, size_t max)
{
    size_t len;
    const char *s = svgtest_chart_find(doc, id, &len);
    if (s == NULL)
        fail_msg("no chart %s", id);
    return svgtest_collect(s, len, prefix, series, a, b, xs, ys, max);
}

static size_t pts(const char *doc, const char *id, const char *series, double *xs,
                  double *ys, size_t max)
{
    return points(doc, id, "<circle class=\"pt\"", series, "data-x", "data-y", xs, ys,
                  max);
}

/* The first element starting with prefix in chart id whose data-key is key. */
static const char *keyed(const char *doc, const char *id, const char *prefix,
                         const char *key)
{
    size_t len;
    const char *s = svgtest_chart_find(doc, id, &len);
    if (s == NULL)
        fail_msg("no chart %s", id);
    for (const char *p = strstr(s, prefix); p != NULL && p < s + len;
         p = strstr(p + 1, prefix)) {
        char v[128];
        if (svgtest_attr(p, "data-key", v, sizeof(v)) && strcmp(v, key) == 0)
            return p;
    }
    return NULL;
}

/* ---- a hand-made five-step sweep ---- */

#define MS ((uint64_t)1000000)

struct fixture {
    struct report r;
    struct report_step steps[6];
    struct report_inflight_sample inflight[5][4];
};

static const double fx_offered[5] = {5, 10, 15, 20, 25};
static const double fx_achieved[5] = {5, 10, 15, 19.5, 21};
static const double fx_completed[5] = {5, 9.9, 14.8, 17, 16};
static const double fx_goodput[5] = {5, 9.9, 14.5, 9, 2};
static const double fx_attain[5] = {1, 1, 0.99, 0.5, 0.1};
static const double fx_out_tps[5] = {1000, 1980, 2960, 3400, 3200};
static const uint64_t fx_ttft_ms[5][3] = {   /* p50 p90 p99 */
    {100, 150, 180}, {120, 200, 260}, {150, 300, 500}, {400, 900, 1500}, {2000, 5000, 9000},
};
static const uint64_t fx_tpot_ms[5][3] = {
    {20, 22, 25}, {22, 25, 30}, {25, 30, 40}, {30, 45, 70}, {35, 60, 90},
};
static const uint64_t fx_e2e_ms[5][3] = {
    {2000, 2500, 3000}, {2200, 2800, 3500}, {2500, 3500, 4500}, {4000, 7000, 9000},
    {8000, 15000, 20000},
};

static void fixture_make(struct fixture *f)
{
    memset(f, 0, sizeof(*f));
    for (int i = 0; i < 5; i++) {
        struct report_step *s = &f->steps[i];
        s->offered_rps = fx_offered[i];
        s->achieved_rps = fx_achieved[i];
        s->completed_rps = fx_completed[i];
        s->goodput_rps = fx_goodput[i];
        s->attainment = fx_attain[i];
        s->input_tps = fx_completed[i] * 500;
        s->output_tps = fx_out_tps[i];
        s->scheduled = (uint64_t)(fx_offered[i] * 60);
        s->ok = (uint64_t)(fx_completed[i] * 60);
        static const int at[3] = {REPORT_P50, REPORT_P90, REPORT_P99};
        for (int p = 0; p < 3; p++) {
            s->ttft_ns[at[p]] = fx_ttft_ms[i][p] * MS;
            s->tpot_ns[at[p]] = fx_tpot_ms[i][p] * MS;
            s->itl_ns[at[p]] = fx_tpot_ms[i][p] * MS;
            s->e2e_ns[at[p]] = fx_e2e_ms[i][p] * MS;
        }
        s->ttft_ns[REPORT_P95] = (s->ttft_ns[REPORT_P90] + s->ttft_ns[REPORT_P99]) / 2;
        s->ttft_ns[REPORT_P999] = s->ttft_ns[REPORT_P99] * 2;
        s->ttft_ns[REPORT_MAX] = s->ttft_ns[REPORT_P99] * 3;
        s->by_kind[REC_OK] = s->ok;
        s->steady = i < 3;
        s->verdict = i < 3 ? "ok" : "saturated";
        s->inflight_mean = fx_offered[i] * 2.5;
        s->inflight_max = fx_offered[i] * 4;
        s->t_start_s = 70.0 * i;
        s->t_end_s = 70.0 * i + 60;
        for (int j = 0; j < 4; j++) {
            f->inflight[i][j].t_s = s->t_start_s + 20.0 * j;
            f->inflight[i][j].inflight = fx_offered[i] * 2 + j;
        }
        s->inflight = f->inflight[i];
        s->n_inflight = 4;
    }
    f->steps[3].by_kind[REC_HTTP_429] = 3;
    f->steps[3].by_kind[REC_TIMEOUT_FIRST_TOKEN] = 1;
    f->steps[4].by_kind[REC_HTTP_429] = 12;
    f->steps[4].by_kind[REC_TIMEOUT_FIRST_TOKEN] = 4;
    /* The first 429s came without a message; the later ones with one. */
    f->steps[4].sample[REC_HTTP_429] = "HTTP 429: <queue full> & retry";

    f->r = (struct report){
        .title = "llmload sweep: sim", .target = "http://127.0.0.1:8000/v1",
        .model = "sim-7b", .version = "test", .started_at = "2025-01-01T00:00:00Z",
        .mode = "open-loop poisson", .steps = f->steps, .n_steps = 5,
        .slo_ttft_ms = 500, .slo_tpot_ms = 50, .attainment_target = 0.99,
        .capacity_rps = 15, .knee_rps = 20,
        .findings_text = "SLO capacity 15 req/s.\nKnee at 20 req/s.",
    };
}

static char *render(const struct report *r)
{
    struct strbuf b;
    strbuf_init(&b);
    report_html_render(r, &b);
    return b.data;              /* the caller frees it */
}

/* cmocka setup and teardown of a test that reads the five-step fixture's
 * page: the page is the test's state. */
static int doc_setup(void **state)
{
    struct fixture f;
    fixture_make(&f);
    *state = render(&f.r);
    return 0;
}

static int doc_teardown(void **state)
{
    free(*state);
    return 0;
}

/* The five-step fixture's page, as it comes, has none of lacks (a NULL-
 * ended list): what a test of an optional section checks first. */
static void fixture_page_lacks(const char *const *lacks)
{
    struct fixture f;
    fixture_make(&f);
    char *doc = render(&f.r);
    assert_page(doc, NULL, lacks);
    free(doc);
}

/* Render r and check the page: well formed, each string of has in it and
 * none of lacks (NULL-ended lists; either may be NULL). */
static void check_render(const struct report *r, const char *const *has, const char *const *lacks)
{
    char *doc = render(r);
    assert_well_formed(doc);
    assert_page(doc, has, lacks);
    free(doc);
}

static void test_latency_points_exact(void **state)
{
    const char *doc = *state;
    assert_well_formed(doc);
    double xs[16], ys[16];
    static const char *const ids[3] = {"chart-ttft", "chart-tpot", "chart-e2e"};
    static const char *const pre[3] = {"ttft", "tpot", "e2e"};
    static const char *const pn[3] = {"p50", "p90", "p99"};
    for (int m = 0; m < 3; m++) {
        for (int p = 0; p < 3; p++) {
            char key[32];
            snprintf(key, sizeof(key), "%s_%s", pre[m], pn[p]);
            assert_int_equal(pts(doc, ids[m], key, xs, ys, 16), 5);
            for (int i = 0; i < 5; i++) {
                assert_true(xs[i] == fx_offered[i]);
                double want = m == 0 ? (double)fx_ttft_ms[i][p]
                            : m == 1 ? (double)fx_tpot_ms[i][p]
                                     : (double)fx_e2e_ms[i][p] / 1000.0;
                if (ys[i] != want)
                    fail_msg("%s step %d: %.17g, want %.17g", key, i, ys[i], want);
            }
        }
    }
}

static void test_slo_line_and_markers(void **state)
{
    const char *doc = *state;
    double cx[8], cy[8];
    /* TTFT: the SLO line at 500 ms runs through step 3's p99 (500 ms). */
    const char *hl = keyed(doc, "chart-ttft", "<line class=\"hline\"", "slo");
    assert_non_null(hl);
    assert_true(svgtest_num(hl, "data-y") == 500);
    points(doc, "chart-ttft", "<circle class=\"pt\"", "ttft_p99", "cx", "cy", cx, cy, 8);
    ASSERT_NEAR(svgtest_num(hl, "y1"), cy[2], 1e-9);
    /* The knee at 20 and the capacity at 15, where those steps' points are. */
    const char *knee = keyed(doc, "chart-ttft", "<line class=\"vline\"", "knee");
    const char *cap = keyed(doc, "chart-ttft", "<line class=\"vline\"", "capacity");
    assert_non_null(knee);
    assert_non_null(cap);
    assert_true(svgtest_num(knee, "data-x") == 20);
    assert_true(svgtest_num(cap, "data-x") == 15);
    ASSERT_NEAR(svgtest_num(knee, "x1"), cx[3], 1e-9);
    ASSERT_NEAR(svgtest_num(cap, "x1"), cx[2], 1e-9);
    /* Every chart against offered load has both markers. */
    static const char *const ids[] = {"chart-tpot", "chart-e2e", "chart-attainment",
                                      "chart-throughput", "chart-tokens"};
    for (size_t i = 0; i < LL_ARRAY_LEN(ids); i++) {
        assert_non_null(keyed(doc, ids[i], "<line class=\"vline\"", "knee"));
        assert_non_null(keyed(doc, ids[i], "<line class=\"vline\"", "capacity"));
    }
    /* TPOT has its SLO line at 50; E2E has no SLO so no line. */
    hl = keyed(doc, "chart-tpot", "<line class=\"hline\"", "slo");
    assert_non_null(hl);
    assert_true(svgtest_num(hl, "data-y") == 50);
    assert_null(keyed(doc, "chart-e2e", "<line class=\"hline\"", "slo"));
    /* Attainment in %, the target line at 99. */
    double xs[8], ys[8];
    assert_int_equal(pts(doc, "chart-attainment", "attainment", xs, ys, 8), 5);
    for (int i = 0; i < 5; i++)
        assert_true(ys[i] == fx_attain[i] * 100.0);
    hl = keyed(doc, "chart-attainment", "<line class=\"hline\"", "target");
    assert_true(svgtest_num(hl, "data-y") == 99);
    /* The findings in large type. */
    assert_non_null(strstr(doc, "<div class=\"v\">15<span class=\"u\">req/s</span>"));
    assert_non_null(strstr(doc, "<div class=\"v\">20<span class=\"u\">req/s</span>"));
    assert_non_null(strstr(doc, "capacity is 75% of it"));
}

static void test_throughput_points(void **state)
{
    const char *doc = *state;
    double xs[8], ys[8];
    struct { const char *key; const double *want; } s[] = {
        {"achieved", fx_achieved}, {"completed", fx_completed}, {"goodput", fx_goodput},
    };
    for (size_t k = 0; k < LL_ARRAY_LEN(s); k++) {
        assert_int_equal(pts(doc, "chart-throughput", s[k].key, xs, ys, 8), 5);
        for (int i = 0; i < 5; i++) {
            assert_true(xs[i] == fx_offered[i]);
            assert_true(ys[i] == s[k].want[i]);
        }
    }
    /* The y = x line from 0 to the highest offered load. */
    assert_int_equal(pts(doc, "chart-throughput", "ideal", xs, ys, 8), 2);
    assert_true(xs[0] == 0 && ys[0] == 0 && xs[1] == 25 && ys[1] == 25);
    assert_int_equal(pts(doc, "chart-tokens", "output_tps", xs, ys, 8), 5);
    for (int i = 0; i < 5; i++)
        assert_true(ys[i] == fx_out_tps[i]);
}

static void test_errors_by_kind(void **state)
{
    const char *doc = *state;
    double ys[8], y0[8];
    assert_int_equal(points(doc, "chart-errors", "<rect class=\"bar\"", "http_429",
                            "data-y", "data-y0", ys, y0, 8), 2);
    assert_true(ys[0] == 3 && ys[1] == 12 && y0[0] == 0 && y0[1] == 0);
    assert_int_equal(points(doc, "chart-errors", "<rect class=\"bar\"",
                            "timeout_first_token", "data-y", "data-y0", ys, y0, 8), 2);
    assert_true(ys[0] == 1 && ys[1] == 4 && y0[0] == 3 && y0[1] == 12);
    /* Only the kinds that occurred, and ok never. */
    assert_int_equal(points(doc, "chart-errors", "<rect class=\"bar\"", "ok", "data-y",
                            "data-y0", ys, y0, 8), 0);
    assert_null(strstr(doc, "data-series=\"http_5xx\""));
    assert_non_null(strstr(doc, "data-series=\"http_429\" data-x=\"20\""));
    /* Under the chart, per kind: its total, the step it first came in, and
     * the first message of that kind any step kept (escaped). */
    assert_non_null(strstr(doc,
                           "<tr><td class=\"l\">http_429</td><td>15</td><td>3</td>"
                           "<td class=\"l\">HTTP 429: &lt;queue full&gt; &amp; retry</td></tr>"));
    assert_non_null(strstr(doc, "<tr><td class=\"l\">timeout_first_token</td><td>5</td><td>3</td>"
                                "<td class=\"l\">(no message)</td></tr>"));
    assert_null(strstr(doc, "<tr><td class=\"l\">ok</td>"));
}

/* The client's own cancellations are not the server's errors: the chart
 * stacks the other kinds alone, and a line under it counts them. With 30%
 * of 10 and 25 req/s cancelled on purpose, the chart drew a `cancelled`
 * bar of 180 and 450 under the 429s, as tall as an outage. */
static void test_errors_leave_out_cancelled(void **state)
{
    struct fixture f;
    fixture_make(&f);
    f.steps[1].by_kind[REC_CANCELLED] = 180;
    f.steps[4].by_kind[REC_CANCELLED] = 450;
    f.steps[4].by_kind[REC_CLIENT_DROPPED] = 2;
    char *doc = render(&f.r);
    assert_well_formed(doc);
    double ys[8], y0[8];
    assert_int_equal(points(doc, "chart-errors", "<rect class=\"bar\"", "cancelled", "data-y",
                            "data-y0", ys, y0, 8),
                     0);
    assert_null(strstr(doc, ">cancelled</text>")); /* nor in the legend */
    /* The 429s still stand on the ground, the timeouts on them, and the
     * client's cap's drops (the system's overload) on top: 12 + 4 + 2. */
    assert_int_equal(points(doc, "chart-errors", "<rect class=\"bar\"", "http_429", "data-y",
                            "data-y0", ys, y0, 8),
                     2);
    assert_true(ys[1] == 12 && y0[1] == 0);
    assert_int_equal(points(doc, "chart-errors", "<rect class=\"bar\"", "client_dropped", "data-y",
                            "data-y0", ys, y0, 8),
                     1);
    assert_true(ys[0] == 2 && y0[0] == 16);
    /* The bars' totals: 4 at 20 req/s, 18 at 25, none at 10. */
    double tx[8], ty[8];
    assert_int_equal(
        points(doc, "chart-errors", "<text class=\"total\"", NULL, "x", "y", tx, ty, 8), 2);
    size_t len;
    const char *chart = svgtest_chart_find(doc, "chart-errors", &len);
    assert_non_null(chart);
    const char *total = strstr(chart, "<text class=\"total\"");
    assert_non_null(strstr(total, ">4</text>"));
    assert_true(strstr(total, ">4</text>") < strstr(total, "</g>"));
    total = strstr(total + 1, "<text class=\"total\"");
    assert_true(strstr(total, ">18</text>") < strstr(total, "</g>"));
    /* Under the chart, in its figure; scheduled: 60 s of 5, 10, 15, 20
     * and 25 req/s, 4500. */
    const char *note = strstr(doc, "<p class=\"note\" id=\"errors-cancelled\">");
    assert_true(note > chart + len && note < strstr(chart, "</figure>"));
    assert_non_null(strstr(doc, "<p class=\"note\" id=\"errors-cancelled\">The client "
                                "cancelled 630 of the 4500 requests scheduled (in 2 of the 5 "
                                "steps): the workload's own cancellations (its cancel, "
                                "--cancel-fraction), not the server's errors, so not "
                                "drawn.</p>"));
    free(doc);

    /* Cancellations alone: no error in any step, and the line says why
     * the chart is empty. */
    for (int i = 0; i < 5; i++)
        for (int k = 0; k < REC_KIND_COUNT; k++)
            if (k != REC_OK && k != REC_CANCELLED)
                f.steps[i].by_kind[k] = 0;
    doc = render(&f.r);
    assert_int_equal(points(doc, "chart-errors", "<rect class=\"bar\"", "cancelled", "data-y",
                            "data-y0", ys, y0, 8),
                     0);
    chart = svgtest_chart_find(doc, "chart-errors", &len);
    assert_non_null(chart);
    const char *none = strstr(chart, ">no errors in any step</text>");
    assert_true(none != NULL && none < chart + len);
    assert_non_null(strstr(doc, "id=\"errors-cancelled\">The client cancelled 630 of the 4500"));
    free(doc);

    /* None cancelled: no line. */
    fixture_page_lacks((const char *const[]){"errors-cancelled", NULL});
}

/* A sweep stopped by a signal cancels what its last step still had in
 * flight when --grace ran out: the requests the server had not answered,
 * most of them the backlog of a step past what it serves (a sim serving
 * about 7 a second offered 20 for 3 s, Ctrl-C at 5.5 s: 28 of 49
 * cancelled, every one "cancelled: run stopped (grace expired)"). The
 * line said "the workload's own cancellations (its cancel,
 * --cancel-fraction) or a stopped run's" of a workload that cancels
 * nothing; the step's interrupted flag says which, so the line does. */
static void test_errors_cancelled_by_stop(void **state)
{
    (void)state;
    struct fixture f;
    fixture_make(&f);
    f.steps[4].interrupted = 1;
    f.steps[4].by_kind[REC_CANCELLED] = 28;
    char *doc = render(&f.r);
    assert_well_formed(doc);
    assert_non_null(strstr(doc, "<p class=\"note\" id=\"errors-cancelled\">The client "
                                "cancelled 28 of the 4500 requests scheduled (in 1 of the 5 "
                                "steps), all in the step a stop signal cut short (no verdict): "
                                "still unanswered when --grace ran out, or the workload's own "
                                "cancellations; not errors the server returned, so not "
                                "drawn.</p>"));
    free(doc);
    /* With the workload's own in another step: the line counts each. */
    f.steps[1].by_kind[REC_CANCELLED] = 180;
    doc = render(&f.r);
    assert_non_null(strstr(doc, "id=\"errors-cancelled\">The client cancelled 208 of the 4500 "
                                "requests scheduled (in 2 of the 5 steps): 28 in the step a stop "
                                "signal cut short (no verdict), still unanswered when --grace ran "
                                "out or the workload's own; the other 180 the workload's own "
                                "cancellations (its cancel, --cancel-fraction). Not errors the "
                                "server returned, so not drawn.</p>"));
    free(doc);
}

static void test_inflight_and_table(void **state)
{
    const char *doc = *state;
    double xs[32], ys[32];
    assert_int_equal(pts(doc, "chart-inflight", "inflight", xs, ys, 32), 20);
    for (int i = 0; i < 5; i++)
        for (int j = 0; j < 4; j++) {
            assert_true(xs[i * 4 + j] == 70.0 * i + 20.0 * j);
            assert_true(ys[i * 4 + j] == fx_offered[i] * 2 + j);
        }
    /* One step boundary per step, at its start. */
    size_t len;
    const char *c = svgtest_chart_find(doc, "chart-inflight", &len);
    size_t nb = 0;
    for (const char *p = strstr(c, "data-key=\"step\""); p && p < c + len;
         p = strstr(p + 1, "data-key=\"step\""))
        nb++;
    assert_int_equal(nb, 5);
    /* No server scrapes: no server charts. */
    assert_null(strstr(doc, "id=\"chart-server-queue\""));
    /* The table: one row per step, the beyond-capacity ones marked. */
    const char *t = strstr(doc, "<table id=\"steps\"");
    assert_non_null(t);
    t = strstr(t, "<tbody>");
    assert_non_null(t);
    size_t rows = 0, over = 0;
    for (const char *p = strstr(t, "<tr"); p && p < strstr(t, "</tbody>");
         p = strstr(p + 1, "<tr")) {
        rows++;
        if (strncmp(p, "<tr class=\"over\"", 16) == 0)
            over++;
    }
    assert_int_equal(rows, 5);
    assert_int_equal(over, 2);
    /* Step 4's TTFT p99 (1500 ms) is over the SLO: flagged. */
    assert_non_null(strstr(doc, "<td class=\"bad\">1500</td>"));
}

/* The server's KV chart says why it is empty: scrapes without a KV figure
 * are an engine that does not export one (TGI), no scrapes at all are "not
 * scraped". */
static void test_kv_not_exported(void **state)
{
    struct fixture f;
    fixture_make(&f);
    struct report_server_sample sv[3];
    for (int i = 0; i < 3; i++)
        sv[i] = (struct report_server_sample){
            .t_s = 10.0 * i, .waiting = i, .running = 2, .kv_usage = NAN};
    f.r.server = sv;
    f.r.n_server = 3;
    char *doc = render(&f.r);
    assert_well_formed(doc);
    size_t len;
    const char *c = svgtest_chart_find(doc, "chart-server-kv", &len);
    assert_non_null(c);
    const char *note = strstr(c, "not exported by this engine");
    assert_true(note != NULL && note < c + len);
    /* The queue chart has its points. */
    double xs[8], ys[8];
    assert_int_equal(pts(doc, "chart-server-queue", "server_waiting", xs, ys, 8), 3);
    free(doc);

    /* One scrape with a KV figure: drawn, no note. */
    sv[1].kv_usage = 0.5;
    doc = render(&f.r);
    c = svgtest_chart_find(doc, "chart-server-kv", &len);
    note = strstr(c, "not exported by this engine");
    assert_true(note == NULL || note > c + len);
    assert_int_equal(pts(doc, "chart-server-kv", "server_kv_usage", xs, ys, 8), 1);
    free(doc);
}

/* Through --prometheus with two replicas the queue chart has a line per
 * replica (server_waiting_<name>) with exactly its own values, a replica
 * missing from a scrape leaving a gap; one replica draws none (it is the
 * aggregate), and the KV chart never has them. */
static void test_server_replica_lines(void **state)
{
    struct fixture f;
    fixture_make(&f);
    struct report_server_sample sv[3];
    for (int i = 0; i < 3; i++) {
        sv[i] = (struct report_server_sample){
            .t_s = 10.0 * i, .waiting = 5.0 * i, .running = 2, .kv_usage = 0.5};
        for (int k = 0; k < REPORT_MAX_REPLICAS; k++)
            sv[i].replica_waiting[k] = NAN;
        sv[i].replica_waiting[0] = 5.0 * i;
        sv[i].replica_waiting[1] = i == 1 ? NAN : 0;
    }
    static const char *const names[] = {"127.0.0.1:8001", "127.0.0.1:8002"};
    f.r.server = sv;
    f.r.n_server = 3;
    f.r.replicas = names;
    f.r.n_replicas = 1;
    char *doc = render(&f.r);
    assert_null(strstr(doc, "server_waiting_127"));
    free(doc);

    f.r.n_replicas = 2;
    doc = render(&f.r);
    assert_well_formed(doc);
    double xs[8], ys[8];
    assert_int_equal(pts(doc, "chart-server-queue", "server_waiting_127.0.0.1:8001", xs, ys, 8), 3);
    for (int i = 0; i < 3; i++)
        assert_true(xs[i] == 10.0 * i && ys[i] == 5.0 * i);
    assert_int_equal(pts(doc, "chart-server-queue", "server_waiting_127.0.0.1:8002", xs, ys, 8), 2);
    assert_true(xs[0] == 0 && xs[1] == 20 && ys[0] == 0 && ys[1] == 0);
    size_t len;
    const char *kv = svgtest_chart_find(doc, "chart-server-kv", &len);
    const char *in_kv = strstr(kv, "server_waiting_127");
    assert_true(in_kv == NULL || in_kv > kv + len);
    free(doc);
}

/* GPU telemetry over time: a power line and a utilisation line per
 * source, each with exactly its own samples, named by its source when
 * there are several; no charts without samples, and no utilisation chart
 * when no source exports one; past 8 sources the legend counts the rest. */
static void test_gpu_charts(void **state)
{
    static const char *const no_gpu[] = {"id=\"chart-gpu-power\"", "id=\"chart-gpu-util\"", NULL};
    fixture_page_lacks(no_gpu);
    struct fixture f;
    fixture_make(&f);

    const char *src[10] = {"http://a:9400/metrics", "http://b:9400/metrics"};
    struct report_gpu_sample g[5] = {
        {.t_s = 0, .power_w = 140, .util_pct = NAN, .source = 0},
        {.t_s = 1, .power_w = 700, .util_pct = NAN, .source = 1},
        {.t_s = 2, .power_w = 410, .util_pct = NAN, .source = 0},
        {.t_s = 3, .power_w = 690, .util_pct = NAN, .source = 1},
        {.t_s = 4, .power_w = NAN, .util_pct = NAN, .source = 0},
    };
    f.r.gpu = g;
    f.r.n_gpu = 5;
    f.r.gpu_sources = src;
    f.r.n_gpu_sources = 2;
    char *doc = render(&f.r);
    assert_well_formed(doc);
    double xs[8], ys[8];
    assert_int_equal(pts(doc, "chart-gpu-power", "gpu_power0", xs, ys, 8), 2);
    assert_true(xs[0] == 0 && ys[0] == 140 && xs[1] == 2 && ys[1] == 410);
    assert_int_equal(pts(doc, "chart-gpu-power", "gpu_power1", xs, ys, 8), 2);
    assert_true(xs[0] == 1 && ys[0] == 700 && xs[1] == 3 && ys[1] == 690);
    assert_non_null(strstr(doc, "GPU power (http://b:9400/metrics)"));
    assert_null(strstr(doc, "id=\"chart-gpu-util\""));
    free(doc);

    /* One source: no name in the legend; utilisation drawn. */
    g[1].source = g[3].source = 0;
    g[2].util_pct = 100;
    g[3].util_pct = 0;
    f.r.n_gpu_sources = 1;
    doc = render(&f.r);
    assert_int_equal(pts(doc, "chart-gpu-power", "gpu_power0", xs, ys, 8), 4);
    assert_null(strstr(doc, "GPU power (http"));
    assert_int_equal(pts(doc, "chart-gpu-util", "gpu_util0", xs, ys, 8), 2);
    assert_true(xs[0] == 2 && ys[0] == 100 && xs[1] == 3 && ys[1] == 0);
    free(doc);

    /* Ten sources: eight lines, and the legend counts the two left out. */
    for (size_t i = 2; i < 10; i++)
        src[i] = "http://more:9400/metrics";
    f.r.n_gpu_sources = 10;
    g[4] = (struct report_gpu_sample){.t_s = 4, .power_w = 90, .util_pct = NAN, .source = 9};
    doc = render(&f.r);
    assert_non_null(strstr(doc, "2 more sources not drawn"));
    assert_int_equal(pts(doc, "chart-gpu-power", "gpu_power9", xs, ys, 8), 0);
    free(doc);
}

/* The capacity probe of --rates auto on the charts over time: a band over
 * its interval on the in-flight and server charts, with a legend entry, and
 * its clients' in-flight samples as their own line. None without a probe. */
static void test_probe_band(void **state)
{
    struct fixture f;
    fixture_make(&f);
    /* Shift the steps after a 0..6 s probe. */
    for (int i = 0; i < 5; i++) {
        f.steps[i].t_start_s += 10;
        f.steps[i].t_end_s += 10;
        for (int j = 0; j < 4; j++)
            f.inflight[i][j].t_s += 10;
    }
    struct report_inflight_sample probe[3] = {{0.5, 16}, {3, 32}, {5.5, 64}};
    struct report_server_sample sv[3] = {{.t_s = 1, .waiting = 12, .running = 4, .kv_usage = 0.5},
                                         {.t_s = 4, .waiting = 28, .running = 4, .kv_usage = 0.9},
                                         {.t_s = 20, .waiting = 0, .running = 2, .kv_usage = 0.2}};
    f.r.server = sv;
    f.r.n_server = 3;
    char *doc = render(&f.r);
    assert_null(strstr(doc, "data-key=\"probe\""));
    assert_null(strstr(doc, "capacity probe"));
    free(doc);

    f.r.probe_t0_s = 0.2;
    f.r.probe_t1_s = 6;
    f.r.probe_inflight = probe;
    f.r.n_probe_inflight = 3;
    doc = render(&f.r);
    assert_well_formed(doc);
    static const char *const charts[] = {"chart-inflight", "chart-server-queue", "chart-server-kv"};
    for (size_t c = 0; c < LL_ARRAY_LEN(charts); c++) {
        const char *band = keyed(doc, charts[c], "<rect class=\"band\"", "probe");
        if (band == NULL)
            fail_msg("%s: no probe band", charts[c]);
        assert_true(svgtest_num(band, "data-x0") == 0.2);
        assert_true(svgtest_num(band, "data-x1") == 6);
        size_t len;
        const char *ch = svgtest_chart_find(doc, charts[c], &len);
        const char *note = strstr(ch, "capacity probe");
        assert_true(note != NULL && note < ch + len);
    }
    double xs[8], ys[8];
    assert_int_equal(pts(doc, "chart-inflight", "probe_inflight", xs, ys, 8), 3);
    for (int i = 0; i < 3; i++)
        assert_true(xs[i] == probe[i].t_s && ys[i] == probe[i].inflight);
    double bx[32], by[32];
    assert_int_equal(pts(doc, "chart-inflight", "inflight", bx, by, 32), 20);
    free(doc);
}

static void test_thinning_keeps_peaks(void **state)
{
    struct fixture f;
    fixture_make(&f);
    static struct report_inflight_sample many[5000];
    for (int i = 0; i < 5000; i++) {
        many[i].t_s = i * 0.01;
        many[i].inflight = (double)(i % 97);
    }
    many[4321].inflight = 1000;     /* one spike */
    f.steps[0].inflight = many;
    f.steps[0].n_inflight = 5000;
    f.r.n_steps = 1;
    char *doc = render(&f.r);
    double xs[1000], ys[1000];
    size_t n = pts(doc, "chart-inflight", "inflight", xs, ys, 1000);
    assert_in_range(n, REPORT_MAX_TS_POINTS / 2, REPORT_MAX_TS_POINTS);
    int spike = 0;
    for (size_t i = 0; i < n; i++) {
        if (ys[i] == 1000 && xs[i] == many[4321].t_s)
            spike = 1;
        if (i > 0)
            assert_true(xs[i] > xs[i - 1]);
    }
    assert_true(spike);
    free(doc);
}

static void test_ttft_cdf(void **state)
{
    struct fixture f;
    fixture_make(&f);
    /* Step 0 with a histogram of 1..200 ms; the others fall back to their
     * six percentiles. */
    struct hist *h = hist_new();
    for (uint64_t v = 1; v <= 200; v++)
        hist_record(h, v * MS);
    f.steps[0].ttft_hist = h;
    char *doc = render(&f.r);
    double xs[64], ys[64];
    size_t n = pts(doc, "chart-ttft-cdf", "ttft_cdf_0", xs, ys, 64);
    assert_in_range(n, 20, 64);
    int saw50 = 0;
    for (size_t i = 0; i < n; i++) {
        ASSERT_NEAR(xs[i], (double)hist_percentile(h, ys[i]) / 1e6, 1e-9);
        if (ys[i] == 50) {
            ASSERT_REL(xs[i], 100, 1.0 / 256);  /* the 100th of 200 values */
            saw50 = 1;
        }
        if (i > 0)
            assert_true(ys[i] > ys[i - 1] && xs[i] >= xs[i - 1]);
    }
    assert_true(saw50);
    assert_true(ys[n - 1] == 100 && xs[n - 1] == 200);
    n = pts(doc, "chart-ttft-cdf", "ttft_cdf_4", xs, ys, 64);
    assert_int_equal(n, 6);
    assert_true(ys[0] == 50 && xs[0] == 2000);
    assert_true(ys[3] == 99 && xs[3] == 9000);
    assert_true(ys[5] == 100 && xs[5] == 27000);
    const char *slo = keyed(doc, "chart-ttft-cdf", "<line class=\"vline\"", "slo");
    assert_non_null(slo);
    assert_true(svgtest_num(slo, "data-x") == 500);
    free(doc);
    hist_free(h);
}

static void test_recovery_step(void **state)
{
    struct fixture f;
    fixture_make(&f);
    f.steps[5] = f.steps[0];
    f.steps[5].recovery = 1;
    f.steps[5].offered_rps = 5;
    f.steps[5].ttft_ns[REPORT_P99] = 333 * MS;
    f.r.n_steps = 6;
    char *doc = render(&f.r);
    double xs[8], ys[8];
    /* The curves keep their five points; the recovery step is a ring. */
    assert_int_equal(pts(doc, "chart-ttft", "ttft_p99", xs, ys, 8), 5);
    assert_int_equal(pts(doc, "chart-ttft", "ttft_p99_recovery", xs, ys, 8), 1);
    assert_true(xs[0] == 5 && ys[0] == 333);
    /* Without a name from the sweep, a step is its position from 0. */
    static const char *const positions[] = {"<td>5 rec</td>", "<td>0</td>", NULL};
    assert_page(doc, positions, NULL);
    free(doc);
    /* With one, the table says the name the terminal and steps.csv use. */
    snprintf(f.steps[5].id, sizeof f.steps[5].id, "7 rec");
    snprintf(f.steps[2].id, sizeof f.steps[2].id, "2.1");
    static const char *const names[] = {"<td>7 rec</td>", "<td>2.1</td>", NULL};
    static const char *const no_position[] = {"<td>5 rec</td>", NULL};
    check_render(&f.r, names, no_position);
}

/* A step that is INVALID or not steady is a ring on every curve against
 * load, and the legend says what a ring means; a run without one has
 * neither. The fixture's steps 3 and 4 (20 and 25 req/s) are not steady. */
static void test_hollow_verdicts(void **state)
{
    struct fixture f;
    fixture_make(&f);
    f.steps[1].invalid = 1; /* 10 req/s: INVALID though steady */
    char *doc = render(&f.r);
    assert_well_formed(doc);
    static const char *const charts[][2] = {
        {"chart-ttft", "ttft_p99"},      {"chart-tpot", "tpot_p50"},
        {"chart-e2e", "e2e_p90"},        {"chart-attainment", "attainment"},
        {"chart-throughput", "goodput"}, {"chart-tokens", "output_tps"},
    };
    for (size_t c = 0; c < LL_ARRAY_LEN(charts); c++) {
        size_t len;
        const char *ch = svgtest_chart_find(doc, charts[c][0], &len);
        assert_non_null(ch);
        double xs[8], ys[8];
        assert_int_equal(pts(doc, charts[c][0], charts[c][1], xs, ys, 8), 5);
        /* Each point's circle: a ring exactly at 10, 20 and 25 req/s. */
        size_t seen = 0;
        char want_series[64];
        snprintf(want_series, sizeof want_series, "data-series=\"%s\"", charts[c][1]);
        for (const char *p = strstr(ch, "<circle class=\"pt\""); p && p < ch + len;
             p = strstr(p + 1, "<circle class=\"pt\"")) {
            if (strncmp(p + 19, want_series, strlen(want_series)) != 0)
                continue;
            double x = svgtest_num(p, "data-x");
            char v[8];
            int ring = svgtest_attr(p, "data-hollow", v, sizeof v) && strcmp(v, "1") == 0;
            if (ring != (x == 10 || x == 20 || x == 25))
                fail_msg("%s: point at %g: ring %d", charts[c][0], x, ring);
            seen++;
        }
        assert_int_equal(seen, 5);
        const char *note = strstr(ch, "ring: INVALID or not steady");
        if (note == NULL || note > ch + len)
            fail_msg("%s: no legend note for the rings", charts[c][0]);
    }
    free(doc);

    /* Every step steady and valid: no ring, no note. */
    for (int i = 0; i < 5; i++)
        f.steps[i].steady = 1;
    f.steps[1].invalid = 0;
    doc = render(&f.r);
    assert_null(strstr(doc, "data-hollow"));
    assert_null(strstr(doc, "ring: INVALID"));
    free(doc);
}

/* Two traffic classes on the five-step fixture: "short" at every step,
 * "long" at the first four only. Each class chart carries one series per
 * class with exactly its p99 points (none where the class is absent), the
 * table one row per present (step, class), and each class's capacity is
 * stated. Without classes the section is absent. */
static const uint64_t fx_cls_ttft_ms[2][5] = {{90, 100, 120, 300, 800}, {200, 260, 700, 2000, 0}};
static const uint64_t fx_cls_tpot_ms[2][5] = {{15, 16, 18, 25, 40}, {30, 32, 45, 80, 0}};

static void test_classes_section(void **state)
{
    static const char *const no_classes[] = {"By traffic class", "chart-class-ttft", NULL};
    fixture_page_lacks(no_classes);
    struct fixture f;
    fixture_make(&f);

    struct report_class_step cs[2][5];
    memset(cs, 0, sizeof(cs));
    for (int k = 0; k < 2; k++) {
        for (int i = 0; i < 5; i++) {
            if (k == 1 && i == 4)
                continue;       /* "long" has no figures at the last step */
            struct report_class_step *c = &cs[k][i];
            c->present = 1;
            c->scheduled = 100 + (uint64_t)i;
            c->ok = 90;
            c->failed = 10 + (uint64_t)i;
            c->achieved_rps = fx_offered[i] / 2;
            c->goodput_rps = fx_goodput[i] / 2;
            c->attainment = fx_attain[i];
            c->ttft_ns[REPORT_P50] = fx_cls_ttft_ms[k][i] * MS / 2;
            c->ttft_ns[REPORT_P99] = fx_cls_ttft_ms[k][i] * MS;
            c->tpot_ns[REPORT_P99] = fx_cls_tpot_ms[k][i] * MS;
            c->e2e_ns[REPORT_P99] = 4000 * MS;
            c->pass = fx_attain[i] >= 0.99;
        }
    }
    struct report_class cls[2] = {
        {.name = "short", .slo = "ttft=500ms", .own_slo = 0, .capacity_rps = 15,
         .steps = cs[0]},
        {.name = "long", .slo = "ttft=1s", .own_slo = 1, .capacity_rps = 10,
         .capacity_lower_bound = 0, .steps = cs[1]},
    };
    f.r.classes = cls;
    f.r.n_classes = 2;
    char *doc = render(&f.r);
    assert_well_formed(doc);
    assert_non_null(strstr(doc, "<h2>By traffic class</h2>"));
    double xs[8], ys[8];
    static const char *const ids[2] = {"chart-class-ttft", "chart-class-tpot"};
    for (int m = 0; m < 2; m++) {
        for (int k = 0; k < 2; k++) {
            size_t want_n = k == 0 ? 5 : 4;
            assert_int_equal(pts(doc, ids[m], cls[k].name, xs, ys, 8), want_n);
            for (size_t i = 0; i < want_n; i++) {
                double want = m == 0 ? (double)fx_cls_ttft_ms[k][i]
                                     : (double)fx_cls_tpot_ms[k][i];
                assert_true(xs[i] == fx_offered[i]);
                if (ys[i] != want)
                    fail_msg("%s %s step %zu: %.17g, want %.17g", ids[m], cls[k].name, i,
                             ys[i], want);
            }
        }
        /* Each class's own SLO of the metric as its own line. */
        if (m == 0) {
            const char *h = keyed(doc, ids[m], "<line class=\"hline\"", "slo-short");
            assert_non_null(h);
            assert_true(svgtest_num(h, "data-y") == 500);
            h = keyed(doc, ids[m], "<line class=\"hline\"", "slo-long");
            assert_non_null(h);
            assert_true(svgtest_num(h, "data-y") == 1000);
            assert_non_null(strstr(doc, ">long SLO 1000 ms</text>"));
        } else {
            size_t len;
            const char *ch = svgtest_chart_find(doc, ids[m], &len);
            const char *h = strstr(ch, "class=\"hline\"");
            assert_true(h == NULL || h > ch + len); /* no TPOT threshold */
        }
        /* The sweep's capacity and knee are marked on the class charts too. */
        const char *v = keyed(doc, ids[m], "<line class=\"vline\"", "capacity");
        assert_non_null(v);
        assert_true(svgtest_num(v, "data-x") == 15);
    }
    /* One row per (step, class) present: 5 + 4. */
    const char *t = strstr(doc, "<table id=\"classes\">");
    assert_non_null(t);
    const char *te = strstr(t, "</table>");
    size_t rows = 0;
    for (const char *p = strstr(t, "<tr>"); p != NULL && p < te; p = strstr(p + 1, "<tr>"))
        rows++;
    assert_int_equal(rows, 1 + 9);   /* the heading row, then the body */
    assert_non_null(strstr(t, "<td class=\"l\">long</td><td>103</td><td>90</td>"
                              "<td class=\"bad\">13</td>"));
    assert_non_null(strstr(doc, "<b>short</b> (ttft=500ms, the sweep's): SLO capacity "
                                "15 req/s</li>"));
    assert_non_null(strstr(doc, "<b>long</b> (ttft=1s, its own): SLO capacity 10 req/s"));
    /* The header's SLO says a class's own one counts. */
    assert_non_null(strstr(doc,
                           "<dt>SLO</dt><dd>TTFT \xE2\x89\xA4 500 ms, TPOT \xE2\x89\xA4 50 ms; "
                           "a class with its own SLO is judged by that</dd>"));
    free(doc);
    /* Only the classes' own SLOs: the header says so, not "none". */
    f.r.slo_ttft_ms = f.r.slo_tpot_ms = 0;
    doc = render(&f.r);
    assert_non_null(strstr(doc, "<dt>SLO</dt><dd>each class's own (By traffic class)</dd>"));
    free(doc);
    /* A step that sent long no request: its row says so, not "ok" (its
     * pass flag is only "nothing failed"). */
    cs[1][0] = (struct report_class_step){.present = 1, .pass = 1};
    doc = render(&f.r);
    const char *row = strstr(doc, "<td class=\"l\">long</td><td>0</td>");
    assert_non_null(row);
    const char *end = strstr(row, "</tr>");
    assert_non_null(end);
    const char *v = strstr(row, ">no request</td>");
    assert_true(v != NULL && v < end);
    free(doc);
    /* A class no step sent has no capacity, and did not fail to reach one. */
    cls[1].capacity_rps = 0;
    cls[1].not_judged = "no judged step had a request of it";
    doc = render(&f.r);
    assert_non_null(strstr(doc, "<b>long</b> (ttft=1s, its own): SLO capacity not found (no "
                                "judged step had a request of it)</li>"));
    free(doc);
}

/* How many times needle stands in [from, to). */
static size_t count_in(const char *from, const char *to, const char *needle)
{
    size_t n = 0;
    for (const char *p = strstr(from, needle); p != NULL && p < to; p = strstr(p + 1, needle))
        n++;
    return n;
}

/* Every body row of table#id has as many cells as its heading has
 * columns (report_tables.c writes a table's headings and its cells in two
 * places, and a column must not drift from its heading). */
static void assert_rows_match_heading(const char *doc, const char *id)
{
    char open[64];
    snprintf(open, sizeof open, "<table id=\"%s\">", id);
    const char *t = strstr(doc, open);
    if (t == NULL)
        fail_msg("the page has no %s", open);
    const char *body = strstr(t, "<tbody>"), *end = strstr(t, "</table>");
    assert_true(body != NULL && end != NULL && body < end);
    size_t heads = count_in(t, body, "</th>"), rows = 0;
    for (const char *r = strstr(body, "<tr"); r != NULL && r < end; r = strstr(r + 1, "<tr")) {
        size_t cells = count_in(r, strstr(r, "</tr>"), "</td>");
        if (cells != heads)
            fail_msg("table#%s row %zu: %zu cells under %zu headings", id, rows, cells, heads);
        rows++;
    }
    assert_true(rows > 0);
}

/* The four tables (steps, cold starts, classes, endpoints), each row
 * under its heading, cell for column. */
static void test_tables_match_headings(void **state)
{
    struct fixture f;
    fixture_make(&f);
    f.steps[1].cold_n = f.steps[1].cold_scheduled = 2;
    f.steps[1].cold_ok = 1;
    struct report_class_step cs[5] = {{0}};
    struct report_endpoint_step es[2][5] = {{{0}}};
    for (int i = 0; i < 5; i++) {
        cs[i] = (struct report_class_step){.present = 1, .scheduled = 10, .ok = 9, .failed = 1};
        for (int k = 0; k < 2; k++)
            es[k][i] = (struct report_endpoint_step){.requests = 5, .ok = 4, .errors = 1};
    }
    struct report_class cls = {.name = "short", .steps = cs};
    struct report_endpoint eps[2] = {{.url = "http://a/v1", .steps = es[0]},
                                     {.url = "http://b/v1", .steps = es[1]}};
    f.r.classes = &cls;
    f.r.n_classes = 1;
    f.r.endpoints = eps;
    f.r.n_endpoints = 2;
    char *doc = render(&f.r);
    static const char *const ids[] = {"steps", "cold", "classes", "endpoints"};
    for (size_t i = 0; i < LL_ARRAY_LEN(ids); i++)
        assert_rows_match_heading(doc, ids[i]);
    free(doc);
}

static void test_escaping(void **state)
{
    struct fixture f;
    fixture_make(&f);
    f.r.title = "<script>alert(\"t\")</script> & 'co'";
    f.r.model = "m\"><img src=x onerror=alert(1)>";
    f.r.target = "http://h/?a=1&b=<2>";
    f.r.findings_text = "</div><script>x()</script>";
    f.steps[1].verdict = "<b>bad</b>";
    f.r.invalid = 1;
    f.r.invalid_reason = "lateness p99 > 10ms & <rising>";
    static const char *const has[] = {
        "<title>&lt;script&gt;alert(&quot;t&quot;)&lt;/script&gt; &amp; &#39;co&#39;</title>",
        "http://h/?a=1&amp;b=&lt;2&gt;",
        "class=\"banner invalid\"",
        "lateness p99 &gt; 10ms &amp; &lt;rising&gt;",
        NULL,
    };
    static const char *const lacks[] = {"<script", "<img", "<b>", NULL};
    check_render(&f.r, has, lacks);
}

/* One load step of five INVALID (a sweep left it out of the capacity
 * search and exits 0): the banner is about that step, and says the
 * others stand. Against llama.cpp the page said "these figures are not
 * trustworthy" over a sweep of 7 steps for 1 step one send made INVALID.
 * Only when every load step is INVALID (the recovery step is not one)
 * does it say so of the whole page. */
static void test_invalid_banner_some_steps(void **state)
{
    struct fixture f;
    fixture_make(&f);
    f.steps[1].invalid = 1;
    f.r.invalid = 1;
    f.r.invalid_reason = "1 of 5 steps (at 10 req/s) are INVALID: why";
    static const char *const some[] = {
        "<div class=\"banner invalid\">1 of 5 steps (at 10 req/s) are INVALID: why. The other "
        "steps' figures, and the findings made from them, stand.</div>",
        NULL,
    };
    static const char *const not_all[] = {"not trustworthy", NULL};
    check_render(&f.r, some, not_all);

    for (int i = 0; i < 4; i++)
        f.steps[i].invalid = 1;
    f.steps[4].recovery = 1;
    static const char *const all[] = {
        "<div class=\"banner invalid\">INVALID: the client could not keep the schedule; these "
        "figures are not trustworthy. 1 of 5",
        NULL,
    };
    check_render(&f.r, all, NULL);
    /* Whose fault, as the steps' causes say (one home for the words). */
    f.r.invalid_cause = VERDICT_LATE_ASLEEP;
    static const char *const host[] = {
        "<div class=\"banner invalid\">INVALID: the host (OS or VM) did not run the client on "
        "schedule; these figures",
        NULL,
    };
    check_render(&f.r, host, NULL);
}

/* The peak cards read the judged steps: an INVALID step's goodput (14.5
 * at 15 req/s here) carries the generator's lateness and a cut step's a
 * window a signal ended, so the peaks are 9.9 req/s at 10 and 3200
 * tokens/s at 25, and the cards say what they left out. */
static void test_peaks_judged_steps(void **state)
{
    struct fixture f;
    fixture_make(&f);
    static const char *const all[] = {"Peak goodput</div><div class=\"v\">14.5<", NULL};
    static const char *const none_left_out[] = {"left out", NULL};
    check_render(&f.r, all, none_left_out);
    f.steps[2].invalid = 1;
    f.steps[3].interrupted = 1;
    static const char *const judged[] = {
        "Peak goodput</div><div class=\"v\">9.9<",
        "Peak output</div><div class=\"v\">3200<",
        "at 10 req/s; INVALID and cut steps left out",
        "at 25 req/s; INVALID and cut steps left out",
        NULL,
    };
    check_render(&f.r, judged, NULL);
}

/* The knee card: a knee inside the fitted range is one value (20 req/s
 * here, with the capacity 75% of it); one at the top of the range
 * (knee_at_or_above, marked "knee >= 20" on the charts) reads "at or
 * above 20", as the terminal's findings do, and the capacity's share is
 * an upper bound. */
static void test_knee_card_at_or_above(void **state)
{
    struct fixture f;
    fixture_make(&f);
    static const char *const exact[] = {
        "<div class=\"k\">Knee</div><div class=\"v\">20<span class=\"u\">req/s</span></div>"
        "<div class=\"d\">where completions stop following the load; capacity is 75% of it</div>",
        NULL,
    };
    static const char *const no_lead[] = {"at or above", "cannot place it", NULL};
    check_render(&f.r, exact, no_lead);
    f.r.knee_at_or_above = 1;
    static const char *const lower_bound[] = {
        "<div class=\"k\">Knee</div><div class=\"v\"><span class=\"u\">at or above</span> "
        "20<span class=\"u\">req/s</span></div><div class=\"d\">where completions stop "
        "following the load; the steps cannot place it higher; capacity is at most 75% of it"
        "</div>",
        NULL,
    };
    static const char *const no_exact[] = {"<div class=\"v\">20<", "capacity is 75%", NULL};
    check_render(&f.r, lower_bound, no_exact);
}

static void test_empty_report(void **state)
{
    struct report r = {0};
    char *doc = render(&r);
    assert_well_formed(doc);
    /* A whole page, its charts saying why they are empty; no points, no
     * error samples, no NaN. */
    static const char *const has[] = {
        "<title>llmload report</title>",
        "</html>",
        "id=\"chart-ttft\"",
        ">no successful requests</text>",
        ">no errors in any step</text>",
        NULL,
    };
    static const char *const lacks[] = {"class=\"pt\"", "id=\"error-samples\"", "NaN", NULL};
    assert_page(doc, has, lacks);
    /* No external resource: the only URL is the SVG namespace name. */
    for (const char *p = strstr(doc, "http://"); p != NULL; p = strstr(p + 1, "http://"))
        assert_int_equal(strncmp(p, "http://www.w3.org/2000/svg\"", 27), 0);
    free(doc);
}

static void test_deterministic(void **state)
{
    struct fixture f;
    fixture_make(&f);
    char *a = render(&f.r);
    char *b = render(&f.r);
    assert_string_equal(a, b);
    /* Nothing external: no URL but the target's, no script. */
    const char *p = a;
    size_t urls = 0;
    while ((p = strstr(p, "http://")) != NULL) {
        if (strncmp(p, "http://www.w3.org/2000/svg", 26) != 0 &&
            strncmp(p, "http://127.0.0.1:8000/v1", 24) != 0)
            fail_msg("unexpected URL: %.40s", p);
        urls++;
        p++;
    }
    assert_true(urls > 0);
    assert_null(strstr(a, "<script"));
    assert_null(strstr(a, "<link"));
    free(a);
    free(b);
}

static void test_write_atomic(void **state)
{
    char dir[] = "/tmp/test_report_html.XXXXXX";
    assert_non_null(mkdtemp(dir));
    char path[256], tmp[300];
    snprintf(path, sizeof(path), "%s/report.html", dir);
    snprintf(tmp, sizeof(tmp), "%s.tmp", path);
    struct fixture f;
    fixture_make(&f);
    char err[256] = "";
    assert_int_equal(report_html_write(&f.r, path, err, sizeof(err)), 0);
    struct stat st;
    assert_int_equal(stat(path, &st), 0);
    assert_int_not_equal(stat(tmp, &st), 0);        /* no .tmp left */
    char *want = render(&f.r);
    FILE *fp = fopen(path, "r");
    assert_non_null(fp);
    char *got = calloc(1, strlen(want) + 2);
    assert_int_equal(fread(got, 1, strlen(want) + 1, fp), strlen(want));
    fclose(fp);
    assert_string_equal(got, want);
    free(got);
    free(want);
    unlink(path);

    /* A directory that does not exist: LL_E_IO naming the file. */
    char bad[300];
    snprintf(bad, sizeof(bad), "%s/missing/report.html", dir);
    assert_int_equal(report_html_write(&f.r, bad, err, sizeof(err)), LL_E_IO);
    assert_non_null(strstr(err, "missing/report.html.tmp"));
    assert_int_equal(report_html_write(&f.r, "", err, sizeof(err)), LL_E_RANGE);
    assert_int_equal(rmdir(dir), 0);
}

/* ---- a realistic synthetic sweep (the screenshot's input) ---- */

struct sample_rng {
    uint64_t s;
};

static double sample_uniform(struct sample_rng *g)
{
    uint64_t z = test_splitmix64(&g->s);
    return ((double)(z >> 11) + 0.5) / 9007199254740992.0;
}

static double sample_normal(struct sample_rng *g)
{
    double u = sample_uniform(g), v = sample_uniform(g);
    return sqrt(-2 * log(u)) * cos(6.283185307179586 * v);
}

static double sample_exp(struct sample_rng *g, double mean)
{
    return -mean * log(sample_uniform(g));
}

#define SAMPLE_STEPS 13
#define SAMPLE_STEP_S 30.0
#define SAMPLE_GAP_S 3.0
#define SAMPLE_MU 18.0              /* the server's capacity, req/s */

struct sample {
    struct report r;
    struct report_step steps[SAMPLE_STEPS];
    struct hist *hists[SAMPLE_STEPS][4];
    struct report_inflight_sample *inflight[SAMPLE_STEPS];
    struct report_server_sample *server;
    char findings[600];
};

/* One step of a simulated continuous-batching server at offered rate lam:
 * below capacity a queueing wait that grows like rho^4 / (1 - rho); above
 * it a backlog growing through the step. */
static void sample_step(struct sample *S, int i, double lam, int recovery,
                        struct sample_rng *g)
{
    struct report_step *s = &S->steps[i];
    struct hist *ttft = hist_new(), *tpot = hist_new(), *itl = hist_new(),
                *e2e = hist_new();
    S->hists[i][0] = ttft;
    S->hists[i][1] = tpot;
    S->hists[i][2] = itl;
    S->hists[i][3] = e2e;
    double t0 = i * (SAMPLE_STEP_S + SAMPLE_GAP_S);
    double rho = lam / SAMPLE_MU;
    size_t cap = (size_t)(lam * SAMPLE_STEP_S * 2 + 64);
    double *arr = calloc(cap, sizeof(double)), *fin = calloc(cap, sizeof(double));
    size_t n = 0;
    uint64_t ok = 0, good = 0, sent = 0, in_tok = 0, out_tok = 0;
    for (double a = t0 + sample_exp(g, 1 / lam); a < t0 + SAMPLE_STEP_S && n < cap;
         a += sample_exp(g, 1 / lam)) {
        double wait = rho < 1 ? sample_exp(g, 0.05 * pow(rho, 4) / (1 - rho))
                              : (lam - SAMPLE_MU) / lam * (a - t0) +
                                    sample_exp(g, 0.4);
        if (recovery)
            wait += 1.5 * exp(-(a - t0) / 3);   /* draining the backlog */
        double prefill = 0.06 * (1 + 0.5 * LL_MIN(rho, 1.3)) * exp(0.35 * sample_normal(g));
        double tt = wait + prefill;
        double tp = 0.018 * (1 + 0.8 * LL_MIN(rho, 1.2)) * exp(0.12 * sample_normal(g));
        int out = 100 + (int)(sample_uniform(g) * 200);
        double e = tt + tp * (out - 1);
        enum rec_kind kind = REC_OK;
        double u = sample_uniform(g);
        if (rho > 1.15 && u < (rho - 1.15) * 0.5)
            kind = REC_HTTP_429;
        else if (tt > 6)
            kind = REC_TIMEOUT_FIRST_TOKEN;
        else if (u > 1 - 0.004 * rho * rho)
            kind = REC_STREAM_TRUNCATED;
        if (kind == REC_HTTP_429)
            e = 0.005;
        else if (kind == REC_TIMEOUT_FIRST_TOKEN)
            e = 6;
        s->by_kind[kind]++;
        sent++;
        arr[n] = a;
        fin[n] = a + e;
        n++;
        if (kind != REC_OK)
            continue;
        ok++;
        hist_record(ttft, (uint64_t)(tt * 1e9));
        hist_record(tpot, (uint64_t)(tp * 1e9));
        hist_record(itl, (uint64_t)(tp * 1e9 * exp(0.05 * sample_normal(g))));
        hist_record(e2e, (uint64_t)(e * 1e9));
        in_tok += 400 + (uint64_t)(sample_uniform(g) * 200);
        out_tok += (uint64_t)out;
        if (tt <= 0.5 && tp <= 0.05)
            good++;
    }
    static const double pct[REPORT_NPCT] = {50, 90, 95, 99, 99.9, 100};
    for (int p = 0; p < REPORT_NPCT; p++) {
        s->ttft_ns[p] = hist_percentile(ttft, pct[p]);
        s->tpot_ns[p] = hist_percentile(tpot, pct[p]);
        s->itl_ns[p] = hist_percentile(itl, pct[p]);
        s->e2e_ns[p] = hist_percentile(e2e, pct[p]);
    }
    s->offered_rps = lam;
    s->achieved_rps = (double)sent / SAMPLE_STEP_S;
    s->completed_rps = (double)ok / SAMPLE_STEP_S;
    s->goodput_rps = (double)good / SAMPLE_STEP_S;
    s->scheduled = n;
    s->ok = ok;
    s->attainment = n ? (double)good / (double)n : NAN;
    s->input_tps = (double)in_tok / SAMPLE_STEP_S;
    s->output_tps = (double)out_tok / SAMPLE_STEP_S;
    s->steady = rho < 1;
    s->recovery = recovery;
    s->verdict = rho >= 1 ? "saturated"
               : s->attainment >= 0.99 ? "meets SLO" : "misses SLO";
    s->ttft_hist = ttft;
    s->t_start_s = t0;
    s->t_end_s = t0 + SAMPLE_STEP_S;
    /* In flight every 0.25 s, through the step and its drain. */
    size_t ns = (size_t)((SAMPLE_STEP_S + SAMPLE_GAP_S) / 0.25);
    S->inflight[i] = calloc(ns, sizeof(struct report_inflight_sample));
    double sum = 0, mx = 0;
    for (size_t k = 0; k < ns; k++) {
        double t = t0 + 0.25 * (double)k;
        double c = 0;
        for (size_t j = 0; j < n; j++)
            if (arr[j] <= t && fin[j] > t)
                c++;
        S->inflight[i][k] = (struct report_inflight_sample){.t_s = t, .inflight = c};
        if (t < t0 + SAMPLE_STEP_S) {
            sum += c;
            if (c > mx)
                mx = c;
        }
    }
    s->inflight = S->inflight[i];
    s->n_inflight = ns;
    s->inflight_mean = sum / (SAMPLE_STEP_S / 0.25);
    s->inflight_max = mx;
    free(arr);
    free(fin);
}

static void sample_make(struct sample *S)
{
    memset(S, 0, sizeof(*S));
    struct sample_rng g = {.s = 42};
    for (int i = 0; i < SAMPLE_STEPS - 1; i++)
        sample_step(S, i, 2.0 * (i + 1), 0, &g);
    sample_step(S, SAMPLE_STEPS - 1, 4, 1, &g);

    /* Capacity: the highest load meeting 99% before the first miss; knee:
     * the first load whose TTFT p99 is over three times the lightest's. */
    double capacity = 0, knee = 0;
    for (int i = 0; i < SAMPLE_STEPS - 1; i++) {
        if (S->steps[i].attainment >= 0.99)
            capacity = S->steps[i].offered_rps;
        else
            break;
    }
    for (int i = 1; i < SAMPLE_STEPS - 1 && knee == 0; i++)
        if (S->steps[i].ttft_ns[REPORT_P99] > 3 * S->steps[0].ttft_ns[REPORT_P99])
            knee = S->steps[i].offered_rps;

    /* The server's view, scraped every second over the whole run. */
    size_t total_s = (size_t)(SAMPLE_STEPS * (SAMPLE_STEP_S + SAMPLE_GAP_S));
    S->server = calloc(total_s, sizeof(*S->server));
    for (size_t k = 0; k < total_s; k++) {
        double t = (double)k;
        size_t st = (size_t)(t / (SAMPLE_STEP_S + SAMPLE_GAP_S));
        const struct report_step *s = &S->steps[st];
        size_t idx = (size_t)((t - s->t_start_s) / 0.25);
        double c = idx < s->n_inflight ? s->inflight[idx].inflight : 0;
        double running = LL_MIN(c, 40.0);
        S->server[k] = (struct report_server_sample){
            .t_s = t, .waiting = c - running, .running = running,
            .kv_usage = LL_MIN(0.97, running / 44.0 + 0.01 * sample_uniform(&g))};
    }
    snprintf(S->findings, sizeof(S->findings),
             "SLO capacity is %.0f req/s: the highest offered load at which at least 99%% "
             "of requests met TTFT \xE2\x89\xA4 500 ms and TPOT \xE2\x89\xA4 50 ms.\n"
             "Latency turns up at the knee, %.0f req/s; beyond %.0f req/s the server "
             "saturates: completions flatten near %.0f req/s, the backlog grows through "
             "each step (not steady) and 429s and first-token timeouts appear.\n"
             "The recovery step at 4 req/s drained within seconds.",
             capacity, knee, SAMPLE_MU, SAMPLE_MU);
    S->r = (struct report){
        .title = "llmload sweep: sim (default profile)",
        .target = "http://127.0.0.1:8000/v1/chat/completions", .model = "sim-llama-8b",
        .version = "0.1.0", .started_at = "2025-06-01T12:00:00Z",
        .mode = "open-loop poisson, 30 s per step", .steps = S->steps,
        .n_steps = SAMPLE_STEPS, .slo_ttft_ms = 500, .slo_tpot_ms = 50,
        .attainment_target = 0.99, .capacity_rps = capacity, .knee_rps = knee,
        .findings_text = S->findings, .server = S->server, .n_server = total_s,
    };
}

static void sample_free(struct sample *S)
{
    for (int i = 0; i < SAMPLE_STEPS; i++) {
        for (int k = 0; k < 4; k++)
            hist_free(S->hists[i][k]);
        free(S->inflight[i]);
    }
    free(S->server);
}

static void test_sample_report(void **state)
{
    struct sample *S = calloc(1, sizeof(*S));
    sample_make(S);
    char *doc = render(&S->r);
    assert_well_formed(doc);
    static const char *const ids[] = {
        "chart-ttft", "chart-tpot", "chart-e2e", "chart-attainment", "chart-throughput",
        "chart-tokens", "chart-errors", "chart-inflight", "chart-server-queue",
        "chart-server-kv", "chart-ttft-cdf",
    };
    for (size_t i = 0; i < LL_ARRAY_LEN(ids); i++) {
        size_t len;
        if (svgtest_chart_find(doc, ids[i], &len) == NULL)
            fail_msg("chart %s missing", ids[i]);
    }
    /* The synthetic server has a knee and a capacity below its 18 req/s. */
    ASSERT_IN_RANGE(S->r.capacity_rps, 8, 18);
    ASSERT_IN_RANGE(S->r.knee_rps, S->r.capacity_rps, 20);
    assert_true(strlen(doc) < 600 * 1024);
    free(doc);
    sample_free(S);
    free(S);
}

int main(void)
{
    const char *out = getenv("REPORT_SAMPLE_OUT");
    if (out != NULL && out[0] != '\0') {
        struct sample *S = calloc(1, sizeof(*S));
        if (S == NULL)
            return 1;
        sample_make(S);
        char err[512];
        int rc = report_html_write(&S->r, out, err, sizeof(err));
        if (rc != 0)
            fprintf(stderr, "test_report_html: %s\n", err);
        sample_free(S);
        free(S);
        return rc == 0 ? 0 : 1;
    }
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_latency_points_exact, doc_setup, doc_teardown),
        cmocka_unit_test_setup_teardown(test_slo_line_and_markers, doc_setup, doc_teardown),
        cmocka_unit_test_setup_teardown(test_throughput_points, doc_setup, doc_teardown),
        cmocka_unit_test_setup_teardown(test_errors_by_kind, doc_setup, doc_teardown),
        cmocka_unit_test(test_errors_leave_out_cancelled),
        cmocka_unit_test(test_errors_cancelled_by_stop),
        cmocka_unit_test_setup_teardown(test_inflight_and_table, doc_setup, doc_teardown),
        cmocka_unit_test(test_kv_not_exported),
        cmocka_unit_test(test_gpu_charts),
        cmocka_unit_test(test_probe_band),
        cmocka_unit_test(test_server_replica_lines),
        cmocka_unit_test(test_thinning_keeps_peaks),
        cmocka_unit_test(test_peaks_judged_steps),
        cmocka_unit_test(test_knee_card_at_or_above),
        cmocka_unit_test(test_ttft_cdf),
        cmocka_unit_test(test_recovery_step),
        cmocka_unit_test(test_hollow_verdicts),
        cmocka_unit_test(test_classes_section),
        cmocka_unit_test(test_tables_match_headings),
        cmocka_unit_test(test_escaping),
        cmocka_unit_test(test_invalid_banner_some_steps),
        cmocka_unit_test(test_empty_report),
        cmocka_unit_test(test_deterministic),
        cmocka_unit_test(test_write_atomic),
        cmocka_unit_test(test_sample_report),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
