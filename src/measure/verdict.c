/* verdict.c: the self-check of a load point. See verdict.h. */
#include "measure/verdict.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

#include "measure/hist.h"
#include "measure/stats.h"

static uint64_t pct_or_0(const struct hist *h, double q)
{
    return h && hist_count(h) ? hist_percentile(h, q) : 0;
}

/* Window sends later than limit_ns, from the lateness histogram's
 * buckets: a bucket that reaches past the limit counts whole, so this is
 * never fewer than the true count. UINT64_MAX when no lateness was
 * recorded (nothing known). */
static uint64_t sends_past(const struct hist *late, uint64_t limit_ns)
{
    if (!late || !hist_count(late))
        return UINT64_MAX;
    uint64_t n = 0, lo, hi, c;
    size_t cursor = 0;
    while (hist_iter_next(late, &cursor, &lo, &hi, &c))
        if (hi > limit_ns)
            n += c;
    return n;
}

/* A percentile that lateness moved past its limit. */
struct over {
    int metric;         /* 0 TTFT, 1 E2E */
    uint64_t rank;      /* its nearest rank (hist_percentile_rank) */
    uint64_t value_ns;  /* ns, as measured */
    uint64_t ontime_ns; /* ns, had every send left on time */
    uint64_t limit_ns;  /* ns, its limit */
};

/* A late send's latency of the metric (0 TTFT, 1 E2E), as measured. */
static uint64_t late_value(const struct stats_late_send *l, int metric)
{
    return metric == 0 ? l->ttft_ns : l->e2e_ns;
}

/* Is the move ov the late send j's doing alone? Yes outright when every
 * other send was no later than the limit (each move is then at most the
 * limit), not counting a send that stays above the percentile with its
 * lateness taken out (it is above the rank in every load, so it moves
 * nothing there). Else no when another send past the limit is in the tail the
 * percentile speaks for (at or above it): lateness then shaped that tail
 * more than once, whichever of them sits on the rank. Else yes when the
 * move would be within its limit had j been no later than that limit:
 * its measured value would then be y = x - (late - limit), x its latency
 * as measured; a send below the percentile's rank leaves it as it is,
 * and one at or above it takes it down to no less than max(y, the value
 * of the rank below), while the on-time percentile stays. The estimates
 * come from two histograms, each within 1/256 of its value: the
 * comparisons allow their resolution, 1/128 of the percentile. */
static int capped_within(const struct verdict_input *in, const struct over *ov, size_t j)
{
    const struct stats_late_send *l = &in->late_ok[j];
    uint64_t x = late_value(l, ov->metric);
    uint64_t lim = ov->limit_ns, v = ov->value_ns, res = v / 128 + 1;
    if (l->late_ns <= lim || x == LL_NO_TIME)
        return 0;
    int others_past = 0;
    for (uint64_t i = 0; i < in->n_late_ok; i++) {
        const struct stats_late_send *o = &in->late_ok[i];
        if (i == j || o->late_ns <= lim)
            continue;
        uint64_t xi = late_value(o, ov->metric);
        /* Above the percentile even with all its lateness taken out, o
         * sits in the tail in every one of these loads, on time or not:
         * it never holds or crosses the rank, and its lateness moved
         * nothing there (a send stalled 4 s behind a server's freeze,
         * 10 ms late, beside a 50 ms p50). */
        if (xi != LL_NO_TIME && xi >= v + res + o->late_ns)
            continue;
        others_past = 1;
        if (xi != LL_NO_TIME && xi + res >= v)
            return 0;
    }
    if (!others_past)
        return 1;
    if (x + res < v)
        return 0;
    const struct hist *h = ov->metric == 0 ? in->ttft : in->e2e;
    uint64_t below = ov->rank >= 2 ? hist_rank_value(h, ov->rank - 1) : 0;
    uint64_t y = x + lim > l->late_ns ? x + lim - l->late_ns : 0;
    uint64_t capped = LL_MIN(v, LL_MAX(y, below));
    capped = capped > ov->ontime_ns ? capped - ov->ontime_ns : 0;
    return capped <= lim + res;
}

/* The one late send whose lateness, taken down to each move's limit,
 * would leave every move of overs within it: its index in in->late_ok,
 * or -1 when there is none or the late sends are not known one by one. */
static long one_send(const struct verdict_input *in, const struct over *overs, size_t n_over)
{
    if (!in->late_ok || in->n_late_ok > STATS_LATE_SENDS)
        return -1;
    for (uint64_t j = 0; j < in->n_late_ok; j++) {
        size_t k = 0;
        while (k < n_over && capped_within(in, &overs[k], j))
            k++;
        if (k == n_over)
            return (long)j;
    }
    return -1;
}

