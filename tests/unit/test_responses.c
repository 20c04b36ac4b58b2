/* Unit tests for responses.c: llama.cpp's real Responses captures
 * (streamed, split at every offset, with and without the memo; not
 * streamed), then each event type by hand, the ends (completed,
 * incomplete, failed), error events, the event name as fallback, malformed
 * data, bodies of every output kind, and the memo against full decodes. */
#include "test.h"
#include "testutil.h"

#include <string.h>

#include "decode/openai.h"
#include "decode/responses.h"
#include "decode/sse.h"
#include "util/util.h"

/* What llama.cpp's stream (max_output_tokens 12) decodes to. */
static void check_stream(const struct test_stream_acc *a)
{
    enum oai_tokens_source src;
    assert_int_equal(a->malformed, 0);
    /* response.created, response.in_progress, output_item.added,
     * content_part.added, 12 deltas, output_text.done, content_part.done,
     * output_item.done, response.completed. */
    assert_int_equal(a->st.events, 20);
    assert_int_equal(a->st.output_events, 12);
    assert_int_equal(a->st.content_events, 12);
    /* "One day, a little bird cam" */
    assert_int_equal(a->st.content_bytes, 26);
    assert_int_equal(a->st.reasoning_bytes, 0);
    assert_int_equal(a->st.tool_call_deltas, 0);
    assert_int_equal(a->st.done, 1);
    assert_int_equal(a->st.has_finish, 1);
    assert_string_equal(a->st.finish_reason, "completed");
    /* response.completed's usage: input_tokens counts the cached ones. */
    assert_int_equal(a->st.prompt_tokens, 46);
    assert_int_equal(a->st.cached_tokens, 45);
    assert_int_equal(a->st.completion_tokens, 12);
    assert_int_equal(oai_stream_output_tokens(&a->st, &src), 12);
    assert_int_equal(src, OAI_TOKENS_USAGE);
    assert_int_equal(a->st.has_error, 0);
}

static void test_capture_stream(void **state)
{
    /* With the memo, every text delta after the first takes the shortcut. */
    test_capture_splits("responses-stream.http", resp_decode_event, check_stream, 11);
}

static void test_capture_nostream(void **state)
{
    int status;
    size_t len;
    struct oai_chunk c;
    char *body = test_capture_body("responses-nostream.http", &status, &len);

    assert_int_equal(status, 200);
    assert_int_equal(resp_decode_response(body, len, &c), 0);
    assert_int_equal(c.content_bytes, 18); /* "\"Hi a come?\" asked", decoded */
    assert_int_equal(c.reasoning_bytes, 0);
    assert_int_equal(c.has_finish, 1);
    assert_string_equal(c.finish_reason, "completed");
    assert_int_equal(c.has_usage, 1);
    assert_int_equal(c.prompt_tokens, 46);
    assert_int_equal(c.cached_tokens, 45);
    assert_int_equal(c.completion_tokens, 12);
    assert_int_equal(c.has_error, 0);
    assert_int_equal(c.done, 0);
    /* Split: every prefix is an incomplete object. */
    for (size_t k = 0; k < len; k++)
        assert_int_equal(resp_decode_response(body, k, &c), LL_E_PROTO);
    free(body);

    /* llama.cpp's 400 (the chat capture's shape, which it sends on every
     * endpoint). */
    body = test_capture_body("error-context-too-long.http", &status, &len);
    assert_int_equal(status, 400);
    assert_int_equal(resp_decode_response(body, len, &c), 0);
    assert_int_equal(c.has_error, 1);
    assert_non_null(strstr(c.error_message, "exceeds the available context size"));
    assert_int_equal(c.content_bytes, 0);
    free(body);
}

static struct oai_chunk ev(const char *name, const char *data)
{
    struct oai_chunk c;
    int rc = resp_decode_event(name, strlen(name), data, strlen(data), &c, NULL);
    if (rc != 0)
        fail_msg("decode of %s failed: %d", data, rc);
    return c;
}

