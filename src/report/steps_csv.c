/* steps_csv.c: steps.csv of a sweep (see steps_csv.h). */
#include "report/steps_csv.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "util/util.h"

/* 54 fixed columns, then one error count per kind other than ok up to
 * transport_error ("err_http_429" ...), in enum rec_kind order, then
 * N_SERVER server columns, then the kinds added after those, then N_HOLD
 * of the hold rule, then N_LATER appended since (columns are only ever
 * appended, so none moves). */
#define N_FIXED 54
#define N_SERVER 15
#define N_HOLD 2
#define N_LATER 1

const char *const steps_csv_columns[] = {
    "step",
    "repeat",
    "kind",
    "offered_rps",
    "start_offset_s",
    "window_s",
    "achieved_rps",
    "completed_rps",
    "goodput_rps",
    "attainment",
    "input_tps",
    "output_tps",
    "scheduled",
    "ok",
    "failed",
    "error_rate",
    "ttft_p50_ms",
    "ttft_p90_ms",
    "ttft_p95_ms",
    "ttft_p99_ms",
    "ttft_p999_ms",
    "ttft_max_ms",
    "tpot_p50_ms",
    "tpot_p90_ms",
    "tpot_p95_ms",
    "tpot_p99_ms",
    "tpot_p999_ms",
    "tpot_max_ms",
    "itl_p50_ms",
    "itl_p90_ms",
    "itl_p95_ms",
    "itl_p99_ms",
    "itl_p999_ms",
    "itl_max_ms",
    "e2e_p50_ms",
    "e2e_p90_ms",
    "e2e_p95_ms",
    "e2e_p99_ms",
    "e2e_p999_ms",
    "e2e_max_ms",
    "ttft_p99_ci_lo_ms",
    "ttft_p99_ci_hi_ms",
    "ttft_p99_first_half_ms",
    "ttft_p99_second_half_ms",
    "inflight_mean",
    "inflight_max",
    "inflight_growth",
    "lateness_p50_ms",
    "lateness_p99_ms",
    "lateness_max_ms",
    "steady",
    "slo_pass",
    "verdict",
    "cost_per_mtok",
    "err_http_429",
    "err_http_5xx",
    "err_http_4xx",
    "err_http_other",
    "err_timeout_connect",
    "err_timeout_first_token",
    "err_timeout_idle",
    "err_timeout_total",
    "err_connect_error",
    "err_stream_truncated",
    "err_malformed_event",
    "err_line_too_long",
    "err_server_error_event",
    "err_cancelled",
    "err_client_dropped",
    "err_transport_error",
    /* the server's /metrics over the step's window (empty when not scraped) */
    "server_scrapes",
    "server_scrapes_failed",
    "server_waiting_mean",
    "server_waiting_max",
    "server_running_mean",
    "server_running_max",
    "server_kv_usage_mean",
    "server_kv_usage_max",
    "server_preemptions",
    "server_ttft_p50_ms",
    "server_ttft_p99_ms",
    "client_ttft_from_sent_p50_ms",
    "client_ttft_from_sent_p99_ms",
    "server_generation_tokens",
    "client_output_tokens_in_span",
    /* kinds added since: appended, so no column moves */
    "err_overloaded_event",
    /* the hold rule */
    "hold_factor",
    "short",
    /* appended since */
    "request_bytes_per_s",
};
const size_t steps_csv_ncolumns = sizeof steps_csv_columns / sizeof steps_csv_columns[0];

_Static_assert(sizeof steps_csv_columns / sizeof steps_csv_columns[0] ==
                   N_FIXED + REC_KIND_COUNT - 1 + N_SERVER + N_HOLD + N_LATER,
               "one error column per kind other than ok");

