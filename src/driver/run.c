/* run.c: driver_run's steps for one load point: start the worker
 * threads (worker.c), supervise them (progress, signals, the prompt
 * checks), merge their statistics once at the end, and cut the measured
 * window; and the schedule's pure parts (offer_src, --dry-run's dump).
 * The records writer is recwriter.c, the progress line and the live view
 * progress.c.
 *
 * Each worker owns a transport (its own epoll loop and connections), a
 * struct stats and a records writer; the only shared writes are a few
 * atomics touched once per request (the closed-loop request budget and the
 * spend guard) and the progress counters, which each worker alone writes. */
#include "driver/driver_int.h"

#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "measure/hist.h"
#include "util/rng.h"
#include "util/util.h"

/* ---- run: start ------------------------------------------------------- */

/* Set up worker i of d (zeroed memory): its statistics, counters and
 * histograms, its transport, its records writer with the writer thread
 * running, and for a closed loop its users (its k-th is global user
 * driver_global(d, i, k), each with its own think-time stream). Returns 0, or LL_E_IO with the reason in
 * err; worker_release undoes whatever was done either way. */
static int worker_setup(struct driver *d, uint32_t i, char *err, size_t errlen)
{
    const struct run_config *cfg = d->cfg;
    struct worker *w = &d->workers[i];
    w->d = d;
    w->idx = i;
    stats_init(&w->stats);
    stats_init(&w->cold);
    prefix_share_init(&w->prefix);
    progress_counters_init(&w->pc, cfg->live_cb != NULL);
    d->pcs[i] = &w->pc;
    w->ttft_h1 = hist_new();
    w->ttft_h2 = hist_new();
    w->stream = hist_new();
    if (driver_class_count(cfg)) {
        w->n_cls = driver_class_count(cfg);
        w->cls = ll_calloc(w->n_cls, sizeof *w->cls);
        for (size_t k = 0; k < w->n_cls; k++)
            stats_init(&w->cls[k]);
        w->past_cls = ll_calloc(w->n_cls, sizeof *w->past_cls);
    }
    if (cfg->transport.endpoints.n > 1) {
        w->n_eps = cfg->transport.endpoints.n;
        w->eps = ll_calloc(w->n_eps, sizeof *w->eps);
        for (size_t k = 0; k < w->n_eps; k++)
            stats_init(&w->eps[k]);
        w->past_eps = ll_calloc(w->n_eps, sizeof *w->past_eps);
    }
    struct transport_config tc = cfg->transport;
    tc.run_start_ns = d->run_start_ns;
    tc.warmup_ns = cfg->warmup_ns;
    tc.cold_requests = cfg->cold_requests;
    tc.cold_by_session = cfg->mode == LOAD_SESSIONS;
    tc.worker = i;
    w->t = transport_new(&tc, &w->stats, worker_on_done, w, err, errlen);
    if (!w->t)
        return LL_E_IO;
    if (recwriter_open(&w->rw, cfg->records_fd, err, errlen) != 0)
        return LL_E_IO;
    if (cfg->hist_fd >= 0) {
        histlog_window_init(&w->hw);
        w->hw.step = cfg->step;
        w->hw.worker = i;
        w->hw.shard = cfg->shard;
        w->hw_on = 1;
        w->stats.itl_window = w->hw.h[HISTLOG_ITL];
    }
    recwriter_start(&w->rw);
    if (cfg->mode == LOAD_CLOSED) {
        uint32_t shard_users = (uint32_t)driver_share(cfg, cfg->users);
        w->n_users = shard_users / d->n_workers + (i < shard_users % d->n_workers);
        w->users = ll_calloc(w->n_users ? w->n_users : 1, sizeof *w->users);
        due_heap_init(&w->users_due, w->n_users ? w->n_users : 1);
        for (uint32_t k = 0; k < w->n_users; k++) {
            uint64_t g = driver_global(d, i, k);
            rng_seed(&w->users[k].rng, cfg->workload.seed, DRIVER_THINK_STREAM + g);
        }
    }
    return 0;
}

/* Free n statistics and the array that holds them (NULL with n 0). */
static void stats_free_array(struct stats *a, size_t n)
{
    for (size_t k = 0; k < n; k++)
        stats_free(&a[k]);
    free(a);
}

/* Undo worker_setup (any part of it) and what the worker's run left. */
static void worker_release(struct worker *w)
{
    transport_free(w->t);
    recwriter_reset(&w->rw);
    if (w->hw_on)
        histlog_window_free(&w->hw);
    w->hw_on = 0;
    free(w->users);
    due_heap_reset(&w->users_due);
    free(w->q);
    session_set_reset(&w->sessions);
    progress_counters_reset(&w->pc);
    hist_free(w->ttft_h1);
    hist_free(w->ttft_h2);
    free(w->ttft_order);
    hist_free(w->stream);
    stats_free_array(w->cls, w->n_cls);
    stats_free_array(w->eps, w->n_eps);
    free(w->past_cls);
    free(w->past_eps);
    stats_free(&w->stats);
    stats_free(&w->cold);
    prefix_share_reset(&w->prefix);
}

/* The test hook of struct driver's due_base_ns: LLMLOAD_TEST_SEND_DELAY_NS,
 * a delay in ns (at most 1 s), else 0. */
