/* energy.c: energy figures from a GPU telemetry join. */
#include "metrics/energy.h"

#include <math.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

#include "util/util.h"

/* A scraped max power under this share of the mean power is no max
 * (energy_figures_compute). */
#define ENERGY_MAX_BELOW_MEAN 0.98

static double gauge_mean(const struct scrape_gauge *g)
{
    return g->present ? g->mean : NAN;
}

static double ratio(double a, double b)
{
    return isfinite(a) && isfinite(b) && b > 0 ? a / b : NAN;
}

/* How much of j's window [from, to] (the scrapes the energy runs
 * between) covers, into out->covered_s, and whether it falls short of
 * either end by more than ENERGY_SLACK_STEPS intervals (out->partial).
 *
 * The outer span ends at the last ok scrape when none came after the
 * window: a source that answered 503 from 2 s into a 3.9 s run gave
 * 150 J over 1.50 s, and that energy over the whole run's tokens read
 * 0.38 J per token where the truth was near 0.98. */
static void coverage(const struct scrape_join *j, uint64_t from, uint64_t to,
                     struct energy_figures *out)
{
    uint64_t w0 = j->window_from_abs_ns, w1 = j->window_to_abs_ns;
    out->covered_s = NAN;
    if (w1 <= w0)
        return;
    uint64_t lo = LL_MAX(from, w0), hi = LL_MIN(to, w1);
    out->covered_s = hi > lo ? (double)(hi - lo) / 1e9 : 0;
    double slack_ns = ENERGY_SLACK_STEPS * (double)j->step_ns;
    double late_ns = from > w0 ? (double)(from - w0) : 0;
    double early_ns = to < w1 ? (double)(w1 - to) : 0;
    out->partial = late_ns > slack_ns || early_ns > slack_ns;
}

/* The figures divided by the client's counts over the window. Energy
 * over only part of the window divided by the whole window's tokens
 * would read low by the part missing: withheld (NAN) when partial. The
 * cost is the window's price over its tokens, no energy in it: it
 * stands. */
static void per_client(struct energy_figures *e)
{
    e->cost_per_m_output_tokens =
        ratio(e->cost_per_hour * e->window_s / 3600.0 * 1e6, e->output_tokens);
    if (e->partial)
        return;
    e->j_per_output_token = ratio(e->energy_j, e->output_tokens);
    e->j_per_request = ratio(e->energy_j, e->requests);
    e->output_tokens_per_j = ratio(e->output_tokens, e->energy_j);
}

void energy_figures_compute(const struct scrape_join *j, int join_rc, double output_tokens,
                            double requests, double window_s, double cost_per_hour,
                            struct energy_figures *out)
{
    memset(out, 0, sizeof *out);
    out->output_tokens = output_tokens;
    out->requests = requests;
    out->window_s = window_s;
    out->cost_per_hour = cost_per_hour;
    out->max_power_w = out->util_mean_pct = out->sm_clock_mean_mhz = out->gr_active_mean =
        out->mem_used_max_mib = NAN;
    out->j_per_output_token = out->j_per_request = out->output_tokens_per_j = NAN;
    out->mean_power_w = out->cost_per_m_output_tokens = out->covered_s = NAN;
    if (join_rc != 0 || !j)
        return;
    double span_s = j->span_to_abs_ns > j->span_from_abs_ns
                        ? (double)(j->span_to_abs_ns - j->span_from_abs_ns) / 1e9
                        : 0;
    if (j->gpu_energy.present && span_s > 0) {
        out->source = "energy_counter";
        out->energy_j = j->gpu_energy.delta;
        out->span_s = span_s;
        coverage(j, j->span_from_abs_ns, j->span_to_abs_ns, out);
    } else if (j->power_integral_present && j->power_s > 0) {
        out->source = "power_integral";
        out->energy_j = j->power_integral_j;
        out->span_s = j->power_s;
        out->gaps = j->power_gaps;
        coverage(j, j->power_from_abs_ns, j->power_to_abs_ns, out);
    } else {
        return;
    }
    out->present = 1;
    out->gpus = j->gpus;
    out->mean_power_w = out->energy_j / out->span_s;
    out->max_power_w = j->gpu_power.present ? j->gpu_power.max : NAN;
    /* The power gauge is read at the scrapes alone. An engine's power is
     * bursty (the sim's, with --gpu-idle-watts 0, is zero between steps),
     * so every scrape can miss the peaks: two sims at 30 req/s read 0 W
     * at each of their 4 scrapes beside a counter's mean of 69.9 W, and
     * the summary printed "max 0.0 W". A max below the mean cannot be the
     * max: unknown then. 2% of slack for the scrapes' own timing, which
     * the counter's span shares. */
    if (isfinite(out->max_power_w) && out->max_power_w < ENERGY_MAX_BELOW_MEAN * out->mean_power_w)
        out->max_power_w = NAN;
    per_client(out);
    out->util_mean_pct = gauge_mean(&j->gpu_util);
    out->sm_clock_mean_mhz = gauge_mean(&j->gpu_sm_clock);
    out->gr_active_mean = gauge_mean(&j->gpu_gr_active);
    out->mem_used_max_mib = j->gpu_mem_used.present ? j->gpu_mem_used.max : NAN;
}

