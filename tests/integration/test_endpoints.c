/* test_endpoints.c: --url given more than once (docs/run.md, "Many
 * endpoints"), end to end against two `llmload sim`s, each logging every
 * request it served (--log): the sims' logs are the ground truth.
 *
 * - Round-robin: 40 requests over two sims, two worker threads: record id
 *   i carries endpoint i mod 2, and each sim's log holds exactly the
 *   requests of the ids that map to it (its count, and the multiset of
 *   their prompt lengths, drawn from 16-2000 tokens so they tell requests
 *   apart); summary.json's per-endpoint requests and ok equal the logs'
 *   counts, run.json lists both endpoints.
 * - One sim answering every request with a 500 (--fault 500:1): its
 *   endpoint's row has all of the errors (http_5xx, as many as its log
 *   has 500s), the other's none.
 * - --url-weights 3,1 over 40 requests: 30 and 10 in the logs, exactly,
 *   interleaved 0,0,1,0 by id.
 * - Sessions: every turn of session s on endpoint s mod 2, and the logs
 *   hold each endpoint's sessions' turns.
 * - Two shards (--shard 0/2, 1/2) with weights 3,1 give each id the
 *   endpoint one process gives it, and together 30:10 in the logs.
 * - Without --model, a second endpoint serving another model stops the
 *   run before anything is sent (exit 3, the line names its --url).
 * - A sweep (8 and 16 req/s, no warm-up, no recovery step) over the two
 *   sims, the second with a 100 ms engine step: each step's per-endpoint
 *   requests in summary.json and steps.jsonl equal what each sim logged
 *   in that step (the logs' lines split by step in arrival order, the
 *   steps running one after the other, and matched to the step's records
 *   by their prompt lengths); the slow sim's TTFT and TPOT p99 are the
 *   higher at every step, the findings name it (and only it), the
 *   terminal prints the block, report.html has table#endpoints, and
 *   `llmload report` rebuilds summary.json and report.html byte for byte.
 * - The bad inputs: weights not one per --url, a zero, negative or
 *   fractional weight, --url-weights with one --url, a bad second --url:
 *   one line naming the flag, exit 2.
 *
 * All traffic is to 127.0.0.1, at most 40 requests/s; about 20 s. */
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "harness.h"
#include "test.h"
#include "util/util.h"

#define MAX_REQ 256
#define RATE_40 "--rate", "40"

static struct harness_sim sims[2];
static char logs[2][512];
static char urls[2][160];

static int teardown(void **state)
{
    harness_sim_stop(&sims[0]);
    harness_sim_stop(&sims[1]);
    memset(sims, 0, sizeof sims);
    harness_tmp_end();
    return 0;
}

/* Start the two sims (instant engine, each logging to its own file); b_extra
 * (NULL-terminated, may be NULL) goes to the second only. */
static void sims_start(const char *const *b_extra)
{
    harness_tmp_begin();
    for (int i = 0; i < 2; i++) {
        char name[16];
        snprintf(name, sizeof name, "sim%d.log", i);
        harness_tmp_path(logs[i], sizeof logs[i], name);
        struct harness_argv a = {.n = 0};
        harness_argv_add(&a, (const char *const[]){"--profile", "instant", "--log", logs[i], NULL});
        if (i == 1)
            harness_argv_add(&a, b_extra);
        if (harness_sim_start(&sims[i], a.v) != 0)
            fail_msg("sim %d did not start", i);
        snprintf(urls[i], sizeof urls[i], "%s/v1", sims[i].url);
    }
}

/* The work every run and sweep of this file offers the two sims. */
#define EP_WORK                                                                                    \
    "--arrival", "constant", "--prompt-tokens", "uniform:16,2000", "--output-tokens", "4",         \
        "--threads", "2"

/* Run `llmload run --url A --url B --out <tmp>/<out> --quiet <EP_WORK> <args>`
 * (args name the load: RATE_40 or --sessions),
 * exit 0 or 1 (a lateness verdict on this shared machine). Returns the
 * results dir (caller frees). */
static char *run_two(const char *out, const char *const *args)
{
    static const char *const common[] = {EP_WORK, NULL};
    char *dir = malloc(600);
    assert_non_null(dir);
    harness_tmp_path(dir, 600, out);
    struct harness_argv a = {.n = 0};
    harness_argv_add(&a, (const char *const[]){"run", "--url", urls[0], "--url", urls[1], "--out",
                                               dir, "--quiet", NULL});
    harness_argv_add(&a, common);
    harness_argv_add(&a, args);
    free(harness_run_expect(a.v, 60, HARNESS_RC_OK_OR_INVALID, NULL));
    return dir;
}

