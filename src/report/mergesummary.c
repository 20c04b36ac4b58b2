/* mergesummary.c: the summary of a merged run (see mergeparts.h): the
 * parts' summaries summed, the merged run's facts and verdict, the summary
 * printed and summary.json written from the merged records through
 * measure/'s summary code, and run.json's outcome. Moved from runmerge.c,
 * which reads the parts and counts the records. */
#include "report/mergeparts.h"

#include <inttypes.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "measure/expect.h"
#include "measure/hist.h"
#include "measure/results.h"
#include "measure/stats.h"
#include "measure/summary.h"
#include "measure/verdict.h"
#include "report/runmerge.h"
#include "sweep/steady.h"
#include "util/util.h"

/* Merge each part's histogram at summary.json's latency_ns.NAME.hist into
 * h (the figures a record does not carry). Returns the parts without one. */
static size_t hist_from_parts(struct merge *m, const char *name, struct hist *h)
{
    size_t lacking = 0;
    struct hist *one = hist_new();
    for (size_t i = 0; i < m->n_parts; i++) {
        const json_t *lat = json_object_get(m->parts[i].sum, "latency_ns");
        const char *s = rm_jstr(json_object_get(lat, name), "hist");
        char err[200];
        hist_reset(one);
        if (!s || hist_from_string(one, s, err, sizeof err) != 0) {
            lacking++;
            continue;
        }
        hist_merge(h, one);
    }
    hist_free(one);
    return lacking;
}

/* The load model's label as one process prints it: a shard's less its
 * " (shard K of N)". Into buf. */
static void mode_label(const json_t *sum, char *buf, size_t len)
{
    const char *mode = rm_jstr(sum, "mode");
    snprintf(buf, len, "%s", mode ? mode : "-");
    char *s = strstr(buf, " (shard ");
    if (s)
        *s = '\0';
}

/* What the parts' summaries add up to. */
struct part_sums {
    uint64_t window_ns;                 /* the longest part's window; 1 when none has one */
    double area;                        /* each part's mean in flight x its window, request-ns */
    uint64_t sent_in_window;            /* the parts' sends inside their windows */
    uint64_t late_sends, asleep, invol; /* lateness_diagnosis's counts */
    double cpu_s, wall_s;               /* the workers' CPU and wall time, s */
    int interrupted;                    /* some part was */
};

/* The parts' summaries summed into *ps, and into m->st the scheduled
 * counts (a part that died before its summary: its lines are what it
 * scheduled), the ITL and the lateness histograms. */
static void parts_sum(struct merge *m, struct part_sums *ps)
{
    memset(ps, 0, sizeof *ps);
    struct stats *st = &m->st;
    for (size_t i = 0; i < m->n_parts; i++) {
        const struct part *p = &m->parts[i];
        ps->interrupted |= p->interrupted;
        if (!p->sum)
            continue;
        uint64_t w = rm_ju(p->sum, "window_ns", NULL);
        ps->window_ns = w > ps->window_ns ? w : ps->window_ns;
        ps->area += rm_jnum(p->sum, "inflight", "mean") * (double)w;
        st->scheduled += rm_ju(p->sum, "requests", "scheduled");
        ps->sent_in_window += rm_ju(p->sum, "sent_in_window", NULL);
        ps->late_sends += rm_ju(p->sum, "lateness_diagnosis", "late_sends");
        ps->asleep += rm_ju(p->sum, "lateness_diagnosis", "asleep_when_due");
        ps->invol += rm_ju(p->sum, "lateness_diagnosis", "involuntary_switches");
        ps->cpu_s += fmax(0, rm_jnum(p->sum, "lateness_diagnosis", "worker_cpu_s"));
        ps->wall_s += fmax(0, rm_jnum(p->sum, "lateness_diagnosis", "worker_wall_s"));
    }
    for (size_t i = 0; i < m->n_parts; i++)
        if (!m->parts[i].sum)
            st->scheduled += m->parts[i].lines;
    hist_from_parts(m, "itl", st->itl);
    hist_from_parts(m, "schedule_lateness", st->lateness);
    if (!ps->window_ns)
        ps->window_ns = 1;
}

