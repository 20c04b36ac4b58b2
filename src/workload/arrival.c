/* arrival.c: constant, Poisson and gamma arrivals with linear ramps and a
 * rate switch, by time rescaling (see arrival.h). */
#include "workload/arrival.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

#include "util/util.h"

static const char *const kind_names[] = {"constant", "poisson", "gamma"};

const char *arrival_kind_name(enum arrival_kind k)
{
    if ((unsigned)k < LL_ARRAY_LEN(kind_names))
        return kind_names[k];
    return "unknown";
}

int arrival_parse_kind(const char *s, enum arrival_kind *out)
{
    for (size_t i = 0; i < LL_ARRAY_LEN(kind_names); i++) {
        if (strcmp(s, kind_names[i]) == 0) {
            *out = (enum arrival_kind)i;
            return 0;
        }
    }
    return LL_E_INVAL;
}

static int fail(char *err, size_t errlen, const char *what, double got,
                const char *expected)
{
    if (errlen)
        snprintf(err, errlen, "arrivals: %s: expected %s, got %g", what,
                 expected, got);
    return LL_E_INVAL;
}

int arrival_config_check(const struct arrival_config *c, char *err,
                         size_t errlen)
{
    if ((unsigned)c->kind >= LL_ARRAY_LEN(kind_names)) {
        if (errlen)
            snprintf(err, errlen, "arrivals: unknown kind %d (expected "
                     "constant, poisson or gamma)", (int)c->kind);
        return LL_E_INVAL;
    }
    if (!(c->rate_per_s >= 0 && c->rate_per_s <= ARRIVAL_RATE_MAX_PER_S))
        return fail(err, errlen, "rate", c->rate_per_s,
                    "a rate in [0, 1e9] per second");
    if (!(c->ramp_to_per_s >= 0 &&
          c->ramp_to_per_s <= ARRIVAL_RATE_MAX_PER_S))
        return fail(err, errlen, "ramp target rate", c->ramp_to_per_s,
                    "a rate in [0, 1e9] per second (0 = no ramp)");
    if (c->ramp_to_per_s > 0 && c->ramp_ns == 0)
        return fail(err, errlen, "ramp length", 0.0,
                    "a ramp longer than 0 ns when ramping");
    if (c->ramp_to_per_s == 0 && c->rate_per_s == 0)
        return fail(err, errlen, "rate", 0.0,
                    "a rate > 0 per second (0 only when ramping up)");
    if (!(c->switch_to_per_s >= 0 && c->switch_to_per_s <= ARRIVAL_RATE_MAX_PER_S))
        return fail(err, errlen, "switch rate", c->switch_to_per_s,
                    "a rate in [0, 1e9] per second (0 = no switch)");
    if (c->switch_to_per_s > 0 && c->switch_at_ns == 0)
        return fail(err, errlen, "switch time", 0.0,
                    "a switch later than 0 ns (to start at a rate, give that rate)");
    if (c->kind == ARRIVAL_GAMMA &&
        !(c->burstiness > 0 && c->burstiness <= ARRIVAL_BURSTINESS_MAX))
        return fail(err, errlen, "burstiness", c->burstiness,
                    "a gamma shape k in (0, 1e6] (1 = Poisson)");
    return 0;
}

