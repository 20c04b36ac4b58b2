/* svg.c: x-y and stacked bar charts as inline SVG.
 *
 * A chart is laid out in a fixed viewBox (560 x 320 by default) that the
 * page scales to its width. From the outside in: the legend in a row (or
 * rows) across the top, tick labels and axis titles on the left and at the
 * bottom, and the plot area in the middle. The plot area holds, bottom to
 * top: shaded bands, grid lines, reference lines and markers, then the
 * series (clipped to the plot), then the labels of the reference lines,
 * with a white halo so they stay readable over the data.
 *
 * Presentation is in attributes, not CSS, so a chart copied out of the
 * page still renders the same. Text sizes are estimated (no font metrics
 * without a renderer): about 0.55 em per character, a little generous.
 *
 * This file holds the layout every chart shares (svg_int.h) and the x-y
 * chart; the stacked bar chart is in svg_bars.c, the ticks in
 * svg_ticks.c. */
#include "report/svg.h"

#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "report/svg_int.h"
#include "util/util.h"

static const char *const svg_okabe_ito[SVG_PALETTE_LEN] = {
    "#0072b2", /* blue */
    "#d55e00", /* vermillion */
    "#009e73", /* bluish green */
    "#e69f00", /* orange */
    "#cc79a7", /* reddish purple */
    "#56b4e9", /* sky blue */
    "#000000", /* black */
    "#f0e442", /* yellow (weak on white: last) */
};

const char *svg_palette(size_t i)
{
    return svg_okabe_ito[i % SVG_PALETTE_LEN];
}

/* Viridis at nine evenly spaced stops; we interpolate linearly between
 * them. The last stop is darkened a little from viridis' pale yellow so a
 * thin line stays visible on white. */
static const unsigned char svg_ramp_stops[9][3] = {
    {68, 1, 84},    {71, 44, 122},  {59, 81, 139},  {44, 113, 142},
    {33, 144, 141}, {39, 173, 129}, {92, 200, 99},  {170, 220, 50},
    {200, 200, 30},
};

void svg_ramp_color(double t, char out[8])
{
    if (!(t >= 0))
        t = 0;
    if (t > 1)
        t = 1;
    double pos = t * 8.0;
    int i = (int)floor(pos);
    if (i >= 8)
        i = 7;
    double f = pos - i;
    int rgb[3];
    for (int c = 0; c < 3; c++) {
        double v = svg_ramp_stops[i][c] +
                   f * (svg_ramp_stops[i + 1][c] - svg_ramp_stops[i][c]);
        rgb[c] = (int)lround(v);
    }
    snprintf(out, 8, "#%02x%02x%02x", rgb[0], rgb[1], rgb[2]);
}

/* ---- layout helpers ---- */

/* Estimated width in px of s at 12 px (UTF-8 characters, not bytes). */
double svg_text_width(const char *s)
{
    size_t chars = 0;
    for (const unsigned char *p = (const unsigned char *)s; p && *p; p++)
        if ((*p & 0xC0) != 0x80)
            chars++;
    return (double)chars * SVG_CHAR_PX;
}

static int svg_plottable(const struct svg_map *m, double v)
{
    return isfinite(v) && (m->scale != SVG_SCALE_LOG || v > 0);
}

double svg_map_px(const struct svg_map *m, double v)
{
    double t;
    if (m->scale == SVG_SCALE_LOG)
        t = (log10(v) - log10(m->lo)) / (log10(m->hi) - log10(m->lo));
    else
        t = (v - m->lo) / (m->hi - m->lo);
    return m->p0 + t * (m->p1 - m->p0);
}

/* Pixel coordinates: two decimals, trimmed. */
static void svg_px(struct strbuf *b, double v)
{
    strbuf_put_fixed(b, v, 2);
}

/* ` a="x" b="y"`, each value written by put. */
static void svg_put_pair(struct strbuf *b, const char *a, double x, const char *bn, double y,
                         void (*put)(struct strbuf *, double))
{
    strbuf_puts(b, " ");
    strbuf_puts(b, a);
    strbuf_puts(b, "=\"");
    put(b, x);
    strbuf_puts(b, "\" ");
    strbuf_puts(b, bn);
    strbuf_puts(b, "=\"");
    put(b, y);
    strbuf_puts(b, "\"");
}

