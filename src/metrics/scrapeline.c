/* scrapeline.c: server_metrics.jsonl read back into scrape points and
 * series (see scrapeline.h). The writer is scrape.c's point_json; the
 * keys of the mapped meanings are its table, lent through scrape_int.h. */
#include "metrics/scrapeline.h"

#include <errno.h>
#include <jansson.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "metrics/scrape_int.h"
#include "util/util.h"

static int fail(char *err, size_t errlen, const char *what)
{
    snprintf(err, errlen, "%s", what);
    return LL_E_PROTO;
}

/* A number as scrape_json_num writes it: a JSON number, or "+Inf",
 * "-Inf", "NaN" as a string. 0 and *v, or -1. */
static int num_of(const json_t *j, double *v)
{
    if (json_is_number(j)) {
        *v = json_number_value(j);
        return 0;
    }
    const char *s = json_string_value(j);
    if (!s)
        return -1;
    if (strcmp(s, "+Inf") == 0)
        *v = INFINITY;
    else if (strcmp(s, "-Inf") == 0)
        *v = -INFINITY;
    else if (strcmp(s, "NaN") == 0)
        *v = NAN;
    else
        return -1;
    return 0;
}

/* A non-negative whole number of ns at key k of o. */
static int ns_of(const json_t *o, const char *k, uint64_t *v)
{
    const json_t *j = json_object_get(o, k);
    if (!json_is_integer(j) || json_integer_value(j) < 0)
        return -1;
    *v = (uint64_t)json_integer_value(j);
    return 0;
}

/* The TTFT histogram: ttft_le_s (the finite bounds, ascending) and
 * ttft_cum (one count more: +Inf's), ttft_sum_s, ttft_count. */
static int ttft_of(const json_t *o, struct scrape_point *p, char *err, size_t errlen)
{
    const json_t *le = json_object_get(o, "ttft_le_s"), *cum = json_object_get(o, "ttft_cum");
    if (!le && !cum)
        return 0;
    if (!json_is_array(le) || !json_is_array(cum) ||
        json_array_size(cum) != json_array_size(le) + 1)
        return fail(err, errlen, "ttft_le_s and ttft_cum: expected arrays of n and n + 1 numbers");
    size_t n = json_array_size(cum);
    /* The join copies a point's histogram into a struct prom_histogram,
     * which holds PROM_HIST_MAX_BUCKETS buckets: no scrape gathers more
     * (prom_scrape_histogram refuses them), so a line with more was not
     * written by llmload. */
    if (n > PROM_HIST_MAX_BUCKETS) {
        snprintf(err, errlen, "ttft_le_s: expected at most %d bounds, got %zu",
                 PROM_HIST_MAX_BUCKETS - 1, n - 1);
        return LL_E_PROTO;
    }
    p->ttft_le = ll_calloc(n, sizeof *p->ttft_le);
    p->ttft_count = ll_calloc(n, sizeof *p->ttft_count);
    p->ttft_n = n;
    for (size_t i = 0; i < n; i++) {
        double b = INFINITY;
        if (i + 1 < n && (num_of(json_array_get(le, i), &b) != 0 || !isfinite(b) ||
                          (i > 0 && !(b > p->ttft_le[i - 1]))))
            return fail(err, errlen, "ttft_le_s: expected finite bounds in ascending order");
        p->ttft_le[i] = b;
        if (num_of(json_array_get(cum, i), &p->ttft_count[i]) != 0)
            return fail(err, errlen, "ttft_cum: expected numbers");
    }
    if (num_of(json_object_get(o, "ttft_sum_s"), &p->ttft_sum_s) != 0 ||
        num_of(json_object_get(o, "ttft_count"), &p->ttft_total) != 0)
        return fail(err, errlen, "ttft_sum_s, ttft_count: expected numbers");
    return 0;
}

/* The counters' label sets: "series": {"<meaning's key>": [{"name": ...,
 * "model": ... (optional), "value": ...}, ...]}, at most
 * SCRAPE_MAX_SERIES of each. A line without it keeps only the sums. */
