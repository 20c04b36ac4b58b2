/* scrape.h: scrape a server's Prometheus /metrics during a run, keep the
 * series on the client's clock, write it to server_metrics.jsonl, and join
 * it to a window of the client's timeline (a run, or one sweep step).
 *
 * The scraper is its own thread with its own libcurl easy handle, so a
 * slow or dead metrics endpoint never touches the load workers. A scrape
 * that fails or returns garbage is a warning (printed once) and a counted
 * gap, never a failed run.
 *
 * Every scrape is stamped twice on CLOCK_MONOTONIC (ll_now_ns): when the
 * GET started and when its body ended. The server rendered the page
 * somewhere in between; the join takes the midpoint as the scrape's time.
 * The file format and the join's rules are in docs/server-metrics.md. */
#ifndef LL_SCRAPE_H
#define LL_SCRAPE_H

#include <jansson.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "metrics/engines.h"
#include "metrics/prom.h"

#define SCRAPE_DEFAULT_INTERVAL_NS (1000ULL * 1000 * 1000)
#define SCRAPE_MIN_INTERVAL_NS (100ULL * 1000 * 1000)
/* A body longer than this makes the scrape fail ("body too large"). */
#define SCRAPE_MAX_BODY_BYTES (8u << 20)
/* The most raw samples one line of server_metrics.jsonl carries. */
#define SCRAPE_RAW_MAX_SAMPLES 2000

/* The most label sets of one counter a scrape point keeps apart; a page
 * with more keeps only their sum (a page has a few: finish reasons,
 * models, ranks). */
#define SCRAPE_MAX_SERIES 32

/* One label set of an engine counter, as scraped. */
struct scrape_counter_series {
    char *name;   /* the sample and its labels as the page wrote them,
                   * vllm:request_success_total{finished_reason="stop",...}
                   * (its identity from scrape to scrape); owned */
    char *model;  /* its engines_model_label value, or NULL; owned */
    double value; /* in the meaning's unit (the row's scale applied) */
};

/* One scrape as kept in memory: the mapped values and the TTFT histogram,
 * not the raw samples (those go to the file only). */
struct scrape_point {
    uint64_t start_abs_ns;          /* CLOCK_MONOTONIC when the GET started */
    uint64_t end_abs_ns;            /* ... when the body ended (or it failed) */
    int ok;                         /* 1: a 200 with at least one sample */
    enum engine_kind engine;        /* ENGINE_UNKNOWN when not ok */
    double value[ENGINE_MEANING_COUNT];        /* see engines_extract */
    unsigned char present[ENGINE_MEANING_COUNT];
    /* The server-side TTFT histogram (seconds), cumulative as scraped;
     * ttft_n == 0 when the engine has none. Arrays owned by the point. */
    size_t ttft_n;
    double *ttft_le;                /* ttft_n upper bounds, ascending, +Inf last */
    double *ttft_count;             /* ttft_n cumulative counts */
    double ttft_sum_s;              /* seconds */
    double ttft_total;              /* observations */
    double kv_capacity_tokens;      /* engines_kv_capacity_tokens; NAN when not exported */
    unsigned gpus;                  /* ENGINE_DCGM: GPUs in the scrape (power or energy
                                     * samples); 0 otherwise */
    /* Each engine counter's label sets apart (engines_meaning_is_counter):
     * series_n[m] of them, value[m] their sum. 0 when the page had none
     * of m, more than SCRAPE_MAX_SERIES, or the point came from a line
     * written before 2026-12 (the join then has only the sum). Owned. */
    size_t series_n[ENGINE_MEANING_COUNT];
    struct scrape_counter_series *series[ENGINE_MEANING_COUNT];
    /* The server process's start, process_start_time_seconds (Unix
     * seconds; the latest when the page has several), as Python's and
     * Go's Prometheus clients export it; 0 when the page has none, and
     * always for GPU telemetry (a DCGM exporter's restart does not reset
     * the driver's energy counter). When it changes between two scrapes
     * the server restarted, and the join counts every counter from 0 at
     * the later one, even one that has already climbed past its old
     * value (docs/server-metrics.md). */
    double process_start_s;
};

