/* report_runsrv.c: the Server section of a single run's report.html
 * (report_runsrv.h), and the JSON reading the run page's parts share.
 *
 * The section has up to three tables, each only when summary.json has
 * its block:
 *
 *   table#server    summary.json's "server": the server's own /metrics
 *                   over the run's span (queue depth, running, KV-cache
 *                   usage, preemptions, its token and request counters,
 *                   its TTFT histogram), each beside the client's count
 *                   of the same thing where there is one, named as the
 *                   terminal names them (metrics/scrapejoin.c)
 *   table#replicas  its "replicas", with --prometheus
 *   table#usage     what the responses' usage said: cached prompt tokens
 *                   and the server's prompt count against the requested
 *                   (summary.json's "tokens")
 *
 * The one figure not quoted is the server/client column: the division of
 * the two cells beside it, as the terminal prints it. */
#include "report/report_runsrv.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

#include "measure/summary.h"
#include "report/report_int.h"
#include "util/util.h"

const json_t *report_run_jpath(const json_t *o, const char *path)
{
    char key[64];
    while (o != NULL && *path) {
        size_t n = strcspn(path, ".");
        if (n >= sizeof key)
            return NULL;
        memcpy(key, path, n);
        key[n] = '\0';
        o = json_object_get(o, key);
        path += n + (path[n] == '.');
    }
    return o;
}

void report_run_cell(struct strbuf *b, const json_t *v, double scale)
{
    if (!json_is_number(v)) {
        strbuf_puts(b, "<td>\xE2\x80\x93</td>");
        return;
    }
    strbuf_puts(b, "<td data-v=\"");
    if (json_is_integer(v))
        strbuf_printf(b, "%lld", (long long)json_integer_value(v));
    else
        strbuf_put_num(b, json_real_value(v));
    strbuf_puts(b, "\">");
    report_put_value(b, json_number_value(v) / scale);
    strbuf_puts(b, "</td>");
}

static double srv_num(const json_t *o, const char *path)
{
    const json_t *v = report_run_jpath(o, path);
    return json_is_number(v) ? json_number_value(v) : NAN;
}

/* o's string at key, "?" when it has none. */
static const char *srv_str(const json_t *o, const char *key)
{
    const char *s = json_string_value(json_object_get(o, key));
    return s != NULL ? s : "?";
}

/* --- table#server --- */

static void srv_row_open(struct strbuf *b, const char *id, const char *label)
{
    strbuf_printf(b, "<tr id=\"srv-%s\"><td class=\"l\">", id);
    strbuf_put_xml(b, label);
    strbuf_puts(b, "</td>");
}

/* A gauge's two rows (mean, max), scale as report_run_cell's. When
 * summary.json has the gauge as null, one row that says why in the
 * terminal's words (summary_gauge_absent: the engine does not export it,
 * or no ok scrape fell in the window); nothing when it has no such key. */
static void srv_gauge(struct strbuf *b, const json_t *srv, const char *key, const char *label,
                      double scale)
{
    const json_t *g = json_object_get(srv, key);
    if (json_is_null(g)) {
        double ok = srv_num(srv, "window_scrapes") - srv_num(srv, "window_failed");
        srv_row_open(b, key, label);
        strbuf_puts(b, "<td class=\"l\" colspan=\"4\">");
        strbuf_put_xml(b, summary_gauge_absent(ok > 0 ? (size_t)ok : 0));
        strbuf_puts(b, "</td></tr>\n");
        return;
    }
    if (!json_is_object(g))
        return;
    static const char *const stat[] = {"mean", "max"};
    for (size_t i = 0; i < LL_ARRAY_LEN(stat); i++) {
        char id[64], name[96];
        snprintf(id, sizeof id, "%s-%s", key, stat[i]);
        snprintf(name, sizeof name, "%s, %s", label, stat[i]);
        srv_row_open(b, id, name);
        report_run_cell(b, json_object_get(g, stat[i]), scale);
        strbuf_puts(b, "<td></td><td></td><td></td></tr>\n");
    }
}

/* The server/client cell: the server's increase over the client's count,
 * as the terminal prints it; when the server's counter did not move while
 * the client counted some, that (not a ratio of 0). Empty without a
 * client count. */
