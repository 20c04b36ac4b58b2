/* test_trace.c: replay traces: the exact --dump-schedule lines load back
 * to the same requests at the same offsets; every optional field; sorting;
 * timestamp rebasing; time scaling; every error class with file:line:col
 * and field. */
#include "test.h"
#include "testutil.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "decode/jscan.h"
#include "util/util.h"
#include "workload/jsonfile.h"
#include "workload/replay.h"
#include "workload/trace.h"

static struct trace *parse_ok(const char *text)
{
    struct trace *t = NULL;
    char err[512] = "";
    if (trace_parse("t.jsonl", text, strlen(text), &t, err, sizeof(err)))
        fail_msg("trace_parse failed: %s\n%s", err, text);
    return t;
}

static void parse_bad(const char *text, const char *a, const char *b)
{
    ASSERT_PARSE_REFUSED(trace_parse, "t.jsonl", struct trace, text, a, b);
}

/* The format `llmload run --dump-schedule` writes, byte for byte, including
 * a shard's indexes (i mod N) and an offset that does not start at 0. */
static void test_dump_schedule_roundtrip(void **state)
{
    struct trace *t = parse_ok(
        "{\"index\":1,\"sched_ns\":250000000,\"prompt_tokens\":512,\"max_tokens\":128}\n"
        "{\"index\":3,\"sched_ns\":250000001,\"prompt_tokens\":7,\"max_tokens\":1}\n"
        "{\"index\":5,\"sched_ns\":18446744073,\"prompt_tokens\":100000000,\"max_tokens\":64}\n");
    assert_int_equal(t->n, 3);
    assert_true(t->has_index);
    assert_int_equal(t->time_field, TRACE_TIME_SCHED_NS);
    const uint64_t idx[] = {1, 3, 5}, at[] = {250000000, 250000001, 18446744073ULL};
    const uint32_t pt[] = {512, 7, 100000000}, mt[] = {128, 1, 64};
    for (size_t i = 0; i < 3; i++) {
        const struct trace_entry *e = &t->entries[i];
        assert_true(e->index == idx[i]);
        assert_true(e->sched_ns == at[i]);
        assert_true(trace_scaled_sched_ns(t, i, 1.0) == at[i]);
        assert_int_equal(e->prompt_tokens, pt[i]);
        assert_int_equal(e->max_tokens, mt[i]);
        assert_int_equal(e->line, i + 1);
        assert_true(e->cancel_after_ns == TRACE_NONE);
        assert_true(e->session_id == TRACE_NONE);
        assert_true(e->prefix_id == -1 && e->prefix_tokens == 0);
        assert_null(trace_prompt(t, i, NULL));
        assert_null(trace_class_name(t, i));
    }
    trace_free(t);

    ASSERT_LOADS(trace_load, "schedule.jsonl", &t);
    assert_int_equal(t->n, 4);
    assert_true(t->entries[1].sched_ns == 48210394);
    assert_int_equal(t->entries[2].prompt_tokens, 1024);
    assert_int_equal(t->entries[3].max_tokens, 17);
    trace_free(t);
    trace_free(NULL);
}

static void test_all_fields(void **state)
{
    struct trace *t = NULL;
    ASSERT_LOADS(trace_load, "trace.jsonl", &t);
    assert_int_equal(t->n, 4);
    assert_false(t->has_index);
    assert_int_equal(t->time_field, TRACE_TIME_SECONDS);
    assert_int_equal(t->n_classes, 2);
    for (size_t i = 0; i < 4; i++) {
        assert_true(t->entries[i].index == i);
        assert_true(t->entries[i].sched_ns == i * 250000000ULL);
    }
    assert_string_equal(trace_class_name(t, 0), "chat");
    assert_string_equal(trace_class_name(t, 1), "rag");
    assert_int_equal(t->entries[1].class_id, 1);
    assert_int_equal(t->entries[3].class_id, 0);
    assert_true(t->entries[0].session_id == 1);
    assert_true(t->entries[1].prefix_id == 2 && t->entries[1].prefix_tokens == 1000);
    assert_int_equal(t->entries[1].prompt_tokens, 1200);
    size_t len;
    const char *p = trace_prompt(t, 2, &len);
    assert_non_null(p);
    assert_string_equal(p, "Write a haiku about load testing.");
    assert_int_equal(len, strlen(p));
    assert_int_equal(t->entries[2].prompt_tokens, 0); /* text, no count */
    assert_int_equal(t->entries[2].max_tokens, 30);
    assert_true(t->entries[2].cancel_after_ns == 1500000000ULL);
    trace_free(t);
}

