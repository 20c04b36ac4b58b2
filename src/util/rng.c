/* rng.c: xoshiro256** (Blackman and Vigna, 2018) with splitmix64 seeding,
 * and the normal, exponential and gamma variates built on it. */
#include "util/rng.h"

#include <math.h>

static uint64_t rotl(uint64_t x, int k)
{
    return (x << k) | (x >> (64 - k));
}

void rng_seed(struct rng *r, uint64_t seed, uint64_t stream)
{
    /* mix64 is a bijection, so for a fixed seed, x is a bijection of
     * stream: two streams of one seed never start splitmix64 at the same
     * point. Then four splitmix64 outputs fill the state, as the xoshiro
     * authors recommend. */
    uint64_t x = rng_mix64(rng_mix64(seed ^ 0x6a09e667f3bcc909ULL) ^ stream);
    for (int i = 0; i < 4; i++)
        r->s[i] = rng_splitmix64(&x);
    if ((r->s[0] | r->s[1] | r->s[2] | r->s[3]) == 0)
        r->s[0] = 1; /* the one state xoshiro cannot leave */
}

uint64_t rng_next(struct rng *r)
{
    uint64_t *s = r->s;
    uint64_t result = rotl(s[1] * 5, 7) * 9;
    uint64_t t = s[1] << 17;
    s[2] ^= s[0];
    s[3] ^= s[1];
    s[1] ^= s[2];
    s[0] ^= s[3];
    s[2] ^= t;
    s[3] = rotl(s[3], 45);
    return result;
}

double rng_uniform(struct rng *r)
{
    /* 52 bits, not 53: with 53, (2^53 - 1 + 0.5) / 2^53 rounds to 1.0. */
    return ((double)(rng_next(r) >> 12) + 0.5) * 0x1.0p-52;
}

double rng_normal(struct rng *r)
{
    double u1 = rng_uniform(r), u2 = rng_uniform(r);
    return sqrt(-2.0 * log(u1)) * cos(2.0 * M_PI * u2);
}

double rng_exponential(struct rng *r, double mean)
{
    if (!(mean > 0.0))
        return 0.0;
    return -mean * log(rng_uniform(r));
}

double rng_gamma(struct rng *r, double shape, double scale)
{
    if (!(shape > 0.0) || !(scale > 0.0) || !isfinite(shape) ||
        !isfinite(scale))
        return 0.0;
    double boost = 1.0;
    if (shape < 1.0) {
        /* Gamma(a) = Gamma(a + 1) * U^(1/a). Taken in logs so a tiny
         * shape does not underflow pow before the multiplication. */
        boost = exp(log(rng_uniform(r)) / shape);
        shape += 1.0;
    }
    double d = shape - 1.0 / 3.0;
    double c = 1.0 / sqrt(9.0 * d);
    for (;;) {
        double x, v;
        do {
            x = rng_normal(r);
            v = 1.0 + c * x;
        } while (v <= 0.0);
        v = v * v * v;
        double u = rng_uniform(r);
        if (u < 1.0 - 0.0331 * x * x * x * x)
            return d * v * boost * scale;
        if (log(u) < 0.5 * x * x + d * (1.0 - v + log(v)))
            return d * v * boost * scale;
    }
}
