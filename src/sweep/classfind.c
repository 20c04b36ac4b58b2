/* classfind.c: the per-class findings of a sweep (classfind.h): each
 * traffic class's SLO capacity over the points, by the sweep's rule applied
 * to the class's own verdicts (docs/sweep.md, "Per class"). */
#include "sweep/classfind.h"

#include <math.h>
#include <string.h>

#include "util/util.h"

/* Class name's verdict at the point of offered rate rps: 0 when a judged
 * repeat with a request of the class fails for it (*reason gets that
 * repeat's reason), 1 when at least one such repeat exists and every one
 * passes, -1 when none exists: no judged repeat scheduled a request of the
 * class in its window, or -2: some did, but the client cancelled every one
 * before its SLO was decided (class_measured); either way the point says
 * nothing of it (a step passes a class it never sent, or whose every
 * request it cancelled; the capacity must not rest on that). A failure
 * outweighed by a passing re-run (--confirm) with a request of the class
 * passes, as the point does (sweep_points_build): the sweep must not count
 * the rate as passing while the class that failed it there stops. */
/* Whether a step's figures of class c say anything of its SLO: it had a
 * request in the window, and, with an SLO, one the SLO judged (a class
 * whose every request the client cancelled before a miss has none);
 * without one, one the client let end (an error rate over none is no
 * error rate, though it reads 0 and passes). */
static int class_measured(const struct sweep_class *c)
{
    if (c->stats.scheduled == 0)
        return 0;
    return c->have_slo ? !isnan(c->attainment) : stats_let_end(&c->stats) > 0;
}

static int class_point_verdict(const struct sweep_step *steps, size_t n, const char *name,
                               double rps, const char **reason)
{
    int measured = 0, failed = 0, rerun_passed = 0, sent = 0;
    *reason = "";
    for (size_t j = 0; j < n; j++) {
        if (steps[j].f.recovery || steps[j].f.offered_rps != rps)
            continue;
        int k = sweep_step_class_find(&steps[j], name);
        if (k < 0 || !sweep_step_judged(&steps[j]))
            continue;
        sent |= steps[j].classes[k].stats.scheduled > 0;
        if (!class_measured(&steps[j].classes[k]))
            continue;
        measured = 1;
        if (steps[j].f.confirm)
            rerun_passed |= steps[j].classes[k].slo_pass;
        if (!steps[j].classes[k].slo_pass && !failed) {
            *reason = steps[j].classes[k].fail_reason;
            failed = 1;
        }
    }
    if (failed && !rerun_passed)
        return 0;
    *reason = "";
    return measured ? 1 : sent ? -2 : -1;
}

/* Rate rps into a list of the first SWEEP_MAX_UNKNOWN rates, counted in
 * *n past them. */
static void rates_add(double *rates, size_t *n, double rps)
{
    if (*n < SWEEP_MAX_UNKNOWN)
        rates[*n] = rps;
    (*n)++;
}

void sweep_class_findings(const struct sweep_step *steps, size_t n,
                          const struct sweep_point *points, const size_t *ord, size_t n_points,
                          struct sweep_findings *out)
{
    const struct sweep_step *first = sweep_first_with_classes(steps, n);
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
        /* Up the points: the last one passing for the class below the
         * first failing, the points without a request of it left out. */
        size_t first_fail = n_points, last_pass = n_points;
        const char *why = "";
        for (size_t i = 0; i < n_points; i++) {
            double rps = points[ord[i]].offered_rps;
            int v = class_point_verdict(steps, n, cf->name, rps, &why);
            if (v < 0) {
                rates_add(cf->unmeasured_rps, &cf->n_unmeasured, rps);
                if (v == -2)
                    rates_add(cf->cancelled_rps, &cf->n_cancelled, rps);
                else
                    rates_add(cf->unsent_rps, &cf->n_unsent, rps);
                continue;
            }
            if (v == 0) {
                first_fail = i;
                break;
            }
            last_pass = i;
        }
        if (last_pass < n_points) {
            cf->capacity_found = 1;
            cf->capacity_rps = points[ord[last_pass]].offered_rps;
        }
        if (first_fail < n_points) {
            cf->next_fails = 1;
            cf->next_fail_rps = points[ord[first_fail]].offered_rps;
            cf->next_fail_reason = why;
        } else {
            cf->none_failed = cf->capacity_found;
        }
        if (!out->capacity_found)
            continue;
        double rps = points[out->capacity_point].offered_rps, ttft = 0, tpot = 0;
        uint32_t m = 0, mt = 0;
        for (size_t j = 0; j < n; j++) {
            /* The capacity point's judged repeats, as its own means. */
            if (steps[j].f.recovery || steps[j].f.offered_rps != rps ||
                !sweep_step_judged(&steps[j]))
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
