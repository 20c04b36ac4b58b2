/* Unit tests for scrapeline.c: server_metrics.jsonl read back for
 * `llmload merge`. A GPU line's "url" (its source) comes back, cut to
 * the caller's buffer; one that is not a string is refused, naming it.
 * A file whose two GPU sources' lines interleave loads as two series,
 * one per "url", each joined on its own: each exporter's energy counter
 * rises by its own amount (one series holding both would read the
 * counters' jumps between exporters as the energy). */
#include "test.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "metrics/scrape.h"
#include "metrics/scrapeline.h"
#include "testutil.h"
#include "util/util.h"

#define S LL_NS_PER_SEC

/* A GPU line of source url at mono_s, its counter at energy_j. */
static void gpu_line(FILE *f, const char *url, double mono_s, int ok, double energy_j)
{
    fprintf(f, "{\"t_ns\":0,\"mono_ns\":%llu,\"dur_ns\":1000,\"ok\":%s,\"source\":\"gpu\",",
            (unsigned long long)(mono_s * 1e9), ok ? "true" : "false");
    if (ok)
        fprintf(f,
                "\"url\":\"%s\",\"engine\":\"dcgm\",\"gpus\":1,\"power_w\":100,"
                "\"energy_j_total\":%g}\n",
                url, energy_j);
    else
        fprintf(f, "\"url\":\"%s\",\"error\":\"HTTP 503\"}\n", url);
}

static void test_line_url(void **state)
{
    (void)state;
    struct scrape_point p;
    int gpu;
    char url[64], small[8], err[200];
    const char *line = "{\"mono_ns\":5,\"dur_ns\":1,\"ok\":false,\"source\":\"gpu\","
                       "\"url\":\"http://a:9400/metrics\",\"error\":\"x\"}";
    assert_int_equal(
        scrape_line_parse(line, strlen(line), &p, &gpu, url, sizeof url, err, sizeof err), 0);
    assert_int_equal(gpu, 1);
    assert_string_equal(url, "http://a:9400/metrics");
    scrape_point_reset(&p);
    /* Cut to the buffer, terminated; NULL: not wanted. */
    assert_int_equal(
        scrape_line_parse(line, strlen(line), &p, &gpu, small, sizeof small, err, sizeof err), 0);
    assert_string_equal(small, "http://");
    scrape_point_reset(&p);
    assert_int_equal(scrape_line_parse(line, strlen(line), &p, &gpu, NULL, 0, err, sizeof err), 0);
    scrape_point_reset(&p);
    /* A server's line has none, even with a "url" member. */
    const char *srv = "{\"mono_ns\":5,\"dur_ns\":1,\"ok\":false,\"url\":\"u\"}";
    assert_int_equal(
        scrape_line_parse(srv, strlen(srv), &p, &gpu, url, sizeof url, err, sizeof err), 0);
    assert_int_equal(gpu, 0);
    assert_string_equal(url, "");
    scrape_point_reset(&p);
    const char *bad = "{\"mono_ns\":5,\"dur_ns\":1,\"ok\":false,\"source\":\"gpu\",\"url\":5}";
    assert_int_equal(
        scrape_line_parse(bad, strlen(bad), &p, &gpu, url, sizeof url, err, sizeof err),
        LL_E_PROTO);
    assert_non_null(strstr(err, "url: expected a string"));
    scrape_point_reset(&p);
}

/* Sources A and B interleaved (B 0.1 s after A, a failed B line between),
 * one server line: two series in the order they came, each joined over
 * [1.2 s, 1.9 s] (SCRAPE_SPAN_OUTER: A's scrapes at 1 and 2 s, B's at
 * 1.1 and 2.1 s): A's counter rose 50 J, B's 300 J. */
