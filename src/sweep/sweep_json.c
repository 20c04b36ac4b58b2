/* sweep_json.c: the sweep's JSON (see sweep_json.h): steps.jsonl's facts
 * and run.json's "sweep" settings, both ways; summary.json of a sweep is
 * sweep_summary_json.c's. Moved out of sweep.c unchanged. */
#include "sweep/sweep_json.h"

#include <inttypes.h>
#include <math.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "measure/slo.h"
#include "measure/summary.h"
#include "sweep/sweep_jsonput.h"
#include "util/util.h"

/* The span members of a step's server or energy facts: span_from_ns and
 * span_to_ns, both null without a span. */
static void span_json(json_t *o, int has_span, uint64_t from_ns, uint64_t to_ns)
{
    jset(o, "span_from_ns", has_span ? ju64(from_ns) : json_null());
    jset(o, "span_to_ns", has_span ? ju64(to_ns) : json_null());
}

/* A number of steps.jsonl and where a struct keeps it: its key, and the
 * offset of its double in the struct (NAN: not known, written null). */
struct num_field {
    const char *key;
    size_t off;
};

/* The number facts of the server figures, in steps.jsonl's order. */
static const struct num_field server_nums[] = {
    {"waiting_mean", offsetof(struct sweep_server, waiting_mean)},
    {"waiting_max", offsetof(struct sweep_server, waiting_max)},
    {"running_mean", offsetof(struct sweep_server, running_mean)},
    {"running_max", offsetof(struct sweep_server, running_max)},
    {"kv_usage_mean", offsetof(struct sweep_server, kv_mean)},
    {"kv_usage_max", offsetof(struct sweep_server, kv_max)},
    {"kv_capacity_tokens", offsetof(struct sweep_server, kv_capacity_tokens)},
    {"preemptions", offsetof(struct sweep_server, preemptions)},
    {"generation_tokens", offsetof(struct sweep_server, generation_tokens)},
    {"prompt_tokens", offsetof(struct sweep_server, prompt_tokens)},
    {"ttft_p50_s", offsetof(struct sweep_server, ttft_p50_s)},
    {"ttft_p99_s", offsetof(struct sweep_server, ttft_p99_s)},
};

/* A replica's numbers, in steps.jsonl's order. */
static const struct num_field replica_nums[] = {
    {"waiting_mean", offsetof(struct sweep_replica, waiting_mean)},
    {"waiting_max", offsetof(struct sweep_replica, waiting_max)},
    {"running_mean", offsetof(struct sweep_replica, running_mean)},
    {"generation_tokens", offsetof(struct sweep_replica, generation_tokens)},
    {"span_s", offsetof(struct sweep_replica, span_s)},
};

/* o[key] = the number of each of the n fields of s (null when not finite). */
static void nums_json(json_t *o, const void *s, const struct num_field *fields, size_t n)
{
    for (size_t i = 0; i < n; i++)
        jset(o, fields[i].key, jnum(*(const double *)((const char *)s + fields[i].off)));
}

/* A number or NAN (null, absent). */
static double num_or_nan(json_t *o, const char *k);

/* nums_json's numbers back from o into s (NAN where absent or null). */
static void nums_from_json(json_t *o, void *s, const struct num_field *fields, size_t n)
{
    for (size_t i = 0; i < n; i++)
        *(double *)((char *)s + fields[i].off) = num_or_nan(o, fields[i].key);
}

/* A step's replicas (--prometheus), as the run's summary.json has them:
 * {"count", "replicas": {name: {waiting_mean, waiting_max, running_mean,
 * generation_tokens, span_s, generation_share}}, "imbalance": text or
 * null}. The
 * share is of the kept replicas' tokens summed (null when none). */
static json_t *replicas_json(const struct sweep_replicas *rs)
{
    double sum = 0;
    for (size_t i = 0; i < rs->n; i++)
        if (isfinite(rs->r[i].generation_tokens))
            sum += rs->r[i].generation_tokens;
    json_t *o = json_object();
    jset(o, "count", ju64(rs->count));
    json_t *each = json_object();
    for (size_t i = 0; i < rs->n; i++) {
        const struct sweep_replica *r = &rs->r[i];
        json_t *x = json_object();
        nums_json(x, r, replica_nums, LL_ARRAY_LEN(replica_nums));
        jset(x, "generation_share",
             sum > 0 && isfinite(r->generation_tokens) ? json_real(r->generation_tokens / sum)
                                                       : json_null());
        jset(each, r->name, x);
    }
    jset(o, "replicas", each);
    jset(o, "imbalance", rs->imbalance[0] ? json_string(rs->imbalance) : json_null());
    return o;
}

