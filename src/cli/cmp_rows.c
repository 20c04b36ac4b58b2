/* cmp_rows.c: the rows of `llmload compare`'s table (cmp_int.h): each
 * latency percentile, goodput, attainment, the error rates and the rates,
 * with their differences, intervals and verdicts (the statistics are
 * measure/compare.c's), printed as the terminal table and written as
 * compare.json's rows; which row names --fail-on may use, and its gates
 * judged on the rows (cmp_gates). */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli/cmp_int.h"
#include "measure/compare.h"
#include "measure/expect.h"
#include "measure/record.h"
#include "util/util.h"

static const char *const lat_names[LAT_N] = {"ttft", "tpot", "itl", "e2e"};
static const char *const lat_titles[LAT_N] = {"TTFT", "TPOT", "ITL/req", "E2E"};
static const double pcts[NPCT] = {50, 90, 99};

/* ---- one row of the table ---------------------------------------------- */

/* The most rows: the percentiles, five others, a share per error kind. */
int cmp_rows_max(void)
{
    return LAT_N * NPCT + 5 + REC_KIND_COUNT;
}

/* The next row, rows[(*k)++], cleared and begun: its name and title,
 * unit (a share's difference is in percentage points), the better
 * direction, each side's figure (NAN: none) and the interval's method.
 * The caller sets its difference d. */
static struct row *row_begin(struct row *rows, int *k, const char *name, const char *title,
                             enum unit unit, enum cmp_better dir, double base, double cand,
                             const char *method)
{
    struct row *r = &rows[(*k)++];
    memset(r, 0, sizeof *r);
    snprintf(r->name, sizeof r->name, "%s", name);
    snprintf(r->title, sizeof r->title, "%s", title);
    r->unit = unit;
    r->dir = dir;
    r->pp = unit == U_SHARE;
    r->base = base;
    r->cand = cand;
    r->method = method;
    return r;
}

/* The share n / of (NAN when of is 0). */
static double share_of(uint64_t n, uint64_t of)
{
    return of ? (double)n / (double)of : NAN;
}

int cmp_per_scheduled(const struct side *b, const struct side *c)
{
    const char *mb =
        json_string_value(json_object_get(json_object_get(b->run, "config"), "load_model"));
    const char *mc =
        json_string_value(json_object_get(json_object_get(c->run, "config"), "load_model"));
    return mb && mc && strcmp(mb, "open") == 0 && strcmp(mc, "open") == 0 && b->win_scheduled &&
           c->win_scheduled;
}

/* A throughput row's difference (goodput, output tok/s): totals sb and
 * sc with variances vb and vc (cmp_total_ratio) per second (per_s: the
 * windows' ratio, b's over c's), and per scheduled request (sched: the
 * scheduled counts' ratio, b's over c's; 0 when not both open loops),
 * which goes in r->per_sched; when both sides kept up with their
 * schedules (kept_up, cmp_kept_up), d's interval is widened to span it.
 *
 * Why both. An open loop's arrivals in the window are its schedule's:
 * below the server's capacity the totals follow them, above it they
 * follow the server. Per scheduled request is right below (two seeds at
 * 20 req/s drew 86 and 131 requests in 5 s: per second "-34% worse" of
 * one server, per scheduled about 0) and wrong above: two sweeps of a
 * sim that serves about 23 req/s, at 40 req/s for 4 s, drew 119 and 204
 * arrivals and each finished about 93; per scheduled request goodput
 * 23.25 against 23.00/s read -42.3% [-56.7%, -23.0%] worse (the other
 * way, +73.3% better), and a review's pair read output tok/s 192.0
 * against 176.0 as +54.7%, against the values' sign. Per second is the
 * values' own ratio, and its Poisson interval (a count's variance is its
 * mean) already holds the arrivals' Poisson spread, so it is honest in
 * both regimes, but for its rare draws below the capacity, which are the
 * client's (86 against 131 is 3 standard errors apart). So the difference
 * is per second, its sign the values'.
 *
 * Which interval. Spanning both scales everywhere (the parent's rule)
 * let per scheduled request explain a real loss away above the capacity,
 * where it shrinks the loss toward 0: baseline 50 arrivals in 4 s, 40
 * finished (10/s), candidate 30 and 20 (5/s): per second -50% [-70.8%,
 * -14.5%], per scheduled -16.7% [-51%, +42%], the span "same" of a
 * halved capacity (two Poisson(40) draws that far apart: about 3%). A
 * side that finished well under what it scheduled follows the server,
 * and per second is right for it; so the interval spans the one per
 * scheduled request only where both sides kept up, where the arrivals'
 * draw is what moves the totals. Past the capacity, per second alone:
 * that pair of sweeps -1.1% [-25.8%, +32.0%] same; a sim with twice the
 * step, same seed, -47.8% [-63.2%, -26.0%] worse, and with the other
 * seed (119 arrivals against 204) still worse. A step near the capacity
 * that kept up on one side and not on the other is judged per second:
 * the side behind its schedule is the server's. */
