/* Integration tests of `llmload run --sessions` (the partly-open model)
 * against `llmload sim` on 127.0.0.1.
 *
 * Exact checks only: a turn's intended time is the previous turn's end
 * plus the think time (integers from the same record file), and its prompt
 * as the sim counted it is the sum of the earlier prompts and outputs plus
 * its own, because the sim counts chat messages joined by "\n" under its
 * whitespace tokenizer (docs/sim.md) and every turn resends the history. */
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "harness.h"
#include "test.h"
#include "util/util.h"

#define MS 1000000LL
#define MAX_SESSIONS 200
#define MAX_TURNS 8

struct recs {
    struct harness_recs *all;
    /* by[session][turn]: the record, NULL when absent */
    json_t *by[MAX_SESSIONS][MAX_TURNS];
};

/* Every run: `llmload run ... --no-metrics <args>`. */
static const char *const no_metrics[] = {"--no-metrics", NULL};

/* Load dir/requests.jsonl and index it by (session, turn); a second record
 * for the same turn fails the test. */
static void recs_load(struct recs *r, const char *dir)
{
    r->all = harness_requests_load(dir);
    for (size_t i = 0; i < r->all->n; i++) {
        json_t *j = r->all->items[i];
        int64_t s = harness_ival(j, "session"), t = harness_ival(j, "turn");
        assert_true(s >= 0 && s < MAX_SESSIONS);
        assert_true(t >= 0 && t < MAX_TURNS);
        assert_null(r->by[s][t]);
        r->by[s][t] = j;
        assert_int_equal(harness_ival(j, "id"), s * 1000 + t);
    }
}

static void recs_free(struct recs *r)
{
    harness_recs_free(r->all);
    free(r);
}

/* 6 sessions of 4 turns, 30 ms think, 16-token prompts and 3-12 token
 * answers (ignore_eos: each answer is exactly its max_tokens): 24 records,
 * one per (session, turn); turn k+1 intended exactly 30 ms after turn k
 * ended; turn k's prompt on the server is 16 (k + 1) plus every earlier
 * answer. api: the --api to speak (the Responses API sends the history as
 * "input" items, and the sim counts them as chat's messages). */
static void sessions_think_and_context(const char *api)
{
    const char *sargs[] = {"--profile", "instant", NULL};
    const char *args[] = {"--sessions",
                          "20",
                          "--arrival",
                          "constant",
                          "--requests",
                          "6",
                          "--turns",
                          "4",
                          "--think",
                          "30ms",
                          "--prompt-tokens",
                          "16",
                          "--output-tokens",
                          "uniform:3,12",
                          "--ignore-eos",
                          "--api",
                          api,
                          NULL};
    char *dir = harness_run_on_sim(sargs, no_metrics, args);

    struct recs *r = calloc(1, sizeof *r);
    recs_load(r, dir);
    assert_int_equal(r->all->n, 24);
    for (int s = 0; s < 6; s++) {
        int64_t context = 0;
        for (int t = 0; t < 4; t++) {
            json_t *x = r->by[s][t];
            if (!x)
                fail_msg("session %d turn %d has no record", s, t);
            assert_string_equal(harness_sval(x, "kind"), "ok");
            assert_int_equal(harness_ival(x, "prompt_tokens"), context + 16);
            assert_int_equal(harness_ival(x, "prompt_tokens_server"), context + 16);
            assert_int_equal(harness_ival(x, "output_tokens"), harness_ival(x, "max_tokens"));
            if (t > 0)
                assert_int_equal(harness_ival(x, "sched_ns"),
                                 harness_ival(r->by[s][t - 1], "end_ns") + 30 * MS);
            else
                assert_int_equal(harness_ival(x, "sched_ns"), 50 * MS * s); /* constant 20/s */
            context += 16 + harness_ival(x, "output_tokens");
        }
    }
    json_t *sj = harness_summary_load(dir);
    json_t *ses = json_object_get(sj, "sessions");
    assert_non_null(ses);
    assert_int_equal(harness_ival(ses, "started"), 6);
    assert_int_equal(harness_ival(ses, "cut"), 0);
    ASSERT_NEAR(json_real_value(json_object_get(ses, "intended_request_rate_per_s")), 80.0,
                1e-9);
    assert_int_equal(harness_ival(json_object_get(sj, "requests"), "scheduled"), 24);
    json_decref(sj);
    recs_free(r);
    harness_results_free(dir);
}

static void test_sessions_think_and_context(void **state)
{
    sessions_think_and_context("openai-chat");
}

static void test_sessions_responses(void **state)
{
    sessions_think_and_context("openai-responses");
}

/* A duration-bounded run with drawn turn counts: every session's turns are
 * 0..m-1 with no gap and no repeat, every turn scheduled has its record
 * (records == scheduled), each later turn is intended no earlier than the
 * previous end, and the context still grows exactly. */
