/* test_guards.c: the guards that stop a run or condemn it, end to end.
 *
 * - The spend guard, --max-tokens-total N: offering stops before the
 *   request whose prompt + max tokens would take the running total past N,
 *   summary.json's stop_reason names the guard and the terminal summary
 *   says so ("offering stopped early: ...", on stdout with the rest of the
 *   report).
 * - The INVALID self-check (docs/metrics.md): the client is frozen with
 *   SIGSTOP for 300 ms in the middle of an open-loop run, so the arrivals
 *   due meanwhile are processed late; the run must exit 1 with "invalid":
 *   true, a reason naming the schedule lateness, and the banner in the
 *   terminal summary. The same run left alone is the control. A sweep's
 *   step frozen the same way is INVALID and every place that words it
 *   names the OS or VM, not the generator (docs/sweep.md, "INVALID
 *   steps").
 * - --timeout-connect on 127.0.0.1, for both HTTP clients: a listener with
 *   a backlog of 0 whose accept queue holds one connection nobody accepts.
 *   Linux then drops every further SYN (a full accept queue drops the SYN
 *   before syncookies are considered), so connect() neither completes nor
 *   fails: the client retransmits the SYN after 1 s, 3 s, ..., far past
 *   the 300 ms timeout.
 *
 * All traffic is to 127.0.0.1, at most 100 requests/s; each test ends in
 * under 5 s, the file in about 10 s (13 s when the control retries). The
 * client is forked here (not through harness_run) so that a test can
 * signal it while it runs; its stdout and stderr go to files in the
 * test's directory. */
#include <arpa/inet.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <jansson.h>
#include <netinet/in.h>
#include <poll.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "harness.h"
#include "test.h"
#include "util/util.h"

#define MS 1000000LL
#define MAX_ARGS 48
#define CLIENT_TIMEOUT_S 20 /* a client still running past this is a hang */

/* ---- per-test state, undone by the teardown ----------------------------- */

static pid_t cur_client; /* a client running, or 0 */
static pid_t cur_server; /* the stalling listener's child, or 0 */

static int teardown(void **state)
{
    unsetenv("LLMLOAD_TEST_SEND_DELAY_NS");
    harness_cleanup((pid_t *const[]){&cur_client, &cur_server, NULL});
    return 0;
}

/* ---- the client ---------------------------------------------------------- */

struct client_res {
    int status; /* exit code, or 128 + signal */
    char *out;  /* stdout (caller frees) */
    char *err;  /* stderr (caller frees) */
    char dir[600]; /* the results directory */
};

/* Fork and exec `LLMLOAD_BIN run --url url --out <tmp>/<name> --quiet
 * --no-metrics args...` with stdin from /dev/null and stdout and stderr
 * to <tmp>/<name>.out and .err. Sets cur_client and res->dir. */
static pid_t client_start(const char *url, const char *name, const char *const *args,
                          struct client_res *res)
{
    char outp[640], errp[640], leaf[64];
    memset(res, 0, sizeof *res);
    harness_tmp_path(res->dir, sizeof res->dir, name);
    snprintf(leaf, sizeof leaf, "%s.out", name);
    harness_tmp_path(outp, sizeof outp, leaf);
    snprintf(leaf, sizeof leaf, "%s.err", name);
    harness_tmp_path(errp, sizeof errp, leaf);
    const char *head[] = {"run", "--url", url, "--out", res->dir, "--quiet", "--no-metrics",
                          NULL};
    struct harness_argv a = {.n = 0};
    harness_argv_add(&a, head);
    harness_argv_add(&a, args);
    cur_client = harness_spawn(a.v, outp, errp, -1, NULL, NULL);
    return cur_client;
}

/* Wait for the client (SIGKILL past CLIENT_TIMEOUT_S) and read what it
 * printed into res. */
static void client_wait(pid_t pid, const char *name, struct client_res *res)
{
    res->status = harness_reap(pid, CLIENT_TIMEOUT_S * 1000);
    cur_client = 0;
    char p[640], leaf[64];
    snprintf(leaf, sizeof leaf, "%s.out", name);
    harness_tmp_path(p, sizeof p, leaf);
    res->out = harness_read_file(p, NULL);
    snprintf(leaf, sizeof leaf, "%s.err", name);
    harness_tmp_path(p, sizeof p, leaf);
    res->err = harness_read_file(p, NULL);
    assert_true(res->out && res->err);
    /* Under make check-asan a sanitizer's report exits 1, the same status
     * as an INVALID run, which some tests here accept. */
    if (strstr(res->err, "Sanitizer") || strstr(res->err, "runtime error:"))
        fail_msg("the client reported a sanitizer error:\n%s", res->err);
}

/* Start the client, wait for it, and fail unless it exited expect_rc
 * (HARNESS_RC_OK_OR_INVALID: 0 or 1). */
