/* test_summary.c: the printed summary and summary.json, against figures
 * computed by hand from hand-made records. */
#include "test.h"
#include "testutil.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <jansson.h>

#include "measure/hist.h"
#include "measure/record.h"
#include "measure/stats.h"
#include "measure/summary.h"
#include "util/util.h"

#define MS LL_NS_PER_MS

/* The fixture: 1000 ok requests with TTFT 1ms, 2ms, ... 1000ms (so the
 * exact nearest-rank p50 is 500ms, p90 900ms, p99.9 999ms), E2E = TTFT +
 * 100ms, 10 output tokens each from usage; 7 fast 429s and 3 first-token
 * timeouts; 1010 scheduled, 1005 sent; a 10 s window. */
struct fixture {
    struct stats s;
    struct summary_info info;
};

static void fixture_fill(struct fixture *fx)
{
    stats_init(&fx->s);
    for (uint64_t i = 0; i < 1000; i++) {
        struct record r;
        record_init(&r, i);
        r.http_status = 200;
        r.sched_ns = i * 10 * MS;
        r.sent_ns = r.sched_ns;
        r.first_ns = r.sched_ns + (i + 1) * MS;
        r.first_content_ns = r.first_ns;
        r.last_ns = r.first_ns + 90 * MS;
        r.end_ns = r.first_ns + 100 * MS;
        r.prompt_tokens = 50;
        r.output_tokens = 10;
        r.events = 10;
        r.tokens_source = REC_TOKENS_USAGE;
        stats_add_record(&fx->s, &r);
    }
    for (uint64_t i = 0; i < 10; i++) {
        struct record r;
        record_init(&r, 1000 + i);
        r.sched_ns = 1000;
        r.sent_ns = 1000;
        if (i < 7) {
            r.kind = REC_HTTP_429;
            r.http_status = 429;
            r.end_ns = 1000 + 2 * MS;
            r.retry_after_ms = 1000;
        } else {
            r.kind = REC_TIMEOUT_FIRST_TOKEN;
            r.end_ns = 1000 + 30000 * MS;
        }
        stats_add_record(&fx->s, &r);
    }
    fx->s.scheduled = 1010;
    fx->s.sent = 1005;
    /* What the driver counts by time inside the window (docs/metrics.md):
     * here every send and completion fell inside it. */
    fx->s.win_sent = 1005;
    fx->s.win_completed = 1010;
    fx->s.win_ok = 1000;
    fx->s.win_prompt_tokens = 50000;
    fx->s.win_output_tokens = 10000;

    memset(&fx->info, 0, sizeof(fx->info));
    fx->info.mode = "open-loop poisson";
    fx->info.offered_rate_per_s = 101.0;
    fx->info.window_ns = 10 * LL_NS_PER_SEC;
    fx->info.warmup_ns = 2 * LL_NS_PER_SEC;
    fx->info.inflight_mean = 55.5;
    fx->info.inflight_max = 90;
    fx->info.target_url = "http://127.0.0.1:8000/v1/chat/completions";
    fx->info.model = "tiny";
    fx->info.version = "test";
    fx->info.seed = 7;
    fx->info.records_written = 1010;
}

static char *print_to_string(const struct stats *s, const struct summary_info *info)
{
    struct test_mem m;
    test_mem_open(&m);
    summary_print(m.f, s, info);
    return test_mem_close(&m);
}

/* info, zeroed, for a run of mode (its words in the header) over a 1 s
 * window. */
static void info_one_second(struct summary_info *info, const char *mode)
{
    memset(info, 0, sizeof *info);
    info->mode = mode;
    info->window_ns = LL_NS_PER_SEC;
}

/* The line of text that starts with prefix, copied into line. */
static void find_line(const char *text, const char *prefix, char *line, size_t len)
{
    const char *p = text;
    size_t n = strlen(prefix);
    while (p != NULL && *p != '\0') {
        if (strncmp(p, prefix, n) == 0) {
            const char *e = strchr(p, '\n');
            size_t l = e != NULL ? (size_t)(e - p) : strlen(p);
            if (l >= len)
                l = len - 1;
            memcpy(line, p, l);
            line[l] = '\0';
            return;
        }
        p = strchr(p, '\n');
        if (p != NULL)
            p++;
    }
    fail_msg("no line starts with \"%s\" in:\n%s", prefix, text);
}

/* The summary of s and info printed, and its line that starts with prefix
 * copied into line (len bytes with the NUL): for a check of that line alone. */
static void printed_line(const struct stats *s, const struct summary_info *info, const char *prefix,
                         char *line, size_t len)
{
    char *out = print_to_string(s, info);
    find_line(out, prefix, line, len);
    free(out);
}

/* The whitespace-separated fields of line, into v (at most max). */
static size_t split_fields(char *line, char **v, size_t max)
{
    size_t n = 0;
    char *p = line;
    while (*p != '\0' && n < max) {
        while (*p == ' ')
            p++;
        if (*p == '\0')
            break;
        v[n++] = p;
        while (*p != '\0' && *p != ' ')
            p++;
        if (*p == ' ')
            *p++ = '\0';
    }
    return n;
}

/* The row that starts with label (padded): check its last two columns. */
static void check_row(const char *out, const char *label, const char *max,
                      const char *count)
{
    char prefix[64], line[256];
    snprintf(prefix, sizeof(prefix), "%-28s", label);
    find_line(out, prefix, line, sizeof(line));
    char *v[16];
    size_t n = split_fields(line + 28, v, LL_ARRAY_LEN(v));
    assert_int_equal(n, 7); /* p50 p90 p95 p99 p99.9 max count */
    assert_string_equal(v[5], max);
    assert_string_equal(v[6], count);
}

static void test_print(void **state)
{
    struct fixture fx;
    fixture_fill(&fx);
    char *out = print_to_string(&fx.s, &fx.info);
    char line[256];

    find_line(out, "llmload run: ", line, sizeof(line));
    assert_string_equal(line, "llmload run: open-loop poisson, offered 101.00 req/s");
    find_line(out, "target   http://127.0.0.1:8000/v1/chat/completions", line, sizeof(line));
    find_line(out, "window   ", line, sizeof(line));
    assert_string_equal(line, "window   10.00s measured, after 2.00s warm-up");
    find_line(out, "requests: ", line, sizeof(line));
    assert_string_equal(line, "requests: scheduled 1010, sent 1005, ok 1000, failed 10");
    find_line(out, "failed by kind: ", line, sizeof(line));
    assert_string_equal(line, "failed by kind: http_429 7, timeout_first_token 3");
    find_line(out, "retry-after: ", line, sizeof(line));
    assert_string_equal(line, "retry-after: 7 responses asked to wait, mean 1000 ms");
    assert_null(strstr(out, "unfinished"));
    assert_null(strstr(out, "INVALID"));
    assert_null(strstr(out, "CLOSED LOOP"));

    find_line(out, "latency  ", line, sizeof(line));
    char *v[16];
    assert_int_equal(split_fields(line, v, LL_ARRAY_LEN(v)), 8);
    assert_string_equal(v[1], "p50");
    assert_string_equal(v[5], "p99.9");
    assert_string_equal(v[6], "max");
    assert_string_equal(v[7], "count");

    check_row(out, "TTFT", "1.00s", "1000");
    check_row(out, "TTFT (server: first - sent)", "1.00s", "1000");
    check_row(out, "TTFC (first content)", "1.00s", "1000");
    check_row(out, "ITL (per gap)", "-", "0");
    check_row(out, "ITL (per request)", "10.00ms", "1000");
    check_row(out, "TPOT", "10.00ms", "1000");
    check_row(out, "E2E", "1.10s", "1000");
    check_row(out, "E2E (failed requests)", "30.00s", "10");
    check_row(out, "client queue", "0.00us", "1010");
    check_row(out, "schedule lateness", "-", "0");
    /* All of TPOT is 10ms, so every percentile is exact. */
    find_line(out, "TPOT  ", line, sizeof(line));
    assert_int_equal(split_fields(line, v, LL_ARRAY_LEN(v)), 8);
    for (int i = 1; i <= 6; i++)
        assert_string_equal(v[i], "10.00ms");

    find_line(out, "throughput: ", line, sizeof(line));
    assert_string_equal(line, "throughput: offered 101.00 req/s (scheduled 101.00 req/s), "
                              "sent 100.50 req/s, completed 101.00 req/s (ok 100.00 req/s)");
    find_line(out, "tokens:     ", line, sizeof(line));
    assert_string_equal(line, "tokens:     input 5000.0 tok/s, output 1000.0 tok/s "
                              "(ok requests)");
    assert_null(strstr(out, "bodies:")); /* no body bytes counted: no line */
    find_line(out, "            output tokens counted from: ", line, sizeof(line));
    assert_string_equal(line, "            output tokens counted from: usage 1000 of "
                              "1000 ok requests");
    find_line(out, "in flight:  ", line, sizeof(line));
    assert_string_equal(line, "in flight:  mean 55.50, max 90 (measured)");
    /* 101/s x (600500ms + 90014ms) / 1010 = 69.0514 */
    find_line(out, "Little's law: ", line, sizeof(line));
    assert_string_equal(line, "Little's law: completion rate x mean time in system = "
                              "69.05 (E2E, from sched), 69.05 (from sent)");
    free(out);

    /* Invalid, closed-loop, interrupted, with unfinished requests. */
    fx.info.invalid = 1;
    snprintf(fx.info.invalid_reason, sizeof(fx.info.invalid_reason),
             "schedule lateness p99 12ms > 1ms");
    fx.info.closed_loop = 1;
    fx.info.mode = "closed-loop";
    fx.info.offered_rate_per_s = 0;
    fx.info.interrupted = 1;
    fx.s.scheduled = 1013;
    out = print_to_string(&fx.s, &fx.info);
    find_line(out, "llmload run: ", line, sizeof(line));
    assert_string_equal(line, "llmload run: closed-loop (interrupted: partial results)");
    find_line(out, "CLOSED LOOP: latencies exclude the wait", line, sizeof(line));
    /* The headline says whose fault, as the cause does: the client's
     * when not known, the host's, or the generator's when it was busy. */
    find_line(out, "*** INVALID RUN: ", line, sizeof(line));
    assert_string_equal(line, "*** INVALID RUN: the client could not keep the schedule ***");
    find_line(out, "*** schedule lateness p99 12ms > 1ms", line, sizeof(line));
    find_line(out, "*** INVALID RUN: schedule lateness p99 12ms > 1ms", line,
              sizeof(line));
    free(out);
    fx.info.invalid_cause = VERDICT_LATE_PREEMPTED;
    printed_line(&fx.s, &fx.info, "*** INVALID RUN: ", line, sizeof(line));
    assert_string_equal(line, "*** INVALID RUN: the host (OS or VM) did not run the client on "
                              "schedule ***");
    fx.info.invalid_cause = VERDICT_LATE_BUSY;
    out = print_to_string(&fx.s, &fx.info);
    find_line(out, "*** INVALID RUN: ", line, sizeof(line));
    assert_string_equal(
        line, "*** INVALID RUN: the load generator was too busy to keep the schedule ***");
    find_line(out, "unfinished: ", line, sizeof(line));
    assert_string_equal(line, "unfinished: 3 scheduled requests have no record");
    /* A closed loop offers no rate, and says so rather than "offered -". */
    find_line(out, "throughput: ", line, sizeof(line));
    assert_non_null(strstr(line, "throughput: closed loop, no intended rate (users send as "
                                 "answers come), scheduled "));
    free(out);

    /* A replay's header names its command, and the mode's leading
     * "replay" is not said twice; summary.json keeps the whole mode. */
    fx.info.closed_loop = 0;
    fx.info.interrupted = 0;
    fx.info.command = "replay";
    fx.info.mode = "replay t.jsonl, 4 requests, offsets x1";
    fx.info.offered_rate_per_s = 20;
    out = print_to_string(&fx.s, &fx.info);
    find_line(out, "llmload replay: ", line, sizeof(line));
    assert_string_equal(line,
                        "llmload replay: t.jsonl, 4 requests, offsets x1, offered 20.00 req/s");
    assert_null(strstr(out, "llmload run"));
    free(out);
    json_t *j = summary_json(&fx.s, &fx.info);
    assert_string_equal(json_string_value(json_object_get(j, "mode")),
                        "replay t.jsonl, 4 requests, offsets x1");
    json_decref(j);
    stats_free(&fx.s);
}

