/* promsource.c: --prometheus, a scraper fed by a Prometheus HTTP API's
 * answers. See promsource.h; the query and the answer are promapi.c's.
 *
 * One thread of ours asks (never a load worker), with its own fetcher and
 * the --prometheus-header lines as its only request headers. Each round is
 * one point of the scraper (scrape_int.h): the aggregate's values, with
 * the replicas' own figures and the staleness added to its line. */
#include "metrics/promsource.h"

#include <curl/curl.h>
#include <errno.h>
#include <jansson.h>
#include <math.h>
#include <poll.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "http/fetch.h"
#include "metrics/engines.h"
#include "metrics/promapi.h"
#include "metrics/scrape_int.h"
#include "util/strbuf.h"
#include "util/util.h"

/* A query that takes longer than this is a gap (as a direct scrape's). */
#define PROMSOURCE_TIMEOUT_NS (2 * LL_NS_PER_SEC)
/* An answer larger than this is a gap. */
#define PROMSOURCE_MAX_BODY_BYTES (64u << 20)
/* The longest wait for Prometheus's scrape after the run's end. */
#define PROMSOURCE_END_WAIT_NS (10 * LL_NS_PER_SEC)
/* An end's wait at least this long says so on stderr (Ctrl-C ends it). */
#define PROMSOURCE_NOTE_WAIT_NS (2 * LL_NS_PER_SEC)
/* No answer holds a sample older than its query's range: a good point
 * asked at t is dated no earlier than t less this. */
#define PROMSOURCE_WINDOW_NS ((uint64_t)PROMAPI_WINDOW_S * LL_NS_PER_SEC)

/* One replica's own series (the by-label's value). */
struct replica {
    char *name;
    struct scrape_series series;
};

/* A failed round not kept yet: its line is dated once the next good
 * point's data time is known (see hold_failure). */
struct held {
    uint64_t asked_ns; /* CLOCK_MONOTONIC when the question was asked */
    json_t *extra;     /* the line's members, owned */
    char err[256];     /* why it failed */
};

struct promsource {
    struct scraper *s; /* borrowed: the scraper owns the source */
    char *base;        /* --prometheus, owned */
    char *query;       /* the PromQL, owned */
    char by[128];      /* the label replicas are told apart by */
    int by_fallback;   /* 1: "pod", or "instance" when no series has a pod */
    int gpu, quiet, quiet_notes, warned;
    uint64_t interval_ns;
    struct fetcher *fetch;
    struct fetch_opts opts;
    struct fetch_response resp;
    struct curl_slist *headers; /* owned; never printed */
    int cancel_fd;
    double last_interval_s; /* Prometheus's scrape interval as last seen; NAN */
    uint64_t last_kept_ns;  /* the last line's time (a good one's: its data's) */
    struct held *held;      /* failed rounds waiting for a date, n_held, in order */
    size_t n_held;
    double last_data_wall_s;  /* the last ok answer's data time, Unix s; 0: none */
    double max_age_s;         /* the largest prom_age_s of an ok answer */
    pthread_mutex_t rep_lock; /* guards the replicas' series */
    struct replica *reps;     /* n_reps of them, in order of first answer */
    size_t n_reps;
    int ungrouped;     /* 1: an answer had a series without the by-label (or
                               * more replicas than kept): only the aggregate is whole */
    char by_used[128]; /* the label the replicas were last told apart by */

    pthread_t th;
    int thread_started, stopped;
    pthread_mutex_t lock; /* guards stop */
    pthread_cond_t wake;
    int stop;
};

/* The names the query asks for: every name of the engine map's rows (all
 * engines but DCGM, or DCGM's alone), a TTFT family's three samples, and
 * vLLM's cache_config_info (the KV capacity). Appended to out. */
