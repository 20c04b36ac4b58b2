/* findings.c: the sweep's findings (see sweep.h): the SLO capacity over
 * the points (per traffic class: classfind.c), the knee, headroom, forecast, cost,
 * recovery and drain, and the findings in words (the rules in words are in
 * docs/sweep.md); the first limit the server reached is firstlimit.c's. */
#include "sweep/sweep.h"

#include <inttypes.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "sweep/classfind.h"
#include "sweep/fit.h"
#include "util/util.h"

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

/* Endpoint k's figure at step s (fig 0: TTFT p99 in ns, 1: error rate),
 * or NAN when it has too few requests to be judged. */
static double endpoint_figure(const struct sweep_step *s, size_t k, int fig)
{
    const struct sweep_endpoint *e = &s->endpoints[k];
    if (fig == 0)
        return e->stats.by_kind[REC_OK] >= SWEEP_EP_MIN_REQUESTS ? (double)e->ttft_ns[3] : NAN;
    return stats_let_end(&e->stats) >= SWEEP_EP_MIN_REQUESTS ? e->error_rate : NAN;
}

/* The median of the judged figures of every endpoint of s but k (NAN when
 * none is judged). */
static double endpoint_others_median(const struct sweep_step *s, size_t k, int fig)
{
    double v[SWEEP_MAX_ENDPOINTS];
    size_t m = 0;
    for (size_t j = 0; j < s->f.n_endpoints && j < SWEEP_MAX_ENDPOINTS; j++) {
        double x = j == k ? NAN : endpoint_figure(s, j, fig);
        if (isfinite(x))
            v[m++] = x;
    }
    if (m == 0)
        return NAN;
    qsort(v, m, sizeof v[0], cmp_double);
    return m % 2 ? v[m / 2] : (v[m / 2 - 1] + v[m / 2]) / 2;
}

size_t sweep_endpoint_findings(const struct sweep_step *steps, size_t n,
                               struct sweep_endpoint_finding *out)
{
    size_t n_eps = 0, found = 0;
    for (size_t i = 0; i < n; i++)
        n_eps = LL_MAX(n_eps, steps[i].f.n_endpoints);
    n_eps = LL_MIN(n_eps, (size_t)SWEEP_MAX_ENDPOINTS);
    for (size_t k = 0; k < n_eps; k++) {
        for (int fig = 0; fig < 2; fig++) {
            struct sweep_endpoint_finding ef = {.endpoint = k, .error_rate = fig, .ratio = -1};
            for (size_t i = 0; i < n; i++) {
                const struct sweep_step *s = &steps[i];
                /* An INVALID step counts: the generator's lateness falls on
                 * every endpoint alike (they share its schedule). */
                if (s->f.recovery || k >= s->f.n_endpoints)
                    continue;
                double v = endpoint_figure(s, k, fig), o = endpoint_others_median(s, k, fig);
                if (!isfinite(v) || !isfinite(o))
                    continue;
                ef.n_judged++;
                double min_diff = fig == 0 ? (double)SWEEP_EP_TTFT_MIN_NS : SWEEP_EP_ERR_MIN;
                if (!(v > SWEEP_EP_RATIO * o && v - o >= min_diff))
                    continue;
                ef.n_out++;
                double r = o > 0 ? v / o : INFINITY;
                if (r > ef.ratio) {
                    ef.ratio = r;
                    ef.value = v;
                    ef.others = o;
                    ef.offered_rps = s->f.offered_rps;
                    ef.step_index = s->f.index;
                    ef.url = s->f.endpoints[k].url;
                }
            }
            if (ef.n_out)
                out[found++] = ef;
        }
    }
    return found;
}

/* Whether rate u lies above the capacity (or there is none) and below
 * the first failing rate: a rate there that was not judged brackets the
 * capacity more coarsely than the steps. */
static int between_pass_and_fail(const struct sweep_findings *out, double u)
{
    return (!out->capacity_found || u > out->capacity_rps) && out->next_fails &&
           u < out->next_fail_rps;
}

/* Whether a rate below rps was run but not judged (INVALID, empty or cut
 * short): then the lowest failing step is the lowest judged one, not the
 * lowest step. The kept unknown rates are the lowest (offered order). */
