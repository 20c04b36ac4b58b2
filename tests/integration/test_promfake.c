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
 * - The same for `llmload sweep --prometheus` (no recovery step, steps
 *   at 5 then 10 requests/s, the same 9.8 s interval), whose steps each
 *   join the lines they have when they end and whose end waits 10 s: a
 *   Ctrl-C in step 1 (once step 0's line, 10 of step 1's records and 4
 *   more answers are written, 6 s before its end), or in a --gap of 60
 *   s after step 0, ends the sweep within 5 s, exit 130, stopped_in
 *   "load", no "waiting" note; a Ctrl-C in the end's wait (the note
 *   seen) ends it within 5 s too, stopped_in "summary". Each time
 *   steps.jsonl holds every step that finished, whole (its window's
 *   requests as its rate gives them, all ok), the interrupted one
 *   marked "interrupted", and each with its server figures checked
 *   against the fake's answers: the queue always 1 deep, the token
 *   counter 1 up a question, so a step's generation_tokens are the
 *   lines in its span less one. summary.json has the same steps, and
 *   `llmload report` rebuilds it, steps.csv and report.html byte for
 *   byte.
 *
 * Traffic: a sim on 127.0.0.1 at 10 requests/s for 2 s (the failed
 * round 4, 0.6 s in, well inside the run) and 1 s, and the sweeps' at
 * most 10 requests/s for at most 17 s; the fake dies with the test
 * (PDEATHSIG) and after 120 s at most. */
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
 * 5 s, its run.json saying interrupted, stopped in stopped_in. Stopped in
 * "load", it never reached the end's wait, so its stderr (se) must not
 * say "waiting". */