/* Little's law with --on-cap drop: a dropped record was never sent, so it
 * spent 0 in flight after a send, and both sides of the law are over the
 * same records. One request sent at 0 and done at 100 ms, one dropped at
 * once, in a 1 s window: 2/s x 50 ms = 0.10 from sched and from sent.
 * Before, the mean from sent was over the sent record alone: 0.20, twice
 * the requests in flight (llama.cpp: 1.68 beside 0.98 measured). */
static void test_littles_law_dropped(void **state)
{
    (void)state;
    struct stats s;
    struct summary_info info;
    stats_init(&s);
    struct record r;
    record_init(&r, 0);
    r.http_status = 200;
    r.sched_ns = 0;
    r.sent_ns = 0;
    r.first_ns = r.first_content_ns = 10 * MS;
    r.last_ns = r.end_ns = 100 * MS;
    r.output_tokens = r.events = 10;
    r.tokens_source = REC_TOKENS_USAGE;
    stats_add_record(&s, &r);
    record_init(&r, 1);
    r.kind = REC_CLIENT_DROPPED;
    r.sched_ns = 0;
    r.end_ns = 0;
    stats_add_record(&s, &r);
    s.scheduled = s.win_completed = 2;
    s.sent = s.win_sent = s.win_ok = 1;
    info_one_second(&info, "open-loop poisson, capped");
    info.inflight_mean = 0.1;

    char line[256];
    printed_line(&s, &info, "Little's law: ", line, sizeof line);
    assert_string_equal(line, "Little's law: completion rate x mean time in system = "
                              "0.10 (E2E, from sched), 0.10 (from sent)");
    json_t *j = summary_json(&s, &info);
    json_t *inf = json_object_get(j, "inflight");
    assert_true(fabs(json_real_value(json_object_get(inf, "littles_law_e2e")) - 0.1) < 1e-9);
    assert_true(fabs(json_real_value(json_object_get(inf, "littles_law_service")) - 0.1) < 1e-9);
    json_decref(j);
    stats_free(&s);
}

/* Request body bytes: their rate over the window and the mean per
 * request sent, in the terminal and in summary.json. */
static void test_request_bytes(void **state)
{
    struct fixture fx;
    fixture_fill(&fx);
    fx.s.win_request_bytes = 25125000; /* 1005 sent in 10 s, 25 KB each */
    char line[512];
    printed_line(&fx.s, &fx.info, "bodies:     ", line, sizeof(line));
    assert_string_equal(line, "bodies:     2.51 MB/s of request bodies sent (25.0 KB per request)");
    json_t *j = summary_json(&fx.s, &fx.info);
    json_t *v = json_object_get(json_object_get(j, "throughput"), "request_bytes_per_s");
    assert_true(json_is_real(v));
    assert_true(fabs(json_real_value(v) - 2512500.0) < 1e-6);
    json_decref(j);
    stats_free(&fx.s);
}

static json_t *jpath(json_t *root, const char *a, const char *b, const char *c)
{
    json_t *j = json_object_get(root, a);
    if (b != NULL)
        j = json_object_get(j, b);
    if (c != NULL)
        j = json_object_get(j, c);
    if (j == NULL)
        fail_msg("no %s.%s.%s in summary.json", a, b ? b : "", c ? c : "");
    return j;
}

static json_int_t jint(json_t *root, const char *a, const char *b, const char *c)
{
    json_t *j = jpath(root, a, b, c);
    if (!json_is_integer(j))
        fail_msg("%s.%s.%s is not an integer", a, b ? b : "", c ? c : "");
    return json_integer_value(j);
}

static double jnum(json_t *root, const char *a, const char *b, const char *c)
{
    json_t *j = jpath(root, a, b, c);
    if (!json_is_number(j))
        fail_msg("%s.%s.%s is not a number", a, b ? b : "", c ? c : "");
    return json_number_value(j);
}

/* 10 requests 50 ms apart into s (initialised here) over a 1 s window:
 * the first n_ok sent and ok (TTFT 10 ms, 10 tokens by usage, 100 ms each),
 * the rest of kind other: client_dropped ends unsent at its time, any
 * other kind 1 ms after its send. */
static void ten_requests(struct stats *s, uint64_t n_ok, enum rec_kind other)
{
    stats_init(s);
    for (uint64_t i = 0; i < 10; i++) {
        struct record r;
        record_init(&r, i);
        r.sched_ns = 50 * MS * i;
        if (other != REC_CLIENT_DROPPED || i < n_ok)
            r.sent_ns = r.sched_ns;
        if (i < n_ok) {
            r.http_status = 200;
            r.first_ns = r.first_content_ns = r.sched_ns + 10 * MS;
            r.last_ns = r.end_ns = r.sched_ns + 100 * MS;
            r.output_tokens = r.events = 10;
            r.tokens_source = REC_TOKENS_USAGE;
        } else {
            r.kind = other;
            r.end_ns = other == REC_CLIENT_DROPPED ? r.sched_ns : r.sched_ns + 1 * MS;
        }
        stats_account_met(s, &r, 0, LL_NS_PER_SEC, 0);
    }
    s->scheduled = 10;
}

/* --on-cap drop: a client_dropped record completes at once without a
 * send, so the completion rate can exceed the send rate; the throughput
 * line says how much of it was dropped unsent, and summary.json gives it
 * as dropped_rate_per_s. 3 requests sent and ok, 7 dropped, in a 1 s
 * window: sent 3/s, completed 10/s, of them 7/s dropped. Before, the line
 * read "sent 3.00 req/s, completed 10.00 req/s (ok 3.00 req/s)" alone
 * (the sim at --rate 40 --max-concurrency 4: sent 7.40, completed 39.00). */
