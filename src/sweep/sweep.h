/* sweep.h: the analysis of a sweep of offered loads (`llmload sweep`,
 * `llmload report`): per-step figures built from the step's records, the
 * steady-state verdict, the stop conditions, and the findings (SLO
 * capacity, saturation knee, headroom, forecast, cost, recovery).
 *
 * Every per-step figure is computed from two inputs only: the step's lines
 * of requests.jsonl (fed one record at a time) and the facts the driver
 * knew and the records cannot tell (struct sweep_facts, one line of
 * steps.jsonl, read and written by sweep_json.h). The sweep and `llmload
 * report DIR` go through the same functions, so a rebuilt report equals
 * the live one. docs/sweep.md states every rule below in words. */
#ifndef LL_SWEEP_H
#define LL_SWEEP_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "measure/expect.h"
#include "measure/hist.h"
#include "measure/record.h"
#include "measure/slo.h"
#include "measure/stats.h"
#include "measure/verdict.h"
#include "sweep/fit.h"
#include "sweep/steady.h"

/* Percentiles of each latency row: p50 p90 p95 p99 p99.9 max. */
#define SWEEP_NPCT 6
extern const double sweep_pcts[SWEEP_NPCT];       /* 50, 90, 95, 99, 99.9, 100 */
extern const char *const sweep_pct_keys[SWEEP_NPCT]; /* "p50" ... "max" */

/* Defaults of the sweep's analysis flags. */
#define SWEEP_DEFAULT_ATTAINMENT 0.99
#define SWEEP_DEFAULT_MAX_ERROR_RATE 0.10
#define SWEEP_DEFAULT_HEADROOM 0.8
/* z at 97.5%: the two-sided 95% intervals' quantile of the normal. */
#define SWEEP_Z95 1.959963984540054
/* Without --ttft-limit the safety limit is this many times the SLO's TTFT,
 * or SWEEP_DEFAULT_TTFT_LIMIT_NS when the SLO has no TTFT. */
#define SWEEP_TTFT_LIMIT_SLO_FACTOR 20
#define SWEEP_DEFAULT_TTFT_LIMIT_NS (30 * LL_NS_PER_SEC)
/* Goodput is "falling" at a point when it is below this fraction of the
 * best goodput of the points before the last two. */
#define SWEEP_GOODPUT_FALL 0.95
/* The knee's rule: below a knee completions follow the offered rate at
 * slope 1, so a fit whose slope below lies outside [0.8, 1.25] (25% off,
 * either way) is no knee. On the sim (capacity 11.8 req/s, 2 s and 5 s
 * steps) fits with slopes of 1.27 to 2.50 put the knee at 4 to 10 req/s;
 * every fit on the offered rate within 10% of the capacity had 0.85 to
 * 1.10 (docs/sweep.md, "Findings", has the table). */
#define SWEEP_KNEE_SLOPE_MIN 0.8
#define SWEEP_KNEE_SLOPE_MAX 1.25
/* ...and a fall (or a plateau's shortfall) must be beyond the counting
 * noise of the two windows: the later count, given the two counts' sum,
 * is Binomial under "no fall", and the fall stands when its lower tail
 * is under this (one-sided; sweep_stop_check). */
#define SWEEP_FALL_ALPHA 0.01
/* Recovery: latency is back inside the SLO at the first request after the
 * recovery window's last miss, provided at least this much of the window
 * is left after it to show that it stays back (sweep_recovery_measure). */
#define SWEEP_RECOVERY_TAIL_NS (1 * LL_NS_PER_SEC)
/* The hold rule: a load step is "short" when its measured window is less
 * than this many times its own E2E p99 (--min-hold-factor): its longest
 * requests span a large part of the hold, so the in-flight count and the
 * tail had little time to settle, and requests scheduled late in the
 * window end long after it. */
#define SWEEP_DEFAULT_MIN_HOLD_FACTOR 5.0

/* The sweep's analysis settings (run.json "config"."sweep" keeps them). */
struct sweep_settings {
    struct slo slo;              /* per-request thresholds; all 0 = no SLO */
    double attainment;           /* fraction (0, 1] of scheduled requests that must meet the SLO */
    double max_error_rate;       /* fraction [0, 1]: stop above it */
    uint64_t ttft_limit_ns;      /* stop when a step's TTFT p99 is above it; 0 = none */
    double headroom;             /* fraction (0, 1]: operate at this share of capacity */
    double forecast_rps;         /* req/s forecast peak; 0 = none */
    double cost_per_hour;        /* price of one replica per hour; 0 = none */
    uint32_t replicas;           /* replicas behind the URL (>= 1) */
    double expect_capacity_rps;  /* exit 7 when the SLO capacity is below it; 0 = none */
    int expect_slo;              /* exit 7 when any step (not the recovery) misses the SLO */
    struct expect_set expect;    /* --expect: exit 7 when a step that counts fails one
                                  * (docs/sweep.md); n = 0: none */
    int auto_rates;              /* 1: --rates auto (the plateau and range stops apply) */
    double estimate_rps;         /* auto: the probe's capacity estimate; 0 = none */
    double lateness_tolerance;   /* the self-check's tolerance (measure/verdict.h); 0 = default */
    uint32_t engine_seqs;        /* --engine-limits seqs=N: the engine's running-batch bound;
                                  * 0 = not given */
    uint64_t engine_kv_tokens;   /* --engine-limits kv_tokens=N: its KV cache, tokens; 0 = not
                                  * given (the server's /metrics may export it) */
    double min_hold_factor;      /* the hold rule: a load step is short when its window is
                                  * under this many E2E p99s (> 0) */
    /* where engine_seqs came from: "engine_limits" (the flag), "props"
     * (llama.cpp's /props total_slots, in run.json's contract); NULL = unknown */
    const char *engine_seqs_source;
    /* 1: the sweep's arrivals are Poisson (--arrival poisson, the
     * default), whose window counts the light-draw rule tests; 0 for a
     * constant schedule (its count is exact) or gamma (its counts vary
     * more than a Poisson count's: at burstiness 0.25 the rule would
     * discredit 9% to 14% of ordinary windows) */
    int poisson_arrivals;
};

/* Fill s with the defaults above (no SLO, one replica). */
void sweep_settings_init(struct sweep_settings *s);

/* The hold rule's factor of set: its min_hold_factor, or the default when
 * that is not above 0. */
double sweep_min_hold_factor(const struct sweep_settings *set);

/* One replica behind --prometheus over a step's window (its own series
 * joined as the aggregate's: metrics/promsource.h). NAN: not known. */
struct sweep_replica {
    char name[128];           /* the --prometheus-by label's value */
    double waiting_mean;      /* requests queued in it, mean over the window */
    double waiting_max;       /* requests */
    double running_mean;      /* requests in its running batch, mean */
    double generation_tokens; /* tokens, its counter's increase over the span */
    double span_s;            /* s, its own span (its first and last scrapes in the
                               * window, dated by its own data) */
};

/* The most replicas a step keeps (more: the first ones, and the count). */
#define SWEEP_MAX_REPLICAS 16

