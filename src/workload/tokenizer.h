/* tokenizer.h: the deterministic tokenizers of `llmload sim`, which the
 * client uses too (datasets, replay) to count and build text the sim's way.
 *
 * Neither is a real BPE tokenizer; each is a rule simple enough that a
 * client can compute a prompt's count by hand (docs/sim-engine.md). The
 * server runs one, chosen by `llmload sim --tokenizer`:
 *
 * "words" (the default, TOKENIZER_WORDS):
 *   - Text is split into words at whitespace (space, \t, \n, \v, \f, \r).
 *     Runs of whitespace count as one separator; leading and trailing
 *     whitespace count for nothing.
 *   - A word of n bytes is ceil(n / 4) tokens: its bytes in pieces of 4,
 *     the last piece shorter. "cat" is 1 token, "abcdefghij" is 3.
 *   - No special tokens: a prompt is its text's tokens, nothing added.
 *   So "hello world" is 2 + 2 = 4 tokens (hell|o worl|d), and a prompt of N
 *   tokens is simply N words of 1-4 letters.
 *
 * "bytes2" (TOKENIZER_BYTES2), a tokenizer that is not one token per
 * synthetic word, with a template, like a real model's:
 *   - The same words, but a word of n bytes is ceil(n / 2) tokens (pieces
 *     of 2 bytes): "a" and "of" are 1, "the" and "tree" are 2, "hello" 3.
 *   - A completions prompt (and /tokenize with add_special) starts with one
 *     BOS token: TOKENIZER_BYTES2_BOS_TOKENS.
 *   - A chat prompt is a template: each message is
 *     TOKENIZER_BYTES2_MESSAGE_TOKENS (7) template tokens, then its
 *     content's tokens, and the whole ends with
 *     TOKENIZER_BYTES2_REPLY_TOKENS (3) tokens that open the reply. So a
 *     chat prompt of m messages is 7 m + 3 tokens plus its contents'.
 *
 * Bytes are bytes under both: UTF-8 is not decoded, so a non-ASCII word
 * counts by its byte length. */
#ifndef LL_SIM_TOKENIZER_H
#define LL_SIM_TOKENIZER_H

#include <stddef.h>
#include <stdint.h>

/* The sim's tokenizers. */
enum tokenizer_kind {
    TOKENIZER_WORDS = 0,            /* ceil(n / 4) per word, no special tokens */
    TOKENIZER_BYTES2 = 1,           /* ceil(n / 2) per word, BOS and a chat template */
};

#define TOKENIZER_BYTES2_BOS_TOKENS 1u
#define TOKENIZER_BYTES2_MESSAGE_TOKENS 7u
#define TOKENIZER_BYTES2_REPLY_TOKENS 3u

/* The kind named name ("words" or "bytes2") into *out. Returns 0, or -1
 * (and *out untouched) for any other name. */
int tokenizer_kind_parse(const char *name, enum tokenizer_kind *out);

/* The name of kind k: "words" or "bytes2". */
const char *tokenizer_kind_name(enum tokenizer_kind k);

/* Most bytes one output token takes: a space and up to 4 letters. */
#define TOKENIZER_OUTPUT_TOKEN_MAX_BYTES 5

/* Number of tokens in text[0, len) under the "words" rule above (no
 * special tokens). text need not be
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

/* Tokens of text[0, len) under kind's word rule, without special tokens
 * (for TOKENIZER_WORDS this is tokenizer_count). Same limits as
 * tokenizer_count. */
uint32_t tokenizer_count_text(enum tokenizer_kind k, const char *text, size_t len);

/* A whole prompt as the server received it. text holds the completions
 * prompt, or the chat messages' contents joined by "\n"; for chat,
 * msg_ends[i] is the offset in text where message i's content ends
 * (non-decreasing, the last <= len), so message i is text[msg_ends[i-1]
 * (0 for i = 0), msg_ends[i]); the "\n" joints are whitespace and count
 * for nothing. n_msgs 0 means a completions prompt (msg_ends unused). */
struct tokenizer_prompt {
    const char *text;               /* may be NULL when len is 0 */
    size_t len;
    const size_t *msg_ends;         /* n_msgs offsets, or NULL when n_msgs is 0 */
    size_t n_msgs;
    const struct tokenizer_image *images; /* n_images, by at (non-decreasing), or NULL */
    size_t n_images;
};

/* An image in a prompt, for its block hashes: it stands at offset at of
 * the prompt's text (where the text read so far ended when the image came)
 * and is tokens tokens, all keyed by hash, a hash of its encoded bytes
 * (tokenizer_image_hash). tokenizer_prompt_count does not count images:
 * their tokens are the caller's (image_tokens). */
struct tokenizer_image {
    size_t at;
    uint32_t tokens;
    uint64_t hash;
};

/* A 64-bit hash of an image's bytes p[0, n) (its base64 text will do):
 * equal bytes, equal hash; other bytes differ but by a 64-bit collision.
 * About a byte per nanosecond (8 bytes per step). */
uint64_t tokenizer_image_hash(const char *p, size_t n);

/* Tokens of prompt p under kind, special tokens included: for
 * TOKENIZER_WORDS exactly tokenizer_count(p->text, p->len); for
 * TOKENIZER_BYTES2 the text's tokens plus the BOS (completions) or the
 * template (chat: 7 per message + 3). Saturates at UINT32_MAX. */
uint32_t tokenizer_prompt_count(enum tokenizer_kind k, const struct tokenizer_prompt *p);

/* Block hashes of prompt p's tokens under kind, as tokenizer_block_hashes
 * (same contract and return). For TOKENIZER_WORDS without images exactly
 * tokenizer_block_hashes(p->text, p->len, ...). Each image's tokens sit
 * where it stood (before the text after its offset), each hashed as a
 * header byte 0x50 and the image's hash, so two prompts share a block
 * only when the images in it are the same bytes at the same place. For
 * TOKENIZER_BYTES2 the
 * tokens are the special tokens where tokenizer_prompt_count puts them
 * (BOS first; each message's 7 before its content; the 3 at the end),
 * each hashed as a header byte 0x40 and its one-byte number, and the text
 * tokens of 1-2 bytes hashed like the words rule's. */
uint32_t tokenizer_prompt_block_hashes(enum tokenizer_kind k, const struct tokenizer_prompt *p,
                                       uint32_t block_tokens, uint64_t *out, uint32_t max_out);

/* The token IDs of text[0, len) under kind, as /tokenize answers: with
 * add_special and TOKENIZER_BYTES2 first the BOS (id
 * TOKENIZER_BOS_ID), then one ID per text token, each in
 * [TOKENIZER_TEXT_ID_MIN, TOKENIZER_TEXT_ID_MAX], a hash of the token's
 * bytes and word start (equal tokens get equal IDs). TOKENIZER_WORDS has
 * no special tokens, so add_special adds nothing there. Writes at most
 * max_out IDs (out may be NULL when max_out is 0) and returns the number
 * of tokens, which may exceed max_out: call again with room for them all. */
uint32_t tokenizer_ids(enum tokenizer_kind k, const char *text, size_t len, int add_special,
                       uint32_t *out, uint32_t max_out);

#define TOKENIZER_BOS_ID 1u
#define TOKENIZER_TEXT_ID_MIN 256u
#define TOKENIZER_TEXT_ID_MAX 32767u

#endif