/* summary.json's "server" of the merged run (NULL: none) and *energy
 * (NULL: none): m->server's join of the scraping shard's series to the
 * merged window (runmerge.h), its lines printed to out; the energy keeps
 * the join's origin ("origin_monotonic_ns", as the server's view does),
 * so that a rebuild can join it again when no server was scraped. In a
 * rebuild the series is the merged directory's copy, the origin the
 * server's (else the energy's) and the window the same (the merged
 * summary's window is the longest shard's, its records the merge's);
 * without a join, without an origin (a summary written before either
 * kept it), or when the join cannot read the series (the copy deleted
 * or damaged), the merged summary's own objects, which the records
 * cannot change, unprinted: a rebuild never drops what the merge joined. */
static json_t *server_json(const struct merge *m, const json_t *cfg, FILE *out, json_t **energy)
{
    *energy = NULL;
    const struct part *p = NULL;
    uint64_t origin = 0;
    if (m->rebuild) {
        p = &m->parts[0];
        const json_t *s = json_object_get(p->sum, "server");
        const json_t *e = json_object_get(p->sum, "energy");
        origin = json_is_object(s) ? rm_ju(s, "origin_monotonic_ns", NULL)
                                   : rm_ju(e, "origin_monotonic_ns", NULL);
        if (!m->server || origin == 0 || (!json_is_object(s) && !json_is_object(e))) {
            *energy = e ? json_deep_copy(e) : NULL;
            return s ? json_deep_copy(s) : NULL;
        }
    } else {
        const json_t *ms_k = json_object_get(cfg, "metrics_shard");
        uint32_t k = json_is_integer(ms_k) ? (uint32_t)json_integer_value(ms_k) : 0;
        for (size_t i = 0; i < m->n_parts; i++)
            if (m->parts[i].shard == k)
                p = &m->parts[i];
        origin = p ? rm_ju(p->sum, "run_start_monotonic_ns", NULL) : 0;
    }
    const json_t *srv = p ? json_object_get(p->sum, "server") : NULL;
    const json_t *en = p ? json_object_get(p->sum, "energy") : NULL;
    if (!m->server || (!json_is_object(srv) && !json_is_object(en)))
        return NULL;
    const struct stats *st = &m->st;
    struct stats_served sv;
    stats_served(st, &m->cold, &sv);
    struct runmerge_window w = {
        .dir = p->dir,
        .server = json_is_object(srv) ? srv : NULL,
        .energy = json_is_object(en) ? en : NULL,
        .origin_abs_ns = origin,
        .end_ns = m->last_end_ns,
        .ttft_sent_p50_s = NAN,
        .ttft_sent_p99_s = NAN,
        .output_tokens = sv.output_tokens,
        .prompt_tokens = sv.prompt_tokens,
        .cached_tokens = sv.cached_tokens,
        .completed_ok = sv.completed_ok,
        .failed_started = sv.failed_started,
        .failed_output_tokens = sv.failed_output_tokens,
        /* the energy's, over the same whole run */
        .energy_tokens = sv.output_tokens,
        .energy_requests = sv.completed_ok,
        .rebuild = m->rebuild,
    };
    if (hist_count(st->ttft_server)) {
        w.ttft_sent_p50_s = (double)hist_percentile(st->ttft_server, 50) / 1e9;
        w.ttft_sent_p99_s = (double)hist_percentile(st->ttft_server, 99) / 1e9;
    }
    uint64_t warmup = rm_ju(cfg, "warmup_ns", NULL);
    for (size_t i = 0; i < m->n_parts; i++) {
        uint64_t e = warmup + rm_ju(m->parts[i].sum, "window_ns", NULL);
        w.end_ns = e > w.end_ns ? e : w.end_ns;
    }
    json_t *o = m->server(&w, out, energy);
    if (m->rebuild) {
        if (!o)
            o = json_deep_copy(srv);
        if (!*energy && json_is_object(en))
            *energy = json_deep_copy(en);
    }
    /* (a rebuild of a summary whose energy had no origin adds none: the
     * file stays byte for byte what the merge wrote) */
    if (*energy && origin && (!m->rebuild || json_object_get(en, "origin_monotonic_ns")))
        json_object_set_new(*energy, "origin_monotonic_ns", json_integer((json_int_t)origin));
    return o;
}

