/* libFuzzer target for prom.c.
 *
 * For any input the parser must not crash, and:
 *  - the callback parse and the scrape parse agree (same samples, same
 *    stats), and every sample is well formed;
 *  - writing the samples back out in canonical text and parsing that
 *    again gives the same names, labels, values and timestamps, with no
 *    bad lines (the parse is a fixed point);
 *  - gathering any histogram it saw and asking for quantiles, directly and
 *    from a delta, never crashes. */
#include <inttypes.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "metrics/prom.h"
#include "util/util.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

#define CHECK(cond)                                                          \
    do {                                                                     \
        if (!(cond)) {                                                       \
            fprintf(stderr, "fuzz_prom: check failed: %s (line %d)\n", #cond, \
                    __LINE__);                                               \
            abort();                                                         \
        }                                                                    \
    } while (0)

struct walk {
    size_t n;
    size_t lines_max;
};

static int name_ok(const char *s)
{
    if (!((*s >= 'a' && *s <= 'z') || (*s >= 'A' && *s <= 'Z') || *s == '_' ||
          *s == ':'))
        return 0;
    for (; *s; s++)
        if (!((*s >= 'a' && *s <= 'z') || (*s >= 'A' && *s <= 'Z') ||
              (*s >= '0' && *s <= '9') || *s == '_' || *s == ':'))
            return 0;
    return 1;
}

static void on_sample(void *ud, const struct prom_sample *s)
{
    struct walk *w = ud;
    CHECK(name_ok(s->name));
    CHECK(strlen(s->name) <= PROM_MAX_LINE_BYTES);
    CHECK(strncmp(s->name, s->family, strlen(s->family)) == 0);
    CHECK(s->n_labels <= PROM_MAX_LABELS);
    CHECK(s->n_labels == 0 || s->labels != NULL);
    for (size_t i = 0; i < s->n_labels; i++) {
        CHECK(strlen(s->labels[i].value) == s->labels[i].value_len);
        CHECK(s->labels[i].value_len <= PROM_MAX_LABEL_VALUE_BYTES);
    }
    CHECK(s->line >= 1 && s->line <= w->lines_max);
    w->n++;
}

struct out {
    char *buf;
    size_t len, cap;
};

static void put(struct out *o, const char *s, size_t n)
{
    if (o->len + n + 1 > o->cap) {
        o->cap = (o->len + n + 1) * 2;
        o->buf = ll_realloc(o->buf, o->cap);
    }
    memcpy(o->buf + o->len, s, n);
    o->len += n;
}

static void puts_(struct out *o, const char *s) { put(o, s, strlen(s)); }

/* One sample as canonical text. */
static void emit(struct out *o, const struct prom_sample *s)
{
    char num[64];
    puts_(o, s->name);
    if (s->n_labels > 0) {
        puts_(o, "{");
        for (size_t i = 0; i < s->n_labels; i++) {
            if (i > 0)
                puts_(o, ",");
            puts_(o, s->labels[i].name);
            puts_(o, "=\"");
            for (size_t j = 0; j < s->labels[i].value_len; j++) {
                char c = s->labels[i].value[j];
                if (c == '\\')
                    puts_(o, "\\\\");
                else if (c == '"')
                    puts_(o, "\\\"");
                else if (c == '\n')
                    puts_(o, "\\n");
                else
                    put(o, &c, 1);
            }
            puts_(o, "\"");
        }
        puts_(o, "}");
    }
    if (isnan(s->value))
        snprintf(num, sizeof num, " NaN");
    else if (isinf(s->value))
        snprintf(num, sizeof num, " %sInf", s->value > 0 ? "+" : "-");
    else
        snprintf(num, sizeof num, " %.17g", s->value);
    puts_(o, num);
    if (s->has_timestamp) {
        snprintf(num, sizeof num, " %" PRId64, s->timestamp_ms);
        puts_(o, num);
    }
    puts_(o, "\n");
}

