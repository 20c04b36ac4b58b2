/* report_charts.c: the charts of report.html, each an inline SVG (svg.h).
 *
 * Against offered load (achieved load in a closed loop): TTFT, TPOT and E2E
 * percentiles, SLO attainment, throughput and goodput, output tokens/s, and
 * with traffic classes each class's TTFT and TPOT p99; every one with the
 * knee and the SLO capacity marked (struct report_marks). Per step: errors
 * by kind, stacked. And the TTFT distribution of each step. The charts over
 * time (requests in flight, the server's scrapes) are in report_timecharts.c.
 * report_html.c puts them in their figures and sections; docs/report.md says
 * how to read each. */
#include "report/report_html.h"

#include <math.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "measure/slo.h"
#include "report/report_int.h"
#include "report/svg.h"
#include "util/util.h"

static double report_ns_to(uint64_t ns, double unit_ns)
{
    return (double)ns / unit_ns;
}

/* A marked rate x: its label is prefix and x, written into label. */
static void add_vline(struct report_marks *m, struct strbuf *label, const char *prefix, double x,
                      const char *key, const char *color)
{
    strbuf_puts(label, prefix);
    report_put_value(label, x);
    m->vlines[m->n_vlines++] =
        (struct svg_vline){.x = x, .key = key, .label = label->data, .color = color};
}

void report_marks_init(struct report_marks *m, const struct report *r)
{
    memset(m, 0, sizeof(*m));
    strbuf_init(&m->knee_label);
    strbuf_init(&m->cap_label);
    if (r->capacity_rps > 0 && isfinite(r->capacity_rps)) {
        add_vline(m, &m->cap_label, "SLO capacity ", r->capacity_rps, "capacity", REPORT_COLOR_CAP);
        m->band = (struct svg_band){.x0 = r->capacity_rps, .x1 = INFINITY,
                                    .key = "over-capacity"};
        m->n_bands = 1;
    }
    /* A knee at the top of the fitted range may lie anywhere up to the
     * highest step: "knee 20" read as placed there. */
    if (r->knee_rps > 0 && isfinite(r->knee_rps))
        add_vline(m, &m->knee_label, r->knee_at_or_above ? "knee \xE2\x89\xA5 " : "knee ",
                  r->knee_rps, "knee", REPORT_COLOR_KNEE);
}

void report_marks_free(struct report_marks *m)
{
    strbuf_free(&m->knee_label);
    strbuf_free(&m->cap_label);
}

/* Write chart c, a chart against load, with the knee/capacity lines and
 * the band beyond the capacity (marks, borrowed for the call). */
static void report_chart_write_marked(struct strbuf *b, struct svg_chart *c,
                                      const struct report_marks *marks)
{
    c->vlines = marks->vlines;
    c->n_vlines = marks->n_vlines;
    c->bands = &marks->band;
    c->n_bands = marks->n_bands;
    svg_chart_write(b, c);
}

/* The x axis of every chart against load: offered load, or achieved load
 * in a closed loop (docs/report.md), req/s, linear from 0, its range from
 * the data. */
static struct svg_axis report_load_axis(const struct report *r)
{
    return (struct svg_axis){.label = r->closed_loop ? "achieved load" : "offered load",
                             .unit = "req/s", .scale = SVG_SCALE_LINEAR, .min = NAN,
                             .max = NAN, .include_zero = 1};
}

/* A chart against load of the series se[0..nse) on a linear y axis
 * (label, unit) from 0, its range from the data, with the marks. */
static void report_rate_chart(struct strbuf *b, const struct report *r,
                              const struct report_marks *marks, const char *id, const char *title,
                              const char *ylabel, const char *yunit, struct svg_series *se,
                              size_t nse)
{
    struct svg_chart c = {
        .id = id,
        .title = title,
        .x = report_load_axis(r),
        .y = {.label = ylabel, .unit = yunit, .min = NAN, .max = NAN, .include_zero = 1},
        .series = se,
        .n_series = nse,
    };
    report_chart_write_marked(b, &c, marks);
}

/* A latency chart's title: "NAME WHAT against offered load" (achieved,
 * in a closed loop). */
static void report_load_title(char *buf, size_t len, const struct report *r, const char *name,
                              const char *what)
{
    snprintf(buf, len, "%s %s against %s load", name, what,
             r->closed_loop ? "achieved" : "offered");
}

/* The y axis of a latency chart: label, unit (", log scale" added into
 * ubuf when log_y), including 0, its range from the data. */
