/* report_scrapes.c: server_metrics.jsonl into the series the pages draw
 * over time (report_scrapes.h). Moved from report_build.c so that the
 * run's page (report_run.c) reads the file as the sweep's does. */
#include "report/report_scrapes.h"

#include <jansson.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/types.h>

#include "util/util.h"

static double field_or_nan(json_t *o, const char *k)
{
    json_t *v = json_object_get(o, k);
    return json_is_number(v) ? json_number_value(v) : NAN;
}

/* The GPU telemetry of server_metrics.jsonl: its scrapes and the names
 * of their sources, each named once (caller frees with gpu_series_free). */
struct gpu_series {
    struct report_gpu_sample *v;
    size_t n, cap;
    char **names;
    size_t n_names;
};

static void gpu_series_free(struct gpu_series *g)
{
    free(g->v);
    for (size_t i = 0; i < g->n_names; i++)
        free(g->names[i]);
    free(g->names);
}

/* The index of name in names[0, *n), added when new (each a copy the
 * caller frees). */
static size_t name_index(char ***names, size_t *n, const char *name)
{
    for (size_t i = 0; i < *n; i++)
        if (strcmp((*names)[i], name) == 0)
            return i;
    *names = ll_realloc(*names, (*n + 1) * sizeof **names);
    (*names)[*n] = ll_strdup(name);
    return (*n)++;
}

/* The index of source name in g, added when new. */
static size_t gpu_source_index(struct gpu_series *g, const char *name)
{
    return name_index(&g->names, &g->n_names, name);
}

/* The replicas' names of --prometheus lines (caller frees with
 * names_free). */
struct replica_names {
    char **names;
    size_t n;
};

static void names_free(struct replica_names *rn)
{
    for (size_t i = 0; i < rn->n; i++)
        free(rn->names[i]);
    free(rn->names);
}

/* Sample p's per-replica queues from line o's "replicas" (--prometheus):
 * the first REPORT_MAX_REPLICAS names seen keep a line; NAN elsewhere. */
static void replica_waiting_read(json_t *o, struct replica_names *rn,
                                 struct report_server_sample *p)
{
    for (size_t k = 0; k < REPORT_MAX_REPLICAS; k++)
        p->replica_waiting[k] = NAN;
    const char *name;
    json_t *x;
    json_object_foreach(json_object_get(o, "replicas"), name, x)
    {
        if (rn->n == REPORT_MAX_REPLICAS) {
            size_t k = 0;
            while (k < rn->n && strcmp(rn->names[k], name) != 0)
                k++;
            if (k < rn->n)
                p->replica_waiting[k] = field_or_nan(x, "waiting");
            continue;
        }
        p->replica_waiting[name_index(&rn->names, &rn->n, name)] = field_or_nan(x, "waiting");
    }
}

/* Keep GPU scrape o (ok, at t_s) in g; a source's scrape earlier than its
 * last is dropped, as for the server's. */
static void gpu_series_add(struct gpu_series *g, json_t *o, double t_s)
{
    const char *url = json_string_value(json_object_get(o, "url"));
    size_t src = gpu_source_index(g, url ? url : "");
    for (size_t i = g->n; i-- > 0;)
        if (g->v[i].source == src) {
            if (t_s < g->v[i].t_s)
                return;
            break;
        }
    if (g->n == g->cap) {
        g->cap = g->cap ? 2 * g->cap : 64;
        g->v = ll_realloc(g->v, g->cap * sizeof *g->v);
    }
    g->v[g->n++] = (struct report_gpu_sample){.t_s = t_s,
                                              .power_w = field_or_nan(o, "power_w"),
                                              .util_pct = field_or_nan(o, "gpu_util_pct"),
                                              .source = src};
}

/* Read the ok scrapes of server_metrics.jsonl (times relative to the
 * sweep's start, the in-flight samples' axis): the server's into *out,
 * the GPU telemetry's (--gpu-metrics, "source": "gpu") into *gpu. A
 * missing file is no series; an unreadable line is skipped (a scrape is a
 * cross-check, never a reason to fail the report). Returns the server's
 * count; *out is allocated (caller frees) even when it is 0. */
static size_t load_server_series(const char *path, struct report_server_sample **out,
                                 struct gpu_series *gpu, struct replica_names *rn)
{
    size_t n = 0, cap = 64;
    *out = ll_calloc(cap, sizeof **out);
    FILE *f = fopen(path, "r");
    if (!f)
        return 0;
    char *line = NULL;
    size_t lcap = 0;
    ssize_t got;
    while ((got = getline(&line, &lcap, f)) > 0) {
        json_t *o = json_loadb(line, (size_t)got, 0, NULL);
        if (!o)
            continue;
        json_t *t = json_object_get(o, "t_ns"), *d = json_object_get(o, "dur_ns");
        /* GPU telemetry (--gpu-metrics) shares the file: not the server's. */
        const char *src = json_string_value(json_object_get(o, "source"));
        int is_gpu = src && strcmp(src, "gpu") == 0;
        if (json_is_true(json_object_get(o, "ok")) && json_is_integer(t)) {
            double mid_ns = (double)json_integer_value(t) +
                            (json_is_integer(d) ? (double)json_integer_value(d) / 2 : 0);
            /* The baseline scrape before the first step is drawn at 0. */
            double t_s = LL_MAX(mid_ns / 1e9, 0.0);
            if (is_gpu) {
                gpu_series_add(gpu, o, t_s);
            } else {
                if (n == cap) {
                    cap *= 2;
                    *out = ll_realloc(*out, cap * sizeof **out);
                }
                struct report_server_sample *p = &(*out)[n];
                p->t_s = t_s;
                p->waiting = field_or_nan(o, "waiting");
                p->running = field_or_nan(o, "running");
                p->kv_usage = field_or_nan(o, "kv_usage");
                replica_waiting_read(o, rn, p);
                if (n == 0 || p->t_s >= (*out)[n - 1].t_s)
                    n++;
            }
        }
        json_decref(o);
    }
    free(line);
    fclose(f);
    return n;
}

void report_scrapes_load(const char *path, struct report_scrapes *sc)
{
    *sc = (struct report_scrapes){0};
    struct gpu_series gpu = {0};
    struct replica_names reps = {0};
    sc->n_server = load_server_series(path, &sc->server, &gpu, &reps);
    sc->gpu = gpu.v;
    sc->n_gpu = gpu.n;
    sc->cap_gpu = gpu.cap;
    sc->gpu_sources = gpu.names;
    sc->n_gpu_sources = gpu.n_names;
    sc->replicas = reps.names;
    sc->n_replicas = reps.n;
}

void report_scrapes_lend(const struct report_scrapes *sc, struct report *r)
{
    r->n_server = sc->n_server;
    r->server = sc->n_server ? sc->server : NULL;
    r->replicas = (const char *const *)sc->replicas;
    r->n_replicas = sc->n_replicas;
    r->gpu = sc->gpu;
    r->n_gpu = sc->n_gpu;
    r->gpu_sources = (const char *const *)sc->gpu_sources;
    r->n_gpu_sources = sc->n_gpu_sources;
}

void report_scrapes_free(struct report_scrapes *sc)
{
    struct gpu_series gpu = {sc->gpu, sc->n_gpu, sc->cap_gpu, sc->gpu_sources, sc->n_gpu_sources};
    struct replica_names reps = {sc->replicas, sc->n_replicas};
    gpu_series_free(&gpu);
    names_free(&reps);
    free(sc->server);
    *sc = (struct report_scrapes){0};
}
