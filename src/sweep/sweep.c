/* sweep.c: per-step figures, verdicts, stop conditions and findings of a
 * sweep (see sweep.h; the rules in words are in docs/sweep.md). The tables
 * that print them are in steptable.c. */
#include "sweep/sweep.h"

#include <inttypes.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "measure/compare.h"
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
    stats_init(&s->cold);
    s->ttft_h1 = hist_new();
    s->ttft_h2 = hist_new();
    s->f.lateness = hist_new();
    s->recovery.first_miss_ns = s->recovery.last_miss_ns = LL_NO_TIME;
    s->recovery.back_ns = s->recovery.recovery_ns = LL_NO_TIME;
    s->backlog_at_switch = NAN;
    sweep_server_clear(&s->f.server);
    sweep_energy_clear(&s->f.energy);
    s->j_per_output_token = s->j_per_request = s->output_tokens_per_j = s->mean_power_w = NAN;
}

void sweep_energy_clear(struct sweep_energy *e)
{
    memset(e, 0, sizeof *e);
    e->energy_j = e->max_power_w = e->util_mean_pct = NAN;
}

void sweep_server_clear(struct sweep_server *srv)
{
    memset(srv, 0, sizeof *srv);
    srv->waiting_mean = srv->waiting_max = NAN;
    srv->running_mean = srv->running_max = NAN;
    srv->kv_mean = srv->kv_max = NAN;
    srv->kv_capacity_tokens = NAN;
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

/* a / b, NAN unless both are finite and b is above 0. */
static double energy_ratio(double a, double b)
{
    return isfinite(a) && isfinite(b) && b > 0 ? a / b : NAN;
}

/* The step's energy figures from f.energy and the records over its span:
 * the client's output tokens received in the span (as the server join
 * counts them) and the ok requests that ended in it. A shard's own step
 * (its offered rate a share of the ladder's) keeps the energy and power
 * but no per-token or per-request figure: its tokens are a share of the
 * step's, the GPUs' energy all of it (as a sharded run's summary);
 * `llmload merge` divides by the merged records'. */
static void step_energy_finish(struct sweep_step *s)
{
    const struct sweep_energy *e = &s->f.energy;
    s->j_per_output_token = s->j_per_request = s->output_tokens_per_j = s->mean_power_w = NAN;
    if (!e->present || !e->has_span || !isfinite(e->energy_j))
        return;
    double span_s = (double)(e->span_to_ns - e->span_from_ns) / 1e9;
    s->mean_power_w = energy_ratio(e->energy_j, span_s);
    if (s->f.global_offered_rps > s->f.offered_rps * (1 + 1e-9))
        return;
    s->j_per_output_token = energy_ratio(e->energy_j, s->energy_tokens_in_span);
    s->j_per_request = energy_ratio(e->energy_j, (double)s->energy_ok_in_span);
    s->output_tokens_per_j = energy_ratio(s->energy_tokens_in_span, e->energy_j);
}

void sweep_step_free(struct sweep_step *s)
{
    stats_free(&s->stats);
    stats_free(&s->cold);
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
    for (size_t k = 0; k < s->f.n_endpoints; k++) {
        if (s->endpoints)
            stats_free(&s->endpoints[k].stats);
        if (s->f.endpoints)
            free(s->f.endpoints[k].url);
    }
    free(s->endpoints);
    free(s->f.endpoints);
    memset(s, 0, sizeof *s);
}

void sweep_step_endpoints_init(struct sweep_step *s, size_t n)
{
    if (n < 2 || n > SWEEP_MAX_ENDPOINTS || s->f.n_endpoints) {
        ll_errorf("sweep_step_endpoints_init: bad endpoint count %zu", n);
        abort();
    }
    s->f.endpoints = ll_calloc(n, sizeof *s->f.endpoints);
    s->endpoints = ll_calloc(n, sizeof *s->endpoints);
    s->f.n_endpoints = n;
    for (size_t k = 0; k < n; k++)
        stats_init(&s->endpoints[k].stats);
}

/* Count r towards its endpoint in s: its window records as the step's
 * total counts them (warm-up and cold ones apart), and the output tokens
 * of its ok records that ended inside the window. A record without an
 * endpoint, or of one past the facts' count, counts only in the total. */
static void endpoint_add_record(struct sweep_step *s, const struct record *r)
{
    if (r->endpoint < 0 || (size_t)r->endpoint >= s->f.n_endpoints)
        return;
    struct sweep_endpoint *e = &s->endpoints[r->endpoint];
    if (r->kind == REC_OK && in_window(&s->f, r->end_ns))
        e->output_tokens_ended += r->output_tokens;
    if (r->cold || r->warmup || r->sched_ns < s->f.warmup_ns)
        return;
    stats_add_record(&e->stats, r);
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
        if (!r->cold && (!have || slo_met(slo, r)))
            c->met_ended_in_window++;
    }
    if (r->cold || r->warmup || r->sched_ns < s->f.warmup_ns)
        return;
    stats_add_record(&c->stats, r);
    if (have)
        stats_add_slo(&c->stats, slo_judge(slo, r));
    if (r->sent_ns != LL_NO_TIME && r->sent_ns <= s->f.duration_ns)
        c->sent_in_window++;
}

