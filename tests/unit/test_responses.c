/* Unit tests for responses.c: llama.cpp's real Responses captures
 * (streamed, split at every offset, with and without the memo; not
 * streamed), then each event type by hand, the ends (completed,
 * incomplete, failed), error events, the event name as fallback, malformed
 * data, bodies of every output kind, and the memo against full decodes. */
#include "decodertest.h"
#include "test.h"
#include "testutil.h"

#include <string.h>

#include "decode/openai.h"
#include "decode/responses.h"
#include "decode/sse.h"
#include "util/util.h"

/* What llama.cpp's stream (max_output_tokens 12) decodes to:
 * response.created, response.in_progress, output_item.added,
 * content_part.added, 12 deltas ("One day, a little bird cam"),
 * output_text.done, content_part.done, output_item.done,
 * response.completed, whose usage's input_tokens counts the cached ones.
 * With the memo, every text delta after the first takes the shortcut. */
static void test_capture_stream(void **state)
{
    test_capture_splits("responses-stream.http", resp_decode_event, 11,
                        "events=20;output_events=12;content_events=12;role_only_events=0;"
                        "content_bytes=26;reasoning_bytes=0;tool_call_deltas=0;"
                        "finish_reason=completed;prompt_tokens=46;cached_tokens=45;"
                        "completion_tokens=12;output_tokens=12;tokens_source=usage");
}

/* Not streamed: "\"Hi a come?\" asked", decoded; then llama.cpp's 400 (the
 * chat capture's shape, which it sends on every endpoint). */
static void test_capture_nostream(void **state)
{
    test_capture_response("responses-nostream.http", resp_decode_response, 200,
                          "content_bytes=18;reasoning_bytes=0;has_finish=1;"
                          "finish_reason=completed;has_usage=1;prompt_tokens=46;"
                          "cached_tokens=45;completion_tokens=12;has_error=0;done=0");
    test_capture_response("error-context-too-long.http", resp_decode_response, 400,
                          "has_error=1;error_message=exceed_context_size_error: request (2102 "
                          "tokens) exceeds the available context size (512 tokens), try "
                          "increasing it;content_bytes=0");
}

/* Each event type by hand, the ends (completed, incomplete, failed), then
 * the error events. */
