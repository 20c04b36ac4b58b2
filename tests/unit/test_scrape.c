/* Unit tests for scrape.c: turning a body into a point, and the join
 * arithmetic (gauge means, counter deltas across resets and gaps, TTFT
 * quantiles from histogram deltas) on synthetic series whose answers are
 * worked out by hand in each test. Plus the scraper's failure path against
 * a closed port on 127.0.0.1. */
#include "test.h"
#include "testutil.h"

#include <arpa/inet.h>
#include <curl/curl.h>
#include <jansson.h>
#include <math.h>
#include <netinet/in.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "measure/hist.h"
#include "metrics/energy.h"
#include "metrics/engines.h"
#include "metrics/expose.h"
#include "metrics/scrape.h"
#include "metrics/scrape_int.h"
#include "util/util.h"

#define S LL_NS_PER_SEC

/* What one synthetic vLLM scrape says. ttft[] are per-bucket counts (not
 * cumulative) for le 0.1, 0.5, 1, +Inf. */
struct fake {
    double waiting, running, kv, preempt, prompt, gen, success;
    double ttft[4];
};

static char *fake_body(const struct fake *f)
{
    static const char *le[4] = {"0.1", "0.5", "1.0", "+Inf"};
    char *buf = ll_malloc(4096);
    size_t off = 0;
    off += (size_t)snprintf(buf + off, 4096 - off,
        "# TYPE vllm:num_requests_waiting gauge\n"
        "vllm:num_requests_waiting{model_name=\"m\"} %g\n"
        "# TYPE vllm:num_requests_running gauge\n"
        "vllm:num_requests_running{model_name=\"m\"} %g\n"
        "# TYPE vllm:kv_cache_usage_perc gauge\n"
        "vllm:kv_cache_usage_perc{model_name=\"m\"} %g\n"
        "# TYPE vllm:num_preemptions_total counter\n"
        "vllm:num_preemptions_total{model_name=\"m\"} %g\n"
        "# TYPE vllm:prompt_tokens_total counter\n"
        "vllm:prompt_tokens_total{model_name=\"m\"} %g\n"
        "# TYPE vllm:generation_tokens_total counter\n"
        "vllm:generation_tokens_total{model_name=\"m\"} %g\n"
        "# TYPE vllm:request_success_total counter\n"
        "vllm:request_success_total{finished_reason=\"length\",model_name=\"m\"} %g\n"
        "# TYPE vllm:time_to_first_token_seconds histogram\n",
        f->waiting, f->running, f->kv, f->preempt, f->prompt, f->gen, f->success);
    double cum = 0, sum = 0;
    for (int i = 0; i < 4; i++) {
        cum += f->ttft[i];
        sum += f->ttft[i] * 0.05;
        off += (size_t)snprintf(buf + off, 4096 - off,
                                "vllm:time_to_first_token_seconds_bucket{le=\"%s\",model_name=\"m\"} %g\n",
                                le[i], cum);
    }
    off += (size_t)snprintf(buf + off, 4096 - off,
                            "vllm:time_to_first_token_seconds_sum{model_name=\"m\"} %g\n"
                            "vllm:time_to_first_token_seconds_count{model_name=\"m\"} %g\n",
                            sum, cum);
    assert_true(off < 4096);
    return buf;
}

/* Append a scrape at t_s seconds (10 ms long, so its time is t_s + 5 ms). */
static void add_fake(struct scrape_series *s, double t_s, const struct fake *f)
{
    char *body = fake_body(f);
    struct scrape_point p;
    uint64_t t = (uint64_t)(t_s * 1e9);
    assert_int_equal(scrape_point_from_body(body, strlen(body), t, t + 10 * LL_NS_PER_MS, &p,
                                            NULL), 0);
    assert_true(p.ok);
    assert_int_equal(scrape_series_add(s, &p), 0);
    free(body);
}

static void add_failed(struct scrape_series *s, double t_s)
{
    struct scrape_point p;
    memset(&p, 0, sizeof p);
    p.start_abs_ns = (uint64_t)(t_s * 1e9);
    p.end_abs_ns = p.start_abs_ns + 10 * LL_NS_PER_MS;
    assert_int_equal(scrape_series_add(s, &p), 0);
}

static void test_point_from_body(void **state)
{
    struct fake f = {.waiting = 3, .running = 7, .kv = 0.25, .preempt = 2, .prompt = 1000,
                     .gen = 500, .success = 9, .ttft = {1, 2, 3, 4}};
    char *body = fake_body(&f);
    struct scrape_point p;
    assert_int_equal(scrape_point_from_body(body, strlen(body), 100, 200, &p, NULL), 0);
    assert_true(p.ok);
    assert_int_equal(p.engine, ENGINE_VLLM);
    assert_int_equal(p.start_abs_ns, 100);
    assert_int_equal(p.end_abs_ns, 200);
    ASSERT_NEAR(p.value[ENGINE_M_WAITING], 3, 0);
    ASSERT_NEAR(p.value[ENGINE_M_RUNNING], 7, 0);
    ASSERT_NEAR(p.value[ENGINE_M_KV_USAGE], 0.25, 0);
    ASSERT_NEAR(p.value[ENGINE_M_PREEMPTIONS], 2, 0);
    ASSERT_NEAR(p.value[ENGINE_M_PROMPT_TOKENS], 1000, 0);
    ASSERT_NEAR(p.value[ENGINE_M_GENERATION_TOKENS], 500, 0);
    ASSERT_NEAR(p.value[ENGINE_M_REQUEST_SUCCESS], 9, 0);
    assert_int_equal(p.ttft_n, 4);
    ASSERT_NEAR(p.ttft_le[1], 0.5, 0);
    assert_true(isinf(p.ttft_le[3]));
    ASSERT_NEAR(p.ttft_count[0], 1, 0);
    ASSERT_NEAR(p.ttft_count[3], 10, 0);
    ASSERT_NEAR(p.ttft_total, 10, 0);
    scrape_point_reset(&p);
    scrape_point_reset(&p); /* twice is safe */
    free(body);

    /* Garbage: a 200 with no sample in it is not ok. */
    const char *junk = "<html><body>Not found</body></html>\n";
    assert_int_equal(scrape_point_from_body(junk, strlen(junk), 1, 2, &p, NULL), 0);
    assert_false(p.ok);
    assert_int_equal(scrape_point_from_body(NULL, 0, 1, 2, &p, NULL), 0);
    assert_false(p.ok);
    assert_int_equal(scrape_point_from_body("", 0, 1, 2, NULL, NULL), LL_E_INVAL);

    /* An unknown engine is ok (kept raw), with nothing mapped. */
    const char *other = "my_queue 4\n";
    struct prom_scrape *ps = NULL;
    assert_int_equal(scrape_point_from_body(other, strlen(other), 1, 2, &p, &ps), 0);
    assert_true(p.ok);
    assert_int_equal(p.engine, ENGINE_UNKNOWN);
    assert_int_equal(p.present[ENGINE_M_WAITING], 0);
    assert_non_null(ps);
    assert_int_equal(ps->n_samples, 1);
    prom_scrape_free(ps);
    scrape_point_reset(&p);
}

static void test_gauges(void **state)
{
    struct scrape_series s;
    scrape_series_init(&s);
    /* waiting 0, 2, 4, 6, 8 at t = 1..5 s; running 10 - waiting; kv w/10 */
    for (int i = 0; i < 5; i++) {
        struct fake f = {.waiting = 2.0 * i, .running = 10 - 2.0 * i, .kv = 0.2 * i};
        add_fake(&s, 1 + i, &f);
    }
    struct scrape_join j;
    /* [2 s, 4.5 s] holds the scrapes at 2, 3 and 4 (times 2.005, ...). */
    assert_int_equal(scrape_series_join(&s, 2 * S, 9 * S / 2, SCRAPE_SPAN_OUTER, &j), 0);
    assert_int_equal(j.scrapes, 3);
    assert_int_equal(j.ok, 3);
    assert_int_equal(j.failed, 0);
    assert_int_equal(j.engine, ENGINE_VLLM);
    assert_true(j.waiting.present);
    assert_int_equal(j.waiting.n, 3);
    ASSERT_NEAR(j.waiting.mean, (2 + 4 + 6) / 3.0, 1e-12);
    ASSERT_NEAR(j.waiting.max, 6, 0);
    ASSERT_NEAR(j.running.mean, (8 + 6 + 4) / 3.0, 1e-12);
    ASSERT_NEAR(j.running.max, 8, 0);
    ASSERT_NEAR(j.kv_usage.mean, 0.4, 1e-12);
    ASSERT_NEAR(j.kv_usage.max, 0.6, 1e-12);

    /* A window between two scrapes has no gauge, but OUTER still spans it. */
    assert_int_equal(scrape_series_join(&s, 2 * S + S / 10, 2 * S + S / 2, SCRAPE_SPAN_OUTER, &j),
                     0);
    assert_int_equal(j.scrapes, 0);
    assert_false(j.waiting.present);
    assert_true(j.generation_tokens.present);
    assert_int_equal(scrape_series_join(&s, 2 * S + S / 10, 2 * S + S / 2, SCRAPE_SPAN_INNER, &j),
                     LL_E_NOTFOUND);
    scrape_series_reset(&s);
}

