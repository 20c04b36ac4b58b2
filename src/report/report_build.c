/* report_build.c: a sweep's results directory into its summary.json,
 * steps.csv, classes.csv and report.html (see report_build.h). It reads
 * run.json, steps.jsonl, requests.jsonl and server_metrics.jsonl, computes
 * every figure with the sweep layer's functions, prints the step table and
 * the findings, and writes the files. `llmload report DIR` and `llmload
 * sweep` both end here, so a rebuilt report is the live one. */
#include "report/report_build.h"

#include <errno.h>
#include <inttypes.h>
#include <jansson.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "measure/results.h"
#include "report/report_html.h"
#include "report/report_scrapes.h"
#include "report/runmerge.h"
#include "report/steps_csv.h"
#include "sweep/sweep.h"
#include "sweep/sweep_json.h"
#include "util/json.h"
#include "util/util.h"

/* What the builder reads and computes, and everything it allocates,
 * freed in one place. */
struct built {
    struct report_sweep sw;      /* run.json, its settings, the steps, points and
                               findings: what report_sweep_load hands over */
    char stop_reason[256];       /* steps.jsonl's "end" line; "" = none */
    char *text;                  /* the findings in words, SWEEP_FINDINGS_TEXT_MAX bytes */
    char invalid_text[1024];     /* the INVALID steps in one line, for the report's banner */
    /* --rates auto: steps.jsonl's "probe" line, on the steps' clock */
    double probe_t0_s,
        probe_t1_s; /* s since the sweep's start; both 0 = no probe (or an old file) */
    struct report_inflight_sample *probe_inflight; /* n_probe_inflight, time order; may be NULL */
    size_t n_probe_inflight;
    char first_limit[128];  /* the first limit in a few words, for the knee's card */
    char tags_text[1024];   /* run.json's tags as "k=v k=v"; "" = none */
    char server_text[1024]; /* run.json's contract.server in one line; "" = none */
    json_t *expect;         /* --expect's results for summary.json; NULL before expect_steps */
    size_t expect_failed;   /* thresholds failed over the steps that count */
};

/* Append "k=v" for each scalar of o (sep between them) to buf at *at. */
static void put_pairs(char *buf, size_t len, size_t *at, json_t *o, const char *sep)
{
    const char *k;
    json_t *v;
    int first = 1;
    json_object_foreach(o, k, v)
    {
        char val[256];
        if (json_is_string(v))
            snprintf(val, sizeof val, "%s", json_string_value(v));
        else if (json_is_integer(v))
            snprintf(val, sizeof val, "%lld", (long long)json_integer_value(v));
        else if (json_is_real(v))
            snprintf(val, sizeof val, "%g", json_real_value(v));
        else if (json_is_boolean(v))
            snprintf(val, sizeof val, "%s", json_is_true(v) ? "true" : "false");
        else
            continue;
        if (*at < len)
            *at += (size_t)snprintf(buf + *at, len - *at, "%s%s=%s", first ? "" : sep, k, val);
        first = 0;
    }
    if (*at >= len)
        *at = len - 1;
}

/* The report header's tags ("engine=vllm gpu=H100") and the server's own
 * account of itself ("llama.cpp; props: build_info=b6500, ...") from
 * run.json (each "" when absent). */
static void header_texts(struct built *b)
{
    size_t at = 0;
    b->tags_text[0] = b->server_text[0] = '\0';
    put_pairs(b->tags_text, sizeof b->tags_text, &at, json_object_get(b->sw.run, "tags"), " ");
    json_t *srv = json_object_get(json_object_get(b->sw.run, "contract"), "server");
    if (!json_is_object(srv))
        return;
    at = 0;
    const char *header = json_string_value(json_object_get(srv, "header"));
    if (header)
        at += (size_t)snprintf(b->server_text, sizeof b->server_text, "%.200s", header);
    static const char *const eps[] = {"version", "props", "get_server_info", "info"};
    for (size_t i = 0; i < LL_ARRAY_LEN(eps); i++) {
        json_t *e = json_object_get(srv, eps[i]);
        if (!json_is_object(e) || json_object_size(e) == 0 || at >= sizeof b->server_text - 1)
            continue;
        at += (size_t)snprintf(b->server_text + at, sizeof b->server_text - at,
                               "%s/%s: ", at ? "; " : "", eps[i]);
        if (at >= sizeof b->server_text)
            at = sizeof b->server_text - 1;
        put_pairs(b->server_text, sizeof b->server_text, &at, e, ", ");
    }
}

