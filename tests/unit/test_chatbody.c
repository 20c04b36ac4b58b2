/* Unit tests of chatbody (conversation bodies, token-ID prompts) and
 * session (open sessions, due turns). Bodies are parsed back with jansson
 * and counted with the sim's tokenizer: the count must be what
 * chatbody_prompt_tokens says. ID prompts are parsed back and checked for
 * count, range, shared prefixes and the buffer contract. */
#include <jansson.h>
#include <stdlib.h>
#include <string.h>

#include "workload/chatbody.h"
#include "workload/session.h"
#include "workload/tokenizer.h"
#include "test.h"
#include "testutil.h"
#include "workload/workload.h"

#include "util/util.h"

static void spec_of(uint64_t index, uint32_t prompt_tokens, struct req_spec *out)
{
    struct workload w;
    test_workload_fixed(&w, 5, "1", "1");
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

/* The len bytes of part (the members of a JSON array, as chatbody writes
 * them) inside brackets, parsed: the array, or the test fails quoting it. */
static json_t *array_of(const char *part, size_t len)
{
    char *doc = malloc(len + 3);
    assert_non_null(doc);
    doc[0] = '[';
    memcpy(doc + 1, part, len);
    doc[len + 1] = ']';
    doc[len + 2] = '\0';
    json_error_t je;
    json_t *arr = json_loads(doc, 0, &je);
    if (!arr)
        fail_msg("not JSON: %s: %s", je.text, doc);
    free(doc);
    return arr;
}

/* The n messages of msgs alternate user and assistant, each with a
 * content (non-empty when nonempty); their contents joined by "\n" into
 * joined (cap bytes), as the sim counts a chat prompt. Returns the
 * joined length. */
static size_t messages_joined(const json_t *msgs, size_t n, int nonempty, char *joined, size_t cap)
{
    assert_int_equal(json_array_size(msgs), n);
    size_t at = 0;
    for (size_t i = 0; i < n; i++) {
        json_t *m = json_array_get(msgs, i);
        assert_string_equal(json_string_value(json_object_get(m, "role")),
                            i % 2 ? "assistant" : "user");
        const char *c = json_string_value(json_object_get(m, "content"));
        assert_true(c && (!nonempty || c[0]));
        assert_true(at + 1 + strlen(c) < cap);
        if (i)
            joined[at++] = '\n';
        memcpy(joined + at, c, strlen(c));
        at += strlen(c);
    }
    return at;
}

/* spec's chat body, with n messages (as messages_joined checks them)
 * whose joined text the sim's tokenizer counts as tokens, which is also
 * what chatbody_prompt_tokens says. Returns the messages (json_decref
 * them); *part gets the body's bytes (free them). */
static json_t *chat_messages(const struct req_spec *spec, size_t n, int nonempty, size_t tokens,
                             char **part)
{
    assert_int_equal(chatbody_prompt_tokens(spec), tokens);
    size_t len;
    *part = build(OAI_API_CHAT, spec, &len);
    json_t *msgs = array_of(*part, len);
    char joined[4096];
    size_t at = messages_joined(msgs, n, nonempty, joined, sizeof joined);
    assert_int_equal(tokenizer_count(joined, at), tokens);
    return msgs;
}

/* Turn 2 of a session, into spec: turn 0 (id 1000, a prompt of 7) answered
 * with 3 tokens, turn 1 (id 1001, a prompt of 5) answered with none, or
 * left unanswered (cancelled before its first token) when unanswered is
 * set, then its own prompt (id 1002, 9). hist holds the two turns and
 * must outlive spec. */
static void turn_two(struct chat_turn hist[2], int unanswered, struct req_spec *spec)
{
    memset(hist, 0,
           2 * sizeof *hist); /* unanswered 0: both turns resent (valgrind read it unset) */
    spec_of(1000, 7, &hist[0].spec);
    hist[0].output_tokens = 3;
    spec_of(1001, 5, &hist[1].spec);
    hist[1].output_tokens = 0; /* the flag, not the count, leaves a turn out */
    hist[1].unanswered = unanswered;
    spec_of(1002, 9, spec);
    spec->history = hist;
    spec->history_len = 2;
}

/* Message i of msgs is spec's prompt byte for byte, as workload_prompt
 * made it when spec was sent. */
static void assert_message_is_prompt(const json_t *msgs, size_t i, const struct req_spec *spec)
{
    char want[256];
    size_t n = workload_prompt(5, spec, want, sizeof want);
    const char *c = json_string_value(json_object_get(json_array_get(msgs, i), "content"));
    assert_non_null(c);
    assert_int_equal(strlen(c), n);
    assert_memory_equal(c, want, n);
}

/* Turn 2 of a session: messages user, assistant, user, assistant, user,
 * with the sim's count (contents joined by "\n") equal to 7+3 + 5+0 + 9. */
static void test_chat_history_counts(void **state)
{
    struct chat_turn hist[2];
    struct req_spec spec;
    turn_two(hist, 0, &spec);
    spec.session = 1;
    spec.turn = 2;
    char *part;
    json_t *msgs = chat_messages(&spec, 5, 0, 24, &part);
    /* The history is rebuilt byte for byte: turn 0's user text is its own
     * prompt. */
    assert_message_is_prompt(msgs, 0, &hist[0].spec);

    struct record r;
    record_init(&r, 1002);
    chatbody_fill_record(&r, &spec);
    assert_int_equal(r.prompt_tokens, 24);
    assert_int_equal(r.session, 1);
    assert_int_equal(r.turn, 2);

    /* Responses: the same messages, each an input item of type "message"
     * (which llama.cpp needs to take an assistant item). */
    size_t len;
    char *rpart = build(OAI_API_RESPONSES, &spec, &len);
    json_t *items = array_of(rpart, len);
    assert_int_equal(json_array_size(items), 5);
    for (size_t i = 0; i < 5; i++) {
        json_t *it = json_array_get(items, i), *m = json_array_get(msgs, i);
        assert_string_equal(json_string_value(json_object_get(it, "type")), "message");
        assert_string_equal(json_string_value(json_object_get(it, "role")),
                            json_string_value(json_object_get(m, "role")));
        assert_string_equal(json_string_value(json_object_get(it, "content")),
                            json_string_value(json_object_get(m, "content")));
    }
    json_decref(items);
    free(rpart);

    /* Completions: the same texts joined by "\n" in one string. */
    free(part);
    part = build(OAI_API_COMPLETIONS, &spec, &len);
    char *quoted = malloc(len + 3);
    quoted[0] = '"';
    memcpy(quoted + 1, part, len);
    quoted[len + 1] = '"';
    quoted[len + 2] = '\0';
    json_error_t je;
    json_t *str = json_loads(quoted, JSON_DECODE_ANY, &je);
    assert_non_null(str);
    assert_int_equal(tokenizer_count(json_string_value(str), json_string_length(str)), 24);
    json_decref(str);
    free(quoted);
    json_decref(msgs);
    free(part);
}

/* Turn 2 of a session whose turn 1 was cancelled before its first token
 * (unanswered): it is left out, its prompt with it, so the messages are
 * user, assistant, user (no empty assistant message) and the count is
 * 7+3 + 9, as the body's own count under the sim's tokenizer. */
static void test_chat_history_unanswered(void **state)
{
    struct chat_turn hist[2];
    struct req_spec spec;
    turn_two(hist, 1, &spec);
    char *part;
    json_t *msgs = chat_messages(&spec, 3, 1, 19, &part);
    assert_message_is_prompt(msgs, 2, &spec);
    json_decref(msgs);
    free(part);
}

/* A verbatim prompt is escaped so it parses back to the same bytes. */
static void test_verbatim_prompt_escaped(void **state)
{
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
    char buf[2048];
    for (uint32_t n = 0; n < 300; n += 37) {
        size_t len = chatbody_assistant_text(9, n, n, buf, sizeof buf);
        assert_true(len <= sizeof buf);
        assert_int_equal(tokenizer_count(buf, len), n);
    }
}

static void test_turns_check(void **state)
{
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
    /* 0 turns would run 1, as a length of 0 would send 1 token: refused. */
    assert_int_equal(dist_parse("0", DIST_UNIT_NONE, &d, err, sizeof err), 0);
    assert_int_not_equal(session_turns_check(&d, err, sizeof err), 0);
    assert_string_equal(err, "0 turns per session (each would run 1); expected at least 1");
    assert_int_equal(dist_parse("uniform:0,0.4", DIST_UNIT_NONE, &d, err, sizeof err), 0);
    assert_int_not_equal(session_turns_check(&d, err, sizeof err), 0);
    assert_non_null(strstr(err, "round to 0 turns"));
    assert_int_equal(dist_parse("uniform:0,2", DIST_UNIT_NONE, &d, err, sizeof err), 0);
    assert_int_equal(session_turns_check(&d, err, sizeof err), 0);
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
        struct due d = session_due_pop(&s);
        assert_true(d.at_ns >= last);
        assert_int_equal(at[d.id], d.at_ns); /* each turn pops with its own time */
        last = d.at_ns;
    }
    assert_null(session_due_peek(&s));
    session_set_reset(&s);
    session_set_reset(&s);
}

