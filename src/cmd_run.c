/* cmd_run.c: `llmload run`, one load point. Parses and checks every flag
 * before anything is sent, asks the target about itself, writes run.json,
 * runs the driver, then prints and writes the summary. */
#include <curl/curl.h>
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <jansson.h>
#include <math.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/resource.h>
#include <unistd.h>

#include "cmds.h"
#include "driver.h"
#include "hist.h"
#include "results.h"
#include "sse.h"
#include "summary.h"
#include "util.h"

#define RUN_DEFAULT_URL "http://127.0.0.1:8000/v1"
#define RUN_DEFAULT_PROMPT "256"
#define RUN_DEFAULT_OUTPUT "128"
#define RUN_MAX_HEADERS 64
#define RUN_LATENESS_LIMIT_NS LL_NS_PER_MS
#define RUN_ACHIEVED_MIN 0.99

static void run_usage(FILE *f)
{
    fprintf(f,
"usage: llmload run [options]\n"
"\n"
"One load point against an OpenAI-compatible endpoint. Every latency is measured\n"
"from the time the request was scheduled, not from when it was sent.\n"
"\n"
"Target:\n"
"  --url BASE               API base URL (default " RUN_DEFAULT_URL ")\n"
"  --api NAME               openai-chat (default) or openai-completions\n"
"  --model NAME             model to ask for (default: the first id of BASE/models)\n"
"  --no-stream              ask for one JSON body instead of an SSE stream\n"
"  --ignore-eos             ask the server to generate exactly max_tokens\n"
"  -H, --header 'N: V'      extra request header (repeatable; values never written out)\n"
"  --api-key-env VAR        send $VAR as a Bearer token (default OPENAI_API_KEY, if set)\n"
"  --http2                  negotiate HTTP/2 (default HTTP/1.1)\n"
"  --insecure               do not verify TLS certificates\n"
"  --cacert FILE            CA bundle for TLS\n"
"\n"
"Load (pick one model):\n"
"  --rate R                 open loop: R requests/s (e.g. 20, 1.5k)\n"
"  --arrival KIND           constant, poisson (default) or gamma\n"
"  --burstiness K           gamma shape, CV = 1/sqrt(K) (default 1 = Poisson)\n"
"  --ramp-to R2             rate goes linearly from R to R2 over the duration\n"
"  --max-concurrency K      with --rate: at most K in flight; waiting is client queue time\n"
"  --on-cap queue|drop      what an arrival does at the cap (default queue)\n"
"  --users N                closed loop: N users, each waits for its response\n"
"  --think DIST             closed loop: think time after each response (default 0)\n"
"  --pace INTERVAL          closed loop: each user starts at most one request per INTERVAL\n"
"\n"
"Bounds:\n"
"  --duration D             offer load for D (e.g. 30s, 2m); default 10s unless --requests\n"
"  --requests N             offer N requests\n"
"  --warmup D               requests scheduled in the first D are written, not summarised\n"
"  --max-tokens-total N     spend guard: stop offering before prompt+max tokens pass N\n"
"  --seed N                 seed of the whole schedule (default 1)\n"
"\n"
"Workload (DIST: N, uniform:A,B, normal:MU,SD, lognormal:MU,SIGMA, exponential:M,\n"
"gamma:K,THETA, with optional ,min=X,max=Y; see docs/distributions.md):\n"
"  --prompt-tokens DIST     prompt length in tokens (default " RUN_DEFAULT_PROMPT ")\n"
"  --output-tokens DIST     max_tokens per request (default " RUN_DEFAULT_OUTPUT ")\n"
"\n"
"Timeouts (each is its own error kind; 0 = none):\n"
"  --timeout-connect D      default 10s\n"
"  --timeout-first-token D  from send to the first output event; default 60s\n"
"  --timeout-idle D         longest silence once sent; default 30s\n"
"  --timeout-total D        from send to the end; default 10m\n"
"\n"
"Run and output:\n"
"  --threads N              worker threads (default: online CPUs, at most 8)\n"
"  --out DIR                results directory (default results/<timestamp>)\n"
"  --force                  write into an existing non-empty --out\n"
"  --grace D                after Ctrl-C, time given to in-flight requests (default 5s)\n"
"  --dump-schedule FILE     write the open-loop schedule as JSONL\n"
"  --dry-run                with --dump-schedule: write it and send nothing\n"
"  --max-line BYTES         longest SSE line accepted (default 262144)\n"
"  --quiet                  no progress line\n"
"  --slo ttft=D,tpot=D,e2e=D  thresholds for goodput (ok and every threshold met)\n"
"\n"
"Exit status: 0 ok, 1 the run is INVALID (the generator fell behind its schedule),\n"
"2 bad flags, 3 could not run, 130 interrupted.\n");
}