static void built_free(struct built *b)
{
    report_sweep_free(&b->sw);
    free(b->text);
    free(b->probe_inflight);
    json_decref(b->expect);
    memset(b, 0, sizeof *b);
}

/* The "probe" line of --rates auto: when it ran and its in-flight samples
 * (absent in files written before they were kept: no probe drawn). */
static void load_probe(json_t *o, struct built *b)
{
    json_t *t0 = json_object_get(o, "start_offset_ns"), *d = json_object_get(o, "duration_ns");
    if (!json_is_integer(t0) || !json_is_integer(d))
        return;
    b->probe_t0_s = (double)json_integer_value(t0) / 1e9;
    b->probe_t1_s = b->probe_t0_s + (double)json_integer_value(d) / 1e9;
    struct inflight_sample *series;
    size_t n = sweep_inflight_series_from_json(json_object_get(o, "inflight_series"), &series);
    free(b->probe_inflight);
    b->probe_inflight = ll_calloc(n + 1, sizeof *b->probe_inflight);
    b->n_probe_inflight = n;
    for (size_t i = 0; i < n; i++) {
        b->probe_inflight[i].t_s = b->probe_t0_s + (double)series[i].t_ns / 1e9;
        b->probe_inflight[i].inflight = series[i].inflight;
    }
    free(series);
}

/* Read steps.jsonl: one facts object per step, an "end" object with the
 * stop reason, the "probe" line's times (load_probe); unknown kinds are
 * skipped. */
static int load_steps(const char *path, struct built *b, char *err, size_t errlen)
{
    FILE *f = fopen(path, "r");
    if (!f) {
        snprintf(err, errlen, "%.1000s: %s", path, strerror(errno));
        return LL_E_IO;
    }
    char *line = NULL;
    size_t cap = 0, lineno = 0, room = 0;
    ssize_t got;
    int rc = 0;
    while ((got = getline(&line, &cap, f)) > 0) {
        lineno++;
        json_error_t je;
        json_t *o = ll_json_loadb(line, (size_t)got, 0, &je);
        if (!o) {
            snprintf(err, errlen, "%.1000s:%zu: not JSON: %s", path, lineno, je.text);
            rc = LL_E_INVAL;
            break;
        }
        const char *kind = json_string_value(json_object_get(o, "kind"));
        if (kind && strcmp(kind, "probe") == 0) {
            load_probe(o, b);
        } else if (kind && strcmp(kind, "end") == 0) {
            const char *why = json_string_value(json_object_get(o, "stop_reason"));
            snprintf(b->stop_reason, sizeof b->stop_reason, "%s", why ? why : "");
        } else if (kind && (strcmp(kind, "load") == 0 || strcmp(kind, "recovery") == 0)) {
            if (b->sw.n_steps == room) {
                room = room ? room * 2 : 16;
                b->sw.steps = ll_realloc(b->sw.steps, room * sizeof *b->sw.steps);
            }
            struct sweep_step *s = &b->sw.steps[b->sw.n_steps];
            sweep_step_init(s);
            b->sw.n_steps++;
            char why[200];
            if (sweep_facts_from_json(o, s, why, sizeof why) != 0) {
                snprintf(err, errlen, "%.1000s:%zu: %s", path, lineno, why);
                rc = LL_E_INVAL;
            }
        }
        json_decref(o);
        if (rc)
            break;
    }
    free(line);
    fclose(f);
    return rc;
}

/* Fill the HTML report's input from the steps. rs needs n entries; the
 * in-flight samples are allocated into *samples (caller frees). r borrows
 * from b, b->invalid_text included. */
