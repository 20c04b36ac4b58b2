/* firstlimit.c: the first limit the server reached over a sweep's steps
 * (see sweep.h, "The first limit"), from the server figures joined to each
 * step and the client's latencies, and that finding in words (the rules in
 * words are in docs/sweep.md, "The first limit"). Split from findings.c, whose
 * findings it joins. */
#include "sweep/sweep.h"

#include <inttypes.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "util/util.h"

const char *sweep_limit_kind_name(enum sweep_limit_kind k)
{
    switch (k) {
    case SWEEP_LIMIT_BATCH: return "batch";
    case SWEEP_LIMIT_KV_CACHE: return "kv_cache";
    case SWEEP_LIMIT_PREFILL: return "prefill";
    case SWEEP_LIMIT_ADMISSION: return "admission";
    case SWEEP_LIMIT_COMPUTE: return "compute";
    default: return "unknown";
    }
}

const char *sweep_first_limit_latency(const struct sweep_first_limit *fl)
{
    if (fl->ttft_failed_rps > 0 && fl->tpot_failed_rps > 0)
        return fl->ttft_failed_rps < fl->tpot_failed_rps   ? "ttft"
               : fl->tpot_failed_rps < fl->ttft_failed_rps ? "tpot"
                                                           : "both";
    if (fl->ttft_failed_rps > 0)
        return "ttft";
    if (fl->tpot_failed_rps > 0)
        return "tpot";
    return "neither";
}

/* Whether a step takes part: loaded, judged (neither INVALID, interrupted
 * nor empty: sweep_step_judged). */
static int limit_step(const struct sweep_step *s)
{
    return !s->f.recovery && sweep_step_judged(s);
}

/* The steps that take part, in offered order (run order among equal
 * rates), into ord; returns how many. */
static size_t steps_by_offered(const struct sweep_step *steps, size_t n, size_t *ord)
{
    size_t m = 0;
    for (size_t i = 0; i < n; i++) {
        if (!limit_step(&steps[i]))
            continue;
        size_t j = m++;
        while (j > 0 && steps[ord[j - 1]].f.offered_rps > steps[i].f.offered_rps) {
            ord[j] = ord[j - 1];
            j--;
        }
        ord[j] = i;
    }
    return m;
}

/* Whether p99 v (ns) of a latency fails: over the SLO threshold slo_ns
 * when there is one, else over SWEEP_LATENCY_RISE times base_ns and
 * min_ns above it. */
static int latency_failed(uint64_t v, uint64_t base_ns, uint64_t slo_ns, uint64_t min_ns)
{
    if (slo_ns)
        return v > slo_ns;
    return (double)v > SWEEP_LATENCY_RISE * (double)base_ns && v > base_ns + min_ns;
}

/* One latency's p99 v at the next step (offered rps) of latency_view: the
 * first one seen is the base; until it fails, each is the value "at". */
static void latency_step(uint64_t v, double rps, uint64_t slo_ns, uint64_t min_ns, int *have,
                         uint64_t *base_ns, uint64_t *at_ns, double *failed_rps)
{
    if (!*have) {
        *have = 1;
        *base_ns = v;
    }
    if (!*failed_rps) {
        *at_ns = v;
        if (latency_failed(v, *base_ns, slo_ns, min_ns))
            *failed_rps = rps;
    }
}

/* The client's view: where TTFT and TPOT p99 first failed (fl's
 * ttft_/tpot_ fields), over the steps in offered order. */