static void srv_ratio(struct strbuf *b, double server, double client)
{
    if (!(client > 0) || !isfinite(server)) {
        strbuf_puts(b, "<td></td>");
        return;
    }
    if (server == 0) {
        strbuf_puts(b, "<td class=\"l\">the server's counter did not move: it may not count "
                       "these</td>");
        return;
    }
    strbuf_puts(b, "<td data-v=\"");
    strbuf_put_num(b, server / client);
    strbuf_puts(b, "\">");
    strbuf_put_fixed(b, server / client, 3);
    strbuf_puts(b, "</td>");
}

/* A counter's row: the server's increase, the client's count of the same
 * thing (what it counted: client_what), their ratio. Nothing when the
 * engine has no such counter (null). */
static void srv_counter(struct strbuf *b, const json_t *srv, const char *key, const char *label,
                        const char *client_what)
{
    const json_t *c = json_object_get(srv, key);
    if (!json_is_object(c))
        return;
    const json_t *client = json_object_get(c, "client");
    /* A reset (a server restart) makes the increase a sum of pieces: said
     * beside the name, as the terminal's "(N counter resets)". */
    const json_t *resets = json_object_get(c, "resets");
    char named[128];
    if (json_is_integer(resets) && json_integer_value(resets) > 0)
        snprintf(named, sizeof named, "%s (%lld counter reset%s: a lower bound)", label,
                 (long long)json_integer_value(resets), json_integer_value(resets) == 1 ? "" : "s");
    else
        snprintf(named, sizeof named, "%s", label);
    srv_row_open(b, key, named);
    report_run_cell(b, json_object_get(c, "delta"), 1);
    if (json_is_number(client)) {
        report_run_cell(b, client, 1);
        strbuf_puts(b, "<td class=\"l\">");
        strbuf_put_xml(b, client_what);
        strbuf_puts(b, "</td>");
        srv_ratio(b, srv_num(c, "delta"), json_number_value(client));
    } else
        strbuf_puts(b, "<td></td><td></td><td></td>");
    strbuf_puts(b, "</tr>\n");
}

/* The server's TTFT p50 and p99 from its histogram (s, drawn ms), beside
 * the client's TTFT from the send time, the figure that histogram
 * measures. A p99 in the +Inf bucket is a lower bound: "&gt;" before it. */
static void srv_ttft(struct strbuf *b, const json_t *srv)
{
    const json_t *t = json_object_get(srv, "ttft");
    if (!json_is_number(json_object_get(t, "p50_s")))
        return;
    static const char *const pct[] = {"p50", "p99"};
    for (size_t i = 0; i < LL_ARRAY_LEN(pct); i++) {
        char key[32], ckey[48], id[32], label[48];
        snprintf(key, sizeof key, "%s_s", pct[i]);
        snprintf(ckey, sizeof ckey, "client_from_sent_%s_s", pct[i]);
        snprintf(id, sizeof id, "ttft-%s", pct[i]);
        snprintf(label, sizeof label, "TTFT (server) %s, ms", pct[i]);
        srv_row_open(b, id, label);
        if (i == 1 && json_is_true(json_object_get(t, "p99_is_lower_bound"))) {
            /* Over the histogram's last finite bound: at least it. */
            strbuf_puts(b, "<td data-v=\"");
            strbuf_put_num(b, srv_num(t, key));
            strbuf_puts(b, "\">&gt;");
            report_put_value(b, srv_num(t, key) * 1e3);
            strbuf_puts(b, "</td>");
        } else
            report_run_cell(b, json_object_get(t, key), 1e-3);
        if (json_is_number(json_object_get(t, ckey))) {
            report_run_cell(b, json_object_get(t, ckey), 1e-3);
            strbuf_puts(b, "<td class=\"l\">from sent</td>");
        } else
            strbuf_puts(b, "<td></td><td></td>");
        strbuf_puts(b, "<td></td></tr>\n");
    }
}

/* A bucket's bounds "lo, hi" (s); a bound summary.json has as null is
 * the +Inf bucket's. */
static void srv_bounds(struct strbuf *b, const json_t *pair)
{
    for (size_t i = 0; i < 2; i++) {
        const json_t *v = json_array_get(pair, i);
        if (i > 0)
            strbuf_puts(b, ", ");
        if (json_is_number(v))
            report_put_value(b, json_number_value(v));
        else
            strbuf_puts(b, "+Inf");
    }
}

/* The notes under table#server: where the server's TTFT percentiles lie
 * in its buckets, and the requests not ok that had begun (their prompts
 * in the server's count, not the client's; their tokens in the client's
 * generation count), as scrapejoin.c prints them. */
