/* Unit tests for prom.c: the Prometheus text parser, sample lookup, and
 * quantiles from histogram buckets against hand-computed values. */
#include "test.h"
#include "testutil.h"

#include <stdlib.h>
#include <string.h>

#include "metrics/prom.h"
#include "util/util.h"

static const char *label(const struct prom_sample *smp, const char *name)
{
    for (size_t i = 0; i < smp->n_labels; i++)
        if (strcmp(smp->labels[i].name, name) == 0)
            return smp->labels[i].value;
    return NULL;
}

/* tests/data/prom/name, parsed (it must parse): the scrape (caller frees
 * with prom_scrape_free), in *body the text it was read from (caller
 * frees, after the scrape) and in *len its length (len may be NULL). */
static struct prom_scrape *scrape_of(const char *name, char **body, size_t *len)
{
    size_t n;
    struct prom_scrape *s = NULL;
    *body = test_read_data("prom", name, &n);
    assert_int_equal(prom_scrape_parse(*body, n, &s), 0);
    if (len != NULL)
        *len = n;
    return s;
}

static void test_types_and_families(void **state)
{
    char *body;
    struct prom_scrape *s = scrape_of("openmetrics.txt", &body, NULL);
    assert_int_equal(s->stats.bad_lines, 0);
    assert_int_equal(s->stats.saw_eof, 1);
    assert_int_equal(s->n_samples, 16);    /* after_eof is not read */

    const struct prom_sample *b = &s->samples[0];
    assert_string_equal(b->name, "rpc_seconds_bucket");
    assert_string_equal(b->family, "rpc_seconds");
    assert_int_equal(b->type, PROM_HISTOGRAM);
    assert_int_equal(b->suffix, PROM_SUFFIX_BUCKET);
    assert_string_equal(label(b, "le"), "0.01");
    assert_true(b->value == 0.0);
    assert_int_equal(b->has_timestamp, 0);    /* exemplar ignored */
    assert_int_equal(b->line, 4);

    assert_int_equal(s->samples[2].has_timestamp, 1);
    assert_true(s->samples[2].timestamp_ms == 1520879607789LL);
    assert_int_equal(s->samples[4].suffix, PROM_SUFFIX_SUM);
    assert_int_equal(s->samples[5].suffix, PROM_SUFFIX_COUNT);
    assert_int_equal(s->samples[6].suffix, PROM_SUFFIX_CREATED);

    const struct prom_sample *c = &s->samples[7];
    assert_string_equal(c->name, "rpc_requests_total");
    assert_string_equal(c->family, "rpc_requests");
    assert_int_equal(c->type, PROM_COUNTER);
    assert_int_equal(c->suffix, PROM_SUFFIX_TOTAL);
    assert_true(c->value == 1027.0);
    assert_true(c->timestamp_ms == 1395066363000LL);
    assert_string_equal(label(c, "path"), "/a\"b\\c\nd");
    assert_true(isinf(s->samples[8].value) && s->samples[8].value > 0);

    assert_int_equal(s->samples[9].type, PROM_GAUGE);
    assert_true(isinf(s->samples[9].value) && s->samples[9].value < 0);
    assert_true(isnan(s->samples[10].value));

    const struct prom_sample *q = &s->samples[11];
    assert_int_equal(q->type, PROM_SUMMARY);
    assert_int_equal(q->suffix, PROM_SUFFIX_NONE);
    assert_string_equal(label(q, "quantile"), "0.5");
    assert_int_equal(s->samples[13].suffix, PROM_SUFFIX_SUM);
    assert_string_equal(s->samples[14].family, "lat");

    const struct prom_sample *u = &s->samples[15];
    assert_string_equal(u->name, "something_untyped");
    assert_string_equal(u->family, "something_untyped");
    assert_int_equal(u->type, PROM_UNTYPED);
    assert_true(u->timestamp_ms == -5);
    prom_scrape_free(s);
    free(body);
}

