/* sweepstep.h: one step of `llmload sweep` (sweepstep.c) and the state of
 * the sweep it runs in, which cmd_sweep.c holds while it climbs the
 * ladder, confirms failures and runs the recovery step. */
#ifndef LL_SWEEPSTEP_H
#define LL_SWEEPSTEP_H

#include <signal.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "cli/runopts.h"
#include "sweep/sweep.h"

struct scraper;

/* The running state of one sweep. */
struct sweep_run {
    const char *dir;
    int records_fd;
    FILE *steps_f;
    char records_path[1100];
    struct sweep_step *steps;
    size_t n_steps, cap_steps;
    struct sweep_point *points;
    uint64_t start_ns;
    int quiet;
    uint32_t repeats;           /* --repeat: above 1, a load step's lines name its run */
    struct scraper *scraper;    /* the sweep's one scraper; NULL = not scraping */
    struct scraper *const *gpu; /* --gpu-metrics: n_gpu scrapers (the run setup's) */
    size_t n_gpu;
    const char *cold_restart; /* --cold-restart CMD, NULL = none */
    uint64_t cold_restart_timeout_ns;
    const sigset_t *child_mask; /* the mask CMD runs with (the sweep's caller's) */
    uint64_t ok_requests;       /* ok records in the steps' windows, all steps */
    uint64_t done_requests;     /* records of any kind in the steps' windows */
    const char *stopped_in;     /* where a stop signal came (run.json); NULL: none */
    uint64_t hold_ns;           /* the next load step's hold (auto: set as it climbs) */
    double last_e2e_p99_s;      /* auto: E2E p99 of the last load step (or the probe's
                                     * first round); 0 = none yet */
    double prev_e2e_p99_s;      /* auto: of the load step before it; 0 = none */
    double last_rate;           /* auto: the last load step's rate; 0 = the probe's */
    int fixed;                  /* --start-at: fixed step times (sweepplan.h) */
    uint64_t gap_ns;            /* --gap: fixed, the end of each step's slot */
    uint64_t at_ns;             /* fixed: the next step's t = 0, ns from --start-at */
};

/* Run one step at rate (req/s) with warmup_ns of warm-up and hold_ns of
 * hold; append its facts and figures to sr (steps, steps.jsonl, the
 * records' file). Returns 0, 1 when it was interrupted, or -1 (reason
 * printed) when it could not run. repeat: the step's run at its rate (0:
 * the first); recovery: the recovery step, which with lead_rps > 0 offers
 * lead_rps through its warm-up and switches to rate at the warm-up's end;
 * confirm: a re-run of a failing rate (--confirm). */
int sweepstep_run(struct sweep_run *sr, const struct run_config *base,
                  const struct sweep_settings *set, double rate, uint64_t warmup_ns,
                  uint64_t hold_ns, uint32_t repeat, int recovery, double lead_rps, int confirm);

/* Wait ns (the gap between steps), or until a SIGINT or SIGTERM comes
 * (they stay blocked for the whole sweep; the driver takes them during a
 * step). 1 when one came: it is taken. */
int sweepstep_sleep(uint64_t ns);

#endif