/* Two attributes in pixels (a point's, or a line's x1 and x2). */
void svg_pair(struct strbuf *b, const char *a, double x, const char *bn, double y)
{
    svg_put_pair(b, a, x, bn, y, svg_px);
}

/* Two attributes that carry data values for the tests and tooltips. */
void svg_data_pair(struct strbuf *b, const char *a, double x, const char *bn, double y)
{
    svg_put_pair(b, a, x, bn, y, strbuf_put_num);
}

/* Place items in rows from left, wrapping at right. Returns the number of
 * rows (0 when there are no items). */
static int svg_legend_layout(struct svg_legend_item *it, size_t n, double left,
                             double right, double top)
{
    if (n == 0)
        return 0;
    int rows = 1;
    double x = left;
    for (size_t i = 0; i < n; i++) {
        double w = 26 + svg_text_width(it[i].label) + 16;
        if (x > left && x + w > right) {
            rows++;
            x = left;
        }
        it[i].x = x;
        it[i].y = top + (rows - 1) * SVG_LEGEND_ROW_PX;
        x += w;
    }
    return rows;
}

void svg_legend_write(struct strbuf *b, const struct svg_legend_item *it, size_t n)
{
    if (n == 0)
        return;
    strbuf_puts(b, "<g class=\"legend\">");
    for (size_t i = 0; i < n; i++) {
        double x = it[i].x, y = it[i].y;
        strbuf_puts(b, "<g class=\"legend-item\">");
        if (it[i].kind == 3) {
            strbuf_puts(b, "<rect");
            svg_pair(b, "x", x + 4, "y", y - 5);
            strbuf_printf(b, " width=\"14\" height=\"10\" rx=\"2\" fill=\"%s\"/>", it[i].color);
        } else {
            if (it[i].kind != 2) {
                strbuf_puts(b, "<line");
                svg_pair(b, "x1", x, "x2", x + 22);
                svg_pair(b, "y1", y, "y2", y);
                strbuf_printf(b, " stroke=\"%s\" stroke-width=\"2\"%s/>", it[i].color,
                              it[i].kind == 1 ? " stroke-dasharray=\"5 3\"" : "");
            }
            if (it[i].marker || it[i].kind == 2) {
                strbuf_puts(b, "<circle cx=\"");
                svg_px(b, x + 11);
                strbuf_puts(b, "\" cy=\"");
                svg_px(b, y);
                if (it[i].hollow)
                    strbuf_printf(b, "\" r=\"3.5\" fill=\"#ffffff\" stroke=\"%s\" "
                                     "stroke-width=\"2\"/>", it[i].color);
                else
                    strbuf_printf(b, "\" r=\"3.5\" fill=\"%s\"/>", it[i].color);
            }
        }
        strbuf_puts(b, "<text");
        svg_pair(b, "x", x + 26, "y", y + 4);
        strbuf_puts(b, " fill=\"" SVG_TEXT_COLOR "\">");
        strbuf_put_xml(b, it[i].label);
        strbuf_puts(b, "</text></g>");
    }
    strbuf_puts(b, "</g>\n");
}

/* The opening <svg> tag, <title> and the clip path of the plot area. */
void svg_open(struct strbuf *b, const char *id, const char *title, double w, double h, double pl,
              double pt, double pw, double ph)
{
    strbuf_puts(b, "<svg xmlns=\"http://www.w3.org/2000/svg\" class=\"chart\" id=\"");
    strbuf_put_xml(b, id);
    strbuf_puts(b, "\" viewBox=\"0 0 ");
    svg_px(b, w);
    strbuf_puts(b, " ");
    svg_px(b, h);
    strbuf_puts(b, "\"");
    svg_pair(b, "width", w, "height", h);
    strbuf_puts(b, " role=\"img\" font-family=\"" SVG_FONT "\" font-size=\"12\">\n");
    if (title != NULL) {
        strbuf_puts(b, "<title>");
        strbuf_put_xml(b, title);
        strbuf_puts(b, "</title>\n");
    }
    strbuf_puts(b, "<defs><clipPath id=\"");
    strbuf_put_xml(b, id);
    strbuf_puts(b, "-clip\"><rect");
    svg_pair(b, "x", pl - 6, "y", pt - 6);
    svg_pair(b, "width", pw + 12, "height", ph + 12);
    strbuf_puts(b, "/></clipPath></defs>\n");
    strbuf_puts(b, "<rect class=\"bg\" width=\"100%\" height=\"100%\" fill=\"#ffffff\"/>\n");
}