static int series_of(const json_t *o, struct scrape_point *p, char *err, size_t errlen)
{
    const json_t *all = json_object_get(o, "series");
    if (!all)
        return 0;
    if (!json_is_object(all))
        return fail(err, errlen, "series: expected an object");
    for (int m = 0; m < ENGINE_MEANING_COUNT; m++) {
        const char *key = scrape_meaning_key((enum engine_meaning)m);
        const json_t *a = key && engines_meaning_is_counter((enum engine_meaning)m)
                              ? json_object_get(all, key)
                              : NULL;
        if (!a)
            continue;
        size_t n = json_array_size(a);
        if (!json_is_array(a) || n == 0 || n > SCRAPE_MAX_SERIES || !p->present[m]) {
            snprintf(err, errlen,
                     "series: %s: expected 1 to %d label sets of a counter the line has", key,
                     SCRAPE_MAX_SERIES);
            return LL_E_PROTO;
        }
        p->series[m] = ll_calloc(n, sizeof *p->series[m]);
        for (size_t i = 0; i < n; i++) {
            const json_t *x = json_array_get(a, i);
            const char *name = json_string_value(json_object_get(x, "name"));
            const json_t *model = json_object_get(x, "model");
            struct scrape_counter_series *c = &p->series[m][p->series_n[m]];
            if (!name || (model && !json_is_string(model)) ||
                num_of(json_object_get(x, "value"), &c->value) != 0) {
                snprintf(err, errlen,
                         "series: %s: expected {\"name\": string, \"model\": string, "
                         "\"value\": number}",
                         key);
                return LL_E_PROTO;
            }
            c->name = ll_strdup(name);
            c->model = model ? ll_strdup(json_string_value(model)) : NULL;
            p->series_n[m]++;
        }
    }
    return 0;
}

/* The fields of an ok line: engine, gpus, the meanings, the histogram. */
static int ok_fields(const json_t *o, struct scrape_point *p, int gpu, char *err, size_t errlen)
{
    const char *eng = json_string_value(json_object_get(o, "engine"));
    p->engine = ENGINE_KIND_COUNT;
    for (int k = 0; eng && k < ENGINE_KIND_COUNT; k++)
        if (strcmp(eng, engines_kind_name((enum engine_kind)k)) == 0)
            p->engine = (enum engine_kind)k;
    if (p->engine == ENGINE_KIND_COUNT)
        return fail(err, errlen, "engine: expected an engine's name (docs/server-metrics.md)");
    const json_t *g = json_object_get(o, "gpus");
    if (g && (!json_is_integer(g) || json_integer_value(g) < 0 || json_integer_value(g) > 1000000))
        return fail(err, errlen, "gpus: expected a count");
    p->gpus = g ? (unsigned)json_integer_value(g) : 0;
    for (int m = 0; m < ENGINE_MEANING_COUNT; m++) {
        const char *key = scrape_meaning_key((enum engine_meaning)m);
        const json_t *v = key ? json_object_get(o, key) : NULL;
        if (!v || json_is_null(v))
            continue;
        if (num_of(v, &p->value[m]) != 0) {
            snprintf(err, errlen, "%s: expected a number", key);
            return LL_E_PROTO;
        }
        p->present[m] = 1;
    }
    if (gpu)
        return 0;
    const json_t *ps = json_object_get(o, "process_start_s");
    if (ps && (!json_is_number(ps) || !(json_number_value(ps) > 0)))
        return fail(err, errlen, "process_start_s: expected a positive number of seconds");
    p->process_start_s = ps ? json_number_value(ps) : 0;
    int rc = series_of(o, p, err, errlen);
    return rc ? rc : ttft_of(o, p, err, errlen);
}

