/* Integration tests of image inputs (--images, --image-size(s),
 * --image-format, a class's "images") against the sim, whose --log gives
 * per request the images it read and the prefill tokens it charged for
 * them, ceil(W/28)*ceil(H/28) each, from the image headers alone:
 *
 * - for chat, Anthropic's Messages and the Responses API, every request
 *   is recorded; the server's prompt_tokens (usage) equal the text's 30
 *   plus the image tokens, equal the sim's log line for the request, and
 *   the client's expectation; each image count's tokens are a sum the
 *   two sizes allow; the bodies are as large as their images;
 * - JPEG images are read and charged the same way;
 * - a class's images reach its requests only;
 * - the same seed sends bodies of the same sizes again;
 * - closed-loop users, whose images are encoded ahead, send their own;
 * - the spend guard counts the images' tokens; compare refuses runs with
 *   other images as other work;
 * - a prefix group's shared images (--prefix-images) reach the sim as the
 *   same bytes in every request of the group and other bytes in another
 *   group (the image hashes of the sim's log), while each request's own
 *   images differ; the sim serves the group's later requests the prefix
 *   text and the shared images' tokens from its cache, exactly, and the
 *   workload's implied share says the same;
 * - bad flags and bad class settings are one-line usage errors, and APIs
 *   or modes that cannot carry images are refused before anything is sent. */
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "harness.h"
#include "test.h"
#include "util/util.h"
#include "workload/workload.h"

#define TEXT_TOKENS 30
#define N_REQ 24

/* Whether t tokens are what n images of 512x512 (361 tokens) and
 * 1000x700 (36*25 = 900) can cost together. */
static int tokens_possible(int64_t n, int64_t t)
{
    for (int64_t a = 0; a <= n; a++) {
        if (361 * a + 900 * (n - a) == t)
            return 1;
    }
    return 0;
}

static int by_sent(const void *a, const void *b)
{
    int64_t x = harness_ival_req(*(json_t *const *)a, "sent_ns");
    int64_t y = harness_ival_req(*(json_t *const *)b, "sent_ns");
    return x < y ? -1 : x > y;
}

static int by_arrival(const void *a, const void *b)
{
    int64_t x = harness_ival_req(*(json_t *const *)a, "arrival_ns");
    int64_t y = harness_ival_req(*(json_t *const *)b, "arrival_ns");
    return x < y ? -1 : x > y;
}

/* A run of n requests, one at a time, on an instant sim with --log: its
 * records beside the sim's log lines. Starts harness_cur_sim (--profile
 * instant, harness_logged_sim_start), runs the client with args (exit 0 or
 * 1), stops the sim (which flushes its log) and loads both, which must
 * hold n each, the records by sent_ns and the log lines by arrival_ns:
 * one at a time, the i-th of each is the same request. *recs and *log are
 * the caller's (harness_recs_free). Returns the results dir (caller
 * releases it with harness_results_free). */
static char *run_beside_log(const char *const *args, size_t n, struct harness_recs **recs,
                            struct harness_recs **log)
{
    char logp[600];
    harness_logged_sim_start(logp, sizeof logp,
                             (const char *const[]){"--profile", "instant", NULL});
    char *dir = harness_run_client(NULL, args, HARNESS_RC_OK_OR_INVALID, NULL);
    harness_sim_stop(&harness_cur_sim);
    *recs = harness_requests_load(dir);
    *log = harness_recs_load(logp);
    assert_int_equal((*recs)->n, n);
    assert_int_equal((*log)->n, n);
    qsort((*recs)->items, n, sizeof(*recs)->items[0], by_sent);
    qsort((*log)->items, n, sizeof(*log)->items[0], by_arrival);
    return dir;
}

/* Run N_REQ requests with images of format fmt on api against a sim with
 * --log, and hold every record to the sim's log line and the rule. The
 * requests go one at a time (constant 40/s on an instant sim, one
 * thread), so the log's order of arrival is the records' order of
 * sending, the pairing the checks use. */
