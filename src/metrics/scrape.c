/* scrape.c: the /metrics scraper thread and its series (the join of a
 * series to a window is scrapejoin.c's).
 *
 * The thread owns one fetcher (http/fetch.h: a libcurl easy handle, so the
 * connection is kept) and one body buffer, reused for every scrape. It
 * sends no request headers of the run: never the API key, never a -H. Each scrape becomes a scrape_point (mapped values plus the
 * TTFT histogram) appended to a series under a mutex, and one JSON line
 * written with a single write() to server_metrics.jsonl. Lines taken
 * before the origin is known (the probe) wait in memory and are written
 * when the thread starts. */
#include "metrics/scrape.h"

#include <errno.h>
#include <fcntl.h>
#include <jansson.h>
#include <math.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "http/fetch.h"
#include "metrics/scrape_int.h"
#include "util/strbuf.h"
#include "util/util.h"

/* ---- points ------------------------------------------------------------ */

void scrape_point_reset(struct scrape_point *p)
{
    if (!p)
        return;
    free(p->ttft_le);
    free(p->ttft_count);
    for (int m = 0; m < ENGINE_MEANING_COUNT; m++) {
        for (size_t i = 0; i < p->series_n[m]; i++) {
            free(p->series[m][i].name);
            free(p->series[m][i].model);
        }
        free(p->series[m]);
    }
    memset(p, 0, sizeof *p);
}

/* smp's name and labels as the page wrote them: name{a="x",b="y"}. */
static char *series_name(const struct prom_sample *smp)
{
    struct strbuf b;
    strbuf_init(&b);
    strbuf_puts(&b, smp->name);
    for (size_t i = 0; i < smp->n_labels; i++) {
        strbuf_puts(&b, i ? "," : "{");
        strbuf_puts(&b, smp->labels[i].name);
        strbuf_puts(&b, "=\"");
        strbuf_add(&b, smp->labels[i].value, smp->labels[i].value_len);
        strbuf_puts(&b, "\"");
    }
    if (smp->n_labels)
        strbuf_puts(&b, "}");
    char *name = ll_strdup(b.data);
    strbuf_free(&b);
    return name;
}

/* Keep each engine counter's label sets apart in p (scrape_point.series):
 * the samples engines_extract summed into v, in page order. */
static void point_series(struct scrape_point *p, const struct prom_scrape *ps,
                         const struct engine_values *v)
{
    const char *model_label = engines_model_label(p->engine);
    for (int m = 0; m < ENGINE_MEANING_COUNT; m++) {
        const struct engine_metric *row = v->source[m];
        if (!row || !engines_meaning_is_counter((enum engine_meaning)m) || v->n[m] == 0 ||
            v->n[m] > SCRAPE_MAX_SERIES)
            continue;
        p->series[m] = ll_calloc(v->n[m], sizeof *p->series[m]);
        for (size_t i = 0; i < ps->n_samples && p->series_n[m] < v->n[m]; i++) {
            const struct prom_sample *smp = &ps->samples[i];
            if (engines_lookup(smp) != row)
                continue;
            struct scrape_counter_series *c = &p->series[m][p->series_n[m]++];
            const char *model = model_label ? prom_sample_label(smp, model_label) : NULL;
            c->name = series_name(smp);
            c->model = model ? ll_strdup(model) : NULL;
            c->value = smp->value * row->scale;
        }
    }
}

/* The latest process_start_time_seconds on the page (several processes
 * may each export one: a restarted one is the latest), or 0. */
static double process_start_of(const struct prom_scrape *ps)
{
    double latest = 0;
    for (size_t i = 0; i < ps->n_samples; i++) {
        const struct prom_sample *smp = &ps->samples[i];
        if (strcmp(smp->name, "process_start_time_seconds") == 0 && isfinite(smp->value) &&
            smp->value > latest)
            latest = smp->value;
    }
    return latest;
}

int scrape_point_from_body(const char *body, size_t len, uint64_t start_abs_ns,
                           uint64_t end_abs_ns, struct scrape_point *p,
                           struct prom_scrape **parsed)
{
    return scrape_point_from_body_as(ENGINE_UNKNOWN, body, len, start_abs_ns, end_abs_ns, p,
                                     parsed);
}

