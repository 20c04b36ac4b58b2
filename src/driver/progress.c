/* progress.c: the progress line and the live view (progress.h). */
#include "driver/progress.h"

#include <stdio.h>
#include <string.h>

#include "util/util.h"

void progress_counters_init(struct progress_counters *pc, int live)
{
    pthread_mutex_init(&pc->lock, NULL);
    pc->roll_ttft = hist_new();
    if (live)
        live_view_init(&pc->live);
}

void progress_counters_reset(struct progress_counters *pc)
{
    hist_free(pc->roll_ttft);
    pc->roll_ttft = NULL;
    live_view_reset(&pc->live);
    pthread_mutex_destroy(&pc->lock);
}

void progress_count_ttft(struct progress_counters *pc, uint64_t ttft_ns)
{
    pthread_mutex_lock(&pc->lock);
    hist_record(pc->roll_ttft, ttft_ns);
    pthread_mutex_unlock(&pc->lock);
}

/* ---- the progress line ------------------------------------------------- */

void progress_line_init(struct progress_line *pl, uint64_t run_start_abs_ns, int tty,
                        int closed, uint32_t users, double rate_per_s)
{
    memset(pl, 0, sizeof *pl);
    pl->run_start_abs_ns = run_start_abs_ns;
    pl->tty = tty;
    if (closed)
        snprintf(pl->offered, sizeof pl->offered, "%u users", users);
    else
        snprintf(pl->offered, sizeof pl->offered, "%.1f/s offered", rate_per_s);
    pl->last_abs_ns = run_start_abs_ns;
    pl->ttft = hist_new();
}

void progress_line_reset(struct progress_line *pl)
{
    hist_free(pl->ttft);
    pl->ttft = NULL;
}

void progress_print(struct progress_line *pl, struct progress_counters *const *pcs, uint32_t n,
                    int final)
{
    uint64_t run_start_abs_ns = pl->run_start_abs_ns;
    uint64_t now = ll_now_ns();
    uint64_t sent = 0, done = 0, failed = 0, tokens = 0, infl = 0;
    hist_reset(pl->ttft);
    for (uint32_t i = 0; i < n; i++) {
        struct progress_counters *pc = pcs[i];
        sent += atomic_load_explicit(&pc->sent, memory_order_relaxed);
        done += atomic_load_explicit(&pc->done, memory_order_relaxed);
        failed += atomic_load_explicit(&pc->failed, memory_order_relaxed);
        tokens += atomic_load_explicit(&pc->out_tokens, memory_order_relaxed);
        infl += atomic_load_explicit(&pc->inflight, memory_order_relaxed);
        pthread_mutex_lock(&pc->lock);
        hist_merge(pl->ttft, pc->roll_ttft);
        hist_reset(pc->roll_ttft);
        pthread_mutex_unlock(&pc->lock);
    }
    double dt = (double)(now - pl->last_abs_ns) / 1e9;
    double elapsed = now > run_start_abs_ns ? (double)(now - run_start_abs_ns) / 1e9 : 0;
    double send_rate = dt > 0 ? (double)(sent - pl->last_sent) / dt : 0;
    double tok_rate = dt > 0 ? (double)(tokens - pl->last_tokens) / dt : 0;
    char p50[16] = "-", p99[16] = "-";
    if (hist_count(pl->ttft)) {
        ll_fmt_duration(hist_percentile(pl->ttft, 50), p50, sizeof p50);
        ll_fmt_duration(hist_percentile(pl->ttft, 99), p99, sizeof p99);
    }
    const char *lead = pl->tty ? "\r\033[K" : "";
    fprintf(stderr,
            "%s[%6.1fs] %s, %.1f/s sent, in flight %llu, done %llu, errors %llu, "
            "TTFT p50 %s p99 %s, %.0f tok/s%s",
            lead, elapsed, pl->offered, send_rate, (unsigned long long)infl,
            (unsigned long long)done, (unsigned long long)failed, p50, p99, tok_rate,
            pl->tty && !final ? "" : "\n");
    pl->last_abs_ns = now;
    pl->last_sent = sent;
    pl->last_tokens = tokens;
}

/* ---- the live view ----------------------------------------------------- */

void live_view_init(struct live_view *lv)
{
    lv->ttft = hist_new();
    lv->e2e = hist_new();
    lv->late = hist_new();
}

/* Merge from's histograms into to's and empty from's. */
static void live_view_move(struct live_view *to, struct live_view *from)
{
    hist_merge(to->ttft, from->ttft);
    hist_merge(to->e2e, from->e2e);
    hist_merge(to->late, from->late);
    hist_reset(from->ttft);
    hist_reset(from->e2e);
    hist_reset(from->late);
}

void live_view_reset(struct live_view *lv)
{
    hist_free(lv->ttft);
    hist_free(lv->e2e);
    hist_free(lv->late);
    lv->ttft = lv->e2e = lv->late = NULL;
}

void live_emit(struct live_view *lv, driver_live_cb *cb, void *ud, uint64_t run_start_abs_ns,
               struct progress_counters *const *pcs, uint32_t n, int final)
{
    struct driver_live v;
    memset(&v, 0, sizeof v);
    uint64_t now = ll_now_ns();
    v.run_start_abs_ns = run_start_abs_ns;
    v.t_ns = now > run_start_abs_ns ? now - run_start_abs_ns : 0;
    v.final = final;
    hist_reset(lv->ttft);
    hist_reset(lv->e2e);
    hist_reset(lv->late);
    for (uint32_t i = 0; i < n; i++) {
        struct progress_counters *pc = pcs[i];
        v.scheduled += atomic_load_explicit(&pc->sched, memory_order_relaxed);
        v.sent += atomic_load_explicit(&pc->sent, memory_order_relaxed);
        v.done += atomic_load_explicit(&pc->done, memory_order_relaxed);
        v.failed += atomic_load_explicit(&pc->failed, memory_order_relaxed);
        v.output_tokens += atomic_load_explicit(&pc->out_tokens, memory_order_relaxed);
        v.inflight += atomic_load_explicit(&pc->inflight, memory_order_relaxed);
        for (int k = 0; k < REC_KIND_COUNT; k++)
            v.done_by_kind[k] += atomic_load_explicit(&pc->kind[k], memory_order_relaxed);
        pthread_mutex_lock(&pc->lock);
        live_view_move(lv, &pc->live);
        pthread_mutex_unlock(&pc->lock);
    }
    v.ttft = lv->ttft;
    v.e2e = lv->e2e;
    v.lateness = lv->late;
    cb(ud, &v);
}
