/* mergeserver.c: the server's view of a merged run (see mergeserver.h).
 * The report layer merges the records; joining a series is the metrics
 * layer's, so `llmload merge` lends this join to runmerge_dirs. */
#include "cli/mergeserver.h"

#include <math.h>
#include <stdint.h>

#include "metrics/energy.h"
#include "metrics/scrape.h"
#include "metrics/scrapeline.h"
#include "util/util.h"

static uint64_t ju(const json_t *o, const char *k)
{
    const json_t *v = json_object_get(o, k);
    return json_is_integer(v) && json_integer_value(v) > 0 ? (uint64_t)json_integer_value(v) : 0;
}

/* The GPU telemetry over the window, as run_setup_energy computes a
 * run's from one exporter, its URL and counts the scraping shard's. */
static json_t *energy_view(const struct runmerge_window *w, const struct scrape_series *gpu,
                           FILE *out)
{
    const json_t *cost = json_object_get(w->energy, "cost_per_hour");
    const char *url = json_string_value(json_object_get(w->energy, "url"));
    struct scrape_source src = {url ? url : "", ju(w->energy, "scrapes"), ju(w->energy, "failed"),
                                w->origin_abs_ns};
    struct scrape_join j;
    int rc = scrape_series_join(gpu, w->origin_abs_ns, w->origin_abs_ns + w->end_ns,
                                SCRAPE_SPAN_OUTER, &j);
    struct energy_figures e;
    energy_figures_compute(&j, rc, w->energy_tokens, w->energy_requests, (double)w->end_ns / 1e9,
                           json_is_number(cost) ? json_number_value(cost) : NAN, &e);
    if (out)
        energy_print_sources(out, &e, &src, 1);
    return energy_json_sources(&e, &src, 1);
}

/* The run's own join (cmd_run.c's run_server_join) over the scraping
 * shard's series: [origin, origin + end_ns], SCRAPE_SPAN_OUTER, each
 * figure beside the merged records'; then its energy. */
json_t *merge_server_join(const struct runmerge_window *w, FILE *out, json_t **energy)
{
    char path[4400], err[4600];
    *energy = NULL;
    snprintf(path, sizeof path, "%s/server_metrics.jsonl", w->dir);
    struct scrape_series srv, gpu;
    scrape_series_init(&srv);
    scrape_series_init(&gpu);
    json_t *o = NULL;
    if (scrape_file_load(path, &srv, &gpu, err, sizeof err) != 0) {
        ll_errorf("warning: merge: the server's view and energy left out: %s", err);
        goto out;
    }
    if (w->server) {
        const char *url = json_string_value(json_object_get(w->server, "url"));
        struct scrape_source src = {url ? url : "", ju(w->server, "scrapes"),
                                    ju(w->server, "failed"), w->origin_abs_ns};
        struct scrape_join j;
        int jrc = scrape_series_join(&srv, w->origin_abs_ns, w->origin_abs_ns + w->end_ns,
                                     SCRAPE_SPAN_OUTER, &j);
        struct scrape_client c = {w->ttft_sent_p50_s, w->ttft_sent_p99_s, w->output_tokens,
                                  w->prompt_tokens,   w->cached_tokens,   w->completed_ok};
        if (out)
            scrape_join_print_source(out, &j, jrc, &c, &src);
        o = scrape_join_json_source(&j, jrc, &c, &src);
    }
    if (w->energy)
        *energy = energy_view(w, &gpu, out);
out:
    scrape_series_reset(&srv);
    scrape_series_reset(&gpu);
    return o;
}