int sweep_step_has_slo(const struct sweep_step *s, const struct sweep_settings *set)
{
    if (slo_is_set(&set->slo))
        return 1;
    for (size_t k = 0; k < s->f.n_classes; k++)
        if (slo_is_set(&s->f.classes[k].own_slo))
            return 1;
    return 0;
}

void sweep_step_add_record(struct sweep_step *s, const struct record *r,
                           const struct sweep_settings *set)
{
    const struct sweep_facts *f = &s->f;
    /* The SLO a request meets is its class's (its own, else the sweep's);
     * with an SLO anywhere, a request whose class has none meets it by
     * completing ok (docs/sweep.md). */
    const struct slo *slo = &set->slo;
    if (f->n_classes) {
        int k = sweep_step_class_find(s, r->cls);
        if (k >= 0) {
            class_add_record(s, (size_t)k, r, set);
            slo = class_slo(s, (size_t)k, set);
        }
    }
    int have_slo = sweep_step_has_slo(s, set), own = slo_is_set(slo);
    /* The backlog the recovery starts from: every request, warm-up and
     * cold ones too, sent by the switch and not ended by it. */
    if (f->recovery && f->overload_rps > 0) {
        s->switch_records++;
        s->switch_inflight += r->sent_ns != LL_NO_TIME && r->sent_ns <= f->warmup_ns &&
                              (r->end_ns == LL_NO_TIME || r->end_ns > f->warmup_ns);
    }
    /* Rates count what the server finished inside the window, whichever
     * request it was: completions, goodput and tokens all flatten at
     * capacity instead of echoing the offered load (docs/metrics.md). */
    if (r->kind == REC_OK && in_window(f, r->end_ns)) {
        s->ok_ended_in_window++;
        /* Goodput is the warm requests': a cold one counts only in
         * the cold figures. */
        if (!r->cold && (!own || slo_met(slo, r)))
            s->met_ended_in_window++;
        s->prompt_tokens_ended += r->prompt_tokens_server >= 0 ? (uint64_t)r->prompt_tokens_server
                                                               : r->prompt_tokens;
        s->output_tokens_ended += r->output_tokens;
    }
    if (f->n_endpoints)
        endpoint_add_record(s, r);
    if (f->server.has_span)
        s->client_tokens_in_span += tokens_in_span(r, f->server.span_from_ns,
                                                   f->server.span_to_ns);
    if (f->energy.has_span) {
        s->energy_tokens_in_span += tokens_in_span(r, f->energy.span_from_ns, f->energy.span_to_ns);
        if (r->kind == REC_OK && r->end_ns != LL_NO_TIME && r->end_ns >= f->energy.span_from_ns &&
            r->end_ns <= f->energy.span_to_ns)
            s->energy_ok_in_span++;
    }
    if (r->cold) {
        s->cold.scheduled++;
        if (r->sent_ns != LL_NO_TIME)
            s->cold.sent++;
        stats_add_record(&s->cold, r);
        return;
    }
    if (r->warmup || r->sched_ns < f->warmup_ns)
        return;
    stats_add_record(&s->stats, r);
    /* A class without an SLO of its own, in a step with one elsewhere:
     * completing ok meets it (slo_judge with no threshold set). */
    static const struct slo none;
    int judged = slo_judge(own ? slo : &none, r);
    if (have_slo)
        stats_add_slo(&s->stats, judged);
    if (r->kind == REC_OK && r->first_ns != LL_NO_TIME && r->first_ns >= r->sched_ns) {
        uint64_t half = f->warmup_ns + (f->duration_ns - f->warmup_ns) / 2;
        hist_record(r->sched_ns >= half ? s->ttft_h2 : s->ttft_h1, r->first_ns - r->sched_ns);
    }
    if (r->sent_ns != LL_NO_TIME && r->sent_ns <= f->duration_ns) {
        s->sent_in_window++;
        s->request_bytes_in_window += r->request_bytes;
    }
    /* A request the client cancelled counts as attainment judges it: a
     * miss it had already shown (its first token after the TTFT threshold,
     * or none by then: latency had not recovered for it), met when that
     * was decided; else it says nothing of whether latency recovered. */
    if (judged == SLO_UNJUDGED)
        return;
    if (s->n_met == s->cap_met) {
        s->cap_met = s->cap_met ? s->cap_met * 2 : 256;
        s->met_sched_ns = ll_realloc(s->met_sched_ns, s->cap_met * sizeof *s->met_sched_ns);
        s->met = ll_realloc(s->met, s->cap_met * sizeof *s->met);
    }
    s->met_sched_ns[s->n_met] = r->sched_ns;
    s->met[s->n_met] = (unsigned char)judged;
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

/* Seconds (a diagnosis' CPU or wall time) as ns; 0 when not known, and
 * at most about 9e9 s (a sum of many runs' figures). */
static uint64_t secs_ns(double s)
{
    if (!isfinite(s) || s <= 0)
        return 0;
    return s < 9e9 ? (uint64_t)llround(s * 1e9) : (uint64_t)9e18;
}

static uint64_t window_ns_of(const struct sweep_facts *f)
{
    return f->window_ns                    ? f->window_ns
           : f->duration_ns > f->warmup_ns ? f->duration_ns - f->warmup_ns
                                           : 0;
}

static double window_s(const struct sweep_facts *f)
{
    uint64_t w = window_ns_of(f);
    return w ? (double)w / 1e9 : 1e-9;
}

static double inflight_growth(const struct sweep_facts *f)
{
    return sweep_inflight_growth(f->series, f->n_series, f->warmup_ns, f->duration_ns,
                                 window_ns_of(f), f->interrupted);
}

/* One side's value at t: its last sample at or before t, held for
 * SWEEP_SERIES_EVERY_NS after its series ends, then 0. */
static uint32_t series_held(const struct inflight_sample *last, int ended, uint64_t t)
{
    if (!last)
        return 0;
    return ended && t > last->t_ns + SWEEP_SERIES_EVERY_NS ? 0 : last->inflight;
}

void sweep_series_add(struct sweep_facts *dst, const struct sweep_facts *src)
{
    size_t n = dst->n_series + src->n_series, i = 0, j = 0, k = 0;
    struct inflight_sample *out = ll_calloc(n + 1, sizeof *out);
    const struct inflight_sample *a = NULL, *b = NULL; /* the last taken of each */
    while (i < dst->n_series || j < src->n_series) {
        uint64_t t;
        if (j >= src->n_series ||
            (i < dst->n_series && dst->series[i].t_ns <= src->series[j].t_ns)) {
            t = dst->series[i].t_ns;
            a = &dst->series[i++];
            if (j < src->n_series && src->series[j].t_ns == t)
                b = &src->series[j++];
        } else {
            t = src->series[j].t_ns;
            b = &src->series[j++];
        }
        out[k++] = (struct inflight_sample){.t_ns = t,
                                            .inflight = series_held(a, i == dst->n_series, t) +
                                                        series_held(b, j == src->n_series, t)};
    }
    free(dst->series);
    dst->series = out;
    dst->n_series = k;
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
    /* A class whose every request the client cancelled before a miss
     * judged nothing: no attainment (NAN), and, as a class with no
     * request, no attainment to fail; a low step with a request or two
     * of a cancel-heavy class must not deny it an SLO capacity. */
    c->attainment = c->have_slo ? stats_attainment(st) : NAN;
    c->error_rate = stats_error_rate(st);
    fill_pcts(st->ttft, c->ttft_ns);
    fill_pcts(st->tpot, c->tpot_ns);
    fill_pcts(st->e2e, c->e2e_ns);
    c->fail_reason[0] = '\0';
    if (st->scheduled == 0) {
        /* no request of the class in the window: nothing failed */
    } else if (c->have_slo && stats_share_cmp(c->attainment, set->attainment) < 0) {
        snprintf(c->fail_reason, sizeof c->fail_reason, "attainment %.1f%% < %.4g%%",
                 100 * c->attainment, 100 * set->attainment);
    } else if (!c->have_slo && stats_share_cmp(c->error_rate, set->max_error_rate) > 0) {
        snprintf(c->fail_reason, sizeof c->fail_reason, "error rate %.1f%% > %.4g%%",
                 100 * c->error_rate, 100 * set->max_error_rate);
    } else if (!s->steady) {
        snprintf(c->fail_reason, sizeof c->fail_reason, "not steady: %.140s", s->steady_reason);
    }
    c->slo_pass = c->fail_reason[0] == '\0';
}

/* The derived figures of endpoint k of s, w the window in s. */
static void endpoint_finish(struct sweep_step *s, size_t k, double w)
{
    struct sweep_endpoint *e = &s->endpoints[k];
    struct stats *st = &e->stats;
    st->scheduled = s->f.endpoints[k].scheduled ? s->f.endpoints[k].scheduled : st->completed;
    e->error_rate = stats_error_rate(st);
    e->output_tps = (double)e->output_tokens_ended / w;
    fill_pcts(st->ttft, e->ttft_ns);
    fill_pcts(st->tpot, e->tpot_ns);
    fill_pcts(st->e2e, e->e2e_ns);
}

void sweep_step_finish(struct sweep_step *s, const struct sweep_settings *set)
{
    const struct sweep_facts *f = &s->f;
    struct stats *st = &s->stats;
    double w = window_s(f);
    uint64_t n_window = st->completed;
    st->scheduled = f->scheduled ? f->scheduled : n_window;
    st->sent = s->sent_in_window;
    int have_slo = sweep_step_has_slo(s, set);

    s->achieved_rps = (double)s->sent_in_window / w;
    s->completed_rps = (double)s->ok_ended_in_window / w;
    s->goodput_rps = (double)s->met_ended_in_window / w;
    /* Nothing judged (no request, or every one cancelled by the client
     * before the SLO was decided): no attainment (NAN), and the step is
     * "empty", left out as one with no request (sweep_step_judged): it
     * read 0% and failed, blaming the server for what the client cut. */
    s->attainment = have_slo ? stats_attainment(st) : NAN;
    s->input_tps = (double)s->prompt_tokens_ended / w;
    s->output_tps = (double)s->output_tokens_ended / w;
    /* A sent body is never empty: none counted means records written
     * before request_bytes was kept, an unknown, not 0 bytes/s. */
    s->request_bytes_per_s =
        s->request_bytes_in_window ? (double)s->request_bytes_in_window / w : NAN;
    s->error_rate = stats_error_rate(st);
    fill_pcts(st->ttft, s->ttft_ns);
    fill_pcts(st->tpot, s->tpot_ns);
    fill_pcts(st->itl_req, s->itl_ns);
    fill_pcts(st->e2e, s->e2e_ns);
    fill_pcts(f->lateness, s->lateness_ns);
    /* The hold rule (SWEEP_DEFAULT_MIN_HOLD_FACTOR), for load steps. */
    s->hold_factor =
        hist_count(st->e2e) && s->e2e_ns[3] > 0 ? window_s(f) / ((double)s->e2e_ns[3] / 1e9) : NAN;
    /* An interrupted step is short because it was cut, not because its
     * hold was: the advice to lengthen it would be wrong. */
    s->short_hold = !f->recovery && !f->interrupted && isfinite(s->hold_factor) &&
                    s->hold_factor < sweep_min_hold_factor(set);
    /* `run`'s self-check, per step (docs/metrics.md). With the step's
     * lateness diagnosis its reason says whose the lateness was, as
     * run's; without one (older files) the short reason it always gave. */
    struct verdict_input v = {.lateness = f->lateness, .tolerance = set->lateness_tolerance};
    if (f->late.known) {
        v.late_sends = f->late.late_sends;
        v.late_asleep = f->late.asleep;
        v.cpu_ns = secs_ns(f->late.cpu_s);
        v.wall_ns = secs_ns(f->late.wall_s);
        v.invol_switches = v.wall_ns ? f->late.invol_switches : 0;
        v.kept = "the schedule";
    }
    verdict_latencies(&v, st);
    struct verdict vd;
    s->invalid = verdict_judge(&v, &vd);
    snprintf(s->invalid_reason, sizeof s->invalid_reason, "%s", vd.reason);
    snprintf(s->lateness_warning, sizeof s->lateness_warning, "%s", vd.warning);
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

    sweep_tail_test(s->ttft_h1, s->ttft_h2, f->window_ns, &s->tail);
    s->steady = sweep_steady_verdict(&s->tail, s->inflight_growth, f->inflight_mean, "step",
                                     s->steady_reason, sizeof s->steady_reason);
    s->fail_reason[0] = '\0';
    /* Requests in the window and none the verdict could judge: with an
     * SLO, every one cancelled by the client before it was decided (the
     * attainment of none); without, every one cancelled (the error rate
     * of none, which reads 0). Empty, as a step with no request: it read
     * 0% or passed, the server blamed at that rate or a capacity found
     * that no request the server ended stood behind. */
    s->unjudged = !f->recovery && st->scheduled > 0 &&
                  (have_slo ? st->scheduled <= st->slo_unjudged
                            : st->completed > 0 && stats_let_end(st) == 0);
    if (!f->recovery && st->scheduled == 0) {
        /* "empty" (sweep_step_verdict): no attainment to miss */
        snprintf(s->fail_reason, sizeof s->fail_reason, "no request scheduled in its window");
    } else if (s->unjudged) {
        snprintf(s->fail_reason, sizeof s->fail_reason,
                 "no request judged: the client cancelled all %" PRIu64 "%s", st->completed,
                 have_slo ? " before the SLO was decided" : " (no error rate)");
    } else if (have_slo && stats_share_cmp(s->attainment, set->attainment) < 0) {
        snprintf(s->fail_reason, sizeof s->fail_reason, "attainment %.1f%% < %.4g%%",
                 100 * s->attainment, 100 * set->attainment);
    } else if (!have_slo && stats_share_cmp(s->error_rate, set->max_error_rate) > 0) {
        snprintf(s->fail_reason, sizeof s->fail_reason, "error rate %.1f%% > %.4g%%",
                 100 * s->error_rate, 100 * set->max_error_rate);
    } else if (!s->steady) {
        snprintf(s->fail_reason, sizeof s->fail_reason, "not steady: %.140s", s->steady_reason);
    }
    s->slo_pass = s->fail_reason[0] == '\0';
    for (size_t k = 0; k < f->n_classes; k++)
        class_finish(s, k, set, w);
    for (size_t k = 0; k < f->n_endpoints; k++)
        endpoint_finish(s, k, w);
    s->cost_per_mtok = sweep_cost_per_mtok(set->cost_per_hour, set->replicas, s->output_tps);
    step_energy_finish(s);
    if (f->recovery) {
        sweep_recovery_measure(s->met_sched_ns, s->met, s->n_met, f->warmup_ns, f->duration_ns,
                               SWEEP_RECOVERY_TAIL_NS, &s->recovery);
        /* The records say it exactly; the 100 ms samples only near it (a
         * sample 0.1 s before the switch read 0 where 7 were in flight,
         * against llama.cpp). Without records, the last sample. */
        s->backlog_at_switch = NAN;
        for (size_t i = 0; f->overload_rps > 0 && i < f->n_series; i++)
            if (f->series[i].t_ns <= f->warmup_ns)
                s->backlog_at_switch = f->series[i].inflight;
        if (f->overload_rps > 0 && s->switch_records)
            s->backlog_at_switch = (double)s->switch_inflight;
    }
}

/* ---- pure parts (the recovery step's measure is recovery.c) ------------ */

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

/* Point pt's attainment over its k runs in the means, from the pooled
 * counts point_means summed (sweep.h, struct sweep_point). */
static void point_attainment(struct sweep_point *pt, uint32_t k)
{
    pt->attainment_lo = pt->attainment_hi = NAN;
    pt->attainment_ci = 0;
    if (pt->att_judged == 0) {
        pt->attainment = NAN;
        return;
    }
    pt->attainment = (double)pt->att_met / (double)pt->att_judged;
    if (k < 2)
        return;
    cmp_wilson(pt->att_met, pt->att_judged, SWEEP_Z95, &pt->attainment_lo, &pt->attainment_hi);
    pt->attainment_ci =
        fmax(pt->attainment - pt->attainment_lo, pt->attainment_hi - pt->attainment);
}

/* The means of point pt over its runs from steps[first], judged ones
 * only when judged is set (docs/sweep.md, "--repeat"), and whether every
 * one of those is steady. The scratch arrays hold one value a run. */
struct point_scratch {
    double *g, *c, *t, *x, *tp;
};

static void point_means(struct sweep_point *pt, const struct sweep_step *steps, size_t n,
                        size_t first, int judged, const struct point_scratch *w)
{
    double err = 0, otps = 0;
    uint32_t k = 0, ktp = 0;
    pt->steady = 1;
    for (size_t j = first; j < n; j++) {
        const struct sweep_step *s = &steps[j];
        if (s->f.recovery || s->f.offered_rps != pt->offered_rps ||
            (judged && !sweep_step_judged(s)))
            continue;
        w->g[k] = s->goodput_rps;
        w->c[k] = s->completed_rps;
        w->t[k] = (double)s->ttft_ns[3] / 1e6;
        w->x[k] = s->achieved_rps;
        if (hist_count(s->stats.tpot))
            w->tp[ktp++] = (double)s->tpot_ns[3] / 1e6;
        err += s->error_rate;
        otps += s->output_tps;
        if (!isnan(s->attainment)) {
            pt->att_met += s->stats.slo_met;
            pt->att_judged +=
                s->stats.scheduled - LL_MIN(s->stats.slo_unjudged, s->stats.scheduled);
        }
        pt->met_n += s->met_ended_in_window;
        pt->ok_n += s->ok_ended_in_window;
        pt->window_s += (double)s->f.window_ns / 1e9;
        pt->steady &= s->steady != 0;
        k++;
    }
    fit_mean_ci95(w->g, k, &pt->goodput_rps, &pt->goodput_ci);
    fit_mean_ci95(w->c, k, &pt->completed_rps, &pt->completed_ci);
    point_attainment(pt, k);
    fit_mean_ci95(w->t, k, &pt->ttft_p99_ms, &pt->ttft_p99_ci_ms);
    fit_mean_ci95(w->x, k, &pt->achieved_rps, &pt->achieved_ci);
    fit_mean_ci95(w->tp, ktp, &pt->tpot_p99_ms, &pt->tpot_p99_ci_ms);
    if (!ktp)
        pt->tpot_p99_ms = pt->tpot_p99_ci_ms = NAN;
    pt->error_rate = k ? err / k : 0;
    pt->output_tps = k ? otps / k : 0;
}

double sweep_light_p(uint64_t arrivals, double expected)
{
    return fit_poisson_cdf(arrivals, expected);
}

/* The light-draw rule over point pt's judged runs from steps[first]: their
 * sends and their offered counts pooled (the sum of Poisson counts is one),
 * a passing point marked light when the sends fall short beyond
 * SWEEP_LIGHT_ALPHA. */
static void point_light(struct sweep_point *pt, const struct sweep_step *steps, size_t n,
                        size_t first)
{
    pt->light_p = 1;
    if (pt->unknown)
        return;
    for (size_t j = first; j < n; j++) {
        const struct sweep_step *s = &steps[j];
        if (s->f.recovery || s->f.offered_rps != pt->offered_rps || !sweep_step_judged(s))
            continue;
        pt->arrivals += s->sent_in_window;
        pt->expected_arrivals += s->f.offered_rps * (double)window_ns_of(&s->f) / 1e9;
    }
    pt->light_p = sweep_light_p(pt->arrivals, pt->expected_arrivals);
    pt->light = pt->pass && pt->light_p < SWEEP_LIGHT_ALPHA;
}

size_t sweep_points_build(const struct sweep_step *steps, size_t n, struct sweep_point *points)
{
    size_t np = 0;
    struct point_scratch w = {
        ll_malloc((n + 1) * sizeof(double)), ll_malloc((n + 1) * sizeof(double)),
        ll_malloc((n + 1) * sizeof(double)), ll_malloc((n + 1) * sizeof(double)),
        ll_malloc((n + 1) * sizeof(double))};
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
        pt->fail_reason = "";
        uint32_t k = 0;
        int rerun_passed = 0, any_invalid = 0, any_cut = 0, any_scheduled = 0;
        /* Whose the lateness of its INVALID repeats was: their counts
         * summed, as a merge sums its shards'. */
        struct sweep_late late = {.known = 1};
        for (size_t j = i; j < n; j++) {
            const struct sweep_step *s = &steps[j];
            if (s->f.recovery || s->f.offered_rps != pt->offered_rps)
                continue;
            /* An INVALID repeat measured the client, an interrupted one
             * less than its hold, an empty one nothing: it neither passes
             * nor fails the point, nor counts in its means (docs/sweep.md,
             * "INVALID steps", "Ctrl-C"). */
            int judged = sweep_step_judged(s);
            pt->n_judged += (uint32_t)judged;
            any_invalid |= s->invalid;
            if (s->invalid)
                sweep_late_add(&late, &s->f.late);
            any_cut |= s->f.interrupted;
            any_scheduled |= s->stats.scheduled > 0;
            pt->rerun_steps += (uint32_t)s->f.confirm;
            if (judged && s->f.confirm) {
                pt->reruns++;
                rerun_passed |= s->slo_pass;
            }
            if (judged && !s->slo_pass && pt->pass) {
                pt->pass = 0;
                pt->fail_reason = s->fail_reason;
            }
            k++;
        }
        pt->n = k;
        pt->late_cause = any_invalid ? sweep_late_cause(&late) : VERDICT_LATE_NONE;
        pt->unknown = pt->n_judged == 0;
        pt->cut = pt->unknown && !any_invalid && any_cut;
        pt->empty = pt->unknown && !any_invalid && !any_cut;
        pt->empty_cancelled = pt->empty && any_scheduled;
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
        point_means(pt, steps, n, i, !pt->unknown, &w);
        point_light(pt, steps, n, i);
    }
    free(w.g);
    free(w.c);
    free(w.t);
    free(w.x);
    free(w.tp);
    return np;
}

