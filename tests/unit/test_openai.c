/* Unit tests for openai.c: every field of struct oai_chunk, the chat and
 * completions shapes, non-streamed bodies, and the per-request
 * accumulation with its output-token precedence. */
#include "test.h"

#include <string.h>

#include "openai.h"
#include "util.h"

static struct oai_chunk chat(const char *s)
{
    struct oai_chunk c;
    int rc = oai_decode_chunk(OAI_API_CHAT, s, strlen(s), &c);
    if (rc != 0)
        fail_msg("decode of %s failed: %d", s, rc);
    return c;
}

static struct oai_chunk compl(const char *s)
{
    struct oai_chunk c;
    int rc = oai_decode_chunk(OAI_API_COMPLETIONS, s, strlen(s), &c);
    if (rc != 0)
        fail_msg("decode of %s failed: %d", s, rc);
    return c;
}

static void test_done_and_malformed(void **state)
{
    (void)state;
    struct oai_chunk c;

    assert_int_equal(oai_decode_chunk(OAI_API_CHAT, "[DONE]", 6, &c), 0);
    assert_int_equal(c.done, 1);
    assert_int_equal(c.has_usage, 0);
    assert_int_equal(c.prompt_tokens, -1);
    assert_int_equal(oai_decode_chunk(OAI_API_CHAT, "[DONE] ", 7, &c), LL_E_PROTO);
    assert_int_equal(oai_decode_chunk(OAI_API_CHAT, "[done]", 6, &c), LL_E_PROTO);
    assert_int_equal(oai_decode_chunk(OAI_API_CHAT, "", 0, &c), LL_E_PROTO);
    assert_int_equal(oai_decode_chunk(OAI_API_CHAT, "[1,2]", 5, &c), LL_E_PROTO);
    assert_int_equal(oai_decode_chunk(OAI_API_CHAT, "\"x\"", 3, &c), LL_E_PROTO);
    assert_int_equal(oai_decode_chunk(OAI_API_CHAT, "{\"choices\":[}", 13, &c), LL_E_PROTO);
    /* A valid prefix followed by junk is malformed. */
    assert_int_equal(oai_decode_chunk(OAI_API_CHAT, "{\"a\":1}x", 8, &c), LL_E_PROTO);
    assert_int_equal(c.done, 0);
    assert_int_equal(oai_decode_response(OAI_API_CHAT, "<html>", 6, &c), LL_E_PROTO);
    /* An empty object is fine and says nothing. */
    c = chat("{}");
    assert_int_equal(oai_chunk_carries_output(&c), 0);
    assert_int_equal(c.role_only, 0);
}

static void test_chat_content(void **state)
{
    (void)state;
    struct oai_chunk c;

    c = chat("{\"choices\":[{\"index\":0,\"delta\":{\"role\":\"assistant\",\"content\":null},"
             "\"finish_reason\":null}]}");
    assert_int_equal(c.role_only, 1);
    assert_int_equal(c.content_bytes, 0);
    assert_int_equal(c.has_finish, 0);
    assert_int_equal(oai_chunk_carries_output(&c), 0);

    c = chat("{\"choices\":[{\"delta\":{\"role\":\"assistant\",\"content\":\"\"}}]}");
    assert_int_equal(c.role_only, 1);
    assert_int_equal(c.content_bytes, 0);

    /* A role with content is a token, not role-only. */
    c = chat("{\"choices\":[{\"delta\":{\"role\":\"assistant\",\"content\":\"Hi\"}}]}");
    assert_int_equal(c.role_only, 0);
    assert_int_equal(c.content_bytes, 2);
    assert_int_equal(oai_chunk_carries_output(&c), 1);

    /* Bytes are counted decoded: a\nb is 3, \u00e9 is 2, a pair is 4. */
    c = chat("{\"choices\":[{\"delta\":{\"content\":\"a\\nb\\u00e9\\ud83d\\ude00\"}}]}");
    assert_int_equal(c.content_bytes, 9);

    /* Several choices are all counted; the first finish_reason is kept. */
    c = chat("{\"choices\":[{\"index\":0,\"delta\":{\"content\":\"abc\"},\"finish_reason\":null},"
             "{\"index\":1,\"delta\":{\"content\":\"de\"},\"finish_reason\":\"stop\"},"
             "{\"index\":2,\"delta\":{},\"finish_reason\":\"length\"}]}");
    assert_int_equal(c.content_bytes, 5);
    assert_int_equal(c.has_finish, 1);
    assert_string_equal(c.finish_reason, "stop");

    /* The completions field is ignored by the chat decoder. */
    c = chat("{\"choices\":[{\"text\":\"abc\"}]}");
    assert_int_equal(c.content_bytes, 0);

    /* Content of an unexpected type counts nothing (and is no error). */
    c = chat("{\"choices\":[{\"delta\":{\"content\":[{\"type\":\"text\"}]}}]}");
    assert_int_equal(c.content_bytes, 0);
    c = chat("{\"choices\":{\"delta\":{\"content\":\"x\"}}}");
    assert_int_equal(c.content_bytes, 0);
}

