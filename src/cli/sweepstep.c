/* sweepstep.c: one step of `llmload sweep` (see sweepstep.h): its plan,
 * configuration and schedule, a --cold-restart before it, one driver_run,
 * its facts (the driver's, the server's scrapes and the GPUs' energy over
 * its window), its figures from its records, its steps.jsonl line and its
 * lines on stderr. Moved from cmd_sweep.c, which runs the ladder of steps. */
#include "cli/sweepstep.h"

#include <errno.h>
#include <inttypes.h>
#include <jansson.h>
#include <math.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "cli/runsetup.h"
#include "driver/driver.h"
#include "measure/summary.h"
#include "metrics/energy.h"
#include "metrics/promsource.h"
#include "metrics/scrape.h"
#include "sweep/sweep_json.h"
#include "util/spawn.h"
#include "util/util.h"
#include "workload/wlfile.h"

/* Wait ns (the gap between steps), or until a SIGINT or SIGTERM comes
 * (they stay blocked for the whole sweep; the driver takes them during a
 * step). 1 when one came: it is taken. */
int sweepstep_sleep(uint64_t ns)
{
    sigset_t set;
    sigemptyset(&set);
    sigaddset(&set, SIGINT);
    sigaddset(&set, SIGTERM);
    uint64_t end = ll_now_ns() + ns;
    for (;;) {
        uint64_t now = ll_now_ns(), left = end > now ? end - now : 0;
        struct timespec ts = {.tv_sec = (time_t)(left / LL_NS_PER_SEC),
                              .tv_nsec = (long)(left % LL_NS_PER_SEC)};
        int sig = sigtimedwait(&set, NULL, &ts);
        if (sig == SIGINT || sig == SIGTERM)
            return 1;
        if (left == 0 || (sig < 0 && errno == EAGAIN))
            return 0;
    }
}

/* --prometheus: each replica's own series joined to the step's window
 * [t0, t1] as the aggregate's (the inner span), and the routing-imbalance
 * rule's words over them (metrics/promreplicas.c), into v->replicas.
 * Nothing for a direct scrape. */
static void join_step_replicas(const struct sweep_run *sr, uint64_t t0, uint64_t t1,
                               struct sweep_server *v)
{
    struct promsource_replica reps[SWEEP_MAX_REPLICAS];
    size_t n = promsource_replicas_join(sr->scraper, t0, t1, SCRAPE_SPAN_INNER, reps,
                                        SWEEP_MAX_REPLICAS, NULL);
    struct sweep_replicas *out = &v->replicas;
    out->count = out->n = n;
    for (size_t i = 0; i < n; i++) {
        struct sweep_replica *r = &out->r[i];
        const struct scrape_join *j = &reps[i].j;
        int ok = reps[i].rc == 0;
        snprintf(r->name, sizeof r->name, "%.127s", reps[i].name);
        r->waiting_mean = ok && j->waiting.present ? j->waiting.mean : NAN;
        r->waiting_max = ok && j->waiting.present ? j->waiting.max : NAN;
        r->running_mean = ok && j->running.present ? j->running.mean : NAN;
        r->generation_tokens =
            ok && j->generation_tokens.present ? j->generation_tokens.delta : NAN;
        r->span_s = ok && j->span_to_abs_ns > j->span_from_abs_ns
                        ? (double)(j->span_to_abs_ns - j->span_from_abs_ns) / 1e9
                        : NAN;
    }
    promsource_imbalance(reps, n, out->imbalance, sizeof out->imbalance);
}

/* Join the scrapes to step s's window (run_start_abs_ns is the step's
 * t = 0) with the inner span, so back-to-back steps do not share counts,
 * and keep the figures in s->f.server. A window with no ok scrape keeps
 * only the counts (NAN figures): a gap, never a failed step. */