static void client_run(const char *url, const char *name, const char *const *args,
                       int expect_rc, struct client_res *res)
{
    pid_t pid = client_start(url, name, args, res);
    client_wait(pid, name, res);
    if (res->status != expect_rc &&
        !(expect_rc == HARNESS_RC_OK_OR_INVALID && (res->status == 0 || res->status == 1)))
        fail_msg("llmload run exited %d, expected %d\nstdout:\n%s\nstderr:\n%s", res->status,
                 expect_rc, res->out, res->err);
}

static void client_res_free(struct client_res *res)
{
    free(res->out);
    free(res->err);
    res->out = res->err = NULL;
}

/* The sim's completion URL. */
static const char *sim_url(void)
{
    static char url[160];
    snprintf(url, sizeof url, "%s/v1", harness_cur_sim.url);
    return url;
}

/* Fail unless haystack holds needle; show both. */
static void assert_has(const char *haystack, const char *needle, const char *what)
{
    if (!strstr(haystack, needle))
        fail_msg("%s lacks \"%s\"; it was:\n%s", what, needle, haystack);
}

/* The records of dir, checked to be ids 0..n-1 once each; each must have
 * kind `kind`. Returns them (caller frees). */
static struct harness_recs *records_ids_kind(const char *dir, size_t n, const char *kind)
{
    struct harness_recs *r = harness_requests_load(dir);
    if (r->n != n)
        fail_msg("%zu records in %s/requests.jsonl, expected %zu", r->n, dir, n);
    char *seen = calloc(n ? n : 1, 1);
    assert_non_null(seen);
    for (size_t i = 0; i < n; i++) {
        json_t *rec = r->items[i];
        int64_t id = harness_ival_req(rec, "id");
        if (id < 0 || (size_t)id >= n || seen[id])
            fail_msg("record id %lld is out of range or repeated", (long long)id);
        seen[id] = 1;
        if (strcmp(harness_sval(rec, "kind"), kind) != 0) {
            char *s = json_dumps(rec, JSON_COMPACT);
            fail_msg("expected kind %s: %s", kind, s ? s : "?");
        }
    }
    free(seen);
    return r;
}

/* ---- the spend guard ------------------------------------------------------ */

/* The offer every spend-guard case makes: 50/s for 2 s (100 arrivals),
 * each asking 50 prompt + 50 output tokens, so each costs 100 tokens
 * against the guard. The sim answers at once. */
#define GUARD_LOAD                                                                   \
    "--rate", "50", "--arrival", "constant", "--prompt-tokens", "50", "--output-tokens", \
        "50"

/* Run the guard case into <tmp>/<name> with --max-tokens-total total and
 * the extra args; check that exactly n requests were offered and all of
 * them ran, and return the summary (caller decrefs) and the client's
 * output. The exit status may be 1: with ten arrivals the lateness p99 is
 * the worst one, and a single wake-up over 1 ms late on this shared
 * machine marks the run INVALID (the self-check doing its job). */
static json_t *guard_run(const char *name, const char *total, const char *const *extra,
                         size_t n, struct client_res *res)
{
    const char *args[MAX_ARGS] = {GUARD_LOAD, "--max-tokens-total", total};
    size_t k = 10;
    for (size_t i = 0; extra && extra[i]; i++) {
        assert_true(k < MAX_ARGS - 1);
        args[k++] = extra[i];
    }
    args[k] = NULL;
    client_run(sim_url(), name, args, HARNESS_RC_OK_OR_INVALID, res);
    struct harness_recs *r = records_ids_kind(res->dir, n, "ok");
    for (size_t i = 0; i < r->n; i++) {
        assert_int_equal(harness_ival_req(r->items[i], "prompt_tokens"), 50);
        assert_int_equal(harness_ival_req(r->items[i], "max_tokens"), 50);
    }
    harness_recs_free(r);
    json_t *s = harness_summary_load(res->dir);
    json_t *req = json_object_get(s, "requests");
    assert_int_equal(harness_ival_req(req, "scheduled"), n);
    assert_int_equal(harness_ival_req(req, "sent"), n);
    assert_int_equal(harness_ival_req(req, "ok"), n);
    assert_int_equal(harness_ival_req(s, "records_written"), n);
    return s;
}

/* A bound that is an exact multiple of the cost: 1000 tokens admit ten
 * requests of 100 (the tenth reaches 1000 exactly, which does not pass
 * it); the eleventh would, so offering stops there, 90 arrivals early. */
static void test_spend_guard_exact_multiple(void **state)
{
    harness_tmp_begin();
    harness_instant_sim_start();
    const char *extra[] = {"--duration", "2s", NULL};
    struct client_res res;
    json_t *s = guard_run("r", "1000", extra, 10, &res);
    const char *why = "spend guard: the next request would pass --max-tokens-total 1000";
    assert_string_equal(harness_sval(s, "stop_reason"), why);
    assert_has(res.out, "offering stopped early: spend guard: the next request would pass "
                        "--max-tokens-total 1000\n", "stdout");
    assert_has(res.err, "spend guard: the next request would pass --max-tokens-total 1000; "
                        "offering stopped", "stderr");
    /* The window ends with the last response (ten arrivals 20 ms apart,
     * then their answers), not at --duration: rates over the 1.8 s when
     * nothing was offered would read ten times too low. */
    ASSERT_IN_RANGE(harness_ival_req(s, "window_ns"), 180 * MS, 1000 * MS);
    json_decref(s);
    client_res_free(&res);
}

