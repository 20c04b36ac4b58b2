/* report_html.c: the sweep's report.html.
 *
 * The page, top to bottom:
 *
 *   header      title, the run's facts (target, model, mode, SLOs), banners
 *               for an INVALID run and for closed loop
 *   findings    SLO capacity, knee, peak goodput, peak output tokens/s in
 *               large type, then the sweep's findings in words
 *   latency     TTFT, TPOT and E2E percentiles against offered load, with
 *               the SLO threshold, the knee and the capacity marked, and
 *               SLO attainment against offered load
 *   throughput  achieved, completed and goodput against offered (with the
 *               y = x line), output tokens/s against offered
 *   errors      errors by kind per step, stacked
 *   over time   in-flight requests over the whole run with the step
 *               boundaries; the server's queue, batch and KV cache when scraped
 *   TTFT        the TTFT distribution (CDF) of each step, one line per step
 *   classes     with two traffic classes or more: each class's SLO capacity,
 *               its TTFT and TPOT p99 against offered load (one line per
 *               class), and a table of every step and class
 *   table       every step, one row each
 *
 * Curves against offered load use the steps other than the recovery step,
 * sorted by offered load; the recovery step is drawn as a lone ring, so a
 * server that did not recover shows it. Every figure comes from the struct:
 * the page computes no statistic of its own beyond maxima for the cards. */
#include "report/report_html.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "report/svg.h"
#include "util/util.h"

#define REPORT_WIDE_WIDTH 1200      /* viewBox width of full-width charts */
#define REPORT_COLOR_P50 "#0072b2"
#define REPORT_COLOR_P90 "#e69f00"
#define REPORT_COLOR_P99 "#d55e00"
#define REPORT_COLOR_KNEE "#6d28d9"
#define REPORT_COLOR_CAP "#047857"
#define REPORT_COLOR_STEP "#9ca3af"

static const char report_css[] =
    ":root{--fg:#111827;--muted:#6b7280;--line:#e5e7eb;--panel:#ffffff;"
    "--bg:#f6f7f9;--bad:#b91c1c;--good:#047857;--knee:#6d28d9}\n"
    "*{box-sizing:border-box}\n"
    "html{-webkit-text-size-adjust:100%}\n"
    "body{margin:0;background:var(--bg);color:var(--fg);"
    "font-family:system-ui,-apple-system,'Segoe UI',Roboto,'Helvetica Neue',Arial,sans-serif;"
    "font-size:15px;line-height:1.5}\n"
    "main{max-width:1240px;margin:0 auto;padding:28px 24px 56px}\n"
    "h1{font-size:26px;line-height:1.2;margin:0 0 4px;letter-spacing:-0.01em}\n"
    "h2{font-size:18px;margin:34px 0 12px;padding-bottom:6px;border-bottom:1px solid var(--line)}\n"
    "h3{font-size:15px;margin:0}\n"
    ".sub{color:var(--muted);margin:0 0 14px}\n"
    ".facts{display:flex;flex-wrap:wrap;gap:2px 32px;margin:0;font-size:14px}\n"
    ".facts div{display:flex;gap:8px;min-width:0}\n"
    ".facts dt{color:var(--muted);flex:0 0 auto}\n"
    ".facts dd{margin:0;overflow-wrap:anywhere}\n"
    ".banner{border-radius:8px;padding:10px 14px;margin:14px 0;font-weight:600}\n"
    ".banner.invalid{background:#fee2e2;color:#7f1d1d;border:1px solid #fca5a5}\n"
    ".banner.closed{background:#fef3c7;color:#78350f;border:1px solid #fcd34d}\n"
    ".cards{display:grid;grid-template-columns:repeat(auto-fit,minmax(230px,1fr));"
    "gap:14px;margin:22px 0 8px}\n"
    ".card{background:var(--panel);border:1px solid var(--line);border-radius:10px;"
    "padding:14px 18px}\n"
    ".card .k{font-size:13px;color:var(--muted);text-transform:uppercase;letter-spacing:0.04em}\n"
    ".card .v{font-size:34px;font-weight:700;line-height:1.15;letter-spacing:-0.02em;"
    "font-variant-numeric:tabular-nums}\n"
    ".card .u{font-size:16px;font-weight:500;color:var(--muted);margin-left:4px}\n"
    ".card .d{font-size:13px;color:var(--muted)}\n"
    ".card.cap .v{color:var(--good)}\n"
    ".card.knee .v{color:var(--knee)}\n"
    ".card .v.none{color:var(--muted);font-size:24px}\n"
    ".findings{background:var(--panel);border:1px solid var(--line);border-radius:10px;"
    "padding:12px 18px;margin:14px 0 0;white-space:pre-line}\n"
    ".grid{display:grid;grid-template-columns:repeat(auto-fit,minmax(460px,1fr));gap:16px}\n"
    "figure{margin:0;background:var(--panel);border:1px solid var(--line);border-radius:10px;"
    "padding:14px 14px 6px;min-width:0}\n"
    "figure.wide{grid-column:1/-1}\n"
    "figcaption{margin:0 4px 6px}\n"
    "figcaption p{margin:2px 0 0;color:var(--muted);font-size:13px}\n"
    "svg.chart{display:block;width:100%;height:auto}\n"
    ".tablewrap{overflow-x:auto;background:var(--panel);border:1px solid var(--line);"
    "border-radius:10px}\n"
    "table{border-collapse:collapse;width:100%;font-size:12px;"
    "font-variant-numeric:tabular-nums}\n"
    "th,td{padding:5px 5px;text-align:right;white-space:nowrap;border-bottom:1px solid var(--line)}\n"
    "th{background:#f3f4f6;font-weight:600;vertical-align:bottom;line-height:1.25;"
    "white-space:normal}\n"
    "td.l{white-space:normal;min-width:9em}\n"
    ".note{color:var(--muted);font-size:13px;margin:8px 2px 0}\n"
    "th.l,td.l{text-align:left}\n"
    "tr.over td{background:#fef2f2}\n"
    "tr.recovery td{font-style:italic}\n"
    "td.bad{color:var(--bad);font-weight:600}\n"
    "footer{margin-top:28px;color:var(--muted);font-size:12.5px}\n"
    "@media (max-width:560px){main{padding:16px 10px}.grid{grid-template-columns:1fr}"
    ".card .v{font-size:28px}}\n"
    "@media print{body{background:#fff;font-size:12px}main{max-width:none;padding:0}"
    "figure,.card,.tablewrap{border-color:#d1d5db;break-inside:avoid}"
    ".grid{grid-template-columns:1fr 1fr}h2{break-after:avoid}"
    "table{font-size:10px}}\n";

/* Text for people: NaN is a dash; 3 significant digits, no exponent. */
static void report_put_value(struct strbuf *b, double v)
{
    if (!isfinite(v)) {
        strbuf_puts(b, "\xE2\x80\x93");     /* en dash */
        return;
    }
    double a = fabs(v);
    int decimals = a >= 100 ? 0 : a >= 10 ? 1 : a >= 1 ? 2 : a >= 0.1 ? 3 : 4;
    if (a == 0)
        decimals = 0;
    strbuf_put_fixed(b, v, decimals);
}

static double report_ns_to(uint64_t ns, double unit_ns)
{
    return (double)ns / unit_ns;
}

/* The x value of a step on the curves: offered load, or (closed loop, or
 * no offered rate) the achieved send rate. */
static double report_step_x(const struct report *r, const struct report_step *s)
{
    if (r->closed_loop || !isfinite(s->offered_rps))
        return s->achieved_rps;
    return s->offered_rps;
}