/* ---- token-ID prompts ---- */

#define IDS_MAX 2048

/* chatbody_prompt_ids of spec under seed in range (NULL: the default),
 * checked for form (decimal IDs in the range, single commas, nothing else)
 * and parsed into ids (at most IDS_MAX). Returns the number of IDs. */
static size_t ids_in(uint64_t seed, const struct chatbody_id_range *range,
                     const struct req_spec *spec, uint32_t *ids)
{
    uint64_t lo = range ? range->min : CHATBODY_ID_MIN, hi = range ? range->max : CHATBODY_ID_MAX;
    size_t need = chatbody_prompt_ids(seed, range, spec, NULL, 0);
    char *buf = malloc(need + 1);
    assert_non_null(buf);
    assert_int_equal(chatbody_prompt_ids(seed, range, spec, buf, need), need);
    buf[need] = '\0';
    size_t n = 0, i = 0;
    while (i < need) {
        uint64_t v = 0;
        size_t start = i;
        while (i < need && buf[i] >= '0' && buf[i] <= '9')
            v = v * 10 + (uint64_t)(buf[i++] - '0');
        if (i == start || i - start > 10 || (buf[start] == '0' && i - start > 1))
            fail_msg("not a decimal ID at byte %zu: %s", start, buf);
        if (v < lo || v > hi)
            fail_msg("ID %llu at byte %zu is outside [%llu, %llu]", (unsigned long long)v, start,
                     (unsigned long long)lo, (unsigned long long)hi);
        assert_true(n < IDS_MAX);
        ids[n++] = (uint32_t)v;
        if (i < need) {
            assert_int_equal(buf[i], ',');
            i++;
            assert_true(i < need); /* no trailing comma */
        }
    }
    /* Within brackets it is a JSON array of n integers. */
    json_t *arr = array_of(buf, need);
    assert_int_equal(json_array_size(arr), n);
    assert_int_equal(json_integer_value(json_array_get(arr, 0)), ids[0]);
    json_decref(arr);
    free(buf);
    return n;
}

