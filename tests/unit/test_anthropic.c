/* Unit tests for anthropic.c: llama.cpp's real Messages captures (streamed,
 * split at every offset, with and without the memo; not streamed; an
 * error body), then each event type by hand, error events, the event name
 * as fallback, malformed data, and the memo against full decodes. */
#include "test.h"
#include "testutil.h"

#include <string.h>

#include "decode/anthropic.h"
#include "decode/openai.h"
#include "decode/sse.h"
#include "util/util.h"

/* What llama.cpp's stream (max_tokens 12) decodes to. */
static void check_stream(const struct test_stream_acc *a)
{
    enum oai_tokens_source src;
    assert_int_equal(a->malformed, 0);
    /* message_start, content_block_start, 12 deltas, content_block_stop,
     * message_delta, message_stop. */
    assert_int_equal(a->st.events, 17);
    assert_int_equal(a->st.output_events, 12);
    assert_int_equal(a->st.content_events, 12);
    /* "\"" "H" "e" "-" "o" "a" "ce" "," "\"" " " "im" "a", decoded. */
    assert_int_equal(a->st.content_bytes, 14);
    assert_int_equal(a->st.reasoning_bytes, 0);
    assert_int_equal(a->st.done, 1);
    assert_int_equal(a->st.has_finish, 1);
    assert_string_equal(a->st.finish_reason, "max_tokens");
    /* input_tokens 27 + cache_read_input_tokens 19 from message_start,
     * output_tokens 12 from message_delta. */
    assert_int_equal(a->st.prompt_tokens, 46);
    assert_int_equal(a->st.cached_tokens, 19);
    assert_int_equal(a->st.completion_tokens, 12);
    assert_int_equal(oai_stream_output_tokens(&a->st, &src), 12);
    assert_int_equal(src, OAI_TOKENS_USAGE);
    assert_int_equal(a->st.has_error, 0);
}

static void test_capture_stream(void **state)
{
    /* With the memo, every text delta after the first takes the shortcut. */
    test_capture_splits("messages-stream.http", anth_decode_event, check_stream, 11);
}

static void test_capture_nostream_and_error(void **state)
{
    int status;
    size_t len;
    struct oai_chunk c;
    char *body = test_capture_body("messages-nostream.http", &status, &len);

    assert_int_equal(status, 200);
    assert_int_equal(anth_decode_response(body, len, &c), 0);
    assert_int_equal(c.content_bytes, 28); /* "\"Can you go to the park with" */
    assert_int_equal(c.has_finish, 1);
    assert_string_equal(c.finish_reason, "max_tokens");
    assert_int_equal(c.has_usage, 1);
    assert_int_equal(c.prompt_tokens, 46); /* 1 + 45 cached */
    assert_int_equal(c.cached_tokens, 45);
    assert_int_equal(c.completion_tokens, 12);
    assert_int_equal(c.has_error, 0);
    free(body);

    body = test_capture_body("messages-error-context-too-long.http", &status, &len);
    assert_int_equal(status, 400);
    assert_int_equal(anth_decode_response(body, len, &c), 0);
    assert_int_equal(c.has_error, 1);
    assert_string_equal(c.error_message,
                        "exceed_context_size_error: request (1643 tokens) exceeds the "
                        "available context size (512 tokens), try increasing it");
    assert_int_equal(c.has_usage, 0);
    assert_int_equal(c.content_bytes, 0);
    free(body);
}

static struct oai_chunk ev(const char *name, const char *data)
{
    struct oai_chunk c;
    int rc = anth_decode_event(name, strlen(name), data, strlen(data), &c, NULL);
    if (rc != 0)
        fail_msg("decode of %s failed: %d", data, rc);
    return c;
}