static void check_api(const char *api, const char *fmt)
{
    const char *args[] = {"--api",           api,
                          "--rate",          "40",
                          "--arrival",       "constant",
                          "--threads",       "1",
                          "--requests",      "24",
                          "--prompt-tokens", "30",
                          "--output-tokens", "4",
                          "--images",        "uniform:0,3",
                          "--image-sizes",   "512x512:3,1000x700:1",
                          "--image-format",  fmt,
                          "--no-metrics",    NULL};
    struct harness_recs *recs, *log;
    char *dir = run_beside_log(args, N_REQ, &recs, &log);
    int64_t images = 0, without = 0;
    for (size_t i = 0; i < recs->n; i++) {
        json_t *r = recs->items[i], *l = log->items[i];
        if (strcmp(harness_sval(r, "kind"), "ok") != 0)
            fail_msg("%s record %zu: %s %s", api, i, harness_sval(r, "kind"),
                     harness_sval(r, "detail"));
        int64_t n = harness_ival(r, "images");
        n = n < 0 ? 0 : n; /* absent: none */
        int64_t ln = harness_ival(l, "images"), lt = harness_ival(l, "image_tokens");
        ln = ln < 0 ? 0 : ln;
        lt = lt < 0 ? 0 : lt;
        int64_t server = harness_ival_req(r, "prompt_tokens_server");
        /* The sim's count, the usage the client read, the client's own. */
        assert_int_equal(harness_ival_req(l, "prompt_tokens"), server);
        assert_int_equal(harness_ival_req(r, "prompt_tokens"), server);
        assert_int_equal(ln, n);
        assert_int_equal(server, TEXT_TOKENS + lt);
        if (!tokens_possible(n, lt))
            fail_msg("%s record %zu: %lld image tokens for %lld images", api, i, (long long)lt,
                     (long long)n);
        /* A body carries its images: a 512x512 PNG or JPEG of the
         * synthetic kind is several KB of base64. */
        int64_t bytes = harness_ival_req(r, "request_bytes");
        assert_true(bytes > 100);
        if (n > 0)
            assert_true(bytes > 2000 * n);
        else
            assert_true(bytes < 1000);
        images += n;
        without += n == 0;
    }
    /* uniform:0,3 over 24 requests: both kinds occur (all 24 equal would
     * be a broken draw, at odds below 1e-9). */
    assert_true(images > 0 && without > 0);
    harness_recs_free(log);
    harness_recs_free(recs);
    /* run.json says what was sent. */
    json_t *run = harness_json_load(dir, "run.json");
    json_t *im = json_object_get(json_object_get(run, "config"), "images");
    assert_string_equal(harness_sval(im, "format"), fmt);
    assert_int_equal(json_array_size(json_object_get(im, "sizes")), 2);
    json_decref(run);
    harness_results_free(dir);
}

static void test_chat_png(void **state)
{
    check_api("openai-chat", "png");
}

static void test_anthropic_png(void **state)
{
    check_api("anthropic-messages", "png");
}

static void test_responses_png(void **state)
{
    check_api("openai-responses", "png");
}

static void test_chat_jpeg(void **state)
{
    check_api("openai-chat", "jpeg");
}

/* A class's images go to its requests only: "vision" sends two 56x56
 * images (4 tokens each) on Anthropic's API, "text" none. */
