/* energy.c: energy figures from a GPU telemetry join. */
#include "metrics/energy.h"

#include <math.h>
#include <string.h>

static double gauge_mean(const struct scrape_gauge *g)
{
    return g->present ? g->mean : NAN;
}

static double ratio(double a, double b)
{
    return isfinite(a) && isfinite(b) && b > 0 ? a / b : NAN;
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
    out->mean_power_w = out->cost_per_m_output_tokens = NAN;
    if (join_rc != 0 || !j)
        return;
    double span_s = j->span_to_abs_ns > j->span_from_abs_ns
                        ? (double)(j->span_to_abs_ns - j->span_from_abs_ns) / 1e9
                        : 0;
    if (j->gpu_energy.present && span_s > 0) {
        out->source = "energy_counter";
        out->energy_j = j->gpu_energy.delta;
        out->span_s = span_s;
    } else if (j->power_integral_present && j->power_s > 0) {
        out->source = "power_integral";
        out->energy_j = j->power_integral_j;
        out->span_s = j->power_s;
        out->gaps = j->power_gaps;
    } else {
        return;
    }
    out->present = 1;
    out->gpus = j->gpus;
    out->mean_power_w = out->energy_j / out->span_s;
    out->max_power_w = j->gpu_power.present ? j->gpu_power.max : NAN;
    out->j_per_output_token = ratio(out->energy_j, output_tokens);
    out->j_per_request = ratio(out->energy_j, requests);
    out->output_tokens_per_j = ratio(output_tokens, out->energy_j);
    out->cost_per_m_output_tokens = ratio(cost_per_hour * window_s / 3600.0 * 1e6, output_tokens);
    out->util_mean_pct = gauge_mean(&j->gpu_util);
    out->sm_clock_mean_mhz = gauge_mean(&j->gpu_sm_clock);
    out->gr_active_mean = gauge_mean(&j->gpu_gr_active);
    out->mem_used_max_mib = j->gpu_mem_used.present ? j->gpu_mem_used.max : NAN;
}

void energy_print(FILE *f, const struct energy_figures *e, const struct scraper *s)
{
    uint64_t n = 0, failed = 0;
    scraper_counts(s, &n, &failed);
    fprintf(f, "energy (%s): %llu scrapes, %llu failed (gaps)\n", scraper_url(s),
            (unsigned long long)n, (unsigned long long)failed);
    if (!e->present) {
        fprintf(f, "  no energy counter or power series over the run\n");
        return;
    }
    fprintf(f, "  energy               %.1f J over %.2f s, %u GPU%s, from the %s", e->energy_j,
            e->span_s, e->gpus, e->gpus == 1 ? "" : "s",
            strcmp(e->source, "energy_counter") == 0 ? "energy counter" : "power series");
    if (strcmp(e->source, "power_integral") == 0)
        fprintf(f, " (trapezoid, %zu gap%s bridged)", e->gaps, e->gaps == 1 ? "" : "s");
    fputc('\n', f);
    fprintf(f, "  power                mean %.1f W", e->mean_power_w);
    if (isfinite(e->max_power_w))
        fprintf(f, "  max %.1f W", e->max_power_w);
    fputc('\n', f);
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

json_t *energy_json(const struct energy_figures *e, const struct scraper *s)
{
    uint64_t n = 0, failed = 0;
    scraper_counts(s, &n, &failed);
    json_t *o = json_object();
    json_object_set_new(o, "url", json_string(scraper_url(s)));
    json_object_set_new(o, "scrapes", json_integer((json_int_t)n));
    json_object_set_new(o, "failed", json_integer((json_int_t)failed));
    json_object_set_new(o, "present", json_boolean(e->present));
    if (!e->present)
        return o;
    json_object_set_new(o, "source", json_string(e->source));
    json_object_set_new(o, "gpus", json_integer(e->gpus));
    json_object_set_new(o, "energy_j", json_real(e->energy_j));
    json_object_set_new(o, "span_s", json_real(e->span_s));
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
