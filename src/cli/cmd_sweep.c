/* cmd_sweep.c: `llmload sweep`, a ladder of offered loads through
 * saturation, then a recovery step.
 *
 * Each step is one driver_run (open loop at the step's rate, a labelled
 * warm-up, then the hold). Every step appends to the one requests.jsonl
 * (records carry "step"; their times are relative to their own step's
 * start) and writes one line of facts to steps.jsonl. After each step its
 * figures are computed from its records (sweep.c) and the stop conditions
 * are checked. The recovery step is one driver_run too, so the overload's
 * backlog is still in the server when it is measured: it offers the
 * highest rate for --overload-duration (its labelled warm-up), then the
 * arrival process switches to 20% of that rate for --recovery-duration
 * (its window). At the end report_build_dir writes steps.csv, summary.json
 * and report.html from those files, exactly as `llmload report DIR` does.
 * One scraper of the server's /metrics runs for the whole sweep
 * (server_metrics.jsonl, times from the sweep's start); each step's window
 * is joined to it as the step ends and the figures go into its steps.jsonl
 * line (docs/server-metrics.md, "In a sweep").
 * With --start-at (and so with --shard) the steps run at fixed times: step
 * k's driver starts at --start-at plus the slots (warm-up, hold, --gap)
 * before it, and every rate runs, so N shards run the same ladder in step
 * (docs/distributed.md, "Sharded sweeps").
 * docs/sweep.md describes the procedure. One step, from its configuration
 * to its lines, is sweepstep.c's. */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <jansson.h>
#include <math.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "cli/cmds.h"
#include "cli/runopts.h"
#include "cli/runsetup.h"
#include "cli/sweepjob.h"
#include "cli/sweepplan.h"
#include "cli/sweepstep.h"
#include "driver/driver.h"
#include "measure/results.h"
#include "measure/summary.h"
#include "metrics/energy.h"
#include "metrics/scrape.h"
#include "report/report_build.h"
#include "sweep/sweep.h"
#include "sweep/sweep_json.h"
#include "util/spawn.h"
#include "util/util.h"
#include "workload/wlfile.h"

_Static_assert(WL_NAME_MAX <= SWEEP_CLASS_NAME_MAX && WL_MAX_CLASSES <= SWEEP_MAX_CLASSES,
               "every workload class fits the sweep's breakdown");

#define SWEEP_RECOVERY_FRACTION 0.2
#define SWEEP_PROBE_FIRST_USERS 16
#define SWEEP_PROBE_MAX_USERS 1024

/* ---- running ------------------------------------------------------------ */

/* Closed-loop probe rounds with 16, 32, 64... users until the completion
 * rate stops rising by 10% (ok completions over the round's elapsed time)
 * or a round ends more than 10% of its requests in an error. Returns the
 * best rate, 0 when nothing completed (err says why when a round could not
 * run), the first round erred (*first_error_rate its error rate, else
 * NAN) or the client cancelled every request of the first round
 * (*all_cancelled how many, else 0). */