int scrape_point_from_body_as(enum engine_kind kind, const char *body, size_t len,
                              uint64_t start_abs_ns, uint64_t end_abs_ns, struct scrape_point *p,
                              struct prom_scrape **parsed)
{
    if (!p)
        return LL_E_INVAL;
    memset(p, 0, sizeof *p);
    p->start_abs_ns = start_abs_ns;
    p->end_abs_ns = end_abs_ns;
    p->kv_capacity_tokens = NAN;
    if (parsed)
        *parsed = NULL;
    struct prom_scrape *ps = NULL;
    if (prom_scrape_parse(body ? body : "", body ? len : 0, &ps) != 0)
        return 0;
    if (ps->n_samples == 0) {
        prom_scrape_free(ps);
        return 0;
    }
    p->ok = 1;
    p->engine = kind != ENGINE_UNKNOWN ? kind : engines_detect(ps);
    if (p->engine != ENGINE_UNKNOWN) {
        struct engine_values v;
        if (engines_extract(p->engine, ps, &v) == 0) {
            for (int m = 0; m < ENGINE_MEANING_COUNT; m++) {
                p->value[m] = v.value[m];
                p->present[m] = (unsigned char)(v.present[m] != 0);
            }
            size_t g = LL_MAX(v.n[ENGINE_M_GPU_POWER], v.n[ENGINE_M_GPU_ENERGY]);
            p->gpus = (unsigned)g;
            /* A sum of energy counters without one GPU's is not comparable
             * with the next scrape's (it would read as a counter reset, and
             * add every GPU's whole count): this scrape has none. */
            if (v.n[ENGINE_M_GPU_ENERGY] < g)
                p->present[ENGINE_M_GPU_ENERGY] = 0;
            point_series(p, ps, &v);
        }
        struct prom_histogram *h = ll_malloc(sizeof *h);
        if (engines_ttft_histogram(p->engine, ps, h) == 0 && h->n_buckets > 0) {
            p->ttft_n = h->n_buckets;
            p->ttft_le = ll_malloc(h->n_buckets * sizeof(double));
            p->ttft_count = ll_malloc(h->n_buckets * sizeof(double));
            memcpy(p->ttft_le, h->le, h->n_buckets * sizeof(double));
            memcpy(p->ttft_count, h->count, h->n_buckets * sizeof(double));
            p->ttft_sum_s = h->sum;
            p->ttft_total = h->total;
            p->present[ENGINE_M_TTFT] = 1;
        }
        free(h);
        p->kv_capacity_tokens = engines_kv_capacity_tokens(p->engine, ps);
    }
    if (p->engine != ENGINE_DCGM)
        p->process_start_s = process_start_of(ps);
    if (parsed)
        *parsed = ps;
    else
        prom_scrape_free(ps);
    return 0;
}

/* ---- series ------------------------------------------------------------ */

void scrape_series_init(struct scrape_series *s)
{
    memset(s, 0, sizeof *s);
}

void scrape_series_reset(struct scrape_series *s)
{
    for (size_t i = 0; i < s->n; i++)
        scrape_point_reset(&s->pts[i]);
    free(s->pts);
    free(s->model);
    memset(s, 0, sizeof *s);
}

void scrape_series_set_model(struct scrape_series *s, const char *model)
{
    free(s->model);
    s->model = model && *model ? ll_strdup(model) : NULL;
}

int scrape_series_add(struct scrape_series *s, struct scrape_point *p)
{
    if (!s || !p)
        return LL_E_INVAL;
    if (s->n && p->start_abs_ns < s->pts[s->n - 1].start_abs_ns)
        return LL_E_INVAL;
    if (s->n == s->cap) {
        s->cap = s->cap ? s->cap * 2 : 64;
        s->pts = ll_realloc(s->pts, s->cap * sizeof *s->pts);
    }
    s->pts[s->n++] = *p;
    memset(p, 0, sizeof *p);
    return 0;
}

/* ---- the default URL --------------------------------------------------- */

int scrape_default_url(const char *base_url, char *buf, size_t len)
{
    if (!buf || len == 0)
        return LL_E_RANGE;
    buf[0] = '\0';
    if (!base_url)
        return LL_E_RANGE;
    size_t n = ll_url_root_len(base_url);
    if (n + sizeof "/metrics" > len)
        return LL_E_RANGE;
    memcpy(buf, base_url, n);
    memcpy(buf + n, "/metrics", sizeof "/metrics");
    return 0;
}

/* ---- the scraper ------------------------------------------------------- */

struct scraper {
    struct scrape_config cfg;
    char *url;                      /* owned copy */
    struct fetcher *fetch;          /* its connection, kept between scrapes */
    struct fetch_opts fetch_opts;   /* no headers: never the API key or -H */
    struct fetch_response resp;     /* the body's buffer, reused */