static const struct test_event_case events[] = {
    {"response.output_text.delta",
     "{\"type\":\"response.output_text.delta\",\"sequence_number\":4,\"item_id\":\"m\","
     "\"output_index\":0,\"content_index\":0,\"delta\":\"h\\u00e9\",\"logprobs\":[]}",
     "content_bytes=3;output=1"},
    {"", "{\"type\":\"response.reasoning_text.delta\",\"delta\":\"hmm\"}",
     "reasoning_bytes=3;content_bytes=0"},
    {"",
     "{\"type\":\"response.reasoning_summary_text.delta\",\"delta\":\"sum\","
     "\"summary_index\":0}",
     "reasoning_bytes=3"},
    {"", "{\"type\":\"response.refusal.delta\",\"delta\":\"no\"}", "content_bytes=2"},
    {"", "{\"type\":\"response.function_call_arguments.delta\",\"delta\":\"{\\\"a\"}",
     "tool_call_deltas=1;content_bytes=0"},
    {"",
     "{\"type\":\"response.output_item.added\",\"item\":{\"type\":\"function_call\","
     "\"name\":\"f\",\"arguments\":\"\"}}",
     "tool_call_deltas=1"},
    {"",
     "{\"type\":\"response.output_item.added\",\"item\":{\"type\":\"message\","
     "\"content\":[]}}",
     "output=0"},
    /* Members in any order: the delta before the type. */
    {"", "{\"delta\":\"abc\",\"type\":\"response.output_text.delta\"}", "content_bytes=3"},
    /* Not output: the done events repeat the text, the starts have none. */
    {"", "{\"type\":\"response.output_text.done\",\"text\":\"abc\"}", "output=0"},
    {"",
     "{\"type\":\"response.created\",\"response\":{\"status\":\"in_progress\","
     "\"output\":[],\"usage\":null}}",
     "output=0;has_usage=0;has_finish=0;has_error=0;done=0"},
    /* The end: usage from its response, its output not counted again;
     * completion_tokens with the reasoning included, as OpenAI counts. */
    {"",
     "{\"type\":\"response.completed\",\"response\":{\"status\":\"completed\","
     "\"output\":[{\"type\":\"message\",\"content\":[{\"type\":\"output_text\","
     "\"text\":\"abc\"}]}],\"usage\":{\"input_tokens\":10,\"input_tokens_details\":"
     "{\"cached_tokens\":4},\"output_tokens\":7,\"output_tokens_details\":"
     "{\"reasoning_tokens\":2},\"total_tokens\":17}}}",
     "done=1;output=0;finish_reason=completed;prompt_tokens=10;cached_tokens=4;"
     "completion_tokens=7;has_error=0"},
    /* OpenAI ends a response at max_output_tokens so: an end, not an error. */
    {"",
     "{\"type\":\"response.incomplete\",\"response\":{\"status\":\"incomplete\","
     "\"incomplete_details\":{\"reason\":\"max_output_tokens\"},"
     "\"usage\":{\"input_tokens\":3,\"output_tokens\":16}}}",
     "done=1;finish_reason=incomplete:max_output_tokens;completion_tokens=16;cached_tokens=-1;"
     "has_error=0"},
    /* Its reason kept beside the status, whatever it is; none given: the
     * status alone. */
    {"",
     "{\"type\":\"response.incomplete\",\"response\":{\"incomplete_details\":"
     "{\"reason\":\"content_filter\"},\"status\":\"incomplete\"}}",
     "done=1;finish_reason=incomplete:content_filter"},
    {"",
     "{\"type\":\"response.incomplete\",\"response\":{\"status\":\"incomplete\","
     "\"incomplete_details\":null}}",
     "done=1;finish_reason=incomplete"},
    /* No type in the data: the event name says. */
    {"response.completed", "{\"response\":{\"usage\":{\"output_tokens\":2}}}",
     "done=1;completion_tokens=2"},
    {"response.output_text.delta", "{\"delta\":\"xy\"}", "content_bytes=2"},
    /* The data's type wins over the name. */
    {"response.completed", "{\"type\":\"response.in_progress\"}", "done=0"},
    /* A failed response: its error, or (none given) the event's type. */
    {"response.failed",
     "{\"type\":\"response.failed\",\"response\":{\"status\":\"failed\",\"error\":{"
     "\"code\":\"server_error\",\"message\":\"The model crashed\"},\"usage\":"
     "{\"input_tokens\":5,\"output_tokens\":1}}}",
     "done=1;has_error=1;error_message=server_error: The model crashed;overloaded=0;"
     "has_finish=0;completion_tokens=1"},
    {"", "{\"type\":\"response.failed\",\"response\":{\"status\":\"failed\"}}",
     "has_error=1;error_message=response.failed"},
    /* OpenAI's error event: its own code and message. */
    {"error",
     "{\"type\":\"error\",\"code\":\"server_is_overloaded\",\"message\":"
     "\"Overloaded\",\"param\":null,\"sequence_number\":3}",
     "has_error=1;error_message=server_is_overloaded: Overloaded;overloaded=1;done=0"},
    /* Or an error object in it (the type when there is no code). */
    {"error",
     "{\"type\":\"error\",\"error\":{\"type\":\"invalid_request_error\","
     "\"message\":\"bad\"}}",
     "error_message=invalid_request_error: bad"},
    {"error",
     "{\"type\":\"error\",\"error\":{\"type\":\"t\",\"code\":\"c\","
     "\"message\":\"m\"}}",
     "error_message=c: m"},
    /* code and message members mean nothing in other events. */
    {"", "{\"type\":\"response.in_progress\",\"code\":\"x\",\"message\":\"y\"}", "has_error=0"},
};

static void test_event_types(void **state)
{
    test_event_cases(resp_decode_event, events, LL_ARRAY_LEN(events));

    /* A name too long for any type is no type. */
    char longname[100];
    memset(longname, 'x', sizeof longname - 1);
    longname[sizeof longname - 1] = '\0';
    struct oai_chunk c = test_event_ok(resp_decode_event, longname, "{\"delta\":\"xy\"}");
    assert_false(oai_chunk_carries_output(&c));
}

