/* summary.c: the end-of-run summary, for people (summary_print) and for
 * programs (summary.json).
 *
 * The printed layout, top to bottom:
 *
 *   llmload run: <mode>[, offered R req/s][ (interrupted: partial results)]
 *   (llmload replay: ... for a replay: summary_info.command)
 *   [CLOSED LOOP label]
 *   target, model, version, seed, window and warm-up
 *   [INVALID banner with the reason]
 *   requests: scheduled N, sent N, ok N, failed N[ (the client cancelled M;
 *   error rate of the rest, or none when it cancelled all)]
 *   [failed by kind: only the kinds that occurred]
 *   [one line per failed kind: its count and a sample of its message]
 *   a latency table: one row per metric, columns p50 p90 p95 p99 p99.9 max count
 *   throughput: offered vs sent vs completed req/s (and, of the completed,
 *   those dropped unsent when there were any); tokens/s in and out, and
 *   where the output token counts came from
 *   Little's law: measured mean in flight vs rate x mean time in system
 *
 * Both outputs read the same table of rows and percentiles below (declared
 * in summary_int.h; summary.json is written in summary_json.c), so the
 * terminal and the JSON can never disagree about what a row is. */
#include "measure/summary.h"

#include <inttypes.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "measure/hist.h"
#include "measure/summary_int.h"
#include "util/util.h"

const struct summary_row summary_rows[] = {
    {"TTFT", "ttft", offsetof(struct stats, ttft), 0, 1},
    {"TTFT (server: first - sent)", "ttft_server", offsetof(struct stats, ttft_server), 0, 1},
    {"TTFC (first content)", "ttfc", offsetof(struct stats, ttfc), 0, 1},
    {"ITL (per gap)", "itl", offsetof(struct stats, itl), 0, 1},
    {"ITL (per request)", "itl_request", offsetof(struct stats, itl_req), 0, 1},
    {"TPOT", "tpot", offsetof(struct stats, tpot), 0, 1},
    {"E2E", "e2e", offsetof(struct stats, e2e), 0, 0},
    {"E2E (failed requests)", "e2e_failed", offsetof(struct stats, e2e_failed), 1, 0},
    {"client queue", "client_queue", offsetof(struct stats, client_queue), 0, 0},
    {"schedule lateness", "schedule_lateness", offsetof(struct stats, lateness), 0, 0},
};

const struct summary_pct summary_pcts[] = {
    {50.0, "p50", "p50"}, {90.0, "p90", "p90"},     {95.0, "p95", "p95"},
    {99.0, "p99", "p99"}, {99.9, "p99.9", "p99_9"},
};

const struct hist *summary_row_hist(const struct stats *s, const struct summary_row *row)
{
    const char *base = (const char *)s;
    return *(struct hist *const *)(base + row->offset);
}

double summary_rate(double count, uint64_t window_ns)
{
    if (window_ns == 0)
        return NAN;
    return count / ((double)window_ns / 1e9);
}

/* A byte count or rate in SI units: "512 B", "25.0 KB", "2.51 MB", "1.20 GB";
 * "-" for NAN (no window). */
static void summary_fmt_bytes(double v, char *buf, size_t len)
{
    if (!(v >= 0))
        snprintf(buf, len, "-");
    else if (v >= 1e9)
        snprintf(buf, len, "%.2f GB", v / 1e9);
    else if (v >= 1e6)
        snprintf(buf, len, "%.2f MB", v / 1e6);
    else if (v >= 1e3)
        snprintf(buf, len, "%.1f KB", v / 1e3);
    else
        snprintf(buf, len, "%.0f B", v);
}

double summary_mean_ns(uint64_t sum_ns, uint64_t n)
{
    return n == 0 ? NAN : (double)sum_ns / (double)n;
}

/* The mean over all_e2e_count (every record with an end), not over the
 * sent ones alone: with --on-cap drop, the completion rate counts the
 * drops, and a mean over the sent records only read 1.68 in flight where
 * 0.98 were measured (llama.cpp, 61 of 148 dropped). */
double summary_littles_law_service(const struct stats *s, uint64_t w)
{
    return summary_rate((double)s->win_completed, w) *
           summary_mean_ns(s->all_service_sum_ns, s->all_e2e_count) / 1e9;
}

static const char *summary_str(const char *s)
{
    return s != NULL && s[0] != '\0' ? s : "-";
}

/* Print lead, then text wrapped at word boundaries into lines under 100
 * columns, each continuation indented by 12 spaces. */
static void summary_wrap(FILE *f, const char *lead, const char *text)
{
    const size_t width = 96, indent = 12;
    size_t col = strlen(lead);
    fputs(lead, f);
    const char *p = text;
    while (*p) {
        while (*p == ' ')
            p++;
        size_t w = strcspn(p, " ");
        if (w == 0)
            break;
        if (col > indent && col + 1 + w > width) {
            fprintf(f, "\n%*s", (int)indent, "");
            col = indent;
        } else if (p != text) {
            fputc(' ', f);
            col++;
        }
        fwrite(p, 1, w, f);
        col += w;
        p += w;
    }
    fputc('\n', f);
}

/* ---- the server's prompt count ----------------------------------------- */

int summary_prompt_off(uint64_t requested, uint64_t server)
{
    if (requested == 0)
        return 0;
    double r = (double)server / (double)requested;
    return r > 1.0 + SUMMARY_PROMPT_OFF || r < 1.0 - SUMMARY_PROMPT_OFF;
}

