/* progress.h: what a run shows while it goes. Each worker counts into its
 * own struct progress_counters (one relaxed atomic add per request and
 * event, never per token; the histograms under a lock the reader takes
 * once a second), and driver_run's thread reads them all to print the
 * progress line (docs/run.md, "While it runs") and to hand the live view
 * to run_config's live_cb (llmload run --expose, the scraper's origin).
 * driver.h includes this header for struct driver_live. */
#ifndef LL_PROGRESS_H
#define LL_PROGRESS_H

#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>

#include "measure/hist.h"
#include "measure/record.h"
#include "measure/statushint.h"

/* A live view of a run in progress, for a caller that publishes it while
 * the run goes (llmload run --expose, the scraper's origin). Counters are
 * totals since t = 0, warm-up included; the histograms hold only what
 * happened since the previous call. Every pointer is borrowed for the
 * duration of the call. */
struct driver_live {
    uint64_t run_start_abs_ns;        /* CLOCK_MONOTONIC of t = 0 */
    uint64_t t_ns;                    /* now, relative to the run start (0 before it) */
    int final;                        /* 1 on the last call, after the workers ended */
    uint64_t scheduled, sent, done, failed;
    uint64_t output_tokens;
    uint32_t inflight;                /* requests in the system (sent or queued) */
    uint64_t done_by_kind[REC_KIND_COUNT];
    const struct hist *ttft;          /* ok requests finished since the last call: first - sched, ns */
    const struct hist *e2e;           /* the same requests: end - sched, ns */
    const struct hist *lateness;      /* requests scheduled since the last call: send lateness, ns */
};

typedef void driver_live_cb(void *ud, const struct driver_live *live);

/* Three histograms of a live view: TTFT and E2E of ok requests (first -
 * sched, end - sched), and send lateness, ns. driver_run's own copy is
 * handed to cfg->live_cb, which borrows it for the call; each worker's
 * counters hold one more, emptied into it at each call. */
struct live_view {
    struct hist *ttft, *e2e, *late;
};

/* One worker's counters, totals since t = 0 with warm-up included.
 * Written by that worker alone, read by driver_run's thread. Embedded in
 * the worker: progress_counters_init / progress_counters_reset. */
struct progress_counters {
    _Atomic uint64_t sched, sent, done, failed; /* requests */
    _Atomic uint64_t out_tokens;                /* output tokens of finished requests */
    _Atomic uint32_t inflight;                  /* this worker's requests in the system */
    _Atomic uint64_t kind[REC_KIND_COUNT];      /* finished requests by kind */
    _Atomic uint64_t cause4xx[STATUS_CAUSES];   /* of them http_4xx, by status_cause_of */
    /* ok requests that reported the server's prompt count, and the sums
     * of their requested and counted prompt tokens (the driver's prompt
     * check, measure/summary.h) */
    _Atomic uint64_t usage_n, usage_requested, usage_server;
    pthread_mutex_t lock;                       /* guards the histograms */
    /* ok, non-warm-up requests finished since the last progress line:
     * first - sched, ns */
    struct hist *roll_ttft;
    /* Only with a live view (else its histograms are NULL), since its last
     * call: ok requests finished, first - sched and end - sched, ns;
     * requests scheduled, their send lateness, ns. */
    struct live_view live;
};

/* Set up pc (zeroed memory); live = 1 when the run has a live view. */
void progress_counters_init(struct progress_counters *pc, int live);

/* Free pc's histograms and lock. */
void progress_counters_reset(struct progress_counters *pc);

/* The counting functions below are the hot path, once per request: a
 * relaxed atomic add or two, and with a live view a lock held for one
 * histogram record. Inline, like the adds they were before. */

/* A request was scheduled, and handled late_ns after its time. */
static inline void progress_count_sched(struct progress_counters *pc, uint64_t late_ns)
{
    atomic_fetch_add_explicit(&pc->sched, 1, memory_order_relaxed);
    if (pc->live.late) {
        pthread_mutex_lock(&pc->lock);
        hist_record(pc->live.late, late_ns);
        pthread_mutex_unlock(&pc->lock);
    }
}

