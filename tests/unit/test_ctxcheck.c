/* test_ctxcheck.c: the context window each engine says, and the share of
 * a run's requests that ask for more (cli/ctxcheck.h). */
#include "test.h"

#include <string.h>

#include "cli/ctxcheck.h"

static json_t *js(const char *text)
{
    json_t *j = json_loads(text, 0, NULL);
    assert_non_null(j);
    return j;
}

/* Where each engine says its window: vLLM's /models entry (the one named,
 * or the only one), llama.cpp's /props, SGLang's /get_server_info, TGI's
 * /info (whose max_input_tokens bounds the prompt alone). */
static void test_limit_read(void **state)
{
    struct ctx_limit lim;
    json_t *vllm = js("{\"data\":[{\"id\":\"a\",\"max_model_len\":4096},"
                      "{\"id\":\"b\",\"max_model_len\":8192}]}");
    ctx_limit_read(vllm, NULL, "b", &lim);
    assert_int_equal(lim.total, 8192);
    assert_string_equal(lim.total_of, "max_model_len, /models");
    assert_int_equal(lim.prompt, 0);
    ctx_limit_read(vllm, NULL, "c", &lim); /* two entries, neither named: none */
    assert_int_equal(lim.total, 0);
    json_t *one = js("{\"data\":[{\"id\":\"a\",\"max_model_len\":2048}]}");
    ctx_limit_read(one, NULL, "other", &lim);
    assert_int_equal(lim.total, 2048);

    json_t *llama = js("{\"props\":{\"n_ctx\":512}}");
    json_t *llama_models = js("{\"data\":[{\"id\":\"m\",\"meta\":{\"n_ctx_train\":2048}}]}");
    ctx_limit_read(llama_models, llama, "m", &lim); /* n_ctx_train is not the window */
    assert_int_equal(lim.total, 512);
    assert_string_equal(lim.total_of, "n_ctx, /props");
    json_t *sglang = js("{\"get_server_info\":{\"context_length\":32768}}");
    ctx_limit_read(NULL, sglang, "m", &lim);
    assert_int_equal(lim.total, 32768);
    assert_string_equal(lim.total_of, "context_length, /get_server_info");
    json_t *tgi = js("{\"info\":{\"max_total_tokens\":4096,\"max_input_tokens\":1024}}");
    ctx_limit_read(NULL, tgi, "m", &lim);
    assert_int_equal(lim.total, 4096);
    assert_string_equal(lim.total_of, "max_total_tokens, /info");
    assert_int_equal(lim.prompt, 1024);
    assert_string_equal(lim.prompt_of, "max_input_tokens, /info");
    json_t *odd = js("{\"data\":[{\"id\":\"m\",\"max_model_len\":null}],"
                     "\"props\":{\"n_ctx\":\"512\"},\"info\":{\"max_total_tokens\":-1}}");
    ctx_limit_read(odd, odd, "m", &lim); /* null, a string, a negative: none */
    assert_int_equal(lim.total, 0);
    assert_int_equal(lim.prompt, 0);
    json_decref(vllm);
    json_decref(one);
    json_decref(llama);
    json_decref(llama_models);
    json_decref(sglang);
    json_decref(tgi);
    json_decref(odd);
}

static void workload_of(struct workload *w, const char *prompt, const char *output)
{
    char err[200];
    memset(w, 0, sizeof *w);
    w->seed = 7;
    assert_int_equal(dist_parse(prompt, DIST_UNIT_NONE, &w->prompt_tokens, err, sizeof err), 0);
    assert_int_equal(dist_parse(output, DIST_UNIT_NONE, &w->output_tokens, err, sizeof err), 0);
}

/* The counts are the requests the run draws: a uniform prompt of 1..400
 * with 100 output tokens against a window of 300 has (300-200)/400 of
 * them past it with their output, and 101/400 whose prompt fills it. */