static void test_throughput_dropped(void **state)
{
    (void)state;
    struct stats s;
    struct summary_info info;
    ten_requests(&s, 3, REC_CLIENT_DROPPED);
    info_one_second(&info, "open-loop poisson, capped");

    char line[256];
    printed_line(&s, &info, "throughput: ", line, sizeof line);
    assert_string_equal(line,
                        "throughput: offered - req/s (scheduled 10.00 req/s), sent 3.00 req/s, "
                        "completed 10.00 req/s (ok 3.00 req/s, dropped unsent 7.00 req/s)");
    json_t *j = summary_json(&s, &info);
    ASSERT_NEAR(jnum(j, "throughput", "completion_rate_per_s", NULL), 10.0, 1e-9);
    ASSERT_NEAR(jnum(j, "throughput", "dropped_rate_per_s", NULL), 7.0, 1e-9);
    ASSERT_NEAR(jnum(j, "throughput", "send_rate_per_s", NULL), 3.0, 1e-9);
    json_decref(j);
    stats_free(&s);
}

/* A paced closed loop intends users / pace, and says it where an open
 * loop says what it offered: --users 2 --pace 1s read "offered - req/s"
 * before. summary.json's intended_rate_per_s carries it; offered stays
 * null for a closed loop. */
static void test_throughput_intended(void **state)
{
    (void)state;
    struct stats s;
    struct summary_info info;
    ten_requests(&s, 3, REC_CLIENT_DROPPED);
    info_one_second(&info, "closed-loop, 4 users, pace 2.00s");
    info.closed_loop = 1;
    info.paced_users = 4;
    info.pace_ns = 2 * LL_NS_PER_SEC;
    char line[256];
    printed_line(&s, &info, "throughput: ", line, sizeof line);
    assert_string_equal(line, "throughput: intended 2.00 req/s (4 users at one request per "
                              "2.00s), scheduled 10.00 req/s, sent 3.00 req/s, completed 10.00 "
                              "req/s (ok 3.00 req/s, dropped unsent 7.00 req/s)");
    json_t *j = summary_json(&s, &info);
    ASSERT_NEAR(jnum(j, "throughput", "intended_rate_per_s", NULL), 2.0, 1e-12);
    assert_true(json_is_null(jpath(j, "throughput", "offered_rate_per_s", NULL)));
    json_decref(j);
    /* One user; and an open loop's intended rate is what it offered. */
    info.paced_users = 1;
    printed_line(&s, &info, "throughput: ", line, sizeof line);
    assert_non_null(strstr(line, "throughput: intended 0.50 req/s (1 user at one request per "
                                 "2.00s), scheduled 10.00 req/s,"));
    info_one_second(&info, "open-loop poisson 20/s");
    info.offered_rate_per_s = 20;
    j = summary_json(&s, &info);
    ASSERT_NEAR(jnum(j, "throughput", "intended_rate_per_s", NULL), 20.0, 1e-12);
    json_decref(j);
    /* Unpaced: no intended rate. */
    info_one_second(&info, "closed-loop, 4 users");
    info.closed_loop = 1;
    j = summary_json(&s, &info);
    assert_true(json_is_null(jpath(j, "throughput", "intended_rate_per_s", NULL)));
    json_decref(j);
    stats_free(&s);
}

/* A window that ran past the last arrival (--requests, a trace) holds
 * the drain: the scheduled rate is over the offering, not the window, or
 * a replay of 16 lines over 3 s read "offered 5.00 req/s (scheduled 1.66
 * req/s)", a schedule that seemed to fall short. The offering ends at the
 * last arrival, so the arrivals before it are over it: ten 50 ms apart
 * span 450 ms, 9 / 0.45 s = 20.00/s, where 10 / 0.45 s read 22.22 (high
 * by one arrival in ten). One arrival spans nothing: no rate, null. The
 * other rates stay over the window, and summary.json's
 * scheduled_rate_per_s too. */
static void test_throughput_offering(void **state)
{
    (void)state;
    struct stats s;
    struct summary_info info;
    ten_requests(&s, 3, REC_CLIENT_DROPPED);
    info_one_second(&info, "replay t.jsonl, 10 requests, offsets x1");
    info.offered_rate_per_s = 20;
    info.offering_ns = 450 * LL_NS_PER_MS;
    char *out = print_to_string(&s, &info);
    char line[256];
    find_line(out, "throughput: ", line, sizeof line);
    assert_string_equal(line, "throughput: offered 20.00 req/s (scheduled 20.00 req/s over the "
                              "450.00ms of offering), sent 3.00 req/s, completed 10.00 req/s (ok "
                              "3.00 req/s, dropped unsent 7.00 req/s)");
    find_line(out, "            (scheduled over", line, sizeof line);
    assert_string_equal(line, "            (scheduled over the 450.00ms to the last arrival; the "
                              "other rates over the 1.00s window, its drain included)");
    free(out);
    json_t *j = summary_json(&s, &info);
    ASSERT_NEAR(jnum(j, "throughput", "scheduled_rate_per_s", NULL), 10.0, 1e-12);
    ASSERT_NEAR(jnum(j, "throughput", "scheduled_offering_rate_per_s", NULL), 20.0, 1e-12);
    assert_int_equal(jint(j, "throughput", "offering_ns", NULL), 450 * LL_NS_PER_MS);
    json_decref(j);
    /* The offering filled the window (--duration): n over that fixed
     * time, as before. */
    info.offering_ns = 0;
    out = print_to_string(&s, &info);
    find_line(out, "throughput: ", line, sizeof line);
    assert_non_null(strstr(line, "throughput: offered 20.00 req/s (scheduled 10.00 req/s), "));
    assert_null(strstr(out, "(scheduled over"));
    free(out);
    j = summary_json(&s, &info);
    assert_true(json_is_null(jpath(j, "throughput", "offering_ns", NULL)));
    assert_true(json_is_null(jpath(j, "throughput", "scheduled_offering_rate_per_s", NULL)));
    json_decref(j);
    stats_free(&s);
    /* One arrival in the window, 300 ms after its start (a warm-up before
     * it): no gap, so no rate, where the parent read 1 / 0.3 s = 3.33. */
    stats_init(&s);
    s.scheduled = 1;
    info.offering_ns = 300 * LL_NS_PER_MS;
    info.offered_rate_per_s = 0;
    out = print_to_string(&s, &info);
    find_line(out, "throughput: ", line, sizeof line);
    assert_non_null(strstr(line, "throughput: offered - req/s (scheduled 1 request, no rate over "
                                 "one arrival), "));
    assert_null(strstr(out, "(scheduled over"));
    free(out);
    j = summary_json(&s, &info);
    assert_int_equal(jint(j, "throughput", "offering_ns", NULL), 300 * LL_NS_PER_MS);
    assert_true(json_is_null(jpath(j, "throughput", "scheduled_offering_rate_per_s", NULL)));
    json_decref(j);
    /* The one arrival at the window's start, and a count ended the
     * offering (`--rate 10 --arrival constant --requests 1`): offering_ns
     * is 0 as under --duration, but the window is the drain's, so still
     * no rate, where the parent read 1 over the window. */
    info.offering_ns = 0;
    info.offering_ran_on = 1;
    printed_line(&s, &info, "throughput: ", line, sizeof line);
    assert_non_null(strstr(line, "throughput: offered - req/s (scheduled 1 request, no rate over "
                                 "one arrival), "));
    j = summary_json(&s, &info);
    assert_true(json_is_null(jpath(j, "throughput", "offering_ns", NULL)));
    assert_true(json_is_null(jpath(j, "throughput", "scheduled_offering_rate_per_s", NULL)));
    json_decref(j);
    /* Under --duration the one arrival is the count over the offering's
     * own window: n over it (1 / 1 s), as before. */
    info.offering_ran_on = 0;
    printed_line(&s, &info, "throughput: ", line, sizeof line);
    assert_non_null(strstr(line, "throughput: offered - req/s (scheduled 1.00 req/s), "));
    stats_free(&s);
    /* Which ended the offering: --duration's end is the window's end. */
    assert_int_equal(summary_offering_ran_on(LL_NS_PER_SEC, 0, LL_NS_PER_SEC), 0);
    assert_int_equal(summary_offering_ran_on(2 * LL_NS_PER_SEC, LL_NS_PER_SEC, LL_NS_PER_SEC), 0);
    assert_int_equal(summary_offering_ran_on(0, 0, LL_NS_PER_SEC), 1);
    assert_int_equal(summary_offering_ran_on(2 * LL_NS_PER_SEC, 0, LL_NS_PER_SEC), 1);
    assert_int_equal(summary_offering_ns(0, 0, LL_NS_PER_SEC, 0), 0);
}

/* A session's turn record: session sess, turn turn, scheduled at ms. */
static void session_add(struct summary_session_starts *st, int64_t sess, int32_t turn, uint64_t ms,
                        uint64_t warmup_ns)
{
    struct record r;
    record_init(&r, (uint64_t)sess * 1000 + (uint64_t)turn);
    r.session = sess;
    r.turn = turn;
    r.sched_ns = ms * LL_NS_PER_MS;
    summary_session_starts_add(st, &r, warmup_ns);
}

/* The realised session rate of a run whose count ended the arrivals:
 * over the span from the window's start to the last session's start, the
 * starts before the last (docs/workload.md, "Sessions"). A warm-up's
 * start, a later turn and a record outside sessions are left out; a
 * window --duration ended, or one start, keep the rate over the window. */
