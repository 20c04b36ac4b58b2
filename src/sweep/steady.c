/* steady.c: the steady-state rule (see steady.h). */
#include "sweep/steady.h"

#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "sweep/fit.h"

/* The in-flight count's fitted change over the window: the least-squares
 * slope of the samples inside the window times the window's length. The
 * warm-up should cover the fill-up at the step's start (about one request
 * duration); docs/sweep.md says so. A step whose last request ended before
 * the window did (a low rate: the schedule had nothing more to send)
 * stopped sampling then, and nothing was in flight from there on: the
 * samples go on as zeros, every 100 ms, to the window's end, or
 * one request taken up late in a short run would be a slope that the
 * window's length made a backlog of several. */
/* The most zeros padded after the series: 4.9 days of tail at 100 ms,
 * longer than any step's; a steps.jsonl whose duration_ns says years
 * (fuzz_stepfacts: 2.5e16 ns, a 4 GB pair of arrays) is fitted over that
 * much of it. */
#define SWEEP_INFLIGHT_PAD_MAX ((uint64_t)1 << 22)

double sweep_inflight_growth(const struct inflight_sample *series, size_t n_series,
                             uint64_t warmup_ns, uint64_t end_ns, uint64_t window_ns,
                             int interrupted)
{
    size_t n = 0, pad = 0;
    /* The driver's interval (a merged sweep's series interleaves its
     * shards': its last two samples may lie a microsecond apart). */
    const uint64_t every = SWEEP_SERIES_EVERY_NS;
    uint64_t last = 0;
    if (n_series && !interrupted) {
        last = series[n_series - 1].t_ns;
        if (last < end_ns)
            pad = (size_t)LL_MIN((end_ns - last) / every, SWEEP_INFLIGHT_PAD_MAX);
    }
    double *x = ll_malloc((n_series + pad + 1) * sizeof *x);
    double *y = ll_malloc((n_series + pad + 1) * sizeof *y);
    for (size_t i = 0; i < n_series + pad; i++) {
        uint64_t t = i < n_series ? series[i].t_ns : last + (i - n_series + 1) * every;
        if (t < warmup_ns || t > end_ns)
            continue;
        x[n] = (double)t / 1e9;
        y[n] = i < n_series ? series[i].inflight : 0;
        n++;
    }
    double g = fit_slope(x, y, n) * (window_ns ? (double)window_ns / 1e9 : 1e-9);
    free(x);
    free(y);
    return g;
}

/* Requests of h above v: whole buckets whose least value is over v (a
 * bucket that holds v counts as not above; the bucket width is under 1%). */
static uint64_t count_above(const struct hist *h, uint64_t v)
{
    size_t cur = 0;
    uint64_t lo, hi, n, above = 0;
    while (hist_iter_next(h, &cur, &lo, &hi, &n))
        if (lo > v)
            above += n;
    return above;
}

void sweep_tail_test(const struct hist *h1, const struct hist *h2, uint64_t window_ns,
                     struct sweep_tail_test *out)
{
    memset(out, 0, sizeof *out);
    out->p_value = 1;
    uint64_t n1 = hist_count(h1), n2 = hist_count(h2), m = LL_MIN(n1, n2);
    if (m < 2 * SWEEP_TAIL_EXCEED)
        return;
    out->judged = 1;
    out->q = LL_MIN(0.99, 1.0 - (double)SWEEP_TAIL_EXCEED / (double)m);
    struct hist *both = hist_new();
    hist_merge(both, h1);
    hist_merge(both, h2);
    out->threshold_ns = hist_percentile(both, 100 * out->q);
    hist_free(both);
    out->h1_ns = hist_percentile(h1, 100 * out->q);
    out->h2_ns = hist_percentile(h2, 100 * out->q);
    out->above1 = count_above(h1, out->threshold_ns);
    out->above2 = count_above(h2, out->threshold_ns);
    out->p_value = fit_hypergeom_upper_tail(n1 + n2, out->above1 + out->above2, n2, out->above2);
    /* The rise's two bars (steady.h): a ratio, or a rate against the time
     * between the halves' centres. */
    double rise_ns = (double)out->h2_ns - (double)out->h1_ns;
    int material = (double)out->h2_ns > SWEEP_TAIL_GROWTH * (double)out->h1_ns ||
                   (window_ns && rise_ns > SWEEP_TAIL_RISE_PER_S * (double)window_ns / 2);
    out->rose =
        out->p_value < SWEEP_TAIL_ALPHA && material && rise_ns > (double)SWEEP_TAIL_GROWTH_MIN_NS;
}