/* ids_in in the default range. */
static size_t ids_of(uint64_t seed, const struct req_spec *spec, uint32_t *ids)
{
    return ids_in(seed, NULL, spec, ids);
}

static void prefixed(struct req_spec *spec, int64_t group, uint32_t prefix_tokens)
{
    spec->prefix_id = group;
    spec->prefix_tokens = prefix_tokens;
}

/* Exactly prompt_tokens IDs, with or without a prefix of any length
 * against the prompt (shorter, equal, longer, within the nonce). */
static void test_prompt_ids_exact_count(void **state)
{
    static uint32_t ids[IDS_MAX];
    static const uint32_t lens[] = {1, 2, 3, 4, 5, 17, 127, 128, 129, 131, 132, 256, 2000};
    for (size_t k = 0; k < sizeof lens / sizeof lens[0]; k++) {
        struct req_spec spec;
        spec_of(77, lens[k], &spec);
        spec.prefix_id = -1;
        spec.prefix_tokens = 0;
        assert_int_equal(ids_of(5, &spec, ids), lens[k]);
        prefixed(&spec, 3, 128);
        assert_int_equal(ids_of(5, &spec, ids), lens[k]);
        /* 4 or 5 digits each: between 5n - 1 and 6n - 1 bytes. */
        size_t bytes = chatbody_prompt_ids(5, NULL, &spec, NULL, 0);
        assert_in_range(bytes, 5 * (size_t)lens[k] - 1, 6 * (size_t)lens[k] - 1);
    }
    /* Calibration, verbatim text and history do not change an ID prompt. */
    struct req_spec a, b;
    spec_of(8, 300, &a);
    b = a;
    b.calib.tokens_per_word = 1.3;
    b.calib.intercept_tokens = 9;
    static uint32_t ids_b[IDS_MAX];
    assert_int_equal(ids_of(5, &a, ids), 300);
    assert_int_equal(ids_of(5, &b, ids_b), 300);
    assert_memory_equal(ids, ids_b, 300 * sizeof ids[0]);
}