static void test_count(void **state)
{
    struct workload w;
    struct ctx_limit lim = {.total = 300, .total_of = "max_model_len, /models"};
    uint64_t total, prompt, longest, want_total = 0, want_prompt = 0, want_longest = 0;
    workload_of(&w, "uniform:1,400", "100");
    ctx_count(&w, 4000, 0, &lim, &total, &prompt, &longest);
    for (uint64_t i = 0; i < 4000; i++) {
        struct req_spec s;
        workload_spec(&w, i, &s);
        want_prompt += s.prompt_tokens >= 300;
        want_total += s.prompt_tokens < 300 && s.prompt_tokens + 100 > 300;
        if (s.prompt_tokens + 100u > want_longest)
            want_longest = s.prompt_tokens + 100u;
    }
    assert_int_equal(total, want_total);
    assert_int_equal(prompt, want_prompt);
    assert_int_equal(longest, want_longest);
    ASSERT_NEAR((double)total / 4000, 0.25, 0.03);
    ASSERT_NEAR((double)prompt / 4000, 0.25, 0.03);

    /* An embeddings request has no output: its prompt alone counts. */
    ctx_count(&w, 4000, 1, &lim, &total, &prompt, &longest);
    assert_int_equal(total, 0);
    assert_int_equal(prompt, want_prompt);

    /* TGI's prompt bound: a prompt past max_input_tokens is refused. */
    struct ctx_limit tgi = {.prompt = 200, .prompt_of = "max_input_tokens, /info"};
    ctx_count(&w, 4000, 0, &tgi, &total, &prompt, &longest);
    assert_int_equal(total, 0);
    ASSERT_NEAR((double)prompt / 4000, 0.5, 0.03);
}

static void test_words(void **state)
{
    struct workload w;
    char msg[600];
    struct ctx_limit lim = {.total = 300, .total_of = "max_model_len, /models"};
    workload_of(&w, "100", "250");
    assert_int_equal(ctx_check(&w, 100, 1, 0, &lim, msg, sizeof msg), 1);
    assert_string_equal(msg, "the model's context is 300 tokens (max_model_len, /models) and "
                             "100% of the requests ask for more (prompt + max_tokens, up to "
                             "350): a server refuses them or ends their output early");
    workload_of(&w, "100", "200"); /* exactly the window: fits */
    assert_int_equal(ctx_check(&w, 100, 1, 0, &lim, msg, sizeof msg), 0);
    assert_string_equal(msg, "");
    workload_of(&w, "300", "10");
    assert_int_equal(ctx_check(&w, 100, 1, 0, &lim, msg, sizeof msg), 1);
    assert_string_equal(msg, "the model's context is 300 tokens (max_model_len, /models) and "
                             "100% of the requests have prompts that fill it: a server refuses "
                             "them");
    struct ctx_limit tgi = {.prompt = 200, .prompt_of = "max_input_tokens, /info"};
    assert_int_equal(ctx_check(&w, 100, 1, 0, &tgi, msg, sizeof msg), 1);
    assert_string_equal(msg, "the server takes prompts of at most 200 tokens (max_input_tokens, "
                             "/info) and 100% of the requests have longer ones: it refuses them");
    struct ctx_limit none = {0};
    assert_int_equal(ctx_check(&w, 100, 1, 0, &none, msg, sizeof msg), 0);
    /* A rare overflow keeps its precision: about 0.4% (prompts of 991 to
     * 994 with their 5 output tokens) and 0.55% (prompts of 995 or more). */
    workload_of(&w, "uniform:1,1000", "5");
    lim.total = 995;
    uint64_t total, prompt, longest;
    ctx_count(&w, CTX_CHECK_DRAWS, 0, &lim, &total, &prompt, &longest);
    assert_true(total > 0 && total * 100 < CTX_CHECK_DRAWS);
    assert_true(prompt > 0 && prompt * 100 < CTX_CHECK_DRAWS);
    assert_int_equal(ctx_check(&w, CTX_CHECK_DRAWS, 0, 0, &lim, msg, sizeof msg), 1);
    char want[200];
    snprintf(want, sizeof want, "and about %.2g%% of the requests ask for more",
             100.0 * (double)total / CTX_CHECK_DRAWS);
    assert_non_null(strstr(msg, want));
    snprintf(want, sizeof want, "; %.2g%% more have prompts it cannot take at all",
             100.0 * (double)prompt / CTX_CHECK_DRAWS);
    assert_non_null(strstr(msg, want));
}

UNIT_TESTS(test_limit_read, test_count, test_words)