static void test_sessions_every_turn_one_record(void **state)
{
    const char *sargs[] = {"--profile", "instant", NULL};
    const char *args[] = {"--sessions", "30", "--duration", "1s", "--turns", "uniform:1,6",
                          "--think", "uniform:5ms,40ms", "--prompt-tokens", "8",
                          "--output-tokens", "4", "--ignore-eos", "--seed", "3", NULL};
    char *dir = harness_run_on_sim(sargs, no_metrics, args);

    struct recs *r = calloc(1, sizeof *r);
    recs_load(r, dir);
    assert_true(r->all->n > 10);
    size_t seen = 0;
    for (int s = 0; s < MAX_SESSIONS; s++) {
        int t = 0;
        while (t < MAX_TURNS && r->by[s][t]) {
            json_t *x = r->by[s][t];
            assert_int_equal(harness_ival(x, "prompt_tokens_server"), 8 + t * (8 + 4));
            if (t > 0)
                assert_true(harness_ival(x, "sched_ns") >=
                            harness_ival(r->by[s][t - 1], "end_ns") + 5 * MS);
            t++;
            seen++;
        }
        for (int k = t; k < MAX_TURNS; k++)
            assert_null(r->by[s][k]); /* no gap in a session's turns */
    }
    assert_int_equal(seen, r->all->n);
    json_t *sj = harness_summary_load(dir);
    assert_int_equal(harness_ival(json_object_get(sj, "requests"), "scheduled"),
                     (int64_t)r->all->n);
    json_decref(sj);
    recs_free(r);
    harness_results_free(dir);
}

/* Walk every session of r (fixed turns of `turns`, `prompt` tokens of its
 * own each) as the client must have sent it: turns 0..m-1 with no gap; a
 * turn that failed (a kind but ok and cancelled) before the last ends the
 * session; each turn sends its own prompt after every earlier turn's
 * prompt and answer, except a turn cancelled before its first token,
 * which is resent not at all (no empty assistant message). Counts the
 * sessions a failed turn ended, and the turns sent after such an
 * unanswered one, into *failed and *after_unanswered. */
static void sessions_walk(const struct recs *r, int turns, int64_t prompt, int64_t *failed,
                          int64_t *after_unanswered)
{
    *failed = *after_unanswered = 0;
    for (int s = 0; s < MAX_SESSIONS; s++) {
        int64_t context = 0;
        int unanswered = 0, t = 0;
        for (; t < turns && r->by[s][t]; t++) {
            json_t *x = r->by[s][t];
            const char *kind = harness_sval(x, "kind");
            int64_t out = harness_ival(x, "output_tokens");
            if (harness_ival(x, "prompt_tokens") != context + prompt)
                fail_msg("session %d turn %d sent %lld prompt tokens, its history %lld", s, t,
                         (long long)harness_ival(x, "prompt_tokens"),
                         (long long)(context + prompt));
            if (strcmp(kind, "ok") == 0)
                assert_int_equal(harness_ival(x, "prompt_tokens_server"), context + prompt);
            *after_unanswered += unanswered;
            if (strcmp(kind, "cancelled") == 0 && out == 0) {
                unanswered = 1;
                continue;
            }
            context += prompt + out;
            if (strcmp(kind, "ok") != 0 && strcmp(kind, "cancelled") != 0 && t < turns - 1) {
                (*failed)++;
                t++;
                break;
            }
        }
        for (int k = t; k < MAX_TURNS; k++)
            if (r->by[s][k])
                fail_msg("session %d has turn %d after its end (turn %d)", s, k, t - 1);
    }
}

/* A turn the server failed ends its session: the sim answers 30% of
 * requests with a 500 (drawn from its seed), 20 sessions of 4 turns. A
 * session whose turn failed before its last sends no turn after it (it
 * used to go on with an empty assistant message for the failed turn),
 * summary.json's sessions.failed counts those sessions, and every other
 * turn's prompt is still exactly its history. Premise, by construction:
 * 60 turns that are not a last one, each failed with probability 0.3, so
 * at least one session ends this way (0.7^60 < 1e-9 otherwise). */
static void test_sessions_failed_turn_ends(void **state)
{
    const char *sargs[] = {"--profile", "instant", "--fault", "500:0.3", NULL};
    const char *args[] = {"--sessions",      "50", "--arrival",       "constant",
                          "--requests",      "20", "--turns",         "4",
                          "--prompt-tokens", "8",  "--output-tokens", "4",
                          "--ignore-eos",    NULL};
    char *dir = harness_run_on_sim(sargs, no_metrics, args);
    struct recs *r = calloc(1, sizeof *r);
    recs_load(r, dir);
    int64_t failed, after;
    sessions_walk(r, 4, 8, &failed, &after);
    assert_true(failed > 0);
    json_t *sj = harness_summary_load(dir);
    json_t *ses = json_object_get(sj, "sessions");
    assert_int_equal(harness_ival(ses, "failed"), failed);
    assert_int_equal(harness_ival(ses, "started"), 20);
    json_decref(sj);
    recs_free(r);
    harness_results_free(dir);
}

