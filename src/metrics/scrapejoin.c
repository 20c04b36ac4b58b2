/* scrapejoin.c: a scrape series joined to a window of the client's
 * timeline (scrape.h's scrape_series_join): gauges, counters over a span
 * with resets, the server's TTFT histogram deltas, the GPUs' power
 * integral; and the join printed and written as JSON. */
#include "metrics/scrape.h"

#include <jansson.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "measure/summary.h"
#include "metrics/scrape_int.h"
#include "util/util.h"

/* ---- the join ---------------------------------------------------------- */

/* The time a scrape stands for: the middle of its request. */
static uint64_t point_time(const struct scrape_point *p)
{
    uint64_t end = p->end_abs_ns >= p->start_abs_ns ? p->end_abs_ns : p->start_abs_ns;
    return p->start_abs_ns + (end - p->start_abs_ns) / 2;
}

static void gauge_add(struct scrape_gauge *g, const struct scrape_point *p, enum engine_meaning m)
{
    if (!p->present[m])
        return;
    double v = p->value[m];
    g->mean += v; /* a sum until gauge_finish */
    if (!g->present || v > g->max)
        g->max = v;
    g->present = 1;
    g->n++;
}

static void gauge_finish(struct scrape_gauge *g)
{
    if (g->n)
        g->mean /= (double)g->n;
}

/* May a's lack of what b has read as zero at a? When a is an ok scrape
 * of the same known engine: SGLang and TGI make a counter's or a
 * histogram's samples on their first use, so a baseline scrape of an
 * idle server lacks them, and the whole span's count would otherwise be
 * dropped as not present. */
static int absent_is_zero(const struct scrape_point *a, const struct scrape_point *b)
{
    return a->ok && a->engine == b->engine && a->engine != ENGINE_UNKNOWN &&
           a->engine != ENGINE_DCGM;
}

/* 1 when the server restarted between ok points a and b: both have a
 * process start time and it moved (by more than a millisecond: the file
 * keeps 15 digits). A counter may then have climbed past its old value
 * by b, which the going-down rule cannot see. */
static int restarted(const struct scrape_point *a, const struct scrape_point *b)
{
    return a->process_start_s > 0 && b->process_start_s > 0 &&
           fabs(a->process_start_s - b->process_start_s) > 1e-3;
}

/* Count the restarts between consecutive ok points from a to b that
 * have a process start time, and keep the first one's two scrapes. */
static void restarts_over(const struct scrape_series *s, size_t a, size_t b,
                          struct scrape_join *out)
{
    size_t last = SIZE_MAX;
    for (size_t i = a; i <= b; i++) {
        const struct scrape_point *p = &s->pts[i];
        if (!p->ok || !(p->process_start_s > 0))
            continue;
        if (last != SIZE_MAX && restarted(&s->pts[last], p)) {
            if (!out->restarts++) {
                out->restart_from_abs_ns = point_time(&s->pts[last]);
                out->restart_to_abs_ns = point_time(p);
            }
        }
        last = i;
    }
}

/* 1 when every ok point from a to b that has meaning m kept its label
 * sets apart (scrape_point.series). */
static int series_kept(const struct scrape_series *s, size_t a, size_t b, enum engine_meaning m)
{
    for (size_t i = a; i <= b; i++) {
        const struct scrape_point *p = &s->pts[i];
        if (p->ok && p->present[m] && p->series_n[m] == 0)
            return 0;
    }
    return 1;
}

/* Which model's label sets of m the join counts from a to b (see
 * scrape_series_set_model): the run's model's when some point has one,
 * else the engine's default model's when some point has one, else NULL
 * (all). Sets the join's model flags. */
static const char *model_pick(const struct scrape_series *s, size_t a, size_t b,
                              enum engine_meaning m, struct scrape_join *out)
{
    const char *def = engines_default_model(s->pts[b].engine);
    int named = 0, run = 0, dflt = 0;
    for (size_t i = a; i <= b; i++) {
        const struct scrape_point *p = &s->pts[i];
        for (size_t k = 0; p->ok && k < p->series_n[m]; k++) {
            const char *model = p->series[m][k].model;
            if (!model)
                continue;
            named = 1;
            run |= s->model && strcmp(model, s->model) == 0;
            dflt |= def && strcmp(model, def) == 0;
        }
    }
    out->model_named |= named;
    out->model_matched |= run;
    out->model_default |= !run && dflt;
    return run ? s->model : dflt ? def : NULL;
}

