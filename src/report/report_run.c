/* report_run.c: report.html of one load point (report_run.h).
 *
 * The page, top to bottom:
 *
 *   header     the command, the load (summary.json's mode), the facts
 *              (target, model, seed, window and warm-up, SLO, version),
 *              the verdict in one line and a banner for each warning
 *              summary.json carries (INVALID, interrupted, not steady,
 *              lateness, cut short, cache, prompt)
 *   cards      ok and failed, completion rate, output tokens/s, TTFT
 *              p99, TPOT p99, E2E p99 (goodput with an SLO)
 *   latency    table#latency: TTFT, ITL, TPOT, E2E... p50 to max and
 *              count; table#classes per traffic class
 *   throughput the rates and the in-flight figures, as summary.json says
 *   tokens     where the output token counts came from (tokens.source)
 *              and the finish reasons, with the cut short
 *   server     table#server: the server's /metrics joined to the run beside
 *              the client's count of the same thing; table#usage: what the
 *              responses' usage reported (report_runsrv.c)
 *   errors     table#errors: each kind that occurred, its count and a
 *              sample of its message
 *   over time  per second from hist.jsonl: TTFT p50/p99, TPOT p50/p99,
 *              requests ended ok and failed; the server's scrapes and the
 *              GPU telemetry on the same axis as the sweep page's
 *
 * Every figure in a table or card is summary.json's: each table cell
 * carries the exact value in data-v, the text is it for people
 * (report_put_value). The charts per second are the windows of
 * hist.jsonl, the workers' lines of one second added together (a merged
 * run's file has one line a second, every shard's added up by merge). */
#include "report/report_run.h"

#include <errno.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/types.h>
#include <unistd.h>

#include "measure/expect.h"
#include "measure/hist.h"
#include "measure/record.h"
#include "measure/verdict.h"
#include "report/report_html.h"
#include "report/report_int.h"
#include "report/report_runsec.h"
#include "report/report_runsrv.h"
#include "report/report_scrapes.h"
#include "report/svg.h"
#include "util/json.h"
#include "util/util.h"

static double jnum(const json_t *o, const char *path)
{
    const json_t *v = report_run_jpath(o, path);
    return json_is_number(v) ? json_number_value(v) : NAN;
}

static const char *jstr(const json_t *o, const char *path)
{
    return json_string_value(report_run_jpath(o, path));
}

/* --- the parts of the page --- */

/* One fact of dl.facts: key, then text (escaped); nothing when NULL. */
static void run_fact(struct strbuf *b, const char *key, const char *text)
{
    if (text == NULL || text[0] == '\0')
        return;
    strbuf_printf(b, "<div><dt>%s</dt><dd>", key);
    strbuf_put_xml(b, text);
    strbuf_puts(b, "</dd></div>\n");
}

/* run.json's tags as "k=v k=v"; "" = none. */
static void run_tags(const json_t *run, struct strbuf *t)
{
    const char *k;
    const json_t *v;
    json_object_foreach((json_t *)json_object_get(run, "tags"), k, v)
    {
        if (!json_is_string(v))
            continue;
        strbuf_printf(t, "%s%s=%s", t->len ? " " : "", k, json_string_value(v));
    }
}

/* The --expect checks that failed, as "a, b" (their text); "" = none.
 * Returns how many checks summary.json lists (0: no --expect). */
static size_t run_expect_failed(const json_t *sum, struct strbuf *t)
{
    const json_t *ex = json_object_get(sum, "expect");
    if (!json_is_array(ex))
        return 0;
    size_t i;
    const json_t *c;
    json_array_foreach(ex, i, c)
    {
        const char *res = jstr(c, "result");
        if (res == NULL || strcmp(res, "fail") != 0)
            continue;
        strbuf_printf(t, "%s%s", t->len ? ", " : "", jstr(c, "expect") ? jstr(c, "expect") : "?");
    }
    return json_array_size(ex);
}

/* 1 when requests were scheduled and none ended ok: the run's exit 6. */
static int run_none_ok(const json_t *sum)
{
    return jnum(sum, "requests.ok") == 0 && jnum(sum, "requests.scheduled") > 0;
}

/* Why the run measured nothing (exit 6), in the terminal's words: the
 * summary's nothing_measured; NULL when it measured. A summary.json
 * written before the field keeps its old page: run_none_ok's line. */
static const char *run_nothing_measured(const json_t *sum)
{
    if (json_object_get(sum, "nothing_measured") != NULL)
        return jstr(sum, "nothing_measured");
    return run_none_ok(sum) ? "" : NULL;
}

/* The INVALID headline of summary.json's run: whose fault, by its
 * lateness_diagnosis.cause (verdict_invalid_headline; "the client" in a
 * file from before the diagnosis). */
static const char *run_invalid_headline(const json_t *sum)
{
    return verdict_invalid_headline(
        verdict_late_cause_from_name(jstr(sum, "lateness_diagnosis.cause")));
}

/* The verdict in one line: how the run ended (no request ok, --expect
 * failed or passed), INVALID or valid, steady or not (or why not judged:
 * "steady not judged: ...", as the terminal's steady line), interrupted. */
