/* report_html.h: report.html, the one-file report of a sweep (or of a
 * single load point: a sweep of one step).
 *
 * The page is self-contained: inline CSS and inline SVG charts (svg.h), no
 * scripts, no fonts, no images, no network. It reads the same printed as on
 * screen. docs/report.md explains each chart.
 *
 * The input is a plain struct that the sweep driver fills as it goes, or
 * that `llmload report DIR` rebuilds from steps.csv, summary.json and
 * server_metrics.jsonl. Everything in it is borrowed: the writer copies
 * nothing and frees nothing. */
#ifndef LL_REPORT_HTML_H
#define LL_REPORT_HTML_H

#include <stddef.h>
#include <stdint.h>

#include "measure/hist.h"
#include "measure/record.h"
#include "measure/verdict.h"
#include "util/strbuf.h"

/* The percentiles of every latency array below, in this order:
 * p50 p90 p95 p99 p99.9 max (nearest rank, docs/percentiles.md). */
#define REPORT_NPCT 6
enum report_pct { REPORT_P50, REPORT_P90, REPORT_P95, REPORT_P99,
                  REPORT_P999, REPORT_MAX };

/* About the most points a time chart draws. Longer series are thinned:
 * each run of samples becomes the one with the largest value, so peaks
 * survive. The in-flight chart shares it among the steps (at least 30 each). */
#define REPORT_MAX_TS_POINTS 600

/* One sample of the client's in-flight count. */
struct report_inflight_sample {
    double t_s;                 /* s since the run's start */
    double inflight;            /* requests in flight at t_s */
};

/* One scrape of the server's /metrics, in the engine-neutral names of
 * docs/server-metrics.md. A field that was not scraped is NAN. */
/* The most replicas (--prometheus) the server chart draws a line for. */
#define REPORT_MAX_REPLICAS 8

struct report_server_sample {
    double t_s;                 /* s since the run's start */
    double waiting;             /* requests queued in the server, not running */
    double running;             /* requests in the running batch */
    double kv_usage;            /* KV cache in use, fraction 0..1 */
    double replica_waiting[REPORT_MAX_REPLICAS]; /* requests queued in replica k of
                                 * report.replicas (--prometheus); NAN: not in this scrape */
};

/* One scrape of GPU telemetry (--gpu-metrics, --gpu-sampler): every GPU
 * behind one source together. A field that was not scraped is NAN. */
struct report_gpu_sample {
    double t_s;      /* s since the run's start */
    double power_w;  /* W, the source's GPUs summed */
    double util_pct; /* %, GPU utilisation, mean over its GPUs */
    size_t source;   /* index into report.gpu_sources */
};

