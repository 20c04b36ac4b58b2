/* rng.h: the one random number generator: xoshiro256** seeded through
 * splitmix64, plus the few variates the workload needs.
 *
 * A generator is four words of state, embedded wherever it is used; there is
 * no global generator. rng_seed derives a generator from (seed, stream) so
 * that each scheduled request can draw from its own stream (stream = request
 * index) and get the same draws whatever order requests are made in, on
 * whichever machine runs them. Streams below 2^63 are for per-request
 * draws; streams from 2^63 up are reserved for schedule-wide generators
 * (arrival.h uses RNG_STREAM_ARRIVAL). Not thread-safe: one generator per
 * owner. */
#ifndef LL_RNG_H
#define LL_RNG_H

#include <stdint.h>

/* The stream rng_seed is given for the arrival process of a run. */
#define RNG_STREAM_ARRIVAL ((uint64_t)1 << 63)

struct rng {
    uint64_t s[4];
};

/* splitmix64's finaliser: a bijective, well-mixed function of one word,
 * for hashing a key into bits. */
static inline uint64_t rng_mix64(uint64_t z)
{
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
    return z ^ (z >> 31);
}

/* splitmix64: advances *x by the golden-ratio increment and returns
 * rng_mix64 of it. A one-word generator, good enough for seeding and for
 * the sim's own draws; rng_next for anything a measurement rests on. */
static inline uint64_t rng_splitmix64(uint64_t *x)
{
    return rng_mix64(*x += 0x9e3779b97f4a7c15ULL);
}

/* Seed r from (seed, stream). Every pair gives a different, reproducible
 * sequence; for a fixed seed, distinct streams never share a starting state.
 * Any values are valid, 0 included. Cost: a few multiplications (cheap
 * enough to call once per request). */
void rng_seed(struct rng *r, uint64_t seed, uint64_t stream);

/* The next 64 uniformly distributed bits. */
uint64_t rng_next(struct rng *r);

/* A uniform double in the open interval (0, 1): 52 random bits, offset by
 * half a step, so in [2^-53, 1 - 2^-53] and never 0 or 1 (safe to take
 * the log of u or of 1 - u). */
double rng_uniform(struct rng *r);

/* A standard normal variate (mean 0, SD 1), by Box-Muller; uses two
 * uniforms per call (the second normal of the pair is not kept). */
double rng_normal(struct rng *r);

/* An exponential variate with the given mean (> 0); one uniform per call.
 * mean <= 0 returns 0. */
double rng_exponential(struct rng *r, double mean);

/* A gamma variate with shape > 0 and scale > 0 (mean shape * scale,
 * variance shape * scale^2), by Marsaglia and Tsang's method; shape < 1
 * uses Gamma(shape + 1) * U^(1/shape). Non-positive or non-finite
 * arguments return 0. */
double rng_gamma(struct rng *r, double shape, double scale);

#endif
