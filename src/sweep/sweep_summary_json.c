/* sweep_summary_json.c: summary.json of a sweep (sweep_summary_json in
 * sweep_json.h): each step's figures, its classes and endpoints, the
 * findings, the settings. Moved out of sweep_json.c unchanged: summary.json
 * is byte for byte what it was (tests/data/report/sweep-classes holds one
 * to compare). */
#include "sweep/sweep_json.h"

#include <math.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "measure/slo.h"
#include "measure/summary.h"
#include "sweep/sweep_jsonput.h"
#include "util/util.h"

static json_t *pct_json(const uint64_t *v, int any)
{
    json_t *o = json_object();
    for (int i = 0; i < SWEEP_NPCT; i++)
        jset(o, sweep_pct_keys[i], any ? ju64(v[i]) : json_null());
    return o;
}

/* The counts and rates a step and each of its classes report alike: of
 * the requests scheduled in the window, how many ended ok, failed or met
 * the SLO, and the achieved, completed and goodput rates (req/s) and the
 * attainment (0..1) computed from them. */
static void put_outcomes(json_t *o, const struct stats *st, double achieved_rps,
                         double completed_rps, double goodput_rps, double attainment)
{
    jset(o, "scheduled", ju64(st->scheduled));
    jset(o, "ok", ju64(st->by_kind[REC_OK]));
    jset(o, "failed", ju64(stats_failed(st)));
    jset(o, "slo_met", ju64(st->slo_met));
    jset(o, "slo_unjudged", ju64(st->slo_unjudged));
    jset(o, "achieved_rps", jnum(achieved_rps));
    jset(o, "completed_rps", jnum(completed_rps));
    jset(o, "goodput_rps", jnum(goodput_rps));
    jset(o, "attainment", jnum(attainment));
}

/* The "latency_ns" of a part of a step (a class or an endpoint) whose
 * requests are st: the percentiles of TTFT and E2E (null when none ended
 * ok) and of TPOT (null when no request had one). */
static json_t *part_latency_json(const struct stats *st, const uint64_t *ttft_ns,
                                 const uint64_t *tpot_ns, const uint64_t *e2e_ns)
{
    int ok = st->by_kind[REC_OK] > 0;
    json_t *lat = json_object();
    jset(lat, "ttft", pct_json(ttft_ns, ok));
    jset(lat, "tpot", pct_json(tpot_ns, hist_count(st->tpot) > 0));
    jset(lat, "e2e", pct_json(e2e_ns, ok));
    return lat;
}

/* summary.json's steps[].classes[k]: class k of s. */
static json_t *class_json(const struct sweep_step *s, size_t k)
{
    const struct sweep_class *c = &s->classes[k];
    const struct stats *st = &c->stats;
    json_t *o = json_object();
    jset(o, "name", json_string(s->f.classes[k].name));
    jset(o, "slo", slo_json(&c->slo, c->have_slo));
    jset(o, "slo_source",
         !c->have_slo ? json_null()
                      : json_string(slo_is_set(&s->f.classes[k].own_slo) ? "class" : "sweep"));
    put_outcomes(o, st, c->achieved_rps, c->completed_rps, c->goodput_rps, c->attainment);
    jset(o, "error_rate", jnum(c->error_rate));
    jset(o, "latency_ns", part_latency_json(st, c->ttft_ns, c->tpot_ns, c->e2e_ns));
    jset(o, "slo_pass", json_boolean(c->slo_pass));
    jset(o, "fail_reason", c->slo_pass ? json_null() : json_string(c->fail_reason));
    return o;
}