/* sessions.failed counts the window's sessions, as sessions.started does:
 * 30 sessions of 4 turns at 20/s, the first 20 arriving in the 1 s
 * warm-up, the sim failing 30% of requests. The count is the sessions
 * that arrived at 1 s or later whose turn before the last failed, from
 * the records (it used to count the warm-up's too, so "10 started, 12
 * ended by a failed turn" could be printed). Premise, by construction:
 * 20 warm-up sessions of 3 turns that are not a last one, each failed
 * with probability 0.3, so one of them fails (0.7^60 < 1e-9 otherwise). */
static void test_sessions_failed_of_window(void **state)
{
    const char *sargs[] = {"--profile", "instant", "--fault", "500:0.3", NULL};
    const char *args[] = {"--sessions",      "20", "--arrival",       "constant",
                          "--requests",      "30", "--warmup",        "1s",
                          "--turns",         "4",  "--prompt-tokens", "8",
                          "--output-tokens", "4",  "--ignore-eos",    NULL};
    char *dir = harness_run_on_sim(sargs, no_metrics, args);
    struct recs *r = calloc(1, sizeof *r);
    recs_load(r, dir);
    int64_t in_window = 0, failed[2] = {0, 0};
    for (int s = 0; s < MAX_SESSIONS; s++) {
        if (!r->by[s][0])
            continue;
        int win = harness_ival(r->by[s][0], "sched_ns") >= 1000000000;
        in_window += win;
        for (int t = 0; t < 3 && r->by[s][t]; t++) {
            const char *kind = harness_sval(r->by[s][t], "kind");
            if (strcmp(kind, "ok") != 0 && strcmp(kind, "cancelled") != 0) {
                failed[win]++;
                break;
            }
        }
    }
    assert_int_equal(in_window, 10);
    assert_true(failed[0] > 0);
    json_t *sj = harness_summary_load(dir);
    json_t *ses = json_object_get(sj, "sessions");
    assert_int_equal(harness_ival(ses, "started"), in_window);
    assert_int_equal(harness_ival(ses, "failed"), failed[1]);
    json_decref(sj);
    recs_free(r);
    harness_results_free(dir);
}

/* sessions.cut counts the window's sessions too: 20 sessions at 10/s of
 * 100 turns 400 ms apart, in a 2 s run whose first second is warm-up, so
 * every session is cut (a next turn past --duration, or open at its end)
 * and cut equals started, the sessions that arrived at 1 s or later by
 * the records. It used to count the warm-up's as well ("10 started, 20
 * cut short"). Premise, by construction: the first session arrives at 0,
 * in the warm-up. */
static void test_sessions_cut_of_window(void **state)
{
    const char *sargs[] = {"--profile", "instant", NULL};
    const char *args[] = {
        "--sessions",      "10", "--arrival",       "constant", "--duration",   "2s",
        "--warmup",        "1s", "--turns",         "100",      "--think",      "400ms",
        "--prompt-tokens", "8",  "--output-tokens", "2",        "--ignore-eos", NULL};
    char *dir = harness_run_on_sim(sargs, no_metrics, args);
    struct harness_recs *all = harness_requests_load(dir);
    int64_t in_window = 0, warm = 0;
    for (size_t i = 0; i < all->n; i++) {
        json_t *x = all->items[i];
        if (harness_ival(x, "turn") != 0)
            continue;
        if (harness_ival(x, "sched_ns") >= 1000000000)
            in_window++;
        else
            warm++;
    }
    assert_true(warm > 0);
    json_t *sj = harness_summary_load(dir);
    json_t *ses = json_object_get(sj, "sessions");
    assert_int_equal(harness_ival(ses, "started"), in_window);
    assert_int_equal(harness_ival(ses, "cut"), in_window);
    assert_int_equal(harness_ival(ses, "failed"), 0);
    json_decref(sj);
    harness_recs_free(all);
    harness_results_free(dir);
}

/* 10 sessions of 4 turns (8-token prompts, output_tokens tokens each) on a
 * sim whose every step lasts 30 ms or more, half the turns cancelled by
 * cancel_flag cancel_value (drawn per request from the seed); every
 * turn's prompt walked against its history (sessions_walk), no session
 * ended by a failure, 40 records. Returns the records; *after is
 * sessions_walk's count of turns sent after an unanswered one. */
