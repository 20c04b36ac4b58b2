/* cmp_sweep.c: `llmload compare` of sweeps. Each side is a saved sweep,
 * read and analysed as `llmload report` does (report_sweep_load); each
 * candidate gets against the baseline: the SLO capacity and the knee,
 * each bracketed by the offered rates around it (one step wide at least)
 * and called better or worse only when the two brackets do not overlap;
 * the curves of TTFT p99, TPOT p99, goodput and attainment against
 * offered load; and, per offered rate both sides ran, the rows of a
 * comparison of runs built from that rate's records (cmp_build_rows, the
 * same code as runs). docs/compare.md documents it. */
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli/cmp_int.h"
#include "measure/stats.h"
#include "report/report_build.h"
#include "util/util.h"

/* A figure bracketed by the offered rates around it. */
struct bracket {
    int known;       /* 0: no value (no SLO, nothing judged, no knee) */
    double value;    /* req/s */
    double lo, hi;   /* req/s; hi INFINITY: a lower bound (nothing above failed) */
    const char *why; /* when unknown: "no_slo", "not_judged", "no_knee" */
    int short_steps; /* capacity: it rests on steps shorter than the hold rule asks
                      * (findings.capacity_on_short_steps): no verdict beyond "same" */
};

static int same_rate(double a, double b)
{
    return fabs(a - b) <= 1e-9 * fmax(1, fmax(fabs(a), fabs(b)));
}

/* The SLO capacity: the highest passing rate below the first failing one;
 * the true one lies between it and that failing rate. */
static struct bracket capacity_of(const struct report_sweep *s)
{
    const struct sweep_findings *fd = s->fd;
    struct bracket b = {0};
    if (!fd->have_slo) {
        b.why = "no_slo";
        return b;
    }
    /* No rate passed and none failed: every step was INVALID, cut short
     * by a stop signal, or empty; there is no bracket, not [0, lowest]. */
    if (fd->capacity_unknown || (!fd->capacity_found && !fd->next_fails)) {
        b.why = "not_judged";
        return b;
    }
    b.known = 1;
    b.short_steps = fd->capacity_short;
    if (fd->capacity_found) {
        b.value = b.lo = fd->capacity_rps;
        b.hi = fd->next_fails ? fd->next_fail_rps : INFINITY;
    } else {
        /* The lowest rate failed: the capacity is under it. */
        b.value = b.lo = 0;
        b.hi = fd->next_fails ? fd->next_fail_rps
                              : (s->n_points ? s->points[0].offered_rps : INFINITY);
    }
    return b;
}

/* The knee of the completions against load: bracketed by the offered
 * rates just below (or at) and just above it. */
static struct bracket knee_of(const struct report_sweep *s)
{
    struct bracket b = {0};
    if (!s->fd->knee.found) {
        b.why = "no_knee";
        return b;
    }
    b.known = 1;
    b.value = s->fd->knee.knee_x;
    b.lo = 0;
    b.hi = INFINITY;
    for (size_t i = 0; i < s->n_points; i++) {
        double r = s->points[i].offered_rps;
        if (r <= b.value && r > b.lo)
            b.lo = r;
        if (r > b.value && r < b.hi)
            b.hi = r;
    }
    return b;
}

/* Better or worse only when the brackets do not overlap (a shared end
 * counts as overlap) and neither rests on short steps, whose passes and
 * steady misses a longer hold may turn (seeds 1 and 3 of one server on
 * 2 s steps: 6 [6, 10] and 10 [10, -]): higher is better for both
 * figures. */
static enum cmp_verdict bracket_verdict(const struct bracket *b, const struct bracket *c)
{
    if (!b->known || !c->known)
        return CMP_NA;
    if (b->short_steps || c->short_steps)
        return CMP_SAME;
    if (c->lo > b->hi)
        return CMP_BETTER;
    if (c->hi < b->lo)
        return CMP_WORSE;
    return CMP_SAME;
}

/* Whether brackets b and c are apart (neither overlaps the other). */
static int brackets_apart(const struct bracket *b, const struct bracket *c)
{
    return b->known && c->known && (c->lo > b->hi || c->hi < b->lo);
}

static json_t *num_or_null(double v)
{
    return isfinite(v) ? json_real(v) : json_null();
}