    pthread_mutex_t lock;           /* guards everything below */
    pthread_cond_t wake;
    struct scrape_series series;
    uint64_t scrapes, failed;
    int warned;
    int stop;
    uint64_t origin_abs_ns;
    int have_origin;
    json_t **pending;               /* lines waiting for the origin */
    size_t n_pending;

    int thread_started;
    int owns_fd;                    /* scraper_for_run opened cfg.out_fd */
    int file_failed;                /* a write failed: no more lines */
    int cancel_fd;                  /* scraper_for_run's probe: fetch_opts.cancel_fds */
    pthread_t th;
    const struct scraper_source *src; /* another source of points (nvidia-smi), or NULL */
    void *src_ud;
};

struct scraper *scraper_new(const struct scrape_config *cfg, char *err, size_t errlen)
{
    if (!cfg || !cfg->url || !*cfg->url) {
        snprintf(err, errlen, "no metrics URL");
        return NULL;
    }
    if (cfg->interval_ns < SCRAPE_MIN_INTERVAL_NS) {
        snprintf(err, errlen, "metrics interval must be at least 100ms");
        return NULL;
    }
    if (cfg->timeout_ns && cfg->timeout_ns >= cfg->interval_ns) {
        snprintf(err, errlen, "metrics timeout must be shorter than the interval");
        return NULL;
    }
    struct scraper *s = ll_calloc(1, sizeof *s);
    s->cfg = *cfg;
    s->url = ll_strdup(cfg->url);
    s->cfg.url = s->url;
    if (!s->cfg.timeout_ns)
        s->cfg.timeout_ns = cfg->interval_ns / 10 * 8;
    scrape_series_init(&s->series);
    scrape_lock_init(&s->lock, &s->wake);

    s->fetch = fetch_new();
    if (!s->fetch) {
        snprintf(err, errlen, "curl_easy_init failed");
        scraper_free(s);
        return NULL;
    }
    s->fetch_opts.timeout_ns = s->cfg.timeout_ns;
    s->fetch_opts.connect_timeout_ns = s->cfg.timeout_ns;
    s->fetch_opts.max_body_bytes = SCRAPE_MAX_BODY_BYTES;
    s->fetch_opts.accept_encoding = 1;
    s->fetch_opts.user_agent = "llmload/" LL_VERSION;
    s->fetch_opts.cacert = s->cfg.access.cacert;
    s->fetch_opts.insecure = s->cfg.access.insecure;
    s->fetch_opts.headers = s->cfg.access.headers;
    return s;
}

/* A JSON number, or "+Inf" / "-Inf" / "NaN" as a string (JSON has none). */
json_t *scrape_json_num(double v)
{
    if (isfinite(v))
        return json_real(v);
    return json_string(isnan(v) ? "NaN" : v > 0 ? "+Inf" : "-Inf");
}

/* A whole number where the value is one (counters, gauges of requests),
 * so the file reads 12, not 12.0. */
json_t *scrape_json_count(double v)
{
    if (isfinite(v) && v == floor(v) && fabs(v) < 9e15)
        return json_integer((json_int_t)v);
    return scrape_json_num(v);
}

static const char *const meaning_key[ENGINE_MEANING_COUNT] = {
    [ENGINE_M_WAITING] = "waiting",
    [ENGINE_M_RUNNING] = "running",
    [ENGINE_M_KV_USAGE] = "kv_usage",
    [ENGINE_M_PREEMPTIONS] = "preemptions_total",
    [ENGINE_M_PROMPT_TOKENS] = "prompt_tokens_total",
    [ENGINE_M_GENERATION_TOKENS] = "generation_tokens_total",
    [ENGINE_M_REQUEST_SUCCESS] = "request_success_total",
    [ENGINE_M_GPU_POWER] = "power_w",
    [ENGINE_M_GPU_ENERGY] = "energy_j_total",
    [ENGINE_M_GPU_UTIL] = "gpu_util_pct",
    [ENGINE_M_GPU_MEM_USED] = "fb_used_mib",
    [ENGINE_M_GPU_SM_CLOCK] = "sm_clock_mhz",
    [ENGINE_M_GPU_GR_ACTIVE] = "gr_engine_active",
};

const char *scrape_meaning_key(enum engine_meaning m)
{
    return (unsigned)m < ENGINE_MEANING_COUNT ? meaning_key[m] : NULL;
}

