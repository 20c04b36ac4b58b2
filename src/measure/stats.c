/* stats.c: per-worker aggregates of records, merged once at the end. */
#include "measure/stats.h"

#include <math.h>
#include <stddef.h>
#include <stdio.h>
#include <string.h>

#include "measure/slo.h"
#include "util/util.h"

/* The histogram fields of struct stats, listed once, so init, free,
 * reset and merge cannot disagree about which histograms exist. */
static const size_t stats_hist_off[] = {
    offsetof(struct stats, ttft),         offsetof(struct stats, ttft_server),
    offsetof(struct stats, ttfc),         offsetof(struct stats, itl),
    offsetof(struct stats, itl_req),      offsetof(struct stats, tpot),
    offsetof(struct stats, e2e),          offsetof(struct stats, e2e_failed),
    offsetof(struct stats, client_queue), offsetof(struct stats, lateness),
    offsetof(struct stats, ttft_ontime),  offsetof(struct stats, e2e_ontime),
};
#define STATS_NHIST LL_ARRAY_LEN(stats_hist_off)

/* Pointers to the histogram fields of s, in stats_hist_off's order. */
static void stats_hist_slots(struct stats *s, struct hist **slots[STATS_NHIST])
{
    for (size_t i = 0; i < STATS_NHIST; i++)
        slots[i] = (struct hist **)((char *)s + stats_hist_off[i]);
}

void stats_init(struct stats *s)
{
    struct hist **slots[STATS_NHIST];
    memset(s, 0, sizeof(*s));
    stats_hist_slots(s, slots);
    for (size_t i = 0; i < STATS_NHIST; i++)
        *slots[i] = hist_new();
}

void stats_free(struct stats *s)
{
    struct hist **slots[STATS_NHIST];
    stats_hist_slots(s, slots);
    for (size_t i = 0; i < STATS_NHIST; i++)
        hist_free(*slots[i]);
    memset(s, 0, sizeof(*s));
}

void stats_reset(struct stats *s)
{
    struct hist *keep[STATS_NHIST];
    struct hist **slots[STATS_NHIST];
    stats_hist_slots(s, slots);
    for (size_t i = 0; i < STATS_NHIST; i++) {
        keep[i] = *slots[i];
        hist_reset(keep[i]);
    }
    memset(s, 0, sizeof(*s));
    for (size_t i = 0; i < STATS_NHIST; i++)
        *slots[i] = keep[i];
}

/* b - a, or LL_NO_TIME when either is missing or b is before a. */
static uint64_t stats_span_ns(uint64_t a, uint64_t b)
{
    if (a == LL_NO_TIME || b == LL_NO_TIME || b < a)
        return LL_NO_TIME;
    return b - a;
}

static void stats_record_time(struct hist *h, uint64_t ns)
{
    if (ns != LL_NO_TIME)
        hist_record(h, ns);
}

/* A latency less the record's own schedule lateness (none recorded: 0). */
static uint64_t less_late(uint64_t ns, uint64_t late_ns)
{
    if (ns == LL_NO_TIME || late_ns == LL_NO_TIME)
        return ns;
    return ns > late_ns ? ns - late_ns : 0;
}

int stats_finish_by_length(const char *finish_reason)
{
    /* Each API's own word for "a token limit ended it": chat and
     * completions, Anthropic's two, and the Responses API's incomplete
     * status with its reason (responses.c joins them). */
    static const char *const by_length[] = {"length", "max_tokens", "model_context_window_exceeded",
                                            "incomplete:max_output_tokens"};
    for (size_t i = 0; i < LL_ARRAY_LEN(by_length); i++)
        if (strcmp(finish_reason, by_length[i]) == 0)
            return 1;
    return 0;
}

int stats_cut_short(const struct record *r)
{
    if (r->kind != REC_OK || r->tokens_source == REC_TOKENS_EVENTS || r->max_tokens == 0 ||
        r->output_tokens >= r->max_tokens)
        return 0;
    return r->ignore_eos || stats_finish_by_length(r->finish_reason);
}