static void test_counter_spans(void **state)
{
    struct scrape_series s;
    scrape_series_init(&s);
    static const double gen[5] = {0, 100, 250, 400, 500};
    for (int i = 0; i < 5; i++) {
        struct fake f = {.gen = gen[i], .prompt = 10 * gen[i], .success = i, .preempt = 0};
        add_fake(&s, 1 + i, &f);
    }
    struct scrape_join j;
    /* Window [1.5 s, 4.5 s]. OUTER: from the scrape at 1 s to the one at
     * 5 s: 500 - 0. INNER: from 2 s to 4 s: 400 - 100. */
    assert_int_equal(scrape_series_join(&s, 3 * S / 2, 9 * S / 2, SCRAPE_SPAN_OUTER, &j), 0);
    ASSERT_NEAR(j.generation_tokens.delta, 500, 0);
    ASSERT_NEAR(j.prompt_tokens.delta, 5000, 0);
    ASSERT_NEAR(j.request_success.delta, 4, 0);
    ASSERT_NEAR(j.preemptions.delta, 0, 0);
    assert_true(j.preemptions.present);
    assert_int_equal(j.generation_tokens.resets, 0);
    assert_int_equal(j.span_from_abs_ns, S + 5 * LL_NS_PER_MS);
    assert_int_equal(j.span_to_abs_ns, 5 * S + 5 * LL_NS_PER_MS);
    assert_int_equal(scrape_series_join(&s, 3 * S / 2, 9 * S / 2, SCRAPE_SPAN_INNER, &j), 0);
    ASSERT_NEAR(j.generation_tokens.delta, 300, 0);
    ASSERT_NEAR(j.request_success.delta, 2, 0);
    assert_int_equal(j.span_from_abs_ns, 2 * S + 5 * LL_NS_PER_MS);

    /* A window past the last scrape: OUTER falls back to the nearest
     * inside, here none, and the scrape before t0 alone spans nothing. */
    assert_int_equal(scrape_series_join(&s, 10 * S, 11 * S, SCRAPE_SPAN_OUTER, &j), LL_E_NOTFOUND);
    /* Bad arguments. */
    assert_int_equal(scrape_series_join(&s, 2 * S, S, SCRAPE_SPAN_OUTER, &j), LL_E_INVAL);
    assert_int_equal(scrape_series_join(NULL, 0, S, SCRAPE_SPAN_OUTER, &j), LL_E_INVAL);
    assert_int_equal(scrape_series_join(&s, 0, S, SCRAPE_SPAN_OUTER, NULL), LL_E_INVAL);
    scrape_series_reset(&s);

    /* An empty series. */
    assert_int_equal(scrape_series_join(&s, 0, S, SCRAPE_SPAN_OUTER, &j), LL_E_NOTFOUND);
}

static void test_counter_reset_and_gaps(void **state)
{
    struct scrape_series s;
    scrape_series_init(&s);
    /* gen 100, 200, (failed), 50 (the server restarted), 80. The increase
     * is 100 + 50 + 30 = 180 with one reset; the failed scrape is a gap. */
    struct fake f = {.gen = 100};
    add_fake(&s, 1, &f);
    f.gen = 200;
    add_fake(&s, 2, &f);
    add_failed(&s, 3);
    f.gen = 50;
    add_fake(&s, 4, &f);
    f.gen = 80;
    add_fake(&s, 5, &f);
    struct scrape_join j;
    assert_int_equal(scrape_series_join(&s, 0, 6 * S, SCRAPE_SPAN_OUTER, &j), 0);
    assert_int_equal(j.scrapes, 5);
    assert_int_equal(j.ok, 4);
    assert_int_equal(j.failed, 1);
    assert_true(j.generation_tokens.present);
    ASSERT_NEAR(j.generation_tokens.delta, 180, 0);
    assert_int_equal(j.generation_tokens.resets, 1);

    /* Out of order is refused. */
    struct scrape_point p;
    memset(&p, 0, sizeof p);
    p.start_abs_ns = S;
    assert_int_equal(scrape_series_add(&s, &p), LL_E_INVAL);

    /* Only failed scrapes in the window: counted, and nothing found. */
    struct scrape_series g;
    scrape_series_init(&g);
    add_failed(&g, 1);
    add_failed(&g, 2);
    assert_int_equal(scrape_series_join(&g, 0, 3 * S, SCRAPE_SPAN_OUTER, &j), LL_E_NOTFOUND);
    assert_int_equal(j.scrapes, 2);
    assert_int_equal(j.failed, 2);
    scrape_series_reset(&g);
    scrape_series_reset(&s);
}

static void test_ttft_delta_quantiles(void **state)
{
    struct scrape_series s;
    scrape_series_init(&s);
    /* Before the window the server had counted 5, 5, 0, 0 per bucket.
     * In between it counts docs/server-metrics.md's worked example: 10,
     * 20, 15, 5 (cumulative 10, 30, 45, 50), split over two scrapes so the
     * pairwise sum is exercised: p50 = 0.1 + 0.4 * 15/20 = 0.4 in
     * (0.1, 0.5]; p99's rank 49.5 falls in (1, +Inf]: 1.0, a lower bound. */
    struct fake a = {.ttft = {5, 5, 0, 0}};
    struct fake b = {.ttft = {5 + 4, 5 + 10, 0 + 5, 0 + 1}};
    struct fake c = {.ttft = {5 + 10, 5 + 20, 0 + 15, 0 + 5}};
    add_fake(&s, 1, &a);
    add_fake(&s, 2, &b);
    add_fake(&s, 3, &c);
    struct scrape_join j;
    assert_int_equal(scrape_series_join(&s, S + S / 2, 2 * S + S / 2, SCRAPE_SPAN_OUTER, &j), 0);
    assert_true(j.ttft_present);
    ASSERT_NEAR(j.ttft_count, 50, 0);
    assert_true(j.ttft_quantiles);
    ASSERT_NEAR(j.ttft_p50_s, 0.4, 1e-12);
    ASSERT_NEAR(j.ttft_p50_lo_s, 0.1, 0);
    ASSERT_NEAR(j.ttft_p50_hi_s, 0.5, 0);
    ASSERT_NEAR(j.ttft_p99_s, 1.0, 1e-12);
    ASSERT_NEAR(j.ttft_p99_lo_s, 1.0, 0);
    assert_true(isinf(j.ttft_p99_hi_s));

    /* INNER over [1.5 s, 3.5 s] runs from 2 s to 3 s: 6, 10, 10, 4
     * (cumulative 6, 16, 26, 30). p50: rank 15 in (0.1, 0.5], which holds
     * 10 with 6 below: 0.1 + 0.4 * 9/10 = 0.46. */
    assert_int_equal(scrape_series_join(&s, S + S / 2, 3 * S + S / 2, SCRAPE_SPAN_INNER, &j), 0);
    ASSERT_NEAR(j.ttft_count, 30, 0);
    ASSERT_NEAR(j.ttft_p50_s, 0.46, 1e-12);
    scrape_series_reset(&s);

    /* A reset between two scrapes: the later histogram alone counts. */
    scrape_series_init(&s);
    struct fake r1 = {.ttft = {10, 10, 10, 10}};
    struct fake r2 = {.ttft = {4, 0, 0, 0}};
    add_fake(&s, 1, &r1);
    add_fake(&s, 2, &r2);
    assert_int_equal(scrape_series_join(&s, 0, 3 * S, SCRAPE_SPAN_OUTER, &j), 0);
    ASSERT_NEAR(j.ttft_count, 4, 0);
    /* All 4 in (0, 0.1]: p50 = 0.1 * 2/4 = 0.05. */
    ASSERT_NEAR(j.ttft_p50_s, 0.05, 1e-12);
    ASSERT_NEAR(j.ttft_p50_lo_s, 0, 0);
    ASSERT_NEAR(j.ttft_p50_hi_s, 0.1, 0);
    scrape_series_reset(&s);

    /* No observation in the span: present, count 0, no quantiles. */
    scrape_series_init(&s);
    add_fake(&s, 1, &a);
    add_fake(&s, 2, &a);
    assert_int_equal(scrape_series_join(&s, 0, 3 * S, SCRAPE_SPAN_OUTER, &j), 0);
    assert_true(j.ttft_present);
    ASSERT_NEAR(j.ttft_count, 0, 0);
    assert_false(j.ttft_quantiles);
    scrape_series_reset(&s);
}

