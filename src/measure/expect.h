/* expect.h: --expect, thresholds checked on a run's own figures (run, and
 * each step of a sweep that counts): "ttft_p99<500ms,error_rate<1%,
 * goodput>=20/s". A failed one makes the command exit 7 (LL_EXIT_EXPECT).
 *
 * The metrics: ttft_, tpot_, itl_ (per request), e2e_ with each percentile
 * summary.json's latency_ns carries (p50, p90, p95, p99, p99_9, which may
 * be written p99.9 as the terminal's table heads it), goodput,
 * attainment, error_rate, error_rate_KIND, output_tokens_per_s,
 * achieved_rate; those `llmload compare` has a row of (its p50, p90 and
 * p99; docs/compare.md) read alike. Read from a struct expect_figures (filled from a run's
 * summary.json object, or by the sweep from a step). docs/run.md
 * documents the syntax. */
#ifndef LL_EXPECT_H
#define LL_EXPECT_H

#include <jansson.h>
#include <stddef.h>
#include <stdio.h>

#include "measure/record.h"

#define EXPECT_MAX 32

enum expect_op { EXPECT_LT, EXPECT_LE, EXPECT_GT, EXPECT_GE };

/* What a metric is measured in, and the unit its bound takes. */
enum expect_unit {
    EXPECT_NS,    /* a latency: the bound a duration (500ms, 1.5s, 800us) */
    EXPECT_SHARE, /* a share 0..1: the bound in percent (1%, 99.5%) */
    EXPECT_RATE,  /* per second: the bound with /s (20/s) */
};

struct expect_item {
    char text[96];   /* the item as written */
    char metric[48]; /* ttft_p99, goodput, error_rate_http_5xx, ... */
    enum expect_op op;
    enum expect_unit unit;
    double bound; /* ns, a share 0..1, or per second */
};

struct expect_set {
    struct expect_item item[EXPECT_MAX];
    size_t n;
};

/* The figures a threshold is checked on; NAN where there is none (no ok
 * request, no SLO, nothing completed). */
enum { EXPECT_TTFT, EXPECT_TPOT, EXPECT_ITL, EXPECT_E2E, EXPECT_NLAT };
/* The percentiles of each latency, those of summary.json's latency_ns:
 * 50, 90, 95, 99 and 99.9 (expect_pcts). */
#define EXPECT_NPCT 5
extern const double expect_pcts[EXPECT_NPCT];
struct expect_figures {
    double lat_ns[EXPECT_NLAT][EXPECT_NPCT]; /* expect_pcts of TTFT, TPOT, ITL per request, E2E */
    double goodput, attainment;              /* per s; a share */
    double achieved_rate, output_tokens_per_s;
    double completed, failed; /* requests: error_rate = failed / completed */
    double by_kind[REC_KIND_COUNT];
};

/* The figures of a run's summary.json object (summary_json's). */
void expect_figures_from_summary(json_t *sum, struct expect_figures *fig);

/* Parse spec (comma-separated items METRIC OP VALUE, OP one of < <= > >=)
 * into set. Returns 0, or -1 with a one-line reason that names the flag
 * and the item in err. */
int expect_parse(const char *spec, struct expect_set *set, char *err, size_t errlen);

/* The first item that needs an SLO (goodput, attainment), NULL when none. */
const struct expect_item *expect_needs_slo(const struct expect_set *set);

/* The figure named m (a metric of --expect, which is a row of compare:
 * ttft_p99, goodput, error_rate_KIND, ...) in fig, in its unit; NAN when
 * fig has none or m names none. */
double expect_figure(const char *m, const struct expect_figures *fig);

/* The record kind of "error_rate_KIND" (never ok), or -1. */
int expect_error_kind(const char *m);

/* The items of set joined by commas: the spec again (run.json keeps it). */
void expect_format(const struct expect_set *set, char *buf, size_t len);

/* Check every item of set on fig. Each failed item (a value past its
 * bound, or no value) is one line on f (when not NULL): "llmload:
 * --expect: <where: >ttft_p99 is 612.30ms, not < 500ms". Returns the
 * results as a JSON array, one object per item (expect, metric, op,
 * bound, unit, value, result "pass" or "fail"); *failed gets how many
 * failed. where may be NULL. */
json_t *expect_eval(const struct expect_set *set, const struct expect_figures *fig, FILE *f,
                    const char *where, size_t *failed);

/* Judge set on a run's summary.json object sum (its figures by
 * expect_figures_from_summary): sum's "expect" becomes expect_eval's
 * array, or null when set is empty; one line on f per failed item (f may
 * be NULL). Returns how many failed. Run, replay, merge and report judge
 * a run's thresholds here. */
size_t expect_judge_summary(const struct expect_set *set, json_t *sum, FILE *f);

#endif