static void test_label_escapes(void **state)
{
    struct prom_scrape *s = test_prom_parse("a{x=\"q\\\"b\\\\c\\nd\",y=\"\", z = \"#{}=,\" ,} 1\n");
    assert_int_equal(s->stats.bad_lines, 0);
    assert_int_equal(s->n_samples, 1);
    const struct prom_sample *a = &s->samples[0];
    assert_int_equal(a->n_labels, 3);
    assert_string_equal(a->labels[0].name, "x");
    assert_string_equal(a->labels[0].value, "q\"b\\c\nd");
    assert_int_equal(a->labels[0].value_len, 7);
    assert_string_equal(a->labels[1].value, "");
    assert_int_equal(a->labels[1].value_len, 0);
    assert_string_equal(a->labels[2].value, "#{}=,");
    assert_true(a->value == 1.0);
    prom_scrape_free(s);

    /* An unknown escape, an unterminated value and a missing '=' are bad. */
    s = test_prom_parse("a{x=\"\\t\"} 1\nb{x=\"open} 1\nc{x\"v\"} 1\nd{} 2\n");
    assert_int_equal(s->stats.bad_lines, 3);
    assert_string_equal(s->stats.bad_reason[0], "bad escape in label value");
    assert_string_equal(s->stats.bad_reason[1], "unterminated label value");
    assert_string_equal(s->stats.bad_reason[2], "expected '=' after label name");
    assert_int_equal(s->n_samples, 1);
    assert_string_equal(s->samples[0].name, "d");
    assert_int_equal(s->samples[0].n_labels, 0);
    prom_scrape_free(s);
}

static void test_values(void **state)
{
    static const struct {
        const char *text;
        double want;
    } good[] = {
        {"1", 1.0}, {"-0.5", -0.5}, {".5", 0.5}, {"5.", 5.0},
        {"1e3", 1000.0}, {"+2.5E-1", 0.25}, {"8.128902e+06", 8128902.0},
        {"1e-400", 0.0},
    };
    for (size_t i = 0; i < LL_ARRAY_LEN(good); i++) {
        double v = -1;
        assert_int_equal(prom_parse_value(good[i].text, strlen(good[i].text), &v), 0);
        ASSERT_NEAR(v, good[i].want, 0.0);
    }
    static const char *infs[] = {"+Inf", "Inf", "inf", "+infinity", "INF"};
    for (size_t i = 0; i < LL_ARRAY_LEN(infs); i++) {
        double v = 0;
        assert_int_equal(prom_parse_value(infs[i], strlen(infs[i]), &v), 0);
        assert_true(isinf(v) && v > 0);
    }
    double v = 0;
    assert_int_equal(prom_parse_value("-Inf", 4, &v), 0);
    assert_true(isinf(v) && v < 0);
    assert_int_equal(prom_parse_value("NaN", 3, &v), 0);
    assert_true(isnan(v));
    static const char *bad[] = {"", "0x10", "1,5", "1e999", "abc", "1e",
                                "--1", ".", "nan(1)", "+NaN", "1 2"};
    for (size_t i = 0; i < LL_ARRAY_LEN(bad); i++)
        assert_int_equal(prom_parse_value(bad[i], strlen(bad[i]), &v),
                         LL_E_INVAL);
}

