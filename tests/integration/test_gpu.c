/* Integration tests of GPU telemetry and energy: `llmload run
 * --gpu-metrics URL`, `llmload sweep` and `llmload replay` with it, against
 * `llmload sim --gpu-metrics`, whose DCGM
 * series come from the power model of docs/sim.md.
 *
 * The sim is small and exact (4 sequences, 10 ms steps whatever the
 * work); each request has an 8-token prompt (under one 16-token block, so
 * the prefix cache never serves it) and 20 output tokens (ignore_eos).
 * Under the model a request costs 8 prefill tokens and 19 decoding
 * sequence-steps: 8 x 0.005 + 19 x 0.25 = 4.79 J, 0.2395 J per output
 * token, however the requests were batched or timed. */
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "harness.h"
#include "test.h"

#define SIM_SMALL                                                                                  \
    "--max-num-seqs", "4", "--step-base", "10ms", "--step-per-prefill-token", "0",                 \
        "--step-per-seq", "0", "--gpu-metrics", "--gpus", "2"
#define WORK "--prompt-tokens", "8", "--output-tokens", "20", "--ignore-eos"
#define REQ_J (8 * 0.005 + 19 * 0.25)
/* The runs' load: 10 requests at 5/s, scraped every 200 ms; GPU_LOAD_ARGS
 * strings. */
#define GPU_LOAD_ARGS 8
#define GPU_LOAD                                                                                   \
    "--rate", "5", "--arrival", "constant", "--requests", "10", "--metrics-interval", "200ms"

/* Sum the values of every sample of metric name (exact name, any labels)
 * in the sim's /metrics page now. Fails the test when there is none. */
static double sim_metric_sum(const char *name)
{
    int n = 0;
    double sum = harness_sim_metric_sum(&harness_cur_sim, name, &n);
    if (n == 0)
        fail_msg("no %s in the sim's /metrics", name);
    return sum;
}

/* Start harness_cur_sim as SIM_SMALL with no idle power, so the energy
 * is the work's alone; url gets its /metrics page (its GPUs' too). */
static void sim_no_idle_start(char *url, size_t len)
{
    const char *sargs[] = {SIM_SMALL, "--gpu-idle-watts", "0", NULL};
    harness_cur_sim_start(sargs);
    snprintf(url, len, "%s/metrics", harness_cur_sim.url);
}

/* 10 requests at 5/s, scraped every 200 ms. Returns summary.json (caller
 * decrefs); *dir the results dir (harness_results_free). */
static json_t *gpu_run(const char *gpu_url, char **dir, char **err)
{
    char url[200];
    snprintf(url, sizeof url, "%s/metrics", harness_cur_sim.url);
    const char *args[] = {
        GPU_LOAD, "--gpu-metrics", gpu_url ? gpu_url : url, "--cost-per-hour", "3.6", WORK, NULL};
    *dir = harness_run_client(NULL, args, HARNESS_RC_OK_OR_INVALID, err);
    return harness_json_load(*dir, "summary.json");
}

/* With no idle power the energy is the work's alone: the client's joules
 * per output token must equal the sim's own energy counter over its
 * generated tokens (read from the sim after the run), and the model's
 * 0.2395, within 2%. */