static void test_session_span(void **state)
{
    (void)state;
    struct stats s;
    struct summary_info info;
    ten_requests(&s, 10, REC_OK);
    info_one_second(&info, "partly-open");
    info.sessions = 1;
    info.session_rate_per_s = 4;
    info.warmup_ns = 250 * LL_NS_PER_MS;
    info.sessions_started = 4;
    struct summary_session_starts st = {0};
    session_add(&st, 0, 0, 0, info.warmup_ns); /* warm-up */
    for (int64_t i = 1; i <= 4; i++)
        session_add(&st, i, 0, 250 * (uint64_t)i, info.warmup_ns);
    session_add(&st, 4, 1, 1100, info.warmup_ns);   /* a later turn */
    session_add(&st, -1, -1, 1200, info.warmup_ns); /* not a session's */
    assert_int_equal(st.n, 4);
    assert_int_equal(st.last_ns, LL_NS_PER_SEC);
    summary_session_span(&info, 0, &st);
    assert_int_equal(info.session_arrivals_ns, 750 * LL_NS_PER_MS);
    assert_int_equal(info.session_arrivals, 4);
    ASSERT_NEAR(summary_session_rate(&info), 4.0, 1e-12);
    char *out = print_to_string(&s, &info);
    char line[256];
    find_line(out, "sessions:   ", line, sizeof line);
    assert_non_null(strstr(line, "intended 4.00/s, realised 4.00/s (4 started"));
    find_line(out, "            (sessions: ", line, sizeof line);
    assert_string_equal(line, "            (sessions: 3 starts in the 750.00ms up to the last; "
                              "requests over the 1.00s window)");
    free(out);
    json_t *j = summary_json(&s, &info);
    ASSERT_NEAR(jnum(j, "sessions", "realised_rate_per_s", NULL), 4.0, 1e-12);
    assert_int_equal(jint(j, "sessions", "arrivals_ns", NULL), 750 * LL_NS_PER_MS);
    json_decref(j);

    /* --duration ended the window: over it. */
    summary_session_span(&info, 1250 * LL_NS_PER_MS, &st);
    assert_int_equal(info.session_arrivals_ns, 0);
    ASSERT_NEAR(summary_session_rate(&info), 4.0, 1e-12);
    out = print_to_string(&s, &info);
    assert_null(strstr(out, "(sessions: "));
    free(out);
    j = summary_json(&s, &info);
    assert_true(json_is_null(jpath(j, "sessions", "arrivals_ns", NULL)));
    json_decref(j);

    /* One start in the window: no span to count over. */
    struct summary_session_starts one = {0};
    session_add(&one, 1, 0, 300, info.warmup_ns);
    summary_session_span(&info, 0, &one);
    assert_int_equal(info.session_arrivals_ns, 0);
    stats_free(&s);
}

/* Write summary.json into a fresh temporary directory, check that nothing
 * but summary.json is left there, and load it back. */
static json_t *write_and_load(const struct stats *s, const struct summary_info *info)
{
    char dir[] = "/tmp/llmload-test-summary-XXXXXX";
    assert_non_null(mkdtemp(dir));
    char path[128], tmp[160], err[256] = "";
    snprintf(path, sizeof(path), "%s/summary.json", dir);
    snprintf(tmp, sizeof(tmp), "%s.tmp", path);
    int rc = summary_write_json(path, s, info, err, sizeof(err));
    if (rc != 0)
        fail_msg("summary_write_json: %d %s", rc, err);
    assert_int_equal(access(tmp, F_OK), -1);
    json_error_t jerr;
    json_t *root = json_load_file(path, 0, &jerr);
    if (root == NULL)
        fail_msg("summary.json does not parse: %s", jerr.text);
    assert_int_equal(unlink(path), 0);
    assert_int_equal(rmdir(dir), 0); /* fails if anything else was left */
    return root;
}

/* Attainment's line says what it is over: with requests the client
 * cancelled before a miss, the judged ones (scheduled less those), not
 * "of scheduled"; with none judged, no figure ("-", as summary.json's
 * null), not a 0% the server never showed. */
static void test_attainment_of_judged(void **state)
{
    struct fixture fx;
    fixture_fill(&fx);
    fx.info.slo = "ttft=500ms";
    fx.s.slo_met = 900;
    fx.s.slo_unjudged = 10;
    char line[256];
    printed_line(&fx.s, &fx.info, "goodput:    ", line, sizeof(line));
    assert_message_has(line,
                       "attainment 90.0% of the 1000 judged (10 the client cancelled "
                       "before a miss left out)",
                       line);

    fx.s.slo_met = 0;
    fx.s.slo_unjudged = fx.s.scheduled;
    printed_line(&fx.s, &fx.info, "goodput:    ", line, sizeof(line));
    assert_message_has(line, "attainment - of the 0 judged (1010 the client cancelled", line);

    fx.s.slo_met = 1000;
    fx.s.slo_unjudged = 0;
    printed_line(&fx.s, &fx.info, "goodput:    ", line, sizeof(line));
    assert_message_has(line, "attainment 99.0% of scheduled", line);
    stats_free(&fx.s);
}

/* The requests line says what the error rate is over: the requests the
 * client let end. 8 cancelled by the client and 2 ok: 0.0% of the 2; all
 * 10 cancelled: no error rate (it read "error rate 0.0% of the 0 it let
 * end"), as --expect's error_rate has no value then. */
static void test_requests_cancelled(void **state)
{
    (void)state;
    for (int all = 0; all < 2; all++) {
        struct stats s;
        struct summary_info info;
        ten_requests(&s, all ? 0 : 2, REC_CANCELLED);
        info_one_second(&info, "open-loop poisson");
        char line[256];
        printed_line(&s, &info, "requests: ", line, sizeof line);
        assert_string_equal(line, all ? "requests: scheduled 10, sent 10, ok 0, failed 10 (the "
                                        "client cancelled all 10: no error rate)"
                                      : "requests: scheduled 10, sent 10, ok 2, failed 8 (the "
                                        "client cancelled 8; error rate 0.0% of the 2 it let end)");
        stats_free(&s);
    }
}

/* No warm-up is said in words, not as "after 0.00us warm-up". */
static void test_no_warmup(void **state)
{
    struct fixture fx;
    fixture_fill(&fx);
    fx.info.warmup_ns = 0;
    char *out = print_to_string(&fx.s, &fx.info);
    char line[256];
    find_line(out, "window   ", line, sizeof(line));
    assert_string_equal(line, "window   10.00s measured, no warm-up");
    assert_null(strstr(out, "0.00us warm-up"));
    free(out);
    stats_free(&fx.s);
}

