/* scrape_int.h: inside the metrics layer, a scraper whose points come from
 * somewhere other than HTTP GETs (smi.c's nvidia-smi sampler), kept,
 * counted, joined and written exactly as a DCGM exporter's scrapes. */
#ifndef LL_SCRAPE_INT_H
#define LL_SCRAPE_INT_H

#include <jansson.h>
#include <pthread.h>
#include <stddef.h>
#include <stdint.h>

#include "metrics/engines.h"

/* From scrape.h (not included: scrape.c includes this file). */
struct scraper;
struct scrape_point;
struct scrape_access;

/* A source's operations, called by the scraper's own functions. */
struct scraper_source {
    /* scraper_stop_at: take the last points (one after the run's end,
     * end_abs_ns on CLOCK_MONOTONIC), end the source's thread and process;
     * interrupted 1: a stop signal ended the run, wait for nothing newer
     * than the end. Called at most once before free. */
    void (*stop)(void *ud, uint64_t end_abs_ns, int interrupted);
    /* scraper_free: stop if not stopped, and free ud. */
    void (*free)(void *ud);
};

/* The GPU scraper of scraper_for_gpu without its probe: name stands for
 * the URL (printed, and summary.json's "url"), its lines appended to
 * dir/server_metrics.jsonl with "source": "gpu" (truncated first when
 * truncate is 1). NULL with a warning when the file cannot be opened. */
struct scraper *scraper_gpu_open(const char *name, uint64_t interval_ns, const char *dir,
                                 int truncate);

/* scraper_gpu_open for either kind: gpu 0 makes a server scraper (its
 * lines carry the engine's meanings; the file is the same), its scrapes
 * made with acc (NULL: zero; see struct scrape_access). */
struct scraper *scraper_open_as(const char *name, int gpu, uint64_t interval_ns, const char *dir,
                                int truncate, const struct scrape_access *acc);

/* The key of meaning m in a line of server_metrics.jsonl ("waiting",
 * "generation_tokens_total", "power_w", ...), or NULL for one no line
 * carries (the TTFT histogram has keys of its own). */
const char *scrape_meaning_key(enum engine_meaning m);

/* Make src (with ud) the scraper's source: scraper_start then only sets
 * the origin, scraper_stop calls src->stop, scraper_free src->free. */
void scraper_set_source(struct scraper *s, const struct scraper_source *src, void *ud);

/* The ud of s's source when it is ops (scraper_set_source), else NULL. */
void *scraper_source_of(const struct scraper *s, const struct scraper_source *ops);

/* Keep point p (taking its arrays; *p zeroed) as one scrape: counted (a
 * failed one when !p->ok, its line then carrying error), added to the
 * series, its line written (or held until the origin is known) with the
 * members of extra (owned: released here; NULL: none) added. Thread-safe;
 * points must come in order of start time. Prints no warning. */
void scraper_keep(struct scraper *s, struct scrape_point *p, json_t *extra, const char *error);

/* Initialise lock, and wake with its timed waits on CLOCK_MONOTONIC (as
 * scrape_tick_loop's and every source's); destroy both with
 * pthread_cond_destroy and pthread_mutex_destroy. */
void scrape_lock_init(pthread_mutex_t *lock, pthread_cond_t *wake);

/* End a source's thread th when *started: set *stop under lock, signal
 * wake, join th; *started becomes 0. Nothing when it is 0 already. */
void scrape_thread_end(pthread_mutex_t *lock, pthread_cond_t *wake, int *stop, pthread_t th,
                       int *started);

/* A source's thread: call once(ud) now and then every interval_ns (a
 * late call skips the ticks it missed), waiting on wake under lock, until
 * *stop (read under lock) is set. */
void scrape_tick_loop(pthread_mutex_t *lock, pthread_cond_t *wake, const int *stop,
                      uint64_t interval_ns, void (*once)(void *ud), void *ud);

/* When a scrape or query (what: "scrape", "query") failed after took_ns, at or past its timeout
 * timeout_ns (a slow /metrics, not a dead one), append to err (a
 * NUL-terminated reason of errlen bytes) what it took and a concrete
 * --metrics-interval: one whose timeout (80% of it, at most cap_ns) is
 * twice what the scrape took, rounded up to 100 ms; or, when even the
 * longest timeout cap_ns is not twice that, the interval that gives
 * cap_ns, or that no interval helps. Nothing when took_ns is under the
 * timeout (it failed for another reason). */
void scrape_slow_hint(const char *what, uint64_t took_ns, uint64_t timeout_ns, uint64_t cap_ns,
                      char *err, size_t errlen);

/* A JSON number, or "+Inf" / "-Inf" / "NaN" as a string (JSON has none). */
json_t *scrape_json_num(double v);

/* A whole number where the value is one (counters, gauges of requests),
 * so the file reads 12, not 12.0; else scrape_json_num. */
json_t *scrape_json_count(double v);

#endif