/* Append a scrape of body at t_s seconds (10 ms long). */
static void add_body(struct scrape_series *s, double t_s, const char *body)
{
    struct scrape_point p;
    uint64_t t = (uint64_t)(t_s * 1e9);
    assert_int_equal(scrape_point_from_body(body, strlen(body), t, t + 10 * LL_NS_PER_MS, &p, NULL),
                     0);
    assert_true(p.ok);
    assert_int_equal(scrape_series_add(s, &p), 0);
}

/* A new series of two scrapes: first at 1 s, then second at 2 s. */
static void add_two_pages(struct scrape_series *s, const char *first, const char *second)
{
    scrape_series_init(s);
    add_body(s, 1, first);
    add_body(s, 2, second);
}

/* Two label sets of one counter, one of which resets: each set's
 * increase, then their sum (sum(increase())), not the increase of the
 * sum. 1000 -> 1100 and 1000 -> 50 is 100 + 50 = 150 with one reset;
 * the sum's 2000 -> 1150 read as a reset would say 1150. */
static void test_counter_reset_per_series(void **state)
{
    (void)state;
    static const char *const pages[2] = {
        "vllm:request_success_total{finished_reason=\"stop\",model_name=\"m\"} 1000\n"
        "vllm:request_success_total{finished_reason=\"length\",model_name=\"m\"} 1000\n",
        "vllm:request_success_total{finished_reason=\"stop\",model_name=\"m\"} 1100\n"
        "vllm:request_success_total{finished_reason=\"length\",model_name=\"m\"} 50\n",
    };
    struct scrape_series s;
    add_two_pages(&s, pages[0], pages[1]);
    assert_int_equal(s.pts[1].series_n[ENGINE_M_REQUEST_SUCCESS], 2);
    /* Each set named as the page wrote it, its model beside. */
    const struct scrape_counter_series *x = &s.pts[1].series[ENGINE_M_REQUEST_SUCCESS][1];
    assert_string_equal(x->name,
                        "vllm:request_success_total{finished_reason=\"length\",model_name=\"m\"}");
    assert_string_equal(x->model, "m");
    ASSERT_NEAR(x->value, 50, 0);
    struct scrape_join j;
    assert_int_equal(scrape_series_join(&s, 0, 3 * S, SCRAPE_SPAN_OUTER, &j), 0);
    assert_true(j.request_success.present);
    ASSERT_NEAR(j.request_success.delta, 150, 0);
    assert_int_equal(j.request_success.resets, 1);
    scrape_series_reset(&s);

    /* A set missing from one scrape keeps its last value: read as 0
     * there, its return counted its whole 1000 again (1220, 1 reset). */
    scrape_series_init(&s);
    add_body(&s, 1, pages[0]);
    add_body(&s, 2, "vllm:request_success_total{finished_reason=\"stop\",model_name=\"m\"} 1100\n");
    add_body(&s, 3,
             "vllm:request_success_total{finished_reason=\"stop\",model_name=\"m\"} 1200\n"
             "vllm:request_success_total{finished_reason=\"length\",model_name=\"m\"} 1020\n");
    assert_int_equal(scrape_series_join(&s, 0, 4 * S, SCRAPE_SPAN_OUTER, &j), 0);
    ASSERT_NEAR(j.request_success.delta, 220, 0);
    assert_int_equal(j.request_success.resets, 0);
    scrape_series_reset(&s);

    /* One label set alone: its reset reads as before, the later value. */
    scrape_series_init(&s);
    add_body(&s, 1, "vllm:request_success_total{finished_reason=\"stop\"} 1000\n");
    add_body(&s, 2, "vllm:request_success_total{finished_reason=\"stop\"} 1100\n");
    add_body(&s, 3, "vllm:request_success_total{finished_reason=\"stop\"} 50\n");
    assert_int_equal(scrape_series_join(&s, 0, 4 * S, SCRAPE_SPAN_OUTER, &j), 0);
    ASSERT_NEAR(j.request_success.delta, 150, 0);
    assert_int_equal(j.request_success.resets, 1);
    scrape_series_reset(&s);
}

/* A restart the going-down rule misses: by the next scrape the restarted
 * server's counters have climbed past their old values. Only
 * process_start_time_seconds says so: every counter, each label set and
 * the TTFT histogram count from 0 at the scrape after it. */
static void add_started(struct scrape_series *s, double t_s, const struct fake *f, double start_s)
{
    char *body = fake_body(f);
    char page[4400];
    snprintf(page, sizeof page, "%sprocess_start_time_seconds %.3f\n", body, start_s);
    free(body);
    struct scrape_point p;
    uint64_t t = (uint64_t)(t_s * 1e9);
    assert_int_equal(scrape_point_from_body(page, strlen(page), t, t + 10 * LL_NS_PER_MS, &p, NULL),
                     0);
    ASSERT_NEAR(p.process_start_s, start_s, 1e-6);
    assert_int_equal(scrape_series_add(s, &p), 0);
}

static void test_counter_restart_climbed(void **state)
{
    (void)state;
    struct scrape_series s;
    scrape_series_init(&s);
    /* gen 100 -> 200; the server restarts and reaches 250 by the next
     * scrape (> 200: no drop), then 300. The increase is 100 + 250 + 50
     * = 400 with one reset; read as plain rises it would be 200. The
     * same for requests (10 -> 20, restart, 25 -> 30: 10 + 25 + 5) and
     * the TTFT histogram (4 -> 6 observations, restart, 7 -> 8: 2 + 7 + 1). */
    struct fake f = {.gen = 100, .success = 10, .ttft = {4}};
    add_started(&s, 1, &f, 1700000000.25);
    f.gen = 200, f.success = 20, f.ttft[0] = 6;
    add_started(&s, 2, &f, 1700000000.25);
    f.gen = 250, f.success = 25, f.ttft[0] = 7;
    add_started(&s, 3, &f, 1700000002.5);
    f.gen = 300, f.success = 30, f.ttft[0] = 8;
    add_started(&s, 4, &f, 1700000002.5);
    struct scrape_join j;
    assert_int_equal(scrape_series_join(&s, 0, 5 * S, SCRAPE_SPAN_OUTER, &j), 0);
    ASSERT_NEAR(j.generation_tokens.delta, 400, 0);
    assert_int_equal(j.generation_tokens.resets, 1);
    ASSERT_NEAR(j.request_success.delta, 40, 0);
    assert_int_equal(j.request_success.resets, 1);
    ASSERT_NEAR(j.ttft_count, 10, 0);
    assert_int_equal(j.restarts, 1);
    assert_true(j.restart_from_abs_ns == 2 * S + 5 * LL_NS_PER_MS);
    assert_true(j.restart_to_abs_ns == 3 * S + 5 * LL_NS_PER_MS);

    /* Said on the terminal and in summary.json, with why the figure is a
     * lower bound. */
    struct scrape_source src = {"http://127.0.0.1:1/metrics", 4, 0, 0};
    char *text = NULL;
    size_t len = 0;
    FILE *mf = open_memstream(&text, &len);
    scrape_join_print_source(mf, &j, 0, NULL, &src);
    fclose(mf);
    assert_non_null(strstr(text, "server restarted between scrapes at +2.0 s and +3.0 s"));
    assert_non_null(strstr(text, "(1 counter reset: a lower bound)"));
    assert_non_null(strstr(text, SCRAPE_LOWER_BOUND_NOTE));
    free(text);
    json_t *o = scrape_join_json_source(&j, 0, NULL, &src);
    assert_int_equal(json_integer_value(json_object_get(o, "restarts")), 1);
    assert_true(
        json_is_true(json_object_get(json_object_get(o, "generation_tokens"), "lower_bound")));
    /* Every counter of the source was reset there, one that stood still too. */
    assert_true(json_is_true(json_object_get(json_object_get(o, "prompt_tokens"), "lower_bound")));
    ASSERT_NEAR(json_number_value(json_array_get(json_object_get(o, "restart_between_s"), 0)),
                2.005, 1e-9);
    assert_string_equal(json_string_value(json_object_get(o, "lower_bound_note")),
                        SCRAPE_LOWER_BOUND_NOTE);
    json_decref(o);
    scrape_series_reset(&s);

    /* The same start time throughout (or none): plain rises, no restart. */
    scrape_series_init(&s);
    f.gen = 100;
    add_started(&s, 1, &f, 1700000000.25);
    f.gen = 250;
    add_started(&s, 2, &f, 1700000000.25);
    f.gen = 300;
    add_fake(&s, 3, &f);
    assert_int_equal(scrape_series_join(&s, 0, 4 * S, SCRAPE_SPAN_OUTER, &j), 0);
    ASSERT_NEAR(j.generation_tokens.delta, 200, 0);
    assert_int_equal(j.generation_tokens.resets, 0);
    assert_int_equal(j.restarts, 0);
    o = scrape_join_json_source(&j, 0, NULL, &src);
    assert_null(json_object_get(o, "lower_bound_note"));
    assert_true(
        json_is_false(json_object_get(json_object_get(o, "generation_tokens"), "lower_bound")));
    json_decref(o);
    scrape_series_reset(&s);
}

