/* Integration test of `llmload calibrate` and `run --calibration` against
 * `llmload sim`, whose tokenizer counts each synthetic word as one token
 * and adds no chat template: the fit is slope 1, intercept 0, and a
 * calibrated run still hits every prompt length exactly. */
#include <jansson.h>
#include <stdlib.h>
#include <string.h>

#include "calibrate.h"
#include "harness.h"
#include "test.h"

static int run_llmload(const char *const *argv, char **out, char **err)
{
    int status = -1;
    assert_int_equal(harness_run(argv, 60, &status, out, err), 0);
    return status;
}

static void test_calibrate_sim(void **state)
{
    (void)state;
    const char *sargs[] = {NULL};
    assert_int_equal(harness_sim_start(&harness_cur_sim, sargs), 0);
    char *dir = harness_tmpdir();
    char url[200], cal[600], res[600];
    snprintf(url, sizeof url, "%s/v1", harness_cur_sim.url);
    snprintf(cal, sizeof cal, "%s/cal.json", dir);
    snprintf(res, sizeof res, "%s/r", dir);

    const char *cargs[] = {"calibrate", "--url", url, "--out", cal, NULL};
    char *o = NULL, *e = NULL;
    int status = run_llmload(cargs, &o, &e);
    if (status != 0)
        fail_msg("calibrate exited %d\n%s\n%s", status, o, e);
    assert_non_null(strstr(o, "1.0000 tokens per word"));
    free(o);
    free(e);
    struct calib_fit fit;
    char err[300];
    assert_int_equal(calib_fit_load(cal, &fit, err, sizeof err), 0);
    ASSERT_NEAR(fit.slope, 1.0, 1e-9);
    ASSERT_NEAR(fit.intercept, 0.0, 1e-6);
    ASSERT_NEAR(fit.residual, 0.0, 1e-6);
    assert_int_equal(fit.probes, 8);
    assert_string_equal(fit.source, "usage");
    assert_string_equal(fit.model, "llmload-sim");

    const char *rargs[] = {"run", "--url", url, "--out", res, "--quiet", "--rate", "100",
                           "--requests", "30", "--prompt-tokens", "uniform:20,400",
                           "--output-tokens", "2", "--calibration", cal, NULL};
    status = run_llmload(rargs, &o, &e);
    if (status != 0 && status != 1)
        fail_msg("run exited %d\n%s\n%s", status, o, e);
    free(o);
    free(e);
    harness_sim_teardown(NULL);

    char path[700];
    snprintf(path, sizeof path, "%s/requests.jsonl", res);
    size_t len = 0;
    char *text = harness_read_file(path, &len);
    assert_non_null(text);
    size_t n = 0;
    for (char *line = text; line < text + len;) {
        char *nl = memchr(line, '\n', (size_t)(text + len - line));
        assert_non_null(nl);
        json_t *j = json_loadb(line, (size_t)(nl - line), 0, NULL);
        assert_non_null(j);
        json_int_t want = json_integer_value(json_object_get(j, "prompt_tokens"));
        json_int_t got = json_integer_value(json_object_get(j, "prompt_tokens_server"));
        assert_true(want >= 20 && want <= 400);
        assert_int_equal(got, want);
        json_decref(j);
        n++;
        line = nl + 1;
    }
    assert_int_equal(n, 30);
    free(text);
    snprintf(path, sizeof path, "%s/run.json", res);
    json_t *rj = json_load_file(path, 0, NULL);
    assert_non_null(rj);
    json_t *k = json_object_get(json_object_get(rj, "config"), "calibration");
    ASSERT_NEAR(json_number_value(json_object_get(k, "tokens_per_word")), 1.0, 1e-9);
    json_decref(rj);
    harness_rm_rf(dir);
    free(dir);
}

/* A server that is not there: a one-line reason and exit 3, no file. */
static void test_calibrate_no_server(void **state)
{
    (void)state;
    char *dir = harness_tmpdir();
    char cal[600];
    snprintf(cal, sizeof cal, "%s/cal.json", dir);
    const char *cargs[] = {"calibrate", "--url", "http://127.0.0.1:1/v1", "--model", "m",
                           "--out", cal, NULL};
    char *o = NULL, *e = NULL;
    assert_int_equal(run_llmload(cargs, &o, &e), 3);
    assert_non_null(strstr(e, "calibrate: probe 0"));
    free(o);
    free(e);
    size_t len;
    char *t = harness_read_file(cal, &len);
    assert_null(t);
    harness_rm_rf(dir);
    free(dir);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_teardown(test_calibrate_sim, harness_sim_teardown),
        cmocka_unit_test(test_calibrate_no_server),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