/* replicas_json's object back into rs (absent or not an object: count 0). */
static void replicas_from_json(json_t *o, struct sweep_replicas *rs)
{
    memset(rs, 0, sizeof *rs);
    if (!json_is_object(o))
        return;
    json_t *c = json_object_get(o, "count");
    json_t *each = json_object_get(o, "replicas");
    const char *key;
    json_t *x;
    json_object_foreach(each, key, x)
    {
        if (rs->n == SWEEP_MAX_REPLICAS || !json_is_object(x))
            continue;
        struct sweep_replica *r = &rs->r[rs->n++];
        snprintf(r->name, sizeof r->name, "%s", key);
        nums_from_json(x, r, replica_nums, LL_ARRAY_LEN(replica_nums));
    }
    rs->count =
        json_is_integer(c) && json_integer_value(c) > 0 ? (size_t)json_integer_value(c) : rs->n;
    const char *why = json_string_value(json_object_get(o, "imbalance"));
    snprintf(rs->imbalance, sizeof rs->imbalance, "%s", why ? why : "");
}

/* The facts part of the server figures (steps.jsonl's "server"). */
static json_t *server_facts_json(const struct sweep_server *v)
{
    json_t *o = json_object();
    jset(o, "scrapes", ju64(v->scrapes));
    jset(o, "failed", ju64(v->failed));
    jset(o, "engine", v->engine[0] ? json_string(v->engine) : json_null());
    nums_json(o, v, server_nums, LL_ARRAY_LEN(server_nums));
    jset(o, "ttft_p99_is_lower_bound", json_boolean(v->ttft_p99_lower_bound));
    span_json(o, v->has_span, v->span_from_ns, v->span_to_ns);
    if (v->replicas.count)
        jset(o, "replicas", replicas_json(&v->replicas));
    return o;
}

/* A count from o[k]: a non-negative integer, else 0. */
static uint64_t count_or_zero(json_t *o, const char *k)
{
    json_t *x = json_object_get(o, k);
    return json_is_integer(x) && json_integer_value(x) > 0 ? (uint64_t)json_integer_value(x) : 0;
}

/* Read them back: 1 with *from_ns and *to_ns set when both are integers,
 * from_ns >= 0 and to_ns after it (or equal to it, when empty_ok); else 0
 * and nothing set. */
static int span_from_json(json_t *o, int empty_ok, uint64_t *from_ns, uint64_t *to_ns)
{
    json_t *a = json_object_get(o, "span_from_ns"), *b = json_object_get(o, "span_to_ns");
    if (!json_is_integer(a) || !json_is_integer(b) || json_integer_value(a) < 0 ||
        json_integer_value(b) < json_integer_value(a) ||
        (!empty_ok && json_integer_value(b) == json_integer_value(a)))
        return 0;
    *from_ns = (uint64_t)json_integer_value(a);
    *to_ns = (uint64_t)json_integer_value(b);
    return 1;
}

/* A number or NAN (null, absent). */
static double num_or_nan(json_t *o, const char *k)
{
    json_t *v = json_object_get(o, k);
    return json_is_number(v) ? json_number_value(v) : NAN;
}

static void server_facts_from_json(json_t *o, struct sweep_server *v)
{
    sweep_server_clear(v);
    if (!json_is_object(o))
        return;
    v->present = 1;
    v->scrapes = count_or_zero(o, "scrapes");
    v->failed = count_or_zero(o, "failed");
    const char *e = json_string_value(json_object_get(o, "engine"));
    snprintf(v->engine, sizeof v->engine, "%s", e ? e : "");
    nums_from_json(o, v, server_nums, LL_ARRAY_LEN(server_nums));
    v->ttft_p99_lower_bound = json_is_true(json_object_get(o, "ttft_p99_is_lower_bound"));
    replicas_from_json(json_object_get(o, "replicas"), &v->replicas);
    v->has_span = span_from_json(o, 1, &v->span_from_ns, &v->span_to_ns);
}