enum {
    OPT_URL = 256, OPT_API, OPT_MODEL, OPT_NO_STREAM, OPT_IGNORE_EOS, OPT_API_KEY_ENV,
    OPT_HTTP2, OPT_INSECURE, OPT_CACERT, OPT_RATE, OPT_ARRIVAL, OPT_BURSTINESS,
    OPT_RAMP_TO, OPT_MAX_CONC, OPT_ON_CAP, OPT_USERS, OPT_THINK, OPT_PACE, OPT_DURATION,
    OPT_REQUESTS, OPT_WARMUP, OPT_MAX_TOKENS_TOTAL, OPT_SEED, OPT_PROMPT_TOKENS,
    OPT_OUTPUT_TOKENS, OPT_T_CONNECT, OPT_T_FIRST, OPT_T_IDLE, OPT_T_TOTAL, OPT_THREADS,
    OPT_OUT, OPT_FORCE, OPT_GRACE, OPT_DUMP, OPT_DRY_RUN, OPT_MAX_LINE, OPT_QUIET, OPT_HELP, OPT_SLO,
};

static const struct option run_options[] = {
    {"url", required_argument, NULL, OPT_URL},
    {"api", required_argument, NULL, OPT_API},
    {"model", required_argument, NULL, OPT_MODEL},
    {"no-stream", no_argument, NULL, OPT_NO_STREAM},
    {"ignore-eos", no_argument, NULL, OPT_IGNORE_EOS},
    {"header", required_argument, NULL, 'H'},
    {"api-key-env", required_argument, NULL, OPT_API_KEY_ENV},
    {"http2", no_argument, NULL, OPT_HTTP2},
    {"insecure", no_argument, NULL, OPT_INSECURE},
    {"cacert", required_argument, NULL, OPT_CACERT},
    {"rate", required_argument, NULL, OPT_RATE},
    {"arrival", required_argument, NULL, OPT_ARRIVAL},
    {"burstiness", required_argument, NULL, OPT_BURSTINESS},
    {"ramp-to", required_argument, NULL, OPT_RAMP_TO},
    {"max-concurrency", required_argument, NULL, OPT_MAX_CONC},
    {"on-cap", required_argument, NULL, OPT_ON_CAP},
    {"users", required_argument, NULL, OPT_USERS},
    {"think", required_argument, NULL, OPT_THINK},
    {"pace", required_argument, NULL, OPT_PACE},
    {"duration", required_argument, NULL, OPT_DURATION},
    {"requests", required_argument, NULL, OPT_REQUESTS},
    {"warmup", required_argument, NULL, OPT_WARMUP},
    {"max-tokens-total", required_argument, NULL, OPT_MAX_TOKENS_TOTAL},
    {"seed", required_argument, NULL, OPT_SEED},
    {"prompt-tokens", required_argument, NULL, OPT_PROMPT_TOKENS},
    {"output-tokens", required_argument, NULL, OPT_OUTPUT_TOKENS},
    {"timeout-connect", required_argument, NULL, OPT_T_CONNECT},
    {"timeout-first-token", required_argument, NULL, OPT_T_FIRST},
    {"timeout-idle", required_argument, NULL, OPT_T_IDLE},
    {"timeout-total", required_argument, NULL, OPT_T_TOTAL},
    {"threads", required_argument, NULL, OPT_THREADS},
    {"out", required_argument, NULL, OPT_OUT},
    {"force", no_argument, NULL, OPT_FORCE},
    {"grace", required_argument, NULL, OPT_GRACE},
    {"dump-schedule", required_argument, NULL, OPT_DUMP},
    {"dry-run", no_argument, NULL, OPT_DRY_RUN},
    {"max-line", required_argument, NULL, OPT_MAX_LINE},
    {"quiet", no_argument, NULL, OPT_QUIET},
    {"slo", required_argument, NULL, OPT_SLO},
    {"help", no_argument, NULL, OPT_HELP},
    {NULL, 0, NULL, 0},
};

/* Everything the flags say, before it becomes a run_config. */
struct run_opts {
    const char *url, *api, *model, *api_key_env, *cacert;
    int no_stream, ignore_eos, http2, insecure;
    const char *headers[RUN_MAX_HEADERS];
    size_t n_headers;
    const char *rate, *arrival, *burstiness, *ramp_to, *max_conc, *on_cap;
    const char *users, *think, *pace;
    const char *duration, *requests, *warmup, *max_tokens_total, *seed;
    const char *prompt_tokens, *output_tokens;
    const char *t_connect, *t_first, *t_idle, *t_total;
    const char *threads, *out, *grace, *dump, *max_line;
    const char *slo;
    int force, dry_run, quiet;
};

static double opt_positive(const char *name, const char *v)
{
    double x;
    if (ll_parse_count(v, &x) != 0 || !(x > 0))
        ll_usage_fail("%s: expected a positive number (e.g. 20 or 1.5k), got \"%s\"", name, v);
    return x;
}

static uint64_t opt_count(const char *name, const char *v, uint64_t min)
{
    double x;
    if (ll_parse_count(v, &x) != 0 || x != floor(x) || x < (double)min || x > 1.8e19)
        ll_usage_fail("%s: expected a whole number >= %llu (e.g. 100 or 10k), got \"%s\"", name,
                      (unsigned long long)min, v);
    return (uint64_t)x;
}

