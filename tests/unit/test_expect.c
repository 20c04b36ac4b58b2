/* test_expect.c: --expect (measure/expect.c): the parser's items, units
 * and errors, and the check of a summary's figures against each bound. */
#include "test.h"
#include "testutil.h"

#include <jansson.h>
#include <math.h>
#include <string.h>

#include "measure/expect.h"
#include "util/util.h"

/* Each bad item: one line that names --expect and the item. */
static const struct bad_input bad_items[] = {
    {"", "--expect: empty"},
    {"ttft_p99", "\"ttft_p99\" is not METRIC OP VALUE"},
    {"ttft_p99<500", "\"ttft_p99<500\": the value of ttft_p99 must be a duration"},
    {"ttft_p98<500ms", "no metric \"ttft_p98\""},
    {"ttft_p999<1s", "e2e_ with p50, p90, p95, p99 or p99_9;"}, /* the refusal names them */
    {"<500ms", "no metric before"},
    {"error_rate<1", "must be a percentage"},
    {"error_rate<101%", "must be a percentage"},
    {"goodput>=20", "must be a rate"},
    {"error_rate_nosuch<1%", "no metric \"error_rate_nosuch\""},
    {"error_rate_ok<1%", "no metric \"error_rate_ok\""},
    {"ttft_p99<500ms,", "trailing comma"},
    {"ttft_p99<500ms,,e2e_p50<1s", "an empty item"},
    {"ttft_p99<-5ms", "must be a duration"},
    {"goodput=>5/s", "one of < <= > >="},
    {"goodput==5/s", "one of < <= > >="},
};

/* expect_parse of in into ctx, a struct expect_set: its message must name
 * --expect first. */
static int parse_spec(void *ctx, const char *in, char *err, size_t errlen)
{
    int rc = expect_parse(in, ctx, err, errlen);
    if (rc != 0 && strncmp(err, "--expect: ", 10) != 0)
        fail_msg("\"%s\": \"%s\" does not start with --expect", in, err);
    return rc;
}

static void test_parse(void **state)
{
    struct expect_set s;
    char err[512];
    assert_int_equal(expect_parse("ttft_p99<500ms,error_rate<1%,goodput>=20/s,itl_p50<=1.5s,"
                                  "error_rate_http_5xx<=0.5%,achieved_rate>9.5/s,tpot_p90<800us",
                                  &s, err, sizeof err),
                     0);
    assert_int_equal(s.n, 7);
    assert_string_equal(s.item[0].metric, "ttft_p99");
    assert_int_equal(s.item[0].op, EXPECT_LT);
    assert_int_equal(s.item[0].unit, EXPECT_NS);
    assert_true(s.item[0].bound == 500e6);
    assert_int_equal(s.item[1].unit, EXPECT_SHARE);
    assert_true(fabs(s.item[1].bound - 0.01) < 1e-12);
    assert_int_equal(s.item[2].op, EXPECT_GE);
    assert_int_equal(s.item[2].unit, EXPECT_RATE);
    assert_true(s.item[2].bound == 20);
    assert_int_equal(s.item[3].op, EXPECT_LE);
    assert_true(s.item[3].bound == 1.5e9);
    assert_string_equal(s.item[4].metric, "error_rate_http_5xx");
    assert_int_equal(s.item[5].op, EXPECT_GT);
    assert_true(s.item[6].bound == 800e3);
    assert_string_equal(s.item[0].text, "ttft_p99<500ms");
    /* Blanks around items and the operator, as a user types a list (the
     * parent: no metric " error_rate"); the item is kept without them. */
    struct expect_set sp;
    assert_int_equal(
        expect_parse("ttft_p99 < 500ms, error_rate<=1% ,\tgoodput >= 20/s", &sp, err, sizeof err),
        0);
    assert_int_equal(sp.n, 3);
    assert_string_equal(sp.item[0].metric, "ttft_p99");
    assert_string_equal(sp.item[0].text, "ttft_p99<500ms");
    assert_true(sp.item[0].bound == 500e6);
    assert_string_equal(sp.item[1].text, "error_rate<=1%");
    assert_string_equal(sp.item[2].text, "goodput>=20/s");
    assert_int_equal(sp.item[2].op, EXPECT_GE);
    /* One item more than the set holds is refused before it is copied
     * (d1d212e copied it into item[EXPECT_MAX] first, over the set's
     * count: found by fuzz_lists under ASan). */
    char many[EXPECT_MAX * 16 + 16] = "";
    for (int i = 0; i <= EXPECT_MAX; i++)
        strcat(many, i ? ",ttft_p99<1s" : "ttft_p99<1s");
    assert_int_equal(expect_parse(many, &sp, err, sizeof err), -1);
    assert_string_equal(err, "--expect: more than 32 items");
    many[strlen(many) - strlen(",ttft_p99<1s")] = '\0';
    assert_int_equal(expect_parse(many, &sp, err, sizeof err), 0);
    assert_int_equal(sp.n, EXPECT_MAX);
    assert_non_null(expect_needs_slo(&s));
    assert_int_equal(expect_parse("ttft_p50<1s", &s, err, sizeof err), 0);
    assert_null(expect_needs_slo(&s));

    test_refusals(parse_spec, &s, -1, bad_items, LL_ARRAY_LEN(bad_items));
}

