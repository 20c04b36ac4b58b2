/* expect.c: --expect thresholds on a run's own figures (expect.h). */
#include "measure/expect.h"

#include <math.h>
#include <stdint.h>
#include <string.h>

#include "measure/stats.h"
#include "util/util.h"

static const char *const lat_rows[] = {"ttft", "tpot", "itl", "e2e"};
/* summary.json's latency_ns keys of the rows (ITL is per request). */
static const char *const lat_keys[] = {"ttft", "tpot", "itl_request", "e2e"};
/* summary.json's latency_ns keys of expect_pcts, and the terminal table's
 * headings where they differ (a metric may name either). */
const double expect_pcts[EXPECT_NPCT] = {50, 90, 95, 99, 99.9};
static const char *const pct_rows[EXPECT_NPCT] = {"p50", "p90", "p95", "p99", "p99_9"};
static const char *const pct_labels[EXPECT_NPCT] = {"p50", "p90", "p95", "p99", "p99.9"};
static const char *const op_names[] = {"<", "<=", ">", ">="};

/* The error kind of "error_rate_KIND", or -1. */
int expect_error_kind(const char *m)
{
    if (strncmp(m, "error_rate_", 11) != 0)
        return -1;
    int k = rec_kind_from_name(m + 11);
    return k < 0 || k == REC_OK ? -1 : k;
}

/* 1 when m is a latency percentile, "ROW_PCT" (ttft_p99, say), with its
 * row in *row and percentile in *pct (indices of lat_rows and pct_rows);
 * else 0. */
static int lat_metric(const char *m, size_t *row, size_t *pct)
{
    for (size_t i = 0; i < LL_ARRAY_LEN(lat_rows); i++) {
        size_t l = strlen(lat_rows[i]);
        if (strncmp(m, lat_rows[i], l) != 0 || m[l] != '_')
            continue;
        for (size_t p = 0; p < LL_ARRAY_LEN(pct_rows); p++) {
            if (strcmp(m + l + 1, pct_rows[p]) == 0 || strcmp(m + l + 1, pct_labels[p]) == 0) {
                *row = i;
                *pct = p;
                return 1;
            }
        }
    }
    return 0;
}

/* The unit of metric m, or -1 when m is no metric. */
static int metric_unit(const char *m)
{
    size_t i, p;
    if (lat_metric(m, &i, &p))
        return EXPECT_NS;
    if (strcmp(m, "attainment") == 0 || strcmp(m, "error_rate") == 0 || expect_error_kind(m) >= 0)
        return EXPECT_SHARE;
    if (strcmp(m, "goodput") == 0 || strcmp(m, "output_tokens_per_s") == 0 ||
        strcmp(m, "achieved_rate") == 0)
        return EXPECT_RATE;
    return -1;
}

/* The bound v (the text after the operator) in unit u: 0, or -1. */
static int parse_bound(const char *v, enum expect_unit u, double *out)
{
    size_t l = strlen(v);
    char num[64];
    switch (u) {
    case EXPECT_NS: {
        uint64_t ns;
        /* A unit is required: "500" alone could be ms or s. */
        if (l == 0 || !(v[l - 1] == 's') || ll_parse_duration_ns(v, 0, &ns) != 0)
            return -1;
        *out = (double)ns;
        return 0;
    }
    case EXPECT_SHARE:
        if (l < 2 || l >= sizeof num || v[l - 1] != '%')
            return -1;
        memcpy(num, v, l - 1);
        num[l - 1] = '\0';
        if (ll_parse_double(num, out) != 0 || *out < 0 || *out > 100)
            return -1;
        *out /= 100.0;
        return 0;
    case EXPECT_RATE:
        if (l < 3 || l >= sizeof num || strcmp(v + l - 2, "/s") != 0)
            return -1;
        memcpy(num, v, l - 2);
        num[l - 2] = '\0';
        return ll_parse_double(num, out) != 0 || *out < 0 ? -1 : 0;
    }
    return -1;
}

static const char *const unit_hint[] = {"a duration such as 500ms or 1.5s",
                                        "a percentage such as 1% or 99.5%", "a rate such as 20/s"};

