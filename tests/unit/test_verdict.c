/* Unit tests for verdict.c: the self-check, in proportion to what it judges.
 *
 * Each case builds the histograms a run would: every request's TTFT and
 * E2E as measured (from its scheduled time, its lateness included) and as
 * they would read had it left on time, plus the lateness of every send. */
#include "test.h"

#include <math.h>
#include <string.h>

#include "measure/hist.h"
#include "measure/stats.h"
#include "measure/verdict.h"

#define MS 1000000ULL

/* What a stats keeps of a run: the histograms, and the ok sends later
 * than STATS_LATE_KEPT_NS one by one (all n_late of them counted, the
 * first STATS_LATE_SENDS kept), as stats_add_record keeps them. */
struct load {
    struct hist *late, *ttft, *ttft_ontime, *e2e, *e2e_ontime;
    struct stats_late_send late_ok[STATS_LATE_SENDS];
    uint64_t n_late;
};

/* Each test gets an empty struct load in *state. */
static int setup(void **state)
{
    struct load *l = calloc(1, sizeof *l);
    struct hist **h[] = {&l->late, &l->ttft, &l->ttft_ontime, &l->e2e, &l->e2e_ontime};
    for (size_t i = 0; i < 5; i++)
        *h[i] = hist_new();
    *state = l;
    return 0;
}

static int teardown(void **state)
{
    struct load *l = *state;
    struct hist *h[] = {l->late, l->ttft, l->ttft_ontime, l->e2e, l->e2e_ontime};
    for (size_t i = 0; i < 5; i++)
        hist_free(h[i]);
    free(l);
    return 0;
}

/* n requests of on-time TTFT ttft and E2E e2e (ns), the first n_late of
 * them sent late_ns late, the rest on time; ok says whether they
 * count in the latencies (ok records) or only in the lateness. */
static void add(struct load *l, int n, uint64_t ttft, uint64_t e2e, int n_late, uint64_t late_ns,
                int ok)
{
    for (int i = 0; i < n; i++) {
        uint64_t late = i < n_late ? late_ns : 0;
        hist_record(l->late, late);
        if (!ok)
            continue;
        hist_record(l->ttft, ttft + late);
        hist_record(l->ttft_ontime, ttft);
        hist_record(l->e2e, e2e + late);
        hist_record(l->e2e_ontime, e2e);
        if (late > STATS_LATE_KEPT_NS && l->n_late < STATS_LATE_SENDS)
            l->late_ok[l->n_late] = (struct stats_late_send){ttft + late, e2e + late, late};
        l->n_late += late > STATS_LATE_KEPT_NS;
    }
}

/* Empty l again, for a second load in the same test. */
static void reset(struct load *l)
{
    struct hist *h[] = {l->late, l->ttft, l->ttft_ontime, l->e2e, l->e2e_ontime};
    for (size_t i = 0; i < 5; i++)
        hist_reset(h[i]);
    l->n_late = 0;
}

static struct verdict_input input(const struct load *l)
{
    struct verdict_input in = {.lateness = l->late,
                               .ttft = l->ttft,
                               .ttft_ontime = l->ttft_ontime,
                               .e2e = l->e2e,
                               .e2e_ontime = l->e2e_ontime,
                               .late_ok = l->late_ok,
                               .n_late_ok = l->n_late,
                               .kept = "the schedule"};
    return in;
}

/* The input of one load of ok requests: add(l, n, ttft, e2e, n_late,
 * late_ns, 1) into the empty l, then input(l). */
static struct verdict_input load_input(struct load *l, int n, uint64_t ttft, uint64_t e2e,
                                       int n_late, uint64_t late_ns)
{
    add(l, n, ttft, e2e, n_late, late_ns, 1);
    return input(l);
}

/* verdict_judge(in), which must return rc (1 INVALID, 0 valid): the verdict. */
static struct verdict judge(const struct verdict_input *in, int rc)
{
    struct verdict v;
    assert_int_equal(verdict_judge(in, &v), rc);
    return v;
}

/* text (a verdict's reason or warning, named by what) starts with prefix
 * ("" for any start) and contains a and b where they are not NULL; a
 * failure prints it whole. The prefix's length is its own, never counted
 * by hand. */