/* Indices of the non-recovery steps sorted by x (stable), into idx;
 * returns their count. */
static size_t report_curve_order(const struct report *r, size_t *idx)
{
    size_t n = 0;
    for (size_t i = 0; i < r->n_steps; i++) {
        if (r->steps[i].recovery)
            continue;
        /* Insertion sort: sweeps have tens of steps. */
        double x = report_step_x(r, &r->steps[i]);
        size_t j = n;
        while (j > 0 && report_step_x(r, &r->steps[idx[j - 1]]) > x)
            j--;
        memmove(idx + j + 1, idx + j, (n - j) * sizeof(*idx));
        idx[j] = i;
        n++;
    }
    return n;
}

/* The step's label in legends and categories: "20" (req/s), "20 rec". */
static void report_step_label(const struct report *r, const struct report_step *s,
                              struct strbuf *b)
{
    strbuf_clear(b);
    double x = report_step_x(r, s);
    report_put_value(b, x);
    if (s->recovery)
        strbuf_puts(b, " rec");
}

/* Shared by the charts against offered load: the knee and capacity
 * markers, and the band beyond the capacity. */
struct report_marks {
    struct svg_vline vlines[2];
    size_t n_vlines;
    struct svg_band band;
    size_t n_bands;
    struct strbuf knee_label, cap_label;
};

static void report_marks_init(struct report_marks *m, const struct report *r)
{
    memset(m, 0, sizeof(*m));
    strbuf_init(&m->knee_label);
    strbuf_init(&m->cap_label);
    if (r->capacity_rps > 0 && isfinite(r->capacity_rps)) {
        strbuf_puts(&m->cap_label, "SLO capacity ");
        report_put_value(&m->cap_label, r->capacity_rps);
        m->vlines[m->n_vlines++] = (struct svg_vline){
            .x = r->capacity_rps, .key = "capacity", .label = m->cap_label.data,
            .color = REPORT_COLOR_CAP};
        m->band = (struct svg_band){.x0 = r->capacity_rps, .x1 = INFINITY,
                                    .key = "over-capacity"};
        m->n_bands = 1;
    }
    if (r->knee_rps > 0 && isfinite(r->knee_rps)) {
        strbuf_puts(&m->knee_label, "knee ");
        report_put_value(&m->knee_label, r->knee_rps);
        m->vlines[m->n_vlines++] = (struct svg_vline){
            .x = r->knee_rps, .key = "knee", .label = m->knee_label.data,
            .color = REPORT_COLOR_KNEE};
    }
}

static void report_marks_free(struct report_marks *m)
{
    strbuf_free(&m->knee_label);
    strbuf_free(&m->cap_label);
}

static void report_figure_open(struct strbuf *b, const char *cls, const char *title,
                               const char *how)
{
    strbuf_puts(b, "<figure");
    if (cls != NULL)
        strbuf_printf(b, " class=\"%s\"", cls);
    strbuf_puts(b, "><figcaption><h3>");
    strbuf_put_xml(b, title);
    strbuf_puts(b, "</h3>");
    if (how != NULL) {
        strbuf_puts(b, "<p>");
        strbuf_put_xml(b, how);
        strbuf_puts(b, "</p>");
    }
    strbuf_puts(b, "</figcaption>\n");
}

static void report_figure_close(struct strbuf *b)
{
    strbuf_puts(b, "</figure>\n");
}

enum report_metric { REPORT_TTFT, REPORT_TPOT, REPORT_E2E };

static const uint64_t *report_metric_ns(const struct report_step *s,
                                        enum report_metric m)
{
    switch (m) {
    case REPORT_TTFT: return s->ttft_ns;
    case REPORT_TPOT: return s->tpot_ns;
    default: return s->e2e_ns;
    }
}

/* Use a log y axis when the values span more than this ratio: past the
 * knee the tail grows by orders of magnitude and a linear axis would flatten
 * everything before it onto the floor. */
#define REPORT_LOG_RATIO 30.0

/* A latency chart: p50, p90 and p99 against offered load, the SLO line,
 * the knee and capacity markers; the recovery step's p99 as a ring. */
static void report_latency_chart(struct strbuf *b, const struct report *r,
                                 const size_t *order, size_t n,
                                 const struct report_marks *marks,
                                 enum report_metric metric, const char *id,
                                 const char *name, const char *unit,
                                 double unit_ns, double slo)
{
    static const int pcts[3] = {REPORT_P50, REPORT_P90, REPORT_P99};
    static const char *const pct_names[3] = {"p50", "p90", "p99"};
    static const char *const colors[3] = {REPORT_COLOR_P50, REPORT_COLOR_P90,
                                          REPORT_COLOR_P99};
    const char *prefix = metric == REPORT_TTFT ? "ttft" : metric == REPORT_TPOT ? "tpot" : "e2e";

    double *x = ll_calloc(n + 1, sizeof(double));
    double *y = ll_calloc(3 * (n + 1), sizeof(double));
    double *rx = ll_calloc(r->n_steps + 1, sizeof(double));
    double *ry = ll_calloc(r->n_steps + 1, sizeof(double));
    char keys[4][32], labels[4][48];
    struct svg_series series[4];
    size_t ns = 0;
    double vmin = INFINITY, vmax = 0;

    for (size_t i = 0; i < n; i++) {
        const struct report_step *s = &r->steps[order[i]];
        x[i] = report_step_x(r, s);
        for (int p = 0; p < 3; p++) {
            double v = s->ok > 0 ? report_ns_to(report_metric_ns(s, metric)[pcts[p]], unit_ns)
                                 : NAN;
            y[p * (n + 1) + i] = v;
            if (v > 0 && v < vmin)
                vmin = v;
            if (v > vmax)
                vmax = v;
        }
    }
    for (int p = 0; p < 3; p++) {
        snprintf(keys[p], sizeof(keys[p]), "%s_%s", prefix, pct_names[p]);
        snprintf(labels[p], sizeof(labels[p]), "%s %s", name, pct_names[p]);
        series[ns++] = (struct svg_series){
            .key = keys[p], .label = labels[p], .x = x, .y = y + p * (n + 1),
            .n = n, .flags = SVG_LINE | SVG_MARKERS, .color = colors[p]};
    }
    size_t nr = 0;
    for (size_t i = 0; i < r->n_steps; i++) {
        const struct report_step *s = &r->steps[i];
        if (!s->recovery || s->ok == 0)
            continue;
        rx[nr] = report_step_x(r, s);
        ry[nr] = report_ns_to(report_metric_ns(s, metric)[REPORT_P99], unit_ns);
        nr++;
    }
    if (nr > 0) {
        snprintf(keys[3], sizeof(keys[3]), "%s_p99_recovery", prefix);
        snprintf(labels[3], sizeof(labels[3]), "recovery step p99");
        series[ns++] = (struct svg_series){
            .key = keys[3], .label = labels[3], .x = rx, .y = ry, .n = nr,
            .flags = SVG_MARKERS | SVG_HOLLOW, .color = "#111827"};
    }

    struct strbuf slo_label;
    strbuf_init(&slo_label);
    struct svg_hline hl = {0};
    if (slo > 0) {
        strbuf_puts(&slo_label, "SLO ");
        report_put_value(&slo_label, slo);
        strbuf_printf(&slo_label, " %s", unit);
        hl = (struct svg_hline){.y = slo, .key = "slo", .label = slo_label.data};
        if (slo < vmin)
            vmin = slo;
        if (slo > vmax)
            vmax = slo;
    }
    int log_y = vmax > 0 && isfinite(vmin) && vmax / vmin > REPORT_LOG_RATIO;
    char yunit[48];
    snprintf(yunit, sizeof(yunit), "%s%s", unit, log_y ? ", log scale" : "");
    char title[96];
    snprintf(title, sizeof(title), "%s percentiles against %s load", name,
             r->closed_loop ? "achieved" : "offered");

    struct svg_chart c = {
        .id = id, .title = title,
        .x = {.label = r->closed_loop ? "achieved load" : "offered load", .unit = "req/s",
              .scale = SVG_SCALE_LINEAR, .min = NAN, .max = NAN, .include_zero = 1},
        .y = {.label = name, .unit = yunit,
              .scale = log_y ? SVG_SCALE_LOG : SVG_SCALE_LINEAR, .min = NAN,
              .max = NAN, .include_zero = 1},
        .series = series, .n_series = ns,
        .hlines = &hl, .n_hlines = slo > 0 ? 1 : 0,
        .vlines = marks->vlines, .n_vlines = marks->n_vlines,
        .bands = &marks->band, .n_bands = marks->n_bands,
        .empty_note = "no successful requests",
    };
    svg_chart_write(b, &c);
    strbuf_free(&slo_label);
    free(x);
    free(y);
    free(rx);
    free(ry);
}

