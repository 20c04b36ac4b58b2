/* summary_json.c: the end-of-run summary for programs, summary.json (see
 * summary.h and docs/formats.md): the run's header and self-check, the
 * requests, each latency row of summary_int.h's table with its
 * percentiles and histogram, throughput, sessions, tokens, finish reasons,
 * what was cut short, in flight, the cold requests, and the traffic
 * classes' and endpoints' breakdowns. Moved from summary.c, which prints
 * the same figures for people. */
#include "measure/summary.h"

#include <inttypes.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "measure/hist.h"
#include "measure/results.h"
#include "measure/summary_int.h"
#include "util/util.h"

/* ---- summary.json ---------------------------------------------------- */

static void summary_oom(void) __attribute__((noreturn));

static void summary_oom(void)
{
    ll_errorf("out of memory building summary.json");
    abort();
}

/* obj[key] = v, taking v's reference; aborts when jansson is out of memory
 * (it returns NULL for v, or fails the set). */
static void jset(json_t *obj, const char *key, json_t *v)
{
    if (v == NULL || json_object_set_new(obj, key, v) != 0)
        summary_oom();
}

static json_t *jobj(void)
{
    json_t *o = json_object();
    if (o == NULL)
        summary_oom();
    return o;
}

/* An integer, or null above INT64_MAX (JSON readers cannot hold it). */
static json_t *ju64(uint64_t v)
{
    return v <= (uint64_t)INT64_MAX ? json_integer((json_int_t)v) : json_null();
}

static json_t *jdouble(double v)
{
    return isfinite(v) ? json_real(v) : json_null();
}

/* A JSON string of s (null when s is NULL). jansson refuses bytes that are
 * not UTF-8; rather than lose the field, such bytes become '?'. */
static json_t *jstrn(const char *s, size_t maxlen)
{
    if (s == NULL)
        return json_null();
    size_t n = strnlen(s, maxlen);
    json_t *j = json_stringn(s, n);
    if (j != NULL)
        return j;
    char *copy = ll_strndup(s, n);
    for (size_t i = 0; i < n; i++)
        if ((unsigned char)copy[i] >= 0x80)
            copy[i] = '?';
    j = json_stringn(copy, n);
    free(copy);
    return j;
}

static json_t *jstr(const char *s)
{
    return jstrn(s, SIZE_MAX);
}

/* A warning or note from its buffer of size bytes: its text, or null when
 * the buffer is empty (nothing to warn of). */
static json_t *jwarning(const char *buf, size_t size)
{
    return buf[0] != '\0' ? jstrn(buf, size) : json_null();
}

json_t *summary_latency_json(const struct hist *h)
{
    json_t *o = jobj();
    uint64_t n = hist_count(h);
    jset(o, "count", ju64(n));
    jset(o, "min", n > 0 ? ju64(hist_min(h)) : json_null());
    for (size_t p = 0; p < LL_ARRAY_LEN(summary_pcts); p++)
        jset(o, summary_pcts[p].key,
             n > 0 ? ju64(hist_percentile(h, summary_pcts[p].pct)) : json_null());
    jset(o, "max", n > 0 ? ju64(hist_max(h)) : json_null());
    jset(o, "mean", n > 0 ? ju64((uint64_t)llround(hist_mean(h))) : json_null());
    jset(o, "overflow", ju64(hist_overflow(h)));
    char *text = hist_to_string(h);
    jset(o, "hist", json_string(text));
    free(text);
    return o;
}

/* The self-check's figures: the tolerance, and the percentile that
 * lateness moved nearest its limit (null when nothing could be judged). */
static json_t *summary_self_check_json(const struct summary_info *info)
{
    json_t *o = json_object();
    json_t *worst = json_null();
    const struct verdict_move *m = &info->lateness_moved;
    if (m->what) {
        worst = json_object();
        jset(worst, "latency", json_string(m->what));
        jset(worst, "value_ns", ju64(m->value_ns));
        jset(worst, "moved_ns", ju64(m->moved_ns));
        jset(worst, "limit_ns", ju64(m->limit_ns));
        jset(worst, "sends_past_limit",
             m->sends_past_limit == UINT64_MAX ? json_null() : ju64(m->sends_past_limit));
    }
    jset(o, "lateness_tolerance", json_real(info->lateness_tolerance));
    jset(o, "move_floor_ns", ju64(VERDICT_MOVE_FLOOR_NS));
    jset(o, "largest_move", worst);
    return o;
}

/* The run's identity and settings, the first keys of summary.json, into
 * root: schema, version, mode, the flags and warnings (the prompt
 * warning from s), target, model, seed (above
 * INT64_MAX as a decimal string, docs/formats.md), window and warm-up. */
