/* test_stats.c: what each record adds to a stats, and that merging
 * per-worker stats equals one stats fed everything. */
#include "test.h"
#include "testutil.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "measure/record.h"
#include "measure/stats.h"
#include "util/util.h"

/* Histogram h holds count values, the least min and the greatest max (0
 * and 0 when empty). Macros, so that a failure names the caller's line. */
#define ASSERT_HIST(h, count, min, max)                                                            \
    do {                                                                                           \
        assert_int_equal(hist_count(h), (count));                                                  \
        assert_int_equal(hist_min(h), (min));                                                      \
        assert_int_equal(hist_max(h), (max));                                                      \
    } while (0)

/* h holds exactly one value, v. */
#define ASSERT_HIST_ONLY(h, v) ASSERT_HIST(h, 1, v, v)

/* The counters of struct stats a test names (EXPECT_FIELDS). */
#define STAT(f) TEST_FIELD(struct stats, f)
static const struct test_field stats_fields[] = {
    STAT(prompt_tokens),          STAT(output_tokens),
    STAT(output_tokens_failed),   STAT(events),
    STAT(cached_tokens),          STAT(cached_reported),
    STAT(prompt_mismatch),        STAT(prompt_usage_n),
    STAT(prompt_usage_requested), STAT(prompt_usage_server),
    STAT(ok_e2e_sum_ns),          STAT(all_e2e_sum_ns),
    STAT(all_e2e_count),          STAT(all_service_sum_ns),
    STAT(all_service_count),      STAT(retry_after_seen),
    STAT(retry_after_sum_ms),
};
#undef STAT

static struct record ok_record(uint64_t id, uint64_t sched_ns)
{
    struct record r;
    record_init(&r, id);
    r.http_status = 200;
    r.sched_ns = sched_ns;
    r.sent_ns = sched_ns + 1000;            /* client queue 1us */
    r.first_ns = sched_ns + 200000;         /* TTFT 200us */
    r.first_content_ns = sched_ns + 300000; /* TTFC 300us */
    r.last_ns = sched_ns + 1200000;         /* decode 1ms */
    r.end_ns = sched_ns + 1250000;          /* E2E 1.25ms */
    r.prompt_tokens = 100;
    r.output_tokens = 11;                   /* TPOT 100us */
    r.events = 6;                           /* ITL per request 200us */
    r.tokens_source = REC_TOKENS_USAGE;
    return r;
}

static void test_add_one_ok(void **state)
{
    struct stats s;
    stats_init(&s);
    struct record r = ok_record(0, 5000000);
    r.prompt_tokens_server = 103;
    r.cached_tokens = 64;
    stats_add_record(&s, &r);

    assert_int_equal(s.completed, 1);
    assert_int_equal(s.by_kind[REC_OK], 1);
    assert_int_equal(stats_failed(&s), 0);
    assert_int_equal(s.scheduled, 0); /* the driver's to count */
    ASSERT_HIST_ONLY(s.ttft, 200000);
    ASSERT_HIST_ONLY(s.ttft_server, 199000);
    ASSERT_HIST_ONLY(s.ttfc, 300000);
    ASSERT_HIST_ONLY(s.tpot, 100000);
    ASSERT_HIST_ONLY(s.itl_req, 200000);
    ASSERT_HIST_ONLY(s.e2e, 1250000);
    ASSERT_HIST_ONLY(s.client_queue, 1000);
    ASSERT_HIST(s.e2e_failed, 0, 0, 0);
    ASSERT_HIST(s.itl, 0, 0, 0);
    /* prompt_tokens: the server's count wins. */
    EXPECT_FIELDS("stats", &s, stats_fields,
                  "prompt_tokens=103;prompt_mismatch=1;prompt_usage_n=1;"
                  "prompt_usage_requested=100;prompt_usage_server=103;output_tokens=11;events=6;"
                  "cached_tokens=64;cached_reported=1;ok_e2e_sum_ns=1250000;"
                  "all_e2e_sum_ns=1250000;all_e2e_count=1;all_service_sum_ns=1249000;"
                  "all_service_count=1");
    assert_true(s.prompt_err_min == 0.03 && s.prompt_err_max == 0.03);
    assert_int_equal(s.tokens_source_count[REC_TOKENS_USAGE], 1);
    /* A second one counted under the requested 100, and one without a
     * count, which the check leaves out. */
    r.prompt_tokens_server = 90;
    stats_add_record(&s, &r);
    r.prompt_tokens_server = -1;
    stats_add_record(&s, &r);
    EXPECT_FIELDS("stats", &s, stats_fields,
                  "prompt_usage_n=2;prompt_usage_requested=200;prompt_usage_server=193");
    assert_true(s.prompt_err_min == -0.1 && s.prompt_err_max == 0.03);
    assert_int_equal(s.prompt_tokens, 293);
    stats_free(&s);
    stats_free(&s); /* twice is safe */
}