static double probe_capacity(const struct run_config *base, uint64_t probe_ns, int quiet,
                             double *first_e2e_p99_s, double *first_error_rate,
                             uint64_t *all_cancelled, const char **stopped_in, uint64_t t0_abs_ns,
                             json_t *series, char *err, size_t errlen)
{
    double best = 0;
    *first_e2e_p99_s = 0;
    *first_error_rate = NAN;
    *all_cancelled = 0;
    *stopped_in = NULL;
    for (uint32_t users = SWEEP_PROBE_FIRST_USERS; users <= SWEEP_PROBE_MAX_USERS; users *= 2) {
        struct run_config cfg = *base;
        struct driver_result res;
        cfg.mode = LOAD_CLOSED;
        cfg.users = users;
        runopts_dist("--think", "0", DIST_UNIT_DURATION_NS, 1, &cfg.think, err, errlen);
        cfg.duration_ns = probe_ns;
        cfg.warmup_ns = 0;
        cfg.cold_requests = 0; /* the steps' cold start, not the probe's */
        cfg.records_fd = -1;
        cfg.hist_fd = -1;
        cfg.progress = 0;
        cfg.step = -1;
        if (driver_run(&cfg, &res, err, errlen) != 0) {
            driver_result_free(&res);
            return best;
        }
        /* Every ok completion over the whole round, drain included: the
         * users start together, so completions come in waves and a part
         * of the round over- or under-counts; the whole does not. */
        double rate = res.elapsed_ns ? (double)res.stats.by_kind[REC_OK] /
                                           ((double)res.elapsed_ns / 1e9)
                                     : 0;
        /* The round's in-flight samples, from the probe's start, for the
         * report's over-time chart. */
        uint64_t off = res.run_start_abs_ns >= t0_abs_ns ? res.run_start_abs_ns - t0_abs_ns : 0;
        for (size_t i = 0; i < res.n_series; i++) {
            json_t *pt = json_array();
            json_array_append_new(pt, json_integer((json_int_t)(off + res.series[i].t_ns)));
            json_array_append_new(pt, json_integer((json_int_t)res.series[i].inflight));
            json_array_append_new(series, pt);
        }
        /* The client's own cancellations are not the server's errors. */
        double error_rate = stats_error_rate(&res.stats);
        uint64_t cancelled = stats_let_end(&res.stats) == 0 ? res.stats.completed : 0;
        if (users == SWEEP_PROBE_FIRST_USERS && hist_count(res.stats.e2e))
            *first_e2e_p99_s = (double)hist_percentile(res.stats.e2e, 99) / 1e9;
        *stopped_in = res.interrupted ? res.stopped_in : NULL;
        driver_result_free(&res);
        if (!quiet)
            ll_errorf("probe: %u users (closed loop): %.3g req/s completed", users, rate);
        if (*stopped_in)
            break;
        /* The client cancelled every request: no completion to rate,
         * and more users would only cancel more (it went on to 1024). */
        if (cancelled && best == 0) {
            *all_cancelled = cancelled;
            break;
        }
        int errors = error_rate > 0.1;
        if (errors && best == 0)
            *first_error_rate = error_rate;
        if (rate < 1.1 * best || errors) {
            if (rate > best && !errors)
                best = rate;
            break;
        }
        best = rate;
    }
    return best;
}

/* Round a rate to 3 significant digits, for readable steps. */
static double round3(double x)
{
    if (!(x > 0))
        return x;
    double p = pow(10, floor(log10(x)) - 2);
    return round(x / p) * p;
}

static void iso_now(char *buf, size_t len)
{
    time_t t = time(NULL);
    struct tm tm;
    if (t == (time_t)-1 || !gmtime_r(&t, &tm) || strftime(buf, len, "%Y-%m-%dT%H:%M:%SZ", &tm) == 0)
        snprintf(buf, len, "unknown");
}

static json_t *plan_json(const struct run_opts *o, const struct run_config *cfg,
                         const struct sweep_plan *p, const struct sweep_settings *set,
                         const char *model, const char *started)
{
    json_t *c = runopts_config_json(o, cfg, model);
    json_t *sw = sweep_settings_json(set);
    if (p->n_rates) {
        json_t *r = json_array();
        for (size_t i = 0; i < p->n_rates; i++)
            json_array_append_new(r, json_real(p->rates[i]));
        json_object_set_new(sw, "rates", r);
    } else {
        json_object_set_new(sw, "rates", json_string("auto"));
    }
    json_object_set_new(sw, "step_duration_ns", json_integer((json_int_t)p->step_ns));
    json_object_set_new(sw, "step_duration_auto", json_boolean(p->step_auto));
    if (p->step_auto)
        json_object_set_new(sw, "max_step_duration_ns", json_integer((json_int_t)p->max_step_ns));
    json_object_set_new(sw, "warmup_ns", json_integer((json_int_t)p->warmup_ns));
    /* The command is not kept: it may hold a credential (a token in a
     * URL or a header). That it ran, and its limit, are. */
    if (p->cold_restart) {
        json_object_set_new(sw, "cold_restart", json_true());
        json_object_set_new(sw, "cold_restart_timeout_ns",
                            json_integer((json_int_t)p->cold_restart_timeout_ns));
    }
    json_object_set_new(sw, "gap_ns", json_integer((json_int_t)p->gap_ns));
    json_object_set_new(sw, "repeat", json_integer(p->repeat));
    json_object_set_new(sw, "max_steps", json_integer(p->max_steps));
    json_object_set_new(sw, "confirm", json_integer(p->confirm));
    json_object_set_new(sw, "recovery", json_boolean(p->recovery));
    json_object_set_new(sw, "recovery_duration_ns", json_integer((json_int_t)p->recovery_ns));
    json_object_set_new(sw, "overload_duration_ns", json_integer((json_int_t)p->overload_ns));
    json_object_set_new(c, "sweep", sw);
    char mode[128];
    snprintf(mode, sizeof mode, "open-loop %s sweep", arrival_kind_name(cfg->arrival.kind));
    json_object_set_new(c, "mode_label", json_string(mode));
    json_object_set_new(c, "started_at", json_string(started));
    return c;
}