/* The fit an embeddings run needs: calibrate's chat probes count a chat
 * template that an embedding's input never gets (llama.cpp: a fit of
 * intercept 47.7 from chat left embeddings inputs 31% short), so the
 * advice names the completions fit, whose prompts are raw text. */
#define SUMMARY_EMB_FIT                                                                            \
    "`llmload calibrate --url BASE --api openai-completions` (raw text, as an embedding's "        \
    "input: a chat fit counts a template embeddings do not get)"

void summary_prompt_warning(char *buf, size_t len, uint64_t requested, uint64_t server, uint64_t n,
                            enum summary_prompts prompts, int embeddings)
{
    double r = requested ? (double)server / (double)requested : 0;
    const char *fix;
    switch (prompts) {
    case SUMMARY_PROMPTS_SYNTHETIC:
        fix = embeddings ? "; fit the server's tokenizer with " SUMMARY_EMB_FIT
                           " and run with `--calibration FILE` (docs/apis.md)"
                         : "; fit the server's tokenizer with `llmload calibrate --url BASE` and "
                           "run with `--calibration FILE`, or run with `--calibrate auto` "
                           "(docs/workload.md)";
        break;
    case SUMMARY_PROMPTS_CALIBRATED:
        fix = embeddings ? " even with the calibration: a prompt shorter than about twice the "
                           "fit's intercept cannot keep its length, or the fit is not this "
                           "server's and API's: fit it with " SUMMARY_EMB_FIT " (docs/apis.md)"
                         : " even with the calibration: a prompt shorter than about twice the "
                           "fit's intercept (the template) cannot keep its length, or the fit is "
                           "not this server's and API's: run `llmload calibrate` again against "
                           "it (docs/workload.md)";
        break;
    default: fix = " (the server's tokenizer counts them otherwise)"; break;
    }
    snprintf(buf, len,
             "the server counted %.2fx the requested prompt tokens (over %" PRIu64
             " ok requests): prompts are %.0f%% %s than asked%s",
             r, n, 100.0 * fabs(r - 1.0), r >= 1.0 ? "longer" : "shorter", fix);
}

void summary_prompt_4xx_warning(char *buf, size_t len, uint64_t n, int embeddings)
{
    snprintf(buf, len,
             "all %" PRIu64 " requests failed with a 4xx, and the prompts had no "
             "calibration: if the server counts more tokens than asked (another tokenizer), "
             "they may pass its context (a record's detail says); fit its tokenizer with %s",
             n,
             embeddings ? SUMMARY_EMB_FIT " and run with `--calibration FILE` (docs/apis.md)"
                        : "`llmload calibrate --url BASE` and run with `--calibration FILE`, or "
                          "run with `--calibrate auto` (docs/workload.md)");
}

void summary_status_warning(char *buf, size_t len, uint64_t n, enum status_cause c)
{
    const char *hint = status_cause_hint(c);
    buf[0] = '\0';
    if (hint)
        snprintf(buf, len, "all %" PRIu64 " requests failed with a %s: %s", n,
                 c == STATUS_CAUSE_AUTH ? "401 or 403" : "404 or 405", hint);
}

void summary_status_note(char *buf, size_t len, const struct stats *s)
{
    buf[0] = '\0';
    for (size_t c = 0; c < STATUS_CAUSES && s->completed > 0; c++)
        if (s->by_4xx_cause[c] == s->completed)
            summary_status_warning(buf, len, s->completed, (enum status_cause)c);
}

void summary_prompt_note(char *buf, size_t len, const struct stats *s, enum summary_prompts prompts,
                         int *warning)
{
    *warning = 0;
    buf[0] = '\0';
    uint64_t n = s->prompt_usage_n;
    if (n > 0 && summary_prompt_off(s->prompt_usage_requested, s->prompt_usage_server)) {
        *warning = 1;
        summary_prompt_warning(buf, len, s->prompt_usage_requested, s->prompt_usage_server, n,
                               prompts, stats_embeddings(s));
    } else if (prompts == SUMMARY_PROMPTS_SYNTHETIC && s->completed > 0 &&
               s->by_4xx_cause[STATUS_CAUSE_LENGTH] == s->completed) {
        *warning = 1;
        summary_prompt_4xx_warning(buf, len, s->completed, stats_embeddings(s));
    } else if (s->prompt_mismatch > 0 && n > 0) {
        const char *fix;
        switch (prompts) {
        case SUMMARY_PROMPTS_SYNTHETIC:
            fix = stats_embeddings(s)
                      ? ": its tokenizer does not count a word a token; to send each prompt at "
                        "its length, fit it with " SUMMARY_EMB_FIT
                        " and run with `--calibration FILE` (docs/apis.md)"
                      : ": its tokenizer does not count a word a token; to send each prompt at "
                        "its length, fit it with `llmload calibrate --url BASE` and run with "
                        "`--calibration FILE`, or run with `--calibrate auto` (docs/workload.md)";
            break;
        case SUMMARY_PROMPTS_CALIBRATED:
            fix = ": a calibration keeps the mean length, each prompt within a word or two "
                  "(docs/workload.md)";
            break;
        default: fix = " (the server's tokenizer counts these prompts otherwise)"; break;
        }
        snprintf(buf, len,
                 "the server counted %.2fx the requested prompt tokens (over %" PRIu64
                 " ok requests); %" PRIu64 " of them were counted otherwise, per request "
                 "%+.1f%% to %+.1f%%%s",
                 (double)s->prompt_usage_server / (double)s->prompt_usage_requested, n,
                 s->prompt_mismatch, 100.0 * s->prompt_err_min, 100.0 * s->prompt_err_max, fix);
    }
}

