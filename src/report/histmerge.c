/* histmerge.c: llmload merge --hist-only (runmerge.h,
 * runmerge_hist_only): the shards' hist.jsonl, no records, into
 * summary.json's latency percentiles (a sweep's: per step); and the
 * merged directory's own hist.jsonl, every merge's (rm_hist_write,
 * mergeparts.h): each second's windows of every shard added into one
 * line, through the same histlog_merge_text. */
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

/* The closing lines on out (NULL: none): where the percentiles come
 * from, what is missing, the shards merged; and run.json's outcome
 * (caller owns it). */
static json_t *hist_only_close(const struct merge *m, FILE *out)
{
    if (out) {
        fprintf(out, "note:       %s\n", HIST_ONLY_NOTE);
        if (m->incomplete[0])
            fprintf(out, "*** %s\n", m->incomplete);
        fprintf(out, "merged:     %zu of %u shards\n", m->n_present, m->shards);
    }
    json_t *o = json_object();
    json_object_set_new(o, "hist_only", json_true());
    json_object_set_new(o, "interrupted", json_boolean(0));
    for (size_t i = 0; i < m->n_parts; i++)
        if (m->parts[i].interrupted)
            json_object_set_new(o, "interrupted", json_true());
    json_object_set_new(o, "incomplete",
                        m->incomplete[0] ? json_string(m->incomplete) : json_null());
    return o;
}

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
    }
    *outcome = hist_only_close(m, out);
out:
    histlog_window_free(&total);
    return code;
}

/* One step of a sweep as its shards' steps.jsonl say it. */
struct hist_step {
    int32_t step;
    char kind[16];
    double offered_rps; /* the ladder's (global_offered_rps) */
};

/* The load and recovery steps of the first part's steps.jsonl into *out
 * (caller frees); the count, or -1 after a one-line error. */
static long steps_read(const struct part *p, struct hist_step **out)
{
    char path[4400];
    snprintf(path, sizeof path, "%s/steps.jsonl", p->dir);
    *out = NULL;
    FILE *f = fopen(path, "r");
    if (!f) {
        ll_errorf("merge --hist-only: %s: %s", path, strerror(errno));
        return -1;
    }
    long n = 0;
    char *line = NULL;
    size_t cap = 0;
    ssize_t got;
    while ((got = getline(&line, &cap, f)) > 0) {
        json_t *o = json_loadb(line, (size_t)got, 0, NULL);
        const char *kind = rm_jstr(o, "kind");
        const json_t *st = json_object_get(o, "step");
        if (kind && json_is_integer(st) &&
            (strcmp(kind, "load") == 0 || strcmp(kind, "recovery") == 0)) {
            *out = ll_realloc(*out, (size_t)(n + 1) * sizeof **out);
            struct hist_step *h = &(*out)[n++];
            h->step = (int32_t)json_integer_value(st);
            snprintf(h->kind, sizeof h->kind, "%s", kind);
            const json_t *g = json_object_get(o, "global_offered_rps");
            h->offered_rps = json_is_number(g) ? json_number_value(g) : NAN;
        }
        json_decref(o);
    }
    free(line);
    fclose(f);
    return n;
}

/* A sweep's shards: each step's windows of every shard's hist.jsonl
 * added up (the lines carry their step) into summary.json's "steps",
 * each with its ok and failed counts and its four latencies' percentiles
 * from the histograms, and a table on the terminal. Returns the status
 * before the incomplete rule. */
