/* runsetup.h: the one sequence `llmload run`, `replay` and `sweep` share,
 * from checked flags to a results directory that says how the run ended:
 *
 *   run_setup_open      descriptor limit, SIGPIPE, the stop signals, the
 *                       target (GET BASE/models, in the background with --model)
 *   run_setup_calibrate with --calibrate auto, the fit of the target's tokens
 *                       per word (llmload calibrate's), before the load
 *   run_setup_results   the results directory, run.json, requests.jsonl
 *   run_setup_scraper   the server-metrics scraper (run and sweep)
 *   run_setup_gpu_*     the GPU telemetry scrapers and the run's energy
 *                       (run and replay; sweep joins them per step)
 *   run_setup_drive     one driver run (run and replay; sweep drives steps)
 *   run_setup_report    the terminal summary and summary.json's object
 *                       (run and replay)
 *   run_setup_finish    summary.json, then run.json with its outcome, then
 *                       report.html
 *   run_setup_end       run.json's outcome without a summary (a run stopped
 *                       before its load, a sweep)
 *   run_setup_close     everything above, whatever step failed
 *
 * Each step prints its own reason when it fails and returns the exit
 * status to end with; the command prints its summary between drive and
 * finish.
 *
 * SIGINT and SIGTERM stay blocked from run_setup_open to run_setup_close,
 * so one that comes at any moment waits, never lost and never fatal: the
 * probes are abandoned the moment one comes (a signalfd wakes them), the
 * commands look for one between the steps (run_setup_stopped), the
 * driver takes it during the load, and rs->stopped_in (run.json's
 * outcome.stopped_in) says where it came: "probe", "calibrate", "scrape_start",
 * "schedule", "load", "drain" or "summary". */
#ifndef LL_RUNSETUP_H
#define LL_RUNSETUP_H

#include <signal.h>
#include <stdint.h>

#include <curl/curl.h>
#include <jansson.h>

#include "cli/runopts.h"
#include "driver/driver.h"
#include "measure/summary.h"
#include "metrics/scrape.h"

/* The target, once asked about itself. */
struct run_target {
    struct curl_slist *headers;     /* request headers, auth included */
    struct curl_slist *own_headers; /* the key's line and the -H lines alone, for the
                                     * target's own /metrics (runscrape.c) */
    json_t *models;                 /* BASE/models, NULL when it failed */
    char server[128];               /* its Server header, "" if none */
    char *first_id;                 /* first model id it listed, or NULL */
    char *auth;                     /* the Authorization line (wiped on close) */
    char *xkey;                     /* the x-api-key line of anthropic-messages (wiped on close) */
    const char *model;              /* the model to ask for (o->model or first_id) */
    int curl_up;                    /* 1 once curl_global_init succeeded */
    struct bg_probe *bg;            /* with --model: GET BASE/models in the background */
    json_t *contract_server;        /* run.json's contract.server (contract.h), or NULL */
    int model_unlisted;             /* 1 once the probe found --model not in /models */
    /* The lengths the run asks for, checked against the context window the
     * target says (ctxcheck.h) once it has answered; NULL for a replay. */
    const struct workload *workload;
    uint64_t max_requests; /* --requests, 0 = none: the requests to check */
    int no_output;         /* openai-embeddings: the prompt alone counts */
};

/* The most GPU scrapers a run has: its --gpu-metrics URLs and
 * --gpu-sampler's. */
#define RUN_SETUP_MAX_GPU (RUNOPTS_MAX_GPU_URLS + 2)