static void run_verdict_line(struct strbuf *t, const json_t *sum)
{
    struct strbuf f;
    strbuf_init(&f);
    size_t n_expect = run_expect_failed(sum, &f);
    const char *none = run_nothing_measured(sum);
    if (none != NULL && none[0])
        strbuf_printf(t, "FAILED: %s; ", none);
    else if (none != NULL)
        strbuf_puts(t, "FAILED: no request succeeded; ");
    else if (jstr(sum, "shard_empty") != NULL)
        strbuf_printf(t, "%s; ", jstr(sum, "shard_empty"));
    if (f.len)
        strbuf_printf(t, "FAILED --expect: %s; ", f.data);
    if (json_is_true(json_object_get(sum, "invalid")))
        strbuf_printf(t, "INVALID (%s)", run_invalid_headline(sum));
    else
        strbuf_puts(t, "valid (the generator kept its schedule)");
    const json_t *st = json_object_get(sum, "steady");
    if (json_is_boolean(st))
        strbuf_puts(t, json_is_true(st) ? "; steady" : "; not steady");
    else if (jstr(sum, "steady_unjudged") != NULL)
        strbuf_printf(t, "; steady %s", jstr(sum, "steady_unjudged"));
    if (json_is_true(json_object_get(sum, "interrupted")))
        strbuf_puts(t, "; interrupted: the window was cut short");
    if (n_expect > 0 && f.len == 0)
        strbuf_puts(t, "; --expect passed");
    strbuf_free(&f);
}

/* dl.facts: target, model, server, tags, load, seed, window, SLO,
 * version, verdict. */
static void run_facts(struct strbuf *b, const json_t *run, const json_t *sum)
{
    struct strbuf t;
    strbuf_init(&t);
    strbuf_puts(b, "<dl class=\"facts\">\n");
    run_fact(b, "target", jstr(sum, "target_url"));
    run_fact(b, "model", jstr(sum, "model"));
    run_fact(b, "server", jstr(run, "contract.server.header"));
    run_tags(run, &t);
    run_fact(b, "tags", t.data);
    run_fact(b, "load", jstr(sum, "mode"));
    strbuf_clear(&t);
    if (json_is_integer(json_object_get(sum, "seed")))
        strbuf_printf(&t, "%lld", (long long)json_integer_value(json_object_get(sum, "seed")));
    run_fact(b, "seed", t.data);
    strbuf_clear(&t);
    report_put_value(&t, jnum(sum, "window_ns") / 1e9);
    strbuf_puts(&t, " s measured");
    if (jnum(sum, "warmup_ns") > 0) {
        strbuf_puts(&t, ", after ");
        report_put_value(&t, jnum(sum, "warmup_ns") / 1e9);
        strbuf_puts(&t, " s warm-up");
    }
    run_fact(b, "window", t.data);
    run_fact(b, "SLO", jstr(sum, "throughput.slo") ? jstr(sum, "throughput.slo") : "none");
    run_fact(b, "llmload", jstr(sum, "version"));
    strbuf_clear(&t);
    run_verdict_line(&t, sum);
    strbuf_puts(b, "<div><dt>verdict</dt><dd id=\"verdict\">");
    strbuf_put_xml(b, t.data);
    strbuf_puts(b, "</dd></div>\n</dl>\n");
    strbuf_free(&t);
}

/* A banner of class cls with prefix, then summary.json's text at key
 * (nothing when it is null and prefix is NULL). */
static void run_banner(struct strbuf *b, const char *cls, const char *prefix, const char *text)
{
    if (prefix == NULL && (text == NULL || text[0] == '\0'))
        return;
    strbuf_printf(b, "<div class=\"banner %s\">", cls);
    if (prefix != NULL)
        strbuf_put_xml(b, prefix);
    if (text != NULL && text[0] != '\0') {
        if (prefix != NULL)
            strbuf_puts(b, " ");
        strbuf_put_xml(b, text);
    }
    strbuf_puts(b, "</div>\n");
}

/* The banners: FAILED (a window that measured nothing) or a shard's
 * empty window, which is not a failure (summary.json's shard_empty, in
 * its words), INVALID with its reason, interrupted with the stop
 * reason, closed loop, and each warning summary.json has, in its words. */
static void run_banners(struct strbuf *b, const json_t *sum)
{
    const char *none = run_nothing_measured(sum);
    if (none != NULL && none[0])
        run_banner(b, "invalid", "FAILED (exit 6):", none);
    else if (none != NULL)
        run_banner(b, "invalid",
                   "FAILED: no request succeeded (exit 6); the latencies below are empty.", NULL);
    else
        run_banner(b, "closed", NULL, jstr(sum, "shard_empty"));
    struct strbuf f;
    strbuf_init(&f);
    run_expect_failed(sum, &f);
    if (f.len) {
        strbuf_puts(b, "<div class=\"banner invalid\" id=\"expect-failed\">FAILED --expect "
                       "(exit 7): ");
        strbuf_put_xml(b, f.data);
        strbuf_puts(b, "</div>\n");
    }
    strbuf_free(&f);
    if (json_is_true(json_object_get(sum, "invalid"))) {
        char head[160];
        snprintf(head, sizeof head, "INVALID: %s; these figures are not trustworthy.",
                 run_invalid_headline(sum));
        run_banner(b, "invalid", head, jstr(sum, "invalid_reason"));
    }
    if (json_is_true(json_object_get(sum, "interrupted")))
        run_banner(b, "invalid", "Interrupted: a signal cut the window short.",
                   jstr(sum, "stop_reason"));
    else
        run_banner(b, "closed", NULL, jstr(sum, "stop_reason"));
    if (json_is_true(json_object_get(sum, "closed_loop")))
        run_banner(b, "closed",
                   "CLOSED LOOP: each user waits for its response before sending again, "
                   "so latencies exclude the wait a real user would see under overload.",
                   NULL);
    static const char *const warnings[] = {"steady_warning",    "lateness_warning",
                                           "cut_short_warning", "cache_warning",
                                           "prompt_warning",    "status_warning"};
    for (size_t i = 0; i < LL_ARRAY_LEN(warnings); i++)
        run_banner(b, "closed", NULL, jstr(sum, warnings[i]));
}