/* Lines out of order are sorted by time, ties in file order; indexes given
 * in the file are kept; escapes in prompts are decoded. */
static void test_sorting_and_escapes(void **state)
{
    struct trace *t = parse_ok(
        "{\"t\":2,\"prompt_tokens\":1,\"max_tokens\":1}\n"
        "\n"
        "{\"t\":1,\"prompt_tokens\":2,\"max_tokens\":1,\"prompt\":\"a\\\"b\\n\\u00e9\"}\r\n"
        "   \n"
        "{\"t\":2,\"prompt_tokens\":3,\"max_tokens\":1}\n"
        "{\"t\":0.5,\"prompt_tokens\":4,\"max_tokens\":1}");
    assert_int_equal(t->n, 4);
    const uint32_t order[] = {4, 2, 1, 3};
    const uint32_t lines[] = {6, 3, 1, 5};
    for (size_t i = 0; i < 4; i++) {
        assert_int_equal(t->entries[i].prompt_tokens, order[i]);
        assert_int_equal(t->entries[i].line, lines[i]);
        assert_true(t->entries[i].index == i);
    }
    assert_true(t->entries[0].sched_ns == 500000000ULL);
    assert_string_equal(trace_prompt(t, 1, NULL), "a\"b\n\xc3\xa9");
    trace_free(t);

    t = parse_ok("{\"index\":9,\"sched_ns\":20,\"prompt_tokens\":1,\"max_tokens\":1}\n"
                 "{\"index\":4,\"sched_ns\":10,\"prompt_tokens\":1,\"max_tokens\":1}\n");
    assert_true(t->entries[0].index == 4 && t->entries[1].index == 9);
    trace_free(t);
}

static void test_timestamp_rebase_and_scale(void **state)
{
    struct trace *t = parse_ok(
        "{\"timestamp\":1700000001.5,\"prompt_tokens\":1,\"output_tokens\":2}\n"
        "{\"timestamp\":1700000000.25,\"prompt_tokens\":1,\"output_tokens\":2}\n");
    assert_int_equal(t->time_field, TRACE_TIME_TIMESTAMP);
    assert_true(t->entries[0].sched_ns == 0);
    assert_true(t->entries[1].sched_ns == 1250000000ULL);
    double f;
    char err[256];
    assert_int_equal(trace_time_factor(2, 4, &f, err, sizeof(err)), 0);
    assert_true(f == 0.5);
    assert_true(trace_scaled_sched_ns(t, 1, f) == 625000000ULL);
    assert_true(trace_scaled_sched_ns(t, 1, 3) == 3750000000ULL);
    assert_int_equal(trace_time_factor(0, 1, &f, err, sizeof(err)), LL_E_INVAL);
    assert_non_null(strstr(err, "--time-scale: expected a number > 0"));
    assert_int_equal(trace_time_factor(1, -2, &f, err, sizeof(err)), LL_E_INVAL);
    assert_non_null(strstr(err, "--rate-scale: expected a number > 0"));
    assert_int_equal(trace_time_factor(1, NAN, &f, err, sizeof(err)), LL_E_INVAL);
    trace_free(t);
}

#define OKL "{\"sched_ns\":0,\"prompt_tokens\":1,\"max_tokens\":1}\n"

/* A UTF-8 byte-order mark (EF BB BF, which Windows editors write) at the
 * start of the file is skipped by the reader, so line 1 reads as the
 * editor shows it; one anywhere else is stray bytes and refused. */
static void test_bom(void **state)
{
    struct trace *t = NULL;
    ASSERT_LOADS(trace_load, "bom_trace.jsonl", &t);
    assert_int_equal(t->n, 2);
    assert_int_equal(t->entries[0].prompt_tokens, 5);
    assert_true(t->entries[1].sched_ns == 1000);
    trace_free(t);
    parse_bad(OKL "\xEF\xBB\xBF{\"sched_ns\":0,\"prompt_tokens\":1,\"max_tokens\":1}\n",
              "t.jsonl:2:", "invalid JSON");
}