static void test_add_failures(void **state)
{
    struct stats s;
    stats_init(&s);

    /* A 429 answered fast: counts, its E2E goes to e2e_failed only, and its
     * short TTFT-like times must not improve the ok percentiles. */
    struct record r;
    record_init(&r, 1);
    r.kind = REC_HTTP_429;
    r.http_status = 429;
    r.sched_ns = 1000;
    r.sent_ns = 3000;
    r.end_ns = 9000;
    r.retry_after_ms = 1500;
    stats_add_record(&s, &r);

    /* A truncated stream with partial output. */
    struct record t = ok_record(2, 100000);
    t.kind = REC_STREAM_TRUNCATED;
    t.output_tokens = 4;
    stats_add_record(&s, &t);

    /* Dropped by the client: never sent, no E2E. */
    record_init(&r, 3);
    r.kind = REC_CLIENT_DROPPED;
    r.sched_ns = 50;
    stats_add_record(&s, &r);

    assert_int_equal(s.completed, 3);
    assert_int_equal(s.by_kind[REC_OK], 0);
    assert_int_equal(s.by_kind[REC_HTTP_429], 1);
    assert_int_equal(s.by_kind[REC_STREAM_TRUNCATED], 1);
    assert_int_equal(s.by_kind[REC_CLIENT_DROPPED], 1);
    assert_int_equal(stats_failed(&s), 3);
    ASSERT_HIST(s.ttft, 0, 0, 0);
    ASSERT_HIST(s.ttft_server, 0, 0, 0);
    ASSERT_HIST(s.tpot, 0, 0, 0);
    ASSERT_HIST(s.e2e, 0, 0, 0);
    ASSERT_HIST(s.e2e_failed, 2, 8000, 1250000);
    ASSERT_HIST(s.client_queue, 2, 1000, 2000); /* the two that were sent */
    /* all_e2e_sum_ns: 8000 + 1250000. */
    EXPECT_FIELDS("stats", &s, stats_fields,
                  "output_tokens=0;output_tokens_failed=4;prompt_tokens=0;retry_after_seen=1;"
                  "retry_after_sum_ms=1500;ok_e2e_sum_ns=0;all_e2e_sum_ns=1258000;"
                  "all_e2e_count=2;all_service_count=2");

    stats_add_itl_gap(&s, 700);
    stats_add_itl_gap(&s, 900);
    stats_add_lateness(&s, 12345);
    ASSERT_HIST(s.itl, 2, 700, 900);
    ASSERT_HIST_ONLY(s.lateness, 12345);

    stats_reset(&s);
    assert_int_equal(s.completed, 0);
    assert_int_equal(s.by_kind[REC_HTTP_429], 0);
    ASSERT_HIST(s.itl, 0, 0, 0);
    ASSERT_HIST(s.e2e_failed, 0, 0, 0);
    assert_non_null(s.ttft);
    stats_add_record(&s, &t);
    assert_int_equal(s.completed, 1);
    stats_free(&s);
}