static uint64_t test_send_delay_ns(void)
{
    const char *v = getenv("LLMLOAD_TEST_SEND_DELAY_NS");
    if (v == NULL || *v == '\0')
        return 0;
    char *end;
    unsigned long long ns = strtoull(v, &end, 10);
    return *end == '\0' && ns <= LL_NS_PER_SEC ? (uint64_t)ns : 0;
}

static int wait_start_at(struct driver *d, struct driver_result *res);

/* Start: size the run (one worker when capped, so the cap is exact; no
 * more workers than closed-loop users), zero res and allocate what it
 * owns, block SIGINT and SIGTERM (driver_run's thread takes them with
 * sigtimedwait, the workers inherit the mask), set up every worker, then
 * fix t = 0 once all of that is ready: transports and writer threads
 * take milliseconds to start (far more under AddressSanitizer), so only
 * the worker threads' own start falls in DRIVER_START_LEAD_NS. Returns 0,
 * or LL_E_IO with the reason in err; run_release undoes it either way. */
static int run_start(struct driver *d, const struct run_config *cfg, struct driver_result *res,
                     char *err, size_t errlen)
{
    d->cfg = cfg;
    d->n_workers = cfg->mode == LOAD_CAPPED ? 1 : LL_MAX(cfg->threads, 1u);
    if (cfg->mode == LOAD_CLOSED && d->n_workers > driver_share(cfg, cfg->users))
        d->n_workers = (uint32_t)LL_MAX(driver_share(cfg, cfg->users), 1u);
    d->closed_max = driver_share(cfg, cfg->max_requests);
    d->guard_total = driver_spend_bound(cfg);
    memset(res, 0, sizeof *res);
    stats_init(&res->stats);
    stats_init(&res->cold);
    res->ttft_first_half = hist_new();
    res->ttft_second_half = hist_new();
    res->stream = hist_new();
    const struct wl_file *classes = cfg->workload.classes;
    size_t n_cls = driver_class_count(cfg);
    if (n_cls) {
        res->n_classes = n_cls;
        res->class_stats = ll_calloc(n_cls, sizeof *res->class_stats);
        d->cls_slo = ll_calloc(n_cls, sizeof *d->cls_slo);
        for (size_t k = 0; k < n_cls; k++) {
            stats_init(&res->class_stats[k]);
            /* A trace's class has no SLO of its own: the run's. */
            d->cls_slo[k] = cfg->trace ? cfg->slo : *slo_or(&classes->classes[k].slo, &cfg->slo);
            d->any_slo |= slo_is_set(&d->cls_slo[k]);
        }
    }
    d->any_slo |= slo_is_set(&cfg->slo);

    if (cfg->transport.endpoints.n > 1) {
        res->n_endpoints = cfg->transport.endpoints.n;
        res->endpoint_stats = ll_calloc(res->n_endpoints, sizeof *res->endpoint_stats);
        for (size_t k = 0; k < res->n_endpoints; k++)
            stats_init(&res->endpoint_stats[k]);
    }

    sigemptyset(&d->sigs);
    sigaddset(&d->sigs, SIGINT);
    sigaddset(&d->sigs, SIGTERM);
    pthread_sigmask(SIG_BLOCK, &d->sigs, &d->old_sigs);

    d->workers = ll_calloc(d->n_workers, sizeof *d->workers);
    d->pcs = ll_calloc(d->n_workers, sizeof *d->pcs);
    d->run_start_ns = ll_now_ns() + DRIVER_START_LEAD_NS;
    res->run_start_abs_ns = d->run_start_ns;
    for (uint32_t i = 0; i < d->n_workers; i++) {
        d->made++;
        int rc = worker_setup(d, i, err, errlen);
        if (rc != 0)
            return rc;
    }
    d->run_start_ns = ll_now_ns() + DRIVER_START_LEAD_NS;
    if (cfg->start_at_unix_ns && wait_start_at(d, res))
        d->stopped_waiting = 1;
    res->run_start_abs_ns = d->run_start_ns;
    d->due_base_ns = d->run_start_ns + test_send_delay_ns();
    for (uint32_t i = 0; i < d->n_workers; i++)
        transport_set_run_start(d->workers[i].t, d->run_start_ns);
    return 0;
}

/* CLOCK_REALTIME, ns since the epoch. */
static int64_t realtime_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    return (int64_t)ts.tv_sec * (int64_t)LL_NS_PER_SEC + ts.tv_nsec;
}

/* --start-at: sleep until DRIVER_START_LEAD_NS before the wall-clock
 * instant cfg->start_at_unix_ns, in steps of at most 100 ms that take a
 * stop signal, the last 200 ms in one clock_nanosleep(CLOCK_REALTIME,
 * TIMER_ABSTIME), so the wake follows the clock as it is then (slewed or
 * stepped), not as it was when the sleep began. Then t = 0
 * (d->run_start_ns) is that instant on CLOCK_MONOTONIC, however late this
 * process got there: a late start never shifts the schedule, its first
 * arrivals are late and counted so. A wait of over a second is said on
 * stderr (unless --quiet). 1 when a stop signal came (taken). */
