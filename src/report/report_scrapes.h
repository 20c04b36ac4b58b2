/* report_scrapes.h: server_metrics.jsonl read for the pages' charts over
 * time: the server's scrapes (its queue, batch and KV cache, each
 * --prometheus replica's queue) and the GPU telemetry of --gpu-metrics /
 * --gpu-sampler. The sweep's page (report_build.c) and the run's
 * (report_run.c) read the file with it, so both draw the same series. */
#ifndef LL_REPORT_SCRAPES_H
#define LL_REPORT_SCRAPES_H

#include <stddef.h>

#include "report/report_html.h"

/* The series of one server_metrics.jsonl. Everything is owned here and
 * freed by report_scrapes_free. */
struct report_scrapes {
    struct report_server_sample *server; /* n_server ok scrapes, time order */
    size_t n_server;
    struct report_gpu_sample *gpu; /* n_gpu GPU scrapes, each source's in time order */
    size_t n_gpu, cap_gpu;
    char **gpu_sources; /* n_gpu_sources names, each once */
    size_t n_gpu_sources;
    char **replicas; /* n_replicas --prometheus replica names, at most
                                          * REPORT_MAX_REPLICAS, in order of first scrape */
    size_t n_replicas;
};

/* Read the ok scrapes of the file at path into *sc, times in s since the
 * run's start (a scrape's middle; the baseline scrape before the start at
 * 0). A missing file is no series; an unreadable line is skipped (a
 * scrape is a cross-check, never a reason to fail the report). A
 * server's scrape earlier than the one before it is dropped. Free with
 * report_scrapes_free, whatever it read. */
void report_scrapes_load(const char *path, struct report_scrapes *sc);

/* Point r's server, replica and GPU fields at sc's series (borrowed: sc
 * outlives r's use). */
void report_scrapes_lend(const struct report_scrapes *sc, struct report *r);

void report_scrapes_free(struct report_scrapes *sc);

#endif
