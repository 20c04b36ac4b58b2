/* workload.c: request lengths and synthetic prompt text. */
#include "workload.h"

#include <math.h>

#include "rng.h"

/* Stream offset so workload draws never share an RNG stream with the
 * arrival process or other consumers seeded from the same seed. */
#define WORKLOAD_STREAM_BASE 0x5157000000000000ULL

static uint32_t draw_tokens(const struct dist *d, struct rng *r)
{
    double v = dist_sample(d, r);
    if (!(v >= 1.0))
        return 1;
    if (v > 4e9)
        return 4000000000u;
    return (uint32_t)llround(v);
}

void workload_spec(const struct workload *w, uint64_t index, struct req_spec *out)
{
    struct rng r;
    rng_seed(&r, w->seed, WORKLOAD_STREAM_BASE + index);
    out->index = index;
    out->prompt_tokens = draw_tokens(&w->prompt_tokens, &r);
    out->max_tokens = draw_tokens(&w->output_tokens, &r);
}

/* Filler words: short, lowercase, no escaping needed, one token each on
 * the sim. Real servers tokenize them too; `calibrate` (a later issue) fits
 * words-to-tokens for those. */
static const char *const filler[] = {
    "the", "of", "and", "to", "in", "is", "that", "for", "it", "as",
    "was", "with", "be", "by", "on", "not", "he", "this", "are", "or",
    "his", "from", "at", "have", "an", "but", "they", "one", "all", "we",
    "can", "her", "has", "more", "will", "some", "time", "what", "when", "make",
};

static size_t put(char *buf, size_t len, size_t at, const char *s, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        if (at + i < len)
            buf[at + i] = s[i];
    }
    return at + n;
}

size_t workload_prompt(uint64_t seed, uint64_t index, uint32_t n, char *buf, size_t len)
{
    static const char b36[] = "0123456789abcdefghijklmnopqrstuvwxyz";
    size_t at = 0;
    if (n == 0)
        return 0;
    /* The nonce: index and seed in base 36, split into 4-byte words so the
     * token count stays exact. It takes up to 4 tokens of the budget. */
    uint64_t v = index * 0x9E3779B97F4A7C15ULL ^ seed;
    char nonce[16];
    size_t nl = 0;
    do {
        nonce[nl++] = b36[v % 36];
        v /= 36;
    } while (v && nl < sizeof nonce);
    uint32_t words = 0;
    for (size_t i = 0; i < nl && words < n; i += 4, words++) {
        size_t w = (nl - i < 4 ? nl - i : 4);
        if (at)
            at = put(buf, len, at, " ", 1);
        at = put(buf, len, at, nonce + i, w);
    }
    uint64_t k = index;
    for (; words < n; words++) {
        const char *f = filler[k++ % (sizeof filler / sizeof filler[0])];
        size_t fl = 0;
        while (f[fl])
            fl++;
        at = put(buf, len, at, " ", 1);
        at = put(buf, len, at, f, fl);
    }
    return at;
}
