/* steptable.c: a sweep's steps in words for the terminal (see sweep.h):
 * the step table with each step's verdict and its repeats' means, the
 * server's /metrics and the GPU energy per step, the classes' and the
 * endpoints' lines, and the INVALID steps' reasons. Moved from sweep.c,
 * which computes what these print. */
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "sweep/sweep.h"
#include "util/util.h"

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
int sweep_has_repeats(const struct sweep_step *steps, size_t n)
{
    for (size_t i = 0; i < n; i++)
        if (!steps[i].f.recovery && !steps[i].f.confirm && steps[i].f.repeat > 0)
            return 1;
    return 0;
}

void sweep_step_label(const struct sweep_facts *f, int repeats, char *buf, size_t len)
{
    if (f->recovery)
        snprintf(buf, len, "%u rec", f->index);
    else if (f->confirm)
        snprintf(buf, len, "%u re", f->index);
    else if (repeats)
        snprintf(buf, len, "%u r%u", f->index, f->repeat + 1);
    else
        snprintf(buf, len, "%u", f->index);
}

/* The width of the step tables' first column: 6, or the longest name. */
static int step_label_width(const struct sweep_step *steps, size_t n, int repeats)
{
    int w = 6;
    for (size_t i = 0; i < n; i++) {
        char id[32];
        sweep_step_label(&steps[i].f, repeats, id, sizeof id);
        w = LL_MAX(w, (int)strlen(id));
    }
    return w;
}

/* Whether step s has a section's figures. */
typedef int step_has_fn(const struct sweep_step *s);

/* Open a per-step section that only some runs have: when no step has it
 * (has), print nothing and return -1; else print the blank line and
 * "title:", set *repeats (sweep_has_repeats) and return the step column's
 * width (step_label_width). */
static int section_open(FILE *f, const struct sweep_step *steps, size_t n, step_has_fn *has,
                        const char *title, int *repeats)
{
    size_t present = 0;
    for (size_t i = 0; i < n; i++)
        present += has(&steps[i]) != 0;
    if (!present)
        return -1;
    *repeats = sweep_has_repeats(steps, n);
    fprintf(f, "\n%s:\n", title);
    return step_label_width(steps, n, *repeats);
}

static int has_server(const struct sweep_step *s)
{
    return s->f.server.present;
}

static void print_server_table(FILE *f, const struct sweep_step *steps, size_t n)
{
    int repeats;
    int w = section_open(
        f, steps, n, has_server,
        "server /metrics per step window (mean/max; TTFT server | client from send)", &repeats);
    if (w < 0)
        return;
    fprintf(f, "%*s %11s %11s %11s %7s %21s %19s %9s\n", w, "step", "queue", "running", "KV %",
            "preempt", "TTFT p50 srv|cli", "gen tok srv|cli", "scrapes");
    for (size_t i = 0; i < n; i++) {
        const struct sweep_step *s = &steps[i];
        const struct sweep_server *v = &s->f.server;
        char id[32], q[24], r[24], kv[24], pre[24], t1[24], t2[24], g1[24], g2[24];
        char ttft[56], gen[56], sc[40];
        if (!v->present)
            continue;
        sweep_step_label(&s->f, repeats, id, sizeof id);
        fmt_gauge(q, sizeof q, v->waiting_mean, v->waiting_max, 1);
        fmt_gauge(r, sizeof r, v->running_mean, v->running_max, 1);
        fmt_gauge(kv, sizeof kv, v->kv_mean, v->kv_max, 100);
        fmt_count(pre, sizeof pre, v->preemptions);
        fmt_secs(t1, sizeof t1, v->ttft_p50_s, 0);
        fmt_secs(t2, sizeof t2,
                 hist_count(s->stats.ttft_server)
                     ? (double)hist_percentile(s->stats.ttft_server, 50) / 1e9
                     : NAN,
                 0);
        snprintf(ttft, sizeof ttft, "%s|%s", t1, t2);
        fmt_count(g1, sizeof g1, v->generation_tokens);
        fmt_count(g2, sizeof g2, v->has_span ? s->client_tokens_in_span : NAN);
        snprintf(gen, sizeof gen, "%s|%s", g1, g2);
        if (v->failed)
            snprintf(sc, sizeof sc, "%" PRIu64 " (%" PRIu64 " gaps)", v->scrapes, v->failed);
        else
            snprintf(sc, sizeof sc, "%" PRIu64, v->scrapes);
        fprintf(f, "%*s %11s %11s %11s %7s %21s %19s %9s\n", w, id, q, r, kv, pre, ttft, gen, sc);
    }
    /* Scraped, and not one KV figure: the engine does not export one. */
    const char *engine = NULL;
    for (size_t i = 0; i < n; i++) {
        const struct sweep_server *v = &steps[i].f.server;
        if (!v->present || v->scrapes == v->failed)
            continue;
        if (!isnan(v->kv_mean))
            return;
        engine = v->engine;
    }
    if (engine != NULL)
        fprintf(f, "KV %%: not exported by this engine (%s)\n", engine[0] ? engine : "unknown");
}

