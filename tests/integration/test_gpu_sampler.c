/* Integration tests of `--gpu-sampler nvidia-smi`: a fake nvidia-smi (a
 * shell script first on PATH) prints the CSV of 2 GPUs at a constant,
 * known power, every 200 ms until it is killed, and llmload runs against
 * the small sim beside it. The ground truth is the script's: 100 W + 50 W,
 * so the energy is 150 W times the span the samples cover, whatever the
 * load. The other fakes print "[N/A]" power, or fail and exit at once:
 * warnings and no energy figure, never a failed run. */
#include <errno.h>
#include <jansson.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>

#include "harness.h"
#include "test.h"

#define WORK "--prompt-tokens", "8", "--output-tokens", "20", "--ignore-eos"

static char *saved_path;

/* Write the fake nvidia-smi (body after its #! line) into this test's
 * temporary directory, record its pid in <tmp>/pid, and put the directory
 * first on PATH (the client inherits it). */
static void fake_smi(const char *body)
{
    harness_tmp_begin();
    char path[600], text[2000];
    harness_tmp_path(path, sizeof path, "nvidia-smi");
    snprintf(text, sizeof text, "#!/bin/sh\necho $$ > '%s/pid'\n%s", harness_cur_tmp, body);
    harness_write_file(path, text);
    assert_int_equal(chmod(path, 0755), 0);
    const char *old = getenv("PATH");
    if (!saved_path)
        saved_path = strdup(old ? old : "/usr/bin:/bin");
    char newpath[4096];
    snprintf(newpath, sizeof newpath, "%s:%s", harness_cur_tmp, saved_path);
    assert_int_equal(setenv("PATH", newpath, 1), 0);
}

/* The fake's process is gone (llmload killed and reaped it). */
static void fake_gone(void)
{
    char path[600];
    harness_tmp_path(path, sizeof path, "pid");
    char *text = harness_read_file(path, NULL);
    pid_t pid = (pid_t)atol(text);
    free(text);
    assert_true(pid > 0);
    errno = 0;
    if (kill(pid, 0) == 0 || errno != ESRCH)
        fail_msg("the fake nvidia-smi (pid %ld) is still there", (long)pid);
}

static int teardown(void **state)
{
    if (saved_path) {
        setenv("PATH", saved_path, 1);
        free(saved_path);
        saved_path = NULL;
    }
    harness_tmp_end();
    return harness_sim_teardown(state);
}

/* 15 requests at 5/s with the sampler; summary.json (caller decrefs),
 * *dir the results dir, *err the client's stderr (caller frees). */
static json_t *sampler_run(char **dir, char **err)
{
    const char *sargs[] = {"--max-num-seqs", "4", NULL};
    harness_cur_sim_start(sargs);
    const char *args[] = {
        "--rate",        "5",          "--arrival",       "constant", "--requests", "15",
        "--gpu-sampler", "nvidia-smi", "--cost-per-hour", "3.6",      WORK,         NULL};
    *dir = harness_run_client(NULL, args, HARNESS_RC_OK_OR_INVALID, err);
    return harness_summary_load(*dir);
}

/* After a run whose sampler gave no energy: the run itself was fine,
 * all 15 requests ok. Releases what sampler_run returned and removes the
 * fake nvidia-smi. */
static void sampler_done_ok(json_t *s, char *dir, char *err)
{
    ASSERT_NEAR(harness_num(s, "requests.ok"), 15, 0);
    fake_gone();
    free(err);
    json_decref(s);
    harness_results_free(dir);
}

#define FAKE_150W                                                                                  \
    "while :; do\n"                                                                                \
    "  printf '2026/12/02 14:29:02.123, 0, 100.00, 40, 1000, 81559, 1500\\n"                       \
    "2026/12/02 14:29:02.124, 1, 50.00, 20, 3000, 81559, 1700\\n'\n"                               \
    "  sleep 0.2\n"                                                                                \
    "done\n"

/* Constant 150 W: the mean power is 150 W and the energy 150 W times the
 * span (both within 2-3%), the span covers the run, and the joules per
 * output token are that energy over the client's 300 tokens. */