/* A session run's figures (summary.json's "sessions"): a session
 * belongs whole to one shard, so the sessions started in the window and
 * those cut short are the shards' counts added up; the intended session
 * rate is a shard's share times rate_scale (the shard count; 1 in a
 * rebuild), the turns' mean the configuration's, the same in every
 * shard. The realised rates are summary_json's, over the merged window,
 * the sessions' over their arrivals when the count ended them (the
 * merged records' starts, merged_offering). */
static void sessions_info(const struct merge *m, const json_t *fs, double rate_scale,
                          struct summary_info *info)
{
    if (!json_is_object(json_object_get(fs, "sessions")))
        return;
    info->sessions = 1;
    info->session_rate_per_s = rm_jnum(fs, "sessions", "intended_rate_per_s") * rate_scale;
    info->session_turns_mean = rm_jnum(fs, "sessions", "turns_mean");
    for (size_t i = 0; i < m->n_parts; i++) {
        info->sessions_started += rm_ju(m->parts[i].sum, "sessions", "started");
        info->sessions_cut += rm_ju(m->parts[i].sum, "sessions", "cut");
        info->sessions_failed += rm_ju(m->parts[i].sum, "sessions", "failed");
    }
}

/* What the merged run intended, and the span it offered over, as a run
 * sets them (cmd_run.c, runopts_summary_info): a paced closed loop's
 * users and pace are run.json's config, the whole run's --users (a
 * shard's summary counts its own), so that the intended rate is the
 * whole schedule's as the offered rate is, a missing shard's users
 * included; the offering runs from the window's start to the latest
 * sched_ns of the merged records, over every shard
 * (summary_offering_ns, with the merged window and config's
 * --duration and --warmup); a session run's sessions, from the window's
 * start to the last session's start, when the window ran on past it
 * (summary_session_span, from the records' starts as the run from its
 * driver's). */
static void merged_offering(const struct merge *m, const json_t *cfg, struct summary_info *info)
{
    const char *lmodel = rm_jstr(cfg, "load_model");
    uint64_t users = rm_ju(cfg, "users", NULL), pace = rm_ju(cfg, "pace_ns", NULL);
    if (lmodel && strcmp(lmodel, "closed") == 0 && pace > 0 && users <= UINT32_MAX) {
        info->paced_users = (uint32_t)users;
        info->pace_ns = pace;
    }
    info->offering_ns = summary_offering_ns(rm_ju(cfg, "duration_ns", NULL), info->warmup_ns,
                                            info->window_ns, m->last_sched_ns);
    info->offering_ran_on =
        summary_offering_ran_on(rm_ju(cfg, "duration_ns", NULL), info->warmup_ns, info->window_ns);
    if (info->sessions)
        summary_session_span(info, rm_ju(cfg, "duration_ns", NULL), &m->session_starts);
}

/* --expect judged on the merged summary sj, as `llmload run` judges its
 * own: summary.json's "expect" (null without one), a line on stderr per
 * failed threshold. The thresholds are those the first summary fs lists
 * (every shard ran with the same flags, a rebuild reads the merged
 * summary's own, and a shard's run.json from before it kept --expect has
 * none). Returns the failed
 * count (0 when there is none, or they no longer parse). */
static size_t expect_judge(const json_t *fs, json_t *sj)
{
    const json_t *items = json_object_get(fs, "expect");
    char spec[2048] = "", err[300];
    size_t at = 0;
    for (size_t i = 0; i < json_array_size(items) && at < sizeof spec; i++) {
        const char *t = rm_jstr(json_array_get(items, i), "expect");
        if (t)
            at += (size_t)snprintf(spec + at, sizeof spec - at, "%s%s", at ? "," : "", t);
    }
    struct expect_set ex;
    if (!spec[0] || at >= sizeof spec || expect_parse(spec, &ex, err, sizeof err) != 0)
        ex.n = 0;
    return expect_judge_summary(&ex, sj, stderr);
}