/* summary.json's steps[].endpoints[k]: endpoint k of s. */
static json_t *endpoint_json(const struct sweep_step *s, size_t k)
{
    const struct sweep_endpoint *e = &s->endpoints[k];
    const struct stats *st = &e->stats;
    json_t *o = json_object();
    jset(o, "index", ju64(k));
    jset(o, "url", s->f.endpoints[k].url ? json_string(s->f.endpoints[k].url) : json_null());
    jset(o, "weight", ju64(s->f.endpoints[k].weight));
    jset(o, "scheduled", ju64(st->scheduled));
    jset(o, "requests", ju64(st->completed));
    jset(o, "ok", ju64(st->by_kind[REC_OK]));
    jset(o, "errors", ju64(stats_errors(st)));
    jset(o, "error_rate", jnum(e->error_rate));
    json_t *kinds = json_object();
    for (int kd = 0; kd < REC_KIND_COUNT; kd++)
        if (kd != REC_OK && st->by_kind[kd])
            jset(kinds, rec_kind_name((enum rec_kind)kd), ju64(st->by_kind[kd]));
    jset(o, "errors_by_kind", kinds);
    jset(o, "latency_ns", part_latency_json(st, e->ttft_ns, e->tpot_ns, e->e2e_ns));
    jset(o, "output_tokens_per_s", jnum(e->output_tps));
    return o;
}

static json_t *step_json(const struct sweep_step *s)
{
    json_t *o = json_object();
    const struct stats *st = &s->stats;
    int ok = st->by_kind[REC_OK] > 0;
    jset(o, "step", ju64(s->f.index));
    jset(o, "repeat", ju64(s->f.repeat));
    jset(o, "kind", json_string(s->f.recovery ? "recovery" : "load"));
    if (s->f.confirm)
        jset(o, "confirm", json_true());
    if (s->f.interrupted)
        jset(o, "interrupted", json_true());
    jset(o, "offered_rps", json_real(s->f.offered_rps));
    jset(o, "overload_rps", s->f.overload_rps > 0 ? json_real(s->f.overload_rps) : json_null());
    jset(o, "start_offset_ns", ju64(s->f.start_offset_ns));
    jset(o, "duration_ns", ju64(s->f.duration_ns));
    jset(o, "warmup_ns", ju64(s->f.warmup_ns));
    jset(o, "window_ns", ju64(s->f.window_ns));
    put_outcomes(o, st, s->achieved_rps, s->completed_rps, s->goodput_rps, s->attainment);
    jset(o, "input_tokens_per_s", jnum(s->input_tps));
    jset(o, "output_tokens_per_s", jnum(s->output_tps));
    jset(o, "request_bytes_per_s", jnum(s->request_bytes_per_s));
    jset(o, "error_rate", jnum(s->error_rate));
    json_t *kinds = json_object();
    for (int k = 1; k < REC_KIND_COUNT; k++)
        jset(kinds, rec_kind_name((enum rec_kind)k), ju64(st->by_kind[k]));
    jset(o, "errors_by_kind", kinds);
    json_t *lat = json_object();
    /* An embeddings step has no first token: its TTFT is null. */
    jset(lat, "ttft", pct_json(s->ttft_ns, ok && !stats_embeddings(st)));
    jset(lat, "tpot", pct_json(s->tpot_ns, hist_count(st->tpot) > 0));
    jset(lat, "itl", pct_json(s->itl_ns, hist_count(st->itl_req) > 0));
    jset(lat, "e2e", pct_json(s->e2e_ns, ok));
    jset(lat, "schedule_lateness", pct_json(s->lateness_ns, hist_count(s->f.lateness) > 0));
    jset(o, "latency_ns", lat);
    json_t *ci = json_object();
    jset(ci, "confidence", json_real(0.95));
    jset(ci, "lo", s->ci_valid ? ju64(s->ttft_p99_ci_lo_ns) : json_null());
    jset(ci, "hi", s->ci_valid && s->ttft_p99_ci_hi_ns ? ju64(s->ttft_p99_ci_hi_ns) : json_null());
    jset(o, "ttft_p99_ci_ns", ci);
    json_t *ss = json_object();
    jset(ss, "steady", json_boolean(s->steady));
    jset(ss, "reason", s->steady ? json_null() : json_string(s->steady_reason));
    jset(ss, "ttft_p99_first_half_ns",
         hist_count(s->ttft_h1) ? ju64(s->ttft_p99_h1_ns) : json_null());
    jset(ss, "ttft_p99_second_half_ns",
         hist_count(s->ttft_h2) ? ju64(s->ttft_p99_h2_ns) : json_null());
    json_t *tt = json_object();
    jset(tt, "judged", json_boolean(s->tail.judged));
    if (s->tail.judged) {
        jset(tt, "quantile", json_real(s->tail.q));
        jset(tt, "first_half_ns", ju64(s->tail.h1_ns));
        jset(tt, "second_half_ns", ju64(s->tail.h2_ns));
        jset(tt, "threshold_ns", ju64(s->tail.threshold_ns));
        jset(tt, "above_first_half", ju64(s->tail.above1));
        jset(tt, "above_second_half", ju64(s->tail.above2));
        jset(tt, "p_value", json_real(s->tail.p_value));
    }
    jset(tt, "rose", json_boolean(s->tail.rose));
    jset(ss, "ttft_tail", tt);
    jset(ss, "inflight_growth", jnum(s->inflight_growth));
    jset(o, "steady_state", ss);
    json_t *inf = json_object();
    jset(inf, "mean", jnum(s->f.inflight_mean));
    jset(inf, "max", jnum(s->f.inflight_max));
    jset(o, "inflight", inf);
    jset(o, "slo_pass", json_boolean(s->slo_pass));
    jset(o, "fail_reason", s->slo_pass ? json_null() : json_string(s->fail_reason));
    jset(o, "verdict", json_string(sweep_step_verdict(s, 0)));
    jset(o, "invalid", json_boolean(s->invalid));
    jset(o, "invalid_reason", s->invalid ? json_string(s->invalid_reason) : json_null());
    jset(o, "lateness_warning",
         s->lateness_warning[0] ? json_string(s->lateness_warning) : json_null());
    json_t *ld = sweep_late_json(&s->f.late);
    if (ld) /* absent: not known (older steps.jsonl) */
        jset(o, "lateness_diagnosis", ld);
    jset(o, "cost_per_million_output_tokens", jnum(s->cost_per_mtok));
    if (s->f.cold_start)
        jset(o, "cold", summary_cold_json(&s->cold, s->f.cold_start));
    jset(o, "hold_factor", jnum(s->hold_factor));
    jset(o, "short", json_boolean(s->short_hold));
    json_t *srv = sweep_server_json(s);
    if (srv)
        jset(o, "server", srv);
    json_t *en = sweep_energy_json(s);
    if (en)
        jset(o, "energy", en);
    if (s->f.n_classes) {
        json_t *arr = json_array();
        for (size_t k = 0; k < s->f.n_classes; k++)
            json_array_append_new(arr, class_json(s, k));
        jset(o, "classes", arr);
    }
    if (s->f.n_endpoints) {
        json_t *arr = json_array();
        for (size_t k = 0; k < s->f.n_endpoints; k++)
            json_array_append_new(arr, endpoint_json(s, k));
        jset(o, "endpoints", arr);
    }
    return o;
}