int sweep_steady_verdict(const struct sweep_tail_test *tail, double inflight_growth,
                         double inflight_mean, const char *within, char *reason, size_t len)
{
    char a[16], b[16];
    if (len)
        reason[0] = '\0';
    if (tail->rose) {
        snprintf(reason, len,
                 "TTFT p%.4g rose from %s to %s within the %s (%" PRIu64 " of %" PRIu64
                 " over both halves' p%.4g in its second half, p=%.2g)",
                 100 * tail->q, ll_fmt_duration(tail->h1_ns, a, sizeof a),
                 ll_fmt_duration(tail->h2_ns, b, sizeof b), within, tail->above2,
                 tail->above1 + tail->above2, 100 * tail->q, tail->p_value);
        return 0;
    }
    double limit = LL_MAX(SWEEP_BACKLOG_MIN, SWEEP_BACKLOG_FRACTION * inflight_mean);
    limit = LL_MAX(limit, SWEEP_BACKLOG_NOISE * sqrt(LL_MAX(inflight_mean, 0.0)));
    if (inflight_growth > limit) {
        snprintf(reason, len, "in-flight requests grew by %.1f over the window", inflight_growth);
        return 0;
    }
    return 1;
}

/* The causes in a table, the most lasting first: a replay is never
 * judged, whether or not a signal also cut it short. */
int sweep_steady_unjudged(const struct sweep_steady_case *c, char *reason, size_t len)
{
    const struct {
        int on;
        const char *why;
    } cause[] = {
        {c->trace, "a replayed trace sends at its own times, so the offered load does not hold "
                   "still over the window"},
        {c->sessions, "under --sessions the requests in the system grow until the first "
                      "sessions end, and later turns carry longer contexts, by design"},
        {c->bursts, "--burst changes the offered rate within the window"},
        {c->rate_changes, "the offered rate changes within the window (a ramp), so its halves "
                          "were offered different loads"},
        {c->no_first_token, "an embeddings answer comes in one piece, with no first token: both "
                            "tests start from that time (the tail test's latency, the backlog "
                            "test's fill-up)"},
        {c->merged, "a merged run: the test needs one process's halves and in-flight series, "
                    "which a merge does not rebuild (each shard's summary.json judges its own)"},
        {c->interrupted, "a signal cut the offering short, and the drain that followed is part "
                         "of the window"},
    };
    if (len)
        reason[0] = '\0';
    for (size_t i = 0; i < LL_ARRAY_LEN(cause); i++) {
        if (cause[i].on) {
            snprintf(reason, len, "not judged: %s", cause[i].why);
            return 1;
        }
    }
    if (c->stop_reason && c->stop_reason[0]) {
        snprintf(reason, len,
                 "not judged: offering stopped early (%s), and the drain that followed is "
                 "part of the window",
                 c->stop_reason);
        return 1;
    }
    if (!c->tested)
        return 0;
    int neither = !c->tail_judged && !c->backlog_judged;
    /* Every request refused (a port with no server: 148 sent, 0 ok) read
     * "too few requests ... run longer", and a longer run fails longer. */
    if (neither && c->failed > 0 && 2 * c->failed >= c->done) {
        snprintf(reason, len,
                 "not judged: too few requests succeeded: %" PRIu64 " of %" PRIu64
                 " failed in the window",
                 c->failed, c->done);
        return 1;
    }
    /* After the causes a rerun of the same flags meets again (the
     * failures too: 148 refused at 50/s on a busy host, INVALID by its
     * send rate, are refused again on a quiet one); a rerun on a quieter
     * host would judge it. */
    if (c->invalid) {
        snprintf(reason, len,
                 "not judged: the run is INVALID: its latencies include the client's own "
                 "delay, so its halves would judge the client as much as the server");
        return 1;
    }
    if (!neither)
        return 0;
    snprintf(reason, len,
             "not judged: too few requests: %" PRIu64 " ok in the window's smaller half (the "
             "TTFT tail test needs %d) and %.2fs from the fill-up to the last arrival "
             "(the backlog test needs %.2fs); %s",
             c->tail_ok_min, 2 * SWEEP_TAIL_EXCEED, (double)c->backlog_span_ns / 1e9,
             (double)SWEEP_BACKLOG_SPAN_MIN_NS / 1e9,
             c->requests_bound ? "give more --requests" : "run longer");
    return 1;
}