/* The replicas of a step (--prometheus): their count, each one's figures
 * and the routing-imbalance finding's text (the rule's one home is
 * metrics/promreplicas.c; the step keeps its words so that `llmload
 * report` rebuilds them). count 0: not read through Prometheus. */
struct sweep_replicas {
    size_t count; /* replicas seen in the window (may exceed n) */
    size_t n;     /* kept in r[] */
    struct sweep_replica r[SWEEP_MAX_REPLICAS];
    char imbalance[320]; /* "routing imbalance: replica ... " or "" */
};

/* What the server's /metrics said over one step's window, joined live by
 * `llmload sweep` (scrape_join, SCRAPE_SPAN_INNER) and kept in steps.jsonl
 * ("server") so `llmload report` rebuilds it. A figure the engine does not
 * export, or that no ok scrape covered, is NAN. */
struct sweep_server {
    int present;                 /* 1: the sweep scraped during this step */
    uint64_t scrapes, failed;    /* scrapes whose time is in the window; failed = gaps */
    char engine[16];             /* "vllm", ..., "unknown"; "" when no ok scrape */
    double waiting_mean, waiting_max;   /* requests queued in the server */
    double running_mean, running_max;   /* requests in the running batch */
    double kv_mean, kv_max;      /* KV cache in use, fraction 0..1 */
    double kv_capacity_tokens;   /* the KV cache's capacity as the server exports it
                                  * (vLLM's cache_config_info), tokens */
    double preemptions;          /* counter increase over the span */
    double generation_tokens;    /* tokens, counter increase over the span */
    double prompt_tokens;        /* tokens, counter increase over the span */
    double ttft_p50_s, ttft_p99_s; /* s, from the TTFT histogram's increase over the span */
    int ttft_p99_lower_bound;    /* 1: p99 lies in the +Inf bucket (a lower bound) */
    int has_span;                /* 1: span_*_ns below hold */
    uint64_t span_from_ns;       /* ns since the step's start: the scrapes the counter */
    uint64_t span_to_ns;         /* deltas run between (the client's tokens use the same) */
    struct sweep_replicas replicas; /* --prometheus: each replica's figures (count 0: none) */
};

/* Mark srv as "not scraped": present 0, every figure NAN. */
void sweep_server_clear(struct sweep_server *srv);

/* The GPUs' energy over one step's window (--gpu-metrics), joined live by
 * `llmload sweep` (scrape_join, SCRAPE_SPAN_INNER, each exporter's figures
 * summed as a run sums them: metrics/energy.h) and kept in steps.jsonl
 * ("energy") so `llmload report` rebuilds it. The per-token figures are
 * derived from it and the step's records (struct sweep_step). */
struct sweep_energy {
    int present;           /* 1: the sweep scraped GPU telemetry during this step */
    char source[16];       /* "energy_counter" or "power_integral"; "" = no figure */
    double energy_j;       /* J, all GPUs, over the span; NAN = no figure (an exporter
                                * without one withholds the sum: missing counts them) */
    uint64_t missing;      /* exporters with no figure over this step */
    uint64_t gaps;         /* power_integral: scrapes bridged */
    unsigned gpus;         /* GPUs the exporters reported, summed */
    double max_power_w;    /* W, the sum of each exporter's largest scraped power */
    double util_mean_pct;  /* %, mean GPU utilisation (weighted by GPUs); NAN = none */
    int has_span;          /* 1: span_*_ns below hold */
    uint64_t span_from_ns; /* ns since the step's start: the scrapes the energy */
    uint64_t span_to_ns;   /* runs between (the client's tokens use the same) */
};

/* Mark e as "not scraped": present 0, every figure NAN. */
void sweep_energy_clear(struct sweep_energy *e);

/* Traffic classes (--workload FILE): a sweep breaks out each class of a
 * file that defines two or more. Names fit SWEEP_CLASS_NAME_MAX bytes (NUL
 * included, as WL_NAME_MAX); at most SWEEP_MAX_CLASSES (WL_MAX_CLASSES). */
#define SWEEP_CLASS_NAME_MAX 64
#define SWEEP_MAX_CLASSES 256

/* What the sweep knew about one traffic class in one step (steps.jsonl's
 * "classes"): its name, its own SLO, and how many of its requests the
 * schedule produced in the window. */
struct sweep_class_facts {
    char name[SWEEP_CLASS_NAME_MAX]; /* as records carry it in "class" */
    struct slo own_slo;          /* the class's own thresholds; all 0 = the sweep's apply */
    uint64_t scheduled;          /* window requests of the class (driver); 0 = count its
                                  * window records instead */
};

/* Several --url: a sweep breaks out each endpoint (at most
 * SWEEP_MAX_ENDPOINTS, as ENDPOINTS_MAX). */
#define SWEEP_MAX_ENDPOINTS 32

/* What the sweep knew about one endpoint in one step (steps.jsonl's
 * "endpoints"): its URL and weight, and how many of its requests the
 * schedule produced in the window. Its figures are rebuilt from the
 * records' "endpoint" (the index into the array). */
struct sweep_endpoint_facts {
    char *url;          /* its API base; owned (freed by sweep_step_free) */
    uint32_t weight;    /* its --url-weights weight (1 without) */
    uint64_t scheduled; /* window requests of the endpoint (driver); 0 = count its
                         * window records instead */
};

/* The endpoint rule of the findings (sweep_endpoint_findings): at a load
 * step, an endpoint stands out when its TTFT p99 is more than
 * SWEEP_EP_RATIO times the median of the other endpoints' and at least
 * SWEEP_EP_TTFT_MIN_NS above it, or its error rate is more than
 * SWEEP_EP_RATIO times the others' median and at least SWEEP_EP_ERR_MIN
 * above it. Only endpoints with at least SWEEP_EP_MIN_REQUESTS window
 * requests (TTFT: ok ones) are judged or count among the others. */
#define SWEEP_EP_RATIO 2.0
#define SWEEP_EP_TTFT_MIN_NS (20 * LL_NS_PER_MS)
#define SWEEP_EP_ERR_MIN 0.05
#define SWEEP_EP_MIN_REQUESTS 10

/* Whose a step's late sends were: the driver's lateness diagnosis of the
 * step's run (driver_result's late_sends, late_asleep and worker_*;
 * steps.jsonl's and summary.json's "lateness_diagnosis", under the names
 * `llmload run`'s summary.json gives them). verdict_late_cause reads it. */
struct sweep_late {
    int known;               /* 0: not known (a steps.jsonl written before it was
                              * kept): the words of an INVALID step stay the
                              * generator's, as they were */
    uint64_t late_sends;     /* window sends later than VERDICT_LATE_NS */
    uint64_t asleep;         /* ...of which the worker slept when they came due and
                              * woke late (<= late_sends) */
    double cpu_s, wall_s;    /* s, the workers' CPU time and their threads' wall time,
                              * summed; NAN: not known (then invol_switches is 0) */
    uint64_t invol_switches; /* the workers' involuntary context switches */
};

/* Add src's counts into dst (the shards of a merged step, the INVALID
 * runs of a rate): known only when both are; the CPU and wall seconds
 * known only when both are. */