static void test_json(void **state)
{
    struct fixture fx;
    fixture_fill(&fx);
    json_t *root = write_and_load(&fx.s, &fx.info);

    assert_string_equal(json_string_value(jpath(root, "schema", NULL, NULL)),
                        "llmload.summary/1");
    assert_string_equal(json_string_value(jpath(root, "mode", NULL, NULL)),
                        "open-loop poisson");
    assert_true(json_is_false(jpath(root, "closed_loop", NULL, NULL)));
    assert_true(json_is_false(jpath(root, "invalid", NULL, NULL)));
    assert_true(json_is_null(jpath(root, "invalid_reason", NULL, NULL)));
    assert_int_equal(jint(root, "seed", NULL, NULL), 7);
    assert_int_equal(jint(root, "window_ns", NULL, NULL), 10 * LL_NS_PER_SEC);
    assert_int_equal(jint(root, "warmup_ns", NULL, NULL), 2 * LL_NS_PER_SEC);
    assert_int_equal(jint(root, "records_written", NULL, NULL), 1010);

    assert_int_equal(jint(root, "requests", "scheduled", NULL), 1010);
    assert_int_equal(jint(root, "requests", "sent", NULL), 1005);
    assert_int_equal(jint(root, "requests", "completed", NULL), 1010);
    assert_int_equal(jint(root, "requests", "ok", NULL), 1000);
    assert_int_equal(jint(root, "requests", "failed", NULL), 10);
    assert_int_equal(jint(root, "requests", "unfinished", NULL), 0);
    json_t *by_kind = jpath(root, "requests", "by_kind", NULL);
    assert_int_equal(json_object_size(by_kind), REC_KIND_COUNT);
    assert_int_equal(jint(by_kind, "ok", NULL, NULL), 1000);
    assert_int_equal(jint(by_kind, "http_429", NULL, NULL), 7);
    assert_int_equal(jint(by_kind, "timeout_first_token", NULL, NULL), 3);
    assert_int_equal(jint(by_kind, "transport_error", NULL, NULL), 0);
    assert_int_equal(jint(root, "requests", "retry_after", "count"), 7);
    ASSERT_NEAR(jnum(root, "requests", "retry_after", "mean_ms"), 1000.0, 1e-9);

    /* TTFT: 1..1000 ms. Exact nearest ranks; the histogram is within 1/256
     * of them, and exact at min, max and mean. */
    json_t *ttft = jpath(root, "latency_ns", "ttft", NULL);
    assert_int_equal(jint(ttft, "count", NULL, NULL), 1000);
    assert_int_equal(jint(ttft, "min", NULL, NULL), 1 * MS);
    assert_int_equal(jint(ttft, "max", NULL, NULL), 1000 * MS);
    assert_int_equal(jint(ttft, "mean", NULL, NULL), 500500000);
    assert_int_equal(jint(ttft, "overflow", NULL, NULL), 0);
    ASSERT_REL(jint(ttft, "p50", NULL, NULL), 500 * MS, 1.0 / 256);
    ASSERT_REL(jint(ttft, "p90", NULL, NULL), 900 * MS, 1.0 / 256);
    ASSERT_REL(jint(ttft, "p95", NULL, NULL), 950 * MS, 1.0 / 256);
    ASSERT_REL(jint(ttft, "p99", NULL, NULL), 990 * MS, 1.0 / 256);
    ASSERT_REL(jint(ttft, "p99_9", NULL, NULL), 999 * MS, 1.0 / 256);
    assert_true(json_is_string(json_object_get(ttft, "hist")));
    ASSERT_REL(jint(root, "latency_ns", "e2e", "p50"), 600 * MS, 1.0 / 256);
    assert_int_equal(jint(root, "latency_ns", "e2e", "max"), 1100 * MS);
    assert_int_equal(jint(root, "latency_ns", "tpot", "p50"), 10 * MS);
    assert_int_equal(jint(root, "latency_ns", "itl_request", "p99_9"), 10 * MS);
    /* Failed E2E: seven of 2ms, three of 30s: p50 is rank 5 = 2ms, p90
     * rank 9 = 30s, each within 1/256. */
    json_t *fail = jpath(root, "latency_ns", "e2e_failed", NULL);
    assert_int_equal(jint(fail, "count", NULL, NULL), 10);
    ASSERT_REL(jint(fail, "p50", NULL, NULL), 2 * MS, 1.0 / 256);
    ASSERT_REL(jint(fail, "p90", NULL, NULL), 30000 * MS, 1.0 / 256);
    json_t *late = jpath(root, "latency_ns", "schedule_lateness", NULL);
    assert_int_equal(jint(late, "count", NULL, NULL), 0);
    assert_true(json_is_null(json_object_get(late, "p50")));
    assert_true(json_is_null(json_object_get(late, "max")));
    assert_true(json_is_null(json_object_get(late, "mean")));
    assert_int_equal(json_object_size(jpath(root, "latency_ns", NULL, NULL)), 10);

    ASSERT_NEAR(jnum(root, "throughput", "offered_rate_per_s", NULL), 101.0, 1e-9);
    ASSERT_NEAR(jnum(root, "throughput", "send_rate_per_s", NULL), 100.5, 1e-9);
    ASSERT_NEAR(jnum(root, "throughput", "completion_rate_per_s", NULL), 101.0, 1e-9);
    ASSERT_NEAR(jnum(root, "throughput", "ok_rate_per_s", NULL), 100.0, 1e-9);
    ASSERT_NEAR(jnum(root, "throughput", "input_tokens_per_s", NULL), 5000.0, 1e-9);
    ASSERT_NEAR(jnum(root, "throughput", "output_tokens_per_s", NULL), 1000.0, 1e-9);
    assert_int_equal(jint(root, "tokens", "prompt_tokens", NULL), 50000);
    assert_int_equal(jint(root, "tokens", "output_tokens", NULL), 10000);
    assert_int_equal(jint(root, "tokens", "source", "usage"), 1000);
    assert_int_equal(jint(root, "tokens", "source", "events"), 0);
    assert_true(json_is_null(jpath(root, "tokens", "cached_tokens", NULL)));
    ASSERT_NEAR(jnum(root, "inflight", "mean", NULL), 55.5, 1e-9);
    ASSERT_NEAR(jnum(root, "inflight", "littles_law_e2e", NULL),
                101.0 * (600.500 + 90.014) / 1010.0, 1e-9);
    /* No response said why it ended, and none was cut short. */
    json_t *fin = jpath(root, "finish_reasons", NULL, NULL);
    assert_int_equal(json_object_size(fin), 1);
    assert_int_equal(jint(fin, "(none)", NULL, NULL), 1000);
    assert_int_equal(jint(root, "cut_short", "count", NULL), 0);
    ASSERT_NEAR(jnum(root, "cut_short", "share", NULL), 0.0, 0);
    assert_int_equal(jint(root, "cut_short", "unjudged", NULL), 0);
    assert_true(json_is_null(jpath(root, "cut_short_warning", NULL, NULL)));
    json_decref(root);

    fx.info.invalid = 1;
    snprintf(fx.info.invalid_reason, sizeof(fx.info.invalid_reason), "too late");
    fx.info.seed = UINT64_MAX;
    fx.info.offered_rate_per_s = 0;
    root = write_and_load(&fx.s, &fx.info);
    assert_true(json_is_true(jpath(root, "invalid", NULL, NULL)));
    assert_string_equal(json_string_value(jpath(root, "invalid_reason", NULL, NULL)),
                        "too late");
    assert_string_equal(json_string_value(jpath(root, "seed", NULL, NULL)),
                        "18446744073709551615");
    assert_true(json_is_null(jpath(root, "throughput", "offered_rate_per_s", NULL)));
    json_decref(root);
    stats_free(&fx.s);
}

/* n ok records asking 64 tokens under ignore_eos, the last `cut` of them
 * given 30 ("length": a full context), the rest all 64 ("length" too);
 * plus one "stop" of 64 and one streamed without usage (events). */
static void cut_fill(struct stats *s, uint64_t n, uint64_t cut)
{
    stats_init(s);
    for (uint64_t i = 0; i < n + 2; i++) {
        struct record r;
        record_init(&r, i);
        r.http_status = 200;
        r.sched_ns = i * MS;
        r.sent_ns = r.sched_ns;
        r.first_ns = r.sched_ns + MS;
        r.last_ns = r.first_ns + 10 * MS;
        r.end_ns = r.last_ns;
        r.max_tokens = 64;
        r.ignore_eos = 1;
        r.output_tokens = i >= n - cut && i < n ? 30 : 64;
        r.events = r.output_tokens;
        r.tokens_source = REC_TOKENS_USAGE;
        snprintf(r.finish_reason, sizeof r.finish_reason, "%s", i == n ? "stop" : "length");
        if (i == n + 1) {
            r.tokens_source = REC_TOKENS_EVENTS;
            r.output_tokens = 20;
            r.finish_reason[0] = '\0';
        }
        stats_add_record(s, &r);
    }
    s->scheduled = s->sent = n + 2;
}

/* Cut-short outputs: counted, by reason, in summary.json, and warned of
 * from 1% of the ok requests, in the header and as a string. */
static void test_cut_short(void **state)
{
    struct stats s;
    struct summary_info info;
    char warn[320], line[256];
    info_one_second(&info, "closed-loop");

    /* 1 of 200 (0.5%): no warning. */
    cut_fill(&s, 198, 1);
    assert_int_equal(summary_cut_short_warning(&s, warn, sizeof warn), 0);
    assert_string_equal(warn, "");
    stats_free(&s);

    /* 2 of 200 (1%): the warning. */
    cut_fill(&s, 198, 2);
    assert_int_equal(s.by_kind[REC_OK], 200);
    assert_int_equal(summary_cut_short_warning(&s, warn, sizeof warn), 1);
    assert_message_has(warn, "2 of 200 ok requests (1.0%) were cut short", warn);
    assert_message_has(warn, "TPOT and output tokens/s", warn);
    snprintf(info.cut_short_warning, sizeof info.cut_short_warning, "%s", warn);
    char *out = print_to_string(&s, &info);
    find_line(out, "warning  2 of 200 ok requests (1.0%) were cut short", line, sizeof line);
    /* The warning is wrapped under 100 columns, its lines indented under
     * its first word, down to the blank line that ends the header. */
    const char *p = strstr(out, "warning  2 of 200");
    size_t lines = 0;
    while (*p != '\n') {
        size_t n = strcspn(p, "\n");
        if (n >= 100 || (lines && strncmp(p, "         ", 9) != 0))
            fail_msg("warning line %zu (%zu columns): %.*s", lines, n, (int)n, p);
        lines++;
        p += n + 1;
    }
    assert_true(lines >= 2);
    find_line(out, "            finish_reason: ", line, sizeof line);
    assert_string_equal(line, "            finish_reason: length 198, stop 1, (none) 1; "
                              "cut short 2");
    free(out);

    json_t *root = write_and_load(&s, &info);
    json_t *fin = jpath(root, "finish_reasons", NULL, NULL);
    assert_int_equal(json_object_size(fin), 3);
    assert_int_equal(jint(fin, "length", NULL, NULL), 198);
    assert_int_equal(jint(fin, "stop", NULL, NULL), 1);
    assert_int_equal(jint(fin, "(none)", NULL, NULL), 1);
    assert_int_equal(jint(root, "cut_short", "count", NULL), 2);
    ASSERT_NEAR(jnum(root, "cut_short", "share", NULL), 0.01, 1e-12);
    assert_int_equal(jint(root, "cut_short", "unjudged", NULL), 1);
    assert_string_equal(json_string_value(jpath(root, "cut_short_warning", NULL, NULL)), warn);
    json_decref(root);
    stats_free(&s);

    /* No ok request: no share, no warning. */
    stats_init(&s);
    assert_int_equal(summary_cut_short_warning(&s, warn, sizeof warn), 0);
    memset(&info.cut_short_warning, 0, sizeof info.cut_short_warning);
    root = write_and_load(&s, &info);
    assert_true(json_is_null(jpath(root, "cut_short", "share", NULL)));
    assert_int_equal(json_object_size(jpath(root, "finish_reasons", NULL, NULL)), 0);
    json_decref(root);
    stats_free(&s);
}