static int wait_start_at(struct driver *d, struct driver_result *res)
{
    const int64_t lead = (int64_t)DRIVER_START_LEAD_NS, last = 200 * (int64_t)LL_NS_PER_MS;
    int64_t at = d->cfg->start_at_unix_ns, wake = at - lead;
    int64_t ahead = wake - realtime_ns();
    if (d->cfg->progress && ahead > (int64_t)LL_NS_PER_SEC)
        ll_errorf("waiting %.1f s for --start-at", (double)ahead / 1e9);
    for (;;) {
        int64_t left = wake - realtime_ns();
        if (left <= last)
            break;
        int64_t step = LL_MIN(left - last, 100 * (int64_t)LL_NS_PER_MS);
        struct timespec ts = {.tv_sec = (time_t)(step / (int64_t)LL_NS_PER_SEC),
                              .tv_nsec = (long)(step % (int64_t)LL_NS_PER_SEC)};
        int sig = sigtimedwait(&d->sigs, NULL, &ts);
        if (sig == SIGINT || sig == SIGTERM) {
            ll_errorf("%s: stopping before the start (--start-at); nothing was sent",
                      sig == SIGINT ? "interrupt" : "terminated");
            res->interrupted = 1;
            res->stopped_in = "schedule";
            return 1;
        }
    }
    struct timespec ts = {.tv_sec = (time_t)(wake / (int64_t)LL_NS_PER_SEC),
                          .tv_nsec = (long)(wake % (int64_t)LL_NS_PER_SEC)};
    while (clock_nanosleep(CLOCK_REALTIME, TIMER_ABSTIME, &ts, NULL) == EINTR)
        ;
    /* The two clocks read together (the monotonic one between two reads
     * of the other), to map the instant onto CLOCK_MONOTONIC. */
    int64_t r0 = realtime_ns();
    uint64_t mono = ll_now_ns();
    int64_t r1 = realtime_ns();
    int64_t real = r0 + (r1 - r0) / 2;
    res->start_woke_unix_ns = real;
    res->start_late_ns = real > wake ? (uint64_t)(real - wake) : 0;
    ahead = at - real;
    if (ahead >= 0)
        d->run_start_ns = mono + (uint64_t)ahead;
    else
        d->run_start_ns = mono > (uint64_t)-ahead ? mono - (uint64_t)-ahead : 0;
    return 0;
}

/* Release what run_start set up and restore the signal mask. */
static void run_release(struct driver *d)
{
    for (uint32_t i = 0; i < d->made; i++)
        worker_release(&d->workers[i]);
    free(d->workers);
    free(d->pcs);
    free(d->cls_slo);
    pthread_sigmask(SIG_SETMASK, &d->old_sigs, NULL);
}

/* ---- run: supervise --------------------------------------------------- */

/* driver_run's own thread while the workers run: when it next samples
 * in-flight, emits the live view and prints the progress line (absolute
 * CLOCK_MONOTONIC ns, UINT64_MAX = never), and their state. */
struct supervisor {
    uint64_t sample_every_ns, next_sample_abs_ns;
    uint64_t live_every_ns, next_live_abs_ns;
    uint64_t progress_every_ns, next_progress_abs_ns;
    size_t series_cap;  /* res->series allocated, points */
    int guard_said;     /* the spend guard's stop is on stderr */
    int prompts_judged; /* the prompt check has judged (driver_prompts) */
    struct progress_line pl;
    struct live_view lv;
};

/* Set the supervisor's clocks from t = 0 and make the live view's first
 * call (all zero, before any worker runs), as run_config promises. */
static void supervisor_init(struct supervisor *sv, const struct driver *d)
{
    const struct run_config *cfg = d->cfg;
    memset(sv, 0, sizeof *sv);
    if (cfg->live_cb) {
        live_view_init(&sv->lv);
        live_emit(&sv->lv, cfg->live_cb, cfg->live_ud, d->run_start_ns, d->pcs, 0, 0);
    }
    sv->live_every_ns = cfg->live_interval_ns ? cfg->live_interval_ns : LL_NS_PER_SEC;
    sv->next_live_abs_ns = cfg->live_cb ? d->run_start_ns : UINT64_MAX;
    /* A shard offers its share of the rate and runs its share of the users.
     * The rate is the summary's offered one, a ramp's mean and bursts
     * included: the start rate said "0.0/s offered" all through a ramp
     * from 0. */
    progress_line_init(&sv->pl, d->run_start_ns, cfg->progress == 1, cfg->mode == LOAD_CLOSED,
                       (uint32_t)driver_share(cfg, cfg->users),
                       offer_rate_per_s(cfg) / (double)driver_shards(cfg));
    sv->progress_every_ns = cfg->progress_interval_ns ? cfg->progress_interval_ns : LL_NS_PER_SEC;
    sv->next_progress_abs_ns = cfg->progress ? d->run_start_ns + sv->progress_every_ns : UINT64_MAX;
    sv->sample_every_ns = cfg->sample_interval_ns ? cfg->sample_interval_ns : 100 * LL_NS_PER_MS;
    sv->next_sample_abs_ns = d->run_start_ns;
}

/* Start the worker threads. When one cannot start, the ones that did are
 * told to stop at once (they still end, and are merged, as after a second
 * Ctrl-C) and this returns LL_E_IO with the reason in err. */
