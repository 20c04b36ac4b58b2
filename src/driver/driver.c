/* driver.c: the schedule and the worker threads of one load point, and
 * driver_run's steps: start, supervise, merge, window. The records writer
 * is recwriter.c, the progress line and the live view progress.c.
 *
 * Each worker owns a transport (its own epoll loop and connections), a
 * struct stats and a records writer; the only shared writes are a few
 * atomics touched once per request (the closed-loop request budget and the
 * spend guard) and the progress counters, which each worker alone writes.
 * Arrival times are absolute: a worker sleeps on a timerfd until the next
 * scheduled time and, when it wakes late, sends everything that is due and
 * records the lateness, so a slow moment never shifts the schedule. */
#include "driver/driver.h"
#include "driver/recwriter.h"

#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <time.h>

#include "measure/hist.h"
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
    uint64_t turn;              /* requests this user has started */
    uint64_t last_sched_ns;     /* relative */
    struct rng rng;             /* think-time draws */
    int retired;
};

struct queued {
    struct req_spec spec;
    uint64_t sched_ns;          /* relative */
    uint64_t late_ns;           /* its schedule lateness when it came due */
};

struct worker {
    struct driver *d;
    uint32_t idx;
    struct transport *t;
    struct stats stats;

    /* open loop and capped */
    struct offer_src src;       /* the merged open-loop schedule (every worker walks it all) */
    uint64_t gen_index;         /* arrivals drawn so far (trace and session sources) */
    uint64_t next_index;
    uint64_t next_off_ns;
    struct req_spec next_spec;
    int have_next;
    uint64_t tokens_cum;        /* spend guard: prompt + max tokens of every arrival walked */

    /* closed loop */
    struct user *users;
    uint32_t n_users;
    struct due_heap users_due;  /* closed loop: at_ns a user's next send (relative),
                                 * id its index into users; room for every user */

    /* capped: FIFO of arrivals waiting for a slot */
    struct queued *q;
    size_t q_head, q_len, q_cap;

    int offering;
    uint32_t in_system;         /* in flight + queued */
    uint64_t infl_last_abs_ns;
    double infl_area;           /* requests * ns over the window */
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
    uint64_t last_end_ns;       /* latest record end, relative */

    /* records: requests.jsonl lines, written by this worker's own writer
     * thread while the loop goes on */
    struct recwriter rw;
    uint64_t next_flush_abs_ns;

    struct progress_counters pc;      /* the progress line's and the live view's */
    struct hist *ttft_h1, *ttft_h2;   /* steady-state halves */
    struct stats *cls;                /* per traffic class, n_cls of them; NULL without classes */
    /* sessions */
    struct session_set sessions;
    uint64_t sessions_started, sessions_in_window, sessions_cut;
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
    struct progress_counters **pcs;  /* each worker's pc, for progress.c */
    _Atomic int stop_level;          /* 0 running, 1 graceful, 2 immediate */
    _Atomic uint64_t cancel_at_abs_ns;
    _Atomic uint64_t closed_started; /* closed-loop requests started, all users */
    _Atomic uint64_t tokens_offered;
    _Atomic int spend_stop;
    _Atomic uint32_t done_offering;  /* workers that stopped offering (drain once all have) */
    struct slo *cls_slo;             /* per class: its own SLO, else the run's */
    _Atomic uint32_t in_system;      /* all workers: in flight + queued */
    _Atomic uint32_t in_system_max;  /* its maximum over the window */
    /* driver_run's thread only */
    uint32_t made;                   /* workers set up (worker_release undoes them) */
    uint32_t started;                /* worker threads started */
    sigset_t sigs;                   /* SIGINT and SIGTERM, blocked while the run goes */
    sigset_t old_sigs;               /* the caller's mask, restored at the end */
    double infl_area;                /* merged: requests * ns in the system over the window */
    uint64_t last_end_ns;            /* merged: the latest record end, relative */
};

/* ---- in-system accounting (Little's law) ------------------------------- */

/* The window's end, relative: --duration, or open-ended for a run bounded
 * by --requests (its window ends with its last record). */
static uint64_t window_end_rel(const struct run_config *cfg)
{
    return cfg->duration_ns ? cfg->duration_ns : UINT64_MAX;
}

/* Integrate this worker's requests in the system over the window. It runs
 * on every change, whether or not the worker still offers: requests that
 * are still in flight after its last arrival are in the system too. */
static void infl_advance(struct worker *w, uint64_t now_abs)
{
    const struct run_config *cfg = w->d->cfg;
    uint64_t from = w->d->run_start_ns + cfg->warmup_ns;
    uint64_t end = window_end_rel(cfg);
    uint64_t to = end == UINT64_MAX ? UINT64_MAX : w->d->run_start_ns + end;
    uint64_t a = LL_MAX(w->infl_last_abs_ns, from);
    uint64_t b = LL_MIN(now_abs, to);
    if (b > a)
        w->infl_area += (double)w->in_system * (double)(b - a);
    w->infl_last_abs_ns = now_abs;
}

/* One request enters (+1) or leaves (-1) the system. The exact maximum
 * over all workers needs the one shared counter: one atomic add per
 * request, never per token. */