/* What the sequence holds. Zero-initialise, then run_setup_open. */
struct run_setup {
    struct run_target target;
    char dir[1024];                 /* the results directory, once prepared */
    json_t *run;                    /* run.json's root, owned */
    char records_path[1100];        /* DIR/requests.jsonl */
    int records_fd;                 /* open O_RDWR | O_APPEND (sweep reads it back); -1 */
    int hist_fd;                    /* DIR/hist.jsonl, open O_WRONLY | O_APPEND; -1 */
    struct scraper *scraper;        /* NULL: no server metrics */
    struct scraper *gpu_scrapers[RUN_SETUP_MAX_GPU]; /* --gpu-metrics, n_gpu of them */
    size_t n_gpu;
    struct driver_result res;       /* run_setup_drive's, valid when have_res */
    int have_res;
    int sig_fd;                   /* a signalfd of SIGINT and SIGTERM, or -1 */
    sigset_t old_mask;            /* the signal mask before run_setup_open */
    int masked;                   /* old_mask is to be restored */
    const char *stopped_in;       /* where a stop signal came, NULL: none came */
    const struct prom_opts *prom; /* run_setup_open's o->prom (--prometheus), borrowed */
    const char *base_url;         /* the (first) --url, borrowed from the options */
    const char *cacert;           /* --cacert, NULL: none; borrowed, for the scrapers */
    int insecure;                 /* --insecure, for the scrapers */
    int prom_gpu;                 /* 1: its DCGM series too (not on a shard) */
};

/* The exit status when two apply: 130 (interrupted) wins, else the lowest
 * non-zero (../shared/DESIGN.md, "Exit statuses"). */
int run_exit_combine(int a, int b);

/* The exit status of a run or replay that ended (runexit.c), each reason
 * said on stderr in one line: INVALID (1), records lost or a summary.json
 * not written (summary_failed 1) (3), no request of the window ok, or
 * none in the window at all (6, with summary_empty_why's cause), a failed
 * --expect (7), combined by run_exit_combine; 130 when a stop signal came. */
int run_exit_status(const struct run_setup *rs, const struct summary_info *info,
                    int summary_failed);

/* Raise the descriptor limit (runopts_raise_nofile), ignore SIGPIPE,
 * block SIGINT and SIGTERM, initialise libcurl, build the request headers
 * (the API key from the environment, -H lines), ask BASE/models and pick
 * the model: sets cfg->transport.headers and .model (valid until
 * run_setup_close). With --model the question goes on in the background
 * (2 s at most, for run.json's target) and the run does not wait for it.
 * A stop signal during the question ends it at once: LL_EXIT_OK with
 * rs->stopped_in "probe" (the model may be unknown). Returns LL_EXIT_OK,
 * or the status to end with, reason printed (LL_EXIT_USAGE: --api-key-env
 * names an unset variable; LL_EXIT_RUNTIME: no model). Call
 * run_setup_close in every case. */
int run_setup_open(struct run_setup *rs, const struct run_opts *o, struct run_config *cfg);

/* The calibration before the load. With --calibrate auto: llmload
 * calibrate's probes (cli/calibprobe.h) against the target, with cfg's
 * API, model, headers and TLS options, and the fit into
 * cfg->workload.calib and cfg->calib_fit, said on stderr; a stop signal
 * abandons them (LL_EXIT_OK, rs->stopped_in "calibrate"). Nothing when a
 * stop signal came before. Then a warning when --calibration's fit was
 * made with an API that counts prompts otherwise than the run's (a chat
 * template, or none), and, with any calibration, a warning when
 * prompts ask for lengths near its intercept (runopts_calib_short). Call
 * it between run_setup_open and run_setup_results (run.json records the
 * fit). Returns LL_EXIT_OK, or LL_EXIT_RUNTIME when the probes failed
 * (reason printed). */
int run_setup_calibrate(struct run_setup *rs, const struct run_opts *o, struct run_config *cfg);

/* Prepare the results directory (--out, --force), write run.json for
 * command with config (a new reference, taken over in every case; see
 * runopts_config_json) and, when ex has items (run's and replay's
 * --expect; NULL for none), its "expect": the thresholds that `llmload
 * report DIR` judges again; open requests.jsonl into cfg->records_fd and
 * hist.jsonl into cfg->hist_fd, and set
 * cfg's progress line (--quiet; every second on a terminal, else every
 * 5 s). Returns LL_EXIT_OK, LL_EXIT_USAGE (the directory) or
 * LL_EXIT_RUNTIME, reason printed. */