static void test_energy_per_token_matches_sim(void **state)
{
    char url[200];
    sim_no_idle_start(url, sizeof url);
    char *dir;
    json_t *s = gpu_run(url, &dir, NULL);
    double sim_j = sim_metric_sum("DCGM_FI_DEV_TOTAL_ENERGY_CONSUMPTION") / 1000.0;
    double sim_tokens = sim_metric_sum("vllm:generation_tokens_total");
    ASSERT_NEAR(sim_tokens, 200, 0);
    ASSERT_REL(sim_j, 10 * REQ_J, 0.001); /* the sim keeps its own model */

    assert_string_equal(harness_sval(json_object_get(s, "energy"), "source"), "energy_counter");
    ASSERT_NEAR(harness_num(s, "energy.gpus"), 2, 0);
    ASSERT_NEAR(harness_num(s, "energy.failed"), 0, 0);
    ASSERT_NEAR(harness_num(s, "energy.output_tokens"), 200, 0);
    ASSERT_REL(harness_num(s, "energy.j_per_output_token"), sim_j / sim_tokens, 0.02);
    ASSERT_REL(harness_num(s, "energy.j_per_output_token"), REQ_J / 20, 0.02);
    ASSERT_REL(harness_num(s, "energy.j_per_request"), REQ_J, 0.02);
    ASSERT_REL(harness_num(s, "energy.output_tokens_per_j"), 20 / REQ_J, 0.02);
    /* A step of 1..4 sequences: 25 to 100 W above idle (0 here). */
    ASSERT_IN_RANGE(harness_num(s, "energy.max_power_w"), 25 - 0.01, 100 + 0.01);

    /* server_metrics.jsonl: the engine's lines and the GPU's, told apart. */
    char path[700];
    snprintf(path, sizeof path, "%s/server_metrics.jsonl", dir);
    json_t *all = harness_jsonl_load(path);
    size_t gpu = 0, server = 0;
    for (size_t i = 0; i < json_array_size(all); i++) {
        json_t *l = json_array_get(all, i);
        const char *src = json_string_value(json_object_get(l, "source"));
        if (src && strcmp(src, "gpu") == 0) {
            gpu++;
            assert_string_equal(json_string_value(json_object_get(l, "engine")), "dcgm");
            assert_int_equal(json_integer_value(json_object_get(l, "gpus")), 2);
            assert_true(json_is_number(json_object_get(l, "energy_j_total")));
            assert_null(json_object_get(l, "waiting"));
        } else {
            server++;
            assert_null(src);
            assert_null(json_object_get(l, "power_w"));
        }
    }
    assert_true(gpu >= 8); /* >= 2 s at 200 ms, with the probe and the last */
    assert_true(server >= 8);
    json_decref(all);
    json_decref(s);
    harness_results_free(dir);
}

/* The energy is the whole run's, so it is divided by every token of the
 * run, the warm-up's too: with --warmup 1s (half of the 10 requests) the
 * joules per output token are still the model's 0.2395 and the tokens all
 * 200 (it read 100, and twice the joules per token, before). */
static void test_energy_counts_warmup(void **state)
{
    char url[200];
    sim_no_idle_start(url, sizeof url);
    const char *args[] = {GPU_LOAD, "--warmup", "1s", "--gpu-metrics", url, WORK, NULL};
    char *dir = harness_run_client(NULL, args, HARNESS_RC_OK_OR_INVALID, NULL);
    json_t *s = harness_json_load(dir, "summary.json");
    assert_true(harness_num(s, "requests.ok") < 10); /* the premise: a warm-up left out */
    ASSERT_NEAR(harness_num(s, "energy.output_tokens"), 200, 0);
    ASSERT_REL(harness_num(s, "energy.j_per_output_token"), REQ_J / 20, 0.02);
    ASSERT_REL(harness_num(s, "energy.j_per_request"), REQ_J, 0.02);
    json_decref(s);
    harness_results_free(dir);
}

/* With idle power the counter's delta covers the span between the scrapes
 * around the run: 2 x 70 W over that span, plus the work. The span is the
 * client's, the watts the model's; the counter is read at the scrape, so
 * the two agree to well within 2%. */
static void test_idle_power_over_span(void **state)
{
    const char *sargs[] = {SIM_SMALL, NULL};
    harness_cur_sim_start(sargs);
    char *dir;
    json_t *s = gpu_run(NULL, &dir, NULL);
    double span = harness_num(s, "energy.span_s");
    ASSERT_IN_RANGE(span, 1.8, 30);
    ASSERT_REL(harness_num(s, "energy.energy_j"), 2 * 70 * span + 10 * REQ_J, 0.02);
    ASSERT_REL(harness_num(s, "energy.mean_power_w"), harness_num(s, "energy.energy_j") / span,
               1e-9);
    /* 3.6 per hour is 0.001 per second: the run's window over 200 tokens. */
    double cost = harness_num(s, "energy.cost_per_m_output_tokens");
    ASSERT_IN_RANGE(cost, 0.001 * 1.8 / 200 * 1e6, 0.001 * 30 / 200 * 1e6);
    json_decref(s);
    harness_results_free(dir);
}