static void sigint_ends_it(const char *when, const char *se, const char *out,
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
    if (strcmp(stopped_in, "load") == 0) {
        char what[160];
        snprintf(what, sizeof what, "stderr after a Ctrl-C %s", when);
        harness_text_check(what, err, NULL, (const char *const[]){"waiting", NULL});
    }
    free(err);
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
    sigint_ends_it("in the end's 10 s wait", se, out, "summary");
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

/* Wait until the file at path has n lines or more, at most timeout_ms;
 * fails the test past it or when the client exits first. */
static void wait_lines(const char *path, size_t n, int timeout_ms)
{
    for (int waited_ms = 0; file_lines(path) < n; waited_ms += 10) {
        if (waitpid(client_pid, NULL, WNOHANG) == client_pid) {
            client_pid = 0;
            fail_msg("the client exited before %s had %zu lines", path, n);
        }
        if (waited_ms >= timeout_ms)
            fail_msg("%s had no %zu lines within %d ms", path, n, timeout_ms);
        harness_sleep_ms(10);
    }
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
    wait_lines(recs, 3, 60000);
    sigint_ends_it("during the load", se, out, "load");
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

/* Start `llmload sweep` (its pid in client_pid) against the sim and the
 * fake, asking every 200 ms, with no recovery step and constant
 * arrivals, then args (NULL-terminated). out, se get its results
 * directory's and its stderr's paths. */
static void sweep_spawn(const char *const *args, char *out, size_t out_len, char *se, size_t se_len)
{
    char prom[64], url[200], so[600];
    snprintf(prom, sizeof prom, "http://127.0.0.1:%d", fake_port);
    snprintf(url, sizeof url, "%s/v1", harness_cur_sim.url);
    harness_tmp_path(out, out_len, "r");
    harness_tmp_path(so, sizeof so, "stdout.txt");
    harness_tmp_path(se, se_len, "stderr.txt");
    struct harness_argv a = {0};
    harness_argv_add(&a, (const char *const[]){"sweep", "--url", url, "--prometheus", prom,
                                               "--metrics-interval", "200ms", "--no-recovery",
                                               "--arrival", "constant", "--out", out, NULL});
    harness_argv_add(&a, args);
    client_pid = harness_spawn(a.v, so, se, -1, NULL, NULL);
}

/* One step's server figures (steps.jsonl's "server") against what the
 * fake answered, server_metrics.jsonl's lines (t_ns on the sweep's
 * clock, as the step's start_offset_ns): its queue was 1 deep at every
 * question, and its token counter rose by exactly 1 a question. So the
 * step's span (the first to the last line in its window, each dated 100
 * ms before its question) holds its `scrapes` lines, its
 * generation_tokens are those lines less one (and the counter's rise
 * between the span's two ends), its waiting is 1, one replica. */
static void step_server_check(json_t *step, json_t *lines)
{
    int64_t index = harness_ival_req(step, "step");
    json_t *v = json_object_get(step, "server");
    if (!json_is_object(v))
        fail_msg("step %lld has no server figures", (long long)index);
    int64_t at = harness_ival_req(step, "start_offset_ns");
    int64_t w0 = at + harness_ival_req(step, "warmup_ns"),
            w1 = w0 + harness_ival_req(step, "window_ns");
    int64_t from = at + harness_ival_req(v, "span_from_ns"),
            to = at + harness_ival_req(v, "span_to_ns");
    if (!(w0 <= from && from < to && to <= w1))
        fail_msg("step %lld: span [%lld, %lld] ns is not inside its window [%lld, %lld]",
                 (long long)index, (long long)from, (long long)to, (long long)w0, (long long)w1);
    size_t in_span = 0, i;
    double first = NAN, last = NAN;
    json_t *l;
    json_array_foreach(lines, i, l)
    {
        int64_t t = harness_ival_req(l, "t_ns");
        if (t < from || t > to)
            continue;
        assert_true(json_is_true(json_object_get(l, "ok")));
        in_span++;
        last = harness_num(l, "generation_tokens_total");
        if (isnan(first))
            first = last;
    }
    fprintf(stderr,
            "test_promfake: step %lld: %zu lines in its span, generation_tokens %.0f, "
            "scrapes %.0f\n",
            (long long)index, in_span, harness_num(v, "generation_tokens"),
            harness_num(v, "scrapes"));
    assert_true(in_span >= 2);
    ASSERT_NEAR(harness_num(v, "scrapes"), (double)in_span, 0);
    ASSERT_NEAR(harness_num(v, "failed"), 0, 0);
    ASSERT_NEAR(harness_num(v, "generation_tokens"), (double)in_span - 1, 0);
    ASSERT_NEAR(harness_num(v, "generation_tokens"), last - first, 0);
    ASSERT_NEAR(harness_num(v, "waiting_mean"), 1, 0);
    ASSERT_NEAR(harness_num(v, "waiting_max"), 1, 0);
    ASSERT_NEAR(harness_num(v, "replicas.count"), 1, 0);
}

/* The records of step index in recs: how many, and how many are ok. */
static size_t step_records(const struct harness_recs *r, int64_t index, size_t *ok)
{
    size_t n = 0;
    *ok = 0;
    for (size_t i = 0; i < r->n; i++) {
        if (harness_ival(r->items[i], "step") != index)
            continue;
        n++;
        *ok += strcmp(harness_sval(r->items[i], "kind"), "ok") == 0;
    }
    return n;
}

/* The results directory out of a sweep that a Ctrl-C stopped after
 * n_done steps had finished (and, when cut, one more it interrupted):
 * steps.jsonl holds them in order, each finished one whole (its window's
 * requests as its rate and hold give them, every one ok against the sim)
 * and every one with its server figures joined (step_server_check), the
 * interrupted one marked so; its end line says stop_reason (NULL: null);
 * summary.json has the same steps, the interrupted one with verdict
 * "interrupted" and its rate in findings.interrupted_rps (left out of the
 * capacity search), and `llmload report` rebuilds it,
 * steps.csv and report.html byte for byte. rates: each step's req/s. */
static void sweep_results_check(const char *out, const double *rates, size_t n_done, int cut,
                                const char *stop_reason)
{
    json_t *steps = harness_jsonl_in(out, "steps.jsonl");
    json_t *lines = harness_jsonl_in(out, "server_metrics.jsonl");
    struct harness_recs *r = harness_requests_load(out);
    size_t n = n_done + (cut ? 1 : 0);
    assert_int_equal(json_array_size(steps), n + 1);
    for (size_t k = 0; k < n; k++) {
        json_t *s = json_array_get(steps, k);
        assert_string_equal(harness_sval(s, "kind"), "load");
        assert_int_equal(harness_ival_req(s, "step"), (int64_t)k);
        int interrupted = k == n_done;
        if (json_is_true(json_object_get(s, "interrupted")) != interrupted)
            fail_msg("step %zu: \"interrupted\" is not %s", k, interrupted ? "true" : "false");
        step_server_check(s, lines);
        size_t ok, recs = step_records(r, (int64_t)k, &ok);
        double scheduled = harness_num(s, "scheduled");
        assert_true(recs >= scheduled && recs >= 1);
        if (interrupted)
            continue;
        /* Constant arrivals: the window's requests are its rate times its length. */
        ASSERT_NEAR(scheduled, rates[k] * harness_num(s, "window_ns") / 1e9, 0);
        assert_int_equal(ok, recs);
    }
    json_t *end = json_array_get(steps, n);
    assert_string_equal(harness_sval(end, "kind"), "end");
    if (stop_reason)
        assert_string_equal(harness_sval(end, "stop_reason"), stop_reason);
    else
        assert_true(harness_is_null(end, "stop_reason"));
    /* summary.json: the cut step has no verdict and the capacity search
     * leaves it out (its figures would pass: every request is ok). */
    json_t *sum = harness_summary_load(out);
    json_t *ss = json_object_get(sum, "steps");
    assert_int_equal(json_array_size(ss), n);
    for (size_t k = 0; k < n; k++) {
        json_t *s = json_array_get(ss, k);
        int interrupted = cut && k == n_done;
        assert_int_equal(json_is_true(json_object_get(s, "interrupted")), interrupted);
        assert_int_equal(strcmp(harness_sval(s, "verdict"), "interrupted") == 0, interrupted);
        if (interrupted) /* cut, not held too briefly: no advice to lengthen it */
            assert_false(json_is_true(json_object_get(s, "short")));
    }
    if (cut)
        ASSERT_NEAR(harness_num(sum, "findings.interrupted_rps"), rates[n_done], 0);
    else
        assert_true(harness_is_null(json_object_get(sum, "findings"), "interrupted_rps"));
    json_decref(sum);
    free(harness_report_rebuilds(
        out, (const char *const[]){"summary.json", "steps.csv", "report.html", NULL}));
    harness_recs_free(r);
    json_decref(lines);
    json_decref(steps);
}

/* Prometheus's interval 9.8 s, so the sweep's end would wait 10 s for
 * it; steps of 8 s (+0.4 s warm-up) at 5 then 10 req/s. A Ctrl-C once
 * step 0 is written, step 1 has 10 records (the 10th was scheduled 0.9
 * s in, past the warm-up) and the fake has answered 4 questions since
 * (so step 1's span holds 4 lines or more, whatever the machine's
 * speed), about 6 s before step 1's end: exit 130 without that wait,
 * stopped_in "load", step 0 whole with its server figures, step 1
 * marked interrupted with its own. */
static void test_sweep_sigint_in_step(void **state)
{
    (void)state;
    fake_start(100, 9800, 0);
    char out[600], se[600], steps[640], recs[640], lines[640];
    sweep_spawn((const char *const[]){"--rates", "5,10", "--step-duration", "8s", "--warmup",
                                      "0.4s", "--grace", "1s", NULL},
                out, sizeof out, se, sizeof se);
    snprintf(steps, sizeof steps, "%s/steps.jsonl", out);
    snprintf(recs, sizeof recs, "%s/requests.jsonl", out);
    snprintf(lines, sizeof lines, "%s/server_metrics.jsonl", out);
    wait_lines(steps, 1, 60000);
    /* Step 0's records are all written before its line. */
    wait_lines(recs, file_lines(recs) + 10, 60000);
    wait_lines(lines, file_lines(lines) + 4, 60000);
    sigint_ends_it("during a sweep's step", se, out, "load");
    sweep_results_check(out, (const double[]){5, 10}, 1, 1, "interrupted by a signal");
}

/* The same fake; steps of 2 s (+0.2 s warm-up) with a --gap of 60 s; a
 * Ctrl-C once step 0 is written (so in the gap, or just before it): exit
 * 130 without the end's wait, stopped_in "load", step 0 whole and no
 * step 1. */
static void test_sweep_sigint_in_gap(void **state)
{
    (void)state;
    fake_start(100, 9800, 0);
    char out[600], se[600], steps[640];
    sweep_spawn((const char *const[]){"--rates", "5,10", "--step-duration", "2s", "--warmup",
                                      "0.2s", "--gap", "60s", NULL},
                out, sizeof out, se, sizeof se);
    snprintf(steps, sizeof steps, "%s/steps.jsonl", out);
    wait_lines(steps, 1, 60000);
    sigint_ends_it("in a sweep's --gap", se, out, "load");
    sweep_results_check(out, (const double[]){5, 10}, 1, 0, "interrupted by a signal");
}

/* The same fake; every step runs (2 s, +0.2 s warm-up, at 5 then 10
 * req/s), then the end waits 10 s for Prometheus: a Ctrl-C once the
 * client says so ends it at once, stopped_in "summary", both steps whole
 * with their server figures, steps.jsonl's end line null (every rate
 * ran). */
static void test_sweep_sigint_in_end_wait(void **state)
{
    (void)state;
    fake_start(100, 9800, 0);
    char out[600], se[600];
    sweep_spawn(
        (const char *const[]){"--rates", "5,10", "--step-duration", "2s", "--warmup", "0.2s", NULL},
        out, sizeof out, se, sizeof se);
    wait_stderr(se, "Ctrl-C skips it", 60000);
    sigint_ends_it("in a sweep's end wait", se, out, "summary");
    sweep_results_check(out, (const double[]){5, 10}, 2, 0, NULL);
}

HARNESS_MAIN(cmocka_unit_test_teardown(test_failed_round_keeps_dates, teardown),
             cmocka_unit_test_teardown(test_sigint_in_end_wait, teardown),
             cmocka_unit_test_teardown(test_sigint_in_load, teardown),
             cmocka_unit_test_teardown(test_sweep_sigint_in_step, teardown),
             cmocka_unit_test_teardown(test_sweep_sigint_in_gap, teardown),
             cmocka_unit_test_teardown(test_sweep_sigint_in_end_wait, teardown))
