/* svg_int.h: what the chart writers of svg.h share: the look (fonts,
 * margins, colours), the axis map, the legend, the frame and the axes of a
 * chart, and the writers of attribute pairs. svg.c defines them and draws
 * the x-y charts; svg_bars.c draws the stacked bar chart with them;
 * svg_ticks.c computes the ticks both use. Private to these files. */
#ifndef LL_SVG_INT_H
#define LL_SVG_INT_H

#include <stddef.h>

#include "util/strbuf.h"

/* From svg.h (not included: svg.c includes this file). */
struct svg_axis;

#define SVG_FONT "system-ui,-apple-system,'Segoe UI',Roboto,'Helvetica Neue',Arial,sans-serif"
#define SVG_FONT_PX 12.0
#define SVG_CHAR_PX 6.6 /* estimated advance of one character at 12 px */
#define SVG_LEGEND_ROW_PX 18.0
#define SVG_MARGIN_RIGHT 18.0
#define SVG_MARGIN_BOTTOM 46.0
#define SVG_AXIS_COLOR "#374151"
#define SVG_GRID_COLOR "#e5e7eb"
#define SVG_TEXT_COLOR "#374151"
#define SVG_REF_COLOR "#b91c1c"  /* reference (SLO) lines */
#define SVG_MARK_COLOR "#374151" /* default vertical markers */

/* Maps axis values to pixels along one direction. */
struct svg_map {
    int scale;     /* enum svg_scale (svg.h, not included here) */
    double lo, hi; /* axis range, axis units */
    double p0, p1; /* pixels of lo and hi */
};

/* A legend entry, laid out left to right and wrapped into rows. */
struct svg_legend_item {
    const char *label;
    const char *color;
    int kind;    /* 0 line, 1 dashed line, 2 marker only, 3 box */
    int marker;  /* line kinds: draw a dot too */
    int hollow;  /* the marker is a ring */
    double x, y; /* assigned by svg_legend_layout */
};

/* The plot area of a chart and the frame around it, in pixels: the left
 * margin fits the y labels (and the y title when there is one), the legend
 * rows go above the plot, the x labels (and title) below. */
struct svg_frame {
    double w, h;           /* the whole chart */
    double pl, pr, pt, pb; /* the plot's left, right, top and bottom edges */
    double pw, ph;         /* its width and height */
};

/* Estimated width in px of s at 12 px (UTF-8 characters, not bytes). */
double svg_text_width(const char *s);

/* The pixel of axis value v (plottable on m: svg_plottable). */
double svg_map_px(const struct svg_map *m, double v);

/* Two attributes in pixels (a point's, or a line's x1 and x2). */
void svg_pair(struct strbuf *b, const char *a, double x, const char *bn, double y);

/* Two attributes that carry data values for the tests and tooltips. */
void svg_data_pair(struct strbuf *b, const char *a, double x, const char *bn, double y);

/* The legend items, as laid out by svg_frame_layout. */
void svg_legend_write(struct strbuf *b, const struct svg_legend_item *it, size_t n);

/* The opening <svg> tag, <title> and the clip path of the plot area. */
void svg_open(struct strbuf *b, const char *id, const char *title, double w, double h, double pl,
              double pt, double pw, double ph);

/* 1 when axis a has a title to write. */
int svg_axis_has_title(const struct svg_axis *a);

/* The y axis: grid lines and labelled ticks across the plot, the axis
 * title rotated at the far left. */
void svg_y_axis_write(struct strbuf *b, const struct svg_map *my, const double *ticks, size_t nt,
                      double pl, double pr, double pt, double ph, const struct svg_axis *a);

/* Axis range and ticks for one axis of an x-y chart, from the user's
 * min/max where given, else from the data range [dlo, dhi] (have = 0: no
 * data at all). */
size_t svg_axis_range(const struct svg_axis *a, int have, int pad_top, double dlo, double dhi,
                      double *lo, double *hi, double *ticks);

/* The note in the middle of an empty plot: note, or dflt when note is
 * NULL. */
void svg_empty_note(struct strbuf *b, double pl, double pt, double pw, double ph, const char *note,
                    const char *dflt);

/* Lay out the frame of a w x h chart whose y ticks are yt[0..nyt) and
 * place the n legend items above the plot. */
void svg_frame_layout(struct svg_frame *fr, double w, double h, const double *yt, size_t nyt,
                      int y_title, int x_title, struct svg_legend_item *items, size_t n);

/* A category or tick label under the plot, centred on x. */
void svg_x_label(struct strbuf *b, const struct svg_frame *fr, double x, const char *text);

/* The frame's left and bottom edges, then the opening of the x axis title
 * when has_title (the caller writes the title and calls
 * svg_x_title_close). */
void svg_frame_edges(struct strbuf *b, const struct svg_frame *fr, int has_title);

/* Close the x axis title svg_frame_edges opened. */
void svg_x_title_close(struct strbuf *b);

#endif