/* Two models on one server: the run's model's counters alone; without a
 * model, or a model no series names, every model's summed (and the
 * terminal says so). */
static void test_counter_two_models(void **state)
{
    (void)state;
    struct scrape_series s;
    add_two_pages(&s,
                  "vllm:generation_tokens_total{model_name=\"A\"} 100\n"
                  "vllm:generation_tokens_total{model_name=\"B\"} 5000\n",
                  "vllm:generation_tokens_total{model_name=\"A\"} 400\n"
                  "vllm:generation_tokens_total{model_name=\"B\"} 9000\n");
    struct scrape_join j;
    scrape_series_set_model(&s, "A");
    assert_int_equal(scrape_series_join(&s, 0, 3 * S, SCRAPE_SPAN_OUTER, &j), 0);
    ASSERT_NEAR(j.generation_tokens.delta, 300, 0);
    assert_true(j.model_named && j.model_matched);
    assert_string_equal(j.model, "A");
    json_t *o = scrape_join_json_source(&j, 0, NULL, &(struct scrape_source){"u", 2, 0, 0});
    assert_string_equal(json_string_value(json_object_get(o, "model")), "A");
    assert_true(json_is_true(json_object_get(o, "model_matched")));
    json_decref(o);

    scrape_series_set_model(&s, "C");
    assert_int_equal(scrape_series_join(&s, 0, 3 * S, SCRAPE_SPAN_OUTER, &j), 0);
    ASSERT_NEAR(j.generation_tokens.delta, 4300, 0);
    assert_true(j.model_named && !j.model_matched);
    char *text = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&text, &len);
    assert_non_null(f);
    scrape_join_print_source(f, &j, 0, NULL, &(struct scrape_source){"u", 2, 0, 0});
    fclose(f);
    assert_non_null(strstr(text, "no counter series of model \"C\": every model's on the server "
                                 "summed"));
    free(text);

    scrape_series_set_model(&s, NULL);
    assert_int_equal(scrape_series_join(&s, 0, 3 * S, SCRAPE_SPAN_OUTER, &j), 0);
    ASSERT_NEAR(j.generation_tokens.delta, 4300, 0);
    scrape_series_reset(&s);
}

/* Triton's request counter has one series per model of an ensemble, each
 * counting the same 10 requests: the run's model's, else the ensemble's,
 * never their sum (40). */
static void test_triton_ensemble(void **state)
{
    (void)state;
    static const char *const models[4] = {"ensemble", "preprocessing", "tensorrt_llm",
                                          "postprocessing"};
    char pages[2][1024];
    for (int k = 0; k < 2; k++) {
        size_t off = 0;
        for (int i = 0; i < 4; i++)
            off += (size_t)snprintf(pages[k] + off, sizeof pages[k] - off,
                                    "nv_inference_request_success{model=\"%s\",version=\"1\"} "
                                    "%d\n",
                                    models[i], 5 + 10 * k);
        assert_true(off < sizeof pages[k]);
    }
    struct scrape_series s;
    add_two_pages(&s, pages[0], pages[1]);
    assert_int_equal(s.pts[0].engine, ENGINE_TRITON);
    struct scrape_join j;
    assert_int_equal(scrape_series_join(&s, 0, 3 * S, SCRAPE_SPAN_OUTER, &j), 0);
    ASSERT_NEAR(j.request_success.delta, 10, 0);
    assert_true(j.model_default);
    scrape_series_set_model(&s, "tensorrt_llm");
    assert_int_equal(scrape_series_join(&s, 0, 3 * S, SCRAPE_SPAN_OUTER, &j), 0);
    ASSERT_NEAR(j.request_success.delta, 10, 0);
    assert_true(j.model_matched && !j.model_default);
    scrape_series_reset(&s);
}

/* SGLang and TGI make a counter's samples, and the TTFT histogram's, on
 * first use: a baseline scrape of an idle server lacks them. They count
 * from 0 there; a label set that appears later (a new finish reason)
 * too. A baseline of another engine (or a failed one) does not stand
 * for 0. */
static void test_counter_absent_at_baseline(void **state)
{
    (void)state;
    struct scrape_series s;
    add_two_pages(&s, "sglang:num_running_reqs 0\n",
                  "sglang:num_running_reqs 3\n"
                  "sglang:generation_tokens_total 640\n"
                  "sglang:time_to_first_token_seconds_bucket{le=\"0.5\"} 3\n"
                  "sglang:time_to_first_token_seconds_bucket{le=\"+Inf\"} 4\n"
                  "sglang:time_to_first_token_seconds_sum 1.5\n"
                  "sglang:time_to_first_token_seconds_count 4\n");
    struct scrape_join j;
    assert_int_equal(scrape_series_join(&s, 0, 3 * S, SCRAPE_SPAN_OUTER, &j), 0);
    assert_true(j.generation_tokens.present);
    ASSERT_NEAR(j.generation_tokens.delta, 640, 0);
    assert_int_equal(j.generation_tokens.resets, 0);
    assert_true(j.ttft_present);
    ASSERT_NEAR(j.ttft_count, 4, 0);
    assert_false(j.prompt_tokens.present); /* absent at both ends */
    scrape_series_reset(&s);

    /* A finish reason that appears in the span counts from 0. */
    add_two_pages(&s, "vllm:request_success_total{finished_reason=\"stop\"} 7\n",
                  "vllm:request_success_total{finished_reason=\"stop\"} 9\n"
                  "vllm:request_success_total{finished_reason=\"length\"} 3\n");
    assert_int_equal(scrape_series_join(&s, 0, 3 * S, SCRAPE_SPAN_OUTER, &j), 0);
    ASSERT_NEAR(j.request_success.delta, 5, 0);
    scrape_series_reset(&s);

    /* The baseline is another engine's page: not a 0. */
    add_two_pages(&s, "vllm:num_requests_running 0\n", "sglang:generation_tokens_total 640\n");
    assert_int_equal(scrape_series_join(&s, 0, 3 * S, SCRAPE_SPAN_OUTER, &j), 0);
    assert_false(j.generation_tokens.present);
    scrape_series_reset(&s);
}

/* The client's prompt tokens beside the server's counter: all of them for
 * an engine whose counter counts cached tokens, less the cached ones for
 * llama.cpp, whose counter leaves them out. */
static void test_client_prompt_like_for_like(void **state)
{
    struct scrape_join j;
    memset(&j, 0, sizeof j);
    struct scrape_client c = {NAN, NAN, 300, 11595, 1330, 40, 0, 0};
    int less;
    for (int k = ENGINE_UNKNOWN; k < ENGINE_KIND_COUNT; k++) {
        j.engine = (enum engine_kind)k;
        double v = scrape_client_prompt(&j, &c, &less);
        assert_int_equal(less, k == ENGINE_LLAMACPP);
        assert_true(v == (k == ENGINE_LLAMACPP ? 10265.0 : 11595.0));
    }
    c.cached_tokens = NAN; /* no usage said: nothing to take off */
    assert_true(scrape_client_prompt(&j, &c, &less) == 11595.0);
    c.prompt_tokens = NAN;
    assert_true(isnan(scrape_client_prompt(&j, &c, &less)));
    assert_true(isnan(scrape_client_prompt(&j, NULL, &less)));
    assert_int_equal(less, 0);
}

static void test_default_url(void **state)
{
    char buf[64];
    assert_int_equal(scrape_default_url("http://127.0.0.1:8000/v1", buf, sizeof buf), 0);
    assert_string_equal(buf, "http://127.0.0.1:8000/metrics");
    assert_int_equal(scrape_default_url("http://h:1/v1//", buf, sizeof buf), 0);
    assert_string_equal(buf, "http://h:1/metrics");
    assert_int_equal(scrape_default_url("http://h:1", buf, sizeof buf), 0);
    assert_string_equal(buf, "http://h:1/metrics");
    assert_int_equal(scrape_default_url("http://h:1/api/", buf, sizeof buf), 0);
    assert_string_equal(buf, "http://h:1/api/metrics");
    assert_int_equal(scrape_default_url("http://h:1/v1", buf, 18), LL_E_RANGE);
    assert_string_equal(buf, "");
    assert_int_equal(scrape_default_url("http://h:1/v1", buf, 19), 0);
}