static void latency_view(const struct sweep_step *steps, const size_t *ord, size_t m,
                         const struct sweep_settings *set, struct sweep_first_limit *fl)
{
    int have_ttft = 0, have_tpot = 0;
    for (size_t i = 0; i < m; i++) {
        const struct sweep_step *s = &steps[ord[i]];
        if (s->stats.by_kind[REC_OK] == 0)
            continue;
        latency_step(s->ttft_ns[3], s->f.offered_rps, set->slo.ttft_ns, SWEEP_TTFT_RISE_MIN_NS,
                     &have_ttft, &fl->ttft_base_ns, &fl->ttft_at_ns, &fl->ttft_failed_rps);
        if (hist_count(s->stats.tpot) == 0)
            continue;
        latency_step(s->tpot_ns[3], s->f.offered_rps, set->slo.tpot_ns, SWEEP_TPOT_RISE_MIN_NS,
                     &have_tpot, &fl->tpot_base_ns, &fl->tpot_at_ns, &fl->tpot_failed_rps);
    }
}

static double nan_max(double a, double b)
{
    return isnan(a) ? b : isnan(b) ? a : LL_MAX(a, b);
}

/* The limit step s shows, by the rule at enum sweep_limit_kind (seqs: the
 * engine's batch bound, 0 = unknown; tpot_base_ns: the lowest step's TPOT
 * p99, 0 = none); SWEEP_LIMIT_UNKNOWN with *held 1 when the queue grew but
 * seqs is unknown, *held 0 when nothing held. */
static enum sweep_limit_kind step_limit(const struct sweep_step *s, uint32_t seqs,
                                        uint64_t tpot_base_ns, int *held)
{
    const struct sweep_server *v = &s->f.server;
    *held = 1;
    if (s->stats.by_kind[REC_HTTP_429] > 0)
        return SWEEP_LIMIT_ADMISSION;
    int waiting = v->waiting_max >= 1; /* NAN compares false */
    if (v->preemptions >= 1 || (v->kv_max >= SWEEP_KV_FULL && waiting))
        return SWEEP_LIMIT_KV_CACHE;
    if (seqs && v->running_max >= (double)seqs && waiting)
        return SWEEP_LIMIT_BATCH;
    /* A request that arrives during a step waits for the next one: the
     * queue grew when it held more than one step's arrivals on average
     * (a step lasts about a TPOT; p99: the longest steps of a batch that
     * grows). */
    double one_step =
        hist_count(s->stats.tpot) ? s->f.offered_rps * (double)s->tpot_ns[3] / 1e9 : 0;
    if (v->waiting_max >= SWEEP_QUEUE_MAX_MIN &&
        v->waiting_mean >= LL_MAX(SWEEP_QUEUE_MEAN_MIN, one_step))
        return seqs && v->running_max < (double)seqs ? SWEEP_LIMIT_PREFILL : SWEEP_LIMIT_UNKNOWN;
    /* In flight grew (or the TTFT tail rose) with nothing queued: the
     * requests wait inside the batch, whose steps slow as it grows. */
    if (!s->steady && !isnan(v->running_max) && (!seqs || v->running_max < (double)seqs) &&
        tpot_base_ns && hist_count(s->stats.tpot) &&
        (double)s->tpot_ns[3] >= SWEEP_COMPUTE_TPOT_RISE * (double)tpot_base_ns)
        return SWEEP_LIMIT_COMPUTE;
    *held = 0;
    return SWEEP_LIMIT_UNKNOWN;
}

