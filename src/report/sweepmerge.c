/* sweepmerge.c: the shards of a sharded sweep into one results directory
 * (runmerge.h, runmerge_dirs): records by step then id, each step's
 * steps.jsonl facts merged, then every figure through the report's
 * builder. */
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
#include "util/json.h"
#include "util/util.h"

/* ---- sweeps ------------------------------------------------------------- */

/* The merged steps of a sweep, in the order the first shard that has a
 * step lists it, and steps.jsonl's "end" line. */
struct msteps {
    struct sweep_step *s;
    size_t n, cap;
    json_t *end; /* the first part's "end" object; NULL = none */
    int have_server;
};

/* Shard step src into the merged step dst (the same index): counts and
 * means summed, times and the interruption the widest, the lateness
 * histograms merged and its diagnosis' counts summed, the server's figures from the scraping shard. */
static void facts_add(struct sweep_facts *dst, const struct sweep_facts *src, int metrics)
{
    dst->duration_ns = dst->duration_ns > src->duration_ns ? dst->duration_ns : src->duration_ns;
    dst->window_ns = dst->window_ns > src->window_ns ? dst->window_ns : src->window_ns;
    dst->elapsed_ns = dst->elapsed_ns > src->elapsed_ns ? dst->elapsed_ns : src->elapsed_ns;
    dst->scheduled += src->scheduled;
    dst->inflight_mean += src->inflight_mean;
    dst->inflight_max += src->inflight_max;
    dst->interrupted |= src->interrupted;
    dst->cold_start += src->cold_start;
    sweep_late_add(&dst->late, &src->late); /* whose the late sends were: the sum */
    hist_merge(dst->lateness, src->lateness);
    sweep_series_add(dst, src);
    if (metrics && src->server.present) {
        dst->server = src->server;
        dst->start_offset_ns = src->start_offset_ns;
    }
    /* The GPUs' energy over the step, read by the scraping shard alone;
     * its span counts from the step's t = 0, the same instant in every
     * shard, so the report divides it by the merged records' tokens. */
    if (metrics && src->energy.present)
        dst->energy = src->energy;
    for (size_t k = 0; k < dst->n_classes; k++)
        for (size_t j = 0; j < src->n_classes; j++)
            if (strcmp(dst->classes[k].name, src->classes[j].name) == 0)
                dst->classes[k].scheduled += src->classes[j].scheduled;
    /* Endpoints by index (every shard has the same --url list). */
    for (size_t k = 0; k < dst->n_endpoints && k < src->n_endpoints; k++)
        dst->endpoints[k].scheduled += src->endpoints[k].scheduled;
}

/* Read one part's steps.jsonl into ms. metrics: the part scraped. 0 or -1
 * after a one-line error. */