/* The facts of the GPU energy (steps.jsonl's "energy"). */
static json_t *energy_facts_json(const struct sweep_energy *e)
{
    json_t *o = json_object();
    jset(o, "source", e->source[0] ? json_string(e->source) : json_null());
    jset(o, "energy_j", jnum(e->energy_j));
    jset(o, "missing", ju64(e->missing));
    jset(o, "gaps", ju64(e->gaps));
    jset(o, "gpus", ju64(e->gpus));
    jset(o, "max_power_w", jnum(e->max_power_w));
    jset(o, "util_mean_pct", jnum(e->util_mean_pct));
    span_json(o, e->has_span, e->span_from_ns, e->span_to_ns);
    return o;
}

static void energy_facts_from_json(json_t *o, struct sweep_energy *e)
{
    sweep_energy_clear(e);
    if (!json_is_object(o))
        return;
    e->present = 1;
    const char *src = json_string_value(json_object_get(o, "source"));
    snprintf(e->source, sizeof e->source, "%s", src ? src : "");
    e->energy_j = num_or_nan(o, "energy_j");
    e->missing = count_or_zero(o, "missing");
    e->gaps = count_or_zero(o, "gaps");
    e->gpus = (unsigned)LL_MIN(count_or_zero(o, "gpus"), (uint64_t)UINT32_MAX);
    e->max_power_w = num_or_nan(o, "max_power_w");
    e->util_mean_pct = num_or_nan(o, "util_mean_pct");
    e->has_span = span_from_json(o, 0, &e->span_from_ns, &e->span_to_ns);
}

json_t *sweep_energy_json(const struct sweep_step *s)
{
    const struct sweep_energy *e = &s->f.energy;
    if (!e->present)
        return NULL;
    json_t *o = energy_facts_json(e);
    jset(o, "client_output_tokens",
         e->has_span ? json_real(s->energy_tokens_in_span) : json_null());
    jset(o, "client_ok_requests", e->has_span ? ju64(s->energy_ok_in_span) : json_null());
    jset(o, "mean_power_w", jnum(s->mean_power_w));
    jset(o, "j_per_output_token", jnum(s->j_per_output_token));
    jset(o, "j_per_request", jnum(s->j_per_request));
    jset(o, "output_tokens_per_j", jnum(s->output_tokens_per_j));
    return o;
}

json_t *sweep_server_json(const struct sweep_step *s)
{
    const struct sweep_server *v = &s->f.server;
    if (!v->present)
        return NULL;
    json_t *o = server_facts_json(v);
    const struct hist *h = s->stats.ttft_server;
    int have = hist_count(h) > 0;
    jset(o, "client_ttft_from_sent_p50_s",
         have ? json_real((double)hist_percentile(h, 50) / 1e9) : json_null());
    jset(o, "client_ttft_from_sent_p99_s",
         have ? json_real((double)hist_percentile(h, 99) / 1e9) : json_null());
    jset(o, "client_output_tokens", v->has_span ? json_real(s->client_tokens_in_span)
                                                : json_null());
    return o;
}

json_t *sweep_late_json(const struct sweep_late *l)
{
    if (!l->known)
        return NULL;
    struct summary_late late = {
        .late_sends = l->late_sends,
        .asleep = l->asleep,
        .cpu_s = l->cpu_s,
        .wall_s = l->wall_s,
        .invol_switches = l->invol_switches,
        .cause = sweep_late_cause(l),
    };
    return summary_late_json(&late);
}

/* steps.jsonl's "lateness_diagnosis" into *l: absent or null, not known;
 * else its counts (asleep_when_due at most late_sends) and the workers'
 * seconds (both null, or both numbers in [0, SWEEP_LATE_MAX_S]). "cause"
 * is not read: it is derived from the counts. 0, or LL_E_INVAL with the
 * field in err. */
