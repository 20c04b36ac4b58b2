/* Unit tests for anthropic.c: llama.cpp's real Messages captures (streamed,
 * split at every offset, with and without the memo; not streamed; an
 * error body), then each event type by hand, error events, the event name
 * as fallback, malformed data, and the memo against full decodes. */
#include "decodertest.h"
#include "test.h"
#include "testutil.h"

#include <string.h>

#include "decode/anthropic.h"
#include "decode/openai.h"
#include "decode/sse.h"
#include "util/util.h"

/* What llama.cpp's stream (max_tokens 12) decodes to: message_start,
 * content_block_start, 12 deltas, content_block_stop, message_delta,
 * message_stop; the deltas "\"" "H" "e" "-" "o" "a" "ce" "," "\"" " " "im" "a",
 * decoded; input_tokens 27 + cache_read_input_tokens 19 from message_start,
 * output_tokens 12 from message_delta. With the memo, every text delta after
 * the first takes the shortcut. */
static void test_capture_stream(void **state)
{
    test_capture_splits("messages-stream.http", anth_decode_event, 11,
                        "events=17;output_events=12;content_events=12;role_only_events=0;"
                        "content_bytes=14;reasoning_bytes=0;tool_call_deltas=0;"
                        "finish_reason=max_tokens;prompt_tokens=46;cached_tokens=19;"
                        "completion_tokens=12;output_tokens=12;tokens_source=usage");
}

/* Not streamed: "\"Can you go to the park with", 46 prompt tokens (1 + 45
 * cached); then llama.cpp's 400 for a prompt too long. */
static void test_capture_nostream_and_error(void **state)
{
    test_capture_response("messages-nostream.http", anth_decode_response, 200,
                          "content_bytes=28;has_finish=1;finish_reason=max_tokens;has_usage=1;"
                          "prompt_tokens=46;cached_tokens=45;completion_tokens=12;has_error=0");
    test_capture_response("messages-error-context-too-long.http", anth_decode_response, 400,
                          "has_error=1;error_message=exceed_context_size_error: request (1643 "
                          "tokens) exceeds the available context size (512 tokens), try "
                          "increasing it;has_usage=0;content_bytes=0");
}

/* Each event type by hand, then the error events. */
static const struct test_event_case events[] = {
    {"content_block_delta",
     "{\"type\":\"content_block_delta\",\"index\":1,"
     "\"delta\":{\"type\":\"thinking_delta\",\"thinking\":\"hmm, \\u00e9\"}}",
     "reasoning_bytes=7;content_bytes=0;output=1"},
    {"content_block_delta",
     "{\"type\":\"content_block_delta\",\"index\":2,"
     "\"delta\":{\"type\":\"input_json_delta\",\"partial_json\":\"{\\\"a\\\":\"}}",
     "tool_call_deltas=1;output=1"},
    {"content_block_delta",
     "{\"type\":\"content_block_delta\",\"index\":0,"
     "\"delta\":{\"type\":\"signature_delta\",\"signature\":\"abc\"}}",
     "output=0"},
    /* Members in any order: the delta's type after its text. */
    {"",
     "{\"delta\":{\"text\":\"abc\",\"type\":\"text_delta\"},\"type\":"
     "\"content_block_delta\",\"index\":0}",
     "content_bytes=3"},
    {"content_block_start",
     "{\"type\":\"content_block_start\",\"index\":1,"
     "\"content_block\":{\"type\":\"tool_use\",\"id\":\"t1\",\"name\":\"f\",\"input\":{}}}",
     "tool_call_deltas=1"},
    {"content_block_start",
     "{\"type\":\"content_block_start\",\"index\":0,"
     "\"content_block\":{\"type\":\"text\",\"text\":\"\"}}",
     "output=0"},
    {"content_block_stop", "{\"type\":\"content_block_stop\",\"index\":0}", "output=0"},
    {"ping", "{\"type\": \"ping\"}", "output=0;has_usage=0;has_finish=0;has_error=0;done=0"},
    /* Anthropic's own message_start: output_tokens there is not output. */
    {"message_start",
     "{\"type\":\"message_start\",\"message\":{\"id\":\"msg_1\","
     "\"usage\":{\"input_tokens\":10,\"cache_creation_input_tokens\":5,"
     "\"cache_read_input_tokens\":20,\"output_tokens\":1}}}",
     "has_usage=1;prompt_tokens=35;cached_tokens=20;completion_tokens=-1"},
    {"message_delta",
     "{\"type\":\"message_delta\",\"delta\":{\"stop_reason\":"
     "\"end_turn\",\"stop_sequence\":null},\"usage\":{\"output_tokens\":15}}",
     "has_finish=1;finish_reason=end_turn;completion_tokens=15;prompt_tokens=-1"},
    {"message_stop", "{\"type\":\"message_stop\"}", "done=1"},
    /* No type in the data: the event name says. */
    {"message_stop", "{}", "done=1"},
    {"content_block_delta", "{\"delta\":{\"type\":\"text_delta\",\"text\":\"xy\"}}",
     "content_bytes=2"},
    /* The data's type wins over the name. */
    {"message_stop", "{\"type\":\"ping\"}", "done=0"},
    /* Error events: the type, then the message. */
    {"error",
     "{\"type\":\"error\",\"error\":{\"type\":\"overloaded_error\","
     "\"message\":\"Overloaded\"}}",
     "has_error=1;error_message=overloaded_error: Overloaded;overloaded=1;output=0"},
    {"error", "{\"type\":\"error\",\"error\":{\"message\":\"no type\"}}",
     "error_message=no type;overloaded=0"},
};

