/* Integration tests of the sweep's server metrics (issue 6): one scraper
 * for the whole sweep, joined to each step's window, against `llmload
 * sim`'s /metrics on 127.0.0.1.
 *
 * The sim runs a batch of 4 sequences with a 20 ms step base: about 12
 * req/s of capacity for the workload below (prompt 64, output 16 tokens,
 * ignore_eos; test_sweep.c derives it from sim_profile_capacity_rps). Two
 * steps of 3 s (+0.5 s warm-up) at 3 and 24 req/s: the first leaves the
 * server's queue empty, the second builds a backlog of about 12 requests
 * a second. Scrapes every 200 ms. The file runs in about 20 s. */
#include <jansson.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "harness.h"
#include "test.h"

#include "util/util.h"

#define WORKLOAD HARNESS_SMALL_WORKLOAD
/* Server-counted generation tokens against client-counted output tokens
 * over the same span of scrapes: within 5% (the client spreads each
 * request's tokens evenly between its first and last token; the sim emits
 * them one engine step apart, so the spread is close but not exact). */
#define TOKENS_REL_TOL 0.05

/* The largest data-y of the <circle>s of series in chart chart_id whose
 * data-x lies in [x0, x1]; -1 when there is none. *count gets how many
 * points the series has in the whole chart. */
static double svg_max_in(const char *html, const char *chart_id, const char *series, double x0,
                         double x1, size_t *count)
{
    double xs[1024], ys[1024];
    *count = harness_svg_points(html, chart_id, series, xs, ys, 1024);
    assert_true(*count <= 1024);
    double best = -1;
    for (size_t i = 0; i < *count; i++)
        if (xs[i] >= x0 && xs[i] <= x1 && ys[i] > best)
            best = ys[i];
    return best;
}

