/* Unit tests for engines.c: engine detection and the metric-name map,
 * against small hand-written scrapes of each engine and the real llama.cpp
 * capture. */
#include "test.h"
#include "testutil.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "metrics/engines.h"
#include "metrics/prom.h"
#include "util/util.h"

static struct prom_scrape *load(const char *name)
{
    size_t len;
    char *buf = test_read_data("prom", name, &len);
    struct prom_scrape *s = NULL;
    assert_int_equal(prom_scrape_parse(buf, len, &s), 0);
    assert_int_equal(s->stats.bad_lines, 0);
    free(buf);
    return s;
}

static void test_detect_each_engine(void **state)
{
    static const struct {
        const char *file;
        enum engine_kind want;
    } cases[] = {
        {"vllm.txt", ENGINE_VLLM},
        {"sglang.txt", ENGINE_SGLANG},
        {"tgi.txt", ENGINE_TGI},
        {"llamacpp-metrics.txt", ENGINE_LLAMACPP},
        {"triton.txt", ENGINE_TRITON},
        {"trtllm.txt", ENGINE_TRTLLM},
        {"openmetrics.txt", ENGINE_UNKNOWN},
    };
    for (size_t i = 0; i < LL_ARRAY_LEN(cases); i++) {
        struct prom_scrape *s = load(cases[i].file);
        enum engine_kind k = engines_detect(s);
        if (k != cases[i].want)
            fail_msg("%s: detected %s, want %s", cases[i].file,
                     engines_kind_name(k), engines_kind_name(cases[i].want));
        prom_scrape_free(s);
    }
    assert_int_equal(engines_detect(NULL), ENGINE_UNKNOWN);

    /* A process_ metric or two beside vLLM's does not change the vote. */
    const char *mixed = "process_cpu_seconds_total 3\nprocess_open_fds 9\n"
                        "vllm:num_requests_running 1\nvllm:num_requests_waiting 0\n"
                        "vllm:prompt_tokens_total 1\n";
    struct prom_scrape *s = test_prom_parse(mixed);
    assert_int_equal(engines_detect(s), ENGINE_VLLM);
    prom_scrape_free(s);
}

/* want[m] < 0 means "absent". */
static void check_values(const char *file, enum engine_kind k,
                         const double want[ENGINE_MEANING_COUNT])
{
    struct prom_scrape *s = load(file);
    struct engine_values v;
    assert_int_equal(engines_extract(k, s, &v), 0);
    for (int m = ENGINE_M_WAITING; m < ENGINE_MEANING_COUNT; m++) {
        if (m == ENGINE_M_TTFT) {
            assert_int_equal(v.present[m], 0);
            continue;
        }
        if (want[m] < 0) {
            if (v.present[m])
                fail_msg("%s: %s present (%g), want absent", file,
                         engines_meaning_name((enum engine_meaning)m),
                         v.value[m]);
            continue;
        }
        if (!v.present[m])
            fail_msg("%s: %s absent, want %g", file,
                     engines_meaning_name((enum engine_meaning)m), want[m]);
        if (!(fabs(v.value[m] - want[m]) <= 1e-9 * fabs(want[m])))
            fail_msg("%s: %s = %.9g, want %.9g", file,
                     engines_meaning_name((enum engine_meaning)m), v.value[m], want[m]);
        assert_non_null(v.source[m]);
        assert_int_equal(v.source[m]->engine, k);
    }
    prom_scrape_free(s);
}

#define ABSENT (-1.0)

/* What engines_extract finds in each capture, in the order of cols;
 * ABSENT: not there. TTFT is a histogram, never a value: check_values
 * requires it absent for every engine. */
static const enum engine_meaning cols[] = {
    ENGINE_M_WAITING,       ENGINE_M_RUNNING,           ENGINE_M_KV_USAGE,
    ENGINE_M_PREEMPTIONS,   ENGINE_M_PROMPT_TOKENS,     ENGINE_M_GENERATION_TOKENS,
    ENGINE_M_REQUEST_SUCCESS,
};