static void test_class_images(void **state)
{
    harness_tmp_begin();
    char wl[600];
    harness_tmp_path(wl, sizeof wl, "w.json");
    harness_write_file(wl, "{\"classes\": [\n"
                           " {\"name\": \"vision\", \"prompt_tokens\": 20, \"output_tokens\": 3,\n"
                           "  \"api\": \"anthropic-messages\",\n"
                           "  \"images\": {\"count\": 2, \"sizes\": \"56x56\"}},\n"
                           " {\"name\": \"text\", \"prompt_tokens\": 20, \"output_tokens\": 3,\n"
                           "  \"api\": \"completions\"}]}\n");
    harness_instant_sim_start();
    const char *args[] = {"--rate",     "100", "--requests",   "30",
                          "--workload", wl,    "--no-metrics", NULL};
    char *dir;
    struct harness_recs *recs = harness_run_recs(NULL, args, 30, &dir);
    size_t vision = 0;
    for (size_t i = 0; i < recs->n; i++) {
        json_t *r = recs->items[i];
        assert_string_equal(harness_sval(r, "kind"), "ok");
        int is_vision = strcmp(harness_sval(r, "class"), "vision") == 0;
        vision += is_vision;
        assert_int_equal(harness_ival(r, "images"), is_vision ? 2 : -1);
        assert_int_equal(harness_ival_req(r, "prompt_tokens_server"), 20 + (is_vision ? 8 : 0));
    }
    assert_true(vision > 0 && vision < 30);
    harness_recs_free(recs);
    harness_results_free(dir);
}

/* The body bytes of each request of a run with the given seed. */
static void body_sizes(const char *seed, int64_t *out)
{
    const char *args[] = {"--rate",        "100", "--requests", "8", "--seed",       seed,
                          "--prompt-salt", "7",   "--images",   "1", "--image-size", "200x100",
                          "--no-metrics",  NULL};
    char *dir = harness_run_client(NULL, args, HARNESS_RC_OK_OR_INVALID, NULL);
    struct harness_recs *recs = harness_requests_load(dir);
    assert_int_equal(recs->n, 8);
    for (size_t i = 0; i < recs->n; i++) {
        json_t *r = recs->items[i];
        assert_string_equal(harness_sval(r, "kind"), "ok");
        /* One 200x100 image: 8 * 4 tokens on top of the text. */
        assert_int_equal(harness_ival_req(r, "images"), 1);
        assert_int_equal(harness_ival_req(r, "prompt_tokens_server"),
                         harness_ival_req(r, "prompt_tokens"));
        out[harness_ival_req(r, "id")] = harness_ival_req(r, "request_bytes");
    }
    harness_recs_free(recs);
    harness_results_free(dir);
}

/* The same seed and salt, the same bodies, request for request (the
 * images' bytes, unit-tested in test_image, are a function of both). */
static void test_deterministic(void **state)
{
    harness_tmp_begin();
    harness_instant_sim_start();
    int64_t a[8], b[8];
    body_sizes("11", a);
    body_sizes("11", b);
    harness_sim_stop(&harness_cur_sim);
    for (int i = 0; i < 8; i++)
        assert_int_equal(a[i], b[i]);
}

/* Closed loop: each user's next images are encoded while the worker
 * waits (prepared ahead); each request must still carry its own, so with
 * two sizes of other token costs every record's server count is the
 * count its own draw expects. */
static void test_closed_loop(void **state)
{
    harness_tmp_begin();
    harness_instant_sim_start();
    const char *args[] = {"--users",         "3",
                          "--think",         "exponential:20ms",
                          "--requests",      "30",
                          "--prompt-tokens", "10",
                          "--output-tokens", "3",
                          "--images",        "uniform:1,2",
                          "--image-sizes",   "56x56,112x84",
                          "--no-metrics",    NULL};
    char *dir;
    struct harness_recs *recs = harness_run_recs(NULL, args, 30, &dir);
    int64_t sizes_seen[2] = {0, 0};
    for (size_t i = 0; i < recs->n; i++) {
        json_t *r = recs->items[i];
        assert_string_equal(harness_sval(r, "kind"), "ok");
        int64_t server = harness_ival_req(r, "prompt_tokens_server");
        assert_int_equal(server, harness_ival_req(r, "prompt_tokens"));
        /* 56x56: 4 tokens, 112x84: 12; one or two images on 10 text tokens. */
        int64_t t = server - 10, n = harness_ival_req(r, "images");
        assert_true(n == 1 || n == 2);
        if (n == 1)
            assert_true(t == 4 || t == 12);
        else
            assert_true(t == 8 || t == 16 || t == 24);
        sizes_seen[t == 4 || t == 8 ? 0 : 1]++;
    }
    assert_true(sizes_seen[0] > 0 && sizes_seen[1] > 0);
    harness_recs_free(recs);
    harness_results_free(dir);
}