static struct recs *sessions_cancel_run(const char *output_tokens, const char *cancel_flag,
                                        const char *cancel_value, int64_t *after, char **dir)
{
    const char *sargs[] = {"--profile", "instant", "--step-base", "30ms", NULL};
    const char *args[] = {"--sessions",
                          "50",
                          "--arrival",
                          "constant",
                          "--requests",
                          "10",
                          "--turns",
                          "4",
                          "--prompt-tokens",
                          "8",
                          "--output-tokens",
                          output_tokens,
                          "--ignore-eos",
                          "--cancel-fraction",
                          "0.5",
                          cancel_flag,
                          cancel_value,
                          NULL};
    *dir = harness_run_on_sim(sargs, no_metrics, args);
    struct recs *r = calloc(1, sizeof *r);
    recs_load(r, *dir);
    int64_t failed;
    sessions_walk(r, 4, 8, &failed, after);
    assert_int_equal(failed, 0);
    assert_int_equal(r->all->n, 40);
    return r;
}

/* A turn cancelled before its first token is left out of what later turns
 * resend, and one cancelled after it keeps its partial answer: no token
 * comes before a 1 ms cancellation on the sim's 30 ms steps (the client
 * would have to fire it 29 ms late). Premise, by construction: 10
 * sessions of 4 turns have 30 turns that are not a last one, each
 * cancelled with probability 0.5, so some unanswered turn has a later turn
 * (0.5^30 < 1e-9 otherwise). */
static void test_sessions_cancelled_unanswered_left_out(void **state)
{
    char *dir;
    int64_t after;
    struct recs *r = sessions_cancel_run("2", "--cancel-after", "1ms", &after, &dir);
    assert_true(after > 0);
    recs_free(r);
    harness_results_free(dir);
}

/* --cancel-after-tokens in sessions: a turn cancelled after its first
 * token keeps its partial answer, and later turns resend exactly that
 * many tokens of it (the walk checks every prompt against its history,
 * the sim's own count on every ok turn). Premise, by construction: a
 * cancellation comes after a token, so every cancelled turn has an answer
 * (never 0 tokens, so none is left out; the sim's 30 ms steps keep it
 * short of the 6 asked, though the walk holds whatever count it got), and
 * some cancelled turn has a later turn (0.5^30 < 1e-9 otherwise, as
 * above). */
static void test_sessions_cancel_after_tokens_partial(void **state)
{
    char *dir;
    int64_t after;
    struct recs *r = sessions_cancel_run("6", "--cancel-after-tokens", "1", &after, &dir);
    assert_int_equal(after, 0);
    int partial_then_more = 0;
    for (int s = 0; s < MAX_SESSIONS; s++)
        for (int t = 0; t + 1 < 4 && r->by[s][t + 1]; t++) {
            json_t *x = r->by[s][t];
            if (strcmp(harness_sval(x, "kind"), "cancelled") == 0) {
                int64_t out = harness_ival(x, "output_tokens");
                if (out < 1)
                    fail_msg("session %d turn %d cancelled with %lld tokens", s, t, (long long)out);
                partial_then_more = 1;
            }
        }
    assert_true(partial_then_more);
    recs_free(r);
    harness_results_free(dir);
}

/* A session run's steadiness is not judged (summary.json's steady and
 * steady_warning null): sessions arrive for as long as the run lasts and
 * each stays, so the requests in the system grow with the run by design.
 * 8 sessions/s of 100 turns 300 ms apart over 3 s: the sessions in the
 * system grow to 24, the turns in flight with them, and the rule a sweep
 * step uses read "not steady: in-flight requests grew by 8.9" (the
 * parent) against a server that kept up. */
static void test_sessions_steady_not_judged(void **state)
{
    const char *args[] = {"--sessions",      "8",   "--arrival",       "constant",
                          "--turns",         "100", "--think",         "300ms",
                          "--prompt-tokens", "32",  "--output-tokens", "32",
                          "--duration",      "3s",  "--ignore-eos",    NULL};
    char *dir = harness_run_on_sim(NULL, no_metrics, args);
    json_t *sj = harness_summary_load(dir);
    assert_true(harness_is_null(sj, "steady"));
    assert_true(harness_is_null(sj, "steady_warning"));
    HARNESS_HAS(harness_sval(sj, "steady_unjudged"), "not judged: under --sessions ");
    assert_true(harness_ival(json_object_get(sj, "sessions"), "started") >= 20);
    json_decref(sj);
    harness_results_free(dir);
}

/* Each turn of the session-rate test: 8 prompt tokens, 4 of answer. */
#define SMALL_TURN "--prompt-tokens", "8", "--output-tokens", "4", "--ignore-eos"

/* `llmload ARGS...`, exit 0 or 1 (INVALID: a late wake on a shared
 * machine, which moves no figure here): its "sessions:" line and, when
 * there is one, the line beneath it that says what the rates are over
 * (caller frees). */
static char *run_session_lines(const char *const *args)
{
    return harness_run_lines(args, "sessions:   ", "            (sessions: ");
}

