/* verdict.c: the self-check of a load point. See verdict.h. */
#include "measure/verdict.h"

#include <stdio.h>

#include "measure/hist.h"

int verdict_judge(const struct verdict_input *in, char *reason, size_t len)
{
    reason[0] = '\0';
    uint64_t p99 = in->lateness && hist_count(in->lateness) ? hist_percentile(in->lateness, 99)
                                                             : 0;
    if (p99 > VERDICT_LATE_NS) {
        char l[16];
        ll_fmt_duration(p99, l, sizeof l);
        if (in->kept == NULL) {
            snprintf(reason, len, "schedule lateness p99 %s > 1ms", l);
            return 1;
        }
        /* Whose lateness: a worker asleep when its sends came due, woken
         * late, was not run in time by the OS or the VM (steal, a stop, a
         * slow timer); a busy one is the generator's own limit. */
        uint64_t n = in->late_sends, a = in->late_asleep;
        if (n && 2 * a >= n)
            snprintf(reason, len,
                     "schedule lateness p99 %s > 1ms: %llu of the %llu sends later than 1ms "
                     "came due while the worker slept, and it woke late: the OS or VM did "
                     "not run it in time (not the generator's load)",
                     l, (unsigned long long)a, (unsigned long long)n);
        else
            snprintf(reason, len,
                     "schedule lateness p99 %s > 1ms: the generator could not keep %s "
                     "(busy when %llu of the %llu sends later than 1ms came due)",
                     l, in->kept, (unsigned long long)(n - a), (unsigned long long)n);
        return 1;
    }
    if (in->check_achieved && in->scheduled &&
        (double)in->sent_in_window < VERDICT_ACHIEVED_MIN * (double)in->scheduled) {
        snprintf(reason, len,
                 "achieved send rate %.1f%% of offered (< 99%%): the generator fell behind",
                 100.0 * (double)in->sent_in_window / (double)in->scheduled);
        return 1;
    }
    return 0;
}