static void fill_report(struct built *b, struct report *r, struct report_step *rs,
                        struct report_inflight_sample **samples)
{
    const struct sweep_findings *fd = b->sw.fd;
    const struct sweep_settings *set = &b->sw.set;
    size_t total = 0;
    for (size_t i = 0; i < b->sw.n_steps; i++)
        total += b->sw.steps[i].f.n_series;
    *samples = ll_calloc(total + 1, sizeof **samples);
    size_t at = 0;
    int repeats = sweep_has_repeats(b->sw.steps, b->sw.n_steps);
    for (size_t i = 0; i < b->sw.n_steps; i++) {
        const struct sweep_step *s = &b->sw.steps[i];
        struct report_step *p = &rs[i];
        memset(p, 0, sizeof *p);
        p->offered_rps = s->f.offered_rps;
        p->achieved_rps = s->achieved_rps;
        p->completed_rps = s->completed_rps;
        p->goodput_rps = s->goodput_rps;
        p->attainment = s->attainment;
        p->input_tps = s->input_tps;
        p->output_tps = s->output_tps;
        p->j_per_output_token = s->j_per_output_token;
        p->scheduled = s->stats.scheduled;
        p->ok = s->stats.by_kind[REC_OK];
        p->no_stream = stats_embeddings(&s->stats);
        memcpy(p->ttft_ns, s->ttft_ns, sizeof p->ttft_ns);
        memcpy(p->tpot_ns, s->tpot_ns, sizeof p->tpot_ns);
        memcpy(p->itl_ns, s->itl_ns, sizeof p->itl_ns);
        memcpy(p->e2e_ns, s->e2e_ns, sizeof p->e2e_ns);
        memcpy(p->by_kind, s->stats.by_kind, sizeof p->by_kind);
        for (int k = 0; k < REC_KIND_COUNT; k++)
            p->sample[k] = s->stats.sample[k];
        p->steady = s->steady;
        p->invalid = s->invalid;
        p->interrupted = s->f.interrupted;
        p->recovery = s->f.recovery;
        p->confirm = s->f.confirm;
        sweep_step_label(&s->f, repeats, p->id, sizeof p->id);
        p->hold_factor = s->hold_factor;
        p->short_hold = s->short_hold;
        p->verdict = sweep_step_verdict(s, 0);
        p->inflight_mean = s->f.inflight_mean;
        p->inflight_max = s->f.inflight_max;
        p->t_start_s = (double)(s->f.start_offset_ns + s->f.warmup_ns) / 1e9;
        p->t_end_s = (double)(s->f.start_offset_ns + s->f.duration_ns) / 1e9;
        p->inflight = *samples + at;
        for (size_t k = 0; k < s->f.n_series; k++) {
            (*samples)[at].t_s = (double)(s->f.start_offset_ns + s->f.series[k].t_ns) / 1e9;
            (*samples)[at].inflight = s->f.series[k].inflight;
            at++;
        }
        p->n_inflight = s->f.n_series;
        p->ttft_hist = s->stats.ttft;
        const struct stats *c = &s->cold;
        p->cold_n = s->f.cold_start;
        p->cold_scheduled = c->scheduled;
        p->cold_ok = c->by_kind[REC_OK];
        if (p->cold_ok) {
            p->cold_ttft_ns[0] = hist_percentile(c->ttft, 50.0);
            p->cold_ttft_ns[1] = hist_percentile(c->ttft, 99.0);
            p->cold_ttft_ns[2] = hist_max(c->ttft);
            p->cold_e2e_p99_ns = hist_percentile(c->e2e, 99.0);
        }
        p->cold_cached_share = stats_cached_share(c);
    }
    memset(r, 0, sizeof *r);
    json_t *cfg = json_object_get(b->sw.run, "config");
    r->title = "llmload sweep";
    r->target = json_string_value(json_object_get(cfg, "url"));
    r->model = json_string_value(json_object_get(cfg, "model"));
    r->version = json_string_value(json_object_get(b->sw.run, "version"));
    r->started_at = json_string_value(json_object_get(cfg, "started_at"));
    r->mode = json_string_value(json_object_get(cfg, "mode_label"));
    header_texts(b);
    r->tags = b->tags_text[0] ? b->tags_text : NULL;
    r->server_said = b->server_text[0] ? b->server_text : NULL;
    r->steps = rs;
    r->n_steps = b->sw.n_steps;
    for (size_t i = 0; i < b->sw.n_steps; i++)
        r->energy |= b->sw.steps[i].f.energy.present;
    r->slo_ttft_ms = (double)set->slo.ttft_ns / 1e6;
    r->slo_tpot_ms = (double)set->slo.tpot_ns / 1e6;
    r->slo_e2e_ms = (double)set->slo.e2e_ns / 1e6;
    r->attainment_target = fd->have_slo ? set->attainment : 0;
    r->capacity_rps = fd->capacity_found ? fd->capacity_rps : 0;
    r->knee_rps = fd->knee.found ? fd->knee.knee_x : 0;
    r->knee_at_or_above = fd->knee.found && fd->knee.edge;
    const struct sweep_first_limit *fl = &fd->first_limit;
    if (fl->reached)
        snprintf(b->first_limit, sizeof b->first_limit, "first %s: %s at %.4g req/s (step %u)",
                 fl->kind == SWEEP_LIMIT_ADMISSION ? "policy" : "limit",
                 sweep_limit_kind_name(fl->kind), fl->offered_rps, fl->step_index);
    else
        snprintf(b->first_limit, sizeof b->first_limit, "first limit: %s",
                 fl->none_judged      ? "not judged (no step could be judged)"
                 : fl->server_metrics ? "none reached"
                                      : "unknown (no server metrics)");
    r->first_limit = b->first_limit;
    r->invalid =
        sweep_invalid_text(b->sw.steps, b->sw.n_steps, b->invalid_text, sizeof b->invalid_text) > 0;
    r->invalid_reason = r->invalid ? b->invalid_text : NULL;
    r->invalid_cause = sweep_invalid_cause(b->sw.steps, b->sw.n_steps);
    r->probe_t0_s = b->probe_t0_s;
    r->probe_t1_s = b->probe_t1_s;
    r->probe_inflight = b->probe_inflight;
    r->n_probe_inflight = b->n_probe_inflight;
}