static void srv_notes(struct strbuf *b, const json_t *srv)
{
    const json_t *t = json_object_get(srv, "ttft");
    const json_t *b50 = json_object_get(t, "p50_bucket_s"),
                 *b99 = json_object_get(t, "p99_bucket_s");
    if (json_array_size(b50) == 2 && json_array_size(b99) == 2) {
        strbuf_puts(b, "<p class=\"note\" id=\"server-ttft-buckets\">The server's TTFT "
                       "percentiles are read from its histogram's buckets: p50 in (");
        srv_bounds(b, b50);
        strbuf_puts(b, "] s, p99 in (");
        srv_bounds(b, b99);
        strbuf_puts(b, "] s.</p>\n");
    }
    const json_t *rs = json_object_get(srv, "restart_between_s");
    if (json_array_size(rs) == 2) {
        strbuf_printf(b,
                      "<p class=\"note\" id=\"server-restart\">The server restarted between "
                      "the scrapes at +%.1f s and +%.1f s (process_start_time_seconds changed): "
                      "its counters count from 0 there.</p>\n",
                      json_number_value(json_array_get(rs, 0)),
                      json_number_value(json_array_get(rs, 1)));
    }
    /* The words are scrapejoin.c's (summary.json carries them). */
    const char *lb = json_string_value(json_object_get(srv, "lower_bound_note"));
    if (lb) {
        strbuf_puts(b, "<p class=\"note\" id=\"server-lower-bound\">Lower bound: ");
        strbuf_put_xml(b, lb);
        strbuf_puts(b, ".</p>\n");
    }
    double begun = srv_num(srv, "prompt_tokens.client_not_ok_begun");
    if (begun > 0) {
        strbuf_puts(b, "<p class=\"note\" id=\"server-not-ok-begun\">");
        report_put_value(b, begun);
        strbuf_puts(b, " requests not ok had begun (cancelled or cut short after their first "
                       "token): their prompts are in the server's prompt count, not the "
                       "client's (ok requests' usage); the ");
        double tok = srv_num(srv, "generation_tokens.client_not_ok_tokens");
        report_put_value(b, isfinite(tok) ? tok : 0);
        strbuf_puts(b, " tokens they received are in the client's generation count, not in "
                       "an engine's that counts output as a request finishes.</p>\n");
    }
}

/* table#server, or the line that says no scrape was usable. */
static void srv_metrics(struct strbuf *b, const json_t *srv)
{
    strbuf_puts(b, "<p class=\"note\" id=\"server-source\">server metrics (");
    strbuf_put_xml(b, srv_str(srv, "url"));
    strbuf_puts(b, "): ");
    report_put_value(b, srv_num(srv, "scrapes"));
    strbuf_puts(b, " scrapes, ");
    report_put_value(b, srv_num(srv, "failed"));
    strbuf_puts(b, " failed (gaps)");
    const char *engine = json_string_value(json_object_get(srv, "engine"));
    if (engine == NULL) {
        strbuf_puts(b, "; no usable scrape over the run.</p>\n");
        return;
    }
    strbuf_puts(b, "; engine <span id=\"server-engine\">");
    strbuf_put_xml(b, engine);
    strbuf_puts(b, "</span>. The server column is the server's own /metrics over the run's "
                   "span; the client column is llmload's count of the same thing.</p>\n");
    strbuf_puts(b, "<div class=\"tablewrap\"><table id=\"server\"><thead><tr>"
                   "<th class=\"l\">/metrics</th><th>server</th><th>client</th>"
                   "<th class=\"l\">client counted</th><th>server/client</th></tr></thead>\n"
                   "<tbody>\n");
    srv_gauge(b, srv, "waiting", "queue depth", 1);
    srv_gauge(b, srv, "running", "running", 1);
    srv_gauge(b, srv, "kv_usage", "KV-cache usage, %", 0.01);
    srv_counter(b, srv, "preemptions", "preemptions", NULL);
    int less_cached = json_is_true(report_run_jpath(srv, "prompt_tokens.excludes_cached"));
    srv_counter(b, srv, "prompt_tokens",
                less_cached ? "prompt tokens (less cached)" : "prompt tokens",
                less_cached ? "sent less cached" : "sent");
    srv_counter(b, srv, "generation_tokens", "generation tokens", "received");
    srv_counter(b, srv, "request_success", "requests finished", "ok");
    srv_ttft(b, srv);
    strbuf_puts(b, "</tbody></table></div>\n");
    srv_notes(b, srv);
}

/* --- table#replicas --- */