static void expect_text(const char *what, const char *text, const char *prefix, const char *a,
                        const char *b)
{
    if (strncmp(text, prefix, strlen(prefix)) != 0 || (a != NULL && strstr(text, a) == NULL) ||
        (b != NULL && strstr(text, b) == NULL))
        fail_msg("%s: \"%s\"", what, text);
}

/* The first user's run (issue 15): 290 sends, 3 of them 1.03 ms late
 * while the worker slept, on a 165 ms TTFT and 1.85 s E2E. Nothing a
 * millisecond moves: valid, with a warning that says whose it was. */
static void test_jitter_on_slow_server_is_a_warning(void **state)
{
    struct verdict_input in = load_input(*state, 290, 165 * MS, 1850 * MS, 3, 1030000);
    in.late_sends = 3;
    in.late_asleep = 3;
    struct verdict v = judge(&in, 0);
    assert_false(v.invalid);
    assert_true(v.warned);
    assert_string_equal(v.reason, "");
    ASSERT_IN_RANGE(v.lateness_p99_ns, 1.0 * MS, 1.05 * MS);
    expect_text("warning", v.warning, "schedule lateness p99 1.03ms moved ",
                "within the tolerance (max(1ms, 2% of ",
                "3 of the 3 sends later than 1ms came due while the worker slept");
    assert_non_null(v.worst.what);
    assert_true(v.worst.moved_ns <= v.worst.limit_ns);
    assert_true(v.worst.limit_ns >= 3 * MS); /* 2% of 165 ms */
}

/* The same 2 ms on every send against a server that answers in half a
 * millisecond: TTFT p50 goes from 0.5 to 2.5 ms. INVALID, saying what
 * moved, by how much, and whose the lateness was (busy, here). */
static void test_same_lateness_on_fast_server_is_invalid(void **state)
{
    struct verdict_input in = load_input(*state, 200, MS / 2, 2 * MS, 200, 2 * MS);
    in.late_sends = 200;
    in.late_asleep = 10;
    struct verdict v = judge(&in, 1);
    assert_false(v.warned);
    expect_text("reason", v.reason, "schedule lateness p99 2.00ms moved TTFT p50 by ",
                "(over max(1ms, 2% of ",
                "the generator could not keep the schedule (busy when 190 of the "
                "200 sends later than 1ms came due)");
    assert_string_equal(v.worst.what, "TTFT p50");
    ASSERT_IN_RANGE(v.worst.moved_ns, 1.95 * MS, 2.05 * MS);
    assert_int_equal(v.worst.limit_ns, VERDICT_MOVE_FLOOR_NS);
}

/* The tail alone: 2 of 200 sends 30 ms late on a 100 ms TTFT move p99
 * (the 198th value) only if they are in it: here they are, since late
 * requests are the slowest. 30 ms > 2% of 130 ms: INVALID, at a p99. */
static void test_tail_move_is_invalid(void **state)
{
    struct verdict_input in = load_input(*state, 200, 100 * MS, 400 * MS, 3, 30 * MS);
    struct verdict v = judge(&in, 1);
    assert_string_equal(v.worst.what, "TTFT p99");
}

/* The floor: 0.9 ms on every send of a 10 ms TTFT (9% of it) moves it by
 * less than 1 ms: valid, and a lateness p99 under 1 ms is no warning. A
 * tolerance cannot push the limit under the floor. */
static void test_floor(void **state)
{
    struct verdict_input in = load_input(*state, 100, 10 * MS, 50 * MS, 100, 900000);
    in.tolerance = 0.001;
    struct verdict v = judge(&in, 0);
    assert_false(v.warned);
    assert_string_equal(v.warning, "");
    assert_int_equal(v.worst.limit_ns, VERDICT_MOVE_FLOOR_NS);
}

/* The tolerance decides in between: 3 ms on a 100 ms TTFT is within 5%,
 * not within 2%. */
static void test_tolerance(void **state)
{
    struct verdict_input in = load_input(*state, 100, 100 * MS, 400 * MS, 100, 3 * MS);
    struct verdict v = judge(&in, 1);
    in.tolerance = 0.05;
    assert_int_equal(verdict_judge(&in, &v), 0);
    assert_true(v.warned);
    assert_non_null(strstr(v.warning, "(max(1ms, 5% of "));
}

