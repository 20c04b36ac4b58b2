/* svg.h: a small SVG chart writer for the HTML report.
 *
 * Two chart kinds: x-y charts (lines, markers, step lines for CDFs, on
 * linear or log axes, with horizontal reference lines, vertical markers
 * and shaded bands) and stacked bar charts (one bar per category). Each
 * writes one self-contained <svg> element into a struct strbuf: no
 * scripts, no external references, fonts and colours inline.
 *
 * Every data point is written with its exact values in machine-readable
 * attributes, so tests and users can recover what was plotted:
 *
 *   <circle class="pt" data-series="ttft_p99" data-x="20" data-y="412.5"
 *           cx="…" cy="…" r="…"/>   (data-hollow="1" before r on a ring the
 *                                     series' hollow[] asked for)
 *   <rect class="bar" data-series="http_429" data-x="20" data-y="12"
 *         data-y0="3" …/>          (segment value, and the stack below it)
 *   <line class="hline" data-key="slo" data-y="500" …/>
 *   <line class="vline" data-key="knee" data-x="30" …/>
 *   <rect class="band" data-key="…" data-x0="…" data-x1="…" …/>
 *   <g class="tick x" data-v="10">   (one per axis tick, label inside)
 *
 * Series without markers still carry one circle per point (r="0", which
 * SVG does not render). Numbers in data-* attributes use strbuf_put_num
 * (shortest exact form); pixel coordinates use two decimals. Points with a
 * NaN coordinate, or a coordinate <= 0 on a log axis, are not plotted and
 * break the line there. Output depends only on the input: the same chart
 * gives byte-identical text. All text is XML-escaped. */
#ifndef LL_SVG_H
#define LL_SVG_H

#include <stddef.h>

#include "util/strbuf.h"

/* Default size of a chart's viewBox, in SVG user units (CSS px at 100%). */
#define SVG_DEFAULT_WIDTH 560
#define SVG_DEFAULT_HEIGHT 320

/* Most ticks svg_axis_ticks ever returns. */
#define SVG_MAX_TICKS 24

/* Okabe-Ito colours (colour-blind safe), 8 entries; svg_palette(i) wraps
 * around. The returned string ("#0072b2") is static. */
#define SVG_PALETTE_LEN 8
const char *svg_palette(size_t i);

/* A colour from a viridis-like sequential ramp (dark purple at t = 0,
 * yellow-green at t = 1; colour-blind safe and monotone in lightness),
 * for series that have an order, such as load steps. t is clamped to
 * [0, 1]. Writes "#rrggbb" and a NUL into out (8 bytes). */
void svg_ramp_color(double t, char out[8]);

enum svg_scale {
    SVG_SCALE_LINEAR,
    SVG_SCALE_LOG,              /* base 10; values <= 0 are not plotted */
};

struct svg_axis {
    const char *label;          /* "offered load"; NULL = none */
    const char *unit;           /* "req/s"; shown as "label (unit)"; NULL = none */
    enum svg_scale scale;
    double min;                 /* NAN = from the data (rounded out to a tick) */
    double max;                 /* NAN = from the data (rounded out to a tick) */
    int include_zero;           /* linear, auto range: always show 0 */
};

/* Series drawing flags (or them together). */
#define SVG_MARKERS   0x1u      /* a visible dot per point */
#define SVG_LINE      0x2u      /* join points with straight lines */
#define SVG_STEP      0x4u      /* join as a step: across, then up (CDFs) */
#define SVG_DASHED    0x8u      /* dashed line */
#define SVG_NOLEGEND  0x10u     /* leave out of the legend */
#define SVG_HOLLOW    0x20u     /* markers drawn as rings */

struct svg_series {
    const char *key;            /* data-series value; should be unique per chart */
    const char *label;          /* legend text; NULL = key */
    const double *x;            /* n values, in axis units; borrowed */
    const double *y;            /* n values, in axis units; borrowed */
    size_t n;
    unsigned flags;             /* SVG_* above; 0 = SVG_LINE | SVG_MARKERS */
    const char *color;          /* "#rrggbb"; NULL = svg_palette(series index) */
    const unsigned char *hollow; /* n flags or NULL: 1 draws that point's marker as a
                                  * ring (data-hollow="1"); SVG_HOLLOW rings them all */
};

