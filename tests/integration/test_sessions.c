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

#define MS 1000000LL
#define MAX_RECS 4000
#define MAX_SESSIONS 200
#define MAX_TURNS 8

static struct harness_sim cur_sim;

static int sim_teardown(void **state)
{
    (void)state;
    if (cur_sim.pid > 0)
        harness_sim_stop(&cur_sim);
    cur_sim.pid = 0;
    return 0;
}

struct recs {
    json_t *items[MAX_RECS];
    size_t n;
    /* by[session][turn]: the record, NULL when absent */
    json_t *by[MAX_SESSIONS][MAX_TURNS];
};

static int64_t ival(json_t *o, const char *k)
{
    json_t *v = json_object_get(o, k);
    return json_is_integer(v) ? (int64_t)json_integer_value(v) : -1;
}

static const char *sval(json_t *o, const char *k)
{
    const char *s = json_string_value(json_object_get(o, k));
    return s ? s : "";
}

/* Load dir/requests.jsonl and index it by (session, turn); a second record
 * for the same turn fails the test. */
static void recs_load(struct recs *r, const char *dir)
{
    char path[700];
    snprintf(path, sizeof path, "%s/requests.jsonl", dir);
    size_t len = 0;
    char *text = harness_read_file(path, &len);
    assert_non_null(text);
    char *line = text;
    while (line < text + len) {
        char *nl = memchr(line, '\n', (size_t)(text + len - line));
        assert_non_null(nl);
        json_error_t je;
        json_t *j = json_loadb(line, (size_t)(nl - line), 0, &je);
        if (!j)
            fail_msg("requests.jsonl line %zu: %s", r->n + 1, je.text);
        assert_true(r->n < MAX_RECS);
        r->items[r->n++] = j;
        int64_t s = ival(j, "session"), t = ival(j, "turn");
        assert_true(s >= 0 && s < MAX_SESSIONS);
        assert_true(t >= 0 && t < MAX_TURNS);
        assert_null(r->by[s][t]);
        r->by[s][t] = j;
        assert_int_equal(ival(j, "id"), s * 1000 + t);
        line = nl + 1;
    }
    free(text);
}

static void recs_free(struct recs *r)
{
    for (size_t i = 0; i < r->n; i++)
        json_decref(r->items[i]);
    free(r);
}

/* Run `llmload run --url <sim> --out <tmp> --quiet <args>`, accepting exit
 * 0 or 1 (INVALID when one wake-up was over 1 ms late on this machine).
 * Returns the results dir (caller frees; its parent is a temp dir). */
static char *run_sessions(const char *const *args)
{
    char *dir = harness_tmpdir();
    char out[600], url[200];
    snprintf(out, sizeof out, "%s/r", dir);
    snprintf(url, sizeof url, "%s/v1", cur_sim.url);
    const char *argv[64] = {"run", "--url", url, "--out", out, "--quiet", "--no-metrics"};
    size_t n = 7;
    for (size_t i = 0; args[i]; i++)
        argv[n++] = args[i];
    argv[n] = NULL;
    int status = -1;
    char *o = NULL, *e = NULL;
    assert_int_equal(harness_run(argv, 60, &status, &o, &e), 0);
    if (status != 0 && status != 1)
        fail_msg("llmload run exited %d\nstdout:\n%s\nstderr:\n%s", status, o, e);
    free(o);
    free(e);
    free(dir);
    return strdup(out);
}

static void cleanup_dir(char *dir)
{
    char *slash = strrchr(dir, '/');
    if (slash)
        *slash = '\0';
    harness_rm_rf(dir);
    free(dir);
}

static json_t *summary_load(const char *dir)
{
    char path[700];
    snprintf(path, sizeof path, "%s/summary.json", dir);
    json_error_t je;
    json_t *j = json_load_file(path, 0, &je);
    if (!j)
        fail_msg("%s: %s", path, je.text);
    return j;
}

/* 6 sessions of 4 turns, 30 ms think, 16-token prompts and 3-12 token
 * answers (ignore_eos: each answer is exactly its max_tokens): 24 records,
 * one per (session, turn); turn k+1 intended exactly 30 ms after turn k
 * ended; turn k's prompt on the server is 16 (k + 1) plus every earlier
 * answer. */
