/* test_run_report.c: a single run's report.html (src/report/report_run.c).
 *
 * A short run against `llmload sim` on 127.0.0.1 must leave report.html
 * beside summary.json; the page's figures are summary.json's (the ok
 * count, the TTFT p99 cell and card); xmllint finds it well-formed where
 * xmllint is installed; and `llmload report DIR` rebuilds it byte for
 * byte, keeping summary.json as the run wrote it. A replay writes one
 * too. Each ends its stdout "results: DIR", then "report: DIR/report.html". */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>
#include <jansson.h>

#include "harness.h"

#define SIM_FAST "--step-base", "10ms", "--step-per-prefill-token", "0", "--step-per-seq", "0"
#define REQ_8_10 "--prompt-tokens", "8", "--output-tokens", "10", "--ignore-eos"

/* The data-v of the first cell after marker in doc (a row's id); fails
 * the test when there is none. */
static long long cell_after(const char *doc, const char *marker, int nth)
{
    const char *p = strstr(doc, marker);
    if (p == NULL)
        fail_msg("report.html has no %s", marker);
    for (int i = 0; i <= nth; i++) {
        p = strstr(p, "data-v=\"");
        if (p == NULL)
            fail_msg("report.html: no cell %d after %s", nth, marker);
        p += 8;
    }
    return strtoll(p, NULL, 10);
}

/* The card's large value after its key, as text ("16.1"). */
static void card_value(const char *doc, const char *key, char *out, size_t len)
{
    char k[96];
    snprintf(k, sizeof k, "<div class=\"k\">%s</div><div class=\"v\">", key);
    const char *p = strstr(doc, k);
    if (p == NULL)
        fail_msg("report.html has no card %s", key);
    p += strlen(k);
    size_t n = strcspn(p, "<");
    snprintf(out, len, "%.*s", (int)(n < len - 1 ? n : len - 1), p);
}

/* xmllint --noout on path, when xmllint is installed. */
static void xmllint_ok(const char *path)
{
    if (access("/usr/bin/xmllint", X_OK) != 0)
        return;
    const char *argv[] = {"/usr/bin/xmllint", "--noout", path, NULL};
    assert_int_equal(harness_run_quiet(argv, 20), 0);
}

/* The Server section quotes summary.json's server block: its engine, the
 * server's generation tokens beside the client's received, named as the
 * terminal names them. Nothing to check when the run scraped nothing. */
static void check_server(const char *doc, json_t *srv)
{
    const char *engine = json_string_value(json_object_get(srv, "engine"));
    if (engine == NULL)
        return;
    assert_non_null(strstr(doc, "<h2>Server</h2>"));
    char want[160];
    snprintf(want, sizeof want, "id=\"server-engine\">%s<", engine);
    assert_non_null(strstr(doc, want));
    json_t *gt = json_object_get(srv, "generation_tokens");
    if (!json_is_object(gt))
        return;
    assert_int_equal(cell_after(doc, "id=\"srv-generation_tokens\"", 0),
                     harness_ival_req(gt, "delta"));
    assert_int_equal(cell_after(doc, "id=\"srv-generation_tokens\"", 1),
                     harness_ival_req(gt, "client"));
    assert_non_null(strstr(doc, "<td class=\"l\">generation tokens</td>"));
}

/* The Output tokens section quotes summary.json's finish_reasons and
 * tokens.source: each reason's count, and the usage count. */
static void check_tokens(const char *doc, json_t *s)
{
    const char *k;
    json_t *v;
    char marker[96];
    assert_true(json_object_size(json_object_get(s, "finish_reasons")) > 0);
    json_object_foreach(json_object_get(s, "finish_reasons"), k, v)
    {
        snprintf(marker, sizeof marker, "id=\"finish_reasons.%s\"", k);
        assert_int_equal(cell_after(doc, marker, 0), json_integer_value(v));
    }
    json_t *src = json_object_get(json_object_get(s, "tokens"), "source");
    assert_true(harness_ival_req(src, "usage") > 0);
    assert_int_equal(cell_after(doc, "id=\"tokens.source.usage\"", 0),
                     harness_ival_req(src, "usage"));
}

/* report.html of dir: its figures are summary.json's, it is well-formed,
 * and `llmload report dir` rebuilds it byte for byte. */
