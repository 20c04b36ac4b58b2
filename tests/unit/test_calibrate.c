/* Unit tests of the words-to-tokens fit (calibrate.c) and the scaling of
 * synthetic prompts by it (workload_calib_words). */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "test.h"
#include "testutil.h"
#include "util/util.h"
#include "workload/calibrate.h"
#include "workload/workload.h"

/* A tokenizer of 1.3 tokens per word plus a 9-token template, rounded as a
 * real server rounds: the fit recovers the line, and the words it picks
 * for targets of 50..8000 tokens count within 2% of the target. */
static void test_fit_known_slope(void **state)
{
    double words[8], tokens[8];
    const unsigned w[8] = {16, 32, 64, 128, 256, 384, 512, 1024};
    for (size_t i = 0; i < 8; i++) {
        words[i] = w[i];
        tokens[i] = round(1.3 * w[i] + 9);
    }
    struct calib_fit fit;
    memset(&fit, 0, sizeof fit);
    assert_int_equal(calib_fit_compute(words, tokens, 8, &fit), 0);
    ASSERT_NEAR(fit.slope, 1.3, 0.002);
    ASSERT_NEAR(fit.intercept, 9, 0.5);
    assert_true(fit.residual < 0.5);
    assert_int_equal(fit.probes, 8);
    struct workload_calib c = {fit.slope, fit.intercept};
    for (uint32_t target = 50; target <= 8000; target = target * 3 / 2) {
        uint32_t n = workload_calib_words(&c, target);
        double counted = round(1.3 * n + 9);
        ASSERT_REL(counted, target, 0.02);
    }
    /* A prefix: no template, the slope alone. */
    uint32_t pw = workload_calib_prefix_words(&c, 1300);
    assert_int_equal(pw, 1000);
}

/* No fit: one word per token. The sim's exact fit (1, 0) likewise. */
static void test_identity(void **state)
{
    struct workload_calib none = {0, 0}, sim = {1.0, 0.0};
    assert_int_equal(workload_calib_words(&none, 777), 777);
    assert_int_equal(workload_calib_words(&sim, 777), 777);
    assert_int_equal(workload_calib_prefix_words(&sim, 64), 64);
    assert_int_equal(workload_calib_words(&sim, 1), 1);
    struct workload_calib big = {1.0, 500.0};
    assert_int_equal(workload_calib_words(&big, 10), 1);
}

static void test_fit_rejects(void **state)
{
    struct calib_fit fit;
    double same_w[3] = {10, 10, 10}, t[3] = {12, 13, 14};
    assert_int_equal(calib_fit_compute(same_w, t, 3, &fit), LL_E_INVAL);
    double w2[2] = {10, 20}, flat[2] = {30, 30}, down[2] = {30, 20};
    assert_int_equal(calib_fit_compute(w2, flat, 2, &fit), LL_E_INVAL);
    assert_int_equal(calib_fit_compute(w2, down, 2, &fit), LL_E_INVAL);
    assert_int_equal(calib_fit_compute(w2, t, 1, &fit), LL_E_INVAL);
}

static char *tmp_path(const char *contents)
{
    char *p = strdup("/tmp/llmload-calib-XXXXXX");
    int fd = mkstemp(p);
    assert_true(fd >= 0);
    size_t n = strlen(contents);
    assert_int_equal(write(fd, contents, n), (ssize_t)n);
    close(fd);
    return p;
}

static void test_save_load(void **state)
{
    struct calib_fit a, b;
    memset(&a, 0, sizeof a);
    snprintf(a.model, sizeof a.model, "m-7b");
    snprintf(a.source, sizeof a.source, "usage");
    snprintf(a.date, sizeof a.date, "2024-05-01T12:00:00Z");
    a.slope = 1.2345678901234;
    a.intercept = -3.5;
    a.residual = 0.25;
    a.probes = 8;
    char *p = tmp_path("");
    char err[300];
    assert_int_equal(calib_fit_save(p, &a, err, sizeof err), 0);
    assert_int_equal(calib_fit_load(p, &b, err, sizeof err), 0);
    assert_true(b.slope == a.slope);
    assert_true(b.intercept == a.intercept);
    assert_string_equal(b.model, "m-7b");
    assert_string_equal(b.source, "usage");
    assert_int_equal(b.probes, 8);
    assert_int_equal(b.spread.requests, 0); /* not measured: "spread": null */
    unlink(p);
    free(p);

    /* With a spread: kept exactly. */
    a.spread.requests = 24;
    a.spread.n_targets = 3;
    a.spread.targets[0] = 32;
    a.spread.targets[1] = 64;
    a.spread.targets[2] = 128;
    a.spread.error_min = -0.0625;
    a.spread.error_mean = 0.001953125;
    a.spread.error_max = 0.1;
    p = tmp_path("");
    assert_int_equal(calib_fit_save(p, &a, err, sizeof err), 0);
    assert_int_equal(calib_fit_load(p, &b, err, sizeof err), 0);
    assert_int_equal(b.spread.requests, 24);
    assert_int_equal(b.spread.n_targets, 3);
    assert_int_equal(b.spread.targets[2], 128);
    assert_true(b.spread.error_min == a.spread.error_min);
    assert_true(b.spread.error_mean == a.spread.error_mean);
    assert_true(b.spread.error_max == a.spread.error_max);
    unlink(p);
    free(p);
    /* A file from before the spread loads, as not measured. */
    p = tmp_path("{\"slope\": 2, \"intercept\": 47.5}");
    assert_int_equal(calib_fit_load(p, &b, err, sizeof err), 0);
    assert_int_equal(b.spread.requests, 0);
    unlink(p);
    free(p);

    /* Files that do not load: LL_E_INVAL and a message naming the field. */
    static const struct bad_input bad[] = {
        {"{\"slope\": 0, \"intercept\": 1}", "slope: expected a number in (0, 100]"},
        {"{\"slope\": 1, \"intercept\": 1, \"sloop\": 2}", "sloop: unknown field"},
        {"{\"slope\": 1}", "intercept"},
        {"{\"slope\": 1, \"intercept\": 1, \"spread\": 3}", "spread: expected null or"},
        {"{\"slope\": 1, \"intercept\": 1, \"spread\": {\"requests\": 0, \"targets\": [], "
         "\"error_mean\": 0, \"error_min\": 0, \"error_max\": 0}}",
         "spread"},
        {"{\"slope\": 1, \"intercept\": 1, \"spread\": {\"requests\": 2, \"targets\": [64, 32], "
         "\"error_mean\": 0, \"error_min\": 0, \"error_max\": 0}}",
         "ascending"},
        {"{\"slope\": 1, \"intercept\": 1, \"spread\": {\"requests\": 2, \"targets\": [32], "
         "\"error_mean\": 0.2, \"error_min\": 0, \"error_max\": 0.1}}",
         "min <= mean <= max"},
        {"{\"slope\": 1, \"intercept\": 1, \"spread\": {\"requests\": 2, \"targets\": [32], "
         "\"error_mean\": 0, \"error_min\": 0, \"error_max\": 0, \"p95\": 1}}",
         "spread"},
    };
    for (size_t i = 0; i < LL_ARRAY_LEN(bad); i++) {
        p = tmp_path(bad[i].in);
        assert_int_equal(calib_fit_load(p, &b, err, sizeof err), LL_E_INVAL);
        assert_message_has(err, bad[i].why, bad[i].in);
        unlink(p);
        free(p);
    }
}

UNIT_TESTS(test_fit_known_slope, test_identity, test_fit_rejects, test_save_load)