static void test_file_two_sources(void **state)
{
    (void)state;
    char path[] = "/tmp/llmload-scrapeline-XXXXXX";
    FILE *f = test_temp_file(path);
    fprintf(f, "{\"t_ns\":0,\"mono_ns\":900000000,\"dur_ns\":1000,\"ok\":false,\"error\":\"x\"}\n");
    gpu_line(f, "A", 1.0, 1, 100);
    gpu_line(f, "B", 1.1, 1, 1000);
    gpu_line(f, "B", 1.5, 0, 0);
    gpu_line(f, "A", 2.0, 1, 150);
    gpu_line(f, "B", 2.1, 1, 1300);
    fclose(f);

    struct scrape_series srv;
    struct scrape_file_gpus g = {0};
    char err[300];
    scrape_series_init(&srv);
    assert_int_equal(scrape_file_load(path, &srv, &g, err, sizeof err), 0);
    assert_int_equal(srv.n, 1);
    assert_int_equal(g.n, 2);
    assert_string_equal(g.v[0].url, "A");
    assert_string_equal(g.v[1].url, "B");
    assert_int_equal(g.v[0].lines, 2);
    assert_int_equal(g.v[0].failed, 0);
    assert_int_equal(g.v[1].lines, 3);
    assert_int_equal(g.v[1].failed, 1);
    assert_true(scrape_file_gpus_find(&g, "B") == &g.v[1]);
    assert_null(scrape_file_gpus_find(&g, "C"));
    static const double delta_j[2] = {50, 300};
    for (size_t i = 0; i < 2; i++) {
        struct scrape_join j;
        assert_int_equal(
            scrape_series_join(&g.v[i].series, 12 * S / 10, 19 * S / 10, SCRAPE_SPAN_OUTER, &j), 0);
        assert_true(j.gpu_energy.present);
        ASSERT_NEAR(j.gpu_energy.delta, delta_j[i], 1e-9);
    }
    /* Loading again appends to what g holds; NULL skips the server's. */
    assert_int_equal(scrape_file_load(path, NULL, &g, err, sizeof err), 0);
    assert_int_equal(g.n, 2);
    assert_int_equal(g.v[1].lines, 6);
    scrape_file_gpus_reset(&g);
    assert_int_equal(g.n, 0);
    scrape_file_gpus_reset(&g); /* empty: nothing to do */
    scrape_series_reset(&srv);

    /* A bad line is named by its number, the lines before it kept. */
    f = fopen(path, "w");
    assert_non_null(f);
    gpu_line(f, "A", 1.0, 1, 100);
    fprintf(f, "{\"mono_ns\":2,\"dur_ns\":1,\"ok\":true,\"source\":\"gpu\",\"url\":[]}\n");
    fclose(f);
    assert_int_equal(scrape_file_load(path, NULL, &g, err, sizeof err), LL_E_PROTO);
    assert_non_null(strstr(err, ":2: url: expected a string"));
    assert_int_equal(g.n, 1);
    assert_int_equal(g.v[0].lines, 1);
    scrape_file_gpus_reset(&g);
    unlink(path);

    /* A missing file. */
    assert_int_equal(scrape_file_load(path, NULL, &g, err, sizeof err), LL_E_NOTFOUND);
}

/* A line whose histogram has more bounds than a struct prom_histogram
 * holds (PROM_HIST_MAX_BUCKETS) is refused, named by its line: the join
 * would copy its buckets into one and write past it. */