/* "label (unit)", escaped. */
static void svg_axis_title(struct strbuf *b, const struct svg_axis *a)
{
    strbuf_put_xml(b, a->label);
    if (a->unit != NULL && a->unit[0] != '\0') {
        if (a->label != NULL && a->label[0] != '\0')
            strbuf_puts(b, " (");
        strbuf_put_xml(b, a->unit);
        if (a->label != NULL && a->label[0] != '\0')
            strbuf_puts(b, ")");
    }
}

int svg_axis_has_title(const struct svg_axis *a)
{
    return (a->label != NULL && a->label[0] != '\0') ||
           (a->unit != NULL && a->unit[0] != '\0');
}

/* The y axis: grid lines and labelled ticks across the plot, the axis
 * title rotated at the far left. */
void svg_y_axis_write(struct strbuf *b, const struct svg_map *my, const double *ticks, size_t nt,
                      double pl, double pr, double pt, double ph, const struct svg_axis *a)
{
    char lab[32];
    for (size_t i = 0; i < nt; i++) {
        if (ticks[i] < my->lo * (1 - 1e-9) - 1e-12 || ticks[i] > my->hi * (1 + 1e-9) + 1e-12)
            continue;
        double y = svg_map_px(my, ticks[i]);
        strbuf_puts(b, "<g class=\"tick y\" data-v=\"");
        strbuf_put_num(b, ticks[i]);
        strbuf_puts(b, "\"><line");
        svg_pair(b, "x1", pl, "x2", pr);
        svg_pair(b, "y1", y, "y2", y);
        strbuf_puts(b, " stroke=\"" SVG_GRID_COLOR "\"/><text x=\"");
        svg_px(b, pl - 6);
        strbuf_puts(b, "\" y=\"");
        svg_px(b, y + 4);
        strbuf_puts(b, "\" text-anchor=\"end\" fill=\"" SVG_TEXT_COLOR "\">");
        strbuf_put_xml(b, svg_format_tick(ticks[i], lab, sizeof(lab)));
        strbuf_puts(b, "</text></g>\n");
    }
    if (svg_axis_has_title(a)) {
        double cy = pt + ph / 2;
        strbuf_puts(b, "<text class=\"axis-title y\" transform=\"translate(14,");
        svg_px(b, cy);
        strbuf_puts(b, ") rotate(-90)\" text-anchor=\"middle\" font-size=\"12.5\" fill=\""
                       SVG_TEXT_COLOR "\">");
        svg_axis_title(b, a);
        strbuf_puts(b, "</text>\n");
    }
}

/* Width in px that the y tick labels need. */
static double svg_y_label_width(const double *ticks, size_t nt)
{
    char lab[32];
    double w = 0;
    for (size_t i = 0; i < nt; i++) {
        double tw = svg_text_width(svg_format_tick(ticks[i], lab, sizeof(lab)));
        if (tw > w)
            w = tw;
    }
    return w;
}

/* Axis range and ticks for one axis of an x-y chart, from the user's
 * min/max where given, else from the data range [dlo, dhi] (have = 0: no
 * data at all). */
size_t svg_axis_range(const struct svg_axis *a, int have, int pad_top, double dlo, double dhi,
                      double *lo, double *hi, double *ticks)
{
    int log_scale = a->scale == SVG_SCALE_LOG;
    if (!have) {
        dlo = log_scale ? 1 : 0;
        dhi = log_scale ? 10 : 1;
    }
    if (!log_scale && a->include_zero) {
        if (dlo > 0)
            dlo = 0;
        if (dhi < 0)
            dhi = 0;
    }
    int fixed_lo = isfinite(a->min) && (!log_scale || a->min > 0);
    int fixed_hi = isfinite(a->max) && (!log_scale || a->max > 0);
    if (fixed_lo)
        dlo = a->min;
    if (fixed_hi)
        dhi = a->max;
    /* A little headroom above the data on a linear y axis, so a line at the
     * top (an SLO exactly on a tick) does not sit on the frame. */
    if (pad_top && !log_scale && !fixed_hi && have && dhi > dlo)
        dhi += (dhi - dlo) * 0.04;
    if (dhi < dlo)
        dhi = dlo;
    size_t n = svg_axis_ticks(a->scale, dlo, dhi, lo, hi, ticks);
    if (fixed_lo)
        *lo = a->min;
    if (fixed_hi)
        *hi = a->max;
    if (*hi <= *lo)
        *hi = log_scale ? *lo * 10 : *lo + 1;
    return n;
}