/* A GPU URL that refuses: a warning and counted gaps, the run itself
 * fine, and no energy figure (never a zero). */
static void test_dead_gpu_url_is_a_gap(void **state)
{
    const char *sargs[] = {SIM_SMALL, NULL};
    harness_cur_sim_start(sargs);
    int port = harness_free_port();
    char url[100];
    snprintf(url, sizeof url, "http://127.0.0.1:%d/metrics", port);
    char *dir, *err = NULL;
    json_t *s = gpu_run(url, &dir, &err);
    assert_non_null(strstr(err, "warning: scraping"));
    assert_non_null(strstr(err, "; GPU metrics will have gaps (counted)"));
    assert_false(json_is_true(json_object_get(json_object_get(s, "energy"), "present")));
    double scrapes = harness_num(s, "energy.scrapes");
    assert_true(scrapes >= 3);
    ASSERT_NEAR(harness_num(s, "energy.failed"), scrapes, 0);
    ASSERT_NEAR(harness_num(s, "requests.ok"), 10, 0);
    free(err);
    json_decref(s);
    harness_results_free(dir);
}

/* A page without DCGM series (the engine's own, say) is a gap too. */
static void test_not_dcgm_is_a_gap(void **state)
{
    const char *sargs[] = {"--max-num-seqs", "4", "--step-base", "10ms", NULL};
    harness_cur_sim_start(sargs);
    char *dir, *err = NULL;
    json_t *s = gpu_run(NULL, &dir, &err);
    assert_non_null(strstr(err, "no DCGM_FI_DEV_POWER_USAGE"));
    assert_false(json_is_true(json_object_get(json_object_get(s, "energy"), "present")));
    free(err);
    json_decref(s);
    harness_results_free(dir);
}

/* Two exporters (here the same page twice: two machines' worth of GPUs
 * that each drew the run's energy) sum: twice the joules per token, four
 * GPUs; and with one of them dead the sum would be short, so there is no
 * figure, and the summary says one exporter was missing. */
static void test_two_exporters_sum(void **state)
{
    char url[200], dead[100];
    sim_no_idle_start(url, sizeof url);
    snprintf(dead, sizeof dead, "http://127.0.0.1:%d/metrics", harness_free_port());
    const char *args[] = {GPU_LOAD, "--gpu-metrics", url, "--gpu-metrics", url, WORK, NULL};
    char *dir = harness_run_client(NULL, args, HARNESS_RC_OK_OR_INVALID, NULL);
    json_t *s = harness_json_load(dir, "summary.json");
    ASSERT_NEAR(harness_num(s, "energy.gpus"), 4, 0);
    ASSERT_REL(harness_num(s, "energy.j_per_output_token"), 2 * REQ_J / 20, 0.02);
    assert_int_equal(json_array_size(json_object_get(json_object_get(s, "energy"), "urls")), 2);
    json_decref(s);
    harness_results_free(dir);

    assert_string_equal(args[GPU_LOAD_ARGS + 2], "--gpu-metrics");
    args[GPU_LOAD_ARGS + 3] = dead; /* the second --gpu-metrics's URL */
    char *err = NULL;
    dir = harness_run_client(NULL, args, HARNESS_RC_OK_OR_INVALID, &err);
    s = harness_json_load(dir, "summary.json");
    assert_false(json_is_true(json_object_get(json_object_get(s, "energy"), "present")));
    ASSERT_NEAR(harness_num(s, "energy.missing"), 1, 0);
    assert_non_null(strstr(err, dead));
    free(err);
    json_decref(s);
    harness_results_free(dir);
}

/* Count the occurrences of needle in hay[0, end) (end NULL: the whole). */
static size_t count_in(const char *hay, const char *end, const char *needle)
{
    size_t n = 0, len = strlen(needle);
    for (const char *p = strstr(hay, needle); p && (!end || p < end); p = strstr(p + len, needle))
        n++;
    return n;
}