#define SWEEP_LATE_MAX_S 1e9
static int late_from_json(json_t *o, struct sweep_late *l, char *err, size_t errlen)
{
    memset(l, 0, sizeof *l);
    if (o == NULL || json_is_null(o))
        return 0;
    static const char *const counts[] = {"late_sends", "asleep_when_due", "involuntary_switches"};
    uint64_t *dst[] = {&l->late_sends, &l->asleep, &l->invol_switches};
    if (!json_is_object(o)) {
        snprintf(err, errlen, "\"lateness_diagnosis\": expected an object");
        return LL_E_INVAL;
    }
    json_t *cpu = json_object_get(o, "worker_cpu_s"), *wall = json_object_get(o, "worker_wall_s");
    int usage = !json_is_null(wall) && wall != NULL;
    for (size_t i = 0; i < LL_ARRAY_LEN(counts); i++) {
        json_t *v = json_object_get(o, counts[i]);
        if (i == 2 && !usage)
            break; /* not known with the wall time */
        if (!json_is_integer(v) || json_integer_value(v) < 0) {
            snprintf(err, errlen, "\"lateness_diagnosis\".\"%s\": expected a non-negative integer",
                     counts[i]);
            return LL_E_INVAL;
        }
        *dst[i] = (uint64_t)json_integer_value(v);
    }
    if (l->asleep > l->late_sends) {
        snprintf(err, errlen,
                 "\"lateness_diagnosis\".\"asleep_when_due\": more than its late_sends");
        return LL_E_INVAL;
    }
    l->cpu_s = l->wall_s = NAN;
    json_t *secs[] = {cpu, wall};
    static const char *const names[] = {"worker_cpu_s", "worker_wall_s"};
    double *sdst[] = {&l->cpu_s, &l->wall_s};
    for (size_t i = 0; usage && i < 2; i++) {
        double v = json_is_number(secs[i]) ? json_number_value(secs[i]) : -1;
        if (!(v >= 0 && v <= SWEEP_LATE_MAX_S)) {
            snprintf(err, errlen,
                     "\"lateness_diagnosis\".\"%s\": expected seconds from 0 to 1e9, or null "
                     "with worker_wall_s",
                     names[i]);
            return LL_E_INVAL;
        }
        *sdst[i] = v;
    }
    if (!usage && cpu != NULL && !json_is_null(cpu)) {
        snprintf(err, errlen,
                 "\"lateness_diagnosis\".\"worker_cpu_s\": expected null, as "
                 "worker_wall_s is");
        return LL_E_INVAL;
    }
    l->known = 1;
    return 0;
}

json_t *sweep_facts_json(const struct sweep_facts *f)
{
    json_t *o = json_object();
    jset(o, "step", ju64(f->index));
    jset(o, "repeat", ju64(f->repeat));
    jset(o, "kind", json_string(f->recovery ? "recovery" : "load"));
    if (f->confirm)
        jset(o, "confirm", json_true());
    jset(o, "offered_rps", json_real(f->offered_rps));
    if (f->recovery)
        jset(o, "overload_rps", json_real(f->overload_rps));
    jset(o, "start_offset_ns", ju64(f->start_offset_ns));
    if (f->has_start_at)
        jset(o, "start_at_offset_ns", ju64(f->start_at_offset_ns));
    if (f->global_offered_rps > 0)
        jset(o, "global_offered_rps", json_real(f->global_offered_rps));
    jset(o, "duration_ns", ju64(f->duration_ns));
    jset(o, "warmup_ns", ju64(f->warmup_ns));
    if (f->cold_start)
        jset(o, "cold_start", ju64(f->cold_start));
    if (f->cold_restart)
        jset(o, "cold_restart", json_true());
    jset(o, "window_ns", ju64(f->window_ns));
    jset(o, "elapsed_ns", ju64(f->elapsed_ns));
    jset(o, "scheduled", ju64(f->scheduled));
    jset(o, "inflight_mean", json_real(f->inflight_mean));
    jset(o, "inflight_max", json_real(f->inflight_max));
    jset(o, "interrupted", json_boolean(f->interrupted));
    json_t *ld = sweep_late_json(&f->late);
    if (ld)
        jset(o, "lateness_diagnosis", ld);
    char *h = hist_to_string(f->lateness);
    jset(o, "lateness_hist", json_string(h));
    free(h);
    json_t *series = json_array();
    for (size_t i = 0; i < f->n_series; i++) {
        json_t *p = json_array();
        json_array_append_new(p, ju64(f->series[i].t_ns));
        json_array_append_new(p, ju64(f->series[i].inflight));
        json_array_append_new(series, p);
    }
    jset(o, "inflight_series", series);
    if (f->server.present)
        jset(o, "server", server_facts_json(&f->server));
    if (f->energy.present)
        jset(o, "energy", energy_facts_json(&f->energy));
    if (f->n_classes) {
        json_t *arr = json_array();
        for (size_t k = 0; k < f->n_classes; k++) {
            const struct sweep_class_facts *c = &f->classes[k];
            json_t *co = json_object();
            jset(co, "name", json_string(c->name));
            jset(co, "slo", slo_json(&c->own_slo, slo_is_set(&c->own_slo)));
            jset(co, "scheduled", ju64(c->scheduled));
            json_array_append_new(arr, co);
        }
        jset(o, "classes", arr);
    }
    if (f->n_endpoints) {
        json_t *arr = json_array();
        for (size_t k = 0; k < f->n_endpoints; k++) {
            const struct sweep_endpoint_facts *e = &f->endpoints[k];
            json_t *eo = json_object();
            jset(eo, "index", ju64(k));
            jset(eo, "url", e->url ? json_string(e->url) : json_null());
            jset(eo, "weight", ju64(e->weight));
            jset(eo, "scheduled", ju64(e->scheduled));
            json_array_append_new(arr, eo);
        }
        jset(o, "endpoints", arr);
    }
    return o;
}