static json_t *time_or_null(uint64_t t)
{
    return t == LL_NO_TIME ? json_null() : ju64(t);
}

/* summary.json's "points": one object per offered rate. */
static json_t *points_json(const struct sweep_point *points, size_t n_points)
{
    json_t *arr = json_array();
    for (size_t i = 0; i < n_points; i++) {
        const struct sweep_point *p = &points[i];
        json_t *o = json_object();
        jset(o, "offered_rps", json_real(p->offered_rps));
        jset(o, "runs", ju64(p->n));
        jset(o, "runs_judged", ju64(p->n_judged));
        jset(o, "goodput_rps", jnum(p->goodput_rps));
        jset(o, "goodput_rps_ci95", jnum(p->goodput_ci));
        jset(o, "completed_rps", jnum(p->completed_rps));
        jset(o, "completed_rps_ci95", jnum(p->completed_ci));
        jset(o, "attainment", jnum(p->attainment));
        jset(o, "attainment_ci95", jnum(p->attainment_ci));
        jset(o, "ttft_p99_ms", jnum(p->ttft_p99_ms));
        jset(o, "ttft_p99_ms_ci95", jnum(p->ttft_p99_ci_ms));
        jset(o, "achieved_rps", jnum(p->achieved_rps));
        jset(o, "achieved_rps_ci95", jnum(p->achieved_ci));
        jset(o, "tpot_p99_ms", jnum(p->tpot_p99_ms));
        jset(o, "tpot_p99_ms_ci95", jnum(p->tpot_p99_ci_ms));
        jset(o, "error_rate", jnum(p->error_rate));
        jset(o, "pass", json_boolean(p->pass));
        json_array_append_new(arr, o);
    }
    return arr;
}