/* A sweep of three rates under the sim's capacity (4 sequences of 200 ms:
 * 20 req/s) with no idle power: each step's joules per output token,
 * taken over that step's own window, is the model's 0.2395 within 2%
 * whatever the rate (the per-token model has nothing else), in
 * summary.json and steps.csv; report.html draws the energy curve with a
 * point per step and the power and utilisation over time; `llmload
 * report` rebuilds all three from steps.jsonl. */
static void test_sweep_energy_per_step(void **state)
{
    char url[200];
    sim_no_idle_start(url, sizeof url);
    const char *args[] = {"--rates",
                          "4,8,12",
                          "--step-duration",
                          "3s",
                          "--warmup",
                          "500ms",
                          "--no-recovery",
                          "--arrival",
                          "constant",
                          "--metrics-interval",
                          "200ms",
                          "--gpu-metrics",
                          url,
                          WORK,
                          NULL};
    int status = -1;
    char *out = NULL, *err = NULL;
    char *dir = harness_run_against_sim("sweep", NULL, args, 120, &status, &out, &err);
    if (status != 0 && status != 1)
        fail_msg("sweep exited %d\nstdout: %s\nstderr: %s", status, out, err);

    /* The terminal: a line per step under the energy heading. */
    const char *tab = strstr(out, "GPU energy per step window");
    assert_non_null(tab);
    assert_int_equal(count_in(tab, NULL, "energy_counter"), 3);
    json_t *s = harness_json_load(dir, "summary.json");
    json_t *steps = json_object_get(s, "steps");
    assert_int_equal(json_array_size(steps), 3);
    for (size_t i = 0; i < 3; i++) {
        json_t *e = json_object_get(json_array_get(steps, i), "energy");
        assert_non_null(e);
        assert_string_equal(harness_sval(e, "source"), "energy_counter");
        ASSERT_NEAR(harness_num(e, "gpus"), 2, 0);
        ASSERT_NEAR(harness_num(e, "missing"), 0, 0);
        /* the span lies inside the 3 s window (the hold; the warm-up is before it) */
        double span_s = (harness_num(e, "span_to_ns") - harness_num(e, "span_from_ns")) / 1e9;
        ASSERT_IN_RANGE(span_s, 0.5, 3.0 + 1e-9);
        ASSERT_REL(harness_num(e, "j_per_output_token"), REQ_J / 20, 0.02);
        ASSERT_REL(harness_num(e, "output_tokens_per_j"), 20 / REQ_J, 0.02);
        ASSERT_REL(harness_num(e, "mean_power_w"), harness_num(e, "energy_j") / span_s, 1e-6);
    }
    json_decref(s);

    /* steps.csv: the energy columns at the end of the header, and each
     * row's J per output token in its place (the 9th of the 11 added). */
    char *csv = harness_read_in(dir, "steps.csv");
    HARNESS_HAS(csv, ",energy_source,energy_j,", ",j_per_request,output_tokens_per_j\n");
    size_t rows = 0;
    for (char *line = strchr(csv, '\n') + 1; *line; line = strchr(line, '\n') + 1, rows++) {
        char *nl = strchr(line, '\n'), *f = nl;
        for (int k = 0; k < 3; k++)
            while (*--f != ',')
                ;
        ASSERT_REL(strtod(f + 1, NULL), REQ_J / 20, 0.02);
    }
    assert_int_equal(rows, 3);
    free(csv);

    /* report.html: the energy chart, one point per step. */
    char *html = harness_read_in(dir, "report.html");
    const char *chart = strstr(html, "id=\"chart-energy\"");
    assert_non_null(chart);
    assert_non_null(strstr(html, "Energy per output token against offered load"));
    const char *end = strstr(chart, "</svg>");
    assert_non_null(end);
    assert_int_equal(count_in(chart, end, "class=\"pt\" data-series=\"j_per_output_token\""), 3);
    /* The power and utilisation over time: a point per GPU scrape (fewer
     * than the chart's 600), each the scrape's own value in order. Under
     * the model (no idle power, 10 ms steps) the power is 0 between steps
     * and, while one runs, 25 W per decoding sequence plus 4 W per
     * 8-token prefill: at most 4 x (25 + 4) = 116 W; the utilisation is 0
     * or 100. The scrape before the first step finds the engine idle. */
    double gx[600], gp[600], ux[600], uy[600], jp[600];
    size_t n_pw = harness_svg_points(html, "chart-gpu-power", "gpu_power0", gx, gp, 600);
    size_t n_ut = harness_svg_points(html, "chart-gpu-util", "gpu_util0", ux, uy, 600);
    char path[700];
    snprintf(path, sizeof path, "%s/server_metrics.jsonl", dir);
    /* The ok GPU scrapes only: a failed one (a loaded box) is not drawn. */
    struct harness_recs *sm = harness_recs_load(path);
    size_t n_lines = 0;
    for (size_t i = 0; i < sm->n; i++) {
        json_t *o = sm->items[i];
        const char *src = json_string_value(json_object_get(o, "source"));
        if (!src || strcmp(src, "gpu") != 0 || !json_is_true(json_object_get(o, "ok")))
            continue;
        if (n_lines < 600)
            jp[n_lines] = harness_num(o, "power_w");
        n_lines++;
    }
    harness_recs_free(sm);
    assert_true(n_lines >= 40 && n_lines < 600);
    assert_int_equal(n_pw, n_lines);
    assert_int_equal(n_ut, n_lines);
    double max_w = 0;
    for (size_t i = 0; i < n_pw; i++) {
        ASSERT_NEAR(gp[i], jp[i], 1e-6);
        ASSERT_IN_RANGE(gp[i], 0, 116 + 1e-6);
        max_w = gp[i] > max_w ? gp[i] : max_w;
        assert_true(uy[i] == 0 || uy[i] == 100);
        if (i > 0)
            assert_true(gx[i] >= gx[i - 1]);
    }
    ASSERT_NEAR(gp[0], 0, 1e-9);
    assert_true(max_w >= 25);
    free(html);

    const char *files[] = {"summary.json", "steps.csv", "report.html", NULL};
    free(harness_report_rebuilds(dir, files));
    free(out);
    free(err);
    harness_results_free(dir);
}