static void test_timestamps(void **state)
{
    /* The text format's integer milliseconds, and OpenMetrics' seconds
     * with a fraction or an exponent (as ms, rounded): neither refused. */
    struct prom_scrape *s = test_prom_parse("a 1 1700000000123\n"
                                            "b 2 -1000\n"
                                            "c 3 1.5\n"
                                            "d 4 99999999999999999999\n" /* beyond int64: bad */
                                            "e 5 12 extra\n"             /* junk after timestamp */
                                            "f 6\t\t 7 \t\n"
                                            "g 7 1700000000.123 # {a=\"b\"} 1\n"
                                            "h 8 1.7e9\n"
                                            "i 9 -0.0015\n"
                                            "j 10 1.5.5\n"  /* bad */
                                            "k 11 NaN\n"    /* bad */
                                            "l 12 1e300\n"  /* beyond int64 ms: bad */
                                            "m 13 0x10\n"); /* bad */
    assert_int_equal(s->n_samples, 7);
    assert_true(s->samples[0].timestamp_ms == 1700000000123LL);
    assert_true(s->samples[1].timestamp_ms == -1000);
    assert_string_equal(s->samples[2].name, "c");
    assert_int_equal(s->samples[2].has_timestamp, 1);
    assert_true(s->samples[2].timestamp_ms == 1500);
    assert_string_equal(s->samples[3].name, "f");
    assert_true(s->samples[3].value == 6.0);
    assert_true(s->samples[3].timestamp_ms == 7);
    assert_string_equal(s->samples[4].name, "g");
    assert_true(s->samples[4].value == 7.0);
    assert_true(s->samples[4].timestamp_ms == 1700000000123LL);
    assert_true(s->samples[5].timestamp_ms == 1700000000000LL);
    assert_true(s->samples[6].timestamp_ms == -2); /* -1.5 ms rounds away from 0 */
    assert_int_equal(s->stats.bad_lines, 6);
    assert_int_equal(s->stats.bad_line_no[0], 4);
    assert_int_equal(s->stats.bad_line_no[1], 5);
    assert_int_equal(s->stats.bad_line_no[2], 10);
    assert_string_equal(s->stats.bad_reason[0], "bad timestamp");
    assert_string_equal(s->stats.bad_reason[1], "junk after value");
    for (size_t i = 2; i < 6; i++)
        assert_string_equal(s->stats.bad_reason[i], "bad timestamp");
    prom_scrape_free(s);
}

static void test_bad_lines_counted(void **state)
{
    const char *body =
        "# HELP ok fine\n"           /* 1 */
        "ok 1\n"                     /* 2 */
        "9starts_with_digit 1\n"     /* 3 bad */
        "no_value\n"                 /* 4 bad */
        "# TYPE broken\n"            /* 5 bad */
        "# TYPE x frobnicator\n"     /* 6 bad */
        "x{a=\"1\"}\n"               /* 7 bad: no value */
        "x 1 2 3\n"                  /* 8 bad */
        "\n"                         /* 9 blank */
        "   \t\n"                    /* 10 blank */
        "y{a=\"1\"} bogus\n"         /* 11 bad */
        "z 3\n"                      /* 12 */
        "w-1 3\n"                    /* 13 bad */
        "v 1\n";                     /* 14 */
    struct prom_parse_stats st;
    struct prom_scrape *s = test_prom_parse(body);
    st = s->stats;
    assert_int_equal(st.lines, 14);
    assert_int_equal(st.samples, 3);
    assert_int_equal(s->n_samples, 3);
    assert_int_equal(st.bad_lines, 8);
    static const size_t want[PROM_BAD_LINES_KEPT] = {3, 4, 5, 6, 7, 8, 11, 13};
    for (size_t i = 0; i < PROM_BAD_LINES_KEPT; i++)
        assert_int_equal(st.bad_line_no[i], want[i]);
    assert_string_equal(st.bad_reason[0], "bad metric name");
    assert_string_equal(st.bad_reason[1], "missing value");
    assert_string_equal(st.bad_reason[2], "malformed TYPE line");
    assert_string_equal(st.bad_reason[3], "unknown TYPE");
    assert_string_equal(st.bad_reason[6], "bad value");
    assert_int_equal(s->samples[0].line, 2);
    assert_int_equal(s->samples[1].line, 12);
    assert_int_equal(s->samples[2].line, 14);
    prom_scrape_free(s);

    /* More bad lines than are kept: all counted, the first 8 numbered. */
    char many[512];
    size_t off = 0;
    for (int i = 0; i < 20; i++)
        off += (size_t)snprintf(many + off, sizeof many - off, "bad%d\n", i);
    s = test_prom_parse(many);
    assert_int_equal(s->stats.bad_lines, 20);
    assert_int_equal(s->stats.bad_line_no[7], 8);
    prom_scrape_free(s);
}