static void query_names(int gpu, struct strbuf *out, const char *inner)
{
    size_t n_rows, n = 0;
    const struct engine_metric *rows = engines_table(&n_rows);
    const char **names = ll_calloc(3 * n_rows + 2, sizeof *names);
    char **owned = ll_calloc(3 * n_rows + 2, sizeof *owned);
    size_t n_owned = 0;
    for (size_t i = 0; i < n_rows; i++) {
        const struct engine_metric *r = &rows[i];
        if ((r->engine == ENGINE_DCGM) != (gpu != 0))
            continue;
        if (r->meaning == ENGINE_M_TTFT) {
            static const char *const suf[] = {"_bucket", "_sum", "_count"};
            for (size_t k = 0; k < 3; k++) {
                size_t len = strlen(r->name) + strlen(suf[k]) + 1;
                char *x = ll_malloc(len);
                snprintf(x, len, "%s%s", r->name, suf[k]);
                owned[n_owned++] = x;
                names[n++] = x;
            }
        } else {
            names[n++] = r->name;
        }
    }
    if (!gpu)
        names[n++] = "vllm:cache_config_info";
    /* The table lists a name once per meaning; a repeat is harmless in a
     * regex but not worth sending. */
    size_t m = 0;
    for (size_t i = 0; i < n; i++) {
        size_t k = 0;
        while (k < m && strcmp(names[k], names[i]) != 0)
            k++;
        if (k == m)
            names[m++] = names[i];
    }
    promapi_query(names, m, inner, out);
    for (size_t i = 0; i < n_owned; i++)
        free(owned[i]);
    free(owned);
    free(names);
}

static double wall_now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

/* The values of point p as an object of its meanings' keys. */
static json_t *values_json(const struct scrape_point *p, int gpu)
{
    json_t *o = json_object();
    for (int m = 0; m < ENGINE_MEANING_COUNT; m++) {
        const char *key = scrape_meaning_key((enum engine_meaning)m);
        if (key && p->present[m] && engines_meaning_is_gpu((enum engine_meaning)m) == gpu)
            json_object_set_new(o, key, scrape_json_count(p->value[m]));
    }
    if (p->ttft_n)
        json_object_set_new(o, "ttft_count", scrape_json_count(p->ttft_total));
    return o;
}

/* The members every line of this source has: its source (and "via"). */
static json_t *source_json(const struct promsource *m)
{
    json_t *extra = json_object();
    json_object_set_new(extra, "source", json_string(m->gpu ? "gpu" : "prometheus"));
    if (m->gpu)
        json_object_set_new(extra, "via", json_string("prometheus"));
    return extra;
}

/* Keep the first n held failed rounds (counted gaps, their lines
 * written), each dated at its question's time, or at upto_ns when that
 * is earlier, and never before the last line; the rest move up. */
static void keep_held(struct promsource *m, size_t n, uint64_t upto_ns)
{
    if (n == 0)
        return; /* the usual case; and held may be NULL, which memmove may not take */
    for (size_t i = 0; i < n; i++) {
        struct held *h = &m->held[i];
        struct scrape_point p;
        memset(&p, 0, sizeof p);
        p.start_abs_ns = LL_MAX(LL_MIN(h->asked_ns, upto_ns), m->last_kept_ns);
        p.end_abs_ns = p.start_abs_ns;
        m->last_kept_ns = p.start_abs_ns;
        scraper_keep(m->s, &p, h->extra, h->err);
    }
    memmove(m->held, m->held + n, (m->n_held - n) * sizeof *m->held);
    m->n_held -= n;
}

/* A failed round, asked at asked_ns (its line's members extra, owned;
 * why err). Its line has no data to be dated by, and the series' lines
 * must be in order, so it waits for the next good round and is dated at
 * that round's data time when its own question came later (an answer's
 * data is up to a Prometheus interval older than the question): dating it
 * at its question would push the next good point up to an interval past
 * its data. A failure whose question is PROMSOURCE_WINDOW_NS older than
 * this one is kept now at its own time (no later answer's data can be
 * older), so Prometheus down for an hour holds a window's rounds, no
 * more. */
static void hold_failure(struct promsource *m, uint64_t asked_ns, json_t *extra, const char *err)
{
    size_t old = 0;
    while (old < m->n_held && m->held[old].asked_ns + PROMSOURCE_WINDOW_NS <= asked_ns)
        old++;
    keep_held(m, old, UINT64_MAX);
    m->held = ll_realloc(m->held, (m->n_held + 1) * sizeof *m->held);
    struct held *h = &m->held[m->n_held++];
    h->asked_ns = asked_ns;
    h->extra = extra;
    snprintf(h->err, sizeof h->err, "%s", err);
}