static struct svg_axis report_latency_axis(const char *label, const char *unit, int log_y,
                                           char *ubuf, size_t ulen)
{
    snprintf(ubuf, ulen, "%s%s", unit, log_y ? ", log scale" : "");
    return (struct svg_axis){.label = label,
                             .unit = ubuf,
                             .scale = log_y ? SVG_SCALE_LOG : SVG_SCALE_LINEAR,
                             .min = NAN,
                             .max = NAN,
                             .include_zero = 1};
}

/* Step s's REPORT_NPCT percentiles of metric m, ns (borrowed from s). */
static const uint64_t *report_metric_ns(const struct report_step *s,
                                        enum report_metric m)
{
    switch (m) {
    case REPORT_TTFT: return s->ttft_ns;
    case REPORT_TPOT: return s->tpot_ns;
    default: return s->e2e_ns;
    }
}

/* The metric's name in series keys: "ttft", "tpot", "e2e". */
static const char *report_metric_key(enum report_metric m)
{
    return m == REPORT_TTFT ? "ttft" : m == REPORT_TPOT ? "tpot" : "e2e";
}

/* Use a log y axis when the values span more than this ratio: past the
 * knee the tail grows by orders of magnitude and a linear axis would flatten
 * everything before it onto the floor. */
#define REPORT_LOG_RATIO 30.0

/* Widen [*vmin, *vmax], the range of a chart's values, by v. Only a v
 * above 0 can lower vmin (a log axis cannot show the others); NaN changes
 * nothing. Start from vmin = INFINITY, vmax = 0. */
static void report_range_add(double v, double *vmin, double *vmax)
{
    if (v > 0 && v < *vmin)
        *vmin = v;
    if (v > *vmax)
        *vmax = v;
}

/* 1 when values over [vmin, vmax] (from report_range_add) want a log y
 * axis: they span more than REPORT_LOG_RATIO. */
static int report_log_y(double vmin, double vmax)
{
    return vmax > 0 && isfinite(vmin) && vmax / vmin > REPORT_LOG_RATIO;
}

/* The ring flags of the curve steps order[0..n): 1 where the step is
 * INVALID, interrupted, empty (no request scheduled in its window) or not
 * steady, so its verdict shows on every chart against load (the capacity
 * leaves those steps out, even at 100% attainment, or at the 0% an empty
 * step reads). A new array of n + 1 (caller frees with free()); NULL when no step is either. */
static int report_step_hollow(const struct report_step *s)
{
    return s->invalid || s->interrupted || s->scheduled == 0 || !s->steady ||
           (s->verdict && strcmp(s->verdict, "empty") == 0);
}

static unsigned char *report_curve_hollow(const struct report *r, const size_t *order, size_t n)
{
    size_t any = 0;
    for (size_t i = 0; i < n; i++)
        any += report_step_hollow(&r->steps[order[i]]);
    if (!any)
        return NULL;
    unsigned char *h = ll_calloc(n + 1, 1);
    for (size_t i = 0; i < n; i++)
        h[i] = (unsigned char)report_step_hollow(&r->steps[order[i]]);
    return h;
}

/* The legend's note for the rings of report_curve_hollow: a series with no
 * points, appended to se (room for one more) when hollow is not NULL.
 * Returns the new series count. */
static size_t report_hollow_note(struct svg_series *se, size_t n_series,
                                 const unsigned char *hollow, const struct report *r)
{
    if (hollow == NULL)
        return n_series;
    int cut = 0, empty = 0;
    for (size_t i = 0; i < r->n_steps; i++) {
        cut |= r->steps[i].interrupted;
        empty |= !r->steps[i].recovery && r->steps[i].scheduled == 0;
    }
    static const char *const labels[2][2] = {
        {"ring: INVALID or not steady, no verdict",
         "ring: INVALID, empty or not steady, no verdict"},
        {"ring: INVALID, interrupted or not steady, no verdict",
         "ring: INVALID, interrupted, empty or not steady, no verdict"}};
    se[n_series] = (struct svg_series){.key = "hollow-note",
                                       .label = labels[cut][empty],
                                       .n = 0,
                                       .flags = SVG_MARKERS | SVG_HOLLOW,
                                       .color = REPORT_COLOR_STEP};
    return n_series + 1;
}

/* The series of one latency chart and the arrays they point into: p50,
 * p90 and p99 over the curve steps (x; y holds three rows of n + 1), then
 * the recovery step's p99 as rings (rx, ry), when it has ok requests.
 * vmin and vmax span the percentiles, in the chart's unit; the rings do not
 * count. The arrays are the chart's to free. */