/* --step-duration auto: the hold of a load step at rate, from the E2E p99
 * seen before it (sr->last_e2e_p99_s, at sr->last_rate): the hold rule's
 * factor times that p99, grown by the most the next step may add to it
 * (the square of the p99's rise over the last two steps, or the rise of
 * the rate, whichever is larger, at most doubled), at least the minimum and at most
 * --max-step-duration, rounded up to a whole second (100 ms under one). */
static uint64_t auto_hold(const struct sweep_run *sr, const struct sweep_plan *p,
                          const struct sweep_settings *set, double rate)
{
    if (!(sr->last_e2e_p99_s > 0))
        return sr->hold_ns;
    double growth = 1, r;
    if (sr->prev_e2e_p99_s > 0 && (r = sr->last_e2e_p99_s / sr->prev_e2e_p99_s) > 1)
        growth = r * r; /* the rise accelerates towards saturation */
    if (sr->last_rate > 0)
        growth = LL_MAX(growth, rate / sr->last_rate);
    growth = LL_MIN(growth, 2.0);
    double want = sweep_min_hold_factor(set) * sr->last_e2e_p99_s * growth;
    double unit = want >= 1 ? 1 : 0.1;
    double ns = ceil(want / unit - 1e-9) * unit * 1e9;
    if (!(ns > (double)p->step_ns))
        return p->step_ns;
    return ns >= (double)p->max_step_ns ? p->max_step_ns : (uint64_t)ns;
}

/* auto: note the E2E p99 of the load step just run (at rate), for the
 * next auto_hold. */
static void auto_hold_seen(struct sweep_run *sr, double rate, double e2e_p99_s)
{
    if (!(e2e_p99_s > 0))
        return;
    sr->prev_e2e_p99_s = sr->last_e2e_p99_s;
    sr->last_e2e_p99_s = e2e_p99_s;
    sr->last_rate = rate;
}

/* The rate to re-run next (--confirm): the lowest known point that fails
 * while a higher one passes, re-run fewer than `confirm` times (an INVALID
 * re-run counts: it is no verdict, and is not tried for ever); -1 when
 * none. A point whose re-run passed passes, and is done. */
static long next_to_confirm(const struct sweep_point *pts, size_t np, uint32_t confirm)
{
    double top_pass = 0;
    for (size_t i = 0; i < np; i++)
        if (!pts[i].unknown && pts[i].pass)
            top_pass = LL_MAX(top_pass, pts[i].offered_rps);
    long best = -1;
    for (size_t i = 0; i < np; i++) {
        const struct sweep_point *pt = &pts[i];
        if (pt->unknown || pt->pass || pt->offered_rps >= top_pass || pt->rerun_steps >= confirm)
            continue;
        if (best < 0 || pt->offered_rps < pts[best].offered_rps)
            best = (long)i;
    }
    return best;
}

/* --confirm: re-run each rate that failed below a passing one (a result
 * not monotonic in load: one noisy step must not set the capacity), up to
 * p->confirm times or until a re-run passes. 0, 1 when interrupted, -1
 * when a step could not run. */