static int cmp_i64(const void *a, const void *b)
{
    int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;
    return (x > y) - (x < y);
}

/* What the sims logged, after they stopped (which flushes the logs). */
struct served {
    size_t n[2];                /* lines per sim */
    size_t status500[2];        /* of them, answered 500 */
    int64_t prompt[2][MAX_REQ]; /* their prompt lengths, sorted */
};

static void sims_stop_and_read(struct served *s)
{
    memset(s, 0, sizeof *s);
    for (int i = 0; i < 2; i++) {
        harness_sim_stop(&sims[i]);
        json_t *log = harness_jsonl_load(logs[i]);
        assert_non_null(log);
        s->n[i] = json_array_size(log);
        assert_true(s->n[i] <= MAX_REQ);
        for (size_t k = 0; k < s->n[i]; k++) {
            json_t *l = json_array_get(log, k);
            s->prompt[i][k] = harness_ival_req(l, "prompt_tokens");
            s->status500[i] += harness_ival_req(l, "status") == 500;
        }
        qsort(s->prompt[i], s->n[i], sizeof s->prompt[i][0], cmp_i64);
        json_decref(log);
    }
}

/* The records of dirs (NULL-terminated), together: each carries the
 * endpoint want(id, session) says, and the requests each sim served
 * are exactly those of the ids mapped to it (count and prompt lengths).
 * Returns the records counted per endpoint into per_ep. */
static void check_split(const char *const *dirs, uint32_t (*want)(int64_t id, int64_t session),
                        const struct served *s, size_t per_ep[2])
{
    int64_t prompt[2][MAX_REQ];
    size_t n[2] = {0, 0};
    for (; *dirs; dirs++) {
        struct harness_recs *r = harness_requests_load(*dirs);
        for (size_t k = 0; k < r->n; k++) {
            json_t *j = r->items[k];
            int64_t id = harness_ival_req(j, "id"), ep = harness_ival_req(j, "endpoint");
            if (ep != (int64_t)want(id, harness_ival(j, "session")))
                fail_msg("request id %lld: endpoint %lld, want %u", (long long)id, (long long)ep,
                         want(id, harness_ival(j, "session")));
            assert_true(n[ep] < MAX_REQ);
            prompt[ep][n[ep]++] = harness_ival_req(j, "prompt_tokens");
        }
        harness_recs_free(r);
    }
    for (int i = 0; i < 2; i++) {
        if (n[i] != s->n[i])
            fail_msg("endpoint %d: %zu records, but its sim logged %zu requests", i, n[i], s->n[i]);
        qsort(prompt[i], n[i], sizeof prompt[i][0], cmp_i64);
        for (size_t k = 0; k < n[i]; k++)
            assert_int_equal(prompt[i][k], s->prompt[i][k]);
        per_ep[i] = n[i];
    }
}

static uint32_t want_mod2(int64_t id, int64_t session)
{
    return (uint32_t)(id % 2);
}

static uint32_t want_3_1(int64_t id, int64_t session)
{
    static const uint32_t seq[] = {0, 0, 1, 0};
    return seq[id % 4];
}

static uint32_t want_session_mod2(int64_t id, int64_t session)
{
    assert_true(session >= 0);
    return (uint32_t)(session % 2);
}

/* summary.json's endpoints[i] */
static json_t *ep_row(json_t *sum, size_t i)
{
    json_t *eps = json_object_get(sum, "endpoints");
    assert_true(json_is_array(eps));
    assert_int_equal(json_array_size(eps), 2);
    json_t *row = json_array_get(eps, i);
    assert_int_equal(harness_ival_req(row, "index"), (int64_t)i);
    assert_string_equal(harness_sval(row, "url"), urls[i]);
    return row;
}

/* The two sims (sims_start with sim_args) and one run_two with args into
 * <tmp>/r; once the sims have stopped, check_split of its records with
 * want into *s and per. Returns the results dir (caller frees). */
static char *split_run(const char *const *sim_args, const char *const *args,
                       uint32_t (*want)(int64_t id, int64_t session), struct served *s,
                       size_t per[2])
{
    sims_start(sim_args);
    char *dir = run_two("r", args);
    sims_stop_and_read(s);
    check_split((const char *const[]){dir, NULL}, want, s, per);
    return dir;
}