/* Keep point p (taking its arrays) in replica name's own series. */
static void replica_add(struct promsource *m, const char *name, struct scrape_point *p)
{
    pthread_mutex_lock(&m->rep_lock);
    size_t k = 0;
    while (k < m->n_reps && strcmp(m->reps[k].name, name) != 0)
        k++;
    if (k == m->n_reps && k < PROMSOURCE_MAX_REPLICAS) {
        m->reps = ll_realloc(m->reps, (k + 1) * sizeof *m->reps);
        m->reps[k].name = ll_strdup(name);
        scrape_series_init(&m->reps[k].series);
        m->n_reps++;
    }
    if (k < m->n_reps) {
        struct scrape_series *sr = &m->reps[k].series;
        if (sr->n && p->start_abs_ns < sr->pts[sr->n - 1].start_abs_ns)
            p->start_abs_ns = sr->pts[sr->n - 1].start_abs_ns;
        p->end_abs_ns = p->start_abs_ns;
        scrape_series_add(sr, p);
    }
    pthread_mutex_unlock(&m->rep_lock);
}

/* The replicas' figures and the staleness, for the aggregate's line, from
 * answer a fetched for eval time t_s (CLOCK_MONOTONIC start_ns). Each
 * replica's point is dated by its own samples (one target's scrape: one
 * timestamp), so its own series is exact at both ends of a window. */
static json_t *replicas_json(struct promsource *m, const struct promapi_answer *a, double t_s,
                             uint64_t start_ns)
{
    const char *by = m->by;
    const char *groups[PROMSOURCE_MAX_REPLICAS];
    size_t n = promapi_groups(a, by, groups, PROMSOURCE_MAX_REPLICAS);
    if (n == 0 && m->by_fallback) {
        by = "instance";
        n = promapi_groups(a, by, groups, PROMSOURCE_MAX_REPLICAS);
    }
    /* A series no replica owns is in the aggregate alone: the replicas'
     * sum would leave it out (promsource_join_sum). */
    int ungrouped = n == PROMSOURCE_MAX_REPLICAS;
    for (size_t i = 0; n > 0 && i < a->n && !ungrouped; i++)
        ungrouped = *a->series[i].name && !promapi_series_label(&a->series[i], by);
    pthread_mutex_lock(&m->rep_lock);
    m->ungrouped |= ungrouped;
    if (n > 0)
        snprintf(m->by_used, sizeof m->by_used, "%s", by);
    pthread_mutex_unlock(&m->rep_lock);
    json_t *extra = source_json(m);
    double age_s, iv_s;
    promapi_staleness(a, by, NULL, t_s, &age_s, &iv_s);
    json_object_set_new(extra, "prom_time_s", json_real(t_s));
    json_object_set_new(extra, "prom_age_s", scrape_json_num(age_s));
    json_object_set_new(extra, "prom_interval_s", isnan(iv_s) ? json_null() : json_real(iv_s));
    json_object_set_new(extra, "series", json_integer((json_int_t)a->n));
    json_object_set_new(extra, "by", json_string(by));
    json_object_set_new(extra, "replica_count", json_integer((json_int_t)n));
    json_t *reps = json_object();
    double kv_sum = 0;
    size_t kv_n = 0;
    struct strbuf b;
    strbuf_init(&b);
    for (size_t i = 0; i < n; i++) {
        strbuf_clear(&b);
        promapi_render(a, by, groups[i], &b);
        struct scrape_point p;
        scrape_point_from_body_as(m->gpu ? ENGINE_DCGM : ENGINE_UNKNOWN, b.data, b.len, 0, 0, &p,
                                  NULL);
        if (p.ok) {
            json_object_set_new(reps, groups[i], values_json(&p, m->gpu));
            if (p.present[ENGINE_M_KV_USAGE]) {
                kv_sum += p.value[ENGINE_M_KV_USAGE];
                kv_n++;
            }
            double age_g;
            promapi_staleness(a, by, groups[i], t_s, &age_g, NULL);
            uint64_t age_ns = age_g > 0 && age_g < 3600 ? (uint64_t)(age_g * 1e9) : 0;
            p.start_abs_ns = start_ns - LL_MIN(age_ns, start_ns);
            replica_add(m, groups[i], &p);
        }
        scrape_point_reset(&p);
    }
    strbuf_free(&b);
    json_object_set_new(extra, "replicas", reps);
    if (kv_n)
        json_object_set_new(extra, "kv_usage_mean", json_real(kv_sum / (double)kv_n));
    return extra;
}

