/* sweep.c: per-step figures, verdicts, stop conditions and findings of a
 * sweep (see sweep.h; the rules in words are in docs/sweep.md). */
#include "sweep/sweep.h"

#include <inttypes.h>
#include <math.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

#include "measure/verdict.h"
#include "sweep/fit.h"
#include "util/util.h"

const double sweep_pcts[SWEEP_NPCT] = {50, 90, 95, 99, 99.9, 100};
const char *const sweep_pct_keys[SWEEP_NPCT] = {"p50", "p90", "p95", "p99", "p99_9", "max"};

void sweep_settings_init(struct sweep_settings *s)
{
    memset(s, 0, sizeof *s);
    s->attainment = SWEEP_DEFAULT_ATTAINMENT;
    s->max_error_rate = SWEEP_DEFAULT_MAX_ERROR_RATE;
    s->headroom = SWEEP_DEFAULT_HEADROOM;
    s->replicas = 1;
    s->lateness_tolerance = VERDICT_TOLERANCE_DEFAULT;
    s->min_hold_factor = SWEEP_DEFAULT_MIN_HOLD_FACTOR;
}

/* ---- one step ---------------------------------------------------------- */

void sweep_step_init(struct sweep_step *s)
{
    memset(s, 0, sizeof *s);
    stats_init(&s->stats);
    s->ttft_h1 = hist_new();
    s->ttft_h2 = hist_new();
    s->f.lateness = hist_new();
    s->recovery.first_miss_ns = s->recovery.last_miss_ns = LL_NO_TIME;
    s->recovery.back_ns = s->recovery.recovery_ns = LL_NO_TIME;
    s->backlog_at_switch = NAN;
    sweep_server_clear(&s->f.server);
}

void sweep_server_clear(struct sweep_server *srv)
{
    memset(srv, 0, sizeof *srv);
    srv->waiting_mean = srv->waiting_max = NAN;
    srv->running_mean = srv->running_max = NAN;
    srv->kv_mean = srv->kv_max = NAN;
    srv->preemptions = srv->generation_tokens = srv->prompt_tokens = NAN;
    srv->ttft_p50_s = srv->ttft_p99_s = NAN;
}

static int in_window(const struct sweep_facts *f, uint64_t t_ns)
{
    return t_ns != LL_NO_TIME && t_ns >= f->warmup_ns && t_ns < f->duration_ns;
}

/* Output tokens of r received inside [a, b] (ns since the step's start):
 * the first at first_ns, the rest spread evenly over (first_ns, last_ns]. */
static double tokens_in_span(const struct record *r, uint64_t a, uint64_t b)
{
    if (r->output_tokens == 0 || r->first_ns == LL_NO_TIME)
        return 0;
    double got = r->first_ns >= a && r->first_ns <= b ? 1 : 0;
    if (r->output_tokens < 2)
        return got;
    uint64_t lo = r->first_ns, hi = r->last_ns;
    double rest = (double)(r->output_tokens - 1);
    if (hi == LL_NO_TIME || hi <= lo)
        return got + (lo >= a && lo <= b ? rest : 0);
    uint64_t from = LL_MAX(lo, a), to = LL_MIN(hi, b);
    if (to > from)
        got += rest * (double)(to - from) / (double)(hi - lo);
    return got;
}

void sweep_step_free(struct sweep_step *s)
{
    stats_free(&s->stats);
    hist_free(s->ttft_h1);
    hist_free(s->ttft_h2);
    hist_free(s->f.lateness);
    free(s->f.series);
    free(s->met_sched_ns);
    free(s->met);
    for (size_t k = 0; s->classes && k < s->f.n_classes; k++)
        stats_free(&s->classes[k].stats);
    free(s->classes);
    free(s->f.classes);
    memset(s, 0, sizeof *s);
}

void sweep_step_classes_init(struct sweep_step *s, size_t n)
{
    if (n == 0 || n > SWEEP_MAX_CLASSES || s->f.n_classes) {
        ll_errorf("sweep_step_classes_init: bad class count %zu", n);
        abort();
    }
    s->f.classes = ll_calloc(n, sizeof *s->f.classes);
    s->classes = ll_calloc(n, sizeof *s->classes);
    s->f.n_classes = n;
    for (size_t k = 0; k < n; k++) {
        stats_init(&s->classes[k].stats);
        s->classes[k].attainment = NAN;
    }
}

int sweep_step_class_find(const struct sweep_step *s, const char *name)
{
    if (!name)
        return -1;
    for (size_t k = 0; k < s->f.n_classes; k++)
        if (strcmp(s->f.classes[k].name, name) == 0)
            return (int)k;
    return -1;
}

/* The SLO that applies to class k of s: its own, else the sweep's. */
static const struct slo *class_slo(const struct sweep_step *s, size_t k,
                                   const struct sweep_settings *set)
{
    return slo_or(&s->f.classes[k].own_slo, &set->slo);
}

/* Count r towards class k of s, as sweep_step_add_record counts the step. */
static void class_add_record(struct sweep_step *s, size_t k, const struct record *r,
                             const struct sweep_settings *set)
{
    struct sweep_class *c = &s->classes[k];
    const struct slo *slo = class_slo(s, k, set);
    int have = slo_is_set(slo);
    if (r->kind == REC_OK && in_window(&s->f, r->end_ns)) {
        c->ok_ended_in_window++;
        if (!have || slo_met(slo, r))
            c->met_ended_in_window++;
    }
    if (r->warmup || r->sched_ns < s->f.warmup_ns)
        return;
    stats_add_record(&c->stats, r);
    if (have && slo_met(slo, r))
        c->stats.slo_met++;
    if (r->sent_ns != LL_NO_TIME && r->sent_ns <= s->f.duration_ns)
        c->sent_in_window++;
}

void sweep_step_add_record(struct sweep_step *s, const struct record *r,
                           const struct sweep_settings *set)
{
    const struct sweep_facts *f = &s->f;
    if (f->n_classes) {
        int k = sweep_step_class_find(s, r->cls);
        if (k >= 0)
            class_add_record(s, (size_t)k, r, set);
    }
    /* Rates count what the server finished inside the window, whichever
     * request it was: completions, goodput and tokens all flatten at
     * capacity instead of echoing the offered load (docs/metrics.md). */
    if (r->kind == REC_OK && in_window(f, r->end_ns)) {
        s->ok_ended_in_window++;
        if (!slo_is_set(&set->slo) || slo_met(&set->slo, r))
            s->met_ended_in_window++;
        s->prompt_tokens_ended += r->prompt_tokens_server >= 0 ? (uint64_t)r->prompt_tokens_server
                                                               : r->prompt_tokens;
        s->output_tokens_ended += r->output_tokens;
    }
    if (f->server.has_span)
        s->client_tokens_in_span += tokens_in_span(r, f->server.span_from_ns,
                                                   f->server.span_to_ns);
    if (r->warmup || r->sched_ns < f->warmup_ns)
        return;
    stats_add_record(&s->stats, r);
    int met;
    if (slo_is_set(&set->slo)) {
        met = slo_met(&set->slo, r);
        if (met)
            s->stats.slo_met++;
    } else {
        met = r->kind == REC_OK;
    }
    if (r->kind == REC_OK && r->first_ns != LL_NO_TIME && r->first_ns >= r->sched_ns) {
        uint64_t half = f->warmup_ns + (f->duration_ns - f->warmup_ns) / 2;
        hist_record(r->sched_ns >= half ? s->ttft_h2 : s->ttft_h1, r->first_ns - r->sched_ns);
    }
    if (r->sent_ns != LL_NO_TIME && r->sent_ns <= f->duration_ns)
        s->sent_in_window++;
    /* A request the client chose to cancel says nothing about whether
     * latency recovered. */
    if (r->kind == REC_CANCELLED)
        return;
    if (s->n_met == s->cap_met) {
        s->cap_met = s->cap_met ? s->cap_met * 2 : 256;
        s->met_sched_ns = ll_realloc(s->met_sched_ns, s->cap_met * sizeof *s->met_sched_ns);
        s->met = ll_realloc(s->met, s->cap_met * sizeof *s->met);
    }
    s->met_sched_ns[s->n_met] = r->sched_ns;
    s->met[s->n_met] = (unsigned char)met;
    s->n_met++;
}

