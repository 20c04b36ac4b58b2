/* sweepplan.c: `llmload sweep`'s --help, its flags, and the plan they
 * make: the rates (or auto), each step's hold and warm-up (or auto), the
 * recovery step, --confirm and --repeat, the cold restart, and the
 * analysis settings (sweep_settings). Everything is checked here, before a
 * request is sent; cmd_sweep.c runs the plan. */
#include "cli/sweepplan.h"

#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "util/util.h"
#include "workload/wlfile.h"

void sweep_usage(FILE *f)
{
    fprintf(
        f,
        "usage: llmload sweep [options]\n"
        "\n"
        "A ladder of open-loop offered loads through saturation, then a recovery step:\n"
        "goodput, SLO capacity and the saturation knee. Every latency is measured from\n"
        "the time the request was scheduled. Writes run.json, requests.jsonl and\n"
        "hist.jsonl (all steps), steps.jsonl, steps.csv, summary.json and report.html;\n"
        "with a --workload file of two classes or more, a per-class breakdown in each,\n"
        "and classes.csv.\n"
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
        "  --gap D                  pause between steps (default 0; with "
        "--start-at " SWEEP_DEFAULT_FIXED_GAP ")\n"
        "  --repeat N               run each rate N times; mean and 95%% CI across its runs\n"
        "                           (its judged ones, when one was: not INVALID, empty or\n"
        "                           cut) (default 1)\n"
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
        "  --attainment PCT         share of scheduled requests that must meet the SLO (default\n"
        "                           99); a request the client cancelled before a miss is\n"
        "                           left out\n"
        "  --lateness-tolerance P   a step is INVALID when the client (the host or the\n"
        "                           generator) could not keep the schedule: its sends'\n"
        "                           lateness moves the step's TTFT or E2E p50/p90/p99\n"
        "                           by more than max(1ms, P of it) (default 2%%), unless\n"
        "                           one late send alone made it; the search treats such\n"
        "                           a step as unknown\n"
        "  --max-error-rate PCT     stop when a step's error rate passes it (default 10)\n"
        "  --ttft-limit D           stop when a step's TTFT p99 passes it (default 20 x the SLO's\n"
        "                           TTFT, or 30s without one)\n"
        "  (the sweep also stops when goodput is below its peak two steps in a row, both\n"
        "  offered more than the peak's rate: a falling ladder's goodput follows it down;\n"
        "  each fall more than 5%% and beyond counting noise, docs/sweep.md)\n"
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
        "                           what /metrics exports; sequences: no /metrics exports\n"
        "                           them, default llama.cpp's /props total_slots)\n"
        "  --gpu-metrics URL        scrape GPU telemetry (a DCGM exporter's /metrics, or\n"
        "                           `llmload sim --gpu-metrics`) for the whole sweep: each\n"
        "                           step's energy per output token and per request, power\n"
        "                           (repeatable, up to 16: one per machine, summed; with\n"
        "                           --shard read by shard 0 alone, per token after merge)\n"
        "  --gpu-sampler nvidia-smi run nvidia-smi here (every 200 ms) for the same telemetry and\n"
        "                           energy per step, when the server's GPUs are on this machine\n"
        "\n"
        "Findings, cost and CI checks:\n"
        "  --headroom PCT           operate at this share of the SLO capacity (default 80)\n"
        "  --forecast R             replicas needed for a forecast peak of R req/s\n"
        "  --cost-per-hour X        price of one replica per hour: cost per million output tokens\n"
        "  --replicas N             replicas behind --url (default 1)\n"
        "  --expect-capacity R      exit 7 when the SLO capacity is below R req/s\n"
        "  --expect-slo             exit 7 when any load step misses the SLO\n"
        "  --expect SPEC            exit 7 when a step at or under the SLO capacity fails a\n"
        "                           threshold, e.g. 'ttft_p99<500ms,error_rate<1%%' (as\n"
        "                           llmload run --expect; see docs/sweep.md)\n"
        "\n"
        "Target, workload, timeouts and output: as `llmload run` (--url, repeatable, and\n"
        "--url-weights: each step spreads its requests as a run does, its records carry\n"
        "\"endpoint\", and each step has a per-endpoint block and an endpoint far from\n"
        "the others is a finding; --api, --model, --no-stream, --ignore-eos, --extra-body,\n"
        "--extra-body-override, -H, --api-key-env, --http2, --http-client, --insecure,\n"
        "--cacert, --arrival constant|poisson|gamma,\n"
        "--burstiness, --seed, --prompt-salt (each step and repeat gets its own text from\n"
        "it), --prompt-tokens, --output-tokens, --batch, --timeout-*, --threads, --out,\n"
        "--force, --grace, --max-line, --max-inflight, --quiet, --tag, and the workload\n"
        "flags --workload, --prefix-*, --all-unique, --cancel-*, --lengths, --dataset,\n"
        "--images, --image-size, --image-sizes, --image-format, --prompt-ids,\n"
        "--prompt-id-range, --calibration, --calibrate auto: the fit made once, before the\n"
        "first step); see llmload run --help for their defaults.\n"
        "\n"
        "Shards (docs/distributed.md): --shard K/N|auto, --shards N and --start-at TIME as\n"
        "`llmload run`. With --start-at (which --shard needs) every step starts at a\n"
        "fixed offset from TIME: its warm-up, hold and --gap (default " SWEEP_DEFAULT_FIXED_GAP
        " then, the room\n"
        "its requests in flight have to finish) after the step before; --rates must be a\n"
        "list, --step-duration a duration; the stop conditions, --confirm and\n"
        "--cold-restart do not apply, so every shard runs the same ladder.\n"
        "\n"
        "Exit status: 0 ok, 1 INVALID (no step could be judged: in each, the client (the\n"
        "host or the generator) could not keep the schedule, or no request was in its\n"
        "window), 2 bad flags, 3 could not run, 6 no step had an ok request, 7 an\n"
        "--expect or --expect-* check failed, 130 interrupted (run.json says where).\n"
        "When several apply the lowest wins, except 130. See docs/run.md.\n",
        SWEEP_DEFAULT_MAX_STEPS);
    fprintf(f, "\n%s", promopts_help);
}

