/* cmd_run.c: `llmload run`, one load point. Parses and checks every flag
 * before anything is sent, asks the target about itself, writes run.json,
 * runs the driver, then prints and writes the summary. The flags it shares
 * with `llmload replay` and `sweep` live in runopts.c, the steps from the
 * target to the finished results directory in runsetup.c. */
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
#include "measure/results.h"
#include "measure/summary.h"
#include "metrics/energy.h"
#include "metrics/expose.h"
#include "metrics/promsource.h"
#include "metrics/scrape.h"
#include "util/util.h"
#include "workload/session.h"

#define RUN_DEFAULT_TURNS "3"

static void run_usage(FILE *f)
{
    fprintf(
        f,
        "usage: llmload run [options]\n"
        "\n"
        "One load point against an OpenAI-compatible endpoint. Every latency is measured\n"
        "from the time the request was scheduled, not from when it was sent.\n"
        "Each option in more words: docs/run.md. Durations (D, and --think's values)\n"
        "take a unit (ns, us, ms, s, m, h); a bare number is seconds.\n"
        "\n"
        "Target:\n"
        "  --url BASE               API base URL (default " RUNOPTS_DEFAULT_URL "); given\n"
        "                           more than once, the requests are spread over the endpoints:\n"
        "                           request i to endpoint i mod N, a session's turns to one\n"
        "                           (docs/run.md); records carry \"endpoint\", the summary a "
        "table\n"
        "  --url-weights W,...      uneven shares, a whole weight 1-100 per --url, in order\n"
        "                           (3,1: three requests to the first for one to the second)\n"
        "  --api NAME               openai-chat (default), openai-completions,\n"
        "                           anthropic-messages (POST BASE/messages),\n"
        "                           openai-responses (POST BASE/responses) or\n"
        "                           openai-embeddings (POST BASE/embeddings, not streamed)\n"
        "  --model NAME             model to ask for (default: the first id of BASE/models)\n"
        "  --no-stream              ask for one JSON body instead of an SSE stream (its SLO\n"
        "                           is e2e= alone: no first token before the last, no TPOT)\n"
        "  --ignore-eos             ask the server to generate exactly max_tokens\n"
        "  --extra-body JSON        add a JSON object's fields to every request body, e.g.\n"
        "                           '{\"temperature\":0}'; @FILE reads it from FILE. A class's\n"
        "                           extra_body is merged over it (docs/run.md)\n"
        "  --extra-body-override    let it replace a field llmload writes itself (model,\n"
        "                           messages/prompt, max_tokens, stream...), else refused\n"
        "  -H, --header 'N: V'      extra request header (repeatable; values never written out)\n"
        "  --api-key-env VAR        send $VAR as a Bearer token (default OPENAI_API_KEY, if set);\n"
        "                           anthropic-messages: as x-api-key (default ANTHROPIC_API_KEY)\n"
        "  --http2                  negotiate HTTP/2 (default HTTP/1.1)\n"
        "  --http-client C          auto (default): our own HTTP/1.1 client for http:// with no\n"
        "                           proxy, libcurl for https, --http2 and proxies; native; curl\n"
        "  --insecure               do not verify TLS certificates\n"
        "  --cacert FILE            CA bundle for TLS\n"
        "\n"
        "Load (pick one model):\n"
        "  --rate R                 open loop: R requests/s (e.g. 20, 1.5k)\n"
        "  --arrival KIND           constant, poisson (default) or gamma\n"
        "  --burstiness K           gamma shape, CV = 1/sqrt(K) (default 1 = Poisson)\n"
        "  --ramp-to R2             rate goes linearly from R to R2 over the duration (R may be\n"
        "                           0: a ramp up from nothing; R2 > 0)\n"
        "  --burst at=T,count=N[,prompt-tokens=P,output-tokens=Q]\n"
        "                           N extra requests all at T (repeatable; e.g. a cron job on the\n"
        "                           hour, or a burst of maximum-length prompts)\n"
        "  --max-concurrency K      with --rate: at most K in flight; waiting is client queue "
        "time\n"
        "  --on-cap queue|drop      what an arrival does at the cap (default queue)\n"
        "  --users N                closed loop: N users, each waits for its response\n"
        "  --think DIST             closed loop and sessions: think time after each response "
        "(default 0)\n"
        "  --pace INTERVAL          closed loop: each user starts at most one request per "
        "INTERVAL\n"
        "  --sessions R             partly open: R sessions/s arrive (--arrival, --burstiness "
        "apply),\n"
        "                           each a closed-loop chat whose context grows turn by turn;\n"
        "                           a failed turn ends its session\n"
        "  --turns DIST             sessions: turns per session (default 3, at most 1000)\n"
        "\n"
        "Bounds:\n"
        "  --duration D             offer load for D (e.g. 30s, 2m); default 10s unless "
        "--requests\n"
        "  --requests N             offer N requests\n"
        "  --warmup D               requests scheduled in the first D are written, not summarised\n"
        "  --cold-start N           the first N requests (by schedule index; sessions: the\n"
        "                           first N sessions) are cold: labelled \"cold\", summarised\n"
        "                           apart, never in the warm figures nor the warm-up\n"
        "  --max-tokens-total N     spend guard: stop offering before prompt+max tokens pass N\n"
        "  --seed N                 seed of the whole schedule (default 1)\n"
        "  --prompt-salt auto|N     salt of the prompt text, never the schedule: auto (default)\n"
        "                           draws one per run, so no two runs send the same text to a\n"
        "                           server's prefix cache; N (run.json's prompt_salt) sends a\n"
        "                           run's exact text again; sharded, auto is derived from\n"
        "                           --seed and --start-at, which every shard shares\n"
        "\n"
        "Shards of one schedule (docs/distributed.md):\n"
        "  --shard K/N|auto         offer only the requests i of the one schedule with\n"
        "                           i mod N == K (sessions and --users likewise); auto reads\n"
        "                           mpirun's, Slurm's or a Kubernetes Indexed Job's variables\n"
        "  --shards N               with --shard auto in an Indexed Job: the shard count\n"
        "  --start-at TIME          start the schedule at this wall-clock instant: RFC 3339 UTC\n"
        "                           (2026-12-02T11:00:00.5Z) or unix seconds (1796202000.5);\n"
        "                           more than 1s past is an error\n"
        "  --metrics-shard K        the one shard that scrapes the server's /metrics (default 0)\n"
        "\n"
        "Workload (DIST: N, uniform:A,B, normal:MU,SD, lognormal:MU,SIGMA, exponential:M,\n"
        "gamma:K,THETA, with optional ,min=X,max=Y; see docs/distributions.md):\n"
        "  --prompt-tokens DIST     prompt length in tokens (default " RUNOPTS_DEFAULT_PROMPT ")\n"
        "  --output-tokens DIST     max_tokens per request (default " RUNOPTS_DEFAULT_OUTPUT ")\n"
        "                           (either length: a median over 10M tokens is an error, a\n"
        "                           p99 over 1M a warning)\n"
        "  --batch DIST             openai-embeddings: inputs per request, each of\n"
        "                           --prompt-tokens (default 1, at most 2048)\n"
        "\n"
        "Timeouts (each is its own error kind; 0 = none):\n"
        "  --timeout-connect D      default 10s\n"
        "  --timeout-first-token D  from send to the first output event; default 60s\n"
        "  --timeout-idle D         longest silence between output events; default 30s\n"
        "  --timeout-total D        from send to the end; default 10m\n"
        "\n"
        "Run and output:\n"
        "  --threads N              worker threads (default: online CPUs, at most 8; half of\n"
        "                           them when the URL is loopback: the server needs CPU too)\n"
        "  --out DIR                results directory (default results/<timestamp>); {shard}\n"
        "                           and {host} in DIR are the shard index and the host name\n"
        "  --force                  write into an existing non-empty --out\n"
        "  --grace D                after Ctrl-C, time given to in-flight requests (default 5s)\n"
        "  --dump-schedule FILE     write the open-loop schedule as JSONL\n"
        "  --dry-run                with --dump-schedule: write it and send nothing\n"
        "  --max-line BYTES         longest SSE line accepted (default 262144)\n"
        "  --quiet                  no progress line and no notes (warnings still print)\n"
        "  --tag KEY=VALUE          what was measured (repeatable: engine=vllm-0.11.2 gpu=H100);\n"
        "                           run.json's tags, beside the server's own account (contract)\n"
        "  --slo ttft=D,tpot=D,e2e=D  thresholds for goodput (ok and every threshold met)\n"
        "  --lateness-tolerance P   INVALID when the client (the host or the generator)\n"
        "                           could not keep the schedule: its sends' lateness\n"
        "                           moves TTFT or E2E p50/p90/p99 by more than\n"
        "                           max(1ms, P of it) (default 2%%), unless one late send\n"
        "                           alone made it (then a warning)\n"
        "\n"
        "Server metrics (see docs/server-metrics.md):\n"
        "  --metrics-url URL        scrape this Prometheus /metrics during the run (default:\n"
        "                           BASE with /v1 replaced by /metrics, if it answers at the "
        "start)\n"
        "  --metrics-interval D     scrape period (default 1s, at least 100ms)\n"
        "  --no-metrics             do not scrape\n"
        "  --gpu-metrics URL        scrape GPU telemetry (a DCGM exporter's /metrics, or\n"
        "                           `llmload sim --gpu-metrics`) every --metrics-interval:\n"
        "                           energy per output token and per request, power\n"
        "                           (repeatable, up to 16: one per machine, summed; with\n"
        "                           --shard read by the --metrics-shard alone)\n"
        "  --gpu-sampler nvidia-smi run nvidia-smi here (every 200 ms) for the same GPU telemetry\n"
        "                           and energy, when the server's GPUs are on this machine\n"
        "  --cost-per-hour X        with --gpu-metrics, --gpu-sampler or --prometheus: the\n"
        "                           GPUs' price per hour, for the cost per million output tokens\n"
        "  --expose ADDR:PORT       serve llmload's own /metrics while it runs (e.g. "
        "127.0.0.1:9400)\n"
        "  --expose-linger D        with --expose: once every result file is written, serve\n"
        "                           the final /metrics for D more (default 0), then exit with\n"
        "                           the run's status; make D longer than Prometheus'\n"
        "                           scrape_interval. Ctrl-C or SIGTERM ends it at once\n"
        "\n"
        "Thresholds on the run itself (exit 7 when one fails):\n"
        "  --expect SPEC            e.g. 'ttft_p99<500ms,error_rate<1%%,goodput>=20/s':\n"
        "                           METRIC OP VALUE items, OP < <= > >=; metrics ttft_,\n"
        "                           tpot_, itl_, e2e_ with p50, p90, p95, p99 or p99_9\n"
        "                           (VALUE 500ms, 1.5s); error_rate, error_rate_KIND,\n"
        "                           attainment (in %%); goodput, achieved_rate,\n"
        "                           output_tokens_per_s (in /s);\n"
        "                           goodput and attainment need --slo (or --workload\n"
        "                           classes with their own slo: each request is judged\n"
        "                           by its class's)\n"
        "\n"
        "Exit status: 0 ok, 1 INVALID (the client (the host or the generator) could not\n"
        "keep the schedule), 2 bad flags, 3 could not run or records lost, 6 no request\n"
        "succeeded or none was in the window, 7 an --expect threshold failed, 130\n"
        "interrupted (Ctrl-C or SIGTERM at any moment, set-up included; run.json says\n"
        "where). When several apply the lowest wins, except 130. See docs/run.md.\n");
    fprintf(f, "\n%s", promopts_help);
    fprintf(f, "\n%s", runopts_workload_help);
}