void sweep_first_limit(const struct sweep_step *steps, size_t n, const struct sweep_settings *set,
                       struct sweep_first_limit *out)
{
    memset(out, 0, sizeof *out);
    out->running_max = out->kv_max = out->kv_capacity_tokens = NAN;
    out->preemptions = out->queue_before = out->queue_max = out->queue_mean = NAN;
    out->prompt_tps = NAN;
    out->max_seqs = set->engine_seqs;
    out->max_seqs_source = set->engine_seqs ? set->engine_seqs_source : NULL;
    size_t *ord = ll_malloc((n + 1) * sizeof *ord);
    size_t m = steps_by_offered(steps, n, ord);
    /* With every step left out there is nothing to judge, scraped or
     * not: an all-INVALID sweep with its scrapes read "no server
     * metrics". */
    out->none_judged = m == 0;
    latency_view(steps, ord, m, set, out);
    double kv_exported = NAN;
    for (size_t i = 0; i < m; i++) {
        const struct sweep_server *v = &steps[ord[i]].f.server;
        /* A server figure that some scrape filled: the running gauge is
         * the one every known engine exports. */
        if (v->present && !isnan(v->running_max))
            out->server_metrics = 1;
        if (v->kv_capacity_tokens > 0)
            kv_exported = v->kv_capacity_tokens;
    }
    if (set->engine_kv_tokens) {
        out->kv_capacity_tokens = (double)set->engine_kv_tokens;
        out->kv_capacity_source = "engine_limits";
    } else if (kv_exported > 0) {
        out->kv_capacity_tokens = kv_exported;
        out->kv_capacity_source = "metrics";
    }
    size_t at = m;
    for (size_t i = 0; i < m && at == m; i++) {
        int held = 0;
        enum sweep_limit_kind k =
            step_limit(&steps[ord[i]], set->engine_seqs, out->tpot_base_ns, &held);
        if (held) {
            at = i;
            out->kind = k;
        }
    }
    if (at < m) {
        const struct sweep_step *s = &steps[ord[at]];
        const struct sweep_server *v = &s->f.server;
        out->reached = 1;
        out->step = ord[at];
        out->step_index = s->f.index;
        out->offered_rps = s->f.offered_rps;
        out->running_max = v->running_max;
        out->kv_max = v->kv_max;
        out->preemptions = v->preemptions;
        out->queue_mean = v->waiting_mean;
        out->queue_before = at > 0 ? steps[ord[at - 1]].f.server.waiting_max : NAN;
        for (size_t i = at; i < m; i++)
            out->queue_max = nan_max(out->queue_max, steps[ord[i]].f.server.waiting_max);
        if (v->has_span && v->span_to_ns > v->span_from_ns && !isnan(v->prompt_tokens))
            out->prompt_tps = v->prompt_tokens / ((double)(v->span_to_ns - v->span_from_ns) / 1e9);
        out->rejected = s->stats.by_kind[REC_HTTP_429];
        out->tpot_step_ns = hist_count(s->stats.tpot) ? s->tpot_ns[3] : 0;
        out->timeouts = s->stats.by_kind[REC_TIMEOUT_CONNECT] +
                        s->stats.by_kind[REC_TIMEOUT_FIRST_TOKEN] +
                        s->stats.by_kind[REC_TIMEOUT_IDLE] + s->stats.by_kind[REC_TIMEOUT_TOTAL];
    } else {
        /* Nothing held: the evidence is the largest each figure got. */
        for (size_t i = 0; i < m; i++) {
            const struct sweep_server *v = &steps[ord[i]].f.server;
            out->running_max = nan_max(out->running_max, v->running_max);
            out->kv_max = nan_max(out->kv_max, v->kv_max);
            out->queue_max = nan_max(out->queue_max, v->waiting_max);
            if (!isnan(v->preemptions))
                out->preemptions =
                    (isnan(out->preemptions) ? 0 : out->preemptions) + v->preemptions;
        }
    }
    free(ord);
}

/* "p99 A -> B" of a latency, in parentheses (with a space before) when
 * paren; "p99 B" when A is B (the lowest step is the one it failed at: an
 * SLO's threshold, not a rise, failed it). */
static void put_rise(char *buf, size_t len, size_t *at, uint64_t base, uint64_t to, int paren)
{
    char a[16], b[16];
    ll_fmt_duration(base, a, sizeof a);
    ll_fmt_duration(to, b, sizeof b);
    ll_putf(buf, len, at, "%sp99 %s%s%s%s", paren ? " (" : "", base == to ? "" : a,
            base == to ? "" : " -> ", b, paren ? ")" : "");
}