static void in_system_add(struct worker *w, int delta)
{
    struct driver *d = w->d;
    uint64_t now = ll_now_ns();
    infl_advance(w, now);
    w->in_system = (uint32_t)((int)w->in_system + delta);
    progress_set_inflight(&w->pc, w->in_system);
    if (delta > 0) {
        uint32_t all = atomic_fetch_add_explicit(&d->in_system, 1, memory_order_relaxed) + 1;
        if (now >= d->run_start_ns + d->cfg->warmup_ns) {
            uint32_t max = atomic_load_explicit(&d->in_system_max, memory_order_relaxed);
            while (all > max && !atomic_compare_exchange_weak_explicit(
                                    &d->in_system_max, &max, all, memory_order_relaxed,
                                    memory_order_relaxed)) {
            }
        }
    } else {
        atomic_fetch_sub_explicit(&d->in_system, 1, memory_order_relaxed);
    }
}

/* ---- offering ---------------------------------------------------------- */

/* The next arrival of the whole schedule (every worker walks it all),
 * from the source cfg names: the trace's entries at their scaled offsets
 * (replay), the session process (--requests counts sessions), or the
 * open-loop process merged with the bursts (offer_src). *burst is set
 * for a burst's arrival, else NULL. Returns 0 when the schedule has
 * ended (the source ran out, --requests, --duration). */
static int schedule_next(struct worker *w, uint64_t *index, uint64_t *off_ns,
                         const struct burst **burst)
{
    const struct run_config *cfg = w->d->cfg;
    *burst = NULL;
    if (cfg->trace) {
        *index = w->gen_index++;
        if (*index >= cfg->trace->n || (cfg->max_requests && *index >= cfg->max_requests))
            return 0;
        *off_ns = trace_scaled_sched_ns(cfg->trace, (size_t)*index, cfg->trace_factor);
    } else if (cfg->mode == LOAD_SESSIONS) {
        *off_ns = arrival_next_ns(&w->src.arr);
        *index = w->gen_index++;
        if (cfg->max_requests && *index >= cfg->max_requests)
            return 0;
    } else {
        return offer_src_next(&w->src, cfg, index, off_ns, burst);
    }
    return !(cfg->duration_ns && *off_ns >= cfg->duration_ns);
}

/* Advance to this worker's next arrival (index i mod W == w): sets
 * next_index, next_off_ns and, but for sessions, next_spec, or clears
 * have_next when the schedule has ended. The spend guard is applied here,
 * in schedule order over every index, so which requests it admits depends
 * on the config only, never on thread timing, and matches --dump-schedule;
 * a session's turns are priced as they start (session_start_turn). Cost:
 * a request spec is drawn for the other workers' arrivals only when the
 * guard is on. */
static void next_arrival(struct worker *w)
{
    const struct run_config *cfg = w->d->cfg;
    int sessions = !cfg->trace && cfg->mode == LOAD_SESSIONS;
    int guard = cfg->max_tokens_total && !sessions;
    uint64_t i, off;
    const struct burst *b;
    while (schedule_next(w, &i, &off, &b)) {
        int mine = i % w->d->n_workers == w->idx;
        if ((mine && !sessions) || guard) {
            if (cfg->trace)
                replay_spec(cfg->trace, (size_t)i, cfg->workload.ignore_eos, &cfg->workload.calib,
                            &w->next_spec);
            else
                offer_spec(cfg, i, b, &w->next_spec);
        }
        if (guard) {
            w->tokens_cum += (uint64_t)w->next_spec.prompt_tokens + w->next_spec.max_tokens;
            if (w->tokens_cum > cfg->max_tokens_total) {
                atomic_store(&w->d->spend_stop, 1);
                break;
            }
        }
        if (mine) {
            w->next_index = i;
            w->next_off_ns = off;
            w->have_next = 1;
            return;
        }
    }
    w->have_next = 0;
}

/* The closed loop's spend guard: its order of requests depends on the
 * server anyway, so a shared counter decides. */
static int spend_guard_allows(struct worker *w, const struct req_spec *spec)
{
    const struct run_config *cfg = w->d->cfg;
    if (!cfg->max_tokens_total)
        return 1;
    if (atomic_load(&w->d->spend_stop))
        return 0;
    uint64_t cost = (uint64_t)spec->prompt_tokens + spec->max_tokens;
    uint64_t before = atomic_fetch_add(&w->d->tokens_offered, cost);
    if (before + cost > cfg->max_tokens_total) {
        atomic_store(&w->d->spend_stop, 1);
        return 0;
    }
    return 1;
}

static void stop_offering(struct worker *w)
{
    if (!w->offering)
        return;
    infl_advance(w, ll_now_ns());
    w->offering = 0;
    atomic_fetch_add(&w->d->done_offering, 1);
}

/* The session a request's cold start counts by: its own in a session run
 * (--cold-start counts sessions there), none otherwise (a replayed
 * trace's session ids are the trace's, in no schedule order). */
static int64_t cold_session(const struct run_config *cfg, int64_t session)
{
    return cfg->mode == LOAD_SESSIONS ? session : -1;
}

/* Count an arrival that came due (sched_ns) and was taken up at now_abs;
 * returns its schedule lateness, ns. */