/* One load point of the sweep. */
struct report_step {
    double offered_rps;         /* req/s, the schedule's rate (closed loop: NAN) */
    double achieved_rps;        /* req/s, sent / window */
    double completed_rps;       /* req/s, ok completions / window */
    double goodput_rps;         /* req/s, ok and within every SLO / window */
    double attainment;          /* fraction 0..1 of scheduled requests that met every SLO; NAN = no SLO */
    double input_tps;           /* tokens/s, prompt tokens of ok requests / window */
    double output_tps;          /* tokens/s, output tokens of ok requests / window */
    uint64_t scheduled;         /* requests scheduled in the window */
    uint64_t ok;                /* records of kind ok; 0 = the latencies below are not drawn */
    int no_stream;              /* 1: openai-embeddings records (stats_embeddings): no TTFT,
                                 * TPOT or ITL, whose charts are left out when every step
                                 * says so */
    uint64_t ttft_ns[REPORT_NPCT];  /* ns, ok requests, p50 .. max */
    uint64_t tpot_ns[REPORT_NPCT];  /* ns */
    uint64_t itl_ns[REPORT_NPCT];   /* ns, per request */
    uint64_t e2e_ns[REPORT_NPCT];   /* ns */
    uint64_t by_kind[REC_KIND_COUNT]; /* records per kind; [REC_OK] is ignored by the error chart */
    const char *sample[REC_KIND_COUNT]; /* per failed kind, the first message of that kind in
                                         * the step (server's text, truncated); NULL/"" = none */
    int steady;                 /* 1: backlog not growing, TTFT tail not rising */
    int invalid;                /* 1: INVALID (the generator's lateness moved its latencies) */
    int interrupted;            /* 1: a signal cut its window short (no verdict) */
    int recovery;               /* 1: the recovery step after saturation (kept off the curves' lines) */
    int confirm;                /* 1: a re-run (--confirm) of a rate that failed below a
                                 * passing one */
    char id[16];                /* the step's name as the terminal says it (sweep_step_label:
                                 * "0", "3 r2", "3 re", "4 rec"); "" = its position from 0,
                                 * " rec" or " re" after it */
    double hold_factor;         /* window / E2E p99; NAN = unknown */
    int short_hold;             /* 1: held less than the hold rule's factor x E2E p99 */
    const char *verdict;        /* short text for the table ("ok", "SLO miss", "saturated"); may be NULL */
    double inflight_mean;       /* requests, time-weighted */
    double inflight_max;        /* requests */
    double t_start_s, t_end_s;  /* s since the run's start: the step's window (both 0 = unknown) */
    const struct report_inflight_sample *inflight; /* n_inflight samples in time order; may be NULL */
    size_t n_inflight;
    const struct hist *ttft_hist; /* ns, this step's TTFT of ok requests; NULL = the
                                   * distribution chart uses ttft_ns's six points */
    /* The step's cold start (--cold-start N), in none of the figures
     * above; cold_n 0 = none (table#cold leaves the step out). */
    uint64_t cold_n;           /* N */
    uint64_t cold_scheduled;   /* its requests */
    uint64_t cold_ok;          /* of them ok; 0 = the latencies below are not shown */
    uint64_t cold_ttft_ns[3];  /* ns, p50, p99, max */
    uint64_t cold_e2e_p99_ns;  /* ns */
    double cold_cached_share;  /* fraction 0..1 of their prompt tokens; NAN = not reported */
    double j_per_output_token; /* J, the GPUs' energy per output token over the step's
                                * window (--gpu-metrics); NAN = none */
};

/* One traffic class at one step of the sweep. */
struct report_class_step {
    int present;                /* 0: the class has no figures at this step (not drawn) */
    uint64_t scheduled;         /* its requests scheduled in the window */
    uint64_t ok;                /* records of kind ok; 0 = its latencies are not drawn */
    uint64_t failed;            /* records of any other kind */
    double achieved_rps;        /* req/s, its requests sent / window */
    double goodput_rps;         /* req/s, ok and within its SLO / window */
    double attainment;          /* fraction 0..1 within its SLO; NAN = no SLO */
    uint64_t ttft_ns[REPORT_NPCT];  /* ns, its ok requests, p50 .. max */
    uint64_t tpot_ns[REPORT_NPCT];  /* ns */
    uint64_t e2e_ns[REPORT_NPCT];   /* ns */
    int pass;                   /* 1: met its SLO at the attainment target */
};

/* One traffic class (--workload FILE with two classes or more). */
struct report_class {
    const char *name;
    const char *slo;            /* its SLO spec ("ttft=500ms"); NULL = none */
    int own_slo;                /* 1: the class's own SLO, 0: the sweep's */
    double capacity_rps;        /* req/s, its SLO capacity; 0 = not found */
    int capacity_lower_bound;   /* 1: no step failed for it */
    const char *not_judged;     /* why no judged load step judged it, so it has no
                                 * capacity (not one it failed to reach): "no judged
                                 * step had a request of it", or that the client
                                 * cancelled every one (sweep_class_not_judged_why);
                                 * NULL otherwise; borrowed */
    const struct report_class_step *steps; /* one per report.steps, same order */
};

/* One endpoint (--url given more than once) at one step of the sweep:
 * its window requests. */
struct report_endpoint_step {
    uint64_t requests;                 /* its window records */
    uint64_t ok;                       /* of them ok; 0 = its latencies are not shown */
    uint64_t errors;                   /* of them any other kind */
    double error_rate;                 /* fraction 0..1 of requests */
    uint64_t ttft_p50_ns, ttft_p99_ns; /* ns, its ok requests */
    uint64_t tpot_p50_ns, tpot_p99_ns; /* ns; both 0 = none had a TPOT */
    double output_tps;                 /* tokens/s, its ok requests that ended in the window */
};

/* One endpoint of the sweep. */
struct report_endpoint {
    const char *url;                          /* its API base */
    const struct report_endpoint_step *steps; /* one per report.steps, same order */
};

