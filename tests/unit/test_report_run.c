/* test_report_run.c: a single run's report.html (report_run.c), read back.
 *
 * A small hand-made summary.json and hist.jsonl go in; the test checks
 * that the tables quote summary.json exactly (data-v), that the verdict
 * and the warnings are said, that hostile text is escaped and the page
 * well-formed, that two workers' lines of one second add up in the
 * per-second charts, and that the same input draws the same bytes.
 *
 * With REPORT_RUN_SAMPLE_OUT=path in the environment the binary instead
 * writes the fixture's page to path and exits: what make check-report
 * renders of a run's page. */
#include "test.h"
#include "testutil.h"

#include <jansson.h>
#include <string.h>
#include <unistd.h>

#include "measure/hist.h"
#include "report/report_run.h"
#include "util/strbuf.h"
#include "util/util.h"

static const char fx_summary[] =
    "{\"schema\":\"llmload.summary/1\",\"version\":\"v-test\",\"mode\":\"open-loop "
    "constant 4/s\",\"closed_loop\":false,\"interrupted\":false,\"invalid\":true,"
    "\"invalid_reason\":\"sends <late> & slow\",\"steady\":false,"
    "\"steady_warning\":\"TTFT p99 rose 3x\",\"target_url\":\"http://127.0.0.1:1/v1\","
    "\"model\":\"m\",\"seed\":7,\"window_ns\":2000000000,\"warmup_ns\":1000000000,"
    "\"requests\":{\"scheduled\":10,\"sent\":10,\"ok\":8,\"failed\":2,\"unfinished\":0,"
    "\"by_kind\":{\"ok\":8,\"http_5xx\":2,\"http_429\":0},"
    "\"samples\":{\"http_5xx\":\"<b>boom</b>\"}},"
    "\"latency_ns\":{\"ttft\":{\"count\":8,\"p50\":12000000,\"p90\":15000000,"
    "\"p95\":15500000,\"p99\":16133472,\"p99_9\":16133472,\"max\":16133472},"
    "\"tpot\":{\"count\":8,\"p50\":6000000,\"p90\":7000000,\"p95\":7000000,"
    "\"p99\":7125239,\"p99_9\":7125239,\"max\":7125239}},"
    "\"throughput\":{\"offered_rate_per_s\":4.0,\"send_rate_per_s\":5.0,"
    "\"completion_rate_per_s\":5.0,\"ok_rate_per_s\":4.0,"
    "\"output_tokens_per_s\":40.0,\"slo\":null},"
    "\"classes\":[{\"name\":\"chat&co\",\"scheduled\":10,\"ok\":8,\"failed\":2,"
    "\"latency_ns\":{\"ttft\":{\"p50\":12000000,\"p99\":16133472}},\"slo\":null}],"
    "\"inflight\":{\"mean\":2.5,\"max\":4.0}}";

/* One line of hist.jsonl at second sec: ok and failed counts, a TTFT
 * histogram of the values v[0, n). */
static void hist_line(FILE *f, int sec, int ok, int failed, const uint64_t *v, size_t n)
{
    struct hist *h = hist_new();
    for (size_t i = 0; i < n; i++)
        hist_record(h, v[i]);
    char *text = hist_to_string(h);
    fprintf(f,
            "{\"t_ns\":%lld,\"shard\":0,\"worker\":%d,\"ok\":%d,\"failed\":%d,"
            "\"ttft\":\"%s\"}\n",
            (long long)sec * 1000000000, ok, ok, failed, text);
    free(text);
    hist_free(h);
}

/* Render summary text sum_text with hist.jsonl at hist_path. Caller frees. */
static char *render_with(const char *sum_text, const char *hist_path)
{
    json_error_t je;
    json_t *sum = json_loads(sum_text, 0, &je);
    if (sum == NULL)
        fail_msg("summary: %s", je.text);
    struct strbuf b;
    strbuf_init(&b);
    report_run_render(NULL, sum, hist_path, "/nonexistent/server_metrics.jsonl", &b);
    json_decref(sum);
    char *doc = ll_strdup(b.data);
    strbuf_free(&b);
    return doc;
}

/* Render the fixture, its lateness_diagnosis.cause set to cause (NULL:
 * none, as the fixture has); the hist.jsonl of two workers in second 1
 * and one in second 2 goes through a temporary file. Caller frees. */