static void fill_pcts(const struct hist *h, uint64_t *out)
{
    int any = hist_count(h) > 0;
    for (int i = 0; i < SWEEP_NPCT; i++)
        out[i] = any ? hist_percentile(h, sweep_pcts[i]) : 0;
}

double sweep_min_hold_factor(const struct sweep_settings *set)
{
    return set->min_hold_factor > 0 ? set->min_hold_factor : SWEEP_DEFAULT_MIN_HOLD_FACTOR;
}

static double window_s(const struct sweep_facts *f)
{
    uint64_t w = f->window_ns ? f->window_ns
                 : f->duration_ns > f->warmup_ns ? f->duration_ns - f->warmup_ns : 0;
    return w ? (double)w / 1e9 : 1e-9;
}

/* The in-flight count's fitted change over the window: the least-squares
 * slope of the samples inside the window times the window's length. The
 * warm-up should cover the fill-up at the step's start (about one request
 * duration); docs/sweep.md says so. */
static double inflight_growth(const struct sweep_facts *f)
{
    size_t n = 0;
    double *x = ll_malloc((f->n_series + 1) * sizeof *x);
    double *y = ll_malloc((f->n_series + 1) * sizeof *y);
    for (size_t i = 0; i < f->n_series; i++) {
        if (f->series[i].t_ns < f->warmup_ns || f->series[i].t_ns > f->duration_ns)
            continue;
        x[n] = (double)f->series[i].t_ns / 1e9;
        y[n] = f->series[i].inflight;
        n++;
    }
    double g = fit_slope(x, y, n) * window_s(f);
    free(x);
    free(y);
    return g;
}

/* The derived figures of class k of s (the step's steadiness known), w
 * the window in s. The same rules as the step's, against the class's SLO. */
static void class_finish(struct sweep_step *s, size_t k, const struct sweep_settings *set,
                         double w)
{
    struct sweep_class *c = &s->classes[k];
    struct stats *st = &c->stats;
    uint64_t n_window = st->completed;
    st->scheduled = s->f.classes[k].scheduled ? s->f.classes[k].scheduled : n_window;
    st->sent = c->sent_in_window;
    c->slo = *class_slo(s, k, set);
    c->have_slo = slo_is_set(&c->slo);
    c->achieved_rps = (double)c->sent_in_window / w;
    c->completed_rps = (double)c->ok_ended_in_window / w;
    c->goodput_rps = (double)c->met_ended_in_window / w;
    c->attainment = c->have_slo && st->scheduled ? (double)st->slo_met / (double)st->scheduled
                                                 : NAN;
    c->error_rate = n_window ? (double)stats_failed(st) / (double)n_window : 0;
    fill_pcts(st->ttft, c->ttft_ns);
    fill_pcts(st->tpot, c->tpot_ns);
    fill_pcts(st->e2e, c->e2e_ns);
    c->fail_reason[0] = '\0';
    if (st->scheduled == 0) {
        /* no request of the class in the window: nothing failed */
    } else if (c->have_slo && c->attainment < set->attainment) {
        snprintf(c->fail_reason, sizeof c->fail_reason, "attainment %.1f%% < %.4g%%",
                 100 * c->attainment, 100 * set->attainment);
    } else if (!c->have_slo && c->error_rate > set->max_error_rate) {
        snprintf(c->fail_reason, sizeof c->fail_reason, "error rate %.1f%% > %.4g%%",
                 100 * c->error_rate, 100 * set->max_error_rate);
    } else if (!s->steady) {
        snprintf(c->fail_reason, sizeof c->fail_reason, "not steady: %.140s", s->steady_reason);
    }
    c->slo_pass = c->fail_reason[0] == '\0';
}

void sweep_step_finish(struct sweep_step *s, const struct sweep_settings *set)
{
    const struct sweep_facts *f = &s->f;
    struct stats *st = &s->stats;
    double w = window_s(f);
    uint64_t n_window = st->completed;
    st->scheduled = f->scheduled ? f->scheduled : n_window;
    st->sent = s->sent_in_window;
    int have_slo = slo_is_set(&set->slo);

    s->achieved_rps = (double)s->sent_in_window / w;
    s->completed_rps = (double)s->ok_ended_in_window / w;
    s->goodput_rps = (double)s->met_ended_in_window / w;
    s->attainment = have_slo ? (st->scheduled ? (double)st->slo_met / (double)st->scheduled : 0)
                             : NAN;
    s->input_tps = (double)s->prompt_tokens_ended / w;
    s->output_tps = (double)s->output_tokens_ended / w;
    s->error_rate = n_window ? (double)stats_failed(st) / (double)n_window : 0;
    fill_pcts(st->ttft, s->ttft_ns);
    fill_pcts(st->tpot, s->tpot_ns);
    fill_pcts(st->itl_req, s->itl_ns);
    fill_pcts(st->e2e, s->e2e_ns);
    fill_pcts(f->lateness, s->lateness_ns);
    /* The hold rule (SWEEP_DEFAULT_MIN_HOLD_FACTOR), for load steps. */
    s->hold_factor =
        hist_count(st->e2e) && s->e2e_ns[3] > 0 ? window_s(f) / ((double)s->e2e_ns[3] / 1e9) : NAN;
    s->short_hold =
        !f->recovery && isfinite(s->hold_factor) && s->hold_factor < sweep_min_hold_factor(set);
    /* `run`'s self-check, per step (docs/metrics.md). */
    struct verdict_input v = {.lateness = f->lateness, .tolerance = set->lateness_tolerance};
    verdict_latencies(&v, st);
    struct verdict vd;
    s->invalid = verdict_judge(&v, &vd);
    snprintf(s->invalid_reason, sizeof s->invalid_reason, "%.159s", vd.reason);
    snprintf(s->lateness_warning, sizeof s->lateness_warning, "%.159s", vd.warning);
    s->ttft_p99_h1_ns = hist_count(s->ttft_h1) ? hist_percentile(s->ttft_h1, 99) : 0;
    s->ttft_p99_h2_ns = hist_count(s->ttft_h2) ? hist_percentile(s->ttft_h2, 99) : 0;
    s->inflight_growth = inflight_growth(f);

    uint64_t n = hist_count(st->ttft), lo = 0, hi = 0;
    s->ci_valid = 0;
    s->ttft_p99_ci_lo_ns = s->ttft_p99_ci_hi_ns = 0;
    if (n > 0 && fit_quantile_ci_ranks(n, 0.99, 0.95, &lo, &hi) == 0 && lo > 0) {
        s->ci_valid = 1;
        s->ttft_p99_ci_lo_ns = hist_percentile(st->ttft, 100.0 * (double)lo / (double)n);
        s->ttft_p99_ci_hi_ns = hi ? hist_percentile(st->ttft, 100.0 * (double)hi / (double)n) : 0;
    }

    sweep_tail_test(s->ttft_h1, s->ttft_h2, &s->tail);
    s->steady = sweep_steady_verdict(&s->tail, s->inflight_growth, f->inflight_mean,
                                     s->steady_reason, sizeof s->steady_reason);
    s->fail_reason[0] = '\0';
    if (have_slo && s->attainment < set->attainment) {
        snprintf(s->fail_reason, sizeof s->fail_reason, "attainment %.1f%% < %.4g%%",
                 100 * s->attainment, 100 * set->attainment);
    } else if (!have_slo && s->error_rate > set->max_error_rate) {
        snprintf(s->fail_reason, sizeof s->fail_reason, "error rate %.1f%% > %.4g%%",
                 100 * s->error_rate, 100 * set->max_error_rate);
    } else if (!s->steady) {
        snprintf(s->fail_reason, sizeof s->fail_reason, "not steady: %.140s", s->steady_reason);
    }
    s->slo_pass = s->fail_reason[0] == '\0';
    for (size_t k = 0; k < f->n_classes; k++)
        class_finish(s, k, set, w);
    s->cost_per_mtok = sweep_cost_per_mtok(set->cost_per_hour, set->replicas, s->output_tps);
    if (f->recovery) {
        sweep_recovery_measure(s->met_sched_ns, s->met, s->n_met, f->warmup_ns, f->duration_ns,
                               SWEEP_RECOVERY_TAIL_NS, &s->recovery);
        s->backlog_at_switch = NAN;
        for (size_t i = 0; f->overload_rps > 0 && i < f->n_series; i++)
            if (f->series[i].t_ns <= f->warmup_ns)
                s->backlog_at_switch = f->series[i].inflight;
    }
}

