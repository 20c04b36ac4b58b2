/* Integration tests of `llmload sweep` and `llmload report` against
 * `llmload sim` on 127.0.0.1.
 *
 * The sim runs the default profile with a batch of 4 sequences and a 20 ms
 * step base, so that its theoretical capacity for the test workload
 * (prompt 64, output 16 tokens, ignore_eos) is low: about 12 req/s, from
 * sim_profile_capacity_rps. Rates are fractions of that truth, steps are
 * 2-3 s, and arrivals are constant, so the whole file runs in about a
 * minute and a half on a shared 2-core machine. */
#include <jansson.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "harness.h"
#include "test.h"

#include "measure/record.h"
#include "sim/profile.h"
#include "util/util.h"

#define WORKLOAD HARNESS_SMALL_WORKLOAD

struct swept {
    char *dir;      /* the results dir (removed with its temp dir by swept_free) */
    int status;
    char *out, *err;
};

/* Run `llmload sweep --url <sim> --out <tmp>/r --quiet <args>` and keep its
 * output. */
static void sweep_run(struct swept *s, const char *const *args, int timeout_s)
{
    memset(s, 0, sizeof *s);
    s->dir = harness_run_against_sim("sweep", NULL, args, timeout_s, &s->status, &s->out,
                                     &s->err);
}

static void swept_free(struct swept *s)
{
    harness_results_free(s->dir);
    free(s->out);
    free(s->err);
}

/* Run the sweep (sweep_run), stop the sim, and insist on exit status
 * want_status, want_steps steps in summary.json and, when why is not
 * NULL, a stop reason that contains why. Returns summary.json (caller
 * decrefs). */
static json_t *sweep_expect(struct swept *s, const char *const *args, int timeout_s,
                            int want_status, size_t want_steps, const char *why)
{
    sweep_run(s, args, timeout_s);
    harness_sim_teardown(NULL);
    if (s->status != want_status)
        fail_msg("sweep exited %d, expected %d\nstdout:\n%s\nstderr:\n%s", s->status,
                 want_status, s->out, s->err);
    json_t *sum = harness_json_load(s->dir, "summary.json");
    assert_int_equal(json_array_size(json_object_get(sum, "steps")), want_steps);
    if (why != NULL) {
        const char *stop = json_string_value(
            json_object_get(json_object_get(sum, "findings"), "stop_reason"));
        if (stop == NULL || strstr(stop, why) == NULL)
            fail_msg("stop reason \"%s\", expected one with \"%s\"", stop ? stop : "(none)",
                     why);
    }
    return sum;
}

/* Sweep the small sim (started here) at the rates f[0..n) x its capacity,
 * 2 s steps after a 0.3 s warm-up and no recovery step, under the stop
 * rules given: exit 0 after want_steps steps, stopped for a reason that
 * contains why (sweep_expect). Returns summary.json (caller decrefs). */
static json_t *sweep_stopped(struct swept *s, const double *f, size_t n, const char *const *rules,
                             int timeout_s, size_t want_steps, const char *why)
{
    char rates[200];
    harness_sweep_rates(rates, sizeof rates, harness_small_sim_start(NULL), f, n);
    const char *head[] = {"--rates", rates, "--step-duration", "2s", "--warmup", "0.3s", NULL};
    const char *tail[] = {"--no-recovery", WORKLOAD, NULL};
    struct harness_argv a = {.n = 0};
    harness_argv_add(&a, head);
    harness_argv_add(&a, rules);
    harness_argv_add(&a, tail);
    return sweep_expect(s, a.v, timeout_s, 0, want_steps, why);
}

/* The documented summary.json step fields (docs/formats.md) and types. */
static void check_step_schema(json_t *st)
{
    static const char *const ints[] = {"step", "repeat", "start_offset_ns", "duration_ns",
                                       "warmup_ns", "window_ns", "scheduled", "ok", "failed",
                                       "slo_met"};
    static const char *const nums[] = {"offered_rps", "achieved_rps", "completed_rps",
                                       "goodput_rps", "input_tokens_per_s",
                                       "output_tokens_per_s", "error_rate"};
    for (size_t i = 0; i < LL_ARRAY_LEN(ints); i++)
        if (!json_is_integer(json_object_get(st, ints[i])))
            fail_msg("step field \"%s\" is not an integer", ints[i]);
    for (size_t i = 0; i < LL_ARRAY_LEN(nums); i++)
        if (!json_is_number(json_object_get(st, nums[i])))
            fail_msg("step field \"%s\" is not a number", nums[i]);
    assert_true(json_is_string(json_object_get(st, "kind")));
    assert_true(json_is_string(json_object_get(st, "verdict")));
    assert_true(json_is_boolean(json_object_get(st, "slo_pass")));
    json_t *lat = json_object_get(st, "latency_ns");
    static const char *const rows[] = {"ttft", "tpot", "itl", "e2e", "schedule_lateness"};
    static const char *const pcts[] = {"p50", "p90", "p95", "p99", "p99_9", "max"};
    for (size_t i = 0; i < LL_ARRAY_LEN(rows); i++) {
        json_t *row = json_object_get(lat, rows[i]);
        assert_true(json_is_object(row));
        for (size_t p = 0; p < LL_ARRAY_LEN(pcts); p++) {
            json_t *v = json_object_get(row, pcts[p]);
            assert_true(json_is_integer(v) || json_is_null(v));
        }
    }
    json_t *ss = json_object_get(st, "steady_state");
    assert_true(json_is_boolean(json_object_get(ss, "steady")));
    assert_true(json_is_object(json_object_get(st, "ttft_p99_ci_ns")));
    assert_true(json_is_object(json_object_get(st, "errors_by_kind")));
    assert_true(json_is_object(json_object_get(st, "inflight")));
}

/* steps.csv: the documented header, one row per step of summary.json, and
 * the offered and completed rates equal to summary.json's. */
static void check_csv(const char *dir, json_t *steps)
{
    static const char *const first_cols[] = {"step", "repeat", "kind", "offered_rps",
                                             "start_offset_s", "window_s", "achieved_rps",
                                             "completed_rps", "goodput_rps", "attainment"};
    char *text = harness_read_in(dir, "steps.csv");
    size_t header_fields = 1, rows = 0;
    char *line = text, *nl = strchr(line, '\n');
    assert_non_null(nl);
    *nl = '\0';
    for (char *p = line; *p; p++)
        header_fields += *p == ',';
    /* 54 figures + one per error kind but ok + 15 server columns (empty when
     * not scraped) + the hold rule's 2 + request_bytes_per_s */
    assert_int_equal(header_fields, 54 + (REC_KIND_COUNT - 1) + 15 + 2 + 1);
    char *save = line;
    for (size_t i = 0; i < LL_ARRAY_LEN(first_cols); i++) {
        size_t l = strlen(first_cols[i]);
        if (strncmp(save, first_cols[i], l) != 0 || (save[l] != ',' && save[l] != '\0'))
            fail_msg("steps.csv column %zu: expected %s in \"%.80s\"", i, first_cols[i], line);
        save += l + 1;
    }
    assert_non_null(strstr(line, ",ttft_p99_ms,"));
    assert_non_null(strstr(line, ",ttft_p99_ci_lo_ms,"));
    assert_non_null(strstr(line, ",err_http_5xx,"));
    line = nl + 1;
    while (*line) {
        nl = strchr(line, '\n');
        assert_non_null(nl);
        *nl = '\0';
        size_t fields = 1;
        for (char *p = line; *p; p++)
            fields += *p == ',';
        assert_int_equal(fields, header_fields);
        json_t *st = json_array_get(steps, rows);
        assert_non_null(st);
        /* field 3 is offered_rps, field 7 completed_rps */
        char *f = line;
        double vals[8];
        for (int i = 0; i < 8; i++) {
            char *end;
            vals[i] = strtod(f, &end);
            f = strchr(f, ',') + 1;
        }
        ASSERT_REL(vals[3], harness_num(st, "offered_rps"), 1e-5);
        ASSERT_NEAR(vals[7], harness_num(st, "completed_rps"),
                    1e-5 * harness_num(st, "completed_rps") + 1e-9);
        rows++;
        line = nl + 1;
    }
    assert_int_equal(rows, json_array_size(steps));
    free(text);
}