static char *render_fixture_cause(const char *cause)
{
    char path[] = "/tmp/test_report_run.XXXXXX";
    FILE *f = test_temp_file(path);
    static const uint64_t a[] = {10000000, 20000000}, b[] = {30000000}, c[] = {5000000};
    hist_line(f, 1, 2, 1, a, 2);
    hist_line(f, 2, 1, 0, c, 1);
    hist_line(f, 1, 1, 0, b, 1);
    fclose(f);
    char *text = NULL;
    if (cause != NULL) {
        json_t *sum = json_loads(fx_summary, 0, NULL);
        assert_non_null(sum);
        json_t *ld = json_object();
        json_object_set_new(ld, "cause", json_string(cause));
        json_object_set_new(sum, "lateness_diagnosis", ld);
        text = json_dumps(sum, 0);
        json_decref(sum);
    }
    char *doc = render_with(text ? text : fx_summary, path);
    free(text);
    unlink(path);
    return doc;
}

static char *render_fixture(void)
{
    return render_fixture_cause(NULL);
}

static void test_tables_quote_summary(void **state)
{
    (void)state;
    char *doc = render_fixture();
    assert_well_formed(doc);
    assert_non_null(strstr(doc, "<tr id=\"lat-ttft\"><td class=\"l\">TTFT</td>"
                                "<td data-v=\"12000000\">12.0</td>") ||
                    strstr(doc, "<td data-v=\"12000000\">12</td>"));
    assert_non_null(strstr(doc, "<td data-v=\"16133472\">16.1</td>"));
    assert_non_null(strstr(doc, "<tr id=\"requests.ok\"><td class=\"l\">ok</td>"
                                "<td data-v=\"8\">8</td>"));
    /* The cards: TTFT p99 in ms, ok of scheduled. */
    assert_non_null(strstr(doc, "<div class=\"k\">TTFT p99</div><div class=\"v\">16.1<"));
    assert_non_null(strstr(doc, "<div class=\"k\">Requests ok</div><div class=\"v\">8<"));
    /* The kinds that occurred, with their message escaped; none of 0. */
    assert_non_null(strstr(doc, "<td class=\"l\">http_5xx</td><td data-v=\"2\">2</td>"
                                "<td class=\"l\">&lt;b&gt;boom&lt;/b&gt;</td>"));
    assert_null(strstr(doc, ">http_429<"));
    assert_non_null(strstr(doc, "<td class=\"l\">chat&amp;co</td>"));
    free(doc);
}

static void test_verdict_said(void **state)
{
    (void)state;
    /* No lateness_diagnosis (an older summary.json): whose is not known. */
    static const char *const has[] = {
        "INVALID: the client could not keep the schedule; these figures are not trustworthy. "
        "sends &lt;late&gt; &amp; slow",
        "TTFT p99 rose 3x",
        "id=\"verdict\">INVALID (the client could not keep the schedule); not steady",
        NULL,
    };
    char *doc = render_fixture();
    assert_page(doc, has, NULL);
    free(doc);
    /* The banner and the verdict line say whose fault by the cause. */
    static const char *const causes[][2] = {
        {"asleep", "the host (OS or VM) did not run the client on schedule"},
        {"preempted", "the host (OS or VM) did not run the client on schedule"},
        {"busy", "the load generator was too busy to keep the schedule"},
    };
    for (size_t i = 0; i < LL_ARRAY_LEN(causes); i++) {
        doc = render_fixture_cause(causes[i][0]);
        char banner[200], verdict[200];
        snprintf(banner, sizeof banner, "INVALID: %s; these figures are not trustworthy.",
                 causes[i][1]);
        snprintf(verdict, sizeof verdict, "id=\"verdict\">INVALID (%s)", causes[i][1]);
        const char *const whose[] = {banner, verdict, NULL};
        const char *const lacks[] = {"generator could not", "generator's lateness", NULL};
        assert_page(doc, whose, lacks);
        free(doc);
    }
}