/* A bound that is not a multiple: 1049 admits ten (1000) and stops at the
 * eleventh (1100), with two worker threads, each of which walks every
 * arrival in schedule order and so stops at the same one. Then the
 * boundary from the other side: a guard equal to the whole schedule's
 * cost (20 requests x 100 in 0.4 s) admits all of it and stops nothing,
 * so there is no stop reason and no line about it. */
static void test_spend_guard_not_a_multiple(void **state)
{
    harness_tmp_begin();
    harness_instant_sim_start();
    const char *extra[] = {"--duration", "2s", "--threads", "2", NULL};
    struct client_res res;
    json_t *s = guard_run("r", "1049", extra, 10, &res);
    assert_string_equal(harness_sval(s, "stop_reason"),
                        "spend guard: the next request would pass --max-tokens-total 1049");
    assert_has(res.out, "offering stopped early: spend guard: the next request would pass "
                        "--max-tokens-total 1049\n", "stdout");
    /* Both workers carried some (ids alternate between them). */
    struct harness_recs *r = harness_requests_load(res.dir);
    int by_worker[2] = {0, 0};
    for (size_t i = 0; i < r->n; i++) {
        int64_t wk = harness_ival_req(r->items[i], "worker");
        assert_true(wk == 0 || wk == 1);
        by_worker[wk]++;
    }
    assert_int_equal(by_worker[0], 5);
    assert_int_equal(by_worker[1], 5);
    harness_recs_free(r);
    json_decref(s);
    client_res_free(&res);

    const char *whole[] = {"--duration", "0.4s", NULL};
    s = guard_run("r2", "2000", whole, 20, &res);
    assert_true(harness_is_null(s, "stop_reason"));
    if (strstr(res.out, "offering stopped early"))
        fail_msg("a guard that stopped nothing was reported:\n%s", res.out);
    json_decref(s);
    client_res_free(&res);
}

/* ---- the INVALID self-check ---------------------------------------------- */

/* 100 req/s for 2 s, open loop, against the instant sim: 200 arrivals. */
static const char *const selfcheck_args[] = {
    "--rate", "100", "--arrival", "constant", "--duration", "2s",
    "--prompt-tokens", "8", "--output-tokens", "4", NULL};

/* The headline says whose fault, as lateness_diagnosis.cause does. */
#define BANNER_TOP_HOST                                                                            \
    "*** INVALID RUN: the host (OS or VM) did not run the client on schedule ***\n"
#define BANNER_TOP_BUSY                                                                            \
    "*** INVALID RUN: the load generator was too busy to keep the schedule ***\n"
#define BANNER_END "\n*** INVALID RUN: schedule lateness p99 "
/* A stopped process is the OS not running the worker, not its load: the
 * reason says whose lateness it was (docs/metrics.md, "Whose lateness"). */
#define LATE_REASON_ASLEEP                                                             \
    " sends later than 1ms came due while the worker slept, and it woke late: the OS or " \
    "VM did not run it in time (not the generator's load)"

/* 1 once a thread of pid is seen sleeping in epoll_wait (its wchan), 0
 * when none is within timeout_ms or wchan cannot be read here (then the
 * caller asserts less). */
static int worker_in_epoll_wait(pid_t pid, int timeout_ms)
{
    char dir[64];
    snprintf(dir, sizeof dir, "/proc/%d/task", (int)pid);
    for (int waited = 0; waited < timeout_ms; waited++) {
        DIR *d = opendir(dir);
        if (!d)
            return 0;
        struct dirent *e;
        int found = 0;
        while (!found && (e = readdir(d)) != NULL) {
            if (e->d_name[0] == '.')
                continue;
            char path[400], wchan[64] = "";
            snprintf(path, sizeof path, "%s/%s/wchan", dir, e->d_name);
            FILE *f = fopen(path, "r");
            if (f) {
                if (!fgets(wchan, sizeof wchan, f))
                    wchan[0] = '\0';
                fclose(f);
            }
            found = strstr(wchan, "epoll") != NULL;
        }
        closedir(d);
        if (found)
            return 1;
        harness_sleep_ms(1);
    }
    print_message("no thread seen in epoll_wait: the diagnosis is not asserted\n");
    return 0;
}

/* Wait up to 10 s for path to exist. */
static void wait_for_file(const char *path)
{
    struct stat st;
    for (int i = 0; i < 2000; i++) {
        if (stat(path, &st) == 0)
            return;
        harness_sleep_ms(5);
    }
    fail_msg("%s did not appear within 10 s", path);
}