struct report_latency_series {
    double *x, *y, *rx, *ry;
    unsigned char *hollow; /* report_curve_hollow of the curve steps; may be NULL */
    char keys[4][32], labels[4][48];
    struct svg_series series[5];
    size_t n_series;
    double vmin, vmax;
};

/* The three percentile lines of metric over the curve steps order[0..n),
 * in units of unit_ns ns; a step without ok requests is a gap (NaN). */
static void report_latency_curves(struct report_latency_series *ls, const struct report *r,
                                  const size_t *order, size_t n, enum report_metric metric,
                                  const char *name, double unit_ns)
{
    static const int pcts[3] = {REPORT_P50, REPORT_P90, REPORT_P99};
    static const char *const pct_names[3] = {"p50", "p90", "p99"};
    static const char *const colors[3] = {REPORT_COLOR_P50, REPORT_COLOR_P90,
                                          REPORT_COLOR_P99};

    ls->x = ll_calloc(n + 1, sizeof(double));
    ls->y = ll_calloc(3 * (n + 1), sizeof(double));
    ls->hollow = report_curve_hollow(r, order, n);
    for (size_t i = 0; i < n; i++) {
        const struct report_step *s = &r->steps[order[i]];
        ls->x[i] = report_step_x(r, s);
        for (int p = 0; p < 3; p++) {
            double v = s->ok > 0 ? report_ns_to(report_metric_ns(s, metric)[pcts[p]], unit_ns)
                                 : NAN;
            ls->y[p * (n + 1) + i] = v;
            report_range_add(v, &ls->vmin, &ls->vmax);
        }
    }
    for (int p = 0; p < 3; p++) {
        snprintf(ls->keys[p], sizeof(ls->keys[p]), "%s_%s", report_metric_key(metric),
                 pct_names[p]);
        snprintf(ls->labels[p], sizeof(ls->labels[p]), "%s %s", name, pct_names[p]);
        ls->series[ls->n_series++] = (struct svg_series){.key = ls->keys[p],
                                                         .label = ls->labels[p],
                                                         .x = ls->x,
                                                         .y = ls->y + p * (n + 1),
                                                         .n = n,
                                                         .flags = SVG_LINE | SVG_MARKERS,
                                                         .color = colors[p],
                                                         .hollow = ls->hollow};
    }
}

/* The p99 of metric of every recovery step with ok requests, as hollow
 * rings: a series only when there is one. */
static void report_latency_rings(struct report_latency_series *ls, const struct report *r,
                                 enum report_metric metric, double unit_ns)
{
    ls->rx = ll_calloc(r->n_steps + 1, sizeof(double));
    ls->ry = ll_calloc(r->n_steps + 1, sizeof(double));
    size_t nr = 0;
    for (size_t i = 0; i < r->n_steps; i++) {
        const struct report_step *s = &r->steps[i];
        if (!s->recovery || s->ok == 0)
            continue;
        ls->rx[nr] = report_step_x(r, s);
        ls->ry[nr] = report_ns_to(report_metric_ns(s, metric)[REPORT_P99], unit_ns);
        nr++;
    }
    if (nr == 0)
        return;
    snprintf(ls->keys[3], sizeof(ls->keys[3]), "%s_p99_recovery", report_metric_key(metric));
    snprintf(ls->labels[3], sizeof(ls->labels[3]), "recovery step p99");
    ls->series[ls->n_series++] = (struct svg_series){
        .key = ls->keys[3], .label = ls->labels[3], .x = ls->rx, .y = ls->ry, .n = nr,
        .flags = SVG_MARKERS | SVG_HOLLOW, .color = "#111827"};
}

/* A latency chart: the percentile lines and the recovery rings, the SLO
 * line (which also widens the y range), the knee and capacity markers. */