static void test_round_robin(void **state)
{
    struct served s;
    size_t per[2];
    char *dir = split_run(NULL, (const char *const[]){RATE_40, "--requests", "40", NULL}, want_mod2,
                          &s, per);
    assert_int_equal(per[0], 20);
    assert_int_equal(per[1], 20);
    json_t *sum = harness_summary_load(dir);
    for (size_t i = 0; i < 2; i++) {
        json_t *row = ep_row(sum, i);
        assert_int_equal(harness_ival_req(row, "requests"), (int64_t)s.n[i]);
        assert_int_equal(harness_ival_req(row, "scheduled"), (int64_t)s.n[i]);
        assert_int_equal(harness_ival_req(row, "ok"), (int64_t)s.n[i]);
        assert_int_equal(harness_ival_req(row, "errors"), 0);
        assert_int_equal(harness_ival_req(row, "weight"), 1);
        assert_true(harness_num(row, "latency_ns.ttft.count") == (double)s.n[i]);
    }
    json_decref(sum);
    json_t *run = harness_json_load(dir, "run.json");
    json_t *eps = json_object_get(json_object_get(run, "target"), "endpoints");
    assert_int_equal(json_array_size(eps), 2);
    for (size_t i = 0; i < 2; i++)
        assert_string_equal(harness_sval(json_array_get(eps, i), "url"), urls[i]);
    assert_int_equal(json_array_size(json_object_get(json_object_get(run, "config"), "urls")), 2);
    assert_true(json_is_null(json_object_get(json_object_get(run, "config"), "url_weights")));
    json_decref(run);
    free(dir);
}

static void test_fault_on_its_row(void **state)
{
    struct served s;
    size_t per[2];
    char *dir =
        split_run((const char *const[]){"--fault", "500:1", NULL},
                  (const char *const[]){RATE_40, "--requests", "40", NULL}, want_mod2, &s, per);
    assert_int_equal(s.status500[0], 0);
    assert_int_equal(s.status500[1], 20);
    json_t *sum = harness_summary_load(dir);
    json_t *a = ep_row(sum, 0), *b = ep_row(sum, 1);
    assert_int_equal(harness_ival_req(a, "ok"), 20);
    assert_int_equal(harness_ival_req(a, "errors"), 0);
    assert_int_equal(harness_ival_req(b, "ok"), 0);
    assert_int_equal(harness_ival_req(b, "errors"), (int64_t)s.status500[1]);
    assert_true(harness_num(b, "by_kind.http_5xx") == (double)s.status500[1]);
    assert_true(harness_num(b, "latency_ns.ttft.count") == 0);
    assert_true(harness_num(sum, "requests.failed") == (double)s.status500[1]);
    json_decref(sum);
    free(dir);
}

static void test_weights_3_1(void **state)
{
    struct served s;
    size_t per[2];
    char *dir = split_run(
        NULL, (const char *const[]){RATE_40, "--requests", "40", "--url-weights", "3,1", NULL},
        want_3_1, &s, per);
    assert_int_equal(s.n[0], 30);
    assert_int_equal(s.n[1], 10);
    json_t *sum = harness_summary_load(dir);
    assert_int_equal(harness_ival_req(ep_row(sum, 0), "requests"), 30);
    assert_int_equal(harness_ival_req(ep_row(sum, 0), "weight"), 3);
    assert_int_equal(harness_ival_req(ep_row(sum, 1), "requests"), 10);
    json_decref(sum);
    free(dir);
}

static void test_sessions_stay(void **state)
{
    struct served s;
    size_t per[2];
    char *dir = split_run(NULL,
                          (const char *const[]){"--sessions", "20", "--requests", "6", "--turns",
                                                "3", "--think", "10ms", NULL},
                          want_session_mod2, &s, per);
    assert_int_equal(per[0], 9); /* sessions 0, 2, 4: three turns each */
    assert_int_equal(per[1], 9);
    free(dir);
}