static int run_launch(struct driver *d, char *err, size_t errlen)
{
    for (; d->started < d->n_workers; d->started++) {
        struct worker *w = &d->workers[d->started];
        int e = pthread_create(&w->th, NULL, worker_main, w);
        if (e) {
            snprintf(err, errlen, "pthread_create: %s", strerror(e));
            atomic_store(&d->stop_level, 2);
            return LL_E_IO;
        }
    }
    return 0;
}

/* Move a periodic deadline on by one period, or to a period from now when
 * the supervisor fell behind (it never fires twice to catch up). */
static void tick_advance(uint64_t *next_abs_ns, uint64_t every_ns, uint64_t now)
{
    *next_abs_ns += every_ns;
    if (*next_abs_ns < now)
        *next_abs_ns = now + every_ns;
}

/* Append one point of the in-flight time series (all started workers). */
static void supervise_sample(struct driver *d, struct supervisor *sv, struct driver_result *res,
                             uint64_t now)
{
    struct inflight_sample smp = {.t_ns = now - LL_MIN(now, d->run_start_ns)};
    for (uint32_t i = 0; i < d->started; i++) {
        smp.inflight += atomic_load_explicit(&d->pcs[i]->inflight, memory_order_relaxed);
        smp.done += atomic_load_explicit(&d->pcs[i]->done, memory_order_relaxed);
    }
    if (res->n_series == sv->series_cap) {
        sv->series_cap = sv->series_cap ? sv->series_cap * 2 : 256;
        res->series = ll_realloc(res->series, sv->series_cap * sizeof *res->series);
    }
    res->series[res->n_series++] = smp;
    tick_advance(&sv->next_sample_abs_ns, sv->sample_every_ns, now);
}

/* SIGINT or SIGTERM: the first stops offering and gives requests in
 * flight cfg->grace_ns, the next cancels them at once. */
static void supervise_signal(struct driver *d, int sig, struct driver_result *res)
{
    const struct run_config *cfg = d->cfg;
    int level = atomic_load(&d->stop_level) + 1;
    if (level == 1) {
        atomic_store(&d->cancel_at_abs_ns, ll_now_ns() + cfg->grace_ns);
        char g[16];
        ll_errorf("%s: stopping; in-flight requests get %s (again to stop now)",
                  sig == SIGINT ? "interrupt" : "terminated",
                  ll_fmt_duration(cfg->grace_ns, g, sizeof g));
    } else {
        ll_errorf("stopping now; in-flight requests are cancelled");
    }
    atomic_store_explicit(&d->stop_level, level, memory_order_release);
    if (!res->interrupted)
        res->stopped_in = atomic_load(&d->done_offering) == d->started ? "drain" : "load";
    res->interrupted = 1;
    for (uint32_t i = 0; i < d->started; i++)
        transport_wake(d->workers[i].t);
}

/* On stderr when it happens (the summary's "offering stopped early" line
 * comes only at the end, on stdout). */
static int say_spend_stop(const struct run_config *cfg)
{
    ll_errorf("spend guard: the next request would pass --max-tokens-total %llu; "
              "offering stopped, requests in flight finish",
              (unsigned long long)cfg->max_tokens_total);
    return 1;
}

static int all_finished(const struct driver *d)
{
    uint32_t fin = 0;
    for (uint32_t i = 0; i < d->started; i++)
        fin += (uint32_t)atomic_load_explicit(&d->workers[i].finished, memory_order_acquire);
    return fin == d->started;
}

enum summary_prompts driver_prompts(const struct run_config *cfg)
{
    /* A trace without text sends llmload's words at its lengths: checked
     * as a run's; one with text (any line) is not llmload's to judge. */
    if ((cfg->trace && replay_has_text(cfg->trace)) || cfg->workload.dataset ||
        cfg->transport.prompt_ids)
        return SUMMARY_PROMPTS_OTHER;
    return cfg->workload.calib.tokens_per_word > 0 ? SUMMARY_PROMPTS_CALIBRATED
                                                   : SUMMARY_PROMPTS_SYNTHETIC;
}

/* The prompt check (driver_prompts): judge once the first
 * SUMMARY_PROMPT_FIRST ok responses with a prompt count are in, or the
 * first SUMMARY_PROMPT_FIRST requests all failed with a 4xx, or at the end
 * (final) on what came; warn on stderr when it fails, once per process.
 * When every one of those failed with a 4xx, the status says which
 * warning: a 400, 413 or 422 the prompts' (llmload's words without a
 * calibration), a 401 or 403 a key's and a 404 or 405 the URL's
 * (summary_status_warning), whatever the prompts were. */