/* The server-metrics flags (issue 6), kept beside run_opts. */
struct run_metrics_opts {
    const char *url, *interval, *expose;
    const char *linger;                      /* --expose-linger's text */
    uint64_t linger_ns;                      /* parsed; 0: no linger */
    const char *gpu_urls[RUN_SETUP_MAX_GPU]; /* --gpu-metrics URLs, in flag order */
    size_t n_gpu_urls;
    int gpu_smi;          /* --gpu-sampler nvidia-smi */
    const char *cost;     /* --cost-per-hour's text */
    double cost_per_hour; /* NAN when not given */
    const char *shard;    /* --metrics-shard K: the one shard that scrapes */
    uint32_t shard_k;
    int off;
    uint64_t interval_ns;
};

/* The partly-open session flags (issue 4), kept beside run_opts. */
#define RUN_MAX_BURSTS 64

struct run_session_opts {
    const char *sessions, *turns;
    const char *bursts[RUN_MAX_BURSTS]; /* --burst specs, in flag order */
    size_t n_bursts;
};

/* Everything `llmload run`'s flags say: the shared flags, and its own. */
struct run_args {
    struct run_opts o;
    struct run_metrics_opts mo;
    struct run_session_opts so;
    const char *expect;   /* --expect's text, NULL = none */
    struct expect_set ex; /* parsed */
};