/* --burst: run's flag, not a sweep's, but getopt would take it as an
 * abbreviation of --burstiness and then blame that flag for run's syntax
 * ("--burstiness: expected a positive number ..., got \"at=2s,count=20\"",
 * or a bare count read as the burstiness). Refused by its own name; not
 * in --help. */
static int refuse_burst(void *dst, const char *a, char *err, size_t errlen)
{
    return runopts_errf(err, errlen,
                        "--burst: applies to llmload run; a sweep's steps take no bursts "
                        "(--burstiness K shapes each step's arrivals)");
}

/* --gpu-metrics: repeatable, up to RUNOPTS_MAX_GPU_URLS URLs. */
static int take_gpu_url(void *dst, const char *a, char *err, size_t errlen)
{
    struct sweep_opts *so = dst;
    return runopts_gpu_url(a, so->gpu_urls, &so->n_gpu_urls, err, errlen);
}

/* --gpu-sampler: nvidia-smi. */
static int take_gpu_sampler(void *dst, const char *a, char *err, size_t errlen)
{
    return runopts_gpu_sampler(a, &((struct sweep_opts *)dst)->gpu_smi, err, errlen);
}

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
    VALUE("expect", expect),
    /* server metrics */
    VALUE("metrics-url", metrics_url),
    VALUE("metrics-interval", metrics_interval),
    SET("no-metrics", no_metrics),
    VALUE("engine-limits", engine_limits),
    {"gpu-metrics", 0, RUNOPTS_KIND_CALL, 0, take_gpu_url},
    {"gpu-sampler", 0, RUNOPTS_KIND_CALL, 0, take_gpu_sampler},
    {"burst", 0, RUNOPTS_KIND_CALL, 0, refuse_burst},
};
#undef VALUE
#undef SET

static int parse_args(int argc, char **argv, struct run_opts *o, struct sweep_opts *so, char *err,
                      size_t errlen)
{
    const struct runopts_table own = {sweep_own_flags, LL_ARRAY_LEN(sweep_own_flags), so};
    int first;
    return runopts_parse(argc, argv, "sweep", &own, 0, o, &first, err, errlen);
}

