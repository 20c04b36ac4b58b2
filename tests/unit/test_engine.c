/* Unit tests for sim/engine.c: hand-computed schedules (every step time is
 * base + prefill tokens * prefill_token + decoding sequences * seq), KV
 * limits, preemption, the prefix cache, the queue bound, stalls, scale,
 * determinism, and the overload rate against the analytic capacity. */
#include "test.h"
#include "testutil.h"

#include <stdlib.h>
#include <string.h>

#include "sim/engine.h"
#include "sim/profile.h"
#include "workload/tokenizer.h"
#include "util/util.h"

/* The figures of struct engine_stats a test names (EXPECT_STATS). */
static const struct test_field stats_fields[] = {
    TEST_FIELD(struct engine_stats, running),
    TEST_FIELD(struct engine_stats, waiting),
    TEST_FIELD(struct engine_stats, kv_used_tokens),
    TEST_FIELD(struct engine_stats, kv_usage_frac),
    TEST_FIELD(struct engine_stats, preemptions_total),
    TEST_FIELD(struct engine_stats, prompt_tokens_total),
    TEST_FIELD(struct engine_stats, cached_tokens_total),
    TEST_FIELD(struct engine_stats, generation_tokens_total),
    TEST_FIELD(struct engine_stats, success_total),
    TEST_FIELD(struct engine_stats, rejected_total),
    TEST_FIELD(struct engine_stats, steps_total),
};

/* e's stats now hold every figure that expect names ("field=value;...",
 * EXPECT_FIELDS); a failure names the caller's line. */
static void expect_stats(const char *file, int line, struct engine *e, const char *expect)
{
    struct engine_stats st;
    engine_get_stats(e, &st);
    test_expect_fields(file, line, "engine stats", &st, stats_fields, LL_ARRAY_LEN(stats_fields),
                       expect);
}

#define EXPECT_STATS(e, expect) expect_stats(__FILE__, __LINE__, (e), (expect))

#define MAX_EVENTS 256

struct log {
    struct engine_event ev[MAX_EVENTS];
    size_t n;
};

static void log_cb(void *ud, const struct engine_event *ev)
{
    struct log *l = ud;
    assert_true(l->n < MAX_EVENTS);
    l->ev[l->n++] = *ev;
}

static uint64_t submit(struct engine *e, uint64_t now_ns, uint32_t prompt, uint32_t max_tokens,
                       const uint64_t *hashes, uint32_t n_hashes, uintptr_t tag)
{
    struct engine_req r = {
        .prompt_tokens = prompt,
        .max_tokens = max_tokens,
        .ignore_eos = 1,
        .block_hashes = hashes,
        .n_block_hashes = n_hashes,
        .ud = (void *)tag,
    };
    uint64_t id = 0;
    assert_int_equal(engine_submit(e, now_ns, &r, &id), 0);
    return id;
}

/* Request tag submitted at at_ns (submit's arguments), then e run until
 * until_ns with its events (and any other's) logged into l. */
static void submit_run(struct engine *e, struct log *l, uint64_t at_ns, uint64_t until_ns,
                       uint32_t prompt, uint32_t max_tokens, const uint64_t *hashes,
                       uint32_t n_hashes, uintptr_t tag)
{
    submit(e, at_ns, prompt, max_tokens, hashes, n_hashes, tag);
    engine_advance(e, until_ns, log_cb, l);
}

/* The k-th event (0-based) of request tag, of the given kind. */
static const struct engine_event *find_ev(const struct log *l, uintptr_t tag,
                                          enum engine_event_kind kind, size_t k)
{
    for (size_t i = 0; i < l->n; i++)
        if ((uintptr_t)l->ev[i].ud == tag && l->ev[i].kind == kind && k-- == 0)
            return &l->ev[i];
    fail_msg("request %lu has no event %d #%zu", (unsigned long)tag, (int)kind, k);
    return NULL;
}

static size_t count_ev(const struct log *l, uintptr_t tag, enum engine_event_kind kind)
{
    size_t n = 0;
    for (size_t i = 0; i < l->n; i++)
        n += (uintptr_t)l->ev[i].ud == tag && l->ev[i].kind == kind;
    return n;
}

/* Token times of request tag must be exactly want[0..n). */
static void assert_token_times(const struct log *l, uintptr_t tag, const uint64_t *want, size_t n)
{
    assert_int_equal(count_ev(l, tag, ENGINE_EV_TOKEN), n);
    for (size_t k = 0; k < n; k++) {
        const struct engine_event *ev = find_ev(l, tag, ENGINE_EV_TOKEN, k);
        if (ev->time_ns != want[k])
            fail_msg("request %lu token %zu at %llu, want %llu", (unsigned long)tag, k,
                     (unsigned long long)ev->time_ns, (unsigned long long)want[k]);
        assert_int_equal(ev->output_tokens, k + 1);
        assert_int_equal(ev->n_tokens, 1);
    }
    assert_int_equal(count_ev(l, tag, ENGINE_EV_DONE), 1);
    assert_int_equal(find_ev(l, tag, ENGINE_EV_DONE, 0)->time_ns, want[n - 1]);
    assert_int_equal(find_ev(l, tag, ENGINE_EV_DONE, 0)->output_tokens, n);
}