/* "12.34" or "-" for NAN, into buf. */
static const char *summary_fmt_double(double v, const char *fmt, char *buf,
                                      size_t len)
{
    if (isnan(v))
        snprintf(buf, len, "-");
    else
        snprintf(buf, len, fmt, v);
    return buf;
}

/* text after lead, broken at spaces into lines under 100 columns, the
 * lines after the first indented as deep as lead. */
static void summary_print_wrapped(FILE *f, const char *lead, const char *text)
{
    const size_t width = 96;
    size_t indent = strlen(lead), col = indent;
    fputs(lead, f);
    while (*text) {
        size_t word = strcspn(text, " ");
        if (col > indent && col + 1 + word > width) {
            fprintf(f, "\n%*s", (int)indent, "");
            col = indent;
        } else if (col > indent) {
            fputc(' ', f);
            col++;
        }
        fwrite(text, 1, word, f);
        col += word;
        text += word;
        text += strspn(text, " ");
    }
    fputc('\n', f);
}

static void summary_print_header(FILE *f, const struct summary_info *info)
{
    char a[32], b[32];
    const char *cmd = info->command ? info->command : "run";
    const char *mode = summary_str(info->mode);
    size_t cl = strlen(cmd);
    if (strncmp(mode, cmd, cl) == 0 && mode[cl] == ' ')
        mode += cl + 1;
    fprintf(f, "llmload %s: %s", cmd, mode);
    if (info->offered_rate_per_s > 0)
        fprintf(f, ", offered %.2f req/s", info->offered_rate_per_s);
    if (info->interrupted)
        fprintf(f, " (interrupted: partial results)");
    fputc('\n', f);
    if (info->closed_loop)
        fprintf(f, "CLOSED LOOP: latencies exclude the wait a real user would "
                   "see when the server slows\n");
    /* The URL, the model (a server's /models id, without --model) and the
     * version (summary.json's, under `llmload report`) are from outside:
     * shown through ll_shown, so no escape sequence reaches the terminal. */
    char shown[512];
    fprintf(f, "target   %s\n", summary_str(ll_shown(info->target_url, shown, sizeof shown)));
    fprintf(f, "model    %s", summary_str(ll_shown(info->model, shown, sizeof shown)));
    if (info->model_note)
        fprintf(f, " (%s)", info->model_note);
    fputc('\n', f);
    fprintf(f, "version  %s, seed %" PRIu64,
            summary_str(ll_shown(info->version, shown, sizeof shown)), info->seed);
    if (info->has_prompt_salt)
        fprintf(f, ", prompt salt %" PRIu64 "%s", info->prompt_salt,
                info->prompt_salt_auto ? " (auto: --prompt-salt N sends this text again)" : "");
    fputc('\n', f);
    if (info->warmup_ns > 0)
        fprintf(f, "window   %s measured, after %s warm-up\n",
                ll_fmt_duration(info->window_ns, a, sizeof(a)),
                ll_fmt_duration(info->warmup_ns, b, sizeof(b)));
    else
        fprintf(f, "window   %s measured, no warm-up\n",
                ll_fmt_duration(info->window_ns, a, sizeof(a)));
    if (info->invalid) {
        fprintf(f,
                "\n"
                "*** INVALID RUN: %s ***\n"
                "*** %s\n"
                "*** The latencies below include the client's own delay: an upper bound on "
                "the server's, not its figures.\n",
                verdict_invalid_headline(info->invalid_cause), summary_str(info->invalid_reason));
    } else if (info->lateness_warning[0]) {
        /* Lateness that moved every percentile within its limit is a
         * note: the self-check passed, and on a shared VM a p99 over 1 ms
         * is most short runs' (a "warning" on each reads as a problem).
         * One late send that moved one past it, or too few requests to
         * judge, stays a warning. */
        const struct verdict_move *m = &info->lateness_moved;
        int within = m->what && m->moved_ns <= m->limit_ns;
        fprintf(f, "%s%s\n", within ? "note     " : "warning  ", info->lateness_warning);
    }
    if (info->cut_short_warning[0])
        summary_print_wrapped(f, "warning  ", info->cut_short_warning);
    if (info->steady_warning[0])
        summary_print_wrapped(f, "warning  ", info->steady_warning);
    if (info->steady_unjudged[0])
        summary_print_wrapped(f, "steady   ", info->steady_unjudged);
    fputc('\n', f);
}

int summary_cut_short_warning(const struct stats *s, char *buf, size_t len)
{
    uint64_t ok = s->by_kind[REC_OK];
    buf[0] = '\0';
    if (s->cut_short == 0 || (double)s->cut_short < SUMMARY_CUT_SHORT_WARN * (double)ok)
        return 0;
    snprintf(
        buf, len,
        "%" PRIu64 " of %" PRIu64 " ok requests (%.1f%%) were cut short: fewer output "
        "tokens than max_tokens (finish_reason length or max_tokens, or under ignore_eos; a full "
        "context?); TPOT and output tokens/s describe shorter outputs than the workload "
        "asked for",
        s->cut_short, ok, 100.0 * (double)s->cut_short / (double)ok);
    return 1;
}

/* "finish_reason: length 21, stop 11" over the ok records, the reasons in
 * the order first seen; (none) and (other) as summary.json names them. */