/* A port on 127.0.0.1 that refuses connections: bound, never listened. */
static int closed_port(int *fd_out)
{
    int fd = socket(AF_INET, SOCK_STREAM, 0);
    assert_true(fd >= 0);
    struct sockaddr_in a = {.sin_family = AF_INET, .sin_port = 0};
    a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    assert_int_equal(bind(fd, (struct sockaddr *)&a, sizeof a), 0);
    socklen_t len = sizeof a;
    assert_int_equal(getsockname(fd, (struct sockaddr *)&a, &len), 0);
    *fd_out = fd;
    return ntohs(a.sin_port);
}

/* A /metrics that accepts and never answers (a listening socket nobody
 * accepts from: the kernel completes the handshake): each scrape times
 * out at 80% of the 200 ms interval, and the reason (the warning's) says
 * what it took and a concrete --metrics-interval whose timeout is twice
 * that: 2 x 0.16 s / 0.8 = 0.4 s. */
static void test_scraper_slow_hint(void **state)
{
    (void)state;
    int hold;
    int port = closed_port(&hold);
    assert_int_equal(listen(hold, 4), 0);
    char url[64], err[512];
    snprintf(url, sizeof url, "http://127.0.0.1:%d/metrics", port);
    struct scrape_config cfg = {
        .url = url, .interval_ns = 200 * LL_NS_PER_MS, .out_fd = -1, .quiet = 1};
    struct scraper *s = scraper_new(&cfg, err, sizeof err);
    assert_non_null(s);
    assert_int_equal(scraper_probe(s, err, sizeof err), LL_E_IO);
    /* libcurl gives up a little past 160 ms: 0.4 s, or 0.5 s when it
     * took more than 160 ms by the rounding up. */
    const char *hint = strstr(err, "(the scrape took 0.1");
    assert_non_null(hint);
    assert_non_null(strstr(hint, "its timeout 0.16 s: try --metrics-interval 0."));
    double iv = strtod(strstr(hint, "interval ") + 9, NULL);
    assert_true(iv >= 0.4 - 1e-9 && iv <= 0.5 + 1e-9);
    assert_non_null(strstr(hint, "s, each scrape then gets 0."));
    scraper_free(s);
    close(hold);

    /* The rule alone: under the timeout, nothing; a connection that
     * timed out, nothing; past the 2 s cap, the interval that gives it,
     * or that none helps. */
    snprintf(err, sizeof err, "x");
    scrape_slow_hint("scrape", 100 * LL_NS_PER_MS, 160 * LL_NS_PER_MS, 2 * S, err, sizeof err);
    assert_string_equal(err, "x");
    snprintf(err, sizeof err, "Connection timed out after 160 milliseconds");
    scrape_slow_hint("scrape", 160 * LL_NS_PER_MS, 160 * LL_NS_PER_MS, 2 * S, err, sizeof err);
    assert_string_equal(err, "Connection timed out after 160 milliseconds");
    snprintf(err, sizeof err, "x");
    scrape_slow_hint("query", 1600 * LL_NS_PER_MS, 1600 * LL_NS_PER_MS, 2 * S, err, sizeof err);
    assert_string_equal(err, "x (the query took 1.60 s, its timeout 1.60 s: try "
                             "--metrics-interval 2.5s, each query then gets 2.00 s, the most "
                             "any gets)");
    snprintf(err, sizeof err, "x");
    scrape_slow_hint("scrape", 2 * S, 2 * S, 2 * S, err, sizeof err);
    assert_string_equal(err, "x (the scrape took 2.00 s, the most any scrape gets whatever "
                             "--metrics-interval: this endpoint is too slow for it)");
}

static void test_scraper_closed_port(void **state)
{
    int hold;
    int port = closed_port(&hold);
    char url[64], path[] = "/tmp/test_scrape_XXXXXX";
    snprintf(url, sizeof url, "http://127.0.0.1:%d/metrics", port);
    int fd = mkstemp(path);
    assert_true(fd >= 0);
    char err[256];
    struct scrape_config cfg = {.url = url, .interval_ns = 100 * LL_NS_PER_MS, .out_fd = fd,
                                .quiet = 1};

    /* Bad configs are refused with a reason. */
    struct scrape_config bad = cfg;
    bad.interval_ns = 99 * LL_NS_PER_MS;
    assert_null(scraper_new(&bad, err, sizeof err));
    bad = cfg;
    bad.timeout_ns = cfg.interval_ns;
    assert_null(scraper_new(&bad, err, sizeof err));

    struct scraper *s = scraper_new(&cfg, err, sizeof err);
    assert_non_null(s);
    assert_int_equal(scraper_probe(s, err, sizeof err), LL_E_IO);
    uint64_t n = 0, failed = 0;
    scraper_counts(s, &n, &failed);
    assert_int_equal(n, 1);
    assert_int_equal(failed, 1);
    uint64_t origin = ll_now_ns();
    assert_int_equal(scraper_start(s, origin, err, sizeof err), 0);
    assert_int_equal(scraper_origin_ns(s), origin);
    usleep(250 * 1000);
    scraper_stop(s);
    scraper_counts(s, &n, &failed);
    assert_true(n >= 3); /* the probe, at least one from the thread, the last */
    assert_int_equal(failed, n);
    struct scrape_join j;
    assert_int_equal(scrape_join(s, 0, UINT64_MAX, SCRAPE_SPAN_OUTER, &j), LL_E_NOTFOUND);
    assert_int_equal(j.failed, n);

    /* `run`'s summary of a join from an engine without a KV gauge (TGI):
     * the gauge is named, "not exported by this engine", not left out. */
    struct scrape_join tj;
    memset(&tj, 0, sizeof tj);
    tj.engine = ENGINE_TGI;
    tj.scrapes = tj.ok = 3;
    tj.waiting = (struct scrape_gauge){.present = 1, .n = 3, .mean = 1, .max = 2};
    char *txt = NULL;
    size_t txt_len = 0;
    FILE *mf = open_memstream(&txt, &txt_len);
    scrape_join_print(mf, &tj, 0, NULL, s);
    fclose(mf);
    assert_non_null(strstr(txt, "  KV-cache usage       not exported by this engine\n"));
    assert_non_null(strstr(txt, "  queue depth          mean 1.00  max 2.00\n"));
    free(txt);

    /* No ok scrape inside the window (a run that sent nothing ends before
     * the next scrape): no gauge is known, and that is not the engine's
     * doing, so the lines say so rather than "not exported". */
    struct scrape_join nj;
    memset(&nj, 0, sizeof nj);
    nj.engine = ENGINE_VLLM;
    txt = NULL;
    mf = open_memstream(&txt, &txt_len);
    scrape_join_print(mf, &nj, 0, NULL, s);
    fclose(mf);
    assert_non_null(strstr(txt, "  queue depth          no ok scrape inside the window\n"));
    assert_non_null(strstr(txt, "  KV-cache usage       no ok scrape inside the window\n"));
    assert_null(strstr(txt, "not exported"));
    free(txt);

    /* A counter that never moved while the client counted some (llama.cpp
     * counts no prompt tokens of embeddings): said so, not "server/client
     * 0.000"; one that moved keeps its ratio. */
    nj.prompt_tokens = (struct scrape_counter){.present = 1, .delta = 0};
    nj.generation_tokens = (struct scrape_counter){.present = 1, .delta = 90};
    struct scrape_client cl = {.prompt_tokens = 5000, .output_tokens = 100, .cached_tokens = NAN};
    txt = NULL;
    mf = open_memstream(&txt, &txt_len);
    scrape_join_print(mf, &nj, 0, &cl, s);
    fclose(mf);
    assert_non_null(strstr(txt, "  prompt tokens        server 0, client sent 5000 (the server's "
                                "counter did not move: it may not count these)\n"));
    assert_non_null(strstr(txt, "  generation tokens    server 90, client received 100 "
                                "(server/client 0.900)\n"));
    assert_null(strstr(txt, "0.000"));
    assert_null(strstr(txt, "not ok, begun"));
    free(txt);

    /* Requests cancelled after their first token (llama-server: 13 of 23,
     * 10 tokens each): the ratios are off by their prompts and tokens, and
     * a line under the counters says whose count holds them. None begun
     * (a 400 before the prompt was taken): no line. */
    nj.engine = ENGINE_LLAMACPP;
    nj.prompt_tokens = (struct scrape_counter){.present = 1, .delta = 1712};
    nj.generation_tokens = (struct scrape_counter){.present = 1, .delta = 3000};
    struct scrape_client cc = {NAN, NAN, 3130, 857, 135, 10, 13, 130};
    struct scrape_source src = {"http://127.0.0.1:1/metrics", 9, 0, 0};
    txt = NULL;
    mf = open_memstream(&txt, &txt_len);
    scrape_join_print_source(mf, &nj, 0, &cc, &src);
    fclose(mf);
    assert_non_null(strstr(txt, "  prompt tokens (less cached) server 1712, client sent less "
                                "cached 722 (server/client 2.371)\n"
                                "  generation tokens    server 3000, client received 3130 "
                                "(server/client 0.958)\n"
                                "  not ok, begun        13 requests, cancelled or cut short after "
                                "their first token: their\n"
                                "                       prompts are in the server's prompt count, "
                                "not the client's (ok requests'\n"
                                "                       usage); the 130 tokens they received are "
                                "in the client's generation count,\n"
                                "                       not in an engine's that counts output as a "
                                "request finishes (llama.cpp)\n"));
    for (const char *p = txt; *p; p += strcspn(p, "\n") + (p[strcspn(p, "\n")] != 0))
        assert_true(strcspn(p, "\n") < 100);
    free(txt);
    json_t *jo = scrape_join_json_source(&nj, 0, &cc, &src);
    assert_int_equal(json_integer_value(json_object_get(json_object_get(jo, "prompt_tokens"),
                                                        "client_not_ok_begun")),
                     13);
    assert_int_equal(json_integer_value(json_object_get(json_object_get(jo, "generation_tokens"),
                                                        "client_not_ok_tokens")),
                     130);
    json_decref(jo);
    cc.failed_started = 0;
    jo = scrape_join_json_source(&nj, 0, &cc, &src);
    assert_null(json_object_get(json_object_get(jo, "prompt_tokens"), "client_not_ok_begun"));
    assert_null(json_object_get(json_object_get(jo, "generation_tokens"), "client_not_ok_tokens"));
    json_decref(jo);
    txt = NULL;
    mf = open_memstream(&txt, &txt_len);
    scrape_join_print_source(mf, &nj, 0, &cc, &src);
    fclose(mf);
    assert_null(strstr(txt, "not ok, begun"));
    free(txt);
    scraper_free(s);

    /* One line per scrape, each failed, t_ns relative to the origin. */
    FILE *f = fdopen(fd, "r");
    assert_non_null(f);
    rewind(f);
    char line[4096];
    uint64_t lines = 0;
    while (fgets(line, sizeof line, f)) {
        json_error_t je;
        json_t *o = json_loads(line, 0, &je);
        assert_non_null(o);
        assert_true(json_is_false(json_object_get(o, "ok")));
        assert_non_null(json_string_value(json_object_get(o, "error")));
        json_int_t mono = json_integer_value(json_object_get(o, "mono_ns"));
        json_int_t t = json_integer_value(json_object_get(o, "t_ns"));
        assert_int_equal(t, mono - (json_int_t)origin);
        if (lines == 0)
            assert_true(t < 0); /* the probe came before the origin */
        json_decref(o);
        lines++;
    }
    assert_int_equal(lines, n);
    fclose(f);
    unlink(path);
    close(hold);
    scraper_free(NULL);
}