/* A request of a schedule checked whole: its prompt and output lengths
 * (ignore_eos, so it emits all max_tokens) and its token times. */
struct timed_req {
    uint32_t prompt, max_tokens;
    uint64_t want[4]; /* the first max_tokens of them */
};

/* Submit r[0..n) to e at time 0 (tags 1, 2, ...), run until nothing is
 * left, check each request's token times (assert_token_times), free e. */
static void assert_schedule(struct engine *e, const struct timed_req *r, size_t n)
{
    struct log l = {.n = 0};
    for (size_t i = 0; i < n; i++) {
        assert_true(r[i].max_tokens <= LL_ARRAY_LEN(r[i].want));
        submit(e, 0, r[i].prompt, r[i].max_tokens, NULL, 0, i + 1);
    }
    engine_advance(e, UINT64_MAX - 1, log_cb, &l);
    for (size_t i = 0; i < n; i++)
        assert_token_times(&l, i + 1, r[i].want, r[i].max_tokens);
    engine_free(e);
}

static void test_config_check(void **state)
{
    struct engine_config c = test_engine_cfg();
    char err[128] = "";

    assert_int_equal(engine_config_check(&c, err, sizeof(err)), 0);
    c.max_num_seqs = 0;
    assert_int_equal(engine_config_check(&c, err, sizeof(err)), LL_E_INVAL);
    assert_non_null(strstr(err, "max_num_seqs"));
    assert_null(engine_new(&c));
    c = test_engine_cfg();
    c.kv_tokens = 8;
    assert_int_equal(engine_config_check(&c, err, sizeof(err)), LL_E_INVAL);
    c = test_engine_cfg();
    c.prefill_chunk_tokens = 0;
    assert_int_equal(engine_config_check(&c, err, sizeof(err)), LL_E_INVAL);
    c = test_engine_cfg();
    c.natural_len_sigma = -1;
    assert_int_equal(engine_config_check(&c, err, sizeof(err)), LL_E_INVAL);
    engine_free(NULL);
}

/* One request: prefill step base + 100 * 10, then base + 1 seq per token. */
static void test_single_request(void **state)
{
    struct engine_config c = test_engine_cfg();
    struct engine *e = engine_new(&c);
    struct log l = {.n = 0};
    const uint64_t want[] = {3000, 4100, 5200, 6300, 7400};

    assert_int_equal(engine_next_ns(e), UINT64_MAX);
    submit(e, 1000, 100, 5, NULL, 0, 1);
    assert_int_equal(engine_next_ns(e), 3000);
    engine_advance(e, 2999, log_cb, &l);
    assert_int_equal(l.n, 0);
    engine_advance(e, 3000, log_cb, &l);
    assert_int_equal(l.n, 1);
    assert_int_equal(engine_next_ns(e), 4100);
    /* kv_used_tokens 7 * 16: ceil(101 / 16) blocks. */
    EXPECT_STATS(e, "running=1;kv_used_tokens=112");
    engine_advance(e, 1000000, log_cb, &l);
    assert_token_times(&l, 1, want, 5);
    assert_int_equal(find_ev(&l, 1, ENGINE_EV_DONE, 0)->finish_length, 1);
    assert_int_equal(find_ev(&l, 1, ENGINE_EV_DONE, 0)->prompt_tokens, 100);
    assert_int_equal(engine_next_ns(e), UINT64_MAX);

    EXPECT_STATS(e, "running=0;waiting=0;kv_used_tokens=0;steps_total=5;prompt_tokens_total=100;"
                    "generation_tokens_total=5;success_total=1");
    engine_free(e);
}

/* max_num_seqs 2, three requests at once: the third waits for a slot and
 * starts in the step after the first one finishes. */
static void test_batch_composition(void **state)
{
    struct engine_config c = test_engine_cfg();
    struct engine *e;
    struct log l = {.n = 0};

    c.max_num_seqs = 2;
    e = engine_new(&c);
    submit(e, 0, 10, 2, NULL, 0, 1);
    submit(e, 0, 10, 4, NULL, 0, 2);
    submit(e, 0, 10, 2, NULL, 0, 3);
    EXPECT_STATS(e, "running=2;waiting=1");
    /* step 1 [0, 1200): prefill 20; step 2 [1200, 2400): 2 decoding;
     * step 3 [2400, 3600): 1 decoding + prefill 10; step 4: 2 decoding. */
    assert_int_equal(engine_next_ns(e), 1200);
    engine_advance(e, UINT64_MAX - 1, log_cb, &l);
    const uint64_t want1[] = {1200, 2400};
    const uint64_t want2[] = {1200, 2400, 3600, 4800};
    const uint64_t want3[] = {3600, 4800};
    assert_token_times(&l, 1, want1, 2);
    assert_token_times(&l, 2, want2, 4);
    assert_token_times(&l, 3, want3, 2);
    /* Events come in time order. */
    for (size_t i = 1; i < l.n; i++)
        assert_true(l.ev[i].time_ns >= l.ev[i - 1].time_ns);
    engine_free(e);
}

