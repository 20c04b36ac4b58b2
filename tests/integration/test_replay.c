/* Integration tests of `llmload replay` against `llmload sim` on 127.0.0.1.
 *
 * A schedule dumped by `llmload run --dump-schedule` must replay to the
 * identical requests at the identical offsets: every check here compares
 * integers exactly, against the dump file. Timing is checked only loosely
 * (schedule lateness p50 under 20 ms and p99 under 250 ms on a shared
 * 2-core machine; the figure is printed for the record, the bench is the
 * place for the 1 ms claim). */
#include <jansson.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "harness.h"
#include "test.h"

#define MS 1000000LL

/* The entry of lines whose "id" (or "index") is id, or NULL. */
static json_t *by_id(struct harness_recs *r, const char *key, int64_t id)
{
    for (size_t i = 0; i < r->n; i++) {
        if (harness_ival(r->items[i], key) == id)
            return r->items[i];
    }
    return NULL;
}

/* Run llmload with args (NULL-terminated, no binary); fail unless its exit
 * status is one of ok_a / ok_b. Returns stderr (caller frees). */
static char *run_llmload(const char *const *args, int ok_a, int ok_b)
{
    int status = -1;
    char *o = NULL, *e = NULL;
    assert_int_equal(harness_run(args, 60, &status, &o, &e), 0);
    if (status != ok_a && status != ok_b)
        fail_msg("llmload %s exited %d\nstdout:\n%s\nstderr:\n%s", args[0], status, o, e);
    free(o);
    return e;
}

/* A replay's places: a new temporary dir (caller removes and frees it),
 * its trace.jsonl, its results dir r, and the started sim's /v1 URL. */
struct replay_paths {
    char *dir;
    char trace[600], out[600], url[200];
};

/* Start harness_cur_sim with sargs (may be NULL) and fill *p. */
static void replay_paths_start(const char *const *sargs, struct replay_paths *p)
{
    assert_int_equal(harness_sim_start(&harness_cur_sim, sargs), 0);
    p->dir = harness_tmpdir();
    snprintf(p->trace, sizeof p->trace, "%s/trace.jsonl", p->dir);
    snprintf(p->out, sizeof p->out, "%s/r", p->dir);
    snprintf(p->url, sizeof p->url, "%s/v1", harness_cur_sim.url);
}

/* replay_paths_start with the instant sim (it answers at once). */
static void replay_instant_start(struct replay_paths *p)
{
    replay_paths_start((const char *const[]){"--profile", "instant", NULL}, p);
}

/* Remove p's temporary dir with everything in it, and free it. */
static void replay_paths_free(struct replay_paths *p)
{
    harness_rm_rf(p->dir);
    free(p->dir);
}

/* `llmload replay <p's trace> --url <p's url> --out <p's out> --quiet
 * extra...` (extra NULL-terminated, may be NULL), which must exit 0 or 1
 * (INVALID when a wake-up was over 1 ms late). Returns its stdout (caller
 * frees). */
static char *replay_trace(const struct replay_paths *p, const char *const *extra)
{
    struct harness_argv a = {.n = 0};
    harness_argv_add(&a, (const char *const[]){"replay", p->trace, "--url", p->url, "--out", p->out,
                                               "--quiet", NULL});
    harness_argv_add(&a, extra);
    return harness_run_expect(a.v, 60, HARNESS_RC_OK_OR_INVALID, NULL);
}

/* Dump the schedule of `llmload run` at 150 req/s of n requests, seed 7,
 * with the workload's flags (NULL-terminated), into p's trace (a dry
 * run: nothing is sent). */
static void replay_dump_schedule(const struct replay_paths *p, const char *n,
                                 const char *const *workload)
{
    struct harness_argv a = {.n = 0};
    harness_argv_add(&a, (const char *const[]){"run", "--url", p->url, "--rate", "150",
                                               "--requests", n, "--seed", "7", NULL});
    harness_argv_add(&a, workload);
    harness_argv_add(&a, (const char *const[]){"--dump-schedule", p->trace, "--dry-run", NULL});
    free(run_llmload(a.v, 0, 0));
}

/* Dump a 60-request schedule (lengths drawn from ranges), replay it with
 * --time-scale scale, and check every record against the dump: one per
 * entry, same id, sched_ns == round(dump sched_ns * scale), same prompt and
 * max tokens, and the sim's own prompt count equal to the requested one. */