/* ---- pure parts -------------------------------------------------------- */

/* Requests of h above v: whole buckets whose least value is over v (a
 * bucket that holds v counts as not above; the bucket width is under 1%). */
static uint64_t count_above(const struct hist *h, uint64_t v)
{
    size_t cur = 0;
    uint64_t lo, hi, n, above = 0;
    while (hist_iter_next(h, &cur, &lo, &hi, &n))
        if (lo > v)
            above += n;
    return above;
}

void sweep_tail_test(const struct hist *h1, const struct hist *h2, struct sweep_tail_test *out)
{
    memset(out, 0, sizeof *out);
    out->p_value = 1;
    uint64_t n1 = hist_count(h1), n2 = hist_count(h2), m = LL_MIN(n1, n2);
    if (m < 2 * SWEEP_TAIL_EXCEED)
        return;
    out->judged = 1;
    out->q = LL_MIN(0.99, 1.0 - (double)SWEEP_TAIL_EXCEED / (double)m);
    struct hist *both = hist_new();
    hist_merge(both, h1);
    hist_merge(both, h2);
    out->threshold_ns = hist_percentile(both, 100 * out->q);
    hist_free(both);
    out->h1_ns = hist_percentile(h1, 100 * out->q);
    out->h2_ns = hist_percentile(h2, 100 * out->q);
    out->above1 = count_above(h1, out->threshold_ns);
    out->above2 = count_above(h2, out->threshold_ns);
    out->p_value = fit_hypergeom_upper_tail(n1 + n2, out->above1 + out->above2, n2, out->above2);
    out->rose = out->p_value < SWEEP_TAIL_ALPHA &&
                (double)out->h2_ns > SWEEP_TAIL_GROWTH * (double)out->h1_ns &&
                out->h2_ns - out->h1_ns > SWEEP_TAIL_GROWTH_MIN_NS;
}

int sweep_steady_verdict(const struct sweep_tail_test *tail, double inflight_growth,
                         double inflight_mean, char *reason, size_t len)
{
    char a[16], b[16];
    if (len)
        reason[0] = '\0';
    if (tail->rose) {
        snprintf(reason, len,
                 "TTFT p%.4g rose from %s to %s within the step (%" PRIu64 " of %" PRIu64
                 " over both halves' p%.4g in its second half, p=%.2g)",
                 100 * tail->q, ll_fmt_duration(tail->h1_ns, a, sizeof a),
                 ll_fmt_duration(tail->h2_ns, b, sizeof b), tail->above2,
                 tail->above1 + tail->above2, 100 * tail->q, tail->p_value);
        return 0;
    }
    double limit = LL_MAX(SWEEP_BACKLOG_MIN, SWEEP_BACKLOG_FRACTION * inflight_mean);
    limit = LL_MAX(limit, SWEEP_BACKLOG_NOISE * sqrt(LL_MAX(inflight_mean, 0.0)));
    if (inflight_growth > limit) {
        snprintf(reason, len, "in-flight requests grew by %.1f over the window", inflight_growth);
        return 0;
    }
    return 1;
}

/* Sort (sched, met) pairs by sched: a small insertion-merge via index. */
struct met_pair {
    uint64_t sched_ns;
    unsigned char met;
};

static int cmp_pair(const void *a, const void *b)
{
    const struct met_pair *x = a, *y = b;
    return (x->sched_ns > y->sched_ns) - (x->sched_ns < y->sched_ns);
}

void sweep_recovery_measure(uint64_t *sched_ns, unsigned char *met, size_t n, uint64_t from_ns,
                            uint64_t to_ns, uint64_t min_tail_ns, struct sweep_recovery *out)
{
    out->first_miss_ns = out->last_miss_ns = LL_NO_TIME;
    out->back_ns = out->recovery_ns = LL_NO_TIME;
    if (n > 0) {
        struct met_pair *p = ll_malloc(n * sizeof *p);
        for (size_t i = 0; i < n; i++) {
            p[i].sched_ns = sched_ns[i];
            p[i].met = met[i];
        }
        qsort(p, n, sizeof *p, cmp_pair);
        for (size_t i = 0; i < n; i++) {
            sched_ns[i] = p[i].sched_ns;
            met[i] = p[i].met;
        }
        free(p);
    }
    size_t last = n;
    for (size_t i = 0; i < n; i++) {
        if (met[i])
            continue;
        if (out->first_miss_ns == LL_NO_TIME)
            out->first_miss_ns = sched_ns[i];
        out->last_miss_ns = sched_ns[i];
        last = i;
    }
    if (last == n) {
        out->back_ns = from_ns;
        out->recovery_ns = 0;
        return;
    }
    /* Back at the first request after the last miss, when the window
     * still has min_tail_ns after it (else a miss near the end, or a
     * backlog that outlasts the window, would pass for a recovery). */
    if (last + 1 < n && sched_ns[last + 1] < to_ns && to_ns - sched_ns[last + 1] >= min_tail_ns) {
        out->back_ns = sched_ns[last + 1];
        out->recovery_ns = out->back_ns > from_ns ? out->back_ns - from_ns : 0;
    }
}

double sweep_cost_per_mtok(double cost_per_hour, uint32_t replicas, double output_tps)
{
    if (!(cost_per_hour > 0) || replicas == 0 || !(output_tps > 0))
        return NAN;
    return cost_per_hour * replicas / 3600.0 / output_tps * 1e6;
}