static json_t *summary(void)
{
    json_error_t je;
    json_t *j = json_loads(
        "{\"latency_ns\": {\"ttft\": {\"count\": 10, \"p50\": 1e7, \"p90\": 2e7, \"p99\": 6e8},"
        " \"itl_request\": {\"count\": 10, \"p50\": 4e6, \"p90\": 5e6, \"p99\": 6e6},"
        " \"tpot\": {\"count\": 0, \"p50\": 0, \"p90\": 0, \"p99\": 0}},"
        " \"requests\": {\"completed\": 200, \"failed\": 3, \"by_kind\": {\"http_5xx\": 2,"
        " \"timeout_total\": 1}},"
        " \"throughput\": {\"goodput_per_s\": 19.5, \"attainment\": 0.97, \"send_rate_per_s\": 20,"
        " \"output_tokens_per_s\": 300}}",
        0, &je);
    assert_non_null(j);
    return j;
}

static void test_check(void **state)
{
    struct expect_set s;
    char err[512];
    json_t *sum = summary();
    assert_int_equal(expect_parse("ttft_p99<500ms,ttft_p50<500ms,error_rate<1%,goodput>=20/s,"
                                  "itl_p90<=5ms,error_rate_http_5xx<=1%,tpot_p50<1s,"
                                  "attainment>96%,output_tokens_per_s>=300/s",
                                  &s, err, sizeof err),
                     0);
    size_t failed = 99;
    char *buf = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&buf, &len);
    struct expect_figures fig;
    expect_figures_from_summary(sum, &fig);
    json_t *r = expect_eval(&s, &fig, f, NULL, &failed);
    fclose(f);
    /* ttft_p99 600ms, error rate 1.5%, goodput 19.5/s, tpot none: 4 fail. */
    static const char *const want[] = {"fail", "pass", "fail", "fail", "pass",
                                       "pass", "fail", "pass", "pass"};
    assert_int_equal(json_array_size(r), 9);
    for (size_t i = 0; i < 9; i++) {
        json_t *o = json_array_get(r, i);
        if (strcmp(json_string_value(json_object_get(o, "result")), want[i]) != 0)
            fail_msg("%s: %s", s.item[i].text, json_string_value(json_object_get(o, "result")));
    }
    assert_int_equal(failed, 4);
    assert_true(json_real_value(json_object_get(json_array_get(r, 2), "value")) == 0.015);
    assert_true(json_is_null(json_object_get(json_array_get(r, 6), "value")));
    /* One line for each failure, nothing else. */
    assert_string_equal(buf, "llmload: --expect: ttft_p99 is 600.00ms, not < 500ms\n"
                             "llmload: --expect: error_rate is 1.5%, not < 1%\n"
                             "llmload: --expect: goodput is 19.5/s, not >= 20/s\n"
                             "llmload: --expect: tpot_p50 has no value, not < 1s\n");
    free(buf);
    json_decref(r);

    /* where names the step; nothing printed without f. */
    buf = NULL;
    f = open_memstream(&buf, &len);
    assert_int_equal(expect_parse("ttft_p99<=600ms,ttft_p99<600ms", &s, err, sizeof err), 0);
    r = expect_eval(&s, &fig, f, "step 2 (20 req/s)", &failed);
    fclose(f);
    assert_int_equal(failed, 1);
    assert_non_null(strstr(buf, "--expect: step 2 (20 req/s): ttft_p99 is"));
    free(buf);
    json_decref(r);
    json_decref(sum);

    /* The spec again, as run.json keeps it. */
    char spec[256];
    assert_int_equal(expect_parse("ttft_p99<1s,goodput>=2/s", &s, err, sizeof err), 0);
    expect_format(&s, spec, sizeof spec);
    assert_string_equal(spec, "ttft_p99<1s,goodput>=2/s");
}