/* Once the client pid has written dir's run.json and run lead_ms more,
 * stop it for 300 ms while its worker sleeps in epoll_wait, as an idle
 * worker at these rates nearly always does (on a crowded machine it may
 * instead be caught between waits, runnable, and the diagnosis, which sees
 * only where the worker slept, would call the lateness busy). Returns
 * whether it was seen asleep before the stop. */
static int pause_client(pid_t pid, const char *dir, int lead_ms)
{
    char runjson[700];
    snprintf(runjson, sizeof runjson, "%s/run.json", dir);
    wait_for_file(runjson);
    harness_sleep_ms(lead_ms);
    int asleep_seen = worker_in_epoll_wait(pid, 2000);
    assert_int_equal(kill(pid, SIGSTOP), 0);
    harness_sleep_ms(300);
    assert_int_equal(kill(pid, SIGCONT), 0);
    return asleep_seen;
}

/* Freeze the client for 300 ms half a second into its run: the 30 or so
 * arrivals due while it is stopped are processed up to 300 ms late when it
 * resumes, so the lateness p99 (the 198th of 200) is far over 1 ms. The
 * run is marked in every place docs/metrics.md promises: exit status 1,
 * summary.json and the terminal summary (a banner at the top and a line at
 * the end). `run` writes no HTML report (that is the sweep's). */
static void test_invalid_when_client_paused(void **state)
{
    harness_tmp_begin();
    harness_instant_sim_start();
    struct client_res res;
    pid_t pid = client_start(sim_url(), "r", selfcheck_args, &res);
    /* run.json is written just before the driver starts its clock. */
    int asleep_seen = pause_client(pid, res.dir, 500);
    client_wait(pid, "r", &res);
    if (res.status != 1)
        fail_msg("llmload run exited %d, expected 1 (INVALID)\nstdout:\n%s\nstderr:\n%s",
                 res.status, res.out, res.err);

    /* The pause fell inside the schedule: some arrival went out over
     * 200 ms after it was due. (The premise, not the product.) */
    struct harness_recs *r = records_ids_kind(res.dir, 200, "ok");
    int64_t worst = 0;
    for (size_t i = 0; i < r->n; i++) {
        int64_t q = harness_ival_req(r->items[i], "sent_ns") -
                    harness_ival_req(r->items[i], "sched_ns");
        worst = q > worst ? q : worst;
    }
    harness_recs_free(r);
    if (worst < 200 * MS)
        fail_msg("the 300 ms pause did not land in the run: worst sent - sched %.1f ms",
                 (double)worst / 1e6);

    json_t *s = harness_summary_load(res.dir);
    assert_true(json_is_true(json_object_get(s, "invalid")));
    const char *why = harness_sval(s, "invalid_reason");
    if (strncmp(why, "schedule lateness p99 ", 22) != 0 ||
        (asleep_seen && !strstr(why, LATE_REASON_ASLEEP)))
        fail_msg("invalid_reason does not name the lateness and whose: \"%s\"", why);
    ASSERT_IN_RANGE(harness_num(s, "latency_ns.schedule_lateness.p99"), 100 * MS, 1000 * MS);
    /* About 30 arrivals fell in the pause, every one with the worker asleep
     * in epoll_wait (at 100/s it is idle between sends) and woken 0-300 ms
     * late; a few more may be late for other reasons. */
    int64_t late = (int64_t)harness_num(s, "lateness_diagnosis.late_sends");
    int64_t asleep = (int64_t)harness_num(s, "lateness_diagnosis.asleep_when_due");
    if (late < 20 || asleep > late || (asleep_seen && (asleep < 20 || 2 * asleep < late)))
        fail_msg("lateness diagnosis: %lld late sends, %lld asleep when due", (long long)late,
                 (long long)asleep);
    /* run.json, rewritten at the end, carries the verdict too. */
    json_t *run = harness_json_load(res.dir, "run.json");
    json_t *o = json_object_get(run, "outcome");
    assert_non_null(o);
    assert_int_equal(harness_ival_req(o, "exit_status"), 1);
    assert_true(json_is_true(json_object_get(o, "invalid")));
    assert_string_equal(harness_sval(o, "invalid_reason"), why);
    assert_true(json_is_false(json_object_get(o, "interrupted")));
    assert_true(harness_is_null(o, "stop_reason"));
    json_decref(run);
    /* Stopped while asleep: the host's fault, and the headline says so
     * above the reason that does (it once blamed the generator). */
    const char *cause = harness_sval(json_object_get(s, "lateness_diagnosis"), "cause");
    if (asleep_seen)
        assert_string_equal(cause, "asleep");
    assert_has(res.out, strcmp(cause, "busy") == 0 ? BANNER_TOP_BUSY : BANNER_TOP_HOST, "stdout");
    if (strcmp(cause, "busy") != 0 && strstr(res.out, "generator could not keep"))
        fail_msg("the host's lateness is headlined as the generator's:\n%s", res.out);
    assert_has(res.out,
               "\n*** The latencies below include the client's own delay: an upper bound on the "
               "server's, not its figures.\n",
               "stdout");
    assert_has(res.out, BANNER_END, "stdout");
    /* The banner carries the same reason as summary.json. */
    char line[300];
    snprintf(line, sizeof line, "*** %s\n", why);
    assert_has(res.out, line, "stdout");
    json_decref(s);
    client_res_free(&res);
}