static void test_shards_same_endpoint(void **state)
{
    sims_start(NULL);
    char *d0 =
        run_two("s0", (const char *const[]){RATE_40, "--requests", "40", "--url-weights", "3,1",
                                            "--shard", "0/2", "--prompt-salt", "7", NULL});
    char *d1 =
        run_two("s1", (const char *const[]){RATE_40, "--requests", "40", "--url-weights", "3,1",
                                            "--shard", "1/2", "--prompt-salt", "7", NULL});
    struct served s;
    sims_stop_and_read(&s);
    size_t per[2];
    check_split((const char *const[]){d0, d1, NULL}, want_3_1, &s, per);
    assert_int_equal(per[0], 30);
    assert_int_equal(per[1], 10);
    /* llmload merge keeps the per-endpoint breakdown, recounted from the
     * records: the sims' 30 and 10, each endpoint's scheduled the shards'
     * sum. */
    char merged[600];
    harness_tmp_path(merged, sizeof merged, "merged");
    const char *am[] = {"merge", d0, d1, "--out", merged, NULL};
    char *mout = harness_run_expect(am, 60, HARNESS_RC_OK_OR_INVALID, NULL);
    assert_non_null(strstr(mout, "by endpoint"));
    free(mout);
    json_t *sum = harness_json_load(merged, "summary.json");
    json_t *eps = json_object_get(sum, "endpoints");
    assert_int_equal(json_array_size(eps), 2);
    for (size_t k = 0; k < 2; k++) {
        json_t *e = json_array_get(eps, k);
        assert_int_equal(harness_ival_req(e, "requests"), (int64_t)per[k]);
        assert_int_equal(harness_ival_req(e, "ok"), (int64_t)per[k]);
        assert_int_equal(harness_ival_req(e, "scheduled"), (int64_t)per[k]);
        assert_int_equal(harness_ival_req(e, "weight"), k == 0 ? 3 : 1);
    }
    json_decref(sum);
    /* llmload report on the merged directory rebuilds the same file. */
    char path[700];
    snprintf(path, sizeof path, "%s/summary.json", merged);
    size_t l1 = 0, l2 = 0;
    char *b1 = harness_read_file(path, &l1);
    const char *ar[] = {"report", merged, NULL};
    free(harness_run_expect(ar, 60, HARNESS_RC_OK_OR_INVALID, NULL));
    char *b2 = harness_read_file(path, &l2);
    assert_true(b1 && b2);
    assert_int_equal(l1, l2);
    assert_memory_equal(b1, b2, l1);
    free(b1);
    free(b2);
    free(d0);
    free(d1);
}

/* One sim's log line: when it arrived and its prompt length. */
struct logged {
    uint64_t arrival_ns;
    int64_t prompt;
    int sim;
};

static int cmp_arrival(const void *a, const void *b)
{
    const struct logged *x = a, *y = b;
    return (x->arrival_ns > y->arrival_ns) - (x->arrival_ns < y->arrival_ns);
}

#define SWEEP_MAX_STEPS 8

/* The sweep's ground truth: both sims' log lines in arrival order, cut
 * into steps by each step's record count (steps run one after the other:
 * a step's every request ended before the next one's first was sent).
 * For each step and sim, its count, and the prompt lengths of the step's
 * records on that endpoint equal those of the sim's lines (sorted). */
static void check_sweep_split(const char *dir, size_t n_steps, size_t got[][2])
{
    struct logged *all = calloc(2 * MAX_REQ, sizeof *all);
    assert_non_null(all);
    size_t n_all = 0;
    for (int i = 0; i < 2; i++) {
        json_t *log = harness_jsonl_load(logs[i]);
        assert_non_null(log);
        for (size_t k = 0; k < json_array_size(log); k++) {
            assert_true(n_all < 2 * MAX_REQ);
            json_t *l = json_array_get(log, k);
            all[n_all++] = (struct logged){(uint64_t)harness_ival_req(l, "arrival_ns"),
                                           harness_ival_req(l, "prompt_tokens"), i};
        }
        json_decref(log);
    }
    qsort(all, n_all, sizeof *all, cmp_arrival);
    struct harness_recs *r = harness_requests_load(dir);
    static int64_t rec_p[SWEEP_MAX_STEPS][2][MAX_REQ], log_p[SWEEP_MAX_STEPS][2][MAX_REQ];
    size_t n_rec[SWEEP_MAX_STEPS][2] = {{0}}, per_step[SWEEP_MAX_STEPS] = {0};
    for (size_t k = 0; k < r->n; k++) {
        int64_t st = harness_ival_req(r->items[k], "step"),
                ep = harness_ival_req(r->items[k], "endpoint");
        assert_true(st >= 0 && (size_t)st < n_steps && (ep == 0 || ep == 1));
        rec_p[st][ep][n_rec[st][ep]++] = harness_ival_req(r->items[k], "prompt_tokens");
        per_step[st]++;
    }
    harness_recs_free(r);
    size_t at = 0;
    for (size_t st = 0; st < n_steps; st++) {
        got[st][0] = got[st][1] = 0;
        for (size_t k = 0; k < per_step[st]; k++, at++) {
            assert_true(at < n_all);
            int e = all[at].sim;
            log_p[st][e][got[st][e]++] = all[at].prompt;
        }
        for (int e = 0; e < 2; e++) {
            if (got[st][e] != n_rec[st][e])
                fail_msg("step %zu, sim %d: %zu logged, %zu records on its endpoint", st, e,
                         got[st][e], n_rec[st][e]);
            qsort(rec_p[st][e], n_rec[st][e], sizeof(int64_t), cmp_i64);
            qsort(log_p[st][e], got[st][e], sizeof(int64_t), cmp_i64);
            for (size_t k = 0; k < got[st][e]; k++)
                assert_int_equal(rec_p[st][e][k], log_p[st][e][k]);
        }
    }
    assert_int_equal(at, n_all); /* no logged request outside the steps */
    free(all);
}

