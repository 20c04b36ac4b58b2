/* report_html.c: the sweep's report.html: the page itself.
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
 *   endpoints   with several --url: a table of every step and endpoint
 *   table       every step, one row each
 *
 * Curves against offered load use the steps other than the recovery step,
 * sorted by offered load; the recovery step is drawn as a lone ring, so a
 * server that did not recover shows it. Every figure comes from the struct:
 * the page computes no statistic of its own beyond maxima for the cards.
 *
 * This file writes the skeleton and the CSS, the header, the cards and the
 * findings, puts the sections in their order, writes the file, and holds the
 * conventions every part shares (report_int.h): a value as text, a step's x
 * and label, the order of the curves. The charts are in report_charts.c, the
 * tables in report_tables.c. */
#include "report/report_html.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "report/report_int.h"
#include "util/util.h"

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
void report_put_value(struct strbuf *b, double v)
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

/* The x value of a step on the curves: offered load, or (closed loop, or
 * no offered rate) the achieved send rate. */
double report_step_x(const struct report *r, const struct report_step *s)
{
    if (r->closed_loop || !isfinite(s->offered_rps))
        return s->achieved_rps;
    return s->offered_rps;
}

/* Indices of the non-recovery steps sorted by x (stable), into idx;
 * returns their count. */
size_t report_curve_order(const struct report *r, size_t *idx)
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
void report_step_label(const struct report *r, const struct report_step *s,
                       struct strbuf *b)
{
    strbuf_clear(b);
    double x = report_step_x(r, s);
    report_put_value(b, x);
    if (s->recovery)
        strbuf_puts(b, " rec");
}

void report_figure_open(struct strbuf *b, const char *cls, const char *title, const char *how)
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

void report_figure_close(struct strbuf *b)
{
    strbuf_puts(b, "</figure>\n");
}

/* dl.facts: target, model, what the server said, the tags, start,
 * llmload version (each when known), the SLO thresholds ("none" without
 * any) and the attainment target (when set). */