/* v with 3 significant digits, or a dash when it is not finite. */
static void fmt_sig3(char *buf, size_t len, double v)
{
    if (isfinite(v))
        snprintf(buf, len, "%.3g", v);
    else
        snprintf(buf, len, "-");
}

/* One line per step the GPU telemetry covered (--gpu-metrics): its
 * energy over the window and the figures from it; nothing without. */
static int has_energy(const struct sweep_step *s)
{
    return s->f.energy.present;
}

static void print_energy_table(FILE *f, const struct sweep_step *steps, size_t n)
{
    int repeats;
    int w = section_open(f, steps, n, has_energy, "GPU energy per step window (--gpu-metrics)",
                         &repeats);
    if (w < 0)
        return;
    fprintf(f, "%*s %10s %9s %9s %9s %9s %9s %5s  %s\n", w, "step", "energy J", "J/tok", "J/req",
            "tok/J", "mean W", "max W", "GPUs", "source");
    for (size_t i = 0; i < n; i++) {
        const struct sweep_step *s = &steps[i];
        const struct sweep_energy *e = &s->f.energy;
        char id[32], ej[24], jt[24], jr[24], tj[24], mw[24], xw[24], src[48];
        if (!e->present)
            continue;
        sweep_step_label(&s->f, repeats, id, sizeof id);
        fmt_sig3(ej, sizeof ej, e->energy_j);
        fmt_sig3(jt, sizeof jt, s->j_per_output_token);
        fmt_sig3(jr, sizeof jr, s->j_per_request);
        fmt_sig3(tj, sizeof tj, s->output_tokens_per_j);
        fmt_sig3(mw, sizeof mw, s->mean_power_w);
        fmt_sig3(xw, sizeof xw, e->max_power_w);
        if (!e->source[0])
            snprintf(src, sizeof src, "none (%" PRIu64 " URL%s without a figure)", e->missing,
                     e->missing == 1 ? "" : "s");
        else if (e->gaps)
            snprintf(src, sizeof src, "%s (%" PRIu64 " gaps)", e->source, e->gaps);
        else
            snprintf(src, sizeof src, "%s", e->source);
        fprintf(f, "%*s %10s %9s %9s %9s %9s %9s %5u  %s\n", w, id, ej, jt, jr, tj, mw, xw, e->gpus,
                src);
    }
}

const char *sweep_late_whose(enum verdict_late_cause c)
{
    switch (c) {
    case VERDICT_LATE_ASLEEP:
        return "lateness of the OS or VM, not the generator's load (the worker slept through "
               "the sends' times and woke late)";
    case VERDICT_LATE_PREEMPTED:
        return "lateness of the OS or VM, not the generator's load (preempted by the OS, the "
               "host's fault, not busy)";
    case VERDICT_LATE_BUSY: return "the generator's own lateness (busy: its own limit)";
    case VERDICT_LATE_NONE:
    case VERDICT_LATE_CAUSE_COUNT: break;
    }
    return "the generator's own lateness";
}