/* The JSON line of one scrape, without t_ns (set when written). */
static json_t *point_json(const struct scraper *s, const struct scrape_point *p,
                          const struct prom_scrape *ps, const char *error)
{
    json_t *o = json_object();
    json_object_set_new(o, "t_ns", json_null()); /* first in the line; set when written */
    json_object_set_new(o, "mono_ns", json_integer((json_int_t)p->start_abs_ns));
    json_object_set_new(o, "dur_ns", json_integer((json_int_t)(p->end_abs_ns - p->start_abs_ns)));
    json_object_set_new(o, "ok", json_boolean(p->ok));
    if (s->cfg.gpu) {
        json_object_set_new(o, "source", json_string("gpu"));
        /* Which --gpu-metrics URL (or "nvidia-smi"): several share the file. */
        json_object_set_new(o, "url", json_string(s->url));
    }
    if (!p->ok) {
        json_object_set_new(o, "error", json_string(error ? error : "failed"));
        return o;
    }
    json_object_set_new(o, "engine", json_string(engines_kind_name(p->engine)));
    if (s->cfg.gpu)
        json_object_set_new(o, "gpus", json_integer(p->gpus));
    for (int m = 0; m < ENGINE_MEANING_COUNT; m++) {
        if (!meaning_key[m] || engines_meaning_is_gpu((enum engine_meaning)m) != s->cfg.gpu)
            continue;
        if (!p->present[m])
            json_object_set_new(o, meaning_key[m], json_null());
        else if (m == ENGINE_M_KV_USAGE ||
                 (engines_meaning_is_gpu((enum engine_meaning)m) && m != ENGINE_M_GPU_MEM_USED))
            json_object_set_new(o, meaning_key[m], scrape_json_num(p->value[m]));
        else
            json_object_set_new(o, meaning_key[m], scrape_json_count(p->value[m]));
    }
    if (p->process_start_s > 0)
        json_object_set_new(o, "process_start_s", json_real(p->process_start_s));
    json_t *series = NULL;
    for (int m = 0; m < ENGINE_MEANING_COUNT; m++) {
        if (!p->series_n[m] || !meaning_key[m])
            continue;
        json_t *a = json_array();
        for (size_t i = 0; i < p->series_n[m]; i++) {
            const struct scrape_counter_series *c = &p->series[m][i];
            json_t *x = json_object();
            json_object_set_new(x, "name", json_string(c->name));
            if (c->model)
                json_object_set_new(x, "model", json_string(c->model));
            json_object_set_new(x, "value", scrape_json_count(c->value));
            json_array_append_new(a, x);
        }
        if (!series)
            series = json_object();
        json_object_set_new(series, meaning_key[m], a);
    }
    if (series)
        json_object_set_new(o, "series", series);
    if (p->ttft_n) {
        json_t *le = json_array(), *cum = json_array();
        for (size_t i = 0; i < p->ttft_n; i++) {
            if (isfinite(p->ttft_le[i]))
                json_array_append_new(le, json_real(p->ttft_le[i]));
            json_array_append_new(cum, scrape_json_count(p->ttft_count[i]));
        }
        json_object_set_new(o, "ttft_le_s", le);
        json_object_set_new(o, "ttft_cum", cum);
        json_object_set_new(o, "ttft_sum_s", scrape_json_num(p->ttft_sum_s));
        json_object_set_new(o, "ttft_count", scrape_json_count(p->ttft_total));
    }
    if (ps) {
        json_object_set_new(o, "samples", json_integer((json_int_t)ps->n_samples));
        json_object_set_new(o, "bad_lines", json_integer((json_int_t)ps->stats.bad_lines));
        if (s->cfg.raw || p->engine == ENGINE_UNKNOWN) {
            json_t *raw = json_array();
            size_t n = LL_MIN(ps->n_samples, (size_t)SCRAPE_RAW_MAX_SAMPLES);
            for (size_t i = 0; i < n; i++) {
                const struct prom_sample *x = &ps->samples[i];
                json_t *r = json_object(), *labels = json_object();
                json_object_set_new(r, "name", json_string(x->name));
                for (size_t k = 0; k < x->n_labels; k++)
                    json_object_set_new(labels, x->labels[k].name,
                                        json_stringn(x->labels[k].value, x->labels[k].value_len));
                json_object_set_new(r, "labels", labels);
                json_object_set_new(r, "value", scrape_json_num(x->value));
                json_array_append_new(raw, r);
            }
            json_object_set_new(o, "raw", raw);
            if (ps->n_samples > n)
                json_object_set_new(o, "raw_left_out", json_integer((json_int_t)(ps->n_samples - n)));
        }
    }
    return o;
}