/* The one rule behind exit 6 (summary_measured), and summary.json's
 * nothing_measured that carries its words to the run page: a window of
 * failures, an empty window and why, a shard's empty window (not the
 * run's failure: null, its own words), cancellations alone and a signal
 * (measured: null). */
static void test_nothing_measured(void **state)
{
    (void)state;
    struct stats s;
    struct summary_info info;
    char why[400];
    stats_init(&s);
    info_one_second(&info, "open-loop poisson 1/s");
    assert_int_equal(summary_measured(why, sizeof why, &s, &info), SUMMARY_EMPTY);
    assert_string_equal(why, "nothing was measured: none came due in the window, the rate too "
                             "low for its length: lengthen --duration, raise the rate, or give "
                             "--requests N");
    json_t *root = write_and_load(&s, &info);
    assert_string_equal(json_string_value(jpath(root, "nothing_measured", NULL, NULL)), why);
    assert_true(json_is_null(jpath(root, "shard_empty", NULL, NULL)));
    json_decref(root);

    info.stop_reason = "spend guard: the next request would pass --max-tokens-total 9";
    assert_int_equal(summary_measured(why, sizeof why, &s, &info), SUMMARY_EMPTY);
    assert_string_equal(why, "nothing was measured: the spend guard stopped offering before a "
                             "request came due in the window (the next request would pass "
                             "--max-tokens-total 9): raise --max-tokens-total");
    info.stop_reason = NULL;

    info.shard = 2;
    info.shards = 4;
    assert_int_equal(summary_measured(why, sizeof why, &s, &info), SUMMARY_SHARD_EMPTY);
    assert_string_equal(why, "shard 2/4: no arrival of the schedule fell to this shard in the "
                             "window; llmload merge judges the whole run");
    root = write_and_load(&s, &info);
    assert_true(json_is_null(jpath(root, "nothing_measured", NULL, NULL)));
    assert_string_equal(json_string_value(jpath(root, "shard_empty", NULL, NULL)), why);
    json_decref(root);
    char *out = print_to_string(&s, &info);
    assert_non_null(
        strstr(out, "requests: scheduled 0, sent 0, ok 0, failed 0 (shard 2/4: no arrival"));
    free(out);

    info.shards = 0;
    info.interrupted = 1;
    assert_int_equal(summary_measured(why, sizeof why, &s, &info), SUMMARY_MEASURED);
    assert_string_equal(why, "");
    info.interrupted = 0;

    s.scheduled = s.completed = 3;
    s.by_kind[REC_HTTP_5XX] = 3;
    assert_int_equal(summary_measured(why, sizeof why, &s, &info), SUMMARY_NONE_OK);
    assert_string_equal(why, "no request succeeded: all 3 of the window failed");
    /* A shard whose requests all failed has failed, sharded or not. */
    info.shards = 4;
    assert_int_equal(summary_measured(why, sizeof why, &s, &info), SUMMARY_NONE_OK);
    info.shards = 0;
    s.by_kind[REC_HTTP_5XX] = 0;
    s.by_kind[REC_CANCELLED] = 3;
    assert_int_equal(summary_measured(why, sizeof why, &s, &info), SUMMARY_MEASURED);
    s.by_kind[REC_CANCELLED] = 2;
    s.by_kind[REC_OK] = 1;
    assert_int_equal(summary_measured(why, sizeof why, &s, &info), SUMMARY_MEASURED);
    stats_free(&s);
}

/* Why steady is null: summary.json's steady_unjudged (null when judged or
 * not set) and the terminal's steady line, wrapped under 100 columns
 * like a warning, in the header before its blank line. */
static void test_steady_unjudged(void **state)
{
    struct stats s;
    struct summary_info info;
    char line[256];
    const char *why = "not judged: too few requests: 12 ok in the window's smaller half (the "
                      "TTFT tail test needs 40) and 0.40s from the fill-up to the last arrival "
                      "(the backlog test needs 1.00s); run longer";
    stats_init(&s);
    info_one_second(&info, "open-loop poisson 10/s");
    snprintf(info.steady_unjudged, sizeof info.steady_unjudged, "%s", why);
    char *out = print_to_string(&s, &info);
    find_line(out, "steady   not judged: too few requests: 12 ok", line, sizeof line);
    const char *p = strstr(out, "steady   not judged");
    size_t lines = 0;
    while (*p != '\n') {
        size_t n = strcspn(p, "\n");
        if (n >= 100 || (lines && strncmp(p, "         ", 9) != 0))
            fail_msg("steady line %zu (%zu columns): %.*s", lines, n, (int)n, p);
        lines++;
        p += n + 1;
    }
    assert_true(lines >= 2);
    free(out);
    json_t *root = write_and_load(&s, &info);
    assert_true(json_is_null(jpath(root, "steady", NULL, NULL)));
    assert_string_equal(json_string_value(jpath(root, "steady_unjudged", NULL, NULL)), why);
    json_decref(root);

    /* Judged: no line, and null. */
    info.steady_judged = info.steady = 1;
    info.steady_unjudged[0] = '\0';
    out = print_to_string(&s, &info);
    assert_null(strstr(out, "not judged"));
    assert_null(strstr(out, "\nsteady "));
    free(out);
    root = write_and_load(&s, &info);
    assert_true(json_is_true(jpath(root, "steady", NULL, NULL)));
    assert_true(json_is_null(jpath(root, "steady_unjudged", NULL, NULL)));
    json_decref(root);
    stats_free(&s);
}

/* Values below 256 ns are kept exactly by the histogram, so here every
 * percentile must equal the nearest rank computed by hand: TTFT 1..200 ns,
 * p50 = 100, p90 = 180, p95 = 190, p99 = 198, p99.9 = ceil(199.8) = 200. */
static void test_json_exact_percentiles(void **state)
{
    struct stats s;
    stats_init(&s);
    for (uint64_t v = 200; v >= 1; v--) { /* order must not matter */
        struct record r;
        record_init(&r, v);
        r.sched_ns = 0;
        r.first_ns = v;
        r.end_ns = v;
        stats_add_record(&s, &r);
    }
    struct summary_info info;
    memset(&info, 0, sizeof(info));
    json_t *root = write_and_load(&s, &info);
    json_t *t = jpath(root, "latency_ns", "ttft", NULL);
    assert_int_equal(jint(t, "count", NULL, NULL), 200);
    assert_int_equal(jint(t, "min", NULL, NULL), 1);
    assert_int_equal(jint(t, "p50", NULL, NULL), 100);
    assert_int_equal(jint(t, "p90", NULL, NULL), 180);
    assert_int_equal(jint(t, "p95", NULL, NULL), 190);
    assert_int_equal(jint(t, "p99", NULL, NULL), 198);
    assert_int_equal(jint(t, "p99_9", NULL, NULL), 200);
    assert_int_equal(jint(t, "max", NULL, NULL), 200);
    assert_int_equal(jint(t, "mean", NULL, NULL), 101); /* 100.5 rounds up */
    /* No window: every rate is null, not infinite. */
    assert_true(json_is_null(jpath(root, "throughput", "completion_rate_per_s", NULL)));
    assert_true(json_is_null(jpath(root, "mode", NULL, NULL)));
    json_decref(root);

    /* The empty summary prints dashes, not zeros. */
    char line[256];
    printed_line(&s, &info, "throughput: ", line, sizeof(line));
    assert_string_equal(line, "throughput: offered - req/s (scheduled - req/s), sent - req/s, "
                              "completed - req/s (ok - req/s)");
    stats_free(&s);
}

static void test_json_write_error(void **state)
{
    struct stats s;
    stats_init(&s);
    struct summary_info info;
    memset(&info, 0, sizeof(info));
    char err[256] = "";
    assert_int_equal(summary_write_json("/nonexistent-dir/x/summary.json", &s, &info,
                                        err, sizeof(err)),
                     LL_E_IO);
    assert_non_null(strstr(err, "/nonexistent-dir/x/summary.json.tmp"));
    stats_free(&s);
}

/* n ok records asking for `want` prompt tokens that the server counted
 * `got` (-1: no count), into s. */
static void add_prompts(struct stats *s, int n, uint32_t want, int64_t got)
{
    for (int i = 0; i < n; i++) {
        struct record r;
        record_init(&r, (uint64_t)i);
        r.http_status = 200;
        r.sched_ns = r.sent_ns = 0;
        r.first_ns = r.first_content_ns = r.last_ns = r.end_ns = MS;
        r.prompt_tokens = want;
        r.prompt_tokens_server = got;
        stats_add_record(s, &r);
    }
}

/* The server's prompt count against the requested (issue 16): one line,
 * a warning with the ratio and the fix past 10%, a note within it, the
 * all-4xx warning for llmload's own words without a calibration; the same
 * text printed (lines under 100 columns) and in summary.json. */