/* "merged from 2 shards" into out (len bytes) for a merged run's run.json,
 * "merged from 1 of 2 shards" when shards are missing, with ", histograms
 * only" after a --hist-only merge; "" for any other run. */
static void run_merged_words(const json_t *run, char *out, size_t len)
{
    const json_t *n = report_run_jpath(run, "merged.shards");
    out[0] = '\0';
    if (!json_is_integer(n))
        return;
    long long shards = json_integer_value(n);
    const json_t *dirs = report_run_jpath(run, "merged.dirs");
    long long present = json_is_array(dirs) ? (long long)json_array_size(dirs) : shards;
    const char *hist =
        json_is_true(report_run_jpath(run, "merged.hist_only")) ? ", histograms only" : "";
    if (present < shards)
        snprintf(out, len, "merged from %lld of %lld shards%s", present, shards, hist);
    else
        snprintf(out, len, "merged from %lld shards%s", shards, hist);
}

static void run_header(struct strbuf *b, const json_t *run, const json_t *sum)
{
    char merged[96];
    run_merged_words(run, merged, sizeof merged);
    const char *cmd = jstr(run, "command");
    strbuf_puts(b, "<header>\n<h1>llmload ");
    strbuf_put_xml(b, cmd != NULL ? cmd : "run");
    strbuf_puts(b, "</h1>\n<p class=\"sub\">Load point");
    if (jstr(sum, "mode") != NULL) {
        strbuf_puts(b, ", ");
        strbuf_put_xml(b, jstr(sum, "mode"));
    }
    if (merged[0])
        strbuf_printf(b, "; <span id=\"merged\">%s</span>", merged);
    strbuf_puts(b, "</p>\n");
    run_facts(b, run, sum);
    run_banners(b, sum);
    strbuf_puts(b, "</header>\n");
}

/* A latency's card: p99 (scale ns per unit) with p50 below. */
static void run_latency_card(struct strbuf *b, const json_t *sum, const char *key, const char *name,
                             const char *unit, double scale)
{
    char path[64];
    struct strbuf d;
    strbuf_init(&d);
    snprintf(path, sizeof path, "latency_ns.%s.p50", key);
    strbuf_puts(&d, "p50 ");
    report_put_value(&d, jnum(sum, path) / scale);
    strbuf_printf(&d, " %s", unit);
    snprintf(path, sizeof path, "latency_ns.%s.p99", key);
    report_card(b, key, name, jnum(sum, path) / scale, unit, "none", d.data);
    strbuf_free(&d);
}

/* What a count card says instead of v: 0 when summary.json says 0, an
 * en dash when it does not have the figure. */
static const char *run_none(double v)
{
    return isfinite(v) ? "0" : "\xE2\x80\x93";
}

/* 1 when the run streamed tokens to time: its TTFT counted a request, or
 * summary.json (older) does not say. Not with embeddings or none ok. */
static int run_streamed(const json_t *sum)
{
    const json_t *n = report_run_jpath(sum, "latency_ns.ttft.count");
    return !json_is_integer(n) || json_integer_value(n) > 0;
}

/* The cards: requests ok, completion rate, output tokens/s, goodput
 * (with an SLO), TTFT, TPOT and E2E p99; the stream's (output, TTFT,
 * TPOT) only when a request streamed. */
static void run_cards(struct strbuf *b, const json_t *sum)
{
    struct strbuf d;
    strbuf_init(&d);
    strbuf_puts(b, "<section class=\"cards\">\n");
    strbuf_puts(&d, "of ");
    report_put_value(&d, jnum(sum, "requests.scheduled"));
    strbuf_puts(&d, " scheduled; failed ");
    report_put_value(&d, jnum(sum, "requests.failed"));
    report_card(b, "ok", "Requests ok", jnum(sum, "requests.ok"), "",
                run_none(jnum(sum, "requests.ok")), d.data);
    strbuf_clear(&d);
    strbuf_puts(&d, "ended in the window, any kind; ok ");
    report_put_value(&d, jnum(sum, "throughput.ok_rate_per_s"));
    strbuf_puts(&d, " req/s");
    double rate = jnum(sum, "throughput.completion_rate_per_s");
    report_card(b, "rate", "Completion rate", rate, "req/s", run_none(rate), d.data);
    if (run_streamed(sum))
        report_card(b, "tput", "Output", jnum(sum, "throughput.output_tokens_per_s"), "tokens/s",
                    "none", "generated tokens of ok requests");
    if (jstr(sum, "throughput.slo") != NULL) {
        strbuf_clear(&d);
        strbuf_puts(&d, "ok within the SLO; attainment ");
        report_put_value(&d, jnum(sum, "throughput.attainment") * 100);
        strbuf_puts(&d, "%");
        double good = jnum(sum, "throughput.goodput_per_s");
        report_card(b, "good", "Goodput", good, "req/s", run_none(good), d.data);
    }
    if (run_streamed(sum)) {
        run_latency_card(b, sum, "ttft", "TTFT p99", "ms", 1e6);
        run_latency_card(b, sum, "tpot", "TPOT p99", "ms", 1e6);
    }
    run_latency_card(b, sum, "e2e", "E2E p99", "s", 1e9);
    strbuf_puts(b, "</section>\n");
    strbuf_free(&d);
}