/* The headline percentiles lateness may move: TTFT and E2E at p50, p90,
 * p99. A percentile that is the maximum of its sample (p99 of 100 requests
 * or fewer) is not judged: one request decides it, and one send the OS
 * woke late is not a finding about the run. A move is taken as at most
 * the largest lateness (hist_max, exact): taking at most d off every
 * value takes at most d off each percentile, and only the buckets of the
 * two estimates could read more (a 0.98 ms lateness read as a 1.05 ms
 * move of a 44 ms E2E p90, over the floor, against llama.cpp). For the
 * same reason a move over its limit counts only when two sends or more
 * were later than that limit: with one, taking that send's lateness down
 * to the limit leaves every send at most the limit late, so every move
 * at most the limit, and the move past it is that one send's doing (of
 * three identical short runs against llama.cpp, one read INVALID on a
 * 1.7 ms move of a 29 ms p90). With two sends or more past the limit the
 * move may still be one send's doing (one_send): that one sat on the
 * percentile's rank, the others below the percentile, moving nothing past
 * its limit. Sets out->worst to the move that makes the point INVALID,
 * else the move nearest its limit, with its sends_past_limit; returns 1
 * when a move counts over its limit, 0 when none does, -1 when nothing
 * could be judged (no histograms given, no ok request, or too few for any
 * percentile). *lone is set to 1 when a move was over its limit by one
 * send alone, 2 when the moves over their limits were one send's doing
 * though others were that late too (out->lone_late_ns: its lateness). */
static int judge_moves(const struct verdict_input *in, double tol, struct verdict *out, int *lone)
{
    static const char *const names[2][3] = {{"TTFT p50", "TTFT p90", "TTFT p99"},
                                            {"E2E p50", "E2E p90", "E2E p99"}};
    static const double q[3] = {50, 90, 99};
    const struct hist *meas[2] = {in->ttft, in->e2e};
    const struct hist *ontime[2] = {in->ttft_ontime, in->e2e_ontime};
    double worst = -1, worst_over = -1;
    struct verdict_move over_move = {0};
    struct over overs[6];
    size_t n_over = 0;
    *lone = 0;
    /* No lateness recorded: no bound known, the moves stand as read. */
    uint64_t bound = in->lateness && hist_count(in->lateness) ? hist_max(in->lateness) : UINT64_MAX;
    for (int m = 0; m < 2; m++) {
        if (!meas[m] || !ontime[m] || !hist_count(meas[m]) || !hist_count(ontime[m]))
            continue;
        uint64_t n = hist_count(meas[m]);
        for (int k = 0; k < 3; k++) {
            if (hist_percentile_rank(q[k], n) >= n)
                continue;
            uint64_t v = hist_percentile(meas[m], q[k]);
            uint64_t o = hist_percentile(ontime[m], q[k]);
            uint64_t moved = v > o ? v - o : 0;
            if (moved > bound)
                moved = bound;
            uint64_t limit = (uint64_t)(tol * (double)v);
            if (limit < VERDICT_MOVE_FLOOR_NS)
                limit = VERDICT_MOVE_FLOOR_NS;
            struct verdict_move mv = {names[m][k], moved, limit, v,
                                      sends_past(in->lateness, limit)};
            double share = (double)moved / (double)limit;
            if (share > worst) {
                worst = share;
                out->worst = mv;
            }
            if (moved <= limit)
                continue;
            overs[n_over++] = (struct over){m, hist_percentile_rank(q[k], n), v, o, limit};
            if (mv.sends_past_limit < 2) {
                *lone = 1;
            } else if (share > worst_over) {
                worst_over = share;
                over_move = mv;
            }
        }
    }
    if (worst_over >= 0) {
        long j = one_send(in, overs, n_over);
        if (j < 0) {
            out->worst = over_move;
            return 1;
        }
        *lone = 2;
        out->lone_late_ns = in->late_ok[j].late_ns;
        return 0;
    }
    if (*lone)
        out->lone_late_ns = hist_max(in->lateness);
    return worst < 0 ? -1 : 0;
}

enum verdict_late_cause verdict_late_cause(uint64_t late_sends, uint64_t late_asleep,
                                           uint64_t cpu_ns, uint64_t wall_ns,
                                           uint64_t invol_switches)
{
    if (late_sends == 0)
        return VERDICT_LATE_NONE;
    if (2 * late_asleep >= late_sends)
        return VERDICT_LATE_ASLEEP;
    if (wall_ns > 0 && (double)cpu_ns < VERDICT_BUSY_MIN_CPU_SHARE * (double)wall_ns &&
        invol_switches > 0)
        return VERDICT_LATE_PREEMPTED;
    return VERDICT_LATE_BUSY;
}

