/* cmd_sweep.c: `llmload sweep`, a ladder of offered loads through
 * saturation, then a recovery step.
 *
 * Each step is one driver_run (open loop at the step's rate, a labelled
 * warm-up, then the hold). Every step appends to the one requests.jsonl
 * (records carry "step"; their times are relative to their own step's
 * start) and writes one line of facts to steps.jsonl. After each step its
 * figures are computed from its records (sweep.c) and the stop conditions
 * are checked. The recovery step is one driver_run too, so the overload's
 * backlog is still in the server when it is measured: it offers the
 * highest rate for --overload-duration (its labelled warm-up), then the
 * arrival process switches to 20% of that rate for --recovery-duration
 * (its window). At the end report_build_dir writes steps.csv, summary.json
 * and report.html from those files, exactly as `llmload report DIR` does.
 * One scraper of the server's /metrics runs for the whole sweep
 * (server_metrics.jsonl, times from the sweep's start); each step's window
 * is joined to it as the step ends and the figures go into its steps.jsonl
 * line (docs/server-metrics.md, "In a sweep").
 * docs/sweep.md describes the procedure. */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <jansson.h>
#include <math.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "cli/cmds.h"
#include "cli/runopts.h"
#include "cli/runsetup.h"
#include "cli/sweepjob.h"
#include "driver/driver.h"
#include "measure/results.h"
#include "measure/summary.h"
#include "metrics/scrape.h"
#include "report/report_build.h"
#include "sweep/sweep.h"
#include "sweep/sweep_json.h"
#include "util/spawn.h"
#include "util/util.h"
#include "workload/wlfile.h"

_Static_assert(WL_NAME_MAX <= SWEEP_CLASS_NAME_MAX && WL_MAX_CLASSES <= SWEEP_MAX_CLASSES,
               "every workload class fits the sweep's breakdown");

#define SWEEP_DEFAULT_STEP "10s"
#define SWEEP_DEFAULT_MAX_STEP "60s"
#define SWEEP_DEFAULT_WARMUP "2s"
#define SWEEP_DEFAULT_COLD_TIMEOUT "60s"
#define SWEEP_DEFAULT_PROBE "3s"
#define SWEEP_MAX_RATES 256
#define SWEEP_DEFAULT_MAX_STEPS 30
#define SWEEP_RECOVERY_FRACTION 0.2
/* Without --recovery-duration the recovery window is this many step
 * durations: a backlog built over one step at 2.5 x capacity drains at
 * 20% of that rate in 3 step durations (1.5 C x T / (C - 0.5 C)). */
#define SWEEP_RECOVERY_STEPS 3
#define SWEEP_PROBE_FIRST_USERS 16
#define SWEEP_PROBE_MAX_USERS 1024

static void sweep_usage(FILE *f)
{
    fprintf(
        f,
        "usage: llmload sweep [options]\n"
        "\n"
        "A ladder of open-loop offered loads through saturation, then a recovery step:\n"
        "goodput, SLO capacity and the saturation knee. Every latency is measured from\n"
        "the time the request was scheduled. Writes run.json, requests.jsonl (all\n"
        "steps), steps.jsonl, steps.csv, summary.json and report.html; with a\n"
        "--workload file of two classes or more, a per-class breakdown in each, and\n"
        "classes.csv.\n"
        "\n"
        "Sweep:\n"
        "  --rates LIST|auto        offered rates, req/s (e.g. 2,4,8,16); auto (default): a\n"
        "                           closed-loop probe estimates capacity C, then steps of\n"
        "                           10%% of C from 10%% up until a stop condition\n"
        "  --step-duration D|auto[:MIN]\n"
        "                           measured hold of each step (default " SWEEP_DEFAULT_STEP
        "); a step held\n"
        "                           less than --min-hold-factor x its own E2E p99 is marked\n"
        "                           short; auto: each step holds that many times the E2E p99\n"
        "                           seen before it (the previous step's, grown as the ladder\n"
        "                           climbs; the probe's for the first), at least MIN (default\n"
        "                           " SWEEP_DEFAULT_STEP "), whole seconds\n"
        "  --max-step-duration D    auto: at most D per step (default " SWEEP_DEFAULT_MAX_STEP ")\n"
        "  --min-hold-factor F      the hold rule: a step is short when held less than F x\n"
        "                           its E2E p99 (default 5)\n"
        "  --warmup D               discarded, labelled warm-up before each hold "
        "(default " SWEEP_DEFAULT_WARMUP ")\n"
        "  --cold-start N           the first N requests of the first step are cold: labelled\n"
        "                           \"cold\", summarised apart, in no warm figure nor warm-up\n"
        "  --cold-restart CMD       before each step run the shell command CMD (it restarts the\n"
        "                           server or flushes its cache), then wait for BASE/models to\n"
        "                           answer: every step's first --cold-start N requests are cold\n"
        "  --cold-restart-timeout D  limit for CMD, and again for the target to answer\n"
        "                           (default " SWEEP_DEFAULT_COLD_TIMEOUT ")\n"
        "  --gap D                  pause between steps (default 0)\n"
        "  --repeat N               run each rate N times; mean and 95%% CI across runs (default "
        "1)\n"
        "  --probe-duration D       auto: length of each probe round (default " SWEEP_DEFAULT_PROBE
        ")\n"
        "  --max-steps N            at most N load steps (default %d)\n"
        "  --confirm N              re-run a rate that failed below a passing one up to N\n"
        "                           times; a passing re-run outweighs the failure (disputed)\n"
        "                           (default 1; 0 = never)\n"
        "  --no-recovery            skip the recovery step\n"
        "  --overload-duration D    the recovery step first offers the highest rate for D (an\n"
        "                           overload lead-in, labelled warm-up; default: --step-duration;\n"
        "                           0 = none, the step starts from an idle server)\n"
        "  --recovery-duration D    then 20%% of the highest rate for D, the window in which the\n"
        "                           time until latency is back inside the SLO is measured\n"
        "                           (default: 3 x --step-duration)\n"
        "\n"
        "SLO and stop conditions:\n"
        "  --slo ttft=D,tpot=D,e2e=D  per-request thresholds (any subset); goodput counts\n"
        "                           requests that completed ok and met every one\n"
        "  --attainment PCT         share of scheduled requests that must meet the SLO (default "
        "99)\n"
        "  --lateness-tolerance P   a step is INVALID when the generator's own lateness moves\n"
        "                           its TTFT or E2E p50/p90/p99 by more than max(1ms, P of it)\n"
        "                           (default 2%%); the search treats such a step as unknown\n"
        "  --max-error-rate PCT     stop when a step's error rate passes it (default 10)\n"
        "  --ttft-limit D           stop when a step's TTFT p99 passes it (default 20 x the SLO's\n"
        "                           TTFT, or 30s without one)\n"
        "  (the sweep also stops when goodput is below its peak two steps in a row)\n"
        "\n"
        "Server metrics (docs/server-metrics.md): as `llmload run`; one scraper for the\n"
        "whole sweep, joined to each step's window:\n"
        "  --metrics-url URL        scrape this Prometheus /metrics (default: BASE with /v1\n"
        "                           replaced by /metrics, if it answers at the start)\n"
        "  --metrics-interval D     scrape period (default 1s, at least 100ms)\n"
        "  --no-metrics             do not scrape\n"
        "  --engine-limits seqs=N,kv_tokens=N\n"
        "                           the engine's running-batch bound and KV cache (tokens),\n"
        "                           either or both, for the first-limit finding (KV: default\n"
        "                           what /metrics exports; sequences: none exports them)\n"
        "\n"
        "Findings, cost and CI checks:\n"
        "  --headroom PCT           operate at this share of the SLO capacity (default 80)\n"
        "  --forecast R             replicas needed for a forecast peak of R req/s\n"
        "  --cost-per-hour X        price of one replica per hour: cost per million output tokens\n"
        "  --replicas N             replicas behind --url (default 1)\n"
        "  --expect-capacity R      exit 7 when the SLO capacity is below R req/s\n"
        "  --expect-slo             exit 7 when any load step misses the SLO\n"
        "\n"
        "Target, workload, timeouts and output: as `llmload run` (--url, --api, --model,\n"
        "--no-stream, --ignore-eos, -H, --api-key-env, --http2, --http-client, --insecure,\n"
        "--cacert, --arrival constant|poisson|gamma, --burstiness, --seed, --prompt-salt\n"
        "(each step and repeat gets its own text from it), --prompt-tokens,\n"
        "--output-tokens, --timeout-*, --threads, --out, --force, --grace, --max-line,\n"
        "--quiet, --tag, and the workload flags --workload, --prefix-*, --all-unique,\n"
        "--cancel-*, --prompt-ids, --prompt-id-range, --calibration, --calibrate auto: the\n"
        "fit made once, before the first step); see llmload run --help for their defaults.\n"
        "\n"
        "Exit status: 0 ok, 1 INVALID (the generator's lateness made every step unfit to\n"
        "judge), 2 bad flags, 3 could not run, 6 no step had an ok request, 7 an\n"
        "--expect-* check failed, 130 interrupted (run.json says where).\n"
        "When several apply the lowest wins, except 130. See docs/run.md.\n",
        SWEEP_DEFAULT_MAX_STEPS);
}