static void svg_widen(int *have, double *lo, double *hi, double v)
{
    if (!*have) {
        *lo = *hi = v;
        *have = 1;
        return;
    }
    if (v < *lo)
        *lo = v;
    if (v > *hi)
        *hi = v;
}

static int svg_axis_value_ok(const struct svg_axis *a, double v)
{
    return isfinite(v) && (a->scale != SVG_SCALE_LOG || v > 0);
}

static const char *svg_series_color(const struct svg_series *s, size_t i)
{
    return s->color != NULL ? s->color : svg_palette(i);
}

static unsigned svg_series_flags(const struct svg_series *s)
{
    return s->flags == 0 ? (SVG_LINE | SVG_MARKERS) : s->flags;
}

/* A label with a white halo, for text drawn over data. */
static void svg_halo_text(struct strbuf *b, const char *cls, double x, double y,
                          const char *anchor, const char *color,
                          const char *text)
{
    strbuf_printf(b, "<text class=\"%s\" x=\"", cls);
    svg_px(b, x);
    strbuf_puts(b, "\" y=\"");
    svg_px(b, y);
    strbuf_printf(b, "\" text-anchor=\"%s\" fill=\"%s\" font-size=\"11.5\" "
                     "font-weight=\"600\" stroke=\"#ffffff\" stroke-width=\"3\" "
                     "stroke-linejoin=\"round\" paint-order=\"stroke\">",
                  anchor, color);
    strbuf_put_xml(b, text);
    strbuf_puts(b, "</text>\n");
}

void svg_empty_note(struct strbuf *b, double pl, double pt, double pw, double ph, const char *note,
                    const char *dflt)
{
    strbuf_puts(b, "<text class=\"empty\"");
    svg_pair(b, "x", pl + pw / 2, "y", pt + ph / 2);
    strbuf_puts(b, " text-anchor=\"middle\" fill=\"#6b7280\" font-size=\"14\">");
    strbuf_put_xml(b, note != NULL ? note : dflt);
    strbuf_puts(b, "</text>\n");
}