void sweep_late_add(struct sweep_late *dst, const struct sweep_late *src);

/* Whose the late sends of l were (verdict_late_cause of its counts);
 * VERDICT_LATE_NONE when l is not known or no send was late. */
enum verdict_late_cause sweep_late_cause(const struct sweep_late *l);

/* What the sweep knew about one step beyond its records: one line of
 * steps.jsonl. Owned pointers are freed by sweep_step_free. */
struct sweep_facts {
    uint32_t index;              /* step index, as in the records' "step" */
    uint32_t repeat;             /* 0-based repetition of this rate */
    int recovery;                /* 1: the recovery step */
    int confirm;                 /* 1: a re-run (--confirm) of a rate that failed below
                                  * a passing one */
    double offered_rps;          /* req/s, the schedule's rate (the recovery step: after
                                  * the switch) */
    double overload_rps;         /* req/s, recovery step only: the rate of its overload
                                  * lead-in, which is its warm-up (warmup_ns long); the
                                  * rate switches to offered_rps at warmup_ns. 0 = none */
    uint64_t start_offset_ns;    /* ns, step start since the sweep's start */
    /* --start-at (fixed step times): the step's t = 0 as an offset from
     * --start-at, the same in every shard; valid when has_start_at. */
    uint64_t start_at_offset_ns;
    int has_start_at;
    /* --shard: the ladder's rate the step's share came from (req/s; the
     * whole sweep's, offered by every shard together), where offered_rps
     * and overload_rps are this shard's share of it; 0 = not sharded. */
    double global_offered_rps;
    uint64_t duration_ns;        /* ns, offering time including warm-up */
    uint64_t warmup_ns;          /* ns, discarded warm-up */
    uint64_t cold_start;         /* --cold-start N that applied to this step (its first N
                                  * requests are cold); 0 = none */
    int cold_restart;            /* 1: --cold-restart's command ran before this step */
    uint64_t window_ns;          /* ns, the measurement window (driver) */
    uint64_t elapsed_ns;         /* ns, step start to its last record */
    uint64_t scheduled;          /* window requests the schedule produced (driver) */
    double inflight_mean;        /* requests, time-weighted over the window */
    double inflight_max;         /* requests */
    int interrupted;             /* a signal stopped the step */
    struct sweep_late late;      /* whose its late sends were (known 0: not known) */
    struct hist *lateness;       /* ns, generator lateness; owned, never NULL after init */
    struct inflight_sample *series;/* in-flight samples; owned, n_series of them */
    size_t n_series;
    struct sweep_server server;  /* server metrics over the window (present 0 = none) */
    struct sweep_energy energy;  /* GPU energy over the window (present 0 = none) */
    struct sweep_class_facts *classes; /* owned; n_classes of them (0 = no breakdown);
                                  * allocated by sweep_step_classes_init */
    size_t n_classes;
    struct sweep_endpoint_facts *endpoints; /* owned; n_endpoints of them (0 = one
                                  * --url, no breakdown); sweep_step_endpoints_init */
    size_t n_endpoints;
};

/* What the recovery step measured (sweep_recovery_measure). Times are sched_ns
 * of requests, from the step's start (the start of its overload lead-in). */
struct sweep_recovery {
    uint64_t first_miss_ns;      /* first window request that missed; LL_NO_TIME = none */
    uint64_t last_miss_ns;       /* last window request that missed; LL_NO_TIME = none */
    uint64_t back_ns;            /* first window request after the last miss: latency is
                                  * back inside the SLO for good from here; the window's
                                  * start when nothing missed; LL_NO_TIME = not back
                                  * within the step */
    uint64_t recovery_ns;        /* back_ns - the window's start (the switch); 0 when
                                  * nothing missed; LL_NO_TIME = not back within the step */
};

/* One traffic class within a step: what its records add up to and the
 * derived figures, counted like the step's own, against the class's SLO
 * (its own thresholds when it has any, else the sweep's). Pairs with
 * sweep_facts.classes[] at the same index. */
struct sweep_class {
    /* fed by sweep_step_add_record */
    struct stats stats;          /* window records of the class (warm-up excluded) */
    uint64_t ok_ended_in_window; /* ok records of the class that ended inside the window */
    uint64_t met_ended_in_window;/* ...of them, those that met its SLO (all without one) */
    uint64_t sent_in_window;     /* its window records sent before the window closed */
    /* derived by sweep_step_finish */
    int have_slo;                /* 1: its effective SLO has a threshold */
    struct slo slo;              /* its effective SLO (own, else the sweep's) */
    double achieved_rps;         /* req/s, sent_in_window / window */
    double completed_rps;        /* req/s, ok_ended_in_window / window */
    double goodput_rps;          /* req/s, met_ended_in_window / window */
    double attainment;           /* fraction, met / scheduled; NAN without an SLO or
                                  * without a scheduled request */
    double error_rate;           /* fraction of its window records not ok */
    uint64_t ttft_ns[SWEEP_NPCT], tpot_ns[SWEEP_NPCT], e2e_ns[SWEEP_NPCT];
    int slo_pass;                /* 1: attainment at the target (no SLO: error rate in the
                                  * limit) and the step steady; a class with no
                                  * request in the window passes */
    char fail_reason[160];       /* why it fails, "" when it passes */
};

/* One endpoint within a step: its window records (warm-up and cold ones
 * excluded, as the step's) and the figures derived from them. Pairs with
 * sweep_facts.endpoints[] at the same index. */
struct sweep_endpoint {
    struct stats stats;           /* window records that carried "endpoint" = its index */
    uint64_t output_tokens_ended; /* tokens, of its ok records that ended inside the window */
    /* derived by sweep_step_finish */
    double error_rate; /* fraction of its window records not ok (0 with none) */
    double output_tps; /* tokens/s, output_tokens_ended / window */
    uint64_t ttft_ns[SWEEP_NPCT], tpot_ns[SWEEP_NPCT], e2e_ns[SWEEP_NPCT]; /* 0 = none */
};

/* One step: its facts, what its records add up to, and the derived
 * figures (valid after sweep_step_finish). */