static int unjudged_below(const struct sweep_findings *fd, double rps)
{
    if (fd->n_unknown && fd->unknown_rps[0] < rps)
        return 1;
    if (fd->n_empty && fd->empty_rps[0] < rps)
        return 1;
    if (fd->n_light && fd->light_rps[0] < rps)
        return 1;
    return fd->have_cut && fd->cut_rps < rps;
}

/* 1 when rate rps is in fd's light list (the light-draw rule). */
static int light_listed(const struct sweep_findings *fd, double rps)
{
    for (size_t k = 0; k < fd->n_light; k++)
        if (fd->light_rps[k] == rps)
            return 1;
    return 0;
}

/* Keep light point p (the light-draw rule) in out's light_* lists. */
static void light_add(struct sweep_findings *out, const struct sweep_point *p)
{
    size_t k = out->n_light++;
    if (k >= SWEEP_MAX_UNKNOWN)
        return;
    out->light_rps[k] = p->offered_rps;
    out->light_arrivals[k] = p->arrivals;
    out->light_expected[k] = p->expected_arrivals;
    out->light_p[k] = p->light_p;
    out->light_runs[k] = p->n_judged;
}

/* The steps whose replicas showed a routing imbalance (--prometheus),
 * in run order, into out->routing_*. */
static void routing_findings(const struct sweep_step *steps, size_t n, struct sweep_findings *out)
{
    for (size_t i = 0; i < n; i++) {
        const struct sweep_replicas *rs = &steps[i].f.server.replicas;
        if (!rs->imbalance[0])
            continue;
        if (out->n_routing < SWEEP_MAX_UNKNOWN) {
            out->routing_step[out->n_routing] = steps[i].f.index;
            out->routing_rps[out->n_routing] = steps[i].f.offered_rps;
            out->routing_text[out->n_routing] = rs->imbalance;
        }
        out->n_routing++;
    }
}

/* The saturation knee of completed/s (y) against the offered rate (x)
 * over m judged load steps (docs/sweep.md, "Findings"). Below a knee the
 * server finishes what it is offered, so completions follow the offered
 * rate at slope 1; a fit whose slope below its bend lies outside
 * [SWEEP_KNEE_SLOPE_MIN, SWEEP_KNEE_SLOPE_MAX] bent on the steps' noise,
 * not on a limit: no knee (found 0), and knee_slope_off says why. The
 * offered rate is the x because it is the schedule's, free of noise:
 * completions that ended in the window are other requests than the
 * window's sends (warm-up ones among them), so the sends' Poisson noise
 * did not cancel, it bent the fit (a knee of 7.9 req/s at slope 2.50
 * below it, on a server of 11.8 req/s). */
static void knee_fit(const double *x, const double *y, size_t m, struct sweep_findings *out)
{
    fit_knee(x, y, m, &out->knee);
    if (out->knee.found && !(out->knee.slope_below >= SWEEP_KNEE_SLOPE_MIN &&
                             out->knee.slope_below <= SWEEP_KNEE_SLOPE_MAX)) {
        out->knee.found = 0;
        out->knee_slope_off = 1;
    }
}