/* Whether count c1 over t1 seconds fell short of ratio times the rate of
 * c0 over t0 beyond counting noise: under "no shortfall" the two are
 * Poisson with rates r and ratio r, so c1 given c0 + c1 is Binomial with
 * p = ratio t1 / (t0 + ratio t1); the shortfall stands when P(X <= c1)
 * is under SWEEP_FALL_ALPHA. Without a window on either side (t 0) the
 * counts are not known, and the caller's relative rule decides alone. */
static int fell_beyond_noise(uint64_t c0, double t0, uint64_t c1, double t1, double ratio)
{
    if (!(t0 > 0) || !(t1 > 0))
        return 1;
    double p = ratio * t1 / (t0 + ratio * t1);
    return fit_binom_cdf(c0 + c1, c1, p) < SWEEP_FALL_ALPHA;
}

int sweep_stop_check(const struct sweep_point *points, size_t n, const struct sweep_settings *set,
                     char *reason, size_t len)
{
    if (n == 0)
        return 0;
    const struct sweep_point *last = &points[n - 1];
    char a[16], b[16];
    if (stats_share_cmp(last->error_rate, set->max_error_rate) > 0) {
        snprintf(reason, len, "error rate %.1f%% > %.4g%% at %.4g req/s", 100 * last->error_rate,
                 100 * set->max_error_rate, last->offered_rps);
        return 1;
    }
    if (set->ttft_limit_ns && last->ttft_p99_ms * 1e6 > (double)set->ttft_limit_ns) {
        /* Still a stop (the server may be hurting), but an INVALID step's
         * TTFT holds the schedule's lateness: say so, and whose it was. A
         * judged point's mean leaves its INVALID runs out. */
        int inv = last->unknown && !last->cut && !last->empty;
        snprintf(reason, len, "TTFT p99 %s over the safety limit %s at %.4g req/s%s%s%s",
                 ll_fmt_duration((uint64_t)(last->ttft_p99_ms * 1e6), a, sizeof a),
                 ll_fmt_duration(set->ttft_limit_ns, b, sizeof b), last->offered_rps,
                 inv ? " (an INVALID step: " : "", inv ? sweep_late_whose(last->late_cause) : "",
                 inv ? " is in it)" : "");
        return 1;
    }
    /* The trends read judged points only: an INVALID step's goodput fell
     * by the generator's lateness, an empty or cut one's by having no
     * window, and neither says the server plateaued or fell. A last
     * point that was not judged adds nothing to a trend (k stays 0). */
    size_t *idx = ll_malloc(n * sizeof *idx), k = 0;
    double *good = ll_malloc(n * sizeof *good), *done = ll_malloc(n * sizeof *done);
    for (size_t i = 0; i < n && !last->unknown; i++) {
        if (points[i].unknown)
            continue;
        good[k] = points[i].goodput_rps;
        done[k] = points[i].completed_rps;
        idx[k++] = i;
    }
    int stop = 0;
    if (k >= 3) {
        double peak = 0, at = 0;
        const struct sweep_point *pk = NULL;
        for (size_t i = 0; i + 2 < k; i++) {
            if (good[i] > peak) {
                peak = good[i];
                at = points[idx[i]].offered_rps;
                pk = &points[idx[i]];
            }
        }
        /* A fall under more load than the peak's: a ladder given in
         * falling order offers less, and its goodput follows. And a fall
         * beyond counting noise: 13 requests in a 2 s window move by
         * +-7, so 12 and 11 after them are no fall. */
        const struct sweep_point *p1 = &points[idx[k - 2]], *p2 = &points[idx[k - 1]];
        if (peak > 0 && good[k - 1] < SWEEP_GOODPUT_FALL * peak &&
            good[k - 2] < SWEEP_GOODPUT_FALL * peak && p2->offered_rps > at &&
            p1->offered_rps > at &&
            fell_beyond_noise(pk->met_n, pk->window_s, p1->met_n, p1->window_s, 1) &&
            fell_beyond_noise(pk->met_n, pk->window_s, p2->met_n, p2->window_s, 1)) {
            /* An unjudged rate between the two is left out: they are the
             * last two judged, not two in a row. */
            snprintf(reason, len,
                     "goodput fell below its peak (%.4g req/s at %.4g req/s offered) %s", peak, at,
                     idx[k - 1] - idx[k - 2] > 1 ? "at the last two judged steps"
                                                 : "two steps in a row");
            stop = 1;
        }
    }
    /* A plateau: completions up less than 5% while the offered rate rose
     * 15% or more, and short of a rise in proportion to it beyond
     * counting noise (13 completions in 2 s, then 13 again at 1.34 x the
     * offered rate, is P = 0.29 under "kept up": no plateau). Measured
     * from the lowest judged rate, two or more points back, whose
     * completions the last one's do not pass by 5%: the widest span of
     * the flat, so the evidence grows with each step into it. Against the
     * point two back alone an auto ladder's 1.2 x never got there below
     * 30 req/s on 10 s steps (96, 100 and 100 completions at 9.6, 11.7
     * and 14.2 req/s offered: P 0.097 against 11.7, 0.0087 against 9.6),
     * and the sweep ran on to 2.5 x its estimate. */
    const struct sweep_point *q0 = NULL;
    for (size_t i = 0; k >= 3 && i + 2 < k && !q0; i++)
        if (done[k - 1] < 1.05 * done[i] && last->offered_rps >= 1.15 * points[idx[i]].offered_rps)
            q0 = &points[idx[i]];
    if (!stop && set->auto_rates && q0 && !last->steady &&
        fell_beyond_noise(q0->ok_n, q0->window_s, last->ok_n, last->window_s,
                          last->offered_rps / q0->offered_rps)) {
        snprintf(reason, len, "throughput plateau: %.4g req/s completed at %.4g req/s offered",
                 done[k - 1], last->offered_rps);
        stop = 1;
    }
    free(idx);
    free(good);
    free(done);
    if (stop)
        return 1;
    if (set->auto_rates && set->estimate_rps > 0 && last->offered_rps >= 2.5 * set->estimate_rps) {
        snprintf(reason, len, "offered load reached 250%% of the estimated capacity (%.4g req/s)",
                 set->estimate_rps);
        return 1;
    }
    return 0;
}

