/* runopts.h: the flags `llmload run`, `replay` and `sweep` share (target,
 * workload, timeouts, output), the checks that turn them into a run_config,
 * the "config" object of run.json and the summary's facts. The probe of
 * the target and the rest of the sequence are in runsetup.h.
 *
 * Each command declares its flags as data, a table of struct runopts_flag
 * (a name, and the field of the command's struct its value goes to), and
 * runopts_parse walks the shared table and the command's own with one
 * getopt_long loop (runopts_walk).
 *
 * Nothing here exits or prints a usage error: a function that checks a flag
 * returns 0, or LL_E_INVAL with a one-line reason naming the flag in the
 * caller's err buffer (errlen bytes; RUNOPTS_ERR_MAX is enough for every
 * message). The command's main function prints it ("llmload: <reason>")
 * and returns LL_EXIT_USAGE. */
#ifndef LL_RUNOPTS_H
#define LL_RUNOPTS_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include <jansson.h>

#include "cli/promopts.h"
#include "driver/driver.h"
#include "measure/expect.h"
#include "measure/summary.h"
#include "workload/dist.h"
#include "workload/endpoints.h"

#define RUNOPTS_DEFAULT_URL "http://127.0.0.1:8000/v1"
#define RUNOPTS_DEFAULT_PROMPT "256"
#define RUNOPTS_DEFAULT_OUTPUT "128"
#define RUNOPTS_MAX_HEADERS 64
/* --tag KEY=VALUE, repeatable up to this many. */
#define RUNOPTS_MAX_TAGS 32

/* Room for any one-line reason a function here writes into err. */
#define RUNOPTS_ERR_MAX 1024

/* runopts_parse's and runopts_walk's answer when --help or -h was given. */
#define RUNOPTS_HELP 1

/* Everything the flags say, before it becomes a run_config. Strings are
 * borrowed from argv. Zero-initialise before parsing. */
struct run_opts {
    const char *url, *api, *model, *api_key_env, *cacert, *http_client;
    const char *urls[ENDPOINTS_MAX]; /* every --url, in order (url is the first) */
    size_t n_urls;
    const char *url_weights; /* --url-weights W,W,...: one per --url */
    int no_stream, ignore_eos, http2, insecure;
    const char *headers[RUNOPTS_MAX_HEADERS];
    size_t n_headers;
    const char *tags[RUNOPTS_MAX_TAGS]; /* "KEY=VALUE", checked: keys distinct */
    size_t n_tags;
    const char *rate, *arrival, *burstiness, *ramp_to, *max_conc, *on_cap;
    const char *users, *think, *pace;
    const char *duration, *requests, *warmup, *cold_start, *max_tokens_total, *seed;
    const char *prompt_tokens, *output_tokens;
    const char *batch; /* --batch DIST: inputs per openai-embeddings request */
    const char *t_connect, *t_first, *t_idle, *t_total;
    const char *threads, *out, *grace, *dump, *max_line;
    const char *slo, *lateness_tolerance;
    const char *workload, *prefix_fraction, *prefix_groups, *prefix_tokens;
    const char *cancel_fraction, *cancel_after, *cancel_after_tokens;
    int all_unique;
    const char *max_inflight;
    const char *lengths, *dataset, *calibration;
    const char *calibrate;       /* --calibrate auto: calibrate before the load */
    int prompt_ids;              /* --prompt-ids: prompts as token IDs (completions) */
    const char *prompt_id_range; /* --prompt-id-range A,B: the IDs they are drawn from */
    const char *prompt_salt;     /* --prompt-salt auto|N: the prompt content's salt */
    const char *extra_body;      /* --extra-body JSON|@FILE: fields added to every body */
    int extra_body_override;     /* --extra-body-override: they may replace llmload's own */
    const char *shard, *shards;  /* --shard K/N|auto, --shards N (docs/distributed.md) */
    const char *start_at;        /* --start-at TIME */
    const char *images;          /* --images DIST: images per request (docs/workload.md) */
    const char *image_size;      /* --image-size WxH */
    const char *image_sizes;     /* --image-sizes WxH:W,...: a weighted list */
    const char *image_format;    /* --image-format png|jpeg */
    const char *prefix_images;   /* --prefix-images N: a prefix group's shared images */
    int force, dry_run, quiet;
    struct prom_opts prom; /* --prometheus and its flags (promopts.h) */
};