/* Fill *p from one scrape body (len bytes, need not be NUL-terminated)
 * fetched between start_abs_ns and end_abs_ns: detect the engine, extract
 * the common meanings and copy the TTFT histogram. A body with no sample
 * at all makes p->ok 0 (garbage). Returns 0, or LL_E_INVAL for NULL p.
 * The caller releases p with scrape_point_reset. *parsed, when not NULL,
 * gets the parsed scrape (caller frees with prom_scrape_free). */
int scrape_point_from_body(const char *body, size_t len, uint64_t start_abs_ns,
                           uint64_t end_abs_ns, struct scrape_point *p,
                           struct prom_scrape **parsed);

/* The same for a scrape known to come from engine kind (no detection):
 * ENGINE_DCGM for GPU telemetry, whose samples may share a page with a
 * server's own. ENGINE_UNKNOWN detects, as scrape_point_from_body. */
int scrape_point_from_body_as(enum engine_kind kind, const char *body, size_t len,
                              uint64_t start_abs_ns, uint64_t end_abs_ns, struct scrape_point *p,
                              struct prom_scrape **parsed);

/* Free the arrays a point owns and zero it. Safe on a zeroed point. */
void scrape_point_reset(struct scrape_point *p);

/* A time-ordered series of scrapes. */
struct scrape_series {
    struct scrape_point *pts;       /* n of them, by start time; owned */
    size_t n, cap;
    char *model; /* the run's model (scrape_series_set_model):
                                     * the join's counters keep its series; NULL:
                                     * every model's; owned */
};

/* Make s empty. */
void scrape_series_init(struct scrape_series *s);

/* Free every point, the array and the model; s is empty again. */
void scrape_series_reset(struct scrape_series *s);

/* The model the run asked for (copied; NULL or "": none). When a
 * counter's series name their model (engines_model_label), the join
 * counts only those of this model; when none is this model's, those of
 * the engine's default model (engines_default_model), else all. */
void scrape_series_set_model(struct scrape_series *s, const char *model);

/* Append *p, taking ownership of its arrays (*p is zeroed). Points must
 * come in order of start time; returns 0, or LL_E_INVAL when p starts
 * before the last point. */
int scrape_series_add(struct scrape_series *s, struct scrape_point *p);

/* A gauge over a window: the plain mean of the ok scrapes in it (scrapes
 * are evenly spaced, so this is a time average) and the largest value. */
struct scrape_gauge {
    int present;                    /* 1 when some ok scrape in the window had it */
    size_t n;                       /* scrapes that had it */
    double mean, max;
};

/* A counter's increase over the window's span, taken label set by label
 * set and summed (PromQL's sum(increase())). A value that goes down
 * between two consecutive scrapes is a reset (a restart): the increase
 * across it is the later value, as in Prometheus' increase(). A label
 * set absent from a scrape of the same engine counts 0 there (engines
 * make a series on its first use). resets counts the scrapes where one
 * or more label sets went down. */
struct scrape_counter {
    int present;                    /* 1 when the span's ends both had it */
    double delta;
    uint32_t resets;
};

/* The words said wherever a server figure counted across a reset is
 * shown (the terminal, summary.json's "lower_bound_note", the run page):
 * one home. */
#define SCRAPE_LOWER_BOUND_NOTE                                                                    \
    "a counter reset (the server restarted): what it counted between the last scrape "             \
    "before the restart and the restart is lost, so the server's counts across it are "            \
    "lower bounds"

/* Which scrapes a window's counter and histogram deltas run between. */
enum scrape_span {
    /* The last ok scrape at or before t0 to the first at or after t1
     * (falling back to the nearest inside): everything that happened in
     * the window, plus up to one interval outside each edge. Right for a
     * whole run, whose scraper takes a baseline before the first request
     * and a last scrape after the last response. */
    SCRAPE_SPAN_OUTER,
    /* The first ok scrape at or after t0 to the last at or before t1:
     * only what happened inside, missing up to one interval at each edge.
     * Right for back-to-back sweep steps. */
    SCRAPE_SPAN_INNER,
};

