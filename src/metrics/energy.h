/* energy.h: energy per token and per request over a window, from the GPU
 * telemetry a scraper joined to it (scrape_join's gpu_* fields).
 *
 * The energy is the counter's increase over the join's span where the
 * exporter has one (DCGM_FI_DEV_TOTAL_ENERGY_CONSUMPTION), else the power
 * integrated over the span (trapezoid; the gaps it bridged are counted
 * and printed beside it). docs/server-metrics.md states the rules. */
#ifndef LL_ENERGY_H
#define LL_ENERGY_H

#include <jansson.h>
#include <stdio.h>

#include "metrics/scrape.h"

struct energy_figures {
    int present;        /* 1: an energy figure exists; the rest hold */
    const char *source; /* "energy_counter" or "power_integral" (static) */
    double energy_j;    /* joules over the span */
    double span_s;      /* seconds the energy covers */
    size_t gaps;        /* power_integral: scrapes bridged */
    unsigned gpus;
    double mean_power_w;       /* energy_j / span_s, all GPUs */
    double max_power_w;        /* the largest scraped power (NAN: none) */
    double output_tokens;      /* the client's, over the window */
    double requests;           /* the client's ok requests */
    double j_per_output_token; /* NAN when there is no token */
    double j_per_request;      /* NAN when no request succeeded */
    double output_tokens_per_j;
    double cost_per_hour;            /* --cost-per-hour, NAN: not given */
    double window_s;                 /* the run's window, for the cost */
    double cost_per_m_output_tokens; /* cost_per_hour * window_s / 3600 per 1e6 tokens; NAN */
    /* Mean utilisation (%), SM clock (MHz), engine activity (0..1), max
     * memory used (MiB, summed over GPUs): NAN when not scraped. */
    double util_mean_pct, sm_clock_mean_mhz, gr_active_mean, mem_used_max_mib;
};

/* Compute the figures from the join j (join_rc: what scrape_join
 * returned), the client's output tokens and ok requests over the window,
 * the window's length (s) and the price of an hour of the GPUs (NAN:
 * none). out->present is 0 when neither the counter nor two power
 * samples cover the span. */
void energy_figures_compute(const struct scrape_join *j, int join_rc, double output_tokens,
                            double requests, double window_s, double cost_per_hour,
                            struct energy_figures *out);

/* A few lines under an "energy" heading. s is the GPU scraper (for its
 * URL and counts). */
void energy_print(FILE *f, const struct energy_figures *e, const struct scraper *s);

/* summary.json's "energy" object; the caller owns it. */
json_t *energy_json(const struct energy_figures *e, const struct scraper *s);

#endif