const char *verdict_late_cause_name(enum verdict_late_cause c)
{
    static const char *const names[] = {
        [VERDICT_LATE_NONE] = "none",
        [VERDICT_LATE_ASLEEP] = "asleep",
        [VERDICT_LATE_PREEMPTED] = "preempted",
        [VERDICT_LATE_BUSY] = "busy",
    };
    _Static_assert(LL_ARRAY_LEN(names) == VERDICT_LATE_CAUSE_COUNT, "a name for each cause");
    return (unsigned)c < VERDICT_LATE_CAUSE_COUNT ? names[c] : "none";
}

enum verdict_late_cause verdict_late_cause_from_name(const char *name)
{
    for (int c = 0; name && c < VERDICT_LATE_CAUSE_COUNT; c++)
        if (strcmp(name, verdict_late_cause_name((enum verdict_late_cause)c)) == 0)
            return (enum verdict_late_cause)c;
    return VERDICT_LATE_NONE;
}

/* The reason below the headline says the detail (whose(), or the sweep's
 * per-step words); the headline only whose fault it was, and blames the
 * generator only when it was busy: a run the OS stopped for 300 ms used
 * to read "the load generator could not keep its schedule" above "the OS
 * or VM did not run it in time (not the generator's load)". */
const char *verdict_invalid_headline(enum verdict_late_cause c)
{
    switch (c) {
    case VERDICT_LATE_ASLEEP:
    case VERDICT_LATE_PREEMPTED: return "the host (OS or VM) did not run the client on schedule";
    case VERDICT_LATE_BUSY: return "the load generator was too busy to keep the schedule";
    case VERDICT_LATE_NONE:
    case VERDICT_LATE_CAUSE_COUNT: break;
    }
    return "the client could not keep the schedule";
}

/* Whose lateness, as a clause (verdict_late_cause): the OS's or VM's when
 * at least half the late sends came due while the worker slept and it
 * woke late, or when the awake worker used little CPU yet was switched
 * out against its will; else the generator's own limit. */
static void whose(const struct verdict_input *in, char *buf, size_t len)
{
    uint64_t n = in->late_sends, a = in->late_asleep;
    char cpu[16], wall[16];
    ll_fmt_duration(in->cpu_ns, cpu, sizeof cpu);
    ll_fmt_duration(in->wall_ns, wall, sizeof wall);
    switch (verdict_late_cause(n, a, in->cpu_ns, in->wall_ns, in->invol_switches)) {
    case VERDICT_LATE_ASLEEP:
        snprintf(buf, len,
                 "%llu of the %llu sends later than 1ms came due while the worker slept, and "
                 "it woke late: the OS or VM did not run it in time (not the generator's load)",
                 (unsigned long long)a, (unsigned long long)n);
        return;
    case VERDICT_LATE_PREEMPTED:
        snprintf(buf, len,
                 "preempted by the OS (the host's fault), not busy: awake when %llu of the %llu "
                 "sends later than 1ms came due, the worker used %s of CPU in %s and was "
                 "switched out %llu times against its will",
                 (unsigned long long)(n - a), (unsigned long long)n, cpu, wall,
                 (unsigned long long)in->invol_switches);
        return;
    case VERDICT_LATE_BUSY:
    case VERDICT_LATE_NONE:
    case VERDICT_LATE_CAUSE_COUNT: break;
    }
    if (in->wall_ns > 0)
        snprintf(buf, len,
                 "the generator could not keep %s (busy when %llu of the %llu sends later "
                 "than 1ms came due; its workers used %s of CPU in %s)",
                 in->kept, (unsigned long long)(n - a), (unsigned long long)n, cpu, wall);
    else
        snprintf(buf, len,
                 "the generator could not keep %s (busy when %llu of the %llu sends later "
                 "than 1ms came due)",
                 in->kept, (unsigned long long)(n - a), (unsigned long long)n);
}

/* "schedule lateness p99 <late> moved <what> by <moved><how>max(1ms, <tol>%
 * of <value>))", then ": <who>" when whose is known. how is " (over " for
 * the INVALID reason, ", within the tolerance (" for the warning. */
static void say_move(char *buf, size_t len, const char *late, const struct verdict_move *m,
                     double tol, const char *how, const char *who)
{
    char mv[16], val[16];
    ll_fmt_duration(m->moved_ns, mv, sizeof mv);
    ll_fmt_duration(m->value_ns, val, sizeof val);
    snprintf(buf, len, "schedule lateness p99 %s moved %s by %s%smax(1ms, %g%% of %s))%s%s", late,
             m->what, mv, how, 100 * tol, val, who[0] ? ": " : "", who);
}

