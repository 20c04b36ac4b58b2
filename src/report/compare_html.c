/* compare_html.c: compare.html from compare.json's document (see
 * compare_html.h). It reads nothing but the document, so the page says
 * exactly what compare.json says. */
#include "report/compare_html.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "report/svg.h"
#include "util/util.h"

static const char css[] =
    ("body{margin:0;background:#f6f7f9;color:#111827;"
     "font-family:system-ui,-apple-system,'Segoe UI',Roboto,Arial,sans-serif;font-size:15px;"
     "line-height:1.5}\n"
     "main{max-width:1240px;margin:0 auto;padding:28px 24px 56px}\n"
     "h1{font-size:26px;margin:0 0 4px}\n"
     "h2{font-size:18px;margin:34px 0 12px;padding-bottom:6px;border-bottom:1px solid #e5e7eb}\n"
     "h3{font-size:15px;margin:18px 0 6px}\n"
     ".sub{color:#6b7280;margin:0 0 14px}\n"
     ".differs{background:#fef3c7;color:#78350f;border:1px solid #fcd34d;border-radius:8px;"
     "padding:8px 14px;margin:12px 0}\n"
     ".charts{display:grid;grid-template-columns:repeat(auto-fit,minmax(420px,1fr));gap:14px}\n"
     /* div.chart only: the svg inside is class "chart" too, and a second
      * card on it would double the border and push it past the first. */
     "div.chart{background:#fff;border:1px solid #e5e7eb;border-radius:10px;padding:10px;"
     "min-width:0}\n"
     "svg.chart{display:block;width:100%;height:auto}\n"
     "table{border-collapse:collapse;background:#fff;font-variant-numeric:tabular-nums;"
     "font-size:14px;margin:6px 0 14px}\n"
     "th,td{padding:4px 10px;border-bottom:1px solid #e5e7eb;text-align:right}\n"
     "th:first-child,td:first-child{text-align:left}\n"
     "tr.better td{background:#d1fae5;color:#065f46}\n"
     "tr.worse td{background:#fee2e2;color:#7f1d1d}\n");

static double jnum(json_t *o, const char *k)
{
    json_t *v = json_object_get(o, k);
    return json_is_number(v) ? json_number_value(v) : NAN;
}

static const char *jstr(json_t *o, const char *k)
{
    const char *s = json_string_value(json_object_get(o, k));
    return s ? s : "";
}

/* A value in a row's unit, as text. */
static void put_value(struct strbuf *b, const char *unit, double v)
{
    if (!isfinite(v))
        strbuf_puts(b, "-");
    else if (strcmp(unit, "ns") == 0)
        strbuf_printf(b, "%.2f ms", v / 1e6);
    else if (strcmp(unit, "req/s") == 0)
        strbuf_printf(b, "%.2f/s", v);
    else if (strcmp(unit, "share") == 0)
        strbuf_printf(b, "%.2f%%", 100 * v);
    else
        strbuf_printf(b, "%.1f", v);
}

static void put_diff(struct strbuf *b, int pp, double v)
{
    if (!isfinite(v))
        strbuf_puts(b, "-");
    else
        strbuf_printf(b, pp ? "%+.2fpp" : "%+.1f%%", 100 * v);
}

/* A row's name as the terminal table titles it ("tpot_p99" is "TPOT
 * p99", "error_rate_cancelled" is "error rate: cancelled"); data-row keeps
 * the name itself. */
static void put_row_title(struct strbuf *b, const char *name)
{
    static const char *const lat[][2] = {
        {"ttft_", "TTFT "}, {"tpot_", "TPOT "}, {"itl_", "ITL/req "}, {"e2e_", "E2E "}};
    for (size_t i = 0; i < sizeof lat / sizeof lat[0]; i++) {
        size_t n = strlen(lat[i][0]);
        if (strncmp(name, lat[i][0], n) == 0) {
            strbuf_puts(b, lat[i][1]);
            strbuf_put_xml(b, name + n);
            return;
        }
    }
    if (strcmp(name, "output_tokens_per_s") == 0) {
        strbuf_puts(b, "output tok/s");
        return;
    }
    const char *sub = strncmp(name, "error_rate_", 11) == 0 ? name + 11 : NULL;
    if (sub) {
        strbuf_puts(b, "error rate: ");
        name = sub;
    }
    char one[2] = {0, 0};
    for (const char *p = name; *p; p++) {
        one[0] = *p == '_' ? ' ' : *p;
        strbuf_put_xml(b, one);
    }
}