/* Count n ok records of finish reason name (REC_FINISH_REASON_MAX bytes
 * at most, NUL-terminated or not; "" = none) into s. */
static void stats_add_finish(struct stats *s, const char *name, uint64_t n)
{
    size_t len = strnlen(name, REC_FINISH_REASON_MAX - 1);
    if (len == 0) {
        s->finish_none += n;
        return;
    }
    for (size_t i = 0; i < STATS_FINISH_NAMES; i++) {
        if (!s->finish_name[i][0]) {
            memcpy(s->finish_name[i], name, len);
            s->finish_name[i][len] = '\0';
        }
        if (strncmp(s->finish_name[i], name, len) == 0 && s->finish_name[i][len] == '\0') {
            s->finish_count[i] += n;
            return;
        }
    }
    s->finish_other += n;
}

void stats_sample_copy(char *out, const char *detail, size_t detail_cap)
{
    size_t n = strnlen(detail, detail_cap);
    size_t keep = n <= STATS_SAMPLE_MAX ? n : STATS_SAMPLE_MAX - 3;
    ll_printable(detail, keep, out, keep + 1);
    if (keep < n) {
        memcpy(out + keep, "...", 3);
        keep += 3;
    }
    out[keep] = '\0';
}

void stats_account(struct stats *s, const struct record *r, uint64_t warmup_ns,
                   uint64_t window_end_ns, const struct slo *slo)
{
    stats_account_met(s, r, warmup_ns, window_end_ns, slo_is_set(slo) ? slo_judge(slo, r) : 0);
}

void stats_account_window(struct stats *s, const struct record *r, uint64_t from_ns, uint64_t to_ns,
                          int met)
{
    if (r->sent_ns != LL_NO_TIME && r->sent_ns >= from_ns && r->sent_ns <= to_ns) {
        s->win_sent++;
        s->win_request_bytes += r->request_bytes;
    }
    if (r->end_ns != LL_NO_TIME && r->end_ns >= from_ns && r->end_ns <= to_ns) {
        s->win_completed++;
        s->win_dropped += (uint64_t)(r->kind == REC_CLIENT_DROPPED);
        if (r->kind == REC_OK) {
            s->win_ok++;
            s->win_output_tokens += r->output_tokens;
            s->win_inputs += r->inputs;
            s->win_prompt_tokens +=
                r->prompt_tokens_server >= 0 ? (uint64_t)r->prompt_tokens_server : r->prompt_tokens;
            /* Goodput is the warm requests': a cold one is the cold
             * section's alone. */
            s->win_slo_met += (uint64_t)(met == 1 && !r->cold);
        }
    }
}

void stats_account_met(struct stats *s, const struct record *r, uint64_t warmup_ns,
                       uint64_t window_end_ns, int met)
{
    stats_account_window(s, r, warmup_ns, window_end_ns, met);
    if (r->warmup) {
        s->warmup_output_tokens += r->output_tokens;
        if (r->kind == REC_OK) {
            s->warmup_ok++;
            s->warmup_prompt_tokens +=
                r->prompt_tokens_server >= 0 ? (uint64_t)r->prompt_tokens_server : r->prompt_tokens;
            s->warmup_cached_tokens += r->cached_tokens >= 0 ? (uint64_t)r->cached_tokens : 0;
        } else {
            s->warmup_output_tokens_failed += r->output_tokens;
            s->warmup_failed_started += r->first_ns != LL_NO_TIME;
        }
    }
    if (r->warmup || r->cold)
        return;
    stats_add_record(s, r);
    if (r->sent_ns != LL_NO_TIME)
        s->sent++;
    stats_add_slo(s, met);
}

uint64_t stats_win_scheduled(const struct stats *s)
{
    return s->scheduled + s->win_scheduled_cold;
}

