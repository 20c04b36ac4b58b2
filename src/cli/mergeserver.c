/* mergeserver.c: the server's view of a merged run (see mergeserver.h).
 * The report layer merges the records; joining a series is the metrics
 * layer's, so `llmload merge` lends this join to runmerge_dirs. */
#include "cli/mergeserver.h"

#include <math.h>
#include <stdint.h>

#include "cli/runsetup.h"
#include "metrics/energy.h"
#include "metrics/scrape.h"
#include "metrics/scrapeline.h"
#include "util/util.h"

static uint64_t ju(const json_t *o, const char *k)
{
    const json_t *v = json_object_get(o, k);
    return json_is_integer(v) && json_integer_value(v) > 0 ? (uint64_t)json_integer_value(v) : 0;
}

/* The GPU sources summary.json's energy names ("urls", or "url" before
 * it had them), at most RUN_SETUP_MAX_GPU, into urls; their count. */
static size_t energy_urls(const json_t *energy, const char **urls)
{
    const json_t *a = json_object_get(energy, "urls");
    size_t n = 0;
    for (size_t i = 0; i < json_array_size(a) && n < RUN_SETUP_MAX_GPU; i++)
        if (json_is_string(json_array_get(a, i)))
            urls[n++] = json_string_value(json_array_get(a, i));
    if (n == 0)
        urls[n++] = json_is_string(json_object_get(energy, "url"))
                        ? json_string_value(json_object_get(energy, "url"))
                        : "";
    return n;
}

/* The GPU telemetry over the window, as run_setup_energy computes a
 * run's: each source's own lines (their "url") joined on their own, its
 * figures divided by the merged run's tokens and requests, then summed
 * (energy_figures_combine). A source with no line in the file has no
 * figure (the combined energy then has none, "missing" says how many).
 * One source takes the file's one source whatever its "url" (files
 * written before GPU lines had one), and its counts from summary.json,
 * as before; several take their counts from their lines. */
static json_t *energy_view(const struct runmerge_window *w, const struct scrape_file_gpus *gpus,
                           FILE *out)
{
    const json_t *cost = json_object_get(w->energy, "cost_per_hour");
    const char *urls[RUN_SETUP_MAX_GPU];
    size_t n = energy_urls(w->energy, urls);
    struct scrape_source src[RUN_SETUP_MAX_GPU];
    struct energy_figures parts[RUN_SETUP_MAX_GPU], e;
    for (size_t i = 0; i < n; i++) {
        const struct scrape_file_gpu *g = scrape_file_gpus_find(gpus, urls[i]);
        if (!g && n == 1 && gpus->n == 1)
            g = &gpus->v[0];
        src[i] = (struct scrape_source){urls[i], 0, 0, w->origin_abs_ns};
        if (n == 1) {
            src[i].scrapes = ju(w->energy, "scrapes");
            src[i].failed = ju(w->energy, "failed");
        } else if (g) {
            src[i].scrapes = g->lines;
            src[i].failed = g->failed;
        }
        struct scrape_join j;
        int rc = g ? scrape_series_join(&g->series, w->origin_abs_ns, w->origin_abs_ns + w->end_ns,
                                        SCRAPE_SPAN_OUTER, &j)
                   : LL_E_NOTFOUND;
        energy_figures_compute(&j, rc, w->energy_tokens, w->energy_requests,
                               (double)w->end_ns / 1e9,
                               json_is_number(cost) ? json_number_value(cost) : NAN, &parts[i]);
    }
    energy_figures_combine(parts, n, &e);
    if (out)
        energy_print_sources(out, &e, src, n);
    return energy_json_sources(&e, src, n);
}

/* The run's own join (cmd_run.c's run_server_join) over the scraping
 * shard's series: [origin, origin + end_ns], SCRAPE_SPAN_OUTER, each
 * figure beside the merged records'; then its energy. */
json_t *merge_server_join(const struct runmerge_window *w, FILE *out, json_t **energy)
{
    char path[4400], err[4600];
    *energy = NULL;
    snprintf(path, sizeof path, "%s/server_metrics.jsonl", w->dir);
    struct scrape_series srv;
    struct scrape_file_gpus gpus = {0};
    scrape_series_init(&srv);
    json_t *o = NULL;
    if (scrape_file_load(path, &srv, &gpus, err, sizeof err) != 0) {
        if (w->rebuild)
            ll_errorf("warning: report: the server's view and energy not printed (summary.json "
                      "keeps the merge's): %s",
                      err);
        else
            ll_errorf("warning: merge: the server's view and energy left out: %s", err);
        goto out;
    }
    if (w->server) {
        const char *url = json_string_value(json_object_get(w->server, "url"));
        struct scrape_source src = {url ? url : "", ju(w->server, "scrapes"),
                                    ju(w->server, "failed"), w->origin_abs_ns};
        struct scrape_join j;
        scrape_series_set_model(&srv, json_string_value(json_object_get(w->server, "model")));
        int jrc = scrape_series_join(&srv, w->origin_abs_ns, w->origin_abs_ns + w->end_ns,
                                     SCRAPE_SPAN_OUTER, &j);
        struct scrape_client c = {w->ttft_sent_p50_s, w->ttft_sent_p99_s,     w->output_tokens,
                                  w->prompt_tokens,   w->cached_tokens,       w->completed_ok,
                                  w->failed_started,  w->failed_output_tokens};
        if (out)
            scrape_join_print_source(out, &j, jrc, &c, &src);
        o = scrape_join_json_source(&j, jrc, &c, &src);
    }
    if (w->energy)
        *energy = energy_view(w, &gpus, out);
out:
    scrape_series_reset(&srv);
    scrape_file_gpus_reset(&gpus);
    return o;
}