/* The latencies of table#latency, summary.json's latency_ns keys, named
 * as the terminal's summary names them (summary.c): ttft_server is the
 * client's TTFT from the send time, the figure the server's own histogram
 * measures, not the server's. */
static const char *const run_lat[][2] = {
    {"ttft", "TTFT"},
    {"ttft_server", "TTFT (server: first - sent)"},
    {"itl", "ITL (per gap)"},
    {"itl_request", "ITL (per request)"},
    {"tpot", "TPOT"},
    {"e2e", "E2E"},
    {"e2e_failed", "E2E (failed requests)"},
    {"client_queue", "client queue"},
    {"schedule_lateness", "schedule lateness"},
};

static const char *const run_pcts[] = {"p50", "p90", "p95", "p99", "p99_9", "max"};

/* table#latency: one row per latency summary.json has, ms. */
static void run_latency_table(struct strbuf *b, const json_t *sum)
{
    const json_t *lat = json_object_get(sum, "latency_ns");
    strbuf_puts(b, "<h2>Latency</h2>\n<div class=\"tablewrap\"><table id=\"latency\"><thead><tr>"
                   "<th class=\"l\">ms</th><th>p50</th><th>p90</th><th>p95</th><th>p99</th>"
                   "<th>p99.9</th><th>max</th><th>count</th></tr></thead>\n<tbody>\n");
    for (size_t i = 0; i < LL_ARRAY_LEN(run_lat); i++) {
        const json_t *o = json_object_get(lat, run_lat[i][0]);
        if (o == NULL)
            continue;
        strbuf_printf(b, "<tr id=\"lat-%s\"><td class=\"l\">%s</td>", run_lat[i][0], run_lat[i][1]);
        for (size_t p = 0; p < LL_ARRAY_LEN(run_pcts); p++)
            report_run_cell(b, json_object_get(o, run_pcts[p]), 1e6);
        report_run_cell(b, json_object_get(o, "count"), 1);
        strbuf_puts(b, "</tr>\n");
    }
    strbuf_puts(b, "</tbody></table></div>\n<p class=\"note\">Nearest-rank percentiles from "
                   "the run's histograms, each within 0.4% (docs/percentiles.md); data-v "
                   "holds summary.json's exact figure, ns.</p>\n");
}

/* table#classes: each traffic class's requests, latencies and SLO, when
 * the workload had classes. */
static void run_class_table(struct strbuf *b, const json_t *sum)
{
    const json_t *cls = json_object_get(sum, "classes");
    if (!json_is_array(cls) || json_array_size(cls) == 0)
        return;
    strbuf_puts(b, "<h2>By traffic class</h2>\n<div class=\"tablewrap\"><table id=\"classes\">"
                   "<thead><tr><th class=\"l\">class</th><th>scheduled</th><th>ok</th>"
                   "<th>failed</th><th>TTFT p50 ms</th><th>TTFT p99 ms</th><th>TPOT p50 ms</th>"
                   "<th>TPOT p99 ms</th><th>E2E p99 s</th><th>output tok/s</th>"
                   "<th class=\"l\">SLO</th><th>attainment %</th></tr></thead>\n<tbody>\n");
    size_t i;
    const json_t *c;
    json_array_foreach(cls, i, c)
    {
        strbuf_puts(b, "<tr><td class=\"l\">");
        strbuf_put_xml(b, jstr(c, "name") ? jstr(c, "name") : "");
        strbuf_puts(b, "</td>");
        report_run_cell(b, json_object_get(c, "scheduled"), 1);
        report_run_cell(b, json_object_get(c, "ok"), 1);
        report_run_cell(b, json_object_get(c, "failed"), 1);
        report_run_cell(b, report_run_jpath(c, "latency_ns.ttft.p50"), 1e6);
        report_run_cell(b, report_run_jpath(c, "latency_ns.ttft.p99"), 1e6);
        report_run_cell(b, report_run_jpath(c, "latency_ns.tpot.p50"), 1e6);
        report_run_cell(b, report_run_jpath(c, "latency_ns.tpot.p99"), 1e6);
        report_run_cell(b, report_run_jpath(c, "latency_ns.e2e.p99"), 1e9);
        report_run_cell(b, json_object_get(c, "output_tokens_per_s"), 1);
        strbuf_puts(b, "<td class=\"l\">");
        strbuf_put_xml(b, jstr(c, "slo") ? jstr(c, "slo") : "none");
        strbuf_puts(b, "</td>");
        report_run_cell(b, json_object_get(c, "attainment"), 0.01);
        strbuf_puts(b, "</tr>\n");
    }
    strbuf_puts(b, "</tbody></table></div>\n");
}

/* table#requests and table#throughput: the counts and rates, as
 * summary.json has them. */