static uint64_t opt_duration(const char *name, const char *v)
{
    uint64_t ns;
    if (ll_parse_duration_ns(v, LL_NS_PER_SEC, &ns) != 0)
        ll_usage_fail("%s: expected a duration (e.g. 500ms, 30s, 2m), got \"%s\"", name, v);
    return ns;
}

static void opt_dist(const char *name, const char *v, enum dist_unit unit, int nonneg,
                     struct dist *out)
{
    char err[200];
    if (dist_parse(v, unit, out, err, sizeof err) != 0 ||
        (nonneg && dist_require_nonneg(out, err, sizeof err) != 0))
        ll_usage_fail("%s: %s", name, err);
}

static void parse_args(int argc, char **argv, struct run_opts *o)
{
    optind = 1;
    opterr = 0;
    int c;
    while ((c = getopt_long(argc, argv, ":H:h", run_options, NULL)) != -1) {
        const char *a = optarg;
        switch (c) {
        case OPT_URL: o->url = a; break;
        case OPT_API: o->api = a; break;
        case OPT_MODEL: o->model = a; break;
        case OPT_NO_STREAM: o->no_stream = 1; break;
        case OPT_IGNORE_EOS: o->ignore_eos = 1; break;
        case 'H':
            if (o->n_headers == RUN_MAX_HEADERS)
                ll_usage_fail("--header: at most %d headers", RUN_MAX_HEADERS);
            if (!strchr(a, ':'))
                ll_usage_fail("--header: expected \"Name: value\", got a value without a colon");
            o->headers[o->n_headers++] = a;
            break;
        case OPT_API_KEY_ENV: o->api_key_env = a; break;
        case OPT_HTTP2: o->http2 = 1; break;
        case OPT_INSECURE: o->insecure = 1; break;
        case OPT_CACERT: o->cacert = a; break;
        case OPT_RATE: o->rate = a; break;
        case OPT_ARRIVAL: o->arrival = a; break;
        case OPT_BURSTINESS: o->burstiness = a; break;
        case OPT_RAMP_TO: o->ramp_to = a; break;
        case OPT_MAX_CONC: o->max_conc = a; break;
        case OPT_ON_CAP: o->on_cap = a; break;
        case OPT_USERS: o->users = a; break;
        case OPT_THINK: o->think = a; break;
        case OPT_PACE: o->pace = a; break;
        case OPT_DURATION: o->duration = a; break;
        case OPT_REQUESTS: o->requests = a; break;
        case OPT_WARMUP: o->warmup = a; break;
        case OPT_MAX_TOKENS_TOTAL: o->max_tokens_total = a; break;
        case OPT_SEED: o->seed = a; break;
        case OPT_PROMPT_TOKENS: o->prompt_tokens = a; break;
        case OPT_OUTPUT_TOKENS: o->output_tokens = a; break;
        case OPT_T_CONNECT: o->t_connect = a; break;
        case OPT_T_FIRST: o->t_first = a; break;
        case OPT_T_IDLE: o->t_idle = a; break;
        case OPT_T_TOTAL: o->t_total = a; break;
        case OPT_THREADS: o->threads = a; break;
        case OPT_OUT: o->out = a; break;
        case OPT_FORCE: o->force = 1; break;
        case OPT_GRACE: o->grace = a; break;
        case OPT_DUMP: o->dump = a; break;
        case OPT_DRY_RUN: o->dry_run = 1; break;
        case OPT_MAX_LINE: o->max_line = a; break;
        case OPT_QUIET: o->quiet = 1; break;
        case OPT_SLO: o->slo = a; break;
        case OPT_HELP:
        case 'h':
            run_usage(stdout);
            exit(LL_EXIT_OK);
        case ':':
            ll_usage_fail("%s: needs a value (see llmload run --help)", argv[optind - 1]);
        default:
            ll_usage_fail("unknown option \"%s\" (see llmload run --help)", argv[optind - 1]);
        }
    }
    if (optind < argc)
        ll_usage_fail("unexpected argument \"%s\" (see llmload run --help)", argv[optind]);
}

/* Turn the flags into a run config, rejecting every bad or contradictory
 * value before anything is sent. */