/* The reason of a non-200 answer: Prometheus's own when its body says. */
static void http_reason(const struct fetch_response *r, char *err, size_t errlen)
{
    char why[200] = "";
    struct promapi_answer a;
    int prc =
        r->body ? promapi_answer_parse(r->body, r->body_len, &a, why, sizeof why) : LL_E_PROTO;
    if (prc == 0)
        promapi_answer_reset(&a);
    if (prc != 0 && why[0] && strncmp(why, "the answer", 10) != 0)
        snprintf(err, errlen, "HTTP %ld (%s)", r->status, why);
    else
        snprintf(err, errlen, "HTTP %ld", r->status);
}

/* One query round: fetch, parse, keep. Returns 0 when ok, LL_E_INTR when
 * abandoned for cancel_fd, else LL_E_IO / LL_E_PROTO with err set. */
static int query_once(struct promsource *m, char *err, size_t errlen)
{
    struct strbuf url;
    strbuf_init(&url);
    double t_s = wall_now_s();
    promapi_url(m->base, m->query, t_s, &url);
    uint64_t start = ll_now_ns();
    int frc = fetch_request(m->fetch, url.data, NULL, &m->opts, &m->resp, err, errlen);
    strbuf_free(&url);
    if (frc == LL_E_INTR)
        return frc;
    uint64_t dur = ll_now_ns() - start;
    int rc = 0;
    struct promapi_answer a;
    memset(&a, 0, sizeof a);
    struct scrape_point p;
    memset(&p, 0, sizeof p);
    json_t *extra = NULL;
    double age_s = 0;
    if (frc != 0) {
        rc = frc == LL_E_FULL ? LL_E_PROTO : LL_E_IO;
        if (rc == LL_E_IO)
            scrape_slow_hint("query", dur, m->opts.timeout_ns, PROMSOURCE_TIMEOUT_NS, err, errlen);
    } else if (m->resp.status != 200) {
        err[0] = '\0';
        http_reason(&m->resp, err, errlen);
        rc = LL_E_PROTO;
    } else if (promapi_answer_parse(m->resp.body, m->resp.body_len, &a, err, errlen) != 0) {
        rc = LL_E_PROTO;
    } else if (a.n == 0) {
        snprintf(err, errlen, "the query matched no series (check --prometheus-selector)");
        rc = LL_E_PROTO;
    } else {
        /* A replaced exporter's old series lingers in the range for
         * PROMAPI_WINDOW_S: summed, and dating the point back. */
        promapi_drop_stale(&a, (double)m->interval_ns / 1e9);
        struct strbuf b;
        strbuf_init(&b);
        promapi_render(&a, m->by, NULL, &b);
        scrape_point_from_body_as(m->gpu ? ENGINE_DCGM : ENGINE_UNKNOWN, b.data, b.len, start,
                                  start, &p, NULL);
        strbuf_free(&b);
        if (!p.ok) {
            snprintf(err, errlen, "no sample in the answer could be read");
            rc = LL_E_PROTO;
        } else if (m->gpu && p.gpus == 0) {
            snprintf(err, errlen,
                     "no DCGM_FI_DEV_POWER_USAGE or "
                     "DCGM_FI_DEV_TOTAL_ENERGY_CONSUMPTION series");
            p.ok = 0;
            rc = LL_E_PROTO;
        } else {
            double iv;
            promapi_staleness(&a, m->by, NULL, t_s, &age_s, &iv);
            if (!isnan(iv))
                m->last_interval_s = iv;
            m->last_data_wall_s = t_s - age_s;
            if (age_s > m->max_age_s)
                m->max_age_s = age_s;
        }
    }
    if (rc) {
        promapi_answer_reset(&a);
        scrape_point_reset(&p);
        if (!m->warned && !m->quiet)
            ll_errorf("warning: querying Prometheus at %s: %s; %s metrics will have gaps "
                      "(counted)",
                      m->base, err, m->gpu ? "GPU" : "server");
        m->warned = 1;
        extra = source_json(m);
        json_object_set_new(extra, "query_ns", json_integer((json_int_t)dur));
        hold_failure(m, start, extra, err);
        return rc;
    }
    /* The point's time is its data's: the question's less the age of the
     * oldest latest sample, so that a join's "first scrape after the end"
     * is one whose every series was sampled after it. Never before the
     * last line (a series that went away can make the age jump back);
     * a failed round waits (hold_failure), so it never moves this date. */
    uint64_t age_ns = age_s > 0 && age_s < 3600 ? (uint64_t)(age_s * 1e9) : 0;
    uint64_t t = LL_MAX(start - LL_MIN(age_ns, start), m->last_kept_ns);
    keep_held(m, m->n_held, t);
    /* A point of no duration: the joins take a scrape's midpoint as its
     * time, and a question's own length (which varies) must not reorder
     * the data's times. The question's wall time is the line's query_ns. */
    p.start_abs_ns = t;
    p.end_abs_ns = t;
    m->last_kept_ns = t;
    extra = replicas_json(m, &a, t_s, start);
    promapi_answer_reset(&a);
    json_object_set_new(extra, "query_ns", json_integer((json_int_t)dur));
    scraper_keep(m->s, &p, extra, NULL);
    return 0;
}