/* Write one line with t_ns relative to the origin. Called with the lock
 * held; the write is one syscall on an O_APPEND fd. */
static void line_write(struct scraper *s, json_t *o)
{
    if (s->cfg.out_fd < 0 || s->file_failed)
        return;
    json_int_t mono = json_integer_value(json_object_get(o, "mono_ns"));
    json_object_set_new(o, "t_ns", json_integer(mono - (json_int_t)s->origin_abs_ns));
    char *text = json_dumps(o, JSON_COMPACT | JSON_PRESERVE_ORDER | JSON_REAL_PRECISION(15));
    if (!text)
        return;
    size_t len = strlen(text);
    char *line = ll_malloc(len + 1);
    memcpy(line, text, len);
    line[len] = '\n';
    free(text);
    size_t off = 0;
    while (off < len + 1) {
        ssize_t w = write(s->cfg.out_fd, line + off, len + 1 - off);
        if (w < 0) {
            if (errno == EINTR)
                continue;
            if (!s->cfg.quiet)
                ll_errorf("warning: writing server_metrics.jsonl: %s", strerror(errno));
            s->file_failed = 1; /* one warning, then the file is given up */
            break;
        }
        off += (size_t)w;
    }
    free(line);
}

/* Keep one scrape, with s->lock held: its point into the series (taken
 * over) and its line (taken over) into the scrape file, or held until the
 * run's origin is known. */
static void keep_locked(struct scraper *s, struct scrape_point *p, json_t *line)
{
    if (scrape_series_add(&s->series, p) != 0)
        scrape_point_reset(p); /* out of order: cannot happen on one clock */
    if (s->have_origin) {
        line_write(s, line);
        json_decref(line);
    } else {
        s->pending = ll_realloc(s->pending, (s->n_pending + 1) * sizeof *s->pending);
        s->pending[s->n_pending++] = line;
    }
}

void scrape_slow_hint(const char *what, uint64_t took_ns, uint64_t timeout_ns, uint64_t cap_ns,
                      char *err, size_t errlen)
{
    /* libcurl gives up within a millisecond of its timeout. A connection
     * that timed out ("Failed to connect ... Timeout was reached",
     * "Connection timed out") is a dead or filtered host, not a slow page. */
    if (!timeout_ns || took_ns + LL_NS_PER_MS < timeout_ns || strstr(err, "onnect"))
        return;
    size_t n = strlen(err);
    if (n >= errlen)
        return;
    double took_s = (double)took_ns / 1e9, cap_s = (double)cap_ns / 1e9;
    /* The interval whose timeout (80% of it) is twice the scrape's time. */
    double want_s = ceil(2 * took_s / 0.8 * 10 - 1e-9) / 10;
    if (2 * took_s <= cap_s)
        snprintf(err + n, errlen - n,
                 " (the %s took %.2f s, its timeout %.2f s: try --metrics-interval %.1fs, "
                 "each %s then gets %.2f s)",
                 what, took_s, (double)timeout_ns / 1e9, want_s, what, want_s * 0.8);
    else if (timeout_ns + LL_NS_PER_MS < cap_ns)
        snprintf(err + n, errlen - n,
                 " (the %s took %.2f s, its timeout %.2f s: try --metrics-interval %.1fs, "
                 "each %s then gets %.2f s, the most any gets)",
                 what, took_s, (double)timeout_ns / 1e9, cap_s / 0.8, what, cap_s);
    else
        snprintf(err + n, errlen - n,
                 " (the %s took %.2f s, the most any %s gets whatever "
                 "--metrics-interval: this endpoint is too slow for it)",
                 what, took_s, what);
}

/* One GET, parse, keep and write. Returns 0 when ok, else LL_E_IO (could
 * not fetch) or LL_E_PROTO (fetched garbage), with a reason in err. */
