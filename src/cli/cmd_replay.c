/* cmd_replay.c: `llmload replay TRACE.jsonl`, a recorded trace offered
 * open-loop at its own (scaled) offsets, with its own lengths, classes,
 * prefixes, prompt texts and cancellations (docs/workload.md).
 *
 * The trace is read and checked whole before anything is sent. The run
 * itself is the driver's trace source (run_config.trace): worker w sends
 * entries i with i mod W == w at trace_scaled_sched_ns, so a replay keeps
 * every property of `llmload run`'s open loop: latencies from the
 * scheduled time, one record per entry, schedule lateness measured. */
#include <jansson.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli/cmds.h"
#include "cli/runopts.h"
#include "cli/runsetup.h"
#include "driver/driver.h"
#include "measure/expect.h"
#include "measure/hist.h"
#include "measure/summary.h"
#include "metrics/energy.h"
#include "metrics/scrape.h"
#include "util/util.h"
#include "workload/replay.h"
#include "workload/trace.h"

static void replay_usage(FILE *f)
{
    fprintf(
        f,
        "usage: llmload replay TRACE.jsonl [options]\n"
        "\n"
        "Offer a recorded trace open-loop, each request at its own offset from the\n"
        "trace start (sched_ns, t or timestamp), with its own prompt and output lengths,\n"
        "class, shared prefix, prompt text and cancellation. The trace format is in\n"
        "docs/workload.md; `llmload run --dump-schedule FILE` writes one. A run's\n"
        "requests.jsonl replays too: every request the run offered, at its scheduled offset.\n"
        "\n"
        "Timing:\n"
        "  --time-scale S           multiply every offset by S (2 = half as fast)\n"
        "  --rate-scale R           divide every offset by R (2 = twice the rate)\n"
        "  --duration D             offer only the requests whose scaled offset is before D\n"
        "  --requests N             offer only the first N requests (in arrival order)\n"
        "  --warmup D               requests scheduled in the first D are written, not summarised\n"
        "  --cold-start N           the lines whose index is below N (a line's own \"index\",\n"
        "                           else its position in time order) are cold: labelled\n"
        "                           \"cold\", summarised apart, never in the warm figures nor\n"
        "                           the warm-up\n"
        "  --max-tokens-total N     spend guard: stop offering before prompt+max tokens pass N\n"
        "  --seed N                 seed of the synthetic prompt text (default 1)\n"
        "  --prompt-salt auto|N     its salt: auto (default) draws one per replay; `run`'s seed\n"
        "                           and prompt_salt give a dumped schedule's exact prompts. A\n"
        "                           line's own prompt text is sent as it is\n"
        "\n"
        "Shards (docs/distributed.md): --shard K/N|auto, --shards N and --start-at TIME as\n"
        "`llmload run`; shard K replays the trace lines whose position p, in time order,\n"
        "has p mod N == K (a line's own \"index\" is its record's id, not its shard).\n"
        "\n"
        "GPU telemetry (docs/server-metrics.md):\n"
        "  --gpu-metrics URL        scrape a DCGM exporter's /metrics (or `llmload sim\n"
        "                           --gpu-metrics`) every second: the replay's energy per output\n"
        "                           token and per request, power (repeatable, up to 16: one per\n"
        "                           machine, summed; with --shard read by shard 0 alone)\n"
        "  --gpu-sampler nvidia-smi run nvidia-smi here (every 200 ms) for the same telemetry and\n"
        "                           energy, when the server's GPUs are on this machine\n"
        "\n"
        "Target, timeouts and output: as `llmload run` (--url, repeatable, and --url-weights,\n"
        "a trace's session on one endpoint; --api, --model, --no-stream, --ignore-eos,\n"
        "--extra-body, --extra-body-override, -H, --api-key-env, --http2, --http-client,\n"
        "--insecure, --cacert, --timeout-*, --threads, --out, --force,\n"
        "--grace, --max-line, --max-inflight, --quiet, --tag, --slo, --lateness-tolerance,\n"
        "--prompt-ids, --prompt-id-range).\n"
        "\n"
        "Calibration (docs/workload.md):\n"
        "  --calibration FILE       scale the synthetic prompt of each line without text by a fit\n"
        "                           from llmload calibrate, so this server counts the line's\n"
        "                           prompt_tokens (a line's own text is sent as it is)\n"
        "  --calibrate auto         calibrate against the target first, and scale by that fit\n"
        "\n"
        "Thresholds on the replay itself (exit 7 when one fails):\n"
        "  --expect SPEC            `llmload run`'s thresholds, e.g.\n"
        "                           'ttft_p99<500ms,error_rate<1%%': ttft_, tpot_, itl_,\n"
        "                           e2e_ percentiles, error_rate, error_rate_KIND,\n"
        "                           attainment and goodput (both need --slo),\n"
        "                           output_tokens_per_s; not achieved_rate, the trace's\n"
        "                           own send rate. `llmload report DIR` judges them again\n"
        "\n"
        "Exit status: 0 ok, 1 INVALID (the client (the host or the generator) could not\n"
        "keep the schedule), 2 bad flags or a bad trace, 3 could not run or records\n"
        "lost, 6 no request succeeded or none was in the window, 7 an --expect threshold\n"
        "failed, 130 interrupted (at any moment; run.json says where). When several\n"
        "apply the lowest wins, except 130. See docs/run.md.\n");
    fprintf(f, "\n%s", promopts_help);
    fprintf(f, "(replay reads only the GPU telemetry behind --prometheus: its energy figures)\n");
}