/* Chunked prefill: a 150-token prompt over a 64-token budget shares steps
 * with a short request that is decoding. */
static void test_chunked_prefill(void **state)
{
    struct engine_config c = test_engine_cfg();
    c.prefill_chunk_tokens = 64;

    /* step 1 [0, 1640): prefill 10 + 54;
     * step 2 [1640, 3380): 1 decoding + prefill 64;
     * step 3 [3380, 4800): 1 decoding + prefill 32 (B's first token);
     * step 4 [4800, 5900): B decoding. */
    const struct timed_req shared[] = {
        {10, 3, {1640, 3380, 4800}},
        {150, 2, {4800, 5900}},
    };
    assert_schedule(engine_new(&c), shared, LL_ARRAY_LEN(shared));

    /* Alone: 64 + 64 + 22 prompt tokens, then one decode step. */
    const struct timed_req alone[] = {
        {150, 2, {1640 + 1640 + 1220, 1640 + 1640 + 1220 + 1100}},
    };
    assert_schedule(engine_new(&c), alone, 1);
}

/* An embedding is prefill only: batched with the others under the same
 * prefill budget, done (DONE, no TOKEN, no output) at the end of the step
 * that completes its prompt, its blocks freed. Chunk 64, A an embedding of
 * 100 tokens, B a generation of 10 + 2, both at 0:
 *   step 1 [0, 1640): A prefills 64 (B waits: no budget left);
 *   step 2 [1640, 3100): A 36 (done), B 10 (its first token);
 *   step 3 [3100, 4200): B decodes its second. */
static void test_embedding_prefill_only(void **state)
{
    struct engine_config c = test_engine_cfg();
    c.prefill_chunk_tokens = 64;
    struct engine *e = engine_new(&c);
    struct log l = {.n = 0};
    struct engine_req a = {.prompt_tokens = 100, .max_tokens = 0, .embed = 1, .ud = (void *)1};
    uint64_t id;
    assert_int_equal(engine_submit(e, 0, &a, &id), 0);
    submit_run(e, &l, 0, 1000000, 10, 2, NULL, 0, 2);
    assert_int_equal(count_ev(&l, 1, ENGINE_EV_TOKEN), 0);
    assert_int_equal(count_ev(&l, 1, ENGINE_EV_DONE), 1);
    const struct engine_event *d = find_ev(&l, 1, ENGINE_EV_DONE, 0);
    assert_int_equal(d->time_ns, 3100);
    assert_int_equal(d->output_tokens, 0);
    assert_int_equal(d->prompt_tokens, 100);
    assert_int_equal(d->finish_length, 0);
    assert_int_equal(find_ev(&l, 2, ENGINE_EV_TOKEN, 0)->time_ns, 3100);
    assert_int_equal(find_ev(&l, 2, ENGINE_EV_TOKEN, 1)->time_ns, 4200);
    assert_int_equal(engine_next_ns(e), UINT64_MAX);
    EXPECT_STATS(e, "success_total=2;generation_tokens_total=2;kv_used_tokens=0");
    /* Only an embedding may ask for no output. */
    struct engine_req z = {.prompt_tokens = 5, .max_tokens = 0};
    assert_int_equal(engine_submit(e, 5000, &z, &id), LL_E_INVAL);
    engine_free(e);
}

/* An engine of test_engine_cfg() whose KV cache holds kv_tokens (in
 * blocks of 16). Caller frees. */
static struct engine *engine_with_kv(uint64_t kv_tokens)
{
    struct engine_config c = test_engine_cfg();
    c.kv_tokens = kv_tokens;
    return engine_new(&c);
}

/* Four blocks of KV: the second request fits only when the first is done. */
static void test_kv_blocks_admission(void **state)
{
    struct engine *e = engine_with_kv(64);
    struct log l = {.n = 0};
    uint64_t id;
    struct engine_req big = {.prompt_tokens = 65, .max_tokens = 1, .ignore_eos = 1};

    assert_int_equal(engine_submit(e, 0, &big, &id), LL_E_RANGE);
    submit(e, 0, 40, 2, NULL, 0, 1); /* 3 blocks */
    submit(e, 0, 30, 1, NULL, 0, 2); /* 2 blocks, 1 free */
    EXPECT_STATS(e, "running=1;waiting=1;kv_used_tokens=48;kv_usage_frac=0.75");
    engine_advance(e, UINT64_MAX - 1, log_cb, &l);
    const uint64_t want1[] = {1400, 2500};
    const uint64_t want2[] = {2500 + 1300};
    assert_token_times(&l, 1, want1, 2);
    assert_token_times(&l, 2, want2, 1);
    engine_free(e);
}

/* Two sequences grow until the cache is full: the newest is preempted,
 * re-prefills its prompt and 17 emitted tokens, and still produces all
 * 20 tokens exactly once, in order. */
