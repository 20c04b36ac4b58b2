/* steps.csv and classes.csv: every number exact and without an exponent.
 *
 * A count over 999,999 once came out as "1.23457e+06" (%.6g): rounded, and
 * in a form spreadsheets and awk sums take for something else. Each test
 * writes one hand-made step and reads its fields back by column name. */
#include <unistd.h>

#include "report/steps_csv.h"
#include "test.h"
#include "util/util.h"

/* A fresh step with one ok request's worth of percentiles defined, so the
 * ms columns are written. Undo with sweep_step_free. */
static void step_make(struct sweep_step *s)
{
    sweep_step_init(s);
    s->f.offered_rps = 7.2;
    s->stats.by_kind[REC_OK] = 1;
    s->stats.completed = 1;
}

/* Field col of the first data row of csv, copied into out (len bytes).
 * Fails the test when there is no such column or row. A quoted field
 * ("...") keeps its quotes; none of ours holds a quote. */
static const char *field(const char *csv, const char *col, char *out, size_t len)
{
    size_t idx = 0, at = 0, cl = strlen(col);
    for (const char *p = csv;; idx++) {
        if (strncmp(p, col, cl) == 0 && (p[cl] == ',' || p[cl] == '\n'))
            break;
        p = strpbrk(p, ",\n");
        if (p == NULL || *p == '\n')
            fail_msg("no column %s in the header", col);
        p++;
    }
    const char *p = strchr(csv, '\n');
    if (p == NULL || p[1] == '\0')
        fail_msg("no data row");
    p++;
    for (int quoted = 0; at < idx; p++) {
        if (*p == '"')
            quoted = !quoted;
        else if (*p == ',' && !quoted)
            at++;
        else if (*p == '\n' || *p == '\0')
            fail_msg("the row has no field %zu (%s)", idx, col);
    }
    size_t n = strcspn(p, ",\n");
    if (*p == '"')
        n = (size_t)(strchr(p + 1, '"') + 1 - p);
    assert_true(n < len);
    memcpy(out, p, n);
    out[n] = '\0';
    return out;
}

/* Every field of the rows that strtod reads whole is a plain decimal:
 * digits, at most one point, a leading minus; no exponent, no "inf". */
static void assert_plain_numbers(const char *rows)
{
    for (const char *p = rows; *p;) {
        size_t n = strcspn(p, ",\n");
        char buf[400];
        assert_true(n < sizeof buf);
        memcpy(buf, p, n);
        buf[n] = '\0';
        char *end = NULL;
        strtod(buf, &end);
        if (n > 0 && *end == '\0') {
            size_t lead = buf[0] == '-';
            if (strspn(buf + lead, "0123456789.") != n - lead ||
                strchr(buf, '.') != strrchr(buf, '.'))
                fail_msg("\"%s\" is not a plain decimal", buf);
        }
        p += n + (p[n] != '\0');
    }
}

/* A column and the text its field must have. */
struct want {
    const char *col;
    const char *text;
};

/* Each of the n wants holds in the first data row of csv, and every
 * number of that row is a plain decimal. */
static void assert_row(const char *csv, const struct want *w, size_t n)
{
    char got[512];
    for (size_t i = 0; i < n; i++)
        if (strcmp(field(csv, w[i].col, got, sizeof got), w[i].text) != 0)
            fail_msg("%s: \"%s\", expected \"%s\"", w[i].col, got, w[i].text);
    assert_plain_numbers(strchr(csv, '\n') + 1);
}

#define ASSERT_ROW(csv, ...)                                                                       \
    assert_row((csv), (const struct want[]){__VA_ARGS__},                                          \
               LL_ARRAY_LEN(((const struct want[]){__VA_ARGS__})))

/* Write the n steps with write (steps_csv_write or _classes) into a fresh
 * directory and return the file's text. Caller frees. */
static char *write_csv(int (*write)(const char *, const struct sweep_step *, size_t, char *,
                                    size_t),
                       const struct sweep_step *steps, size_t n)
{
    char dir[] = "/tmp/test_steps_csv_XXXXXX";
    assert_non_null(mkdtemp(dir));
    char path[128], err[300] = "";
    snprintf(path, sizeof path, "%s/out.csv", dir);
    if (write(path, steps, n, err, sizeof err) != 0)
        fail_msg("%s", err);
    size_t len = 0;
    char *text = test_read_path(path, &len);
    unlink(path);
    rmdir(dir);
    return text;
}