/* ns, or null when the histogram behind it was empty. */
static json_t *ns_or_null(uint64_t v, int any)
{
    return any ? ju64(v) : json_null();
}

json_t *sweep_step_line_json(const struct sweep_step *s)
{
    json_t *o = sweep_facts_json(&s->f);
    jset(o, "hold_factor", isfinite(s->hold_factor) ? json_real(s->hold_factor) : json_null());
    jset(o, "short", json_boolean(s->short_hold));
    jset(o, "request_bytes_per_s", jnum(s->request_bytes_per_s));
    if (s->f.cold_start)
        jset(o, "cold", summary_cold_json(&s->cold, s->f.cold_start));
    /* Each endpoint's figures, for whoever reads this file alone (`llmload
     * report` derives them again from the records' "endpoint"). */
    json_t *eps = json_object_get(o, "endpoints");
    for (size_t k = 0; eps && k < s->f.n_endpoints; k++) {
        const struct sweep_endpoint *e = &s->endpoints[k];
        json_t *eo = json_array_get(eps, k);
        jset(eo, "requests", ju64(e->stats.completed));
        jset(eo, "ok", ju64(e->stats.by_kind[REC_OK]));
        jset(eo, "errors", ju64(stats_errors(&e->stats)));
        jset(eo, "ttft_p99_ns", ns_or_null(e->ttft_ns[3], e->stats.by_kind[REC_OK] > 0));
        jset(eo, "tpot_p99_ns", ns_or_null(e->tpot_ns[3], hist_count(e->stats.tpot) > 0));
    }
    return o;
}

/* steps.jsonl's array member key (arr: absent or null is no array, n 0):
 * its size into *n. LL_E_INVAL with the reason in err when it is not an
 * array, holds more than max, or the step already has them (seen, nonzero:
 * the member came twice). */
static int facts_array(json_t *arr, const char *key, size_t max, size_t seen, size_t *n, char *err,
                       size_t errlen)
{
    *n = 0;
    if (!arr || json_is_null(arr))
        return 0;
    *n = json_is_array(arr) ? json_array_size(arr) : 0;
    if (!json_is_array(arr) || *n > max || seen) {
        snprintf(err, errlen, "\"%s\": expected an array of at most %zu %s", key, max, key);
        return LL_E_INVAL;
    }
    return 0;
}