static void report_header(struct strbuf *b, const struct report *r)
{
    strbuf_puts(b, "<header>\n<h1>");
    strbuf_put_xml(b, r->title != NULL ? r->title : "llmload report");
    strbuf_puts(b, "</h1>\n<p class=\"sub\">");
    strbuf_printf(b, "%s of %zu step%s", r->n_steps == 1 ? "Load point" : "Load sweep",
                  r->n_steps, r->n_steps == 1 ? "" : "s");
    if (r->mode != NULL) {
        strbuf_puts(b, ", ");
        strbuf_put_xml(b, r->mode);
    }
    strbuf_puts(b, "</p>\n<dl class=\"facts\">\n");
    struct { const char *k, *v; } facts[] = {
        {"target", r->target}, {"model", r->model}, {"started", r->started_at},
        {"llmload", r->version},
    };
    for (size_t i = 0; i < LL_ARRAY_LEN(facts); i++) {
        if (facts[i].v == NULL)
            continue;
        strbuf_printf(b, "<div><dt>%s</dt><dd>", facts[i].k);
        strbuf_put_xml(b, facts[i].v);
        strbuf_puts(b, "</dd></div>\n");
    }
    strbuf_puts(b, "<div><dt>SLO</dt><dd>");
    int any = 0;
    struct { const char *k; double v; } slos[] = {
        {"TTFT", r->slo_ttft_ms}, {"TPOT", r->slo_tpot_ms}, {"E2E", r->slo_e2e_ms},
    };
    for (size_t i = 0; i < LL_ARRAY_LEN(slos); i++) {
        if (!(slos[i].v > 0))
            continue;
        strbuf_printf(b, "%s%s \xE2\x89\xA4 ", any ? ", " : "", slos[i].k);
        report_put_value(b, slos[i].v);
        strbuf_puts(b, " ms");
        any = 1;
    }
    if (!any)
        strbuf_puts(b, "none");
    strbuf_puts(b, "</dd></div>\n");
    if (r->attainment_target > 0) {
        strbuf_puts(b, "<div><dt>attainment target</dt><dd>");
        report_put_value(b, r->attainment_target * 100);
        strbuf_puts(b, "% of requests within SLO</dd></div>\n");
    }
    strbuf_puts(b, "</dl>\n");
    if (r->invalid) {
        strbuf_puts(b, "<div class=\"banner invalid\">INVALID: the load generator could "
                       "not keep its schedule; these figures are not trustworthy.");
        if (r->invalid_reason != NULL) {
            strbuf_puts(b, " ");
            strbuf_put_xml(b, r->invalid_reason);
        }
        strbuf_puts(b, "</div>\n");
    }
    if (r->closed_loop)
        strbuf_puts(b, "<div class=\"banner closed\">CLOSED LOOP: each user waits for its "
                       "response before sending again, so latencies exclude the wait a "
                       "real user would see under overload; curves are drawn against "
                       "achieved load.</div>\n");
    strbuf_puts(b, "</header>\n");
}

static void report_card(struct strbuf *b, const char *cls, const char *key,
                        double v, const char *unit, const char *none,
                        const char *detail)
{
    strbuf_printf(b, "<div class=\"card %s\"><div class=\"k\">%s</div>", cls, key);
    if (isfinite(v) && v > 0) {
        strbuf_puts(b, "<div class=\"v\">");
        report_put_value(b, v);
        strbuf_printf(b, "<span class=\"u\">%s</span></div>", unit);
    } else {
        strbuf_puts(b, "<div class=\"v none\">");
        strbuf_put_xml(b, none);
        strbuf_puts(b, "</div>");
    }
    strbuf_puts(b, "<div class=\"d\">");
    strbuf_put_xml(b, detail);
    strbuf_puts(b, "</div></div>\n");
}

static void report_findings(struct strbuf *b, const struct report *r)
{
    double peak_good = NAN, peak_good_x = NAN, peak_out = NAN, peak_out_x = NAN;
    for (size_t i = 0; i < r->n_steps; i++) {
        const struct report_step *s = &r->steps[i];
        if (isfinite(s->goodput_rps) && !(s->goodput_rps <= peak_good)) {
            peak_good = s->goodput_rps;
            peak_good_x = report_step_x(r, s);
        }
        if (isfinite(s->output_tps) && !(s->output_tps <= peak_out)) {
            peak_out = s->output_tps;
            peak_out_x = report_step_x(r, s);
        }
    }
    struct strbuf d;
    strbuf_init(&d);
    strbuf_puts(b, "<section class=\"cards\">\n");

    if (r->attainment_target > 0) {
        strbuf_puts(&d, "highest load with \xE2\x89\xA5 ");
        report_put_value(&d, r->attainment_target * 100);
        strbuf_puts(&d, "% of requests within SLO");
    } else {
        strbuf_puts(&d, "highest load that meets the SLO");
    }
    report_card(b, "cap", "SLO capacity", r->capacity_rps, "req/s",
                r->slo_ttft_ms > 0 || r->slo_tpot_ms > 0 || r->slo_e2e_ms > 0
                    ? "not reached" : "no SLO set",
                d.data);

    strbuf_clear(&d);
    strbuf_puts(&d, "where latency turns sharply up");
    if (r->capacity_rps > 0 && r->knee_rps > 0) {
        strbuf_puts(&d, "; capacity is ");
        report_put_value(&d, 100.0 * r->capacity_rps / r->knee_rps);
        strbuf_puts(&d, "% of it");
    }
    report_card(b, "knee", "Knee", r->knee_rps, "req/s", "not found", d.data);

    strbuf_clear(&d);
    strbuf_puts(&d, "requests/s completed within SLO, at ");
    report_put_value(&d, peak_good_x);
    strbuf_puts(&d, " req/s");
    report_card(b, "good", "Peak goodput", peak_good, "req/s", "none", d.data);

    strbuf_clear(&d);
    strbuf_puts(&d, "at ");
    report_put_value(&d, peak_out_x);
    strbuf_puts(&d, " req/s");
    report_card(b, "tput", "Peak output", peak_out, "tokens/s", "none", d.data);
    strbuf_puts(b, "</section>\n");
    strbuf_free(&d);

    if (r->findings_text != NULL && r->findings_text[0] != '\0') {
        strbuf_puts(b, "<div class=\"findings\">");
        strbuf_put_xml(b, r->findings_text);
        strbuf_puts(b, "</div>\n");
    }
}