static void test_event_types(void **state)
{
    struct oai_chunk c;

    c = ev("response.output_text.delta",
           "{\"type\":\"response.output_text.delta\",\"sequence_number\":4,\"item_id\":\"m\","
           "\"output_index\":0,\"content_index\":0,\"delta\":\"h\\u00e9\",\"logprobs\":[]}");
    assert_int_equal(c.content_bytes, 3);
    assert_true(oai_chunk_carries_output(&c));

    c = ev("", "{\"type\":\"response.reasoning_text.delta\",\"delta\":\"hmm\"}");
    assert_int_equal(c.reasoning_bytes, 3);
    assert_int_equal(c.content_bytes, 0);
    c = ev("", "{\"type\":\"response.reasoning_summary_text.delta\",\"delta\":\"sum\","
               "\"summary_index\":0}");
    assert_int_equal(c.reasoning_bytes, 3);
    c = ev("", "{\"type\":\"response.refusal.delta\",\"delta\":\"no\"}");
    assert_int_equal(c.content_bytes, 2);
    c = ev("", "{\"type\":\"response.function_call_arguments.delta\",\"delta\":\"{\\\"a\"}");
    assert_int_equal(c.tool_call_deltas, 1);
    assert_int_equal(c.content_bytes, 0);
    c = ev("", "{\"type\":\"response.output_item.added\",\"item\":{\"type\":\"function_call\","
               "\"name\":\"f\",\"arguments\":\"\"}}");
    assert_int_equal(c.tool_call_deltas, 1);
    c = ev("", "{\"type\":\"response.output_item.added\",\"item\":{\"type\":\"message\","
               "\"content\":[]}}");
    assert_false(oai_chunk_carries_output(&c));

    /* Members in any order: the delta before the type. */
    c = ev("", "{\"delta\":\"abc\",\"type\":\"response.output_text.delta\"}");
    assert_int_equal(c.content_bytes, 3);

    /* Not output: the done events repeat the text, the starts have none. */
    c = ev("", "{\"type\":\"response.output_text.done\",\"text\":\"abc\"}");
    assert_false(oai_chunk_carries_output(&c));
    c = ev("", "{\"type\":\"response.created\",\"response\":{\"status\":\"in_progress\","
               "\"output\":[],\"usage\":null}}");
    assert_false(oai_chunk_carries_output(&c));
    assert_int_equal(c.has_usage + c.has_finish + c.has_error + c.done, 0);

    /* The end: usage from its response, its output not counted again. */
    c = ev("", "{\"type\":\"response.completed\",\"response\":{\"status\":\"completed\","
               "\"output\":[{\"type\":\"message\",\"content\":[{\"type\":\"output_text\","
               "\"text\":\"abc\"}]}],\"usage\":{\"input_tokens\":10,\"input_tokens_details\":"
               "{\"cached_tokens\":4},\"output_tokens\":7,\"output_tokens_details\":"
               "{\"reasoning_tokens\":2},\"total_tokens\":17}}}");
    assert_int_equal(c.done, 1);
    assert_false(oai_chunk_carries_output(&c));
    assert_string_equal(c.finish_reason, "completed");
    assert_int_equal(c.prompt_tokens, 10);
    assert_int_equal(c.cached_tokens, 4);
    assert_int_equal(c.completion_tokens, 7); /* reasoning included, as OpenAI counts */
    assert_int_equal(c.has_error, 0);

    /* OpenAI ends a response at max_output_tokens so: an end, not an error. */
    c = ev("", "{\"type\":\"response.incomplete\",\"response\":{\"status\":\"incomplete\","
               "\"incomplete_details\":{\"reason\":\"max_output_tokens\"},"
               "\"usage\":{\"input_tokens\":3,\"output_tokens\":16}}}");
    assert_int_equal(c.done, 1);
    assert_string_equal(c.finish_reason, "incomplete");
    assert_int_equal(c.completion_tokens, 16);
    assert_int_equal(c.cached_tokens, -1);
    assert_int_equal(c.has_error, 0);

    /* No type in the data: the event name says. */
    c = ev("response.completed", "{\"response\":{\"usage\":{\"output_tokens\":2}}}");
    assert_int_equal(c.done, 1);
    assert_int_equal(c.completion_tokens, 2);
    c = ev("response.output_text.delta", "{\"delta\":\"xy\"}");
    assert_int_equal(c.content_bytes, 2);
    /* The data's type wins over the name. */
    c = ev("response.completed", "{\"type\":\"response.in_progress\"}");
    assert_int_equal(c.done, 0);
    /* A name too long for any type is no type. */
    char longname[100];
    memset(longname, 'x', sizeof longname - 1);
    longname[sizeof longname - 1] = '\0';
    c = ev(longname, "{\"delta\":\"xy\"}");
    assert_false(oai_chunk_carries_output(&c));
}