static void round_trip(const struct prom_scrape *a)
{
    struct out o = {0};
    for (size_t i = 0; i < a->n_samples; i++) {
        size_t before = o.len;
        emit(&o, &a->samples[i]);
        /* A longer number can push a line near the limit over it. */
        if (o.len - before - 1 > PROM_MAX_LINE_BYTES) {
            free(o.buf);
            return;
        }
    }
    struct prom_scrape *b = NULL;
    CHECK(prom_scrape_parse(o.buf, o.len, &b) == 0);
    CHECK(b->stats.bad_lines == 0);
    CHECK(b->n_samples == a->n_samples);
    for (size_t i = 0; i < a->n_samples; i++) {
        const struct prom_sample *x = &a->samples[i], *y = &b->samples[i];
        CHECK(strcmp(x->name, y->name) == 0);
        CHECK(x->n_labels == y->n_labels);
        for (size_t j = 0; j < x->n_labels; j++) {
            CHECK(strcmp(x->labels[j].name, y->labels[j].name) == 0);
            CHECK(x->labels[j].value_len == y->labels[j].value_len);
            CHECK(memcmp(x->labels[j].value, y->labels[j].value,
                         x->labels[j].value_len) == 0);
        }
        CHECK(x->value == y->value || (isnan(x->value) && isnan(y->value)));
        CHECK(x->has_timestamp == y->has_timestamp);
        CHECK(!x->has_timestamp || x->timestamp_ms == y->timestamp_ms);
        CHECK(y->line == i + 1);
    }
    prom_scrape_free(b);
    free(o.buf);
}

static void histograms(const struct prom_scrape *s)
{
    static const double qs[] = {0.0, 0.5, 0.9, 0.99, 1.0};
    struct prom_histogram h, d;
    size_t tried = 0;
    for (size_t i = 0; i < s->n_samples && tried < 4; i++) {
        const char *name = s->samples[i].name;
        size_t n = strlen(name);
        if (n <= 7 || strcmp(name + n - 7, "_bucket") != 0)
            continue;
        char family[PROM_MAX_LINE_BYTES + 1];
        memcpy(family, name, n - 7);
        family[n - 7] = '\0';
        tried++;
        if (prom_scrape_histogram(s, family, NULL, 0, &h) != 0)
            continue;
        CHECK(h.n_buckets >= 1 && h.n_buckets <= PROM_HIST_MAX_BUCKETS);
        for (size_t j = 1; j < h.n_buckets; j++)
            CHECK(h.le[j - 1] < h.le[j]);
        for (size_t j = 0; j < LL_ARRAY_LEN(qs); j++) {
            double q;
            (void)prom_histogram_quantile(&h, qs[j], &q);
        }
        if (prom_histogram_delta(&h, &h, &d) == 0) {
            double q;
            int rc = prom_histogram_quantile(&d, 0.5, &q);
            CHECK(rc != 0);    /* no observations between equal scrapes */
        }
    }
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    const char *buf = (const char *)data;
    struct walk w = {0, 0};
    struct prom_parse_stats st;

    /* Lines can be no more than LFs + 1. */
    w.lines_max = 1;
    for (size_t i = 0; i < size; i++)
        w.lines_max += data[i] == '\n';
    CHECK(prom_parse(buf, size, on_sample, &w, &st) == 0);
    CHECK(w.n == st.samples);
    CHECK(st.lines <= w.lines_max);
    CHECK(st.bad_lines + st.samples <= st.lines);
    for (size_t i = 0; i < st.bad_lines && i < PROM_BAD_LINES_KEPT; i++) {
        CHECK(st.bad_line_no[i] >= 1 && st.bad_line_no[i] <= st.lines);
        CHECK(i == 0 || st.bad_line_no[i] > st.bad_line_no[i - 1]);
        CHECK(st.bad_reason[i] != NULL);
    }

    struct prom_scrape *s = NULL;
    CHECK(prom_scrape_parse(buf, size, &s) == 0);
    CHECK(s->n_samples == st.samples);
    CHECK(s->stats.lines == st.lines);
    CHECK(s->stats.bad_lines == st.bad_lines);
    CHECK(s->stats.saw_eof == st.saw_eof);
    round_trip(s);
    histograms(s);
    prom_scrape_free(s);
    return 0;
}
