/* scrapeline.h: server_metrics.jsonl read back (docs/server-metrics.md):
 * one line into the scrape point it was written from, and a whole file
 * into the server's series and one series per GPU telemetry source, on the scraping
 * process's monotonic clock. `llmload merge` joins a sharded run's
 * series to the merged window with these (cli/mergeserver.c), exactly as
 * the run joined its own in memory.
 *
 * A line keeps what the join uses: the start (mono_ns) and length
 * (dur_ns) of the GET, ok, the engine, each mapped meaning, each engine
 * counter's label sets ("series"), the GPU count and the TTFT histogram. It does not keep the KV cache's capacity
 * (kv_capacity_tokens is NAN), which no joined figure prints. */
#ifndef LL_SCRAPELINE_H
#define LL_SCRAPELINE_H

#include <stddef.h>
#include <stdint.h>

#include "metrics/scrape.h"

/* Parse one line (len bytes, need not be NUL-terminated; no newline) into
 * *p (released by the caller with scrape_point_reset, also after an
 * error). *gpu gets 1 for a line of GPU telemetry ("source": "gpu"), 0
 * for the server's. url (url_len bytes, NUL-terminated; NULL: not
 * wanted) gets a GPU line's "url", the source it came from (a
 * --gpu-metrics URL, "nvidia-smi", a --prometheus URL), cut to fit; ""
 * for a server's line or one without it (files written before
 * 2026-12-02). Returns 0, or LL_E_PROTO with a reason naming the field
 * in err: not a JSON object, a missing or negative mono_ns or dur_ns, an
 * unknown engine, a meaning that is not a number, a TTFT histogram whose
 * bounds do not ascend or whose counts do not match them or that has
 * more than PROM_HIST_MAX_BUCKETS buckets, a "url" that is not a string.
 * No I/O. */
int scrape_line_parse(const char *line, size_t len, struct scrape_point *p, int *gpu, char *url,
                      size_t url_len, char *err, size_t errlen);

/* One GPU telemetry source's lines of a server_metrics.jsonl: the lines
 * of one "url", in a series of their own (two exporters' counters in one
 * series would be joined as one counter's). */
struct scrape_file_gpu {
    char *url;                   /* the lines' "url" ("" for none); owned */
    struct scrape_series series; /* its lines, in order */
    uint64_t lines, failed;      /* lines read, and those with "ok": false */
};

/* The GPU sources of a file, in the order their first lines came. */
struct scrape_file_gpus {
    struct scrape_file_gpu *v; /* n of them; owned */
    size_t n;
};

/* Free every source's URL and series; g is empty again ({0} is empty). */
void scrape_file_gpus_reset(struct scrape_file_gpus *g);

/* The source of g whose url is url, or NULL. */
const struct scrape_file_gpu *scrape_file_gpus_find(const struct scrape_file_gpus *g,
                                                    const char *url);

/* Read path (a server_metrics.jsonl) into srv (the server's lines) and
 * gpus (GPU telemetry, one series per source, appended to what it
 * holds); either may be NULL to skip those lines. Lines are kept in the
 * file's order of start time: one that starts before the last kept in
 * its series is skipped, as an empty line is. Returns 0; LL_E_NOTFOUND
 * when the file does not exist; LL_E_IO when it cannot be read,
 * LL_E_PROTO for a bad line, each with "PATH:LINE: reason" in err (the
 * series then hold the lines before it). */
int scrape_file_load(const char *path, struct scrape_series *srv, struct scrape_file_gpus *gpus,
                     char *err, size_t errlen);

#endif