static void supervise_prompts(struct driver *d, struct supervisor *sv, int final)
{
    static atomic_int said;
    enum summary_prompts prompts = driver_prompts(d->cfg);
    if (sv->prompts_judged)
        return;
    uint64_t n = 0, req = 0, srv = 0, done = 0, ok = 0, k4xx = 0;
    uint64_t cause[STATUS_CAUSES] = {0};
    for (uint32_t i = 0; i < d->started; i++) {
        struct progress_counters *pc = d->pcs[i];
        n += atomic_load_explicit(&pc->usage_n, memory_order_acquire);
        req += atomic_load_explicit(&pc->usage_requested, memory_order_relaxed);
        srv += atomic_load_explicit(&pc->usage_server, memory_order_relaxed);
        done += atomic_load_explicit(&pc->done, memory_order_relaxed);
        ok += atomic_load_explicit(&pc->kind[REC_OK], memory_order_relaxed);
        k4xx += atomic_load_explicit(&pc->kind[REC_HTTP_4XX], memory_order_relaxed);
        for (size_t c = 0; c < STATUS_CAUSES; c++)
            cause[c] += atomic_load_explicit(&pc->cause4xx[c], memory_order_relaxed);
    }
    char msg[512] = "";
    int embeddings = d->cfg->transport.api == OAI_API_EMBEDDINGS;
    if (n >= SUMMARY_PROMPT_FIRST || (final && n > 0)) {
        if (prompts != SUMMARY_PROMPTS_OTHER && summary_prompt_off(req, srv))
            summary_prompt_warning(msg, sizeof msg, req, srv, n, prompts, embeddings);
    } else if (ok == 0 && k4xx == done && (done >= SUMMARY_PROMPT_FIRST || (final && done))) {
        if (cause[STATUS_CAUSE_LENGTH] == done && prompts == SUMMARY_PROMPTS_SYNTHETIC)
            summary_prompt_4xx_warning(msg, sizeof msg, done, embeddings);
        for (size_t c = 0; c < STATUS_CAUSES && !msg[0]; c++)
            if (cause[c] == done)
                summary_status_warning(msg, sizeof msg, done, (enum status_cause)c);
    } else if (!final) {
        return;
    }
    sv->prompts_judged = 1;
    if (msg[0] && atomic_exchange(&said, 1) == 0) {
        if (d->cfg->progress == 1)
            fputc('\n', stderr); /* off the progress line */
        ll_errorf("warning: %s", msg);
    }
}

/* Supervise until every started worker has finished: sample in-flight,
 * emit the live view, take the stop signals, say when the spend guard
 * stopped offering, print the progress line, each on its own clock, in
 * waits of at most 50 ms (also how fast the end is noticed). Then the
 * final progress line, the joins and the live view's final call. The
 * workers alone decide when they end. */
static void run_supervise(struct driver *d, struct supervisor *sv, struct driver_result *res)
{
    const struct run_config *cfg = d->cfg;
    while (!all_finished(d)) {
        uint64_t now = ll_now_ns();
        if (now >= sv->next_sample_abs_ns)
            supervise_sample(d, sv, res, now);
        if (now >= sv->next_live_abs_ns) {
            live_emit(&sv->lv, cfg->live_cb, cfg->live_ud, d->run_start_ns, d->pcs, d->started, 0);
            tick_advance(&sv->next_live_abs_ns, sv->live_every_ns, now);
        }
        uint64_t due =
            LL_MIN(LL_MIN(sv->next_progress_abs_ns, sv->next_sample_abs_ns), sv->next_live_abs_ns);
        uint64_t wait = LL_MIN(due > now ? due - now : 0, 50 * LL_NS_PER_MS);
        struct timespec ts = {.tv_sec = (time_t)(wait / LL_NS_PER_SEC),
                              .tv_nsec = (long)(wait % LL_NS_PER_SEC)};
        int sig = sigtimedwait(&d->sigs, NULL, &ts);
        if (sig == SIGINT || sig == SIGTERM)
            supervise_signal(d, sig, res);
        if (!sv->guard_said && atomic_load(&d->spend_stop))
            sv->guard_said = say_spend_stop(cfg);
        supervise_prompts(d, sv, 0);
        now = ll_now_ns();
        if (cfg->progress && now >= sv->next_progress_abs_ns) {
            progress_print(&sv->pl, d->pcs, d->n_workers, 0);
            tick_advance(&sv->next_progress_abs_ns, sv->progress_every_ns, now);
        }
    }
    if (!sv->guard_said && atomic_load(&d->spend_stop))
        say_spend_stop(cfg); /* the run ended before the loop looked */
    supervise_prompts(d, sv, 1);
    if (cfg->progress == 1)
        progress_print(&sv->pl, d->pcs, d->n_workers, 1);
    progress_line_reset(&sv->pl);
    for (uint32_t i = 0; i < d->started; i++)
        pthread_join(d->workers[i].th, NULL);
    if (cfg->live_cb) {
        live_emit(&sv->lv, cfg->live_cb, cfg->live_ud, d->run_start_ns, d->pcs, d->started, 1);
        live_view_reset(&sv->lv);
    }
}

/* ---- run: merge and window -------------------------------------------- */

static int sched_ttft_cmp(const void *a, const void *b)
{
    const struct sched_ttft *x = a, *y = b;
    if (x->sched_ns != y->sched_ns)
        return x->sched_ns < y->sched_ns ? -1 : 1;
    return x->ttft_ns < y->ttft_ns ? -1 : x->ttft_ns > y->ttft_ns;
}

/* The steady-state halves of a run whose count ended the offering: the
 * TTFTs of the window's ok requests, every worker's, in the order they
 * were scheduled, the first half and the rest. Halving the requests the
 * test sees, not the schedule, keeps a --warmup or --cold-start that
 * covers the schedule's first half from emptying the first. */