static void join_step(const struct sweep_run *sr, uint64_t run_start_abs_ns, struct sweep_facts *f)
{
    struct sweep_server *v = &f->server;
    sweep_server_clear(v);
    if (!sr->scraper)
        return;
    v->present = 1;
    uint64_t t0 = run_start_abs_ns + f->warmup_ns, t1 = t0 + f->window_ns;
    struct scrape_join j;
    int rc = scrape_join(sr->scraper, t0, t1, SCRAPE_SPAN_INNER, &j);
    if (rc != 0 && rc != LL_E_NOTFOUND)
        return;
    v->scrapes = j.scrapes;
    v->failed = j.failed;
    if (rc != 0)
        return;
    join_step_replicas(sr, t0, t1, v);
    snprintf(v->engine, sizeof v->engine, "%s", engines_kind_name(j.engine));
    if (j.waiting.present) {
        v->waiting_mean = j.waiting.mean;
        v->waiting_max = j.waiting.max;
    }
    if (j.running.present) {
        v->running_mean = j.running.mean;
        v->running_max = j.running.max;
    }
    if (j.kv_usage.present) {
        v->kv_mean = j.kv_usage.mean;
        v->kv_max = j.kv_usage.max;
    }
    v->kv_capacity_tokens = j.kv_capacity_tokens;
    if (j.preemptions.present)
        v->preemptions = j.preemptions.delta;
    if (j.generation_tokens.present)
        v->generation_tokens = j.generation_tokens.delta;
    if (j.prompt_tokens.present)
        v->prompt_tokens = j.prompt_tokens.delta;
    if (j.ttft_present && j.ttft_quantiles) {
        v->ttft_p50_s = j.ttft_p50_s;
        v->ttft_p99_s = j.ttft_p99_s;
        v->ttft_p99_lower_bound = isinf(j.ttft_p99_hi_s);
    }
    if (j.span_to_abs_ns > j.span_from_abs_ns && j.span_from_abs_ns >= run_start_abs_ns) {
        v->has_span = 1;
        v->span_from_ns = j.span_from_abs_ns - run_start_abs_ns;
        v->span_to_ns = j.span_to_abs_ns - run_start_abs_ns;
    }
}

/* Join the GPU scrapes to step s's window as join_step joins the
 * server's (the inner span), sum the exporters' energies (metrics/energy.h:
 * an exporter without a figure withholds the sum) and keep the facts in
 * f->energy. The per-token figures come later, from the records over the
 * energy's span (sweep.c), so that `llmload report` derives them again. */
static void join_step_energy(const struct sweep_run *sr, uint64_t run_start_abs_ns,
                             struct sweep_facts *f)
{
    struct sweep_energy *e = &f->energy;
    sweep_energy_clear(e);
    if (!sr->n_gpu)
        return;
    e->present = 1;
    uint64_t t0 = run_start_abs_ns + f->warmup_ns, t1 = t0 + f->window_ns;
    uint64_t from = UINT64_MAX, to = 0;
    struct energy_figures parts[RUN_SETUP_MAX_GPU], sum;
    for (size_t i = 0; i < sr->n_gpu; i++) {
        struct scrape_join j;
        int rc = scrape_join(sr->gpu[i], t0, t1, SCRAPE_SPAN_INNER, &j);
        /* No client figures here: the records over the span give them. */
        energy_figures_compute(&j, rc, NAN, NAN, NAN, NAN, &parts[i]);
        if (parts[i].present) {
            from = LL_MIN(from, j.span_from_abs_ns);
            to = LL_MAX(to, j.span_to_abs_ns);
        }
    }
    energy_figures_combine(parts, sr->n_gpu, &sum);
    e->missing = sum.missing;
    if (!sum.present || to <= from || from < run_start_abs_ns)
        return;
    snprintf(e->source, sizeof e->source, "%s", sum.source ? sum.source : "");
    e->energy_j = sum.energy_j;
    e->gaps = sum.gaps;
    e->gpus = sum.gpus;
    e->max_power_w = sum.max_power_w;
    e->util_mean_pct = sum.util_mean_pct;
    e->has_span = 1;
    e->span_from_ns = from - run_start_abs_ns;
    e->span_to_ns = to - run_start_abs_ns;
}

/* The end of a step's line when some of its requests failed: "; failed
 * N: KIND COUNT, e.g.: SAMPLE" for each failed kind (the sample when one
 * was kept); "" when none failed. */