uint32_t sweep_replicas_needed(double forecast_rps, double capacity_rps, double headroom,
                               uint32_t replicas)
{
    if (!(forecast_rps > 0) || !(capacity_rps > 0) || !(headroom > 0) || replicas == 0)
        return 0;
    double per = capacity_rps / replicas * headroom;
    double need = ceil(forecast_rps / per - 1e-9);
    return need > 1e9 ? 1000000000u : (uint32_t)LL_MAX(need, 1.0);
}

/* ---- points, stops, findings ------------------------------------------ */

size_t sweep_points_build(const struct sweep_step *steps, size_t n, struct sweep_point *points)
{
    size_t np = 0;
    double *g = ll_malloc((n + 1) * sizeof *g), *c = ll_malloc((n + 1) * sizeof *c);
    double *a = ll_malloc((n + 1) * sizeof *a), *t = ll_malloc((n + 1) * sizeof *t);
    for (size_t i = 0; i < n; i++) {
        if (steps[i].f.recovery)
            continue;
        int seen = 0;
        for (size_t p = 0; p < np; p++)
            if (points[p].offered_rps == steps[i].f.offered_rps)
                seen = 1;
        if (seen)
            continue;
        struct sweep_point *pt = &points[np++];
        memset(pt, 0, sizeof *pt);
        pt->offered_rps = steps[i].f.offered_rps;
        pt->first_step = i;
        pt->pass = 1;
        pt->steady = 1;
        pt->fail_reason = "";
        pt->unknown = 1;
        double err = 0, otps = 0;
        uint32_t k = 0;
        int rerun_passed = 0;
        for (size_t j = i; j < n; j++) {
            const struct sweep_step *s = &steps[j];
            if (s->f.recovery || s->f.offered_rps != pt->offered_rps)
                continue;
            g[k] = s->goodput_rps;
            c[k] = s->completed_rps;
            a[k] = s->attainment;
            t[k] = (double)s->ttft_ns[3] / 1e6;
            err += s->error_rate;
            otps += s->output_tps;
            /* An INVALID repeat measured the client: it neither passes nor
             * fails the point (docs/sweep.md, "INVALID steps"). */
            if (!s->invalid)
                pt->unknown = 0;
            pt->rerun_steps += (uint32_t)s->f.confirm;
            if (!s->invalid && s->f.confirm) {
                pt->reruns++;
                rerun_passed |= s->slo_pass;
            }
            if (!s->invalid && !s->slo_pass && pt->pass) {
                pt->pass = 0;
                pt->fail_reason = s->fail_reason;
            }
            if (!s->steady)
                pt->steady = 0;
            k++;
        }
        pt->n = k;
        /* Re-run after a failure: one valid re-run that passes outweighs
         * it (the failure is not confirmed); all failing confirm it. */
        if (!pt->pass && pt->reruns) {
            pt->disputed = rerun_passed;
            pt->confirmed_fail = !rerun_passed;
            if (rerun_passed) {
                pt->pass = 1;
                pt->fail_reason = "";
            }
        }
        fit_mean_ci95(g, k, &pt->goodput_rps, &pt->goodput_ci);
        fit_mean_ci95(c, k, &pt->completed_rps, &pt->completed_ci);
        fit_mean_ci95(a, k, &pt->attainment, &pt->attainment_ci);
        fit_mean_ci95(t, k, &pt->ttft_p99_ms, &pt->ttft_p99_ci_ms);
        pt->error_rate = err / k;
        pt->output_tps = otps / k;
    }
    free(g);
    free(c);
    free(a);
    free(t);
    return np;
}

int sweep_stop_check(const struct sweep_point *points, size_t n, const struct sweep_step *steps,
                     const struct sweep_settings *set, char *reason, size_t len)
{
    (void)steps;
    if (n == 0)
        return 0;
    const struct sweep_point *last = &points[n - 1];
    char a[16], b[16];
    if (last->error_rate > set->max_error_rate) {
        snprintf(reason, len, "error rate %.1f%% > %.4g%% at %.4g req/s", 100 * last->error_rate,
                 100 * set->max_error_rate, last->offered_rps);
        return 1;
    }
    if (set->ttft_limit_ns && last->ttft_p99_ms * 1e6 > (double)set->ttft_limit_ns) {
        snprintf(reason, len, "TTFT p99 %s over the safety limit %s at %.4g req/s",
                 ll_fmt_duration((uint64_t)(last->ttft_p99_ms * 1e6), a, sizeof a),
                 ll_fmt_duration(set->ttft_limit_ns, b, sizeof b), last->offered_rps);
        return 1;
    }
    if (n >= 3) {
        double peak = 0, at = 0;
        for (size_t i = 0; i + 2 < n; i++) {
            if (points[i].goodput_rps > peak) {
                peak = points[i].goodput_rps;
                at = points[i].offered_rps;
            }
        }
        if (peak > 0 && points[n - 1].goodput_rps < SWEEP_GOODPUT_FALL * peak &&
            points[n - 2].goodput_rps < SWEEP_GOODPUT_FALL * peak) {
            snprintf(reason, len,
                     "goodput fell below its peak (%.4g req/s at %.4g req/s offered) two steps "
                     "in a row",
                     peak, at);
            return 1;
        }
    }
    if (set->auto_rates && n >= 3 && !last->steady &&
        last->completed_rps < 1.05 * points[n - 3].completed_rps &&
        last->offered_rps >= 1.15 * points[n - 3].offered_rps) {
        snprintf(reason, len, "throughput plateau: %.4g req/s completed at %.4g req/s offered",
                 last->completed_rps, last->offered_rps);
        return 1;
    }
    if (set->auto_rates && set->estimate_rps > 0 && last->offered_rps >= 2.5 * set->estimate_rps) {
        snprintf(reason, len, "offered load reached 250%% of the estimated capacity (%.4g req/s)",
                 set->estimate_rps);
        return 1;
    }
    return 0;
}

/* Whether class name passes at the point of offered rate rps (every
 * repeat passes; a step without the class does not count). *reason gets
 * the first failing repeat's reason. */
static int class_point_pass(const struct sweep_step *steps, size_t n, const char *name,
                            double rps, const char **reason)
{
    *reason = "";
    for (size_t j = 0; j < n; j++) {
        if (steps[j].f.recovery || steps[j].f.offered_rps != rps)
            continue;
        int k = sweep_step_class_find(&steps[j], name);
        if (k >= 0 && !steps[j].invalid && !steps[j].classes[k].slo_pass) {
            *reason = steps[j].classes[k].fail_reason;
            return 0;
        }
    }
    return 1;
}

/* The per-class findings (out->classes), over the points in offered order
 * (ord); the sweep's own capacity is already in out. */