/* The spend guard counts image tokens: 10 text + 4 image (one 56x56) +
 * 10 output tokens a request, so 240 tokens stop after 10 requests (12
 * without the images). */
static void test_spend_guard(void **state)
{
    harness_tmp_begin();
    harness_instant_sim_start();
    const char *args[] = {"--rate",
                          "50",
                          "--requests",
                          "100",
                          "--prompt-tokens",
                          "10",
                          "--output-tokens",
                          "10",
                          "--images",
                          "1",
                          "--image-size",
                          "56x56",
                          "--max-tokens-total",
                          "240",
                          "--no-metrics",
                          NULL};
    char *dir;
    struct harness_recs *recs = harness_run_recs(NULL, args, 10, &dir);
    for (size_t i = 0; i < recs->n; i++)
        assert_int_equal(harness_ival_req(recs->items[i], "prompt_tokens_server"), 14);
    harness_recs_free(recs);
    harness_results_free(dir);
}

/* Two runs with other images did not offer the same work: compare
 * refuses them, naming "images". */
static void test_compare_sees_images(void **state)
{
    const char *a[] = {"--images", "1", "--image-size", "64x64", NULL};
    const char *b[] = {"--images", "1", "--image-size", "128x64", NULL};
    harness_compare_refuses(a, b, "images");
}

/* Shared images on api, seed 5: 24 requests one at a time (one user,
 * closed loop, so each group's prefix is computed before its next request
 * and the log's order is the sending order), 80 prompt tokens, three
 * quarters of them in one of 2 prefix groups of 48 tokens with
 * `shared` images of 112x112 (16 tokens each), and one own image of the
 * same size each. 48 + 16 = 64 tokens: the sim's 16-token blocks cover
 * the shared part exactly, so a group's later request is served exactly
 * 48 + 16 * shared cached tokens (4 blocks with one shared image, 3
 * without), its first and every unshared request none. The log's image
 * hashes (of the bytes the sim received) say which images were the same
 * bytes. */