void sweep_findings_compute(const struct sweep_step *steps, size_t n,
                            const struct sweep_point *points, size_t n_points,
                            const struct sweep_settings *set, struct sweep_findings *out)
{
    /* Every point, in run order; n_points is cut below to the known ones
     * in offered order (ord). */
    const size_t n_all = n_points;
    memset(out, 0, sizeof *out);
    out->have_slo = slo_is_set(&set->slo);
    for (size_t i = 0; i < n && !out->have_slo; i++)
        out->have_slo = sweep_step_has_slo(&steps[i], set);
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
    /* Unknown points (every repeat INVALID, the one a signal cut, or with
     * no request in its window) are left out of the order. */
    size_t n_known = 0;
    for (size_t i = 0; i < n_points; i++) {
        /* A pass on too few arrivals (the light-draw rule) is no evidence
         * of its rate: neither a pass nor a fail, as an unknown rate. The
         * rule tests a Poisson count: a constant schedule's is exact, a
         * gamma schedule's varies more. */
        if (points[ord[i]].light && set->poisson_arrivals) {
            light_add(out, &points[ord[i]]);
            continue;
        }
        if (!points[ord[i]].unknown) {
            ord[n_known++] = ord[i];
            continue;
        }
        if (points[ord[i]].cut) {
            out->have_cut = 1;
            out->cut_rps = points[ord[i]].offered_rps;
            continue;
        }
        if (points[ord[i]].empty) {
            if (out->n_empty < SWEEP_MAX_UNKNOWN)
                out->empty_rps[out->n_empty] = points[ord[i]].offered_rps;
            out->n_empty++;
            out->empty_cancelled |= points[ord[i]].empty_cancelled;
            continue;
        }
        if (out->n_unknown < SWEEP_MAX_UNKNOWN) {
            out->unknown_rps[out->n_unknown] = points[ord[i]].offered_rps;
            out->unknown_cause[out->n_unknown] = points[ord[i]].late_cause;
        }
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
        out->cost_at_capacity =
            sweep_cost_per_mtok(set->cost_per_hour, set->replicas, cap->output_tps);
    }
    if (first_fail < n_points) {
        out->next_fails = 1;
        out->next_fail_rps = points[ord[first_fail]].offered_rps;
        out->next_fail_reason = points[ord[first_fail]].fail_reason;
        out->next_fail_confirmed = points[ord[first_fail]].confirmed_fail;
        if (points[ord[first_fail]].reruns == 0)
            out->next_fail_reruns_unjudged = points[ord[first_fail]].rerun_steps;
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
    for (size_t i = 0; i < LL_MIN(out->n_unknown, (size_t)SWEEP_MAX_UNKNOWN); i++)
        out->capacity_coarse |= between_pass_and_fail(out, out->unknown_rps[i]);
    for (size_t i = 0; i < LL_MIN(out->n_empty, (size_t)SWEEP_MAX_UNKNOWN); i++)
        out->capacity_coarse |= between_pass_and_fail(out, out->empty_rps[i]);
    if (out->have_cut)
        out->capacity_coarse |= between_pass_and_fail(out, out->cut_rps);
    for (size_t i = 0; i < LL_MIN(out->n_light, (size_t)SWEEP_MAX_UNKNOWN); i++)
        out->capacity_coarse |= between_pass_and_fail(out, out->light_rps[i]);
    sweep_class_findings(steps, n, points, ord, n_points, out);
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
        if (!sweep_step_judged(&steps[i])) /* the client's figures, or a cut window */
            continue;
        if (out->capacity_found && steps[i].f.offered_rps > out->capacity_rps &&
            steps[i].completed_rps > out->ceiling_rps) {
            out->ceiling_rps = steps[i].completed_rps;
            out->ceiling_at_rps = steps[i].f.offered_rps;
        }
        /* A light step carried less than its offered rate (seed 3's 14
         * req/s step sent 8/s): at its offered x it would pull the slope
         * below the knee down. */
        if (light_listed(out, steps[i].f.offered_rps))
            continue;
        x[m] = steps[i].f.offered_rps;
        y[m] = steps[i].completed_rps;
        m++;
    }
    if (!(out->ceiling_rps > 0 && out->capacity_rps > SWEEP_CEILING_MARGIN * out->ceiling_rps))
        out->ceiling_rps = out->ceiling_at_rps = 0;
    knee_fit(x, y, m, out);
    free(x);
    free(y);
    /* Over every point: an empty or INVALID one before the lead-in's rate
     * in run order once hid it past the known count. */
    for (size_t i = 0; out->overload_rps > 0 && i < n_all; i++)
        if (points[i].offered_rps == out->overload_rps && !points[i].unknown && points[i].pass)
            out->lead_in_passed = 1;
    if (last_loaded && last_loaded->f.elapsed_ns > last_loaded->f.duration_ns)
        out->drain_ns = last_loaded->f.elapsed_ns - last_loaded->f.duration_ns;
    sweep_first_limit(steps, n, set, &out->first_limit);
    out->n_endpoints = sweep_endpoint_findings(steps, n, out->endpoints);
    routing_findings(steps, n, out);
}