static void throughput_diff(struct row *r, double sb, double vb, double sc, double vc, double per_s,
                            double sched, int kept_up)
{
    r->d = cmp_total_ratio(sb, vb, sc, vc, per_s);
    if (!(sched > 0))
        return;
    r->per_sched = cmp_total_ratio(sb, vb, sc, vc, sched);
    if (kept_up && r->d.ok && r->per_sched.ok) {
        r->d.lo = fmin(r->d.lo, r->per_sched.lo);
        r->d.hi = fmax(r->d.hi, r->per_sched.hi);
    }
}

/* The rows of candidate c against baseline b. */
int cmp_build_rows(const struct side *b, const struct side *c, unsigned resamples, uint64_t seed,
                   double min_effect, const int *kind_wanted, struct row *rows)
{
    int k = 0;
    /* The API is the same on both sides (workload_check): an embeddings
     * run has E2E alone of the latencies, and no output. */
    int no_stream = b->no_stream && c->no_stream;
    for (int m = 0; m < LAT_N; m++) {
        if (no_stream && strcmp(lat_names[m], "e2e") != 0)
            continue;
        struct cmp_diff d[NPCT];
        struct cmp_sample sb = {b->lat[m].v, b->lat[m].t, b->lat[m].n, b->block[m]};
        struct cmp_sample sc = {c->lat[m].v, c->lat[m].t, c->lat[m].n, c->block[m]};
        if (cmp_bootstrap_pct_blocks(&sb, &sc, pcts, NPCT, resamples, seed + (uint64_t)m, d) != 0)
            return -1;
        for (int p = 0; p < NPCT; p++) {
            char name[48], title[48];
            snprintf(name, sizeof name, "%s_p%.0f", lat_names[m], pcts[p]);
            snprintf(title, sizeof title, "%s p%.0f", lat_titles[m], pcts[p]);
            double base =
                b->lat[m].n ? cmp_percentile_sorted(b->lat[m].v, b->lat[m].n, pcts[p]) : NAN;
            double cand =
                c->lat[m].n ? cmp_percentile_sorted(c->lat[m].v, c->lat[m].n, pcts[p]) : NAN;
            struct row *r =
                row_begin(rows, &k, name, title, U_NS, CMP_LOWER_BETTER, base, cand, "bootstrap");
            r->d = d[p];
            r->block_b = b->block[m];
            r->block_c = c->block[m];
            r->n_b = b->lat[m].n;
            r->n_c = c->lat[m].n;
            r->pct = pcts[p];
        }
    }
    /* An open loop's sends are its schedule's, which the server does not
     * set (cmp_per_scheduled): two seeds at 20 req/s drew 86 and 131
     * requests in 5 s, and per second one server's achieved rate read
     * "-34% worse". The achieved rate is judged per scheduled request
     * (sends over sent_scheduled: a run's sends count cold ones, a
     * sweep's do not); with equal schedules over equal windows that is
     * the same as per second. goodput and output tok/s are judged on
     * both scales (throughput_diff): their difference is per second, as
     * the values beside it, and their interval spans the one per scheduled
     * request too. Per scheduled request, each count is over the requests
     * it counts: goodput over the warm ones (a cold request is in no
     * goodput), the tokens over the window's, cold ones included. Over
     * the warm ones alone, two runs with --cold-start 30 (13 and 48 warm,
     * 43 and 78 sent) read "achieved rate -50.9% worse" of one server,
     * and two sweeps (7 and 46 warm, 49 and 75 with the cold ones, whose
     * tokens they count) "output tok/s -77.2% worse". */
    int per_sched = cmp_per_scheduled(b, c);
    double per_s = b->window_s / c->window_s;
    double scale_warm =
        per_sched && b->scheduled && c->scheduled ? (double)b->scheduled / (double)c->scheduled : 0;
    double scale_sent = per_sched && b->sent_scheduled && c->sent_scheduled
                            ? (double)b->sent_scheduled / (double)c->sent_scheduled
                            : per_s;
    double scale = per_sched ? (double)b->win_scheduled / (double)c->win_scheduled : 0;
    int kept_up =
        cmp_kept_up(b->served, b->win_scheduled) && cmp_kept_up(c->served, c->win_scheduled);
    struct row *r = row_begin(rows, &k, "goodput", "goodput", U_RPS, CMP_HIGHER_BETTER, b->goodput,
                              c->goodput, "poisson");
    if (b->has_slo && c->has_slo)
        throughput_diff(r, (double)b->good, (double)b->good, (double)c->good, (double)c->good,
                        per_s, scale_warm, kept_up);

    r = row_begin(rows, &k, "attainment", "attainment", U_SHARE, CMP_HIGHER_BETTER, b->attainment,
                  c->attainment, "newcombe");
    if (b->has_slo && c->has_slo && isfinite(b->attainment) && isfinite(c->attainment))
        r->d = cmp_share_diff(b->attained, b->slo_judged, c->attained, c->slo_judged);

    /* Errors over the requests the client let end, as every error rate
     * (stats_error_share): a workload's own cancellations are neither. */
    uint64_t b_cancel = LL_MIN(b->by_kind[REC_CANCELLED], b->failed);
    uint64_t c_cancel = LL_MIN(c->by_kind[REC_CANCELLED], c->failed);
    uint64_t b_end = b->completed - b_cancel, c_end = c->completed - c_cancel;
    r = row_begin(rows, &k, "error_rate", "error rate", U_SHARE, CMP_LOWER_BETTER,
                  share_of(b->failed - b_cancel, b_end), share_of(c->failed - c_cancel, c_end),
                  "newcombe");
    r->d = cmp_share_diff(b->failed - b_cancel, b_end, c->failed - c_cancel, c_end);

    /* Each error kind that occurred on a side, or that --fail-on names. */
    for (int e = 0; e < REC_KIND_COUNT; e++) {
        if (e == REC_OK || !(b->by_kind[e] || c->by_kind[e] || kind_wanted[e]))
            continue;
        const char *kn = rec_kind_name((enum rec_kind)e);
        char name[48], title[48];
        snprintf(name, sizeof name, "error_rate_%s", kn);
        snprintf(title, sizeof title, "  %s", kn);
        /* The cancellations' own share is of every completed request. */
        uint64_t bn = e == REC_CANCELLED ? b->completed : b_end;
        uint64_t cn = e == REC_CANCELLED ? c->completed : c_end;
        r = row_begin(rows, &k, name, title, U_SHARE, CMP_LOWER_BETTER, share_of(b->by_kind[e], bn),
                      share_of(c->by_kind[e], cn), "newcombe");
        r->d = cmp_share_diff(b->by_kind[e], bn, c->by_kind[e], cn);
    }

    if (!no_stream) {
        r = row_begin(rows, &k, "output_tokens_per_s", "output tok/s", U_TOKS, CMP_HIGHER_BETTER,
                      b->tok_s, c->tok_s, "poisson");
        throughput_diff(r, b->tok_sum, b->tok_sq, c->tok_sum, c->tok_sq, per_s, scale, kept_up);
    }

    r = row_begin(rows, &k, "achieved_rate", "achieved rate", U_RPS, CMP_HIGHER_BETTER,
                  b->send_rate, c->send_rate, "poisson");
    r->d = cmp_total_ratio((double)b->sent, (double)b->sent, (double)c->sent, (double)c->sent,
                           scale_sent);
    for (int i = 0; i < k; i++) {
        rows[i].runs_b = rows[i].runs_c = 1;
        cmp_row_judge(&rows[i], min_effect);
    }
    return k;
}