static int hist_only_sweep(struct merge *m, const char *dir, FILE *out, json_t **outcome)
{
    struct hist_step *steps = NULL;
    long n_steps = steps_read(&m->parts[0], &steps);
    if (n_steps < 0)
        return LL_EXIT_USAGE;
    json_t *sj = json_object(), *arr = json_array();
    char path[4400], err[1200];
    int code = LL_EXIT_OK;
    if (out)
        fprintf(out, "%-5s %-9s %9s %6s %6s %10s %10s %10s %10s %10s\n", "step", "kind", "offered",
                "ok", "failed", "TTFT p50", "TTFT p99", "TPOT p99", "ITL p99", "E2E p99");
    for (long i = 0; i < n_steps && code == LL_EXIT_OK; i++) {
        struct histlog_window w;
        histlog_window_init(&w);
        uint64_t windows = 0;
        for (size_t k = 0; k < m->n_parts && code == LL_EXIT_OK; k++) {
            snprintf(path, sizeof path, "%s/hist.jsonl", m->parts[k].dir);
            if (histlog_merge_file(path, steps[i].step, &w, &windows, err, sizeof err) != 0) {
                ll_errorf("merge --hist-only: %s", err);
                code = LL_EXIT_USAGE;
            }
        }
        json_t *o = json_object(), *lat = json_object();
        json_object_set_new(o, "step", json_integer(steps[i].step));
        json_object_set_new(o, "kind", json_string(steps[i].kind));
        json_object_set_new(o, "offered_rps",
                            isfinite(steps[i].offered_rps) ? json_real(steps[i].offered_rps)
                                                           : json_null());
        json_object_set_new(o, "windows", json_integer((json_int_t)windows));
        json_object_set_new(o, "ok", json_integer((json_int_t)w.ok));
        json_object_set_new(o, "failed", json_integer((json_int_t)w.failed));
        for (int k = 0; k < HISTLOG_METRICS; k++)
            json_object_set_new(lat, histlog_metric_name((enum histlog_metric)k),
                                summary_latency_json(w.h[k]));
        json_object_set_new(o, "latency_ns", lat);
        json_array_append_new(arr, o);
        if (out) {
            char a[5][32];
            const struct hist *h[5] = {w.h[HISTLOG_TTFT], w.h[HISTLOG_TTFT], w.h[HISTLOG_TPOT],
                                       w.h[HISTLOG_ITL], w.h[HISTLOG_E2E]};
            static const double q[5] = {50, 99, 99, 99, 99};
            for (int k = 0; k < 5; k++)
                snprintf(a[k], sizeof a[k], "%s",
                         hist_count(h[k])
                             ? ll_fmt_duration(hist_percentile(h[k], q[k]), a[k], sizeof a[k])
                             : "-");
            fprintf(out, "%-5d %-9s %9.2f %6" PRIu64 " %6" PRIu64 " %10s %10s %10s %10s %10s\n",
                    steps[i].step, steps[i].kind, steps[i].offered_rps, w.ok, w.failed, a[0], a[1],
                    a[2], a[3], a[4]);
        }
        histlog_window_free(&w);
    }
    free(steps);
    json_object_set_new(sj, "schema", json_string("llmload.summary/1"));
    json_object_set_new(sj, "version", json_string(LL_VERSION));
    json_object_set_new(sj, "hist_only", json_true());
    json_object_set_new(sj, "sweep", json_true());
    json_object_set_new(sj, "percentiles_from", json_string(HIST_ONLY_NOTE));
    json_object_set_new(sj, "steps", arr);
    json_object_set_new(sj, "incomplete",
                        m->incomplete[0] ? json_string(m->incomplete) : json_null());
    if (code == LL_EXIT_OK &&
        results_write_json_atomic(dir, "summary.json", sj, err, sizeof err) != 0) {
        ll_errorf("merge: %s", err);
        code = LL_EXIT_RUNTIME;
    }
    json_decref(sj);
    if (code == LL_EXIT_USAGE)
        return code;
    *outcome = hist_only_close(m, out);
    return code;
}

int runmerge_hist_only(const char *const *dirs, size_t n, const char *out_dir, int force,
                       int allow_partial, FILE *out)
{
    struct merge m = {0};
    json_t *outcome = NULL;
    int code = LL_EXIT_USAGE;
    char dir[4200];
    if (rm_parts_open(&m, dirs, n, out_dir, force, dir, sizeof dir) != 0)
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
    code =
        m.sweep ? hist_only_sweep(&m, dir, out, &outcome) : hist_only_write(&m, dir, out, &outcome);
    code = rm_run_finish(&m, dir, allow_partial, outcome, code, 1, out);
out:
    rm_merge_free(&m);
    return code;
}

/* ---- the merged directory's hist.jsonl ----------------------------------- */

/* Where one line of a shard's hist.jsonl lies, and the second it counts. */
struct hist_ref {
    int32_t step;  /* -1 outside a sweep */
    uint32_t part; /* index into m->parts */
    uint64_t t_ns; /* the window's start from the shard's (step's) t = 0 */
    uint64_t off;  /* bytes into the part's hist.jsonl */
    uint64_t len;  /* bytes, its newline included */
};