static void check_replay_of_dump(double scale, const char *scale_arg)
{
    struct replay_paths rp;
    replay_instant_start(&rp);
    const char *lengths[] = {"--prompt-tokens", "uniform:10,200", "--output-tokens", "uniform:2,20",
                             NULL};
    replay_dump_schedule(&rp, "60", lengths);
    const char *rep_args[] = {"--seed", "7", "--ignore-eos", "--time-scale", scale_arg, NULL};
    char *rep_out = replay_trace(&rp, rep_args);
    harness_sim_teardown(NULL);

    struct harness_recs *d = harness_recs_load(rp.trace);
    struct harness_recs *r = harness_requests_load(rp.out);
    assert_int_equal(d->n, 60);
    assert_int_equal(r->n, d->n);
    for (size_t i = 0; i < d->n; i++) {
        json_t *want = d->items[i];
        json_t *got = by_id(r, "id", harness_ival(want, "index"));
        if (!got)
            fail_msg("no record for schedule index %lld", (long long)harness_ival(want, "index"));
        int64_t sched = (int64_t)llround((double)harness_ival(want, "sched_ns") * scale);
        assert_int_equal(harness_ival(got, "sched_ns"), sched);
        assert_int_equal(harness_ival(got, "prompt_tokens"), harness_ival(want, "prompt_tokens"));
        assert_int_equal(harness_ival(got, "max_tokens"), harness_ival(want, "max_tokens"));
        assert_string_equal(harness_sval(got, "kind"), "ok");
        assert_int_equal(harness_ival(got, "prompt_tokens_server"),
                         harness_ival(want, "prompt_tokens"));
        assert_int_equal(harness_ival(got, "output_tokens"), harness_ival(want, "max_tokens"));
    }
    json_t *s = harness_summary_load(rp.out);
    /* A replay is never judged steady, and says why (the parent: a bare
     * null). */
    assert_true(harness_is_null(s, "steady"));
    HARNESS_HAS(harness_sval(s, "steady_unjudged"), "not judged: a replayed trace sends at its "
                                                    "own times");
    /* The window runs on past the last line for the drain, so the
     * scheduled rate is over the offering, from 0 to the last line: the
     * trace's own rate, which replay offers (the same count, the 59 lines
     * before the last, over the same span), not a shortfall. The parent
     * printed scheduled / window, then all 60 over the span. */
    int64_t last = 0;
    for (size_t i = 0; i < r->n; i++)
        if (harness_ival(r->items[i], "sched_ns") > last)
            last = harness_ival(r->items[i], "sched_ns");
    json_t *thr = json_object_get(s, "throughput");
    assert_int_equal(harness_ival(thr, "offering_ns"), last);
    double offered = harness_num(thr, "offered_rate_per_s");
    ASSERT_REL(harness_num(thr, "scheduled_offering_rate_per_s"), offered, 1e-9);
    ASSERT_REL(offered, 59.0 / ((double)last / 1e9), 1e-9); /* the 59 before the last */
    /* summary.json's scheduled_rate_per_s stays all 60 over the window
     * (which the instant sim's drain barely outlasts the last line by, so
     * it is no longer always below the offered 59 over the offering) */
    ASSERT_REL(harness_num(thr, "scheduled_rate_per_s"),
               60.0 / ((double)harness_ival(s, "window_ns") / 1e9), 1e-9);
    char want[160];
    snprintf(want, sizeof want, "throughput: offered %.2f req/s (scheduled %.2f req/s over the ",
             offered, offered);
    if (!strstr(rep_out, want) || !strstr(rep_out, "window, its drain included)\n"))
        fail_msg("replay's throughput line: expected \"%s\":\n%s", want, rep_out);
    free(rep_out);
    json_t *late = json_object_get(json_object_get(s, "latency_ns"), "schedule_lateness");
    int64_t p99 = harness_ival(late, "p99");
    fprintf(stderr, "replay x%s: schedule lateness p99 %.3f ms, max %.3f ms over %lld requests\n",
            scale_arg, (double)p99 / 1e6, (double)harness_ival(late, "max") / 1e6,
            (long long)harness_ival(late, "count"));
    /* Most sends on time; no send held up behind others. One stall of the
     * machine is one request's lateness, so the median is held tight and
     * the tail loosely (a stall of 24 ms under check-asan on a loaded
     * machine failed a 20 ms p99, which over 60 requests is the max). */
    ASSERT_IN_RANGE(harness_ival(late, "p50"), 0, 20 * MS - 1);
    ASSERT_IN_RANGE(p99, 0, 250 * MS - 1);
    json_decref(s);
    harness_recs_free(d);
    harness_recs_free(r);
    replay_paths_free(&rp);
}

/* A run's requests.jsonl replays as a trace: the replay offers every
 * request the run offered (failed ones too: the sim fails a fifth with
 * 500 or 429) with its id, scheduled offset, prompt and max tokens and
 * class, which the run's --dump-schedule of the same flags says, exactly. */
static void test_replay_of_records(void **state)
{
    const char *sargs[] = {"--profile", "instant", "--fault", "500:0.1",
                           "--fault",   "429:0.1", NULL};
    struct replay_paths rp;
    replay_paths_start(sargs, &rp);
    char wl[700], dump[700], run_out[640], path[700];
    snprintf(wl, sizeof wl, "%s/wl.json", rp.dir);
    snprintf(dump, sizeof dump, "%s/dump.jsonl", rp.dir);
    snprintf(run_out, sizeof run_out, "%s/run", rp.dir);
    harness_write_file(wl, "{\"classes\": ["
                           "{\"name\": \"chat\", \"weight\": 3, \"prompt_tokens\": "
                           "\"uniform:10,200\", \"output_tokens\": \"uniform:2,20\"},"
                           "{\"name\": \"rag\", \"weight\": 1, \"prompt_tokens\": 300, "
                           "\"output_tokens\": 4}]}");
    const char *run_args[] = {
        "run",        "--url", rp.url,  "--rate", "100",     "--requests",      "40", "--seed", "7",
        "--workload", wl,      "--out", run_out,  "--quiet", "--dump-schedule", dump, NULL};
    free(run_llmload(run_args, 0, 1));
    snprintf(path, sizeof path, "%s/requests.jsonl", run_out);
    const char *rep_args[] = {"replay", path, "--url", rp.url, "--out", rp.out, "--quiet", NULL};
    free(run_llmload(rep_args, 0, 1));
    harness_sim_teardown(NULL);

    struct harness_recs *d = harness_recs_load(dump);
    struct harness_recs *run = harness_recs_load(path);
    struct harness_recs *r = harness_requests_load(rp.out);
    assert_int_equal(d->n, 40);
    assert_int_equal(run->n, d->n);
    assert_int_equal(r->n, d->n);
    size_t failed = 0;
    for (size_t i = 0; i < d->n; i++) {
        json_t *want = d->items[i];
        int64_t id = harness_ival(want, "index");
        json_t *got = by_id(r, "id", id), *was = by_id(run, "id", id);
        if (!got || !was)
            fail_msg("no record for schedule index %lld", (long long)id);
        assert_int_equal(harness_ival(got, "sched_ns"), harness_ival(want, "sched_ns"));
        assert_int_equal(harness_ival(got, "prompt_tokens"), harness_ival(want, "prompt_tokens"));
        assert_int_equal(harness_ival(got, "max_tokens"), harness_ival(want, "max_tokens"));
        assert_string_equal(harness_sval(got, "class"), harness_sval(want, "class"));
        failed += strcmp(harness_sval(was, "kind"), "ok") != 0;
    }
    print_message("the run's records: %zu of %zu failed, replayed all the same\n", failed, d->n);
    assert_true(failed > 0);
    harness_recs_free(d);
    harness_recs_free(run);
    harness_recs_free(r);
    replay_paths_free(&rp);
}

static void test_replay_identical_to_dump(void **state)
{
    check_replay_of_dump(1.0, "1");
}

