/* report_gpu.c: the GPU telemetry of report.html over time (--gpu-metrics,
 * --gpu-sampler): power and utilisation, a line per source, on the same
 * time axis and step marks as the server's queue, so a step's power can be
 * read beside the batch that drew it. */
#include "report/report_html.h"

#include <math.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>

#include "report/report_int.h"
#include "report/svg.h"
#include "util/strbuf.h"
#include "util/util.h"

/* At most this many sources get their own line; the rest are left out and
 * the legend says how many (a dashboard, not a chart, is for a cluster). */
#define GPU_CHART_MAX_SOURCES 8

/* The value drawn for sample g: its power in W, or its utilisation in %. */
static double gpu_value(const struct report_gpu_sample *g, int util)
{
    return util ? g->util_pct : g->power_w;
}

/* Source src's drawable samples into x/y (room for r->n_gpu), thinned by
 * their value so peaks survive. Returns the count. */
static size_t gpu_source_points(const struct report *r, size_t src, int util, double *x, double *y)
{
    size_t n = 0;
    size_t *idx = ll_calloc(r->n_gpu + 1, sizeof *idx);
    double *v = ll_calloc(r->n_gpu + 1, sizeof *v);
    for (size_t i = 0; i < r->n_gpu; i++) {
        const struct report_gpu_sample *g = &r->gpu[i];
        if (g->source == src && isfinite(gpu_value(g, util))) {
            idx[n] = i;
            v[n++] = gpu_value(g, util);
        }
    }
    size_t *keep = ll_calloc(n + 1, sizeof *keep);
    size_t k = report_thin(v, n, REPORT_MAX_TS_POINTS, keep);
    for (size_t j = 0; j < k; j++) {
        x[j] = r->gpu[idx[keep[j]]].t_s;
        y[j] = v[keep[j]];
    }
    free(keep);
    free(v);
    free(idx);
    return k;
}

void report_gpu_chart(struct strbuf *b, const struct report *r, int util)
{
    size_t ns = LL_MIN(r->n_gpu_sources, (size_t)GPU_CHART_MAX_SOURCES);
    size_t per = r->n_gpu + 1;
    double *x = ll_calloc(ns * per + 1, sizeof *x);
    double *y = ll_calloc(ns * per + 1, sizeof *y);
    struct svg_series *se = ll_calloc(ns + 3, sizeof *se);
    struct strbuf *labels = ll_calloc(ns + 1, sizeof *labels);
    char(*keys)[24] = ll_calloc(ns + 1, sizeof *keys);
    size_t nse = 0;
    for (size_t s = 0; s < ns; s++) {
        size_t k = gpu_source_points(r, s, util, x + s * per, y + s * per);
        if (k == 0)
            continue;
        strbuf_init(&labels[s]);
        strbuf_puts(&labels[s], util ? "GPU utilisation" : "GPU power");
        const char *name = r->gpu_sources != NULL ? r->gpu_sources[s] : "";
        if (r->n_gpu_sources > 1 && name != NULL && *name)
            strbuf_printf(&labels[s], " (%s)", name);
        snprintf(keys[s], sizeof keys[s], "%s%zu", util ? "gpu_util" : "gpu_power", s);
        se[nse++] = (struct svg_series){.key = keys[s],
                                        .label = labels[s].data,
                                        .x = x + s * per,
                                        .y = y + s * per,
                                        .n = k,
                                        .flags = SVG_LINE,
                                        .color = svg_palette(s)};
    }
    char more[64];
    if (r->n_gpu_sources > ns) {
        snprintf(more, sizeof more, "%zu more sources not drawn", r->n_gpu_sources - ns);
        se[nse++] = (struct svg_series){
            .key = "gpu-more", .label = more, .n = 0, .flags = SVG_LINE, .color = "#9ca3af"};
    }
    struct report_time_marks tm;
    report_time_marks_init(&tm, r);
    nse = report_time_marks_probe(&tm, r, se, nse);
    struct svg_chart c = {
        .id = util ? "chart-gpu-util" : "chart-gpu-power",
        .title = util ? "GPU utilisation over time" : "GPU power over time",
        .width = REPORT_WIDE_WIDTH,
        .height = util ? 220 : 260,
        .y = {.label = util ? "utilisation" : "power",
              .unit = util ? "%" : "W",
              .min = util ? 0 : NAN,
              .max = util ? 100 : NAN,
              .include_zero = 1},
        .series = se,
        .n_series = nse,
        .empty_note = util ? "utilisation not exported" : "power not exported",
    };
    report_time_chart_write(b, &c, &tm, r);
    report_time_marks_free(&tm);
    for (size_t s = 0; s < ns; s++)
        strbuf_free(&labels[s]);
    free(keys);
    free(labels);
    free(se);
    free(y);
    free(x);
}