static json_t *bracket_json(const struct bracket *b)
{
    json_t *o = json_object();
    json_object_set_new(o, "found", json_boolean(b->known));
    json_object_set_new(o, "value", b->known ? num_or_null(b->value) : json_null());
    json_object_set_new(o, "lo", b->known ? num_or_null(b->lo) : json_null());
    json_object_set_new(o, "hi", b->known ? num_or_null(b->hi) : json_null());
    json_object_set_new(o, "lower_bound", json_boolean(b->known && !isfinite(b->hi)));
    json_object_set_new(o, "why", b->why ? json_string(b->why) : json_null());
    json_object_set_new(o, "on_short_steps", json_boolean(b->short_steps));
    return o;
}

static const char *bracket_text(const struct bracket *b, char *buf, size_t len)
{
    if (!b->known)
        snprintf(buf, len, "- (%s)", b->why);
    else if (isfinite(b->hi))
        snprintf(buf, len, "%.4g req/s [%.4g, %.4g]", b->value, b->lo, b->hi);
    else
        snprintf(buf, len, "%.4g req/s [%.4g, -] (lower bound)", b->value, b->lo);
    return buf;
}

/* Why a bracket verdict is "same": short steps under either side, else
 * the overlap. */
static const char *bracket_same_why(const struct bracket *b, const struct bracket *c)
{
    return brackets_apart(b, c) ? "short_steps" : "brackets_overlap";
}

static const char *bracket_verdict_text(enum cmp_verdict v, const char *same_why)
{
    if (v != CMP_SAME)
        return cmp_verdict_name(v);
    return strcmp(same_why, "short_steps") == 0 ? "same (inconclusive: short steps)"
                                                : "same (brackets overlap)";
}

/* The lines under the capacity row that say why it may be no verdict,
 * and which passes the side's sweep did not credit (the light-draw rule):
 * "  baseline: capacity on short steps (...)", "  candidate: 14 req/s
 * drew 16 of 28 expected arrivals (p = 0.01): its pass not credited". */
static void print_capacity_notes(FILE *f, const char *who, const struct report_sweep *s)
{
    const struct sweep_findings *fd = s->fd;
    if (fd->have_slo && fd->capacity_short)
        fprintf(f,
                "  %s: capacity on short steps (held < %.3gx their E2E p99): a longer hold may "
                "move it\n",
                who, sweep_min_hold_factor(&s->set));
    for (size_t k = 0; fd->have_slo && k < LL_MIN(fd->n_light, (size_t)SWEEP_MAX_UNKNOWN); k++)
        fprintf(f,
                "  %s: %.4g req/s drew %" PRIu64 " of %.4g expected arrivals (p = %.2g): its pass "
                "not credited\n",
                who, fd->light_rps[k], fd->light_arrivals[k], fd->light_expected[k],
                fd->light_p[k]);
}

static json_t *curve_json(const struct report_sweep *s)
{
    json_t *a = json_array();
    for (size_t i = 0; i < s->n_points; i++) {
        const struct sweep_point *p = &s->points[i];
        json_t *o = json_object();
        json_object_set_new(o, "offered_rps", json_real(p->offered_rps));
        json_object_set_new(o, "ttft_p99_ns", num_or_null(p->ttft_p99_ms * 1e6));
        json_object_set_new(o, "tpot_p99_ns", num_or_null(p->tpot_p99_ms * 1e6));
        json_object_set_new(o, "goodput_rps", num_or_null(p->goodput_rps));
        json_object_set_new(o, "attainment", num_or_null(p->attainment));
        json_object_set_new(o, "pass", json_boolean(p->pass));
        json_array_append_new(a, o);
    }
    return a;
}

/* ---- one offered rate's record set as a side ----------------------------- */

/* Routes a sweep's records to the side of their step's rate, and to the
 * step's own side (one run of the rate: the between-run variation). */
struct route {
    const struct report_sweep *sw;
    struct side *rate_sides; /* one per common rate */
    struct side *step_sides; /* by index into sw->steps; used where rate_of_step >= 0 */
    int *rate_of_step;       /* by index into sw->steps; -1 = not compared */
};

