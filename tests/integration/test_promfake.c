/* test_promfake.c: --prometheus against a fake Prometheus of the test's
 * own, whose answers the test chooses: the samples' timestamps, which
 * rounds fail, Prometheus's scrape interval. No real Prometheus is needed
 * (test_prometheus has one).
 *
 * The fake (a child: harness_serve_forever) answers GET /api/v1/query at
 * time=T with one replica (pod "a") of vLLM's queue and token counter,
 * two samples each: at T - age and T - age - gap (so llmload reads the
 * data's age as exactly `age` and Prometheus's interval as `gap`). The GPU
 * question (the DCGM names) gets an empty answer, so there is no GPU
 * source. The server questions are counted in shared memory, and the
 * rounds the test names fail with a 503.
 *
 * - A failed round never moves a later line's date: rounds 1 (the probe
 *   before the run) and 4 fail, the data is always 1.5 s old, questions
 *   come every 200 ms. Every good line of server_metrics.jsonl is dated at
 *   its data's time (its question's wall time less 1.5 s, on the run's
 *   monotonic clock, within 50 ms), the two failures are counted gaps,
 *   and the lines are in order. Before the fix the line after a failure
 *   was dated at the failed question, 1.3 s after its data.
 * - Ctrl-C during the end's wait for Prometheus: the interval is 9.8 s,
 *   so the run waits 10 s after its end for a scrape past it; a SIGINT
 *   once the client says it waits ends the run within 5 s, exit 130, and
 *   the results directory is whole (summary.json, every record, run.json's
 *   outcome).
 * - Ctrl-C during the load: the same 9.8 s interval, a 10 s run; a SIGINT
 *   once 3 requests are recorded ends the run within 5 s (the requests in
 *   flight have --grace 1s), exit 130, stopped_in "load", the results
 *   whole, and the client never says it waits for Prometheus: an
 *   interrupted run asks once more at once, as a direct scrape's last
 *   one is taken at once. Before the fix it waited the 10 s.
 *
 * Traffic: a sim on 127.0.0.1 at 10 requests/s for 2 s (the failed
 * round 4, 0.6 s in, well inside the run) and 1 s; the fake dies
 * with the test (PDEATHSIG) and after 120 s at most. */
#include <errno.h>
#include <jansson.h>
#include <math.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "harness.h"
#include "test.h"
#include "util/util.h"

/* What the fake answers, set by the test before a run, and what it saw. */
struct fake_prom {
    _Atomic int age_ms, gap_ms; /* the latest sample's age, and the gap before it */
    _Atomic unsigned fail_mask; /* bit k-1: server question k fails with a 503 */
    _Atomic int questions;      /* server questions answered (or failed) */
};

static struct fake_prom *fake;
static pid_t fake_pid, client_pid;
static int fake_port;

/* One answer on fd: status and a JSON body. -1 once the peer is gone. */
static int reply(int fd, int status, const char *body)
{
    char head[256];
    int n = snprintf(head, sizeof head,
                     "HTTP/1.1 %d %s\r\nContent-Type: application/json\r\n"
                     "Content-Length: %zu\r\n\r\n",
                     status, status == 200 ? "OK" : "Service Unavailable", strlen(body));
    if (harness_send_all(fd, head, (size_t)n, NULL) != 0)
        return -1;
    return harness_send_all(fd, body, strlen(body), NULL);
}

/* The answer to one question asked at eval_s (Unix seconds). */
static int answer(int fd, const char *head)
{
    if (strstr(head, "DCGM_FI_"))
        return reply(fd, 200,
                     "{\"status\":\"success\",\"data\":{\"resultType\":\"matrix\","
                     "\"result\":[]}}");
    int k = atomic_fetch_add(&fake->questions, 1) + 1;
    if (k <= 32 && (atomic_load(&fake->fail_mask) >> (k - 1) & 1u))
        return reply(fd, 503,
                     "{\"status\":\"error\",\"errorType\":\"unavailable\","
                     "\"error\":\"the test's failed round\"}");
    const char *tp = strstr(head, "&time=");
    double eval_s = tp ? strtod(tp + 6, NULL) : 0;
    double t1 = eval_s - atomic_load(&fake->age_ms) / 1e3;
    double t0 = t1 - atomic_load(&fake->gap_ms) / 1e3;
    char body[1024];
    snprintf(body, sizeof body,
             "{\"status\":\"success\",\"data\":{\"resultType\":\"matrix\",\"result\":["
             "{\"metric\":{\"__name__\":\"vllm:num_requests_waiting\",\"pod\":\"a\"},"
             "\"values\":[[%.3f,\"0\"],[%.3f,\"1\"]]},"
             "{\"metric\":{\"__name__\":\"vllm:generation_tokens_total\",\"pod\":\"a\"},"
             "\"values\":[[%.3f,\"100\"],[%.3f,\"%d\"]]}]}}",
             t0, t1, t0, t1, 100 + k);
    return reply(fd, 200, body);
}