static void halves_by_order(struct driver *d, struct driver_result *res)
{
    size_t n = 0;
    for (uint32_t i = 0; i < d->started; i++)
        n += d->workers[i].n_ttft_order;
    struct sched_ttft *all = ll_calloc(n + 1, sizeof *all);
    size_t at = 0;
    for (uint32_t i = 0; i < d->started; i++) {
        const struct worker *w = &d->workers[i];
        if (w->n_ttft_order)
            memcpy(all + at, w->ttft_order, w->n_ttft_order * sizeof *all);
        at += w->n_ttft_order;
    }
    qsort(all, n, sizeof *all, sched_ttft_cmp);
    for (size_t k = 0; k < n; k++)
        hist_record(k < n / 2 ? res->ttft_first_half : res->ttft_second_half, all[k].ttft_ns);
    free(all);
}

/* Merge: fold each started worker's statistics, histograms and counts
 * into res, once, after the joins (no shared writes while the run goes).
 * The in-flight area and the latest record end go to d for run_window. */
static void run_merge(struct driver *d, struct driver_result *res)
{
    struct prefix_share prefix;
    prefix_share_init(&prefix);
    /* The count ended the offering before --duration: what was sent or
     * ended after --duration is in the window, and the steady-state
     * halves are by order. */
    int past = d->cfg->duration_ns && atomic_load(&d->ran_out);
    int by_count = !d->cfg->duration_ns || past;
    for (uint32_t i = 0; i < d->started; i++) {
        struct worker *w = &d->workers[i];
        stats_merge(&res->stats, &w->stats);
        stats_merge(&res->cold, &w->cold);
        if (!by_count) {
            hist_merge(res->ttft_first_half, w->ttft_h1);
            hist_merge(res->ttft_second_half, w->ttft_h2);
        }
        hist_merge(res->stream, w->stream);
        if (w->ttft_least_ns && (!res->ttft_least_ns || w->ttft_least_ns < res->ttft_least_ns))
            res->ttft_least_ns = w->ttft_least_ns;
        res->last_sched_ns = LL_MAX(res->last_sched_ns, w->last_sched_ns);
        for (size_t k = 0; k < w->n_cls; k++)
            stats_merge(&res->class_stats[k], &w->cls[k]);
        for (size_t k = 0; k < w->n_eps; k++)
            stats_merge(&res->endpoint_stats[k], &w->eps[k]);
        res->sent_in_window += w->sent_in_window;
        if (past) {
            stats_merge_window(&res->stats, &w->past);
            for (size_t k = 0; k < w->n_cls; k++)
                stats_merge_window(&res->class_stats[k], &w->past_cls[k]);
            for (size_t k = 0; k < w->n_eps; k++)
                stats_merge_window(&res->endpoint_stats[k], &w->past_eps[k]);
            res->sent_in_window += w->sent_past;
            d->infl_area += w->infl_area_past;
        }
        res->late_sends += w->late_sends;
        res->late_asleep += w->late_asleep;
        res->worker_cpu_ns += w->cpu_ns;
        res->worker_invol_switches += w->invol_switches;
        res->worker_wall_ns += w->wall_ns;
        prefix_share_merge(&prefix, &w->prefix);
        res->records_written += w->rw.written;
        res->warmup_records += w->warmup_records;
        res->sessions_started += w->sessions_started;
        res->sessions_in_window += w->sessions_in_window;
        res->last_session_start_ns = LL_MAX(res->last_session_start_ns, w->last_session_start_ns);
        res->sessions_cut += w->sessions_cut + session_set_open_in_window(&w->sessions);
        res->sessions_failed += w->sessions_failed;
        d->infl_area += w->infl_area;
        res->records_lost += w->rw.lost;
        d->last_end_ns = LL_MAX(d->last_end_ns, w->last_end_ns);
    }
    if (by_count)
        halves_by_order(d, res);
    res->workload_cached_share = prefix_share_implied(&prefix);
    prefix_share_reset(&prefix);
}

/* Window: the measurement window's length, [warmup, duration], or up to
 * the last record's end for a run whose schedule ran out (--requests, a
 * trace's end: alone, or before --duration) or that a signal or the spend
 * guard stopped (its drain is part of what it measured; a full --duration
 * would dilute every rate by the time nothing was offered); never 0. Then
 * the figures that divide by it or end with it: mean in flight, the
 * maximum, elapsed time and why offering stopped. */
static void run_window(struct driver *d, struct driver_result *res)
{
    const struct run_config *cfg = d->cfg;
    uint64_t wend = d->last_end_ns;
    int cut = res->interrupted || atomic_load(&d->spend_stop);
    if (cfg->duration_ns && !atomic_load(&d->ran_out) && (!cut || wend > cfg->duration_ns))
        wend = cfg->duration_ns;
    res->window_ns = wend > cfg->warmup_ns ? wend - cfg->warmup_ns : 0;
    res->inflight_max = atomic_load(&d->in_system_max);
    if (res->window_ns == 0)
        res->window_ns = 1;
    res->inflight_mean = d->infl_area / (double)res->window_ns;
    /* A schedule with nothing to send (a low rate in a short step) ends
     * before its t = 0, the start lead ahead: 0, not an underflow that a
     * sweep's findings printed as a drain of 2^63 ns. */
    uint64_t now = ll_now_ns();
    res->elapsed_ns = now > d->run_start_ns ? now - d->run_start_ns : 0;
    if (atomic_load(&d->spend_stop))
        snprintf(res->stop_reason, sizeof res->stop_reason,
                 "spend guard: the next request would pass --max-tokens-total %llu",
                 (unsigned long long)cfg->max_tokens_total);
    else if (res->interrupted)
        snprintf(res->stop_reason, sizeof res->stop_reason, "interrupted by a signal");
}