/* Sending fewer than 99% of the window's scheduled requests is INVALID
 * when the caller asks (open loop), whatever the latencies say. */
static void test_achieved(void **state)
{
    struct verdict_input in = load_input(*state, 100, 100 * MS, 400 * MS, 0, 0);
    in.check_achieved = 1;
    in.scheduled = 1000;
    in.sent_in_window = 985;
    struct verdict v = judge(&in, 1);
    assert_string_equal(v.reason, "achieved send rate 98.5% of offered (< 99%): the generator "
                                  "fell behind");
    in.sent_in_window = 990;
    assert_int_equal(verdict_judge(&in, &v), 0);
    in.check_achieved = 0;
    in.sent_in_window = 10;
    assert_int_equal(verdict_judge(&in, &v), 0);
}

/* Without the on-time histograms (a caller that cannot know the moves),
 * the rule is lateness p99 over 1 ms; with them but no ok request, there
 * is nothing to move: a warning. */
static void test_without_moves(void **state)
{
    struct load *l = *state;
    add(l, 100, 0, 0, 100, 5 * MS, 0);
    struct verdict_input in = {.lateness = l->late};
    struct verdict v = judge(&in, 1);
    assert_string_equal(v.reason, "schedule lateness p99 5.00ms > 1ms");
    in = input(l);
    in.late_sends = 100;
    assert_int_equal(verdict_judge(&in, &v), 0);
    assert_true(v.warned);
    assert_null(v.worst.what);
    expect_text("warning", v.warning,
                "schedule lateness p99 5.00ms (too few ok requests to judge what it "
                "moved): the generator could not keep",
                NULL, NULL);
}

/* Lateness only on sends that failed (they are not in the latencies): the
 * warning says it moved nothing. */
static void test_moved_nothing(void **state)
{
    struct load *l = *state;
    add(l, 100, 100 * MS, 400 * MS, 0, 0, 1);
    add(l, 5, 0, 0, 5, 30 * MS, 0);
    struct verdict_input in = input(l);
    in.late_sends = 5;
    struct verdict v = judge(&in, 0);
    assert_int_equal(v.worst.moved_ns, 0);
    expect_text("warning", v.warning,
                "schedule lateness p99 29.95ms moved none of TTFT and E2E "
                "p50/p90/p99: the generator could not keep the schedule",
                NULL, NULL);
}

/* A percentile that is its sample's maximum is not judged: one request
 * decides it. 40 requests of 15 ms TTFT, the slowest of them (20 ms) sent
 * 5 ms late: p99 of 40 is that one request, so the run is valid, with the
 * warning. Three sends out of 200 late by 5 ms, at the top: p99 is the
 * 198th value, which they move: INVALID (taking the one on the rank down
 * to the limit would put p99 back within it, but the other two are in
 * the tail p99 speaks for: not one send's doing). */
static void test_max_not_judged(void **state)
{
    struct load *l = *state;
    add(l, 39, 15 * MS, 100 * MS, 0, 0, 1);
    add(l, 1, 20 * MS, 100 * MS, 1, 5 * MS, 1);
    struct verdict_input in = input(l);
    struct verdict v = judge(&in, 0);
    assert_true(v.warned);
    assert_true(v.worst.moved_ns < MS);

    reset(l);
    add(l, 197, 15 * MS, 100 * MS, 0, 0, 1);
    add(l, 3, 20 * MS, 100 * MS, 3, 5 * MS, 1);
    in = input(l);
    assert_int_equal(verdict_judge(&in, &v), 1);
    assert_string_equal(v.worst.what, "TTFT p99");
}

/* A percentile never moves by more than the largest lateness: taking at
 * most d off every value takes at most d off each order statistic. The
 * histograms' buckets can read more, and did against llama.cpp's
 * llama-server (openai-completions, 14 requests at 4/s): the first send
 * was 0.98 ms late and was the E2E p90 request (44.65 ms; 43.66 ms on
 * time, above the next, 41.24 ms), and the buckets around 44 ms read the
 * move as 1.05 ms, over the 1 ms floor: INVALID, exit 1, though no send
 * was 1 ms late. The records are that run's (TTFT, E2E, lateness, ns). */