/* Whether p has label set name of m, and its value in *v. */
static int series_value(const struct scrape_point *p, enum engine_meaning m, const char *name,
                        double *v)
{
    for (size_t k = 0; k < p->series_n[m]; k++)
        if (strcmp(p->series[m][k].name, name) == 0) {
            *v = p->series[m][k].value;
            return 1;
        }
    return 0;
}

/* The increase of m from a to b label set by label set (those of model,
 * or all when model is NULL), summed: a reset of one set is that set's
 * alone, where a sum would read one set's drop against the others'
 * rises (1000 -> 1100 and 1000 -> 50 is 100 + 50, not 1150). A set the
 * first point lacks starts from 0 (made on first use); a later point
 * that lacks a set says nothing of it, and the set keeps its last value
 * (read as 0 there, its return would count its whole count again).
 * Bounded: each point has at most SCRAPE_MAX_SERIES sets of m. */
static void counter_by_series(const struct scrape_series *s, size_t a, size_t b,
                              enum engine_meaning m, const char *model, struct scrape_counter *c)
{
    const char **names = NULL;
    size_t n = 0, cap = 0;
    for (size_t i = a; i <= b; i++) {
        const struct scrape_point *p = &s->pts[i];
        for (size_t k = 0; p->ok && k < p->series_n[m]; k++) {
            const struct scrape_counter_series *x = &p->series[m][k];
            if (model && (!x->model || strcmp(x->model, model) != 0))
                continue;
            size_t j = 0;
            while (j < n && strcmp(names[j], x->name) != 0)
                j++;
            if (j < n)
                continue;
            if (n == cap) {
                cap = cap ? cap * 2 : 8;
                names = ll_realloc(names, cap * sizeof *names);
            }
            names[n++] = x->name;
        }
    }
    double *prev = ll_calloc(n ? n : 1, sizeof *prev);
    for (size_t j = 0; j < n; j++)
        if (!series_value(&s->pts[a], m, names[j], &prev[j]))
            prev[j] = 0;
    size_t last = a;
    for (size_t i = a + 1; i <= b; i++) {
        const struct scrape_point *p = &s->pts[i];
        if (!p->ok || !p->present[m])
            continue;
        /* A restart: every set counts from 0 again, those p lacks too. */
        int restart = restarted(&s->pts[last], p), reset = restart;
        last = i;
        for (size_t j = 0; j < n; j++) {
            double v;
            if (!series_value(p, m, names[j], &v)) {
                if (restart)
                    prev[j] = 0;
                continue;
            }
            double d = v - prev[j];
            if (d < 0 || restart) {
                d = v;
                reset = 1;
            }
            c->delta += d;
            prev[j] = v;
        }
        c->resets += (uint32_t)reset;
    }
    free(prev);
    free(names);
}

/* Increase of meaning m from point a to point b, counting resets. Walks
 * every ok point in between that has the meaning: label set by label set
 * where the points kept them apart, else (a counter of more than
 * SCRAPE_MAX_SERIES sets, a line written before they were kept, the
 * GPUs' energy) their sums. */
static void counter_over(const struct scrape_series *s, size_t a, size_t b, enum engine_meaning m,
                         struct scrape_counter *c, struct scrape_join *out)
{
    memset(c, 0, sizeof *c);
    const struct scrape_point *pa = &s->pts[a], *pb = &s->pts[b];
    if (!pb->present[m] ||
        (!pa->present[m] && (m == ENGINE_M_GPU_ENERGY || !absent_is_zero(pa, pb))))
        return;
    /* The GPUs' energy is a sum over the GPUs of each scrape: when the set
     * changed inside the span (a GPU fell off the bus, or came back), the
     * sums do not compare and the counter says nothing (the energy then
     * comes from the power series, docs/server-metrics.md). */
    if (m == ENGINE_M_GPU_ENERGY)
        for (size_t i = a + 1; i <= b; i++)
            if (s->pts[i].ok && s->pts[i].present[m] && s->pts[i].gpus != s->pts[a].gpus)
                return;
    c->present = 1;
    if (engines_meaning_is_counter(m) && series_kept(s, a, b, m)) {
        counter_by_series(s, a, b, m, model_pick(s, a, b, m, out), c);
        return;
    }
    double prev = pa->present[m] ? pa->value[m] : 0;
    size_t last = a;
    for (size_t i = a + 1; i <= b; i++) {
        const struct scrape_point *p = &s->pts[i];
        if (!p->ok || !p->present[m])
            continue;
        double d = p->value[m] - prev;
        int restart = restarted(&s->pts[last], p);
        last = i;
        if (d < 0 || restart) {
            /* Several GPUs' energy falls when one GPU's counter restarts
             * (its exporter or driver did): the sum's new value holds every
             * other GPU's whole count (one of two 100 W GPUs reset read
             * 1 MJ over 4 s). Which GPU, and by how much, the sums cannot
             * say: the counter says nothing, and the energy comes from the
             * power series. One GPU's sum is that GPU's counter. */
            if (m == ENGINE_M_GPU_ENERGY && p->gpus > 1) {
                memset(c, 0, sizeof *c);
                return;
            }
            d = p->value[m];
            c->resets++;
        }
        c->delta += d;
        prev = p->value[m];
    }
}