/* The end of a capacity line: the step after the capacity that failed
 * (next_fails, at next_rps, for reason), else none_failed. */
static void put_next_step(char *buf, size_t len, size_t *at, int next_fails, double next_rps,
                          const char *reason, const char *none_failed)
{
    if (next_fails)
        ll_putf(buf, len, at, "; next step %.4g req/s fails: %s\n", next_rps, reason);
    else
        ll_putf(buf, len, at, "; %s\n", none_failed);
}

/* "what: r1, r2, ..." of n rates, of which the first SWEEP_MAX_UNKNOWN are
 * kept in r. */
static void put_rates(char *buf, size_t len, size_t *at, const char *what, const double *r,
                      size_t n)
{
    ll_putf(buf, len, at, "%s: ", what);
    for (size_t i = 0; i < LL_MIN(n, (size_t)SWEEP_MAX_UNKNOWN); i++)
        ll_putf(buf, len, at, "%s%.4g", i ? ", " : "", r[i]);
    if (n > SWEEP_MAX_UNKNOWN)
        ll_putf(buf, len, at, ", ...");
}

/* The light-draw line of the k-th light rate of fd: "light: the 14 req/s
 * step drew 16 arrivals of an expected 28 (p = 0.01): its pass is not
 * evidence of 14 req/s; ...". */
static void put_light(const struct sweep_findings *fd, size_t k, char *buf, size_t len, size_t *at)
{
    char runs[32] = "";
    if (fd->light_runs[k] > 1)
        snprintf(runs, sizeof runs, "s (%u runs)", (unsigned)fd->light_runs[k]);
    ll_putf(buf, len, at,
            "light: the %.4g req/s step%s drew %" PRIu64 " arrivals of an expected %.4g "
            "(p = %.2g): its pass is not evidence of %.4g req/s; the capacity rests on the "
            "other steps\n",
            fd->light_rps[k], runs, fd->light_arrivals[k], fd->light_expected[k], fd->light_p[k],
            fd->light_rps[k]);
}

/* Why a rate between the capacity and the first failing one left the
 * capacity coarse: it could not be judged, or its pass was not credited
 * (the light-draw rule), or both kinds lie there. */
static const char *coarse_why(const struct sweep_findings *fd)
{
    int light = 0, unjudged = 0;
    for (size_t i = 0; i < LL_MIN(fd->n_light, (size_t)SWEEP_MAX_UNKNOWN); i++)
        light |= between_pass_and_fail(fd, fd->light_rps[i]);
    for (size_t i = 0; i < LL_MIN(fd->n_unknown, (size_t)SWEEP_MAX_UNKNOWN); i++)
        unjudged |= between_pass_and_fail(fd, fd->unknown_rps[i]);
    for (size_t i = 0; i < LL_MIN(fd->n_empty, (size_t)SWEEP_MAX_UNKNOWN); i++)
        unjudged |= between_pass_and_fail(fd, fd->empty_rps[i]);
    unjudged |= fd->have_cut && between_pass_and_fail(fd, fd->cut_rps);
    if (!light)
        return "could not be judged";
    return unjudged ? "could not be judged or drew too few arrivals"
                    : "drew too few arrivals to count";
}

