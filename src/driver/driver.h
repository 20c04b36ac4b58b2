/* driver.h: one load point. Decides when each request is sent (open loop,
 * closed loop, or open arrivals through a concurrency cap), runs the worker
 * threads that send them, writes every record as it finishes, and merges
 * the workers' statistics at the end.
 *
 * The schedule is a pure function of the config: a process that is shard
 * K of N (run_config's shard and shards) offers the arrivals of the one
 * global schedule whose index i satisfies i mod N == K (sessions and
 * closed-loop users likewise, by session and user index), and its worker
 * w of W takes those whose i / N satisfies (i / N) mod W == w, so neither
 * the shard count nor the thread count changes which requests are sent
 * when (docs/distributed.md).
 *
 * The live view handed to run_config's live_cb (struct driver_live) is
 * declared in progress.h, which this header includes. */
#ifndef LL_DRIVER_H
#define LL_DRIVER_H

#include <stdint.h>

#include "driver/progress.h"
#include "http/transport.h"
#include "measure/hist.h"
#include "measure/slo.h"
#include "measure/stats.h"
#include "measure/summary.h"
#include "measure/verdict.h"
#include "workload/arrival.h"
#include "workload/calibrate.h"
#include "workload/dist.h"
#include "workload/trace.h"
#include "workload/workload.h"

enum load_mode {
    LOAD_OPEN,     /* arrivals independent of completions */
    LOAD_CLOSED,   /* N users: send, wait for the response, think, repeat */
    LOAD_CAPPED,   /* open arrivals through at most max_concurrency in flight */
    LOAD_SESSIONS, /* open session arrivals, closed-loop turns inside (session.h) */
};

/* An explicit burst: count requests all scheduled at at_ns (a cron job on
 * the hour), merged into the open-loop arrivals. Lengths 0 = drawn as
 * usual; set = every request of the burst asks for exactly that. */
struct burst {
    uint64_t at_ns;                   /* offset from the run start */
    uint32_t count;                   /* >= 1 */
    uint32_t prompt_tokens;           /* 0 = the workload's draw */
    uint32_t output_tokens;           /* 0 = the workload's draw */
};

/* The open-loop schedule: the arrival process merged with the bursts, in
 * time order (a burst goes before process arrivals at the same time).
 * Embedded; the workers and --dump-schedule walk the same one, so both see
 * the same indices at the same offsets. */
struct offer_src {
    struct arrival arr;
    uint64_t proc_off_ns;             /* the process's next offset, when proc_valid */
    int proc_valid, proc_done;
    size_t burst_i;                   /* next burst */
    uint32_t burst_left;              /* requests left in bursts[burst_i] */
    uint64_t index;                   /* arrivals returned so far */
};