/* The self-check's rule, as one run shows it (docs/metrics.md): INVALID
 * (exit 1, "invalid": true, a lateness reason, the banner) exactly when
 * the percentile that lateness moved nearest its limit (summary.json's
 * self_check.largest_move) moved past it; otherwise valid (exit 0, a null
 * reason, no banner), with a lateness warning exactly when the lateness
 * p99 is over 1 ms. Returns 1 when the run was valid. */
static int selfcheck_rule_holds(const struct client_res *res)
{
    json_t *s = harness_summary_load(res->dir);
    double p99 = harness_num(s, "latency_ns.schedule_lateness.p99");
    int invalid = json_is_true(json_object_get(s, "invalid"));
    const char *why = harness_sval(s, "invalid_reason");
    json_t *m = json_object_get(json_object_get(s, "self_check"), "largest_move");
    if (!json_is_object(m))
        fail_msg("summary.json has no self_check.largest_move");
    double moved = harness_num(m, "moved_ns"), limit = harness_num(m, "limit_ns");
    double value = harness_num(m, "value_ns");
    int over = moved > limit;
    int warned = !harness_is_null(s, "lateness_warning");
    if (limit < 1e6 || limit < 0.0199 * value || invalid != over || res->status != (over ? 1 : 0) ||
        (strstr(res->out, "INVALID") != NULL) != over ||
        (over && strncmp(why, "schedule lateness p99 ", 22) != 0) ||
        (!over && !harness_is_null(s, "invalid_reason")) || (!over && warned != (p99 > 1e6)) ||
        (warned && !strstr(res->out, "\nnote     schedule lateness p99 ")))
        fail_msg("lateness p99 %.3f ms moved %s by %.3f ms (limit %.3f ms), yet exit %d, "
                 "invalid %d, invalid_reason \"%s\", warned %d\nstdout:\n%s\nstderr:\n%s",
                 p99 / 1e6, harness_sval(m, "latency"), moved / 1e6, limit / 1e6, res->status,
                 invalid, why, warned, res->out, res->err);
    json_decref(s);
    return !over;
}

/* 2 ms of lateness on every send (LLMLOAD_TEST_SEND_DELAY_NS: the workers
 * take each arrival up 2 ms after it is due), against a sim whose TTFT is
 * hundreds of milliseconds (a 250 ms engine step): 2 ms is under 2% of any
 * TTFT or E2E percentile, so the run is valid and warns, naming the
 * lateness. The premise (every send at least 2 ms late) is checked in the
 * records. Then the same 2 ms against the instant sim, whose TTFT is well
 * under a millisecond: it moves TTFT p50 by 2 ms, over the 1 ms floor, so
 * the run is INVALID. Both obey the rule above. */
static void test_verdict_in_proportion(void **state)
{
    harness_tmp_begin();
    const char *slow[] = {"--step-base", "250ms", NULL};
    harness_cur_sim_start(slow);
    const char *args[] = {
        "--rate",          "10", "--arrival",       "constant", "--duration", "2s",
        "--prompt-tokens", "8",  "--output-tokens", "2",        NULL};
    setenv("LLMLOAD_TEST_SEND_DELAY_NS", "2000000", 1);
    struct client_res res;
    client_run(sim_url(), "slow", args, HARNESS_RC_OK_OR_INVALID, &res);
    struct harness_recs *r = records_ids_kind(res.dir, 20, "ok");
    for (size_t i = 0; i < r->n; i++) {
        int64_t late = harness_ival_req(r->items[i], "late_ns");
        if (late < 2000000 || late > harness_ival_req(r->items[i], "sent_ns") -
                                         harness_ival_req(r->items[i], "sched_ns"))
            fail_msg("record %zu: late_ns %lld, not the injected 2 ms or more (and at most "
                     "sent - sched)",
                     i, (long long)late);
    }
    harness_recs_free(r);
    json_t *s = harness_summary_load(res.dir);
    double ttft_p50 = harness_num(s, "latency_ns.ttft.p50");
    json_decref(s);
    if (ttft_p50 < 200 * MS)
        fail_msg("the slow sim's TTFT p50 is %.1f ms, not hundreds", ttft_p50 / 1e6);
    if (!selfcheck_rule_holds(&res))
        fail_msg("2 ms of lateness on a %.0f ms TTFT made the run INVALID:\n%s", ttft_p50 / 1e6,
                 res.out);
    /* The line: the injected 2 ms, and whatever this machine added; a
     * note, as every move was within its limit (the parent: "warning"). */
    assert_has(res.out, "\nnote     schedule lateness p99 ", "stdout");
    client_res_free(&res);
    harness_sim_teardown(NULL);

    const char *instant[] = {"--profile", "instant", NULL};
    harness_cur_sim_start(instant);
    client_run(sim_url(), "instant", args, HARNESS_RC_OK_OR_INVALID, &res);
    unsetenv("LLMLOAD_TEST_SEND_DELAY_NS");
    if (selfcheck_rule_holds(&res))
        fail_msg("2 ms of lateness on the instant sim left the run valid:\n%s", res.out);
    s = harness_summary_load(res.dir);
    if (!strstr(harness_sval(s, "invalid_reason"), " moved TTFT p"))
        fail_msg("invalid_reason: %s", harness_sval(s, "invalid_reason"));
    json_decref(s);
    client_res_free(&res);
}