static void report_facts(struct strbuf *b, const struct report *r)
{
    strbuf_puts(b, "<dl class=\"facts\">\n");
    const char *const facts[][2] = {
        {"target", r->target}, {"model", r->model},        {"server", r->server_said},
        {"tags", r->tags},     {"started", r->started_at}, {"llmload", r->version},
    };
    for (size_t i = 0; i < LL_ARRAY_LEN(facts); i++) {
        if (facts[i][1] == NULL)
            continue;
        strbuf_printf(b, "<div><dt>%s</dt><dd>", facts[i][0]);
        strbuf_put_xml(b, facts[i][1]);
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
    /* A class's own SLO judges its requests, the whole step's too. */
    int own = 0;
    for (size_t k = 0; k < r->n_classes; k++)
        own |= r->classes[k].own_slo && r->classes[k].slo != NULL;
    if (!any)
        strbuf_puts(b, own ? "each class's own (By traffic class)" : "none");
    else if (own)
        strbuf_puts(b, "; a class with its own SLO is judged by that");
    strbuf_puts(b, "</dd></div>\n");
    if (r->attainment_target > 0) {
        strbuf_puts(b, "<div><dt>attainment target</dt><dd>");
        report_put_value(b, r->attainment_target * 100);
        strbuf_puts(b, "% of requests within SLO</dd></div>\n");
    }
    strbuf_puts(b, "</dl>\n");
}

/* How many of the load steps (the recovery step is none) are INVALID. */
static size_t report_invalid_steps(const struct report *r, size_t *load_steps)
{
    size_t bad = 0;
    *load_steps = 0;
    for (size_t i = 0; i < r->n_steps; i++) {
        if (r->steps[i].recovery)
            continue;
        (*load_steps)++;
        bad += r->steps[i].invalid != 0;
    }
    return bad;
}

/* The banners: INVALID (with its reason when given) when the client
 * could not keep its schedule (whose fault: r->invalid_cause), CLOSED
 * LOOP in a closed loop. When some load steps are INVALID and others
 * are not, the banner is about those steps alone: the search left them out and the sweep's exit status is 0,
 * so "these figures are not trustworthy" over the whole page (what a
 * sweep against llama.cpp showed for 1 of 7 steps, one send 3.6 ms late)
 * would tell the user to discard the steps and findings that stand. */
static void report_banners(struct strbuf *b, const struct report *r)
{
    size_t load_steps, bad = report_invalid_steps(r, &load_steps);
    if (r->invalid && bad > 0 && bad < load_steps) {
        strbuf_puts(b, "<div class=\"banner invalid\">");
        if (r->invalid_reason != NULL)
            strbuf_put_xml(b, r->invalid_reason);
        else
            strbuf_printf(b,
                          "Some steps are INVALID (%s): the table marks them and the "
                          "capacity search leaves them out",
                          verdict_invalid_headline(r->invalid_cause));
        strbuf_puts(b, ". The other steps' figures, and the findings made from them, "
                       "stand.</div>\n");
    } else if (r->invalid) {
        strbuf_printf(b,
                      "<div class=\"banner invalid\">INVALID: %s; these figures are not "
                      "trustworthy.",
                      verdict_invalid_headline(r->invalid_cause));
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
}

/* The header: the title, "Load sweep of N steps" and the mode, the facts,
 * the banners. */
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
    strbuf_puts(b, "</p>\n");
    report_facts(b, r);
    report_banners(b, r);
    strbuf_puts(b, "</header>\n");
}

/* One card: key above, v in large type with its unit (after lead in the
 * unit's type when lead is not NULL: "at or above"), or the text none when
 * v is not a positive number, and a line of detail below. */
static void card_put(struct strbuf *b, const char *cls, const char *key, const char *lead, double v,
                     const char *unit, const char *none, const char *detail)
{
    strbuf_printf(b, "<div class=\"card %s\"><div class=\"k\">%s</div>", cls, key);
    if (isfinite(v) && v > 0) {
        strbuf_puts(b, "<div class=\"v\">");
        if (lead != NULL)
            strbuf_printf(b, "<span class=\"u\">%s</span> ", lead);
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

void report_card(struct strbuf *b, const char *cls, const char *key, double v, const char *unit,
                 const char *none, const char *detail)
{
    card_put(b, cls, key, NULL, v, unit, none, detail);
}

/* The cards of the sweep's two limits: the SLO capacity (with the
 * attainment target it was judged at) and the knee (with the capacity as
 * a share of it when both are known). */
static void report_limit_cards(struct strbuf *b, const struct report *r)
{
    struct strbuf d;
    strbuf_init(&d);
    if (r->attainment_target > 0) {
        strbuf_puts(&d, "highest load with \xE2\x89\xA5 ");
        report_put_value(&d, r->attainment_target * 100);
        strbuf_puts(&d, "% of requests within SLO");
    } else {
        strbuf_puts(&d, "highest load that meets the SLO");
    }
    report_card(b, "cap", "SLO capacity", r->capacity_rps, "req/s",
                r->attainment_target > 0 || r->slo_ttft_ms > 0 || r->slo_tpot_ms > 0 ||
                        r->slo_e2e_ms > 0
                    ? "not reached"
                    : "no SLO set",
                d.data);

    strbuf_clear(&d);
    strbuf_puts(&d, "where completions stop following the load");
    /* A knee at the top of the fitted range is a lower bound (the
     * terminal's "at or above X req/s offered"): the capacity's share of
     * it is then at most the share of X. */
    if (r->knee_at_or_above)
        strbuf_puts(&d, "; the steps cannot place it higher");
    if (r->capacity_rps > 0 && r->knee_rps > 0) {
        strbuf_puts(&d, r->knee_at_or_above ? "; capacity is at most " : "; capacity is ");
        report_put_value(&d, 100.0 * r->capacity_rps / r->knee_rps);
        strbuf_puts(&d, "% of it");
    }
    if (r->first_limit && r->first_limit[0]) {
        strbuf_puts(&d, "; ");
        strbuf_puts(&d, r->first_limit);
    }
    card_put(b, "knee", "Knee", r->knee_at_or_above ? "at or above" : NULL, r->knee_rps, "req/s",
             "not found", d.data);
    strbuf_free(&d);
}

/* One peak's card: its value, then "<lead><x> req/s<judged>" beneath, x
 * the load it was reached at; "none" when no judged step had one. */
static void report_peak_card(struct strbuf *b, const char *cls, const char *key, double peak,
                             const char *unit, const char *lead, double x, const char *judged)
{
    struct strbuf d;
    strbuf_init(&d);
    strbuf_puts(&d, lead);
    report_put_value(&d, x);
    strbuf_puts(&d, " req/s");
    strbuf_puts(&d, judged);
    report_card(b, cls, key, peak, unit, "none", d.data);
    strbuf_free(&d);
}

/* The cards of the peaks over the judged steps, recovery included:
 * goodput and output tokens/s, each with the load it was reached at (the
 * first step on ties). The only statistic the page computes. An INVALID
 * step's figures carry the generator's lateness and a cut one's a window
 * a signal ended, so they are left out, as the findings leave them: the
 * card read "12.3 req/s at 12 req/s" from an INVALID step while that
 * rate's judged run had 8.33. */
static void report_peak_cards(struct strbuf *b, const struct report *r)
{
    double peak_good = NAN, peak_good_x = NAN, peak_out = NAN, peak_out_x = NAN;
    size_t left_out = 0;
    for (size_t i = 0; i < r->n_steps; i++) {
        const struct report_step *s = &r->steps[i];
        if (s->invalid || s->interrupted) {
            left_out++;
            continue;
        }
        if (isfinite(s->goodput_rps) && !(s->goodput_rps <= peak_good)) {
            peak_good = s->goodput_rps;
            peak_good_x = report_step_x(r, s);
        }
        if (isfinite(s->output_tps) && !(s->output_tps <= peak_out)) {
            peak_out = s->output_tps;
            peak_out_x = report_step_x(r, s);
        }
    }
    const char *judged = left_out ? "; INVALID and cut steps left out" : "";
    report_peak_card(b, "good", "Peak goodput", peak_good, "req/s",
                     "requests/s completed within SLO, at ", peak_good_x, judged);
    report_peak_card(b, "tput", "Peak output", peak_out, "tokens/s", "at ", peak_out_x, judged);
}

/* The four cards, then the sweep's findings in words when there are any. */
static void report_findings(struct strbuf *b, const struct report *r)
{
    strbuf_puts(b, "<section class=\"cards\">\n");
    report_limit_cards(b, r);
    report_peak_cards(b, r);
    strbuf_puts(b, "</section>\n");

    if (r->findings_text != NULL && r->findings_text[0] != '\0') {
        strbuf_puts(b, "<div class=\"findings\">");
        strbuf_put_xml(b, r->findings_text);
        strbuf_puts(b, "</div>\n");
    }
}

/* The page's head up to the opening <main>: doctype, meta, the title and
 * the CSS. The run's page (report_run.c) opens with it too. */
void report_page_head(struct strbuf *b, const char *title)
{
    strbuf_puts(b, "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\"/>\n"
                   "<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\"/>\n"
                   "<meta name=\"generator\" content=\"llmload\"/>\n<title>");
    strbuf_put_xml(b, title);
    strbuf_puts(b, "</title>\n<style>\n");
    strbuf_puts(b, report_css);
    strbuf_puts(b, "</style>\n</head>\n<body>\n<main>\n");
}

/* The sweep page's head: its title, else "llmload report". */
static void report_page_open(struct strbuf *b, const struct report *r)
{
    report_page_head(b, r->title != NULL ? r->title : "llmload report");
}

/* What every chart against load is lent: the report, the curves' step
 * order (order[0..n)) and the knee/capacity markers. */
struct report_view {
    const struct report *r;
    const size_t *order;
    size_t n;
    const struct report_marks *marks;
};

/* The page's figures, one per chart. */
enum report_fig {
    REPORT_FIG_TTFT,
    REPORT_FIG_TPOT,
    REPORT_FIG_E2E,
    REPORT_FIG_ATTAINMENT,
    REPORT_FIG_RPS,
    REPORT_FIG_TOKENS,
    REPORT_FIG_ENERGY,
    REPORT_FIG_ERRORS,
    REPORT_FIG_INFLIGHT,
    REPORT_FIG_SERVER_QUEUE,
    REPORT_FIG_SERVER_KV,
    REPORT_FIG_GPU_POWER,
    REPORT_FIG_GPU_UTIL,
    REPORT_FIG_CDF,
    REPORT_FIG_CLASS_TTFT,
    REPORT_FIG_CLASS_TPOT,
};

/* A figure: its chart, its class ("wide" or NULL), its title and the
 * caption that says how to read it. */
struct report_figure {
    enum report_fig fig;
    const char *cls;
    const char *title;
    const char *how;
};

/* Whether figure f has anything to show: SLO attainment only when some
 * step has an attainment figure (an SLO was set), the server's charts only
 * when its /metrics was scraped (r->n_server > 0), the charts of a stream
 * (TTFT, TPOT, their per-class and distribution charts) unless every step
 * was an embeddings step, which has none (no_stream). */
static int report_fig_shown(const struct report *r, enum report_fig f)
{
    if (f == REPORT_FIG_TTFT || f == REPORT_FIG_TPOT || f == REPORT_FIG_CDF ||
        f == REPORT_FIG_CLASS_TTFT || f == REPORT_FIG_CLASS_TPOT) {
        for (size_t i = 0; i < r->n_steps; i++)
            if (!r->steps[i].no_stream)
                return 1;
        return r->n_steps == 0;
    }
    if (f == REPORT_FIG_ATTAINMENT) {
        for (size_t i = 0; i < r->n_steps; i++)
            if (isfinite(r->steps[i].attainment))
                return 1;
        return 0;
    }
    if (f == REPORT_FIG_SERVER_QUEUE || f == REPORT_FIG_SERVER_KV)
        return r->n_server > 0;
    if (f == REPORT_FIG_ENERGY)
        return r->energy;
    if (f == REPORT_FIG_GPU_POWER || f == REPORT_FIG_GPU_UTIL) {
        for (size_t i = 0; r->gpu != NULL && i < r->n_gpu; i++)
            if (isfinite(f == REPORT_FIG_GPU_UTIL ? r->gpu[i].util_pct : r->gpu[i].power_w))
                return 1;
        return 0;
    }
    return 1;
}

/* Figure f's chart. */
static void report_fig_chart(struct strbuf *b, const struct report_view *v, enum report_fig f)
{
    const struct report *r = v->r;
    switch (f) {
    case REPORT_FIG_TTFT:
        report_latency_chart(b, r, v->order, v->n, v->marks, REPORT_TTFT, "chart-ttft", "TTFT",
                             "ms", 1e6, r->slo_ttft_ms);
        break;
    case REPORT_FIG_TPOT:
        report_latency_chart(b, r, v->order, v->n, v->marks, REPORT_TPOT, "chart-tpot", "TPOT",
                             "ms", 1e6, r->slo_tpot_ms);
        break;
    case REPORT_FIG_E2E:
        report_latency_chart(b, r, v->order, v->n, v->marks, REPORT_E2E, "chart-e2e", "E2E", "s",
                             1e9, r->slo_e2e_ms / 1000.0);
        break;
    case REPORT_FIG_ATTAINMENT: report_attainment_chart(b, r, v->order, v->n, v->marks); break;
    case REPORT_FIG_RPS: report_throughput_chart(b, r, v->order, v->n, v->marks); break;
    case REPORT_FIG_TOKENS: report_tokens_chart(b, r, v->order, v->n, v->marks); break;
    case REPORT_FIG_ENERGY: report_energy_chart(b, r, v->order, v->n, v->marks); break;
    case REPORT_FIG_ERRORS: report_errors_chart(b, r); break;
    case REPORT_FIG_INFLIGHT: report_inflight_chart(b, r); break;
    case REPORT_FIG_SERVER_QUEUE: report_server_chart(b, r, 0); break;
    case REPORT_FIG_SERVER_KV: report_server_chart(b, r, 1); break;
    case REPORT_FIG_GPU_POWER: report_gpu_chart(b, r, 0); break;
    case REPORT_FIG_GPU_UTIL: report_gpu_chart(b, r, 1); break;
    case REPORT_FIG_CDF: report_cdf_chart(b, r); break;
    case REPORT_FIG_CLASS_TTFT:
        report_class_chart(b, r, v->order, v->n, v->marks, REPORT_TTFT, "chart-class-ttft", "TTFT");
        break;
    case REPORT_FIG_CLASS_TPOT:
        report_class_chart(b, r, v->order, v->n, v->marks, REPORT_TPOT, "chart-class-tpot", "TPOT");
        break;
    }
}

/* A section's grid of figures figs[0..n), each that has something to show
 * (report_fig_shown) with its caption and chart. */
static void report_grid(struct strbuf *b, const struct report_view *v,
                        const struct report_figure *figs, size_t n)
{
    strbuf_puts(b, "<section class=\"grid\">\n");
    for (size_t i = 0; i < n; i++) {
        if (!report_fig_shown(v->r, figs[i].fig))
            continue;
        report_figure_open(b, figs[i].cls, figs[i].title, figs[i].how);
        report_fig_chart(b, v, figs[i].fig);
        report_figure_close(b);
    }
    strbuf_puts(b, "</section>\n");
}

/* Latency against load: TTFT, TPOT and E2E percentiles, then SLO
 * attainment when an SLO was set. */
static const struct report_figure report_latency_figs[] = {
    {REPORT_FIG_TTFT, NULL, "TTFT",
     "Time to first token, from the scheduled send time. "
     "Dashed red: the SLO threshold; dotted: the knee and the SLO capacity; "
     "shaded: beyond the SLO capacity; a ring: a step with no passing verdict "
     "whatever its figures (INVALID, interrupted, empty or unsteady)."},
    {REPORT_FIG_TPOT, NULL, "TPOT",
     "Time per output token after the first: the streaming pace "
     "a reader sees."},
    {REPORT_FIG_E2E, NULL, "End-to-end latency",
     "From the scheduled send time to the end of the stream."},
    {REPORT_FIG_ATTAINMENT, NULL, "SLO attainment",
     "Share of scheduled requests that completed within every "
     "SLO. Capacity is the highest load below the first judged one "
     "under the target line (or not steady): a load back above the "
     "line after it does not count."},
};

/* Throughput against load: requests per second, output tokens per second. */
static const struct report_figure report_throughput_figs[] = {
    {REPORT_FIG_RPS, NULL, "Requests per second",
     "On the dashed y = x line the server keeps up. Completed "
     "falling below it is saturation; goodput below completed is "
     "work done too late to count."},
    {REPORT_FIG_TOKENS, NULL, "Output tokens per second",
     "Generated tokens of successful requests. It flattens where "
     "the server is saturated."},
    {REPORT_FIG_ENERGY, NULL, "Energy per output token",
     "The GPUs' energy over each step's window (--gpu-metrics: the "
     "energy counter's increase, else the power integrated) over the "
     "output tokens received in it: the efficiency curve. It falls as "
     "batches fill and idle power is shared, and flattens at saturation."},
};

/* Errors: by kind per step, one wide chart. */
static const struct report_figure report_errors_figs[] = {
    {REPORT_FIG_ERRORS, "wide", "Errors by kind per step",
     "Every scheduled request that did not complete ok, by kind "
     "(docs/formats.md lists the kinds), but those the client cancelled "
     "itself: those are not the server's errors, and a line under the "
     "chart counts them. The number on a bar is its total."},
};

/* Under the errors chart: per failed kind, its total over the steps, the
 * step where it first came, and the first message of that kind (the
 * server's text as the records keep it, truncated there; header values
 * are never in it): a run of 400s explains itself here. Nothing when no
 * request failed. */
static void report_error_samples(struct strbuf *b, const struct report *r)
{
    uint64_t total[REC_KIND_COUNT] = {0};
    size_t first[REC_KIND_COUNT];
    int any = 0;
    for (size_t i = 0; i < r->n_steps; i++) {
        for (int k = 1; k < REC_KIND_COUNT; k++) {
            if (r->steps[i].by_kind[k] == 0)
                continue;
            if (total[k] == 0)
                first[k] = i;
            total[k] += r->steps[i].by_kind[k];
            any = 1;
        }
    }
    if (!any)
        return;
    strbuf_puts(b, "<table id=\"error-samples\"><thead><tr><th class=\"l\">kind</th>"
                   "<th>requests</th><th>first in step</th>"
                   "<th class=\"l\">a sample of the message</th></tr></thead>\n<tbody>\n");
    for (int k = 1; k < REC_KIND_COUNT; k++) {
        if (total[k] == 0)
            continue;
        const struct report_step *s = &r->steps[first[k]];
        const char *msg = NULL;
        for (size_t i = first[k]; i < r->n_steps && !msg; i++)
            if (r->steps[i].sample[k] && r->steps[i].sample[k][0])
                msg = r->steps[i].sample[k];
        strbuf_puts(b, "<tr><td class=\"l\">");
        strbuf_put_xml(b, rec_kind_name((enum rec_kind)k));
        strbuf_printf(b, "</td><td>%llu</td><td>", (unsigned long long)total[k]);
        if (s->id[0])
            strbuf_put_xml(b, s->id);
        else
            strbuf_printf(b, "%zu", first[k]);
        strbuf_puts(b, "</td><td class=\"l\">");
        strbuf_put_xml(b, msg ? msg : "(no message)");
        strbuf_puts(b, "</td></tr>\n");
    }
    strbuf_puts(b, "</tbody></table>\n");
}

/* Over time: the client's requests in flight, then, when the server's
 * /metrics was scraped, its queue and batch and its KV cache, and with GPU
 * telemetry, the GPUs' power and utilisation. */
static const struct report_figure report_time_figs[] = {
    {REPORT_FIG_INFLIGHT, "wide", "Requests in flight",
     "Requests scheduled and not yet finished (sent, or waiting for a "
     "slot under --max-concurrency), over the whole run; grey "
     "lines mark the start of each step. A climb that never levels "
     "off within a step is a growing backlog."},
    {REPORT_FIG_SERVER_QUEUE, "wide", "Server queue and batch",
     "Scraped from the server's /metrics: requests running in "
     "the batch and waiting in its queue."},
    {REPORT_FIG_SERVER_KV, "wide", "Server KV cache",
     "Share of the KV cache in use. Near 100% the server "
     "preempts or queues: the usual cause of the knee."},
    {REPORT_FIG_GPU_POWER, "wide", "GPU power",
     "The GPUs' power draw (--gpu-metrics, --gpu-sampler), all the GPUs "
     "of a source summed, a line per source: idle power between steps, "
     "rising with the batch above. Read it against the queue above: "
     "power that stops rising while the queue grows is a saturated GPU."},
    {REPORT_FIG_GPU_UTIL, "wide", "GPU utilisation",
     "Share of time a kernel was running, the mean over a source's "
     "GPUs. 100% says busy, not efficient: a small batch can keep it "
     "there."},
};

/* The TTFT distribution of every step, one wide chart. */
static const struct report_figure report_cdf_figs[] = {
    {REPORT_FIG_CDF, "wide", "TTFT, cumulative distribution",
     "One line per step, darker for lighter load. A line's height "
     "at the SLO is the share of requests whose first token came in "
     "time; a long flat top is the tail."},
};

/* By traffic class (only with classes): the two p99 charts; the section
 * goes on with each class's capacity and the class table. */
static const struct report_figure report_class_figs[] = {
    {REPORT_FIG_CLASS_TTFT, NULL, "TTFT p99 per class",
     "One line per traffic class of the workload file, against the "
     "whole step's offered load."},
    {REPORT_FIG_CLASS_TPOT, NULL, "TPOT p99 per class",
     "The streaming pace of each class; long outputs share the batch "
     "with short ones."},
};

/* The figure sections, each a heading and its grid, in page order. */
static void report_figure_sections(struct strbuf *b, const struct report_view *v)
{
    const struct report *r = v->r;
    const char *load = r->closed_loop ? "achieved" : "offered";
    strbuf_printf(b, "<h2>Latency against %s load</h2>\n", load);
    report_grid(b, v, report_latency_figs, LL_ARRAY_LEN(report_latency_figs));
    strbuf_printf(b, "<h2>Throughput against %s load</h2>\n", load);
    report_grid(b, v, report_throughput_figs, LL_ARRAY_LEN(report_throughput_figs));
    strbuf_puts(b, "<h2>Errors</h2>\n");
    report_grid(b, v, report_errors_figs, LL_ARRAY_LEN(report_errors_figs));
    report_error_samples(b, r);
    strbuf_puts(b, "<h2>Over time</h2>\n");
    report_grid(b, v, report_time_figs, LL_ARRAY_LEN(report_time_figs));
    if (report_fig_shown(r, REPORT_FIG_CDF)) { /* embeddings have no TTFT */
        strbuf_puts(b, "<h2>TTFT distribution per step</h2>\n");
        report_grid(b, v, report_cdf_figs, LL_ARRAY_LEN(report_cdf_figs));
    }
    if (r->n_classes > 0) {
        strbuf_puts(b, "<h2>By traffic class</h2>\n");
        report_grid(b, v, report_class_figs, LL_ARRAY_LEN(report_class_figs));
        report_class_table(b, r);
    }
    if (r->n_endpoints > 0) {
        strbuf_puts(b, "<h2>By endpoint</h2>\n");
        report_endpoint_table(b, r);
    }
}

/* Every step: the table, one row per step in the order run. */
static void report_steps_section(struct strbuf *b, const struct report *r)
{
    strbuf_puts(b, "<h2>Every step</h2>\n");
    report_table(b, r);
    report_cold_table(b, r);
}

/* The footer (with the llmload version when known) and the end of the
 * document. */
static void report_page_close(struct strbuf *b, const struct report *r)
{
    report_page_foot(b, r->version);
}

void report_page_foot(struct strbuf *b, const char *version)
{
    strbuf_puts(b, "<footer>Latencies count from each request's scheduled send time "
                   "(no coordinated omission). Percentiles are nearest-rank. Every point "
                   "in the charts carries its exact value in data-x / data-y attributes. "
                   "Generated by llmload");
    if (version != NULL) {
        strbuf_puts(b, " ");
        strbuf_put_xml(b, version);
    }
    strbuf_puts(b, ".</footer>\n</main>\n</body>\n</html>\n");
}

/* The page, section by section in the order of the file's header comment.
 * The curves' step order and the knee/capacity markers are worked out once
 * here and lent to every chart against load. */
void report_html_render(const struct report *r, struct strbuf *b)
{
    size_t *order = ll_calloc(r->n_steps + 1, sizeof(size_t));
    size_t n = report_curve_order(r, order);
    struct report_marks marks;
    report_marks_init(&marks, r);

    report_page_open(b, r);
    report_header(b, r);
    report_findings(b, r);
    struct report_view v = {r, order, n, &marks};
    report_figure_sections(b, &v);
    report_steps_section(b, r);
    report_page_close(b, r);

    report_marks_free(&marks);
    free(order);
}

int report_html_write(const struct report *r, const char *path, char *err,
                      size_t errlen)
{
    struct strbuf b;
    strbuf_init(&b);
    report_html_render(r, &b);
    int rc = report_file_write(path, b.data, b.len, err, errlen);
    strbuf_free(&b);
    return rc;
}

int report_file_write(const char *path, const char *text, size_t len, char *err, size_t errlen)
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

    int rc = LL_E_IO;
    FILE *f = fopen(tmp, "w");
    if (f == NULL) {
        if (err != NULL && errlen > 0)
            snprintf(err, errlen, "cannot create %s: %s", tmp, strerror(errno));
        goto out;
    }
    if (fwrite(text, 1, len, f) != len || fflush(f) != 0 || fsync(fileno(f)) != 0) {
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
    free(tmp);
    return rc;
}
