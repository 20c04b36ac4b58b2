/* Unit tests of chatbody (conversation bodies) and session (open sessions,
 * due turns). Bodies are parsed back with jansson and counted with the
 * sim's tokenizer: the count must be what chatbody_prompt_tokens says. */
#include <jansson.h>
#include <stdlib.h>
#include <string.h>

#include "chatbody.h"
#include "session.h"
#include "sim/tokenizer.h"
#include "test.h"
#include "workload.h"

static void spec_of(uint64_t index, uint32_t prompt_tokens, struct req_spec *out)
{
    struct workload w;
    memset(&w, 0, sizeof w);
    w.seed = 5;
    dist_parse("1", DIST_UNIT_NONE, &w.prompt_tokens, NULL, 0);
    dist_parse("1", DIST_UNIT_NONE, &w.output_tokens, NULL, 0);
    workload_spec(&w, index, out);
    out->prompt_tokens = prompt_tokens;
}

/* chatbody_prompt into a new buffer, through the retry contract: a first
 * call with no room says how much is needed, the second fills exactly. */
static char *build(enum oai_api api, const struct req_spec *spec, size_t *len)
{
    size_t need = chatbody_prompt(api, 5, spec, NULL, 0);
    char *buf = malloc(need + 1);
    assert_non_null(buf);
    assert_int_equal(chatbody_prompt(api, 5, spec, buf, need), need);
    buf[need] = '\0';
    *len = need;
    return buf;
}

/* Turn 2 of a session: messages user, assistant, user, assistant, user,
 * with the sim's count (contents joined by "\n") equal to 7+3 + 5+0 + 9. */
static void test_chat_history_counts(void **state)
{
    (void)state;
    struct chat_turn hist[2];
    spec_of(1000, 7, &hist[0].spec);
    hist[0].output_tokens = 3;
    spec_of(1001, 5, &hist[1].spec);
    hist[1].output_tokens = 0; /* an empty answer stays a message */
    struct req_spec spec;
    spec_of(1002, 9, &spec);
    spec.history = hist;
    spec.history_len = 2;
    spec.session = 1;
    spec.turn = 2;
    assert_int_equal(chatbody_prompt_tokens(&spec), 24);

    size_t len;
    char *part = build(OAI_API_CHAT, &spec, &len);
    size_t doc_len = len + 2;
    char *doc = malloc(doc_len + 1);
    doc[0] = '[';
    memcpy(doc + 1, part, len);
    doc[len + 1] = ']';
    doc[doc_len] = '\0';
    json_error_t je;
    json_t *msgs = json_loads(doc, 0, &je);
    if (!msgs)
        fail_msg("not JSON: %s: %s", je.text, doc);
    assert_int_equal(json_array_size(msgs), 5);
    char joined[4096];
    size_t at = 0;
    for (size_t i = 0; i < 5; i++) {
        json_t *m = json_array_get(msgs, i);
        assert_string_equal(json_string_value(json_object_get(m, "role")),
                            i % 2 ? "assistant" : "user");
        const char *c = json_string_value(json_object_get(m, "content"));
        assert_non_null(c);
        if (i)
            joined[at++] = '\n';
        memcpy(joined + at, c, strlen(c));
        at += strlen(c);
    }
    assert_int_equal(tokenizer_count(joined, at), 24);
    /* The history is rebuilt byte for byte: turn 0's user text is its own
     * prompt, as workload_prompt made it when turn 0 was sent. */
    char first[256];
    size_t n = workload_prompt(5, &hist[0].spec, first, sizeof first);
    const char *c0 = json_string_value(json_object_get(json_array_get(msgs, 0), "content"));
    assert_int_equal(strlen(c0), n);
    assert_memory_equal(c0, first, n);

    struct record r;
    record_init(&r, 1002);
    chatbody_fill_record(&r, &spec);
    assert_int_equal(r.prompt_tokens, 24);
    assert_int_equal(r.session, 1);
    assert_int_equal(r.turn, 2);

    /* Completions: the same texts joined by "\n" in one string. */
    free(part);
    part = build(OAI_API_COMPLETIONS, &spec, &len);
    char *quoted = malloc(len + 3);
    quoted[0] = '"';
    memcpy(quoted + 1, part, len);
    quoted[len + 1] = '"';
    quoted[len + 2] = '\0';
    json_t *str = json_loads(quoted, JSON_DECODE_ANY, &je);
    assert_non_null(str);
    assert_int_equal(tokenizer_count(json_string_value(str), json_string_length(str)), 24);
    json_decref(str);
    free(quoted);
    json_decref(msgs);
    free(doc);
    free(part);
}