/* The sweep's own flags, as given. */
struct sweep_opts {
    const char *rates, *step_duration, *max_step_duration, *min_hold_factor, *gap, *repeat,
        *probe_duration, *max_steps, *confirm;
    const char *recovery_duration, *overload_duration, *attainment, *max_error_rate, *ttft_limit, *headroom;
    const char *forecast, *cost, *replicas, *expect_capacity;
    const char *metrics_url, *metrics_interval, *engine_limits;
    const char *cold_restart, *cold_restart_timeout;
    int no_recovery, expect_slo, no_metrics;
};

/* The plan that comes out of the flags. */
struct sweep_plan {
    double rates[SWEEP_MAX_RATES];
    size_t n_rates;                 /* 0 = auto */
    uint64_t step_ns, warmup_ns, gap_ns, probe_ns, recovery_ns;
    int step_auto;                      /* --step-duration auto: step_ns is the minimum */
    uint64_t max_step_ns;               /* auto: the longest hold */
    int recovery_given, overload_given; /* their flags were given (auto: else from the
                                     * last hold) */
    uint64_t overload_ns;           /* the recovery step's lead-in at the top rate; 0 = none */
    uint32_t repeat, max_steps;
    uint32_t confirm; /* re-runs of a failing rate below a passing one */
    int recovery;
    const char *cold_restart;         /* --cold-restart CMD, NULL = none */
    uint64_t cold_restart_timeout_ns; /* for CMD, and again for the target to answer */
};


/* The flags only `sweep` has, in the groups of its --help; runopts_parse
 * adds the shared ones. */
#define VALUE(name, field) RUNOPTS_VALUE(name, struct sweep_opts, field)
#define SET(name, field) RUNOPTS_SET(name, struct sweep_opts, field)
static const struct runopts_flag sweep_own_flags[] = {
    /* the steps */
    VALUE("rates", rates),
    VALUE("step-duration", step_duration),
    VALUE("max-step-duration", max_step_duration),
    VALUE("min-hold-factor", min_hold_factor),
    VALUE("gap", gap),
    VALUE("repeat", repeat),
    VALUE("probe-duration", probe_duration),
    VALUE("max-steps", max_steps),
    VALUE("confirm", confirm),
    SET("no-recovery", no_recovery),
    VALUE("recovery-duration", recovery_duration),
    VALUE("overload-duration", overload_duration),
    VALUE("cold-restart", cold_restart),
    VALUE("cold-restart-timeout", cold_restart_timeout),
    /* stop conditions */
    VALUE("attainment", attainment),
    VALUE("max-error-rate", max_error_rate),
    VALUE("ttft-limit", ttft_limit),
    /* findings, cost and CI checks */
    VALUE("headroom", headroom),
    VALUE("forecast", forecast),
    VALUE("cost-per-hour", cost),
    VALUE("replicas", replicas),
    VALUE("expect-capacity", expect_capacity),
    SET("expect-slo", expect_slo),
    /* server metrics */
    VALUE("metrics-url", metrics_url),
    VALUE("metrics-interval", metrics_interval),
    SET("no-metrics", no_metrics),
    VALUE("engine-limits", engine_limits),
};
#undef VALUE
#undef SET

static int parse_args(int argc, char **argv, struct run_opts *o, struct sweep_opts *so,
                      char *err, size_t errlen)
{
    const struct runopts_table own = {sweep_own_flags, LL_ARRAY_LEN(sweep_own_flags), so};
    int first;
    return runopts_parse(argc, argv, "sweep", &own, 0, o, &first, err, errlen);
}

/* A percentage flag: a number in (lo, hi], stored as a fraction. */
static int opt_percent(const char *name, const char *v, double lo, double hi, double *out,
                       char *err, size_t errlen)
{
    double x;
    if (ll_parse_double(v, &x) != 0 || !(x > lo) || x > hi)
        return runopts_errf(err, errlen, "%s: expected a percentage above %g and at most %g "
                            "(e.g. 99), got \"%s\"", name, lo, hi, v);
    *out = x / 100;
    return 0;
}

static int parse_rates(const char *spec, struct sweep_plan *p, char *err, size_t errlen)
{
    if (strcmp(spec, "auto") == 0) {
        p->n_rates = 0;
        return 0;
    }
    const char *s = spec;
    while (*s) {
        const char *comma = strchr(s, ',');
        size_t len = comma ? (size_t)(comma - s) : strlen(s);
        char item[64];
        if (len == 0 || len >= sizeof item)
            return runopts_errf(err, errlen, "--rates: expected auto or a list of positive rates "
                                "(e.g. 2,4,8), got \"%s\"", spec);
        memcpy(item, s, len);
        item[len] = '\0';
        double x;
        if (ll_parse_count(item, &x) != 0 || !(x > 0))
            return runopts_errf(err, errlen, "--rates: \"%s\" is not a positive rate (in "
                                "\"%s\")", item, spec);
        if (p->n_rates == SWEEP_MAX_RATES)
            return runopts_errf(err, errlen, "--rates: at most %d rates", SWEEP_MAX_RATES);
        p->rates[p->n_rates++] = x;
        if (!comma)
            break;
        s = comma + 1;
        if (!*s)
            return runopts_errf(err, errlen, "--rates: trailing comma in \"%s\"", spec);
    }
    return 0;
}

/* A duration flag of at least min_ns (min_text says it in the message),
 * def when absent. */
static int plan_duration(const char *name, const char *v, const char *def, uint64_t min_ns,
                         const char *min_text, uint64_t *out_ns, char *err, size_t errlen)
{
    if (runopts_duration(name, v ? v : def, out_ns, err, errlen) != 0)
        return LL_E_INVAL;
    if (*out_ns < min_ns)
        return runopts_errf(err, errlen, "%s: at least %s, got \"%s\"", name, min_text, v);
    return 0;
}

/* The steps: --rates, durations, --gap, --repeat, --max-steps and the
 * recovery step's flags. */