static uint64_t count_scheduled(struct worker *w, const struct req_spec *spec, uint64_t sched_ns,
                                uint64_t now_abs)
{
    const struct run_config *cfg = w->d->cfg;
    int32_t class_idx = spec->class_idx;
    uint64_t sched_abs = w->d->run_start_ns + sched_ns;
    uint64_t late = now_abs > sched_abs ? now_abs - sched_abs : 0;
    progress_count_sched(&w->pc, late);
    if (sched_ns > w->last_sched_ns)
        w->last_sched_ns = sched_ns;
    if (record_in_cold_start(spec->index, cold_session(cfg, spec->session), cfg->cold_requests)) {
        w->cold.scheduled++;
        return late;
    }
    if (sched_ns < cfg->warmup_ns)
        return late;
    w->stats.scheduled++;
    if (w->cls && class_idx >= 0 && (size_t)class_idx < w->n_cls)
        w->cls[class_idx].scheduled++;
    stats_add_lateness(&w->stats, late);
    if (late > VERDICT_LATE_NS) {
        /* Asleep in epoll_wait when it came due, and most of the lateness
         * spent waking: the OS's or the VM's doing, not this worker's load. */
        uint64_t wf, wu;
        transport_last_wait(w->t, &wf, &wu);
        w->late_sends++;
        if (wf <= sched_abs && sched_abs < wu && 2 * (wu - sched_abs) >= late)
            w->late_asleep++;
    }
    return late;
}

static void submit(struct worker *w, const struct req_spec *spec, uint64_t sched_ns,
                   uint64_t late_ns, int64_t user)
{
    progress_count_sent(&w->pc);
    prefix_share_add(&w->prefix, spec);
    transport_submit(w->t, spec, sched_ns, late_ns, user);
}

/* A request that was scheduled but never sent (dropped at the cap, or
 * still queued when the run was stopped): it still gets its record. */
static void unsent_record(struct worker *w, const struct req_spec *spec, uint64_t sched_ns,
                          enum rec_kind kind, const char *detail);

static void dispatch_open(struct worker *w, uint64_t now)
{
    const struct run_config *cfg = w->d->cfg;
    while (w->have_next && w->d->due_base_ns + w->next_off_ns <= now) {
        struct req_spec spec = w->next_spec;
        uint64_t sched = w->next_off_ns;
        uint64_t late = count_scheduled(w, &spec, sched, now);
        /* The safety cap: past --max-inflight requests in the system (all
         * workers) an arrival is refused, and its record says so. */
        if (cfg->max_inflight &&
            atomic_load_explicit(&w->d->in_system, memory_order_relaxed) >= cfg->max_inflight) {
            unsent_record(w, &spec, sched, REC_CLIENT_DROPPED,
                          "refused: --max-inflight reached (client safety cap)");
            next_arrival(w);
            continue;
        }
        /* At the cap, or behind others already waiting (FIFO: a new
         * arrival never overtakes a queued one). */
        if (cfg->mode == LOAD_CAPPED &&
            (w->q_len > 0 || transport_inflight(w->t) >= cfg->max_concurrency)) {
            if (cfg->on_cap_drop) {
                unsent_record(w, &spec, sched, REC_CLIENT_DROPPED,
                              "dropped: max-concurrency reached (--on-cap drop)");
            } else {
                if (w->q_len == w->q_cap) {
                    size_t cap = w->q_cap ? w->q_cap * 2 : 256;
                    struct queued *nq = ll_malloc(cap * sizeof *nq);
                    for (size_t i = 0; i < w->q_len; i++)
                        nq[i] = w->q[(w->q_head + i) % w->q_cap];
                    free(w->q);
                    w->q = nq;
                    w->q_cap = cap;
                    w->q_head = 0;
                }
                w->q[(w->q_head + w->q_len) % w->q_cap] = (struct queued){spec, sched, late};
                w->q_len++;
                in_system_add(w, +1);
            }
        } else {
            in_system_add(w, +1);
            submit(w, &spec, sched, late, -1);
        }
        next_arrival(w);
    }
    if (!w->have_next)
        stop_offering(w);
}

static void dispatch_queue(struct worker *w)
{
    const struct run_config *cfg = w->d->cfg;
    while (w->q_len && transport_inflight(w->t) < cfg->max_concurrency) {
        struct queued qd = w->q[w->q_head];
        w->q_head = (w->q_head + 1) % w->q_cap;
        w->q_len--;
        submit(w, &qd.spec, qd.sched_ns, qd.late_ns, -1);
    }
}

static void dispatch_closed(struct worker *w, uint64_t now)
{
    const struct run_config *cfg = w->d->cfg;
    uint32_t n = w->d->n_workers;
    while (due_heap_peek(&w->users_due) &&
           w->d->due_base_ns + due_heap_peek(&w->users_due)->at_ns <= now) {
        struct due due = due_heap_pop(&w->users_due);
        struct user *u = &w->users[due.id];
        uint64_t global_user = due.id * n + w->idx;
        if (cfg->duration_ns && due.at_ns >= cfg->duration_ns) {
            u->retired = 1;
            continue;
        }
        if (cfg->max_requests &&
            atomic_fetch_add(&w->d->closed_started, 1) >= cfg->max_requests) {
            u->retired = 1;
            continue;
        }
        struct req_spec spec;
        workload_spec(&cfg->workload, u->turn * cfg->users + global_user, &spec);
        if (!spend_guard_allows(w, &spec)) {
            u->retired = 1;
            continue;
        }
        u->turn++;
        u->last_sched_ns = due.at_ns;
        uint64_t late = count_scheduled(w, &spec, due.at_ns, now);
        in_system_add(w, +1);
        submit(w, &spec, due.at_ns, late, (int64_t)global_user);
    }
}

