/* Unit tests for promapi.c: the --prometheus-selector check, the query and
 * its URL, the HTTP API answer's parser, and the answer written back out
 * as text that scrape.c reads to the same sums a direct scrape gives. */
#include "test.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "metrics/promapi.h"
#include "metrics/promsource.h"
#include "metrics/scrape.h"
#include "util/strbuf.h"
#include "util/util.h"

static void check_ok(const char *sel, const char *want_inner)
{
    char inner[256], err[256] = "";
    int rc = promapi_selector_check(sel, inner, sizeof inner, err, sizeof err);
    if (rc != 0)
        fail_msg("selector %s refused: %s", sel, err);
    assert_string_equal(inner, want_inner);
}

static void check_bad(const char *sel, const char *want_in_err)
{
    char inner[256], err[256] = "";
    assert_int_equal(promapi_selector_check(sel, inner, sizeof inner, err, sizeof err), LL_E_INVAL);
    if (!strstr(err, want_in_err))
        fail_msg("selector %s: error \"%s\" lacks \"%s\"", sel, err, want_in_err);
    assert_non_null(strstr(err, "--prometheus-selector"));
    assert_null(strchr(err, '\n'));
}

static void test_selector(void **state)
{
    (void)state;
    check_ok("{}", "");
    check_ok(" { } ", "");
    check_ok("{job=\"sim\"}", "job=\"sim\"");
    check_ok("{namespace=\"llm\", job=~\"vllm|sgl\" ,pod!=\"x\",}",
             "namespace=\"llm\", job=~\"vllm|sgl\" ,pod!=\"x\"");
    check_ok("{a!~\"x\\\"y\"}", "a!~\"x\\\"y\"");
    check_bad("job=\"sim\"", "braces");
    check_bad("{job}", "byte 4");
    check_bad("{job=sim}", "double-quoted");
    check_bad("{job=\"sim}", "unterminated");
    check_bad("{job=\"a\" pod=\"b\"}", "',' or '}'");
    check_bad("{9=\"a\"}", "label name");
    check_bad("{job=\"a\"} x", "after '}'");
    check_bad("{job==\"a\"}", "double-quoted");
    char inner[4], err[128];
    assert_int_equal(promapi_selector_check("{job=\"sim\"}", inner, sizeof inner, err, sizeof err),
                     LL_E_RANGE);
    assert_true(promapi_label_name_ok("pod"));
    assert_true(promapi_label_name_ok("_x9"));
    assert_false(promapi_label_name_ok("__name__"));
    assert_false(promapi_label_name_ok("9a"));
    assert_false(promapi_label_name_ok("a-b"));
    assert_false(promapi_label_name_ok(""));
}

static void test_query_and_url(void **state)
{
    (void)state;
    const char *names[] = {"vllm:num_requests_waiting", "x_bucket"};
    struct strbuf q, u;
    strbuf_init(&q);
    strbuf_init(&u);
    promapi_query(names, 2, "job=\"sim\"", &q);
    assert_string_equal(q.data,
                        "{__name__=~\"vllm:num_requests_waiting|x_bucket\",job=\"sim\"}[30s]");
    promapi_url("http://p:9090//", "{a=\"b c\"}", 1700000000.25, &u);
    assert_string_equal(u.data, "http://p:9090/api/v1/query?query=%7Ba%3D%22b%20c%22%7D"
                                "&time=1700000000.250");
    strbuf_clear(&q);
    promapi_query(names, 1, "", &q);
    assert_string_equal(q.data, "{__name__=~\"vllm:num_requests_waiting\"}[30s]");
    strbuf_free(&q);
    strbuf_free(&u);
}

/* Two replicas of a vLLM-named server as Prometheus answers a range
 * selector: samples one second apart, the latest last. */