static void test_sweep_per_endpoint(void **state)
{
    sims_start((const char *const[]){"--step-base", "100ms", NULL});
    char dir[600];
    harness_tmp_path(dir, sizeof dir, "sw");
    const char *args[] = {"sweep",           "--url", urls[0],    "--url",   urls[1],
                          "--out",           dir,     "--quiet",  "--rates", "8,16",
                          "--step-duration", "3s",    "--warmup", "0",       "--no-recovery",
                          EP_WORK,           NULL};
    char *out = harness_run_expect(args, 120, HARNESS_RC_OK_OR_INVALID, NULL);
    for (int i = 0; i < 2; i++)
        harness_sim_stop(&sims[i]); /* flushes the logs */
    json_t *sum = harness_summary_load(dir);
    json_t *steps = json_object_get(sum, "steps");
    size_t n = json_array_size(steps);
    assert_true(n >= 2 && n <= SWEEP_MAX_STEPS); /* a --confirm re-run may add one */
    size_t got[SWEEP_MAX_STEPS][2];
    check_sweep_split(dir, n, got);
    char path[700];
    snprintf(path, sizeof path, "%s/steps.jsonl", dir);
    json_t *lines = harness_jsonl_load(path); /* the step lines come first, "end" last */
    assert_non_null(lines);
    for (size_t st = 0; st < n; st++) {
        json_t *eps = json_object_get(json_array_get(steps, st), "endpoints");
        json_t *leps = json_object_get(json_array_get(lines, st), "endpoints");
        assert_int_equal(json_array_size(eps), 2);
        assert_int_equal(json_array_size(leps), 2);
        for (size_t e = 0; e < 2; e++) {
            json_t *row = json_array_get(eps, e), *line = json_array_get(leps, e);
            assert_string_equal(harness_sval(row, "url"), urls[e]);
            assert_int_equal(harness_ival_req(row, "requests"), (int64_t)got[st][e]);
            assert_int_equal(harness_ival_req(row, "ok"), (int64_t)got[st][e]);
            assert_int_equal(harness_ival_req(row, "scheduled"), (int64_t)got[st][e]);
            assert_int_equal(harness_ival_req(line, "requests"), (int64_t)got[st][e]);
            assert_int_equal(harness_ival_req(line, "scheduled"), (int64_t)got[st][e]);
        }
        json_t *a = json_array_get(eps, 0), *b = json_array_get(eps, 1);
        /* The slow sim's engine step is 100 ms: its TPOT p99 at least
         * that, the instant one's far below. */
        double tpot_a = harness_num(a, "latency_ns.tpot.p99"),
               tpot_b = harness_num(b, "latency_ns.tpot.p99");
        if (!(tpot_b >= 90e6 && tpot_b > 2 * tpot_a))
            fail_msg("step %zu: TPOT p99 %.0f ns (slow) against %.0f ns", st, tpot_b, tpot_a);
        assert_true(harness_num(b, "latency_ns.ttft.p99") > harness_num(a, "latency_ns.ttft.p99"));
    }
    json_decref(lines);
    /* The findings name the slow endpoint, and only it. */
    char want[300];
    snprintf(want, sizeof want, "endpoint 1 (%s) had TTFT p99 ", urls[1]);
    const char *text = harness_sval(json_object_get(sum, "findings"), "text");
    if (!strstr(text, want) || !strstr(text, "an uneven replica or routing"))
        fail_msg("findings lack \"%s\": %s", want, text);
    assert_null(strstr(text, "endpoint 0 ("));
    json_t *fe = json_object_get(json_object_get(sum, "findings"), "endpoints");
    assert_true(json_array_size(fe) >= 1);
    assert_int_equal(harness_ival_req(json_array_get(fe, 0), "endpoint"), 1);
    json_decref(sum);
    if (!strstr(out, "by endpoint (each step's window requests):") || !strstr(out, want))
        fail_msg("stdout lacks the endpoint block or the finding: %s", out);
    free(out);
    char *html = harness_read_in(dir, "report.html");
    assert_non_null(strstr(html, "<table id=\"endpoints\">"));
    assert_non_null(strstr(html, urls[1]));
    free(html);
    free(harness_report_rebuilds(dir, (const char *const[]){"summary.json", "report.html", NULL}));
}