/* Counts over a million as integers, a small rate in full, without an
 * exponent; the scraped counters (doubles) too. */
static void test_big_counts_small_rates(void **state)
{
    (void)state;
    struct sweep_step s;
    step_make(&s);
    s.stats.scheduled = 1234567;
    s.stats.by_kind[REC_OK] = 1234567;
    s.stats.completed = 2345678;
    s.achieved_rps = 0.000123;
    s.output_tps = 1234567.25;
    s.request_bytes_per_s = 2.5e9;
    s.f.server.present = 1;
    s.f.server.generation_tokens = 1234567;
    s.f.server.has_span = 1;
    s.client_tokens_in_span = 1234567;
    s.f.server.preemptions = 3e6;
    char *csv = write_csv(steps_csv_write, &s, 1);
    ASSERT_ROW(csv, {"server_generation_tokens", "1234567"},
               {"client_output_tokens_in_span", "1234567"}, {"scheduled", "1234567"},
               {"ok", "1234567"}, {"failed", "1111111"}, {"achieved_rps", "0.000123"},
               {"output_tps", "1234567.25"}, {"request_bytes_per_s", "2500000000"},
               {"server_preemptions", "3000000"}, {"offered_rps", "7.2"});
    free(csv);
    sweep_step_free(&s);
}

/* Each real reads back as exactly the double written: the shortest such
 * decimal, however small or large, with -0 as 0 and NaN as an empty field;
 * milliseconds to the nanosecond. */
static void test_reals_round_trip(void **state)
{
    (void)state;
    struct sweep_step s;
    step_make(&s);
    s.completed_rps = 1.0 / 3;
    s.goodput_rps = 1e-7;
    s.attainment = 5e-324; /* the least double above 0: 324 decimals */
    s.input_tps = 1e22;    /* a double exactly */
    s.inflight_growth = -0.0;
    s.hold_factor = -35.785;
    s.cost_per_mtok = NAN;
    s.ttft_ns[3] = 1234567891; /* ns */
    s.ttft_ns[0] = 40000;
    char *csv = write_csv(steps_csv_write, &s, 1);
    ASSERT_ROW(csv, {"completed_rps", "0.3333333333333333"}, {"goodput_rps", "0.0000001"},
               {"input_tps", "10000000000000000000000"}, {"inflight_growth", "0"},
               {"hold_factor", "-35.785"}, {"cost_per_mtok", ""}, {"ttft_p99_ms", "1234.567891"},
               {"ttft_p50_ms", "0.04"});
    char got[512];
    field(csv, "attainment", got, sizeof got);
    assert_int_equal(strlen(got), 2 + 324);
    assert_true(strncmp(got, "0.000", 5) == 0);
    assert_true(strtod(got, NULL) == 5e-324);
    field(csv, "completed_rps", got, sizeof got);
    assert_true(strtod(got, NULL) == 1.0 / 3);
    free(csv);
    sweep_step_free(&s);
}

/* classes.csv follows the same rule. */
static void test_classes(void **state)
{
    (void)state;
    struct sweep_step s;
    step_make(&s);
    sweep_step_classes_init(&s, 1);
    snprintf(s.f.classes[0].name, sizeof s.f.classes[0].name, "chat");
    struct sweep_class *c = &s.classes[0];
    c->stats.scheduled = 1234567;
    c->stats.by_kind[REC_OK] = 1234560;
    c->stats.by_kind[REC_TIMEOUT_TOTAL] = 7;
    c->stats.completed = 1234567;
    c->achieved_rps = 0.000123;
    c->error_rate = 7.0 / 1234567;
    c->ttft_ns[3] = 2500000000; /* ns */
    char *csv = write_csv(steps_csv_write_classes, &s, 1);
    ASSERT_ROW(csv, {"class", "chat"}, {"scheduled", "1234567"}, {"ok", "1234560"}, {"failed", "7"},
               {"achieved_rps", "0.000123"}, {"ttft_p99_ms", "2500"});
    char got[512];
    field(csv, "error_rate", got, sizeof got);
    assert_null(strpbrk(got, "eE"));
    assert_true(strtod(got, NULL) == 7.0 / 1234567);
    free(csv);
    sweep_step_free(&s);
}

UNIT_TESTS(test_big_counts_small_rates, test_reals_round_trip, test_classes)
