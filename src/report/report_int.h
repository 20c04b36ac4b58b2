/* report_int.h: what the four files of report.html share; nothing outside
 * src/report/report_*.c includes it (the public face is report_html.h).
 *
 *   report_html.c    the page: skeleton, CSS, header, cards, findings, the
 *                    sections in their order, the file; and the conventions
 *                    below that every part uses
 *   report_charts.c  the charts (inline SVG through svg.h) against load,
 *                    per step, and the TTFT distribution
 *   report_timecharts.c  the charts over the run's time
 *   report_gpu.c     the GPU power and utilisation over time
 *   report_tables.c  the steps table and the class table
 *
 * A function here that takes b appends to it; all abort on out of memory,
 * like report_html_render. r and everything it points to are borrowed. */
#ifndef LL_REPORT_INT_H
#define LL_REPORT_INT_H

#include <stddef.h>

#include "report/svg.h"
#include "util/strbuf.h"

/* Defined in report_html.h, which each file includes first; not included
 * here, so that report_html.c does not reach its own header through this
 * one (make check-layers takes that for a cycle). */
struct report;
struct report_step;

/* --- conventions (report_html.c) --- */

/* Append v as text for people: NaN or infinity is an en dash; otherwise
 * about 3 significant digits, fixed point, no exponent. */
void report_put_value(struct strbuf *b, double v);

/* The x value of step s on the curves, req/s: its offered load, or (closed
 * loop, or no offered rate) its achieved send rate. */
double report_step_x(const struct report *r, const struct report_step *s);

/* Write to idx the indices of r's non-recovery steps sorted by x (stable);
 * returns their count. idx holds at least r->n_steps entries. */
size_t report_curve_order(const struct report *r, size_t *idx);

/* Replace b's text by step s's label in legends and categories: its x
 * ("20"), with " rec" after it for the recovery step ("20 rec"). */
void report_step_label(const struct report *r, const struct report_step *s,
                       struct strbuf *b);

/* --- the page's parts the run's page (report_run.c) shares --- */

/* The head up to the opening <main>: doctype, meta, title (escaped), the
 * CSS. */
void report_page_head(struct strbuf *b, const char *title);

/* The footer, with version (NULL = none), and the end of the document. */
void report_page_foot(struct strbuf *b, const char *version);

/* A figure's opening with its caption: class cls ("wide" or NULL), the
 * title and how (NULL = none) to read it; report_figure_close ends it. */
void report_figure_open(struct strbuf *b, const char *cls, const char *title, const char *how);
void report_figure_close(struct strbuf *b);

/* One card of class cls: key above, v in large type with its unit, or the
 * text none when v is not a positive number, and detail below. */
void report_card(struct strbuf *b, const char *cls, const char *key, double v, const char *unit,
                 const char *none, const char *detail);

/* --- charts (report_charts.c) --- */

/* The charts' palette (report_charts.c, report_timecharts.c). */
#define REPORT_WIDE_WIDTH 1200 /* viewBox width of full-width charts */
#define REPORT_COLOR_P50 "#0072b2"
#define REPORT_COLOR_P90 "#e69f00"
#define REPORT_COLOR_P99 "#d55e00"
#define REPORT_COLOR_KNEE "#6d28d9"
#define REPORT_COLOR_CAP "#047857"
#define REPORT_COLOR_STEP "#9ca3af"
#define REPORT_COLOR_PROBE "#e5e7eb"

/* The markers every chart against offered load shares: a dotted line at the
 * SLO capacity and one at the knee (each only when found), and the shaded
 * band beyond the capacity. The labels are owned here: init fills m from r,
 * free releases the labels (the vlines point into them until then). */
struct report_marks {
    struct svg_vline vlines[2];
    size_t n_vlines;
    struct svg_band band;
    size_t n_bands;
    struct strbuf knee_label, cap_label;
};

void report_marks_init(struct report_marks *m, const struct report *r);
void report_marks_free(struct report_marks *m);

/* The latencies a chart against offered load can draw. */
enum report_metric { REPORT_TTFT, REPORT_TPOT, REPORT_E2E };

/* The charts against load take the curve steps as order[0..n) (from
 * report_curve_order) and the sweep's markers. */

/* p50, p90 and p99 of metric against load, in unit (unit_ns ns each: 1e6
 * for ms, 1e9 for s), the threshold slo in that unit as a dashed line
 * (0 = none), the recovery step's p99 as a ring; a log y axis when the
 * values span more than 30x. id is the <svg> id, name the metric's name. */
