/* Unit tests for openai.c: every field of struct oai_chunk, the chat and
 * completions shapes, non-streamed bodies, and the per-request
 * accumulation with its output-token precedence. */
#include "decodertest.h"
#include "test.h"
#include "testutil.h"

#include <string.h>

#include "decode/jscan.h"
#include "decode/openai.h"
#include "util/util.h"

static struct oai_chunk chat(const char *s)
{
    struct oai_chunk c;
    int rc = oai_decode_chunk(OAI_API_CHAT, s, strlen(s), &c);
    if (rc != 0)
        fail_msg("decode of %s failed: %d", s, rc);
    return c;
}

/* One decoded chunk and what it must say: "field=value" pairs separated
 * by ';', each field of struct oai_chunk by name, plus "output" for
 * oai_chunk_carries_output. Fields not named are not checked. test names
 * the cmocka test that decodes it (CHUNK_TEST). */
struct chunk_case {
    const char *test;
    enum oai_api api;
    const char *json;
    const char *expect;
};

#define CHAT OAI_API_CHAT
#define COMPL OAI_API_COMPLETIONS

/* Decode the case (it must succeed) and check every field it names. */
static void check_chunk(const struct chunk_case *k)
{
    struct oai_chunk c;
    int rc = oai_decode_chunk(k->api, k->json, strlen(k->json), &c);
    if (rc != 0)
        fail_msg("decode of %s failed: %d", k->json, rc);
    test_expect_fields(__FILE__, __LINE__, k->json, &c, test_chunk_fields,
                       LL_ARRAY_LEN(test_chunk_fields), k->expect);
}

#define CHUNK_TEST(name) { #name, run_chunk_cases, NULL, NULL, (void *)#name }