static void test_reasoning_and_tools(void **state)
{
    (void)state;
    struct oai_chunk c;

    c = chat("{\"choices\":[{\"delta\":{\"reasoning_content\":\"think\"}}]}");
    assert_int_equal(c.reasoning_bytes, 5);
    assert_int_equal(c.content_bytes, 0);
    assert_int_equal(oai_chunk_carries_output(&c), 1);
    c = chat("{\"choices\":[{\"delta\":{\"reasoning\":\"hmm\",\"content\":null}}]}");
    assert_int_equal(c.reasoning_bytes, 3);
    /* The same text under both names is counted once (the longer). */
    c = chat("{\"choices\":[{\"delta\":{\"reasoning\":\"abcd\",\"reasoning_content\":\"abcd\"}}]}");
    assert_int_equal(c.reasoning_bytes, 4);
    /* A role with reasoning is output, not role-only. */
    c = chat("{\"choices\":[{\"delta\":{\"role\":\"assistant\",\"reasoning_content\":\"r\"}}]}");
    assert_int_equal(c.role_only, 0);

    c = chat("{\"choices\":[{\"delta\":{\"tool_calls\":[{\"index\":0,\"function\":"
             "{\"arguments\":\"{\\\"a\\\":\"}},{\"index\":1,\"id\":\"call_1\"}]}}]}");
    assert_int_equal(c.tool_call_deltas, 2);
    assert_int_equal(c.content_bytes, 0);
    assert_int_equal(oai_chunk_carries_output(&c), 1);
    c = chat("{\"choices\":[{\"delta\":{\"tool_calls\":[]}}]}");
    assert_int_equal(c.tool_call_deltas, 0);
    c = chat("{\"choices\":[{\"delta\":{\"tool_calls\":null}}]}");
    assert_int_equal(c.tool_call_deltas, 0);
}

static void test_finish_reason(void **state)
{
    (void)state;
    struct oai_chunk c;

    c = chat("{\"choices\":[{\"delta\":{},\"finish_reason\":\"length\"}]}");
    assert_int_equal(c.has_finish, 1);
    assert_string_equal(c.finish_reason, "length");
    /* Truncated to 15 bytes plus the NUL. */
    c = chat("{\"choices\":[{\"delta\":{},\"finish_reason\":\"a_very_long_finish_reason\"}]}");
    assert_int_equal(c.has_finish, 1);
    assert_string_equal(c.finish_reason, "a_very_long_fin");
    /* Non-null but not a string: finished, reason unknown. */
    c = chat("{\"choices\":[{\"delta\":{},\"finish_reason\":7}]}");
    assert_int_equal(c.has_finish, 1);
    assert_string_equal(c.finish_reason, "");
}

static void test_usage(void **state)
{
    (void)state;
    struct oai_chunk c;

    /* OpenAI's and llama.cpp's final chunk: choices empty, usage set. */
    c = chat("{\"choices\":[],\"usage\":{\"completion_tokens\":12,\"prompt_tokens\":46,"
             "\"total_tokens\":58,\"prompt_tokens_details\":{\"cached_tokens\":3}},"
             "\"timings\":{\"predicted_n\":12,\"predicted_ms\":2.763}}");
    assert_int_equal(c.has_usage, 1);
    assert_int_equal(c.completion_tokens, 12);
    assert_int_equal(c.prompt_tokens, 46);
    assert_int_equal(c.cached_tokens, 3);
    assert_int_equal(oai_chunk_carries_output(&c), 0);
    assert_int_equal(c.role_only, 0);

    c = chat("{\"choices\":[{\"delta\":{\"content\":\"x\"}}],\"usage\":null}");
    assert_int_equal(c.has_usage, 0);
    assert_int_equal(c.completion_tokens, -1);

    /* Missing or odd fields stay -1. */
    c = chat("{\"usage\":{\"prompt_tokens\":5,\"completion_tokens\":1.5,"
             "\"prompt_tokens_details\":null}}");
    assert_int_equal(c.has_usage, 1);
    assert_int_equal(c.prompt_tokens, 5);
    assert_int_equal(c.completion_tokens, -1);
    assert_int_equal(c.cached_tokens, -1);
    c = chat("{\"usage\":{\"prompt_tokens\":-4,\"completion_tokens\":\"3\"}}");
    assert_int_equal(c.prompt_tokens, -1);
    assert_int_equal(c.completion_tokens, -1);
}