static void summary_print_finish(FILE *f, const struct stats *s)
{
    const char *sep = "";
    fprintf(f, "            finish_reason: ");
    for (size_t i = 0; i < STATS_FINISH_NAMES && s->finish_name[i][0]; i++) {
        char shown[REC_FINISH_REASON_MAX];
        fprintf(f, "%s%s %" PRIu64, sep, ll_shown(s->finish_name[i], shown, sizeof shown),
                s->finish_count[i]);
        sep = ", ";
    }
    if (s->finish_other) {
        fprintf(f, "%s(other) %" PRIu64, sep, s->finish_other);
        sep = ", ";
    }
    if (s->finish_none)
        fprintf(f, "%s(none) %" PRIu64, sep, s->finish_none);
    fprintf(f, "; cut short %" PRIu64 "\n", s->cut_short);
}

/* With no record at all, nothing came due: a short run at a low rate can
 * draw its first arrival past its end (seed 1's first Poisson gap is 4.97
 * mean gaps: --rate 2 --duration 2s schedules none), unless the spend
 * guard stopped offering first. With records, every one came due in the
 * warm-up or was cold (--requests 3 --warmup 2s at 20/s): "none came due"
 * and "give --requests N" would both be wrong. A shard's arrivals are
 * every Nth of the schedule, so at a low rate one shard can draw none
 * while the others measured: its words say whose window it is. */
void summary_empty_why(char *buf, size_t len, const struct summary_info *info)
{
    size_t at = 0;
    int sharded = info->shards > 1;
    if (sharded)
        ll_putf(buf, len, &at, "shard %u/%u: ", info->shard, info->shards);
    if (info->stop_reason && info->stop_reason[0]) {
        const char *r = info->stop_reason, *guard = "spend guard: ";
        if (strncmp(r, guard, strlen(guard)) == 0)
            r += strlen(guard);
        ll_putf(buf, len, &at,
                "the spend guard stopped offering before a request came due in the window "
                "(%s): raise --max-tokens-total",
                r);
        return;
    }
    if (info->records_written == 0) {
        if (sharded)
            ll_putf(buf, len, &at,
                    "no arrival of the schedule fell to this shard in the window; llmload "
                    "merge judges the whole run");
        else
            ll_putf(buf, len, &at,
                    "none came due in the window, the rate too low for its length: "
                    "lengthen --duration, raise the rate, or give --requests N");
        return;
    }
    int warm = info->warmup_ns > 0, cold = info->cold_requests > 0;
    char w[16];
    ll_fmt_duration(info->warmup_ns, w, sizeof w);
    ll_putf(buf, len, &at,
            "%" PRIu64 " came due, all %s%s%s, which no figure counts: %s, or lengthen the run",
            info->records_written, warm ? "in the " : "", warm ? w : "",
            warm && cold ? " warm-up or cold (--cold-start)"
            : warm       ? " warm-up"
                         : "cold (--cold-start)",
            warm && cold ? "shorten --warmup or lower --cold-start"
            : warm       ? "shorten --warmup"
                         : "lower --cold-start");
}

const char *summary_gauge_absent(size_t ok_scrapes)
{
    return ok_scrapes ? "not exported by this engine" : "no ok scrape inside the window";
}

/* A request the workload cancelled on purpose (--cancel-after) did what
 * was asked of it: a window of nothing else has not failed. */
enum summary_measured summary_measured(char *buf, size_t len, const struct stats *s,
                                       const struct summary_info *info)
{
    uint64_t failed = s->completed - s->by_kind[REC_CANCELLED];
    if (len)
        buf[0] = '\0';
    if (failed && s->by_kind[REC_OK] == 0) {
        snprintf(buf, len, "no request succeeded: all %" PRIu64 " of the window failed", failed);
        return SUMMARY_NONE_OK;
    }
    if (s->scheduled != 0 || info->interrupted)
        return SUMMARY_MEASURED;
    size_t at = 0;
    if (info->shards > 1) {
        summary_empty_why(buf, len, info);
        return SUMMARY_SHARD_EMPTY;
    }
    char why[360];
    summary_empty_why(why, sizeof why, info);
    ll_putf(buf, len, &at, "nothing was measured: %s", why);
    return SUMMARY_EMPTY;
}

/* The requests line. A window nothing came due in says so, and what to
 * change (summary_empty_why): a table of dashes alone reads like a
 * fault. */
static void summary_print_requests(FILE *f, const struct stats *s, const struct summary_info *info)
{
    uint64_t failed = stats_failed(s), cancelled = s->by_kind[REC_CANCELLED];
    fprintf(f, "requests: scheduled %" PRIu64 ", sent %" PRIu64 ", ok %" PRIu64 ", failed %" PRIu64,
            s->scheduled, s->sent, s->by_kind[REC_OK], failed);
    if (s->scheduled == 0 && !info->interrupted) {
        char why[400];
        summary_empty_why(why, sizeof why, info);
        fprintf(f, " (%s)", why);
    }
    /* The client's own cancellations are not errors: say what the error
     * rate (--expect's, compare's) is over. */
    if (cancelled > 0 && stats_let_end(s) == 0)
        fprintf(f, " (the client cancelled all %" PRIu64 ": no error rate)", cancelled);
    else if (cancelled > 0)
        fprintf(f,
                " (the client cancelled %" PRIu64 "; error rate %.1f%% of the %" PRIu64
                " it let end)",
                cancelled, 100 * stats_error_rate(s), stats_let_end(s));
    fputc('\n', f);
    if (failed > 0) {
        const char *sep = "";
        fprintf(f, "failed by kind: ");
        for (int k = 0; k < REC_KIND_COUNT; k++) {
            if (k == REC_OK || s->by_kind[k] == 0)
                continue;
            fprintf(f, "%s%s %" PRIu64, sep, rec_kind_name((enum rec_kind)k),
                    s->by_kind[k]);
            sep = ", ";
        }
        fputc('\n', f);
        for (int k = 0; k < REC_KIND_COUNT; k++)
            if (k != REC_OK && s->by_kind[k] > 0 && s->sample[k][0])
                fprintf(f, "  %s %" PRIu64 ", e.g.: %s\n", rec_kind_name((enum rec_kind)k),
                        s->by_kind[k], s->sample[k]);
    }
    if (s->scheduled > s->completed)
        fprintf(f, "unfinished: %" PRIu64 " scheduled requests have no record\n",
                s->scheduled - s->completed);
    if (s->retry_after_seen > 0)
        fprintf(f, "retry-after: %" PRIu64 " responses asked to wait, mean %.0f ms\n",
                s->retry_after_seen,
                (double)s->retry_after_sum_ms / (double)s->retry_after_seen);
    fputc('\n', f);
}