static void test_done_and_malformed(void **state)
{
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

static const struct chunk_case chunk_cases[] = {
    {"test_chat_content", CHAT,
     "{\"choices\":[{\"index\":0,\"delta\":{\"role\":\"assistant\",\"content\":null},"
     "\"finish_reason\":null}]}",
     "role_only=1;content_bytes=0;has_finish=0;output=0"},
    {"test_chat_content", CHAT,
     "{\"choices\":[{\"delta\":{\"role\":\"assistant\",\"content\":\"\"}}]}",
     "role_only=1;content_bytes=0"},
    /* A role with content is a token, not role-only. */
    {"test_chat_content", CHAT,
     "{\"choices\":[{\"delta\":{\"role\":\"assistant\",\"content\":\"Hi\"}}]}",
     "role_only=0;content_bytes=2;output=1"},
    /* Bytes are counted decoded: a\nb is 3, \u00e9 is 2, a pair is 4. */
    {"test_chat_content", CHAT,
     "{\"choices\":[{\"delta\":{\"content\":\"a\\nb\\u00e9\\ud83d\\ude00\"}}]}", "content_bytes=9"},
    /* Several choices are all counted; the first finish_reason is kept. */
    {"test_chat_content", CHAT,
     "{\"choices\":[{\"index\":0,\"delta\":{\"content\":\"abc\"},\"finish_reason\":null},"
     "{\"index\":1,\"delta\":{\"content\":\"de\"},\"finish_reason\":\"stop\"},"
     "{\"index\":2,\"delta\":{},\"finish_reason\":\"length\"}]}",
     "content_bytes=5;has_finish=1;finish_reason=stop"},
    /* The completions field is ignored by the chat decoder. */
    {"test_chat_content", CHAT, "{\"choices\":[{\"text\":\"abc\"}]}", "content_bytes=0"},
    /* Content of an unexpected type counts nothing (and is no error). */
    {"test_chat_content", CHAT, "{\"choices\":[{\"delta\":{\"content\":[{\"type\":\"text\"}]}}]}",
     "content_bytes=0"},
    {"test_chat_content", CHAT, "{\"choices\":{\"delta\":{\"content\":\"x\"}}}", "content_bytes=0"},
    {"test_reasoning_and_tools", CHAT,
     "{\"choices\":[{\"delta\":{\"reasoning_content\":\"think\"}}]}",
     "reasoning_bytes=5;content_bytes=0;output=1"},
    {"test_reasoning_and_tools", CHAT,
     "{\"choices\":[{\"delta\":{\"reasoning\":\"hmm\",\"content\":null}}]}", "reasoning_bytes=3"},
    /* The same text under both names is counted once (the longer). */
    {"test_reasoning_and_tools", CHAT,
     "{\"choices\":[{\"delta\":{\"reasoning\":\"abcd\",\"reasoning_content\":\"abcd\"}}]}",
     "reasoning_bytes=4"},
    /* A role with reasoning is output, not role-only. */
    {"test_reasoning_and_tools", CHAT,
     "{\"choices\":[{\"delta\":{\"role\":\"assistant\",\"reasoning_content\":\"r\"}}]}",
     "role_only=0"},
    {"test_reasoning_and_tools", CHAT,
     "{\"choices\":[{\"delta\":{\"tool_calls\":[{\"index\":0,\"function\":"
     "{\"arguments\":\"{\\\"a\\\":\"}},{\"index\":1,\"id\":\"call_1\"}]}}]}",
     "tool_call_deltas=2;content_bytes=0;output=1"},
    {"test_reasoning_and_tools", CHAT, "{\"choices\":[{\"delta\":{\"tool_calls\":[]}}]}",
     "tool_call_deltas=0"},
    {"test_reasoning_and_tools", CHAT, "{\"choices\":[{\"delta\":{\"tool_calls\":null}}]}",
     "tool_call_deltas=0"},
    {"test_finish_reason", CHAT, "{\"choices\":[{\"delta\":{},\"finish_reason\":\"length\"}]}",
     "has_finish=1;finish_reason=length"},
    /* Truncated to 31 bytes plus the NUL. */
    {"test_finish_reason", CHAT,
     "{\"choices\":[{\"delta\":{},\"finish_reason\":"
     "\"a_very_long_finish_reason_indeed_longer\"}]}",
     "has_finish=1;finish_reason=a_very_long_finish_reason_indee"},
    /* Non-null but not a string: finished, reason unknown. */
    {"test_finish_reason", CHAT, "{\"choices\":[{\"delta\":{},\"finish_reason\":7}]}",
     "has_finish=1;finish_reason="},
    /* OpenAI's and llama.cpp's final chunk: choices empty, usage set. */
    {"test_usage", CHAT,
     "{\"choices\":[],\"usage\":{\"completion_tokens\":12,\"prompt_tokens\":46,"
     "\"total_tokens\":58,\"prompt_tokens_details\":{\"cached_tokens\":3}},"
     "\"timings\":{\"predicted_n\":12,\"predicted_ms\":2.763}}",
     "has_usage=1;completion_tokens=12;prompt_tokens=46;cached_tokens=3;output=0;role_only=0"},
    {"test_usage", CHAT, "{\"choices\":[{\"delta\":{\"content\":\"x\"}}],\"usage\":null}",
     "has_usage=0;completion_tokens=-1"},
    /* Missing or odd fields stay -1. */
    {"test_usage", CHAT,
     "{\"usage\":{\"prompt_tokens\":5,\"completion_tokens\":1.5,"
     "\"prompt_tokens_details\":null}}",
     "has_usage=1;prompt_tokens=5;completion_tokens=-1;cached_tokens=-1"},
    {"test_usage", CHAT, "{\"usage\":{\"prompt_tokens\":-4,\"completion_tokens\":\"3\"}}",
     "prompt_tokens=-1;completion_tokens=-1"},
    {"test_errors", CHAT,
     "{\"error\":{\"code\":500,\"message\":\"slot \\\"0\\\" failed\",\"type\":\"server_error\"}}",
     "has_error=1;error_message=slot \"0\" failed"},
    {"test_errors", CHAT, "{\"error\":\"overloaded\"}", "has_error=1;error_message=overloaded"},
    {"test_errors", CHAT, "{\"error\":null,\"choices\":[]}", "has_error=0"},
    {"test_errors", CHAT, "{\"error\":{\"code\":1}}", "has_error=1;error_message="},
    /* vLLM's older shape. */
    {"test_errors", CHAT,
     "{\"object\":\"error\",\"message\":\"bad request\",\"type\":\"BadRequestError\",\"code\":400}",
     "has_error=1;error_message=bad request"},
    {"test_errors", CHAT, "{\"object\":\"chat.completion.chunk\",\"message\":\"not an error\"}",
     "has_error=0"},
    {"test_completions", COMPL,
     "{\"choices\":[{\"text\":\" there\",\"index\":0,\"logprobs\":null,"
     "\"finish_reason\":null}],\"object\":\"text_completion\"}",
     "content_bytes=6;has_finish=0;role_only=0"},
    {"test_completions", COMPL,
     "{\"choices\":[{\"text\":\"\",\"finish_reason\":\"length\"}],"
     "\"usage\":{\"completion_tokens\":12,\"prompt_tokens\":5}}",
     "content_bytes=0;output=0;finish_reason=length;completion_tokens=12"},
    {"test_completions", COMPL, "{\"choices\":[{\"text\":\"ab\"},{\"text\":\"cde\"}]}",
     "content_bytes=5"},
    /* The chat delta is ignored by the completions decoder. */
    {"test_completions", COMPL, "{\"choices\":[{\"delta\":{\"content\":\"x\"}}]}",
     "content_bytes=0"},
};

/* A cmocka test whose initial state is its own name: every case of
 * chunk_cases[] filed under that name. */
static void run_chunk_cases(void **state)
{
    const char *test = *state;
    size_t ran = 0;
    for (size_t i = 0; i < LL_ARRAY_LEN(chunk_cases); i++) {
        if (strcmp(chunk_cases[i].test, test) == 0) {
            check_chunk(&chunk_cases[i]);
            ran++;
        }
    }
    if (ran == 0)
        fail_msg("no chunk case for %s", test);
}

/* Long error messages are cut to 127 bytes. */
static void test_error_message_cut(void **state)
{
    char longmsg[400];
    char doc[600];
    memset(longmsg, 'm', sizeof(longmsg) - 1);
    longmsg[sizeof(longmsg) - 1] = '\0';
    snprintf(doc, sizeof(doc), "{\"error\":{\"message\":\"%s\"}}", longmsg);
    struct oai_chunk c = chat(doc);
    assert_int_equal(strlen(c.error_message), 127);
}

/* An SSE event named "error" (llama.cpp's `error:` field): always an
 * error, its message from the object itself, an error body, or the text. */
static const struct test_body_case error_events[] = {
    {"{\"code\":400,\"message\":\"the request exceeds the available context size, try "
     "increasing it\",\"type\":\"invalid_request_error\"}",
     "has_error=1;error_message=the request exceeds the available context size, try increasing "
     "it;output=0;done=0"},
    {"{\"error\":{\"code\":500,\"message\":\"boom\"}}",
     "has_error=1;error_message=boom;output=0;done=0"},
    {"{\"object\":\"error\",\"message\":\"vllm says\"}",
     "has_error=1;error_message=vllm says;output=0;done=0"},
    {"{\"code\":400}", "has_error=1;error_message={\"code\":400};output=0;done=0"},
    {"model crashed\x01", "has_error=1;error_message=model crashed?;output=0;done=0"},
    {"", "has_error=1;error_message=;output=0;done=0"},
};

static void test_error_event(void **state)
{
    test_body_cases(oai_decode_error_event, error_events, LL_ARRAY_LEN(error_events));
    struct oai_chunk c;
    assert_int_equal(oai_decode_error_event(NULL, 0, &c), 0);
    assert_int_equal(c.has_error, 1);
}

static void test_response(void **state)
{
    struct oai_chunk c;
    const char body[] =
        "{\"choices\":[{\"finish_reason\":\"stop\",\"index\":0,\"message\":{\"role\":"
        "\"assistant\",\"content\":\"Hello there\",\"reasoning_content\":\"ok\","
        "\"tool_calls\":[{\"id\":\"a\"}]}}],\"usage\":{\"completion_tokens\":3,"
        "\"prompt_tokens\":9}}";

    assert_int_equal(oai_decode_response(OAI_API_CHAT, body, sizeof(body) - 1, &c), 0);
    EXPECT_CHUNK(body, &c,
                 "content_bytes=11;reasoning_bytes=2;tool_call_deltas=1;"
                 "finish_reason=stop;completion_tokens=3;prompt_tokens=9;"
                 "role_only=0;done=0");

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

/* ---- the decoder against a reference --------------------------------------
 *
 * The decoder is a hand-inlined scanner written for speed. The reference
 * below says the same thing plainly, with jscan's single-pass reader (it
 * was the decoder before): same fields, same precedence, same verdict on
 * validity. The two must agree on every field for the seeds and for many
 * mutations of them (bytes flipped, inserted, deleted, the text cut). */

struct ref_key {
    char buf[32];
    const char *s;
    size_t n;
};

static int ref_next_key(struct jscan_reader *r, struct ref_key *k)
{
    struct jscan_value raw;
    size_t n = 0;

    if (!jscan_reader_next_member(r, &raw))
        return 0;
    if (!r->key_escaped) {
        k->s = raw.ptr + 1;
        k->n = raw.len - 2;
        return 1;
    }
    if (jscan_string_unescape(&raw, k->buf, sizeof(k->buf), &n) != 0)
        n = 0;
    k->s = k->buf;
    k->n = n;
    return 1;
}

#define REF_IS(k, lit) ((k)->n == sizeof(lit) - 1 && memcmp((k)->s, (lit), sizeof(lit) - 1) == 0)

static uint32_t ref_add(uint32_t a, uint64_t b)
{
    uint64_t s = (uint64_t)a + b;
    return s > UINT32_MAX ? UINT32_MAX : (uint32_t)s;
}

static uint64_t ref_text(struct jscan_reader *r)
{
    struct jscan_value v;
    if (!jscan_reader_value(r, &v) || v.type != JSCAN_STRING)
        return 0;
    return jscan_string_decoded_len(&v);
}

static int64_t ref_count(struct jscan_reader *r)
{
    struct jscan_value v;
    int64_t n;
    if (!jscan_reader_value(r, &v) || v.type != JSCAN_NUMBER ||
        jscan_number_int64(&v, &n) < 0 || n < 0)
        return -1;
    return n;
}

static void ref_usage(struct jscan_reader *r, struct oai_chunk *c)
{
    struct ref_key k, d;

    if (jscan_reader_peek(r) != JSCAN_OBJECT) {
        jscan_reader_value(r, NULL);
        return;
    }
    c->has_usage = 1;
    jscan_reader_enter(r);
    while (ref_next_key(r, &k)) {
        if (REF_IS(&k, "prompt_tokens")) {
            c->prompt_tokens = ref_count(r);
        } else if (REF_IS(&k, "completion_tokens")) {
            c->completion_tokens = ref_count(r);
        } else if (REF_IS(&k, "prompt_tokens_details") &&
                   jscan_reader_peek(r) == JSCAN_OBJECT) {
            jscan_reader_enter(r);
            while (ref_next_key(r, &d)) {
                if (REF_IS(&d, "cached_tokens"))
                    c->cached_tokens = ref_count(r);
                else
                    jscan_reader_value(r, NULL);
            }
        } else {
            jscan_reader_value(r, NULL);
        }
    }
}

static void ref_error(struct jscan_reader *r, struct oai_chunk *c)
{
    struct jscan_value v;
    struct ref_key k;

    if (jscan_reader_peek(r) == JSCAN_OBJECT) {
        c->has_error = 1;
        jscan_reader_enter(r);
        while (ref_next_key(r, &k)) {
            if (!REF_IS(&k, "message"))
                jscan_reader_value(r, NULL);
            else if (jscan_reader_value(r, &v) && v.type == JSCAN_STRING &&
                     c->error_message[0] == '\0')
                jscan_string_unescape(&v, c->error_message, sizeof(c->error_message), NULL);
        }
        return;
    }
    if (jscan_reader_value(r, &v) && v.type == JSCAN_STRING) {
        c->has_error = 1;
        jscan_string_unescape(&v, c->error_message, sizeof(c->error_message), NULL);
    }
}

/* Enter the object at r, or skip the value there when it is not one.
 * Returns 1 when entered. */
static int ref_enter_object(struct jscan_reader *r)
{
    if (jscan_reader_peek(r) != JSCAN_OBJECT) {
        jscan_reader_value(r, NULL);
        return 0;
    }
    jscan_reader_enter(r);
    return 1;
}

static void ref_message(struct jscan_reader *r, struct oai_chunk *c, int *saw_role)
{
    struct jscan_value v;
    struct ref_key k;
    uint64_t reasoning = 0, reasoning_alt = 0;

    if (!ref_enter_object(r))
        return;
    while (ref_next_key(r, &k)) {
        if (REF_IS(&k, "content")) {
            c->content_bytes = ref_add(c->content_bytes, ref_text(r));
        } else if (REF_IS(&k, "role")) {
            if (jscan_reader_value(r, &v) && v.type == JSCAN_STRING)
                *saw_role = 1;
        } else if (REF_IS(&k, "reasoning_content")) {
            reasoning = ref_text(r);
        } else if (REF_IS(&k, "reasoning")) {
            reasoning_alt = ref_text(r);
        } else if (REF_IS(&k, "tool_calls") && jscan_reader_peek(r) == JSCAN_ARRAY) {
            uint64_t n = 0;
            jscan_reader_enter(r);
            while (jscan_reader_next_element(r)) {
                jscan_reader_value(r, NULL);
                n++;
            }
            c->tool_call_deltas = ref_add(c->tool_call_deltas, n);
        } else {
            jscan_reader_value(r, NULL);
        }
    }
    c->reasoning_bytes = ref_add(c->reasoning_bytes, LL_MAX(reasoning, reasoning_alt));
}

static void ref_choice(struct jscan_reader *r, enum oai_api api, int streamed,
                       struct oai_chunk *c, int *saw_role)
{
    struct jscan_value v;
    struct ref_key k;

    if (!ref_enter_object(r))
        return;
    while (ref_next_key(r, &k)) {
        if (REF_IS(&k, "finish_reason")) {
            if (jscan_reader_value(r, &v) && v.type != JSCAN_NULL && !c->has_finish) {
                c->has_finish = 1;
                if (v.type == JSCAN_STRING)
                    jscan_string_unescape(&v, c->finish_reason, sizeof(c->finish_reason), NULL);
            }
        } else if (api == OAI_API_COMPLETIONS && REF_IS(&k, "text")) {
            c->content_bytes = ref_add(c->content_bytes, ref_text(r));
        } else if (api == OAI_API_CHAT &&
                   (streamed ? REF_IS(&k, "delta") : REF_IS(&k, "message"))) {
            ref_message(r, c, saw_role);
        } else {
            jscan_reader_value(r, NULL);
        }
    }
}

static void ref_clear(struct oai_chunk *c)
{
    memset(c, 0, sizeof(*c));
    c->prompt_tokens = -1;
    c->completion_tokens = -1;
    c->cached_tokens = -1;
}

static int ref_decode(enum oai_api api, int streamed, const char *data, size_t len,
                      struct oai_chunk *out)
{
    struct jscan_reader r;
    struct jscan_value v, top_message = { JSCAN_INVALID, NULL, 0 };
    struct ref_key k;
    int saw_role = 0, object_is_error = 0;

    ref_clear(out);
    if (streamed && len == 6 && memcmp(data, "[DONE]", 6) == 0) {
        out->done = 1;
        return 0;
    }
    jscan_reader_init(&r, data, len, JSCAN_DEFAULT_DEPTH);
    if (jscan_reader_peek(&r) != JSCAN_OBJECT)
        return LL_E_PROTO;
    jscan_reader_enter(&r);
    while (ref_next_key(&r, &k)) {
        if (REF_IS(&k, "choices") && jscan_reader_peek(&r) == JSCAN_ARRAY) {
            jscan_reader_enter(&r);
            while (jscan_reader_next_element(&r))
                ref_choice(&r, api, streamed, out, &saw_role);
        } else if (REF_IS(&k, "usage")) {
            ref_usage(&r, out);
        } else if (REF_IS(&k, "error")) {
            ref_error(&r, out);
        } else if (REF_IS(&k, "object")) {
            if (jscan_reader_value(&r, &v))
                object_is_error = jscan_string_equals(&v, "error", 5);
        } else if (REF_IS(&k, "message")) {
            jscan_reader_value(&r, &top_message);
        } else {
            jscan_reader_value(&r, NULL);
        }
    }
    if (jscan_reader_finish(&r) != 0) {
        ref_clear(out);
        return LL_E_PROTO;
    }
    if (object_is_error && !out->has_error) {
        out->has_error = 1;
        if (top_message.type == JSCAN_STRING)
            jscan_string_unescape(&top_message, out->error_message,
                                  sizeof(out->error_message), NULL);
    }
    if (streamed && saw_role && !oai_chunk_carries_output(out))
        out->role_only = 1;
    return 0;
}

/* Every field, byte for byte (both structs were fully written). */
static void assert_same_chunk(const char *what, const char *doc, size_t len,
                              int rc_got, const struct oai_chunk *got,
                              int rc_want, const struct oai_chunk *want)
{
    if (rc_got == rc_want && got->done == want->done &&
        got->role_only == want->role_only &&
        got->content_bytes == want->content_bytes &&
        got->reasoning_bytes == want->reasoning_bytes &&
        got->tool_call_deltas == want->tool_call_deltas &&
        got->has_finish == want->has_finish &&
        memcmp(got->finish_reason, want->finish_reason, sizeof(got->finish_reason)) == 0 &&
        got->has_usage == want->has_usage &&
        got->prompt_tokens == want->prompt_tokens &&
        got->completion_tokens == want->completion_tokens &&
        got->cached_tokens == want->cached_tokens &&
        got->has_error == want->has_error &&
        memcmp(got->error_message, want->error_message, sizeof(got->error_message)) == 0)
        return;
    fail_msg("%s: decoder and reference differ on %.*s: rc %d/%d content %u/%u "
             "reasoning %u/%u tools %u/%u finish %d\"%s\"/%d\"%s\" usage %d %lld %lld %lld"
             "/%d %lld %lld %lld error %d\"%s\"/%d\"%s\" role_only %d/%d",
             what, (int)len, doc, rc_got, rc_want, got->content_bytes, want->content_bytes,
             got->reasoning_bytes, want->reasoning_bytes, got->tool_call_deltas,
             want->tool_call_deltas, got->has_finish, got->finish_reason,
             want->has_finish, want->finish_reason, got->has_usage,
             (long long)got->prompt_tokens, (long long)got->completion_tokens,
             (long long)got->cached_tokens, want->has_usage,
             (long long)want->prompt_tokens, (long long)want->completion_tokens,
             (long long)want->cached_tokens, got->has_error, got->error_message,
             want->has_error, want->error_message, got->role_only, want->role_only);
}

static void check_against_reference(const char *doc, size_t len)
{
    static const enum oai_api apis[] = { OAI_API_CHAT, OAI_API_COMPLETIONS };
    struct oai_chunk got, want;

    for (size_t i = 0; i < LL_ARRAY_LEN(apis); i++) {
        int rc = oai_decode_chunk(apis[i], doc, len, &got);
        int ref = ref_decode(apis[i], 1, doc, len, &want);
        assert_same_chunk("chunk", doc, len, rc, &got, ref, &want);
        rc = oai_decode_response(apis[i], doc, len, &got);
        ref = ref_decode(apis[i], 0, doc, len, &want);
        assert_same_chunk("response", doc, len, rc, &got, ref, &want);
    }
}

static const char *const ref_seeds[] = {
    "{\"id\":\"chatcmpl-1\",\"object\":\"chat.completion.chunk\",\"created\":1796013597,"
    "\"model\":\"x\",\"choices\":[{\"index\":0,\"delta\":{\"content\":\" bujj\"},"
    "\"logprobs\":null,\"finish_reason\":null}]}",
    "{\"id\":\"chatcmpl-1\",\"object\":\"chat.completion.chunk\",\"created\":1796013597,"
    "\"model\":\"x\",\"choices\":[{\"index\":0,\"delta\":{\"role\":\"assistant\"},"
    "\"logprobs\":null,\"finish_reason\":null}]}",
    "{\"id\":\"chatcmpl-1\",\"object\":\"chat.completion.chunk\",\"created\":1796013597,"
    "\"model\":\"x\",\"choices\":[{\"index\":0,\"delta\":{},\"logprobs\":null,"
    "\"finish_reason\":\"length\"}]}",
    "{\"id\":\"c\",\"choices\":[],\"usage\":{\"prompt_tokens\":128,\"completion_tokens\":16,"
    "\"total_tokens\":144,\"prompt_tokens_details\":{\"cached_tokens\":3}}}",
    "{\"choices\":[{\"finish_reason\":null,\"index\":0,\"delta\":{\"content\":\"\\\"\"}}],"
    "\"created\":1796012477,\"id\":\"chatcmpl-KYgUFPGToYBARJnFSsDhqnGb6GJTWy8Q\","
    "\"model\":\"stories260K.gguf\",\"system_fingerprint\":\"b0-unknown\","
    "\"object\":\"chat.completion.chunk\"}",
    "{\"choices\":[{\"text\":\" there\",\"index\":0,\"logprobs\":null,\"finish_reason\":null}],"
    "\"object\":\"text_completion\"}",
    "{\"choices\":[{\"finish_reason\":\"stop\",\"index\":0,\"message\":{\"role\":\"assistant\","
    "\"content\":\"His mouth\",\"reasoning_content\":\"r\\u00e9\"}}],\"usage\":{\"completion_tokens\":12}}",
    "{\"choices\":[{\"delta\":{\"tool_calls\":[{\"index\":0,\"function\":{\"arguments\":\"{\\\"a\\\":\"}}],"
    "\"reasoning_content\":\"r\\u00e9\\ud83d\\ude00\",\"reasoning\":\"xy\"},\"finish_reason\":null}],\"usage\":null}",
    "{\"error\":{\"code\":400,\"message\":\"request exceeds the context\",\"type\":\"x\"}}",
    "{\"object\":\"error\",\"message\":\"bad\",\"type\":\"BadRequestError\",\"code\":400}",
    "{\"error\":\"plain\",\"choices\":[{\"finish_reason\":7}]}",
    " {\n \"choices\" : [ { \"delta\" : { \"content\" : \"a b\" } , \"finish_reason\" : \"stop\" } ] ,"
    " \"usage\" : { \"prompt_tokens\" : 0 , \"completion_tokens\" : -1 } }\r\n",
    "{\"\\u0063hoices\":[{\"d\\u0065lta\":{\"cont\\u0065nt\":\"\\u00e9\\n\"}}],\"obj\\u0065ct\":\"\\u0065rror\"}",
    "{\"choices\":[{\"delta\":{\"content\":\"caf\xc3\xa9 \xe2\x82\xac\"},\"finish_reason\":\"a_very_long_finish_reason\"}]}",
    "{\"choices\":[[1,2],{\"delta\":[]},{\"delta\":{\"content\":1.5e3,\"role\":null}}],\"x\":[true,false,-0.5]}",
    "{\"object\":\"error\",\"message\":\"m\",\"object\":1}",
    "{\"message\":\"m\",\"object\":\"error\",\"object\":\"x\",\"message\":7}",
    "[DONE]",
};

/* Overwrite, insert or delete a byte, or cut the text: each mutation is
 * picked from bytes that matter to JSON, plus random ones. */
static size_t mutate(char *buf, size_t len, size_t cap, uint64_t *st)
{
    static const char interesting[] = "\"\\{}[]:,0-.eE \n\tnulltrue\x80\xc3\xff\x01u";
    uint64_t x = test_splitmix64(st);
    size_t at = len ? (size_t)(x >> 8) % len : 0;
    char b = (x >> 40) % 4 == 0 ? (char)(x >> 48) :
             interesting[(x >> 48) % (sizeof(interesting) - 1)];

    switch (x % 4) {
    case 0:
        if (len)
            buf[at] = b;
        return len;
    case 1:
        if (len + 1 > cap)
            return len;
        memmove(buf + at + 1, buf + at, len - at);
        buf[at] = b;
        return len + 1;
    case 2:
        if (!len)
            return len;
        memmove(buf + at, buf + at + 1, len - at - 1);
        return len - 1;
    default:
        return at;
    }
}

static void test_matches_reference(void **state)
{
    uint64_t st = 7;
    char buf[1024];

    for (size_t i = 0; i < LL_ARRAY_LEN(ref_seeds); i++) {
        size_t len = strlen(ref_seeds[i]);
        struct oai_chunk c;
        check_against_reference(ref_seeds[i], len);
        /* Every seed but [DONE] and the cut-down junk decodes. */
        if (i + 1 < LL_ARRAY_LEN(ref_seeds))
            assert_int_equal(oai_decode_chunk(OAI_API_CHAT, ref_seeds[i], len, &c), 0);
        /* Every prefix, which ends in the middle of every kind of token. */
        for (size_t n = 0; n < len; n++)
            check_against_reference(ref_seeds[i], n);
        /* Mutants, one to four mutations deep. */
        for (int m = 0; m < 3000; m++) {
            size_t n = len;
            memcpy(buf, ref_seeds[i], len);
            for (int k = 0; k <= (int)(test_splitmix64(&st) % 4); k++)
                n = mutate(buf, n, sizeof(buf), &st);
            check_against_reference(buf, n);
        }
    }
}

/* The decoder's own fast paths, at the ends of the text: a string that
 * runs to within 16 bytes of the end, numbers of 1 to 20 digits, and the
 * depth limit. */
static void test_fast_path_edges(void **state)
{
    char doc[256];
    struct oai_chunk c;

    for (int pad = 0; pad < 40; pad++) {
        int n = snprintf(doc, sizeof(doc), "{\"choices\":[{\"delta\":{\"content\":\"%.*s\"}}]}",
                         pad, "0123456789012345678901234567890123456789");
        assert_int_equal(oai_decode_chunk(OAI_API_CHAT, doc, (size_t)n, &c), 0);
        assert_int_equal(c.content_bytes, pad);
        /* The same text unterminated, and with a raw control byte in it. */
        assert_int_equal(oai_decode_chunk(OAI_API_CHAT, doc, (size_t)n - 4, &c), LL_E_PROTO);
        if (pad > 0) {
            doc[33 + pad / 2] = '\x1f';
            assert_int_equal(oai_decode_chunk(OAI_API_CHAT, doc, (size_t)n, &c), LL_E_PROTO);
        }
    }
    for (int digits = 1; digits <= 20; digits++) {
        int n = snprintf(doc, sizeof(doc), "{\"usage\":{\"prompt_tokens\":%.*s}}",
                         digits, "98765432109876543210");
        assert_int_equal(oai_decode_chunk(OAI_API_CHAT, doc, (size_t)n, &c), 0);
        check_against_reference(doc, (size_t)n);
        n = snprintf(doc, sizeof(doc), "{\"x\":%.*s,\"y\":%.*s.}", digits,
                     "12345678901234567890", digits, "12345678901234567890");
        assert_int_equal(oai_decode_chunk(OAI_API_CHAT, doc, (size_t)n, &c), LL_E_PROTO);
    }
    assert_int_equal(c.prompt_tokens, -1);   /* cleared by the failure */
    /* 64 levels in all are allowed, 65 are not. */
    for (int depth = 60; depth <= 66; depth++) {
        size_t n = 0;
        n += (size_t)snprintf(doc + n, sizeof(doc) - n, "{\"choices\":[{\"delta\":{\"x\":");
        for (int d = 4; d < depth; d++)
            doc[n++] = '[';
        for (int d = 4; d < depth; d++)
            doc[n++] = ']';
        n += (size_t)snprintf(doc + n, sizeof(doc) - n, "}}]}");
        assert_int_equal(oai_decode_chunk(OAI_API_CHAT, doc, n, &c),
                         depth <= 64 ? 0 : LL_E_PROTO);
        check_against_reference(doc, n);
    }
}

/* ---- the memo ----------------------------------------------------------- */

/* Decode s both ways, with m carried over from the calls before, and
 * insist on the same outcome in every field. */
static void same_both_ways(enum oai_api api, struct oai_memo *m, const char *s, size_t n)
{
    struct oai_chunk full, memo;
    int rc_full = oai_decode_chunk(api, s, n, &full);
    int rc_memo = oai_decode_chunk_memo(api, s, n, &memo, m);

    assert_int_equal(rc_memo, rc_full);
    assert_int_equal(memo.done, full.done);
    assert_int_equal(memo.role_only, full.role_only);
    assert_int_equal(memo.content_bytes, full.content_bytes);
    assert_int_equal(memo.reasoning_bytes, full.reasoning_bytes);
    assert_int_equal(memo.tool_call_deltas, full.tool_call_deltas);
    assert_int_equal(memo.has_finish, full.has_finish);
    assert_string_equal(memo.finish_reason, full.finish_reason);
    assert_int_equal(memo.has_usage, full.has_usage);
    assert_int_equal(memo.prompt_tokens, full.prompt_tokens);
    assert_int_equal(memo.completion_tokens, full.completion_tokens);
    assert_int_equal(memo.cached_tokens, full.cached_tokens);
    assert_int_equal(memo.has_error, full.has_error);
    assert_string_equal(memo.error_message, full.error_message);
}

/* A memo script: reset the memo, decode a chunk both ways (same_both_ways),
 * or check how many chunks took the shortcut since the reset. */
struct memo_step {
    enum { MEMO_STEP_RESET, MEMO_STEP_SAME, MEMO_STEP_HITS } op;
    enum oai_api api;
    const char *json;
    size_t len;      /* of json: sizeof(lit) - 1, so a literal's every byte counts */
    uint32_t hits;
};

#define MEMO_RESET { MEMO_STEP_RESET, OAI_API_CHAT, NULL, 0, 0 }
#define MEMO_SAME(api, lit) { MEMO_STEP_SAME, (api), (lit), sizeof(lit) - 1, 0 }
#define MEMO_HITS(n) { MEMO_STEP_HITS, OAI_API_CHAT, NULL, 0, (n) }

static const struct memo_step memo_script[] = {
    /* The sim's shape: after the first chunk, every token takes the
     * shortcut, and a role-only chunk stays one until text arrives. */
    MEMO_RESET,
    MEMO_SAME(CHAT, "{\"id\":\"c-1\",\"choices\":[{\"index\":0,\"delta\":{\"role\":\"assistant\",\"content\":\"\"}}]}"),
    MEMO_SAME(CHAT, "{\"id\":\"c-1\",\"choices\":[{\"index\":0,\"delta\":{\"role\":\"assistant\",\"content\":\" hi\"}}]}"),
    MEMO_SAME(CHAT, "{\"id\":\"c-1\",\"choices\":[{\"index\":0,\"delta\":{\"role\":\"assistant\",\"content\":\"\"}}]}"),
    MEMO_SAME(CHAT, "{\"id\":\"c-1\",\"choices\":[{\"index\":0,\"delta\":{\"role\":\"assistant\",\"content\":\" there, you\"}}]}"),
    MEMO_HITS(3),

    /* Text the shortcut must not take: decoded in full, same answers. */
    MEMO_RESET,
    MEMO_SAME(CHAT, "{\"id\":\"c-2\",\"choices\":[{\"delta\":{\"content\":\"a\"}}]}"),
    MEMO_SAME(CHAT, "{\"id\":\"c-2\",\"choices\":[{\"delta\":{\"content\":\"\x01\"}}]}"),
    MEMO_SAME(CHAT, "{\"id\":\"c-2\",\"choices\":[{\"delta\":{\"content\":\"caf\xc3\xa9\"}}]}"),
    MEMO_SAME(CHAT, "{\"id\":\"c-2\",\"choices\":[{\"delta\":{\"content\":\"caf\xc3\"}}]}"),
    MEMO_SAME(CHAT, "{\"id\":\"c-2\",\"choices\":[{\"delta\":{\"content\":\"a\\\"b\"}}]}"),
    MEMO_SAME(CHAT, "{\"id\":\"c-2\",\"choices\":[{\"delta\":{\"content\":\"a\\\"}}]}"),
    MEMO_SAME(CHAT, "{\"id\":\"c-2\",\"choices\":[{\"delta\":{\"content\":\"a\",\"x\":\"b\"}}]}"),
    MEMO_SAME(CHAT, "{\"id\":\"c-2\",\"choices\":[{\"delta\":{\"content\":\"a\"}}]"),
    MEMO_SAME(CHAT, "{\"id\":\"c-3\",\"choices\":[{\"delta\":{\"content\":\"a\"}}]}"),
    MEMO_SAME(CHAT, "{\"id\":\"c-3\",\"choices\":[{\"delta\":{\"content\":null}}]}"),
    MEMO_SAME(CHAT, "{\"id\":\"c-3\",\"choices\":[{\"delta\":{\"content\":\"\"}}]}"),
    MEMO_SAME(CHAT, "[DONE]"),
    MEMO_SAME(CHAT, "{\"id\":\"c-3\",\"choices\":[{\"delta\":{\"content\":\"[DONE]\"}}]}"),
    MEMO_SAME(CHAT, "{\"id\":\"c-3\",\"choices\":[{\"delta\":{\"content\":\"ok\"}}]}"),
    MEMO_HITS(2),   /* "[DONE]" and "ok" after the "" chunk */
    /* Escapes and UTF-8 take the shortcut too, checked by the decoder's
     * own string rules; a broken one is decoded in full and refused. */
    MEMO_RESET,
    MEMO_SAME(CHAT, "{\"id\":\"c-4\",\"choices\":[{\"delta\":{\"content\":\"a\"}}]}"),
    MEMO_SAME(CHAT, "{\"id\":\"c-4\",\"choices\":[{\"delta\":{\"content\":\"caf\xc3\xa9\"}}]}"),
    MEMO_SAME(CHAT, "{\"id\":\"c-4\",\"choices\":[{\"delta\":{\"content\":\"a\\\"b\\n\"}}]}"),
    MEMO_SAME(CHAT, "{\"id\":\"c-4\",\"choices\":[{\"delta\":{\"content\":\"\\u00e9\\ud83d\\ude00\"}}]}"),
    MEMO_HITS(3),
    /* Head and tail match, but the string closes early: not the shortcut. */
    MEMO_SAME(CHAT, "{\"id\":\"c-4\",\"choices\":[{\"delta\":{\"content\":\"a\",\"x\":\"b\"}}]}"),
    MEMO_SAME(CHAT, "{\"id\":\"c-4\",\"choices\":[{\"delta\":{\"content\":\"\\ud83d\"}}]}"),
    MEMO_SAME(CHAT, "{\"id\":\"c-4\",\"choices\":[{\"delta\":{\"content\":\"\\q\"}}]}"),
    MEMO_SAME(CHAT, "{\"id\":\"c-4\",\"choices\":[{\"delta\":{\"content\":\"\xff\"}}]}"),
    MEMO_HITS(3),
    /* A chunk with two counted strings or with reasoning is never kept. */
    MEMO_RESET,
    MEMO_SAME(CHAT, "{\"choices\":[{\"delta\":{\"content\":\"a\"}},{\"delta\":{\"content\":\"b\"}}]}"),
    MEMO_SAME(CHAT, "{\"choices\":[{\"delta\":{\"content\":\"a\"}},{\"delta\":{\"content\":\"c\"}}]}"),
    MEMO_SAME(CHAT, "{\"choices\":[{\"delta\":{\"content\":\"a\",\"reasoning_content\":\"r\"}}]}"),
    MEMO_SAME(CHAT, "{\"choices\":[{\"delta\":{\"content\":\"b\",\"reasoning_content\":\"r\"}}]}"),
    MEMO_HITS(0),
    /* The API is part of the shape: chat's "content" is not a completion. */
    MEMO_RESET,
    MEMO_SAME(COMPL, "{\"choices\":[{\"text\":\"a\",\"content\":\"z\"}]}"),
    MEMO_SAME(CHAT, "{\"choices\":[{\"text\":\"b\",\"content\":\"z\"}]}"),
    MEMO_SAME(COMPL, "{\"choices\":[{\"text\":\"cd\",\"content\":\"z\"}]}"),
    MEMO_SAME(COMPL, "{\"choices\":[{\"text\":\"e\",\"content\":\"z\"}]}"),
    MEMO_SAME(CHAT, "{\"choices\":[{\"text\":\"f\",\"content\":\"z\"}]}"),
    MEMO_HITS(1),   /* "e" */
};

static void run_memo_script(const struct memo_step *steps, size_t n)
{
    struct oai_memo m;
    oai_memo_reset(&m);
    for (size_t i = 0; i < n; i++) {
        switch (steps[i].op) {
        case MEMO_STEP_RESET:
            oai_memo_reset(&m);
            break;
        case MEMO_STEP_SAME:
            same_both_ways(steps[i].api, &m, steps[i].json, steps[i].len);
            break;
        case MEMO_STEP_HITS:
            if (m.hits != steps[i].hits)
                fail_msg("memo step %zu: %u chunks took the shortcut, expected %u", i,
                         (unsigned)m.hits, (unsigned)steps[i].hits);
            break;
        }
    }
}

/* Every data: line of a captured response, both ways; the number of
 * chunks the shortcut took. */
static uint32_t fixture_both_ways(enum oai_api api, const char *name, size_t *events)
{
    size_t len;
    char *raw = test_read_data("h1", name, &len);
    struct oai_memo m;

    oai_memo_reset(&m);
    *events = 0;
    for (char *p = strstr(raw, "\ndata: "); p; p = strstr(p, "\ndata: ")) {
        p += 7;
        size_t n = strcspn(p, "\r\n");
        same_both_ways(api, &m, p, n);
        (*events)++;
        p += n;
    }
    free(raw);
    return m.hits;
}

static void test_memo_matches_full_decode(void **state)
{
    size_t events;

    /* llama.cpp's captures: every content chunk after the first takes the
     * shortcut, escaped quotes included; the role chunk (content null),
     * the first content chunk, the finish and usage chunks and [DONE] are
     * decoded in full. */
    uint32_t hits = fixture_both_ways(OAI_API_CHAT, "chat-stream-usage.http", &events);
    assert_int_equal(events, 16);
    assert_int_equal(hits, events - 5);
    /* Completions: the finish chunk carries usage, so 2 besides the first. */
    hits = fixture_both_ways(OAI_API_COMPLETIONS, "completions-stream.http", &events);
    assert_int_equal(events, 14);
    assert_int_equal(hits, events - 3);

    run_memo_script(memo_script, LL_ARRAY_LEN(memo_script));
}

TEST_MAIN(cmocka_unit_test(test_done_and_malformed), CHUNK_TEST(test_chat_content),
          CHUNK_TEST(test_reasoning_and_tools), CHUNK_TEST(test_finish_reason),
          CHUNK_TEST(test_usage), CHUNK_TEST(test_errors), cmocka_unit_test(test_error_message_cut),
          cmocka_unit_test(test_error_event), CHUNK_TEST(test_completions),
          cmocka_unit_test(test_response), cmocka_unit_test(test_stream_chunk_usage),
          cmocka_unit_test(test_stream_events_fallback), cmocka_unit_test(test_matches_reference),
          cmocka_unit_test(test_fast_path_edges), cmocka_unit_test(test_memo_matches_full_decode))