/* jsonfile_whole_number: a number whose value is exactly an integer is
 * one however it is written; a fraction and an out-of-range value are
 * told apart. */
static void test_whole_number(void **state)
{
    static const struct {
        const char *text;
        int rc;
        int64_t want;
    } cases[] = {
        {"5", 0, 5},
        {"5.0", 0, 5},
        {"5e0", 0, 5},
        {"0.5e1", 0, 5},
        {"1e3", 0, 1000},
        {"1E+3", 0, 1000},
        {"1000e-3", 0, 1},
        {"0", 0, 0},
        {"-0.0", 0, 0},
        {"0e-999999999", 0, 0},
        {"9007199254740993.0", 0, 9007199254740993LL},
        {"9223372036854775807", 0, INT64_MAX},
        {"92233720368547758.07e2", 0, INT64_MAX},
        {"-9223372036854775808", 0, INT64_MIN},
        {"5.5", LL_E_INVAL, 0},
        {"1e-3", LL_E_INVAL, 0},
        {"5.000000000000000000000000000000000000000000001", LL_E_INVAL, 0},
        {"9223372036854775808", LL_E_RANGE, 0},
        {"1e19", LL_E_RANGE, 0},
        {"1e999999999999", LL_E_RANGE, 0},
        {"100000000000000000000000000000000000000000000001", LL_E_RANGE, 0},
    };
    for (size_t i = 0; i < LL_ARRAY_LEN(cases); i++) {
        struct jscan_value v;
        int64_t x = 42;
        const char *s = cases[i].text;
        assert_int_equal(jscan_validate(s, strlen(s), JSCAN_DEFAULT_DEPTH, &v), 0);
        int rc = jsonfile_whole_number(&v, INT64_MIN, INT64_MAX, &x);
        if (rc != cases[i].rc || (rc == 0 && x != cases[i].want))
            fail_msg("%s: rc %d, want %d; value %lld, want %lld", s, rc, cases[i].rc, (long long)x,
                     (long long)cases[i].want);
    }
    struct jscan_value v;
    int64_t x;
    assert_int_equal(jscan_validate("\"5\"", 3, JSCAN_DEFAULT_DEPTH, &v), 0);
    assert_int_equal(jsonfile_whole_number(&v, 0, 10, &x), LL_E_INVAL);
    assert_int_equal(jscan_validate("1.1e1", 5, JSCAN_DEFAULT_DEPTH, &v), 0);
    assert_int_equal(jsonfile_whole_number(&v, 0, 10, &x), LL_E_RANGE);
    assert_int_equal(jscan_validate("0", 1, JSCAN_DEFAULT_DEPTH, &v), 0);
    assert_int_equal(jsonfile_whole_number(&v, 1, 10, &x), LL_E_RANGE);
}

/* Every integer field of a trace line takes an integral float (5.0, 1e3)
 * and refuses a fraction naming the field. */
static void test_integral_floats(void **state)
{
    struct trace *t = parse_ok("{\"index\":1e0,\"sched_ns\":2.5e9,\"prompt_tokens\":5.0,"
                               "\"max_tokens\":1e3,\"prefix_id\":3.0,\"prefix_tokens\":2E0,"
                               "\"session_id\":7.00,\"cancel_after_ns\":1.5e9}\n");
    const struct trace_entry *e = &t->entries[0];
    assert_true(e->index == 1 && e->sched_ns == 2500000000ULL);
    assert_int_equal(e->prompt_tokens, 5);
    assert_int_equal(e->max_tokens, 1000);
    assert_true(e->prefix_id == 3 && e->prefix_tokens == 2);
    assert_true(e->session_id == 7 && e->cancel_after_ns == 1500000000ULL);
    trace_free(t);
    parse_bad("{\"sched_ns\":0,\"prompt_tokens\":5.5,\"max_tokens\":1}\n",
              "t.jsonl:1:31: prompt_tokens: expected a whole number in [1, 100000000], got 5.5",
              NULL);
    parse_bad("{\"sched_ns\":0.5,\"prompt_tokens\":5,\"max_tokens\":1}\n",
              "t.jsonl:1:13: sched_ns: expected a whole number", NULL);
    parse_bad("{\"sched_ns\":0,\"prompt_tokens\":5,\"output_tokens\":1e-1}\n",
              "t.jsonl:1:49: output_tokens: expected a whole number", NULL);
    parse_bad("{\"sched_ns\":0,\"prompt_tokens\":5,\"max_tokens\":1e9}\n",
              "max_tokens: expected a whole number in [1, 100000000], got 1e9", NULL);
}