static void test_preemption(void **state)
{
    struct engine *e = engine_with_kv(64);
    struct log l = {.n = 0};
    uint64_t a[20], b[20];

    submit(e, 0, 16, 20, NULL, 0, 1);
    submit(e, 0, 16, 20, NULL, 0, 2);
    engine_advance(e, UINT64_MAX - 1, log_cb, &l);

    /* step 1 [0, 1320): both prefill 16; steps 2..17: both decode (1200);
     * step 18: A needs a 3rd block, B is preempted, A decodes alone (1100)
     * until it finishes at step 20; step 21: B re-prefills 16 + 17 tokens
     * (1330), then decodes alone. */
    a[0] = b[0] = 1320;
    for (int k = 1; k < 17; k++)
        a[k] = b[k] = a[k - 1] + 1200;
    for (int k = 17; k < 20; k++)
        a[k] = a[k - 1] + 1100;
    b[17] = a[19] + 1330;
    b[18] = b[17] + 1100;
    b[19] = b[18] + 1100;
    assert_token_times(&l, 1, a, 20);
    assert_token_times(&l, 2, b, 20);

    EXPECT_STATS(e,
                 "preemptions_total=1;generation_tokens_total=40;success_total=2;kv_used_tokens=0");
    engine_free(e);
}

/* Second request sharing the first 5 full blocks of a finished one's
 * prompt: 80 cached tokens, a 20-token prefill, an earlier first token. */
static void test_prefix_cache(void **state)
{
    struct engine_config c = test_engine_cfg();
    struct engine *e;
    struct log l = {.n = 0};
    char text_a[400], text_b[400];
    uint64_t ha[8], hb[8];
    size_t la = 0, lb = 0;

    /* 100 one-letter words; b differs from a at token 90 (block 5). */
    for (int i = 0; i < 100; i++) {
        text_a[la++] = 'a' + (char)(i % 26);
        text_a[la++] = ' ';
        text_b[lb++] = i == 90 ? 'Z' : 'a' + (char)(i % 26);
        text_b[lb++] = ' ';
    }
    assert_int_equal(tokenizer_count(text_a, la), 100);
    assert_int_equal(tokenizer_block_hashes(text_a, la, 16, ha, 8), 6);
    assert_int_equal(tokenizer_block_hashes(text_b, lb, 16, hb, 8), 6);
    assert_true(ha[4] == hb[4]);
    assert_true(ha[5] != hb[5]);

    c.prefix_cache = 1;
    e = engine_new(&c);
    submit_run(e, &l, 0, 10000, 100, 2, ha, 6, 1);
    submit_run(e, &l, 10000, 20000, 100, 2, hb, 6, 2);
    /* Same prompt again: all 6 blocks match (96 tokens, 4 to compute). */
    submit_run(e, &l, 20000, 30000, 100, 1, ha, 6, 3);

    const uint64_t want1[] = {2000, 3100};
    const uint64_t want2[] = {10000 + 1200, 10000 + 2300};
    const uint64_t want3[] = {20000 + 1040};
    assert_token_times(&l, 1, want1, 2);
    assert_token_times(&l, 2, want2, 2);
    assert_token_times(&l, 3, want3, 1);
    assert_int_equal(find_ev(&l, 1, ENGINE_EV_TOKEN, 0)->cached_tokens, 0);
    assert_int_equal(find_ev(&l, 2, ENGINE_EV_TOKEN, 0)->cached_tokens, 80);
    assert_int_equal(find_ev(&l, 2, ENGINE_EV_DONE, 0)->cached_tokens, 80);
    assert_int_equal(find_ev(&l, 3, ENGINE_EV_DONE, 0)->cached_tokens, 96);
    /* prompt_tokens_total 100 + 20 + 4. */
    EXPECT_STATS(e, "cached_tokens_total=176;prompt_tokens_total=124;kv_used_tokens=0");
    engine_free(e);

    /* With the cache off, nothing is shared. */
    l.n = 0;
    c.prefix_cache = 0;
    e = engine_new(&c);
    submit_run(e, &l, 0, 10000, 100, 1, ha, 6, 1);
    submit_run(e, &l, 10000, 20000, 100, 1, ha, 6, 2);
    assert_int_equal(find_ev(&l, 2, ENGINE_EV_TOKEN, 0)->cached_tokens, 0);
    assert_int_equal(find_ev(&l, 2, ENGINE_EV_TOKEN, 0)->time_ns, 12000);
    engine_free(e);
}

/* The cold state: the first step after engine_new, and the first after
 * engine_reset_cold, take cold_first_ns longer; the reset also empties
 * the prefix cache, while a step without it is as fast as ever. */
