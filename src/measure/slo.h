/* slo.h: service-level objectives and whether a request met them.
 *
 * Goodput counts requests that completed ok AND met every threshold that is
 * set; errors and timeouts are misses, and a request the client cancelled
 * is one only when it had already missed (slo_judge). docs/metrics.md. */
#ifndef LL_SLO_H
#define LL_SLO_H

#include <stddef.h>
#include <stdint.h>

#include "measure/record.h"

struct slo {
    uint64_t ttft_ns;   /* max TTFT (first - sched); 0 = no threshold */
    uint64_t tpot_ns;   /* max TPOT; 0 = no threshold */
    uint64_t e2e_ns;    /* max E2E (end - sched); 0 = no threshold */
};

/* The SLO that applies to a traffic class: own when any of its thresholds
 * is set, else fallback (the run's or the sweep's). The one home of that
 * rule; run, sweep and the report all call it. Returns one of the two. */
const struct slo *slo_or(const struct slo *own, const struct slo *fallback);

/* slo_judge's verdict for a request the client cancelled before it had
 * shown a miss: neither met nor missed, and out of attainment's count. */
#define SLO_UNJUDGED (-1)

/* How r fares against s: 1 met (slo_met), 0 missed, or SLO_UNJUDGED when
 * r is a client cancellation (kind cancelled: the workload's, or a stop
 * signal's) that had not yet shown a miss. A cancelled request misses
 * only what it had already missed: a TTFT threshold its first token came
 * after, or that passed with no token before the cancellation; a TPOT
 * over the threshold over the tokens it got; an E2E threshold that passed
 * before the cancellation. It meets only what was already decided: an SLO
 * of TTFT alone, its first token in time. Anything else it might have met
 * or missed had it gone on, and the client, not the server, ended it (a
 * workload with 30% cancellations could otherwise never reach a 99%
 * attainment). */
int slo_judge(const struct slo *s, const struct record *r);

/* How r fares against the SLO that applies to it in a run or step that
 * has an SLO somewhere (any: the command line's, or a traffic class's
 * own): slo is r's class's (slo_or of its own and the command line's),
 * else the command line's; slo_judge's verdict. A request whose class has
 * none, in a run with no --slo, meets it by completing ok; with no SLO
 * anywhere (any 0), nothing meets (0). The whole run's goodput and
 * attainment use it, as a sweep step's do (docs/sweep.md, "A request
 * meets the SLO of its class"). */
int slo_judge_any(const struct slo *slo, int any, const struct record *r);

/* Parse "ttft=500ms,tpot=50ms,e2e=10s" (any subset, any order; a bare
 * number is milliseconds; each name once, no trailing comma). Returns 0,
 * or LL_E_INVAL with a one-line reason naming the bad part in err. */
int slo_parse(const char *spec, struct slo *out, char *err, size_t errlen);

/* 1 when at least one threshold is set. */
int slo_is_set(const struct slo *s);

/* 1 when r is ok and meets every set threshold. A request with fewer than
 * two output tokens has no TPOT and meets a TPOT threshold. */
int slo_met(const struct slo *s, const struct record *r);

/* Write the canonical spec ("ttft=500ms,e2e=10s") into buf, each threshold
 * in the largest unit that keeps it whole (s, ms, us, ns): slo_parse reads
 * it back to the same thresholds. */
void slo_format(const struct slo *s, char *buf, size_t len);

#endif