static void summary_header_json(json_t *root, const struct stats *s,
                                const struct summary_info *info)
{
    jset(root, "schema", json_string(SUMMARY_SCHEMA));
    jset(root, "version", jstr(info->version));
    jset(root, "mode", jstr(info->mode));
    jset(root, "closed_loop", json_boolean(info->closed_loop));
    jset(root, "interrupted", json_boolean(info->interrupted));
    jset(root, "invalid", json_boolean(info->invalid));
    jset(root, "invalid_reason",
         info->invalid ? jstrn(info->invalid_reason, sizeof(info->invalid_reason)) : json_null());
    jset(root, "lateness_warning",
         jwarning(info->lateness_warning, sizeof(info->lateness_warning)));
    jset(root, "cache_warning", jwarning(info->cache_warning, sizeof(info->cache_warning)));
    char note[512];
    int warning;
    summary_prompt_note(note, sizeof note, s, info->prompts, &warning);
    jset(root, "prompt_warning", warning ? jstr(note) : json_null());
    summary_status_note(note, sizeof note, s);
    jset(root, "status_warning", jwarning(note, sizeof note));
    enum summary_measured m = summary_measured(note, sizeof note, s, info);
    jset(root, "nothing_measured",
         m == SUMMARY_NONE_OK || m == SUMMARY_EMPTY ? jstr(note) : json_null());
    jset(root, "shard_empty", m == SUMMARY_SHARD_EMPTY ? jstr(note) : json_null());
    jset(root, "steady", info->steady_judged ? json_boolean(info->steady) : json_null());
    jset(root, "steady_warning", jwarning(info->steady_warning, sizeof(info->steady_warning)));
    jset(root, "steady_unjudged", jwarning(info->steady_unjudged, sizeof(info->steady_unjudged)));
    jset(root, "cut_short_warning",
         jwarning(info->cut_short_warning, sizeof(info->cut_short_warning)));
    jset(root, "self_check", summary_self_check_json(info));
    jset(root, "target_url", jstr(info->target_url));
    jset(root, "model", jstr(info->model));
    if (info->seed <= (uint64_t)INT64_MAX) {
        jset(root, "seed", ju64(info->seed));
    } else {
        char buf[32];
        snprintf(buf, sizeof(buf), "%" PRIu64, info->seed);
        jset(root, "seed", json_string(buf));
    }
    jset(root, "window_ns", ju64(info->window_ns));
    jset(root, "warmup_ns", ju64(info->warmup_ns));
}

/* The "requests" object: counts, counts by kind, a sample message per
 * failed kind that had one, and the Retry-After
 * headers seen (mean_ms null when none). Caller owns the reference. */
static json_t *summary_requests_json(const struct stats *s)
{
    json_t *req = jobj();
    jset(req, "scheduled", ju64(s->scheduled));
    jset(req, "sent", ju64(s->sent));
    jset(req, "completed", ju64(s->completed));
    jset(req, "ok", ju64(s->by_kind[REC_OK]));
    jset(req, "failed", ju64(stats_failed(s)));
    jset(req, "unfinished", ju64(s->scheduled > s->completed ? s->scheduled - s->completed : 0));
    json_t *kinds = jobj();
    for (int k = 0; k < REC_KIND_COUNT; k++)
        jset(kinds, rec_kind_name((enum rec_kind)k), ju64(s->by_kind[k]));
    jset(req, "by_kind", kinds);
    json_t *samples = jobj();
    for (int k = 0; k < REC_KIND_COUNT; k++)
        if (k != REC_OK && s->sample[k][0])
            jset(samples, rec_kind_name((enum rec_kind)k),
                 jstrn(s->sample[k], sizeof s->sample[k]));
    jset(req, "samples", samples);
    json_t *ra = jobj();
    jset(ra, "count", ju64(s->retry_after_seen));
    jset(ra, "mean_ms",
         s->retry_after_seen > 0
             ? jdouble((double)s->retry_after_sum_ms / (double)s->retry_after_seen)
             : json_null());
    jset(req, "retry_after", ra);
    return req;
}

/* The "throughput" object: rates over the window w (ns), goodput and
 * attainment when an SLO was set (null otherwise). Caller owns the
 * reference. */