static void test_cold_state(void **state)
{
    struct engine_config c = test_engine_cfg();
    struct log l = {.n = 0};
    uint64_t h[2] = {11, 12};
    c.prefix_cache = 1;
    c.cold_first_ns = 50000;
    struct engine *e = engine_new(&c);
    /* 40 tokens, 2 full blocks: base 1000 + 40 * 10, plus the penalty. */
    submit_run(e, &l, 0, 100000, 40, 1, h, 2, 1);
    assert_int_equal(find_ev(&l, 1, ENGINE_EV_TOKEN, 0)->time_ns, 1400 + 50000);
    /* Warm: the 2 blocks are cached, 8 tokens to compute, no penalty. */
    submit_run(e, &l, 100000, 200000, 40, 1, h, 2, 2);
    assert_int_equal(find_ev(&l, 2, ENGINE_EV_TOKEN, 0)->time_ns, 100000 + 1080);
    assert_int_equal(find_ev(&l, 2, ENGINE_EV_TOKEN, 0)->cached_tokens, 32);
    /* Reset: nothing cached, the penalty again, then warm once more. */
    engine_reset_cold(e);
    submit_run(e, &l, 200000, 300000, 40, 1, h, 2, 3);
    assert_int_equal(find_ev(&l, 3, ENGINE_EV_TOKEN, 0)->time_ns, 200000 + 1400 + 50000);
    assert_int_equal(find_ev(&l, 3, ENGINE_EV_TOKEN, 0)->cached_tokens, 0);
    submit_run(e, &l, 300000, 400000, 40, 1, h, 2, 4);
    assert_int_equal(find_ev(&l, 4, ENGINE_EV_TOKEN, 0)->time_ns, 300000 + 1080);
    assert_int_equal(find_ev(&l, 4, ENGINE_EV_TOKEN, 0)->cached_tokens, 32);
    /* A reset while a step runs: that step was planned warm and ends on
     * time; the step after it pays the penalty (the reset is not lost). */
    submit_run(e, &l, 400000, 400500, 40, 3, h, 2, 5);
    engine_reset_cold(e);
    engine_advance(e, 600000, log_cb, &l);
    uint64_t t0 = find_ev(&l, 5, ENGINE_EV_TOKEN, 0)->time_ns,
             t1 = find_ev(&l, 5, ENGINE_EV_TOKEN, 1)->time_ns,
             t2 = find_ev(&l, 5, ENGINE_EV_TOKEN, 2)->time_ns;
    assert_int_equal(t0, 400000 + 1080);
    assert_int_equal(t1 - t0, 1000 + 100 + 50000);
    assert_int_equal(t2 - t1, 1000 + 100);
    EXPECT_STATS(e, "kv_used_tokens=0");
    engine_free(e);
}

/* Cached blocks of finished requests are evicted least recently freed
 * first, and a request's tail blocks before its head blocks. */
static void test_prefix_cache_eviction(void **state)
{
    struct engine_config c = test_engine_cfg();
    struct engine *e;
    struct log l = {.n = 0};
    const uint64_t h1[] = {11, 12, 13}, h2[] = {21, 22, 23};

    c.prefix_cache = 1;
    c.kv_tokens = 64; /* 4 blocks */
    e = engine_new(&c);
    /* 1: 3 blocks, all cached when done (LRU: h1[2], h1[1], h1[0]). */
    submit_run(e, &l, 0, 10000, 48, 1, h1, 3, 1);
    /* 2: no match; takes the never-used block, then evicts h1[2], h1[1]. */
    submit_run(e, &l, 10000, 20000, 48, 1, h2, 3, 2);
    /* 3: h1[0] survived: 16 cached tokens; evicts h2[2], h2[1]. */
    submit_run(e, &l, 20000, 30000, 48, 1, h1, 3, 3);
    /* 4: h2[0] survived. */
    submit_run(e, &l, 30000, 40000, 48, 1, h2, 3, 4);
    assert_int_equal(find_ev(&l, 1, ENGINE_EV_DONE, 0)->cached_tokens, 0);
    assert_int_equal(find_ev(&l, 2, ENGINE_EV_DONE, 0)->cached_tokens, 0);
    assert_int_equal(find_ev(&l, 3, ENGINE_EV_DONE, 0)->cached_tokens, 16);
    assert_int_equal(find_ev(&l, 4, ENGINE_EV_DONE, 0)->cached_tokens, 16);
    assert_int_equal(find_ev(&l, 3, ENGINE_EV_DONE, 0)->time_ns, 20000 + 1000 + 320);
    EXPECT_STATS(e, "kv_used_tokens=0");
    engine_free(e);
}

static void test_queue_limit(void **state)
{
    struct engine_config c = test_engine_cfg();
    struct engine *e;
    struct engine_req r = {.prompt_tokens = 10, .max_tokens = 2, .ignore_eos = 1};
    uint64_t id;

    c.max_num_seqs = 1;
    c.queue_limit = 2;
    e = engine_new(&c);
    assert_int_equal(engine_submit(e, 0, &r, &id), 0); /* running */
    assert_int_equal(engine_submit(e, 0, &r, &id), 0); /* waiting 1 */
    assert_int_equal(engine_submit(e, 0, &r, &id), 0); /* waiting 2 */
    assert_int_equal(engine_submit(e, 0, &r, &id), LL_E_FULL);
    assert_int_equal(engine_submit(e, 1, &r, &id), LL_E_FULL);
    EXPECT_STATS(e, "rejected_total=2;waiting=2");
    r.prompt_tokens = 0;
    assert_int_equal(engine_submit(e, 1, &r, &id), LL_E_INVAL);
    /* Once the first finishes, the queue has room again. */
    engine_advance(e, UINT64_MAX - 1, NULL, NULL);
    r.prompt_tokens = 10;
    assert_int_equal(engine_submit(e, 100000, &r, &id), 0);
    engine_free(e);
}

