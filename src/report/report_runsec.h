/* report_runsec.h: hist.jsonl of one run read down to what its page
 * draws per second (report_run.c's charts over time).
 *
 * A run of an hour has 3,600 seconds, each line of a worker's second two
 * histograms of about 42 KiB once parsed; keeping them all to the end took
 * 310 MB for an hour of 8 workers and projected 7 GB for the day
 * RUN_SECONDS_MAX allows. So each bucket is reduced to its p50, p99 and
 * counts as soon as its lines are in, and only a ring of
 * RUN_SECONDS_RING open buckets holds histograms. */
#ifndef LLMLOAD_REPORT_RUNSEC_H
#define LLMLOAD_REPORT_RUNSEC_H

#include <stddef.h>
#include <stdint.h>

/* The most seconds of hist.jsonl read: a day. A window past it is left
 * out. */
#define RUN_SECONDS_MAX 86400

/* The most points a chart over time draws: a longer run's seconds are
 * added together k at a time (their histograms merged, so each bucket's
 * percentiles are exact to the histogram's 0.4%). */
#define RUN_SECONDS_POINTS 1000

/* Buckets that keep their histograms open for lines still to come. The
 * workers write a second's line when their clock passes its end (at the
 * latest within a flush interval), so lines of one second lie close
 * together in the file; a line for a bucket older than the ring (a worker
 * starved for RUN_SECONDS_RING buckets) still counts in ok and failed,
 * and its histograms are left out and counted in late_lines. */
#define RUN_SECONDS_RING 16

/* The buckets of a run: bucket i is seconds [i k, (i + 1) k) of the run. */
struct run_seconds {
    size_t k;                          /* seconds per bucket, >= 1 */
    size_t n;                          /* buckets, 0 .. the last with a line */
    size_t n_seconds;                  /* seconds 0 .. the last with a line */
    double *ok, *failed;               /* n each: records that ended ok / otherwise */
    unsigned char *seen;               /* n: 1 when a line fell in the bucket */
    double *ttft_p50_ns, *ttft_p99_ns; /* n each; NAN when nothing counted */
    double *tpot_p50_ns, *tpot_p99_ns;
    uint64_t late_lines; /* lines whose histograms came after their bucket closed */
    uint64_t bad_lines;  /* lines that were not a run's window (unreadable, a step's) */
};

/* Read hist.jsonl at path into *s (which it initialises). A missing file
 * is no buckets; a line that is not a run's window (unreadable, a sweep
 * step's, a time out of range) is skipped and counted. Memory is the
 * ring's 2 x RUN_SECONDS_RING histograms plus a few doubles per bucket.
 * Undo with run_seconds_free. Aborts on out of memory. */
void run_seconds_load(const char *path, struct run_seconds *s);

/* Free what run_seconds_load made. Safe on a zeroed struct. */
void run_seconds_free(struct run_seconds *s);

#endif