/* expect_judge_summary writes summary.json's "expect" in place: the
 * results of each threshold on the summary's own figures, or null with
 * none (run.json's spec judged again by `llmload report` reads the same). */
static void test_judge_summary(void **state)
{
    struct expect_set s;
    char err[512];
    json_t *sum = summary();
    assert_int_equal(expect_parse("ttft_p99<500ms,ttft_p50<500ms", &s, err, sizeof err), 0);
    assert_int_equal(expect_judge_summary(&s, sum, NULL), 1);
    json_t *r = json_object_get(sum, "expect");
    assert_int_equal(json_array_size(r), 2);
    assert_string_equal(json_string_value(json_object_get(json_array_get(r, 0), "result")), "fail");
    assert_string_equal(json_string_value(json_object_get(json_array_get(r, 1), "result")), "pass");
    s.n = 0;
    assert_int_equal(expect_judge_summary(&s, sum, NULL), 0);
    assert_true(json_is_null(json_object_get(sum, "expect")));
    json_decref(sum);
}

/* A figure by its name (compare's rows read them here too): each name
 * picks its own field, an error rate is of the completed requests, and a
 * name of nothing is NAN. */
/* Every percentile summary.json's latency_ns carries is a metric, read
 * from its key: p95 and p99_9 beside p50, p90 and p99. */
static void test_summary_percentiles(void **state)
{
    json_error_t je;
    json_t *sum = json_loads("{\"latency_ns\": {\"ttft\": {\"count\": 10, \"p50\": 1e7, "
                             "\"p90\": 2e7, \"p95\": 3e8, \"p99\": 6e8, \"p99_9\": 9e8}}}",
                             0, &je);
    assert_non_null(sum);
    struct expect_set s;
    char err[512];
    assert_int_equal(expect_parse("ttft_p95<250ms,ttft_p95<400ms,ttft_p99_9<1s,ttft_p99.9<=800ms",
                                  &s, err, sizeof err),
                     0);
    struct expect_figures fig;
    expect_figures_from_summary(sum, &fig);
    size_t failed = 0;
    json_t *r = expect_eval(&s, &fig, NULL, NULL, &failed);
    static const char *const want[] = {"fail", "pass", "pass", "fail"};
    assert_int_equal(json_array_size(r), 4);
    for (size_t i = 0; i < 4; i++)
        assert_string_equal(json_string_value(json_object_get(json_array_get(r, i), "result")),
                            want[i]);
    assert_int_equal(failed, 2);
    json_decref(r);
    json_decref(sum);
}

static void test_figure_by_name(void **state)
{
    struct expect_figures f = {.goodput = 7,
                               .attainment = 0.5,
                               .achieved_rate = 9,
                               .output_tokens_per_s = 11,
                               .completed = 200,
                               .failed = 10,
                               .by_kind[REC_TIMEOUT_FIRST_TOKEN] = 4};
    for (int i = 0; i < EXPECT_NLAT; i++)
        for (int p = 0; p < EXPECT_NPCT; p++)
            f.lat_ns[i][p] = 1000.0 * (i + 1) + p;
    /* Each figure by its name, compared exactly; a failure names it. */
    static const struct {
        const char *name;
        double want;
    } figures[] = {
        {"ttft_p50", 1000},   {"tpot_p90", 2001},
        {"ttft_p95", 1002},   {"itl_p99", 3003},
        {"e2e_p99", 4003},    {"e2e_p99_9", 4004},
        {"e2e_p99.9", 4004}, /* as the table heads it */
        {"goodput", 7},       {"attainment", 0.5},
        {"achieved_rate", 9}, {"output_tokens_per_s", 11},
        {"error_rate", 0.05}, {"error_rate_timeout_first_token", 0.02},
    };
    for (size_t i = 0; i < LL_ARRAY_LEN(figures); i++) {
        double got = expect_figure(figures[i].name, &f);
        if (!(got == figures[i].want))
            fail_msg("expect_figure(\"%s\") = %.17g, want %.17g", figures[i].name, got,
                     figures[i].want);
    }
    assert_int_equal(expect_error_kind("error_rate_timeout_first_token"), REC_TIMEOUT_FIRST_TOKEN);
    assert_int_equal(expect_error_kind("error_rate_ok"), -1);
    assert_int_equal(expect_error_kind("error_rate"), -1);
    assert_true(isnan(expect_figure("error_rate_ok", &f)));
    assert_true(isnan(expect_figure("ttft_p98", &f)));
    assert_true(isnan(expect_figure("capacity", &f)));
    f.completed = 0;
    assert_true(isnan(expect_figure("error_rate", &f)));
}

