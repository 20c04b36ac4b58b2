/* test_signals.c: Ctrl-C at any moment, a bounded set-up, and exit 6.
 *
 * A server of the test's own (a child: harness_serve_forever) accepts
 * every connection, reads the request head and never answers; it counts
 * in shared memory which requests it read (GET .../models, GET /metrics,
 * POST .../chat/completions), so the test knows for certain which phase
 * the client is in before it signals:
 *
 * - set-up with --model takes at most 3 s: no /models probe is waited for
 *   (one may run in the background), and the /metrics probe gives up
 *   after 2 s even with --metrics-interval 10s. Timed from the spawn to
 *   the first POST the server reads.
 * - SIGINT while the /models probe waits (no --model): exit 130 within
 *   1 s, and run.json's outcome says "stopped_in": "probe".
 * - SIGINT while the load runs (POSTs arriving, the schedule not done):
 *   exit 130 within --grace 500ms and 1.5 s, "stopped_in": "load".
 * - SIGINT after the last request was offered (--requests 3, one worker:
 *   it stops offering as it sends the third, before the server can read
 *   it), while the three wait: exit 130 within the grace, "drain".
 * - SIGINT while a sweep's /models probe waits: 130, "probe".
 * - The phases too short to hit by timing (the scrape's start, the
 *   schedule's build, the summary): the client holds in the phase the
 *   environment's LLMLOAD_TEST_HOLD_IN names (util.h, ll_test_hold) and
 *   says so on stderr; the test signals it then: 130 within 1 s, and
 *   run.json names that phase.
 * - No request succeeds (the port refuses every connection): run, replay
 *   and sweep exit 6, and run.json's outcome says 6.
 *
 * All traffic goes to 127.0.0.1, at most 20 requests/s for a few seconds;
 * the server dies with the test (PDEATHSIG) and after 60 s at most. The
 * file takes about 10 s. */
#include <errno.h>
#include <jansson.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "harness.h"
#include "test.h"
#include "util/util.h"

#define MS 1000000ull

/* What the never-answering server read, shared with the test. */
struct hang_seen {
    _Atomic int models, metrics, chat, other;
    _Atomic uint64_t first_chat_ns; /* CLOCK_MONOTONIC when it read the first POST */
};

static struct hang_seen *seen;
static pid_t server_pid, client_pid;
static int server_port;

static void *hang_conn(void *arg)
{
    int fd = harness_fd_take(arg);
    char buf[8192];
    size_t body_len;
    int kept;
    size_t head = harness_read_request(fd, buf, sizeof buf, &body_len, &kept);
    if (head) {
        if (strncmp(buf, "POST ", 5) == 0 && strstr(buf, "/chat/completions")) {
            uint64_t zero = 0;
            atomic_compare_exchange_strong(&seen->first_chat_ns, &zero, ll_now_ns());
            atomic_fetch_add(&seen->chat, 1);
        } else if (strncmp(buf, "GET ", 4) == 0 && strstr(buf, "/models")) {
            atomic_fetch_add(&seen->models, 1);
        } else if (strncmp(buf, "GET ", 4) == 0 && strstr(buf, "/metrics")) {
            atomic_fetch_add(&seen->metrics, 1);
        } else {
            atomic_fetch_add(&seen->other, 1);
        }
    }
    /* Never answer: hold the connection until the client gives up. */
    while (read(fd, buf, sizeof buf) > 0)
        ;
    close(fd);
    return NULL;
}

/* Start the never-answering server into server_pid and server_port. */
static void hang_start(void)
{
    if (!seen)
        seen = harness_shared_map(sizeof *seen);
    memset(seen, 0, sizeof *seen);
    int lfd = harness_bind_local(128, &server_port);
    server_pid = harness_serve_fork(lfd, 60, hang_conn, harness_fd_arg, NULL);
}

/* Each test against the never-answering server starts in a fresh
 * temporary folder with the server up. */
static int hang_setup(void **state)
{
    harness_tmp_begin();
    hang_start();
    return 0;
}

static int teardown(void **state)
{
    pid_t *pids[] = {&client_pid, &server_pid, NULL};
    unsetenv("LLMLOAD_TEST_HOLD_IN");
    harness_cleanup(pids);
    return 0;
}