static void run_throughput_table(struct strbuf *b, const json_t *sum)
{
    static const char *const rows[][2] = {
        {"requests.scheduled", "requests scheduled"},
        {"requests.sent", "sent"},
        {"requests.ok", "ok"},
        {"requests.failed", "failed"},
        {"requests.unfinished", "unfinished"},
        {"throughput.offered_rate_per_s", "offered, req/s"},
        {"throughput.send_rate_per_s", "sent, req/s"},
        {"throughput.completion_rate_per_s", "completed, req/s"},
        {"throughput.ok_rate_per_s", "ok, req/s"},
        {"throughput.goodput_per_s", "goodput, req/s"},
        {"throughput.input_tokens_per_s", "input tokens/s"},
        {"throughput.output_tokens_per_s", "output tokens/s"},
        {"inflight.mean", "in flight, mean (time-weighted)"},
        {"inflight.max", "in flight, max"},
    };
    strbuf_puts(b, "<h2>Requests and throughput</h2>\n<div class=\"tablewrap\">"
                   "<table id=\"throughput\"><tbody>\n");
    for (size_t i = 0; i < LL_ARRAY_LEN(rows); i++) {
        const json_t *v = report_run_jpath(sum, rows[i][0]);
        if (!json_is_number(v))
            continue;
        strbuf_printf(b, "<tr id=\"%s\"><td class=\"l\">%s</td>", rows[i][0], rows[i][1]);
        report_run_cell(b, v, 1);
        strbuf_puts(b, "</tr>\n");
    }
    strbuf_puts(b, "</tbody></table></div>\n<p class=\"note\">Rates over the measured window, "
                   "the warm-up left out (docs/metrics.md).</p>\n");
}

/* The rows of a count object o (finish_reasons, tokens.source), in its
 * order, ids prefix.key; only counts over 0 when skip_zero. Returns the
 * rows written. */
static size_t run_count_rows(struct strbuf *b, const json_t *o, const char *prefix, int skip_zero)
{
    size_t n = 0;
    const char *k;
    const json_t *v;
    json_object_foreach((json_t *)o, k, v)
    {
        if (!json_is_number(v) || (skip_zero && json_number_value(v) <= 0))
            continue;
        strbuf_printf(b, "<tr id=\"%s.", prefix);
        strbuf_put_xml(b, k);
        strbuf_puts(b, "\"><td class=\"l\">");
        strbuf_put_xml(b, k);
        strbuf_puts(b, "</td>");
        report_run_cell(b, v, 1);
        strbuf_puts(b, "</tr>\n");
        n++;
    }
    return n;
}

/* The start of a two-column table, up to its <tbody>: what, then the ok
 * requests of each. */
static void run_ok_table_open(struct strbuf *b, const char *id, const char *what)
{
    strbuf_printf(b,
                  "<div class=\"tablewrap\"><table id=\"%s\"><thead><tr><th class=\"l\">%s</th>"
                  "<th>ok requests</th></tr></thead>\n<tbody>\n",
                  id, what);
}

/* The output tokens of the ok requests, as the terminal's throughput
 * lines give them: where their counts came from (tokens.source: the
 * usage object, per-chunk usage, or counted events, a lower bound) and
 * why the server ended them (finish_reasons, and the cut short). Only
 * with an ok request of a streamed API (embeddings have no output). */
static void run_output_tokens(struct strbuf *b, const json_t *sum)
{
    const json_t *src = report_run_jpath(sum, "tokens.source");
    const json_t *fin = json_object_get(sum, "finish_reasons");
    if (!(jnum(sum, "requests.ok") > 0) || json_is_number(report_run_jpath(sum, "tokens.inputs")) ||
        (!json_is_object(src) && !json_is_object(fin)))
        return;
    strbuf_puts(b, "<h2>Output tokens</h2>\n<section class=\"grid\">\n");
    if (json_is_object(src)) {
        run_ok_table_open(b, "tokens-source", "output tokens counted from");
        run_count_rows(b, src, "tokens.source", 1);
        strbuf_puts(b, "</tbody></table></div>\n");
    }
    if (json_is_object(fin)) {
        run_ok_table_open(b, "finish", "finish_reason");
        run_count_rows(b, fin, "finish_reasons", 0);
        const json_t *cut = report_run_jpath(sum, "cut_short.count");
        if (json_is_number(cut)) {
            strbuf_puts(b, "<tr id=\"cut_short.count\"><td class=\"l\">cut short</td>");
            report_run_cell(b, cut, 1);
            strbuf_puts(b, "</tr>\n");
        }
        const json_t *unj = report_run_jpath(sum, "cut_short.unjudged");
        if (json_is_number(unj) && json_number_value(unj) > 0) {
            strbuf_puts(b, "<tr id=\"cut_short.unjudged\"><td class=\"l\">cut short not judged "
                           "(counted events)</td>");
            report_run_cell(b, unj, 1);
            strbuf_puts(b, "</tr>\n");
        }
        strbuf_puts(b, "</tbody></table></div>\n");
    }
    strbuf_puts(b, "</section>\n<p class=\"note\" id=\"tokens-note\">Over the ");
    report_put_value(b, jnum(sum, "requests.ok"));
    strbuf_puts(
        b, " ok requests. finish_reason is the server's, in the API's words; cut short: "
           "fewer output tokens than max_tokens where the server said it stopped for length or "
           "the request set ignore_eos (a count from events is not judged).");
    if (jnum(sum, "tokens.source.events") > 0)
        strbuf_puts(b, " Counted events undercount when an event carries several tokens; ask "
                       "for usage with stream_options.include_usage.");
    strbuf_puts(b, "</p>\n");
}

/* table#errors: each kind but ok that occurred, its count, and the first
 * message of that kind summary.json kept. Nothing when none failed. */