static int closed_active(const struct worker *w)
{
    for (uint32_t i = 0; i < w->n_users; i++) {
        if (!w->users[i].retired)
            return 1;
    }
    return 0;
}

/* ---- sessions (partly open) -------------------------------------------- */

/* Start turn s->started of session s, intended at sched_ns: its own user
 * prompt is workload request s->index * SESSION_MAX_TURNS + turn, and it
 * resends the earlier turns. The spend guard counts the whole context. A
 * turn the guard refuses ends the session (cut). submit comes last: a
 * request that fails at once finishes (on_done) inside it and may close s. */
static void session_start_turn(struct worker *w, struct session *s, uint64_t ordinal,
                               uint64_t sched_ns, uint64_t now)
{
    const struct run_config *cfg = w->d->cfg;
    uint32_t k = s->started;
    struct req_spec spec;
    workload_spec(&cfg->workload, s->index * SESSION_MAX_TURNS + k, &spec);
    spec.session = (int64_t)s->index;
    spec.turn = (int32_t)k;
    s->hist[k].spec = spec;
    s->hist[k].output_tokens = 0;
    spec.history = s->hist;
    spec.history_len = k;
    struct req_spec cost = spec;
    cost.prompt_tokens = chatbody_prompt_tokens(&spec);
    if (!spend_guard_allows(w, &cost)) {
        w->sessions_cut++;
        session_close(&w->sessions, ordinal);
        return;
    }
    s->started++;
    uint64_t late = count_scheduled(w, &spec, sched_ns, now);
    in_system_add(w, +1);
    submit(w, &spec, sched_ns, late, -1);
}

/* Offer what is due, in time order: new sessions (their first turn at the
 * arrival time) and later turns (at the end of the previous turn plus the
 * think time). The worker stops offering when no arrival is left and
 * every session has ended. */
static void dispatch_sessions(struct worker *w, uint64_t now)
{
    const struct run_config *cfg = w->d->cfg;
    uint64_t t0 = w->d->due_base_ns;
    for (;;) {
        const struct due *due = session_due_peek(&w->sessions);
        int arrival = w->have_next && t0 + w->next_off_ns <= now;
        int turn = due && t0 + due->at_ns <= now;
        if (!arrival && !turn)
            break;
        if (arrival && (!turn || w->next_off_ns <= due->at_ns)) {
            uint64_t i = w->next_index, sched = w->next_off_ns;
            struct rng r;
            rng_seed(&r, cfg->workload.seed, DRIVER_SESSION_STREAM + 2 * i);
            uint32_t turns = session_draw_turns(&cfg->turns, &r);
            struct session *s = session_open(&w->sessions, i, turns, cfg->workload.seed,
                                             DRIVER_SESSION_STREAM + 2 * i + 1);
            w->sessions_started++;
            if (sched >= cfg->warmup_ns)
                w->sessions_in_window++;
            next_arrival(w);
            session_start_turn(w, s, w->sessions.next - 1, sched, now);
        } else {
            struct due d = session_due_pop(&w->sessions);
            struct session *s = session_get(&w->sessions, d.id);
            if (s)
                session_start_turn(w, s, d.id, d.at_ns, now);
        }
    }
    if (!w->have_next && !session_due_peek(&w->sessions) && w->sessions.open == 0)
        stop_offering(w);
}

/* A turn finished: keep what the next turns resend (its output count),
 * then schedule the next turn at r's end plus a drawn think time, or end
 * the session after its last turn. A next turn past --duration cuts the
 * session; after a stop signal, open sessions are left to be counted cut. */
static void session_turn_done(struct worker *w, const struct record *r)
{
    const struct run_config *cfg = w->d->cfg;
    if (r->session < 0 || r->turn < 0)
        return;
    uint64_t ordinal = ((uint64_t)r->session - w->idx) / w->d->n_workers;
    struct session *s = session_get(&w->sessions, ordinal);
    if (!s || (uint32_t)r->turn >= s->turns)
        return;
    s->hist[r->turn].output_tokens = r->output_tokens;
    if (!w->offering || atomic_load_explicit(&w->d->stop_level, memory_order_relaxed) != 0)
        return;
    if (s->started >= s->turns) {
        session_close(&w->sessions, ordinal);
        return;
    }
    uint64_t next = r->end_ns + dist_sample_u64(&cfg->think, &s->rng);
    if (cfg->duration_ns && next >= cfg->duration_ns) {
        w->sessions_cut++;
        session_close(&w->sessions, ordinal);
        return;
    }
    session_due_push(&w->sessions, next, ordinal);
}

/* ---- completion -------------------------------------------------------- */

/* Add r to s: throughput by time inside the window (a send or a completion
 * in [warmup, end], whichever request it belongs to, docs/metrics.md), and
 * the window's requests' latencies and SLO verdicts. Used for the total
 * and for the record's traffic class. */