static void test_move_bounded_by_lateness(void **state)
{
    static const uint64_t recs[][3] = {
        {20388024, 44645153, 983763}, {7812797, 32060425, 105032}, {8877718, 31204458, 50296},
        {10820242, 31699555, 40475},  {10070979, 41240145, 46758}, {8839644, 34784549, 35875},
        {11841975, 33491061, 63814},  {11896816, 35974771, 74953}, {8833487, 31563210, 54159},
        {11298490, 31907343, 90062},  {7051228, 29323008, 100714}, {11638141, 35521922, 73292},
        {13718366, 49057077, 89223},  {10098589, 38429178, 67982},
    };
    struct load *l = *state;
    for (size_t i = 0; i < LL_ARRAY_LEN(recs); i++) {
        hist_record(l->late, recs[i][2]);
        hist_record(l->ttft, recs[i][0]);
        hist_record(l->ttft_ontime, recs[i][0] - recs[i][2]);
        hist_record(l->e2e, recs[i][1]);
        hist_record(l->e2e_ontime, recs[i][1] - recs[i][2]);
    }
    struct verdict_input in = input(l);
    struct verdict v = judge(&in, 0);
    assert_false(v.invalid);
    assert_false(v.warned); /* lateness p99 0.98 ms: under the warning's 1 ms */
    assert_string_equal(v.worst.what, "E2E p90");
    assert_int_equal(v.worst.moved_ns, 983763);
    assert_int_equal(v.worst.limit_ns, VERDICT_MOVE_FLOOR_NS);
}

/* The load of the one-late-send tests: 29 requests whose TTFT p90 (the
 * 27th value) is the one send 1.7 ms late (30 ms on time, 31.7 ms as
 * measured; the 28th is 33 ms), the others on time. */
static void add_lone_p90(struct load *l)
{
    add(l, 26, 10 * MS, 100 * MS, 0, 0, 1);
    add(l, 1, 30 * MS, 130 * MS, 1, 1700000, 1);
    add(l, 1, 33 * MS, 133 * MS, 0, 0, 1);
    add(l, 1, 36 * MS, 136 * MS, 0, 0, 1);
}

/* Judge in into *v and check it is valid with a warning: one send 1.7 ms
 * late moved the TTFT p90 by about that, with sends_past sends past its
 * limit. */
static void judged_one_send(const struct verdict_input *in, uint64_t sends_past, struct verdict *v)
{
    assert_int_equal(verdict_judge(in, v), 0);
    assert_false(v->invalid);
    assert_true(v->warned);
    assert_string_equal(v->worst.what, "TTFT p90");
    ASSERT_IN_RANGE(v->worst.moved_ns, 1.65 * MS, 1.75 * MS);
    assert_int_equal(v->worst.sends_past_limit, sends_past);
}

/* A move over its limit by one send alone is not a finding: 29 requests,
 * their TTFT p90 (the 27th value) the one send 1.7 ms late (30 ms on
 * time, 31.7 ms as measured, the 28th 33 ms): the p90 moves 1.7 ms, over
 * the 1 ms floor, but no other send was later than 1 ms, so taking that
 * one send's lateness down to 1 ms would leave every move within it.
 * Valid, with a warning that names the send, what it moved and whose it
 * was. A second send 1.7 ms late (on a 10 ms request, which moves nothing
 * itself) leaves the move that one send's doing: taking the p90 request's
 * lateness down to the limit puts the p90 back within it. Valid, with a
 * warning that says so (three low-load runs against llama.cpp on a busy
 * 2-core VM of ten were INVALID this way, 2 or 3 sends past the limit,
 * one of them on the p90 request of 32). Without the sends one by one (a
 * verdict from histograms alone) two sends past the limit are INVALID. */
