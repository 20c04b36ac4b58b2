/* runopts.c: the flags `run`, `replay` and `sweep` share, their checks and
 * run.json's config object (see runopts.h). Moved here from cmd_run.c so
 * the commands parse, check and record them the same way. */
#include "cli/runopts.h"

#include <getopt.h>
#include <math.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/random.h>
#include <time.h>
#include <unistd.h>

#include "cli/shard.h"
#include "decode/sse.h"
#include "metrics/scrape.h"
#include "util/rng.h"
#include "util/util.h"
#include "workload/chatbody.h"
#include "workload/dataset.h"
#include "workload/empirical.h"
#include "workload/extrabody.h"

/* -H, --header: "Name: value", repeatable up to RUNOPTS_MAX_HEADERS. */
static int take_header(void *dst, const char *a, char *err, size_t errlen)
{
    struct run_opts *o = dst;
    if (o->n_headers == RUNOPTS_MAX_HEADERS)
        return runopts_errf(err, errlen, "--header: at most %d headers", RUNOPTS_MAX_HEADERS);
    if (!strchr(a, ':'))
        return runopts_errf(err, errlen, "--header: expected \"Name: value\", got a value "
                            "without a colon");
    o->headers[o->n_headers++] = a;
    return 0;
}

/* --url BASE, repeatable up to ENDPOINTS_MAX: requests are spread over
 * them (workload/endpoints.h); the first is o->url. */
static int take_url(void *dst, const char *a, char *err, size_t errlen)
{
    struct run_opts *o = dst;
    if (o->n_urls == ENDPOINTS_MAX)
        return runopts_errf(err, errlen, "--url: at most %d endpoints", ENDPOINTS_MAX);
    o->urls[o->n_urls++] = a;
    if (!o->url)
        o->url = a;
    return 0;
}

/* --tag KEY=VALUE: what the run was of (engine=vllm-0.11.2, gpu=H100), kept
 * in run.json's "tags". KEY is non-empty, of [A-Za-z0-9_.-], and given
 * once; VALUE is any text. */