static void account(struct stats *s, const struct run_config *cfg, const struct slo *slo,
                    const struct record *r)
{
    uint64_t wend = window_end_rel(cfg);
    int met = slo_is_set(slo) && slo_met(slo, r);
    if (r->sent_ns != LL_NO_TIME && r->sent_ns >= cfg->warmup_ns && r->sent_ns <= wend)
        s->win_sent++;
    if (r->end_ns != LL_NO_TIME && r->end_ns >= cfg->warmup_ns && r->end_ns <= wend) {
        s->win_completed++;
        if (r->kind == REC_OK) {
            s->win_ok++;
            s->win_output_tokens += r->output_tokens;
            s->win_prompt_tokens += r->prompt_tokens_server >= 0
                                        ? (uint64_t)r->prompt_tokens_server
                                        : r->prompt_tokens;
            /* Goodput is the warm requests': a cold one is the cold
             * section's alone. */
            s->win_slo_met += (uint64_t)(met && !r->cold);
        }
    }
    if (r->warmup || r->cold)
        return;
    stats_add_record(s, r);
    if (r->sent_ns != LL_NO_TIME)
        s->sent++;
    s->slo_met += (uint64_t)met;
}

static void record_out(struct worker *w, struct record *r)
{
    const struct run_config *cfg = w->d->cfg;
    r->cold = record_in_cold_start(r->id, cold_session(cfg, r->session), cfg->cold_requests);
    r->warmup = !r->cold && r->sched_ns < cfg->warmup_ns;
    r->step = cfg->step;
    if (r->end_ns != LL_NO_TIME && r->end_ns > w->last_end_ns)
        w->last_end_ns = r->end_ns;
    account(&w->stats, cfg, &cfg->slo, r);
    if (w->cls && r->class_idx >= 0 && (size_t)r->class_idx < w->n_cls)
        account(&w->cls[r->class_idx], cfg, &w->d->cls_slo[r->class_idx], r);
    if (r->cold) {
        stats_add_record(&w->cold, r);
        if (r->sent_ns != LL_NO_TIME)
            w->cold.sent++;
        w->cold.slo_met += (uint64_t)(slo_is_set(&cfg->slo) && slo_met(&cfg->slo, r));
    } else if (r->warmup) {
        w->warmup_records++;
    } else {
        if (r->kind == REC_OK && r->first_ns != LL_NO_TIME) {
            int second;
            if (cfg->duration_ns)
                second = r->sched_ns >= cfg->warmup_ns + (cfg->duration_ns - cfg->warmup_ns) / 2;
            else
                /* --requests counts sessions in a session run, whose
                 * record ids are session * 1000 + turn. */
                second = (r->session >= 0 ? (uint64_t)r->session : r->id) >=
                         cfg->max_requests / 2;
            hist_record(second ? w->ttft_h2 : w->ttft_h1, r->first_ns - r->sched_ns);
        }
        if (r->sent_ns != LL_NO_TIME && r->sent_ns <= window_end_rel(cfg))
            w->sent_in_window++;
        if (r->kind == REC_OK && r->first_ns != LL_NO_TIME)
            progress_count_ttft(&w->pc, r->first_ns - r->sched_ns);
    }
    recwriter_add(&w->rw, r);
    progress_count_done(&w->pc, r);
    if (recwriter_full(&w->rw))
        recwriter_flush(&w->rw, 0);
}

static void unsent_record(struct worker *w, const struct req_spec *spec, uint64_t sched_ns,
                          enum rec_kind kind, const char *detail)
{
    struct record r;
    record_init(&r, spec->index);
    r.kind = kind;
    r.sched_ns = sched_ns;
    r.class_idx = spec->class_idx;
    r.cls = spec->class_name;
    r.prompt_tokens = spec->prompt_tokens;
    r.max_tokens = spec->max_tokens;
    r.ignore_eos = spec->ignore_eos;
    r.worker = w->idx;
    uint64_t now = ll_now_ns();
    r.end_ns = now > w->d->run_start_ns ? now - w->d->run_start_ns : 0;
    snprintf(r.detail, sizeof r.detail, "%s", detail);
    record_out(w, &r);
}

static void on_done(void *ud, struct record *r)
{
    struct worker *w = ud;
    const struct run_config *cfg = w->d->cfg;
    record_out(w, r);
    in_system_add(w, -1);
    if (cfg->mode == LOAD_SESSIONS)
        session_turn_done(w, r);
    if (cfg->mode == LOAD_CLOSED && r->user >= 0 && w->offering &&
        atomic_load_explicit(&w->d->stop_level, memory_order_relaxed) == 0) {
        uint32_t local = (uint32_t)((uint64_t)r->user / w->d->n_workers);
        struct user *u = &w->users[local];
        if (!u->retired) {
            uint64_t next;
            if (cfg->pace_ns) {
                next = u->last_sched_ns + cfg->pace_ns;
                if (next < r->end_ns)
                    next = r->end_ns; /* late: send at once */
            } else {
                double think = dist_sample(&cfg->think, &u->rng);
                next = r->end_ns + (think > 0 ? (uint64_t)think : 0);
            }
            if (cfg->duration_ns && next >= cfg->duration_ns)
                u->retired = 1; /* its next request would fall outside the run */
            else
                due_heap_push(&w->users_due, next, local);
        }
    }
}