struct replay_opts {
    const char *trace_path;
    const char *time_scale, *rate_scale;
    const char *gpu_urls[RUNOPTS_MAX_GPU_URLS]; /* --gpu-metrics URLs, in flag order */
    size_t n_gpu_urls;
    int gpu_smi; /* --gpu-sampler nvidia-smi */
};

/* Everything `llmload replay`'s flags say: the shared flags, and its own. */
struct replay_args {
    struct run_opts o;
    struct replay_opts ro;
    const char *expect;   /* --expect's text, NULL = none */
    struct expect_set ex; /* parsed */
};

/* --gpu-metrics: repeatable, up to RUNOPTS_MAX_GPU_URLS URLs. */
static int take_gpu_url(void *dst, const char *a, char *err, size_t errlen)
{
    struct replay_opts *ro = &((struct replay_args *)dst)->ro;
    return runopts_gpu_url(a, ro->gpu_urls, &ro->n_gpu_urls, err, errlen);
}

/* --gpu-sampler: nvidia-smi. */
static int take_gpu_sampler(void *dst, const char *a, char *err, size_t errlen)
{
    return runopts_gpu_sampler(a, &((struct replay_args *)dst)->ro.gpu_smi, err, errlen);
}

/* --rate: not a replay flag, but getopt would take it as an abbreviation
 * of --rate-scale and divide every offset by the rate a user meant to
 * offer ("--rate 5" ran a 3 req/s trace at 15). Refused, saying what to
 * give instead; not in --help. */
static int refuse_rate(void *dst, const char *a, char *err, size_t errlen)
{
    return runopts_errf(err, errlen,
                        "--rate: a replay offers the trace at its own times; "
                        "--rate-scale R multiplies its rate by R (--time-scale S stretches it)");
}

/* The flags only `replay` has; runopts_parse adds the shared ones. */
static const struct runopts_flag replay_own_flags[] = {
    RUNOPTS_VALUE("time-scale", struct replay_args, ro.time_scale),
    RUNOPTS_VALUE("rate-scale", struct replay_args, ro.rate_scale),
    RUNOPTS_VALUE("duration", struct replay_args, o.duration),
    RUNOPTS_VALUE("requests", struct replay_args, o.requests),
    RUNOPTS_VALUE("max-tokens-total", struct replay_args, o.max_tokens_total),
    {"gpu-metrics", 0, RUNOPTS_KIND_CALL, 0, take_gpu_url},
    {"gpu-sampler", 0, RUNOPTS_KIND_CALL, 0, take_gpu_sampler},
    {"rate", 0, RUNOPTS_KIND_CALL, 0, refuse_rate},
    RUNOPTS_VALUE("expect", struct replay_args, expect),
};

static int parse_args(int argc, char **argv, struct replay_args *ra, char *err, size_t errlen)
{
    const struct runopts_table own = {replay_own_flags, LL_ARRAY_LEN(replay_own_flags), ra};
    int first;
    int rc = runopts_parse(argc, argv, "replay", &own, 1, &ra->o, &first, err, errlen);
    if (rc != 0)
        return rc;
    if (first >= argc)
        return runopts_errf(err, errlen, "replay: expected a trace file (llmload replay "
                            "TRACE.jsonl)");
    if (!argv[first][0])
        return runopts_errf(err, errlen, "replay: the trace file is an empty path");
    ra->ro.trace_path = argv[first];
    return 0;
}