/* The per-class input of the HTML report (nothing without classes): one
 * report_class per class of the findings, each with one entry per step.
 * *cls gets n_classes entries and *cls_steps n_classes x n_steps, and
 * *slo_text the SLO specs (96 bytes each); the caller frees all three. */
static void fill_report_classes(const struct built *b, struct report *r,
                                struct report_class **cls,
                                struct report_class_step **cls_steps, char **slo_text)
{
    const struct sweep_findings *fd = b->sw.fd;
    size_t nc = fd->n_classes, ns = b->sw.n_steps;
    *cls = ll_calloc(nc + 1, sizeof **cls);
    *cls_steps = ll_calloc(nc * ns + 1, sizeof **cls_steps);
    *slo_text = ll_calloc(nc + 1, 96);
    for (size_t k = 0; k < nc; k++) {
        const struct sweep_class_finding *cf = &fd->classes[k];
        struct report_class *c = &(*cls)[k];
        struct report_class_step *cs = *cls_steps + k * ns;
        c->name = cf->name;
        if (cf->have_slo) {
            slo_format(&cf->slo, *slo_text + 96 * k, 96);
            c->slo = *slo_text + 96 * k;
        }
        c->own_slo = cf->own_slo;
        c->capacity_rps = cf->capacity_found ? cf->capacity_rps : 0;
        c->capacity_lower_bound = cf->none_failed;
        if (!cf->capacity_found && !cf->next_fails && cf->n_unmeasured > 0)
            c->not_judged = sweep_class_not_judged_why(cf);
        c->steps = cs;
        for (size_t i = 0; i < ns; i++) {
            const struct sweep_step *s = &b->sw.steps[i];
            int j = sweep_step_class_find(s, cf->name);
            if (j < 0)
                continue;
            const struct sweep_class *sc = &s->classes[j];
            cs[i].present = 1;
            cs[i].scheduled = sc->stats.scheduled;
            cs[i].ok = sc->stats.by_kind[REC_OK];
            cs[i].failed = stats_failed(&sc->stats);
            cs[i].achieved_rps = sc->achieved_rps;
            cs[i].goodput_rps = sc->goodput_rps;
            cs[i].attainment = sc->attainment;
            memcpy(cs[i].ttft_ns, sc->ttft_ns, sizeof cs[i].ttft_ns);
            memcpy(cs[i].tpot_ns, sc->tpot_ns, sizeof cs[i].tpot_ns);
            memcpy(cs[i].e2e_ns, sc->e2e_ns, sizeof cs[i].e2e_ns);
            cs[i].pass = sc->slo_pass;
        }
    }
    r->classes = nc ? *cls : NULL;
    r->n_classes = nc;
}

/* The per-endpoint input of the HTML report (nothing with one --url):
 * one report_endpoint per endpoint of the first step that has them,
 * each with one entry per step (zeroed where a step has fewer). *eps gets
 * the endpoints and *ep_steps n_endpoints x n_steps; the caller frees
 * both. */