static int scrape_once(struct scraper *s, char *err, size_t errlen)
{
    uint64_t start = ll_now_ns();
    int frc = fetch_request(s->fetch, s->url, NULL, &s->fetch_opts, &s->resp, err, errlen);
    uint64_t end = ll_now_ns();
    if (frc == LL_E_INTR)
        return frc; /* abandoned for a stop signal: no scrape to count */

    int rc = 0;
    struct scrape_point p;
    struct prom_scrape *ps = NULL;
    memset(&p, 0, sizeof p);
    p.start_abs_ns = start;
    p.end_abs_ns = end;
    if (frc == LL_E_FULL) {
        rc = LL_E_PROTO; /* err: "body larger than SCRAPE_MAX_BODY_BYTES bytes" */
    } else if (frc != 0) {
        rc = LL_E_IO;
        scrape_slow_hint("scrape", end - start, s->cfg.timeout_ns, SCRAPE_RUN_TIMEOUT_NS, err,
                         errlen);
    } else if (s->resp.status != 200) {
        snprintf(err, errlen, "HTTP %ld", s->resp.status);
        rc = LL_E_PROTO;
    } else {
        scrape_point_from_body_as(s->cfg.gpu ? ENGINE_DCGM : ENGINE_UNKNOWN, s->resp.body,
                                  s->resp.body_len, start, end, &p, &ps);
        if (!p.ok) {
            snprintf(err, errlen, "no Prometheus samples in a %zu-byte body", s->resp.body_len);
            rc = LL_E_PROTO;
        } else if (s->cfg.gpu && p.gpus == 0) {
            /* Not a DCGM exporter (or one with no GPU): a gap, not zero watts. */
            snprintf(err, errlen,
                     "no DCGM_FI_DEV_POWER_USAGE or "
                     "DCGM_FI_DEV_TOTAL_ENERGY_CONSUMPTION samples");
            p.ok = 0;
            rc = LL_E_PROTO;
        }
    }
    json_t *line = point_json(s, &p, ps, rc ? err : NULL);
    prom_scrape_free(ps);

    pthread_mutex_lock(&s->lock);
    s->scrapes++;
    if (rc) {
        s->failed++;
        if (!s->warned && !s->cfg.quiet)
            ll_errorf("warning: scraping %s: %s; %s metrics will have gaps (counted)", s->url, err,
                      s->cfg.gpu ? "GPU" : "server");
        s->warned = 1;
    }
    keep_locked(s, &p, line);
    pthread_mutex_unlock(&s->lock);
    return rc;
}

void scraper_set_source(struct scraper *s, const struct scraper_source *src, void *ud)
{
    s->src = src;
    s->src_ud = ud;
}

void *scraper_source_of(const struct scraper *s, const struct scraper_source *ops)
{
    return s && s->src == ops ? s->src_ud : NULL;
}

void scraper_keep(struct scraper *s, struct scrape_point *p, json_t *extra, const char *error)
{
    json_t *line = point_json(s, p, NULL, p->ok ? NULL : error);
    if (extra) {
        json_object_update(line, extra);
        json_decref(extra);
    }
    pthread_mutex_lock(&s->lock);
    s->scrapes++;
    s->failed += !p->ok;
    keep_locked(s, p, line);
    pthread_mutex_unlock(&s->lock);
}

int scraper_probe(struct scraper *s, char *err, size_t errlen)
{
    if (!s)
        return LL_E_INVAL;
    return scrape_once(s, err, errlen);
}

/* The body of scrape_tick_loop's callback for a scraper. */
static void scraper_tick(void *ud)
{
    char err[256];
    struct scraper *s = ud;
    scrape_once(s, err, sizeof err);
}

void scrape_tick_loop(pthread_mutex_t *lock, pthread_cond_t *wake, const int *stop,
                      uint64_t interval_ns, void (*once)(void *ud), void *ud)
{
    uint64_t next = ll_now_ns();
    pthread_mutex_lock(lock);
    while (!*stop) {
        uint64_t now = ll_now_ns();
        if (now >= next) {
            pthread_mutex_unlock(lock);
            once(ud);
            pthread_mutex_lock(lock);
            next += interval_ns;
            now = ll_now_ns();
            if (next <= now) /* a slow one: skip the missed ticks */
                next = now + interval_ns;
            continue;
        }
        struct timespec ts = {.tv_sec = (time_t)(next / LL_NS_PER_SEC),
                              .tv_nsec = (long)(next % LL_NS_PER_SEC)};
        pthread_cond_timedwait(wake, lock, &ts);
    }
    pthread_mutex_unlock(lock);
}

static void *scraper_main(void *arg)
{
    struct scraper *s = arg;
    scrape_tick_loop(&s->lock, &s->wake, &s->stop, s->cfg.interval_ns, scraper_tick, s);
    return NULL;
}

