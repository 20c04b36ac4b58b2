/* Unit tests for slo.c: the --slo spec's parser and its refusals, the
 * canonical spec written back (run.json, steps.jsonl and the findings
 * carry it, and `llmload report` judges again by what it reads), and
 * whether a request met the thresholds. */
#include "test.h"
#include "testutil.h"

#include <string.h>

#include "measure/record.h"
#include "measure/slo.h"
#include "util/util.h"

#define US 1000ULL
#define MS 1000000ULL
#define SEC 1000000000ULL

/* slo_parse of in into ctx, a struct slo. */
static int parse_slo(void *ctx, const char *in, char *err, size_t errlen)
{
    return slo_parse(in, ctx, err, errlen);
}

static void test_slo_parse(void **state)
{
    (void)state;
    struct slo s;
    char err[200];
    assert_int_equal(slo_parse("ttft=500ms,tpot=50ms,e2e=20s", &s, err, sizeof err), 0);
    assert_int_equal(s.ttft_ns, 500 * MS);
    assert_int_equal(s.tpot_ns, 50 * MS);
    assert_int_equal(s.e2e_ns, 20 * SEC);
    /* Any one threshold alone. */
    assert_int_equal(slo_parse("tpot=40ms", &s, err, sizeof err), 0);
    assert_int_equal(s.tpot_ns, 40 * MS);
    assert_int_equal(s.ttft_ns, 0);
    assert_false(slo_is_set(&(struct slo){0}));
    assert_true(slo_is_set(&s));
    /* Blanks around items and '=' as a user types a list (the parent:
     * unknown threshold " tpot"). */
    assert_int_equal(slo_parse(" ttft = 500ms, tpot=50ms ,\te2e=2s", &s, err, sizeof err), 0);
    assert_int_equal(s.ttft_ns, 500 * MS);
    assert_int_equal(s.tpot_ns, 50 * MS);
    assert_int_equal(s.e2e_ns, 2 * SEC);
    assert_int_equal(slo_parse("ttft=1s\n", &s, err, sizeof err), 0); /* $(cat file) kept its \n */
    assert_int_equal(s.ttft_ns, 1 * SEC);

    static const struct bad_input bad[] = {
        {"", "expected ttft=DUR,tpot=DUR,e2e=DUR (any of them), got \"\""},
        {"ttft", "expected NAME=DURATION, got \"ttft\""},
        {"ttfb=1s", "unknown threshold \"ttfb\" (expected ttft, tpot or e2e)"},
        {"ttft=1s,ttft=2s", "ttft given twice in \"ttft=1s,ttft=2s\""},
        {"ttft=0", "ttft: expected a positive duration (e.g. 500ms, 2s), got \"0\""},
        {"e2e=-1s", "e2e: expected a positive duration (e.g. 500ms, 2s), got \"-1s\""},
        /* a bare number: read as ms, where a duration elsewhere reads
         * it as seconds (the parent took 500 ms) */
        {"ttft=500", "ttft: \"500\" has no unit (500ms or 500s?); give one: 500ms, 2s"},
        {"e2e=1.5", "e2e: \"1.5\" has no unit (1.5ms or 1.5s?); give one: 500ms, 2s"},
        {"ttft=1s,", "a trailing comma in \"ttft=1s,\""},
        {"ttft=1s, ", "a trailing comma in \"ttft=1s, \""},
        {"ttft=1s, ,e2e=2s", "expected NAME=DURATION between commas in \"ttft=1s, ,e2e=2s\""},
        {"tt ft=1s", "unknown threshold \"tt ft\" (expected ttft, tpot or e2e)"},
        {"ttft=1s,,e2e=2s", "expected NAME=DURATION between commas in \"ttft=1s,,e2e=2s\""},
        /* a control byte, quoted as one printable line (a trailing newline,
         * white space around the item, is no longer part of it) */
        {"ttft=1s\x01", "ttft: expected a positive duration (e.g. 500ms, 2s), got \"1s?\""},
    };
    test_refusals(parse_slo, &s, LL_E_INVAL, bad, LL_ARRAY_LEN(bad));
}

/* Each threshold is written in the largest unit that keeps it whole, and
 * reads back to itself: a threshold under a microsecond, or not a whole
 * number of them, was written in us, cut (500 ns as "0us", which does not
 * parse; 1000.5 us as "1000us", which judges by another threshold). */
static void test_slo_format_round_trip(void **state)
{
    (void)state;
    static const struct {
        struct slo s;
        const char *text;
    } cases[] = {
        {{500 * MS, 50 * MS, 20 * SEC}, "ttft=500ms,tpot=50ms,e2e=20s"},
        {{0, 0, 2 * SEC}, "e2e=2s"},
        {{1500 * US, 0, 0}, "ttft=1500us"},
        {{500, 0, 0}, "ttft=500ns"},
        {{1000500, 12500, 61 * SEC + 1}, "ttft=1000500ns,tpot=12500ns,e2e=61000000001ns"},
        {{0, 0, 0}, ""},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        char buf[128], err[200];
        slo_format(&cases[i].s, buf, sizeof buf);
        assert_string_equal(buf, cases[i].text);
        if (!slo_is_set(&cases[i].s))
            continue;
        struct slo back;
        if (slo_parse(buf, &back, err, sizeof err) != 0)
            fail_msg("\"%s\" does not read back: %s", buf, err);
        assert_int_equal(back.ttft_ns, cases[i].s.ttft_ns);
        assert_int_equal(back.tpot_ns, cases[i].s.tpot_ns);
        assert_int_equal(back.e2e_ns, cases[i].s.e2e_ns);
    }
}

