/* `llmload report DIR` on saved results directories: the rebuilt
 * summary.json, steps.csv, classes.csv, report.html and the printed table
 * must equal, byte for byte, what the build that recorded them wrote.
 *
 * tests/data/report/<name>/ holds a sweep's raw files (run.json,
 * steps.jsonl, requests.jsonl, server_metrics.jsonl) and expected/ the
 * outputs. The fixture pins every rule between the raw records and what a
 * user reads: the per-step figures, the verdicts, the fits, the findings, the
 * SVG. A change of behaviour fails here; a deliberate one regenerates
 * expected/ in the same commit (tests/data/report/README.md says how).
 * One field is not the recording's: summary.json's top-level "version" is
 * the rebuilding binary's, so it is compared as a placeholder.
 *
 * sweep-classes: a sweep of `llmload sim` (profile default) at 4, 12, 24 and
 * 36 req/s with a recovery step, three traffic classes with their own SLOs,
 * server metrics scraped every 200 ms. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "harness.h"
#include "test.h"

static const char *const raw_files[] = {"run.json", "steps.jsonl", "requests.jsonl",
                                        "server_metrics.jsonl"};
static const char *const built_files[] = {"summary.json", "steps.csv", "classes.csv",
                                          "report.html"};

static void copy_file(const char *from, const char *to)
{
    size_t len = 0;
    char *text = harness_read_file(from, &len);
    if (text == NULL)
        fail_msg("cannot read %s", from);
    FILE *f = fopen(to, "w");
    assert_non_null(f);
    assert_int_equal(fwrite(text, 1, len, f), len);
    assert_int_equal(fclose(f), 0);
    free(text);
}

/* Fail with the first differing line of got against the file want_path. */
static void assert_same_bytes(const char *what, const char *got, size_t got_len,
                              const char *want_path)
{
    size_t want_len = 0;
    char *want = harness_read_file(want_path, &want_len);
    if (want == NULL)
        fail_msg("cannot read %s", want_path);
    size_t i = 0, line = 1;
    while (i < got_len && i < want_len && got[i] == want[i]) {
        if (got[i] == '\n')
            line++;
        i++;
    }
    if (i != got_len || i != want_len) {
        size_t ls = i;
        while (ls > 0 && want[ls - 1] != '\n')
            ls--;
        fail_msg("%s differs from %s at line %zu (byte %zu; %zu vs %zu bytes):\n"
                 "  want: %.120s\n  got:  %.120s",
                 what, want_path, line, i, want_len, got_len, want + ls,
                 ls < got_len ? got + ls : "");
    }
    free(want);
}

/* Replace the value of the first line that starts with `  "version": "`
 * by VERSION, in place (the text shrinks or stays). */
static void mask_version(char *text, size_t *len)
{
    static const char key[] = "\n  \"version\": \"";
    char *at = strstr(text, key);
    if (at == NULL)
        return;
    char *val = at + sizeof key - 1;
    char *end = strchr(val, '"');
    if (end == NULL || (size_t)(end - val) < 7)
        return;
    memcpy(val, "VERSION", 7);
    memmove(val + 7, end, strlen(end) + 1);
    *len = strlen(text);
}

/* A new temporary directory (caller removes and frees) holding the raw
 * files of fixture name, but for `except` (NULL: none), written empty. */
static char *fixture_copy(const char *name, const char *except)
{
    const char *data = getenv("LLMLOAD_DATA");
    assert_non_null(data);
    char *tmp = harness_tmpdir();
    assert_non_null(tmp);
    char src[800], dst[800];
    for (size_t i = 0; i < sizeof raw_files / sizeof raw_files[0]; i++) {
        snprintf(src, sizeof src, "%s/report/%s/%s", data, name, raw_files[i]);
        snprintf(dst, sizeof dst, "%s/%s", tmp, raw_files[i]);
        if (except && strcmp(raw_files[i], except) == 0)
            harness_write_file(dst, "");
        else
            copy_file(src, dst);
    }
    return tmp;
}