static void check_prefix_images(const char *api, int shared)
{
    const char *args[] = {"--api",
                          api,
                          "--users",
                          "1",
                          "--requests",
                          "24",
                          "--seed",
                          "5",
                          "--prompt-tokens",
                          "80",
                          "--output-tokens",
                          "2",
                          "--prefix-fraction",
                          "0.75",
                          "--prefix-groups",
                          "2",
                          "--prefix-tokens",
                          "48",
                          "--images",
                          "1",
                          "--image-size",
                          "112x112",
                          "--no-metrics",
                          shared ? "--prefix-images" : NULL,
                          shared ? "1" : NULL,
                          NULL};
    struct harness_recs *recs, *log;
    char *dir = run_beside_log(args, 24, &recs, &log);
    struct workload w;
    harness_workload(&w, 5, "80", "2", 0);
    w.prefix = (struct wl_prefix){.fraction = 0.75, .groups = 2, .tokens = 48};
    char group_hash[2][20] = {"", ""};
    char own[24][20];
    int in_group[2] = {0, 0}, unshared = 0;
    int64_t hits = 0;
    for (size_t i = 0; i < recs->n; i++) {
        json_t *r = recs->items[i], *l = log->items[i];
        assert_string_equal(harness_sval(r, "kind"), "ok");
        struct req_spec spec;
        workload_spec(&w, (uint64_t)harness_ival_req(r, "id"), &spec);
        int64_t g = spec.prefix_id;
        int n_shared = g >= 0 ? shared : 0;
        /* Tokens: the text, the own image and the shared ones, 16 each,
         * as the sim counted them and the client expected. */
        int64_t want = 80 + 16 * (1 + n_shared);
        assert_int_equal(harness_ival_req(l, "prompt_tokens"), want);
        assert_int_equal(harness_ival_req(r, "prompt_tokens_server"), want);
        assert_int_equal(harness_ival_req(r, "prompt_tokens"), want);
        assert_int_equal(harness_ival_req(r, "images"), 1 + n_shared);
        assert_int_equal(harness_ival_req(l, "image_tokens"), 16 * (1 + n_shared));
        json_t *hashes = json_object_get(l, "image_hashes");
        assert_int_equal(json_array_size(hashes), 1 + n_shared);
        /* Cached: none for an unshared request or a group's first, the
         * prefix text and the shared images for the group's later ones. */
        int64_t cached = harness_ival_req(r, "cached_tokens");
        assert_int_equal(harness_ival_req(l, "cached_tokens"), cached);
        if (g < 0) {
            unshared++;
            assert_int_equal(cached, 0);
        } else {
            assert_int_equal(cached, in_group[g] ? 48 + 16 * n_shared : 0);
            hits += in_group[g] > 0;
            in_group[g]++;
        }
        if (n_shared) {
            const char *h = json_string_value(json_array_get(hashes, 0));
            if (group_hash[g][0])
                assert_string_equal(h, group_hash[g]);
            snprintf(group_hash[g], sizeof group_hash[g], "%s", h);
        }
        snprintf(own[i], sizeof own[i], "%s", json_string_value(json_array_get(hashes, n_shared)));
    }
    print_message("%s, %d shared image(s): groups of %d and %d requests, %d unshared; "
                  "%lld later group requests each served %d cached tokens\n",
                  api, shared, in_group[0], in_group[1], unshared, (long long)hits,
                  48 + 16 * shared);
    /* The premises: both groups had several requests, some had none. */
    assert_true(in_group[0] >= 2 && in_group[1] >= 2 && unshared > 0 && hits >= 4);
    /* Groups differ; every own image differs from every other image. */
    if (shared)
        assert_string_not_equal(group_hash[0], group_hash[1]);
    for (size_t i = 0; i < recs->n; i++) {
        for (size_t j = i + 1; j < recs->n; j++)
            assert_string_not_equal(own[i], own[j]);
        for (int g = 0; g < 2 && shared; g++)
            assert_string_not_equal(own[i], group_hash[g]);
    }
    /* The workload's implied share is what the sim served. */
    json_t *sum = harness_json_load(dir, "summary.json");
    ASSERT_NEAR(harness_num(sum, "tokens.cached_share"),
                harness_num(sum, "tokens.workload_cached_share"), 1e-9);
    double served = (double)(hits * (48 + 16 * shared));
    double prompt = 24 * 96 + 16 * shared * (in_group[0] + in_group[1]);
    ASSERT_NEAR(harness_num(sum, "tokens.cached_share"), served / prompt, 1e-9);
    json_decref(sum);
    json_t *run = harness_json_load(dir, "run.json");
    json_t *im = json_object_get(json_object_get(run, "config"), "images");
    assert_int_equal(harness_ival(im, "prefix_images"), shared ? 1 : -1);
    json_decref(run);
    harness_recs_free(log);
    harness_recs_free(recs);
    harness_results_free(dir);
}

static void test_prefix_images_chat(void **state)
{
    check_prefix_images("openai-chat", 1);
}

static void test_prefix_images_anthropic(void **state)
{
    check_prefix_images("anthropic-messages", 1);
}

/* Own images with a shared prefix and no shared images: the prefix text
 * comes before them, so the text alone is found (3 blocks). */
static void test_prefix_text_before_images(void **state)
{
    check_prefix_images("openai-responses", 0);
}

/* More groups than the client's table of encoded group images (64 slots,
 * direct-mapped): 80 requests over 300 groups, about 69 of them seen,
 * so slots are taken over (69 groups on 64 slots: 5 evictions at least)
 * and a group may be encoded again when it comes back. Every request of a group
 * must still send its group's bytes (one hash per group in the sim's
 * log), and no two groups the same. */