/* One series: the line (path) and then one circle per plottable point. */
static void svg_series_write(struct strbuf *b, const struct svg_series *s,
                             size_t idx, const struct svg_map *mx,
                             const struct svg_map *my)
{
    unsigned flags = svg_series_flags(s);
    const char *color = svg_series_color(s, idx);
    const char *key = s->key != NULL ? s->key : "";

    if (flags & (SVG_LINE | SVG_STEP)) {
        int pen_down = 0, any = 0;
        double prev_y = 0;
        for (size_t i = 0; i < s->n; i++) {
            if (!svg_plottable(mx, s->x[i]) || !svg_plottable(my, s->y[i])) {
                pen_down = 0;
                continue;
            }
            double px = svg_map_px(mx, s->x[i]), py = svg_map_px(my, s->y[i]);
            if (!any) {
                strbuf_puts(b, "<path class=\"line\" data-series=\"");
                strbuf_put_xml(b, key);
                strbuf_puts(b, "\" d=\"");
                any = 1;
            }
            if (!pen_down) {
                strbuf_puts(b, "M");
                svg_px(b, px);
                strbuf_puts(b, " ");
                svg_px(b, py);
                pen_down = 1;
            } else if (flags & SVG_STEP) {
                /* Across at the old level, then up: a right-continuous
                 * step, as an empirical CDF is. */
                strbuf_puts(b, "H");
                svg_px(b, px);
                if (py != prev_y) {
                    strbuf_puts(b, "V");
                    svg_px(b, py);
                }
            } else {
                strbuf_puts(b, "L");
                svg_px(b, px);
                strbuf_puts(b, " ");
                svg_px(b, py);
            }
            prev_y = py;
        }
        if (any)
            strbuf_printf(b, "\" fill=\"none\" stroke=\"%s\" stroke-width=\"2\" "
                             "stroke-linejoin=\"round\"%s/>\n",
                          color, (flags & SVG_DASHED) ? " stroke-dasharray=\"6 4\"" : "");
    }

    int markers = (flags & SVG_MARKERS) != 0;
    for (size_t i = 0; i < s->n; i++) {
        if (!svg_plottable(mx, s->x[i]) || !svg_plottable(my, s->y[i]))
            continue;
        strbuf_puts(b, "<circle class=\"pt\" data-series=\"");
        strbuf_put_xml(b, key);
        strbuf_puts(b, "\"");
        svg_data_pair(b, "data-x", s->x[i], "data-y", s->y[i]);
        svg_pair(b, "cx", svg_map_px(mx, s->x[i]), "cy", svg_map_px(my, s->y[i]));
        if (!markers) {
            strbuf_puts(b, " r=\"0\"/>");
            continue;
        }
        int ring = s->hollow != NULL && s->hollow[i];
        if (ring)
            strbuf_puts(b, " data-hollow=\"1\"");
        if ((flags & SVG_HOLLOW) || ring)
            strbuf_printf(b, " r=\"4\" fill=\"#ffffff\" stroke=\"%s\" stroke-width=\"2\">", color);
        else
            strbuf_printf(b, " r=\"3.5\" fill=\"%s\" stroke=\"#ffffff\" stroke-width=\"1\">",
                          color);
        strbuf_puts(b, "<title>");
        strbuf_put_xml(b, s->label != NULL ? s->label : key);
        strbuf_puts(b, ": ");
        strbuf_put_num(b, s->x[i]);
        strbuf_puts(b, ", ");
        strbuf_put_num(b, s->y[i]);
        strbuf_puts(b, "</title></circle>\n");
    }
    strbuf_puts(b, "\n");
}

/* Lay out the frame of a w x h chart whose y ticks are yt[0..nyt) and
 * place the n legend items above the plot. */
void svg_frame_layout(struct svg_frame *fr, double w, double h, const double *yt, size_t nyt,
                      int y_title, int x_title, struct svg_legend_item *items, size_t n)
{
    fr->w = w;
    fr->h = h;
    fr->pl = 14 + 10 + svg_y_label_width(yt, nyt) + 8;
    if (!y_title)
        fr->pl -= 14;
    fr->pr = w - SVG_MARGIN_RIGHT;
    int rows = svg_legend_layout(items, n, fr->pl, fr->pr, 14);
    fr->pt = rows > 0 ? 14 + rows * SVG_LEGEND_ROW_PX + 4 : 14;
    fr->pb = h - (x_title ? SVG_MARGIN_BOTTOM : 28);
    fr->pw = fr->pr - fr->pl;
    fr->ph = fr->pb - fr->pt;
}

/* A category or tick label under the plot, centred on x. */
void svg_x_label(struct strbuf *b, const struct svg_frame *fr, double x, const char *text)
{
    strbuf_puts(b, "<text");
    svg_pair(b, "x", x, "y", fr->pb + 17);
    strbuf_puts(b, " text-anchor=\"middle\" fill=\"" SVG_TEXT_COLOR "\">");
    strbuf_put_xml(b, text);
    strbuf_puts(b, "</text>");
}

/* The frame's left and bottom edges, then the opening of the x axis title
 * when has_title (the caller writes the title and calls
 * svg_x_title_close). */
void svg_frame_edges(struct strbuf *b, const struct svg_frame *fr, int has_title)
{
    strbuf_puts(b, "<path class=\"axis\" d=\"M");
    svg_px(b, fr->pl);
    strbuf_puts(b, " ");
    svg_px(b, fr->pt);
    strbuf_puts(b, "V");
    svg_px(b, fr->pb);
    strbuf_puts(b, "H");
    svg_px(b, fr->pr);
    strbuf_puts(b, "\" fill=\"none\" stroke=\"" SVG_AXIS_COLOR "\"/>\n");
    if (has_title) {
        strbuf_puts(b, "<text class=\"axis-title x\"");
        svg_pair(b, "x", fr->pl + fr->pw / 2, "y", fr->h - 8);
        strbuf_puts(b, " text-anchor=\"middle\" font-size=\"12.5\" fill=\"" SVG_TEXT_COLOR "\">");
    }
}