static void test_one_late_send_is_not_a_finding(void **state)
{
    struct load *l = *state;
    add_lone_p90(l);
    struct verdict_input in = input(l);
    in.late_sends = 1;
    in.late_asleep = 1;
    struct verdict v;
    judged_one_send(&in, 1, &v);
    expect_text("warning", v.warning, "one send 1.70ms late moved TTFT p90 by ",
                "(over max(1ms, 2% of ", "but no other was later than 1.00ms");
    expect_text("warning", v.warning, "", "one late send is not a finding about the run; ",
                "1 of the 1 sends later than 1ms came due while the worker slept");

    reset(l);
    add(l, 25, 10 * MS, 100 * MS, 0, 0, 1);
    add(l, 1, 10 * MS, 100 * MS, 1, 1700000, 1);
    add(l, 1, 30 * MS, 130 * MS, 1, 1700000, 1);
    add(l, 1, 33 * MS, 133 * MS, 0, 0, 1);
    add(l, 1, 36 * MS, 136 * MS, 0, 0, 1);
    in = input(l);
    in.late_sends = 2;
    in.late_asleep = 2;
    judged_one_send(&in, 2, &v);
    assert_int_equal(v.lone_late_ns, 1700000);
    expect_text("warning", v.warning, "one send 1.70ms late moved TTFT p90 by ",
                "and with it 1.00ms late every move would be within its limit: one late send "
                "is not a finding about the run; ",
                "2 of the 2 sends later than 1ms came due while the worker slept");

    in.late_ok = NULL;
    assert_int_equal(verdict_judge(&in, &v), 1);
    assert_string_equal(v.worst.what, "TTFT p90");
    assert_int_equal(v.worst.sends_past_limit, 2);
    expect_text("reason", v.reason, "schedule lateness p99 1.70ms moved TTFT p90 by ",
                "(over max(1ms, 2% of ", NULL);
}

/* Two sends' doing: 29 requests whose TTFT p90 (the 27th value) and the
 * value below it are both sends 1.7 ms late (30 and 30.2 ms on time,
 * 31.7 and 31.9 ms as measured). Taking either one's lateness down to the
 * 1 ms limit leaves the p90 1.5 ms or 1.7 ms over its on-time 30.2 ms:
 * INVALID. So is a load of more late sends than a stats keeps one by one
 * (they are no longer known each), where two past the limit suffice. */
static void test_two_late_sends_at_the_rank(void **state)
{
    struct load *l = *state;
    add(l, 25, 10 * MS, 100 * MS, 0, 0, 1);
    add(l, 1, 30 * MS, 130 * MS, 1, 1700000, 1);
    add(l, 1, 30200000, 130 * MS, 1, 1700000, 1);
    add(l, 1, 36 * MS, 136 * MS, 0, 0, 1);
    add(l, 1, 37 * MS, 137 * MS, 0, 0, 1);
    struct verdict_input in = input(l);
    struct verdict v = judge(&in, 1);
    assert_string_equal(v.worst.what, "TTFT p90");
    assert_int_equal(v.worst.sends_past_limit, 2);
    assert_int_equal(v.lone_late_ns, 0);

    /* The TTFT p99 request of 200 (the 198th) 1.7 ms late, and other
     * sends 1.2 ms late on 5 ms requests that move nothing: with
     * STATS_LATE_SENDS - 1 of them the move is that one send's doing;
     * with STATS_LATE_SENDS + 1 they are no longer known one by one, and
     * the move (1.7 ms of 31.7 ms) is INVALID. */
    for (int more = 0; more < 2; more++) {
        int fast = more ? STATS_LATE_SENDS + 1 : STATS_LATE_SENDS - 1;
        reset(l);
        add(l, fast, 5 * MS, 100 * MS, fast, 1200000, 1);
        add(l, 197 - fast, 10 * MS, 100 * MS, 0, 0, 1);
        add(l, 1, 30 * MS, 130 * MS, 1, 1700000, 1);
        add(l, 2, 36 * MS, 136 * MS, 0, 0, 1);
        in = input(l);
        assert_int_equal(l->n_late, (uint64_t)fast + 1);
        assert_int_equal(verdict_judge(&in, &v), more);
        assert_string_equal(v.worst.what, "TTFT p99");
        assert_int_equal(v.lone_late_ns, more ? 0 : 1700000);
    }
}

/* One request of on-time TTFT ttft_ns (E2E 90 ms more), sent late_ns late. */
static void add_one(struct load *l, uint64_t ttft_ns, uint64_t late_ns)
{
    add(l, 1, ttft_ns, ttft_ns + 90 * MS, 1, late_ns, 1);
}