/* --burst: repeatable, up to RUN_MAX_BURSTS, checked by parse_burst. */
static int take_burst(void *dst, const char *a, char *err, size_t errlen)
{
    struct run_session_opts *so = &((struct run_args *)dst)->so;
    if (so->n_bursts == RUN_MAX_BURSTS)
        return runopts_errf(err, errlen, "--burst: at most %d bursts", RUN_MAX_BURSTS);
    so->bursts[so->n_bursts++] = a;
    return 0;
}

/* --gpu-metrics: repeatable, up to RUN_SETUP_MAX_GPU URLs. */
static int take_gpu_url(void *dst, const char *a, char *err, size_t errlen)
{
    struct run_metrics_opts *mo = &((struct run_args *)dst)->mo;
    return runopts_gpu_url(a, mo->gpu_urls, &mo->n_gpu_urls, err, errlen);
}

/* --gpu-sampler: nvidia-smi. */
static int take_gpu_sampler(void *dst, const char *a, char *err, size_t errlen)
{
    return runopts_gpu_sampler(a, &((struct run_args *)dst)->mo.gpu_smi, err, errlen);
}

/* The flags only `run` has, in the groups of its --help; runopts_parse
 * adds the shared ones. */
#define VALUE(name, field) RUNOPTS_VALUE(name, struct run_args, field)
#define SET(name, field) RUNOPTS_SET(name, struct run_args, field)
static const struct runopts_flag run_own_flags[] = {
    /* the load */
    VALUE("rate", o.rate),
    VALUE("ramp-to", o.ramp_to),
    VALUE("max-concurrency", o.max_conc),
    VALUE("on-cap", o.on_cap),
    VALUE("users", o.users),
    VALUE("think", o.think),
    VALUE("pace", o.pace),
    /* bounds */
    VALUE("duration", o.duration),
    VALUE("requests", o.requests),
    VALUE("max-tokens-total", o.max_tokens_total),
    /* output */
    VALUE("dump-schedule", o.dump),
    SET("dry-run", o.dry_run),
    /* server metrics */
    VALUE("metrics-url", mo.url),
    VALUE("metrics-interval", mo.interval),
    SET("no-metrics", mo.off),
    VALUE("expose", mo.expose),
    VALUE("expose-linger", mo.linger),
    VALUE("metrics-shard", mo.shard),
    {"gpu-metrics", 0, RUNOPTS_KIND_CALL, 0, take_gpu_url},
    {"gpu-sampler", 0, RUNOPTS_KIND_CALL, 0, take_gpu_sampler},
    VALUE("cost-per-hour", mo.cost),
    /* sessions and bursts */
    VALUE("sessions", so.sessions),
    VALUE("turns", so.turns),
    {"burst", 0, RUNOPTS_KIND_CALL, 0, take_burst},
    /* thresholds on the run itself */
    VALUE("expect", expect),
};
#undef VALUE
#undef SET

/* What the driver's live view feeds during a run: the scraper starts on
 * the first call, so its lines count from the run start, and --expose
 * gets every view. */
struct run_live {
    struct scraper *scraper;
    struct scraper *const *gpu_scrapers; /* --gpu-metrics: the run setup's */
    size_t n_gpu;
    struct exposer *exposer;
    int scraper_started;
};

static void run_live_cb(void *ud, const struct driver_live *v)
{
    struct run_live *l = ud;
    if (l->scraper && !l->scraper_started) {
        char err[200];
        if (scraper_start(l->scraper, v->run_start_abs_ns, err, sizeof err) != 0)
            ll_errorf("warning: server metrics: %s", err);
    }
    if (!l->scraper_started)
        run_setup_gpu_start(l->gpu_scrapers, l->n_gpu, v->run_start_abs_ns);
    l->scraper_started = 1;
    expose_update(l->exposer, v);
}

static int parse_args(int argc, char **argv, struct run_args *ra, char *err, size_t errlen)
{
    const struct runopts_table own = {run_own_flags, LL_ARRAY_LEN(run_own_flags), ra};
    int first;
    return runopts_parse(argc, argv, "run", &own, 0, &ra->o, &first, err, errlen);
}

/* --sessions excludes the other load models and the flags only they take;
 * --turns needs it. */
static int check_session_flags(const struct run_opts *o, const struct run_session_opts *so,
                               char *err, size_t errlen)
{
    if (!so->sessions) {
        if (so->turns)
            return runopts_errf(err, errlen, "--turns: applies to --sessions only");
        return 0;
    }
    if (o->rate || o->users)
        return runopts_errf(err, errlen, "--sessions and --%s: pick one load model (open loop, "
                            "closed loop or partly open)", o->rate ? "rate" : "users");
    if (o->ramp_to || o->max_conc || o->on_cap || o->pace)
        return runopts_errf(err, errlen, "--sessions: --ramp-to, --max-concurrency, --on-cap "
                            "and --pace do not apply (a session's turns wait for each other)");
    if (o->dump)
        return runopts_errf(err, errlen, "--dump-schedule: a session's later turns depend on "
                            "the server; use --rate");
    return 0;
}