static void test_replay_time_scale_halves_offsets(void **state)
{
    check_replay_of_dump(0.5, "0.5");
}

/* A dump carries what the trace format can say beyond lengths: the shared
 * prefix of each request that has one, and a timed cancellation (it wrote
 * lengths alone, and the replay of a dump lost both). 40 requests, half
 * sharing one of 2 prefixes of 32 tokens, half cancelled 30 ms after the
 * send, 128-token answers (hundreds of ms on the default sim): the
 * replay cancels exactly the requests the dump says, and the dump names
 * the prefixes the run drew. */
static void test_dump_carries_prefix_and_cancel(void **state)
{
    (void)state;
    struct replay_paths rp;
    replay_paths_start(NULL, &rp);
    const char *workload[] = {"--prompt-tokens",
                              "uniform:40,100",
                              "--prefix-fraction",
                              "0.5",
                              "--prefix-groups",
                              "2",
                              "--prefix-tokens",
                              "32",
                              "--cancel-fraction",
                              "0.5",
                              "--cancel-after",
                              "30ms",
                              NULL};
    replay_dump_schedule(&rp, "40", workload);
    struct harness_recs *d = harness_recs_load(rp.trace);
    assert_int_equal(d->n, 40);
    size_t shared = 0, cancelled = 0;
    for (size_t i = 0; i < d->n; i++) {
        json_t *e = d->items[i];
        json_t *pid = json_object_get(e, "prefix_id"), *cx = json_object_get(e, "cancel_after_ns");
        if (pid) {
            shared++;
            ASSERT_IN_RANGE(harness_ival(e, "prefix_id"), 0, 1);
            assert_int_equal(harness_ival(e, "prefix_tokens"), 32);
        } else {
            assert_null(json_object_get(e, "prefix_tokens"));
        }
        if (cx) {
            cancelled++;
            assert_int_equal(harness_ival(e, "cancel_after_ns"), 30 * MS);
        }
    }
    /* about half each (the seed's draws; the premise, not the claim) */
    ASSERT_IN_RANGE(shared, 10, 30);
    ASSERT_IN_RANGE(cancelled, 10, 30);
    free(replay_trace(&rp, (const char *const[]){"--seed", "7", NULL}));
    harness_sim_teardown(NULL);
    struct harness_recs *r = harness_requests_load(rp.out);
    assert_int_equal(r->n, d->n);
    for (size_t i = 0; i < d->n; i++) {
        json_t *want = d->items[i];
        json_t *got = by_id(r, "id", harness_ival(want, "index"));
        assert_non_null(got);
        const char *kind = harness_sval(got, "kind");
        if (json_object_get(want, "cancel_after_ns") ? strcmp(kind, "cancelled") != 0
                                                     : strcmp(kind, "ok") != 0)
            fail_msg("index %lld: %s, the dump %s a cancellation",
                     (long long)harness_ival(want, "index"), kind,
                     json_object_get(want, "cancel_after_ns") ? "gives" : "gives no");
    }
    harness_recs_free(d);
    harness_recs_free(r);
    replay_paths_free(&rp);
}

/* Requests of sim log path on each /v1 path: chat and completions. */
static void count_paths(const char *log, long *chat, long *completions)
{
    struct harness_recs *l = harness_recs_load(log);
    *chat = *completions = 0;
    for (size_t i = 0; i < l->n; i++) {
        const char *path = harness_sval(l->items[i], "path");
        *chat += strcmp(path, "/v1/chat/completions") == 0;
        *completions += strcmp(path, "/v1/completions") == 0;
    }
    harness_recs_free(l);
}

/* A dump of a --workload run with a class on completions and classes of
 * their own ignore_eos replays to the same requests: the same number to
 * each endpoint, and each record's class and ignore_eos the run's. The
 * parent sent all 40 to chat in the replay, each with the replay's
 * --ignore-eos. */
static void test_replay_of_classes_keeps_api_and_ignore_eos(void **state)
{
    const char *sargs[] = {"--profile", "instant", NULL};
    char log[600], wl[700], dump[700];
    harness_logged_sim_start(log, sizeof log, sargs);
    harness_tmp_file(wl, sizeof wl, "w.json",
                     "{\"classes\": ["
                     "{\"name\":\"chat\",\"weight\":3,\"prompt_tokens\":20,"
                     "\"output_tokens\":4,\"api\":\"chat\",\"ignore_eos\":true},"
                     "{\"name\":\"summarize\",\"weight\":1,\"prompt_tokens\":30,"
                     "\"output_tokens\":3,\"api\":\"completions\",\"ignore_eos\":false}]}\n");
    harness_tmp_path(dump, sizeof dump, "dump.jsonl");
    const char *run_args[] = {"--rate",     "150", "--requests",      "40", "--seed",       "7",
                              "--workload", wl,    "--dump-schedule", dump, "--no-metrics", NULL};
    char *out1 = harness_run_client(NULL, run_args, HARNESS_RC_OK_OR_INVALID, NULL);
    harness_sim_teardown(NULL);
    long run_chat, run_cmpl;
    count_paths(log, &run_chat, &run_cmpl);
    assert_int_equal(run_chat + run_cmpl, 40);
    assert_true(run_cmpl > 0 && run_chat > 0);

    char log2[600], *o = NULL, *e = NULL;
    harness_logged_sim_start(log2, sizeof log2, sargs);
    const char *rep_args[] = {dump, "--seed", "7", NULL};
    char *out2 = harness_run_sim_verdict("replay", rep_args, 60, &o, &e);
    free(o);
    free(e);
    harness_sim_teardown(NULL);
    long rep_chat, rep_cmpl;
    count_paths(log2, &rep_chat, &rep_cmpl);
    assert_int_equal(rep_chat, run_chat);
    assert_int_equal(rep_cmpl, run_cmpl);

    struct harness_recs *a = harness_requests_load(out1);
    struct harness_recs *b = harness_requests_load(out2);
    assert_int_equal(a->n, 40);
    assert_int_equal(b->n, a->n);
    for (size_t i = 0; i < a->n; i++) {
        json_t *want = a->items[i];
        json_t *got = by_id(b, "id", harness_ival(want, "id"));
        assert_non_null(got);
        assert_string_equal(harness_sval(got, "class"), harness_sval(want, "class"));
        int eos = json_is_true(json_object_get(want, "ignore_eos"));
        assert_int_equal(eos, strcmp(harness_sval(want, "class"), "chat") == 0);
        assert_int_equal(json_is_true(json_object_get(got, "ignore_eos")), eos);
    }
    harness_recs_free(a);
    harness_recs_free(b);
    harness_results_free(out1);
    harness_results_free(out2);
}