/* The capacity line of the findings text. */
static void put_capacity(const struct sweep_findings *fd, const struct sweep_settings *set,
                         char *buf, size_t len, size_t *at)
{
    char slo[96] = "";
    if (fd->have_slo && slo_is_set(&set->slo))
        slo_format(&set->slo, slo, sizeof slo);
    else if (fd->have_slo)
        snprintf(slo, sizeof slo, "each class's own SLO");
    const char *what = fd->have_slo ? "SLO capacity" : "capacity (no SLO: steady, errors in limit)";
    if (fd->capacity_found) {
        ll_putf(buf, len, at, "%s: %.4g req/s", what, fd->capacity_rps);
        if (fd->have_slo)
            ll_putf(buf, len, at, " (%s at %.4g%% attainment, steady)", slo, 100 * set->attainment);
        put_next_step(buf, len, at, fd->next_fails, fd->next_fail_rps, fd->next_fail_reason,
                      "no step failed: the capacity is at least this");
    } else if (fd->next_fails) {
        ll_putf(buf, len, at, "%s: not found: the lowest %sstep %.4g req/s already fails: %s\n",
                what, unjudged_below(fd, fd->next_fail_rps) ? "judged " : "", fd->next_fail_rps,
                fd->next_fail_reason);
    } else if (fd->n_unknown || fd->have_cut || fd->n_empty) {
        ll_putf(buf, len, at, "%s: not found: no step could be judged\n", what);
    } else {
        ll_putf(buf, len, at, "%s: not found (no steps)\n", what);
    }
    if (fd->n_disputed) {
        put_rates(buf, len, at, "disputed", fd->disputed_rps, fd->n_disputed);
        ll_putf(buf, len, at,
                " req/s failed below a passing rate and passed when re-run (--confirm): "
                "counted as passing\n");
    }
    if (fd->next_fails && fd->passed_above_rps > 0) {
        /* A re-run that was INVALID is neither a confirmation nor no re-run:
         * "(not re-run)" beside a "K re" row in the table read as a lie. */
        char rerun[96];
        if (fd->next_fail_confirmed)
            snprintf(rerun, sizeof rerun, " (confirmed by a re-run)");
        else if (fd->next_fail_reruns_unjudged == 1)
            snprintf(rerun, sizeof rerun, " (re-run, but the re-run could not be judged)");
        else if (fd->next_fail_reruns_unjudged > 1)
            snprintf(rerun, sizeof rerun, " (re-run %u times, but no re-run could be judged)",
                     (unsigned)fd->next_fail_reruns_unjudged);
        else
            snprintf(rerun, sizeof rerun, " (not re-run)");
        ll_putf(buf, len, at,
                "not monotonic: %.4g req/s passed above the failing %.4g req/s; the capacity "
                "stops at the first failure%s\n",
                fd->passed_above_rps, fd->next_fail_rps, rerun);
    }
    if (fd->ceiling_rps > 0)
        ll_putf(buf, len, at,
                "above the ceiling: the capacity %.4g req/s is more than the server completed "
                "when offered more (%.3g req/s at %.4g req/s): it did not sustain that rate, "
                "and the pass rests on a light draw or a short step; count on %.3g req/s at "
                "most\n",
                fd->capacity_rps, fd->ceiling_rps, fd->ceiling_at_rps, fd->ceiling_rps);
    if (fd->n_unknown) {
        char whose[512];
        sweep_late_whose_list(fd->unknown_rps, fd->unknown_cause, fd->n_unknown, whose,
                              sizeof whose);
        put_rates(buf, len, at, "not judged", fd->unknown_rps, fd->n_unknown);
        ll_putf(buf, len, at,
                " req/s (INVALID: %s moved their latencies); the capacity and the knee rest on the "
                "other steps\n",
                whose);
        if (fd->capacity_unknown)
            ll_putf(buf, len, at,
                    "capacity unknown: no step could be judged; rerun on a quieter machine or "
                    "with more --threads (the sweep is INVALID)\n");
    }
    if (fd->have_cut)
        ll_putf(buf, len, at,
                "interrupted: %.4g req/s (a stop signal cut its step short: no verdict); the "
                "capacity and the knee rest on the other steps\n",
                fd->cut_rps);
    if (fd->n_empty) {
        put_rates(buf, len, at, "empty", fd->empty_rps, fd->n_empty);
        ll_putf(
            buf, len, at, " req/s (%s); the capacity and the knee rest on the other steps\n",
            fd->empty_cancelled
                ? "no request in the window the SLO could judge: the client cancelled every one "
                  "before the SLO was decided, or none was scheduled"
                : "no request was scheduled in the window: nothing to judge; lengthen "
                  "--step-duration");
    }
    for (size_t k = 0; k < LL_MIN(fd->n_light, (size_t)SWEEP_MAX_UNKNOWN); k++)
        put_light(fd, k, buf, len, at);
    const char *why = coarse_why(fd);
    if (fd->capacity_coarse && !fd->capacity_unknown && fd->capacity_found)
        ll_putf(buf, len, at,
                "the capacity lies between %.4g and %.4g req/s: a step between them %s\n",
                fd->capacity_rps, fd->next_fail_rps, why);
    else if (fd->capacity_coarse && !fd->capacity_unknown)
        ll_putf(buf, len, at, "the capacity lies below %.4g req/s: a step below it %s\n",
                fd->next_fail_rps, why);
}