/* GET path from 127.0.0.1:port; returns the whole response (caller frees). */
static char *http_get(int port, const char *path)
{
    int fd = socket(AF_INET, SOCK_STREAM, 0);
    assert_true(fd >= 0);
    struct sockaddr_in a = {.sin_family = AF_INET, .sin_port = htons((uint16_t)port)};
    a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    assert_int_equal(connect(fd, (struct sockaddr *)&a, sizeof a), 0);
    char req[256];
    int n = snprintf(req, sizeof req, "GET %s HTTP/1.1\r\nHost: x\r\n\r\n", path);
    assert_int_equal(write(fd, req, (size_t)n), n);
    size_t cap = 1 << 16, len = 0;
    char *buf = ll_malloc(cap);
    for (;;) {
        assert_true(len < cap - 1);
        ssize_t r = read(fd, buf + len, cap - 1 - len);
        assert_true(r >= 0);
        if (r == 0)
            break;
        len += (size_t)r;
    }
    buf[len] = '\0';
    close(fd);
    return buf;
}

static double page_value(const struct prom_scrape *ps, const char *name, const char *lname,
                         const char *lvalue)
{
    struct prom_label m = {.name = lname, .value = lvalue, .value_len = lvalue ? strlen(lvalue) : 0};
    size_t pos = 0;
    if (prom_scrape_find(ps, name, &m, lname ? 1 : 0, &pos) != 0)
        fail_msg("no sample %s{%s=%s}", name, lname ? lname : "", lvalue ? lvalue : "");
    return ps->samples[pos].value;
}

/* --expose: the page before any update, after two updates (values worked
 * out from the synthetic live views), and the HTTP edges. */
static void test_expose_page(void **state)
{
    char err[256];
    assert_null(expose_new("127.0.0.1", 5, err, sizeof err));
    assert_null(expose_new("localhost:0", 5, err, sizeof err)); /* numeric only */
    assert_null(expose_new("127.0.0.1:70000", 5, err, sizeof err));
    struct exposer *e = expose_new("127.0.0.1:0", 5, err, sizeof err);
    assert_non_null(e);
    int port = expose_port(e);
    assert_true(port > 0);

    char *resp = http_get(port, "/metrics");
    assert_non_null(strstr(resp, "HTTP/1.1 200 OK\r\n"));
    assert_non_null(strstr(resp, "llmload_requests_sent_total 0\n"));
    free(resp);

    /* Update 1 at t = 1 s: 10 sent, TTFTs 100..109 ms. Update 2 at t = 3 s:
     * 50 sent, TTFTs 200 ms x 10. Achieved rate = (50 - 10) / 2 s = 20/s;
     * the window's TTFT median lies between the two groups' values
     * (rank 10 of 20 is the largest of the first group, 109 ms). */
    struct hist *t = hist_new(), *e2e = hist_new(), *late = hist_new();
    struct driver_live v;
    memset(&v, 0, sizeof v);
    for (int i = 0; i < 10; i++) {
        hist_record(t, (uint64_t)(100 + i) * LL_NS_PER_MS);
        hist_record(e2e, LL_NS_PER_SEC);
        hist_record(late, 1000);
    }
    v.t_ns = LL_NS_PER_SEC;
    v.scheduled = 12;
    v.sent = 10;
    v.done = 10;
    v.done_by_kind[REC_OK] = 9;
    v.done_by_kind[REC_HTTP_429] = 1;
    v.inflight = 2;
    v.output_tokens = 90;
    v.ttft = t;
    v.e2e = e2e;
    v.lateness = late;
    expose_update(e, &v);
    hist_reset(t);
    hist_reset(e2e);
    hist_reset(late);
    for (int i = 0; i < 10; i++)
        hist_record(t, 200 * LL_NS_PER_MS);
    v.t_ns = 3 * LL_NS_PER_SEC;
    v.scheduled = 55;
    v.sent = 50;
    v.final = 1;
    expose_update(e, &v);

    resp = http_get(port, "/metrics");
    char *body = strstr(resp, "\r\n\r\n");
    assert_non_null(body);
    body += 4;
    struct prom_scrape *ps = NULL;
    assert_int_equal(prom_scrape_parse(body, strlen(body), &ps), 0);
    assert_int_equal(ps->stats.bad_lines, 0);
    ASSERT_NEAR(page_value(ps, "llmload_requests_scheduled_total", NULL, NULL), 55, 0);
    ASSERT_NEAR(page_value(ps, "llmload_requests_sent_total", NULL, NULL), 50, 0);
    ASSERT_NEAR(page_value(ps, "llmload_requests_completed_total", "kind", "ok"), 9, 0);
    ASSERT_NEAR(page_value(ps, "llmload_requests_completed_total", "kind", "http_429"), 1, 0);
    ASSERT_NEAR(page_value(ps, "llmload_requests_in_flight", NULL, NULL), 2, 0);
    ASSERT_NEAR(page_value(ps, "llmload_output_tokens_total", NULL, NULL), 90, 0);
    ASSERT_NEAR(page_value(ps, "llmload_offered_rate", NULL, NULL), 5, 0);
    ASSERT_NEAR(page_value(ps, "llmload_achieved_rate", NULL, NULL), 20, 1e-9);
    ASSERT_REL(page_value(ps, "llmload_ttft_seconds", "quantile", "0.5"), 0.109, 1.0 / 256);
    ASSERT_REL(page_value(ps, "llmload_ttft_seconds", "quantile", "0.99"), 0.2, 1.0 / 256);
    ASSERT_NEAR(page_value(ps, "llmload_ttft_seconds_count", NULL, NULL), 20, 0);
    ASSERT_NEAR(page_value(ps, "llmload_ttft_seconds_sum", NULL, NULL), 1.045 + 2.0, 1e-9);
    ASSERT_NEAR(page_value(ps, "llmload_e2e_seconds_count", NULL, NULL), 10, 0);
    ASSERT_REL(page_value(ps, "llmload_e2e_seconds", "quantile", "0.5"), 1.0, 1.0 / 256);
    ASSERT_NEAR(page_value(ps, "llmload_schedule_lateness_seconds_sum", NULL, NULL), 1e-5, 1e-12);
    ASSERT_NEAR(page_value(ps, "llmload_run_elapsed_seconds", NULL, NULL), 3, 0);
    ASSERT_NEAR(page_value(ps, "llmload_run_finished", NULL, NULL), 1, 0);
    prom_scrape_free(ps);
    free(resp);

    resp = http_get(port, "/other");
    assert_non_null(strstr(resp, "HTTP/1.1 404"));
    free(resp);
    hist_free(t);
    hist_free(e2e);
    hist_free(late);
    expose_free(e);
    expose_free(NULL);
}

