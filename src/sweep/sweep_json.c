/* sweep_json.c: the sweep's JSON (see sweep_json.h): steps.jsonl's facts
 * and run.json's "sweep" settings, both ways, and summary.json of a sweep.
 * Moved out of sweep.c unchanged: summary.json is byte for byte what it
 * was (tests/data/report/sweep-classes holds one to compare). */
#include "sweep/sweep_json.h"

#include <math.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "measure/slo.h"
#include "measure/summary.h"
#include "util/util.h"

static json_t *ju64(uint64_t v)
{
    return json_integer((json_int_t)LL_MIN(v, (uint64_t)INT64_MAX));
}

static json_t *jnum(double v)
{
    return isfinite(v) ? json_real(v) : json_null();
}

static void jset(json_t *o, const char *k, json_t *v)
{
    if (!v || json_object_set_new(o, k, v) != 0) {
        ll_errorf("out of memory building JSON");
        abort();
    }
}

/* The span members of a step's server or energy facts: span_from_ns and
 * span_to_ns, both null without a span. */
static void span_json(json_t *o, int has_span, uint64_t from_ns, uint64_t to_ns)
{
    jset(o, "span_from_ns", has_span ? ju64(from_ns) : json_null());
    jset(o, "span_to_ns", has_span ? ju64(to_ns) : json_null());
}

/* An SLO as summary.json writes it: its text (slo_format), or null when
 * there is none (set is 0). */
static json_t *slo_json(const struct slo *slo, int set)
{
    char buf[96];
    if (!set)
        return json_null();
    slo_format(slo, buf, sizeof buf);
    return json_string(buf);
}

/* The number facts of the server figures, in steps.jsonl's order: its
 * key and where struct sweep_server keeps it (NAN: not known). */
static const struct {
    const char *key;
    size_t off;
} server_nums[] = {
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
#define N_SERVER_NUMS (sizeof server_nums / sizeof server_nums[0])

static double *server_num(struct sweep_server *v, size_t i)
{
    return (double *)((char *)v + server_nums[i].off);
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
        jset(x, "waiting_mean", jnum(r->waiting_mean));
        jset(x, "waiting_max", jnum(r->waiting_max));
        jset(x, "running_mean", jnum(r->running_mean));
        jset(x, "generation_tokens", jnum(r->generation_tokens));
        jset(x, "span_s", jnum(r->span_s));
        jset(x, "generation_share",
             sum > 0 && isfinite(r->generation_tokens) ? json_real(r->generation_tokens / sum)
                                                       : json_null());
        jset(each, r->name, x);
    }
    jset(o, "replicas", each);
    jset(o, "imbalance", rs->imbalance[0] ? json_string(rs->imbalance) : json_null());
    return o;
}

/* A number or NAN (null, absent). */
static double num_or_nan(json_t *o, const char *k);

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
        r->waiting_mean = num_or_nan(x, "waiting_mean");
        r->waiting_max = num_or_nan(x, "waiting_max");
        r->running_mean = num_or_nan(x, "running_mean");
        r->generation_tokens = num_or_nan(x, "generation_tokens");
        r->span_s = num_or_nan(x, "span_s");
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
    for (size_t i = 0; i < N_SERVER_NUMS; i++)
        jset(o, server_nums[i].key, jnum(*(const double *)((const char *)v + server_nums[i].off)));
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
    for (size_t i = 0; i < N_SERVER_NUMS; i++)
        *server_num(v, i) = num_or_nan(o, server_nums[i].key);
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
        jset(eo, "errors", ju64(stats_failed(&e->stats)));
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

int sweep_facts_from_json(json_t *o, struct sweep_step *s, char *err, size_t errlen)
{
    struct sweep_facts *f = &s->f;
    uint64_t v;
    if (!json_is_object(o)) {
        snprintf(err, errlen, "expected a JSON object");
        return LL_E_INVAL;
    }
    if (get_u64(o, "step", &v, err, errlen) || v > UINT32_MAX)
        return LL_E_INVAL;
    f->index = (uint32_t)v;
    if (get_u64(o, "repeat", &v, err, errlen) || v > UINT32_MAX)
        return LL_E_INVAL;
    f->repeat = (uint32_t)v;
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
    jset(o, "achieved_rps", jnum(achieved_rps));
    jset(o, "completed_rps", jnum(completed_rps));
    jset(o, "goodput_rps", jnum(goodput_rps));
    jset(o, "attainment", jnum(attainment));
}

/* summary.json's steps[].classes[k]: class k of s. */
static json_t *class_json(const struct sweep_step *s, size_t k)
{
    const struct sweep_class *c = &s->classes[k];
    const struct stats *st = &c->stats;
    int ok = st->by_kind[REC_OK] > 0;
    json_t *o = json_object();
    jset(o, "name", json_string(s->f.classes[k].name));
    jset(o, "slo", slo_json(&c->slo, c->have_slo));
    jset(o, "slo_source", !c->have_slo ? json_null()
                          : json_string(slo_is_set(&s->f.classes[k].own_slo) ? "class"
                                                                              : "sweep"));
    put_outcomes(o, st, c->achieved_rps, c->completed_rps, c->goodput_rps, c->attainment);
    jset(o, "error_rate", jnum(c->error_rate));
    json_t *lat = json_object();
    jset(lat, "ttft", pct_json(c->ttft_ns, ok));
    jset(lat, "tpot", pct_json(c->tpot_ns, hist_count(st->tpot) > 0));
    jset(lat, "e2e", pct_json(c->e2e_ns, ok));
    jset(o, "latency_ns", lat);
    jset(o, "slo_pass", json_boolean(c->slo_pass));
    jset(o, "fail_reason", c->slo_pass ? json_null() : json_string(c->fail_reason));
    return o;
}