/* Find, in the <svg id="chart_id"> element of html, every <circle> of
 * data-series="series" and check its data-x / data-y against xs / ys
 * (n points, in any order). Also returns the data-x of the vline with
 * data-key="key_vline" in that chart (NAN when absent). */
static double check_svg_points(const char *html, const char *chart_id, const char *series,
                               const double *xs, const double *ys, size_t n,
                               const char *key_vline)
{
    char pat[200];
    snprintf(pat, sizeof pat, "<svg id=\"%s\"", chart_id);
    const char *start = strstr(html, pat);
    if (!start) {
        snprintf(pat, sizeof pat, "id=\"%s\"", chart_id);
        start = strstr(html, pat);
    }
    assert_non_null(start);
    const char *end = strstr(start, "</svg>");
    assert_non_null(end);
    snprintf(pat, sizeof pat, "data-series=\"%s\" data-x=\"", series);
    size_t found = 0;
    int *matched = calloc(n + 1, sizeof *matched);
    for (const char *p = strstr(start, pat); p && p < end; p = strstr(p + 1, pat)) {
        const char *q = p + strlen(pat);
        double x = strtod(q, NULL);
        const char *yq = strstr(q, "data-y=\"");
        assert_non_null(yq);
        double y = strtod(yq + 8, NULL);
        int ok = 0;
        for (size_t i = 0; i < n; i++) {
            if (!matched[i] && fabs(x - xs[i]) <= 1e-9 * fabs(xs[i]) + 1e-12 &&
                fabs(y - ys[i]) <= 1e-9 * fabs(ys[i]) + 1e-12) {
                matched[i] = ok = 1;
                break;
            }
        }
        if (!ok)
            fail_msg("%s: point (%g, %g) of %s matches no step", chart_id, x, y, series);
        found++;
    }
    assert_int_equal(found, n);
    free(matched);
    double vx = NAN;
    if (key_vline) {
        snprintf(pat, sizeof pat, "class=\"vline\" data-key=\"%s\" data-x=\"", key_vline);
        const char *v = strstr(start, pat);
        if (v && v < end)
            vx = strtod(v + strlen(pat), NULL);
    }
    return vx;
}

/* The main one: rates at 25%..150% of the truth C. The SLO capacity and
 * the knee must be within one step (C/4) of C; summary.json, steps.csv
 * and the report's SVG carry the same numbers; `llmload report` rebuilds
 * byte-identical files; the recovery step runs at 20% of the top rate. */
static void test_sweep_capacity_knee(void **state)
{
    double c = harness_small_sim_start(NULL);
    char rates[200];
    static const double f[] = {0.25, 0.5, 0.75, 1, 1.25, 1.5};
    harness_sweep_rates(rates, sizeof rates, c, f, LL_ARRAY_LEN(f));
    const char *args[] = {"--rates", rates, "--step-duration", "3s", "--warmup", "0.5s",
                          "--slo", "ttft=250ms", "--ttft-limit", "100s", "--cost-per-hour",
                          "2", "--forecast", "50", "--recovery-duration", "2s", WORKLOAD,
                          NULL};
    struct swept s;
    sweep_run(&s, args, 120);
    harness_sim_teardown(NULL);
    if (s.status != 0)
        fail_msg("sweep exited %d\nstdout:\n%s\nstderr:\n%s", s.status, s.out, s.err);
    assert_non_null(strstr(s.out, "SLO capacity:"));
    assert_non_null(strstr(s.out, "saturation knee:"));

    json_t *sum = harness_json_load(s.dir, "summary.json");
    assert_string_equal(json_string_value(json_object_get(sum, "schema")), "llmload.sweep/1");
    json_t *steps = json_object_get(sum, "steps");
    size_t n = json_array_size(steps);
    ASSERT_IN_RANGE(n, 5, 7); /* 6 rates (the goodput stop may cut the 6th) + recovery */
    for (size_t i = 0; i < n; i++)
        check_step_schema(json_array_get(steps, i));
    json_t *last = json_array_get(steps, n - 1);
    assert_string_equal(json_string_value(json_object_get(last, "kind")), "recovery");
    double top = harness_num(json_array_get(steps, n - 2), "offered_rps");
    char want[16];
    harness_sweep_rate(want, sizeof want, 0.2 * top);
    ASSERT_REL(harness_num(last, "offered_rps"), strtod(want, NULL), 1e-9);
    /* Step offsets grow: each starts after the previous one's duration. */
    for (size_t i = 1; i < n; i++) {
        json_t *a = json_array_get(steps, i - 1), *b = json_array_get(steps, i);
        assert_true(harness_num(b, "start_offset_ns") >=
                    harness_num(a, "start_offset_ns") + harness_num(a, "duration_ns"));
    }
    /* The lowest step passes with every request in the SLO. */
    json_t *s0 = json_array_get(steps, 0);
    assert_true(json_is_true(json_object_get(s0, "slo_pass")));
    ASSERT_NEAR(harness_num(s0, "attainment"), 1.0, 1e-9);

    json_t *fd = json_object_get(sum, "findings");
    double cap = harness_num(fd, "slo_capacity_rps"), knee = harness_num(fd, "knee_rps");
    ASSERT_NEAR(cap, c, 0.25 * c + 0.01);
    assert_true(cap <= c * 1.01); /* nothing above capacity meets the SLO */
    ASSERT_NEAR(knee, c, 0.25 * c);
    assert_true(json_is_number(json_object_get(fd, "next_failing_rps")));
    assert_true(harness_num(fd, "next_failing_rps") > cap);
    /* 50 req/s at 80% of the capacity per replica. */
    assert_int_equal(json_integer_value(json_object_get(fd, "replicas_needed")),
                     (json_int_t)ceil(50 / (0.8 * cap) - 1e-9));
    assert_true(harness_num(fd, "cost_per_million_output_tokens_at_capacity") > 0);

    check_csv(s.dir, steps);

    /* The throughput chart plots (offered, completed) of every load step. */
    char *html = harness_read_in(s.dir, "report.html");
    double xs[8] = {0}, ys[8] = {0};
    size_t m = 0;
    for (size_t i = 0; i + 1 < n; i++) {
        xs[m] = harness_num(json_array_get(steps, i), "offered_rps");
        ys[m] = harness_num(json_array_get(steps, i), "completed_rps");
        m++;
    }
    double vknee = check_svg_points(html, "chart-throughput", "completed", xs, ys, m, "knee");
    ASSERT_NEAR(vknee, knee, 1e-6 * knee);
    for (size_t i = 0; i < m; i++)
        ys[i] = harness_num(json_array_get(steps, i), "goodput_rps");
    double vcap = check_svg_points(html, "chart-throughput", "goodput", xs, ys, m, "capacity");
    ASSERT_NEAR(vcap, cap, 1e-6 * cap);
    free(html);

    /* `llmload report DIR` rebuilds the same summary.json. */
    static const char *const rebuilt[] = {"summary.json", NULL};
    char *o = harness_report_rebuilds(s.dir, rebuilt);
    assert_non_null(strstr(o, "SLO capacity:"));
    free(o);
    json_decref(sum);
    swept_free(&s);
}