/* The partly-open model: sessions arrive by --arrival at --sessions R,
 * each runs --turns turns with --think between a response and the next
 * turn. */
static int session_config(const struct run_opts *o, const struct run_session_opts *so,
                          uint64_t seed, struct run_config *cfg, char *err, size_t errlen)
{
    char why[200];
    cfg->mode = LOAD_SESSIONS;
    if (runopts_arrival(o, seed, &cfg->arrival, err, errlen) != 0 ||
        runopts_rate("--sessions", so->sessions, &cfg->arrival.rate_per_s, err, errlen) != 0)
        return LL_E_INVAL;
    if (arrival_config_check(&cfg->arrival, why, sizeof why) != 0)
        return runopts_errf(err, errlen, "--sessions: %s", why);
    if (runopts_dist("--turns", so->turns ? so->turns : RUN_DEFAULT_TURNS, DIST_UNIT_NONE, 1,
                     &cfg->turns, err, errlen) != 0)
        return LL_E_INVAL;
    if (session_turns_check(&cfg->turns, why, sizeof why) != 0)
        return runopts_errf(err, errlen, "--turns: %s", why);
    return runopts_dist("--think", o->think ? o->think : "0", DIST_UNIT_DURATION_NS, 1,
                        &cfg->think, err, errlen);
}

/* run.json's config for a session run: the shared object says "open" for
 * any arrival process; correct it and add the session fields. Takes and
 * returns the reference. */
static json_t *session_config_json(json_t *c, const struct run_config *cfg)
{
    if (cfg->mode != LOAD_SESSIONS)
        return c;
    char buf[DIST_SPEC_MAX];
    json_object_set_new(c, "load_model", json_string("sessions"));
    json_object_set_new(c, "session_rate_per_s", json_real(cfg->arrival.rate_per_s));
    json_object_del(c, "rate_per_s");
    dist_format(&cfg->turns, buf, sizeof buf);
    json_object_set_new(c, "turns", json_string(buf));
    dist_format(&cfg->think, buf, sizeof buf);
    json_object_set_new(c, "think", json_string(buf));
    return c;
}

/* The rate the run offers, req/s, for the summary, summary.json and the
 * --expose gauge alike: the open-loop schedule's over the window (a
 * ramp's mean, bursts included: offer_rate_per_s), a shard's share of it
 * (docs/distributed.md); 0 for a closed loop. A session run's summary
 * then gives its request rate (session_summary_info). */
static double run_offered_rate(const struct run_config *cfg)
{
    return cfg->mode == LOAD_CLOSED ? 0 : offer_rate_per_s(cfg) * runopts_shard_share(cfg);
}

/* The mode label and the intended vs realised rates of a session run. */
static void session_summary_info(const struct run_config *cfg, const struct driver_result *res,
                                 char *mode, size_t len, struct summary_info *info)
{
    char turns[DIST_SPEC_MAX], think[DIST_SPEC_MAX];
    dist_format(&cfg->turns, turns, sizeof turns);
    dist_format(&cfg->think, think, sizeof think);
    int n = snprintf(mode, len, "partly-open: %s %g sessions/s, turns %s, think %s",
                     arrival_kind_name(cfg->arrival.kind), cfg->arrival.rate_per_s, turns, think);
    if (n < 0)
        snprintf(mode, len, "partly-open"); /* a label: a long one is cut, never wrong */
    info->sessions = 1;
    info->session_rate_per_s = cfg->arrival.rate_per_s * runopts_shard_share(cfg);
    info->session_turns_mean = session_turns_mean(&cfg->turns);
    info->offered_rate_per_s =
        cfg->arrival.rate_per_s * info->session_turns_mean * runopts_shard_share(cfg);
    info->sessions_started = res->sessions_in_window;
    info->sessions_cut = res->sessions_cut;
    info->sessions_failed = res->sessions_failed;
}

/* A session run whose count ended its arrivals: the realised session
 * rate over the span to the last session's start (summary_session_span),
 * from the driver's count of the sessions that arrived in the window and
 * the last one's arrival, as merge and report compute it from the records
 * (each session's first turn is scheduled at its arrival). */
static void session_arrivals(const struct run_config *cfg, const struct driver_result *res,
                             struct summary_info *info)
{
    if (cfg->mode != LOAD_SESSIONS)
        return;
    struct summary_session_starts st = {.n = res->sessions_in_window,
                                        .last_ns = res->last_session_start_ns};
    summary_session_span(info, cfg->duration_ns, &st);
}

/* A whole number of --burst key k, from 1 to max ("too large" past it, or
 * "at most" when at_most). */
static int burst_count(const char *k, const char *v, uint64_t max, int at_most, uint32_t *out,
                       char *err, size_t errlen)
{
    uint64_t n;
    if (runopts_count(k, v, 1, &n, err, errlen) != 0)
        return LL_E_INVAL;
    if (n > max)
        return at_most ? runopts_errf(err, errlen, "%s: at most %llu, got \"%s\"", k,
                                      (unsigned long long)max, v)
                       : runopts_errf(err, errlen, "%s: too large: \"%s\"", k, v);
    *out = (uint32_t)n;
    return 0;
}

