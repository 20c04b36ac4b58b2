/* report_tables.c: the tables of report.html: every step, one row each
 * (table#steps), with traffic classes every step and class (the class
 * capacities in words, then table#classes), and with several --url every
 * step and endpoint (table#endpoints). A cell over an SLO or under the
 * attainment target is red; docs/report.md says what each column holds. */
#include "report/report_html.h"

#include <math.h>
#include <stdio.h>

#include "measure/stats.h"
#include "report/report_int.h"
#include "util/util.h"

/* One number cell: v as report_put_value writes it (NaN a dash), red when
 * bad. */
static void report_td(struct strbuf *b, double v, int bad)
{
    strbuf_puts(b, bad ? "<td class=\"bad\">" : "<td>");
    report_put_value(b, v);
    strbuf_puts(b, "</td>");
}

/* A latency's cell: ns in ms (per_unit 1e6) or s (1e9); a dash when not
 * defined (no successful request behind it). */
static void report_td_ns(struct strbuf *b, uint64_t ns, double per_unit, int defined)
{
    report_td(b, defined ? (double)ns / per_unit : NAN, 0);
}

/* A latency's p50 and p99 cells, under a P50_P99 heading: report_td_ns
 * of each. */
static void report_td_p50_p99(struct strbuf *b, uint64_t p50_ns, uint64_t p99_ns, double per_unit,
                              int defined)
{
    report_td_ns(b, p50_ns, per_unit, defined);
    report_td_ns(b, p99_ns, per_unit, defined);
}

/* A text cell, left-aligned: text escaped (nothing when NULL). */
static void report_text_td(struct strbuf *b, const char *text)
{
    strbuf_puts(b, "<td class=\"l\">");
    strbuf_put_xml(b, text != NULL ? text : "");
    strbuf_puts(b, "</td>");
}

/* Three count cells: requests, of them ok, and of them failed (red when
 * any). */
static void report_counts_td(struct strbuf *b, uint64_t n, uint64_t ok, uint64_t failed)
{
    strbuf_printf(b, "<td>%llu</td><td>%llu</td><td%s>%llu</td>", (unsigned long long)n,
                  (unsigned long long)ok, failed ? " class=\"bad\"" : "",
                  (unsigned long long)failed);
}

/* Step s's name cell (step i of the page): the name the terminal and
 * steps.csv give it, so one step has one number everywhere. */
static void report_step_id_td(struct strbuf *b, const struct report_step *s, size_t i)
{
    strbuf_puts(b, "<td>");
    if (s->id[0] != '\0')
        strbuf_put_xml(b, s->id);
    else
        strbuf_printf(b, "%zu%s", i, s->recovery ? " rec" : s->confirm ? " re" : "");
    strbuf_puts(b, "</td>");
}

/* A table's heading, up to the opening <tbody>: head[i] is the column's
 * first line, its second line and its tooltip (none when empty). The last
 * column, and column text_col, hold text and are left-aligned. */
static void report_table_head(struct strbuf *b, const char *const (*head)[3], size_t n,
                              size_t text_col)
{
    strbuf_puts(b, "<thead><tr>");
    for (size_t i = 0; i < n; i++) {
        strbuf_puts(b, i == text_col || i == n - 1 ? "<th class=\"l\"" : "<th");
        if (head[i][2][0] != '\0')
            strbuf_printf(b, " title=\"%s\"", head[i][2]);
        strbuf_printf(b, ">%s<br/>%s</th>", head[i][0], head[i][1]);
    }
    strbuf_puts(b, "</tr></thead>\n<tbody>\n");
}

/* Step i's row of table#steps: shaded beyond the SLO capacity, italic for
 * the recovery step; a p99 over its SLO, an attainment under the target,
 * any error and an unsteady step in red. */