static void class_findings(const struct sweep_step *steps, size_t n,
                           const struct sweep_point *points, const size_t *ord,
                           size_t n_points, struct sweep_findings *out)
{
    const struct sweep_step *first = NULL;
    for (size_t i = 0; i < n && !first; i++)
        if (steps[i].f.n_classes)
            first = &steps[i];
    if (!first)
        return;
    out->n_classes = LL_MIN(first->f.n_classes, (size_t)SWEEP_MAX_CLASSES);
    for (size_t k = 0; k < out->n_classes; k++) {
        struct sweep_class_finding *cf = &out->classes[k];
        cf->name = first->f.classes[k].name;
        cf->slo = first->classes[k].slo;
        cf->have_slo = first->classes[k].have_slo;
        cf->own_slo = slo_is_set(&first->f.classes[k].own_slo);
        cf->next_fail_reason = "";
        size_t first_fail = n_points;
        const char *why = "";
        for (size_t i = 0; i < n_points; i++) {
            if (!class_point_pass(steps, n, cf->name, points[ord[i]].offered_rps, &why)) {
                first_fail = i;
                break;
            }
        }
        if (first_fail > 0 && n_points > 0) {
            cf->capacity_found = 1;
            cf->capacity_rps = points[ord[first_fail - 1]].offered_rps;
        }
        if (first_fail < n_points) {
            cf->next_fails = 1;
            cf->next_fail_rps = points[ord[first_fail]].offered_rps;
            cf->next_fail_reason = why;
        } else {
            cf->none_failed = n_points > 0;
        }
        if (!out->capacity_found)
            continue;
        double rps = points[out->capacity_point].offered_rps, ttft = 0, tpot = 0;
        uint32_t m = 0, mt = 0;
        for (size_t j = 0; j < n; j++) {
            if (steps[j].f.recovery || steps[j].f.offered_rps != rps)
                continue;
            int c = sweep_step_class_find(&steps[j], cf->name);
            if (c < 0 || steps[j].classes[c].stats.by_kind[REC_OK] == 0)
                continue;
            ttft += (double)steps[j].classes[c].ttft_ns[3];
            m++;
            if (hist_count(steps[j].classes[c].stats.tpot)) {
                tpot += (double)steps[j].classes[c].tpot_ns[3];
                mt++;
            }
        }
        if (m) {
            cf->at_capacity = 1;
            cf->ttft_p99_at_capacity_ns = (uint64_t)llround(ttft / m);
            cf->tpot_p99_at_capacity_ns = mt ? (uint64_t)llround(tpot / mt) : 0;
        }
    }
}

void sweep_findings_compute(const struct sweep_step *steps, size_t n,
                            const struct sweep_point *points, size_t n_points,
                            const struct sweep_settings *set, struct sweep_findings *out)
{
    memset(out, 0, sizeof *out);
    out->have_slo = slo_is_set(&set->slo);
    out->next_fail_reason = "";
    out->cost_at_capacity = NAN;
    out->backlog_at_switch = NAN;
    out->recovery.first_miss_ns = out->recovery.last_miss_ns = LL_NO_TIME;
    out->recovery.back_ns = out->recovery.recovery_ns = LL_NO_TIME;

    /* Points in offered order: the capacity is the last passing point
     * below the first failing one. */
    size_t *ord = ll_malloc((n_points + 1) * sizeof *ord);
    for (size_t i = 0; i < n_points; i++)
        ord[i] = i;
    for (size_t i = 1; i < n_points; i++) {
        size_t v = ord[i], j = i;
        while (j > 0 && points[ord[j - 1]].offered_rps > points[v].offered_rps) {
            ord[j] = ord[j - 1];
            j--;
        }
        ord[j] = v;
    }
    /* Unknown points (every repeat INVALID) are left out of the order. */
    size_t n_known = 0;
    for (size_t i = 0; i < n_points; i++) {
        if (!points[ord[i]].unknown) {
            ord[n_known++] = ord[i];
            continue;
        }
        if (out->n_unknown < SWEEP_MAX_UNKNOWN)
            out->unknown_rps[out->n_unknown] = points[ord[i]].offered_rps;
        out->n_unknown++;
    }
    n_points = n_known;
    size_t first_fail = n_points;
    for (size_t i = 0; i < n_points; i++) {
        if (!points[ord[i]].pass) {
            first_fail = i;
            out->slo_missed = 1;
            break;
        }
    }
    if (first_fail > 0 && n_points > 0) {
        const struct sweep_point *cap = &points[ord[first_fail - 1]];
        out->capacity_found = 1;
        out->capacity_rps = cap->offered_rps;
        out->capacity_point = ord[first_fail - 1];
        out->operate_rps = set->headroom * cap->offered_rps;
        out->replicas_needed = sweep_replicas_needed(set->forecast_rps, cap->offered_rps,
                                                     set->headroom, set->replicas);
        out->cost_at_capacity = sweep_cost_per_mtok(set->cost_per_hour, set->replicas,
                                                    cap->output_tps);
    }
    if (first_fail < n_points) {
        out->next_fails = 1;
        out->next_fail_rps = points[ord[first_fail]].offered_rps;
        out->next_fail_reason = points[ord[first_fail]].fail_reason;
        out->next_fail_confirmed = points[ord[first_fail]].confirmed_fail;
        for (size_t i = first_fail + 1; i < n_points; i++)
            if (points[ord[i]].pass)
                out->passed_above_rps = points[ord[i]].offered_rps;
    } else {
        out->none_failed = n_points > 0;
    }
    for (size_t i = 0; i < n_points; i++) {
        if (!points[ord[i]].disputed)
            continue;
        if (out->n_disputed < SWEEP_MAX_UNKNOWN)
            out->disputed_rps[out->n_disputed] = points[ord[i]].offered_rps;
        out->n_disputed++;
    }
    /* With no rate judged there is no finding; where an unknown rate lies
     * between the last pass and the first fail, the capacity is somewhere
     * from one to the other, more coarsely than the steps (the last
     * passing rate is still a true lower bound). */
    out->capacity_unknown = out->n_unknown > 0 && n_points == 0;
    for (size_t i = 0; i < LL_MIN(out->n_unknown, (size_t)SWEEP_MAX_UNKNOWN); i++) {
        double u = out->unknown_rps[i];
        if ((!out->capacity_found || u > out->capacity_rps) &&
            (out->next_fails && u < out->next_fail_rps))
            out->capacity_coarse = 1;
    }
    class_findings(steps, n, points, ord, n_points, out);
    free(ord);

    double *x = ll_malloc((n + 1) * sizeof *x), *y = ll_malloc((n + 1) * sizeof *y);
    size_t m = 0;
    const struct sweep_step *last_loaded = NULL;
    for (size_t i = 0; i < n; i++) {
        if (steps[i].f.recovery) {
            out->have_recovery = 1;
            out->recovery_rps = steps[i].f.offered_rps;
            out->overload_rps = steps[i].f.overload_rps;
            out->switch_ns = steps[i].f.overload_rps > 0 ? steps[i].f.warmup_ns : 0;
            out->backlog_at_switch = steps[i].backlog_at_switch;
            out->recovery = steps[i].recovery;
            continue;
        }
        last_loaded = &steps[i];
        out->n_load_steps++;
        if (steps[i].short_hold) {
            if (out->n_short < SWEEP_MAX_UNKNOWN)
                out->short_rps[out->n_short] = steps[i].f.offered_rps;
            out->n_short++;
            out->n_short_steady += (size_t)(steps[i].steady != 0);
            /* A first failing step that is not steady is overloaded: a
             * longer hold only lets its backlog grow, so its failure does
             * not rest on its length; a passing one's pass, and a steady
             * one's miss, may. */
            double r = steps[i].f.offered_rps;
            if ((out->capacity_found && r == out->capacity_rps) ||
                (out->next_fails && r == out->next_fail_rps && steps[i].steady))
                out->capacity_short = 1;
        }
        if (steps[i].invalid) /* the client's figures, not the server's */
            continue;
        x[m] = steps[i].achieved_rps;
        y[m] = steps[i].completed_rps;
        m++;
    }
    fit_knee(x, y, m, &out->knee);
    free(x);
    free(y);
    if (last_loaded && last_loaded->f.elapsed_ns > last_loaded->f.duration_ns)
        out->drain_ns = last_loaded->f.elapsed_ns - last_loaded->f.duration_ns;
}