static int plan_steps(const struct run_opts *o, const struct sweep_opts *so,
                      struct sweep_plan *p, struct sweep_settings *set, char *err, size_t errlen)
{
    if (parse_rates(so->rates ? so->rates : "auto", p, err, errlen) != 0)
        return LL_E_INVAL;
    set->auto_rates = p->n_rates == 0;
    const char *step = so->step_duration ? so->step_duration : SWEEP_DEFAULT_STEP;
    if (strcmp(step, "auto") == 0 || strncmp(step, "auto:", 5) == 0) {
        p->step_auto = 1;
        step = step[4] ? step + 5 : SWEEP_DEFAULT_STEP;
    }
    if (plan_duration("--step-duration", step, SWEEP_DEFAULT_STEP, 100 * LL_NS_PER_MS, "100ms",
                      &p->step_ns, err, errlen) != 0 ||
        runopts_duration("--warmup", o->warmup ? o->warmup : SWEEP_DEFAULT_WARMUP, &p->warmup_ns,
                         err, errlen) != 0 ||
        (so->gap && runopts_duration("--gap", so->gap, &p->gap_ns, err, errlen) != 0) ||
        plan_duration("--probe-duration", so->probe_duration, SWEEP_DEFAULT_PROBE,
                      500 * LL_NS_PER_MS, "500ms", &p->probe_ns, err, errlen) != 0)
        return LL_E_INVAL;
    if (so->probe_duration && !set->auto_rates)
        return runopts_errf(err, errlen, "--probe-duration: applies to --rates auto only");
    if (so->max_step_duration && !p->step_auto)
        return runopts_errf(err, errlen,
                            "--max-step-duration: applies to --step-duration auto "
                            "only");
    if (plan_duration("--max-step-duration", so->max_step_duration, SWEEP_DEFAULT_MAX_STEP,
                      100 * LL_NS_PER_MS, "100ms", &p->max_step_ns, err, errlen) != 0)
        return LL_E_INVAL;
    if (p->step_auto && p->max_step_ns < p->step_ns)
        return runopts_errf(err, errlen,
                            "--max-step-duration: %s is shorter than the "
                            "--step-duration auto minimum",
                            so->max_step_duration ? so->max_step_duration : SWEEP_DEFAULT_MAX_STEP);
    if (so->min_hold_factor) {
        double x;
        if (ll_parse_double(so->min_hold_factor, &x) != 0 || !(x > 0) || x > 1000)
            return runopts_errf(err, errlen,
                                "--min-hold-factor: expected a number above 0 and "
                                "at most 1000 (e.g. 5), got \"%s\"",
                                so->min_hold_factor);
        set->min_hold_factor = x;
    }
    p->repeat = 1;
    p->max_steps = SWEEP_DEFAULT_MAX_STEPS;
    if ((so->repeat && runopts_count_upto("--repeat", so->repeat, 100, &p->repeat, err,
                                          errlen) != 0) ||
        (so->max_steps && runopts_count_upto("--max-steps", so->max_steps, 1000, &p->max_steps,
                                             err, errlen) != 0))
        return LL_E_INVAL;
    p->confirm = 1;
    if (so->confirm && strcmp(so->confirm, "0") == 0)
        p->confirm = 0;
    else if (so->confirm &&
             runopts_count_upto("--confirm", so->confirm, 10, &p->confirm, err, errlen) != 0)
        return LL_E_INVAL;
    p->recovery = !so->no_recovery;
    if (so->no_recovery && so->recovery_duration)
        return runopts_errf(err, errlen, "--recovery-duration: not with --no-recovery");
    if (so->no_recovery && so->overload_duration)
        return runopts_errf(err, errlen, "--overload-duration: not with --no-recovery");
    p->recovery_given = so->recovery_duration != NULL;
    p->overload_given = so->overload_duration != NULL;
    p->recovery_ns = SWEEP_RECOVERY_STEPS * p->step_ns;
    if (so->recovery_duration && runopts_duration("--recovery-duration", so->recovery_duration,
                                                  &p->recovery_ns, err, errlen) != 0)
        return LL_E_INVAL;
    if (p->recovery_ns == 0)
        return runopts_errf(err, errlen, "--recovery-duration: must be more than 0");
    p->overload_ns = p->step_ns;
    if (so->overload_duration && runopts_duration("--overload-duration", so->overload_duration,
                                                  &p->overload_ns, err, errlen) != 0)
        return LL_E_INVAL;
    return 0;
}

/* --engine-limits seqs=N,kv_tokens=N (either or both, each at most once)
 * into set: 0, or LL_E_INVAL with a one-line reason naming the bad key or
 * value. */
static int parse_engine_limits(const char *v, struct sweep_settings *set, char *err, size_t errlen)
{
    char buf[256];
    if (snprintf(buf, sizeof buf, "%s", v) >= (int)sizeof buf)
        return runopts_errf(err, errlen, "--engine-limits: too long");
    if (!buf[0])
        return runopts_errf(err, errlen, "--engine-limits: expected seqs=N,kv_tokens=N");
    char *save = NULL;
    for (char *kv = strtok_r(buf, ",", &save); kv; kv = strtok_r(NULL, ",", &save)) {
        char *eq = strchr(kv, '=');
        if (!eq)
            return runopts_errf(err, errlen,
                                "--engine-limits: \"%s\" is not KEY=N (keys: seqs, kv_tokens)", kv);
        *eq = '\0';
        uint64_t n;
        int seqs = strcmp(kv, "seqs") == 0;
        if (!seqs && strcmp(kv, "kv_tokens") != 0)
            return runopts_errf(err, errlen,
                                "--engine-limits: unknown key \"%s\" (keys: seqs, kv_tokens)", kv);
        if (ll_parse_u64(eq + 1, &n) != 0 || n == 0 || (seqs && n > UINT32_MAX))
            return runopts_errf(err, errlen,
                                "--engine-limits: %s=\"%s\" is not a whole number from 1%s", kv,
                                eq + 1, seqs ? " to 4294967295" : "");
        if ((seqs && set->engine_seqs) || (!seqs && set->engine_kv_tokens))
            return runopts_errf(err, errlen, "--engine-limits: %s given twice", kv);
        if (seqs) {
            set->engine_seqs = (uint32_t)n;
            set->engine_seqs_source = "engine_limits";
        } else
            set->engine_kv_tokens = n;
    }
    return 0;
}

/* The verdicts' settings: --attainment, --max-error-rate, --ttft-limit,
 * the capacity plan and the --expect-* checks. */
static int plan_settings(const struct sweep_opts *so, struct sweep_settings *set, char *err,
                         size_t errlen)
{
    if (so->attainment &&
        opt_percent("--attainment", so->attainment, 0, 100, &set->attainment, err, errlen) != 0)
        return LL_E_INVAL;
    if (so->max_error_rate && opt_percent("--max-error-rate", so->max_error_rate, -1e-9, 100,
                                          &set->max_error_rate, err, errlen) != 0)
        return LL_E_INVAL;
    if (so->ttft_limit) {
        if (runopts_duration("--ttft-limit", so->ttft_limit, &set->ttft_limit_ns, err,
                             errlen) != 0)
            return LL_E_INVAL;
        if (!set->ttft_limit_ns)
            return runopts_errf(err, errlen, "--ttft-limit: must be more than 0");
    } else {
        set->ttft_limit_ns = set->slo.ttft_ns ? SWEEP_TTFT_LIMIT_SLO_FACTOR * set->slo.ttft_ns
                                              : SWEEP_DEFAULT_TTFT_LIMIT_NS;
    }
    if ((so->headroom &&
         opt_percent("--headroom", so->headroom, 0, 100, &set->headroom, err, errlen) != 0) ||
        (so->forecast &&
         runopts_positive("--forecast", so->forecast, &set->forecast_rps, err, errlen) != 0))
        return LL_E_INVAL;
    if (so->cost) {
        double x;
        if (ll_parse_double(so->cost, &x) != 0 || !(x > 0))
            return runopts_errf(err, errlen, "--cost-per-hour: expected a positive price (e.g. "
                                "2.5), got \"%s\"", so->cost);
        set->cost_per_hour = x;
    }
    if (so->replicas &&
        runopts_count_upto("--replicas", so->replicas, 100000, &set->replicas, err, errlen) != 0)
        return LL_E_INVAL;
    if (so->expect_capacity && runopts_positive("--expect-capacity", so->expect_capacity,
                                                &set->expect_capacity_rps, err, errlen) != 0)
        return LL_E_INVAL;
    set->expect_slo = so->expect_slo;
    if (so->engine_limits && parse_engine_limits(so->engine_limits, set, err, errlen) != 0)
        return LL_E_INVAL;
    return 0;
}

/* Every flag into cfg, the plan and the settings: 0, or LL_E_INVAL with
 * the reason in err (cfg is the caller's to free either way). */
/* --cold-restart CMD and --cold-restart-timeout D (default
 * SWEEP_DEFAULT_COLD_TIMEOUT); CMD needs --cold-start, whose requests it
 * makes cold in every step. */
static int plan_cold(const struct sweep_opts *so, const struct run_config *cfg,
                     struct sweep_plan *p, char *err, size_t errlen)
{
    if (so->cold_restart_timeout && !so->cold_restart)
        return runopts_errf(err, errlen, "--cold-restart-timeout: needs --cold-restart");
    if (!so->cold_restart)
        return 0;
    if (!so->cold_restart[0])
        return runopts_errf(err, errlen, "--cold-restart: expected a shell command, got \"\"");
    if (!cfg->cold_requests)
        return runopts_errf(err, errlen,
                            "--cold-restart: needs --cold-start N (the requests "
                            "of each step to label cold)");
    p->cold_restart = so->cold_restart;
    if (plan_duration("--cold-restart-timeout", so->cold_restart_timeout,
                      SWEEP_DEFAULT_COLD_TIMEOUT, 100 * LL_NS_PER_MS, "100ms",
                      &p->cold_restart_timeout_ns, err, errlen) != 0)
        return LL_E_INVAL;
    return 0;
}