static void test_prefix_images_many_groups(void **state)
{
    const char *args[] = {"--users",         "1",   "--requests",        "80",
                          "--seed",          "9",   "--prompt-tokens",   "20",
                          "--output-tokens", "1",   "--prefix-fraction", "1",
                          "--prefix-groups", "300", "--prefix-tokens",   "8",
                          "--prefix-images", "1",   "--image-size",      "56x56",
                          "--no-metrics",    NULL};
    struct harness_recs *recs, *log;
    char *dir = run_beside_log(args, 80, &recs, &log);
    struct workload w;
    harness_workload(&w, 9, "20", "1", 0);
    w.prefix = (struct wl_prefix){.fraction = 1, .groups = 300, .tokens = 8};
    static char hash_of[300][20];
    memset(hash_of, 0, sizeof hash_of);
    int again = 0;
    for (size_t i = 0; i < recs->n; i++) {
        struct req_spec spec;
        workload_spec(&w, (uint64_t)harness_ival_req(recs->items[i], "id"), &spec);
        assert_true(spec.prefix_id >= 0 && spec.prefix_id < 300);
        json_t *hashes = json_object_get(log->items[i], "image_hashes");
        assert_int_equal(json_array_size(hashes), 1);
        const char *h = json_string_value(json_array_get(hashes, 0));
        char *mine = hash_of[spec.prefix_id];
        if (mine[0]) {
            assert_string_equal(h, mine);
            again++;
        }
        snprintf(mine, sizeof hash_of[0], "%s", h);
    }
    for (int a = 0; a < 300; a++)
        for (int b = a + 1; b < 300; b++)
            if (hash_of[a][0] && hash_of[b][0])
                assert_string_not_equal(hash_of[a], hash_of[b]);
    /* The premise: some group came back (80 draws of 300: about 10). */
    print_message("80 requests over 300 groups: %d came back to a group seen before\n", again);
    assert_true(again > 0);
    harness_recs_free(log);
    harness_recs_free(recs);
    harness_results_free(dir);
}