static int cmp_i64(const void *a, const void *b)
{
    int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;
    return (x > y) - (x < y);
}

/* sweep --api API against the sim: two steps and no recovery, one record
 * per request the sim logged, all ok, each one's output tokens from the
 * API's usage equal to the sim's log line for it (matched by the response
 * order the sim logged: one per record, the same multiset of token
 * counts), and every request went to path. */
static void sweep_api(const char *api, const char *path)
{
    harness_tmp_begin();
    char logp[600];
    harness_tmp_path(logp, sizeof logp, "sim.log");
    const char *sargs[] = {"--log", logp, NULL};
    harness_small_sim_start(sargs);
    const char *args[] = {"--rates",
                          "3,6",
                          "--step-duration",
                          "2s",
                          "--warmup",
                          "0.3s",
                          "--slo",
                          "ttft=2s",
                          "--no-recovery",
                          "--api",
                          api,
                          "--prompt-tokens",
                          "64",
                          "--output-tokens",
                          "uniform:4,24",
                          "--arrival",
                          "constant",
                          NULL};
    struct swept s;
    json_t *sum = sweep_expect(&s, args, 60, 0, 2, NULL);
    char rp[700];
    snprintf(rp, sizeof rp, "%s/requests.jsonl", s.dir);
    json_t *recs = harness_jsonl_load(rp);
    json_t *log = harness_jsonl_load(logp);
    size_t n = json_array_size(recs);
    assert_true(n >= 10);
    assert_int_equal(json_array_size(log), n);
    int64_t rec_tokens[4096] = {0}, log_tokens[4096] = {0};
    assert_true(n < 4096);
    for (size_t i = 0; i < n; i++) {
        json_t *r = json_array_get(recs, i), *l = json_array_get(log, i);
        assert_string_equal(harness_sval(r, "kind"), "ok");
        assert_string_equal(harness_sval(r, "tokens_source"), "usage");
        assert_string_equal(harness_sval(l, "path"), path);
        rec_tokens[i] = harness_ival_req(r, "output_tokens");
        log_tokens[i] = harness_ival_req(l, "output_tokens");
    }
    qsort(rec_tokens, n, sizeof rec_tokens[0], cmp_i64);
    qsort(log_tokens, n, sizeof log_tokens[0], cmp_i64);
    for (size_t i = 0; i < n; i++)
        assert_int_equal(rec_tokens[i], log_tokens[i]);
    json_decref(recs);
    json_decref(log);
    json_decref(sum);
    swept_free(&s);
    harness_tmp_end();
}

static void test_sweep_anthropic(void **state)
{
    sweep_api("anthropic-messages", "/v1/messages");
}

static void test_sweep_responses(void **state)
{
    sweep_api("openai-responses", "/v1/responses");
}

/* Half the requests get a 500: the first step's error rate (~50%) passes
 * --max-error-rate 10 and the sweep stops there. --expect-capacity then
 * fails the run with exit 7 and a one-line reason. */
static void test_stop_error_rate(void **state)
{
    const char *sargs[] = {"--fault", "500:0.5", NULL};
    harness_small_sim_start(sargs);
    const char *args[] = {"--rates", "10,11,12", "--step-duration", "2s", "--warmup", "0.3s",
                          "--slo", "ttft=1s", "--no-recovery", "--expect-capacity", "5",
                          WORKLOAD, NULL};
    struct swept s;
    json_t *sum = sweep_expect(&s, args, 60, 7, 1, "error rate");
    assert_non_null(strstr(s.err, "--expect-capacity"));
    json_t *steps = json_object_get(sum, "steps");
    ASSERT_IN_RANGE(harness_num(json_array_get(steps, 0), "error_rate"), 0.2,
                    0.85); /* 0.5 of ~20 */
    json_t *errs = json_object_get(json_array_get(steps, 0), "errors_by_kind");
    assert_true(json_integer_value(json_object_get(errs, "http_5xx")) > 0);
    json_decref(sum);
    swept_free(&s);
}

/* Without an SLO, half the requests cancelled by the workload 1 ms after
 * sending: the client's own choice, not the server's errors. Every step's
 * error rate is 0 and the sweep runs every rate, where the cancellations
 * read a 50% error rate and stopped it after the first. */
static void test_cancellations_not_errors(void **state)
{
    harness_small_sim_start(NULL);
    const char *args[] = {
        "--rates",           "4,5", "--step-duration", "1.5s", "--warmup", "0.3s", "--no-recovery",
        "--cancel-fraction", "0.5", "--cancel-after",  "1ms",  WORKLOAD,   NULL};
    struct swept s;
    json_t *sum = sweep_expect(&s, args, 60, 0, 2, NULL);
    json_t *steps = json_object_get(sum, "steps");
    for (size_t i = 0; i < 2; i++) {
        json_t *st = json_array_get(steps, i);
        json_t *errs = json_object_get(st, "errors_by_kind");
        assert_true(json_integer_value(json_object_get(errs, "cancelled")) > 0);
        ASSERT_NEAR(harness_num(st, "error_rate"), 0, 0);
        const char *why = json_string_value(json_object_get(st, "fail_reason"));
        if (why && strstr(why, "error rate"))
            fail_msg("step %zu failed on its error rate: %s", i, why);
    }
    json_decref(sum);
    swept_free(&s);
}

/* The capacity probe (--rates auto) stops at a round that ends more than
 * 10% of its requests in an error, over the requests the client let end:
 * half of them cancelled by the workload, it still finds a rate to step
 * from (it said "the capacity probe completed no request" and exited 6),
 * and a first round half of whose requests get a 500 says so, not that
 * nothing completed. */
static void test_probe_errors(void **state)
{
    harness_small_sim_start(NULL);
    const char *args[] = {HARNESS_PROBE_ONE_STEP,
                          "--cancel-fraction",
                          "0.5",
                          "--cancel-after",
                          "1ms",
                          WORKLOAD,
                          NULL};
    struct swept s;
    json_t *sum = sweep_expect(&s, args, 90, 0, 1, NULL);
    assert_true(harness_num(json_object_get(sum, "settings"), "estimate_rps") > 0);
    json_decref(sum);
    swept_free(&s);

    const char *sargs[] = {"--fault", "500:0.5", NULL};
    harness_small_sim_start(sargs);
    const char *auto_args[] = {"--rates", "auto", "--probe-duration", "0.5s", WORKLOAD, NULL};
    sweep_run(&s, auto_args, 60);
    harness_sim_teardown(NULL);
    assert_int_equal(s.status, 6);
    if (!strstr(s.err, "the capacity probe's first round (16 users, closed loop) ended ") ||
        !strstr(s.err, "% of its requests in an error (it stops past 10%)"))
        fail_msg("stderr:\n%s", s.err);
    swept_free(&s);
}

/* A probe whose every request the client cancels (--cancel-fraction 1,
 * 1 ms after the send) has no completion to rate: it stops at its first
 * round and says the client cancelled them (exit 6), where it went on
 * doubling the users to 1024, each round cancelled whole, and then said
 * "the capacity probe completed no request". */