/* Copy p's TTFT histogram into *h. Returns 0, or LL_E_RANGE (h then
 * empty) for a point with more than PROM_HIST_MAX_BUCKETS buckets, which
 * no scrape makes and scrape_line_parse refuses: a guard, so that a point
 * built some other way cannot write past h. */
static int point_hist(const struct scrape_point *p, struct prom_histogram *h)
{
    memset(h, 0, sizeof *h);
    if (p->ttft_n > PROM_HIST_MAX_BUCKETS)
        return LL_E_RANGE;
    if (!p->ttft_n)
        return 0; /* a baseline without the histogram: all zeros */
    h->n_buckets = p->ttft_n;
    memcpy(h->le, p->ttft_le, p->ttft_n * sizeof(double));
    memcpy(h->count, p->ttft_count, p->ttft_n * sizeof(double));
    h->sum = p->ttft_sum_s;
    h->total = p->ttft_total;
    return 0;
}

static int same_bounds(const struct prom_histogram *a, const struct prom_histogram *b)
{
    if (a->n_buckets != b->n_buckets)
        return 0;
    for (size_t i = 0; i < a->n_buckets; i++) {
        if (a->le[i] != b->le[i])
            return 0;
    }
    return 1;
}

/* The bucket (lo, hi] that holds rank q * N, by the rule
 * prom_histogram_quantile follows (running maximum of the counts). */
static void quantile_bucket(const struct prom_histogram *h, double q, double *lo, double *hi)
{
    size_t n = h->n_buckets;
    double run = 0, total = 0;
    for (size_t i = 0; i < n; i++)
        total = h->count[i] > total ? h->count[i] : total;
    double rank = q * total;
    for (size_t i = 0; i < n; i++) {
        run = h->count[i] > run ? h->count[i] : run;
        if (run >= rank) {
            *hi = h->le[i];
            *lo = i == 0 ? (h->le[0] <= 0 ? h->le[0] : 0) : h->le[i - 1];
            return;
        }
    }
    *lo = n ? h->le[n - 1] : 0;
    *hi = INFINITY;
}

/* Sum the TTFT histogram deltas over consecutive ok points from a to b.
 * A histogram a lacks (absent_is_zero) starts from all zeros, its bounds
 * those of the first point that has it. */
