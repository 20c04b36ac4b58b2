/* report_timecharts.c: the charts of report.html over the run's time, each
 * an inline SVG (svg.h): the client's requests in flight and the server's
 * scrapes (its queue and running batch, its KV cache usage), thinned to
 * REPORT_MAX_TS_POINTS, with a line at each step's start and the band of
 * --rates auto's capacity probe. Moved from report_charts.c, which holds
 * the charts against load. */
#include "report/report_html.h"

#include <math.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "report/report_int.h"
#include "report/svg.h"
#include "util/util.h"

/* Thin samples [0, n) into at most max points (max >= 1) by keeping, in
 * each run of ceil(n / max) samples, the one with the largest value (the
 * first on ties), so peaks survive. Writes the kept indices to keep and
 * returns their count. */
size_t report_thin(const double *v, size_t n, size_t max, size_t *keep)
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
 * step's load. Returns the count; the markers' labels point into labels.
 * v and labels hold at least r->n_steps entries. */
static size_t report_step_marks(const struct report *r, struct svg_vline *v, char (*labels)[24])
{
    size_t n = 0;
    for (size_t i = 0; i < r->n_steps; i++) {
        const struct report_step *s = &r->steps[i];
        if (s->t_start_s == 0 && s->t_end_s == 0)
            continue;
        struct strbuf lab;
        strbuf_init(&lab);
        if (r->step_mark != NULL) {
            strbuf_puts(&lab, r->step_mark);
        } else {
            report_step_label(r, s, &lab);
            strbuf_puts(&lab, "/s");
        }
        snprintf(labels[n], sizeof(labels[n]), "%s", lab.data);
        strbuf_free(&lab);
        v[n] = (struct svg_vline){
            .x = s->t_start_s, .key = "step", .label = labels[n], .color = REPORT_COLOR_STEP};
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
    for (size_t i = 0; r->gpu != NULL && i < r->n_gpu; i++)
        t = LL_MAX(t, r->gpu[i].t_s);
    return t > 0 ? t : NAN;
}

/* The capacity probe of --rates auto on a chart over time: a grey band
 * over its interval (data-key "probe") into *band, and a legend entry that
 * names it into *note. Returns 1 when the report has a probe, else 0. */
static int report_probe_band(const struct report *r, struct svg_band *band, struct svg_series *note)
{
    if (!(r->probe_t1_s > r->probe_t0_s))
        return 0;
    *band = (struct svg_band){.x0 = r->probe_t0_s,
                              .x1 = r->probe_t1_s,
                              .key = "probe",
                              .label = "probe",
                              .color = REPORT_COLOR_PROBE};
    *note = (struct svg_series){.key = "probe-note",
                                .label = "grey band: capacity probe (closed loop, --rates auto)",
                                .n = 0,
                                .flags = SVG_LINE,
                                .color = REPORT_COLOR_STEP};
    return 1;
}

void report_time_marks_init(struct report_time_marks *tm, const struct report *r)
{
    *tm = (struct report_time_marks){0};
    tm->v = ll_calloc(r->n_steps + 1, sizeof(*tm->v));
    tm->labels = ll_calloc(r->n_steps + 1, sizeof(*tm->labels));
    tm->nv = report_step_marks(r, tm->v, tm->labels);
}

/* The probe's band, and its legend entry appended at se[nse] (room for
 * one more) when there is one. Returns the new series count. */
size_t report_time_marks_probe(struct report_time_marks *tm, const struct report *r,
                               struct svg_series *se, size_t nse)
{
    tm->probe = report_probe_band(r, &tm->band, &se[nse]);
    return nse + (size_t)tm->probe;
}

/* Write chart c over time: x the time since the start, with tm's marks. */
void report_time_chart_write(struct strbuf *b, struct svg_chart *c,
                             const struct report_time_marks *tm, const struct report *r)
{
    c->x = (struct svg_axis){.label = "time since start",
                             .unit = "s",
                             .min = 0,
                             .max = report_time_end(r),
                             .include_zero = 1};
    c->vlines = tm->v;
    c->n_vlines = tm->nv;
    c->bands = &tm->band;
    c->n_bands = (size_t)tm->probe;
    svg_chart_write(b, c);
}

void report_time_marks_free(struct report_time_marks *tm)
{
    free(tm->v);
    free(tm->labels);
}

void report_inflight_chart(struct strbuf *b, const struct report *r)
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
    struct report_time_marks tm;
    report_time_marks_init(&tm, r);
    struct svg_series se[3] = {{.key = "inflight",
                                .label = "requests in flight (client)",
                                .x = x,
                                .y = y,
                                .n = n,
                                .flags = SVG_LINE,
                                .color = REPORT_COLOR_P50}};
    size_t nse = 1;
    /* The probe's own clients, before the steps: thinned like one step. */
    size_t np = r->probe_inflight != NULL ? r->n_probe_inflight : 0;
    double *px = ll_calloc(np + 1, sizeof(double));
    double *py = ll_calloc(np + 1, sizeof(double));
    double *ptmp = ll_calloc(np + 1, sizeof(double));
    size_t *pkeep = ll_calloc(np + 1, sizeof(size_t));
    for (size_t j = 0; j < np; j++)
        ptmp[j] = r->probe_inflight[j].inflight;
    size_t pk = report_thin(ptmp, np, budget, pkeep);
    for (size_t j = 0; j < pk; j++) {
        px[j] = r->probe_inflight[pkeep[j]].t_s;
        py[j] = r->probe_inflight[pkeep[j]].inflight;
    }
    if (pk > 0)
        se[nse++] = (struct svg_series){.key = "probe_inflight",
                                        .label = "in flight during the probe",
                                        .x = px,
                                        .y = py,
                                        .n = pk,
                                        .flags = SVG_LINE | SVG_DASHED,
                                        .color = REPORT_COLOR_STEP};
    nse = report_time_marks_probe(&tm, r, se, nse);
    struct svg_chart c = {
        .id = "chart-inflight",
        .title = "Requests in flight over time",
        .width = REPORT_WIDE_WIDTH,
        .height = 300,
        .y = {.label = "in flight", .unit = "requests", .min = NAN, .max = NAN, .include_zero = 1},
        .series = se,
        .n_series = nse,
        .empty_note = "no in-flight samples",
    };
    report_time_chart_write(b, &c, &tm, r);
    free(x);
    free(y);
    free(tmp);
    free(keep);
    free(px);
    free(py);
    free(ptmp);
    free(pkeep);
    report_time_marks_free(&tm);
}