static void test_probe_all_cancelled(void **state)
{
    harness_small_sim_start(NULL);
    const char *args[] = {
        HARNESS_PROBE_ONE_STEP, "--cancel-fraction", "1", "--cancel-after", "1ms", WORKLOAD, NULL};
    struct swept s;
    sweep_run(&s, args, 90);
    harness_sim_teardown(NULL);
    assert_int_equal(s.status, 6);
    if (!strstr(s.err, "the capacity probe's first round (16 users, closed loop): the client "
                       "cancelled all ") ||
        !strstr(s.err, " of its requests (--cancel-fraction, --cancel-after...), so none "
                       "completed: no rate to step from; give --rates") ||
        strstr(s.err, "completed no request"))
        fail_msg("stderr:\n%s", s.err);
    swept_free(&s);
}

/* At twice the capacity the TTFT p99 passes a 300 ms safety limit in the
 * second step; the third rate never runs. */
static void test_stop_ttft_limit(void **state)
{
    static const double f[] = {0.5, 2, 2.5};
    const char *rules[] = {"--ttft-limit", "300ms", "--max-error-rate", "100", NULL};
    struct swept s;
    json_t *sum = sweep_stopped(&s, f, LL_ARRAY_LEN(f), rules, 60, 2, "safety limit");
    json_t *steps = json_object_get(sum, "steps");
    /* Without an SLO the step past capacity is unsteady: it fails. */
    json_t *s1 = json_array_get(steps, 1);
    assert_false(json_is_true(json_object_get(json_object_get(s1, "steady_state"), "steady")));
    json_decref(sum);
    swept_free(&s);
}

/* Past capacity the goodput falls: 80% of C meets a 250 ms TTFT for
 * every request, 200% and 250% of C for few (4 s steps: some 39 met
 * requests ended in the peak's window, some 8 in each after it, far
 * beyond counting noise): two steps below the peak and the sweep stops
 * before the 300% and 350% rates. */
static void test_stop_goodput_falling(void **state)
{
    static const double f[] = {0.8, 2, 2.5, 3, 3.5};
    const char *rules[] = {"--slo", "ttft=250ms", "--ttft-limit", "100s", "--step-duration",
                           "4s",    NULL};
    struct swept s;
    json_t *sum = sweep_stopped(&s, f, LL_ARRAY_LEN(f), rules, 120, 3, "goodput fell");
    json_t *steps = json_object_get(sum, "steps");
    double g0 = harness_num(json_array_get(steps, 0), "goodput_rps");
    assert_true(harness_num(json_array_get(steps, 1), "goodput_rps") < 0.95 * g0);
    assert_true(harness_num(json_array_get(steps, 2), "goodput_rps") < 0.95 * g0);
    json_decref(sum);
    swept_free(&s);
}

/* The same overload on 2 s steps is a fall the windows cannot tell from
 * noise: at 50% of C some 12 requests that met the SLO ended in the
 * window (6 req/s), at 150% to 300% some 10, 8, 8 and 6 (5, 4, 4 and
 * 3 req/s, each under 95% of the peak: the rule stopped here at 200%
 * once), but 8 or fewer of 20 on an equal window's side is P = 0.25,
 * and 6 of 18 P = 0.12. Every rate runs. The falls under 95% are not
 * asserted: how far under depends on the box's load, and the parent
 * stopped on them at 200% (3 steps, not 5); only two last falls to 2 or
 * fewer of 14 (P < 0.01 each) would stop this one. */
static void test_stop_goodput_noise(void **state)
{
    static const double f[] = {0.5, 1.5, 2, 2.5, 3};
    const char *rules[] = {"--slo", "ttft=250ms", "--ttft-limit", "100s", NULL};
    struct swept s;
    json_t *sum = sweep_stopped(&s, f, LL_ARRAY_LEN(f), rules, 90, 5, NULL);
    assert_non_null(strstr(s.out, "stopped: every rate was run"));
    json_decref(sum);
    swept_free(&s);
}

/* A 2 s stall of the sim lands inside the recovery step (at 2 req/s, a
 * request every 0.5 s; --overload-duration 0: no overload lead-in, so the
 * step starts from an idle server). Requests scheduled in the stall wait
 * for its end, so misses start at the stall and latency is back inside the
 * 500 ms TTFT within about 1.5 s (the stall less the SLO) of the first
 * miss. */
static void test_recovery_after_stall(void **state)
{
    const char *sargs[] = {"--stall-at", "6s", "--stall-for", "2s", "--stall-from",
                           "first-request", NULL};
    harness_small_sim_start(sargs);
    const char *args[] = {"--rates", "10", "--step-duration", "3s", "--warmup", "0.5s",
                          "--slo", "ttft=500ms", "--overload-duration", "0",
                          "--recovery-duration", "8s", WORKLOAD, NULL};
    struct swept s;
    json_t *sum = sweep_expect(&s, args, 60, 0, 2, NULL);
    json_t *steps = json_object_get(sum, "steps");
    json_t *rs = json_array_get(steps, 1);
    ASSERT_NEAR(harness_num(rs, "offered_rps"), 2, 1e-9);
    json_t *rec = json_object_get(json_object_get(sum, "findings"), "recovery");
    assert_true(json_is_true(json_object_get(rec, "ran")));
    json_t *first = json_object_get(rec, "first_miss_ns"),
           *back = json_object_get(rec, "back_in_slo_ns");
    if (!json_is_integer(first) || !json_is_integer(back))
        fail_msg("recovery not measured:\n%s", s.out);
    /* The stall starts ~2 s into the recovery step (6 s after the first
     * request; the first step and its drain take ~4 s). */
    double first_s = (double)json_integer_value(first) / 1e9;
    double rec_s = (double)(json_integer_value(back) - json_integer_value(first)) / 1e9;
    /* Without a lead-in the switch is the step's start. */
    assert_int_equal(json_integer_value(json_object_get(rec, "recovery_ns")),
                     json_integer_value(back));
    ASSERT_IN_RANGE(first_s, 0.8, 4.0);
    ASSERT_IN_RANGE(rec_s, 0.8, 3.0);
    json_decref(sum);
    swept_free(&s);
}

/* A fresh temporary folder with w.json (its path in wpath): two classes
 * of a 32-token prompt, "short" with 8 output tokens and "long" with 64
 * (ignore_eos), each class's JSON ending in its extra fields ("" or
 * ", \"slo\": {...}"); and a sim whose every step lasts at least 20 ms. */
static void two_classes_start(char *wpath, size_t cap, const char *short_extra,
                              const char *long_extra)
{
    harness_tmp_begin();
    harness_tmp_path(wpath, cap, "w.json");
    char text[600];
    snprintf(text, sizeof text,
             "{\"classes\": [\n"
             " {\"name\": \"short\", \"weight\": 1, \"prompt_tokens\": 32, \"output_tokens\": 8,"
             "  \"ignore_eos\": true%s},\n"
             " {\"name\": \"long\", \"weight\": 1, \"prompt_tokens\": 32, \"output_tokens\": 64,"
             "  \"ignore_eos\": true%s}\n"
             "]}\n",
             short_extra, long_extra);
    harness_write_file(wpath, text);
    const char *sargs[] = {"--step-base", "20ms", NULL};
    harness_cur_sim_start(sargs);
}