/* A request was handed to the transport. */
static inline void progress_count_sent(struct progress_counters *pc)
{
    atomic_fetch_add_explicit(&pc->sent, 1, memory_order_relaxed);
}

/* The worker now has n requests in the system (in flight and queued). */
static inline void progress_set_inflight(struct progress_counters *pc, uint32_t n)
{
    atomic_store_explicit(&pc->inflight, n, memory_order_relaxed);
}

/* A window request finished ok with its first output ttft_ns after its
 * scheduled time: the progress line's TTFT. */
void progress_count_ttft(struct progress_counters *pc, uint64_t ttft_ns);

/* Request r finished, whatever its kind (its record is final). */
static inline void progress_count_done(struct progress_counters *pc, const struct record *r)
{
    atomic_fetch_add_explicit(&pc->done, 1, memory_order_relaxed);
    if (r->kind != REC_OK)
        atomic_fetch_add_explicit(&pc->failed, 1, memory_order_relaxed);
    atomic_fetch_add_explicit(&pc->out_tokens, r->output_tokens, memory_order_relaxed);
    atomic_fetch_add_explicit(&pc->kind[r->kind], 1, memory_order_relaxed);
    if (r->kind == REC_HTTP_4XX)
        atomic_fetch_add_explicit(&pc->cause4xx[status_cause_of(r->http_status)], 1,
                                  memory_order_relaxed);
    if (r->kind == REC_OK && r->prompt_tokens_server >= 0 && r->prompt_tokens > 0) {
        atomic_fetch_add_explicit(&pc->usage_requested, r->prompt_tokens, memory_order_relaxed);
        atomic_fetch_add_explicit(&pc->usage_server, (uint64_t)r->prompt_tokens_server,
                                  memory_order_relaxed);
        atomic_fetch_add_explicit(&pc->usage_n, 1, memory_order_release);
    }
    if (pc->live.ttft && r->kind == REC_OK && r->first_ns != LL_NO_TIME) {
        pthread_mutex_lock(&pc->lock);
        hist_record(pc->live.ttft, r->first_ns - r->sched_ns);
        hist_record(pc->live.e2e, r->end_ns - r->sched_ns);
        pthread_mutex_unlock(&pc->lock);
    }
}

/* The progress line's own state, on driver_run's thread. */
struct progress_line {
    uint64_t run_start_abs_ns;  /* CLOCK_MONOTONIC of t = 0 */
    int tty;                    /* 1: rewrite one terminal line; 0: plain lines */
    char offered[32];           /* "20.0/s offered" or "8 users" */
    uint64_t last_abs_ns;       /* CLOCK_MONOTONIC of the last line (or t = 0) */
    uint64_t last_sent;         /* requests sent, all workers, at the last line */
    uint64_t last_tokens;       /* output tokens, all workers, at the last line */
    struct hist *ttft;          /* scratch: the workers' roll_ttft merged */
};

/* Start the line at run_start_abs_ns. tty: 1 rewrites one terminal line,
 * 0 prints plain lines. The load is labelled "<users> users" when closed,
 * else "<rate_per_s>/s offered". Free with progress_line_reset. */
void progress_line_init(struct progress_line *pl, uint64_t run_start_abs_ns, int tty,
                        int closed, uint32_t users, double rate_per_s);
void progress_line_reset(struct progress_line *pl);

/* Print one progress line on stderr over the n workers' counters pcs:
 * rates over the time since the last line, TTFT over the requests that
 * got their first token in it (emptying the workers' roll_ttft). On a
 * tty the line ends with a newline only when final. */
void progress_print(struct progress_line *pl, struct progress_counters *const *pcs, uint32_t n,
                    int final);

void live_view_init(struct live_view *lv);
void live_view_reset(struct live_view *lv);

/* Sum the n workers' counters pcs, move their live histograms into lv
 * (emptying theirs), and hand the view to cb(ud, view). n = 0 before any
 * worker runs gives the all-zero first call. */
void live_emit(struct live_view *lv, driver_live_cb *cb, void *ud, uint64_t run_start_abs_ns,
               struct progress_counters *const *pcs, uint32_t n, int final);

#endif