int run_setup_results(struct run_setup *rs, const struct run_opts *o, const char *command,
                      json_t *config, struct run_config *cfg, const struct expect_set *ex);

/* The server-metrics scraper, unless off: url, or (one --url only)
 * BASE's /metrics when it answers now (scraper_for_run: 2 s at most, abandoned for a stop signal,
 * which then sets rs->stopped_in "probe"), writing
 * DIR/server_metrics.jsonl. Not started: a run starts it with the
 * driver's clock, a sweep at once. rs->scraper stays NULL when there is
 * none (a note or warning printed). */
void run_setup_scraper(struct run_setup *rs, const char *url, int off, uint64_t interval_ns,
                       const struct run_config *cfg, int quiet);

/* The GPU telemetry scrapers (--gpu-metrics and --gpu-sampler; run,
 * replay and sweep): first, when smi is 1, the nvidia-smi sampler
 * (scraper_for_smi: a warning and no figure when nvidia-smi is missing
 * or fails), then one per URL of urls[0, n) (n <= RUNOPTS_MAX_GPU_URLS)
 * into rs->gpu_scrapers,
 * every interval_ns, their lines appended to DIR/server_metrics.jsonl
 * with "source": "gpu" (the file truncated by the first when there is no
 * server scraper). A URL that fails its probe is kept: a warning, then
 * counted gaps. Not started: run_setup_gpu_start does that with the
 * driver's clock. Stops early for a stop signal (rs->stopped_in "probe"). */
void run_setup_gpu_scrapers(struct run_setup *rs, const char *const *urls, size_t n, int smi,
                            uint64_t interval_ns, int quiet);

/* Start the GPU scrapers gs[0, n) with the run's t = 0 (the live
 * callback's first view); a scraper that cannot start is a warning. */
void run_setup_gpu_start(struct scraper *const *gs, size_t n, uint64_t run_start_abs_ns);

struct energy_figures;

/* The energy over the run from the GPU scrapers gs[0, n) (n may be 0):
 * stop each, join its series to the run's span (SCRAPE_SPAN_OUTER), divide
 * by the client's output tokens (every record's, as the server join counts
 * them) and ok requests, and sum the exporters (energy_figures_combine).
 * cost_per_hour: the GPUs' price per hour, NAN for none. sharded 1 (a
 * --shard run's scraping shard): the shard's tokens and requests are a
 * share of the run's, the GPUs' energy all of it, so the per-token,
 * per-request and cost figures are left NAN (N times too much); the
 * shard keeps the energy and power, and `llmload merge` divides. */
void run_setup_energy(struct scraper *const *gs, size_t n, const struct driver_result *res,
                      double cost_per_hour, int sharded, struct energy_figures *out);

/* 1 when a stop signal came: one taken before (rs->stopped_in set), or
 * one pending now, which is taken, said on stderr and recorded as
 * stopped in phase. 0 when none came. */
int run_setup_stopped(struct run_setup *rs, const char *phase);

/* After a run whose result files are all written (run_setup_finish):
 * wait ns (any value; a span past the clock's end waits until a signal)
 * for a stop signal, asleep in sigtimedwait on SIGINT and SIGTERM, which
 * stay blocked from run_setup_open, so one that came before the call ends
 * it at once. Returns 1 when one came (taken, and not recorded:
 * rs->stopped_in and run.json stay as the run left them), 0 when ns
 * passed. For --expose-linger. */
int run_setup_linger(struct run_setup *rs, uint64_t ns);

/* The end of --model's background probe of /models, before the summary:
 * join it (its warning, when it does not list the model, goes to stderr
 * now, ahead of the summary it is about) and return the note for the
 * summary's model line ("not listed by ...") or NULL. */
const char *run_setup_model_note(struct run_setup *rs);