static void test_sweep_server_join(void **state)
{
    harness_small_sim_start(NULL);
    const char *args[] = {"--rates", "3,24", "--step-duration", "3s", "--warmup", "0.5s",
                          "--no-recovery", "--ttft-limit", "100s", "--max-error-rate", "100",
                          "--metrics-interval", "200ms", WORKLOAD, NULL};
    char *out = NULL;
    char *dir = harness_sweep_ok(args, 90, &out, NULL);
    assert_non_null(strstr(out, "server /metrics per step window"));
    free(out);

    json_t *sum = harness_json_load(dir, "summary.json");
    json_t *steps = json_object_get(sum, "steps");
    assert_int_equal(json_array_size(steps), 2);
    /* The longest scrape: how far a scrape's time can be from the moment
     * the server rendered its page. */
    json_t *scrapes = harness_jsonl_in(dir, "server_metrics.jsonl");
    double max_dur_s = 0;
    for (size_t k = 0; k < json_array_size(scrapes); k++) {
        json_t *l = json_array_get(scrapes, k);
        if (json_is_true(json_object_get(l, "ok")) && harness_num(l, "dur_ns") / 1e9 > max_dur_s)
            max_dur_s = harness_num(l, "dur_ns") / 1e9;
    }
    json_decref(scrapes);
    double t_win[2][2];
    for (size_t i = 0; i < 2; i++) {
        json_t *st = json_array_get(steps, i);
        json_t *srv = json_object_get(st, "server");
        assert_true(json_is_object(srv));
        assert_string_equal(json_string_value(json_object_get(srv, "engine")), "vllm");
        /* 3 s at 200 ms: about 15 scrapes in the window, none failed. */
        ASSERT_IN_RANGE(harness_num(srv, "scrapes"), 8, 17);
        assert_int_equal((int)harness_num(srv, "failed"), 0);
        double gen = harness_num(srv, "generation_tokens"),
               cli = harness_num(srv, "client_output_tokens");
        print_message("step %zu: queue mean %.2f max %.0f, running max %.0f, kv max %.3f, "
                      "server gen tokens %.0f, client %.1f, TTFT p50 server %.4fs client "
                      "(from sent) %.4fs\n",
                      i, harness_num(srv, "waiting_mean"), harness_num(srv, "waiting_max"),
                      harness_num(srv, "running_max"), harness_num(srv, "kv_usage_max"), gen, cli,
                      harness_num(srv, "ttft_p50_s"),
                      harness_num(srv, "client_ttft_from_sent_p50_s"));
        assert_true(gen > 100);
        /* The span runs between two scrapes' times, each the midpoint of
         * its GET, which the server answered somewhere inside: a scrape
         * that a loaded machine made slow (dur_ns) moves its edge by up
         * to half its length, and the tokens of that time (6% once, at 3
         * req/s, against 5%) to the other side. */
        double span_s = (harness_num(srv, "span_to_ns") - harness_num(srv, "span_from_ns")) / 1e9;
        assert_true(span_s > 0);
        double slack = gen / span_s * max_dur_s;
        print_message("step %zu: |client - server| %.1f tokens, allowed %.1f (5%%) + %.1f "
                      "(scrapes up to %.0f ms long)\n",
                      i, fabs(cli - gen), TOKENS_REL_TOL * gen, slack, max_dur_s * 1e3);
        assert_true(fabs(cli - gen) <= TOKENS_REL_TOL * gen + slack);
        ASSERT_IN_RANGE(harness_num(srv, "running_max"), 1, 4);
        assert_true(harness_num(srv, "ttft_p50_s") > 0);
        double off = harness_num(st, "start_offset_ns") / 1e9,
               w = harness_num(st, "warmup_ns") / 1e9;
        t_win[i][0] = off + w;
        t_win[i][1] = off + w + harness_num(st, "window_ns") / 1e9;
    }
    json_t *lo = json_object_get(json_array_get(steps, 0), "server");
    json_t *hi = json_object_get(json_array_get(steps, 1), "server");
    /* 3 req/s against ~12 req/s of capacity: nothing waits. */
    ASSERT_IN_RANGE(harness_num(lo, "waiting_max"), 0, 1);
    /* 24 req/s: the queue grows by ~12 a second over the window. */
    assert_true(harness_num(hi, "waiting_max") > 10);
    assert_true(harness_num(hi, "waiting_mean") > 5);
    assert_int_equal((int)harness_num(hi, "running_max"), 4);

    /* steps.csv: the server columns after the error kinds of the first
     * release, then the kinds added since, then the hold rule's, then the
     * request bodies per second (appended). */
    char path[700];
    char *csv = harness_read_in(dir, "steps.csv");
    assert_non_null(strstr(csv, ",err_transport_error,server_scrapes,"));
    assert_non_null(strstr(csv,
                           ",client_output_tokens_in_span,err_overloaded_event,hold_factor,short,"
                           "request_bytes_per_s\n"));
    free(csv);

    /* The report: the server's queue on the in-flight time axis, empty in
     * the low step's window, above 10 in the overloaded one. */
    char *html = harness_read_in(dir, "report.html");
    size_t n_pts = 0;
    double q_lo = svg_max_in(html, "chart-server-queue", "server_waiting", t_win[0][0],
                             t_win[0][1], &n_pts);
    assert_true(n_pts >= 20);
    double q_hi = svg_max_in(html, "chart-server-queue", "server_waiting", t_win[1][0],
                             t_win[1][1], &n_pts);
    ASSERT_IN_RANGE(q_lo, 0, 1);
    assert_true(q_hi > 10);
    double r_hi = svg_max_in(html, "chart-server-queue", "server_running", t_win[1][0],
                             t_win[1][1], &n_pts);
    ASSERT_NEAR(r_hi, 4, 1e-9);
    double kv = svg_max_in(html, "chart-server-kv", "server_kv_usage", t_win[1][0],
                           t_win[1][1], &n_pts);
    assert_true(kv > 0 && kv <= 100);
    free(html);

    /* `llmload report DIR` rebuilds the same per-step server figures from
     * the files alone. */
    snprintf(path, sizeof path, "%s/summary.json", dir);
    assert_int_equal(unlink(path), 0);
    const char *rargv[] = {"report", dir, NULL};
    out = harness_run_expect(rargv, 30, 0, NULL);
    assert_non_null(strstr(out, "server /metrics per step window"));
    free(out);
    json_t *sum2 = harness_json_load(dir, "summary.json");
    json_t *steps2 = json_object_get(sum2, "steps");
    assert_int_equal(json_array_size(steps2), 2);
    for (size_t i = 0; i < 2; i++)
        assert_true(json_equal(json_object_get(json_array_get(steps, i), "server"),
                               json_object_get(json_array_get(steps2, i), "server")));
    json_decref(sum2);
    json_decref(sum);
    harness_results_free(dir);
}

/* A metrics URL nobody answers: warnings and counted gaps, the sweep
 * itself succeeds. */
static void test_sweep_server_gaps(void **state)
{
    harness_small_sim_start(NULL);
    /* Port 1 on 127.0.0.1: connection refused. */
    const char *args[] = {"--rates", "3", "--step-duration", "1s", "--warmup", "0.2s",
                          "--no-recovery", "--metrics-url", "http://127.0.0.1:1/metrics",
                          "--metrics-interval", "200ms", WORKLOAD, NULL};
    char *out = NULL, *err = NULL;
    char *dir = harness_sweep_ok(args, 60, &out, &err);
    assert_non_null(strstr(err, "warning"));
    assert_non_null(strstr(out, "gaps)"));
    json_t *sum = harness_json_load(dir, "summary.json");
    json_t *srv = json_object_get(json_array_get(json_object_get(sum, "steps"), 0), "server");
    assert_true(json_is_object(srv));
    assert_true(harness_num(srv, "failed") >= 3);
    assert_true(harness_num(srv, "failed") == harness_num(srv, "scrapes"));
    assert_true(json_is_null(json_object_get(srv, "waiting_max")));
    assert_true(json_is_null(json_object_get(srv, "generation_tokens")));
    /* The step's own figures are all there. */
    assert_true(harness_num(json_array_get(json_object_get(sum, "steps"), 0), "completed_rps") > 1);
    json_decref(sum);
    free(out);
    free(err);
    harness_results_free(dir);
}