/* A run's records (requests.jsonl) load as the requests it offered: id,
 * sched_ns, prompt_tokens, max_tokens, class and session carried, the
 * outcome passed over, whatever it was; what a trace cannot say refused. */
static void test_records(void **state)
{
#define REC(id, kind, sched, extra)                                                                \
    "{\"id\":" id ",\"kind\":\"" kind "\",\"http_status\":null,\"sched_ns\":" sched                \
    ",\"sent_ns\":null,\"prompt_tokens\":40,\"max_tokens\":7,\"output_tokens\":0,"                 \
    "\"warmup\":false" extra ",\"detail\":null,\"added_later\":[1]}\n"
    struct trace *t = parse_ok(REC("3", "http_5xx", "2000", ",\"class\":\"rag\"") REC(
        "0", "ok", "0", ",\"class\":\"chat\",\"session\":9") REC("1", "cancelled", "1000", ""));
    assert_true(t->from_records && t->has_index);
    assert_int_equal(t->time_field, TRACE_TIME_SCHED_NS);
    assert_int_equal(t->n, 3);
    for (size_t i = 0; i < 3; i++) {
        const struct trace_entry *e = &t->entries[i];
        assert_true(e->index == (i == 2 ? 3 : i) && e->sched_ns == i * 1000);
        assert_true(e->prompt_tokens == 40 && e->max_tokens == 7);
        assert_true(e->cancel_after_ns == TRACE_NONE && e->prefix_id == -1);
    }
    assert_string_equal(trace_class_name(t, 0), "chat");
    assert_true(t->entries[0].session_id == 9 && t->entries[1].session_id == TRACE_NONE);
    assert_null(trace_class_name(t, 1));
    assert_string_equal(trace_class_name(t, 2), "rag");
    trace_free(t);

    /* ignore_eos: a record's true replays as asked; false (or absent, as
     * in files from before it was kept) leaves it to --ignore-eos */
    t = parse_ok(REC("0", "ok", "0", ",\"ignore_eos\":true")
                     REC("1", "ok", "5", ",\"ignore_eos\":false") REC("2", "ok", "9", ""));
    assert_int_equal(t->entries[0].ignore_eos, 1);
    assert_int_equal(t->entries[1].ignore_eos, -1);
    assert_int_equal(t->entries[2].ignore_eos, -1);
    trace_free(t);

    parse_bad(REC("0", "ok", "0", ",\"images\":2"),
              "t.jsonl:1:", "images: the request carried images");
    parse_bad(REC("0", "ok", "0", ",\"inputs\":4"), "inputs: an embeddings request", NULL);
    parse_bad(REC("0", "ok", "null", ""), "t.jsonl:1:", "sched_ns: null");
    parse_bad(REC("0", "ok", "0", ",\"step\":0") REC("1", "ok", "5", ",\"step\":1"),
              "t.jsonl:2:", "step: 1, but line 1's is 0");
    parse_bad(REC("0", "ok", "0", "") REC("0", "ok", "5", ""), "t.jsonl:2: index: 0 repeats line 1",
              NULL);
    parse_bad(REC("0", "ok", "0", "") "{\"sched_ns\":0,\"prompt_tokens\":1,\"max_tokens\":1}\n",
              "t.jsonl:2:1: id: missing: expected a record of requests.jsonl, like line 1", NULL);
#undef REC
}