/* The weighted mean of parts' field at off, by GPUs; NAN when no part
 * has it. */
static double weighted(const struct energy_figures *parts, size_t n, size_t off)
{
    double sum = 0, w = 0;
    for (size_t i = 0; i < n; i++) {
        double v = *(const double *)((const char *)&parts[i] + off);
        if (isfinite(v) && parts[i].gpus > 0) {
            sum += v * parts[i].gpus;
            w += parts[i].gpus;
        }
    }
    return w > 0 ? sum / w : NAN;
}

/* The sum of parts' field at off; NAN when any part lacks it. */
static double summed(const struct energy_figures *parts, size_t n, size_t off)
{
    double sum = 0;
    for (size_t i = 0; i < n; i++) {
        double v = *(const double *)((const char *)&parts[i] + off);
        if (!isfinite(v))
            return NAN;
        sum += v;
    }
    return sum;
}

void energy_figures_combine(const struct energy_figures *parts, size_t n,
                            struct energy_figures *out)
{
    struct energy_figures base = parts[0];
    energy_figures_compute(NULL, LL_E_NOTFOUND, base.output_tokens, base.requests, base.window_s,
                           base.cost_per_hour, out);
    out->exporters = n;
    for (size_t i = 0; i < n; i++)
        out->missing += !parts[i].present;
    if (out->missing)
        return;
    out->present = 1;
    out->source = parts[0].source;
    for (size_t i = 0; i < n; i++) {
        if (strcmp(parts[i].source, out->source) != 0)
            out->source = "mixed";
        out->energy_j += parts[i].energy_j;
        out->span_s = LL_MAX(out->span_s, parts[i].span_s);
        out->gaps += parts[i].gaps;
        out->gpus += parts[i].gpus;
        out->partial |= parts[i].partial;
        if (!isfinite(out->covered_s) || parts[i].covered_s < out->covered_s)
            out->covered_s = parts[i].covered_s;
    }
    out->mean_power_w = summed(parts, n, offsetof(struct energy_figures, mean_power_w));
    out->max_power_w = summed(parts, n, offsetof(struct energy_figures, max_power_w));
    out->mem_used_max_mib = summed(parts, n, offsetof(struct energy_figures, mem_used_max_mib));
    out->util_mean_pct = weighted(parts, n, offsetof(struct energy_figures, util_mean_pct));
    out->sm_clock_mean_mhz = weighted(parts, n, offsetof(struct energy_figures, sm_clock_mean_mhz));
    out->gr_active_mean = weighted(parts, n, offsetof(struct energy_figures, gr_active_mean));
    per_client(out);
}

/* What the scrapers s[0, n) say of themselves, into src (n entries). */
static void sources_of(struct scraper *const *s, size_t n, struct scrape_source *src)
{
    for (size_t i = 0; i < n; i++) {
        src[i] = (struct scrape_source){scraper_url(s[i]), 0, 0, scraper_origin_ns(s[i])};
        scraper_counts(s[i], &src[i].scrapes, &src[i].failed);
    }
}

void energy_print(FILE *f, const struct energy_figures *e, struct scraper *const *s, size_t n)
{
    struct scrape_source *src = ll_calloc(n + 1, sizeof *src);
    sources_of(s, n, src);
    energy_print_sources(f, e, src, n);
    free(src);
}

json_t *energy_json(const struct energy_figures *e, struct scraper *const *s, size_t n)
{
    struct scrape_source *src = ll_calloc(n + 1, sizeof *src);
    sources_of(s, n, src);
    json_t *o = energy_json_sources(e, src, n);
    free(src);
    return o;
}