static void test_seconds_add_up(void **state)
{
    (void)state;
    char *doc = render_fixture();
    double xs[8], ys[8];
    size_t len;
    const char *s = svgtest_chart_find(doc, "chart-completions", &len);
    assert_non_null(s);
    /* Seconds 1 (2 + 1 ok) and 2 (1 ok); second 0, the warm-up's, has no
     * line and is not drawn as 0 ended. */
    assert_int_equal(
        svgtest_collect(s, len, "<circle class=\"pt\"", "ok_per_s", "data-x", "data-y", xs, ys, 8),
        2);
    assert_true(xs[0] == 1.5 && ys[0] == 3 && ys[1] == 1);
    assert_int_equal(svgtest_collect(s, len, "<circle class=\"pt\"", "failed_per_s", "data-x",
                                     "data-y", xs, ys, 8),
                     2);
    assert_true(ys[0] == 1);
    /* TTFT of second 1 is the two workers' merged: p99 the 30 ms, p50 the 20. */
    s = svgtest_chart_find(doc, "chart-ttft-time", &len);
    assert_non_null(s);
    assert_int_equal(
        svgtest_collect(s, len, "<circle class=\"pt\"", "ttft_p99", "data-x", "data-y", xs, ys, 8),
        2);
    ASSERT_REL(ys[0], 30.0, 1.0 / 256);
    ASSERT_REL(ys[1], 5.0, 1.0 / 256);
    assert_int_equal(
        svgtest_collect(s, len, "<circle class=\"pt\"", "ttft_p50", "data-x", "data-y", xs, ys, 8),
        2);
    ASSERT_REL(ys[0], 20.0, 1.0 / 256);
    free(doc);
}

static const char small_summary[] =
    "{\"schema\":\"llmload.summary/1\",\"window_ns\":3000000000000,\"warmup_ns\":0,"
    "\"requests\":{\"scheduled\":10,\"ok\":10,\"failed\":0}}";

/* A run of 3,000 seconds draws at most RUN_SECONDS_POINTS points, each
 * the merge of k seconds' histograms (the p99 of the bucket, not of one
 * second), without markers; a line that comes after its bucket closed
 * still counts its requests. */
static void test_long_run_thinned(void **state)
{
    (void)state;
    char path[] = "/tmp/test_report_run.XXXXXX";
    FILE *f = test_temp_file(path);
    for (int sec = 0; sec < 3000; sec++) {
        uint64_t v = sec == 1 ? 90000000 : 10000000;
        hist_line(f, sec, 3, 0, &v, 1);
    }
    uint64_t late = 500000000;
    hist_line(f, 0, 3, 0, &late, 1); /* second 0 again, long after it closed */
    fclose(f);
    char *doc = render_with(small_summary, path);
    unlink(path);
    assert_well_formed(doc);
    double *xs = ll_calloc(2000, sizeof(double)), *ys = ll_calloc(2000, sizeof(double));
    size_t len;
    const char *s = svgtest_chart_find(doc, "chart-ttft-time", &len);
    assert_non_null(s);
    size_t n = svgtest_collect(s, len, "<circle class=\"pt\"", "ttft_p99", "data-x", "data-y", xs,
                               ys, 2000);
    assert_int_equal(n, 1000);
    assert_true(xs[0] == 1.5); /* seconds 0-2 as one point */
    ASSERT_REL(ys[0], 90.0, 1.0 / 256);
    ASSERT_REL(ys[1], 10.0, 1.0 / 256);
    s = svgtest_chart_find(doc, "chart-completions", &len);
    n = svgtest_collect(s, len, "<circle class=\"pt\"", "ok_per_s", "data-x", "data-y", xs, ys,
                        2000);
    assert_int_equal(n, 1000);
    assert_true(ys[0] == 4 && ys[1] == 3);                           /* (3 x 3 + 3) / 3 seconds */
    assert_null(strstr(doc, " r=\"3.5\" fill=\"#0072b2\" stroke=")); /* no markers */
    assert_non_null(strstr(doc, "Each point is 3 seconds added together"));
    assert_non_null(strstr(doc, "1 lines of hist.jsonl came after their second was drawn"));
    free(xs);
    free(ys);
    free(doc);
}

/* A summary.json and what its page must say and must not say: each list
 * ends at its first NULL; the last slot stays NULL. */
struct page_case {
    const char *sum;
    const char *has[16];
    const char *lacks[4];
};

/* Render each case's summary without a hist.jsonl and check its page is
 * well formed, has each string of has and none of lacks. */