void verdict_latencies(struct verdict_input *in, const struct stats *s)
{
    in->ttft = s->ttft;
    in->e2e = s->e2e;
    in->ttft_ontime = s->late_known ? s->ttft_ontime : NULL;
    in->e2e_ontime = s->late_known ? s->e2e_ontime : NULL;
    in->late_ok = s->late_known ? s->late_ok : NULL;
    in->n_late_ok = s->n_late_ok;
}

int verdict_judge(const struct verdict_input *in, struct verdict *out)
{
    memset(out, 0, sizeof *out);
    double tol = in->tolerance > 0 ? in->tolerance : VERDICT_TOLERANCE_DEFAULT;
    uint64_t p99 = pct_or_0(in->lateness, 99);
    out->lateness_p99_ns = p99;
    int lone = 0;
    int moves = judge_moves(in, tol, out, &lone);
    int no_hists = !in->ttft || !in->ttft_ontime || !in->e2e || !in->e2e_ontime;
    out->cause = verdict_late_cause(in->late_sends, in->late_asleep, in->cpu_ns, in->wall_ns,
                                    in->invol_switches);
    char l[16], who[256] = "";
    ll_fmt_duration(p99, l, sizeof l);
    if (in->kept != NULL && (p99 > VERDICT_LATE_NS || lone))
        whose(in, who, sizeof who);

    if (moves == 1 || (no_hists && p99 > VERDICT_LATE_NS)) {
        out->invalid = 1;
        if (moves != 1) {
            snprintf(out->reason, sizeof out->reason, "schedule lateness p99 %s > 1ms%s%s", l,
                     who[0] ? ": " : "", who);
            return 1;
        }
        say_move(out->reason, sizeof out->reason, l, &out->worst, tol, " (over ", who);
        return 1;
    }
    if (in->check_achieved && in->scheduled &&
        (double)in->sent_in_window < VERDICT_ACHIEVED_MIN * (double)in->scheduled) {
        out->invalid = 1;
        snprintf(out->reason, sizeof out->reason,
                 "achieved send rate %.1f%% of offered (< 99%%): the generator fell behind",
                 100.0 * (double)in->sent_in_window / (double)in->scheduled);
        return 1;
    }
    if (lone) {
        out->warned = 1;
        const struct verdict_move *m = &out->worst;
        char late[16], mv[16], val[16], lim[16];
        ll_fmt_duration(out->lone_late_ns, late, sizeof late);
        ll_fmt_duration(m->moved_ns, mv, sizeof mv);
        ll_fmt_duration(m->value_ns, val, sizeof val);
        ll_fmt_duration(m->limit_ns, lim, sizeof lim);
        if (lone == 1)
            snprintf(out->warning, sizeof out->warning,
                     "one send %s late moved %s by %s (over max(1ms, %g%% of %s)), but no other "
                     "was later than %s: one late send is not a finding about the run%s%s",
                     late, m->what, mv, 100 * tol, val, lim, who[0] ? "; " : "", who);
        else
            snprintf(out->warning, sizeof out->warning,
                     "one send %s late moved %s by %s (over max(1ms, %g%% of %s)), and with it "
                     "%s late every move would be within its limit: one late send is not a "
                     "finding about the run%s%s",
                     late, m->what, mv, 100 * tol, val, lim, who[0] ? "; " : "", who);
        return 0;
    }
    if (p99 > VERDICT_LATE_NS) {
        out->warned = 1;
        if (moves < 0) {
            snprintf(out->warning, sizeof out->warning,
                     "schedule lateness p99 %s (too few ok requests to judge what it moved)%s%s", l,
                     who[0] ? ": " : "", who);
            return 0;
        }
        if (out->worst.moved_ns == 0) {
            snprintf(out->warning, sizeof out->warning,
                     "schedule lateness p99 %s moved none of TTFT and E2E p50/p90/p99%s%s", l,
                     who[0] ? ": " : "", who);
            return 0;
        }
        say_move(out->warning, sizeof out->warning, l, &out->worst, tol, ", within the tolerance (",
                 who);
    }
    return 0;
}

int verdict_cache_carryover(double reported_share, double implied_share, uint64_t reported,
                            char *buf, size_t len)
{
    if (len)
        buf[0] = '\0';
    if (!isfinite(reported_share) || !isfinite(implied_share) ||
        reported < VERDICT_CACHE_MIN_REQUESTS ||
        reported_share <= implied_share + VERDICT_CACHE_MARGIN)
        return 0;
    snprintf(buf, len,
             "the server served %.1f%% of the prompt tokens from its cache, the workload's "
             "prefixes share %.1f%%: the server remembers an earlier run that sent these "
             "prompts (the same --seed and --prompt-salt): use --prompt-salt auto (the default), "
             "or restart it",
             100 * reported_share, 100 * implied_share);
    return 1;
}