const char *sweep_step_verdict(const struct sweep_step *s, int csv)
{
    if (s->f.recovery)
        return "recovery";
    if (s->f.interrupted)
        return "interrupted";
    if (s->stats.scheduled == 0 || s->unjudged)
        return "empty";
    if (s->invalid)
        return csv ? "invalid" : "INVALID";
    if (!s->steady)
        return "unstable";
    if (!s->slo_pass)
        return csv ? "slo_miss" : "SLO miss";
    return "ok";
}

void sweep_late_add(struct sweep_late *dst, const struct sweep_late *src)
{
    dst->known = dst->known && src->known;
    dst->late_sends += src->late_sends;
    dst->asleep += src->asleep;
    dst->cpu_s += src->cpu_s; /* NAN stays NAN: not known */
    dst->wall_s += src->wall_s;
    dst->invol_switches += src->invol_switches;
}

enum verdict_late_cause sweep_late_cause(const struct sweep_late *l)
{
    if (!l->known)
        return VERDICT_LATE_NONE;
    uint64_t wall = secs_ns(l->wall_s);
    return verdict_late_cause(l->late_sends, l->asleep, wall ? secs_ns(l->cpu_s) : 0, wall,
                              wall ? l->invol_switches : 0);
}

int sweep_step_judged(const struct sweep_step *s)
{
    return !s->invalid && !s->f.interrupted && s->stats.scheduled > 0 && !s->unjudged;
}

const struct sweep_step *sweep_first_with_classes(const struct sweep_step *steps, size_t n)
{
    for (size_t i = 0; i < n; i++)
        if (steps[i].f.n_classes)
            return &steps[i];
    return NULL;
}

const struct sweep_step *sweep_first_with_endpoints(const struct sweep_step *steps, size_t n)
{
    for (size_t i = 0; i < n; i++)
        if (steps[i].f.n_endpoints)
            return &steps[i];
    return NULL;
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