/* Why a row is the same, in the terminal table's words. */
static const char *same_text(const char *why)
{
    if (strcmp(why, "too_few") == 0)
        return "too few values";
    if (strcmp(why, "within_noise") == 0)
        return "within noise";
    if (strcmp(why, "below_min_effect") == 0)
        return "under --min-effect";
    return why;
}

/* A table of compare.json rows: colour (class better / worse) only on a
 * row whose verdict is better or worse. */
static void put_rows(struct strbuf *b, json_t *rows)
{
    strbuf_puts(b, "<table class=\"rows\">\n<thead><tr><th>metric</th><th>baseline</th>"
                   "<th>candidate</th><th>diff</th><th>95% interval</th><th>verdict</th></tr>"
                   "</thead>\n<tbody>\n");
    size_t i;
    json_t *r;
    json_array_foreach(rows, i, r)
    {
        const char *v = jstr(r, "verdict"), *unit = jstr(r, "unit");
        json_t *d = json_object_get(r, "diff");
        int pp = strcmp(jstr(d, "kind"), "difference") == 0;
        strbuf_puts(b, "<tr");
        if (strcmp(v, "better") == 0 || strcmp(v, "worse") == 0)
            strbuf_printf(b, " class=\"%s\"", v);
        strbuf_puts(b, " data-row=\"");
        strbuf_put_xml(b, jstr(r, "row"));
        strbuf_puts(b, "\" data-verdict=\"");
        strbuf_put_xml(b, v);
        /* Which interval the row shows: within the records, or between
         * the runs (a sweep's repeats), the wider. */
        int runs = strcmp(jstr(r, "interval"), "between_runs") == 0;
        if (*jstr(r, "interval")) {
            strbuf_puts(b, "\" data-interval=\"");
            strbuf_put_xml(b, jstr(r, "interval"));
        }
        strbuf_puts(b, "\"><td>");
        put_row_title(b, jstr(r, "row"));
        strbuf_puts(b, "</td><td>");
        put_value(b, unit, jnum(r, "baseline"));
        strbuf_puts(b, "</td><td>");
        put_value(b, unit, jnum(r, "candidate"));
        strbuf_puts(b, "</td><td>");
        put_diff(b, pp, jnum(d, "value"));
        strbuf_puts(b, "</td><td>");
        if (json_is_true(json_object_get(d, "too_few"))) {
            strbuf_puts(b, "too few values");
        } else if (isfinite(jnum(d, "lo"))) {
            strbuf_puts(b, "[");
            put_diff(b, pp, jnum(d, "lo"));
            strbuf_puts(b, ", ");
            put_diff(b, pp, jnum(d, "hi"));
            strbuf_puts(b, runs ? "] between runs" : "]");
        } else {
            strbuf_puts(b, "-");
        }
        strbuf_puts(b, "</td><td>");
        strbuf_put_xml(b, v);
        const char *why = json_string_value(json_object_get(r, "same_because"));
        if (why) {
            strbuf_puts(b, " (");
            strbuf_put_xml(b, same_text(why));
            strbuf_puts(b, ")");
        }
        strbuf_puts(b, "</td></tr>\n");
    }
    strbuf_puts(b, "</tbody></table>\n");
}

/* The sides in order: the baseline, then each candidate. */
static size_t sides_of(json_t *doc, json_t **out, size_t max)
{
    size_t n = 0, i;
    json_t *c;
    out[n++] = json_object_get(doc, "baseline");
    json_array_foreach(json_object_get(doc, "candidates"), i, c)
    {
        if (n < max)
            out[n++] = c;
    }
    return n;
}

