/* synthprompt.c: the synthetic prompt text. See synthprompt.h. */
#include "workload/synthprompt.h"

#include "util/rng.h"

/* Stream bases: prefix text (schedule-wide, so from 2^63 up but never
 * RNG_STREAM_ARRIVAL itself) and per-request filler (below 2^63, apart
 * from workload.c's base). */
#define WL_PREFIX_STREAM_BASE (RNG_STREAM_ARRIVAL | 0x5046000000000000ULL)
#define WL_FILLER_STREAM_BASE 0x464C000000000000ULL
/* Base-36 digits in a nonce (36^13 > 2^64) and in a prefix tag (36^7 >
 * 2^32; ids are taken modulo 2^32 for the tag, the body depends on all
 * 64 bits). */
#define WL_NONCE_DIGITS 13
#define WL_TAG_DIGITS 7

/* 64 common words of 2 to 4 lowercase letters (one token each on the sim),
 * by length: 15, 20 and 29 of them. */
static const char *const wl_words_2[] = {
    "of", "to", "in", "is", "it", "as", "be", "by", "on", "he", "or", "at", "an", "we", "us",
};
static const char *const wl_words_3[] = {
    "the", "and", "for", "was", "not", "are", "his", "but", "one", "all",
    "can", "her", "has", "use", "two", "how", "way", "new", "any", "day",
};
static const char *const wl_words_4[] = {
    "that", "with", "this", "from", "have", "they", "more", "will", "some", "time",
    "what", "when", "make", "like", "into", "year", "your", "good", "just", "over",
    "also", "back", "work", "well", "even", "want", "give", "most", "tree",
};
static const char *const *const wl_words_by_len[3] = {wl_words_2, wl_words_3, wl_words_4};
static const uint32_t wl_words_len_n[3] = {15, 20, 29};

struct pbuf {
    char *buf;
    size_t len;
    size_t at;          /* bytes needed so far */
    uint32_t words;     /* words written so far */
    uint32_t by_len[3]; /* list words written so far, by length class */
    uint32_t from;      /* words before this one are drawn but not written */
};

static void pb_word(struct pbuf *b, const char *w, size_t n)
{
    if (b->words < b->from) {
        b->words++;
        return;
    }
    if (b->words > b->from) {
        if (b->at < b->len)
            b->buf[b->at] = ' ';
        b->at++;
    }
    for (size_t i = 0; i < n; i++, b->at++) {
        if (b->at < b->len)
            b->buf[b->at] = w[i];
    }
    b->words++;
}

/* Write the `digits` base-36 digits of v, least significant first, as
 * words of 4 (the last shorter), stopping when b->words reaches limit. */
static void pb_base36(struct pbuf *b, uint64_t v, int digits, uint32_t limit)
{
    static const char b36[] = "0123456789abcdefghijklmnopqrstuvwxyz";
    char d[16];
    for (int i = 0; i < digits; i++) {
        d[i] = b36[v % 36];
        v /= 36;
    }
    for (int i = 0; i < digits && b->words < limit; i += 4)
        pb_word(b, d + i, (size_t)(digits - i < 4 ? digits - i : 4));
}

/* Words from the list up to limit. Which word is random; its length is
 * not: each word takes the length class furthest behind its share of the
 * list (15:20:29), so every stretch of the prompt has the list's mix of 2-,
 * 3- and 4-letter words within one word per class. A tokenizer that counts
 * by letters (a small vocabulary, or any BPE on rarer words) then sees the
 * same tokens per word in every prompt, and a calibrated prompt's length
 * is off by about one word, not by the square root of its length. */
static void pb_random_words(struct pbuf *b, struct rng *r, uint32_t limit)
{
    while (b->words < limit) {
        uint64_t n = (uint64_t)b->by_len[0] + b->by_len[1] + b->by_len[2] + 1;
        int cls = 0;
        int64_t best = INT64_MIN;
        for (int k = 0; k < 3; k++) {
            /* deficit * 64: share * n - written */
            int64_t deficit = (int64_t)(wl_words_len_n[k] * n) - 64 * (int64_t)b->by_len[k];
            if (deficit > best) {
                best = deficit;
                cls = k;
            }
        }
        uint32_t pick = (uint32_t)(((rng_next(r) >> 32) * wl_words_len_n[cls]) >> 32);
        b->by_len[cls]++;
        pb_word(b, wl_words_by_len[cls][pick], (size_t)cls + 2);
    }
}

/* splitmix64's finaliser: a bijection of 64-bit values. */
static uint64_t mix64(uint64_t z)
{
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ULL;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBULL;
    return z ^ (z >> 31);
}

/* The prompt is: [tag body...] (prefix_tokens words, shared) nonce filler.
 * The tag is prefix_id's low 32 bits, plus, under a salted seed
 * (WL_SEED_SALTED), a 32-bit offset drawn from the seed (so another salt's
 * prompts share not even the tag, and distinct groups keep distinct tags),
 * in 7 base-36 digits, least significant first, so its
 * first word alone tells 36^4 groups apart; the body is drawn from a
 * generator seeded by (seed, prefix_id), so it is the same bytes in every
 * request of the group. The nonce is a bijection of index (for a fixed
 * seed) written as 13 fixed-width digits, so two requests of one run never
 * share it, and its 4 words never blur into the filler. */
size_t wl_prompt_build(uint64_t seed, uint64_t index, uint32_t n_tokens, int64_t prefix_id,
                       uint32_t prefix_tokens, char *buf, size_t len)
{
    return wl_prompt_build_from(seed, index, n_tokens, prefix_id, prefix_tokens, 0, buf, len);
}

size_t wl_prompt_build_from(uint64_t seed, uint64_t index, uint32_t n_tokens, int64_t prefix_id,
                            uint32_t prefix_tokens, uint32_t from_word, char *buf, size_t len)
{
    struct pbuf b = {.buf = buf, .len = len, .from = from_word};
    struct rng r;

    if (prefix_id >= 0 && prefix_tokens > 0) {
        uint32_t l = prefix_tokens < n_tokens ? prefix_tokens : n_tokens;
        uint64_t tag = (uint64_t)prefix_id & 0xFFFFFFFFULL; /* + below 2^32: 7 digits hold it */
        if (seed & WL_SEED_SALTED)
            tag += mix64(seed ^ 0x746167ULL) & 0xFFFFFFFFULL;
        pb_base36(&b, tag, WL_TAG_DIGITS, l);
        rng_seed(&r, seed, WL_PREFIX_STREAM_BASE ^ (uint64_t)prefix_id);
        pb_random_words(&b, &r, l);
    }
    uint32_t nonce_end = b.words + 4 < n_tokens ? b.words + 4 : n_tokens;
    pb_base36(&b, mix64(index + mix64(seed ^ 0x6E6F6E6365ULL)), WL_NONCE_DIGITS, nonce_end);
    rng_seed(&r, seed, WL_FILLER_STREAM_BASE + index);
    pb_random_words(&b, &r, n_tokens);
    return b.at;
}