/* One query round, scrape_tick_loop's callback. */
static void promsource_tick(void *ud)
{
    char err[512];
    query_once(ud, err, sizeof err);
}

static void *promsource_main(void *arg)
{
    struct promsource *m = arg;
    scrape_tick_loop(&m->lock, &m->wake, &m->stop, m->interval_ns, promsource_tick, m);
    return NULL;
}

static void join_thread(struct promsource *m)
{
    scrape_thread_end(&m->lock, &m->wake, &m->stop, m->th, &m->thread_started);
}

/* Wait wait_ns, or less when a stop signal comes (cancel_fd readable: a
 * signalfd, which stays readable while the signal is pending, for the
 * command to take). Returns 1 when one came, else 0. */
static int wait_or_cancel(const struct promsource *m, uint64_t wait_ns)
{
    uint64_t until = ll_now_ns() + wait_ns;
    for (;;) {
        uint64_t now = ll_now_ns();
        if (now >= until)
            return 0;
        int ms = (int)LL_MIN((until - now + LL_NS_PER_MS - 1) / LL_NS_PER_MS, (uint64_t)60000);
        if (m->cancel_fd < 0) {
            struct timespec ts = {.tv_sec = ms / 1000, .tv_nsec = (long)(ms % 1000) * 1000000};
            nanosleep(&ts, NULL);
            continue;
        }
        struct pollfd pf = {.fd = m->cancel_fd, .events = POLLIN};
        int r = poll(&pf, 1, ms);
        if (r > 0)
            return 1;
        if (r < 0 && errno != EINTR)
            return 0; /* cannot watch it: the wait is over early, never longer */
    }
}

/* scraper_stop_at: end the thread and ask once more (after the run's
 * end, end_abs_ns). Prometheus has the run's last tokens only once it has
 * scraped after the end: the last question waits until one of its scrape
 * intervals (as last seen, plus 200 ms) after the end, and asks again
 * while the answer's data is older than the end (until
 * PROMSOURCE_END_WAIT_NS after it), so that the run's span ends on
 * figures that hold all of it. The wait counts from the end, not from
 * now: the GPU source, stopped after the server's, finds it over and asks
 * at once (the two waits were 2 x 1.2 s in a row, +2.4 s a run). A stop
 * signal (cancel_fd) ends the wait and the questions at once: the run
 * ends on the lines it has, as a direct scrape abandoned for a signal
 * does (no line, no gap). A wait of PROMSOURCE_NOTE_WAIT_NS or more says
 * so (up to 10 s of silence at the end of a run reads as a hang). A run
 * a stop signal ended (interrupted) has no wait and asks once, at once:
 * a direct scrape's last one is taken then too, and the user who pressed
 * Ctrl-C during the load should not wait up to 10 s more for figures of
 * a run cut short (its span may miss the last interval's tokens). */