static void on_sweep_record(void *ud, const struct record *r)
{
    struct route *rt = ud;
    for (size_t i = 0; i < rt->sw->n_steps; i++) {
        const struct sweep_facts *f = &rt->sw->steps[i].f;
        if (r->step < 0 || f->index != (uint32_t)r->step || rt->rate_of_step[i] < 0)
            continue;
        /* A step's warm-up and its cold requests are out of its figures,
         * as they are out of the sweep's. */
        struct record x = *r;
        if (x.cold || x.sched_ns < f->warmup_ns)
            x.warmup = 1;
        /* Output tokens count in the step's own window: repeats of a rate
         * need not hold alike (--step-duration auto sizes each step from
         * the one before), and one repeat's window would drop what ended
         * in another's longer one. */
        struct side *s[2] = {&rt->rate_sides[rt->rate_of_step[i]], &rt->step_sides[i]};
        for (int k = 0; k < 2; k++) {
            s[k]->win_lo = f->warmup_ns;
            s[k]->win_hi = f->warmup_ns + f->window_ns;
            cmp_side_add_record(s[k], &x);
            /* The step's tokens count its cold requests' (docs/sweep.md),
             * so the requests they are over do too, as a run's
             * (stats_win_scheduled): scheduled from the warm-up's end. */
            s[k]->win_scheduled += r->cold && r->sched_ns >= f->warmup_ns;
            /* What it served (cmp_kept_up): the records that ended in
             * the window, any kind but those dropped unsent. A step's
             * stats keep no such count. */
            s[k]->served += r->kind != REC_CLIENT_DROPPED && r->end_ns >= s[k]->win_lo &&
                            r->end_ns < s[k]->win_hi;
        }
        return;
    }
}

/* The facts of rate k's steps (its repeats, not the recovery) summed into
 * side s, as a run's summary.json gives them. */
static void side_facts_add(struct side *s, const struct sweep_step *st,
                           const struct sweep_settings *set)
{
    const struct stats *x = &st->stats;
    s->window_s += (double)st->f.window_ns / 1e9;
    s->completed += x->completed;
    s->failed += stats_failed(x);
    s->scheduled += x->scheduled;
    /* The step's sends leave cold ones out (its achieved rate, docs/sweep.md);
     * its tokens count them, and on_sweep_record adds them to win_scheduled. */
    s->sent_scheduled += x->scheduled;
    s->win_scheduled += x->scheduled;
    for (int k = 0; k < REC_KIND_COUNT; k++)
        s->by_kind[k] += x->by_kind[k];
    s->good += st->met_ended_in_window;
    s->attained += x->slo_met;
    s->slo_judged += x->scheduled - LL_MIN(x->slo_unjudged, x->scheduled);
    s->sent += st->sent_in_window;
    s->tok_s += (double)st->output_tokens_ended; /* a total until side_facts_end */
    s->has_slo = sweep_step_has_slo(st, set);
}

static void side_facts_end(struct side *s)
{
    double w = s->window_s > 0 ? s->window_s : NAN;
    s->tok_s /= w;
    s->goodput = s->has_slo ? (double)s->good / w : NAN;
    s->attainment = s->has_slo && s->slo_judged ? (double)s->attained / (double)s->slo_judged : NAN;
    s->send_rate = (double)s->sent / w;
}

/* Whether step st's figures stand for its rate: a load step the sweep
 * judged (sweep_step_judged: not INVALID, whose latencies hold the
 * generator's own delay; not interrupted, which measured less than its
 * hold; not empty, with no request scheduled in its window), as the
 * capacity search does. */
static int step_measured(const struct sweep_step *st)
{
    return !st->f.recovery && sweep_step_judged(st);
}

/* Whether sweep sw has a step_measured step at rate. */
static int rate_measured(const struct report_sweep *sw, double rate)
{
    for (size_t i = 0; i < sw->n_steps; i++)
        if (step_measured(&sw->steps[i]) && same_rate(sw->steps[i].f.offered_rps, rate))
            return 1;
    return 0;
}

/* One sweep's sides: each common rate's (its steps pooled) and each
 * step's own. */
struct rate_load {
    struct side *rate; /* n_rates of them */
    struct side *step; /* n_steps of them; used where rate_of[i] >= 0 */
    int *rate_of;      /* per step: the index of its rate, -1 when not compared */
    size_t n_rates, n_steps;
};

static void side_name(struct side *s, const char *dir, const char *label)
{
    s->dir = dir;
    s->label = label;
    snprintf(s->kind, sizeof s->kind, "sweep");
}

/* Fill l for the n_rates rates (rates[k]) from sweep sw's steps and
 * records. Returns 0, or -1 with the reason in err; rate_load_free either
 * way. */