/* A verbatim prompt is escaped so it parses back to the same bytes. */
static void test_verbatim_prompt_escaped(void **state)
{
    (void)state;
    static const char text[] = "say \"hi\"\\\n\ttab\x01 caf\xc3\xa9";
    struct req_spec spec;
    spec_of(3, 1, &spec);
    spec.prompt_text = text;
    spec.prompt_text_len = sizeof text - 1;
    size_t len;
    char *part = build(OAI_API_CHAT, &spec, &len);
    json_error_t je;
    json_t *m = json_loadb(part, len, 0, &je);
    if (!m)
        fail_msg("not JSON: %s: %s", je.text, part);
    json_t *c = json_object_get(m, "content");
    assert_int_equal(json_string_length(c), sizeof text - 1);
    assert_memory_equal(json_string_value(c), text, sizeof text - 1);
    /* Every shorter buffer gets a prefix and the same answer. */
    char small[64];
    for (size_t cut = 0; cut < len && cut < sizeof small; cut++)
        assert_int_equal(chatbody_prompt(OAI_API_CHAT, 5, &spec, small, cut), len);
    json_decref(m);
    free(part);
}

static void test_assistant_text_exact(void **state)
{
    (void)state;
    char buf[2048];
    for (uint32_t n = 0; n < 300; n += 37) {
        size_t len = chatbody_assistant_text(9, n, n, buf, sizeof buf);
        assert_true(len <= sizeof buf);
        assert_int_equal(tokenizer_count(buf, len), n);
    }
}

static void test_turns_check(void **state)
{
    (void)state;
    struct dist d;
    char err[200];
    assert_int_equal(dist_parse("uniform:1,6", DIST_UNIT_NONE, &d, err, sizeof err), 0);
    assert_int_equal(session_turns_check(&d, err, sizeof err), 0);
    assert_int_equal(dist_parse("exponential:4", DIST_UNIT_NONE, &d, err, sizeof err), 0);
    assert_int_not_equal(session_turns_check(&d, err, sizeof err), 0);
    assert_int_equal(dist_parse("exponential:4,max=50", DIST_UNIT_NONE, &d, err, sizeof err), 0);
    assert_int_equal(session_turns_check(&d, err, sizeof err), 0);
    assert_int_equal(dist_parse("1001", DIST_UNIT_NONE, &d, err, sizeof err), 0);
    assert_int_not_equal(session_turns_check(&d, err, sizeof err), 0);
    assert_int_equal(dist_parse("4", DIST_UNIT_NONE, &d, err, sizeof err), 0);
    ASSERT_NEAR(session_turns_mean(&d), 4.0, 1e-12);
    /* uniform:1,6 rounded: 1 and 6 get half the weight of 2..5, mean 3.5. */
    assert_int_equal(dist_parse("uniform:1,6", DIST_UNIT_NONE, &d, err, sizeof err), 0);
    ASSERT_NEAR(session_turns_mean(&d), 3.5, 0.03);
}

/* Sessions close out of order and the ring grows past its first size;
 * every open one is still found by ordinal. Due turns pop in time order. */
static void test_session_set(void **state)
{
    (void)state;
    struct session_set s;
    session_set_init(&s);
    for (uint64_t i = 0; i < 300; i++) {
        struct session *x = session_open(&s, i * 3 + 1, 2, 1, i);
        assert_int_equal(x->turns, 2);
        if (i % 2 == 0 && i > 0)
            session_close(&s, i - 1); /* odd ordinals close early */
    }
    assert_null(session_get(&s, 1));
    assert_null(session_get(&s, 300));
    assert_int_equal(session_get(&s, 0)->index, 1);
    assert_int_equal(session_get(&s, 298)->index, 298 * 3 + 1);
    assert_int_equal(session_get(&s, 299)->index, 299 * 3 + 1);
    session_close(&s, 0);
    assert_int_equal(s.oldest, 2);
    static const uint64_t at[] = {50, 10, 40, 10, 30, 20, 60};
    for (size_t i = 0; i < 7; i++)
        session_due_push(&s, at[i], i);
    uint64_t last = 0;
    for (size_t i = 0; i < 7; i++) {
        struct session_due d = session_due_pop(&s);
        assert_true(d.at_ns >= last);
        last = d.at_ns;
    }
    assert_null(session_due_peek(&s));
    session_set_reset(&s);
    session_set_reset(&s);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_chat_history_counts),
        cmocka_unit_test(test_verbatim_prompt_escaped),
        cmocka_unit_test(test_assistant_text_exact),
        cmocka_unit_test(test_turns_check),
        cmocka_unit_test(test_session_set),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