static void test_prompt_note(void **state)
{
    struct stats s;
    char buf[512];
    int warning;

    stats_init(&s);
    add_prompts(&s, 20, 256, 551); /* llama-server's 2.15x */
    add_prompts(&s, 5, 256, -1);   /* no count: left out */
    summary_prompt_note(buf, sizeof buf, &s, SUMMARY_PROMPTS_SYNTHETIC, &warning);
    assert_int_equal(warning, 1);
    assert_message_has(buf,
                       "the server counted 2.15x the requested prompt tokens (over 20 ok "
                       "requests): prompts are 115% longer than asked",
                       "synthetic");
    assert_message_has(buf, "`llmload calibrate --url BASE`", "synthetic");
    assert_message_has(buf, "`--calibrate auto`", "synthetic");
    summary_prompt_note(buf, sizeof buf, &s, SUMMARY_PROMPTS_CALIBRATED, &warning);
    assert_message_has(buf, "even with the calibration", "calibrated");
    summary_prompt_note(buf, sizeof buf, &s, SUMMARY_PROMPTS_OTHER, &warning);
    assert_int_equal(warning, 1);
    assert_message_has(buf, "(the server's tokenizer counts them otherwise)", "other");
    assert_null(strstr(buf, "calibrat"));

    struct summary_info info;
    memset(&info, 0, sizeof info);
    info.prompts = SUMMARY_PROMPTS_SYNTHETIC;
    info.window_ns = LL_NS_PER_SEC;
    char *out = print_to_string(&s, &info);
    const char *w = strstr(out, "\nwarning: the server counted 2.15x");
    assert_non_null(w);
    /* The warning's lines, up to the next section, under 100 columns. */
    for (const char *l = w + 1; *l && strncmp(l, "in flight", 9) != 0;
         l += strcspn(l, "\n") + (l[strcspn(l, "\n")] != 0))
        if (strcspn(l, "\n") >= 100)
            fail_msg("a line of 100 columns or more: %.*s", (int)strcspn(l, "\n"), l);
    free(out);
    json_t *j = summary_json(&s, &info);
    summary_prompt_note(buf, sizeof buf, &s, SUMMARY_PROMPTS_SYNTHETIC, &warning);
    assert_string_equal(json_string_value(json_object_get(j, "prompt_warning")), buf);
    json_t *tok = json_object_get(j, "tokens");
    assert_int_equal(json_integer_value(json_object_get(tok, "prompt_reported")), 20);
    assert_true(json_real_value(json_object_get(tok, "prompt_ratio")) == 551.0 / 256.0);
    assert_true(json_real_value(json_object_get(tok, "prompt_error_min")) == 295.0 / 256.0);
    json_decref(j);

    /* Within 10%: a note, with the spread, and no prompt_warning. */
    stats_reset(&s);
    add_prompts(&s, 3, 100, 95);
    add_prompts(&s, 1, 100, 108);
    add_prompts(&s, 1, 100, 100);
    summary_prompt_note(buf, sizeof buf, &s, SUMMARY_PROMPTS_CALIBRATED, &warning);
    assert_int_equal(warning, 0);
    assert_string_equal(buf, "the server counted 0.99x the requested prompt tokens (over 5 ok "
                             "requests); 4 of them were counted otherwise, per request -5.0% to "
                             "+8.0%: a calibration keeps the mean length, each prompt within a "
                             "word or two (docs/workload.md)");
    /* Without a calibration, the note says how to make one. */
    summary_prompt_note(buf, sizeof buf, &s, SUMMARY_PROMPTS_SYNTHETIC, &warning);
    assert_int_equal(warning, 0);
    assert_non_null(strstr(buf, "the server counted 0.99x the requested prompt tokens"));
    assert_non_null(strstr(buf, "fit it with `llmload calibrate --url BASE` and run with "
                                "`--calibration FILE`, or run with `--calibrate auto`"));
    j = summary_json(&s, &info);
    assert_true(json_is_null(json_object_get(j, "prompt_warning")));
    json_decref(j);
    /* Exact: nothing to say. */
    stats_reset(&s);
    add_prompts(&s, 3, 100, 100);
    summary_prompt_note(buf, sizeof buf, &s, SUMMARY_PROMPTS_SYNTHETIC, &warning);
    assert_string_equal(buf, "");
    /* 0.89x is off, 0.91x is not. */
    stats_reset(&s);
    add_prompts(&s, 1, 100, 89);
    summary_prompt_note(buf, sizeof buf, &s, SUMMARY_PROMPTS_SYNTHETIC, &warning);
    assert_message_has(buf,
                       "0.89x the requested prompt tokens (over 1 ok requests): prompts "
                       "are 11% shorter",
                       "0.89");
    assert_int_equal(summary_prompt_off(100, 91), 0);
    assert_int_equal(summary_prompt_off(100, 111), 1);

    /* Every request a 4xx: said for llmload's words without a calibration
     * only. */
    stats_reset(&s);
    for (int i = 0; i < 20; i++) {
        struct record r;
        record_init(&r, (uint64_t)i);
        r.kind = REC_HTTP_4XX;
        r.http_status = 400;
        r.sched_ns = r.sent_ns = 0;
        r.end_ns = MS;
        r.prompt_tokens = 256;
        stats_add_record(&s, &r);
    }
    summary_prompt_note(buf, sizeof buf, &s, SUMMARY_PROMPTS_SYNTHETIC, &warning);
    assert_int_equal(warning, 1);
    assert_message_has(buf,
                       "all 20 requests failed with a 4xx, and the prompts had no "
                       "calibration",
                       "4xx");
    summary_prompt_note(buf, sizeof buf, &s, SUMMARY_PROMPTS_CALIBRATED, &warning);
    assert_string_equal(buf, "");
    summary_prompt_note(buf, sizeof buf, &s, SUMMARY_PROMPTS_OTHER, &warning);
    assert_string_equal(buf, "");
    stats_free(&s);
}

/* s holds n http_4xx records of the given status and nothing else. */
static void add_4xx(struct stats *s, int n, int status)
{
    stats_reset(s);
    for (int i = 0; i < n; i++) {
        struct record r;
        record_init(&r, (uint64_t)i);
        r.kind = REC_HTTP_4XX;
        r.http_status = status;
        r.sched_ns = r.sent_ns = 0;
        r.end_ns = MS;
        r.prompt_tokens = 256;
        stats_add_record(s, &r);
    }
}

/* Every request a 4xx: only a status a prompt's length can cause (400,
 * 413, 422) points at the tokenizer and calibrate; a 401 or 403 at the
 * key's flags, a 404 or 405 at --url and --api; a mix of causes says
 * nothing. The same in the summary, summary.json and the functions. */
static void test_status_note(void **state)
{
    struct stats s;
    char buf[512];
    int warning;
    stats_init(&s);
    struct summary_info info;
    memset(&info, 0, sizeof info);
    info.prompts = SUMMARY_PROMPTS_SYNTHETIC;
    info.window_ns = LL_NS_PER_SEC;

    add_4xx(&s, 5, 401);
    summary_prompt_note(buf, sizeof buf, &s, SUMMARY_PROMPTS_SYNTHETIC, &warning);
    assert_string_equal(buf, "");
    summary_status_note(buf, sizeof buf, &s);
    assert_string_equal(buf, "all 5 requests failed with a 401 or 403: does it need a key? "
                             "--api-key-env VAR sends $VAR, -H adds a header");
    char *out = print_to_string(&s, &info);
    assert_non_null(strstr(out, "warning: all 5 requests failed with a 401 or 403"));
    assert_null(strstr(out, "calibrat"));
    free(out);

    add_4xx(&s, 7, 404);
    summary_prompt_note(buf, sizeof buf, &s, SUMMARY_PROMPTS_SYNTHETIC, &warning);
    assert_string_equal(buf, "");
    summary_status_note(buf, sizeof buf, &s);
    assert_message_has(buf, "all 7 requests failed with a 404 or 405: is --url the API's base",
                       "404");
    assert_message_has(buf, "--api", "404");
    json_t *j = summary_json(&s, &info);
    assert_string_equal(json_string_value(json_object_get(j, "status_warning")), buf);
    assert_true(json_is_null(json_object_get(j, "prompt_warning")));
    json_decref(j);
    summary_status_warning(buf, sizeof buf, 2, status_cause_of(405));
    assert_message_has(buf, "is --url the API's base", "405");

    add_4xx(&s, 3, 400);
    summary_status_note(buf, sizeof buf, &s);
    assert_string_equal(buf, "");
    summary_prompt_note(buf, sizeof buf, &s, SUMMARY_PROMPTS_SYNTHETIC, &warning);
    assert_int_equal(warning, 1);
    assert_message_has(buf, "all 3 requests failed with a 4xx", "400");
    assert_message_has(buf, "llmload calibrate", "400");
    assert_int_equal(status_cause_of(413), STATUS_CAUSE_LENGTH);
    assert_int_equal(status_cause_of(422), STATUS_CAUSE_LENGTH);
    assert_int_equal(status_cause_of(403), STATUS_CAUSE_AUTH);
    assert_int_equal(status_cause_of(409), STATUS_CAUSE_OTHER);
    assert_int_equal(status_cause_of(0), STATUS_CAUSE_OTHER);

    /* A mix of a 400 and a 401: no cause is everyone's, nothing said. */
    struct record r;
    record_init(&r, 99);
    r.kind = REC_HTTP_4XX;
    r.http_status = 401;
    r.sched_ns = r.sent_ns = 0;
    r.end_ns = MS;
    stats_add_record(&s, &r);
    summary_status_note(buf, sizeof buf, &s);
    assert_string_equal(buf, "");
    summary_prompt_note(buf, sizeof buf, &s, SUMMARY_PROMPTS_SYNTHETIC, &warning);
    assert_string_equal(buf, "");
    stats_free(&s);
}

/* The cold start's section: its own counts and percentiles, the cached
 * share; "cold" is null in summary.json without one; the terminal line. */