/* A connection: answer each question on it (libcurl keeps it open). */
static void *fake_conn(void *arg)
{
    int fd = harness_fd_take(arg);
    char buf[16384];
    size_t body_len;
    int kept;
    while (harness_read_request(fd, buf, sizeof buf, &body_len, &kept) > 0)
        if (answer(fd, buf) != 0)
            break;
    close(fd);
    return NULL;
}

/* Start the fake with the data age_ms old, gap_ms between samples, and
 * the server questions of fail_mask failing; a sim to load; a fresh
 * temporary folder. */
static void fake_start(int age_ms, int gap_ms, unsigned fail_mask)
{
    harness_tmp_begin();
    if (!fake)
        fake = harness_shared_map(sizeof *fake);
    atomic_store(&fake->age_ms, age_ms);
    atomic_store(&fake->gap_ms, gap_ms);
    atomic_store(&fake->fail_mask, fail_mask);
    atomic_store(&fake->questions, 0);
    int lfd = harness_bind_local(64, &fake_port);
    fake_pid = harness_serve_fork(lfd, 120, fake_conn, harness_fd_arg, NULL);
    harness_cur_sim_start(NULL);
}

static int teardown(void **state)
{
    pid_t *pids[] = {&client_pid, &fake_pid, NULL};
    harness_cleanup(pids);
    return 0;
}

/* CLOCK_REALTIME less CLOCK_MONOTONIC now, s: a wall time less this is
 * the same moment on the run's monotonic clock. */
static double wall_less_mono_s(void)
{
    struct timespec w, m;
    clock_gettime(CLOCK_REALTIME, &w);
    clock_gettime(CLOCK_MONOTONIC, &m);
    return (double)(w.tv_sec - m.tv_sec) + (double)(w.tv_nsec - m.tv_nsec) / 1e9;
}

/* Rounds 1 and 4 fail; the data is 1.5 s old, Prometheus's interval 2 s
 * (so the end's wait, 2.2 s, finds data past the end at once). 20
 * requests at 10/s: round 4 (0.6 s in) is well before the end's
 * question, so a good line follows each failure. */