/* An ok request of 10 output tokens: TTFT 100 ms, TPOT 20 ms, E2E 281 ms
 * from its schedule. */
static struct record ok_request(void)
{
    struct record r;
    record_init(&r, 1);
    r.kind = REC_OK;
    r.sched_ns = 1 * SEC;
    r.sent_ns = r.sched_ns + 1 * MS;
    r.first_ns = r.first_content_ns = r.sched_ns + 100 * MS;
    r.last_ns = r.first_ns + 9 * 20 * MS;
    r.end_ns = r.last_ns + 1 * MS;
    r.output_tokens = r.events = 10;
    return r;
}

static void test_slo_met(void **state)
{
    (void)state;
    struct record r = ok_request();
    /* Each threshold at the request's own figure is met, a ns under not. */
    assert_true(slo_met(&(struct slo){100 * MS, 20 * MS, 281 * MS}, &r));
    assert_false(slo_met(&(struct slo){100 * MS - 1, 0, 0}, &r));
    assert_false(slo_met(&(struct slo){0, 20 * MS - 1, 0}, &r));
    assert_false(slo_met(&(struct slo){0, 0, 281 * MS - 1}, &r));
    assert_true(slo_met(&(struct slo){0}, &r));
    /* No TPOT (one token) meets a TPOT threshold; a failed request meets
     * none, not even an empty SLO. */
    r.output_tokens = r.events = 1;
    r.last_ns = r.first_ns;
    assert_true(slo_met(&(struct slo){0, 1, 0}, &r));
    r = ok_request();
    r.kind = REC_HTTP_5XX;
    assert_false(slo_met(&(struct slo){0, 0, 10 * SEC}, &r));
    assert_false(slo_met(&(struct slo){0}, &r));
    /* No first token: a TTFT threshold is missed. */
    r = ok_request();
    r.first_ns = r.first_content_ns = LL_NO_TIME;
    assert_false(slo_met(&(struct slo){10 * SEC, 0, 0}, &r));
}

/* A request the client cancelled misses only what it had already missed
 * (docs/metrics.md, "Cancelled requests"); else the SLO does not judge it.
 * The ok request above, cancelled at its 281 ms end after its 10 tokens:
 * TTFT 100 ms, TPOT 20 ms. */
static void test_slo_judge_cancelled(void **state)
{
    (void)state;
    struct record r = ok_request();
    assert_int_equal(slo_judge(&(struct slo){100 * MS, 20 * MS, 0}, &r), 1);
    assert_int_equal(slo_judge(&(struct slo){99 * MS, 0, 0}, &r), 0);
    r.kind = REC_CANCELLED;
    /* Within every threshold so far, one of them TPOT or E2E, which only
     * the end decides: not judged, not met. */
    assert_int_equal(slo_judge(&(struct slo){100 * MS, 20 * MS, 0}, &r), SLO_UNJUDGED);
    assert_int_equal(slo_judge(&(struct slo){100 * MS, 0, 10 * SEC}, &r), SLO_UNJUDGED);
    assert_int_equal(slo_judge(&(struct slo){0, 0, 281 * MS}, &r), SLO_UNJUDGED);
    assert_int_equal(slo_judge(&(struct slo){0}, &r), SLO_UNJUDGED);
    /* TTFT alone, its first token in time: decided, met (it was left out
     * while a late first token counted, leaning attainment against the
     * server); goodput still counts ok requests alone. */
    assert_int_equal(slo_judge(&(struct slo){100 * MS, 0, 0}, &r), 1);
    assert_false(slo_met(&(struct slo){100 * MS, 0, 0}, &r));
    /* A first token after the threshold, a TPOT over it, an E2E threshold
     * passed before the cancellation: misses. */
    assert_int_equal(slo_judge(&(struct slo){100 * MS - 1, 0, 0}, &r), 0);
    assert_int_equal(slo_judge(&(struct slo){0, 20 * MS - 1, 0}, &r), 0);
    assert_int_equal(slo_judge(&(struct slo){0, 0, 281 * MS - 1}, &r), 0);
    /* No token before a cancellation 281 ms after its schedule: a TTFT
     * threshold under that passed with nothing, one over it might have
     * been met. */
    r.first_ns = r.first_content_ns = r.last_ns = LL_NO_TIME;
    r.output_tokens = r.events = 0;
    assert_int_equal(slo_judge(&(struct slo){200 * MS, 0, 0}, &r), 0);
    assert_int_equal(slo_judge(&(struct slo){300 * MS, 0, 0}, &r), SLO_UNJUDGED);
    assert_int_equal(slo_judge(&(struct slo){300 * MS, 1, 0}, &r), SLO_UNJUDGED);
    /* Any other failure is a miss, as before. */
    r = ok_request();
    r.kind = REC_TIMEOUT_TOTAL;
    assert_int_equal(slo_judge(&(struct slo){10 * SEC, 0, 0}, &r), 0);
    assert_int_equal(slo_judge_any(&(struct slo){10 * SEC, 0, 0}, 0, &r), 0);
}

UNIT_TESTS(test_slo_parse, test_slo_format_round_trip, test_slo_met, test_slo_judge_cancelled)