/* summary.json's findings.recovery (every figure null when no recovery
 * step ran). */
static json_t *recovery_json(const struct sweep_findings *fd)
{
    json_t *rec = json_object();
    jset(rec, "ran", json_boolean(fd->have_recovery));
    int hr = fd->have_recovery;
    jset(rec, "offered_rps", hr ? json_real(fd->recovery_rps) : json_null());
    jset(rec, "overload_rps",
         hr && fd->overload_rps > 0 ? json_real(fd->overload_rps) : json_null());
    jset(rec, "lead_in_passed", json_boolean(hr && fd->lead_in_passed));
    jset(rec, "switch_ns", hr ? ju64(fd->switch_ns) : json_null());
    jset(rec, "backlog_at_switch", hr ? jnum(fd->backlog_at_switch) : json_null());
    jset(rec, "first_miss_ns", hr ? time_or_null(fd->recovery.first_miss_ns) : json_null());
    jset(rec, "last_miss_ns", hr ? time_or_null(fd->recovery.last_miss_ns) : json_null());
    jset(rec, "back_in_slo_ns", hr ? time_or_null(fd->recovery.back_ns) : json_null());
    jset(rec, "recovered", json_boolean(hr && fd->recovery.recovery_ns != LL_NO_TIME));
    jset(rec, "recovery_ns", hr ? time_or_null(fd->recovery.recovery_ns) : json_null());
    return rec;
}

/* summary.json's findings.endpoints[k]: one endpoint that stood out. */
static json_t *endpoint_finding_json(const struct sweep_endpoint_finding *ef)
{
    json_t *o = json_object();
    jset(o, "endpoint", ju64(ef->endpoint));
    jset(o, "url", ef->url ? json_string(ef->url) : json_null());
    jset(o, "figure", json_string(ef->error_rate ? "error_rate" : "ttft_p99_ns"));
    jset(o, "value", jnum(ef->value));
    jset(o, "others_median", jnum(ef->others));
    jset(o, "ratio", isfinite(ef->ratio) ? jnum(ef->ratio) : json_null());
    jset(o, "step", ju64(ef->step_index));
    jset(o, "offered_rps", jnum(ef->offered_rps));
    jset(o, "steps_out", ju64(ef->n_out));
    jset(o, "steps_judged", ju64(ef->n_judged));
    return o;
}

/* An array of the first SWEEP_MAX_UNKNOWN of n rates. */
static json_t *rates_json(const double *r, size_t n)
{
    json_t *a = json_array();
    for (size_t i = 0; i < LL_MIN(n, (size_t)SWEEP_MAX_UNKNOWN); i++)
        json_array_append_new(a, json_real(r[i]));
    return a;
}

/* summary.json's findings.classes[k]: one traffic class's findings. */
static json_t *class_finding_json(const struct sweep_class_finding *cf)
{
    json_t *co = json_object();
    jset(co, "name", json_string(cf->name));
    jset(co, "slo", slo_json(&cf->slo, cf->have_slo));
    jset(co, "slo_capacity_rps", cf->capacity_found ? json_real(cf->capacity_rps) : json_null());
    jset(co, "capacity_is_lower_bound", json_boolean(cf->none_failed));
    jset(co, "unmeasured_rps", rates_json(cf->unmeasured_rps, cf->n_unmeasured));
    jset(co, "unsent_rps", rates_json(cf->unsent_rps, cf->n_unsent));
    jset(co, "cancelled_rps", rates_json(cf->cancelled_rps, cf->n_cancelled));
    jset(co, "next_failing_rps", cf->next_fails ? json_real(cf->next_fail_rps) : json_null());
    jset(co, "next_failing_reason",
         cf->next_fails ? json_string(cf->next_fail_reason) : json_null());
    jset(co, "ttft_p99_ns_at_slo_capacity",
         cf->at_capacity ? ju64(cf->ttft_p99_at_capacity_ns) : json_null());
    jset(co, "tpot_p99_ns_at_slo_capacity",
         cf->at_capacity && cf->tpot_p99_at_capacity_ns ? ju64(cf->tpot_p99_at_capacity_ns)
                                                        : json_null());
    return co;
}