void stats_add_slo(struct stats *s, int verdict)
{
    s->slo_met += (uint64_t)(verdict == 1);
    s->slo_unjudged += (uint64_t)(verdict == SLO_UNJUDGED);
}

/* Count one late ok send, and keep it while the list has room. */
static void stats_keep_late(struct stats *s, const struct stats_late_send *l)
{
    if (s->n_late_ok < STATS_LATE_SENDS)
        s->late_ok[s->n_late_ok] = *l;
    s->n_late_ok++;
}

void stats_add_record(struct stats *s, const struct record *r)
{
    s->completed++;
    s->inputs_records += r->inputs > 0;
    s->late_known += r->late_ns != LL_NO_TIME;
    if ((unsigned)r->kind < REC_KIND_COUNT) {
        s->by_kind[r->kind]++;
        if (r->kind == REC_HTTP_4XX)
            s->by_4xx_cause[status_cause_of(r->http_status)]++;
        if (r->kind != REC_OK && s->sample[r->kind][0] == '\0')
            stats_sample_copy(s->sample[r->kind], r->detail, sizeof r->detail);
    }

    uint64_t e2e_ns = record_e2e_ns(r);
    if (e2e_ns != LL_NO_TIME) {
        s->all_e2e_sum_ns += e2e_ns;
        s->all_e2e_count++;
    }
    uint64_t service_ns = stats_span_ns(r->sent_ns, r->end_ns);
    if (service_ns != LL_NO_TIME) {
        s->all_service_sum_ns += service_ns;
        s->all_service_count++;
    }
    stats_record_time(s->client_queue, stats_span_ns(r->sched_ns, r->sent_ns));
    if (r->retry_after_ms >= 0) {
        s->retry_after_seen++;
        s->retry_after_sum_ms += (uint64_t)r->retry_after_ms;
    }

    if (r->kind != REC_OK) {
        stats_record_time(s->e2e_failed, e2e_ns);
        s->output_tokens_failed += r->output_tokens;
        s->failed_started += r->first_ns != LL_NO_TIME;
        return;
    }

    uint64_t ttft_ns = record_ttft_ns(r);
    stats_record_time(s->ttft, ttft_ns);
    stats_record_time(s->ttft_ontime, less_late(ttft_ns, r->late_ns));
    stats_record_time(s->e2e_ontime, less_late(e2e_ns, r->late_ns));
    if (r->late_ns != LL_NO_TIME && r->late_ns > STATS_LATE_KEPT_NS)
        stats_keep_late(s, &(struct stats_late_send){ttft_ns, e2e_ns, r->late_ns});
    stats_record_time(s->ttft_server, record_ttft_server_ns(r));
    stats_record_time(s->ttfc, stats_span_ns(r->sched_ns, r->first_content_ns));
    stats_record_time(s->tpot, record_tpot_ns(r));
    stats_record_time(s->e2e, e2e_ns);
    if (e2e_ns != LL_NO_TIME)
        s->ok_e2e_sum_ns += e2e_ns;
    stats_record_time(s->itl_req, record_itl_req_ns(r));

    if (r->prompt_tokens_server >= 0) {
        s->prompt_tokens += (uint64_t)r->prompt_tokens_server;
        if ((uint64_t)r->prompt_tokens_server != r->prompt_tokens)
            s->prompt_mismatch++;
        if (r->prompt_tokens > 0) {
            double e = ((double)r->prompt_tokens_server - (double)r->prompt_tokens) /
                       (double)r->prompt_tokens;
            if (s->prompt_usage_n == 0 || e < s->prompt_err_min)
                s->prompt_err_min = e;
            if (s->prompt_usage_n == 0 || e > s->prompt_err_max)
                s->prompt_err_max = e;
            s->prompt_usage_n++;
            s->prompt_usage_requested += r->prompt_tokens;
            s->prompt_usage_server += (uint64_t)r->prompt_tokens_server;
        }
    } else {
        s->prompt_tokens += r->prompt_tokens;
    }
    s->output_tokens += r->output_tokens;
    s->events += r->events;
    s->inputs += r->inputs;
    if (r->cached_tokens >= 0) {
        s->cached_tokens += (uint64_t)r->cached_tokens;
        s->cached_reported++;
    }
    if ((unsigned)r->tokens_source < LL_ARRAY_LEN(s->tokens_source_count))
        s->tokens_source_count[r->tokens_source]++;
    stats_add_finish(s, r->finish_reason, 1);
    s->cut_short += (uint64_t)stats_cut_short(r);
    s->cut_short_unjudged += r->tokens_source == REC_TOKENS_EVENTS;
}