struct run_config {
    enum load_mode mode;
    struct arrival_config arrival;    /* LOAD_OPEN and LOAD_CAPPED */
    const struct burst *bursts;       /* sorted by at_ns, all < duration; borrowed */
    size_t n_bursts;
    uint32_t users;                   /* LOAD_CLOSED */
    struct dist think;                /* LOAD_CLOSED, ns; used when pace_ns == 0 */
    uint64_t pace_ns;                 /* LOAD_CLOSED: each user starts at most one request per pace */
    uint32_t max_concurrency;         /* LOAD_CAPPED */
    int on_cap_drop;                  /* LOAD_CAPPED: 1 = drop instead of queue */
    uint64_t duration_ns;             /* offering stops at this offset; 0 = no bound */
    uint64_t max_requests;            /* offering stops after this many; 0 = no bound */
    uint64_t warmup_ns;               /* requests scheduled before this are warm-up */
    uint64_t cold_requests;           /* --cold-start: the first this many requests by schedule
                                         index (sessions: sessions) are cold, counted in
                                         driver_result.cold only, never warm-up; 0 = none */
    uint64_t max_tokens_total;        /* spend guard over prompt + max_tokens; 0 = off */
    uint32_t max_inflight;            /* open loop: refuse arrivals past this many in the
                                         system (records client_dropped); 0 = no cap */
    uint64_t grace_ns;                /* after a stop signal, time given to in-flight requests */
    double lateness_tolerance;        /* the self-check's share of a percentile that schedule
                                         lateness may move (measure/verdict.h); 0 = default */
    uint32_t threads;                 /* worker threads (>= 1) */
    /* --shard K/N: this process offers only the arrivals i of the global
     * schedule with i mod shards == shard (driver.h's top); shards 0 or 1
     * = the whole schedule. The spend guard's bound stays global for the
     * open loop and replay (every index is walked in schedule order, so
     * each shard stops where one process would); closed loop and sessions,
     * whose order depends on the server, give each shard its share of it
     * and of --requests (closed loop). */
    uint32_t shard, shards;
    const char *shard_launcher; /* where they came from (run.json): "flag", "openmpi",
                                         "mpich", "slurm", "kubernetes"; NULL unsharded */
    /* --start-at: t = 0 is this CLOCK_REALTIME instant, ns since the
     * epoch (0 = at once): the driver sleeps until just before it, then
     * runs the schedule on CLOCK_MONOTONIC from it. A late start keeps
     * the schedule's t = 0: its first arrivals are late, and say so. */
    int64_t start_at_unix_ns;
    struct workload workload;
    /* The fit behind workload.calib (--calibration FILE, --calibrate auto),
     * for run.json; zero when there is none. */
    struct calib_fit calib_fit;
    /* Replay: when set (LOAD_OPEN), the arrivals are the trace's entries
     * at trace_scaled_sched_ns(trace, i, trace_factor), their requests from
     * replay_spec; arrival and workload lengths are unused. Borrowed. */
    const struct trace *trace;
    double trace_factor;              /* offsets multiplied by this (> 0) */
    /* LOAD_SESSIONS: arrival is the session process, think the pause
     * between a turn's end and the next turn, turns the turns per session
     * (session_turns_check). --requests bounds sessions, not turns. */
    struct dist turns;
    struct transport_config transport;/* run_start_ns and worker are set by the driver */
    /* --prompt-salt: what the prompt content's seed mixes with the
     * schedule's (transport.seed = workload_content_seed(workload.seed,
     * prompt_salt)); auto: drawn afresh for this run (the default). */
    uint64_t prompt_salt;
    int prompt_salt_auto;
    int records_fd;                   /* requests.jsonl, opened O_APPEND; -1 = none */
    int hist_fd;                      /* hist.jsonl, opened O_APPEND: each worker appends a
                                         line per second window as it closes
                                         (measure/histlog.h); -1 = none */
    int progress;                     /* 0 none, 1 a live line on a TTY, 2 plain lines */
    uint64_t progress_interval_ns;
    struct slo slo;                   /* goodput thresholds; all 0 = none */
    int32_t step;                     /* written into every record; -1 outside a sweep */
    uint64_t sample_interval_ns;      /* in-flight time series period; 0 = 100 ms */
    /* Live view: NULL = none. Called on driver_run's own thread: once
     * before t = 0 (all zero, run_start_abs_ns known), then every
     * live_interval_ns, and last with final = 1. Keep it short: it delays
     * the progress line and the in-flight samples, never the workers. */
    driver_live_cb *live_cb;
    void *live_ud;
    uint64_t live_interval_ns;        /* 0 = 1 s */
};

