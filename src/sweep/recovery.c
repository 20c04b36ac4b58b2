/* recovery.c: the recovery step's measure (see sweep.h,
 * sweep_recovery_measure; docs/sweep.md, "Recovery"): when, after an
 * overload, the requests met the SLO again. */
#include <stdlib.h>

#include "sweep/sweep.h"
#include "util/util.h"

/* Sort (sched, met) pairs by sched: a small insertion-merge via index. */
struct met_pair {
    uint64_t sched_ns;
    unsigned char met;
};

static int cmp_pair(const void *a, const void *b)
{
    const struct met_pair *x = a, *y = b;
    return (x->sched_ns > y->sched_ns) - (x->sched_ns < y->sched_ns);
}

void sweep_recovery_measure(uint64_t *sched_ns, unsigned char *met, size_t n, uint64_t from_ns,
                            uint64_t to_ns, uint64_t min_tail_ns, struct sweep_recovery *out)
{
    out->first_miss_ns = out->last_miss_ns = LL_NO_TIME;
    out->back_ns = out->recovery_ns = LL_NO_TIME;
    if (n > 0) {
        struct met_pair *p = ll_malloc(n * sizeof *p);
        for (size_t i = 0; i < n; i++) {
            p[i].sched_ns = sched_ns[i];
            p[i].met = met[i];
        }
        qsort(p, n, sizeof *p, cmp_pair);
        for (size_t i = 0; i < n; i++) {
            sched_ns[i] = p[i].sched_ns;
            met[i] = p[i].met;
        }
        free(p);
    }
    size_t last = n;
    for (size_t i = 0; i < n; i++) {
        if (met[i])
            continue;
        if (out->first_miss_ns == LL_NO_TIME)
            out->first_miss_ns = sched_ns[i];
        out->last_miss_ns = sched_ns[i];
        last = i;
    }
    if (last == n) {
        out->back_ns = from_ns;
        out->recovery_ns = 0;
        return;
    }
    /* Back at the first request after the last miss, when the window
     * still has min_tail_ns after it (else a miss near the end, or a
     * backlog that outlasts the window, would pass for a recovery). */
    if (last + 1 < n && sched_ns[last + 1] < to_ns && to_ns - sched_ns[last + 1] >= min_tail_ns) {
        out->back_ns = sched_ns[last + 1];
        out->recovery_ns = out->back_ns > from_ns ? out->back_ns - from_ns : 0;
    }
}