/* ---- --timeout-connect ---------------------------------------------------- */

#define MODELS_BODY "{\"object\":\"list\",\"data\":[{\"id\":\"m\",\"object\":\"model\"}]}"

/* The stalling listener's child: answer the client's probe of /models on
 * the one connection it accepts, but before answering, connect to its own
 * listener once (that connection completes into the empty accept queue and
 * fills it: the backlog is 0). Every connect after the probe then hangs.
 * It writes 'H' to report_fd when a test connect made after the filler
 * indeed hangs for 100 ms and then holds everything open until killed (at
 * most 30 s); it writes 'C' when that connect completed (the premise
 * failed) or 'E' on any other error, and exits at once. */
static void stall_serve(int lfd, int port, int report_fd)
{
    char verdict = 'E';
    struct pollfd pfd = {.fd = lfd, .events = POLLIN};
    if (poll(&pfd, 1, 10000) != 1)
        goto out;
    int probe = accept(lfd, NULL, NULL);
    if (probe < 0)
        goto out;
    char buf[4096];
    size_t got = 0;
    while (got < sizeof buf - 1) {
        struct pollfd pp = {.fd = probe, .events = POLLIN};
        if (poll(&pp, 1, 5000) != 1)
            goto out;
        ssize_t r = read(probe, buf + got, sizeof buf - 1 - got);
        if (r <= 0)
            goto out;
        got += (size_t)r;
        buf[got] = '\0';
        if (strstr(buf, "\r\n\r\n"))
            break;
    }
    struct sockaddr_in sa = {.sin_family = AF_INET, .sin_port = htons((uint16_t)port)};
    sa.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    int filler = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    if (filler < 0 || connect(filler, (struct sockaddr *)&sa, sizeof sa) != 0)
        goto out;
    /* The premise: a connect now neither completes nor fails. */
    int t = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
    if (t < 0)
        goto out;
    if (connect(t, (struct sockaddr *)&sa, sizeof sa) == 0) {
        verdict = 'C';
    } else if (errno == EINPROGRESS) {
        struct pollfd tp = {.fd = t, .events = POLLOUT};
        verdict = poll(&tp, 1, 100) == 0 ? 'H' : 'C';
    }
    close(t);
    if (verdict != 'H')
        goto out;
    char resp[512];
    int len = snprintf(resp, sizeof resp,
                       "HTTP/1.1 200 OK\r\nContent-Type: application/json\r\n"
                       "Content-Length: %zu\r\nConnection: close\r\n\r\n%s",
                       strlen(MODELS_BODY), MODELS_BODY);
    if (harness_send_all(probe, resp, (size_t)len, NULL) != 0) {
        verdict = 'E';
        goto out;
    }
    close(probe);
out:
    if (write(report_fd, &verdict, 1) != 1 || verdict != 'H')
        _exit(1); /* closing the listener lets the client fail fast */
    for (int i = 0; i < 300; i++)
        harness_sleep_ms(100);
    _exit(0);
}

/* Four requests at 10/s through a client whose every connect hangs, with
 * --timeout-connect 300ms: each is a timeout_connect record, never a
 * connect_error or another timeout, with no HTTP status, ending 300 ms
 * (plus the native client's 5 ms sweep and scheduling slack) after it was
 * sent; records == scheduled, and the summary counts them by kind. */
