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
 * 1.7 ms move of a 29 ms p90). Sets out->worst to the move that
 * makes the point INVALID, else the move nearest its limit, with its
 * sends_past_limit; returns 1 when a move counts over its limit, 0 when
 * none does, -1 when nothing could be judged (no histograms given, no ok
 * request, or too few for any percentile). *lone is set to 1 when a move
 * was over its limit by one send alone. */
static int judge_moves(const struct verdict_input *in, double tol, struct verdict *out, int *lone)
{
    static const char *const names[2][3] = {{"TTFT p50", "TTFT p90", "TTFT p99"},
                                            {"E2E p50", "E2E p90", "E2E p99"}};
    static const double q[3] = {50, 90, 99};
    const struct hist *meas[2] = {in->ttft, in->e2e};
    const struct hist *ontime[2] = {in->ttft_ontime, in->e2e_ontime};
    double worst = -1, worst_over = -1;
    struct verdict_move over_move = {0};
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
            if (mv.sends_past_limit < 2) {
                *lone = 1;
            } else if (share > worst_over) {
                worst_over = share;
                over_move = mv;
            }
        }
    }
    if (worst_over >= 0) {
        out->worst = over_move;
        return 1;
    }
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
        ll_fmt_duration(hist_max(in->lateness), late, sizeof late);
        ll_fmt_duration(m->moved_ns, mv, sizeof mv);
        ll_fmt_duration(m->value_ns, val, sizeof val);
        ll_fmt_duration(m->limit_ns, lim, sizeof lim);
        snprintf(out->warning, sizeof out->warning,
                 "one send %s late moved %s by %s (over max(1ms, %g%% of %s)), but no other "
                 "was later than %s: one late send is not a finding about the run%s%s",
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