int expect_parse(const char *spec, struct expect_set *set, char *err, size_t errlen)
{
    memset(set, 0, sizeof *set);
    if (!*spec) {
        snprintf(err, errlen, "--expect: empty");
        return -1;
    }
    const char *p = spec;
    while (*p) {
        if (set->n == EXPECT_MAX) { /* before the item is copied into item[n] */
            snprintf(err, errlen, "--expect: more than %d items", EXPECT_MAX);
            return -1;
        }
        struct expect_item *it = &set->item[set->n];
        size_t len = ll_list_item(p, it->text, sizeof it->text);
        if (len == 0) {
            snprintf(err, errlen, "--expect: an empty item in \"%s\"", spec);
            return -1;
        }
        if (len >= sizeof it->text) {
            snprintf(err, errlen, "--expect: \"%.*s...\": too long", 40, p);
            return -1;
        }
        size_t m = strcspn(it->text, "<>=!");
        if (it->text[m] == '=' || it->text[m] == '!') {
            snprintf(err, errlen,
                     "--expect: \"%s\": the operator must be one of < <= > >=", it->text);
            return -1;
        }
        if (it->text[m] == '\0') {
            snprintf(err, errlen,
                     "--expect: \"%s\" is not METRIC OP VALUE (OP one of < <= > >=, e.g. "
                     "ttft_p99<500ms)",
                     it->text);
            return -1;
        }
        /* Blanks around the operator are allowed ("ttft_p99 < 500ms"):
         * the item is kept as METRIC OP VALUE without them, as the
         * failure line rebuilds it. */
        char metric[sizeof it->text];
        memcpy(metric, it->text, m);
        metric[m] = '\0';
        const char *name = ll_trim(metric);
        if (!*name || strlen(name) >= sizeof it->metric) {
            snprintf(err, errlen, "--expect: \"%s\": no metric before the operator", it->text);
            return -1;
        }
        snprintf(it->metric, sizeof it->metric, "%s", name);
        const char *o = it->text + m;
        int eq = o[1] == '=';
        it->op = o[0] == '<' ? (eq ? EXPECT_LE : EXPECT_LT) : (eq ? EXPECT_GE : EXPECT_GT);
        char value[sizeof it->text];
        snprintf(value, sizeof value, "%s", o + 1 + eq);
        const char *v = ll_trim(value);
        snprintf(it->text, sizeof it->text, "%s%s%s", name, op_names[it->op], v);
        int u = metric_unit(it->metric);
        if (u < 0) {
            snprintf(err, errlen,
                     "--expect: \"%s\": no metric \"%s\" (ttft_, tpot_, itl_, e2e_ with p50, p90, "
                     "p95, p99 or p99_9; goodput, attainment, error_rate, error_rate_KIND, "
                     "output_tokens_per_s, achieved_rate)",
                     it->text, it->metric);
            return -1;
        }
        it->unit = (enum expect_unit)u;
        if (parse_bound(v, it->unit, &it->bound) != 0) {
            snprintf(err, errlen, "--expect: \"%s\": the value of %s must be %s", it->text,
                     it->metric, unit_hint[u]);
            return -1;
        }
        set->n++;
        p = ll_list_next(p, len, "--expect", spec, err, errlen);
        if (!p)
            return -1;
    }
    return 0;
}

const struct expect_item *expect_needs_slo(const struct expect_set *set)
{
    for (size_t i = 0; i < set->n; i++) {
        if (strcmp(set->item[i].metric, "goodput") == 0 ||
            strcmp(set->item[i].metric, "attainment") == 0)
            return &set->item[i];
    }
    return NULL;
}

static double num_at(json_t *o, const char *a, const char *b)
{
    json_t *x = json_object_get(json_object_get(o, a), b);
    return json_is_number(x) ? json_number_value(x) : NAN;
}

void expect_figures_from_summary(json_t *sum, struct expect_figures *fig)
{
    json_t *lat = json_object_get(sum, "latency_ns");
    for (size_t i = 0; i < EXPECT_NLAT; i++) {
        /* No value: the histogram's empty figures are not values. */
        int any = num_at(lat, lat_keys[i], "count") > 0;
        for (size_t p = 0; p < LL_ARRAY_LEN(pct_rows); p++)
            fig->lat_ns[i][p] = any ? num_at(lat, lat_keys[i], pct_rows[p]) : NAN;
    }
    fig->goodput = num_at(sum, "throughput", "goodput_per_s");
    fig->attainment = num_at(sum, "throughput", "attainment");
    fig->achieved_rate = num_at(sum, "throughput", "send_rate_per_s");
    fig->output_tokens_per_s = num_at(sum, "throughput", "output_tokens_per_s");
    fig->completed = num_at(sum, "requests", "completed");
    fig->failed = num_at(sum, "requests", "failed");
    json_t *bk = json_object_get(json_object_get(sum, "requests"), "by_kind");
    for (int k = 0; k < REC_KIND_COUNT; k++) {
        json_t *v = json_object_get(bk, rec_kind_name((enum rec_kind)k));
        fig->by_kind[k] = json_is_number(v) ? json_number_value(v) : NAN;
    }
}