static int build_plan(const struct run_opts *o, const struct sweep_opts *so,
                      struct run_config *cfg, struct sweep_plan *p, struct sweep_settings *set,
                      char *err, size_t errlen)
{
    runopts_config_init(cfg); /* each step sets its own step */
    memset(p, 0, sizeof *p);
    sweep_settings_init(set);
    if (runopts_slo(o, cfg, err, errlen) != 0)
        return LL_E_INVAL;
    set->slo = cfg->slo;
    set->lateness_tolerance = cfg->lateness_tolerance;
    uint64_t seed;
    if (runopts_seed(o, &seed, err, errlen) != 0 || plan_steps(o, so, p, set, err, errlen) != 0 ||
        plan_settings(so, set, err, errlen) != 0)
        return LL_E_INVAL;

    cfg->mode = LOAD_OPEN;
    if (runopts_arrival(o, seed, &cfg->arrival, err, errlen) != 0)
        return LL_E_INVAL;
    cfg->arrival.rate_per_s = p->n_rates ? p->rates[0] : 1;
    char why[200];
    if (arrival_config_check(&cfg->arrival, why, sizeof why) != 0)
        return runopts_errf(err, errlen, "--rates: %s", why);
    cfg->grace_ns = 5 * LL_NS_PER_SEC;
    if (o->grace && runopts_duration("--grace", o->grace, &cfg->grace_ns, err, errlen) != 0)
        return LL_E_INVAL;
    int rc = runopts_workload_transport(o, seed, cfg, err, errlen);
    if (rc != 0)
        return rc;
    /* The flags that judge against an SLO need one: --slo, or a class's
     * own (a file of two classes or more, which the sweep breaks out). */
    const struct wl_file *wf = cfg->workload.classes;
    int have_slo = slo_is_set(&set->slo);
    for (size_t k = 0; wf && wf->n >= 2 && k < wf->n; k++)
        have_slo |= slo_is_set(&wf->classes[k].slo);
    static const char *const need = "needs --slo, or --workload classes with their own slo";
    if (!have_slo && so->attainment)
        return runopts_errf(err, errlen, "--attainment: %s", need);
    if (!have_slo && so->expect_slo)
        return runopts_errf(err, errlen, "--expect-slo: %s", need);
    if (!have_slo && so->expect_capacity)
        return runopts_errf(err, errlen, "--expect-capacity: %s", need);
    return plan_cold(so, cfg, p, err, errlen);
}

/* Every flag of `llmload sweep`: 0, RUNOPTS_HELP, or LL_E_INVAL with the
 * reason in err. */
static int sweep_flags(int argc, char **argv, struct run_opts *o, struct sweep_opts *so,
                       struct run_config *cfg, struct sweep_plan *p, struct sweep_settings *set,
                       uint64_t *metrics_interval_ns, char *err, size_t errlen)
{
    int rc = parse_args(argc, argv, o, so, err, errlen);
    if (rc != 0)
        return rc;
    if (build_plan(o, so, cfg, p, set, err, errlen) != 0)
        return LL_E_INVAL;
    return runopts_metrics_flags(so->metrics_interval, so->no_metrics, so->metrics_url,
                                 metrics_interval_ns, err, errlen);
}

/* ---- running ------------------------------------------------------------ */

/* Wait ns (the gap between steps), or until a SIGINT or SIGTERM comes
 * (they stay blocked for the whole sweep; the driver takes them during a
 * step). 1 when one came: it is taken. */
static int sleep_or_signal(uint64_t ns)
{
    sigset_t set;
    sigemptyset(&set);
    sigaddset(&set, SIGINT);
    sigaddset(&set, SIGTERM);
    uint64_t end = ll_now_ns() + ns;
    for (;;) {
        uint64_t now = ll_now_ns(), left = end > now ? end - now : 0;
        struct timespec ts = {.tv_sec = (time_t)(left / LL_NS_PER_SEC),
                              .tv_nsec = (long)(left % LL_NS_PER_SEC)};
        int sig = sigtimedwait(&set, NULL, &ts);
        if (sig == SIGINT || sig == SIGTERM)
            return 1;
        if (left == 0 || (sig < 0 && errno == EAGAIN))
            return 0;
    }
}

/* Closed-loop probe rounds with 16, 32, 64... users until the completion
 * rate stops rising by 10%: ok completions over the round's elapsed time.
 * Returns the best rate, 0 when nothing
 * completed (err says why when a round could not run). */
static double probe_capacity(const struct run_config *base, uint64_t probe_ns, int quiet,
                             double *first_e2e_p99_s, const char **stopped_in, uint64_t t0_abs_ns,
                             json_t *series, char *err, size_t errlen)
{
    double best = 0;
    *first_e2e_p99_s = 0;
    *stopped_in = NULL;
    for (uint32_t users = SWEEP_PROBE_FIRST_USERS; users <= SWEEP_PROBE_MAX_USERS; users *= 2) {
        struct run_config cfg = *base;
        struct driver_result res;
        cfg.mode = LOAD_CLOSED;
        cfg.users = users;
        runopts_dist("--think", "0", DIST_UNIT_DURATION_NS, 1, &cfg.think, err, errlen);
        cfg.duration_ns = probe_ns;
        cfg.warmup_ns = 0;
        cfg.cold_requests = 0; /* the steps' cold start, not the probe's */
        cfg.records_fd = -1;
        cfg.progress = 0;
        cfg.step = -1;
        if (driver_run(&cfg, &res, err, errlen) != 0) {
            driver_result_free(&res);
            return best;
        }
        /* Every ok completion over the whole round, drain included: the
         * users start together, so completions come in waves and a part
         * of the round over- or under-counts; the whole does not. */
        double rate = res.elapsed_ns ? (double)res.stats.by_kind[REC_OK] /
                                           ((double)res.elapsed_ns / 1e9)
                                     : 0;
        /* The round's in-flight samples, from the probe's start, for the
         * report's over-time chart. */
        uint64_t off = res.run_start_abs_ns >= t0_abs_ns ? res.run_start_abs_ns - t0_abs_ns : 0;
        for (size_t i = 0; i < res.n_series; i++) {
            json_t *pt = json_array();
            json_array_append_new(pt, json_integer((json_int_t)(off + res.series[i].t_ns)));
            json_array_append_new(pt, json_integer((json_int_t)res.series[i].inflight));
            json_array_append_new(series, pt);
        }
        uint64_t failed = stats_failed(&res.stats), done = res.stats.completed;
        if (users == SWEEP_PROBE_FIRST_USERS && hist_count(res.stats.e2e))
            *first_e2e_p99_s = (double)hist_percentile(res.stats.e2e, 99) / 1e9;
        *stopped_in = res.interrupted ? res.stopped_in : NULL;
        driver_result_free(&res);
        if (!quiet)
            ll_errorf("probe: %u users (closed loop): %.3g req/s completed", users, rate);
        if (*stopped_in)
            break;
        int errors = done && (double)failed / (double)done > 0.1;
        if (rate < 1.1 * best || errors) {
            if (rate > best && !errors)
                best = rate;
            break;
        }
        best = rate;
    }
    return best;
}

/* Round a rate to 3 significant digits, for readable steps. */
static double round3(double x)
{
    if (!(x > 0))
        return x;
    double p = pow(10, floor(log10(x)) - 2);
    return round(x / p) * p;
}

static void iso_now(char *buf, size_t len)
{
    time_t t = time(NULL);
    struct tm tm;
    if (t == (time_t)-1 || !gmtime_r(&t, &tm) || strftime(buf, len, "%Y-%m-%dT%H:%M:%SZ", &tm) == 0)
        snprintf(buf, len, "unknown");
}

