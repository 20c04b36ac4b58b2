/* test_svg.c: the string buffer and the SVG chart writer.
 *
 * Charts are checked by reading them back: the data-* attributes must carry
 * exactly the values given, and the pixel coordinates must agree with the
 * axis ticks (a point at a tick's value sits on that tick's grid line). */
#include "test.h"
#include "testutil.h"

#include <stdlib.h>
#include <string.h>

#include "util/strbuf.h"
#include "report/svg.h"

/* ---- reading SVG back ---- */

/* The pixel position of tick value v on axis "x" or "y" of the chart. */
static double tick_px(const char *s, size_t len, const char *axis, double v)
{
    char pat[32];
    snprintf(pat, sizeof(pat), "<g class=\"tick %s\"", axis);
    const char *end = s + len;
    for (const char *p = strstr(s, pat); p != NULL && p < end; p = strstr(p + 1, pat)) {
        if (svgtest_num(p, "data-v") != v)
            continue;
        const char *line = strstr(p, "<line");
        return svgtest_num(line, axis[0] == 'x' ? "x1" : "y1");
    }
    fail_msg("no %s tick at %g", axis, v);
    return 0;
}

static size_t tick_values(const char *s, size_t len, const char *axis, double *v,
                          size_t max)
{
    char pat[32];
    snprintf(pat, sizeof(pat), "<g class=\"tick %s\"", axis);
    size_t n = 0;
    const char *end = s + len;
    for (const char *p = strstr(s, pat); p != NULL && p < end; p = strstr(p + 1, pat))
        if (n < max)
            v[n++] = svgtest_num(p, "data-v");
    return n;
}

/* ---- strbuf ---- */

static void put_num_is(double v, const char *want)
{
    struct strbuf b;
    strbuf_init(&b);
    strbuf_put_num(&b, v);
    assert_string_equal(b.data, want);
    if (isfinite(v))
        assert_true(strtod(b.data, NULL) == v || (v == 0 && strtod(b.data, NULL) == 0));
    strbuf_free(&b);
}

static void test_strbuf_numbers(void **state)
{
    put_num_is(20, "20");
    put_num_is(-3, "-3");
    put_num_is(0.412, "0.412");
    put_num_is(-0.0, "0");
    put_num_is(1.5e-7, "1.5e-07");
    put_num_is(0.1 + 0.2, "0.30000000000000004");
    put_num_is(123456789012.5, "123456789012.5");
    put_num_is(1e20, "1e+20");
    put_num_is(NAN, "NaN");
    put_num_is(-INFINITY, "-Inf");

    struct strbuf b;
    strbuf_init(&b);
    strbuf_put_fixed(&b, 12.5, 2);
    strbuf_puts(&b, " ");
    strbuf_put_fixed(&b, 3.0, 2);
    strbuf_puts(&b, " ");
    strbuf_put_fixed(&b, -0.001, 2);
    strbuf_puts(&b, " ");
    strbuf_put_fixed(&b, 1.005, 1);
    strbuf_puts(&b, " ");
    strbuf_put_fixed(&b, 99.999, 2);
    assert_string_equal(b.data, "12.5 3 0 1 100");
    strbuf_free(&b);
}

static void test_strbuf_xml_escape(void **state)
{
    struct strbuf b;
    strbuf_init(&b);
    strbuf_put_xml(&b, "<script>alert(\"x\")&'</script>");
    assert_string_equal(b.data,
                        "&lt;script&gt;alert(&quot;x&quot;)&amp;&#39;&lt;/script&gt;");
    strbuf_clear(&b);
    /* Control bytes dropped, tab/LF kept, valid UTF-8 kept, bad bytes and
     * an overlong form replaced by U+FFFD, a cut sequence too. */
    strbuf_put_xml(&b, "a\x01\x1b" "b\tc\n\xC3\xA9\xE2\x89\xA4\xFF\xC0\xAFz\xE2\x89");
    assert_string_equal(b.data, "ab\tc\n\xC3\xA9\xE2\x89\xA4\xEF\xBF\xBD\xEF\xBF\xBD"
                                "\xEF\xBF\xBDz\xEF\xBF\xBD\xEF\xBF\xBD");
    strbuf_clear(&b);
    /* U+FFFE and U+FFFF, which XML 1.0 forbids, replaced; U+FFFD kept. */
    strbuf_put_xml(&b, "a\xEF\xBF\xBE"
                       "b\xEF\xBF\xBF"
                       "c\xEF\xBF\xBD");
    assert_string_equal(b.data, "a\xEF\xBF\xBD"
                                "b\xEF\xBF\xBD"
                                "c\xEF\xBF\xBD");
    strbuf_clear(&b);
    strbuf_put_xml(&b, NULL);
    assert_int_equal(b.len, 0);
    strbuf_free(&b);
}