/* ---- the worker -------------------------------------------------------- */

static uint64_t next_due_abs(const struct worker *w)
{
    const struct run_config *cfg = w->d->cfg;
    if (!w->offering)
        return UINT64_MAX;
    if (cfg->mode == LOAD_CLOSED) {
        const struct due *next = due_heap_peek(&w->users_due);
        return next ? w->d->due_base_ns + next->at_ns : UINT64_MAX;
    }
    if (cfg->mode == LOAD_SESSIONS) {
        const struct due *due = session_due_peek(&w->sessions);
        uint64_t at = w->have_next ? w->next_off_ns : UINT64_MAX;
        if (due && due->at_ns < at)
            at = due->at_ns;
        return at == UINT64_MAX ? UINT64_MAX : w->d->due_base_ns + at;
    }
    return w->have_next ? w->d->due_base_ns + w->next_off_ns : UINT64_MAX;
}

/* Start offering: the worker's clocks from t = 0, and its first due
 * times: each closed-loop user's first request, or the first of its
 * arrivals (none left: it offers nothing). */
static void worker_begin(struct worker *w)
{
    struct driver *d = w->d;
    const struct run_config *cfg = d->cfg;
    w->offering = 1;
    w->infl_last_abs_ns = d->run_start_ns;
    w->next_flush_abs_ns = d->run_start_ns + DRIVER_FLUSH_NS;
    if (cfg->mode == LOAD_CLOSED) {
        for (uint32_t i = 0; i < w->n_users; i++) {
            uint64_t g = (uint64_t)i * d->n_workers + w->idx;
            /* Spread the users' first requests over one pace interval (or
             * one mean think time) instead of firing them all at t=0. */
            uint64_t spread = cfg->pace_ns ? cfg->pace_ns : (uint64_t)dist_mean(&cfg->think);
            uint64_t start = cfg->users > 1 ? spread / cfg->users * g : 0;
            due_heap_push(&w->users_due, start, i);
        }
    } else {
        offer_src_init(&w->src, cfg);
        next_arrival(w);
        if (!w->have_next)
            stop_offering(w);
    }
}

/* A stop signal: offer nothing more, and give each arrival still waiting
 * at the cap its record (cancelled). */
static void worker_stop(struct worker *w)
{
    stop_offering(w);
    while (w->q_len) {
        struct queued qd = w->q[w->q_head];
        w->q_head = (w->q_head + 1) % w->q_cap;
        w->q_len--;
        in_system_add(w, -1);
        unsent_record(w, &qd.spec, qd.sched_ns, REC_CANCELLED,
                      "cancelled: run stopped while waiting for a slot");
    }
}

/* A worker's thread: offer what is due, let the transport run, sleep in
 * transport_poll until the next due time, the next records flush or the
 * end of the grace; after a stop signal, cancel what is in flight when
 * the grace ends (at once on a second signal). Ends when it offers
 * nothing more and nothing is in flight or queued. */
/* This thread's CPU time (user + system), ns, and involuntary context
 * switches so far; 0 when getrusage fails. */
static int thread_usage(uint64_t *cpu_ns, uint64_t *invol)
{
    struct rusage ru;
    if (getrusage(RUSAGE_THREAD, &ru) != 0) {
        *cpu_ns = *invol = 0;
        return -1;
    }
    *cpu_ns = (uint64_t)ru.ru_utime.tv_sec * LL_NS_PER_SEC + (uint64_t)ru.ru_utime.tv_usec * 1000 +
              (uint64_t)ru.ru_stime.tv_sec * LL_NS_PER_SEC + (uint64_t)ru.ru_stime.tv_usec * 1000;
    *invol = (uint64_t)ru.ru_nivcsw;
    return 0;
}

static void *worker_main(void *arg)
{
    struct worker *w = arg;
    struct driver *d = w->d;
    const struct run_config *cfg = d->cfg;
    int cancelled = 0;
    uint64_t cpu0, invol0, t0 = ll_now_ns();
    int usage_ok = thread_usage(&cpu0, &invol0) == 0;

    worker_begin(w);
    for (;;) {
        uint64_t now = ll_now_ns();
        int level = atomic_load_explicit(&d->stop_level, memory_order_acquire);
        if (level >= 1 && w->offering)
            worker_stop(w);
        if (!cancelled && (level >= 2 || (level == 1 && now >= atomic_load(&d->cancel_at_abs_ns)))) {
            transport_cancel_all(w->t, REC_CANCELLED, "cancelled: run stopped (grace expired)");
            cancelled = 1;
        }
        if (cfg->mode == LOAD_CAPPED)
            dispatch_queue(w); /* slots freed since the last pass go to the queue first */
        if (w->offering) {
            if (cfg->mode == LOAD_CLOSED) {
                dispatch_closed(w, now);
                if (!closed_active(w))
                    stop_offering(w);
            } else if (cfg->mode == LOAD_SESSIONS) {
                dispatch_sessions(w, now);
            } else {
                dispatch_open(w, now);
            }
        }
        if (cfg->mode == LOAD_CAPPED)
            dispatch_queue(w);
        transport_kick(w->t);
        if (now >= w->next_flush_abs_ns) {
            recwriter_flush(&w->rw, 0);
            w->next_flush_abs_ns = now + DRIVER_FLUSH_NS;
        }
        if (!w->offering && transport_inflight(w->t) == 0 && w->q_len == 0)
            break;
        uint64_t deadline = next_due_abs(w);
        if (w->offering && cfg->mode == LOAD_CLOSED && w->users_due.n == 0)
            deadline = UINT64_MAX;
        if (level == 1 && !cancelled)
            deadline = LL_MIN(deadline, atomic_load(&d->cancel_at_abs_ns));
        deadline = LL_MIN(deadline, w->next_flush_abs_ns);
        transport_poll(w->t, deadline);
    }
    recwriter_stop(&w->rw);
    uint64_t cpu1, invol1;
    if (usage_ok && thread_usage(&cpu1, &invol1) == 0) {
        w->cpu_ns = cpu1 - cpu0;
        w->invol_switches = invol1 - invol0;
        w->wall_ns = ll_now_ns() - t0;
    }
    atomic_store_explicit(&w->finished, 1, memory_order_release);
    return NULL;
}