void report_latency_chart(struct strbuf *b, const struct report *r,
                          const size_t *order, size_t n,
                          const struct report_marks *marks,
                          enum report_metric metric, const char *id,
                          const char *name, const char *unit,
                          double unit_ns, double slo);

/* SLO attainment of each step, %, with the attainment target's line. */
void report_attainment_chart(struct strbuf *b, const struct report *r,
                             const size_t *order, size_t n,
                             const struct report_marks *marks);

/* Achieved, completed and goodput req/s against load, with y = x. */
void report_throughput_chart(struct strbuf *b, const struct report *r,
                             const size_t *order, size_t n,
                             const struct report_marks *marks);

/* The GPUs' energy per output token (J) against load: the efficiency
 * curve (--gpu-metrics). */
void report_energy_chart(struct strbuf *b, const struct report *r, const size_t *order, size_t n,
                         const struct report_marks *marks);

/* Output tokens/s against load. */
void report_tokens_chart(struct strbuf *b, const struct report *r, const size_t *order, size_t n,
                         const struct report_marks *marks);

/* Errors by kind per step (every step, in the order run), stacked bars;
 * only the kinds that occurred, each in its own colour, the client's own
 * cancellations (`cancelled`) not among them: p#errors-cancelled under
 * the chart counts those, when there were any. */
void report_errors_chart(struct strbuf *b, const struct report *r);

/* --- charts over time (report_timecharts.c) --- */

/* Thin samples [0, n) into at most max points (max >= 1) by keeping, in
 * each run of ceil(n / max) samples, the one with the largest value, so
 * peaks survive. Writes the kept indices to keep; returns their count. */
size_t report_thin(const double *v, size_t n, size_t max, size_t *keep);

/* The marks of a chart over time: a line at each step's start and the
 * capacity probe's band. */
struct report_time_marks {
    struct svg_vline *v;
    char (*labels)[24];
    size_t nv;
    struct svg_band band;
    int probe;
};

void report_time_marks_init(struct report_time_marks *tm, const struct report *r);

/* The probe's band, and its legend entry appended at se[nse] (room for
 * one more) when there is one. Returns the new series count. */
size_t report_time_marks_probe(struct report_time_marks *tm, const struct report *r,
                               struct svg_series *se, size_t nse);

/* Write chart c over time: x the time since the start, with tm's marks. */
void report_time_chart_write(struct strbuf *b, struct svg_chart *c,
                             const struct report_time_marks *tm, const struct report *r);
void report_time_marks_free(struct report_time_marks *tm);

/* The GPUs' power (util = 0) or utilisation (util = 1) over time, a line
 * per telemetry source (report_gpu.c). */
void report_gpu_chart(struct strbuf *b, const struct report *r, int util);

/* The client's requests in flight over the whole run, thinned to about
 * REPORT_MAX_TS_POINTS, with a line at the start of each step. */
void report_inflight_chart(struct strbuf *b, const struct report *r);

/* The server's scrapes over time: its queue and running batch (kv = 0),
 * or its KV cache usage in % (kv = 1). */
void report_server_chart(struct strbuf *b, const struct report *r, int kv);

/* --- the TTFT distribution and the classes (report_charts.c) --- */

/* The TTFT distribution (CDF) of every step, one line per step, the
 * recovery step dashed, the TTFT SLO as a vertical line. */
void report_cdf_chart(struct strbuf *b, const struct report *r);

/* p99 of metric (REPORT_TTFT or REPORT_TPOT, in ms) of each traffic class
 * against the whole step's load, one line per class. */
void report_class_chart(struct strbuf *b, const struct report *r,
                        const size_t *order, size_t n,
                        const struct report_marks *marks, enum report_metric metric,
                        const char *id, const char *name);

/* --- tables (report_tables.c) --- */

/* table#steps: every step in the order run, one row each, and its note. */
void report_table(struct strbuf *b, const struct report *r);

/* With a cold start in any step: a heading and table#cold, one row per
 * such step (its cold requests beside its warm TTFT), and its note;
 * nothing otherwise. */
void report_cold_table(struct strbuf *b, const struct report *r);

/* Each class's SLO capacity in words, then table#classes: one row per step
 * and class present, and its note. */
void report_class_table(struct strbuf *b, const struct report *r);

/* The endpoints' URLs, then table#endpoints: one row per step and
 * endpoint (several --url only). */
void report_endpoint_table(struct strbuf *b, const struct report *r);

#endif