/* The client's half of the line: which latency failed first. */
static void put_latency(const struct sweep_first_limit *fl, char *buf, size_t len, size_t *at)
{
    const char *first = sweep_first_limit_latency(fl);
    if (strcmp(first, "neither") == 0) {
        ll_putf(buf, len, at, "TTFT and TPOT held");
        return;
    }
    if (strcmp(first, "both") == 0) {
        ll_putf(buf, len, at, "TTFT and TPOT failed together at %.4g req/s (TTFT ",
                fl->ttft_failed_rps);
        put_rise(buf, len, at, fl->ttft_base_ns, fl->ttft_at_ns, 0);
        ll_putf(buf, len, at, ", TPOT ");
        put_rise(buf, len, at, fl->tpot_base_ns, fl->tpot_at_ns, 0);
        ll_putf(buf, len, at, ")");
        return;
    }
    int ttft = strcmp(first, "ttft") == 0;
    const char *one = ttft ? "TTFT" : "TPOT", *other = ttft ? "TPOT" : "TTFT";
    double other_rps = ttft ? fl->tpot_failed_rps : fl->ttft_failed_rps;
    ll_putf(buf, len, at, "%s failed %s from %.4g req/s", one, other_rps > 0 ? "first" : "alone",
            ttft ? fl->ttft_failed_rps : fl->tpot_failed_rps);
    if (ttft)
        put_rise(buf, len, at, fl->ttft_base_ns, fl->ttft_at_ns, 1);
    else
        put_rise(buf, len, at, fl->tpot_base_ns, fl->tpot_at_ns, 1);
    if (other_rps > 0)
        ll_putf(buf, len, at, ", %s from %.4g req/s", other, other_rps);
    else
        ll_putf(buf, len, at, ", %s held", other);
    if (ttft)
        put_rise(buf, len, at, fl->tpot_base_ns, fl->tpot_at_ns, 1);
    else
        put_rise(buf, len, at, fl->ttft_base_ns, fl->ttft_at_ns, 1);
}

/* "running R/S" at the step, "running at most R" (and "/S" when the bound
 * is known) over the sweep when no step reached a limit. */
static void put_running(const struct sweep_first_limit *fl, char *buf, size_t len, size_t *at)
{
    if (isnan(fl->running_max))
        return;
    ll_putf(buf, len, at, "running %s%.0f", fl->reached && fl->max_seqs ? "" : "at most ",
            fl->running_max);
    if (fl->max_seqs)
        ll_putf(buf, len, at, "/%u", fl->max_seqs);
}

static void put_kv(const struct sweep_first_limit *fl, char *buf, size_t len, size_t *at)
{
    if (isnan(fl->kv_max))
        return;
    ll_putf(buf, len, at, "; KV %.0f%%", 100 * fl->kv_max);
    if (fl->kv_capacity_tokens > 0)
        ll_putf(buf, len, at, " of %.0f tokens", fl->kv_capacity_tokens);
    if (!isnan(fl->preemptions))
        ll_putf(buf, len, at, ", %.0f preemption%s", fl->preemptions,
                fl->preemptions == 1 ? "" : "s");
}

static void put_queue(const struct sweep_first_limit *fl, char *buf, size_t len, size_t *at)
{
    if (isnan(fl->queue_max))
        return;
    ll_putf(buf, len, at, "; queue then grew %.0f -> %.0f",
            isnan(fl->queue_before) ? 0.0 : fl->queue_before, fl->queue_max);
}