static void test_strbuf_grows(void **state)
{
    struct strbuf b;
    strbuf_init(&b);
    for (int i = 0; i < 10000; i++)
        strbuf_printf(&b, "%d,", i % 10);
    assert_int_equal(b.len, 20000);
    assert_int_equal(strlen(b.data), 20000);
    char big[1000];
    memset(big, 'x', sizeof(big) - 1);
    big[sizeof(big) - 1] = '\0';
    strbuf_printf(&b, "[%s]", big);
    assert_int_equal(b.len, 20000 + 1001);
    assert_int_equal(b.data[b.len - 1], ']');
    strbuf_free(&b);
    strbuf_free(&b);                    /* twice is safe */
}

/* ---- ticks ---- */

static void assert_ticks(enum svg_scale sc, double lo, double hi, double want_lo,
                         double want_hi, const double *want, size_t nwant)
{
    double t[SVG_MAX_TICKS], alo, ahi;
    size_t n = svg_axis_ticks(sc, lo, hi, &alo, &ahi, t);
    if (n != nwant)
        fail_msg("[%g, %g]: %zu ticks, want %zu", lo, hi, n, nwant);
    assert_true(alo == want_lo);
    assert_true(ahi == want_hi);
    for (size_t i = 0; i < n; i++)
        if (t[i] != want[i])
            fail_msg("[%g, %g]: tick %zu = %.17g, want %.17g", lo, hi, i, t[i], want[i]);
}

static void test_ticks_linear(void **state)
{
    assert_ticks(SVG_SCALE_LINEAR, 0, 23, 0, 25, (double[]){0, 5, 10, 15, 20, 25}, 6);
    /* Steps of 0.2: the values are the doubles nearest 0.2, 0.4, ... */
    assert_ticks(SVG_SCALE_LINEAR, 0.13, 0.87, 0, 1,
                 (double[]){0, 0.2, 0.4, 0.6, 0.8, 1}, 6);
    /* Raw step 3 rounds up to 5. */
    assert_ticks(SVG_SCALE_LINEAR, -3, 12, -5, 15, (double[]){-5, 0, 5, 10, 15}, 5);
    assert_ticks(SVG_SCALE_LINEAR, 0, 100, 0, 100,
                 (double[]){0, 20, 40, 60, 80, 100}, 6);
    /* A single value is widened by 10% each way: [6.3, 7.7] -> step 0.5. */
    assert_ticks(SVG_SCALE_LINEAR, 7, 7, 6, 8, (double[]){6, 6.5, 7, 7.5, 8}, 5);
    assert_ticks(SVG_SCALE_LINEAR, 0, 0, 0, 1,
                 (double[]){0, 0.2, 0.4, 0.6, 0.8, 1}, 6);
    assert_ticks(SVG_SCALE_LINEAR, 1200, 4900, 1000, 5000,
                 (double[]){1000, 2000, 3000, 4000, 5000}, 5);
}

static void test_ticks_log(void **state)
{
    /* Many 1-2-5 values: decades only. */
    assert_ticks(SVG_SCALE_LOG, 3, 4000, 2, 5000, (double[]){10, 100, 1000}, 3);
    /* Few: every 1-2-5 value. */
    assert_ticks(SVG_SCALE_LOG, 30, 700, 20, 1000,
                 (double[]){20, 50, 100, 200, 500, 1000}, 6);
    assert_ticks(SVG_SCALE_LOG, 0.004, 0.3, 0.002, 0.5,
                 (double[]){0.002, 0.005, 0.01, 0.02, 0.05, 0.1, 0.2, 0.5}, 8);
    /* Exactly a 1-2-5 value at both ends: widened by one value each way. */
    assert_ticks(SVG_SCALE_LOG, 1, 1, 0.5, 2, (double[]){0.5, 1, 2}, 3);
    assert_ticks(SVG_SCALE_LOG, 100, 500, 100, 500, (double[]){100, 200, 500}, 3);
    /* Twenty decades never give more than SVG_MAX_TICKS. */
    double t[SVG_MAX_TICKS], lo, hi;
    size_t n = svg_axis_ticks(SVG_SCALE_LOG, 1e-30, 1e30, &lo, &hi, t);
    assert_in_range(n, 2, SVG_MAX_TICKS);
    for (size_t i = 1; i < n; i++)
        assert_true(t[i] > t[i - 1]);
}

