/* synthprompt.h: the synthetic prompt text of a request, with its
 * shared prefix: words of the sim's tokenizer, one token each, a nonce
 * that makes each request's prompt unique, and prefixes shared by group
 * (docs/workload.md). A pure function of the seed and the request. */
#ifndef LL_SYNTHPROMPT_H
#define LL_SYNTHPROMPT_H

#include <stddef.h>
#include <stdint.h>

/* The top bit of a salted content seed (workload_content_seed with a
 * salt): under such a seed a shared prefix's tag moves too, so runs with
 * other salts share no word at all. A --seed is below 2^63, so an
 * unsalted seed never has it and builds the bytes it always built. */
#define WL_SEED_SALTED (1ULL << 63)

/* Build the prompt of request index: exactly n_tokens words of 1-4
 * lowercase ASCII letters or digits, separated by single spaces (one token
 * each under the sim's tokenizer, docs/workload.md). With prefix_id >= 0
 * the text begins with the shared prefix prefix_id: its first
 * min(prefix_tokens, n_tokens) words, identical bytes for every request
 * with the same (seed, prefix_id, prefix_tokens) and different for
 * different prefix_id (and, under another salted seed, from the first
 * word: WL_SEED_SALTED); then a nonce of up to 4 words unique to (seed,
 * index); then filler. With prefix_id < 0 the nonce comes first. The
 * nonce is whole (and the prompt unique) when at least 4 tokens remain
 * after the prefix. The prefix and the rest are separated by one space.
 * Writes at most len bytes (no NUL) into buf and returns the bytes needed;
 * when that exceeds len the caller retries with a bigger buffer (5 bytes
 * per token always suffice). The text needs no JSON escaping. */
size_t wl_prompt_build(uint64_t seed, uint64_t index, uint32_t n_tokens, int64_t prefix_id,
                       uint32_t prefix_tokens, char *buf, size_t len);

/* The same prompt's words from word from_word on (0-based; the first one
 * written without a leading space): wl_prompt_build writes words
 * [0, from_word), a space and this text. from_word 0 is wl_prompt_build. */
size_t wl_prompt_build_from(uint64_t seed, uint64_t index, uint32_t n_tokens, int64_t prefix_id,
                            uint32_t prefix_tokens, uint32_t from_word, char *buf, size_t len);

#endif