#define MAX_PLOT_SIDES 16

/* The shard every side of doc is ("K/N", borrowed from doc), when there
 * are two sides or more and all are the same shard of a sharded run (like
 * for like shares of the load, as compare's terminal note); else NULL. */
static const char *same_shard(json_t *doc)
{
    const char *k = jstr(json_object_get(doc, "baseline"), "shard");
    json_t *cands = json_object_get(doc, "candidates"), *c;
    size_t i;
    if (!*k || json_array_size(cands) == 0)
        return NULL;
    json_array_foreach(cands, i, c)
    {
        if (strcmp(jstr(c, "shard"), k) != 0)
            return NULL;
    }
    return k;
}

/* A side's series: the baseline solid with filled dots, a candidate dashed
 * with rings, so that where the curves coincide the baseline's dots still
 * show through the candidate's. */
static unsigned side_flags(size_t s)
{
    return SVG_LINE | SVG_MARKERS | (s ? SVG_DASHED | SVG_HOLLOW : 0u);
}

/* One chart of the sweeps' curves: field of each side's curve against
 * offered load, scaled, one series per side, and each side's SLO
 * capacity as a vertical line in its colour (data-key "capacity-side-N",
 * labelled when label_caps); ymax fixes the y axis's top (NAN: from the
 * data). */
static void sweep_chart(struct strbuf *b, json_t **sides, size_t ns, const char *id,
                        const char *title, const char *field, double scale, const char *ylabel,
                        const char *yunit, double ymax, int label_caps)
{
    struct svg_series se[MAX_PLOT_SIDES];
    struct svg_vline vl[MAX_PLOT_SIDES];
    char vkeys[MAX_PLOT_SIDES][40], vlabels[MAX_PLOT_SIDES][80];
    size_t nv = 0;
    for (size_t s = 0; s < ns; s++) {
        json_t *cap = json_object_get(sides[s], "capacity");
        if (!json_is_true(json_object_get(cap, "found")) || !isfinite(jnum(cap, "value")))
            continue;
        snprintf(vkeys[nv], sizeof vkeys[nv], "capacity-side-%zu", s);
        snprintf(vlabels[nv], sizeof vlabels[nv], "%.60s capacity", jstr(sides[s], "label"));
        vl[nv] = (struct svg_vline){.x = jnum(cap, "value"),
                                    .key = vkeys[nv],
                                    .label = label_caps ? vlabels[nv] : NULL,
                                    .color = svg_palette(s)};
        nv++;
    }
    double *xs[MAX_PLOT_SIDES], *ys[MAX_PLOT_SIDES];
    char keys[MAX_PLOT_SIDES][16];
    for (size_t s = 0; s < ns; s++) {
        json_t *curve = json_object_get(sides[s], "curve");
        size_t n = json_array_size(curve);
        xs[s] = ll_calloc(n + 1, sizeof(double));
        ys[s] = ll_calloc(n + 1, sizeof(double));
        for (size_t i = 0; i < n; i++) {
            json_t *p = json_array_get(curve, i);
            xs[s][i] = jnum(p, "offered_rps");
            ys[s][i] = jnum(p, field) * scale;
        }
        snprintf(keys[s], sizeof keys[s], "side-%zu", s);
        se[s] = (struct svg_series){.key = keys[s],
                                    .label = jstr(sides[s], "label"),
                                    .x = xs[s],
                                    .y = ys[s],
                                    .n = n,
                                    .flags = side_flags(s)};
    }
    struct svg_chart c = {
        .id = id,
        .title = title,
        .x = {.label = "offered load", .unit = "req/s", .min = NAN, .max = NAN, .include_zero = 1},
        .y = {.label = ylabel, .unit = yunit, .min = NAN, .max = ymax, .include_zero = 1},
        .series = se,
        .n_series = ns,
        .vlines = vl,
        .n_vlines = nv,
    };
    strbuf_puts(b, "<div class=\"chart\">\n");
    svg_chart_write(b, &c);
    strbuf_puts(b, "</div>\n");
    for (size_t s = 0; s < ns; s++) {
        free(xs[s]);
        free(ys[s]);
    }
}