static int confirm_failures(struct sweep_run *sr, const struct run_config *base,
                            const struct sweep_plan *p, struct sweep_settings *set)
{
    for (;;) {
        size_t np = sweep_points_build(sr->steps, sr->n_steps, sr->points);
        long i = next_to_confirm(sr->points, np, p->confirm);
        if (i < 0)
            return 0;
        double rate = sr->points[i].offered_rps;
        /* The re-run holds as long as the rate's first run did (with
         * --step-duration auto, the hold it had then, not the last). */
        uint32_t repeat = 0;
        uint64_t hold_ns = sr->hold_ns;
        for (size_t j = 0; j < sr->n_steps; j++) {
            const struct sweep_facts *f = &sr->steps[j].f;
            if (f->recovery || f->offered_rps != rate)
                continue;
            if (repeat++ == 0)
                hold_ns = f->duration_ns - f->warmup_ns;
        }
        int st = sweepstep_run(sr, base, set, rate, p->warmup_ns, hold_ns, repeat, 0, 0, 1);
        if (st < 0)
            return -1;
        if (st == 0 && sweepstep_sleep(p->gap_ns)) {
            sr->stopped_in = "load";
            st = 1;
        }
        if (st > 0)
            return 1;
    }
}

/* Run every load step and the recovery step. Writes the stop reason. */
static int run_sweep(struct sweep_run *sr, const struct run_config *base,
                     const struct sweep_plan *p, struct sweep_settings *set, char *stop,
                     size_t stop_len)
{
    double top = 0;
    int rc = 0;
    stop[0] = '\0';
    for (uint32_t k = 0;; k++) {
        double rate;
        if (p->n_rates) {
            if (k >= p->n_rates)
                break;
            rate = p->rates[k];
        } else {
            rate = round3(set->estimate_rps * 0.1 * (k + 1));
        }
        if (k >= p->max_steps) {
            snprintf(stop, stop_len, "reached --max-steps %u", p->max_steps);
            break;
        }
        for (uint32_t r = 0; r < p->repeat; r++) {
            if (p->step_auto)
                sr->hold_ns = auto_hold(sr, p, set, rate);
            size_t before = sr->n_steps;
            int st = sweepstep_run(sr, base, set, rate, p->warmup_ns, sr->hold_ns, r, 0, 0, 0);
            if (st < 0)
                return -1;
            /* A stop during --cold-restart ends the step before it ran:
             * nothing new to learn the next hold from. */
            const struct sweep_step *last =
                sr->n_steps > before ? &sr->steps[sr->n_steps - 1] : NULL;
            if (p->step_auto && last && last->stats.by_kind[REC_OK])
                auto_hold_seen(sr, rate, (double)last->e2e_ns[3] / 1e9);
            /* Fixed times: the next step's driver waits for its slot. */
            if (st == 0 && !p->fixed && sweepstep_sleep(p->gap_ns)) {
                sr->stopped_in = "load"; /* between two steps */
                st = 1;
            }
            if (st > 0) {
                snprintf(stop, stop_len, "interrupted by a signal");
                return 1;
            }
        }
        top = LL_MAX(top, rate);
        /* Fixed times run every rate: a shard's stop would be its own. */
        size_t np = sweep_points_build(sr->steps, sr->n_steps, sr->points);
        if (!p->fixed && sweep_stop_check(sr->points, np, set, stop, stop_len))
            break;
    }
    rc = confirm_failures(sr, base, p, set);
    if (rc != 0) {
        if (rc > 0)
            snprintf(stop + strlen(stop), stop_len - strlen(stop), "%sinterrupted by a signal",
                     stop[0] ? "; " : "");
        return rc;
    }
    if (p->recovery && top > 0) {
        /* auto: the lead-in and the window follow the last hold, as they
         * follow --step-duration otherwise. */
        uint64_t overload_ns = p->step_auto && !p->overload_given ? sr->hold_ns : p->overload_ns;
        uint64_t recovery_ns = p->step_auto && !p->recovery_given
                                   ? SWEEP_RECOVERY_STEPS * sr->hold_ns
                                   : p->recovery_ns;
        rc = sweepstep_run(sr, base, set, round3(SWEEP_RECOVERY_FRACTION * top), overload_ns,
                           recovery_ns, 0, 1, top, 0);
        if (rc > 0)
            snprintf(stop + strlen(stop), stop_len - strlen(stop), "%sinterrupted by a signal",
                     stop[0] ? "; " : "");
    }
    return rc;
}

/* --rates auto: probe the capacity, note it in steps.jsonl and run.json.
 * LL_EXIT_OK, 130 when interrupted, or LL_EXIT_RUNTIME, reason printed. */