static void build_config(const struct run_opts *o, struct run_config *cfg)
{
    memset(cfg, 0, sizeof *cfg);
    cfg->records_fd = -1;
    cfg->step = -1;
    if (o->slo) {
        char err[200];
        if (slo_parse(o->slo, &cfg->slo, err, sizeof err) != 0)
            ll_usage_fail("--slo: %s", err);
    }
    int open = o->rate != NULL, closed = o->users != NULL;
    if (open && closed)
        ll_usage_fail("--rate and --users: pick one load model (open loop or closed loop)");
    if (!open && !closed)
        ll_usage_fail("no load given: use --rate R (open loop) or --users N (closed loop)");
    if (closed && (o->arrival || o->burstiness || o->ramp_to || o->max_conc || o->on_cap))
        ll_usage_fail("--users: --arrival, --burstiness, --ramp-to and --max-concurrency "
                      "apply to --rate only");
    if (open && (o->think || o->pace))
        ll_usage_fail("--think and --pace apply to --users only");
    if (o->think && o->pace)
        ll_usage_fail("--think and --pace: pick one");

    uint64_t seed = 1;
    if (o->seed && (ll_parse_u64(o->seed, &seed) != 0 || seed > INT64_MAX))
        ll_usage_fail("--seed: expected a whole number from 0 to 2^63-1, got \"%s\"", o->seed);

    if (o->duration)
        cfg->duration_ns = opt_duration("--duration", o->duration);
    if (o->requests)
        cfg->max_requests = opt_count("--requests", o->requests, 1);
    if (!o->duration && !o->requests)
        cfg->duration_ns = 10 * LL_NS_PER_SEC;
    if (o->duration && cfg->duration_ns == 0)
        ll_usage_fail("--duration: must be more than 0");
    if (o->warmup) {
        cfg->warmup_ns = opt_duration("--warmup", o->warmup);
        if (cfg->duration_ns && cfg->warmup_ns >= cfg->duration_ns)
            ll_usage_fail("--warmup: %s leaves no measurement window inside --duration %s",
                          o->warmup, o->duration ? o->duration : "10s");
    }
    if (o->max_tokens_total)
        cfg->max_tokens_total = opt_count("--max-tokens-total", o->max_tokens_total, 1);
    cfg->grace_ns = o->grace ? opt_duration("--grace", o->grace) : 5 * LL_NS_PER_SEC;

    if (open) {
        cfg->mode = o->max_conc ? LOAD_CAPPED : LOAD_OPEN;
        struct arrival_config *a = &cfg->arrival;
        a->kind = ARRIVAL_POISSON;
        a->rate_per_s = opt_positive("--rate", o->rate);
        a->burstiness = 1;
        a->seed = seed;
        if (o->arrival && arrival_parse_kind(o->arrival, &a->kind) != 0)
            ll_usage_fail("--arrival: expected constant, poisson or gamma, got \"%s\"", o->arrival);
        if (o->burstiness) {
            a->burstiness = opt_positive("--burstiness", o->burstiness);
            if (!o->arrival)
                a->kind = ARRIVAL_GAMMA;
            else if (a->kind != ARRIVAL_GAMMA)
                ll_usage_fail("--burstiness: applies to --arrival gamma, not %s", o->arrival);
        }
        if (o->ramp_to) {
            a->ramp_to_per_s = opt_positive("--ramp-to", o->ramp_to);
            if (!cfg->duration_ns)
                ll_usage_fail("--ramp-to: needs --duration (the ramp spans it)");
            a->ramp_ns = cfg->duration_ns;
        }
        char err[200];
        if (arrival_config_check(a, err, sizeof err) != 0)
            ll_usage_fail("--rate: %s", err);
        if (o->max_conc) {
            uint64_t k = opt_count("--max-concurrency", o->max_conc, 1);
            if (k > 1000000)
                ll_usage_fail("--max-concurrency: at most 1000000, got \"%s\"", o->max_conc);
            cfg->max_concurrency = (uint32_t)k;
        }
        if (o->on_cap) {
            if (!o->max_conc)
                ll_usage_fail("--on-cap: needs --max-concurrency");
            if (strcmp(o->on_cap, "drop") == 0)
                cfg->on_cap_drop = 1;
            else if (strcmp(o->on_cap, "queue") != 0)
                ll_usage_fail("--on-cap: expected queue or drop, got \"%s\"", o->on_cap);
        }
    } else {
        cfg->mode = LOAD_CLOSED;
        uint64_t n = opt_count("--users", o->users, 1);
        if (n > 1000000)
            ll_usage_fail("--users: at most 1000000, got \"%s\"", o->users);
        cfg->users = (uint32_t)n;
        opt_dist("--think", o->think ? o->think : "0", DIST_UNIT_DURATION_NS, 1, &cfg->think);
        if (o->pace) {
            cfg->pace_ns = opt_duration("--pace", o->pace);
            if (!cfg->pace_ns)
                ll_usage_fail("--pace: must be more than 0");
        }
    }

    struct workload *wl = &cfg->workload;
    wl->seed = seed;
    wl->ignore_eos = o->ignore_eos;
    opt_dist("--prompt-tokens", o->prompt_tokens ? o->prompt_tokens : RUN_DEFAULT_PROMPT,
             DIST_UNIT_NONE, 1, &wl->prompt_tokens);
    opt_dist("--output-tokens", o->output_tokens ? o->output_tokens : RUN_DEFAULT_OUTPUT,
             DIST_UNIT_NONE, 1, &wl->output_tokens);

    long cpus = sysconf(_SC_NPROCESSORS_ONLN);
    cfg->threads = (uint32_t)(cpus > 0 ? LL_MIN(cpus, 8) : 1);
    if (o->threads) {
        uint64_t t = opt_count("--threads", o->threads, 1);
        if (t > 256)
            ll_usage_fail("--threads: at most 256, got \"%s\"", o->threads);
        cfg->threads = (uint32_t)t;
    }

    struct transport_config *tc = &cfg->transport;
    tc->base_url = o->url ? o->url : RUN_DEFAULT_URL;
    if (strncmp(tc->base_url, "http://", 7) != 0 && strncmp(tc->base_url, "https://", 8) != 0)
        ll_usage_fail("--url: expected http://HOST:PORT/... or https://..., got \"%s\"",
                      tc->base_url);
    tc->api = OAI_API_CHAT;
    if (o->api) {
        if (strcmp(o->api, "openai-chat") == 0 || strcmp(o->api, "chat") == 0)
            tc->api = OAI_API_CHAT;
        else if (strcmp(o->api, "openai-completions") == 0 || strcmp(o->api, "completions") == 0)
            tc->api = OAI_API_COMPLETIONS;
        else
            ll_usage_fail("--api: expected openai-chat or openai-completions, got \"%s\"", o->api);
    }
    tc->stream = !o->no_stream;
    tc->ignore_eos = o->ignore_eos;
    tc->http2 = o->http2;
    tc->insecure = o->insecure;
    tc->cacert = o->cacert;
    tc->connect_timeout_ns = o->t_connect ? opt_duration("--timeout-connect", o->t_connect)
                                          : 10 * LL_NS_PER_SEC;
    tc->first_token_timeout_ns = o->t_first ? opt_duration("--timeout-first-token", o->t_first)
                                            : 60 * LL_NS_PER_SEC;
    tc->idle_timeout_ns = o->t_idle ? opt_duration("--timeout-idle", o->t_idle)
                                    : 30 * LL_NS_PER_SEC;
    tc->total_timeout_ns = o->t_total ? opt_duration("--timeout-total", o->t_total)
                                      : 600 * LL_NS_PER_SEC;
    tc->max_line_bytes = SSE_DEFAULT_MAX_LINE;
    if (o->max_line) {
        uint64_t m = opt_count("--max-line", o->max_line, 64);
        if (m > (64u << 20))
            ll_usage_fail("--max-line: at most 64M, got \"%s\"", o->max_line);
        tc->max_line_bytes = (size_t)m;
    }
    tc->seed = seed;
    if (o->dry_run && !o->dump)
        ll_usage_fail("--dry-run: needs --dump-schedule FILE");
}