/* Parse one --burst spec: at=T,count=N[,prompt-tokens=P][,output-tokens=Q]. */
static int parse_burst(const char *spec, struct burst *b, char *err, size_t errlen)
{
    char buf[256];
    if (strlen(spec) >= sizeof buf)
        return runopts_errf(err, errlen, "--burst: too long: \"%.40s...\"", spec);
    snprintf(buf, sizeof buf, "%s", spec);
    memset(b, 0, sizeof *b);
    int have_at = 0, rc = 0;
    for (char *part = buf, *next; part; part = next) {
        next = strchr(part, ',');
        if (next)
            *next++ = '\0';
        char *eq = strchr(part, '=');
        if (!eq)
            return runopts_errf(err, errlen,
                                "--burst: expected KEY=VALUE, got \"%s\" in "
                                "\"%s\"",
                                ll_trim(part), spec);
        *eq = '\0';
        part = ll_trim(part); /* 'at=5s, count=50', as --slo's lists */
        const char *v = ll_trim(eq + 1);
        if (strcmp(part, "at") == 0) {
            rc = runopts_duration("--burst at", v, &b->at_ns, err, errlen);
            have_at = 1;
        } else if (strcmp(part, "count") == 0) {
            rc = burst_count("--burst count", v, 1000000, 1, &b->count, err, errlen);
        } else if (strcmp(part, "prompt-tokens") == 0) {
            rc = burst_count("--burst prompt-tokens", v, DIST_TOKENS_MAX, 0, &b->prompt_tokens, err,
                             errlen);
        } else if (strcmp(part, "output-tokens") == 0) {
            rc = burst_count("--burst output-tokens", v, DIST_TOKENS_MAX, 0, &b->output_tokens, err,
                             errlen);
        } else {
            return runopts_errf(err, errlen, "--burst: unknown key \"%s\" (expected at, count, "
                                "prompt-tokens, output-tokens)", part);
        }
        if (rc != 0)
            return rc;
    }
    if (!have_at || !b->count)
        return runopts_errf(err, errlen, "--burst: needs at=T and count=N, got \"%s\"", spec);
    return 0;
}

static int burst_cmp(const void *a, const void *b)
{
    const struct burst *x = a, *y = b;
    return (x->at_ns > y->at_ns) - (x->at_ns < y->at_ns);
}

/* Which load model the flags ask for, and the flags that do not go with it. */
static int check_load_model(const struct run_opts *o, const struct run_session_opts *so,
                            char *err, size_t errlen)
{
    int open = o->rate != NULL, closed = o->users != NULL;
    if (so->n_bursts && !open)
        return runopts_errf(err, errlen, "--burst: applies to open-loop arrivals (--rate)");
    if (check_session_flags(o, so, err, errlen) != 0)
        return LL_E_INVAL;
    if (open && closed)
        return runopts_errf(err, errlen, "--rate and --users: pick one load model (open loop or "
                            "closed loop)");
    if (!open && !closed && !so->sessions)
        return runopts_errf(err, errlen, "no load given: use --rate R (open loop), --users N "
                            "(closed loop) or --sessions R (partly open)");
    if (closed && (o->arrival || o->burstiness || o->ramp_to || o->max_conc || o->on_cap))
        return runopts_errf(err, errlen, "--users: --arrival, --burstiness, --ramp-to and "
                            "--max-concurrency apply to --rate only");
    if (open && o->think)
        return runopts_errf(err, errlen,
                            "--think: a think time goes with --users or --sessions, not --rate");
    if (open && o->pace)
        return runopts_errf(err, errlen, "--pace: goes with --users, not --rate");
    if (o->think && o->pace)
        return runopts_errf(err, errlen, "--think and --pace: pick one");
    return 0;
}

/* --duration, --requests, --warmup, --max-tokens-total and --grace. */
static int bounds_config(const struct run_opts *o, struct run_config *cfg, char *err,
                         size_t errlen)
{
    if (o->duration &&
        runopts_duration_pos("--duration", o->duration, &cfg->duration_ns, err, errlen) != 0)
        return LL_E_INVAL;
    if (o->requests && runopts_count("--requests", o->requests, 1, &cfg->max_requests, err,
                                     errlen) != 0)
        return LL_E_INVAL;
    if (!o->duration && !o->requests)
        cfg->duration_ns = 10 * LL_NS_PER_SEC;
    if (o->warmup) {
        if (runopts_duration("--warmup", o->warmup, &cfg->warmup_ns, err, errlen) != 0)
            return LL_E_INVAL;
        if (cfg->duration_ns && cfg->warmup_ns >= cfg->duration_ns)
            return runopts_errf(err, errlen, "--warmup: %s leaves no measurement window inside "
                                "--duration %s", o->warmup, o->duration ? o->duration : "10s");
    }
    if (o->max_tokens_total && runopts_count("--max-tokens-total", o->max_tokens_total, 1,
                                             &cfg->max_tokens_total, err, errlen) != 0)
        return LL_E_INVAL;
    cfg->grace_ns = 5 * LL_NS_PER_SEC;
    if (o->grace && runopts_duration("--grace", o->grace, &cfg->grace_ns, err, errlen) != 0)
        return LL_E_INVAL;
    return 0;
}

/* --rate and --ramp-to into cfg's arrivals. The start rate may be 0
 * only at the start of a ramp (a ramp up from nothing). A ramp down to 0
 * is refused: to the arrivals a target of 0 means no ramp, and a rate of
 * 0 after the ramp would leave the rest of the run with no arrival. */
static int open_rates(const struct run_opts *o, struct run_config *cfg, char *err, size_t errlen)
{
    struct arrival_config *a = &cfg->arrival;
    double x;
    int from_zero = ll_parse_count(o->rate, &x) == 0 && x == 0;
    if (!from_zero && runopts_rate("--rate", o->rate, &a->rate_per_s, err, errlen) != 0)
        return LL_E_INVAL;
    if (o->ramp_to) {
        if (ll_parse_count(o->ramp_to, &x) == 0 && x == 0)
            return runopts_errf(err, errlen,
                                "--ramp-to: expected a positive rate, got \"%s\" "
                                "(a ramp down to 0 is not supported)",
                                o->ramp_to);
        if (runopts_rate("--ramp-to", o->ramp_to, &a->ramp_to_per_s, err, errlen) != 0)
            return LL_E_INVAL;
        if (!cfg->duration_ns)
            return runopts_errf(err, errlen, "--ramp-to: needs --duration (the ramp spans it)");
        a->ramp_ns = cfg->duration_ns;
    } else if (from_zero) {
        return runopts_errf(err, errlen,
                            "--rate 0 needs --ramp-to R2 (a ramp up from 0); "
                            "else expected a positive number (e.g. 20 or 1.5k)");
    }
    if (from_zero)
        a->rate_per_s = 0;
    return 0;
}