static json_t *plan_json(const struct run_opts *o, const struct run_config *cfg,
                         const struct sweep_plan *p, const struct sweep_settings *set,
                         const char *model, const char *started)
{
    json_t *c = runopts_config_json(o, cfg, model);
    json_t *sw = sweep_settings_json(set);
    if (p->n_rates) {
        json_t *r = json_array();
        for (size_t i = 0; i < p->n_rates; i++)
            json_array_append_new(r, json_real(p->rates[i]));
        json_object_set_new(sw, "rates", r);
    } else {
        json_object_set_new(sw, "rates", json_string("auto"));
    }
    json_object_set_new(sw, "step_duration_ns", json_integer((json_int_t)p->step_ns));
    json_object_set_new(sw, "step_duration_auto", json_boolean(p->step_auto));
    if (p->step_auto)
        json_object_set_new(sw, "max_step_duration_ns", json_integer((json_int_t)p->max_step_ns));
    json_object_set_new(sw, "warmup_ns", json_integer((json_int_t)p->warmup_ns));
    /* The command is not kept: it may hold a credential (a token in a
     * URL or a header). That it ran, and its limit, are. */
    if (p->cold_restart) {
        json_object_set_new(sw, "cold_restart", json_true());
        json_object_set_new(sw, "cold_restart_timeout_ns",
                            json_integer((json_int_t)p->cold_restart_timeout_ns));
    }
    json_object_set_new(sw, "gap_ns", json_integer((json_int_t)p->gap_ns));
    json_object_set_new(sw, "repeat", json_integer(p->repeat));
    json_object_set_new(sw, "max_steps", json_integer(p->max_steps));
    json_object_set_new(sw, "confirm", json_integer(p->confirm));
    json_object_set_new(sw, "recovery", json_boolean(p->recovery));
    json_object_set_new(sw, "recovery_duration_ns", json_integer((json_int_t)p->recovery_ns));
    json_object_set_new(sw, "overload_duration_ns", json_integer((json_int_t)p->overload_ns));
    json_object_set_new(c, "sweep", sw);
    char mode[128];
    snprintf(mode, sizeof mode, "open-loop %s sweep", arrival_kind_name(cfg->arrival.kind));
    json_object_set_new(c, "mode_label", json_string(mode));
    json_object_set_new(c, "started_at", json_string(started));
    return c;
}

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
    uint32_t repeats;               /* --repeat: above 1, a load step's lines name its run */
    struct scraper *scraper;        /* the sweep's one scraper; NULL = not scraping */
    const char *cold_restart;       /* --cold-restart CMD, NULL = none */
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
};

/* --step-duration auto: the hold of a load step at rate, from the E2E p99
 * seen before it (sr->last_e2e_p99_s, at sr->last_rate): the hold rule's
 * factor times that p99, grown by the most the next step may add to it
 * (the square of the p99's rise over the last two steps, or the rise of
 * the rate, whichever is larger, at most doubled), at least the minimum and at most
 * --max-step-duration, rounded up to a whole second (100 ms under one). */
static uint64_t auto_hold(const struct sweep_run *sr, const struct sweep_plan *p,
                          const struct sweep_settings *set, double rate)
{
    if (!(sr->last_e2e_p99_s > 0))
        return sr->hold_ns;
    double growth = 1, r;
    if (sr->prev_e2e_p99_s > 0 && (r = sr->last_e2e_p99_s / sr->prev_e2e_p99_s) > 1)
        growth = r * r; /* the rise accelerates towards saturation */
    if (sr->last_rate > 0)
        growth = LL_MAX(growth, rate / sr->last_rate);
    growth = LL_MIN(growth, 2.0);
    double want = sweep_min_hold_factor(set) * sr->last_e2e_p99_s * growth;
    double unit = want >= 1 ? 1 : 0.1;
    double ns = ceil(want / unit - 1e-9) * unit * 1e9;
    if (!(ns > (double)p->step_ns))
        return p->step_ns;
    return ns >= (double)p->max_step_ns ? p->max_step_ns : (uint64_t)ns;
}

/* auto: note the E2E p99 of the load step just run (at rate), for the
 * next auto_hold. */
static void auto_hold_seen(struct sweep_run *sr, double rate, double e2e_p99_s)
{
    if (!(e2e_p99_s > 0))
        return;
    sr->prev_e2e_p99_s = sr->last_e2e_p99_s;
    sr->last_e2e_p99_s = e2e_p99_s;
    sr->last_rate = rate;
}

/* Join the scrapes to step s's window (run_start_abs_ns is the step's
 * t = 0) with the inner span, so back-to-back steps do not share counts,
 * and keep the figures in s->f.server. A window with no ok scrape keeps
 * only the counts (NAN figures): a gap, never a failed step. */
static void join_step(const struct sweep_run *sr, uint64_t run_start_abs_ns,
                      struct sweep_facts *f)
{
    struct sweep_server *v = &f->server;
    sweep_server_clear(v);
    if (!sr->scraper)
        return;
    v->present = 1;
    uint64_t t0 = run_start_abs_ns + f->warmup_ns, t1 = t0 + f->window_ns;
    struct scrape_join j;
    int rc = scrape_join(sr->scraper, t0, t1, SCRAPE_SPAN_INNER, &j);
    if (rc != 0 && rc != LL_E_NOTFOUND)
        return;
    v->scrapes = j.scrapes;
    v->failed = j.failed;
    if (rc != 0)
        return;
    snprintf(v->engine, sizeof v->engine, "%s", engines_kind_name(j.engine));
    if (j.waiting.present) {
        v->waiting_mean = j.waiting.mean;
        v->waiting_max = j.waiting.max;
    }
    if (j.running.present) {
        v->running_mean = j.running.mean;
        v->running_max = j.running.max;
    }
    if (j.kv_usage.present) {
        v->kv_mean = j.kv_usage.mean;
        v->kv_max = j.kv_usage.max;
    }
    v->kv_capacity_tokens = j.kv_capacity_tokens;
    if (j.preemptions.present)
        v->preemptions = j.preemptions.delta;
    if (j.generation_tokens.present)
        v->generation_tokens = j.generation_tokens.delta;
    if (j.prompt_tokens.present)
        v->prompt_tokens = j.prompt_tokens.delta;
    if (j.ttft_present && j.ttft_quantiles) {
        v->ttft_p50_s = j.ttft_p50_s;
        v->ttft_p99_s = j.ttft_p99_s;
        v->ttft_p99_lower_bound = isinf(j.ttft_p99_hi_s);
    }
    if (j.span_to_abs_ns > j.span_from_abs_ns && j.span_from_abs_ns >= run_start_abs_ns) {
        v->has_span = 1;
        v->span_from_ns = j.span_from_abs_ns - run_start_abs_ns;
        v->span_to_ns = j.span_to_abs_ns - run_start_abs_ns;
    }
}

/* The end of a step's line when some of its requests failed: "; failed
 * N: KIND COUNT, e.g.: SAMPLE" for each failed kind (the sample when one
 * was kept); "" when none failed. */
static void step_failures(const struct stats *st, char *buf, size_t len)
{
    size_t at = 0;
    buf[0] = '\0';
    uint64_t failed = stats_failed(st);
    if (failed == 0)
        return;
    int w = snprintf(buf, len, "; failed %" PRIu64 ":", failed);
    const char *sep = " ";
    for (int k = 0; k < REC_KIND_COUNT && w >= 0 && (at += (size_t)w) < len; k++) {
        w = 0;
        if (k == REC_OK || st->by_kind[k] == 0)
            continue;
        w = snprintf(buf + at, len - at, "%s%s %" PRIu64 "%s%s", sep,
                     rec_kind_name((enum rec_kind)k), st->by_kind[k],
                     st->sample[k][0] ? ", e.g.: " : "", st->sample[k]);
        sep = "; ";
    }
}

/* --cold-restart: run the command before step index and wait for it
 * (sr->cold_restart_timeout_ns), then for the target to answer again
 * (as long again). 0, 1 when a stop signal came (it is taken), or -1
 * (reason printed, naming the command) when it failed. */