/* Every sample of a and b equal: names, labels, values, timestamps. */
static void assert_same_samples(const struct prom_scrape *a,
                                const struct prom_scrape *b)
{
    assert_int_equal(a->n_samples, b->n_samples);
    for (size_t i = 0; i < a->n_samples; i++) {
        const struct prom_sample *x = &a->samples[i], *y = &b->samples[i];
        assert_string_equal(x->name, y->name);
        assert_string_equal(x->family, y->family);
        assert_int_equal(x->type, y->type);
        assert_int_equal(x->n_labels, y->n_labels);
        for (size_t j = 0; j < x->n_labels; j++) {
            assert_string_equal(x->labels[j].name, y->labels[j].name);
            assert_string_equal(x->labels[j].value, y->labels[j].value);
        }
        assert_true(x->value == y->value || (isnan(x->value) && isnan(y->value)));
        assert_int_equal(x->line, y->line);
    }
}

static void test_crlf_and_no_final_newline(void **state)
{
    struct prom_scrape *lf = test_prom_parse("# TYPE g gauge\ng{a=\"x\"} 1\n\ng 2\nh 3");
    struct prom_scrape *crlf =
        test_prom_parse("# TYPE g gauge\r\ng{a=\"x\"} 1\r\n\r\ng 2\r\nh 3\r\n");
    assert_int_equal(lf->stats.bad_lines, 0);
    assert_int_equal(crlf->stats.bad_lines, 0);
    assert_int_equal(lf->n_samples, 3);
    assert_same_samples(lf, crlf);
    assert_string_equal(lf->samples[2].name, "h");
    assert_true(lf->samples[2].value == 3.0);
    assert_int_equal(lf->samples[2].line, 5);
    assert_int_equal(lf->stats.lines, 5);
    assert_int_equal(crlf->stats.lines, 5);
    prom_scrape_free(lf);
    prom_scrape_free(crlf);

    /* A final line with no newline and no value is still a counted line. */
    struct prom_scrape *s = test_prom_parse("a 1\nb");
    assert_int_equal(s->n_samples, 1);
    assert_int_equal(s->stats.bad_lines, 1);
    assert_int_equal(s->stats.bad_line_no[0], 2);
    prom_scrape_free(s);

    /* Empty input: nothing, no error. */
    s = test_prom_parse("");
    assert_int_equal(s->n_samples, 0);
    assert_int_equal(s->stats.lines, 0);
    prom_scrape_free(s);
}

static void test_long_lines(void **state)
{
    /* A label value of exactly PROM_MAX_LABEL_VALUE_BYTES passes, one
     * byte more fails; likewise a line of exactly PROM_MAX_LINE_BYTES. */
    size_t cap = 3 * (PROM_MAX_LINE_BYTES + 64);
    char *body = ll_malloc(cap);

    /* Label value at its limit, then one byte over. */
    size_t off = 0;
    for (int k = 0; k < 2; k++) {
        size_t n = PROM_MAX_LABEL_VALUE_BYTES + (size_t)k;
        memcpy(body + off, "n{v=\"", 5);
        off += 5;
        memset(body + off, 'A', n);
        off += n;
        memcpy(body + off, "\"} 1\n", 5);
        off += 5;
    }
    /* A line of exactly the limit made of a long name, then one over. */
    for (int k = 0; k < 2; k++) {
        size_t n = PROM_MAX_LINE_BYTES - 2 + (size_t)k;
        memset(body + off, 'm', n);
        off += n;
        memcpy(body + off, " 1\n", 3);
        off += 3;
    }
    memcpy(body + off, "after 2\n", 8);
    off += 8;
    assert_true(off <= cap);

    struct prom_scrape *s = NULL;
    assert_int_equal(prom_scrape_parse(body, off, &s), 0);
    assert_int_equal(s->n_samples, 3);
    assert_int_equal(s->samples[0].labels[0].value_len,
                     PROM_MAX_LABEL_VALUE_BYTES);
    assert_int_equal(strlen(s->samples[1].name), PROM_MAX_LINE_BYTES - 2);
    assert_string_equal(s->samples[2].name, "after");
    assert_int_equal(s->samples[2].line, 5);
    assert_int_equal(s->stats.bad_lines, 2);
    assert_int_equal(s->stats.bad_line_no[0], 2);
    assert_string_equal(s->stats.bad_reason[0], "label value too long");
    assert_int_equal(s->stats.bad_line_no[1], 4);
    assert_string_equal(s->stats.bad_reason[1], "line too long");
    prom_scrape_free(s);
    free(body);
}