/* One chart of the runs' percentile rows (lat: "ttft", "e2e"): p50, p90
 * and p99 of each side, one series per side. */
static void run_chart(struct strbuf *b, json_t *doc, json_t **sides, size_t ns, const char *lat,
                      const char *id, const char *title)
{
    static const double ps[] = {50, 90, 99};
    struct svg_series se[MAX_PLOT_SIDES];
    double x[MAX_PLOT_SIDES][3], y[MAX_PLOT_SIDES][3];
    char keys[MAX_PLOT_SIDES][16];
    json_t *cands = json_object_get(doc, "candidates");
    for (size_t s = 0; s < ns; s++) {
        /* The baseline's values are in any candidate's rows; the first's. */
        json_t *rows = json_object_get(json_array_get(cands, s ? s - 1 : 0), "rows");
        for (int p = 0; p < 3; p++) {
            char name[32];
            snprintf(name, sizeof name, "%s_p%.0f", lat, ps[p]);
            x[s][p] = ps[p];
            y[s][p] = NAN;
            size_t i;
            json_t *r;
            json_array_foreach(rows, i, r)
            {
                if (strcmp(jstr(r, "row"), name) == 0)
                    y[s][p] = jnum(r, s ? "candidate" : "baseline") / 1e6;
            }
        }
        snprintf(keys[s], sizeof keys[s], "side-%zu", s);
        se[s] = (struct svg_series){.key = keys[s],
                                    .label = jstr(sides[s], "label"),
                                    .x = x[s],
                                    .y = y[s],
                                    .n = 3,
                                    .flags = side_flags(s)};
    }
    struct svg_chart c = {
        .id = id,
        .title = title,
        .x = {.label = "percentile", .unit = NULL, .min = 40, .max = 100},
        .y = {.label = title, .unit = "ms", .min = NAN, .max = NAN, .include_zero = 1},
        .series = se,
        .n_series = ns,
    };
    strbuf_puts(b, "<div class=\"chart\">\n");
    svg_chart_write(b, &c);
    strbuf_puts(b, "</div>\n");
}

static void put_bracket(struct strbuf *b, json_t *br)
{
    if (!json_is_true(json_object_get(br, "found"))) {
        strbuf_puts(b, "- (");
        strbuf_put_xml(b, jstr(br, "why"));
        strbuf_puts(b, ")");
        return;
    }
    strbuf_printf(b, "%.4g req/s [%.4g, ", jnum(br, "value"), jnum(br, "lo"));
    if (isfinite(jnum(br, "hi")))
        strbuf_printf(b, "%.4g]", jnum(br, "hi"));
    else
        strbuf_puts(b, "-] (lower bound)");
}

static void put_bracket_row(struct strbuf *b, const char *name, json_t *base, json_t *cand,
                            json_t *verdict)
{
    const char *v = jstr(verdict, "verdict");
    strbuf_puts(b, "<tr");
    if (strcmp(v, "better") == 0 || strcmp(v, "worse") == 0)
        strbuf_printf(b, " class=\"%s\"", v);
    strbuf_printf(b, " data-row=\"%s\" data-verdict=\"", name);
    strbuf_put_xml(b, v);
    strbuf_printf(b, "\"><td>%s</td><td>", name);
    put_bracket(b, base);
    strbuf_puts(b, "</td><td>");
    put_bracket(b, cand);
    strbuf_puts(b, "</td><td>");
    strbuf_put_xml(b, v);
    if (json_is_string(json_object_get(verdict, "same_because")))
        strbuf_puts(b, " (brackets overlap)");
    strbuf_puts(b, "</td></tr>\n");
}

/* One line of candidate c's differences from the baseline listed under
 * key (config_differences, load_differences), headed by what; none when
 * it has none. */
