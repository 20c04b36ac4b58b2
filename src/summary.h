/* summary.h: what `llmload run` prints at the end of a load point, and the
 * same figures as summary.json.
 *
 * The terminal summary follows h2load's shape: totals first, then one row
 * per latency with its percentiles and count, then throughput. Every figure
 * printed is also in summary.json, in integer nanoseconds or plain counts
 * (docs/formats.md documents the schema). */
#ifndef LL_SUMMARY_H
#define LL_SUMMARY_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include <jansson.h>

#include "stats.h"

/* The schema name written as summary.json's "schema". Bumped on any change
 * that could break a reader (a removed or retyped field). */
#define SUMMARY_SCHEMA "llmload.summary/1"

/* Facts about the run that the stats cannot know; the driver fills it.
 * Strings are borrowed and may be NULL (printed as "-", written as null). */
struct summary_info {
    const char *mode;           /* "open-loop poisson", "closed-loop", "capped (max-concurrency 8)" */
    int closed_loop;            /* 1: every output carries the CLOSED LOOP label */
    double offered_rate_per_s;  /* req/s, intended rate; 0 for closed loop */
    uint64_t window_ns;         /* ns, measurement window (rates divide by it) */
    uint64_t warmup_ns;         /* ns, discarded warm-up before the window */
    double inflight_mean;       /* requests, time-weighted mean in flight (driver) */
    double inflight_max;        /* requests, most in flight at once (driver) */
    int invalid;                /* 1: generator-bound run, figures not trustworthy */
    char invalid_reason[256];   /* why, when invalid */
    const char *target_url;
    const char *model;
    const char *version;
    uint64_t seed;
    int interrupted;            /* 1: stopped by a signal, partial results */
    uint64_t records_written;   /* lines in requests.jsonl */
    const char *slo;            /* canonical SLO spec, NULL when none: goodput is printed */
};

/* Print the human summary of s to f (see the layout in summary.c). Plain
 * text, no colours, lines under 100 columns. Empty histograms print "-". */
void summary_print(FILE *f, const struct stats *s,
                   const struct summary_info *info);

/* Build the summary.json object of s and info (schema SUMMARY_SCHEMA).
 * Caller owns the reference (json_decref). Aborts on out of memory. */
json_t *summary_json(const struct stats *s, const struct summary_info *info);

/* Write summary_json(s, info) to path atomically (path.tmp, then rename).
 * Returns 0, or LL_E_IO / LL_E_RANGE with the reason in err (errlen bytes). */
int summary_write_json(const char *path, const struct stats *s,
                       const struct summary_info *info, char *err,
                       size_t errlen);

#endif