static void fill_report_endpoints(const struct built *b, struct report *r,
                                  struct report_endpoint **eps,
                                  struct report_endpoint_step **ep_steps)
{
    const struct sweep_step *first = sweep_first_with_endpoints(b->sw.steps, b->sw.n_steps);
    size_t ne = first ? first->f.n_endpoints : 0, ns = b->sw.n_steps;
    *eps = ll_calloc(ne + 1, sizeof **eps);
    *ep_steps = ll_calloc(ne * ns + 1, sizeof **ep_steps);
    for (size_t k = 0; k < ne; k++) {
        struct report_endpoint *e = &(*eps)[k];
        struct report_endpoint_step *es = *ep_steps + k * ns;
        e->url = first->f.endpoints[k].url;
        e->steps = es;
        for (size_t i = 0; i < ns; i++) {
            const struct sweep_step *s = &b->sw.steps[i];
            if (k >= s->f.n_endpoints)
                continue;
            const struct sweep_endpoint *se = &s->endpoints[k];
            es[i].requests = se->stats.completed;
            es[i].ok = se->stats.by_kind[REC_OK];
            es[i].errors = stats_errors(&se->stats);
            es[i].error_rate = se->error_rate;
            es[i].ttft_p50_ns = se->ttft_ns[0];
            es[i].ttft_p99_ns = se->ttft_ns[3];
            es[i].tpot_p50_ns = se->tpot_ns[0];
            es[i].tpot_p99_ns = se->tpot_ns[3];
            es[i].output_tps = se->output_tps;
        }
    }
    r->endpoints = ne ? *eps : NULL;
    r->n_endpoints = ne;
}

/* Read run.json, steps.jsonl and requests.jsonl of dir into b (zeroed).
 * Returns 0, or -1 with the reason on stderr. */
static int built_load(const char *dir, struct built *b)
{
    char path[1200], err[1600];
    sweep_settings_init(&b->sw.set);
    snprintf(path, sizeof path, "%s/run.json", dir);
    json_error_t je;
    /* A directory that is not there, or holds no run.json, is named as
     * such: jansson's "unable to open <path>: ..." repeated the path and
     * left the reader to guess which of the two was missing. */
    struct stat st;
    if (stat(dir, &st) != 0) {
        ll_errorf("%s: %s", dir, errno == ENOENT ? "no such directory" : strerror(errno));
        return -1;
    }
    if (!S_ISDIR(st.st_mode)) {
        ll_errorf("%s: not a directory (llmload report DIR takes a results directory)", dir);
        return -1;
    }
    if (stat(path, &st) != 0 && errno == ENOENT) {
        ll_errorf("%s: no run.json: not a results directory (llmload sweep --out DIR writes one)",
                  dir);
        return -1;
    }
    b->sw.run = ll_json_load_file(path, 0, &je);
    if (!b->sw.run) {
        ll_errorf("%s: %s", path, je.text);
        return -1;
    }
    if (results_run_schema_check(b->sw.run, err, sizeof err) != 0) {
        ll_errorf("%s: %s", dir, err);
        return -1;
    }
    json_t *sw = json_object_get(json_object_get(b->sw.run, "config"), "sweep");
    if (!json_is_object(sw)) {
        ll_errorf("%s: a run's results, not a sweep's (run.json has no config.sweep): llmload "
                  "report rebuilds a sweep's or a merged run's; a run's figures are its "
                  "summary.json",
                  dir);
        return -1;
    }
    sweep_settings_from_json(sw, &b->sw.set);
    const char *arrival =
        json_string_value(json_object_get(json_object_get(b->sw.run, "config"), "arrival"));
    b->sw.set.poisson_arrivals = arrival && strcmp(arrival, "poisson") == 0;
    /* No --engine-limits seqs: llama.cpp says its slots in /props, which
     * the run's contract kept (vLLM exports no batch bound at all). */
    json_t *slots = json_object_get(
        json_object_get(json_object_get(json_object_get(b->sw.run, "contract"), "server"), "props"),
        "total_slots");
    if (!b->sw.set.engine_seqs && json_is_integer(slots) && json_integer_value(slots) >= 1 &&
        json_integer_value(slots) <= UINT32_MAX) {
        b->sw.set.engine_seqs = (uint32_t)json_integer_value(slots);
        b->sw.set.engine_seqs_source = "props";
    }
    snprintf(path, sizeof path, "%s/steps.jsonl", dir);
    if (load_steps(path, b, err, sizeof err) != 0) {
        ll_errorf("%s", err);
        return -1;
    }
    snprintf(path, sizeof path, "%s/requests.jsonl", dir);
    /* An emptied requests.jsonl reads as steps whose every request went
     * missing: the summary rebuilt from it would say INVALID or no
     * capacity and replace the one the sweep measured. */
    uint64_t scheduled = 0;
    for (size_t i = 0; i < b->sw.n_steps; i++)
        scheduled += b->sw.steps[i].f.scheduled;
    struct stat sb;
    if (scheduled > 0 && stat(path, &sb) == 0 && S_ISREG(sb.st_mode) && sb.st_size == 0) {
        ll_errorf("%s: empty, but steps.jsonl says %" PRIu64 " requests were scheduled: no "
                  "records to rebuild from (summary.json is left as it is)",
                  path, scheduled);
        return -1;
    }
    if (sweep_read_records(path, 0, b->sw.steps, b->sw.n_steps, &b->sw.set, err, sizeof err) != 0) {
        ll_errorf("%s", err);
        return -1;
    }
    return 0;
}