/* A cause's words among others (sweep_late_whose_list). */
static const char *whose_short(enum verdict_late_cause c)
{
    switch (c) {
    case VERDICT_LATE_ASLEEP: return "the OS's or VM's, not the generator's (asleep)";
    case VERDICT_LATE_PREEMPTED: return "the OS's or VM's, not the generator's (preempted)";
    case VERDICT_LATE_BUSY: return "the generator's own (busy)";
    case VERDICT_LATE_NONE:
    case VERDICT_LATE_CAUSE_COUNT: break;
    }
    return "not diagnosed";
}

void sweep_late_whose_list(const double *rps, const enum verdict_late_cause *causes, size_t n,
                           char *buf, size_t len)
{
    size_t kept = LL_MIN(n, (size_t)SWEEP_MAX_UNKNOWN), same = 1;
    for (size_t i = 1; i < kept; i++)
        same &= causes[i] == causes[0];
    if (len == 0)
        return;
    if (kept == 0 || same) {
        snprintf(buf, len, "%s", sweep_late_whose(kept ? causes[0] : VERDICT_LATE_NONE));
        return;
    }
    /* At most SWEEP_MAX_UNKNOWN rates of "%.4g": each group fits. */
    char part[160];
    size_t at = (size_t)snprintf(buf, len, "schedule lateness (");
    int groups = 0;
    for (int c = 0; c < VERDICT_LATE_CAUSE_COUNT; c++) {
        size_t pa = 0, in = 0;
        for (size_t i = 0; i < kept; i++)
            if ((int)causes[i] == c)
                pa += (size_t)snprintf(part + pa, sizeof part - pa, "%s%.4g", in++ ? ", " : "",
                                       rps[i]);
        if (in && at < len)
            at += (size_t)snprintf(buf + at, len - at, "%sat %s req/s %s", groups++ ? "; " : "",
                                   part, whose_short((enum verdict_late_cause)c));
    }
    if (at < len)
        snprintf(buf + at, len - at, "%s)", n > kept ? "; more not shown" : "");
}

enum verdict_late_cause sweep_invalid_cause(const struct sweep_step *steps, size_t n)
{
    enum verdict_late_cause c = VERDICT_LATE_CAUSE_COUNT; /* none seen yet */
    for (size_t i = 0; i < n; i++) {
        if (steps[i].f.recovery || !steps[i].invalid)
            continue;
        enum verdict_late_cause ci = sweep_late_cause(&steps[i].f.late);
        if (c != VERDICT_LATE_CAUSE_COUNT && ci != c)
            return VERDICT_LATE_NONE;
        c = ci;
    }
    return c == VERDICT_LATE_CAUSE_COUNT ? VERDICT_LATE_NONE : c;
}

size_t sweep_invalid_text(const struct sweep_step *steps, size_t n, char *buf, size_t len)
{
    size_t bad = 0, all = 0, at = 0;
    buf[0] = '\0';
    char rates[160] = "";
    double rps[SWEEP_MAX_UNKNOWN] = {0};
    enum verdict_late_cause causes[SWEEP_MAX_UNKNOWN] = {VERDICT_LATE_NONE};
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
        if (bad < SWEEP_MAX_UNKNOWN) {
            rps[bad] = steps[i].f.offered_rps;
            causes[bad] = sweep_late_cause(&steps[i].f.late);
        }
        bad++;
    }
    if (bad == 0)
        return 0;
    char whose[512];
    sweep_late_whose_list(rps, causes, bad, whose, sizeof whose);
    snprintf(buf, len,
             "%zu of %zu steps (at %s req/s) are INVALID: %s moved their latencies past "
             "the tolerance, so they include the client's delay and the capacity search "
             "leaves them out",
             bad, all, rates, whose);
    return bad;
}