struct sweep_step {
    struct sweep_facts f;
    /* fed by sweep_step_add_record */
    struct stats stats;          /* window records (warm-up and cold ones excluded) */
    struct stats cold;           /* the cold start's records ("cold": true), alone */
    struct hist *ttft_h1;        /* ns, ok window records scheduled in the first half */
    struct hist *ttft_h2;        /* ns, ... in the second half */
    uint64_t ok_ended_in_window; /* ok records (warm-up ones too) that ended inside the window */
    uint64_t met_ended_in_window;/* ...of them, those that met the SLO (all of them without one) */
    uint64_t prompt_tokens_ended;/* tokens, of ok records that ended inside the window */
    uint64_t output_tokens_ended;/* tokens, likewise */
    uint64_t sent_in_window;     /* window records sent before the window closed */
    uint64_t request_bytes_in_window; /* bytes, the request bodies of those */
    double client_tokens_in_span;/* tokens, output tokens of every record of the step
                                  * (warm-up and failed ones too) received inside the
                                  * server span (f.server.span_*): the first at first_ns,
                                  * the rest spread evenly over (first_ns, last_ns] */
    double energy_tokens_in_span; /* tokens, the same count over the energy's span
                                   * (f.energy.span_*) */
    uint64_t energy_ok_in_span;   /* ok records (warm-up ones too) that ended inside it */
    uint64_t *met_sched_ns;      /* sched_ns of each window record but cancelled ones,
                                  * in finish order (sorted by sweep_recovery_measure) */
    unsigned char *met;          /* 1 when that record met the SLO (ok when there is none) */
    size_t n_met, cap_met;
    /* derived */
    double achieved_rps;         /* req/s, sent_in_window / window */
    double completed_rps;        /* req/s, ok_ended_in_window / window */
    double goodput_rps;          /* req/s, window records that met the SLO / window; no SLO: ok ones */
    double attainment;           /* fraction, met / scheduled; NAN without an SLO */
    double input_tps, output_tps;/* tokens/s, ok window records / window */
    double request_bytes_per_s;  /* bytes/s, request_bytes_in_window / window; NAN when
                                  * no record said its size (older files) */
    double error_rate;           /* fraction of window records not ok */
    uint64_t ttft_ns[SWEEP_NPCT], tpot_ns[SWEEP_NPCT], itl_ns[SWEEP_NPCT], e2e_ns[SWEEP_NPCT];
    uint64_t lateness_ns[SWEEP_NPCT];
    uint64_t ttft_p99_h1_ns, ttft_p99_h2_ns; /* 0 when that half has no ok record */
    struct sweep_tail_test tail;             /* the TTFT tail's rise within the step */
    double inflight_growth;      /* requests: in-flight slope over the window's second
                                  * half, times the window */
    int ci_valid;                /* 1: ttft_p99_ci_lo_ns is a bound */
    uint64_t ttft_p99_ci_lo_ns;  /* ns, 95% order-statistic interval of p99 TTFT */
    uint64_t ttft_p99_ci_hi_ns;  /* ns; 0 = unbounded (too few samples) */
    int steady;                  /* 1: backlog not growing, TTFT tail not rising */
    char steady_reason[160];     /* why not steady, "" when steady */
    int slo_pass;                /* 1: meets the SLO at the attainment and is steady */
    char fail_reason[160];       /* why it fails, "" when it passes */
    int unjudged;                /* 1: a load step with requests in its window, none of
                                  * which the verdict could judge: the client cancelled
                                  * every one (with an SLO: before it was decided); its
                                  * verdict is "empty" */
    int invalid;                 /* 1: schedule lateness (f.late says whose) moved this
                                  * step's TTFT or E2E past the tolerance (verdict_judge,
                                  * as for `run`): its figures include the client's delay */
    char invalid_reason[320];    /* why, "" when valid; with f.late known, whose the
                                  * lateness was, in `run`'s words */
    char lateness_warning[512];  /* valid, but lateness p99 over 1 ms or one late send moved a
                                  * percentile past its limit: what it moved; "" */
    double cost_per_mtok;        /* cost per million output tokens; NAN = no cost given */
    /* From f.energy and the records over its span (sweep_step_finish);
     * NAN when there is no energy figure or nothing to divide by. */
    double j_per_output_token;      /* J per output token received in the span */
    double j_per_request;           /* J per ok request that ended in the span */
    double output_tokens_per_j;     /* tokens per J */
    double mean_power_w;            /* W, energy_j over the span */
    struct sweep_recovery recovery; /* recovery step only (all LL_NO_TIME otherwise) */
    double backlog_at_switch;       /* requests in flight at the switch, counted from the
                                     * records (sent at or before it, not ended by it);
                                     * with none added, the last in-flight sample at or
                                     * before it; NAN without a lead-in */
    double hold_factor;             /* window / E2E p99 of ok requests; NAN when none is ok */
    int short_hold;                 /* 1: a load step whose hold_factor is under the
                                     * settings' min_hold_factor (the hold rule) */
    /* Records added to a recovery step with a lead-in, and those of them in
     * flight at the switch (backlog_at_switch). */
    uint64_t switch_records, switch_inflight;
    struct sweep_class *classes; /* owned; f.n_classes of them, NULL when 0 */
    struct sweep_endpoint *endpoints; /* owned; f.n_endpoints of them, NULL when 0 */
};

/* Make s empty (facts zeroed, histograms allocated). Undo with
 * sweep_step_free. Aborts on out of memory. */
void sweep_step_init(struct sweep_step *s);

/* Free what s owns and zero it. Safe on a zeroed struct and twice. */
void sweep_step_free(struct sweep_step *s);

/* Give s n traffic classes (1 <= n <= SWEEP_MAX_CLASSES), once, before
 * any record is added: s->f.classes (zeroed facts, for the caller to
 * fill) and s->classes (empty). Aborts on out of memory. */
void sweep_step_classes_init(struct sweep_step *s, size_t n);

/* Give s n endpoints (2 <= n <= SWEEP_MAX_ENDPOINTS), once, before any
 * record is added: s->f.endpoints (zeroed facts, for the caller to fill;
 * url NULL until then) and s->endpoints (empty). Aborts on out of memory
 * or a bad n. */
void sweep_step_endpoints_init(struct sweep_step *s, size_t n);

/* The index of the class named name in s->f.classes, or -1 (also when
 * name is NULL). */
int sweep_step_class_find(const struct sweep_step *s, const char *name);

/* Add one record of this step (r->step == s->f.index). Warm-up records
 * only count towards ok_ended_in_window. Needs s->f (warmup_ns,
 * duration_ns) set first. With classes, the record also counts towards
 * the class whose name is r->cls (a record of no known class counts only
 * in the step's total). */
void sweep_step_add_record(struct sweep_step *s, const struct record *r,
                           const struct sweep_settings *set);

/* 1 when s is judged against an SLO: --slo, or a class's own SLO. Each
 * request then meets the SLO of its class (its own, else --slo; a class
 * with neither: completing ok). */
int sweep_step_has_slo(const struct sweep_step *s, const struct sweep_settings *set);

/* Compute the derived figures of s from what was added and s->f. */
void sweep_step_finish(struct sweep_step *s, const struct sweep_settings *set);

/* The step's one-word verdict, in the order that wins: recovery,
 * interrupted, empty (no request the SLO could judge: none scheduled, or
 * every one cancelled by the client before the SLO was decided), INVALID,
 * unstable, SLO miss, ok; csv: the steps.csv spelling (recovery,
 * interrupted, empty, invalid, unstable, slo_miss, ok). Valid after
 * sweep_step_finish. */
const char *sweep_step_verdict(const struct sweep_step *s, int csv);

/* 1 when s's figures may pass or fail its rate: not interrupted (a
 * signal cut its window short, so it holds less than its rate's hold),
 * not empty (no request in its window the SLO could judge: none was
 * scheduled, or the client cancelled every one before it was decided)
 * and not INVALID (the client's own lateness is in them). The capacity
 * search, the knee and the first limit leave the others out. Valid after
 * sweep_step_finish. */
int sweep_step_judged(const struct sweep_step *s);