/* Server-side figures over a client time window [t0, t1]. */
struct scrape_join {
    size_t scrapes;                 /* scrapes whose time is in [t0, t1] */
    size_t ok, failed;              /* of those (failed = counted gaps) */
    enum engine_kind engine;        /* of the last ok scrape in the window */
    struct scrape_gauge waiting, running, kv_usage;
    double kv_capacity_tokens;      /* the KV cache's capacity, tokens, as the last ok
                                     * scrape in the window exported it; NAN = not */
    uint64_t span_from_abs_ns;      /* the scrape times the deltas run */
    uint64_t span_to_abs_ns;        /* between (0 when there is no span) */
    /* The window joined to, [t0, t1] as given; the series' mean spacing
     * of scrapes, ok or not (its interval as it ran; 0 under two). */
    uint64_t window_from_abs_ns, window_to_abs_ns, step_ns;
    struct scrape_counter preemptions, prompt_tokens, generation_tokens,
        request_success;
    /* Server restarts in the span seen by process_start_time_seconds
     * changing (scrape_point.process_start_s), and the first one's
     * scrapes: the last before it and the first after (0 when none). */
    uint32_t restarts;
    uint64_t restart_from_abs_ns, restart_to_abs_ns;
    /* The series' model (scrape_series_set_model), cut to fit; "" none.
     * model_named: some counter's series named their model; model_matched:
     * some were the run's model's (the counters kept only those);
     * model_default: none was, and the engine's default model's were
     * kept (Triton's ensemble). Named and neither: all were summed. */
    char model[256];
    int model_named, model_matched, model_default;
    /* Server-side TTFT over the span, from the histogram deltas. */
    int ttft_present;               /* 1 when the span has a TTFT histogram */
    double ttft_count;              /* observations in the span */
    int ttft_quantiles;             /* 1 when count > 0: the fields below hold */
    double ttft_p50_s, ttft_p99_s;  /* prom_histogram_quantile estimates */
    /* The bucket (lo, hi] each estimate lies in: the truth is somewhere in
     * it. hi is +Inf when the rank fell past the last finite bound, and
     * the estimate is then only a lower bound. */
    double ttft_p50_lo_s, ttft_p50_hi_s, ttft_p99_lo_s, ttft_p99_hi_s;
    /* GPU telemetry (a series of ENGINE_DCGM points): gauges over the
     * window (power W and memory MiB summed over GPUs, utilisation %,
     * SM clock MHz and engine activity 0..1 their mean), the energy
     * counter's increase over the span (J), and the power integrated
     * over the span by the trapezoid rule between consecutive ok scrapes
     * that had it (J over power_s seconds; power_gaps scrapes in the span
     * failed or lacked power, and were bridged). */
    struct scrape_gauge gpu_power, gpu_util, gpu_mem_used, gpu_sm_clock, gpu_gr_active;
    struct scrape_counter gpu_energy;
    int power_integral_present; /* 1: two or more ok scrapes in the span had power */
    double power_integral_j;
    double power_s; /* seconds the integral covers */
    /* The scrapes the integral runs between. */
    uint64_t power_from_abs_ns, power_to_abs_ns;
    size_t power_gaps;
    unsigned gpus; /* the most GPUs an ok scrape in the window had */
};

/* Join series s to the window [t0_abs_ns, t1_abs_ns] (CLOCK_MONOTONIC,
 * t0 <= t1). Gauges use the ok scrapes whose time (midpoint of start and
 * end) is in the window; counter and TTFT deltas run over the span chosen
 * by span, summed pair by pair across consecutive ok scrapes so resets are
 * handled. Returns 0 and *out; LL_E_INVAL for bad arguments (out is then
 * zeroed); LL_E_NOTFOUND when there is no ok scrape in the window nor a
 * span around it (out then still counts the failed scrapes). */
int scrape_series_join(const struct scrape_series *s, uint64_t t0_abs_ns, uint64_t t1_abs_ns,
                       enum scrape_span span, struct scrape_join *out);

/* The default metrics URL of an API base URL: a trailing "/v1" (and any
 * trailing slashes) replaced by "/metrics"; "/metrics" appended otherwise.
 * "http://h:8000/v1" -> "http://h:8000/metrics". Returns 0, or LL_E_RANGE
 * when it does not fit in len bytes (buf then holds ""). */
int scrape_default_url(const char *base_url, char *buf, size_t len);

struct curl_slist;