static void test_event_types(void **state)
{
    struct oai_chunk c;

    c = ev("content_block_delta",
           "{\"type\":\"content_block_delta\",\"index\":1,"
           "\"delta\":{\"type\":\"thinking_delta\",\"thinking\":\"hmm, \\u00e9\"}}");
    assert_int_equal(c.reasoning_bytes, 7);
    assert_int_equal(c.content_bytes, 0);
    assert_true(oai_chunk_carries_output(&c));

    c = ev("content_block_delta",
           "{\"type\":\"content_block_delta\",\"index\":2,"
           "\"delta\":{\"type\":\"input_json_delta\",\"partial_json\":\"{\\\"a\\\":\"}}");
    assert_int_equal(c.tool_call_deltas, 1);
    assert_true(oai_chunk_carries_output(&c));

    c = ev("content_block_delta",
           "{\"type\":\"content_block_delta\",\"index\":0,"
           "\"delta\":{\"type\":\"signature_delta\",\"signature\":\"abc\"}}");
    assert_false(oai_chunk_carries_output(&c));

    /* Members in any order: the delta's type after its text. */
    c = ev("", "{\"delta\":{\"text\":\"abc\",\"type\":\"text_delta\"},\"type\":"
               "\"content_block_delta\",\"index\":0}");
    assert_int_equal(c.content_bytes, 3);

    c = ev("content_block_start",
           "{\"type\":\"content_block_start\",\"index\":1,"
           "\"content_block\":{\"type\":\"tool_use\",\"id\":\"t1\",\"name\":\"f\",\"input\":{}}}");
    assert_int_equal(c.tool_call_deltas, 1);
    c = ev("content_block_start", "{\"type\":\"content_block_start\",\"index\":0,"
                                  "\"content_block\":{\"type\":\"text\",\"text\":\"\"}}");
    assert_false(oai_chunk_carries_output(&c));
    c = ev("content_block_stop", "{\"type\":\"content_block_stop\",\"index\":0}");
    assert_false(oai_chunk_carries_output(&c));
    c = ev("ping", "{\"type\": \"ping\"}");
    assert_false(oai_chunk_carries_output(&c));
    assert_int_equal(c.has_usage + c.has_finish + c.has_error + c.done, 0);

    /* Anthropic's own message_start: output_tokens there is not output. */
    c = ev("message_start", "{\"type\":\"message_start\",\"message\":{\"id\":\"msg_1\","
                            "\"usage\":{\"input_tokens\":10,\"cache_creation_input_tokens\":5,"
                            "\"cache_read_input_tokens\":20,\"output_tokens\":1}}}");
    assert_int_equal(c.has_usage, 1);
    assert_int_equal(c.prompt_tokens, 35);
    assert_int_equal(c.cached_tokens, 20);
    assert_int_equal(c.completion_tokens, -1);

    c = ev("message_delta",
           "{\"type\":\"message_delta\",\"delta\":{\"stop_reason\":"
           "\"end_turn\",\"stop_sequence\":null},\"usage\":{\"output_tokens\":15}}");
    assert_int_equal(c.has_finish, 1);
    assert_string_equal(c.finish_reason, "end_turn");
    assert_int_equal(c.completion_tokens, 15);
    assert_int_equal(c.prompt_tokens, -1);

    c = ev("message_stop", "{\"type\":\"message_stop\"}");
    assert_int_equal(c.done, 1);
    /* No type in the data: the event name says. */
    c = ev("message_stop", "{}");
    assert_int_equal(c.done, 1);
    c = ev("content_block_delta", "{\"delta\":{\"type\":\"text_delta\",\"text\":\"xy\"}}");
    assert_int_equal(c.content_bytes, 2);
    /* The data's type wins over the name. */
    c = ev("message_stop", "{\"type\":\"ping\"}");
    assert_int_equal(c.done, 0);
}

static void test_error_events_and_malformed(void **state)
{
    struct oai_chunk c;

    c = ev("error", "{\"type\":\"error\",\"error\":{\"type\":\"overloaded_error\","
                    "\"message\":\"Overloaded\"}}");
    assert_int_equal(c.has_error, 1);
    assert_string_equal(c.error_message, "overloaded_error: Overloaded");
    assert_int_equal(c.overloaded, 1);
    assert_false(oai_chunk_carries_output(&c));

    c = ev("error", "{\"type\":\"error\",\"error\":{\"message\":\"no type\"}}");
    assert_string_equal(c.error_message, "no type");
    assert_int_equal(c.overloaded, 0);

    /* A long message is cut at a character boundary. */
    test_long_error_cut(anth_decode_event, "error",
                        "{\"type\":\"error\",\"error\":{\"type\":\"api_error\",\"message\":\"",
                        "\"}}", "api_error: ");

    static const char *const bad[] = {
        "",
        "[DONE]",
        "{\"type\":\"ping\"",
        "{\"type\":\"ping\"}x",
        "[1]",
        "\"ping\"",
        "{\"type\":\"content_block_delta\",\"delta\":{\"type\":\"text_delta\",\"text\":\"ab}}",
    };
    test_event_refusals(anth_decode_event, anth_decode_response, "ping", bad, LL_ARRAY_LEN(bad));
}