#define SUMMARY_LABEL_W 28
#define SUMMARY_COL_W 9

static void summary_print_table(FILE *f, const struct stats *s)
{
    fprintf(f, "%-*s", SUMMARY_LABEL_W, "latency");
    for (size_t p = 0; p < LL_ARRAY_LEN(summary_pcts); p++)
        fprintf(f, " %*s", SUMMARY_COL_W, summary_pcts[p].label);
    fprintf(f, " %*s %*s\n", SUMMARY_COL_W, "max", SUMMARY_COL_W, "count");

    for (size_t i = 0; i < LL_ARRAY_LEN(summary_rows); i++) {
        const struct summary_row *row = &summary_rows[i];
        const struct hist *h = summary_row_hist(s, row);
        uint64_t n = hist_count(h);
        if ((n == 0 && row->only_if_nonempty) || (row->stream_only && stats_embeddings(s)))
            continue;
        char buf[32];
        fprintf(f, "%-*s", SUMMARY_LABEL_W, row->label);
        for (size_t p = 0; p < LL_ARRAY_LEN(summary_pcts); p++) {
            const char *v = n == 0 ? "-"
                                   : ll_fmt_duration(hist_percentile(h, summary_pcts[p].pct),
                                                     buf, sizeof(buf));
            fprintf(f, " %*s", SUMMARY_COL_W, v);
        }
        fprintf(f, " %*s", SUMMARY_COL_W,
                n == 0 ? "-" : ll_fmt_duration(hist_max(h), buf, sizeof(buf)));
        fprintf(f, " %*" PRIu64 "\n", SUMMARY_COL_W, n);
    }
    for (size_t i = 0; i < LL_ARRAY_LEN(summary_rows); i++) {
        const struct hist *h = summary_row_hist(s, &summary_rows[i]);
        if (hist_overflow(h) > 0)
            fprintf(f, "note: %" PRIu64 " %s values beyond the histogram's range "
                       "(max is exact, percentiles among them are the max)\n",
                    hist_overflow(h), summary_rows[i].label);
    }
    fputc('\n', f);
}

int summary_offering_ran_on(uint64_t duration_ns, uint64_t warmup_ns, uint64_t window_ns)
{
    /* The window ran past the offering when --duration did not end it
     * (driver.c's run_window: --requests, a trace, a stop). */
    return !(duration_ns && warmup_ns + window_ns == duration_ns);
}

uint64_t summary_offering_ns(uint64_t duration_ns, uint64_t warmup_ns, uint64_t window_ns,
                             uint64_t last_sched_ns)
{
    uint64_t wend = warmup_ns + window_ns;
    if (!summary_offering_ran_on(duration_ns, warmup_ns, window_ns))
        return 0;
    if (last_sched_ns <= warmup_ns || last_sched_ns >= wend)
        return 0;
    return last_sched_ns - warmup_ns;
}

void summary_session_starts_add(struct summary_session_starts *st, const struct record *r,
                                uint64_t warmup_ns)
{
    if (r->session < 0 || r->turn != 0 || r->sched_ns == LL_NO_TIME || r->sched_ns < warmup_ns)
        return;
    if (st->n == 0 || r->sched_ns > st->last_ns)
        st->last_ns = r->sched_ns;
    st->n++;
}

void summary_session_span(struct summary_info *info, uint64_t duration_ns,
                          const struct summary_session_starts *st)
{
    info->session_arrivals_ns = 0;
    info->session_arrivals = 0;
    uint64_t span = summary_offering_ns(duration_ns, info->warmup_ns, info->window_ns, st->last_ns);
    if (st->n < 2 || span == 0)
        return;
    info->session_arrivals_ns = span;
    info->session_arrivals = st->n;
}

double summary_arrival_rate(uint64_t n, uint64_t span_ns)
{
    /* The span ends at the last arrival, as the window ends at its end:
     * half-open, so the arrivals before the last are over it. 8 constant
     * arrivals at 4/s, the first at the window's start, end at 1.75 s:
     * 7 / 1.75 s is their 4.00/s, where 8 / 1.75 s read 4.57/s. Poisson
     * arrivals too: the span to the nth is Gamma(n, R), and (n - 1) over
     * it averages R, where n over it averages R n / (n - 1). */
    if (n < 2 || span_ns == 0)
        return NAN;
    return summary_rate((double)(n - 1), span_ns);
}

double summary_session_rate(const struct summary_info *info)
{
    if (info->session_arrivals_ns > 0 && info->session_arrivals >= 2)
        return summary_arrival_rate(info->session_arrivals, info->session_arrivals_ns);
    return summary_rate((double)info->sessions_started, info->window_ns);
}