static void report_table_row(struct strbuf *b, const struct report *r, size_t i)
{
    const struct report_step *s = &r->steps[i];
    int over = r->capacity_rps > 0 && report_step_x(r, s) > r->capacity_rps;
    strbuf_printf(b, "<tr%s>", s->recovery ? " class=\"recovery\""
                                          : over ? " class=\"over\"" : "");
    report_step_id_td(b, s, i);
    report_td(b, s->offered_rps, 0);
    report_td(b, s->achieved_rps, 0);
    report_td(b, s->completed_rps, 0);
    report_td(b, s->goodput_rps, 0);
    report_td(b, s->attainment * 100.0,
              r->attainment_target > 0 && stats_share_cmp(s->attainment, r->attainment_target) < 0);
    report_td(b, s->input_tps, 0);
    report_td(b, s->output_tps, 0);
    static const int tp[4] = {REPORT_P50, REPORT_P90, REPORT_P99, REPORT_MAX};
    int st = s->ok && !s->no_stream; /* an embeddings step has no stream figures: "-" */
    for (int p = 0; p < 4; p++)
        report_td(b, st ? (double)s->ttft_ns[tp[p]] / 1e6 : NAN,
                  tp[p] == REPORT_P99 && r->slo_ttft_ms > 0 && st &&
                      (double)s->ttft_ns[tp[p]] / 1e6 > r->slo_ttft_ms);
    report_td(b, st ? (double)s->tpot_ns[REPORT_P50] / 1e6 : NAN, 0);
    report_td(b, st ? (double)s->tpot_ns[REPORT_P99] / 1e6 : NAN,
              r->slo_tpot_ms > 0 && st && (double)s->tpot_ns[REPORT_P99] / 1e6 > r->slo_tpot_ms);
    report_td(b, st ? (double)s->itl_ns[REPORT_P50] / 1e6 : NAN, 0);
    report_td(b, st ? (double)s->itl_ns[REPORT_P99] / 1e6 : NAN, 0);
    report_td(b, s->ok ? (double)s->e2e_ns[REPORT_P50] / 1e9 : NAN, 0);
    report_td(b, s->ok ? (double)s->e2e_ns[REPORT_P99] / 1e9 : NAN,
              r->slo_e2e_ms > 0 && s->ok &&
                  (double)s->e2e_ns[REPORT_P99] / 1e6 > r->slo_e2e_ms);
    /* Errors as the error rate counts them: the client's own
     * cancellations are not (stats_error_share). */
    uint64_t errors = 0;
    for (int k = 0; k < REC_KIND_COUNT; k++)
        if (k != REC_OK && k != REC_CANCELLED)
            errors += s->by_kind[k];
    strbuf_printf(b, "<td%s>%llu</td>", errors ? " class=\"bad\"" : "",
                  (unsigned long long)errors);
    report_td(b, s->inflight_mean, 0);
    report_td(b, s->inflight_max, 0);
    strbuf_printf(b, "<td%s>%s</td>", s->steady ? "" : " class=\"bad\"",
                  s->steady ? "yes" : "no");
    report_td(b, s->hold_factor, s->short_hold);
    strbuf_puts(b, "<td class=\"l\">");
    strbuf_put_xml(b, s->verdict != NULL ? s->verdict : "");
    if (s->short_hold)
        strbuf_puts(b, "; short");
    strbuf_puts(b, "</td></tr>\n");
}

/* The heading cells of a latency's p50 and p99 columns. */
/* clang-format off */
#define P50_P99(name, unit) {name, "p50", unit}, {name, "p99", unit}
/* The heading cells of the step and offered-load columns every table
 * starts with; offered_tip says whose load it is. */
#define STEP_OFFERED(offered_tip) \
    {"step", "", "step index, from 0 in the order run, as in steps.csv and the terminal"}, \
    {"offered", "req/s", offered_tip}
/* clang-format on */