static void put_key_diffs(struct strbuf *b, json_t *c, const char *key, const char *what)
{
    json_t *diffs = json_object_get(c, key);
    if (json_array_size(diffs) == 0)
        return;
    strbuf_printf(b, "<div class=\"differs\">%s:", what);
    size_t i;
    json_t *o;
    json_array_foreach(diffs, i, o)
    {
        char *x = json_dumps(json_object_get(o, "baseline"),
                             JSON_COMPACT | JSON_ENCODE_ANY | JSON_SORT_KEYS);
        char *y = json_dumps(json_object_get(o, "candidate"),
                             JSON_COMPACT | JSON_ENCODE_ANY | JSON_SORT_KEYS);
        strbuf_puts(b, i ? "; " : " ");
        strbuf_put_xml(b, jstr(o, "key"));
        strbuf_puts(b, ": ");
        strbuf_put_xml(b, x ? x : "?");
        strbuf_puts(b, " vs ");
        strbuf_put_xml(b, y ? y : "?");
        free(x);
        free(y);
    }
    strbuf_puts(b, "</div>\n");
}

/* The allowed config differences, and the load's (the terminal's note
 * line: a latency at another load moved with the load). */
static void put_differences(struct strbuf *b, json_t *c)
{
    put_key_diffs(b, c, "config_differences", "config differs (allowed)");
    put_key_diffs(b, c, "load_differences",
                  "load differs (latencies move with the load as well as the server)");
}