double summary_offering_rate(const struct stats *s, const struct summary_info *info)
{
    if (info->offering_ns == 0)
        return NAN;
    return summary_arrival_rate(stats_win_scheduled(s), info->offering_ns);
}

double summary_intended_rate(const struct summary_info *info)
{
    if (info->offered_rate_per_s > 0)
        return info->offered_rate_per_s;
    if (info->paced_users > 0 && info->pace_ns > 0)
        return (double)info->paced_users / ((double)info->pace_ns / 1e9);
    return 0;
}

/* The throughput line's first figures: what the load intended and what
 * its schedule realised. An open loop offers a rate; a paced closed loop
 * intends users / pace ("offered -" read as if --pace 1s --users 2 meant
 * nothing); an unpaced one has no rate of its own, its users send as
 * answers come, and says so. */
static void summary_print_intended(FILE *f, const struct stats *s, const struct summary_info *info)
{
    char a[32], e[32], p[32], span[32], sched[128];
    uint64_t n = stats_win_scheduled(s);
    /* One arrival spans nothing: no rate, not 1 over the wait for it, nor
     * 1 over the drain when it came at the window's start (offering_ns 0,
     * `--rate 10 --arrival constant --requests 1` read 27.25 req/s). Under
     * --duration the window is the offering's, and n over it stands. */
    if (n < 2 && (info->offering_ns > 0 || info->offering_ran_on))
        snprintf(sched, sizeof sched, "scheduled %" PRIu64 " request%s, no rate over %s", n,
                 n == 1 ? "" : "s", n == 1 ? "one arrival" : "no arrival");
    else if (info->offering_ns == 0)
        snprintf(
            sched, sizeof sched, "scheduled %s req/s",
            summary_fmt_double(summary_rate((double)n, info->window_ns), "%.2f", e, sizeof(e)));
    else
        snprintf(sched, sizeof sched, "scheduled %s req/s over the %s of offering",
                 summary_fmt_double(summary_offering_rate(s, info), "%.2f", e, sizeof(e)),
                 ll_fmt_duration(info->offering_ns, span, sizeof span));
    if (info->offered_rate_per_s > 0)
        fprintf(f, "throughput: offered %s req/s (%s)",
                summary_fmt_double(info->offered_rate_per_s, "%.2f", a, sizeof(a)), sched);
    else if (summary_intended_rate(info) > 0)
        fprintf(f, "throughput: intended %s req/s (%u user%s at one request per %s), %s",
                summary_fmt_double(summary_intended_rate(info), "%.2f", a, sizeof(a)),
                info->paced_users, info->paced_users == 1 ? "" : "s",
                ll_fmt_duration(info->pace_ns, p, sizeof(p)), sched);
    else if (info->closed_loop)
        fprintf(f, "throughput: closed loop, no intended rate (users send as answers come), %s",
                sched);
    else
        fprintf(f, "throughput: offered - req/s (%s)", sched);
}