double expect_figure(const char *m, const struct expect_figures *fig)
{
    size_t i, p;
    if (lat_metric(m, &i, &p))
        return fig->lat_ns[i][p];
    if (strcmp(m, "goodput") == 0)
        return fig->goodput;
    if (strcmp(m, "attainment") == 0)
        return fig->attainment;
    if (strcmp(m, "output_tokens_per_s") == 0)
        return fig->output_tokens_per_s;
    if (strcmp(m, "achieved_rate") == 0)
        return fig->achieved_rate;
    /* error_rate and error_rate_KIND: of the requests the client let end,
     * as compare (stats_error_share: its own cancellations are neither;
     * error_rate_cancelled is of every completed request); NAN when it
     * let none end. */
    if (!(fig->completed > 0))
        return NAN;
    int k = expect_error_kind(m);
    if (k < 0 && strcmp(m, "error_rate") != 0)
        return NAN;
    double cancelled = isfinite(fig->by_kind[REC_CANCELLED]) ? fig->by_kind[REC_CANCELLED] : 0;
    double n = k >= 0 ? fig->by_kind[k] : fig->failed - cancelled;
    /* The client cancelled every one: none to be an error of, so no
     * error rate, as when none completed (stats_error_share reads 0,
     * which passed error_rate<1% on a run the server ended nothing of;
     * compare's row is "-"). */
    if (k != REC_CANCELLED && !(fig->completed - cancelled > 0))
        return NAN;
    return isfinite(n) ? stats_error_share(n, fig->completed, k == REC_CANCELLED ? 0 : cancelled)
                       : NAN;
}

void expect_format(const struct expect_set *set, char *buf, size_t len)
{
    size_t used = 0;
    if (len)
        buf[0] = '\0';
    for (size_t i = 0; i < set->n && used < len; i++) {
        int w = snprintf(buf + used, len - used, "%s%s", i ? "," : "", set->item[i].text);
        if (w < 0)
            break;
        used += (size_t)w;
    }
}

/* Whether v passes op against bound b in unit u. A share is compared as
 * stats_share_cmp compares it: an error rate of exactly 7 in 1000 is
 * "<= 0.7%", though 7 / 1000 and 0.7 / 100 are different doubles. */
static int passes(enum expect_op op, enum expect_unit u, double v, double b)
{
    int c = u == EXPECT_SHARE ? stats_share_cmp(v, b) : (v > b) - (v < b);
    switch (op) {
    case EXPECT_LT: return c < 0;
    case EXPECT_LE: return c <= 0;
    case EXPECT_GT: return c > 0;
    case EXPECT_GE: return c >= 0;
    }
    return 0;
}

static const char *fmt_value(enum expect_unit u, double v, char *buf, size_t len)
{
    switch (u) {
    case EXPECT_NS: return ll_fmt_duration((uint64_t)llround(v), buf, len);
    case EXPECT_SHARE: snprintf(buf, len, "%.3g%%", 100 * v); break;
    case EXPECT_RATE: snprintf(buf, len, "%.4g/s", v); break;
    }
    return buf;
}

json_t *expect_eval(const struct expect_set *set, const struct expect_figures *fig, FILE *f,
                    const char *where, size_t *failed)
{
    static const char *const unit_names[] = {"ns", "share", "per_s"};
    json_t *a = json_array();
    *failed = 0;
    for (size_t i = 0; i < set->n; i++) {
        const struct expect_item *it = &set->item[i];
        double v = expect_figure(it->metric, fig);
        int ok = isfinite(v) && passes(it->op, it->unit, v, it->bound);
        json_t *o = json_object();
        json_object_set_new(o, "expect", json_string(it->text));
        json_object_set_new(o, "metric", json_string(it->metric));
        json_object_set_new(o, "op", json_string(op_names[it->op]));
        json_object_set_new(o, "bound", json_real(it->bound));
        json_object_set_new(o, "unit", json_string(unit_names[it->unit]));
        json_object_set_new(o, "value", isfinite(v) ? json_real(v) : json_null());
        json_object_set_new(o, "result", json_string(ok ? "pass" : "fail"));
        json_array_append_new(a, o);
        if (ok)
            continue;
        (*failed)++;
        if (!f)
            continue;
        const char *bound = it->text + strlen(it->metric) + strlen(op_names[it->op]);
        char vb[48];
        fprintf(f, "llmload: --expect: %s%s%s %s%s, not %s %s\n", where ? where : "",
                where ? ": " : "", it->metric, isfinite(v) ? "is " : "has no value",
                isfinite(v) ? fmt_value(it->unit, v, vb, sizeof vb) : "", op_names[it->op], bound);
    }
    return a;
}

size_t expect_judge_summary(const struct expect_set *set, json_t *sum, FILE *f)
{
    size_t failed = 0;
    if (!set->n) {
        json_object_set_new(sum, "expect", json_null());
        return 0;
    }
    struct expect_figures fig;
    expect_figures_from_summary(sum, &fig);
    json_object_set_new(sum, "expect", expect_eval(set, &fig, f, NULL, &failed));
    return failed;
}
