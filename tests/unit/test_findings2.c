/* Unit tests of the sweep's conclusions where they once said more than
 * the steps showed: the first limit of a sweep with no step judged
 * (firstlimit.c), and the report's knee marker when the knee lies at or
 * above the top of the fitted range (report_charts.c). Each test builds
 * its steps by hand: the server figures a scrape would have joined to a
 * step, the verdict fields its records would have set, the figures a
 * report step carries. */
#include "test.h"
#include "testutil.h"

#include "measure/record.h"
#include "report/report_html.h"
#include "sweep/sweep.h"
#include "util/strbuf.h"
#include "util/util.h"

/* Load step i at rate req/s, judged, with 20 requests scheduled, none ok
 * (so no latency failed), and the server's figures as a scrape of an
 * idle batch would give them when scraped. */
static void limit_step_init(struct sweep_step *s, uint32_t i, double rate, int scraped)
{
    sweep_step_init(s);
    s->f.index = i;
    s->f.offered_rps = rate;
    s->stats.scheduled = 20;
    s->steady = 1;
    if (scraped) {
        s->f.server.present = 1;
        s->f.server.running_max = 3;
        s->f.server.waiting_max = s->f.server.waiting_mean = 0;
    }
}

static void steps_free(struct sweep_step *steps, size_t n)
{
    for (size_t i = 0; i < n; i++)
        sweep_step_free(&steps[i]);
}

/* The first limit of steps[0..n) and its line into text (512 bytes). */
static void limit_of(const struct sweep_step *steps, size_t n, struct sweep_first_limit *fl,
                     char *text)
{
    struct sweep_settings set;
    sweep_settings_init(&set);
    sweep_first_limit(steps, n, &set, fl);
    sweep_first_limit_text(fl, text, 512);
}

/* Every load step INVALID, the server scraped through each: the line
 * said "unknown (no server metrics)", blaming the scrapes, because the
 * INVALID steps were left out before the metrics were looked for. No
 * step was judged, so there is no finding, and the line says that.
 * Likewise when the steps are interrupted or empty. */
static void test_first_limit_none_judged(void **state)
{
    struct sweep_step steps[3];
    struct sweep_first_limit fl;
    char text[512];
    for (int why = 0; why < 3; why++) {
        for (uint32_t i = 0; i < 3; i++) {
            limit_step_init(&steps[i], i, 2.0 * (i + 1), 1);
            if (why == 0) {
                steps[i].invalid = 1;
                snprintf(steps[i].invalid_reason, sizeof steps[i].invalid_reason,
                         "the client sent late");
            } else if (why == 1) {
                steps[i].f.interrupted = 1;
            } else {
                steps[i].stats.scheduled = 0;
            }
        }
        /* The recovery step is never part of the finding, judged or not. */
        steps[2].invalid = steps[2].f.interrupted = 0;
        steps[2].stats.scheduled = 20;
        steps[2].f.recovery = 1;
        limit_of(steps, 3, &fl, text);
        assert_true(fl.none_judged);
        assert_false(fl.reached);
        assert_string_equal(text, "first limit: not judged (no step could be judged)\n");
        steps_free(steps, 3);
    }
}

/* Metrics really missing from judged steps: the line still says so, and
 * gives the client's view. */
static void test_first_limit_no_metrics_kept(void **state)
{
    struct sweep_step steps[2];
    struct sweep_first_limit fl;
    char text[512];
    for (uint32_t i = 0; i < 2; i++)
        limit_step_init(&steps[i], i, 2.0 * (i + 1), 0);
    limit_of(steps, 2, &fl, text);
    assert_false(fl.none_judged);
    assert_false(fl.server_metrics);
    assert_string_equal(text, "first limit: unknown (no server metrics); the client alone: TTFT "
                              "and TPOT held\n");
    steps_free(steps, 2);
}

/* Some steps valid: the finding rests on them alone, as docs/sweep.md
 * says. An INVALID step whose scrape shows the KV cache full with a
 * queue is not named (its load was not the one offered), and a judged
 * step with the server idle gives "none reached" with its figures. */
static void test_first_limit_some_judged(void **state)
{
    struct sweep_step steps[2];
    struct sweep_first_limit fl;
    char text[512];
    limit_step_init(&steps[0], 0, 2, 1);
    limit_step_init(&steps[1], 1, 4, 1);
    steps[1].invalid = 1;
    steps[1].f.server.kv_max = 1;
    steps[1].f.server.waiting_max = steps[1].f.server.waiting_mean = 30;
    limit_of(steps, 2, &fl, text);
    assert_false(fl.none_judged);
    assert_true(fl.server_metrics);
    assert_false(fl.reached);
    assert_string_equal(text, "first limit: none reached (running at most 3; queue at most 0; no "
                              "429); TTFT and TPOT held\n");
    /* Valid, the same step is the first limit. */
    steps[1].invalid = 0;
    limit_of(steps, 2, &fl, text);
    assert_true(fl.reached);
    assert_int_equal(fl.kind, SWEEP_LIMIT_KV_CACHE);
    steps_free(steps, 2);
}