/* Open loop, capped or not: --rate, --ramp-to, --burst, --max-concurrency
 * and --on-cap. */
static int open_config(const struct run_opts *o, const struct run_session_opts *so, uint64_t seed,
                       struct run_config *cfg, char *err, size_t errlen)
{
    static struct burst bursts[RUN_MAX_BURSTS]; /* lives as long as the run */
    cfg->mode = o->max_conc ? LOAD_CAPPED : LOAD_OPEN;
    struct arrival_config *a = &cfg->arrival;
    if (open_rates(o, cfg, err, errlen) != 0 || runopts_arrival(o, seed, a, err, errlen) != 0)
        return LL_E_INVAL;
    char why[200];
    if (arrival_config_check(a, why, sizeof why) != 0)
        return runopts_errf(err, errlen, "--rate: %s", why);
    for (size_t i = 0; i < so->n_bursts; i++) {
        if (parse_burst(so->bursts[i], &bursts[i], err, errlen) != 0)
            return LL_E_INVAL;
        if (cfg->duration_ns && bursts[i].at_ns >= cfg->duration_ns)
            return runopts_errf(
                err, errlen, "--burst %s: at %.9gs is not inside --duration (%.9gs)", so->bursts[i],
                (double)bursts[i].at_ns / 1e9, (double)cfg->duration_ns / 1e9);
    }
    qsort(bursts, so->n_bursts, sizeof bursts[0], burst_cmp);
    cfg->bursts = bursts;
    cfg->n_bursts = so->n_bursts;
    if (o->max_conc && runopts_count_upto("--max-concurrency", o->max_conc, 1000000,
                                          &cfg->max_concurrency, err, errlen) != 0)
        return LL_E_INVAL;
    if (o->on_cap) {
        if (!o->max_conc)
            return runopts_errf(err, errlen, "--on-cap: needs --max-concurrency");
        if (strcmp(o->on_cap, "drop") == 0)
            cfg->on_cap_drop = 1;
        else if (strcmp(o->on_cap, "queue") != 0)
            return runopts_errf(err, errlen, "--on-cap: expected queue or drop, got \"%s\"",
                                o->on_cap);
    }
    return 0;
}

/* Closed loop: --users, --think and --pace. */
static int closed_config(const struct run_opts *o, struct run_config *cfg, char *err,
                         size_t errlen)
{
    cfg->mode = LOAD_CLOSED;
    if (runopts_count_upto("--users", o->users, 1000000, &cfg->users, err, errlen) != 0)
        return LL_E_INVAL;
    if (runopts_dist("--think", o->think ? o->think : "0", DIST_UNIT_DURATION_NS, 1, &cfg->think,
                     err, errlen) != 0)
        return LL_E_INVAL;
    if (o->pace && runopts_duration_pos("--pace", o->pace, &cfg->pace_ns, err, errlen) != 0)
        return LL_E_INVAL;
    return 0;
}

/* Turn the flags into a run config, rejecting every bad or contradictory
 * value before anything is sent. 0, or LL_E_INVAL with the reason in err;
 * cfg is the caller's to free (runopts_workload_free) either way. */
static int build_config(const struct run_opts *o, const struct run_session_opts *so,
                        struct run_config *cfg, char *err, size_t errlen)
{
    runopts_config_init(cfg);
    uint64_t seed;
    if (runopts_slo(o, cfg, err, errlen) != 0 || check_load_model(o, so, err, errlen) != 0 ||
        runopts_seed(o, &seed, err, errlen) != 0 || bounds_config(o, cfg, err, errlen) != 0)
        return LL_E_INVAL;
    int rc = so->sessions ? session_config(o, so, seed, cfg, err, errlen)
             : o->rate    ? open_config(o, so, seed, cfg, err, errlen)
                          : closed_config(o, cfg, err, errlen);
    if (rc != 0 || runopts_workload_transport(o, seed, cfg, err, errlen) != 0)
        return LL_E_INVAL;
    if (o->dry_run && !o->dump)
        return runopts_errf(err, errlen, "--dry-run: needs --dump-schedule FILE");
    return runopts_spend_check(cfg, err, errlen);
}

/* --expose and --expose-linger: 0, or LL_E_INVAL with the reason in err.
 * The address is checked here, not first when it is bound after the
 * target answered: a typo is a bad flag (exit 2), not a failed run. */
static int expose_flags(struct run_metrics_opts *mo, char *err, size_t errlen)
{
    char why[300];
    if (mo->expose && expose_check(mo->expose, why, sizeof why) != 0)
        return runopts_errf(err, errlen, "--expose: %s", why);
    if (!mo->linger)
        return 0;
    if (!mo->expose)
        return runopts_errf(err, errlen, "--expose-linger: goes with --expose");
    return runopts_duration("--expose-linger", mo->linger, &mo->linger_ns, err, errlen);
}

/* Every flag of `llmload run`, parsed and checked: 0, RUNOPTS_HELP, or
 * LL_E_INVAL with the reason in err. */