void report_latency_chart(struct strbuf *b, const struct report *r,
                          const size_t *order, size_t n,
                          const struct report_marks *marks,
                          enum report_metric metric, const char *id,
                          const char *name, const char *unit,
                          double unit_ns, double slo)
{
    struct report_latency_series ls = {.vmin = INFINITY, .vmax = 0};
    report_latency_curves(&ls, r, order, n, metric, name, unit_ns);
    report_latency_rings(&ls, r, metric, unit_ns);
    ls.n_series = report_hollow_note(ls.series, ls.n_series, ls.hollow, r);

    struct strbuf slo_label;
    strbuf_init(&slo_label);
    struct svg_hline hl = {0};
    if (slo > 0) {
        strbuf_puts(&slo_label, "SLO ");
        report_put_value(&slo_label, slo);
        strbuf_printf(&slo_label, " %s", unit);
        hl = (struct svg_hline){.y = slo, .key = "slo", .label = slo_label.data};
        report_range_add(slo, &ls.vmin, &ls.vmax);
    }
    int log_y = report_log_y(ls.vmin, ls.vmax);
    char yunit[48];
    char title[96];
    report_load_title(title, sizeof title, r, name, "percentiles");

    struct svg_chart c = {
        .id = id,
        .title = title,
        .x = report_load_axis(r),
        .y = report_latency_axis(name, unit, log_y, yunit, sizeof yunit),
        .series = ls.series,
        .n_series = ls.n_series,
        .hlines = &hl,
        .n_hlines = slo > 0 ? 1 : 0,
        .empty_note = "no successful requests",
    };
    report_chart_write_marked(b, &c, marks);
    strbuf_free(&slo_label);
    free(ls.x);
    free(ls.y);
    free(ls.rx);
    free(ls.ry);
    free(ls.hollow);
}

/* The x of each point of a curve against load: report_step_x of the steps
 * order[0..n), in a new array of n + 1 (caller frees with free()). */
static double *report_curve_x(const struct report *r, const size_t *order, size_t n)
{
    double *x = ll_calloc(n + 1, sizeof(double));
    for (size_t i = 0; i < n; i++)
        x[i] = report_step_x(r, &r->steps[order[i]]);
    return x;
}

/* One curve against load: x and y of the steps order[0..n), their rings,
 * and its series with the rings' legend note. */
struct report_curve {
    size_t n;
    double *x, *y;
    unsigned char *hollow;
    struct svg_series se[2];
    size_t nse;
};

/* cv for the double at byte offset field of each step (a member of
 * struct report_step), times scale, as the series key, label, color. */
static void report_curve_build(struct report_curve *cv, const struct report *r, const size_t *order,
                               size_t n, size_t field, double scale, const char *key,
                               const char *label, const char *color)
{
    *cv = (struct report_curve){.n = n};
    cv->x = report_curve_x(r, order, n);
    cv->y = ll_calloc(n + 1, sizeof(double));
    for (size_t i = 0; i < n; i++)
        cv->y[i] = *(const double *)((const char *)&r->steps[order[i]] + field) * scale;
    cv->hollow = report_curve_hollow(r, order, n);
    cv->se[0] = (struct svg_series){.key = key,
                                    .label = label,
                                    .x = cv->x,
                                    .y = cv->y,
                                    .n = cv->n,
                                    .color = color,
                                    .hollow = cv->hollow};
    cv->nse = report_hollow_note(cv->se, 1, cv->hollow, r);
}

static void report_curve_free(struct report_curve *cv)
{
    free(cv->x);
    free(cv->y);
    free(cv->hollow);
}

void report_attainment_chart(struct strbuf *b, const struct report *r,
                             const size_t *order, size_t n,
                             const struct report_marks *marks)
{
    struct report_curve cv;
    report_curve_build(&cv, r, order, n, offsetof(struct report_step, attainment), 100.0,
                       "attainment", "requests within SLO", REPORT_COLOR_CAP);
    struct strbuf lab;
    strbuf_init(&lab);
    struct svg_hline hl = {0};
    if (r->attainment_target > 0) {
        strbuf_puts(&lab, "target ");
        report_put_value(&lab, r->attainment_target * 100);
        strbuf_puts(&lab, "%");
        hl = (struct svg_hline){.y = r->attainment_target * 100, .key = "target",
                                .label = lab.data};
    }
    struct svg_chart c = {
        .id = "chart-attainment",
        .title = "SLO attainment against offered load",
        .x = report_load_axis(r),
        .y = {.label = "within SLO", .unit = "%", .min = 0, .max = 100},
        .series = cv.se,
        .n_series = cv.nse,
        .hlines = &hl,
        .n_hlines = r->attainment_target > 0 ? 1 : 0,
        .empty_note = "no SLO set",
    };
    report_chart_write_marked(b, &c, marks);
    strbuf_free(&lab);
    report_curve_free(&cv);
}

