/* Unit tests for prefixshare.c: the cached share a run's workload implies. */
#include "test.h"

#include <math.h>
#include <string.h>

#include "workload/prefixshare.h"

/* A synthetic request: prompt tokens, and a prefix group (-1: none) of
 * prefix tokens. */
static struct req_spec req(uint32_t prompt, int64_t group, uint32_t prefix)
{
    struct req_spec s;
    memset(&s, 0, sizeof s);
    s.prompt_tokens = prompt;
    s.prefix_id = group;
    s.prefix_tokens = group >= 0 ? prefix : 0;
    s.session = -1;
    s.turn = -1;
    s.dataset_entry = -1;
    return s;
}

static void add(struct prefix_share *p, uint32_t prompt, int64_t group, uint32_t prefix)
{
    struct req_spec s = req(prompt, group, prefix);
    prefix_share_add(p, &s);
}

/* Each group's first request computes its prefix; the rest find it. */
static void test_first_of_each_group_misses(void **state)
{
    struct prefix_share p;
    prefix_share_init(&p);
    assert_true(isnan(prefix_share_implied(&p))); /* nothing tallied */
    for (int i = 0; i < 10; i++)
        add(&p, 100, i % 2, 60); /* 5 requests in each of 2 groups */
    for (int i = 0; i < 10; i++)
        add(&p, 100, -1, 0); /* 10 unique prompts */
    assert_int_equal(prefix_share_cached_tokens(&p), 8 * 60);
    assert_true(fabs(prefix_share_implied(&p) - 480.0 / 2000.0) < 1e-12);
    prefix_share_reset(&p);
    assert_int_equal(p.requests, 0);
}

/* A prompt shorter than its prefix shares only its own length; a group's
 * first miss is counted at its smallest length (an upper bound on hits). */
static void test_short_prompts_and_lengths(void **state)
{
    struct prefix_share p;
    prefix_share_init(&p);
    add(&p, 40, 3, 64);  /* shares 40 */
    add(&p, 128, 3, 64); /* shares 64 */
    add(&p, 128, 3, 64);
    assert_int_equal(p.prefix_tokens, 40 + 64 + 64);
    assert_int_equal(prefix_share_cached_tokens(&p), 64 + 64);
    prefix_share_reset(&p);
}

/* Workers tally apart and merge: the same group in two workers misses
 * once, and many groups grow the table. */
static void test_merge_and_growth(void **state)
{
    struct prefix_share a, b;
    prefix_share_init(&a);
    prefix_share_init(&b);
    for (int64_t g = 0; g < 1000; g++) {
        add(&a, 50, g, 20);
        add(&b, 50, g, 20);
        add(&b, 50, g + ((int64_t)1 << 40), 20);
    }
    assert_int_equal(prefix_share_cached_tokens(&a), 0);
    assert_int_equal(prefix_share_cached_tokens(&b), 0);
    prefix_share_merge(&a, &b);
    assert_int_equal(a.requests, 3000);
    assert_int_equal(a.n, 2000);
    assert_int_equal(prefix_share_cached_tokens(&a), 1000 * 20);
    assert_true(fabs(prefix_share_implied(&a) - 20000.0 / 150000.0) < 1e-12);
    prefix_share_reset(&a);
    prefix_share_reset(&b);
}

/* A prompt llmload did not write (a dataset's, a trace's text, a session's
 * history) makes the share unknown: what it shares cannot be told. */
static void test_unknown_prompts(void **state)
{
    struct prefix_share p;
    prefix_share_init(&p);
    add(&p, 100, 0, 50);
    struct req_spec s = req(100, -1, 0);
    s.dataset_entry = 4;
    prefix_share_add(&p, &s);
    assert_true(isnan(prefix_share_implied(&p)));
    prefix_share_reset(&p);

    s = req(100, -1, 0);
    s.history_len = 2;
    prefix_share_add(&p, &s);
    assert_true(isnan(prefix_share_implied(&p)));
    prefix_share_reset(&p);

    s = req(100, -1, 0);
    s.prompt_text = "hello";
    s.prompt_text_len = 5;
    prefix_share_add(&p, &s);
    assert_true(isnan(prefix_share_implied(&p)));
    prefix_share_reset(&p);
}

/* Images: every image's tokens are prompt tokens; a group's shared
 * images are part of what its later requests find. */
static void test_images(void **state)
{
    struct prefix_share p;
    prefix_share_init(&p);
    for (int i = 0; i < 4; i++) {
        struct req_spec s = req(80, 0, 48);
        s.prefix_images = 1;
        s.prefix_image_tokens = 16;
        s.images = 1;
        s.image_tokens = 16 + 16; /* the shared one and its own */
        prefix_share_add(&p, &s);
    }
    struct req_spec own = req(80, -1, 0);
    own.images = 1;
    own.image_tokens = 16;
    prefix_share_add(&p, &own);
    assert_int_equal(p.prompt_tokens, 4 * 112 + 96);
    assert_int_equal(prefix_share_cached_tokens(&p), 3 * 64);
    assert_true(fabs(prefix_share_implied(&p) - 192.0 / 544.0) < 1e-12);
    prefix_share_reset(&p);
}

UNIT_TESTS(test_first_of_each_group_misses, test_images, test_short_prompts_and_lengths,
           test_merge_and_growth, test_unknown_prompts)