/* A small deterministic generator, so the test needs no RNG module. */
static uint64_t lcg(uint64_t *x)
{
    *x = *x * 6364136223846793005ULL + 1442695040888963407ULL;
    return *x >> 33;
}

static struct record random_record(uint64_t id, uint64_t *seed)
{
    struct record r = ok_record(id, id * 1000000 + lcg(seed) % 1000);
    r.first_ns = r.sched_ns + 1000 + lcg(seed) % 50000000;
    r.first_content_ns = r.first_ns + lcg(seed) % 1000;
    r.last_ns = r.first_ns + lcg(seed) % 2000000000;
    r.end_ns = r.last_ns + lcg(seed) % 100000;
    r.output_tokens = lcg(seed) % 300;
    r.events = r.output_tokens / 2;
    r.prompt_tokens = (uint32_t)(lcg(seed) % 4000);
    r.tokens_source = (enum rec_tokens_source)(lcg(seed) % 3);
    if (lcg(seed) % 4 == 0)
        r.prompt_tokens_server = (int64_t)(lcg(seed) % 4000);
    if (lcg(seed) % 5 == 0)
        r.cached_tokens = (int64_t)(lcg(seed) % 100);
    static const char *const reasons[] = {
        "",    "stop",       "length", "tool_calls",     "content_filter",
        "eos", "max_tokens", "x",      "0123456789abcde"};
    snprintf(r.finish_reason, sizeof r.finish_reason, "%s",
             reasons[lcg(seed) % LL_ARRAY_LEN(reasons)]);
    r.max_tokens = (uint32_t)(lcg(seed) % 400);
    r.ignore_eos = lcg(seed) % 2 == 0;
    if (lcg(seed) % 7 == 0) {
        r.kind = (enum rec_kind)(1 + lcg(seed) % (REC_KIND_COUNT - 1));
        r.retry_after_ms = r.kind == REC_HTTP_429 ? 1000 : -1;
    }
    return r;
}

static void assert_hist_equal(const struct hist *a, const struct hist *b)
{
    char *sa = hist_to_string(a);
    char *sb = hist_to_string(b);
    assert_string_equal(sa, sb);
    free(sa);
    free(sb);
}