static void test_format_tick(void **state)
{
    char b[32];
    assert_string_equal(svg_format_tick(0, b, sizeof(b)), "0");
    assert_string_equal(svg_format_tick(0.5, b, sizeof(b)), "0.5");
    assert_string_equal(svg_format_tick(1500, b, sizeof(b)), "1500");
    assert_string_equal(svg_format_tick(20000, b, sizeof(b)), "20k");
    assert_string_equal(svg_format_tick(2.5e6, b, sizeof(b)), "2.5M");
    assert_string_equal(svg_format_tick(-40, b, sizeof(b)), "-40");
    assert_string_equal(svg_format_tick(0.0001, b, sizeof(b)), "0.0001");
}

static void test_colors(void **state)
{
    char c[8];
    svg_ramp_color(0, c);
    assert_string_equal(c, "#440154");
    svg_ramp_color(1, c);
    assert_string_equal(c, "#c8c81e");
    svg_ramp_color(-5, c);
    assert_string_equal(c, "#440154");
    svg_ramp_color(NAN, c);
    assert_string_equal(c, "#440154");
    assert_string_equal(svg_palette(0), "#0072b2");
    assert_string_equal(svg_palette(SVG_PALETTE_LEN), svg_palette(0));
}

/* ---- x-y charts ---- */

static const double px_x[] = {5, 10, 15, 20, 25};
static const double px_p50[] = {100, 120, 150, 400, 2000};
static const double px_p99[] = {180, 260, 500, 1500, 9000};

static void make_chart(struct strbuf *b, enum svg_scale ys, const char *title)
{
    struct svg_series s[2] = {
        {.key = "ttft_p50", .label = "TTFT p50", .x = px_x, .y = px_p50, .n = 5},
        {.key = "ttft_p99", .label = "TTFT p99", .x = px_x, .y = px_p99, .n = 5,
         .flags = SVG_LINE | SVG_MARKERS | SVG_DASHED},
    };
    struct svg_hline hl = {.y = 500, .key = "slo", .label = "SLO 500 ms"};
    struct svg_vline vl[2] = {{.x = 15, .key = "capacity", .label = "capacity 15"},
                              {.x = 17.5, .key = "knee", .label = "knee 17.5"}};
    struct svg_band band = {.x0 = 15, .x1 = INFINITY, .key = "over", .label = "beyond"};
    struct svg_chart c = {
        .id = "c1", .title = title,
        .x = {.label = "offered load", .unit = "req/s", .min = NAN, .max = NAN,
              .include_zero = 1},
        .y = {.label = "TTFT", .unit = "ms", .scale = ys, .min = NAN, .max = NAN,
              .include_zero = 1},
        .series = s, .n_series = 2, .hlines = &hl, .n_hlines = 1,
        .vlines = vl, .n_vlines = 2, .bands = &band, .n_bands = 1,
    };
    svg_chart_write(b, &c);
}

/* make_chart titled "TTFT" into b (which it initialises; the caller
 * frees it): the chart's start, its length in *len. */
static const char *ttft_chart(struct strbuf *b, enum svg_scale ys, size_t *len)
{
    strbuf_init(b);
    make_chart(b, ys, "TTFT");
    const char *s = svgtest_chart_find(b->data, "c1", len);
    assert_non_null(s);
    return s;
}