void cmp_row_judge(struct row *x, double min_effect)
{
    x->verdict = cmp_verdict_of(&x->d, x->dir, x->pp ? 0 : min_effect);
    x->same_why = NULL;
    if (x->verdict == CMP_SAME)
        x->same_why = x->d.too_few                     ? "too_few"
                      : (x->d.lo <= 0 && x->d.hi >= 0) ? "within_noise"
                                                       : "below_min_effect";
}

double cmp_side_value(const struct side *s, const char *row)
{
    /* The rows are --expect's metrics: one reader of a figure by name. */
    struct expect_figures f;
    for (int m = 0; m < LAT_N; m++)
        for (int p = 0; p < EXPECT_NPCT; p++)
            f.lat_ns[m][p] =
                s->lat[m].n ? cmp_percentile_sorted(s->lat[m].v, s->lat[m].n, expect_pcts[p]) : NAN;
    f.goodput = s->goodput;
    f.attainment = s->attainment;
    f.achieved_rate = s->send_rate;
    f.output_tokens_per_s = s->tok_s;
    f.completed = (double)s->completed;
    f.failed = (double)s->failed;
    for (int k = 0; k < REC_KIND_COUNT; k++)
        f.by_kind[k] = (double)s->by_kind[k];
    return expect_figure(row, &f);
}