static void step_failures(const struct stats *st, char *buf, size_t len)
{
    size_t at = 0;
    buf[0] = '\0';
    uint64_t failed = stats_failed(st);
    if (failed == 0)
        return;
    int w = snprintf(buf, len, "; failed %" PRIu64 ":", failed);
    const char *sep = " ";
    for (int k = 0; k < REC_KIND_COUNT && w >= 0 && (at += (size_t)w) < len; k++) {
        w = 0;
        if (k == REC_OK || st->by_kind[k] == 0)
            continue;
        w = snprintf(buf + at, len - at, "%s%s %" PRIu64 "%s%s", sep,
                     rec_kind_name((enum rec_kind)k), st->by_kind[k],
                     st->sample[k][0] ? ", e.g.: " : "", st->sample[k]);
        sep = "; ";
    }
}

/* --cold-restart: run the command before step index and wait for it
 * (sr->cold_restart_timeout_ns), then for the target to answer again
 * (as long again). 0, 1 when a stop signal came (it is taken), or -1
 * (reason printed, naming the command) when it failed. */
static int cold_restart(struct sweep_run *sr, const struct run_config *cfg, uint32_t index)
{
    const char *cmd = sr->cold_restart;
    char d[32], err[600];
    ll_fmt_duration(sr->cold_restart_timeout_ns, d, sizeof d);
    if (!sr->quiet)
        ll_errorf("step %u: cold restart: %s", index, cmd);
    sigset_t stop;
    sigemptyset(&stop);
    sigaddset(&stop, SIGINT);
    sigaddset(&stop, SIGTERM);
    uint64_t ms = sr->cold_restart_timeout_ns / LL_NS_PER_MS;
    int rc = ll_shell_run(cmd, sr->child_mask, &stop, ms > INT32_MAX ? INT32_MAX : (int)ms);
    if (rc == 0) {
        rc = run_setup_wait_ready(cfg, sr->cold_restart_timeout_ns, err, sizeof err);
        if (rc == 0)
            return 0;
        if (rc != LL_E_INTR) {
            ll_errorf("--cold-restart: the target did not answer within %s after \"%s\": %s", d,
                      cmd, err);
            return -1;
        }
    }
    if (rc == LL_E_INTR) {
        sweepstep_sleep(0);
        ll_errorf("interrupted during the cold restart before step %u: stopping", index);
        sr->stopped_in = "load";
        return 1;
    }
    if (rc == LL_E_AGAIN)
        ll_errorf("--cold-restart: \"%s\" did not end within %s (killed)", cmd, d);
    else if (rc < 0)
        ll_errorf("--cold-restart: cannot run \"%s\": %s", cmd, strerror(errno));
    else
        ll_errorf("--cold-restart: \"%s\" failed with exit status %d", cmd, rc);
    return -1;
}

/* What one step of the ladder runs: its place, rates and times. */
struct step_plan {
    uint32_t index, repeat;
    int recovery, confirm;
    double rate;     /* req/s after the lead-in (the step's rate) */
    double lead_rps; /* req/s through the warm-up of a recovery step; 0: none */
    uint64_t warmup_ns, hold_ns;
    uint64_t at_ns; /* fixed step times: the step's t = 0, ns from --start-at */
    char id[32];    /* its name as the table gives it: "3", "3 r2", "3 re", "4 rec" */
};

/* The step's configuration from the sweep's base: its rate (and a
 * recovery step's lead-in; p->lead_rps set to 0 where there is none), its
 * seeds, times and cold requests. */