static void test_chart_points_exact(void **state)
{
    struct strbuf b;
    size_t len;
    const char *s = ttft_chart(&b, SVG_SCALE_LINEAR, &len);
    double xs[8], ys[8];
    assert_int_equal(svgtest_collect(s, len, "<circle class=\"pt\"", "ttft_p50", "data-x",
                                     "data-y", xs, ys, 8), 5);
    for (int i = 0; i < 5; i++) {
        assert_true(xs[i] == px_x[i]);
        assert_true(ys[i] == px_p50[i]);
    }
    assert_int_equal(svgtest_collect(s, len, "<circle class=\"pt\"", "ttft_p99", "data-x",
                                     "data-y", xs, ys, 8), 5);
    for (int i = 0; i < 5; i++)
        assert_true(ys[i] == px_p99[i]);

    /* Pixels agree with the axes: linear x and y through the ticks. */
    double cx[8], cy[8];
    svgtest_collect(s, len, "<circle class=\"pt\"", "ttft_p50", "cx", "cy", cx, cy, 8);
    double x0 = tick_px(s, len, "x", 0), x25 = tick_px(s, len, "x", 25);
    double y0 = tick_px(s, len, "y", 0), y2k = tick_px(s, len, "y", 2000);
    for (int i = 0; i < 5; i++) {
        ASSERT_NEAR(cx[i], x0 + (x25 - x0) * px_x[i] / 25, 0.011);
        ASSERT_NEAR(cy[i], y0 + (y2k - y0) * px_p50[i] / 2000, 0.011);
    }

    /* The SLO line sits at y = 500, where the p99 point at 500 is. */
    const char *hl = strstr(s, "<line class=\"hline\"");
    assert_non_null(hl);
    assert_true(svgtest_num(hl, "data-y") == 500);
    svgtest_collect(s, len, "<circle class=\"pt\"", "ttft_p99", "cx", "cy", cx, cy, 8);
    ASSERT_NEAR(svgtest_num(hl, "y1"), cy[2], 1e-9);
    ASSERT_NEAR(svgtest_num(hl, "y2"), cy[2], 1e-9);
    assert_non_null(strstr(s, ">SLO 500 ms</text>"));

    /* The capacity marker at x = 15, where the third points are; the knee
     * at 17.5, between the ticks. */
    double vx[4], vy[4];
    assert_int_equal(svgtest_collect(s, len, "<line class=\"vline\"", NULL, "data-x", "x1",
                                     vx, vy, 4), 2);
    assert_true(vx[0] == 15);
    ASSERT_NEAR(vy[0], cx[2], 1e-9);
    assert_true(vx[1] == 17.5);
    ASSERT_NEAR(vy[1], x0 + (x25 - x0) * 17.5 / 25, 0.011);
    assert_non_null(strstr(s, "data-key=\"knee\""));
    assert_non_null(strstr(s, ">knee 17.5</text>"));

    /* The band runs from the capacity to the right edge of the plot. */
    const char *band = strstr(s, "<rect class=\"band\"");
    assert_non_null(band);
    ASSERT_NEAR(svgtest_num(band, "x"), cx[2], 1e-9);
    ASSERT_NEAR(svgtest_num(band, "x") + svgtest_num(band, "width"), x25, 0.011);
    strbuf_free(&b);
}

static void test_chart_log_axis(void **state)
{
    struct strbuf b;
    size_t len;
    const char *s = ttft_chart(&b, SVG_SCALE_LOG, &len);
    /* Data 100..9000: [100, 10000], seven 1-2-5 ticks. */
    double t[SVG_MAX_TICKS];
    size_t n = tick_values(s, len, "y", t, SVG_MAX_TICKS);
    assert_int_equal(n, 7);
    static const double want[] = {100, 200, 500, 1000, 2000, 5000, 10000};
    for (size_t i = 0; i < n; i++)
        assert_true(t[i] == want[i]);
    double y100 = tick_px(s, len, "y", 100), y1k = tick_px(s, len, "y", 1000);
    double y10k = tick_px(s, len, "y", 10000);
    ASSERT_NEAR(y100 - y1k, y1k - y10k, 0.02);      /* equal decades */
    double cx[8], cy[8];
    svgtest_collect(s, len, "<circle class=\"pt\"", "ttft_p50", "cx", "cy", cx, cy, 8);
    /* 100 on its tick; 400 at log10(4) of the way to 1000. */
    ASSERT_NEAR(cy[0], y100, 0.011);
    ASSERT_NEAR(cy[3], y100 + (y1k - y100) * log10(4.0), 0.011);
    const char *hl = strstr(s, "<line class=\"hline\"");
    ASSERT_NEAR(svgtest_num(hl, "y1"), y100 + (y1k - y100) * log10(5.0), 0.011);
    ASSERT_NEAR(svgtest_num(hl, "y1"), tick_px(s, len, "y", 500), 1e-9);
    strbuf_free(&b);
}