static void check_fixture(const char *name)
{
    const char *data = getenv("LLMLOAD_DATA");
    char *tmp = fixture_copy(name, NULL);
    char src[800], dst[800];

    const char *args[] = {"report", tmp, NULL};
    int status = -1;
    char *out = NULL, *err = NULL;
    assert_int_equal(harness_run(args, 60, &status, &out, &err), 0);
    if (status != 0)
        fail_msg("llmload report exited %d\nstderr:\n%s", status, err);

    snprintf(src, sizeof src, "%s/report/%s/expected/stdout.txt", data, name);
    assert_same_bytes("stdout", out, strlen(out), src);
    for (size_t i = 0; i < sizeof built_files / sizeof built_files[0]; i++) {
        snprintf(src, sizeof src, "%s/report/%s/expected/%s", data, name, built_files[i]);
        snprintf(dst, sizeof dst, "%s/%s", tmp, built_files[i]);
        size_t len = 0;
        char *got = harness_read_file(dst, &len);
        if (got == NULL)
            fail_msg("llmload report wrote no %s", built_files[i]);
        if (strcmp(built_files[i], "summary.json") == 0)
            mask_version(got, &len);
        assert_same_bytes(built_files[i], got, len, src);
        free(got);
    }
    free(out);
    free(err);
    harness_rm_rf(tmp);
    free(tmp);
}

static void test_report_sweep_classes(void **state)
{
    check_fixture("sweep-classes");
}

/* `llmload report tmp` refused with one line naming want, the
 * summary.json put there first left as it is; tmp removed and freed. */
static void refused_keeps_summary(char *tmp, const char *want)
{
    char dst[800];
    snprintf(dst, sizeof dst, "%s/summary.json", tmp);
    harness_write_file(dst, "{\"kept\": true}\n");
    const char *args[] = {"report", tmp, NULL};
    harness_expect_usage(args, want);
    char *sum = harness_read_file(dst, NULL);
    assert_string_equal(sum, "{\"kept\": true}\n");
    free(sum);
    harness_rm_rf(tmp);
    free(tmp);
}

/* The fixture with its requests.jsonl emptied: refused with one line
 * naming the file, and the summary.json already there is left as it is
 * (it was rewritten as an INVALID sweep that "the generator's own
 * lateness" spoiled). */
static void test_report_emptied_records(void **state)
{
    char *tmp = fixture_copy("sweep-classes", "requests.jsonl");
    char want[900];
    snprintf(want, sizeof want, "%s/requests.jsonl: empty, but steps.jsonl says", tmp);
    refused_keeps_summary(tmp, want);
}

/* A sweep cut during its capacity probe leaves a steps.jsonl with no step:
 * report exits 1 with one line, and writes nothing (it said "stopped:
 * every rate was run", exit 0, over an empty table). */
static void test_report_no_steps(void **state)
{
    char *tmp = fixture_copy("sweep-classes", "steps.jsonl"), dst[800];
    snprintf(dst, sizeof dst, "%s/summary.json", tmp);
    harness_write_file(dst, "{\"kept\": true}\n");
    const char *args[] = {"report", tmp, NULL};
    int status = -1;
    char *out = NULL, *err = NULL;
    assert_int_equal(harness_run(args, 60, &status, &out, &err), 0);
    assert_int_equal(status, 1);
    char want[900];
    snprintf(want, sizeof want,
             "llmload: no step could be judged: %s/steps.jsonl holds no step (the sweep "
             "stopped before its first step began); nothing to report, the directory is left "
             "as it is\n",
             tmp);
    assert_string_equal(err, want);
    assert_string_equal(out, "");
    char *sum = harness_read_file(dst, NULL);
    assert_string_equal(sum, "{\"kept\": true}\n");
    free(sum);
    snprintf(dst, sizeof dst, "%s/report.html", tmp);
    assert_int_not_equal(access(dst, F_OK), 0);
    free(out);
    free(err);
    harness_rm_rf(tmp);
    free(tmp);
}

/* The fixture's requests.jsonl with its fifth line appended again (a file
 * appended to another): refused with one line naming both lines, the
 * summary.json already there left as it is. It counted that request twice
 * in its step's figures. */
static void test_report_repeated_record(void **state)
{
    char *tmp = fixture_copy("sweep-classes", NULL), path[800], cmd[1800];
    snprintf(cmd, sizeof cmd, "cd '%s' && sed -n 5p requests.jsonl >> requests.jsonl", tmp);
    assert_int_equal(system(cmd), 0);
    size_t n = 0;
    snprintf(path, sizeof path, "%s/requests.jsonl", tmp);
    char *recs = harness_read_file(path, NULL);
    for (const char *c = recs; *c; c++)
        n += *c == '\n';
    free(recs);
    char want[1000];
    snprintf(want, sizeof want,
             "%s:%zu: request id 5 of step 0 again (first at line 5): one line per request; "
             "was a file appended to another?",
             path, n);
    refused_keeps_summary(tmp, want);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_report_sweep_classes),
        cmocka_unit_test(test_report_emptied_records),
        cmocka_unit_test(test_report_no_steps),
        cmocka_unit_test(test_report_repeated_record),
    };
    return harness_run_tests(tests, sizeof tests / sizeof tests[0]);
}