/* `llmload replay --gpu-metrics`: the run's energy figures, as `run`
 * gives them, for a trace of 10 requests of the same work 200 ms apart;
 * with no idle power, the model's 0.2395 J per output token within 2%.
 * Then its two shards, one after the other: shard 0's energy is its 5
 * requests' (2%), with no per-token figure; shard 1 has none. */
static void test_replay_energy(void **state)
{
    char url[200], trace[600], line[120];
    sim_no_idle_start(url, sizeof url);
    harness_tmp_begin();
    harness_tmp_path(trace, sizeof trace, "trace.jsonl");
    char text[1300] = "";
    for (int i = 0; i < 10; i++) {
        snprintf(line, sizeof line, "{\"t\":%.1f,\"prompt_tokens\":8,\"output_tokens\":20}\n",
                 0.2 * i);
        strncat(text, line, sizeof text - strlen(text) - 1);
    }
    harness_write_file(trace, text);
    const char *args[] = {trace, "--gpu-metrics", url, "--ignore-eos", NULL};
    int status = -1;
    char *out = NULL, *err = NULL;
    char *dir = harness_run_against_sim("replay", NULL, args, 60, &status, &out, &err);
    if (status != 0 && status != 1)
        fail_msg("replay exited %d\nstdout: %s\nstderr: %s", status, out, err);
    assert_non_null(strstr(out, "energy"));
    json_t *s = harness_json_load(dir, "summary.json");
    assert_string_equal(harness_sval(json_object_get(s, "energy"), "source"), "energy_counter");
    ASSERT_NEAR(harness_num(s, "energy.gpus"), 2, 0);
    ASSERT_NEAR(harness_num(s, "energy.output_tokens"), 200, 0);
    ASSERT_REL(harness_num(s, "energy.j_per_output_token"), REQ_J / 20, 0.02);
    ASSERT_REL(harness_num(s, "energy.j_per_request"), REQ_J, 0.02);
    json_decref(s);
    free(out);
    free(err);
    harness_results_free(dir);

    /* --shard, as for run: shard 0 alone reads the GPUs and keeps the
     * energy of its span (its 5 requests' work alone, as nothing else
     * loads the sim: the sim's counter over it, and the model's), its
     * per-token figures left to `llmload merge` (its tokens are a share
     * of the run's); shard 1 reads none. */
    for (int k = 0; k < 2; k++) {
        double before_j = sim_metric_sum("DCGM_FI_DEV_TOTAL_ENERGY_CONSUMPTION") / 1000.0;
        const char *sharded[] = {trace,
                                 "--shard",
                                 k ? "1/2" : "0/2",
                                 "--prompt-salt",
                                 "5",
                                 "--gpu-metrics",
                                 url,
                                 "--ignore-eos",
                                 NULL};
        dir = harness_run_against_sim("replay", NULL, sharded, 60, &status, &out, &err);
        if (status != 0 && status != 1)
            fail_msg("replay --shard %d/2 exited %d\nstdout: %s\nstderr: %s", k, status, out, err);
        double work_j = sim_metric_sum("DCGM_FI_DEV_TOTAL_ENERGY_CONSUMPTION") / 1000.0 - before_j;
        s = harness_json_load(dir, "summary.json");
        json_t *e = json_object_get(s, "energy");
        ASSERT_NEAR(harness_num(s, "requests.ok"), 5, 0);
        if (k == 0) {
            ASSERT_REL(harness_num(e, "energy_j"), work_j, 0.02);
            ASSERT_REL(harness_num(e, "energy_j"), 5 * REQ_J, 0.02);
            assert_true(harness_is_null(e, "j_per_output_token"));
            assert_true(harness_is_null(e, "j_per_request"));
        } else {
            assert_null(e);
        }
        json_decref(s);
        free(out);
        free(err);
        harness_results_free(dir);
    }
    harness_tmp_end();
}