/* Write a printf-style reason into err (errlen bytes) and return
 * LL_E_INVAL: how every check here, and the commands' own, fails. The
 * one ll_errf (util.h), under the name its callers here know. */
#define runopts_errf ll_errf

/* ---- flag tables ---------------------------------------------------------
 * A command says what each of its flags stores, and where, instead of a
 * switch: one struct runopts_flag per long flag. What a value means is
 * checked after the walk, by the functions further down. */

/* How a flag stores what it is given. */
enum runopts_kind {
    RUNOPTS_KIND_VALUE, /* takes a value: a const char * field points at it (the last wins) */
    RUNOPTS_KIND_SET,   /* takes none: an int field is set to 1 */
    RUNOPTS_KIND_CALL,  /* takes a value and hands it to the flag's take function */
    RUNOPTS_KIND_HELP,  /* takes none: the walk ends with RUNOPTS_HELP */
};

/* A CALL flag's own code, for what a field cannot say (a repeatable flag
 * with a bound, a check as the value is given): consume a into dst, the
 * struct the flag's table fills. 0, or LL_E_INVAL with a reason in err. */
typedef int runopts_take_fn(void *dst, const char *a, char *err, size_t errlen);

/* One flag of a table. */
struct runopts_flag {
    const char *name;      /* long name, without "--" */
    char short_name;       /* one-letter alias (-H), or 0 */
    enum runopts_kind kind;
    size_t off;            /* VALUE, SET: offsetof its field in the struct the table fills */
    runopts_take_fn *take; /* CALL: what consumes the value */
};

/* The usual entries; the field's type is checked when compiling (a
 * const char * for a VALUE, an int for a SET). A CALL or a HELP entry is
 * written out in full. */
#define RUNOPTS_VALUE(name, type, field)                                                      \
    {(name), 0, RUNOPTS_KIND_VALUE,                                                          \
     _Generic(((type *)0)->field, const char *: offsetof(type, field)), NULL}
#define RUNOPTS_SET(name, type, field)                                                        \
    {(name), 0, RUNOPTS_KIND_SET, _Generic(((type *)0)->field, int: offsetof(type, field)), NULL}

/* A table and the struct it fills. */
struct runopts_table {
    const struct runopts_flag *flags;
    size_t n;
    void *dst;
};

/* Most flags runopts_walk takes, all its tables together. */
#define RUNOPTS_MAX_FLAGS 128

/* Walk argv[1..] with getopt_long over the flags of t[0, n_tables)
 * (abbreviated as getopt_long allows; operands may come anywhere), each
 * flag into its table's dst. Resets optind and opterr. Returns 0 at the
 * end, optind then at the first operand (argc when there is none);
 * RUNOPTS_HELP at a HELP flag; LL_E_INVAL with a CALL flag's reason in
 * err; or LL_E_INVAL with badarg.h's words for an argument getopt_long
 * refused (unknown, ambiguous, a value missing or not taken), which point
 * at `llmload cmd --help`. More than RUNOPTS_MAX_FLAGS flags is a
 * programming error: it aborts. */
int runopts_walk(int argc, char **argv, const char *cmd, const struct runopts_table *t,
                 size_t n_tables, char *err, size_t errlen);

/* Parse argv[1..] over the shared flags (into o) and the command's own
 * (own, or NULL): returns 0 with *first set to the index in argv of the
 * first operand (argc when there is none), at most max_operands of them;
 * RUNOPTS_HELP when --help or -h was given (the caller prints its usage
 * and ends with LL_EXIT_OK); or LL_E_INVAL with a one-line reason in err:
 * a missing value, an unknown or ambiguous option, an operand too many or
 * one that is a URL ("did you mean --url"; each points at `llmload <cmd>
 * --help`), or what a flag's take refused. */
int runopts_parse(int argc, char **argv, const char *cmd, const struct runopts_table *own,
                  int max_operands, struct run_opts *o, int *first, char *err, size_t errlen);