static int steps_read_part(struct msteps *ms, const struct part *p, int metrics)
{
    char path[4200];
    snprintf(path, sizeof path, "%s/steps.jsonl", p->dir);
    FILE *f = fopen(path, "r");
    if (!f) {
        if (errno == ENOENT)
            return 0; /* it died before its first step */
        ll_errorf("merge: %s: %s", path, strerror(errno));
        return -1;
    }
    char *line = NULL;
    size_t cap = 0, lineno = 0;
    ssize_t got;
    int rc = 0;
    struct sweep_step one;
    while (rc == 0 && (got = getline(&line, &cap, f)) > 0) {
        lineno++;
        json_error_t je;
        json_t *o = ll_json_loadb(line, (size_t)got, 0, &je);
        if (!o) {
            ll_errorf("merge: %s:%zu: not JSON: %s", path, lineno, je.text);
            rc = -1;
            break;
        }
        const char *kind = rm_jstr(o, "kind");
        if (kind && strcmp(kind, "end") == 0 && !ms->end) {
            ms->end = json_incref(o);
        } else if (kind && (strcmp(kind, "load") == 0 || strcmp(kind, "recovery") == 0)) {
            char why[200];
            sweep_step_init(&one);
            if (sweep_facts_from_json(o, &one, why, sizeof why) != 0) {
                ll_errorf("merge: %s:%zu: %s", path, lineno, why);
                rc = -1;
            } else if (!one.f.has_start_at) {
                ll_errorf("merge: %s:%zu: a step without start_at_offset_ns: not a sweep run "
                          "with --shard and --start-at",
                          path, lineno);
                rc = -1;
            }
            size_t i = 0;
            while (rc == 0 && i < ms->n && ms->s[i].f.index != one.f.index)
                i++;
            if (rc == 0 && i < ms->n) {
                struct sweep_facts *d = &ms->s[i].f;
                if (d->start_at_offset_ns != one.f.start_at_offset_ns ||
                    d->recovery != one.f.recovery ||
                    d->global_offered_rps != one.f.global_offered_rps) {
                    ll_errorf("merge: %s:%zu: step %u does not line up with the other shards' "
                              "(its start_at_offset_ns, kind or global_offered_rps differ)",
                              path, lineno, (unsigned)one.f.index);
                    rc = -1;
                } else {
                    facts_add(d, &one.f, metrics);
                }
                sweep_step_free(&one);
            } else if (rc == 0) {
                if (ms->n == ms->cap) {
                    ms->cap = ms->cap ? ms->cap * 2 : 16;
                    ms->s = ll_realloc(ms->s, ms->cap * sizeof *ms->s);
                }
                /* The first shard's step is the merged one; the whole's rates. */
                struct sweep_facts *d = &one.f;
                double scale = d->offered_rps > 0 && d->global_offered_rps > 0
                                   ? d->global_offered_rps / d->offered_rps
                                   : 1;
                d->offered_rps *= scale;
                d->overload_rps *= scale;
                if (!metrics) {
                    memset(&d->server, 0, sizeof d->server);
                    sweep_energy_clear(&d->energy);
                }
                ms->s[ms->n++] = one;
            } else {
                sweep_step_free(&one);
            }
        }
        json_decref(o);
    }
    free(line);
    fclose(f);
    return rc;
}

/* Per step, the scheduled ids no shard has: open loop gives request i of
 * a step to shard i mod N, so a step's ids run from 0 to its largest. */
static void sweep_missing_count(struct merge *m)
{
    uint32_t n = m->shards;
    int *present = ll_calloc(n, sizeof *present);
    uint64_t *have = ll_calloc(n, sizeof *have);
    for (size_t i = 0; i < m->n_parts; i++)
        present[m->parts[i].shard] = 1;
    size_t at = 0;
    m->missing_shards[0] = '\0';
    for (uint32_t k = 0; k < n; k++)
        if (!present[k] && at < sizeof m->missing_shards)
            at += (size_t)snprintf(m->missing_shards + at, sizeof m->missing_shards - at, "%s%u",
                                   at ? ", " : "", k);
    m->missing_ids = m->expected_ids = 0;
    for (size_t i = 0; i < m->n_refs;) {
        size_t j = i;
        memset(have, 0, n * sizeof *have);
        while (j < m->n_refs && m->refs[j].step == m->refs[i].step)
            have[m->parts[m->refs[j++].part].shard]++;
        uint64_t M = m->refs[j - 1].id + 1;
        m->expected_ids += M;
        for (uint32_t k = 0; k < n; k++) {
            uint64_t want = M / n + (k < M % n);
            m->missing_ids += want > have[k] ? want - have[k] : 0;
        }
        i = j;
    }
    free(have);
    free(present);
}

/* The shards of a sweep into dir: requests.jsonl ordered by step and id,
 * steps.jsonl with each step's facts merged, run.json, the scraping
 * shard's server_metrics.jsonl; then every figure from the merged files
 * through build (report_build_dir), as `llmload report` does. */