static void test_bad_flags(void **state)
{
    HARNESS_EXPECT_USAGES(
        {{"run", "--url", "http://127.0.0.1:1/v1", "--rate", "1", "--cost-per-hour", "2"},
         "--cost-per-hour"},
        {{"run", "--url", "http://127.0.0.1:1/v1", "--rate", "1", "--gpu-metrics",
          "http://127.0.0.1:1/m", "--cost-per-hour", "cheap"},
         "--cost-per-hour"},
        {{"run", "--url", "http://127.0.0.1:1/v1", "--rate", "1", "--gpu-metrics",
          "127.0.0.1:9400"},
         "--gpu-metrics"},
        {{"sweep", "--url", "http://127.0.0.1:1/v1", "--rates", "1", "--gpu-metrics", "9400"},
         "--gpu-metrics: expected an http:// or https:// URL"},
        {{"replay", "trace.jsonl", "--url", "http://127.0.0.1:1/v1", "--gpu-metrics", "x"},
         "--gpu-metrics: expected an http:// or https:// URL"},
        {{"sim", "--gpus", "2"}, "--gpus: goes with --gpu-metrics"},
        {{"sim", "--gpu-metrics", "--gpus", "0"}, "--gpus"},
        {{"sim", "--gpu-metrics", "--gpu-idle-watts", "-5"}, "--gpu-idle-watts"});
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_teardown(test_energy_per_token_matches_sim, harness_sim_teardown),
        cmocka_unit_test_teardown(test_energy_counts_warmup, harness_sim_teardown),
        cmocka_unit_test_teardown(test_idle_power_over_span, harness_sim_teardown),
        cmocka_unit_test_teardown(test_dead_gpu_url_is_a_gap, harness_sim_teardown),
        cmocka_unit_test_teardown(test_not_dcgm_is_a_gap, harness_sim_teardown),
        cmocka_unit_test_teardown(test_two_exporters_sum, harness_sim_teardown),
        cmocka_unit_test_teardown(test_sweep_energy_per_step, harness_sim_teardown),
        cmocka_unit_test_teardown(test_replay_energy, harness_sim_teardown),
        cmocka_unit_test(test_bad_flags),
    };
    return harness_run_tests(tests, sizeof tests / sizeof tests[0]);
}