/* Wait until *counter reaches n, at most timeout_ms; fails the test past it. */
static void wait_count(_Atomic int *counter, int n, int timeout_ms, const char *what)
{
    uint64_t deadline = ll_now_ns() + (uint64_t)timeout_ms * MS;
    while (atomic_load(counter) < n) {
        if (ll_now_ns() >= deadline)
            fail_msg("the server did not read %d %s request(s) within %d ms (read %d)", n, what,
                     timeout_ms, atomic_load(counter));
        harness_sleep_ms(2);
    }
}

/* Spawn llmload <cmd> --url <the server> --out <tmp>/r --quiet args... */
static void client_start(const char *cmd, const char *const *args)
{
    char url[100], out[600], so[600], se[600];
    snprintf(url, sizeof url, "http://127.0.0.1:%d/v1", server_port);
    harness_tmp_path(out, sizeof out, "r");
    harness_tmp_path(so, sizeof so, "stdout.txt");
    harness_tmp_path(se, sizeof se, "stderr.txt");
    struct harness_argv a = {.n = 0};
    const char *fixed[] = {cmd, "--url", url, "--out", out, "--quiet", NULL};
    harness_argv_add(&a, fixed);
    harness_argv_add(&a, args);
    client_pid = harness_spawn(a.v, so, se, -1, NULL, NULL);
}

/* SIGINT the client, wait for it at most bound_ms and check exit 130 and
 * run.json's outcome: interrupted, stopped_in phase. Returns the ms from
 * the signal to the exit. */
static double interrupt_and_check(const char *phase, int bound_ms)
{
    uint64_t t0 = ll_now_ns();
    assert_int_equal(kill(client_pid, SIGINT), 0);
    int st = harness_reap(client_pid, bound_ms + 5000);
    client_pid = 0;
    double took_ms = (double)(ll_now_ns() - t0) / 1e6;
    char se[600];
    harness_tmp_path(se, sizeof se, "stderr.txt");
    char *err = harness_read_file(se, NULL);
    if (st != 130)
        fail_msg("stopped during the %s: exit %d, expected 130; stderr:\n%s", phase, st,
                 err ? err : "");
    if (took_ms > bound_ms)
        fail_msg("stopped during the %s: exit after %.0f ms, bound %d ms; stderr:\n%s", phase,
                 took_ms, bound_ms, err ? err : "");
    free(err);
    char dir[600];
    harness_tmp_path(dir, sizeof dir, "r");
    json_t *run = harness_json_load(dir, "run.json");
    json_t *o = json_object_get(run, "outcome");
    assert_non_null(o);
    assert_int_equal(harness_ival_req(o, "exit_status"), 130);
    assert_true(json_is_true(json_object_get(o, "interrupted")));
    assert_string_equal(harness_sval(o, "stopped_in"), phase);
    json_decref(run);
    return took_ms;
}

/* The run's records file (<tmp>/r) holds n records, each of kind kind. */
static void assert_records_all(size_t n, const char *kind)
{
    char dir[600];
    harness_tmp_path(dir, sizeof dir, "r");
    struct harness_recs *r = harness_requests_load(dir);
    assert_int_equal(r->n, n);
    for (size_t i = 0; i < r->n; i++)
        assert_string_equal(harness_sval(r->items[i], "kind"), kind);
    harness_recs_free(r);
}

/* --model given: the load starts within 3 s of the spawn though neither
 * /models nor /metrics ever answers (the probe's 2 s bound, with the
 * 10 s interval that would give it 8 s). */
static void test_setup_bounded(void **state)
{
    const char *args[] = {"--model",    "m",         "--rate",
                          "20",         "--arrival", "constant",
                          "--duration", "30s",       "--metrics-interval",
                          "10s",        "--grace",   "200ms",
                          NULL};
    uint64_t t0 = ll_now_ns();
    client_start("run", args);
    wait_count(&seen->chat, 1, 10000, "POST");
    double setup_ms = (double)(atomic_load(&seen->first_chat_ns) - t0) / 1e6;
    print_message("set-up against a server that never answers: %.0f ms "
                  "(/metrics probes %d, /models probes %d)\n",
                  setup_ms, atomic_load(&seen->metrics), atomic_load(&seen->models));
    assert_int_equal(atomic_load(&seen->metrics), 1); /* the probe was made, and waited for */
    if (setup_ms > 3000)
        fail_msg("set-up took %.0f ms (bound 3000 ms)", setup_ms);
    interrupt_and_check("load", 1500);
}