static void test_merge_equals_single(void **state)
{
    enum { WORKERS = 3, N = 3000 };
    struct stats one, part[WORKERS], total;
    stats_init(&one);
    stats_init(&total);
    for (int w = 0; w < WORKERS; w++)
        stats_init(&part[w]);

    uint64_t seed = 42;
    for (uint64_t i = 0; i < N; i++) {
        struct record r = random_record(i, &seed);
        uint64_t gap = lcg(&seed) % 90000000;
        uint64_t late = lcg(&seed) % 1000000;
        struct stats *p = &part[i % WORKERS];
        one.scheduled++;
        p->scheduled++;
        if (r.kind != REC_CLIENT_DROPPED) {
            one.sent++;
            p->sent++;
        }
        stats_add_record(&one, &r);
        stats_add_record(p, &r);
        stats_add_itl_gap(&one, gap);
        stats_add_itl_gap(p, gap);
        stats_add_lateness(&one, late);
        stats_add_lateness(p, late);
    }
    for (int w = 0; w < WORKERS; w++)
        stats_merge(&total, &part[w]);

    assert_int_equal(total.scheduled, N);
    assert_int_equal(total.scheduled, one.scheduled);
    assert_int_equal(total.sent, one.sent);
    assert_int_equal(total.completed, N);
    uint64_t kinds = 0;
    for (int k = 0; k < REC_KIND_COUNT; k++) {
        assert_int_equal(total.by_kind[k], one.by_kind[k]);
        kinds += total.by_kind[k];
    }
    assert_int_equal(kinds, N);
    assert_true(stats_failed(&total) > 0 && total.by_kind[REC_OK] > 0);
    assert_hist_equal(total.ttft, one.ttft);
    assert_hist_equal(total.ttft_server, one.ttft_server);
    assert_hist_equal(total.ttfc, one.ttfc);
    assert_hist_equal(total.itl, one.itl);
    assert_hist_equal(total.itl_req, one.itl_req);
    assert_hist_equal(total.tpot, one.tpot);
    assert_hist_equal(total.e2e, one.e2e);
    assert_hist_equal(total.e2e_failed, one.e2e_failed);
    assert_hist_equal(total.client_queue, one.client_queue);
    assert_hist_equal(total.lateness, one.lateness);
    assert_int_equal(total.prompt_tokens, one.prompt_tokens);
    assert_int_equal(total.output_tokens, one.output_tokens);
    assert_int_equal(total.output_tokens_failed, one.output_tokens_failed);
    assert_int_equal(total.events, one.events);
    assert_int_equal(total.cached_tokens, one.cached_tokens);
    assert_int_equal(total.cached_reported, one.cached_reported);
    assert_int_equal(total.prompt_mismatch, one.prompt_mismatch);
    assert_true(one.prompt_usage_n > 0);
    assert_int_equal(total.prompt_usage_n, one.prompt_usage_n);
    assert_int_equal(total.prompt_usage_requested, one.prompt_usage_requested);
    assert_int_equal(total.prompt_usage_server, one.prompt_usage_server);
    assert_true(total.prompt_err_min == one.prompt_err_min);
    assert_true(total.prompt_err_max == one.prompt_err_max);
    assert_true(one.prompt_err_min < one.prompt_err_max);
    assert_int_equal(total.ok_e2e_sum_ns, one.ok_e2e_sum_ns);
    assert_int_equal(total.all_e2e_sum_ns, one.all_e2e_sum_ns);
    assert_int_equal(total.all_e2e_count, one.all_e2e_count);
    assert_int_equal(total.all_service_sum_ns, one.all_service_sum_ns);
    assert_int_equal(total.all_service_count, one.all_service_count);
    for (int i = 0; i < 3; i++)
        assert_int_equal(total.tokens_source_count[i], one.tokens_source_count[i]);
    assert_int_equal(total.retry_after_seen, one.retry_after_seen);
    assert_int_equal(total.retry_after_sum_ms, one.retry_after_sum_ms);
    /* The same reasons with the same counts, whatever order each met them. */
    uint64_t by_reason = 0;
    for (size_t i = 0; i < STATS_FINISH_NAMES; i++) {
        assert_true(one.finish_name[i][0] != '\0');
        size_t j = 0;
        while (j < STATS_FINISH_NAMES && strcmp(total.finish_name[j], one.finish_name[i]) != 0)
            j++;
        if (j == STATS_FINISH_NAMES)
            fail_msg("reason %s is not in the merged stats", one.finish_name[i]);
        assert_int_equal(total.finish_count[j], one.finish_count[i]);
        by_reason += one.finish_count[i];
    }
    assert_int_equal(total.finish_other, 0);
    assert_int_equal(one.finish_other, 0);
    assert_int_equal(total.finish_none, one.finish_none);
    assert_int_equal(by_reason + one.finish_none, one.by_kind[REC_OK]);
    assert_int_equal(total.cut_short, one.cut_short);
    assert_int_equal(total.cut_short_unjudged, one.cut_short_unjudged);
    assert_true(one.cut_short > 0);
    /* Every random ok record has a first_ns, so each gave one TTFT. */
    assert_int_equal(hist_count(total.ttft), total.by_kind[REC_OK]);

    /* The sum of ok E2E recomputed from scratch. */
    uint64_t e2e_sum = 0, cut = 0, unjudged = 0;
    seed = 42;
    for (uint64_t i = 0; i < N; i++) {
        struct record r = random_record(i, &seed);
        lcg(&seed);
        lcg(&seed);
        if (r.kind != REC_OK)
            continue;
        e2e_sum += r.end_ns - r.sched_ns;
        unjudged += r.tokens_source == REC_TOKENS_EVENTS;
        cut += r.tokens_source != REC_TOKENS_EVENTS && r.output_tokens < r.max_tokens &&
               (r.ignore_eos || strcmp(r.finish_reason, "length") == 0 ||
                strcmp(r.finish_reason, "max_tokens") == 0);
    }
    assert_int_equal(total.ok_e2e_sum_ns, e2e_sum);
    assert_int_equal(total.cut_short, cut);
    assert_int_equal(total.cut_short_unjudged, unjudged);

    for (int w = 0; w < WORKERS; w++)
        stats_free(&part[w]);
    stats_free(&one);
    stats_free(&total);
}

