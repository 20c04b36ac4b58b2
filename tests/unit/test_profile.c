/* Unit tests for sim/profile.c: the built-in profiles and the analytic
 * capacity in each regime (sequence-, KV- and prefill-limited), against
 * numbers worked out by hand. The simulated check of the same formula is
 * test_engine's test_overload_matches_capacity. */
#include "test.h"
#include "testutil.h"

#include <stdlib.h>
#include <string.h>

#include "sim/profile.h"
#include "util/util.h"

static void test_get(void **state)
{
    struct sim_profile p;

    assert_int_equal(sim_profile_get("default", &p), 0);
    assert_string_equal(p.name, "default");
    assert_int_equal(engine_config_check(&p.engine, NULL, 0), 0);
    assert_int_equal(p.engine.max_num_seqs, 64);
    assert_int_equal(p.workload_prompt_tokens, 256);
    assert_int_equal(p.workload_output_tokens, 128);
    assert_int_equal(sim_profile_get("instant", &p), 0);
    assert_int_equal(engine_config_check(&p.engine, NULL, 0), 0);
    assert_int_equal(p.engine.step_base_ns + p.engine.step_seq_ns +
                     p.engine.step_prefill_token_ns, 0);
    assert_true(p.engine.natural_len_median_tokens == 16);
    assert_int_equal(sim_profile_get("fast", &p), LL_E_NOTFOUND);
    assert_int_equal(sim_profile_count(), 2);
    assert_string_equal(sim_profile_name(0), "default");
    assert_string_equal(sim_profile_name(1), "instant");
    assert_null(sim_profile_name(2));
}

/* The capacity of the built-in profile name (into *p) for 256 tokens in
 * and 128 out. */
static struct sim_capacity profile_capacity(const char *name, struct sim_profile *p)
{
    struct sim_capacity cap;
    assert_int_equal(sim_profile_get(name, p), 0);
    assert_int_equal(sim_profile_capacity(&p->engine, 256, 128, &cap), 0);
    return cap;
}

/* default, 256 in / 128 out: 64 sequences each hold a slot for 128 steps,
 * so half a request starts per step; a step is
 * 4 ms + 0.5 * 256 * 10 us + 64 * 127/128 * 150 us = 14.805 ms, and the
 * rate is 0.5 / 14.805 ms = 33.77 req/s. */
static void test_capacity_default(void **state)
{
    struct sim_profile p;
    struct sim_capacity cap = profile_capacity("default", &p);
    assert_int_equal(cap.limit, SIM_LIMIT_SEQS);
    ASSERT_NEAR(cap.batch_seqs, 64, 1e-9);
    ASSERT_NEAR(cap.residence_steps, 128, 1e-9);
    ASSERT_NEAR(cap.step_ns, 14.805e6, 1);
    ASSERT_REL(cap.rps, 0.5 / 14.805e-3, 1e-9);
    ASSERT_REL(cap.output_tokens_per_s, 128 * 0.5 / 14.805e-3, 1e-9);
    /* (16 + 16 * (17 + ... + 23) + 15 * 24) / 128 blocks. */
    ASSERT_NEAR(cap.kv_blocks_per_seq, 2616.0 / 128, 1e-12);
    /* The KV-cache is nearly full at the knee, but not the limit. */
    ASSERT_IN_RANGE(64 * cap.kv_blocks_per_seq * 16 / (double)p.engine.kv_tokens, 0.9, 1.0);
    ASSERT_REL(sim_profile_capacity_rps(&p.engine, 256, 128), cap.rps, 1e-12);
}

static void test_capacity_kv_and_prefill(void **state)
{
    struct engine_config c = {
        .max_num_seqs = 100,
        .kv_tokens = 1600,
        .block_tokens = 16,
        .prefill_chunk_tokens = 512,
        .step_base_ns = LL_NS_PER_MS,
        .natural_len_median_tokens = 10,
    };
    struct sim_capacity cap;

    /* 16 in / 17 out: 17 steps per request, 1 block while prefilling and
     * 2 for all 16 decode steps: 33/17 blocks on average, so 100 blocks
     * hold 100 * 17/33 sequences and 100/33 requests finish per 1 ms step. */
    assert_int_equal(sim_profile_capacity(&c, 16, 17, &cap), 0);
    assert_int_equal(cap.limit, SIM_LIMIT_KV);
    ASSERT_REL(cap.batch_seqs, 100.0 * 17 / 33, 1e-12);
    ASSERT_REL(cap.rps, 100.0 / 33 * 1000, 1e-12);

    /* 1000 in / 1 out with a 100-token budget: one request at a time,
     * 10 steps of 1 ms + 100 * 10 us each: 50 req/s. */
    c.kv_tokens = 1 << 20;
    c.prefill_chunk_tokens = 100;
    c.step_prefill_token_ns = 10 * LL_NS_PER_US;
    assert_int_equal(sim_profile_capacity(&c, 1000, 1, &cap), 0);
    assert_int_equal(cap.limit, SIM_LIMIT_PREFILL);
    ASSERT_NEAR(cap.batch_seqs, 1, 1e-12);
    ASSERT_REL(cap.rps, 50, 1e-12);

    /* Errors. */
    c.kv_tokens = 1024;
    assert_int_equal(sim_profile_capacity(&c, 1000, 26, &cap), LL_E_RANGE);
    assert_int_equal(sim_profile_capacity(&c, 1000, 25, &cap), 0);
    assert_int_equal(sim_profile_capacity(&c, 0, 25, &cap), LL_E_INVAL);
    assert_true(sim_profile_capacity_rps(&c, 1000, 26) == 0);
    c.max_num_seqs = 0;
    assert_int_equal(sim_profile_capacity(&c, 10, 10, &cap), LL_E_INVAL);
}

static void test_capacity_instant(void **state)
{
    struct sim_profile p;
    struct sim_capacity cap = profile_capacity("instant", &p);
    assert_int_equal(cap.limit, SIM_LIMIT_INSTANT);
    assert_true(isinf(cap.rps));
}

static char *explain(const char *name)
{
    struct sim_profile p;
    struct test_mem m;

    assert_int_equal(sim_profile_get(name, &p), 0);
    test_mem_open(&m);
    sim_profile_explain(&p, m.f);
    return test_mem_close(&m);
}

static void test_explain(void **state)
{
    char *s = explain("default");
    const char *want[] = {
        "profile default", "max_num_seqs           64 sequences",
        "kv_tokens              22528 tokens of KV-cache (1408 blocks)",
        "step_base              4.000 ms", "step_prefill_token     10.000 us",
        "step_seq               150.000 us", "prefill_chunk_tokens   512",
        "queue_limit            1000 requests waiting", "median 128 tokens",
        "prompt 256 tokens, output 128 tokens", "33.8 req/s", "4323 output tokens/s",
        "batch 64.0 sequences", "limited by max_num_seqs",
        "first token after 6.56 ms, then one every 4.15 ms, 534 ms in all", "KV-cache 93% used",
    };
    for (size_t i = 0; i < LL_ARRAY_LEN(want); i++)
        if (strstr(s, want[i]) == NULL)
            fail_msg("explain lacks \"%s\":\n%s", want[i], s);
    free(s);
    s = explain("instant");
    assert_non_null(strstr(s, "capacity: unbounded"));
    assert_non_null(strstr(s, "queue_limit            unbounded (never 429)"));
    free(s);
}

UNIT_TESTS(test_get, test_capacity_default, test_capacity_kv_and_prefill, test_capacity_instant,
           test_explain)