static const char matrix[] =
    "{\"status\":\"success\",\"data\":{\"resultType\":\"matrix\",\"result\":["
    "{\"metric\":{\"__name__\":\"vllm:num_requests_waiting\",\"job\":\"sim\",\"pod\":\"a\"},"
    "\"values\":[[100,\"1\"],[101,\"3\"],[102,\"4\"]]},"
    "{\"metric\":{\"__name__\":\"vllm:num_requests_waiting\",\"job\":\"sim\",\"pod\":\"b\"},"
    "\"values\":[[100.5,\"0\"],[101.5,\"0\"]]},"
    "{\"metric\":{\"__name__\":\"vllm:generation_tokens_total\",\"pod\":\"a\"},"
    "\"values\":[[101,\"100\"],[102,\"150\"]]},"
    "{\"metric\":{\"__name__\":\"vllm:generation_tokens_total\",\"pod\":\"b\"},"
    "\"values\":[[101.5,\"70\"]]},"
    "{\"metric\":{\"__name__\":\"vllm:gpu_cache_usage_perc\",\"pod\":\"a\",\"q\":\"x\\\"y\"},"
    "\"values\":[[102,\"0.5\"]]},"
    "{\"metric\":{\"__name__\":\"vllm:gpu_cache_usage_perc\",\"pod\":\"b\"},"
    "\"values\":[[101.5,\"0.25\"]]},"
    "{\"metric\":{\"__name__\":\"vllm:num_requests_running\",\"pod\":\"b\"},\"values\":[]},"
    "{\"metric\":{\"__name__\":\"vllm:num_requests_running\",\"pod\":\"a\"},"
    "\"values\":[[102,\"NaN\"]]}"
    "]}}";

/* promapi_answer_parse of body into *a, which must succeed; a failure
 * prints the parser's message. */
static void parse_ok(const char *body, struct promapi_answer *a)
{
    char err[256] = "";
    int rc = promapi_answer_parse(body, strlen(body), a, err, sizeof err);
    if (rc != 0)
        fail_msg("promapi_answer_parse: %d, \"%s\"", rc, err);
}

static void test_answer_matrix(void **state)
{
    (void)state;
    struct promapi_answer a;
    parse_ok(matrix, &a);
    assert_int_equal(a.n, 7); /* the series with no sample is skipped */
    assert_string_equal(a.series[0].name, "vllm:num_requests_waiting");
    ASSERT_NEAR(a.series[0].value, 4, 0);
    ASSERT_NEAR(a.series[0].t_s, 102, 0);
    ASSERT_NEAR(a.series[0].interval_s, 1, 1e-12);
    assert_true(isnan(a.series[3].interval_s));
    assert_string_equal(promapi_series_label(&a.series[0], "pod"), "a");
    assert_null(promapi_series_label(&a.series[0], "__name__"));
    assert_true(isnan(a.series[6].value));

    const char *g[4];
    assert_int_equal(promapi_groups(&a, "pod", g, 4), 2);
    assert_string_equal(g[0], "a");
    assert_string_equal(g[1], "b");
    assert_int_equal(promapi_groups(&a, "pod", g, 1), 1);
    assert_int_equal(promapi_groups(&a, "instance", g, 4), 0);

    double age, iv;
    promapi_staleness(&a, "pod", NULL, 103, &age, &iv);
    ASSERT_NEAR(age, 1.5, 1e-12); /* pod b's latest, at 101.5 */
    ASSERT_NEAR(iv, 1, 1e-12);
    promapi_staleness(&a, "pod", "a", 103, &age, NULL);
    ASSERT_NEAR(age, 1, 1e-12);

    /* Written back out and read as a scrape: the aggregate sums the
     * replicas' queues and counters and takes the larger KV usage; each
     * replica alone is its own. */
    struct strbuf b;
    strbuf_init(&b);
    promapi_render(&a, "pod", NULL, &b);
    assert_non_null(strstr(b.data, "q=\"x\\\"y\""));
    struct scrape_point p;
    assert_int_equal(scrape_point_from_body(b.data, b.len, 1, 2, &p, NULL), 0);
    assert_true(p.ok);
    assert_int_equal(p.engine, ENGINE_VLLM);
    ASSERT_NEAR(p.value[ENGINE_M_WAITING], 4, 0);
    ASSERT_NEAR(p.value[ENGINE_M_GENERATION_TOKENS], 220, 0);
    ASSERT_NEAR(p.value[ENGINE_M_KV_USAGE], 0.5, 0);
    scrape_point_reset(&p);
    strbuf_clear(&b);
    promapi_render(&a, "pod", "b", &b);
    assert_int_equal(scrape_point_from_body(b.data, b.len, 1, 2, &p, NULL), 0);
    ASSERT_NEAR(p.value[ENGINE_M_WAITING], 0, 0);
    ASSERT_NEAR(p.value[ENGINE_M_GENERATION_TOKENS], 70, 0);
    ASSERT_NEAR(p.value[ENGINE_M_KV_USAGE], 0.25, 0);
    scrape_point_reset(&p);
    strbuf_free(&b);
    promapi_answer_reset(&a);
    promapi_answer_reset(&a); /* twice is safe */
}