static int cold_restart(struct sweep_run *sr, const struct run_config *cfg, uint32_t index)
{
    const char *cmd = sr->cold_restart;
    char d[32], err[600];
    ll_fmt_duration(sr->cold_restart_timeout_ns, d, sizeof d);
    if (!sr->quiet)
        ll_errorf("step %u: cold restart: %s", index, cmd);
    sigset_t stop;
    sigemptyset(&stop);
    sigaddset(&stop, SIGINT);
    sigaddset(&stop, SIGTERM);
    uint64_t ms = sr->cold_restart_timeout_ns / LL_NS_PER_MS;
    int rc = ll_shell_run(cmd, sr->child_mask, &stop, ms > INT32_MAX ? INT32_MAX : (int)ms);
    if (rc == 0) {
        rc = run_setup_wait_ready(cfg, sr->cold_restart_timeout_ns, err, sizeof err);
        if (rc == 0)
            return 0;
        if (rc != LL_E_INTR) {
            ll_errorf("--cold-restart: the target did not answer within %s after \"%s\": %s", d,
                      cmd, err);
            return -1;
        }
    }
    if (rc == LL_E_INTR) {
        sleep_or_signal(0);
        ll_errorf("interrupted during the cold restart before step %u: stopping", index);
        sr->stopped_in = "load";
        return 1;
    }
    if (rc == LL_E_AGAIN)
        ll_errorf("--cold-restart: \"%s\" did not end within %s (killed)", cmd, d);
    else if (rc < 0)
        ll_errorf("--cold-restart: cannot run \"%s\": %s", cmd, strerror(errno));
    else
        ll_errorf("--cold-restart: \"%s\" failed with exit status %d", cmd, rc);
    return -1;
}

/* Run one step at rate; append its facts and figures. Returns 0, 1 when it
 * was interrupted, or -1 (reason printed) when it could not run. A
 * recovery step with lead_rps > 0 offers lead_rps through its warm-up and
 * switches to rate at the warm-up's end (one driver run, one arrival
 * process: the backlog built in the lead-in is still there at the switch). */
static int run_step(struct sweep_run *sr, const struct run_config *base,
                    const struct sweep_settings *set, double rate, uint64_t warmup_ns,
                    uint64_t hold_ns, uint32_t repeat, int recovery, double lead_rps, int confirm)
{
    struct run_config cfg = *base;
    uint32_t index = (uint32_t)sr->n_steps;
    char err[512], id[32];
    /* "3", or "3 r2" for a rate's second run by --repeat (as the table). */
    struct sweep_facts idf = {.index = index, .repeat = repeat};
    sweep_step_label(&idf, sr->repeats > 1 && !recovery && !confirm, id, sizeof id);
    cfg.mode = LOAD_OPEN;
    cfg.arrival.rate_per_s = rate;
    if (recovery && lead_rps > 0 && warmup_ns > 0) {
        cfg.arrival.rate_per_s = lead_rps;
        cfg.arrival.switch_at_ns = warmup_ns;
        cfg.arrival.switch_to_per_s = rate;
    } else {
        lead_rps = 0;
    }
    cfg.arrival.seed = base->arrival.seed + index;
    cfg.workload.seed = base->workload.seed + index;
    /* The step's own content: what `llmload run --seed` of the step's seed
     * with the sweep's --prompt-salt sends, so no step or repeat shares a
     * prompt with another, nor with another sweep under another salt. */
    cfg.transport.seed = workload_content_seed(cfg.workload.seed, base->prompt_salt);
    cfg.warmup_ns = warmup_ns;
    cfg.duration_ns = warmup_ns + hold_ns;
    /* --cold-start: every step's first requests after --cold-restart,
     * else only the sweep's first step's (the server is warm after it). */
    cfg.cold_requests = sr->cold_restart || index == 0 ? base->cold_requests : 0;
    if (sr->cold_restart) {
        int cr = cold_restart(sr, &cfg, index);
        if (cr != 0)
            return cr;
    }
    cfg.records_fd = sr->records_fd;
    cfg.step = (int32_t)index;
    cfg.progress = 0;
    off_t from = lseek(sr->records_fd, 0, SEEK_END);
    if (from < 0) {
        ll_errorf("%s: %s", sr->records_path, strerror(errno));
        return -1;
    }
    if (!sr->quiet && lead_rps > 0)
        ll_errorf("step %s (recovery): %.4g req/s for %.3gs, then %.4g req/s for %.3gs", id,
                  lead_rps, (double)warmup_ns / 1e9, rate, (double)hold_ns / 1e9);
    else if (!sr->quiet) {
        char wu[48] = "no warm-up";
        if (warmup_ns > 0)
            snprintf(wu, sizeof wu, "+%.3gs warm-up", (double)warmup_ns / 1e9);
        ll_errorf("step %s%s: %.4g req/s for %.3gs (%s)", id,
                  recovery  ? " (recovery)"
                  : confirm ? " (re-run: it failed below a passing rate)"
                            : "",
                  rate, (double)hold_ns / 1e9, wu);
    }
    uint64_t started = ll_now_ns();
    struct driver_result res;
    if (driver_run(&cfg, &res, err, sizeof err) != 0) {
        ll_errorf("step %s: %s", id, err);
        driver_result_free(&res);
        return -1;
    }
    if (sr->n_steps == sr->cap_steps) {
        sr->cap_steps = sr->cap_steps ? sr->cap_steps * 2 : 16;
        sr->steps = ll_realloc(sr->steps, sr->cap_steps * sizeof *sr->steps);
        sr->points = ll_realloc(sr->points, sr->cap_steps * sizeof *sr->points);
    }
    struct sweep_step *s = &sr->steps[sr->n_steps++];
    sweep_step_init(s);
    struct sweep_facts *f = &s->f;
    f->index = index;
    f->repeat = repeat;
    f->recovery = recovery;
    f->confirm = confirm;
    f->offered_rps = rate;
    f->overload_rps = lead_rps;
    /* Records count from the driver's t = 0; so do the step's offset and
     * its in-flight samples, to share one axis with the server's scrapes. */
    f->start_offset_ns = res.run_start_abs_ns >= sr->start_ns ? res.run_start_abs_ns - sr->start_ns
                                                              : started - sr->start_ns;
    f->duration_ns = cfg.duration_ns;
    f->warmup_ns = warmup_ns;
    f->cold_start = cfg.cold_requests;
    f->cold_restart = sr->cold_restart != NULL;
    f->window_ns = res.window_ns;
    f->elapsed_ns = res.elapsed_ns;
    f->scheduled = res.stats.scheduled;
    f->inflight_mean = res.inflight_mean;
    f->inflight_max = res.inflight_max;
    f->interrupted = res.interrupted;
    hist_merge(f->lateness, res.stats.lateness);
    f->series = res.series;
    f->n_series = res.n_series;
    res.series = NULL;
    res.n_series = 0;
    /* Two classes or more: each class's scheduled count and own SLO go
     * into the step's facts; its figures come from the records' "class". */
    const struct wl_file *wf = cfg.workload.classes;
    if (wf && wf->n >= 2 && res.n_classes == wf->n && wf->n <= SWEEP_MAX_CLASSES) {
        sweep_step_classes_init(s, wf->n);
        for (size_t k = 0; k < wf->n; k++) {
            struct sweep_class_facts *c = &f->classes[k];
            snprintf(c->name, sizeof c->name, "%s", wf->classes[k].name);
            c->own_slo = wf->classes[k].slo;
            c->scheduled = res.class_stats[k].scheduled;
        }
    }
    int interrupted = res.interrupted;
    if (interrupted)
        sr->stopped_in = res.stopped_in;
    sr->ok_requests += res.stats.by_kind[REC_OK];
    sr->done_requests += res.stats.completed;
    join_step(sr, res.run_start_abs_ns >= started ? res.run_start_abs_ns : started, f);
    driver_result_free(&res);

    if (sweep_read_records(sr->records_path, (uint64_t)from, s, 1, set, err, sizeof err) != 0) {
        ll_errorf("%s", err);
        return -1;
    }
    sweep_step_finish(s, set);
    /* The facts, and the hold rule's verdict for whoever reads steps.jsonl
     * alone (`llmload report` derives it again from the records). */
    json_t *line = sweep_facts_json(f);
    json_object_set_new(line, "hold_factor",
                        isfinite(s->hold_factor) ? json_real(s->hold_factor) : json_null());
    json_object_set_new(line, "short", json_boolean(s->short_hold));
    /* The cold start's figures, for the reader of steps.jsonl alone
     * (`report` counts them again from the records). */
    if (f->cold_start)
        json_object_set_new(line, "cold", summary_cold_json(&s->cold, f->cold_start));
    char *text = json_dumps(line, JSON_COMPACT);
    json_decref(line);
    if (!text || fprintf(sr->steps_f, "%s\n", text) < 0 || fflush(sr->steps_f) != 0) {
        ll_errorf("%s/steps.jsonl: cannot write: %s", sr->dir, strerror(errno));
        free(text);
        return -1;
    }
    free(text);
    if (!sr->quiet) {
        char a[16], fails[1024];
        step_failures(&s->stats, fails, sizeof fails);
        ll_errorf("step %s: completed %.3g req/s, goodput %.3g req/s, TTFT p99 %s, %s%s%s%s", id,
                  s->completed_rps, s->goodput_rps, ll_fmt_duration(s->ttft_ns[3], a, sizeof a),
                  recovery      ? "recovery"
                  : s->slo_pass ? "ok"
                                : "fails",
                  !recovery && !s->slo_pass ? ": " : "", !recovery ? s->fail_reason : "", fails);
        if (f->cold_start)
            summary_print_cold(stderr, &s->cold, f->cold_start);
        if (s->short_hold)
            ll_errorf("step %s: short: held %.3gs, %.2g x its E2E p99 (under %g x)", id,
                      (double)f->window_ns / 1e9, s->hold_factor, sweep_min_hold_factor(set));
    }
    return interrupted ? 1 : 0;
}

