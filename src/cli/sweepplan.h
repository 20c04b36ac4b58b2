/* sweepplan.h: `llmload sweep`'s flags and the plan they make (the rates,
 * the step lengths, the recovery step, the analysis settings), shared by
 * sweepplan.c, which parses and checks them, and cmd_sweep.c, which runs
 * the plan. Internal to src/cli/. */
#ifndef LL_SWEEPPLAN_H
#define LL_SWEEPPLAN_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "cli/runopts.h"
#include "sweep/sweep.h"

#define SWEEP_DEFAULT_STEP "10s"
#define SWEEP_DEFAULT_MAX_STEP "60s"
#define SWEEP_DEFAULT_WARMUP "2s"
#define SWEEP_DEFAULT_COLD_TIMEOUT "60s"
#define SWEEP_DEFAULT_PROBE "3s"
/* --gap with --start-at (fixed step times): the room each step leaves for
 * its requests in flight to finish before the next step's fixed start. */
#define SWEEP_DEFAULT_FIXED_GAP "5s"
#define SWEEP_MAX_RATES 256
#define SWEEP_DEFAULT_MAX_STEPS 30
/* Without --recovery-duration the recovery window is this many step
 * durations: a backlog built over one step at 2.5 x capacity drains at
 * 20% of that rate in 3 step durations (1.5 C x T / (C - 0.5 C)). */
#define SWEEP_RECOVERY_STEPS 3

/* The sweep's own flags, as given. */
struct sweep_opts {
    const char *rates, *step_duration, *max_step_duration, *min_hold_factor, *gap, *repeat,
        *probe_duration, *max_steps, *confirm;
    const char *recovery_duration, *overload_duration, *attainment, *max_error_rate, *ttft_limit,
        *headroom;
    const char *forecast, *cost, *replicas, *expect_capacity, *expect;
    const char *metrics_url, *metrics_interval, *engine_limits;
    const char *cold_restart, *cold_restart_timeout;
    int no_recovery, expect_slo, no_metrics;
    const char *gpu_urls[RUNOPTS_MAX_GPU_URLS]; /* --gpu-metrics URLs, in flag order */
    size_t n_gpu_urls;
    int gpu_smi; /* --gpu-sampler nvidia-smi */
};

/* The plan that comes out of the flags. */
struct sweep_plan {
    double rates[SWEEP_MAX_RATES];
    size_t n_rates; /* 0 = auto */
    uint64_t step_ns, warmup_ns, gap_ns, probe_ns, recovery_ns;
    int step_auto;                      /* --step-duration auto: step_ns is the minimum */
    uint64_t max_step_ns;               /* auto: the longest hold */
    int recovery_given, overload_given; /* their flags were given (auto: else from the
                                     * last hold) */
    uint64_t overload_ns;               /* the recovery step's lead-in at the top rate; 0 = none */
    uint32_t repeat, max_steps;
    uint32_t confirm; /* re-runs of a failing rate below a passing one */
    int recovery;
    /* --start-at (and so every sharded sweep): fixed step times. Step k's
     * t = 0 is --start-at plus the slots before it, each its warm-up,
     * hold and --gap; no probe, no auto hold, no stop condition and no
     * --confirm re-run, so the ladder is the same in every shard. */
    int fixed;
    const char *cold_restart;         /* --cold-restart CMD, NULL = none */
    uint64_t cold_restart_timeout_ns; /* for CMD, and again for the target to answer */
};

/* `llmload sweep --help`. */
void sweep_usage(FILE *f);

/* Every flag of `llmload sweep` into o, so, cfg, the plan p and the
 * analysis settings set, and the scrape interval: 0, RUNOPTS_HELP, or
 * LL_E_INVAL with the reason in err. */
int sweep_flags(int argc, char **argv, struct run_opts *o, struct sweep_opts *so,
                struct run_config *cfg, struct sweep_plan *p, struct sweep_settings *set,
                uint64_t *metrics_interval_ns, char *err, size_t errlen);

#endif