struct report {
    const char *title;          /* page title; NULL = "llmload report" */
    const char *target;         /* URL */
    const char *model;
    const char *version;        /* llmload version */
    const char *started_at;     /* wall-clock start, as text (ISO 8601) */
    const char *mode;           /* "open-loop poisson", ... */
    const char *tags;           /* --tag KEY=VALUE of the run, "k=v k=v"; NULL = none */
    const char *server_said;    /* what the server said about itself (run.json's
                                 * contract.server), one line; NULL = nothing */
    int closed_loop;            /* 1: labelled CLOSED LOOP wherever it matters */
    int invalid;                /* 1: generator-bound, figures not trustworthy */
    const char *invalid_reason; /* why, when invalid; may be NULL */
    /* Whose fault, for the INVALID headline (verdict_invalid_headline);
     * VERDICT_LATE_NONE = not known. */
    enum verdict_late_cause invalid_cause;
    const struct report_step *steps; /* n_steps, in the order they ran */
    const char *step_mark;           /* the label of each step's start line on the charts
                                 * over time; NULL = its rate ("30/s"), as a sweep's;
                                 * a run's page says "warm-up end" */
    size_t n_steps;
    double slo_ttft_ms;         /* ms, per-request thresholds; 0 = none */
    double slo_tpot_ms;
    double slo_e2e_ms;
    double attainment_target;   /* fraction, e.g. 0.99; 0 = none */
    double capacity_rps;        /* req/s, highest offered load meeting the target; 0 = not found */
    double knee_rps;            /* req/s, where completions stop following the load; 0 = none */
    int knee_at_or_above;       /* 1: knee_rps is the top of the fitted range, and the knee
                                 * lies there or above (summary.json's knee_upper_rps) */
    const char *first_limit;    /* the limit the server reached first, in a few words,
                                 * shown under the knee ("first limit: the batch at 24
                                 * req/s"); may be NULL */
    const char *findings_text;  /* the sweep's findings in words; may be NULL; newlines kept */
    int energy;                 /* 1: the sweep scraped GPU telemetry (the energy chart) */
    const struct report_server_sample *server; /* n_server scrapes in time order; may be NULL */
    size_t n_server;
    const char *const *replicas; /* n_replicas names (--prometheus's by-label values) in
                                 * order of first scrape, at most REPORT_MAX_REPLICAS;
                                 * the server chart draws each one's queue when there are
                                 * two or more */
    size_t n_replicas;
    const struct report_gpu_sample *gpu; /* n_gpu GPU scrapes, each source's in time
                                 * order; may be NULL */
    size_t n_gpu;
    const char *const *gpu_sources; /* n_gpu_sources names (a --gpu-metrics URL,
                                 * "nvidia-smi"); "" when the file does not say */
    size_t n_gpu_sources;
    const struct report_class *classes; /* n_classes; NULL/0 = no per-class section */
    size_t n_classes;
    const struct report_endpoint *endpoints; /* n_endpoints; NULL/0 = no per-endpoint
                                 * table (one --url) */
    size_t n_endpoints;
    double probe_t0_s, probe_t1_s; /* s since the run's start: the capacity probe of
                                    * --rates auto, shaded on the charts over time;
                                    * both 0 = none */
    const struct report_inflight_sample *probe_inflight; /* the probe's clients in flight,
                                                          * time order; may be NULL */
    size_t n_probe_inflight;
};

/* Render r as a complete HTML document into out (appended). Deterministic:
 * the same r gives byte-identical text. Aborts on out of memory. */
void report_html_render(const struct report *r, struct strbuf *out);

/* Write the report of r to path atomically: the page goes to path.tmp, is
 * flushed and fsynced, then renamed over path (a reader sees the old file
 * or the whole new one). Returns 0, or LL_E_IO / LL_E_RANGE (path too
 * long) with the reason, naming the file, in err (errlen bytes, may be 0).
 * On failure path.tmp is removed. */
int report_html_write(const struct report *r, const char *path, char *err,
                      size_t errlen);

/* Write len bytes of text to path atomically, as report_html_write does
 * (path.tmp, fsync, rename). Returns 0, or LL_E_IO / LL_E_RANGE with the
 * reason in err (errlen bytes, may be 0). */
int report_file_write(const char *path, const char *text, size_t len, char *err, size_t errlen);

#endif