static void test_stall(void **state)
{
    struct engine_config c = test_engine_cfg();
    struct engine *e;
    struct log l = {.n = 0};

    /* A step in progress at from_ns ends late by the window's length. */
    const struct timed_req in_step[] = {{100, 3, {2000, 3100 + 2500, 3100 + 2500 + 1100}}};
    e = engine_new(&c);
    engine_set_stall(e, 2500, 5000);
    assert_schedule(e, in_step, 1);

    /* A step due to start inside the window starts at its end. */
    const struct timed_req at_start[] = {{100, 3, {2000, 4000 + 1100, 4000 + 2200}}};
    e = engine_new(&c);
    engine_set_stall(e, 2000, 4000);
    assert_schedule(e, at_start, 1);

    /* Set while a step is planned: that step moves. A request arriving in
     * the window waits for its end. */
    e = engine_new(&c);
    submit(e, 0, 100, 1, NULL, 0, 3);
    assert_int_equal(engine_next_ns(e), 2000);
    engine_set_stall(e, 1000, 1500);
    assert_int_equal(engine_next_ns(e), 2500);
    engine_advance(e, 2500, log_cb, &l);
    engine_set_stall(e, 3000, 8000);
    submit(e, 3500, 100, 1, NULL, 0, 4);
    assert_int_equal(engine_next_ns(e), 10000);
    engine_advance(e, UINT64_MAX - 1, log_cb, &l);
    const uint64_t want3[] = {2500};
    const uint64_t want4[] = {10000};
    assert_token_times(&l, 3, want3, 1);
    assert_token_times(&l, 4, want4, 1);
    engine_free(e);
}

struct cancel_ctx {
    struct engine *e;
    uint64_t victim;
    uint32_t events_after;   /* events for the victim after its cancel */
    int cancelled;
    uint32_t tokens_other;
};

static void cancel_cb(void *ud, const struct engine_event *ev)
{
    struct cancel_ctx *c = ud;
    if (ev->id == c->victim) {
        c->events_after += c->cancelled;
        if (ev->kind == ENGINE_EV_TOKEN && ev->output_tokens == 3) {
            engine_cancel(c->e, c->victim);
            c->cancelled = 1;
        }
    } else if (ev->kind == ENGINE_EV_TOKEN) {
        c->tokens_other++;
        /* Cancelling a finished or unknown id is harmless. */
        engine_cancel(c->e, ev->id ^ ((uint64_t)1 << 40));
    }
}

static void test_cancel(void **state)
{
    struct engine_config c = test_engine_cfg();
    struct engine *e;
    struct engine_stats st;
    struct cancel_ctx cc = {0};
    uint64_t waiting_id;

    c.max_num_seqs = 1;
    e = engine_new(&c);
    cc.e = e;
    cc.victim = submit(e, 0, 10, 10, NULL, 0, 1);
    waiting_id = submit(e, 0, 10, 10, NULL, 0, 2);
    submit(e, 0, 10, 5, NULL, 0, 3);
    engine_cancel(e, waiting_id);
    engine_get_stats(e, &st);
    assert_int_equal(st.waiting, 1);
    engine_advance(e, UINT64_MAX - 1, cancel_cb, &cc);
    assert_int_equal(cc.cancelled, 1);
    assert_int_equal(cc.events_after, 0);
    assert_int_equal(cc.tokens_other, 5);
    engine_cancel(e, cc.victim); /* already gone */
    EXPECT_STATS(e, "success_total=1;kv_used_tokens=0;running=0;waiting=0");
    assert_int_equal(engine_next_ns(e), UINT64_MAX);
    engine_free(e);
}

/* ---- scale: the instant profile ---------------------------------------- */

#define N_INSTANT 10000

struct count_ctx {
    uint32_t *tokens;
    uint32_t *done_tokens;
    uint8_t *finish_length;
    uint64_t bad_time;
    uint64_t events;
};

static void count_cb(void *ud, const struct engine_event *ev)
{
    struct count_ctx *c = ud;
    uintptr_t i = (uintptr_t)ev->ud;
    c->events++;
    c->bad_time += ev->time_ns != 5;
    if (ev->kind == ENGINE_EV_TOKEN) {
        c->tokens[i]++;
        assert_int_equal(ev->output_tokens, c->tokens[i]);
    } else {
        c->done_tokens[i] = ev->output_tokens;
        c->finish_length[i] = (uint8_t)ev->finish_length;
    }
}

static int cmp_u32(const void *a, const void *b)
{
    uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;
    return (x > y) - (x < y);
}