static int run_flags(int argc, char **argv, struct run_args *ra, struct run_config *cfg,
                     char *err, size_t errlen)
{
    int rc = parse_args(argc, argv, ra, err, errlen);
    if (rc != 0)
        return rc;
    if (build_config(&ra->o, &ra->so, cfg, err, errlen) != 0)
        return LL_E_INVAL;
    if (ra->expect && runopts_expect(ra->expect, cfg, &ra->ex, err, errlen) != 0)
        return LL_E_INVAL;
    struct run_metrics_opts *mo = &ra->mo;
    if (mo->shard) {
        uint64_t k;
        if (!cfg->shard_launcher)
            return runopts_errf(err, errlen, "--metrics-shard: goes with --shard");
        if (ll_parse_u64(mo->shard, &k) != 0 || k >= cfg->shards)
            return runopts_errf(err, errlen,
                                "--metrics-shard: expected a shard index from 0 to %u, got \"%s\"",
                                cfg->shards - 1, mo->shard);
        mo->shard_k = (uint32_t)k;
    }
    mo->cost_per_hour = NAN;
    if (mo->cost) {
        if (!mo->n_gpu_urls && !mo->gpu_smi && !ra->o.prom.url)
            return runopts_errf(err, errlen,
                                "--cost-per-hour: goes with --gpu-metrics, "
                                "--gpu-sampler or --prometheus");
        if (ll_parse_double(mo->cost, &mo->cost_per_hour) != 0 || !(mo->cost_per_hour >= 0) ||
            !isfinite(mo->cost_per_hour))
            return runopts_errf(err, errlen,
                                "--cost-per-hour: expected a non-negative number (e.g. 2.5), "
                                "got \"%s\"",
                                mo->cost);
    }
    if (expose_flags(mo, err, errlen) != 0)
        return LL_E_INVAL;
    return runopts_metrics_flags(mo->interval, mo->off, mo->url, ra->o.prom.url, mo->n_gpu_urls,
                                 &mo->interval_ns, err, errlen);
}

/* --expose's server, listening before the target is asked and before
 * --out is made: a port in use ends the run with nothing written (a
 * results directory made first was left with an empty requests.jsonl and
 * a run.json without its outcome). Says on stderr where it listens, even
 * with --quiet: after port 0 that line is how to find it. LL_EXIT_OK (no
 * --expose: *exposer NULL), or LL_EXIT_RUNTIME, reason printed. */
static int run_expose_open(const struct run_metrics_opts *mo, const struct run_config *cfg,
                           struct exposer **exposer)
{
    char err[512];
    *exposer = NULL;
    if (!mo->expose)
        return LL_EXIT_OK;
    *exposer = expose_new(mo->expose, run_offered_rate(cfg), err, sizeof err);
    if (!*exposer) {
        ll_errorf("--expose: %s", err);
        return LL_EXIT_RUNTIME;
    }
    ll_errorf("serving /metrics on http://%s/metrics", expose_addr(*exposer));
    return LL_EXIT_OK;
}

/* --expose-linger: the run's result files are all written (run_report
 * returned), the exposer's thread goes on serving the final page (the
 * driver's last view, llmload_run_finished 1) for linger_ns, or until
 * Ctrl-C or SIGTERM, which leave the run's exit status as it is. Said on
 * stderr, --quiet or not: it is why the process has not exited. None
 * after a run a stop signal ended: it was asked to end. */
static void run_expose_linger(struct run_setup *rs, const struct exposer *exposer,
                              uint64_t linger_ns)
{
    if (!exposer || !linger_ns || rs->stopped_in)
        return;
    fflush(stdout); /* the summary, before the wait, when stdout is a pipe */
    ll_errorf("results written; serving the final /metrics for %gs (Ctrl-C ends it)",
              (double)linger_ns / 1e9);
    run_setup_linger(rs, linger_ns);
}

/* run.json's expose_addr: where --expose listened, its port the one bound
 * (port 0 resolved), written now so that the file says it during the run.
 * LL_EXIT_OK, or LL_EXIT_RUNTIME when run.json cannot be written. */
static int run_expose_record(struct run_setup *rs, const struct exposer *exposer)
{
    char err[1200];
    if (!exposer)
        return LL_EXIT_OK;
    json_object_set_new(rs->run, "expose_addr", json_string(expose_addr(exposer)));
    if (results_write_json_atomic(rs->dir, "run.json", rs->run, err, sizeof err) != 0) {
        ll_errorf("%s", err);
        return LL_EXIT_RUNTIME;
    }
    return LL_EXIT_OK;
}

/* The scraper (unless --no-metrics) and the live view's readers: it and
 * --expose's server (run_expose_open's, in live->exposer). */
static void run_live_open(struct run_setup *rs, const struct run_metrics_opts *mo, int quiet,
                          struct run_config *cfg, struct run_live *live)
{
    /* One shard scrapes the server (--metrics-shard, default 0): the
     * others would ask it the same question N times. */
    int off = mo->off || (cfg->shard_launcher && cfg->shard != mo->shard_k);
    run_setup_scraper(rs, mo->url, off, mo->interval_ns, cfg, quiet);
    live->scraper = rs->scraper;
    /* GPU telemetry, whatever --no-metrics says; with --shard on the
     * scraping shard only. */
    if (!cfg->shard_launcher || cfg->shard == mo->shard_k)
        run_setup_gpu_scrapers(rs, mo->gpu_urls, mo->n_gpu_urls, mo->gpu_smi, mo->interval_ns,
                               quiet);
    live->gpu_scrapers = rs->gpu_scrapers;
    live->n_gpu = rs->n_gpu;
    if (live->scraper || live->n_gpu || live->exposer) {
        cfg->live_cb = run_live_cb;
        cfg->live_ud = live;
    }
}

/* The server's side of the run: stop the scraper, join its series to the
 * run's span, and the client's figures to compare them with. Returns the
 * join's code (LL_E_NOTFOUND without a scraper). */