static void summary_print_throughput(FILE *f, const struct stats *s,
                                     const struct summary_info *info)
{
    char a[32], b[32], c[32], d[32];
    uint64_t w = info->window_ns;
    summary_print_intended(f, s, info);
    fprintf(f,
            ", sent %s req/s, "
            "completed %s req/s (ok %s req/s",
            summary_fmt_double(summary_rate((double)s->win_sent, w), "%.2f", b, sizeof(b)),
            summary_fmt_double(summary_rate((double)s->win_completed, w), "%.2f", c, sizeof(c)),
            summary_fmt_double(summary_rate((double)s->win_ok, w), "%.2f", d, sizeof(d)));
    /* A client_dropped record completes at once, unsent: with --on-cap drop
     * the completion rate alone read 39.00 beside a send rate of 7.40
     * (sim, --rate 40 --max-concurrency 4), so say how much of it never
     * went out. */
    if (s->win_dropped > 0)
        fprintf(f, ", dropped unsent %s req/s",
                summary_fmt_double(summary_rate((double)s->win_dropped, w), "%.2f", a, sizeof(a)));
    fputs(")\n", f);
    if (info->offering_ns > 0 && stats_win_scheduled(s) >= 2) {
        char win[32], off[32];
        fprintf(f,
                "            (scheduled over the %s to the last arrival; the other rates "
                "over the %s window, its drain included)\n",
                ll_fmt_duration(info->offering_ns, off, sizeof off),
                ll_fmt_duration(w, win, sizeof win));
    }
    if (info->slo || info->slo_by_class) {
        char which[160];
        if (!info->slo_by_class)
            snprintf(which, sizeof which, "the SLO (%s)", info->slo);
        else if (info->slo)
            snprintf(which, sizeof which, "their class's SLO (its own, else %s)", info->slo);
        else
            snprintf(which, sizeof which,
                     "their class's SLO (its own; a class without one: completed ok)");
        /* Over the judged requests, as stats_attainment; none judged: no
         * figure ("-", summary.json's null), not a 0% never shown. */
        double att = stats_attainment(s);
        char over[160] = "of scheduled";
        if (s->slo_unjudged > 0)
            snprintf(over, sizeof over,
                     "of the %" PRIu64 " judged (%" PRIu64
                     " the client cancelled before a miss left out)",
                     s->scheduled > s->slo_unjudged ? s->scheduled - s->slo_unjudged : 0,
                     s->slo_unjudged);
        if (isfinite(att))
            snprintf(b, sizeof b, "%.1f%%", 100.0 * att);
        else
            snprintf(b, sizeof b, "-");
        fprintf(f, "goodput:    %s req/s met %s, attainment %s %s\n",
                summary_fmt_double(summary_rate((double)s->win_slo_met, w), "%.2f", a, sizeof(a)),
                which, b, over);
    }
    if (stats_embeddings(s))
        fprintf(
            f, "tokens:     input %s tok/s, %s inputs/s (ok requests; embeddings, no output)\n",
            summary_fmt_double(summary_rate((double)s->win_prompt_tokens, w), "%.1f", a, sizeof(a)),
            summary_fmt_double(summary_rate((double)s->win_inputs, w), "%.1f", b, sizeof(b)));
    else
        fprintf(
            f, "tokens:     input %s tok/s, output %s tok/s (ok requests)\n",
            summary_fmt_double(summary_rate((double)s->win_prompt_tokens, w), "%.1f", a, sizeof(a)),
            summary_fmt_double(summary_rate((double)s->win_output_tokens, w), "%.1f", b,
                               sizeof(b)));

    if (s->win_request_bytes > 0) {
        /* Request bodies are network load of their own when they carry
         * images (docs/workload.md, "Images"). */
        char rate[32], mean[32];
        summary_fmt_bytes(summary_rate((double)s->win_request_bytes, w), rate, sizeof rate);
        summary_fmt_bytes(s->win_sent ? (double)s->win_request_bytes / (double)s->win_sent : 0,
                          mean, sizeof mean);
        fprintf(f, "bodies:     %s/s of request bodies sent (%s per request)\n", rate, mean);
    }
    uint64_t ok = s->by_kind[REC_OK];
    if (ok > 0 && !stats_embeddings(s)) {
        const char *sep = "";
        fprintf(f, "            output tokens counted from: ");
        for (int i = 0; i < 3; i++) {
            if (s->tokens_source_count[i] == 0)
                continue;
            fprintf(f, "%s%s %" PRIu64, sep,
                    rec_tokens_source_name((enum rec_tokens_source)i),
                    s->tokens_source_count[i]);
            sep = ", ";
        }
        fprintf(f, " of %" PRIu64 " ok requests\n", ok);
        if (s->tokens_source_count[REC_TOKENS_EVENTS] > 0)
            fprintf(f, "            (counted events undercount when an event carries "
                       "several tokens;\n"
                       "             ask for usage with stream_options.include_usage)\n");
        summary_print_finish(f, s);
    }
    if (s->cached_reported > 0) {
        fprintf(f, "            cached prompt tokens: %" PRIu64 " (%.1f%% of input",
                s->cached_tokens, s->prompt_tokens > 0 ? 100.0 * stats_cached_share(s) : 0.0);
        if (info->workload_share_known)
            fprintf(f, "; the workload's prefixes share %.1f%%",
                    100.0 * info->workload_cached_share);
        fprintf(f, ")\n");
    }
    if (info->cache_warning[0])
        summary_wrap(f, "warning: ", info->cache_warning);
    char note[512];
    int warning;
    summary_prompt_note(note, sizeof note, s, info->prompts, &warning);
    if (note[0])
        summary_wrap(f, warning ? "warning: " : "            note: ", note);
    summary_status_note(note, sizeof note, s);
    if (note[0])
        summary_wrap(f, "warning: ", note);

    double rate = summary_rate((double)s->win_completed, w);
    double e2e_s = summary_mean_ns(s->all_e2e_sum_ns, s->all_e2e_count) / 1e9;
    fprintf(f, "in flight:  mean %s, max %s (measured)\n",
            summary_fmt_double(info->inflight_mean, "%.2f", a, sizeof(a)),
            summary_fmt_double(info->inflight_max, "%.0f", b, sizeof(b)));
    fprintf(f,
            "Little's law: completion rate x mean time in system = %s "
            "(E2E, from sched), %s (from sent)\n",
            summary_fmt_double(rate * e2e_s, "%.2f", c, sizeof(c)),
            summary_fmt_double(summary_littles_law_service(s, w), "%.2f", d, sizeof(d)));
    if (info->records_written > 0)
        fprintf(f, "records:    %" PRIu64 " lines in requests.jsonl\n",
                info->records_written);
}

/* Intended vs realised session and request rates (partly-open runs). */
static void summary_print_sessions(FILE *f, const struct stats *s,
                                   const struct summary_info *info)
{
    char a[32], b[32], c[32], d[32];
    uint64_t w = info->window_ns;
    char failed[64] = "";
    if (info->sessions_failed > 0)
        snprintf(failed, sizeof failed, ", %" PRIu64 " ended by a failed turn",
                 info->sessions_failed);
    fprintf(
        f,
        "sessions:   intended %s/s, realised %s/s (%" PRIu64 " started, %" PRIu64
        " cut short%s); requests intended %s/s (x %.2f turns), realised %s/s\n",
        summary_fmt_double(info->session_rate_per_s, "%.2f", a, sizeof(a)),
        summary_fmt_double(summary_session_rate(info), "%.2f", b, sizeof(b)),
        info->sessions_started, info->sessions_cut, failed,
        summary_fmt_double(info->offered_rate_per_s, "%.2f", c, sizeof(c)),
        info->session_turns_mean,
        summary_fmt_double(summary_rate((double)stats_win_scheduled(s), w), "%.2f", d, sizeof(d)));
    /* The count ended the arrivals and the window ran on for the turns
     * and the drain: over the window, 8 sessions that arrived at 4/s in
     * 1.75 s read 2.22/s. Later turns come through the whole window, so
     * the request rate stays over it, and says so. */
    if (info->session_arrivals_ns > 0) {
        char span[32], win[32];
        fprintf(f,
                "            (sessions: %" PRIu64 " starts in the %s up to the last; requests "
                "over the %s window)\n",
                info->session_arrivals - 1,
                ll_fmt_duration(info->session_arrivals_ns, span, sizeof span),
                ll_fmt_duration(w, win, sizeof win));
    }
}