static void run_errors(struct strbuf *b, const json_t *sum)
{
    const json_t *kinds = report_run_jpath(sum, "requests.by_kind");
    int any = 0;
    const char *k;
    const json_t *v;
    json_object_foreach((json_t *)kinds, k, v)
    {
        if (strcmp(k, "ok") == 0 || !(json_is_integer(v) && json_integer_value(v) > 0))
            continue;
        if (!any)
            strbuf_puts(b, "<h2>Errors</h2>\n<div class=\"tablewrap\"><table id=\"errors\">"
                           "<thead><tr><th class=\"l\">kind</th><th>requests</th>"
                           "<th class=\"l\">a sample of the message</th></tr></thead>\n"
                           "<tbody>\n");
        any = 1;
        const char *msg =
            json_string_value(json_object_get(report_run_jpath(sum, "requests.samples"), k));
        strbuf_puts(b, "<tr><td class=\"l\">");
        strbuf_put_xml(b, k);
        strbuf_puts(b, "</td>");
        report_run_cell(b, v, 1);
        strbuf_puts(b, "<td class=\"l\">");
        strbuf_put_xml(b, msg && msg[0] ? msg : "(no message)");
        strbuf_puts(b, "</td></tr>\n");
    }
    double failed = jnum(sum, "requests.failed");
    if (any)
        strbuf_puts(b, "</tbody></table></div>\n");
    else if (failed > 0) {
        strbuf_puts(b, "<h2>Errors</h2>\n<p class=\"note\" id=\"errors-unnamed\">");
        report_put_value(b, failed);
        strbuf_puts(b, " requests failed; summary.json does not say of which kinds "
                       "(requests.jsonl has each one).</p>\n");
    } else if (failed == 0)
        strbuf_puts(b, "<h2>Errors</h2>\n<p class=\"note\" id=\"errors-none\">No request "
                       "failed.</p>\n");
}

/* --- charts over time --- */

/* A chart per second of the windows: two series at x. */
static void run_second_chart(struct strbuf *b, const struct report *r, const char *id,
                             const char *title, const char *unit, struct svg_series *se, size_t nse)
{
    struct report_time_marks tm;
    report_time_marks_init(&tm, r);
    struct svg_chart c = {
        .id = id,
        .title = title,
        .width = REPORT_WIDE_WIDTH,
        .height = 260,
        .y = {.label = unit, .min = NAN, .max = NAN, .include_zero = 1},
        .series = se,
        .n_series = nse,
        .empty_note = "nothing counted",
    };
    report_time_chart_write(b, &c, &tm, r);
    report_time_marks_free(&tm);
}

/* Markers on a line of at most this many points; past it they hide the
 * line (an hour drew 21,606 of them). */
#define RUN_MARKERS_MAX 300

static unsigned run_line_flags(size_t n)
{
    return n <= RUN_MARKERS_MAX ? SVG_LINE | SVG_MARKERS : SVG_LINE;
}

/* One line of a per-second chart: n points at x, y, with markers while
 * they do not hide it. */
static struct svg_series run_line(const char *key, const char *label, const double *x,
                                  const double *y, size_t n, const char *color)
{
    return (struct svg_series){.key = key,
                               .label = label,
                               .x = x,
                               .y = y,
                               .n = n,
                               .flags = run_line_flags(n),
                               .color = color};
}

/* p50 and p99 per bucket (ns in p50/p99, drawn ms) at x = the bucket's
 * middle, s; buckets with nothing counted are left out. */
static void run_pct_chart(struct strbuf *b, const struct report *r, const struct run_seconds *s,
                          const double *p50_ns, const double *p99_ns, const char *id,
                          const char *title, const char *key)
{
    double *x = ll_calloc(s->n + 1, sizeof(double));
    double *p50 = ll_calloc(s->n + 1, sizeof(double));
    double *p99 = ll_calloc(s->n + 1, sizeof(double));
    size_t k = 0;
    for (size_t i = 0; i < s->n; i++) {
        if (!isfinite(p50_ns[i]))
            continue;
        x[k] = ((double)i + 0.5) * (double)s->k;
        p50[k] = p50_ns[i] / 1e6;
        p99[k] = p99_ns[i] / 1e6;
        k++;
    }
    char k50[32], k99[32];
    snprintf(k50, sizeof k50, "%s_p50", key);
    snprintf(k99, sizeof k99, "%s_p99", key);
    struct svg_series se[2] = {
        run_line(k50, "p50", x, p50, k, REPORT_COLOR_P50),
        run_line(k99, "p99", x, p99, k, REPORT_COLOR_P99),
    };
    run_second_chart(b, r, id, title, "ms", se, 2);
    free(x);
    free(p50);
    free(p99);
}

/* A wide figure of run_pct_chart's chart: its title, caption and the
 * chart chart-<key>-time with lines <key>_p50 and <key>_p99. */
static void run_pct_figure(struct strbuf *b, const struct report *r, const struct run_seconds *s,
                           const double *p50_ns, const double *p99_ns, const char *key,
                           const char *title, const char *caption)
{
    char id[64];
    snprintf(id, sizeof id, "chart-%s-time", key);
    report_figure_open(b, "wide", title, caption);
    run_pct_chart(b, r, s, p50_ns, p99_ns, id, title, key);
    report_figure_close(b);
}