static int take_tag(void *dst, const char *a, char *err, size_t errlen)
{
    struct run_opts *o = dst;
    const char *eq = strchr(a, '=');
    if (!eq)
        return runopts_errf(err, errlen, "--tag: expected KEY=VALUE (e.g. gpu=H100), got \"%s\"",
                            a);
    size_t klen = (size_t)(eq - a);
    if (klen == 0)
        return runopts_errf(err, errlen, "--tag: the key before '=' is empty in \"%s\"", a);
    if (klen > 64)
        return runopts_errf(err, errlen, "--tag: a key of at most 64 characters, got %zu", klen);
    for (size_t i = 0; i < klen; i++) {
        char c = a[i];
        if (!((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
              c == '_' || c == '.' || c == '-'))
            return runopts_errf(err, errlen,
                                "--tag: key \"%.*s\" may hold only letters, "
                                "digits, '_', '.' and '-'",
                                (int)klen, a);
    }
    for (size_t i = 0; i < o->n_tags; i++)
        if (strncmp(o->tags[i], a, klen + 1) == 0)
            return runopts_errf(err, errlen, "--tag: key \"%.*s\" given twice", (int)klen, a);
    if (o->n_tags == RUNOPTS_MAX_TAGS)
        return runopts_errf(err, errlen, "--tag: at most %d tags", RUNOPTS_MAX_TAGS);
    o->tags[o->n_tags++] = a;
    return 0;
}

json_t *runopts_tags_json(const struct run_opts *o)
{
    json_t *t = json_object();
    for (size_t i = 0; i < o->n_tags; i++) {
        const char *eq = strchr(o->tags[i], '=');
        char key[65];
        snprintf(key, sizeof key, "%.*s", (int)(eq - o->tags[i]), o->tags[i]);
        json_object_set_new(t, key, json_string(eq + 1));
    }
    return t;
}

/* The flags run, replay and sweep share, into struct run_opts, in the
 * groups of `llmload run --help`. */
#define VALUE(name, field) RUNOPTS_VALUE(name, struct run_opts, field)
#define SET(name, field) RUNOPTS_SET(name, struct run_opts, field)
static const struct runopts_flag common_flags[] = {
    /* the target */
    {"url", 0, RUNOPTS_KIND_CALL, 0, take_url},
    VALUE("url-weights", url_weights),
    VALUE("api", api),
    VALUE("model", model),
    SET("no-stream", no_stream),
    SET("ignore-eos", ignore_eos),
    {"header", 'H', RUNOPTS_KIND_CALL, 0, take_header},
    VALUE("api-key-env", api_key_env),
    SET("http2", http2),
    VALUE("http-client", http_client),
    SET("insecure", insecure),
    VALUE("cacert", cacert),
    VALUE("extra-body", extra_body),
    SET("extra-body-override", extra_body_override),
    /* the load, its bounds and lengths */
    VALUE("arrival", arrival),
    VALUE("burstiness", burstiness),
    VALUE("warmup", warmup),
    VALUE("cold-start", cold_start),
    VALUE("seed", seed),
    VALUE("prompt-salt", prompt_salt),
    VALUE("shard", shard),
    VALUE("shards", shards),
    VALUE("start-at", start_at),
    VALUE("prompt-tokens", prompt_tokens),
    VALUE("output-tokens", output_tokens),
    VALUE("batch", batch),
    /* timeouts */
    VALUE("timeout-connect", t_connect),
    VALUE("timeout-first-token", t_first),
    VALUE("timeout-idle", t_idle),
    VALUE("timeout-total", t_total),
    /* the run and its output */
    VALUE("threads", threads),
    VALUE("out", out),
    SET("force", force),
    VALUE("grace", grace),
    VALUE("max-line", max_line),
    SET("quiet", quiet),
    {"tag", 0, RUNOPTS_KIND_CALL, 0, take_tag},
    VALUE("slo", slo),
    VALUE("lateness-tolerance", lateness_tolerance),
    {"help", 'h', RUNOPTS_KIND_HELP, 0, NULL},
    /* workload realism */
    VALUE("workload", workload),
    VALUE("prefix-fraction", prefix_fraction),
    VALUE("prefix-groups", prefix_groups),
    VALUE("prefix-tokens", prefix_tokens),
    SET("all-unique", all_unique),
    VALUE("cancel-fraction", cancel_fraction),
    VALUE("cancel-after", cancel_after),
    VALUE("cancel-after-tokens", cancel_after_tokens),
    VALUE("max-inflight", max_inflight),
    VALUE("lengths", lengths),
    VALUE("dataset", dataset),
    VALUE("calibration", calibration),
    VALUE("calibrate", calibrate),
    SET("prompt-ids", prompt_ids),
    VALUE("prompt-id-range", prompt_id_range),
    VALUE("images", images),
    VALUE("image-size", image_size),
    VALUE("image-sizes", image_sizes),
    VALUE("image-format", image_format),
    VALUE("prefix-images", prefix_images),
};
#undef VALUE
#undef SET

/* clang-format off */
const char runopts_workload_help[] =
"Workload realism (docs/workload.md):\n"
"  --workload FILE          traffic classes (JSON): weights, lengths, API, prefix groups,\n"
"                           cancellations and SLOs per class; records carry the class\n"
"  --prefix-fraction F      share of requests that begin with a shared prefix (0..1, default 0)\n"
"  --prefix-groups P        number of distinct shared prefixes (default 1)\n"
"  --prefix-tokens L        length of each shared prefix, tokens\n"
"  --all-unique             every prompt unique: turn all prefix sharing off (flags and file)\n"
"  --cancel-fraction F      share of clients that disconnect mid-stream (0..1)\n"
"  --cancel-after DIST      ...after a drawn time from the send (e.g. exponential:2s)\n"
"  --cancel-after-tokens DIST  ...or after a drawn number of output events\n"
"  --lengths empirical:FILE (input, output) pairs drawn jointly, one observed row per request\n"
"  --dataset FILE           prompts from a ShareGPT JSON or JSONL file, sent verbatim; lengths\n"
"                           from the data (--output-tokens when an entry has none)\n"
"  --calibration FILE       scale synthetic prompts by a fit from llmload calibrate\n"
"  --calibrate auto         calibrate against the target first (llmload calibrate's probes)\n"
"                           and scale synthetic prompts by that fit\n"
"  --prompt-ids             send each synthetic prompt as token IDs (\"prompt\": [ids]):\n"
"                           lengths exact on any server that takes IDs; needs\n"
"                           --api openai-completions (not with --dataset or --sessions)\n"
"  --prompt-id-range A,B    draw the IDs from [A, B] (default 1000,17383); B must be below\n"
"                           the model's vocabulary, which the server's /models is asked for\n"
"  --images DIST            images per request in the user message (e.g. 1, uniform:1,3;\n"
"                           at most 64): synthetic, unique per request; chat, anthropic-\n"
"                           messages and openai-responses only; not with --sessions\n"
"  --prefix-images N        images shared by each prefix group (1 to 64), drawn once per\n"
"                           group and sent before its prefix text; needs --prefix-fraction\n"
"  --image-size WxH         each image's size in pixels (default 512x512)\n"
"  --image-sizes LIST       sizes drawn per image by weight, e.g. 512x512:3,1024x768:1\n"
"  --image-format png|jpeg  encoding of the images (default png)\n"
"  --max-inflight N         safety cap: refuse open-loop arrivals while N requests are in\n"
"                           the system; each refusal is a client_dropped record (default: none)\n";
/* clang-format on */

int runopts_errf(char *err, size_t errlen, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(err, errlen, fmt, ap);
    va_end(ap);
    return LL_E_INVAL;
}

/* getopt_long's view of a walk's tables: long flag i returns WALK_VAL + i,
 * a short alias its letter. */
#define WALK_VAL 256

struct walk {
    struct option opts[RUNOPTS_MAX_FLAGS + 1];  /* zeroed terminator */
    const struct runopts_flag *flag[RUNOPTS_MAX_FLAGS];
    void *dst[RUNOPTS_MAX_FLAGS];
    char shorts[2 * RUNOPTS_MAX_FLAGS + 2];      /* ":" first: a missing value is ':' */
    size_t n;
};

static void walk_init(struct walk *w, const struct runopts_table *t, size_t n_tables)
{
    memset(w, 0, sizeof *w);
    size_t ns = 0;
    w->shorts[ns++] = ':';
    for (size_t k = 0; k < n_tables; k++) {
        for (size_t i = 0; i < t[k].n; i++) {
            const struct runopts_flag *f = &t[k].flags[i];
            int has_arg = f->kind == RUNOPTS_KIND_VALUE || f->kind == RUNOPTS_KIND_CALL;
            if (w->n == RUNOPTS_MAX_FLAGS) {
                ll_errorf("more than RUNOPTS_MAX_FLAGS flags");
                abort();
            }
            w->opts[w->n] = (struct option){f->name, has_arg ? required_argument : no_argument,
                                            NULL, WALK_VAL + (int)w->n};
            w->flag[w->n] = f;
            w->dst[w->n++] = t[k].dst;
            if (f->short_name) {
                w->shorts[ns++] = f->short_name;
                if (has_arg)
                    w->shorts[ns++] = ':';
            }
        }
    }
}

/* The index of the flag getopt_long returned c for, or -1. */
static int walk_find(const struct walk *w, int c)
{
    if (c >= WALK_VAL && (size_t)(c - WALK_VAL) < w->n)
        return c - WALK_VAL;
    for (size_t i = 0; i < w->n; i++) {
        if (w->flag[i]->short_name && w->flag[i]->short_name == c)
            return (int)i;
    }
    return -1;
}

/* Store flag f's value a (NULL for a flag that takes none) into dst. */
static int flag_take(const struct runopts_flag *f, void *dst, const char *a, char *err,
                     size_t errlen)
{
    char *field = (char *)dst + f->off;
    switch (f->kind) {
    case RUNOPTS_KIND_VALUE: *(const char **)(void *)field = a; return 0;
    case RUNOPTS_KIND_SET: *(int *)(void *)field = 1; return 0;
    case RUNOPTS_KIND_CALL: return f->take(dst, a, err, errlen);
    case RUNOPTS_KIND_HELP: return RUNOPTS_HELP;
    }
    return 0;
}

int runopts_walk(int argc, char **argv, const struct runopts_table *t, size_t n_tables,
                 char *err, size_t errlen)
{
    struct walk w; /* on the stack: nothing to free on any way out */
    walk_init(&w, t, n_tables);
    optind = 1;
    opterr = 0;
    int c;
    while ((c = getopt_long(argc, argv, w.shorts, w.opts, NULL)) != -1) {
        if (c == ':')
            return RUNOPTS_NO_VALUE;
        int i = walk_find(&w, c);
        if (i < 0)
            return RUNOPTS_UNKNOWN;
        int rc = flag_take(w.flag[i], w.dst[i], optarg, err, errlen);
        if (rc != 0)
            return rc;
    }
    return 0;
}

int runopts_parse(int argc, char **argv, const char *cmd, const struct runopts_table *own,
                  int max_operands, struct run_opts *o, int *first, char *err, size_t errlen)
{
    struct runopts_table t[2] = {{common_flags, LL_ARRAY_LEN(common_flags), o}};
    if (own)
        t[1] = *own;
    int rc = runopts_walk(argc, argv, t, own ? 2 : 1, err, errlen);
    if (rc == RUNOPTS_NO_VALUE)
        return runopts_errf(err, errlen, "%s: needs a value (see llmload %s --help)",
                            argv[optind - 1], cmd);
    if (rc == RUNOPTS_UNKNOWN)
        return runopts_errf(err, errlen, "unknown option \"%s\" (see llmload %s --help)",
                            argv[optind - 1], cmd);
    if (rc != 0)
        return rc;
    if (argc - optind > max_operands)
        return runopts_errf(err, errlen, "unexpected argument \"%s\" (see llmload %s --help)",
                            argv[optind + max_operands], cmd);
    *first = optind;
    return 0;
}

int runopts_usage_exit(int rc, const char *err, void (*usage)(FILE *f))
{
    if (rc == RUNOPTS_HELP) {
        usage(stdout);
        return LL_EXIT_OK;
    }
    ll_errorf("%s", err);
    return LL_EXIT_USAGE;
}

int runopts_positive(const char *name, const char *v, double *out, char *err, size_t errlen)
{
    double x;
    if (ll_parse_count(v, &x) != 0 || !(x > 0))
        return runopts_errf(err, errlen, "%s: expected a positive number (e.g. 20 or 1.5k), "
                            "got \"%s\"", name, v);
    *out = x;
    return 0;
}

int runopts_count(const char *name, const char *v, uint64_t min, uint64_t *out, char *err,
                  size_t errlen)
{
    double x;
    if (ll_parse_count(v, &x) != 0 || x != floor(x) || x < (double)min || x > 1.8e19)
        return runopts_errf(err, errlen, "%s: expected a whole number >= %llu (e.g. 100 or "
                            "10k), got \"%s\"", name, (unsigned long long)min, v);
    *out = (uint64_t)x;
    return 0;
}

int runopts_count_upto(const char *name, const char *v, uint32_t max, uint32_t *out, char *err,
                       size_t errlen)
{
    uint64_t n;
    if (runopts_count(name, v, 1, &n, err, errlen) != 0)
        return LL_E_INVAL;
    if (n > max)
        return runopts_errf(err, errlen, "%s: at most %u, got \"%s\"", name, max, v);
    *out = (uint32_t)n;
    return 0;
}

int runopts_percent(const char *name, const char *v, double lo, double hi, double *out, char *err,
                    size_t errlen)
{
    char num[64];
    size_t n = strlen(v);
    double x;
    if (n > 0 && v[n - 1] == '%')
        n--;
    if (n >= sizeof num || (memcpy(num, v, n), num[n] = '\0', ll_parse_double(num, &x)) != 0 ||
        !(x > lo) || x > hi)
        return runopts_errf(err, errlen,
                            "%s: expected a percentage %s %g and at most %g (e.g. 2%%), "
                            "got \"%s\"",
                            name, lo < 0 ? "from" : "above", lo < 0 ? 0.0 : lo, hi, v);
    *out = x / 100;
    return 0;
}

int runopts_duration(const char *name, const char *v, uint64_t *out_ns, char *err,
                     size_t errlen)
{
    if (ll_parse_duration_ns(v, LL_NS_PER_SEC, out_ns) != 0)
        return runopts_errf(err, errlen, "%s: expected a duration (e.g. 500ms, 30s, 2m), "
                            "got \"%s\"", name, v);
    return 0;
}

int runopts_duration_pos(const char *name, const char *v, uint64_t *out_ns, char *err,
                         size_t errlen)
{
    if (runopts_duration(name, v, out_ns, err, errlen) != 0)
        return LL_E_INVAL;
    if (*out_ns == 0)
        return runopts_errf(err, errlen, "%s: must be more than 0", name);
    return 0;
}

int runopts_dist(const char *name, const char *v, enum dist_unit unit, int nonneg,
                 struct dist *out, char *err, size_t errlen)
{
    char why[200];
    if (dist_parse(v, unit, out, why, sizeof why) != 0 ||
        (nonneg && dist_require_nonneg(out, why, sizeof why) != 0))
        return runopts_errf(err, errlen, "%s: %s", name, why);
    return 0;
}

int runopts_gpu_sampler(const char *a, int *smi, char *err, size_t errlen)
{
    if (strcmp(a, "nvidia-smi") != 0)
        return runopts_errf(err, errlen, "--gpu-sampler: expected nvidia-smi, got \"%s\"", a);
    *smi = 1;
    return 0;
}

int runopts_gpu_url(const char *a, const char **urls, size_t *n, char *err, size_t errlen)
{
    if (strncmp(a, "http://", 7) != 0 && strncmp(a, "https://", 8) != 0)
        return runopts_errf(err, errlen,
                            "--gpu-metrics: expected an http:// or https:// URL, got \"%s\"", a);
    if (*n == RUNOPTS_MAX_GPU_URLS)
        return runopts_errf(err, errlen, "--gpu-metrics: at most %d URLs", RUNOPTS_MAX_GPU_URLS);
    urls[(*n)++] = a;
    return 0;
}

int runopts_metrics_flags(const char *interval, int off, const char *url,
                          uint64_t *interval_ns, char *err, size_t errlen)
{
    *interval_ns = SCRAPE_DEFAULT_INTERVAL_NS;
    if (interval && runopts_duration("--metrics-interval", interval, interval_ns, err,
                                     errlen) != 0)
        return LL_E_INVAL;
    if (*interval_ns < SCRAPE_MIN_INTERVAL_NS)
        return runopts_errf(err, errlen, "--metrics-interval: at least 100ms, got \"%s\"",
                            interval);
    if (off && url)
        return runopts_errf(err, errlen, "--no-metrics and --metrics-url: pick one");
    return 0;
}

void runopts_config_init(struct run_config *cfg)
{
    memset(cfg, 0, sizeof *cfg);
    cfg->records_fd = -1;
    cfg->hist_fd = -1;
    cfg->step = -1;
}

int runopts_slo(const struct run_opts *o, struct run_config *cfg, char *err, size_t errlen)
{
    if (o->slo) {
        char why[200];
        if (slo_parse(o->slo, &cfg->slo, why, sizeof why) != 0)
            return runopts_errf(err, errlen, "--slo: %s", why);
    }
    cfg->lateness_tolerance = VERDICT_TOLERANCE_DEFAULT;
    if (o->lateness_tolerance && runopts_percent("--lateness-tolerance", o->lateness_tolerance, 0,
                                                 100, &cfg->lateness_tolerance, err, errlen) != 0)
        return LL_E_INVAL;
    return 0;
}

int runopts_seed(const struct run_opts *o, uint64_t *seed, char *err, size_t errlen)
{
    *seed = 1;
    if (o->seed && (ll_parse_u64(o->seed, seed) != 0 || *seed > INT64_MAX))
        return runopts_errf(err, errlen, "--seed: expected a whole number from 0 to 2^63-1, "
                            "got \"%s\"", o->seed);
    return 0;
}

int runopts_prompt_salt(const struct run_opts *o, struct run_config *cfg, char *err, size_t errlen)
{
    const char *v = o->prompt_salt;
    if (v && strcmp(v, "auto") != 0) {
        uint64_t salt;
        if (ll_parse_u64(v, &salt) != 0 || salt > INT64_MAX)
            return runopts_errf(err, errlen,
                                "--prompt-salt: expected auto or a whole number "
                                "from 0 to 2^63-1, got \"%s\"",
                                v);
        cfg->prompt_salt = salt;
        cfg->prompt_salt_auto = 0;
        return 0;
    }
    if (cfg->shards > 1) {
        if (!cfg->start_at_unix_ns && !o->dry_run)
            return runopts_errf(err, errlen,
                                "--prompt-salt: a sharded run needs one salt in every shard: "
                                "give --start-at TIME (auto is then derived from it) or "
                                "--prompt-salt N");
        struct rng r;
        rng_seed(&r, (uint64_t)cfg->start_at_unix_ns, cfg->workload.seed);
        uint64_t derived = rng_next(&r) & INT64_MAX;
        cfg->prompt_salt = derived ? derived : 1;
        cfg->prompt_salt_auto = 1;
        return 0;
    }
    uint64_t salt = 0;
    if (getrandom(&salt, sizeof salt, GRND_NONBLOCK) != (ssize_t)sizeof salt) {
        struct timespec ts;
        clock_gettime(CLOCK_REALTIME, &ts);
        salt = ((uint64_t)ts.tv_sec * 1000000000ULL + (uint64_t)ts.tv_nsec) ^
               ((uint64_t)getpid() << 40);
    }
    salt &= INT64_MAX;                  /* run.json keeps it as a JSON integer */
    cfg->prompt_salt = salt ? salt : 1; /* 0 is "no salt" */
    cfg->prompt_salt_auto = 1;
    return 0;
}

static const char *env_get(void *ud, const char *name)
{
    (void)ud;
    return getenv(name);
}

int runopts_shard(const struct run_opts *o, struct run_config *cfg, char *err, size_t errlen)
{
    cfg->shard = 0;
    cfg->shards = 0;
    cfg->shard_launcher = NULL;
    if (o->shards && (!o->shard || strcmp(o->shard, "auto") != 0))
        return runopts_errf(err, errlen,
                            "--shards: goes with --shard auto (a Kubernetes Indexed Job's "
                            "count); --shard K/N says it already");
    if (o->shard) {
        enum shard_launcher l = SHARD_FLAG;
        int rc = strcmp(o->shard, "auto") == 0
                     ? shard_from_env(env_get, NULL, o->shards, &cfg->shard, &cfg->shards, &l, err,
                                      errlen)
                     : shard_parse(o->shard, &cfg->shard, &cfg->shards, err, errlen);
        if (rc != 0)
            return LL_E_INVAL;
        cfg->shard_launcher = shard_launcher_name(l);
        if (cfg->shards > 1 && o->calibrate)
            return runopts_errf(err, errlen,
                                "--calibrate auto: each shard would fit its own prompt lengths; "
                                "fit once with llmload calibrate and give every shard "
                                "--calibration FILE");
        if (cfg->mode == LOAD_CLOSED && cfg->users < cfg->shards)
            return runopts_errf(err, errlen,
                                "--users: %u users cannot fill %u shards (user u runs in shard "
                                "u mod N): give at least %u",
                                cfg->users, cfg->shards, cfg->shards);
    }
    if (o->start_at) {
        if (shard_parse_start_at(o->start_at, &cfg->start_at_unix_ns, err, errlen) != 0)
            return LL_E_INVAL;
        struct timespec ts;
        clock_gettime(CLOCK_REALTIME, &ts);
        int64_t now = (int64_t)ts.tv_sec * (int64_t)LL_NS_PER_SEC + ts.tv_nsec;
        if (now - cfg->start_at_unix_ns > (int64_t)RUNOPTS_START_PAST_NS)
            return runopts_errf(err, errlen,
                                "--start-at: %s is %.1f s past already (more than 1 s); give "
                                "a time ahead of every shard's start",
                                o->start_at, (double)(now - cfg->start_at_unix_ns) / 1e9);
    }
    return 0;
}

int runopts_arrival(const struct run_opts *o, uint64_t seed, struct arrival_config *a,
                    char *err, size_t errlen)
{
    a->kind = ARRIVAL_POISSON;
    a->burstiness = 1;
    a->seed = seed;
    if (o->arrival && arrival_parse_kind(o->arrival, &a->kind) != 0)
        return runopts_errf(err, errlen, "--arrival: expected constant, poisson or gamma, "
                            "got \"%s\"", o->arrival);
    if (o->burstiness) {
        if (runopts_positive("--burstiness", o->burstiness, &a->burstiness, err, errlen) != 0)
            return LL_E_INVAL;
        if (!o->arrival)
            a->kind = ARRIVAL_GAMMA;
        else if (a->kind != ARRIVAL_GAMMA)
            return runopts_errf(err, errlen, "--burstiness: applies to --arrival gamma, not %s",
                                o->arrival);
    }
    return 0;
}

/* A --*-fraction flag, from 0 to 1; 1 when absent (the flags beside it
 * turn the feature on for every request). */
static int fraction_flag(const char *name, const char *v, double *out, char *err, size_t errlen)
{
    double x = 1.0;
    if (v && (ll_parse_double(v, &x) != 0 || !(x >= 0 && x <= 1)))
        return runopts_errf(err, errlen, "%s: expected a fraction from 0 to 1 (e.g. 0.3), "
                            "got \"%s\"", name, v);
    *out = x;
    return 0;
}

/* flags beside --workload, whose classes set what (lengths, prefixes...). */
static int set_per_class(const char *flags, const char *what, char *err, size_t errlen)
{
    return runopts_errf(err, errlen, "%s: with --workload, %s are set per class in the file",
                        flags, what);
}

/* Whether a length flag's value names an empirical file. */
static int is_empirical(const char *v)
{
    return v && strncmp(v, "empirical:", 10) == 0;
}

/* Load `empirical:FILE[#input|#output]` of flag name into *out (caller
 * frees with empirical_free): the column is the suffix's, else def_col of
 * a two-column file, else the only column. 0 or LL_E_INVAL. */
static int empirical_flag(const char *name, const char *v, int def_col, struct empirical **out,
                          int *col, char *err, size_t errlen)
{
    const char *path = v + 10;
    size_t n = strlen(path);
    int want = -1;
    if (n > 6 && strcmp(path + n - 6, "#input") == 0) {
        want = EMPIRICAL_COL_INPUT;
        n -= 6;
    } else if (n > 7 && strcmp(path + n - 7, "#output") == 0) {
        want = EMPIRICAL_COL_OUTPUT;
        n -= 7;
    }
    if (n == 0)
        return runopts_errf(err, errlen, "%s: expected empirical:FILE (a CSV or JSONL of "
                            "observed lengths), got \"%s\"", name, v);
    char *file = ll_malloc(n + 1);
    memcpy(file, path, n);
    file[n] = 0;
    char why[512];
    struct empirical *e = NULL;
    int rc = 0;
    if (empirical_load(file, DIST_UNIT_NONE, &e, why, sizeof why) != 0) {
        rc = runopts_errf(err, errlen, "%s: %s", name, why);
        goto out;
    }
    int cols = empirical_columns(e);
    if (want >= 0 && cols < 2) {
        empirical_free(e);
        rc = runopts_errf(err, errlen, "%s: %s has one column; #input and #output name a "
                          "column of a two-column file", name, file);
        goto out;
    }
    *col = want >= 0 ? want : cols == 2 ? def_col : EMPIRICAL_COL_VALUE;
    *out = e;
out:
    free(file);
    return rc;
}

/* --prompt-tokens / --output-tokens empirical:FILE, --lengths, --dataset
 * and --calibration FILE into wl (checked against --workload by the
 * caller), the fit into *fit; --calibrate checked (its fit comes later,
 * run_setup_calibrate). What it loaded stays in wl, for
 * runopts_workload_free, even on an error. */
static int runopts_workload_files(const struct run_opts *o, struct workload *wl,
                                  struct calib_fit *fit, char *err, size_t errlen)
{
    if (o->calibrate) {
        if (strcmp(o->calibrate, "auto") != 0)
            return runopts_errf(err, errlen, "--calibrate: expected auto, got \"%s\"",
                                o->calibrate);
        if (o->calibration)
            return runopts_errf(err, errlen,
                                "--calibrate and --calibration: pick one (a fit "
                                "made now, or one from a file)");
        if (o->dataset)
            return runopts_errf(err, errlen,
                                "--calibrate: --dataset prompts are sent "
                                "verbatim; there is nothing to scale");
    }
    struct empirical *e = NULL;
    if (o->lengths) {
        if (o->workload)
            return set_per_class("--lengths", "lengths", err, errlen);
        if (o->prompt_tokens || o->output_tokens)
            return runopts_errf(err, errlen, "--lengths: gives both lengths; drop "
                                "--prompt-tokens and --output-tokens");
        if (!is_empirical(o->lengths))
            return runopts_errf(err, errlen, "--lengths: expected empirical:FILE (two columns, "
                                "input,output), got \"%s\"", o->lengths);
        size_t n = strlen(o->lengths);
        if ((n > 6 && strcmp(o->lengths + n - 6, "#input") == 0) ||
            (n > 7 && strcmp(o->lengths + n - 7, "#output") == 0))
            return runopts_errf(err, errlen, "--lengths: takes both columns; drop the #column "
                                "from \"%s\"", o->lengths);
        int col;
        if (empirical_flag("--lengths", o->lengths, 0, &e, &col, err, errlen) != 0)
            return LL_E_INVAL;
        if (empirical_columns(e) != 2) {
            empirical_free(e);
            return runopts_errf(err, errlen, "--lengths: expected a two-column file "
                                "(input,output), got one column in \"%s\"", o->lengths + 10);
        }
        wl->pairs = e;
    }
    if (is_empirical(o->prompt_tokens)) {
        if (empirical_flag("--prompt-tokens", o->prompt_tokens, EMPIRICAL_COL_INPUT, &e,
                           &wl->prompt_col, err, errlen) != 0)
            return LL_E_INVAL;
        wl->prompt_emp = e;
    }
    if (is_empirical(o->output_tokens)) {
        if (empirical_flag("--output-tokens", o->output_tokens, EMPIRICAL_COL_OUTPUT, &e,
                           &wl->output_col, err, errlen) != 0)
            return LL_E_INVAL;
        wl->output_emp = e;
    }
    if (o->dataset) {
        if (o->prompt_tokens)
            return runopts_errf(err, errlen, "--dataset: prompt lengths come from the data; "
                                "drop --prompt-tokens");
        if (o->lengths)
            return runopts_errf(err, errlen, "--dataset: prompt lengths come from the data; "
                                "drop --lengths");
        if (o->prefix_fraction || o->prefix_groups || o->prefix_tokens)
            return runopts_errf(err, errlen, "--dataset: prompts are sent verbatim; --prefix-* "
                                "does not apply");
        char why[512];
        struct dataset *d = NULL;
        if (dataset_load(o->dataset, &d, why, sizeof why) != 0)
            return runopts_errf(err, errlen, "--dataset: %s", why);
        wl->dataset = d;
    }
    if (o->calibration) {
        char why[512];
        if (calib_fit_load(o->calibration, fit, why, sizeof why) != 0)
            return runopts_errf(err, errlen, "--calibration: %s", why);
        wl->calib.tokens_per_word = fit->slope;
        wl->calib.intercept_tokens = fit->intercept;
    }
    return 0;
}

/* The shared prefix flags into wl->prefix (--workload excludes them). */
static int runopts_prefix(const struct run_opts *o, struct wl_prefix *px, char *err,
                          size_t errlen)
{
    if (o->workload)
        return set_per_class("--prefix-*", "prefixes", err, errlen);
    if (fraction_flag("--prefix-fraction", o->prefix_fraction, &px->fraction, err, errlen) != 0)
        return LL_E_INVAL;
    px->groups = 1;
    if (o->prefix_groups && runopts_count_upto("--prefix-groups", o->prefix_groups,
                                               WL_MAX_PREFIX_GROUPS, &px->groups, err,
                                               errlen) != 0)
        return LL_E_INVAL;
    if (!o->prefix_tokens)
        return runopts_errf(err, errlen, "--prefix-fraction: needs --prefix-tokens L (the "
                            "prefix length)");
    if (runopts_count_upto("--prefix-tokens", o->prefix_tokens, WL_MAX_PREFIX_TOKENS,
                           &px->tokens, err, errlen) != 0)
        return LL_E_INVAL;
    if (o->all_unique)
        px->fraction = 0;
    return 0;
}

/* The cancellation flags into wl->cancel (--workload excludes them). */
static int runopts_cancel(const struct run_opts *o, struct wl_cancel *cx, char *err,
                          size_t errlen)
{
    if (o->workload)
        return set_per_class("--cancel-*", "cancellations", err, errlen);
    if (!o->cancel_after && !o->cancel_after_tokens)
        return runopts_errf(err, errlen, "--cancel-fraction: needs --cancel-after DIST or "
                            "--cancel-after-tokens DIST");
    if (fraction_flag("--cancel-fraction", o->cancel_fraction, &cx->fraction, err, errlen) != 0)
        return LL_E_INVAL;
    int rc;
    if (o->cancel_after) {
        cx->kind = WL_CANCEL_AFTER_TIME;
        rc = runopts_dist("--cancel-after", o->cancel_after, DIST_UNIT_DURATION_NS, 1,
                          &cx->after, err, errlen);
    } else {
        cx->kind = WL_CANCEL_AFTER_TOKENS;
        rc = runopts_dist("--cancel-after-tokens", o->cancel_after_tokens, DIST_UNIT_NONE, 1,
                          &cx->after, err, errlen);
    }
    if (rc != 0)
        return rc;
    if (cx->fraction == 0)
        cx->kind = WL_CANCEL_NONE;
    return 0;
}

/* --workload, the prefix flags, --all-unique and the cancellation flags
 * into cfg->workload (and the transport's need for timed cancels). */
static int runopts_workload_realism(const struct run_opts *o, struct run_config *cfg,
                                    char *err, size_t errlen)
{
    struct workload *wl = &cfg->workload;
    if (o->workload) {
        if (o->prompt_tokens || o->output_tokens)
            return runopts_errf(err, errlen, "--workload: lengths come from its classes; drop "
                                "--prompt-tokens and --output-tokens");
        char why[512];
        struct wl_file *f = NULL;
        if (wl_file_load(o->workload, &f, why, sizeof why) != 0)
            return runopts_errf(err, errlen, "--workload: %s", why);
        if (o->all_unique) {
            for (size_t i = 0; i < f->n; i++)
                f->classes[i].prefix.fraction = 0;
        }
        wl->classes = f;
    }
    if (runopts_workload_files(o, wl, &cfg->calib_fit, err, errlen) != 0)
        return LL_E_INVAL;
    if ((o->prefix_fraction || o->prefix_groups || o->prefix_tokens) &&
        runopts_prefix(o, &wl->prefix, err, errlen) != 0)
        return LL_E_INVAL;
    if (o->cancel_after && o->cancel_after_tokens)
        return runopts_errf(err, errlen, "--cancel-after and --cancel-after-tokens: pick one");
    if ((o->cancel_fraction || o->cancel_after || o->cancel_after_tokens) &&
        runopts_cancel(o, &wl->cancel, err, errlen) != 0)
        return LL_E_INVAL;
    int timed = wl->cancel.kind == WL_CANCEL_AFTER_TIME;
    for (size_t i = 0; wl->classes && i < wl->classes->n; i++)
        timed |= wl->classes->classes[i].cancel.kind == WL_CANCEL_AFTER_TIME;
    cfg->transport.cancels = timed;
    return 0;
}

void runopts_workload_free(struct run_config *cfg)
{
    struct workload *wl = &cfg->workload;
    wl_file_free((struct wl_file *)wl->classes);
    wl->classes = NULL;
    empirical_free((struct empirical *)wl->prompt_emp);
    wl->prompt_emp = NULL;
    empirical_free((struct empirical *)wl->output_emp);
    wl->output_emp = NULL;
    empirical_free((struct empirical *)wl->pairs);
    wl->pairs = NULL;
    dataset_free((struct dataset *)wl->dataset);
    wl->dataset = NULL;
    struct extrabody *x = (struct extrabody *)cfg->transport.extra;
    for (size_t i = 0; x && i < cfg->transport.n_extra; i++)
        extrabody_free(&x[i]);
    free(x);
    cfg->transport.extra = NULL;
    cfg->transport.n_extra = 0;
}

int runopts_check_url(const char *url, char *err, size_t errlen)
{
    if (strncmp(url, "http://", 7) != 0 && strncmp(url, "https://", 8) != 0)
        return runopts_errf(err, errlen, "--url: expected http://HOST:PORT/... or https://..., "
                            "got \"%s\"", url);
    const char *a = strstr(url, "://") + 3;
    size_t n = strcspn(a, "/?#");
    if (memchr(a, '@', n))
        return runopts_errf(err, errlen, "--url: user info (USER:PASSWORD@) is not taken: the "
                            "URL is written to run.json and the report; send credentials with "
                            "-H or --api-key-env");
    const char *end = a + n, *p = a;
    if (p < end && *p == '[') {
        const char *rb = memchr(p, ']', n);
        if (!rb)
            return runopts_errf(err, errlen, "--url: unbalanced [ in the host of \"%s\"", url);
        p = rb + 1;
    } else {
        while (p < end && *p != ':')
            p++;
    }
    if (p == a || (a[0] == '[' && p == a + 2))
        return runopts_errf(err, errlen, "--url: no host in \"%s\"", url);
    if (p == end)
        return 0;
    if (*p != ':')
        return runopts_errf(err, errlen, "--url: unexpected \"%.*s\" after the host in \"%s\"",
                            (int)(end - p), p, url);
    p++;
    unsigned long port = 0;
    const char *d = p;
    while (d < end && *d >= '0' && *d <= '9' && port <= 65535)
        port = port * 10 + (unsigned long)(*d++ - '0');
    if (d == p || d != end || port == 0 || port > 65535)
        return runopts_errf(err, errlen, "--url: the port must be 1 to 65535, got \"%.*s\"",
                            (int)(end - p), p);
    return 0;
}

/* Several --url and --url-weights into e (e->n 0 with one --url):
 * each URL checked, the weights one per URL. */
static int runopts_endpoints(const struct run_opts *o, struct endpoints *e, char *err,
                             size_t errlen)
{
    memset(e, 0, sizeof *e);
    if (o->n_urls < 2) {
        if (o->url_weights)
            return runopts_errf(err, errlen,
                                "--url-weights: goes with two or more --url "
                                "(requests spread over them); add them, or drop it");
        return 0;
    }
    for (size_t i = 1; i < o->n_urls; i++) {
        if (runopts_check_url(o->urls[i], err, errlen) != 0)
            return LL_E_INVAL;
    }
    uint32_t w[ENDPOINTS_MAX];
    size_t n = 0;
    if (o->url_weights) {
        if (endpoints_parse_weights(o->url_weights, w, ENDPOINTS_MAX, &n, err, errlen) != 0)
            return LL_E_INVAL;
        if (n != o->n_urls)
            return runopts_errf(err, errlen,
                                "--url-weights: %zu weight%s for %zu --url; give "
                                "one per --url, in order",
                                n, n == 1 ? "" : "s", o->n_urls);
    }
    if (endpoints_plan(e, o->urls, o->url_weights ? w : NULL, o->n_urls) != 0)
        return runopts_errf(err, errlen, "--url: could not plan %zu endpoints", o->n_urls);
    return 0;
}

/* Is url's host a loopback address (127.x.y.z, ::1, localhost)? */
static int runopts_url_is_loopback(const char *url)
{
    const char *h = strstr(url, "://");
    h = h ? h + 3 : url;
    if (strncmp(h, "127.", 4) == 0 || strncmp(h, "[::1]", 5) == 0)
        return 1;
    return strncasecmp(h, "localhost", 9) == 0 && (h[9] == '\0' || h[9] == ':' || h[9] == '/');
}

/* The length and realism flags of the workload, and --max-inflight. */
static int runopts_workload(const struct run_opts *o, uint64_t seed, struct run_config *cfg,
                            char *err, size_t errlen)
{
    struct workload *wl = &cfg->workload;
    wl->seed = seed;
    wl->ignore_eos = o->ignore_eos;
    /* An empirical:FILE is loaded by runopts_workload_files; the DIST
     * keeps the default then (unused, but well-formed). */
    if (runopts_dist("--prompt-tokens", o->prompt_tokens && !is_empirical(o->prompt_tokens)
                                            ? o->prompt_tokens
                                            : RUNOPTS_DEFAULT_PROMPT,
                     DIST_UNIT_NONE, 1, &wl->prompt_tokens, err, errlen) != 0 ||
        runopts_dist("--output-tokens", o->output_tokens && !is_empirical(o->output_tokens)
                                            ? o->output_tokens
                                            : RUNOPTS_DEFAULT_OUTPUT,
                     DIST_UNIT_NONE, 1, &wl->output_tokens, err, errlen) != 0 ||
        runopts_workload_realism(o, cfg, err, errlen) != 0)
        return LL_E_INVAL;
    /* Lengths no model's context holds cannot be meant: an error; a p99
     * beyond most contexts, a warning (once: a sweep parses again). */
    static int warned;
    const struct {
        const char *flag, *spec;
        const struct dist *d;
    } lens[] = {
        {"--prompt-tokens", o->prompt_tokens, &wl->prompt_tokens},
        {"--output-tokens", o->output_tokens, &wl->output_tokens},
    };
    for (size_t i = 0; i < LL_ARRAY_LEN(lens); i++) {
        char warn[300];
        if (!lens[i].spec || is_empirical(lens[i].spec))
            continue;
        if (dist_check_tokens(lens[i].d, lens[i].flag, lens[i].spec, err, errlen, warn,
                              sizeof warn) != 0)
            return LL_E_INVAL;
        if (warn[0] && !warned) {
            warned = 1;
            ll_errorf("%s", warn);
        }
    }
    if (o->max_inflight && runopts_count_upto("--max-inflight", o->max_inflight, 10000000,
                                              &cfg->max_inflight, err, errlen) != 0)
        return LL_E_INVAL;
    return 0;
}

/* --threads: by default the online CPUs, at most 8, half of them for a
 * loopback target. */
static int runopts_threads(const struct run_opts *o, struct run_config *cfg, char *err,
                           size_t errlen)
{
    long cpus = sysconf(_SC_NPROCESSORS_ONLN);
    if (cpus < 1)
        cpus = 1;
    /* A target on this machine (loopback) needs CPU too: leave it half
     * the cores. On 2 cores, two client threads beside a local server made
     * the schedule late (bench/run.sh, 64-token streams: lateness p99
     * 2.4 ms with 2 threads, 0.4-0.8 ms with 1). */
    if (runopts_url_is_loopback(o->url ? o->url : RUNOPTS_DEFAULT_URL))
        cpus = cpus / 2 > 0 ? cpus / 2 : 1;
    cfg->threads = (uint32_t)LL_MIN(cpus, 8);
    if (o->threads && runopts_count_upto("--threads", o->threads, 256, &cfg->threads, err,
                                         errlen) != 0)
        return LL_E_INVAL;
    return 0;
}

/* A timeout flag, or its default when absent. */
static int timeout_flag(const char *name, const char *v, uint64_t def_ns, uint64_t *out_ns,
                        char *err, size_t errlen)
{
    *out_ns = def_ns;
    return v ? runopts_duration(name, v, out_ns, err, errlen) : 0;
}

/* Add the keys of x that replace llmload's own for api to list (len
 * bytes, ", "-joined, each once). */
static void note_replaced(const struct extrabody *x, enum oai_api api, char *list, size_t len)
{
    const char *key;
    json_t *val;
    if (!x->skip)
        return;
    json_object_foreach(x->json, key, val)
    {
        char quoted[160];
        snprintf(quoted, sizeof quoted, "\"%.150s\"", key);
        if (!extrabody_own(api, key) || strstr(list, quoted))
            continue;
        size_t at = strlen(list);
        snprintf(list + at, len - at, "%s%s", at ? ", " : "", quoted);
    }
}

/* --extra-body and the --workload classes' extra_body into
 * cfg->transport.extra: [0] for requests without a class, then one per
 * class (merged over the global one, checked against the class's API). */
static int runopts_extra_body(const struct run_opts *o, struct run_config *cfg, char *err,
                              size_t errlen)
{
    struct transport_config *tc = &cfg->transport;
    const struct wl_file *f = cfg->workload.classes;
    int any_class = 0;
    for (size_t i = 0; f && i < f->n; i++)
        any_class |= f->classes[i].extra_body != NULL;
    if (o->extra_body_override && !o->extra_body && !any_class)
        return runopts_errf(err, errlen,
                            "--extra-body-override: goes with --extra-body (or a "
                            "--workload class's extra_body); add one, or drop it");
    if (!o->extra_body && !any_class)
        return 0;
    json_t *global = NULL;
    if (o->extra_body) {
        int rc = extrabody_parse_arg("--extra-body", o->extra_body, &global, err, errlen);
        if (rc != 0)
            return rc;
    }
    /* One per class whenever there are classes: a class's API may differ
     * from --api, and its own keys with it. */
    size_t n = 1 + (f ? f->n : 0);
    struct extrabody *x = ll_calloc(n, sizeof *x);
    tc->extra = x;
    tc->n_extra = n;
    char replaced[256] = ""; /* the keys of llmload's that an extra value replaces */
    int rc = extrabody_build(global, NULL, tc->api, o->extra_body_override, "--extra-body",
                             "--extra-body", &x[0], err, errlen);
    note_replaced(&x[0], tc->api, replaced, sizeof replaced);
    for (size_t i = 1; rc == 0 && i < n; i++) {
        const struct wl_class *k = &f->classes[i - 1];
        enum oai_api api = k->api >= 0 ? (enum oai_api)k->api : tc->api;
        char where[WL_NAME_MAX + 512], gwhere[WL_NAME_MAX + 64];
        snprintf(where, sizeof where, "%s: classes[%zu] (\"%s\").extra_body", o->workload, i - 1,
                 k->name);
        snprintf(gwhere, sizeof gwhere, "--extra-body (class \"%s\")", k->name);
        rc = extrabody_build(global, k->extra_body, api, o->extra_body_override, gwhere, where,
                             &x[i], err, errlen);
        note_replaced(&x[i], api, replaced, sizeof replaced);
    }
    json_decref(global);
    if (rc != 0)
        return LL_E_INVAL;
    /* Once: a sweep parses its flags again for every step. */
    static int warned;
    if (replaced[0] && !warned) {
        warned = 1;
        ll_errorf("warning: --extra-body-override: the extra body sends %s in place of "
                  "llmload's; token counts and streaming may no longer match what llmload "
                  "expects",
                  replaced);
    }
    return 0;
}

/* A class that gets shared images but has no shared prefix to share them. */
#define PREFIX_IMAGES_ALONE                                                                        \
    "%s: class \"%s\" has prefix_images but no \"prefix\": shared images belong to a prefix "      \
    "group; give the class a \"prefix\" or drop its prefix_images"

/* --images, --prefix-images, --image-size(s), --image-format into
 * cfg->workload.images, and the refusals: an API whose body cannot carry
 * images (completions and embeddings, for the flags or for a class that
 * gets them; so token-ID prompts, which go to completions only, never
 * meet images), sessions, and shared images without a shared prefix to
 * belong to. A shared prefix with images is fine: the group's images and
 * its text come first, each request's own images after them
 * (chatbody.c). */
static int runopts_images(const struct run_opts *o, struct run_config *cfg, char *err,
                          size_t errlen)
{
    struct image_cfg *c = &cfg->workload.images;
    const struct wl_file *f = cfg->workload.classes;
    if (o->image_size && o->image_sizes)
        return runopts_errf(err, errlen,
                            "--image-size and --image-sizes: give one (a single "
                            "size, or a weighted list)");
    const char *sizes = o->image_size ? o->image_size : o->image_sizes;
    const char *const what[3] = {"--images", o->image_size ? "--image-size" : "--image-sizes",
                                 "--image-format"};
    if (!o->images && !o->prefix_images && (sizes || o->image_format))
        return runopts_errf(err, errlen,
                            "%s: goes with --images DIST (images per request) or "
                            "--prefix-images N",
                            sizes ? what[1] : what[2]);
    if (o->image_size && strchr(o->image_size, ','))
        return runopts_errf(err, errlen, "--image-size: one WxH; a list goes to --image-sizes");
    uint32_t shared = 0;
    if (o->prefix_images && runopts_count_upto("--prefix-images", o->prefix_images,
                                               IMAGE_PER_REQUEST_MAX, &shared, err, errlen) != 0)
        return LL_E_INVAL;
    /* Shared images alone: no image of a request's own. */
    const char *count = o->images ? o->images : o->prefix_images ? "0" : NULL;
    if (count && image_cfg_parse(what, count, sizes, o->image_format, c, err, errlen) != 0)
        return LL_E_INVAL;
    c->prefix_count = shared;
    /* The flag that gave the command line's images, for the refusals. */
    const char *flag = o->images ? "--images" : "--prefix-images";
    int any = c->set, shared_used = 0;
    for (size_t i = 0; f && i < f->n; i++) {
        const struct wl_class *k = &f->classes[i];
        int has = k->images.set || c->set;
        enum oai_api api = k->api >= 0 ? (enum oai_api)k->api : cfg->transport.api;
        any |= has;
        if (k->images.set && k->images.prefix_count > 0 && !(k->prefix.fraction > 0) &&
            !o->all_unique)
            return runopts_errf(err, errlen, PREFIX_IMAGES_ALONE, o->workload, k->name);
        shared_used |= !k->images.set && k->prefix.fraction > 0;
        if (has && (api == OAI_API_COMPLETIONS || api == OAI_API_EMBEDDINGS))
            return runopts_errf(err, errlen,
                                "%s: class \"%s\" sends images to %s, whose %s is text only; "
                                "images go to openai-chat, anthropic-messages or "
                                "openai-responses",
                                k->images.set ? o->workload : flag, k->name, oai_api_name(api),
                                api == OAI_API_COMPLETIONS ? "\"prompt\"" : "\"input\"");
    }
    if (shared && !o->all_unique && (f ? !shared_used : !(cfg->workload.prefix.fraction > 0)))
        return runopts_errf(err, errlen,
                            f ? "--prefix-images: no class of %s that takes the command line's "
                                "images has a \"prefix\"; the shared images belong to a prefix "
                                "group"
                              : "--prefix-images: needs a shared prefix (--prefix-fraction F "
                                "--prefix-tokens L): the images are shared by a prefix group%s",
                            f ? o->workload : "");
    enum oai_api run_api = cfg->transport.api;
    if (!f && c->set && (run_api == OAI_API_COMPLETIONS || run_api == OAI_API_EMBEDDINGS))
        return runopts_errf(err, errlen,
                            "%s: %s takes a text %s only; images go to openai-chat, "
                            "anthropic-messages or openai-responses (--api)",
                            flag, oai_api_name(run_api),
                            run_api == OAI_API_COMPLETIONS ? "\"prompt\"" : "\"input\"");
    if (any && cfg->mode == LOAD_SESSIONS)
        return runopts_errf(err, errlen,
                            "%s: a session resends its conversation, and earlier "
                            "turns' images are not kept; --sessions does not take images",
                            c->set ? flag : o->workload);
    return 0;
}

/* The transport: URL, API, --prompt-ids, stream, client, TLS, timeouts
 * and the SSE line bound. */
static int runopts_transport(const struct run_opts *o, uint64_t seed, struct run_config *cfg,
                             char *err, size_t errlen)
{
    struct transport_config *tc = &cfg->transport;
    tc->base_url = o->url ? o->url : RUNOPTS_DEFAULT_URL;
    if (runopts_check_url(tc->base_url, err, errlen) != 0 ||
        runopts_endpoints(o, &tc->endpoints, err, errlen) != 0)
        return LL_E_INVAL;
    tc->api = OAI_API_CHAT;
    if (o->api) {
        int a = oai_api_from_name(o->api);
        if (a < 0)
            return runopts_errf(err, errlen,
                                "--api: expected openai-chat, "
                                "openai-completions, anthropic-messages, openai-responses or "
                                "openai-embeddings, got \"%s\"",
                                o->api);
        tc->api = (enum oai_api)a;
    }
    if ((tc->api == OAI_API_ANTHROPIC || tc->api == OAI_API_RESPONSES) && o->calibrate)
        return runopts_errf(err, errlen,
                            "--calibrate: its probes speak OpenAI chat, not "
                            "%s; fit against an OpenAI chat endpoint of the same "
                            "model with llmload calibrate and pass --calibration FILE",
                            oai_api_name(tc->api));
    tc->stream = !o->no_stream;
    if (runopts_embeddings_check(o, cfg, err, errlen) != 0)
        return LL_E_INVAL;
    if (o->prompt_ids && runopts_prompt_ids_check(o, cfg, err, errlen) != 0)
        return LL_E_INVAL;
    if (runopts_images(o, cfg, err, errlen) != 0)
        return LL_E_INVAL;
    tc->prompt_ids = o->prompt_ids;
    tc->prompt_id_range = (struct chatbody_id_range){CHATBODY_ID_MIN, CHATBODY_ID_MAX};
    if (o->prompt_id_range && !o->prompt_ids)
        return runopts_errf(err, errlen,
                            "--prompt-id-range: goes with --prompt-ids (token-ID "
                            "prompts); add it, or drop --prompt-id-range");
    if (o->prompt_id_range &&
        runopts_prompt_id_range(o->prompt_id_range, &tc->prompt_id_range, err, errlen) != 0)
        return LL_E_INVAL;
    tc->ignore_eos = o->ignore_eos;
    tc->http2 = o->http2;
    if (!o->http_client || strcmp(o->http_client, "auto") == 0)
        tc->client = TRANSPORT_CLIENT_AUTO;
    else if (strcmp(o->http_client, "native") == 0)
        tc->client = TRANSPORT_CLIENT_NATIVE;
    else if (strcmp(o->http_client, "curl") == 0)
        tc->client = TRANSPORT_CLIENT_CURL;
    else
        return runopts_errf(err, errlen, "--http-client: expected auto, native or curl, got "
                            "\"%s\"", o->http_client);
    if (tc->client == TRANSPORT_CLIENT_NATIVE && o->http2)
        return runopts_errf(err, errlen, "--http-client native: speaks HTTP/1.1 only; drop "
                            "--http2 or use curl");
    for (size_t i = 0; i < o->n_urls; i++) {
        if (tc->client == TRANSPORT_CLIENT_NATIVE && strncasecmp(o->urls[i], "http://", 7) != 0)
            return runopts_errf(err, errlen,
                                "--http-client native: plain http:// only (got "
                                "\"%.80s\"); use curl for TLS",
                                o->urls[i]);
    }
    tc->insecure = o->insecure;
    tc->cacert = o->cacert;
    if (timeout_flag("--timeout-connect", o->t_connect, 10 * LL_NS_PER_SEC,
                     &tc->connect_timeout_ns, err, errlen) != 0 ||
        timeout_flag("--timeout-first-token", o->t_first, 60 * LL_NS_PER_SEC,
                     &tc->first_token_timeout_ns, err, errlen) != 0 ||
        timeout_flag("--timeout-idle", o->t_idle, 30 * LL_NS_PER_SEC, &tc->idle_timeout_ns, err,
                     errlen) != 0 ||
        timeout_flag("--timeout-total", o->t_total, 600 * LL_NS_PER_SEC, &tc->total_timeout_ns,
                     err, errlen) != 0)
        return LL_E_INVAL;
    tc->max_line_bytes = SSE_DEFAULT_MAX_LINE;
    if (o->max_line) {
        uint64_t m;
        if (runopts_count("--max-line", o->max_line, 64, &m, err, errlen) != 0)
            return LL_E_INVAL;
        if (m > (64u << 20))
            return runopts_errf(err, errlen, "--max-line: at most 64M, got \"%s\"",
                                o->max_line);
        tc->max_line_bytes = (size_t)m;
    }
    tc->seed = workload_content_seed(seed, cfg->prompt_salt);
    return runopts_extra_body(o, cfg, err, errlen);
}

int runopts_workload_transport(const struct run_opts *o, uint64_t seed,
                               struct run_config *cfg, char *err, size_t errlen)
{
    cfg->workload.seed = seed; /* the derived salt of a sharded run reads it */
    if (runopts_shard(o, cfg, err, errlen) != 0 || runopts_prompt_salt(o, cfg, err, errlen) != 0 ||
        (o->cold_start &&
         runopts_count("--cold-start", o->cold_start, 1, &cfg->cold_requests, err, errlen) != 0))
        return LL_E_INVAL;
    /* Every request cold leaves no warm ones to set them beside. */
    if (cfg->max_requests && cfg->cold_requests >= cfg->max_requests)
        return runopts_errf(err, errlen,
                            "--cold-start: %s is not below --requests %s: no request would "
                            "be warm",
                            o->cold_start, o->requests);
    if (runopts_workload(o, seed, cfg, err, errlen) != 0 ||
        runopts_threads(o, cfg, err, errlen) != 0 ||
        runopts_transport(o, seed, cfg, err, errlen) != 0)
        return LL_E_INVAL;
    return 0;
}
