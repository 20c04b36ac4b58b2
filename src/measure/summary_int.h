/* summary_int.h: what summary.c (the summary for people) and summary_json.c
 * (summary.json) share, so that the terminal and the JSON read one table
 * of rows and percentiles; private to src/measure. summary.c defines
 * everything declared here. */
#ifndef LL_SUMMARY_INT_H
#define LL_SUMMARY_INT_H

#include <stddef.h>
#include <stdint.h>

#include "measure/hist.h"
#include "measure/stats.h"

/* One latency row: the printed table's and summary.json's latency_ns. */
struct summary_row {
    const char *label;    /* printed */
    const char *key;      /* summary.json latency_ns key */
    size_t offset;        /* of the struct hist * in struct stats */
    int only_if_nonempty; /* skip the printed row when it has no values */
    int stream_only;      /* a figure of streamed output: not printed for
                           * embeddings (stats_embeddings), which have none */
};

/* One percentile column. */
struct summary_pct {
    double pct;
    const char *label; /* column heading */
    const char *key;   /* JSON key */
};

/* The rows and the percentile columns, in their order (the sizes are
 * checked against the definitions in summary.c). */
#define SUMMARY_N_ROWS 10
#define SUMMARY_N_PCTS 5
extern const struct summary_row summary_rows[SUMMARY_N_ROWS];
extern const struct summary_pct summary_pcts[SUMMARY_N_PCTS];

/* The histogram of s that row reads (borrowed from s). */
const struct hist *summary_row_hist(const struct stats *s, const struct summary_row *row);

/* count / window in 1/s, NAN when there is no window. */
double summary_rate(double count, uint64_t window_ns);

/* The rate the load intended, req/s: the offered rate of an open loop
 * (or sessions, replay), users / pace of a paced closed loop; 0 when
 * there is none (an unpaced closed loop). */
double summary_intended_rate(const struct summary_info *info);

/* sum_ns / n, NAN when n is 0. */
double summary_mean_ns(uint64_t sum_ns, uint64_t n);

/* Little's law's side from sent: the completion rate over the window w
 * (ns) times the mean time a record spent in flight after its send, a
 * record never sent (client_dropped) counting 0, so that the rate and the
 * mean are over the same records, as the E2E side's are. Requests in
 * flight; NAN when there is no window or no record. */
double summary_littles_law_service(const struct stats *s, uint64_t w);

#endif