static void test_error_cut_and_malformed(void **state)
{
    /* A long message is cut at a character boundary. */
    test_long_error_cut(resp_decode_event, "error",
                        "{\"type\":\"error\",\"code\":\"server_error\",\"message\":\"", "\"}",
                        "server_error: ");

    static const char *const bad[] = {
        "{\"type\":\"response.completed\"",
        "{\"type\":\"response.completed\"}x",
        "\"error\"",
        "{\"type\":\"response.output_text.delta\",\"delta\":\"ab}",
    };
    test_event_refusals(resp_decode_event, resp_decode_response, "error", bad, LL_ARRAY_LEN(bad));
}

/* Bodies not streamed: an output of every kind, then bodies that are
 * errors and the message each gives: a failed response with its error,
 * one without (named by the decoder), and an error body. */
static const struct test_body_case bodies[] = {
    {"{\"id\":\"resp_1\",\"object\":\"response\",\"status\":\"incomplete\",\"error\":null,"
     "\"incomplete_details\":{\"reason\":\"max_output_tokens\"},\"output\":["
     "{\"type\":\"reasoning\",\"id\":\"rs\",\"summary\":[{\"type\":\"summary_text\","
     "\"text\":\"ab\"}],\"content\":[{\"type\":\"reasoning_text\",\"text\":\"let me\"}]},"
     "{\"type\":\"message\",\"role\":\"assistant\",\"content\":[{\"type\":\"output_text\","
     "\"text\":\"Hello\",\"annotations\":[]},{\"type\":\"refusal\",\"refusal\":\"no\"}]},"
     "{\"type\":\"function_call\",\"name\":\"f\",\"arguments\":\"{}\"}],"
     "\"usage\":{\"input_tokens\":7,\"output_tokens\":9,\"output_tokens_details\":"
     "{\"reasoning_tokens\":3}}}",
     "content_bytes=7;reasoning_bytes=8;tool_call_deltas=1;"
     "finish_reason=incomplete:max_output_tokens;"
     "prompt_tokens=7;cached_tokens=-1;completion_tokens=9;has_error=0"},
    {"{\"object\":\"response\",\"status\":\"failed\",\"error\":{"
     "\"code\":\"server_error\",\"message\":\"boom\"},\"output\":[]}",
     "has_error=1;error_message=server_error: boom;has_finish=0"},
    {"{\"object\":\"response\",\"status\":\"failed\"}",
     "has_error=1;error_message=response failed;has_finish=0"},
    {"{\"error\":{\"message\":\"Rate limit\",\"type\":\"requests\","
     "\"param\":null,\"code\":\"rate_limit_exceeded\"}}",
     "has_error=1;error_message=rate_limit_exceeded: Rate limit;has_finish=0"},
};

static void test_response_bodies(void **state)
{
    test_body_cases(resp_decode_response, bodies, LL_ARRAY_LEN(bodies));
}

/* The memo against full decodes over a made-up stream: escapes, a text of
 * another length, a reasoning delta in the same shape (never patched), a
 * delta of another item, a payload cut inside its text, two deltas. */
static void test_memo(void **state)
{
#define D(item, text)                                                                              \
    ("{\"type\":\"response.output_text.delta\",\"item_id\":\"" item "\",\"delta\":\"" text "\"}")
    static const char *const seq[] = {
        D("m", "a"),
        D("m", "\\u00e9\\\""),
        D("m", ""),
        D("m", "a\"b"),
        D("m", "long text"),
        D("n", "x"),
        "{\"type\":\"response.reasoning_text.delta\",\"item_id\":\"m\",\"delta\":\"a\"}",
        "{\"type\":\"response.reasoning_text.delta\",\"item_id\":\"m\",\"delta\":\"bb\"}",
        D("m", "a"),
        D("m", "\\ud800"),
        D("m", "ok"),
        "{\"type\":\"response.output_text.delta\",\"item_id\":\"m\",\"delta\":\"a\","
        "\"delta\":\"b\"}",
        D("m", "ok"),
    };
#undef D
    assert_true(test_memo_agrees(resp_decode_event, seq, LL_ARRAY_LEN(seq)) >= 2);
}

UNIT_TESTS(test_capture_stream, test_capture_nostream, test_event_types,
           test_error_cut_and_malformed, test_response_bodies, test_memo)