static void check_pages(const struct page_case *cases, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        const struct page_case *c = &cases[i];
        assert_null(c->has[LL_ARRAY_LEN(c->has) - 1]);
        assert_null(c->lacks[LL_ARRAY_LEN(c->lacks) - 1]);
        char *doc = render_with(c->sum, "/nonexistent/hist.jsonl");
        assert_well_formed(doc);
        assert_page(doc, c->has, c->lacks);
        free(doc);
    }
}

/* A missing or unreadable hist.jsonl, and a summary.json of an older
 * llmload without its latency and throughput blocks: the page still
 * renders, well formed, with en dashes where figures are missing: no
 * requests.ok is an en dash, not 0; 3 failed and no by_kind is not "No
 * request failed.". */
static void test_missing_parts(void **state)
{
    (void)state;
    char path[] = "/tmp/test_report_run.XXXXXX";
    int fd = mkstemp(path);
    assert_true(fd >= 0);
    static const char bad[] = "not json\n{\"t_ns\":\"x\"}\n";
    assert_true(write(fd, bad, sizeof bad - 1) == (ssize_t)(sizeof bad - 1));
    close(fd);
    static const char old[] = "{\"schema\":\"llmload.summary/1\",\"requests\":{\"failed\":3}}";
    char *doc = render_with(old, path);
    unlink(path);
    assert_well_formed(doc);
    static const char *const has[] = {
        "2 lines of hist.jsonl were not a run's window",
        "<div class=\"k\">Requests ok</div><div class=\"v none\">"
        "\xE2\x80\x93</div>",
        "id=\"errors-unnamed\">3 requests failed",
        NULL,
    };
    static const char *const lacks[] = {"No request failed.", NULL};
    assert_page(doc, has, lacks);
    free(doc);
    static const struct page_case no_hist[] = {{old, {"nothing counted"}, {NULL}}};
    check_pages(no_hist, LL_ARRAY_LEN(no_hist));
}

/* A failed --expect and a run with no request ok say so in the verdict
 * and a banner; a passed --expect says it passed. With no request ok
 * there is no stream: no TTFT, TPOT or output card. */
static void test_run_end_said(void **state)
{
    (void)state;
    static const char failed[] =
        "{\"schema\":\"llmload.summary/1\",\"steady\":true,\"requests\":{\"scheduled\":4,"
        "\"ok\":4,\"failed\":0},\"latency_ns\":{\"ttft\":{\"count\":4}},\"expect\":["
        "{\"expect\":\"ttft_p99<1ms\",\"result\":\"fail\"},"
        "{\"expect\":\"error_rate<1%\",\"result\":\"pass\"},"
        "{\"expect\":\"goodput>=9/s\",\"result\":\"fail\"}]}";
    static const char passed[] =
        "{\"schema\":\"llmload.summary/1\",\"requests\":{\"scheduled\":4,\"ok\":4},"
        "\"expect\":[{\"expect\":\"ttft_p99<1s\",\"result\":\"pass\"}]}";
    static const char none_ok[] =
        "{\"schema\":\"llmload.summary/1\",\"requests\":{\"scheduled\":4,\"ok\":0,"
        "\"failed\":4,\"by_kind\":{\"http_5xx\":4}},\"latency_ns\":{\"ttft\":{\"count\":0}}}";
    static const struct page_case cases[] = {
        {failed,
         {"id=\"verdict\">FAILED --expect: ttft_p99&lt;1ms, goodput&gt;=9/s; valid",
          "id=\"expect-failed\">FAILED --expect (exit 7): ttft_p99&lt;1ms, "
          "goodput&gt;=9/s</div>"},
         {NULL}},
        {passed, {"; --expect passed</dd>"}, {"FAILED"}},
        {none_ok,
         {"id=\"verdict\">FAILED: no request succeeded; valid",
          "FAILED: no request succeeded (exit 6)"},
         {">TTFT p99<", "<div class=\"k\">Output</div>"}},
    };
    check_pages(cases, LL_ARRAY_LEN(cases));
}

/* A steady null says why in the verdict, as the terminal's steady line
 * (escaped); a summary.json without steady_unjudged (written before it)
 * says nothing of steadiness, as before. */
