/* histmerge.c: llmload merge --hist-only (runmerge.h,
 * runmerge_hist_only): the shards' hist.jsonl, no records, into
 * summary.json's latency percentiles. */
#include "report/mergeparts.h"

#include "report/runmerge.h"

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "measure/hist.h"
#include "measure/histlog.h"
#include "measure/record.h"
#include "measure/results.h"
#include "measure/slo.h"
#include "measure/stats.h"
#include "measure/summary.h"
#include "measure/verdict.h"
#include "sweep/sweep.h"
#include "sweep/sweep_json.h"
#include "util/util.h"

/* ---- --hist-only -------------------------------------------------------- */

#define HIST_ONLY_NOTE                                                                             \
    "percentiles from histograms (hist.jsonl), each within 1/256 of the record-exact value"

/* The latencies and counts of every shard's hist.jsonl into sum.json and
 * the terminal; no record read. Returns the status before the incomplete
 * rule. */
static int hist_only_write(struct merge *m, const char *dir, FILE *out, json_t **outcome)
{
    struct histlog_window total;
    histlog_window_init(&total);
    uint64_t windows = 0;
    int code = LL_EXIT_USAGE;
    char path[4400], err[1200];
    for (size_t i = 0; i < m->n_parts; i++) {
        snprintf(path, sizeof path, "%s/hist.jsonl", m->parts[i].dir);
        uint64_t w = 0;
        if (histlog_merge_file(path, HISTLOG_ALL_STEPS, &total, &w, err, sizeof err) != 0) {
            ll_errorf("merge --hist-only: %s", err);
            goto out;
        }
        windows += w;
    }
    json_t *sj = json_object();
    json_object_set_new(sj, "schema", json_string("llmload.summary/1"));
    json_object_set_new(sj, "version", json_string(LL_VERSION));
    json_object_set_new(sj, "hist_only", json_true());
    json_object_set_new(sj, "percentiles_from", json_string(HIST_ONLY_NOTE));
    json_object_set_new(sj, "windows", json_integer((json_int_t)windows));
    json_t *rq = json_object();
    json_object_set_new(rq, "completed", json_integer((json_int_t)(total.ok + total.failed)));
    json_object_set_new(rq, "ok", json_integer((json_int_t)total.ok));
    json_object_set_new(rq, "failed", json_integer((json_int_t)total.failed));
    json_object_set_new(sj, "requests", rq);
    json_t *lat = json_object();
    for (int k = 0; k < HISTLOG_METRICS; k++)
        json_object_set_new(lat, histlog_metric_name((enum histlog_metric)k),
                            summary_latency_json(total.h[k]));
    json_object_set_new(sj, "latency_ns", lat);
    json_object_set_new(sj, "incomplete",
                        m->incomplete[0] ? json_string(m->incomplete) : json_null());
    code = LL_EXIT_OK;
    if (results_write_json_atomic(dir, "summary.json", sj, err, sizeof err) != 0) {
        ll_errorf("merge: %s", err);
        code = LL_EXIT_RUNTIME;
    }
    json_decref(sj);
    if (out) {
        static const char *const labels[HISTLOG_METRICS] = {"TTFT", "ITL (per gap)", "TPOT", "E2E"};
        static const double pcts[] = {50, 90, 99, 99.9};
        fprintf(out,
                "requests:   %" PRIu64 " ok, %" PRIu64 " failed (%" PRIu64 " one-second windows)\n",
                total.ok, total.failed, windows);
        fprintf(out, "%-16s %10s %10s %10s %10s %10s %10s\n", "", "count", "p50", "p90", "p99",
                "p99.9", "max");
        for (int k = 0; k < HISTLOG_METRICS; k++) {
            const struct hist *h = total.h[k];
            char a[32];
            fprintf(out, "%-16s %10" PRIu64, labels[k], hist_count(h));
            for (size_t q = 0; q < sizeof pcts / sizeof pcts[0]; q++)
                fprintf(out, " %10s",
                        hist_count(h) ? ll_fmt_duration(hist_percentile(h, pcts[q]), a, sizeof a)
                                      : "-");
            fprintf(out, " %10s\n",
                    hist_count(h) ? ll_fmt_duration(hist_max(h), a, sizeof a) : "-");
        }
        fprintf(out, "note:       %s\n", HIST_ONLY_NOTE);
        if (m->incomplete[0])
            fprintf(out, "*** %s\n", m->incomplete);
        fprintf(out, "merged:     %zu of %u shards\n", m->n_present, m->shards);
    }
    *outcome = json_object();
    json_object_set_new(*outcome, "hist_only", json_true());
    json_object_set_new(*outcome, "interrupted", json_boolean(0));
    for (size_t i = 0; i < m->n_parts; i++)
        if (m->parts[i].interrupted)
            json_object_set_new(*outcome, "interrupted", json_true());
    json_object_set_new(*outcome, "incomplete",
                        m->incomplete[0] ? json_string(m->incomplete) : json_null());
out:
    histlog_window_free(&total);
    return code;
}

int runmerge_hist_only(const char *const *dirs, size_t n, const char *out_dir, int force,
                       int allow_partial, FILE *out)
{
    struct merge m = {0};
    json_t *outcome = NULL;
    int code = LL_EXIT_USAGE;
    char dir[4200];
    if (rm_parts_load(&m, dirs, n, 1) != 0)
        goto out;
    if (rm_parts_open_out(&m, out_dir, force, dir, sizeof dir) != 0)
        goto out;
    /* Without records, only what is missing whole: absent or cut-short shards. */
    int *present = ll_calloc(m.shards, sizeof *present);
    for (size_t i = 0; i < n; i++)
        present[m.parts[i].shard] = 1;
    size_t at = 0;
    for (uint32_t k = 0; k < m.shards; k++)
        if (!present[k] && at < sizeof m.missing_shards)
            at += (size_t)snprintf(m.missing_shards + at, sizeof m.missing_shards - at, "%s%u",
                                   at ? ", " : "", k);
    free(present);
    char cut[600] = "";
    size_t cat = 0, n_cut = 0;
    for (size_t i = 0; i < n; i++) {
        if (!m.parts[i].interrupted)
            continue;
        n_cut++;
        if (cat < sizeof cut)
            cat += (size_t)snprintf(cut + cat, sizeof cut - cat, "%sshard %u (%s) cut short",
                                    cat ? "; " : "", m.parts[i].shard, m.parts[i].dir);
    }
    if (m.missing_shards[0] || cut[0])
        snprintf(m.incomplete, sizeof m.incomplete, "incomplete: %zu of %u shards (%s%s%s%s)",
                 n - n_cut, m.shards, m.missing_shards[0] ? "missing: " : "", m.missing_shards,
                 m.missing_shards[0] && cut[0] ? "; " : "", cut);
    if (m.incomplete[0])
        ll_errorf("merge: %s", m.incomplete);
    code = hist_only_write(&m, dir, out, &outcome);
    code = rm_run_finish(&m, dir, allow_partial, outcome, code, 1, out);
out:
    rm_merge_free(&m);
    return code;
}