/* summary.json's findings.first_limit. */
static json_t *first_limit_json(const struct sweep_first_limit *fl)
{
    json_t *o = json_object();
    int r = fl->reached;
    jset(o, "kind", json_string(sweep_limit_kind_name(fl->kind)));
    jset(o, "policy", json_boolean(fl->kind == SWEEP_LIMIT_ADMISSION));
    jset(o, "reached", json_boolean(r));
    jset(o, "server_metrics", json_boolean(fl->server_metrics));
    jset(o, "step", r ? ju64(fl->step_index) : json_null());
    jset(o, "offered_rps", r ? json_real(fl->offered_rps) : json_null());
    json_t *e = json_object();
    jset(e, "running_max", jnum(fl->running_max));
    jset(e, "max_seqs", fl->max_seqs ? ju64(fl->max_seqs) : json_null());
    jset(e, "max_seqs_source",
         fl->max_seqs_source ? json_string(fl->max_seqs_source) : json_null());
    jset(e, "kv_usage_max", jnum(fl->kv_max));
    jset(e, "kv_capacity_tokens", jnum(fl->kv_capacity_tokens));
    jset(e, "kv_capacity_source",
         fl->kv_capacity_source ? json_string(fl->kv_capacity_source) : json_null());
    jset(e, "preemptions", jnum(fl->preemptions));
    jset(e, "queue_before", jnum(fl->queue_before));
    jset(e, "queue_max", jnum(fl->queue_max));
    jset(e, "queue_mean", jnum(fl->queue_mean));
    jset(e, "prompt_tokens_per_s", jnum(fl->prompt_tps));
    jset(e, "rejected_429", r ? ju64(fl->rejected) : json_null());
    jset(e, "timeouts", r ? ju64(fl->timeouts) : json_null());
    jset(o, "evidence", e);
    jset(o, "latency_failed_first", json_string(sweep_first_limit_latency(fl)));
    jset(o, "ttft_failed_rps",
         fl->ttft_failed_rps > 0 ? json_real(fl->ttft_failed_rps) : json_null());
    jset(o, "tpot_failed_rps",
         fl->tpot_failed_rps > 0 ? json_real(fl->tpot_failed_rps) : json_null());
    char text[512];
    sweep_first_limit_text(fl, text, sizeof text);
    size_t k = strlen(text);
    if (k && text[k - 1] == '\n')
        text[k - 1] = '\0';
    jset(o, "text", json_string(text));
    return o;
}