static int rate_load(const struct report_sweep *sw, const char *dir, const double *rates,
                     size_t n_rates, const char *label, struct rate_load *l, char *err,
                     size_t errlen)
{
    l->n_rates = n_rates;
    l->n_steps = sw->n_steps;
    l->rate = ll_calloc(n_rates + 1, sizeof *l->rate);
    l->step = ll_calloc(sw->n_steps + 1, sizeof *l->step);
    l->rate_of = ll_calloc(sw->n_steps + 1, sizeof *l->rate_of);
    for (size_t i = 0; i < sw->n_steps; i++) {
        const struct sweep_step *st = &sw->steps[i];
        l->rate_of[i] = -1;
        if (!step_measured(st))
            continue;
        for (size_t k = 0; k < n_rates; k++) {
            if (same_rate(st->f.offered_rps, rates[k])) {
                l->rate_of[i] = (int)k;
                side_facts_add(&l->rate[k], st, &sw->set);
                side_facts_add(&l->step[i], st, &sw->set);
                side_facts_end(&l->step[i]);
                side_name(&l->step[i], dir, label);
                break;
            }
        }
    }
    for (size_t k = 0; k < n_rates; k++) {
        side_facts_end(&l->rate[k]);
        side_name(&l->rate[k], dir, label);
    }
    struct route rt = {sw, l->rate, l->step, l->rate_of};
    char path[4200];
    snprintf(path, sizeof path, "%s/requests.jsonl", dir);
    int rc = record_read_file(path, 0, on_sweep_record, &rt, err, errlen);
    for (size_t k = 0; k < n_rates; k++)
        cmp_side_finish(&l->rate[k]);
    for (size_t i = 0; i < sw->n_steps; i++)
        cmp_side_finish(&l->step[i]);
    return rc == 0 ? 0 : -1;
}

/* The step sides of rate k into out (at most max); returns how many. */
static size_t rate_runs(const struct rate_load *l, size_t k, const struct side **out, size_t max)
{
    size_t n = 0;
    for (size_t i = 0; i < l->n_steps && n < max; i++)
        if (l->rate_of[i] == (int)k)
            out[n++] = &l->step[i];
    return n;
}

static void rate_load_free(struct rate_load *l)
{
    for (size_t k = 0; k < l->n_rates; k++)
        cmp_side_free(&l->rate[k]);
    for (size_t i = 0; i < l->n_steps; i++)
        cmp_side_free(&l->step[i]);
    free(l->rate);
    free(l->step);
    free(l->rate_of);
}

/* ---- the terminal -------------------------------------------------------- */

static const char *ms_text(double ns, char *buf, size_t len)
{
    if (!isfinite(ns))
        snprintf(buf, len, "-");
    else
        snprintf(buf, len, "%.1fms", ns / 1e6);
    return buf;
}

static const char *num_text(double v, const char *fmt, double scale, char *buf, size_t len)
{
    if (!isfinite(v))
        snprintf(buf, len, "-");
    else
        snprintf(buf, len, fmt, v * scale);
    return buf;
}

/* The curves side by side at every offered rate of either. */
static void print_curves(FILE *f, const struct report_sweep *b, const struct report_sweep *c)
{
    fprintf(f, "\n%-10s %10s %10s  %10s %10s  %10s %10s  %9s %9s\n", "offered", "TTFT p99", "",
            "TPOT p99", "", "goodput", "", "attain.", "");
    fprintf(f, "%-10s %10s %10s  %10s %10s  %10s %10s  %9s %9s\n", "req/s", "baseline", "candidate",
            "baseline", "candidate", "baseline", "candidate", "baseline", "candidate");
    size_t i = 0, j = 0;
    while (i < b->n_points || j < c->n_points) {
        const struct sweep_point *p = NULL, *q = NULL;
        double rate;
        if (j >= c->n_points ||
            (i < b->n_points && b->points[i].offered_rps < c->points[j].offered_rps &&
             !same_rate(b->points[i].offered_rps, c->points[j].offered_rps))) {
            p = &b->points[i++];
            rate = p->offered_rps;
        } else if (i >= b->n_points ||
                   (!same_rate(b->points[i].offered_rps, c->points[j].offered_rps) &&
                    c->points[j].offered_rps < b->points[i].offered_rps)) {
            q = &c->points[j++];
            rate = q->offered_rps;
        } else {
            p = &b->points[i++];
            q = &c->points[j++];
            rate = p->offered_rps;
        }
        char t[8][32];
        fprintf(f, "%-10.4g %10s %10s  %10s %10s  %10s %10s  %9s %9s\n", rate,
                ms_text(p ? p->ttft_p99_ms * 1e6 : NAN, t[0], sizeof t[0]),
                ms_text(q ? q->ttft_p99_ms * 1e6 : NAN, t[1], sizeof t[1]),
                ms_text(p ? p->tpot_p99_ms * 1e6 : NAN, t[2], sizeof t[2]),
                ms_text(q ? q->tpot_p99_ms * 1e6 : NAN, t[3], sizeof t[3]),
                num_text(p ? p->goodput_rps : NAN, "%.2f/s", 1, t[4], sizeof t[4]),
                num_text(q ? q->goodput_rps : NAN, "%.2f/s", 1, t[5], sizeof t[5]),
                num_text(p ? p->attainment : NAN, "%.1f%%", 100, t[6], sizeof t[6]),
                num_text(q ? q->attainment : NAN, "%.1f%%", 100, t[7], sizeof t[7]));
    }
}

