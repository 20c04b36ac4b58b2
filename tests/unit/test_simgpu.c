/* Unit tests for sim/gpu.c, the sim's power model: idle energy, the
 * work of completed steps counted by a real engine, the share of a step
 * in progress, and the DCGM page read back through the client's engine
 * map (metrics/engines.c) as llmload run --gpu-metrics reads it. */
#include "test.h"
#include "testutil.h"

#include <math.h>
#include <string.h>

#include "metrics/engines.h"
#include "metrics/prom.h"
#include "sim/engine.h"
#include "sim/gpu.h"
#include "util/util.h"

static struct gpu_model model(uint32_t gpus, double idle_w)
{
    struct gpu_model m = {.gpus = gpus,
                          .idle_w = idle_w,
                          .decode_seq_j = 0.25,
                          .prefill_token_j = 0.005,
                          .start_ns = 1000};
    return m;
}

/* No step ever: N * idle watts over the time since start. */
static void test_idle_energy(void **state)
{
    struct gpu_model m = model(2, 70);
    struct engine_stats st;
    memset(&st, 0, sizeof st);
    st.step_end_ns = UINT64_MAX;
    ASSERT_NEAR(gpu_energy_j(&m, &st, 1000 + 1500 * LL_NS_PER_MS), 210.0, 1e-9);
    ASSERT_NEAR(gpu_energy_j(&m, &st, 500), 0.0, 0); /* before start: nothing */
    ASSERT_NEAR(gpu_power_w(&m, &st, 5000), 140.0, 1e-12);
}

/* A step from 1 ms to 3 ms with 4 decoding sequences and 100 prefill
 * tokens: work 4 * 0.25 + 100 * 0.005 = 1.5 J over 2 ms, so 750 W above
 * idle while it runs, and half of 1.5 J at its middle. */
static void test_step_in_progress(void **state)
{
    struct gpu_model m = model(1, 0);
    m.start_ns = 0;
    struct engine_stats st;
    memset(&st, 0, sizeof st);
    st.decode_seqs_stepped_total = 10;     /* 2.5 J done before */
    st.prefill_tokens_stepped_total = 200; /* 1 J */
    st.step_start_ns = 1 * LL_NS_PER_MS;
    st.step_end_ns = 3 * LL_NS_PER_MS;
    st.step_decode_seqs = 4;
    st.step_prefill_tokens = 100;
    ASSERT_NEAR(gpu_energy_j(&m, &st, 0), 3.5, 1e-12);
    ASSERT_NEAR(gpu_energy_j(&m, &st, 2 * LL_NS_PER_MS), 3.5 + 0.75, 1e-12);
    ASSERT_NEAR(gpu_power_w(&m, &st, 2 * LL_NS_PER_MS), 750.0, 1e-9);
    ASSERT_NEAR(gpu_power_w(&m, &st, 3 * LL_NS_PER_MS), 0.0, 0); /* ended: idle */
    /* A planned step that has not started adds nothing yet. */
    ASSERT_NEAR(gpu_energy_j(&m, &st, LL_NS_PER_MS - 1), 3.5, 1e-12);
}

/* A real engine: two requests of 32 prompt tokens and 5 output tokens
 * (ignore_eos) arriving together: one prefill step of 64 tokens gives
 * both first tokens, then 4 decode steps of 2 sequences. Energy with no
 * idle power: 8 * 0.25 + 64 * 0.005 = 2.32 J, whatever the step costs. */
static void test_engine_work(void **state)
{
    struct engine_config c = test_engine_cfg();
    c.natural_len_median_tokens = 100;
    struct engine *e = engine_new(&c);
    assert_non_null(e);
    struct engine_req r = {.prompt_tokens = 32, .max_tokens = 5, .ignore_eos = 1};
    assert_int_equal(engine_submit(e, 0, &r, NULL), 0);
    assert_int_equal(engine_submit(e, 0, &r, NULL), 0);
    engine_advance(e, UINT64_MAX - 1, NULL, NULL);
    struct engine_stats st;
    engine_get_stats(e, &st);
    assert_int_equal(st.decode_seqs_stepped_total, 8);
    assert_int_equal(st.prefill_tokens_stepped_total, 64);
    assert_true(st.step_end_ns == UINT64_MAX);
    struct gpu_model m = model(1, 0);
    ASSERT_NEAR(gpu_energy_j(&m, &st, 10 * LL_NS_PER_SEC), 2.32, 1e-12);
    engine_free(e);
}

/* The page, parsed as the client parses it: power and energy summed over
 * GPUs (energy in J from mJ), utilisation the mean, 4 GPUs counted. */
static void test_render_through_engine_map(void **state)
{
    struct gpu_model m = model(4, 50);
    m.start_ns = 0;
    struct engine_stats st;
    memset(&st, 0, sizeof st);
    st.decode_seqs_stepped_total = 1000; /* 250 J */
    st.step_start_ns = 9 * LL_NS_PER_SEC;
    st.step_end_ns = 11 * LL_NS_PER_SEC;
    st.step_decode_seqs = 8; /* 2 J over 2 s: 1 W */
    st.kv_usage_frac = 0.5;
    struct http_buf b;
    http_buf_init(&b);
    gpu_render(&m, &st, 10 * LL_NS_PER_SEC, &b);
    struct prom_scrape *ps = NULL;
    assert_int_equal(prom_scrape_parse(b.data, b.len, &ps), 0);
    assert_int_equal(engines_detect(ps), ENGINE_UNKNOWN); /* never taken for an engine */
    struct engine_values v;
    assert_int_equal(engines_extract(ENGINE_DCGM, ps, &v), 0);
    assert_int_equal(v.n[ENGINE_M_GPU_POWER], 4);
    ASSERT_NEAR(v.value[ENGINE_M_GPU_POWER], 4 * 50 + 1, 1e-3);
    /* 4 * 50 W * 10 s + 250 J + 1 J = 2251 J, each GPU's mJ whole. */
    ASSERT_NEAR(v.value[ENGINE_M_GPU_ENERGY], 2251.0, 0.004);
    ASSERT_NEAR(v.value[ENGINE_M_GPU_UTIL], 100, 0);
    ASSERT_NEAR(v.value[ENGINE_M_GPU_GR_ACTIVE], 1, 0);
    ASSERT_NEAR(v.value[ENGINE_M_GPU_SM_CLOCK], 1980, 0);
    ASSERT_NEAR(v.value[ENGINE_M_GPU_MEM_USED], 4 * (16000 + 30000), 0);
    prom_scrape_free(ps);
    http_buf_free(&b);
}

UNIT_TESTS(test_idle_energy, test_step_in_progress, test_engine_work,
           test_render_through_engine_map)