static void source_stop(void *ud, uint64_t end_abs_ns, int interrupted)
{
    struct promsource *m = ud;
    if (m->stopped)
        return;
    m->stopped = 1;
    join_thread(m);
    if (m->cancel_fd >= 0) {
        m->opts.cancel_fds = &m->cancel_fd;
        m->opts.n_cancel_fds = 1;
    }
    uint64_t now = ll_now_ns();
    end_abs_ns = LL_MIN(end_abs_ns, now);
    double stop_s = wall_now_s() - (double)(now - end_abs_ns) / 1e9;
    uint64_t deadline = end_abs_ns + PROMSOURCE_END_WAIT_NS;
    int cancelled = 0;
    if (interrupted) {
        char err[512];
        query_once(m, err, sizeof err);
        keep_held(m, m->n_held, UINT64_MAX);
        return;
    }
    if (!isnan(m->last_interval_s) && m->last_interval_s > 0) {
        double wait_s = LL_MIN(m->last_interval_s + 0.2, (double)PROMSOURCE_END_WAIT_NS / 1e9);
        uint64_t until = end_abs_ns + (uint64_t)(wait_s * 1e9);
        if (until > now && until - now >= PROMSOURCE_NOTE_WAIT_NS && !m->quiet_notes)
            ll_errorf("note: waiting %.1f s for Prometheus to scrape past the run's end (its "
                      "interval is %.1f s; Ctrl-C skips it)",
                      (double)(until - now) / 1e9, m->last_interval_s);
        if (until > now)
            cancelled = wait_or_cancel(m, until - now);
    }
    char err[512];
    /* On a busy machine Prometheus may take longer to scrape and store:
     * ask again, every 250 ms until the deadline, while the answer's data
     * is older than the stop. */
    while (!cancelled && query_once(m, err, sizeof err) == 0 && m->last_data_wall_s < stop_s &&
           ll_now_ns() + 250 * LL_NS_PER_MS < deadline)
        cancelled = wait_or_cancel(m, 250 * LL_NS_PER_MS);
    keep_held(m, m->n_held, UINT64_MAX);
}

static void source_free(void *ud)
{
    struct promsource *m = ud;
    if (!m)
        return;
    join_thread(m);
    keep_held(m, m->n_held, UINT64_MAX);
    free(m->held);
    fetch_free(m->fetch);
    fetch_response_free(&m->resp);
    curl_slist_free_all(m->headers);
    for (size_t i = 0; i < m->n_reps; i++) {
        free(m->reps[i].name);
        scrape_series_reset(&m->reps[i].series);
    }
    free(m->reps);
    pthread_mutex_destroy(&m->rep_lock);
    pthread_cond_destroy(&m->wake);
    pthread_mutex_destroy(&m->lock);
    free(m->query);
    free(m->base);
    free(m);
}

static const struct scraper_source promsource_ops = {.stop = source_stop, .free = source_free};

/* The source's start: its thread. scraper_start (which calls nothing of a
 * source) has set the origin by the time the first line is kept; a line
 * kept before that waits, as the probe's does. */
static int source_start(struct promsource *m, char *err, size_t errlen)
{
    int rc = ll_thread_start_nosig(&m->th, promsource_main, m, err, errlen);
    if (rc == 0)
        m->thread_started = 1;
    return rc;
}

struct scraper *promsource_open(const struct promsource_config *cfg, const char *dir, int truncate,
                                int cancel_fd)
{
    if (!cfg || !cfg->url)
        return NULL;
    struct scraper *s = scraper_open_as(cfg->url, cfg->gpu, cfg->interval_ns, dir, truncate, NULL);
    if (!s)
        return NULL;
    struct promsource *m = ll_calloc(1, sizeof *m);
    m->s = s;
    m->base = ll_strdup(cfg->url);
    m->gpu = cfg->gpu;
    m->quiet = cfg->quiet;
    m->quiet_notes = cfg->quiet_notes;
    m->interval_ns = cfg->interval_ns;
    m->by_fallback = cfg->by == NULL;
    m->last_interval_s = NAN;
    snprintf(m->by, sizeof m->by, "%s", cfg->by ? cfg->by : "pod");
    struct strbuf q;
    strbuf_init(&q);
    query_names(cfg->gpu, &q, cfg->inner);
    m->query = ll_strdup(q.data);
    strbuf_free(&q);
    scrape_lock_init(&m->lock, &m->wake);
    pthread_mutex_init(&m->rep_lock, NULL);
    for (size_t i = 0; i < cfg->n_headers; i++)
        m->headers = curl_slist_append(m->headers, cfg->headers[i]);
    scraper_set_source(s, &promsource_ops, m);
    m->fetch = fetch_new();
    if (!m->fetch) {
        ll_errorf("warning: --prometheus: curl_easy_init failed; going on without it");
        scraper_free(s);
        return NULL;
    }
    uint64_t t = LL_MIN(cfg->interval_ns / 10 * 8, PROMSOURCE_TIMEOUT_NS);
    m->opts.headers = m->headers;
    m->opts.timeout_ns = t;
    m->opts.connect_timeout_ns = t;
    m->opts.max_body_bytes = PROMSOURCE_MAX_BODY_BYTES;
    m->opts.accept_encoding = 1;
    m->opts.user_agent = "llmload/" LL_VERSION;
    m->opts.cacert = cfg->cacert;
    m->opts.insecure = cfg->insecure;
    m->cancel_fd = cancel_fd;
    if (cancel_fd >= 0) {
        m->opts.cancel_fds = &m->cancel_fd;
        m->opts.n_cancel_fds = 1;
    }
    char err[512];
    /* A GPU source that finds no DCGM series says so once and goes: the
     * selector names servers without GPU telemetry, which is no fault. */
    int saved_quiet = m->quiet;
    m->quiet = m->quiet || cfg->gpu;
    int rc = query_once(m, err, sizeof err);
    m->quiet = saved_quiet;
    m->opts.cancel_fds = NULL;
    m->opts.n_cancel_fds = 0;
    if (rc == LL_E_INTR || (cfg->gpu && rc != 0)) {
        if (rc != LL_E_INTR && !cfg->quiet)
            ll_errorf("note: no GPU telemetry through --prometheus (%s)", err);
        scraper_free(s);
        return NULL;
    }
    if (source_start(m, err, sizeof err) != 0) {
        ll_errorf("warning: --prometheus: %s; going on without it", err);
        scraper_free(s);
        return NULL;
    }
    return s;
}