/* The finite values of the row named row of sides[0..n) into v; returns
 * how many. */
static size_t run_values(const struct side *const *sides, size_t n, const char *row, double *v)
{
    size_t k = 0;
    for (size_t i = 0; i < n; i++) {
        double x = cmp_side_value(sides[i], row);
        if (isfinite(x))
            v[k++] = x;
    }
    return k;
}

void cmp_rows_between(struct row *rows, int n, const struct side *const *bs, size_t nb,
                      const struct side *const *cs, size_t nc, double min_effect)
{
    double *vb = ll_calloc(nb + 1, sizeof *vb), *vc = ll_calloc(nc + 1, sizeof *vc);
    for (int i = 0; i < n; i++) {
        struct row *r = &rows[i];
        r->runs_b = (int)nb;
        r->runs_c = (int)nc;
        memset(&r->between, 0, sizeof r->between);
        if (!r->d.ok)
            continue;
        size_t kb = run_values(bs, nb, r->name, vb), kc = run_values(cs, nc, r->name, vc);
        r->between = cmp_between_runs(vb, kb, vc, kc, !r->pp, r->d.diff);
        /* The wider wins; an unbounded one (too few values) is the widest.
         * Their span, not the between-run one alone: it is centred on the
         * pooled difference and can leave out a bound of the row's own
         * (a Poisson ratio's is skewed; per scheduled request's, where
         * the row spans it, lies off-centre). */
        if (r->between.ok && !r->d.too_few && r->between.hi - r->between.lo > r->d.hi - r->d.lo) {
            r->d.lo = fmin(r->d.lo, r->between.lo);
            r->d.hi = fmax(r->d.hi, r->between.hi);
            r->from_runs = 1;
            cmp_row_judge(r, min_effect);
        }
    }
    free(vb);
    free(vc);
}

const char *cmp_fmt_value(const struct row *r, double v, char *buf, size_t len)
{
    if (!isfinite(v))
        return "-";
    switch (r->unit) {
    case U_NS: return ll_fmt_duration((uint64_t)llround(v), buf, len);
    case U_RPS: snprintf(buf, len, "%.2f/s", v); break;
    case U_TOKS: snprintf(buf, len, "%.1f", v); break;
    case U_SHARE: snprintf(buf, len, "%.2f%%", 100 * v); break;
    }
    return buf;
}

const char *cmp_fmt_diff(const struct row *r, double x, char *buf, size_t len)
{
    /* Past +9,999% (an interval between two runs can reach far) in
     * powers of ten, to keep the table's column. */
    if (!r->pp && fabs(100 * x) >= 1e4)
        snprintf(buf, len, "%+.1e%%", 100 * x);
    else
        snprintf(buf, len, r->pp ? "%+.2fpp" : "%+.1f%%", 100 * x);
    return buf;
}

static const char *verdict_text(const struct row *r)
{
    if (r->verdict != CMP_SAME)
        return cmp_verdict_name(r->verdict);
    if (strcmp(r->same_why, "too_few") == 0)
        return "same (too few values)";
    if (strcmp(r->same_why, "below_min_effect") == 0)
        return "same (under --min-effect)";
    return "same (within noise)";
}