static void test_refusals(void **state)
{
    HARNESS_EXPECT_USAGES(
        {{"run", "--api", "openai-completions", "--images", "1", "--rate", "1", "--requests", "1"},
         "--images: openai-completions takes a text \"prompt\" only"},
        {{"run", "--api", "openai-embeddings", "--images", "1", "--rate", "1", "--requests", "1"},
         "--images: openai-embeddings takes a text \"input\" only"},
        {{"run", "--prefix-images", "1", "--rate", "1", "--requests", "1"},
         "--prefix-images: needs a shared prefix (--prefix-fraction F --prefix-tokens L)"},
        {{"run", "--prefix-images", "65", "--prefix-fraction", "0.5", "--prefix-tokens", "64",
          "--rate", "1", "--requests", "1"},
         "--prefix-images: at most 64"},
        {{"run", "--prefix-images", "0", "--prefix-fraction", "0.5", "--prefix-tokens", "64",
          "--rate", "1", "--requests", "1"},
         "--prefix-images: expected a whole number from 1 to 64, got \"0\""},
        {{"run", "--api", "openai-completions", "--prefix-images", "1", "--prefix-fraction", "0.5",
          "--prefix-tokens", "64", "--rate", "1"},
         "--prefix-images: openai-completions takes a text \"prompt\" only"},
        {{"run", "--prefix-images", "1", "--prefix-fraction", "0.5", "--prefix-tokens", "64",
          "--sessions", "2", "--turns", "2"},
         "--prefix-images: a session resends its conversation"},
        {{"replay", "--prefix-images", "1", "x.jsonl"}, "--prefix-images: applies to llmload run"},
        {{"run", "--image-size", "64x64", "--rate", "1", "--requests", "1"},
         "--image-size: goes with --images DIST (images per request) or --prefix-images N"},
        {{"run", "--image-format", "png", "--rate", "1", "--requests", "1"},
         "--image-format: goes with --images DIST"},
        {{"run", "--images", "1", "--image-size", "0x64", "--rate", "1", "--requests", "1"},
         "--image-size: expected WxH with sides 1 to 8192"},
        {{"run", "--images", "1", "--image-size", "64x64,32x32", "--rate", "1", "--requests", "1"},
         "--image-size: one WxH; a list goes to --image-sizes"},
        {{"run", "--images", "1", "--image-sizes", "64x64:0", "--rate", "1", "--requests", "1"},
         "--image-sizes: expected WxH"},
        {{"run", "--images", "1", "--image-size", "8x8", "--image-sizes", "8x8", "--rate", "1",
          "--requests", "1"},
         "--image-size and --image-sizes: give one"},
        {{"run", "--images", "1", "--image-format", "gif", "--rate", "1", "--requests", "1"},
         "--image-format: expected png or jpeg, got \"gif\""},
        {{"run", "--images", "100", "--rate", "1", "--requests", "1"},
         "--images: at most 64 images per request"},
        {{"run", "--images", "lognormal:1,1", "--rate", "1", "--requests", "1"},
         "--images: at most 64 images per request"},
        {{"run", "--images", "1", "--sessions", "2", "--turns", "2", "--requests", "1"},
         "--sessions does not take images"},
        {{"replay", "--images", "1", "x.jsonl"}, "--images: applies to llmload run"}, );

    harness_tmp_begin();
    char wl[600], bad[600];
    harness_tmp_file(wl, sizeof wl, "w.json",
                     "{\"classes\": [{\"name\": \"v\", \"prompt_tokens\": 5,\n"
                     "  \"output_tokens\": 2, \"api\": \"completions\",\n"
                     "  \"images\": {\"count\": 1}}]}\n");
    harness_tmp_file(bad, sizeof bad, "bad.json",
                     "{\"classes\": [{\"name\": \"v\", \"prompt_tokens\": 5,\n"
                     "  \"output_tokens\": 2,\n"
                     "  \"images\": {\"count\": 1, \"sizes\": \"9x\"}}]}\n");
    char noprefix[600];
    harness_tmp_file(noprefix, sizeof noprefix, "noprefix.json",
                     "{\"classes\": [{\"name\": \"v\", \"prompt_tokens\": 5,\n"
                     "  \"output_tokens\": 2,\n"
                     "  \"images\": {\"prefix_images\": 1}}]}\n");
    struct harness_usage u[] = {
        {{"run", "--workload", wl, "--rate", "1", "--requests", "1"},
         "class \"v\" sends images to openai-completions"},
        {{"run", "--workload", noprefix, "--rate", "1", "--requests", "1"},
         "class \"v\" has prefix_images but no \"prefix\""},
        {{"run", "--workload", bad, "--rate", "1", "--requests", "1"},
         "classes[0].images: sizes: expected WxH"},
    };
    harness_expect_usages(u, LL_ARRAY_LEN(u));
}

HARNESS_MAIN(cmocka_unit_test_teardown(test_chat_png, harness_sim_tmp_teardown),
             cmocka_unit_test_teardown(test_anthropic_png, harness_sim_tmp_teardown),
             cmocka_unit_test_teardown(test_responses_png, harness_sim_tmp_teardown),
             cmocka_unit_test_teardown(test_chat_jpeg, harness_sim_tmp_teardown),
             cmocka_unit_test_teardown(test_class_images, harness_sim_tmp_teardown),
             cmocka_unit_test_teardown(test_deterministic, harness_sim_tmp_teardown),
             cmocka_unit_test_teardown(test_spend_guard, harness_sim_tmp_teardown),
             cmocka_unit_test_teardown(test_closed_loop, harness_sim_tmp_teardown),
             cmocka_unit_test_teardown(test_compare_sees_images, harness_sim_tmp_teardown),
             cmocka_unit_test_teardown(test_prefix_images_chat, harness_sim_tmp_teardown),
             cmocka_unit_test_teardown(test_prefix_images_anthropic, harness_sim_tmp_teardown),
             cmocka_unit_test_teardown(test_prefix_text_before_images, harness_sim_tmp_teardown),
             cmocka_unit_test_teardown(test_prefix_images_many_groups, harness_sim_tmp_teardown),
             cmocka_unit_test_teardown(test_refusals, harness_sim_tmp_teardown))