void summary_print_cold(FILE *f, const struct stats *cold, uint64_t n)
{
    char p50[16], p90[16], p99[16], mx[16], e50[16], e99[16];
    const struct hist *t = cold->ttft, *e = cold->e2e;
    int any_t = hist_count(t) > 0, any_e = hist_count(e) > 0;
    fprintf(f,
            "cold start: first %" PRIu64 " requests, %" PRIu64 " scheduled, %" PRIu64
            " ok, %" PRIu64 " failed (not in the figures above)\n",
            n, cold->scheduled, cold->by_kind[REC_OK], stats_failed(cold));
    fprintf(f, "            TTFT p50 %s p90 %s p99 %s max %s; E2E p50 %s p99 %s",
            any_t ? ll_fmt_duration(hist_percentile(t, 50.0), p50, sizeof p50) : "-",
            any_t ? ll_fmt_duration(hist_percentile(t, 90.0), p90, sizeof p90) : "-",
            any_t ? ll_fmt_duration(hist_percentile(t, 99.0), p99, sizeof p99) : "-",
            any_t ? ll_fmt_duration(hist_max(t), mx, sizeof mx) : "-",
            any_e ? ll_fmt_duration(hist_percentile(e, 50.0), e50, sizeof e50) : "-",
            any_e ? ll_fmt_duration(hist_percentile(e, 99.0), e99, sizeof e99) : "-");
    double share = stats_cached_share(cold);
    if (!isnan(share))
        fprintf(f, "; cached %.1f%% of input\n", 100.0 * share);
    else
        fprintf(f, "; cached -\n");
}

void summary_print(FILE *f, const struct stats *s, const struct summary_info *info)
{
    summary_print_header(f, info);
    summary_print_requests(f, s, info);
    summary_print_table(f, s);
    summary_print_throughput(f, s, info);
    if (info->sessions)
        summary_print_sessions(f, s, info);
    if (info->cold)
        summary_print_cold(f, info->cold, info->cold_requests);
    if (info->invalid)
        fprintf(f, "\n*** INVALID RUN: %s\n", summary_str(info->invalid_reason));
}

/* h's p50 and p99 as durations into p50 and p99 (16 bytes each), "-"
 * when h is empty: a breakdown's two columns of one latency. */
static void fmt_p50_p99(const struct hist *h, char p50[16], char p99[16])
{
    snprintf(p50, 16, "-");
    snprintf(p99, 16, "-");
    if (!hist_count(h))
        return;
    ll_fmt_duration(hist_percentile(h, 50), p50, 16);
    ll_fmt_duration(hist_percentile(h, 99), p99, 16);
}

void summary_print_classes(FILE *f, const struct summary_class *c, size_t n, uint64_t window_ns)
{
    if (n == 0)
        return;
    fprintf(f, "\nby class          sched      ok  failed   TTFT p50    p99   TPOT p50    p99"
               "    E2E p99  goodput/s  attain\n");
    for (size_t i = 0; i < n; i++) {
        const struct stats *s = c[i].s;
        char a[16], b[16], d[16], e[16], g[16] = "-", name[128];
        fmt_p50_p99(s->ttft, a, b);
        fmt_p50_p99(s->tpot, d, e);
        if (hist_count(s->e2e))
            ll_fmt_duration(hist_percentile(s->e2e, 99), g, sizeof g);
        char gp[24] = "-", at[24] = "-";
        if (c[i].slo) {
            snprintf(gp, sizeof gp, "%.2f", summary_rate((double)s->win_slo_met, window_ns));
            if (isfinite(stats_attainment(s)))
                snprintf(at, sizeof at, "%.1f%%", 100.0 * stats_attainment(s));
        }
        fprintf(f,
                "%-15.15s %7" PRIu64 " %7" PRIu64 " %7" PRIu64 " %10s %6s %10s %6s %10s %10s %7s\n",
                ll_shown(c[i].name, name, sizeof name), s->scheduled, s->by_kind[REC_OK],
                stats_failed(s), a, b, d, e, g, gp, at);
    }
}

void summary_print_endpoints(FILE *f, const struct summary_endpoint *ep, size_t n,
                             uint64_t window_ns)
{
    if (n == 0)
        return;
    fprintf(f, "\nby endpoint    requests      ok  errors   TTFT p50    p99   TPOT p50    p99"
               "   out tok/s  url\n");
    for (size_t i = 0; i < n; i++) {
        const struct stats *s = ep[i].s;
        char a[16], b[16], d[16], e[16], url[512];
        fmt_p50_p99(s->ttft, a, b);
        fmt_p50_p99(s->tpot, d, e);
        fprintf(f, "%-7zu %15" PRIu64 " %7" PRIu64 " %7" PRIu64 " %10s %6s %10s %6s %11.1f  %s\n",
                i, s->completed, s->by_kind[REC_OK], stats_errors(s), a, b, d, e,
                summary_rate((double)s->win_output_tokens, window_ns),
                ll_shown(ep[i].url, url, sizeof url));
    }
}