static void report_attainment_chart(struct strbuf *b, const struct report *r,
                                    const size_t *order, size_t n,
                                    const struct report_marks *marks)
{
    double *x = ll_calloc(n + 1, sizeof(double));
    double *y = ll_calloc(n + 1, sizeof(double));
    for (size_t i = 0; i < n; i++) {
        const struct report_step *s = &r->steps[order[i]];
        x[i] = report_step_x(r, s);
        y[i] = s->attainment * 100.0;
    }
    struct svg_series se = {.key = "attainment", .label = "requests within SLO",
                            .x = x, .y = y, .n = n, .color = REPORT_COLOR_CAP};
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
        .id = "chart-attainment", .title = "SLO attainment against offered load",
        .x = {.label = r->closed_loop ? "achieved load" : "offered load", .unit = "req/s",
              .min = NAN, .max = NAN, .include_zero = 1},
        .y = {.label = "within SLO", .unit = "%", .min = 0, .max = 100},
        .series = &se, .n_series = 1,
        .hlines = &hl, .n_hlines = r->attainment_target > 0 ? 1 : 0,
        .vlines = marks->vlines, .n_vlines = marks->n_vlines,
        .bands = &marks->band, .n_bands = marks->n_bands,
        .empty_note = "no SLO set",
    };
    svg_chart_write(b, &c);
    strbuf_free(&lab);
    free(x);
    free(y);
}

static void report_throughput_chart(struct strbuf *b, const struct report *r,
                                    const size_t *order, size_t n,
                                    const struct report_marks *marks)
{
    double *x = ll_calloc(n + 1, sizeof(double));
    double *ya = ll_calloc(n + 1, sizeof(double));
    double *yc = ll_calloc(n + 1, sizeof(double));
    double *yg = ll_calloc(n + 1, sizeof(double));
    double ix[2] = {0, 0}, iy[2] = {0, 0};
    for (size_t i = 0; i < n; i++) {
        const struct report_step *s = &r->steps[order[i]];
        x[i] = report_step_x(r, s);
        ya[i] = s->achieved_rps;
        yc[i] = s->completed_rps;
        yg[i] = s->goodput_rps;
        if (x[i] > ix[1])
            ix[1] = iy[1] = x[i];
    }
    struct svg_series se[4] = {
        {.key = "ideal", .label = "offered (y = x)", .x = ix, .y = iy, .n = n > 0 ? 2 : 0,
         .flags = SVG_LINE | SVG_DASHED, .color = "#9ca3af"},
        {.key = "achieved", .label = "sent (achieved)", .x = x, .y = ya, .n = n,
         .flags = SVG_LINE | SVG_MARKERS, .color = "#56b4e9"},
        {.key = "completed", .label = "completed ok", .x = x, .y = yc, .n = n,
         .flags = SVG_LINE | SVG_MARKERS, .color = REPORT_COLOR_P50},
        {.key = "goodput", .label = "goodput (within SLO)", .x = x, .y = yg, .n = n,
         .flags = SVG_LINE | SVG_MARKERS, .color = REPORT_COLOR_CAP},
    };
    struct svg_chart c = {
        .id = "chart-throughput", .title = "Throughput and goodput against offered load",
        .x = {.label = r->closed_loop ? "achieved load" : "offered load", .unit = "req/s",
              .min = NAN, .max = NAN, .include_zero = 1},
        .y = {.label = "rate", .unit = "req/s", .min = NAN, .max = NAN, .include_zero = 1},
        .series = se, .n_series = 4,
        .vlines = marks->vlines, .n_vlines = marks->n_vlines,
        .bands = &marks->band, .n_bands = marks->n_bands,
    };
    svg_chart_write(b, &c);
    free(x);
    free(ya);
    free(yc);
    free(yg);
}

static void report_tokens_chart(struct strbuf *b, const struct report *r,
                                const size_t *order, size_t n,
                                const struct report_marks *marks)
{
    double *x = ll_calloc(n + 1, sizeof(double));
    double *y = ll_calloc(n + 1, sizeof(double));
    for (size_t i = 0; i < n; i++) {
        const struct report_step *s = &r->steps[order[i]];
        x[i] = report_step_x(r, s);
        y[i] = s->output_tps;
    }
    struct svg_series se = {.key = "output_tps", .label = "output tokens/s", .x = x,
                            .y = y, .n = n, .color = "#cc79a7"};
    struct svg_chart c = {
        .id = "chart-tokens", .title = "Output tokens per second against offered load",
        .x = {.label = r->closed_loop ? "achieved load" : "offered load", .unit = "req/s",
              .min = NAN, .max = NAN, .include_zero = 1},
        .y = {.label = "output", .unit = "tokens/s", .min = NAN, .max = NAN,
              .include_zero = 1},
        .series = &se, .n_series = 1,
        .vlines = marks->vlines, .n_vlines = marks->n_vlines,
        .bands = &marks->band, .n_bands = marks->n_bands,
    };
    svg_chart_write(b, &c);
    free(x);
    free(y);
}

static void report_errors_chart(struct strbuf *b, const struct report *r)
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
    for (int k = 0; k < REC_KIND_COUNT; k++) {
        if (k == REC_OK)
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
    for (size_t i = 0; i < n; i++)
        free(cats[i]);
    free(cats);
    free(vals);
    strbuf_free(&lab);
}

/* Thin samples [0, n) into at most max points (max >= 1) by keeping, in
 * each run of ceil(n / max) samples, the one with the largest value (the
 * first on ties), so peaks survive. Writes the kept indices to keep and
 * returns their count. */
static size_t report_thin(const double *v, size_t n, size_t max, size_t *keep)
{
    if (n <= max) {
        for (size_t i = 0; i < n; i++)
            keep[i] = i;
        return n;
    }
    size_t run = (n + max - 1) / max, k = 0;
    for (size_t i = 0; i < n; i += run) {
        size_t best = i;
        for (size_t j = i + 1; j < n && j < i + run; j++)
            if (v[j] > v[best] || (isnan(v[best]) && !isnan(v[j])))
                best = j;
        keep[k++] = best;
    }
    return k;
}

/* Step boundaries as vertical markers for the time charts; labels are the
 * step's load. Returns the count; labels point into labels_buf. */
static size_t report_step_marks(const struct report *r, struct svg_vline *v,
                                char (*labels)[24])
{
    size_t n = 0;
    for (size_t i = 0; i < r->n_steps; i++) {
        const struct report_step *s = &r->steps[i];
        if (s->t_start_s == 0 && s->t_end_s == 0)
            continue;
        struct strbuf lab;
        strbuf_init(&lab);
        report_step_label(r, s, &lab);
        strbuf_puts(&lab, "/s");
        snprintf(labels[n], sizeof(labels[n]), "%s", lab.data);
        strbuf_free(&lab);
        v[n] = (struct svg_vline){.x = s->t_start_s, .key = "step", .label = labels[n],
                                  .color = REPORT_COLOR_STEP};
        n++;
    }
    return n;
}

/* The end of the run's time axis, s: the last step end or sample time. A
 * time axis ends there instead of at the next round tick. NAN when none. */
static double report_time_end(const struct report *r)
{
    double t = 0;
    for (size_t i = 0; i < r->n_steps; i++) {
        const struct report_step *s = &r->steps[i];
        t = LL_MAX(t, s->t_end_s);
        if (s->inflight != NULL && s->n_inflight > 0)
            t = LL_MAX(t, s->inflight[s->n_inflight - 1].t_s);
    }
    if (r->server != NULL && r->n_server > 0)
        t = LL_MAX(t, r->server[r->n_server - 1].t_s);
    return t > 0 ? t : NAN;
}