/* The summary's facts of the merged run: from the first part's summary fs
 * (the mode, in mode, and the target), the run's config cfg and the sums;
 * the offered rate is a part's times rate_scale. */
static void merged_info(const struct merge *m, const json_t *fs, const json_t *cfg,
                        const char *slo_text, double rate_scale, const struct part_sums *ps,
                        const char *mode, struct summary_info *info)
{
    info->mode = mode;
    const char *cmd = rm_jstr(m->parts[0].run, "command");
    info->command = cmd && strcmp(cmd, "run") != 0 ? cmd : NULL;
    info->closed_loop = json_is_true(json_object_get(fs, "closed_loop"));
    double offered = rm_jnum(fs, "throughput", "offered_rate_per_s");
    info->offered_rate_per_s = isfinite(offered) ? offered * rate_scale : 0;
    info->window_ns = ps->window_ns;
    info->warmup_ns = rm_ju(cfg, "warmup_ns", NULL);
    info->cold_requests = rm_ju(cfg, "cold_start", NULL);
    info->cold = info->cold_requests ? &m->cold : NULL;
    info->inflight_mean = ps->area / (double)ps->window_ns;
    info->inflight_max = m->inflight_max;
    info->target_url = rm_jstr(fs, "target_url");
    info->model = rm_jstr(fs, "model");
    info->version = LL_VERSION;
    json_t *seed = json_object_get(cfg, "seed");
    info->seed = json_is_integer(seed)  ? (uint64_t)json_integer_value(seed)
                 : json_is_string(seed) ? strtoull(json_string_value(seed), NULL, 10)
                                        : 0;
    json_t *salt = json_object_get(cfg, "prompt_salt");
    info->has_prompt_salt = json_is_integer(salt);
    info->prompt_salt = info->has_prompt_salt ? (uint64_t)json_integer_value(salt) : 0;
    info->prompt_salt_auto = json_is_true(json_object_get(cfg, "prompt_salt_auto"));
    info->interrupted = ps->interrupted;
    info->records_written = m->n_refs;
    info->slo = slo_text;
    /* A class whose SLO (its own, else the run's) is not the run's has
     * its own: the whole run's goodput counted it by its class's. */
    for (size_t k = 0; k < m->n_cls; k++)
        info->slo_by_class |=
            m->cls[k].slo_text[0] && (!slo_text || strcmp(m->cls[k].slo_text, slo_text) != 0);
    double wshare = rm_jnum(fs, "tokens", "workload_cached_share");
    info->workload_share_known = isfinite(wshare);
    info->workload_cached_share = wshare;
    sessions_info(m, fs, rate_scale, info);
    merged_offering(m, cfg, info);
}

/* Why the merged run's steadiness is not judged, into info: a merge
 * does not judge it (sweep_steady_unjudged), though a lasting cause the
 * configuration shows (a replay, sessions, bursts, a ramp) says more and
 * comes first, as it does in each shard's own summary. */
static void merged_steady(const json_t *cfg, struct summary_info *info)
{
    struct sweep_steady_case c = {
        .trace = info->command && strcmp(info->command, "replay") == 0,
        .sessions = info->sessions,
        .bursts = json_array_size(json_object_get(cfg, "bursts")) > 0,
        .rate_changes = rm_jnum(cfg, "ramp_to_per_s", NULL) > 0,
        .merged = 1,
    };
    sweep_steady_unjudged(&c, info->steady_unjudged, sizeof info->steady_unjudged);
}

/* The merged run's verdict (verdict.h) into info, from the merged
 * lateness and the sums; v is what it was judged on. */