/* steps.jsonl's "endpoints" into s (none when absent, or fewer than two). */
static int endpoint_facts_from_json(json_t *arr, struct sweep_step *s, char *err, size_t errlen)
{
    size_t n;
    if (facts_array(arr, "endpoints", SWEEP_MAX_ENDPOINTS, s->f.n_endpoints, &n, err, errlen) != 0)
        return LL_E_INVAL;
    if (n < 2)
        return 0;
    sweep_step_endpoints_init(s, n);
    for (size_t k = 0; k < n; k++) {
        json_t *eo = json_array_get(arr, k);
        struct sweep_endpoint_facts *e = &s->f.endpoints[k];
        const char *url = json_string_value(json_object_get(eo, "url"));
        json_t *w = json_object_get(eo, "weight"), *sc = json_object_get(eo, "scheduled");
        if (!url || !*url) {
            snprintf(err, errlen, "\"endpoints\"[%zu].url: expected a URL", k);
            return LL_E_INVAL;
        }
        if (!json_is_integer(w) || json_integer_value(w) < 1 || json_integer_value(w) > 100) {
            snprintf(err, errlen, "\"endpoints\"[%zu].weight: expected a whole number 1 to 100", k);
            return LL_E_INVAL;
        }
        if (!json_is_integer(sc) || json_integer_value(sc) < 0) {
            snprintf(err, errlen, "\"endpoints\"[%zu].scheduled: expected a non-negative integer",
                     k);
            return LL_E_INVAL;
        }
        e->url = ll_strdup(url);
        e->weight = (uint32_t)json_integer_value(w);
        e->scheduled = (uint64_t)json_integer_value(sc);
    }
    return 0;
}

/* steps.jsonl's "classes" into s (no classes when absent or empty). */
static int class_facts_from_json(json_t *arr, struct sweep_step *s, char *err, size_t errlen)
{
    size_t n;
    if (facts_array(arr, "classes", SWEEP_MAX_CLASSES, s->f.n_classes, &n, err, errlen) != 0)
        return LL_E_INVAL;
    if (n == 0)
        return 0;
    sweep_step_classes_init(s, n);
    for (size_t k = 0; k < n; k++) {
        json_t *co = json_array_get(arr, k);
        struct sweep_class_facts *c = &s->f.classes[k];
        const char *name = json_string_value(json_object_get(co, "name"));
        if (!name || !*name || strlen(name) >= sizeof c->name) {
            snprintf(err, errlen, "\"classes\"[%zu].name: expected a name of 1 to %d bytes",
                     k, SWEEP_CLASS_NAME_MAX - 1);
            return LL_E_INVAL;
        }
        snprintf(c->name, sizeof c->name, "%s", name);
        json_t *slo = json_object_get(co, "slo");
        char why[160];
        if (json_is_string(slo)) {
            if (slo_parse(json_string_value(slo), &c->own_slo, why, sizeof why) != 0) {
                snprintf(err, errlen, "\"classes\"[%zu].slo: %s", k, why);
                return LL_E_INVAL;
            }
        } else if (slo && !json_is_null(slo)) {
            snprintf(err, errlen, "\"classes\"[%zu].slo: expected a string or null", k);
            return LL_E_INVAL;
        }
        json_t *v = json_object_get(co, "scheduled");
        if (!json_is_integer(v) || json_integer_value(v) < 0) {
            snprintf(err, errlen, "\"classes\"[%zu].scheduled: expected a non-negative integer",
                     k);
            return LL_E_INVAL;
        }
        c->scheduled = (uint64_t)json_integer_value(v);
    }
    return 0;
}

static int get_u64(json_t *o, const char *k, uint64_t *out, char *err, size_t errlen)
{
    json_t *v = json_object_get(o, k);
    if (!json_is_integer(v) || json_integer_value(v) < 0) {
        snprintf(err, errlen, "\"%s\": expected a non-negative integer", k);
        return LL_E_INVAL;
    }
    *out = (uint64_t)json_integer_value(v);
    return 0;
}

/* get_u64 of a count that must fit 32 bits (a step's index, its repeat):
 * past UINT32_MAX refused with its own reason, where it returned
 * LL_E_INVAL with err empty (fuzz_stepfacts found it). */
static int get_u32(json_t *o, const char *k, uint32_t *out, char *err, size_t errlen)
{
    uint64_t v;
    if (get_u64(o, k, &v, err, errlen))
        return LL_E_INVAL;
    if (v > UINT32_MAX) {
        snprintf(err, errlen, "\"%s\": expected an integer from 0 to %" PRIu32 ", got %" PRIu64, k,
                 UINT32_MAX, v);
        return LL_E_INVAL;
    }
    *out = (uint32_t)v;
    return 0;
}