/* summary.json's "findings", their text included. */
static json_t *findings_json(const struct sweep_findings *fd, const struct sweep_settings *set,
                             const char *stop_reason, int several_endpoints)
{
    json_t *f = json_object();
    jset(f, "slo_capacity_rps", fd->capacity_found ? json_real(fd->capacity_rps) : json_null());
    jset(f, "capacity_is_lower_bound", json_boolean(fd->none_failed));
    jset(f, "next_failing_rps", fd->next_fails ? json_real(fd->next_fail_rps) : json_null());
    jset(f, "not_judged_rps", rates_json(fd->unknown_rps, fd->n_unknown));
    jset(f, "interrupted_rps", fd->have_cut ? json_real(fd->cut_rps) : json_null());
    jset(f, "empty_rps", rates_json(fd->empty_rps, fd->n_empty));
    jset(f, "capacity_unknown", json_boolean(fd->capacity_unknown));
    jset(f, "capacity_coarse", json_boolean(fd->capacity_coarse));
    /* Only when some pass was not credited, as the disputed rates below:
     * files of sweeps without one read as they did. */
    if (fd->n_light)
        jset(f, "light_rps", rates_json(fd->light_rps, fd->n_light));
    if (fd->n_disputed || fd->passed_above_rps > 0) {
        jset(f, "disputed_rps", rates_json(fd->disputed_rps, fd->n_disputed));
        jset(f, "passed_above_failing_rps",
             fd->passed_above_rps > 0 ? json_real(fd->passed_above_rps) : json_null());
        jset(f, "next_failing_confirmed", json_boolean(fd->next_fail_confirmed));
    }
    jset(f, "next_failing_reason",
         fd->next_fails ? json_string(fd->next_fail_reason) : json_null());
    jset(f, "capacity_above_ceiling_rps",
         fd->ceiling_rps > 0 ? json_real(fd->ceiling_rps) : json_null());
    jset(f, "knee_rps", fd->knee.found ? json_real(fd->knee.knee_x) : json_null());
    jset(f, "knee_slope_below", jnum(fd->knee.slope_below));
    jset(f, "knee_slope_above", jnum(fd->knee.slope_above));
    jset(f, "knee_upper_rps",
         fd->knee.found && fd->knee.edge ? json_real(fd->knee.beyond_x) : json_null());
    jset(f, "first_limit", first_limit_json(&fd->first_limit));
    jset(f, "operate_at_rps", fd->capacity_found ? json_real(fd->operate_rps) : json_null());
    jset(f, "headroom", json_real(set->headroom));
    jset(f, "forecast_rps", set->forecast_rps > 0 ? json_real(set->forecast_rps) : json_null());
    jset(f, "replicas_needed", fd->replicas_needed ? ju64(fd->replicas_needed) : json_null());
    jset(f, "cost_per_million_output_tokens_at_capacity", jnum(fd->cost_at_capacity));
    jset(f, "recovery", recovery_json(fd));
    jset(f, "drain_ns", ju64(fd->drain_ns));
    jset(f, "slo_missed", json_boolean(fd->slo_missed));
    jset(f, "short_steps_rps", rates_json(fd->short_rps, fd->n_short));
    jset(f, "short_steps", ju64(fd->n_short));
    jset(f, "short_steps_steady", ju64(fd->n_short_steady));
    jset(f, "capacity_on_short_steps", json_boolean(fd->capacity_short));
    jset(f, "stop_reason", stop_reason && *stop_reason ? json_string(stop_reason) : json_null());
    if (fd->n_classes) {
        json_t *carr = json_array();
        for (size_t k = 0; k < fd->n_classes; k++)
            json_array_append_new(carr, class_finding_json(&fd->classes[k]));
        jset(f, "classes", carr);
    }
    if (several_endpoints) {
        json_t *earr = json_array();
        for (size_t k = 0; k < fd->n_endpoints; k++)
            json_array_append_new(earr, endpoint_finding_json(&fd->endpoints[k]));
        jset(f, "endpoints", earr);
    }
    char *text = ll_malloc(SWEEP_FINDINGS_TEXT_MAX);
    sweep_findings_text(fd, set, stop_reason, text, SWEEP_FINDINGS_TEXT_MAX);
    jset(f, "text", json_string(text));
    free(text);
    return f;
}

json_t *sweep_summary_json(const struct sweep_step *steps, size_t n,
                           const struct sweep_point *points, size_t n_points,
                           const struct sweep_findings *fd, const struct sweep_settings *set,
                           const char *stop_reason, json_t *run_json)
{
    json_t *root = json_object();
    json_t *cfg = json_object_get(run_json, "config");
    jset(root, "schema", json_string(SWEEP_SUMMARY_SCHEMA));
    jset(root, "version", json_string(LL_VERSION));
    json_t *url = json_object_get(cfg, "url"), *model = json_object_get(cfg, "model");
    jset(root, "target_url", url ? json_incref(url) : json_null());
    jset(root, "model", model ? json_incref(model) : json_null());
    jset(root, "settings", sweep_settings_json(set));
    json_t *arr = json_array();
    for (size_t i = 0; i < n; i++)
        json_array_append_new(arr, step_json(&steps[i]));
    jset(root, "steps", arr);
    jset(root, "points", points_json(points, n_points));
    int several_endpoints = 0;
    for (size_t i = 0; i < n; i++)
        several_endpoints |= steps[i].f.n_endpoints > 0;
    jset(root, "findings", findings_json(fd, set, stop_reason, several_endpoints));
    return root;
}