/* Two requests of one prefix group share exactly their first L IDs: the
 * tag (the group's number in 14-bit digits, hand-computed here) and the
 * body; then the nonce and filler differ. */
static void test_prompt_ids_prefix_sharing(void **state)
{
    static uint32_t a[IDS_MAX], b[IDS_MAX], c[IDS_MAX];
    struct req_spec sa, sb, sc;
    spec_of(10, 256, &sa);
    spec_of(11, 256, &sb);
    prefixed(&sa, 3, 128);
    prefixed(&sb, 3, 128);
    assert_int_equal(ids_of(5, &sa, a), 256);
    assert_int_equal(ids_of(5, &sb, b), 256);
    assert_int_equal(a[0], 1003);
    assert_int_equal(a[1], 1000);
    assert_int_equal(a[2], 1000);
    assert_memory_equal(a, b, 128 * sizeof a[0]);
    /* The nonce (IDs 128-131) differs; so does nearly all the filler. */
    assert_memory_not_equal(a + 128, b + 128, 4 * sizeof a[0]);
    size_t differ = 0;
    for (size_t i = 132; i < 256; i++)
        differ += a[i] != b[i];
    assert_true(differ > 110);

    /* Group 4 differs from the first ID; group 3 + 16384 from the second
     * (same low digit), and its body differs too. */
    spec_of(10, 256, &sc);
    prefixed(&sc, 4, 128);
    assert_int_equal(ids_of(5, &sc, c), 256);
    assert_int_equal(c[0], 1004);
    prefixed(&sc, 3 + 16384, 128);
    assert_int_equal(ids_of(5, &sc, c), 256);
    assert_int_equal(c[0], 1003);
    assert_int_equal(c[1], 1001);
    assert_int_equal(c[2], 1000);
    differ = 0;
    for (size_t i = 3; i < 128; i++)
        differ += a[i] != c[i];
    assert_true(differ > 110);

    /* Another seed, another prefix body (the tag stays). */
    assert_int_equal(ids_of(6, &sb, b), 256);
    assert_int_equal(b[0], 1003);
    assert_memory_not_equal(a + 3, b + 3, 125 * sizeof a[0]);

    /* A salted seed (--prompt-salt) moves the tag too: no ID in common
     * from the first, while the group still shares its prefix. */
    uint64_t salted = workload_content_seed(5, 9);
    assert_int_equal(ids_of(salted, &sa, b), 256);
    assert_true(b[0] != a[0] || b[1] != a[1] || b[2] != a[2]);
    assert_int_equal(ids_of(salted, &sb, c), 256);
    assert_memory_equal(b, c, 128 * sizeof b[0]);

    /* A prompt shorter than its prefix is all prefix: the group's first
     * 10 IDs, the same for every request of the group. */
    spec_of(12, 10, &sc);
    prefixed(&sc, 3, 128);
    assert_int_equal(ids_of(5, &sc, c), 10);
    assert_memory_equal(a, c, 10 * sizeof a[0]);

    /* Without a prefix the nonce comes first: two requests differ within
     * their first 4 IDs. */
    spec_of(10, 256, &sa);
    spec_of(11, 256, &sb);
    sa.prefix_id = sb.prefix_id = -1;
    assert_int_equal(ids_of(5, &sa, a), 256);
    assert_int_equal(ids_of(5, &sb, b), 256);
    assert_memory_not_equal(a, b, 4 * sizeof a[0]);
}

/* The same (seed, spec) always gives the same bytes; the seed and the
 * index each change them. */