static void test_errors(void **state)
{
    parse_bad("", "t.jsonl: empty trace", NULL);
    parse_bad("\n \n", "t.jsonl: empty trace", NULL);
    parse_bad(OKL "{\"sched_ns\":0,\"prompt_tokens\":1,}\n", "t.jsonl:2:", "invalid JSON");
    parse_bad(OKL "[1,2]\n", "t.jsonl:2:1: expected one JSON object per line", NULL);
    parse_bad(OKL "{\"sched_ns\":0,\"prompt_tokens\":1,\"max_tokens\":1,\"temp\":0.7}\n",
              "t.jsonl:2:48: temp: unknown field (allowed: index, sched_ns, t, timestamp,",
              "cancel_after_ns, api, ignore_eos)");
    parse_bad("{\"sched_ns\":0,\"sched_ns\":1,\"prompt_tokens\":1,\"max_tokens\":1}\n",
              "t.jsonl:1:15: sched_ns: repeated field", NULL);
    parse_bad("{\"prompt_tokens\":1,\"max_tokens\":1}\n",
              "t.jsonl:1:1: no arrival time: expected exactly one of sched_ns", NULL);
    parse_bad("{\"t\":1,\"sched_ns\":1,\"prompt_tokens\":1,\"max_tokens\":1}\n",
              "t.jsonl:1:1: more than one arrival time", NULL);
    parse_bad(OKL "{\"t\":1,\"prompt_tokens\":1,\"max_tokens\":1}\n",
              "t.jsonl:2:6: t: expected sched_ns, as on line 1", NULL);
    parse_bad("{\"sched_ns\":1.5,\"prompt_tokens\":1,\"max_tokens\":1}\n",
              "t.jsonl:1:13: sched_ns: expected a whole number of nanoseconds in [0, ", "got 1.5");
    parse_bad("{\"sched_ns\":-1,\"prompt_tokens\":1,\"max_tokens\":1}\n",
              "t.jsonl:1:13: sched_ns: expected a whole number", "got -1");
    parse_bad("{\"t\":\"5s\",\"prompt_tokens\":1,\"max_tokens\":1}\n",
              "t.jsonl:1:6: t: expected seconds from the trace start", "got \"5s\"");
    parse_bad("{\"t\":-0.5,\"prompt_tokens\":1,\"max_tokens\":1}\n",
              "t.jsonl:1:6: t: expected seconds", NULL);
    parse_bad(OKL "{\"sched_ns\":5,\"prompt_tokens\":1,\"max_tokens\":0}\n",
              "t.jsonl:2:46: max_tokens: expected a whole number in [1, 100000000]",
              "got 0");
    parse_bad("{\"sched_ns\":5,\"prompt_tokens\":0,\"max_tokens\":1}\n",
              "t.jsonl:1:31: prompt_tokens: expected a whole number in [1, 100000000]",
              "got 0");
    parse_bad("{\"sched_ns\":5,\"prompt_tokens\":100000001,\"max_tokens\":1}\n",
              "prompt_tokens: expected a whole number in [1, 100000000]", NULL);
    parse_bad("{\"sched_ns\":5,\"max_tokens\":1}\n",
              "t.jsonl:1:1: prompt_tokens: missing", NULL);
    parse_bad("{\"sched_ns\":5,\"prompt_tokens\":1}\n",
              "t.jsonl:1:1: max_tokens: missing: expected exactly one of max_tokens and "
              "output_tokens", NULL);
    parse_bad("{\"sched_ns\":5,\"prompt_tokens\":1,\"max_tokens\":1,\"output_tokens\":1}\n",
              "output_tokens: given with max_tokens", NULL);
    parse_bad("{\"sched_ns\":5,\"prompt_tokens\":9,\"max_tokens\":1,\"prefix_id\":1}\n",
              "prefix_tokens: missing: prefix_id and prefix_tokens go together", NULL);
    parse_bad("{\"sched_ns\":5,\"prompt_tokens\":9,\"max_tokens\":1,\"prefix_id\":1,"
              "\"prefix_tokens\":10}\n",
              "t.jsonl:1:78: prefix_tokens: expected at most prompt_tokens (9), got 10", NULL);
    parse_bad("{\"sched_ns\":5,\"prompt_tokens\":9,\"max_tokens\":1,\"prefix_id\":-1,"
              "\"prefix_tokens\":1}\n",
              "prefix_id: expected a whole number in [0, 4294967295]", NULL);
    parse_bad("{\"sched_ns\":5,\"prompt_tokens\":9,\"max_tokens\":1,\"class\":\"a b\"}\n",
              "t.jsonl:1:56: class: expected a name", NULL);
    parse_bad("{\"sched_ns\":5,\"prompt_tokens\":9,\"max_tokens\":1,\"session_id\":\"s1\"}\n",
              "session_id: expected a whole number in [0, 9223372036854775807]", NULL);
    /* Past the top, the message gives the range, not a bare ">= 0". */
    parse_bad("{\"sched_ns\":5000000000000000000,\"prompt_tokens\":1,\"max_tokens\":1}\n",
              "sched_ns: expected a whole number of nanoseconds in [0, 4611686018427387904], "
              "got 5000000000000000000",
              NULL);
    parse_bad("{\"t\":5e9,\"prompt_tokens\":1,\"max_tokens\":1}\n",
              "t: expected seconds from the trace start, in [0, 4.6e9], got 5e9", NULL);
    parse_bad("{\"timestamp\":2e11,\"prompt_tokens\":1,\"max_tokens\":1}\n",
              "timestamp: expected absolute seconds in [0, 1e11]", NULL);
    parse_bad("{\"sched_ns\":5,\"prompt_tokens\":9,\"max_tokens\":1,\"cancel_after_ns\":2.5}\n",
              "cancel_after_ns: expected a whole number of nanoseconds", NULL);
    parse_bad("{\"sched_ns\":5,\"max_tokens\":1,\"prompt\":\"a\\u0000b\"}\n",
              "prompt: expected text without NUL", NULL);
    /* The parent accepted the pair beside a text and ignored it. */
    parse_bad("{\"sched_ns\":5,\"max_tokens\":1,\"prompt\":\"hi\",\"prefix_id\":1,"
              "\"prefix_tokens\":1}\n",
              "t.jsonl:1:56: prefix_id: given with a \"prompt\" text, which is sent as it is",
              NULL);
    parse_bad("{\"sched_ns\":5,\"max_tokens\":1,\"prompt\":7}\n",
              "prompt: expected a string", NULL);
    parse_bad("{\"sched_ns\":5,\"max_tokens\":1,\"prompt\":\"\"}\n",
              "t.jsonl:1:39: prompt: expected a non-empty string (a prompt of at least 1 token), "
              "got \"\"",
              NULL);
    parse_bad("{\"index\":0,\"sched_ns\":0,\"prompt_tokens\":1,\"max_tokens\":1}\n" OKL, "t.jsonl:2:1: index: missing, but line 1 has one",
              NULL);
    parse_bad(OKL "{\"index\":1,\"sched_ns\":0,\"prompt_tokens\":1,\"max_tokens\":1}\n",
              "t.jsonl:2:10: index: given, but line 1 has none", NULL);
    parse_bad("{\"index\":3,\"sched_ns\":0,\"prompt_tokens\":1,\"max_tokens\":1}\n"
              "{\"index\":4,\"sched_ns\":1,\"prompt_tokens\":1,\"max_tokens\":1}\n"
              "{\"index\":3,\"sched_ns\":2,\"prompt_tokens\":1,\"max_tokens\":1}\n",
              "t.jsonl:3: index: 3 repeats line 1's", NULL);
    /* Timestamps go to 1e11 s, but nanoseconds after the earliest only to
     * 2^62 (4.6e9 s): a wider span is refused, naming both lines, where
     * the parent's llround overflowed silently. */
    parse_bad("{\"timestamp\":99000000000,\"prompt_tokens\":1,\"max_tokens\":1}\n"
              "{\"timestamp\":1000,\"prompt_tokens\":1,\"max_tokens\":1}\n",
              "t.jsonl:1: timestamp: 98999999000 s after the earliest (line 2): expected at "
              "most 4.6e+09 s after it",
              NULL);

    char err[256];
    struct trace *t = (struct trace *)1;
    int rc = trace_load("/nonexistent/t.jsonl", &t, err, sizeof(err));
    assert_load_missing(rc, t, err, "/nonexistent/t.jsonl");
}