/* ---- the target -------------------------------------------------------- */

struct grow_buf {
    char *p;
    size_t len;
};

static size_t grow_write(char *buf, size_t size, size_t n, void *ud)
{
    struct grow_buf *b = ud;
    size_t add = size * n;
    if (b->len + add > (1u << 20))
        return 0;
    b->p = ll_realloc(b->p, b->len + add + 1);
    memcpy(b->p + b->len, buf, add);
    b->len += add;
    b->p[b->len] = '\0';
    return add;
}

static size_t server_header(char *buf, size_t size, size_t n, void *ud)
{
    char *server = ud;
    size_t len = size * n;
    if (len > 7 && strncasecmp(buf, "server:", 7) == 0) {
        size_t i = 7;
        while (i < len && buf[i] == ' ')
            i++;
        size_t end = len;
        while (end > i && (buf[end - 1] == '\r' || buf[end - 1] == '\n'))
            end--;
        size_t take = LL_MIN(end - i, 127);
        memcpy(server, buf + i, take);
        server[take] = '\0';
    }
    return len;
}

/* GET BASE/models: the target's answer (parsed), its Server header, and
 * the first model id. Returns 0, or -1 with a reason in err. */
static int probe_target(const struct transport_config *tc, const struct curl_slist *headers,
                        json_t **models, char *server, char **first_id, char *err,
                        size_t errlen)
{
    char url[1100];
    snprintf(url, sizeof url, "%s/models", tc->base_url);
    CURL *e = curl_easy_init();
    if (!e) {
        snprintf(err, errlen, "curl_easy_init failed");
        return -1;
    }
    struct grow_buf b = {0};
    curl_easy_setopt(e, CURLOPT_URL, url);
    curl_easy_setopt(e, CURLOPT_HTTPHEADER, headers);
    curl_easy_setopt(e, CURLOPT_WRITEFUNCTION, grow_write);
    curl_easy_setopt(e, CURLOPT_WRITEDATA, &b);
    curl_easy_setopt(e, CURLOPT_HEADERFUNCTION, server_header);
    curl_easy_setopt(e, CURLOPT_HEADERDATA, server);
    curl_easy_setopt(e, CURLOPT_NOSIGNAL, 1L);
    curl_easy_setopt(e, CURLOPT_TIMEOUT_MS, 10000L);
    if (tc->insecure) {
        curl_easy_setopt(e, CURLOPT_SSL_VERIFYPEER, 0L);
        curl_easy_setopt(e, CURLOPT_SSL_VERIFYHOST, 0L);
    }
    if (tc->cacert)
        curl_easy_setopt(e, CURLOPT_CAINFO, tc->cacert);
    CURLcode res = curl_easy_perform(e);
    long status = 0;
    curl_easy_getinfo(e, CURLINFO_RESPONSE_CODE, &status);
    curl_easy_cleanup(e);
    int rc = -1;
    if (res != CURLE_OK) {
        snprintf(err, errlen, "GET %.300s: %s", url, curl_easy_strerror(res));
        goto out;
    }
    if (status != 200) {
        snprintf(err, errlen, "GET %.300s: HTTP %ld", url, status);
        goto out;
    }
    json_error_t je;
    *models = json_loadb(b.p ? b.p : "", b.len, 0, &je);
    if (!*models) {
        snprintf(err, errlen, "GET %.300s: not JSON (%s)", url, je.text);
        goto out;
    }
    json_t *data = json_object_get(*models, "data");
    json_t *first = json_is_array(data) ? json_array_get(data, 0) : NULL;
    const char *id = json_string_value(json_object_get(first, "id"));
    if (id)
        *first_id = ll_strdup(id);
    rc = 0;
out:
    free(b.p);
    return rc;
}