static void test_failed_round_keeps_dates(void **state)
{
    (void)state;
    fake_start(1500, 2000, 1u << 0 | 1u << 3);
    char prom[64];
    snprintf(prom, sizeof prom, "http://127.0.0.1:%d", fake_port);
    const char *args[] = {
        "--rate", "10",           "--arrival", "constant", "--requests", "20", "--metrics-interval",
        "200ms",  "--prometheus", prom,        NULL};
    double off_s = wall_less_mono_s();
    char *err = NULL;
    char *dir = harness_run_client(NULL, args, HARNESS_RC_OK_OR_INVALID, &err);
    HARNESS_HAS(err, "warning: querying Prometheus at", "HTTP 503");
    json_t *lines = harness_jsonl_in(dir, "server_metrics.jsonl");
    size_t n = json_array_size(lines), ok = 0, failed = 0;
    int64_t prev_mono = 0;
    int after_failure = 0, checked_after_failure = 0;
    for (size_t i = 0; i < n; i++) {
        json_t *l = json_array_get(lines, i);
        assert_string_equal(harness_sval(l, "source"), "prometheus");
        int64_t mono = harness_ival_req(l, "mono_ns");
        if (mono < prev_mono)
            fail_msg("line %zu dated %lld ns, before the line above it (%lld)", i + 1,
                     (long long)mono, (long long)prev_mono);
        prev_mono = mono;
        if (!json_is_true(json_object_get(l, "ok"))) {
            failed++;
            after_failure = 1;
            continue;
        }
        ok++;
        /* The samples' own timestamps: the data is 1.5 s old (the URL's
         * time= has millisecond precision). */
        ASSERT_NEAR(harness_num(l, "prom_age_s"), 1.5, 0.002);
        double data_mono_s = harness_num(l, "prom_time_s") - harness_num(l, "prom_age_s") - off_s;
        double d_s = (double)mono / 1e9 - data_mono_s;
        if (after_failure)
            fprintf(stderr,
                    "test_promfake: the line after a failed round is dated %+.4f s from its "
                    "data\n",
                    d_s);
        if (fabs(d_s) > 0.05)
            fail_msg("line %zu (%s) dated %.3f s from its data's time", i + 1,
                     after_failure ? "after a failed round" : "ok", d_s);
        checked_after_failure += after_failure;
        after_failure = 0;
    }
    fprintf(stderr, "test_promfake: %zu lines, %zu ok, %zu failed; %d questions\n", n, ok, failed,
            atomic_load(&fake->questions));
    assert_int_equal(failed, 2);
    assert_int_equal(checked_after_failure, 2);
    assert_true(ok >= 4);
    json_t *s = harness_summary_load(dir);
    ASSERT_NEAR(harness_num(s, "server.failed"), 2, 0);
    ASSERT_NEAR(harness_num(s, "server.scrapes"), (double)n, 0);
    json_decref(s);
    json_decref(lines);
    free(err);
    harness_results_free(dir);
}

/* Wait until the client's stderr (path se) holds needle, at most
 * timeout_ms; fails the test past it or when the client exits first. */
static void wait_stderr(const char *se, const char *needle, int timeout_ms)
{
    for (int i = 0; i < timeout_ms / 10; i++) {
        char *err = access(se, R_OK) == 0 ? harness_read_file(se, NULL) : NULL;
        int found = err && strstr(err, needle);
        if (!found && waitpid(client_pid, NULL, WNOHANG) == client_pid) {
            client_pid = 0;
            fail_msg("the client exited before saying \"%s\"; stderr:\n%s", needle, err ? err : "");
        }
        free(err);
        if (found)
            return;
        harness_sleep_ms(10);
    }
    fail_msg("the client's stderr did not say \"%s\" within %d ms", needle, timeout_ms);
}

/* Ctrl-C to the client (when, for the message): it must exit 130 within
 * 5 s, its run.json saying interrupted, stopped in stopped_in. Returns
 * its stderr (se's text; caller frees). */
static char *sigint_ends_it(const char *when, const char *se, const char *out,
                            const char *stopped_in)
{
    uint64_t t0 = ll_now_ns();
    assert_int_equal(kill(client_pid, SIGINT), 0);
    int st = harness_reap(client_pid, 30000);
    client_pid = 0;
    double took_s = (double)(ll_now_ns() - t0) / 1e9;
    char *err = harness_read_file(se, NULL);
    fprintf(stderr, "test_promfake: Ctrl-C %s: exit %d after %.3f s\n", when, st, took_s);
    if (st != 130 || took_s > 5)
        fail_msg("exit %d after %.3f s (want 130 within 5 s); stderr:\n%s", st, took_s,
                 err ? err : "");
    json_t *run = harness_json_load(out, "run.json");
    json_t *o = json_object_get(run, "outcome");
    assert_int_equal(harness_ival_req(o, "exit_status"), 130);
    assert_true(json_is_true(json_object_get(o, "interrupted")));
    assert_string_equal(harness_sval(o, "stopped_in"), stopped_in);
    json_decref(run);
    return err;
}

/* Prometheus's interval 9.8 s: the run waits 10 s after its end (the
 * cap); a Ctrl-C in that wait ends the run at once, its results whole. */