/* Two traffic classes with the same 32-token prompt and very different
 * outputs, 8 and 64 tokens (ignore_eos), on a sim whose every step lasts
 * at least its 20 ms step base (docs/sim-engine.md: step = base + prefill
 * tokens x 10 us + decoding sequences x 150 us, so about 20.3-21.5 ms at
 * these loads). A request's E2E is its TTFT plus one step per output token
 * after the first, so the long class's E2E p50 exceeds the short one's by
 * 56 steps: at least 56 x 20 ms = 1.12 s (5% slack for the histogram and
 * the two populations' TTFT), at most 56 x 30 ms. Per-class scheduled
 * counts add up to the step's; summary.json, classes.csv and the report's
 * per-class chart agree; the terminal prints the per-class block and the
 * findings a line per class; `llmload report` rebuilds every file
 * byte for byte. */
static void test_sweep_classes(void **state)
{
    char wpath[600];
    two_classes_start(wpath, sizeof wpath, "", ", \"slo\": {\"e2e_ms\": 10000}");
    const char *args[] = {"--rates", "4,8", "--step-duration", "3s", "--warmup", "0.5s",
                          "--no-recovery", "--no-metrics", "--slo", "ttft=1s", "--arrival",
                          "constant", "--workload", wpath, NULL};
    struct swept s;
    json_t *sum = sweep_expect(&s, args, 60, 0, 2, NULL);
    assert_non_null(strstr(s.out, "by class (own SLO, else the sweep's"));
    assert_non_null(strstr(s.out, "class short: SLO capacity"));
    assert_non_null(strstr(s.out, "class long: SLO capacity"));

    json_t *steps = json_object_get(sum, "steps");
    double xs[2][2], ys[2][2];
    for (size_t i = 0; i < 2; i++) {
        json_t *st = json_array_get(steps, i);
        json_t *cl = json_object_get(st, "classes");
        assert_int_equal(json_array_size(cl), 2);
        json_t *sh = json_array_get(cl, 0), *lo = json_array_get(cl, 1);
        assert_string_equal(harness_sval(sh, "name"), "short");
        assert_string_equal(harness_sval(lo, "name"), "long");
        assert_string_equal(harness_sval(sh, "slo"), "ttft=1s");
        assert_string_equal(harness_sval(sh, "slo_source"), "sweep");
        assert_string_equal(harness_sval(lo, "slo"), "e2e=10s");
        assert_string_equal(harness_sval(lo, "slo_source"), "class");
        assert_int_equal(harness_ival_req(sh, "scheduled") + harness_ival_req(lo, "scheduled"),
                         harness_ival_req(st, "scheduled"));
        assert_int_equal(harness_ival_req(sh, "ok") + harness_ival_req(lo, "ok"),
                         harness_ival_req(st, "ok"));
        assert_true(harness_ival_req(sh, "scheduled") > 0 && harness_ival_req(lo, "scheduled") > 0);
        double e2e_sh = harness_num(sh, "latency_ns.e2e.p50") / 1e9;
        double e2e_lo = harness_num(lo, "latency_ns.e2e.p50") / 1e9;
        if (e2e_lo - e2e_sh < 0.95 * 56 * 0.020 || e2e_lo - e2e_sh > 56 * 0.030)
            fail_msg("step %zu: E2E p50 long %.3fs - short %.3fs = %.3fs, expected "
                     "56 steps of 20-30 ms", i, e2e_lo, e2e_sh, e2e_lo - e2e_sh);
        for (int k = 0; k < 2; k++) {
            json_t *c = k ? lo : sh;
            xs[k][i] = harness_num(st, "offered_rps");
            ys[k][i] = harness_num(c, "latency_ns.ttft.p99") / 1e6;
        }
    }
    json_t *fc = json_object_get(json_object_get(sum, "findings"), "classes");
    assert_int_equal(json_array_size(fc), 2);
    assert_string_equal(harness_sval(json_array_get(fc, 1), "name"), "long");

    /* The per-class chart plots each class's TTFT p99 at each offered rate. */
    char *html = harness_read_in(s.dir, "report.html");
    check_svg_points(html, "chart-class-ttft", "short", xs[0], ys[0], 2, NULL);
    check_svg_points(html, "chart-class-ttft", "long", xs[1], ys[1], 2, NULL);
    assert_non_null(strstr(html, "<table id=\"classes\">"));
    free(html);

    /* classes.csv: a header and one row per step and class. */
    char *csv = harness_read_in(s.dir, "classes.csv");
    size_t lines = 0;
    for (const char *p = csv; *p; p++)
        lines += *p == '\n';
    assert_int_equal(lines, 1 + 4);
    assert_non_null(strstr(csv, "\n1,0,load,8,long,\"e2e=10s\","));

    /* `llmload report DIR` rebuilds every output byte for byte. */
    static const char *const files[] = {"summary.json", "steps.csv", "classes.csv",
                                        "report.html", NULL};
    char *o = harness_report_rebuilds(s.dir, files);
    assert_non_null(strstr(o, "class long: SLO capacity"));
    free(o);
    free(csv);
    json_decref(sum);
    swept_free(&s);
    harness_tmp_end();
}

/* A duration as ll_fmt_duration prints it ("22.48ms", "17us", "1.20s") in
 * ns, and into *half half a unit of its last printed digit. */
static double parse_duration(const char *t, double *half)
{
    char *end;
    double v = strtod(t, &end);
    const char *dot = strchr(t, '.');
    int decimals = dot && dot < end ? (int)(end - dot - 1) : 0;
    double unit = !strncmp(end, "us", 2) ? 1e3 : !strncmp(end, "ms", 2) ? 1e6 : 1e9;
    if (end == t || (strncmp(end, "us", 2) && strncmp(end, "ms", 2) && *end != 's'))
        fail_msg("not a duration: \"%s\"", t);
    /* half the last printed digit, plus the whole ns the value was
     * rounded to before it was printed: 235.061 ns is 235, which prints
     * as 0.23us (0.235 is a binary hair under it), 5.061 ns off */
    *half = 0.5 * pow(10, -decimals) * unit + 1;
    return v * unit;
}

/* got (as printed with %.3g, or with a half-unit of half) against want. */
static void check_printed(const char *what, double got, double want, double half)
{
    double tol = half > 0 ? half * 1.001 : 0.0051 * fmax(fabs(got), fabs(want)) + 1e-12;
    if (fabs(got - want) > tol)
        fail_msg("%s: printed %.6g, the repeats' figures give %.6g", what, got, want);
}

/* --repeat 2 at two rates: each load step is named "<step> r<run>" in the
 * terminal and report.html (steps.csv keeps its 0-based repeat), and under
 * each rate's second run the terminal prints the mean of the two runs'
 * own figures (summary.json's steps) with the half-width of the 95%
 * Student-t interval, which for two runs is t(0.975, 1) |a - b| / 2;
 * attainment pools the two runs' requests, in their Wilson interval. */