void energy_print_sources(FILE *f, const struct energy_figures *e, const struct scrape_source *src,
                          size_t n)
{
    char shown[512];
    for (size_t i = 0; i < n; i++)
        fprintf(f, "%s (%s): %llu scrapes, %llu failed (gaps)\n", i ? "      " : "energy",
                ll_shown(src[i].url, shown, sizeof shown), (unsigned long long)src[i].scrapes,
                (unsigned long long)src[i].failed);
    if (!e->present) {
        if (e->missing && e->missing < n)
            fprintf(f,
                    "  no figure: %zu of the %zu exporters had no energy counter or power "
                    "series over the run\n",
                    e->missing, n);
        else
            fprintf(f, "  no energy counter or power series over the run\n");
        return;
    }
    fprintf(f, "  energy               %.1f J over %.2f s, %u GPU%s, from the %s", e->energy_j,
            e->span_s, e->gpus, e->gpus == 1 ? "" : "s",
            strcmp(e->source, "energy_counter") == 0   ? "energy counter"
            : strcmp(e->source, "power_integral") == 0 ? "power series"
                                                       : "counters and power series");
    if (strcmp(e->source, "energy_counter") != 0)
        fprintf(f, " (trapezoid, %zu gap%s bridged)", e->gaps, e->gaps == 1 ? "" : "s");
    fputc('\n', f);
    fprintf(f, "  power                mean %.1f W", e->mean_power_w);
    if (isfinite(e->max_power_w))
        fprintf(f, "  max %.1f W\n", e->max_power_w);
    else
        fprintf(f, "  max -\n");
    if (e->partial)
        fprintf(f,
                "  energy covers %.2f s of the %.2f s window: per-token and per-request figures "
                "withheld\n",
                e->covered_s, e->window_s);
    if (isfinite(e->j_per_output_token))
        fprintf(f, "  per output token     %.4f J  (%.2f tokens/J)\n", e->j_per_output_token,
                e->output_tokens_per_j);
    if (isfinite(e->j_per_request))
        fprintf(f, "  per request          %.2f J\n", e->j_per_request);
    if (isfinite(e->cost_per_m_output_tokens))
        fprintf(f, "  cost                 %.4f per million output tokens (at %g per hour)\n",
                e->cost_per_m_output_tokens, e->cost_per_hour);
    if (isfinite(e->util_mean_pct))
        fprintf(f, "  GPU utilisation      mean %.1f%%\n", e->util_mean_pct);
}

/* A JSON number, or null where there is none. */
static json_t *num_or_null(double v)
{
    return isfinite(v) ? json_real(v) : json_null();
}

json_t *energy_json_sources(const struct energy_figures *e, const struct scrape_source *src,
                            size_t n)
{
    uint64_t scrapes = 0, failed = 0;
    json_t *o = json_object(), *urls = json_array();
    for (size_t i = 0; i < n; i++) {
        scrapes += src[i].scrapes;
        failed += src[i].failed;
        json_array_append_new(urls, json_string(src[i].url));
    }
    json_object_set_new(o, "url", json_string(n ? src[0].url : ""));
    json_object_set_new(o, "urls", urls);
    json_object_set_new(o, "scrapes", json_integer((json_int_t)scrapes));
    json_object_set_new(o, "failed", json_integer((json_int_t)failed));
    json_object_set_new(o, "present", json_boolean(e->present));
    json_object_set_new(o, "missing", json_integer((json_int_t)e->missing));
    if (!e->present)
        return o;
    json_object_set_new(o, "source", json_string(e->source));
    json_object_set_new(o, "gpus", json_integer(e->gpus));
    json_object_set_new(o, "energy_j", json_real(e->energy_j));
    json_object_set_new(o, "span_s", json_real(e->span_s));
    json_object_set_new(o, "window_s", num_or_null(e->window_s));
    json_object_set_new(o, "covered_s", num_or_null(e->covered_s));
    json_object_set_new(o, "partial", json_boolean(e->partial));
    json_object_set_new(o, "gaps", json_integer((json_int_t)e->gaps));
    json_object_set_new(o, "mean_power_w", num_or_null(e->mean_power_w));
    json_object_set_new(o, "max_power_w", num_or_null(e->max_power_w));
    json_object_set_new(o, "output_tokens", num_or_null(e->output_tokens));
    json_object_set_new(o, "requests", num_or_null(e->requests));
    json_object_set_new(o, "j_per_output_token", num_or_null(e->j_per_output_token));
    json_object_set_new(o, "j_per_request", num_or_null(e->j_per_request));
    json_object_set_new(o, "output_tokens_per_j", num_or_null(e->output_tokens_per_j));
    json_object_set_new(o, "cost_per_hour", num_or_null(e->cost_per_hour));
    json_object_set_new(o, "cost_per_m_output_tokens", num_or_null(e->cost_per_m_output_tokens));
    json_object_set_new(o, "gpu_util_mean_pct", num_or_null(e->util_mean_pct));
    json_object_set_new(o, "sm_clock_mean_mhz", num_or_null(e->sm_clock_mean_mhz));
    json_object_set_new(o, "gr_engine_active_mean", num_or_null(e->gr_active_mean));
    json_object_set_new(o, "fb_used_max_mib", num_or_null(e->mem_used_max_mib));
    return o;
}