/* ---- run.json ---------------------------------------------------------- */

static json_t *config_json(const struct run_opts *o, const struct run_config *cfg,
                           const char *model)
{
    json_t *c = json_object();
    char buf[DIST_SPEC_MAX];
    const char *mode = cfg->mode == LOAD_OPEN     ? "open"
                       : cfg->mode == LOAD_CLOSED ? "closed"
                                                  : "capped";
    json_object_set_new(c, "load_model", json_string(mode));
    if (cfg->mode != LOAD_CLOSED) {
        json_object_set_new(c, "rate_per_s", json_real(cfg->arrival.rate_per_s));
        json_object_set_new(c, "arrival", json_string(arrival_kind_name(cfg->arrival.kind)));
        json_object_set_new(c, "burstiness", json_real(cfg->arrival.burstiness));
        if (cfg->arrival.ramp_to_per_s > 0)
            json_object_set_new(c, "ramp_to_per_s", json_real(cfg->arrival.ramp_to_per_s));
    }
    if (cfg->mode == LOAD_CAPPED) {
        json_object_set_new(c, "max_concurrency", json_integer(cfg->max_concurrency));
        json_object_set_new(c, "on_cap", json_string(cfg->on_cap_drop ? "drop" : "queue"));
    }
    if (cfg->mode == LOAD_CLOSED) {
        json_object_set_new(c, "users", json_integer(cfg->users));
        if (cfg->pace_ns) {
            json_object_set_new(c, "pace_ns", json_integer((json_int_t)cfg->pace_ns));
        } else {
            dist_format(&cfg->think, buf, sizeof buf);
            json_object_set_new(c, "think", json_string(buf));
        }
    }
    json_object_set_new(c, "duration_ns", json_integer((json_int_t)cfg->duration_ns));
    json_object_set_new(c, "requests", json_integer((json_int_t)cfg->max_requests));
    json_object_set_new(c, "warmup_ns", json_integer((json_int_t)cfg->warmup_ns));
    json_object_set_new(c, "max_tokens_total", json_integer((json_int_t)cfg->max_tokens_total));
    json_object_set_new(c, "seed", json_integer((json_int_t)cfg->workload.seed));
    dist_format(&cfg->workload.prompt_tokens, buf, sizeof buf);
    json_object_set_new(c, "prompt_tokens", json_string(buf));
    dist_format(&cfg->workload.output_tokens, buf, sizeof buf);
    json_object_set_new(c, "output_tokens", json_string(buf));
    json_object_set_new(c, "ignore_eos", json_boolean(cfg->workload.ignore_eos));
    const struct transport_config *tc = &cfg->transport;
    json_object_set_new(c, "url", json_string(tc->base_url));
    json_object_set_new(c, "api", json_string(tc->api == OAI_API_CHAT ? "openai-chat"
                                                                       : "openai-completions"));
    json_object_set_new(c, "model", json_string(model));
    json_object_set_new(c, "stream", json_boolean(tc->stream));
    json_object_set_new(c, "http2", json_boolean(tc->http2));
    json_object_set_new(c, "insecure", json_boolean(tc->insecure));
    json_object_set_new(c, "headers", results_redact_headers(o->headers, o->n_headers));
    json_object_set_new(c, "api_key_env", json_string(o->api_key_env ? o->api_key_env
                                                                      : "OPENAI_API_KEY"));
    json_object_set_new(c, "timeout_connect_ns", json_integer((json_int_t)tc->connect_timeout_ns));
    json_object_set_new(c, "timeout_first_token_ns",
                        json_integer((json_int_t)tc->first_token_timeout_ns));
    json_object_set_new(c, "timeout_idle_ns", json_integer((json_int_t)tc->idle_timeout_ns));
    json_object_set_new(c, "timeout_total_ns", json_integer((json_int_t)tc->total_timeout_ns));
    json_object_set_new(c, "threads", json_integer(cfg->threads));
    json_object_set_new(c, "grace_ns", json_integer((json_int_t)cfg->grace_ns));
    if (slo_is_set(&cfg->slo)) {
        slo_format(&cfg->slo, buf, sizeof buf);
        json_object_set_new(c, "slo", json_string(buf));
    }
    return c;
}