static void test_eof_and_nul(void **state)
{
    static const char body[] = "a 1\nb\0c 2\n# EOF\nd 3\n";
    struct prom_scrape *s = NULL;
    assert_int_equal(prom_scrape_parse(body, sizeof body - 1, &s), 0);
    assert_int_equal(s->n_samples, 1);
    assert_int_equal(s->stats.bad_lines, 1);
    assert_string_equal(s->stats.bad_reason[0], "NUL byte in line");
    assert_int_equal(s->stats.saw_eof, 1);
    assert_int_equal(s->stats.lines, 3);
    prom_scrape_free(s);

    assert_int_equal(prom_scrape_parse(NULL, 1, &s), LL_E_INVAL);
    assert_int_equal(prom_parse("a 1\n", 4, NULL, NULL, NULL), LL_E_INVAL);
    prom_scrape_free(NULL);
}

/* The real llama.cpp capture, every sample checked. */
static void test_llamacpp_fixture(void **state)
{
    static const struct {
        const char *name;
        enum prom_type type;
        double value;
    } want[] = {
        {"llamacpp:prompt_tokens_total", PROM_COUNTER, 51},
        {"llamacpp:prompt_seconds_total", PROM_COUNTER, 0.004},
        {"llamacpp:tokens_predicted_total", PROM_COUNTER, 36},
        {"llamacpp:tokens_predicted_seconds_total", PROM_COUNTER, 0.005},
        {"llamacpp:n_decode_total", PROM_COUNTER, 36},
        {"llamacpp:n_tokens_max", PROM_COUNTER, 57},
        {"llamacpp:n_busy_slots_per_decode", PROM_COUNTER, 1},
        {"llamacpp:prompt_tokens_seconds", PROM_GAUGE, 12750},
        {"llamacpp:predicted_tokens_seconds", PROM_GAUGE, 7200},
        {"llamacpp:requests_processing", PROM_GAUGE, 0},
        {"llamacpp:requests_deferred", PROM_GAUGE, 0},
    };
    char *body;
    size_t len;
    struct prom_scrape *s = scrape_of("llamacpp-metrics.txt", &body, &len);
    assert_int_equal(s->stats.lines, 33);
    assert_int_equal(s->stats.bad_lines, 0);
    assert_int_equal(s->n_samples, LL_ARRAY_LEN(want));
    for (size_t i = 0; i < LL_ARRAY_LEN(want); i++) {
        const struct prom_sample *smp = &s->samples[i];
        assert_string_equal(smp->name, want[i].name);
        assert_string_equal(smp->family, want[i].name);
        assert_int_equal(smp->type, want[i].type);
        assert_int_equal(smp->n_labels, 0);
        assert_int_equal(smp->line, 3 * i + 3);
        ASSERT_NEAR(smp->value, want[i].value, 0.0);
    }
    prom_scrape_free(s);

    /* Every prefix of the body parses without harm, and never yields more
     * samples or a different value for a sample it completed. */
    for (size_t cut = 0; cut <= len; cut++) {
        assert_int_equal(prom_scrape_parse(body, cut, &s), 0);
        assert_true(s->n_samples <= LL_ARRAY_LEN(want));
        for (size_t i = 0; i + 1 < s->n_samples; i++)
            ASSERT_NEAR(s->samples[i].value, want[i].value, 0.0);
        prom_scrape_free(s);
    }
    free(body);
}

static void count_cb(void *ud, const struct prom_sample *smp)
{
    size_t *n = ud;
    assert_non_null(smp->name);
    (*n)++;
}

static void test_callback_matches_scrape(void **state)
{
    size_t len, n = 0;
    char *body = test_read_data("prom", "vllm.txt", &len);
    struct prom_parse_stats st;
    assert_int_equal(prom_parse(body, len, count_cb, &n, &st), 0);
    struct prom_scrape *s = NULL;
    assert_int_equal(prom_scrape_parse(body, len, &s), 0);
    assert_int_equal(n, s->n_samples);
    assert_int_equal(st.samples, s->n_samples);
    assert_int_equal(n, 16);
    prom_scrape_free(s);
    free(body);
}