/* A hand-written trace with the optional fields: seconds, a class, a
 * session id, a verbatim prompt with characters JSON must escape (its
 * sim token count is known by hand), a shared prefix, and a cancellation
 * that fires long before the 300-token answer (4 ms steps) ends. */
static void test_replay_trace_fields(void **state)
{
    struct replay_paths rp;
    replay_paths_start(NULL, &rp);
    /* "Write a \"haiku\"\nabout tabs:\t\\ok" splits into Write | a |
     * "haiku" | about | tabs: | \ok: 2 + 1 + 2 + 2 + 2 + 1 = 10 tokens. */
    harness_write_file(rp.trace,
                       "{\"t\":0.05,\"prompt_tokens\":30,\"output_tokens\":5,\"class\":\"chat\","
                       "\"session_id\":17}\n"
                       "{\"t\":0.0,\"prompt\":\"Write a \\\"haiku\\\"\\nabout tabs:\\t\\\\ok\","
                       "\"output_tokens\":4,\"class\":\"poetry\"}\n"
                       "{\"t\":0.1,\"prompt_tokens\":40,\"output_tokens\":6,\"prefix_id\":3,"
                       "\"prefix_tokens\":32}\n"
                       "{\"t\":0.15,\"prompt_tokens\":40,\"output_tokens\":300,"
                       "\"cancel_after_ns\":100000000}\n");
    free(replay_trace(&rp, (const char *const[]){"--ignore-eos", NULL}));
    harness_sim_teardown(NULL);

    struct harness_recs *r = harness_requests_load(rp.out);
    assert_int_equal(r->n, 4);
    /* Sorted by time: the prompt line (t=0) is index 0. */
    json_t *p = by_id(r, "id", 0), *c = by_id(r, "id", 1), *x = by_id(r, "id", 2),
           *k = by_id(r, "id", 3);
    assert_non_null(p);
    assert_non_null(c);
    assert_non_null(x);
    assert_non_null(k);
    assert_int_equal(harness_ival(p, "sched_ns"), 0);
    assert_string_equal(harness_sval(p, "kind"), "ok");
    assert_string_equal(harness_sval(p, "class"), "poetry");
    assert_int_equal(harness_ival(p, "prompt_tokens"), 10);
    assert_int_equal(harness_ival(p, "prompt_tokens_server"), 10);
    assert_int_equal(harness_ival(c, "sched_ns"), 50 * MS);
    assert_string_equal(harness_sval(c, "class"), "chat");
    assert_int_equal(harness_ival(c, "session"), 17);
    assert_null(json_object_get(c, "turn"));
    assert_int_equal(harness_ival(c, "prompt_tokens_server"), 30);
    assert_int_equal(harness_ival(x, "prompt_tokens_server"), 40);
    assert_null(json_object_get(x, "class"));
    assert_string_equal(harness_sval(k, "kind"), "cancelled");
    int64_t held = harness_ival(k, "end_ns") - harness_ival(k, "sent_ns");
    assert_true(held >= 100 * MS && held < 400 * MS);
    assert_true(harness_ival(k, "output_tokens") < 300);
    harness_recs_free(r);
    replay_paths_free(&rp);
}

/* The class of row name in the "by class" table of out: its sched, ok
 * and failed counts, or fail the test when there is no such row. */
static void class_row(const char *out, const char *name, long *sched, long *ok, long *failed)
{
    const char *t = strstr(out, "\nby class ");
    if (!t)
        fail_msg("no \"by class\" table in:\n%s", out);
    for (const char *l = strchr(t + 1, '\n'); l && l[1]; l = strchr(l + 1, '\n')) {
        char got[64];
        if (sscanf(l + 1, "%63s %ld %ld %ld", got, sched, ok, failed) == 4 &&
            strcmp(got, name) == 0)
            return;
    }
    fail_msg("no row for class %s in:\n%s", name, t);
}

/* A trace whose lines carry two classes (and one line none) gets run's
 * "by class" table in the terminal and summary.json's "classes": each
 * class's scheduled and ok counts are the trace's own lines of it (the
 * instant sim answers every one), a line without a class is in no row,
 * and the header names the command: "llmload replay: <trace>, ...". */