/* qsort order: step, second, then the shards and lines as given. */
static int hist_ref_cmp(const void *a, const void *b)
{
    const struct hist_ref *x = a, *y = b;
    if (x->step != y->step)
        return x->step < y->step ? -1 : 1;
    if (x->t_ns != y->t_ns)
        return x->t_ns < y->t_ns ? -1 : 1;
    if (x->part != y->part)
        return x->part < y->part ? -1 : 1;
    return x->off < y->off ? -1 : x->off > y->off;
}

/* Pass 1: every window line of part i's hist.jsonl (opened on *fd, kept
 * open for pass 2) appended to *refs. Each line is parsed whole, so a bad
 * one is found before anything is written; a bad last line without its
 * newline (a killed shard's) is skipped with a warning. 0, or -1 with "PATH: reason"
 * or "PATH:LINE: reason" in err. */
static int hist_refs_read(const struct part *p, uint32_t i, int *fd, struct hist_ref **refs,
                          size_t *n, size_t *cap, char *err, size_t errlen)
{
    char path[4400], why[400];
    snprintf(path, sizeof path, "%s/hist.jsonl", p->dir);
    *fd = open(path, O_RDONLY | O_CLOEXEC);
    FILE *f = *fd >= 0 ? fdopen(dup(*fd), "r") : NULL;
    if (!f) {
        snprintf(err, errlen, "%s: %s", path, strerror(errno));
        return -1;
    }
    struct histlog_window w;
    histlog_window_init(&w);
    char *line = NULL;
    size_t lcap = 0;
    ssize_t got;
    uint64_t off = 0, lineno = 0;
    int rc = 0;
    while (rc == 0 && (got = getline(&line, &lcap, f)) > 0) {
        lineno++;
        if (strspn(line, " \t\r\n") != (size_t)got) {
            if (histlog_parse_line(line, (size_t)got, &w, why, sizeof why) != 0) {
                /* A killed shard's last line, cut off before its newline:
                 * the seconds before it are whole, so keep them. */
                if (line[got - 1] != '\n') {
                    ll_errorf("merge: warning: %s:%llu: a cut-off last line, skipped: %s", path,
                              (unsigned long long)lineno, why);
                    break;
                }
                snprintf(err, errlen, "%s:%llu: %s", path, (unsigned long long)lineno, why);
                rc = -1;
                break;
            }
            if (*n == *cap) {
                *cap = *cap ? 2 * *cap : 256;
                *refs = ll_realloc(*refs, *cap * sizeof **refs);
            }
            (*refs)[(*n)++] = (struct hist_ref){
                .step = w.step, .part = i, .t_ns = w.t_ns, .off = off, .len = (uint64_t)got};
        }
        off += (uint64_t)got;
    }
    if (rc == 0 && ferror(f)) {
        snprintf(err, errlen, "%s: %s", path, strerror(errno));
        rc = -1;
    }
    free(line);
    histlog_window_free(&w);
    fclose(f);
    return rc;
}

/* Pass 2: each (step, second)'s lines read back, parsed into one scratch
 * window and added up as --hist-only adds them, one combined line each,
 * in step and time order, to f. 0, or -1 with the reason in err.
 *
 * The scratch window lives for the whole pass: a window made and freed
 * per line (histlog_merge_text's; 4 histograms at the top of glibc's
 * heap) trimmed and regrew the heap each line, two brk calls and page
 * faults a line: a 24 h merge of 2 shards x 8 workers took 114 s user +
 * 334 s system CPU and 12.5 M minor faults; with one window, 32 s + 3 s
 * and 18 k (bench/merge-hist-long.sh). */
