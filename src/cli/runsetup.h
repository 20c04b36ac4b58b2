/* runsetup.h: the one sequence `llmload run`, `replay` and `sweep` share,
 * from checked flags to a results directory that says how the run ended:
 *
 *   run_setup_open      descriptor limit, SIGPIPE, the target (GET BASE/models)
 *   run_setup_results   the results directory, run.json, requests.jsonl
 *   run_setup_scraper   the server-metrics scraper (run and sweep)
 *   run_setup_drive     one driver run (run and replay; sweep drives steps)
 *   run_setup_finish    summary.json, then run.json with its outcome
 *   run_setup_close     everything above, whatever step failed
 *
 * Each step prints its own reason when it fails and returns the exit
 * status to end with; the command prints its summary between drive and
 * finish. */
#ifndef LL_RUNSETUP_H
#define LL_RUNSETUP_H

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
    json_t *models;                 /* BASE/models, NULL when it failed */
    char server[128];               /* its Server header, "" if none */
    char *first_id;                 /* first model id it listed, or NULL */
    char *auth;                     /* the Authorization line (wiped on close) */
    const char *model;              /* the model to ask for (o->model or first_id) */
    int curl_up;                    /* 1 once curl_global_init succeeded */
};

/* What the sequence holds. Zero-initialise, then run_setup_open. */
struct run_setup {
    struct run_target target;
    char dir[1024];                 /* the results directory, once prepared */
    json_t *run;                    /* run.json's root, owned */
    char records_path[1100];        /* DIR/requests.jsonl */
    int records_fd;                 /* open O_RDWR | O_APPEND (sweep reads it back); -1 */
    struct scraper *scraper;        /* NULL: no server metrics */
    struct driver_result res;       /* run_setup_drive's, valid when have_res */
    int have_res;
};

/* Raise the descriptor limit (runopts_raise_nofile), ignore SIGPIPE,
 * initialise libcurl, build the request headers (the API key from the
 * environment, -H lines), ask BASE/models and pick the model: sets
 * cfg->transport.headers and .model (valid until run_setup_close).
 * Returns LL_EXIT_OK, or the status to end with, reason printed
 * (LL_EXIT_USAGE: --api-key-env names an unset variable; LL_EXIT_RUNTIME:
 * no model). Call run_setup_close in every case. */
int run_setup_open(struct run_setup *rs, const struct run_opts *o, struct run_config *cfg);

/* Prepare the results directory (--out, --force), write run.json for
 * command with config (a new reference, taken over in every case; see
 * runopts_config_json), open requests.jsonl into cfg->records_fd and set
 * cfg's progress line (--quiet; every second on a terminal, else every
 * 5 s). Returns LL_EXIT_OK, LL_EXIT_USAGE (the directory) or
 * LL_EXIT_RUNTIME, reason printed. */
int run_setup_results(struct run_setup *rs, const struct run_opts *o, const char *command,
                      json_t *config, struct run_config *cfg);

/* The server-metrics scraper, unless off: url, or BASE's /metrics when it
 * answers now (scraper_for_run), writing DIR/server_metrics.jsonl. Not
 * started: a run starts it with the driver's clock, a sweep at once.
 * rs->scraper stays NULL when there is none (a note or warning printed). */
void run_setup_scraper(struct run_setup *rs, const char *url, int off, uint64_t interval_ns,
                       const struct run_config *cfg, int quiet);

/* One driver run of cfg into rs->res. 0, or -1 with the reason printed. */
int run_setup_drive(struct run_setup *rs, const struct run_config *cfg);

/* The end of a run or replay, after the terminal summary: write
 * summary.json (sj, taken over; the stop reason and the other driver facts
 * of rs->res are added here), then run.json once more with its "outcome"
 * (exit status, invalid and why, interrupted, stop reason), so that every
 * file of the results directory says whether the run measured what it
 * meant to. Returns the exit status: 130 interrupted, 1 INVALID, 3 records
 * lost or a file not written, else 0. */
int run_setup_finish(struct run_setup *rs, json_t *sj, const struct summary_info *info);

/* Free and close what the steps made (the driver's result, the scraper,
 * requests.jsonl, run.json's root, the headers; the key's line wiped) and
 * clean libcurl up when it was set up. Safe after any step, and twice. */
void run_setup_close(struct run_setup *rs);

#endif