void arrival_init(struct arrival *a, const struct arrival_config *c)
{
    memset(a, 0, sizeof(*a));
    a->cfg = *c;
    rng_seed(&a->rng, c->seed, RNG_STREAM_ARRIVAL);
    a->r0_per_ns = c->rate_per_s / 1e9;
    /* A rate of 0 at the start offers nothing there: the first constant
     * arrival is where one arrival is due, not at 0 (L^-1(0)). */
    a->constant_base = c->rate_per_s > 0 ? 0 : 1;
    a->r1_per_ns = a->r0_per_ns;
    if (c->ramp_to_per_s > 0 && c->ramp_ns > 0) {
        a->r1_per_ns = c->ramp_to_per_s / 1e9;
        a->ramp_ns = (double)c->ramp_ns;
        a->half_slope = (a->r1_per_ns - a->r0_per_ns) / (2.0 * a->ramp_ns);
        a->ramp_area = 0.5 * (a->r0_per_ns + a->r1_per_ns) * a->ramp_ns;
    }
    if (c->switch_to_per_s > 0 && c->switch_at_ns > 0) {
        double t = (double)c->switch_at_ns;
        a->r2_per_ns = c->switch_to_per_s / 1e9;
        a->switch_ns = t;
        /* L(t) before the switch: inside the ramp r0 t + h t^2, after it
         * the ramp's area plus the flat part. Without a ramp this is
         * rate x t, computed in seconds so that round rates give round
         * areas (constant arrivals then land exactly on the switch). */
        if (a->ramp_ns > 0 && t < a->ramp_ns)
            a->switch_area = a->r0_per_ns * t + a->half_slope * t * t;
        else if (a->ramp_ns > 0)
            a->switch_area = a->ramp_area + (t - a->ramp_ns) * a->r1_per_ns;
        else
            a->switch_area = c->rate_per_s * (t / 1e9);
    }
}

/* The time (ns) at which the cumulative intensity reaches s >= 0. In the
 * ramp, r0 t + h t^2 = s; the root is written 2s / (r0 + sqrt(r0^2 + 4hs))
 * so it stays accurate when h is tiny or negative, and is 0/0-free except
 * at s = 0. */
static double arrival_time_ns(const struct arrival *a, double s)
{
    double t;
    if (s <= 0)
        return 0;
    if (a->switch_ns > 0 && s >= a->switch_area)
        return a->switch_ns + (s - a->switch_area) / a->r2_per_ns;
    if (a->ramp_ns > 0 && s < a->ramp_area) {
        double disc = a->r0_per_ns * a->r0_per_ns + 4.0 * a->half_slope * s;
        t = 2.0 * s / (a->r0_per_ns + sqrt(disc > 0 ? disc : 0));
        t = t < a->ramp_ns ? t : a->ramp_ns;
    } else {
        t = a->ramp_ns + (s - a->ramp_area) / a->r1_per_ns;
    }
    /* Rounding must not carry an arrival before the switch past it. */
    return a->switch_ns > 0 && t > a->switch_ns ? a->switch_ns : t;
}

/* L(t) before any switch, t in seconds, from c's rates per second:
 * round rates give round counts (a ramp from 10/s to 50/s over 2 s holds
 * 60, not 59.999...). */
static double area_s(const struct arrival_config *c, double t)
{
    double r0 = c->rate_per_s;
    if (c->ramp_to_per_s <= 0 || c->ramp_ns == 0)
        return r0 * t;
    double ramp = (double)c->ramp_ns / 1e9, r1 = c->ramp_to_per_s;
    if (t < ramp)
        return r0 * t + (r1 - r0) * t * t / (2 * ramp);
    return (r0 + r1) * ramp / 2 + (t - ramp) * r1;
}

double arrival_expected(const struct arrival *a, uint64_t t_ns)
{
    const struct arrival_config *c = &a->cfg;
    double t = (double)t_ns / 1e9;
    if (c->switch_to_per_s > 0 && c->switch_at_ns > 0 && t_ns >= c->switch_at_ns) {
        double at = (double)c->switch_at_ns / 1e9;
        return area_s(c, at) + (t - at) * c->switch_to_per_s;
    }
    return area_s(c, t);
}

uint64_t arrival_next_ns(struct arrival *a)
{
    switch (a->cfg.kind) {
    case ARRIVAL_CONSTANT: a->pos = a->constant_base + (double)a->index; break;
    case ARRIVAL_POISSON:
        a->pos -= log(rng_uniform(&a->rng));
        break;
    case ARRIVAL_GAMMA: {
        double k = a->cfg.burstiness;
        a->pos += rng_gamma(&a->rng, k, 1.0 / k);
        break;
    }
    }
    a->index++;
    double t = arrival_time_ns(a, a->pos);
    if (!(t < 1.8e19))
        return UINT64_MAX;
    return (uint64_t)llround(t);
}