static void ttft_over(const struct scrape_series *s, size_t a, size_t b, struct scrape_join *out)
{
    if (!s->pts[b].ttft_n || (!s->pts[a].ttft_n && !absent_is_zero(&s->pts[a], &s->pts[b])))
        return;
    struct prom_histogram *acc = ll_calloc(3, sizeof *acc);
    struct prom_histogram *prev = acc + 1, *cur = acc + 2;
    if (point_hist(&s->pts[a], prev) != 0) {
        free(acc);
        return;
    }
    acc->n_buckets = prev->n_buckets;
    memcpy(acc->le, prev->le, prev->n_buckets * sizeof(double));
    size_t last = a;
    for (size_t i = a + 1; i <= b; i++) {
        const struct scrape_point *p = &s->pts[i];
        if (!p->ok || !p->ttft_n || point_hist(p, cur) != 0)
            continue;
        int restart = restarted(&s->pts[last], p);
        last = i;
        if (!acc->n_buckets) {
            acc->n_buckets = cur->n_buckets;
            memcpy(acc->le, cur->le, cur->n_buckets * sizeof(double));
        }
        struct prom_histogram d;
        int rc = restart ? LL_E_RANGE : prom_histogram_delta(cur, prev, &d);
        if (rc == LL_E_RANGE)
            d = *cur; /* a reset: what the server counted since it restarted */
        else if (rc != 0)
            memset(&d, 0, sizeof d);
        if (d.n_buckets && same_bounds(&d, acc)) {
            for (size_t k = 0; k < acc->n_buckets; k++)
                acc->count[k] += d.count[k];
            acc->sum += d.sum;
            acc->total += d.total;
        }
        *prev = *cur;
    }
    out->ttft_present = 1;
    size_t top = acc->n_buckets ? acc->n_buckets - 1 : 0;
    out->ttft_count = acc->n_buckets ? acc->count[top] : 0;
    if (out->ttft_count > 0 && prom_histogram_quantile(acc, 0.5, &out->ttft_p50_s) == 0 &&
        prom_histogram_quantile(acc, 0.99, &out->ttft_p99_s) == 0) {
        out->ttft_quantiles = 1;
        quantile_bucket(acc, 0.5, &out->ttft_p50_lo_s, &out->ttft_p50_hi_s);
        quantile_bucket(acc, 0.99, &out->ttft_p99_lo_s, &out->ttft_p99_hi_s);
    }
    free(acc);
}

/* The power integrated from point a to point b by the trapezoid rule
 * between consecutive ok points that had it; the points in between that
 * failed or lacked power are counted as gaps and bridged. */
static void power_over(const struct scrape_series *s, size_t a, size_t b, struct scrape_join *out)
{
    size_t prev = SIZE_MAX;
    for (size_t i = a; i <= b; i++) {
        const struct scrape_point *p = &s->pts[i];
        if (!p->ok || !p->present[ENGINE_M_GPU_POWER]) {
            if (i > a && i < b)
                out->power_gaps++;
            continue;
        }
        if (prev != SIZE_MAX) {
            const struct scrape_point *q = &s->pts[prev];
            double dt_s = (double)(point_time(p) - point_time(q)) / 1e9;
            out->power_integral_j +=
                (q->value[ENGINE_M_GPU_POWER] + p->value[ENGINE_M_GPU_POWER]) / 2 * dt_s;
            out->power_s += dt_s;
            if (!out->power_integral_present)
                out->power_from_abs_ns = point_time(q);
            out->power_to_abs_ns = point_time(p);
            out->power_integral_present = 1;
        }
        prev = i;
    }
}

int scrape_series_join(const struct scrape_series *s, uint64_t t0_abs_ns, uint64_t t1_abs_ns,
                       enum scrape_span span, struct scrape_join *out)
{
    if (!out)
        return LL_E_INVAL;
    memset(out, 0, sizeof *out);
    out->kv_capacity_tokens = NAN;
    if (!s || t1_abs_ns < t0_abs_ns || (span != SCRAPE_SPAN_OUTER && span != SCRAPE_SPAN_INNER))
        return LL_E_INVAL;
    out->window_from_abs_ns = t0_abs_ns;
    out->window_to_abs_ns = t1_abs_ns;
    if (s->n >= 2 && point_time(&s->pts[s->n - 1]) > point_time(&s->pts[0]))
        out->step_ns = (point_time(&s->pts[s->n - 1]) - point_time(&s->pts[0])) / (s->n - 1);