/* ,v as the shortest decimal that strtod reads back as exactly v, never in
 * exponent form (a spreadsheet or awk takes 1.23457e+06 as a rounded
 * count): 1234567, 0.000123, 9.983333333333334; -0 as 0; an empty field
 * for NaN and the infinities. The least %e precision that round-trips
 * gives the significant digits (17 always do); %f with as many decimals as
 * they reach below the point writes the same digits out in full. The one
 * rule for every real of steps.csv and classes.csv (docs/formats.md). */
static void num(FILE *f, double v)
{
    if (!isfinite(v)) {
        fputc(',', f);
        return;
    }
    if (v == 0) {
        fputs(",0", f);
        return;
    }
    char buf[32];
    int prec = 0;
    snprintf(buf, sizeof buf, "%.*e", prec, v);
    while (prec < 16 && strtod(buf, NULL) != v) {
        prec++;
        snprintf(buf, sizeof buf, "%.*e", prec, v);
    }
    long exp10 = strtol(strchr(buf, 'e') + 1, NULL, 10);
    fprintf(f, ",%.*f", exp10 < prec ? (int)(prec - exp10) : 0, v);
}

/* The n numbers of v, each as num writes it. */
static void nums(FILE *f, const double *v, size_t n)
{
    for (size_t i = 0; i < n; i++)
        num(f, v[i]);
}

#define NUMS(f, ...)                                                                               \
    nums((f), (const double[]){__VA_ARGS__}, LL_ARRAY_LEN(((const double[]){__VA_ARGS__})))

/* n empty columns (a part of the row the step has no figures for). */
static void empty_cols(FILE *f, size_t n)
{
    for (size_t i = 0; i < n; i++)
        fputc(',', f);
}

/* The columns every row starts with: step, repeat, kind, offered_rps. */
static void step_lead(FILE *f, const struct sweep_step *s)
{
    fprintf(f, "%u,%u,%s", s->f.index, s->f.repeat, s->f.recovery ? "recovery" : "load");
    num(f, s->f.offered_rps);
}

/* ,ns in milliseconds as num writes them, or an empty field when not
 * defined. Below 1e15 ns (11 days) that is the exact nanoseconds: 18.416127. */
static void ms(FILE *f, uint64_t ns, int defined)
{
    num(f, defined ? (double)ns / 1e6 : NAN);
}

static void pcts(FILE *f, const uint64_t *v, int defined)
{
    for (int i = 0; i < SWEEP_NPCT; i++)
        ms(f, v[i], defined);
}

/* The N_SERVER server columns: all empty when the step was not scraped. */
static void server_cols(FILE *f, const struct sweep_step *s)
{
    const struct sweep_server *v = &s->f.server;
    if (!v->present) {
        empty_cols(f, N_SERVER);
        return;
    }
    const struct hist *h = s->stats.ttft_server;
    int have = hist_count(h) > 0;
    fprintf(f, ",%llu,%llu", (unsigned long long)v->scrapes, (unsigned long long)v->failed);
    NUMS(f, v->waiting_mean, v->waiting_max, v->running_mean, v->running_max, v->kv_mean, v->kv_max,
         v->preemptions, v->ttft_p50_s * 1e3, v->ttft_p99_s * 1e3);
    ms(f, have ? hist_percentile(h, 50) : 0, have);
    ms(f, have ? hist_percentile(h, 99) : 0, have);
    NUMS(f, v->generation_tokens, v->has_span ? s->client_tokens_in_span : NAN);
}

/* The columns of a sweep with GPU telemetry (--gpu-metrics), after all
 * the others; a sweep without it has none of them, so its steps.csv is
 * what it always was. */
static const char *const energy_columns[] = {
    "energy_source",
    "energy_j",
    "energy_missing",
    "energy_gaps",
    "gpus",
    "mean_power_w",
    "max_power_w",
    "gpu_util_mean_pct",
    "j_per_output_token",
    "j_per_request",
    "output_tokens_per_j",
};
#define N_ENERGY (sizeof energy_columns / sizeof energy_columns[0])