static void test_answer_vector_and_errors(void **state)
{
    (void)state;
    struct promapi_answer a;
    char err[256];
    const char *vec = "{\"status\":\"success\",\"data\":{\"resultType\":\"vector\",\"result\":["
                      "{\"metric\":{\"__name__\":\"up\"},\"value\":[5,\"+Inf\"]}]}}";
    parse_ok(vec, &a);
    assert_int_equal(a.n, 1);
    assert_true(isinf(a.series[0].value));
    promapi_answer_reset(&a);

    static const struct {
        const char *body, *want;
    } bad[] = {
        {"", "not a JSON object"},
        {"[]", "not a JSON object"},
        {"{\"status\":\"error\",\"errorType\":\"bad_data\",\"error\":\"parse error at char 3\"}",
         "bad_data: parse error at char 3"},
        {"{\"status\":\"success\",\"data\":{\"resultType\":\"scalar\",\"result\":[1,\"2\"]}}",
         "matrix or vector"},
        {"{\"status\":\"success\",\"data\":{\"resultType\":\"vector\",\"result\":[{\"metric\":{},"
         "\"value\":[1,2]}]}}",
         "malformed"},
        {"{\"status\":\"success\",\"data\":{\"resultType\":\"vector\",\"result\":[{\"metric\":{"
         "\"a\":"
         "1},\"value\":[1,\"2\"]}]}}",
         "malformed"},
        {"{\"status\":\"success\",\"data\":{\"resultType\":\"matrix\",\"result\":[{\"metric\":{},"
         "\"values\":[[1,\"2\"],[2,\"x\"]]}]}}",
         "malformed"},
        {"{\"status\":\"weird\"}", "status"},
    };
    for (size_t i = 0; i < LL_ARRAY_LEN(bad); i++) {
        err[0] = '\0';
        assert_int_equal(
            promapi_answer_parse(bad[i].body, strlen(bad[i].body), &a, err, sizeof err),
            LL_E_PROTO);
        if (!strstr(err, bad[i].want))
            fail_msg("answer %zu: \"%s\" lacks \"%s\"", i, err, bad[i].want);
        assert_int_equal(a.n, 0);
        assert_null(a.series);
    }
}

/* A GPU whose exporter was replaced: the old instance's series stopped
 * 20 s ago, the new one's is fresh, both still in the 30 s range. The
 * old one is dropped: one GPU at 100 W, dated by the new series. */
static const char replaced[] =
    "{\"status\":\"success\",\"data\":{\"resultType\":\"matrix\",\"result\":["
    "{\"metric\":{\"__name__\":\"DCGM_FI_DEV_POWER_USAGE\",\"gpu\":\"0\","
    "\"UUID\":\"GPU-0\",\"instance\":\"old:9400\"},"
    "\"values\":[[78,\"100\"],[79,\"100\"],[80,\"100\"]]},"
    "{\"metric\":{\"__name__\":\"DCGM_FI_DEV_POWER_USAGE\",\"gpu\":\"0\","
    "\"UUID\":\"GPU-0\",\"instance\":\"new:9400\"},"
    "\"values\":[[98,\"100\"],[99,\"100\"],[100,\"100\"]]}"
    "]}}";