void report_throughput_chart(struct strbuf *b, const struct report *r,
                             const size_t *order, size_t n,
                             const struct report_marks *marks)
{
    /* achieved, completed and goodput: rows of y, n + 1 each */
    static const struct {
        const char *key, *label, *color;
    } rates[3] = {
        {"achieved", "sent (achieved)", "#56b4e9"},
        {"completed", "completed ok", REPORT_COLOR_P50},
        {"goodput", "goodput (within SLO)", REPORT_COLOR_CAP},
    };
    double *x = report_curve_x(r, order, n);
    double *y = ll_calloc(3 * (n + 1), sizeof(double));
    double ix[2] = {0, 0}, iy[2] = {0, 0};
    for (size_t i = 0; i < n; i++) {
        const struct report_step *s = &r->steps[order[i]];
        y[i] = s->achieved_rps;
        y[(n + 1) + i] = s->completed_rps;
        y[2 * (n + 1) + i] = s->goodput_rps;
        if (x[i] > ix[1])
            ix[1] = iy[1] = x[i];
    }
    unsigned char *hollow = report_curve_hollow(r, order, n);
    struct svg_series se[5] = {
        {.key = "ideal",
         .label = "offered (y = x)",
         .x = ix,
         .y = iy,
         .n = n > 0 ? 2 : 0,
         .flags = SVG_LINE | SVG_DASHED,
         .color = "#9ca3af"},
    };
    for (size_t k = 0; k < 3; k++)
        se[1 + k] = (struct svg_series){.key = rates[k].key,
                                        .label = rates[k].label,
                                        .x = x,
                                        .y = y + k * (n + 1),
                                        .n = n,
                                        .flags = SVG_LINE | SVG_MARKERS,
                                        .color = rates[k].color,
                                        .hollow = hollow};
    size_t nse = report_hollow_note(se, 4, hollow, r);
    report_rate_chart(b, r, marks, "chart-throughput",
                      "Throughput and goodput against offered load", "rate", "req/s", se, nse);
    free(x);
    free(y);
    free(hollow);
}

void report_tokens_chart(struct strbuf *b, const struct report *r,
                         const size_t *order, size_t n,
                         const struct report_marks *marks)
{
    struct report_curve cv;
    report_curve_build(&cv, r, order, n, offsetof(struct report_step, output_tps), 1.0,
                       "output_tps", "output tokens/s", "#cc79a7");
    report_rate_chart(b, r, marks, "chart-tokens", "Output tokens per second against offered load",
                      "output", "tokens/s", cv.se, cv.nse);
    report_curve_free(&cv);
}

void report_energy_chart(struct strbuf *b, const struct report *r, const size_t *order, size_t n,
                         const struct report_marks *marks)
{
    struct report_curve cv;
    report_curve_build(&cv, r, order, n, offsetof(struct report_step, j_per_output_token), 1.0,
                       "j_per_output_token", "GPU energy per output token", "#e69f00");
    struct svg_chart c = {
        .id = "chart-energy",
        .title = r->closed_loop ? "Energy per output token against achieved load"
                                : "Energy per output token against offered load",
        .x = report_load_axis(r),
        .y = {.label = "energy", .unit = "J/token", .min = NAN, .max = NAN, .include_zero = 1},
        .series = cv.se,
        .n_series = cv.nse,
        .empty_note = "no energy figure (the GPU scrapes did not cover a step)",
    };
    report_chart_write_marked(b, &c, marks);
    report_curve_free(&cv);
}

/* Under the errors chart, when the client cancelled any request: how
 * many, in how many steps, why, and that they are not drawn. Those of a
 * step a stop signal cut short are, most of them, what the server had not
 * answered when --grace ran out (a sim serving about 7 a second offered
 * 20, Ctrl-C 2.5 s in: 28 of 49, and the line named the workload's
 * --cancel-fraction, which cancelled none): the line counts them apart.
 * Elsewhere only the workload cancels. */