/* Seed 000's coordinated-omission example, open loop: ten sends a second
 * apart into a server that freezes from t = 2 s to 7 s. The t = 0 send,
 * 38.7 ms late at start-up, is the TTFT p50 (50.7 ms as measured, 12 ms
 * on time) and moves it 27.7 ms; a fast send 1.5 ms late sits below it;
 * the t = 3 send, 10.7 ms late, reads 4.05 s, and 4.04 s on time: in the
 * tail whether late or not, it moves nothing at the p50. Taking the
 * t = 0 send's lateness down to the limit puts the p50 back (23 ms), so
 * the move is that one send's doing: valid, with a warning. It read
 * INVALID when any other late send sat at or above the percentile. A
 * send whose lateness did carry it across the rank (on time 10 ms, read
 * 4.05 s) still makes the point INVALID: with the t = 0 send's lateness
 * taken down, the p50 reads 35 ms against 30 ms on time. */
static void test_late_send_far_in_the_tail(void **state)
{
    struct load *l = *state;
    add_one(l, 20 * MS, 1500000);
    add_one(l, 21 * MS, 0);
    add_one(l, 22 * MS, 0);
    add_one(l, 23 * MS, 0);
    add_one(l, 12 * MS, 38700000);
    add_one(l, 4040 * MS, 10700000);
    for (uint64_t s = 1; s <= 4; s++)
        add_one(l, (s * 1000 + 10) * MS, 0);
    struct verdict_input in = input(l);
    in.late_sends = 3;
    in.late_asleep = 3;
    struct verdict v = judge(&in, 0);
    assert_false(v.invalid);
    assert_true(v.warned);
    assert_string_equal(v.worst.what, "TTFT p50");
    ASSERT_IN_RANGE(v.worst.moved_ns, 27.5 * MS, 27.9 * MS);
    assert_int_equal(v.lone_late_ns, 38700000);
    expect_text("warning", v.warning, "one send 38.70ms late moved TTFT p50 by ",
                "every move would be within its limit: one late send is not a finding",
                "3 of the 3 sends later than 1ms came due while the worker slept");

    reset(l);
    add_one(l, 20 * MS, 1500000);
    add_one(l, 25 * MS, 0);
    add_one(l, 30 * MS, 0);
    add_one(l, 35 * MS, 0);
    add_one(l, 12 * MS, 38700000);
    add_one(l, 10 * MS, 4040 * MS);
    for (uint64_t s = 1; s <= 4; s++)
        add_one(l, (s * 1000 + 10) * MS, 0);
    in = input(l);
    assert_int_equal(verdict_judge(&in, &v), 1);
    assert_string_equal(v.worst.what, "TTFT p50");
    assert_int_equal(v.lone_late_ns, 0);
}

/* The one-late-send warning is whole when whose it was is the longest
 * clause, preempted with the worker's figures: the send's sentence and
 * that clause together are longer than the 320 bytes the warning used to
 * have, which cut it mid-word. */
static void test_one_late_send_preempted_whole(void **state)
{
    struct load *l = *state;
    add_lone_p90(l);
    struct verdict_input in = input(l);
    in.late_sends = 1;
    in.cpu_ns = 220 * MS;
    in.wall_ns = 9500 * MS;
    in.invol_switches = 239;
    struct verdict v = judge(&in, 0);
    assert_true(v.warned);
    expect_text("warning", v.warning, "one send 1.70ms late moved TTFT p90 by ",
                "; preempted by the OS (the host's fault), not busy: awake when 1 of the 1 ",
                "was switched out 239 times against its will");
    size_t n = strlen(v.warning);
    assert_string_equal(v.warning + n - strlen("against its will"), "against its will");
}

/* Whose late sends were, from the counts alone: none late; most asleep
 * (whatever the CPU); awake with little CPU and involuntary switches
 * (preempted); awake with little CPU but never switched out, or with much
 * CPU however often switched out, or with no CPU figures (busy). */