static void step_config(const struct sweep_run *sr, const struct run_config *base,
                        struct step_plan *p, struct run_config *cfg)
{
    *cfg = *base;
    cfg->mode = LOAD_OPEN;
    cfg->arrival.rate_per_s = p->rate;
    if (p->recovery && p->lead_rps > 0 && p->warmup_ns > 0) {
        cfg->arrival.rate_per_s = p->lead_rps;
        cfg->arrival.switch_at_ns = p->warmup_ns;
        cfg->arrival.switch_to_per_s = p->rate;
    } else {
        p->lead_rps = 0;
    }
    cfg->arrival.seed = base->arrival.seed + p->index;
    cfg->workload.seed = base->workload.seed + p->index;
    /* The step's own content: what `llmload run --seed` of the step's seed
     * with the sweep's --prompt-salt sends, so no step or repeat shares a
     * prompt with another, nor with another sweep under another salt. */
    cfg->transport.seed = workload_content_seed(cfg->workload.seed, base->prompt_salt);
    cfg->warmup_ns = p->warmup_ns;
    cfg->duration_ns = p->warmup_ns + p->hold_ns;
    /* --cold-start: every step's first requests after --cold-restart,
     * else only the sweep's first step's (the server is warm after it). */
    cfg->cold_requests = sr->cold_restart || p->index == 0 ? base->cold_requests : 0;
}

/* Where the step writes, and when it starts: fixed step times start this
 * step its slot's length after the one before, wherever that one's drain
 * got to (a late start is measured as the step's lateness, never
 * shifted), so shards stay in step. */
static void step_schedule(struct sweep_run *sr, const struct run_config *base, struct step_plan *p,
                          struct run_config *cfg)
{
    cfg->records_fd = sr->records_fd;
    cfg->step = (int32_t)p->index;
    cfg->progress = 0;
    p->at_ns = sr->at_ns;
    if (sr->fixed) {
        cfg->start_at_unix_ns = base->start_at_unix_ns + (int64_t)p->at_ns;
        sr->at_ns += p->warmup_ns + p->hold_ns + sr->gap_ns;
    }
}

/* The step's first line on stderr: its rates and times. */
static void step_announce(const struct sweep_run *sr, const struct step_plan *p)
{
    if (sr->quiet)
        return;
    if (p->lead_rps > 0) {
        ll_errorf("step %s: %.4g req/s for %.3gs, then %.4g req/s for %.3gs", p->id, p->lead_rps,
                  (double)p->warmup_ns / 1e9, p->rate, (double)p->hold_ns / 1e9);
        return;
    }
    char wu[48] = "no warm-up";
    if (p->warmup_ns > 0)
        snprintf(wu, sizeof wu, "+%.3gs warm-up", (double)p->warmup_ns / 1e9);
    ll_errorf("step %s%s: %.4g req/s for %.3gs (%s)", p->id,
              p->confirm ? " (it failed below a passing rate)" : "", p->rate,
              (double)p->hold_ns / 1e9, wu);
}

/* A new step at the end of sr->steps (and room for its point), initialised. */
static struct sweep_step *step_append(struct sweep_run *sr)
{
    if (sr->n_steps == sr->cap_steps) {
        sr->cap_steps = sr->cap_steps ? sr->cap_steps * 2 : 16;
        sr->steps = ll_realloc(sr->steps, sr->cap_steps * sizeof *sr->steps);
        sr->points = ll_realloc(sr->points, sr->cap_steps * sizeof *sr->points);
    }
    struct sweep_step *s = &sr->steps[sr->n_steps++];
    sweep_step_init(s);
    return s;
}

/* The step's facts from its plan, configuration and driver result
 * (started: when the driver was called, for a run without its start);
 * takes res's in-flight series. */