/* Append to a bounded buffer. */
static void put(char *buf, size_t len, size_t *at, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));

static void put(char *buf, size_t len, size_t *at, const char *fmt, ...)
{
    if (*at >= len)
        return;
    va_list ap;
    va_start(ap, fmt);
    int k = vsnprintf(buf + *at, len - *at, fmt, ap);
    va_end(ap);
    if (k > 0)
        *at = LL_MIN(len - 1, *at + (size_t)k);
}

/* The end of a capacity line: the step after the capacity that failed
 * (next_fails, at next_rps, for reason), else none_failed. */
static void put_next_step(char *buf, size_t len, size_t *at, int next_fails, double next_rps,
                          const char *reason, const char *none_failed)
{
    if (next_fails)
        put(buf, len, at, "; next step %.4g req/s fails: %s\n", next_rps, reason);
    else
        put(buf, len, at, "; %s\n", none_failed);
}

/* "what: r1, r2, ..." of n rates, of which the first SWEEP_MAX_UNKNOWN are
 * kept in r. */
static void put_rates(char *buf, size_t len, size_t *at, const char *what, const double *r,
                      size_t n)
{
    put(buf, len, at, "%s: ", what);
    for (size_t i = 0; i < LL_MIN(n, (size_t)SWEEP_MAX_UNKNOWN); i++)
        put(buf, len, at, "%s%.4g", i ? ", " : "", r[i]);
    if (n > SWEEP_MAX_UNKNOWN)
        put(buf, len, at, ", ...");
}

/* The capacity line of the findings text. */
static void put_capacity(const struct sweep_findings *fd, const struct sweep_settings *set,
                         char *buf, size_t len, size_t *at)
{
    char slo[96] = "";
    if (fd->have_slo)
        slo_format(&set->slo, slo, sizeof slo);
    const char *what = fd->have_slo ? "SLO capacity" : "capacity (no SLO: steady, errors in limit)";
    if (fd->capacity_found) {
        put(buf, len, at, "%s: %.4g req/s", what, fd->capacity_rps);
        if (fd->have_slo)
            put(buf, len, at, " (%s at %.4g%% attainment, steady)", slo, 100 * set->attainment);
        put_next_step(buf, len, at, fd->next_fails, fd->next_fail_rps, fd->next_fail_reason,
                      "no step failed: the capacity is at least this");
    } else if (fd->next_fails) {
        put(buf, len, at, "%s: not found: the lowest step %.4g req/s already fails: %s\n",
            what, fd->next_fail_rps, fd->next_fail_reason);
    } else if (fd->n_unknown) {
        put(buf, len, at, "%s: not found: no step could be judged\n", what);
    } else {
        put(buf, len, at, "%s: not found (no steps)\n", what);
    }
    if (fd->n_disputed) {
        put_rates(buf, len, at, "disputed", fd->disputed_rps, fd->n_disputed);
        put(buf, len, at,
            " req/s failed below a passing rate and passed when re-run (--confirm): "
            "counted as passing\n");
    }
    if (fd->next_fails && fd->passed_above_rps > 0)
        put(buf, len, at,
            "not monotonic: %.4g req/s passed above the failing %.4g req/s; the capacity "
            "stops at the first failure%s\n",
            fd->passed_above_rps, fd->next_fail_rps,
            fd->next_fail_confirmed ? " (confirmed by a re-run)" : " (not re-run)");
    if (fd->n_unknown) {
        put_rates(buf, len, at, "not judged", fd->unknown_rps, fd->n_unknown);
        put(buf, len, at,
            " req/s (INVALID: the generator's own lateness moved their latencies); the "
            "capacity and the knee rest on the other steps\n");
        if (fd->capacity_unknown)
            put(buf, len, at,
                "capacity unknown: no step could be judged; rerun on a quieter machine or "
                "with more --threads (the sweep is INVALID)\n");
        else if (fd->capacity_coarse)
            put(buf, len, at,
                "the capacity lies between %.4g and %.4g req/s: a step between them could "
                "not be judged\n",
                fd->capacity_found ? fd->capacity_rps : 0.0, fd->next_fail_rps);
    }
}

/* The knee, headroom, forecast and cost lines of the findings text. */
static void put_sizing(const struct sweep_findings *fd, const struct sweep_settings *set,
                       char *buf, size_t len, size_t *at)
{
    if (fd->knee.found)
        put(buf, len, at,
            "saturation knee: %.3g req/s offered (completions follow at slope %.2f below it, "
            "%.2f above; %.3g req/s at the knee)\n",
            fd->knee.knee_x, fabs(fd->knee.slope_below) < 0.005 ? 0 : fd->knee.slope_below,
            fabs(fd->knee.slope_above) < 0.005 ? 0 : fd->knee.slope_above, fd->knee.y_at_knee);
    else
        put(buf, len, at, "saturation knee: not found (completions kept following offered load)\n");
    if (fd->capacity_found)
        put(buf, len, at, "headroom: operate at <= %.3g req/s (%.0f%% of the %s)\n",
            fd->operate_rps, 100 * set->headroom, fd->have_slo ? "SLO capacity" : "capacity");
    if (set->forecast_rps > 0) {
        if (fd->replicas_needed)
            put(buf, len, at,
                "forecast: %.4g req/s needs %u replica%s (each at %.0f%% of its measured "
                "capacity %.3g req/s)\n",
                set->forecast_rps, fd->replicas_needed, fd->replicas_needed == 1 ? "" : "s",
                100 * set->headroom, fd->capacity_rps / set->replicas);
        else
            put(buf, len, at, "forecast: %.4g req/s: no capacity found to size it\n",
                set->forecast_rps);
    }
    if (set->cost_per_hour > 0 && isfinite(fd->cost_at_capacity))
        put(buf, len, at, "cost: %.4g per million output tokens at the capacity (%.4g/h x %u)\n",
            fd->cost_at_capacity, set->cost_per_hour, set->replicas);
}

/* The recovery line of the findings text (a recovery step ran). */
static void put_recovery(const struct sweep_findings *fd, char *buf, size_t len, size_t *at)
{
    const struct sweep_recovery *rc = &fd->recovery;
    char a[16], b[16];
    put(buf, len, at, "recovery: ");
    if (fd->overload_rps > 0) {
        put(buf, len, at, "after %s at %.3g req/s", ll_fmt_duration(fd->switch_ns, a, sizeof a),
            fd->overload_rps);
        if (isfinite(fd->backlog_at_switch))
            put(buf, len, at, " (%.0f in flight at the switch)", fd->backlog_at_switch);
        put(buf, len, at, ", then %.3g req/s: ", fd->recovery_rps);
    } else {
        put(buf, len, at, "at %.3g req/s: ", fd->recovery_rps);
    }
    if (rc->first_miss_ns == LL_NO_TIME)
        put(buf, len, at, "latency within the SLO from the %s\n",
            fd->overload_rps > 0 ? "switch" : "start");
    else if (rc->recovery_ns == LL_NO_TIME)
        put(buf, len, at, "latency not back inside the SLO within the step (last miss %s "
            "after the %s)\n",
            ll_fmt_duration(rc->last_miss_ns - fd->switch_ns, a, sizeof a),
            fd->overload_rps > 0 ? "switch" : "start");
    else if (rc->first_miss_ns > fd->switch_ns)
        put(buf, len, at, "latency back inside the SLO %s after the %s (first miss at +%s)\n",
            ll_fmt_duration(rc->recovery_ns, a, sizeof a),
            fd->overload_rps > 0 ? "switch" : "start",
            ll_fmt_duration(rc->first_miss_ns - fd->switch_ns, b, sizeof b));
    else
        put(buf, len, at, "latency back inside the SLO %s after the %s\n",
            ll_fmt_duration(rc->recovery_ns, a, sizeof a),
            fd->overload_rps > 0 ? "switch" : "start");
}