static void test_sweep_repeat_mean(void **state)
{
    harness_small_sim_start(NULL);
    const char *args[] = {"--rates",         "3,6",
                          "--repeat",        "2",
                          "--step-duration", "1s",
                          "--warmup",        "0.3s",
                          "--no-recovery",   "--no-metrics",
                          "--slo",           "ttft=2s",
                          WORKLOAD,          NULL};
    struct swept s;
    json_t *sum = sweep_expect(&s, args, 60, 0, 4, NULL);
    static const char *const labels[] = {"\n  0 r1 ", "\n  1 r2 ", "\n  2 r1 ", "\n  3 r2 "};
    for (size_t i = 0; i < LL_ARRAY_LEN(labels); i++)
        if (!strstr(s.out, labels[i]))
            fail_msg("no row \"%s\" in:\n%s", labels[i] + 3, s.out);
    assert_null(strstr(s.out, "1.1 "));

    json_t *steps = json_object_get(sum, "steps");
    static const double rates[] = {3, 6};
    const double t975_1 = 12.706;
    for (size_t r = 0; r < 2; r++) {
        json_t *a = json_array_get(steps, 2 * r), *b = json_array_get(steps, 2 * r + 1);
        assert_int_equal(harness_ival(a, "repeat"), 0);
        assert_int_equal(harness_ival(b, "repeat"), 1);
        ASSERT_NEAR(harness_num(a, "offered_rps"), rates[r], 1e-9);
        ASSERT_NEAR(harness_num(b, "offered_rps"), rates[r], 1e-9);
        char head[80];
        snprintf(head, sizeof head, "%g req/s, mean of 2 runs +- 95%% CI: ", rates[r]);
        const char *line = strstr(s.out, head);
        if (!line || line < strstr(s.out, labels[2 * r + 1]))
            fail_msg("no \"%s\" line under step %zu r2 in:\n%s", head, 2 * r + 1, s.out);
        double ach, ach_ci, gp, gp_ci, att, att_lo, att_hi;
        unsigned long att_n;
        char tt[32], tt_ci[32], tp[32], tp_ci[32];
        int got = sscanf(line + strlen(head),
                         "achieved %lf +- %lf, goodput %lf +- %lf req/s, attainment %lf%% of %lu "
                         "[%lf%%, %lf%%], TTFT p99 %31[^ ] +- %31[^,], TPOT p99 %31[^ ] +- "
                         "%31[^\n]",
                         &ach, &ach_ci, &gp, &gp_ci, &att, &att_n, &att_lo, &att_hi, tt, tt_ci, tp,
                         tp_ci);
        if (got != 12)
            fail_msg("unparsed mean line (%d fields): %.200s", got, line);
        static const char *const keys[] = {"achieved_rps", "goodput_rps", "latency_ns.ttft.p99",
                                           "latency_ns.tpot.p99"};
        double printed[4][2], half[4][2] = {{0}};
        printed[0][0] = ach, printed[0][1] = ach_ci;
        printed[1][0] = gp, printed[1][1] = gp_ci;
        printed[2][0] = parse_duration(tt, &half[2][0]);
        printed[2][1] = parse_duration(tt_ci, &half[2][1]);
        printed[3][0] = parse_duration(tp, &half[3][0]);
        printed[3][1] = parse_duration(tp_ci, &half[3][1]);
        for (size_t k = 0; k < LL_ARRAY_LEN(keys); k++) {
            double x = harness_num(a, keys[k]), y = harness_num(b, keys[k]);
            char what[80];
            snprintf(what, sizeof what, "%g req/s %s mean", rates[r], keys[k]);
            check_printed(what, printed[k][0], (x + y) / 2, half[k][0]);
            snprintf(what, sizeof what, "%g req/s %s 95%% half-width", rates[r], keys[k]);
            check_printed(what, printed[k][1], t975_1 * fabs(x - y) / 2, half[k][1]);
        }
        /* Attainment is the two runs' requests pooled, inside its Wilson
         * interval, whose wider side is summary.json's half-width. */
        json_t *pt = json_array_get(json_object_get(sum, "points"), r);
        assert_true(att_n >= 2);
        assert_true(att_lo <= att && att <= att_hi);
        check_printed("pooled attainment", att / 100, harness_num(pt, "attainment"), 0.0005);
        check_printed("attainment_ci95", fmax(att - att_lo, att_hi - att) / 100,
                      harness_num(pt, "attainment_ci95"), 0.001);
        /* summary.json's point holds the same means. */
        assert_int_equal(harness_ival(pt, "runs"), 2);
        ASSERT_REL(harness_num(pt, "achieved_rps"),
                   (harness_num(a, "achieved_rps") + harness_num(b, "achieved_rps")) / 2, 1e-9);
        ASSERT_REL(harness_num(pt, "tpot_p99_ms"),
                   (harness_num(a, "latency_ns.tpot.p99") + harness_num(b, "latency_ns.tpot.p99")) /
                       2e6,
                   1e-9);
    }

    char *csv = harness_read_in(s.dir, "steps.csv");
    assert_non_null(strstr(csv, "\n1,1,load,3,"));
    assert_non_null(strstr(csv, "\n2,0,load,6,"));
    free(csv);
    char *html = harness_read_in(s.dir, "report.html");
    assert_non_null(strstr(html, "<td>1 r2</td>"));
    assert_non_null(strstr(html, "<td>2 r1</td>"));
    free(html);
    static const char *const files[] = {"summary.json", "steps.csv", "report.html", NULL};
    char *o = harness_report_rebuilds(s.dir, files);
    assert_non_null(strstr(o, "6 req/s, mean of 2 runs +- 95% CI: "));
    free(o);
    json_decref(sum);
    swept_free(&s);
}

/* The per-class SLOs of a workload file, and no --slo. Every request meets
 * the SLO of its class: "short" ttft=300ms (its TTFT here is tens of ms),
 * "long" e2e=100ms, which none can meet (64 sim steps of at least 20 ms).
 * The whole step's slo_met is recounted here from requests.jsonl; the step
 * has an attainment (slo_met / scheduled) short of 1 (the long requests),
 * and so fails at --attainment 90 (accepted without --slo): the findings
 * judge the SLO capacity by it ("not found", not "no SLO"). The class TTFT chart draws short's own threshold. One step has one number
 * everywhere: the terminal's table, steps.csv and report.html name each
 * step by summary.json's "step" (the recovery step "N rec"). A step that
 * is INVALID or not steady, and only such a step, is a ring on the
 * attainment curve. */