void report_table(struct strbuf *b, const struct report *r)
{
    /* Heading (two lines), and its tooltip. */
    static const char *const head[][3] = {
        STEP_OFFERED("offered load"),
        {"sent", "req/s", "achieved send rate"},
        {"ok", "req/s", "ok completions per second (completed)"},
        {"goodput", "req/s", "ok and within every SLO, per second"},
        {"in SLO", "%", "share of scheduled requests within every SLO"},
        {"input", "tok/s", "prompt tokens of ok requests per second"},
        {"output", "tok/s", "output tokens of ok requests per second"},
        {"TTFT", "p50", "ms"},
        {"TTFT", "p90", "ms"},
        {"TTFT", "p99", "ms"},
        {"TTFT", "max", "ms"},
        P50_P99("TPOT", "ms"),
        P50_P99("ITL", "ms, per request"),
        P50_P99("E2E", "s"),
        {"errors", "", "requests that ended in an error (the client's cancellations are not)"},
        {"in flight", "mean", "requests, time-weighted"},
        {"in flight", "max", "requests"},
        {"steady", "", "backlog not growing and TTFT tail not rising"},
        {"hold",
         ("\xC3\x97"
          "E2E p99"),
         "the step's window over its E2E p99; red: short (the hold rule)"},
        {"verdict", "", ""},
    };
    strbuf_puts(b, "<div class=\"tablewrap\"><table id=\"steps\">\n");
    report_table_head(b, head, LL_ARRAY_LEN(head), LL_ARRAY_LEN(head));
    for (size_t i = 0; i < r->n_steps; i++)
        report_table_row(b, r, i);
    strbuf_puts(b, "</tbody></table></div>\n<p class=\"note\">TTFT, TPOT and ITL in "
                   "ms, E2E in s; percentiles of successful requests. Shaded rows: "
                   "beyond the SLO capacity. Red: over an SLO or under the attainment "
                   "target. Hold: the window in E2E p99s; a step held under the hold rule's "
                   "factor is short.</p>\n");
}

void report_cold_table(struct strbuf *b, const struct report *r)
{
    static const char *const head[][3] = {
        STEP_OFFERED("offered load"),
        {"cold", "requests", "the step's first --cold-start requests"},
        {"ok", "", "of them ok"},
        {"cold TTFT", "p50", "ms"},
        {"cold TTFT", "p99", "ms"},
        {"cold TTFT", "max", "ms"},
        {"cold E2E", "p99", "s"},
        {"cached", "%", "share of the cold requests' prompt tokens the server served cached"},
        {"warm TTFT", "p50", "ms, the step's other requests"},
        {"warm TTFT", "p99", "ms, the step's other requests"},
    };
    size_t n = 0;
    for (size_t i = 0; i < r->n_steps; i++)
        n += r->steps[i].cold_n > 0;
    if (n == 0)
        return;
    strbuf_puts(b, "<h2>Cold start</h2>\n<div class=\"tablewrap\"><table id=\"cold\">\n");
    report_table_head(b, head, LL_ARRAY_LEN(head), LL_ARRAY_LEN(head));
    for (size_t i = 0; i < r->n_steps; i++) {
        const struct report_step *s = &r->steps[i];
        if (s->cold_n == 0)
            continue;
        strbuf_puts(b, "<tr>");
        report_step_id_td(b, s, i);
        report_td(b, s->offered_rps, 0);
        strbuf_printf(b, "<td>%llu</td><td>%llu</td>", (unsigned long long)s->cold_scheduled,
                      (unsigned long long)s->cold_ok);
        for (int p = 0; p < 3; p++)
            report_td_ns(b, s->cold_ttft_ns[p], 1e6, s->cold_ok > 0);
        report_td_ns(b, s->cold_e2e_p99_ns, 1e9, s->cold_ok > 0);
        report_td(b, s->cold_cached_share * 100.0, 0);
        report_td_p50_p99(b, s->ttft_ns[REPORT_P50], s->ttft_ns[REPORT_P99], 1e6, s->ok > 0);
        strbuf_puts(b, "</tr>\n");
    }
    strbuf_puts(b, "</tbody></table></div>\n<p class=\"note\">Each step's first requests "
                   "(--cold-start), after --cold-restart when it was given: in none of the "
                   "figures above, beside the step's warm TTFT.</p>\n");
}