/* The sessions object of summaries a and b the same, key for key. */
static void sessions_equal(json_t *a, json_t *b, const char *what)
{
    json_t *x = json_object_get(a, "sessions"), *y = json_object_get(b, "sessions");
    if (!x || !y || !json_equal(x, y)) {
        char *sx = x ? json_dumps(x, 0) : NULL, *sy = y ? json_dumps(y, 0) : NULL;
        fail_msg("%s: sessions %s, the run's %s", what, sy ? sy : "absent", sx ? sx : "absent");
    }
}

/* A count that ends the session arrivals: 8 sessions at a constant 20/s
 * (0 to 350 ms) of 3 turns 200 ms apart, after a 100 ms warm-up, so the
 * window (from 100 ms) runs on past the last start, at 350 ms, for the
 * later turns and the drain, to 750 ms or more. The realised session rate
 * is over the span from the window's start to the last start, half-open
 * as the window is: by the records, 6 starts (100 to 350 ms), the 5
 * before the last in 250 ms, 20/s exactly, the span in summary.json's
 * arrivals_ns and said on the line beneath; the request rate stays the
 * turns scheduled in the window over the window. The parent divided the
 * 6 sessions by the window (7.2/s on an idle machine, a third of the
 * intended rate). One shard of one (`--shard 0/1`), merged alone and
 * rebuilt by `llmload report`: the same sessions object, the same lines.
 * --duration 500ms alone ends the arrivals with the window: over it, no
 * arrivals_ns. */
static void test_sessions_rate_over_arrivals(void **state)
{
    (void)state;
    char url[160], dir[600], merged[600], dur[600];
    harness_sim_v1_start(url, sizeof url, (const char *const[]){"--profile", "instant", NULL});
    harness_tmp_path(dir, sizeof dir, "run");
    harness_tmp_path(merged, sizeof merged, "merged");
    harness_tmp_path(dur, sizeof dur, "duration");
    const char *run[] = {"run",        "--url",
                         url,          "--out",
                         dir,          "--shard",
                         "0/1",        "--seed",
                         "9",          "--prompt-salt",
                         "5",          "--no-metrics",
                         "--sessions", "20",
                         "--arrival",  "constant",
                         "--requests", "8",
                         "--warmup",   "100ms",
                         "--turns",    "3",
                         "--think",    "200ms",
                         SMALL_TURN,   NULL};
    char *run_lines = run_session_lines(run);

    struct harness_recs *all = harness_requests_load(dir);
    int64_t n = 0, last = -1, sched_in = 0;
    for (size_t i = 0; i < all->n; i++) {
        int64_t t = harness_ival_req(all->items[i], "sched_ns");
        sched_in += t >= 100 * MS;
        if (harness_ival(all->items[i], "turn") != 0 || t < 100 * MS)
            continue;
        n++;
        last = t > last ? t : last;
    }
    harness_recs_free(all);
    assert_int_equal(n, 6);
    assert_int_equal(last, 350 * MS);

    json_t *sj = harness_summary_load(dir);
    json_t *ses = json_object_get(sj, "sessions");
    int64_t window = harness_ival_req(sj, "window_ns");
    assert_true(window > 600 * MS); /* past the last start, by two think times */
    assert_int_equal(harness_ival(ses, "started"), n);
    ASSERT_NEAR(harness_num(ses, "realised_rate_per_s"),
                (double)(n - 1) / ((double)(last - 100 * MS) / 1e9), 1e-9);
    ASSERT_NEAR(harness_num(ses, "realised_rate_per_s"), 20, 1e-9);
    assert_int_equal(harness_ival_req(ses, "arrivals_ns"), last - 100 * MS);
    ASSERT_NEAR(harness_num(ses, "realised_request_rate_per_s"),
                (double)sched_in / ((double)window / 1e9), 1e-9);
    const char *has[] = {"realised 20.00/s (6 started",
                         "(sessions: 5 starts in the 250.00ms up to the last; requests over the ",
                         NULL};
    harness_text_check("the run's sessions lines", run_lines, has, NULL);

    const char *m[] = {"merge", dir, "--out", merged, NULL};
    char *merge_lines = run_session_lines(m);
    assert_string_equal(merge_lines, run_lines);
    json_t *sm = harness_summary_load(merged);
    sessions_equal(sj, sm, "merged");
    const char *rep[] = {"report", merged, NULL};
    char *report_lines = run_session_lines(rep);
    assert_string_equal(report_lines, run_lines);
    json_t *sr = harness_summary_load(merged);
    sessions_equal(sj, sr, "rebuilt");
    json_decref(sr);
    json_decref(sm);
    json_decref(sj);
    free(report_lines);
    free(merge_lines);
    free(run_lines);

    const char *bydur[] = {"run",          "--url",      url,       "--out",     dur,
                           "--no-metrics", "--sessions", "20",      "--arrival", "constant",
                           "--duration",   "500ms",      "--turns", "2",         "--think",
                           "100ms",        SMALL_TURN,   NULL};
    char *dur_lines = run_session_lines(bydur);
    assert_null(strstr(dur_lines, "(sessions: "));
    sj = harness_summary_load(dur);
    ses = json_object_get(sj, "sessions");
    assert_true(harness_is_null(ses, "arrivals_ns"));
    ASSERT_NEAR(harness_num(ses, "realised_rate_per_s"), (double)harness_ival(ses, "started") / 0.5,
                1e-9);
    assert_int_equal(harness_ival(ses, "started"), 10);
    json_decref(sj);
    free(dur_lines);
}