/* The shared flags that describe what `run` generates have no meaning for
 * a trace, which brings its own: refuse them rather than ignore them. */
static int reject_generator_flags(const struct run_opts *o, char *err, size_t errlen)
{
    const struct {
        const char *value;
        const char *name;
    } flags[] = {
        {o->arrival, "--arrival"},
        {o->burstiness, "--burstiness"},
        {o->prompt_tokens, "--prompt-tokens"},
        {o->output_tokens, "--output-tokens"},
        {o->workload, "--workload"},
        {o->prefix_fraction, "--prefix-fraction"},
        {o->prefix_groups, "--prefix-groups"},
        {o->prefix_tokens, "--prefix-tokens"},
        {o->cancel_fraction, "--cancel-fraction"},
        {o->cancel_after, "--cancel-after"},
        {o->lengths, "--lengths"},
        {o->dataset, "--dataset"},
        {o->cancel_after_tokens, "--cancel-after-tokens"},
        {o->images, "--images"},
        {o->image_size, "--image-size"},
        {o->image_sizes, "--image-sizes"},
        {o->image_format, "--image-format"},
        {o->prefix_images, "--prefix-images"},
    };
    for (size_t i = 0; i < LL_ARRAY_LEN(flags); i++) {
        if (flags[i].value)
            return runopts_errf(err, errlen, "%s: applies to llmload run; a replay takes its "
                                "times, lengths, prefixes and cancellations from the trace",
                                flags[i].name);
    }
    if (o->all_unique)
        return runopts_errf(err, errlen, "--all-unique: applies to llmload run; a replay takes "
                            "its prefixes from the trace");
    return 0;
}

/* Flags into cfg; the trace is loaded by the caller. 0 or LL_E_INVAL. */
static int build_config(const struct run_opts *o, const struct replay_opts *ro,
                        struct run_config *cfg, char *err, size_t errlen)
{
    runopts_config_init(cfg);
    cfg->mode = LOAD_OPEN;
    uint64_t seed;
    double s = 1.0, r = 1.0;
    if (reject_generator_flags(o, err, errlen) != 0 || runopts_slo(o, cfg, err, errlen) != 0 ||
        runopts_seed(o, &seed, err, errlen) != 0 ||
        (ro->time_scale &&
         runopts_positive("--time-scale", ro->time_scale, &s, err, errlen) != 0) ||
        (ro->rate_scale &&
         runopts_positive("--rate-scale", ro->rate_scale, &r, err, errlen) != 0))
        return LL_E_INVAL;
    char why[200];
    if (trace_time_factor(s, r, &cfg->trace_factor, why, sizeof why) != 0)
        return runopts_errf(err, errlen, "--time-scale/--rate-scale: %s", why);
    if (o->duration &&
        runopts_duration_pos("--duration", o->duration, &cfg->duration_ns, err, errlen) != 0)
        return LL_E_INVAL;
    cfg->grace_ns = 5 * LL_NS_PER_SEC;
    if ((o->requests &&
         runopts_count("--requests", o->requests, 1, &cfg->max_requests, err, errlen) != 0) ||
        (o->warmup && runopts_duration("--warmup", o->warmup, &cfg->warmup_ns, err, errlen) != 0) ||
        (o->max_tokens_total && runopts_count("--max-tokens-total", o->max_tokens_total, 1,
                                              &cfg->max_tokens_total, err, errlen) != 0) ||
        (o->grace && runopts_duration("--grace", o->grace, &cfg->grace_ns, err, errlen) != 0))
        return LL_E_INVAL;
    return runopts_workload_transport(o, seed, cfg, err, errlen);
}

/* --expect as `llmload run` takes it (runopts_expect), less what a trace
 * fixes: the send rate (achieved_rate) is the trace's own offsets over
 * --rate-scale, not a figure of the server, and a replay that could not
 * keep them is INVALID already. cfg->trace is loaded. 0 or LL_E_INVAL. */