static void check_page(const char *dir)
{
    char *doc = harness_read_in(dir, "report.html");
    json_t *s = harness_summary_load(dir);
    json_t *req = json_object_get(s, "requests");
    json_t *ttft = json_object_get(json_object_get(s, "latency_ns"), "ttft");
    assert_true(harness_ival_req(req, "ok") > 0);
    assert_int_equal(cell_after(doc, "id=\"requests.ok\"", 0), harness_ival_req(req, "ok"));
    assert_int_equal(cell_after(doc, "id=\"requests.failed\"", 0), harness_ival_req(req, "failed"));
    /* TTFT: p50, p90, p95, p99 cells, then the card in ms as people read it. */
    assert_int_equal(cell_after(doc, "id=\"lat-ttft\"", 0), harness_ival_req(ttft, "p50"));
    assert_int_equal(cell_after(doc, "id=\"lat-ttft\"", 3), harness_ival_req(ttft, "p99"));
    double p99_ms = (double)harness_ival_req(ttft, "p99") / 1e6;
    char want[32], got[32];
    snprintf(want, sizeof want, "%.*f", p99_ms >= 100 ? 0 : p99_ms >= 10 ? 1 : 2, p99_ms);
    if (strchr(want, '.') != NULL) { /* trailing zeros dropped, as report_put_value does */
        size_t n = strlen(want);
        while (want[n - 1] == '0')
            want[--n] = '\0';
        if (want[n - 1] == '.')
            want[n - 1] = '\0';
    }
    card_value(doc, "TTFT p99", got, sizeof got);
    assert_string_equal(got, want);
    snprintf(want, sizeof want, "%lld", (long long)harness_ival_req(req, "ok"));
    card_value(doc, "Requests ok", got, sizeof got);
    assert_string_equal(got, want);
    /* The per-second chart and the server's, from hist.jsonl and the scrapes. */
    assert_non_null(strstr(doc, "id=\"chart-ttft-time\""));
    assert_non_null(strstr(doc, "data-series=\"ttft_p99\""));
    if (harness_ival(json_object_get(s, "server"), "scrapes") > 0)
        assert_non_null(strstr(doc, "id=\"chart-server-queue\""));
    check_server(doc, json_object_get(s, "server"));
    check_tokens(doc, s);
    char path[700];
    snprintf(path, sizeof path, "%s/report.html", dir);
    xmllint_ok(path);

    char *sum_before = harness_read_in(dir, "summary.json");
    unlink(path);
    const char *rep[] = {"report", dir, NULL};
    char *out = harness_run_expect(rep, 30, 0, NULL);
    assert_non_null(strstr(out, "report.html"));
    char *again = harness_read_in(dir, "report.html");
    if (strcmp(doc, again) != 0)
        fail_msg("llmload report %s drew a different report.html", dir);
    char *sum_after = harness_read_in(dir, "summary.json");
    assert_string_equal(sum_before, sum_after);
    free(sum_before);
    free(sum_after);
    free(out);
    free(again);
    json_decref(s);
    free(doc);
}

/* A run's stdout ends "results: DIR" as it always did (scripts parse
 * it), then the line that names the page: "report: DIR/report.html". */
static void check_last_lines(const char *out, const char *dir)
{
    char tail[1400];
    snprintf(tail, sizeof tail, "\nresults: %s\nreport: %s/report.html\n", dir, dir);
    size_t no = strlen(out), nt = strlen(tail);
    if (no < nt || strcmp(out + no - nt, tail) != 0)
        fail_msg("stdout does not end \"results: DIR\", \"report: DIR/report.html\": %s", out);
}

static void test_run_page(void **state)
{
    (void)state;
    const char *sargs[] = {SIM_FAST, NULL};
    assert_int_equal(harness_sim_start(&harness_cur_sim, sargs), 0);
    char *tmp = harness_tmpdir();
    char dir[600], url[300];
    snprintf(dir, sizeof dir, "%s/r", tmp);
    snprintf(url, sizeof url, "%s/v1", harness_cur_sim.url);
    const char *args[] = {"run",      "--url", url,         "--out",    dir,          "--quiet",
                          "--rate",   "20",    "--arrival", "constant", "--duration", "3s",
                          "--warmup", "1s",    REQ_8_10,    NULL};
    char *out = harness_run_expect(args, 60, HARNESS_RC_OK_OR_INVALID, NULL);
    check_last_lines(out, dir);
    free(out);
    check_page(dir);
    harness_rm_rf(tmp);
    free(tmp);
}