/* Requests ended ok and failed per second, each bucket's mean. Only the
 * buckets wholly inside the measured window [from_s, to_s) that have a
 * line are drawn: no line is not "none ended" (the warm-up's seconds have
 * no line), and a second cut by the window's end is not a collapse. */
static void run_count_chart(struct strbuf *b, const struct report *r, const struct run_seconds *s,
                            double from_s, double to_s)
{
    double *x = ll_calloc(s->n + 1, sizeof(double));
    double *ok = ll_calloc(s->n + 1, sizeof(double));
    double *failed = ll_calloc(s->n + 1, sizeof(double));
    size_t n = 0;
    for (size_t i = 0; i < s->n; i++) {
        double t0 = (double)(i * s->k), t1 = (double)((i + 1) * s->k);
        if (!s->seen[i] || t0 < from_s - 1e-9 || (isfinite(to_s) && t1 > to_s + 1e-9))
            continue;
        x[n] = (t0 + t1) / 2;
        ok[n] = s->ok[i] / (double)s->k;
        failed[n] = s->failed[i] / (double)s->k;
        n++;
    }
    struct svg_series se[2] = {
        run_line("ok_per_s", "ok", x, ok, n, REPORT_COLOR_P50),
        run_line("failed_per_s", "failed", x, failed, n, REPORT_COLOR_P99),
    };
    run_second_chart(b, r, "chart-completions", "Requests ended per second", "requests/s", se, 2);
    free(x);
    free(ok);
    free(failed);
}

/* p.note#seconds-note: how the seconds were added together on a long
 * run, and the lines that could not be drawn. Nothing when neither. */
static void run_seconds_note(struct strbuf *b, const struct run_seconds *s)
{
    if (s->k <= 1 && s->late_lines == 0 && s->bad_lines == 0)
        return;
    strbuf_puts(b, "<p class=\"note\" id=\"seconds-note\">");
    if (s->k > 1)
        strbuf_printf(b,
                      "Each point is %zu seconds added together (their histograms merged), "
                      "so that the %zu seconds draw as %zu points. ",
                      s->k, s->n_seconds, s->n);
    if (s->late_lines > 0)
        strbuf_printf(b,
                      "%llu lines of hist.jsonl came after their second was drawn: their "
                      "requests are counted, their latencies left out of the charts. ",
                      (unsigned long long)s->late_lines);
    if (s->bad_lines > 0)
        strbuf_printf(b, "%llu lines of hist.jsonl were not a run's window and were skipped.",
                      (unsigned long long)s->bad_lines);
    strbuf_puts(b, "</p>\n");
}

/* The section over time: per second from hist.jsonl, then the server's
 * scrapes and the GPUs' telemetry when there are any. r holds the one
 * step (its window) and the scrapes. */
static void run_time_section(struct strbuf *b, const struct report *r, const struct run_seconds *s,
                             int stream, double win_from_s, double win_to_s)
{
    strbuf_puts(b, "<h2>Over time</h2>\n");
    run_seconds_note(b, s);
    strbuf_puts(b, "<section class=\"grid\">\n");
    if (stream) {
        run_pct_figure(b, r, s, s->ttft_p50_ns, s->ttft_p99_ns, "ttft", "TTFT per second",
                       "p50 and p99 of the TTFT of the ok requests that ended in each "
                       "second (hist.jsonl's windows, the warm-up left out); the grey "
                       "line marks the warm-up's end, the start of the measured window.");
        run_pct_figure(b, r, s, s->tpot_p50_ns, s->tpot_p99_ns, "tpot", "TPOT per second",
                       "p50 and p99 of the TPOT of the ok requests that ended in each "
                       "second: a pace that slows as the batch fills.");
    }
    report_figure_open(b, "wide", "Requests ended per second",
                       "Requests that ended ok, and otherwise, in each second of the measured "
                       "window (a second the window cuts is left out): completions that fall "
                       "behind the load are a backlog.");
    run_count_chart(b, r, s, win_from_s, win_to_s);
    report_figure_close(b);
    if (r->n_server > 0) {
        report_figure_open(b, "wide", "Server queue and batch",
                           "Scraped from the server's /metrics: requests running in the "
                           "batch and waiting in its queue.");
        report_server_chart(b, r, 0);
        report_figure_close(b);
        report_figure_open(b, "wide", "Server KV cache",
                           "Share of the KV cache in use. Near 100% the server preempts or "
                           "queues.");
        report_server_chart(b, r, 1);
        report_figure_close(b);
    }
    for (int util = 0; util <= 1; util++) {
        int any = 0;
        for (size_t i = 0; i < r->n_gpu; i++)
            any |= isfinite(util ? r->gpu[i].util_pct : r->gpu[i].power_w);
        if (!any)
            continue;
        report_figure_open(b, "wide", util ? "GPU utilisation" : "GPU power",
                           util ? "Share of time a kernel was running, the mean over a "
                                  "source's GPUs."
                                : "The GPUs' power draw, all the GPUs of a source summed, a "
                                  "line per source.");
        report_gpu_chart(b, r, util);
        report_figure_close(b);
    }
    strbuf_puts(b, "</section>\n");
}