void cmp_print_table(FILE *f, const struct side *b, const struct side *c, const struct row *rows,
                     int n, unsigned resamples)
{
    fprintf(f,
            "\n%s (candidate%s%s) vs %s (baseline%s%s), %s, 95%% intervals (block bootstrap %u)\n",
            c->label, strcmp(cmp_outcome_name(c), "ok") ? ", " : "",
            strcmp(cmp_outcome_name(c), "ok") ? cmp_outcome_name(c) : "", b->label,
            strcmp(cmp_outcome_name(b), "ok") ? ", " : "",
            strcmp(cmp_outcome_name(b), "ok") ? cmp_outcome_name(b) : "", b->kind, resamples);
    /* With runs on a side, the "from" column says which interval a row
     * shows: "within" the records, or between the "runs" (the wider). */
    int runs = n > 0 && (rows[0].runs_b > 1 || rows[0].runs_c > 1);
    if (runs)
        fprintf(f,
                "runs: baseline %d, candidate %d; from: the wider interval, within the "
                "records or between the runs\n",
                rows[0].runs_b, rows[0].runs_c);
    fprintf(f, "%-21s %12s %12s %10s %22s  %s%s\n", "metric", "baseline", "candidate", "diff",
            "95% interval", runs ? "from    " : "", "verdict");
    for (int i = 0; i < n; i++) {
        const struct row *r = &rows[i];
        char a[32], bb[32], d[32], lo[32], hi[32], ci[80];
        if (r->d.ok && r->d.too_few) {
            snprintf(ci, sizeof ci, "too few values");
            cmp_fmt_diff(r, r->d.diff, d, sizeof d);
        } else if (r->d.ok) {
            snprintf(ci, sizeof ci, "[%s, %s]", cmp_fmt_diff(r, r->d.lo, lo, sizeof lo),
                     cmp_fmt_diff(r, r->d.hi, hi, sizeof hi));
            cmp_fmt_diff(r, r->d.diff, d, sizeof d);
        } else {
            snprintf(ci, sizeof ci, "-");
            snprintf(d, sizeof d, "-");
        }
        fprintf(f, "%-21s %12s %12s %10s %22s  %s%s\n", r->title,
                cmp_fmt_value(r, r->base, a, sizeof a), cmp_fmt_value(r, r->cand, bb, sizeof bb), d,
                ci,
                !runs          ? ""
                : r->from_runs ? "runs    "
                               : "within  ",
                verdict_text(r));
    }
}

static json_t *jnumber_or_null(double v)
{
    return isfinite(v) ? json_real(v) : json_null();
}

/* An interval d as {"value", "lo", "hi"} ("value" only when with_value),
 * or null when d has none (d->ok 0). */
static json_t *interval_json(const struct cmp_diff *d, int with_value)
{
    if (!d->ok)
        return json_null();
    json_t *o = json_object();
    if (with_value)
        json_object_set_new(o, "value", jnumber_or_null(d->diff));
    json_object_set_new(o, "lo", jnumber_or_null(d->lo));
    json_object_set_new(o, "hi", jnumber_or_null(d->hi));
    return o;
}

json_t *cmp_row_json(const struct row *r)
{
    static const char *const units[] = {"ns", "req/s", "tok/s", "share"};
    json_t *o = json_object();
    json_object_set_new(o, "row", json_string(r->name));
    json_object_set_new(o, "unit", json_string(units[r->unit]));
    json_object_set_new(o, "better", json_string(r->dir == CMP_LOWER_BETTER ? "lower" : "higher"));
    json_object_set_new(o, "baseline", jnumber_or_null(r->base));
    json_object_set_new(o, "candidate", jnumber_or_null(r->cand));
    json_t *d = json_object();
    json_object_set_new(d, "kind", json_string(r->pp ? "difference" : "relative"));
    /* An infinite one (a total of 0 in the baseline) is null. */
    json_object_set_new(d, "value", r->d.ok ? jnumber_or_null(r->d.diff) : json_null());
    int bounded = r->d.ok && !r->d.too_few;
    json_object_set_new(d, "lo", bounded ? jnumber_or_null(r->d.lo) : json_null());
    json_object_set_new(d, "hi", bounded ? jnumber_or_null(r->d.hi) : json_null());
    json_object_set_new(d, "too_few", json_boolean(r->d.too_few));
    json_object_set_new(o, "diff", d);
    json_object_set_new(o, "per_scheduled", interval_json(&r->per_sched, 1));
    json_object_set_new(o, "method", json_string(r->method));
    json_t *blk = json_null();
    if (r->block_b > 0) {
        blk = json_object();
        json_object_set_new(blk, "baseline", json_integer((json_int_t)r->block_b));
        json_object_set_new(blk, "candidate", json_integer((json_int_t)r->block_c));
    }
    json_object_set_new(o, "block", blk);
    json_object_set_new(o, "interval", json_string(r->from_runs ? "between_runs" : "within_run"));
    json_t *runs = json_object();
    json_object_set_new(runs, "baseline", json_integer(r->runs_b));
    json_object_set_new(runs, "candidate", json_integer(r->runs_c));
    json_object_set_new(o, "runs", runs);
    json_object_set_new(o, "between_runs", interval_json(&r->between, 0));
    json_object_set_new(o, "verdict", json_string(cmp_verdict_name(r->verdict)));
    json_object_set_new(o, "same_because", r->same_why ? json_string(r->same_why) : json_null());
    return o;
}