/* One turn a session: every request is a session's start, so the
 * throughput line's scheduled rate over the offering and the realised
 * session rate count the same arrivals over the same span, and read the
 * same, the arrivals before the last over the span to it: 8 constant
 * arrivals at 4/s end at 1.75 s, 7 / 1.75 s = 4.00/s for both, where the
 * parent's scheduled rate counted all 8 (4.57/s). */
static void test_sessions_one_turn_rates_agree(void **state)
{
    (void)state;
    harness_instant_sim_start();
    const char *args[] = {
        "--no-metrics", "--sessions", "4",        "--arrival", "constant", "--turns", "1",
        "--requests",   "8",          SMALL_TURN, NULL};
    char *out = NULL, *err = NULL;
    char *dir = harness_run_sim_verdict("run", args, 60, &out, &err);
    HARNESS_HAS(out, "(scheduled 4.00 req/s over the 1.75s of offering)",
                "realised 4.00/s (8 started");
    free(out);
    free(err);
    json_t *sj = harness_summary_load(dir);
    json_t *thr = json_object_get(sj, "throughput"), *ses = json_object_get(sj, "sessions");
    assert_int_equal(harness_ival_req(thr, "offering_ns"), 1750 * MS);
    assert_int_equal(harness_ival_req(ses, "arrivals_ns"), 1750 * MS);
    ASSERT_NEAR(harness_num(thr, "scheduled_offering_rate_per_s"), 4, 1e-9);
    ASSERT_NEAR(harness_num(ses, "realised_rate_per_s"), 4, 1e-9);
    json_decref(sj);
    harness_results_free(dir);
}

/* The number of distinct sessions among all's records; counts[s] gets
 * session s's number of records (every session below n_counts). */
static int64_t sessions_distinct(struct harness_recs *all, int64_t *counts, size_t n_counts)
{
    int64_t n = 0;
    memset(counts, 0, n_counts * sizeof *counts);
    for (size_t i = 0; i < all->n; i++) {
        int64_t s = harness_ival(all->items[i], "session");
        assert_true(s >= 0 && (size_t)s < n_counts);
        n += counts[s]++ == 0;
    }
    return n;
}

/* The spend guard ends the session arrivals: 10 constant sessions/s of
 * 2 turns (20-token prompts, 10-token answers, the second resending the
 * first's 30) against --max-tokens-total 300 within a 3 s run. The guard
 * refuses a turn at about 300 ms; from then no session arrives, and a
 * session whose first turn it refused never started. So started is the
 * sessions in the records, the run ends well before its 3 s, and the
 * realised session rate is over the arrivals (arrivals_ns), 10/s. The
 * parent went on opening sessions until 3 s, each refused at once and
 * counted started and cut ("30 started, 27 cut short", 87.76/s over the
 * window, arrivals_ns null). */
static void test_sessions_spend_guard_ends_arrivals(void **state)
{
    (void)state;
    harness_cur_sim_start(NULL);
    const char *args[] = {"--sessions",
                          "10",
                          "--arrival",
                          "constant",
                          "--turns",
                          "2",
                          "--prompt-tokens",
                          "20",
                          "--output-tokens",
                          "10",
                          "--duration",
                          "3s",
                          "--max-tokens-total",
                          "300",
                          NULL};
    uint64_t t0 = ll_now_ns();
    char *dir = harness_run_client(no_metrics, args, HARNESS_RC_OK_OR_INVALID, NULL);
    double took_s = (double)(ll_now_ns() - t0) / 1e9;
    struct harness_recs *all = harness_requests_load(dir);
    int64_t counts[MAX_SESSIONS];
    int64_t distinct = sessions_distinct(all, counts, MAX_SESSIONS);
    json_t *sj = harness_summary_load(dir);
    json_t *ses = json_object_get(sj, "sessions");
    print_message("spend guard: %zu records, %lld sessions, started %lld, cut %lld, "
                  "realised %.2f/s, run %.2f s\n",
                  all->n, (long long)distinct, (long long)harness_ival(ses, "started"),
                  (long long)harness_ival(ses, "cut"), harness_num(ses, "realised_rate_per_s"),
                  took_s);
    assert_true(distinct >= 2);
    assert_int_equal(harness_ival(ses, "started"), distinct);
    ASSERT_NEAR(harness_num(ses, "realised_rate_per_s"), 10, 0.5);
    assert_false(harness_is_null(ses, "arrivals_ns"));
    if (took_s > 2.0)
        fail_msg("the run took %.2f s; the guard should end it well before its 3 s", took_s);
    json_decref(sj);
    harness_recs_free(all);
    harness_results_free(dir);
}