void stats_add_itl_gap(struct stats *s, uint64_t gap_ns)
{
    hist_record(s->itl, gap_ns);
    if (s->itl_window)
        hist_record(s->itl_window, gap_ns);
}

void stats_add_lateness(struct stats *s, uint64_t late_ns)
{
    hist_record(s->lateness, late_ns);
}

void stats_merge_window(struct stats *dst, const struct stats *src)
{
    dst->win_sent += src->win_sent;
    dst->win_request_bytes += src->win_request_bytes;
    dst->win_completed += src->win_completed;
    dst->win_ok += src->win_ok;
    dst->win_dropped += src->win_dropped;
    dst->win_slo_met += src->win_slo_met;
    dst->win_prompt_tokens += src->win_prompt_tokens;
    dst->win_output_tokens += src->win_output_tokens;
    dst->win_inputs += src->win_inputs;
}

void stats_merge(struct stats *dst, const struct stats *src)
{
    struct hist **d[STATS_NHIST];
    stats_hist_slots(dst, d);
    for (size_t i = 0; i < STATS_NHIST; i++)
        hist_merge(*d[i], *(struct hist *const *)((const char *)src + stats_hist_off[i]));

    dst->slo_met += src->slo_met;
    dst->slo_unjudged += src->slo_unjudged;
    stats_merge_window(dst, src);
    dst->warmup_output_tokens += src->warmup_output_tokens;
    dst->warmup_output_tokens_failed += src->warmup_output_tokens_failed;
    dst->warmup_ok += src->warmup_ok;
    dst->warmup_prompt_tokens += src->warmup_prompt_tokens;
    dst->warmup_cached_tokens += src->warmup_cached_tokens;
    dst->warmup_failed_started += src->warmup_failed_started;
    dst->win_scheduled_cold += src->win_scheduled_cold;
    dst->inputs_records += src->inputs_records;
    dst->inputs += src->inputs;
    dst->scheduled += src->scheduled;
    dst->sent += src->sent;
    dst->completed += src->completed;
    for (size_t k = 0; k < REC_KIND_COUNT; k++) {
        dst->by_kind[k] += src->by_kind[k];
        if (dst->sample[k][0] == '\0')
            memcpy(dst->sample[k], src->sample[k], sizeof dst->sample[k]);
    }
    for (size_t c = 0; c < STATUS_CAUSES; c++)
        dst->by_4xx_cause[c] += src->by_4xx_cause[c];
    dst->prompt_tokens += src->prompt_tokens;
    dst->output_tokens += src->output_tokens;
    dst->output_tokens_failed += src->output_tokens_failed;
    dst->failed_started += src->failed_started;
    dst->events += src->events;
    dst->cached_tokens += src->cached_tokens;
    dst->cached_reported += src->cached_reported;
    dst->prompt_mismatch += src->prompt_mismatch;
    if (src->prompt_usage_n > 0) {
        if (dst->prompt_usage_n == 0 || src->prompt_err_min < dst->prompt_err_min)
            dst->prompt_err_min = src->prompt_err_min;
        if (dst->prompt_usage_n == 0 || src->prompt_err_max > dst->prompt_err_max)
            dst->prompt_err_max = src->prompt_err_max;
    }
    dst->prompt_usage_n += src->prompt_usage_n;
    dst->prompt_usage_requested += src->prompt_usage_requested;
    dst->prompt_usage_server += src->prompt_usage_server;
    dst->ok_e2e_sum_ns += src->ok_e2e_sum_ns;
    dst->all_e2e_sum_ns += src->all_e2e_sum_ns;
    dst->all_e2e_count += src->all_e2e_count;
    dst->all_service_sum_ns += src->all_service_sum_ns;
    dst->all_service_count += src->all_service_count;
    for (size_t i = 0; i < LL_ARRAY_LEN(dst->tokens_source_count); i++)
        dst->tokens_source_count[i] += src->tokens_source_count[i];
    dst->retry_after_seen += src->retry_after_seen;
    dst->retry_after_sum_ms += src->retry_after_sum_ms;
    dst->late_known += src->late_known;
    for (uint64_t i = 0; i < src->n_late_ok; i++) {
        if (i < STATS_LATE_SENDS)
            stats_keep_late(dst, &src->late_ok[i]);
        else
            dst->n_late_ok++;
    }
    for (size_t i = 0; i < STATS_FINISH_NAMES && src->finish_name[i][0]; i++)
        stats_add_finish(dst, src->finish_name[i], src->finish_count[i]);
    dst->finish_other += src->finish_other;
    dst->finish_none += src->finish_none;
    dst->cut_short += src->cut_short;
    dst->cut_short_unjudged += src->cut_short_unjudged;
}