/* What a replay offers: three lines at 0, 0.2 and 0.9 s are two gaps
 * over 0.9 s, 2.22/s (the parent counted every line, 3 / 0.9 s = 3.33,
 * high by one arrival in three); --requests 2 the first two, one gap of
 * 0.2 s, 5/s; --duration 0.5 s cuts the third, whose time is past it, so
 * the offering spans the 0.5 s and its 2 lines over that fixed time are
 * 4/s; one request at 0 has no span (0); x2 offsets halve the rate. Five
 * lines 0.1 s apart are 10/s (the parent: 5 / 0.4 s = 12.50). */
static void test_offered_rate(void **state)
{
    struct trace *t = parse_ok("{\"sched_ns\":0,\"prompt_tokens\":1,\"max_tokens\":1}\n"
                               "{\"sched_ns\":200000000,\"prompt_tokens\":1,\"max_tokens\":1}\n"
                               "{\"sched_ns\":900000000,\"prompt_tokens\":1,\"max_tokens\":1}\n");
    const struct {
        double factor;
        uint64_t requests, duration_ns;
        size_t n;
        double rate;
    } c[] = {
        {1, 0, 0, 3, 2 / 0.9}, {1, 2, 0, 2, 5},
        {1, 5, 0, 3, 2 / 0.9}, {1, 0, 500000000, 2, 4},
        {1, 1, 0, 1, 0},       {1, 2, 500000000, 2, 5},
        {2, 0, 0, 3, 2 / 1.8}, {1, 0, 900000001, 3, 2 / 0.9},
    };
    for (size_t i = 0; i < sizeof c / sizeof c[0]; i++) {
        assert_int_equal(replay_offered_count(t, c[i].factor, c[i].requests, c[i].duration_ns),
                         c[i].n);
        double r = replay_offered_rate(t, c[i].factor, c[i].requests, c[i].duration_ns);
        if (fabs(r - c[i].rate) > 1e-9)
            fail_msg("case %zu: rate %.9g, expected %.9g", i, r, c[i].rate);
    }
    trace_free(t);
    t = parse_ok("{\"sched_ns\":0,\"prompt_tokens\":1,\"max_tokens\":1}\n"
                 "{\"sched_ns\":100000000,\"prompt_tokens\":1,\"max_tokens\":1}\n"
                 "{\"sched_ns\":200000000,\"prompt_tokens\":1,\"max_tokens\":1}\n"
                 "{\"sched_ns\":300000000,\"prompt_tokens\":1,\"max_tokens\":1}\n"
                 "{\"sched_ns\":400000000,\"prompt_tokens\":1,\"max_tokens\":1}\n");
    ASSERT_NEAR(replay_offered_rate(t, 1, 0, 0), 10, 1e-9);
    trace_free(t);
}