/* Every step's figures, the points, the findings and their text. */
static void built_analyse(struct built *b)
{
    for (size_t i = 0; i < b->sw.n_steps; i++)
        sweep_step_finish(&b->sw.steps[i], &b->sw.set);
    b->sw.points = ll_calloc(b->sw.n_steps + 1, sizeof *b->sw.points);
    b->sw.n_points = sweep_points_build(b->sw.steps, b->sw.n_steps, b->sw.points);
    b->sw.fd = ll_malloc(sizeof *b->sw.fd);
    sweep_findings_compute(b->sw.steps, b->sw.n_steps, b->sw.points, b->sw.n_points, &b->sw.set,
                           b->sw.fd);
    b->text = ll_malloc(SWEEP_FINDINGS_TEXT_MAX);
    sweep_findings_text(b->sw.fd, &b->sw.set, b->stop_reason, b->text, SWEEP_FINDINGS_TEXT_MAX);
}

/* The terminal's view: the step table, the INVALID line, the classes and
 * the findings. */
static void built_print(const struct built *b, FILE *out)
{
    sweep_print_table(out, b->sw.steps, b->sw.n_steps, &b->sw.set);
    char inv[1024];
    if (sweep_invalid_text(b->sw.steps, b->sw.n_steps, inv, sizeof inv))
        fprintf(out, "\n*** %s\n", inv);
    sweep_print_classes(out, b->sw.fd);
    sweep_print_endpoints(out, b->sw.steps, b->sw.n_steps);
    fprintf(out, "\n%s", b->text);
    fflush(out);
}

/* steps.csv, classes.csv (with classes) and summary.json into dir.
 * Returns 0, or -1 with the reason on stderr. */
static int write_tables(const char *dir, const struct built *b)
{
    char path[1200], err[1600];
    snprintf(path, sizeof path, "%s/steps.csv", dir);
    if (steps_csv_write(path, b->sw.steps, b->sw.n_steps, err, sizeof err) != 0) {
        ll_errorf("%s", err);
        return -1;
    }
    if (steps_csv_have_classes(b->sw.steps, b->sw.n_steps)) {
        snprintf(path, sizeof path, "%s/classes.csv", dir);
        if (steps_csv_write_classes(path, b->sw.steps, b->sw.n_steps, err, sizeof err) != 0) {
            ll_errorf("%s", err);
            return -1;
        }
    }
    json_t *sum = sweep_summary_json(b->sw.steps, b->sw.n_steps, b->sw.points, b->sw.n_points,
                                     b->sw.fd, &b->sw.set, b->stop_reason, b->sw.run);
    if (b->sw.set.expect.n) /* absent without --expect, as in files made before it */
        json_object_set(sum, "expect", b->expect);
    /* A merged sweep (llmload merge) with shards or ids missing says so. */
    json_t *mg = json_object_get(b->sw.run, "merged");
    if (mg)
        json_object_set(sum, "incomplete", json_object_get(mg, "incomplete"));
    snprintf(path, sizeof path, "%s/summary.json", dir);
    int rc = results_write_json_path_atomic(path, sum, err, sizeof err);
    json_decref(sum);
    if (rc != 0) {
        ll_errorf("%s", err);
        return -1;
    }
    return 0;
}

/* report.html into dir, with server_metrics.jsonl's series when there is
 * one. Returns 0, or -1 with the reason on stderr. */