/* The capacity probe of --rates auto is labelled on the charts over time.
 * Its closed-loop rounds start at 16 users against a batch of 4: the
 * clients keep 16 or more in flight and the server queues at least 8 of
 * them. steps.jsonl's "probe" line says when it ran and carries its
 * clients' in-flight samples; the report shades that interval (data-key
 * "probe") on the in-flight and server charts and draws those samples,
 * and the server's queue is up inside it. */
static void test_sweep_probe_labelled(void **state)
{
    harness_small_sim_start(NULL);
    const char *args[] = {HARNESS_PROBE_ONE_STEP,
                          "--ttft-limit",
                          "100s",
                          "--max-error-rate",
                          "100",
                          "--metrics-interval",
                          "100ms",
                          WORKLOAD,
                          NULL};
    char *out = NULL;
    char *dir = harness_sweep_ok(args, 90, &out, NULL);
    free(out);
    json_t *lines = harness_jsonl_in(dir, "steps.jsonl");
    json_t *probe = NULL, *first = NULL;
    for (size_t i = 0; i < json_array_size(lines); i++) {
        json_t *o = json_array_get(lines, i);
        const char *kind = harness_sval(o, "kind");
        if (strcmp(kind, "probe") == 0)
            probe = o;
        else if (strcmp(kind, "load") == 0 && first == NULL)
            first = o;
    }
    assert_non_null(probe);
    assert_non_null(first);
    double t0 = (double)harness_ival_req(probe, "start_offset_ns") / 1e9;
    double t1 = t0 + (double)harness_ival_req(probe, "duration_ns") / 1e9;
    /* At least two rounds of 500 ms, before the first step. */
    assert_true(t1 - t0 >= 1.0);
    assert_true((double)harness_ival_req(first, "start_offset_ns") / 1e9 >= t1);
    json_t *series = json_object_get(probe, "inflight_series");
    assert_true(json_array_size(series) >= 10);
    double peak = 0;
    for (size_t i = 0; i < json_array_size(series); i++)
        peak =
            LL_MAX(peak, (double)json_integer_value(json_array_get(json_array_get(series, i), 1)));
    assert_true(peak >= 16 && peak <= 1024);

    char *html = harness_read_in(dir, "report.html");
    static const char *const charts[] = {"chart-inflight", "chart-server-queue"};
    for (size_t c = 0; c < LL_ARRAY_LEN(charts); c++) {
        char pat[160];
        snprintf(pat, sizeof pat, "class=\"chart\" id=\"%s\"", charts[c]);
        const char *ch = strstr(html, pat);
        assert_non_null(ch);
        const char *end = strstr(ch, "</svg>");
        const char *band = strstr(ch, "<rect class=\"band\" data-key=\"probe\" data-x0=\"");
        if (band == NULL || band > end)
            fail_msg("%s: no probe band", charts[c]);
        double x0 = strtod(strstr(band, "data-x0=\"") + 9, NULL);
        double x1 = strtod(strstr(band, "data-x1=\"") + 9, NULL);
        ASSERT_NEAR(x0, t0, 1e-9);
        ASSERT_NEAR(x1, t1, 1e-9);
        const char *note = strstr(ch, "capacity probe");
        assert_true(note != NULL && note < end);
    }
    size_t n_pts = 0;
    double in_flight = svg_max_in(html, "chart-inflight", "probe_inflight", t0, t1, &n_pts);
    assert_true(n_pts >= 10);
    ASSERT_NEAR(in_flight, peak, 1e-9);
    double queued = svg_max_in(html, "chart-server-queue", "server_waiting", t0, t1, &n_pts);
    if (queued < 8)
        fail_msg("the server's queue peaked at %g during the probe, expected 8 or more", queued);
    free(html);
    json_decref(lines);
    harness_results_free(dir);
}

HARNESS_MAIN(cmocka_unit_test_teardown(test_sweep_server_join, harness_sim_teardown),
             cmocka_unit_test_teardown(test_sweep_server_gaps, harness_sim_teardown),
             cmocka_unit_test_teardown(test_sweep_probe_labelled, harness_sim_teardown))