static void test_sessions_think_and_context(void **state)
{
    (void)state;
    const char *sargs[] = {"--profile", "instant", NULL};
    assert_int_equal(harness_sim_start(&cur_sim, sargs), 0);
    const char *args[] = {"--sessions", "20", "--arrival", "constant", "--requests", "6",
                          "--turns", "4", "--think", "30ms", "--prompt-tokens", "16",
                          "--output-tokens", "uniform:3,12", "--ignore-eos", NULL};
    char *dir = run_sessions(args);
    sim_teardown(NULL);

    struct recs *r = calloc(1, sizeof *r);
    recs_load(r, dir);
    assert_int_equal(r->n, 24);
    for (int s = 0; s < 6; s++) {
        int64_t context = 0;
        for (int t = 0; t < 4; t++) {
            json_t *x = r->by[s][t];
            if (!x)
                fail_msg("session %d turn %d has no record", s, t);
            assert_string_equal(sval(x, "kind"), "ok");
            assert_int_equal(ival(x, "prompt_tokens"), context + 16);
            assert_int_equal(ival(x, "prompt_tokens_server"), context + 16);
            assert_int_equal(ival(x, "output_tokens"), ival(x, "max_tokens"));
            if (t > 0)
                assert_int_equal(ival(x, "sched_ns"),
                                 ival(r->by[s][t - 1], "end_ns") + 30 * MS);
            else
                assert_int_equal(ival(x, "sched_ns"), 50 * MS * s); /* constant 20/s */
            context += 16 + ival(x, "output_tokens");
        }
    }
    json_t *sj = summary_load(dir);
    json_t *ses = json_object_get(sj, "sessions");
    assert_non_null(ses);
    assert_int_equal(ival(ses, "started"), 6);
    assert_int_equal(ival(ses, "cut"), 0);
    ASSERT_NEAR(json_real_value(json_object_get(ses, "intended_request_rate_per_s")), 80.0,
                1e-9);
    assert_int_equal(ival(json_object_get(sj, "requests"), "scheduled"), 24);
    json_decref(sj);
    recs_free(r);
    cleanup_dir(dir);
}

/* A duration-bounded run with drawn turn counts: every session's turns are
 * 0..m-1 with no gap and no repeat, every turn scheduled has its record
 * (records == scheduled), each later turn is intended no earlier than the
 * previous end, and the context still grows exactly. */
static void test_sessions_every_turn_one_record(void **state)
{
    (void)state;
    const char *sargs[] = {"--profile", "instant", NULL};
    assert_int_equal(harness_sim_start(&cur_sim, sargs), 0);
    const char *args[] = {"--sessions", "30", "--duration", "1s", "--turns", "uniform:1,6",
                          "--think", "uniform:5ms,40ms", "--prompt-tokens", "8",
                          "--output-tokens", "4", "--ignore-eos", "--seed", "3", NULL};
    char *dir = run_sessions(args);
    sim_teardown(NULL);

    struct recs *r = calloc(1, sizeof *r);
    recs_load(r, dir);
    assert_true(r->n > 10);
    size_t seen = 0;
    for (int s = 0; s < MAX_SESSIONS; s++) {
        int t = 0;
        while (t < MAX_TURNS && r->by[s][t]) {
            json_t *x = r->by[s][t];
            assert_int_equal(ival(x, "prompt_tokens_server"), 8 + t * (8 + 4));
            if (t > 0)
                assert_true(ival(x, "sched_ns") >= ival(r->by[s][t - 1], "end_ns") + 5 * MS);
            t++;
            seen++;
        }
        for (int k = t; k < MAX_TURNS; k++)
            assert_null(r->by[s][k]); /* no gap in a session's turns */
    }
    assert_int_equal(seen, r->n);
    json_t *sj = summary_load(dir);
    assert_int_equal(ival(json_object_get(sj, "requests"), "scheduled"), (int64_t)r->n);
    json_decref(sj);
    recs_free(r);
    cleanup_dir(dir);
}

/* Contradictory or impossible session flags exit 2 before any request. */
static void test_sessions_bad_flags(void **state)
{
    (void)state;
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

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_teardown(test_sessions_think_and_context, sim_teardown),
        cmocka_unit_test_teardown(test_sessions_every_turn_one_record, sim_teardown),
        cmocka_unit_test(test_sessions_bad_flags),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