static int write_html(const char *dir, struct built *b)
{
    char path[1200], err[1600];
    struct report_class *cls = NULL;
    struct report_class_step *cls_steps = NULL;
    char *slo_text = NULL;
    struct report_inflight_sample *samples = NULL;
    struct report_step *rs = ll_calloc(b->sw.n_steps + 1, sizeof *rs);
    struct report r;
    fill_report(b, &r, rs, &samples);
    fill_report_classes(b, &r, &cls, &cls_steps, &slo_text);
    struct report_endpoint *eps = NULL;
    struct report_endpoint_step *ep_steps = NULL;
    fill_report_endpoints(b, &r, &eps, &ep_steps);
    r.findings_text = b->text;
    snprintf(path, sizeof path, "%s/server_metrics.jsonl", dir);
    struct report_scrapes sc;
    report_scrapes_load(path, &sc);
    report_scrapes_lend(&sc, &r);
    snprintf(path, sizeof path, "%s/report.html", dir);
    int rc = report_html_write(&r, path, err, sizeof err);
    if (rc != 0)
        ll_errorf("%s", err);
    free(cls);
    free(cls_steps);
    free(slo_text);
    free(eps);
    free(ep_steps);
    free(rs);
    free(samples);
    report_scrapes_free(&sc);
    return rc != 0 ? -1 : 0;
}

/* A step's figures for --expect: those of its summary.json object. */
static void step_figures(const struct sweep_step *s, struct expect_figures *fig)
{
    const struct stats *st = &s->stats;
    int ok = st->by_kind[REC_OK] > 0;
    const uint64_t *lat[EXPECT_NLAT] = {s->ttft_ns, s->tpot_ns, s->itl_ns, s->e2e_ns};
    int any[EXPECT_NLAT] = {ok, hist_count(st->tpot) > 0, hist_count(st->itl_req) > 0, ok};
    /* expect_pcts in sweep_pcts: p50, p90, p95, p99, p99.9 */
    static const size_t at[EXPECT_NPCT] = {0, 1, 2, 3, 4};
    for (size_t i = 0; i < EXPECT_NLAT; i++) {
        for (size_t p = 0; p < EXPECT_NPCT; p++)
            fig->lat_ns[i][p] = any[i] ? (double)lat[i][at[p]] : NAN;
    }
    fig->goodput = s->goodput_rps;
    fig->attainment = s->attainment;
    fig->achieved_rate = s->achieved_rps;
    fig->output_tokens_per_s = s->output_tps;
    fig->completed = (double)st->completed;
    fig->failed = (double)stats_failed(st);
    for (int k = 0; k < REC_KIND_COUNT; k++)
        fig->by_kind[k] = (double)st->by_kind[k];
}

/* --expect on the steps that count (docs/sweep.md): each judged load step
 * (not the recovery, not INVALID) at or under the SLO capacity; when no
 * step met the SLO, the lowest such step. Each failed threshold is a line
 * on stderr naming the step; b->expect gets the results for summary.json
 * (null without --expect), b->expect_failed how many failed. */
static void expect_steps(struct built *b)
{
    const struct expect_set *ex = &b->sw.set.expect;
    b->expect_failed = 0;
    if (!ex->n) {
        b->expect = json_null();
        return;
    }
    const struct sweep_findings *fd = b->sw.fd;
    double lowest = INFINITY;
    for (size_t i = 0; i < b->sw.n_steps; i++) {
        const struct sweep_step *s = &b->sw.steps[i];
        if (!s->f.recovery && sweep_step_judged(s) && s->f.offered_rps < lowest)
            lowest = s->f.offered_rps;
    }
    double upto = fd->capacity_found ? fd->capacity_rps : lowest;
    json_t *arr = json_array();
    for (size_t i = 0; i < b->sw.n_steps; i++) {
        const struct sweep_step *s = &b->sw.steps[i];
        if (s->f.recovery || !sweep_step_judged(s) || s->f.offered_rps > upto * (1 + 1e-9))
            continue;
        struct expect_figures fig;
        step_figures(s, &fig);
        char where[96];
        snprintf(where, sizeof where, "step %u (%.4g req/s)", (unsigned)s->f.index,
                 s->f.offered_rps);
        size_t failed = 0;
        json_t *o = json_object();
        json_object_set_new(o, "step", json_integer((json_int_t)s->f.index));
        json_object_set_new(o, "repeat", json_integer((json_int_t)s->f.repeat));
        json_object_set_new(o, "offered_rps", json_real(s->f.offered_rps));
        json_object_set_new(o, "results", expect_eval(ex, &fig, stderr, where, &failed));
        json_array_append_new(arr, o);
        b->expect_failed += failed;
    }
    b->expect = arr;
}