/* ---- run: start ------------------------------------------------------- */

/* Set up worker i of d (zeroed memory): its statistics, counters and
 * histograms, its transport, its records writer with the writer thread
 * running, and for a closed loop its users (user g = k * W + i, each with
 * its own think-time stream). Returns 0, or LL_E_IO with the reason in
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
    if (driver_class_count(cfg)) {
        w->n_cls = driver_class_count(cfg);
        w->cls = ll_calloc(w->n_cls, sizeof *w->cls);
        for (size_t k = 0; k < w->n_cls; k++)
            stats_init(&w->cls[k]);
    }
    struct transport_config tc = cfg->transport;
    tc.run_start_ns = d->run_start_ns;
    tc.warmup_ns = cfg->warmup_ns;
    tc.cold_requests = cfg->cold_requests;
    tc.cold_by_session = cfg->mode == LOAD_SESSIONS;
    tc.worker = i;
    w->t = transport_new(&tc, &w->stats, on_done, w, err, errlen);
    if (!w->t)
        return LL_E_IO;
    if (recwriter_open(&w->rw, cfg->records_fd, err, errlen) != 0)
        return LL_E_IO;
    recwriter_start(&w->rw);
    if (cfg->mode == LOAD_CLOSED) {
        w->n_users = cfg->users / d->n_workers + (i < cfg->users % d->n_workers);
        w->users = ll_calloc(w->n_users ? w->n_users : 1, sizeof *w->users);
        due_heap_init(&w->users_due, w->n_users ? w->n_users : 1);
        for (uint32_t k = 0; k < w->n_users; k++) {
            uint64_t g = (uint64_t)k * d->n_workers + i;
            rng_seed(&w->users[k].rng, cfg->workload.seed, DRIVER_THINK_STREAM + g);
        }
    }
    return 0;
}

/* Undo worker_setup (any part of it) and what the worker's run left. */
static void worker_release(struct worker *w)
{
    transport_free(w->t);
    recwriter_reset(&w->rw);
    free(w->users);
    due_heap_reset(&w->users_due);
    free(w->q);
    session_set_reset(&w->sessions);
    progress_counters_reset(&w->pc);
    hist_free(w->ttft_h1);
    hist_free(w->ttft_h2);
    for (size_t k = 0; k < w->n_cls; k++)
        stats_free(&w->cls[k]);
    free(w->cls);
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
    if (cfg->mode == LOAD_CLOSED && d->n_workers > cfg->users)
        d->n_workers = cfg->users;
    memset(res, 0, sizeof *res);
    stats_init(&res->stats);
    stats_init(&res->cold);
    res->ttft_first_half = hist_new();
    res->ttft_second_half = hist_new();
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
        }
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
    res->run_start_abs_ns = d->run_start_ns;
    d->due_base_ns = d->run_start_ns + test_send_delay_ns();
    for (uint32_t i = 0; i < d->n_workers; i++)
        transport_set_run_start(d->workers[i].t, d->run_start_ns);
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
    size_t series_cap;          /* res->series allocated, points */
    int guard_said;             /* the spend guard's stop is on stderr */
    int prompts_judged;         /* the prompt check has judged (driver_prompts) */
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
    progress_line_init(&sv->pl, d->run_start_ns, cfg->progress == 1, cfg->mode == LOAD_CLOSED,
                       cfg->users, cfg->arrival.rate_per_s);
    sv->progress_every_ns = cfg->progress_interval_ns ? cfg->progress_interval_ns
                                                      : LL_NS_PER_SEC;
    sv->next_progress_abs_ns = cfg->progress ? d->run_start_ns + sv->progress_every_ns
                                             : UINT64_MAX;
    sv->sample_every_ns = cfg->sample_interval_ns ? cfg->sample_interval_ns
                                                  : 100 * LL_NS_PER_MS;
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
 * (final) on what came; warn on stderr when it fails, once per process. */