static void test_late_cause(void **state)
{
    const uint64_t S = 1000 * MS; /* one second, ns */
    static const struct {
        uint64_t late, asleep, cpu_ns, wall_ns, invol;
        enum verdict_late_cause want;
    } c[] = {
        {0, 0, 0, 0, 0, VERDICT_LATE_NONE},
        {0, 0, S / 100, 10 * S, 500, VERDICT_LATE_NONE},
        {10, 5, 9 * S, 10 * S, 0, VERDICT_LATE_ASLEEP}, /* half asleep is enough */
        {10, 10, S / 100, 10 * S, 500, VERDICT_LATE_ASLEEP},
        {10, 4, S / 100, 10 * S, 500, VERDICT_LATE_PREEMPTED},
        /* The finding: 0.22 s of CPU in 9.5 s, 239 involuntary switches. */
        {2, 0, 220 * MS, 9500 * MS, 239, VERDICT_LATE_PREEMPTED},
        {2, 0, 220 * MS, 9500 * MS, 1, VERDICT_LATE_PREEMPTED},
        {2, 0, 220 * MS, 9500 * MS, 0, VERDICT_LATE_BUSY}, /* never switched out */
        /* test_busy_lateness_diagnosis: 6.7 s in 10.3 s, 7249 switches. */
        {19755, 0, 6700 * MS, 10300 * MS, 7249, VERDICT_LATE_BUSY},
        {100, 0, 2500 * MS, 10 * S, 50, VERDICT_LATE_BUSY}, /* a quarter is busy */
        {100, 0, 2499 * MS, 10 * S, 50, VERDICT_LATE_PREEMPTED},
        {100, 0, 0, 0, 50, VERDICT_LATE_BUSY}, /* CPU not known */
    };
    for (size_t i = 0; i < sizeof c / sizeof c[0]; i++) {
        enum verdict_late_cause got =
            verdict_late_cause(c[i].late, c[i].asleep, c[i].cpu_ns, c[i].wall_ns, c[i].invol);
        if (got != c[i].want)
            fail_msg("case %zu: %s, want %s", i, verdict_late_cause_name(got),
                     verdict_late_cause_name(c[i].want));
    }
    assert_string_equal(verdict_late_cause_name(VERDICT_LATE_NONE), "none");
    assert_string_equal(verdict_late_cause_name(VERDICT_LATE_ASLEEP), "asleep");
    assert_string_equal(verdict_late_cause_name(VERDICT_LATE_PREEMPTED), "preempted");
    assert_string_equal(verdict_late_cause_name(VERDICT_LATE_BUSY), "busy");
}

/* The reason says whose: preempted (with the worker's figures), or busy
 * (with them too, when known). */
static void test_preempted_reason(void **state)
{
    struct verdict_input in = load_input(*state, 200, MS / 2, 2 * MS, 200, 2 * MS);
    in.late_sends = 200;
    in.cpu_ns = 220 * MS;
    in.wall_ns = 9500 * MS;
    in.invol_switches = 239;
    struct verdict v = judge(&in, 1);
    expect_text("reason", v.reason, "",
                ": preempted by the OS (the host's fault), not busy: awake when 200 "
                "of the 200 sends later than 1ms came due, the worker used 220.00ms "
                "of CPU in 9.50s and was switched out 239 times against its will",
                NULL);
    assert_int_equal(v.cause, VERDICT_LATE_PREEMPTED);
    in.cpu_ns = 9000 * MS;
    assert_int_equal(verdict_judge(&in, &v), 1);
    expect_text("reason", v.reason, "",
                ": the generator could not keep the schedule (busy when 200 of the 200 "
                "sends later than 1ms came due; its workers used 9.00s of CPU in 9.50s)",
                NULL);
    assert_int_equal(v.cause, VERDICT_LATE_BUSY);
    in.late_asleep = 150;
    assert_int_equal(verdict_judge(&in, &v), 1);
    assert_int_equal(v.cause, VERDICT_LATE_ASLEEP);
}

/* The INVALID headline follows the cause the reason below it gives: the
 * host's fault when the worker slept or was preempted, the generator's
 * only when it was busy, the client's when not known. A host cause never
 * blames the generator (the headline once said "the load generator could
 * not keep its schedule" above "preempted by the OS (the host's fault),
 * not busy"). Each cause's name reads back to it, any other to NONE. */