static void test_ttft_too_many_bounds(void **state)
{
    (void)state;
    char path[] = "/tmp/llmload-scrapeline-XXXXXX";
    FILE *f = test_temp_file(path);
    for (int line = 0; line < 2; line++) {
        fprintf(f,
                "{\"t_ns\":0,\"mono_ns\":%d000000000,\"dur_ns\":1000,\"ok\":true,"
                "\"engine\":\"vllm\",\"ttft_le_s\":[",
                line + 1);
        for (int i = 0; i < 200; i++)
            fprintf(f, "%s%d", i ? "," : "", i + 1);
        fprintf(f, "],\"ttft_cum\":[");
        for (int i = 0; i < 201; i++)
            fprintf(f, "%s%d", i ? "," : "", line * 10);
        fprintf(f, "],\"ttft_sum_s\":0,\"ttft_count\":%d}\n", line * 10);
    }
    fclose(f);
    struct scrape_series srv;
    char err[300];
    scrape_series_init(&srv);
    int rc = scrape_file_load(path, &srv, NULL, err, sizeof err);
    if (rc == 0 && srv.n == 2) { /* accepted: the join must not write past its histogram */
        struct scrape_join j;
        scrape_series_join(&srv, 0, 3 * S, SCRAPE_SPAN_OUTER, &j);
    }
    assert_int_equal(rc, LL_E_PROTO);
    assert_non_null(strstr(err, ":1: ttft_le_s: expected at most 127 bounds, got 200"));
    assert_int_equal(srv.n, 0);
    scrape_series_reset(&srv);
    unlink(path);

    /* 127 bounds (128 buckets with +Inf) is the most, and joins. */
    struct scrape_point p;
    int gpu;
    char line[4096];
    int n = snprintf(line, sizeof line,
                     "{\"mono_ns\":1,\"dur_ns\":1,\"ok\":true,"
                     "\"engine\":\"vllm\",\"ttft_le_s\":[");
    for (int i = 0; i < 127; i++)
        n += snprintf(line + n, sizeof line - (size_t)n, "%s%d", i ? "," : "", i + 1);
    n += snprintf(line + n, sizeof line - (size_t)n, "],\"ttft_cum\":[");
    for (int i = 0; i < 128; i++)
        n += snprintf(line + n, sizeof line - (size_t)n, "%s0", i ? "," : "");
    n += snprintf(line + n, sizeof line - (size_t)n, "],\"ttft_sum_s\":0,\"ttft_count\":0}");
    assert_true(n > 0 && (size_t)n < sizeof line);
    assert_int_equal(scrape_line_parse(line, (size_t)n, &p, &gpu, NULL, 0, err, sizeof err), 0);
    assert_int_equal(p.ttft_n, PROM_HIST_MAX_BUCKETS);
    scrape_point_reset(&p);
}

/* A series built by hand (not read from a file) whose points hold more
 * buckets than a histogram: the join leaves the histogram out rather
 * than write past it (run under make check-asan to see a write). */
static void test_join_guards_buckets(void **state)
{
    (void)state;
    struct scrape_series s;
    scrape_series_init(&s);
    for (int k = 0; k < 2; k++) {
        struct scrape_point p;
        memset(&p, 0, sizeof p);
        p.start_abs_ns = p.end_abs_ns = (uint64_t)(k + 1) * S;
        p.ok = 1;
        p.engine = ENGINE_VLLM;
        p.ttft_n = 200;
        p.ttft_le = calloc(200, sizeof(double));
        p.ttft_count = calloc(200, sizeof(double));
        assert_non_null(p.ttft_le);
        assert_non_null(p.ttft_count);
        for (size_t i = 0; i < 200; i++) {
            p.ttft_le[i] = i + 1 < 200 ? (double)(i + 1) : INFINITY;
            p.ttft_count[i] = 10.0 * k;
        }
        assert_int_equal(scrape_series_add(&s, &p), 0);
    }
    struct scrape_join j;
    assert_int_equal(scrape_series_join(&s, 0, 3 * S, SCRAPE_SPAN_OUTER, &j), 0);
    assert_int_equal(j.ttft_quantiles, 0);
    scrape_series_reset(&s);
}

/* A line keeps each counter's label sets ("series"), so that a merge
 * joins as the run did: each set's increase, the run's model's alone. A
 * line without them (written before) joins on the sums; one whose sets
 * are not a list of name and value is refused. */