/* ul.classcap: each class's name, its SLO (its own or the sweep's) and its
 * SLO capacity in words (marked as a lower bound when no step failed for
 * it; "not found" with the reason when no step sent it, where "not
 * reached" would say it failed at the lowest rate). */
static void report_class_caps(struct strbuf *b, const struct report *r)
{
    strbuf_puts(b, "<ul class=\"classcap\">\n");
    for (size_t k = 0; k < r->n_classes; k++) {
        const struct report_class *c = &r->classes[k];
        strbuf_puts(b, "<li data-class=\"");
        strbuf_put_xml(b, c->name);
        strbuf_puts(b, "\"><b>");
        strbuf_put_xml(b, c->name);
        strbuf_puts(b, "</b> (");
        strbuf_put_xml(b, c->slo != NULL ? c->slo : "no SLO");
        if (c->slo != NULL)
            strbuf_puts(b, c->own_slo ? ", its own" : ", the sweep's");
        strbuf_puts(b, "): SLO capacity ");
        if (c->capacity_rps > 0) {
            if (c->capacity_lower_bound)
                strbuf_puts(b, "\xE2\x89\xA5 ");
            report_put_value(b, c->capacity_rps);
            strbuf_puts(b, " req/s");
        } else if (c->not_judged != NULL) {
            strbuf_puts(b, "not found (");
            strbuf_put_xml(b, c->not_judged);
            strbuf_puts(b, ")");
        } else {
            strbuf_puts(b, "not reached");
        }
        strbuf_puts(b, "</li>\n");
    }
    strbuf_puts(b, "</ul>\n");
}

/* The start of step i's row in a per-class or per-endpoint table: italic
 * for the recovery step, the step's name and its offered load. */
static void report_row_lead(struct strbuf *b, const struct report_step *s, size_t i)
{
    strbuf_printf(b, "<tr%s>", s->recovery ? " class=\"recovery\"" : "");
    report_step_id_td(b, s, i);
    report_td(b, s->offered_rps, 0);
}

/* Row of class k at step i of table#classes (the class is present there):
 * italic for the recovery step; its failures, an attainment under the
 * target and a missed SLO in red. A load step that scheduled no request
 * of the class says "no request", not "ok": its slo_pass is true only
 * because nothing failed, and the class's capacity leaves it out. */
static void report_class_row(struct strbuf *b, const struct report *r, size_t i, size_t k)
{
    const struct report_step *s = &r->steps[i];
    const struct report_class_step *cs = &r->classes[k].steps[i];
    report_row_lead(b, s, i);
    report_text_td(b, r->classes[k].name);
    report_counts_td(b, cs->scheduled, cs->ok, cs->failed);
    report_td(b, cs->achieved_rps, 0);
    report_td(b, cs->goodput_rps, 0);
    report_td(b, cs->attainment * 100.0,
              r->attainment_target > 0 &&
                  stats_share_cmp(cs->attainment, r->attainment_target) < 0);
    int ok = cs->ok > 0;
    report_td_p50_p99(b, cs->ttft_ns[REPORT_P50], cs->ttft_ns[REPORT_P99], 1e6, ok);
    report_td_p50_p99(b, cs->tpot_ns[REPORT_P50], cs->tpot_ns[REPORT_P99], 1e6, ok);
    report_td_p50_p99(b, cs->e2e_ns[REPORT_P50], cs->e2e_ns[REPORT_P99], 1e9, ok);
    const char *verdict = s->recovery          ? "recovery"
                          : cs->scheduled == 0 ? "no request"
                          : cs->pass           ? "ok"
                                               : "SLO miss";
    strbuf_printf(b, "<td class=\"l%s\">%s</td></tr>\n", cs->pass ? "" : " bad", verdict);
}