/* The rate to re-run next (--confirm): the lowest known point that fails
 * while a higher one passes, re-run fewer than `confirm` times (an INVALID
 * re-run counts: it is no verdict, and is not tried for ever); -1 when
 * none. A point whose re-run passed passes, and is done. */
static long next_to_confirm(const struct sweep_point *pts, size_t np, uint32_t confirm)
{
    double top_pass = 0;
    for (size_t i = 0; i < np; i++)
        if (!pts[i].unknown && pts[i].pass)
            top_pass = LL_MAX(top_pass, pts[i].offered_rps);
    long best = -1;
    for (size_t i = 0; i < np; i++) {
        const struct sweep_point *pt = &pts[i];
        if (pt->unknown || pt->pass || pt->offered_rps >= top_pass || pt->rerun_steps >= confirm)
            continue;
        if (best < 0 || pt->offered_rps < pts[best].offered_rps)
            best = (long)i;
    }
    return best;
}

/* --confirm: re-run each rate that failed below a passing one (a result
 * not monotonic in load: one noisy step must not set the capacity), up to
 * p->confirm times or until a re-run passes. 0, 1 when interrupted, -1
 * when a step could not run. */
static int confirm_failures(struct sweep_run *sr, const struct run_config *base,
                            const struct sweep_plan *p, struct sweep_settings *set)
{
    for (;;) {
        size_t np = sweep_points_build(sr->steps, sr->n_steps, sr->points);
        long i = next_to_confirm(sr->points, np, p->confirm);
        if (i < 0)
            return 0;
        double rate = sr->points[i].offered_rps;
        uint32_t repeat = 0;
        for (size_t j = 0; j < sr->n_steps; j++)
            repeat += !sr->steps[j].f.recovery && sr->steps[j].f.offered_rps == rate;
        int st = run_step(sr, base, set, rate, p->warmup_ns, sr->hold_ns, repeat, 0, 0, 1);
        if (st < 0)
            return -1;
        if (st == 0 && sleep_or_signal(p->gap_ns)) {
            sr->stopped_in = "load";
            st = 1;
        }
        if (st > 0)
            return 1;
    }
}

/* Run every load step and the recovery step. Writes the stop reason. */
static int run_sweep(struct sweep_run *sr, const struct run_config *base,
                     const struct sweep_plan *p, struct sweep_settings *set, char *stop,
                     size_t stop_len)
{
    double top = 0;
    int rc = 0;
    stop[0] = '\0';
    for (uint32_t k = 0;; k++) {
        double rate;
        if (p->n_rates) {
            if (k >= p->n_rates)
                break;
            rate = p->rates[k];
        } else {
            rate = round3(set->estimate_rps * 0.1 * (k + 1));
        }
        if (k >= p->max_steps) {
            snprintf(stop, stop_len, "reached --max-steps %u", p->max_steps);
            break;
        }
        for (uint32_t r = 0; r < p->repeat; r++) {
            if (p->step_auto)
                sr->hold_ns = auto_hold(sr, p, set, rate);
            int st = run_step(sr, base, set, rate, p->warmup_ns, sr->hold_ns, r, 0, 0, 0);
            if (st < 0)
                return -1;
            const struct sweep_step *last = &sr->steps[sr->n_steps - 1];
            if (p->step_auto && last->stats.by_kind[REC_OK])
                auto_hold_seen(sr, rate, (double)last->e2e_ns[3] / 1e9);
            if (st == 0 && sleep_or_signal(p->gap_ns)) {
                sr->stopped_in = "load"; /* between two steps */
                st = 1;
            }
            if (st > 0) {
                snprintf(stop, stop_len, "interrupted by a signal");
                return 1;
            }
        }
        top = LL_MAX(top, rate);
        size_t np = sweep_points_build(sr->steps, sr->n_steps, sr->points);
        if (sweep_stop_check(sr->points, np, sr->steps, set, stop, stop_len))
            break;
    }
    rc = confirm_failures(sr, base, p, set);
    if (rc != 0) {
        if (rc > 0)
            snprintf(stop + strlen(stop), stop_len - strlen(stop), "%sinterrupted by a signal",
                     stop[0] ? "; " : "");
        return rc;
    }
    if (p->recovery && top > 0) {
        /* auto: the lead-in and the window follow the last hold, as they
         * follow --step-duration otherwise. */
        uint64_t overload_ns = p->step_auto && !p->overload_given ? sr->hold_ns : p->overload_ns;
        uint64_t recovery_ns = p->step_auto && !p->recovery_given
                                   ? SWEEP_RECOVERY_STEPS * sr->hold_ns
                                   : p->recovery_ns;
        rc = run_step(sr, base, set, round3(SWEEP_RECOVERY_FRACTION * top), overload_ns,
                      recovery_ns, 0, 1, top, 0);
        if (rc > 0)
            snprintf(stop + strlen(stop), stop_len - strlen(stop), "%sinterrupted by a signal",
                     stop[0] ? "; " : "");
    }
    return rc;
}

/* --rates auto: probe the capacity, note it in steps.jsonl and run.json.
 * LL_EXIT_OK, 130 when interrupted, or LL_EXIT_RUNTIME, reason printed. */
static int sweep_probe(struct run_setup *rs, struct sweep_run *sr, const struct run_config *cfg,
                       const struct sweep_plan *plan, struct sweep_settings *set, int quiet)
{
    char err[1200] = "";
    json_t *series = json_array();
    uint64_t t0 = ll_now_ns();
    double e2e_p99_s;
    set->estimate_rps = probe_capacity(cfg, plan->probe_ns, quiet, &e2e_p99_s, &sr->stopped_in, t0,
                                       series, err, sizeof err);
    uint64_t t1 = ll_now_ns();
    /* auto holds: the first step holds for the probe's first (least
     * loaded) round's E2E p99, as later steps do for the step before. */
    if (plan->step_auto)
        auto_hold_seen(sr, 0, e2e_p99_s);
    if (sr->stopped_in) {
        json_decref(series);
        ll_errorf("interrupted during the capacity probe");
        return LL_EXIT_INTR;
    }
    if (!(set->estimate_rps > 0)) {
        json_decref(series);
        /* Every round ran and none succeeded: 6; a round that could not run: 3. */
        ll_errorf("the capacity probe completed no request%s%s", err[0] ? ": " : "", err);
        return err[0] ? LL_EXIT_RUNTIME : LL_EXIT_NO_OK;
    }
    json_t *e = json_object();
    json_object_set_new(e, "kind", json_string("probe"));
    json_object_set_new(e, "estimate_rps", json_real(set->estimate_rps));
    /* When it ran, on the steps' clock (from the sweep's start), and the
     * clients' requests in flight meanwhile (docs/formats.md). */
    json_object_set_new(e, "start_offset_ns",
                        json_integer((json_int_t)(t0 >= sr->start_ns ? t0 - sr->start_ns : 0)));
    json_object_set_new(e, "duration_ns", json_integer((json_int_t)(t1 - t0)));
    json_object_set_new(e, "inflight_series", series);
    char *t = json_dumps(e, JSON_COMPACT);
    json_decref(e);
    fprintf(sr->steps_f, "%s\n", t ? t : "{}");
    free(t);
    json_object_set_new(json_object_get(json_object_get(rs->run, "config"), "sweep"),
                        "estimate_rps", json_real(set->estimate_rps));
    if (results_write_json_atomic(rs->dir, "run.json", rs->run, err, sizeof err) != 0) {
        ll_errorf("%s", err);
        return LL_EXIT_RUNTIME;
    }
    if (!quiet)
        ll_errorf("probe: estimated capacity %.3g req/s; stepping from %.3g req/s",
                  set->estimate_rps, round3(set->estimate_rps * 0.1));
    return LL_EXIT_OK;
}