static void test_chart_skips_unplottable(void **state)
{
    double x[] = {1, 2, 3, 4, 5};
    double y[] = {10, 0, NAN, -4, 50};
    struct svg_series s = {.key = "s", .x = x, .y = y, .n = 5};
    struct svg_chart c = {.id = "c2", .x = {.min = NAN, .max = NAN},
                          .y = {.scale = SVG_SCALE_LOG, .min = NAN, .max = NAN},
                          .series = &s, .n_series = 1};
    struct strbuf b;
    strbuf_init(&b);
    svg_chart_write(&b, &c);
    double xs[8], ys[8];
    size_t n = svgtest_collect(b.data, b.len, "<circle class=\"pt\"", "s", "data-x", "data-y",
                               xs, ys, 8);
    assert_int_equal(n, 2);
    assert_true(xs[0] == 1 && ys[0] == 10 && xs[1] == 5 && ys[1] == 50);
    /* The line breaks at the gap: two moves, no line segment across it. */
    const char *path = strstr(b.data, "<path class=\"line\"");
    assert_non_null(path);
    char d[256];
    assert_true(svgtest_attr(path, "d", d, sizeof(d)));
    assert_null(strchr(d, 'L'));
    assert_non_null(strchr(strchr(d, 'M') + 1, 'M'));
    assert_null(strstr(b.data, "NaN"));
    strbuf_free(&b);
}

static void test_chart_step_and_markers(void **state)
{
    double x[] = {10, 20, 40};
    double y[] = {50, 90, 100};
    struct svg_series s = {.key = "cdf", .x = x, .y = y, .n = 3, .flags = SVG_STEP};
    struct svg_chart c = {.id = "c3", .x = {.scale = SVG_SCALE_LOG, .min = NAN, .max = NAN},
                          .y = {.min = 0, .max = 100}, .series = &s, .n_series = 1};
    struct strbuf b;
    strbuf_init(&b);
    svg_chart_write(&b, &c);
    const char *path = strstr(b.data, "<path class=\"line\"");
    char d[256];
    assert_true(svgtest_attr(path, "d", d, sizeof(d)));
    /* M x0 y0, H x1 V y1, H x2 V y2: across first, then up. */
    assert_non_null(strchr(d, 'H'));
    assert_non_null(strchr(d, 'V'));
    assert_null(strchr(d, 'L'));
    /* No markers: the points are there, with r = 0. */
    double xs[4], ys[4];
    assert_int_equal(svgtest_collect(b.data, b.len, "<circle class=\"pt\"", "cdf", "data-x",
                                     "data-y", xs, ys, 4), 3);
    assert_true(xs[2] == 40 && ys[2] == 100);
    const char *pt = strstr(b.data, "<circle class=\"pt\"");
    assert_true(svgtest_num(pt, "r") == 0);
    /* The fixed y range is kept, not rounded out. */
    double t[SVG_MAX_TICKS];
    size_t n = tick_values(b.data, b.len, "y", t, SVG_MAX_TICKS);
    assert_int_equal(n, 6);
    assert_true(t[0] == 0 && t[5] == 100);
    strbuf_free(&b);
}

static void test_chart_escapes(void **state)
{
    double x[] = {1}, y[] = {2};
    struct svg_series s = {.key = "k\"><script>", .label = "a<b & 'c'", .x = x, .y = y,
                           .n = 1};
    struct svg_hline hl = {.y = 2, .key = "slo", .label = "</text><script>x</script>"};
    struct svg_chart c = {.id = "c4\"", .title = "<script>alert(1)</script>",
                          .x = {.label = "x & y", .unit = "<u>", .min = NAN, .max = NAN},
                          .y = {.min = NAN, .max = NAN}, .series = &s, .n_series = 1,
                          .hlines = &hl, .n_hlines = 1};
    struct strbuf b;
    strbuf_init(&b);
    svg_chart_write(&b, &c);
    assert_null(strstr(b.data, "<script"));
    assert_null(strstr(b.data, "<u>"));
    assert_non_null(strstr(b.data, "&lt;script&gt;alert(1)&lt;/script&gt;"));
    assert_non_null(strstr(b.data, "a&lt;b &amp; &#39;c&#39;"));
    assert_non_null(strstr(b.data, "data-series=\"k&quot;&gt;&lt;script&gt;\""));
    assert_non_null(strstr(b.data, "x &amp; y (&lt;u&gt;)"));
    strbuf_free(&b);
}