/* A plain line of the server chart. */
static struct svg_series server_line(const char *key, const char *label, const double *x,
                                     const double *y, size_t n, const char *color)
{
    return (struct svg_series){
        .key = key, .label = label, .x = x, .y = y, .n = n, .flags = SVG_LINE, .color = color};
}

/* The per-replica queue lines of the server chart (--prometheus with two
 * or more replicas), over the kept scrapes keep[0, k) at x: each
 * replica's key server_waiting_<name> into keys and its
 * values into ys (k each), a line into se. Returns how many. */
static size_t replica_lines(const struct report *r, const size_t *keep, size_t k, const double *x,
                            char (*keys)[64 + 128], double **ys, struct svg_series *se)
{
    if (r->n_replicas < 2)
        return 0;
    size_t n = LL_MIN(r->n_replicas, (size_t)REPORT_MAX_REPLICAS);
    for (size_t q = 0; q < n; q++) {
        ys[q] = ll_calloc(k + 1, sizeof(double));
        for (size_t i = 0; i < k; i++)
            ys[q][i] = r->server[keep[i]].replica_waiting[q];
        snprintf(keys[q], sizeof keys[q], "server_waiting_%.170s", r->replicas[q]);
        se[q] = (struct svg_series){
            .key = keys[q], .label = keys[q], .x = x, .y = ys[q], .n = k, .flags = SVG_LINE};
    }
    return n;
}

/* One chart of the server's scrapes: its queue and running batch
 * (kv = 0), or its KV cache usage in % (kv = 1); through --prometheus
 * with several replicas, the queue chart has each replica's queue too.
 * Scrapes are thinned by their queue length so the peaks of the backlog
 * survive. */
void report_server_chart(struct strbuf *b, const struct report *r, int kv)
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
    struct report_time_marks tm;
    report_time_marks_init(&tm, r);
    struct svg_series se[3 + REPORT_MAX_REPLICAS] = {
        server_line("server_running", "running (batch)", x, y0, k, REPORT_COLOR_P50),
        server_line("server_waiting", "waiting (queue)", x, y1, k, REPORT_COLOR_P99),
    };
    char keys[REPORT_MAX_REPLICAS][64 + 128];
    double *ys[REPORT_MAX_REPLICAS] = {0};
    size_t nse = kv ? 1 : 2;
    size_t n_rep = kv ? 0 : replica_lines(r, keep, k, x, keys, ys, &se[nse]);
    nse += n_rep;
    nse = report_time_marks_probe(&tm, r, se, nse);
    if (kv)
        se[0] = server_line("server_kv_usage", "KV cache in use", x, y0, k, "#009e73");
    struct svg_chart c = {
        .id = kv ? "chart-server-kv" : "chart-server-queue",
        .title =
            kv ? "Server KV cache usage over time" : "Server queue and running batch over time",
        .width = REPORT_WIDE_WIDTH,
        .height = kv ? 220 : 280,
        .y = {.label = kv ? "KV cache" : "requests",
              .unit = kv ? "%" : NULL,
              .min = kv ? 0 : NAN,
              .max = kv ? 100 : NAN,
              .include_zero = 1},
        .series = se,
        .n_series = nse,
        .empty_note = "not scraped",
    };
    /* Scraped, yet no KV figure: the engine does not export one. */
    if (kv && n > 0) {
        c.empty_note = "not exported by this engine";
        for (size_t i = 0; i < n; i++)
            if (isfinite(r->server[i].kv_usage))
                c.empty_note = "not scraped";
    }
    report_time_chart_write(b, &c, &tm, r);
    free(v);
    free(keep);
    free(x);
    free(y0);
    free(y1);
    for (size_t q = 0; q < n_rep; q++)
        free(ys[q]);
    report_time_marks_free(&tm);
}
