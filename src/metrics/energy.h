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
    double max_power_w;        /* the largest scraped power (NAN: none, or under
                                  98% of mean_power_w: the scrapes missed the peaks) */
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
    size_t exporters; /* energy_figures_combine: parts combined */
    size_t missing;   /* ...of which had no figure (then present is 0) */
    /* Seconds of the window the energy's span covers, and whether that is
     * short of the window by more than ENERGY_SLACK_STEPS of the source's
     * scrape interval at either end (a source that failed or stopped
     * partway): then the energy is not the window's, and the per-token,
     * per-request and per-joule figures are NAN (withheld). NAN and 0
     * when the join gave no window. */
    double covered_s;
    int partial;
};

/* A span that misses more than this many of its source's scrape
 * intervals at either end of the window does not cover it. One interval
 * is what an interrupted run's last scrape may miss; half more for the
 * scrapes' own timing. */
#define ENERGY_SLACK_STEPS 1.5

/* Compute the figures from the join j (join_rc: what scrape_join
 * returned), the client's output tokens and ok requests over the window,
 * the window's length (s) and the price of an hour of the GPUs (NAN:
 * none). out->present is 0 when neither the counter nor two power
 * samples cover the span; out->partial is 1 when they cover only part of
 * the window, and the figures divided by the client's counts are then
 * NAN. */
void energy_figures_compute(const struct scrape_join *j, int join_rc, double output_tokens,
                            double requests, double window_s, double cost_per_hour,
                            struct energy_figures *out);

/* The figures of n >= 1 exporters (several --gpu-metrics URLs: the GPUs
 * of several machines) as one: energies, GPUs, gaps, mean and max powers
 * and memory summed (the max power is the sum of each exporter's max, an
 * upper bound of the total's), spans the longest, utilisation, clock and
 * activity the means weighted by GPUs, and the per-token figures again
 * from the sum. Present only when every part is: an exporter with no
 * figure would make the sum too small (out->missing counts them); partial
 * when any part is, covered_s the least part's. All parts must share
 * output_tokens, requests, window_s and cost_per_hour. */
void energy_figures_combine(const struct energy_figures *parts, size_t n,
                            struct energy_figures *out);

/* A few lines under an "energy" heading: one line per GPU scraper of s[0,
 * n) (its URL and counts), then e's figures. */
void energy_print(FILE *f, const struct energy_figures *e, struct scraper *const *s, size_t n);

/* summary.json's "energy" object over the scrapers s[0, n); the caller
 * owns it. */
json_t *energy_json(const struct energy_figures *e, struct scraper *const *s, size_t n);

/* energy_print and energy_json with the scrapers' URLs and counts given
 * as src[0, n) (a merge reads them from the scraping shard's files). */
void energy_print_sources(FILE *f, const struct energy_figures *e, const struct scrape_source *src,
                          size_t n);
json_t *energy_json_sources(const struct energy_figures *e, const struct scrape_source *src,
                            size_t n);

#endif