static void test_replay_by_class(void **state)
{
    struct replay_paths rp;
    replay_instant_start(&rp);
    char line[800];
    /* 13 lines, 10 ms apart: 4 "rag" (every third from the first), 8
     * "chat", and the last with no class. */
    char text[4096] = "";
    long want_rag = 0, want_chat = 0;
    for (int i = 0; i < 13; i++) {
        const char *cls = i == 12 ? NULL : i % 3 == 0 ? "rag" : "chat";
        want_rag += cls && !strcmp(cls, "rag");
        want_chat += cls && !strcmp(cls, "chat");
        snprintf(line, sizeof line, "{\"t\":%.2f,\"prompt_tokens\":20,\"output_tokens\":4%s%s%s}\n",
                 0.01 * i, cls ? ",\"class\":\"" : "", cls ? cls : "", cls ? "\"" : "");
        strcat(text, line);
    }
    assert_int_equal(want_rag, 4);
    assert_int_equal(want_chat, 8);
    harness_write_file(rp.trace, text);
    char *o = replay_trace(&rp, (const char *const[]){"--ignore-eos", "--slo", "ttft=10s", NULL});
    harness_sim_teardown(NULL);

    snprintf(line, sizeof line, "llmload replay: %s, 13 requests, offsets x1", rp.trace);
    if (strncmp(o, line, strlen(line)) != 0)
        fail_msg("expected the header \"%s\" in:\n%s", line, o);
    assert_null(strstr(o, "llmload run"));
    long sched, ok, failed;
    class_row(o, "rag", &sched, &ok, &failed);
    assert_int_equal(sched, want_rag);
    assert_int_equal(ok, want_rag);
    assert_int_equal(failed, 0);
    class_row(o, "chat", &sched, &ok, &failed);
    assert_int_equal(sched, want_chat);
    assert_int_equal(ok, want_chat);
    assert_int_equal(failed, 0);

    json_t *s = harness_summary_load(rp.out);
    /* summary.json's mode keeps the load model's name in front. */
    snprintf(line, sizeof line, "replay %s, 13 requests, offsets x1", rp.trace);
    assert_string_equal(harness_sval(s, "mode"), line);
    json_t *cl = json_object_get(s, "classes");
    assert_true(json_is_array(cl));
    assert_int_equal(json_array_size(cl), 2);
    /* First-seen order, as in the table. */
    json_t *rag = json_array_get(cl, 0), *chat = json_array_get(cl, 1);
    assert_string_equal(harness_sval(rag, "name"), "rag");
    assert_string_equal(harness_sval(chat, "name"), "chat");
    assert_int_equal(harness_ival(rag, "scheduled"), want_rag);
    assert_int_equal(harness_ival(rag, "ok"), want_rag);
    assert_int_equal(harness_ival(chat, "scheduled"), want_chat);
    assert_int_equal(harness_ival(chat, "ok"), want_chat);
    assert_string_equal(harness_sval(chat, "slo"), "ttft=10s");
    /* The whole run counts the line without a class too. */
    assert_int_equal(harness_ival(json_object_get(s, "requests"), "scheduled"), 13);
    json_decref(s);
    free(o);
    replay_paths_free(&rp);
}

/* Bad input exits 2 before anything is sent, naming the file (and the
 * line and column for a bad line). No sim runs: the URL is never asked. */
/* A --duration longer than the trace: the trace's end ends the offering,
 * and the window ends with the last response, about 0.5 s in, not at the
 * 20 s the parent divided every rate by (completed 0.25/s for 5 requests
 * sent in 0.4 s). Its 5 lines 0.1 s apart offer 10/s, the 4 before the
 * last over the 0.4 s to it, in the header and the scheduled rate alike
 * (the parent counted all 5: 12.50). */
static void test_replay_trace_ends_before_duration(void **state)
{
    struct replay_paths rp;
    replay_instant_start(&rp);
    harness_write_file(rp.trace,
                       "{\"sched_ns\":0,\"prompt_tokens\":10,\"max_tokens\":5}\n"
                       "{\"sched_ns\":100000000,\"prompt_tokens\":10,\"max_tokens\":5}\n"
                       "{\"sched_ns\":200000000,\"prompt_tokens\":10,\"max_tokens\":5}\n"
                       "{\"sched_ns\":300000000,\"prompt_tokens\":10,\"max_tokens\":5}\n"
                       "{\"sched_ns\":400000000,\"prompt_tokens\":10,\"max_tokens\":5}\n");
    char *o = replay_trace(&rp, (const char *const[]){"--duration", "20s", NULL});
    HARNESS_HAS(o, "throughput: offered 10.00 req/s (scheduled 10.00 req/s over the 400.00ms of "
                   "offering)");
    free(o);
    harness_sim_teardown(NULL);
    json_t *s = harness_summary_load(rp.out);
    double window_s = (double)harness_ival(s, "window_ns") / 1e9;
    assert_true(window_s >= 0.4 && window_s < 5);
    json_t *thr = json_object_get(s, "throughput");
    assert_int_equal(harness_ival(thr, "offering_ns"), 400000000);
    ASSERT_REL(harness_num(thr, "offered_rate_per_s"), 10, 1e-9);
    ASSERT_REL(harness_num(thr, "scheduled_offering_rate_per_s"), 10, 1e-9);
    ASSERT_REL(harness_num(thr, "completion_rate_per_s"), 5 / window_s, 1e-9);
    json_decref(s);
    replay_paths_free(&rp);
}

/* Replay trace (dir/trace.jsonl, written from text) in 2 shards with
 * extra (NULL-terminated, may be NULL), then `llmload merge` them: shard 0
 * must hold n0 records, shard 1 n1, and the merge be complete (exit 0, or
 * 1 for a late wake-up's INVALID; summary.json's incomplete null). */
static void replay_shards_merge(const struct replay_paths *rp, const char *text,
                                const char *const *extra, size_t n0, size_t n1)
{
    harness_write_file(rp->trace, text);
    char sd[2][700], merged[700];
    for (size_t k = 0; k < 2; k++) {
        char spec[8];
        snprintf(sd[k], sizeof sd[k], "%s/shard%zu", rp->dir, k);
        snprintf(spec, sizeof spec, "%zu/2", k);
        struct harness_argv a = {.n = 0};
        const char *fixed[] = {"replay",  rp->trace, "--url", rp->url,         "--out", sd[k],
                               "--quiet", "--shard", spec,    "--prompt-salt", "5",     NULL};
        harness_argv_add(&a, fixed);
        harness_argv_add(&a, extra);
        free(run_llmload(a.v, 0, 1));
        struct harness_recs *r = harness_requests_load(sd[k]);
        assert_int_equal(r->n, k == 0 ? n0 : n1);
        harness_recs_free(r);
    }
    snprintf(merged, sizeof merged, "%s/merged", rp->dir);
    const char *m[] = {"merge", sd[0], sd[1], "--out", merged, NULL};
    int status = -1;
    char *o = NULL, *e = NULL;
    assert_int_equal(harness_run(m, 60, &status, &o, &e), 0);
    if (status != 0 && status != 1)
        fail_msg("llmload merge exited %d\nstdout:\n%s\nstderr:\n%s", status, o, e);
    free(o);
    free(e);
    json_t *sm = harness_summary_load(merged);
    assert_true(harness_is_null(sm, "incomplete"));
    json_decref(sm);
    harness_rm_rf(merged);
    harness_rm_rf(sd[0]);
    harness_rm_rf(sd[1]);
}