double stats_attainment(const struct stats *s)
{
    uint64_t judged = s->scheduled > s->slo_unjudged ? s->scheduled - s->slo_unjudged : 0;
    return judged ? (double)s->slo_met / (double)judged : NAN;
}

int stats_share_cmp(double share, double target)
{
    double tol = STATS_SHARE_REL_TOL * fmax(fabs(share), fabs(target));
    if (share < target - tol)
        return -1;
    if (share > target + tol)
        return 1;
    return 0;
}

uint64_t stats_failed(const struct stats *s)
{
    return s->completed - s->by_kind[REC_OK];
}

double stats_error_share(double errors, double completed, double cancelled)
{
    double let_end = completed - cancelled;
    return let_end > 0 ? errors / let_end : 0;
}

uint64_t stats_errors(const struct stats *s)
{
    return stats_failed(s) - s->by_kind[REC_CANCELLED];
}

uint64_t stats_let_end(const struct stats *s)
{
    return s->completed - LL_MIN(s->by_kind[REC_CANCELLED], s->completed);
}

double stats_error_rate(const struct stats *s)
{
    return stats_error_share((double)stats_errors(s), (double)s->completed,
                             (double)s->by_kind[REC_CANCELLED]);
}

int stats_embeddings(const struct stats *s)
{
    return s->inputs_records > 0;
}

double stats_cached_share(const struct stats *s)
{
    if (s->cached_reported == 0 || s->prompt_tokens == 0)
        return NAN;
    return (double)s->cached_tokens / (double)s->prompt_tokens;
}

void stats_served(const struct stats *st, const struct stats *cold, struct stats_served *out)
{
    static const struct stats none;
    if (!cold)
        cold = &none;
    out->output_tokens =
        (double)(st->output_tokens + st->output_tokens_failed + cold->output_tokens +
                 cold->output_tokens_failed + st->warmup_output_tokens);
    out->prompt_tokens =
        (double)(st->prompt_tokens + cold->prompt_tokens + st->warmup_prompt_tokens);
    out->cached_tokens =
        (double)(st->cached_tokens + cold->cached_tokens + st->warmup_cached_tokens);
    out->completed_ok = (double)(st->by_kind[REC_OK] + cold->by_kind[REC_OK] + st->warmup_ok);
    out->failed_started =
        (double)(st->failed_started + cold->failed_started + st->warmup_failed_started);
    out->failed_output_tokens = (double)(st->output_tokens_failed + cold->output_tokens_failed +
                                         st->warmup_output_tokens_failed);
}