/* The charts against load that carry the knee's marker. */
static const char *const load_charts[] = {"chart-ttft",       "chart-tpot",       "chart-e2e",
                                          "chart-attainment", "chart-throughput", "chart-tokens"};

/* How many of load_charts hold a marker label of exactly label. */
static size_t charts_with_label(const char *doc, const char *label)
{
    char want[64];
    snprintf(want, sizeof want, ">%s</text>", label);
    size_t n = 0;
    for (size_t i = 0; i < LL_ARRAY_LEN(load_charts); i++) {
        size_t len;
        const char *s = svgtest_chart_find(doc, load_charts[i], &len);
        if (s == NULL)
            fail_msg("no chart %s", load_charts[i]);
        for (const char *p = strstr(s, "<text class=\"vline-label\""); p && p < s + len;
             p = strstr(p + 1, "<text class=\"vline-label\"")) {
            const char *end = strstr(p, "</text>");
            const char *at = strstr(p, want);
            if (end && at && at + strlen(want) == end + strlen("</text>")) {
                n++;
                break;
            }
        }
    }
    return n;
}

/* Rates 5, 10, 20 and 40 against a ceiling near 28 req/s: the fit puts
 * the knee at 20, the top of its range, where it may lie anywhere up to
 * 40 (2982652: findings say "at or above 20", summary.json's
 * knee_upper_rps is 40). The charts' marker read "knee 20" as if placed
 * there; it reads "knee ≥ 20". A knee inside the range keeps "knee 20". */
static void test_knee_marker_at_or_above(void **state)
{
    static const double offered[4] = {5, 10, 20, 40};
    static const double completed[4] = {5, 10, 20, 28};
    struct report_step steps[4];
    memset(steps, 0, sizeof steps);
    for (int i = 0; i < 4; i++) {
        struct report_step *s = &steps[i];
        s->offered_rps = s->achieved_rps = offered[i];
        s->completed_rps = s->goodput_rps = completed[i];
        s->attainment = completed[i] / offered[i];
        s->output_tps = completed[i] * 100;
        s->scheduled = (uint64_t)(offered[i] * 60);
        s->ok = s->by_kind[REC_OK] = (uint64_t)(completed[i] * 60);
        for (int p = 0; p < REPORT_NPCT; p++) {
            s->ttft_ns[p] = (uint64_t)(100 + 50 * p) * (i + 1) * 1000000;
            s->tpot_ns[p] = s->itl_ns[p] = (uint64_t)(20 + p) * 1000000;
            s->e2e_ns[p] = (uint64_t)(2000 + 100 * p) * (i + 1) * 1000000;
        }
        s->steady = i < 3;
        s->verdict = i < 3 ? "ok" : "saturated";
    }
    struct report r = {
        .title = "llmload sweep: sim",
        .target = "http://127.0.0.1:8000/v1",
        .model = "sim-7b",
        .version = "test",
        .started_at = "2025-01-01T00:00:00Z",
        .mode = "open-loop poisson",
        .steps = steps,
        .n_steps = 4,
        .slo_ttft_ms = 500,
        .attainment_target = 0.99,
        .capacity_rps = 10,
        .knee_rps = 20,
        .knee_at_or_above = 1,
    };
    struct strbuf b;
    strbuf_init(&b);
    report_html_render(&r, &b);
    assert_well_formed(b.data);
    assert_int_equal(charts_with_label(b.data, "knee \xE2\x89\xA5 20"), LL_ARRAY_LEN(load_charts));
    assert_int_equal(charts_with_label(b.data, "knee 20"), 0);
    /* The capacity's marker is as it was. */
    assert_int_equal(charts_with_label(b.data, "SLO capacity 10"), LL_ARRAY_LEN(load_charts));
    strbuf_free(&b);

    r.knee_at_or_above = 0;
    strbuf_init(&b);
    report_html_render(&r, &b);
    assert_int_equal(charts_with_label(b.data, "knee 20"), LL_ARRAY_LEN(load_charts));
    assert_null(strstr(b.data, "knee \xE2\x89\xA5"));
    strbuf_free(&b);
}

UNIT_TESTS(test_first_limit_none_judged, test_first_limit_no_metrics_kept,
           test_first_limit_some_judged, test_knee_marker_at_or_above)