/* A trace with its own "index" shards by line position, as the help says
 * (shard K replays the lines at sorted positions p with p mod N == K), and
 * merge counts what the shards should hold by the trace's line count, not
 * by the largest index: the parent read indices 0, 10^12, 2 as
 * "incomplete: 3 of 1000000000001 requests (999999999998 missing)" and
 * exited 4. Cut by --duration after 3 of 4 lines (the fourth at 5 s), the
 * shards hold positions 0, 2 and 1, and the merge is complete too. */
static void test_replay_indexed_shards_merge(void **state)
{
    struct replay_paths rp;
    replay_instant_start(&rp);
    replay_shards_merge(&rp,
                        "{\"index\":0,\"t\":0,\"prompt_tokens\":10,\"output_tokens\":5}\n"
                        "{\"index\":1000000000000,\"t\":0.05,\"prompt_tokens\":10,"
                        "\"output_tokens\":5}\n"
                        "{\"index\":2,\"t\":0.1,\"prompt_tokens\":10,\"output_tokens\":5}\n",
                        NULL, 2, 1);
    replay_shards_merge(&rp,
                        "{\"index\":7,\"t\":0,\"prompt_tokens\":10,\"output_tokens\":5}\n"
                        "{\"index\":3,\"t\":0.05,\"prompt_tokens\":10,\"output_tokens\":5}\n"
                        "{\"index\":100,\"t\":0.1,\"prompt_tokens\":10,\"output_tokens\":5}\n"
                        "{\"index\":1,\"t\":5,\"prompt_tokens\":10,\"output_tokens\":5}\n",
                        (const char *const[]){"--duration", "1s", NULL}, 2, 1);
    harness_sim_teardown(NULL);
    replay_paths_free(&rp);
}

/* --cold-start N on a trace with its own "index" makes cold the lines
 * whose index is below N, as docs/metrics.md and replay --help say (the
 * record carries the index as id, not the line's position, and merge and
 * report judge cold from the records): indices 3, 0, 1 in time order with
 * --cold-start 1 make the second line cold, not the first. */
static void test_replay_cold_by_index(void **state)
{
    struct replay_paths rp;
    replay_instant_start(&rp);
    harness_write_file(rp.trace,
                       "{\"index\":3,\"t\":0,\"prompt_tokens\":10,\"output_tokens\":5}\n"
                       "{\"index\":0,\"t\":0.05,\"prompt_tokens\":10,\"output_tokens\":5}\n"
                       "{\"index\":1,\"t\":0.1,\"prompt_tokens\":10,\"output_tokens\":5}\n");
    free(replay_trace(&rp, (const char *const[]){"--cold-start", "1", NULL}));
    harness_sim_teardown(NULL);
    struct harness_recs *r = harness_requests_load(rp.out);
    assert_int_equal(r->n, 3);
    for (size_t i = 0; i < r->n; i++) {
        int64_t id = harness_ival(r->items[i], "id");
        int cold = json_is_true(json_object_get(r->items[i], "cold"));
        if (cold != (id == 0))
            fail_msg("record id %lld: cold %d", (long long)id, cold);
    }
    harness_recs_free(r);
    replay_paths_free(&rp);
}

static void test_replay_bad_input(void **state)
{
    harness_tmp_begin();
    char trace[600], missing[600], expect[700];
    harness_tmp_path(missing, sizeof missing, "none.jsonl");
    harness_tmp_file(trace, sizeof trace, "bad.jsonl",
                     "{\"sched_ns\":0,\"prompt_tokens\":10,\"max_tokens\":5}\n"
                     "{\"sched_ns\":10,\"prompt_tokens\":10,\"max_tokens\":0}\n");
    const char *url = "http://127.0.0.1:9/v1";

    const char *a1[] = {"replay", trace, "--url", url, "--quiet", NULL};
    char *e = run_llmload(a1, 2, 2);
    snprintf(expect, sizeof expect, "%s:2:", trace);
    if (!strstr(e, expect) || !strstr(e, "max_tokens"))
        fail_msg("expected \"%s ... max_tokens\" in: %s", expect, e);
    free(e);

    const char *a2[] = {"replay", missing, "--url", url, "--quiet", NULL};
    e = run_llmload(a2, 2, 2);
    if (!strstr(e, missing))
        fail_msg("expected the path in: %s", e);
    free(e);

    const char *a3[] = {"replay", trace, "--url", url, "--prompt-tokens", "5", NULL};
    e = run_llmload(a3, 2, 2);
    assert_non_null(strstr(e, "--prompt-tokens"));
    free(e);

    const char *a4[] = {"replay", trace, "--url", url, "--time-scale", "0", NULL};
    e = run_llmload(a4, 2, 2);
    assert_non_null(strstr(e, "--time-scale"));
    free(e);

    /* --max-inflight is taken (a safety cap on the trace's open loop), so
     * the help names it */
    const char *h[] = {"replay", "--help", NULL};
    int status = -1;
    char *o = NULL;
    assert_int_equal(harness_run(h, 20, &status, &o, &e), 0);
    assert_int_equal(status, 0);
    if (!strstr(o, "--max-inflight"))
        fail_msg("replay --help does not name --max-inflight");
    free(o);
    free(e);

    /* scaled past the format's own bound, the last offset saturated: the
     * request went out at once, recorded as scheduled in 584 years */
    char good[600];
    harness_tmp_file(good, sizeof good, "good.jsonl",
                     "{\"sched_ns\":0,\"prompt_tokens\":10,\"max_tokens\":5}\n"
                     "{\"sched_ns\":1000000000,\"prompt_tokens\":10,\"max_tokens\":5}\n");
    HARNESS_EXPECT_USAGES(
        {{"replay", good, "--url", url, "--time-scale", "1e19"},
         "--time-scale/--rate-scale: x1e+19 puts the trace's last request (at 1s) at 1e+19s"},
        {{"replay", "", "--url", url}, "replay: the trace file is an empty path"},
        /* was taken as --rate-scale 5: the 1 req/s trace offered at 5 */
        {{"replay", good, "--url", url, "--rate", "5"},
         "--rate: a replay offers the trace at its own times; --rate-scale R multiplies its "
         "rate by R (--time-scale S stretches it)"},
        /* --expect as run's, less achieved_rate (the trace's own send rate) */
        {{"replay", good, "--url", url, "--expect", "ttft_p99<500"},
         "--expect: \"ttft_p99<500\": the value of ttft_p99"},
        {{"replay", good, "--url", url, "--expect", "ttft_p98<1s"},
         "--expect: \"ttft_p98<1s\": no metric \"ttft_p98\""},
        /* a trace has no classes' SLOs: --slo alone, said alone */
        {{"replay", good, "--url", url, "--expect", "goodput>=1/s"},
         "--expect: \"goodput>=1/s\": goodput needs --slo\n"},
        {{"replay", good, "--url", url, "--expect", "attainment>=90%"}, "attainment needs --slo"},
        {{"replay", good, "--url", url, "--slo", "ttft=1s", "--expect", "achieved_rate>1/s"},
         "--expect: \"achieved_rate>1/s\": achieved_rate is the trace's own send rate"},
        {{"replay", good, "--url", url, "--no-stream", "--expect", "tpot_p99<50ms"},
         "--expect: \"tpot_p99<50ms\": tpot has no meaning with --no-stream"},
        {{"replay", good, "--url", url, "--shard", "0/2", "--prompt-salt", "1", "--expect",
          "output_tokens_per_s>1/s"},
         "--expect: \"output_tokens_per_s>1/s\": a rate judges the whole run, not one of "
         "--shard's 2 parts"});
}