/* The exit status of a command whose flags did not parse, given rc from
 * its parse (RUNOPTS_HELP or LL_E_INVAL with the reason in err): prints
 * usage on stdout and returns LL_EXIT_OK for --help, else prints
 * "llmload: <err>" on stderr and returns LL_EXIT_USAGE. */
int runopts_usage_exit(int rc, const char *err, void (*usage)(FILE *f));

/* Strict option values: each stores the value of flag name (its text v)
 * and returns 0, or returns LL_E_INVAL with a one-line reason naming the
 * flag in err: a positive number (1.5k), a whole number >= min, a whole
 * number from 1 to max ("at most" past it), a duration (500ms, 2m), a
 * DIST (nonneg: no negative values). */
int runopts_positive(const char *name, const char *v, double *out, char *err, size_t errlen);
/* runopts_positive of an arrival rate per second, at most
 * ARRIVAL_RATE_MAX_PER_S (1e9): "expected a rate up to 1e9 per second"
 * past it, where arrival_config_check would say it in its own words after
 * the flag's name ("--rate: arrivals: rate: ..."). */
int runopts_rate(const char *name, const char *v, double *out_per_s, char *err, size_t errlen);
int runopts_count(const char *name, const char *v, uint64_t min, uint64_t *out, char *err,
                  size_t errlen);
int runopts_count_upto(const char *name, const char *v, uint32_t max, uint32_t *out, char *err,
                       size_t errlen);
int runopts_duration(const char *name, const char *v, uint64_t *out_ns, char *err,
                     size_t errlen);
/* runopts_duration, refusing 0 ("must be more than 0"). */
int runopts_duration_pos(const char *name, const char *v, uint64_t *out_ns, char *err,
                         size_t errlen);
int runopts_dist(const char *name, const char *v, enum dist_unit unit, int nonneg,
                 struct dist *out, char *err, size_t errlen);
/* A percentage, "2" or "2%", in (lo, hi] (a negative lo: from 0), into
 * *out as a fraction (0.02). A bare number above 0 and at most 1 ("0.99")
 * is refused ("did you mean 99%?"): it needs its % ("0.99%"). */
int runopts_percent(const char *name, const char *v, double lo, double hi, double *out, char *err,
                    size_t errlen);

/* The most --gpu-metrics URLs a run or sweep scrapes (one exporter per
 * machine). */
#define RUNOPTS_MAX_GPU_URLS 16

/* One --gpu-metrics URL a: an http:// or https:// URL, appended to
 * urls[*n] when fewer than RUNOPTS_MAX_GPU_URLS are there. 0 or
 * LL_E_INVAL with the reason in err. run and sweep take the flag. */
int runopts_gpu_url(const char *a, const char **urls, size_t *n, char *err, size_t errlen);

/* --gpu-sampler a: "nvidia-smi" (the only sampler) sets *smi to 1; 0 or
 * LL_E_INVAL with the reason in err. run, replay and sweep take it. */
int runopts_gpu_sampler(const char *a, int *smi, char *err, size_t errlen);

/* --max-tokens-total refused when the first request alone asks for more
 * (driver_first_cost) than the guard's bound (driver_spend_bound: a
 * closed-loop or session shard's share of it): the spend guard would stop
 * before anything is sent, and the run would measure nothing. run and
 * replay call it once cfg is whole. 0 or LL_E_INVAL. */
int runopts_spend_check(const struct run_config *cfg, char *err, size_t errlen);

/* --metrics-interval (default SCRAPE_DEFAULT_INTERVAL_NS, at least
 * SCRAPE_MIN_INTERVAL_NS) into *interval_ns, and --metrics-url refused
 * when it is not http:// or https://, or beside --no-metrics or
 * --prometheus (prom_url: its URL, NULL when not given); an interval
 * refused beside --no-metrics when nothing else takes it (--prometheus,
 * gpu_urls > 0 --gpu-metrics URLs); run and sweep take these flags. 0 or
 * LL_E_INVAL. */
int runopts_metrics_flags(const char *interval, int off, const char *url, const char *prom_url,
                          size_t gpu_urls, uint64_t *interval_ns, char *err, size_t errlen);

/* Zero cfg, with no records file and no sweep step yet (records_fd and
 * step -1): where every command's run_config starts. */