struct driver_result {
    struct stats stats;               /* merged; caller frees with stats_free */
    uint64_t window_ns;               /* measurement window (after warm-up) */
    uint64_t sent_in_window;          /* window requests sent before the window closed */
    uint64_t late_sends;              /* window sends later than VERDICT_LATE_NS */
    uint64_t late_asleep;             /* ...of which the worker was asleep when they came due
                                       * and woke late (transport_last_wait) */
    /* The workers' own use of the machine, summed over workers, each from
     * its thread's start to its end (getrusage RUSAGE_THREAD): CPU time,
     * ns; involuntary context switches (the OS took the CPU from a thread
     * that wanted it); and the wall time they span, ns (0: not known). */
    uint64_t worker_cpu_ns, worker_invol_switches, worker_wall_ns;
    /* The share of the prompt tokens of every request sent (warm-up ones
     * too: the server saw them) that an ideal prefix cache, empty at the
     * start, would have served: workload/prefixshare.h. 0..1; NAN when the
     * prompts were not all llmload's own (datasets, trace texts, session
     * histories). */
    double workload_cached_share;
    double inflight_mean;             /* time-weighted requests in the system over the window */
    uint32_t inflight_max;            /* most requests in the system at once, all workers */
    uint64_t records_lost;            /* records that could not be written (disk full...) */
    uint64_t records_written;
    uint64_t warmup_records;
    /* The cold start's requests (cold_requests), counted like stats
     * (scheduled, sent, latencies, cached tokens) and in no other figure;
     * empty when cold_requests is 0. Freed by driver_result_free. */
    struct stats cold;
    int interrupted;                  /* a signal stopped offering */
    const char *stopped_in;           /* when interrupted, where the first signal came:
                                       * "schedule" (set-up, nothing sent), "load" or
                                       * "drain" (offering had ended); else NULL */
    char stop_reason[160];            /* why offering stopped early ("" if it did not) */
    uint64_t elapsed_ns;              /* run start to last record */
    uint64_t run_start_abs_ns;        /* CLOCK_MONOTONIC of t = 0, to join other clocks' data */
    /* With start_at_unix_ns: CLOCK_REALTIME when the wait for it ended
     * (normally DRIVER's lead, 30 ms, before it), and how much later than
     * that it ended (0 on time; a start already past shows here). */
    int64_t start_woke_unix_ns;
    uint64_t start_late_ns;
    /* LOAD_SESSIONS, else 0: sessions that arrived (all, and inside the
     * window), and of those inside the window, the ones cut short because
     * a turn fell past --duration, the spend guard or a stop signal, and
     * the ones a failed turn ended before their last. */
    uint64_t sessions_started, sessions_in_window, sessions_cut, sessions_failed;
    uint64_t last_session_start_ns; /* LOAD_SESSIONS: the latest session's arrival, from
                                     * t = 0 (0: none) */
    /* Steady-state check: TTFT of ok requests scheduled in the first and
     * the second half of the window (a tail that grows with run length
     * means the rate exceeds capacity). Owned; driver_result_free. */
    struct hist *ttft_first_half, *ttft_second_half;
    /* The time an ok window request streamed, end - first, ns: with the
     * least TTFT, how long one stays in the system when nothing waits
     * ahead of it (a run's backlog test starts past that fill-up).
     * Owned; driver_result_free. */
    struct hist *stream;
    /* ns, the least TTFT of any ok request of the run, warm-up's
     * included (0: none): the first requests find the system empty, so
     * it is the fill-up's TTFT where a queue built in the warm-up makes
     * every window TTFT long. */
    uint64_t ttft_least_ns;
    uint64_t last_sched_ns;             /* the latest arrival offered (any), from t = 0 */
    struct inflight_sample *series;     /* owned; n_series points */
    size_t n_series;
    /* Per traffic class, owned; NULL and 0 without classes: the classes
     * of workload.classes, or of a replay the trace's classes (both in
     * their own order, driver_class_name). Each counts like stats, with
     * the class's own SLO when it has one (a trace's have none). */
    struct stats *class_stats;
    size_t n_classes;
    /* Per endpoint (several --url), owned; NULL and 0 with one: the
     * requests each endpoint carried (endpoints_for_spec), counted like
     * stats with the run's SLO. */
    struct stats *endpoint_stats;
    size_t n_endpoints;
};

/* Start the open-loop schedule of cfg. */
void offer_src_init(struct offer_src *s, const struct run_config *cfg);