static void report_inflight_chart(struct strbuf *b, const struct report *r)
{
    size_t total = 0;
    for (size_t i = 0; i < r->n_steps; i++)
        total += r->steps[i].n_inflight;
    size_t budget = r->n_steps > 0 ? REPORT_MAX_TS_POINTS / r->n_steps : 1;
    if (budget < 30)
        budget = 30;
    double *x = ll_calloc(total + 1, sizeof(double));
    double *y = ll_calloc(total + 1, sizeof(double));
    double *tmp = ll_calloc(total + 1, sizeof(double));
    size_t *keep = ll_calloc(total + 1, sizeof(size_t));
    size_t n = 0;
    for (size_t i = 0; i < r->n_steps; i++) {
        const struct report_step *s = &r->steps[i];
        if (s->inflight == NULL)
            continue;
        for (size_t j = 0; j < s->n_inflight; j++)
            tmp[j] = s->inflight[j].inflight;
        size_t k = report_thin(tmp, s->n_inflight, budget, keep);
        for (size_t j = 0; j < k; j++) {
            x[n] = s->inflight[keep[j]].t_s;
            y[n] = s->inflight[keep[j]].inflight;
            n++;
        }
    }
    struct svg_vline *marks = ll_calloc(r->n_steps + 1, sizeof(*marks));
    char (*labels)[24] = ll_calloc(r->n_steps + 1, sizeof(*labels));
    size_t nm = report_step_marks(r, marks, labels);
    struct svg_series se = {.key = "inflight", .label = "requests in flight (client)",
                            .x = x, .y = y, .n = n, .flags = SVG_LINE,
                            .color = REPORT_COLOR_P50};
    struct svg_chart c = {
        .id = "chart-inflight", .title = "Requests in flight over time",
        .width = REPORT_WIDE_WIDTH, .height = 300,
        .x = {.label = "time since start", .unit = "s", .min = 0,
              .max = report_time_end(r), .include_zero = 1},
        .y = {.label = "in flight", .unit = "requests", .min = NAN, .max = NAN,
              .include_zero = 1},
        .series = &se, .n_series = 1, .vlines = marks, .n_vlines = nm,
        .empty_note = "no in-flight samples",
    };
    svg_chart_write(b, &c);
    free(x);
    free(y);
    free(tmp);
    free(keep);
    free(marks);
    free(labels);
}

/* One chart of the server's scrapes: its queue and running batch
 * (kv = 0), or its KV cache usage in % (kv = 1). Scrapes are thinned by
 * their queue length so the peaks of the backlog survive. */
static void report_server_chart(struct strbuf *b, const struct report *r, int kv)
{
    size_t n = r->n_server;
    double *v = ll_calloc(n + 1, sizeof(double));
    size_t *keep = ll_calloc(n + 1, sizeof(size_t));
    for (size_t i = 0; i < n; i++)
        v[i] = r->server[i].waiting;
    size_t k = report_thin(v, n, REPORT_MAX_TS_POINTS, keep);
    double *x = ll_calloc(k + 1, sizeof(double));
    double *y0 = ll_calloc(k + 1, sizeof(double));
    double *y1 = ll_calloc(k + 1, sizeof(double));
    for (size_t i = 0; i < k; i++) {
        const struct report_server_sample *s = &r->server[keep[i]];
        x[i] = s->t_s;
        y0[i] = kv ? s->kv_usage * 100.0 : s->running;
        y1[i] = s->waiting;
    }
    struct svg_vline *marks = ll_calloc(r->n_steps + 1, sizeof(*marks));
    char (*labels)[24] = ll_calloc(r->n_steps + 1, sizeof(*labels));
    size_t nm = report_step_marks(r, marks, labels);
    struct svg_series se[2] = {
        {.key = "server_running", .label = "running (batch)", .x = x, .y = y0, .n = k,
         .flags = SVG_LINE, .color = REPORT_COLOR_P50},
        {.key = "server_waiting", .label = "waiting (queue)", .x = x, .y = y1, .n = k,
         .flags = SVG_LINE, .color = REPORT_COLOR_P99},
    };
    if (kv)
        se[0] = (struct svg_series){.key = "server_kv_usage", .label = "KV cache in use",
                                    .x = x, .y = y0, .n = k, .flags = SVG_LINE,
                                    .color = "#009e73"};
    struct svg_chart c = {
        .id = kv ? "chart-server-kv" : "chart-server-queue",
        .title = kv ? "Server KV cache usage over time"
                    : "Server queue and running batch over time",
        .width = REPORT_WIDE_WIDTH, .height = kv ? 220 : 280,
        .x = {.label = "time since start", .unit = "s", .min = 0,
              .max = report_time_end(r), .include_zero = 1},
        .y = {.label = kv ? "KV cache" : "requests", .unit = kv ? "%" : NULL,
              .min = kv ? 0 : NAN, .max = kv ? 100 : NAN, .include_zero = 1},
        .series = se, .n_series = kv ? 1 : 2, .vlines = marks, .n_vlines = nm,
        .empty_note = "not scraped",
    };
    svg_chart_write(b, &c);
    free(v);
    free(keep);
    free(x);
    free(y0);
    free(y1);
    free(marks);
    free(labels);
}

/* The cumulative fraction levels (in %) at which a step's TTFT
 * distribution is sampled from its histogram. */
static const double report_cdf_levels[] = {
    0.5, 1, 2, 3, 5, 7.5, 10, 15, 20, 25, 30, 35, 40, 45, 50, 55, 60, 65, 70,
    75, 80, 85, 90, 92.5, 95, 97, 98, 99, 99.5, 99.9, 100,
};