static json_t *summary_throughput_json(const struct stats *s, const struct summary_info *info,
                                       uint64_t w)
{
    json_t *thr = jobj();
    jset(thr, "offered_rate_per_s",
         info->offered_rate_per_s > 0 ? jdouble(info->offered_rate_per_s) : json_null());
    double intended = summary_intended_rate(info);
    jset(thr, "intended_rate_per_s", intended > 0 ? jdouble(intended) : json_null());
    jset(thr, "scheduled_rate_per_s", jdouble(summary_rate((double)stats_win_scheduled(s), w)));
    uint64_t off = info->offering_ns;
    jset(thr, "offering_ns", off ? ju64(off) : json_null());
    double sched_off = summary_offering_rate(s, info); /* NAN: no span, or one arrival */
    jset(thr, "scheduled_offering_rate_per_s",
         isfinite(sched_off) ? jdouble(sched_off) : json_null());
    jset(thr, "send_rate_per_s", jdouble(summary_rate((double)s->win_sent, w)));
    jset(thr, "completion_rate_per_s", jdouble(summary_rate((double)s->win_completed, w)));
    jset(thr, "ok_rate_per_s", jdouble(summary_rate((double)s->win_ok, w)));
    jset(thr, "dropped_rate_per_s", jdouble(summary_rate((double)s->win_dropped, w)));
    jset(thr, "input_tokens_per_s", jdouble(summary_rate((double)s->win_prompt_tokens, w)));
    jset(thr, "output_tokens_per_s", jdouble(summary_rate((double)s->win_output_tokens, w)));
    jset(thr, "request_bytes_per_s", jdouble(summary_rate((double)s->win_request_bytes, w)));
    jset(thr, "inputs_per_s",
         stats_embeddings(s) ? jdouble(summary_rate((double)s->win_inputs, w)) : json_null());
    int have = info->slo || info->slo_by_class;
    jset(thr, "goodput_per_s",
         have ? jdouble(summary_rate((double)s->win_slo_met, w)) : json_null());
    jset(thr, "attainment", have ? jdouble(stats_attainment(s)) : json_null());
    jset(thr, "slo_unjudged", have ? ju64(s->slo_unjudged) : json_null());
    jset(thr, "slo", info->slo ? json_string(info->slo) : json_null());
    jset(thr, "slo_by_class", json_boolean(info->slo_by_class));
    return thr;
}

/* The "sessions" object of a session run: intended and realised session
 * and request rates, the requests' over the window w (ns), the sessions'
 * over it too unless the count ended their arrivals (arrivals_ns,
 * summary_session_rate). Caller owns the reference. */
static json_t *summary_sessions_json(const struct stats *s, const struct summary_info *info,
                                     uint64_t w)
{
    json_t *ses = jobj();
    jset(ses, "intended_rate_per_s", jdouble(info->session_rate_per_s));
    jset(ses, "realised_rate_per_s", jdouble(summary_session_rate(info)));
    jset(ses, "arrivals_ns",
         info->session_arrivals_ns ? ju64(info->session_arrivals_ns) : json_null());
    jset(ses, "turns_mean", jdouble(info->session_turns_mean));
    jset(ses, "started", ju64(info->sessions_started));
    jset(ses, "cut", ju64(info->sessions_cut));
    jset(ses, "failed", ju64(info->sessions_failed));
    jset(ses, "intended_request_rate_per_s", jdouble(info->offered_rate_per_s));
    jset(ses, "realised_request_rate_per_s",
         jdouble(summary_rate((double)stats_win_scheduled(s), w)));
    return ses;
}

/* The "tokens" object: totals, cached tokens and their share of the
 * prompt tokens (null when no response reported them), the share the
 * workload implies (null when unknown) and the count of each tokens
 * source. Caller owns the reference. */
static json_t *summary_tokens_json(const struct stats *s, const struct summary_info *info)
{
    json_t *tok = jobj();
    jset(tok, "prompt_tokens", ju64(s->prompt_tokens));
    jset(tok, "output_tokens", ju64(s->output_tokens));
    jset(tok, "output_tokens_failed", ju64(s->output_tokens_failed));
    jset(tok, "events", ju64(s->events));
    jset(tok, "inputs", stats_embeddings(s) ? ju64(s->inputs) : json_null());
    jset(tok, "cached_tokens", s->cached_reported > 0 ? ju64(s->cached_tokens) : json_null());
    jset(tok, "cached_reported", ju64(s->cached_reported));
    jset(tok, "cached_share", jdouble(stats_cached_share(s)));
    jset(tok, "workload_cached_share",
         info->workload_share_known ? jdouble(info->workload_cached_share) : json_null());
    jset(tok, "prompt_mismatch", ju64(s->prompt_mismatch));
    uint64_t pn = s->prompt_usage_n;
    jset(tok, "prompt_reported", ju64(pn));
    jset(tok, "prompt_ratio",
         pn ? jdouble((double)s->prompt_usage_server / (double)s->prompt_usage_requested)
            : json_null());
    jset(tok, "prompt_error_min", pn ? jdouble(s->prompt_err_min) : json_null());
    jset(tok, "prompt_error_max", pn ? jdouble(s->prompt_err_max) : json_null());
    json_t *src = jobj();
    for (int i = 0; i < 3; i++)
        jset(src, rec_tokens_source_name((enum rec_tokens_source)i),
             ju64(s->tokens_source_count[i]));
    jset(tok, "source", src);
    return tok;
}