static void test_response_blocks(void **state)
{
    struct oai_chunk c;
    static const char body[] =
        "{\"id\":\"msg_1\",\"type\":\"message\",\"role\":\"assistant\",\"content\":["
        "{\"type\":\"thinking\",\"thinking\":\"let me see\",\"signature\":\"s\"},"
        "{\"type\":\"text\",\"text\":\"Hello\"},"
        "{\"type\":\"tool_use\",\"id\":\"t\",\"name\":\"f\",\"input\":{\"text\":\"zz\"}}],"
        "\"stop_reason\":\"tool_use\",\"usage\":{\"input_tokens\":7,\"output_tokens\":9}}";
    assert_int_equal(anth_decode_response(body, sizeof body - 1, &c), 0);
    assert_int_equal(c.content_bytes, 5);
    assert_int_equal(c.reasoning_bytes, 10);
    assert_int_equal(c.tool_call_deltas, 1);
    assert_string_equal(c.finish_reason, "tool_use");
    assert_int_equal(c.prompt_tokens, 7);
    assert_int_equal(c.cached_tokens, -1);
    assert_int_equal(c.completion_tokens, 9);

    static const char err[] = "{\"type\":\"error\",\"error\":{\"type\":\"overloaded_error\","
                              "\"message\":\"Overloaded\"}}";
    assert_int_equal(anth_decode_response(err, sizeof err - 1, &c), 0);
    assert_int_equal(c.has_error, 1);
    assert_string_equal(c.error_message, "overloaded_error: Overloaded");
    assert_int_equal(c.overloaded, 1); /* the record's kind: overloaded_event, as streamed */

    /* A type without a message: the type alone, no dangling ": ". */
    static const char bare[] = "{\"type\":\"error\",\"error\":{\"type\":\"api_error\"}}";
    assert_int_equal(anth_decode_response(bare, sizeof bare - 1, &c), 0);
    assert_string_equal(c.error_message, "api_error");

    /* Input and cache counts near INT64_MAX: their sum saturates. */
    static const char big[] = "{\"type\":\"message\",\"content\":[],\"usage\":{\"input_tokens\":"
                              "9223372036854775807,\"cache_read_input_tokens\":1,"
                              "\"output_tokens\":2}}";
    assert_int_equal(anth_decode_response(big, sizeof big - 1, &c), 0);
    assert_int_equal(c.prompt_tokens, INT64_MAX);
}

/* The memo against full decodes over a made-up stream: escapes, a text of
 * another length, a thinking delta in the same shape (never patched), a
 * delta with a different index, and a payload cut inside its text. */
static void test_memo(void **state)
{
    static const char *const seq[] = {
        "{\"type\":\"content_block_delta\",\"index\":0,\"delta\":{\"type\":\"text_delta\",\"text\":"
        "\"a\"}}",
        "{\"type\":\"content_block_delta\",\"index\":0,\"delta\":{\"type\":\"text_delta\",\"text\":"
        "\"\\u00e9\\\"\"}}",
        "{\"type\":\"content_block_delta\",\"index\":0,\"delta\":{\"type\":\"text_delta\",\"text\":"
        "\"\"}}",
        "{\"type\":\"content_block_delta\",\"index\":0,\"delta\":{\"type\":\"text_delta\",\"text\":"
        "\"a\"b\"}}",
        "{\"type\":\"content_block_delta\",\"index\":0,\"delta\":{\"type\":\"text_delta\",\"text\":"
        "\"long text\"}}",
        "{\"type\":\"content_block_delta\",\"index\":1,\"delta\":{\"type\":\"text_delta\",\"text\":"
        "\"x\"}}",
        "{\"type\":\"content_block_delta\",\"index\":0,\"delta\":{\"type\":\"thinking_delta\","
        "\"text\":\"a\"}}",
        "{\"type\":\"content_block_delta\",\"index\":0,\"delta\":{\"type\":\"thinking_delta\","
        "\"text\":\"bb\"}}",
        "{\"type\":\"content_block_delta\",\"index\":0,\"delta\":{\"type\":\"text_delta\",\"text\":"
        "\"a\"}}",
        "{\"type\":\"content_block_delta\",\"index\":0,\"delta\":{\"type\":\"text_delta\",\"text\":"
        "\"\\ud800\"}}",
        "{\"type\":\"content_block_delta\",\"index\":0,\"delta\":{\"type\":\"text_delta\",\"text\":"
        "\"ok\"}}",
    };
    struct oai_memo m;
    oai_memo_reset(&m);
    for (size_t i = 0; i < LL_ARRAY_LEN(seq); i++) {
        struct oai_chunk a, b;
        size_t n = strlen(seq[i]);
        int ra = anth_decode_event("", 0, seq[i], n, &a, &m);
        int rb = anth_decode_event("", 0, seq[i], n, &b, NULL);
        assert_int_equal(ra, rb);
        if (ra == 0)
            assert_memory_equal(&a, &b, sizeof a);
    }
    assert_true(m.hits >= 2);
}

TEST_MAIN(cmocka_unit_test(test_capture_stream), cmocka_unit_test(test_capture_nostream_and_error),
          cmocka_unit_test(test_event_types), cmocka_unit_test(test_error_events_and_malformed),
          cmocka_unit_test(test_response_blocks), cmocka_unit_test(test_memo))