    /* Gauges, and the first and last ok points inside the window. */
    size_t first_in = SIZE_MAX, last_in = SIZE_MAX;
    size_t before = SIZE_MAX, after = SIZE_MAX; /* last ok <= t0, first ok >= t1 */
    for (size_t i = 0; i < s->n; i++) {
        const struct scrape_point *p = &s->pts[i];
        uint64_t t = point_time(p);
        if (p->ok && t <= t0_abs_ns)
            before = i;
        if (p->ok && t >= t1_abs_ns && after == SIZE_MAX)
            after = i;
        if (t < t0_abs_ns || t > t1_abs_ns)
            continue;
        out->scrapes++;
        if (!p->ok) {
            out->failed++;
            continue;
        }
        out->ok++;
        if (first_in == SIZE_MAX)
            first_in = i;
        last_in = i;
        out->engine = p->engine;
        gauge_add(&out->waiting, p, ENGINE_M_WAITING);
        gauge_add(&out->running, p, ENGINE_M_RUNNING);
        gauge_add(&out->kv_usage, p, ENGINE_M_KV_USAGE);
        gauge_add(&out->gpu_power, p, ENGINE_M_GPU_POWER);
        gauge_add(&out->gpu_util, p, ENGINE_M_GPU_UTIL);
        gauge_add(&out->gpu_mem_used, p, ENGINE_M_GPU_MEM_USED);
        gauge_add(&out->gpu_sm_clock, p, ENGINE_M_GPU_SM_CLOCK);
        gauge_add(&out->gpu_gr_active, p, ENGINE_M_GPU_GR_ACTIVE);
        out->gpus = LL_MAX(out->gpus, p->gpus);
        if (p->kv_capacity_tokens > 0) /* NAN (or a zeroed point): not exported */
            out->kv_capacity_tokens = p->kv_capacity_tokens;
    }
    gauge_finish(&out->waiting);
    gauge_finish(&out->running);
    gauge_finish(&out->kv_usage);
    gauge_finish(&out->gpu_power);
    gauge_finish(&out->gpu_util);
    gauge_finish(&out->gpu_mem_used);
    gauge_finish(&out->gpu_sm_clock);
    gauge_finish(&out->gpu_gr_active);

    size_t a, b;
    if (span == SCRAPE_SPAN_OUTER) {
        a = before != SIZE_MAX ? before : first_in;
        b = after != SIZE_MAX ? after : last_in;
    } else {
        a = first_in;
        b = last_in;
    }
    if (a == SIZE_MAX || b == SIZE_MAX || a >= b)
        return out->ok ? 0 : LL_E_NOTFOUND;
    if (out->engine == ENGINE_UNKNOWN)
        out->engine = s->pts[b].engine;
    out->span_from_abs_ns = point_time(&s->pts[a]);
    out->span_to_abs_ns = point_time(&s->pts[b]);
    if (s->model)
        snprintf(out->model, sizeof out->model, "%s", s->model);
    restarts_over(s, a, b, out);
    counter_over(s, a, b, ENGINE_M_PREEMPTIONS, &out->preemptions, out);
    counter_over(s, a, b, ENGINE_M_PROMPT_TOKENS, &out->prompt_tokens, out);
    counter_over(s, a, b, ENGINE_M_GENERATION_TOKENS, &out->generation_tokens, out);
    counter_over(s, a, b, ENGINE_M_REQUEST_SUCCESS, &out->request_success, out);
    ttft_over(s, a, b, out);
    counter_over(s, a, b, ENGINE_M_GPU_ENERGY, &out->gpu_energy, out);
    power_over(s, a, b, out);
    return 0;
}

static const char *fmt_s(double v_s, char *buf, size_t len)
{
    if (!isfinite(v_s) || v_s < 0) {
        snprintf(buf, len, "-");
        return buf;
    }
    return ll_fmt_duration((uint64_t)(v_s * 1e9 + 0.5), buf, len);
}

static void print_gauge(FILE *f, const char *name, const struct scrape_join *j,
                        const struct scrape_gauge *g, double scale, const char *unit)
{
    if (!g->present) {
        /* With ok scrapes in the window the engine has no such metric;
         * with none (a run that sent nothing ends at once), it may well. */
        fprintf(f, "  %-20s %s\n", name, summary_gauge_absent(j->ok));
        return;
    }
    fprintf(f, "  %-20s mean %.2f%s  max %.2f%s\n", name, g->mean * scale, unit, g->max * scale,
            unit);
}

double scrape_client_prompt(const struct scrape_join *j, const struct scrape_client *c,
                            int *less_cached)
{
    *less_cached = 0;
    if (c == NULL || !isfinite(c->prompt_tokens))
        return NAN;
    if (!engines_prompt_excludes_cached(j->engine))
        return c->prompt_tokens;
    *less_cached = 1;
    return c->prompt_tokens - (isfinite(c->cached_tokens) ? c->cached_tokens : 0);
}

/* One counter's line: the server's increase and, when there is one, the
 * client's own count of the same thing, each named ("server 16180, client
 * sent 23137"), then their ratio, or, when the server's did not move at
 * all, that it may not count them. client_what says what the client
 * counted ("sent", "received", "ok"). */