static int sweep_probe(struct run_setup *rs, struct sweep_run *sr, const struct run_config *cfg,
                       const struct sweep_plan *plan, struct sweep_settings *set, int quiet)
{
    char err[1200] = "";
    json_t *series = json_array();
    uint64_t t0 = ll_now_ns();
    double e2e_p99_s, first_error_rate;
    uint64_t all_cancelled;
    set->estimate_rps =
        probe_capacity(cfg, plan->probe_ns, quiet, &e2e_p99_s, &first_error_rate, &all_cancelled,
                       &sr->stopped_in, t0, series, err, sizeof err);
    uint64_t t1 = ll_now_ns();
    /* auto holds: the first step holds for the probe's first (least
     * loaded) round's E2E p99, as later steps do for the step before. */
    if (plan->step_auto)
        auto_hold_seen(sr, 0, e2e_p99_s);
    if (sr->stopped_in) {
        json_decref(series);
        ll_errorf("interrupted during the capacity probe");
        return LL_EXIT_INTR;
    }
    if (!(set->estimate_rps > 0)) {
        json_decref(series);
        /* Every round ran and none succeeded, or the first erred: 6; a
         * round that could not run: 3. */
        if (!err[0] && all_cancelled)
            ll_errorf("the capacity probe's first round (%d users, closed loop): the client "
                      "cancelled all %" PRIu64 " of its requests (--cancel-fraction, "
                      "--cancel-after...), so none completed: no rate to step from; give --rates",
                      SWEEP_PROBE_FIRST_USERS, all_cancelled);
        else if (!err[0] && isfinite(first_error_rate))
            ll_errorf("the capacity probe's first round (%d users, closed loop) ended %.1f%% of "
                      "its requests in an error (it stops past 10%%): no rate to step from; "
                      "give --rates, or see the errors by kind with llmload run",
                      SWEEP_PROBE_FIRST_USERS, 100 * first_error_rate);
        else
            ll_errorf("the capacity probe completed no request%s%s", err[0] ? ": " : "", err);
        return err[0] ? LL_EXIT_RUNTIME : LL_EXIT_NO_OK;
    }
    json_t *e = json_object();
    json_object_set_new(e, "kind", json_string("probe"));
    json_object_set_new(e, "estimate_rps", json_real(set->estimate_rps));
    /* When it ran, on the steps' clock (from the sweep's start), and the
     * clients' requests in flight meanwhile (docs/formats.md). */
    json_object_set_new(e, "start_offset_ns",
                        json_integer((json_int_t)(t0 >= sr->start_ns ? t0 - sr->start_ns : 0)));
    json_object_set_new(e, "duration_ns", json_integer((json_int_t)(t1 - t0)));
    json_object_set_new(e, "inflight_series", series);
    char *t = json_dumps(e, JSON_COMPACT);
    json_decref(e);
    fprintf(sr->steps_f, "%s\n", t ? t : "{}");
    free(t);
    json_object_set_new(json_object_get(json_object_get(rs->run, "config"), "sweep"),
                        "estimate_rps", json_real(set->estimate_rps));
    if (results_write_json_atomic(rs->dir, "run.json", rs->run, err, sizeof err) != 0) {
        ll_errorf("%s", err);
        return LL_EXIT_RUNTIME;
    }
    if (!quiet)
        ll_errorf("probe: estimated capacity %.3g req/s; stepping from %.3g req/s",
                  set->estimate_rps, round3(set->estimate_rps * 0.1));
    return LL_EXIT_OK;
}

/* Stop the scraper (NULL: none), the sweep having ended at end_abs_ns,
 * interrupted 1 by a stop signal (scraper_stop_at), and say how many
 * scrapes failed. */
static void sweep_scraper_stop(struct scraper *sc, uint64_t end_abs_ns, int interrupted, int quiet)
{
    if (!sc)
        return;
    scraper_stop_at(sc, end_abs_ns, interrupted);
    uint64_t scrapes = 0, failed = 0;
    scraper_counts(sc, &scrapes, &failed);
    if (failed && !quiet)
        ll_errorf("server metrics: %llu of %llu scrapes of %s failed (counted as gaps)",
                  (unsigned long long)failed, (unsigned long long)scrapes, scraper_url(sc));
}