static void connect_timeout_case(void **state)
{
    const char *client = *state;
    harness_tmp_begin();
    int port;
    int lfd = harness_bind_local(0, &port);
    int rep[2];
    assert_int_equal(pipe2(rep, O_CLOEXEC), 0);
    pid_t pid = fork();
    assert_true(pid >= 0);
    if (pid == 0) {
        close(rep[0]);
        stall_serve(lfd, port, rep[1]);
    }
    cur_server = pid;
    close(lfd);
    close(rep[1]);

    char url[64];
    snprintf(url, sizeof url, "http://127.0.0.1:%d/v1", port);
    const char *args[] = {"--model", "m", "--http-client", client,
                          "--rate", "10", "--arrival", "constant", "--requests", "4",
                          "--prompt-tokens", "8", "--output-tokens", "4",
                          "--timeout-connect", "300ms", "--timeout-first-token", "2s",
                          "--timeout-total", "3s", NULL};
    struct client_res res;
    client_run(url, "r", args, 6, &res); /* 6: no request succeeded */

    char verdict = 0;
    struct pollfd pp = {.fd = rep[0], .events = POLLIN};
    if (poll(&pp, 1, 1000) != 1 || read(rep[0], &verdict, 1) != 1)
        verdict = 0;
    close(rep[0]);
    if (verdict != 'H')
        fail_msg("the stalling listener failed (verdict '%c'): %s\nstderr:\n%s",
                 verdict ? verdict : '?',
                 verdict == 'C' ? "a connect to its full accept queue completed"
                                : "it broke down before answering the probe",
                 res.err);
    /* The probe was answered, so no 5 s probe timeout and no warning. */
    if (strstr(res.err, "warning"))
        fail_msg("the probe of /models failed:\n%s", res.err);

    json_t *run = harness_json_load(res.dir, "run.json");
    assert_string_equal(harness_sval(json_object_get(run, "config"), "http_client_used"),
                        client);
    json_decref(run);

    struct harness_recs *r = records_ids_kind(res.dir, 4, "timeout_connect");
    for (size_t i = 0; i < r->n; i++) {
        json_t *rec = r->items[i];
        assert_true(harness_is_null(rec, "http_status"));
        assert_true(harness_is_null(rec, "first_ns"));
        int64_t waited = harness_ival_req(rec, "end_ns") - harness_ival_req(rec, "sent_ns");
        ASSERT_IN_RANGE(waited, 295 * MS, 550 * MS);
    }
    harness_recs_free(r);
    json_t *s = harness_summary_load(res.dir);
    json_t *req = json_object_get(s, "requests");
    assert_int_equal(harness_ival_req(req, "scheduled"), 4);
    assert_int_equal(harness_ival_req(req, "completed"), 4);
    assert_int_equal(harness_ival_req(req, "failed"), 4);
    assert_int_equal(harness_ival_req(json_object_get(req, "by_kind"), "timeout_connect"), 4);
    assert_int_equal(harness_ival_req(s, "records_written"), 4);
    json_decref(s);
    client_res_free(&res);
}

/* A sweep step the OS did not run in time says so, as `run` does
 * (docs/sweep.md, "INVALID steps"): one step of 100 req/s held 3 s, the
 * client frozen 300 ms a second into the sweep (inside the hold, after
 * the 0.2 s warm-up), so the 30 or so arrivals due meanwhile leave up to
 * 300 ms late, with the worker asleep in epoll_wait when they came due.
 * Its only step is INVALID, so the sweep exits 1; steps.jsonl keeps the
 * step's diagnosis; summary.json's step reason, the line under the step
 * table, the findings' "not judged" line, the exit message and the
 * report's banner name the OS or VM, not the generator's load, where
 * they said "the generator's own lateness". */