void svg_x_title_close(struct strbuf *b)
{
    strbuf_puts(b, "</text>\n");
}

/* The data ranges of a line chart over everything plottable: its points,
 * its horizontal lines (y) and its vertical lines (x). Returns 1 when any
 * point of a series is plottable. */
static int svg_chart_ranges(const struct svg_chart *c, int *hx, double *xlo, double *xhi,
                            int *hy, double *ylo, double *yhi)
{
    int any_point = 0;
    for (size_t s = 0; s < c->n_series; s++) {
        const struct svg_series *se = &c->series[s];
        for (size_t i = 0; i < se->n; i++) {
            if (!svg_axis_value_ok(&c->x, se->x[i]) ||
                !svg_axis_value_ok(&c->y, se->y[i]))
                continue;
            svg_widen(hx, xlo, xhi, se->x[i]);
            svg_widen(hy, ylo, yhi, se->y[i]);
            any_point = 1;
        }
    }
    for (size_t i = 0; i < c->n_hlines; i++)
        if (svg_axis_value_ok(&c->y, c->hlines[i].y))
            svg_widen(hy, ylo, yhi, c->hlines[i].y);
    for (size_t i = 0; i < c->n_vlines; i++)
        if (svg_axis_value_ok(&c->x, c->vlines[i].x))
            svg_widen(hx, xlo, xhi, c->vlines[i].x);
    return any_point;
}

/* Legend entries of a line chart into items (room for n_series): one per
 * series not marked SVG_NOLEGEND. Returns how many. */
static size_t svg_chart_legend(const struct svg_chart *c, struct svg_legend_item *items)
{
    size_t n_items = 0;
    for (size_t s = 0; s < c->n_series; s++) {
        unsigned flags = svg_series_flags(&c->series[s]);
        if (flags & SVG_NOLEGEND)
            continue;
        struct svg_legend_item *it = &items[n_items++];
        it->label = c->series[s].label != NULL ? c->series[s].label
                                               : (c->series[s].key ? c->series[s].key : "");
        it->color = svg_series_color(&c->series[s], s);
        if (!(flags & (SVG_LINE | SVG_STEP)))
            it->kind = 2;
        else
            it->kind = (flags & SVG_DASHED) ? 1 : 0;
        it->marker = (flags & SVG_MARKERS) != 0;
        it->hollow = (flags & SVG_HOLLOW) != 0;
    }
    return n_items;
}

/* Shaded x ranges, clipped to the plot, each with its label when it fits. */
static void svg_bands_write(struct strbuf *b, const struct svg_chart *c,
                            const struct svg_map *mx, const struct svg_frame *fr)
{
    for (size_t i = 0; i < c->n_bands; i++) {
        const struct svg_band *bd = &c->bands[i];
        double x0 = svg_plottable(mx, bd->x0) ? svg_map_px(mx, bd->x0) : fr->pl;
        double x1 = svg_plottable(mx, bd->x1) ? svg_map_px(mx, bd->x1) : fr->pr;
        if (bd->x0 == INFINITY || bd->x1 == -INFINITY)
            continue;
        x0 = LL_MAX(fr->pl, LL_MIN(fr->pr, x0));
        x1 = LL_MAX(fr->pl, LL_MIN(fr->pr, x1));
        if (x1 <= x0)
            continue;
        strbuf_puts(b, "<rect class=\"band\" data-key=\"");
        strbuf_put_xml(b, bd->key);
        strbuf_puts(b, "\"");
        svg_data_pair(b, "data-x0", bd->x0, "data-x1", bd->x1);
        svg_pair(b, "x", x0, "y", fr->pt);
        svg_pair(b, "width", x1 - x0, "height", fr->ph);
        strbuf_printf(b, " fill=\"%s\" fill-opacity=\"0.7\"/>\n",
                      bd->color != NULL ? bd->color : "#fde8e8");
        if (bd->label != NULL && x1 - x0 > svg_text_width(bd->label) * 0.95 + 8) {
            strbuf_puts(b, "<text class=\"band-label\"");
            svg_pair(b, "x", x1 - 5, "y", fr->pb - 6);
            strbuf_printf(b, " text-anchor=\"end\" fill=\"%s\" font-size=\"11\">",
                          bd->color != NULL ? "#374151" : "#9b1c1c");
            strbuf_put_xml(b, bd->label);
            strbuf_puts(b, "</text>\n");
        }
    }
}