int scraper_start(struct scraper *s, uint64_t origin_abs_ns, char *err, size_t errlen)
{
    if (!s || s->thread_started)
        return LL_E_INVAL;
    pthread_mutex_lock(&s->lock);
    s->origin_abs_ns = origin_abs_ns;
    s->have_origin = 1;
    for (size_t i = 0; i < s->n_pending; i++) {
        line_write(s, s->pending[i]);
        json_decref(s->pending[i]);
    }
    free(s->pending);
    s->pending = NULL;
    s->n_pending = 0;
    pthread_mutex_unlock(&s->lock);
    if (s->src)
        return 0; /* the source has its own thread, started with it */

    int rc = ll_thread_start_nosig(&s->th, scraper_main, s, err, errlen);
    if (rc < 0)
        return rc;
    s->thread_started = 1;
    return 0;
}

void scrape_lock_init(pthread_mutex_t *lock, pthread_cond_t *wake)
{
    pthread_mutex_init(lock, NULL);
    pthread_condattr_t ca;
    pthread_condattr_init(&ca);
    pthread_condattr_setclock(&ca, CLOCK_MONOTONIC);
    pthread_cond_init(wake, &ca);
    pthread_condattr_destroy(&ca);
}

void scrape_thread_end(pthread_mutex_t *lock, pthread_cond_t *wake, int *stop, pthread_t th,
                       int *started)
{
    if (!*started)
        return;
    pthread_mutex_lock(lock);
    *stop = 1;
    pthread_cond_signal(wake);
    pthread_mutex_unlock(lock);
    pthread_join(th, NULL);
    *started = 0;
}

/* Ask the scrape thread to stop, and wait for it (nothing when it never
 * started or was stopped already). */
static void scraper_join_thread(struct scraper *s)
{
    scrape_thread_end(&s->lock, &s->wake, &s->stop, s->th, &s->thread_started);
}

void scraper_stop(struct scraper *s)
{
    scraper_stop_at(s, ll_now_ns(), 0);
}

void scraper_stop_at(struct scraper *s, uint64_t end_abs_ns, int interrupted)
{
    if (!s)
        return;
    if (s->src) {
        s->src->stop(s->src_ud, end_abs_ns, interrupted);
        return;
    }
    scraper_join_thread(s);
    char err[256];
    scrape_once(s, err, sizeof err);
}

void scraper_set_model(struct scraper *s, const char *model)
{
    if (!s)
        return;
    pthread_mutex_lock(&s->lock);
    scrape_series_set_model(&s->series, model);
    pthread_mutex_unlock(&s->lock);
}

int scrape_join(const struct scraper *s, uint64_t t0_abs_ns, uint64_t t1_abs_ns,
                enum scrape_span span, struct scrape_join *out)
{
    if (!s) {
        if (out)
            memset(out, 0, sizeof *out);
        return LL_E_INVAL;
    }
    struct scraper *m = (struct scraper *)s; /* the lock is not part of the value */
    pthread_mutex_lock(&m->lock);
    int rc = scrape_series_join(&s->series, t0_abs_ns, t1_abs_ns, span, out);
    pthread_mutex_unlock(&m->lock);
    return rc;
}

void scraper_counts(const struct scraper *s, uint64_t *scrapes, uint64_t *failed)
{
    struct scraper *m = (struct scraper *)s;
    pthread_mutex_lock(&m->lock);
    if (scrapes)
        *scrapes = s->scrapes;
    if (failed)
        *failed = s->failed;
    pthread_mutex_unlock(&m->lock);
}

uint64_t scraper_origin_ns(const struct scraper *s)
{
    return s && s->have_origin ? s->origin_abs_ns : 0;
}

void scraper_free(struct scraper *s)
{
    if (!s)
        return;
    if (s->src)
        s->src->free(s->src_ud); /* its thread ends before the lock goes */
    scraper_join_thread(s);
    for (size_t i = 0; i < s->n_pending; i++)
        json_decref(s->pending[i]);
    free(s->pending);
    fetch_free(s->fetch);
    scrape_series_reset(&s->series);
    pthread_cond_destroy(&s->wake);
    pthread_mutex_destroy(&s->lock);
    if (s->owns_fd && s->cfg.out_fd >= 0)
        close(s->cfg.out_fd);
    fetch_response_free(&s->resp);
    free(s->url);
    free(s);
}

/* ---- for the commands -------------------------------------------------- */

const char *scraper_url(const struct scraper *s)
{
    return s ? s->url : NULL;
}

/* The probe of scraper_for_run, abandoned when cancel_fd is readable. */
static int probe_cancellable(struct scraper *s, int cancel_fd, char *err, size_t errlen)
{
    s->cancel_fd = cancel_fd;
    if (cancel_fd >= 0) {
        s->fetch_opts.cancel_fds = &s->cancel_fd;
        s->fetch_opts.n_cancel_fds = 1;
    }
    int rc = scraper_probe(s, err, errlen);
    s->fetch_opts.cancel_fds = NULL; /* the thread's scrapes run to their timeout */
    s->fetch_opts.n_cancel_fds = 0;
    return rc;
}