/* Constant sessions (sessions a second, turns turns, answers of
 * output_tokens tokens, then more: NULL-terminated, may be NULL) on the
 * default sim for 10 s with no warm-up, stopped by SIGINT after ms
 * milliseconds (harness_run_interrupted); dir gets the results dir. */
static void sessions_stopped(char *dir, size_t len, const char *sessions, const char *turns,
                             const char *output_tokens, const char *const *more, unsigned ms)
{
    struct harness_argv a = {.n = 0};
    const char *head[] = {
        "--no-metrics",    "--sessions",  sessions,     "--arrival", "constant", "--turns", turns,
        "--output-tokens", output_tokens, "--duration", "10s",       "--warmup", "0",       NULL};
    harness_argv_add(&a, head);
    harness_argv_add(&a, more);
    harness_run_interrupted(dir, len, "r", a.v, ms);
}

/* A stop signal cuts only the sessions it leaves with turns unsent: 20
 * constant sessions/s of 2 turns, each answer 300 tokens (about 1.2 s on
 * the default sim), SIGINT at 1.5 s. The drain brings back every turn in
 * flight (5 s of grace): the first sessions' second turns, which end
 * them, and the later sessions' first turns, which leave them cut. So cut
 * is the sessions with fewer records than 2, and some sessions ended in
 * the drain. The parent counted every session still open at the signal as
 * cut, the ones whose last turn it drained too (with --turns 1: 29 ok
 * records, "29 started, 16 cut short"). */
static void test_sessions_stop_cuts_only_unfinished(void **state)
{
    (void)state;
    char dir[600];
    sessions_stopped(dir, sizeof dir, "20", "2", "300", NULL, 1500);
    struct harness_recs *all = harness_requests_load(dir);
    int64_t counts[MAX_SESSIONS];
    int64_t distinct = sessions_distinct(all, counts, MAX_SESSIONS);
    int64_t short_of_turns = 0, whole = 0;
    for (size_t i = 0; i < all->n; i++)
        assert_string_equal(harness_sval(all->items[i], "kind"), "ok");
    for (int64_t s = 0; s < MAX_SESSIONS; s++) {
        short_of_turns += counts[s] > 0 && counts[s] < 2;
        whole += counts[s] == 2;
    }
    json_t *sj = harness_summary_load(dir);
    json_t *ses = json_object_get(sj, "sessions");
    print_message("stopped: %zu records, %lld sessions (%lld whole), started %lld, cut %lld\n",
                  all->n, (long long)distinct, (long long)whole,
                  (long long)harness_ival(ses, "started"), (long long)harness_ival(ses, "cut"));
    assert_true(whole > 0);
    assert_true(short_of_turns > 0);
    assert_int_equal(harness_ival(ses, "started"), distinct);
    assert_int_equal(harness_ival(ses, "cut"), short_of_turns);
    assert_int_equal(harness_ival(ses, "failed"), 0);
    json_decref(sj);
    harness_recs_free(all);
}

/* A session whose last turn the grace's end cancels is cut, not ended:
 * 10 constant sessions/s of one turn, each answer exactly 2000 tokens
 * (--ignore-eos: about 10 s on the default sim), SIGINT at 1 s with
 * --grace 200ms. Every turn in
 * flight is cancelled, so no session ended: every one started is cut.
 * The parent closed a session on its last turn's record whatever its
 * kind, and counted them all ended ("10 started, 0 cut short"). */
static void test_sessions_grace_cancel_cuts_last_turn(void **state)
{
    (void)state;
    char dir[600];
    sessions_stopped(dir, sizeof dir, "10", "1", "2000",
                     (const char *const[]){"--ignore-eos", "--grace", "200ms", NULL}, 1000);
    struct harness_recs *all = harness_requests_load(dir);
    assert_true(all->n > 0);
    for (size_t i = 0; i < all->n; i++)
        assert_string_equal(harness_sval(all->items[i], "kind"), "cancelled");
    json_t *sj = harness_summary_load(dir);
    json_t *ses = json_object_get(sj, "sessions");
    print_message("grace: %zu records, started %lld, cut %lld\n", all->n,
                  (long long)harness_ival(ses, "started"), (long long)harness_ival(ses, "cut"));
    assert_int_equal(harness_ival(ses, "started"), (int64_t)all->n);
    assert_int_equal(harness_ival(ses, "cut"), (int64_t)all->n);
    assert_int_equal(harness_ival(ses, "failed"), 0);
    json_decref(sj);
    harness_recs_free(all);
}