static void test_errors(void **state)
{
    (void)state;
    struct oai_chunk c;
    char longmsg[400];
    char doc[600];

    c = chat("{\"error\":{\"code\":500,\"message\":\"slot \\\"0\\\" failed\",\"type\":\"server_error\"}}");
    assert_int_equal(c.has_error, 1);
    assert_string_equal(c.error_message, "slot \"0\" failed");
    c = chat("{\"error\":\"overloaded\"}");
    assert_int_equal(c.has_error, 1);
    assert_string_equal(c.error_message, "overloaded");
    c = chat("{\"error\":null,\"choices\":[]}");
    assert_int_equal(c.has_error, 0);
    c = chat("{\"error\":{\"code\":1}}");
    assert_int_equal(c.has_error, 1);
    assert_string_equal(c.error_message, "");
    /* vLLM's older shape. */
    c = chat("{\"object\":\"error\",\"message\":\"bad request\",\"type\":\"BadRequestError\",\"code\":400}");
    assert_int_equal(c.has_error, 1);
    assert_string_equal(c.error_message, "bad request");
    c = chat("{\"object\":\"chat.completion.chunk\",\"message\":\"not an error\"}");
    assert_int_equal(c.has_error, 0);

    /* Long messages are cut to 127 bytes. */
    memset(longmsg, 'm', sizeof(longmsg) - 1);
    longmsg[sizeof(longmsg) - 1] = '\0';
    snprintf(doc, sizeof(doc), "{\"error\":{\"message\":\"%s\"}}", longmsg);
    c = chat(doc);
    assert_int_equal(strlen(c.error_message), 127);
}

static void test_completions(void **state)
{
    (void)state;
    struct oai_chunk c;

    c = compl("{\"choices\":[{\"text\":\" there\",\"index\":0,\"logprobs\":null,"
              "\"finish_reason\":null}],\"object\":\"text_completion\"}");
    assert_int_equal(c.content_bytes, 6);
    assert_int_equal(c.has_finish, 0);
    assert_int_equal(c.role_only, 0);
    c = compl("{\"choices\":[{\"text\":\"\",\"finish_reason\":\"length\"}],"
              "\"usage\":{\"completion_tokens\":12,\"prompt_tokens\":5}}");
    assert_int_equal(c.content_bytes, 0);
    assert_int_equal(oai_chunk_carries_output(&c), 0);
    assert_string_equal(c.finish_reason, "length");
    assert_int_equal(c.completion_tokens, 12);
    c = compl("{\"choices\":[{\"text\":\"ab\"},{\"text\":\"cde\"}]}");
    assert_int_equal(c.content_bytes, 5);
    /* The chat delta is ignored by the completions decoder. */
    c = compl("{\"choices\":[{\"delta\":{\"content\":\"x\"}}]}");
    assert_int_equal(c.content_bytes, 0);
}

static void test_response(void **state)
{
    (void)state;
    struct oai_chunk c;
    const char body[] =
        "{\"choices\":[{\"finish_reason\":\"stop\",\"index\":0,\"message\":{\"role\":"
        "\"assistant\",\"content\":\"Hello there\",\"reasoning_content\":\"ok\","
        "\"tool_calls\":[{\"id\":\"a\"}]}}],\"usage\":{\"completion_tokens\":3,"
        "\"prompt_tokens\":9}}";

    assert_int_equal(oai_decode_response(OAI_API_CHAT, body, sizeof(body) - 1, &c), 0);
    assert_int_equal(c.content_bytes, 11);
    assert_int_equal(c.reasoning_bytes, 2);
    assert_int_equal(c.tool_call_deltas, 1);
    assert_string_equal(c.finish_reason, "stop");
    assert_int_equal(c.completion_tokens, 3);
    assert_int_equal(c.prompt_tokens, 9);
    assert_int_equal(c.role_only, 0);
    assert_int_equal(c.done, 0);

    const char cbody[] = "{\"choices\":[{\"text\":\"four\",\"finish_reason\":\"length\"}]}";
    assert_int_equal(oai_decode_response(OAI_API_COMPLETIONS, cbody, sizeof(cbody) - 1, &c), 0);
    assert_int_equal(c.content_bytes, 4);
    /* A streamed delta is not a response message. */
    const char dbody[] = "{\"choices\":[{\"delta\":{\"content\":\"x\"}}]}";
    assert_int_equal(oai_decode_response(OAI_API_CHAT, dbody, sizeof(dbody) - 1, &c), 0);
    assert_int_equal(c.content_bytes, 0);
}

