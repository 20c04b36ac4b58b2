/* arrival.h: open-loop arrival processes, generated lazily as absolute
 * offsets from the run start (memory does not grow with run length).
 *
 * Every process is built the same way, by time rescaling: unit-mean
 * increments are drawn in "cumulative intensity" space (expected arrivals
 * since the start) and mapped back to time through the inverse of
 *   L(t) = integral of rate(u) du over [0, t],
 * where the rate goes linearly from rate_per_s to ramp_to_per_s over
 * ramp_ns and then stays there, until an optional switch: from
 * switch_at_ns on the rate is switch_to_per_s (a step, which cuts a ramp
 * still under way). So constant, Poisson and gamma processes all follow a
 * ramp and a switch, and the count of arrivals in [0, t] has mean ~ L(t).
 *
 *   constant  increments exactly 1; the first arrival is at 0, the i-th
 *             (from 0) at L^-1(i), rounded to the nearest ns, recomputed
 *             from i each time so spacing never drifts. A ramp from 0
 *             has no arrival at 0, where its rate is 0: its i-th is at
 *             L^-1(i + 1) (0 to R over T: the first at T sqrt(2 / RT)).
 *   poisson   increments Exp(1); the first arrival is at L^-1(E1) (a
 *             Poisson process started at 0 has no arrival at 0).
 *   gamma     increments Gamma(k, 1/k): mean 1, CV 1/sqrt(k) (k =
 *             burstiness; k < 1 is burstier than Poisson, k = 1 is Poisson,
 *             k > 1 smoother). First arrival at L^-1(G1), like Poisson.
 *
 * The sequence is a pure function of the config (seed included): the same
 * config gives the same offsets on any machine, which is what lets shards
 * each take the arrivals whose index is i mod N. */
#ifndef LL_ARRIVAL_H
#define LL_ARRIVAL_H

#include <stddef.h>
#include <stdint.h>

#include "util/rng.h"

/* Largest rate accepted, per second (one arrival per nanosecond). */
#define ARRIVAL_RATE_MAX_PER_S 1e9
/* The largest gamma shape k (--burstiness): CV = 1/sqrt(k), 0.001 at most. */
#define ARRIVAL_BURSTINESS_MAX 1e6

enum arrival_kind { ARRIVAL_CONSTANT, ARRIVAL_POISSON, ARRIVAL_GAMMA };

struct arrival_config {
    enum arrival_kind kind;
    double rate_per_s;     /* rate at the start, arrivals per second, >= 0
                              (0 only when ramping up from nothing) */
    double burstiness;     /* gamma shape k, CV = 1/sqrt(k); k=1 is
                              Poisson. Ignored by constant and poisson. */
    double ramp_to_per_s;  /* rate at the end of the ramp; 0 = no ramp */
    uint64_t ramp_ns;      /* ramp length (usually the run duration) */
    uint64_t switch_at_ns; /* offset of the rate switch from the run start, ns */
    double switch_to_per_s;/* rate from switch_at_ns on, arrivals per second;
                              0 = no switch */
    uint64_t seed;         /* the run's seed; the arrival draws use stream
                              RNG_STREAM_ARRIVAL of it */
};

/* An arrival process. Embedded by the caller; fields are public for
 * inspection, but only arrival_init and arrival_next_ns change them. */
struct arrival {
    struct arrival_config cfg;
    struct rng rng;
    uint64_t index;        /* arrivals returned so far */
    double pos;            /* cumulative intensity of the last arrival,
                              in expected arrivals since the start */
    double constant_base;  /* the constant kind's first pos: 0, or 1
                              for a ramp from 0 (no arrival at 0) */
    double r0_per_ns;      /* rate at the start, per ns */
    double r1_per_ns;      /* rate after the ramp (= r0 without one) */
    double ramp_ns;        /* ramp length in ns; 0 = no ramp */
    double half_slope;     /* (r1 - r0) / (2 ramp_ns), per ns^2 */
    double ramp_area;      /* L(ramp_ns): expected arrivals in the ramp */
    double switch_ns;      /* switch offset in ns; 0 = no switch */
    double switch_area;    /* L(switch_ns): expected arrivals before the switch */
    double r2_per_ns;      /* rate after the switch, per ns */
};

/* Check c. Returns 0, or LL_E_INVAL with a one-line reason in err (errlen
 * bytes, may be 0) naming the field, the value and what was expected:
 * rates finite and in [0, ARRIVAL_RATE_MAX_PER_S]; the rate after the ramp
 * (or the only rate) > 0; ramp_ns > 0 when ramp_to_per_s > 0; the switch
 * rate in [0, 1e9] and, when it is > 0, switch_at_ns > 0; for gamma,
 * burstiness in (0, 1e6]. */
int arrival_config_check(const struct arrival_config *c, char *err,
                         size_t errlen);

/* Start the process described by c (which must pass arrival_config_check;
 * it is copied). */
void arrival_init(struct arrival *a, const struct arrival_config *c);

/* The offset from the run start, in ns, of the next arrival. Offsets are
 * nondecreasing (two can be equal when arrivals are closer than 1 ns).
 * See the top of this header for where each kind's first arrival lies.
 * Cost: one or two uniforms (poisson), a few (gamma), none (constant),
 * plus a square root while ramping. */
uint64_t arrival_next_ns(struct arrival *a);

/* L(t_ns): the expected arrivals of a's process in [0, t_ns], the
 * integral of its rate (the ramp's and the switch's included). A pure
 * function of a's config, whatever it has drawn. For a constant process
 * the i-th arrival (from 0) lands at L^-1(i), so [0, t) holds ceil(L(t));
 * in a ramp from 0 at L^-1(i + 1), so (0, t] holds floor(L(t)). */
double arrival_expected(const struct arrival *a, uint64_t t_ns);

/* Parse "constant", "poisson" or "gamma" into *out. Returns 0 or
 * LL_E_INVAL (*out untouched). */
int arrival_parse_kind(const char *s, enum arrival_kind *out);

/* The static name of a kind: "constant", "poisson", "gamma". */
const char *arrival_kind_name(enum arrival_kind k);

#endif