int scrape_line_parse(const char *line, size_t len, struct scrape_point *p, int *gpu, char *url,
                      size_t url_len, char *err, size_t errlen)
{
    memset(p, 0, sizeof *p);
    p->kv_capacity_tokens = NAN;
    *gpu = 0;
    if (url && url_len)
        url[0] = '\0';
    json_error_t je;
    json_t *o = json_loadb(line, len, 0, &je);
    if (!json_is_object(o)) {
        json_decref(o);
        return fail(err, errlen, "expected a JSON object");
    }
    int rc = 0;
    uint64_t mono, dur;
    const json_t *ok = json_object_get(o, "ok");
    const char *src = json_string_value(json_object_get(o, "source"));
    *gpu = src && strcmp(src, "gpu") == 0;
    const json_t *u = json_object_get(o, "url");
    if (*gpu && u && !json_is_string(u)) {
        json_decref(o);
        return fail(err, errlen, "url: expected a string (the GPU source's)");
    }
    if (*gpu && u && url && url_len)
        snprintf(url, url_len, "%s", json_string_value(u));
    if (ns_of(o, "mono_ns", &mono) != 0 || ns_of(o, "dur_ns", &dur) != 0 || dur > UINT64_MAX - mono)
        rc = fail(err, errlen, "mono_ns, dur_ns: expected non-negative whole numbers of ns");
    else if (!json_is_boolean(ok))
        rc = fail(err, errlen, "ok: expected true or false");
    if (rc == 0) {
        p->start_abs_ns = mono;
        p->end_abs_ns = mono + dur;
        p->ok = json_is_true(ok);
        if (p->ok)
            rc = ok_fields(o, p, *gpu, err, errlen);
    }
    json_decref(o);
    return rc;
}

void scrape_file_gpus_reset(struct scrape_file_gpus *g)
{
    for (size_t i = 0; i < g->n; i++) {
        free(g->v[i].url);
        scrape_series_reset(&g->v[i].series);
    }
    free(g->v);
    g->v = NULL;
    g->n = 0;
}

const struct scrape_file_gpu *scrape_file_gpus_find(const struct scrape_file_gpus *g,
                                                    const char *url)
{
    for (size_t i = 0; i < g->n; i++)
        if (strcmp(g->v[i].url, url) == 0)
            return &g->v[i];
    return NULL;
}

/* The source of g named url, added (empty) when it has none. */
static struct scrape_file_gpu *gpu_source(struct scrape_file_gpus *g, const char *url)
{
    struct scrape_file_gpu *s = (struct scrape_file_gpu *)scrape_file_gpus_find(g, url);
    if (s)
        return s;
    g->v = ll_realloc(g->v, (g->n + 1) * sizeof *g->v);
    s = &g->v[g->n++];
    memset(s, 0, sizeof *s);
    s->url = ll_strdup(url);
    scrape_series_init(&s->series);
    return s;
}

int scrape_file_load(const char *path, struct scrape_series *srv, struct scrape_file_gpus *gpus,
                     char *err, size_t errlen)
{
    FILE *f = fopen(path, "r");
    if (!f) {
        snprintf(err, errlen, "%s: %s", path, strerror(errno));
        return errno == ENOENT ? LL_E_NOTFOUND : LL_E_IO;
    }
    char *line = NULL;
    size_t cap = 0, lineno = 0;
    ssize_t got;
    int rc = 0;
    while (rc == 0 && (got = getline(&line, &cap, f)) > 0) {
        size_t len = (size_t)got;
        lineno++;
        if (line[len - 1] == '\n')
            len--;
        if (len == 0)
            continue;
        struct scrape_point p;
        int is_gpu;
        char why[200], url[2048];
        if (scrape_line_parse(line, len, &p, &is_gpu, url, sizeof url, why, sizeof why) != 0) {
            snprintf(err, errlen, "%s:%zu: %s", path, lineno, why);
            rc = LL_E_PROTO;
        } else if (is_gpu && gpus) {
            struct scrape_file_gpu *g = gpu_source(gpus, url);
            g->lines++;
            g->failed += !p.ok;
            scrape_series_add(&g->series, &p); /* out of order: refused, skipped */
        } else if (!is_gpu && srv) {
            scrape_series_add(srv, &p);
        }
        scrape_point_reset(&p);
    }
    if (rc == 0 && ferror(f)) {
        snprintf(err, errlen, "%s: %s", path, strerror(errno));
        rc = LL_E_IO;
    }
    free(line);
    fclose(f);
    return rc;
}