static int run_server_join(struct scraper *sc, const struct driver_result *res,
                           struct scrape_join *j, struct scrape_client *client)
{
    const struct scrape_client none = {NAN, NAN, NAN, NAN, NAN, NAN, NAN, NAN};
    *client = none;
    if (!sc)
        return LL_E_NOTFOUND;
    scraper_stop_at(sc, res->run_start_abs_ns + res->elapsed_ns, res->interrupted);
    int rc = scrape_join(sc, res->run_start_abs_ns, res->run_start_abs_ns + res->elapsed_ns,
                         SCRAPE_SPAN_OUTER, j);
    if (rc == 0) /* --prometheus: the replicas' own counters, summed */
        promsource_join_sum(sc, res->run_start_abs_ns, res->run_start_abs_ns + res->elapsed_ns,
                            SCRAPE_SPAN_OUTER, j);
    const struct stats *cs = &res->stats;
    if (hist_count(cs->ttft_server)) {
        client->ttft_sent_p50_s = (double)hist_percentile(cs->ttft_server, 50) / 1e9;
        client->ttft_sent_p99_s = (double)hist_percentile(cs->ttft_server, 99) / 1e9;
    }
    /* The server served the cold start's and the warm-up's requests too:
     * its counters hold them, so the client's side counts them beside the
     * window's (with --warmup it read about 2x against llama.cpp). */
    struct stats_served sv;
    stats_served(cs, &res->cold, &sv);
    client->output_tokens = sv.output_tokens;
    client->prompt_tokens = sv.prompt_tokens;
    client->cached_tokens = sv.cached_tokens;
    client->completed_ok = sv.completed_ok;
    client->failed_started = sv.failed_started;
    client->failed_output_tokens = sv.failed_output_tokens;
    return rc;
}

/* After the driver: print the summary (classes, stop reason, the server's
 * view, the directory) and finish the results directory. Returns the
 * exit status. */
static int run_report(struct run_setup *rs, const struct run_config *cfg,
                      const struct expect_set *ex, double cost_per_hour)
{
    const struct driver_result *res = &rs->res;
    struct scrape_join sjoin;
    struct scrape_client client;
    int join_rc = run_server_join(rs->scraper, res, &sjoin, &client);
    struct energy_figures energy;
    run_setup_energy(rs->gpu_scrapers, rs->n_gpu, res, cost_per_hour, cfg->shard_launcher != NULL,
                     &energy);

    char mode[160];
    runopts_mode_label(cfg, mode, sizeof mode);
    struct summary_info info = {0};
    info.mode = mode;
    info.closed_loop = cfg->mode == LOAD_CLOSED;
    info.offered_rate_per_s = run_offered_rate(cfg);
    if (cfg->mode == LOAD_CLOSED && cfg->pace_ns > 0) {
        /* A shard runs the users whose index is K mod N. */
        uint32_t n = cfg->shards > 1 ? cfg->shards : 1, k = cfg->shards > 1 ? cfg->shard : 0;
        info.paced_users = cfg->users / n + (k < cfg->users % n);
        info.pace_ns = cfg->pace_ns;
    }
    if (cfg->mode == LOAD_SESSIONS)
        session_summary_info(cfg, res, mode, sizeof mode, &info);
    runopts_shard_label(cfg, mode, sizeof mode);
    char slo_text[96];
    /* The achieved-rate check is open loop's: a cap, users or sessions set
     * their own pace, and an interrupted window is short by design. */
    runopts_summary_info(cfg, res, rs->target.model, "the schedule",
                         cfg->mode == LOAD_OPEN && !res->interrupted, slo_text, sizeof slo_text,
                         &info);
    session_arrivals(cfg, res, &info);
    info.model_note = run_setup_model_note(rs);

    struct run_server_view server = {&sjoin, join_rc, &client};
    json_t *sj = run_setup_report(rs, cfg, &info, rs->scraper ? &server : NULL, &energy);
    run_setup_judge(ex, sj, &info);
    return run_setup_finish(rs, sj, &info);
}

int run_main(int argc, char **argv)
{
    struct run_args ra = {0};
    struct run_config cfg;
    char err[RUNOPTS_ERR_MAX];
    memset(&cfg, 0, sizeof cfg);
    const struct run_opts *o = &ra.o;
    int rc = run_flags(argc, argv, &ra, &cfg, err, sizeof err);
    if (rc == 0 && o->dump && driver_dump_schedule(&cfg, o->dump, err, sizeof err) != 0) {
        char why[RUNOPTS_ERR_MAX];
        snprintf(why, sizeof why, "%s", err);
        rc = runopts_errf(err, sizeof err, "--dump-schedule: %s", why);
    }
    if (rc != 0 || o->dry_run) {
        runopts_workload_free(&cfg);
        return rc == 0 ? LL_EXIT_OK : runopts_usage_exit(rc, err, run_usage);
    }

    struct run_setup rs;
    struct run_live live = {0};
    int exit_code = run_expose_open(&ra.mo, &cfg, &live.exposer);
    if (exit_code != LL_EXIT_OK) {
        runopts_workload_free(&cfg);
        return exit_code;
    }
    exit_code = run_setup_open(&rs, o, &cfg);
    if (exit_code == LL_EXIT_OK)
        exit_code = run_setup_calibrate(&rs, o, &cfg);
    if (exit_code == LL_EXIT_OK) {
        json_t *config = runopts_config_json(o, &cfg, rs.target.model);
        if (cfg.shard_launcher)
            json_object_set_new(config, "metrics_shard", json_integer(ra.mo.shard_k));
        exit_code =
            run_setup_results(&rs, o, "run", session_config_json(config, &cfg), &cfg, &ra.ex);
    }
    if (exit_code == LL_EXIT_OK)
        exit_code = run_expose_record(&rs, live.exposer);
    if (exit_code == LL_EXIT_OK && !run_setup_stopped(&rs, "probe"))
        run_live_open(&rs, &ra.mo, o->quiet, &cfg, &live);
    if (exit_code == LL_EXIT_OK && run_setup_stopped(&rs, "scrape_start"))
        exit_code = run_setup_end(&rs, LL_EXIT_INTR, "interrupted by a signal");
    else if (exit_code == LL_EXIT_OK && run_setup_drive(&rs, &cfg) != 0)
        exit_code = LL_EXIT_RUNTIME;
    else if (exit_code == LL_EXIT_OK) {
        exit_code = run_report(&rs, &cfg, &ra.ex, ra.mo.cost_per_hour);
        run_expose_linger(&rs, live.exposer, ra.mo.linger_ns);
    }
    expose_free(live.exposer);
    run_setup_close(&rs);
    runopts_workload_free(&cfg);
    return exit_code;
}