/* 1 when some step of the n had GPU telemetry. */
static int have_energy(const struct sweep_step *steps, size_t n)
{
    for (size_t i = 0; i < n; i++)
        if (steps[i].f.energy.present)
            return 1;
    return 0;
}

/* The N_ENERGY energy columns: all empty when the step was not scraped. */
static void energy_cols(FILE *f, const struct sweep_step *s)
{
    const struct sweep_energy *e = &s->f.energy;
    if (!e->present) {
        empty_cols(f, N_ENERGY);
        return;
    }
    fprintf(f, ",%s", e->source);
    num(f, e->energy_j);
    fprintf(f, ",%llu,%llu,%u", (unsigned long long)e->missing, (unsigned long long)e->gaps,
            e->gpus);
    NUMS(f, s->mean_power_w, e->max_power_w, e->util_mean_pct, s->j_per_output_token,
         s->j_per_request, s->output_tokens_per_j);
}

static void row_fields(FILE *f, const struct sweep_step *s)
{
    const struct stats *st = &s->stats;
    int ok = st->by_kind[REC_OK] > 0;
    step_lead(f, s);
    NUMS(f, (double)s->f.start_offset_ns / 1e9, (double)s->f.window_ns / 1e9, s->achieved_rps,
         s->completed_rps, s->goodput_rps, s->attainment, s->input_tps, s->output_tps);
    fprintf(f, ",%llu,%llu,%llu", (unsigned long long)st->scheduled,
            (unsigned long long)st->by_kind[REC_OK], (unsigned long long)stats_failed(st));
    num(f, s->error_rate);
    pcts(f, s->ttft_ns, ok);
    pcts(f, s->tpot_ns, hist_count(st->tpot) > 0);
    pcts(f, s->itl_ns, hist_count(st->itl_req) > 0);
    pcts(f, s->e2e_ns, ok);
    ms(f, s->ttft_p99_ci_lo_ns, s->ci_valid);
    ms(f, s->ttft_p99_ci_hi_ns, s->ci_valid && s->ttft_p99_ci_hi_ns);
    ms(f, s->ttft_p99_h1_ns, hist_count(s->ttft_h1) > 0);
    ms(f, s->ttft_p99_h2_ns, hist_count(s->ttft_h2) > 0);
    NUMS(f, s->f.inflight_mean, s->f.inflight_max, s->inflight_growth);
    ms(f, s->lateness_ns[0], hist_count(s->f.lateness) > 0);
    ms(f, s->lateness_ns[3], hist_count(s->f.lateness) > 0);
    ms(f, s->lateness_ns[5], hist_count(s->f.lateness) > 0);
    fprintf(f, ",%d,%d,%s", s->steady, s->slo_pass, sweep_step_verdict(s, 1));
    num(f, s->cost_per_mtok);
    for (int k = 1; k <= REC_TRANSPORT_ERROR; k++)
        fprintf(f, ",%llu", (unsigned long long)st->by_kind[k]);
    server_cols(f, s);
    for (int k = REC_TRANSPORT_ERROR + 1; k < REC_KIND_COUNT; k++)
        fprintf(f, ",%llu", (unsigned long long)st->by_kind[k]);
    num(f, s->hold_factor);
    fprintf(f, ",%d", s->short_hold);
    num(f, s->request_bytes_per_s);
}

static void row(FILE *f, const struct sweep_step *s)
{
    row_fields(f, s);
    fputc('\n', f);
}

static void row_energy(FILE *f, const struct sweep_step *s)
{
    row_fields(f, s);
    energy_cols(f, s);
    fputc('\n', f);
}

const char *const steps_csv_class_columns[] = {
    "step", "repeat", "kind", "offered_rps", "class", "slo", "scheduled", "ok", "failed",
    "error_rate", "achieved_rps", "completed_rps", "goodput_rps", "attainment",
    "ttft_p50_ms", "ttft_p99_ms", "tpot_p50_ms", "tpot_p99_ms", "e2e_p50_ms", "e2e_p99_ms",
    "slo_pass",
};
const size_t steps_csv_class_ncolumns =
    sizeof steps_csv_class_columns / sizeof steps_csv_class_columns[0];