/* The first of steps[0..n) that broke its load out by traffic class
 * (f.n_classes > 0), whose classes every such step of a sweep shares;
 * NULL when none did (also for n 0). */
const struct sweep_step *sweep_first_with_classes(const struct sweep_step *steps, size_t n);

/* The first of steps[0..n) that spread its load over endpoints
 * (f.n_endpoints > 0), whose endpoints every such step shares; NULL when
 * none did (also for n 0). */
const struct sweep_step *sweep_first_with_endpoints(const struct sweep_step *steps, size_t n);

/* ---- the pure parts (unit tested on their own; the fits are in fit.h) - */

/* Recovery: n window requests as (sched_ns, met) in any order, scheduled
 * in the window [from_ns, to_ns) that starts at the rate switch. Latency
 * is back inside the SLO at the first request after the last miss (so
 * every request scheduled from then on met it), provided that request is
 * at least min_tail_ns before to_ns: a window whose last min_tail_ns hold
 * a miss, or no request after it, has not shown a recovery. No miss at
 * all: back at from_ns, recovery 0. Fills *out (see struct
 * sweep_recovery). The arrays are sorted by sched_ns in place. */
void sweep_recovery_measure(uint64_t *sched_ns, unsigned char *met, size_t n, uint64_t from_ns,
                            uint64_t to_ns, uint64_t min_tail_ns, struct sweep_recovery *out);

/* Cost per million output tokens of replicas replicas at cost_per_hour
 * each, producing output_tps tokens/s. NAN when any input is <= 0. */
double sweep_cost_per_mtok(double cost_per_hour, uint32_t replicas, double output_tps);

/* Replicas needed for forecast_rps when replicas replicas serve
 * capacity_rps and each should run at headroom of its share. 0 when any
 * input is <= 0. */
uint32_t sweep_replicas_needed(double forecast_rps, double capacity_rps, double headroom,
                               uint32_t replicas);

/* ---- points, stops and findings --------------------------------------- */

/* One offered rate: the mean over its repeats (one step when --repeat 1). */
struct sweep_point {
    double offered_rps;
    size_t first_step;           /* index into the steps array of its first repeat */
    uint32_t n;                  /* repeats */
    uint32_t n_judged;           /* of them, judged (sweep_step_judged): the figures below are
                                  * their means, or all n repeats' when none was */
    double goodput_rps, goodput_ci; /* mean, and half-width of its 95% interval (0 over one) */
    double completed_rps, completed_ci;
    /* The share of its runs' judged requests that met the SLO, pooled
     * (att_met of att_judged); NAN without an SLO. attainment_lo and _hi
     * bound it: the Wilson score interval of the pooled counts at 95%,
     * over two judged runs or more (NAN over one, as every interval
     * here); attainment_ci is the larger of its two sides (0 over one
     * run). A Student-t over two runs' shares read "100.0% +- 0.0%" from
     * two runs of a dozen requests, and "50.0% +- 635.3%". */
    double attainment, attainment_ci;
    double attainment_lo, attainment_hi;
    uint64_t att_met, att_judged;
    double ttft_p99_ms, ttft_p99_ci_ms;
    double achieved_rps, achieved_ci;
    double tpot_p99_ms, tpot_p99_ci_ms; /* over those with a TPOT (NAN: none had) */
    double error_rate;           /* mean */
    double output_tps;           /* mean */
    uint64_t met_n;              /* requests that met the SLO and ended in the window, summed
                                  * over the runs in the means (goodput's count) */
    uint64_t ok_n;               /* ok requests that ended in the window, likewise */
    double window_s;             /* s, those runs' windows summed (0: not known) */
    int pass;                    /* every valid repeat passes; when re-run (--confirm)
                                  * after a failure: some valid re-run passes */
    int steady;                  /* every repeat in its means is steady */
    const char *fail_reason;     /* borrowed from the first failing repeat; "" when passing */
    int unknown;                 /* every repeat is INVALID or interrupted: the search does
                                  * not judge it */
    int cut;                     /* unknown, none INVALID, one interrupted: a stop signal
                                  * cut it short */
    int empty;                   /* unknown, none INVALID or interrupted: no request the
                                  * SLO could judge in any repeat's window */
    int empty_cancelled;         /* empty, and a repeat had requests: the client cancelled
                                  * every one before the SLO was decided */
    uint32_t reruns;             /* valid re-runs (--confirm) among the repeats */
    uint32_t rerun_steps;        /* re-runs, INVALID ones too */
    int disputed;                /* a repeat failed, and a re-run passed: it passes, and
                                  * the findings say the verdicts disagreed */
    int confirmed_fail;          /* failed, and every valid re-run failed too */
    enum verdict_late_cause late_cause; /* whose the lateness of its INVALID repeats was
                                  * (their diagnoses summed); NONE: not known, or none */

    /* The light-draw rule (SWEEP_LIGHT_ALPHA) over the judged runs in its
     * means: arrivals, the requests they sent in their windows
     * (sent_in_window, summed); expected_arrivals, offered_rps times those
     * windows (s), summed; light_p, P(a Poisson count of that mean <=
     * arrivals), 1 when not judged; light, set when it passes with light_p
     * under SWEEP_LIGHT_ALPHA: its windows drew too few arrivals for its
     * pass to be evidence of its offered rate, and the capacity search
     * does not credit it. */
    uint64_t arrivals;
    double expected_arrivals;
    double light_p;
    int light;
};

/* The light-draw rule: a passing rate whose judged windows drew fewer
 * arrivals than its offered rate times those windows, beyond what a
 * Poisson count of that mean does but this often (one-sided, the lower
 * tail), is not credited with its pass. Seed 3's 2 s step at 14 req/s drew
 * 16 of an expected 28 (p = 0.010), sent at 8/s, and passed: it said
 * nothing of 14. At 0.02, 1.3% to 1.8% of ordinary Poisson windows are
 * discredited (under the level, the count being discrete; test_sweep
 * measures it over 4000 seeds), and one costs the capacity one step at
 * most, with a line that says why. Poisson schedules only
 * (sweep_settings.poisson_arrivals): a constant schedule's count is exact,
 * and a gamma schedule's varies more (at burstiness 0.25, 9% to 14% of
 * ordinary windows would be discredited). */
#define SWEEP_LIGHT_ALPHA 0.02

/* The light-draw rule's p for arrivals sent where expected were offered
 * (offered rate x window): P(X <= arrivals) for X ~ Poisson(expected); 1
 * when expected is not above 0. The rule holds when it is under
 * SWEEP_LIGHT_ALPHA. */
double sweep_light_p(uint64_t arrivals, double expected);

/* The in-flight samples of two shards' step as one (dst's series replaced):
 * the sum of the two step functions at every instant either sampled (both
 * count from the step's t = 0, the common --start-at instant plus the
 * step's offset). A shard whose series has ended (its run ended, nothing
 * in flight) adds 0 from SWEEP_SERIES_EVERY_NS after its last sample. */
void sweep_series_add(struct sweep_facts *dst, const struct sweep_facts *src);