static void test_steady_unjudged_said(void **state)
{
    (void)state;
    static const char ramp[] =
        "{\"schema\":\"llmload.summary/1\",\"steady\":null,\"steady_unjudged\":\"not judged: "
        "the offered rate changes <within> the window (a ramp)\",\"requests\":{"
        "\"scheduled\":4,\"ok\":4}}";
    static const char older[] = "{\"schema\":\"llmload.summary/1\",\"steady\":null,"
                                "\"requests\":{\"scheduled\":4,\"ok\":4}}";
    static const struct page_case cases[] = {
        {ramp,
         {"id=\"verdict\">valid (the generator kept its schedule); steady not judged: the "
          "offered rate changes &lt;within&gt; the window (a ramp)</dd>"},
         {NULL}},
        {older, {"id=\"verdict\">valid (the generator kept its schedule)</dd>"}, {NULL}},
    };
    check_pages(cases, LL_ARRAY_LEN(cases));
}

/* A run that measured nothing (exit 6) says why in a FAILED banner and
 * the verdict, in summary.json's nothing_measured words (escaped): an
 * empty window has requests.scheduled 0, which the older rule (ok 0 of
 * some scheduled) never called failed. nothing_measured null: no FAILED
 * banner, though ok is 0 (a shard's empty window, cancelled requests
 * alone); a shard's empty window says shard_empty's words instead, in a
 * neutral banner and first in the verdict, never FAILED (the parent's
 * page said nothing of it). */
static void test_nothing_measured_banner(void **state)
{
    (void)state;
    static const char empty[] =
        "{\"schema\":\"llmload.summary/1\",\"nothing_measured\":\"nothing was measured: none "
        "came due in the window, the rate too low for its length: lengthen --duration, raise "
        "the rate, or give --requests <N>\",\"requests\":{\"scheduled\":0,\"ok\":0}}";
    static const char failed[] =
        "{\"schema\":\"llmload.summary/1\",\"nothing_measured\":\"no request succeeded: all 3 "
        "of the window failed\",\"requests\":{\"scheduled\":3,\"ok\":0}}";
    static const char shard[] = "{\"schema\":\"llmload.summary/1\",\"nothing_measured\":null,"
                                "\"requests\":{\"scheduled\":3,\"ok\":0}}";
    static const char empty_shard[] =
        "{\"schema\":\"llmload.summary/1\",\"nothing_measured\":null,\"shard_empty\":\"shard "
        "2/3: no arrival of the schedule fell to this shard in the window; llmload merge judges "
        "the whole run\",\"requests\":{\"scheduled\":0,\"ok\":0}}";
    static const struct page_case cases[] = {
        {empty,
         {"<div class=\"banner invalid\">FAILED (exit 6): nothing was measured: none came due "
          "in the window, the rate too low for its length: lengthen --duration, raise the "
          "rate, or give --requests &lt;N&gt;</div>",
          "id=\"verdict\">FAILED: nothing was measured: none came due"},
         {NULL}},
        {failed,
         {"<div class=\"banner invalid\">FAILED (exit 6): no request succeeded: all 3 of the "
          "window failed</div>"},
         {NULL}},
        {shard, {NULL}, {"FAILED"}},
        {empty_shard,
         {"<div class=\"banner closed\">shard 2/3: no arrival of the schedule fell to this "
          "shard in the window; llmload merge judges the whole run</div>",
          "id=\"verdict\">shard 2/3: no arrival of the schedule fell to this shard in the "
          "window; llmload merge judges the whole run; valid"},
         {"FAILED"}},
    };
    check_pages(cases, LL_ARRAY_LEN(cases));
}

/* summary.json's server block and the responses' usage: table#server
 * quotes the server's figures beside the client's, named as the terminal
 * names them (the client's TTFT is "from sent", never the server's); a
 * gauge the engine does not export is said, in the terminal's words;
 * table#usage the cached prompt tokens. Scraped but no usable scrape:
 * the line says so, no table. A summary.json without either has no
 * Server section. */