/* Without --model, every endpoint's /models must list the first's model:
 * replicas of another model stop the run before its load, naming the
 * --url; with --model nothing is asked of the second. */
static void test_model_on_each(void **state)
{
    sims_start((const char *const[]){"--model-name", "other", NULL});
    char out[600];
    harness_tmp_path(out, sizeof out, "r");
    const char *args[] = {"run",     "--url",  urls[0], "--url",      urls[1], "--out", out,
                          "--quiet", "--rate", "40",    "--requests", "4",     NULL};
    char *err = NULL;
    free(harness_run_expect(args, 60, 3, &err));
    char want[300];
    snprintf(want, sizeof want, "--url %s (endpoint 1): its /models does not list \"llmload-sim\"",
             urls[1]);
    if (!strstr(err, want))
        fail_msg("stderr lacks \"%s\": %s", want, err);
    free(err);
    struct served s;
    sims_stop_and_read(&s);
    assert_int_equal(s.n[0] + s.n[1], 0); /* nothing was sent */
}

static void test_bad_inputs(void **state)
{
    const char *a = "http://127.0.0.1:1/v1", *b = "http://127.0.0.1:2/v1";
    HARNESS_EXPECT_USAGES(
        {{"run", "--url", a, "--url", b, "--url-weights", "3,1,1", "--rate", "1"},
         "--url-weights: 3 weights for 2 --url"},
        {{"run", "--url", a, "--url", b, "--url-weights", "3", "--rate", "1"},
         "--url-weights: 1 weight for 2 --url"},
        {{"run", "--url", a, "--url", b, "--url-weights", "3,0", "--rate", "1"},
         "--url-weights: weight 2 must be a whole number 1 to 100, got \"0\""},
        {{"run", "--url", a, "--url", b, "--url-weights", "-1,2", "--rate", "1"},
         "--url-weights: weight 1 must be"},
        {{"run", "--url", a, "--url", b, "--url-weights", "1.5,2", "--rate", "1"},
         "--url-weights: weight 1 must be"},
        {{"run", "--url", a, "--url-weights", "2", "--rate", "1"},
         "--url-weights: goes with two or more --url"},
        {{"run", "--url", a, "--url", "ftp://x", "--rate", "1"}, "--url: expected http://"},
        {{"sweep", "--url", a, "--url", b, "--url-weights", "0,1", "--rates", "1"},
         "--url-weights: weight 1 must be"},
        {{"replay", "x.jsonl", "--url", a, "--url", b, "--url-weights", "1"},
         "--url-weights: 1 weight for 2 --url"});
}

HARNESS_MAIN(cmocka_unit_test_teardown(test_round_robin, teardown),
             cmocka_unit_test_teardown(test_fault_on_its_row, teardown),
             cmocka_unit_test_teardown(test_weights_3_1, teardown),
             cmocka_unit_test_teardown(test_sessions_stay, teardown),
             cmocka_unit_test_teardown(test_shards_same_endpoint, teardown),
             cmocka_unit_test_teardown(test_sweep_per_endpoint, teardown),
             cmocka_unit_test_teardown(test_model_on_each, teardown),
             cmocka_unit_test_teardown(test_bad_inputs, teardown))