/* Replay's spend check: a --max-tokens-total below the trace's first
 * line alone (10 prompt + 5 max tokens here) is refused before the target
 * is asked anything (nothing listens on port 9), exit 2, naming its cost;
 * 15 itself is allowed (the guard stops past the bound). A replay's shard
 * walks the whole trace and counts every line, so it is held to the whole
 * bound, not a share: 15 in shard 1/2 is allowed too (the run goes on to
 * the unreachable target: exit 3). */
static void test_replay_spend_check(void **state)
{
    (void)state;
    harness_tmp_begin();
    char trace[600];
    harness_tmp_file(trace, sizeof trace, "t.jsonl",
                     "{\"sched_ns\":0,\"prompt_tokens\":10,\"max_tokens\":5}\n"
                     "{\"sched_ns\":10,\"prompt_tokens\":1,\"max_tokens\":1}\n");
    const char *url = "http://127.0.0.1:9/v1";
    HARNESS_EXPECT_USAGES({{"replay", trace, "--url", url, "--max-tokens-total", "14"},
                           "--max-tokens-total: 14 is less than the first request alone (15 "
                           "prompt and max tokens): the spend guard would stop before sending "
                           "anything"});
    const char *ok[] = {"replay", trace, "--url", url, "--max-tokens-total", "15", "--quiet", NULL};
    char *e = run_llmload(ok, 3, 3);
    assert_null(strstr(e, "--max-tokens-total"));
    free(e);
    const char *shard[] = {
        "replay",        trace, "--url",   url, "--max-tokens-total", "15", "--shard", "1/2",
        "--prompt-salt", "5",   "--quiet", NULL};
    e = run_llmload(shard, 3, 3);
    assert_null(strstr(e, "--max-tokens-total"));
    free(e);
}

/* One replay of path against the sim already started, with --prompt-salt
 * salt (NULL: auto): fills cached[i] with the cached tokens the sim served
 * request i (n of them) and returns run.json's prompt_salt. */
static int64_t salted_replay(const char *path, const char *salt, int64_t *cached, size_t n)
{
    const char *args[] = {path, salt ? "--prompt-salt" : NULL, salt, NULL};
    char *out = NULL, *err = NULL;
    char *dir = harness_run_sim_verdict("replay", args, 60, &out, &err);
    free(out);
    free(err);
    struct harness_recs *r = harness_requests_load(dir);
    assert_int_equal(r->n, n);
    for (size_t i = 0; i < n; i++) {
        json_t *rec = by_id(r, "id", (int64_t)i);
        assert_non_null(rec);
        assert_string_equal(harness_sval(rec, "kind"), "ok");
        cached[i] = harness_ival(rec, "cached_tokens");
    }
    harness_recs_free(r);
    int64_t used = harness_run_config_ival(dir, "prompt_salt");
    harness_results_free(dir);
    return used;
}

/* The salt in a replay: 8 lines share a 64-token prefix (synthetic, 128
 * tokens each), 300 ms apart so each is computed before the next (the
 * sim prefills one in about 20 ms: the margin is for a loaded box); a ninth
 * brings its own 80-word text. Twice with the default salt against one
 * sim: each time the group's first line misses and the rest find its 64
 * tokens, so the second replay found nothing of the first's synthetic
 * text; the text line, sent as it is, misses the first time and finds 4
 * of its 5 blocks (64 tokens) the second. The second replay's salt given
 * again sends its synthetic text again: the first line finds 7 of its 8
 * blocks. */
static void test_replay_salt(void **state)
{
    harness_tmp_begin();
    char trace[4096];
    size_t at = 0;
    for (int i = 0; i < 8; i++)
        at += (size_t)snprintf(trace + at, sizeof trace - at,
                               "{\"sched_ns\":%d,\"prompt_tokens\":128,\"max_tokens\":2,"
                               "\"prefix_id\":3,\"prefix_tokens\":64}\n",
                               i * 300000000);
    at += (size_t)snprintf(trace + at, sizeof trace - at,
                           "{\"sched_ns\":2400000000,\"max_tokens\":2,\"prompt\":\"");
    for (int w = 0; w < 80; w++)
        at += (size_t)snprintf(trace + at, sizeof trace - at, "%sw%03d", w ? " " : "", w);
    snprintf(trace + at, sizeof trace - at, "\"}\n");
    char path[600];
    harness_tmp_file(path, sizeof path, "salted.jsonl", trace);

    const char *sargs[] = {NULL};
    harness_cur_sim_start(sargs);
    int64_t cached[9];
    int64_t salt[2];
    for (int k = 0; k < 2; k++) {
        salt[k] = salted_replay(path, NULL, cached, 9);
        print_message("replay %d (salt %lld): cached %lld, then %lld..%lld; text line %lld\n", k,
                      (long long)salt[k], (long long)cached[0], (long long)cached[1],
                      (long long)cached[7], (long long)cached[8]);
        assert_int_equal(cached[0], 0);
        for (int i = 1; i < 8; i++)
            assert_int_equal(cached[i], 64);
        assert_int_equal(cached[8], k == 0 ? 0 : 64);
    }
    assert_true(salt[0] != salt[1]);
    char again[32];
    snprintf(again, sizeof again, "%lld", (long long)salt[1]);
    assert_int_equal(salted_replay(path, again, cached, 9), salt[1]);
    assert_int_equal(cached[0], 112);
    harness_tmp_end();
}