static void report_cancelled_note(struct strbuf *b, const struct report *r)
{
    uint64_t cancelled = 0, stopped = 0, scheduled = 0;
    size_t steps = 0;
    for (size_t i = 0; i < r->n_steps; i++) {
        uint64_t c = r->steps[i].by_kind[REC_CANCELLED];
        cancelled += c;
        stopped += r->steps[i].interrupted ? c : 0;
        scheduled += r->steps[i].scheduled;
        steps += c > 0;
    }
    if (cancelled == 0)
        return;
    strbuf_printf(b, "<p class=\"note\" id=\"errors-cancelled\">The client cancelled %llu",
                  (unsigned long long)cancelled);
    if (scheduled >= cancelled)
        strbuf_printf(b, " of the %llu requests scheduled", (unsigned long long)scheduled);
    strbuf_printf(b, " (in %zu of the %zu steps)", steps, r->n_steps);
    if (stopped == 0)
        strbuf_puts(b, ": the workload's own cancellations (its cancel, --cancel-fraction), "
                       "not the server's errors, so not drawn.</p>\n");
    else if (stopped == cancelled)
        strbuf_puts(b, ", all in the step a stop signal cut short (no verdict): still unanswered "
                       "when --grace ran out, or the workload's own cancellations; not errors "
                       "the server returned, so not drawn.</p>\n");
    else
        strbuf_printf(b,
                      ": %llu in the step a stop signal cut short (no verdict), still unanswered "
                      "when --grace ran out or the workload's own; the other %llu the "
                      "workload's own cancellations (its cancel, --cancel-fraction). Not errors "
                      "the server returned, so not drawn.</p>\n",
                      (unsigned long long)stopped, (unsigned long long)(cancelled - stopped));
}

void report_errors_chart(struct strbuf *b, const struct report *r)
{
    size_t n = r->n_steps;
    char **cats = ll_calloc(n + 1, sizeof(char *));
    double *vals = ll_calloc((size_t)REC_KIND_COUNT * (n + 1), sizeof(double));
    struct svg_bar_stack stacks[REC_KIND_COUNT];
    size_t nst = 0;
    struct strbuf lab;
    strbuf_init(&lab);
    for (size_t i = 0; i < n; i++) {
        report_step_label(r, &r->steps[i], &lab);
        cats[i] = ll_strdup(lab.data);
    }
    /* The client's own cancellations (the workload's, or a stopped
     * run's) are not the server's errors (stats_error_share): a workload
     * that cancels 30% on purpose drew a wall of them at every load. They
     * are counted in a line under the chart instead. */
    for (int k = 0; k < REC_KIND_COUNT; k++) {
        if (k == REC_OK || k == REC_CANCELLED)
            continue;
        uint64_t total = 0;
        for (size_t i = 0; i < n; i++)
            total += r->steps[i].by_kind[k];
        if (total == 0)
            continue;
        double *v = vals + nst * (n + 1);
        for (size_t i = 0; i < n; i++)
            v[i] = (double)r->steps[i].by_kind[k];
        /* Colours by kind, not by position, so a kind keeps its colour
         * from one report to the next. */
        stacks[nst] = (struct svg_bar_stack){.key = rec_kind_name((enum rec_kind)k),
                                             .values = v,
                                             .color = svg_palette((size_t)k - 1)};
        nst++;
    }
    struct svg_bar_chart c = {
        .id = "chart-errors", .title = "Errors by kind per step",
        .width = REPORT_WIDE_WIDTH, .height = 280,
        .categories = (const char *const *)cats, .n_categories = n,
        .x_label = r->closed_loop ? "step (achieved req/s)" : "step (offered req/s)",
        .y = {.label = "requests", .min = NAN, .max = NAN},
        .stacks = stacks, .n_stacks = nst,
        .empty_note = "no errors in any step",
    };
    svg_bar_chart_write(b, &c);
    report_cancelled_note(b, r);
    for (size_t i = 0; i < n; i++)
        free(cats[i]);
    free(cats);
    free(vals);
    strbuf_free(&lab);
}

/* The cumulative fraction levels (in %) at which a step's TTFT
 * distribution is sampled from its histogram. */
static const double report_cdf_levels[] = {
    0.5, 1, 2, 3, 5, 7.5, 10, 15, 20, 25, 30, 35, 40, 45, 50, 55, 60, 65, 70,
    75, 80, 85, 90, 92.5, 95, 97, 98, 99, 99.5, 99.9, 100,
};

/* The most points of one step's CDF line. */
#define REPORT_CDF_POINTS \
    (LL_ARRAY_LEN(report_cdf_levels) > REPORT_NPCT ? LL_ARRAY_LEN(report_cdf_levels) \
                                                   : REPORT_NPCT)

/* Step s's TTFT distribution as points (x: TTFT in ms, y: % of its ok
 * requests at or below) into sx and sy (REPORT_CDF_POINTS each): from its
 * histogram at report_cdf_levels, else from its six stored percentiles.
 * Returns the count; 0 when s has no ok request. */