static int hist_refs_write(const struct merge *m, const int *fds, const struct hist_ref *refs,
                           size_t n, FILE *f, char *err, size_t errlen)
{
    struct histlog_window total, one;
    histlog_window_init(&total);
    histlog_window_init(&one);
    total.combined = 1;
    char why[400];
    char *buf = NULL, name[4400];
    size_t buf_cap = 0;
    int rc = 0;
    for (size_t i = 0; i < n && rc == 0;) {
        histlog_window_clear(&total);
        total.step = refs[i].step;
        total.t_ns = refs[i].t_ns;
        for (; i < n && rc == 0 && refs[i].step == total.step && refs[i].t_ns == total.t_ns; i++) {
            const struct hist_ref *r = &refs[i];
            snprintf(name, sizeof name, "%s/hist.jsonl", m->parts[r->part].dir);
            if (r->len > buf_cap) {
                buf_cap = r->len;
                buf = ll_realloc(buf, buf_cap);
            }
            if (pread(fds[r->part], buf, r->len, (off_t)r->off) != (ssize_t)r->len) {
                snprintf(err, errlen, "%s: read failed: %s", name, strerror(errno));
                rc = -1;
            } else if (histlog_parse_line(buf, r->len, &one, why, sizeof why) != 0) {
                snprintf(err, errlen, "%s: the line at byte %llu: %s", name,
                         (unsigned long long)r->off, why);
                rc = -1;
            } else {
                histlog_window_merge(&total, &one);
            }
        }
        char *line = rc == 0 ? histlog_line(&total) : NULL;
        if (line && fputs(line, f) == EOF) {
            snprintf(err, errlen, "cannot write: %s", strerror(errno));
            rc = -1;
        }
        free(line);
    }
    free(buf);
    histlog_window_free(&one);
    histlog_window_free(&total);
    return rc;
}

int rm_hist_write(const struct merge *m, const char *dir)
{
    char path[4400], tmp[4410], err[10000];
    snprintf(path, sizeof path, "%s/hist.jsonl", dir);
    snprintf(tmp, sizeof tmp, "%s.tmp", path);
    int *fds = ll_calloc(m->n_parts, sizeof *fds);
    for (size_t i = 0; i < m->n_parts; i++)
        fds[i] = -1;
    struct hist_ref *refs = NULL;
    size_t n = 0, cap = 0;
    int rc = 0;
    err[0] = '\0';
    for (size_t i = 0; i < m->n_parts && rc == 0; i++)
        rc = hist_refs_read(&m->parts[i], (uint32_t)i, &fds[i], &refs, &n, &cap, err, sizeof err);
    if (rc != 0) {
        /* The records are merged all the same; an old file would be wrong. */
        ll_errorf("merge: warning: no hist.jsonl written (the page has no charts over time): %s",
                  err);
        if (unlink(path) != 0 && errno != ENOENT) {
            ll_errorf("merge: cannot remove %s: %s", path, strerror(errno));
            rc = -1;
        } else {
            rc = 1;
        }
        goto out;
    }
    if (n > 1) /* (none when every shard's window was empty: refs is NULL) */
        qsort(refs, n, sizeof *refs, hist_ref_cmp);
    /* Atomically, as the JSON files: NAME.tmp, flushed to disk, renamed. */
    FILE *f = fopen(tmp, "w");
    if (!f) {
        snprintf(err, sizeof err, "cannot create %s: %s", tmp, strerror(errno));
        rc = -1;
    } else {
        rc = hist_refs_write(m, fds, refs, n, f, err, sizeof err);
        if (rc == 0 && (fflush(f) != 0 || fsync(fileno(f)) != 0))
            rc = -1;
        if (fclose(f) != 0)
            rc = -1;
        if (rc != 0 && !err[0])
            snprintf(err, sizeof err, "cannot write %s: %s", tmp, strerror(errno));
    }
    if (rc == 0 && rename(tmp, path) != 0) {
        snprintf(err, sizeof err, "cannot rename %s to %s: %s", tmp, path, strerror(errno));
        rc = -1;
    }
    if (rc != 0) {
        /* As on a bad line: a previous merge's file would be drawn as this one's. */
        ll_errorf("merge: warning: no hist.jsonl written (the page has no charts over time): %s",
                  err);
        unlink(tmp);
        if (unlink(path) != 0 && errno != ENOENT)
            ll_errorf("merge: cannot remove %s: %s", path, strerror(errno));
    }
out:
    for (size_t i = 0; i < m->n_parts; i++)
        if (fds[i] >= 0)
            close(fds[i]);
    free(fds);
    free(refs);
    return rc;
}