/* Start `llmload cmd` with args (no --model), wait until the server reads
 * its /models probe, and Ctrl-C it there: it must stop in the probe within
 * 1 s (interrupt_and_check). */
static void interrupt_in_probe(const char *cmd, const char *const *args)
{
    client_start(cmd, args);
    wait_count(&seen->models, 1, 10000, "GET /models");
    interrupt_and_check("probe", 1000);
}

/* No --model: the /models probe is waited for, and a Ctrl-C ends it. */
static void test_sigint_probe(void **state)
{
    const char *args[] = {"--rate", "5", "--duration", "5s", NULL};
    interrupt_in_probe("run", args);
    assert_int_equal(atomic_load(&seen->chat), 0);
}

/* --calibrate auto: the first probe (a POST to chat/completions) is
 * never answered, and a Ctrl-C ends it at once: 130, "calibrate", and no
 * request of the load was sent (the server read the probe alone, and
 * requests.jsonl is empty). */
static void test_sigint_calibrate(void **state)
{
    const char *args[] = {"--model", "m", "--no-metrics", "--calibrate", "auto",
                          "--rate",  "5", "--duration",   "5s",          NULL};
    client_start("run", args);
    wait_count(&seen->chat, 1, 10000, "POST");
    interrupt_and_check("calibrate", 1000);
    assert_int_equal(atomic_load(&seen->chat), 1);
    assert_records_all(0, "ok");
}

/* During the load: POSTs are arriving and the schedule runs for 30 s. */
static void test_sigint_load(void **state)
{
    const char *args[] = {"--model",  "m",          "--no-metrics", "--rate",  "20",    "--arrival",
                          "constant", "--duration", "30s",          "--grace", "500ms", NULL};
    client_start("run", args);
    wait_count(&seen->chat, 2, 10000, "POST");
    interrupt_and_check("load", 1500);
    /* Ctrl-C leaves a whole results directory: the page beside the summary. */
    char dir[600];
    harness_tmp_path(dir, sizeof dir, "r");
    char *page = harness_read_in(dir, "report.html");
    assert_non_null(strstr(page, "Interrupted: a signal cut the window short."));
    assert_non_null(strstr(page, "</html>"));
    free(page);
}

/* During the drain: the third and last request is offered (the one
 * worker stops offering before its bytes can reach the server), and all
 * three wait for a first token that never comes. */
static void test_sigint_drain(void **state)
{
    const char *args[] = {"--model",   "m",        "--no-metrics", "--rate", "20",
                          "--arrival", "constant", "--requests",   "3",      "--threads",
                          "1",         "--grace",  "500ms",        NULL};
    client_start("run", args);
    wait_count(&seen->chat, 3, 10000, "POST");
    interrupt_and_check("drain", 1500);
    assert_records_all(3, "cancelled");
}

/* A sweep's set-up is interrupted as a run's is. */
static void test_sigint_sweep_probe(void **state)
{
    const char *args[] = {"--rates", "5", "--step-duration", "1s", NULL};
    interrupt_in_probe("sweep", args);
}

/* Wait until the client's stderr holds needle (at most 10 s). */
static void wait_stderr(const char *needle)
{
    char se[600];
    harness_tmp_path(se, sizeof se, "stderr.txt");
    for (int i = 0; i < 5000; i++) {
        if (access(se, R_OK) != 0) { /* not created yet */
            harness_sleep_ms(2);
            continue;
        }
        char *err = harness_read_file(se, NULL);
        int found = err && strstr(err, needle);
        free(err);
        if (found)
            return;
        harness_sleep_ms(2);
    }
    fail_msg("the client's stderr did not say \"%s\" within 10 s", needle);
}

/* Hold the client in phase (LLMLOAD_TEST_HOLD_IN), signal it there, and
 * check that it stops at once and says where: no request was sent before
 * the load. Runs under hang_setup. */