/* One replica's cells; scale as report_run_cell's. */
static void srv_replica_row(struct strbuf *b, const char *name, const json_t *x)
{
    static const char *const keys[] = {"waiting_mean", "waiting_max", "running_mean",
                                       "kv_usage_mean", "generation_tokens"};
    strbuf_puts(b, "<tr><td class=\"l\">");
    strbuf_put_xml(b, name);
    strbuf_puts(b, "</td>");
    for (size_t i = 0; i < LL_ARRAY_LEN(keys); i++)
        report_run_cell(b, json_object_get(x, keys[i]),
                        strcmp(keys[i], "kv_usage_mean") == 0 ? 0.01 : 1);
    strbuf_puts(b, "</tr>\n");
}

/* table#replicas: --prometheus's figures per replica, and its finding
 * of routing imbalance when it made one. */
static void srv_replicas(struct strbuf *b, const json_t *srv)
{
    const json_t *reps = json_object_get(srv, "replicas");
    const json_t *each = json_object_get(reps, "replicas");
    if (!json_is_object(each) || json_object_size(each) == 0)
        return;
    strbuf_puts(b, "<div class=\"tablewrap\"><table id=\"replicas\"><thead><tr>"
                   "<th class=\"l\">replica (by ");
    strbuf_put_xml(b, srv_str(reps, "by"));
    strbuf_puts(b, ")</th><th>queue depth, mean</th><th>queue depth, max</th>"
                   "<th>running, mean</th><th>KV-cache usage, mean %</th>"
                   "<th>generation tokens</th></tr></thead>\n<tbody>\n");
    const char *k;
    const json_t *x;
    json_object_foreach((json_t *)each, k, x) srv_replica_row(b, k, x);
    strbuf_puts(b, "</tbody></table></div>\n");
    const char *why = json_string_value(json_object_get(reps, "imbalance"));
    if (why != NULL) {
        strbuf_puts(b, "<p class=\"note\" id=\"replicas-imbalance\">finding: ");
        strbuf_put_xml(b, why);
        strbuf_puts(b, "</p>\n");
    }
}

/* --- table#usage --- */

/* 1 when the responses reported anything table#usage shows. */
static int srv_has_usage(const json_t *sum)
{
    return json_is_number(report_run_jpath(sum, "tokens.cached_tokens")) ||
           json_is_number(report_run_jpath(sum, "tokens.prompt_ratio"));
}

static void srv_usage_row(struct strbuf *b, const json_t *sum, const char *key, const char *label,
                          double scale)
{
    const json_t *v = report_run_jpath(sum, key);
    if (!json_is_number(v))
        return;
    strbuf_printf(b, "<tr id=\"%s\"><td class=\"l\">", key);
    strbuf_put_xml(b, label);
    strbuf_puts(b, "</td>");
    report_run_cell(b, v, scale);
    strbuf_puts(b, "</tr>\n");
}

/* table#usage: the server's counts as its responses' usage carried them
 * (ok requests), in the terminal's words. */
static void srv_usage(struct strbuf *b, const json_t *sum)
{
    strbuf_puts(b, "<div class=\"tablewrap\"><table id=\"usage\"><thead><tr>"
                   "<th class=\"l\">reported in the responses' usage (ok requests)</th><th></th>"
                   "</tr></thead>\n<tbody>\n");
    srv_usage_row(b, sum, "tokens.cached_tokens", "cached prompt tokens", 1);
    srv_usage_row(b, sum, "tokens.cached_share", "cached prompt tokens, % of input", 0.01);
    if (json_is_number(report_run_jpath(sum, "tokens.cached_tokens")))
        srv_usage_row(b, sum, "tokens.workload_cached_share", "the workload's prefixes share, %",
                      0.01);
    if (json_is_number(report_run_jpath(sum, "tokens.prompt_ratio"))) {
        srv_usage_row(b, sum, "tokens.prompt_ratio", "server-counted / requested prompt tokens", 1);
        srv_usage_row(b, sum, "tokens.prompt_reported", "requests that reported the prompt count",
                      1);
    }
    strbuf_puts(b, "</tbody></table></div>\n");
}

void report_run_server(struct strbuf *b, const json_t *sum)
{
    const json_t *srv = json_object_get(sum, "server");
    int usage = srv_has_usage(sum);
    if (!json_is_object(srv) && !usage)
        return;
    strbuf_puts(b, "<h2>Server</h2>\n");
    if (json_is_object(srv)) {
        srv_metrics(b, srv);
        srv_replicas(b, srv);
    }
    if (usage)
        srv_usage(b, sum);
}