static void supervise_prompts(struct driver *d, struct supervisor *sv, int final)
{
    static atomic_int said;
    enum summary_prompts prompts = driver_prompts(d->cfg);
    if (sv->prompts_judged || prompts == SUMMARY_PROMPTS_OTHER)
        return;
    uint64_t n = 0, req = 0, srv = 0, done = 0, ok = 0, k4xx = 0;
    for (uint32_t i = 0; i < d->started; i++) {
        struct progress_counters *pc = d->pcs[i];
        n += atomic_load_explicit(&pc->usage_n, memory_order_acquire);
        req += atomic_load_explicit(&pc->usage_requested, memory_order_relaxed);
        srv += atomic_load_explicit(&pc->usage_server, memory_order_relaxed);
        done += atomic_load_explicit(&pc->done, memory_order_relaxed);
        ok += atomic_load_explicit(&pc->kind[REC_OK], memory_order_relaxed);
        k4xx += atomic_load_explicit(&pc->kind[REC_HTTP_4XX], memory_order_relaxed);
    }
    char msg[512] = "";
    if (n >= SUMMARY_PROMPT_FIRST || (final && n > 0)) {
        if (summary_prompt_off(req, srv))
            summary_prompt_warning(msg, sizeof msg, req, srv, n, prompts);
    } else if (ok == 0 && k4xx == done && (done >= SUMMARY_PROMPT_FIRST || (final && done))) {
        if (prompts == SUMMARY_PROMPTS_SYNTHETIC)
            summary_prompt_4xx_warning(msg, sizeof msg, done);
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
        uint64_t due = LL_MIN(LL_MIN(sv->next_progress_abs_ns, sv->next_sample_abs_ns),
                              sv->next_live_abs_ns);
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

/* Merge: fold each started worker's statistics, histograms and counts
 * into res, once, after the joins (no shared writes while the run goes).
 * The in-flight area and the latest record end go to d for run_window. */
static void run_merge(struct driver *d, struct driver_result *res)
{
    struct prefix_share prefix;
    prefix_share_init(&prefix);
    for (uint32_t i = 0; i < d->started; i++) {
        struct worker *w = &d->workers[i];
        stats_merge(&res->stats, &w->stats);
        stats_merge(&res->cold, &w->cold);
        hist_merge(res->ttft_first_half, w->ttft_h1);
        hist_merge(res->ttft_second_half, w->ttft_h2);
        for (size_t k = 0; k < w->n_cls; k++)
            stats_merge(&res->class_stats[k], &w->cls[k]);
        res->sent_in_window += w->sent_in_window;
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
        res->sessions_cut += w->sessions_cut + w->sessions.open;
        d->infl_area += w->infl_area;
        res->records_lost += w->rw.lost;
        d->last_end_ns = LL_MAX(d->last_end_ns, w->last_end_ns);
    }
    res->workload_cached_share = prefix_share_implied(&prefix);
    prefix_share_reset(&prefix);
}

/* Window: the measurement window's length, [warmup, duration], or up to
 * the last record's end for a run bounded by --requests, stopped by a
 * signal or by the spend guard (its drain is part of what it measured; a
 * full --duration would dilute every rate by the time nothing was
 * offered); never 0. Then the figures that divide by it or end with it:
 * mean in flight, the maximum, elapsed time and why offering stopped. */
static void run_window(struct driver *d, struct driver_result *res)
{
    const struct run_config *cfg = d->cfg;
    uint64_t wend = d->last_end_ns;
    int cut = res->interrupted || atomic_load(&d->spend_stop);
    if (cfg->duration_ns && (!cut || wend > cfg->duration_ns))
        wend = cfg->duration_ns;
    res->window_ns = wend > cfg->warmup_ns ? wend - cfg->warmup_ns : 0;
    res->inflight_max = atomic_load(&d->in_system_max);
    if (res->window_ns == 0)
        res->window_ns = 1;
    res->inflight_mean = d->infl_area / (double)res->window_ns;
    res->elapsed_ns = ll_now_ns() - d->run_start_ns;
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
        if (!stopped_before_launch(&d, res))
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
    free(res->series);
    for (size_t k = 0; k < res->n_classes; k++)
        stats_free(&res->class_stats[k]);
    free(res->class_stats);
    res->class_stats = NULL;
    res->n_classes = 0;
    res->ttft_first_half = res->ttft_second_half = NULL;
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

void offer_spec(const struct run_config *cfg, uint64_t index, const struct burst *b,
                struct req_spec *out)
{
    workload_spec(&cfg->workload, index, out);
    if (b && b->prompt_tokens)
        out->prompt_tokens = b->prompt_tokens;
    if (b && b->output_tokens)
        out->max_tokens = b->output_tokens;
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
    uint64_t tokens = 0, i, off;
    const struct burst *b;
    while (offer_src_next(&src, cfg, &i, &off, &b)) {
        struct req_spec s;
        offer_spec(cfg, i, b, &s);
        tokens += (uint64_t)s.prompt_tokens + s.max_tokens;
        if (cfg->max_tokens_total && tokens > cfg->max_tokens_total)
            break;
        fprintf(f, "{\"index\":%llu,\"sched_ns\":%llu,\"prompt_tokens\":%u,\"max_tokens\":%u}\n",
                (unsigned long long)i, (unsigned long long)off, s.prompt_tokens, s.max_tokens);
    }
    if (fclose(f) != 0) {
        snprintf(err, errlen, "%s: %s", path, strerror(errno));
        return LL_E_IO;
    }
    return 0;
}
