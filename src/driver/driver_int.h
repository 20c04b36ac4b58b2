/* driver_int.h: what run.c (driver_run's steps) and worker.c (one
 * worker thread's loop) share: the worker and driver structs and the two
 * entry points of a worker. Internal to src/driver/. */
#ifndef LL_DRIVER_INT_H
#define LL_DRIVER_INT_H

#include "driver/driver.h"

#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>

#include "driver/recwriter.h"
#include "measure/hist.h"
#include "measure/histlog.h"
#include "util/dueheap.h"
#include "util/rng.h"
#include "util/util.h"
#include "workload/chatbody.h"
#include "workload/prefixshare.h"
#include "workload/replay.h"
#include "workload/session.h"

#define DRIVER_START_LEAD_NS (30 * LL_NS_PER_MS) /* threads ready before t=0 */
#define DRIVER_FLUSH_NS (100 * LL_NS_PER_MS)     /* records reach the file this often */
#define DRIVER_THINK_STREAM 0x7448000000000000ULL
#define DRIVER_SESSION_STREAM 0x5365000000000000ULL

struct driver;

struct user {
    uint64_t turn;          /* requests this user has started */
    uint64_t last_sched_ns; /* relative */
    struct rng rng;         /* think-time draws */
    int retired;
};

struct queued {
    struct req_spec spec;
    uint64_t sched_ns; /* relative */
    uint64_t late_ns;  /* its schedule lateness when it came due */
};

/* One ok request's TTFT and when it was scheduled (worker.ttft_order). */
struct sched_ttft {
    uint64_t sched_ns, ttft_ns;
};

struct worker {
    struct driver *d;
    uint32_t idx;
    struct transport *t;
    struct stats stats;

    /* open loop and capped */
    struct offer_src src; /* the merged open-loop schedule (every worker walks it all) */
    uint64_t gen_index;   /* arrivals drawn so far (trace and session sources) */
    uint64_t next_index;
    uint64_t next_off_ns;
    struct req_spec next_spec;
    int have_next;
    uint64_t tokens_cum; /* spend guard: prompt + max tokens of every arrival walked */

    /* closed loop */
    struct user *users;
    uint32_t n_users;
    struct due_heap users_due; /* closed loop: at_ns a user's next send (relative),
                                 * id its index into users; room for every user */
    int images;                /* the workload sends images (workload_has_images) */
    uint64_t closed_prepared;  /* 1 + the index whose images were last prepared, 0 = none */

    /* capped: FIFO of arrivals waiting for a slot */
    struct queued *q;
    size_t q_head, q_len, q_cap;

    int offering;
    uint32_t in_system; /* in flight + queued */
    uint64_t infl_last_abs_ns;
    double infl_area; /* requests * ns over the window */
    uint64_t sent_in_window;
    uint64_t late_sends, late_asleep; /* the lateness diagnosis (driver_result) */
    struct prefix_share prefix;       /* what the requests sent share (workload_cached_share) */
    /* The worker thread's own use of the machine, start to end of
     * worker_main (getrusage RUSAGE_THREAD): CPU time (user + system),
     * involuntary context switches, and the wall time they span; all 0
     * when getrusage failed. For the lateness diagnosis. */
    uint64_t cpu_ns, invol_switches, wall_ns;
    uint64_t warmup_records;
    struct stats cold; /* the cold start's requests (driver_result.cold) */
    uint64_t last_sched_ns;
    uint64_t last_end_ns; /* latest record end, relative */

    /* records: requests.jsonl lines, written by this worker's own writer
     * thread while the loop goes on */
    struct recwriter rw;
    uint64_t next_flush_abs_ns;

    /* hist.jsonl (run_config.hist_fd): the open one-second window, fed
     * what stats takes (its ITL through stats.itl_window) and written as
     * the worker's clock leaves it. hw_on: set up; hw_error: a write
     * failed (said once). */
    struct histlog_window hw;
    int hw_on, hw_error;

    struct progress_counters pc; /* the progress line's and the live view's */
    /* The steady-state test's TTFTs of the window's ok requests: halved
     * by when each was scheduled (h1, h2: --duration's halves), and, when
     * a count may end the offering (driver_sched_count), each with its
     * sched_ns (not for a trace or sessions, never judged steady), for
     * run_merge to halve in the order they were scheduled
     * (the requests the test sees: not warm-up, not cold). run_merge
     * takes the halves of whichever ended the offering. ttft_order_cap
     * is in bytes (ll_grow). */
    struct hist *ttft_h1, *ttft_h2;
    struct sched_ttft *ttft_order;
    size_t n_ttft_order, ttft_order_cap;
    struct hist *stream; /* ns, end - first of the window's ok records */
    /* ns, the least TTFT of any ok record, warm-up's too (0: none yet):
     * the time to a first token when nothing waited ahead (run_merge). */
    uint64_t ttft_least_ns;
    struct stats *cls; /* per traffic class, n_cls of them; NULL without classes */
    struct stats *eps; /* per endpoint, n_eps of them; NULL with one --url */
    size_t n_eps;
    /* What was sent or ended after --duration (stats_account_window's
     * counts, the in-flight area, the sends), tallied apart: it is part
     * of the window when the schedule's count ended the offering first
     * (run_merge adds it), not otherwise. past_cls and past_eps are
     * n_cls and n_eps zeroed structs (NULL without classes, endpoints). */
    struct stats past, *past_cls, *past_eps;
    double infl_area_past;
    uint64_t sent_past;
    /* sessions */
    struct session_set sessions;
    uint64_t sessions_started, sessions_in_window, sessions_cut, sessions_failed;
    /* 1 while the grace's end cancels what is in flight: a session whose
     * last turn it cancels is cut, not ended */
    int cancelling;
    uint64_t last_session_start_ns; /* the latest session's arrival, relative */
    size_t n_cls;