/* A DCGM page of two GPUs at t_s seconds (10 ms long): each draws
 * power_w / 2 and has used energy_j / 2 (in mJ); with_energy 0 leaves the
 * counter out (an exporter without it). */
static void add_gpu(struct scrape_series *s, double t_s, double power_w, double energy_j,
                    int with_energy)
{
    char body[1024];
    size_t off = 0;
    for (int g = 0; g < 2; g++) {
        off += (size_t)snprintf(body + off, sizeof body - off,
                                "DCGM_FI_DEV_POWER_USAGE{gpu=\"%d\",UUID=\"GPU-%d\"} %g\n"
                                "DCGM_FI_DEV_GPU_UTIL{gpu=\"%d\",UUID=\"GPU-%d\"} %d\n",
                                g, g, power_w / 2, g, g, g == 0 ? 100 : 50);
        if (with_energy)
            off += (size_t)snprintf(body + off, sizeof body - off,
                                    "DCGM_FI_DEV_TOTAL_ENERGY_CONSUMPTION{gpu=\"%d\"} %.0f\n", g,
                                    energy_j / 2 * 1000);
    }
    assert_true(off < sizeof body);
    struct scrape_point p;
    uint64_t t = (uint64_t)(t_s * 1e9);
    assert_int_equal(
        scrape_point_from_body_as(ENGINE_DCGM, body, off, t, t + 10 * LL_NS_PER_MS, &p, NULL), 0);
    assert_true(p.ok);
    assert_int_equal(p.gpus, 2);
    assert_int_equal(scrape_series_add(s, &p), 0);
}

/* A DCGM page at t_s: for each GPU g < gpus its power (W) and, when g is
 * not skip_energy, its energy counter (J each, in mJ). */
static void add_gpus(struct scrape_series *s, double t_s, int gpus, double w, double j_each,
                     int skip_energy)
{
    char body[2048];
    size_t off = 0;
    for (int g = 0; g < gpus; g++) {
        off += (size_t)snprintf(body + off, sizeof body - off,
                                "DCGM_FI_DEV_POWER_USAGE{gpu=\"%d\"} %g\n", g, w);
        if (g != skip_energy)
            off += (size_t)snprintf(body + off, sizeof body - off,
                                    "DCGM_FI_DEV_TOTAL_ENERGY_CONSUMPTION{gpu=\"%d\"} %.0f\n", g,
                                    j_each * 1000);
    }
    struct scrape_point p;
    uint64_t t = (uint64_t)(t_s * 1e9);
    assert_int_equal(
        scrape_point_from_body_as(ENGINE_DCGM, body, off, t, t + 10 * LL_NS_PER_MS, &p, NULL), 0);
    assert_int_equal(scrape_series_add(s, &p), 0);
}

/* The series joined over 0.5 s to 1.5 s has no energy counter to trust,
 * so the energy figures come from the power series. */
static void assert_energy_from_power(const struct scrape_series *s)
{
    struct scrape_join j;
    assert_int_equal(
        scrape_series_join(s, (uint64_t)(0.5e9), (uint64_t)(1.5e9), SCRAPE_SPAN_OUTER, &j), 0);
    assert_false(j.gpu_energy.present);
    struct energy_figures e;
    energy_figures_compute(&j, 0, 100, 1, 2, NAN, &e);
    assert_string_equal(e.source, "power_integral");
}

/* Eight GPUs whose counters each grow 100 J a second. A scrape without
 * one GPU's counter is left out of the counter's sum (it read as a reset
 * that added 8 GPUs' whole counts, 35 MJ at 5 MJ each); a GPU gone from a
 * scrape altogether leaves the counter without a figure, and the energy
 * comes from the power series. */
static void test_gpu_energy_missing_gpu(void **state)
{
    struct scrape_series s;
    scrape_series_init(&s);
    add_gpus(&s, 0, 8, 100, 5e6, -1);
    add_gpus(&s, 1, 8, 100, 5e6 + 100, 3);
    add_gpus(&s, 2, 8, 100, 5e6 + 200, -1);
    struct scrape_join j;
    assert_int_equal(
        scrape_series_join(&s, (uint64_t)(0.5e9), (uint64_t)(1.5e9), SCRAPE_SPAN_OUTER, &j), 0);
    assert_true(j.gpu_energy.present);
    ASSERT_NEAR(j.gpu_energy.delta, 8 * 200, 1e-6);
    assert_int_equal(j.gpu_energy.resets, 0);
    scrape_series_reset(&s);

    add_gpus(&s, 0, 8, 100, 5e6, -1);
    add_gpus(&s, 1, 7, 100, 5e6 + 100, -1);
    add_gpus(&s, 2, 8, 100, 5e6 + 200, -1);
    assert_energy_from_power(&s);
    scrape_series_reset(&s);
}

/* Two GPUs, one of whose energy counters restarts: the sum falls from
 * 2000 J to 1150 J, and taking the new sum as the increase counted the
 * other GPU's whole 1100 J. The counter says nothing; the energy comes
 * from the power series. One GPU's restart still reads as a reset. */
static void test_gpu_energy_one_gpu_reset(void **state)
{
    struct scrape_series s;
    scrape_series_init(&s);
    add_gpus(&s, 0, 2, 100, 1000, -1);
    const char body[] = "DCGM_FI_DEV_POWER_USAGE{gpu=\"0\"} 100\n"
                        "DCGM_FI_DEV_TOTAL_ENERGY_CONSUMPTION{gpu=\"0\"} 1100000\n"
                        "DCGM_FI_DEV_POWER_USAGE{gpu=\"1\"} 100\n"
                        "DCGM_FI_DEV_TOTAL_ENERGY_CONSUMPTION{gpu=\"1\"} 50000\n";
    struct scrape_point p;
    assert_int_equal(scrape_point_from_body_as(ENGINE_DCGM, body, sizeof body - 1, LL_NS_PER_SEC,
                                               LL_NS_PER_SEC + 10 * LL_NS_PER_MS, &p, NULL),
                     0);
    assert_int_equal(scrape_series_add(&s, &p), 0);
    add_gpus(&s, 2, 2, 100, 1200, -1);
    assert_energy_from_power(&s);
    scrape_series_reset(&s);

    add_gpus(&s, 0, 1, 100, 1000, -1);
    add_gpus(&s, 1, 1, 100, 50, -1);
    add_gpus(&s, 2, 1, 100, 150, -1);
    struct scrape_join j;
    assert_int_equal(
        scrape_series_join(&s, (uint64_t)(0.5e9), (uint64_t)(1.5e9), SCRAPE_SPAN_OUTER, &j), 0);
    assert_true(j.gpu_energy.present);
    ASSERT_NEAR(j.gpu_energy.delta, 150, 1e-6);
    assert_int_equal(j.gpu_energy.resets, 1);
    scrape_series_reset(&s);
}

/* Energy from the counter where there is one (its increase over the
 * outer span), else the power integrated by trapezoids, the failed scrape
 * in the middle bridged and counted; and the per-token figures. */