static void test_errors_and_malformed(void **state)
{
    struct oai_chunk c;

    c = ev("response.failed",
           "{\"type\":\"response.failed\",\"response\":{\"status\":\"failed\",\"error\":{"
           "\"code\":\"server_error\",\"message\":\"The model crashed\"},\"usage\":"
           "{\"input_tokens\":5,\"output_tokens\":1}}}");
    assert_int_equal(c.done, 1);
    assert_int_equal(c.has_error, 1);
    assert_string_equal(c.error_message, "server_error: The model crashed");
    assert_int_equal(c.overloaded, 0);
    assert_int_equal(c.has_finish, 0);
    assert_int_equal(c.completion_tokens, 1);
    c = ev("", "{\"type\":\"response.failed\",\"response\":{\"status\":\"failed\"}}");
    assert_int_equal(c.has_error, 1);
    assert_string_equal(c.error_message, "response.failed");

    /* OpenAI's error event: its own code and message. */
    c = ev("error", "{\"type\":\"error\",\"code\":\"server_is_overloaded\",\"message\":"
                    "\"Overloaded\",\"param\":null,\"sequence_number\":3}");
    assert_int_equal(c.has_error, 1);
    assert_string_equal(c.error_message, "server_is_overloaded: Overloaded");
    assert_int_equal(c.overloaded, 1);
    assert_int_equal(c.done, 0);
    /* Or an error object in it (the type when there is no code). */
    c = ev("error", "{\"type\":\"error\",\"error\":{\"type\":\"invalid_request_error\","
                    "\"message\":\"bad\"}}");
    assert_string_equal(c.error_message, "invalid_request_error: bad");
    c = ev("error", "{\"type\":\"error\",\"error\":{\"type\":\"t\",\"code\":\"c\","
                    "\"message\":\"m\"}}");
    assert_string_equal(c.error_message, "c: m");
    /* code and message members mean nothing in other events. */
    c = ev("", "{\"type\":\"response.in_progress\",\"code\":\"x\",\"message\":\"y\"}");
    assert_int_equal(c.has_error, 0);

    /* A long message is cut at a character boundary. */
    test_long_error_cut(resp_decode_event, "error",
                        "{\"type\":\"error\",\"code\":\"server_error\",\"message\":\"", "\"}",
                        "server_error: ");

    static const char *const bad[] = {
        "",
        "[DONE]",
        "{\"type\":\"response.completed\"",
        "{\"type\":\"response.completed\"}x",
        "[1]",
        "\"error\"",
        "{\"type\":\"response.output_text.delta\",\"delta\":\"ab}",
    };
    test_event_refusals(resp_decode_event, resp_decode_response, "error", bad, LL_ARRAY_LEN(bad));
}

static void test_response_bodies(void **state)
{
    struct oai_chunk c;
    static const char body[] =
        "{\"id\":\"resp_1\",\"object\":\"response\",\"status\":\"incomplete\",\"error\":null,"
        "\"incomplete_details\":{\"reason\":\"max_output_tokens\"},\"output\":["
        "{\"type\":\"reasoning\",\"id\":\"rs\",\"summary\":[{\"type\":\"summary_text\","
        "\"text\":\"ab\"}],\"content\":[{\"type\":\"reasoning_text\",\"text\":\"let me\"}]},"
        "{\"type\":\"message\",\"role\":\"assistant\",\"content\":[{\"type\":\"output_text\","
        "\"text\":\"Hello\",\"annotations\":[]},{\"type\":\"refusal\",\"refusal\":\"no\"}]},"
        "{\"type\":\"function_call\",\"name\":\"f\",\"arguments\":\"{}\"}],"
        "\"usage\":{\"input_tokens\":7,\"output_tokens\":9,\"output_tokens_details\":"
        "{\"reasoning_tokens\":3}}}";
    assert_int_equal(resp_decode_response(body, sizeof body - 1, &c), 0);
    assert_int_equal(c.content_bytes, 7);
    assert_int_equal(c.reasoning_bytes, 8);
    assert_int_equal(c.tool_call_deltas, 1);
    assert_string_equal(c.finish_reason, "incomplete");
    assert_int_equal(c.prompt_tokens, 7);
    assert_int_equal(c.cached_tokens, -1);
    assert_int_equal(c.completion_tokens, 9);
    assert_int_equal(c.has_error, 0);

    /* Bodies that are errors, and the message each gives: a failed
     * response with its error, one without (named by the decoder), and
     * an error body. */
    static const struct {
        const char *body, *message;
    } errors[] = {
        {"{\"object\":\"response\",\"status\":\"failed\",\"error\":{"
         "\"code\":\"server_error\",\"message\":\"boom\"},\"output\":[]}",
         "server_error: boom"},
        {"{\"object\":\"response\",\"status\":\"failed\"}", "response failed"},
        {"{\"error\":{\"message\":\"Rate limit\",\"type\":\"requests\","
         "\"param\":null,\"code\":\"rate_limit_exceeded\"}}",
         "rate_limit_exceeded: Rate limit"},
    };
    for (size_t i = 0; i < LL_ARRAY_LEN(errors); i++) {
        assert_int_equal(resp_decode_response(errors[i].body, strlen(errors[i].body), &c), 0);
        assert_int_equal(c.has_error, 1);
        assert_string_equal(c.error_message, errors[i].message);
        assert_int_equal(c.has_finish, 0);
    }
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
    struct oai_memo m;
    oai_memo_reset(&m);
    for (size_t i = 0; i < LL_ARRAY_LEN(seq); i++) {
        struct oai_chunk a, b;
        size_t n = strlen(seq[i]);
        int ra = resp_decode_event("", 0, seq[i], n, &a, &m);
        int rb = resp_decode_event("", 0, seq[i], n, &b, NULL);
        assert_int_equal(ra, rb);
        if (ra == 0)
            assert_memory_equal(&a, &b, sizeof a);
    }
    assert_true(m.hits >= 2);
}

TEST_MAIN(cmocka_unit_test(test_capture_stream), cmocka_unit_test(test_capture_nostream),
          cmocka_unit_test(test_event_types), cmocka_unit_test(test_errors_and_malformed),
          cmocka_unit_test(test_response_bodies), cmocka_unit_test(test_memo))