/* The x grid lines and ticks xt[0..nxt) inside the range, a label under
 * each that does not run into the one before. */
static void svg_x_axis_write(struct strbuf *b, const struct svg_map *mx, const double *xt,
                             size_t nxt, const struct svg_frame *fr)
{
    char lab[32];
    double last_label_end = -1e9;
    for (size_t i = 0; i < nxt; i++) {
        if (xt[i] < mx->lo * (1 - 1e-9) - 1e-12 || xt[i] > mx->hi * (1 + 1e-9) + 1e-12)
            continue;
        double x = svg_map_px(mx, xt[i]);
        svg_format_tick(xt[i], lab, sizeof(lab));
        double tw = svg_text_width(lab);
        strbuf_puts(b, "<g class=\"tick x\" data-v=\"");
        strbuf_put_num(b, xt[i]);
        strbuf_puts(b, "\"><line");
        svg_pair(b, "x1", x, "x2", x);
        svg_pair(b, "y1", fr->pt, "y2", fr->pb + 4);
        strbuf_puts(b, " stroke=\"" SVG_GRID_COLOR "\"/>");
        if (x - tw / 2 > last_label_end + 6) {
            svg_x_label(b, fr, x, lab);
            last_label_end = x + tw / 2;
        }
        strbuf_puts(b, "</g>\n");
    }
}

/* A reference line from (x1, y1) to (x2, y2) with its key and value
 * (data-AXIS="v"), up to the stroke attributes, which the caller writes. */
static void svg_refline_open(struct strbuf *b, const char *cls, const char *key, char axis,
                             double v, double x1, double x2, double y1, double y2)
{
    strbuf_printf(b, "<line class=\"%s\" data-key=\"", cls);
    strbuf_put_xml(b, key);
    strbuf_printf(b, "\" data-%c=\"", axis);
    strbuf_put_num(b, v);
    strbuf_puts(b, "\"");
    svg_pair(b, "x1", x1, "x2", x2);
    strbuf_puts(b, " y1=\"");
    svg_px(b, y1);
    strbuf_puts(b, "\" y2=\"");
    svg_px(b, y2);
}

/* Horizontal (SLO) and vertical (knee, capacity) reference lines. */
static void svg_reflines_write(struct strbuf *b, const struct svg_chart *c,
                               const struct svg_map *mx, const struct svg_map *my,
                               const struct svg_frame *fr)
{
    for (size_t i = 0; i < c->n_hlines; i++) {
        const struct svg_hline *hl = &c->hlines[i];
        if (!svg_plottable(my, hl->y))
            continue;
        double y = svg_map_px(my, hl->y);
        svg_refline_open(b, "hline", hl->key, 'y', hl->y, fr->pl, fr->pr, y, y);
        strbuf_printf(b, "\" stroke=\"%s\" stroke-width=\"1.5\" stroke-dasharray=\"8 4\"/>\n",
                      hl->color != NULL ? hl->color : SVG_REF_COLOR);
    }
    for (size_t i = 0; i < c->n_vlines; i++) {
        const struct svg_vline *vl = &c->vlines[i];
        if (!svg_plottable(mx, vl->x))
            continue;
        double x = svg_map_px(mx, vl->x);
        svg_refline_open(b, "vline", vl->key, 'x', vl->x, x, x, fr->pt, fr->pb);
        strbuf_printf(b, "\" stroke=\"%s\" stroke-width=\"1.5\" stroke-dasharray=\"3 3\"/>\n",
                      vl->color != NULL ? vl->color : SVG_MARK_COLOR);
    }
}