static size_t report_cdf_points(const struct report_step *s, double *sx, double *sy)
{
    static const double six_levels[REPORT_NPCT] = {50, 90, 95, 99, 99.9, 100};
    size_t k = 0;
    if (s->ttft_hist != NULL && hist_count(s->ttft_hist) > 0) {
        for (size_t l = 0; l < LL_ARRAY_LEN(report_cdf_levels); l++) {
            sx[k] = (double)hist_percentile(s->ttft_hist, report_cdf_levels[l]) / 1e6;
            sy[k] = report_cdf_levels[l];
            k++;
        }
    } else if (s->ok > 0) {
        for (size_t l = 0; l < REPORT_NPCT; l++) {
            sx[k] = (double)s->ttft_ns[l] / 1e6;
            sy[k] = six_levels[l];
            k++;
        }
    }
    return k;
}

/* The CDF chart's lines and the arrays they point into: one line per step
 * that has points, the curve steps by load and then the recovery step
 * (dashed), coloured along a ramp from light load to heavy. */
struct report_cdf_lines {
    double *x, *y;              /* REPORT_CDF_POINTS per step, ms and % */
    struct svg_series *series;  /* n of them */
    char (*keys)[32], (*labels)[40], (*colors)[8];
    size_t n;
};

/* Fill cl from r; free with report_cdf_lines_free. */
static void report_cdf_lines_build(struct report_cdf_lines *cl, const struct report *r)
{
    size_t per = REPORT_CDF_POINTS;
    size_t *order = ll_calloc(r->n_steps + 1, sizeof(size_t));
    size_t no = report_curve_order(r, order);
    /* Recovery steps after the curve steps. */
    for (size_t i = 0; i < r->n_steps; i++)
        if (r->steps[i].recovery)
            order[no++] = i;
    cl->x = ll_calloc(per * (no + 1), sizeof(double));
    cl->y = ll_calloc(per * (no + 1), sizeof(double));
    cl->series = ll_calloc(no + 1, sizeof(*cl->series));
    cl->keys = ll_calloc(no + 1, sizeof(*cl->keys));
    cl->labels = ll_calloc(no + 1, sizeof(*cl->labels));
    cl->colors = ll_calloc(no + 1, sizeof(*cl->colors));
    cl->n = 0;
    struct strbuf lab;
    strbuf_init(&lab);
    for (size_t oi = 0; oi < no; oi++) {
        const struct report_step *s = &r->steps[order[oi]];
        double *sx = cl->x + per * oi, *sy = cl->y + per * oi;
        size_t k = report_cdf_points(s, sx, sy);
        if (k == 0)
            continue;
        size_t j = cl->n++;
        report_step_label(r, s, &lab);
        snprintf(cl->keys[j], sizeof(cl->keys[j]), "ttft_cdf_%zu", order[oi]);
        snprintf(cl->labels[j], sizeof(cl->labels[j]), "%s req/s", lab.data);
        svg_ramp_color(no > 1 ? (double)oi / (double)(no - 1) : 0, cl->colors[j]);
        cl->series[j] = (struct svg_series){
            .key = cl->keys[j], .label = cl->labels[j], .x = sx, .y = sy, .n = k,
            .flags = SVG_LINE | (s->recovery ? SVG_DASHED : 0), .color = cl->colors[j]};
    }
    strbuf_free(&lab);
    free(order);
}

static void report_cdf_lines_free(struct report_cdf_lines *cl)
{
    free(cl->x);
    free(cl->y);
    free(cl->series);
    free(cl->keys);
    free(cl->labels);
    free(cl->colors);
}

void report_cdf_chart(struct strbuf *b, const struct report *r)
{
    struct report_cdf_lines cl;
    report_cdf_lines_build(&cl, r);
    struct strbuf slo;
    strbuf_init(&slo);
    struct svg_vline vl = {0};
    if (r->slo_ttft_ms > 0) {
        strbuf_puts(&slo, "SLO ");
        report_put_value(&slo, r->slo_ttft_ms);
        strbuf_puts(&slo, " ms");
        vl = (struct svg_vline){.x = r->slo_ttft_ms, .key = "slo", .label = slo.data,
                                .color = "#b91c1c"};
    }
    struct svg_chart c = {
        .id = "chart-ttft-cdf", .title = "TTFT distribution of each step (CDF)",
        .width = REPORT_WIDE_WIDTH, .height = 380,
        .x = {.label = "TTFT", .unit = "ms, log scale", .scale = SVG_SCALE_LOG,
              .min = NAN, .max = NAN},
        .y = {.label = "requests at or below", .unit = "%", .min = 0, .max = 100},
        .series = cl.series, .n_series = cl.n,
        .vlines = &vl, .n_vlines = r->slo_ttft_ms > 0 ? 1 : 0,
        .empty_note = "no successful requests",
    };
    svg_chart_write(b, &c);
    strbuf_free(&slo);
    report_cdf_lines_free(&cl);
}