static const struct extract_case {
    const char *file;
    enum engine_kind kind;
    double want[LL_ARRAY_LEN(cols)];
} extract_cases[] = {
    /* finished: stop 90 + length 10 + abort 2 */
    {"vllm.txt", ENGINE_VLLM, {3, 7, 0.42, 5, 12345, 6789, 102}},
    {"sglang.txt", ENGINE_SGLANG, {2826, 162, 0.28, 48, 8128902, 7557572, ABSENT}},
    {"tgi.txt", ENGINE_TGI, {4, 16, ABSENT, ABSENT, 64000, 32000, 250}},
    /* this build does not send KV usage */
    {"llamacpp-metrics.txt", ENGINE_LLAMACPP, {0, 0, ABSENT, ABSENT, 51, 36, ABSENT}},
    /* waiting: TRT-LLM's waiting, not pending (0); running: scheduled;
     * finished: both models summed */
    {"triton.txt", ENGINE_TRITON, {3, 6, 0.3, ABSENT, ABSENT, ABSENT, 80}},
    /* trtllm-serve: finished stop 30 + length 12; no KV usage mapped */
    {"trtllm.txt", ENGINE_TRTLLM, {2, 8, ABSENT, ABSENT, 21504, 5376, 42}},
};

/* A cmocka test whose initial state is its row of extract_cases. */
static void run_extract_case(void **state)
{
    const struct extract_case *c = *state;
    double want[ENGINE_MEANING_COUNT];
    for (int m = 0; m < ENGINE_MEANING_COUNT; m++)
        want[m] = ABSENT;
    for (size_t k = 0; k < LL_ARRAY_LEN(cols); k++)
        want[cols[k]] = c->want[k];
    check_values(c->file, c->kind, want);
}

#define EXTRACT_TEST(name, i) { #name, run_extract_case, NULL, NULL, (void *)&extract_cases[i] }

static void test_extract_triton_pending(void **state)
{
    /* Without the TRT-LLM backend, the pending count is the queue. */
    const char *plain = "nv_inference_pending_request_count{model=\"a\"} 2\n"
                        "nv_inference_pending_request_count{model=\"b\"} 5\n";
    struct prom_scrape *s = test_prom_parse(plain);
    struct engine_values v;
    assert_int_equal(engines_extract(ENGINE_TRITON, s, &v), 0);
    assert_int_equal(v.present[ENGINE_M_WAITING], 1);
    ASSERT_NEAR(v.value[ENGINE_M_WAITING], 7, 0);
    assert_string_equal(v.source[ENGINE_M_WAITING]->name,
                        "nv_inference_pending_request_count");
    assert_int_equal(v.present[ENGINE_M_RUNNING], 0);
    prom_scrape_free(s);
}

static void test_old_vllm_kv_name_and_max(void **state)
{
    /* V0's name; two engines: KV usage is the maximum, counts are summed. */
    const char *body =
        "vllm:gpu_cache_usage_perc{engine=\"0\"} 0.25\n"
        "vllm:gpu_cache_usage_perc{engine=\"1\"} 0.75\n"
        "vllm:gpu_cache_usage_perc{engine=\"2\"} NaN\n"
        "vllm:num_requests_running{engine=\"0\"} 2\n"
        "vllm:num_requests_running{engine=\"1\"} 3\n";
    struct prom_scrape *s = test_prom_parse(body);
    struct engine_values v;
    assert_int_equal(engines_extract(ENGINE_VLLM, s, &v), 0);
    ASSERT_NEAR(v.value[ENGINE_M_KV_USAGE], 0.75, 0);
    assert_string_equal(v.source[ENGINE_M_KV_USAGE]->name,
                        "vllm:gpu_cache_usage_perc");
    ASSERT_NEAR(v.value[ENGINE_M_RUNNING], 5, 0);
    assert_int_equal(v.present[ENGINE_M_WAITING], 0);
    assert_int_equal(engines_extract(ENGINE_UNKNOWN, s, &v), LL_E_INVAL);
    assert_int_equal(v.present[ENGINE_M_RUNNING], 0);
    prom_scrape_free(s);
}