/* The hold rule's line of the findings text (some load step is short). */
static void put_short(const struct sweep_findings *fd, const struct sweep_settings *set, char *buf,
                      size_t len, size_t *at)
{
    char what[64];
    snprintf(what, sizeof what, "short steps (%zu of %zu)", fd->n_short, fd->n_load_steps);
    put_rates(buf, len, at, what, fd->short_rps, fd->n_short);
    put(buf, len, at, " req/s held less than %.3gx their own E2E p99", sweep_min_hold_factor(set));
    if (fd->n_short_steady == 0) {
        /* Overloaded: the backlog, so the E2E p99, grows with the hold. */
        put(buf, len, at,
            "; all overloaded (not steady): no hold is long enough for a growing "
            "backlog, and their failures stand\n");
        return;
    }
    if (fd->capacity_short)
        put(buf, len, at, "; the capacity rests on short steps");
    else if (fd->knee.found)
        put(buf, len, at, "; the knee's fit includes them");
    put(buf, len, at,
        ": lengthen --step-duration (--step-duration auto: raise "
        "--max-step-duration)\n");
}

/* One traffic class's line of the findings text. */
static void put_class(const struct sweep_class_finding *cf, char *buf, size_t len, size_t *at)
{
    char cslo[96] = "";
    if (cf->have_slo)
        slo_format(&cf->slo, cslo, sizeof cslo);
    const char *cwhat = cf->have_slo ? "SLO capacity" : "capacity (no SLO)";
    put(buf, len, at, "class %s: ", cf->name);
    if (cf->capacity_found) {
        put(buf, len, at, "%s %.4g req/s", cwhat, cf->capacity_rps);
        if (cf->have_slo)
            put(buf, len, at, " (%s%s)", cslo, cf->own_slo ? ", its own" : "");
        put_next_step(buf, len, at, cf->next_fails, cf->next_fail_rps, cf->next_fail_reason,
                      "no step failed for it");
    } else if (cf->next_fails) {
        put(buf, len, at, "%s not found: the lowest step %.4g req/s already fails: %s\n",
            cwhat, cf->next_fail_rps, cf->next_fail_reason);
    } else {
        put(buf, len, at, "%s not found (no steps)\n", cwhat);
    }
}

void sweep_findings_text(const struct sweep_findings *fd, const struct sweep_settings *set,
                         const char *stop_reason, char *buf, size_t len)
{
    size_t at = 0;
    char a[16];
    if (len)
        buf[0] = '\0';
    put_capacity(fd, set, buf, len, &at);
    put_sizing(fd, set, buf, len, &at);
    if (fd->have_recovery)
        put_recovery(fd, buf, len, &at);
    if (fd->drain_ns)
        put(buf, len, &at, "drain: the last loaded step took %s to finish after offering stopped\n",
            ll_fmt_duration(fd->drain_ns, a, sizeof a));
    if (fd->n_short)
        put_short(fd, set, buf, len, &at);
    for (size_t k = 0; k < fd->n_classes; k++)
        put_class(&fd->classes[k], buf, len, &at);
    put(buf, len, &at, "stopped: %s\n", stop_reason && *stop_reason ? stop_reason
                                                                     : "every rate was run");
}

const char *sweep_step_verdict(const struct sweep_step *s, int csv)
{
    if (s->f.recovery)
        return "recovery";
    if (s->invalid)
        return csv ? "invalid" : "INVALID";
    if (!s->steady)
        return "unstable";
    if (!s->slo_pass)
        return csv ? "slo_miss" : "SLO miss";
    return "ok";
}

/* "mean/max" of a gauge, "-" when absent. */
static void fmt_gauge(char *buf, size_t len, double mean, double max, double scale)
{
    if (isnan(mean) || isnan(max))
        snprintf(buf, len, "-");
    else
        snprintf(buf, len, "%.1f/%.0f", mean * scale, max * scale);
}

static void fmt_secs(char *buf, size_t len, double s, int lower_bound)
{
    char d[16];
    if (isnan(s) || s < 0)
        snprintf(buf, len, "-");
    else
        snprintf(buf, len, "%s%s", lower_bound ? ">" : "",
                 ll_fmt_duration((uint64_t)llround(s * 1e9), d, sizeof d));
}

static void fmt_count(char *buf, size_t len, double v)
{
    if (isnan(v))
        snprintf(buf, len, "-");
    else
        snprintf(buf, len, "%.0f", v);
}

/* The server's figures per step, after the step table (only when some
 * step was scraped): queue, batch and KV gauges over the window, the
 * server's TTFT beside the client's from the send time, and the server's
 * generated tokens beside the client's over the same span. */
/* The step's name in the terminal tables: "rec" for the recovery step, "3.1" for
 * step 3's first repeat, "3" for step 3 itself. */
static void fmt_step_id(char *buf, size_t len, const struct sweep_facts *f)
{
    if (f->recovery)
        snprintf(buf, len, "rec");
    else if (f->confirm)
        snprintf(buf, len, "%u re", f->index);
    else if (f->repeat)
        snprintf(buf, len, "%u.%u", f->index, f->repeat);
    else
        snprintf(buf, len, "%u", f->index);
}

static void print_server_table(FILE *f, const struct sweep_step *steps, size_t n)
{
    size_t scraped = 0;
    for (size_t i = 0; i < n; i++)
        scraped += steps[i].f.server.present;
    if (!scraped)
        return;
    fprintf(f, "\nserver /metrics per step window (mean/max; TTFT server | client from send):\n");
    fprintf(f, "%4s %11s %11s %11s %7s %21s %19s %9s\n", "step", "queue", "running", "KV %",
            "preempt", "TTFT p50 srv|cli", "gen tok srv|cli", "scrapes");
    for (size_t i = 0; i < n; i++) {
        const struct sweep_step *s = &steps[i];
        const struct sweep_server *v = &s->f.server;
        char id[16], q[24], r[24], kv[24], pre[24], t1[24], t2[24], g1[24], g2[24];
        char ttft[56], gen[56], sc[40];
        if (!v->present)
            continue;
        fmt_step_id(id, sizeof id, &s->f);
        fmt_gauge(q, sizeof q, v->waiting_mean, v->waiting_max, 1);
        fmt_gauge(r, sizeof r, v->running_mean, v->running_max, 1);
        fmt_gauge(kv, sizeof kv, v->kv_mean, v->kv_max, 100);
        fmt_count(pre, sizeof pre, v->preemptions);
        fmt_secs(t1, sizeof t1, v->ttft_p50_s, 0);
        fmt_secs(t2, sizeof t2, hist_count(s->stats.ttft_server)
                                    ? (double)hist_percentile(s->stats.ttft_server, 50) / 1e9
                                    : NAN, 0);
        snprintf(ttft, sizeof ttft, "%s|%s", t1, t2);
        fmt_count(g1, sizeof g1, v->generation_tokens);
        fmt_count(g2, sizeof g2, v->has_span ? s->client_tokens_in_span : NAN);
        snprintf(gen, sizeof gen, "%s|%s", g1, g2);
        if (v->failed)
            snprintf(sc, sizeof sc, "%" PRIu64 " (%" PRIu64 " gaps)", v->scrapes, v->failed);
        else
            snprintf(sc, sizeof sc, "%" PRIu64, v->scrapes);
        fprintf(f, "%4s %11s %11s %11s %7s %21s %19s %9s\n", id, q, r, kv, pre, ttft, gen, sc);
    }
}