void runopts_config_init(struct run_config *cfg);

/* --slo into cfg->slo (nothing when the flag is absent). 0 or LL_E_INVAL. */
int runopts_slo(const struct run_opts *o, struct run_config *cfg, char *err, size_t errlen);

/* --seed into *seed, default 1. 0 or LL_E_INVAL. */
int runopts_seed(const struct run_opts *o, uint64_t *seed, char *err, size_t errlen);

/* --prompt-salt into cfg->prompt_salt and cfg->prompt_salt_auto: a whole
 * number from 0 to 2^63-1 fixes it; "auto" (or no flag) draws one from
 * getrandom (the clock and pid if that fails), except in a sharded run
 * (cfg->shards > 1, runopts_shard first), whose shards must send the same
 * text: there auto is derived from the seed and --start-at, which every
 * shard shares (each launch a fresh salt), and without --start-at it is an
 * error unless dry_run (nothing is sent). 0 or LL_E_INVAL. */
int runopts_prompt_salt(const struct run_opts *o, struct run_config *cfg, char *err, size_t errlen);

/* --shard K/N or auto (the launcher's environment, shard.h; --shards N
 * with a Kubernetes Indexed Job) into cfg->shard, cfg->shards and
 * cfg->shard_launcher; --start-at into cfg->start_at_unix_ns, refused when
 * it is more than RUNOPTS_START_PAST_NS past. Without --shard, cfg is not
 * sharded (--shards alone is refused). 0 or LL_E_INVAL. */
#define RUNOPTS_START_PAST_NS (1 * LL_NS_PER_SEC)
int runopts_shard(const struct run_opts *o, struct run_config *cfg, char *err, size_t errlen);

/* --arrival and --burstiness into a (kind, burstiness, seed); the rate is
 * the caller's. 0 or LL_E_INVAL. */
int runopts_arrival(const struct run_opts *o, uint64_t seed, struct arrival_config *a,
                    char *err, size_t errlen);

/* Workload (prompt/output lengths, ignore_eos, seed), --threads, the
 * prompt salt (runopts_prompt_salt) and the transport (URL, API, stream,
 * TLS, timeouts, SSE line bound, --prompt-ids, the content's seed).
 * Returns 0, or LL_E_INVAL with the reason in err; what it loaded into
 * cfg is the caller's to free (runopts_workload_free) in either case.
 * --prompt-ids is refused beside what cannot send
 * token IDs: an API other than openai-completions (--api, or a --workload
 * class's "api"), --dataset, --calibration, --calibrate, and cfg->mode LOAD_SESSIONS
 * (set it before calling). A replay's trace is checked once loaded:
 * runopts_prompt_ids_check_trace. --prompt-id-range (only with
 * --prompt-ids) sets cfg->transport.prompt_id_range (default
 * [CHATBODY_ID_MIN, CHATBODY_ID_MAX]). */
int runopts_workload_transport(const struct run_opts *o, uint64_t seed,
                               struct run_config *cfg, char *err, size_t errlen);

/* The most inputs one openai-embeddings request may carry (--batch):
 * OpenAI's own limit (vLLM and TEI take fewer by default, and say so with
 * a 4xx). */
#define RUNOPTS_MAX_INPUTS 2048

/* The flags against the API (embopts.c), called by
 * runopts_workload_transport once cfg->transport.api is parsed (and the
 * workload, the load model and --slo are in cfg): for openai-embeddings,
 * set what it implies (--batch into cfg->workload, no stream) and refuse
 * what it cannot do: an embedding has no output, no stream and one
 * prompt per input, so the flags about output, cancellations,
 * conversations, prefix caches, datasets, token IDs and calibration
 * probes and a TTFT or TPOT SLO (the run's or a class's) are refused
 * with the reason (llmload replay refuses the API itself, cmd_replay.c); a --workload file may not mix it with a
 * streamed API; --batch needs it. Returns 0, or LL_E_INVAL with the
 * reason in err. */
int runopts_embeddings_check(const struct run_opts *o, struct run_config *cfg, char *err,
                             size_t errlen);