/* tests/data/prom/vllm.txt, parsed: the state of the tests that read it. */
struct vllm_fixture {
    char *body;
    struct prom_scrape *s;
};

static int vllm_setup(void **state)
{
    struct vllm_fixture *f = calloc(1, sizeof *f);
    assert_non_null(f);
    f->s = scrape_of("vllm.txt", &f->body, NULL);
    *state = f;
    return 0;
}

static int vllm_teardown(void **state)
{
    struct vllm_fixture *f = *state;
    prom_scrape_free(f->s);
    free(f->body);
    free(f);
    return 0;
}

static void test_find_and_sum(void **state)
{
    const struct prom_scrape *s = ((struct vllm_fixture *)*state)->s;

    size_t pos = 0;
    const struct prom_label stop[] = {{"finished_reason", "stop", 4}};
    assert_int_equal(prom_scrape_find(s, "vllm:request_success_total", stop,
                                      1, &pos), 0);
    ASSERT_NEAR(s->samples[pos].value, 90.0, 0.0);
    pos++;
    assert_int_equal(prom_scrape_find(s, "vllm:request_success_total", stop,
                                      1, &pos), LL_E_NOTFOUND);

    size_t nf = 0;
    double total = prom_scrape_sum(s, "vllm:request_success_total", NULL, 0, &nf);
    assert_int_equal(nf, 3);
    ASSERT_NEAR(total, 102.0, 0.0);
    const struct prom_label other[] = {{"model_name", "other", 5}};
    ASSERT_NEAR(prom_scrape_sum(s, "vllm:request_success_total", other, 1, &nf), 0.0, 0.0);
    assert_int_equal(nf, 0);

    /* The OpenMetrics-style counter: family without _total. */
    pos = 0;
    assert_int_equal(prom_scrape_find(s, "vllm:num_preemptions_total", NULL,
                                      0, &pos), 0);
    assert_string_equal(s->samples[pos].family, "vllm:num_preemptions");
    assert_int_equal(s->samples[pos].suffix, PROM_SUFFIX_TOTAL);
    assert_int_equal(s->samples[pos + 1].suffix, PROM_SUFFIX_CREATED);
}

/* Buckets le 0.1:10, 0.5:30, 1:45, +Inf:50. By hand, with rank = q * 50:
 *   q=0.10 rank  5 in (0, 0.1]:   0   + 0.1 *  5/10 = 0.05
 *   q=0.50 rank 25 in (0.1, 0.5]: 0.1 + 0.4 * 15/20 = 0.4
 *   q=0.80 rank 40 in (0.5, 1]:   0.5 + 0.5 * 10/15 = 0.8333...
 *   q=0.90 rank 45 in (0.5, 1]:   0.5 + 0.5 * 15/15 = 1.0
 *   q=0.99 rank 49.5 in (1, +Inf]: the highest finite bound, 1.0
 *   q=0    rank 0 in (0, 0.1]:    0 */
static void test_histogram_quantile(void **state)
{
    const struct prom_scrape *s = ((struct vllm_fixture *)*state)->s;
    struct prom_histogram h;
    assert_int_equal(prom_scrape_histogram(s, "vllm:time_to_first_token_seconds",
                                           NULL, 0, &h), 0);
    assert_int_equal(h.n_buckets, 4);
    ASSERT_NEAR(h.sum, 21.5, 0.0);
    ASSERT_NEAR(h.total, 50.0, 0.0);
    double q;
    ASSERT_QUANTILE(&h, 0.10, 0.05);
    ASSERT_QUANTILE(&h, 0.50, 0.4);
    ASSERT_QUANTILE(&h, 0.80, 0.5 + 0.5 * 10.0 / 15.0);
    ASSERT_QUANTILE(&h, 0.90, 1.0);
    ASSERT_QUANTILE(&h, 0.99, 1.0);
    ASSERT_QUANTILE(&h, 0.0, 0.0);

    /* Out-of-range q is reported, never clamped. */
    assert_int_equal(prom_histogram_quantile(&h, 1.5, &q), LL_E_RANGE);
    assert_int_equal(prom_histogram_quantile(&h, -0.1, &q), LL_E_RANGE);
    assert_int_equal(prom_histogram_quantile(&h, NAN, &q), LL_E_RANGE);

    /* A label filter that matches nothing finds nothing. */
    const struct prom_label other[] = {{"model_name", "other", 5}};
    assert_int_equal(prom_scrape_histogram(s, "vllm:time_to_first_token_seconds",
                                           other, 1, &h), LL_E_NOTFOUND);
    assert_int_equal(prom_scrape_histogram(s, "vllm:num_requests_running",
                                           NULL, 0, &h), LL_E_NOTFOUND);
}

