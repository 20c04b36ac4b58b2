/* Unit tests for histlog.c: hist.jsonl's windows round-trip exactly, the
 * windows of several workers and seconds written to a file and merged give
 * percentiles within 1/256 of the record-exact ones (and counts exactly),
 * the step filter, and the reader's one-line refusals. */
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "measure/histlog.h"
#include "test.h"
#include "testutil.h"
#include "util/rng.h"
#include "util/util.h"

#define REL_BOUND (1.0 / 256.0)

/* An ok record scheduled at sched_ns, first token ttft_ns later, out
 * tokens tpot_ns apart, ending at the last. */
static void make_ok(struct record *r, uint64_t id, uint64_t sched_ns, uint64_t ttft_ns,
                    uint64_t out, uint64_t tpot_ns)
{
    record_init(r, id);
    r->kind = REC_OK;
    r->sched_ns = sched_ns;
    r->sent_ns = sched_ns;
    r->first_ns = sched_ns + ttft_ns;
    r->last_ns = r->first_ns + (out - 1) * tpot_ns;
    r->end_ns = r->last_ns;
    r->output_tokens = out;
    r->events = out;
}

static uint64_t lognormal_ns(struct rng *g, double median_ns, double sigma)
{
    return (uint64_t)llround(exp(log(median_ns) + sigma * rng_normal(g)));
}

static void assert_same_hist(const struct hist *a, const struct hist *b)
{
    char *sa = hist_to_string(a), *sb = hist_to_string(b);
    assert_string_equal(sa, sb);
    free(sa);
    free(sb);
}

/* A window's line parses back to the same window, field for field and
 * bucket for bucket; an empty histogram is left out of the line, and a
 * combined window's shard and worker. */
static void test_round_trip(void **state)
{
    (void)state;
    struct rng g;
    rng_seed(&g, 7, 1);
    struct histlog_window w, back;
    histlog_window_init(&w);
    histlog_window_init(&back);
    w.step = 3;
    w.worker = 2;
    w.shard = 5;
    w.t_ns = 17 * HISTLOG_WINDOW_NS;
    for (uint64_t i = 0; i < 500; i++) {
        struct record r;
        make_ok(&r, i, i * 1000, lognormal_ns(&g, 2e8, 1), 2 + i % 50, lognormal_ns(&g, 2e7, 0.5));
        if (i % 7 == 0)
            r.kind = REC_HTTP_5XX;
        histlog_window_add_record(&w, &r);
        hist_record(w.h[HISTLOG_ITL], lognormal_ns(&g, 2e7, 0.8));
    }
    char *line = histlog_line(&w);
    assert_non_null(strchr(line, '\n'));
    char err[300];
    assert_int_equal(histlog_parse_line(line, strlen(line), &back, err, sizeof err), 0);
    assert_int_equal(back.step, 3);
    assert_int_equal(back.worker, 2);
    assert_int_equal(back.shard, 5);
    assert_int_equal(back.t_ns, 17 * HISTLOG_WINDOW_NS);
    assert_int_equal(back.ok, w.ok);
    assert_int_equal(back.failed, w.failed);
    assert_int_equal(w.failed, 72); /* 0, 7, ..., 497 */
    for (int m = 0; m < HISTLOG_METRICS; m++)
        assert_same_hist(back.h[m], w.h[m]);
    free(line);

    /* Outside a sweep there is no "step"; an empty metric is absent. */
    histlog_window_clear(&w);
    w.step = -1;
    assert_true(histlog_window_empty(&w));
    w.failed = 1;
    assert_false(histlog_window_empty(&w));
    line = histlog_line(&w);
    assert_null(strstr(line, "\"step\""));
    assert_null(strstr(line, "\"ttft\""));
    assert_int_equal(histlog_parse_line(line, strlen(line), &back, err, sizeof err), 0);
    assert_int_equal(back.step, -1);
    assert_int_equal(back.failed, 1);
    assert_int_equal(hist_count(back.h[HISTLOG_E2E]), 0);
    assert_false(back.combined);
    free(line);

    /* A merged directory's line (every shard's and worker's second added
     * together) has no "shard" or "worker", and reads back so: the same
     * line again, byte for byte. */
    w.combined = 1;
    w.t_ns = 4 * HISTLOG_WINDOW_NS;
    line = histlog_line(&w);
    assert_string_equal(line, "{\"t_ns\":4000000000,\"ok\":0,\"failed\":1}\n");
    assert_int_equal(histlog_parse_line(line, strlen(line), &back, err, sizeof err), 0);
    assert_true(back.combined);
    char *again = histlog_line(&back);
    assert_string_equal(again, line);
    free(again);
    free(line);
    histlog_window_free(&w);
    histlog_window_free(&back);
}