static void test_invalid_headline(void **state)
{
    (void)state;
    static const struct {
        enum verdict_late_cause c;
        const char *want;
    } cases[] = {
        {VERDICT_LATE_NONE, "the client could not keep the schedule"},
        {VERDICT_LATE_ASLEEP, "the host (OS or VM) did not run the client on schedule"},
        {VERDICT_LATE_PREEMPTED, "the host (OS or VM) did not run the client on schedule"},
        {VERDICT_LATE_BUSY, "the load generator was too busy to keep the schedule"},
    };
    _Static_assert(LL_ARRAY_LEN(cases) == VERDICT_LATE_CAUSE_COUNT, "every cause");
    for (size_t i = 0; i < LL_ARRAY_LEN(cases); i++) {
        const char *h = verdict_invalid_headline(cases[i].c);
        assert_string_equal(h, cases[i].want);
        if (cases[i].c != VERDICT_LATE_BUSY)
            assert_null(strstr(h, "generator"));
        assert_int_equal(verdict_late_cause_from_name(verdict_late_cause_name(cases[i].c)),
                         cases[i].c);
    }
    assert_int_equal(verdict_late_cause_from_name(NULL), VERDICT_LATE_NONE);
    assert_int_equal(verdict_late_cause_from_name("stolen"), VERDICT_LATE_NONE);
}

/* A warm prefix cache: far above what the workload shares, with enough
 * requests, and the workload's share known; never otherwise. */
static void test_cache_carryover(void **state)
{
    char buf[320];
    /* The finding: 65.6% cached where the workload shares 11.5%. */
    assert_int_equal(verdict_cache_carryover(0.656, 0.115, 120, buf, sizeof buf), 1);
    assert_non_null(strstr(buf, "65.6%"));
    assert_non_null(strstr(buf, "11.5%"));
    assert_non_null(strstr(buf, "the server remembers an earlier run that sent these prompts "
                                "(the same --seed and --prompt-salt): use --prompt-salt auto "
                                "(the default), or restart it"));
    /* At the margin, not past it; a template's few shared tokens. */
    assert_int_equal(verdict_cache_carryover(0.315, 0.115, 120, buf, sizeof buf), 0);
    assert_string_equal(buf, "");
    assert_int_equal(verdict_cache_carryover(0.267, 0.290, 120, buf, sizeof buf), 0);
    /* Too few requests, or nothing known to compare with. */
    assert_int_equal(
        verdict_cache_carryover(0.9, 0.0, VERDICT_CACHE_MIN_REQUESTS - 1, buf, sizeof buf), 0);
    assert_int_equal(verdict_cache_carryover(0.9, 0.0, VERDICT_CACHE_MIN_REQUESTS, buf, sizeof buf),
                     1);
    assert_int_equal(verdict_cache_carryover(0.9, NAN, 1000, buf, sizeof buf), 0);
    assert_int_equal(verdict_cache_carryover(NAN, 0.1, 1000, buf, sizeof buf), 0);
    assert_string_equal(buf, "");
}

TEST_MAIN(cmocka_unit_test_setup_teardown(test_max_not_judged, setup, teardown),
          cmocka_unit_test_setup_teardown(test_move_bounded_by_lateness, setup, teardown),
          cmocka_unit_test_setup_teardown(test_one_late_send_is_not_a_finding, setup, teardown),
          cmocka_unit_test_setup_teardown(test_one_late_send_preempted_whole, setup, teardown),
          cmocka_unit_test_setup_teardown(test_moved_nothing, setup, teardown),
          cmocka_unit_test_setup_teardown(test_jitter_on_slow_server_is_a_warning, setup, teardown),
          cmocka_unit_test_setup_teardown(test_same_lateness_on_fast_server_is_invalid, setup,
                                          teardown),
          cmocka_unit_test_setup_teardown(test_tail_move_is_invalid, setup, teardown),
          cmocka_unit_test_setup_teardown(test_two_late_sends_at_the_rank, setup, teardown),
          cmocka_unit_test_setup_teardown(test_late_send_far_in_the_tail, setup, teardown),
          cmocka_unit_test_setup_teardown(test_floor, setup, teardown),
          cmocka_unit_test_setup_teardown(test_tolerance, setup, teardown),
          cmocka_unit_test_setup_teardown(test_achieved, setup, teardown),
          cmocka_unit_test_setup_teardown(test_without_moves, setup, teardown),
          cmocka_unit_test(test_cache_carryover), cmocka_unit_test(test_late_cause),
          cmocka_unit_test(test_invalid_headline),
          cmocka_unit_test_setup_teardown(test_preempted_reason, setup, teardown))