/* --expect's latency items a run without a stream (--no-stream, or
 * --api openai-embeddings, cfg as built) cannot judge: E2E alone has a
 * meaning there, as for --slo (embopts.c keeps the one rule). Refused up
 * front, not after the whole run as "has no value". 0, or LL_E_INVAL with
 * the reason in err. */
int runopts_expect_stream_check(const struct expect_set *ex, const struct run_config *cfg,
                                char *err, size_t errlen);

/* --expect SPEC of run and replay, parsed into ex and checked against
 * cfg as built: its latencies against the stream (runopts_expect_stream_
 * check), goodput and attainment need an SLO (--slo, or a --workload
 * class's own; a trace has none), and no per-second bound on one of
 * --shard's parts (it would judge the whole run's figure against a part).
 * 0, or LL_E_INVAL with a one-line reason naming --expect in err. */
int runopts_expect(const char *spec, const struct run_config *cfg, struct expect_set *ex, char *err,
                   size_t errlen);

/* The first flag given that --api openai-embeddings cannot use, named with
 * the reason (part of runopts_embeddings_check, which needs the workload;
 * this one needs only cfg->mode, so an embeddings run refuses such a flag
 * before its value is read). 0, or LL_E_INVAL with the reason in err. */
int runopts_embeddings_refused(const struct run_opts *o, const struct run_config *cfg, char *err,
                               size_t errlen);

/* --prompt-ids (o->prompt_ids set): refused beside what cannot send token
 * IDs, as runopts_workload_transport says (cfg->transport.api parsed).
 * Returns 0, or LL_E_INVAL with the reason in err. */
int runopts_prompt_ids_check(const struct run_opts *o, struct run_config *cfg, char *err,
                             size_t errlen);

/* With a calibration (cfg->workload.calib), whether the prompts ask for
 * lengths at or near its intercept (the template the server adds to
 * every prompt): the first 1000 of the schedule (fewer with --requests;
 * a replay's first 1000 lines without prompt text) and the bursts'
 * lengths, against twice the intercept. 1 with the
 * warning in msg (len bytes) when some do, else 0; the warning says
 * whether it counted the whole run or the schedule's first lengths. */
int runopts_calib_short(const struct run_config *cfg, char *msg, size_t len);

struct trace;

/* --prompt-id-range's value v, "A,B": two whole numbers from 0 to
 * 4294967295, A below B, into *out. Returns 0, or LL_E_INVAL with one line
 * in err (a negative ID, not two numbers, A not below B). */
int runopts_prompt_id_range(const char *v, struct chatbody_id_range *out, char *err, size_t errlen);

/* The /models entry (models, as probed) of model: the one whose id it is,
 * else the only one; NULL when neither. */
const json_t *runopts_models_entry(const json_t *models, const char *model);

/* The vocabulary size a server's GET BASE/models answer (models, may be
 * NULL) reports for model (may be NULL): llama.cpp's data[].meta.n_vocab,
 * of the entry whose id is model, else of the only entry. -1 when it
 * reports none (vLLM, OpenAI and most others do not). */
int64_t runopts_models_vocab(const json_t *models, const char *model);

/* With --prompt-ids, whether the ID range fits the vocabulary models
 * reports for model (runopts_models_vocab): 0 when it does or nothing is
 * reported, else -1 with one line in err naming the vocabulary's size and
 * the fix (--prompt-id-range, with a range that fits). range_given: the
 * range came from --prompt-id-range (the line names that flag). */
int runopts_vocab_check(const json_t *models, const char *model,
                        const struct chatbody_id_range *range, int range_given, char *err,
                        size_t errlen);

/* With --prompt-ids (cfg->transport.prompt_ids), whether trace (loaded
 * from path) can be sent as token IDs: returns 0 when it can (or without
 * the flag), or -1 with one line in err (errlen bytes) naming path and the
 * first line that carries prompt text, which is sent verbatim and has no
 * IDs. The caller frees what it holds and ends with LL_EXIT_USAGE. */
int runopts_prompt_ids_check_trace(const struct run_config *cfg, const struct trace *trace,
                                   const char *path, char *err, size_t errlen);

/* The usage lines of the workload-realism flags, for each command's --help. */
extern const char runopts_workload_help[];

