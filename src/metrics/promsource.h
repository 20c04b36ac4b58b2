/* promsource.h: server metrics (and GPU telemetry) read from a Prometheus
 * HTTP API instead of the server's own /metrics: --prometheus URL.
 *
 * A scraper whose points come from queries: every interval (and once
 * after the run's end) one instant query of the raw series the engine
 * map knows (promapi.h), with the selector's matchers; the answer is
 * written back out as Prometheus text, once for all the series (the
 * aggregate: gauges and counters summed over replicas, KV usage their
 * maximum, TTFT buckets summed by le) and once per replica (grouped by
 * the --prometheus-by label), and each goes through scrape.c's path. So
 * the joins, the summary, the report and the sweep read the aggregate
 * exactly as a direct scrape's, and each line of server_metrics.jsonl
 * carries "source": "prometheus" and its replicas' own figures. A failed
 * query (unreachable, 4xx/5xx, a timeout, a selector that matches
 * nothing) is a warning, once, and a counted gap. A line is a point in
 * time, its data's (the question's time less the age of the oldest latest
 * sample; dur_ns 0), and its query_ns is the question's wall time. A
 * failed query's line, which has no data, is dated at its question, or at
 * the next good line's data time when that is earlier (it is written
 * then), so a failure never moves a good line's date. A stop signal
 * (the cancel_fd given) ends the end's wait for Prometheus at once.
 * Request headers (--prometheus-header) are sent with each query and
 * never printed. */
#ifndef LL_PROMSOURCE_H
#define LL_PROMSOURCE_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include <jansson.h>

#include "metrics/scrape.h"

/* The most replicas a line names (the aggregate counts every one). */
#define PROMSOURCE_MAX_REPLICAS 256

struct promsource_config {
    const char *url;            /* --prometheus, the API's base URL; borrowed */
    const char *inner;          /* the selector's matchers without braces ("" none) */
    const char *by;             /* --prometheus-by; NULL: "pod", else "instance" */
    const char *const *headers; /* "Name: value", n_headers of them; borrowed */
    size_t n_headers;
    uint64_t interval_ns; /* between queries, >= SCRAPE_MIN_INTERVAL_NS */
    int gpu;              /* 1: the DCGM_FI_* names, into a GPU scraper */
    int quiet;            /* 1: no warning on stderr */
    int quiet_notes;      /* 1: no note on stderr (the end's long wait) */
    const char *cacert;   /* the run's --cacert, NULL: the system's CAs; borrowed */
    int insecure;         /* the run's --insecure: no certificate check */
};

/* A scraper fed by queries (see above), its lines appended to
 * dir/server_metrics.jsonl (truncated first when truncate is 1). Asks
 * once now, on the calling thread (abandoned when cancel_fd, or -1, is
 * readable): a failure warns and counts. scraper_start starts the
 * thread; scraper_stop asks once more and ends it (its wait for
 * Prometheus and its questions abandoned when cancel_fd is readable; no
 * wait at all when the run was interrupted, scraper_stop_at);
 * scraper_free frees.
 * With cfg->gpu, a first answer with no DCGM series at all makes it
 * return NULL with a note (no GPU telemetry behind that selector).
 * Returns NULL with a warning when the file cannot be opened. */
struct scraper *promsource_open(const struct promsource_config *cfg, const char *dir, int truncate,
                                int cancel_fd);

/* One replica's figures over a window: its own series joined as a
 * direct scrape's (rc is scrape_series_join's). */
struct promsource_replica {
    char name[128]; /* the by-label's value */
    int rc;
    struct scrape_join j;
};

/* What a run's Prometheus figures lag by. */
struct promsource_staleness {
    double interval_s; /* Prometheus's scrape interval as last seen; NAN */
    double max_age_s;  /* the oldest data an answer held, s; NAN: no answer */
    char by[128];      /* the label replicas were told apart by */
};

/* For a scraper made by promsource_open (server or GPU): each replica's
 * own series joined to [t0, t1] over span, into out[0, max) in order of
 * first answer, and the staleness into *st (may be NULL). Returns how
 * many; 0 for any other scraper (or NULL). Thread-safe. */
size_t promsource_replicas_join(const struct scraper *s, uint64_t t0_abs_ns, uint64_t t1_abs_ns,
                                enum scrape_span span, struct promsource_replica *out, size_t max,
                                struct promsource_staleness *st);

/* The most replicas promsource_join_sum sums (more: the aggregate stands). */
#define PROMSOURCE_MAX_JOIN 64

/* For a scraper made by promsource_open: replace the counters' increases
 * in j (a join of its aggregate series over the same window) by the sum
 * of the replicas' own, each replica's dated by its own scrape, so that
 * the window's ends hold exactly what each replica did in it (the
 * aggregate's lines mix replicas scraped at different moments). Returns 1
 * when it did; 0, j untouched, for another scraper or when some replica
 * had no span, there are more than PROMSOURCE_MAX_JOIN, or an answer had a
 * series without the by-label (in the aggregate, in no replica). */
int promsource_join_sum(const struct scraper *s, uint64_t t0_abs_ns, uint64_t t1_abs_ns,
                        enum scrape_span span, struct scrape_join *j);

/* One line naming the routing imbalance into buf (len bytes) and 1 when
 * some replica queued (mean waiting >= 1) while another idled (mean
 * waiting under a tenth of that); else 0 and "". */
int promsource_imbalance(const struct promsource_replica *r, size_t n, char *buf, size_t len);

/* The replicas' lines under the server figures (count, staleness, per
 * replica mean and max waiting, mean running, generated tokens, and the
 * imbalance finding), and summary.json's "replicas" object of the same.
 * Nothing / NULL when n is 0. */
void promsource_replicas_print(FILE *f, const struct promsource_replica *r, size_t n,
                               const struct promsource_staleness *st);
json_t *promsource_replicas_json(const struct promsource_replica *r, size_t n,
                                 const struct promsource_staleness *st);

#endif