static void test_prompt_ids_deterministic(void **state)
{
    char x[2048], y[2048];
    struct req_spec spec;
    spec_of(40, 300, &spec);
    prefixed(&spec, 9, 50);
    size_t n = chatbody_prompt_ids(5, NULL, &spec, x, sizeof x);
    assert_true(n < sizeof x);
    assert_int_equal(chatbody_prompt_ids(5, NULL, &spec, y, sizeof y), n);
    assert_memory_equal(x, y, n);
    size_t m = chatbody_prompt_ids(7, NULL, &spec, y, sizeof y);
    assert_true(m != n || memcmp(x, y, n) != 0);
    spec.index = 41;
    m = chatbody_prompt_ids(5, NULL, &spec, y, sizeof y);
    assert_true(m != n || memcmp(x, y, n) != 0);
}

/* The nonce: 4 IDs of 14 bits read back as 56 bits are distinct for
 * 50000 consecutive indices. */
static void test_prompt_ids_nonce_unique(void **state)
{
    enum { N = 50000 };
    uint64_t *v = malloc(N * sizeof *v);
    assert_non_null(v);
    uint32_t ids[IDS_MAX];
    struct req_spec spec;
    spec_of(0, 4, &spec);
    spec.prefix_id = -1;
    for (uint64_t i = 0; i < N; i++) {
        spec.index = i;
        assert_int_equal(ids_of(3, &spec, ids), 4);
        v[i] = 0;
        for (int k = 3; k >= 0; k--)
            v[i] = (v[i] << CHATBODY_ID_BITS) | (ids[k] - CHATBODY_ID_MIN);
    }
    qsort(v, N, sizeof *v, test_cmp_u64);
    for (size_t i = 1; i < N; i++)
        assert_true(v[i] != v[i - 1]);
    free(v);
}

/* The buffer contract: every length gets the same answer and the prefix
 * of the full text, and nothing past len is written. */
static void test_prompt_ids_buffer(void **state)
{
    struct req_spec spec;
    spec_of(90, 40, &spec);
    prefixed(&spec, 2, 20);
    char full[512];
    size_t n = chatbody_prompt_ids(5, NULL, &spec, full, sizeof full);
    assert_true(n > 150 && n < sizeof full);
    assert_int_equal(chatbody_prompt_ids(5, NULL, &spec, NULL, 0), n);
    char small[512];
    for (size_t cut = 0; cut <= n; cut++) {
        memset(small, '#', sizeof small);
        assert_int_equal(chatbody_prompt_ids(5, NULL, &spec, small, cut), n);
        assert_memory_equal(small, full, cut);
        assert_int_equal(small[cut], '#');
    }
}

/* The default range (NULL, the same range given, or one of fewer than two
 * IDs) gives the bytes it gave before ranges existed: 1,200 prompts of
 * every shape, hashed (FNV-1a 64), against the hash of the code of
 * 2368272, so a seed still names the same requests. */
static void test_prompt_ids_default_unchanged(void **state)
{
    static const struct chatbody_id_range same = {CHATBODY_ID_MIN, CHATBODY_ID_MAX};
    static const struct chatbody_id_range one = {5, 5};
    const struct chatbody_id_range *ranges[] = {NULL, &same, &one};
    char *buf = malloc(1 << 20);
    assert_non_null(buf);
    for (size_t k = 0; k < LL_ARRAY_LEN(ranges); k++) {
        uint64_t h = 1469598103934665603ULL;
        for (uint64_t seed = 0; seed < 4; seed++) {
            for (uint32_t i = 0; i < 300; i++) {
                struct req_spec s;
                memset(&s, 0, sizeof s);
                s.index = (uint64_t)i * 7919;
                s.prompt_tokens = 1 + (i * 37) % 700;
                s.prefix_id = i % 3 == 0 ? -1 : (int64_t)(i % 5);
                s.prefix_tokens = (i * 13) % 300;
                s.class_idx = -1;
                s.api = -1;
                s.session = -1;
                s.turn = -1;
                s.dataset_entry = -1;
                size_t n = chatbody_prompt_ids(seed, ranges[k], &s, buf, 1 << 20);
                for (size_t b = 0; b < n; b++) {
                    h ^= (unsigned char)buf[b];
                    h *= 1099511628211ULL;
                }
            }
        }
        assert_int_equal(h, 0x9ac0ff4f24097098ULL);
    }
    free(buf);
}

/* v's digits in base m, least significant first, read back from ids[0,
 * n) less min. */
static uint64_t digits_value(const uint32_t *ids, size_t n, uint32_t min, uint64_t m)
{
    uint64_t v = 0;
    for (size_t k = n; k-- > 0;)
        v = v * m + (ids[k] - min);
    return v;
}