static void merged_verdict(struct merge *m, const json_t *fs, const struct part_sums *ps,
                           struct summary_info *info, struct verdict_input *v)
{
    struct stats *st = &m->st;
    double tol = rm_jnum(fs, "self_check", "lateness_tolerance");
    *v = (struct verdict_input){
        .lateness = st->lateness,
        .tolerance = isfinite(tol) ? tol : 0,
        .late_sends = ps->late_sends,
        .late_asleep = ps->asleep,
        .cpu_ns = (uint64_t)(ps->cpu_s * 1e9),
        .invol_switches = ps->invol,
        .wall_ns = (uint64_t)(ps->wall_s * 1e9),
        .kept = info->command ? "the trace's times" : "the schedule",
        .check_achieved =
            !ps->interrupted && !info->closed_loop && strncmp(info->mode, "open-loop", 9) == 0,
        .scheduled = st->scheduled,
        .sent_in_window = ps->sent_in_window,
    };
    verdict_latencies(v, st);
    struct verdict vd;
    info->invalid = verdict_judge(v, &vd);
    snprintf(info->invalid_reason, sizeof info->invalid_reason, "%s", vd.reason);
    info->invalid_cause = vd.cause;
    snprintf(info->lateness_warning, sizeof info->lateness_warning, "%s", vd.warning);
    summary_cut_short_warning(st, info->cut_short_warning, sizeof info->cut_short_warning);
    info->lateness_moved = vd.worst;
    info->lateness_tolerance = v->tolerance > 0 ? v->tolerance : VERDICT_TOLERANCE_DEFAULT;
}

/* The merged summary printed to out: the run's, its classes' and
 * endpoints' (then the server's, server_json; then merged_print_shards). */
static void merged_print(FILE *out, const struct merge *m, const struct summary_info *info,
                         const struct summary_class *sc, const struct summary_endpoint *ep)
{
    summary_print(out, &m->st, info);
    summary_print_classes(out, sc, m->n_cls, info->window_ns);
    summary_print_endpoints(out, ep, m->n_eps, info->window_ns);
}

/* What is missing and how many shards were merged, printed to out. */
static void merged_print_shards(FILE *out, const struct merge *m)
{
    char shown[sizeof m->incomplete];
    if (m->incomplete[0]) /* from the shards' run.json */
        fprintf(out, "*** %s\n", ll_shown(m->incomplete, shown, sizeof shown));
    fprintf(out, "merged:     %zu of %u shards\n", m->n_present, m->shards);
    fflush(out);
}

/* summary.json's members a merge writes after summary_json's: what is
 * missing, the sends in the windows, the first stop reason of a part
 * (returned, borrowed from that part's summary, or JSON null), the
 * lateness diagnosis of the sums (judged as v was). */
static json_t *merged_json_rest(json_t *sj, const struct merge *m, const struct part_sums *ps,
                                const struct verdict_input *v)
{
    json_object_set_new(sj, "incomplete",
                        m->incomplete[0] ? json_string(m->incomplete) : json_null());
    json_object_set_new(sj, "sent_in_window", json_integer((json_int_t)ps->sent_in_window));
    json_object_set_new(sj, "run_start_monotonic_ns", json_null());
    json_object_set_new(sj, "warmup_records", json_integer((json_int_t)m->warmup_records));
    json_t *stop = json_null();
    for (size_t i = 0; i < m->n_parts && json_is_null(stop); i++)
        if (rm_jstr(m->parts[i].sum, "stop_reason"))
            stop = json_object_get(m->parts[i].sum, "stop_reason");
    json_object_set(sj, "stop_reason", stop);
    struct summary_late late = {
        .late_sends = ps->late_sends,
        .asleep = ps->asleep,
        .cpu_s = ps->cpu_s, /* sums of non-negative numbers: always known */
        .wall_s = ps->wall_s,
        .invol_switches = ps->invol,
        .cause = verdict_late_cause(ps->late_sends, ps->asleep, v->cpu_ns, v->wall_ns, ps->invol),
    };
    json_object_set_new(sj, "lateness_diagnosis", summary_late_json(&late));
    return stop;
}

/* run.json's outcome of the merged run (stop: the stop reason, or JSON
 * null; referenced, not taken). */
static json_t *merged_outcome(const struct merge *m, const struct summary_info *info, json_t *stop)
{
    json_t *o = json_object();
    json_object_set_new(o, "invalid", json_boolean(info->invalid));
    json_object_set_new(o, "invalid_reason",
                        info->invalid ? json_string(info->invalid_reason) : json_null());
    json_object_set_new(o, "interrupted", json_boolean(info->interrupted));
    json_object_set_new(o, "stopped_in", json_null());
    json_object_set_new(o, "stop_reason", json_incref(stop));
    json_object_set_new(o, "records_lost", json_integer(0));
    json_object_set_new(o, "cut_short_warning",
                        info->cut_short_warning[0] ? json_string(info->cut_short_warning)
                                                   : json_null());
    json_object_set_new(o, "incomplete",
                        m->incomplete[0] ? json_string(m->incomplete) : json_null());
    return o;
}