/* The delta of two scrapes is the load step's own histogram. Earlier:
 * 0.1:4, 0.5:10, 1:20, +Inf:20; later as above (10, 30, 45, 50). Delta:
 * 6, 20, 25, 30. p50: rank 15 in (0.1, 0.5]: 0.1 + 0.4 * 9/14. p90: rank
 * 27 in (1, +Inf]: 1.0. */
static void test_histogram_delta(void **state)
{
    struct prom_histogram later = {0}, earlier = {0}, d = {0};
    static const double le[] = {0.1, 0.5, 1.0, INFINITY};
    static const double c_late[] = {10, 30, 45, 50};
    static const double c_early[] = {4, 10, 20, 20};
    for (size_t i = 0; i < 4; i++) {
        later.le[i] = earlier.le[i] = le[i];
        later.count[i] = c_late[i];
        earlier.count[i] = c_early[i];
    }
    later.n_buckets = earlier.n_buckets = 4;
    later.total = 50;
    earlier.total = 20;
    later.sum = 21.5;
    earlier.sum = 6.5;
    assert_int_equal(prom_histogram_delta(&later, &earlier, &d), 0);
    ASSERT_NEAR(d.count[0], 6, 0);
    ASSERT_NEAR(d.count[3], 30, 0);
    ASSERT_NEAR(d.total, 30, 0);
    ASSERT_NEAR(d.sum, 15, 0);
    double q;
    ASSERT_QUANTILE(&d, 0.5, 0.1 + 0.4 * 9.0 / 14.0);
    ASSERT_QUANTILE(&d, 0.9, 1.0);

    /* A reset (counts went down) is reported and out is left alone. */
    struct prom_histogram keep = d;
    assert_int_equal(prom_histogram_delta(&earlier, &later, &d), LL_E_RANGE);
    assert_memory_equal(&keep, &d, sizeof d);
    /* Different bounds cannot be subtracted. */
    struct prom_histogram other = earlier;
    other.le[1] = 0.25;
    assert_int_equal(prom_histogram_delta(&later, &other, &d), LL_E_INVAL);
    /* No earlier scrape: the delta is the later histogram itself. */
    struct prom_histogram none = {0};
    assert_int_equal(prom_histogram_delta(&later, &none, &d), 0);
    assert_memory_equal(&later, &d, sizeof d);
    /* out may alias later. */
    assert_int_equal(prom_histogram_delta(&later, &earlier, &later), 0);
    ASSERT_NEAR(later.count[1], 20, 0);

    /* No observations in the step: no quantile. */
    assert_int_equal(prom_histogram_delta(&earlier, &earlier, &d), 0);
    assert_int_equal(prom_histogram_quantile(&d, 0.5, &q), LL_E_NOTFOUND);
}