static void test_constant_power(void **state)
{
    fake_smi(FAKE_150W);
    char *dir, *err;
    json_t *s = sampler_run(&dir, &err);
    json_t *e = json_object_get(s, "energy");
    assert_non_null(e);
    assert_true(json_is_true(json_object_get(e, "present")));
    assert_string_equal(harness_sval(e, "source"), "power_integral");
    assert_string_equal(harness_sval(e, "url"), "nvidia-smi");
    ASSERT_NEAR(harness_num(e, "gpus"), 2, 0);
    ASSERT_NEAR(harness_num(e, "failed"), 0, 0);
    ASSERT_NEAR(harness_num(e, "gaps"), 0, 0);
    ASSERT_REL(harness_num(e, "mean_power_w"), 150, 0.02);
    ASSERT_REL(harness_num(e, "max_power_w"), 150, 1e-9);
    double span = harness_num(e, "span_s"), joules = harness_num(e, "energy_j");
    ASSERT_REL(joules, 150 * span, 0.03);
    double window_s = harness_num(s, "window_ns") / 1e9;
    ASSERT_IN_RANGE(span, window_s * 0.9, window_s + 3);
    ASSERT_NEAR(harness_num(e, "output_tokens"), 300, 0);
    ASSERT_REL(harness_num(e, "j_per_output_token"), joules / 300, 1e-9);
    ASSERT_REL(harness_num(e, "j_per_request"), joules / 15, 1e-9);
    ASSERT_NEAR(harness_num(e, "gpu_util_mean_pct"), 30, 1e-9);   /* (40 + 20) / 2 */
    ASSERT_NEAR(harness_num(e, "sm_clock_mean_mhz"), 1600, 1e-9); /* (1500 + 1700) / 2 */
    ASSERT_NEAR(harness_num(e, "fb_used_max_mib"), 4000, 1e-9);   /* 1000 + 3000 */
    assert_null(strstr(err, "warning"));

    /* server_metrics.jsonl: the sim's own lines (no source), and one line
     * per sample period, both GPUs in it. */
    json_t *all = harness_jsonl_in(dir, "server_metrics.jsonl");
    size_t n = 0;
    for (size_t i = 0; i < json_array_size(all); i++) {
        json_t *l = json_array_get(all, i);
        if (strcmp(harness_sval(l, "source"), "gpu") != 0) {
            assert_null(json_object_get(l, "sampler"));
            continue;
        }
        n++;
        assert_string_equal(harness_sval(l, "sampler"), "nvidia-smi");
        assert_true(json_is_true(json_object_get(l, "ok")));
        ASSERT_NEAR(harness_num(l, "power_w"), 150, 1e-9);
        json_t *per = json_object_get(l, "per_gpu");
        assert_int_equal(json_array_size(per), 2);
        ASSERT_NEAR(harness_num(json_array_get(per, 0), "index"), 0, 0);
        ASSERT_NEAR(harness_num(json_array_get(per, 0), "power_w"), 100, 1e-9);
        ASSERT_NEAR(harness_num(json_array_get(per, 1), "power_w"), 50, 1e-9);
        ASSERT_NEAR(harness_num(json_array_get(per, 1), "fb_total_mib"), 81559, 0);
    }
    assert_true(n >= 5); /* >= 3 s at 200 ms, on a loaded machine */
    ASSERT_NEAR(harness_num(e, "scrapes"), n, 0);
    json_decref(all);
    fake_gone();
    free(err);
    json_decref(s);
    harness_results_free(dir);
}

/* Power "[N/A]": the other series are there, the energy is not, and the
 * run says why once. */
static void test_power_not_available(void **state)
{
    fake_smi("while :; do\n"
             "  printf 't, 0, [N/A], 40, 1000, 81559, 1500\\nt, 1, [Not Supported], 20, 3000, "
             "81559, 1700\\n'\n"
             "  sleep 0.2\n"
             "done\n");
    char *dir, *err;
    json_t *s = sampler_run(&dir, &err);
    json_t *e = json_object_get(s, "energy");
    assert_true(json_is_false(json_object_get(e, "present")));
    assert_true(harness_num(e, "scrapes") >= 5);
    ASSERT_NEAR(harness_num(e, "failed"), 0, 0);
    assert_non_null(strstr(err, "GPU 0 reports no power.draw"));
    assert_null(strstr(strstr(err, "no power.draw") + 1, "no power.draw")); /* once */
    sampler_done_ok(s, dir, err);
}

/* nvidia-smi that fails and exits at once: a warning, a counted gap for
 * its one line, no energy, and the run is fine. So is none at all. */
static void test_exits_at_once(void **state)
{
    fake_smi("echo 'NVIDIA-SMI has failed because it could not communicate with the NVIDIA "
             "driver.'\nexit 9\n");
    char *dir, *err;
    json_t *s = sampler_run(&dir, &err);
    json_t *e = json_object_get(s, "energy");
    assert_true(json_is_false(json_object_get(e, "present")));
    ASSERT_NEAR(harness_num(e, "scrapes"), 1, 0);
    ASSERT_NEAR(harness_num(e, "failed"), 1, 0);
    assert_non_null(strstr(err, "nvidia-smi exited (status 9) after 1 line"));
    assert_non_null(strstr(err, "line 1: expected 7 comma-separated fields"));
    sampler_done_ok(s, dir, err);
}

/* nvidia-smi that gives 5 periods (1 s) of a 3 s run and exits: the
 * energy covers a third of the window, and that energy over the whole
 * run's tokens would read a third of the truth. The energy and its span
 * stand; the per-token and per-request figures are withheld (null), and
 * the summary says why. */