static void print_counter(FILE *f, const char *name, const struct scrape_counter *c,
                          const char *client_what, double client)
{
    if (!c->present)
        return;
    if (isfinite(client)) {
        fprintf(f, "  %-20s server %.0f, client %s %.0f", name, c->delta, client_what, client);
        /* A counter that never moved while the client counted some: the
         * engine does not count these (llama.cpp's prompt tokens of
         * embeddings), not a ratio of 0. */
        if (client > 0 && c->delta == 0)
            fprintf(f, " (the server's counter did not move: it may not count these)");
        else if (client > 0)
            fprintf(f, " (server/client %.3f)", c->delta / client);
    } else {
        fprintf(f, "  %-20s server %.0f", name, c->delta);
    }
    if (c->resets)
        fprintf(f, "   (%u counter reset%s: a lower bound)", c->resets, c->resets == 1 ? "" : "s");
    fputc('\n', f);
}

/* Seconds from the origin to t (CLOCK_MONOTONIC); t itself, in s, when
 * the origin is later or unknown. */
static double since_origin_s(uint64_t t_abs_ns, uint64_t origin_abs_ns)
{
    return (double)(t_abs_ns >= origin_abs_ns ? t_abs_ns - origin_abs_ns : t_abs_ns) / 1e9;
}

/* Any counter of the join counted across a reset. */
static int any_reset(const struct scrape_join *j)
{
    return j->preemptions.resets || j->prompt_tokens.resets || j->generation_tokens.resets ||
           j->request_success.resets;
}

/* Under the counters: the restart process_start_time_seconds showed, and
 * when a counter was counted across a reset, why its figure is a lower
 * bound (SCRAPE_LOWER_BOUND_NOTE). */
static void print_restarts(FILE *f, const struct scrape_join *j, uint64_t origin_abs_ns)
{
    if (j->restarts)
        fprintf(f,
                "  %-20s server restarted between scrapes at +%.1f s and +%.1f s "
                "(process_start_time_seconds changed; %u restart%s): its counters count from 0 "
                "there\n",
                "restart", since_origin_s(j->restart_from_abs_ns, origin_abs_ns),
                since_origin_s(j->restart_to_abs_ns, origin_abs_ns), j->restarts,
                j->restarts == 1 ? "" : "s");
    if (any_reset(j))
        fprintf(f, "  %-20s %s\n", "lower bound", SCRAPE_LOWER_BOUND_NOTE);
}

/* Under the token lines, when requests that had begun their output did
 * not end ok (cancelled, cut short): the server took their prompts, which
 * the client's prompt figure leaves out (it is the ok requests' usage,
 * and no usage came back for these), and the client counts the tokens
 * they received, which an engine that counts a request's output when it
 * finishes does not. Against llama-server, 13 of 23 requests cancelled
 * after 10 tokens read prompt server/client 2.371 and generation 0.958
 * with nothing to say why: llama.cpp's prompt counter held the 13
 * prompts, its generation counter exactly the 10 finished requests' 3000
 * tokens, without the 130 the cancelled ones received. */
static void print_failed_started(FILE *f, const struct scrape_join *j,
                                 const struct scrape_client *c)
{
    if (c == NULL || !(c->failed_started > 0) ||
        (!j->prompt_tokens.present && !j->generation_tokens.present))
        return;
    fprintf(f,
            "  %-20s %.0f requests, cancelled or cut short after their first token: their\n"
            "%22s prompts are in the server's prompt count, not the client's (ok requests'\n"
            "%22s usage); the %.0f tokens they received are in the client's generation count,\n"
            "%22s not in an engine's that counts output as a request finishes (llama.cpp)\n",
            "not ok, begun", c->failed_started, "", "",
            isfinite(c->failed_output_tokens) ? c->failed_output_tokens : 0, "");
}

/* What a scraper says of itself, for the printing and the JSON. */
static struct scrape_source source_of(const struct scraper *s)
{
    struct scrape_source src = {scraper_url(s), 0, 0, scraper_origin_ns(s)};
    scraper_counts(s, &src.scrapes, &src.failed);
    return src;
}

void scrape_join_print(FILE *f, const struct scrape_join *j, int join_rc,
                       const struct scrape_client *c, const struct scraper *s)
{
    struct scrape_source src = source_of(s);
    scrape_join_print_source(f, j, join_rc, c, &src);
}