/* A stop signal that came while the run was set up (it was blocked, so it
 * waits): take it and start no worker, so nothing is sent. 1 when so. */
static int stopped_before_launch(struct driver *d, struct driver_result *res)
{
    struct timespec zero = {0, 0};
    ll_test_hold("schedule");
    int sig = sigtimedwait(&d->sigs, NULL, &zero);
    if (sig != SIGINT && sig != SIGTERM)
        return 0;
    ll_errorf("%s: stopping before any request was sent",
              sig == SIGINT ? "interrupt" : "terminated");
    res->interrupted = 1;
    res->stopped_in = "schedule";
    return 1;
}

int driver_run(const struct run_config *cfg, struct driver_result *res, char *err, size_t errlen)
{
    struct driver d = {0};
    struct supervisor sv;
    int rc = run_start(&d, cfg, res, err, errlen);
    if (rc == 0) {
        supervisor_init(&sv, &d);
        if (!d.stopped_waiting && !stopped_before_launch(&d, res))
            rc = run_launch(&d, err, errlen);
        run_supervise(&d, &sv, res);
        run_merge(&d, res);
        run_window(&d, res);
    }
    run_release(&d);
    return rc;
}

size_t driver_class_count(const struct run_config *cfg)
{
    if (cfg->trace)
        return cfg->trace->n_classes;
    return cfg->workload.classes ? cfg->workload.classes->n : 0;
}

const char *driver_class_name(const struct run_config *cfg, size_t k)
{
    if (cfg->trace)
        return cfg->trace->classes[k];
    return cfg->workload.classes->classes[k].name;
}

void driver_result_free(struct driver_result *res)
{
    stats_free(&res->stats);
    stats_free(&res->cold);
    hist_free(res->ttft_first_half);
    hist_free(res->ttft_second_half);
    hist_free(res->stream);
    free(res->series);
    stats_free_array(res->class_stats, res->n_classes);
    res->class_stats = NULL;
    res->n_classes = 0;
    stats_free_array(res->endpoint_stats, res->n_endpoints);
    res->endpoint_stats = NULL;
    res->n_endpoints = 0;
    res->ttft_first_half = res->ttft_second_half = res->stream = NULL;
    res->series = NULL;
    res->n_series = 0;
}

void offer_src_init(struct offer_src *s, const struct run_config *cfg)
{
    memset(s, 0, sizeof *s);
    arrival_init(&s->arr, &cfg->arrival);
    if (cfg->n_bursts)
        s->burst_left = cfg->bursts[0].count;
}

int offer_src_next(struct offer_src *s, const struct run_config *cfg, uint64_t *index,
                   uint64_t *off_ns, const struct burst **burst)
{
    if (cfg->max_requests && s->index >= cfg->max_requests)
        return 0;
    if (!s->proc_valid && !s->proc_done) {
        s->proc_off_ns = arrival_next_ns(&s->arr);
        s->proc_valid = 1;
        if (cfg->duration_ns && s->proc_off_ns >= cfg->duration_ns)
            s->proc_done = 1;
    }
    int have_burst = s->burst_i < cfg->n_bursts;
    int have_proc = s->proc_valid && !s->proc_done;
    if (have_burst && (!have_proc || cfg->bursts[s->burst_i].at_ns <= s->proc_off_ns)) {
        const struct burst *b = &cfg->bursts[s->burst_i];
        *off_ns = b->at_ns;
        *burst = b;
        if (--s->burst_left == 0) {
            s->burst_i++;
            if (s->burst_i < cfg->n_bursts)
                s->burst_left = cfg->bursts[s->burst_i].count;
        }
    } else if (have_proc) {
        *off_ns = s->proc_off_ns;
        *burst = NULL;
        s->proc_valid = 0;
    } else {
        return 0;
    }
    *index = s->index++;
    return 1;
}

double offer_rate_per_s(const struct run_config *cfg)
{
    const struct arrival_config *c = &cfg->arrival;
    int flat = c->ramp_to_per_s <= 0 && c->switch_to_per_s <= 0 && cfg->n_bursts == 0;
    if (flat || !cfg->duration_ns || cfg->warmup_ns >= cfg->duration_ns)
        return c->rate_per_s; /* exactly the flag's, not a count's quotient */
    struct arrival a;
    arrival_init(&a, c);
    double n = arrival_expected(&a, cfg->duration_ns) - arrival_expected(&a, cfg->warmup_ns);
    for (size_t i = 0; i < cfg->n_bursts; i++)
        if (cfg->bursts[i].at_ns >= cfg->warmup_ns && cfg->bursts[i].at_ns < cfg->duration_ns)
            n += cfg->bursts[i].count;
    return n / ((double)(cfg->duration_ns - cfg->warmup_ns) / 1e9);
}

void offer_spec(const struct run_config *cfg, uint64_t index, const struct burst *b,
                struct req_spec *out)
{
    workload_spec(&cfg->workload, index, out);
    if (b && b->prompt_tokens)
        out->prompt_tokens = b->prompt_tokens;
    if (b && b->output_tokens)
        out->max_tokens = b->output_tokens;
}

