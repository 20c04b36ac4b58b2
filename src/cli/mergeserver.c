/* mergeserver.c: the server's view of a merged run (see mergeserver.h).
 * The report layer merges the records; joining a series is the metrics
 * layer's, so `llmload merge` lends this join to runmerge_dirs. */
#include "cli/mergeserver.h"

#include <math.h>
#include <stdint.h>

#include "metrics/scrape.h"
#include "metrics/scrapeline.h"
#include "util/util.h"

static uint64_t ju(const json_t *o, const char *k)
{
    const json_t *v = json_object_get(o, k);
    return json_is_integer(v) && json_integer_value(v) > 0 ? (uint64_t)json_integer_value(v) : 0;
}

/* The run's own join (cmd_run.c's run_server_join) over the scraping
 * shard's series: [origin, origin + end_ns], SCRAPE_SPAN_OUTER, each
 * figure beside the merged records'. */
json_t *merge_server_join(const struct runmerge_window *w, FILE *out)
{
    char path[4400], err[4600];
    snprintf(path, sizeof path, "%s/server_metrics.jsonl", w->dir);
    struct scrape_series srv;
    scrape_series_init(&srv);
    int rc = scrape_file_load(path, &srv, NULL, err, sizeof err);
    if (rc != 0) {
        ll_errorf("warning: merge: the server's view left out: %s", err);
        scrape_series_reset(&srv);
        return NULL;
    }
    const char *url = json_string_value(json_object_get(w->server, "url"));
    struct scrape_source src = {url ? url : "", ju(w->server, "scrapes"), ju(w->server, "failed"),
                                ju(w->server, "origin_monotonic_ns")};
    struct scrape_join j;
    int jrc = scrape_series_join(&srv, src.origin_abs_ns, src.origin_abs_ns + w->end_ns,
                                 SCRAPE_SPAN_OUTER, &j);
    struct scrape_client c = {w->ttft_sent_p50_s, w->ttft_sent_p99_s, w->output_tokens,
                              w->prompt_tokens,   w->cached_tokens,   w->completed_ok};
    if (out)
        scrape_join_print_source(out, &j, jrc, &c, &src);
    json_t *o = scrape_join_json_source(&j, jrc, &c, &src);
    scrape_series_reset(&srv);
    return o;
}