static void step_facts(const struct sweep_run *sr, const struct step_plan *p,
                       const struct run_config *cfg, struct driver_result *res, uint64_t started,
                       struct sweep_facts *f)
{
    f->index = p->index;
    f->repeat = p->repeat;
    f->recovery = p->recovery;
    f->confirm = p->confirm;
    /* A shard offers its share of the ladder's rate (as `llmload run`'s
     * summary says), so its own steps read as what it sent. */
    double share = runopts_shard_share(cfg);
    f->offered_rps = p->rate * share;
    f->overload_rps = p->lead_rps * share;
    f->global_offered_rps = cfg->shards > 1 ? p->rate : 0;
    f->has_start_at = sr->fixed;
    f->start_at_offset_ns = sr->fixed ? p->at_ns : 0;
    /* Records count from the driver's t = 0; so do the step's offset and
     * its in-flight samples, to share one axis with the server's scrapes. */
    f->start_offset_ns = res->run_start_abs_ns >= sr->start_ns
                             ? res->run_start_abs_ns - sr->start_ns
                             : started - sr->start_ns;
    f->duration_ns = cfg->duration_ns;
    f->warmup_ns = p->warmup_ns;
    f->cold_start = cfg->cold_requests;
    f->cold_restart = sr->cold_restart != NULL;
    f->window_ns = res->window_ns;
    f->elapsed_ns = res->elapsed_ns;
    f->scheduled = res->stats.scheduled;
    f->inflight_mean = res->inflight_mean;
    f->inflight_max = res->inflight_max;
    f->interrupted = res->interrupted;
    /* Whose its late sends were, for the words of an INVALID step. */
    int usage = res->worker_wall_ns > 0;
    f->late = (struct sweep_late){
        .known = 1,
        .late_sends = res->late_sends,
        .asleep = res->late_asleep,
        .cpu_s = usage ? (double)res->worker_cpu_ns / 1e9 : NAN,
        .wall_s = usage ? (double)res->worker_wall_ns / 1e9 : NAN,
        .invol_switches = usage ? res->worker_invol_switches : 0,
    };
    hist_merge(f->lateness, res->stats.lateness);
    f->series = res->series;
    f->n_series = res->n_series;
    res->series = NULL;
    res->n_series = 0;
}

/* The step's classes and endpoints: with two classes or more, each
 * class's scheduled count and own SLO; with several --url, each
 * endpoint's URL, weight and scheduled count. Their figures come later
 * from the records' "class" and "endpoint". */
static void step_parts(struct sweep_step *s, const struct run_config *cfg,
                       const struct driver_result *res)
{
    struct sweep_facts *f = &s->f;
    const struct wl_file *wf = cfg->workload.classes;
    if (wf && wf->n >= 2 && res->n_classes == wf->n && wf->n <= SWEEP_MAX_CLASSES) {
        sweep_step_classes_init(s, wf->n);
        for (size_t k = 0; k < wf->n; k++) {
            struct sweep_class_facts *c = &f->classes[k];
            snprintf(c->name, sizeof c->name, "%s", wf->classes[k].name);
            c->own_slo = wf->classes[k].slo;
            c->scheduled = res->class_stats[k].scheduled;
        }
    }
    const struct endpoints *eps = &cfg->transport.endpoints;
    if (res->n_endpoints >= 2 && res->n_endpoints == eps->n && eps->n <= SWEEP_MAX_ENDPOINTS) {
        sweep_step_endpoints_init(s, eps->n);
        for (size_t k = 0; k < eps->n; k++) {
            f->endpoints[k].url = ll_strdup(eps->url[k]);
            f->endpoints[k].weight = eps->weight[k];
            f->endpoints[k].scheduled = res->endpoint_stats[k].scheduled;
        }
    }
}

/* Append step s's line to steps.jsonl, flushed. 0, or -1 (printed). */
static int step_write_line(const struct sweep_run *sr, const struct sweep_step *s)
{
    json_t *line = sweep_step_line_json(s);
    char *text = json_dumps(line, JSON_COMPACT);
    json_decref(line);
    if (!text || fprintf(sr->steps_f, "%s\n", text) < 0 || fflush(sr->steps_f) != 0) {
        ll_errorf("%s/steps.jsonl: cannot write: %s", sr->dir, strerror(errno));
        free(text);
        return -1;
    }
    free(text);
    return 0;
}

/* The step's last lines on stderr: its figures and verdict, its cold
 * requests, a hold too short for its E2E. */