static int replay_expect(const char *spec, const struct run_config *cfg, struct expect_set *ex,
                         char *err, size_t errlen)
{
    if (runopts_expect(spec, cfg, ex, err, errlen) != 0)
        return LL_E_INVAL;
    for (size_t i = 0; i < ex->n; i++)
        if (strcmp(ex->item[i].metric, "achieved_rate") == 0)
            return runopts_errf(err, errlen,
                                "--expect: \"%s\": achieved_rate is the trace's own send rate "
                                "(its offsets, --rate-scale), not the server's; a replay that "
                                "cannot keep it is INVALID (exit 1)",
                                ex->item[i].text);
    return 0;
}

/* The flags, then the trace they name into *trace (caller frees with
 * trace_free) and cfg->trace: 0, RUNOPTS_HELP, or LL_E_INVAL with the
 * reason in err. What it loaded is the caller's to free either way. */
static int replay_flags(int argc, char **argv, struct replay_args *ra, struct run_config *cfg,
                        struct trace **trace, char *err, size_t errlen)
{
    const struct replay_opts *ro = &ra->ro;
    int rc = parse_args(argc, argv, ra, err, errlen);
    if (rc != 0)
        return rc;
    if (build_config(&ra->o, ro, cfg, err, errlen) != 0)
        return LL_E_INVAL;
    if (cfg->transport.api == OAI_API_EMBEDDINGS)
        return runopts_errf(err, errlen,
                            "--api openai-embeddings: not with llmload replay: a trace's "
                            "requests carry outputs; load embeddings with llmload run");
    if (trace_load(ro->trace_path, trace, err, errlen) != 0)
        return LL_E_INVAL;
    cfg->trace = *trace;
    /* Scaled past the bound of the file's own offsets, the last ones
     * saturated to a time no clock reaches: they were sent at once and
     * recorded as scheduled there. */
    double last_ns = (double)(*trace)->entries[(*trace)->n - 1].sched_ns;
    if (last_ns * cfg->trace_factor > (double)TRACE_MAX_SCHED_NS)
        return runopts_errf(err, errlen,
                            "--time-scale/--rate-scale: x%g puts the trace's last request "
                            "(at %.9gs) at %.3gs, past the %.3gs an offset may be",
                            cfg->trace_factor, last_ns / 1e9, last_ns * cfg->trace_factor / 1e9,
                            (double)TRACE_MAX_SCHED_NS / 1e9);
    if (runopts_prompt_ids_check_trace(cfg, *trace, ro->trace_path, err, errlen) != 0)
        return LL_E_INVAL;
    /* A calibration scales llmload's words; a line's own text goes as it is. */
    if ((ra->o.calibration || ra->o.calibrate) && !replay_has_synthetic(*trace))
        return runopts_errf(err, errlen,
                            "--%s: every line of %s carries prompt text, sent as it is; "
                            "there are no synthetic prompts to scale",
                            ra->o.calibration ? "calibration" : "calibrate", ro->trace_path);
    cfg->transport.cancels = replay_has_cancels(*trace);
    if (ra->expect && replay_expect(ra->expect, cfg, &ra->ex, err, errlen) != 0)
        return LL_E_INVAL;
    return runopts_spend_check(cfg, err, errlen);
}

/* run.json's config: the shared fields, then what a replay adds. */
static json_t *replay_config_json(const struct run_opts *o, const struct replay_opts *ro,
                                  const struct run_config *cfg, const char *model)
{
    json_t *c = runopts_config_json(o, cfg, model);
    json_object_set_new(c, "load_model", json_string("replay"));
    json_object_del(c, "rate_per_s");
    json_object_del(c, "arrival");
    json_object_del(c, "burstiness");
    json_object_del(c, "prompt_tokens");
    json_object_del(c, "output_tokens");
    json_object_set_new(c, "trace", json_string(ro->trace_path));
    json_object_set_new(c, "trace_requests", json_integer((json_int_t)cfg->trace->n));
    json_object_set_new(c, "time_factor", json_real(cfg->trace_factor));
    return c;
}

/* The GPU scrapers start with the driver's clock: its first live view. */
struct replay_live {
    struct scraper *const *gpu;
    size_t n_gpu;
    int started;
};

static void replay_live_cb(void *ud, const struct driver_live *v)
{
    struct replay_live *l = ud;
    if (!l->started)
        run_setup_gpu_start(l->gpu, l->n_gpu, v->run_start_abs_ns);
    l->started = 1;
}