/* Group the non-recovery steps into points by offered rate, in the order
 * the rates first ran. A point's figures are the means over its judged
 * repeats (sweep_step_judged), or over all of them when none was (the
 * point is unknown): an INVALID repeat's latencies hold the generator's
 * own lateness, an empty or cut one's rates no full window. points needs
 * room for n entries. Returns the number of points. */
size_t sweep_points_build(const struct sweep_step *steps, size_t n, struct sweep_point *points);

/* The stop conditions, evaluated after the last point: error rate over the
 * limit, TTFT p99 over the safety limit, goodput below its earlier peak two
 * points in a row, both offered above the peak's rate; with auto rates
 * also a throughput plateau (completions up less than 5% over the last two
 * points while the last is unsteady) and the offered rate reaching 2.5
 * times the estimate. A fall is one past SWEEP_GOODPUT_FALL and beyond
 * counting noise: each of the two points' goodput count (met_n over
 * window_s) against the peak's, by the exact conditional test of two
 * Poisson counts (the later one given their sum is Binomial with p its
 * window's share of the two) at SWEEP_FALL_ALPHA one-sided; a plateau's
 * completions (ok_n) likewise, the last point's against those of the
 * point two before, under a rise in proportion to the offered rate (the
 * server kept up). A point without a window (window_s 0: built by hand)
 * is judged by the relative rule alone. The two trends (the goodput's
 * fall, the plateau) read the judged points only, and not after
 * a point that was not judged (INVALID, cut or empty); a judged point's
 * figures are the means over its judged repeats (sweep_points_build). The
 * TTFT limit's reason says when the point was INVALID. Returns 1 and a
 * one-line reason when the sweep should stop. */
int sweep_stop_check(const struct sweep_point *points, size_t n, const struct sweep_settings *set,
                     char *reason, size_t len);

/* Unknown (all-INVALID) rates the findings list by value. */
#define SWEEP_MAX_UNKNOWN 8

/* One traffic class's findings: its SLO capacity, found over the points
 * as the sweep's (a point passes for the class when every judged repeat
 * with a request of it passes, or a --confirm re-run with one does),
 * and its p99 latencies at the sweep's SLO capacity. Pointers borrow from
 * the steps. */
struct sweep_class_finding {
    const char *name;
    int have_slo;                /* its effective SLO has a threshold */
    struct slo slo;              /* its effective SLO */
    int own_slo;                 /* 1: the class's own thresholds, 0: the sweep's */
    int capacity_found;
    double capacity_rps;         /* req/s, the last passing point below its first failing one */
    int next_fails;
    double next_fail_rps;
    const char *next_fail_reason;/* "" when none */
    int none_failed;             /* 1: no point failed for it (a lower bound) */
    size_t n_unmeasured;         /* judged points below its first failing one with no
                                  * request of the class the SLO could judge (left out
                                  * of its capacity); may exceed SWEEP_MAX_UNKNOWN */
    double unmeasured_rps[SWEEP_MAX_UNKNOWN]; /* their offered rates, the first ones */
    size_t n_unsent;                          /* of them, those where no judged repeat had a request
                                  * of the class in its window */
    double unsent_rps[SWEEP_MAX_UNKNOWN];     /* their offered rates, the first ones */
    size_t n_cancelled;                       /* the others: judged repeats had requests of it, and
                                  * the client cancelled every one before its SLO was
                                  * decided (without an SLO: every one) */
    double cancelled_rps[SWEEP_MAX_UNKNOWN];  /* their offered rates, the first ones */
    int at_capacity;             /* 1: the two figures below hold (the sweep's capacity
                                  * was found and the class had ok requests there) */
    uint64_t ttft_p99_at_capacity_ns; /* ns, mean over the capacity point's repeats */
    uint64_t tpot_p99_at_capacity_ns; /* ns, likewise; 0 when no TPOT */
};

/* The first limit the server reached (sweep_first_limit, the rule in
 * docs/sweep.md, "The first limit"): over the steps in offered order, the
 * first whose server figures (or, for admission, the client's records)
 * show a limit holding requests back. Within that step the order is
 * admission, KV cache, batch, prefill, compute. */
enum sweep_limit_kind {
    SWEEP_LIMIT_UNKNOWN = 0, /* no server figures, none reached, or not told apart */
    SWEEP_LIMIT_BATCH,       /* running at the engine's max sequences, requests waiting */
    SWEEP_LIMIT_KV_CACHE,    /* preemptions, or KV use at SWEEP_KV_FULL with requests
                                  * waiting */
    SWEEP_LIMIT_PREFILL,     /* the queue grew with the batch and KV below their limits */
    SWEEP_LIMIT_ADMISSION,   /* the server refused requests (429): a policy */
    SWEEP_LIMIT_COMPUTE,     /* not steady with nothing queued and the batch below its
                              * bound, TPOT risen: each step slows as the batch grows */
};
/* KV use (fraction) at which the cache counts as full. */
#define SWEEP_KV_FULL 0.95
/* The queue grew in a step when its waiting gauge reached this many
 * requests at most and averaged at least SWEEP_QUEUE_MEAN_MIN and at
 * least one step's arrivals (offered rate x TPOT p99: a request that
 * arrives during a step waits for the next one, limit or not). */
#define SWEEP_QUEUE_MAX_MIN 4.0
#define SWEEP_QUEUE_MEAN_MIN 1.0
/* A latency "failed" at the first step whose p99 is over the SLO's
 * threshold for it, or without one, over SWEEP_LATENCY_RISE times the
 * lowest step's p99 and at least the ..._MIN_NS above it. */
#define SWEEP_LATENCY_RISE 2.0
#define SWEEP_TTFT_RISE_MIN_NS (50 * LL_NS_PER_MS)
#define SWEEP_TPOT_RISE_MIN_NS (5 * LL_NS_PER_MS)
/* Compute: an unsteady step whose TPOT p99 is at least this many times
 * the lowest step's. */
#define SWEEP_COMPUTE_TPOT_RISE 1.25

struct sweep_first_limit {
    enum sweep_limit_kind kind;
    int none_judged;     /* 1: no load step could be judged (each INVALID,
                          * interrupted or empty): no finding at all */
    int server_metrics;  /* 1: some judged step had server figures */
    int reached;         /* 1: a step showed a limit (step, offered_rps hold) */
    size_t step;         /* index into the steps array */
    uint32_t step_index; /* that step's f.index */
    double offered_rps;
    /* Evidence at that step (NAN where unknown). */
    double running_max;
    uint32_t max_seqs;              /* the engine's batch bound; 0 = unknown */
    const char *max_seqs_source;    /* sweep_settings.engine_seqs_source */
    double kv_max;                  /* fraction */
    double kv_capacity_tokens;      /* tokens; NAN = unknown */
    const char *kv_capacity_source; /* "engine_limits", "metrics" or NULL */
    double preemptions;
    double queue_before;   /* waiting max of the step below it in offered order */
    double queue_max;      /* waiting max from this step up */
    double queue_mean;     /* waiting mean at this step */
    double prompt_tps;     /* server prompt tokens per second of its span */
    uint64_t tpot_step_ns; /* TPOT p99 at this step (compute's evidence) */
    uint64_t rejected;     /* 429s at this step (client records) */
    uint64_t timeouts;     /* timeouts at this step (client records) */
    /* The client's view over all steps: the offered rate at which TTFT and
     * TPOT p99 first failed (the rule at SWEEP_LATENCY_RISE); 0 = never. */
    double ttft_failed_rps, tpot_failed_rps;
    uint64_t ttft_base_ns, ttft_at_ns; /* TTFT p99 at the lowest step and at the step it
                                  * failed (or the highest step) */
    uint64_t tpot_base_ns, tpot_at_ns; /* likewise TPOT */
};