/* replay --expect against the default sim (TTFT about 10 ms, no errors):
 * a threshold it meets passes (exit 0), one it cannot meet (a TTFT p50
 * under 1 us: loopback alone takes longer) exits 7 with one line giving
 * the value and the bound, summary.json records each result and run.json
 * the spec, and `llmload report` judges it again from them (exit 7, the
 * same line). A replay that came out INVALID on this shared box exits 1
 * whatever its thresholds did (INVALID wins), which run.json's outcome
 * says; the rest holds either way. */
static char *replay_expect_case(const struct replay_paths *p, const char *out, const char *spec,
                                int want, char **err)
{
    const char *args[] = {"replay", p->trace,   "--url",   p->url,
                          "--out",  out,        "--quiet", "--lateness-tolerance",
                          "20%",    "--expect", spec,      NULL};
    int st = -1;
    char *o = NULL;
    assert_int_equal(harness_run(args, 60, &st, &o, err), 0);
    json_t *run = harness_json_load(out, "run.json");
    int w = json_is_true(json_object_get(json_object_get(run, "outcome"), "invalid")) ? 1 : want;
    if (st != w)
        fail_msg("replay --expect '%s' exited %d, want %d\nstdout:\n%s\nstderr:\n%s", spec, st, w,
                 o, *err);
    assert_string_equal(harness_sval(run, "expect"), spec);
    json_decref(run);
    return o;
}

/* `llmload report dir`: its exit status must be want; returns stderr. */
static char *report_status(const char *dir, int want)
{
    const char *rep[] = {"report", dir, NULL};
    return run_llmload(rep, want, want);
}

static void test_replay_expect(void **state)
{
    struct replay_paths rp;
    replay_paths_start(NULL, &rp);
    /* 20 requests 50 ms apart: light load for the sim. */
    FILE *f = fopen(rp.trace, "w");
    assert_non_null(f);
    for (int i = 0; i < 20; i++)
        fprintf(f, "{\"sched_ns\":%d,\"prompt_tokens\":16,\"max_tokens\":4}\n", i * 50000000);
    assert_int_equal(fclose(f), 0);
    char pass_dir[700], fail_dir[700];
    snprintf(pass_dir, sizeof pass_dir, "%s/pass", rp.dir);
    snprintf(fail_dir, sizeof fail_dir, "%s/fail", rp.dir);

    char *err = NULL;
    free(replay_expect_case(&rp, pass_dir, "error_rate<1%,e2e_p99<30s,output_tokens_per_s>0/s", 0,
                            &err));
    HARNESS_LACKS(err, "--expect");
    free(err);
    json_t *s = harness_expect_passed(pass_dir, 3);
    json_t *ex = json_object_get(s, "expect");
    ASSERT_NEAR(harness_num(json_array_get(ex, 1), "value"), harness_num(s, "latency_ns.e2e.p99"),
                0);
    json_decref(s);
    free(report_status(pass_dir, 0));

    free(replay_expect_case(&rp, fail_dir, "error_rate<1%,ttft_p50<1us", 7, &err));
    harness_sim_teardown(NULL);
    const char *line = "llmload: --expect: ttft_p50 is ";
    HARNESS_HAS(err, line);
    HARNESS_HAS(err, ", not < 1us\n");
    assert_null(strstr(strstr(err, line) + 1, "llmload: --expect: ")); /* that one alone */
    free(err);
    s = harness_summary_load(fail_dir);
    ex = json_object_get(s, "expect");
    assert_int_equal(json_array_size(ex), 2);
    assert_string_equal(harness_sval(json_array_get(ex, 0), "result"), "pass");
    json_t *o = json_array_get(ex, 1);
    assert_string_equal(harness_sval(o, "expect"), "ttft_p50<1us");
    assert_string_equal(harness_sval(o, "result"), "fail");
    ASSERT_NEAR(harness_num(o, "value"), harness_num(s, "latency_ns.ttft.p50"), 0);
    json_decref(s);
    err = report_status(fail_dir, 7);
    HARNESS_HAS(err, line);
    free(err);
    replay_paths_free(&rp);
}

HARNESS_MAIN(cmocka_unit_test_teardown(test_replay_identical_to_dump, harness_sim_teardown),
             cmocka_unit_test_teardown(test_replay_of_records, harness_sim_teardown),
             cmocka_unit_test_teardown(test_replay_salt, harness_sim_teardown),
             cmocka_unit_test_teardown(test_replay_time_scale_halves_offsets, harness_sim_teardown),
             cmocka_unit_test_teardown(test_replay_trace_fields, harness_sim_teardown),
             cmocka_unit_test_teardown(test_replay_by_class, harness_sim_teardown),
             cmocka_unit_test_teardown(test_replay_of_classes_keeps_api_and_ignore_eos,
                                       harness_sim_tmp_teardown),
             cmocka_unit_test_teardown(test_dump_carries_prefix_and_cancel, harness_sim_teardown),
             cmocka_unit_test_teardown(test_replay_trace_ends_before_duration,
                                       harness_sim_teardown),
             cmocka_unit_test_teardown(test_replay_indexed_shards_merge, harness_sim_teardown),
             cmocka_unit_test_teardown(test_replay_cold_by_index, harness_sim_teardown),
             cmocka_unit_test_teardown(test_replay_bad_input, harness_sim_tmp_teardown),
             cmocka_unit_test_teardown(test_replay_spend_check, harness_sim_tmp_teardown),
             cmocka_unit_test_teardown(test_replay_expect, harness_sim_teardown))