/* vLLM's cache_config_info: num_gpu_blocks x block_size tokens; absent,
 * malformed or another engine's scrape: NAN. */
static void test_kv_capacity(void **state)
{
    const char *body =
        "# TYPE vllm:cache_config_info gauge\n"
        "vllm:cache_config_info{block_size=\"16\",cache_dtype=\"auto\","
        "enable_prefix_caching=\"True\",num_cpu_blocks=\"0\",num_gpu_blocks=\"1408\"} 1.0\n"
        "vllm:num_requests_running{model_name=\"m\"} 2\n";
    struct prom_scrape *s = test_prom_parse(body);
    ASSERT_NEAR(engines_kv_capacity_tokens(ENGINE_VLLM, s), 22528, 0);
    assert_true(isnan(engines_kv_capacity_tokens(ENGINE_LLAMACPP, s)));
    assert_true(isnan(engines_kv_capacity_tokens(ENGINE_VLLM, NULL)));
    prom_scrape_free(s);
    const char *bad[] = {
        "vllm:num_requests_running 2\n",
        "vllm:cache_config_info{block_size=\"16\"} 1\n",
        "vllm:cache_config_info{block_size=\"16\",num_gpu_blocks=\"None\"} 1\n",
        "vllm:cache_config_info{block_size=\"0\",num_gpu_blocks=\"10\"} 1\n",
    };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        s = test_prom_parse(bad[i]);
        assert_true(isnan(engines_kv_capacity_tokens(ENGINE_VLLM, s)));
        prom_scrape_free(s);
    }
}

static void test_lookup_keeps_unknown_raw(void **state)
{
    struct prom_scrape *s = load("vllm.txt");
    size_t known = 0, unknown = 0;
    for (size_t i = 0; i < s->n_samples; i++) {
        const struct engine_metric *r = engines_lookup(&s->samples[i]);
        if (r == NULL) {
            unknown++;
            continue;
        }
        known++;
        assert_int_equal(r->engine, ENGINE_VLLM);
        if (strncmp(s->samples[i].name, "vllm:time_to_first_token_seconds", 32) == 0)
            assert_int_equal(r->meaning, ENGINE_M_TTFT);
    }
    /* Only vllm:num_preemptions_created is not in the map. */
    assert_int_equal(unknown, 1);
    assert_int_equal(known, s->n_samples - 1);
    prom_scrape_free(s);

    s = load("triton.txt");
    size_t pos = 0;
    const struct prom_label max[] = {{"request_type", "max", 3}};
    assert_int_equal(prom_scrape_find(s, "nv_trt_llm_request_metrics", max, 1, &pos), 0);
    assert_null(engines_lookup(&s->samples[pos]));
    const struct prom_label wait[] = {{"request_type", "waiting", 7}};
    pos = 0;
    assert_int_equal(prom_scrape_find(s, "nv_trt_llm_request_metrics", wait, 1, &pos), 0);
    const struct engine_metric *r = engines_lookup(&s->samples[pos]);
    assert_non_null(r);
    assert_int_equal(r->meaning, ENGINE_M_WAITING);
    prom_scrape_free(s);
    assert_null(engines_lookup(NULL));
}

