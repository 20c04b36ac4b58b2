/* replay.c: trace entries as requests (see replay.h). */
#include "workload/replay.h"

#include <math.h>

#include "measure/summary.h"
#include "workload/tokenizer.h"

void replay_spec(const struct trace *t, size_t i, int ignore_eos,
                 const struct workload_calib *calib, struct req_spec *out)
{
    const struct trace_entry *e = &t->entries[i];
    size_t text_len = 0;
    const char *text = trace_prompt(t, i, &text_len);
    out->index = e->index;
    out->prompt_tokens = e->prompt_tokens;
    if (out->prompt_tokens == 0) {
        uint32_t n = text ? tokenizer_count(text, text_len) : 0;
        out->prompt_tokens = n ? n : 1;
    }
    out->max_tokens = e->max_tokens;
    out->class_idx = e->class_id;
    out->class_name = trace_class_name(t, i);
    out->ignore_eos = e->ignore_eos >= 0 ? e->ignore_eos : ignore_eos;
    out->api = e->api;
    out->prefix_id = e->prefix_id;
    out->prefix_tokens = e->prefix_id >= 0 ? e->prefix_tokens : 0;
    if (e->cancel_after_ns != TRACE_NONE) {
        out->cancel_kind = WL_CANCEL_AFTER_TIME;
        out->cancel_after = e->cancel_after_ns;
    } else {
        out->cancel_kind = WL_CANCEL_NONE;
        out->cancel_after = 0;
    }
    out->prompt_text = text;
    out->prompt_text_len = text ? text_len : 0;
    out->history = NULL;
    out->history_len = 0;
    out->session = e->session_id != TRACE_NONE && e->session_id <= INT64_MAX
                       ? (int64_t)e->session_id
                       : -1;
    out->turn = -1;
    out->calib = calib ? *calib : (struct workload_calib){0, 0};
    out->dataset_entry = -1;
    workload_images(NULL, 0, out);
}

int replay_has_text(const struct trace *t)
{
    return t->arena_bytes > 0; /* the arena holds the lines' texts only */
}

int replay_has_synthetic(const struct trace *t)
{
    for (size_t i = 0; i < t->n; i++) {
        if (t->entries[i].prompt_off == TRACE_NONE)
            return 1;
    }
    return 0;
}

size_t replay_offered_count(const struct trace *t, double factor, uint64_t max_requests,
                            uint64_t duration_ns)
{
    size_t n = max_requests && max_requests < t->n ? (size_t)max_requests : t->n;
    while (n > 0 && duration_ns && trace_scaled_sched_ns(t, n - 1, factor) >= duration_ns)
        n--;
    return n;
}

double replay_offered_rate(const struct trace *t, double factor, uint64_t max_requests,
                           uint64_t duration_ns)
{
    size_t n = replay_offered_count(t, factor, max_requests, duration_ns);
    size_t asked = max_requests && max_requests < t->n ? (size_t)max_requests : t->n;
    /* --duration cut the trace: its next entry was due after it, so the
     * offering spans the whole duration, and n arrivals over that fixed
     * time are its rate. Otherwise the span ends at the last entry, and
     * the entries before it are over it, as the run's own scheduled rate
     * over the offering counts them (summary_arrival_rate). */
    if (n < asked)
        return duration_ns ? (double)n / ((double)duration_ns / 1e9) : 0;
    if (n < 2)
        return 0;
    double r = summary_arrival_rate(n, trace_scaled_sched_ns(t, n - 1, factor));
    return isfinite(r) ? r : 0;
}

int replay_has_cancels(const struct trace *t)
{
    for (size_t i = 0; i < t->n; i++) {
        if (t->entries[i].cancel_after_ns != TRACE_NONE)
            return 1;
    }
    return 0;
}