/* How a scraper reaches its URL beyond the address: the run's TLS
 * options (--cacert, --insecure) and request headers. Zero: the system's
 * CAs, certificates checked, no header of ours but the User-Agent. */
struct scrape_access {
    const char *cacert;               /* CA bundle file, NULL: the system's; borrowed */
    int insecure;                     /* 1: check neither the certificate nor the host name */
    const struct curl_slist *headers; /* "Name: value" lines, borrowed; NULL: none */
};

struct scrape_config {
    const char *url;                /* the metrics URL; borrowed for the scraper's life */
    uint64_t interval_ns;           /* >= SCRAPE_MIN_INTERVAL_NS */
    uint64_t timeout_ns;            /* per scrape; 0 = 80% of the interval;
                                     * must be < interval_ns */
    int out_fd;                     /* server_metrics.jsonl (O_APPEND), or -1 */
    int raw;                        /* 1: every line carries its raw samples;
                                     * 0: only when the engine is unknown.
                                     * At most SCRAPE_RAW_MAX_SAMPLES either way. */
    int quiet;                      /* 1: no warning on stderr */
    int gpu;                        /* 1: GPU telemetry (a DCGM exporter): its DCGM_FI_*
                                     * samples only, lines carry "source": "gpu" */
    struct scrape_access access;    /* TLS and headers; its pointers borrowed for the
                                     * scraper's life */
};

struct scraper;

/* Make a scraper (no thread yet). Checks the config. Returns NULL with a
 * reason in err when it is invalid. Caller frees with scraper_free. */
struct scraper *scraper_new(const struct scrape_config *cfg, char *err, size_t errlen);

/* One scrape now, on the calling thread, kept and written like any other.
 * Returns 0 when it was ok, or LL_E_IO / LL_E_PROTO with a reason in err
 * (a counted gap). Do not call while the thread runs. Used for the probe
 * at the start ("does the default URL answer?"). */
int scraper_probe(struct scraper *s, char *err, size_t errlen);

/* Start the thread: it scrapes at once, then every interval. Lines in the
 * file carry t_ns relative to origin_abs_ns (a CLOCK_MONOTONIC time: the
 * run start). The thread blocks every signal. Returns 0, or LL_E_IO with
 * a reason in err. Call at most once. */
int scraper_start(struct scraper *s, uint64_t origin_abs_ns, char *err, size_t errlen);

/* Stop the thread (waits for a scrape in progress, at most its timeout),
 * then take one last scrape so the series ends after the run's last
 * response. Safe when the thread never started (it then only scrapes). */
void scraper_stop(struct scraper *s);

/* scraper_stop for a run that ended at end_abs_ns (CLOCK_MONOTONIC, not
 * after now). A source that waits for data newer than the end
 * (--prometheus: one of Prometheus's scrape intervals) waits until that
 * long after end_abs_ns, not after now, so that stopping several sources
 * one after another (the server's, then the GPUs') waits once: the first
 * wait covers the others. interrupted is 1 when a stop signal (Ctrl-C)
 * ended the run: then no source waits for data newer than the end, and
 * each takes its last point at once, as a direct scrape always does (the
 * user asked for the run to end; the span may miss the last interval's
 * tokens). scraper_stop(s) is scraper_stop_at(s, now, 0). */
void scraper_stop_at(struct scraper *s, uint64_t end_abs_ns, int interrupted);

/* The run's model, for the joins (scrape_series_set_model). Safe to call
 * while the thread runs. NULL s does nothing. */
void scraper_set_model(struct scraper *s, const char *model);

/* Join the series so far to a window (see scrape_series_join). Safe to call
 * while the thread runs. */
int scrape_join(const struct scraper *s, uint64_t t0_abs_ns, uint64_t t1_abs_ns,
                enum scrape_span span, struct scrape_join *out);

/* Scrapes taken and scrapes that failed, so far. */
void scraper_counts(const struct scraper *s, uint64_t *scrapes, uint64_t *failed);

/* The origin given to scraper_start (0 before it). */
uint64_t scraper_origin_ns(const struct scraper *s);

/* Stop (if running) and free everything (and close the file when the
 * scraper opened it). NULL does nothing. */
void scraper_free(struct scraper *s);

/* ---- for the commands (`llmload run`, `llmload sweep`) ---------------- */