    _Atomic int finished;
    pthread_t th;
};

struct driver {
    const struct run_config *cfg;
    uint64_t run_start_ns;
    /* Where the workers take up an arrival: run_start_ns plus a delay
     * that a test may inject (LLMLOAD_TEST_SEND_DELAY_NS: every send that
     * late, on purpose, to test the verdict); run_start_ns otherwise. */
    uint64_t due_base_ns;
    uint32_t n_workers;
    struct worker *workers;
    struct progress_counters **pcs; /* each worker's pc, for progress.c */
    _Atomic int stop_level;         /* 0 running, 1 graceful, 2 immediate */
    _Atomic uint64_t cancel_at_abs_ns;
    _Atomic uint64_t closed_started; /* closed-loop requests started, all users */
    uint64_t closed_max;             /* closed loop: this shard's share of --requests */
    uint64_t guard_total;            /* closed loop, sessions: this shard's share of the guard */
    _Atomic uint64_t tokens_offered;
    _Atomic int spend_stop;
    /* A worker found the schedule run out (--requests, a trace's end, a
     * closed loop's count): asked for the arrival after one that was due
     * before --duration, so the count ended the offering, whatever the
     * generator's lateness. The window then ends with the last response
     * (run_window) and what was sent or ended after --duration counts
     * (run_merge). */
    _Atomic int ran_out;
    _Atomic uint32_t done_offering; /* workers that stopped offering (drain once all have) */
    struct slo *cls_slo;            /* per class: its own SLO, else the run's */
    int any_slo;                    /* --slo, or a class's own: the run has an SLO */
    _Atomic uint32_t in_system;     /* all workers: in flight + queued */
    _Atomic uint32_t in_system_max; /* its maximum over the window */
    /* driver_run's thread only */
    uint32_t made;        /* workers set up (worker_release undoes them) */
    int stopped_waiting;  /* a stop signal came while waiting for --start-at */
    uint32_t started;     /* worker threads started */
    sigset_t sigs;        /* SIGINT and SIGTERM, blocked while the run goes */
    sigset_t old_sigs;    /* the caller's mask, restored at the end */
    double infl_area;     /* merged: requests * ns in the system over the window */
    uint64_t last_end_ns; /* merged: the latest record end, relative */
};

/* The shard count of cfg (1 when not sharded). */
static inline uint64_t driver_shards(const struct run_config *cfg)
{
    return cfg->shards > 1 ? cfg->shards : 1;
}

/* Whether worker w of d offers global index i (an arrival, a session, a
 * closed-loop user): i is this shard's (i mod N == K), and its place among
 * the shard's, i / N, is w's (mod W). */
static inline int driver_takes(const struct driver *d, uint32_t w, uint64_t i)
{
    uint64_t n = driver_shards(d->cfg);
    return i % n == d->cfg->shard % n && (i / n) % d->n_workers == w;
}

/* The worker-local ordinal of global index i (driver_takes true): its
 * place among worker's own. */
static inline uint64_t driver_local(const struct driver *d, uint64_t i)
{
    return i / driver_shards(d->cfg) / d->n_workers;
}

/* The global index of worker w's local ordinal k (driver_local's inverse). */
static inline uint64_t driver_global(const struct driver *d, uint32_t w, uint64_t k)
{
    uint64_t n = driver_shards(d->cfg);
    return (k * d->n_workers + w) * n + d->cfg->shard % n;
}

/* This shard's share of a global count c (indices below c that are its). */
static inline uint64_t driver_share(const struct run_config *cfg, uint64_t c)
{
    uint64_t n = driver_shards(cfg), k = cfg->shard % n;
    return c / n + (k < c % n);
}

/* The schedule's length when a count bounds it: --requests (sessions in
 * a session run), or a trace's entries; 0 = none. */
static inline uint64_t driver_sched_count(const struct run_config *cfg)
{
    uint64_t n = cfg->max_requests;
    if (cfg->trace && (!n || cfg->trace->n < n))
        n = cfg->trace->n;
    return n;
}

/* A worker thread's body (pthread_create's start routine; arg is its
 * struct worker). */
void *worker_main(void *arg);

/* The transport's completion callback of worker ud: accounts and writes
 * record r, and schedules what follows it (a closed-loop user's next
 * request, a session's next turn). */
void worker_on_done(void *ud, struct record *r);

#endif