/* The summary of the merged records: printed to out, written to
 * out_dir/summary.json. rate_scale: each part's offered rate times it is
 * the whole's (the shard count; 1 in a rebuild). Returns the exit status
 * before the incomplete rule. */
int rm_summary_write(struct merge *m, const json_t *cfg, const char *slo_text, double rate_scale,
                     const char *out_dir, FILE *out, json_t **outcome)
{
    const struct part *first = NULL;
    for (size_t i = 0; i < m->n_parts && !first; i++)
        if (m->parts[i].sum)
            first = &m->parts[i];
    const json_t *fs = first ? first->sum : NULL;
    struct stats *st = &m->st;
    struct part_sums ps;
    parts_sum(m, &ps);
    char mode[256];
    mode_label(fs, mode, sizeof mode);
    struct summary_info info = {0};
    merged_info(m, fs, cfg, slo_text, rate_scale, &ps, mode, &info);
    struct verdict_input v;
    merged_verdict(m, fs, &ps, &info, &v);
    merged_steady(cfg, &info);
    for (size_t i = 0; i < m->n_parts && !info.stop_reason; i++)
        info.stop_reason = rm_jstr(m->parts[i].sum, "stop_reason");

    uint64_t window = ps.window_ns;
    struct summary_endpoint *ep = ll_calloc(m->n_eps + 1, sizeof *ep);
    for (size_t k = 0; k < m->n_eps; k++)
        ep[k] = (struct summary_endpoint){
            .url = m->ep_url[k], .weight = m->ep_weight[k], .s = &m->eps[k]};
    struct summary_class *sc = ll_calloc(m->n_cls + 1, sizeof *sc);
    for (size_t k = 0; k < m->n_cls; k++)
        sc[k] = (struct summary_class){m->cls[k].name, &m->cls[k].st,
                                       m->cls[k].slo_text[0] ? m->cls[k].slo_text : NULL};
    if (out)
        merged_print(out, m, &info, sc, ep);
    json_t *energy = NULL, *server = server_json(m, cfg, out, &energy);
    if (out)
        merged_print_shards(out, m);
    json_t *sj = summary_json(st, &info);
    if (m->n_cls)
        json_object_set_new(sj, "classes", summary_classes_json(sc, m->n_cls, window));
    if (m->n_eps)
        json_object_set_new(sj, "endpoints", summary_endpoints_json(ep, m->n_eps, window));
    if (server)
        json_object_set_new(sj, "server", server);
    if (energy)
        json_object_set_new(sj, "energy", energy);
    free(sc);
    free(ep);
    json_t *stop = merged_json_rest(sj, m, &ps, &v);
    char err[1200];
    int code = info.invalid ? LL_EXIT_FAIL : LL_EXIT_OK;
    if (expect_judge(fs, sj) > 0)
        code = rm_exit_combine(code, LL_EXIT_EXPECT);
    if (results_write_json_atomic(out_dir, "summary.json", sj, err, sizeof err) != 0) {
        ll_errorf("merge: %s", err);
        code = rm_exit_combine(code, LL_EXIT_RUNTIME);
    }
    /* The whole run's window, judged by the rule a single run's is
     * (summary_measured): the shards each left an empty one of their own
     * to merge. */
    char why[400];
    switch (summary_measured(why, sizeof why, st, &info)) {
    case SUMMARY_NONE_OK:
        ll_errorf("merge: %s", why);
        code = rm_exit_combine(code, LL_EXIT_NO_OK);
        break;
    case SUMMARY_EMPTY:
    case SUMMARY_SHARD_EMPTY:
        ll_errorf("merge: %s", why);
        code = rm_exit_combine(code, LL_EXIT_NO_OK);
        break;
    case SUMMARY_MEASURED: break;
    }
    *outcome = merged_outcome(m, &info, stop);
    json_decref(sj);
    return code;
}