/* The scraper of one run: the metrics URL is url, or when url is NULL the
 * default one of base_url (scrape_default_url), reached with acc (NULL:
 * zero; its pointers borrowed for the scraper's life). Opens
 * dir/server_metrics.jsonl (the scraper owns it) and probes once. An
 * explicit URL that fails the probe is kept: a warning now, counted gaps
 * later. A default URL that fails is dropped: a note on stderr (unless
 * quiet, which silences only that note) and NULL. Also NULL, with a warning, when the file cannot be
 * opened. Each scrape, the probe included, has 80% of the interval and
 * at most SCRAPE_RUN_TIMEOUT_NS, so a server that never answers holds
 * the run's set-up 2 s at most. The probe is abandoned as soon as
 * cancel_fd (a signalfd; -1: none) is readable: NULL then, silently (the
 * caller sees the signal pending). Start it with scraper_start; free
 * with scraper_free. */
#define SCRAPE_RUN_TIMEOUT_NS (2 * LL_NS_PER_SEC)
struct scraper *scraper_for_run(const char *url, const char *base_url, uint64_t interval_ns,
                                const char *dir, int quiet, int cancel_fd,
                                const struct scrape_access *acc);

/* The GPU telemetry scraper of one run (--gpu-metrics URL, a DCGM
 * exporter's /metrics): like scraper_for_run with an explicit URL, its
 * lines appended to dir/server_metrics.jsonl with "source": "gpu" (the
 * file is truncated first when truncate is 1: no server scraper opened
 * it), reached with acc (as scraper_for_run's). A URL that fails the
 * probe is kept: a warning, and counted gaps. */
struct scraper *scraper_for_gpu(const char *url, uint64_t interval_ns, const char *dir,
                                int truncate, int quiet, int cancel_fd,
                                const struct scrape_access *acc);

/* The metrics URL (borrowed, valid for the scraper's life). */
const char *scraper_url(const struct scraper *s);

/* Client-side figures to set beside the server's; NAN where unknown. */
struct scrape_client {
    double ttft_sent_p50_s;         /* client TTFT from the send time, s */
    double ttft_sent_p99_s;
    double output_tokens;           /* tokens the client received, all records */
    double prompt_tokens;           /* tokens the client sent (ok records) */
    double cached_tokens;           /* of those, the cached ones their usage reported */
    double completed_ok;            /* ok records */
    double failed_started;          /* records not ok that had their first token */
    double failed_output_tokens;    /* tokens received by records not ok (in output_tokens) */
};

/* The client's prompt tokens to set beside the server's counter: all of
 * them, or when the engine's counter leaves cached tokens out
 * (engines_prompt_excludes_cached) the prompt tokens less the cached ones
 * (*less_cached then 1; a NAN cached count reads as 0). NAN when c is
 * NULL or its prompt count unknown. */
double scrape_client_prompt(const struct scrape_join *j, const struct scrape_client *c,
                            int *less_cached);

/* Print the joined figures to f, a few lines under a "server" heading,
 * each server figure beside the client's. */
void scrape_join_print(FILE *f, const struct scrape_join *j, int join_rc,
                       const struct scrape_client *c, const struct scraper *s);

/* The same as a JSON object (summary.json's "server"); the caller owns
 * it. join_rc is what scrape_join returned: on LL_E_NOTFOUND only the
 * counts are filled. */
json_t *scrape_join_json(const struct scrape_join *j, int join_rc,
                         const struct scrape_client *c, const struct scraper *s);

/* Where a series came from, when no scraper is at hand (a merge reads
 * the scraping shard's server_metrics.jsonl): its URL (borrowed), its
 * scrapes and failures, and the origin its lines' t_ns count from. */
struct scrape_source {
    const char *url;
    uint64_t scrapes, failed;
    uint64_t origin_abs_ns; /* CLOCK_MONOTONIC of the scraping process */
};

/* scrape_join_print and scrape_join_json with src in place of a scraper:
 * the same lines, the same object. */
void scrape_join_print_source(FILE *f, const struct scrape_join *j, int join_rc,
                              const struct scrape_client *c, const struct scrape_source *src);
json_t *scrape_join_json_source(const struct scrape_join *j, int join_rc,
                                const struct scrape_client *c, const struct scrape_source *src);

#endif