static void step_print(const struct sweep_run *sr, const struct step_plan *p,
                       const struct sweep_step *s, const struct sweep_settings *set)
{
    if (sr->quiet)
        return;
    const struct sweep_facts *f = &s->f;
    char a[16], fails[1024];
    step_failures(&s->stats, fails, sizeof fails);
    /* Embeddings: no first token; their latency is E2E. */
    int emb = stats_embeddings(&s->stats);
    /* A step cut short or empty has no verdict (sweep_step_verdict says
     * which): neither ok nor fails, nor the reason it would have failed. */
    int nil = !p->recovery && !s->invalid && !sweep_step_judged(s);
    int why = !p->recovery && !nil && !s->slo_pass;
    int seen = hist_count(emb ? s->stats.e2e : s->stats.ttft) > 0;
    ll_errorf("step %s: completed %.3g req/s, goodput %.3g req/s, %s p99 %s, %s%s%s%s", p->id,
              s->completed_rps, s->goodput_rps, emb ? "E2E" : "TTFT",
              seen ? ll_fmt_duration(emb ? s->e2e_ns[3] : s->ttft_ns[3], a, sizeof a) : "-",
              p->recovery   ? "recovery"
              : nil         ? sweep_step_verdict(s, 0)
              : s->slo_pass ? "ok"
                            : "fails",
              why ? ": " : "", why ? s->fail_reason : "", fails);
    if (f->cold_start)
        summary_print_cold(stderr, &s->cold, f->cold_start);
    if (s->short_hold)
        ll_errorf("step %s: short: held %.3gs, %.2g x its E2E p99 (under %g x)", p->id,
                  (double)f->window_ns / 1e9, s->hold_factor, sweep_min_hold_factor(set));
}

/* Run one step at rate; append its facts and figures. Returns 0, 1 when it
 * was interrupted, or -1 (reason printed) when it could not run. A
 * recovery step with lead_rps > 0 offers lead_rps through its warm-up and
 * switches to rate at the warm-up's end (one driver run, one arrival
 * process: the backlog built in the lead-in is still there at the switch). */
int sweepstep_run(struct sweep_run *sr, const struct run_config *base,
                  const struct sweep_settings *set, double rate, uint64_t warmup_ns,
                  uint64_t hold_ns, uint32_t repeat, int recovery, double lead_rps, int confirm)
{
    struct step_plan p = {.index = (uint32_t)sr->n_steps,
                          .repeat = repeat,
                          .recovery = recovery,
                          .confirm = confirm,
                          .rate = rate,
                          .lead_rps = lead_rps,
                          .warmup_ns = warmup_ns,
                          .hold_ns = hold_ns};
    struct sweep_facts idf = {
        .index = p.index, .repeat = repeat, .recovery = recovery, .confirm = confirm};
    sweep_step_label(&idf, sr->repeats > 1, p.id, sizeof p.id);
    struct run_config cfg;
    step_config(sr, base, &p, &cfg);
    if (sr->cold_restart) {
        int cr = cold_restart(sr, &cfg, p.index);
        if (cr != 0)
            return cr;
    }
    step_schedule(sr, base, &p, &cfg);
    off_t from = lseek(sr->records_fd, 0, SEEK_END);
    if (from < 0) {
        ll_errorf("%s: %s", sr->records_path, strerror(errno));
        return -1;
    }
    step_announce(sr, &p);
    uint64_t started = ll_now_ns();
    char err[512];
    struct driver_result res;
    if (driver_run(&cfg, &res, err, sizeof err) != 0) {
        ll_errorf("step %s: %s", p.id, err);
        driver_result_free(&res);
        return -1;
    }
    struct sweep_step *s = step_append(sr);
    step_facts(sr, &p, &cfg, &res, started, &s->f);
    step_parts(s, &cfg, &res);
    int interrupted = res.interrupted;
    if (interrupted)
        sr->stopped_in = res.stopped_in;
    sr->ok_requests += res.stats.by_kind[REC_OK];
    sr->done_requests += res.stats.completed;
    uint64_t t0_abs_ns = res.run_start_abs_ns >= started ? res.run_start_abs_ns : started;
    join_step(sr, t0_abs_ns, &s->f);
    join_step_energy(sr, t0_abs_ns, &s->f);
    driver_result_free(&res);
    if (sweep_read_records(sr->records_path, (uint64_t)from, s, 1, set, err, sizeof err) != 0) {
        ll_errorf("%s", err);
        return -1;
    }
    sweep_step_finish(s, set);
    if (step_write_line(sr, s) != 0)
        return -1;
    step_print(sr, &p, s, set);
    return interrupted ? 1 : 0;
}