/* The client's own cancellations are not errors: an error rate is over
 * the requests it let end, and the cancellations' own share over every
 * completed request. */
static void test_figure_cancelled(void **state)
{
    (void)state;
    /* 200 completed: 50 cancelled by the workload, 3 http_5xx. */
    struct expect_figures f = {
        .completed = 200, .failed = 53, .by_kind[REC_CANCELLED] = 50, .by_kind[REC_HTTP_5XX] = 3};
    ASSERT_NEAR(expect_figure("error_rate", &f), 3.0 / 150, 1e-12);
    ASSERT_NEAR(expect_figure("error_rate_http_5xx", &f), 3.0 / 150, 1e-12);
    ASSERT_NEAR(expect_figure("error_rate_cancelled", &f), 50.0 / 200, 1e-12);
    /* Every request cancelled: the client let none end, so there is no
     * error rate (it read 0, and error_rate<1% passed a run the server
     * ended nothing of), as with none completed; the cancellations' own
     * share is 100%. */
    struct expect_figures all = {.completed = 20, .failed = 20, .by_kind[REC_CANCELLED] = 20};
    assert_true(isnan(expect_figure("error_rate", &all)));
    assert_true(isnan(expect_figure("error_rate_http_5xx", &all)));
    assert_true(expect_figure("error_rate_cancelled", &all) == 1);
    struct expect_set set;
    char err[200];
    assert_int_equal(expect_parse("error_rate<1%", &set, err, sizeof err), 0);
    size_t failed = 0;
    json_t *res = expect_eval(&set, &all, NULL, NULL, &failed);
    assert_int_equal(failed, 1);
    assert_true(json_is_null(json_object_get(json_array_get(res, 0), "value")));
    json_decref(res);
}

/* A share at exactly its bound is at it: 7 errors in 1000 is "<= 0.7%"
 * and not "> 0.7%", 999 met of 1000 is ">= 99.9%" and not "< 99.9%",
 * though as doubles 7 / 1000 > 0.7 / 100 and 999 / 1000 < 99.9 / 100. */
static void test_share_at_bound(void **state)
{
    (void)state;
    struct expect_figures f = {.attainment = 999.0 / 1000, .completed = 1000, .failed = 7};
    struct expect_set set;
    char err[200];
    assert_int_equal(expect_parse("error_rate<=0.7%,attainment>=99.9%,error_rate>0.7%,"
                                  "attainment<99.9%,error_rate<0.7%",
                                  &set, err, sizeof err),
                     0);
    size_t failed = 0;
    json_t *res = expect_eval(&set, &f, NULL, NULL, &failed);
    static const char *const want[] = {"pass", "pass", "fail", "fail", "fail"};
    for (size_t i = 0; i < 5; i++) {
        const char *got = json_string_value(json_object_get(json_array_get(res, i), "result"));
        if (strcmp(got, want[i]) != 0)
            fail_msg("%s: %s", set.item[i].text, got);
    }
    assert_int_equal(failed, 3);
    json_decref(res);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_parse),          cmocka_unit_test(test_check),
        cmocka_unit_test(test_judge_summary),  cmocka_unit_test(test_summary_percentiles),
        cmocka_unit_test(test_figure_by_name), cmocka_unit_test(test_figure_cancelled),
        cmocka_unit_test(test_share_at_bound),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