/* A window's counts tallied in two spans, [from, cut] with
 * stats_account_met and (cut, end] with stats_account_window into a
 * zeroed struct, add up (stats_merge_window) to one tally over [from,
 * end]: the driver's split at --duration, joined when a count ended the
 * offering first. Records straddle the cut (sent before, ended after). */
static void test_window_split_joins(void **state)
{
    (void)state;
    enum { N = 2000 };
    const uint64_t from = 50000000, cut = 900000000;
    struct stats one, before, after;
    stats_init(&one);
    stats_init(&before);
    memset(&after, 0, sizeof after); /* never stats_init'd, as the driver's */
    uint64_t seed = 7;
    for (uint64_t i = 0; i < N; i++) {
        struct record r = random_record(i, &seed);
        int met = (int)(lcg(&seed) % 3) - 1; /* SLO_UNJUDGED (-1), 0, 1 */
        stats_account_met(&one, &r, from, UINT64_MAX, met);
        stats_account_met(&before, &r, from, cut, met);
        stats_account_window(&after, &r, cut + 1, UINT64_MAX, met);
    }
    /* the premise: both spans hold sends and completions */
    assert_true(before.win_sent > 0 && after.win_sent > 0);
    assert_true(before.win_completed > 0 && after.win_completed > 0);
    assert_true(before.win_slo_met > 0 && after.win_slo_met > 0);
    stats_merge_window(&before, &after);
    const uint64_t got[] = {before.win_sent,          before.win_request_bytes,
                            before.win_completed,     before.win_ok,
                            before.win_dropped,       before.win_slo_met,
                            before.win_prompt_tokens, before.win_output_tokens,
                            before.win_inputs};
    const uint64_t want[] = {
        one.win_sent,    one.win_request_bytes, one.win_completed,     one.win_ok,
        one.win_dropped, one.win_slo_met,       one.win_prompt_tokens, one.win_output_tokens,
        one.win_inputs};
    for (size_t k = 0; k < LL_ARRAY_LEN(got); k++)
        assert_int_equal(got[k], want[k]);
    stats_free(&one);
    stats_free(&before);
}

/* What is cut short: an ok output with fewer tokens than max_tokens by the
 * server's count, under ignore_eos or when the server said "length". */