static void test_sigint_in_end_wait(void **state)
{
    (void)state;
    fake_start(100, 9800, 0);
    char prom[64], url[200], out[600], so[600], se[600];
    snprintf(prom, sizeof prom, "http://127.0.0.1:%d", fake_port);
    snprintf(url, sizeof url, "%s/v1", harness_cur_sim.url);
    harness_tmp_path(out, sizeof out, "r");
    harness_tmp_path(so, sizeof so, "stdout.txt");
    harness_tmp_path(se, sizeof se, "stderr.txt");
    const char *args[] = {"run",       "--url",        url,          "--rate", "10",
                          "--arrival", "constant",     "--requests", "10",     "--metrics-interval",
                          "200ms",     "--prometheus", prom,         "--out",  out,
                          NULL};
    client_pid = harness_spawn(args, so, se, -1, NULL, NULL);
    wait_stderr(se, "Ctrl-C skips it", 60000);
    free(sigint_ends_it("in the end's 10 s wait", se, out, "summary"));
    json_t *s = harness_summary_load(out);
    ASSERT_NEAR(harness_num(s, "requests.scheduled"), 10, 0);
    ASSERT_NEAR(harness_num(s, "requests.ok"), 10, 0);
    assert_true(harness_num(s, "server.scrapes") >= 3);
    json_decref(s);
    struct harness_recs *r = harness_requests_load(out);
    assert_int_equal(r->n, 10);
    for (size_t i = 0; i < r->n; i++)
        assert_string_equal(harness_sval(r->items[i], "kind"), "ok");
    harness_recs_free(r);
}

/* The lines of the file at path (0 while it is missing). */
static size_t file_lines(const char *path)
{
    char *text = access(path, R_OK) == 0 ? harness_read_file(path, NULL) : NULL;
    size_t n = 0;
    for (const char *c = text; c && *c; c++)
        n += *c == '\n';
    free(text);
    return n;
}

/* Prometheus's interval 9.8 s, a 10 s run (100 requests at 10/s); a
 * Ctrl-C once 3 requests are recorded: the run ends without the end's
 * 10 s wait for Prometheus, its results whole. */
static void test_sigint_in_load(void **state)
{
    (void)state;
    fake_start(100, 9800, 0);
    char prom[64], url[200], out[600], so[600], se[600], recs[640];
    snprintf(prom, sizeof prom, "http://127.0.0.1:%d", fake_port);
    snprintf(url, sizeof url, "%s/v1", harness_cur_sim.url);
    harness_tmp_path(out, sizeof out, "r");
    harness_tmp_path(so, sizeof so, "stdout.txt");
    harness_tmp_path(se, sizeof se, "stderr.txt");
    snprintf(recs, sizeof recs, "%s/requests.jsonl", out);
    const char *args[] = {"run",      "--url",        url,   "--rate",  "10", "--arrival",
                          "constant", "--requests",   "100", "--grace", "1s", "--metrics-interval",
                          "200ms",    "--prometheus", prom,  "--out",   out,  NULL};
    client_pid = harness_spawn(args, so, se, -1, NULL, NULL);
    int waited_ms = 0;
    while (file_lines(recs) < 3) {
        if (waitpid(client_pid, NULL, WNOHANG) == client_pid) {
            client_pid = 0;
            fail_msg("the client exited before its third record");
        }
        if (waited_ms >= 60000)
            fail_msg("no third record within 60 s");
        harness_sleep_ms(10);
        waited_ms += 10;
    }
    char *err = sigint_ends_it("during the load", se, out, "load");
    HARNESS_LACKS(err, "waiting");
    free(err);
    /* Every scheduled request has its line, and the server's questions
     * were all answered. */
    json_t *s = harness_summary_load(out);
    double scheduled = harness_num(s, "requests.scheduled");
    assert_true(scheduled >= 3 && scheduled < 100);
    assert_true(harness_num(s, "requests.ok") >= 3);
    assert_true(harness_num(s, "server.scrapes") >= 2);
    ASSERT_NEAR(harness_num(s, "server.failed"), 0, 0);
    json_decref(s);
    struct harness_recs *r = harness_requests_load(out);
    ASSERT_NEAR((double)r->n, scheduled, 0);
    harness_recs_free(r);
}

HARNESS_MAIN(cmocka_unit_test_teardown(test_failed_round_keeps_dates, teardown),
             cmocka_unit_test_teardown(test_sigint_in_end_wait, teardown),
             cmocka_unit_test_teardown(test_sigint_in_load, teardown))