/* "<mean> +- <ci>" of a duration given in ms; "<mean>" alone when ci is
 * NAN (one run: no interval). */
static void fmt_ms_ci(char *buf, size_t len, double mean_ms, double ci_ms)
{
    char m[16], c[16];
    ll_fmt_duration((uint64_t)llround(mean_ms * 1e6), m, sizeof m);
    if (isnan(ci_ms))
        snprintf(buf, len, "%s", m);
    else
        snprintf(buf, len, "%s +- %s", m,
                 ll_fmt_duration((uint64_t)llround(ci_ms * 1e6), c, sizeof c));
}

/* "<mean> +- <ci>" of a number printed with fmt ("%.3g"), scaled by k;
 * "<mean>" alone when ci is NAN. */
static void fmt_ci(char *buf, size_t len, const char *fmt, double mean, double ci, double k)
{
    char m[24], c[24];
    snprintf(m, sizeof m, fmt, k * mean);
    if (isnan(ci)) {
        snprintf(buf, len, "%s", m);
        return;
    }
    snprintf(c, sizeof c, fmt, k * ci);
    snprintf(buf, len, "%s +- %s", m, c);
}

/* Point p's line under its last step in the table (a rate run more than
 * once): the mean of its runs, each figure with the half-width of its
 * 95% Student-t interval, but attainment: its runs' requests pooled, of
 * how many, in its 95% Wilson interval. A point with an unjudged run (INVALID, empty or
 * cut) has the mean of its judged runs (sweep_points_build), and the line
 * says how many; over one judged run there is no interval. */
static void print_point_mean(FILE *f, const struct sweep_point *p, int indent)
{
    int one = p->n_judged == 1;
    double no = NAN;
    char runs[64], x[56], g[56], att[96] = "", tt[48], tp[64] = "";
    if (p->n_judged == p->n)
        snprintf(runs, sizeof runs, "mean of %u runs +- 95%% CI", p->n);
    else if (one)
        snprintf(runs, sizeof runs, "its one judged run of %u", p->n);
    else if (p->n_judged)
        snprintf(runs, sizeof runs, "mean of its %u judged runs of %u +- 95%% CI", p->n_judged,
                 p->n);
    else
        snprintf(runs, sizeof runs, "mean of %u runs (none judged) +- 95%% CI", p->n);
    fmt_ci(x, sizeof x, "%.3g", p->achieved_rps, one ? no : p->achieved_ci, 1);
    fmt_ci(g, sizeof g, "%.3g", p->goodput_rps, one ? no : p->goodput_ci, 1);
    /* Attainment is the runs' requests pooled, with the Wilson interval
     * of the counts: a share of a few dozen requests is not known to
     * +- 0.0% because two runs agreed. */
    if (!isnan(p->attainment) && isnan(p->attainment_lo))
        snprintf(att, sizeof att, ", attainment %.1f%%", 100 * p->attainment);
    else if (!isnan(p->attainment))
        snprintf(att, sizeof att, ", attainment %.1f%% of %" PRIu64 " [%.1f%%, %.1f%%]",
                 100 * p->attainment, p->att_judged, 100 * p->attainment_lo,
                 100 * p->attainment_hi);
    fmt_ms_ci(tt, sizeof tt, p->ttft_p99_ms, one ? no : p->ttft_p99_ci_ms);
    if (!isnan(p->tpot_p99_ms)) {
        char t[48];
        fmt_ms_ci(t, sizeof t, p->tpot_p99_ms, one ? no : p->tpot_p99_ci_ms);
        snprintf(tp, sizeof tp, ", TPOT p99 %s", t);
    }
    fprintf(f, "%*s%.4g req/s, %s: achieved %s, goodput %s req/s%s, TTFT p99 %s%s\n", indent, "",
            p->offered_rps, runs, x, g, att, tt, tp);
}