static void test_stops_partway(void **state)
{
    fake_smi("i=0\n"
             "while [ $i -lt 5 ]; do\n"
             "  printf 't, 0, 100.00, 40, 1000, 81559, 1500\\nt, 1, 50.00, 20, 3000, 81559, "
             "1700\\n'\n"
             "  sleep 0.2; i=$((i+1))\n"
             "done\n");
    const char *sargs[] = {"--max-num-seqs", "4", NULL};
    harness_cur_sim_start(sargs);
    const char *args[] = {
        "--rate",        "5",          "--arrival",       "constant", "--requests", "15",
        "--gpu-sampler", "nvidia-smi", "--cost-per-hour", "3.6",      WORK,         NULL};
    char *out, *err;
    char *dir = harness_run_sim_verdict("run", args, 60, &out, &err);
    json_t *s = harness_summary_load(dir);
    json_t *e = json_object_get(s, "energy");
    assert_true(json_is_true(json_object_get(e, "present")));
    assert_true(json_is_null(json_object_get(e, "j_per_output_token")));
    assert_true(json_is_null(json_object_get(e, "j_per_request")));
    assert_true(json_is_null(json_object_get(e, "output_tokens_per_j")));
    assert_true(json_is_true(json_object_get(e, "partial")));
    /* The energy's window is the whole run's, the summary's window and
     * the drain after it. */
    double window_s = harness_num(e, "window_s");
    ASSERT_IN_RANGE(window_s, harness_num(s, "window_ns") / 1e9, 10);
    ASSERT_IN_RANGE(harness_num(e, "covered_s"), 0.3, window_s - 1.2);
    ASSERT_REL(harness_num(e, "mean_power_w"), 150, 0.02);
    assert_true(harness_num(e, "cost_per_m_output_tokens") > 0); /* no energy in it */
    assert_non_null(strstr(out, "per-token and per-request figures withheld"));
    assert_non_null(strstr(err, "nvidia-smi exited (status 0) after 10 lines"));
    free(out);
    sampler_done_ok(s, dir, err);
}

/* nvidia-smi that prints nothing and ignores SIGTERM: a warning that
 * says so once the start wait (2 s) is over, and no stop wait for a
 * period that will never come: the run ends within 1.5 s of its window
 * and the start wait (it took 5.4 s more before: the stop wait and 1 s
 * of SIGTERM grace). Counted from the fake's start (its pid file's
 * mtime), not the client's spawn: the client's set-up before it starts
 * the sampler took 2 s more under AddressSanitizer on a loaded box. */
static void test_silent_ignores_term(void **state)
{
    fake_smi("trap '' TERM\nwhile :; do sleep 0.1; done\n");
    char *dir, *err;
    json_t *s = sampler_run(&dir, &err);
    struct timespec b;
    clock_gettime(CLOCK_REALTIME, &b);
    char pidp[600];
    struct stat st;
    harness_tmp_path(pidp, sizeof pidp, "pid");
    assert_int_equal(stat(pidp, &st), 0);
    double wall_s =
        (double)(b.tv_sec - st.st_mtim.tv_sec) + (double)(b.tv_nsec - st.st_mtim.tv_nsec) / 1e9;
    double window_s = harness_num(s, "window_ns") / 1e9;
    assert_non_null(strstr(err, "--gpu-sampler nvidia-smi: no sample period in the first 2 s "
                                "(it printed nothing)"));
    assert_true(json_is_false(json_object_get(json_object_get(s, "energy"), "present")));
    if (wall_s > window_s + 2 + 1.5)
        fail_msg("the run took %.2f s for a %.2f s window", wall_s, window_s);
    sampler_done_ok(s, dir, err);
}

static void test_not_on_path(void **state)
{
    harness_tmp_begin();
    saved_path = strdup(getenv("PATH") ? getenv("PATH") : "/usr/bin:/bin");
    assert_int_equal(setenv("PATH", harness_cur_tmp, 1), 0); /* an empty directory */
    char *dir, *err;
    json_t *s = sampler_run(&dir, &err);
    json_t *e = json_object_get(s, "energy");
    assert_true(json_is_false(json_object_get(e, "present")));
    ASSERT_NEAR(harness_num(e, "scrapes"), 0, 0);
    assert_non_null(strstr(err, "nvidia-smi not found on PATH"));
    free(err);
    json_decref(s);
    harness_results_free(dir);
}

static void test_bad_flags(void **state)
{
    HARNESS_EXPECT_USAGES(
        {{"run", "--gpu-sampler", "dcgm"}, "--gpu-sampler: expected nvidia-smi, got \"dcgm\""},
        {{"sweep", "--gpu-sampler", "x"}, "--gpu-sampler: expected nvidia-smi"},
        {{"replay", "t.jsonl", "--gpu-sampler", "x"}, "--gpu-sampler: expected nvidia-smi"},
        {{"run", "--rate", "1", "--cost-per-hour", "2"},
         "--cost-per-hour: goes with --gpu-metrics, --gpu-sampler or --prometheus"});
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_teardown(test_constant_power, teardown),
        cmocka_unit_test_teardown(test_power_not_available, teardown),
        cmocka_unit_test_teardown(test_exits_at_once, teardown),
        cmocka_unit_test_teardown(test_stops_partway, teardown),
        cmocka_unit_test_teardown(test_silent_ignores_term, teardown),
        cmocka_unit_test_teardown(test_not_on_path, teardown),
        cmocka_unit_test(test_bad_flags),
    };
    return harness_run_tests(tests, sizeof tests / sizeof tests[0]);
}