/* The knee, headroom, forecast and cost lines of the findings text. */
static void put_sizing(const struct sweep_findings *fd, const struct sweep_settings *set, char *buf,
                       size_t len, size_t *at)
{
    if (fd->knee.found && fd->knee.edge)
        /* The fit cannot place a knee past the second highest step: one
         * there may lie anywhere up to the highest. */
        ll_putf(buf, len, at,
                "saturation knee: at or above %.3g req/s offered (the steps cannot place it "
                "higher: add a rate between %.3g and %.3g req/s; completions follow at slope "
                "%.2f below it, %.2f above)\n",
                fd->knee.knee_x, fd->knee.knee_x, fd->knee.beyond_x,
                fabs(fd->knee.slope_below) < 0.005 ? 0 : fd->knee.slope_below,
                fabs(fd->knee.slope_above) < 0.005 ? 0 : fd->knee.slope_above);
    else if (fd->knee.found)
        ll_putf(buf, len, at,
                "saturation knee: %.3g req/s offered (completions follow at slope %.2f below it, "
                "%.2f above; %.3g req/s at the knee)\n",
                fd->knee.knee_x, fabs(fd->knee.slope_below) < 0.005 ? 0 : fd->knee.slope_below,
                fabs(fd->knee.slope_above) < 0.005 ? 0 : fd->knee.slope_above, fd->knee.y_at_knee);
    else if (fd->knee_slope_off)
        ll_putf(buf, len, at,
                "saturation knee: not found: the fit bent at %.3g req/s, but completions "
                "followed the offered load at slope %.2f below it, not about 1 (%.2f-%.2f): "
                "the steps are too noisy to place a knee (lengthen --step-duration, or "
                "--repeat)\n",
                fd->knee.knee_x, fd->knee.slope_below, SWEEP_KNEE_SLOPE_MIN, SWEEP_KNEE_SLOPE_MAX);
    else
        ll_putf(buf, len, at,
                "saturation knee: not found (completions kept following offered load)\n");
    if (*at + 1 < len) { /* beside the knee: the limit the server reached first */
        sweep_first_limit_text(&fd->first_limit, buf + *at, len - *at);
        *at += strlen(buf + *at);
    }
    if (fd->capacity_found)
        ll_putf(buf, len, at, "headroom: operate at <= %.3g req/s (%.0f%% of the %s)\n",
                fd->operate_rps, 100 * set->headroom, fd->have_slo ? "SLO capacity" : "capacity");
    if (set->forecast_rps > 0) {
        if (fd->replicas_needed)
            ll_putf(buf, len, at,
                    "forecast: %.4g req/s needs %u replica%s (each at %.0f%% of its measured "
                    "capacity %.3g req/s)\n",
                    set->forecast_rps, fd->replicas_needed, fd->replicas_needed == 1 ? "" : "s",
                    100 * set->headroom, fd->capacity_rps / set->replicas);
        else
            ll_putf(buf, len, at, "forecast: %.4g req/s: no capacity found to size it\n",
                    set->forecast_rps);
    }
    if (set->cost_per_hour > 0 && isfinite(fd->cost_at_capacity))
        ll_putf(buf, len, at,
                "cost: %.4g per million output tokens at the capacity (%.4g/h x %u)\n",
                fd->cost_at_capacity, set->cost_per_hour, set->replicas);
}

