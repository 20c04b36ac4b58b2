/* chatbody.h: the prompt part of a request body: one user message of
 * synthetic or verbatim text, or a whole conversation (the earlier turns
 * of a session, then the new user message).
 *
 * A chat body's "messages" array holds, for turn k of a session,
 *
 *   {"role":"user","content":U0},{"role":"assistant","content":A0}, ...,
 *   {"role":"user","content":Uk}
 *
 * (each message beginning "type":"message", for the Responses API's
 * "input"), where Uj is turn j's user prompt (rebuilt byte for byte from its
 * req_spec, so every turn resends the identical history and a prefix cache
 * can hit it) and Aj is synthetic assistant text of exactly the output
 * tokens turn j received. A completions body's "prompt" is the same texts
 * joined by "\n". The sim counts a chat prompt as the message contents
 * joined by "\n" under its whitespace tokenizer (docs/sim.md), so in both
 * forms the server's prompt_tokens is exactly chatbody_prompt_tokens(). */
#ifndef LL_CHATBODY_H
#define LL_CHATBODY_H

#include <stddef.h>
#include <stdint.h>

#include "decode/openai.h"
#include "measure/record.h"
#include "workload/workload.h"

/* One finished turn of a session, as the next turns resend it. */
struct chat_turn {
    struct req_spec spec;        /* the turn's own user prompt (history fields unused) */
    uint64_t output_tokens;      /* tokens the assistant returned (its record's count) */
    int unanswered;              /* 1: cancelled before its first token; later turns
                                  * resend neither its prompt nor an empty answer */
};

/* Write the prompt part of the body of spec for api: for
 * chat and anthropic-messages, the members of the "messages" array, for
 * openai-responses those of "input" (without the brackets); for
 * completions, the body of the "prompt" string (without the quotes). The
 * user prompt is spec->prompt_text, JSON-escaped, when set, else the
 * synthetic text workload_prompt(seed, spec) builds. With
 * spec->image_data (chat, Anthropic, Responses), the user message's
 * content is an array: the images, then the text (docs/apis.md). Writes at most len
 * bytes (no NUL; buf may be NULL when len is 0) and returns the bytes
 * needed: when that exceeds len, retry with a bigger buffer. */
size_t chatbody_prompt(enum oai_api api, uint64_t seed, const struct req_spec *spec, char *buf,
                       size_t len);

/* The prompt tokens the sim counts for spec's body: the earlier turns'
 * prompts and outputs plus spec->prompt_tokens and its image tokens
 * (spec->image_tokens), saturating at UINT32_MAX. */
uint32_t chatbody_prompt_tokens(const struct req_spec *spec);

/* Copy what a record carries from its spec beyond id and lengths: the
 * prompt tokens of the whole conversation (chatbody_prompt_tokens), the
 * session, the turn, ignore_eos and the image count. */
void chatbody_fill_record(struct record *r, const struct req_spec *spec);

/* Token IDs of --prompt-ids prompts lie by default in [CHATBODY_ID_MIN,
 * CHATBODY_ID_MAX] (1000 to 17383: 2^14 values, so each ID carries 14 bits). Every common
 * model reserves ids below 1000 for something other than text: BOS, EOS
 * and UNK at 0-2 (Llama 2, Mistral), byte-fallback tokens at 3-258 (Llama
 * 2, Mistral), BERT-style specials up to 103, Mistral v3's control tokens
 * up to 770. And 17383 is below the smallest common vocabulary (32000:
 * Llama 2, Mistral 7B), so every ID is an ordinary text token on any of
 * them; the special tokens of larger vocabularies (Llama 3 from 128000,
 * Qwen from 151643, GPT-2's 50256) are above it. */
#define CHATBODY_ID_MIN 1000u
#define CHATBODY_ID_BITS 14
#define CHATBODY_ID_MAX (CHATBODY_ID_MIN + (1u << CHATBODY_ID_BITS) - 1u)

/* The IDs an ID prompt is drawn from, [min, max] (--prompt-id-range): a
 * model with a smaller vocabulary than 17384 needs IDs below its size.
 * max > min: a range of one ID could not tell two requests apart. */
struct chatbody_id_range {
    uint32_t min, max;
};

/* Write spec's prompt as token IDs (--prompt-ids, /v1/completions only):
 * exactly spec->prompt_tokens decimal IDs in range (NULL, or one of fewer
 * than two IDs: [CHATBODY_ID_MIN, CHATBODY_ID_MAX]), separated by commas, without brackets or spaces (the
 * caller writes "prompt":[ and ]). The range's m = max - min + 1 IDs are
 * the digits of base m, min standing for 0. The IDs follow the synthetic
 * text prompt's plan (docs/workload.md) token for token:
 *
 *   - with spec->prefix_id >= 0, the first min(prefix_tokens, prompt_tokens)
 *     IDs are shared prefix prefix_id: the same IDs in every request with
 *     the same (seed, range, prefix_id, prefix_tokens), beginning with
 *     prefix_id's 32 low bits (plus, under a salted seed, WL_SEED_SALTED,
 *     an offset drawn from the seed, mod 2^32) in base m (least significant
 *     first; as many digits as 32 bits need: three 14-bit digits in the
 *     default range), so two groups differ within those first IDs (in the
 *     first one when their numbers differ mod m);
 *   - then a nonce: a bijection of (seed, index) on 56 bits in base m (as
 *     many digits as 56 bits need: 4 in the default range), so two requests
 *     of one run never share it;
 *   - then filler IDs drawn uniformly from the range by a generator seeded
 *     by (seed, index).
 *
 * The default range's prompts are the same as before ranges existed. Without
 * a prefix the nonce comes first. spec->calib, spec->prompt_text
 * and spec->history are ignored: an ID prompt's length is exact on every
 * server, and runopts refuses --prompt-ids with verbatim prompts and
 * sessions. Same buffer contract as chatbody_prompt: writes at most len
 * bytes (no NUL; buf may be NULL when len is 0) and returns the bytes
 * needed (at most 11 per ID, 6 in the default range). Allocates nothing. */
size_t chatbody_prompt_ids(uint64_t seed, const struct chatbody_id_range *range,
                           const struct req_spec *spec, char *buf, size_t len);

/* The synthetic assistant text of a turn: exactly n_tokens words of 1-4
 * lowercase letters or digits under the sim's tokenizer, a function of
 * (seed, index). Same buffer contract as chatbody_prompt. */
size_t chatbody_assistant_text(uint64_t seed, uint64_t index, uint32_t n_tokens, char *buf,
                               size_t len);

#endif