static void mode_label(const struct run_config *cfg, char *buf, size_t len)
{
    if (cfg->mode == LOAD_CLOSED) {
        char p[16];
        if (cfg->pace_ns)
            snprintf(buf, len, "closed-loop, %u users, pace %s", cfg->users,
                     ll_fmt_duration(cfg->pace_ns, p, sizeof p));
        else
            snprintf(buf, len, "closed-loop, %u users", cfg->users);
    } else if (cfg->mode == LOAD_CAPPED) {
        snprintf(buf, len, "capped open-loop %s %g/s, max-concurrency %u (%s)",
                 arrival_kind_name(cfg->arrival.kind), cfg->arrival.rate_per_s,
                 cfg->max_concurrency, cfg->on_cap_drop ? "drop" : "queue");
    } else if (cfg->arrival.ramp_to_per_s > 0) {
        snprintf(buf, len, "open-loop %s, ramp %g/s to %g/s", arrival_kind_name(cfg->arrival.kind),
                 cfg->arrival.rate_per_s, cfg->arrival.ramp_to_per_s);
    } else {
        snprintf(buf, len, "open-loop %s %g/s", arrival_kind_name(cfg->arrival.kind),
                 cfg->arrival.rate_per_s);
    }
}

static void raise_nofile(void)
{
    struct rlimit rl;
    if (getrlimit(RLIMIT_NOFILE, &rl) == 0 && rl.rlim_cur < rl.rlim_max) {
        rl.rlim_cur = rl.rlim_max;
        setrlimit(RLIMIT_NOFILE, &rl);
    }
}