/* A horizontal reference line across the plot (an SLO threshold). */
struct svg_hline {
    double y;                   /* axis units */
    const char *key;            /* data-key, e.g. "slo" */
    const char *label;          /* drawn above the line at the right; may be NULL */
    const char *color;          /* line and label; NULL = the SLO red */
};

/* A vertical marker line (the knee, the SLO capacity). */
struct svg_vline {
    double x;                   /* axis units */
    const char *key;            /* data-key, e.g. "knee" */
    const char *label;          /* drawn at the top; may be NULL */
    const char *color;          /* NULL = dark grey */
};

/* A shaded vertical band from x0 to x1 (either may be +-INFINITY: the
 * band then runs to the edge of the plot). */
struct svg_band {
    double x0, x1;              /* axis units */
    const char *key;            /* data-key */
    const char *label;          /* drawn at the band's top left; may be NULL */
    const char *color;          /* fill; NULL = the light red of "beyond capacity" */
};

struct svg_chart {
    const char *id;             /* the <svg> id; unique in the document (clip paths use it) */
    const char *title;          /* accessible name (<title>); may be NULL */
    double width, height;       /* viewBox size; 0 = SVG_DEFAULT_WIDTH x SVG_DEFAULT_HEIGHT */
    struct svg_axis x, y;
    const struct svg_series *series;
    size_t n_series;
    const struct svg_hline *hlines;
    size_t n_hlines;
    const struct svg_vline *vlines;
    size_t n_vlines;
    const struct svg_band *bands;
    size_t n_bands;
    const char *empty_note;     /* shown mid-plot when no point is plottable; NULL = "no data" */
};

/* Append the x-y chart c to out as one <svg> element. The axis ranges come
 * from the axes' min/max where set, else from every plottable point,
 * reference line and marker (bands do not widen the range), rounded out to
 * nice ticks (svg_axis_ticks). Aborts on out of memory; never fails
 * otherwise (an empty chart is drawn with its note). */
void svg_chart_write(struct strbuf *out, const struct svg_chart *c);

/* One layer of a stacked bar chart: values[i] for category i (n_categories
 * of them; NaN or negative values are drawn as 0 and not written). */
struct svg_bar_stack {
    const char *key;            /* data-series value */
    const char *label;          /* legend text; NULL = key */
    const double *values;       /* borrowed */
    const char *color;          /* NULL = svg_palette(stack index) */
};

struct svg_bar_chart {
    const char *id;
    const char *title;
    double width, height;       /* 0 = defaults */
    const char *const *categories; /* n_categories labels, written as data-x; borrowed */
    size_t n_categories;
    const char *x_label;        /* axis title under the categories; may be NULL */
    struct svg_axis y;          /* scale must be linear; range from 0 */
    const struct svg_bar_stack *stacks;
    size_t n_stacks;
    const char *empty_note;     /* shown when every value is 0; NULL = "none" */
};

/* Append the stacked bar chart c to out. Categories are evenly spaced;
 * stacks are drawn bottom-up in order. A segment is written only when its
 * value is > 0. Aborts on out of memory. */
void svg_bar_chart_write(struct strbuf *out, const struct svg_bar_chart *c);

/* Nice ticks for data in [lo, hi] (lo <= hi, finite; for SVG_SCALE_LOG,
 * lo > 0). Writes the axis range, rounded out, to *ax_lo and *ax_hi, and
 * the tick values in increasing order into ticks (room for SVG_MAX_TICKS);
 * returns their count.
 * Linear: steps of 1, 2 or 5 times a power of ten, about 5 intervals; the
 * range is rounded out to whole steps; lo == hi is widened first.
 * Log: the range is rounded out to the enclosing values of the 1-2-5
 * sequence (…, 0.5, 1, 2, 5, 10, …); ticks are the 1-2-5 values inside it
 * when there are at most 9 of them, else the powers of ten inside it. */
size_t svg_axis_ticks(enum svg_scale scale, double lo, double hi,
                      double *ax_lo, double *ax_hi, double *ticks);

/* Format an axis tick value compactly into buf (len bytes, >= 16): at
 * most 4 significant digits, a k/M/G suffix from 10,000 up ("20k"), an
 * exponent below 0.001. Returns buf. */
char *svg_format_tick(double v, char *buf, size_t len);

#endif