/* summary.json's steps[].endpoints[k]: endpoint k of s. */
static json_t *endpoint_json(const struct sweep_step *s, size_t k)
{
    const struct sweep_endpoint *e = &s->endpoints[k];
    const struct stats *st = &e->stats;
    int ok = st->by_kind[REC_OK] > 0;
    json_t *o = json_object();
    jset(o, "index", ju64(k));
    jset(o, "url", s->f.endpoints[k].url ? json_string(s->f.endpoints[k].url) : json_null());
    jset(o, "weight", ju64(s->f.endpoints[k].weight));
    jset(o, "scheduled", ju64(st->scheduled));
    jset(o, "requests", ju64(st->completed));
    jset(o, "ok", ju64(st->by_kind[REC_OK]));
    jset(o, "errors", ju64(stats_failed(st)));
    jset(o, "error_rate", jnum(e->error_rate));
    json_t *kinds = json_object();
    for (int kd = 0; kd < REC_KIND_COUNT; kd++)
        if (kd != REC_OK && st->by_kind[kd])
            jset(kinds, rec_kind_name((enum rec_kind)kd), ju64(st->by_kind[kd]));
    jset(o, "errors_by_kind", kinds);
    json_t *lat = json_object();
    jset(lat, "ttft", pct_json(e->ttft_ns, ok));
    jset(lat, "tpot", pct_json(e->tpot_ns, hist_count(st->tpot) > 0));
    jset(lat, "e2e", pct_json(e->e2e_ns, ok));
    jset(o, "latency_ns", lat);
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
    jset(ci, "hi", s->ci_valid && s->ttft_p99_ci_hi_ns ? ju64(s->ttft_p99_ci_hi_ns)
                                                       : json_null());
    jset(o, "ttft_p99_ci_ns", ci);
    json_t *ss = json_object();
    jset(ss, "steady", json_boolean(s->steady));
    jset(ss, "reason", s->steady ? json_null() : json_string(s->steady_reason));
    jset(ss, "ttft_p99_first_half_ns", hist_count(s->ttft_h1) ? ju64(s->ttft_p99_h1_ns)
                                                              : json_null());
    jset(ss, "ttft_p99_second_half_ns", hist_count(s->ttft_h2) ? ju64(s->ttft_p99_h2_ns)
                                                               : json_null());
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
    jset(rec, "overload_rps", hr && fd->overload_rps > 0 ? json_real(fd->overload_rps)
                                                        : json_null());
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

/* summary.json's findings.classes[k]: one traffic class's findings. */
static json_t *class_finding_json(const struct sweep_class_finding *cf)
{
    json_t *co = json_object();
    jset(co, "name", json_string(cf->name));
    jset(co, "slo", slo_json(&cf->slo, cf->have_slo));
    jset(co, "slo_capacity_rps", cf->capacity_found ? json_real(cf->capacity_rps)
                                                    : json_null());
    jset(co, "capacity_is_lower_bound", json_boolean(cf->none_failed));
    jset(co, "next_failing_rps", cf->next_fails ? json_real(cf->next_fail_rps)
                                                : json_null());
    jset(co, "next_failing_reason", cf->next_fails ? json_string(cf->next_fail_reason)
                                                   : json_null());
    jset(co, "ttft_p99_ns_at_slo_capacity",
         cf->at_capacity ? ju64(cf->ttft_p99_at_capacity_ns) : json_null());
    jset(co, "tpot_p99_ns_at_slo_capacity",
         cf->at_capacity && cf->tpot_p99_at_capacity_ns
             ? ju64(cf->tpot_p99_at_capacity_ns) : json_null());
    return co;
}

/* An array of the first SWEEP_MAX_UNKNOWN of n rates. */
static json_t *rates_json(const double *r, size_t n)
{
    json_t *a = json_array();
    for (size_t i = 0; i < LL_MIN(n, (size_t)SWEEP_MAX_UNKNOWN); i++)
        json_array_append_new(a, json_real(r[i]));
    return a;
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
    jset(f, "capacity_unknown", json_boolean(fd->capacity_unknown));
    jset(f, "capacity_coarse", json_boolean(fd->capacity_coarse));
    if (fd->n_disputed || fd->passed_above_rps > 0) {
        jset(f, "disputed_rps", rates_json(fd->disputed_rps, fd->n_disputed));
        jset(f, "passed_above_failing_rps",
             fd->passed_above_rps > 0 ? json_real(fd->passed_above_rps) : json_null());
        jset(f, "next_failing_confirmed", json_boolean(fd->next_fail_confirmed));
    }
    jset(f, "next_failing_reason", fd->next_fails ? json_string(fd->next_fail_reason)
                                                  : json_null());
    jset(f, "knee_rps", fd->knee.found ? json_real(fd->knee.knee_x) : json_null());
    jset(f, "knee_slope_below", jnum(fd->knee.slope_below));
    jset(f, "knee_slope_above", jnum(fd->knee.slope_above));
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