/* The recovery line of the findings text (a recovery step ran). */
static void put_recovery(const struct sweep_findings *fd, char *buf, size_t len, size_t *at)
{
    const struct sweep_recovery *rc = &fd->recovery;
    char a[16], b[16];
    ll_putf(buf, len, at, "recovery: ");
    if (fd->overload_rps > 0) {
        ll_putf(buf, len, at, "after %s at %.3g req/s", ll_fmt_duration(fd->switch_ns, a, sizeof a),
                fd->overload_rps);
        if (isfinite(fd->backlog_at_switch))
            ll_putf(buf, len, at, " (%.0f in flight at the switch)", fd->backlog_at_switch);
        ll_putf(buf, len, at, ", then %.3g req/s: ", fd->recovery_rps);
    } else {
        ll_putf(buf, len, at, "at %.3g req/s: ", fd->recovery_rps);
    }
    if (rc->first_miss_ns == LL_NO_TIME && fd->lead_in_passed)
        ll_putf(
            buf, len, at,
            "latency within the SLO from the switch, but %.4g req/s passed as a load step: "
            "it overloaded nothing, so there was nothing to recover from (raise the top rate)\n",
            fd->overload_rps);
    else if (rc->first_miss_ns == LL_NO_TIME)
        ll_putf(buf, len, at, "latency within the SLO from the %s\n",
                fd->overload_rps > 0 ? "switch" : "start");
    else if (rc->recovery_ns == LL_NO_TIME)
        ll_putf(buf, len, at,
                "latency not back inside the SLO within the step (last miss %s "
                "after the %s)\n",
                ll_fmt_duration(rc->last_miss_ns - fd->switch_ns, a, sizeof a),
                fd->overload_rps > 0 ? "switch" : "start");
    else if (rc->first_miss_ns > fd->switch_ns)
        ll_putf(buf, len, at, "latency back inside the SLO %s after the %s (first miss at +%s)\n",
                ll_fmt_duration(rc->recovery_ns, a, sizeof a),
                fd->overload_rps > 0 ? "switch" : "start",
                ll_fmt_duration(rc->first_miss_ns - fd->switch_ns, b, sizeof b));
    else
        ll_putf(buf, len, at, "latency back inside the SLO %s after the %s\n",
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
    ll_putf(buf, len, at, " req/s held less than %.3gx their own E2E p99",
            sweep_min_hold_factor(set));
    if (fd->n_short_steady == 0) {
        /* Overloaded: the backlog, so the E2E p99, grows with the hold. */
        ll_putf(buf, len, at,
                "; all overloaded (not steady): no hold is long enough for a growing "
                "backlog, and their failures stand\n");
        return;
    }
    if (fd->capacity_short)
        ll_putf(buf, len, at, "; the capacity rests on short steps");
    else if (fd->knee.found)
        ll_putf(buf, len, at, "; the knee's fit includes them");
    ll_putf(buf, len, at,
            ": lengthen --step-duration (--step-duration auto: raise "
            "--max-step-duration)\n");
}

const char *sweep_class_not_judged_why(const struct sweep_class_finding *cf)
{
    if (cf->n_cancelled == 0)
        return "no judged step had a request of it";
    if (cf->n_unsent == 0)
        return cf->have_slo ? "the client cancelled every request of it before its SLO was decided"
                            : "the client cancelled every request of it";
    return cf->have_slo ? "no judged step had a request of it the client did not cancel before "
                          "its SLO was decided"
                        : "no judged step had a request of it the client did not cancel";
}

/* The lines of the rates left out of class cf's capacity: those where no
 * judged step had a request of it, then those where the client cancelled
 * every one (a workload's own choice says nothing of the server). */
static void put_class_unjudged(const struct sweep_class_finding *cf, char *buf, size_t len,
                               size_t *at)
{
    char what[192];
    if (cf->n_unsent) {
        snprintf(what, sizeof what, "class %s, no request of it in a judged step (not judged)",
                 cf->name);
        put_rates(buf, len, at, what, cf->unsent_rps, cf->n_unsent);
        ll_putf(buf, len, at, " req/s; its capacity rests on the other steps\n");
    }
    if (cf->n_cancelled) {
        snprintf(what, sizeof what,
                 "class %s, every request of it the client cancelled%s (not judged)", cf->name,
                 cf->have_slo ? " before its SLO was decided" : "");
        put_rates(buf, len, at, what, cf->cancelled_rps, cf->n_cancelled);
        ll_putf(buf, len, at, " req/s; its capacity rests on the other steps\n");
    }
}

/* One traffic class's line of the findings text. */
static void put_class(const struct sweep_findings *fd, const struct sweep_class_finding *cf,
                      char *buf, size_t len, size_t *at)
{
    char cslo[96] = "";
    if (cf->have_slo)
        slo_format(&cf->slo, cslo, sizeof cslo);
    const char *cwhat = cf->have_slo ? "SLO capacity" : "capacity (no SLO)";
    ll_putf(buf, len, at, "class %s: ", cf->name);
    if (cf->capacity_found) {
        ll_putf(buf, len, at, "%s %.4g req/s", cwhat, cf->capacity_rps);
        if (cf->have_slo)
            ll_putf(buf, len, at, " (%s%s)", cslo, cf->own_slo ? ", its own" : "");
        put_next_step(buf, len, at, cf->next_fails, cf->next_fail_rps, cf->next_fail_reason,
                      "no step failed for it");
    } else if (cf->next_fails) {
        /* Steps below it that sent none of the class, or that could not
         * be judged, were run: it is the lowest of the others, not the
         * lowest step. */
        ll_putf(buf, len, at, "%s not found: the lowest %sstep%s %.4g req/s already fails: %s\n",
                cwhat, unjudged_below(fd, cf->next_fail_rps) || cf->n_unmeasured ? "judged " : "",
                cf->n_cancelled    ? " that judged a request of it,"
                : cf->n_unmeasured ? " with a request of it,"
                                   : "",
                cf->next_fail_rps, cf->next_fail_reason);
    } else if (cf->n_unmeasured) {
        ll_putf(buf, len, at, "%s not found (%s)\n", cwhat, sweep_class_not_judged_why(cf));
    } else {
        ll_putf(buf, len, at, "%s not found (no steps)\n", cwhat);
    }
    if (cf->capacity_found || cf->next_fails)
        put_class_unjudged(cf, buf, len, at);
}

/* One endpoint finding's line: "endpoint 1 (URL) had TTFT p99 3.1x the
 * others' at 8 req/s (...): an uneven replica or routing". */
static void put_endpoint(const struct sweep_endpoint_finding *ef, char *buf, size_t len, size_t *at)
{
    char a[16], b[16], times[24];
    if (isfinite(ef->ratio))
        snprintf(times, sizeof times, "%.3gx", ef->ratio);
    else
        snprintf(times, sizeof times, "above");
    ll_putf(buf, len, at, "endpoint %zu (%.200s) had %s %s the others' at %.4g req/s ",
            ef->endpoint, ef->url ? ef->url : "?", ef->error_rate ? "an error rate" : "TTFT p99",
            times, ef->offered_rps);
    if (ef->error_rate)
        ll_putf(buf, len, at, "(%.1f%% against %.1f%%", 100 * ef->value, 100 * ef->others);
    else
        ll_putf(buf, len, at, "(%s against %s", ll_fmt_duration((uint64_t)ef->value, a, sizeof a),
                ll_fmt_duration((uint64_t)ef->others, b, sizeof b));
    ll_putf(buf, len, at, "; %zu of %zu steps): an uneven replica or routing\n", ef->n_out,
            ef->n_judged);
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
        ll_putf(buf, len, &at,
                "drain: the last loaded step took %s to finish after offering stopped\n",
                ll_fmt_duration(fd->drain_ns, a, sizeof a));
    if (fd->n_short)
        put_short(fd, set, buf, len, &at);
    for (size_t k = 0; k < fd->n_classes; k++)
        put_class(fd, &fd->classes[k], buf, len, &at);
    for (size_t k = 0; k < fd->n_endpoints; k++)
        put_endpoint(&fd->endpoints[k], buf, len, &at);
    for (size_t k = 0; k < fd->n_routing && k < SWEEP_MAX_UNKNOWN; k++)
        ll_putf(buf, len, &at, "step %zu (%.4g req/s): %s\n", fd->routing_step[k],
                fd->routing_rps[k], fd->routing_text[k]);
    if (fd->n_routing > SWEEP_MAX_UNKNOWN)
        ll_putf(buf, len, &at, "routing imbalance in %zu more steps\n",
                fd->n_routing - SWEEP_MAX_UNKNOWN);
    ll_putf(buf, len, &at, "stopped: %s\n",
            stop_reason && *stop_reason ? stop_reason : "every rate was run");
}