static void test_histogram_gather_edge_cases(void **state)
{
    /* Two series summed by le, buckets given out of order, no TYPE line. */
    struct prom_scrape *s = test_prom_parse("h_bucket{m=\"a\",le=\"+Inf\"} 4\n"
                                            "h_bucket{m=\"a\",le=\"2\"} 4\n"
                                            "h_bucket{m=\"b\",le=\"1\"} 2\n"
                                            "h_bucket{m=\"a\",le=\"1\"} 2\n"
                                            "h_bucket{m=\"b\",le=\"2\"} 2\n"
                                            "h_bucket{m=\"b\",le=\"+Inf\"} 6\n"
                                            "h_sum{m=\"a\"} 5\nh_sum{m=\"b\"} 7\n"
                                            "h_count{m=\"a\"} 4\nh_count{m=\"b\"} 6\n"
                                            "h_other 1\n");
    struct prom_histogram h;
    assert_int_equal(prom_scrape_histogram(s, "h", NULL, 0, &h), 0);
    assert_int_equal(h.n_buckets, 3);
    ASSERT_NEAR(h.le[0], 1, 0);
    ASSERT_NEAR(h.le[1], 2, 0);
    assert_true(isinf(h.le[2]));
    ASSERT_NEAR(h.count[0], 4, 0);
    ASSERT_NEAR(h.count[1], 6, 0);
    ASSERT_NEAR(h.count[2], 10, 0);
    ASSERT_NEAR(h.sum, 12, 0);
    ASSERT_NEAR(h.total, 10, 0);
    /* p50 of the sum: rank 5 in (1, 2]: 1 + 1 * 1/2. */
    double q;
    ASSERT_QUANTILE(&h, 0.5, 1.5);
    /* Only series a: 2, 4, 4; p25 rank 1 in (0, 1]: 0.5. */
    const struct prom_label a[] = {{"m", "a", 1}};
    assert_int_equal(prom_scrape_histogram(s, "h", a, 1, &h), 0);
    ASSERT_NEAR(h.count[2], 4, 0);
    ASSERT_QUANTILE(&h, 0.25, 0.5);
    prom_scrape_free(s);

    /* A bucket without le is an error; so is one without +Inf for a
     * quantile; a first bound <= 0 is returned as is. */
    s = test_prom_parse("x_bucket 3\n");
    assert_int_equal(prom_scrape_histogram(s, "x", NULL, 0, &h), LL_E_INVAL);
    prom_scrape_free(s);
    s = test_prom_parse("y_bucket{le=\"1\"} 3\ny_bucket{le=\"2\"} 4\n");
    assert_int_equal(prom_scrape_histogram(s, "y", NULL, 0, &h), 0);
    assert_int_equal(prom_histogram_quantile(&h, 0.5, &q), LL_E_INVAL);
    prom_scrape_free(s);
    s = test_prom_parse("z_bucket{le=\"-1\"} 3\nz_bucket{le=\"+Inf\"} 4\n");
    assert_int_equal(prom_scrape_histogram(s, "z", NULL, 0, &h), 0);
    assert_int_equal(prom_histogram_quantile(&h, 0.5, &q), 0);
    ASSERT_NEAR(q, -1.0, 0);
    prom_scrape_free(s);

    /* Non-monotonic counts are read as their running maximum:
     * 5, 3 -> 5, 5; +Inf 10. p50 rank 5 in (0, 1]: 1.0. */
    struct prom_histogram m = {0};
    m.n_buckets = 3;
    m.le[0] = 1; m.le[1] = 2; m.le[2] = INFINITY;
    m.count[0] = 5; m.count[1] = 3; m.count[2] = 10;
    ASSERT_QUANTILE(&m, 0.5, 1.0);
    /* p60 rank 6 lands in +Inf (cum 5, 5, 10): the top finite bound 2. */
    ASSERT_QUANTILE(&m, 0.6, 2.0);
}

TEST_MAIN(cmocka_unit_test(test_types_and_families),
          cmocka_unit_test(test_label_escapes),
          cmocka_unit_test(test_values),
          cmocka_unit_test(test_timestamps),
          cmocka_unit_test(test_bad_lines_counted),
          cmocka_unit_test(test_crlf_and_no_final_newline),
          cmocka_unit_test(test_long_lines),
          cmocka_unit_test(test_eof_and_nul),
          cmocka_unit_test(test_llamacpp_fixture),
          cmocka_unit_test(test_callback_matches_scrape),
          cmocka_unit_test_setup_teardown(test_find_and_sum, vllm_setup, vllm_teardown),
          cmocka_unit_test_setup_teardown(test_histogram_quantile, vllm_setup, vllm_teardown),
          cmocka_unit_test(test_histogram_delta),
          cmocka_unit_test(test_histogram_gather_edge_cases))