/* Other ranges: every ID inside, exact counts, the nonce in as many base-m
 * digits as 56 bits need (7 for 509 IDs, 56 for 2, 2 for 2^32) and unique,
 * the prefix tag in as many as 32 bits need, the filler uniform. */
static void test_prompt_ids_range(void **state)
{
    static uint32_t a[IDS_MAX], b[IDS_MAX];
    static const struct {
        struct chatbody_id_range r;
        size_t nonce, tag;
    } cases[] = {
        {{3, 511}, 7, 4},        {{0, 1}, 56, 32},
        {{0, UINT32_MAX}, 2, 1}, {{UINT32_MAX - 1, UINT32_MAX}, 56, 32},
        {{100, 355}, 7, 4}, /* 256 IDs: 8 bits each */
    };
    for (size_t c = 0; c < LL_ARRAY_LEN(cases); c++) {
        const struct chatbody_id_range *r = &cases[c].r;
        uint64_t m = (uint64_t)r->max - r->min + 1;
        struct req_spec sa, sb;
        for (uint32_t len = 1; len < 200; len += 37) {
            spec_of(5, len, &sa);
            sa.prefix_id = -1;
            assert_int_equal(ids_in(9, r, &sa, a), len);
            prefixed(&sa, 2, 64);
            assert_int_equal(ids_in(9, r, &sa, a), len);
        }
        /* The nonce, read back, is distinct for 3000 indices. */
        enum { N = 3000 };
        uint64_t v[N];
        spec_of(0, (uint32_t)cases[c].nonce, &sa);
        sa.prefix_id = -1;
        for (uint64_t i = 0; i < N; i++) {
            sa.index = i;
            assert_int_equal(ids_in(3, r, &sa, a), cases[c].nonce);
            v[i] = digits_value(a, cases[c].nonce, r->min, m);
            assert_true(v[i] < (1ULL << 56));
        }
        qsort(v, N, sizeof v[0], test_cmp_u64);
        for (size_t i = 1; i < N; i++)
            assert_true(v[i] != v[i - 1]);
        /* The tag: group 77's number in base m, then the group's body,
         * shared by two requests; then their nonces differ. */
        spec_of(10, 200, &sa);
        spec_of(11, 200, &sb);
        prefixed(&sa, 77, 100);
        prefixed(&sb, 77, 100);
        assert_int_equal(ids_in(5, r, &sa, a), 200);
        assert_int_equal(ids_in(5, r, &sb, b), 200);
        assert_int_equal(digits_value(a, cases[c].tag, r->min, m), 77);
        assert_memory_equal(a, b, 100 * sizeof a[0]);
        assert_memory_not_equal(a + 100, b + 100, cases[c].nonce * sizeof a[0]);
    }

    /* Filler over 10 IDs: each about a tenth of 20,000 draws. */
    static uint32_t f[IDS_MAX];
    struct chatbody_id_range ten = {3, 12};
    uint64_t count[10] = {0};
    for (uint64_t i = 0; i < 10; i++) {
        struct req_spec s;
        spec_of(i, 2000, &s);
        s.prefix_id = -1;
        assert_int_equal(ids_in(1, &ten, &s, f), 2000);
        for (size_t k = 17; k < 2000; k++) /* past the nonce's 17 digits */
            count[f[k] - 3]++;
    }
    for (size_t k = 0; k < 10; k++)
        assert_in_range(count[k], 1800, 2200);
}

/* clang-format off */
TEST_MAIN(cmocka_unit_test(test_chat_history_counts),
          cmocka_unit_test(test_chat_history_unanswered),
          cmocka_unit_test(test_verbatim_prompt_escaped),
          cmocka_unit_test(test_assistant_text_exact),
          cmocka_unit_test(test_turns_check),
          cmocka_unit_test(test_session_set),
          cmocka_unit_test(test_prompt_ids_exact_count),
          cmocka_unit_test(test_prompt_ids_prefix_sharing),
          cmocka_unit_test(test_prompt_ids_deterministic),
          cmocka_unit_test(test_prompt_ids_nonce_unique),
          cmocka_unit_test(test_prompt_ids_buffer),
          cmocka_unit_test(test_prompt_ids_default_unchanged),
          cmocka_unit_test(test_prompt_ids_range))
/* clang-format on */
