/* runopts.c: the flags `run`, `replay` and `sweep` share, their checks and
 * run.json's config object (see runopts.h). Moved here from cmd_run.c so
 * the commands parse, check and record them the same way. The workload's
 * flags are checked in workloadopts.c, the target's and its transport's in
 * transportopts.c. */
#include "cli/runopts.h"

#include <getopt.h>
#include <math.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <time.h>
#include <unistd.h>

#include "cli/badarg.h"
#include "cli/runopts_int.h"
#include "cli/shard.h"
#include "measure/expect.h"
#include "measure/slo.h"
#include "metrics/scrape.h"
#include "util/rng.h"
#include "util/util.h"
#include "workload/wlfile.h"

/* -H, --header: "Name: value", repeatable up to RUNOPTS_MAX_HEADERS
 * (runopts_header_add, which calibrate's -H shares). */
static int take_header(void *dst, const char *a, char *err, size_t errlen)
{
    struct run_opts *o = dst;
    return runopts_header_add(o->headers, &o->n_headers, a, err, errlen);
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

/* --prometheus and its flags (promopts.c checks them). */
static int take_prom_header(void *dst, const char *a, char *err, size_t errlen)
{
    return promopts_take_header(&((struct run_opts *)dst)->prom, a, err, errlen);
}
static const struct runopts_flag prom_flags[] = {
    VALUE("prometheus", prom.url),
    VALUE("prometheus-selector", prom.selector),
    VALUE("prometheus-by", prom.by),
    {"prometheus-header", 0, RUNOPTS_KIND_CALL, 0, take_prom_header},
};
#undef VALUE
#undef SET

/* clang-format off */
const char runopts_workload_help[] =
"Workload realism (docs/workload.md):\n"
"  --workload FILE          traffic classes (JSON): weights, lengths, API, prefix groups,\n"
"                           cancellations and SLOs per class; records carry the class\n"
"  --prefix-fraction F      share of requests that begin with a shared prefix (0..1; default\n"
"                           0, or 1 when --prefix-tokens is given alone)\n"
"  --prefix-groups P        number of distinct shared prefixes (default 1)\n"
"  --prefix-tokens L        length of each shared prefix, tokens\n"
"  --all-unique             every prompt unique: turn all prefix sharing off (flags and file)\n"
"  --cancel-fraction F      share of clients that disconnect mid-stream (0..1; default\n"
"                           1: every one, when only a --cancel-after flag is given)\n"
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

/* Store flag f's value a (NULL for a flag that takes none) into dst. A
 * value must be UTF-8: run.json and summary.json record the settings, and
 * jansson writes no string that is not (a --model of bytes that are not
 * was left out of run.json, and out of its config_hash). */
static int flag_take(const struct runopts_flag *f, void *dst, const char *a, char *err,
                     size_t errlen)
{
    char *field = (char *)dst + f->off;
    for (size_t i = 0, n = a ? strlen(a) : 0, k; i < n; i += k) {
        k = ll_utf8_len((const unsigned char *)a + i, n - i);
        if (k == 0)
            return runopts_errf(err, errlen,
                                "--%s: expected UTF-8 text, got byte 0x%02x at offset %zu, "
                                "which is not",
                                f->name, (unsigned char)a[i], i);
    }
    switch (f->kind) {
    case RUNOPTS_KIND_VALUE: *(const char **)(void *)field = a; return 0;
    case RUNOPTS_KIND_SET: *(int *)(void *)field = 1; return 0;
    case RUNOPTS_KIND_CALL: return f->take(dst, a, err, errlen);
    case RUNOPTS_KIND_HELP: return RUNOPTS_HELP;
    }
    return 0;
}

int runopts_walk(int argc, char **argv, const char *cmd, const struct runopts_table *t,
                 size_t n_tables, char *err, size_t errlen)
{
    struct walk w; /* on the stack: nothing to free on any way out */
    walk_init(&w, t, n_tables);
    optind = 1;
    opterr = 0;
    int c;
    while ((c = getopt_long(argc, argv, w.shorts, w.opts, NULL)) != -1) {
        int i = c == ':' ? -1 : walk_find(&w, c);
        if (i < 0) {
            badarg_getopt(err, errlen, cmd, argv, optind, c, optopt, w.opts);
            return LL_E_INVAL;
        }
        int rc = flag_take(w.flag[i], w.dst[i], optarg, err, errlen);
        if (rc != 0)
            return rc;
    }
    return 0;
}

int runopts_parse(int argc, char **argv, const char *cmd, const struct runopts_table *own,
                  int max_operands, struct run_opts *o, int *first, char *err, size_t errlen)
{
    struct runopts_table t[3] = {{common_flags, LL_ARRAY_LEN(common_flags), o},
                                 {prom_flags, LL_ARRAY_LEN(prom_flags), o}};
    if (own)
        t[2] = *own;
    int rc = runopts_walk(argc, argv, cmd, t, own ? 3 : 2, err, errlen);
    if (rc != 0)
        return rc;
    /* A URL among the operands was meant for --url (no operand of run,
     * replay or sweep is one): point at it before counting them. */
    for (int i = optind; i < argc; i++) {
        if (badarg_is_url(argv[i])) {
            badarg_operand(err, errlen, cmd, argv[i], 1);
            return LL_E_INVAL;
        }
    }
    if (argc - optind > max_operands) {
        badarg_operand(err, errlen, cmd, argv[optind + max_operands], 1);
        return LL_E_INVAL;
    }
    *first = optind;
    return promopts_check(&o->prom, err, errlen);
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
    /* The range in the message: runopts_count's example ("10k") would be
     * out of it for --threads (at most 256). */
    double x;
    if (ll_parse_count(v, &x) != 0 || x != floor(x) || x < 1)
        return runopts_errf(err, errlen, "%s: expected a whole number from 1 to %u%s, got \"%s\"",
                            name, max, max >= 10000 ? " (e.g. 100 or 10k)" : "", v);
    if (x > max)
        return runopts_errf(err, errlen, "%s: at most %u, got \"%s\"", name, max, v);
    *out = (uint32_t)x;
    return 0;
}

int runopts_rate(const char *name, const char *v, double *out_per_s, char *err, size_t errlen)
{
    double x = 0;
    if (runopts_positive(name, v, &x, err, errlen) != 0)
        return LL_E_INVAL;
    if (x > ARRIVAL_RATE_MAX_PER_S)
        return runopts_errf(err, errlen, "%s: expected a rate up to 1e9 per second, got \"%s\"",
                            name, v);
    *out_per_s = x;
    return 0;
}

int runopts_percent(const char *name, const char *v, double lo, double hi, double *out, char *err,
                    size_t errlen)
{
    char num[64];
    size_t n = strlen(v);
    double x;
    int sign = n > 0 && v[n - 1] == '%';
    n -= (size_t)sign;
    if (n >= sizeof num || (memcpy(num, v, n), num[n] = '\0', ll_parse_double(num, &x)) != 0 ||
        !(x > lo) || x > hi)
        return runopts_errf(err, errlen,
                            "%s: expected a percentage %s %g and at most %g (e.g. 2%%), "
                            "got \"%s\"",
                            name, lo < 0 ? "from" : "above", lo < 0 ? 0.0 : lo, hi, v);
    /* A bare 0.99 was meant as 99% far more often than as 0.99%: the
     * flags once took it silently as the latter (an --attainment of
     * 0.0099). A bare number up to 1 (not 0) must say which. */
    if (!sign && x > 0 && x <= 1)
        return runopts_errf(err, errlen, "%s: %s: a percentage; did you mean %g%%?%s", name, v,
                            x * 100, x == 1 ? " (one percent is 1%)" : "");
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

int runopts_spend_check(const struct run_config *cfg, char *err, size_t errlen)
{
    uint64_t first, bound = driver_spend_bound(cfg);
    if (!cfg->max_tokens_total || !driver_first_cost(cfg, &first) || first <= bound)
        return 0;
    if (bound != cfg->max_tokens_total)
        return runopts_errf(err, errlen,
                            "--max-tokens-total: %llu gives shard %u/%u its share, %llu, less "
                            "than its first request alone (%llu prompt and max tokens): its "
                            "spend guard would stop before sending anything",
                            (unsigned long long)cfg->max_tokens_total, cfg->shard, cfg->shards,
                            (unsigned long long)bound, (unsigned long long)first);
    return runopts_errf(err, errlen,
                        "--max-tokens-total: %llu is less than the first request alone (%llu "
                        "prompt and max tokens): the spend guard would stop before sending "
                        "anything",
                        (unsigned long long)cfg->max_tokens_total, (unsigned long long)first);
}

int runopts_metrics_flags(const char *interval, int off, const char *url, const char *prom_url,
                          size_t gpu_urls, uint64_t *interval_ns, char *err, size_t errlen)
{
    if (off && interval && !prom_url && !gpu_urls)
        return runopts_errf(err, errlen,
                            "--metrics-interval: has no effect with --no-metrics (it paces the "
                            "scrapes, and --gpu-metrics' and --prometheus')");
    *interval_ns = SCRAPE_DEFAULT_INTERVAL_NS;
    if (interval && runopts_duration("--metrics-interval", interval, interval_ns, err,
                                     errlen) != 0)
        return LL_E_INVAL;
    if (*interval_ns < SCRAPE_MIN_INTERVAL_NS)
        return runopts_errf(err, errlen, "--metrics-interval: at least 100ms, got \"%s\"",
                            interval);
    if (off && url)
        return runopts_errf(err, errlen, "--no-metrics and --metrics-url: pick one");
    /* Checked here, not at the first scrape: a URL the scraper cannot use
     * would otherwise run the whole load with every scrape failed. */
    if (url && strncmp(url, "http://", 7) != 0 && strncmp(url, "https://", 8) != 0)
        return runopts_errf(err, errlen,
                            "--metrics-url: expected an http:// or https:// URL, got \"%s\"", url);
    if (prom_url && url)
        return runopts_errf(err, errlen,
                            "--metrics-url and --prometheus: pick one (the server's figures come "
                            "from one place: its /metrics, or a Prometheus that scrapes it)");
    return 0;
}

void runopts_config_init(struct run_config *cfg)
{
    memset(cfg, 0, sizeof *cfg);
    cfg->records_fd = -1;
    cfg->hist_fd = -1;
    cfg->step = -1;
}

int runopts_expect(const char *spec, const struct run_config *cfg, struct expect_set *ex, char *err,
                   size_t errlen)
{
    if (expect_parse(spec, ex, err, errlen) != 0 ||
        runopts_expect_stream_check(ex, cfg, err, errlen) != 0)
        return LL_E_INVAL;
    const struct expect_item *it = expect_needs_slo(ex);
    const struct wl_file *wf = cfg->trace ? NULL : cfg->workload.classes;
    int have_slo = slo_is_set(&cfg->slo);
    for (size_t k = 0; wf && k < wf->n; k++)
        have_slo |= slo_is_set(&wf->classes[k].slo);
    if (it && !have_slo)
        return runopts_errf(err, errlen, "--expect: \"%s\": %s needs --slo%s", it->text, it->metric,
                            cfg->trace ? "" : ", or --workload classes with their own slo");
    /* A shard offers its share of the rate: a per-second bound on one
     * shard would judge the whole run's figure against a part. */
    for (size_t i = 0; i < ex->n && cfg->shards > 1; i++)
        if (ex->item[i].unit == EXPECT_RATE)
            return runopts_errf(err, errlen,
                                "--expect: \"%s\": a rate judges the whole run, not one "
                                "of --shard's %u parts",
                                ex->item[i].text, cfg->shards);
    return 0;
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
        if (a->burstiness > ARRIVAL_BURSTINESS_MAX)
            return runopts_errf(err, errlen,
                                "--burstiness: expected a gamma shape k in (0, 1e6] "
                                "(1 = Poisson), got \"%s\"",
                                o->burstiness);
        if (!o->arrival)
            a->kind = ARRIVAL_GAMMA;
        else if (a->kind != ARRIVAL_GAMMA)
            return runopts_errf(err, errlen, "--burstiness: applies to --arrival gamma, not %s",
                                o->arrival);
    }
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
    /* A flag an embedding cannot use is named as such before its value is
     * read: --output-tokens 0 is "not with --api openai-embeddings", not
     * "a length of 0 tokens (it would be sent as 1)". */
    if (o->api && oai_api_from_name(o->api) == OAI_API_EMBEDDINGS &&
        runopts_embeddings_refused(o, cfg, err, errlen) != 0)
        return LL_E_INVAL;
    if (runopts_workload(o, seed, cfg, err, errlen) != 0 ||
        runopts_threads(o, cfg, err, errlen) != 0 ||
        runopts_transport(o, seed, cfg, err, errlen) != 0)
        return LL_E_INVAL;
    return 0;
}
