/* replay.h: a trace's entries as the driver's requests (`llmload replay`).
 *
 * The driver's trace source (run_config.trace) offers entry i at
 * trace_scaled_sched_ns(t, i, factor), from the worker i mod W, with the
 * request replay_spec builds: the trace's index, lengths, class, prefix,
 * prompt text, session and cancellation. A trace line without a prompt
 * text gets the synthetic prompt of its index (workload_prompt), so a
 * schedule dumped by `llmload run --dump-schedule` and replayed with the
 * same --seed sends byte-identical prompts. */
#ifndef LL_REPLAY_H
#define LL_REPLAY_H

#include <stddef.h>

#include "workload/trace.h"
#include "workload/workload.h"

/* Fill out with the request of entry i (< t->n): its API and ignore_eos
 * the line's when it gives them, else -1 (the transport's --api) and
 * ignore_eos, the command line's; calib (may be NULL: none) the fit the synthetic prompt of a line
 * without text is scaled by (--calibration, --calibrate auto), so the
 * server counts the line's prompt_tokens; a line's own text is sent as it
 * is. The prompt text and class name are borrowed from t (valid until
 * trace_free). A line with a prompt text and no prompt_tokens gets the
 * text's length under the sim's tokenizer (at least 1). */
void replay_spec(const struct trace *t, size_t i, int ignore_eos,
                 const struct workload_calib *calib, struct req_spec *out);

/* 1 when some line of t carries prompt text (sent verbatim), else 0. */
int replay_has_text(const struct trace *t);

/* 1 when some line of t has no prompt text (gets a synthetic prompt). */
int replay_has_synthetic(const struct trace *t);

/* How many of t's entries a replay offers: the first max_requests (0 =
 * all), those of them whose scaled offset is before duration_ns (0 = no
 * bound). */
size_t replay_offered_count(const struct trace *t, double factor, uint64_t max_requests,
                            uint64_t duration_ns);

/* The replay's intended request rate, req/s: the entries it offers
 * (replay_offered_count) before the last of them over the span from
 * offset 0 to that last one's scaled offset (summary_arrival_rate: the
 * run's scheduled rate over the offering counts the same), or all of
 * them over duration_ns when that cut the trace; 0 when there is no span
 * (one entry, or every request at once). */
double replay_offered_rate(const struct trace *t, double factor, uint64_t max_requests,
                           uint64_t duration_ns);

/* 1 when some entry cancels after a time (the transport must sweep). */
int replay_has_cancels(const struct trace *t);

#endif
