/* runopts.h: the flags `llmload run`, `replay` and `sweep` share (target,
 * workload, timeouts, output), the checks that turn them into a run_config,
 * the "config" object of run.json and the summary's facts. The probe of
 * the target and the rest of the sequence are in runsetup.h.
 *
 * Each command keeps its own getopt_long table: it starts with
 * RUNOPTS_COMMON_OPTIONS entries (runopts_common_options) and adds its own,
 * whose values must be >= RUNOPTS_OPT_FIRST_PRIVATE. runopts_take() consumes
 * the common ones.
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

#include <getopt.h>
#include <jansson.h>

#include "workload/dist.h"
#include "driver/driver.h"
#include "measure/summary.h"

#define RUNOPTS_DEFAULT_URL "http://127.0.0.1:8000/v1"
#define RUNOPTS_DEFAULT_PROMPT "256"
#define RUNOPTS_DEFAULT_OUTPUT "128"
#define RUNOPTS_MAX_HEADERS 64

/* Room for any one-line reason a function here writes into err. */
#define RUNOPTS_ERR_MAX 1024

/* runopts_parse's answer when --help or -h was given. */
#define RUNOPTS_HELP 1

/* getopt values of the shared flags; a command's own flags use values from
 * RUNOPTS_OPT_FIRST_PRIVATE up. */
enum {
    RUNOPTS_OPT_URL = 256, RUNOPTS_OPT_API, RUNOPTS_OPT_MODEL, RUNOPTS_OPT_NO_STREAM,
    RUNOPTS_OPT_IGNORE_EOS, RUNOPTS_OPT_API_KEY_ENV, RUNOPTS_OPT_HTTP2, RUNOPTS_OPT_INSECURE,
    RUNOPTS_OPT_CACERT, RUNOPTS_OPT_ARRIVAL, RUNOPTS_OPT_BURSTINESS, RUNOPTS_OPT_WARMUP,
    RUNOPTS_OPT_SEED, RUNOPTS_OPT_PROMPT_TOKENS, RUNOPTS_OPT_OUTPUT_TOKENS,
    RUNOPTS_OPT_T_CONNECT, RUNOPTS_OPT_T_FIRST, RUNOPTS_OPT_T_IDLE, RUNOPTS_OPT_T_TOTAL,
    RUNOPTS_OPT_THREADS, RUNOPTS_OPT_OUT, RUNOPTS_OPT_FORCE, RUNOPTS_OPT_GRACE,
    RUNOPTS_OPT_MAX_LINE, RUNOPTS_OPT_QUIET, RUNOPTS_OPT_SLO, RUNOPTS_OPT_HELP,
    RUNOPTS_OPT_WORKLOAD, RUNOPTS_OPT_PREFIX_FRACTION, RUNOPTS_OPT_PREFIX_GROUPS,
    RUNOPTS_OPT_PREFIX_TOKENS, RUNOPTS_OPT_ALL_UNIQUE, RUNOPTS_OPT_CANCEL_FRACTION,
    RUNOPTS_OPT_CANCEL_AFTER, RUNOPTS_OPT_CANCEL_AFTER_TOKENS, RUNOPTS_OPT_MAX_INFLIGHT,
    RUNOPTS_OPT_LENGTHS, RUNOPTS_OPT_DATASET, RUNOPTS_OPT_CALIBRATION,
    RUNOPTS_OPT_PROMPT_IDS, RUNOPTS_OPT_HTTP_CLIENT,
    RUNOPTS_OPT_FIRST_PRIVATE = 512,
};

/* Most flags a command may add to the shared ones (runopts_parse). */
#define RUNOPTS_MAX_OWN_OPTIONS 48

/* Number of entries of runopts_common_options (no terminator). */
#define RUNOPTS_COMMON_OPTIONS 42
extern const struct option runopts_common_options[RUNOPTS_COMMON_OPTIONS];

/* Everything the flags say, before it becomes a run_config. Strings are
 * borrowed from argv. Zero-initialise before parsing. */
struct run_opts {
    const char *url, *api, *model, *api_key_env, *cacert, *http_client;
    int no_stream, ignore_eos, http2, insecure;
    const char *headers[RUNOPTS_MAX_HEADERS];
    size_t n_headers;
    const char *rate, *arrival, *burstiness, *ramp_to, *max_conc, *on_cap;
    const char *users, *think, *pace;
    const char *duration, *requests, *warmup, *max_tokens_total, *seed;
    const char *prompt_tokens, *output_tokens;
    const char *t_connect, *t_first, *t_idle, *t_total;
    const char *threads, *out, *grace, *dump, *max_line;
    const char *slo;
    const char *workload, *prefix_fraction, *prefix_groups, *prefix_tokens;
    const char *cancel_fraction, *cancel_after, *cancel_after_tokens;
    int all_unique;
    const char *max_inflight;
    const char *lengths, *dataset, *calibration;
    int prompt_ids;              /* --prompt-ids: prompts as token IDs (completions) */
    int force, dry_run, quiet;
};

/* Write a printf-style reason into err (errlen bytes) and return
 * LL_E_INVAL: how every check here, and the commands' own, fails. */