static void test_sweep_class_slos_only(void **state)
{
    char wpath[600];
    two_classes_start(wpath, sizeof wpath, ", \"slo\": {\"ttft_ms\": 300}",
                      ", \"slo\": {\"e2e_ms\": 100}");
    const char *args[] = {
        "--rates",   "4,8",      "--step-duration", "2s",  "--warmup",     "0.5s", "--no-metrics",
        "--arrival", "constant", "--workload",      wpath, "--attainment", "90",   NULL};
    struct swept s;
    sweep_run(&s, args, 90);
    harness_sim_teardown(NULL);
    if (s.status != 0 && s.status != 1)
        fail_msg("sweep exited %d\nstdout:\n%s\nstderr:\n%s", s.status, s.out, s.err);
    json_t *sum = harness_json_load(s.dir, "summary.json");
    json_t *steps = json_object_get(sum, "steps");
    size_t n = json_array_size(steps);
    assert_true(n >= 2);
    if (strstr(s.out, "no SLO") != NULL ||
        strstr(s.out, "SLO capacity: not found: the lowest step 4 req/s already fails: "
                      "attainment ") == NULL ||
        strstr(s.out, "% < 90%") == NULL)
        fail_msg("the findings do not judge against the classes' SLOs:\n%s", s.out);

    /* slo_met, recounted from the records against each class's own SLO. */
    struct harness_recs *recs = harness_requests_load(s.dir);
    for (size_t i = 0; i < n; i++) {
        json_t *st = json_array_get(steps, i);
        int64_t idx = harness_ival_req(st, "step");
        int64_t warm = harness_ival_req(st, "warmup_ns");
        int64_t met = 0, long_n = 0;
        for (size_t j = 0; j < recs->n; j++) {
            json_t *r = recs->items[j];
            if (harness_ival(r, "step") != idx || json_is_true(json_object_get(r, "warmup")) ||
                harness_ival_req(r, "sched_ns") < warm)
                continue;
            long_n += strcmp(harness_sval(r, "class"), "long") == 0;
            if (strcmp(harness_sval(r, "kind"), "ok") != 0)
                continue;
            int64_t sched = harness_ival_req(r, "sched_ns");
            if (strcmp(harness_sval(r, "class"), "short") == 0)
                met += harness_ival_req(r, "first_ns") - sched <= 300000000;
            else
                met += harness_ival_req(r, "end_ns") - sched <= 100000000;
        }
        assert_int_equal(harness_ival_req(st, "slo_met"), met);
        int64_t sched_n = harness_ival_req(st, "scheduled");
        assert_true(sched_n > 0);
        ASSERT_REL(harness_num(st, "attainment"), (double)met / (double)sched_n, 1e-9);
        /* The short requests meet it, the long ones cannot: strictly between. */
        if (!(met > 0 && met < long_n + met && long_n > 0))
            fail_msg("step %zu: %lld met, %lld long requests", i, (long long)met,
                     (long long)long_n);
        assert_true(harness_num(st, "attainment") < 1);
    }
    harness_recs_free(recs);

    /* One number per step: terminal, steps.csv, report.html. */
    char *csv = harness_read_in(s.dir, "steps.csv");
    char *html = harness_read_in(s.dir, "report.html");
    const char *row = strchr(csv, '\n') + 1;
    for (size_t i = 0; i < n; i++) {
        json_t *st = json_array_get(steps, i);
        int64_t idx = harness_ival_req(st, "step");
        double rate = harness_num(st, "offered_rps");
        int rec = strcmp(harness_sval(st, "kind"), "recovery") == 0;
        char id[32], want[96];
        snprintf(id, sizeof id, rec ? "%lld rec" : "%lld", (long long)idx);
        snprintf(want, sizeof want, "\n%6s %8.3g ", id, rate);
        if (strstr(s.out, want) == NULL)
            fail_msg("no terminal row \"%s\" in:\n%s", want + 1, s.out);
        snprintf(want, sizeof want, "%lld,0,%s,", (long long)idx, rec ? "recovery" : "load");
        if (strncmp(row, want, strlen(want)) != 0)
            fail_msg("steps.csv row %zu: \"%.40s\", expected it to start \"%s\"", i, row, want);
        row = strchr(row, '\n') + 1;
        snprintf(want, sizeof want, "<td>%s</td><td>%g</td>", id, rate);
        const char *t = strstr(html, "<table id=\"steps\">");
        assert_non_null(t);
        if (strstr(t, want) == NULL)
            fail_msg("report.html's steps table has no \"%s\"", want);
    }

    /* Rings on the attainment curve: exactly the INVALID or unsteady steps. */
    const char *ch = strstr(html, "id=\"chart-attainment\"");
    assert_non_null(ch);
    const char *che = strstr(ch, "</svg>");
    size_t rings_want = 0, rings = 0;
    for (size_t i = 0; i < n; i++) {
        json_t *st = json_array_get(steps, i);
        if (strcmp(harness_sval(st, "kind"), "recovery") == 0)
            continue;
        int bad = !json_is_true(json_object_get(json_object_get(st, "steady_state"), "steady")) ||
                  strcmp(harness_sval(st, "verdict"), "INVALID") == 0;
        char want[96];
        snprintf(want, sizeof want, "data-series=\"attainment\" data-x=\"%g\"",
                 harness_num(st, "offered_rps"));
        const char *p = strstr(ch, want);
        assert_true(p != NULL && p < che);
        const char *hollow = strstr(p, "data-hollow=\"1\"");
        int ring = hollow != NULL && hollow < strchr(p, '>');
        if (ring != bad)
            fail_msg("step %zu (steady or valid: %d): ring %d", i, !bad, ring);
        rings_want += (size_t)bad;
    }
    for (const char *p = strstr(ch, "data-hollow=\"1\""); p && p < che;
         p = strstr(p + 1, "data-hollow=\"1\""))
        rings++;
    assert_int_equal(rings, rings_want);

    /* The header names the classes' SLOs, not "none". */
    assert_non_null(strstr(html, "<dt>SLO</dt><dd>each class's own (By traffic class)</dd>"));
    /* The class TTFT chart: short's own 300 ms threshold, in its colour. */
    ch = strstr(html, "id=\"chart-class-ttft\"");
    assert_non_null(ch);
    const char *h = strstr(ch, "class=\"hline\" data-key=\"slo-short\" data-y=\"300\"");
    assert_true(h != NULL && h < strstr(ch, "</svg>"));

    free(csv);
    free(html);
    json_decref(sum);
    swept_free(&s);
    harness_tmp_end();
}

/* A step with no request scheduled in its window has no verdict: 0.3
 * req/s with constant arrivals sends its first request at 0 s (in the
 * 0.3 s warm-up) and its next at 3.3 s, after the 1 s window, so the step
 * is empty by construction. With an SLO its attainment reads 0%; without
 * one nothing fails. Either way the live line (no --quiet) and the step
 * table must say "empty", not "ok", "fails" or "(attainment 0.0% < ...)",
 * and the report's attainment chart must draw it as a ring. */
static void test_empty_step_lines(void **state)
{
    harness_small_sim_start(NULL);
    char url[160];
    snprintf(url, sizeof url, "%s/v1", harness_cur_sim.url);
    harness_tmp_begin();
    for (int slo = 0; slo < 2; slo++) {
        char dir[600];
        harness_tmp_path(dir, sizeof dir, slo ? "slo" : "noslo");
        const char *argv[] = {"sweep",
                              "--url",
                              url,
                              "--out",
                              dir,
                              "--rates",
                              "0.3",
                              "--step-duration",
                              "1s",
                              "--warmup",
                              "0.3s",
                              "--arrival",
                              "constant",
                              "--no-recovery",
                              "--no-metrics",
                              WORKLOAD,
                              slo ? "--slo" : NULL,
                              "ttft=5s",
                              NULL};
        char *err = NULL;
        /* No step judged: exit 1, saying why (not "INVALID", not 0 as if
         * it had measured something). */
        char *out = harness_run_expect(argv, 60, 1, &err);
        HARNESS_HAS(err, "no step could be judged: no request was scheduled in any step's window");
        HARNESS_LACKS(err, "INVALID");
        json_t *sum = harness_json_load(dir, "summary.json");
        assert_string_equal(
            harness_sval(json_array_get(json_object_get(sum, "steps"), 0), "verdict"), "empty");
        json_decref(sum);
        const char *live = strstr(err, "step 0: completed");
        if (!live)
            fail_msg("no live line for step 0:\n%s", err);
        const char *eol = strchr(live, '\n');
        size_t n = eol ? (size_t)(eol - live) : strlen(live);
        printf("%s: %.*s\n", slo ? "slo" : "no slo", (int)n, live);
        if (n < 7 || strncmp(live + n - 7, ", empty", 7) != 0)
            fail_msg("the live line judges an empty step: %.*s", (int)n, live);
        const char *row = strstr(out, "\n     0 ");
        if (!row || !strstr(row, "  empty\n") || strstr(out, "(attainment"))
            fail_msg("the step table judges an empty step:\n%s", out);
        /* The report draws it as a ring (no verdict), not a solid point,
         * and its legend says why; it has no attainment (null: nothing
         * judged) to draw, where it read 0%. */
        if (slo) {
            char *html = harness_read_in(dir, "report.html");
            const char *ch = strstr(html, "id=\"chart-throughput\"");
            assert_non_null(ch);
            const char *p = strstr(ch, "data-series=\"goodput\" data-x=\"0.3\"");
            assert_non_null(p);
            const char *ring = strstr(p, "data-hollow=\"1\"");
            if (!ring || ring > strchr(p, '>'))
                fail_msg("the empty step is a solid point: %.200s", p);
            assert_null(strstr(html, "data-series=\"attainment\" data-x=\"0.3\""));
            assert_non_null(strstr(html, "ring: INVALID, empty or not steady, no verdict"));
            free(html);
        }
        free(out);
        free(err);
    }
    harness_sim_teardown(NULL);
    harness_tmp_end();
}

