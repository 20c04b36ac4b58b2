/* runmerge.h: the shards of one sharded `llmload run` (or `replay`) into
 * one results directory that reads as if one process had run
 * (docs/distributed.md, "llmload merge"). `llmload merge` calls
 * runmerge_dirs; `llmload report` calls runmerge_rebuild on a merged
 * directory, which recomputes its summary through the same code.
 *
 * Every figure that a record carries (the total's and each traffic
 * class's) is recomputed from the merged
 * records, in id order, through the stats and summary code a run uses
 * (stats_account, summary_json): exact percentiles, never averages of the
 * shards' percentiles. The two a record does not carry are merged from the
 * shards' summary.json histograms, which are lossless to merge: ITL per
 * gap and the schedule lateness.
 *
 * Sweeps (`sweep --shard`) merge per step: the records' "step" field picks
 * each step's records (requests.jsonl ordered by step, then id), each
 * step's facts in steps.jsonl are merged (sums, maxima, the whole's
 * offered rate), and report_build_dir recomputes every step, the
 * capacity, the knee and the recovery from the merged files. */
#ifndef LL_RUNMERGE_H
#define LL_RUNMERGE_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include <jansson.h>

/* Merge the n shard directories dirs into out_dir (created when absent;
 * an existing one must be empty unless force):
 * requests.jsonl ordered by id, summary.json, run.json with a "merged"
 * object, and the scraping shard's server_metrics.jsonl; print the summary
 * to out (NULL = nothing). A sweep's shards: also steps.jsonl, then
 * build(out_dir, out) writes the rest and gives the status (the caller
 * passes report_build_dir, which this file cannot include: report_build.c
 * includes this header). Refuses (a one-line error naming the
 * directories, LL_EXIT_USAGE) a directory that is not a shard of a run,
 * shards of different configurations (config_hash), two copies of one
 * shard, shard counts that disagree, an id in two shards. Missing shards
 * or missing ids (a shard that died) are said on stderr and in
 * summary.json's "incomplete"; the status is then
 * LL_EXIT_INCOMPLETE unless allow_partial. Otherwise the status a
 * run would have: LL_EXIT_OK, LL_EXIT_FAIL (INVALID), LL_EXIT_NO_OK,
 * LL_EXIT_EXPECT (an --expect threshold the shards' summaries list fails
 * on the merged figures), LL_EXIT_RUNTIME (cannot write); the lowest
 * non-zero wins. */
typedef int (*runmerge_build_fn)(const char *dir, FILE *out);

/* The server's view of a merged run (summary.json's "server" and
 * "energy"): the
 * scraping shard's server_metrics.jsonl joined to the merged window as a
 * run joins its own series. Joining a series is the metrics layer's,
 * which this one may not include: the command passes the join in
 * (cli/mergeserver.c). The window runs from the shards' common start (the
 * scraping shard's run start, origin_monotonic_ns of its summary's
 * "server") for end_ns: to the last merged record's end, or the longest
 * shard's warm-up and window when that is later. The client's figures
 * are the merged records' (warm and cold), as a run sets beside the
 * server's counters. */
struct runmerge_window {
    /* The scraping shard: its results directory, its summary.json's
     * "server" (url, scrapes, failed; NULL: none) and "energy" (url,
     * scrapes, failed, cost_per_hour; NULL: no GPU telemetry). */
    const char *dir;
    const json_t *server;
    const json_t *energy;
    uint64_t origin_abs_ns; /* its run start (the common start), its CLOCK_MONOTONIC */
    uint64_t end_ns;        /* the window's length from the common start, ns */
    double ttft_sent_p50_s, ttft_sent_p99_s; /* TTFT from sent, s; NAN: no ok record */
    double output_tokens, prompt_tokens, cached_tokens, completed_ok;
    double failed_started, failed_output_tokens; /* as struct scrape_client's */
    /* The energy's divisors, as a run's: the whole run's output tokens
     * and ok requests, warm-up and cold start included. */
    double energy_tokens, energy_requests;
    /* 1 in `llmload report`'s rebuild (runmerge_rebuild), whose caller
     * keeps the merged summary's objects when the join returns none:
     * the join's warning says so instead of "left out". */
    int rebuild;
};

/* Print the server's lines, then the energy's, to out (NULL: none);
 * return summary.json's "server" object (NULL when w->server is, or the
 * file cannot be read: a warning on stderr) and set *energy to its
 * "energy" object (NULL when w->energy is); the caller owns both. The
 * energy is the GPU telemetry's lines of the same file over the same
 * window, per output token and request of the merged run. */
typedef json_t *(*runmerge_server_fn)(const struct runmerge_window *w, FILE *out, json_t **energy);

/* server: the join above (NULL: no "server" in the merged summary). */
int runmerge_dirs(const char *const *dirs, size_t n, const char *out_dir, int force,
                  int allow_partial, runmerge_build_fn build, runmerge_server_fn server, FILE *out);

/* `llmload merge --hist-only`: the shards' hist.jsonl (no records read)
 * into out_dir's summary.json (schema llmload.summary/1 with "hist_only":
 * true and "percentiles_from" saying the percentiles are histograms',
 * within 1/256 of the record-exact ones): requests ok/failed/completed
 * from the windows' counts, latency_ns.{ttft,itl,tpot,e2e}; run.json with
 * "merged" ("hist_only": true). A sweep's shards: summary.json's
 * "steps", each load and recovery step's windows merged (the lines carry
 * their step) into its counts and latencies. Refuses what runmerge_dirs
 * refuses; missing or cut-short shards as "incomplete"
 * (status LL_EXIT_INCOMPLETE unless allow_partial). */
int runmerge_hist_only(const char *const *dirs, size_t n, const char *out_dir, int force,
                       int allow_partial, FILE *out);

/* 1 when run (a run.json) is one runmerge_dirs wrote. */
int runmerge_is_merged(const json_t *run);

/* 1 when dir/run.json is one runmerge_dirs wrote for a run or a replay
 * (not a sweep, whose merged directory report_build_dir rebuilds as any
 * sweep's); 0 otherwise, an unreadable run.json included. */
int runmerge_dir_is_merged_run(const char *dir);

/* Recompute summary.json of the merged directory dir from its
 * requests.jsonl, run.json and summary.json (its ITL and lateness
 * histograms) and print the summary to out, as the merge printed it; the
 * status as runmerge_dirs (its --allow-partial as recorded in run.json).
 * The server's view and energy are server's join of the directory's
 * server_metrics.jsonl over the merge's window, from the origin the
 * merge kept in them, printed and written as the merge did (server NULL,
 * a summary whose "server" and "energy" have no origin, or a
 * server_metrics.jsonl the join cannot read: the merged summary's
 * objects kept as they are, and not printed). */
int runmerge_rebuild(const char *dir, runmerge_server_fn server, FILE *out);

#endif