/* A dumped class's api and ignore_eos load back and reach the request; a
 * line without them takes the replay's (the parent refused both fields,
 * and the replay sent every class to --api with --ignore-eos). */
static void test_api_and_ignore_eos(void **state)
{
    (void)state;
    struct trace *t = parse_ok(
        "{\"sched_ns\":0,\"prompt_tokens\":5,\"max_tokens\":2,\"class\":\"s\","
        "\"api\":\"completions\",\"ignore_eos\":false}\n"
        "{\"sched_ns\":1,\"prompt_tokens\":5,\"max_tokens\":2,\"api\":\"anthropic-messages\","
        "\"ignore_eos\":true}\n"
        "{\"sched_ns\":2,\"prompt_tokens\":5,\"max_tokens\":2}\n");
    struct req_spec sp;
    replay_spec(t, 0, 1, NULL, &sp);
    assert_int_equal(sp.api, OAI_API_COMPLETIONS);
    assert_int_equal(sp.ignore_eos, 0);
    replay_spec(t, 1, 0, NULL, &sp);
    assert_int_equal(sp.api, OAI_API_ANTHROPIC);
    assert_int_equal(sp.ignore_eos, 1);
    replay_spec(t, 2, 1, NULL, &sp);
    assert_int_equal(sp.api, -1);
    assert_int_equal(sp.ignore_eos, 1);
    trace_free(t);
    parse_bad("{\"sched_ns\":0,\"prompt_tokens\":5,\"max_tokens\":2,\"api\":\"grpc\"}\n",
              "t.jsonl:1:54: api: expected \"chat\", \"completions\", \"anthropic-messages\" or "
              "\"openai-responses\" (openai-embeddings is the replay's --api), got \"grpc\"",
              NULL);
    parse_bad(
        "{\"sched_ns\":0,\"prompt_tokens\":5,\"max_tokens\":2,\"api\":\"openai-embeddings\"}\n",
        "api: expected", "got \"openai-embeddings\"");
    parse_bad("{\"sched_ns\":0,\"prompt_tokens\":5,\"max_tokens\":2,\"ignore_eos\":1}\n",
              "t.jsonl:1:61: ignore_eos: expected true or false, got 1", NULL);
}

UNIT_TESTS(test_dump_schedule_roundtrip, test_all_fields, test_sorting_and_escapes,
           test_timestamp_rebase_and_scale, test_errors, test_bom, test_records, test_whole_number,
           test_integral_floats, test_offered_rate, test_api_and_ignore_eos)
