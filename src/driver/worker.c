/* worker.c: one worker thread of a load point: it offers its share of
 * the schedule on time (open loop, closed loop, capped, sessions, replay),
 * accounts what finishes (Little's law, the statistics, the records
 * writer) and sleeps on a timerfd until the next scheduled time. Arrival
 * times are absolute: a worker that wakes late sends everything that is
 * due and records the lateness, so a slow moment never shifts the
 * schedule. run.c starts, supervises and merges the workers. */
#include "driver/driver_int.h"

#include <errno.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>

#include "measure/hist.h"
#include "util/rng.h"
#include "util/util.h"
#include "workload/chatbody.h"
#include "workload/endpoints.h"

/* ---- in-system accounting (Little's law) ------------------------------- */

/* Integrate this worker's requests in the system over the window. It runs
 * on every change, whether or not the worker still offers: requests that
 * are still in flight after its last arrival are in the system too. */
static void infl_advance(struct worker *w, uint64_t now_abs)
{
    const struct run_config *cfg = w->d->cfg;
    uint64_t from = w->d->run_start_ns + cfg->warmup_ns;
    uint64_t to = cfg->duration_ns ? w->d->run_start_ns + cfg->duration_ns : UINT64_MAX;
    uint64_t a = LL_MAX(w->infl_last_abs_ns, from);
    uint64_t b = LL_MIN(now_abs, to);
    if (b > a)
        w->infl_area += (double)w->in_system * (double)(b - a);
    /* past --duration, apart (run_merge) */
    a = LL_MAX(a, to);
    if (now_abs > a)
        w->infl_area_past += (double)w->in_system * (double)(now_abs - a);
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
            while (all > max && !atomic_compare_exchange_weak_explicit(&d->in_system_max, &max, all,
                                                                       memory_order_relaxed,
                                                                       memory_order_relaxed)) {
            }
        }
    } else {
        atomic_fetch_sub_explicit(&d->in_system, 1, memory_order_relaxed);
    }
}

/* ---- offering ---------------------------------------------------------- */

/* The schedule ran out before --duration ended it: --requests, or the
 * trace's last entry (a schedule that --duration ends is not asked for
 * its next arrival again). Returns 0. */
static int ran_out(struct worker *w)
{
    atomic_store(&w->d->ran_out, 1);
    return 0;
}

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
            return ran_out(w);
        *off_ns = trace_scaled_sched_ns(cfg->trace, (size_t)*index, cfg->trace_factor);
    } else if (cfg->mode == LOAD_SESSIONS) {
        *off_ns = arrival_next_ns(&w->src.arr);
        *index = w->gen_index++;
        if (cfg->max_requests && *index >= cfg->max_requests)
            return ran_out(w);
    } else {
        if (cfg->max_requests && w->src.index >= cfg->max_requests)
            return ran_out(w);
        return offer_src_next(&w->src, cfg, index, off_ns, burst);
    }
    return !(cfg->duration_ns && *off_ns >= cfg->duration_ns);
}

/* Advance to this worker's next arrival (driver_takes: this shard's, and
 * among the shard's this worker's): sets
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
        int mine = driver_takes(w->d, w->idx, i);
        if ((mine && !sessions) || guard) {
            if (cfg->trace)
                replay_spec(cfg->trace, (size_t)i, cfg->workload.ignore_eos, &cfg->workload.calib,
                            &w->next_spec);
            else
                offer_spec(cfg, i, b, &w->next_spec);
        }
        if (guard) {
            w->tokens_cum += (uint64_t)w->next_spec.prompt_tokens + w->next_spec.image_tokens +
                             w->next_spec.max_tokens;
            if (w->tokens_cum > cfg->max_tokens_total) {
                atomic_store(&w->d->spend_stop, 1);
                break;
            }
        }
        if (mine) {
            w->next_index = i;
            w->next_off_ns = off;
            w->have_next = 1;
            /* Its images now, while the worker would otherwise wait for
             * its time (transport.h). */
            if (!sessions)
                transport_prepare(w->t, &w->next_spec);
            return;
        }
    }
    w->have_next = 0;
}

/* The closed loop's and the sessions' spend guard: their order of
 * requests depends on the server anyway, so a shared counter decides,
 * against this shard's share of the bound (guard_total). */