static void test_instant_10k(void **state)
{
    struct sim_profile p;
    struct engine *e;
    struct engine_stats st;
    struct count_ctx cc = {0};
    uint32_t *natural = ll_calloc(N_INSTANT, sizeof(uint32_t));
    uint32_t n_natural = 0;
    uint64_t sum = 0;

    assert_int_equal(sim_profile_get("instant", &p), 0);
    e = engine_new(&p.engine);
    cc.tokens = ll_calloc(N_INSTANT, sizeof(uint32_t));
    cc.done_tokens = ll_calloc(N_INSTANT, sizeof(uint32_t));
    cc.finish_length = ll_calloc(N_INSTANT, 1);
    for (uint32_t i = 0; i < N_INSTANT; i++) {
        struct engine_req r = {
            .prompt_tokens = 1 + i % 300,
            .max_tokens = i % 3 == 0 ? 1 + i % 40 : 1000,
            .ignore_eos = i % 5 == 0,
            .ud = (void *)(uintptr_t)i,
        };
        uint64_t id;
        assert_int_equal(engine_submit(e, 5, &r, &id), 0);
    }
    engine_get_stats(e, &st);
    assert_int_equal(st.running + st.waiting, N_INSTANT);
    assert_int_equal(engine_next_ns(e), 5);
    engine_advance(e, 5, count_cb, &cc);
    assert_int_equal(engine_next_ns(e), UINT64_MAX);
    assert_int_equal(cc.bad_time, 0);
    for (uint32_t i = 0; i < N_INSTANT; i++) {
        uint32_t max = i % 3 == 0 ? 1 + i % 40 : 1000;
        assert_int_equal(cc.tokens[i], cc.done_tokens[i]);
        assert_true(cc.tokens[i] >= 1 && cc.tokens[i] <= max);
        if (i % 5 == 0)
            assert_int_equal(cc.tokens[i], max);
        assert_int_equal(cc.finish_length[i], cc.tokens[i] == max);
        if (i % 5 != 0 && i % 3 != 0)
            natural[n_natural++] = cc.tokens[i];
        sum += cc.tokens[i];
    }
    /* Natural lengths: lognormal with median 16. */
    qsort(natural, n_natural, sizeof(uint32_t), cmp_u32);
    ASSERT_IN_RANGE(natural[n_natural / 2], 15, 17);
    engine_get_stats(e, &st);
    assert_int_equal(st.success_total, N_INSTANT);
    assert_int_equal(st.generation_tokens_total, sum);
    assert_int_equal(cc.events, sum + N_INSTANT);
    assert_int_equal(st.kv_used_tokens, 0);
    free(natural);
    free(cc.tokens);
    free(cc.done_tokens);
    free(cc.finish_length);
    engine_free(e);
}

/* ---- determinism ------------------------------------------------------------ */

struct digest {
    uint64_t h;
    uint64_t n;
};

static void digest_mix(struct digest *d, uint64_t v)
{
    d->h = (d->h ^ v) * 1099511628211ULL;
}

static void digest_cb(void *ud, const struct engine_event *ev)
{
    struct digest *d = ud;
    d->n++;
    digest_mix(d, (uint64_t)ev->kind);
    digest_mix(d, ev->id);
    digest_mix(d, (uint64_t)(uintptr_t)ev->ud);
    digest_mix(d, ev->time_ns);
    digest_mix(d, ev->output_tokens);
    digest_mix(d, ev->cached_tokens);
    digest_mix(d, (uint64_t)ev->finish_length);
}

/* A busy mixed run: natural lengths, shared prefixes, a small cache that
 * preempts, cancels, a stall. */
static struct digest run_mixed(uint64_t seed)
{
    struct engine_config c = test_engine_cfg();
    struct digest d = {14695981039346656037ULL, 0};
    struct engine *e;
    struct engine_stats st;
    uint64_t t = 0, x = 12345, ids[64] = {0};

    c.max_num_seqs = 8;
    c.kv_tokens = 1024;
    c.prefill_chunk_tokens = 128;
    c.natural_len_median_tokens = 30;
    c.natural_len_sigma = 0.8;
    c.prefix_cache = 1;
    c.queue_limit = 50;
    c.seed = seed;
    e = engine_new(&c);
    engine_set_stall(e, 200000, 300000);
    for (int i = 0; i < 2000; i++) {
        uint64_t hashes[8];
        x = x * 6364136223846793005ULL + 1442695040888963407ULL;
        t += (x >> 33) % 3000;
        engine_advance(e, t, digest_cb, &d);
        for (int k = 0; k < 8; k++)
            hashes[k] = (k < 3 && (x >> 20) % 2) ? 100 + (uint64_t)k : x + (uint64_t)k;
        struct engine_req r = {
            .prompt_tokens = 20 + (uint32_t)((x >> 40) % 120),
            .max_tokens = 1 + (uint32_t)((x >> 24) % 100),
            .ignore_eos = (x >> 50) % 4 == 0,
            .block_hashes = hashes,
            .n_block_hashes = 8,
            .ud = (void *)(uintptr_t)i,
        };
        uint64_t id = 0;
        int rc = engine_submit(e, t, &r, &id);
        digest_mix(&d, (uint64_t)(rc + 100));
        if (rc == 0)
            ids[i % 64] = id;
        if ((x >> 45) % 10 == 0)
            engine_cancel(e, ids[(x >> 30) % 64]);
    }
    engine_advance(e, UINT64_MAX - 1, digest_cb, &d);
    engine_get_stats(e, &st);
    digest_mix(&d, st.preemptions_total);
    digest_mix(&d, st.steps_total);
    assert_true(st.preemptions_total > 0);
    assert_true(st.cached_tokens_total > 0);
    assert_true(st.rejected_total > 0);
    assert_int_equal(st.kv_used_tokens, 0);
    engine_free(e);
    return d;
}