/* "batch", "kv_cache", "prefill", "admission", "compute", "unknown". */
const char *sweep_limit_kind_name(enum sweep_limit_kind k);

/* Which latency failed first: "ttft", "tpot", "both" (at the same step) or
 * "neither". */
const char *sweep_first_limit_latency(const struct sweep_first_limit *fl);

/* One endpoint that stood out (the rule at SWEEP_EP_RATIO) in one figure:
 * the step where it stood out the most, and how many steps it did. */
struct sweep_endpoint_finding {
    size_t endpoint;     /* its index (the records' "endpoint") */
    const char *url;     /* borrowed from the steps' facts */
    int error_rate;      /* 0: TTFT p99 (ns), 1: error rate (fraction) */
    double value;        /* its figure at that step */
    double others;       /* the median of the other judged endpoints' there */
    double ratio;        /* value / others; INFINITY when others is 0 */
    double offered_rps;  /* that step's offered rate */
    uint32_t step_index; /* that step's f.index */
    size_t n_out;        /* load steps where it stood out in this figure */
    size_t n_judged;     /* load steps where it was judged (enough requests) */
};

/* The endpoints that stood out over steps (n, in run order; the recovery
 * step left out, INVALID steps judged: the generator's lateness falls on
 * every endpoint alike), at most one finding per endpoint and
 * figure, TTFT before error rate, by endpoint index, into out (room for
 * 2 x SWEEP_MAX_ENDPOINTS). Returns how many. */
size_t sweep_endpoint_findings(const struct sweep_step *steps, size_t n,
                               struct sweep_endpoint_finding *out);

/* A capacity more than this many times what a busier step completed per
 * second is above the server's measured ceiling (sweep_findings.ceiling_rps). */
#define SWEEP_CEILING_MARGIN 1.05

struct sweep_findings {
    int have_slo;
    int capacity_found;          /* 1: some point passed before the first failing one */
    double capacity_rps;         /* req/s, offered rate of that point */
    size_t capacity_point;
    int next_fails;              /* 1: a failing point follows the capacity point */
    double next_fail_rps;
    const char *next_fail_reason;/* borrowed from the steps; "" when none */
    int none_failed;             /* 1: no point failed (the capacity is a lower bound) */
    /* Rates that failed and then passed when re-run (--confirm), in offered
     * order: they count as passing, and the findings say so. */
    double disputed_rps[SWEEP_MAX_UNKNOWN];
    size_t n_disputed;       /* may exceed SWEEP_MAX_UNKNOWN; that many are kept */
    double passed_above_rps; /* the highest passing rate above the first failing
                                  * one (a result not monotonic in load); 0 = none */
    int next_fail_confirmed; /* 1: the first failing rate failed again when re-run */
    /* Re-runs (--confirm) of the first failing rate when none of them could
     * be judged (INVALID, empty or cut); 0 otherwise. */
    uint32_t next_fail_reruns_unjudged;
    /* Rates with no request scheduled in any repeat's window (the window
     * too short for the rate), in offered order: the search and the knee
     * skip them too. */
    double empty_rps[SWEEP_MAX_UNKNOWN];
    size_t n_empty;      /* may exceed SWEEP_MAX_UNKNOWN; that many are kept */
    int empty_cancelled; /* an empty rate had requests, every one cancelled by the client
                          * before the SLO was decided */
    /* Rates whose every repeat was INVALID, in offered order: the capacity
     * search and the knee skip them, and the findings say so. */
    double unknown_rps[SWEEP_MAX_UNKNOWN];
    enum verdict_late_cause unknown_cause[SWEEP_MAX_UNKNOWN]; /* whose each one's lateness
                                  * was (sweep_point.late_cause) */
    size_t n_unknown;            /* may exceed SWEEP_MAX_UNKNOWN; that many are kept */
    int capacity_unknown;        /* 1: no load rate could be judged (every one INVALID):
                                  * the sweep is INVALID (exit 1) */
    int have_cut;                /* 1: a stop signal cut a step short: the search leaves
                                  * its rate out (not in unknown_rps) */
    double cut_rps;              /* that step's offered rate */
    double ceiling_rps;          /* the most a judged step offered more than the capacity
                                  * completed per second, when the capacity is over
                                  * SWEEP_CEILING_MARGIN times it (a pass the server did not
                                  * sustain: a light draw, a short step); 0 = none */
    double ceiling_at_rps;       /* that step's offered rate */
    int capacity_coarse;         /* 1: an unknown rate lies between the capacity and the
                                  * first failing rate: the capacity is bracketed more
                                  * coarsely than the steps (the findings say so) */
    struct fit_knee knee;        /* completed/s against the offered rate (found 0 as
                                  * well when knee_slope_off) */
    int knee_slope_off;          /* 1: the hinge bent, but its slope below lay outside
                                  * [SWEEP_KNEE_SLOPE_MIN, SWEEP_KNEE_SLOPE_MAX]: no knee */
    double operate_rps;          /* headroom x capacity */
    uint32_t replicas_needed;    /* for forecast_rps; 0 = no forecast */
    double cost_at_capacity;     /* per million output tokens; NAN = none */
    int have_recovery;
    double recovery_rps;         /* req/s after the switch */
    double overload_rps;         /* req/s of the lead-in; 0 = none */
    int lead_in_passed;          /* the lead-in's rate was judged and passed as a load step:
                                  * it overloaded nothing, so the recovery tests nothing */
    uint64_t switch_ns;          /* lead-in length: the switch, from the step's start */
    double backlog_at_switch;    /* requests in flight at the switch; NAN = unknown */
    struct sweep_recovery recovery; /* as measured by the recovery step */
    uint64_t drain_ns;           /* time the last loaded step took to drain after offering stopped */
    int slo_missed;              /* some non-recovery step failed its SLO */
    struct sweep_first_limit first_limit;
    /* The hold rule: load steps held less than min_hold_factor x their own
     * E2E p99, in run order (the first SWEEP_MAX_UNKNOWN rates kept). */
    double short_rps[SWEEP_MAX_UNKNOWN];
    size_t n_short;              /* may exceed SWEEP_MAX_UNKNOWN */
    size_t n_short_steady;       /* of them, steady ones (the others are overloaded) */
    size_t n_load_steps;         /* load steps in all */
    int capacity_short;          /* 1: a repeat of the capacity point, or a steady one of
                                  * the first failing point, is short: the capacity
                                  * rests on it (an unsteady, overloaded step's failure
                                  * does not rest on its length) */
    size_t n_classes;            /* traffic classes broken out (0 = none) */
    struct sweep_class_finding classes[SWEEP_MAX_CLASSES]; /* the first n_classes, in
                                  * the order of the first step's classes */
    size_t n_endpoints; /* endpoint findings (0 = none stood out, or one --url) */
    struct sweep_endpoint_finding endpoints[2 * SWEEP_MAX_ENDPOINTS];
    /* Steps whose replicas (--prometheus) showed a routing imbalance, in
     * run order, the first SWEEP_MAX_UNKNOWN kept: the step's index, its
     * offered rate and the finding's words (borrowed from the step). */
    size_t n_routing; /* may exceed SWEEP_MAX_UNKNOWN */
    size_t routing_step[SWEEP_MAX_UNKNOWN];
    double routing_rps[SWEEP_MAX_UNKNOWN];
    const char *routing_text[SWEEP_MAX_UNKNOWN];
    /* Passing rates the light-draw rule did not credit (sweep_point.light),
     * in offered order, the first SWEEP_MAX_UNKNOWN kept with their counts
     * and the judged runs pooled in them; n_light may exceed
     * SWEEP_MAX_UNKNOWN. The search skips them as it does unknown ones. */
    double light_rps[SWEEP_MAX_UNKNOWN];
    uint64_t light_arrivals[SWEEP_MAX_UNKNOWN];
    double light_expected[SWEEP_MAX_UNKNOWN];
    double light_p[SWEEP_MAX_UNKNOWN];
    uint32_t light_runs[SWEEP_MAX_UNKNOWN];
    size_t n_light;
};