void scrape_join_print_source(FILE *f, const struct scrape_join *j, int join_rc,
                              const struct scrape_client *c, const struct scrape_source *src)
{
    char shown[512];
    fprintf(f, "server metrics (%s): %llu scrapes, %llu failed (gaps)\n",
            ll_shown(src->url, shown, sizeof shown), (unsigned long long)src->scrapes,
            (unsigned long long)src->failed);
    if (join_rc != 0) {
        fprintf(f, "  no usable scrape over the run\n");
        return;
    }
    fprintf(f, "  engine               %s\n", engines_kind_name(j->engine));
    if (j->model[0] && j->model_named && !j->model_matched)
        fprintf(f, "  %-20s no counter series of model \"%s\": %s\n", "model",
                ll_shown(j->model, shown, sizeof shown),
                j->model_default ? "the engine's default model's counted"
                                 : "every model's on the server summed");
    print_gauge(f, "queue depth", j, &j->waiting, 1, "");
    print_gauge(f, "running", j, &j->running, 1, "");
    print_gauge(f, "KV-cache usage", j, &j->kv_usage, 100, "%");
    print_counter(f, "preemptions", &j->preemptions, NULL, NAN);
    int less_cached;
    double prompt = scrape_client_prompt(j, c, &less_cached);
    print_counter(f, less_cached ? "prompt tokens (less cached)" : "prompt tokens",
                  &j->prompt_tokens, less_cached ? "sent less cached" : "sent", prompt);
    print_counter(f, "generation tokens", &j->generation_tokens, "received",
                  c ? c->output_tokens : NAN);
    print_counter(f, "requests finished", &j->request_success, "ok", c ? c->completed_ok : NAN);
    print_restarts(f, j, src->origin_abs_ns);
    print_failed_started(f, j, c);
    if (j->ttft_quantiles) {
        char a[16], b[16], ca[16], cb[16];
        fprintf(f, "  %-20s p50 %s  p99 %s%s   client (from sent) p50 %s  p99 %s\n",
                "TTFT (server)", fmt_s(j->ttft_p50_s, a, sizeof a),
                isinf(j->ttft_p99_hi_s) ? ">" : "", fmt_s(j->ttft_p99_s, b, sizeof b),
                fmt_s(c ? c->ttft_sent_p50_s : NAN, ca, sizeof ca),
                fmt_s(c ? c->ttft_sent_p99_s : NAN, cb, sizeof cb));
        fprintf(f, "  %-20s p50 in (%g, %g] s, p99 in (%g, %g] s\n", "  bucket bounds",
                j->ttft_p50_lo_s, j->ttft_p50_hi_s, j->ttft_p99_lo_s, j->ttft_p99_hi_s);
    }
}

static json_t *gauge_json(const struct scrape_gauge *g)
{
    if (!g->present)
        return json_null();
    json_t *o = json_object();
    json_object_set_new(o, "mean", scrape_json_num(g->mean));
    json_object_set_new(o, "max", scrape_json_num(g->max));
    json_object_set_new(o, "scrapes", json_integer((json_int_t)g->n));
    return o;
}

static json_t *counter_json(const struct scrape_counter *c, double client)
{
    if (!c->present)
        return json_null();
    json_t *o = json_object();
    json_object_set_new(o, "delta", scrape_json_count(c->delta));
    json_object_set_new(o, "resets", json_integer(c->resets));
    /* Counted across a reset: what the server counted just before the
     * restart is lost (SCRAPE_LOWER_BOUND_NOTE). */
    json_object_set_new(o, "lower_bound", json_boolean(c->resets > 0));
    if (isfinite(client))
        json_object_set_new(o, "client", scrape_json_count(client));
    return o;
}

json_t *scrape_join_json(const struct scrape_join *j, int join_rc, const struct scrape_client *c,
                         const struct scraper *s)
{
    struct scrape_source src = source_of(s);
    return scrape_join_json_source(j, join_rc, c, &src);
}