static void test_determinism(void **state)
{
    struct digest a = run_mixed(1), b = run_mixed(1), c = run_mixed(2);
    assert_true(a.n > 10000);
    assert_int_equal(a.n, b.n);
    assert_true(a.h == b.h);
    assert_true(a.h != c.h);
}

/* ---- overload: the rate the analytic capacity promises -------------------- */

struct rate_ctx {
    uint64_t from_ns;
    uint64_t done;
};

static void rate_cb(void *ud, const struct engine_event *ev)
{
    struct rate_ctx *c = ud;
    if (ev->kind == ENGINE_EV_DONE && ev->time_ns >= c->from_ns)
        c->done++;
}

/* Offer load_factor * capacity for 60 s of warm-up and measure_s of
 * measurement (simulated time); return the completion rate, req/s. */
static double completion_rate(const struct engine_config *cfg, uint32_t prompt,
                              uint32_t output, double offered_rps, double measure_s,
                              struct engine_stats *st)
{
    struct engine *e = engine_new(cfg);
    struct rate_ctx rc = {60 * LL_NS_PER_SEC, 0};
    uint64_t end = rc.from_ns + (uint64_t)(measure_s * 1e9);
    uint64_t x = 99;
    double t = 0;

    while (t < (double)end) {
        struct engine_req r = {.prompt_tokens = prompt, .max_tokens = output, .ignore_eos = 1};
        uint64_t id;
        /* Poisson arrivals from a tiny LCG: the rate is what matters. */
        x = x * 6364136223846793005ULL + 1442695040888963407ULL;
        t += -log(((double)(x >> 11) + 0.5) / 9007199254740992.0) / offered_rps * 1e9;
        engine_advance(e, (uint64_t)t, rate_cb, &rc);
        int err = engine_submit(e, (uint64_t)t, &r, &id);
        assert_true(err == 0 || err == LL_E_FULL);
    }
    engine_advance(e, end, rate_cb, &rc);
    engine_get_stats(e, st);
    engine_free(e);
    return (double)rc.done / measure_s;
}

static void test_overload_matches_capacity(void **state)
{
    struct sim_profile p;
    struct engine_stats st;
    double cap, got;

    assert_int_equal(sim_profile_get("default", &p), 0);
    cap = sim_profile_capacity_rps(&p.engine, p.workload_prompt_tokens,
                                   p.workload_output_tokens);
    ASSERT_IN_RANGE(cap, 20, 40);

    /* 1.5x capacity: the queue fills, 429s, and completions at capacity. */
    got = completion_rate(&p.engine, p.workload_prompt_tokens, p.workload_output_tokens,
                          1.5 * cap, 240, &st);
    ASSERT_REL(got, cap, 0.05);
    assert_true(st.rejected_total > 0);
    assert_true(st.waiting + 5 >= p.engine.queue_limit);

    /* 0.6x capacity: everything offered completes. */
    got = completion_rate(&p.engine, p.workload_prompt_tokens, p.workload_output_tokens,
                          0.6 * cap, 120, &st);
    ASSERT_REL(got, 0.6 * cap, 0.05);
    assert_int_equal(st.rejected_total, 0);

    /* Limited by the KV-cache, the engine preempts and the formula is an
     * upper bound, 3-5% high (docs/sim-engine.md); limited by the prefill
     * budget, it is exact again. */
    p.engine.kv_tokens = 16000;
    cap = sim_profile_capacity_rps(&p.engine, 256, 128);
    got = completion_rate(&p.engine, 256, 128, 1.5 * cap, 120, &st);
    ASSERT_IN_RANGE(got, 0.93 * cap, 1.001 * cap);
    assert_true(st.preemptions_total > 0);
    p.engine.kv_tokens = 1 << 20;
    cap = sim_profile_capacity_rps(&p.engine, 1000, 64);
    got = completion_rate(&p.engine, 1000, 64, 1.5 * cap, 120, &st);
    ASSERT_REL(got, cap, 0.05);
}

UNIT_TESTS(test_config_check, test_single_request, test_batch_composition, test_chunked_prefill,
           test_embedding_prefill_only, test_kv_blocks_admission, test_preemption,
           test_prefix_cache, test_prefix_cache_eviction, test_cold_state, test_queue_limit,
           test_stall, test_cancel, test_instant_10k, test_determinism,
           test_overload_matches_capacity)