int steps_csv_have_classes(const struct sweep_step *steps, size_t n)
{
    return sweep_first_with_classes(steps, n) != NULL;
}

/* The classes.csv rows of step s. Class names are [A-Za-z0-9_.-] and
 * need no quoting; an SLO spec holds commas, so it is always quoted. */
static void class_rows(FILE *f, const struct sweep_step *s)
{
    for (size_t k = 0; k < s->f.n_classes; k++) {
        const struct sweep_class *c = &s->classes[k];
        const struct stats *st = &c->stats;
        int ok = st->by_kind[REC_OK] > 0, tp = hist_count(st->tpot) > 0;
        char slo[96] = "";
        if (c->have_slo)
            slo_format(&c->slo, slo, sizeof slo);
        step_lead(f, s);
        fprintf(f, ",%s,\"%s\",%llu,%llu,%llu", s->f.classes[k].name, slo,
                (unsigned long long)st->scheduled, (unsigned long long)st->by_kind[REC_OK],
                (unsigned long long)stats_failed(st));
        NUMS(f, c->error_rate, c->achieved_rps, c->completed_rps, c->goodput_rps, c->attainment);
        ms(f, c->ttft_ns[0], ok);
        ms(f, c->ttft_ns[3], ok);
        ms(f, c->tpot_ns[0], tp);
        ms(f, c->tpot_ns[3], tp);
        ms(f, c->e2e_ns[0], ok);
        ms(f, c->e2e_ns[3], ok);
        fprintf(f, ",%d\n", c->slo_pass);
    }
}

/* Write a header of ncols names, then nextra more (extra may be NULL
 * when nextra is 0), and rows(f, step) for each step to path atomically. */
static int csv_write(const char *path, const char *const *cols, size_t ncols,
                     const char *const *extra, size_t nextra,
                     void (*rows)(FILE *, const struct sweep_step *),
                     const struct sweep_step *steps, size_t n, char *err, size_t errlen)
{
    char tmp[4096];
    if ((size_t)snprintf(tmp, sizeof tmp, "%s.tmp", path) >= sizeof tmp) {
        snprintf(err, errlen, "%.200s: path too long", path);
        return LL_E_RANGE;
    }
    FILE *f = fopen(tmp, "w");
    if (!f) {
        snprintf(err, errlen, "%s: %s", tmp, strerror(errno));
        return LL_E_IO;
    }
    for (size_t i = 0; i < ncols; i++)
        fprintf(f, "%s%s", i ? "," : "", cols[i]);
    for (size_t i = 0; i < nextra; i++)
        fprintf(f, ",%s", extra[i]);
    fputc('\n', f);
    for (size_t i = 0; i < n; i++)
        rows(f, &steps[i]);
    int bad = fflush(f) != 0 || fsync(fileno(f)) != 0;
    int e = errno;
    if (fclose(f) != 0 && !bad) {
        bad = 1;
        e = errno;
    }
    if (bad || rename(tmp, path) != 0) {
        if (!bad)
            e = errno;
        snprintf(err, errlen, "%s: %s", path, strerror(e));
        unlink(tmp);
        return LL_E_IO;
    }
    return 0;
}

int steps_csv_write(const char *path, const struct sweep_step *steps, size_t n, char *err,
                    size_t errlen)
{
    int energy = have_energy(steps, n);
    return csv_write(path, steps_csv_columns, steps_csv_ncolumns, energy ? energy_columns : NULL,
                     energy ? N_ENERGY : 0, energy ? row_energy : row, steps, n, err, errlen);
}

int steps_csv_write_classes(const char *path, const struct sweep_step *steps, size_t n,
                            char *err, size_t errlen)
{
    return csv_write(path, steps_csv_class_columns, steps_csv_class_ncolumns, NULL, 0, class_rows,
                     steps, n, err, errlen);
}