static void test_cut_short(void **state)
{
    struct record r = ok_record(1, 1000);
    r.max_tokens = 64;
    r.output_tokens = 40;
    assert_int_equal(stats_cut_short(&r), 0); /* stopped by itself (no reason said) */
    snprintf(r.finish_reason, sizeof r.finish_reason, "stop");
    assert_int_equal(stats_cut_short(&r), 0); /* the model's own end */
    r.ignore_eos = 1;
    assert_int_equal(stats_cut_short(&r), 1); /* but it was asked for 64 */
    r.ignore_eos = 0;
    snprintf(r.finish_reason, sizeof r.finish_reason, "length");
    assert_int_equal(stats_cut_short(&r), 1); /* a limit below max_tokens: the context */
    r.tokens_source = REC_TOKENS_CHUNK_USAGE;
    assert_int_equal(stats_cut_short(&r), 1);
    r.tokens_source = REC_TOKENS_EVENTS;
    assert_int_equal(stats_cut_short(&r), 0); /* events may carry several tokens each */
    r.tokens_source = REC_TOKENS_USAGE;
    r.output_tokens = 64;
    assert_int_equal(stats_cut_short(&r), 0); /* all of it */
    r.output_tokens = 65;
    assert_int_equal(stats_cut_short(&r), 0);
    r.output_tokens = 0;
    assert_int_equal(stats_cut_short(&r), 1);
    r.kind = REC_STREAM_TRUNCATED;
    assert_int_equal(stats_cut_short(&r), 0); /* a failure is counted as one, not here */
    r.kind = REC_OK;
    r.max_tokens = 0;
    assert_int_equal(stats_cut_short(&r), 0); /* no cap known */

    /* Counted over ok records only, with the reasons in the order met. */
    struct stats s;
    stats_init(&s);
    r = ok_record(2, 1000);
    r.max_tokens = 64;
    r.output_tokens = 20;
    snprintf(r.finish_reason, sizeof r.finish_reason, "length");
    stats_add_record(&s, &r);
    r.kind = REC_TIMEOUT_IDLE;
    stats_add_record(&s, &r);
    r.kind = REC_OK;
    r.output_tokens = 64;
    stats_add_record(&s, &r);
    snprintf(r.finish_reason, sizeof r.finish_reason, "stop");
    r.output_tokens = 10;
    stats_add_record(&s, &r);
    r.finish_reason[0] = '\0';
    r.tokens_source = REC_TOKENS_EVENTS;
    stats_add_record(&s, &r);
    assert_string_equal(s.finish_name[0], "length");
    assert_int_equal(s.finish_count[0], 2);
    assert_string_equal(s.finish_name[1], "stop");
    assert_int_equal(s.finish_count[1], 1);
    assert_string_equal(s.finish_name[2], "");
    assert_int_equal(s.finish_none, 1);
    assert_int_equal(s.finish_other, 0);
    assert_int_equal(s.cut_short, 1);
    assert_int_equal(s.cut_short_unjudged, 1);
    stats_reset(&s);
    assert_int_equal(s.cut_short, 0);
    assert_string_equal(s.finish_name[0], "");
    stats_free(&s);
}

/* Which finish reasons say a token limit ended the output, each API's
 * documented values: chat and completions, Anthropic's stop_reason, the
 * Responses API's status with incomplete_details' reason. */
static void test_finish_by_length(void **state)
{
    (void)state;
    static const char *const limit[] = {"length", "max_tokens", "model_context_window_exceeded",
                                        "incomplete:max_output_tokens"};
    static const char *const other[] = {"",
                                        "stop",
                                        "tool_calls",
                                        "content_filter",
                                        "function_call",
                                        "end_turn",
                                        "stop_sequence",
                                        "tool_use",
                                        "pause_turn",
                                        "refusal",
                                        "completed",
                                        "incomplete",
                                        "incomplete:content_filter",
                                        "LENGTH",
                                        "length ",
                                        "max_token",
                                        "incomplete:max_output_token"};
    for (size_t i = 0; i < LL_ARRAY_LEN(limit); i++)
        assert_int_equal(stats_finish_by_length(limit[i]), 1);
    for (size_t i = 0; i < LL_ARRAY_LEN(other); i++)
        assert_int_equal(stats_finish_by_length(other[i]), 0);

    /* Each is cut short below max_tokens: Anthropic's 200 of 300, say. */
    for (size_t i = 0; i < LL_ARRAY_LEN(limit); i++) {
        struct record r = ok_record(1, 1000);
        r.max_tokens = 300;
        r.output_tokens = 200;
        snprintf(r.finish_reason, sizeof r.finish_reason, "%s", limit[i]);
        assert_string_equal(r.finish_reason, limit[i]); /* kept whole */
        assert_int_equal(stats_cut_short(&r), 1);
        r.output_tokens = 300;
        assert_int_equal(stats_cut_short(&r), 0);
    }
}