/* Findings over steps (n of them, in run order) and their points. */
void sweep_findings_compute(const struct sweep_step *steps, size_t n,
                            const struct sweep_point *points, size_t n_points,
                            const struct sweep_settings *set, struct sweep_findings *out);

/* The first limit over steps (n, in run order; the recovery step and
 * the steps not judged, INVALID, interrupted or empty, are left out),
 * into *out; none_judged says when that left none. */
void sweep_first_limit(const struct sweep_step *steps, size_t n, const struct sweep_settings *set,
                       struct sweep_first_limit *out);

/* The first-limit line of the findings ("first limit: ...\n"). */
void sweep_first_limit_text(const struct sweep_first_limit *fl, char *buf, size_t len);

/* Why class cf has no capacity when no judged step judged it (its
 * n_unmeasured > 0, no point passing or failing for it): "no judged step
 * had a request of it", or, when the client cancelled every request of it
 * those steps had, that (docs/sweep.md, "Per class"). A static string. */
const char *sweep_class_not_judged_why(const struct sweep_class_finding *cf);

/* Room for the findings text with every class and endpoint finding (its
 * URL cut at 200 bytes): a buffer of this many bytes never truncates it. */
#define SWEEP_FINDINGS_TEXT_MAX (4096 + SWEEP_MAX_CLASSES * 1024 + 2 * SWEEP_MAX_ENDPOINTS * 400)

/* The findings in words: one line each, newline-terminated (one line per
 * traffic class, then one per endpoint finding, before the "stopped"
 * line). Writes into buf (len bytes, truncated if short;
 * SWEEP_FINDINGS_TEXT_MAX always suffices). */
void sweep_findings_text(const struct sweep_findings *fd, const struct sweep_settings *set,
                         const char *stop_reason, char *buf, size_t len);

/* The steps (recovery aside) that were INVALID, as one line for the
 * terminal and the report's banner: "2 of 8 steps (at 45, 50 req/s) are
 * INVALID: <whose> moved their latencies ..." (the rates cut with ", ..."
 * past about 130 characters; whose: sweep_late_whose_list of their
 * steps' diagnoses; 1024 bytes hold it). Returns how many; buf gets ""
 * when none. */
size_t sweep_invalid_text(const struct sweep_step *steps, size_t n, char *buf, size_t len);

/* Whose lateness made the load steps (recovery aside) INVALID, for the
 * report's headline (verdict_invalid_headline): the cause every INVALID
 * step's diagnosis gives; VERDICT_LATE_NONE when they differ, when none
 * is INVALID, or when a step's is not known (an older steps.jsonl). */
enum verdict_late_cause sweep_invalid_cause(const struct sweep_step *steps, size_t n);

/* Whose lateness made steps INVALID, as the noun phrase that says so
 * ("<whose> moved their latencies"): "the generator's own lateness" when
 * not known (VERDICT_LATE_NONE: the words of files from before the
 * diagnosis was kept), with "(busy: its own limit)" when busy; for asleep
 * and preempted, lateness the OS or VM caused, not the generator's load.
 * Static storage. */
const char *sweep_late_whose(enum verdict_late_cause c);

/* The same over n steps or rates (rps[i] with causes[i]; the first
 * SWEEP_MAX_UNKNOWN are read) into buf: sweep_late_whose of their one
 * cause when they share it, else "schedule lateness (the OS's or VM's at
 * 10 req/s (asleep); the generator's own at 20 req/s (busy))", each
 * cause's rates in the order given. */
void sweep_late_whose_list(const double *rps, const enum verdict_late_cause *causes, size_t n,
                           char *buf, size_t len);

/* 1 when the sweep ran some rate more than once by --repeat (a step that
 * is neither the recovery step nor a --confirm re-run has repeat > 0):
 * then every load step's name carries its repeat (sweep_step_label). */
int sweep_has_repeats(const struct sweep_step *steps, size_t n);

/* The step's name wherever a person reads it (the terminal's tables, the
 * report's tables): its index as steps.jsonl, steps.csv and requests.jsonl
 * carry it, from 0, then " rec" for the recovery step, " re" for a
 * --confirm re-run, " r2" for its rate's second run when repeats
 * (sweep_has_repeats): "3", "3 r2", "3 re", "4 rec". */
void sweep_step_label(const struct sweep_facts *f, int repeats, char *buf, size_t len);

/* Print the step table (one row per step; with --repeat, after the last
 * step of each rate run more than once, its mean and 95% CI line: see
 * docs/sweep.md) and then the server's table when scraped. */
void sweep_print_table(FILE *f, const struct sweep_step *steps, size_t n,
                       const struct sweep_settings *set);

/* Print the per-endpoint block (nothing with one --url): the endpoints'
 * URLs, then per step one line per endpoint with its window requests,
 * errors, TTFT p99 and TPOT p99. */
void sweep_print_endpoints(FILE *f, const struct sweep_step *steps, size_t n);

/* Print the per-class block (nothing without classes): one line per class
 * with its SLO, its SLO capacity, the next point failing for it, and its
 * TTFT and TPOT p99 at the sweep's SLO capacity. */
void sweep_print_classes(FILE *f, const struct sweep_findings *fd);

/* ---- records (the JSON of steps and summaries is in sweep_json.h) ---- */

/* Feed the records of the requests.jsonl file at path from byte offset
 * from on (read by record_read_file) to the steps whose f.index matches
 * each record's "step" (records of other steps are skipped). Returns 0,
 * or LL_E_IO / LL_E_INVAL with "path:line: reason" in err. */
int sweep_read_records(const char *path, uint64_t from, struct sweep_step *steps, size_t n,
                       const struct sweep_settings *set, char *err, size_t errlen);

#endif