static void test_server_section(void **state)
{
    (void)state;
    static const char with[] =
        "{\"schema\":\"llmload.summary/1\",\"requests\":{\"scheduled\":4,\"ok\":4},"
        "\"tokens\":{\"cached_tokens\":96,\"cached_share\":0.25,"
        "\"workload_cached_share\":null,\"prompt_reported\":4,\"prompt_ratio\":1.5},"
        "\"server\":{\"url\":\"http://127.0.0.1:9/metrics\",\"scrapes\":5,\"failed\":1,"
        "\"engine\":\"vllm\",\"window_scrapes\":4,\"window_failed\":0,"
        "\"waiting\":{\"mean\":1.5,\"max\":3,\"scrapes\":4},"
        "\"running\":null,\"kv_usage\":{\"mean\":0.42,\"max\":0.5,\"scrapes\":4},"
        "\"preemptions\":{\"delta\":0,\"resets\":0},"
        "\"prompt_tokens\":{\"delta\":300,\"resets\":0,\"client\":200,"
        "\"excludes_cached\":false},"
        "\"generation_tokens\":{\"delta\":0,\"resets\":0,\"client\":40},"
        "\"request_success\":{\"delta\":4,\"resets\":0,\"client\":4},"
        "\"ttft\":{\"count\":4,\"p50_s\":0.012,\"p50_bucket_s\":[0.01,0.02],"
        "\"p99_s\":0.5,\"p99_bucket_s\":[0.5,null],\"p99_is_lower_bound\":true,"
        "\"client_from_sent_p50_s\":0.011,\"client_from_sent_p99_s\":0.013}}}";
    static const char unusable[] =
        "{\"schema\":\"llmload.summary/1\",\"server\":{\"url\":\"http://h/metrics\","
        "\"scrapes\":2,\"failed\":2}}";
    static const struct page_case cases[] = {
        {with,
         {"<h2>Server</h2>", "id=\"server-engine\">vllm<", "5 scrapes, 1 failed (gaps)",
          "<tr id=\"srv-waiting-mean\"><td class=\"l\">queue depth, mean</td>"
          "<td data-v=\"1.5\">1.5</td>",
          "<tr id=\"srv-running\"><td class=\"l\">running</td><td class=\"l\" colspan=\"4\">"
          "not exported by this engine</td></tr>",
          "<td class=\"l\">KV-cache usage, %, mean</td><td data-v=\"0.42\">42</td>",
          "<tr id=\"srv-prompt_tokens\"><td class=\"l\">prompt tokens</td>"
          "<td data-v=\"300\">300</td><td data-v=\"200\">200</td>"
          "<td class=\"l\">sent</td><td data-v=\"1.5\">1.5</td>",
          "<td class=\"l\">received</td><td class=\"l\">the server's counter did not move",
          "<td class=\"l\">TTFT (server) p50, ms</td><td data-v=\"0.012\">12</td>"
          "<td data-v=\"0.011\">11</td><td class=\"l\">from sent</td>",
          "<td data-v=\"0.5\">&gt;500</td>",
          "<tr id=\"tokens.cached_tokens\"><td class=\"l\">cached prompt tokens</td>"
          "<td data-v=\"96\">96</td>",
          "id=\"tokens.prompt_ratio\""},
         {"srv-running-mean", "tokens.workload_cached_share"}},
        {unusable, {"2 failed (gaps); no usable scrape over the run."}, {"id=\"server\""}},
    };
    check_pages(cases, LL_ARRAY_LEN(cases));
    char *doc = render_fixture();
    assert_null(strstr(doc, "<h2>Server</h2>"));
    free(doc);
}

/* The ok requests' output tokens: where their counts came from and why
 * the server ended them, summary.json's tokens.source and finish_reasons
 * in their order, with the cut short; the events' undercount said; none
 * of it for embeddings or without an ok request. */