/* Past STATS_FINISH_NAMES distinct reasons the rest count as other; a
 * reason that fills its REC_FINISH_REASON_MAX bytes without a NUL is read to its end. */
static void test_finish_overflow(void **state)
{
    struct stats s, m;
    stats_init(&s);
    stats_init(&m);
    struct record r = ok_record(1, 1000);
    for (int i = 0; i < STATS_FINISH_NAMES + 3; i++) {
        snprintf(r.finish_reason, sizeof r.finish_reason, "r%d", i);
        stats_add_record(&s, &r);
        stats_add_record(&s, &r);
    }
    assert_int_equal(s.finish_other, 6);
    assert_string_equal(s.finish_name[STATS_FINISH_NAMES - 1], "r7");
    assert_int_equal(s.finish_count[STATS_FINISH_NAMES - 1], 2);
    memset(r.finish_reason, 'q', sizeof r.finish_reason);
    stats_add_record(&m, &r);
    assert_int_equal(strlen(m.finish_name[0]), REC_FINISH_REASON_MAX - 1);
    /* Merged into a full table, a new reason is other too. */
    stats_merge(&s, &m);
    assert_int_equal(s.finish_other, 7);
    stats_merge(&m, &s);
    assert_int_equal(m.finish_count[0], 1);
    assert_int_equal(m.finish_other, 7 + 2 * 1);
    stats_free(&s);
    stats_free(&m);
}

/* The sample per failed kind: the first detail each stats saw, made
 * printable and cut to 100 bytes; a merge keeps dst's and fills only the
 * kinds dst lacks; ok records leave none. */
static void test_samples(void **state)
{
    struct stats a, b;
    stats_init(&a);
    stats_init(&b);
    struct record r;
    record_init(&r, 1);
    r.kind = REC_HTTP_4XX;
    snprintf(r.detail, sizeof r.detail, "HTTP 400: too\x01long\x7f\xc3\xa9");
    stats_add_record(&a, &r);
    snprintf(r.detail, sizeof r.detail, "HTTP 400: the second");
    stats_add_record(&a, &r);
    assert_string_equal(a.sample[REC_HTTP_4XX], "HTTP 400: too?long???");

    record_init(&r, 2);
    r.kind = REC_HTTP_5XX;
    memset(r.detail, 'x', sizeof r.detail - 1);
    r.detail[sizeof r.detail - 1] = '\0';
    stats_add_record(&b, &r);
    record_init(&r, 3);
    r.kind = REC_HTTP_4XX;
    snprintf(r.detail, sizeof r.detail, "HTTP 400: from b");
    stats_add_record(&b, &r);
    record_init(&r, 4);
    stats_add_record(&b, &r); /* ok: no sample */
    assert_string_equal(b.sample[REC_OK], "");

    stats_merge(&a, &b);
    assert_string_equal(a.sample[REC_HTTP_4XX], "HTTP 400: too?long???");
    assert_int_equal(strlen(a.sample[REC_HTTP_5XX]), STATS_SAMPLE_MAX);
    assert_memory_equal(a.sample[REC_HTTP_5XX] + STATS_SAMPLE_MAX - 4, "x...", 4);
    assert_string_equal(a.sample[REC_OK], "");
    stats_reset(&a);
    assert_string_equal(a.sample[REC_HTTP_4XX], "");
    stats_free(&a);
    stats_free(&b);
}

/* The ok sends later than STATS_LATE_KEPT_NS, one by one, for the
 * verdict: an ok record 2 ms late is kept with its measured TTFT and E2E;
 * one 1 ms late (not later than the floor), a failed one 3 ms late and
 * one with no late_ns are not. Merging appends, and counts past
 * STATS_LATE_SENDS without keeping. */