/* A session has one class: 12 sessions of 4 turns with two equally
 * weighted classes on two APIs (chat and completions). Every record of a
 * session carries its turn 0's class, and both classes occur (premise:
 * 12 first turns all of one class has probability 2^-11). The parent drew
 * a class per turn, so conversations switched API mid-way: all 12 whole
 * by chance has probability 2^-36. */
static void test_sessions_one_class(void **state)
{
    (void)state;
    char wl[600];
    harness_tmp_begin();
    harness_tmp_file(wl, sizeof wl, "classes.json",
                     "{\"version\":1,\"classes\":["
                     "{\"name\":\"a\",\"prompt_tokens\":8,\"output_tokens\":3,\"api\":\"chat\"},"
                     "{\"name\":\"b\",\"prompt_tokens\":6,\"output_tokens\":2,"
                     "\"api\":\"completions\"}]}");
    const char *sargs[] = {"--profile", "instant", NULL};
    const char *args[] = {"--sessions", "50", "--arrival",  "constant", "--requests",   "12",
                          "--turns",    "4",  "--workload", wl,         "--ignore-eos", NULL};
    char *dir = harness_run_on_sim(sargs, no_metrics, args);
    struct recs *r = calloc(1, sizeof *r);
    recs_load(r, dir);
    assert_int_equal(r->all->n, 48);
    int seen[2] = {0, 0};
    for (int sn = 0; sn < 12; sn++) {
        assert_non_null(r->by[sn][0]);
        const char *c0 = harness_sval(r->by[sn][0], "class");
        assert_non_null(c0);
        seen[strcmp(c0, "a") == 0 ? 0 : 1] = 1;
        for (int t = 1; t < 4; t++) {
            assert_non_null(r->by[sn][t]);
            const char *c = harness_sval(r->by[sn][t], "class");
            if (!c || strcmp(c, c0) != 0)
                fail_msg("session %d: turn 0 of class %s, turn %d of class %s", sn, c0, t,
                         c ? c : "(none)");
        }
    }
    assert_true(seen[0] && seen[1]);
    recs_free(r);
    harness_results_free(dir);
}

/* Contradictory or impossible session flags exit 2 before any request. */
static void test_sessions_bad_flags(void **state)
{
    const char *url = "http://127.0.0.1:9/v1";
    const char *cases[][8] = {
        {"run", "--url", url, "--sessions", "5", "--rate", "5", NULL},
        {"run", "--url", url, "--turns", "3", "--rate", "5", NULL},
        {"run", "--url", url, "--sessions", "5", "--turns", "exponential:5", NULL},
        {"run", "--url", url, "--sessions", "5", "--turns", "2000", NULL},
        {"run", "--url", url, "--sessions", "5", "--max-concurrency", "2", NULL},
        {"run", "--url", url, "--sessions", "0", NULL},
    };
    const char *expect[] = {"--sessions", "--turns", "--turns", "--turns",
                            "--max-concurrency", "--sessions"};
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        int status = -1;
        char *e = NULL;
        assert_int_equal(harness_run(cases[i], 20, &status, NULL, &e), 0);
        if (status != 2 || !strstr(e, expect[i]))
            fail_msg("case %zu: exit %d, stderr: %s", i, status, e);
        free(e);
    }
}

HARNESS_MAIN(
    cmocka_unit_test_teardown(test_sessions_think_and_context, harness_sim_teardown),
    cmocka_unit_test_teardown(test_sessions_responses, harness_sim_teardown),
    cmocka_unit_test_teardown(test_sessions_every_turn_one_record, harness_sim_teardown),
    cmocka_unit_test_teardown(test_sessions_failed_turn_ends, harness_sim_teardown),
    cmocka_unit_test_teardown(test_sessions_failed_of_window, harness_sim_teardown),
    cmocka_unit_test_teardown(test_sessions_cut_of_window, harness_sim_teardown),
    cmocka_unit_test_teardown(test_sessions_cancelled_unanswered_left_out, harness_sim_teardown),
    cmocka_unit_test_teardown(test_sessions_cancel_after_tokens_partial, harness_sim_teardown),
    cmocka_unit_test_teardown(test_sessions_steady_not_judged, harness_sim_teardown),
    cmocka_unit_test_teardown(test_sessions_rate_over_arrivals, harness_sim_tmp_teardown),
    cmocka_unit_test_teardown(test_sessions_one_turn_rates_agree, harness_sim_teardown),
    cmocka_unit_test_teardown(test_sessions_spend_guard_ends_arrivals, harness_sim_teardown),
    cmocka_unit_test_teardown(test_sessions_one_class, harness_sim_tmp_teardown),
    cmocka_unit_test_teardown(test_sessions_stop_cuts_only_unfinished, harness_client_teardown),
    cmocka_unit_test_teardown(test_sessions_grace_cancel_cuts_last_turn, harness_client_teardown),
    cmocka_unit_test(test_sessions_bad_flags))