/* Each class's SLO capacity in words, then one row per step and class. */
void report_class_table(struct strbuf *b, const struct report *r)
{
    static const char *const head[][3] = {
        STEP_OFFERED("offered load of the whole step"),
        {"class", "", ""},
        {"sched", "", "requests of the class scheduled in the window"},
        {"ok", "", "its requests that completed ok"},
        {"failed", "", "its requests of any other kind"},
        {"sent", "req/s", "its achieved send rate"},
        {"goodput", "req/s", "ok and within its SLO, per second"},
        {"in SLO", "%", "share of its scheduled requests within its SLO"},
        P50_P99("TTFT", "ms"),
        P50_P99("TPOT", "ms"),
        P50_P99("E2E", "s"),
        {"verdict", "", "met its SLO at the attainment target"},
    };
    report_class_caps(b, r);
    strbuf_puts(b, "<div class=\"tablewrap\"><table id=\"classes\">\n");
    report_table_head(b, head, LL_ARRAY_LEN(head), 2);
    for (size_t i = 0; i < r->n_steps; i++)
        for (size_t k = 0; k < r->n_classes; k++)
            if (r->classes[k].steps[i].present)
                report_class_row(b, r, i, k);
    strbuf_puts(b, "</tbody></table></div>\n<p class=\"note\">Each class against its own "
                   "SLO (else the sweep's); TTFT and TPOT in ms, E2E in s; percentiles of "
                   "its successful requests.</p>\n");
}

/* Row of endpoint k at step i of table#endpoints: italic for the
 * recovery step; its errors in red. */
static void report_endpoint_row(struct strbuf *b, const struct report *r, size_t i, size_t k)
{
    const struct report_step *s = &r->steps[i];
    const struct report_endpoint_step *es = &r->endpoints[k].steps[i];
    report_row_lead(b, s, i);
    strbuf_printf(b, "<td class=\"l\">%zu</td>", k);
    report_counts_td(b, es->requests, es->ok, es->errors);
    report_td(b, es->error_rate * 100.0, es->errors > 0);
    report_td_p50_p99(b, es->ttft_p50_ns, es->ttft_p99_ns, 1e6, es->ok > 0);
    report_td_p50_p99(b, es->tpot_p50_ns, es->tpot_p99_ns, 1e6, es->tpot_p99_ns > 0);
    report_td(b, es->output_tps, 0);
    report_text_td(b, r->endpoints[k].url);
    strbuf_puts(b, "</tr>\n");
}

void report_endpoint_table(struct strbuf *b, const struct report *r)
{
    static const char *const head[][3] = {
        STEP_OFFERED("offered load of the whole step"),
        {"endpoint", "", "the --url's index, as records carry it in \"endpoint\""},
        {"requests", "", "its requests in the window"},
        {"ok", "", "of them, completed ok"},
        {"errors", "", "of them, ended in an error (the client's cancellations are not)"},
        {"errors", "%", "share of its requests the client let end that ended in an error"},
        P50_P99("TTFT", "ms"),
        P50_P99("TPOT", "ms"),
        {"output", "tok/s",
         "output tokens of its ok requests that ended in the window, per second"},
        {"url", "", ""},
    };
    strbuf_puts(b, "<div class=\"tablewrap\"><table id=\"endpoints\">\n");
    report_table_head(b, head, LL_ARRAY_LEN(head), 2);
    for (size_t i = 0; i < r->n_steps; i++)
        for (size_t k = 0; k < r->n_endpoints; k++)
            report_endpoint_row(b, r, i, k);
    strbuf_puts(b, "</tbody></table></div>\n<p class=\"note\">Each endpoint's window "
                   "requests at each step; TTFT and TPOT in ms, percentiles of its "
                   "successful requests. One endpoint far from the others is named in the "
                   "findings.</p>\n");
}