/* The point of step i when i is the last step of a rate run more than
 * once, else NULL. */
static const struct sweep_point *point_ending_at(const struct sweep_step *steps, size_t n, size_t i,
                                                 const struct sweep_point *points, size_t np)
{
    if (steps[i].f.recovery)
        return NULL;
    for (size_t j = i + 1; j < n; j++)
        if (!steps[j].f.recovery && steps[j].f.offered_rps == steps[i].f.offered_rps)
            return NULL;
    for (size_t p = 0; p < np; p++)
        if (points[p].offered_rps == steps[i].f.offered_rps)
            return points[p].n >= 2 ? &points[p] : NULL;
    return NULL;
}

void sweep_print_table(FILE *f, const struct sweep_step *steps, size_t n,
                       const struct sweep_settings *set)
{
    char a[16], b[16], c[16], d[16];
    int cost = set->cost_per_hour > 0;
    int repeats = sweep_has_repeats(steps, n);
    int w = step_label_width(steps, n, repeats);
    struct sweep_point *points = ll_calloc(n + 1, sizeof *points);
    size_t np = sweep_points_build(steps, n, points);
    fprintf(f, "%*s %8s %8s %8s %8s %7s %9s %9s %9s %9s %6s %11s %6s%s  %s\n", w, "step", "offered",
            "achieved", "compl/s", "goodput", "attain", "TTFT p50", "TTFT p99", "TPOT p99",
            "E2E p99", "err%", "inflight", "hold", cost ? "  $/Mtok" : "", "verdict");
    for (size_t i = 0; i < n; i++) {
        const struct sweep_step *s = &steps[i];
        char att[16], id[32], infl[24];
        if (isnan(s->attainment))
            snprintf(att, sizeof att, "-");
        else
            snprintf(att, sizeof att, "%.1f%%", 100 * s->attainment);
        sweep_step_label(&s->f, repeats, id, sizeof id);
        snprintf(infl, sizeof infl, "%.1f/%.0f", s->f.inflight_mean, s->f.inflight_max);
        /* An embeddings step has no first token: no TTFT to show. */
        int ttft = s->stats.by_kind[REC_OK] && !stats_embeddings(&s->stats);
        fprintf(f, "%*s %8.3g %8.3g %8.3g %8.3g %7s %9s %9s %9s %9s %6.1f %11s", w, id,
                s->f.offered_rps, s->achieved_rps, s->completed_rps, s->goodput_rps, att,
                ttft ? ll_fmt_duration(s->ttft_ns[0], a, sizeof a) : "-",
                ttft ? ll_fmt_duration(s->ttft_ns[3], b, sizeof b) : "-",
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
        /* An interrupted or empty step has no verdict: no reason to fail
         * (an INVALID one says why its figures measured the client, an
         * empty one with requests why none was judged). */
        if (!s->f.recovery && !s->slo_pass && (s->invalid || sweep_step_judged(s) || s->unjudged))
            fprintf(f, " (%s)", s->fail_reason);
        if (s->short_hold)
            fprintf(f, "; short");
        fputc('\n', f);
        const struct sweep_point *pt = point_ending_at(steps, n, i, points, np);
        if (pt)
            print_point_mean(f, pt, w + 1);
    }
    free(points);
    print_server_table(f, steps, n);
    print_energy_table(f, steps, n);
}

/* A class's SLO as the table shows it, "-" without one, " (own)" after
 * its own; written into buf (len bytes), which it returns. */
static const char *class_slo_text(const struct sweep_class_finding *cf, char *buf, size_t len)
{
    char s[64];
    if (!cf->have_slo)
        return "-";
    slo_format(&cf->slo, s, sizeof s);
    snprintf(buf, len, "%s%s", s, cf->own_slo ? " (own)" : "");
    return buf;
}

void sweep_print_classes(FILE *f, const struct sweep_findings *fd)
{
    char a[16], b[16], t[96], cap[48], next[48], at_cap[32];
    if (fd->n_classes == 0)
        return;
    if (fd->capacity_found)
        snprintf(at_cap, sizeof at_cap, "at %.4g req/s", fd->capacity_rps);
    else
        snprintf(at_cap, sizeof at_cap, "at the capacity");
    fprintf(f, "\nby class (own SLO, else the sweep's; p99 %s, the sweep's SLO capacity):\n",
            at_cap);
    /* The SLO column is as wide as the longest SLO: cut, "e2e=20s (own)"
     * read as "e2e=2" and lost whose SLO it was. */
    int w = 26;
    for (size_t k = 0; k < fd->n_classes; k++) {
        int len = (int)strlen(class_slo_text(&fd->classes[k], t, sizeof t));
        if (len > w)
            w = len;
    }
    fprintf(f, "%-15s %-*s %16s %16s %10s %10s\n", "class", w, "SLO", "SLO capacity", "next fails",
            "TTFT p99", "TPOT p99");
    for (size_t k = 0; k < fd->n_classes; k++) {
        const struct sweep_class_finding *cf = &fd->classes[k];
        const char *slo = class_slo_text(cf, t, sizeof t);
        if (cf->capacity_found)
            snprintf(cap, sizeof cap, "%s%.4g req/s", cf->none_failed ? ">=" : "",
                     cf->capacity_rps);
        else
            snprintf(cap, sizeof cap, "not found");
        if (cf->next_fails)
            snprintf(next, sizeof next, "%.4g req/s", cf->next_fail_rps);
        else
            snprintf(next, sizeof next, "-");
        fprintf(f, "%-15.15s %-*s %16s %16s %10s %10s\n", cf->name, w, slo, cap, next,
                cf->at_capacity ? ll_fmt_duration(cf->ttft_p99_at_capacity_ns, a, sizeof a) : "-",
                cf->at_capacity && cf->tpot_p99_at_capacity_ns
                    ? ll_fmt_duration(cf->tpot_p99_at_capacity_ns, b, sizeof b)
                    : "-");
    }
}

void sweep_print_endpoints(FILE *f, const struct sweep_step *steps, size_t n)
{
    const struct sweep_step *first = sweep_first_with_endpoints(steps, n);
    if (!first)
        return;
    fprintf(f, "\nby endpoint (each step's window requests):\n");
    char shown[512];
    for (size_t k = 0; k < first->f.n_endpoints; k++)
        fprintf(f, "  endpoint %zu: %s\n", k,
                first->f.endpoints[k].url ? ll_shown(first->f.endpoints[k].url, shown, sizeof shown)
                                          : "?");
    int repeats = sweep_has_repeats(steps, n), w = step_label_width(steps, n, repeats);
    fprintf(f, "%-*s %10s %8s %8s %8s %10s %10s\n", w, "step", "offered", "endpoint", "requests",
            "errors", "TTFT p99", "TPOT p99");
    for (size_t i = 0; i < n; i++) {
        const struct sweep_step *s = &steps[i];
        char id[32], a[16], b[16];
        sweep_step_label(&s->f, repeats, id, sizeof id);
        for (size_t k = 0; k < s->f.n_endpoints; k++) {
            const struct sweep_endpoint *e = &s->endpoints[k];
            int ok = e->stats.by_kind[REC_OK] > 0;
            fprintf(f, "%-*s %10.4g %8zu %8" PRIu64 " %8" PRIu64 " %10s %10s\n", w,
                    k == 0 ? id : "", s->f.offered_rps, k, e->stats.completed,
                    stats_errors(&e->stats), ok ? ll_fmt_duration(e->ttft_ns[3], a, sizeof a) : "-",
                    hist_count(e->stats.tpot) ? ll_fmt_duration(e->tpot_ns[3], b, sizeof b) : "-");
        }
    }
}