static void test_drop_stale(void **state)
{
    (void)state;
    struct promapi_answer a;
    parse_ok(replaced, &a);
    assert_int_equal(a.n, 2);
    assert_int_equal(promapi_drop_stale(&a, 5), 1);
    assert_int_equal(a.n, 1);
    assert_string_equal(promapi_series_label(&a.series[0], "instance"), "new:9400");
    double age;
    promapi_staleness(&a, "instance", NULL, 100.5, &age, NULL);
    ASSERT_NEAR(age, 0.5, 1e-12); /* not 20.5: the point is not dated back */
    struct strbuf b;
    strbuf_init(&b);
    promapi_render(&a, "instance", NULL, &b);
    struct scrape_point p;
    assert_int_equal(scrape_point_from_body_as(ENGINE_DCGM, b.data, b.len, 1, 2, &p, NULL), 0);
    assert_int_equal(p.gpus, 1);
    ASSERT_NEAR(p.value[ENGINE_M_GPU_POWER], 100, 1e-9);
    scrape_point_reset(&p);
    strbuf_free(&b);
    /* Nothing more to drop; nor in the answer of test_answer_matrix,
     * whose replicas are half an interval apart. */
    assert_int_equal(promapi_drop_stale(&a, 5), 0);
    promapi_answer_reset(&a);
    parse_ok(matrix, &a);
    assert_int_equal(promapi_drop_stale(&a, 5), 0);
    assert_int_equal(a.n, 7);
    promapi_answer_reset(&a);
    /* One sample a series: the source's interval decides. */
    static const char single[] =
        "{\"status\":\"success\",\"data\":{\"resultType\":\"vector\",\"result\":["
        "{\"metric\":{\"__name__\":\"DCGM_FI_DEV_POWER_USAGE\",\"instance\":\"a\"},"
        "\"value\":[90,\"1\"]},"
        "{\"metric\":{\"__name__\":\"DCGM_FI_DEV_POWER_USAGE\",\"instance\":\"b\"},"
        "\"value\":[100,\"1\"]}]}}";
    parse_ok(single, &a);
    assert_int_equal(promapi_drop_stale(&a, 5), 0); /* 10 s: within 2 x 5 s */
    assert_int_equal(promapi_drop_stale(&a, 1), 1);
    assert_string_equal(promapi_series_label(&a.series[0], "instance"), "b");
    promapi_answer_reset(&a);
}

/* The routing-imbalance finding: one replica queued while another idled. */
static void test_imbalance(void **state)
{
    (void)state;
    struct promsource_replica r[3];
    memset(r, 0, sizeof r);
    const double waiting[3] = {0.05, 4.0, 0.0};
    for (int i = 0; i < 3; i++) {
        snprintf(r[i].name, sizeof r[i].name, "pod-%d", i);
        r[i].j.waiting.present = 1;
        r[i].j.waiting.mean = waiting[i];
    }
    char buf[300];
    assert_int_equal(promsource_imbalance(r, 3, buf, sizeof buf), 1);
    assert_non_null(strstr(buf, "replica pod-1 queued (mean 4.00 waiting) while pod-2"));
    /* All queue alike: a busy fleet, not a routing problem. */
    r[0].j.waiting.mean = 3.5;
    r[2].j.waiting.mean = 3.9;
    assert_int_equal(promsource_imbalance(r, 3, buf, sizeof buf), 0);
    assert_string_equal(buf, "");
    /* Under one waiting on average is no queue. */
    r[0].j.waiting.mean = 0;
    r[1].j.waiting.mean = 0.9;
    r[2].j.waiting.mean = 0;
    assert_int_equal(promsource_imbalance(r, 3, buf, sizeof buf), 0);
    /* A replica with no scrape in the window is not "idle". */
    r[1].j.waiting.mean = 5;
    r[0].rc = LL_E_NOTFOUND;
    r[2].j.waiting.present = 0;
    assert_int_equal(promsource_imbalance(r, 3, buf, sizeof buf), 0);
    assert_int_equal(promsource_imbalance(r, 1, buf, sizeof buf), 0);
    assert_int_equal(promsource_imbalance(r, 0, buf, sizeof buf), 0);
}

UNIT_TESTS(test_selector, test_query_and_url, test_answer_matrix, test_answer_vector_and_errors,
           test_drop_stale, test_imbalance)