int rm_sweep_merge(struct merge *m, const char *dir, int allow_partial, runmerge_build_fn build,
                   FILE *out)
{
    struct msteps ms = {0};
    int code = LL_EXIT_USAGE, written = 0;
    FILE *rec = NULL;
    char *buf = NULL;
    char path[4400], err[1200];
    json_t *run = NULL;
    if (rm_refs_read(m) != 0)
        goto out;
    /* The scraping shard (config.metrics_shard) gives the server's figures. */
    json_t *ms_k = json_object_get(json_object_get(m->parts[0].run, "config"), "metrics_shard");
    uint32_t metrics_shard = json_is_integer(ms_k) ? (uint32_t)json_integer_value(ms_k) : 0;
    for (size_t i = 0; i < m->n_parts; i++)
        if (steps_read_part(&ms, &m->parts[i], m->parts[i].shard == metrics_shard) != 0)
            goto out;
    sweep_missing_count(m);
    rm_incomplete_text(m);
    if (m->incomplete[0])
        ll_errorf("merge: %s", m->incomplete);

    code = LL_EXIT_RUNTIME;
    snprintf(path, sizeof path, "%s/requests.jsonl", dir);
    rec = fopen(path, "w");
    size_t buf_cap = 0;
    for (size_t i = 0; rec && i < m->n_refs; i++) {
        const struct ref *rf = &m->refs[i];
        const struct part *p = &m->parts[rf->part];
        if (rf->len + 1 > buf_cap) {
            buf_cap = rf->len + 1;
            buf = ll_realloc(buf, buf_cap);
        }
        if (pread(p->fd, buf, rf->len, (off_t)rf->off) != (ssize_t)rf->len) {
            ll_errorf("merge: %s/requests.jsonl: read failed: %s", p->dir, strerror(errno));
            goto out;
        }
        buf[rf->len] = '\n';
        if (fwrite(buf, 1, rf->len + 1, rec) != rf->len + 1) {
            ll_errorf("merge: cannot write %s: %s", path, strerror(errno));
            goto out; /* rec closed there */
        }
    }
    if (!rec || fclose(rec) != 0) {
        rec = NULL;
        ll_errorf("merge: cannot write %s: %s", path, strerror(errno));
        goto out;
    }
    rec = NULL;
    snprintf(path, sizeof path, "%s/steps.jsonl", dir);
    FILE *sf = fopen(path, "w");
    int bad = !sf;
    for (size_t i = 0; sf && i < ms.n; i++) {
        /* The merged step's clock is the scraping shard's (its server
         * scrapes count from there), its offset from --start-at the same. */
        json_t *o = sweep_facts_json(&ms.s[i].f);
        bad |= json_dumpf(o, sf, JSON_COMPACT) != 0 || fputc('\n', sf) == EOF;
        json_decref(o);
    }
    if (sf && ms.end)
        bad |= json_dumpf(ms.end, sf, JSON_COMPACT) != 0 || fputc('\n', sf) == EOF;
    if (sf && fclose(sf) != 0)
        bad = 1;
    if (bad) {
        ll_errorf("merge: cannot write %s: %s", path, strerror(errno));
        goto out;
    }
    if (rm_copy_metrics(m, dir) != 0 || rm_hist_write(m, dir) < 0)
        goto out;
    json_t *outcome = json_deep_copy(json_object_get(m->parts[0].run, "outcome"));
    if (!json_is_object(outcome)) {
        json_decref(outcome);
        outcome = json_object();
    }
    json_object_set_new(outcome, "incomplete",
                        m->incomplete[0] ? json_string(m->incomplete) : json_null());
    run = rm_merged_run_json(m, allow_partial, outcome, LL_EXIT_OK);
    json_object_set_new(json_object_get(run, "merged"), "incomplete",
                        m->incomplete[0] ? json_string(m->incomplete) : json_null());
    if (results_write_json_atomic(dir, "run.json", run, err, sizeof err) != 0) {
        ll_errorf("merge: %s", err);
        goto out;
    }
    code = build(dir, out);
    written = 1;
    if (m->incomplete[0]) {
        char shown[sizeof m->incomplete];
        if (out)
            fprintf(out, "*** %s\n", ll_shown(m->incomplete, shown, sizeof shown));
        if (!allow_partial)
            code = rm_exit_combine(code, LL_EXIT_INCOMPLETE);
    }
    if (out)
        fprintf(out, "merged:     %zu of %u shards\n", m->n_present, m->shards);
    json_object_set_new(json_object_get(run, "outcome"), "exit_status", json_integer(code));
    if (results_write_json_atomic(dir, "run.json", run, err, sizeof err) != 0) {
        ll_errorf("merge: %s", err);
        code = rm_exit_combine(code, LL_EXIT_RUNTIME);
    }
out:
    /* Only a merge that wrote the merged files names them: a refused one
     * (a request twice, a step that does not parse) said "results: DIR"
     * on stdout under its exit 2. */
    if (written && out)
        fprintf(out, "results: %s\n", dir);
    if (rec)
        fclose(rec);
    free(buf);
    json_decref(run);
    for (size_t i = 0; i < ms.n; i++)
        sweep_step_free(&ms.s[i]);
    free(ms.s);
    json_decref(ms.end);
    return code;
}