/* The "finish_reasons" object: ok records by the API's finish_reason,
 * "(other)" past the names a stats keeps, "(none)" without one (each
 * only when not 0). Caller owns the reference. */
static json_t *summary_finish_json(const struct stats *s)
{
    json_t *o = jobj();
    for (size_t i = 0; i < STATS_FINISH_NAMES && s->finish_name[i][0]; i++)
        jset(o, s->finish_name[i], ju64(s->finish_count[i]));
    if (s->finish_other)
        jset(o, "(other)", ju64(s->finish_other));
    if (s->finish_none)
        jset(o, "(none)", ju64(s->finish_none));
    return o;
}

/* The "cut_short" object: ok records cut short (stats_cut_short), their
 * share of the ok records (null when none), and the ok records that
 * could not be judged (counted events). Caller owns the reference. */
static json_t *summary_cut_short_json(const struct stats *s)
{
    uint64_t ok = s->by_kind[REC_OK];
    json_t *o = jobj();
    jset(o, "count", ju64(s->cut_short));
    jset(o, "share", ok ? jdouble((double)s->cut_short / (double)ok) : json_null());
    jset(o, "unjudged", ju64(s->cut_short_unjudged));
    return o;
}

/* The "inflight" object: the sampled mean and max, and Little's law from
 * the completion rate over the window w (ns) times the mean E2E and
 * service times. Caller owns the reference. */
static json_t *summary_inflight_json(const struct stats *s, const struct summary_info *info,
                                     uint64_t w)
{
    double rate = summary_rate((double)s->win_completed, w);
    json_t *inf = jobj();
    jset(inf, "mean", jdouble(info->inflight_mean));
    jset(inf, "max", jdouble(info->inflight_max));
    jset(inf, "littles_law_e2e",
         jdouble(rate * summary_mean_ns(s->all_e2e_sum_ns, s->all_e2e_count) / 1e9));
    jset(inf, "littles_law_service", jdouble(summary_littles_law_service(s, w)));
    return inf;
}

/* Percentiles p (n of them, keys k) of h, and its max, as an object;
 * every value null when h is empty. */
static json_t *summary_cold_pcts(const struct hist *h, const double *p, const char *const *k,
                                 size_t n)
{
    json_t *o = jobj();
    int any = hist_count(h) > 0;
    for (size_t i = 0; i < n; i++)
        jset(o, k[i], any ? ju64(hist_percentile(h, p[i])) : json_null());
    jset(o, "max", any ? ju64(hist_max(h)) : json_null());
    return o;
}

json_t *summary_cold_json(const struct stats *cold, uint64_t n)
{
    static const double tp[] = {50.0, 90.0, 99.0}, ep[] = {50.0, 99.0};
    static const char *const tk[] = {"p50", "p90", "p99"}, *const ek[] = {"p50", "p99"};
    json_t *o = jobj();
    jset(o, "requests", ju64(n));
    jset(o, "scheduled", ju64(cold->scheduled));
    jset(o, "sent", ju64(cold->sent));
    jset(o, "completed", ju64(cold->completed));
    jset(o, "ok", ju64(cold->by_kind[REC_OK]));
    jset(o, "failed", ju64(stats_failed(cold)));
    jset(o, "ttft_ns", summary_cold_pcts(cold->ttft, tp, tk, LL_ARRAY_LEN(tp)));
    jset(o, "e2e_ns", summary_cold_pcts(cold->e2e, ep, ek, LL_ARRAY_LEN(ep)));
    jset(o, "prompt_tokens", ju64(cold->prompt_tokens));
    jset(o, "cached_tokens", cold->cached_reported > 0 ? ju64(cold->cached_tokens) : json_null());
    jset(o, "cached_share", jdouble(stats_cached_share(cold)));
    return o;
}

json_t *summary_late_json(const struct summary_late *l)
{
    int usage = isfinite(l->cpu_s) && isfinite(l->wall_s);
    json_t *o = jobj();
    jset(o, "late_sends", ju64(l->late_sends));
    jset(o, "asleep_when_due", ju64(l->asleep));
    jset(o, "worker_cpu_s", usage ? json_real(l->cpu_s) : json_null());
    jset(o, "worker_wall_s", usage ? json_real(l->wall_s) : json_null());
    jset(o, "involuntary_switches", usage ? ju64(l->invol_switches) : json_null());
    jset(o, "cause", json_string(verdict_late_cause_name(l->cause)));
    return o;
}