static void test_chart_deterministic_and_empty(void **state)
{
    struct strbuf a, b;
    strbuf_init(&a);
    strbuf_init(&b);
    make_chart(&a, SVG_SCALE_LINEAR, "t");
    make_chart(&b, SVG_SCALE_LINEAR, "t");
    assert_int_equal(a.len, b.len);
    assert_memory_equal(a.data, b.data, a.len);

    strbuf_clear(&a);
    struct svg_chart c = {.id = "empty", .x = {.min = NAN, .max = NAN},
                          .y = {.min = NAN, .max = NAN}, .empty_note = "nothing yet"};
    svg_chart_write(&a, &c);
    assert_non_null(strstr(a.data, ">nothing yet</text>"));
    assert_null(strstr(a.data, "class=\"pt\""));
    assert_non_null(strstr(a.data, "</svg>"));
    strbuf_free(&a);
    strbuf_free(&b);
}

/* ---- bars ---- */

static void test_bars_stacked(void **state)
{
    const char *cats[] = {"5", "10", "15"};
    double v429[] = {0, 3, 12};
    double vto[] = {1, 0, 4};
    struct svg_bar_stack st[2] = {{.key = "http_429", .values = v429},
                                  {.key = "timeout_first_token", .values = vto}};
    struct svg_bar_chart c = {.id = "b1", .categories = cats, .n_categories = 3,
                              .x_label = "step", .y = {.min = NAN, .max = NAN},
                              .stacks = st, .n_stacks = 2};
    struct strbuf b;
    strbuf_init(&b);
    svg_bar_chart_write(&b, &c);
    /* Zeros are not drawn: three 429 / timeout segments in all. */
    double ys[8], y0s[8];
    assert_int_equal(svgtest_collect(b.data, b.len, "<rect class=\"bar\"", "http_429", "data-y",
                                     "data-y0", ys, y0s, 8), 2);
    assert_true(ys[0] == 3 && y0s[0] == 0 && ys[1] == 12 && y0s[1] == 0);
    assert_int_equal(svgtest_collect(b.data, b.len, "<rect class=\"bar\"", "timeout_first_token",
                                     "data-y", "data-y0", ys, y0s, 8), 2);
    assert_true(ys[0] == 1 && y0s[0] == 0);
    assert_true(ys[1] == 4 && y0s[1] == 12);        /* stacked on the 429s */
    /* Heights are proportional: 12 is four times 3. */
    double h[8], yy[8];
    svgtest_collect(b.data, b.len, "<rect class=\"bar\"", "http_429", "height", "y", h, yy, 8);
    ASSERT_NEAR(h[1], 4 * h[0], 0.03);
    /* The segment with data-x "15" on top of the 429s starts where they end. */
    const char *p = strstr(b.data, "data-series=\"timeout_first_token\" data-x=\"15\"");
    assert_non_null(p);
    while (strncmp(p, "<rect", 5) != 0)
        p--;
    ASSERT_NEAR(svgtest_num(p, "y") + svgtest_num(p, "height"), yy[1], 0.011);
    assert_non_null(strstr(b.data, ">16</text>"));   /* total above the bar */
    strbuf_free(&b);

    /* No errors at all: a note, no bars. */
    double zero[] = {0, 0, 0};
    struct svg_bar_stack zs = {.key = "http_5xx", .values = zero};
    c.stacks = &zs;
    c.n_stacks = 1;
    c.empty_note = "no errors";
    strbuf_init(&b);
    svg_bar_chart_write(&b, &c);
    assert_null(strstr(b.data, "class=\"bar\""));
    assert_non_null(strstr(b.data, ">no errors</text>"));
    strbuf_free(&b);
}

UNIT_TESTS(test_strbuf_numbers, test_strbuf_xml_escape, test_strbuf_grows, test_ticks_linear,
           test_ticks_log, test_format_tick, test_colors, test_chart_points_exact,
           test_chart_log_axis, test_chart_skips_unplottable, test_chart_step_and_markers,
           test_chart_escapes, test_chart_deterministic_and_empty, test_bars_stacked)