static void test_cold(void **state)
{
    struct stats s, cold;
    stats_init(&s);
    stats_init(&cold);
    struct summary_info info;
    memset(&info, 0, sizeof info);
    json_t *root = summary_json(&s, &info);
    assert_true(json_is_null(json_object_get(root, "cold")));
    json_decref(root);

    /* 3 cold requests: TTFT 100, 200, 300 ms; 200 prompt tokens each, the
     * last two served 100 of them cached; one more that failed. */
    for (int i = 0; i < 3; i++) {
        struct record r;
        record_init(&r, (uint64_t)i);
        r.http_status = 200;
        r.sched_ns = r.sent_ns = 0;
        r.first_ns = r.first_content_ns = r.last_ns = (uint64_t)(i + 1) * 100 * MS;
        r.end_ns = r.first_ns + 10 * MS;
        r.prompt_tokens = 200;
        r.cached_tokens = i == 0 ? 0 : 100;
        r.cold = 1;
        stats_add_record(&cold, &r);
    }
    struct record f;
    record_init(&f, 3);
    f.kind = REC_HTTP_5XX;
    f.sched_ns = 0;
    f.end_ns = MS;
    stats_add_record(&cold, &f);
    cold.scheduled = 4;
    cold.sent = 4;
    info.cold = &cold;
    info.cold_requests = 4;
    root = summary_json(&s, &info);
    json_t *c = json_object_get(root, "cold");
    assert_int_equal(jint(c, "requests", NULL, NULL), 4);
    assert_int_equal(jint(c, "scheduled", NULL, NULL), 4);
    assert_int_equal(jint(c, "completed", NULL, NULL), 4);
    assert_int_equal(jint(c, "ok", NULL, NULL), 3);
    assert_int_equal(jint(c, "failed", NULL, NULL), 1);
    assert_int_equal(jint(c, "ttft_ns", "max", NULL), 300 * MS);
    assert_int_equal(jint(c, "e2e_ns", "max", NULL), 310 * MS);
    int64_t p50 = jint(c, "ttft_ns", "p50", NULL);
    assert_true(p50 >= (int64_t)(199 * MS) && p50 <= (int64_t)(201 * MS));
    assert_int_equal(jint(c, "prompt_tokens", NULL, NULL), 600);
    assert_int_equal(jint(c, "cached_tokens", NULL, NULL), 200);
    ASSERT_NEAR(jnum(c, "cached_share", NULL, NULL), 200.0 / 600.0, 1e-12);
    json_decref(root);

    char *buf = NULL;
    size_t len = 0;
    FILE *mf = open_memstream(&buf, &len);
    summary_print_cold(mf, &cold, 4);
    fclose(mf);
    assert_non_null(strstr(buf, "cold start: first 4 requests, 4 scheduled, 3 ok, 1 failed"));
    assert_non_null(strstr(buf, "max 300.00ms"));
    assert_non_null(strstr(buf, "cached 33.3% of input"));
    free(buf);
    stats_free(&cold);
    stats_free(&s);
}

/* The per-endpoint breakdown (several --url): two endpoints, the first
 * with 4 ok requests of TTFT 10-40 ms and 5 output tokens each, the
 * second with 2 http_5xx; a 2 s window. */
static void test_endpoints(void **state)
{
    struct stats s[2];
    stats_init(&s[0]);
    stats_init(&s[1]);
    for (int i = 0; i < 4; i++) {
        struct record r;
        record_init(&r, (uint64_t)(2 * i));
        r.http_status = 200;
        r.sched_ns = r.sent_ns = 0;
        r.first_ns = r.first_content_ns = (uint64_t)(i + 1) * 10 * MS;
        r.last_ns = r.first_ns + 40 * MS;
        r.end_ns = r.last_ns;
        r.output_tokens = 5;
        r.events = 5;
        r.tokens_source = REC_TOKENS_USAGE;
        r.endpoint = 0;
        stats_add_record(&s[0], &r);
        s[0].win_output_tokens += 5;
    }
    for (int i = 0; i < 2; i++) {
        struct record r;
        record_init(&r, (uint64_t)(2 * i + 1));
        r.kind = REC_HTTP_5XX;
        r.http_status = 500;
        r.sched_ns = 0;
        r.end_ns = MS;
        r.endpoint = 1;
        stats_add_record(&s[1], &r);
    }
    s[0].scheduled = 4;
    s[1].scheduled = 2;
    const struct summary_endpoint ep[2] = {{"http://a:1/v1", 3, &s[0]},
                                           {"http://b:2/v1", 1, &s[1]}};
    json_t *arr = summary_endpoints_json(ep, 2, 2 * LL_NS_PER_SEC);
    assert_int_equal(json_array_size(arr), 2);
    json_t *a = json_array_get(arr, 0), *b = json_array_get(arr, 1);
    assert_int_equal(jint(a, "index", NULL, NULL), 0);
    assert_string_equal(json_string_value(json_object_get(a, "url")), "http://a:1/v1");
    assert_int_equal(jint(a, "weight", NULL, NULL), 3);
    assert_int_equal(jint(a, "requests", NULL, NULL), 4);
    assert_int_equal(jint(a, "ok", NULL, NULL), 4);
    assert_int_equal(jint(a, "errors", NULL, NULL), 0);
    assert_int_equal(jint(a, "latency_ns", "ttft", "max"), 40 * MS);
    ASSERT_NEAR(jnum(a, "output_tokens_per_s", NULL, NULL), 10.0, 1e-9);
    assert_int_equal(jint(b, "requests", NULL, NULL), 2);
    assert_int_equal(jint(b, "errors", NULL, NULL), 2);
    assert_int_equal(jint(b, "by_kind", "http_5xx", NULL), 2);
    assert_true(json_is_null(
        json_object_get(json_object_get(json_object_get(b, "latency_ns"), "ttft"), "p50")));
    json_decref(arr);

    char *buf = NULL;
    size_t len = 0;
    FILE *mf = open_memstream(&buf, &len);
    summary_print_endpoints(mf, ep, 2, 2 * LL_NS_PER_SEC);
    summary_print_endpoints(mf, ep, 0, 2 * LL_NS_PER_SEC); /* nothing */
    fclose(mf);
    assert_non_null(strstr(buf, "by endpoint    requests      ok  errors"));
    assert_non_null(strstr(buf, "\n0                     4       4       0 "));
    assert_non_null(strstr(buf, "10.0  http://a:1/v1\n"));
    assert_non_null(strstr(buf, "\n1                     2       0       2          -      -"));
    assert_null(strstr(strstr(buf, "http://b:2/v1") + 1, "by endpoint"));
    free(buf);
    stats_free(&s[0]);
    stats_free(&s[1]);
}

/* summary_late_json: the bytes of "lateness_diagnosis" that a run, a
 * merge and a sweep step all write: its keys in order, the seconds and the
 * switches null unless both seconds are known, the cause as given. */
static void test_late_json(void **state)
{
    static const struct {
        struct summary_late l;
        const char *want;
    } cases[] = {
        {{.late_sends = 12,
          .asleep = 11,
          .cpu_s = 0.25,
          .wall_s = 9.5,
          .invol_switches = 239,
          .cause = VERDICT_LATE_ASLEEP},
         "{\"late_sends\": 12, \"asleep_when_due\": 11, \"worker_cpu_s\": 0.25, "
         "\"worker_wall_s\": 9.5, \"involuntary_switches\": 239, \"cause\": \"asleep\"}"},
        {{.late_sends = 3, .asleep = 1, .cpu_s = NAN, .wall_s = NAN, .cause = VERDICT_LATE_BUSY},
         "{\"late_sends\": 3, \"asleep_when_due\": 1, \"worker_cpu_s\": null, "
         "\"worker_wall_s\": null, \"involuntary_switches\": null, \"cause\": \"busy\"}"},
        {{.late_sends = 3,
          .cpu_s = 1,
          .wall_s = NAN,
          .invol_switches = 4,
          .cause = VERDICT_LATE_BUSY},
         "{\"late_sends\": 3, \"asleep_when_due\": 0, \"worker_cpu_s\": null, "
         "\"worker_wall_s\": null, \"involuntary_switches\": null, \"cause\": \"busy\"}"},
        {{.cpu_s = 0, .wall_s = 0, .cause = VERDICT_LATE_NONE},
         "{\"late_sends\": 0, \"asleep_when_due\": 0, \"worker_cpu_s\": 0.0, "
         "\"worker_wall_s\": 0.0, \"involuntary_switches\": 0, \"cause\": \"none\"}"},
    };
    for (size_t i = 0; i < LL_ARRAY_LEN(cases); i++) {
        json_t *j = summary_late_json(&cases[i].l);
        char *got = json_dumps(j, JSON_PRESERVE_ORDER);
        json_decref(j);
        assert_string_equal(got, cases[i].want);
        free(got);
    }
}

UNIT_TESTS(test_print, test_no_warmup, test_littles_law_dropped, test_throughput_dropped,
           test_throughput_intended, test_throughput_offering, test_session_span, test_endpoints,
           test_prompt_note, test_status_note, test_cold, test_json, test_cut_short,
           test_steady_unjudged, test_nothing_measured, test_attainment_of_judged,
           test_requests_cancelled, test_request_bytes, test_json_exact_percentiles,
           test_json_write_error, test_late_json)