/* steps.jsonl's last line, {"kind": "end", "stop_reason": ...}. 0 or -1. */
static int sweep_end_line(FILE *f, const char *stop)
{
    json_t *end = json_object();
    json_object_set_new(end, "kind", json_string("end"));
    json_object_set_new(end, "stop_reason", stop[0] ? json_string(stop) : json_null());
    char *t = json_dumps(end, JSON_COMPACT);
    json_decref(end);
    int rc = !t || fprintf(f, "%s\n", t) < 0 || fflush(f) != 0 ? -1 : 0;
    free(t);
    return rc;
}

/* Everything one sweep is run from, parsed from its flags. */
struct sweep_job {
    struct run_opts o;
    struct sweep_opts so;
    struct run_config cfg;
    struct sweep_plan plan;
    struct sweep_settings set;
    uint64_t metrics_interval_ns;
};

int sweep_job_parse(int argc, char **argv, struct sweep_job **out, char *err, size_t errlen)
{
    struct sweep_job *j = ll_calloc(1, sizeof *j);
    int rc = sweep_flags(argc, argv, &j->o, &j->so, &j->cfg, &j->plan, &j->set,
                         &j->metrics_interval_ns, err, errlen);
    if (rc != 0) {
        sweep_job_free(j);
        *out = NULL;
        return rc;
    }
    *out = j;
    return 0;
}

void sweep_job_free(struct sweep_job *j)
{
    if (j == NULL)
        return;
    runopts_workload_free(&j->cfg);
    free(j);
}