static int cmp_u64(const void *a, const void *b)
{
    return test_cmp_u64(a, b);
}

/* Exact nearest-rank percentile of n sorted values. */
static uint64_t exact_pct(const uint64_t *v, size_t n, double pct)
{
    return v[hist_percentile_rank(pct, n) - 1];
}

/* 20,000 records of 2 steps spread over 4 workers and 30 one-second
 * windows, each window written to a file as it closes (the order the
 * workers' lines land in), then merged from the file: step 1's counts are
 * exact and every percentile of TTFT, ITL, TPOT and E2E is within 1/256
 * of the exact percentile of the step's raw values. */
static void test_merged_percentiles(void **state)
{
    (void)state;
    enum { N = 20000, WORKERS = 4, WINDOWS = 30 };
    char path[] = "/tmp/test_histlog_XXXXXX";
    int fd = mkstemp(path);
    assert_true(fd >= 0);
    struct rng g;
    rng_seed(&g, 20, 2);
    uint64_t *vals[HISTLOG_METRICS];
    size_t nv[HISTLOG_METRICS] = {0};
    for (int m = 0; m < HISTLOG_METRICS; m++)
        vals[m] = ll_calloc(N, sizeof(uint64_t));
    uint64_t want_ok = 0, want_failed = 0;
    struct histlog_window cur[WORKERS];
    for (int k = 0; k < WORKERS; k++)
        histlog_window_init(&cur[k]);
    for (int32_t step = 0; step < 2; step++) {
        for (uint32_t win = 0; win < WINDOWS; win++) {
            for (int k = 0; k < WORKERS; k++) {
                histlog_window_clear(&cur[k]);
                cur[k].step = step;
                cur[k].worker = (uint32_t)k;
                cur[k].t_ns = win * HISTLOG_WINDOW_NS;
            }
            for (int i = 0; i < N / 2 / WINDOWS; i++) {
                struct histlog_window *w = &cur[rng_next(&g) % WORKERS];
                struct record r;
                uint64_t ttft = lognormal_ns(&g, 1.5e8, 1.2), tpot = lognormal_ns(&g, 3e7, 0.4);
                make_ok(&r, (uint64_t)i, win * HISTLOG_WINDOW_NS, ttft, 1 + rng_next(&g) % 300,
                        tpot);
                if (rng_next(&g) % 20 == 0)
                    r.kind = REC_TIMEOUT_IDLE;
                uint64_t gap = lognormal_ns(&g, 3e7, 0.9);
                histlog_window_add_record(w, &r);
                hist_record(w->h[HISTLOG_ITL], gap);
                if (step != 1)
                    continue;
                vals[HISTLOG_ITL][nv[HISTLOG_ITL]++] = gap;
                if (r.kind != REC_OK) {
                    want_failed++;
                    continue;
                }
                want_ok++;
                vals[HISTLOG_TTFT][nv[HISTLOG_TTFT]++] = record_ttft_ns(&r);
                vals[HISTLOG_E2E][nv[HISTLOG_E2E]++] = record_e2e_ns(&r);
                if (record_tpot_ns(&r) != LL_NO_TIME)
                    vals[HISTLOG_TPOT][nv[HISTLOG_TPOT]++] = record_tpot_ns(&r);
            }
            for (int k = 0; k < WORKERS; k++)
                if (!histlog_window_empty(&cur[k]))
                    assert_int_equal(histlog_write_fd(fd, &cur[k]), 0);
        }
    }
    for (int k = 0; k < WORKERS; k++)
        histlog_window_free(&cur[k]);
    close(fd);

    struct histlog_window total;
    histlog_window_init(&total);
    uint64_t windows = 0;
    char err[300];
    assert_int_equal(histlog_merge_file(path, 1, &total, &windows, err, sizeof err), 0);
    assert_int_equal(windows, WORKERS * WINDOWS);
    assert_int_equal(total.ok, want_ok);
    assert_int_equal(total.failed, want_failed);
    static const double pcts[] = {1, 10, 50, 90, 95, 99, 99.9, 100};
    for (int m = 0; m < HISTLOG_METRICS; m++) {
        assert_int_equal(hist_count(total.h[m]), nv[m]);
        assert_true(nv[m] > 1000);
        qsort(vals[m], nv[m], sizeof(uint64_t), cmp_u64);
        for (size_t p = 0; p < LL_ARRAY_LEN(pcts); p++) {
            uint64_t exact = exact_pct(vals[m], nv[m], pcts[p]);
            uint64_t got = hist_percentile(total.h[m], pcts[p]);
            ASSERT_NEAR(got, exact, (double)exact * REL_BOUND);
        }
        free(vals[m]);
    }
    /* Every step together is twice as many windows. */
    histlog_window_clear(&total);
    assert_int_equal(histlog_merge_file(path, HISTLOG_ALL_STEPS, &total, &windows, err, sizeof err),
                     0);
    assert_int_equal(windows, 2 * WORKERS * WINDOWS);
    assert_true(total.ok > want_ok);
    histlog_window_free(&total);
    unlink(path);
}