/* Free what runopts_workload_transport loaded into cfg (the --workload
 * file, empirical length files, the --dataset). Safe when nothing was
 * loaded, and twice. */
void runopts_workload_free(struct run_config *cfg);

/* run.json's "tags": {KEY: VALUE} of every --tag, in the order given
 * (empty without any). Caller owns the reference. */
json_t *runopts_tags_json(const struct run_opts *o);

/* The environment variable the API key comes from: --api-key-env, or
 * ANTHROPIC_API_KEY for anthropic-messages and OPENAI_API_KEY otherwise. */
const char *runopts_api_key_env(const struct run_opts *o, enum oai_api api);

/* The "config" object of run.json for cfg. Caller owns the reference. */
json_t *runopts_config_json(const struct run_opts *o, const struct run_config *cfg,
                            const char *model);

/* unix_ns (ns since the epoch) as RFC 3339 UTC with nanoseconds
 * ("2026-12-02T11:00:00.500000000Z") into buf (len bytes; 40 is enough). */
void runopts_fmt_utc(int64_t unix_ns, char *buf, size_t len);

/* A sharded run's part of the global schedule: 1 / shards (1 unsharded),
 * what its offered rates are multiplied by in its summary. */
double runopts_shard_share(const struct run_config *cfg);

/* Append " (shard K of N)" to the label in buf (len bytes) when cfg is
 * sharded. */
void runopts_shard_label(const struct run_config *cfg, char *buf, size_t len);

/* "open-loop poisson 20/s" and the like, for summaries. */
void runopts_mode_label(const struct run_config *cfg, char *buf, size_t len);

/* Raise RLIMIT_NOFILE to its hard limit (many connections at high rates)
 * and size the descriptor table for RUNOPTS_FD_TABLE descriptors (or the
 * limit, if lower) at once. Call before starting any thread. */
#define RUNOPTS_FD_TABLE 65536
void runopts_raise_nofile(void);

/* Fill the summary facts run and replay share from cfg and res: window,
 * warm-up, in-flight, target, model, version, seed, interruption, records,
 * the SLO (its text goes into slo_buf, which must outlive info), and the
 * self-check (verdict_judge, with cfg's --lateness-tolerance): INVALID when
 * the generator's own lateness moved TTFT or E2E past the tolerance, the
 * reason saying whose it was (kept names what could not be kept, e.g. "the
 * schedule"); with check_achieved, so does sending fewer than 99% of the
 * window's scheduled requests; else a lateness warning when its p99 is over
 * 1 ms. The caller sets mode and the offered rate. */
void runopts_summary_info(const struct run_config *cfg, const struct driver_result *res,
                          const char *model, const char *kept, int check_achieved, char *slo_buf,
                          size_t slo_len, struct summary_info *info);

/* Check a --url: http:// or https://, a host (an IPv6 literal in
 * brackets), a port of 1 to 65535 when one is given, and no user info
 * (it would reach run.json and the report). Returns 0, or LL_E_INVAL with
 * a reason naming what is wrong in err. */
int runopts_check_url(const char *url, char *err, size_t errlen);

/* -H, --header "Name: value" (run, replay, sweep and calibrate): a added
 * to headers[0, *n) (RUNOPTS_MAX_HEADERS at most; a is borrowed), or
 * LL_E_INVAL with the reason in err (no colon, a bad name, a line break,
 * too many), which never repeats the value: it may be a secret. */
int runopts_header_add(const char **headers, size_t *n, const char *a, char *err, size_t errlen);

/* 1 when one of the -H lines headers[0, n) names the header name
 * ("Name: value" or "Name:", the name in any case), else 0: a -H naming a
 * header llmload sends replaces it. */
int runopts_header_named(const char *const *headers, size_t n, const char *name);

/* --cacert FILE: 0 when path is a file this process can open for reading,
 * else LL_E_INVAL with "--cacert: PATH: REASON" in err ("No such file or
 * directory", "Permission denied", "Is a directory"), so that run, sweep,
 * replay and calibrate refuse it with the flags (exit 2) rather than send
 * their load with every request failing "error setting certificate
 * file". */
int runopts_check_cacert(const char *path, char *err, size_t errlen);

#endif