int sweep_facts_from_json(json_t *o, struct sweep_step *s, char *err, size_t errlen)
{
    struct sweep_facts *f = &s->f;
    if (!json_is_object(o)) {
        snprintf(err, errlen, "expected a JSON object");
        return LL_E_INVAL;
    }
    if (get_u32(o, "step", &f->index, err, errlen) || get_u32(o, "repeat", &f->repeat, err, errlen))
        return LL_E_INVAL;
    const char *kind = json_string_value(json_object_get(o, "kind"));
    f->recovery = kind && strcmp(kind, "recovery") == 0;
    f->confirm = !f->recovery && json_is_true(json_object_get(o, "confirm"));
    json_t *r = json_object_get(o, "offered_rps");
    if (!json_is_number(r)) {
        snprintf(err, errlen, "\"offered_rps\": expected a number");
        return LL_E_INVAL;
    }
    f->offered_rps = json_number_value(r);
    r = json_object_get(o, "overload_rps");
    f->overload_rps = f->recovery && json_is_number(r) && json_number_value(r) > 0
                          ? json_number_value(r)
                          : 0;
    if (get_u64(o, "start_offset_ns", &f->start_offset_ns, err, errlen) ||
        get_u64(o, "duration_ns", &f->duration_ns, err, errlen) ||
        get_u64(o, "warmup_ns", &f->warmup_ns, err, errlen) ||
        get_u64(o, "window_ns", &f->window_ns, err, errlen) ||
        get_u64(o, "elapsed_ns", &f->elapsed_ns, err, errlen) ||
        get_u64(o, "scheduled", &f->scheduled, err, errlen))
        return LL_E_INVAL;
    json_t *sa = json_object_get(o, "start_at_offset_ns");
    f->has_start_at = json_is_integer(sa) && json_integer_value(sa) >= 0;
    f->start_at_offset_ns = f->has_start_at ? (uint64_t)json_integer_value(sa) : 0;
    json_t *g = json_object_get(o, "global_offered_rps");
    f->global_offered_rps =
        json_is_number(g) && json_number_value(g) > 0 ? json_number_value(g) : 0;
    json_t *cs = json_object_get(o, "cold_start");
    f->cold_start =
        json_is_integer(cs) && json_integer_value(cs) > 0 ? (uint64_t)json_integer_value(cs) : 0;
    f->cold_restart = json_is_true(json_object_get(o, "cold_restart"));
    f->inflight_mean = json_number_value(json_object_get(o, "inflight_mean"));
    f->inflight_max = json_number_value(json_object_get(o, "inflight_max"));
    f->interrupted = json_is_true(json_object_get(o, "interrupted"));
    if (late_from_json(json_object_get(o, "lateness_diagnosis"), &f->late, err, errlen) != 0)
        return LL_E_INVAL;
    const char *h = json_string_value(json_object_get(o, "lateness_hist"));
    if (h && hist_from_string(f->lateness, h, err, errlen) != 0)
        return LL_E_INVAL;
    free(f->series);
    f->n_series =
        sweep_inflight_series_from_json(json_object_get(o, "inflight_series"), &f->series);
    server_facts_from_json(json_object_get(o, "server"), &f->server);
    energy_facts_from_json(json_object_get(o, "energy"), &f->energy);
    if (class_facts_from_json(json_object_get(o, "classes"), s, err, errlen) != 0)
        return LL_E_INVAL;
    return endpoint_facts_from_json(json_object_get(o, "endpoints"), s, err, errlen);
}

size_t sweep_inflight_series_from_json(json_t *series, struct inflight_sample **out)
{
    size_t n = json_is_array(series) ? json_array_size(series) : 0, kept = 0;
    struct inflight_sample *s = ll_calloc(n + 1, sizeof *s);

    for (size_t i = 0; i < n; i++) {
        json_t *p = json_array_get(series, i);
        json_t *t = json_array_get(p, 0), *c = json_array_get(p, 1);
        if (!json_is_integer(t) || !json_is_integer(c))
            continue;
        s[kept].t_ns = (uint64_t)json_integer_value(t);
        s[kept].inflight = (uint32_t)json_integer_value(c);
        kept++;
    }
    *out = s;
    return kept;
}

