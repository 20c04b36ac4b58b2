/* svg_bars.c: the stacked bar chart of svg.h (svg_bar_chart_write): one
 * stack per category, its segments in the palette's colours, a legend of
 * the series, drawn in the frame, axes and legend every chart of svg.c
 * has (svg_int.h). Moved from svg.c. */
#include "report/svg.h"

#include <math.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "report/svg_int.h"
#include "util/util.h"

/* ---- stacked bars ---- */

static double svg_bar_value(const struct svg_bar_stack *st, size_t i)
{
    double v = st->values[i];
    return (isfinite(v) && v > 0) ? v : 0;
}

/* One category's stacked bars, its total above them and (when label) its
 * name under the plot, centred on cx with bars bw wide. */
static void svg_bar_category_write(struct strbuf *b, const struct svg_bar_chart *c, size_t i,
                                   const struct svg_map *my, const struct svg_frame *fr, double cx,
                                   double bw, int label)
{
    strbuf_puts(b, "<g class=\"cat\" data-x=\"");
    strbuf_put_xml(b, c->categories[i]);
    strbuf_puts(b, "\">");
    double base = 0;
    for (size_t s = 0; s < c->n_stacks; s++) {
        const struct svg_bar_stack *st = &c->stacks[s];
        double v = svg_bar_value(st, i);
        if (v <= 0)
            continue;
        double y0 = svg_map_px(my, base), y1 = svg_map_px(my, base + v);
        strbuf_puts(b, "<rect class=\"bar\" data-series=\"");
        strbuf_put_xml(b, st->key);
        strbuf_puts(b, "\" data-x=\"");
        strbuf_put_xml(b, c->categories[i]);
        strbuf_puts(b, "\"");
        svg_data_pair(b, "data-y", v, "data-y0", base);
        svg_pair(b, "x", cx - bw / 2, "y", y1);
        svg_pair(b, "width", bw, "height", y0 - y1);
        strbuf_printf(b, " fill=\"%s\"><title>", st->color != NULL ? st->color : svg_palette(s));
        strbuf_put_xml(b, st->label != NULL ? st->label : st->key);
        strbuf_puts(b, " @ ");
        strbuf_put_xml(b, c->categories[i]);
        strbuf_puts(b, ": ");
        strbuf_put_num(b, v);
        strbuf_puts(b, "</title></rect>");
        base += v;
    }
    if (base > 0) {
        strbuf_puts(b, "<text class=\"total\"");
        svg_pair(b, "x", cx, "y", svg_map_px(my, base) - 4);
        strbuf_puts(b, " text-anchor=\"middle\" font-size=\"10.5\" fill=\"" SVG_TEXT_COLOR "\">");
        strbuf_put_num(b, base);
        strbuf_puts(b, "</text>");
    }
    if (label)
        svg_x_label(b, fr, cx, c->categories[i]);
    strbuf_puts(b, "</g>\n");
}

void svg_bar_chart_write(struct strbuf *b, const struct svg_bar_chart *c)
{
    double w = c->width > 0 ? c->width : SVG_DEFAULT_WIDTH;
    double h = c->height > 0 ? c->height : SVG_DEFAULT_HEIGHT;
    const char *id = c->id != NULL ? c->id : "bars";

    double top = 0;
    int any = 0;
    for (size_t i = 0; i < c->n_categories; i++) {
        double sum = 0;
        for (size_t s = 0; s < c->n_stacks; s++)
            sum += svg_bar_value(&c->stacks[s], i);
        if (sum > 0)
            any = 1;
        if (sum > top)
            top = sum;
    }
    /* Counts: keep at least 0..5 so small counts do not get 0.2 steps. */
    struct svg_axis ya = c->y;
    ya.scale = SVG_SCALE_LINEAR;
    ya.include_zero = 1;
    if (!isfinite(ya.min))
        ya.min = 0;
    double yt[SVG_MAX_TICKS];
    struct svg_map my = {.scale = SVG_SCALE_LINEAR};
    size_t nyt = svg_axis_range(&ya, 1, 1, 0, top < 5 ? 5 : top, &my.lo, &my.hi, yt);

    struct svg_legend_item *items = ll_calloc(c->n_stacks + 1, sizeof(*items));
    for (size_t s = 0; s < c->n_stacks; s++) {
        items[s].label = c->stacks[s].label != NULL ? c->stacks[s].label
                                                    : (c->stacks[s].key ? c->stacks[s].key : "");
        items[s].color = c->stacks[s].color != NULL ? c->stacks[s].color : svg_palette(s);
        items[s].kind = 3;
    }

    struct svg_frame fr;
    svg_frame_layout(&fr, w, h, yt, nyt, svg_axis_has_title(&ya), c->x_label != NULL, items,
                     c->n_stacks);
    double pl = fr.pl, pw = fr.pw;
    my.p0 = fr.pb;
    my.p1 = fr.pt;

    svg_open(b, id, c->title, w, h, fr.pl, fr.pt, fr.pw, fr.ph);
    svg_y_axis_write(b, &my, yt, nyt, fr.pl, fr.pr, fr.pt, fr.ph, &ya);

    size_t n = c->n_categories;
    double slot = n > 0 ? pw / (double)n : pw;
    double bw = LL_MIN(slot * 0.7, 44.0);
    /* Label every k-th category so labels do not collide. */
    double widest = 0;
    for (size_t i = 0; i < n; i++) {
        double tw = svg_text_width(c->categories[i]);
        if (tw > widest)
            widest = tw;
    }
    size_t every = 1;
    while (every < n && slot * (double)every < widest + 8)
        every++;

    for (size_t i = 0; i < n; i++)
        svg_bar_category_write(b, c, i, &my, &fr, pl + slot * ((double)i + 0.5), bw,
                               i % every == 0);
    svg_frame_edges(b, &fr, c->x_label != NULL);
    if (c->x_label != NULL) {
        strbuf_put_xml(b, c->x_label);
        svg_x_title_close(b);
    }
    if (!any)
        svg_empty_note(b, fr.pl, fr.pt, fr.pw, fr.ph, c->empty_note, "none");
    svg_legend_write(b, items, c->n_stacks);
    strbuf_puts(b, "</svg>\n");
    free(items);
}