/* A bare fraction given to a percentage flag was taken as that many
 * percent (--attainment 0.99 judged steps at 0.99%): refused, naming the
 * percentage it most likely meant, before anything is sent (nothing
 * listens on port 9). */
static void test_percent_fraction_refused(void **state)
{
    (void)state;
#define NOWHERE "--url", "http://127.0.0.1:9/v1"
    HARNESS_EXPECT_USAGES(
        {{"sweep", NOWHERE, "--rates", "2", "--slo", "ttft=1s", "--attainment", "0.99"},
         "--attainment: 0.99: a percentage; did you mean 99%?"},
        {{"sweep", NOWHERE, "--rates", "2", "--headroom", "0.8"},
         "--headroom: 0.8: a percentage; did you mean 80%?"},
        {{"sweep", NOWHERE, "--rates", "2", "--max-error-rate", "0.1"},
         "--max-error-rate: 0.1: a percentage; did you mean 10%?"},
        {{"sweep", NOWHERE, "--rates", "2", "--lateness-tolerance", "0.02"},
         "--lateness-tolerance: 0.02: a percentage; did you mean 2%?"},
        {{"run", NOWHERE, "--rate", "2", "--lateness-tolerance", "0.02"},
         "--lateness-tolerance: 0.02: a percentage; did you mean 2%?"});
#undef NOWHERE
}

static void test_flags_and_help(void **state)
{
    HARNESS_EXPECT_USAGES({{"sweep", "--rates", "2,x"}, "--rates"},
                          {{"sweep", "--rates", "2", "--attainment", "99"}, "--attainment"},
                          {{"sweep", "--rates", "2", "--step-duration", "fast"}, "--step-duration"},
                          {{"sweep", "--bogus"}, "--bogus"},
                          {{"demo", "--slo", "ttft=abc"}, "--slo"},
                          {{"demo", "--api", "grpc"}, "--api"},
                          /* an empty list read as auto and probed */
                          {{"sweep", "--rates", ""}, "--rates: expected auto or a list"},
                          {{"sweep", "--rates", "2,4,"}, "--rates: trailing comma in \"2,4,\""},
                          {{"sweep", "--rates", "2,,4"}, "--rates: expected auto or a list"},
                          /* taken as --burstiness, and that flag blamed for run's syntax */
                          {{"sweep", "--rates", "2", "--burst", "at=2s,count=20"},
                           "--burst: applies to llmload run; a sweep's steps take no bursts "
                           "(--burstiness K shapes each step's arrivals)"},
                          /* refused before the sim starts (it said so in 4 lines) */
                          {{"demo", "--out", "/dev/null"}, "--out: results directory"},
                          /* printed the general help, exit 0 */
                          {{"help", "sweeps"}, "help: unknown command \"sweeps\""});
    /* report of a directory that is not a sweep's: one line says which
     * of these it is (it said "unable to open DIR/run.json: ..." with the
     * path twice); a run's without its summary.json has no page to draw */
    harness_tmp_begin();
    char run[600], bare[600], file[600], l1[800], l2[800], l3[800];
    harness_tmp_results_stub(run, sizeof run, "run", "run");
    harness_tmp_path(bare, sizeof bare, "run/sub");
    harness_tmp_path(file, sizeof file, "run/run.json");
    const char *mk[] = {"mkdir", bare, NULL};
    assert_int_equal(harness_run_quiet(mk, 10), 0);
    snprintf(l1, sizeof l1,
             "%s: a run's results without summary.json (the run ended before its "
             "summary): nothing to draw its report.html from",
             run);
    snprintf(l2, sizeof l2,
             "%s: no run.json: not a results directory (llmload sweep --out DIR "
             "writes one)",
             bare);
    snprintf(l3, sizeof l3, "%s: not a directory", file);
    HARNESS_EXPECT_USAGES(
        {{"report", "/nonexistent/llmload-dir"}, "/nonexistent/llmload-dir: no such directory"},
        {{"report", run}, l1}, {{"report", bare}, l2}, {{"report", file}, l3});
    harness_tmp_end();
    const char *h1[] = {"sweep", "--help", NULL};
    char *o = harness_run_expect(h1, 20, 0, NULL);
    assert_non_null(strstr(o, "(default 10s)"));
    assert_non_null(strstr(o, "--expect-capacity"));
    /* run's flags a sweep takes as they are: the help names each (it once
     * left these out while the parser took them) */
    static const char *const inherited[] = {"--max-inflight", "--lengths",    "--dataset",
                                            "--images",       "--image-size", "--image-sizes",
                                            "--image-format"};
    for (size_t i = 0; i < sizeof inherited / sizeof inherited[0]; i++)
        if (!strstr(o, inherited[i]))
            fail_msg("sweep --help does not name %s", inherited[i]);
    free(o);
    const char *h2[] = {"demo", "--help", NULL};
    o = harness_run_expect(h2, 20, 0, NULL);
    assert_non_null(strstr(o, "ttft=500ms,tpot=50ms"));
    free(o);
}

HARNESS_MAIN(cmocka_unit_test(test_flags_and_help), cmocka_unit_test(test_percent_fraction_refused),
             cmocka_unit_test(test_sweep_anthropic), cmocka_unit_test(test_sweep_responses),
             cmocka_unit_test_teardown(test_sweep_capacity_knee, harness_sim_teardown),
             cmocka_unit_test_teardown(test_stop_error_rate, harness_sim_teardown),
             cmocka_unit_test_teardown(test_cancellations_not_errors, harness_sim_teardown),
             cmocka_unit_test_teardown(test_probe_errors, harness_sim_teardown),
             cmocka_unit_test_teardown(test_probe_all_cancelled, harness_sim_teardown),
             cmocka_unit_test_teardown(test_stop_ttft_limit, harness_sim_teardown),
             cmocka_unit_test_teardown(test_stop_goodput_falling, harness_sim_teardown),
             cmocka_unit_test_teardown(test_stop_goodput_noise, harness_sim_teardown),
             cmocka_unit_test_teardown(test_recovery_after_stall, harness_sim_teardown),
             cmocka_unit_test_teardown(test_sweep_classes, harness_sim_teardown),
             cmocka_unit_test_teardown(test_sweep_repeat_mean, harness_sim_teardown),
             cmocka_unit_test_teardown(test_sweep_class_slos_only, harness_sim_teardown),
             cmocka_unit_test_teardown(test_empty_step_lines, harness_sim_teardown))