static void test_ttft_histogram(void **state)
{
    struct prom_histogram h;
    struct prom_scrape *s = load("vllm.txt");
    assert_int_equal(engines_ttft_histogram(ENGINE_VLLM, s, &h), 0);
    ASSERT_QUANTILE(&h, 0.5, 0.4); /* see test_prom.c */
    prom_scrape_free(s);

    /* SGLang: 1, 3, 27, 28. p50 rank 14 in (0.06, 1]:
     * 0.06 + 0.94 * (14 - 3) / 24. */
    s = load("sglang.txt");
    assert_int_equal(engines_ttft_histogram(ENGINE_SGLANG, s, &h), 0);
    ASSERT_QUANTILE(&h, 0.5, 0.06 + 0.94 * 11.0 / 24.0);
    prom_scrape_free(s);

    s = load("tgi.txt");
    assert_int_equal(engines_ttft_histogram(ENGINE_TGI, s, &h), LL_E_NOTFOUND);
    prom_scrape_free(s);

    /* trtllm-serve: 20, 40, 42. p50 rank 21 in (0.1, 0.5]:
     * 0.1 + 0.4 * (21 - 20) / 20. */
    s = load("trtllm.txt");
    assert_int_equal(engines_ttft_histogram(ENGINE_TRTLLM, s, &h), 0);
    ASSERT_QUANTILE(&h, 0.5, 0.1 + 0.4 * 1.0 / 20.0);
    prom_scrape_free(s);
}

static void test_table_consistent(void **state)
{
    size_t n = 0;
    const struct engine_metric *t = engines_table(&n);
    assert_true(n >= 30);
    static const char *prefix[ENGINE_KIND_COUNT] = {
        [ENGINE_VLLM] = "vllm:",         [ENGINE_SGLANG] = "sglang:", [ENGINE_TGI] = "tgi_",
        [ENGINE_LLAMACPP] = "llamacpp:", [ENGINE_TRITON] = "nv_",     [ENGINE_DCGM] = "DCGM_FI_",
        [ENGINE_TRTLLM] = "trtllm_",
    };
    int has_waiting[ENGINE_KIND_COUNT] = {0};
    for (size_t i = 0; i < n; i++) {
        assert_true(t[i].engine > ENGINE_UNKNOWN && t[i].engine < ENGINE_KIND_COUNT);
        assert_true(t[i].meaning > ENGINE_M_NONE && t[i].meaning < ENGINE_MEANING_COUNT);
        const char *p = prefix[t[i].engine];
        assert_int_equal(strncmp(t[i].name, p, strlen(p)), 0);
        assert_true(t[i].scale > 0);
        assert_true((t[i].label_name == NULL) == (t[i].label_value == NULL));
        if (t[i].meaning == ENGINE_M_WAITING)
            has_waiting[t[i].engine] = 1;
        /* GPU meanings are the DCGM exporter's, and only its. */
        assert_int_equal(engines_meaning_is_gpu(t[i].meaning), t[i].engine == ENGINE_DCGM);
    }
    for (int k = ENGINE_UNKNOWN + 1; k < ENGINE_KIND_COUNT; k++)
        assert_int_equal(has_waiting[k], k != ENGINE_DCGM); /* telemetry has no queue */
    assert_string_equal(engines_kind_name(ENGINE_LLAMACPP), "llamacpp");
    assert_string_equal(engines_meaning_name(ENGINE_M_KV_USAGE), "kv_usage");
}

TEST_MAIN(cmocka_unit_test(test_detect_each_engine), EXTRACT_TEST(test_extract_vllm, 0),
          EXTRACT_TEST(test_extract_sglang, 1), EXTRACT_TEST(test_extract_tgi, 2),
          EXTRACT_TEST(test_extract_llamacpp_fixture, 3), EXTRACT_TEST(test_extract_triton, 4),
          EXTRACT_TEST(test_extract_trtllm, 5), cmocka_unit_test(test_extract_triton_pending),
          cmocka_unit_test(test_old_vllm_kv_name_and_max), cmocka_unit_test(test_kv_capacity),
          cmocka_unit_test(test_lookup_keeps_unknown_raw), cmocka_unit_test(test_ttft_histogram),
          cmocka_unit_test(test_table_consistent))