static void test_gpu_energy(void **state)
{
    struct scrape_series s;
    scrape_series_init(&s);
    /* 100 W, then 300 W for 2 s, then 100 W; the counter agrees. */
    add_gpu(&s, 0, 100, 1000, 1);
    add_gpu(&s, 1, 300, 1200, 1);
    add_failed(&s, 2);
    add_gpu(&s, 3, 300, 1800, 1);
    add_gpu(&s, 4, 100, 2000, 1);
    struct scrape_join j;
    assert_int_equal(
        scrape_series_join(&s, (uint64_t)(0.5e9), (uint64_t)(3.5e9), SCRAPE_SPAN_OUTER, &j), 0);
    assert_int_equal(j.gpus, 2);
    assert_true(j.gpu_energy.present);
    ASSERT_NEAR(j.gpu_energy.delta, 1000, 1e-9);
    assert_true(j.power_integral_present);
    /* (100+300)/2 + (300+300)/2 * 2 + (300+100)/2 = 1000 J over 4 s. */
    ASSERT_NEAR(j.power_integral_j, 1000, 1e-6);
    ASSERT_NEAR(j.power_s, 4, 1e-9);
    assert_int_equal(j.power_gaps, 1);
    ASSERT_NEAR(j.gpu_power.max, 300, 0);
    ASSERT_NEAR(j.gpu_util.mean, 75, 0); /* the mean over the two GPUs */

    struct energy_figures e;
    energy_figures_compute(&j, 0, 500, 20, 3, 7.2, &e);
    assert_true(e.present);
    assert_string_equal(e.source, "energy_counter");
    ASSERT_NEAR(e.j_per_output_token, 2, 1e-12);
    ASSERT_NEAR(e.j_per_request, 50, 1e-12);
    ASSERT_NEAR(e.output_tokens_per_j, 0.5, 1e-12);
    ASSERT_NEAR(e.mean_power_w, 250, 1e-9);
    /* 7.2 per hour over 3 s is 0.006, for 500 tokens: 12 per million. */
    ASSERT_NEAR(e.cost_per_m_output_tokens, 12, 1e-9);
    scrape_series_reset(&s);

    /* Two exporters with the same figures: twice the energy and GPUs,
     * the same utilisation; with one missing, no figure at all. */
    struct energy_figures parts[2] = {e, e}, sum;
    energy_figures_combine(parts, 2, &sum);
    assert_true(sum.present);
    ASSERT_NEAR(sum.energy_j, 2000, 1e-9);
    assert_int_equal(sum.gpus, 4);
    ASSERT_NEAR(sum.j_per_output_token, 4, 1e-12);
    ASSERT_NEAR(sum.mean_power_w, 500, 1e-9);
    ASSERT_NEAR(sum.util_mean_pct, 75, 1e-12);
    /* One exporter whose span missed part of the window: the sum's
     * energy is not the window's either, so its per-token figures are
     * withheld, the cost (no energy in it) stands, and the coverage is
     * the shorter one. */
    parts[1].partial = 1;
    parts[1].covered_s = 1.5;
    energy_figures_combine(parts, 2, &sum);
    assert_true(sum.present);
    assert_true(sum.partial);
    ASSERT_NEAR(sum.covered_s, 1.5, 1e-12);
    assert_true(isnan(sum.j_per_output_token));
    assert_true(isnan(sum.j_per_request));
    assert_true(isfinite(sum.cost_per_m_output_tokens));
    parts[1] = e;
    parts[1].present = 0;
    energy_figures_combine(parts, 2, &sum);
    assert_false(sum.present);
    assert_int_equal(sum.missing, 1);

    /* Without the counter: the power series, and its gap, say it. */
    add_gpu(&s, 0, 100, 0, 0);
    add_failed(&s, 1);
    add_gpu(&s, 2, 300, 0, 0);
    assert_int_equal(
        scrape_series_join(&s, (uint64_t)(0.5e9), (uint64_t)(1.5e9), SCRAPE_SPAN_OUTER, &j), 0);
    energy_figures_compute(&j, 0, 400, 0, 1, NAN, &e);
    assert_true(e.present);
    assert_string_equal(e.source, "power_integral");
    ASSERT_NEAR(e.energy_j, 400, 1e-6);
    assert_int_equal(e.gaps, 1);
    ASSERT_NEAR(e.j_per_output_token, 1, 1e-9);
    assert_true(isnan(e.j_per_request)); /* no request succeeded */
    assert_true(isnan(e.cost_per_m_output_tokens));
    scrape_series_reset(&s);

    /* No usable scrape: no figure, never a zero. */
    energy_figures_compute(&j, LL_E_NOTFOUND, 400, 4, 1, NAN, &e);
    assert_false(e.present);
}

/* A bursty power gauge read between its bursts: 2 GPUs, each scrape's
 * power 0 W (the sim with --gpu-idle-watts 0 between steps), while the
 * counter grows 100 J a second: the mean is 100 W, and the largest power
 * scraped, 0 W, is no max (before, "mean 100.0 W  max 0.0 W" and 0 in
 * summary.json): unknown, "-" and null; and the sum of two exporters with
 * one unknown is unknown. A scraped max at the mean (a steady 100 W) is
 * kept. */
static void test_gpu_max_power_below_mean(void **state)
{
    struct scrape_series s;
    scrape_series_init(&s);
    for (int t = 0; t < 4; t++)
        add_gpu(&s, t, 0, 100.0 * t, 1);
    struct scrape_join j;
    assert_int_equal(
        scrape_series_join(&s, (uint64_t)(0.5e9), (uint64_t)(2.5e9), SCRAPE_SPAN_OUTER, &j), 0);
    struct energy_figures e;
    energy_figures_compute(&j, 0, 300, 3, 2, NAN, &e);
    assert_true(e.present);
    assert_string_equal(e.source, "energy_counter");
    ASSERT_NEAR(e.mean_power_w, 100, 1e-9);
    assert_true(isnan(e.max_power_w));
    struct scrape_source src = {"http://127.0.0.1:1/metrics", 4, 0, 0};
    json_t *o = energy_json_sources(&e, &src, 1);
    assert_true(json_is_null(json_object_get(o, "max_power_w")));
    json_decref(o);
    struct test_mem m;
    test_mem_open(&m);
    energy_print_sources(m.f, &e, &src, 1);
    char *out = test_mem_close(&m);
    if (!strstr(out, "  power                mean 100.0 W  max -\n"))
        fail_msg("the power line: %s", out);
    free(out);
    scrape_series_reset(&s);

    struct energy_figures steady;
    for (int t = 0; t < 4; t++)
        add_gpu(&s, t, 100, 100.0 * t, 1);
    assert_int_equal(
        scrape_series_join(&s, (uint64_t)(0.5e9), (uint64_t)(2.5e9), SCRAPE_SPAN_OUTER, &j), 0);
    energy_figures_compute(&j, 0, 300, 3, 2, NAN, &steady);
    ASSERT_NEAR(steady.max_power_w, 100, 1e-9);
    struct energy_figures parts[2] = {steady, steady}, sum;
    energy_figures_combine(parts, 2, &sum);
    ASSERT_NEAR(sum.max_power_w, 200, 1e-9);
    parts[1] = e;
    energy_figures_combine(parts, 2, &sum);
    assert_true(sum.present);
    ASSERT_NEAR(sum.mean_power_w, 200, 1e-9);
    assert_true(isnan(sum.max_power_w));
    scrape_series_reset(&s);
}

int main(void)
{
    curl_global_init(CURL_GLOBAL_DEFAULT);
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_point_from_body),
        cmocka_unit_test(test_gauges),
        cmocka_unit_test(test_counter_spans),
        cmocka_unit_test(test_counter_reset_and_gaps),
        cmocka_unit_test(test_ttft_delta_quantiles),
        cmocka_unit_test(test_client_prompt_like_for_like),
        cmocka_unit_test(test_default_url),
        cmocka_unit_test(test_scraper_closed_port),
        cmocka_unit_test(test_counter_reset_per_series),
        cmocka_unit_test(test_counter_restart_climbed),
        cmocka_unit_test(test_scraper_slow_hint),
        cmocka_unit_test(test_counter_two_models),
        cmocka_unit_test(test_triton_ensemble),
        cmocka_unit_test(test_counter_absent_at_baseline),
        cmocka_unit_test(test_expose_page),
        cmocka_unit_test(test_gpu_energy),
        cmocka_unit_test(test_gpu_energy_missing_gpu),
        cmocka_unit_test(test_gpu_energy_one_gpu_reset),
        cmocka_unit_test(test_gpu_max_power_below_mean),
    };
    int rc = cmocka_run_group_tests(tests, NULL, NULL);
    curl_global_cleanup();
    return rc;
}