json_t *scrape_join_json_source(const struct scrape_join *j, int join_rc,
                                const struct scrape_client *c, const struct scrape_source *src)
{
    json_t *o = json_object();
    json_object_set_new(o, "url", json_string(src->url));
    json_object_set_new(o, "scrapes", json_integer((json_int_t)src->scrapes));
    json_object_set_new(o, "failed", json_integer((json_int_t)src->failed));
    json_object_set_new(o, "origin_monotonic_ns", json_integer((json_int_t)src->origin_abs_ns));
    if (join_rc != 0)
        return o;
    json_object_set_new(o, "engine", json_string(engines_kind_name(j->engine)));
    json_object_set_new(o, "window_scrapes", json_integer((json_int_t)j->scrapes));
    json_object_set_new(o, "window_failed", json_integer((json_int_t)j->failed));
    json_object_set_new(o, "span_from_monotonic_ns", json_integer((json_int_t)j->span_from_abs_ns));
    json_object_set_new(o, "span_to_monotonic_ns", json_integer((json_int_t)j->span_to_abs_ns));
    if (j->model[0]) {
        /* The run's model (a merge joins with it again), and whether the
         * counters' series named it (null: they named no model). */
        json_object_set_new(o, "model", json_string(j->model));
        json_object_set_new(o, "model_matched",
                            j->model_named ? json_boolean(j->model_matched) : json_null());
    }
    json_object_set_new(o, "waiting", gauge_json(&j->waiting));
    json_object_set_new(o, "running", gauge_json(&j->running));
    json_object_set_new(o, "kv_usage", gauge_json(&j->kv_usage));
    json_object_set_new(o, "preemptions", counter_json(&j->preemptions, NAN));
    int less_cached;
    json_t *pt = counter_json(&j->prompt_tokens, scrape_client_prompt(j, c, &less_cached));
    if (json_is_object(pt)) {
        json_object_set_new(pt, "excludes_cached", json_boolean(less_cached));
        if (less_cached && isfinite(c->cached_tokens))
            json_object_set_new(pt, "client_cached", scrape_json_count(c->cached_tokens));
    }
    /* The requests not ok that had begun (print_failed_started): how many,
     * beside the prompt count that leaves them out, and the tokens they
     * received, inside the client's generation count. */
    int begun = c && c->failed_started > 0;
    if (begun && json_is_object(pt))
        json_object_set_new(pt, "client_not_ok_begun", scrape_json_count(c->failed_started));
    json_object_set_new(o, "prompt_tokens", pt);
    json_t *gt = counter_json(&j->generation_tokens, c ? c->output_tokens : NAN);
    if (begun && json_is_object(gt) && isfinite(c->failed_output_tokens))
        json_object_set_new(gt, "client_not_ok_tokens", scrape_json_count(c->failed_output_tokens));
    json_object_set_new(o, "generation_tokens", gt);
    json_object_set_new(o, "request_success",
                        counter_json(&j->request_success, c ? c->completed_ok : NAN));
    json_object_set_new(o, "restarts", json_integer(j->restarts));
    if (j->restarts)
        json_object_set_new(o, "restart_between_s",
                            json_pack("[f,f]",
                                      since_origin_s(j->restart_from_abs_ns, src->origin_abs_ns),
                                      since_origin_s(j->restart_to_abs_ns, src->origin_abs_ns)));
    if (any_reset(j))
        json_object_set_new(o, "lower_bound_note", json_string(SCRAPE_LOWER_BOUND_NOTE));
    if (j->ttft_present) {
        json_t *t = json_object();
        json_object_set_new(t, "count", scrape_json_count(j->ttft_count));
        if (j->ttft_quantiles) {
            json_object_set_new(t, "p50_s", scrape_json_num(j->ttft_p50_s));
            json_object_set_new(t, "p50_bucket_s",
                                json_pack("[o,o]", scrape_json_num(j->ttft_p50_lo_s),
                                          scrape_json_num(j->ttft_p50_hi_s)));
            json_object_set_new(t, "p99_s", scrape_json_num(j->ttft_p99_s));
            json_object_set_new(t, "p99_bucket_s",
                                json_pack("[o,o]", scrape_json_num(j->ttft_p99_lo_s),
                                          scrape_json_num(j->ttft_p99_hi_s)));
            json_object_set_new(t, "p99_is_lower_bound", json_boolean(isinf(j->ttft_p99_hi_s)));
        }
        if (c && isfinite(c->ttft_sent_p50_s)) {
            json_object_set_new(t, "client_from_sent_p50_s", scrape_json_num(c->ttft_sent_p50_s));
            json_object_set_new(t, "client_from_sent_p99_s", scrape_json_num(c->ttft_sent_p99_s));
        }
        json_object_set_new(o, "ttft", t);
    } else {
        json_object_set_new(o, "ttft", json_null());
    }
    return o;
}