int run_main(int argc, char **argv)
{
    struct run_opts o = {0};
    struct run_config cfg;
    parse_args(argc, argv, &o);
    build_config(&o, &cfg);

    char err[512];
    if (o.dump) {
        if (driver_dump_schedule(&cfg, o.dump, err, sizeof err) != 0)
            ll_usage_fail("--dump-schedule: %s", err);
        if (o.dry_run)
            return LL_EXIT_OK;
    }

    int exit_code = LL_EXIT_RUNTIME;
    struct curl_slist *headers = NULL;
    json_t *models = NULL, *run = NULL;
    char *first_id = NULL, *auth = NULL;
    char server[128] = "";
    char dir[1024];
    int fd = -1;
    struct driver_result res;
    int have_res = 0;

    raise_nofile();
    signal(SIGPIPE, SIG_IGN);
    if (curl_global_init(CURL_GLOBAL_DEFAULT) != CURLE_OK) {
        ll_errorf("curl_global_init failed");
        return LL_EXIT_RUNTIME;
    }
    headers = curl_slist_append(headers, "Content-Type: application/json");
    headers = curl_slist_append(headers, "Expect:"); /* no 100-continue round trip */
    headers = curl_slist_append(headers, "Accept: text/event-stream, application/json");
    const char *key_env = o.api_key_env ? o.api_key_env : "OPENAI_API_KEY";
    const char *key = getenv(key_env);
    if (o.api_key_env && (!key || !*key)) {
        ll_errorf("--api-key-env: $%s is not set", key_env);
        exit_code = LL_EXIT_USAGE;
        goto out;
    }
    if (key && *key) {
        size_t n = strlen(key) + 32;
        auth = ll_malloc(n);
        snprintf(auth, n, "Authorization: Bearer %s", key);
        headers = curl_slist_append(headers, auth);
    }
    for (size_t i = 0; i < o.n_headers; i++)
        headers = curl_slist_append(headers, o.headers[i]);
    cfg.transport.headers = headers;

    if (probe_target(&cfg.transport, headers, &models, server, &first_id, err, sizeof err) != 0) {
        if (!o.model) {
            ll_errorf("cannot ask the target for its model: %s (is the server up? or pass --model)",
                      err);
            goto out;
        }
        ll_errorf("warning: %s; going on with --model %s", err, o.model);
    }
    const char *model = o.model ? o.model : first_id;
    if (!model) {
        ll_errorf("%s/models lists no model id; pass --model", cfg.transport.base_url);
        goto out;
    }
    cfg.transport.model = model;

    if (results_dir_prepare(o.out, o.force, dir, sizeof dir, err, sizeof err) != 0) {
        ll_errorf("%s", err);
        exit_code = LL_EXIT_USAGE;
        goto out;
    }
    run = json_object();
    json_object_set_new(run, "schema", json_string("llmload.run/1"));
    json_object_set_new(run, "version", json_string(LL_VERSION));
    json_object_set_new(run, "command", json_string("run"));
    json_object_set_new(run, "config", config_json(&o, &cfg, model));
    results_add_host_info(run);
    json_t *target = json_object();
    json_object_set_new(target, "url", json_string(cfg.transport.base_url));
    json_object_set_new(target, "server_header", server[0] ? json_string(server) : json_null());
    json_object_set_new(target, "models", models ? json_incref(models) : json_null());
    json_object_set_new(run, "target", target);
    if (results_write_json_atomic(dir, "run.json", run, err, sizeof err) != 0) {
        ll_errorf("%s", err);
        goto out;
    }

    char path[1100];
    snprintf(path, sizeof path, "%s/requests.jsonl", dir);
    fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_APPEND | O_CLOEXEC, 0644);
    if (fd < 0) {
        ll_errorf("%s: %s", path, strerror(errno));
        goto out;
    }
    cfg.records_fd = fd;
    cfg.progress = o.quiet ? 0 : (isatty(STDERR_FILENO) ? 1 : 2);
    cfg.progress_interval_ns = cfg.progress == 1 ? LL_NS_PER_SEC : 5 * LL_NS_PER_SEC;

    if (driver_run(&cfg, &res, err, sizeof err) != 0) {
        ll_errorf("%s", err);
        driver_result_free(&res);
        goto out;
    }
    have_res = 1;

    char mode[160];
    mode_label(&cfg, mode, sizeof mode);
    struct summary_info info = {0};
    info.mode = mode;
    info.closed_loop = cfg.mode == LOAD_CLOSED;
    info.offered_rate_per_s = cfg.mode == LOAD_CLOSED ? 0 : cfg.arrival.rate_per_s;
    info.window_ns = res.window_ns;
    info.warmup_ns = cfg.warmup_ns;
    info.inflight_mean = res.inflight_mean;
    info.inflight_max = res.inflight_max;
    info.target_url = cfg.transport.base_url;
    info.model = model;
    info.version = LL_VERSION;
    info.seed = cfg.workload.seed;
    info.interrupted = res.interrupted;
    info.records_written = res.records_written;
    char slo_text[96];
    if (slo_is_set(&cfg.slo)) {
        slo_format(&cfg.slo, slo_text, sizeof slo_text);
        info.slo = slo_text;
    }

    /* The self-check: a run whose generator fell behind measured itself. */
    const struct stats *s = &res.stats;
    uint64_t late_p99 = hist_count(s->lateness) ? hist_percentile(s->lateness, 99) : 0;
    if (late_p99 > RUN_LATENESS_LIMIT_NS) {
        char l[16];
        info.invalid = 1;
        snprintf(info.invalid_reason, sizeof info.invalid_reason,
                 "schedule lateness p99 %s > 1ms: the generator could not keep the schedule",
                 ll_fmt_duration(late_p99, l, sizeof l));
    } else if (cfg.mode == LOAD_OPEN && !res.interrupted && s->scheduled &&
               (double)res.sent_in_window < RUN_ACHIEVED_MIN * (double)s->scheduled) {
        info.invalid = 1;
        snprintf(info.invalid_reason, sizeof info.invalid_reason,
                 "achieved send rate %.1f%% of offered (< 99%%): the generator fell behind",
                 100.0 * (double)res.sent_in_window / (double)s->scheduled);
    }

    summary_print(stdout, s, &info);
    if (res.stop_reason[0])
        printf("offering stopped early: %s\n", res.stop_reason);
    printf("results: %s\n", dir);
    fflush(stdout);

    snprintf(path, sizeof path, "%s/summary.json", dir);
    json_t *sj = summary_json(s, &info);
    json_object_set_new(sj, "sent_in_window", json_integer((json_int_t)res.sent_in_window));
    json_object_set_new(sj, "run_start_monotonic_ns", json_integer((json_int_t)res.run_start_abs_ns));
    json_object_set_new(sj, "warmup_records", json_integer((json_int_t)res.warmup_records));
    json_object_set_new(sj, "stop_reason",
                        res.stop_reason[0] ? json_string(res.stop_reason) : json_null());
    if (results_write_json_path_atomic(path, sj, err, sizeof err) != 0) {
        ll_errorf("%s", err);
        json_decref(sj);
        goto out;
    }
    json_decref(sj);
    exit_code = res.interrupted ? 130 : info.invalid ? LL_EXIT_FAIL : LL_EXIT_OK;

out:
    if (have_res)
        driver_result_free(&res);
    if (fd >= 0)
        close(fd);
    json_decref(run);
    json_decref(models);
    free(first_id);
    if (auth) {
        memset(auth, 0, strlen(auth));
        free(auth);
    }
    curl_slist_free_all(headers);
    curl_global_cleanup();
    return exit_code;
}