static int spend_guard_allows(struct worker *w, const struct req_spec *spec)
{
    const struct run_config *cfg = w->d->cfg;
    if (!cfg->max_tokens_total)
        return 1;
    if (atomic_load(&w->d->spend_stop))
        return 0;
    uint64_t cost = (uint64_t)spec->prompt_tokens + spec->image_tokens + spec->max_tokens;
    uint64_t before = atomic_fetch_add(&w->d->tokens_offered, cost);
    if (before + cost > w->d->guard_total) {
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
        w->stats.win_scheduled_cold += sched_ns >= cfg->warmup_ns;
        return late;
    }
    if (sched_ns < cfg->warmup_ns)
        return late;
    w->stats.scheduled++;
    if (w->cls && class_idx >= 0 && (size_t)class_idx < w->n_cls)
        w->cls[class_idx].scheduled++;
    if (w->eps)
        w->eps[endpoints_for_spec(&cfg->transport.endpoints, spec)].scheduled++;
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
    while (due_heap_peek(&w->users_due) &&
           w->d->due_base_ns + due_heap_peek(&w->users_due)->at_ns <= now) {
        struct due due = due_heap_pop(&w->users_due);
        struct user *u = &w->users[due.id];
        uint64_t global_user = driver_global(w->d, w->idx, due.id);
        if (cfg->duration_ns && due.at_ns >= cfg->duration_ns) {
            u->retired = 1;
            continue;
        }
        if (cfg->max_requests && atomic_fetch_add(&w->d->closed_started, 1) >= w->d->closed_max) {
            u->retired = 1;
            ran_out(w);
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
 * prompt is workload request s->index * SESSION_MAX_TURNS + turn (in the
 * class of turn 0), and it resends the earlier turns. The spend guard counts the whole context. A
 * later turn the guard refuses ends the session (cut); a first turn it
 * refuses closes a session that never started (the caller counts none).
 * submit comes last: a request that fails at once finishes
 * (worker_on_done) inside it and may close s. Returns 0 when the turn was
 * sent, -1 when the guard refused it. */
static int session_start_turn(struct worker *w, struct session *s, uint64_t ordinal,
                              uint64_t sched_ns, uint64_t now)
{
    const struct run_config *cfg = w->d->cfg;
    uint32_t k = s->started;
    struct req_spec spec;
    /* The class is the session's, drawn by its first turn: a conversation
     * stays on one API, and in one class's table. */
    workload_spec_class(&cfg->workload, s->index * SESSION_MAX_TURNS + k,
                        k > 0 ? s->hist[0].spec.class_idx : -1, &spec);
    spec.session = (int64_t)s->index;
    spec.turn = (int32_t)k;
    s->hist[k].spec = spec;
    s->hist[k].output_tokens = 0;
    s->hist[k].unanswered = 0;
    spec.history = s->hist;
    spec.history_len = k;
    struct req_spec cost = spec;
    cost.prompt_tokens = chatbody_prompt_tokens(&spec);
    if (!spend_guard_allows(w, &cost)) {
        if (k > 0)
            w->sessions_cut += (uint64_t)s->in_window;
        session_close(&w->sessions, ordinal);
        return -1;
    }
    s->started++;
    uint64_t late = count_scheduled(w, &spec, sched_ns, now);
    in_system_add(w, +1);
    submit(w, &spec, sched_ns, late, -1);
    return 0;
}

/* Open session i, arriving at sched_ns, and send its first turn; counted
 * started only when the spend guard let that turn go. */
static void session_arrive(struct worker *w, uint64_t i, uint64_t sched_ns, uint64_t now)
{
    const struct run_config *cfg = w->d->cfg;
    struct rng r;
    rng_seed(&r, cfg->workload.seed, DRIVER_SESSION_STREAM + 2 * i);
    uint32_t turns = session_draw_turns(&cfg->turns, &r);
    struct session *s =
        session_open(&w->sessions, i, turns, cfg->workload.seed, DRIVER_SESSION_STREAM + 2 * i + 1);
    int in_window = sched_ns >= cfg->warmup_ns;
    s->in_window = in_window;
    /* Counted before the send: a first turn that fails at once closes s
     * inside it (session_turn_done), and a refused one is taken back. */
    w->sessions_started++;
    w->sessions_in_window += (uint64_t)in_window;
    if (session_start_turn(w, s, w->sessions.next - 1, sched_ns, now) != 0) {
        w->sessions_started--;
        w->sessions_in_window -= (uint64_t)in_window;
        return;
    }
    w->last_session_start_ns = LL_MAX(w->last_session_start_ns, sched_ns);
}

/* Offer what is due, in time order: new sessions (their first turn at the
 * arrival time) and later turns (at the end of the previous turn plus the
 * think time). Once the spend guard has tripped (in any worker) no new
 * session arrives; the open ones go on until a turn of theirs is refused.
 * The worker stops offering when no arrival is left and every session has
 * ended. */
static void dispatch_sessions(struct worker *w, uint64_t now)
{
    uint64_t t0 = w->d->due_base_ns;
    for (;;) {
        if (w->have_next && atomic_load(&w->d->spend_stop))
            w->have_next = 0;
        const struct due *due = session_due_peek(&w->sessions);
        int arrival = w->have_next && t0 + w->next_off_ns <= now;
        int turn = due && t0 + due->at_ns <= now;
        if (!arrival && !turn)
            break;
        if (arrival && (!turn || w->next_off_ns <= due->at_ns)) {
            uint64_t i = w->next_index, sched = w->next_off_ns;
            next_arrival(w);
            session_arrive(w, i, sched, now);
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
 * the session after its last turn. A turn that failed (any kind but ok
 * and cancelled) ends the session: the conversation broke, and llmload
 * does not invent the answer it would resend (counted when the session
 * arrived in the window, as the summary's started). A turn the client
 * cancelled keeps its partial answer; one with no output token (cancelled
 * before its first, or an ok answer of none) is left out of what later
 * turns resend (no empty assistant message, which some APIs refuse). A
 * next turn past --duration cuts the
 * session. After a stop signal the drain still closes a session whose
 * last turn came back (ended, not cut) and one whose turn failed (failed);
 * a session with turns still unsent is left open, to be counted cut, and
 * one whose last turn the grace's end cancelled is cut: that turn never
 * completed, so the conversation did not end (the parent counted it
 * ended). */
static void session_turn_done(struct worker *w, const struct record *r)
{
    const struct run_config *cfg = w->d->cfg;
    if (r->session < 0 || r->turn < 0)
        return;
    uint64_t ordinal = driver_local(w->d, (uint64_t)r->session);
    struct session *s = session_get(&w->sessions, ordinal);
    if (!s || (uint32_t)r->turn >= s->turns)
        return;
    s->hist[r->turn].output_tokens = r->output_tokens;
    s->hist[r->turn].unanswered = r->output_tokens == 0;
    if (s->started >= s->turns) {
        if (w->cancelling)
            w->sessions_cut += (uint64_t)s->in_window;
        session_close(&w->sessions, ordinal);
        return;
    }
    if (r->kind != REC_OK && r->kind != REC_CANCELLED) {
        w->sessions_failed += (uint64_t)s->in_window;
        session_close(&w->sessions, ordinal);
        return;
    }
    /* Stopped with turns still to send: left open, counted cut. */
    if (!w->offering || atomic_load_explicit(&w->d->stop_level, memory_order_relaxed) != 0)
        return;
    uint64_t next = r->end_ns + dist_sample_u64(&cfg->think, &s->rng);
    if (cfg->duration_ns && next >= cfg->duration_ns) {
        w->sessions_cut += (uint64_t)s->in_window;
        session_close(&w->sessions, ordinal);
        return;
    }
    session_due_push(&w->sessions, next, ordinal);
}

/* ---- hist.jsonl --------------------------------------------------------- */

/* Write the worker's open hist.jsonl window if it counted anything, and
 * empty it. Once a second at most, off the per-token path: the line's
 * allocation is the window's, not a token's. A failed write is said once
 * on stderr and the run goes on (requests.jsonl holds every record). */
static void hist_window_flush(struct worker *w)
{
    if (!w->hw_on || histlog_window_empty(&w->hw))
        return;
    if (histlog_write_fd(w->d->cfg->hist_fd, &w->hw) != 0 && !w->hw_error) {
        ll_errorf("writing hist.jsonl: %s", strerror(errno));
        w->hw_error = 1;
    }
    histlog_window_clear(&w->hw);
}

/* Move the open window to the one that holds t_ns (from t = 0), writing
 * the one it leaves: windows close as the worker's clock passes their
 * end. A time before the open window (a record whose end came before the
 * last move) is counted in the open window. */
static void hist_window_roll(struct worker *w, uint64_t t_ns)
{
    uint64_t start = t_ns / HISTLOG_WINDOW_NS * HISTLOG_WINDOW_NS;
    if (!w->hw_on || start <= w->hw.t_ns)
        return;
    hist_window_flush(w);
    w->hw.t_ns = start;
}

/* ---- completion -------------------------------------------------------- */

static void record_out(struct worker *w, struct record *r)
{
    const struct run_config *cfg = w->d->cfg;
    r->cold = record_in_cold_start(r->id, cold_session(cfg, r->session), cfg->cold_requests);
    r->warmup = !r->cold && r->sched_ns < cfg->warmup_ns;
    r->step = cfg->step;
    if (r->end_ns != LL_NO_TIME && r->end_ns > w->last_end_ns)
        w->last_end_ns = r->end_ns;
    /* A request meets its class's SLO (its own, else --slo), in the whole
     * run's figures as in its class's and as a sweep step counts it. */
    int in_cls = w->cls && r->class_idx >= 0 && (size_t)r->class_idx < w->n_cls;
    const struct slo *slo = in_cls ? &w->d->cls_slo[r->class_idx] : &cfg->slo;
    int met = slo_judge_any(slo, w->d->any_slo, r);
    int cls_met = in_cls && slo_is_set(slo) ? slo_judge(slo, r) : 0; /* as stats_account */
    int in_eps = w->eps && r->endpoint >= 0 && (size_t)r->endpoint < w->n_eps;
    uint64_t wend = cfg->duration_ns ? cfg->duration_ns : UINT64_MAX;
    stats_account_met(&w->stats, r, cfg->warmup_ns, wend, met);
    if (in_cls)
        stats_account_met(&w->cls[r->class_idx], r, cfg->warmup_ns, wend, cls_met);
    if (in_eps)
        stats_account_met(&w->eps[r->endpoint], r, cfg->warmup_ns, wend, met);
    if (cfg->duration_ns) {
        /* after --duration, apart (run_merge) */
        uint64_t past = LL_MAX(cfg->warmup_ns, cfg->duration_ns + 1);
        stats_account_window(&w->past, r, past, UINT64_MAX, met);
        if (in_cls)
            stats_account_window(&w->past_cls[r->class_idx], r, past, UINT64_MAX, cls_met);
        if (in_eps)
            stats_account_window(&w->past_eps[r->endpoint], r, past, UINT64_MAX, met);
    }
    if (!r->cold && r->kind == REC_OK && r->first_ns != LL_NO_TIME) {
        uint64_t ttft = r->first_ns - r->sched_ns;
        if (!w->ttft_least_ns || ttft < w->ttft_least_ns)
            w->ttft_least_ns = ttft;
    }
    if (r->cold) {
        stats_add_record(&w->cold, r);
        if (r->sent_ns != LL_NO_TIME)
            w->cold.sent++;
        w->cold.slo_met += (uint64_t)(met == 1);
    } else if (r->warmup) {
        w->warmup_records++;
    } else {
        if (r->kind == REC_OK && r->first_ns != LL_NO_TIME) {
            /* Both halvings that may apply: which ended the offering is
             * known at the end (run_merge). */
            uint64_t ttft = r->first_ns - r->sched_ns;
            if (cfg->duration_ns) {
                uint64_t mid = cfg->warmup_ns + (cfg->duration_ns - cfg->warmup_ns) / 2;
                hist_record(r->sched_ns >= mid ? w->ttft_h2 : w->ttft_h1, ttft);
            }
            /* (not for a trace or sessions, whose steadiness is not
             * judged: 16 bytes a request for nothing) */
            if (driver_sched_count(cfg) && !cfg->trace && cfg->mode != LOAD_SESSIONS) {
                w->ttft_order = ll_grow(w->ttft_order, &w->ttft_order_cap,
                                        (w->n_ttft_order + 1) * sizeof *w->ttft_order, 4096);
                w->ttft_order[w->n_ttft_order++] = (struct sched_ttft){r->sched_ns, ttft};
            }
            if (r->end_ns != LL_NO_TIME && r->end_ns >= r->first_ns)
                hist_record(w->stream, r->end_ns - r->first_ns);
        }
        if (r->sent_ns != LL_NO_TIME && r->sent_ns <= wend)
            w->sent_in_window++;
        else if (r->sent_ns != LL_NO_TIME)
            w->sent_past++;
        if (w->hw_on) {
            hist_window_roll(w, r->end_ns != LL_NO_TIME ? r->end_ns : 0);
            histlog_window_add_record(&w->hw, r);
        }
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
    if (w->eps)
        r.endpoint = (int32_t)endpoints_for_spec(&w->d->cfg->transport.endpoints, spec);
    uint64_t now = ll_now_ns();
    r.end_ns = now > w->d->run_start_ns ? now - w->d->run_start_ns : 0;
    snprintf(r.detail, sizeof r.detail, "%s", detail);
    record_out(w, &r);
}

void worker_on_done(void *ud, struct record *r)
{
    struct worker *w = ud;
    const struct run_config *cfg = w->d->cfg;
    record_out(w, r);
    in_system_add(w, -1);
    if (cfg->mode == LOAD_SESSIONS)
        session_turn_done(w, r);
    if (cfg->mode == LOAD_CLOSED && r->user >= 0 && w->offering &&
        atomic_load_explicit(&w->d->stop_level, memory_order_relaxed) == 0) {
        uint32_t local = (uint32_t)driver_local(w->d, (uint64_t)r->user);
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

/* Closed loop: encode the next due user's images while the worker waits
 * for its time (transport_prepare), as next_arrival does for the open
 * loop, so encoding is not in that request's latency. Once per request
 * (closed_prepared); a user that comes due sooner in the meantime takes
 * the transport's one prepared set over, and the other encodes at its
 * send. */
static void prepare_closed(struct worker *w)
{
    const struct run_config *cfg = w->d->cfg;
    const struct due *next = due_heap_peek(&w->users_due);
    if (!next)
        return;
    uint64_t index = w->users[next->id].turn * cfg->users + driver_global(w->d, w->idx, next->id);
    if (w->closed_prepared == index + 1)
        return;
    w->closed_prepared = index + 1;
    struct req_spec spec;
    workload_spec(&cfg->workload, index, &spec);
    transport_prepare(w->t, &spec);
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
    w->images = workload_has_images(&cfg->workload);
    w->infl_last_abs_ns = d->run_start_ns;
    w->next_flush_abs_ns = d->run_start_ns + DRIVER_FLUSH_NS;
    if (cfg->mode == LOAD_CLOSED) {
        /* Spread the users' first requests over one pace interval (or
         * one mean think time) instead of firing them all at t=0: each
         * user then sits at its own phase of the cycle, as in the steady
         * state. The ramp fits inside the run, as a ramp-up does in other
         * closed-loop tools: a 20 s think time in a 2 s run would
         * otherwise start most users after the end. */
        uint64_t spread = cfg->pace_ns ? cfg->pace_ns : (uint64_t)dist_mean(&cfg->think);
        if (cfg->duration_ns && spread > cfg->duration_ns)
            spread = cfg->duration_ns;
        for (uint32_t i = 0; i < w->n_users; i++) {
            uint64_t g = driver_global(d, w->idx, i);
            uint64_t start = cfg->users > 1 ? spread / cfg->users * g : 0;
            if (cfg->duration_ns && start >= cfg->duration_ns)
                w->users[i].retired = 1; /* never due inside the run */
            else
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

void *worker_main(void *arg)
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
        if (!cancelled &&
            (level >= 2 || (level == 1 && now >= atomic_load(&d->cancel_at_abs_ns)))) {
            w->cancelling = 1;
            transport_cancel_all(w->t, REC_CANCELLED, "cancelled: run stopped (grace expired)");
            w->cancelling = 0;
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
            hist_window_roll(w, now > d->run_start_ns ? now - d->run_start_ns : 0);
        }
        if (!w->offering && transport_inflight(w->t) == 0 && w->q_len == 0)
            break;
        if (w->offering && cfg->mode == LOAD_CLOSED && w->images)
            prepare_closed(w);
        uint64_t deadline = next_due_abs(w);
        if (w->offering && cfg->mode == LOAD_CLOSED && w->users_due.n == 0)
            deadline = UINT64_MAX;
        if (level == 1 && !cancelled)
            deadline = LL_MIN(deadline, atomic_load(&d->cancel_at_abs_ns));
        deadline = LL_MIN(deadline, w->next_flush_abs_ns);
        transport_poll(w->t, deadline);
    }
    recwriter_stop(&w->rw);
    hist_window_flush(w);
    uint64_t cpu1, invol1;
    if (usage_ok && thread_usage(&cpu1, &invol1) == 0) {
        w->cpu_ns = cpu1 - cpu0;
        w->invol_switches = invol1 - invol0;
        w->wall_ns = ll_now_ns() - t0;
    }
    atomic_store_explicit(&w->finished, 1, memory_order_release);
    return NULL;
}