static void test_sweep_step_invalid_when_client_paused(void **state)
{
    harness_tmp_begin();
    harness_instant_sim_start();
    struct client_res res;
    memset(&res, 0, sizeof res);
    harness_tmp_path(res.dir, sizeof res.dir, "sw");
    char outp[640], errp[640];
    harness_tmp_path(outp, sizeof outp, "sw.out");
    harness_tmp_path(errp, sizeof errp, "sw.err");
    const char *argv[] = {"sweep",
                          "--url",
                          sim_url(),
                          "--out",
                          res.dir,
                          "--quiet",
                          "--no-metrics",
                          "--rates",
                          "100",
                          "--step-duration",
                          "3s",
                          "--warmup",
                          "0.2s",
                          "--no-recovery",
                          "--arrival",
                          "constant",
                          "--prompt-tokens",
                          "8",
                          "--output-tokens",
                          "4",
                          NULL};
    pid_t pid = cur_client = harness_spawn(argv, outp, errp, -1, NULL, NULL);
    int asleep_seen = pause_client(pid, res.dir, 1000);
    client_wait(pid, "sw", &res);

    /* The premise: the pause fell in the step's window (some window
     * request went out over 200 ms after it was due). */
    struct harness_recs *r = harness_requests_load(res.dir);
    int64_t worst = 0;
    for (size_t i = 0; i < r->n; i++) {
        json_t *w = json_object_get(r->items[i], "warmup");
        if (json_is_true(w))
            continue;
        int64_t q =
            harness_ival_req(r->items[i], "sent_ns") - harness_ival_req(r->items[i], "sched_ns");
        worst = q > worst ? q : worst;
    }
    harness_recs_free(r);
    if (worst < 200 * MS)
        fail_msg("the 300 ms pause did not land in the step's window: worst sent - sched "
                 "%.1f ms\nstderr:\n%s",
                 (double)worst / 1e6, res.err);
    if (res.status != 1)
        fail_msg("llmload sweep exited %d, expected 1 (its one step INVALID)\nstderr:\n%s",
                 res.status, res.err);

    json_t *steps = harness_jsonl_in(res.dir, "steps.jsonl");
    json_t *ld = json_object_get(json_array_get(steps, 0), "lateness_diagnosis");
    if (!json_is_object(ld))
        fail_msg("steps.jsonl's step has no lateness_diagnosis");
    int64_t late = harness_ival_req(ld, "late_sends"),
            asleep = harness_ival_req(ld, "asleep_when_due");
    if (late < 20 || asleep > late || (asleep_seen && (asleep < 20 || 2 * asleep < late)))
        fail_msg("step lateness diagnosis: %lld late sends, %lld asleep when due", (long long)late,
                 (long long)asleep);
    assert_true(harness_num(ld, "worker_wall_s") > 0);
    json_t *sum = harness_summary_load(res.dir);
    json_t *st = json_array_get(json_object_get(sum, "steps"), 0);
    assert_true(json_is_true(json_object_get(st, "invalid")));
    if (!json_equal(json_object_get(st, "lateness_diagnosis"), ld))
        fail_msg("summary.json's step lateness_diagnosis is not steps.jsonl's");
    json_decref(steps);
    if (asleep_seen) {
        const char *why = harness_sval(st, "invalid_reason");
        if (!strstr(why, LATE_REASON_ASLEEP))
            fail_msg("the step's invalid_reason does not say whose: \"%s\"", why);
        assert_string_equal(harness_sval(json_object_get(st, "lateness_diagnosis"), "cause"),
                            "asleep");
        const char *os = "lateness of the OS or VM, not the generator's load (the worker slept "
                         "through the sends' times and woke late) moved";
        assert_has(res.out, "1 of 1 steps (at 100 req/s) are INVALID: ", "stdout");
        assert_has(res.out, os, "stdout");
        assert_has(res.out, "not judged: 100 req/s (INVALID: lateness of the OS or VM", "stdout");
        assert_has(res.err, "INVALID: no step could be judged: lateness of the OS or VM", "stderr");
        char *html = harness_read_in(res.dir, "report.html");
        assert_has(html, "lateness of the OS or VM, not the generator", "report.html");
        assert_has(html,
                   "INVALID: the host (OS or VM) did not run the client on schedule; these "
                   "figures are not trustworthy.",
                   "report.html");
        free(html);
        if (strstr(res.out, "the generator's own lateness"))
            fail_msg("the OS's lateness is still the generator's:\n%s", res.out);
    }
    json_decref(sum);
    client_res_free(&res);
}

/* A run the spend guard stopped is not judged steady or not (steady and
 * steady_warning null), as one a signal stopped: its window runs to the
 * last response, so the drain after offering stopped is measured as part
 * of it. 20 arrivals in 0.4 s through 2 slots of 50-token answers wait
 * for seconds (a backlog), yet the in-flight count fell over the window
 * (up, then drained) and 20 requests are too few for the tail test, so
 * the parent said "steady": true. */
static void test_spend_guard_steady_not_judged(void **state)
{
    harness_tmp_begin();
    harness_cur_sim_start(NULL);
    const char *extra[] = {"--duration", "2s", "--max-concurrency", "2", "--ignore-eos", NULL};
    struct client_res res;
    json_t *s = guard_run("r", "2000", extra, 20, &res);
    assert_string_equal(harness_sval(s, "stop_reason"),
                        "spend guard: the next request would pass --max-tokens-total 2000");
    assert_true(harness_is_null(s, "steady"));
    assert_true(harness_is_null(s, "steady_warning"));
    assert_string_equal(harness_sval(s, "steady_unjudged"),
                        "not judged: offering stopped early (spend guard: the next request would "
                        "pass --max-tokens-total 2000), and the drain that followed is part of "
                        "the window");
    json_decref(s);
    client_res_free(&res);
}

HARNESS_MAIN(cmocka_unit_test_teardown(test_spend_guard_exact_multiple, teardown),
             cmocka_unit_test_teardown(test_spend_guard_not_a_multiple, teardown),
             cmocka_unit_test_teardown(test_spend_guard_steady_not_judged, teardown),
             cmocka_unit_test_teardown(test_invalid_when_client_paused, teardown),
             cmocka_unit_test_teardown(test_sweep_step_invalid_when_client_paused, teardown),
             cmocka_unit_test_teardown(test_verdict_in_proportion, teardown),
             HARNESS_CLIENT_TEST("connect_timeout", connect_timeout_case, "native", teardown),
             HARNESS_CLIENT_TEST("connect_timeout", connect_timeout_case, "curl", teardown))