size_t promsource_replicas_join(const struct scraper *s, uint64_t t0_abs_ns, uint64_t t1_abs_ns,
                                enum scrape_span span, struct promsource_replica *out, size_t max,
                                struct promsource_staleness *st)
{
    struct promsource *m = scraper_source_of(s, &promsource_ops);
    if (st)
        *st = (struct promsource_staleness){NAN, NAN, ""};
    if (!m)
        return 0;
    pthread_mutex_lock(&m->rep_lock);
    if (st) {
        st->interval_s = m->last_interval_s;
        st->max_age_s = m->max_age_s;
        snprintf(st->by, sizeof st->by, "%s", m->by_used[0] ? m->by_used : m->by);
    }
    size_t n = LL_MIN(m->n_reps, max);
    for (size_t i = 0; i < n; i++) {
        snprintf(out[i].name, sizeof out[i].name, "%s", m->reps[i].name);
        out[i].rc = scrape_series_join(&m->reps[i].series, t0_abs_ns, t1_abs_ns, span, &out[i].j);
    }
    pthread_mutex_unlock(&m->rep_lock);
    return n;
}

int promsource_join_sum(const struct scraper *s, uint64_t t0_abs_ns, uint64_t t1_abs_ns,
                        enum scrape_span span, struct scrape_join *j)
{
    struct promsource_replica r[PROMSOURCE_MAX_JOIN];
    size_t n =
        promsource_replicas_join(s, t0_abs_ns, t1_abs_ns, span, r, PROMSOURCE_MAX_JOIN, NULL);
    if (n == 0 || !j)
        return 0;
    /* More replicas than summed, or series of none: the aggregate stands. */
    struct promsource *m = scraper_source_of(s, &promsource_ops);
    pthread_mutex_lock(&m->rep_lock);
    int partial = m->n_reps > n || m->ungrouped;
    pthread_mutex_unlock(&m->rep_lock);
    if (partial)
        return 0;
    for (size_t i = 0; i < n; i++)
        if (r[i].rc != 0)
            return 0; /* a replica with no span: the aggregate's own figure stands */
    struct scrape_counter *agg[] = {&j->preemptions, &j->prompt_tokens, &j->generation_tokens,
                                    &j->request_success, &j->gpu_energy};
    for (size_t c = 0; c < LL_ARRAY_LEN(agg); c++) {
        size_t off = (size_t)((char *)agg[c] - (char *)j);
        double sum = 0;
        uint32_t resets = 0;
        int all = 1;
        for (size_t i = 0; i < n && all; i++) {
            const struct scrape_counter *x =
                (const struct scrape_counter *)((const char *)&r[i].j + off);
            all = x->present;
            sum += x->delta;
            resets += x->resets;
        }
        if (all && agg[c]->present) {
            agg[c]->delta = sum;
            agg[c]->resets = resets;
        }
    }
    return 1;
}