/* vLLM with stream_options.continuous_usage_stats: usage in every chunk,
 * completion_tokens cumulative. */
static void test_stream_chunk_usage(void **state)
{
    (void)state;
    struct oai_stream s;
    enum oai_tokens_source src;
    static const char *const chunks[] = {
        ("{\"choices\":[{\"delta\":{\"role\":\"assistant\",\"content\":\"\"}}],"
         "\"usage\":{\"prompt_tokens\":10,\"completion_tokens\":0,\"total_tokens\":10}}"),
        "{\"choices\":[{\"delta\":{\"content\":\"a\"}}],\"usage\":{\"prompt_tokens\":10,\"completion_tokens\":1}}",
        "{\"choices\":[{\"delta\":{\"content\":\"bc\"}}],\"usage\":{\"prompt_tokens\":10,\"completion_tokens\":3}}",
        "{\"choices\":[{\"delta\":{\"content\":\"d\"}}],\"usage\":{\"prompt_tokens\":10,\"completion_tokens\":4}}",
        "{\"choices\":[{\"delta\":{},\"finish_reason\":\"stop\"}],\"usage\":{\"prompt_tokens\":10,\"completion_tokens\":4}}",
        "{\"choices\":[],\"usage\":{\"prompt_tokens\":10,\"completion_tokens\":4}}",
        "[DONE]",
    };
    static const uint64_t per_chunk[] = { 0, 1, 2, 1, 0, 0, 0 };

    oai_stream_init(&s);
    for (size_t i = 0; i < LL_ARRAY_LEN(chunks); i++) {
        struct oai_chunk c;
        assert_int_equal(oai_decode_chunk(OAI_API_CHAT, chunks[i], strlen(chunks[i]), &c), 0);
        assert_int_equal(oai_stream_add(&s, &c), per_chunk[i]);
    }
    assert_int_equal(s.events, 7);
    assert_int_equal(s.output_events, 3);
    assert_int_equal(s.role_only_events, 1);
    assert_int_equal(s.done, 1);
    assert_int_equal(oai_stream_output_tokens(&s, &src), 4);
    assert_int_equal(src, OAI_TOKENS_CHUNK_USAGE);
    assert_string_equal(oai_tokens_source_name(src), "chunk_usage");
    assert_string_equal(s.finish_reason, "stop");
}

static void test_stream_events_fallback(void **state)
{
    (void)state;
    struct oai_stream s;
    enum oai_tokens_source src;
    struct oai_chunk c;

    /* No usage at all (a stream cut short): counted events. */
    oai_stream_init(&s);
    c = chat("{\"choices\":[{\"delta\":{\"role\":\"assistant\"}}]}");
    assert_int_equal(oai_stream_add(&s, &c), 0);
    for (int i = 0; i < 5; i++) {
        c = chat("{\"choices\":[{\"delta\":{\"content\":\"x\"}}]}");
        assert_int_equal(oai_stream_add(&s, &c), 1);
    }
    c = chat("{\"error\":{\"message\":\"boom\"}}");
    oai_stream_add(&s, &c);
    assert_int_equal(oai_stream_output_tokens(&s, &src), 5);
    assert_int_equal(src, OAI_TOKENS_EVENTS);
    assert_string_equal(oai_tokens_source_name(src), "events");
    assert_int_equal(s.has_error, 1);
    assert_string_equal(s.error_message, "boom");
    assert_int_equal(s.prompt_tokens, -1);

    /* A final usage chunk outranks the count and carries no tokens itself. */
    c = chat("{\"choices\":[],\"usage\":{\"prompt_tokens\":3,\"completion_tokens\":7}}");
    assert_int_equal(oai_stream_add(&s, &c), 0);
    assert_int_equal(oai_stream_output_tokens(&s, &src), 7);
    assert_int_equal(src, OAI_TOKENS_USAGE);
    assert_string_equal(oai_tokens_source_name(src), "usage");
    assert_int_equal(s.prompt_tokens, 3);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_done_and_malformed),
        cmocka_unit_test(test_chat_content),
        cmocka_unit_test(test_reasoning_and_tools),
        cmocka_unit_test(test_finish_reason),
        cmocka_unit_test(test_usage),
        cmocka_unit_test(test_errors),
        cmocka_unit_test(test_completions),
        cmocka_unit_test(test_response),
        cmocka_unit_test(test_stream_chunk_usage),
        cmocka_unit_test(test_stream_events_fallback),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