int sweep_job_run(struct sweep_job *j)
{
    char err[1200];
    struct run_setup rs;
    struct sweep_run sr = {.records_fd = -1,
                           .quiet = j->o.quiet,
                           .repeats = j->plan.repeat,
                           .hold_ns = j->plan.step_ns,
                           .fixed = j->plan.fixed,
                           .gap_ns = j->plan.gap_ns};
    char path[1100], started[40], stop[256] = "";
    int st = 0;

    /* run_setup_open blocks SIGINT and SIGTERM until run_setup_close. */
    int exit_code = run_setup_open(&rs, &j->o, &j->cfg);
    if (exit_code == LL_EXIT_OK)
        exit_code = run_setup_calibrate(&rs, &j->o, &j->cfg);
    if (exit_code != LL_EXIT_OK)
        goto out;
    iso_now(started, sizeof started);
    json_t *plan = plan_json(&j->o, &j->cfg, &j->plan, &j->set, rs.target.model, started);
    exit_code = run_setup_results(&rs, &j->o, "sweep", plan, &j->cfg, NULL);
    if (exit_code != LL_EXIT_OK)
        goto out;
    exit_code = LL_EXIT_RUNTIME;
    sr.dir = rs.dir;
    sr.records_fd = rs.records_fd;
    snprintf(sr.records_path, sizeof sr.records_path, "%s", rs.records_path);
    snprintf(path, sizeof path, "%s/steps.jsonl", rs.dir);
    sr.steps_f = fopen(path, "we");
    if (!sr.steps_f) {
        ll_errorf("%s: %s", path, strerror(errno));
        goto out;
    }
    /* One shard scrapes the server (shard 0), not N of them. */
    if (!run_setup_stopped(&rs, "probe"))
        run_setup_scraper(&rs, j->so.metrics_url, j->so.no_metrics || j->cfg.shard > 0,
                          j->metrics_interval_ns, &j->cfg, j->o.quiet);
    sr.start_ns = ll_now_ns();
    if (rs.scraper && scraper_start(rs.scraper, sr.start_ns, err, sizeof err) != 0) {
        ll_errorf("warning: server metrics: %s", err);
        scraper_free(rs.scraper);
        rs.scraper = NULL;
    }
    sr.scraper = rs.scraper;
    /* GPU telemetry, whatever --no-metrics says; sharded, on shard 0
     * alone, as /metrics (merge divides its energy by every shard's
     * tokens). */
    if (j->cfg.shard == 0)
        run_setup_gpu_scrapers(&rs, j->so.gpu_urls, j->so.n_gpu_urls, j->so.gpu_smi,
                               j->metrics_interval_ns, j->o.quiet);
    run_setup_gpu_start(rs.gpu_scrapers, rs.n_gpu, sr.start_ns);
    sr.gpu = rs.gpu_scrapers;
    sr.n_gpu = rs.n_gpu;
    sr.cold_restart = j->plan.cold_restart;
    sr.cold_restart_timeout_ns = j->plan.cold_restart_timeout_ns;
    sr.child_mask = rs.masked ? &rs.old_mask : NULL;
    if (run_setup_stopped(&rs, "scrape_start")) {
        snprintf(stop, sizeof stop, "interrupted by a signal");
        exit_code = LL_EXIT_INTR;
        goto out;
    }

    if (j->set.auto_rates) {
        exit_code = sweep_probe(&rs, &sr, &j->cfg, &j->plan, &j->set, j->o.quiet);
        if (exit_code != LL_EXIT_OK) {
            if (sr.stopped_in)
                snprintf(stop, sizeof stop, "interrupted by a signal");
            goto out;
        }
        exit_code = LL_EXIT_RUNTIME;
    }
    st = run_sweep(&sr, &j->cfg, &j->plan, &j->set, stop, sizeof stop);
    /* One end for every source: their waits for Prometheus overlap. */
    uint64_t end_abs_ns = ll_now_ns();
    sweep_scraper_stop(sr.scraper, end_abs_ns, sr.stopped_in != NULL, j->o.quiet);
    for (size_t i = 0; i < sr.n_gpu; i++)
        sweep_scraper_stop(sr.gpu[i], end_abs_ns, sr.stopped_in != NULL, j->o.quiet);
    if (st < 0 && sr.n_steps == 0)
        goto out;
    if (sweep_end_line(sr.steps_f, stop) != 0) {
        ll_errorf("%s: cannot write", path);
        goto out;
    }
    fclose(sr.steps_f);
    sr.steps_f = NULL;
    close(rs.records_fd);
    rs.records_fd = sr.records_fd = -1;

    const char *model_note = run_setup_model_note(&rs);
    char url_shown[512], model_shown[512]; /* the model may be a server's /models id */
    printf("llmload sweep of %s (model %s%s%s): %s; seed %llu, prompt salt %llu%s\n\n",
           ll_shown(j->cfg.transport.base_url, url_shown, sizeof url_shown),
           ll_shown(rs.target.model, model_shown, sizeof model_shown), model_note ? ", " : "",
           model_note ? model_note : "", j->set.auto_rates ? "auto rates" : "given rates",
           (unsigned long long)j->cfg.workload.seed, (unsigned long long)j->cfg.prompt_salt,
           j->cfg.prompt_salt_auto ? " (auto)" : "");
    fflush(stdout);
    exit_code = report_build_dir(rs.dir, stdout);
    printf("results: %s (report.html, steps.csv, summary.json)\n", rs.dir);
    fflush(stdout);
    if (st < 0)
        exit_code = run_exit_combine(exit_code, LL_EXIT_RUNTIME);
    if (sr.done_requests && sr.ok_requests == 0 && !sr.stopped_in) {
        ll_errorf("no request succeeded in any step");
        exit_code = run_exit_combine(exit_code, LL_EXIT_NO_OK);
    }

out:
    if (!rs.stopped_in && sr.stopped_in)
        rs.stopped_in = sr.stopped_in;
    if (rs.run) {
        run_setup_stopped(&rs, "summary");
        if (rs.stopped_in) {
            exit_code = LL_EXIT_INTR;
            if (!stop[0])
                snprintf(stop, sizeof stop, "interrupted by a signal");
        }
        exit_code = run_setup_end(&rs, exit_code, stop[0] ? stop : NULL);
    }
    if (sr.steps_f)
        fclose(sr.steps_f);
    for (size_t i = 0; i < sr.n_steps; i++)
        sweep_step_free(&sr.steps[i]);
    free(sr.steps);
    free(sr.points);
    run_setup_close(&rs);
    return exit_code;
}

int sweep_main(int argc, char **argv)
{
    struct sweep_job *j;
    char err[1200];
    int rc = sweep_job_parse(argc, argv, &j, err, sizeof err);
    if (rc != 0)
        return runopts_usage_exit(rc, err, sweep_usage);
    rc = sweep_job_run(j);
    sweep_job_free(j);
    return rc;
}