int runopts_errf(char *err, size_t errlen, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

/* Consume option c (with argument a) when it is a shared flag: returns 1
 * when it was (o updated), 0 when c is not a shared flag, LL_E_INVAL (a
 * bad --header, reason in err). RUNOPTS_OPT_HELP and 'h' are not consumed. */
int runopts_take(struct run_opts *o, int c, const char *a, char *err, size_t errlen);

/* A command's handler of its own flags: consume option c (a value from its
 * own table, with argument a, NULL for a flag without one) into ud and
 * return 1, or return 0 when c is not one of its flags (reported as an
 * unknown option), or LL_E_INVAL with a reason in err on a bad value. */
typedef int runopts_take_cb(void *ud, int c, const char *a, char *err, size_t errlen);

/* Parse argv[1..] with getopt_long over runopts_common_options followed by
 * own[0, n_own) (values >= RUNOPTS_OPT_FIRST_PRIVATE): shared flags go to o
 * (runopts_take), the others to take_own(ud, ...). Returns 0 with *first
 * set to the index in argv of the first operand (argc when there is none);
 * RUNOPTS_HELP when --help or -h was given (the caller prints its usage and
 * ends with LL_EXIT_OK); or LL_E_INVAL with a one-line reason in err (a
 * missing value, an unknown option: it points at `llmload <cmd> --help`,
 * or what take_own refused). Resets optind and opterr. */
int runopts_parse(int argc, char **argv, const char *cmd, const struct option *own, size_t n_own,
                  runopts_take_cb *take_own, void *ud, struct run_opts *o, int *first, char *err,
                  size_t errlen);

/* Strict option values: each stores the value of flag name (its text v)
 * and returns 0, or returns LL_E_INVAL with a one-line reason naming the
 * flag in err: a positive number (1.5k), a whole number >= min, a
 * duration (500ms, 2m), a DIST (nonneg: no negative values). */
int runopts_positive(const char *name, const char *v, double *out, char *err, size_t errlen);
int runopts_count(const char *name, const char *v, uint64_t min, uint64_t *out, char *err,
                  size_t errlen);
int runopts_duration(const char *name, const char *v, uint64_t *out_ns, char *err,
                     size_t errlen);
int runopts_dist(const char *name, const char *v, enum dist_unit unit, int nonneg,
                 struct dist *out, char *err, size_t errlen);

/* --metrics-interval (default SCRAPE_DEFAULT_INTERVAL_NS, at least
 * SCRAPE_MIN_INTERVAL_NS) into *interval_ns, and --no-metrics beside
 * --metrics-url refused; run and sweep take these flags. 0 or LL_E_INVAL. */
int runopts_metrics_flags(const char *interval, int off, const char *url,
                          uint64_t *interval_ns, char *err, size_t errlen);

/* --slo into cfg->slo (nothing when the flag is absent). 0 or LL_E_INVAL. */
int runopts_slo(const struct run_opts *o, struct run_config *cfg, char *err, size_t errlen);

/* --seed into *seed, default 1. 0 or LL_E_INVAL. */
int runopts_seed(const struct run_opts *o, uint64_t *seed, char *err, size_t errlen);

/* --arrival and --burstiness into a (kind, burstiness, seed); the rate is
 * the caller's. 0 or LL_E_INVAL. */
int runopts_arrival(const struct run_opts *o, uint64_t seed, struct arrival_config *a,
                    char *err, size_t errlen);

/* Workload (prompt/output lengths, ignore_eos, seed), --threads and the
 * transport (URL, API, stream, TLS, timeouts, SSE line bound, --prompt-ids).
 * Returns 0, or LL_E_INVAL with the reason in err; what it loaded into
 * cfg is the caller's to free (runopts_workload_free) in either case.
 * --prompt-ids is refused beside what cannot send
 * token IDs: an API other than openai-completions (--api, or a --workload
 * class's "api"), --dataset, --calibration, and cfg->mode LOAD_SESSIONS
 * (set it before calling). A replay's trace is checked once loaded:
 * runopts_prompt_ids_check_trace. */
int runopts_workload_transport(const struct run_opts *o, uint64_t seed,
                               struct run_config *cfg, char *err, size_t errlen);

struct trace;

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

/* The "config" object of run.json for cfg. Caller owns the reference. */
json_t *runopts_config_json(const struct run_opts *o, const struct run_config *cfg,
                            const char *model);

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
 * self-check (verdict_judge): lateness p99 over 1 ms marks the run INVALID,
 * the reason ending with what could not be kept (e.g. "the schedule"); with
 * check_achieved, so does sending fewer than 99% of the window's scheduled
 * requests. The caller sets mode and the offered rate. */
void runopts_summary_info(const struct run_config *cfg, const struct driver_result *res,
                          const char *model, const char *kept, int check_achieved, char *slo_buf,
                          size_t slo_len, struct summary_info *info);

/* Check a --url: http:// or https://, a host (an IPv6 literal in
 * brackets), a port of 1 to 65535 when one is given, and no user info
 * (it would reach run.json and the report). Returns 0, or LL_E_INVAL with
 * a reason naming what is wrong in err. */
int runopts_check_url(const char *url, char *err, size_t errlen);

#endif