/* The sweep's verdicts: LL_EXIT_FAIL when no step could be judged (every
 * one INVALID, empty or interrupted); else the --expect-capacity and --expect-slo checks
 * recorded in run.json: LL_EXIT_EXPECT with the reason on stderr when one
 * fails; else LL_EXIT_OK. */
static int expect_checks(const struct built *b)
{
    const struct sweep_settings *set = &b->sw.set;
    const struct sweep_findings *fd = b->sw.fd;
    if (fd->capacity_unknown) {
        char whose[512];
        sweep_late_whose_list(fd->unknown_rps, fd->unknown_cause, fd->n_unknown, whose,
                              sizeof whose);
        ll_errorf("INVALID: no step could be judged: %s moved every step's latencies (see "
                  "\"not judged\" above)",
                  whose);
        return LL_EXIT_FAIL;
    }
    if (!fd->capacity_found && !fd->next_fails && (fd->n_empty || fd->have_cut)) {
        ll_errorf("no step could be judged: %s",
                  !fd->n_empty ? "the sweep was interrupted before a step finished"
                  : fd->empty_cancelled
                      ? "no step's window had a request the SLO could judge (see \"empty\" "
                        "above): the client cancelled them before it was decided"
                      : "no request was scheduled in any step's window (see \"empty\" "
                        "above): lengthen --step-duration");
        return LL_EXIT_FAIL;
    }
    if (set->expect_capacity_rps > 0 &&
        (!fd->capacity_found || fd->capacity_rps < set->expect_capacity_rps)) {
        if (fd->capacity_found)
            ll_errorf("--expect-capacity: SLO capacity %.4g req/s is below %.4g req/s",
                      fd->capacity_rps, set->expect_capacity_rps);
        else
            ll_errorf("--expect-capacity: no SLO capacity found (expected at least %.4g req/s)",
                      set->expect_capacity_rps);
        return LL_EXIT_EXPECT;
    }
    if (set->expect_slo && fd->slo_missed) {
        ll_errorf("--expect-slo: the step at %.4g req/s misses the SLO: %s", fd->next_fail_rps,
                  fd->next_fail_reason);
        return LL_EXIT_EXPECT;
    }
    return b->expect_failed ? LL_EXIT_EXPECT : LL_EXIT_OK;
}

int report_build_dir(const char *dir, FILE *out)
{
    struct built b = {0};
    int rc = LL_EXIT_USAGE;
    /* A merged run (llmload merge): its summary, from its records (the
     * server's lines need the metrics layer's join: llmload report
     * passes it to runmerge_rebuild itself). */
    if (runmerge_dir_is_merged_run(dir))
        return runmerge_rebuild(dir, NULL, out);
    if (built_load(dir, &b) != 0)
        goto out;
    if (b.sw.n_steps == 0) {
        /* Cut during its capacity probe (or dead before its first step):
         * a summary from nothing would claim every rate was run. */
        ll_errorf("no step could be judged: %s/steps.jsonl holds no step (the sweep stopped "
                  "before its first step began); nothing to report, the directory is left as "
                  "it is",
                  dir);
        rc = LL_EXIT_FAIL;
        goto out;
    }
    built_analyse(&b);
    if (out)
        built_print(&b, out);
    if (out)
        fflush(out);
    expect_steps(&b);
    rc = LL_EXIT_RUNTIME;
    if (write_tables(dir, &b) != 0 || write_html(dir, &b) != 0)
        goto out;
    rc = expect_checks(&b);
out:
    built_free(&b);
    return rc;
}

int report_sweep_load(const char *dir, struct report_sweep *out)
{
    struct built b = {0};
    memset(out, 0, sizeof *out);
    if (built_load(dir, &b) != 0) {
        built_free(&b);
        return -1;
    }
    built_analyse(&b);
    *out = b.sw;
    memset(&b.sw, 0, sizeof b.sw);
    built_free(&b);
    return 0;
}

void report_sweep_free(struct report_sweep *s)
{
    for (size_t i = 0; i < s->n_steps; i++)
        sweep_step_free(&s->steps[i]);
    free(s->steps);
    free(s->points);
    free(s->fd);
    json_decref(s->run);
    memset(s, 0, sizeof *s);
}