int cmp_is_share_row(const char *name)
{
    return strcmp(name, "attainment") == 0 || strcmp(name, "error_rate") == 0 ||
           expect_error_kind(name) >= 0;
}

int cmp_sweep_row(const char *name)
{
    return strcmp(name, "capacity") == 0 || strcmp(name, "knee") == 0;
}

int cmp_known_row(const char *name)
{
    if (expect_error_kind(name) >= 0 || cmp_sweep_row(name))
        return 1;
    static const char *const other[] = {"goodput", "attainment", "error_rate",
                                        "output_tokens_per_s", "achieved_rate"};
    for (int m = 0; m < LAT_N; m++) {
        for (int p = 0; p < NPCT; p++) {
            char b[24];
            snprintf(b, sizeof b, "%s_p%.0f", lat_names[m], pcts[p]);
            if (strcmp(b, name) == 0)
                return 1;
        }
    }
    for (size_t i = 0; i < LL_ARRAY_LEN(other); i++) {
        if (strcmp(other[i], name) == 0)
            return 1;
    }
    return 0;
}

/* ---- --fail-on's gates --------------------------------------------------- */

json_t *cmp_gates(const struct cmp_opts *o, const struct side *c, double rate,
                  const struct row *rows, int n, int *fail, int *inconclusive)
{
    static const char *const gn[] = {"pass", "fail", "inconclusive"};
    json_t *gates = json_array();
    for (size_t t = 0; t < o->n_th; t++) {
        const struct row *r = NULL;
        for (int q = 0; q < n; q++) {
            if (strcmp(rows[q].name, o->th[t].row) == 0)
                r = &rows[q];
        }
        if (!r)
            continue; /* checked: compare_flags every name, stream_gates_check a stream's */
        enum cmp_gate g = cmp_gate_of(&r->d, &o->th[t]);
        json_t *j = json_object();
        json_object_set_new(j, "row", json_string(r->name));
        json_object_set_new(j, "threshold", json_real(o->th[t].amount));
        json_object_set_new(j, "unit", json_string(o->th[t].pp ? "pp" : "%"));
        json_object_set_new(j, "result", json_string(gn[g]));
        json_array_append_new(gates, j);
        if (g == CMP_GATE_PASS)
            continue;
        char at[48] = "", a[32], bb[32], d[32], lo[32], hi[32], ci[160];
        if (!isnan(rate))
            snprintf(at, sizeof at, " at %.4g req/s", rate);
        /* The interval, or in words why there is none: a percentile of
         * too few values once read "[-inf, +inf]", and a figure missing
         * on a side reads "-", which alone does not say what to change. */
        int slo_row = strcmp(r->name, "goodput") == 0 || strcmp(r->name, "attainment") == 0;
        if (r->d.ok && r->d.too_few)
            snprintf(ci, sizeof ci,
                     ", n=%zu vs %zu: too few for an interval (a p%.0f needs %zu a side)", r->n_b,
                     r->n_c, r->pct, cmp_pct_min_n(r->pct));
        else if (r->d.ok)
            snprintf(ci, sizeof ci, " [%s, %s]", cmp_fmt_diff(r, r->d.lo, lo, sizeof lo),
                     cmp_fmt_diff(r, r->d.hi, hi, sizeof hi));
        else
            snprintf(ci, sizeof ci, ", no interval (%s)",
                     isnan(r->base) && isnan(r->cand)
                         ? (slo_row ? "no value on either side: goodput and attainment need "
                                      "an SLO, --slo"
                                    : "no value on either side")
                     : isnan(r->base) || isnan(r->cand) ? "no value on one side"
                                                        : "a baseline of 0");
        fprintf(stderr, "llmload: compare: %s %s%s: %s %s -> %s, %s%s vs limit %+.4g%s\n", c->label,
                g == CMP_GATE_FAIL ? "FAILS" : "inconclusive", at, r->name,
                cmp_fmt_value(r, r->base, a, sizeof a), cmp_fmt_value(r, r->cand, bb, sizeof bb),
                r->d.ok ? cmp_fmt_diff(r, r->d.diff, d, sizeof d) : "-", ci, 100 * o->th[t].amount,
                o->th[t].pp ? "pp" : "%");
        if (g == CMP_GATE_FAIL)
            *fail = 1;
        else
            *inconclusive = 1;
    }
    return gates;
}
