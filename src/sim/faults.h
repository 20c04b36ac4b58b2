/* faults.h: the faults `llmload sim` injects on command, drawn per request
 * from a seeded generator in arrival order, so a run with the same seed and
 * the same arrival order injects the same faults into the same requests.
 *
 * Each request gets at most one fault: one uniform draw in [0, 1) picks a
 * kind by the cumulative fractions (in the order of enum fault_kind), so the
 * fractions of all kinds must add up to at most 1. */
#ifndef LL_SIM_FAULTS_H
#define LL_SIM_FAULTS_H

#include <stddef.h>
#include <stdint.h>

enum fault_kind {
    FAULT_NONE,
    FAULT_500,          /* answer 500 with a JSON error, no generation */
    FAULT_503,          /* answer 503 */
    FAULT_429,          /* answer 429 with Retry-After: 1 */
    FAULT_CUT,          /* close the TCP connection mid-stream */
    FAULT_MALFORMED,    /* one extra event whose data is not JSON */
    FAULT_SLOW_HEADERS, /* response headers (and generation) delayed */
    FAULT_ROLE_ONLY,    /* first chat chunk carries only the role */
    FAULT_REASONING,    /* first half of the tokens as reasoning_content */
    FAULT_KIND_COUNT,
};

struct faults {
    double fraction[FAULT_KIND_COUNT]; /* 0..1 each; sum <= 1 */
    uint64_t rng_state;                /* splitmix64 state */
    uint64_t drawn_total[FAULT_KIND_COUNT]; /* requests given each kind */
};

/* Start with no faults and the generator seeded from seed. */
void faults_init(struct faults *f, uint64_t seed);

/* Add one "KIND:FRACTION" spec (kinds: 500, 503, 429, cut, malformed,
 * slow-headers, role-only, reasoning; FRACTION in [0, 1]). A kind given
 * twice takes the last fraction. Returns 0, or LL_E_INVAL with a one-line
 * reason in err (unknown kind, bad fraction, total over 1). */
int faults_add_spec(struct faults *f, const char *spec, char *err, size_t errlen);

/* Draw the fault of the next arriving request (always exactly one draw). */
enum fault_kind faults_draw(struct faults *f);

/* The spec name of a kind ("cut", "slow-headers"); "none" for FAULT_NONE. */
const char *fault_kind_name(enum fault_kind k);

#endif