/* llmload replay writes a run's directory: the same page, rebuilt the same. */
static void test_replay_page(void **state)
{
    (void)state;
    const char *sargs[] = {SIM_FAST, NULL};
    assert_int_equal(harness_sim_start(&harness_cur_sim, sargs), 0);
    char *tmp = harness_tmpdir();
    char trace[600], out[600], url[300];
    snprintf(trace, sizeof trace, "%s/trace.jsonl", tmp);
    snprintf(out, sizeof out, "%s/r", tmp);
    snprintf(url, sizeof url, "%s/v1", harness_cur_sim.url);
    const char *dump[] = {"run", "--url",           url,   "--rate", "20",        "--requests",
                          "30",  "--dump-schedule", trace, REQ_8_10, "--dry-run", NULL};
    free(harness_run_expect(dump, 30, 0, NULL));
    const char *rep[] = {"replay", trace, "--url", url, "--out", out, "--quiet", NULL};
    char *so = harness_run_expect(rep, 60, HARNESS_RC_OK_OR_INVALID, NULL);
    check_last_lines(so, out);
    free(so);
    check_page(out);
    /* A replay is never judged steady; its verdict says why, not nothing. */
    char *doc = harness_read_in(out, "report.html");
    HARNESS_HAS(doc, "; steady not judged: a replayed trace sends at its own times");
    free(doc);
    const char *rm[] = {"rm", "-rf", tmp, NULL};
    assert_int_equal(harness_run_quiet(rm, 10), 0);
    free(tmp);
}

/* A run whose --expect fails (exit 7) says so on its page: the verdict
 * and a banner name the check, summary.json's expect[].result "fail". */
static void test_expect_failed_page(void **state)
{
    (void)state;
    const char *sargs[] = {SIM_FAST, NULL};
    assert_int_equal(harness_sim_start(&harness_cur_sim, sargs), 0);
    /* The widest self-check tolerance: an INVALID run exits 1 before its
     * --expect's 7, and under ASan on a loaded box the OS woke the
     * generator 4 ms late (p99) against a 113 ms E2E p90, past 2%. */
    const char *args[] = {"--rate",   "20",           "--duration",           "2s",   REQ_8_10,
                          "--expect", "ttft_p99<1us", "--lateness-tolerance", "100%", NULL};
    char *dir = harness_run_client(NULL, args, 7, NULL);
    char *doc = harness_read_in(dir, "report.html");
    assert_non_null(strstr(doc, "id=\"verdict\">FAILED --expect: ttft_p99&lt;1us; "));
    assert_non_null(strstr(doc, "id=\"expect-failed\">FAILED --expect (exit 7): ttft_p99&lt;1us"));
    free(doc);
    harness_results_free(dir);
}

/* A summary.json that is not a run's summary: one line naming the file,
 * exit 2, no page. */
static void test_not_a_summary(void **state)
{
    (void)state;
    char *tmp = harness_tmpdir();
    char path[700];
    snprintf(path, sizeof path, "%s/run.json", tmp);
    harness_write_file(path, "{\"command\":\"run\",\"config\":{}}\n");
    snprintf(path, sizeof path, "%s/summary.json", tmp);
    harness_write_file(path, "[1, 2]\n");
    const char *rep[] = {"report", tmp, NULL};
    harness_expect_usage(rep, "summary.json: not a run's summary");
    harness_write_file(path, "{\"schema\":\"llmload.steps/1\"}\n");
    harness_expect_usage(rep, "summary.json: not a run's summary");
    snprintf(path, sizeof path, "%s/report.html", tmp);
    assert_int_not_equal(access(path, F_OK), 0);
    harness_rm_rf(tmp);
    free(tmp);
}

HARNESS_MAIN(cmocka_unit_test_teardown(test_run_page, harness_sim_teardown),
             cmocka_unit_test_teardown(test_replay_page, harness_sim_teardown),
             cmocka_unit_test_teardown(test_expect_failed_page, harness_sim_teardown),
             cmocka_unit_test(test_not_a_summary))