static void test_series_read_back(void **state)
{
    (void)state;
    static const char *const lines[2] = {
        "{\"mono_ns\":1000000000,\"dur_ns\":1,\"ok\":true,\"engine\":\"vllm\","
        "\"generation_tokens_total\":2000,\"series\":{\"generation_tokens_total\":["
        "{\"name\":\"g{model_name=\\\"A\\\"}\",\"model\":\"A\",\"value\":1000},"
        "{\"name\":\"g{model_name=\\\"B\\\"}\",\"model\":\"B\",\"value\":1000}]}}",
        "{\"mono_ns\":2000000000,\"dur_ns\":1,\"ok\":true,\"engine\":\"vllm\","
        "\"generation_tokens_total\":1150,\"series\":{\"generation_tokens_total\":["
        "{\"name\":\"g{model_name=\\\"A\\\"}\",\"model\":\"A\",\"value\":1100},"
        "{\"name\":\"g{model_name=\\\"B\\\"}\",\"model\":\"B\",\"value\":50}]}}",
    };
    struct scrape_series s;
    struct scrape_point p;
    int gpu;
    char err[200];
    scrape_series_init(&s);
    for (int i = 0; i < 2; i++) {
        assert_int_equal(
            scrape_line_parse(lines[i], strlen(lines[i]), &p, &gpu, NULL, 0, err, sizeof err), 0);
        assert_int_equal(p.series_n[ENGINE_M_GENERATION_TOKENS], 2);
        assert_int_equal(scrape_series_add(&s, &p), 0);
    }
    struct scrape_join j;
    assert_int_equal(scrape_series_join(&s, 0, 3 * S, SCRAPE_SPAN_OUTER, &j), 0);
    ASSERT_NEAR(j.generation_tokens.delta, 150, 0);
    scrape_series_set_model(&s, "A");
    assert_int_equal(scrape_series_join(&s, 0, 3 * S, SCRAPE_SPAN_OUTER, &j), 0);
    ASSERT_NEAR(j.generation_tokens.delta, 100, 0);
    scrape_series_reset(&s);

    const char *bad = "{\"mono_ns\":1,\"dur_ns\":1,\"ok\":true,\"engine\":\"vllm\","
                      "\"generation_tokens_total\":5,\"series\":{\"generation_tokens_total\":"
                      "[{\"name\":\"g\"}]}}";
    assert_int_equal(scrape_line_parse(bad, strlen(bad), &p, &gpu, NULL, 0, err, sizeof err),
                     LL_E_PROTO);
    assert_non_null(strstr(err, "series: generation_tokens_total: expected"));
    scrape_point_reset(&p);
}

/* A line's process_start_s (process_start_time_seconds) comes back, so
 * that a merge sees the restart the run saw: 100 -> 200, a restart,
 * 250 is 100 + 250, not 150. A bad one is refused, naming it. */
static void test_process_start_read_back(void **state)
{
    (void)state;
    static const struct {
        double gen, start_s;
    } pts[3] = {{100, 1700000000.25}, {200, 1700000000.25}, {250, 1700000002.5}};
    struct scrape_series s;
    struct scrape_point p;
    int gpu;
    char line[256], err[200];
    scrape_series_init(&s);
    for (int i = 0; i < 3; i++) {
        int n = snprintf(line, sizeof line,
                         "{\"mono_ns\":%d000000000,\"dur_ns\":1,\"ok\":true,\"engine\":\"vllm\","
                         "\"generation_tokens_total\":%g,\"process_start_s\":%.15g}",
                         i + 1, pts[i].gen, pts[i].start_s);
        assert_int_equal(scrape_line_parse(line, (size_t)n, &p, &gpu, NULL, 0, err, sizeof err), 0);
        ASSERT_NEAR(p.process_start_s, pts[i].start_s, 1e-6);
        assert_int_equal(scrape_series_add(&s, &p), 0);
    }
    struct scrape_join j;
    assert_int_equal(scrape_series_join(&s, 0, 4 * S, SCRAPE_SPAN_OUTER, &j), 0);
    ASSERT_NEAR(j.generation_tokens.delta, 350, 0);
    assert_int_equal(j.restarts, 1);
    scrape_series_reset(&s);

    const char *bad = "{\"mono_ns\":1,\"dur_ns\":1,\"ok\":true,\"engine\":\"vllm\","
                      "\"process_start_s\":\"x\"}";
    assert_int_equal(scrape_line_parse(bad, strlen(bad), &p, &gpu, NULL, 0, err, sizeof err),
                     LL_E_PROTO);
    assert_non_null(strstr(err, "process_start_s: expected"));
    scrape_point_reset(&p);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_line_url),
        cmocka_unit_test(test_process_start_read_back),
        cmocka_unit_test(test_file_two_sources),
        cmocka_unit_test(test_ttft_too_many_bounds),
        cmocka_unit_test(test_join_guards_buckets),
        cmocka_unit_test(test_series_read_back),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