/* ---- the command's sweep half -------------------------------------------- */

/* Side s's object in compare.json: who it is and how it ended
 * (cmp_side_json), then its sweep's capacity, knee and curve. */
static json_t *sweep_side_json(const struct side *s, const struct report_sweep *sw)
{
    struct bracket cap = capacity_of(sw), knee = knee_of(sw);
    json_t *o = cmp_side_json(s);
    json_object_set_new(o, "capacity", bracket_json(&cap));
    json_object_set_new(o, "knee", bracket_json(&knee));
    json_object_set_new(o, "curve", curve_json(sw));
    return o;
}

/* The relative difference of two bracketed figures, c against b: the
 * values' (c / b - 1), and as its interval the extremes the brackets
 * allow, c.lo / b.hi - 1 to c.hi / b.lo - 1 (an open end, INFINITY,
 * makes the interval unbounded on that side). The interval excludes 0
 * exactly when the brackets do not overlap (bracket_verdict). Not
 * computed (ok 0) when a side has no figure, or the baseline's is 0: a
 * capacity of 0 has no relative change. */
static struct cmp_diff bracket_diff(const struct bracket *b, const struct bracket *c)
{
    struct cmp_diff d = {0};
    if (!b->known || !c->known || !(b->value > 0) || !(b->lo > 0))
        return d;
    d.ok = 1;
    d.diff = c->value / b->value - 1;
    d.lo = isfinite(b->hi) ? c->lo / b->hi - 1 : -1;
    d.hi = isfinite(c->hi) ? c->hi / b->lo - 1 : INFINITY;
    /* Brackets apart on short steps are not bounds: the interval is
     * unbounded, so --fail-on finds its gate inconclusive, never failed,
     * on them (overlapping brackets never fail a gate: their interval
     * holds 0). */
    if ((b->short_steps || c->short_steps) && brackets_apart(b, c)) {
        d.lo = -1;
        d.hi = INFINITY;
    }
    return d;
}

/* The SLO capacity and the knee of c against b as rows of the table
 * (their names are --fail-on's: "capacity", "knee"), into rows[0..2). */
static void figure_rows(const struct report_sweep *b, const struct report_sweep *c,
                        struct row *rows)
{
    struct bracket x[2][2] = {{capacity_of(b), capacity_of(c)}, {knee_of(b), knee_of(c)}};
    static const char *const names[2] = {"capacity", "knee"};
    static const char *const titles[2] = {"SLO capacity", "knee"};
    for (int i = 0; i < 2; i++) {
        struct row *r = &rows[i];
        memset(r, 0, sizeof *r);
        snprintf(r->name, sizeof r->name, "%s", names[i]);
        snprintf(r->title, sizeof r->title, "%s", titles[i]);
        r->unit = U_RPS;
        r->dir = CMP_HIGHER_BETTER;
        r->base = x[i][0].known ? x[i][0].value : NAN;
        r->cand = x[i][1].known ? x[i][1].value : NAN;
        r->d = bracket_diff(&x[i][0], &x[i][1]);
        r->method = "brackets";
        r->verdict = bracket_verdict(&x[i][0], &x[i][1]);
        r->same_why = r->verdict == CMP_SAME ? bracket_same_why(&x[i][0], &x[i][1]) : NULL;
    }
}