void report_run_render(const json_t *run, const json_t *sum, const char *hist_path,
                       const char *scrapes_path, struct strbuf *b)
{
    struct run_seconds s;
    run_seconds_load(hist_path, &s);
    struct report_scrapes sc;
    report_scrapes_load(scrapes_path, &sc);

    /* The time charts' one step: the measured window, its line at the
     * warm-up's end, the axis to the last window or scrape. */
    double warm_s = jnum(sum, "warmup_ns") / 1e9, win_s = jnum(sum, "window_ns") / 1e9;
    struct report_step step = {
        .offered_rps = jnum(sum, "throughput.offered_rate_per_s"),
        .achieved_rps = jnum(sum, "throughput.send_rate_per_s"),
        .t_start_s = isfinite(warm_s) ? warm_s : 0,
        .t_end_s = LL_MAX(isfinite(warm_s + win_s) ? warm_s + win_s : 0, (double)s.n_seconds)};
    struct report r = {.steps = &step,
                       .n_steps = 1,
                       .step_mark = step.t_start_s > 0 ? "warm-up end" : "window start",
                       .closed_loop = json_is_true(json_object_get(sum, "closed_loop"))};
    report_scrapes_lend(&sc, &r);

    const char *cmd = jstr(run, "command");
    char title[160], merged[96];
    run_merged_words(run, merged, sizeof merged);
    snprintf(title, sizeof title, "llmload %s%s%s", cmd != NULL ? cmd : "run",
             merged[0] ? ", " : "", merged);
    report_page_head(b, title);
    run_header(b, run, sum);
    run_cards(b, sum);
    run_latency_table(b, sum);
    run_class_table(b, sum);
    run_throughput_table(b, sum);
    run_output_tokens(b, sum);
    report_run_server(b, sum);
    run_errors(b, sum);
    run_time_section(b, &r, &s, run_streamed(sum), step.t_start_s,
                     isfinite(warm_s + win_s) ? warm_s + win_s : NAN);
    report_page_foot(b, jstr(sum, "version"));

    report_scrapes_free(&sc);
    run_seconds_free(&s);
}

int report_run_dir_is_run(const char *dir)
{
    char path[4200];
    json_error_t je;
    snprintf(path, sizeof path, "%s/run.json", dir);
    json_t *run = ll_json_load_file(path, 0, &je);
    const char *cmd = jstr(run, "command");
    int yes = cmd != NULL && (strcmp(cmd, "run") == 0 || strcmp(cmd, "replay") == 0) &&
              report_run_jpath(run, "config.sweep") == NULL;
    json_decref(run);
    return yes;
}

int report_run_write(const char *dir, FILE *out, char *err, size_t errlen)
{
    size_t dlen = strlen(dir);
    if (dlen == 0 || dlen > 4000) {
        snprintf(err, errlen, "results directory: bad length %zu", dlen);
        return LL_E_RANGE;
    }
    char path[4100], hist[4100], scrapes[4100];
    json_error_t je;
    snprintf(path, sizeof path, "%s/summary.json", dir);
    if (access(path, F_OK) != 0) {
        snprintf(err, errlen, "%s: %s", path, strerror(errno));
        return LL_E_NOTFOUND;
    }
    json_t *sum = ll_json_load_file(path, 0, &je);
    if (sum == NULL) {
        snprintf(err, errlen, "%s: %s", path, je.text);
        return LL_E_INVAL;
    }
    const char *schema = jstr(sum, "schema");
    if (!json_is_object(sum) || schema == NULL || strncmp(schema, "llmload.summary/", 16) != 0) {
        snprintf(err, errlen,
                 "%s: not a run's summary (expected an object with schema "
                 "llmload.summary/N)",
                 path);
        json_decref(sum);
        return LL_E_INVAL;
    }
    snprintf(path, sizeof path, "%s/run.json", dir);
    json_t *run = ll_json_load_file(path, 0, &je); /* NULL: the page says less */
    snprintf(hist, sizeof hist, "%s/hist.jsonl", dir);
    snprintf(scrapes, sizeof scrapes, "%s/server_metrics.jsonl", dir);
    struct strbuf b;
    strbuf_init(&b);
    report_run_render(run, sum, hist, scrapes, &b);
    snprintf(path, sizeof path, "%s/report.html", dir);
    int rc = report_file_write(path, b.data, b.len, err, errlen);
    if (rc == 0 && out != NULL) {
        fprintf(out, "report: %s\n", path);
        fflush(out);
    }
    strbuf_free(&b);
    json_decref(run);
    json_decref(sum);
    return rc;
}

int report_run_expect(const char *dir, FILE *f, size_t *failed, char *err, size_t errlen)
{
    char path[4200];
    json_error_t je;
    *failed = 0;
    snprintf(path, sizeof path, "%s/run.json", dir);
    json_t *run = ll_json_load_file(path, 0, &je);
    if (run == NULL) {
        snprintf(err, errlen, "%s: %s", path, je.text);
        return LL_E_INVAL;
    }
    const char *spec = jstr(run, "expect");
    struct expect_set ex;
    char why[300];
    int rc = 0;
    if (spec == NULL) {
        json_decref(run);
        return 0;
    }
    if (expect_parse(spec, &ex, why, sizeof why) != 0) {
        snprintf(err, errlen, "%s: expect: %s", path, why);
        rc = LL_E_INVAL;
    } else {
        snprintf(path, sizeof path, "%s/summary.json", dir);
        json_t *sum = ll_json_load_file(path, 0, &je);
        if (sum == NULL) {
            snprintf(err, errlen, "%s: %s", path, je.text);
            rc = LL_E_INVAL;
        } else {
            *failed = expect_judge_summary(&ex, sum, f);
        }
        json_decref(sum);
    }
    json_decref(run);
    return rc;
}