/* The next arrival: its index, offset and, when it belongs to a burst, the
 * burst (else NULL). Returns 0 when the schedule has ended (--duration,
 * --requests). */
int offer_src_next(struct offer_src *s, const struct run_config *cfg, uint64_t *index,
                   uint64_t *off_ns, const struct burst **burst);

/* The rate cfg's open-loop schedule offers, req/s: its expected arrivals
 * in the measurement window [warmup, duration) (the process's, a ramp's
 * mean over its span, plus the bursts due in the window) over the
 * window's length; the whole schedule's, not a shard's share. Without
 * --duration (a count ends the schedule, no window is known before the
 * run, and --ramp-to is refused) the process's rate. */
double offer_rate_per_s(const struct run_config *cfg);

/* The request spec of arrival index: the workload's draw with the burst's
 * lengths when it sets them. */
void offer_spec(const struct run_config *cfg, uint64_t index, const struct burst *b,
                struct req_spec *out);

/* What cfg's requested prompt lengths are, for the check of the server's
 * count against them: OTHER for a replay of a trace with prompt text, a
 * dataset or token IDs, else
 * llmload's words, CALIBRATED when a calibration scales them. While a run
 * goes, the driver judges the first SUMMARY_PROMPT_FIRST ok responses that
 * report the server's count (all of them when fewer come) and, when they
 * are off by more than SUMMARY_PROMPT_OFF, or every one of the first
 * SUMMARY_PROMPT_FIRST requests failed with a 400, 413 or 422 without a
 * calibration (or with a 401/403, or a 404/405, whatever the prompts:
 * summary_status_warning), says so on stderr, once per process (a sweep's steps say it once). The
 * summary says it again, over every request. */
enum summary_prompts driver_prompts(const struct run_config *cfg);

/* The traffic classes cfg counts apart (driver_result's class_stats):
 * a replay's trace classes, else the --workload file's; 0 without. */
size_t driver_class_count(const struct run_config *cfg);

/* Class k's name (k < driver_class_count(cfg)). Borrowed from cfg. */
const char *driver_class_name(const struct run_config *cfg, size_t k);

/* Free what driver_run allocated in res (stats, hists, series). */
void driver_result_free(struct driver_result *res);

/* Run one load point. Blocks SIGINT and SIGTERM in the calling thread and
 * the workers and handles them: the first stops offering and gives
 * in-flight requests grace_ns, the second cancels them at once; one that
 * is pending when the workers are ready (it came during their set-up)
 * is taken and no worker starts. Returns 0,
 * or LL_E_* with a reason in err when the run could not start. */
int driver_run(const struct run_config *cfg, struct driver_result *res, char *err, size_t errlen);

/* What the spend guard prices the first request cfg offers at: its
 * prompt, image and max tokens, into *tokens (the first arrival of an
 * open loop, bursts included; a trace's first line; the cheapest first
 * request of this shard's closed-loop users, any of whom may start
 * first; the first request of this shard's first session). Returns 1, or
 * 0 when the schedule offers nothing (*tokens 0). A --max-tokens-total
 * whose bound (driver_spend_bound) is below it stops offering before
 * anything is sent, so the flags refuse it. Pure: draws nothing the run
 * would not. */
int driver_first_cost(const struct run_config *cfg, uint64_t *tokens);

/* The tokens the spend guard lets cfg's process offer: the whole
 * --max-tokens-total for an open loop or a trace (each shard walks the
 * whole schedule and counts the others' requests too), this shard's
 * share of it for a closed loop or sessions (N / shards, the first
 * N mod shards one more: docs/distributed.md). 0: no guard. */
uint64_t driver_spend_bound(const struct run_config *cfg);

/* Write the open-loop schedule (index, sched_ns, prompt_tokens, max_tokens
 * per line) that cfg would offer, to path: with shards, this shard's part
 * of it (the union of every shard's file is one process's). Returns 0 or
 * LL_E_IO. */
int driver_dump_schedule(const struct run_config *cfg, const char *path, char *err, size_t errlen);

#endif