static json_t *verdict_json(const struct row *r)
{
    json_t *o = json_object();
    json_object_set_new(o, "verdict", json_string(cmp_verdict_name(r->verdict)));
    json_object_set_new(o, "same_because",
                        r->verdict == CMP_SAME ? json_string(r->same_why) : json_null());
    json_t *d = json_object();
    json_object_set_new(d, "kind", json_string("relative"));
    json_object_set_new(d, "value", r->d.ok ? num_or_null(r->d.diff) : json_null());
    json_object_set_new(d, "lo", r->d.ok ? num_or_null(r->d.lo) : json_null());
    json_object_set_new(d, "hi", r->d.ok ? num_or_null(r->d.hi) : json_null());
    json_object_set_new(o, "diff", d);
    return o;
}

/* The sides' sweeps, loaded by cmp_sweeps_load before anything is
 * written, used and freed by cmp_sweeps. */
static struct report_sweep sw[MAX_SIDES];

void cmp_sweeps_load(const struct side *sides, int nd)
{
    for (int i = 0; i < nd; i++) {
        if (report_sweep_load(sides[i].dir, &sw[i]) != 0)
            exit(LL_EXIT_USAGE); /* the one line that says why is out */
    }
}

int cmp_sweeps(struct side *sides, int nd, const struct cmp_opts *o, const char *outdir)
{
    json_t *doc = json_object();
    json_object_set_new(doc, "schema", json_string("llmload.compare/1"));
    json_object_set_new(doc, "version", json_string(LL_VERSION));
    json_object_set_new(doc, "kind", json_string("sweep"));
    json_object_set_new(doc, "bootstrap", json_integer(o->resamples));
    json_object_set_new(doc, "confidence", json_real(0.95));
    json_object_set_new(doc, "min_effect", json_real(o->min_effect));
    json_object_set_new(doc, "baseline", sweep_side_json(&sides[0], &sw[0]));
    cmp_sides_warn(sides, nd);
    json_t *cands = json_array();
    struct row *rows = ll_calloc((size_t)cmp_rows_max(), sizeof *rows);
    int fail = 0, inconclusive = 0;
    for (int i = 1; i < nd; i++) {
        const struct report_sweep *b = &sw[0], *c = &sw[i];
        json_t *jc = sweep_side_json(&sides[i], c);
        json_object_set(jc, "config_differences", o->diffs[i]);
        struct bracket bc = capacity_of(b), cc = capacity_of(c);
        struct bracket bk = knee_of(b), ck = knee_of(c);
        struct row fig[2];
        figure_rows(b, c, fig);
        enum cmp_verdict vc = fig[0].verdict, vk = fig[1].verdict;
        json_object_set_new(jc, "capacity_verdict", verdict_json(&fig[0]));
        json_object_set_new(jc, "knee_verdict", verdict_json(&fig[1]));
        if (!o->quiet) {
            char x[64], y[64];
            printf(
                "\n%s (candidate) vs %s (baseline), sweep, 95%% intervals (block bootstrap %u)\n",
                sides[i].label, sides[0].label, o->resamples);
            printf("%-13s %-34s %-34s %s\n", "", "baseline", "candidate", "verdict");
            printf("%-13s %-34s %-34s %s\n", "SLO capacity", bracket_text(&bc, x, sizeof x),
                   bracket_text(&cc, y, sizeof y), bracket_verdict_text(vc, fig[0].same_why));
            print_capacity_notes(stdout, "baseline", b);
            print_capacity_notes(stdout, "candidate", c);
            printf("%-13s %-34s %-34s %s\n", "knee", bracket_text(&bk, x, sizeof x),
                   bracket_text(&ck, y, sizeof y), bracket_verdict_text(vk, fig[1].same_why));
            print_curves(stdout, b, c);
        }
        /* --fail-on's capacity and knee thresholds, once per candidate. */
        json_object_set_new(jc, "fail_on",
                            cmp_gates(o, &sides[i], NAN, fig, 2, &fail, &inconclusive));
        /* The offered rates both ran (not the recovery step's), with a
         * valid step on each side. */
        double *rates = ll_calloc(b->n_points + 1, sizeof *rates);
        size_t nr = 0;
        for (size_t p = 0; p < b->n_points; p++) {
            for (size_t q = 0; q < c->n_points; q++) {
                if (same_rate(b->points[p].offered_rps, c->points[q].offered_rps) &&
                    !b->points[p].unknown && !c->points[q].unknown &&
                    rate_measured(b, b->points[p].offered_rps) &&
                    rate_measured(c, b->points[p].offered_rps)) {
                    rates[nr++] = b->points[p].offered_rps;
                    break;
                }
            }
        }
        struct rate_load lb = {0}, lc = {0};
        char err[1024];
        if (rate_load(b, sides[0].dir, rates, nr, sides[0].label, &lb, err, sizeof err) != 0 ||
            rate_load(c, sides[i].dir, rates, nr, sides[i].label, &lc, err, sizeof err) != 0)
            ll_usage_fail("compare: %s", err);
        struct side *rb = lb.rate, *rc = lc.rate;
        /* An embeddings sweep's rows leave the stream's figures out, as a
         * run's do; each rate's sides carry their sweep's run.json, whose
         * load model says whether the rate rows go per scheduled request
         * (cmp_per_scheduled): a sweep's load steps are open loops. */
        for (size_t k = 0; k < nr; k++) {
            rb[k].no_stream = sides[0].no_stream;
            rc[k].no_stream = sides[i].no_stream;
            rb[k].run = json_incref(sides[0].run);
            rc[k].run = json_incref(sides[i].run);
        }
        for (size_t k = 0; k < lb.n_steps; k++)
            lb.step[k].no_stream = sides[0].no_stream;
        for (size_t k = 0; k < lc.n_steps; k++)
            lc.step[k].no_stream = sides[i].no_stream;
        const struct side **runs_b = ll_calloc(b->n_steps + 1, sizeof *runs_b);
        const struct side **runs_c = ll_calloc(c->n_steps + 1, sizeof *runs_c);
        json_t *jr = json_array();
        size_t per_sched = 0, differ = 0;
        for (size_t k = 0; k < nr; k++) {
            int ps = cmp_per_scheduled(&rb[k], &rc[k]);
            per_sched += ps != 0;
            differ += ps && rb[k].win_scheduled != rc[k].win_scheduled;
            int n = cmp_build_rows(&rb[k], &rc[k], o->resamples, CMP_SEED, o->min_effect,
                                   o->kind_wanted, rows);
            if (n < 0) {
                ll_errorf("compare: out of memory");
                exit(LL_EXIT_RUNTIME);
            }
            /* The rate's repeats: the between-run variation, where wider. */
            cmp_rows_between(rows, n, runs_b, rate_runs(&lb, k, runs_b, b->n_steps), runs_c,
                             rate_runs(&lc, k, runs_c, c->n_steps), o->min_effect);
            json_t *jk = json_object();
            json_object_set_new(jk, "offered_rps", json_real(rates[k]));
            json_object_set_new(jk, "rates_per_scheduled", json_boolean(ps));
            json_t *a = json_array();
            for (int r = 0; r < n; r++)
                json_array_append_new(a, cmp_row_json(&rows[r]));
            json_object_set_new(jk, "rows", a);
            if (!o->quiet) {
                printf("\nat %.4g req/s offered:", rates[k]);
                cmp_print_table(stdout, &rb[k], &rc[k], rows, n, o->resamples);
            }
            json_object_set_new(jk, "fail_on",
                                cmp_gates(o, &sides[i], rates[k], rows, n, &fail, &inconclusive));
            json_array_append_new(jr, jk);
        }
        if (differ)
            fprintf(stderr,
                    "llmload: compare: note: open loops: at each rate the achieved rate is judged "
                    "per scheduled request, goodput and output tok/s per second within an "
                    "interval that spans both (%s and %s scheduled other counts at %zu of %zu "
                    "rates: the client's arrivals, not the server's doing)\n",
                    sides[0].label, sides[i].label, differ, per_sched);
        rate_load_free(&lb);
        rate_load_free(&lc);
        free(runs_b);
        free(runs_c);
        if (!o->quiet && nr == 0)
            printf("\nno offered rate in common (with a valid step on each side): no "
                   "per-rate rows\n");
        json_object_set_new(jc, "rates", jr);
        json_array_append_new(cands, jc);
        free(rates);
    }
    free(rows);
    int status = cmp_finish(doc, cands, fail, inconclusive, o->quiet, outdir);
    for (int i = 0; i < nd; i++)
        report_sweep_free(&sw[i]);
    return status;
}