static void hold_case(const char *phase, const char *const *args)
{
    setenv("LLMLOAD_TEST_HOLD_IN", phase, 1);
    client_start("run", args);
    unsetenv("LLMLOAD_TEST_HOLD_IN");
    char said[64];
    snprintf(said, sizeof said, "test hold: %s\n", phase);
    wait_stderr(said);
    int chat_before = atomic_load(&seen->chat);
    interrupt_and_check(phase, 1000);
    if (strcmp(phase, "summary") != 0)
        assert_int_equal(chat_before, 0);
}

/* The /metrics probe answered never, so the scraper starts (it retries in
 * the background); a signal as it starts ends the run before the load. */
static void test_sigint_scrape_start(void **state)
{
    const char *args[] = {"--model", "m", "--rate", "5", "--duration", "5s", NULL};
    hold_case("scrape_start", args);
}

/* Workers set up, the schedule built, nothing sent yet. */
static void test_sigint_schedule(void **state)
{
    const char *args[] = {"--model", "m", "--no-metrics", "--rate", "5", "--duration", "5s", NULL};
    hold_case("schedule", args);
}

/* The load over (two requests timed out waiting for a first token), the
 * summary being written: 130 all the same, and the results are complete. */
static void test_sigint_summary(void **state)
{
    const char *args[] = {"--model",    "m", "--no-metrics",          "--rate", "20",
                          "--requests", "2", "--timeout-first-token", "300ms",  NULL};
    hold_case("summary", args);
    assert_records_all(2, "timeout_first_token");
}

/* Run cmd against a port that refuses every connection: exit 6, said in
 * run.json's outcome. */
static void no_ok_case(const char *cmd, const char *first, const char *const *args)
{
    harness_tmp_begin();
    char url[100], out[600];
    snprintf(url, sizeof url, "http://127.0.0.1:%d/v1", harness_free_port());
    harness_tmp_path(out, sizeof out, "r");
    struct harness_argv a = {.n = 0};
    const char *head[] = {cmd, first, NULL}; /* first: a positional argument, or NULL */
    const char *fixed[] = {"--url", url, "--out", out, "--quiet", "--model", "m", NULL};
    harness_argv_add(&a, head);
    harness_argv_add(&a, fixed);
    harness_argv_add(&a, args);
    char *err = NULL;
    char *o = harness_run_expect(a.v, 60, 6, &err);
    assert_non_null(strstr(err, "no request succeeded"));
    free(o);
    free(err);
    json_t *run = harness_json_load(out, "run.json");
    assert_int_equal(harness_ival_req(json_object_get(run, "outcome"), "exit_status"), 6);
    json_decref(run);
}

static void test_no_ok_run(void **state)
{
    const char *args[] = {"--rate",     "10", "--arrival",    "constant",
                          "--duration", "1s", "--no-metrics", NULL};
    no_ok_case("run", NULL, args);
}

static void test_no_ok_replay(void **state)
{
    char trace[600];
    snprintf(trace, sizeof trace, "%s/workload/trace.jsonl", getenv("LLMLOAD_DATA"));
    const char *args[] = {"--requests", "5", NULL};
    no_ok_case("replay", trace, args);
}

static void test_no_ok_sweep(void **state)
{
    const char *args[] = {"--rates", "5,10",          "--step-duration", "1s", "--warmup",
                          "0s",      "--no-recovery", "--no-metrics",    NULL};
    no_ok_case("sweep", NULL, args);
}

/* A test against the server that never finishes its headers. */
#define HANG_TEST(t) cmocka_unit_test_setup_teardown(t, hang_setup, teardown)

HARNESS_MAIN(HANG_TEST(test_setup_bounded), HANG_TEST(test_sigint_probe),
             HANG_TEST(test_sigint_calibrate), HANG_TEST(test_sigint_load),
             HANG_TEST(test_sigint_drain), HANG_TEST(test_sigint_sweep_probe),
             HANG_TEST(test_sigint_scrape_start), HANG_TEST(test_sigint_schedule),
             HANG_TEST(test_sigint_summary), cmocka_unit_test_teardown(test_no_ok_run, teardown),
             cmocka_unit_test_teardown(test_no_ok_replay, teardown),
             cmocka_unit_test_teardown(test_no_ok_sweep, teardown))