size_t sweep_invalid_text(const struct sweep_step *steps, size_t n, char *buf, size_t len)
{
    size_t bad = 0, all = 0, at = 0;
    buf[0] = '\0';
    char rates[160] = "";
    for (size_t i = 0; i < n; i++) {
        if (steps[i].f.recovery)
            continue;
        all++;
        if (!steps[i].invalid)
            continue;
        if (at < sizeof rates - 24)
            at += (size_t)snprintf(rates + at, sizeof rates - at, "%s%.4g", bad ? ", " : "",
                                   steps[i].f.offered_rps);
        else if (at < sizeof rates - 5)
            at += (size_t)snprintf(rates + at, sizeof rates - at, ", ..."); /* once */
        bad++;
    }
    if (bad)
        snprintf(buf, len,
                 "%zu of %zu steps (at %s req/s) are INVALID: the generator's own lateness "
                 "moved their latencies past the tolerance, so they include the client's delay "
                 "and the capacity search leaves them out",
                 bad, all, rates);
    return bad;
}

void sweep_print_table(FILE *f, const struct sweep_step *steps, size_t n,
                       const struct sweep_settings *set)
{
    char a[16], b[16], c[16], d[16];
    int cost = set->cost_per_hour > 0;
    fprintf(f, "%4s %8s %8s %8s %8s %7s %9s %9s %9s %9s %6s %11s %6s%s  %s\n", "step", "offered",
            "achieved", "compl/s", "goodput", "attain", "TTFT p50", "TTFT p99", "TPOT p99",
            "E2E p99", "err%", "inflight", "hold", cost ? "  $/Mtok" : "", "verdict");
    for (size_t i = 0; i < n; i++) {
        const struct sweep_step *s = &steps[i];
        char att[16], id[16], infl[24];
        if (isnan(s->attainment))
            snprintf(att, sizeof att, "-");
        else
            snprintf(att, sizeof att, "%.1f%%", 100 * s->attainment);
        fmt_step_id(id, sizeof id, &s->f);
        snprintf(infl, sizeof infl, "%.1f/%.0f", s->f.inflight_mean, s->f.inflight_max);
        fprintf(f, "%4s %8.3g %8.3g %8.3g %8.3g %7s %9s %9s %9s %9s %6.1f %11s", id,
                s->f.offered_rps, s->achieved_rps, s->completed_rps, s->goodput_rps, att,
                s->stats.by_kind[REC_OK] ? ll_fmt_duration(s->ttft_ns[0], a, sizeof a) : "-",
                s->stats.by_kind[REC_OK] ? ll_fmt_duration(s->ttft_ns[3], b, sizeof b) : "-",
                hist_count(s->stats.tpot) ? ll_fmt_duration(s->tpot_ns[3], c, sizeof c) : "-",
                s->stats.by_kind[REC_OK] ? ll_fmt_duration(s->e2e_ns[3], d, sizeof d) : "-",
                100 * s->error_rate, infl);
        char hold[16] = "-";
        if (isfinite(s->hold_factor))
            snprintf(hold, sizeof hold, "%.3gx", s->hold_factor);
        fprintf(f, " %6s", hold);
        if (cost) {
            if (isfinite(s->cost_per_mtok))
                fprintf(f, " %8.3g", s->cost_per_mtok);
            else
                fprintf(f, " %8s", "-");
        }
        fprintf(f, "  %s", sweep_step_verdict(s, 0));
        if (!s->f.recovery && !s->slo_pass)
            fprintf(f, " (%s)", s->fail_reason);
        if (s->short_hold)
            fprintf(f, "; short");
        fputc('\n', f);
    }
    print_server_table(f, steps, n);
}

void sweep_print_classes(FILE *f, const struct sweep_findings *fd)
{
    char a[16], b[16], t[40], cap[48], next[48], at_cap[32];
    if (fd->n_classes == 0)
        return;
    if (fd->capacity_found)
        snprintf(at_cap, sizeof at_cap, "at %.4g req/s", fd->capacity_rps);
    else
        snprintf(at_cap, sizeof at_cap, "at the capacity");
    fprintf(f, "\nby class (own SLO, else the sweep's; p99 %s, the sweep's SLO capacity):\n",
            at_cap);
    fprintf(f, "%-15s %-26s %16s %16s %10s %10s\n", "class", "SLO", "SLO capacity",
            "next fails", "TTFT p99", "TPOT p99");
    for (size_t k = 0; k < fd->n_classes; k++) {
        const struct sweep_class_finding *cf = &fd->classes[k];
        char slo[96] = "-";
        if (cf->have_slo) {
            slo_format(&cf->slo, t, sizeof t);
            snprintf(slo, sizeof slo, "%s%s", t, cf->own_slo ? " (own)" : "");
        }
        if (cf->capacity_found)
            snprintf(cap, sizeof cap, "%s%.4g req/s", cf->none_failed ? ">=" : "",
                     cf->capacity_rps);
        else
            snprintf(cap, sizeof cap, "not found");
        if (cf->next_fails)
            snprintf(next, sizeof next, "%.4g req/s", cf->next_fail_rps);
        else
            snprintf(next, sizeof next, "-");
        fprintf(f, "%-15.15s %-26.26s %16s %16s %10s %10s\n", cf->name, slo, cap, next,
                cf->at_capacity ? ll_fmt_duration(cf->ttft_p99_at_capacity_ns, a, sizeof a)
                                : "-",
                cf->at_capacity && cf->tpot_p99_at_capacity_ns
                    ? ll_fmt_duration(cf->tpot_p99_at_capacity_ns, b, sizeof b)
                    : "-");
    }
}

/* ---- records ----------------------------------------------------------- */

/* What sweep_read_records feeds its records to. */
struct step_feed {
    struct sweep_step *steps;
    size_t n;
    const struct sweep_settings *set;
};

/* A record goes to the step whose index it carries; records outside a
 * sweep's steps (no "step", or a step not in the array) are skipped. */
static void feed_record(void *ud, const struct record *r)
{
    struct step_feed *feed = ud;
    if (r->step < 0)
        return;
    for (size_t i = 0; i < feed->n; i++) {
        if (feed->steps[i].f.index == (uint32_t)r->step) {
            sweep_step_add_record(&feed->steps[i], r, feed->set);
            return;
        }
    }
}

int sweep_read_records(const char *path, uint64_t from, struct sweep_step *steps, size_t n,
                       const struct sweep_settings *set, char *err, size_t errlen)
{
    struct step_feed feed = {.steps = steps, .n = n, .set = set};
    return record_read_file(path, from, feed_record, &feed, err, errlen);
}