static void report_cdf_chart(struct strbuf *b, const struct report *r)
{
    static const double six_levels[REPORT_NPCT] = {50, 90, 95, 99, 99.9, 100};
    size_t nl = LL_ARRAY_LEN(report_cdf_levels);
    size_t per = nl > REPORT_NPCT ? nl : REPORT_NPCT;
    size_t n = r->n_steps;
    size_t *order = ll_calloc(n + 1, sizeof(size_t));
    size_t no = report_curve_order(r, order);
    /* Recovery steps after the curve steps. */
    for (size_t i = 0; i < n; i++)
        if (r->steps[i].recovery)
            order[no++] = i;
    double *x = ll_calloc(per * (no + 1), sizeof(double));
    double *y = ll_calloc(per * (no + 1), sizeof(double));
    struct svg_series *se = ll_calloc(no + 1, sizeof(*se));
    char (*keys)[32] = ll_calloc(no + 1, sizeof(*keys));
    char (*labels)[40] = ll_calloc(no + 1, sizeof(*labels));
    char (*colors)[8] = ll_calloc(no + 1, sizeof(*colors));
    struct strbuf lab;
    strbuf_init(&lab);
    size_t nse = 0;
    for (size_t oi = 0; oi < no; oi++) {
        const struct report_step *s = &r->steps[order[oi]];
        double *sx = x + per * oi, *sy = y + per * oi;
        size_t k = 0;
        if (s->ttft_hist != NULL && hist_count(s->ttft_hist) > 0) {
            for (size_t l = 0; l < nl; l++) {
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
        if (k == 0)
            continue;
        report_step_label(r, s, &lab);
        snprintf(keys[nse], sizeof(keys[nse]), "ttft_cdf_%zu", order[oi]);
        snprintf(labels[nse], sizeof(labels[nse]), "%s req/s", lab.data);
        svg_ramp_color(no > 1 ? (double)oi / (double)(no - 1) : 0, colors[nse]);
        se[nse] = (struct svg_series){.key = keys[nse], .label = labels[nse], .x = sx,
                                      .y = sy, .n = k,
                                      .flags = SVG_LINE | (s->recovery ? SVG_DASHED : 0),
                                      .color = colors[nse]};
        nse++;
    }
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
        .series = se, .n_series = nse,
        .vlines = &vl, .n_vlines = r->slo_ttft_ms > 0 ? 1 : 0,
        .empty_note = "no successful requests",
    };
    svg_chart_write(b, &c);
    strbuf_free(&lab);
    strbuf_free(&slo);
    free(order);
    free(x);
    free(y);
    free(se);
    free(keys);
    free(labels);
    free(colors);
}

static void report_td(struct strbuf *b, double v, int bad)
{
    strbuf_puts(b, bad ? "<td class=\"bad\">" : "<td>");
    report_put_value(b, v);
    strbuf_puts(b, "</td>");
}

/* A table's heading, up to the opening <tbody>: head[i] is the column's
 * first line, its second line and its tooltip (none when empty). The last
 * column, and column text_col, hold text and are left-aligned. */
static void report_table_head(struct strbuf *b, const char *const (*head)[3], size_t n,
                              size_t text_col)
{
    strbuf_puts(b, "<thead><tr>");
    for (size_t i = 0; i < n; i++) {
        strbuf_puts(b, i == text_col || i == n - 1 ? "<th class=\"l\"" : "<th");
        if (head[i][2][0] != '\0')
            strbuf_printf(b, " title=\"%s\"", head[i][2]);
        strbuf_printf(b, ">%s<br/>%s</th>", head[i][0], head[i][1]);
    }
    strbuf_puts(b, "</tr></thead>\n<tbody>\n");
}

static void report_table(struct strbuf *b, const struct report *r)
{
    /* Heading (two lines), and its tooltip. */
    static const char *const head[][3] = {
        {"#", "", "step, in the order run"},
        {"offered", "req/s", "offered load"},
        {"sent", "req/s", "achieved send rate"},
        {"ok", "req/s", "ok completions per second (completed)"},
        {"goodput", "req/s", "ok and within every SLO, per second"},
        {"in SLO", "%", "share of scheduled requests within every SLO"},
        {"input", "tok/s", "prompt tokens of ok requests per second"},
        {"output", "tok/s", "output tokens of ok requests per second"},
        {"TTFT", "p50", "ms"}, {"TTFT", "p90", "ms"}, {"TTFT", "p99", "ms"},
        {"TTFT", "max", "ms"},
        {"TPOT", "p50", "ms"}, {"TPOT", "p99", "ms"},
        {"ITL", "p50", "ms, per request"}, {"ITL", "p99", "ms, per request"},
        {"E2E", "p50", "s"}, {"E2E", "p99", "s"},
        {"errors", "", "requests of any kind but ok"},
        {"in flight", "mean", "requests, time-weighted"},
        {"in flight", "max", "requests"},
        {"steady", "", "backlog not growing and TTFT tail not rising"},
        {"verdict", "", ""},
    };
    strbuf_puts(b, "<div class=\"tablewrap\"><table id=\"steps\">\n");
    report_table_head(b, head, LL_ARRAY_LEN(head), LL_ARRAY_LEN(head));
    for (size_t i = 0; i < r->n_steps; i++) {
        const struct report_step *s = &r->steps[i];
        int over = r->capacity_rps > 0 && report_step_x(r, s) > r->capacity_rps;
        strbuf_printf(b, "<tr%s>", s->recovery ? " class=\"recovery\""
                                              : over ? " class=\"over\"" : "");
        strbuf_printf(b, "<td>%zu%s</td>", i + 1, s->recovery ? " rec" : "");
        report_td(b, s->offered_rps, 0);
        report_td(b, s->achieved_rps, 0);
        report_td(b, s->completed_rps, 0);
        report_td(b, s->goodput_rps, 0);
        report_td(b, s->attainment * 100.0,
                  r->attainment_target > 0 && s->attainment < r->attainment_target);
        report_td(b, s->input_tps, 0);
        report_td(b, s->output_tps, 0);
        static const int tp[4] = {REPORT_P50, REPORT_P90, REPORT_P99, REPORT_MAX};
        for (int p = 0; p < 4; p++)
            report_td(b, s->ok ? (double)s->ttft_ns[tp[p]] / 1e6 : NAN,
                      tp[p] == REPORT_P99 && r->slo_ttft_ms > 0 && s->ok &&
                          (double)s->ttft_ns[tp[p]] / 1e6 > r->slo_ttft_ms);
        report_td(b, s->ok ? (double)s->tpot_ns[REPORT_P50] / 1e6 : NAN, 0);
        report_td(b, s->ok ? (double)s->tpot_ns[REPORT_P99] / 1e6 : NAN,
                  r->slo_tpot_ms > 0 && s->ok &&
                      (double)s->tpot_ns[REPORT_P99] / 1e6 > r->slo_tpot_ms);
        report_td(b, s->ok ? (double)s->itl_ns[REPORT_P50] / 1e6 : NAN, 0);
        report_td(b, s->ok ? (double)s->itl_ns[REPORT_P99] / 1e6 : NAN, 0);
        report_td(b, s->ok ? (double)s->e2e_ns[REPORT_P50] / 1e9 : NAN, 0);
        report_td(b, s->ok ? (double)s->e2e_ns[REPORT_P99] / 1e9 : NAN,
                  r->slo_e2e_ms > 0 && s->ok &&
                      (double)s->e2e_ns[REPORT_P99] / 1e6 > r->slo_e2e_ms);
        uint64_t errors = 0;
        for (int k = 0; k < REC_KIND_COUNT; k++)
            if (k != REC_OK)
                errors += s->by_kind[k];
        strbuf_printf(b, "<td%s>%llu</td>", errors ? " class=\"bad\"" : "",
                      (unsigned long long)errors);
        report_td(b, s->inflight_mean, 0);
        report_td(b, s->inflight_max, 0);
        strbuf_printf(b, "<td%s>%s</td>", s->steady ? "" : " class=\"bad\"",
                      s->steady ? "yes" : "no");
        strbuf_puts(b, "<td class=\"l\">");
        strbuf_put_xml(b, s->verdict != NULL ? s->verdict : "");
        strbuf_puts(b, "</td></tr>\n");
    }
    strbuf_puts(b, "</tbody></table></div>\n<p class=\"note\">TTFT, TPOT and ITL in "
                   "ms, E2E in s; percentiles of successful requests. Shaded rows: "
                   "beyond the SLO capacity. Red: over an SLO or under the attainment "
                   "target.</p>\n");
}

/* p99 of one class's TTFT or TPOT against offered load: one series per
 * class (data-series is the class name), the sweep's knee and capacity
 * marked. A step where the class has no ok request is a gap. */
static void report_class_chart(struct strbuf *b, const struct report *r,
                               const size_t *order, size_t n,
                               const struct report_marks *marks, enum report_metric metric,
                               const char *id, const char *name)
{
    size_t nc = r->n_classes;
    double *x = ll_calloc(n + 1, sizeof(double));
    double *y = ll_calloc(nc * (n + 1) + 1, sizeof(double));
    struct svg_series *series = ll_calloc(nc + 1, sizeof(*series));
    double vmin = INFINITY, vmax = 0;
    for (size_t i = 0; i < n; i++)
        x[i] = report_step_x(r, &r->steps[order[i]]);
    for (size_t k = 0; k < nc; k++) {
        const struct report_class *c = &r->classes[k];
        double *yk = y + k * (n + 1);
        for (size_t i = 0; i < n; i++) {
            const struct report_class_step *cs = &c->steps[order[i]];
            const uint64_t *v = metric == REPORT_TTFT ? cs->ttft_ns : cs->tpot_ns;
            yk[i] = cs->present && cs->ok > 0 ? report_ns_to(v[REPORT_P99], 1e6) : NAN;
            if (yk[i] > 0 && yk[i] < vmin)
                vmin = yk[i];
            if (yk[i] > vmax)
                vmax = yk[i];
        }
        series[k] = (struct svg_series){.key = c->name, .label = c->name, .x = x, .y = yk,
                                        .n = n, .flags = SVG_LINE | SVG_MARKERS};
    }
    int log_y = vmax > 0 && isfinite(vmin) && vmax / vmin > REPORT_LOG_RATIO;
    char ylabel[48], title[96];
    snprintf(ylabel, sizeof(ylabel), "%s p99", name);
    snprintf(title, sizeof(title), "%s p99 per class against %s load", name,
             r->closed_loop ? "achieved" : "offered");
    struct svg_chart c = {
        .id = id, .title = title,
        .x = {.label = r->closed_loop ? "achieved load" : "offered load", .unit = "req/s",
              .scale = SVG_SCALE_LINEAR, .min = NAN, .max = NAN, .include_zero = 1},
        .y = {.label = ylabel, .unit = log_y ? "ms, log scale" : "ms",
              .scale = log_y ? SVG_SCALE_LOG : SVG_SCALE_LINEAR, .min = NAN, .max = NAN,
              .include_zero = 1},
        .series = series, .n_series = nc,
        .vlines = marks->vlines, .n_vlines = marks->n_vlines,
        .bands = &marks->band, .n_bands = marks->n_bands,
        .empty_note = "no successful requests",
    };
    svg_chart_write(b, &c);
    free(series);
    free(x);
    free(y);
}

/* Each class's SLO capacity in words, then one row per step and class. */
static void report_class_table(struct strbuf *b, const struct report *r)
{
    static const char *const head[][3] = {
        {"#", "", "step, in the order run"},
        {"offered", "req/s", "offered load of the whole step"},
        {"class", "", ""},
        {"sched", "", "requests of the class scheduled in the window"},
        {"ok", "", "its requests that completed ok"},
        {"failed", "", "its requests of any other kind"},
        {"sent", "req/s", "its achieved send rate"},
        {"goodput", "req/s", "ok and within its SLO, per second"},
        {"in SLO", "%", "share of its scheduled requests within its SLO"},
        {"TTFT", "p50", "ms"}, {"TTFT", "p99", "ms"},
        {"TPOT", "p50", "ms"}, {"TPOT", "p99", "ms"},
        {"E2E", "p50", "s"}, {"E2E", "p99", "s"},
        {"verdict", "", "met its SLO at the attainment target"},
    };
    strbuf_puts(b, "<ul class=\"classcap\">\n");
    for (size_t k = 0; k < r->n_classes; k++) {
        const struct report_class *c = &r->classes[k];
        strbuf_puts(b, "<li data-class=\"");
        strbuf_put_xml(b, c->name);
        strbuf_puts(b, "\"><b>");
        strbuf_put_xml(b, c->name);
        strbuf_puts(b, "</b> (");
        strbuf_put_xml(b, c->slo != NULL ? c->slo : "no SLO");
        if (c->slo != NULL)
            strbuf_puts(b, c->own_slo ? ", its own" : ", the sweep's");
        strbuf_puts(b, "): SLO capacity ");
        if (c->capacity_rps > 0) {
            if (c->capacity_lower_bound)
                strbuf_puts(b, "\xE2\x89\xA5 ");
            report_put_value(b, c->capacity_rps);
            strbuf_puts(b, " req/s");
        } else {
            strbuf_puts(b, "not reached");
        }
        strbuf_puts(b, "</li>\n");
    }
    strbuf_puts(b, "</ul>\n<div class=\"tablewrap\"><table id=\"classes\">\n");
    report_table_head(b, head, LL_ARRAY_LEN(head), 2);
    for (size_t i = 0; i < r->n_steps; i++) {
        const struct report_step *s = &r->steps[i];
        for (size_t k = 0; k < r->n_classes; k++) {
            const struct report_class_step *cs = &r->classes[k].steps[i];
            if (!cs->present)
                continue;
            strbuf_printf(b, "<tr%s>", s->recovery ? " class=\"recovery\"" : "");
            strbuf_printf(b, "<td>%zu%s</td>", i + 1, s->recovery ? " rec" : "");
            report_td(b, s->offered_rps, 0);
            strbuf_puts(b, "<td class=\"l\">");
            strbuf_put_xml(b, r->classes[k].name);
            strbuf_printf(b, "</td><td>%llu</td><td>%llu</td><td%s>%llu</td>",
                          (unsigned long long)cs->scheduled, (unsigned long long)cs->ok,
                          cs->failed ? " class=\"bad\"" : "", (unsigned long long)cs->failed);
            report_td(b, cs->achieved_rps, 0);
            report_td(b, cs->goodput_rps, 0);
            report_td(b, cs->attainment * 100.0,
                      r->attainment_target > 0 && cs->attainment < r->attainment_target);
            int ok = cs->ok > 0;
            report_td(b, ok ? (double)cs->ttft_ns[REPORT_P50] / 1e6 : NAN, 0);
            report_td(b, ok ? (double)cs->ttft_ns[REPORT_P99] / 1e6 : NAN, 0);
            report_td(b, ok ? (double)cs->tpot_ns[REPORT_P50] / 1e6 : NAN, 0);
            report_td(b, ok ? (double)cs->tpot_ns[REPORT_P99] / 1e6 : NAN, 0);
            report_td(b, ok ? (double)cs->e2e_ns[REPORT_P50] / 1e9 : NAN, 0);
            report_td(b, ok ? (double)cs->e2e_ns[REPORT_P99] / 1e9 : NAN, 0);
            strbuf_printf(b, "<td class=\"l%s\">%s</td></tr>\n", cs->pass ? "" : " bad",
                          s->recovery ? "recovery" : cs->pass ? "ok" : "SLO miss");
        }
    }
    strbuf_puts(b, "</tbody></table></div>\n<p class=\"note\">Each class against its own "
                   "SLO (else the sweep's); TTFT and TPOT in ms, E2E in s; percentiles of "
                   "its successful requests.</p>\n");
}

/* The per-class section: capacities, the two charts, the table. */
static void report_classes(struct strbuf *b, const struct report *r, const size_t *order,
                           size_t n, const struct report_marks *marks)
{
    strbuf_puts(b, "<h2>By traffic class</h2>\n<section class=\"grid\">\n");
    report_figure_open(b, NULL, "TTFT p99 per class",
                       "One line per traffic class of the workload file, against the "
                       "whole step's offered load.");
    report_class_chart(b, r, order, n, marks, REPORT_TTFT, "chart-class-ttft", "TTFT");
    report_figure_close(b);
    report_figure_open(b, NULL, "TPOT p99 per class",
                       "The streaming pace of each class; long outputs share the batch "
                       "with short ones.");
    report_class_chart(b, r, order, n, marks, REPORT_TPOT, "chart-class-tpot", "TPOT");
    report_figure_close(b);
    strbuf_puts(b, "</section>\n");
    report_class_table(b, r);
}

void report_html_render(const struct report *r, struct strbuf *b)
{
    size_t *order = ll_calloc(r->n_steps + 1, sizeof(size_t));
    size_t n = report_curve_order(r, order);
    struct report_marks marks;
    report_marks_init(&marks, r);
    int any_attainment = 0, any_server = r->n_server > 0;
    for (size_t i = 0; i < r->n_steps; i++)
        if (isfinite(r->steps[i].attainment))
            any_attainment = 1;

    strbuf_puts(b, "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\"/>\n"
                   "<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\"/>\n"
                   "<meta name=\"generator\" content=\"llmload\"/>\n<title>");
    strbuf_put_xml(b, r->title != NULL ? r->title : "llmload report");
    strbuf_puts(b, "</title>\n<style>\n");
    strbuf_puts(b, report_css);
    strbuf_puts(b, "</style>\n</head>\n<body>\n<main>\n");
    report_header(b, r);
    report_findings(b, r);

    const char *against = r->closed_loop ? "achieved" : "offered";
    char how[256];
    strbuf_printf(b, "<h2>Latency against %s load</h2>\n<section class=\"grid\">\n", against);
    snprintf(how, sizeof(how), "Time to first token, from the scheduled send time. "
             "Dashed red: the SLO threshold; dotted: the knee and the SLO capacity; "
             "shaded: beyond the SLO capacity.");
    report_figure_open(b, NULL, "TTFT", how);
    report_latency_chart(b, r, order, n, &marks, REPORT_TTFT, "chart-ttft", "TTFT", "ms",
                         1e6, r->slo_ttft_ms);
    report_figure_close(b);
    report_figure_open(b, NULL, "TPOT",
                       "Time per output token after the first: the streaming pace "
                       "a reader sees.");
    report_latency_chart(b, r, order, n, &marks, REPORT_TPOT, "chart-tpot", "TPOT", "ms",
                         1e6, r->slo_tpot_ms);
    report_figure_close(b);
    report_figure_open(b, NULL, "End-to-end latency",
                       "From the scheduled send time to the end of the stream.");
    report_latency_chart(b, r, order, n, &marks, REPORT_E2E, "chart-e2e", "E2E", "s",
                         1e9, r->slo_e2e_ms / 1000.0);
    report_figure_close(b);
    if (any_attainment) {
        report_figure_open(b, NULL, "SLO attainment",
                           "Share of scheduled requests that completed within every "
                           "SLO. Capacity is the highest load above the target line.");
        report_attainment_chart(b, r, order, n, &marks);
        report_figure_close(b);
    }
    strbuf_puts(b, "</section>\n");

    strbuf_printf(b, "<h2>Throughput against %s load</h2>\n<section class=\"grid\">\n",
                  against);
    report_figure_open(b, NULL, "Requests per second",
                       "On the dashed y = x line the server keeps up. Completed "
                       "falling below it is saturation; goodput below completed is "
                       "work done too late to count.");
    report_throughput_chart(b, r, order, n, &marks);
    report_figure_close(b);
    report_figure_open(b, NULL, "Output tokens per second",
                       "Generated tokens of successful requests. It flattens where "
                       "the server is saturated.");
    report_tokens_chart(b, r, order, n, &marks);
    report_figure_close(b);
    strbuf_puts(b, "</section>\n");

    strbuf_puts(b, "<h2>Errors</h2>\n<section class=\"grid\">\n");
    report_figure_open(b, "wide", "Errors by kind per step",
                       "Every scheduled request that did not complete ok, by kind "
                       "(docs/formats.md lists the kinds). The number on a bar is its total.");
    report_errors_chart(b, r);
    report_figure_close(b);
    strbuf_puts(b, "</section>\n");

    strbuf_puts(b, "<h2>Over time</h2>\n<section class=\"grid\">\n");
    report_figure_open(b, "wide", "Requests in flight",
                       "Requests sent and not yet finished, over the whole run; grey "
                       "lines mark the start of each step. A climb that never levels "
                       "off within a step is a growing backlog.");
    report_inflight_chart(b, r);
    report_figure_close(b);
    if (any_server) {
        report_figure_open(b, "wide", "Server queue and batch",
                           "Scraped from the server's /metrics: requests running in "
                           "the batch and waiting in its queue.");
        report_server_chart(b, r, 0);
        report_figure_close(b);
        report_figure_open(b, "wide", "Server KV cache",
                           "Share of the KV cache in use. Near 100% the server "
                           "preempts or queues: the usual cause of the knee.");
        report_server_chart(b, r, 1);
        report_figure_close(b);
    }
    strbuf_puts(b, "</section>\n");

    strbuf_puts(b, "<h2>TTFT distribution per step</h2>\n<section class=\"grid\">\n");
    report_figure_open(b, "wide", "TTFT, cumulative distribution",
                       "One line per step, darker for lighter load. A line's height "
                       "at the SLO is the share of requests whose first token came in "
                       "time; a long flat top is the tail.");
    report_cdf_chart(b, r);
    report_figure_close(b);
    strbuf_puts(b, "</section>\n");

    if (r->n_classes > 0)
        report_classes(b, r, order, n, &marks);

    strbuf_puts(b, "<h2>Every step</h2>\n");
    report_table(b, r);
    strbuf_puts(b, "<footer>Latencies count from each request's scheduled send time "
                   "(no coordinated omission). Percentiles are nearest-rank. Every point "
                   "in the charts carries its exact value in data-x / data-y attributes. "
                   "Generated by llmload");
    if (r->version != NULL) {
        strbuf_puts(b, " ");
        strbuf_put_xml(b, r->version);
    }
    strbuf_puts(b, ".</footer>\n</main>\n</body>\n</html>\n");
    report_marks_free(&marks);
    free(order);
}

int report_html_write(const struct report *r, const char *path, char *err,
                      size_t errlen)
{
    size_t plen = strlen(path);
    if (plen == 0 || plen > 4000) {
        if (err != NULL && errlen > 0)
            snprintf(err, errlen, "report path: bad length %zu", plen);
        return LL_E_RANGE;
    }
    char *tmp = ll_malloc(plen + 5);
    memcpy(tmp, path, plen);
    memcpy(tmp + plen, ".tmp", 5);

    struct strbuf b;
    strbuf_init(&b);
    report_html_render(r, &b);

    int rc = LL_E_IO;
    FILE *f = fopen(tmp, "w");
    if (f == NULL) {
        if (err != NULL && errlen > 0)
            snprintf(err, errlen, "cannot create %s: %s", tmp, strerror(errno));
        goto out;
    }
    if (fwrite(b.data, 1, b.len, f) != b.len || fflush(f) != 0 ||
        fsync(fileno(f)) != 0) {
        if (err != NULL && errlen > 0)
            snprintf(err, errlen, "cannot write %s: %s", tmp, strerror(errno));
        fclose(f);
        goto fail_unlink;
    }
    if (fclose(f) != 0) {
        if (err != NULL && errlen > 0)
            snprintf(err, errlen, "cannot write %s: %s", tmp, strerror(errno));
        goto fail_unlink;
    }
    if (rename(tmp, path) != 0) {
        if (err != NULL && errlen > 0)
            snprintf(err, errlen, "cannot rename %s to %s: %s", tmp, path,
                     strerror(errno));
        goto fail_unlink;
    }
    rc = 0;
    goto out;
fail_unlink:
    unlink(tmp);
out:
    strbuf_free(&b);
    free(tmp);
    return rc;
}