/* Open DIR/server_metrics.jsonl (appended to; truncated first when
 * truncate) as s's own scrape file. 0, or -1 after a warning that the run
 * goes on without what (the scrape file's figures). */
static int open_out(struct scraper *s, const char *dir, int truncate, const char *what)
{
    char path[1100];
    int n = snprintf(path, sizeof path, "%s/server_metrics.jsonl", dir);
    int flags = O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC | (truncate ? O_TRUNC : 0);
    int fd = n > 0 && (size_t)n < sizeof path ? open(path, flags, 0644) : -1;
    if (fd < 0) {
        ll_errorf("warning: %s: %s; going on without %s", path, strerror(errno), what);
        return -1;
    }
    s->cfg.out_fd = fd;
    s->owns_fd = 1;
    return 0;
}

struct scraper *scraper_for_run(const char *url, const char *base_url, uint64_t interval_ns,
                                const char *dir, int quiet, int cancel_fd,
                                const struct scrape_access *acc)
{
    char def[1100], err[256];
    if (!url) {
        if (scrape_default_url(base_url, def, sizeof def) != 0)
            return NULL;
    }
    struct scrape_config cfg = {.url = url ? url : def,
                                .interval_ns = interval_ns,
                                .timeout_ns = LL_MIN(interval_ns / 10 * 8, SCRAPE_RUN_TIMEOUT_NS),
                                .out_fd = -1};
    if (acc)
        cfg.access = *acc;
    struct scraper *s = scraper_new(&cfg, err, sizeof err);
    if (!s) {
        ll_errorf("warning: server metrics: %s; going on without them", err);
        return NULL;
    }
    if (!url) {
        /* The default URL is a guess: use it only if it answers now. */
        s->cfg.quiet = 1;
        int prc = probe_cancellable(s, cancel_fd, err, sizeof err);
        if (prc == LL_E_INTR) {
            scraper_free(s);
            return NULL;
        }
        if (prc != 0) {
            if (!quiet)
                ll_errorf("note: no server metrics (%s: %s; pass --metrics-url to set one)",
                          def, err);
            scraper_free(s);
            return NULL;
        }
        s->cfg.quiet = 0;
    }
    if (open_out(s, dir, 1, "server metrics") != 0) {
        scraper_free(s);
        return NULL;
    }
    if (url && probe_cancellable(s, cancel_fd, err, sizeof err) == LL_E_INTR) {
        scraper_free(s);
        return NULL;
    }
    return s; /* an explicit URL's failed probe warned and counts */
}

struct scraper *scraper_gpu_open(const char *url, uint64_t interval_ns, const char *dir,
                                 int truncate)
{
    return scraper_open_as(url, 1, interval_ns, dir, truncate, NULL);
}

struct scraper *scraper_open_as(const char *url, int gpu, uint64_t interval_ns, const char *dir,
                                int truncate, const struct scrape_access *acc)
{
    char err[256];
    struct scrape_config cfg = {.url = url,
                                .interval_ns = interval_ns,
                                .timeout_ns = LL_MIN(interval_ns / 10 * 8, SCRAPE_RUN_TIMEOUT_NS),
                                .out_fd = -1,
                                .gpu = gpu};
    if (acc)
        cfg.access = *acc;
    struct scraper *s = scraper_new(&cfg, err, sizeof err);
    if (!s) {
        ll_errorf("warning: %s metrics: %s; going on without them", gpu ? "GPU" : "server", err);
        return NULL;
    }
    if (open_out(s, dir, truncate, gpu ? "GPU metrics" : "server metrics") != 0) {
        scraper_free(s);
        return NULL;
    }
    return s;
}

struct scraper *scraper_for_gpu(const char *url, uint64_t interval_ns, const char *dir,
                                int truncate, int quiet, int cancel_fd,
                                const struct scrape_access *acc)
{
    char err[256];
    (void)quiet; /* a named URL that fails always warns */
    struct scraper *s = scraper_open_as(url, 1, interval_ns, dir, truncate, acc);
    if (s && probe_cancellable(s, cancel_fd, err, sizeof err) == LL_E_INTR) {
        scraper_free(s);
        return NULL;
    }
    return s; /* a failed probe warned and counts */
}

/* "12.3ms"-style seconds for people; "-" when not a number. */
