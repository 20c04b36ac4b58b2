/* svg_ticks.c: the ticks of a chart's axes (see svg.h): "nice" values on
 * the 1-2-5 ladder of a linear axis and the decades (with their 2 and 5
 * where few) of a log axis, and a tick's label. Pure functions of numbers;
 * moved from svg.c, whose charts call them. */
#include "report/svg.h"

#include <math.h>
#include <stddef.h>
#include <stdio.h>

/* ---- ticks ---- */

/* 10^e exactly for the integer exponents we meet (|e| <= 300 or so). For
 * e < 0 the caller divides by 10^-e instead, which rounds once. */
static double svg_pow10(int e)
{
    return pow(10.0, (double)e);
}

/* k * mult * 10^e with one rounding: tick values like 0.3 come out as the
 * double nearest 0.3, not 0.30000000000000004. */
static double svg_scaled(double k_mult, int e)
{
    return e >= 0 ? k_mult * svg_pow10(e) : k_mult / svg_pow10(-e);
}

/* The i-th value of the 1-2-5 sequence: i = 0 -> 1, 1 -> 2, 2 -> 5,
 * 3 -> 10, -1 -> 0.5, ... */
static double svg_125_value(long i)
{
    static const double m[3] = {1, 2, 5};
    long e = i >= 0 ? i / 3 : -((-i + 2) / 3);
    long r = i - 3 * e;
    return svg_scaled(m[r], (int)e);
}

/* The index of the largest 1-2-5 value <= v (v > 0), with a relative
 * tolerance so that v = 5 * 10^e maps to itself despite rounding. */
static long svg_125_floor(double v)
{
    long e = (long)floor(log10(v));
    long i = 3 * e + 2;
    /* log10 may be off by one near powers of ten: search from above. */
    while (svg_125_value(i) > v * (1 + 1e-9))
        i--;
    while (svg_125_value(i + 1) <= v * (1 + 1e-9))
        i++;
    return i;
}

static long svg_125_ceil(double v)
{
    long i = svg_125_floor(v);
    if (svg_125_value(i) < v * (1 - 1e-9))
        i++;
    return i;
}

size_t svg_axis_ticks(enum svg_scale scale, double lo, double hi, double *ax_lo, double *ax_hi,
                      double *ticks)
{
    size_t n = 0;
    if (scale == SVG_SCALE_LOG) {
        if (!(lo > 0) || !isfinite(lo))
            lo = 1;
        if (!(hi >= lo) || !isfinite(hi))
            hi = lo;
        long i0 = svg_125_floor(lo), i1 = svg_125_ceil(hi);
        if (i0 == i1) {
            i0--;
            i1++;
        }
        *ax_lo = svg_125_value(i0);
        *ax_hi = svg_125_value(i1);
        if (i1 - i0 + 1 <= 9) {
            for (long i = i0; i <= i1; i++)
                ticks[n++] = svg_125_value(i);
            return n;
        }
        /* Powers of ten only, every stride-th so they fit. */
        long e0 = (i0 + 2) / 3, e1;
        if (i0 < 0)
            e0 = -((-i0) / 3); /* ceil(i0 / 3) for negatives */
        e1 = i1 >= 0 ? i1 / 3 : -((-i1 + 2) / 3);
        long stride = (e1 - e0) / (SVG_MAX_TICKS - 1) + 1;
        for (long e = e0; e <= e1 && n < SVG_MAX_TICKS; e += stride)
            ticks[n++] = svg_scaled(1, (int)e);
        return n;
    }

    if (!isfinite(lo) || !isfinite(hi) || hi < lo) {
        lo = 0;
        hi = 1;
    }
    if (hi == lo) {
        if (lo == 0) {
            hi = 1;
        } else {
            double d = fabs(lo) * 0.1;
            lo -= d;
            hi += d;
        }
    }
    double raw = (hi - lo) / 5.0;
    int e = (int)floor(log10(raw));
    double f = raw / pow(10.0, e);
    double mult;
    if (f <= 1 + 1e-9)
        mult = 1;
    else if (f <= 2 + 1e-9)
        mult = 2;
    else if (f <= 5 + 1e-9)
        mult = 5;
    else {
        mult = 1;
        e++;
    }
    double step = svg_scaled(mult, e);
    double k0 = floor(lo / step + 1e-9), k1 = ceil(hi / step - 1e-9);
    if (k1 <= k0)
        k1 = k0 + 1;
    *ax_lo = svg_scaled(k0 * mult, e);
    *ax_hi = svg_scaled(k1 * mult, e);
    for (double k = k0; k <= k1 && n < SVG_MAX_TICKS; k++)
        ticks[n++] = svg_scaled(k * mult, e);
    return n;
}

char *svg_format_tick(double v, char *buf, size_t len)
{
    double a = fabs(v);
    if (v == 0)
        snprintf(buf, len, "0");
    else if (a >= 1e9)
        snprintf(buf, len, "%.4gG", v / 1e9);
    else if (a >= 1e6)
        snprintf(buf, len, "%.4gM", v / 1e6);
    else if (a >= 1e4)
        snprintf(buf, len, "%.4gk", v / 1e3);
    else if (a < 1e-3)
        snprintf(buf, len, "%.2g", v);
    else
        snprintf(buf, len, "%.4g", v);
    return buf;
}