void sweep_first_limit_text(const struct sweep_first_limit *fl, char *buf, size_t len)
{
    size_t at = 0;
    if (len)
        buf[0] = '\0';
    if (fl->none_judged) {
        ll_putf(buf, len, &at, "first limit: not judged (no step could be judged)\n");
        return;
    }
    if (!fl->reached) {
        if (!fl->server_metrics) {
            ll_putf(buf, len, &at, "first limit: unknown (no server metrics); the client alone: ");
        } else {
            ll_putf(buf, len, &at, "first limit: none reached (");
            put_running(fl, buf, len, &at);
            put_kv(fl, buf, len, &at);
            if (!isnan(fl->queue_max))
                ll_putf(buf, len, &at, "; queue at most %.0f", fl->queue_max);
            ll_putf(buf, len, &at, "; no 429); ");
        }
        put_latency(fl, buf, len, &at);
        ll_putf(buf, len, &at, "\n");
        return;
    }
    switch (fl->kind) {
    case SWEEP_LIMIT_ADMISSION:
        ll_putf(buf, len, &at,
                "first policy: admission (%" PRIu64 " requests refused with 429 at %.4g req/s, "
                "step %u: the server's queue or rate limit",
                fl->rejected, fl->offered_rps, fl->step_index);
        if (!isnan(fl->running_max)) {
            ll_putf(buf, len, &at, "; ");
            put_running(fl, buf, len, &at);
        }
        if (!isnan(fl->queue_max))
            ll_putf(buf, len, &at, "; queue at most %.0f", fl->queue_max);
        ll_putf(buf, len, &at, ")");
        break;
    case SWEEP_LIMIT_KV_CACHE:
        ll_putf(buf, len, &at, "first limit: KV cache (at %.4g req/s, step %u: ", fl->offered_rps,
                fl->step_index);
        ll_putf(buf, len, &at, "KV %.0f%%", 100 * (isnan(fl->kv_max) ? 0 : fl->kv_max));
        if (fl->kv_capacity_tokens > 0)
            ll_putf(buf, len, &at, " of %.0f tokens", fl->kv_capacity_tokens);
        if (!isnan(fl->preemptions))
            ll_putf(buf, len, &at, ", %.0f preemption%s", fl->preemptions,
                    fl->preemptions == 1 ? "" : "s");
        ll_putf(buf, len, &at, "; ");
        put_running(fl, buf, len, &at);
        put_queue(fl, buf, len, &at);
        ll_putf(buf, len, &at, ")");
        break;
    case SWEEP_LIMIT_BATCH:
        ll_putf(buf, len, &at, "first limit: the batch (");
        put_running(fl, buf, len, &at);
        ll_putf(buf, len, &at, " = max sequences from %.4g req/s, step %u", fl->offered_rps,
                fl->step_index);
        put_kv(fl, buf, len, &at);
        put_queue(fl, buf, len, &at);
        ll_putf(buf, len, &at, ")");
        break;
    case SWEEP_LIMIT_PREFILL:
        ll_putf(buf, len, &at, "first limit: prefill (the queue grew at %.4g req/s, step %u, with ",
                fl->offered_rps, fl->step_index);
        put_running(fl, buf, len, &at);
        put_kv(fl, buf, len, &at);
        if (!isnan(fl->prompt_tps))
            ll_putf(buf, len, &at, "; prompt tokens %.4g/s", fl->prompt_tps);
        put_queue(fl, buf, len, &at);
        ll_putf(buf, len, &at, ")");
        break;
    case SWEEP_LIMIT_COMPUTE:
        ll_putf(buf, len, &at,
                "first limit: compute (at %.4g req/s, step %u, not steady with no queue "
                "growing: ",
                fl->offered_rps, fl->step_index);
        put_running(fl, buf, len, &at);
        put_kv(fl, buf, len, &at);
        ll_putf(buf, len, &at, "; each step slows as the batch grows: TPOT ");
        put_rise(buf, len, &at, fl->tpot_base_ns, fl->tpot_step_ns, 0);
        ll_putf(buf, len, &at, ")");
        break;
    default:
        ll_putf(buf, len, &at, "first limit: unknown (the queue grew at %.4g req/s, step %u, with ",
                fl->offered_rps, fl->step_index);
        put_running(fl, buf, len, &at);
        put_kv(fl, buf, len, &at);
        put_queue(fl, buf, len, &at);
        ll_putf(buf, len, &at, ": the batch or prefill; --engine-limits seqs=N tells them apart)");
        break;
    }
    ll_putf(buf, len, &at, "; ");
    put_latency(fl, buf, len, &at);
    ll_putf(buf, len, &at, "\n");
}