/* summary.json's keys in their documented order (docs/formats.md), one
 * section per step. */
json_t *summary_json(const struct stats *s, const struct summary_info *info)
{
    json_t *root = jobj();
    uint64_t w = info->window_ns;

    summary_header_json(root, s, info);
    jset(root, "requests", summary_requests_json(s));
    json_t *lat = jobj();
    for (size_t i = 0; i < LL_ARRAY_LEN(summary_rows); i++)
        jset(lat, summary_rows[i].key, summary_latency_json(summary_row_hist(s, &summary_rows[i])));
    jset(root, "latency_ns", lat);
    jset(root, "throughput", summary_throughput_json(s, info, w));
    if (info->sessions)
        jset(root, "sessions", summary_sessions_json(s, info, w));
    jset(root, "tokens", summary_tokens_json(s, info));
    jset(root, "finish_reasons", summary_finish_json(s));
    jset(root, "cut_short", summary_cut_short_json(s));
    jset(root, "inflight", summary_inflight_json(s, info, w));
    jset(root, "cold",
         info->cold ? summary_cold_json(info->cold, info->cold_requests) : json_null());
    jset(root, "records_written", ju64(info->records_written));
    return root;
}

int summary_write_json(const char *path, const struct stats *s, const struct summary_info *info,
                       char *err, size_t errlen)
{
    json_t *root = summary_json(s, info);
    int rc = results_write_json_path_atomic(path, root, err, errlen);
    json_decref(root);
    return rc;
}

/* The figures a part of the run (a traffic class, an endpoint) has in
 * summary.json: its errors by kind, TTFT, TPOT and E2E, and its ok and
 * output-token rates over the window. */
static void part_json(json_t *o, const struct stats *s, uint64_t window_ns)
{
    json_t *kinds = jobj();
    for (int k = 0; k < REC_KIND_COUNT; k++) {
        if (s->by_kind[k])
            jset(kinds, rec_kind_name((enum rec_kind)k), ju64(s->by_kind[k]));
    }
    jset(o, "by_kind", kinds);
    json_t *lat = jobj();
    jset(lat, "ttft", summary_latency_json(s->ttft));
    jset(lat, "tpot", summary_latency_json(s->tpot));
    jset(lat, "e2e", summary_latency_json(s->e2e));
    jset(o, "latency_ns", lat);
    jset(o, "ok_rate_per_s", jdouble(summary_rate((double)s->win_ok, window_ns)));
    jset(o, "output_tokens_per_s", jdouble(summary_rate((double)s->win_output_tokens, window_ns)));
}

json_t *summary_classes_json(const struct summary_class *c, size_t n, uint64_t window_ns)
{
    json_t *arr = json_array();
    for (size_t i = 0; i < n; i++) {
        const struct stats *s = c[i].s;
        json_t *o = jobj();
        jset(o, "name", json_string(c[i].name));
        jset(o, "scheduled", ju64(s->scheduled));
        jset(o, "ok", ju64(s->by_kind[REC_OK]));
        jset(o, "failed", ju64(stats_failed(s)));
        part_json(o, s, window_ns);
        jset(o, "slo", c[i].slo ? json_string(c[i].slo) : json_null());
        jset(o, "goodput_per_s",
             c[i].slo ? jdouble(summary_rate((double)s->win_slo_met, window_ns)) : json_null());
        jset(o, "attainment", c[i].slo ? jdouble(stats_attainment(s)) : json_null());
        jset(o, "slo_unjudged", c[i].slo ? ju64(s->slo_unjudged) : json_null());
        json_array_append_new(arr, o);
    }
    return arr;
}

json_t *summary_endpoints_json(const struct summary_endpoint *ep, size_t n, uint64_t window_ns)
{
    json_t *arr = json_array();
    for (size_t i = 0; i < n; i++) {
        const struct stats *s = ep[i].s;
        json_t *o = jobj();
        jset(o, "index", ju64(i));
        jset(o, "url", json_string(ep[i].url));
        jset(o, "weight", ju64(ep[i].weight));
        jset(o, "scheduled", ju64(s->scheduled));
        jset(o, "requests", ju64(s->completed));
        jset(o, "ok", ju64(s->by_kind[REC_OK]));
        jset(o, "errors", ju64(stats_errors(s)));
        part_json(o, s, window_ns);
        json_array_append_new(arr, o);
    }
    return arr;
}