static const struct bad_input bad_lines[] = {
    {"", "'[' or '{' expected"},
    {"[1]", "expected a JSON object"},
    {"{\"ok\":1,\"failed\":0}", "\"t_ns\": missing"},
    {"{\"t_ns\":-1,\"ok\":1,\"failed\":0}", "\"t_ns\""},
    {"{\"t_ns\":0,\"ok\":\"1\",\"failed\":0}", "\"ok\""},
    {"{\"t_ns\":0,\"ok\":1}", "\"failed\": missing"},
    {"{\"t_ns\":0,\"ok\":1,\"failed\":0,\"step\":-2}", "\"step\""},
    {"{\"t_ns\":0,\"ok\":1,\"failed\":0,\"ttft\":5}", "\"ttft\": expected a histogram"},
    {"{\"t_ns\":0,\"ok\":1,\"failed\":0,\"e2e\":\"llh1 2 5 5 0 10 0 5:1\"}", "\"e2e\""},
    {"{\"t_ns\":0,\"ok\":1,\"failed\":0,\"tpot\":\"llh1 2 5 7 0 12 0 5:1 +2:1\"}",
     "more than \"ok\""},
    {"{\"t_ns\":0,\"t_ns\":0,\"ok\":1,\"failed\":0}", "duplicate"},
    /* jansson's message quotes the input up to the bad byte, line break
     * and all (the fuzzer's find): the message stays one line. */
    {"{\"t_ns\":0,\"ok\":0,\"failed :2\\\n\n{\"t_ns\":1}", "invalid escape near '\"failed :2\\?'"},
    {"{\"t_ns\":0,\"ok\":0,\"f\xc3\x28\x01", "near"},
};

/* histlog_parse_line of in into ctx, an empty struct histlog_window: a
 * refused line must leave it empty. */
static int parse_line(void *ctx, const char *in, char *err, size_t errlen)
{
    int rc = histlog_parse_line(in, strlen(in), ctx, err, errlen);
    if (rc != 0)
        assert_true(histlog_window_empty(ctx));
    return rc;
}

/* Bad lines are refused with one line naming the field; a file's bad line
 * with its name and line number; a missing file is LL_E_IO. */
static void test_rejects(void **state)
{
    (void)state;
    struct histlog_window w;
    histlog_window_init(&w);
    test_refusals(parse_line, &w, LL_E_INVAL, bad_lines, LL_ARRAY_LEN(bad_lines));
    /* ITL may hold more values than ok records: a stream has many gaps. */
    const char *itl = "{\"t_ns\":0,\"ok\":1,\"failed\":0,\"itl\":\"llh1 2 5 7 0 12 0 5:1 +2:1\"}";
    char err[300];
    assert_int_equal(histlog_parse_line(itl, strlen(itl), &w, err, sizeof err), 0);

    const char text[] = "{\"t_ns\":0,\"ok\":1,\"failed\":0}\n\n{\"t_ns\":0,\"ok\":1}\n";
    assert_int_equal(histlog_merge_text("h.jsonl", text, sizeof text - 1, HISTLOG_ALL_STEPS, &w,
                                        NULL, err, sizeof err),
                     LL_E_INVAL);
    assert_message_has(err, "h.jsonl:3: \"failed\": missing", text);
    assert_int_equal(histlog_merge_file("/nonexistent/hist.jsonl", 0, &w, NULL, err, sizeof err),
                     LL_E_IO);
    assert_message_has(err, "/nonexistent/hist.jsonl: ", "a missing file");
    histlog_window_free(&w);
}

UNIT_TESTS(test_round_trip, test_merged_percentiles, test_rejects)