/* Wait until the target answers GET BASE/models with a 200 again (after
 * --cold-restart's command), trying every 200 ms for at most timeout_ns.
 * Returns 0, LL_E_INTR when SIGINT or SIGTERM became pending (left
 * pending), or LL_E_AGAIN with the last failure in err. */
int run_setup_wait_ready(const struct run_config *cfg, uint64_t timeout_ns, char *err,
                         size_t errlen);

/* One driver run of cfg into rs->res; a stop signal during it sets
 * rs->stopped_in ("schedule", "load" or "drain"). 0, or -1 with the
 * reason printed. */
int run_setup_drive(struct run_setup *rs, const struct run_config *cfg);

/* Per traffic class (a --workload file's, or a replayed trace's), each
 * with its own SLO or the run's: print the "by class" table to stdout and
 * return summary.json's "classes" (NULL without classes). */
json_t *run_setup_classes(const struct run_config *cfg, const struct driver_result *res);

/* Per endpoint (several --url): print the "by endpoint" table to stdout
 * and return summary.json's "endpoints" (NULL with one endpoint). */
json_t *run_setup_endpoints(const struct run_config *cfg, const struct driver_result *res);

/* The server's figures beside the client's (llmload run with --metrics):
 * what scrape_join returned and what run_setup_report prints of it. */
struct run_server_view {
    const struct scrape_join *join;
    int join_rc;
    const struct scrape_client *client;
};

struct energy_figures;

/* The terminal summary of a run or replay and what follows it on stdout:
 * the by-class and by-endpoint tables, the stop reason, the server's
 * figures (server, NULL: none), the energy (when rs->n_gpu; energy is
 * then required), and "results: DIR". Returns summary.json's object with
 * classes, endpoints, server and energy set as they apply; the caller owns
 * it (run_setup_finish takes it over). */
json_t *run_setup_report(const struct run_setup *rs, const struct run_config *cfg,
                         const struct summary_info *info, const struct run_server_view *server,
                         const struct energy_figures *energy);

/* The end of a run or replay, after the terminal summary: write
 * summary.json (sj, taken over; the stop reason and the other driver facts
 * of rs->res are added here), then run.json once more with its "outcome"
 * (exit status, invalid and why, interrupted, stop reason), so that every
 * file of the results directory says whether the run measured what it
 * meant to; last report.html (report_run_write), from the files as they
 * now stand, so that `llmload report DIR` rebuilds it byte for byte, and
 * on stdout "report: DIR/report.html" once it is written (after the
 * summary's "results: DIR", which stays the line scripts parse). A
 * stop signal pending now (it came during the summary) is
 * taken: rs->stopped_in "summary". Returns the exit status: 130
 * interrupted, else the lowest of 1 INVALID, 3 records lost or a file not
 * written, 6 no request of the window succeeded (and some ended); 0 when
 * none applies. */
int run_setup_finish(struct run_setup *rs, json_t *sj, const struct summary_info *info);

/* --expect judged on summary.json's object sj, after the terminal summary
 * (run_setup_report) and before run_setup_finish: sj's "expect" (null
 * without thresholds: ex->n 0), one line on stderr per failed threshold,
 * and info->expect_failed, which makes the exit status 7. */
void run_setup_judge(const struct expect_set *ex, json_t *sj, struct summary_info *info);

/* The end of a run stopped before its load, or of a sweep: run.json once
 * more (the background probe's answer in target), with an "outcome" of
 * code, interrupted (rs->stopped_in set), stopped_in and stop_reason
 * (NULL: null). Returns code, or LL_EXIT_RUNTIME when run.json cannot be
 * written (reason printed) and code is not 130. Needs run_setup_results
 * to have written run.json. */
int run_setup_end(struct run_setup *rs, int code, const char *stop_reason);

/* Free and close what the steps made (the driver's result, the scraper,
 * requests.jsonl, run.json's root, the headers; the key's line wiped),
 * clean libcurl up when it was set up, then take any stop signal still
 * pending and restore the signal mask. Safe after any step, and twice. */
void run_setup_close(struct run_setup *rs);

#endif