static void test_late_sends(void **state)
{
    (void)state;
    struct stats a, b;
    stats_init(&a);
    stats_init(&b);
    struct record r = ok_record(0, 10000000);
    r.late_ns = 2000000;
    stats_add_record(&a, &r);
    r.late_ns = STATS_LATE_KEPT_NS;
    stats_add_record(&a, &r);
    r.late_ns = LL_NO_TIME;
    stats_add_record(&a, &r);
    r.kind = REC_HTTP_5XX;
    r.late_ns = 3000000;
    stats_add_record(&a, &r);
    assert_int_equal(a.n_late_ok, 1);
    assert_int_equal(a.late_ok[0].ttft_ns, 200000);
    assert_int_equal(a.late_ok[0].e2e_ns, 1250000);
    assert_int_equal(a.late_ok[0].late_ns, 2000000);

    r = ok_record(1, 0);
    for (int i = 0; i < STATS_LATE_SENDS; i++) {
        r.late_ns = 1500000 + (uint64_t)i;
        stats_add_record(&b, &r);
    }
    assert_int_equal(b.n_late_ok, STATS_LATE_SENDS);
    stats_merge(&a, &b);
    assert_int_equal(a.n_late_ok, STATS_LATE_SENDS + 1);
    assert_int_equal(a.late_ok[1].late_ns, 1500000);
    assert_int_equal(a.late_ok[STATS_LATE_SENDS - 1].late_ns, 1500000 + STATS_LATE_SENDS - 2);
    stats_reset(&a);
    assert_int_equal(a.n_late_ok, 0);
    stats_free(&a);
    stats_free(&b);
}

/* Every ratio k / n (n <= 20000) against a target given as a percentage,
 * parsed as the flags parse it (ll_parse_double, then / 100): a ratio of
 * exactly the target compares equal, the next count down below and the
 * next up above. A plain < or > put 20 of the exact 99.9% ratios below
 * 99.9 / 100 ("attainment 99.9% < 99.9%") and 20 of the exact 0.7% ones
 * above 0.7 / 100; the scan counts those too, so it shows it tests them. */
static void scan_share_target(const char *pct, uint64_t num, uint64_t den, size_t n_exact,
                              size_t naive_wrong)
{
    double x;
    assert_int_equal(ll_parse_double(pct, &x), 0);
    double target = x / 100;
    size_t exact = 0, wrong = 0;
    for (uint64_t n = 1; n <= 20000; n++) {
        uint64_t k = num * n / den; /* the largest k with k / n <= num / den */
        double r = (double)k / (double)n;
        if (k * den == num * n) {
            exact++;
            wrong += (size_t)(r < target || r > target);
            assert_int_equal(stats_share_cmp(r, target), 0);
        } else {
            assert_int_equal(stats_share_cmp(r, target), -1);
        }
        if (k + 1 <= n)
            assert_int_equal(stats_share_cmp((double)(k + 1) / (double)n, target), 1);
        if (k > 0 && k * den == num * n)
            assert_int_equal(stats_share_cmp((double)(k - 1) / (double)n, target), -1);
    }
    assert_int_equal(exact, n_exact);
    assert_int_equal(wrong, naive_wrong);
}

static void test_share_cmp(void **state)
{
    (void)state;
    scan_share_target("99.9", 999, 1000, 20, 20);
    scan_share_target("0.7", 7, 1000, 20, 20);
    scan_share_target("99", 99, 100, 200, 0);
    assert_int_equal(stats_share_cmp(0, 0), 0);
    assert_int_equal(stats_share_cmp(1, 1), 0);
    assert_int_equal(stats_share_cmp(0, 0.001), -1);
    assert_int_equal(stats_share_cmp(1e-12, 0), 1);
}

UNIT_TESTS(test_add_one_ok, test_window_split_joins, test_late_sends, test_cut_short,
           test_finish_by_length, test_finish_overflow, test_add_failures, test_merge_equals_single,
           test_samples, test_share_cmp)