/* p99 of one class's TTFT or TPOT against offered load: one series per
 * class (data-series is the class name), the sweep's knee and capacity
 * marked. A step where the class has no ok request is a gap. */
void report_class_chart(struct strbuf *b, const struct report *r,
                        const size_t *order, size_t n,
                        const struct report_marks *marks, enum report_metric metric,
                        const char *id, const char *name)
{
    size_t nc = r->n_classes;
    double *x = report_curve_x(r, order, n);
    double *y = ll_calloc(nc * (n + 1) + 1, sizeof(double));
    struct svg_series *series = ll_calloc(nc + 1, sizeof(*series));
    double vmin = INFINITY, vmax = 0;
    for (size_t k = 0; k < nc; k++) {
        const struct report_class *c = &r->classes[k];
        double *yk = y + k * (n + 1);
        for (size_t i = 0; i < n; i++) {
            const struct report_class_step *cs = &c->steps[order[i]];
            const uint64_t *v = metric == REPORT_TTFT ? cs->ttft_ns : cs->tpot_ns;
            yk[i] = cs->present && cs->ok > 0 ? report_ns_to(v[REPORT_P99], 1e6) : NAN;
            report_range_add(yk[i], &vmin, &vmax);
        }
        series[k] = (struct svg_series){.key = c->name, .label = c->name, .x = x, .y = yk,
                                        .n = n, .flags = SVG_LINE | SVG_MARKERS};
    }
    /* Each class's own threshold of this metric, a dashed line in its
     * colour (data-key "slo-NAME"); the classes that share one threshold
     * share one line, labelled with all their names. */
    struct svg_hline *hl = ll_calloc(nc + 1, sizeof(*hl));
    struct strbuf *hlab = ll_calloc(nc + 1, sizeof(*hlab));
    char(*hkey)[80] = ll_calloc(nc + 1, sizeof(*hkey));
    size_t nh = 0;
    for (size_t k = 0; k < nc; k++) {
        struct slo slo;
        char err[8];
        if (r->classes[k].slo == NULL || slo_parse(r->classes[k].slo, &slo, err, sizeof err) != 0)
            continue;
        uint64_t t = metric == REPORT_TTFT ? slo.ttft_ns : slo.tpot_ns;
        if (t == 0)
            continue;
        double v = report_ns_to(t, 1e6);
        size_t h = 0;
        while (h < nh && hl[h].y != v)
            h++;
        if (h == nh) {
            strbuf_init(&hlab[nh]);
            snprintf(hkey[nh], sizeof hkey[nh], "slo-%s", r->classes[k].name);
            hl[nh] = (struct svg_hline){.y = v, .key = hkey[nh], .color = svg_palette(k)};
            nh++;
        } else {
            strbuf_puts(&hlab[h], ", ");
            hl[h].color = NULL; /* shared: the SLO red */
        }
        strbuf_puts(&hlab[h], r->classes[k].name);
        report_range_add(v, &vmin, &vmax);
    }
    for (size_t h = 0; h < nh; h++) {
        strbuf_puts(&hlab[h], " SLO ");
        report_put_value(&hlab[h], hl[h].y);
        strbuf_puts(&hlab[h], " ms");
        hl[h].label = hlab[h].data;
    }
    int log_y = report_log_y(vmin, vmax);
    char ylabel[48], yunit[48], title[96];
    snprintf(ylabel, sizeof(ylabel), "%s p99", name);
    report_load_title(title, sizeof title, r, name, "p99 per class");
    struct svg_chart c = {
        .id = id,
        .title = title,
        .x = report_load_axis(r),
        .y = report_latency_axis(ylabel, "ms", log_y, yunit, sizeof yunit),
        .series = series,
        .n_series = nc,
        .hlines = hl,
        .n_hlines = nh,
        .empty_note = "no successful requests",
    };
    report_chart_write_marked(b, &c, marks);
    for (size_t h = 0; h < nh; h++)
        strbuf_free(&hlab[h]);
    free(hl);
    free(hlab);
    free(hkey);
    free(series);
    free(x);
    free(y);
}