/* Stop the scraper (NULL: none) and say how many scrapes failed. */
static void sweep_scraper_stop(struct scraper *sc, int quiet)
{
    if (!sc)
        return;
    scraper_stop(sc);
    uint64_t scrapes = 0, failed = 0;
    scraper_counts(sc, &scrapes, &failed);
    if (failed && !quiet)
        ll_errorf("server metrics: %llu of %llu scrapes of %s failed (counted as gaps)",
                  (unsigned long long)failed, (unsigned long long)scrapes, scraper_url(sc));
}

/* steps.jsonl's last line, {"kind": "end", "stop_reason": ...}. 0 or -1. */
static int sweep_end_line(FILE *f, const char *stop)
{
    json_t *end = json_object();
    json_object_set_new(end, "kind", json_string("end"));
    json_object_set_new(end, "stop_reason", stop[0] ? json_string(stop) : json_null());
    char *t = json_dumps(end, JSON_COMPACT);
    json_decref(end);
    int rc = !t || fprintf(f, "%s\n", t) < 0 || fflush(f) != 0 ? -1 : 0;
    free(t);
    return rc;
}

/* Everything one sweep is run from, parsed from its flags. */
struct sweep_job {
    struct run_opts o;
    struct sweep_opts so;
    struct run_config cfg;
    struct sweep_plan plan;
    struct sweep_settings set;
    uint64_t metrics_interval_ns;
};

int sweep_job_parse(int argc, char **argv, struct sweep_job **out, char *err, size_t errlen)
{
    struct sweep_job *j = ll_calloc(1, sizeof *j);
    int rc = sweep_flags(argc, argv, &j->o, &j->so, &j->cfg, &j->plan, &j->set,
                         &j->metrics_interval_ns, err, errlen);
    if (rc != 0) {
        sweep_job_free(j);
        *out = NULL;
        return rc;
    }
    *out = j;
    return 0;
}

void sweep_job_free(struct sweep_job *j)
{
    if (j == NULL)
        return;
    runopts_workload_free(&j->cfg);
    free(j);
}

int sweep_job_run(struct sweep_job *j)
{
    char err[1200];
    struct run_setup rs;
    struct sweep_run sr = {.records_fd = -1,
                           .quiet = j->o.quiet,
                           .repeats = j->plan.repeat,
                           .hold_ns = j->plan.step_ns};
    char path[1100], started[40], stop[256] = "";
    int st = 0;

    /* run_setup_open blocks SIGINT and SIGTERM until run_setup_close. */
    int exit_code = run_setup_open(&rs, &j->o, &j->cfg);
    if (exit_code == LL_EXIT_OK)
        exit_code = run_setup_calibrate(&rs, &j->o, &j->cfg);
    if (exit_code != LL_EXIT_OK)
        goto out;
    iso_now(started, sizeof started);
    json_t *plan = plan_json(&j->o, &j->cfg, &j->plan, &j->set, rs.target.model, started);
    exit_code = run_setup_results(&rs, &j->o, "sweep", plan, &j->cfg);
    if (exit_code != LL_EXIT_OK)
        goto out;
    exit_code = LL_EXIT_RUNTIME;
    sr.dir = rs.dir;
    sr.records_fd = rs.records_fd;
    snprintf(sr.records_path, sizeof sr.records_path, "%s", rs.records_path);
    snprintf(path, sizeof path, "%s/steps.jsonl", rs.dir);
    sr.steps_f = fopen(path, "we");
    if (!sr.steps_f) {
        ll_errorf("%s: %s", path, strerror(errno));
        goto out;
    }
    if (!run_setup_stopped(&rs, "probe"))
        run_setup_scraper(&rs, j->so.metrics_url, j->so.no_metrics, j->metrics_interval_ns, &j->cfg,
                          j->o.quiet);
    sr.start_ns = ll_now_ns();
    if (rs.scraper && scraper_start(rs.scraper, sr.start_ns, err, sizeof err) != 0) {
        ll_errorf("warning: server metrics: %s", err);
        scraper_free(rs.scraper);
        rs.scraper = NULL;
    }
    sr.scraper = rs.scraper;
    sr.cold_restart = j->plan.cold_restart;
    sr.cold_restart_timeout_ns = j->plan.cold_restart_timeout_ns;
    sr.child_mask = rs.masked ? &rs.old_mask : NULL;
    if (run_setup_stopped(&rs, "scrape_start")) {
        snprintf(stop, sizeof stop, "interrupted by a signal");
        exit_code = LL_EXIT_INTR;
        goto out;
    }

    if (j->set.auto_rates) {
        exit_code = sweep_probe(&rs, &sr, &j->cfg, &j->plan, &j->set, j->o.quiet);
        if (exit_code != LL_EXIT_OK) {
            if (sr.stopped_in)
                snprintf(stop, sizeof stop, "interrupted by a signal");
            goto out;
        }
        exit_code = LL_EXIT_RUNTIME;
    }
    st = run_sweep(&sr, &j->cfg, &j->plan, &j->set, stop, sizeof stop);
    sweep_scraper_stop(sr.scraper, j->o.quiet);
    if (st < 0 && sr.n_steps == 0)
        goto out;
    if (sweep_end_line(sr.steps_f, stop) != 0) {
        ll_errorf("%s: cannot write", path);
        goto out;
    }
    fclose(sr.steps_f);
    sr.steps_f = NULL;
    close(rs.records_fd);
    rs.records_fd = sr.records_fd = -1;

    printf("llmload sweep of %s (model %s): %s; seed %llu, prompt salt %llu%s\n\n",
           j->cfg.transport.base_url, rs.target.model,
           j->set.auto_rates ? "auto rates" : "given rates",
           (unsigned long long)j->cfg.workload.seed, (unsigned long long)j->cfg.prompt_salt,
           j->cfg.prompt_salt_auto ? " (auto)" : "");
    fflush(stdout);
    exit_code = report_build_dir(rs.dir, stdout);
    printf("results: %s (report.html, steps.csv, summary.json)\n", rs.dir);
    fflush(stdout);
    if (st < 0)
        exit_code = run_exit_combine(exit_code, LL_EXIT_RUNTIME);
    if (sr.done_requests && sr.ok_requests == 0 && !sr.stopped_in) {
        ll_errorf("no request succeeded in any step");
        exit_code = run_exit_combine(exit_code, LL_EXIT_NO_OK);
    }

out:
    if (!rs.stopped_in && sr.stopped_in)
        rs.stopped_in = sr.stopped_in;
    if (rs.run) {
        run_setup_stopped(&rs, "summary");
        if (rs.stopped_in) {
            exit_code = LL_EXIT_INTR;
            if (!stop[0])
                snprintf(stop, sizeof stop, "interrupted by a signal");
        }
        exit_code = run_setup_end(&rs, exit_code, stop[0] ? stop : NULL);
    }
    if (sr.steps_f)
        fclose(sr.steps_f);
    for (size_t i = 0; i < sr.n_steps; i++)
        sweep_step_free(&sr.steps[i]);
    free(sr.steps);
    free(sr.points);
    run_setup_close(&rs);
    return exit_code;
}

int sweep_main(int argc, char **argv)
{
    struct sweep_job *j;
    char err[1200];
    int rc = sweep_job_parse(argc, argv, &j, err, sizeof err);
    if (rc != 0)
        return runopts_usage_exit(rc, err, sweep_usage);
    rc = sweep_job_run(j);
    sweep_job_free(j);
    return rc;
}
