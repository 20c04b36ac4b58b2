/* tokenizer.h: the deterministic tokenizer of `llmload sim`.
 *
 * It is not a real BPE tokenizer; it is a rule simple enough that a client
 * can build a prompt of an exact token count by hand (docs/sim-engine.md):
 *
 *   - Text is split into words at whitespace (space, \t, \n, \v, \f, \r).
 *     Runs of whitespace count as one separator; leading and trailing
 *     whitespace count for nothing.
 *   - A word of n bytes is ceil(n / 4) tokens: its bytes in pieces of 4,
 *     the last piece shorter. "cat" is 1 token, "abcdefghij" is 3.
 *
 * So "hello world" is 2 + 2 = 4 tokens (hell|o worl|d), and a prompt of N
 * tokens is simply N words of 1-4 letters. Bytes are bytes: UTF-8 is not
 * decoded, so a non-ASCII word counts by its byte length. */
#ifndef LL_SIM_TOKENIZER_H
#define LL_SIM_TOKENIZER_H

#include <stddef.h>
#include <stdint.h>

/* Most bytes one output token takes: a space and up to 4 letters. */
#define TOKENIZER_OUTPUT_TOKEN_MAX_BYTES 5

/* Number of tokens in text[0, len) by the rules above. text need not be
 * NUL-terminated and may be NULL when len is 0. Counts saturate at
 * UINT32_MAX (a text of 16 GiB). */
uint32_t tokenizer_count(const char *text, size_t len);

/* Cumulative prefix hashes for the prefix cache. Walks the tokens of
 * text[0, len) and, at the end of each FULL block of block_tokens tokens,
 * writes the 64-bit hash of every token from the start of the text to that
 * point into out[i] (block i covers tokens [0, (i+1) * block_tokens)).
 * The hash (FNV-1a) covers each token's bytes and whether the token starts
 * a word, so two texts have equal hashes for block i exactly when their
 * first (i+1) * block_tokens tokens are equal (up to 64-bit collisions);
 * the kind and amount of whitespace between words does not matter.
 * A partial last block gets no hash. Writes at most max_out hashes (out
 * may be NULL when max_out is 0) and returns the number written.
 * block_tokens 0 writes nothing and returns 0. */
uint32_t tokenizer_block_hashes(const char *text, size_t len, uint32_t block_tokens,
                                uint64_t *out, uint32_t max_out);

/* Token IDs the sim accepts in a prompt given as IDs: 0 to
 * TOKENIZER_ID_MAX, a vocabulary of 2^18 = 262144 ids, as large as the
 * largest common vocabularies (Gemma 3's 262144), so any real model's IDs
 * are accepted and an ID from a corrupted body is still caught. */
#define TOKENIZER_ID_MAX 262143u

/* tokenizer_block_hashes for a prompt given as token IDs: ids[0, n) are
 * its n tokens (each ID one token, no tokenizing), and out[i] gets the hash
 * of ids [0, (i+1) * block_tokens). Two ID prompts have equal hashes for
 * block i exactly when their first (i+1) * block_tokens IDs are equal (up
 * to 64-bit collisions). Each ID is hashed as a header byte no text token
 * uses and its 4 bytes, little-endian, so an ID prompt never shares a
 * block with a text prompt. Same limits and return as
 * tokenizer_block_hashes (ids may be NULL when n is 0). */
uint32_t tokenizer_block_hashes_ids(const uint32_t *ids, size_t n, uint32_t block_tokens,
                                    uint64_t *out, uint32_t max_out);

/* The text of output token `index` (0-based) of the request whose output
 * is seeded by req_seed: a space, then 1 to 4 lowercase ASCII letters,
 * chosen deterministically from (req_seed, index). Concatenating tokens
 * 0..n-1 gives a text that tokenizer_count counts as exactly n tokens.
 * Writes the bytes into buf and, when there is room, a terminating NUL
 * (not counted). Returns the number of bytes written (2..5), or 0 when len
 * is below the token's length (buf of TOKENIZER_OUTPUT_TOKEN_MAX_BYTES + 1
 * bytes always suffices). */
size_t tokenizer_output_token(uint64_t req_seed, uint32_t index, char *buf, size_t len);

#endif