json_t *sweep_settings_json(const struct sweep_settings *set)
{
    json_t *o = json_object();
    jset(o, "slo", slo_json(&set->slo, slo_is_set(&set->slo)));
    jset(o, "attainment", json_real(set->attainment));
    jset(o, "max_error_rate", json_real(set->max_error_rate));
    jset(o, "ttft_limit_ns", ju64(set->ttft_limit_ns));
    jset(o, "headroom", json_real(set->headroom));
    jset(o, "forecast_rps", json_real(set->forecast_rps));
    jset(o, "cost_per_hour", json_real(set->cost_per_hour));
    jset(o, "replicas", ju64(set->replicas));
    jset(o, "expect_capacity_rps", json_real(set->expect_capacity_rps));
    jset(o, "expect_slo", json_boolean(set->expect_slo));
    char spec[EXPECT_MAX * 100];
    expect_format(&set->expect, spec, sizeof spec);
    if (set->expect.n) /* absent without --expect, as in files made before it */
        jset(o, "expect", json_string(spec));
    jset(o, "auto_rates", json_boolean(set->auto_rates));
    jset(o, "estimate_rps", json_real(set->estimate_rps));
    jset(o, "lateness_tolerance", json_real(set->lateness_tolerance));
    json_t *el = json_object();
    /* What --engine-limits gave: a bound from the server's /props is the
     * first limit's evidence (max_seqs_source), not a setting. */
    int flag_seqs = set->engine_seqs && set->engine_seqs_source &&
                    strcmp(set->engine_seqs_source, "engine_limits") == 0;
    jset(el, "seqs", flag_seqs ? ju64(set->engine_seqs) : json_null());
    jset(el, "kv_tokens", set->engine_kv_tokens ? ju64(set->engine_kv_tokens) : json_null());
    jset(o, "engine_limits", el);
    jset(o, "min_hold_factor", json_real(sweep_min_hold_factor(set)));
    return o;
}

static void num_from(json_t *o, const char *k, double *out)
{
    json_t *v = json_object_get(o, k);
    if (json_is_number(v))
        *out = json_number_value(v);
}

void sweep_settings_from_json(json_t *o, struct sweep_settings *set)
{
    const char *slo = json_string_value(json_object_get(o, "slo"));
    if (slo && slo_parse(slo, &set->slo, NULL, 0) != 0)
        memset(&set->slo, 0, sizeof set->slo);
    num_from(o, "attainment", &set->attainment);
    num_from(o, "max_error_rate", &set->max_error_rate);
    json_t *v = json_object_get(o, "ttft_limit_ns");
    if (json_is_integer(v) && json_integer_value(v) >= 0)
        set->ttft_limit_ns = (uint64_t)json_integer_value(v);
    num_from(o, "headroom", &set->headroom);
    num_from(o, "forecast_rps", &set->forecast_rps);
    num_from(o, "cost_per_hour", &set->cost_per_hour);
    v = json_object_get(o, "replicas");
    if (json_is_integer(v) && json_integer_value(v) >= 1 && json_integer_value(v) <= UINT32_MAX)
        set->replicas = (uint32_t)json_integer_value(v);
    num_from(o, "expect_capacity_rps", &set->expect_capacity_rps);
    set->expect_slo = json_is_true(json_object_get(o, "expect_slo"));
    const char *ex = json_string_value(json_object_get(o, "expect"));
    char exerr[256];
    if (ex && expect_parse(ex, &set->expect, exerr, sizeof exerr) != 0)
        set->expect.n = 0;
    set->auto_rates = json_is_true(json_object_get(o, "auto_rates"));
    num_from(o, "lateness_tolerance", &set->lateness_tolerance);
    num_from(o, "estimate_rps", &set->estimate_rps);
    json_t *el = json_object_get(o, "engine_limits");
    v = json_object_get(el, "seqs");
    if (json_is_integer(v) && json_integer_value(v) >= 1 && json_integer_value(v) <= UINT32_MAX)
        set->engine_seqs = (uint32_t)json_integer_value(v);
    if (set->engine_seqs)
        set->engine_seqs_source = "engine_limits";
    v = json_object_get(el, "kv_tokens");
    if (json_is_integer(v) && json_integer_value(v) >= 1)
        set->engine_kv_tokens = (uint64_t)json_integer_value(v);
    num_from(o, "min_hold_factor", &set->min_hold_factor);
}