static int parse_rates(const char *spec, struct sweep_plan *p, char *err, size_t errlen)
{
    if (strcmp(spec, "auto") == 0) {
        p->n_rates = 0;
        return 0;
    }
    if (!*spec) /* else an empty list would read as auto */
        return runopts_errf(err, errlen,
                            "--rates: expected auto or a list of positive rates (e.g. 2,4,8), "
                            "got \"\"");
    const char *s = spec;
    while (*s) {
        char item[64];
        size_t len = ll_list_item(s, item, sizeof item);
        if (len == 0 || len >= sizeof item)
            return runopts_errf(err, errlen,
                                "--rates: expected auto or a list of positive rates "
                                "(e.g. 2,4,8), got \"%s\"",
                                spec);
        double x;
        if (ll_parse_count(item, &x) != 0 || !(x > 0))
            return runopts_errf(err, errlen,
                                "--rates: \"%s\" is not a positive rate (in "
                                "\"%s\")",
                                item, spec);
        if (x > ARRIVAL_RATE_MAX_PER_S)
            return runopts_errf(err, errlen, "--rates: \"%s\" is above 1e9 per second (in \"%s\")",
                                item, spec);
        if (p->n_rates == SWEEP_MAX_RATES)
            return runopts_errf(err, errlen, "--rates: at most %d rates", SWEEP_MAX_RATES);
        p->rates[p->n_rates++] = x;
        if (!s[len])
            break;
        s += len + 1;
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
static int plan_steps(const struct run_opts *o, const struct sweep_opts *so, struct sweep_plan *p,
                      struct sweep_settings *set, char *err, size_t errlen)
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
    if ((so->repeat &&
         runopts_count_upto("--repeat", so->repeat, 100, &p->repeat, err, errlen) != 0) ||
        (so->max_steps &&
         runopts_count_upto("--max-steps", so->max_steps, 1000, &p->max_steps, err, errlen) != 0))
        return LL_E_INVAL;
    /* 0 (never re-run) is a valid count: a bad value says ">= 0", not
     * the ">= 1" of runopts_count_upto that read as if 0 were refused. */
    p->confirm = 1;
    if (so->confirm) {
        uint64_t n;
        if (runopts_count("--confirm", so->confirm, 0, &n, err, errlen) != 0)
            return LL_E_INVAL;
        if (n > 10)
            return runopts_errf(err, errlen, "--confirm: at most 10, got \"%s\"", so->confirm);
        p->confirm = (uint32_t)n;
    }
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
    for (char *kv = buf, *next; kv; kv = next) {
        next = strchr(kv, ',');
        if (next)
            *next++ = '\0';
        kv = ll_trim(kv); /* 'seqs=64, kv_tokens=22528', as --slo's lists */
        if (!kv[0])
            return runopts_errf(err, errlen, "--engine-limits: empty item in \"%s\"", v);
        char *eq = strchr(kv, '=');
        if (!eq)
            return runopts_errf(err, errlen,
                                "--engine-limits: \"%s\" is not KEY=N (keys: seqs, kv_tokens)", kv);
        *eq = '\0';
        kv = ll_trim(kv);
        char *val = ll_trim(eq + 1);
        uint64_t n;
        int seqs = strcmp(kv, "seqs") == 0;
        if (!seqs && strcmp(kv, "kv_tokens") != 0)
            return runopts_errf(err, errlen,
                                "--engine-limits: unknown key \"%s\" (keys: seqs, kv_tokens)", kv);
        if (ll_parse_u64(val, &n) != 0 || n == 0 || (seqs && n > UINT32_MAX))
            return runopts_errf(err, errlen,
                                "--engine-limits: %s=\"%s\" is not a whole number from 1%s", kv,
                                val, seqs ? " to 4294967295" : "");
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
        runopts_percent("--attainment", so->attainment, 0, 100, &set->attainment, err, errlen) != 0)
        return LL_E_INVAL;
    if (so->max_error_rate && runopts_percent("--max-error-rate", so->max_error_rate, -1e-9, 100,
                                              &set->max_error_rate, err, errlen) != 0)
        return LL_E_INVAL;
    if (so->ttft_limit) {
        if (runopts_duration_pos("--ttft-limit", so->ttft_limit, &set->ttft_limit_ns, err,
                                 errlen) != 0)
            return LL_E_INVAL;
    } else {
        set->ttft_limit_ns = set->slo.ttft_ns ? SWEEP_TTFT_LIMIT_SLO_FACTOR * set->slo.ttft_ns
                                              : SWEEP_DEFAULT_TTFT_LIMIT_NS;
    }
    if ((so->headroom &&
         runopts_percent("--headroom", so->headroom, 0, 100, &set->headroom, err, errlen) != 0) ||
        (so->forecast &&
         runopts_positive("--forecast", so->forecast, &set->forecast_rps, err, errlen) != 0))
        return LL_E_INVAL;
    if (so->cost) {
        double x;
        if (ll_parse_double(so->cost, &x) != 0 || !(x > 0))
            return runopts_errf(err, errlen,
                                "--cost-per-hour: expected a positive price (e.g. "
                                "2.5), got \"%s\"",
                                so->cost);
        set->cost_per_hour = x;
    }
    if (so->replicas &&
        runopts_count_upto("--replicas", so->replicas, 100000, &set->replicas, err, errlen) != 0)
        return LL_E_INVAL;
    if (so->expect_capacity && runopts_positive("--expect-capacity", so->expect_capacity,
                                                &set->expect_capacity_rps, err, errlen) != 0)
        return LL_E_INVAL;
    set->expect_slo = so->expect_slo;
    if (so->expect && expect_parse(so->expect, &set->expect, err, errlen) != 0)
        return LL_E_INVAL;
    if (so->engine_limits && parse_engine_limits(so->engine_limits, set, err, errlen) != 0)
        return LL_E_INVAL;
    return 0;
}

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

/* --start-at: fixed step times (sweepplan.h's `fixed`), so that the
 * shards of one sweep run the same steps at the same times. Refuses what
 * would need a decision from the whole sweep's results, which no one
 * shard has: auto rates (a probe), auto holds, the stop conditions and
 * --confirm re-runs, --cold-restart (each shard would restart the
 * server). --gap defaults to SWEEP_DEFAULT_FIXED_GAP, --confirm to 0. */
static int plan_fixed(const struct run_opts *o, const struct sweep_opts *so, struct sweep_plan *p,
                      char *err, size_t errlen)
{
    if (!o->start_at)
        return 0;
    static const char *const why = "with --start-at every shard runs the same ladder at fixed "
                                   "times";
    p->fixed = 1;
    if (!p->n_rates)
        return runopts_errf(err, errlen,
                            "--rates auto: %s, and auto rates need a capacity probe each shard "
                            "would run alone; give a list (e.g. --rates 2,4,8)",
                            why);
    if (p->step_auto)
        return runopts_errf(err, errlen,
                            "--step-duration auto: %s, and an auto hold follows each process's "
                            "own E2E p99; give a duration (e.g. --step-duration 10s)",
                            why);
    if (so->confirm && p->confirm > 0)
        return runopts_errf(err, errlen,
                            "--confirm: %s, and a re-run is decided from the whole sweep's "
                            "verdicts; give --confirm 0 (the default with --start-at)",
                            why);
    if (so->max_error_rate || so->ttft_limit)
        return runopts_errf(err, errlen,
                            "--%s: %s, so no stop condition ends it early (each shard would "
                            "stop on its own part)",
                            so->max_error_rate ? "max-error-rate" : "ttft-limit", why);
    if (so->cold_restart)
        return runopts_errf(err, errlen,
                            "--cold-restart: %s, and every shard would restart the server", why);
    p->confirm = 0;
    if (!so->gap && runopts_duration("--gap", SWEEP_DEFAULT_FIXED_GAP, &p->gap_ns, err, errlen))
        return LL_E_INVAL;
    return 0;
}

/* A shard offers its share of each rate: a threshold in requests per
 * second would judge the whole sweep's figure against one part. */
static int plan_shard_rates(const struct sweep_opts *so, const struct run_config *cfg,
                            const struct sweep_settings *set, char *err, size_t errlen)
{
    if (cfg->shards <= 1)
        return 0;
    if (so->expect_capacity)
        return runopts_errf(err, errlen,
                            "--expect-capacity: a rate judges the whole sweep, not one of "
                            "--shard's %u parts",
                            cfg->shards);
    for (size_t i = 0; i < set->expect.n; i++)
        if (set->expect.item[i].unit == EXPECT_RATE)
            return runopts_errf(err, errlen,
                                "--expect: \"%s\": a rate judges the whole sweep, not one of "
                                "--shard's %u parts",
                                set->expect.item[i].text, cfg->shards);
    return 0;
}

/* Every flag into cfg, the plan and the settings: 0, or LL_E_INVAL with
 * the reason in err (cfg is the caller's to free either way). */
static int build_plan(const struct run_opts *o, const struct sweep_opts *so, struct run_config *cfg,
                      struct sweep_plan *p, struct sweep_settings *set, char *err, size_t errlen)
{
    runopts_config_init(cfg); /* each step sets its own step */
    memset(p, 0, sizeof *p);
    sweep_settings_init(set);
    if (runopts_slo(o, cfg, err, errlen) != 0)
        return LL_E_INVAL;
    /* Shards of a sweep line up their steps by fixed times from one
     * --start-at (plan_fixed). */
    if (o->shard && !o->start_at)
        return runopts_errf(err, errlen,
                            "--shard: a sharded sweep needs --start-at TIME (every shard "
                            "starts each step at the same fixed offset from it)");
    set->slo = cfg->slo;
    set->lateness_tolerance = cfg->lateness_tolerance;
    uint64_t seed;
    if (runopts_seed(o, &seed, err, errlen) != 0 || plan_steps(o, so, p, set, err, errlen) != 0 ||
        plan_settings(so, set, err, errlen) != 0 || plan_fixed(o, so, p, err, errlen) != 0)
        return LL_E_INVAL;

    cfg->mode = LOAD_OPEN;
    if (runopts_arrival(o, seed, &cfg->arrival, err, errlen) != 0)
        return LL_E_INVAL;
    cfg->arrival.rate_per_s = p->n_rates ? p->rates[0] : 1;
    set->poisson_arrivals = cfg->arrival.kind == ARRIVAL_POISSON;
    char why[200];
    if (arrival_config_check(&cfg->arrival, why, sizeof why) != 0)
        return runopts_errf(err, errlen, "--rates: %s", why);
    cfg->grace_ns = 5 * LL_NS_PER_SEC;
    if (o->grace && runopts_duration("--grace", o->grace, &cfg->grace_ns, err, errlen) != 0)
        return LL_E_INVAL;
    int rc = runopts_workload_transport(o, seed, cfg, err, errlen);
    if (rc != 0 || runopts_expect_stream_check(&set->expect, cfg, err, errlen) != 0)
        return rc ? rc : LL_E_INVAL;
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
    /* --expect checks the steps at or under the SLO capacity (docs/sweep.md). */
    if (!have_slo && so->expect)
        return runopts_errf(err, errlen, "--expect: %s", need);
    if (plan_shard_rates(so, cfg, set, err, errlen) != 0)
        return LL_E_INVAL;
    return plan_cold(so, cfg, p, err, errlen);
}

int sweep_flags(int argc, char **argv, struct run_opts *o, struct sweep_opts *so,
                struct run_config *cfg, struct sweep_plan *p, struct sweep_settings *set,
                uint64_t *metrics_interval_ns, char *err, size_t errlen)
{
    int rc = parse_args(argc, argv, o, so, err, errlen);
    if (rc != 0)
        return rc;
    if (build_plan(o, so, cfg, p, set, err, errlen) != 0)
        return LL_E_INVAL;
    return runopts_metrics_flags(so->metrics_interval, so->no_metrics, so->metrics_url, o->prom.url,
                                 so->n_gpu_urls, metrics_interval_ns, err, errlen);
}