static void test_event_types(void **state)
{
    test_event_cases(anth_decode_event, events, LL_ARRAY_LEN(events));
}

static void test_error_cut_and_malformed(void **state)
{
    /* A long message is cut at a character boundary. */
    test_long_error_cut(anth_decode_event, "error",
                        "{\"type\":\"error\",\"error\":{\"type\":\"api_error\",\"message\":\"",
                        "\"}}", "api_error: ");

    static const char *const bad[] = {
        "{\"type\":\"ping\"",
        "{\"type\":\"ping\"}x",
        "\"ping\"",
        "{\"type\":\"content_block_delta\",\"delta\":{\"type\":\"text_delta\",\"text\":\"ab}}",
    };
    test_event_refusals(anth_decode_event, anth_decode_response, "ping", bad, LL_ARRAY_LEN(bad));
}

/* Bodies not streamed: a block of each kind, then error bodies. */
static const struct test_body_case bodies[] = {
    {"{\"id\":\"msg_1\",\"type\":\"message\",\"role\":\"assistant\",\"content\":["
     "{\"type\":\"thinking\",\"thinking\":\"let me see\",\"signature\":\"s\"},"
     "{\"type\":\"text\",\"text\":\"Hello\"},"
     "{\"type\":\"tool_use\",\"id\":\"t\",\"name\":\"f\",\"input\":{\"text\":\"zz\"}}],"
     "\"stop_reason\":\"tool_use\",\"usage\":{\"input_tokens\":7,\"output_tokens\":9}}",
     "content_bytes=5;reasoning_bytes=10;tool_call_deltas=1;finish_reason=tool_use;"
     "prompt_tokens=7;cached_tokens=-1;completion_tokens=9"},
    /* overloaded: the record's kind is overloaded_event, as streamed. */
    {"{\"type\":\"error\",\"error\":{\"type\":\"overloaded_error\","
     "\"message\":\"Overloaded\"}}",
     "has_error=1;error_message=overloaded_error: Overloaded;overloaded=1"},
    /* A type without a message: the type alone, no dangling ": ". */
    {"{\"type\":\"error\",\"error\":{\"type\":\"api_error\"}}", "error_message=api_error"},
    /* Input and cache counts near INT64_MAX: their sum saturates. */
    {"{\"type\":\"message\",\"content\":[],\"usage\":{\"input_tokens\":"
     "9223372036854775807,\"cache_read_input_tokens\":1,\"output_tokens\":2}}",
     "prompt_tokens=9223372036854775807"},
};

static void test_response_blocks(void **state)
{
    test_body_cases(anth_decode_response, bodies, LL_ARRAY_LEN(bodies));
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
    assert_true(test_memo_agrees(anth_decode_event, seq, LL_ARRAY_LEN(seq)) >= 2);
}

UNIT_TESTS(test_capture_stream, test_capture_nostream_and_error, test_event_types,
           test_error_cut_and_malformed, test_response_blocks, test_memo)