static void test_output_tokens(void **state)
{
    (void)state;
    static const char streamed[] =
        "{\"schema\":\"llmload.summary/1\",\"requests\":{\"scheduled\":9,\"ok\":9},"
        "\"tokens\":{\"inputs\":null,\"source\":{\"usage\":6,\"chunk_usage\":0,"
        "\"events\":3}},\"finish_reasons\":{\"length\":5,\"stop\":3,\"(none)\":1},"
        "\"cut_short\":{\"count\":2,\"share\":0.22,\"unjudged\":3}}";
    static const char embeddings[] =
        "{\"schema\":\"llmload.summary/1\",\"requests\":{\"scheduled\":2,\"ok\":2},"
        "\"tokens\":{\"inputs\":4,\"source\":{\"usage\":2}},\"finish_reasons\":{}}";
    static const struct page_case cases[] = {
        {streamed,
         {"<h2>Output tokens</h2>",
          "<tr id=\"tokens.source.usage\"><td class=\"l\">usage</td><td data-v=\"6\">6</td>"
          "</tr>\n<tr id=\"tokens.source.events\"><td class=\"l\">events</td>"
          "<td data-v=\"3\">3</td></tr>",
          "<tr id=\"finish_reasons.length\"><td class=\"l\">length</td><td data-v=\"5\">5</td>"
          "</tr>\n<tr id=\"finish_reasons.stop\"><td class=\"l\">stop</td>"
          "<td data-v=\"3\">3</td></tr>\n<tr id=\"finish_reasons.(none)\">"
          "<td class=\"l\">(none)</td><td data-v=\"1\">1</td></tr>",
          "<tr id=\"cut_short.count\"><td class=\"l\">cut short</td><td data-v=\"2\">2</td>",
          "<tr id=\"cut_short.unjudged\"><td class=\"l\">cut short not judged (counted "
          "events)</td><td data-v=\"3\">3</td>",
          "where the server said it stopped for length or the request set ignore_eos",
          "Counted events undercount"},
         {"tokens.source.chunk_usage"}},
        {embeddings, {NULL}, {"Output tokens"}},
    };
    check_pages(cases, LL_ARRAY_LEN(cases));
    char *doc = render_fixture(); /* an older summary.json: neither block */
    assert_null(strstr(doc, "Output tokens"));
    free(doc);
}

/* What the terminal says beside a figure the page says too: a counter's
 * resets beside its name; a restart, and the lower bound's words as
 * summary.json has them; the workload's prefix share only beside a cached
 * count the server reported. */
static void test_server_caveats(void **state)
{
    (void)state;
    static const char sum[] =
        "{\"schema\":\"llmload.summary/1\",\"requests\":{\"scheduled\":4,\"ok\":4},"
        "\"tokens\":{\"cached_tokens\":null,\"workload_cached_share\":0.5,"
        "\"prompt_reported\":4,\"prompt_ratio\":1.0},"
        "\"server\":{\"url\":\"http://127.0.0.1:9/metrics\",\"scrapes\":5,\"failed\":0,"
        "\"engine\":\"vllm\",\"generation_tokens\":{\"delta\":40,\"resets\":2,"
        "\"lower_bound\":true,\"client\":40},\"restarts\":1,"
        "\"restart_between_s\":[2.005,3.005],\"lower_bound_note\":\"the words & why\"}}";
    static const struct page_case cases[] = {
        {sum,
         {"<tr id=\"srv-generation_tokens\"><td class=\"l\">generation tokens (2 counter "
          "resets: a lower bound)</td>",
          "The server restarted between the scrapes at +2.0 s and +3.0 s",
          "id=\"server-lower-bound\">Lower bound: the words &amp; why.",
          "id=\"tokens.prompt_ratio\""},
         {"tokens.workload_cached_share"}},
    };
    check_pages(cases, LL_ARRAY_LEN(cases));
}

static void test_deterministic(void **state)
{
    (void)state;
    char *a = render_fixture(), *b = render_fixture();
    assert_string_equal(a, b);
    free(a);
    free(b);
}

/* REPORT_RUN_SAMPLE_OUT=path: write the fixture's page to path and exit
 * (tests/report-screenshot.sh renders it). */
static int write_sample(const char *path)
{
    char *doc = render_fixture();
    FILE *f = fopen(path, "w");
    int ok = f != NULL && fputs(doc, f) >= 0;
    if (f != NULL && fclose(f) != 0)
        ok = 0;
    free(doc);
    return ok ? 0 : 1;
}

int main(void)
{
    const char *sample = getenv("REPORT_RUN_SAMPLE_OUT");
    if (sample != NULL)
        return write_sample(sample);
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_tables_quote_summary), cmocka_unit_test(test_verdict_said),
        cmocka_unit_test(test_seconds_add_up),       cmocka_unit_test(test_long_run_thinned),
        cmocka_unit_test(test_missing_parts),        cmocka_unit_test(test_run_end_said),
        cmocka_unit_test(test_steady_unjudged_said), cmocka_unit_test(test_nothing_measured_banner),
        cmocka_unit_test(test_deterministic),        cmocka_unit_test(test_server_section),
        cmocka_unit_test(test_server_caveats),       cmocka_unit_test(test_output_tokens),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