/* A request's price to the spend guard: its prompt, image and max tokens. */
static uint64_t spend_cost(const struct req_spec *s)
{
    return (uint64_t)s->prompt_tokens + s->image_tokens + s->max_tokens;
}

uint64_t driver_spend_bound(const struct run_config *cfg)
{
    if (cfg->trace || cfg->mode == LOAD_OPEN || cfg->mode == LOAD_CAPPED)
        return cfg->max_tokens_total;
    return driver_share(cfg, cfg->max_tokens_total);
}

int driver_first_cost(const struct run_config *cfg, uint64_t *tokens)
{
    struct req_spec s;
    uint64_t n = driver_shards(cfg), k = cfg->shard % n;
    *tokens = 0;
    if (cfg->trace) {
        replay_spec(cfg->trace, 0, cfg->workload.ignore_eos, &cfg->workload.calib, &s);
    } else if (cfg->mode == LOAD_OPEN || cfg->mode == LOAD_CAPPED) {
        struct offer_src src;
        uint64_t i, off;
        const struct burst *b;
        offer_src_init(&src, cfg);
        if (!offer_src_next(&src, cfg, &i, &off, &b))
            return 0;
        offer_spec(cfg, i, b, &s);
    } else if (cfg->mode == LOAD_CLOSED) {
        /* Every user starts at once and the shared counter takes whichever
         * comes first: the cheapest first turn of this shard's users. */
        uint64_t least = UINT64_MAX;
        for (uint64_t u = k; u < cfg->users; u += n) {
            workload_spec(&cfg->workload, u, &s);
            least = LL_MIN(least, spend_cost(&s));
        }
        if (least == UINT64_MAX)
            return 0;
        *tokens = least;
        return 1;
    } else {
        /* The shard's first session is the schedule's K-th: its first turn. */
        workload_spec(&cfg->workload, k * SESSION_MAX_TURNS, &s);
    }
    *tokens = spend_cost(&s);
    return 1;
}

int driver_dump_schedule(const struct run_config *cfg, const char *path, char *err, size_t errlen)
{
    if (cfg->mode == LOAD_CLOSED) {
        snprintf(err, errlen, "a closed-loop schedule depends on the server; use --rate");
        return LL_E_INVAL;
    }
    FILE *f = fopen(path, "w");
    if (!f) {
        snprintf(err, errlen, "%s: %s", path, strerror(errno));
        return LL_E_IO;
    }
    struct offer_src src;
    offer_src_init(&src, cfg);
    uint64_t n = driver_shards(cfg);
    uint64_t tokens = 0, i, off, untimed = 0;
    const struct burst *b;
    while (offer_src_next(&src, cfg, &i, &off, &b)) {
        struct req_spec s;
        offer_spec(cfg, i, b, &s);
        tokens += (uint64_t)s.prompt_tokens + s.max_tokens;
        if (cfg->max_tokens_total && tokens > cfg->max_tokens_total)
            break;
        if (i % n != cfg->shard % n)
            continue;
        /* What replay's trace format can say of the request beside its
         * lengths: its class, its shared prefix, a timed cancellation, and
         * a class's API and ignore_eos (embeddings is the run's --api,
         * which the replay gives). */
        fprintf(f, "{\"index\":%llu,\"sched_ns\":%llu,\"prompt_tokens\":%u,\"max_tokens\":%u",
                (unsigned long long)i, (unsigned long long)off, s.prompt_tokens, s.max_tokens);
        if (s.class_name)
            fprintf(f, ",\"class\":\"%s\"", s.class_name); /* [A-Za-z0-9_.-]: no escape */
        if (s.prefix_id >= 0)
            fprintf(f, ",\"prefix_id\":%lld,\"prefix_tokens\":%u", (long long)s.prefix_id,
                    s.prefix_tokens);
        if (s.cancel_kind == WL_CANCEL_AFTER_TIME)
            fprintf(f, ",\"cancel_after_ns\":%llu", (unsigned long long)s.cancel_after);
        else if (s.cancel_kind == WL_CANCEL_AFTER_TOKENS)
            untimed++;
        if (s.api >= 0 && s.api != OAI_API_EMBEDDINGS)
            fprintf(f, ",\"api\":\"%s\"", oai_api_name((enum oai_api)s.api));
        if (s.class_name)
            fprintf(f, ",\"ignore_eos\":%s", s.ignore_eos ? "true" : "false");
        fputs("}\n", f);
    }
    if (fclose(f) != 0) {
        snprintf(err, errlen, "%s: %s", path, strerror(errno));
        return LL_E_IO;
    }
    if (untimed)
        ll_errorf("warning: --dump-schedule: %llu cancellations after a number of tokens "
                  "(--cancel-after-tokens) are not in %s: a trace has cancel_after_ns only",
                  (unsigned long long)untimed, path);
    const struct wl_file *wf = cfg->workload.classes;
    for (size_t k = 0; wf && k < wf->n; k++) {
        if (wf->classes[k].extra_body) {
            ll_errorf("warning: --dump-schedule: class \"%s\"'s extra_body is not in %s: a "
                      "trace line has no body fields, and a replay sends --extra-body's to "
                      "every request",
                      wf->classes[k].name, path);
            break;
        }
    }
    return 0;
}