/* The reference lines' labels, written after the data so they stay on top. */
static void svg_reflabels_write(struct strbuf *b, const struct svg_chart *c,
                                const struct svg_map *mx, const struct svg_map *my,
                                const struct svg_frame *fr)
{
    for (size_t i = 0; i < c->n_hlines; i++) {
        const struct svg_hline *hl = &c->hlines[i];
        if (hl->label == NULL || !svg_plottable(my, hl->y))
            continue;
        double y = svg_map_px(my, hl->y);
        /* Above the line, unless that would leave the plot. */
        double ly = y - 5 < fr->pt + 10 ? y + 14 : y - 5;
        svg_halo_text(b, "hline-label", fr->pr - 4, ly, "end",
                      hl->color != NULL ? hl->color : SVG_REF_COLOR, hl->label);
    }
    size_t nth = 0;
    for (size_t i = 0; i < c->n_vlines; i++) {
        const struct svg_vline *vl = &c->vlines[i];
        if (vl->label == NULL || !svg_plottable(mx, vl->x))
            continue;
        double x = svg_map_px(mx, vl->x);
        double tw = svg_text_width(vl->label);
        int right = x + 4 + tw > fr->pr;
        /* Stagger successive labels so close markers stay readable. */
        double y = fr->pt + 13 + 15.0 * (double)(nth++ % 3);
        svg_halo_text(b, "vline-label", right ? x - 4 : x + 4, y,
                      right ? "end" : "start",
                      vl->color != NULL ? vl->color : SVG_MARK_COLOR, vl->label);
    }
}

void svg_chart_write(struct strbuf *b, const struct svg_chart *c)
{
    double w = c->width > 0 ? c->width : SVG_DEFAULT_WIDTH;
    double h = c->height > 0 ? c->height : SVG_DEFAULT_HEIGHT;
    const char *id = c->id != NULL ? c->id : "chart";

    int hx = 0, hy = 0;
    double xlo = 0, xhi = 0, ylo = 0, yhi = 0;
    int any_point = svg_chart_ranges(c, &hx, &xlo, &xhi, &hy, &ylo, &yhi);
    double xt[SVG_MAX_TICKS], yt[SVG_MAX_TICKS];
    struct svg_map mx = {.scale = c->x.scale}, my = {.scale = c->y.scale};
    size_t nxt = svg_axis_range(&c->x, hx, 0, xlo, xhi, &mx.lo, &mx.hi, xt);
    size_t nyt = svg_axis_range(&c->y, hy, 1, ylo, yhi, &my.lo, &my.hi, yt);

    struct svg_legend_item *items = ll_calloc(c->n_series + 1, sizeof(*items));
    size_t n_items = svg_chart_legend(c, items);
    struct svg_frame fr;
    svg_frame_layout(&fr, w, h, yt, nyt, svg_axis_has_title(&c->y),
                     svg_axis_has_title(&c->x), items, n_items);
    mx.p0 = fr.pl;
    mx.p1 = fr.pr;
    my.p0 = fr.pb;
    my.p1 = fr.pt;

    svg_open(b, id, c->title, w, h, fr.pl, fr.pt, fr.pw, fr.ph);
    svg_bands_write(b, c, &mx, &fr);
    svg_y_axis_write(b, &my, yt, nyt, fr.pl, fr.pr, fr.pt, fr.ph, &c->y);
    svg_x_axis_write(b, &mx, xt, nxt, &fr);
    svg_frame_edges(b, &fr, svg_axis_has_title(&c->x));
    if (svg_axis_has_title(&c->x)) {
        svg_axis_title(b, &c->x);
        svg_x_title_close(b);
    }
    svg_reflines_write(b, c, &mx, &my, &fr);

    /* The data, clipped to the plot area (with a small margin for markers). */
    strbuf_puts(b, "<g class=\"series\" clip-path=\"url(#");
    strbuf_put_xml(b, id);
    strbuf_puts(b, "-clip)\">\n");
    for (size_t s = 0; s < c->n_series; s++)
        svg_series_write(b, &c->series[s], s, &mx, &my);
    strbuf_puts(b, "</g>\n");

    svg_reflabels_write(b, c, &mx, &my, &fr);
    if (!any_point)
        svg_empty_note(b, fr.pl, fr.pt, fr.pw, fr.ph, c->empty_note, "no data");
    svg_legend_write(b, items, n_items);
    strbuf_puts(b, "</svg>\n");
    free(items);
}