void compare_html_render(json_t *doc, struct strbuf *b)
{
    json_t *sides[MAX_PLOT_SIDES];
    size_t ns = sides_of(doc, sides, MAX_PLOT_SIDES);
    int sweep = strcmp(jstr(doc, "kind"), "sweep") == 0;
    json_t *base = sides[0];
    strbuf_puts(b, "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\"/>\n"
                   "<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\"/>\n"
                   "<title>llmload compare</title>\n<style>\n");
    strbuf_puts(b, css);
    strbuf_puts(b, "</style>\n</head>\n<body>\n<main>\n<h1>llmload compare: ");
    strbuf_put_xml(b, jstr(doc, "kind"));
    strbuf_puts(b, "</h1>\n<p class=\"sub\">baseline ");
    strbuf_put_xml(b, jstr(base, "label"));
    strbuf_puts(b, " (");
    strbuf_put_xml(b, jstr(base, "dir"));
    strbuf_printf(b,
                  "); 95%% intervals, bootstrap %.0f resamples; a relative difference under "
                  "%.4g%% is never called; llmload ",
                  jnum(doc, "bootstrap"), 100 * jnum(doc, "min_effect"));
    strbuf_put_xml(b, jstr(doc, "version"));
    strbuf_puts(b, "</p>\n");
    json_t *cands = json_object_get(doc, "candidates");
    size_t i;
    json_t *c;
    json_array_foreach(cands, i, c) put_differences(b, c);
    /* A run that was INVALID or interrupted, or one shard of a sharded
     * run, is compared, and said so (as the terminal's warning); when
     * every side is the same shard K/N, once, as like for like. */
    const char *like = same_shard(doc);
    if (like) {
        strbuf_puts(b, "<div class=\"differs outcome\">every side is shard ");
        strbuf_put_xml(b, like);
        strbuf_puts(b, " of a sharded run: like for like shares of the load, each side's "
                       "figures that shard's share alone</div>\n");
    }
    for (size_t k = 0; k < ns; k++) {
        const char *shard = jstr(sides[k], "shard");
        if (*shard && !like) {
            strbuf_puts(b, "<div class=\"differs outcome\">");
            strbuf_put_xml(b, jstr(sides[k], "label"));
            strbuf_puts(b, k ? " (candidate) is shard " : " (baseline) is shard ");
            strbuf_put_xml(b, shard);
            strbuf_puts(b, " of a sharded run: its figures are that shard's share of the load "
                           "alone</div>\n");
        }
        const char *oc = jstr(sides[k], "outcome");
        if (!*oc || strcmp(oc, "ok") == 0)
            continue;
        strbuf_puts(b, "<div class=\"differs outcome\">");
        strbuf_put_xml(b, jstr(sides[k], "label"));
        strbuf_puts(b, k ? " (candidate) was " : " (baseline) was ");
        strbuf_put_xml(b, oc);
        const char *why = jstr(sides[k], "invalid_reason");
        if (*why) {
            strbuf_puts(b, ": ");
            strbuf_put_xml(b, why);
        }
        strbuf_puts(b, "</div>\n");
    }

    strbuf_puts(b, "<h2>Curves</h2>\n<div class=\"charts\">\n");
    if (sweep) {
        sweep_chart(b, sides, ns, "cmp-ttft", "TTFT p99", "ttft_p99_ns", 1e-6, "TTFT p99", "ms",
                    NAN, 0);
        sweep_chart(b, sides, ns, "cmp-tpot", "TPOT p99", "tpot_p99_ns", 1e-6, "TPOT p99", "ms",
                    NAN, 0);
        sweep_chart(b, sides, ns, "cmp-goodput", "goodput", "goodput_rps", 1, "goodput", "req/s",
                    NAN, 1);
        sweep_chart(b, sides, ns, "cmp-attainment", "attainment", "attainment", 100, "attainment",
                    "%", 100, 0);
    } else {
        run_chart(b, doc, sides, ns, "ttft", "cmp-ttft", "TTFT");
        run_chart(b, doc, sides, ns, "e2e", "cmp-e2e", "E2E");
    }
    strbuf_puts(b, "</div>\n");

    json_array_foreach(cands, i, c)
    {
        strbuf_puts(b, "<section class=\"candidate\" data-label=\"");
        strbuf_put_xml(b, jstr(c, "label"));
        strbuf_puts(b, "\">\n<h2>");
        strbuf_put_xml(b, jstr(c, "label"));
        strbuf_puts(b, " (candidate) vs ");
        strbuf_put_xml(b, jstr(base, "label"));
        strbuf_puts(b, " (baseline)</h2>\n");
        if (!sweep) {
            put_rows(b, json_object_get(c, "rows"));
            strbuf_puts(b, "</section>\n");
            continue;
        }
        strbuf_puts(b, "<table class=\"brackets\">\n<thead><tr><th></th><th>baseline</th>"
                       "<th>candidate</th><th>verdict</th></tr></thead>\n<tbody>\n");
        put_bracket_row(b, "capacity", json_object_get(base, "capacity"),
                        json_object_get(c, "capacity"), json_object_get(c, "capacity_verdict"));
        put_bracket_row(b, "knee", json_object_get(base, "knee"), json_object_get(c, "knee"),
                        json_object_get(c, "knee_verdict"));
        strbuf_puts(b, "</tbody></table>\n");
        size_t k;
        json_t *rate;
        json_array_foreach(json_object_get(c, "rates"), k, rate)
        {
            strbuf_printf(b, "<h3>at %.4g req/s offered</h3>\n", jnum(rate, "offered_rps"));
            put_rows(b, json_object_get(rate, "rows"));
        }
        strbuf_puts(b, "</section>\n");
    }
    strbuf_puts(b, "</main>\n</body>\n</html>\n");
}

int compare_html_write(const char *dir, json_t *doc, char *err, size_t errlen)
{
    char path[4200], tmp[4220];
    snprintf(path, sizeof path, "%s/compare.html", dir);
    snprintf(tmp, sizeof tmp, "%s.tmp", path);
    struct strbuf b;
    strbuf_init(&b);
    compare_html_render(doc, &b);
    int rc = -1;
    FILE *f = fopen(tmp, "w");
    if (!f) {
        snprintf(err, errlen, "cannot create %s: %s", tmp, strerror(errno));
        goto out;
    }
    if (fwrite(b.data, 1, b.len, f) != b.len || fflush(f) != 0 || fsync(fileno(f)) != 0) {
        snprintf(err, errlen, "cannot write %s: %s", tmp, strerror(errno));
        fclose(f);
        unlink(tmp);
        goto out;
    }
    if (fclose(f) != 0 || rename(tmp, path) != 0) {
        snprintf(err, errlen, "cannot write %s: %s", path, strerror(errno));
        unlink(tmp);
        goto out;
    }
    rc = 0;
out:
    strbuf_free(&b);
    return rc;
}
