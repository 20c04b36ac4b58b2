/* mergeserver.h: the server's view of a merged run for `llmload merge`
 * (report/runmerge.h's runmerge_server_fn): the scraping shard's
 * server_metrics.jsonl read back (metrics/scrapeline.h) and joined to the
 * merged window, printed and returned as summary.json's "server", with
 * the GPU telemetry's energy per token and request of the merged run. */
#ifndef LL_MERGESERVER_H
#define LL_MERGESERVER_H

#include <jansson.h>
#include <stdio.h>

#include "report/runmerge.h"

/* See runmerge_server_fn. */
json_t *merge_server_join(const struct runmerge_window *w, FILE *out, json_t **energy);

#endif
