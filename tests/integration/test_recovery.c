/* Integration tests of the sweep's recovery step against `llmload sim` on
 * 127.0.0.1: the step must start while the overload's backlog is still in
 * the server, and measure how long latency takes to come back.
 *
 * The sim runs the default profile with a batch of 4 sequences and a 20 ms
 * step base: for the test workload (prompt 64, output 16, ignore_eos) its
 * capacity C is about 12 req/s (sim_profile_capacity_rps). One load step at
 * 2 C, then the recovery step: 3 s more at 2 C (the lead-in, which leaves a
 * backlog of about 36 + 4 requests), then 20% of 2 C. About 25 s in all. */
#include <jansson.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "harness.h"
#include "test.h"

#include "sim/profile.h"
#include "util/util.h"

#define SIM_SEQS HARNESS_SMALL_SIM_SEQS
#define WORKLOAD HARNESS_SMALL_WORKLOAD

/* Run `llmload sweep --url <sim>/v1 --out <tmp>/r --quiet <args>` and stop
 * the sim. Fails the test when the sweep does not exit 0 or prints no
 * recovery line. Returns the results dir (caller releases it with
 * harness_results_free). */
static char *sweep_ok(const char *const *args)
{
    char *out = NULL;
    char *dir = harness_sweep_ok(args, 90, &out, NULL);
    assert_non_null(strstr(out, "recovery: "));
    free(out);
    return dir;
}

/* `llmload report DIR` rebuilds summary.json byte for byte; then sum and
 * dir are freed. */
static void check_rebuild_and_free(char *dir, json_t *sum)
{
    static const char *const rebuilt[] = {"summary.json", NULL};
    free(harness_report_rebuilds(dir, rebuilt));
    json_decref(sum);
    harness_results_free(dir);
}

/* Starts the small sim; rate = the sweep rate share x its capacity.
 * Returns the capacity, req/s. */
static double sim_at(double share, char *rate, size_t len)
{
    double c = harness_small_sim_start(NULL);
    harness_sweep_rate(rate, len, share * c);
    return c;
}

/* summary.json's findings.recovery (borrowed from sum). */
static json_t *recovery_of(json_t *sum)
{
    return json_object_get(json_object_get(sum, "findings"), "recovery");
}

/* Overload, then recovery. With Q requests in flight at the switch (from
 * the records), B = 4 of them in the batch, the sim's capacity C
 * and the recovery rate L, the waiting queue drains at C - L; a request
 * scheduled at t after the switch waits about (Q - B - (C - L) t) / C for a
 * slot, so it meets a TTFT of S once t >= (Q - B - C S) / (C - L). That
 * bound, and Q / (C - L) (the whole in-flight count drained), bracket the
 * truth; the measured recovery must lie in [0.8 x lower - 0.2 s, 1.25 x
 * upper + 0.3 s] (a busy machine slows the sim's steps). */
static void test_recovery_after_overload(void **state)
{
    char rate[32];
    double c = sim_at(2, rate, sizeof rate);
    const char *args[] = {"--rates", rate, "--step-duration", "2s", "--warmup", "0.3s",
                          "--slo", "ttft=250ms", "--ttft-limit", "100s", "--max-error-rate",
                          "100", "--overload-duration", "3s", "--recovery-duration", "8s",
                          WORKLOAD, NULL};
    char *dir = sweep_ok(args);

    json_t *sum = harness_json_load(dir, "summary.json");
    json_t *steps = json_object_get(sum, "steps");
    assert_int_equal(json_array_size(steps), 2);
    json_t *rs = json_array_get(steps, 1);
    assert_string_equal(json_string_value(json_object_get(rs, "kind")), "recovery");
    double top = strtod(rate, NULL);
    char want[32];
    harness_sweep_rate(want, sizeof want, 0.2 * top);
    double lam = strtod(want, NULL);
    ASSERT_REL(harness_num(rs, "offered_rps"), lam, 1e-9);
    ASSERT_REL(harness_num(rs, "overload_rps"), top, 1e-9);
    assert_int_equal(json_integer_value(json_object_get(rs, "warmup_ns")), 3 * LL_NS_PER_SEC);
    /* The window's requests are the 8 s at the recovery rate alone. */
    ASSERT_NEAR(harness_num(rs, "scheduled"), lam * 8, 1.5);

    json_t *rec = recovery_of(sum);
    assert_true(json_is_true(json_object_get(rec, "ran")));
    assert_int_equal(json_integer_value(json_object_get(rec, "switch_ns")), 3 * LL_NS_PER_SEC);
    double q = harness_num(rec, "backlog_at_switch");
    /* (2C - C) x 3 s queued plus the batch, give or take the noise. */
    ASSERT_NEAR(q, c * 3 + SIM_SEQS, 0.35 * c * 3);
    if (!json_is_true(json_object_get(rec, "recovered")))
        fail_msg("not recovered within the step: %s", json_dumps(rec, 0));
    double got_s = harness_num(rec, "recovery_ns") / 1e9;
    double lower = (q - SIM_SEQS - c * 0.25) / (c - lam), upper = q / (c - lam);
    if (!(got_s >= 0.8 * lower - 0.2 && got_s <= 1.25 * upper + 0.3))
        fail_msg("recovery %.3fs outside [0.8 x %.3f - 0.2, 1.25 x %.3f + 0.3] (backlog %.0f, "
                 "C %.2f, L %.2f)",
                 got_s, lower, upper, q, c, lam);
    /* The first window request (within one spacing of the switch) already
     * waits behind the backlog. */
    ASSERT_IN_RANGE(harness_num(rec, "first_miss_ns"), 3e9, 3e9 + 1e9 / lam);
    assert_true(harness_num(rec, "back_in_slo_ns") > harness_num(rec, "last_miss_ns"));
    check_rebuild_and_free(dir, sum);
}

/* At a quarter of the capacity nothing queues: the lead-in leaves no
 * backlog and every window request meets the SLO, recovery 0. */
static void test_recovery_without_overload(void **state)
{
    char rate[32];
    sim_at(0.25, rate, sizeof rate);
    const char *args[] = {"--rates", rate, "--step-duration", "1s", "--warmup", "0.3s",
                          "--slo", "ttft=250ms", "--overload-duration", "1s",
                          "--recovery-duration", "2s", WORKLOAD, NULL};
    char *dir = sweep_ok(args);
    json_t *sum = harness_json_load(dir, "summary.json");
    json_t *rec = recovery_of(sum);
    assert_true(json_is_true(json_object_get(rec, "recovered")));
    assert_int_equal(json_integer_value(json_object_get(rec, "recovery_ns")), 0);
    assert_true(json_is_null(json_object_get(rec, "first_miss_ns")));
    ASSERT_IN_RANGE(harness_num(rec, "backlog_at_switch"), 0, SIM_SEQS);
    check_rebuild_and_free(dir, sum);
}

HARNESS_MAIN(cmocka_unit_test_teardown(test_recovery_after_overload, harness_sim_teardown),
             cmocka_unit_test_teardown(test_recovery_without_overload, harness_sim_teardown))