/* After the driver: print the summary (with the trace's classes, each
 * line counted in its own) and finish the results directory. Returns
 * the exit status. */
static int replay_report(struct run_setup *rs, const struct replay_opts *ro,
                         const struct run_config *cfg, const struct trace *trace,
                         const struct expect_set *ex)
{
    const struct driver_result *res = &rs->res;
    char mode[300];
    size_t offered =
        replay_offered_count(trace, cfg->trace_factor, cfg->max_requests, cfg->duration_ns);
    char of[48] = "";
    if (offered < trace->n) /* --requests or --duration cut it: say how much was offered */
        snprintf(of, sizeof of, "the first %zu of ", offered);
    snprintf(mode, sizeof mode, "replay %s, %s%zu requests, offsets x%g", ro->trace_path, of,
             trace->n, cfg->trace_factor);
    struct summary_info info = {0};
    info.mode = mode;
    info.command = "replay";
    runopts_shard_label(cfg, mode, sizeof mode);
    info.offered_rate_per_s =
        replay_offered_rate(trace, cfg->trace_factor, cfg->max_requests, cfg->duration_ns) *
        runopts_shard_share(cfg);
    char slo_text[96];
    runopts_summary_info(cfg, res, rs->target.model, "the trace's times", 0, slo_text,
                         sizeof slo_text, &info);
    info.model_note = run_setup_model_note(rs);

    struct energy_figures energy;
    if (rs->n_gpu)
        run_setup_energy(rs->gpu_scrapers, rs->n_gpu, res, NAN, cfg->shard_launcher != NULL,
                         &energy);
    json_t *sj = run_setup_report(rs, cfg, &info, NULL, &energy);
    run_setup_judge(ex, sj, &info);
    return run_setup_finish(rs, sj, &info);
}

int replay_main(int argc, char **argv)
{
    struct replay_args ra = {0};
    struct run_config cfg;
    struct trace *trace = NULL;
    char err[RUNOPTS_ERR_MAX];
    memset(&cfg, 0, sizeof cfg);
    int rc = replay_flags(argc, argv, &ra, &cfg, &trace, err, sizeof err);
    if (rc != 0) {
        trace_free(trace);
        runopts_workload_free(&cfg);
        return runopts_usage_exit(rc, err, replay_usage);
    }

    struct run_setup rs;
    int exit_code = run_setup_open(&rs, &ra.o, &cfg);
    if (exit_code == LL_EXIT_OK)
        exit_code = run_setup_calibrate(&rs, &ra.o, &cfg);
    if (exit_code == LL_EXIT_OK)
        exit_code = run_setup_results(&rs, &ra.o, "replay",
                                      replay_config_json(&ra.o, &ra.ro, &cfg, rs.target.model),
                                      &cfg, &ra.ex);
    struct replay_live live = {0};
    /* GPU telemetry; with --shard on shard 0 alone, as for run (merge
     * divides its energy by every shard's tokens). */
    if (exit_code == LL_EXIT_OK && (ra.ro.n_gpu_urls || ra.ro.gpu_smi || ra.o.prom.url) &&
        (!cfg.shard_launcher || cfg.shard == 0)) {
        run_setup_gpu_scrapers(&rs, ra.ro.gpu_urls, ra.ro.n_gpu_urls, ra.ro.gpu_smi,
                               SCRAPE_DEFAULT_INTERVAL_NS, ra.o.quiet);
        live = (struct replay_live){.gpu = rs.gpu_scrapers, .n_gpu = rs.n_gpu};
        if (rs.n_gpu) {
            cfg.live_cb = replay_live_cb;
            cfg.live_ud = &live;
        }
    }
    if (exit_code == LL_EXIT_OK && run_setup_stopped(&rs, "probe"))
        exit_code = run_setup_end(&rs, LL_EXIT_INTR, "interrupted by a signal");
    else if (exit_code == LL_EXIT_OK)
        exit_code = run_setup_drive(&rs, &cfg) == 0
                        ? replay_report(&rs, &ra.ro, &cfg, trace, &ra.ex)
                        : LL_EXIT_RUNTIME;
    run_setup_close(&rs);
    runopts_workload_free(&cfg);
    trace_free(trace);
    return exit_code;
}
